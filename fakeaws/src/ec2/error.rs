//! Every error code EC2 answers beyond the query protocol's common ones
//! ([`crate::protocol::error::Common`]) and the `<Kind>.NotFound` / `.Malformed` codes of the
//! kind table ([`crate::ec2::Kind`]), and the errors that more than one module answers, each
//! written once.

use crate::protocol::error::{ApiError, error_codes};

error_codes! {
    /// The codes of EC2 errors.
    pub enum Code {
        /// More filter values in one Describe call than EC2 takes (200).
        FilterLimitExceeded = "FilterLimitExceeded",
        /// A VPC peering connection not in the state the call needs (accepting or deleting a
        /// rejected one, rejecting an active one).
        InvalidStateTransition = "InvalidStateTransition",
        /// A peering connection between the two VPCs is already requested or active.
        VpcPeeringConnectionAlreadyExists = "VpcPeeringConnectionAlreadyExists",
        /// The VPC has as many peering requests awaiting acceptance as its quota allows.
        OutstandingVpcPeeringConnectionLimitExceeded = "OutstandingVpcPeeringConnectionLimitExceeded",
        /// The VPC has as many active peering connections as its quota allows.
        ActiveVpcPeeringConnectionPerVpcLimitExceeded = "ActiveVpcPeeringConnectionPerVpcLimitExceeded",
        /// The account's request rate for the action is exceeded (HTTP 503).
        RequestLimitExceeded = "RequestLimitExceeded",
        /// The region's Elastic IP quota is used up.
        AddressLimitExceeded = "AddressLimitExceeded",
        /// A default security group cannot be deleted.
        CannotDelete = "CannotDelete",
        /// The VPC holds as many IPv4 ranges as its quota allows.
        CidrLimitExceeded = "CidrLimitExceeded",
        /// The internet gateway or address is not attached where the call says.
        GatewayNotAttached = "Gateway.NotAttached",
        /// A Dedicated Host not available (released) for a launch that names it.
        InvalidHostState = "InvalidHostState",
        /// A Dedicated Host configuration (instance type or family) that hosts do not run.
        InvalidHostConfiguration = "InvalidHostConfiguration",
        /// A quantity of Dedicated Hosts below one.
        InvalidQuantity = "InvalidQuantity",
        /// No Dedicated Host with room for a launch or start of `host` tenancy.
        InsufficientCapacityOnHost = "InsufficientCapacityOnHost",
        /// A Capacity Reservation a launch or start targets has no room for it.
        ReservationCapacityExceeded = "ReservationCapacityExceeded",
        /// No capacity for a launch that runs only in Capacity Reservations.
        InsufficientInstanceCapacity = "InsufficientInstanceCapacity",
        /// More Dedicated Hosts of a family than the account's quota.
        HostLimitExceeded = "HostLimitExceeded",
        /// A ClientToken reused with another request.
        IdempotentParameterMismatch = "IdempotentParameterMismatch",
        /// The instance holds as many network interfaces as its type takes.
        AttachmentLimitExceeded = "AttachmentLimitExceeded",
        /// No network interface attachment of that id.
        InvalidAttachmentIDNotFound = "InvalidAttachmentID.NotFound",
        /// The network interface is attached elsewhere, or another service's.
        InvalidNetworkInterfaceInUse = "InvalidNetworkInterface.InUse",
        /// The region's network interface quota is used up.
        NetworkInterfaceLimitExceeded = "NetworkInterfaceLimitExceeded",
        /// More private addresses than the interface takes.
        PrivateIpAddressLimitExceeded = "PrivateIpAddressLimitExceeded",
        /// The instance's state does not allow the call.
        IncorrectInstanceState = "IncorrectInstanceState",
        /// A request the API reference documents as unsupported (a host instance's tenancy
        /// changed).
        InvalidRequest = "InvalidRequest",
        /// CreateDefaultVpc while the region has a default VPC.
        DefaultVpcAlreadyExists = "DefaultVpcAlreadyExists",
        /// A call that needs the default VPC, in a region without one.
        DefaultVpcDoesNotExist = "DefaultVpcDoesNotExist",
        /// CreateDefaultSubnet in a zone that has a default subnet.
        DefaultSubnetAlreadyExistsInAvailabilityZone = "DefaultSubnetAlreadyExistsInAvailabilityZone",
        /// A credit option for an instance type outside the burstable families.
        InstanceCreditSpecificationNotSupported = "InstanceCreditSpecification.NotSupported",
        /// The resource is not in a state the call can act on (a volume not attached, an
        /// instance neither running nor stopped).
        IncorrectState = "IncorrectState",
        /// A change to a NAT gateway's addresses while another is still on its way.
        OperationInProgress = "OperationInProgress",
        /// The region's customer gateways quota is used up.
        CustomerGatewayLimitExceeded = "CustomerGatewayLimitExceeded",
        /// The region's (or a virtual private gateway's) VPN connections quota is used up.
        VpnConnectionLimitExceeded = "VpnConnectionLimitExceeded",
        /// A transit gateway that does not exist (the fake serves none).
        InvalidTransitGatewayIDNotFound = "InvalidTransitGatewayID.NotFound",
        /// A second VPN connection of a virtual private gateway to a customer gateway address.
        InvalidCustomerGatewayDuplicateIpAddress = "InvalidCustomerGateway.DuplicateIpAddress",
        /// The region's instance quota is used up.
        InstanceLimitExceeded = "InstanceLimitExceeded",
        /// A Spot launch beyond the quota of running instances.
        MaxSpotInstanceCountExceeded = "MaxSpotInstanceCountExceeded",
        /// The public address pool is empty.
        InsufficientAddressCapacity = "InsufficientAddressCapacity",
        /// The subnet has no free address.
        InsufficientFreeAddressesInSubnet = "InsufficientFreeAddressesInSubnet",
        /// No free /28 left in a subnet for an IPv4 prefix (AWS's code and words).
        InsufficientCidrBlocks = "InsufficientCidrBlocks",
        /// The region holds as many virtual private gateways as its quota allows.
        VpnGatewayLimitExceeded = "VpnGatewayLimitExceeded",
        /// A virtual private gateway attached to a VPC, or a VPC holding one, asked to attach
        /// another (AWS's code).
        VpnGatewayAttachmentLimitExceeded = "VpnGatewayAttachmentLimitExceeded",
        /// A virtual private gateway not attached to the VPC a detach names.
        InvalidVpnGatewayAttachmentNotFound = "InvalidVpnGatewayAttachment.NotFound",
        /// The region's internet gateway quota is used up.
        InternetGatewayLimitExceeded = "InternetGatewayLimitExceeded",
        /// No image of that id.
        InvalidAMIIDNotFound = "InvalidAMIID.NotFound",
        /// A launch permission's account, group or ARN that cannot be.
        InvalidAMIAttributeItemValue = "InvalidAMIAttributeItemValue",
        /// An account id that is not 12 digits.
        InvalidUserIDMalformed = "InvalidUserID.Malformed",
        /// The image is not `available` for launches (pending or disabled).
        InvalidAMIIDUnavailable = "InvalidAMIID.Unavailable",
        /// An image of that name exists.
        InvalidAMINameDuplicate = "InvalidAMIName.Duplicate",
        /// No Elastic IP of that public address.
        InvalidAddressNotFound = "InvalidAddress.NotFound",
        /// A public IPv4 pool the account does not have.
        InvalidPublicIpv4PoolIdNotFound = "InvalidPublicIpv4PoolID.NotFound",
        /// An IPv6 pool the account does not have.
        InvalidIpv6PoolIdNotFound = "InvalidIpv6PoolID.NotFound",
        /// No association of that id.
        InvalidAssociationIDNotFound = "InvalidAssociationID.NotFound",
        /// The volume is not attached as the request says.
        InvalidAttachmentNotFound = "InvalidAttachment.NotFound",
        /// A block device mapping that cannot be.
        InvalidBlockDeviceMapping = "InvalidBlockDeviceMapping",
        /// A security group of that name exists in the VPC.
        InvalidGroupDuplicate = "InvalidGroup.Duplicate",
        /// No security group of that id or name.
        InvalidGroupNotFound = "InvalidGroup.NotFound",
        /// An interface endpoint's subnets in one zone.
        DuplicateSubnetsInSameZone = "DuplicateSubnetsInSameZone",
        /// A flow log of the same resource, traffic and destination exists (CreateFlowLogs'
        /// `Unsuccessful` items).
        FlowLogAlreadyExists = "FlowLogAlreadyExists",
        /// No allocation of the IPAM pool has the id the call names.
        InvalidIpamPoolAllocationIdNotFound = "InvalidIpamPoolAllocationId.NotFound",
        /// The resource has as many flow logs as its quota allows.
        FlowLogsLimitExceeded = "FlowLogsLimitExceeded",
        /// An id of no known kind.
        InvalidID = "InvalidID",
        /// An instance attribute value that instance cannot take (its type, its shutdown
        /// behaviour).
        InvalidInstanceAttributeValue = "InvalidInstanceAttributeValue",
        /// DescribeInstanceTypes naming a type that does not exist.
        InvalidInstanceType = "InvalidInstanceType",
        /// A parameter that does not apply, or a value it cannot take (VPC endpoints' code
        /// for what other calls answer `InvalidParameterValue`).
        InvalidParameter = "InvalidParameter",
        /// A parameter given without another it depends on (KmsKeyId without Encrypted).
        InvalidParameterDependency = "InvalidParameterDependency",
        /// An endpoint policy that is not JSON.
        InvalidPolicyDocument = "InvalidPolicyDocument",
        /// A placement group of that name exists.
        InvalidPlacementGroupDuplicate = "InvalidPlacementGroup.Duplicate",
        /// The placement group holds instances.
        InvalidPlacementGroupInUse = "InvalidPlacementGroup.InUse",
        /// No placement group of that name.
        InvalidPlacementGroupUnknown = "InvalidPlacementGroup.Unknown",
        /// No VPC endpoint of that id (DeleteVpcEndpoints' code, in its unsuccessful items).
        InvalidVpcEndpointNotFound = "InvalidVpcEndpoint.NotFound",
        /// No endpoint service of that name in the region.
        InvalidServiceName = "InvalidServiceName",
        /// No version of that number (or alias) in the launch template.
        InvalidLaunchTemplateIdVersionNotFound = "InvalidLaunchTemplateId.VersionNotFound",
        /// A launch template of that name exists.
        InvalidLaunchTemplateNameAlreadyExistsException =
            "InvalidLaunchTemplateName.AlreadyExistsException",
        /// A launch template name that is not 3 to 128 of the allowed characters.
        InvalidLaunchTemplateNameMalformedException =
            "InvalidLaunchTemplateName.MalformedException",
        /// No launch template of that name.
        InvalidLaunchTemplateNameNotFoundException = "InvalidLaunchTemplateName.NotFoundException",
        /// The address is in use.
        InvalidIPAddressInUse = "InvalidIPAddress.InUse",
        /// Key material that is not a public key.
        InvalidKeyFormat = "InvalidKey.Format",
        /// A key pair of that name exists.
        InvalidKeyPairDuplicate = "InvalidKeyPair.Duplicate",
        /// No key pair of that name.
        InvalidKeyPairNotFound = "InvalidKeyPair.NotFound",
        /// No entry of that rule number and direction.
        InvalidNetworkAclEntryNotFound = "InvalidNetworkAclEntry.NotFound",
        /// A NextToken this fake did not hand out.
        InvalidPaginationToken = "InvalidPaginationToken",
        /// The rule exists.
        InvalidPermissionDuplicate = "InvalidPermission.Duplicate",
        /// No such rule.
        InvalidPermissionNotFound = "InvalidPermission.NotFound",
        /// No route of that destination.
        InvalidRouteNotFound = "InvalidRoute.NotFound",
        /// No rule of that id.
        InvalidSecurityGroupRuleIdNotFound = "InvalidSecurityGroupRuleId.NotFound",
        /// The CIDR overlaps another subnet.
        InvalidSubnetConflict = "InvalidSubnet.Conflict",
        /// The CIDR is outside the VPC or of a wrong size.
        InvalidSubnetRange = "InvalidSubnet.Range",
        /// A block still in use (a subnet's, while the subnet assigns IPv6 addresses).
        InvalidCidrBlockInUse = "InvalidCidrBlock.InUse",
        /// No subnet IPv6 block association of that id.
        InvalidSubnetCidrBlockAssociationIDNotFound =
            "InvalidSubnetCidrBlockAssociationID.NotFound",
        /// A snapshot an image of the account was registered from.
        InvalidSnapshotInUse = "InvalidSnapshot.InUse",
        /// No volume of that id.
        InvalidVolumeNotFound = "InvalidVolume.NotFound",
        /// A volume named that was never modified (DescribeVolumesModifications).
        InvalidVolumeModificationNotFound = "InvalidVolumeModification.NotFound",
        /// A volume modified while its last modification is still in progress.
        IncorrectModificationState = "IncorrectModificationState",
        /// A volume modified more often than EBS allows.
        VolumeModificationRateExceeded = "VolumeModificationRateExceeded",
        /// The volume and the instance are in different zones.
        InvalidVolumeZoneMismatch = "InvalidVolume.ZoneMismatch",
        /// No VPC range association of that id.
        InvalidVpcCidrBlockAssociationIDNotFound = "InvalidVpcCidrBlockAssociationID.NotFound",
        /// The VPC CIDR is of a wrong size.
        InvalidVpcRange = "InvalidVpc.Range",
        /// A required input is missing.
        MissingInput = "MissingInput",
        /// The region's launch template quota is used up.
        LaunchTemplateLimitExceeded = "LaunchTemplateLimitExceeded",
        /// The region's placement group quota is used up.
        PlacementGroupLimitExceeded = "PlacementGroupLimitExceeded",
        /// The zone's NAT gateway quota is used up.
        NatGatewayLimitExceeded = "NatGatewayLimitExceeded",
        /// No NAT gateway of that id (DeleteNatGateway's code).
        NatGatewayNotFound = "NatGatewayNotFound",
        /// The VPC holds as many network ACLs as its quota allows.
        NetworkAclLimitExceeded = "NetworkAclLimitExceeded",
        /// An entry of that rule number and direction exists.
        NetworkAclEntryAlreadyExists = "NetworkAclEntryAlreadyExists",
        /// The ACL holds as many entries in that direction as the quota allows.
        NetworkAclEntryLimitExceeded = "NetworkAclEntryLimitExceeded",
        /// The call is not permitted (termination protection, ...).
        OperationNotPermitted = "OperationNotPermitted",
        /// A prefix list's `CurrentVersion` is not its version.
        PrefixListVersionMismatch = "PrefixListVersionMismatch",
        /// The resource is already attached or associated.
        ResourceAlreadyAssociated = "Resource.AlreadyAssociated",
        /// A route of that destination exists.
        RouteAlreadyExists = "RouteAlreadyExists",
        /// The table's quota of routes (of the route's family) is used up.
        RouteLimitExceeded = "RouteLimitExceeded",
        /// The VPC's route table quota is used up.
        RouteTableLimitExceeded = "RouteTableLimitExceeded",
        /// The group's rule quota is used up.
        RulesPerSecurityGroupLimitExceeded = "RulesPerSecurityGroupLimitExceeded",
        /// The VPC's security group quota is used up.
        SecurityGroupLimitExceeded = "SecurityGroupLimitExceeded",
        /// A configuration EC2 does not offer (an Elastic Fabric Adapter on an instance type
        /// without one).
        Unsupported = "Unsupported",
        /// The operation does not apply to this resource (stopping a one-time Spot Instance).
        UnsupportedOperation = "UnsupportedOperation",
        /// Hibernation asked of an instance not configured for it at launch.
        UnsupportedHibernationConfiguration = "UnsupportedHibernationConfiguration",
        /// The VPC's subnet quota is used up.
        SubnetLimitExceeded = "SubnetLimitExceeded",
        /// More than 50 tags on a resource.
        TagLimitExceeded = "TagLimitExceeded",
        /// No VPC given and no default VPC.
        VPCIdNotSpecified = "VPCIdNotSpecified",
        /// The region's VPC quota is used up.
        VpcLimitExceeded = "VpcLimitExceeded",
        /// The region's gateway endpoint quota or the VPC's interface endpoint quota is used up.
        VpcEndpointLimitExceeded = "VpcEndpointLimitExceeded",
        /// The volume is attached.
        VolumeInUse = "VolumeInUse",
    }
}

