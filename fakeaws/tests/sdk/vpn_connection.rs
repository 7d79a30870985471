//! Customer gateways and Site-to-Site VPN connections through the SDK: a connection's life
//! (`pending`, `available`, `deleting`, `deleted`), its tunnels and the configuration document
//! for the customer's device, its static routes propagated into route tables, what each
//! resource holds, idempotent creates and the refusals.

use std::net::Ipv4Addr;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    GatewayType, ResourceType, RouteOrigin, TelemetryStatus, VpnConnection,
    VpnConnectionOptionsSpecification, VpnState, VpnTunnelOptionsSpecification,
};
use fakeaws::sim::transitions::Subject;

use crate::{code, empty_fake, filter, tag_spec, vpc};

async fn customer_gateway(ec2: &aws_sdk_ec2::Client, ip: &str, asn: i32) -> String {
    ec2.create_customer_gateway()
        .r#type(GatewayType::Ipsec1)
        .ip_address(ip)
        .bgp_asn(asn)
        .send()
        .await
        .unwrap()
        .customer_gateway
        .unwrap()
        .customer_gateway_id
        .unwrap()
}

/// A virtual private gateway attached to a new VPC `cidr`: (gateway, VPC).
async fn attached_gateway(ec2: &aws_sdk_ec2::Client, cidr: &str) -> (String, String) {
    let vgw = ec2
        .create_vpn_gateway()
        .r#type(GatewayType::Ipsec1)
        .send()
        .await
        .unwrap()
        .vpn_gateway
        .unwrap()
        .vpn_gateway_id
        .unwrap();
    let vpc_id = vpc(ec2, cidr).await;
    ec2.attach_vpn_gateway()
        .vpn_gateway_id(&vgw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap();
    (vgw, vpc_id)
}

async fn connection(ec2: &aws_sdk_ec2::Client, id: &str) -> VpnConnection {
    ec2.describe_vpn_connections()
        .vpn_connection_ids(id)
        .send()
        .await
        .unwrap()
        .vpn_connections()[0]
        .clone()
}

fn static_only() -> VpnConnectionOptionsSpecification {
    VpnConnectionOptionsSpecification::builder()
        .static_routes_only(true)
        .build()
}

/// The text of every element named `name` in `xml`, in document order.
fn elements(xml: &str, name: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = Vec::new();
    let mut inside = false;
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) => {
                inside = AsRef::<str>::as_ref(&e.local_name()) == name;
            }
            quick_xml::events::Event::Text(t) if inside => {
                let raw = t.into_inner();
                out.push(quick_xml::escape::unescape(&raw).unwrap().into_owned());
            }
            quick_xml::events::Event::End(_) => inside = false,
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn customer_gateways_are_made_once_and_held_by_their_connections() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let made = ec2
        .create_customer_gateway()
        .r#type(GatewayType::Ipsec1)
        .ip_address("198.51.100.7")
        .bgp_asn(65010)
        .device_name("edge-1")
        .tag_specifications(tag_spec(ResourceType::CustomerGateway, &[("site", "dc1")]))
        .send()
        .await
        .unwrap()
        .customer_gateway
        .unwrap();
    let cgw = made.customer_gateway_id().unwrap().to_string();
    assert!(cgw.starts_with("cgw-"), "{cgw}");
    assert_eq!(made.state(), Some("available"));
    assert_eq!(made.bgp_asn(), Some("65010"));
    assert_eq!(made.ip_address(), Some("198.51.100.7"));
    // An identical request answers the same gateway; another device name makes another.
    let again = customer_gateway(&ec2, "198.51.100.7", 65010).await;
    assert_ne!(again, cgw, "the device name differs");
    let same = ec2
        .create_customer_gateway()
        .r#type(GatewayType::Ipsec1)
        .ip_address("198.51.100.7")
        .bgp_asn(65010)
        .device_name("edge-1")
        .send()
        .await
        .unwrap();
    assert_eq!(
        same.customer_gateway().unwrap().customer_gateway_id(),
        Some(cgw.as_str())
    );
    // The default ASN, and an extended one.
    let default_asn = ec2
        .create_customer_gateway()
        .r#type(GatewayType::Ipsec1)
        .ip_address("198.51.100.8")
        .send()
        .await
        .unwrap()
        .customer_gateway
        .unwrap();
    assert_eq!(default_asn.bgp_asn(), Some("65000"));
    let extended = ec2
        .create_customer_gateway()
        .r#type(GatewayType::Ipsec1)
        .ip_address("198.51.100.9")
        .bgp_asn_extended(4_200_000_001)
        .send()
        .await
        .unwrap()
        .customer_gateway
        .unwrap();
    assert_eq!(extended.bgp_asn_extended(), Some("4200000001"));
    assert_eq!(extended.bgp_asn(), None);
    let found = ec2
        .describe_customer_gateways()
        .filters(filter("tag:site", &["dc1"]))
        .filters(filter("bgp-asn", &["65010"]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.customer_gateways().len(), 1);
    assert_eq!(
        code(
            ec2.create_customer_gateway()
                .r#type(GatewayType::Ipsec1)
                .ip_address("not-an-address")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.describe_customer_gateways()
                .customer_gateway_ids("cgw-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidCustomerGatewayID.NotFound"
    );

    // A connection holds its customer gateway and its virtual private gateway.
    let (vgw, _) = attached_gateway(&ec2, "10.0.0.0/16").await;
    let vpn = ec2
        .create_vpn_connection()
        .r#type("ipsec.1")
        .customer_gateway_id(&cgw)
        .vpn_gateway_id(&vgw)
        .send()
        .await
        .unwrap()
        .vpn_connection
        .unwrap()
        .vpn_connection_id
        .unwrap();
    assert_eq!(
        code(
            ec2.delete_customer_gateway()
                .customer_gateway_id(&cgw)
                .send()
                .await
        ),
        "IncorrectState"
    );
    ec2.detach_vpn_gateway()
        .vpn_gateway_id(&vgw)
        .vpc_id(
            ec2.describe_vpn_gateways()
                .vpn_gateway_ids(&vgw)
                .send()
                .await
                .unwrap()
                .vpn_gateways()[0]
                .vpc_attachments()[0]
                .vpc_id()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(ec2.delete_vpn_gateway().vpn_gateway_id(&vgw).send().await),
        "IncorrectState"
    );
    ec2.delete_vpn_connection()
        .vpn_connection_id(&vpn)
        .send()
        .await
        .unwrap();
    ec2.wait_until_vpn_connection_deleted()
        .vpn_connection_ids(&vpn)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    ec2.delete_customer_gateway()
        .customer_gateway_id(&cgw)
        .send()
        .await
        .unwrap();
    ec2.delete_vpn_gateway()
        .vpn_gateway_id(&vgw)
        .send()
        .await
        .unwrap();
    // A deleted customer gateway is listed `deleted`, and takes no connection.
    let listed = ec2
        .describe_customer_gateways()
        .customer_gateway_ids(&cgw)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.customer_gateways()[0].state(), Some("deleted"));
}

#[tokio::test]
async fn a_connection_comes_up_with_two_tunnels_and_a_device_configuration() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let cgw = customer_gateway(&ec2, "203.0.113.12", 65020).await;
    let (vgw, _) = attached_gateway(&ec2, "10.0.0.0/16").await;
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::VpnConnection));
    let made = ec2
        .create_vpn_connection()
        .r#type("ipsec.1")
        .customer_gateway_id(&cgw)
        .vpn_gateway_id(&vgw)
        .options(
            VpnConnectionOptionsSpecification::builder()
                .tunnel_options(
                    VpnTunnelOptionsSpecification::builder()
                        .tunnel_inside_cidr("169.254.12.0/30")
                        .pre_shared_key("Example_Key.1")
                        .build(),
                )
                .build(),
        )
        .tag_specifications(tag_spec(ResourceType::VpnConnection, &[("Name", "dc1")]))
        .send()
        .await
        .unwrap()
        .vpn_connection
        .unwrap();
    let id = made.vpn_connection_id().unwrap().to_string();
    assert!(id.starts_with("vpn-"), "{id}");
    assert_eq!(made.state(), Some(&VpnState::Pending));
    assert_eq!(made.category(), Some("VPN"));
    let options = made.options().unwrap();
    assert_eq!(options.static_routes_only(), Some(false));
    assert_eq!(options.local_ipv4_network_cidr(), Some("0.0.0.0/0"));
    let tunnels = options.tunnel_options();
    assert_eq!(tunnels.len(), 2);
    assert_eq!(tunnels[0].tunnel_inside_cidr(), Some("169.254.12.0/30"));
    assert_eq!(tunnels[0].pre_shared_key(), Some("Example_Key.1"));
    // The second tunnel's inside /30 and key are AWS's picks, within the model's rules.
    let inside: ipnet::Ipv4Net = tunnels[1].tunnel_inside_cidr().unwrap().parse().unwrap();
    assert_eq!(inside.prefix_len(), 30);
    assert!(
        "169.254.0.0/16"
            .parse::<ipnet::Ipv4Net>()
            .unwrap()
            .contains(&inside)
    );
    assert_ne!(inside.to_string(), "169.254.12.0/30");
    let key = tunnels[1].pre_shared_key().unwrap();
    assert!(
        (8..=64).contains(&key.len()) && !key.starts_with('0'),
        "{key}"
    );
    assert!(
        key.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
    );
    // Held: pending however often it is observed; then available.
    assert_eq!(
        connection(&ec2, &id).await.state(),
        Some(&VpnState::Pending)
    );
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.release(Subject::VpnConnection)
    });
    ec2.wait_until_vpn_connection_available()
        .vpn_connection_ids(&id)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let up = connection(&ec2, &id).await;
    let telemetry = up.vgw_telemetry();
    assert_eq!(telemetry.len(), 2);
    assert!(
        telemetry
            .iter()
            .all(|t| t.status() == Some(&TelemetryStatus::Down))
    );
    let outside: Vec<&str> = telemetry
        .iter()
        .map(|t| t.outside_ip_address().unwrap())
        .collect();
    assert_ne!(outside[0], outside[1]);

    // The device's configuration: AWS's XML document, one ipsec_tunnel per tunnel, naming
    // the addresses, keys and ASNs the connection has.
    let config = up.customer_gateway_configuration().unwrap();
    assert_eq!(elements(config, "customer_gateway_id"), [cgw.as_str()]);
    assert_eq!(elements(config, "vpn_gateway_id"), [vgw.as_str()]);
    let keys = elements(config, "pre_shared_key");
    assert_eq!(keys, ["Example_Key.1", key]);
    let addresses = elements(config, "ip_address");
    // Per tunnel: the customer's outside and inside, then AWS's outside and inside.
    assert_eq!(addresses.len(), 8);
    assert_eq!(addresses[0], "203.0.113.12");
    assert_eq!(addresses[1], "169.254.12.2");
    assert_eq!(addresses[2], outside[0]);
    assert_eq!(addresses[3], "169.254.12.1");
    assert_eq!(addresses[6], outside[1]);
    let aws_inside: Ipv4Addr = addresses[7].parse().unwrap();
    assert!(inside.contains(&aws_inside));
    assert_eq!(
        elements(config, "asn"),
        ["65020", "64512", "65020", "64512"]
    );

    // Idempotent: the same two gateways answer the same connection.
    let again = ec2
        .create_vpn_connection()
        .r#type("ipsec.1")
        .customer_gateway_id(&cgw)
        .vpn_gateway_id(&vgw)
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.vpn_connection().unwrap().vpn_connection_id(),
        Some(id.as_str())
    );
    // Another customer gateway of the same address on the same gateway is refused.
    let twin = ec2
        .create_customer_gateway()
        .r#type(GatewayType::Ipsec1)
        .ip_address("203.0.113.12")
        .bgp_asn(65020)
        .device_name("twin")
        .send()
        .await
        .unwrap()
        .customer_gateway
        .unwrap()
        .customer_gateway_id
        .unwrap();
    assert_eq!(
        code(
            ec2.create_vpn_connection()
                .r#type("ipsec.1")
                .customer_gateway_id(&twin)
                .vpn_gateway_id(&vgw)
                .send()
                .await
        ),
        "InvalidCustomerGateway.DuplicateIpAddress"
    );
    let found = ec2
        .describe_vpn_connections()
        .filters(filter("tag:Name", &["dc1"]))
        .filters(filter("option.static-routes-only", &["false"]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.vpn_connections().len(), 1);

    // Deleted: `deleting`, then `deleted`, still listed, without the configuration.
    ec2.delete_vpn_connection()
        .vpn_connection_id(&id)
        .send()
        .await
        .unwrap();
    ec2.wait_until_vpn_connection_deleted()
        .vpn_connection_ids(&id)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let gone = connection(&ec2, &id).await;
    assert_eq!(gone.state(), Some(&VpnState::Deleted));
    assert!(gone.customer_gateway_configuration().is_none());
}

