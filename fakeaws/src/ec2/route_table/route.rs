//! Routes: a destination and a target (gateway, NAT gateway, instance, interface, VPC
//! peering connection), checked as AWS checks them; CreateRoute, ReplaceRoute, DeleteRoute
//! (a destination that is a prefix list goes to [`super::prefix_route`]); the quota of routes
//! per table, for each family.

use ipnet::{IpNet, Ipv4Net};

use crate::ec2::error::Code;
use crate::ec2::vpc::parse_cidr;
use crate::ec2::vpc_ipv6::parse_ipv6_cidr;
use crate::ec2::{Kind, carrier_gateway, nat_gateway, vpc_peering};

use super::prefix_route;
use crate::generated::ec2::{
    CreateRouteRequest, CreateRouteResult, DeleteRouteRequest, DeleteRouteTableRequest,
    NatGatewayState, ReplaceRouteRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// A route's target as the members of AWS's `Route` that name it.
#[derive(Default)]
pub(super) struct TargetIds {
    pub(super) gateway: Option<String>,
    pub(super) nat: Option<String>,
    pub(super) instance: Option<String>,
    pub(super) eni: Option<String>,
    pub(super) egress_only: Option<String>,
    pub(super) peering: Option<String>,
    pub(super) carrier: Option<String>,
}

pub(super) fn target_ids(t: &Target) -> TargetIds {
    let mut ids = TargetIds::default();
    match t {
        Target::Local => ids.gateway = Some("local".into()),
        Target::Gateway(g) => ids.gateway = Some(g.clone()),
        Target::NatGateway(n) => ids.nat = Some(n.clone()),
        Target::Instance(i) => ids.instance = Some(i.clone()),
        Target::NetworkInterface(e) => ids.eni = Some(e.clone()),
        Target::EgressOnlyGateway(g) => ids.egress_only = Some(g.clone()),
        Target::VpcPeering(p) => ids.peering = Some(p.clone()),
        Target::CarrierGateway(g) => ids.carrier = Some(g.clone()),
    }
    ids
}

/// Whether a route's target can carry traffic now (else AWS shows it as `blackhole`).
pub(super) fn is_active(region: &Region, vpc_id: &str, t: &Target) -> bool {
    match t {
        Target::Local => true,
        Target::Gateway(g) if g.starts_with("vgw-") => {
            crate::ec2::vpn_gateway::is_attached_to(region, g, vpc_id)
        }
        Target::Gateway(g) => region
            .internet_gateways
            .get(g)
            .is_some_and(|g| g.vpc_id.as_deref() == Some(vpc_id)),
        Target::NatGateway(n) => region.nat_gateways.get(n).is_some_and(|n| {
            matches!(
                n.state,
                NatGatewayState::Available | NatGatewayState::Pending
            )
        }),
        Target::Instance(i) => region.instances.get(i).is_some_and(|i| !i.is_gone()),
        Target::NetworkInterface(e) => region.network_interfaces.contains_key(e),
        Target::EgressOnlyGateway(g) => region
            .egress_only_gateways
            .get(g)
            .is_some_and(|g| g.vpc_id == vpc_id),
        Target::VpcPeering(p) => vpc_peering::is_active(region, p),
        Target::CarrierGateway(g) => carrier_gateway::is_of_vpc(region, g, vpc_id),
    }
}

/// Adds a route to a table without checks (for the default VPC's route to its gateway).
pub fn add_route_unchecked(
    region: &mut Region,
    table_id: &str,
    destination: Ipv4Net,
    target: Target,
) {
    if let Some(t) = region.route_tables.0.get_mut(table_id) {
        t.routes.push(Route {
            destination: IpNet::V4(destination),
            target,
            from_table: false,
        });
    }
}

/// `DeleteRouteTable`: not the main table, not while associated.
pub fn delete_route_table(
    region: &mut Region,
    input: DeleteRouteTableRequest,
) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    if t.main || !t.associations.is_empty() {
        return Err(ApiError::dependency_violation(format!(
            "The routeTable '{}' has dependencies and cannot be deleted.",
            t.id
        )));
    }
    let vpc_id = t.vpc_id.clone();
    crate::ec2::vpc_endpoint::forget_route_table(region, &vpc_id, &input.route_table_id);
    region.route_tables.0.remove(&input.route_table_id);
    region.by_vpc.remove(&vpc_id, &input.route_table_id);
    region.tags.remove_resource(&input.route_table_id);
    Ok(())
}

