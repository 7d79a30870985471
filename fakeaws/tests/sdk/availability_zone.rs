//! DescribeAvailabilityZones through the SDK.

use crate::{code, filter};

/// Each region lists the zones AWS gives an account there, with their AZ ids: six in
/// us-east-1, two in us-west-1, letters other than `a`, `b`, `c` in ca-central-1 and
/// ap-northeast-1, three elsewhere; a zone a region lacks is refused.
#[tokio::test]
async fn each_region_lists_its_own_zones() {
    let fake = fakeaws::spawn().await.unwrap();
    for (region, zones) in [
        (
            "us-east-1",
            &[
                ("a", "use1-az1"),
                ("b", "use1-az2"),
                ("c", "use1-az4"),
                ("d", "use1-az5"),
                ("e", "use1-az3"),
                ("f", "use1-az6"),
            ][..],
        ),
        ("us-west-1", &[("a", "usw1-az1"), ("c", "usw1-az3")][..]),
        (
            "us-west-2",
            &[
                ("a", "usw2-az1"),
                ("b", "usw2-az2"),
                ("c", "usw2-az3"),
                ("d", "usw2-az4"),
            ][..],
        ),
        (
            "ap-northeast-1",
            &[("a", "apne1-az4"), ("c", "apne1-az1"), ("d", "apne1-az2")][..],
        ),
        (
            "ca-central-1",
            &[("a", "cac1-az1"), ("b", "cac1-az2"), ("d", "cac1-az4")][..],
        ),
        (
            "eu-west-2",
            &[("a", "euw2-az1"), ("b", "euw2-az2"), ("c", "euw2-az3")][..],
        ),
    ] {
        let ec2 = fake.ec2_client_in(region);
        let listed = ec2.describe_availability_zones().send().await.unwrap();
        let got: Vec<(String, String)> = listed
            .availability_zones()
            .iter()
            .map(|z| {
                (
                    z.zone_name().unwrap().to_string(),
                    z.zone_id().unwrap().to_string(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = zones
            .iter()
            .map(|(l, id)| (format!("{region}{l}"), id.to_string()))
            .collect();
        assert_eq!(got, want, "{region}");
        // A subnet goes to each of them, and not to a letter the region lacks.
        let vpc = crate::vpc(&ec2, "10.0.0.0/16").await;
        for (i, (zone, _)) in want.iter().enumerate() {
            ec2.create_subnet()
                .vpc_id(&vpc)
                .cidr_block(format!("10.0.{i}.0/24"))
                .availability_zone(zone)
                .send()
                .await
                .unwrap();
        }
        let lacking = ('a'..='g')
            .map(|l| format!("{region}{l}"))
            .find(|z| !want.iter().any(|(w, _)| w == z))
            .unwrap();
        assert_eq!(
            code(
                ec2.create_subnet()
                    .vpc_id(&vpc)
                    .cidr_block("10.0.99.0/24")
                    .availability_zone(&lacking)
                    .send()
                    .await
            ),
            "InvalidParameterValue",
            "{lacking}"
        );
    }
    for (region, first_id) in [("us-east-1", "use1-az1"), ("eu-west-2", "euw2-az1")] {
        let ec2 = fake.ec2_client_in(region);
        let zones = ec2
            .describe_availability_zones()
            .filters(filter("state", &["available"]))
            .send()
            .await
            .unwrap();
        let names: Vec<&str> = zones
            .availability_zones()
            .iter()
            .map(|z| z.zone_name().unwrap())
            .collect();
        assert_eq!(
            names[..3],
            [
                format!("{region}a"),
                format!("{region}b"),
                format!("{region}c")
            ]
        );
        assert_eq!(zones.availability_zones()[0].zone_id(), Some(first_id));
        assert_eq!(zones.availability_zones()[0].region_name(), Some(region));
    }
    let ec2 = fake.ec2_client();
    let one = ec2
        .describe_availability_zones()
        .zone_names("us-east-1b")
        .send()
        .await
        .unwrap();
    assert_eq!(one.availability_zones().len(), 1);
    assert_eq!(
        code(
            ec2.describe_availability_zones()
                .zone_names("us-east-1q")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // Zones are not taggable: tag filters are unknown filters there.
    assert_eq!(
        code(
            ec2.describe_availability_zones()
                .filters(filter("tag:x", &["y"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

#[tokio::test]
async fn regions_are_isolated() {
    let fake = fakeaws::spawn().await.unwrap();
    let east = fake.ec2_client_in("us-east-1");
    let west = fake.ec2_client_in("us-west-2");
    let before = west.describe_vpcs().send().await.unwrap().vpcs().len();
    let id = crate::vpc(&east, "10.0.0.0/16").await;
    assert_eq!(
        west.describe_vpcs().send().await.unwrap().vpcs().len(),
        before
    );
    assert_eq!(
        code(west.describe_vpcs().vpc_ids(&id).send().await),
        "InvalidVpcID.NotFound"
    );
    east.describe_vpcs().vpc_ids(&id).send().await.unwrap();
}
