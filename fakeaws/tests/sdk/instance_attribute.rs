//! ModifyInstanceAttribute through the SDK: each attribute changed and read back with
//! DescribeInstanceAttribute and DescribeInstances; what needs a stopped instance; one
//! attribute per call; termination and stop protection refusing TerminateInstances and
//! StopInstances until lifted. ModifyInstanceMetadataOptions: `pending` until the options
//! apply. ResetInstanceAttribute: the three attributes that can be reset, each in the states
//! the API reference names.

use aws_sdk_ec2::primitives::Blob;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, AttributeValue, InstanceAttributeName, InstanceStateName,
    SecureBlobAttributeValue,
};

use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, described, empty_fake, instance, stop, subnet, vpc, wait};

fn yes(v: bool) -> AttributeBooleanValue {
    AttributeBooleanValue::builder().value(v).build()
}

fn value(v: &str) -> AttributeValue {
    AttributeValue::builder().value(v).build()
}

async fn attribute(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    name: InstanceAttributeName,
) -> aws_sdk_ec2::operation::describe_instance_attribute::DescribeInstanceAttributeOutput {
    ec2.describe_instance_attribute()
        .instance_id(id)
        .attribute(name)
        .send()
        .await
        .unwrap()
}

/// A fresh fake with one running instance: the fake, its EC2 client, the instance's VPC and
/// the instance.
async fn running_instance() -> (fakeaws::FakeAws, aws_sdk_ec2::Client, String, String) {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let id = instance(&ec2, &s).await;
    wait(&ec2, &id, InstanceStateName::Running).await;
    (fake, ec2, vpc_id, id)
}

#[tokio::test]
async fn protection_and_shutdown_behaviour_change_while_running() {
    let (_fake, ec2, vpc_id, id) = running_instance().await;

    // Termination protection: TerminateInstances is refused until it is lifted.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .disable_api_termination(yes(true))
        .send()
        .await
        .unwrap();
    let a = attribute(&ec2, &id, InstanceAttributeName::DisableApiTermination).await;
    assert_eq!(a.disable_api_termination().unwrap().value(), Some(true));
    assert_eq!(
        code(ec2.terminate_instances().instance_ids(&id).send().await),
        "OperationNotPermitted"
    );

    // Stop protection, set the plain way (`Attribute` and `Value`): StopInstances refused.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .attribute(InstanceAttributeName::DisableApiStop)
        .value("true")
        .send()
        .await
        .unwrap();
    let a = attribute(&ec2, &id, InstanceAttributeName::DisableApiStop).await;
    assert_eq!(a.disable_api_stop().unwrap().value(), Some(true));
    let (refusal, message) = code_and_message(ec2.stop_instances().instance_ids(&id).send().await);
    assert_eq!(refusal, "OperationNotPermitted");
    assert!(message.contains("disableApiStop"), "{message}");
    assert_eq!(
        described(&ec2, &id).await.state().unwrap().name(),
        Some(&InstanceStateName::Running),
        "refused, so still running"
    );

    ec2.modify_instance_attribute()
        .instance_id(&id)
        .instance_initiated_shutdown_behavior(value("terminate"))
        .send()
        .await
        .unwrap();
    let a = attribute(
        &ec2,
        &id,
        InstanceAttributeName::InstanceInitiatedShutdownBehavior,
    )
    .await;
    assert_eq!(
        a.instance_initiated_shutdown_behavior().unwrap().value(),
        Some("terminate")
    );
    let refused = ec2
        .modify_instance_attribute()
        .instance_id(&id)
        .instance_initiated_shutdown_behavior(value("hibernate"))
        .send()
        .await;
    assert_eq!(code(refused), "InvalidInstanceAttributeValue");

    // Source/destination check: the primary interface's, as DescribeNetworkInterfaces shows.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .source_dest_check(yes(false))
        .send()
        .await
        .unwrap();
    let a = attribute(&ec2, &id, InstanceAttributeName::SourceDestCheck).await;
    assert_eq!(a.source_dest_check().unwrap().value(), Some(false));
    let i = described(&ec2, &id).await;
    assert_eq!(i.source_dest_check(), Some(false));
    let eni = i.network_interfaces()[0].network_interface_id().unwrap();
    let enis = ec2
        .describe_network_interfaces()
        .network_interface_ids(eni)
        .send()
        .await
        .unwrap();
    assert_eq!(
        enis.network_interfaces()[0].source_dest_check(),
        Some(false)
    );

    // Security groups: replaced on the primary interface; one of another VPC is refused.
    let group = |vpc: String, name: &'static str| {
        let ec2 = ec2.clone();
        async move {
            ec2.create_security_group()
                .group_name(name)
                .description(name)
                .vpc_id(vpc)
                .send()
                .await
                .unwrap()
                .group_id
                .unwrap()
        }
    };
    let sg = group(vpc_id.clone(), "nodes").await;
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .groups(&sg)
        .send()
        .await
        .unwrap();
    let a = attribute(&ec2, &id, InstanceAttributeName::GroupSet).await;
    let ids: Vec<&str> = a.groups().iter().filter_map(|g| g.group_id()).collect();
    assert_eq!(ids, [sg.as_str()]);
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let elsewhere = group(other_vpc, "elsewhere").await;
    let refused = ec2
        .modify_instance_attribute()
        .instance_id(&id)
        .groups(&elsewhere)
        .send()
        .await;
    assert!(code(refused).starts_with("InvalidGroup"));
    let a = attribute(&ec2, &id, InstanceAttributeName::GroupSet).await;
    assert_eq!(a.groups()[0].group_id(), Some(sg.as_str()), "unchanged");

    // Lifting the protections lets the instance stop and terminate again.
    for lift in [
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .disable_api_stop(yes(false)),
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .disable_api_termination(yes(false)),
    ] {
        lift.send().await.unwrap();
    }
    ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let (code, _) = code_and_message(
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .disable_api_termination(yes(true))
            .send()
            .await,
    );
    assert_eq!(
        code, "IncorrectInstanceState",
        "a terminated instance is not modified"
    );
}

