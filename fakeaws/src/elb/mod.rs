//! Classic Elastic Load Balancing semantics; `impl Api for Region` routes each generated
//! operation to its module.

pub mod account;
pub mod error;
pub mod load_balancer;

use crate::generated::elb::*;
use crate::protocol::error::ApiError;
use crate::region::Region;

impl Api for Region {
    fn create_load_balancer(
        &mut self,
        input: CreateAccessPointInput,
    ) -> Result<CreateAccessPointOutput, ApiError> {
        load_balancer::create_load_balancer(self, input)
    }

    fn describe_load_balancers(
        &mut self,
        input: DescribeAccessPointsInput,
    ) -> Result<DescribeAccessPointsOutput, ApiError> {
        load_balancer::describe_load_balancers(self, input)
    }

    fn delete_load_balancer(
        &mut self,
        input: DeleteAccessPointInput,
    ) -> Result<DeleteAccessPointOutput, ApiError> {
        load_balancer::delete_load_balancer(self, input)
    }

    fn configure_health_check(
        &mut self,
        input: ConfigureHealthCheckInput,
    ) -> Result<ConfigureHealthCheckOutput, ApiError> {
        load_balancer::configure_health_check(self, input)
    }

    fn describe_load_balancer_attributes(
        &mut self,
        input: DescribeLoadBalancerAttributesInput,
    ) -> Result<DescribeLoadBalancerAttributesOutput, ApiError> {
        load_balancer::describe_load_balancer_attributes(self, input)
    }

    fn modify_load_balancer_attributes(
        &mut self,
        input: ModifyLoadBalancerAttributesInput,
    ) -> Result<ModifyLoadBalancerAttributesOutput, ApiError> {
        load_balancer::modify_load_balancer_attributes(self, input)
    }

    fn register_instances_with_load_balancer(
        &mut self,
        input: RegisterEndPointsInput,
    ) -> Result<RegisterEndPointsOutput, ApiError> {
        load_balancer::register_instances_with_load_balancer(self, input)
    }

    fn deregister_instances_from_load_balancer(
        &mut self,
        input: DeregisterEndPointsInput,
    ) -> Result<DeregisterEndPointsOutput, ApiError> {
        load_balancer::deregister_instances_from_load_balancer(self, input)
    }

    fn describe_instance_health(
        &mut self,
        input: DescribeEndPointStateInput,
    ) -> Result<DescribeEndPointStateOutput, ApiError> {
        load_balancer::describe_instance_health(self, input)
    }

    fn describe_account_limits(
        &mut self,
        input: DescribeAccountLimitsInput,
    ) -> Result<DescribeAccountLimitsOutput, ApiError> {
        account::describe_account_limits(self, input)
    }

    fn add_tags(&mut self, input: AddTagsInput) -> Result<AddTagsOutput, ApiError> {
        load_balancer::add_tags(self, input)
    }

    fn remove_tags(&mut self, input: RemoveTagsInput) -> Result<RemoveTagsOutput, ApiError> {
        load_balancer::remove_tags(self, input)
    }

    fn describe_tags(&mut self, input: DescribeTagsInput) -> Result<DescribeTagsOutput, ApiError> {
        load_balancer::describe_tags(self, input)
    }

    fn attach_load_balancer_to_subnets(
        &mut self,
        input: AttachLoadBalancerToSubnetsInput,
    ) -> Result<AttachLoadBalancerToSubnetsOutput, ApiError> {
        load_balancer::attach_load_balancer_to_subnets(self, input)
    }

    fn detach_load_balancer_from_subnets(
        &mut self,
        input: DetachLoadBalancerFromSubnetsInput,
    ) -> Result<DetachLoadBalancerFromSubnetsOutput, ApiError> {
        load_balancer::detach_load_balancer_from_subnets(self, input)
    }

