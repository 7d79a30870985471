//! Every error code classic ELB answers beyond the query protocol's common ones
//! ([`crate::protocol::error::Common`]).

use crate::protocol::error::error_codes;

error_codes! {
    /// The codes of classic ELB errors.
    pub enum Code {
        /// The account's request rate is exceeded.
        Throttling = "Throttling",
        /// No certificate of that ARN.
        CertificateNotFound = "CertificateNotFound",
        /// A listener on that port exists with other settings.
        DuplicateListener = "DuplicateListener",
        /// A load balancer of that name exists with other settings.
        DuplicateLoadBalancerName = "DuplicateLoadBalancerName",
        /// A policy of that name exists on the load balancer.
        DuplicatePolicyName = "DuplicatePolicyName",
        /// A tag key given twice.
        DuplicateTagKeys = "DuplicateTagKeys",
        /// A change the load balancer's configuration does not allow.
        InvalidConfigurationRequest = "InvalidConfigurationRequest",
        /// An instance that cannot be registered.
        InvalidInstance = "InvalidInstance",
        /// A security group that cannot be applied.
        InvalidSecurityGroup = "InvalidSecurityGroup",
        /// A subnet that cannot be attached.
        InvalidSubnet = "InvalidSubnet",
        /// An attribute the load balancer does not have.
        LoadBalancerAttributeNotFound = "LoadBalancerAttributeNotFound",
        /// No listener on that port.
        ListenerNotFound = "ListenerNotFound",
        /// No load balancer of that name.
        LoadBalancerNotFound = "LoadBalancerNotFound",
        /// No policy of that name on the load balancer.
        PolicyNotFound = "PolicyNotFound",
        /// No policy type of that name.
        PolicyTypeNotFound = "PolicyTypeNotFound",
        /// No subnet of that id.
        SubnetNotFound = "SubnetNotFound",
        /// The region's load balancer quota is used up.
        TooManyLoadBalancers = "TooManyLoadBalancers",
        /// More than 10 tags on a load balancer.
        TooManyTags = "TooManyTags",
        /// A listener protocol classic ELB does not have.
        UnsupportedProtocol = "UnsupportedProtocol",
    }
}
