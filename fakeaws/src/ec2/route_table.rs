//! Route tables: CreateRouteTable, DescribeRouteTables, DeleteRouteTable, CreateRoute,
//! ReplaceRoute, DeleteRoute, AssociateRouteTable, DisassociateRouteTable, and the main route
//! table every VPC has (with its `local` route).

use ipnet::Ipv4Net;

use crate::ec2::error::{self, Code};
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::vpc::parse_cidr;
use crate::ec2::{Kind, fingerprint, nat_gateway, page, tags};
use crate::generated::ec2::{
    AssociateRouteTableRequest, AssociateRouteTableResult, CreateRouteRequest, CreateRouteResult,
    CreateRouteTableRequest, CreateRouteTableResult, DeleteRouteRequest, DeleteRouteTableRequest,
    DescribeRouteTablesRequest, DescribeRouteTablesResult, DisassociateRouteTableRequest,
    NatGatewayState, ReplaceRouteRequest, ResourceType, Route as RouteOut, RouteOrigin, RouteState,
    RouteTable as RouteTableOut, RouteTableAssociation, RouteTableAssociationState,
    RouteTableAssociationStateCode,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// Where a route sends traffic.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// One route.
#[derive(Debug, Clone)]
pub struct Route {
    /// The destination range.
    pub destination: Ipv4Net,
    /// The target.
    pub target: Target,
    /// Whether the table's creation made it (the local route).
    pub from_table: bool,
}

/// One association of a table with a subnet, or the main association.
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
pub struct RouteTable {
    /// `rtb-...`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Whether it is its VPC's main table.
    pub main: bool,
    /// Its routes.
    pub routes: Vec<Route>,
    /// Its associations.
    pub associations: Vec<Association>,
}

impl RouteTable {
    /// The id of the main association, for the main table.
    fn main_association(&self) -> Option<&Association> {
        self.associations.iter().find(|a| a.subnet_id.is_none())
    }
}

fn target_ids(
    t: &Target,
) -> (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
) {
    match t {
        Target::Local => (Some("local".into()), None, None, None),
        Target::Gateway(g) => (Some(g.clone()), None, None, None),
        Target::NatGateway(n) => (None, Some(n.clone()), None, None),
        Target::Instance(i) => (None, None, Some(i.clone()), None),
        Target::NetworkInterface(e) => (None, None, None, Some(e.clone())),
    }
}

/// Whether a route's target can carry traffic now (else AWS shows it as `blackhole`).
fn is_active(region: &Region, vpc_id: &str, t: &Target) -> bool {
    match t {
        Target::Local => true,
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

    fn values(&self, name: &str) -> Vec<String> {
        let (t, region) = *self;
        let routes = || t.routes.iter();
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
            "route.destination-cidr-block" => routes().map(|r| r.destination.to_string()).collect(),
            "route.gateway-id" => routes().filter_map(|r| target_ids(&r.target).0).collect(),
            "route.nat-gateway-id" => routes().filter_map(|r| target_ids(&r.target).1).collect(),
            "route.instance-id" => routes().filter_map(|r| target_ids(&r.target).2).collect(),
            "route.origin" => routes()
                .map(|r| {
                    if r.from_table {
                        "CreateRouteTable"
                    } else {
                        "CreateRoute"
                    }
                    .to_string()
                })
                .collect(),
            "route.state" => routes()
                .map(|r| {
                    if is_active(region, &t.vpc_id, &r.target) {
                        "active"
                    } else {
                        "blackhole"
                    }
                    .to_string()
                })
                .collect(),
            "vpc-id" => one(t.vpc_id.clone()),
            _ => Vec::new(),
        }
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
        propagating_vgws: Some(Vec::new()),
        route_table_id: Some(t.id.clone()),
        routes: Some(
            t.routes
                .iter()
                .map(|r| {
                    let (gateway_id, nat_gateway_id, instance_id, network_interface_id) =
                        target_ids(&r.target);
                    RouteOut {
                        destination_cidr_block: Some(r.destination.to_string()),
                        gateway_id,
                        nat_gateway_id,
                        instance_owner_id: instance_id.as_ref().map(|_| region.account_id.clone()),
                        instance_id,
                        network_interface_id,
                        origin: Some(if r.from_table {
                            RouteOrigin::CreateRouteTable
                        } else {
                            RouteOrigin::CreateRoute
                        }),
                        state: Some(if is_active(region, &t.vpc_id, &r.target) {
                            RouteState::Active
                        } else {
                            RouteState::Blackhole
                        }),
                        ..Default::default()
                    }
                })
                .collect(),
        ),
        tags: region.tags.tag_set(&t.id),
        vpc_id: Some(t.vpc_id.clone()),
        owner_id: Some(region.account_id.clone()),
    }
}

fn associated() -> RouteTableAssociationState {
    RouteTableAssociationState {
        state: Some(RouteTableAssociationStateCode::Associated),
        status_message: None,
    }
}

fn new_table(region: &mut Region, vpc_id: &str, cidr: Ipv4Net, main: bool) -> RouteTable {
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
        routes: vec![Route {
            destination: cidr,
            target: Target::Local,
            from_table: true,
        }],
        associations,
    }
}

