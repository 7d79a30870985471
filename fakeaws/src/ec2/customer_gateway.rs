//! Customer gateways, the customer's end of a Site-to-Site VPN: CreateCustomerGateway,
//! DescribeCustomerGateways, DeleteCustomerGateway.
//!
//! - Made `available` (the AWS CLI's documented output) of type `ipsec.1`, with the device's
//!   outside address (`IpAddress`, or the deprecated `PublicIp`; an IPv4 address), its BGP ASN
//!   (`BgpAsn` 1 to 2,147,483,647, 65000 by default, or `BgpAsnExtended` above that, not both),
//!   a device name and a certificate ARN if given. As the API reference says, an identical
//!   request (type, address, ASN and device name) answers the gateway that exists instead of
//!   making another. The quota `customer-gateways` (50 a region, AWS's default;
//!   `CustomerGatewayLimitExceeded`).
//! - Deleted, a gateway is listed `deleted` (as AWS lists it a while); one a VPN connection
//!   still uses is refused with `IncorrectState`.

use std::net::Ipv4Addr;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, tags};
use crate::generated::ec2::{
    CreateCustomerGatewayRequest, CreateCustomerGatewayResult,
    CustomerGateway as CustomerGatewayOut, DeleteCustomerGatewayRequest,
    DescribeCustomerGatewaysRequest, DescribeCustomerGatewaysResult, GatewayType, ResourceType,
    VpnState,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Customer gateways by id.
    CustomerGateways of CustomerGateway
}

/// One customer gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CustomerGateway {
    /// `cgw-...`.
    pub id: String,
    /// The device's outside address, if given.
    pub ip_address: Option<Ipv4Addr>,
    /// Its BGP ASN.
    pub asn: i64,
    /// The device's name, if given.
    pub device_name: Option<String>,
    /// The certificate's ARN, if given.
    pub certificate_arn: Option<String>,
    /// `available` or `deleted`.
    pub state: VpnState,
}

/// The ASN a gateway takes from `BgpAsn` or `BgpAsnExtended` (65000 without either).
fn asn_of(asn: Option<i32>, extended: Option<i64>) -> Result<i64, ApiError> {
    match (asn, extended) {
        (Some(_), Some(_)) => Err(ApiError::invalid_combination(
            "Specify either BgpAsn or BgpAsnExtended, not both.",
        )),
        (Some(a), None) if a < 1 => Err(ApiError::invalid_parameter(
            "BgpAsn",
            &a.to_string(),
            "The ASN must be 1 to 2147483647.",
        )),
        (Some(a), None) => Ok(i64::from(a)),
        (None, Some(e)) if !(2_147_483_648..=4_294_967_295).contains(&e) => {
            Err(ApiError::invalid_parameter(
                "BgpAsnExtended",
                &e.to_string(),
                "The ASN must be 2147483648 to 4294967295.",
            ))
        }
        (None, Some(e)) => Ok(e),
        (None, None) => Ok(65000),
    }
}

impl Filterable for &CustomerGateway {
    const NAMES: &'static [&'static str] = &[
        "bgp-asn",
        "customer-gateway-id",
        "ip-address",
        "state",
        "type",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let g = *self;
        match name {
            "bgp-asn" => one(g.asn.to_string()),
            "customer-gateway-id" => one(g.id.clone()),
            "ip-address" => g.ip_address.iter().map(ToString::to_string).collect(),
            "state" => one(g.state.as_str()),
            "type" => one(GatewayType::Ipsec1.as_str()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, g: &CustomerGateway) -> CustomerGatewayOut {
    let extended = g.asn > i64::from(i32::MAX);
    CustomerGatewayOut {
        certificate_arn: g.certificate_arn.clone(),
        device_name: g.device_name.clone(),
        tags: region.tags.tag_set(&g.id),
        bgp_asn_extended: extended.then(|| g.asn.to_string()),
        customer_gateway_id: Some(g.id.clone()),
        state: Some(g.state.as_str().to_string()),
        r#type: Some(GatewayType::Ipsec1.as_str().to_string()),
        ip_address: g.ip_address.map(|ip| ip.to_string()),
        bgp_asn: (!extended).then(|| g.asn.to_string()),
    }
}

/// The gateway `id`, which must exist and not be deleted (`InvalidCustomerGatewayID.NotFound`).
pub fn live<'r>(region: &'r Region, id: &str) -> Result<&'r CustomerGateway, ApiError> {
    let g = Kind::CustomerGateway.get(&region.customer_gateways, id)?;
    if g.state == VpnState::Deleted {
        return Err(Kind::CustomerGateway.not_found(&[id]));
    }
    Ok(g)
}

