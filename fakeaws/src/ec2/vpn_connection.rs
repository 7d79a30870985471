//! Site-to-Site VPN connections between a virtual private gateway and a customer gateway:
//! CreateVpnConnection, DescribeVpnConnections, DeleteVpnConnection, and their static routes
//! (CreateVpnConnectionRoute, DeleteVpnConnectionRoute).
//!
//! - A connection is `pending`, then `available` at the clock's next step (transition subject
//!   `vpnConnection`); deleted, `deleting`, then `deleted`, still listed as AWS lists it. It
//!   has two tunnels, each with an outside address of AWS's (from the region's public address
//!   pool), an inside /30 of 169.254.0.0/16 (named, or picked outside the model's reserved
//!   blocks and those of the gateway's other connections) and a pre-shared key (named, or made
//!   of the characters the model allows). `CustomerGatewayConfiguration` is AWS's native XML
//!   document for the customer's device (`vpn_connection` with an `ipsec_tunnel` per tunnel),
//!   answered while the connection is `pending` or `available`, as the API reference says. No
//!   device stands at the customer's end, so both tunnels are `DOWN` in `VgwTelemetry`.
//! - As the API reference says, the call is idempotent: the same customer gateway and virtual
//!   private gateway answer the connection they have.
//! - Static routes (a connection with `StaticRoutesOnly`) are `pending`, then `available`;
//!   the `available` routes of an `available` connection are propagated into the route tables
//!   the gateway propagates to (`EnableVgwRoutePropagation`): `route_table` lists them with
//!   origin `EnableVgwRoutePropagation`.

use std::net::Ipv4Addr;

use aws_smithy_types::DateTime;
use ipnet::Ipv4Net;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, elastic_ip, tags};
use crate::generated::ec2::{
    CreateVpnConnectionRequest, CreateVpnConnectionResult, CreateVpnConnectionRouteRequest,
    DeleteVpnConnectionRequest, DeleteVpnConnectionRouteRequest, DescribeVpnConnectionsRequest,
    DescribeVpnConnectionsResult, GatewayAssociationState, GatewayType, ResourceType,
    TelemetryStatus, TunnelInsideIpVersion, TunnelOption, VgwTelemetry,
    VpnConnection as VpnConnectionOut, VpnConnectionOptions, VpnConnectionOptionsSpecification,
    VpnState, VpnStaticRoute, VpnStaticRouteSource, VpnTunnelOptionsSpecification,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// VPN connections by id.
    VpnConnections of VpnConnection
}

/// One VPN connection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VpnConnection {
    /// `vpn-...`.
    pub id: String,
    /// The customer gateway.
    pub customer_gateway_id: String,
    /// The virtual private gateway.
    pub vpn_gateway_id: String,
    /// `pending`, `available`, `deleting` or `deleted`.
    pub state: VpnState,
    /// Whether it routes by static routes only (no BGP).
    pub static_routes_only: bool,
    /// The customer's side (`LocalIpv4NetworkCidr`).
    #[serde(with = "crate::state::with::text")]
    pub local: Ipv4Net,
    /// AWS's side (`RemoteIpv4NetworkCidr`).
    #[serde(with = "crate::state::with::text")]
    pub remote: Ipv4Net,
    /// Its two tunnels.
    pub tunnels: Vec<Tunnel>,
    /// Its static routes.
    pub routes: Vec<StaticRoute>,
    /// When its state last changed.
    #[serde(with = "crate::state::with::time")]
    pub changed: DateTime,
}

/// One tunnel of a connection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Tunnel {
    /// AWS's outside address.
    pub outside: Ipv4Addr,
    /// The inside /30: AWS's end the first host, the customer's the second.
    #[serde(with = "crate::state::with::text")]
    pub inside: Ipv4Net,
    /// The pre-shared key.
    pub psk: String,
}

/// One static route of a connection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StaticRoute {
    /// The customer network it reaches.
    #[serde(with = "crate::state::with::text")]
    pub destination: Ipv4Net,
    /// `pending`, `available` or `deleting`.
    pub state: VpnState,
}