    fn create_load_balancer_policy(
        &mut self,
        input: CreateLoadBalancerPolicyInput,
    ) -> Result<CreateLoadBalancerPolicyOutput, ApiError> {
        load_balancer::create_load_balancer_policy(self, input)
    }

    fn create_app_cookie_stickiness_policy(
        &mut self,
        input: CreateAppCookieStickinessPolicyInput,
    ) -> Result<CreateAppCookieStickinessPolicyOutput, ApiError> {
        load_balancer::create_app_cookie_stickiness_policy(self, input)
    }

    fn create_lb_cookie_stickiness_policy(
        &mut self,
        input: CreateLBCookieStickinessPolicyInput,
    ) -> Result<CreateLBCookieStickinessPolicyOutput, ApiError> {
        load_balancer::create_lb_cookie_stickiness_policy(self, input)
    }

    fn delete_load_balancer_policy(
        &mut self,
        input: DeleteLoadBalancerPolicyInput,
    ) -> Result<DeleteLoadBalancerPolicyOutput, ApiError> {
        load_balancer::delete_load_balancer_policy(self, input)
    }

    fn describe_load_balancer_policies(
        &mut self,
        input: DescribeLoadBalancerPoliciesInput,
    ) -> Result<DescribeLoadBalancerPoliciesOutput, ApiError> {
        load_balancer::describe_load_balancer_policies(self, input)
    }

    fn describe_load_balancer_policy_types(
        &mut self,
        input: DescribeLoadBalancerPolicyTypesInput,
    ) -> Result<DescribeLoadBalancerPolicyTypesOutput, ApiError> {
        load_balancer::describe_load_balancer_policy_types(self, input)
    }

    fn set_load_balancer_policies_of_listener(
        &mut self,
        input: SetLoadBalancerPoliciesOfListenerInput,
    ) -> Result<SetLoadBalancerPoliciesOfListenerOutput, ApiError> {
        load_balancer::set_load_balancer_policies_of_listener(self, input)
    }

    fn set_load_balancer_policies_for_backend_server(
        &mut self,
        input: SetLoadBalancerPoliciesForBackendServerInput,
    ) -> Result<SetLoadBalancerPoliciesForBackendServerOutput, ApiError> {
        load_balancer::set_load_balancer_policies_for_backend_server(self, input)
    }

    fn enable_availability_zones_for_load_balancer(
        &mut self,
        input: AddAvailabilityZonesInput,
    ) -> Result<AddAvailabilityZonesOutput, ApiError> {
        load_balancer::enable_availability_zones_for_load_balancer(self, input)
    }

    fn disable_availability_zones_for_load_balancer(
        &mut self,
        input: RemoveAvailabilityZonesInput,
    ) -> Result<RemoveAvailabilityZonesOutput, ApiError> {
        load_balancer::disable_availability_zones_for_load_balancer(self, input)
    }

    fn set_load_balancer_listener_ssl_certificate(
        &mut self,
        input: SetLoadBalancerListenerSSLCertificateInput,
    ) -> Result<SetLoadBalancerListenerSSLCertificateOutput, ApiError> {
        load_balancer::set_load_balancer_listener_ssl_certificate(self, input)
    }

    fn apply_security_groups_to_load_balancer(
        &mut self,
        input: ApplySecurityGroupsToLoadBalancerInput,
    ) -> Result<ApplySecurityGroupsToLoadBalancerOutput, ApiError> {
        load_balancer::apply_security_groups_to_load_balancer(self, input)
    }

    fn create_load_balancer_listeners(
        &mut self,
        input: CreateLoadBalancerListenerInput,
    ) -> Result<CreateLoadBalancerListenerOutput, ApiError> {
        load_balancer::create_load_balancer_listeners(self, input)
    }

    fn delete_load_balancer_listeners(
        &mut self,
        input: DeleteLoadBalancerListenerInput,
    ) -> Result<DeleteLoadBalancerListenerOutput, ApiError> {
        load_balancer::delete_load_balancer_listeners(self, input)
    }
}
