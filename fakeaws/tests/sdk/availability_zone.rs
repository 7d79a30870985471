//! DescribeAvailabilityZones through the SDK.

use crate::{code, filter};

#[tokio::test]
async fn three_zones_per_region() {
    let fake = fakeaws::spawn().await.unwrap();
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
            names,
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