/// The /30s of 169.254.0.0/16 the model reserves.
const RESERVED_INSIDE: [[u8; 4]; 7] = [
    [169, 254, 0, 0],
    [169, 254, 1, 0],
    [169, 254, 2, 0],
    [169, 254, 3, 0],
    [169, 254, 4, 0],
    [169, 254, 5, 0],
    [169, 254, 169, 252],
];

/// How many VPN connections a virtual private gateway takes (AWS: 10, adjustable).
const PER_GATEWAY: usize = 10;

fn live(c: &VpnConnection) -> bool {
    !matches!(c.state, VpnState::Deleting | VpnState::Deleted)
}

/// A connection that still uses customer gateway `id`, if any.
pub fn of_customer_gateway(region: &Region, id: &str) -> Option<String> {
    region
        .vpn_connections
        .values()
        .find(|c| live(c) && c.customer_gateway_id == id)
        .map(|c| c.id.clone())
}

/// A connection that still uses virtual private gateway `id`, if any.
pub fn of_vpn_gateway(region: &Region, id: &str) -> Option<String> {
    region
        .vpn_connections
        .values()
        .find(|c| live(c) && c.vpn_gateway_id == id)
        .map(|c| c.id.clone())
}

/// The routes virtual private gateway `vgw` propagates: the `available` static routes of its
/// `available` connections.
pub fn propagated_routes(region: &Region, vgw: &str) -> Vec<Ipv4Net> {
    let mut out: Vec<Ipv4Net> = region
        .vpn_connections
        .values()
        .filter(|c| c.vpn_gateway_id == vgw && c.state == VpnState::Available)
        .flat_map(|c| c.routes.iter())
        .filter(|r| r.state == VpnState::Available)
        .map(|r| r.destination)
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Filterable for (&VpnConnection, &Region) {
    const NAMES: &'static [&'static str] = &[
        "bgp-asn",
        "customer-gateway-configuration",
        "customer-gateway-id",
        "option.static-routes-only",
        "route.destination-cidr-block",
        "state",
        "transit-gateway-id",
        "type",
        "vpn-connection-id",
        "vpn-gateway-id",
    ];
    // No transit gateways.
    const NEVER_SET: &'static [&'static str] = &["transit-gateway-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (c, region) = *self;
        match name {
            "bgp-asn" => region
                .customer_gateways
                .get(&c.customer_gateway_id)
                .map(|g| g.asn.to_string())
                .into_iter()
                .collect(),
            "customer-gateway-configuration" => configuration(region, c).into_iter().collect(),
            "customer-gateway-id" => one(c.customer_gateway_id.clone()),
            "option.static-routes-only" => flag(c.static_routes_only),
            "route.destination-cidr-block" => c
                .routes
                .iter()
                .map(|r| crate::ec2::vpc::cidr_text(&r.destination))
                .collect(),
            "state" => one(c.state.as_str()),
            "type" => one(GatewayType::Ipsec1.as_str()),
            "vpn-connection-id" => one(c.id.clone()),
            "vpn-gateway-id" => one(c.vpn_gateway_id.clone()),
            _ => Vec::new(),
        }
    }
}

