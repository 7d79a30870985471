//! EC2 semantics: one module per resource, each owning its records, actions, filters and
//! dependency rules; `kind` is the table of resource kinds (id prefix, error-code stem,
//! noun, taggable resource type); `impl Api for Region` routes each generated operation to
//! its module.

pub mod account;
pub mod address_attribute;
pub mod availability_zone;
pub mod capacity_reservation;
pub mod carrier_gateway;
pub mod copy;
pub mod customer_gateway;
pub mod dedicated_host;
pub mod dhcp_options;
pub mod egress_only_gateway;
pub mod elastic_ip;
pub mod error;
pub mod filter;
pub mod fleet;
pub mod flow_log;
pub mod image;
pub mod image_attribute;
pub mod image_from_instance;
pub mod image_lifecycle;
pub mod instance;
pub mod instance_connect_endpoint;
pub mod instance_type;
pub mod internet_gateway;
pub mod ipam;
pub mod ipv6_pool;
pub mod key_material;
pub mod key_pair;
pub mod kind;
pub mod launch_template;
pub mod managed_prefix_list;
pub mod nat_gateway;
pub mod network_acl;
pub mod network_interface;
pub mod page;
pub mod placement_group;
pub mod prefix_list;
pub mod public_ipv4_pool;
pub mod route_table;
pub mod security_group;
pub mod snapshot;
pub mod snapshot_attribute;
pub mod spot_price;
pub mod spot_request;
pub mod subnet;
pub mod tags;
pub mod volume;
pub mod vpc;
pub mod vpc_cidr;
pub mod vpc_endpoint;
pub mod vpc_ipv6;
pub mod vpc_peering;
pub mod vpn_connection;
pub mod vpn_gateway;

pub use kind::Kind;