#[tokio::test]
async fn static_routes_are_propagated_into_route_tables() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let cgw = customer_gateway(&ec2, "203.0.113.20", 65030).await;
    let (vgw, vpc_id) = attached_gateway(&ec2, "10.1.0.0/16").await;
    let table = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap()
        .route_tables()[0]
        .route_table_id()
        .unwrap()
        .to_string();
    ec2.enable_vgw_route_propagation()
        .route_table_id(&table)
        .gateway_id(&vgw)
        .send()
        .await
        .unwrap();
    let vpn = ec2
        .create_vpn_connection()
        .r#type("ipsec.1")
        .customer_gateway_id(&cgw)
        .vpn_gateway_id(&vgw)
        .options(static_only())
        .send()
        .await
        .unwrap()
        .vpn_connection
        .unwrap()
        .vpn_connection_id
        .unwrap();
    ec2.create_vpn_connection_route()
        .vpn_connection_id(&vpn)
        .destination_cidr_block("192.168.0.0/16")
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.create_vpn_connection_route()
                .vpn_connection_id(&vpn)
                .destination_cidr_block("192.168.0.0/16")
                .send()
                .await
        ),
        "RouteAlreadyExists"
    );
    let routes = connection(&ec2, &vpn).await;
    assert_eq!(
        routes.routes()[0].destination_cidr_block(),
        Some("192.168.0.0/16")
    );
    assert_eq!(routes.routes()[0].state(), Some(&VpnState::Available));
    let propagated =
        |tables: aws_sdk_ec2::operation::describe_route_tables::DescribeRouteTablesOutput| {
            tables.route_tables()[0]
                .routes()
                .iter()
                .filter(|r| r.origin() == Some(&RouteOrigin::EnableVgwRoutePropagation))
                .map(|r| {
                    (
                        r.destination_cidr_block().unwrap().to_string(),
                        r.gateway_id().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        };
    let tables = ec2
        .describe_route_tables()
        .route_table_ids(&table)
        .send()
        .await
        .unwrap();
    assert_eq!(
        propagated(tables),
        [("192.168.0.0/16".to_string(), vgw.clone())]
    );
    // The propagated route answers the route filters.
    let by_origin = ec2
        .describe_route_tables()
        .filters(filter("route.origin", &["EnableVgwRoutePropagation"]))
        .filters(filter("route.destination-cidr-block", &["192.168.0.0/16"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_origin.route_tables().len(), 1);
    // A BGP connection takes no static route.
    let bgp_cgw = customer_gateway(&ec2, "203.0.113.21", 65031).await;
    let bgp = ec2
        .create_vpn_connection()
        .r#type("ipsec.1")
        .customer_gateway_id(&bgp_cgw)
        .vpn_gateway_id(&vgw)
        .send()
        .await
        .unwrap()
        .vpn_connection
        .unwrap()
        .vpn_connection_id
        .unwrap();
    assert_eq!(
        code(
            ec2.create_vpn_connection_route()
                .vpn_connection_id(&bgp)
                .destination_cidr_block("172.16.0.0/12")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // The route deleted, the propagation ends.
    ec2.delete_vpn_connection_route()
        .vpn_connection_id(&vpn)
        .destination_cidr_block("192.168.0.0/16")
        .send()
        .await
        .unwrap();
    let tables = ec2
        .describe_route_tables()
        .route_table_ids(&table)
        .send()
        .await
        .unwrap();
    assert!(propagated(tables).is_empty());
    assert!(connection(&ec2, &vpn).await.routes().is_empty());
    assert_eq!(
        code(
            ec2.delete_vpn_connection_route()
                .vpn_connection_id(&vpn)
                .destination_cidr_block("192.168.0.0/16")
                .send()
                .await
        ),
        "InvalidRoute.NotFound"
    );
    // So does it with the connection.
    ec2.create_vpn_connection_route()
        .vpn_connection_id(&vpn)
        .destination_cidr_block("192.168.0.0/16")
        .send()
        .await
        .unwrap();
    ec2.delete_vpn_connection()
        .vpn_connection_id(&vpn)
        .send()
        .await
        .unwrap();
    let tables = ec2
        .describe_route_tables()
        .route_table_ids(&table)
        .send()
        .await
        .unwrap();
    assert!(propagated(tables).is_empty());
}

#[tokio::test]
async fn refusals_make_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let cgw = customer_gateway(&ec2, "203.0.113.30", 65040).await;
    let (vgw, _) = attached_gateway(&ec2, "10.2.0.0/16").await;
    let with_tunnel = |t: VpnTunnelOptionsSpecification| {
        ec2.create_vpn_connection()
            .r#type("ipsec.1")
            .customer_gateway_id(&cgw)
            .vpn_gateway_id(&vgw)
            .options(
                VpnConnectionOptionsSpecification::builder()
                    .tunnel_options(t)
                    .build(),
            )
            .send()
    };
    // A reserved inside block, one not a /30, a key starting with 0, a key too short.
    for (cidr, psk) in [
        ("169.254.169.252/30", None),
        ("169.254.20.0/29", None),
        ("10.0.0.0/30", None),
        ("169.254.20.0/30", Some("0startswithzero")),
        ("169.254.20.0/30", Some("short")),
    ] {
        let mut t = VpnTunnelOptionsSpecification::builder().tunnel_inside_cidr(cidr);
        if let Some(k) = psk {
            t = t.pre_shared_key(k);
        }
        assert_eq!(
            code(with_tunnel(t.build()).await),
            "InvalidParameterValue",
            "{cidr} {psk:?}"
        );
    }
    // A tunnel option the fake does not serve is said so.
    assert_eq!(
        code(
            with_tunnel(
                VpnTunnelOptionsSpecification::builder()
                    .phase1_lifetime_seconds(3600)
                    .build()
            )
            .await
        ),
        "NotImplemented"
    );
    // A transit gateway: none exists here.
    assert_eq!(
        code(
            ec2.create_vpn_connection()
                .r#type("ipsec.1")
                .customer_gateway_id(&cgw)
                .transit_gateway_id("tgw-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidTransitGatewayID.NotFound"
    );
    assert_eq!(
        code(
            ec2.create_vpn_connection()
                .r#type("ipsec.1")
                .customer_gateway_id("cgw-0123456789abcdef0")
                .vpn_gateway_id(&vgw)
                .send()
                .await
        ),
        "InvalidCustomerGatewayID.NotFound"
    );
    let listed = ec2.describe_vpn_connections().send().await.unwrap();
    assert!(listed.vpn_connections().is_empty());
}
