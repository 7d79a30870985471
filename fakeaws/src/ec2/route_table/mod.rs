//! Route tables: CreateRouteTable, DescribeRouteTables, DeleteRouteTable, CreateRoute,
//! ReplaceRoute, DeleteRoute, AssociateRouteTable, DisassociateRouteTable,
//! ReplaceRouteTableAssociation, and the main route table every VPC has (with its `local`
//! route).
//!
//! `route` holds the routes (targets, CreateRoute, ReplaceRoute, DeleteRoute, the routes per
//! table quota), `prefix_route` the routes to customer-managed prefix lists, `association`
//! the subnet associations.

mod association;
mod prefix_route;
mod route;

use ipnet::{IpNet, Ipv4Net};

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, fingerprint, page, tags, vpc_endpoint};
use crate::generated::ec2::{
    CreateRouteTableRequest, CreateRouteTableResult, DescribeRouteTablesRequest,
    DescribeRouteTablesResult, ResourceType, Route as RouteOut, RouteOrigin, RouteState,
    RouteTable as RouteTableOut, RouteTableAssociation,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use association::associated;
pub use association::{
    associate_route_table, disassociate_route_table, forget_subnet, replace_route_table_association,
};
pub use prefix_route::{referencing_tables, tables_too_small};
pub use route::{
    add_route_unchecked, create_route, delete_route, delete_route_table, replace_route,
};
use route::{is_active, target_ids};

/// Where a route sends traffic.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Target {
    /// Within the VPC.
    Local,
    /// An internet gateway.
    Gateway(String),
    /// A NAT gateway.
    NatGateway(String),
    /// An instance (its primary interface).
    Instance(String),
    /// A network interface.
    NetworkInterface(String),
    /// An egress-only internet gateway (IPv6 destinations only).
    EgressOnlyGateway(String),
    /// A VPC peering connection of the table's VPC.
    VpcPeering(String),
    /// A carrier gateway of the table's VPC.
    CarrierGateway(String),
}

/// One route.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Route {
    /// The destination range, IPv4 or IPv6.
    #[serde(with = "crate::state::with::text")]
    pub destination: IpNet,
    /// The target.
    pub target: Target,
    /// Whether the table's creation made it (the local route).
    pub from_table: bool,
}

/// One route to a customer-managed prefix list: every entry of the list, through the target.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PrefixRoute {
    /// The list, `pl-...`.
    pub prefix_list_id: String,
    /// The target.
    pub target: Target,
}

/// One association of a table with a subnet, or the main association.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Association {
    /// `rtbassoc-...`.
    pub id: String,
    /// The subnet, unless this is the main association.
    pub subnet_id: Option<String>,
}

crate::region::table! {
    /// Route tables by id.
    RouteTables of RouteTable
}

/// One route table.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RouteTable {
    /// `rtb-...`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Whether it is its VPC's main table.
    pub main: bool,
    /// Its routes to a CIDR block.
    pub routes: Vec<Route>,
    /// Its routes to a customer-managed prefix list.
    #[serde(default)]
    pub prefix_routes: Vec<PrefixRoute>,
    /// Its associations.
    pub associations: Vec<Association>,
    /// The virtual private gateways propagating routes into it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub propagating_vgws: Vec<String>,
}

impl RouteTable {
    /// The id of the main association, for the main table.
    fn main_association(&self) -> Option<&Association> {
        self.associations.iter().find(|a| a.subnet_id.is_none())
    }
}

