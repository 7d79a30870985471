//! Instances through the SDK: launch with every parameter a provisioner passes, the state
//! machine and its waiters, ClientToken idempotency, validation, pagination by reservation,
//! the interface and root volume of each instance, DescribeInstanceStatus.

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    BlockDeviceMapping, EbsBlockDevice, IamInstanceProfileSpecification, InstanceStateName,
    InstanceType, ResourceType, VolumeState, VolumeType,
};
use fakeaws::sim::transitions::Subject;

use crate::{code, described, empty_fake, filter, image, instance, subnet, tag_spec, vpc, wait};

const AMI: &str = "capa-ami-ubuntu-24.04-v1.31.0-1727000000";

fn base64(data: &[u8]) -> String {
    aws_smithy_types::base64::encode(data)
}

#[tokio::test]
async fn run_describe_with_interface_volume_tags_and_addresses() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let public = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    ec2.modify_subnet_attribute()
        .subnet_id(&public)
        .map_public_ip_on_launch(
            aws_sdk_ec2::types::AttributeBooleanValue::builder()
                .value(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let sg = ec2
        .create_security_group()
        .group_name("bastion")
        .description("bastion")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    ec2.create_key_pair().key_name("ops").send().await.unwrap();
    let ami = image(&ec2, AMI).await;
    let user_data = base64(b"#cloud-config\nruncmd: [echo hi]\n");

    let run = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Small)
        .subnet_id(&public)
        .security_group_ids(&sg)
        .key_name("ops")
        .user_data(&user_data)
        .iam_instance_profile(
            IamInstanceProfileSpecification::builder()
                .name("nodes.cluster-api-provider-aws.sigs.k8s.io")
                .build(),
        )
        .block_device_mappings(
            BlockDeviceMapping::builder()
                .device_name("/dev/sda1")
                .ebs(
                    EbsBlockDevice::builder()
                        .volume_size(40)
                        .volume_type(VolumeType::Gp3)
                        .encrypted(true)
                        .delete_on_termination(true)
                        .build(),
                )
                .build(),
        )
        .tag_specifications(tag_spec(
            ResourceType::Instance,
            &[("Name", "bastion"), ("role", "bastion")],
        ))
        .tag_specifications(tag_spec(ResourceType::Volume, &[("role", "bastion-root")]))
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let launched = &run.instances()[0];
    assert_eq!(
        launched.state().unwrap().name(),
        Some(&InstanceStateName::Pending)
    );
    assert_eq!(launched.state().unwrap().code(), Some(0));
    let id = launched.instance_id().unwrap().to_string();

    ec2.wait_until_instance_running()
        .instance_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let d = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(d.reservations().len(), 1);
    assert_eq!(d.reservations()[0].reservation_id(), run.reservation_id());
    let i = &d.reservations()[0].instances()[0];
    assert_eq!(i.state().unwrap().name(), Some(&InstanceStateName::Running));
    assert_eq!(i.state().unwrap().code(), Some(16));
    assert_eq!(i.instance_type(), Some(&InstanceType::T3Small));
    assert_eq!(i.image_id(), Some(ami.as_str()));
    assert_eq!(i.key_name(), Some("ops"));
    assert_eq!(i.vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(i.subnet_id(), Some(public.as_str()));
    assert_eq!(
        i.placement().unwrap().availability_zone(),
        Some("us-east-1a")
    );
    assert_eq!(i.security_groups()[0].group_id(), Some(sg.as_str()));
    assert!(
        i.iam_instance_profile()
            .unwrap()
            .arn()
            .unwrap()
            .ends_with("instance-profile/nodes.cluster-api-provider-aws.sigs.k8s.io")
    );
    let private_ip: std::net::Ipv4Addr = i.private_ip_address().unwrap().parse().unwrap();
    assert!(
        "10.0.0.0/24"
            .parse::<ipnet::Ipv4Net>()
            .unwrap()
            .contains(&private_ip)
    );
    assert!(
        i.public_ip_address().is_some(),
        "the subnet maps public IPs"
    );
    assert!(i.private_dns_name().unwrap().starts_with("ip-10-0-0-"));
    assert!(
        i.tags()
            .iter()
            .any(|t| t.key() == Some("Name") && t.value() == Some("bastion"))
    );

    // Its network interface and root volume exist, attached, tagged as asked.
    let eni = &i.network_interfaces()[0];
    let enis = ec2
        .describe_network_interfaces()
        .filters(filter("attachment.instance-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert_eq!(enis.network_interfaces().len(), 1);
    assert_eq!(
        enis.network_interfaces()[0].network_interface_id(),
        eni.network_interface_id()
    );
    assert_eq!(
        enis.network_interfaces()[0].groups()[0].group_id(),
        Some(sg.as_str())
    );
    let root = i.block_device_mappings()[0]
        .ebs()
        .unwrap()
        .volume_id()
        .unwrap();
    let vols = ec2
        .describe_volumes()
        .volume_ids(root)
        .send()
        .await
        .unwrap();
    let v = &vols.volumes()[0];
    assert_eq!(v.size(), Some(40));
    assert_eq!(v.volume_type(), Some(&VolumeType::Gp3));
    assert_eq!(v.encrypted(), Some(true));
    assert_eq!(v.state(), Some(&VolumeState::InUse));
    assert_eq!(v.attachments()[0].instance_id(), Some(id.as_str()));
    assert!(v.tags().iter().any(|t| t.value() == Some("bastion-root")));

    // Filters a provisioner uses.
    for (name, value) in [
        ("vpc-id", vpc_id.as_str()),
        ("subnet-id", public.as_str()),
        ("tag:role", "bastion"),
        ("instance-state-name", "running"),
        ("instance-id", id.as_str()),
    ] {
        let d = ec2
            .describe_instances()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(d.reservations().len(), 1, "filter {name}={value}");
    }
    let none = ec2
        .describe_instances()
        .filters(filter("instance-state-name", &["stopped"]))
        .send()
        .await
        .unwrap();
    assert!(none.reservations().is_empty());
    assert_eq!(
        code(
            ec2.describe_instances()
                .filters(filter("no-such-filter", &["x"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.describe_instances()
                .instance_ids("i-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidInstanceID.NotFound"
    );
    assert_eq!(
        code(
            ec2.describe_instances()
                .instance_ids("nonsense")
                .send()
                .await
        ),
        "InvalidInstanceID.Malformed"
    );
}

#[tokio::test]
async fn lifecycle_stop_start_terminate_and_incorrect_state() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Instance));
    let id = instance(&ec2, &s).await;
    // Held in pending, with the state reason RunInstances answers (code and message
    // `pending`, the CLI's documented output), found by its filter; it cannot be stopped yet.
    let reason = |i: aws_sdk_ec2::types::Instance| {
        i.state_reason().map(|r| {
            (
                r.code().unwrap().to_string(),
                r.message().unwrap().to_string(),
            )
        })
    };
    assert_eq!(
        reason(crate::described(&ec2, &id).await),
        Some(("pending".into(), "pending".into()))
    );
    assert_eq!(
        crate::instance_ids(&ec2, &[("state-reason-code", "pending")]).await,
        [id.as_str()]
    );
    assert_eq!(
        code(ec2.stop_instances().instance_ids(&id).send().await),
        "IncorrectInstanceState"
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Instance));
    ec2.wait_until_instance_running()
        .instance_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(reason(crate::described(&ec2, &id).await), None);

    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Instance));
    let stop = ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    let change = &stop.stopping_instances()[0];
    assert_eq!(
        change.previous_state().unwrap().name(),
        Some(&InstanceStateName::Running)
    );
    assert_eq!(
        change.current_state().unwrap().name(),
        Some(&InstanceStateName::Stopping)
    );
    assert_eq!(
        code(ec2.start_instances().instance_ids(&id).send().await),
        "IncorrectInstanceState"
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Instance));
    ec2.wait_until_instance_stopped()
        .instance_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let start = ec2
        .start_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        start.starting_instances()[0]
            .current_state()
            .unwrap()
            .name(),
        Some(&InstanceStateName::Pending)
    );
    ec2.wait_until_instance_running()
        .instance_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();

    let term = ec2
        .terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        term.terminating_instances()[0]
            .current_state()
            .unwrap()
            .name(),
        Some(&InstanceStateName::ShuttingDown)
    );
    ec2.wait_until_instance_terminated()
        .instance_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    // Terminating again is fine; starting a terminated instance is not.
    let again = ec2
        .terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.terminating_instances()[0]
            .current_state()
            .unwrap()
            .name(),
        Some(&InstanceStateName::Terminated)
    );
    assert_eq!(
        code(ec2.start_instances().instance_ids(&id).send().await),
        "IncorrectInstanceState"
    );
    // The interface and the root volume went with it; the terminated instance stays visible
    // for a while, then disappears.
    let enis = ec2
        .describe_network_interfaces()
        .filters(filter("subnet-id", &[&s]))
        .send()
        .await
        .unwrap();
    assert!(enis.network_interfaces().is_empty());
    let vols = ec2
        .describe_volumes()
        .filters(filter("attachment.instance-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert!(vols.volumes().is_empty());
    let d = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(d.reservations().len(), 1);
    fake.fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(3601)));
    let d = ec2
        .describe_instances()
        .filters(filter("subnet-id", &[&s]))
        .send()
        .await
        .unwrap();
    assert!(d.reservations().is_empty());
    // With nothing left in it, the subnet can go.
    ec2.delete_subnet().subnet_id(&s).send().await.unwrap();
}

