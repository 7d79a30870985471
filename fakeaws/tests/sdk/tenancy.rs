//! Dedicated tenancy through the SDK: a VPC of `dedicated` instance tenancy launches Dedicated
//! Instances, ModifyVpcTenancy turns it to `default` for later launches only, and what it
//! refuses changes nothing.

use aws_sdk_ec2::types::{Placement, Tenancy};

use crate::{code, empty_fake, filter, subnet};

async fn vpc_tenancy(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> Tenancy {
    let out = ec2.describe_vpcs().vpc_ids(vpc_id).send().await.unwrap();
    out.vpcs()[0].instance_tenancy().unwrap().clone()
}

async fn instance_tenancy(ec2: &aws_sdk_ec2::Client, id: &str) -> Tenancy {
    crate::described(ec2, id)
        .await
        .placement()
        .unwrap()
        .tenancy()
        .unwrap()
        .clone()
}

/// An instance launched into `subnet_id`, asking for `tenancy` if given; its id.
async fn launch(ec2: &aws_sdk_ec2::Client, subnet_id: &str, tenancy: Option<Tenancy>) -> String {
    let placement = tenancy.map(|t| Placement::builder().tenancy(t).build());
    crate::instance_placed(ec2, subnet_id, placement).await
}

#[tokio::test]
async fn a_dedicated_vpc_launches_dedicated_instances_until_its_tenancy_is_modified() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let dedicated = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .instance_tenancy(Tenancy::Dedicated)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let shared = crate::vpc(&ec2, "10.1.0.0/16").await;
    assert_eq!(vpc_tenancy(&ec2, &dedicated).await, Tenancy::Dedicated);
    assert_eq!(vpc_tenancy(&ec2, &shared).await, Tenancy::Default);
    let in_dedicated = subnet(&ec2, &dedicated, "10.0.1.0/24", "us-east-1a").await;
    let in_shared = subnet(&ec2, &shared, "10.1.1.0/24", "us-east-1a").await;

    // Launched into the dedicated VPC: dedicated, whatever the launch asks; into the shared
    // one, what it asks, shared by default.
    let before = launch(&ec2, &in_dedicated, None).await;
    let asked_default = launch(&ec2, &in_dedicated, Some(Tenancy::Default)).await;
    assert_eq!(instance_tenancy(&ec2, &before).await, Tenancy::Dedicated);
    assert_eq!(
        instance_tenancy(&ec2, &asked_default).await,
        Tenancy::Dedicated
    );
    let plain = launch(&ec2, &in_shared, None).await;
    let asked_dedicated = launch(&ec2, &in_shared, Some(Tenancy::Dedicated)).await;
    assert_eq!(instance_tenancy(&ec2, &plain).await, Tenancy::Default);
    assert_eq!(
        instance_tenancy(&ec2, &asked_dedicated).await,
        Tenancy::Dedicated
    );
    let dedicated_ones = ec2
        .describe_instances()
        .filters(filter("tenancy", &["dedicated"]))
        .send()
        .await
        .unwrap();
    let count: usize = dedicated_ones
        .reservations()
        .iter()
        .map(|r| r.instances().len())
        .sum();
    assert_eq!(count, 3);

    // To default: the VPC says so, launches after it are shared, those before stay dedicated.
    let out = ec2
        .modify_vpc_tenancy()
        .vpc_id(&dedicated)
        .instance_tenancy(aws_sdk_ec2::types::VpcTenancy::Default)
        .send()
        .await
        .unwrap();
    assert_eq!(out.return_value(), Some(true));
    assert_eq!(vpc_tenancy(&ec2, &dedicated).await, Tenancy::Default);
    let after = launch(&ec2, &in_dedicated, None).await;
    assert_eq!(instance_tenancy(&ec2, &after).await, Tenancy::Default);
    assert_eq!(instance_tenancy(&ec2, &before).await, Tenancy::Dedicated);

    // Refused, changing nothing: a missing VPC, and a tenancy other than default.
    let missing = ec2
        .modify_vpc_tenancy()
        .vpc_id("vpc-0123456789abcdef0")
        .instance_tenancy(aws_sdk_ec2::types::VpcTenancy::Default)
        .send()
        .await;
    assert_eq!(code(missing), "InvalidVpcID.NotFound");
    let to_dedicated = ec2
        .modify_vpc_tenancy()
        .vpc_id(&shared)
        .instance_tenancy(aws_sdk_ec2::types::VpcTenancy::from("dedicated"))
        .send()
        .await;
    assert_eq!(code(to_dedicated), "InvalidParameterValue");
    assert_eq!(vpc_tenancy(&ec2, &shared).await, Tenancy::Default);
}
