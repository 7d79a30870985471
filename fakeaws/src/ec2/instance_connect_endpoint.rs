//! EC2 Instance Connect Endpoints (a way in to instances of private subnets without a bastion
//! or public addresses): CreateInstanceConnectEndpoint, DescribeInstanceConnectEndpoints,
//! DeleteInstanceConnectEndpoint.
//!
//! - An endpoint lives in a subnet, with a requester-managed network interface there (an
//!   address of the subnet, the endpoint's security groups: those named, of the subnet's VPC,
//!   or the VPC's default group), which keeps the subnet and the groups from deletion while
//!   it stands; `PreserveClientIp` (false by default) only with the `ipv4` address type; the
//!   address type defaults to the subnet's (`dualstack` for a subnet with an IPv6 range).
//! - Answered `create-in-progress` and described `create-complete` from then on, with its DNS
//!   names (`eice-....<8 hex>.ec2-instance-connect-endpoint.<region>.amazonaws.com`, and the
//!   FIPS one, as the AWS CLI's documented output shows them); a ClientToken replays it (and
//!   is answered). Deleted: answered `delete-in-progress` without interfaces, as the CLI
//!   documents, and gone with its interface at once.
//! - Not enforced: the quotas (one endpoint per VPC, per subnet; five per region); no tunnel
//!   stands behind an endpoint.

use aws_smithy_types::DateTime;

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::network_interface::{self, NewInterface};
use crate::ec2::{Kind, fingerprint, page, security_group, tags, unique};
use crate::generated::ec2::{
    CreateInstanceConnectEndpointRequest, CreateInstanceConnectEndpointResult,
    DeleteInstanceConnectEndpointRequest, DeleteInstanceConnectEndpointResult,
    DescribeInstanceConnectEndpointsRequest, DescribeInstanceConnectEndpointsResult,
    Ec2InstanceConnectEndpoint as EndpointOut, Ec2InstanceConnectEndpointState as State,
    IpAddressType, NetworkInterfaceType, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// EC2 Instance Connect Endpoints by id.
    InstanceConnectEndpoints of Endpoint
}

/// One endpoint.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Endpoint {
    /// `eice-...`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Its subnet.
    pub subnet_id: String,
    /// The subnet's zone and zone id.
    pub zone: String,
    /// See [`Endpoint::zone`].
    pub zone_id: String,
    /// Its security groups.
    pub groups: Vec<String>,
    /// Whether connections keep the client's address as their source.
    pub preserve_client_ip: bool,
    /// `ipv4`, `dualstack` or `ipv6`.
    pub ip_address_type: IpAddressType,
    /// Its network interface.
    pub interface: String,
    /// The part of its DNS names after its id.
    pub dns_stem: String,
    /// When it was made.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
}

