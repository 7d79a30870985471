//! VPC flow logs through the SDK: made per resource (the failures of one resource listed in
//! `Unsuccessful`, the request's own errors making nothing), described and filtered, tagged,
//! deleted, and gone with their resource.

use aws_sdk_ec2::types::{
    DestinationFileFormat, DestinationOptionsRequest, FlowLogsResourceType, LogDestinationType,
    ResourceType, TrafficType,
};

use crate::{code_and_message, empty_fake, fake_with_quota, filter, subnet, tag_spec, vpc};

const ROLE: &str = "arn:aws:iam::123456789012:role/publishFlowLogs";
const BUCKET: &str = "arn:aws:s3:::flow-log-bucket/my-custom-flow-logs/";

/// The ids of the flow logs the account holds, with `filters`.
async fn flow_logs(ec2: &aws_sdk_ec2::Client, filters: &[(&str, &str)]) -> Vec<String> {
    let mut call = ec2.describe_flow_logs();
    for (name, value) in filters {
        call = call.filter(filter(name, &[value]));
    }
    let mut ids: Vec<String> = call
        .send()
        .await
        .unwrap()
        .flow_logs()
        .iter()
        .map(|f| f.flow_log_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// A flow log of all traffic of `resource` (of `kind`) to the S3 bucket folder `folder`.
async fn to_s3(
    ec2: &aws_sdk_ec2::Client,
    kind: FlowLogsResourceType,
    resource: &str,
    folder: &str,
) -> aws_sdk_ec2::operation::create_flow_logs::CreateFlowLogsOutput {
    ec2.create_flow_logs()
        .resource_type(kind)
        .resource_ids(resource)
        .traffic_type(TrafficType::All)
        .log_destination_type(LogDestinationType::S3)
        .log_destination(format!("arn:aws:s3:::flow-log-bucket/{folder}/"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn flow_logs_are_made_per_resource_described_and_deleted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let eni = ec2
        .create_network_interface()
        .subnet_id(&subnet_id)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();

    // To CloudWatch Logs: the log group by name, with the role EC2 publishes with.
    let out = ec2
        .create_flow_logs()
        .resource_type(FlowLogsResourceType::NetworkInterface)
        .resource_ids(&eni)
        .traffic_type(TrafficType::Reject)
        .log_group_name("my-flow-logs")
        .deliver_logs_permission_arn(ROLE)
        .tag_specifications(tag_spec(ResourceType::VpcFlowLog, &[("team", "net")]))
        .send()
        .await
        .unwrap();
    assert!(out.unsuccessful().is_empty(), "{out:?}");
    assert!(out.client_token().is_some_and(|t| !t.is_empty()));
    let [cwl] = out.flow_log_ids() else {
        panic!("{out:?}")
    };
    assert!(cwl.starts_with("fl-"));

    // To S3, for the VPC and one that does not exist: made for the one, refused for the
    // other.
    let out = ec2
        .create_flow_logs()
        .resource_type(FlowLogsResourceType::Vpc)
        .resource_ids(&vpc_id)
        .resource_ids("vpc-00112233344556677")
        .traffic_type(TrafficType::All)
        .log_destination_type(LogDestinationType::S3)
        .log_destination(BUCKET)
        .log_format("${version} ${vpc-id} ${subnet-id} ${srcaddr} ${dstaddr} ${action}")
        .max_aggregation_interval(60)
        .destination_options(
            DestinationOptionsRequest::builder()
                .file_format(DestinationFileFormat::Parquet)
                .per_hour_partition(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let [s3] = out.flow_log_ids() else {
        panic!("{out:?}")
    };
    let [refused] = out.unsuccessful() else {
        panic!("{out:?}")
    };
    assert_eq!(refused.resource_id(), Some("vpc-00112233344556677"));
    let error = refused.error().unwrap();
    assert_eq!(error.code(), Some("InvalidVpcId.NotFound"));
    assert_eq!(
        error.message(),
        Some("Unknown resource vpc-00112233344556677")
    );

    // Described as made.
    let all = ec2.describe_flow_logs().send().await.unwrap();
    assert_eq!(all.flow_logs().len(), 2);
    let of = |id: &str| {
        all.flow_logs()
            .iter()
            .find(|f| f.flow_log_id() == Some(id))
            .unwrap()
            .clone()
    };
    let c = of(cwl);
    assert_eq!(c.resource_id(), Some(eni.as_str()));
    assert_eq!(c.traffic_type(), Some(&TrafficType::Reject));
    assert_eq!(
        c.log_destination_type(),
        Some(&LogDestinationType::CloudWatchLogs)
    );
    assert_eq!(c.log_group_name(), Some("my-flow-logs"));
    assert_eq!(c.deliver_logs_permission_arn(), Some(ROLE));
    assert_eq!(c.flow_log_status(), Some("ACTIVE"));
    assert_eq!(c.deliver_logs_status(), Some("SUCCESS"));
    assert_eq!(c.max_aggregation_interval(), Some(600));
    assert_eq!(
        c.log_format(),
        Some(
            "${version} ${account-id} ${interface-id} ${srcaddr} ${dstaddr} ${srcport} \
             ${dstport} ${protocol} ${packets} ${bytes} ${start} ${end} ${action} ${log-status}"
        )
    );
    assert!(c.creation_time().is_some());
    assert!(c.destination_options().is_none());
    assert_eq!(c.tags().len(), 1);
    let s = of(s3);
    assert_eq!(s.resource_id(), Some(vpc_id.as_str()));
    assert_eq!(s.log_destination(), Some(BUCKET));
    assert_eq!(s.log_group_name(), None);
    assert_eq!(s.max_aggregation_interval(), Some(60));
    let options = s.destination_options().unwrap();
    assert_eq!(options.file_format(), Some(&DestinationFileFormat::Parquet));
    assert_eq!(options.hive_compatible_partitions(), Some(false));
    assert_eq!(options.per_hour_partition(), Some(true));

    // Filters, DescribeTags, pages.
    let vpc = vpc_id.as_str();
    let cases: [(&str, &str, &[&str]); 7] = [
        ("resource-id", vpc, &[s3]),
        ("traffic-type", "REJECT", &[cwl]),
        ("log-destination-type", "s3", &[s3]),
        ("log-group-name", "my-flow-logs", &[cwl]),
        ("tag:team", "net", &[cwl]),
        ("deliver-log-status", "FAILED", &[]),
        ("flow-log-id", cwl, &[cwl]),
    ];
    for (name, value, want) in cases {
        assert_eq!(flow_logs(&ec2, &[(name, value)]).await, want, "{name}");
    }
    assert_eq!(
        flow_logs(&ec2, &[("deliver-log-status", "SUCCESS")])
            .await
            .len(),
        2
    );
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-type", &["vpc-flow-log"]))
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags().len(), 1);
    assert_eq!(tags.tags()[0].resource_id(), Some(cwl.as_str()));
    let first = ec2
        .describe_flow_logs()
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(first.flow_logs().len(), 1);
    let second = ec2
        .describe_flow_logs()
        .max_results(1)
        .next_token(first.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(second.flow_logs().len(), 1);
    assert_eq!(second.next_token(), None);
    assert_ne!(first.flow_logs()[0], second.flow_logs()[0]);

    // Deleted: the one known, the other listed as not found; then the id is unknown.
    let out = ec2
        .delete_flow_logs()
        .flow_log_ids(s3)
        .flow_log_ids("fl-11223344556677889")
        .send()
        .await
        .unwrap();
    let [missing] = out.unsuccessful() else {
        panic!("{out:?}")
    };
    assert_eq!(missing.resource_id(), Some("fl-11223344556677889"));
    assert_eq!(
        missing.error().unwrap().code(),
        Some("InvalidFlowLogId.NotFound")
    );
    assert_eq!(
        missing.error().unwrap().message(),
        Some(
            "These flow log ids in the input list are not found: [TotalCount: 1] fl-11223344556677889"
        )
    );
    assert_eq!(flow_logs(&ec2, &[]).await, [cwl.as_str()]);
    let (code, _) = code_and_message(ec2.describe_flow_logs().flow_log_ids(s3).send().await);
    assert_eq!(code, "InvalidFlowLogId.NotFound");

    // A flow log goes with its resource.
    ec2.delete_network_interface()
        .network_interface_id(&eni)
        .send()
        .await
        .unwrap();
    assert!(flow_logs(&ec2, &[]).await.is_empty());
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-type", &["vpc-flow-log"]))
        .send()
        .await
        .unwrap();
    assert!(tags.tags().is_empty());
}

#[tokio::test]
async fn a_resource_takes_no_duplicate_and_at_most_its_quota() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let kind = FlowLogsResourceType::Subnet;

    let first = to_s3(&ec2, kind.clone(), &subnet_id, "a").await;
    assert_eq!(first.flow_log_ids().len(), 1);
    let again = to_s3(&ec2, kind.clone(), &subnet_id, "a").await;
    assert!(again.flow_log_ids().is_empty());
    let error = again.unsuccessful()[0].error().unwrap();
    assert_eq!(error.code(), Some("FlowLogAlreadyExists"));
    assert_eq!(
        error.message(),
        Some(
            "Error. There is an existing Flow Log with the same configuration and log destination."
        )
    );
    assert_eq!(
        to_s3(&ec2, kind.clone(), &subnet_id, "b")
            .await
            .flow_log_ids()
            .len(),
        1
    );
    let third = to_s3(&ec2, kind.clone(), &subnet_id, "c").await;
    assert_eq!(
        third.unsuccessful()[0].error().unwrap().code(),
        Some("FlowLogsLimitExceeded")
    );
    // The VPC has a quota of its own.
    let on_vpc = to_s3(&ec2, FlowLogsResourceType::Vpc, &vpc_id, "c").await;
    assert_eq!(on_vpc.flow_log_ids().len(), 1);
    assert_eq!(
        flow_logs(&ec2, &[("resource-id", &subnet_id)]).await.len(),
        2
    );

    // A resource id of another type than the call's is not found.
    let wrong = to_s3(
        &ec2,
        FlowLogsResourceType::NetworkInterface,
        &subnet_id,
        "d",
    )
    .await;
    assert_eq!(
        wrong.unsuccessful()[0].error().unwrap().code(),
        Some("InvalidNetworkInterfaceId.NotFound")
    );

    // Raised, the quota takes a third.
    let fake = fake_with_quota("flow-logs-per-resource", 3).await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    for folder in ["a", "b", "c"] {
        let out = to_s3(&ec2, FlowLogsResourceType::Vpc, &vpc_id, folder).await;
        assert_eq!(out.flow_log_ids().len(), 1, "{out:?}");
    }
    let fourth = to_s3(&ec2, FlowLogsResourceType::Vpc, &vpc_id, "d").await;
    assert_eq!(
        fourth.unsuccessful()[0].error().unwrap().code(),
        Some("FlowLogsLimitExceeded")
    );

    // The same ClientToken answers the same flow logs.
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let call = || {
        ec2.create_flow_logs()
            .client_token("flow-log-1")
            .resource_type(FlowLogsResourceType::Vpc)
            .resource_ids(&vpc_id)
            .traffic_type(TrafficType::Accept)
            .log_group_name("g")
            .deliver_logs_permission_arn(ROLE)
    };
    let once = call().send().await.unwrap();
    let twice = call().send().await.unwrap();
    assert_eq!(once.flow_log_ids(), twice.flow_log_ids());
    assert_eq!(twice.client_token(), Some("flow-log-1"));
    assert_eq!(flow_logs(&ec2, &[]).await.len(), 1);
    let (code, _) = code_and_message(call().traffic_type(TrafficType::All).send().await);
    assert_eq!(code, "IdempotentParameterMismatch");
}

#[tokio::test]
async fn a_bad_request_is_refused_and_makes_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let base = || {
        ec2.create_flow_logs()
            .resource_type(FlowLogsResourceType::Vpc)
            .resource_ids(&vpc_id)
            .traffic_type(TrafficType::All)
    };
    let cases = [
        (
            base()
                .log_group_name("g")
                .log_destination("arn:aws:logs:us-east-1:123456789012:log-group:g")
                .deliver_logs_permission_arn(ROLE),
            "InvalidParameter",
            "Please only provide LogGroupName or only provide LogDestination.",
        ),
        (
            base().log_group_name("g"),
            "InvalidParameter",
            "DeliverLogsPermissionArn is required for cloud-watch-logs delivery.",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::S3)
                .log_destination(BUCKET)
                .deliver_logs_permission_arn(ROLE),
            "InvalidParameter",
            "DeliverLogsPermissionArn is not applicable for s3 delivery",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::S3)
                .log_destination("arn:aws:s3:::flow-log-bucket/AWSLogs/"),
            "InvalidParameter",
            "",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::S3)
                .log_destination("arn:aws:logs:us-east-1:123456789012:log-group:g"),
            "InvalidParameter",
            "",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::KinesisDataFirehose)
                .log_destination("arn:aws:s3:::flow-log-bucket"),
            "InvalidParameter",
            "",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::S3)
                .log_destination(BUCKET)
                .max_aggregation_interval(120),
            "InvalidParameterValue",
            "",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::S3)
                .log_destination(BUCKET)
                .log_format("${version} ${not-a-field}"),
            "InvalidParameter",
            "",
        ),
        (
            base()
                .log_group_name("g")
                .deliver_logs_permission_arn(ROLE)
                .destination_options(
                    DestinationOptionsRequest::builder()
                        .file_format(DestinationFileFormat::PlainText)
                        .build(),
                ),
            "InvalidParameter",
            "",
        ),
        (
            base()
                .log_destination_type(LogDestinationType::S3)
                .log_destination(BUCKET)
                .tag_specifications(tag_spec(ResourceType::Vpc, &[("a", "b")])),
            "InvalidParameterValue",
            "",
        ),
        (
            ec2.create_flow_logs()
                .resource_type(FlowLogsResourceType::TransitGateway)
                .resource_ids("tgw-0123456789abcdef0"),
            "NotImplemented",
            "",
        ),
    ];
    for (i, (call, want, words)) in cases.into_iter().enumerate() {
        let answer = call.send().await;
        assert!(answer.is_err(), "case {i}: {answer:?}");
        let (code, message) = code_and_message(answer);
        assert_eq!(code, want, "case {i}: {message}");
        if !words.is_empty() {
            assert_eq!(message, words);
        }
    }
    assert!(flow_logs(&ec2, &[]).await.is_empty());
}
