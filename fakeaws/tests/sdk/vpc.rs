//! VPCs through the SDK.

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType, VpcAttributeName, VpcState};

use crate::{code, empty_fake, filter, tag_spec, vpc};

#[tokio::test]
async fn create_describe_delete() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    // A CIDR with host bits is refused, as AWS refuses it, not quietly made canonical.
    let refused = ec2.create_vpc().cidr_block("10.1.0.5/16").send().await;
    assert_eq!(crate::code(refused), "InvalidParameterValue");
    assert!(ec2.describe_vpcs().send().await.unwrap().vpcs().is_empty());
    let created = ec2
        .create_vpc()
        .cidr_block("10.1.0.0/16")
        .tag_specifications(tag_spec(ResourceType::Vpc, &[("Name", "one")]))
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    assert_eq!(created.state, Some(VpcState::Pending));
    assert_eq!(created.cidr_block.as_deref(), Some("10.1.0.0/16"));
    let id = created.vpc_id.unwrap();
    assert!(id.starts_with("vpc-") && id.len() == 21, "{id}");

    let vpcs = ec2
        .describe_vpcs()
        .vpc_ids(&id)
        .send()
        .await
        .unwrap()
        .vpcs
        .unwrap();
    assert_eq!(vpcs.len(), 1);
    assert_eq!(vpcs[0].state, Some(VpcState::Available));
    assert_eq!(vpcs[0].is_default, Some(false));
    assert_eq!(vpcs[0].tags()[0].key(), Some("Name"));
    assert_eq!(vpcs[0].owner_id(), Some("123456789012"));

    ec2.delete_vpc().vpc_id(&id).send().await.unwrap();
    assert_eq!(
        code(ec2.describe_vpcs().vpc_ids(&id).send().await),
        "InvalidVpcID.NotFound"
    );
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&id).send().await),
        "InvalidVpcID.NotFound"
    );
}

#[tokio::test]
async fn cidr_validation() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    assert_eq!(
        code(ec2.create_vpc().cidr_block("10.0.0.0/33").send().await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(ec2.create_vpc().cidr_block("banana").send().await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(ec2.create_vpc().cidr_block("10.0.0.0/8").send().await),
        "InvalidVpc.Range"
    );
    assert_eq!(
        code(ec2.create_vpc().cidr_block("10.0.0.0/29").send().await),
        "InvalidVpc.Range"
    );
    assert_eq!(code(ec2.create_vpc().send().await), "MissingParameter");
    ec2.create_vpc()
        .cidr_block("10.0.0.0/28")
        .send()
        .await
        .unwrap();
    // Nothing was created by the failed calls.
    assert_eq!(ec2.describe_vpcs().send().await.unwrap().vpcs().len(), 1);
}

#[tokio::test]
async fn default_vpc_exists_and_can_be_switched_off() {
    let fake = fakeaws::spawn().await.unwrap();
    let ec2 = fake.ec2_client();
    let vpcs = ec2
        .describe_vpcs()
        .filters(filter("is-default", &["true"]))
        .send()
        .await
        .unwrap()
        .vpcs
        .unwrap();
    assert_eq!(vpcs.len(), 1);
    assert_eq!(vpcs[0].cidr_block(), Some("172.31.0.0/16"));
    let default_id = vpcs[0].vpc_id().unwrap().to_string();
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&default_id]))
        .send()
        .await
        .unwrap();
    // One default subnet per availability zone: us-east-1 has six.
    assert_eq!(subnets.subnets().len(), 6);
    assert!(
        subnets
            .subnets()
            .iter()
            .all(|s| s.default_for_az() == Some(true))
    );
    // With subnets and a gateway in it, the default VPC cannot be deleted.
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&default_id).send().await),
        "DependencyViolation"
    );

    let empty = empty_fake().await;
    assert!(
        empty
            .ec2_client()
            .describe_vpcs()
            .send()
            .await
            .unwrap()
            .vpcs()
            .is_empty()
    );
}

