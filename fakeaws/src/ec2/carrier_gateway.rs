//! Carrier gateways (a VPC's way in and out of a carrier's network, for the subnets of its
//! Wavelength Zones): CreateCarrierGateway, DescribeCarrierGateways, DeleteCarrierGateway.
//!
//! A gateway belongs to its VPC from the start: answered `pending`, as AWS answers a new one
//! (the AWS CLI's documented output), and `available` from then on; it keeps its VPC from
//! deletion. Deleting it is answered `deleting` and it is gone at once; routes to it
//! (CreateRoute with `CarrierGatewayId`) stay, as `blackhole`, as AWS documents.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    CarrierGateway as GatewayOut, CarrierGatewayState, CreateCarrierGatewayRequest,
    CreateCarrierGatewayResult, DeleteCarrierGatewayRequest, DeleteCarrierGatewayResult,
    DescribeCarrierGatewaysRequest, DescribeCarrierGatewaysResult, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Carrier gateways by id.
    CarrierGateways of CarrierGateway
}

/// One carrier gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CarrierGateway {
    /// `cagw-...`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
}

impl Filterable for (&CarrierGateway, &Region) {
    const NAMES: &'static [&'static str] = &["carrier-gateway-id", "state", "owner-id", "vpc-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (g, region) = *self;
        match name {
            "carrier-gateway-id" => one(g.id.clone()),
            "state" => one(CarrierGatewayState::Available.as_str()),
            "owner-id" => one(region.account_id.clone()),
            "vpc-id" => one(g.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, g: &CarrierGateway, state: CarrierGatewayState) -> GatewayOut {
    GatewayOut {
        carrier_gateway_id: Some(g.id.clone()),
        vpc_id: Some(g.vpc_id.clone()),
        state: Some(state),
        owner_id: Some(region.account_id.clone()),
        tags: region.tags.tag_set(&g.id),
    }
}

/// Whether `id` is a carrier gateway of VPC `vpc_id`.
pub fn is_of_vpc(region: &Region, id: &str, vpc_id: &str) -> bool {
    region
        .carrier_gateways
        .get(id)
        .is_some_and(|g| g.vpc_id == vpc_id)
}

/// `CreateCarrierGateway`: the same ClientToken with the same request answers the same
/// gateway.
pub fn create_carrier_gateway(
    region: &mut Region,
    mut input: CreateCarrierGatewayRequest,
) -> Result<CreateCarrierGatewayResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateCarrierGateway", token.as_deref(), &print)?
        && let Some(g) = region.carrier_gateways.get(&id)
    {
        return Ok(CreateCarrierGatewayResult {
            carrier_gateway: Some(render(region, g, CarrierGatewayState::Available)),
        });
    }
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::CarrierGateway,
    )?;
    let gateway = CarrierGateway {
        id: region.ids.resource(Kind::CarrierGateway.prefix()),
        vpc_id: input.vpc_id,
    };
    region.tags.insert(&gateway.id, tags);
    region.ledger.record(
        "CreateCarrierGateway",
        token.as_deref(),
        &print,
        &gateway.id,
    );
    let out = render(region, &gateway, CarrierGatewayState::Pending);
    region.by_vpc.insert(&gateway.vpc_id, &gateway.id);
    region
        .carrier_gateways
        .0
        .insert(gateway.id.clone(), gateway);
    Ok(CreateCarrierGatewayResult {
        carrier_gateway: Some(out),
    })
}

/// `DescribeCarrierGateways`: by ids (each must exist), filters, pages (`MaxResults` 5 to
/// 1000).
pub fn describe_carrier_gateways(
    region: &Region,
    input: DescribeCarrierGatewaysRequest,
) -> Result<DescribeCarrierGatewaysResult, ApiError> {
    let filters = Filters::parse::<(&CarrierGateway, &Region)>(input.filters)?;
    page::check_max_results(input.max_results, 5, 1000)?;
    let kind = Kind::CarrierGateway;
    let found = kind.describe(
        &region.consistency,
        &region.carrier_gateways,
        input.carrier_gateway_ids.as_deref(),
        region.candidates(kind, &filters),
        |g| filters.matches(&(g, region), region.tags.get(&g.id)),
    )?;
    let (items, next) = page::page(
        found,
        |g| g.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeCarrierGatewaysResult {
        carrier_gateways: Some(
            items
                .into_iter()
                .map(|g| render(region, g, CarrierGatewayState::Available))
                .collect(),
        ),
        next_token: next,
    })
}

/// `DeleteCarrierGateway`: answered `deleting`, gone at once; routes to it stay, as
/// `blackhole`.
pub fn delete_carrier_gateway(
    region: &mut Region,
    input: DeleteCarrierGatewayRequest,
) -> Result<DeleteCarrierGatewayResult, ApiError> {
    let id = input.carrier_gateway_id;
    let gateway = Kind::CarrierGateway
        .get(&region.carrier_gateways, &id)?
        .clone();
    let out = render(region, &gateway, CarrierGatewayState::Deleting);
    region.carrier_gateways.0.remove(&id);
    region.by_vpc.remove(&gateway.vpc_id, &id);
    region.tags.remove_resource(&id);
    Ok(DeleteCarrierGatewayResult {
        carrier_gateway: Some(out),
    })
}
