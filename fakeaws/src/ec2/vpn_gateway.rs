//! Virtual private gateways, the VPC side of a Site-to-Site VPN: CreateVpnGateway,
//! DescribeVpnGateways, AttachVpnGateway, DetachVpnGateway, DeleteVpnGateway, and route
//! propagation into a VPC's route tables (EnableVgwRoutePropagation,
//! DisableVgwRoutePropagation).
//!
//! - Made `available` (the CLI's documented output) of type `ipsec.1`, with its Amazon-side
//!   ASN (64512 unless given; a private 16-bit ASN 64512..65534 or 32-bit one
//!   4200000000..4294967294, as the model documents), in a zone if one is named; the quota
//!   `vpn-gateways` (5 per region, AWS's default; `VpnGatewayLimitExceeded`).
//! - Attached to one VPC at a time, a VPC holding one: another attachment is
//!   `VpnGatewayAttachmentLimitExceeded` (AWS's code); answered `attaching`, described
//!   `attached`; detached, the attachment stays listed `detached`, as AWS lists it. An attached
//!   gateway holds its VPC (`DependencyViolation` from DeleteVpc) and keeps itself from
//!   deletion (`IncorrectState`); a detach of a gateway not attached there is
//!   `InvalidVpnGatewayAttachment.NotFound` (the code Terraform's AWS provider matches).
//! - Routes may target an attached gateway (`GatewayId vgw-...`, a `blackhole` once it is
//!   detached); route propagation lists the gateway in a table's `PropagatingVgws` while it is
//!   attached to the table's VPC (`Gateway.NotAttached` otherwise); the static routes of its
//!   VPN connections (`vpn_connection`) are propagated there. A gateway with a VPN connection
//!   (not deleted) is not deleted (`IncorrectState`).

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, tags};
use crate::generated::ec2::{
    AttachVpnGatewayRequest, AttachVpnGatewayResult, AttachmentStatus, CreateVpnGatewayRequest,
    CreateVpnGatewayResult, DeleteVpnGatewayRequest, DescribeVpnGatewaysRequest,
    DescribeVpnGatewaysResult, DetachVpnGatewayRequest, DisableVgwRoutePropagationRequest,
    EnableVgwRoutePropagationRequest, GatewayType, ResourceType, VpcAttachment,
    VpnGateway as VpnGatewayOut, VpnState,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Virtual private gateways by id.
    VpnGateways of VpnGateway
}

/// One virtual private gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VpnGateway {
    /// `vgw-...`.
    pub id: String,
    /// The Amazon-side ASN.
    pub asn: i64,
    /// The zone named at creation, if any.
    pub zone: Option<String>,
    /// The VPC it is attached to, if any.
    pub vpc_id: Option<String>,
    /// The VPCs it was attached to and is no more, as AWS still lists them (`detached`).
    pub detached: Vec<String>,
}

/// The ASN a gateway takes: 64512 unless given; a private 16-bit or 32-bit ASN.
fn asn_of(given: Option<i64>) -> Result<i64, ApiError> {
    let asn = given.unwrap_or(64512);
    let private = (64512..=65534).contains(&asn) || (4_200_000_000..=4_294_967_294).contains(&asn);
    if !private {
        return Err(ApiError::invalid_parameter(
            "AmazonSideAsn",
            &asn.to_string(),
            "The ASN must be a private ASN: 64512 to 65534, or 4200000000 to 4294967294.",
        ));
    }
    Ok(asn)
}

impl Filterable for &VpnGateway {
    const NAMES: &'static [&'static str] = &[
        "amazon-side-asn",
        "attachment.state",
        "attachment.vpc-id",
        "availability-zone",
        "state",
        "type",
        "vpn-gateway-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let g = *self;
        match name {
            "amazon-side-asn" => one(g.asn.to_string()),
            "attachment.state" => attachments(g)
                .iter()
                .filter_map(|a| a.state.map(|s| s.as_str().to_string()))
                .collect(),
            "attachment.vpc-id" => attachments(g)
                .iter()
                .filter_map(|a| a.vpc_id.clone())
                .collect(),
            "availability-zone" => g.zone.iter().cloned().collect(),
            "state" => one(VpnState::Available.as_str()),
            "type" => one(GatewayType::Ipsec1.as_str()),
            "vpn-gateway-id" => one(g.id.clone()),
            _ => Vec::new(),
        }
    }
}