#[tokio::test]
async fn filters_and_unknown_filter() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = ec2
        .create_vpc()
        .cidr_block("10.1.0.0/16")
        .tag_specifications(tag_spec(
            ResourceType::Vpc,
            &[("team", "blue"), ("env", "dev")],
        ))
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let ids = |r: aws_sdk_ec2::operation::describe_vpcs::DescribeVpcsOutput| {
        r.vpcs()
            .iter()
            .map(|v| v.vpc_id().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let got = ids(ec2
        .describe_vpcs()
        .filters(filter("tag:team", &["blue"]))
        .send()
        .await
        .unwrap());
    assert_eq!(got, vec![b.clone()]);
    let got = ids(ec2
        .describe_vpcs()
        .filters(filter("tag-key", &["env"]))
        .send()
        .await
        .unwrap());
    assert_eq!(got, vec![b.clone()]);
    let got = ids(ec2
        .describe_vpcs()
        .filters(filter("tag-value", &["bl*"]))
        .send()
        .await
        .unwrap());
    assert_eq!(got, vec![b.clone()]);
    let got = ids(ec2
        .describe_vpcs()
        .filters(filter(
            "cidr-block-association.cidr-block",
            &["10.0.0.0/16"],
        ))
        .send()
        .await
        .unwrap());
    assert_eq!(got, vec![a.clone()]);
    let got = ids(ec2
        .describe_vpcs()
        .filters(filter("state", &["available"]))
        .filters(filter("vpc-id", &[&a, &b]))
        .send()
        .await
        .unwrap());
    assert_eq!(got.len(), 2);
    let got = ids(ec2
        .describe_vpcs()
        .filters(filter("state", &["pending"]))
        .send()
        .await
        .unwrap());
    assert!(got.is_empty());
    let (code, message) = crate::code_and_message(
        ec2.describe_vpcs()
            .filters(filter("colour", &["red"]))
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    assert!(message.contains("colour"), "{message}");
}

#[tokio::test]
async fn attributes() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let id = vpc(&ec2, "10.0.0.0/16").await;
    let get = |attr: VpcAttributeName| {
        let ec2 = ec2.clone();
        let id = id.clone();
        async move {
            ec2.describe_vpc_attribute()
                .vpc_id(id)
                .attribute(attr)
                .send()
                .await
                .unwrap()
        }
    };
    let out = get(VpcAttributeName::EnableDnsHostnames).await;
    assert_eq!(
        out.enable_dns_hostnames().and_then(|v| v.value()),
        Some(false)
    );
    assert!(out.enable_dns_support().is_none());
    assert_eq!(
        get(VpcAttributeName::EnableDnsSupport)
            .await
            .enable_dns_support()
            .and_then(|v| v.value()),
        Some(true)
    );
    ec2.modify_vpc_attribute()
        .vpc_id(&id)
        .enable_dns_hostnames(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await
        .unwrap();
    assert_eq!(
        get(VpcAttributeName::EnableDnsHostnames)
            .await
            .enable_dns_hostnames()
            .and_then(|v| v.value()),
        Some(true)
    );
    let both = ec2
        .modify_vpc_attribute()
        .vpc_id(&id)
        .enable_dns_hostnames(AttributeBooleanValue::builder().value(true).build())
        .enable_dns_support(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await;
    assert_eq!(code(both), "InvalidParameterCombination");
    assert_eq!(
        code(
            ec2.describe_vpc_attribute()
                .vpc_id("vpc-0123456789abcdef0")
                .attribute(VpcAttributeName::EnableDnsSupport)
                .send()
                .await
        ),
        "InvalidVpcID.NotFound"
    );
    assert_eq!(
        code(
            ec2.describe_vpc_attribute()
                .vpc_id("nonsense")
                .attribute(VpcAttributeName::EnableDnsSupport)
                .send()
                .await
        ),
        "InvalidVpcID.Malformed"
    );
}

#[tokio::test]
async fn paginator_and_waiter() {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        limits: fakeaws::Limits {
            vpcs: 100,
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let mut created = Vec::new();
    for i in 0..12 {
        created.push(vpc(&ec2, &format!("10.{i}.0.0/16")).await);
    }
    let pages: Vec<_> = ec2
        .describe_vpcs()
        .max_results(5)
        .into_paginator()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(pages.len(), 3);
    let mut seen: Vec<String> = pages
        .iter()
        .flat_map(|p| p.vpcs().iter().map(|v| v.vpc_id().unwrap().to_string()))
        .collect();
    seen.sort();
    created.sort();
    assert_eq!(seen, created);
    assert_eq!(
        code(ec2.describe_vpcs().max_results(4).send().await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(ec2.describe_vpcs().next_token("bogus").send().await),
        "InvalidPaginationToken"
    );

    ec2.wait_until_vpc_available()
        .vpc_ids(&created[0])
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
}

#[tokio::test]
async fn vpc_limit() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    for i in 0..5 {
        vpc(&ec2, &format!("10.{i}.0.0/16")).await;
    }
    assert_eq!(
        code(ec2.create_vpc().cidr_block("10.9.0.0/16").send().await),
        "VpcLimitExceeded"
    );
}

#[tokio::test]
async fn tag_specification_for_wrong_type_creates_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let r = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .tag_specifications(tag_spec(ResourceType::Subnet, &[("a", "b")]))
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterValue");
    assert!(ec2.describe_vpcs().send().await.unwrap().vpcs().is_empty());
}

/// The default subnets of the region: (zone, CIDR, maps public IPs), sorted by zone.
async fn default_subnets(ec2: &aws_sdk_ec2::Client) -> Vec<(String, String, bool)> {
    let out = ec2
        .describe_subnets()
        .filters(filter("default-for-az", &["true"]))
        .send()
        .await
        .unwrap();
    let mut subnets: Vec<(String, String, bool)> = out
        .subnets()
        .iter()
        .map(|s| {
            (
                s.availability_zone().unwrap().to_string(),
                s.cidr_block().unwrap().to_string(),
                s.map_public_ip_on_launch().unwrap(),
            )
        })
        .collect();
    subnets.sort();
    subnets
}

#[tokio::test]
async fn the_default_vpc_and_its_subnets_are_made_again_once_deleted() {
    let fake = fakeaws::spawn().await.unwrap();
    let ec2 = fake.ec2_client();
    let (code, message) = crate::code_and_message(ec2.create_default_vpc().send().await);
    assert_eq!(code, "DefaultVpcAlreadyExists");
    assert_eq!(
        message,
        "A Default VPC already exists for this account in this region."
    );
    let first = default_subnets(&ec2).await;
    assert!(first.len() >= 3, "{first:?}");

    // Deleted as a user deletes it: subnets, gateway, then the VPC.
    let old = ec2
        .describe_vpcs()
        .filters(filter("is-default", &["true"]))
        .send()
        .await
        .unwrap()
        .vpcs()[0]
        .vpc_id()
        .unwrap()
        .to_string();
    for s in ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&old]))
        .send()
        .await
        .unwrap()
        .subnets()
    {
        ec2.delete_subnet()
            .subnet_id(s.subnet_id().unwrap())
            .send()
            .await
            .unwrap();
    }
    let igw = crate::gateway_of(&ec2, &old).await;
    ec2.detach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&old)
        .send()
        .await
        .unwrap();
    ec2.delete_internet_gateway()
        .internet_gateway_id(&igw)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&old).send().await.unwrap();
    assert_eq!(
        crate::code(
            ec2.create_default_subnet()
                .availability_zone("us-east-1a")
                .send()
                .await
        ),
        "DefaultVpcDoesNotExist"
    );

    // Made again: 172.31.0.0/16, the same default subnets, a gateway and a default route.
    let made = ec2.create_default_vpc().send().await.unwrap().vpc.unwrap();
    assert_eq!(made.is_default(), Some(true));
    assert_eq!(made.cidr_block(), Some("172.31.0.0/16"));
    assert_eq!(made.state(), Some(&VpcState::Pending));
    let id = made.vpc_id().unwrap().to_string();
    assert_ne!(id, old);
    assert_eq!(default_subnets(&ec2).await, first);
    let tables = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[&id]))
        .filters(filter("association.main", &["true"]))
        .send()
        .await
        .unwrap();
    let igw = crate::gateway_of(&ec2, &id).await;
    assert!(tables.route_tables()[0].routes().iter().any(|r| {
        r.destination_cidr_block() == Some("0.0.0.0/0") && r.gateway_id() == Some(igw.as_str())
    }));
    let groups = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert_eq!(groups.security_groups()[0].group_name(), Some("default"));
    // A launch without a subnet goes to the new default VPC.
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let run = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Micro)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    assert_eq!(run.instances()[0].vpc_id(), Some(id.as_str()));

    // A default subnet deleted is made again in its zone, in the lowest free /20.
    let b = crate::default_subnet_in(&ec2, "us-east-1b").await;
    ec2.delete_subnet().subnet_id(&b).send().await.unwrap();
    let again = ec2
        .create_default_subnet()
        .availability_zone("us-east-1b")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    assert_eq!(again.default_for_az(), Some(true));
    assert_eq!(again.vpc_id(), Some(id.as_str()));
    assert_eq!(default_subnets(&ec2).await, first);
    // One per zone; a zone the region lacks, or none, is refused.
    for (zone, expected) in [
        (
            Some("us-east-1b"),
            "DefaultSubnetAlreadyExistsInAvailabilityZone",
        ),
        (Some("us-east-1z"), "InvalidParameterValue"),
        (None, "MissingParameter"),
    ] {
        assert_eq!(
            crate::code(
                ec2.create_default_subnet()
                    .set_availability_zone(zone.map(str::to_string))
                    .send()
                    .await
            ),
            expected,
            "{zone:?}"
        );
    }
    assert_eq!(default_subnets(&ec2).await, first);
}
