//! The envelope as the SDK sees it: request ids, DryRun, unserved operations.

use aws_sdk_ec2::operation::RequestId;

use crate::{code, empty_fake};

#[tokio::test]
async fn every_response_has_a_request_id() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ok = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(ok.request_id().map(str::len), Some(36));
    let err = ec2
        .delete_vpc()
        .vpc_id("vpc-0123456789abcdef0")
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.request_id().map(str::len), Some(36));
}

#[tokio::test]
async fn dry_run_checks_and_changes_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let r = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .dry_run(true)
        .send()
        .await;
    assert_eq!(code(r), "DryRunOperation");
    assert!(ec2.describe_vpcs().send().await.unwrap().vpcs().is_empty());
}

#[tokio::test]
async fn unserved_operation_is_a_clear_error() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (code, message) = crate::code_and_message(ec2.describe_transit_gateways().send().await);
    assert_eq!(code, "NotImplemented");
    assert!(message.contains("DescribeTransitGateways"), "{message}");
}