/// The target members of a CreateRoute or ReplaceRoute request.
pub(super) struct Targets<'a> {
    pub(super) gateway: Option<&'a str>,
    pub(super) nat: Option<&'a str>,
    pub(super) instance: Option<&'a str>,
    pub(super) eni: Option<&'a str>,
    pub(super) egress_only: Option<&'a str>,
    pub(super) peering: Option<&'a str>,
    pub(super) carrier: Option<&'a str>,
}

/// The [`Targets`] of a CreateRoute or ReplaceRoute request (the two models have the same
/// members).
macro_rules! targets {
    ($input:expr) => {
        Targets {
            gateway: $input.gateway_id.as_deref(),
            nat: $input.nat_gateway_id.as_deref(),
            instance: $input.instance_id.as_deref(),
            eni: $input.network_interface_id.as_deref(),
            egress_only: $input.egress_only_internet_gateway_id.as_deref(),
            peering: $input.vpc_peering_connection_id.as_deref(),
            carrier: $input.carrier_gateway_id.as_deref(),
        }
    };
}

/// Resolves and checks the one target of a CreateRoute/ReplaceRoute to `dest` (as written in
/// messages), an IPv4 destination unless `ipv6`.
pub(super) fn resolve_target(
    region: &Region,
    vpc_id: &str,
    table_id: &str,
    (dest, ipv6): (&str, bool),
    targets: &Targets<'_>,
) -> Result<Target, ApiError> {
    let Targets {
        gateway,
        nat,
        instance,
        eni,
        egress_only,
        peering,
        carrier,
    } = *targets;
    let given = [gateway, nat, instance, eni, egress_only, peering, carrier]
        .iter()
        .flatten()
        .count();
    if given == 0 {
        return Err(ApiError::missing_parameter(
            "GatewayId, NatGatewayId, InstanceId, NetworkInterfaceId, \
             EgressOnlyInternetGatewayId, VpcPeeringConnectionId or CarrierGatewayId",
        ));
    }
    if given > 1 {
        return Err(ApiError::invalid_combination(
            "The parameter combination is not valid: specify exactly one route target.",
        ));
    }
    let other_network = |what: &str| {
        ApiError::invalid_value(format!(
            "route table {table_id} and network gateway {what} belong to different networks"
        ))
    };
    if let Some(g) = gateway {
        if g == "local" {
            return Ok(Target::Local);
        }
        if g.starts_with("vgw-") {
            Kind::VpnGateway.get(&region.vpn_gateways, g)?;
            if !crate::ec2::vpn_gateway::is_attached_to(region, g, vpc_id) {
                return Err(other_network(g));
            }
            return Ok(Target::Gateway(g.to_string()));
        }
        let gw = Kind::InternetGateway.get(&region.internet_gateways, g)?;
        if gw.vpc_id.as_deref() != Some(vpc_id) {
            return Err(other_network(g));
        }
        return Ok(Target::Gateway(g.to_string()));
    }
    if let Some(g) = egress_only {
        let gw = Kind::EgressOnlyInternetGateway.get(&region.egress_only_gateways, g)?;
        if gw.vpc_id != vpc_id {
            return Err(other_network(g));
        }
        if !ipv6 {
            return Err(ApiError::invalid_value(format!(
                "An egress-only internet gateway takes IPv6 traffic only: the route to {dest} \
                 cannot target {g}."
            )));
        }
        return Ok(Target::EgressOnlyGateway(g.to_string()));
    }
    if let Some(g) = carrier {
        let gw = Kind::CarrierGateway.get(&region.carrier_gateways, g)?;
        if gw.vpc_id != vpc_id {
            return Err(other_network(g));
        }
        if ipv6 {
            return Err(ApiError::invalid_value(format!(
                "A carrier gateway takes IPv4 traffic only: the route to {dest} cannot target \
                 {g}."
            )));
        }
        return Ok(Target::CarrierGateway(g.to_string()));
    }
    if let Some(p) = peering {
        vpc_peering::check_route_target(region, vpc_id, p)?;
        return Ok(Target::VpcPeering(p.to_string()));
    }
    if let Some(n) = nat {
        let gw = nat_gateway::find(region, n)?;
        if gw.vpc_id != vpc_id {
            return Err(other_network(n));
        }
        return Ok(Target::NatGateway(n.to_string()));
    }
    if let Some(i) = instance {
        let inst = Kind::Instance.get(&region.instances, i)?;
        if inst.vpc_id != vpc_id {
            return Err(other_network(i));
        }
        return Ok(Target::Instance(i.to_string()));
    }
    let e = eni.unwrap_or_default();
    let iface = Kind::NetworkInterface.get(&region.network_interfaces, e)?;
    if iface.vpc_id != vpc_id {
        return Err(other_network(e));
    }
    Ok(Target::NetworkInterface(e.to_string()))
}

