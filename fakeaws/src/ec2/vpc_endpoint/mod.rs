//! VPC endpoints to AWS services: CreateVpcEndpoint, DescribeVpcEndpoints, ModifyVpcEndpoint,
//! DeleteVpcEndpoints, and DescribeVpcEndpointServices (`service`).
//!
//! A gateway endpoint (S3, DynamoDB) is `available` at once and puts a route to its service's
//! prefix list, targeting the endpoint, in each of its route tables: those routes are the
//! endpoint's, and DescribeRouteTables shows them from here ([`gateway_routes`]). An
//! interface endpoint holds a requester-managed interface in each of its subnets (one per
//! zone) with its security groups, is `pending` until the clock's next step, then
//! `available`, with DNS names of its own and, with private DNS, the service's public name.
//! Deletion is `deleting`, then the endpoint is gone with its routes and interfaces. While an
//! endpoint lives, its VPC cannot be deleted.
//!
//! On the wire a VPC endpoint's state is spelled in lower case (`available`), not as the
//! model's enum spells it (`Available`); the generated enum takes the wire's spelling.

mod change;
pub mod service;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, network_interface, page};
use crate::generated::ec2::{
    DeleteVpcEndpointsRequest, DeleteVpcEndpointsResult, DescribeVpcEndpointsRequest,
    DescribeVpcEndpointsResult, DnsEntry, DnsOptions, DnsRecordIpType, IpAddressType, LastError,
    SecurityGroupIdentifier, State, UnsuccessfulItem, UnsuccessfulItemError,
    VpcEndpoint as VpcEndpointOut, VpcEndpointType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

pub use change::{create_vpc_endpoint, modify_vpc_endpoint};
pub use service::Service;

crate::region::table! {
    /// VPC endpoints by id.
    VpcEndpoints of VpcEndpoint
}

/// The policy an endpoint has unless given one: everyone may do everything through it.
const DEFAULT_POLICY: &str = r#"{"Version":"2008-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}]}"#;

/// One VPC endpoint.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VpcEndpoint {
    /// `vpce-...`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// `Gateway` or `Interface`.
    pub kind: VpcEndpointType,
    /// The last part of its service's name (`s3`).
    pub service: String,
    /// Its state.
    pub state: State,
    /// Its policy document.
    pub policy: String,
    /// A gateway endpoint's route tables.
    pub route_table_ids: Vec<String>,
    /// An interface endpoint's subnets, each with the interface it holds there.
    pub subnets: Vec<(String, String)>,
    /// An interface endpoint's security groups.
    pub groups: Vec<String>,
    /// Whether an interface endpoint answers its service's public name in its VPC.
    pub private_dns: bool,
    /// The part of its DNS names after its id (`vpce-ID-STEM.ssm...`).
    pub dns_stem: String,
    /// Why it failed, if it did: (code, message).
    pub failure: Option<(String, String)>,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
}

impl VpcEndpoint {
    /// Its service.
    fn service(&self) -> Option<Service> {
        Service::by_short(&self.service)
    }

    /// Its service's full name (`com.amazonaws.REGION.SHORT`).
    fn service_name(&self, region: &Region) -> String {
        Service::full_name(&region.name, &self.service)
    }

    /// Whether it still stands (not failed, not on its way out).
    fn stands(&self) -> bool {
        matches!(self.state, State::Pending | State::Available)
    }
}

impl Filterable for (&VpcEndpoint, &Region) {
    const NAMES: &'static [&'static str] = &[
        "ip-address-type",
        "service-name",
        "service-region",
        "vpc-id",
        "vpc-endpoint-id",
        "vpc-endpoint-state",
        "vpc-endpoint-type",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (e, region) = *self;
        match name {
            "ip-address-type" => one("ipv4"),
            "service-name" => one(e.service_name(region)),
            "service-region" => one(region.name.clone()),
            "vpc-id" => one(e.vpc_id.clone()),
            "vpc-endpoint-id" => one(e.id.clone()),
            "vpc-endpoint-state" => one(e.state.as_str()),
            "vpc-endpoint-type" => one(e.kind.as_str()),
            _ => Vec::new(),
        }
    }
}