use crate::generated::ec2::*;
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The ids in `ids`, each once, in the order given (a request may name one twice).
pub fn unique(ids: Option<Vec<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids.unwrap_or_default() {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// The fingerprint of a create request, its ClientToken taken out: what the idempotency
/// ledger compares a retry with the same token against. A hash of every parameter rather than
/// the request itself, which the ledger would keep for as long as the region lives (user data
/// and all). Two requests that differ have the same fingerprint with a chance of 2^-64, and
/// the same request always has the same one in a build (std's `DefaultHasher::new` has fixed
/// keys); a state file written by a build of another Rust release may compare a retry as
/// changed.
pub fn fingerprint<T: std::hash::Hash>(input: &T) -> String {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    input.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

impl Api for Region {
    fn describe_availability_zones(
        &mut self,
        input: DescribeAvailabilityZonesRequest,
    ) -> Result<DescribeAvailabilityZonesResult, ApiError> {
        availability_zone::describe_availability_zones(self, input)
    }

    fn describe_regions(
        &mut self,
        input: DescribeRegionsRequest,
    ) -> Result<DescribeRegionsResult, ApiError> {
        account::describe_regions(self, input)
    }

    fn describe_account_attributes(
        &mut self,
        input: DescribeAccountAttributesRequest,
    ) -> Result<DescribeAccountAttributesResult, ApiError> {
        account::describe_account_attributes(self, input)
    }

    fn create_vpc(&mut self, input: CreateVpcRequest) -> Result<CreateVpcResult, ApiError> {
        vpc::create_vpc(self, input)
    }

    fn describe_vpcs(
        &mut self,
        input: DescribeVpcsRequest,
    ) -> Result<DescribeVpcsResult, ApiError> {
        vpc::describe_vpcs(self, input)
    }

    fn delete_vpc(&mut self, input: DeleteVpcRequest) -> Result<(), ApiError> {
        vpc::delete_vpc(self, input)
    }

    fn modify_vpc_tenancy(
        &mut self,
        input: ModifyVpcTenancyRequest,
    ) -> Result<ModifyVpcTenancyResult, ApiError> {
        vpc::modify_vpc_tenancy(self, input)
    }

    fn get_security_groups_for_vpc(
        &mut self,
        input: GetSecurityGroupsForVpcRequest,
    ) -> Result<GetSecurityGroupsForVpcResult, ApiError> {
        security_group::get_security_groups_for_vpc(self, input)
    }

    fn modify_vpc_attribute(&mut self, input: ModifyVpcAttributeRequest) -> Result<(), ApiError> {
        vpc::modify_vpc_attribute(self, input)
    }

    fn describe_vpc_attribute(
        &mut self,
        input: DescribeVpcAttributeRequest,
    ) -> Result<DescribeVpcAttributeResult, ApiError> {
        vpc::describe_vpc_attribute(self, input)
    }

    fn associate_vpc_cidr_block(
        &mut self,
        input: AssociateVpcCidrBlockRequest,
    ) -> Result<AssociateVpcCidrBlockResult, ApiError> {
        vpc_cidr::associate_vpc_cidr_block(self, input)
    }

    fn disassociate_vpc_cidr_block(
        &mut self,
        input: DisassociateVpcCidrBlockRequest,
    ) -> Result<DisassociateVpcCidrBlockResult, ApiError> {
        vpc_cidr::disassociate_vpc_cidr_block(self, input)
    }

    fn associate_subnet_cidr_block(
        &mut self,
        input: AssociateSubnetCidrBlockRequest,
    ) -> Result<AssociateSubnetCidrBlockResult, ApiError> {
        subnet::associate_subnet_cidr_block(self, input)
    }

    fn disassociate_subnet_cidr_block(
        &mut self,
        input: DisassociateSubnetCidrBlockRequest,
    ) -> Result<DisassociateSubnetCidrBlockResult, ApiError> {
        subnet::disassociate_subnet_cidr_block(self, input)
    }

    fn create_subnet(
        &mut self,
        input: CreateSubnetRequest,
    ) -> Result<CreateSubnetResult, ApiError> {
        subnet::create_subnet(self, input)
    }

    fn describe_subnets(
        &mut self,
        input: DescribeSubnetsRequest,
    ) -> Result<DescribeSubnetsResult, ApiError> {
        subnet::describe_subnets(self, input)
    }

    fn delete_subnet(&mut self, input: DeleteSubnetRequest) -> Result<(), ApiError> {
        subnet::delete_subnet(self, input)
    }

    fn modify_subnet_attribute(
        &mut self,
        input: ModifySubnetAttributeRequest,
    ) -> Result<(), ApiError> {
        subnet::modify_subnet_attribute(self, input)
    }

    fn create_internet_gateway(
        &mut self,
        input: CreateInternetGatewayRequest,
    ) -> Result<CreateInternetGatewayResult, ApiError> {
        internet_gateway::create_internet_gateway(self, input)
    }

    fn attach_internet_gateway(
        &mut self,
        input: AttachInternetGatewayRequest,
    ) -> Result<(), ApiError> {
        internet_gateway::attach_internet_gateway(self, input)
    }

    fn detach_internet_gateway(
        &mut self,
        input: DetachInternetGatewayRequest,
    ) -> Result<(), ApiError> {
        internet_gateway::detach_internet_gateway(self, input)
    }

    fn delete_internet_gateway(
        &mut self,
        input: DeleteInternetGatewayRequest,
    ) -> Result<(), ApiError> {
        internet_gateway::delete_internet_gateway(self, input)
    }

    fn describe_internet_gateways(
        &mut self,
        input: DescribeInternetGatewaysRequest,
    ) -> Result<DescribeInternetGatewaysResult, ApiError> {
        internet_gateway::describe_internet_gateways(self, input)
    }

    fn assign_ipv6_addresses(
        &mut self,
        input: AssignIpv6AddressesRequest,
    ) -> Result<AssignIpv6AddressesResult, ApiError> {
        network_interface::ipv6::assign_ipv6_addresses(self, input)
    }

    fn unassign_ipv6_addresses(
        &mut self,
        input: UnassignIpv6AddressesRequest,
    ) -> Result<UnassignIpv6AddressesResult, ApiError> {
        network_interface::ipv6::unassign_ipv6_addresses(self, input)
    }

    fn create_egress_only_internet_gateway(
        &mut self,
        input: CreateEgressOnlyInternetGatewayRequest,
    ) -> Result<CreateEgressOnlyInternetGatewayResult, ApiError> {
        egress_only_gateway::create_egress_only_internet_gateway(self, input)
    }

    fn describe_egress_only_internet_gateways(
        &mut self,
        input: DescribeEgressOnlyInternetGatewaysRequest,
    ) -> Result<DescribeEgressOnlyInternetGatewaysResult, ApiError> {
        egress_only_gateway::describe_egress_only_internet_gateways(self, input)
    }

    fn delete_egress_only_internet_gateway(
        &mut self,
        input: DeleteEgressOnlyInternetGatewayRequest,
    ) -> Result<DeleteEgressOnlyInternetGatewayResult, ApiError> {
        egress_only_gateway::delete_egress_only_internet_gateway(self, input)
    }

    fn create_tags(&mut self, input: CreateTagsRequest) -> Result<(), ApiError> {
        tags::create_tags(self, input)
    }

    fn delete_tags(&mut self, input: DeleteTagsRequest) -> Result<(), ApiError> {
        tags::delete_tags(self, input)
    }

    fn describe_tags(
        &mut self,
        input: DescribeTagsRequest,
    ) -> Result<DescribeTagsResult, ApiError> {
        tags::describe_tags(self, input)
    }

    fn allocate_address(
        &mut self,
        input: AllocateAddressRequest,
    ) -> Result<AllocateAddressResult, ApiError> {
        elastic_ip::allocate_address(self, input)
    }

    fn describe_addresses(
        &mut self,
        input: DescribeAddressesRequest,
    ) -> Result<DescribeAddressesResult, ApiError> {
        elastic_ip::describe_addresses(self, input)
    }

    fn associate_address(
        &mut self,
        input: AssociateAddressRequest,
    ) -> Result<AssociateAddressResult, ApiError> {
        elastic_ip::associate_address(self, input)
    }

    fn disassociate_address(&mut self, input: DisassociateAddressRequest) -> Result<(), ApiError> {
        elastic_ip::disassociate_address(self, input)
    }

    fn release_address(&mut self, input: ReleaseAddressRequest) -> Result<(), ApiError> {
        elastic_ip::release_address(self, input)
    }

    fn describe_spot_instance_requests(
        &mut self,
        input: DescribeSpotInstanceRequestsRequest,
    ) -> Result<DescribeSpotInstanceRequestsResult, ApiError> {
        spot_request::describe_spot_instance_requests(self, input)
    }

    fn cancel_spot_instance_requests(
        &mut self,
        input: CancelSpotInstanceRequestsRequest,
    ) -> Result<CancelSpotInstanceRequestsResult, ApiError> {
        spot_request::cancel_spot_instance_requests(self, input)
    }

    fn request_spot_instances(
        &mut self,
        input: RequestSpotInstancesRequest,
    ) -> Result<RequestSpotInstancesResult, ApiError> {
        spot_request::request_spot_instances(self, input)
    }

    fn allocate_hosts(
        &mut self,
        input: AllocateHostsRequest,
    ) -> Result<AllocateHostsResult, ApiError> {
        dedicated_host::allocate_hosts(self, input)
    }

    fn describe_hosts(
        &mut self,
        input: DescribeHostsRequest,
    ) -> Result<DescribeHostsResult, ApiError> {
        dedicated_host::describe_hosts(self, input)
    }

    fn modify_hosts(&mut self, input: ModifyHostsRequest) -> Result<ModifyHostsResult, ApiError> {
        dedicated_host::modify_hosts(self, input)
    }

    fn release_hosts(
        &mut self,
        input: ReleaseHostsRequest,
    ) -> Result<ReleaseHostsResult, ApiError> {
        dedicated_host::release_hosts(self, input)
    }

    fn create_capacity_reservation(
        &mut self,
        input: CreateCapacityReservationRequest,
    ) -> Result<CreateCapacityReservationResult, ApiError> {
        capacity_reservation::create_capacity_reservation(self, input)
    }

    fn describe_capacity_reservations(
        &mut self,
        input: DescribeCapacityReservationsRequest,
    ) -> Result<DescribeCapacityReservationsResult, ApiError> {
        capacity_reservation::describe_capacity_reservations(self, input)
    }

    fn cancel_capacity_reservation(
        &mut self,
        input: CancelCapacityReservationRequest,
    ) -> Result<CancelCapacityReservationResult, ApiError> {
        capacity_reservation::cancel_capacity_reservation(self, input)
    }

    fn modify_capacity_reservation(
        &mut self,
        input: ModifyCapacityReservationRequest,
    ) -> Result<ModifyCapacityReservationResult, ApiError> {
        capacity_reservation::modify_capacity_reservation(self, input)
    }

    fn modify_instance_capacity_reservation_attributes(
        &mut self,
        input: ModifyInstanceCapacityReservationAttributesRequest,
    ) -> Result<ModifyInstanceCapacityReservationAttributesResult, ApiError> {
        instance::modify_instance_capacity_reservation_attributes(self, input)
    }

    fn get_capacity_reservation_usage(
        &mut self,
        input: GetCapacityReservationUsageRequest,
    ) -> Result<GetCapacityReservationUsageResult, ApiError> {
        capacity_reservation::get_capacity_reservation_usage(self, input)
    }

    fn create_placement_group(
        &mut self,
        input: CreatePlacementGroupRequest,
    ) -> Result<CreatePlacementGroupResult, ApiError> {
        placement_group::create_placement_group(self, input)
    }

    fn modify_availability_zone_group(
        &mut self,
        input: ModifyAvailabilityZoneGroupRequest,
    ) -> Result<ModifyAvailabilityZoneGroupResult, ApiError> {
        availability_zone::modify_availability_zone_group(self, input)
    }

    fn create_ipam(&mut self, input: CreateIpamRequest) -> Result<CreateIpamResult, ApiError> {
        ipam::create_ipam(self, input)
    }

    fn describe_ipams(
        &mut self,
        input: DescribeIpamsRequest,
    ) -> Result<DescribeIpamsResult, ApiError> {
        ipam::describe_ipams(self, input)
    }

    fn delete_ipam(&mut self, input: DeleteIpamRequest) -> Result<DeleteIpamResult, ApiError> {
        ipam::delete_ipam(self, input)
    }

    fn create_ipam_scope(
        &mut self,
        input: CreateIpamScopeRequest,
    ) -> Result<CreateIpamScopeResult, ApiError> {
        ipam::create_ipam_scope(self, input)
    }

    fn describe_ipam_scopes(
        &mut self,
        input: DescribeIpamScopesRequest,
    ) -> Result<DescribeIpamScopesResult, ApiError> {
        ipam::describe_ipam_scopes(self, input)
    }

    fn delete_ipam_scope(
        &mut self,
        input: DeleteIpamScopeRequest,
    ) -> Result<DeleteIpamScopeResult, ApiError> {
        ipam::delete_ipam_scope(self, input)
    }

    fn create_ipam_pool(
        &mut self,
        input: CreateIpamPoolRequest,
    ) -> Result<CreateIpamPoolResult, ApiError> {
        ipam::create_ipam_pool(self, input)
    }

    fn describe_ipam_pools(
        &mut self,
        input: DescribeIpamPoolsRequest,
    ) -> Result<DescribeIpamPoolsResult, ApiError> {
        ipam::describe_ipam_pools(self, input)
    }

    fn delete_ipam_pool(
        &mut self,
        input: DeleteIpamPoolRequest,
    ) -> Result<DeleteIpamPoolResult, ApiError> {
        ipam::delete_ipam_pool(self, input)
    }

    fn provision_ipam_pool_cidr(
        &mut self,
        input: ProvisionIpamPoolCidrRequest,
    ) -> Result<ProvisionIpamPoolCidrResult, ApiError> {
        ipam::provision_ipam_pool_cidr(self, input)
    }

    fn get_ipam_pool_cidrs(
        &mut self,
        input: GetIpamPoolCidrsRequest,
    ) -> Result<GetIpamPoolCidrsResult, ApiError> {
        ipam::get_ipam_pool_cidrs(self, input)
    }

    fn deprovision_ipam_pool_cidr(
        &mut self,
        input: DeprovisionIpamPoolCidrRequest,
    ) -> Result<DeprovisionIpamPoolCidrResult, ApiError> {
        ipam::deprovision_ipam_pool_cidr(self, input)
    }

    fn allocate_ipam_pool_cidr(
        &mut self,
        input: AllocateIpamPoolCidrRequest,
    ) -> Result<AllocateIpamPoolCidrResult, ApiError> {
        ipam::allocate_ipam_pool_cidr(self, input)
    }

    fn get_ipam_pool_allocations(
        &mut self,
        input: GetIpamPoolAllocationsRequest,
    ) -> Result<GetIpamPoolAllocationsResult, ApiError> {
        ipam::get_ipam_pool_allocations(self, input)
    }

    fn release_ipam_pool_allocation(
        &mut self,
        input: ReleaseIpamPoolAllocationRequest,
    ) -> Result<ReleaseIpamPoolAllocationResult, ApiError> {
        ipam::release_ipam_pool_allocation(self, input)
    }

    fn modify_ipam(&mut self, input: ModifyIpamRequest) -> Result<ModifyIpamResult, ApiError> {
        ipam::modify_ipam(self, input)
    }

    fn modify_ipam_scope(
        &mut self,
        input: ModifyIpamScopeRequest,
    ) -> Result<ModifyIpamScopeResult, ApiError> {
        ipam::modify_ipam_scope(self, input)
    }

    fn modify_ipam_pool(
        &mut self,
        input: ModifyIpamPoolRequest,
    ) -> Result<ModifyIpamPoolResult, ApiError> {
        ipam::modify_ipam_pool(self, input)
    }

    fn create_vpn_gateway(
        &mut self,
        input: CreateVpnGatewayRequest,
    ) -> Result<CreateVpnGatewayResult, ApiError> {
        vpn_gateway::create_vpn_gateway(self, input)
    }

    fn describe_vpn_gateways(
        &mut self,
        input: DescribeVpnGatewaysRequest,
    ) -> Result<DescribeVpnGatewaysResult, ApiError> {
        vpn_gateway::describe_vpn_gateways(self, input)
    }

    fn attach_vpn_gateway(
        &mut self,
        input: AttachVpnGatewayRequest,
    ) -> Result<AttachVpnGatewayResult, ApiError> {
        vpn_gateway::attach_vpn_gateway(self, input)
    }

    fn detach_vpn_gateway(&mut self, input: DetachVpnGatewayRequest) -> Result<(), ApiError> {
        vpn_gateway::detach_vpn_gateway(self, input)
    }

    fn delete_vpn_gateway(&mut self, input: DeleteVpnGatewayRequest) -> Result<(), ApiError> {
        vpn_gateway::delete_vpn_gateway(self, input)
    }

    fn create_customer_gateway(
        &mut self,
        input: CreateCustomerGatewayRequest,
    ) -> Result<CreateCustomerGatewayResult, ApiError> {
        customer_gateway::create_customer_gateway(self, input)
    }

    fn describe_customer_gateways(
        &mut self,
        input: DescribeCustomerGatewaysRequest,
    ) -> Result<DescribeCustomerGatewaysResult, ApiError> {
        customer_gateway::describe_customer_gateways(self, input)
    }

    fn delete_customer_gateway(
        &mut self,
        input: DeleteCustomerGatewayRequest,
    ) -> Result<(), ApiError> {
        customer_gateway::delete_customer_gateway(self, input)
    }

    fn create_vpn_connection(
        &mut self,
        input: CreateVpnConnectionRequest,
    ) -> Result<CreateVpnConnectionResult, ApiError> {
        vpn_connection::create_vpn_connection(self, input)
    }

    fn describe_vpn_connections(
        &mut self,
        input: DescribeVpnConnectionsRequest,
    ) -> Result<DescribeVpnConnectionsResult, ApiError> {
        vpn_connection::describe_vpn_connections(self, input)
    }

    fn delete_vpn_connection(&mut self, input: DeleteVpnConnectionRequest) -> Result<(), ApiError> {
        vpn_connection::delete_vpn_connection(self, input)
    }

    fn create_vpn_connection_route(
        &mut self,
        input: CreateVpnConnectionRouteRequest,
    ) -> Result<(), ApiError> {
        vpn_connection::create_vpn_connection_route(self, input)
    }

    fn delete_vpn_connection_route(
        &mut self,
        input: DeleteVpnConnectionRouteRequest,
    ) -> Result<(), ApiError> {
        vpn_connection::delete_vpn_connection_route(self, input)
    }

    fn enable_vgw_route_propagation(
        &mut self,
        input: EnableVgwRoutePropagationRequest,
    ) -> Result<(), ApiError> {
        vpn_gateway::enable_vgw_route_propagation(self, input)
    }

    fn disable_vgw_route_propagation(
        &mut self,
        input: DisableVgwRoutePropagationRequest,
    ) -> Result<(), ApiError> {
        vpn_gateway::disable_vgw_route_propagation(self, input)
    }

    fn create_subnet_cidr_reservation(
        &mut self,
        input: CreateSubnetCidrReservationRequest,
    ) -> Result<CreateSubnetCidrReservationResult, ApiError> {
        subnet::create_subnet_cidr_reservation(self, input)
    }

    fn get_subnet_cidr_reservations(
        &mut self,
        input: GetSubnetCidrReservationsRequest,
    ) -> Result<GetSubnetCidrReservationsResult, ApiError> {
        subnet::get_subnet_cidr_reservations(self, input)
    }

    fn delete_subnet_cidr_reservation(
        &mut self,
        input: DeleteSubnetCidrReservationRequest,
    ) -> Result<DeleteSubnetCidrReservationResult, ApiError> {
        subnet::delete_subnet_cidr_reservation(self, input)
    }

    fn create_fleet(&mut self, input: CreateFleetRequest) -> Result<CreateFleetResult, ApiError> {
        fleet::create_fleet(self, input)
    }

    fn describe_fleets(
        &mut self,
        input: DescribeFleetsRequest,
    ) -> Result<DescribeFleetsResult, ApiError> {
        fleet::describe_fleets(self, input)
    }

    fn describe_fleet_instances(
        &mut self,
        input: DescribeFleetInstancesRequest,
    ) -> Result<DescribeFleetInstancesResult, ApiError> {
        fleet::describe_fleet_instances(self, input)
    }

    fn modify_fleet(&mut self, input: ModifyFleetRequest) -> Result<ModifyFleetResult, ApiError> {
        fleet::modify_fleet(self, input)
    }

    fn delete_fleets(
        &mut self,
        input: DeleteFleetsRequest,
    ) -> Result<DeleteFleetsResult, ApiError> {
        fleet::delete_fleets(self, input)
    }

    fn describe_spot_price_history(
        &mut self,
        input: DescribeSpotPriceHistoryRequest,
    ) -> Result<DescribeSpotPriceHistoryResult, ApiError> {
        spot_price::describe_spot_price_history(self, input)
    }

    fn create_instance_connect_endpoint(
        &mut self,
        input: CreateInstanceConnectEndpointRequest,
    ) -> Result<CreateInstanceConnectEndpointResult, ApiError> {
        instance_connect_endpoint::create_instance_connect_endpoint(self, input)
    }

    fn describe_instance_connect_endpoints(
        &mut self,
        input: DescribeInstanceConnectEndpointsRequest,
    ) -> Result<DescribeInstanceConnectEndpointsResult, ApiError> {
        instance_connect_endpoint::describe_instance_connect_endpoints(self, input)
    }

    fn delete_instance_connect_endpoint(
        &mut self,
        input: DeleteInstanceConnectEndpointRequest,
    ) -> Result<DeleteInstanceConnectEndpointResult, ApiError> {
        instance_connect_endpoint::delete_instance_connect_endpoint(self, input)
    }

    fn create_carrier_gateway(
        &mut self,
        input: CreateCarrierGatewayRequest,
    ) -> Result<CreateCarrierGatewayResult, ApiError> {
        carrier_gateway::create_carrier_gateway(self, input)
    }

    fn describe_carrier_gateways(
        &mut self,
        input: DescribeCarrierGatewaysRequest,
    ) -> Result<DescribeCarrierGatewaysResult, ApiError> {
        carrier_gateway::describe_carrier_gateways(self, input)
    }

    fn delete_carrier_gateway(
        &mut self,
        input: DeleteCarrierGatewayRequest,
    ) -> Result<DeleteCarrierGatewayResult, ApiError> {
        carrier_gateway::delete_carrier_gateway(self, input)
    }

    fn create_flow_logs(
        &mut self,
        input: CreateFlowLogsRequest,
    ) -> Result<CreateFlowLogsResult, ApiError> {
        flow_log::create_flow_logs(self, input)
    }

    fn describe_flow_logs(
        &mut self,
        input: DescribeFlowLogsRequest,
    ) -> Result<DescribeFlowLogsResult, ApiError> {
        flow_log::describe_flow_logs(self, input)
    }

    fn delete_flow_logs(
        &mut self,
        input: DeleteFlowLogsRequest,
    ) -> Result<DeleteFlowLogsResult, ApiError> {
        flow_log::delete_flow_logs(self, input)
    }

    fn describe_public_ipv4_pools(
        &mut self,
        input: DescribePublicIpv4PoolsRequest,
    ) -> Result<DescribePublicIpv4PoolsResult, ApiError> {
        public_ipv4_pool::describe_public_ipv4_pools(self, input)
    }

    fn describe_ipv6_pools(
        &mut self,
        input: DescribeIpv6PoolsRequest,
    ) -> Result<DescribeIpv6PoolsResult, ApiError> {
        ipv6_pool::describe_ipv6_pools(self, input)
    }

    fn get_associated_ipv6_pool_cidrs(
        &mut self,
        input: GetAssociatedIpv6PoolCidrsRequest,
    ) -> Result<GetAssociatedIpv6PoolCidrsResult, ApiError> {
        ipv6_pool::get_associated_ipv6_pool_cidrs(self, input)
    }

    fn describe_placement_groups(
        &mut self,
        input: DescribePlacementGroupsRequest,
    ) -> Result<DescribePlacementGroupsResult, ApiError> {
        placement_group::describe_placement_groups(self, input)
    }

    fn delete_placement_group(
        &mut self,
        input: DeletePlacementGroupRequest,
    ) -> Result<(), ApiError> {
        placement_group::delete_placement_group(self, input)
    }

    fn create_launch_template(
        &mut self,
        input: CreateLaunchTemplateRequest,
    ) -> Result<CreateLaunchTemplateResult, ApiError> {
        launch_template::create_launch_template(self, input)
    }

    fn create_launch_template_version(
        &mut self,
        input: CreateLaunchTemplateVersionRequest,
    ) -> Result<CreateLaunchTemplateVersionResult, ApiError> {
        launch_template::create_launch_template_version(self, input)
    }

    fn describe_launch_templates(
        &mut self,
        input: DescribeLaunchTemplatesRequest,
    ) -> Result<DescribeLaunchTemplatesResult, ApiError> {
        launch_template::describe_launch_templates(self, input)
    }

    fn describe_launch_template_versions(
        &mut self,
        input: DescribeLaunchTemplateVersionsRequest,
    ) -> Result<DescribeLaunchTemplateVersionsResult, ApiError> {
        launch_template::describe_launch_template_versions(self, input)
    }

    fn modify_launch_template(
        &mut self,
        input: ModifyLaunchTemplateRequest,
    ) -> Result<ModifyLaunchTemplateResult, ApiError> {
        launch_template::modify_launch_template(self, input)
    }

    fn delete_launch_template(
        &mut self,
        input: DeleteLaunchTemplateRequest,
    ) -> Result<DeleteLaunchTemplateResult, ApiError> {
        launch_template::delete_launch_template(self, input)
    }

    fn delete_launch_template_versions(
        &mut self,
        input: DeleteLaunchTemplateVersionsRequest,
    ) -> Result<DeleteLaunchTemplateVersionsResult, ApiError> {
        launch_template::delete_launch_template_versions(self, input)
    }

    fn create_vpc_endpoint(
        &mut self,
        input: CreateVpcEndpointRequest,
    ) -> Result<CreateVpcEndpointResult, ApiError> {
        vpc_endpoint::create_vpc_endpoint(self, input)
    }

    fn describe_vpc_endpoints(
        &mut self,
        input: DescribeVpcEndpointsRequest,
    ) -> Result<DescribeVpcEndpointsResult, ApiError> {
        vpc_endpoint::describe_vpc_endpoints(self, input)
    }

    fn delete_vpc_endpoints(
        &mut self,
        input: DeleteVpcEndpointsRequest,
    ) -> Result<DeleteVpcEndpointsResult, ApiError> {
        vpc_endpoint::delete_vpc_endpoints(self, input)
    }

    fn modify_vpc_endpoint(
        &mut self,
        input: ModifyVpcEndpointRequest,
    ) -> Result<ModifyVpcEndpointResult, ApiError> {
        vpc_endpoint::modify_vpc_endpoint(self, input)
    }

    fn describe_vpc_endpoint_services(
        &mut self,
        input: DescribeVpcEndpointServicesRequest,
    ) -> Result<DescribeVpcEndpointServicesResult, ApiError> {
        vpc_endpoint::service::describe_vpc_endpoint_services(self, input)
    }

    fn create_vpc_peering_connection(
        &mut self,
        input: CreateVpcPeeringConnectionRequest,
    ) -> Result<CreateVpcPeeringConnectionResult, ApiError> {
        vpc_peering::create_vpc_peering_connection(self, input)
    }

    fn accept_vpc_peering_connection(
        &mut self,
        input: AcceptVpcPeeringConnectionRequest,
    ) -> Result<AcceptVpcPeeringConnectionResult, ApiError> {
        vpc_peering::accept_vpc_peering_connection(self, input)
    }

    fn reject_vpc_peering_connection(
        &mut self,
        input: RejectVpcPeeringConnectionRequest,
    ) -> Result<RejectVpcPeeringConnectionResult, ApiError> {
        vpc_peering::reject_vpc_peering_connection(self, input)
    }

    fn delete_vpc_peering_connection(
        &mut self,
        input: DeleteVpcPeeringConnectionRequest,
    ) -> Result<DeleteVpcPeeringConnectionResult, ApiError> {
        vpc_peering::delete_vpc_peering_connection(self, input)
    }

    fn describe_vpc_peering_connections(
        &mut self,
        input: DescribeVpcPeeringConnectionsRequest,
    ) -> Result<DescribeVpcPeeringConnectionsResult, ApiError> {
        vpc_peering::describe_vpc_peering_connections(self, input)
    }

    fn modify_vpc_peering_connection_options(
        &mut self,
        input: ModifyVpcPeeringConnectionOptionsRequest,
    ) -> Result<ModifyVpcPeeringConnectionOptionsResult, ApiError> {
        vpc_peering::modify_vpc_peering_connection_options(self, input)
    }

    fn describe_stale_security_groups(
        &mut self,
        input: DescribeStaleSecurityGroupsRequest,
    ) -> Result<DescribeStaleSecurityGroupsResult, ApiError> {
        security_group::describe_stale_security_groups(self, input)
    }

    fn describe_security_group_references(
        &mut self,
        input: DescribeSecurityGroupReferencesRequest,
    ) -> Result<DescribeSecurityGroupReferencesResult, ApiError> {
        security_group::describe_security_group_references(self, input)
    }

    fn create_nat_gateway(
        &mut self,
        input: CreateNatGatewayRequest,
    ) -> Result<CreateNatGatewayResult, ApiError> {
        nat_gateway::create_nat_gateway(self, input)
    }

    fn describe_nat_gateways(
        &mut self,
        input: DescribeNatGatewaysRequest,
    ) -> Result<DescribeNatGatewaysResult, ApiError> {
        nat_gateway::describe_nat_gateways(self, input)
    }

    fn delete_nat_gateway(
        &mut self,
        input: DeleteNatGatewayRequest,
    ) -> Result<DeleteNatGatewayResult, ApiError> {
        nat_gateway::delete_nat_gateway(self, input)
    }

    fn associate_nat_gateway_address(
        &mut self,
        input: AssociateNatGatewayAddressRequest,
    ) -> Result<AssociateNatGatewayAddressResult, ApiError> {
        nat_gateway::address::associate_nat_gateway_address(self, input)
    }

    fn disassociate_nat_gateway_address(
        &mut self,
        input: DisassociateNatGatewayAddressRequest,
    ) -> Result<DisassociateNatGatewayAddressResult, ApiError> {
        nat_gateway::address::disassociate_nat_gateway_address(self, input)
    }

    fn assign_private_nat_gateway_address(
        &mut self,
        input: AssignPrivateNatGatewayAddressRequest,
    ) -> Result<AssignPrivateNatGatewayAddressResult, ApiError> {
        nat_gateway::address::assign_private_nat_gateway_address(self, input)
    }

    fn unassign_private_nat_gateway_address(
        &mut self,
        input: UnassignPrivateNatGatewayAddressRequest,
    ) -> Result<UnassignPrivateNatGatewayAddressResult, ApiError> {
        nat_gateway::address::unassign_private_nat_gateway_address(self, input)
    }

    fn create_route_table(
        &mut self,
        input: CreateRouteTableRequest,
    ) -> Result<CreateRouteTableResult, ApiError> {
        route_table::create_route_table(self, input)
    }

    fn create_network_acl(
        &mut self,
        input: CreateNetworkAclRequest,
    ) -> Result<CreateNetworkAclResult, ApiError> {
        network_acl::create_network_acl(self, input)
    }

    fn delete_network_acl(&mut self, input: DeleteNetworkAclRequest) -> Result<(), ApiError> {
        network_acl::delete_network_acl(self, input)
    }

    fn create_network_acl_entry(
        &mut self,
        input: CreateNetworkAclEntryRequest,
    ) -> Result<(), ApiError> {
        network_acl::create_network_acl_entry(self, input)
    }

    fn replace_network_acl_entry(
        &mut self,
        input: ReplaceNetworkAclEntryRequest,
    ) -> Result<(), ApiError> {
        network_acl::replace_network_acl_entry(self, input)
    }

    fn delete_network_acl_entry(
        &mut self,
        input: DeleteNetworkAclEntryRequest,
    ) -> Result<(), ApiError> {
        network_acl::delete_network_acl_entry(self, input)
    }

    fn replace_network_acl_association(
        &mut self,
        input: ReplaceNetworkAclAssociationRequest,
    ) -> Result<ReplaceNetworkAclAssociationResult, ApiError> {
        network_acl::replace_network_acl_association(self, input)
    }

    fn describe_network_acls(
        &mut self,
        input: DescribeNetworkAclsRequest,
    ) -> Result<DescribeNetworkAclsResult, ApiError> {
        network_acl::describe_network_acls(self, input)
    }

    fn describe_route_tables(
        &mut self,
        input: DescribeRouteTablesRequest,
    ) -> Result<DescribeRouteTablesResult, ApiError> {
        route_table::describe_route_tables(self, input)
    }

    fn delete_route_table(&mut self, input: DeleteRouteTableRequest) -> Result<(), ApiError> {
        route_table::delete_route_table(self, input)
    }

    fn create_route(&mut self, input: CreateRouteRequest) -> Result<CreateRouteResult, ApiError> {
        route_table::create_route(self, input)
    }

    fn replace_route(&mut self, input: ReplaceRouteRequest) -> Result<(), ApiError> {
        route_table::replace_route(self, input)
    }

    fn delete_route(&mut self, input: DeleteRouteRequest) -> Result<(), ApiError> {
        route_table::delete_route(self, input)
    }

    fn associate_route_table(
        &mut self,
        input: AssociateRouteTableRequest,
    ) -> Result<AssociateRouteTableResult, ApiError> {
        route_table::associate_route_table(self, input)
    }

    fn disassociate_route_table(
        &mut self,
        input: DisassociateRouteTableRequest,
    ) -> Result<(), ApiError> {
        route_table::disassociate_route_table(self, input)
    }

    fn replace_route_table_association(
        &mut self,
        input: ReplaceRouteTableAssociationRequest,
    ) -> Result<ReplaceRouteTableAssociationResult, ApiError> {
        route_table::replace_route_table_association(self, input)
    }

    fn create_security_group(
        &mut self,
        input: CreateSecurityGroupRequest,
    ) -> Result<CreateSecurityGroupResult, ApiError> {
        security_group::create_security_group(self, input)
    }

    fn describe_security_groups(
        &mut self,
        input: DescribeSecurityGroupsRequest,
    ) -> Result<DescribeSecurityGroupsResult, ApiError> {
        security_group::describe_security_groups(self, input)
    }

    fn delete_security_group(
        &mut self,
        input: DeleteSecurityGroupRequest,
    ) -> Result<DeleteSecurityGroupResult, ApiError> {
        security_group::delete_security_group(self, input)
    }

    fn authorize_security_group_ingress(
        &mut self,
        input: AuthorizeSecurityGroupIngressRequest,
    ) -> Result<AuthorizeSecurityGroupIngressResult, ApiError> {
        security_group::authorize_security_group_ingress(self, input)
    }

    fn authorize_security_group_egress(
        &mut self,
        input: AuthorizeSecurityGroupEgressRequest,
    ) -> Result<AuthorizeSecurityGroupEgressResult, ApiError> {
        security_group::authorize_security_group_egress(self, input)
    }

    fn revoke_security_group_ingress(
        &mut self,
        input: RevokeSecurityGroupIngressRequest,
    ) -> Result<RevokeSecurityGroupIngressResult, ApiError> {
        security_group::revoke_security_group_ingress(self, input)
    }

    fn revoke_security_group_egress(
        &mut self,
        input: RevokeSecurityGroupEgressRequest,
    ) -> Result<RevokeSecurityGroupEgressResult, ApiError> {
        security_group::revoke_security_group_egress(self, input)
    }

    fn describe_security_group_rules(
        &mut self,
        input: DescribeSecurityGroupRulesRequest,
    ) -> Result<DescribeSecurityGroupRulesResult, ApiError> {
        security_group::describe_security_group_rules(self, input)
    }

    fn run_instances(&mut self, input: RunInstancesRequest) -> Result<Reservation, ApiError> {
        instance::run_instances(self, input)
    }

    fn describe_instances(
        &mut self,
        input: DescribeInstancesRequest,
    ) -> Result<DescribeInstancesResult, ApiError> {
        instance::describe_instances(self, input)
    }

    fn terminate_instances(
        &mut self,
        input: TerminateInstancesRequest,
    ) -> Result<TerminateInstancesResult, ApiError> {
        instance::terminate_instances(self, input)
    }

    fn stop_instances(
        &mut self,
        input: StopInstancesRequest,
    ) -> Result<StopInstancesResult, ApiError> {
        instance::stop_instances(self, input)
    }

    fn start_instances(
        &mut self,
        input: StartInstancesRequest,
    ) -> Result<StartInstancesResult, ApiError> {
        instance::start_instances(self, input)
    }

    fn reboot_instances(&mut self, input: RebootInstancesRequest) -> Result<(), ApiError> {
        instance::reboot_instances(self, input)
    }

    fn describe_instance_attribute(
        &mut self,
        input: DescribeInstanceAttributeRequest,
    ) -> Result<InstanceAttribute, ApiError> {
        instance::describe_instance_attribute(self, input)
    }

    fn describe_instance_status(
        &mut self,
        input: DescribeInstanceStatusRequest,
    ) -> Result<DescribeInstanceStatusResult, ApiError> {
        instance::describe_instance_status(self, input)
    }

    fn create_image(&mut self, input: CreateImageRequest) -> Result<CreateImageResult, ApiError> {
        image_from_instance::create_image(self, input)
    }

    fn modify_volume(
        &mut self,
        input: ModifyVolumeRequest,
    ) -> Result<ModifyVolumeResult, ApiError> {
        volume::modify_volume(self, input)
    }

    fn describe_volumes_modifications(
        &mut self,
        input: DescribeVolumesModificationsRequest,
    ) -> Result<DescribeVolumesModificationsResult, ApiError> {
        volume::describe_volumes_modifications(self, input)
    }

    fn create_snapshot(&mut self, input: CreateSnapshotRequest) -> Result<Snapshot, ApiError> {
        snapshot::create_snapshot(self, input)
    }

    fn describe_snapshots(
        &mut self,
        input: DescribeSnapshotsRequest,
    ) -> Result<DescribeSnapshotsResult, ApiError> {
        snapshot::describe_snapshots(self, input)
    }

    fn delete_snapshot(&mut self, input: DeleteSnapshotRequest) -> Result<(), ApiError> {
        snapshot::delete_snapshot(self, input)
    }

    fn create_volume(&mut self, input: CreateVolumeRequest) -> Result<Volume, ApiError> {
        volume::create_volume(self, input)
    }

    fn attach_volume(&mut self, input: AttachVolumeRequest) -> Result<VolumeAttachment, ApiError> {
        volume::attach_volume(self, input)
    }

    fn detach_volume(&mut self, input: DetachVolumeRequest) -> Result<VolumeAttachment, ApiError> {
        volume::detach_volume(self, input)
    }

    fn delete_volume(&mut self, input: DeleteVolumeRequest) -> Result<(), ApiError> {
        volume::delete_volume(self, input)
    }

    fn describe_volumes(
        &mut self,
        input: DescribeVolumesRequest,
    ) -> Result<DescribeVolumesResult, ApiError> {
        volume::describe_volumes(self, input)
    }

    fn modify_instance_placement(
        &mut self,
        input: ModifyInstancePlacementRequest,
    ) -> Result<ModifyInstancePlacementResult, ApiError> {
        instance::modify_instance_placement(self, input)
    }

    fn describe_volume_status(
        &mut self,
        input: DescribeVolumeStatusRequest,
    ) -> Result<DescribeVolumeStatusResult, ApiError> {
        volume::describe_volume_status(self, input)
    }

    fn describe_volume_attribute(
        &mut self,
        input: DescribeVolumeAttributeRequest,
    ) -> Result<DescribeVolumeAttributeResult, ApiError> {
        volume::describe_volume_attribute(self, input)
    }

    fn modify_volume_attribute(
        &mut self,
        input: ModifyVolumeAttributeRequest,
    ) -> Result<(), ApiError> {
        volume::modify_volume_attribute(self, input)
    }

    fn enable_volume_io(&mut self, input: EnableVolumeIORequest) -> Result<(), ApiError> {
        volume::enable_volume_io(self, input)
    }

    fn describe_network_interfaces(
        &mut self,
        input: DescribeNetworkInterfacesRequest,
    ) -> Result<DescribeNetworkInterfacesResult, ApiError> {
        network_interface::describe_network_interfaces(self, input)
    }

    fn modify_instance_attribute(
        &mut self,
        input: ModifyInstanceAttributeRequest,
    ) -> Result<(), ApiError> {
        instance::modify_instance_attribute(self, input)
    }

    fn reset_instance_attribute(
        &mut self,
        input: ResetInstanceAttributeRequest,
    ) -> Result<(), ApiError> {
        instance::reset_instance_attribute(self, input)
    }

    fn get_instance_metadata_defaults(
        &mut self,
        input: GetInstanceMetadataDefaultsRequest,
    ) -> Result<GetInstanceMetadataDefaultsResult, ApiError> {
        instance::get_instance_metadata_defaults(self, input)
    }

    fn modify_instance_metadata_defaults(
        &mut self,
        input: ModifyInstanceMetadataDefaultsRequest,
    ) -> Result<ModifyInstanceMetadataDefaultsResult, ApiError> {
        instance::modify_instance_metadata_defaults(self, input)
    }

    fn modify_instance_metadata_options(
        &mut self,
        input: ModifyInstanceMetadataOptionsRequest,
    ) -> Result<ModifyInstanceMetadataOptionsResult, ApiError> {
        instance::modify_instance_metadata_options(self, input)
    }

    fn modify_network_interface_attribute(
        &mut self,
        input: ModifyNetworkInterfaceAttributeRequest,
    ) -> Result<(), ApiError> {
        network_interface::attribute::modify_network_interface_attribute(self, input)
    }

    fn describe_network_interface_attribute(
        &mut self,
        input: DescribeNetworkInterfaceAttributeRequest,
    ) -> Result<DescribeNetworkInterfaceAttributeResult, ApiError> {
        network_interface::attribute::describe_network_interface_attribute(self, input)
    }

    fn reset_network_interface_attribute(
        &mut self,
        input: ResetNetworkInterfaceAttributeRequest,
    ) -> Result<(), ApiError> {
        network_interface::attribute::reset_network_interface_attribute(self, input)
    }

    fn create_network_interface(
        &mut self,
        input: CreateNetworkInterfaceRequest,
    ) -> Result<CreateNetworkInterfaceResult, ApiError> {
        network_interface::lifecycle::create_network_interface(self, input)
    }

    fn delete_network_interface(
        &mut self,
        input: DeleteNetworkInterfaceRequest,
    ) -> Result<(), ApiError> {
        network_interface::lifecycle::delete_network_interface(self, input)
    }

    fn attach_network_interface(
        &mut self,
        input: AttachNetworkInterfaceRequest,
    ) -> Result<AttachNetworkInterfaceResult, ApiError> {
        network_interface::lifecycle::attach_network_interface(self, input)
    }

    fn detach_network_interface(
        &mut self,
        input: DetachNetworkInterfaceRequest,
    ) -> Result<(), ApiError> {
        network_interface::lifecycle::detach_network_interface(self, input)
    }

    fn assign_private_ip_addresses(
        &mut self,
        input: AssignPrivateIpAddressesRequest,
    ) -> Result<AssignPrivateIpAddressesResult, ApiError> {
        network_interface::address::assign_private_ip_addresses(self, input)
    }

    fn unassign_private_ip_addresses(
        &mut self,
        input: UnassignPrivateIpAddressesRequest,
    ) -> Result<(), ApiError> {
        network_interface::address::unassign_private_ip_addresses(self, input)
    }

    fn describe_images(
        &mut self,
        input: DescribeImagesRequest,
    ) -> Result<DescribeImagesResult, ApiError> {
        image::describe_images(self, input)
    }

    fn register_image(
        &mut self,
        input: RegisterImageRequest,
    ) -> Result<RegisterImageResult, ApiError> {
        image::register_image(self, input)
    }

    fn deregister_image(
        &mut self,
        input: DeregisterImageRequest,
    ) -> Result<DeregisterImageResult, ApiError> {
        image::deregister_image(self, input)
    }

    fn modify_image_attribute(
        &mut self,
        input: ModifyImageAttributeRequest,
    ) -> Result<(), ApiError> {
        image_attribute::modify_image_attribute(self, input)
    }

    fn describe_image_attribute(
        &mut self,
        input: DescribeImageAttributeRequest,
    ) -> Result<ImageAttribute, ApiError> {
        image_attribute::describe_image_attribute(self, input)
    }

    fn reset_image_attribute(&mut self, input: ResetImageAttributeRequest) -> Result<(), ApiError> {
        image_attribute::reset_image_attribute(self, input)
    }

    fn get_image_block_public_access_state(
        &mut self,
        input: GetImageBlockPublicAccessStateRequest,
    ) -> Result<GetImageBlockPublicAccessStateResult, ApiError> {
        image_attribute::get_state(self, input)
    }

    fn enable_image_block_public_access(
        &mut self,
        input: EnableImageBlockPublicAccessRequest,
    ) -> Result<EnableImageBlockPublicAccessResult, ApiError> {
        image_attribute::enable(self, input)
    }

    fn disable_image_block_public_access(
        &mut self,
        input: DisableImageBlockPublicAccessRequest,
    ) -> Result<DisableImageBlockPublicAccessResult, ApiError> {
        image_attribute::disable(self, input)
    }

    fn modify_snapshot_attribute(
        &mut self,
        input: ModifySnapshotAttributeRequest,
    ) -> Result<(), ApiError> {
        snapshot_attribute::modify_snapshot_attribute(self, input)
    }

    fn describe_snapshot_attribute(
        &mut self,
        input: DescribeSnapshotAttributeRequest,
    ) -> Result<DescribeSnapshotAttributeResult, ApiError> {
        snapshot_attribute::describe_snapshot_attribute(self, input)
    }

    fn reset_snapshot_attribute(
        &mut self,
        input: ResetSnapshotAttributeRequest,
    ) -> Result<(), ApiError> {
        snapshot_attribute::reset_snapshot_attribute(self, input)
    }

    fn disable_image(
        &mut self,
        input: DisableImageRequest,
    ) -> Result<DisableImageResult, ApiError> {
        image_lifecycle::disable_image(self, input)
    }

    fn enable_image(&mut self, input: EnableImageRequest) -> Result<EnableImageResult, ApiError> {
        image_lifecycle::enable_image(self, input)
    }

    fn enable_image_deprecation(
        &mut self,
        input: EnableImageDeprecationRequest,
    ) -> Result<EnableImageDeprecationResult, ApiError> {
        image_lifecycle::enable_image_deprecation(self, input)
    }

    fn disable_image_deprecation(
        &mut self,
        input: DisableImageDeprecationRequest,
    ) -> Result<DisableImageDeprecationResult, ApiError> {
        image_lifecycle::disable_image_deprecation(self, input)
    }

    fn enable_image_deregistration_protection(
        &mut self,
        input: EnableImageDeregistrationProtectionRequest,
    ) -> Result<EnableImageDeregistrationProtectionResult, ApiError> {
        image_lifecycle::enable_protection(self, input)
    }

    fn disable_image_deregistration_protection(
        &mut self,
        input: DisableImageDeregistrationProtectionRequest,
    ) -> Result<DisableImageDeregistrationProtectionResult, ApiError> {
        image_lifecycle::disable_protection(self, input)
    }

    fn copy_image(&mut self, input: CopyImageRequest) -> Result<CopyImageResult, ApiError> {
        copy::copy_image(self, input)
    }

    fn copy_snapshot(
        &mut self,
        input: CopySnapshotRequest,
    ) -> Result<CopySnapshotResult, ApiError> {
        copy::copy_snapshot(self, input)
    }

    fn update_security_group_rule_descriptions_ingress(
        &mut self,
        input: UpdateSecurityGroupRuleDescriptionsIngressRequest,
    ) -> Result<UpdateSecurityGroupRuleDescriptionsIngressResult, ApiError> {
        security_group::update_security_group_rule_descriptions_ingress(self, input)
    }

    fn update_security_group_rule_descriptions_egress(
        &mut self,
        input: UpdateSecurityGroupRuleDescriptionsEgressRequest,
    ) -> Result<UpdateSecurityGroupRuleDescriptionsEgressResult, ApiError> {
        security_group::update_security_group_rule_descriptions_egress(self, input)
    }

    fn modify_security_group_rules(
        &mut self,
        input: ModifySecurityGroupRulesRequest,
    ) -> Result<ModifySecurityGroupRulesResult, ApiError> {
        security_group::modify_security_group_rules(self, input)
    }

    fn describe_instance_credit_specifications(
        &mut self,
        input: DescribeInstanceCreditSpecificationsRequest,
    ) -> Result<DescribeInstanceCreditSpecificationsResult, ApiError> {
        instance::describe_instance_credit_specifications(self, input)
    }

    fn modify_instance_credit_specification(
        &mut self,
        input: ModifyInstanceCreditSpecificationRequest,
    ) -> Result<ModifyInstanceCreditSpecificationResult, ApiError> {
        instance::modify_instance_credit_specification(self, input)
    }

    fn get_default_credit_specification(
        &mut self,
        input: GetDefaultCreditSpecificationRequest,
    ) -> Result<GetDefaultCreditSpecificationResult, ApiError> {
        instance::get_default_credit_specification(self, input)
    }

    fn modify_default_credit_specification(
        &mut self,
        input: ModifyDefaultCreditSpecificationRequest,
    ) -> Result<ModifyDefaultCreditSpecificationResult, ApiError> {
        instance::modify_default_credit_specification(self, input)
    }

    fn create_default_vpc(
        &mut self,
        input: CreateDefaultVpcRequest,
    ) -> Result<CreateDefaultVpcResult, ApiError> {
        vpc::create_default_vpc(self, input)
    }

    fn create_default_subnet(
        &mut self,
        input: CreateDefaultSubnetRequest,
    ) -> Result<CreateDefaultSubnetResult, ApiError> {
        subnet::create_default_subnet(self, input)
    }

    fn associate_iam_instance_profile(
        &mut self,
        input: AssociateIamInstanceProfileRequest,
    ) -> Result<AssociateIamInstanceProfileResult, ApiError> {
        instance::associate_iam_instance_profile(self, input)
    }

    fn describe_iam_instance_profile_associations(
        &mut self,
        input: DescribeIamInstanceProfileAssociationsRequest,
    ) -> Result<DescribeIamInstanceProfileAssociationsResult, ApiError> {
        instance::describe_iam_instance_profile_associations(self, input)
    }

    fn replace_iam_instance_profile_association(
        &mut self,
        input: ReplaceIamInstanceProfileAssociationRequest,
    ) -> Result<ReplaceIamInstanceProfileAssociationResult, ApiError> {
        instance::replace_iam_instance_profile_association(self, input)
    }

    fn disassociate_iam_instance_profile(
        &mut self,
        input: DisassociateIamInstanceProfileRequest,
    ) -> Result<DisassociateIamInstanceProfileResult, ApiError> {
        instance::disassociate_iam_instance_profile(self, input)
    }

    fn describe_instance_types(
        &mut self,
        input: DescribeInstanceTypesRequest,
    ) -> Result<DescribeInstanceTypesResult, ApiError> {
        instance_type::describe_instance_types(self, input)
    }

    fn describe_instance_type_offerings(
        &mut self,
        input: DescribeInstanceTypeOfferingsRequest,
    ) -> Result<DescribeInstanceTypeOfferingsResult, ApiError> {
        instance_type::describe_instance_type_offerings(self, input)
    }

    fn get_ebs_encryption_by_default(
        &mut self,
        input: GetEbsEncryptionByDefaultRequest,
    ) -> Result<GetEbsEncryptionByDefaultResult, ApiError> {
        volume::get_ebs_encryption_by_default(self, input)
    }

    fn enable_ebs_encryption_by_default(
        &mut self,
        input: EnableEbsEncryptionByDefaultRequest,
    ) -> Result<EnableEbsEncryptionByDefaultResult, ApiError> {
        volume::enable_ebs_encryption_by_default(self, input)
    }

    fn disable_ebs_encryption_by_default(
        &mut self,
        input: DisableEbsEncryptionByDefaultRequest,
    ) -> Result<DisableEbsEncryptionByDefaultResult, ApiError> {
        volume::disable_ebs_encryption_by_default(self, input)
    }

    fn get_ebs_default_kms_key_id(
        &mut self,
        input: GetEbsDefaultKmsKeyIdRequest,
    ) -> Result<GetEbsDefaultKmsKeyIdResult, ApiError> {
        volume::get_ebs_default_kms_key_id(self, input)
    }

    fn modify_ebs_default_kms_key_id(
        &mut self,
        input: ModifyEbsDefaultKmsKeyIdRequest,
    ) -> Result<ModifyEbsDefaultKmsKeyIdResult, ApiError> {
        volume::modify_ebs_default_kms_key_id(self, input)
    }

    fn reset_ebs_default_kms_key_id(
        &mut self,
        input: ResetEbsDefaultKmsKeyIdRequest,
    ) -> Result<ResetEbsDefaultKmsKeyIdResult, ApiError> {
        volume::reset_ebs_default_kms_key_id(self, input)
    }

    fn modify_instance_maintenance_options(
        &mut self,
        input: ModifyInstanceMaintenanceOptionsRequest,
    ) -> Result<ModifyInstanceMaintenanceOptionsResult, ApiError> {
        instance::modify_instance_maintenance_options(self, input)
    }

    fn modify_private_dns_name_options(
        &mut self,
        input: ModifyPrivateDnsNameOptionsRequest,
    ) -> Result<ModifyPrivateDnsNameOptionsResult, ApiError> {
        instance::modify_private_dns_name_options(self, input)
    }

    fn monitor_instances(
        &mut self,
        input: MonitorInstancesRequest,
    ) -> Result<MonitorInstancesResult, ApiError> {
        instance::monitor_instances(self, input)
    }

    fn unmonitor_instances(
        &mut self,
        input: UnmonitorInstancesRequest,
    ) -> Result<UnmonitorInstancesResult, ApiError> {
        instance::unmonitor_instances(self, input)
    }

    fn get_console_output(
        &mut self,
        input: GetConsoleOutputRequest,
    ) -> Result<GetConsoleOutputResult, ApiError> {
        instance::get_console_output(self, input)
    }

    fn get_password_data(
        &mut self,
        input: GetPasswordDataRequest,
    ) -> Result<GetPasswordDataResult, ApiError> {
        instance::get_password_data(self, input)
    }

    fn describe_prefix_lists(
        &mut self,
        input: DescribePrefixListsRequest,
    ) -> Result<DescribePrefixListsResult, ApiError> {
        prefix_list::describe_prefix_lists(self, input)
    }

    fn describe_managed_prefix_lists(
        &mut self,
        input: DescribeManagedPrefixListsRequest,
    ) -> Result<DescribeManagedPrefixListsResult, ApiError> {
        prefix_list::describe_managed_prefix_lists(self, input)
    }

    fn get_managed_prefix_list_entries(
        &mut self,
        input: GetManagedPrefixListEntriesRequest,
    ) -> Result<GetManagedPrefixListEntriesResult, ApiError> {
        prefix_list::get_managed_prefix_list_entries(self, input)
    }

    fn create_managed_prefix_list(
        &mut self,
        input: CreateManagedPrefixListRequest,
    ) -> Result<CreateManagedPrefixListResult, ApiError> {
        managed_prefix_list::create_managed_prefix_list(self, input)
    }

    fn modify_managed_prefix_list(
        &mut self,
        input: ModifyManagedPrefixListRequest,
    ) -> Result<ModifyManagedPrefixListResult, ApiError> {
        managed_prefix_list::modify_managed_prefix_list(self, input)
    }

    fn restore_managed_prefix_list_version(
        &mut self,
        input: RestoreManagedPrefixListVersionRequest,
    ) -> Result<RestoreManagedPrefixListVersionResult, ApiError> {
        managed_prefix_list::restore_managed_prefix_list_version(self, input)
    }

    fn delete_managed_prefix_list(
        &mut self,
        input: DeleteManagedPrefixListRequest,
    ) -> Result<DeleteManagedPrefixListResult, ApiError> {
        managed_prefix_list::delete_managed_prefix_list(self, input)
    }

    fn get_managed_prefix_list_associations(
        &mut self,
        input: GetManagedPrefixListAssociationsRequest,
    ) -> Result<GetManagedPrefixListAssociationsResult, ApiError> {
        managed_prefix_list::get_managed_prefix_list_associations(self, input)
    }

    fn create_dhcp_options(
        &mut self,
        input: CreateDhcpOptionsRequest,
    ) -> Result<CreateDhcpOptionsResult, ApiError> {
        dhcp_options::create_dhcp_options(self, input)
    }

    fn delete_dhcp_options(&mut self, input: DeleteDhcpOptionsRequest) -> Result<(), ApiError> {
        dhcp_options::delete_dhcp_options(self, input)
    }

    fn describe_dhcp_options(
        &mut self,
        input: DescribeDhcpOptionsRequest,
    ) -> Result<DescribeDhcpOptionsResult, ApiError> {
        dhcp_options::describe_dhcp_options(self, input)
    }

    fn associate_dhcp_options(
        &mut self,
        input: AssociateDhcpOptionsRequest,
    ) -> Result<(), ApiError> {
        dhcp_options::associate_dhcp_options(self, input)
    }

    fn describe_addresses_attribute(
        &mut self,
        input: DescribeAddressesAttributeRequest,
    ) -> Result<DescribeAddressesAttributeResult, ApiError> {
        address_attribute::describe_addresses_attribute(self, input)
    }

    fn modify_address_attribute(
        &mut self,
        input: ModifyAddressAttributeRequest,
    ) -> Result<ModifyAddressAttributeResult, ApiError> {
        address_attribute::modify_address_attribute(self, input)
    }

    fn reset_address_attribute(
        &mut self,
        input: ResetAddressAttributeRequest,
    ) -> Result<ResetAddressAttributeResult, ApiError> {
        address_attribute::reset_address_attribute(self, input)
    }

    fn create_key_pair(&mut self, input: CreateKeyPairRequest) -> Result<KeyPair, ApiError> {
        key_pair::create_key_pair(self, input)
    }

    fn import_key_pair(
        &mut self,
        input: ImportKeyPairRequest,
    ) -> Result<ImportKeyPairResult, ApiError> {
        key_pair::import_key_pair(self, input)
    }

    fn describe_key_pairs(
        &mut self,
        input: DescribeKeyPairsRequest,
    ) -> Result<DescribeKeyPairsResult, ApiError> {
        key_pair::describe_key_pairs(self, input)
    }

    fn delete_key_pair(
        &mut self,
        input: DeleteKeyPairRequest,
    ) -> Result<DeleteKeyPairResult, ApiError> {
        key_pair::delete_key_pair(self, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request to create a route table with one tag, `key` = `value`.
    fn request(key: &str, value: &str) -> CreateRouteTableRequest {
        CreateRouteTableRequest {
            tag_specifications: Some(vec![TagSpecification {
                resource_type: Some(ResourceType::RouteTable),
                tags: Some(vec![Tag {
                    key: Some(key.into()),
                    value: Some(value.into()),
                }]),
            }]),
            client_token: None,
            dry_run: None,
            vpc_id: "vpc-1".into(),
        }
    }

    #[test]
    fn a_fingerprint_tells_requests_apart_down_to_a_nested_member() {
        let print = fingerprint(&request("Name", "a"));
        assert_eq!(print, fingerprint(&request("Name", "a")));
        assert_ne!(print, fingerprint(&request("Name", "b")));
        // The same text, split otherwise between the key and the value, is another request.
        assert_ne!(print, fingerprint(&request("Namea", "")));
        let mut with_dry_run = request("Name", "a");
        with_dry_run.dry_run = Some(false);
        assert_ne!(print, fingerprint(&with_dry_run));
    }
}