/// AWS's native XML configuration for the customer's device, while the connection is
/// `pending` or `available`.
fn configuration(region: &Region, c: &VpnConnection) -> Option<String> {
    if !live(c) {
        return None;
    }
    let customer = region.customer_gateways.get(&c.customer_gateway_id);
    let customer_outside = customer
        .and_then(|g| g.ip_address)
        .map(|ip| ip.to_string())
        .unwrap_or_default();
    let customer_asn = customer.map_or(65000, |g| g.asn);
    let amazon_asn = region
        .vpn_gateways
        .get(&c.vpn_gateway_id)
        .map_or(64512, |g| g.asn);
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!("<vpn_connection id=\"{}\">\n", c.id));
    x.push_str(&format!(
        "  <customer_gateway_id>{}</customer_gateway_id>\n",
        c.customer_gateway_id
    ));
    x.push_str(&format!(
        "  <vpn_gateway_id>{}</vpn_gateway_id>\n",
        c.vpn_gateway_id
    ));
    x.push_str("  <vpn_connection_type>ipsec.1</vpn_connection_type>\n");
    x.push_str(&format!(
        "  <vpn_connection_attributes>{}</vpn_connection_attributes>\n",
        if c.static_routes_only {
            "NoBGPVPNConnection"
        } else {
            "BGPVPNConnection"
        }
    ));
    for t in &c.tunnels {
        let hosts: Vec<Ipv4Addr> = t.inside.hosts().collect();
        let (amazon_inside, customer_inside) = match hosts.as_slice() {
            [a, b] => (*a, *b),
            _ => (t.inside.network(), t.inside.broadcast()),
        };
        x.push_str("  <ipsec_tunnel>\n");
        for (side, outside, inside, asn) in [
            (
                "customer_gateway",
                customer_outside.clone(),
                customer_inside,
                customer_asn,
            ),
            (
                "vpn_gateway",
                t.outside.to_string(),
                amazon_inside,
                amazon_asn,
            ),
        ] {
            x.push_str(&format!("    <{side}>\n"));
            x.push_str(&format!(
                "      <tunnel_outside_address>\n        <ip_address>{outside}</ip_address>\n      </tunnel_outside_address>\n"
            ));
            x.push_str(&format!(
                "      <tunnel_inside_address>\n        <ip_address>{inside}</ip_address>\n        <network_mask>{}</network_mask>\n        <network_cidr>{}</network_cidr>\n      </tunnel_inside_address>\n",
                t.inside.netmask(),
                t.inside.prefix_len()
            ));
            if !c.static_routes_only {
                x.push_str(&format!(
                    "      <bgp>\n        <asn>{asn}</asn>\n        <hold_time>30</hold_time>\n      </bgp>\n"
                ));
            }
            x.push_str(&format!("    </{side}>\n"));
        }
        x.push_str(&format!(
            "    <ike>\n      <authentication_protocol>sha1</authentication_protocol>\n      <encryption_protocol>aes-128-cbc</encryption_protocol>\n      <lifetime>28800</lifetime>\n      <perfect_forward_secrecy>group2</perfect_forward_secrecy>\n      <mode>main</mode>\n      <pre_shared_key>{}</pre_shared_key>\n    </ike>\n",
            t.psk
        ));
        x.push_str("    <ipsec>\n      <protocol>esp</protocol>\n      <authentication_protocol>hmac-sha1-96</authentication_protocol>\n      <encryption_protocol>aes-128-cbc</encryption_protocol>\n      <lifetime>3600</lifetime>\n      <perfect_forward_secrecy>group2</perfect_forward_secrecy>\n      <mode>tunnel</mode>\n      <clear_df_bit>true</clear_df_bit>\n      <fragmentation_before_encryption>true</fragmentation_before_encryption>\n      <tcp_mss_adjustment>1379</tcp_mss_adjustment>\n      <dead_peer_detection>\n        <interval>10</interval>\n        <retries>3</retries>\n      </dead_peer_detection>\n    </ipsec>\n");
        x.push_str("  </ipsec_tunnel>\n");
    }
    x.push_str("</vpn_connection>");
    Some(x)
}