/// `InvalidGroup.NotFound` for a group named (by id or name) in a request about VPC `vpc_id`.
pub fn group_not_in_vpc(group: &str, vpc_id: &str) -> ApiError {
    ApiError::new(
        Code::InvalidGroupNotFound,
        format!("The security group '{group}' does not exist in VPC '{vpc_id}'"),
    )
}

/// `InvalidGroup.NotFound` for a group named by name where the default VPC is meant.
pub fn group_not_in_default_vpc(name: &str, default_vpc: &str) -> ApiError {
    ApiError::new(
        Code::InvalidGroupNotFound,
        format!("The security group '{name}' does not exist in default VPC '{default_vpc}'"),
    )
}

/// `InvalidAssociationID.NotFound` for `id`.
pub fn association_not_found(id: &str) -> ApiError {
    ApiError::new(
        Code::InvalidAssociationIDNotFound,
        format!("The association ID '{id}' does not exist"),
    )
}

/// `InvalidAMIID.NotFound` for `image_id`, as RunInstances words it.
pub fn image_not_found(image_id: &str) -> ApiError {
    ApiError::new(
        Code::InvalidAMIIDNotFound,
        format!("The image id '[{image_id}]' does not exist"),
    )
}

/// `InvalidKeyPair.NotFound` for the key pair `name`.
pub fn key_pair_not_found(name: &str) -> ApiError {
    ApiError::new(
        Code::InvalidKeyPairNotFound,
        format!("The key pair '{name}' does not exist"),
    )
}
