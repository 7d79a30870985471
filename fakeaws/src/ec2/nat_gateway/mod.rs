//! NAT gateways: CreateNatGateway, DescribeNatGateways, DeleteNatGateway. A gateway is
//! `pending`, then `available` (or `failed` when its VPC has no internet gateway), and after
//! deletion `deleting`, then `deleted`, still listed for an hour as AWS does. Its secondary
//! addresses are [`address`]'s.

pub mod address;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::network_interface::lifecycle::parse_ip;
use crate::ec2::network_interface::{self, NewInterface};
use crate::ec2::{Kind, elastic_ip, fingerprint, page, tags};
use crate::generated::ec2::{
    ConnectivityType, CreateNatGatewayRequest, CreateNatGatewayResult, DeleteNatGatewayRequest,
    DeleteNatGatewayResult, DescribeNatGatewaysRequest, DescribeNatGatewaysResult,
    NatGateway as NatGatewayOut, NatGatewayAddress, NatGatewayAddressStatus, NatGatewayState,
    NetworkInterfaceType, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// NAT gateways by id.
    NatGateways of NatGateway
}

/// One NAT gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NatGateway {
    /// `nat-...`.
    pub id: String,
    /// Its subnet.
    pub subnet_id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// `public` or `private`.
    pub connectivity: ConnectivityType,
    /// Its Elastic IP (public gateways).
    pub allocation_id: Option<String>,
    /// Its interface, while it has one.
    pub eni_id: Option<String>,
    /// Its private address.
    pub private_ip: String,
    /// Its state.
    pub state: NatGatewayState,
    /// Why it failed, if it did: (code, message).
    pub failure: Option<(String, String)>,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// When it was deleted.
    #[serde(with = "crate::state::with::time_opt")]
    pub deleted: Option<DateTime>,
    /// Its secondary addresses, in the order they were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondary: Vec<address::Secondary>,
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        Code::NatGatewayNotFound,
        format!("The Nat Gateway {id} was not found"),
    )
}

/// The gateway `id`, or `NatGatewayNotFound`.
pub fn find<'a>(region: &'a Region, id: &str) -> Result<&'a NatGateway, ApiError> {
    region.nat_gateways.get(id).ok_or_else(|| not_found(id))
}