fn render(region: &Region, c: &VpnConnection) -> VpnConnectionOut {
    VpnConnectionOut {
        category: Some("VPN".to_string()),
        gateway_association_state: Some(if live(c) {
            GatewayAssociationState::Associated
        } else {
            GatewayAssociationState::NotAssociated
        }),
        options: Some(VpnConnectionOptions {
            enable_acceleration: Some(false),
            static_routes_only: Some(c.static_routes_only),
            local_ipv4_network_cidr: Some(crate::ec2::vpc::cidr_text(&c.local)),
            remote_ipv4_network_cidr: Some(crate::ec2::vpc::cidr_text(&c.remote)),
            outside_ip_address_type: Some("PublicIpv4".to_string()),
            tunnel_inside_ip_version: Some(TunnelInsideIpVersion::Ipv4),
            tunnel_options: Some(
                c.tunnels
                    .iter()
                    .map(|t| TunnelOption {
                        outside_ip_address: Some(t.outside.to_string()),
                        tunnel_inside_cidr: Some(t.inside.to_string()),
                        pre_shared_key: Some(t.psk.clone()),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        routes: Some(
            c.routes
                .iter()
                .map(|r| VpnStaticRoute {
                    destination_cidr_block: Some(crate::ec2::vpc::cidr_text(&r.destination)),
                    source: Some(VpnStaticRouteSource::Static),
                    state: Some(r.state),
                })
                .collect(),
        ),
        tags: region.tags.tag_set(&c.id),
        vgw_telemetry: Some(
            c.tunnels
                .iter()
                .map(|t| VgwTelemetry {
                    accepted_route_count: Some(0),
                    last_status_change: Some(c.changed),
                    outside_ip_address: Some(t.outside.to_string()),
                    status: Some(TelemetryStatus::DOWN),
                    status_message: Some(String::new()),
                    certificate_arn: None,
                })
                .collect(),
        ),
        vpn_connection_id: Some(c.id.clone()),
        state: Some(c.state),
        customer_gateway_configuration: configuration(region, c),
        r#type: Some(GatewayType::Ipsec1),
        customer_gateway_id: Some(c.customer_gateway_id.clone()),
        vpn_gateway_id: Some(c.vpn_gateway_id.clone()),
        ..Default::default()
    }
}

/// An IPv4 CIDR option (`LocalIpv4NetworkCidr`, `RemoteIpv4NetworkCidr`), 0.0.0.0/0 by
/// default.
fn network_option(name: &str, raw: Option<&str>) -> Result<Ipv4Net, ApiError> {
    match raw {
        None => Ok(Ipv4Net::default()),
        Some(raw) => raw
            .parse::<Ipv4Net>()
            .ok()
            .filter(|n| n.trunc() == *n)
            .ok_or_else(|| ApiError::invalid_parameter(name, raw, "Not an IPv4 CIDR block.")),
    }
}

/// Fails on an option a virtual private gateway's connection does not take, or one the fake
/// does not serve.
fn check_options(o: &VpnConnectionOptionsSpecification) -> Result<(), ApiError> {
    let transit_only = [
        ("EnableAcceleration", o.enable_acceleration == Some(true)),
        (
            "TunnelInsideIpVersion",
            o.tunnel_inside_ip_version == Some(TunnelInsideIpVersion::Ipv6),
        ),
        ("LocalIpv6NetworkCidr", o.local_ipv6_network_cidr.is_some()),
        (
            "RemoteIpv6NetworkCidr",
            o.remote_ipv6_network_cidr.is_some(),
        ),
        (
            "OutsideIpAddressType",
            o.outside_ip_address_type
                .as_deref()
                .is_some_and(|t| t != "PublicIpv4"),
        ),
        (
            "TransportTransitGatewayAttachmentId",
            o.transport_transit_gateway_attachment_id.is_some(),
        ),
    ];
    if let Some((name, _)) = transit_only.iter().find(|(_, set)| *set) {
        return Err(ApiError::invalid_value(format!(
            "The option {name} is supported only for VPN connections on a transit gateway."
        )));
    }
    if o.tunnel_bandwidth.is_some() {
        return Err(not_served("TunnelBandwidth"));
    }
    Ok(())
}

fn not_served(member: &str) -> ApiError {
    ApiError::not_implemented(format!(
        "fakeaws does not implement the VPN option {member} of CreateVpnConnection"
    ))
}

/// Fails on a tunnel option the fake does not serve (all but `TunnelInsideCidr` and
/// `PreSharedKey`).
fn check_tunnel_options(t: &VpnTunnelOptionsSpecification) -> Result<(), ApiError> {
    let others = [
        ("TunnelInsideIpv6Cidr", t.tunnel_inside_ipv6_cidr.is_some()),
        ("Phase1LifetimeSeconds", t.phase1_lifetime_seconds.is_some()),
        ("Phase2LifetimeSeconds", t.phase2_lifetime_seconds.is_some()),
        (
            "RekeyMarginTimeSeconds",
            t.rekey_margin_time_seconds.is_some(),
        ),
        ("RekeyFuzzPercentage", t.rekey_fuzz_percentage.is_some()),
        ("ReplayWindowSize", t.replay_window_size.is_some()),
        ("DPDTimeoutSeconds", t.dpd_timeout_seconds.is_some()),
        ("DPDTimeoutAction", t.dpd_timeout_action.is_some()),
        (
            "Phase1EncryptionAlgorithms",
            t.phase1_encryption_algorithms.is_some(),
        ),
        (
            "Phase2EncryptionAlgorithms",
            t.phase2_encryption_algorithms.is_some(),
        ),
        (
            "Phase1IntegrityAlgorithms",
            t.phase1_integrity_algorithms.is_some(),
        ),
        (
            "Phase2IntegrityAlgorithms",
            t.phase2_integrity_algorithms.is_some(),
        ),
        ("Phase1DHGroupNumbers", t.phase1_dh_group_numbers.is_some()),
        ("Phase2DHGroupNumbers", t.phase2_dh_group_numbers.is_some()),
        ("IKEVersions", t.ike_versions.is_some()),
        ("StartupAction", t.startup_action.is_some()),
        ("LogOptions", t.log_options.is_some()),
        (
            "EnableTunnelLifecycleControl",
            t.enable_tunnel_lifecycle_control.is_some(),
        ),
        (
            "Phase1AdditionalKeyExchanges",
            t.phase1_additional_key_exchanges.is_some(),
        ),
        (
            "Phase2AdditionalKeyExchanges",
            t.phase2_additional_key_exchanges.is_some(),
        ),
    ];
    match others.iter().find(|(_, set)| *set) {
        Some((name, _)) => Err(not_served(&format!("TunnelOptions.{name}"))),
        None => Ok(()),
    }
}

/// A tunnel's inside CIDR as the model constrains it: a /30 of 169.254.0.0/16 outside the
/// reserved blocks.
fn check_inside(raw: &str) -> Result<Ipv4Net, ApiError> {
    let bad = |why: &str| ApiError::invalid_parameter("TunnelInsideCidr", raw, why);
    let net = raw
        .parse::<Ipv4Net>()
        .map_err(|_| bad("Not an IPv4 CIDR block."))?;
    let link_local = Ipv4Net::new(Ipv4Addr::new(169, 254, 0, 0), 16)
        .map_err(|_| bad("Not an IPv4 CIDR block."))?;
    if net.prefix_len() != 30 || net.trunc() != net || !link_local.contains(&net) {
        return Err(bad(
            "The inside CIDR must be a /30 block of 169.254.0.0/16.",
        ));
    }
    if RESERVED_INSIDE.contains(&net.network().octets()) {
        return Err(bad("The inside CIDR is one of the reserved blocks."));
    }
    Ok(net)
}

/// A pre-shared key as the model constrains it.
fn check_psk(raw: &str) -> Result<(), ApiError> {
    let ok = (8..=64).contains(&raw.len())
        && !raw.starts_with('0')
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid_parameter(
            "PreSharedKey",
            "(hidden)",
            "A pre-shared key is 8 to 64 letters, digits, periods and underscores, not starting with 0.",
        ))
    }
}

/// A pre-shared key made of the characters the model allows.
fn new_psk(region: &mut Region) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._";
    let mut key = String::with_capacity(32);
    while key.len() < 32 {
        let bits = region.ids.next_u64();
        for shift in (0..64).step_by(6) {
            let i = usize::try_from((bits >> shift) & 63).unwrap_or(0);
            let c = char::from(CHARS.get(i).copied().unwrap_or(b'A'));
            if key.is_empty() && c == '0' {
                continue;
            }
            if key.len() < 32 {
                key.push(c);
            }
        }
    }
    key
}

/// A free inside /30 for a tunnel of gateway `vgw`, beside those `taken`.
fn new_inside(region: &mut Region, taken: &[Ipv4Net]) -> Result<Ipv4Net, ApiError> {
    // 16,384 /30s in 169.254.0.0/16: start at a random one and walk.
    let start = region.ids.next_u64() % 16_384;
    for step in 0..16_384u64 {
        let n = u32::try_from((start + step) % 16_384).unwrap_or(0);
        let net = Ipv4Net::new(Ipv4Addr::from(0xA9FE_0000 | (n << 2)), 30)
            .map_err(|_| ApiError::invalid_value("No free inside CIDR is left."))?;
        if !RESERVED_INSIDE.contains(&net.network().octets()) && !taken.contains(&net) {
            return Ok(net);
        }
    }
    Err(ApiError::invalid_value(
        "No free inside CIDR is left for the virtual private gateway's tunnels.",
    ))
}

/// `CreateVpnConnection`: a connection to a virtual private gateway (transit gateways are not
/// served, so a `TransitGatewayId` names none).
pub fn create_vpn_connection(
    region: &mut Region,
    input: CreateVpnConnectionRequest,
) -> Result<CreateVpnConnectionResult, ApiError> {
    if input.r#type != GatewayType::Ipsec1.as_str() {
        return Err(ApiError::invalid_parameter(
            "Type",
            &input.r#type,
            "The only type is ipsec.1.",
        ));
    }
    let vgw = match (&input.vpn_gateway_id, &input.transit_gateway_id) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_combination(
                "Specify either VpnGatewayId or TransitGatewayId, not both.",
            ));
        }
        (None, Some(t)) => {
            return Err(ApiError::new(
                Code::InvalidTransitGatewayIDNotFound,
                format!("Transit Gateway {t} was deleted or does not exist."),
            ));
        }
        (None, None) => return Err(ApiError::missing_parameter("VpnGatewayId")),
        (Some(v), None) => v.clone(),
    };
    let customer = crate::ec2::customer_gateway::live(region, &input.customer_gateway_id)?;
    let customer_ip = customer.ip_address;
    Kind::VpnGateway.get(&region.vpn_gateways, &vgw)?;
    let options = input.options;
    if let Some(o) = &options {
        check_options(o)?;
    }
    let local = network_option(
        "LocalIpv4NetworkCidr",
        options
            .as_ref()
            .and_then(|o| o.local_ipv4_network_cidr.as_deref()),
    )?;
    let remote = network_option(
        "RemoteIpv4NetworkCidr",
        options
            .as_ref()
            .and_then(|o| o.remote_ipv4_network_cidr.as_deref()),
    )?;
    let static_routes_only = options
        .as_ref()
        .and_then(|o| o.static_routes_only)
        .unwrap_or(false);
    let asked = options.and_then(|o| o.tunnel_options).unwrap_or_default();
    if asked.len() > 2 {
        return Err(ApiError::invalid_value(
            "A VPN connection has two tunnels: at most two tunnel options.",
        ));
    }
    for t in &asked {
        check_tunnel_options(t)?;
        if let Some(psk) = &t.pre_shared_key {
            check_psk(psk)?;
        }
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::VpnConnection,
    )?;
    // Idempotent: the same two gateways answer the connection they have.
    let on_gateway: Vec<&VpnConnection> = region
        .vpn_connections
        .values()
        .filter(|c| live(c) && c.vpn_gateway_id == vgw)
        .collect();
    if let Some(same) = on_gateway
        .iter()
        .find(|c| c.customer_gateway_id == input.customer_gateway_id)
    {
        return Ok(CreateVpnConnectionResult {
            vpn_connection: Some(render(region, same)),
        });
    }
    let duplicate = on_gateway.iter().any(|c| {
        region
            .customer_gateways
            .get(&c.customer_gateway_id)
            .is_some_and(|g| g.ip_address.is_some() && g.ip_address == customer_ip)
    });
    if duplicate {
        return Err(ApiError::new(
            Code::InvalidCustomerGatewayDuplicateIpAddress,
            "There is a conflict among the specified gateway IP addresses: the virtual private gateway has a VPN connection to a customer gateway of the same address.",
        ));
    }
    let mut taken: Vec<Ipv4Net> = on_gateway
        .iter()
        .flat_map(|c| c.tunnels.iter().map(|t| t.inside))
        .collect();
    let live_count = region.vpn_connections.values().filter(|c| live(c)).count();
    if live_count >= region.limits.vpn_connections || on_gateway.len() >= PER_GATEWAY {
        return Err(ApiError::new(
            Code::VpnConnectionLimitExceeded,
            "You've reached the limit on the number of VPN connections that you can create.",
        ));
    }
    let mut named = Vec::with_capacity(2);
    for t in &asked {
        let inside = match &t.tunnel_inside_cidr {
            Some(raw) => {
                let net = check_inside(raw)?;
                if taken.contains(&net) {
                    return Err(ApiError::invalid_parameter(
                        "TunnelInsideCidr",
                        raw,
                        "The inside CIDR is in use by another tunnel of the virtual private gateway.",
                    ));
                }
                taken.push(net);
                Some(net)
            }
            None => None,
        };
        named.push((inside, t.pre_shared_key.clone()));
    }
    named.resize(2, (None, None));
    let outsides = match (
        elastic_ip::take_public_ip(region),
        elastic_ip::take_public_ip(region),
    ) {
        (Some(a), Some(b)) => [a, b],
        (first, _) => {
            if let Some(ip) = first {
                elastic_ip::give_back_public_ip(region, ip);
            }
            return Err(ApiError::new(
                Code::InsufficientAddressCapacity,
                "There are not enough public addresses for the VPN connection's tunnels.",
            ));
        }
    };
    let mut tunnels = Vec::with_capacity(2);
    for ((inside, psk), outside) in named.into_iter().zip(outsides) {
        let inside = match inside {
            Some(n) => n,
            None => {
                let n = new_inside(region, &taken)?;
                taken.push(n);
                n
            }
        };
        let psk = match psk {
            Some(k) => k,
            None => new_psk(region),
        };
        tunnels.push(Tunnel {
            outside,
            inside,
            psk,
        });
    }
    let connection = VpnConnection {
        id: region.ids.resource(Kind::VpnConnection.prefix()),
        customer_gateway_id: input.customer_gateway_id,
        vpn_gateway_id: vgw,
        state: VpnState::Pending,
        static_routes_only,
        local,
        remote,
        tunnels,
        routes: Vec::new(),
        changed: region.clock.now_datetime(),
    };
    region.tags.insert(&connection.id, tags);
    let out = render(region, &connection);
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::VpnConnection, &connection.id);
    region
        .vpn_connections
        .0
        .insert(connection.id.clone(), connection);
    Ok(CreateVpnConnectionResult {
        vpn_connection: Some(out),
    })
}

