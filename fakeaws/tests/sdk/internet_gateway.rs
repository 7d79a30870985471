//! Internet gateways through the SDK.

use aws_sdk_ec2::types::ResourceType;

use crate::{code, empty_fake, filter, tag_spec, vpc};

#[tokio::test]
async fn lifecycle_and_errors() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_a = vpc(&ec2, "10.0.0.0/16").await;
    let vpc_b = vpc(&ec2, "10.1.0.0/16").await;
    let igw = ec2
        .create_internet_gateway()
        .tag_specifications(tag_spec(ResourceType::InternetGateway, &[("Name", "gw")]))
        .send()
        .await
        .unwrap()
        .internet_gateway
        .unwrap();
    assert!(igw.attachments().is_empty());
    let id = igw.internet_gateway_id.unwrap();
    let igw2 = ec2
        .create_internet_gateway()
        .send()
        .await
        .unwrap()
        .internet_gateway
        .unwrap()
        .internet_gateway_id
        .unwrap();

    assert_eq!(
        code(
            ec2.detach_internet_gateway()
                .internet_gateway_id(&id)
                .vpc_id(&vpc_a)
                .send()
                .await
        ),
        "Gateway.NotAttached"
    );
    ec2.attach_internet_gateway()
        .internet_gateway_id(&id)
        .vpc_id(&vpc_a)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.attach_internet_gateway()
                .internet_gateway_id(&id)
                .vpc_id(&vpc_b)
                .send()
                .await
        ),
        "Resource.AlreadyAssociated"
    );
    assert_eq!(
        code(
            ec2.attach_internet_gateway()
                .internet_gateway_id(&igw2)
                .vpc_id(&vpc_a)
                .send()
                .await
        ),
        "Resource.AlreadyAssociated"
    );
    assert_eq!(
        code(
            ec2.detach_internet_gateway()
                .internet_gateway_id(&id)
                .vpc_id(&vpc_b)
                .send()
                .await
        ),
        "Gateway.NotAttached"
    );
    assert_eq!(
        code(
            ec2.delete_internet_gateway()
                .internet_gateway_id(&id)
                .send()
                .await
        ),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_a).send().await),
        "DependencyViolation"
    );

    let found = ec2
        .describe_internet_gateways()
        .filters(filter("attachment.vpc-id", &[&vpc_a]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.internet_gateways().len(), 1);
    let g = &found.internet_gateways()[0];
    assert_eq!(g.internet_gateway_id(), Some(id.as_str()));
    assert_eq!(g.attachments()[0].vpc_id(), Some(vpc_a.as_str()));
    // AWS answers `available` for an attached gateway, which the SDK's enum (from the model,
    // whose values say `attached`) keeps as an unknown value: what a caller reads is the text.
    assert_eq!(
        g.attachments()[0].state().map(|s| s.as_str()),
        Some("available")
    );
    assert_eq!(g.tags()[0].value(), Some("gw"));

    ec2.detach_internet_gateway()
        .internet_gateway_id(&id)
        .vpc_id(&vpc_a)
        .send()
        .await
        .unwrap();
    ec2.delete_internet_gateway()
        .internet_gateway_id(&id)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&vpc_a).send().await.unwrap();
    assert_eq!(
        code(
            ec2.describe_internet_gateways()
                .internet_gateway_ids(&id)
                .send()
                .await
        ),
        "InvalidInternetGatewayID.NotFound"
    );
    assert_eq!(
        code(
            ec2.attach_internet_gateway()
                .internet_gateway_id(&igw2)
                .vpc_id(&vpc_a)
                .send()
                .await
        ),
        "InvalidVpcID.NotFound"
    );
    assert_eq!(
        code(
            ec2.delete_internet_gateway()
                .internet_gateway_id("igw-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidInternetGatewayID.NotFound"
    );
    assert_eq!(
        code(ec2.attach_internet_gateway().vpc_id(&vpc_b).send().await),
        "MissingParameter"
    );
    let all = ec2.describe_internet_gateways().send().await.unwrap();
    assert_eq!(all.internet_gateways().len(), 1);
}