#[tokio::test]
async fn client_token_replays_and_mismatches() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let run = |t: InstanceType| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(t)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .client_token("machine-cp-0")
    };
    let first = run(InstanceType::T3Medium).send().await.unwrap();
    let second = run(InstanceType::T3Medium).send().await.unwrap();
    assert_eq!(first.reservation_id(), second.reservation_id());
    assert_eq!(
        first.instances()[0].instance_id(),
        second.instances()[0].instance_id()
    );
    assert_eq!(
        code(run(InstanceType::M5Large).send().await),
        "IdempotentParameterMismatch"
    );
    let d = ec2
        .describe_instances()
        .filters(filter("subnet-id", &[&s]))
        .send()
        .await
        .unwrap();
    assert_eq!(d.reservations().len(), 1);
    assert_eq!(d.reservations()[0].instances().len(), 1);
    assert_eq!(
        d.reservations()[0].instances()[0].client_token(),
        Some("machine-cp-0")
    );
}

#[tokio::test]
async fn validation_rejects_and_launches_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let arm = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000001").await;
    let base = || {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::T3Medium)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
    };
    assert_eq!(
        code(base().image_id("ami-0123456789abcdef0").send().await),
        "InvalidAMIID.NotFound"
    );
    assert_eq!(
        code(base().image_id("not-an-ami").send().await),
        "InvalidAMIID.Malformed"
    );
    assert_eq!(
        code(base().key_name("missing").send().await),
        "InvalidKeyPair.NotFound"
    );
    assert_eq!(
        code(
            base()
                .instance_type(InstanceType::from("t9.huge"))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(base().image_id(&arm).send().await),
        "InvalidParameterValue",
        "an arm64 image on an x86_64 type"
    );
    assert_eq!(
        code(base().subnet_id("subnet-0123456789abcdef0").send().await),
        "InvalidSubnetID.NotFound"
    );
    assert_eq!(
        code(
            base()
                .security_group_ids("sg-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidGroup.NotFound"
    );
    let big = base64(&vec![b'x'; 16 * 1024 + 1]);
    assert_eq!(
        code(base().user_data(big).send().await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(base().min_count(3).max_count(2).send().await),
        "InvalidParameterValue"
    );
    // A placement the fake would not record is refused, not silently ignored.
    assert_eq!(
        code(
            base()
                .placement(
                    aws_sdk_ec2::types::Placement::builder()
                        .host_resource_group_arn(
                            "arn:aws:resource-groups:us-east-1:123456789012:group/hosts"
                        )
                        .build()
                )
                .send()
                .await
        ),
        "NotImplemented"
    );
    let d = ec2.describe_instances().send().await.unwrap();
    assert!(d.reservations().is_empty(), "nothing was launched");
    // An arm64 type with the arm64 image is fine, and 16 KiB of user data exactly too.
    let ok = base()
        .image_id(&arm)
        .instance_type(InstanceType::T4gMedium)
        .user_data(base64(&vec![b'x'; 16 * 1024]))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.instances().len(), 1);
}

#[tokio::test]
async fn describe_paginates_by_reservation_and_reports_status() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    // One reservation of three, and five of one.
    let three = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(&s)
        .min_count(3)
        .max_count(3)
        .send()
        .await
        .unwrap();
    assert_eq!(three.instances().len(), 3);
    for _ in 0..5 {
        instance(&ec2, &s).await;
    }
    let pages: Vec<_> = ec2
        .describe_instances()
        .max_results(5)
        .into_paginator()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(pages.len(), 2, "6 reservations at 5 a page span two pages");
    let reservations: Vec<_> = pages.iter().flat_map(|p| p.reservations()).collect();
    assert_eq!(reservations.len(), 6);
    let instances: usize = reservations.iter().map(|r| r.instances().len()).sum();
    assert_eq!(instances, 8);
    assert_eq!(
        code(ec2.describe_instances().max_results(2).send().await),
        "InvalidParameterValue",
        "MaxResults below 5"
    );

    let ids: Vec<String> = three
        .instances()
        .iter()
        .map(|i| i.instance_id().unwrap().to_string())
        .collect();
    // Running instances have a status; stopped ones only with IncludeAllInstances.
    let status = ec2
        .describe_instance_status()
        .set_instance_ids(Some(ids.clone()))
        .send()
        .await
        .unwrap();
    assert_eq!(status.instance_statuses().len(), 3);
    for st in status.instance_statuses() {
        assert_eq!(
            st.instance_state().unwrap().name(),
            Some(&InstanceStateName::Running)
        );
        assert_eq!(st.availability_zone(), Some("us-east-1a"));
    }
    ec2.stop_instances()
        .instance_ids(&ids[0])
        .send()
        .await
        .unwrap();
    ec2.wait_until_instance_stopped()
        .instance_ids(&ids[0])
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let running_only = ec2
        .describe_instance_status()
        .set_instance_ids(Some(ids.clone()))
        .send()
        .await
        .unwrap();
    assert_eq!(running_only.instance_statuses().len(), 2);
    let all = ec2
        .describe_instance_status()
        .set_instance_ids(Some(ids))
        .include_all_instances(true)
        .send()
        .await
        .unwrap();
    assert_eq!(all.instance_statuses().len(), 3);
}

#[tokio::test]
async fn interface_security_groups_can_be_replaced() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let id = instance(&ec2, &s).await;
    let mk = |name: &'static str, v: String| {
        let ec2 = ec2.clone();
        async move {
            ec2.create_security_group()
                .group_name(name)
                .description(name)
                .vpc_id(v)
                .send()
                .await
                .unwrap()
                .group_id
                .unwrap()
        }
    };
    let a = mk("a", vpc_id.clone()).await;
    let b = mk("b", vpc_id.clone()).await;
    let foreign = mk("foreign", other_vpc).await;
    let d = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let eni = d.reservations()[0].instances()[0].network_interfaces()[0]
        .network_interface_id()
        .unwrap()
        .to_string();
    ec2.modify_network_interface_attribute()
        .network_interface_id(&eni)
        .groups(&a)
        .groups(&b)
        .send()
        .await
        .unwrap();
    let d = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let mut groups: Vec<_> = d.reservations()[0].instances()[0]
        .security_groups()
        .iter()
        .map(|g| g.group_id().unwrap().to_string())
        .collect();
    groups.sort();
    let mut want = vec![a.clone(), b.clone()];
    want.sort();
    assert_eq!(groups, want);
    assert_eq!(
        code(
            ec2.modify_network_interface_attribute()
                .network_interface_id(&eni)
                .groups(&foreign)
                .send()
                .await
        ),
        "InvalidGroup.NotFound"
    );
    assert_eq!(
        code(
            ec2.modify_network_interface_attribute()
                .network_interface_id("eni-0123456789abcdef0")
                .groups(&a)
                .send()
                .await
        ),
        "InvalidNetworkInterfaceID.NotFound"
    );
    // A group in use by the interface cannot be deleted.
    assert_eq!(
        code(ec2.delete_security_group().group_id(&a).send().await),
        "DependencyViolation"
    );
}