/// Moves connection `id` and its routes out of their transient states.
pub fn advance(region: &mut Region, id: &str) {
    let now = region.clock.now_datetime();
    let Some(c) = region.vpn_connections.0.get_mut(id) else {
        return;
    };
    let mut gone = Vec::new();
    match c.state {
        VpnState::Pending => {
            c.state = VpnState::Available;
            c.changed = now;
        }
        VpnState::Deleting => {
            c.state = VpnState::Deleted;
            c.changed = now;
            c.routes.clear();
            gone = c.tunnels.iter().map(|t| t.outside).collect();
        }
        _ => {}
    }
    c.routes.retain(|r| r.state != VpnState::Deleting);
    for r in &mut c.routes {
        if r.state == VpnState::Pending {
            r.state = VpnState::Available;
        }
    }
    for ip in gone {
        elastic_ip::give_back_public_ip(region, ip);
    }
}

/// `DescribeVpnConnections`: by ids (each must exist) and filters; AWS does not page it.
pub fn describe_vpn_connections(
    region: &Region,
    input: DescribeVpnConnectionsRequest,
) -> Result<DescribeVpnConnectionsResult, ApiError> {
    let filters = Filters::parse::<(&VpnConnection, &Region)>(input.filters)?;
    let found = Kind::VpnConnection.describe(
        &region.consistency,
        &region.vpn_connections,
        input.vpn_connection_ids.as_deref(),
        None,
        |c| filters.matches(&(c, region), region.tags.get(&c.id)),
    )?;
    Ok(DescribeVpnConnectionsResult {
        vpn_connections: Some(found.into_iter().map(|c| render(region, c)).collect()),
    })
}