impl Filterable for (&Endpoint, &Region) {
    const NAMES: &'static [&'static str] = &[
        "instance-connect-endpoint-id",
        "state",
        "subnet-id",
        "vpc-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (e, _) = *self;
        match name {
            "instance-connect-endpoint-id" => one(e.id.clone()),
            "state" => one(State::CreateComplete.as_str()),
            "subnet-id" => one(e.subnet_id.clone()),
            "vpc-id" => one(e.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, e: &Endpoint, state: State) -> EndpointOut {
    let gone = state == State::DeleteInProgress;
    let name = |part: &str| {
        format!(
            "{}.{}.{part}ec2-instance-connect-endpoint.{}.amazonaws.com",
            e.id, e.dns_stem, region.name
        )
    };
    EndpointOut {
        owner_id: Some(region.account_id.clone()),
        instance_connect_endpoint_id: Some(e.id.clone()),
        instance_connect_endpoint_arn: Some(format!(
            "arn:{}:ec2:{}:{}:instance-connect-endpoint/{}",
            crate::ec2::account::arn_partition(&region.name),
            region.name,
            region.account_id,
            e.id
        )),
        state: Some(state),
        state_message: Some(String::new()),
        dns_name: (!gone).then(|| name("")),
        fips_dns_name: (!gone).then(|| name("fips.")),
        network_interface_ids: Some(if gone {
            Vec::new()
        } else {
            vec![e.interface.clone()]
        }),
        vpc_id: Some(e.vpc_id.clone()),
        availability_zone: Some(e.zone.clone()),
        availability_zone_id: Some(e.zone_id.clone()),
        created_at: Some(e.created),
        subnet_id: Some(e.subnet_id.clone()),
        preserve_client_ip: Some(e.preserve_client_ip),
        security_group_ids: (!gone).then(|| e.groups.clone()),
        tags: Some(region.tags.tag_set(&e.id).unwrap_or_default()),
        ip_address_type: Some(e.ip_address_type),
        public_dns_names: None,
    }
}

/// `CreateInstanceConnectEndpoint`.
pub fn create_instance_connect_endpoint(
    region: &mut Region,
    mut input: CreateInstanceConnectEndpointRequest,
) -> Result<CreateInstanceConnectEndpointResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) =
        region
            .ledger
            .replay("CreateInstanceConnectEndpoint", token.as_deref(), &print)?
        && let Some(e) = region.instance_connect_endpoints.get(&id)
    {
        return Ok(CreateInstanceConnectEndpointResult {
            instance_connect_endpoint: Some(render(region, e, State::CreateInProgress)),
            client_token: token,
        });
    }
    let subnet = Kind::Subnet.get(&region.subnets, &input.subnet_id)?.clone();
    let ip_address_type = match input.ip_address_type {
        Some(t) => t,
        None if subnet.ipv6.is_some() => IpAddressType::Dualstack,
        None => IpAddressType::Ipv4,
    };
    if ip_address_type != IpAddressType::Ipv4 && subnet.ipv6.is_none() {
        return Err(ApiError::invalid_parameter(
            "IpAddressType",
            ip_address_type.as_str(),
            "The subnet has no IPv6 range.",
        ));
    }
    let preserve_client_ip = input.preserve_client_ip == Some(true);
    if preserve_client_ip && ip_address_type != IpAddressType::Ipv4 {
        return Err(ApiError::invalid_combination(
            "PreserveClientIp is only supported on IPv4 EC2 Instance Connect Endpoints.",
        ));
    }
    let mut groups = unique(input.security_group_ids.take());
    if groups.is_empty() {
        groups.extend(security_group::default_of(region, &subnet.vpc_id));
    }
    security_group::checked_in_vpc(region, &subnet.vpc_id, &groups)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::InstanceConnectEndpoint,
    )?;
    let id = region.ids.resource(Kind::InstanceConnectEndpoint.prefix());
    let interface = network_interface::create(
        region,
        NewInterface {
            subnet_id: &subnet.id,
            groups: groups.clone(),
            interface_type: NetworkInterfaceType::Interface,
            requester_managed: true,
            description: format!("EC2 Instance Connect Endpoint {id}"),
            private_ip: None,
        },
    )?;
    let stem = format!("{:08x}", region.ids.next_u64() & 0xffff_ffff);
    let endpoint = Endpoint {
        id: id.clone(),
        vpc_id: subnet.vpc_id.clone(),
        subnet_id: subnet.id.clone(),
        zone: subnet.zone.clone(),
        zone_id: subnet.zone_id.clone(),
        groups,
        preserve_client_ip,
        ip_address_type,
        interface,
        dns_stem: stem,
        created: region.clock.now_datetime(),
    };
    region.tags.insert(&id, tags);
    region.ledger.record(
        "CreateInstanceConnectEndpoint",
        token.as_deref(),
        &print,
        &id,
    );
    let out = render(region, &endpoint, State::CreateInProgress);
    region.by_vpc.insert(&endpoint.vpc_id, &id);
    region.by_subnet.insert(&endpoint.subnet_id, &id);
    region.instance_connect_endpoints.0.insert(id, endpoint);
    Ok(CreateInstanceConnectEndpointResult {
        instance_connect_endpoint: Some(out),
        client_token: token,
    })
}

/// `DescribeInstanceConnectEndpoints`: by ids (each must exist), filters, pages (`MaxResults`
/// 1 to 50).
pub fn describe_instance_connect_endpoints(
    region: &Region,
    input: DescribeInstanceConnectEndpointsRequest,
) -> Result<DescribeInstanceConnectEndpointsResult, ApiError> {
    let filters = Filters::parse::<(&Endpoint, &Region)>(input.filters)?;
    let kind = Kind::InstanceConnectEndpoint;
    let found = kind.describe(
        &region.consistency,
        &region.instance_connect_endpoints,
        input.instance_connect_endpoint_ids.as_deref(),
        region.candidates(kind, &filters),
        |e| filters.matches(&(e, region), region.tags.get(&e.id)),
    )?;
    let (items, next) = page::page(
        found,
        |e| e.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInstanceConnectEndpointsResult {
        instance_connect_endpoints: Some(
            items
                .into_iter()
                .map(|e| render(region, e, State::CreateComplete))
                .collect(),
        ),
        next_token: next,
    })
}

/// `DeleteInstanceConnectEndpoint`: gone with its interface.
pub fn delete_instance_connect_endpoint(
    region: &mut Region,
    input: DeleteInstanceConnectEndpointRequest,
) -> Result<DeleteInstanceConnectEndpointResult, ApiError> {
    let id = input.instance_connect_endpoint_id;
    let endpoint = Kind::InstanceConnectEndpoint
        .get(&region.instance_connect_endpoints, &id)?
        .clone();
    let out = render(region, &endpoint, State::DeleteInProgress);
    network_interface::delete(region, &endpoint.interface);
    region.instance_connect_endpoints.0.remove(&id);
    region.by_vpc.remove(&endpoint.vpc_id, &id);
    region.by_subnet.remove(&endpoint.subnet_id, &id);
    region.tags.remove_resource(&id);
    Ok(DeleteInstanceConnectEndpointResult {
        instance_connect_endpoint: Some(out),
    })
}
