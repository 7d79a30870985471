//! CreateVpcEndpoint and ModifyVpcEndpoint: what an endpoint may hold, checked as AWS checks
//! it before anything changes.

use crate::ec2::error::Code;
use crate::ec2::network_interface::{self, NewInterface};
use crate::ec2::{Kind, fingerprint, security_group, tags, unique};
use crate::generated::ec2::{
    CreateVpcEndpointRequest, CreateVpcEndpointResult, IpAddressType, ModifyVpcEndpointRequest,
    ModifyVpcEndpointResult, NetworkInterfaceType, ResourceType, State, VpcEndpointType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::service::Service;
use super::{DEFAULT_POLICY, VpcEndpoint, render, unknown_service};

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(Code::InvalidParameter, message)
}

/// A policy document as given: JSON, or `InvalidPolicyDocument` naming where it breaks.
fn policy(document: &str) -> Result<String, ApiError> {
    match serde_json::from_str::<serde_json::Value>(document) {
        Ok(serde_json::Value::Object(_)) => Ok(document.to_string()),
        Ok(_) => Err(ApiError::new(
            Code::InvalidPolicyDocument,
            "The Policy Document is not valid. A policy document is a JSON object.",
        )),
        Err(e) => Err(ApiError::new(
            Code::InvalidPolicyDocument,
            format!(
                "The Policy Document is not valid. Syntax error at position ({},{})",
                e.line(),
                e.column()
            ),
        )),
    }
}

/// The parameters that belong to the other type of endpoint, refused as AWS refuses them.
fn check_type_members(
    kind: VpcEndpointType,
    route_tables: bool,
    subnets: bool,
    groups: bool,
    private_dns: bool,
) -> Result<(), ApiError> {
    match kind {
        VpcEndpointType::Gateway => {
            if subnets {
                return Err(invalid(
                    "Subnet IDs are only supported for Interface and GatewayLoadBalancer type VPC Endpoints.",
                ));
            }
            if groups {
                return Err(invalid(
                    "Security group IDs are only supported for Interface type VPC Endpoints.",
                ));
            }
            if private_dns {
                return Err(invalid(
                    "Private DNS can only be enabled for Interface type VPC Endpoints.",
                ));
            }
        }
        _ => {
            if route_tables {
                return Err(invalid(
                    "Route table IDs are only supported for Gateway type VPC Endpoints.",
                ));
            }
        }
    }
    Ok(())
}