/// `DeleteVpnConnection`: `deleting`, then `deleted`; its routes stop propagating at once.
pub fn delete_vpn_connection(
    region: &mut Region,
    input: DeleteVpnConnectionRequest,
) -> Result<(), ApiError> {
    let id = input.vpn_connection_id;
    let c = Kind::VpnConnection.get(&region.vpn_connections, &id)?;
    if live(c) {
        let now = region.clock.now();
        let stamp = region.clock.now_datetime();
        if let Some(c) = region.vpn_connections.0.get_mut(&id) {
            c.state = VpnState::Deleting;
            c.changed = stamp;
        }
        region
            .transitions
            .schedule(now, Subject::VpnConnection, &id);
    }
    Ok(())
}

/// The connection `id` a route call names, not deleted (`InvalidVpnConnectionID.NotFound`),
/// and the route's destination.
fn route_target<'r>(
    region: &'r Region,
    id: &str,
    destination: &str,
) -> Result<(&'r VpnConnection, Ipv4Net), ApiError> {
    let c = Kind::VpnConnection.get(&region.vpn_connections, id)?;
    if !live(c) {
        return Err(Kind::VpnConnection.not_found(&[id]));
    }
    let net = destination
        .parse::<Ipv4Net>()
        .ok()
        .filter(|n| n.trunc() == *n)
        .ok_or_else(|| {
            ApiError::invalid_parameter(
                "DestinationCidrBlock",
                destination,
                "Not an IPv4 CIDR block.",
            )
        })?;
    Ok((c, net))
}