/// `InvalidServiceName` for a service the region does not offer.
pub(crate) fn unknown_service(name: &str) -> ApiError {
    ApiError::new(
        Code::InvalidServiceName,
        format!("The Vpc Endpoint Service '{name}' does not exist"),
    )
}

/// The endpoint's DNS names: its own (regional, then one per zone), then, with private DNS,
/// the service's public name.
fn dns_entries(region: &Region, e: &VpcEndpoint) -> Vec<DnsEntry> {
    if e.kind != VpcEndpointType::Interface || e.state == State::Failed {
        return Vec::new();
    }
    let Some(service) = e.service() else {
        return Vec::new();
    };
    let domain = service.endpoint_domain(&region.name);
    let zone_id = hosted_zone(&[&region.name, "vpce"]);
    let mut entries = vec![DnsEntry {
        dns_name: Some(format!("{}-{}.{domain}", e.id, e.dns_stem)),
        hosted_zone_id: Some(zone_id.clone()),
    }];
    for (subnet, _) in &e.subnets {
        if let Some(s) = region.subnets.get(subnet) {
            entries.push(DnsEntry {
                dns_name: Some(format!("{}-{}-{}.{domain}", e.id, e.dns_stem, s.zone)),
                hosted_zone_id: Some(zone_id.clone()),
            });
        }
    }
    if e.private_dns {
        entries.push(DnsEntry {
            dns_name: Some(service.private_dns_name(&region.name)),
            hosted_zone_id: Some(hosted_zone(&[&region.name, &e.vpc_id, &e.service])),
        });
    }
    entries
}

/// A Route 53 hosted zone id, the same for the same `parts`.
fn hosted_zone(parts: &[&str]) -> String {
    let hash = service::stable_hash(parts);
    format!(
        "Z{}",
        crate::ids::spell(hash, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 13)
    )
}

fn render(region: &Region, e: &VpcEndpoint) -> VpcEndpointOut {
    let interface = e.kind == VpcEndpointType::Interface;
    VpcEndpointOut {
        vpc_endpoint_id: Some(e.id.clone()),
        vpc_endpoint_type: Some(e.kind),
        vpc_id: Some(e.vpc_id.clone()),
        service_name: Some(e.service_name(region)),
        state: Some(e.state),
        policy_document: Some(e.policy.clone()),
        route_table_ids: Some(e.route_table_ids.clone()),
        subnet_ids: Some(e.subnets.iter().map(|(s, _)| s.clone()).collect()),
        groups: Some(
            e.groups
                .iter()
                .map(|g| SecurityGroupIdentifier {
                    group_id: Some(g.clone()),
                    group_name: region.security_groups.get(g).map(|g| g.name.clone()),
                })
                .collect(),
        ),
        ip_address_type: Some(IpAddressType::Ipv4),
        dns_options: interface.then_some(DnsOptions {
            dns_record_ip_type: Some(DnsRecordIpType::Ipv4),
            ..Default::default()
        }),
        private_dns_enabled: Some(e.private_dns),
        requester_managed: Some(false),
        network_interface_ids: Some(e.subnets.iter().map(|(_, eni)| eni.clone()).collect()),
        dns_entries: Some(dns_entries(region, e)),
        creation_timestamp: Some(e.created),
        tags: region.tags.tag_set(&e.id),
        owner_id: Some(region.account_id.clone()),
        last_error: e.failure.as_ref().map(|(code, message)| LastError {
            code: Some(code.clone()),
            message: Some(message.clone()),
        }),
        ..Default::default()
    }
}

/// `DescribeVpcEndpoints`.
pub fn describe_vpc_endpoints(
    region: &mut Region,
    input: DescribeVpcEndpointsRequest,
) -> Result<DescribeVpcEndpointsResult, ApiError> {
    let filters = Filters::parse::<(&VpcEndpoint, &Region)>(input.filters)?;
    let region = &*region;
    let found = Kind::VpcEndpoint.describe(
        &region.consistency,
        &region.vpc_endpoints,
        input.vpc_endpoint_ids.as_deref(),
        region.candidates(Kind::VpcEndpoint, &filters),
        |e| filters.matches(&(e, region), region.tags.get(&e.id)),
    )?;
    let (items, next) = page::page(
        found,
        |e| e.id.as_str(),
        input.max_results.map(|m| m.min(1000)),
        input.next_token.as_deref(),
    )?;
    Ok(DescribeVpcEndpointsResult {
        vpc_endpoints: Some(items.into_iter().map(|e| render(region, e)).collect()),
        next_token: next,
    })
}