#[tokio::test]
async fn primary_interface_can_ask_for_a_public_address() {
    use aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification as Nic;
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    crate::gateway(&ec2, &vpc_id).await;
    // This subnet does not map public IPs on launch.
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let sg = ec2
        .create_security_group()
        .group_name("bastion")
        .description("bastion")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let ami = image(&ec2, AMI).await;
    let nic = |public: bool| {
        Nic::builder()
            .device_index(0)
            .subnet_id(&s)
            .groups(&sg)
            .associate_public_ip_address(public)
            .build()
    };
    let run = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Micro)
        .network_interfaces(nic(true))
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let i = &run.instances()[0];
    assert!(
        i.public_ip_address().is_some(),
        "asked for a public address"
    );
    assert_eq!(i.subnet_id(), Some(s.as_str()));
    assert_eq!(i.security_groups()[0].group_id(), Some(sg.as_str()));
    let plain = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(&s)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    assert!(plain.instances()[0].public_ip_address().is_none());
    assert_eq!(
        code(
            ec2.run_instances()
                .image_id(&ami)
                .instance_type(InstanceType::T3Micro)
                .subnet_id(&s)
                .network_interfaces(nic(true))
                .min_count(1)
                .max_count(1)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            ec2.run_instances()
                .image_id(&ami)
                .instance_type(InstanceType::T3Micro)
                .network_interfaces(
                    Nic::builder()
                        .device_index(0)
                        .network_interface_id("eni-0123456789abcdef0")
                        .build()
                )
                .min_count(1)
                .max_count(1)
                .send()
                .await
        ),
        // An interface of the user's is attached as it is, when it exists.
        "InvalidNetworkInterfaceID.NotFound"
    );
}