#[tokio::test]
async fn reset_turns_the_source_dest_check_on_and_resets_kernel_and_ramdisk_only_when_stopped() {
    let (fake, ec2, _vpc_id, id) = running_instance().await;
    let reset = |name: InstanceAttributeName| {
        ec2.reset_instance_attribute()
            .instance_id(&id)
            .attribute(name)
            .send()
    };
    let check_of = |a: aws_sdk_ec2::operation::describe_instance_attribute::DescribeInstanceAttributeOutput| {
        a.source_dest_check().and_then(|c| c.value())
    };

    // Turned off (as for a NAT instance), then reset while running: checking again, on the
    // instance and on its primary interface.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .source_dest_check(yes(false))
        .send()
        .await
        .unwrap();
    reset(InstanceAttributeName::SourceDestCheck).await.unwrap();
    let a = attribute(&ec2, &id, InstanceAttributeName::SourceDestCheck).await;
    assert_eq!(check_of(a), Some(true));
    let i = described(&ec2, &id).await;
    assert_eq!(i.source_dest_check(), Some(true));
    assert_eq!(i.network_interfaces()[0].source_dest_check(), Some(true));

    // The kernel and the ramdisk only on a stopped instance.
    for name in [
        InstanceAttributeName::Kernel,
        InstanceAttributeName::Ramdisk,
    ] {
        let (c, message) = code_and_message(reset(name).await);
        assert_eq!(c, "IncorrectInstanceState");
        assert!(message.contains("'stopped'"), "{message}");
    }
    // No other attribute can be reset, and a refused reset changes nothing.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .disable_api_termination(yes(true))
        .send()
        .await
        .unwrap();
    for name in [
        InstanceAttributeName::DisableApiTermination,
        InstanceAttributeName::InstanceType,
        InstanceAttributeName::UserData,
        InstanceAttributeName::GroupSet,
    ] {
        let (c, message) = code_and_message(reset(name.clone()).await);
        assert_eq!(c, "InvalidParameterValue", "{name:?}");
        assert!(message.contains(name.as_str()), "{message}");
    }
    let a = attribute(&ec2, &id, InstanceAttributeName::DisableApiTermination).await;
    assert_eq!(a.disable_api_termination().unwrap().value(), Some(true));
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .disable_api_termination(yes(false))
        .send()
        .await
        .unwrap();

    // Stopped: all three reset; the instance holds no kernel or ramdisk of its own.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .source_dest_check(yes(false))
        .send()
        .await
        .unwrap();
    stop(&fake, &ec2, &id).await;
    for name in [
        InstanceAttributeName::Kernel,
        InstanceAttributeName::Ramdisk,
        InstanceAttributeName::SourceDestCheck,
    ] {
        reset(name).await.unwrap();
    }
    let a = attribute(&ec2, &id, InstanceAttributeName::Kernel).await;
    assert_eq!(a.kernel_id().and_then(|k| k.value()), None);
    let a = attribute(&ec2, &id, InstanceAttributeName::SourceDestCheck).await;
    assert_eq!(check_of(a), Some(true));

    // Not a terminated instance, nor one that does not exist.
    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(reset(InstanceAttributeName::SourceDestCheck).await),
        "IncorrectInstanceState"
    );
    assert_eq!(
        code(
            ec2.reset_instance_attribute()
                .instance_id("i-0123456789abcdef0")
                .attribute(InstanceAttributeName::SourceDestCheck)
                .send()
                .await
        ),
        "InvalidInstanceID.NotFound"
    );
}