fn insert(region: &mut Region, table: RouteTable) {
    region.by_vpc.insert(&table.vpc_id, &table.id);
    region.route_tables.0.insert(table.id.clone(), table);
}

/// Creates a VPC's main route table; returns its id.
pub fn create_main(region: &mut Region, vpc_id: &str, cidr: Ipv4Net) -> String {
    let table = new_table(region, vpc_id, cidr, true);
    let id = table.id.clone();
    insert(region, table);
    id
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
            destination,
            target,
            from_table: false,
        });
    }
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

/// Removes a deleted subnet's association, as AWS does implicitly.
pub fn forget_subnet(region: &mut Region, subnet_id: &str) {
    for t in region.route_tables.0.values_mut() {
        t.associations
            .retain(|a| a.subnet_id.as_deref() != Some(subnet_id));
    }
}

/// `CreateRouteTable`.
pub fn create_route_table(
    region: &mut Region,
    input: CreateRouteTableRequest,
) -> Result<CreateRouteTableResult, ApiError> {
    let print = fingerprint(&CreateRouteTableRequest {
        client_token: None,
        ..input.clone()
    });
    let token = input.client_token.clone();
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
    let cidr = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?.cidr;
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
    let table = new_table(region, &input.vpc_id, cidr, false);
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
        &region.route_tables,
        input.route_table_ids.as_deref(),
        region.candidates(&filters),
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
    region.route_tables.0.remove(&input.route_table_id);
    region.by_vpc.remove(&vpc_id, &input.route_table_id);
    region.tags.remove_resource(&input.route_table_id);
    Ok(())
}

