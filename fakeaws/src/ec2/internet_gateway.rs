//! Internet gateways: Create, Attach, Detach, Delete, Describe.

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    AttachInternetGatewayRequest, AttachmentStatus, CreateInternetGatewayRequest,
    CreateInternetGatewayResult, DeleteInternetGatewayRequest, DescribeInternetGatewaysRequest,
    DescribeInternetGatewaysResult, DetachInternetGatewayRequest,
    InternetGateway as InternetGatewayOut, InternetGatewayAttachment, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Internet gateways by id.
    InternetGateways of InternetGateway
}

/// One internet gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct InternetGateway {
    /// `igw-...`.
    pub id: String,
    /// The VPC it is attached to, if any.
    pub vpc_id: Option<String>,
}

impl Filterable for (&InternetGateway, &Region) {
    const NAMES: &'static [&'static str] = &[
        "attachment.state",
        "attachment.vpc-id",
        "internet-gateway-id",
        "owner-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (g, region) = *self;
        match name {
            // AWS reports an attached gateway's attachment as `available`; the model's enum
            // calls it `attached`. Both match.
            "attachment.state" => g
                .vpc_id
                .iter()
                .flat_map(|_| ["available".to_string(), "attached".to_string()])
                .collect(),
            "attachment.vpc-id" => g.vpc_id.iter().cloned().collect(),
            "internet-gateway-id" => one(g.id.clone()),
            "owner-id" => one(region.account_id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, g: &InternetGateway) -> InternetGatewayOut {
    InternetGatewayOut {
        attachments: Some(
            g.vpc_id
                .iter()
                .map(|v| InternetGatewayAttachment {
                    // What AWS answers (and the CLI and SDKs show) for an attached gateway,
                    // although the model's enum says `attached`.
                    state: Some(AttachmentStatus::Available),
                    vpc_id: Some(v.clone()),
                })
                .collect(),
        ),
        internet_gateway_id: Some(g.id.clone()),
        owner_id: Some(region.account_id.clone()),
        tags: region.tags.tag_set(&g.id),
    }
}

impl Region {
    /// The internet gateway attached to `vpc_id`, if any.
    pub fn internet_gateway_of(&self, vpc_id: &str) -> Option<&InternetGateway> {
        self.internet_gateways
            .values()
            .find(|g| g.vpc_id.as_deref() == Some(vpc_id))
    }
}

/// Creates a gateway attached to `vpc_id` (for the default VPC); returns its id.
pub fn create_attached(region: &mut Region, vpc_id: &str) -> String {
    let id = region.ids.resource("igw");
    region.internet_gateways.0.insert(
        id.clone(),
        InternetGateway {
            id: id.clone(),
            vpc_id: Some(vpc_id.to_string()),
        },
    );
    id
}

/// `CreateInternetGateway`.
pub fn create_internet_gateway(
    region: &mut Region,
    input: CreateInternetGatewayRequest,
) -> Result<CreateInternetGatewayResult, ApiError> {
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::InternetGateway,
    )?;
    if region.internet_gateways.len() >= region.limits.internet_gateways {
        return Err(ApiError::new(
            Code::InternetGatewayLimitExceeded,
            "The maximum number of internet gateways has been reached.",
        ));
    }
    let gateway = InternetGateway {
        id: region.ids.resource("igw"),
        vpc_id: None,
    };
    region.tags.insert(&gateway.id, tags);
    let out = render(region, &gateway);
    region
        .internet_gateways
        .0
        .insert(gateway.id.clone(), gateway);
    Ok(CreateInternetGatewayResult {
        internet_gateway: Some(out),
    })
}

/// `AttachInternetGateway`: one gateway per VPC, one VPC per gateway.
pub fn attach_internet_gateway(
    region: &mut Region,
    input: AttachInternetGatewayRequest,
) -> Result<(), ApiError> {
    let gateway =
        Kind::InternetGateway.get(&region.internet_gateways, &input.internet_gateway_id)?;
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    if let Some(attached) = &gateway.vpc_id {
        return Err(ApiError::new(
            Code::ResourceAlreadyAssociated,
            format!(
                "resource {} is already attached to network {attached}",
                gateway.id
            ),
        ));
    }
    if let Some(other) = region.internet_gateway_of(&input.vpc_id) {
        return Err(ApiError::new(
            Code::ResourceAlreadyAssociated,
            format!(
                "resource {} is already associated with internet gateway {}",
                input.vpc_id, other.id
            ),
        ));
    }
    if let Some(g) = region
        .internet_gateways
        .0
        .get_mut(&input.internet_gateway_id)
    {
        g.vpc_id = Some(input.vpc_id);
    }
    Ok(())
}

/// `DetachInternetGateway`.
pub fn detach_internet_gateway(
    region: &mut Region,
    input: DetachInternetGatewayRequest,
) -> Result<(), ApiError> {
    let gateway =
        Kind::InternetGateway.get(&region.internet_gateways, &input.internet_gateway_id)?;
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    if gateway.vpc_id.as_deref() != Some(input.vpc_id.as_str()) {
        return Err(ApiError::new(
            Code::GatewayNotAttached,
            format!(
                "resource {} is not attached to network {}",
                gateway.id, input.vpc_id
            ),
        ));
    }
    let internet_facing_lb = region
        .load_balancers
        .values()
        .any(|lb| lb.vpc_id.as_deref() == Some(input.vpc_id.as_str()) && !lb.internal);
    if internet_facing_lb
        || crate::ec2::network_interface::public_addresses_in(region, &input.vpc_id)
    {
        return Err(ApiError::dependency_violation(format!(
            "Network {} has some mapped public address(es). Please unmap those public address(es) before detaching the gateway.",
            input.vpc_id
        )));
    }
    if let Some(g) = region
        .internet_gateways
        .0
        .get_mut(&input.internet_gateway_id)
    {
        g.vpc_id = None;
    }
    Ok(())
}

/// `DeleteInternetGateway`: refused while attached.
pub fn delete_internet_gateway(
    region: &mut Region,
    input: DeleteInternetGatewayRequest,
) -> Result<(), ApiError> {
    let gateway =
        Kind::InternetGateway.get(&region.internet_gateways, &input.internet_gateway_id)?;
    if gateway.vpc_id.is_some() {
        return Err(ApiError::dependency_violation(format!(
            "The internetGateway '{}' has dependencies and cannot be deleted.",
            gateway.id
        )));
    }
    region
        .internet_gateways
        .0
        .remove(&input.internet_gateway_id);
    region.tags.remove_resource(&input.internet_gateway_id);
    Ok(())
}

/// `DescribeInternetGateways`.
pub fn describe_internet_gateways(
    region: &Region,
    input: DescribeInternetGatewaysRequest,
) -> Result<DescribeInternetGatewaysResult, ApiError> {
    let filters = Filters::parse::<(&InternetGateway, &Region)>(input.filters)?;
    let matching = Kind::InternetGateway.describe(
        &region.consistency,
        &region.internet_gateways,
        input.internet_gateway_ids.as_deref(),
        region.candidates(Kind::InternetGateway, &filters),
        |g| filters.matches(&(g, region), region.tags.get(&g.id)),
    )?;
    let (items, next) = page::page(
        matching,
        |g| g.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInternetGatewaysResult {
        next_token: next,
        internet_gateways: Some(items.into_iter().map(|g| render(region, g)).collect()),
    })
}