#[tokio::test]
async fn type_and_user_data_change_only_while_stopped() {
    let (_fake, ec2, _, id) = running_instance().await;

    let to_large = || {
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .instance_type(value("m5.large"))
            .send()
    };
    let (code, message) = code_and_message(to_large().await);
    assert_eq!(code, "IncorrectInstanceState");
    assert_eq!(
        message,
        format!("The instance '{id}' is not in the 'stopped' state.")
    );
    let new_data = Blob::new(b"#cloud-config\nruncmd: [echo resized]\n".to_vec());
    let user_data = || {
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .user_data(
                SecureBlobAttributeValue::builder()
                    .value(new_data.clone())
                    .build(),
            )
            .send()
    };
    assert_eq!(
        code_and_message(user_data().await).0,
        "IncorrectInstanceState"
    );

    ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    wait(&ec2, &id, InstanceStateName::Stopped).await;
    to_large().await.unwrap();
    user_data().await.unwrap();
    let a = attribute(&ec2, &id, InstanceAttributeName::InstanceType).await;
    assert_eq!(a.instance_type().unwrap().value(), Some("m5.large"));
    // User data is given back base64, as it was sent.
    let a = attribute(&ec2, &id, InstanceAttributeName::UserData).await;
    let back = aws_smithy_types::base64::decode(a.user_data().unwrap().value().unwrap()).unwrap();
    assert_eq!(back, new_data.as_ref());

    // A type of another architecture, or none of AWS's (refused in AWS's words, as stored
    // real outputs show them), is refused and changes nothing.
    for (wanted, expected) in [
        ("m6g.large", "InvalidInstanceAttributeValue"),
        ("m5.enormous", "InvalidParameterValue"),
    ] {
        let (code, message) = code_and_message(
            ec2.modify_instance_attribute()
                .instance_id(&id)
                .instance_type(value(wanted))
                .send()
                .await,
        );
        assert_eq!(code, expected, "{wanted}");
        if wanted == "m5.enormous" {
            assert_eq!(
                message,
                "The following supplied instance types do not exist: [m5.enormous]"
            );
        }
    }
    // One attribute per call.
    let (code, message) = code_and_message(
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .instance_type(value("t3.large"))
            .ebs_optimized(yes(true))
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterCombination");
    assert!(
        message.contains("instanceType") && message.contains("ebsOptimized"),
        "{message}"
    );
    // None at all.
    let (code, _) = code_and_message(
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .send()
            .await,
    );
    assert_eq!(code, "MissingParameter");

    ec2.start_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    wait(&ec2, &id, InstanceStateName::Running).await;
    assert_eq!(
        described(&ec2, &id)
            .await
            .instance_type()
            .map(|t| t.as_str()),
        Some("m5.large"),
        "started again as the type it was given"
    );
    assert_eq!(
        code_and_message(
            ec2.modify_instance_attribute()
                .instance_id("i-0123456789abcdef0")
                .disable_api_termination(yes(true))
                .send()
                .await
        )
        .0,
        "InvalidInstanceID.NotFound"
    );
}

/// The instance's metadata options as DescribeInstances shows them.
async fn metadata(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
) -> aws_sdk_ec2::types::InstanceMetadataOptionsResponse {
    described(ec2, id).await.metadata_options().unwrap().clone()
}

#[tokio::test]
async fn metadata_options_are_pending_until_they_apply() {
    use aws_sdk_ec2::types::{HttpTokensState, InstanceMetadataOptionsState as State};
    let (fake, ec2, _, id) = running_instance().await;
    let hold = |held: bool| {
        fake.fake().with_region("us-east-1", |r| {
            if held {
                r.transitions.hold(Subject::Instance);
            } else {
                r.transitions.release(Subject::Instance);
            }
        })
    };

    // Running: the answer and the describes say `pending` until the instance's next step.
    hold(true);
    let out = ec2
        .modify_instance_metadata_options()
        .instance_id(&id)
        .http_tokens(HttpTokensState::Optional)
        .http_put_response_hop_limit(3)
        .send()
        .await
        .unwrap();
    assert_eq!(out.instance_id(), Some(id.as_str()));
    let m = out.instance_metadata_options().unwrap();
    assert_eq!(m.state(), Some(&State::Pending));
    assert_eq!(m.http_tokens(), Some(&HttpTokensState::Optional));
    assert_eq!(m.http_put_response_hop_limit(), Some(3));
    assert_eq!(metadata(&ec2, &id).await.state(), Some(&State::Pending));
    hold(false);
    let m = metadata(&ec2, &id).await;
    assert_eq!(m.state(), Some(&State::Applied));
    assert_eq!(m.http_tokens(), Some(&HttpTokensState::Optional));
    assert_eq!(m.http_put_response_hop_limit(), Some(3));

    // A hop limit outside 1..=64 is refused and changes nothing.
    let refused = ec2
        .modify_instance_metadata_options()
        .instance_id(&id)
        .http_put_response_hop_limit(65)
        .send()
        .await;
    assert_eq!(code(refused), "InvalidParameterValue");
    assert_eq!(
        metadata(&ec2, &id).await.http_put_response_hop_limit(),
        Some(3)
    );

    // Stopped: pending until the instance runs again.
    ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    wait(&ec2, &id, InstanceStateName::Stopped).await;
    ec2.modify_instance_metadata_options()
        .instance_id(&id)
        .http_tokens(HttpTokensState::Required)
        .send()
        .await
        .unwrap();
    assert_eq!(metadata(&ec2, &id).await.state(), Some(&State::Pending));
    ec2.start_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    wait(&ec2, &id, InstanceStateName::Running).await;
    let m = metadata(&ec2, &id).await;
    assert_eq!(m.state(), Some(&State::Applied));
    assert_eq!(m.http_tokens(), Some(&HttpTokensState::Required));

    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let refused = ec2
        .modify_instance_metadata_options()
        .instance_id(&id)
        .http_tokens(HttpTokensState::Optional)
        .send()
        .await;
    assert_eq!(code(refused), "IncorrectInstanceState");
}

/// The monitoring state DescribeInstances shows for `id`.
async fn monitoring_of(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::MonitoringState {
    described(ec2, id)
        .await
        .monitoring()
        .unwrap()
        .state()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn detailed_monitoring_is_turned_on_and_off() {
    use aws_sdk_ec2::types::MonitoringState;
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.0.0/24", "us-east-1a").await;
    let a = instance(&ec2, &s).await;
    let b = instance(&ec2, &s).await;
    assert_eq!(monitoring_of(&ec2, &a).await, MonitoringState::Disabled);
    let out = ec2
        .monitor_instances()
        .instance_ids(&a)
        .instance_ids(&b)
        .send()
        .await
        .unwrap();
    let answered: Vec<(&str, &MonitoringState)> = out
        .instance_monitorings()
        .iter()
        .map(|m| {
            (
                m.instance_id().unwrap(),
                m.monitoring().unwrap().state().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        answered,
        [
            (a.as_str(), &MonitoringState::Pending),
            (b.as_str(), &MonitoringState::Pending)
        ]
    );
    assert_eq!(monitoring_of(&ec2, &a).await, MonitoringState::Enabled);
    let enabled = ec2
        .describe_instances()
        .filters(crate::filter("monitoring-state", &["enabled"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        enabled
            .reservations()
            .iter()
            .map(|r| r.instances().len())
            .sum::<usize>(),
        2
    );
    let out = ec2
        .unmonitor_instances()
        .instance_ids(&b)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.instance_monitorings()[0].monitoring().unwrap().state(),
        Some(&MonitoringState::Disabling)
    );
    assert_eq!(monitoring_of(&ec2, &b).await, MonitoringState::Disabled);
    // An unknown instance among them changes none.
    assert_eq!(
        code(
            ec2.unmonitor_instances()
                .instance_ids(&a)
                .instance_ids("i-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidInstanceID.NotFound"
    );
    assert_eq!(monitoring_of(&ec2, &a).await, MonitoringState::Enabled);
    // A terminated instance's monitoring no longer changes.
    ec2.terminate_instances()
        .instance_ids(&b)
        .send()
        .await
        .unwrap();
    wait(&ec2, &b, InstanceStateName::Terminated).await;
    assert_eq!(
        code(ec2.monitor_instances().instance_ids(&b).send().await),
        "IncorrectInstanceState"
    );
}

/// SR-IOV enhanced networking (`sriovNetSupport`), as the user guide turns it on: only on a
/// stopped instance, only `simple`; it is on from the image, and stays on.
#[tokio::test]
async fn sriov_net_support_is_simple_and_set_only_while_stopped() {
    let (fake, ec2, _, id) = running_instance().await;
    let sriov = || async {
        attribute(&ec2, &id, InstanceAttributeName::SriovNetSupport)
            .await
            .sriov_net_support()
            .and_then(|v| v.value().map(str::to_string))
    };
    assert_eq!(sriov().await.as_deref(), Some("simple"));
    let set = |v: &'static str| {
        ec2.modify_instance_attribute()
            .instance_id(&id)
            .sriov_net_support(value(v))
            .send()
    };
    assert_eq!(code(set("simple").await), "IncorrectInstanceState");
    stop(&fake, &ec2, &id).await;
    set("simple").await.unwrap();
    // By `Attribute` and `Value` too.
    ec2.modify_instance_attribute()
        .instance_id(&id)
        .attribute(InstanceAttributeName::SriovNetSupport)
        .value("simple")
        .send()
        .await
        .unwrap();
    let (code, message) = code_and_message(set("off").await);
    assert_eq!(code, "InvalidInstanceAttributeValue");
    assert!(message.contains("simple"), "{message}");
    assert_eq!(sriov().await.as_deref(), Some("simple"));
}