/// Resolves and checks the one target of a CreateRoute/ReplaceRoute.
fn resolve_target(
    region: &Region,
    vpc_id: &str,
    table_id: &str,
    gateway: Option<&str>,
    nat: Option<&str>,
    instance: Option<&str>,
    eni: Option<&str>,
) -> Result<Target, ApiError> {
    let given = [gateway, nat, instance, eni].iter().flatten().count();
    if given == 0 {
        return Err(ApiError::missing_parameter(
            "GatewayId, NatGatewayId, InstanceId or NetworkInterfaceId",
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
        let gw = Kind::InternetGateway.get(&region.internet_gateways, g)?;
        if gw.vpc_id.as_deref() != Some(vpc_id) {
            return Err(other_network(g));
        }
        return Ok(Target::Gateway(g.to_string()));
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

fn destination(raw: Option<&str>) -> Result<Ipv4Net, ApiError> {
    let raw = raw.ok_or_else(|| ApiError::missing_parameter("DestinationCidrBlock"))?;
    parse_cidr(raw, "destinationCidrBlock")
}

/// `CreateRoute`.
pub fn create_route(
    region: &mut Region,
    input: CreateRouteRequest,
) -> Result<CreateRouteResult, ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let dest = destination(input.destination_cidr_block.as_deref())?;
    if t.routes.iter().any(|r| r.destination == dest) {
        return Err(ApiError::new(
            Code::RouteAlreadyExists,
            format!("The route identified by {dest} already exists."),
        ));
    }
    let vpc_cidr = region.vpcs.get(&t.vpc_id).map(|v| v.cidr);
    if vpc_cidr.is_some_and(|c| c.contains(&dest)) {
        return Err(ApiError::invalid_parameter(
            "destinationCidrBlock",
            &dest.to_string(),
            "The destination CIDR block is equal to or more specific than one of this VPC's CIDR blocks. This route can target only an interface or an instance.",
        ));
    }
    let target = resolve_target(
        region,
        &t.vpc_id,
        &t.id,
        input.gateway_id.as_deref(),
        input.nat_gateway_id.as_deref(),
        input.instance_id.as_deref(),
        input.network_interface_id.as_deref(),
    )?;
    if target == Target::Local {
        return Err(ApiError::invalid_value(
            "The local route cannot be created.",
        ));
    }
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

fn route_not_found(dest: &Ipv4Net, table: &str) -> ApiError {
    ApiError::new(
        Code::InvalidRouteNotFound,
        format!("no route with destination-cidr-block {dest} in route table {table}"),
    )
}

/// `ReplaceRoute`.
pub fn replace_route(region: &mut Region, input: ReplaceRouteRequest) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let dest = destination(input.destination_cidr_block.as_deref())?;
    let index = t
        .routes
        .iter()
        .position(|r| r.destination == dest)
        .ok_or_else(|| route_not_found(&dest, &t.id))?;
    let target = if input.local_target == Some(true) {
        Target::Local
    } else {
        resolve_target(
            region,
            &t.vpc_id,
            &t.id,
            input.gateway_id.as_deref(),
            input.nat_gateway_id.as_deref(),
            input.instance_id.as_deref(),
            input.network_interface_id.as_deref(),
        )?
    };
    if t.routes[index].target == Target::Local && target != Target::Local {
        return Err(ApiError::invalid_value(format!(
            "The local route {dest} of route table {} can only target the VPC.",
            t.id
        )));
    }
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.routes[index].target = target;
    }
    Ok(())
}

/// `DeleteRoute`: not the local route.
pub fn delete_route(region: &mut Region, input: DeleteRouteRequest) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let dest = destination(input.destination_cidr_block.as_deref())?;
    let index = t
        .routes
        .iter()
        .position(|r| r.destination == dest)
        .ok_or_else(|| route_not_found(&dest, &t.id))?;
    if t.routes[index].target == Target::Local {
        return Err(ApiError::invalid_value(format!(
            "cannot remove local route {dest} in route table {}",
            t.id
        )));
    }
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.routes.remove(index);
    }
    Ok(())
}

/// `AssociateRouteTable` with a subnet.
pub fn associate_route_table(
    region: &mut Region,
    input: AssociateRouteTableRequest,
) -> Result<AssociateRouteTableResult, ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let subnet_id = input
        .subnet_id
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("SubnetId"))?;
    let s = Kind::Subnet.get(&region.subnets, subnet_id)?;
    if s.vpc_id != t.vpc_id {
        return Err(ApiError::invalid_value(format!(
            "Route table {} and subnet {subnet_id} belong to different networks.",
            t.id
        )));
    }
    if let Some(other) = region.route_tables.values().find(|o| {
        o.associations
            .iter()
            .any(|a| a.subnet_id.as_deref() == Some(subnet_id))
    }) {
        return Err(ApiError::new(
            Code::ResourceAlreadyAssociated,
            format!(
                "the specified association for route table {} conflicts with an existing association ({})",
                t.id, other.id
            ),
        ));
    }
    let id = region.ids.resource("rtbassoc");
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.associations.push(Association {
            id: id.clone(),
            subnet_id: Some(subnet_id.to_string()),
        });
    }
    Ok(AssociateRouteTableResult {
        association_id: Some(id),
        association_state: Some(associated()),
    })
}

/// `DisassociateRouteTable`: not the main association.
pub fn disassociate_route_table(
    region: &mut Region,
    input: DisassociateRouteTableRequest,
) -> Result<(), ApiError> {
    let id = input.association_id;
    let Some(table) = region
        .route_tables
        .0
        .values_mut()
        .find(|t| t.associations.iter().any(|a| a.id == id))
    else {
        return Err(error::association_not_found(&id));
    };
    if table.main_association().is_some_and(|a| a.id == id) {
        return Err(ApiError::invalid_value(format!(
            "cannot disassociate the main route table association {id}"
        )));
    }
    table.associations.retain(|a| a.id != id);
    Ok(())
}
