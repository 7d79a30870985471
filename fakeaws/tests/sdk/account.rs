//! DescribeRegions and DescribeAccountAttributes through the SDK.

use aws_sdk_ec2::types::AccountAttributeName;

use crate::{allocate_addresses_up_to, code, default_vpc_id, empty_fake, filter};

/// The names DescribeRegions lists in `region`, with `build` adding to the request.
async fn listed(
    ec2: &aws_sdk_ec2::Client,
    build: impl FnOnce(
        aws_sdk_ec2::operation::describe_regions::builders::DescribeRegionsFluentBuilder,
    ) -> aws_sdk_ec2::operation::describe_regions::builders::DescribeRegionsFluentBuilder,
) -> Vec<String> {
    build(ec2.describe_regions())
        .send()
        .await
        .unwrap()
        .regions()
        .iter()
        .map(|r| r.region_name().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn regions_of_the_callers_partition_are_listed() {
    let fake = fakeaws::spawn().await.unwrap();
    let ec2 = fake.ec2_client_in("eu-west-1");
    let out = ec2.describe_regions().send().await.unwrap();
    let names: Vec<&str> = out
        .regions()
        .iter()
        .map(|r| r.region_name().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    for name in ["us-east-1", "eu-west-1", "ap-southeast-2", "af-south-1"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    // Other partitions are not the commercial partition's regions.
    for name in ["cn-north-1", "us-gov-west-1", "us-iso-east-1"] {
        assert!(!names.contains(&name), "{name} listed in {names:?}");
    }
    let us_east_1 = out
        .regions()
        .iter()
        .find(|r| r.region_name() == Some("us-east-1"))
        .unwrap();
    assert_eq!(us_east_1.endpoint(), Some("ec2.us-east-1.amazonaws.com"));
    assert_eq!(us_east_1.opt_in_status(), Some("opt-in-not-required"));
    // Every region is enabled for the fake's account: AllRegions lists no more.
    assert_eq!(listed(&ec2, |r| r.all_regions(true)).await, names);

    // Opt-in regions are opted in; the filters read the listed values.
    let opted = listed(&ec2, |r| r.filters(filter("opt-in-status", &["opted-in"]))).await;
    assert!(opted.contains(&"af-south-1".to_string()), "{opted:?}");
    assert!(!opted.contains(&"us-east-1".to_string()), "{opted:?}");
    assert_eq!(
        listed(&ec2, |r| r.filters(filter("region-name", &["us-*-2"]))).await,
        ["us-east-2", "us-west-2"]
    );
    assert_eq!(
        listed(&ec2, |r| r
            .filters(filter("endpoint", &["ec2.eu-west-3.amazonaws.com"])))
        .await,
        ["eu-west-3"]
    );
    assert_eq!(
        code(
            ec2.describe_regions()
                .filters(filter("region", &["us-east-1"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );

    // Named regions, any order given, come back in the listing's order; a name that is not a
    // region of the partition is refused.
    assert_eq!(
        listed(&ec2, |r| r
            .region_names("us-west-2")
            .region_names("eu-west-1"))
        .await,
        ["eu-west-1", "us-west-2"]
    );
    let (refused, message) = crate::code_and_message(
        ec2.describe_regions()
            .region_names("us-east-1")
            .region_names("moon-base-1")
            .send()
            .await,
    );
    assert_eq!(refused, "InvalidParameterValue");
    assert_eq!(message, "Invalid region: [moon-base-1]");
    assert_eq!(
        code(
            ec2.describe_regions()
                .region_names("cn-north-1")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(ec2.describe_regions().dry_run(true).send().await),
        "DryRunOperation"
    );
}

#[tokio::test]
async fn other_partitions_and_added_regions() {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        extra_regions: vec!["lab-local-1".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    let china = fake.ec2_client_in("cn-north-1");
    let out = china.describe_regions().send().await.unwrap();
    let listed: Vec<(&str, &str)> = out
        .regions()
        .iter()
        .map(|r| (r.region_name().unwrap(), r.endpoint().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("cn-north-1", "ec2.cn-north-1.amazonaws.com.cn"),
            ("cn-northwest-1", "ec2.cn-northwest-1.amazonaws.com.cn"),
        ]
    );
    // A region the fake was told to serve is listed with the commercial partition's, and
    // lists them from itself.
    for from in ["us-east-1", "lab-local-1"] {
        let names = self::listed(&fake.ec2_client_in(from), |r| r).await;
        assert!(names.contains(&"lab-local-1".to_string()), "{names:?}");
        assert!(names.contains(&"us-east-1".to_string()), "{names:?}");
    }
}

/// The values DescribeAccountAttributes answers, by attribute name.
async fn attributes(ec2: &aws_sdk_ec2::Client, names: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut request = ec2.describe_account_attributes();
    for n in names {
        request = request.attribute_names(AccountAttributeName::from(*n));
    }
    request
        .send()
        .await
        .unwrap()
        .account_attributes()
        .iter()
        .map(|a| {
            (
                a.attribute_name().unwrap().to_string(),
                a.attribute_values()
                    .iter()
                    .map(|v| v.attribute_value().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

#[tokio::test]
async fn account_attributes_name_the_default_vpc_and_the_quotas() {
    let fake = fakeaws::spawn().await.unwrap();
    let ec2 = fake.ec2_client();
    let default_vpc = default_vpc_id(&ec2).await;
    let all = attributes(&ec2, &[]).await;
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "vpc-max-security-groups-per-interface",
            "max-instances",
            "supported-platforms",
            "default-vpc",
            "max-elastic-ips",
            "vpc-max-elastic-ips",
        ]
    );
    assert_eq!(
        attributes(&ec2, &["default-vpc"]).await,
        [("default-vpc".to_string(), vec![default_vpc.clone()])]
    );
    assert_eq!(
        attributes(&ec2, &["supported-platforms"]).await,
        [("supported-platforms".to_string(), vec!["VPC".to_string()])]
    );
    // The names the documentation lists beside the model's two are taken too.
    assert_eq!(
        attributes(&ec2, &["vpc-max-elastic-ips", "default-vpc"]).await,
        [
            ("default-vpc".to_string(), vec![default_vpc]),
            ("vpc-max-elastic-ips".to_string(), vec!["5".to_string()]),
        ]
    );
    assert_eq!(
        code(
            ec2.describe_account_attributes()
                .attribute_names(AccountAttributeName::from("max-vpcs"))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

#[tokio::test]
async fn account_attributes_follow_raised_quotas_and_a_missing_default_vpc() {
    let mut limits = fakeaws::region::Limits::default();
    limits.set("elastic-ips", 7).unwrap();
    limits.set("instances", 40).unwrap();
    let fake = fakeaws::spawn_with(fakeaws::Config {
        limits,
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let got = attributes(&ec2, &["max-instances", "vpc-max-elastic-ips"]).await;
    assert_eq!(
        got,
        [
            ("max-instances".to_string(), vec!["40".to_string()]),
            ("vpc-max-elastic-ips".to_string(), vec!["7".to_string()]),
        ]
    );
    // The reported number is what AllocateAddress allows.
    allocate_addresses_up_to(&ec2, 7).await;

    let without = empty_fake().await;
    assert_eq!(
        attributes(&without.ec2_client(), &["default-vpc"]).await,
        [("default-vpc".to_string(), vec!["none".to_string()])]
    );
}

#[tokio::test]
async fn arns_name_the_partition_of_their_region() {
    use aws_sdk_ec2::types::{IamInstanceProfileSpecification, InstanceType};
    let fake = empty_fake().await;
    for (region, partition) in [
        ("cn-north-1", "aws-cn"),
        ("us-gov-west-1", "aws-us-gov"),
        ("eu-west-1", "aws"),
    ] {
        let ec2 = fake.ec2_client_in(region);
        let vpc_id = crate::vpc(&ec2, "10.0.0.0/16").await;
        let zone = format!("{region}a");
        let subnet = ec2
            .create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block("10.0.1.0/24")
            .availability_zone(&zone)
            .send()
            .await
            .unwrap()
            .subnet
            .unwrap();
        let prefix = format!("arn:{partition}:ec2:{region}:123456789012:subnet/");
        assert!(
            subnet.subnet_arn().unwrap().starts_with(&prefix),
            "{subnet:?}"
        );
        let lists = ec2.describe_managed_prefix_lists().send().await.unwrap();
        for l in lists.prefix_lists() {
            let arn = l.prefix_list_arn().unwrap();
            assert!(
                arn.starts_with(&format!("arn:{partition}:ec2:{region}:aws:")),
                "{arn}"
            );
        }

        // An instance profile is named by an ARN of the region's partition, and shown so.
        let image = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
        let launch = |arn: String| {
            ec2.run_instances()
                .image_id(&image)
                .instance_type(InstanceType::T3Micro)
                .subnet_id(subnet.subnet_id().unwrap())
                .iam_instance_profile(IamInstanceProfileSpecification::builder().arn(arn).build())
                .min_count(1)
                .max_count(1)
                .send()
        };
        let own = format!("arn:{partition}:iam::123456789012:instance-profile/nodes");
        let out = launch(own.clone()).await.unwrap();
        let profile = out.instances()[0].iam_instance_profile().unwrap();
        assert_eq!(profile.arn(), Some(own.as_str()));
        let other = if partition == "aws" { "aws-cn" } else { "aws" };
        assert_eq!(
            code(
                launch(format!(
                    "arn:{other}:iam::123456789012:instance-profile/nodes"
                ))
                .await
            ),
            "InvalidParameterValue"
        );
    }
}