/// Where a route goes.
pub(super) enum Destination {
    /// An IPv4 `DestinationCidrBlock` or an IPv6 `DestinationIpv6CidrBlock`.
    Cidr(IpNet),
    /// A `DestinationPrefixListId`.
    PrefixList(String),
}

/// The destination of a route: an IPv4 `DestinationCidrBlock`, an IPv6
/// `DestinationIpv6CidrBlock` or a `DestinationPrefixListId`, one of the three.
pub(super) fn destination(
    v4: Option<&str>,
    v6: Option<&str>,
    prefix_list: Option<&str>,
) -> Result<Destination, ApiError> {
    match (v4, v6, prefix_list) {
        (Some(raw), None, None) => parse_cidr(raw, "destinationCidrBlock")
            .map(IpNet::V4)
            .map(Destination::Cidr),
        (None, Some(raw), None) => parse_ipv6_cidr(raw, "destinationIpv6CidrBlock")
            .map(IpNet::V6)
            .map(Destination::Cidr),
        (None, None, Some(id)) => Ok(Destination::PrefixList(id.to_string())),
        (None, None, None) => Err(ApiError::missing_parameter(
            "DestinationCidrBlock, DestinationIpv6CidrBlock or DestinationPrefixListId",
        )),
        _ => Err(ApiError::invalid_combination(
            "Specify one destination: DestinationCidrBlock, DestinationIpv6CidrBlock or \
             DestinationPrefixListId.",
        )),
    }
}

/// How many routes of a family (IPv4 unless `ipv6`) table `t` holds against the routes per
/// table quota: one for each route to a CIDR block (its `local` routes included), and a
/// customer-managed list's `MaxEntries` (or `resized`'s size for that list) for each route to
/// a list of that family. Gateway endpoints' routes are not counted.
pub(crate) fn routes_held(
    region: &Region,
    t: &RouteTable,
    ipv6: bool,
    resized: Option<(&str, i32)>,
) -> usize {
    let cidrs = t
        .routes
        .iter()
        .filter(|r| r.destination.addr().is_ipv6() == ipv6)
        .count();
    let lists: usize = t
        .prefix_routes
        .iter()
        .filter_map(|r| region.prefix_lists.get(&r.prefix_list_id))
        .filter(|l| l.is_ipv6() == ipv6)
        .map(|l| crate::ec2::managed_prefix_list::weight(region, Some(&l.id), resized))
        .sum();
    cidrs + lists
}

/// Fails with `RouteLimitExceeded` unless table `t` has room for `more` routes of a family.
pub(super) fn check_room(
    region: &Region,
    t: &RouteTable,
    ipv6: bool,
    more: usize,
) -> Result<(), ApiError> {
    if routes_held(region, t, ipv6, None) + more > region.limits.routes_per_route_table {
        return Err(ApiError::new(
            Code::RouteLimitExceeded,
            "The maximum number of routes has been reached.",
        ));
    }
    Ok(())
}

/// Whether the VPC `vpc_id` has a range holding `dest` whole (a route to it can only target
/// an interface or an instance).
fn within_vpc(region: &Region, vpc_id: &str, dest: &IpNet) -> bool {
    region.vpcs.get(vpc_id).is_some_and(|v| match dest {
        IpNet::V4(d) => v.range_holding(d).is_some(),
        IpNet::V6(d) => v.ipv6.iter().any(|b| b.cidr.contains(d)),
    })
}

