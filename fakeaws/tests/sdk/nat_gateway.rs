//! NAT gateways through the SDK: states, the waiter, ClientToken, failure without a gateway.

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{DomainType, NatGatewayState};
use fakeaws::sim::transitions::Subject;

use crate::{code, empty_fake, filter, gateway, subnet, vpc};

/// Allocates an Elastic IP and returns its allocation id.
pub(crate) async fn allocation(ec2: &aws_sdk_ec2::Client) -> String {
    ec2.allocate_address()
        .domain(DomainType::Vpc)
        .send()
        .await
        .unwrap()
        .allocation_id
        .unwrap()
}

#[tokio::test]
async fn pending_available_deleting_deleted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    gateway(&ec2, &vpc_id).await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let alloc = allocation(&ec2).await;
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::NatGateway));
    let created = ec2
        .create_nat_gateway()
        .subnet_id(&s)
        .allocation_id(&alloc)
        .client_token("cluster-a-nat-us-east-1a")
        .send()
        .await
        .unwrap();
    let nat = created.nat_gateway().unwrap();
    assert_eq!(nat.state(), Some(&NatGatewayState::Pending));
    let id = nat.nat_gateway_id().unwrap().to_string();
    // Held: still pending however often it is observed.
    for _ in 0..3 {
        let d = ec2
            .describe_nat_gateways()
            .nat_gateway_ids(&id)
            .send()
            .await
            .unwrap();
        assert_eq!(d.nat_gateways()[0].state(), Some(&NatGatewayState::Pending));
    }
    // The same token answers the same gateway; with other parameters it is a mismatch.
    let again = ec2
        .create_nat_gateway()
        .subnet_id(&s)
        .allocation_id(&alloc)
        .client_token("cluster-a-nat-us-east-1a")
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.nat_gateway().unwrap().nat_gateway_id(),
        Some(id.as_str())
    );
    let other_subnet = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id(&other_subnet)
                .allocation_id(&alloc)
                .client_token("cluster-a-nat-us-east-1a")
                .send()
                .await
        ),
        "IdempotentParameterMismatch"
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::NatGateway));
    ec2.wait_until_nat_gateway_available()
        .nat_gateway_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let d = ec2
        .describe_nat_gateways()
        .filter(filter("vpc-id", &[&vpc_id]))
        .filter(filter("state", &["available"]))
        .send()
        .await
        .unwrap();
    let n = &d.nat_gateways()[0];
    let addr = &n.nat_gateway_addresses()[0];
    assert_eq!(addr.allocation_id(), Some(alloc.as_str()));
    assert!(addr.public_ip().is_some());
    assert!(addr.private_ip().unwrap().starts_with("10.0.0."));

    // The subnet and the Elastic IP are in use while the gateway lives.
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&s).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.release_address().allocation_id(&alloc).send().await),
        "InvalidIPAddress.InUse"
    );
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );

    let del = ec2
        .delete_nat_gateway()
        .nat_gateway_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(del.nat_gateway_id(), Some(id.as_str()));
    let d = ec2
        .describe_nat_gateways()
        .nat_gateway_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(d.nat_gateways()[0].state(), Some(&NatGatewayState::Deleted));
    assert!(d.nat_gateways()[0].delete_time().is_some());
    ec2.release_address()
        .allocation_id(&alloc)
        .send()
        .await
        .unwrap();
    ec2.delete_subnet().subnet_id(&s).send().await.unwrap();
    // Deleted gateways stay visible for an hour, then are gone.
    fake.fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(3601)));
    assert_eq!(
        code(
            ec2.describe_nat_gateways()
                .nat_gateway_ids(&id)
                .send()
                .await
        ),
        "NatGatewayNotFound"
    );
}

#[tokio::test]
async fn fails_without_internet_gateway() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let alloc = allocation(&ec2).await;
    let id = ec2
        .create_nat_gateway()
        .subnet_id(&s)
        .allocation_id(&alloc)
        .send()
        .await
        .unwrap()
        .nat_gateway
        .unwrap()
        .nat_gateway_id
        .unwrap();
    let d = ec2
        .describe_nat_gateways()
        .nat_gateway_ids(&id)
        .send()
        .await
        .unwrap();
    let n = &d.nat_gateways()[0];
    assert_eq!(n.state(), Some(&NatGatewayState::Failed));
    assert_eq!(n.failure_code(), Some("Gateway.NotAttached"));
    let waited = ec2
        .wait_until_nat_gateway_available()
        .nat_gateway_ids(&id)
        .wait(Duration::from_secs(5))
        .await;
    assert!(waited.is_err(), "the waiter fails on a failed gateway");
    // A failed gateway gives its address back.
    ec2.release_address()
        .allocation_id(&alloc)
        .send()
        .await
        .unwrap();
    ec2.delete_subnet().subnet_id(&s).send().await.unwrap();
}

#[tokio::test]
async fn errors() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    assert_eq!(
        code(
            ec2.describe_nat_gateways()
                .nat_gateway_ids("nat-0123456789abcdef0")
                .send()
                .await
        ),
        "NatGatewayNotFound"
    );
    assert_eq!(
        code(
            ec2.delete_nat_gateway()
                .nat_gateway_id("nat-0123456789abcdef0")
                .send()
                .await
        ),
        "NatGatewayNotFound"
    );
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    assert_eq!(
        code(ec2.create_nat_gateway().subnet_id(&s).send().await),
        "MissingParameter"
    );
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id(&s)
                .allocation_id("eipalloc-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidAllocationID.NotFound"
    );
    let alloc = allocation(&ec2).await;
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id("subnet-0123456789abcdef0")
                .allocation_id(&alloc)
                .send()
                .await
        ),
        "InvalidSubnetID.NotFound"
    );
    assert_eq!(
        code(
            ec2.describe_nat_gateways()
                .filter(filter("colour", &["x"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert!(
        ec2.describe_nat_gateways()
            .send()
            .await
            .unwrap()
            .nat_gateways()
            .is_empty()
    );
}