/// Checks route tables for a gateway endpoint `id` (None while creating) to `service` in
/// `vpc_id`: each exists, lies in the VPC, and holds no other endpoint's route to the service.
fn check_route_tables(
    region: &Region,
    vpc_id: &str,
    service: Service,
    id: Option<&str>,
    tables: &[String],
) -> Result<(), ApiError> {
    let prefix_list = service.prefix_list_id(&region.name);
    for table in tables {
        let t = Kind::RouteTable.get(&region.route_tables, table)?;
        if t.vpc_id != vpc_id {
            return Err(invalid(format!(
                "The route table {table} does not belong to the VPC {vpc_id}."
            )));
        }
        let taken = super::gateway_routes(region, vpc_id, table)
            .into_iter()
            .any(|(other, pl)| pl == prefix_list && Some(other.as_str()) != id);
        if taken {
            return Err(ApiError::new(
                Code::RouteAlreadyExists,
                format!(
                    "route table {table} already has a route with destination-prefix-list-id {prefix_list}"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks an interface endpoint's subnets: each exists and lies in `vpc_id`, and no two
/// (with those it keeps, `kept`) are in one zone.
fn check_subnets(
    region: &Region,
    vpc_id: &str,
    kept: &[String],
    added: &[String],
) -> Result<(), ApiError> {
    let mut zones: Vec<String> = kept
        .iter()
        .filter_map(|s| region.subnets.get(s))
        .map(|s| s.zone.clone())
        .collect();
    for subnet in added {
        let s = Kind::Subnet.get(&region.subnets, subnet)?;
        if s.vpc_id != vpc_id {
            return Err(invalid(format!(
                "The subnet {subnet} does not belong to the VPC {vpc_id}."
            )));
        }
        if zones.contains(&s.zone) {
            return Err(ApiError::new(
                Code::DuplicateSubnetsInSameZone,
                format!(
                    "Found another VPC endpoint subnet in the availability zone of {subnet}. VPC endpoint subnets should be in different availability zones supported by the VPC endpoint service."
                ),
            ));
        }
        zones.push(s.zone.clone());
    }
    Ok(())
}

/// Checks security groups for an interface endpoint in `vpc_id`.
fn check_groups(region: &Region, vpc_id: &str, groups: &[String]) -> Result<(), ApiError> {
    security_group::checked_in_vpc(region, vpc_id, groups).map(|_| ())
}

/// Checks that interface endpoint `id` (None while creating) to `service` may answer the
/// service's public name in `vpc_id`: the VPC resolves and names hosts, and no other endpoint
/// there answers that name.
fn check_private_dns(
    region: &Region,
    vpc_id: &str,
    service: Service,
    id: Option<&str>,
) -> Result<(), ApiError> {
    let vpc = Kind::Vpc.get(&region.vpcs, vpc_id)?;
    if !(vpc.dns_support && vpc.dns_hostnames) {
        return Err(invalid(format!(
            "Enabling private DNS requires both enableDnsSupport and enableDnsHostnames VPC attributes set to true for {vpc_id}"
        )));
    }
    let conflict = super::endpoints_of(region, vpc_id).any(|e| {
        e.stands() && e.private_dns && e.service == service.short && Some(e.id.as_str()) != id
    });
    if conflict {
        return Err(invalid(format!(
            "private-dns-enabled cannot be set because there is already a conflicting DNS domain for {} in the VPC {vpc_id}",
            service.private_dns_name(&region.name)
        )));
    }
    Ok(())
}

/// The part of a new interface endpoint's DNS names after its id: 8 letters and digits.
fn dns_stem(region: &mut Region) -> String {
    crate::ids::spell(
        region.ids.next_u64(),
        b"abcdefghijklmnopqrstuvwxyz0123456789",
        8,
    )
}

/// Makes an interface in each of `subnets` for endpoint `id`; on a failure, the ones made
/// are deleted again and the error answered.
fn make_interfaces(
    region: &mut Region,
    id: &str,
    subnets: &[String],
    groups: &[String],
) -> Result<Vec<(String, String)>, ApiError> {
    let mut made = Vec::new();
    for subnet in subnets {
        let eni = network_interface::create(
            region,
            NewInterface {
                subnet_id: subnet,
                groups: groups.to_vec(),
                interface_type: NetworkInterfaceType::VpcEndpoint,
                requester_managed: true,
                description: format!("VPC Endpoint Interface {id}"),
                private_ip: None,
            },
        );
        match eni {
            Ok(eni) => made.push((subnet.clone(), eni)),
            Err(e) => {
                for (_, eni) in made {
                    network_interface::delete(region, &eni);
                }
                return Err(e);
            }
        }
    }
    Ok(made)
}

/// `VpcEndpointLimitExceeded` when one more endpoint of `kind` in `vpc_id` would pass its
/// quota: gateway endpoints count per region, interface endpoints per VPC.
fn check_quota(region: &Region, kind: VpcEndpointType, vpc_id: &str) -> Result<(), ApiError> {
    let (count, limit) = if kind == VpcEndpointType::Gateway {
        let count = region
            .vpc_endpoints
            .values()
            .filter(|e| e.kind == kind && e.stands())
            .count();
        (count, region.limits.gateway_endpoints)
    } else {
        let count = super::endpoints_of(region, vpc_id)
            .filter(|e| e.kind == kind && e.stands())
            .count();
        (count, region.limits.interface_endpoints_per_vpc)
    };
    if count >= limit {
        return Err(ApiError::new(
            Code::VpcEndpointLimitExceeded,
            "The maximum number of VPC endpoints has been reached.",
        ));
    }
    Ok(())
}

/// `CreateVpcEndpoint`: a gateway endpoint (the default type) or an interface endpoint to one
/// of the region's services; a ClientToken makes retries answer the same endpoint.
pub fn create_vpc_endpoint(
    region: &mut Region,
    mut input: CreateVpcEndpointRequest,
) -> Result<CreateVpcEndpointResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateVpcEndpoint", token.as_deref(), &print)?
        && let Some(e) = region.vpc_endpoints.get(&id)
    {
        return Ok(CreateVpcEndpointResult {
            vpc_endpoint: Some(render(region, e)),
            client_token: token,
        });
    }
    let vpc_id = input.vpc_id.clone();
    Kind::Vpc.get(&region.vpcs, &vpc_id)?;
    let kind = input.vpc_endpoint_type.unwrap_or(VpcEndpointType::Gateway);
    let name = input
        .service_name
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("ServiceName"))?;
    let service = Service::named(&region.name, name).ok_or_else(|| unknown_service(name))?;
    if !service.takes(kind) {
        return Err(invalid(format!(
            "The Vpc Endpoint Service '{name}' does not support the endpoint type {}.",
            kind.as_str()
        )));
    }
    if let Some(t) = input.ip_address_type
        && t != IpAddressType::Ipv4
    {
        return Err(invalid(format!(
            "The VPC {vpc_id} has no IPv6 ranges: the IP address type {} cannot be used.",
            t.as_str()
        )));
    }
    let route_tables = unique(input.route_table_ids.take());
    let subnets = unique(input.subnet_ids.take());
    let mut groups = unique(input.security_group_ids.take());
    let interface = kind == VpcEndpointType::Interface;
    check_type_members(
        kind,
        !route_tables.is_empty(),
        !subnets.is_empty(),
        !groups.is_empty(),
        input.private_dns_enabled == Some(true),
    )?;
    // An interface endpoint to an AWS service answers its public name unless told not to
    // (the API's default is true), and then its VPC must resolve and name hosts.
    let private_dns = interface && input.private_dns_enabled.unwrap_or(true);
    let policy = match input.policy_document.as_deref() {
        Some(doc) => policy(doc)?,
        None => DEFAULT_POLICY.to_string(),
    };
    check_route_tables(region, &vpc_id, service, None, &route_tables)?;
    check_subnets(region, &vpc_id, &[], &subnets)?;
    if interface && groups.is_empty() {
        groups.extend(security_group::default_of(region, &vpc_id));
    }
    check_groups(region, &vpc_id, &groups)?;
    if private_dns {
        check_private_dns(region, &vpc_id, service, None)?;
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::VpcEndpoint,
    )?;
    check_quota(region, kind, &vpc_id)?;
    let id = region.ids.resource("vpce");
    let stem = dns_stem(region);
    let held = make_interfaces(region, &id, &subnets, &groups)?;
    let endpoint = VpcEndpoint {
        id: id.clone(),
        vpc_id: vpc_id.clone(),
        kind,
        service: service.short.to_string(),
        state: if interface {
            State::Pending
        } else {
            State::Available
        },
        policy,
        route_table_ids: route_tables,
        subnets: held,
        groups: if interface { groups } else { Vec::new() },
        private_dns,
        dns_stem: stem,
        failure: None,
        created: region.clock.now_datetime(),
    };
    region.tags.insert(&id, tags);
    region
        .ledger
        .record("CreateVpcEndpoint", token.as_deref(), &print, &id);
    let out = render(region, &endpoint);
    region.by_vpc.insert(&vpc_id, &id);
    region.vpc_endpoints.0.insert(id.clone(), endpoint);
    if interface {
        let now = region.clock.now();
        region.transitions.schedule(now, Subject::VpcEndpoint, &id);
    }
    Ok(CreateVpcEndpointResult {
        vpc_endpoint: Some(out),
        client_token: token,
    })
}

/// `ModifyVpcEndpoint`: route tables of a gateway endpoint; subnets, security groups and
/// private DNS of an interface endpoint; the policy of either. Every change is checked before
/// any is made.
pub fn modify_vpc_endpoint(
    region: &mut Region,
    input: ModifyVpcEndpointRequest,
) -> Result<ModifyVpcEndpointResult, ApiError> {
    let id = input.vpc_endpoint_id.clone();
    let e = Kind::VpcEndpoint.get(&region.vpc_endpoints, &id)?;
    if !e.stands() {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "The VPC endpoint {id} is {} and cannot be modified.",
                e.state.as_str()
            ),
        ));
    }
    let (vpc_id, kind) = (e.vpc_id.clone(), e.kind);
    let service = e.service().ok_or_else(|| unknown_service(&e.service))?;
    let add_tables = unique(input.add_route_table_ids);
    let remove_tables = unique(input.remove_route_table_ids);
    let add_subnets = unique(input.add_subnet_ids);
    let remove_subnets = unique(input.remove_subnet_ids);
    let add_groups = unique(input.add_security_group_ids);
    let remove_groups = unique(input.remove_security_group_ids);
    check_type_members(
        kind,
        !(add_tables.is_empty() && remove_tables.is_empty()),
        !(add_subnets.is_empty() && remove_subnets.is_empty()),
        !(add_groups.is_empty() && remove_groups.is_empty()),
        input.private_dns_enabled.is_some(),
    )?;
    let policy = match (input.policy_document.as_deref(), input.reset_policy) {
        (Some(_), Some(true)) => {
            return Err(ApiError::invalid_combination(
                "PolicyDocument and ResetPolicy cannot be given together.",
            ));
        }
        (Some(doc), _) => Some(policy(doc)?),
        (None, Some(true)) => Some(DEFAULT_POLICY.to_string()),
        (None, _) => None,
    };
    // A table deleted since is unknown here, as on AWS (a deleted table already left its
    // endpoints).
    for table in &remove_tables {
        Kind::RouteTable.get(&region.route_tables, table)?;
    }
    check_route_tables(region, &vpc_id, service, Some(&id), &add_tables)?;
    for subnet in &remove_subnets {
        if !e.subnets.iter().any(|(s, _)| s == subnet) {
            return Err(invalid(format!(
                "The subnet {subnet} is not one of the VPC endpoint {id}'s subnets."
            )));
        }
    }
    let kept: Vec<String> = e
        .subnets
        .iter()
        .map(|(s, _)| s.clone())
        .filter(|s| !remove_subnets.contains(s))
        .collect();
    check_subnets(region, &vpc_id, &kept, &add_subnets)?;
    check_groups(region, &vpc_id, &add_groups)?;
    let mut groups: Vec<String> = e
        .groups
        .iter()
        .filter(|g| !remove_groups.contains(g))
        .cloned()
        .collect();
    for g in add_groups {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    if kind == VpcEndpointType::Interface && groups.is_empty() {
        return Err(invalid(
            "An interface VPC endpoint must have at least one security group.",
        ));
    }
    if input.private_dns_enabled == Some(true) {
        check_private_dns(region, &vpc_id, service, Some(&id))?;
    }
    // Everything checked: the new interfaces are made first, since making one can still
    // fail (a subnet without a free address), and then nothing else has changed.
    let made = make_interfaces(region, &id, &add_subnets, &groups)?;
    let mut dropped = Vec::new();
    if let Some(e) = region.vpc_endpoints.0.get_mut(&id) {
        e.route_table_ids.retain(|t| !remove_tables.contains(t));
        for t in add_tables {
            if !e.route_table_ids.contains(&t) {
                e.route_table_ids.push(t);
            }
        }
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut e.subnets)
            .into_iter()
            .partition(|(s, _)| remove_subnets.contains(s));
        e.subnets = kept;
        e.subnets.extend(made);
        dropped = gone;
        if kind == VpcEndpointType::Interface {
            e.groups = groups.clone();
        }
        if let Some(p) = policy {
            e.policy = p;
        }
        if let Some(dns) = input.private_dns_enabled {
            e.private_dns = dns;
        }
    }
    for (_, eni) in dropped {
        network_interface::delete(region, &eni);
    }
    if kind == VpcEndpointType::Interface {
        let interfaces: Vec<String> = region
            .vpc_endpoints
            .get(&id)
            .map(|e| e.subnets.iter().map(|(_, eni)| eni.clone()).collect())
            .unwrap_or_default();
        for eni in interfaces {
            network_interface::set_groups(region, &eni, groups.clone());
        }
    }
    Ok(ModifyVpcEndpointResult {
        r#return: Some(true),
    })
}