/// Every filter name DescribeInstances, DescribeVolumes and DescribeNetworkInterfaces accept
/// finds the instance (running, or stopped for the state reason), its root volume and its
/// interface, unless it is one of the names the fake's records never have: no accepted filter
/// silently matches nothing.
#[tokio::test]
async fn every_accepted_instance_filter_is_answered() {
    use fakeaws::Region;
    use fakeaws::ec2::filter::Filterable;
    use fakeaws::ec2::instance::Instance;
    use fakeaws::ec2::network_interface::NetworkInterface;
    use fakeaws::ec2::volume::Volume;

    fn names<F: Filterable>() -> Vec<&'static str> {
        F::NAMES
            .iter()
            .copied()
            .filter(|n| !F::NEVER_SET.contains(n))
            .collect()
    }

    let fake = fakeaws::spawn().await.unwrap();
    let ec2 = fake.ec2_client();
    ec2.create_key_pair().key_name("ops").send().await.unwrap();
    // A partition placement group, for the placement filters.
    ec2.create_placement_group()
        .group_name("every")
        .strategy(aws_sdk_ec2::types::PlacementStrategy::Partition)
        .send()
        .await
        .unwrap();
    let ami = image(&ec2, AMI).await;
    // An IPv6 block for the default VPC and a /64 for one of its subnets, for the IPv6
    // address filters.
    let default_vpc = ec2
        .describe_vpcs()
        .filters(filter("is-default", &["true"]))
        .send()
        .await
        .unwrap()
        .vpcs()[0]
        .vpc_id()
        .unwrap()
        .to_string();
    let block = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&default_vpc)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .ipv6_cidr_block_association
        .unwrap()
        .ipv6_cidr_block
        .unwrap();
    let default_subnet = crate::default_subnet_in(&ec2, "us-east-1a").await;
    ec2.associate_subnet_cidr_block()
        .subnet_id(&default_subnet)
        .ipv6_cidr_block(
            block
                .parse::<ipnet::Ipv6Net>()
                .unwrap()
                .subnets(64)
                .unwrap()
                .next()
                .unwrap()
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let run = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Small)
        .subnet_id(&default_subnet)
        .ipv6_address_count(1)
        .key_name("ops")
        .placement(
            aws_sdk_ec2::types::Placement::builder()
                .group_name("every")
                .build(),
        )
        .client_token("every-filter")
        // Tags on the interface, for `network-interface.tag-key` and `-value`.
        .tag_specifications(crate::tag_spec(
            aws_sdk_ec2::types::ResourceType::NetworkInterface,
            &[("role", "every")],
        ))
        .iam_instance_profile(IamInstanceProfileSpecification::builder().name("p").build())
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let launched = &run.instances()[0];
    let id = launched.instance_id().unwrap().to_string();
    let eni = launched.network_interfaces()[0]
        .network_interface_id()
        .unwrap()
        .to_string();
    ec2.wait_until_instance_running()
        .instance_ids(&id)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    // An Elastic IP, for the association filters.
    let allocation = ec2
        .allocate_address()
        .domain(aws_sdk_ec2::types::DomainType::Vpc)
        .send()
        .await
        .unwrap()
        .allocation_id
        .unwrap();
    ec2.associate_address()
        .allocation_id(&allocation)
        .instance_id(&id)
        .send()
        .await
        .unwrap();

    let mut silent = Vec::new();
    for name in names::<(&Volume, &Region)>() {
        let out = ec2
            .describe_volumes()
            .filters(filter(name, &["*"]))
            .send()
            .await
            .unwrap();
        let attached_here = out.volumes().iter().any(|v| {
            v.attachments()
                .iter()
                .any(|a| a.instance_id() == Some(id.as_str()))
        });
        if !attached_here {
            silent.push(format!("volume {name}"));
        }
    }
    // An instance's interface has no requester: `load_balancer.rs` finds a load balancer's
    // by `requester-id`.
    for name in names::<(&NetworkInterface, &Region)>()
        .into_iter()
        .filter(|n| *n != "requester-id")
    {
        let out = ec2
            .describe_network_interfaces()
            .filters(filter(name, &["*"]))
            .send()
            .await
            .unwrap();
        if !out
            .network_interfaces()
            .iter()
            .any(|n| n.network_interface_id() == Some(eni.as_str()))
        {
            silent.push(format!("network interface {name}"));
        }
    }
    // A Spot Instance's filters, on a Spot Instance of their own (it cannot be stopped), and
    // a Dedicated Host's, on an instance of one: each such filter finds that instance alone.
    const SPOT_ONLY: [&str; 2] = ["instance-lifecycle", "spot-instance-request-id"];
    const HOST_ONLY: [&str; 2] = ["affinity", "host-id"];
    // And an image's boot mode parameter, on an instance of an image that has one; a
    // Capacity Reservation's, on an instance launched into one it targets.
    const BOOT_ONLY: [&str; 1] = ["boot-mode"];
    const RESERVED_ONLY: [&str; 2] = [
        "capacity-reservation-id",
        "capacity-reservation-specification.capacity-reservation-target.capacity-reservation-id",
    ];
    // A carrier IP address's, on an instance of a Wavelength Zone given one at launch.
    const CARRIER_ONLY: [&str; 2] = [
        "network-interface.addresses.association.carrier-ip",
        "network-interface.association.carrier-ip",
    ];
    ec2.modify_availability_zone_group()
        .group_name("us-east-1-wl1")
        .opt_in_status(aws_sdk_ec2::types::ModifyAvailabilityZoneOptInStatus::OptedIn)
        .send()
        .await
        .unwrap();
    let wavelength = crate::subnet(
        &ec2,
        &crate::default_vpc_id(&ec2).await,
        "172.31.128.0/24",
        "us-east-1-wl1-nyc-wlz-1",
    )
    .await;
    let snapshot = crate::completed_snapshot(&ec2, "us-east-1a", 8, false).await;
    let uefi = crate::register_from(&ec2, "uefi-image", "/dev/sda1", &snapshot)
        .architecture(aws_sdk_ec2::types::ArchitectureValues::X8664)
        .boot_mode(aws_sdk_ec2::types::BootModeValues::Uefi)
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    let reservation = ec2
        .create_capacity_reservation()
        .instance_type("t3.small")
        .instance_platform(aws_sdk_ec2::types::CapacityReservationInstancePlatform::LinuxUnix)
        .availability_zone("us-east-1a")
        .instance_count(1)
        .instance_match_criteria(aws_sdk_ec2::types::InstanceMatchCriteria::Targeted)
        .send()
        .await
        .unwrap()
        .capacity_reservation
        .unwrap()
        .capacity_reservation_id
        .unwrap();
    let allocated = ec2
        .allocate_hosts()
        .instance_type("m5.large")
        .availability_zone("us-east-1a")
        .quantity(1)
        .send()
        .await
        .unwrap();
    let launches: [(&[&str], _, &str); 5] = [
        (
            &SPOT_ONLY,
            ec2.run_instances()
                .instance_type(InstanceType::T3Small)
                .instance_market_options(
                    aws_sdk_ec2::types::InstanceMarketOptionsRequest::builder()
                        .market_type(aws_sdk_ec2::types::MarketType::Spot)
                        .build(),
                ),
            ami.as_str(),
        ),
        (
            &HOST_ONLY,
            ec2.run_instances()
                .instance_type(InstanceType::M5Large)
                .placement(
                    aws_sdk_ec2::types::Placement::builder()
                        .availability_zone("us-east-1a")
                        .host_id(&allocated.host_ids()[0])
                        .build(),
                ),
            ami.as_str(),
        ),
        (
            &BOOT_ONLY,
            ec2.run_instances().instance_type(InstanceType::M5Large),
            uefi.as_str(),
        ),
        (
            &RESERVED_ONLY,
            ec2.run_instances()
                .instance_type(InstanceType::T3Small)
                .placement(
                    aws_sdk_ec2::types::Placement::builder()
                        .availability_zone("us-east-1a")
                        .build(),
                )
                .capacity_reservation_specification(
                    aws_sdk_ec2::types::CapacityReservationSpecification::builder()
                        .capacity_reservation_target(
                            aws_sdk_ec2::types::CapacityReservationTarget::builder()
                                .capacity_reservation_id(&reservation)
                                .build(),
                        )
                        .build(),
                ),
            ami.as_str(),
        ),
        (
            &CARRIER_ONLY,
            ec2.run_instances()
                .instance_type(InstanceType::T3Medium)
                .network_interfaces(
                    aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification::builder()
                        .device_index(0)
                        .subnet_id(&wavelength)
                        .associate_carrier_ip_address(true)
                        .build(),
                ),
            ami.as_str(),
        ),
    ];
    for (filters, launch, image) in launches {
        let out = launch
            .image_id(image)
            .min_count(1)
            .max_count(1)
            .send()
            .await
            .unwrap();
        let only = out.instances()[0].instance_id().unwrap();
        for name in filters {
            if crate::instance_ids(&ec2, &[(name, "*")]).await != [only] {
                silent.push(format!("instance {name}"));
            }
        }
    }
    let mut unanswered = names::<(&Instance, &Region)>();
    unanswered.retain(|n| {
        ![
            &SPOT_ONLY[..],
            &HOST_ONLY,
            &BOOT_ONLY,
            &RESERVED_ONLY,
            &CARRIER_ONLY,
        ]
        .iter()
        .any(|only| only.contains(n))
    });
    for stopped in [false, true] {
        if stopped {
            ec2.stop_instances().instance_ids(&id).send().await.unwrap();
            ec2.wait_until_instance_stopped()
                .instance_ids(&id)
                .wait(Duration::from_secs(5))
                .await
                .unwrap();
        }
        let mut still = Vec::new();
        for name in unanswered {
            let out = ec2
                .describe_instances()
                .filters(filter(name, &["*"]))
                .send()
                .await
                .unwrap();
            let found = out
                .reservations()
                .iter()
                .flat_map(|r| r.instances())
                .any(|i| i.instance_id() == Some(id.as_str()));
            if !found {
                still.push(name);
            }
        }
        unanswered = still;
    }
    silent.extend(unanswered.iter().map(|n| format!("instance {n}")));
    assert_eq!(silent, Vec::<String>::new(), "filters that match nothing");
    for name in <(&Instance, &Region) as Filterable>::NEVER_SET {
        let out = ec2
            .describe_instances()
            .filters(filter(name, &["*"]))
            .send()
            .await
            .unwrap();
        assert!(out.reservations().is_empty(), "{name} matches no instance");
    }
}