fn attachments(g: &VpnGateway) -> Vec<VpcAttachment> {
    let attached = g.vpc_id.iter().map(|v| VpcAttachment {
        vpc_id: Some(v.clone()),
        state: Some(AttachmentStatus::Attached),
    });
    let detached = g.detached.iter().map(|v| VpcAttachment {
        vpc_id: Some(v.clone()),
        state: Some(AttachmentStatus::Detached),
    });
    attached.chain(detached).collect()
}

fn render(region: &Region, g: &VpnGateway) -> VpnGatewayOut {
    VpnGatewayOut {
        amazon_side_asn: Some(g.asn),
        tags: region.tags.tag_set(&g.id),
        vpn_gateway_id: Some(g.id.clone()),
        state: Some(VpnState::Available),
        r#type: Some(GatewayType::Ipsec1),
        availability_zone: g.zone.clone(),
        vpc_attachments: Some(attachments(g)),
    }
}

/// The gateway attached to `vpc_id`, if any.
pub fn of_vpc<'r>(region: &'r Region, vpc_id: &str) -> Option<&'r VpnGateway> {
    region
        .vpn_gateways
        .values()
        .find(|g| g.vpc_id.as_deref() == Some(vpc_id))
}

/// Whether gateway `id` is attached to `vpc_id` (a route to it carries traffic).
pub fn is_attached_to(region: &Region, id: &str, vpc_id: &str) -> bool {
    region
        .vpn_gateways
        .get(id)
        .is_some_and(|g| g.vpc_id.as_deref() == Some(vpc_id))
}

/// `CreateVpnGateway`.
pub fn create_vpn_gateway(
    region: &mut Region,
    input: CreateVpnGatewayRequest,
) -> Result<CreateVpnGatewayResult, ApiError> {
    let asn = asn_of(input.amazon_side_asn)?;
    let zone = match input.availability_zone {
        Some(z) => Some(region.zone_named(Some(&z), None)?),
        None => None,
    };
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::VpnGateway,
    )?;
    if region.vpn_gateways.len() >= region.limits.vpn_gateways {
        return Err(ApiError::new(
            Code::VpnGatewayLimitExceeded,
            "You've reached the limit on the number of virtual private gateways that you can create.",
        ));
    }
    let gateway = VpnGateway {
        id: region.ids.resource(Kind::VpnGateway.prefix()),
        asn,
        zone,
        vpc_id: None,
        detached: Vec::new(),
    };
    region.tags.insert(&gateway.id, tags);
    let out = render(region, &gateway);
    region.vpn_gateways.0.insert(gateway.id.clone(), gateway);
    Ok(CreateVpnGatewayResult {
        vpn_gateway: Some(out),
    })
}

/// `DescribeVpnGateways`: by ids (each must exist) and filters; AWS does not page it.
pub fn describe_vpn_gateways(
    region: &Region,
    input: DescribeVpnGatewaysRequest,
) -> Result<DescribeVpnGatewaysResult, ApiError> {
    let filters = Filters::parse::<&VpnGateway>(input.filters)?;
    let found = Kind::VpnGateway.describe(
        &region.consistency,
        &region.vpn_gateways,
        input.vpn_gateway_ids.as_deref(),
        None,
        |g| filters.matches(&g, region.tags.get(&g.id)),
    )?;
    Ok(DescribeVpnGatewaysResult {
        vpn_gateways: Some(found.into_iter().map(|g| render(region, g)).collect()),
    })
}