impl Filterable for (&NatGateway, &Region) {
    const NAMES: &'static [&'static str] = &["nat-gateway-id", "state", "subnet-id", "vpc-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (n, _) = *self;
        match name {
            "nat-gateway-id" => one(n.id.clone()),
            "state" => one(n.state.as_str()),
            "subnet-id" => one(n.subnet_id.clone()),
            "vpc-id" => one(n.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, n: &NatGateway) -> NatGatewayOut {
    let eni = n
        .eni_id
        .as_ref()
        .and_then(|e| region.network_interfaces.get(e));
    let public = eni.and_then(|e| e.public_ip.as_ref());
    let zone = region
        .subnets
        .get(&n.subnet_id)
        .map(|s| (s.zone.clone(), s.zone_id.clone()));
    NatGatewayOut {
        create_time: Some(n.created),
        delete_time: n.deleted,
        failure_code: n.failure.as_ref().map(|f| f.0.clone()),
        failure_message: n.failure.as_ref().map(|f| f.1.clone()),
        nat_gateway_addresses: Some(if n.state == NatGatewayState::Failed {
            Vec::new()
        } else {
            vec![NatGatewayAddress {
                allocation_id: n.allocation_id.clone(),
                network_interface_id: n.eni_id.clone(),
                private_ip: Some(n.private_ip.clone()),
                public_ip: public.map(|p| p.ip.to_string()),
                association_id: public.and_then(|p| p.association_id.clone()),
                is_primary: Some(true),
                status: Some(match n.state {
                    NatGatewayState::Pending => NatGatewayAddressStatus::Associating,
                    NatGatewayState::Deleting => NatGatewayAddressStatus::Disassociating,
                    _ => NatGatewayAddressStatus::Succeeded,
                }),
                availability_zone: zone.as_ref().map(|z| z.0.clone()),
                availability_zone_id: zone.as_ref().map(|z| z.1.clone()),
                ..Default::default()
            }]
            .into_iter()
            .chain(n.secondary.iter().map(|s| address::render(region, n, s)))
            .collect()
        }),
        nat_gateway_id: Some(n.id.clone()),
        state: Some(n.state),
        subnet_id: Some(n.subnet_id.clone()),
        vpc_id: Some(n.vpc_id.clone()),
        tags: region.tags.tag_set(&n.id),
        connectivity_type: Some(n.connectivity),
        ..Default::default()
    }
}

/// `CreateNatGateway`; a ClientToken makes retries answer the same gateway.
pub fn create_nat_gateway(
    region: &mut Region,
    mut input: CreateNatGatewayRequest,
) -> Result<CreateNatGatewayResult, ApiError> {
    // The token is taken out first: the fingerprint is of every other parameter.
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateNatGateway", token.as_deref(), &print)?
        && let Some(n) = region.nat_gateways.get(&id)
    {
        return Ok(CreateNatGatewayResult {
            client_token: token,
            nat_gateway: Some(render(region, n)),
        });
    }
    let subnet_id = input
        .subnet_id
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("SubnetId"))?;
    let s = Kind::Subnet.get(&region.subnets, subnet_id)?;
    let (vpc_id, zone) = (s.vpc_id.clone(), s.zone.clone());
    let connectivity = input.connectivity_type.unwrap_or(ConnectivityType::Public);
    let secondary_eips = input.secondary_allocation_ids.clone().unwrap_or_default();
    let secondary_named = input
        .secondary_private_ip_addresses
        .clone()
        .unwrap_or_default();
    match (connectivity, &input.allocation_id) {
        (ConnectivityType::Public, None) => {
            return Err(ApiError::missing_parameter("AllocationId"));
        }
        (ConnectivityType::Private, Some(_)) => {
            return Err(ApiError::invalid_combination(
                "A private NAT gateway cannot have an Elastic IP address.",
            ));
        }
        (_, Some(alloc)) => {
            let a = Kind::ElasticIp.get(&region.addresses, alloc)?;
            if a.association.is_some() {
                return Err(ApiError::new(
                    Code::ResourceAlreadyAssociated,
                    format!("Elastic IP address [{alloc}] is already associated"),
                ));
            }
            elastic_ip::check_border_group(region, a, &zone)?;
        }
        _ => {}
    }
    let primary_ip = input
        .private_ip_address
        .as_deref()
        .map(|raw| parse_ip("privateIpAddress", raw))
        .transpose()?;
    if let Some(ip) = primary_ip {
        s.check_free(ip)?;
    }
    let wanted = match connectivity {
        ConnectivityType::Private => {
            if !secondary_eips.is_empty() {
                return Err(ApiError::invalid_combination(
                    "A private NAT gateway cannot have an Elastic IP address.",
                ));
            }
            address::check_private(
                1,
                &secondary_named,
                input.secondary_private_ip_address_count,
            )?
        }
        _ => {
            if input.secondary_private_ip_address_count.is_some() {
                return Err(ApiError::invalid_combination(
                    "SecondaryPrivateIpAddressCount is for private NAT gateways only.",
                ));
            }
            let primary: Vec<&str> = input.allocation_id.iter().map(String::as_str).collect();
            address::check_eips(
                region,
                &zone,
                1,
                &primary,
                &secondary_eips,
                &secondary_named,
            )?
        }
    };
    if primary_ip.is_some_and(|ip| wanted.addresses.iter().any(|(w, _)| *w == Some(ip))) {
        return Err(ApiError::invalid_value(
            "The primary private IP address is also named as a secondary one.",
        ));
    }
    address::check_room(region, subnet_id, &wanted)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::Natgateway,
    )?;
    let in_zone = region
        .by_vpc
        .of_kind(&vpc_id, "nat")
        .filter_map(|id| region.nat_gateways.get(id))
        .filter(|n| {
            !matches!(n.state, NatGatewayState::Deleted | NatGatewayState::Failed)
                && region
                    .subnets
                    .get(&n.subnet_id)
                    .is_some_and(|s| s.zone == zone)
        })
        .count();
    if in_zone >= region.limits.nat_gateways_per_zone {
        return Err(ApiError::new(
            Code::NatGatewayLimitExceeded,
            "The maximum number of NAT gateways in this Availability Zone has been reached.",
        ));
    }
    let id = region.ids.resource("nat");
    let named: Vec<std::net::Ipv4Addr> =
        wanted.addresses.iter().filter_map(|(ip, _)| *ip).collect();
    let eni_id = network_interface::create_beside(
        region,
        NewInterface {
            subnet_id,
            groups: Vec::new(),
            interface_type: NetworkInterfaceType::NatGateway,
            requester_managed: true,
            description: format!("Interface for NAT Gateway {id}"),
            private_ip: primary_ip,
        },
        &named,
    )?;
    if let Some(alloc) = &input.allocation_id {
        elastic_ip::attach(region, alloc, &eni_id, None)?;
    }
    let private_ip = Kind::NetworkInterface
        .get(&region.network_interfaces, &eni_id)?
        .private_ip
        .to_string();
    let gateway = NatGateway {
        id: id.clone(),
        subnet_id: subnet_id.to_string(),
        vpc_id: vpc_id.clone(),
        connectivity,
        allocation_id: input.allocation_id.clone(),
        eni_id: Some(eni_id.clone()),
        private_ip,
        state: NatGatewayState::Pending,
        failure: None,
        created: region.clock.now_datetime(),
        deleted: None,
        secondary: Vec::new(),
    };
    region.tags.insert(&id, tags);
    region
        .ledger
        .record("CreateNatGateway", token.as_deref(), &print, &id);
    region.by_vpc.insert(&vpc_id, &id);
    region.by_subnet.insert(subnet_id, &id);
    region.nat_gateways.0.insert(id.clone(), gateway);
    let status = match connectivity {
        ConnectivityType::Private => NatGatewayAddressStatus::Assigning,
        _ => NatGatewayAddressStatus::Associating,
    };
    address::give(region, &id, &eni_id, subnet_id, wanted, status)?;
    let n = find(region, &id)?;
    Ok(CreateNatGatewayResult {
        client_token: token,
        nat_gateway: Some(render(region, n)),
    })
}

