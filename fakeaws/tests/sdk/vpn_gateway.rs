//! Virtual private gateways through the SDK: created `available` with their ASN, attached to
//! one VPC at a time (answered `attaching`, described `attached`, `detached` after a detach),
//! what an attached one holds, routes to one and route propagation, the quota and the
//! refusals.

use aws_sdk_ec2::types::{AttachmentStatus, GatewayType, ResourceType, RouteState, VpnState};

use crate::{
    code, code_and_message, empty_fake, fake_with_quota, filter, route_table, tag_spec, vpc,
};

async fn gateway(ec2: &aws_sdk_ec2::Client) -> String {
    ec2.create_vpn_gateway()
        .r#type(GatewayType::Ipsec1)
        .send()
        .await
        .unwrap()
        .vpn_gateway
        .unwrap()
        .vpn_gateway_id
        .unwrap()
}

async fn described(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::VpnGateway {
    ec2.describe_vpn_gateways()
        .vpn_gateway_ids(id)
        .send()
        .await
        .unwrap()
        .vpn_gateways()[0]
        .clone()
}

#[tokio::test]
async fn a_gateway_attaches_to_one_vpc_and_holds_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let made = ec2
        .create_vpn_gateway()
        .r#type(GatewayType::Ipsec1)
        .amazon_side_asn(65001)
        .tag_specifications(tag_spec(ResourceType::VpnGateway, &[("site", "dc1")]))
        .send()
        .await
        .unwrap()
        .vpn_gateway
        .unwrap();
    let vgw = made.vpn_gateway_id().unwrap().to_string();
    assert!(vgw.starts_with("vgw-"), "{vgw}");
    assert_eq!(made.state(), Some(&VpnState::Available));
    assert_eq!(made.r#type(), Some(&GatewayType::Ipsec1));
    assert_eq!(made.amazon_side_asn(), Some(65001));
    assert!(made.vpc_attachments().is_empty());
    let default_asn = ec2
        .create_vpn_gateway()
        .r#type(GatewayType::Ipsec1)
        .send()
        .await
        .unwrap()
        .vpn_gateway
        .unwrap();
    assert_eq!(default_asn.amazon_side_asn(), Some(64512));
    let other_vgw = default_asn.vpn_gateway_id().unwrap().to_string();

    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let attached = ec2
        .attach_vpn_gateway()
        .vpn_gateway_id(&vgw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .vpc_attachment
        .unwrap();
    assert_eq!(attached.state(), Some(&AttachmentStatus::Attaching));
    let g = described(&ec2, &vgw).await;
    assert_eq!(
        g.vpc_attachments()[0].state(),
        Some(&AttachmentStatus::Attached)
    );
    assert_eq!(g.vpc_attachments()[0].vpc_id(), Some(vpc_id.as_str()));
    let by_vpc = ec2
        .describe_vpn_gateways()
        .filters(filter("attachment.vpc-id", &[&vpc_id]))
        .filters(filter("attachment.state", &["attached"]))
        .filters(filter("tag:site", &["dc1"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_vpc.vpn_gateways().len(), 1);

    // One VPC per gateway, one gateway per VPC.
    let second_vpc = vpc(&ec2, "10.1.0.0/16").await;
    assert_eq!(
        code(
            ec2.attach_vpn_gateway()
                .vpn_gateway_id(&vgw)
                .vpc_id(&second_vpc)
                .send()
                .await
        ),
        "VpnGatewayAttachmentLimitExceeded"
    );
    assert_eq!(
        code(
            ec2.attach_vpn_gateway()
                .vpn_gateway_id(&other_vgw)
                .vpc_id(&vpc_id)
                .send()
                .await
        ),
        "VpnGatewayAttachmentLimitExceeded"
    );
    // Attached, it holds its VPC and cannot be deleted.
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_vpn_gateway().vpn_gateway_id(&vgw).send().await),
        "IncorrectState"
    );

    // Routes to it, and propagation into the VPC's tables.
    let rtb = route_table(&ec2, &vpc_id).await;
    ec2.create_route()
        .route_table_id(&rtb)
        .destination_cidr_block("192.168.0.0/16")
        .gateway_id(&vgw)
        .send()
        .await
        .unwrap();
    let other_rtb = route_table(&ec2, &second_vpc).await;
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&other_rtb)
                .destination_cidr_block("192.168.0.0/16")
                .gateway_id(&vgw)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    ec2.enable_vgw_route_propagation()
        .gateway_id(&vgw)
        .route_table_id(&rtb)
        .send()
        .await
        .unwrap();
    let (c, _) = code_and_message(
        ec2.enable_vgw_route_propagation()
            .gateway_id(&vgw)
            .route_table_id(&other_rtb)
            .send()
            .await,
    );
    assert_eq!(c, "Gateway.NotAttached");
    let table = |id: String| {
        let ec2 = ec2.clone();
        async move {
            ec2.describe_route_tables()
                .route_table_ids(id)
                .send()
                .await
                .unwrap()
                .route_tables()[0]
                .clone()
        }
    };
    let t = table(rtb.clone()).await;
    assert_eq!(t.propagating_vgws()[0].gateway_id(), Some(vgw.as_str()));
    let route = t
        .routes()
        .iter()
        .find(|r| r.destination_cidr_block() == Some("192.168.0.0/16"))
        .unwrap();
    assert_eq!(route.gateway_id(), Some(vgw.as_str()));
    assert_eq!(route.state(), Some(&RouteState::Active));

    // Detached: listed `detached`, its routes blackholes, its propagation over.
    assert_eq!(
        code(
            ec2.detach_vpn_gateway()
                .vpn_gateway_id(&vgw)
                .vpc_id(&second_vpc)
                .send()
                .await
        ),
        "InvalidVpnGatewayAttachment.NotFound"
    );
    ec2.detach_vpn_gateway()
        .vpn_gateway_id(&vgw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap();
    let g = described(&ec2, &vgw).await;
    assert_eq!(
        g.vpc_attachments()[0].state(),
        Some(&AttachmentStatus::Detached)
    );
    let t = table(rtb.clone()).await;
    assert!(t.propagating_vgws().is_empty());
    let route = t
        .routes()
        .iter()
        .find(|r| r.destination_cidr_block() == Some("192.168.0.0/16"))
        .unwrap();
    assert_eq!(route.state(), Some(&RouteState::Blackhole));
    ec2.delete_route()
        .route_table_id(&rtb)
        .destination_cidr_block("192.168.0.0/16")
        .send()
        .await
        .unwrap();
    ec2.delete_vpn_gateway()
        .vpn_gateway_id(&vgw)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.describe_vpn_gateways()
                .vpn_gateway_ids(&vgw)
                .send()
                .await
        ),
        "InvalidVpnGatewayID.NotFound"
    );
    ec2.delete_route_table()
        .route_table_id(&rtb)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
}

#[tokio::test]
async fn gateways_are_refused_beyond_the_quota_and_for_a_public_asn() {
    let fake = fake_with_quota("vpn-gateways", 2).await;
    let ec2 = fake.ec2_client();
    gateway(&ec2).await;
    gateway(&ec2).await;
    assert_eq!(
        code(
            ec2.create_vpn_gateway()
                .r#type(GatewayType::Ipsec1)
                .send()
                .await
        ),
        "VpnGatewayLimitExceeded"
    );
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    assert_eq!(
        code(
            ec2.create_vpn_gateway()
                .r#type(GatewayType::Ipsec1)
                .amazon_side_asn(16509)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.describe_vpn_gateways()
                .vpn_gateway_ids("vgw-zz")
                .send()
                .await
        ),
        "InvalidVpnGatewayID.Malformed"
    );
}
