//! A VPC's secondary IPv4 ranges through the SDK: AssociateVpcCidrBlock and
//! DisassociateVpcCidrBlock, and what they change in subnets, route tables and filters.

use aws_sdk_ec2::types::VpcCidrBlockStateCode;

use crate::{code, empty_fake, filter, route_table, subnet, vpc, vpc_ids};

/// The VPC's ranges as DescribeVpcs lists them: (association id, CIDR, state).
async fn ranges(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> Vec<(String, String, String)> {
    let vpcs = ec2
        .describe_vpcs()
        .vpc_ids(vpc_id)
        .send()
        .await
        .unwrap()
        .vpcs
        .unwrap();
    vpcs[0]
        .cidr_block_association_set()
        .iter()
        .map(|a| {
            (
                a.association_id().unwrap().to_string(),
                a.cidr_block().unwrap().to_string(),
                a.cidr_block_state()
                    .and_then(|s| s.state())
                    .unwrap()
                    .as_str()
                    .to_string(),
            )
        })
        .collect()
}

/// The destinations of the `local` routes of the table `table_id`.
async fn local_routes(ec2: &aws_sdk_ec2::Client, table_id: &str) -> Vec<String> {
    let tables = ec2
        .describe_route_tables()
        .route_table_ids(table_id)
        .send()
        .await
        .unwrap()
        .route_tables
        .unwrap();
    tables[0]
        .routes()
        .iter()
        .filter(|r| r.gateway_id() == Some("local"))
        .map(|r| r.destination_cidr_block().unwrap().to_string())
        .collect()
}

async fn main_table(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    ec2.describe_route_tables()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter("association.main", &["true"]))
        .send()
        .await
        .unwrap()
        .route_tables()[0]
        .route_table_id()
        .unwrap()
        .to_string()
}

/// The error code of a CreateSubnet of `cidr` in `vpc_id`.
async fn subnet_refused(ec2: &aws_sdk_ec2::Client, vpc_id: &str, cidr: &str) -> String {
    code(
        ec2.create_subnet()
            .vpc_id(vpc_id)
            .cidr_block(cidr)
            .send()
            .await,
    )
}

async fn associate(ec2: &aws_sdk_ec2::Client, vpc_id: &str, cidr: &str) -> String {
    let out = ec2
        .associate_vpc_cidr_block()
        .vpc_id(vpc_id)
        .cidr_block(cidr)
        .send()
        .await
        .unwrap();
    assert_eq!(out.vpc_id(), Some(vpc_id));
    let a = out.cidr_block_association.unwrap();
    assert_eq!(a.cidr_block(), Some(cidr));
    assert_eq!(
        a.cidr_block_state().and_then(|s| s.state()),
        Some(&VpcCidrBlockStateCode::Associating)
    );
    a.association_id.unwrap()
}