/// `AttachVpnGateway`: answered `attaching`.
pub fn attach_vpn_gateway(
    region: &mut Region,
    input: AttachVpnGatewayRequest,
) -> Result<AttachVpnGatewayResult, ApiError> {
    let gateway = Kind::VpnGateway.get(&region.vpn_gateways, &input.vpn_gateway_id)?;
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    if let Some(attached) = &gateway.vpc_id {
        return Err(ApiError::new(
            Code::VpnGatewayAttachmentLimitExceeded,
            format!(
                "You've reached the limit on the number of VPCs that can be attached to the virtual private gateway {}: it is attached to {attached}.",
                gateway.id
            ),
        ));
    }
    if let Some(other) = of_vpc(region, &input.vpc_id) {
        return Err(ApiError::new(
            Code::VpnGatewayAttachmentLimitExceeded,
            format!(
                "The VPC {} already has the virtual private gateway {} attached.",
                input.vpc_id, other.id
            ),
        ));
    }
    let (id, vpc_id) = (input.vpn_gateway_id, input.vpc_id);
    if let Some(g) = region.vpn_gateways.0.get_mut(&id) {
        g.detached.retain(|v| *v != vpc_id);
        g.vpc_id = Some(vpc_id.clone());
    }
    region.by_vpc.insert(&vpc_id, &id);
    Ok(AttachVpnGatewayResult {
        vpc_attachment: Some(VpcAttachment {
            vpc_id: Some(vpc_id),
            state: Some(AttachmentStatus::Attaching),
        }),
    })
}

/// `DetachVpnGateway`: the attachment listed `detached`; the gateway's propagation into the
/// VPC's route tables ends.
pub fn detach_vpn_gateway(
    region: &mut Region,
    input: DetachVpnGatewayRequest,
) -> Result<(), ApiError> {
    let gateway = Kind::VpnGateway.get(&region.vpn_gateways, &input.vpn_gateway_id)?;
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    if gateway.vpc_id.as_deref() != Some(input.vpc_id.as_str()) {
        return Err(ApiError::new(
            Code::InvalidVpnGatewayAttachmentNotFound,
            format!(
                "The attachment with vpn gateway ID '{}' and vpc ID '{}' does not exist",
                gateway.id, input.vpc_id
            ),
        ));
    }
    let (id, vpc_id) = (input.vpn_gateway_id, input.vpc_id);
    if let Some(g) = region.vpn_gateways.0.get_mut(&id) {
        g.vpc_id = None;
        g.detached.retain(|v| *v != vpc_id);
        g.detached.push(vpc_id.clone());
    }
    region.by_vpc.remove(&vpc_id, &id);
    crate::ec2::route_table::stop_propagation(region, &vpc_id, &id);
    Ok(())
}

/// `DeleteVpnGateway`: refused while attached.
pub fn delete_vpn_gateway(
    region: &mut Region,
    input: DeleteVpnGatewayRequest,
) -> Result<(), ApiError> {
    let gateway = Kind::VpnGateway.get(&region.vpn_gateways, &input.vpn_gateway_id)?;
    if let Some(vpc) = &gateway.vpc_id {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "The virtual private gateway '{}' is attached to {vpc}: detach it first.",
                gateway.id
            ),
        ));
    }
    if let Some(c) = crate::ec2::vpn_connection::of_vpn_gateway(region, &gateway.id) {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "The virtual private gateway '{}' has the VPN connection {c}: delete it first.",
                gateway.id
            ),
        ));
    }
    region.vpn_gateways.0.remove(&input.vpn_gateway_id);
    region.tags.remove_resource(&input.vpn_gateway_id);
    Ok(())
}

/// `EnableVgwRoutePropagation`: the gateway must be attached to the table's VPC.
pub fn enable_vgw_route_propagation(
    region: &mut Region,
    input: EnableVgwRoutePropagationRequest,
) -> Result<(), ApiError> {
    let gateway = Kind::VpnGateway.get(&region.vpn_gateways, &input.gateway_id)?;
    let table = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    if gateway.vpc_id.as_deref() != Some(table.vpc_id.as_str()) {
        return Err(ApiError::new(
            Code::GatewayNotAttached,
            format!(
                "resource {} is not attached to network {}",
                gateway.id, table.vpc_id
            ),
        ));
    }
    crate::ec2::route_table::propagate(region, &input.route_table_id, &input.gateway_id, true);
    Ok(())
}

/// `DisableVgwRoutePropagation`.
pub fn disable_vgw_route_propagation(
    region: &mut Region,
    input: DisableVgwRoutePropagationRequest,
) -> Result<(), ApiError> {
    Kind::VpnGateway.get(&region.vpn_gateways, &input.gateway_id)?;
    Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    crate::ec2::route_table::propagate(region, &input.route_table_id, &input.gateway_id, false);
    Ok(())
}