impl Filterable for (&RouteTable, &Region) {
    const NAMES: &'static [&'static str] = &[
        "association.gateway-id",
        "association.route-table-association-id",
        "association.route-table-id",
        "association.subnet-id",
        "association.main",
        "association.association-state",
        "owner-id",
        "route-table-id",
        "route.destination-cidr-block",
        "route.destination-ipv6-cidr-block",
        "route.destination-prefix-list-id",
        "route.egress-only-internet-gateway-id",
        "route.gateway-id",
        "route.instance-id",
        "route.nat-gateway-id",
        "route.transit-gateway-id",
        "route.origin",
        "route.state",
        "route.vpc-peering-connection-id",
        "vpc-id",
    ];
    // No gateway associations or transit gateways here.
    const NEVER_SET: &'static [&'static str] =
        &["association.gateway-id", "route.transit-gateway-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (t, region) = *self;
        let routes = || t.routes.iter();
        // Every route's target: to a CIDR block, then to a prefix list.
        let targets = || {
            t.routes
                .iter()
                .map(|r| &r.target)
                .chain(t.prefix_routes.iter().map(|r| &r.target))
        };
        // Gateway endpoints' routes: to a prefix list, through the endpoint, made by it.
        let endpoint_routes = || vpc_endpoint::gateway_routes(region, &t.vpc_id, &t.id);
        // Routes propagated from virtual private gateways: (destination, gateway).
        let propagated = || propagated(region, t);
        match name {
            "association.route-table-association-id" => {
                t.associations.iter().map(|a| a.id.clone()).collect()
            }
            "association.route-table-id" => {
                if t.associations.is_empty() {
                    Vec::new()
                } else {
                    one(t.id.clone())
                }
            }
            "association.subnet-id" => t
                .associations
                .iter()
                .filter_map(|a| a.subnet_id.clone())
                .collect(),
            "association.main" => {
                if t.associations.is_empty() {
                    Vec::new()
                } else {
                    flag(t.main)
                }
            }
            "association.association-state" => t
                .associations
                .iter()
                .map(|_| "associated".to_string())
                .collect(),
            "owner-id" => one(region.account_id.clone()),
            "route-table-id" => one(t.id.clone()),
            "route.destination-cidr-block" => routes()
                .filter_map(|r| match &r.destination {
                    IpNet::V4(d) => Some(crate::ec2::vpc::cidr_text(d)),
                    IpNet::V6(_) => None,
                })
                .chain(
                    propagated()
                        .into_iter()
                        .map(|(d, _)| crate::ec2::vpc::cidr_text(&d)),
                )
                .collect(),
            "route.destination-ipv6-cidr-block" => routes()
                .filter_map(|r| match &r.destination {
                    IpNet::V6(d) => Some(d.to_string()),
                    IpNet::V4(_) => None,
                })
                .collect(),
            "route.egress-only-internet-gateway-id" => targets()
                .filter_map(|t| target_ids(t).egress_only)
                .collect(),
            "route.vpc-peering-connection-id" => {
                targets().filter_map(|t| target_ids(t).peering).collect()
            }
            "route.gateway-id" => targets()
                .filter_map(|t| target_ids(t).gateway)
                .chain(endpoint_routes().into_iter().map(|(e, _)| e))
                .chain(propagated().into_iter().map(|(_, g)| g))
                .collect(),
            "route.destination-prefix-list-id" => t
                .prefix_routes
                .iter()
                .map(|r| r.prefix_list_id.clone())
                .chain(endpoint_routes().into_iter().map(|(_, pl)| pl))
                .collect(),
            "route.nat-gateway-id" => targets().filter_map(|t| target_ids(t).nat).collect(),
            "route.instance-id" => targets().filter_map(|t| target_ids(t).instance).collect(),
            "route.origin" => routes()
                .map(|r| {
                    if r.from_table {
                        "CreateRouteTable"
                    } else {
                        "CreateRoute"
                    }
                    .to_string()
                })
                .chain(
                    (0..t.prefix_routes.len() + endpoint_routes().len())
                        .map(|_| "CreateRoute".to_string()),
                )
                .chain(
                    propagated()
                        .into_iter()
                        .map(|_| RouteOrigin::EnableVgwRoutePropagation.as_str().to_string()),
                )
                .collect(),
            "route.state" => targets()
                .map(|target| {
                    if is_active(region, &t.vpc_id, target) {
                        "active"
                    } else {
                        "blackhole"
                    }
                    .to_string()
                })
                .chain(endpoint_routes().iter().map(|_| "active".to_string()))
                .chain(propagated().iter().map(|_| "active".to_string()))
                .collect(),
            "vpc-id" => one(t.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

/// A route's state: `active`, or `blackhole` when its target cannot carry traffic now.
fn state_of(region: &Region, vpc_id: &str, target: &Target) -> RouteState {
    if is_active(region, vpc_id, target) {
        RouteState::Active
    } else {
        RouteState::Blackhole
    }
}

/// A route of a table of `vpc_id` as AWS answers it, but for its destination: its target,
/// origin (the table's own `local` route, `from_table`, or CreateRoute's) and state.
fn wire_route(region: &Region, vpc_id: &str, target: &Target, from_table: bool) -> RouteOut {
    let ids = target_ids(target);
    RouteOut {
        gateway_id: ids.gateway,
        nat_gateway_id: ids.nat,
        instance_owner_id: ids.instance.as_ref().map(|_| region.account_id.clone()),
        instance_id: ids.instance,
        network_interface_id: ids.eni,
        egress_only_internet_gateway_id: ids.egress_only,
        vpc_peering_connection_id: ids.peering,
        carrier_gateway_id: ids.carrier,
        origin: Some(if from_table {
            RouteOrigin::CreateRouteTable
        } else {
            RouteOrigin::CreateRoute
        }),
        state: Some(state_of(region, vpc_id, target)),
        ..Default::default()
    }
}

fn render(region: &Region, t: &RouteTable) -> RouteTableOut {
    RouteTableOut {
        associations: Some(
            t.associations
                .iter()
                .map(|a| RouteTableAssociation {
                    main: Some(a.subnet_id.is_none()),
                    route_table_association_id: Some(a.id.clone()),
                    route_table_id: Some(t.id.clone()),
                    subnet_id: a.subnet_id.clone(),
                    association_state: Some(associated()),
                    ..Default::default()
                })
                .collect(),
        ),
        propagating_vgws: Some(
            t.propagating_vgws
                .iter()
                .map(|g| crate::generated::ec2::PropagatingVgw {
                    gateway_id: Some(g.clone()),
                })
                .collect(),
        ),
        route_table_id: Some(t.id.clone()),
        routes: Some(
            t.routes
                .iter()
                .map(|r| {
                    let (v4, v6) = match &r.destination {
                        IpNet::V4(d) => (Some(crate::ec2::vpc::cidr_text(d)), None),
                        IpNet::V6(d) => (None, Some(d.to_string())),
                    };
                    RouteOut {
                        destination_cidr_block: v4,
                        destination_ipv6_cidr_block: v6,
                        ..wire_route(region, &t.vpc_id, &r.target, r.from_table)
                    }
                })
                .chain(t.prefix_routes.iter().map(|r| RouteOut {
                    destination_prefix_list_id: Some(r.prefix_list_id.clone()),
                    ..wire_route(region, &t.vpc_id, &r.target, false)
                }))
                .chain(
                    vpc_endpoint::gateway_routes(region, &t.vpc_id, &t.id)
                        .into_iter()
                        .map(|(endpoint, prefix_list)| RouteOut {
                            destination_prefix_list_id: Some(prefix_list),
                            gateway_id: Some(endpoint),
                            origin: Some(RouteOrigin::CreateRoute),
                            state: Some(RouteState::Active),
                            ..Default::default()
                        }),
                )
                .chain(
                    propagated(region, t)
                        .into_iter()
                        .map(|(destination, gateway)| RouteOut {
                            destination_cidr_block: Some(crate::ec2::vpc::cidr_text(&destination)),
                            gateway_id: Some(gateway),
                            origin: Some(RouteOrigin::EnableVgwRoutePropagation),
                            state: Some(RouteState::Active),
                            ..Default::default()
                        }),
                )
                .collect(),
        ),
        tags: region.tags.listed(&t.id),
        vpc_id: Some(t.vpc_id.clone()),
        owner_id: Some(region.account_id.clone()),
    }
}

/// A table of `vpc_id` with a `local` route for each of the VPC's ranges `cidrs`.
/// The routes table `t` has from the virtual private gateways propagating into it (the
/// static routes of their VPN connections), as (destination, gateway); a destination the
/// table routes itself is left to its own route.
fn propagated(region: &Region, t: &RouteTable) -> Vec<(Ipv4Net, String)> {
    t.propagating_vgws
        .iter()
        .flat_map(|g| {
            crate::ec2::vpn_connection::propagated_routes(region, g)
                .into_iter()
                .map(move |d| (d, g.clone()))
        })
        .filter(|(d, _)| !t.routes.iter().any(|r| r.destination == IpNet::V4(*d)))
        .collect()
}

/// Turns route propagation from virtual private gateway `vgw` into table `table_id` on or off.
pub fn propagate(region: &mut Region, table_id: &str, vgw: &str, on: bool) {
    if let Some(t) = region.route_tables.0.get_mut(table_id) {
        t.propagating_vgws.retain(|g| g != vgw);
        if on {
            t.propagating_vgws.push(vgw.to_string());
        }
    }
}

/// Ends the propagation from `vgw` into every table of `vpc_id` (the gateway left the VPC).
pub fn stop_propagation(region: &mut Region, vpc_id: &str, vgw: &str) {
    let tables: Vec<String> = region
        .by_vpc
        .of_kind(vpc_id, "rtb")
        .map(String::from)
        .collect();
    for t in tables {
        propagate(region, &t, vgw, false);
    }
}

fn new_table(region: &mut Region, vpc_id: &str, cidrs: &[IpNet], main: bool) -> RouteTable {
    let id = region.ids.resource("rtb");
    let mut associations = Vec::new();
    if main {
        associations.push(Association {
            id: region.ids.resource("rtbassoc"),
            subnet_id: None,
        });
    }
    RouteTable {
        id,
        vpc_id: vpc_id.to_string(),
        main,
        routes: cidrs.iter().map(|&c| local_route(c)).collect(),
        prefix_routes: Vec::new(),
        propagating_vgws: Vec::new(),
        associations,
    }
}

/// The `local` route of a VPC range: the table's own, made with it (or with the range).
fn local_route(cidr: IpNet) -> Route {
    Route {
        destination: cidr,
        target: Target::Local,
        from_table: true,
    }
}

/// Adds the `local` route of `cidr`, a range just associated with `vpc_id`, to every table of
/// the VPC, as AWS does.
pub fn add_local_routes(region: &mut Region, vpc_id: &str, cidr: IpNet) {
    for_each_table(region, vpc_id, |t| t.routes.push(local_route(cidr)));
}

/// Removes the `local` route of `cidr`, a range disassociated from `vpc_id`, from every table
/// of the VPC.
pub fn remove_local_routes(region: &mut Region, vpc_id: &str, cidr: IpNet) {
    for_each_table(region, vpc_id, |t| {
        t.routes
            .retain(|r| !(r.target == Target::Local && r.destination == cidr));
    });
}

/// Changes every table of the VPC `vpc_id` with `change`.
fn for_each_table(region: &mut Region, vpc_id: &str, mut change: impl FnMut(&mut RouteTable)) {
    let ids: Vec<String> = region.by_vpc.of_kind(vpc_id, "rtb").cloned().collect();
    for id in ids {
        if let Some(t) = region.route_tables.0.get_mut(&id) {
            change(t);
        }
    }
}

/// The first route of a table of `vpc_id`, other than a `local` one, whose destination lies
/// within `cidr` (or is `cidr`): a range that would swallow it cannot be associated.
pub fn route_within(region: &Region, vpc_id: &str, cidr: &Ipv4Net) -> Option<(String, Ipv4Net)> {
    region
        .by_vpc
        .of_kind(vpc_id, "rtb")
        .filter_map(|id| region.route_tables.get(id))
        .find_map(|t| {
            t.routes
                .iter()
                .find_map(|r| match r.destination {
                    IpNet::V4(d) if r.target != Target::Local && cidr.contains(&d) => Some(d),
                    _ => None,
                })
                .map(|d| (t.id.clone(), d))
        })
}

fn insert(region: &mut Region, table: RouteTable) {
    region.by_vpc.insert(&table.vpc_id, &table.id);
    region.route_tables.0.insert(table.id.clone(), table);
}

/// Creates a VPC's main route table; returns its id.
pub fn create_main(region: &mut Region, vpc_id: &str, cidr: Ipv4Net) -> String {
    let table = new_table(region, vpc_id, &[IpNet::V4(cidr)], true);
    let id = table.id.clone();
    insert(region, table);
    id
}

/// Deletes the main route table of a VPC being deleted.
pub fn delete_main(region: &mut Region, vpc_id: &str) {
    let ids: Vec<String> = region.by_vpc.of_kind(vpc_id, "rtb").cloned().collect();
    for id in ids {
        if region.route_tables.get(&id).is_some_and(|t| t.main) {
            region.route_tables.0.remove(&id);
            region.by_vpc.remove(vpc_id, &id);
            region.tags.remove_resource(&id);
        }
    }
}

/// `CreateRouteTable`.
pub fn create_route_table(
    region: &mut Region,
    mut input: CreateRouteTableRequest,
) -> Result<CreateRouteTableResult, ApiError> {
    // The token is taken out first: the fingerprint is of every other parameter.
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateRouteTable", token.as_deref(), &print)?
        && let Some(t) = region.route_tables.get(&id)
    {
        return Ok(CreateRouteTableResult {
            route_table: Some(render(region, t)),
            client_token: token,
        });
    }
    let vpc = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let cidrs: Vec<IpNet> = vpc
        .cidrs()
        .map(IpNet::V4)
        .chain(vpc.ipv6.iter().map(|b| IpNet::V6(b.cidr)))
        .collect();
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::RouteTable,
    )?;
    if region.by_vpc.of_kind(&input.vpc_id, "rtb").count() >= region.limits.route_tables_per_vpc {
        return Err(ApiError::new(
            Code::RouteTableLimitExceeded,
            "The maximum number of route tables has been reached.",
        ));
    }
    let table = new_table(region, &input.vpc_id, &cidrs, false);
    region.tags.insert(&table.id, tags);
    region
        .ledger
        .record("CreateRouteTable", token.as_deref(), &print, &table.id);
    let out = render(region, &table);
    insert(region, table);
    Ok(CreateRouteTableResult {
        route_table: Some(out),
        client_token: token,
    })
}

/// `DescribeRouteTables`.
pub fn describe_route_tables(
    region: &mut Region,
    input: DescribeRouteTablesRequest,
) -> Result<DescribeRouteTablesResult, ApiError> {
    let filters = Filters::parse::<(&RouteTable, &Region)>(input.filters)?;
    let region = &*region;
    let found = Kind::RouteTable.describe(
        &region.consistency,
        &region.route_tables,
        input.route_table_ids.as_deref(),
        region.candidates(Kind::RouteTable, &filters),
        |t| filters.matches(&(t, region), region.tags.get(&t.id)),
    )?;
    let (items, next) = page::page(
        found,
        |t| t.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeRouteTablesResult {
        route_tables: Some(items.into_iter().map(|t| render(region, t)).collect()),
        next_token: next,
    })
}
