//! Subnets through the SDK.

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType, SubnetState};

use crate::{code, empty_fake, filter, tag_spec, vpc};

#[tokio::test]
async fn create_describe_delete_with_zone_and_address_count() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.1.0/24")
        .availability_zone("us-east-1b")
        .tag_specifications(tag_spec(ResourceType::Subnet, &[("Name", "pub")]))
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    assert_eq!(s.state, Some(SubnetState::Pending));
    assert_eq!(s.availability_zone(), Some("us-east-1b"));
    assert_eq!(s.availability_zone_id(), Some("use1-az2"));
    assert_eq!(s.available_ip_address_count(), Some(251));
    assert_eq!(s.map_public_ip_on_launch(), Some(false));
    let id = s.subnet_id.unwrap();
    ec2.wait_until_subnet_available()
        .subnet_ids(&id)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let got = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("availability-zone", &["us-east-1b"]))
        .filters(filter("tag:Name", &["pub"]))
        .send()
        .await
        .unwrap();
    assert_eq!(got.subnets().len(), 1);
    assert_eq!(got.subnets()[0].cidr_block(), Some("10.0.1.0/24"));
    assert_eq!(
        got.subnets()[0].subnet_arn(),
        Some(format!("arn:aws:ec2:us-east-1:123456789012:subnet/{id}").as_str())
    );

    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );
    ec2.delete_subnet().subnet_id(&id).send().await.unwrap();
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&id).send().await),
        "InvalidSubnetID.NotFound"
    );
    assert_eq!(
        code(ec2.describe_subnets().subnet_ids(&id).send().await),
        "InvalidSubnetID.NotFound"
    );
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
}

#[tokio::test]
async fn range_conflict_and_zone_errors() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let create = |cidr: &str| ec2.create_subnet().vpc_id(&vpc_id).cidr_block(cidr);
    assert_eq!(
        code(create("10.1.0.0/24").send().await),
        "InvalidSubnet.Range"
    );
    assert_eq!(
        code(create("10.0.0.0/29").send().await),
        "InvalidSubnet.Range"
    );
    assert_eq!(
        code(create("10.0.0.0/15").send().await),
        "InvalidSubnet.Range"
    );
    assert_eq!(
        code(create("10.0.0.0/99").send().await),
        "InvalidParameterValue"
    );
    create("10.0.0.0/20").send().await.unwrap();
    assert_eq!(
        code(create("10.0.1.0/24").send().await),
        "InvalidSubnet.Conflict"
    );
    assert_eq!(
        code(create("10.0.0.0/16").send().await),
        "InvalidSubnet.Conflict"
    );
    assert_eq!(
        code(
            create("10.0.16.0/24")
                .availability_zone("us-east-1z")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            create("10.0.16.0/24")
                .availability_zone("us-east-1a")
                .availability_zone_id("use1-az1")
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            ec2.create_subnet()
                .vpc_id("vpc-0123456789abcdef0")
                .cidr_block("10.0.0.0/24")
                .send()
                .await
        ),
        "InvalidVpcID.NotFound"
    );
    assert_eq!(
        code(ec2.create_subnet().cidr_block("10.0.0.0/24").send().await),
        "MissingParameter"
    );
    // Only the one good subnet exists.
    assert_eq!(
        ec2.describe_subnets()
            .filters(filter("vpc-id", &[&vpc_id]))
            .send()
            .await
            .unwrap()
            .subnets()
            .len(),
        1
    );
    // A zone given by id.
    let s = create("10.0.16.0/24")
        .availability_zone_id("use1-az4")
        .send()
        .await
        .unwrap();
    assert_eq!(s.subnet().unwrap().availability_zone(), Some("us-east-1c"));
}

#[tokio::test]
async fn modify_map_public_ip() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let id = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.0.0/24")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    ec2.modify_subnet_attribute()
        .subnet_id(&id)
        .map_public_ip_on_launch(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await
        .unwrap();
    let got = ec2
        .describe_subnets()
        .filters(filter("map-public-ip-on-launch", &["true"]))
        .send()
        .await
        .unwrap();
    assert_eq!(got.subnets().len(), 1);
    assert_eq!(got.subnets()[0].subnet_id(), Some(id.as_str()));
    assert_eq!(
        code(
            ec2.modify_subnet_attribute()
                .subnet_id("subnet-0123456789abcdef0")
                .map_public_ip_on_launch(AttributeBooleanValue::builder().value(true).build())
                .send()
                .await
        ),
        "InvalidSubnetID.NotFound"
    );
    // A model parameter fakeaws does not serve is refused, not ignored.
    let r = ec2
        .modify_subnet_attribute()
        .subnet_id(&id)
        .enable_lni_at_device_index(1)
        .send()
        .await;
    assert_eq!(code(r), "NotImplemented");
}

#[tokio::test]
async fn pagination() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    for i in 0..7 {
        ec2.create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block(format!("10.0.{i}.0/24"))
            .send()
            .await
            .unwrap();
    }
    let all: Vec<_> = ec2
        .describe_subnets()
        .max_results(5)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(all.len(), 7);
    let first = ec2.describe_subnets().max_results(5).send().await.unwrap();
    assert_eq!(first.subnets().len(), 5);
    assert!(first.next_token().is_some());
}