/// `CreateCustomerGateway`.
pub fn create_customer_gateway(
    region: &mut Region,
    input: CreateCustomerGatewayRequest,
) -> Result<CreateCustomerGatewayResult, ApiError> {
    let asn = asn_of(input.bgp_asn, input.bgp_asn_extended)?;
    let raw_ip = match (&input.ip_address, &input.public_ip) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_combination(
                "Specify either IpAddress or PublicIp, not both.",
            ));
        }
        (Some(ip), None) | (None, Some(ip)) => Some(ip.as_str()),
        (None, None) => None,
    };
    let ip_address =
        match raw_ip {
            Some(raw) => Some(raw.parse::<Ipv4Addr>().map_err(|_| {
                ApiError::invalid_parameter("IpAddress", raw, "Not an IPv4 address.")
            })?),
            None if input.certificate_arn.is_none() => {
                return Err(ApiError::missing_parameter("IpAddress"));
            }
            None => None,
        };
    if let Some(name) = &input.device_name
        && name.chars().count() > 255
    {
        return Err(ApiError::invalid_parameter(
            "DeviceName",
            name,
            "The device name is at most 255 characters.",
        ));
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::CustomerGateway,
    )?;
    // An identical request answers the gateway that exists.
    if let Some(same) = region.customer_gateways.values().find(|g| {
        g.state != VpnState::Deleted
            && g.ip_address == ip_address
            && g.asn == asn
            && g.device_name == input.device_name
    }) {
        return Ok(CreateCustomerGatewayResult {
            customer_gateway: Some(render(region, same)),
        });
    }
    let live = region
        .customer_gateways
        .values()
        .filter(|g| g.state != VpnState::Deleted)
        .count();
    if live >= region.limits.customer_gateways {
        return Err(ApiError::new(
            Code::CustomerGatewayLimitExceeded,
            "You've reached the limit on the number of customer gateways that you can create.",
        ));
    }
    let gateway = CustomerGateway {
        id: region.ids.resource(Kind::CustomerGateway.prefix()),
        ip_address,
        asn,
        device_name: input.device_name,
        certificate_arn: input.certificate_arn,
        state: VpnState::Available,
    };
    region.tags.insert(&gateway.id, tags);
    let out = render(region, &gateway);
    region
        .customer_gateways
        .0
        .insert(gateway.id.clone(), gateway);
    Ok(CreateCustomerGatewayResult {
        customer_gateway: Some(out),
    })
}

/// `DescribeCustomerGateways`: by ids (each must exist) and filters; AWS does not page it.
pub fn describe_customer_gateways(
    region: &Region,
    input: DescribeCustomerGatewaysRequest,
) -> Result<DescribeCustomerGatewaysResult, ApiError> {
    let filters = Filters::parse::<&CustomerGateway>(input.filters)?;
    let found = Kind::CustomerGateway.describe(
        &region.consistency,
        &region.customer_gateways,
        input.customer_gateway_ids.as_deref(),
        None,
        |g| filters.matches(&g, region.tags.get(&g.id)),
    )?;
    Ok(DescribeCustomerGatewaysResult {
        customer_gateways: Some(found.into_iter().map(|g| render(region, g)).collect()),
    })
}

/// `DeleteCustomerGateway`: refused while a VPN connection uses the gateway; a deleted one
/// stays listed `deleted`.
pub fn delete_customer_gateway(
    region: &mut Region,
    input: DeleteCustomerGatewayRequest,
) -> Result<(), ApiError> {
    let id = input.customer_gateway_id;
    Kind::CustomerGateway.get(&region.customer_gateways, &id)?;
    if let Some(c) = crate::ec2::vpn_connection::of_customer_gateway(region, &id) {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!("The customer gateway '{id}' is in use by the VPN connection '{c}'."),
        ));
    }
    if let Some(g) = region.customer_gateways.0.get_mut(&id) {
        g.state = VpnState::Deleted;
    }
    Ok(())
}