#[tokio::test]
async fn an_associated_range_holds_subnets_and_has_a_local_route_in_every_table() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.1.0.0/16").await;
    let main = main_table(&ec2, &vpc_id).await;
    let before = route_table(&ec2, &vpc_id).await;
    // Before the association a subnet there is outside the VPC.
    assert_eq!(
        subnet_refused(&ec2, &vpc_id, "10.2.0.0/24").await,
        "InvalidSubnet.Range"
    );

    let id = associate(&ec2, &vpc_id, "10.2.0.0/16").await;
    assert!(id.starts_with("vpc-cidr-assoc-"), "{id}");
    let listed = ranges(&ec2, &vpc_id).await;
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].1, "10.1.0.0/16");
    assert_eq!(
        listed[1],
        (
            id.clone(),
            "10.2.0.0/16".to_string(),
            "associated".to_string()
        )
    );
    // The primary range stays the VPC's CidrBlock.
    let described = ec2.describe_vpcs().vpc_ids(&vpc_id).send().await.unwrap();
    assert_eq!(described.vpcs()[0].cidr_block(), Some("10.1.0.0/16"));

    // Every table of the VPC routes the range locally, one made later too.
    let after = route_table(&ec2, &vpc_id).await;
    for table in [&main, &before, &after] {
        assert_eq!(
            local_routes(&ec2, table).await,
            ["10.1.0.0/16", "10.2.0.0/16"],
            "{table}"
        );
    }
    // A route into the range can only be the local one.
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&before)
                .destination_cidr_block("10.2.5.0/24")
                .gateway_id("local")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );

    // A subnet lies in one range, never across two.
    subnet(&ec2, &vpc_id, "10.2.3.0/24", "us-east-1a").await;
    let both = vpc(&ec2, "192.168.0.0/24").await;
    associate(&ec2, &both, "192.168.1.0/24").await;
    assert_eq!(
        subnet_refused(&ec2, &both, "192.168.0.0/23").await,
        "InvalidSubnet.Range"
    );

    // Found by the association filters, the primary range by `cidr` alone.
    assert_eq!(
        vpc_ids(
            &ec2,
            vec![filter(
                "cidr-block-association.cidr-block",
                &["10.2.0.0/16"]
            )]
        )
        .await,
        [vpc_id.as_str()]
    );
    assert_eq!(
        vpc_ids(
            &ec2,
            vec![filter("cidr-block-association.association-id", &[&id])]
        )
        .await,
        [vpc_id.as_str()]
    );
    assert!(
        vpc_ids(&ec2, vec![filter("cidr", &["10.2.0.0/16"])])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_range_is_checked_as_aws_checks_it_and_a_refusal_changes_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.1.0.0/16").await;
    let refused = |cidr: &'static str| {
        let ec2 = ec2.clone();
        let vpc_id = vpc_id.clone();
        async move {
            code(
                ec2.associate_vpc_cidr_block()
                    .vpc_id(vpc_id)
                    .cidr_block(cidr)
                    .send()
                    .await,
            )
        }
    };
    // Not a canonical CIDR.
    assert_eq!(refused("10.2.0.1/16").await, "InvalidParameterValue");
    assert_eq!(refused("banana").await, "InvalidParameterValue");
    // Too large or too small.
    assert_eq!(refused("10.4.0.0/15").await, "InvalidVpc.Range");
    assert_eq!(refused("10.2.0.0/29").await, "InvalidVpc.Range");
    // Overlapping the VPC's range, within it or around it.
    assert_eq!(refused("10.1.4.0/24").await, "InvalidVpc.Range");
    // Another private range than the VPC's, and 198.19.0.0/16.
    assert_eq!(refused("172.16.0.0/16").await, "InvalidVpc.Range");
    assert_eq!(refused("192.168.0.0/16").await, "InvalidVpc.Range");
    assert_eq!(refused("198.19.0.0/16").await, "InvalidVpc.Range");
    // An unknown VPC.
    assert_eq!(
        code(
            ec2.associate_vpc_cidr_block()
                .vpc_id("vpc-0123456789abcdef0")
                .cidr_block("10.2.0.0/16")
                .send()
                .await
        ),
        "InvalidVpcID.NotFound"
    );
    // An IPv6 block from a BYOIP pool the account does not have.
    assert_eq!(
        code(
            ec2.associate_vpc_cidr_block()
                .vpc_id(&vpc_id)
                .ipv6_pool("ipv6pool-ec2-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidIpv6PoolID.NotFound"
    );
    assert_eq!(ranges(&ec2, &vpc_id).await.len(), 1);

    // A range that a route's destination lies within.
    let gw = crate::gateway(&ec2, &vpc_id).await;
    let main = main_table(&ec2, &vpc_id).await;
    ec2.create_route()
        .route_table_id(&main)
        .destination_cidr_block("100.64.8.0/24")
        .gateway_id(&gw)
        .send()
        .await
        .unwrap();
    assert_eq!(refused("100.64.0.0/16").await, "InvalidVpc.Range");
    // A more specific one is taken: a public range beside a private one.
    associate(&ec2, &vpc_id, "100.64.8.0/28").await;

    // Five ranges in all, AWS's quota.
    for cidr in ["10.2.0.0/16", "10.3.0.0/16", "10.4.0.0/16"] {
        associate(&ec2, &vpc_id, cidr).await;
    }
    assert_eq!(refused("10.5.0.0/16").await, "CidrLimitExceeded");
    assert_eq!(ranges(&ec2, &vpc_id).await.len(), 5);
}

#[tokio::test]
async fn the_quota_of_ranges_can_be_raised() {
    let mut limits = fakeaws::region::Limits::default();
    limits.set("cidr-blocks-per-vpc", 7).unwrap();
    let fake = fakeaws::spawn_with(fakeaws::Config {
        limits,
        default_vpc: false,
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    for i in 1..7 {
        associate(&ec2, &vpc_id, &format!("10.{i}.0.0/16")).await;
    }
    assert_eq!(
        code(
            ec2.associate_vpc_cidr_block()
                .vpc_id(&vpc_id)
                .cidr_block("10.9.0.0/16")
                .send()
                .await
        ),
        "CidrLimitExceeded"
    );
}

#[tokio::test]
async fn a_range_is_disassociated_once_empty_and_never_the_primary_one() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.1.0.0/16").await;
    let main = main_table(&ec2, &vpc_id).await;
    let id = associate(&ec2, &vpc_id, "10.2.0.0/16").await;
    let held = subnet(&ec2, &vpc_id, "10.2.0.0/24", "us-east-1a").await;
    let disassociate = |id: String| {
        let ec2 = ec2.clone();
        async move {
            ec2.disassociate_vpc_cidr_block()
                .association_id(id)
                .send()
                .await
        }
    };
    // Not while a subnet lies in it.
    assert_eq!(code(disassociate(id.clone()).await), "DependencyViolation");
    // Never the primary range.
    let primary = ranges(&ec2, &vpc_id).await[0].0.clone();
    assert_eq!(code(disassociate(primary).await), "OperationNotPermitted");
    assert_eq!(
        code(disassociate("vpc-cidr-assoc-0123456789abcdef0".to_string()).await),
        "InvalidVpcCidrBlockAssociationID.NotFound"
    );
    assert_eq!(ranges(&ec2, &vpc_id).await.len(), 2);

    ec2.delete_subnet().subnet_id(&held).send().await.unwrap();
    let out = disassociate(id.clone()).await.unwrap();
    assert_eq!(out.vpc_id(), Some(vpc_id.as_str()));
    let a = out.cidr_block_association.unwrap();
    assert_eq!(a.association_id(), Some(id.as_str()));
    assert_eq!(a.cidr_block(), Some("10.2.0.0/16"));
    assert_eq!(
        a.cidr_block_state().and_then(|s| s.state()),
        Some(&VpcCidrBlockStateCode::Disassociating)
    );
    // Gone: from the VPC, its tables, and as a place for subnets.
    assert_eq!(ranges(&ec2, &vpc_id).await.len(), 1);
    assert_eq!(local_routes(&ec2, &main).await, ["10.1.0.0/16"]);
    assert_eq!(
        subnet_refused(&ec2, &vpc_id, "10.2.0.0/24").await,
        "InvalidSubnet.Range"
    );
    assert_eq!(
        code(disassociate(id).await),
        "InvalidVpcCidrBlockAssociationID.NotFound"
    );

    // A VPC with a secondary range is deleted as any other.
    associate(&ec2, &vpc_id, "10.3.0.0/16").await;
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
    assert!(ec2.describe_vpcs().send().await.unwrap().vpcs().is_empty());
}
