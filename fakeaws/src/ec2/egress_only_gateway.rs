//! Egress-only internet gateways (IPv6 traffic out of a VPC, none in):
//! CreateEgressOnlyInternetGateway, DescribeEgressOnlyInternetGateways and
//! DeleteEgressOnlyInternetGateway. A gateway is made attached to its VPC and stays so until
//! deleted; it keeps its VPC from deletion. Routes to it (CreateRoute with
//! `EgressOnlyInternetGatewayId`) turn `blackhole` once it is gone.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    AttachmentStatus, CreateEgressOnlyInternetGatewayRequest,
    CreateEgressOnlyInternetGatewayResult, DeleteEgressOnlyInternetGatewayRequest,
    DeleteEgressOnlyInternetGatewayResult, DescribeEgressOnlyInternetGatewaysRequest,
    DescribeEgressOnlyInternetGatewaysResult, EgressOnlyInternetGateway as GatewayOut,
    InternetGatewayAttachment, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Egress-only internet gateways by id.
    EgressOnlyGateways of EgressOnlyGateway
}

/// One egress-only internet gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EgressOnlyGateway {
    /// `eigw-...`.
    pub id: String,
    /// The VPC it is attached to.
    pub vpc_id: String,
}

impl Filterable for (&EgressOnlyGateway, &Region) {
    // The model's filters are the tag filters alone (`tag:<key>`, `tag-key`); the id filter
    // serves the candidate lookup.
    const NAMES: &'static [&'static str] = &["egress-only-internet-gateway-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (g, _) = *self;
        match name {
            "egress-only-internet-gateway-id" => one(g.id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, g: &EgressOnlyGateway) -> GatewayOut {
    GatewayOut {
        attachments: Some(vec![InternetGatewayAttachment {
            state: Some(AttachmentStatus::Attached),
            vpc_id: Some(g.vpc_id.clone()),
        }]),
        egress_only_internet_gateway_id: Some(g.id.clone()),
        tags: region.tags.tag_set(&g.id),
    }
}

/// `CreateEgressOnlyInternetGateway`: attached to its VPC from the start; the same
/// ClientToken with the same request answers the same gateway.
pub fn create_egress_only_internet_gateway(
    region: &mut Region,
    mut input: CreateEgressOnlyInternetGatewayRequest,
) -> Result<CreateEgressOnlyInternetGatewayResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) =
        region
            .ledger
            .replay("CreateEgressOnlyInternetGateway", token.as_deref(), &print)?
        && let Some(g) = region.egress_only_gateways.get(&id)
    {
        return Ok(CreateEgressOnlyInternetGatewayResult {
            egress_only_internet_gateway: Some(render(region, g)),
            client_token: token,
        });
    }
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::EgressOnlyInternetGateway,
    )?;
    let gateway = EgressOnlyGateway {
        id: region
            .ids
            .resource(Kind::EgressOnlyInternetGateway.prefix()),
        vpc_id: input.vpc_id,
    };
    region.tags.insert(&gateway.id, tags);
    region.ledger.record(
        "CreateEgressOnlyInternetGateway",
        token.as_deref(),
        &print,
        &gateway.id,
    );
    let out = render(region, &gateway);
    region.by_vpc.insert(&gateway.vpc_id, &gateway.id);
    region
        .egress_only_gateways
        .0
        .insert(gateway.id.clone(), gateway);
    Ok(CreateEgressOnlyInternetGatewayResult {
        egress_only_internet_gateway: Some(out),
        client_token: token,
    })
}

/// `DescribeEgressOnlyInternetGateways`. An id naming no gateway matches nothing (AWS
/// answers an empty list rather than a NotFound error); a malformed one is refused.
pub fn describe_egress_only_internet_gateways(
    region: &Region,
    input: DescribeEgressOnlyInternetGatewaysRequest,
) -> Result<DescribeEgressOnlyInternetGatewaysResult, ApiError> {
    let filters = Filters::parse::<(&EgressOnlyGateway, &Region)>(input.filters)?;
    let kind = Kind::EgressOnlyInternetGateway;
    let ids: Vec<String> = input.egress_only_internet_gateway_ids.unwrap_or_default();
    for id in &ids {
        kind.check_shape(id)?;
    }
    // The ids select, as a filter would: one naming no gateway matches nothing.
    let matching = kind.describe(
        &region.consistency,
        &region.egress_only_gateways,
        None,
        region.candidates(kind, &filters),
        |g| {
            (ids.is_empty() || ids.contains(&g.id))
                && filters.matches(&(g, region), region.tags.get(&g.id))
        },
    )?;
    let (items, next) = page::page(
        matching,
        |g| g.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeEgressOnlyInternetGatewaysResult {
        egress_only_internet_gateways: Some(items.into_iter().map(|g| render(region, g)).collect()),
        next_token: next,
    })
}

/// `DeleteEgressOnlyInternetGateway`: detached and gone at once; routes to it stay, as
/// `blackhole`.
pub fn delete_egress_only_internet_gateway(
    region: &mut Region,
    input: DeleteEgressOnlyInternetGatewayRequest,
) -> Result<DeleteEgressOnlyInternetGatewayResult, ApiError> {
    let id = input.egress_only_internet_gateway_id;
    let vpc_id = Kind::EgressOnlyInternetGateway
        .get(&region.egress_only_gateways, &id)?
        .vpc_id
        .clone();
    region.egress_only_gateways.0.remove(&id);
    region.by_vpc.remove(&vpc_id, &id);
    region.tags.remove_resource(&id);
    Ok(DeleteEgressOnlyInternetGatewayResult {
        return_code: Some(true),
    })
}