/// `CreateRoute`.
pub fn create_route(
    region: &mut Region,
    input: CreateRouteRequest,
) -> Result<CreateRouteResult, ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let dest = match destination(
        input.destination_cidr_block.as_deref(),
        input.destination_ipv6_cidr_block.as_deref(),
        input.destination_prefix_list_id.as_deref(),
    )? {
        Destination::Cidr(d) => d,
        Destination::PrefixList(id) => {
            let targets = targets!(input);
            return prefix_route::create(region, &input.route_table_id, &id, &targets).map(|()| {
                CreateRouteResult {
                    r#return: Some(true),
                }
            });
        }
    };
    if t.routes.iter().any(|r| r.destination == dest) {
        return Err(ApiError::new(
            Code::RouteAlreadyExists,
            format!("The route identified by {dest} already exists."),
        ));
    }
    if within_vpc(region, &t.vpc_id, &dest) {
        return Err(ApiError::invalid_parameter(
            if dest.addr().is_ipv4() {
                "destinationCidrBlock"
            } else {
                "destinationIpv6CidrBlock"
            },
            &dest.to_string(),
            "The destination CIDR block is equal to or more specific than one of this VPC's CIDR blocks. This route can target only an interface or an instance.",
        ));
    }
    let ipv6 = dest.addr().is_ipv6();
    let target = resolve_target(
        region,
        &t.vpc_id,
        &t.id,
        (&dest.to_string(), ipv6),
        &targets!(input),
    )?;
    if target == Target::Local {
        return Err(ApiError::invalid_value(
            "The local route cannot be created.",
        ));
    }
    check_room(region, t, ipv6, 1)?;
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.routes.push(Route {
            destination: dest,
            target,
            from_table: false,
        });
    }
    Ok(CreateRouteResult {
        r#return: Some(true),
    })
}

pub(super) fn route_not_found(dest: &IpNet, table: &str) -> ApiError {
    let member = if dest.addr().is_ipv4() {
        "destination-cidr-block"
    } else {
        "destination-ipv6-cidr-block"
    };
    ApiError::new(
        Code::InvalidRouteNotFound,
        format!("no route with {member} {dest} in route table {table}"),
    )
}

/// The route of table `t` to `dest`, or `InvalidRoute.NotFound`.
fn route_to<'a>(t: &'a RouteTable, dest: &IpNet) -> Result<&'a Route, ApiError> {
    t.routes
        .iter()
        .find(|r| r.destination == *dest)
        .ok_or_else(|| route_not_found(dest, &t.id))
}

/// `ReplaceRoute`.
pub fn replace_route(region: &mut Region, input: ReplaceRouteRequest) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let dest = match destination(
        input.destination_cidr_block.as_deref(),
        input.destination_ipv6_cidr_block.as_deref(),
        input.destination_prefix_list_id.as_deref(),
    )? {
        Destination::Cidr(d) => d,
        Destination::PrefixList(id) => {
            let targets = targets!(input);
            let local = input.local_target == Some(true);
            return prefix_route::replace(region, &input.route_table_id, &id, &targets, local);
        }
    };
    let current = route_to(t, &dest)?;
    let target = if input.local_target == Some(true) {
        Target::Local
    } else {
        resolve_target(
            region,
            &t.vpc_id,
            &t.id,
            (&dest.to_string(), dest.addr().is_ipv6()),
            &targets!(input),
        )?
    };
    if current.target == Target::Local && target != Target::Local {
        return Err(ApiError::invalid_value(format!(
            "The local route {dest} of route table {} can only target the VPC.",
            t.id
        )));
    }
    if let Some(route) = region
        .route_tables
        .0
        .get_mut(&input.route_table_id)
        .and_then(|t| t.routes.iter_mut().find(|r| r.destination == dest))
    {
        route.target = target;
    }
    Ok(())
}

/// `DeleteRoute`: not the local route.
pub fn delete_route(region: &mut Region, input: DeleteRouteRequest) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let dest = match destination(
        input.destination_cidr_block.as_deref(),
        input.destination_ipv6_cidr_block.as_deref(),
        input.destination_prefix_list_id.as_deref(),
    )? {
        Destination::Cidr(d) => d,
        Destination::PrefixList(id) => {
            return prefix_route::delete(region, &input.route_table_id, &id);
        }
    };
    let current = route_to(t, &dest)?;
    if current.target == Target::Local {
        return Err(ApiError::invalid_value(format!(
            "cannot remove local route {dest} in route table {}",
            t.id
        )));
    }
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.routes.retain(|r| r.destination != dest);
    }
    Ok(())
}