/// `DeleteVpcEndpoints`: each endpoint named goes to `deleting`, then away; an id that names
/// no endpoint is answered in `Unsuccessful` (`InvalidVpcEndpoint.NotFound`), the others are
/// deleted all the same.
pub fn delete_vpc_endpoints(
    region: &mut Region,
    input: DeleteVpcEndpointsRequest,
) -> Result<DeleteVpcEndpointsResult, ApiError> {
    let mut unsuccessful = Vec::new();
    let now = region.clock.now();
    for id in input.vpc_endpoint_ids {
        let Some(e) = region.vpc_endpoints.0.get_mut(&id) else {
            unsuccessful.push(UnsuccessfulItem {
                error: Some(UnsuccessfulItemError {
                    code: Some(Code::InvalidVpcEndpointNotFound.as_str().to_string()),
                    message: Some(format!("The VPC endpoint '{id}' does not exist")),
                }),
                resource_id: Some(id),
            });
            continue;
        };
        if e.state != State::Deleting {
            e.state = State::Deleting;
            region.transitions.schedule(now, Subject::VpcEndpoint, &id);
        }
    }
    Ok(DeleteVpcEndpointsResult {
        unsuccessful: Some(unsuccessful),
    })
}

/// Moves an endpoint out of `pending` (to `available`, or `failed` when a failure was
/// asked for) or `deleting` (gone, with its interfaces and routes).
pub fn advance(region: &mut Region, id: &str) {
    let Some(e) = region.vpc_endpoints.get(id) else {
        return;
    };
    match e.state {
        State::Pending => {
            let failure = region.transitions.take_failure(Subject::VpcEndpoint);
            if failure.is_some() {
                release_interfaces(region, id);
            }
            if let Some(e) = region.vpc_endpoints.0.get_mut(id) {
                e.state = if failure.is_some() {
                    State::Failed
                } else {
                    State::Available
                };
                e.failure = failure;
            }
        }
        State::Deleting => {
            release_interfaces(region, id);
            if let Some(e) = region.vpc_endpoints.0.remove(id) {
                region.by_vpc.remove(&e.vpc_id, id);
                region.tags.remove_resource(id);
            }
        }
        _ => {}
    }
}

/// Deletes an endpoint's interfaces.
fn release_interfaces(region: &mut Region, id: &str) {
    let subnets = region
        .vpc_endpoints
        .0
        .get_mut(id)
        .map(|e| std::mem::take(&mut e.subnets))
        .unwrap_or_default();
    for (_, eni) in subnets {
        network_interface::delete(region, &eni);
    }
}

/// The routes gateway endpoints hold in table `table_id` of `vpc_id`: (endpoint, prefix list).
pub fn gateway_routes(region: &Region, vpc_id: &str, table_id: &str) -> Vec<(String, String)> {
    endpoints_of(region, vpc_id)
        .filter(|e| e.stands() && e.route_table_ids.iter().any(|t| t == table_id))
        .filter_map(|e| Some((e.id.clone(), e.service()?.prefix_list_id(&region.name))))
        .collect()
}

/// Takes a deleted route table `table_id` of `vpc_id` out of its gateway endpoints.
pub fn forget_route_table(region: &mut Region, vpc_id: &str, table_id: &str) {
    let ids: Vec<String> = region.by_vpc.of_kind(vpc_id, "vpce").cloned().collect();
    for id in ids {
        if let Some(e) = region.vpc_endpoints.0.get_mut(&id) {
            e.route_table_ids.retain(|t| t != table_id);
        }
    }
}

/// The endpoints of `vpc_id`.
fn endpoints_of<'a>(region: &'a Region, vpc_id: &str) -> impl Iterator<Item = &'a VpcEndpoint> {
    region
        .by_vpc
        .of_kind(vpc_id, "vpce")
        .filter_map(|id| region.vpc_endpoints.get(id))
}