#[tokio::test]
async fn reboot_keeps_a_running_instance_running_and_is_refused_when_stopped() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let id = instance(&ec2, &s).await;
    let state = || async {
        let i = described(&ec2, &id).await;
        i.state().and_then(|s| s.name()).cloned().unwrap()
    };
    let reboot = || ec2.reboot_instances().instance_ids(&id).send();
    wait(&ec2, &id, InstanceStateName::Running).await;
    reboot().await.unwrap();
    assert_eq!(state().await, InstanceStateName::Running);
    // An unknown id among them: nothing is rebooted, the id is named.
    let unknown = ec2
        .reboot_instances()
        .instance_ids(&id)
        .instance_ids("i-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidInstanceID.NotFound");

    ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    wait(&ec2, &id, InstanceStateName::Stopped).await;
    assert_eq!(code(reboot().await), "IncorrectInstanceState");
    assert_eq!(
        state().await,
        InstanceStateName::Stopped,
        "not started by it"
    );

    // A terminated instance's reboot is ignored, as AWS documents.
    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    wait(&ec2, &id, InstanceStateName::Terminated).await;
    reboot().await.unwrap();
    assert_eq!(state().await, InstanceStateName::Terminated);
}

/// A launch's `AssociatePublicIpAddress` decides for the instance's life whether it takes a
/// public address of AWS's pool, at launch and at each start, whatever its subnet maps.
#[tokio::test]
async fn the_launch_decides_whether_an_instance_takes_a_public_address() {
    use aws_sdk_ec2::types::{AttributeBooleanValue, InstanceNetworkInterfaceSpecification};
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    crate::gateway(&ec2, &vpc_id).await;
    let mapping = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let plain = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    ec2.modify_subnet_attribute()
        .subnet_id(&mapping)
        .map_public_ip_on_launch(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await
        .unwrap();
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launch = |subnet: &str, public: bool| {
        let (ec2, ami, subnet) = (ec2.clone(), ami.clone(), subnet.to_string());
        async move {
            ec2.run_instances()
                .image_id(ami)
                .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
                .min_count(1)
                .max_count(1)
                .network_interfaces(
                    InstanceNetworkInterfaceSpecification::builder()
                        .device_index(0)
                        .subnet_id(subnet)
                        .associate_public_ip_address(public)
                        .build(),
                )
                .send()
                .await
                .unwrap()
                .instances()[0]
                .instance_id()
                .unwrap()
                .to_string()
        }
    };
    let without = launch(&mapping, false).await;
    let with = launch(&plain, true).await;
    for id in [&without, &with] {
        wait(&ec2, id, InstanceStateName::Running).await;
    }
    let public = |id: String| {
        let ec2 = ec2.clone();
        async move {
            described(&ec2, &id)
                .await
                .public_ip_address()
                .map(String::from)
        }
    };
    assert_eq!(
        public(without.clone()).await,
        None,
        "none, though the subnet maps"
    );
    let first = public(with.clone()).await;
    assert!(first.is_some(), "one, though the subnet does not map");
    // Stopped and started again: the same decision (a new address for the one that has one).
    for id in [&without, &with] {
        crate::stop(&fake, &ec2, id).await;
    }
    assert_eq!(public(with.clone()).await, None, "released while stopped");
    ec2.start_instances()
        .instance_ids(&without)
        .instance_ids(&with)
        .send()
        .await
        .unwrap();
    for id in [&without, &with] {
        wait(&ec2, id, InstanceStateName::Running).await;
    }
    assert_eq!(public(without.clone()).await, None);
    assert!(public(with.clone()).await.is_some());
}