/// `CreateVpnConnectionRoute`: a static route of a connection that routes statically.
pub fn create_vpn_connection_route(
    region: &mut Region,
    input: CreateVpnConnectionRouteRequest,
) -> Result<(), ApiError> {
    let (c, net) = route_target(
        region,
        &input.vpn_connection_id,
        &input.destination_cidr_block,
    )?;
    if !c.static_routes_only {
        return Err(ApiError::invalid_value(format!(
            "The VPN connection {} routes by BGP: static routes need StaticRoutesOnly.",
            c.id
        )));
    }
    if c.routes.iter().any(|r| r.destination == net) {
        return Err(ApiError::new(
            Code::RouteAlreadyExists,
            format!(
                "The route identified by {} already exists.",
                input.destination_cidr_block
            ),
        ));
    }
    let id = c.id.clone();
    if let Some(c) = region.vpn_connections.0.get_mut(&id) {
        c.routes.push(StaticRoute {
            destination: net,
            state: VpnState::Pending,
        });
    }
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::VpnConnection, &id);
    Ok(())
}

/// `DeleteVpnConnectionRoute`: the route is `deleting`, then gone.
pub fn delete_vpn_connection_route(
    region: &mut Region,
    input: DeleteVpnConnectionRouteRequest,
) -> Result<(), ApiError> {
    let (c, net) = route_target(
        region,
        &input.vpn_connection_id,
        &input.destination_cidr_block,
    )?;
    if !c
        .routes
        .iter()
        .any(|r| r.destination == net && r.state != VpnState::Deleting)
    {
        return Err(ApiError::new(
            Code::InvalidRouteNotFound,
            format!(
                "The route identified by {} does not exist in VPN connection {}.",
                input.destination_cidr_block, c.id
            ),
        ));
    }
    let id = c.id.clone();
    if let Some(c) = region.vpn_connections.0.get_mut(&id) {
        for r in c.routes.iter_mut().filter(|r| r.destination == net) {
            r.state = VpnState::Deleting;
        }
    }
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::VpnConnection, &id);
    Ok(())
}