/// Moves a gateway out of `pending` or `deleting`.
pub fn advance(region: &mut Region, id: &str) {
    let Some(n) = region.nat_gateways.get(id) else {
        return;
    };
    match n.state {
        NatGatewayState::Pending => {
            let has_gateway = n.connectivity == ConnectivityType::Private
                || region.internet_gateway_of(&n.vpc_id).is_some();
            let vpc = n.vpc_id.clone();
            let failure = match region.transitions.take_failure(Subject::NatGateway) {
                Some(asked) => Some(asked),
                None if has_gateway => None,
                None => Some((
                    Code::GatewayNotAttached.as_str().to_string(),
                    format!("Network {vpc} has no Internet gateway attached"),
                )),
            };
            match failure {
                None => {
                    if let Some(n) = region.nat_gateways.0.get_mut(id) {
                        n.state = NatGatewayState::Available;
                    }
                    address::advance(region, id);
                }
                Some(failure) => {
                    release_resources(region, id);
                    if let Some(n) = region.nat_gateways.0.get_mut(id) {
                        n.state = NatGatewayState::Failed;
                        n.failure = Some(failure);
                    }
                    let now = region.clock.now();
                    region
                        .transitions
                        .schedule(now, Subject::NatGatewayPurge, id);
                }
            }
        }
        NatGatewayState::Deleting => {
            release_resources(region, id);
            let now = region.clock.now_datetime();
            if let Some(n) = region.nat_gateways.0.get_mut(id) {
                n.state = NatGatewayState::Deleted;
                n.deleted = Some(now);
            }
            let now = region.clock.now();
            region
                .transitions
                .schedule(now, Subject::NatGatewayPurge, id);
        }
        NatGatewayState::Available => address::advance(region, id),
        _ => {}
    }
}

/// Frees a gateway's interface and its Elastic IP associations (secondary ones included).
fn release_resources(region: &mut Region, id: &str) {
    let Some(eni) = region.nat_gateways.0.get_mut(id).and_then(|n| {
        n.secondary.clear();
        n.eni_id.take()
    }) else {
        return;
    };
    network_interface::delete(region, &eni);
}

/// Forgets a deleted (or failed) gateway after AWS's retention.
pub fn purge(region: &mut Region, id: &str) {
    if let Some(n) = region.nat_gateways.get(id)
        && matches!(n.state, NatGatewayState::Deleted | NatGatewayState::Failed)
    {
        let (vpc, subnet) = (n.vpc_id.clone(), n.subnet_id.clone());
        region.nat_gateways.0.remove(id);
        region.by_vpc.remove(&vpc, id);
        region.by_subnet.remove(&subnet, id);
        region.tags.remove_resource(id);
    }
}

/// `DescribeNatGateways` (its filters come in the `Filter` member).
pub fn describe_nat_gateways(
    region: &mut Region,
    input: DescribeNatGatewaysRequest,
) -> Result<DescribeNatGatewaysResult, ApiError> {
    let filters = Filters::parse::<(&NatGateway, &Region)>(input.filter)?;
    let region = &*region;
    for id in input.nat_gateway_ids.iter().flatten() {
        find(region, id)?;
    }
    let found = Kind::NatGateway.describe(
        &region.consistency,
        &region.nat_gateways,
        None,
        match input.nat_gateway_ids.as_ref().filter(|i| !i.is_empty()) {
            Some(ids) => Some(ids.iter().map(String::as_str).collect()),
            None => region.candidates(Kind::NatGateway, &filters),
        },
        |n| filters.matches(&(n, region), region.tags.get(&n.id)),
    )?;
    let (items, next) = page::page(
        found,
        |n| n.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeNatGatewaysResult {
        nat_gateways: Some(items.into_iter().map(|n| render(region, n)).collect()),
        next_token: next,
    })
}

/// `DeleteNatGateway`: `deleting`, then `deleted`; its Elastic IP is freed.
pub fn delete_nat_gateway(
    region: &mut Region,
    input: DeleteNatGatewayRequest,
) -> Result<DeleteNatGatewayResult, ApiError> {
    let id = input.nat_gateway_id;
    let n = find(region, &id)?;
    // A failed gateway can be deleted too, and goes the same way.
    if matches!(
        n.state,
        NatGatewayState::Pending | NatGatewayState::Available | NatGatewayState::Failed
    ) {
        if let Some(n) = region.nat_gateways.0.get_mut(&id) {
            n.state = NatGatewayState::Deleting;
        }
        let now = region.clock.now();
        region.transitions.schedule(now, Subject::NatGateway, &id);
    }
    Ok(DeleteNatGatewayResult {
        nat_gateway_id: Some(id),
    })
}
