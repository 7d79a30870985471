//! Network interfaces a user makes, through the SDK: creation (`pending`, then `available`),
//! secondary addresses, attachment to an instance and detachment (each through its transient
//! state), the attribute calls, what an instance's termination leaves behind, and what a
//! leftover interface keeps from deletion. Every refused call is checked to change nothing.

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, InstanceNetworkInterfaceSpecification, InstanceType, NetworkInterface,
    NetworkInterfaceAttachmentChanges, NetworkInterfaceAttribute, PrivateIpAddressSpecification,
    ResourceType,
};
use fakeaws::sim::transitions::Subject;

use crate::{
    code, code_and_message, empty_fake, filter, group, image, instance, subnet, tag_spec, vpc,
};

async fn create(ec2: &aws_sdk_ec2::Client, subnet_id: &str) -> String {
    ec2.create_network_interface()
        .subnet_id(subnet_id)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap()
}

async fn describe(ec2: &aws_sdk_ec2::Client, id: &str) -> NetworkInterface {
    ec2.describe_network_interfaces()
        .network_interface_ids(id)
        .send()
        .await
        .unwrap()
        .network_interfaces()[0]
        .clone()
}

/// The private addresses of an interface, the primary first.
fn addresses(e: &NetworkInterface) -> Vec<(String, bool)> {
    e.private_ip_addresses()
        .iter()
        .map(|a| {
            (
                a.private_ip_address().unwrap().to_string(),
                a.primary().unwrap(),
            )
        })
        .collect()
}

async fn free_addresses(ec2: &aws_sdk_ec2::Client, subnet_id: &str) -> i32 {
    ec2.describe_subnets()
        .subnet_ids(subnet_id)
        .send()
        .await
        .unwrap()
        .subnets()[0]
        .available_ip_address_count()
        .unwrap()
}

/// The ids of the interfaces in `vpc_id`, sorted.
async fn interfaces_in(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> Vec<String> {
    let mut ids: Vec<String> = ec2
        .describe_network_interfaces()
        .filters(filter("vpc-id", &[vpc_id]))
        .send()
        .await
        .unwrap()
        .network_interfaces()
        .iter()
        .map(|e| e.network_interface_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn an_interface_is_pending_then_available_and_its_deletion_frees_its_addresses() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let free = free_addresses(&ec2, &s).await;
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.hold(Subject::NetworkInterface)
    });
    let made = ec2
        .create_network_interface()
        .subnet_id(&s)
        .description("pod network")
        .secondary_private_ip_address_count(2)
        .tag_specifications(tag_spec(
            ResourceType::NetworkInterface,
            &[("cluster.k8s.amazonaws.com/name", "demo")],
        ))
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    let id = made.network_interface_id().unwrap().to_string();
    assert!(id.starts_with("eni-"));
    assert_eq!(made.status().unwrap().as_str(), "pending");
    assert_eq!(made.description(), Some("pod network"));
    assert_eq!(made.availability_zone(), Some("us-east-1a"));
    assert_eq!(made.requester_managed(), Some(false));
    assert!(made.attachment().is_none());
    // The VPC's default group, when none is named.
    let default_group = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap()
        .security_groups()[0]
        .group_id()
        .unwrap()
        .to_string();
    assert_eq!(made.groups()[0].group_id(), Some(default_group.as_str()));
    // The subnet's lowest free addresses, the primary first.
    assert_eq!(
        addresses(&made),
        [
            ("10.0.1.4".to_string(), true),
            ("10.0.1.5".to_string(), false),
            ("10.0.1.6".to_string(), false),
        ]
    );
    assert_eq!(free_addresses(&ec2, &s).await, free - 3);
    let pending = ec2
        .describe_network_interfaces()
        .filters(filter("status", &["pending"]))
        .send()
        .await
        .unwrap();
    assert_eq!(pending.network_interfaces().len(), 1);
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.release(Subject::NetworkInterface)
    });
    ec2.wait_until_network_interface_available()
        .network_interface_ids(&id)
        .wait(std::time::Duration::from_secs(60))
        .await
        .unwrap();
    let e = describe(&ec2, &id).await;
    assert_eq!(e.status().unwrap().as_str(), "available");
    assert_eq!(e.tag_set()[0].value(), Some("demo"));
    for (name, value) in [
        ("addresses.private-ip-address", "10.0.1.6"),
        ("private-ip-address", "10.0.1.5"),
        ("group-id", default_group.as_str()),
        ("description", "pod network"),
        ("tag:cluster.k8s.amazonaws.com/name", "demo"),
        ("status", "available"),
    ] {
        let found = ec2
            .describe_network_interfaces()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(found.network_interfaces().len(), 1, "{name}={value}");
    }

    ec2.delete_network_interface()
        .network_interface_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.describe_network_interfaces()
                .network_interface_ids(&id)
                .send()
                .await
        ),
        "InvalidNetworkInterfaceID.NotFound"
    );
    assert_eq!(free_addresses(&ec2, &s).await, free);
    assert_eq!(
        code(
            ec2.delete_network_interface()
                .network_interface_id(&id)
                .send()
                .await
        ),
        "InvalidNetworkInterfaceID.NotFound"
    );
}

#[tokio::test]
async fn creation_checks_its_request_and_a_client_token_replays() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let foreign_group = group(&ec2, &other_vpc, "elsewhere").await;
    let taken = create(&ec2, &s).await;
    let free = free_addresses(&ec2, &s).await;

    let refused = [
        (
            code(
                ec2.create_network_interface()
                    .subnet_id("subnet-0123456789abcdef0")
                    .send()
                    .await,
            ),
            "InvalidSubnetID.NotFound",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .groups(&foreign_group)
                    .send()
                    .await,
            ),
            "InvalidGroup.NotFound",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .private_ip_address("10.0.2.9")
                    .send()
                    .await,
            ),
            "InvalidParameterValue",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .private_ip_address("10.0.1.4")
                    .send()
                    .await,
            ),
            "InvalidIPAddress.InUse",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .private_ip_address("10.0.1.300")
                    .send()
                    .await,
            ),
            "InvalidParameterValue",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .private_ip_addresses(
                        PrivateIpAddressSpecification::builder()
                            .private_ip_address("10.0.1.20")
                            .build(),
                    )
                    .secondary_private_ip_address_count(2)
                    .send()
                    .await,
            ),
            "InvalidParameterCombination",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .secondary_private_ip_address_count(64)
                    .send()
                    .await,
            ),
            "PrivateIpAddressLimitExceeded",
        ),
        (
            code(
                ec2.create_network_interface()
                    .subnet_id(&s)
                    .interface_type("trunk".into())
                    .send()
                    .await,
            ),
            "NotImplemented",
        ),
    ];
    for (got, expected) in refused {
        assert_eq!(got, expected);
    }
    assert_eq!(interfaces_in(&ec2, &vpc_id).await, [taken.as_str()]);
    assert_eq!(free_addresses(&ec2, &s).await, free);

    // Named addresses: the one marked primary, and a secondary.
    let request = || {
        ec2.create_network_interface()
            .subnet_id(&s)
            .private_ip_addresses(
                PrivateIpAddressSpecification::builder()
                    .private_ip_address("10.0.1.30")
                    .primary(true)
                    .build(),
            )
            .private_ip_addresses(
                PrivateIpAddressSpecification::builder()
                    .private_ip_address("10.0.1.31")
                    .primary(false)
                    .build(),
            )
            .client_token("eni-once")
    };
    let named = request().send().await.unwrap().network_interface.unwrap();
    assert_eq!(named.private_ip_address(), Some("10.0.1.30"));
    assert_eq!(
        addresses(&named),
        [
            ("10.0.1.30".to_string(), true),
            ("10.0.1.31".to_string(), false)
        ]
    );
    let again = request().send().await.unwrap().network_interface.unwrap();
    assert_eq!(again.network_interface_id(), named.network_interface_id());
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&s)
                .description("something else")
                .client_token("eni-once")
                .send()
                .await
        ),
        "IdempotentParameterMismatch"
    );
    assert_eq!(interfaces_in(&ec2, &vpc_id).await.len(), 2);
}

#[tokio::test]
async fn interfaces_attach_and_detach_through_their_transient_states() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let i = instance(&ec2, &s).await; // t3.medium: 3 interfaces
    let first = create(&ec2, &s).await;
    let second = create(&ec2, &s).await;
    let third = create(&ec2, &s).await;

    fake.fake().with_region("us-east-1", |r| {
        r.transitions.hold(Subject::NetworkInterface)
    });
    let attached = ec2
        .attach_network_interface()
        .network_interface_id(&first)
        .instance_id(&i)
        .device_index(1)
        .send()
        .await
        .unwrap();
    let attachment_id = attached.attachment_id().unwrap().to_string();
    assert!(attachment_id.starts_with("eni-attach-"));
    assert_eq!(attached.network_card_index(), Some(0));
    let e = describe(&ec2, &first).await;
    assert_eq!(
        e.attachment().unwrap().status().unwrap().as_str(),
        "attaching"
    );
    assert_eq!(e.status().unwrap().as_str(), "in-use");
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.release(Subject::NetworkInterface)
    });
    let e = describe(&ec2, &first).await;
    let a = e.attachment().unwrap();
    assert_eq!(a.status().unwrap().as_str(), "attached");
    assert_eq!(a.instance_id(), Some(i.as_str()));
    assert_eq!(a.device_index(), Some(1));
    assert_eq!(a.delete_on_termination(), Some(false));

    // The instance lists both, by device index; its filters find it by either.
    let shown = ec2
        .describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .clone();
    let indexes: Vec<(i32, String)> = shown
        .network_interfaces()
        .iter()
        .map(|n| {
            (
                n.attachment().unwrap().device_index().unwrap(),
                n.network_interface_id().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(indexes.len(), 2);
    assert_eq!(indexes[0].0, 0);
    assert_eq!(indexes[1], (1, first.clone()));
    let found = ec2
        .describe_instances()
        .filters(filter("network-interface.network-interface-id", &[&first]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.reservations().len(), 1);

    let refused = [
        (
            code(
                ec2.delete_network_interface()
                    .network_interface_id(&first)
                    .send()
                    .await,
            ),
            "InvalidParameterValue",
        ),
        (
            code(
                ec2.attach_network_interface()
                    .network_interface_id(&second)
                    .instance_id(&i)
                    .device_index(1)
                    .send()
                    .await,
            ),
            "InvalidParameterValue",
        ),
        (
            code(
                ec2.attach_network_interface()
                    .network_interface_id(&first)
                    .instance_id(&i)
                    .device_index(2)
                    .send()
                    .await,
            ),
            "InvalidNetworkInterface.InUse",
        ),
        (
            code(
                ec2.attach_network_interface()
                    .network_interface_id(&second)
                    .instance_id("i-0123456789abcdef0")
                    .device_index(2)
                    .send()
                    .await,
            ),
            "InvalidInstanceID.NotFound",
        ),
        (
            code(
                ec2.detach_network_interface()
                    .attachment_id("eni-attach-0123456789abcdef0")
                    .send()
                    .await,
            ),
            "InvalidAttachmentID.NotFound",
        ),
    ];
    for (got, expected) in refused {
        assert_eq!(got, expected);
    }
    let (c, m) = code_and_message(
        ec2.delete_network_interface()
            .network_interface_id(&first)
            .send()
            .await,
    );
    assert_eq!(
        (c.as_str(), m),
        (
            "InvalidParameterValue",
            format!("Network interface '{first}' is currently in use.")
        )
    );
    // The primary interface stays.
    let primary_attachment = shown.network_interfaces()[0]
        .attachment()
        .unwrap()
        .attachment_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.detach_network_interface()
                .attachment_id(&primary_attachment)
                .send()
                .await
        ),
        "OperationNotPermitted"
    );

    // A third interface passes the type's count of three.
    ec2.attach_network_interface()
        .network_interface_id(&second)
        .instance_id(&i)
        .device_index(2)
        .send()
        .await
        .unwrap();
    let (c, m) = code_and_message(
        ec2.attach_network_interface()
            .network_interface_id(&third)
            .instance_id(&i)
            .device_index(3)
            .send()
            .await,
    );
    assert_eq!(
        (c.as_str(), m.as_str()),
        (
            "AttachmentLimitExceeded",
            "Interface count 4 exceeds the limit for t3.medium"
        )
    );
    assert_eq!(
        describe(&ec2, &third).await.status().unwrap().as_str(),
        "available"
    );

    // Detaching: still in use (deleting it now fails, as AWS answers a deletion that
    // comes too soon), then available.
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.hold(Subject::NetworkInterface)
    });
    ec2.detach_network_interface()
        .attachment_id(&attachment_id)
        .send()
        .await
        .unwrap();
    let e = describe(&ec2, &first).await;
    assert_eq!(
        e.attachment().unwrap().status().unwrap().as_str(),
        "detaching"
    );
    assert_eq!(
        code(
            ec2.delete_network_interface()
                .network_interface_id(&first)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.release(Subject::NetworkInterface)
    });
    let e = describe(&ec2, &first).await;
    assert!(e.attachment().is_none());
    assert_eq!(e.status().unwrap().as_str(), "available");
    let shown = ec2
        .describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .network_interfaces()
        .len();
    assert_eq!(shown, 2);
    // Its index is free again.
    ec2.attach_network_interface()
        .network_interface_id(&third)
        .instance_id(&i)
        .device_index(1)
        .send()
        .await
        .unwrap();
    ec2.delete_network_interface()
        .network_interface_id(&first)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_interface_attaches_only_in_its_instance_zone() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let i = instance(&ec2, &a).await;
    let elsewhere = create(&ec2, &b).await;
    assert_eq!(
        code(
            ec2.attach_network_interface()
                .network_interface_id(&elsewhere)
                .instance_id(&i)
                .device_index(1)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert!(describe(&ec2, &elsewhere).await.attachment().is_none());
    // Another subnet of the same zone is fine.
    let a2 = subnet(&ec2, &vpc_id, "10.0.3.0/24", "us-east-1a").await;
    let beside = create(&ec2, &a2).await;
    ec2.attach_network_interface()
        .network_interface_id(&beside)
        .instance_id(&i)
        .device_index(1)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn termination_deletes_what_is_deleted_on_termination_and_leaves_the_rest() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let group = group(&ec2, &vpc_id, "pods").await;
    let i = instance(&ec2, &s).await;
    let kept = ec2
        .create_network_interface()
        .subnet_id(&s)
        .groups(&group)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    let dropped = create(&ec2, &s).await;
    for (eni, index) in [(&kept, 1), (&dropped, 2)] {
        ec2.attach_network_interface()
            .network_interface_id(eni)
            .instance_id(&i)
            .device_index(index)
            .send()
            .await
            .unwrap();
    }
    let dropped_attachment = describe(&ec2, &dropped)
        .await
        .attachment()
        .unwrap()
        .attachment_id()
        .unwrap()
        .to_string();
    ec2.modify_network_interface_attribute()
        .network_interface_id(&dropped)
        .attachment(
            NetworkInterfaceAttachmentChanges::builder()
                .attachment_id(&dropped_attachment)
                .delete_on_termination(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
    // The attachment id must be the interface's own.
    assert_eq!(
        code(
            ec2.modify_network_interface_attribute()
                .network_interface_id(&kept)
                .attachment(
                    NetworkInterfaceAttachmentChanges::builder()
                        .attachment_id(&dropped_attachment)
                        .delete_on_termination(true)
                        .build(),
                )
                .send()
                .await
        ),
        "InvalidAttachmentID.NotFound"
    );
    let found = ec2
        .describe_network_interfaces()
        .filters(filter("attachment.delete-on-termination", &["true"]))
        .filters(filter("attachment.instance-id", &[&i]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.network_interfaces().len(), 2);

    ec2.terminate_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    ec2.wait_until_instance_terminated()
        .instance_ids(&i)
        .wait(std::time::Duration::from_secs(60))
        .await
        .unwrap();
    // The primary interface and the one deleted on termination are gone; the other is left
    // available, as an interface a CNI plugin leaks is.
    assert_eq!(interfaces_in(&ec2, &vpc_id).await, [kept.as_str()]);
    let left = describe(&ec2, &kept).await;
    assert!(left.attachment().is_none());
    assert_eq!(left.status().unwrap().as_str(), "available");
    // What it holds can't be deleted while it stays.
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&s).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_security_group().group_id(&group).send().await),
        "DependencyViolation"
    );
    ec2.delete_network_interface()
        .network_interface_id(&kept)
        .send()
        .await
        .unwrap();
    ec2.delete_security_group()
        .group_id(&group)
        .send()
        .await
        .unwrap();
    ec2.delete_subnet().subnet_id(&s).send().await.unwrap();
}

#[tokio::test]
async fn a_primary_interface_kept_on_termination_stays_available() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let i = instance(&ec2, &s).await;
    let shown = ec2
        .describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .network_interfaces()[0]
        .clone();
    let primary = shown.network_interface_id().unwrap().to_string();
    let attachment = shown.attachment().unwrap();
    assert_eq!(attachment.delete_on_termination(), Some(true));
    ec2.modify_network_interface_attribute()
        .network_interface_id(&primary)
        .attachment(
            NetworkInterfaceAttachmentChanges::builder()
                .attachment_id(attachment.attachment_id().unwrap())
                .delete_on_termination(false)
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.terminate_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    let left = describe(&ec2, &primary).await;
    assert!(left.attachment().is_none());
    assert_eq!(left.status().unwrap().as_str(), "available");
}

#[tokio::test]
async fn secondary_addresses_are_assigned_moved_and_unassigned() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let i = instance(&ec2, &s).await; // t3.medium: 6 addresses an interface
    let eni = create(&ec2, &s).await;
    ec2.attach_network_interface()
        .network_interface_id(&eni)
        .instance_id(&i)
        .device_index(1)
        .send()
        .await
        .unwrap();
    let given = ec2
        .assign_private_ip_addresses()
        .network_interface_id(&eni)
        .secondary_private_ip_address_count(3)
        .send()
        .await
        .unwrap();
    assert_eq!(given.network_interface_id(), Some(eni.as_str()));
    let assigned: Vec<&str> = given
        .assigned_private_ip_addresses()
        .iter()
        .map(|a| a.private_ip_address().unwrap())
        .collect();
    assert_eq!(assigned.len(), 3);
    ec2.assign_private_ip_addresses()
        .network_interface_id(&eni)
        .private_ip_addresses("10.0.1.100")
        .send()
        .await
        .unwrap();
    let e = describe(&ec2, &eni).await;
    assert_eq!(e.private_ip_addresses().len(), 5);
    assert_eq!(addresses(&e)[4], ("10.0.1.100".to_string(), false));
    // The instance shows them on its interface.
    let on_instance = ec2
        .describe_instances()
        .filters(filter(
            "network-interface.addresses.private-ip-address",
            &["10.0.1.100"],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(on_instance.reservations().len(), 1);
    let free = free_addresses(&ec2, &s).await;

    let refused = [
        (
            code(
                ec2.assign_private_ip_addresses()
                    .network_interface_id(&eni)
                    .secondary_private_ip_address_count(2)
                    .send()
                    .await,
            ),
            "PrivateIpAddressLimitExceeded",
        ),
        (
            code(
                ec2.assign_private_ip_addresses()
                    .network_interface_id(&eni)
                    .private_ip_addresses("10.0.1.101")
                    .secondary_private_ip_address_count(1)
                    .send()
                    .await,
            ),
            "InvalidParameterCombination",
        ),
        (
            code(
                ec2.assign_private_ip_addresses()
                    .network_interface_id(&eni)
                    .send()
                    .await,
            ),
            "MissingParameter",
        ),
        (
            code(
                ec2.unassign_private_ip_addresses()
                    .network_interface_id(&eni)
                    .private_ip_addresses(e.private_ip_address().unwrap())
                    .send()
                    .await,
            ),
            "InvalidParameterValue",
        ),
        (
            code(
                ec2.unassign_private_ip_addresses()
                    .network_interface_id(&eni)
                    .private_ip_addresses("10.0.1.100")
                    .private_ip_addresses("10.0.1.200")
                    .send()
                    .await,
            ),
            "InvalidParameterValue",
        ),
    ];
    for (got, expected) in refused {
        assert_eq!(got, expected);
    }
    assert_eq!(describe(&ec2, &eni).await.private_ip_addresses().len(), 5);
    assert_eq!(free_addresses(&ec2, &s).await, free);

    // Another interface takes an address only when told it may move.
    let other = create(&ec2, &s).await;
    assert_eq!(
        code(
            ec2.assign_private_ip_addresses()
                .network_interface_id(&other)
                .private_ip_addresses("10.0.1.100")
                .send()
                .await
        ),
        "InvalidIPAddress.InUse"
    );
    ec2.assign_private_ip_addresses()
        .network_interface_id(&other)
        .private_ip_addresses("10.0.1.100")
        .allow_reassignment(true)
        .send()
        .await
        .unwrap();
    assert_eq!(describe(&ec2, &eni).await.private_ip_addresses().len(), 4);
    assert_eq!(
        addresses(&describe(&ec2, &other).await)[1],
        ("10.0.1.100".to_string(), false)
    );
    // A primary address never moves.
    let primary = describe(&ec2, &eni)
        .await
        .private_ip_address()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.assign_private_ip_addresses()
                .network_interface_id(&other)
                .private_ip_addresses(&primary)
                .allow_reassignment(true)
                .send()
                .await
        ),
        "InvalidIPAddress.InUse"
    );

    ec2.unassign_private_ip_addresses()
        .network_interface_id(&eni)
        .private_ip_addresses(assigned[0])
        .send()
        .await
        .unwrap();
    let e = describe(&ec2, &eni).await;
    assert_eq!(e.private_ip_addresses().len(), 3);
    assert!(addresses(&e).iter().all(|(a, _)| a != assigned[0]));
    assert_eq!(free_addresses(&ec2, &s).await, free);
}

#[tokio::test]
async fn attributes_are_described_one_at_a_time_and_reset() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let i = instance(&ec2, &s).await;
    let eni = ec2
        .create_network_interface()
        .subnet_id(&s)
        .description("router")
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    let attachment = ec2
        .attach_network_interface()
        .network_interface_id(&eni)
        .instance_id(&i)
        .device_index(1)
        .send()
        .await
        .unwrap()
        .attachment_id
        .unwrap();
    let attribute = |a: NetworkInterfaceAttribute| {
        ec2.describe_network_interface_attribute()
            .network_interface_id(&eni)
            .attribute(a)
            .send()
    };
    let d = attribute(NetworkInterfaceAttribute::Description)
        .await
        .unwrap();
    assert_eq!(d.network_interface_id(), Some(eni.as_str()));
    assert_eq!(d.description().unwrap().value(), Some("router"));
    assert!(d.groups().is_empty() && d.attachment().is_none());
    let g = attribute(NetworkInterfaceAttribute::GroupSet)
        .await
        .unwrap();
    assert_eq!(g.groups()[0].group_name(), Some("default"));
    let a = attribute(NetworkInterfaceAttribute::Attachment)
        .await
        .unwrap();
    assert_eq!(
        a.attachment().unwrap().attachment_id(),
        Some(attachment.as_str())
    );
    assert_eq!(a.attachment().unwrap().instance_id(), Some(i.as_str()));
    assert_eq!(
        code(
            ec2.describe_network_interface_attribute()
                .network_interface_id(&eni)
                .send()
                .await
        ),
        "MissingParameter"
    );

    ec2.modify_network_interface_attribute()
        .network_interface_id(&eni)
        .source_dest_check(AttributeBooleanValue::builder().value(false).build())
        .send()
        .await
        .unwrap();
    let check = attribute(NetworkInterfaceAttribute::SourceDestCheck)
        .await
        .unwrap();
    assert_eq!(check.source_dest_check().unwrap().value(), Some(false));
    ec2.reset_network_interface_attribute()
        .network_interface_id(&eni)
        .source_dest_check("sourceDestCheck")
        .send()
        .await
        .unwrap();
    assert_eq!(describe(&ec2, &eni).await.source_dest_check(), Some(true));
}

#[tokio::test]
async fn a_region_holds_as_many_interfaces_as_its_quota() {
    let fake = crate::fake_with_quota("network-interfaces", 2).await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    // An instance's own interface counts.
    ec2.run_instances()
        .image_id(ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(&s)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    create(&ec2, &s).await;
    assert_eq!(
        code(ec2.create_network_interface().subnet_id(&s).send().await),
        "NetworkInterfaceLimitExceeded"
    );
    assert_eq!(interfaces_in(&ec2, &vpc_id).await.len(), 2);
}

/// A launch of one `t3.medium` (3 interfaces of 6 addresses) placed by its interfaces.
fn launch(
    ec2: &aws_sdk_ec2::Client,
    ami: &str,
    nics: Vec<InstanceNetworkInterfaceSpecification>,
) -> aws_sdk_ec2::operation::run_instances::builders::RunInstancesFluentBuilder {
    ec2.run_instances()
        .image_id(ami)
        .instance_type(InstanceType::T3Medium)
        .min_count(1)
        .max_count(1)
        .set_network_interfaces(Some(nics))
}

fn new_nic(
    index: i32,
    subnet_id: &str,
) -> aws_sdk_ec2::types::builders::InstanceNetworkInterfaceSpecificationBuilder {
    InstanceNetworkInterfaceSpecification::builder()
        .device_index(index)
        .subnet_id(subnet_id)
}

fn user_nic(index: i32, eni: &str) -> InstanceNetworkInterfaceSpecification {
    InstanceNetworkInterfaceSpecification::builder()
        .device_index(index)
        .network_interface_id(eni)
        .build()
}

#[tokio::test]
async fn a_launch_takes_several_interfaces_new_and_the_users() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let a2 = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let users = create(&ec2, &a).await;
    let launched = launch(
        &ec2,
        &ami,
        vec![
            new_nic(0, &a)
                .secondary_private_ip_address_count(2)
                .description("primary")
                .build(),
            user_nic(1, &users),
            new_nic(2, &a2).delete_on_termination(false).build(),
        ],
    )
    .tag_specifications(tag_spec(
        ResourceType::NetworkInterface,
        &[("made-by", "launch")],
    ))
    .send()
    .await
    .unwrap();
    let i = launched.instances()[0].clone();
    let id = i.instance_id().unwrap().to_string();
    assert_eq!(i.subnet_id(), Some(a.as_str()));
    let nics: Vec<(i32, String, usize, bool)> = i
        .network_interfaces()
        .iter()
        .map(|n| {
            let att = n.attachment().unwrap();
            (
                att.device_index().unwrap(),
                n.subnet_id().unwrap().to_string(),
                n.private_ip_addresses().len(),
                att.delete_on_termination().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        nics,
        [
            (0, a.clone(), 3, true),
            (1, a.clone(), 1, false),
            (2, a2.clone(), 1, false)
        ]
    );
    assert_eq!(
        i.network_interfaces()[1].network_interface_id(),
        Some(users.as_str())
    );
    assert_eq!(
        i.private_ip_address(),
        i.network_interfaces()[0].private_ip_address()
    );
    // The launch's tags go on the interfaces it made, not on the user's.
    let tagged = ec2
        .describe_network_interfaces()
        .filters(filter("tag:made-by", &["launch"]))
        .send()
        .await
        .unwrap();
    let mut tagged: Vec<&str> = tagged
        .network_interfaces()
        .iter()
        .map(|e| e.subnet_id().unwrap())
        .collect();
    tagged.sort();
    assert_eq!(tagged, [a.as_str(), a2.as_str()]);
    let third = i.network_interfaces()[2]
        .network_interface_id()
        .unwrap()
        .to_string();

    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let mut left = interfaces_in(&ec2, &vpc_id).await;
    let mut expected = vec![users.clone(), third];
    left.sort();
    expected.sort();
    assert_eq!(left, expected);
    assert_eq!(
        describe(&ec2, &users).await.status().unwrap().as_str(),
        "available"
    );
}

#[tokio::test]
async fn a_launch_on_the_users_interface_takes_its_subnet_groups_and_address() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let g = group(&ec2, &vpc_id, "fixed").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let eni = ec2
        .create_network_interface()
        .subnet_id(&a)
        .groups(&g)
        .private_ip_address("10.0.1.77")
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    let spare = create(&ec2, &a).await;
    let spares = [create(&ec2, &a).await, create(&ec2, &a).await];
    let elsewhere = create(&ec2, &b).await;

    // (interfaces, MaxCount, the answer)
    let refused = [
        (vec![user_nic(0, &eni)], 2, "InvalidParameterCombination"),
        (
            vec![
                InstanceNetworkInterfaceSpecification::builder()
                    .device_index(0)
                    .network_interface_id(&eni)
                    .subnet_id(&a)
                    .build(),
            ],
            1,
            "InvalidParameterCombination",
        ),
        (vec![user_nic(1, &eni)], 1, "InvalidParameterValue"),
        (
            vec![user_nic(0, &eni), user_nic(0, &spare)],
            1,
            "InvalidParameterValue",
        ),
        (
            vec![
                new_nic(0, &a).associate_public_ip_address(true).build(),
                user_nic(1, &spare),
            ],
            1,
            "InvalidParameterCombination",
        ),
        (
            vec![
                user_nic(0, &eni),
                user_nic(1, &spare),
                user_nic(2, &spares[0]),
                user_nic(3, &spares[1]),
            ],
            1,
            "AttachmentLimitExceeded",
        ),
        (
            vec![user_nic(0, &eni), user_nic(1, &elsewhere)],
            1,
            "InvalidParameterCombination",
        ),
        (
            vec![new_nic(0, &a).secondary_private_ip_address_count(6).build()],
            1,
            "PrivateIpAddressLimitExceeded",
        ),
        (
            vec![user_nic(0, "eni-0123456789abcdef0")],
            1,
            "InvalidNetworkInterfaceID.NotFound",
        ),
    ];
    for (nics, max, expected) in refused {
        let got = code(launch(&ec2, &ami, nics).max_count(max).send().await);
        assert_eq!(got, expected, "{max}");
    }
    let none = ec2.describe_instances().send().await.unwrap();
    assert!(none.reservations().is_empty());
    assert_eq!(interfaces_in(&ec2, &vpc_id).await.len(), 5);
    assert!(describe(&ec2, &eni).await.attachment().is_none());

    let i = launch(&ec2, &ami, vec![user_nic(0, &eni)])
        .send()
        .await
        .unwrap()
        .instances()[0]
        .clone();
    assert_eq!(i.private_ip_address(), Some("10.0.1.77"));
    assert_eq!(i.subnet_id(), Some(a.as_str()));
    assert_eq!(i.security_groups()[0].group_id(), Some(g.as_str()));
    assert_eq!(i.public_ip_address(), None);
    let (c, m) = code_and_message(launch(&ec2, &ami, vec![user_nic(0, &eni)]).send().await);
    assert_eq!(
        (c.as_str(), m),
        (
            "InvalidNetworkInterface.InUse",
            format!("Interface: [{eni}] in use.")
        )
    );
    // Not deleted with the instance: it was the user's.
    ec2.terminate_instances()
        .instance_ids(i.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    let left = describe(&ec2, &eni).await;
    assert_eq!(left.status().unwrap().as_str(), "available");
    assert_eq!(left.private_ip_address(), Some("10.0.1.77"));
}

/// One step of the interface state machine, on the pools of a [`interfaces_keep_their_books`]
/// case (indexes wrap around what exists).
#[derive(Debug, Clone)]
enum Step {
    Create {
        subnet: usize,
        secondaries: i32,
    },
    Attach {
        eni: usize,
        instance: usize,
        index: i32,
    },
    Detach {
        eni: usize,
    },
    Assign {
        eni: usize,
        count: i32,
    },
    Unassign {
        eni: usize,
    },
    Delete {
        eni: usize,
    },
    DeleteOnTermination {
        eni: usize,
        value: bool,
    },
    Terminate {
        instance: usize,
    },
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0..2usize, 0..3i32).prop_map(|(subnet, secondaries)| Step::Create { subnet, secondaries }),
        3 => (0..8usize, 0..2usize, 1..4i32).prop_map(|(eni, instance, index)| Step::Attach { eni, instance, index }),
        2 => (0..8usize).prop_map(|eni| Step::Detach { eni }),
        2 => (0..8usize, 1..4i32).prop_map(|(eni, count)| Step::Assign { eni, count }),
        1 => (0..8usize).prop_map(|eni| Step::Unassign { eni }),
        2 => (0..8usize).prop_map(|eni| Step::Delete { eni }),
        1 => (0..8usize, any::<bool>()).prop_map(|(eni, value)| Step::DeleteOnTermination { eni, value }),
        1 => (0..2usize).prop_map(|instance| Step::Terminate { instance }),
    ]
}

/// Runs `step` (AWS may refuse it: that is part of the behaviour under test).
async fn run_step(ec2: &aws_sdk_ec2::Client, subnets: &[String], instances: &[String], s: &Step) {
    let enis = {
        let mut ids: Vec<String> = ec2
            .describe_network_interfaces()
            .send()
            .await
            .unwrap()
            .network_interfaces()
            .iter()
            .map(|e| e.network_interface_id().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let eni = |n: usize| (!enis.is_empty()).then(|| enis[n % enis.len()].clone());
    match *s {
        Step::Create {
            subnet,
            secondaries,
        } => {
            let mut call = ec2
                .create_network_interface()
                .subnet_id(&subnets[subnet % subnets.len()]);
            if secondaries > 0 {
                call = call.secondary_private_ip_address_count(secondaries);
            }
            let _ = call.send().await;
        }
        Step::Attach {
            eni: n,
            instance,
            index,
        } => {
            if let Some(id) = eni(n) {
                let _ = ec2
                    .attach_network_interface()
                    .network_interface_id(id)
                    .instance_id(&instances[instance % instances.len()])
                    .device_index(index)
                    .send()
                    .await;
            }
        }
        Step::Detach { eni: n } => {
            if let Some(id) = eni(n)
                && let Some(a) = describe(ec2, &id).await.attachment()
            {
                let _ = ec2
                    .detach_network_interface()
                    .attachment_id(a.attachment_id().unwrap())
                    .send()
                    .await;
            }
        }
        Step::Assign { eni: n, count } => {
            if let Some(id) = eni(n) {
                let _ = ec2
                    .assign_private_ip_addresses()
                    .network_interface_id(id)
                    .secondary_private_ip_address_count(count)
                    .send()
                    .await;
            }
        }
        Step::Unassign { eni: n } => {
            if let Some(id) = eni(n) {
                let e = describe(ec2, &id).await;
                if let Some(a) = e.private_ip_addresses().get(1) {
                    let _ = ec2
                        .unassign_private_ip_addresses()
                        .network_interface_id(id)
                        .private_ip_addresses(a.private_ip_address().unwrap())
                        .send()
                        .await;
                }
            }
        }
        Step::Delete { eni: n } => {
            if let Some(id) = eni(n) {
                let _ = ec2
                    .delete_network_interface()
                    .network_interface_id(id)
                    .send()
                    .await;
            }
        }
        Step::DeleteOnTermination { eni: n, value } => {
            if let Some(id) = eni(n)
                && let Some(a) = describe(ec2, &id).await.attachment()
            {
                let _ = ec2
                    .modify_network_interface_attribute()
                    .network_interface_id(&id)
                    .attachment(
                        NetworkInterfaceAttachmentChanges::builder()
                            .attachment_id(a.attachment_id().unwrap())
                            .delete_on_termination(value)
                            .build(),
                    )
                    .send()
                    .await;
            }
        }
        Step::Terminate { instance } => {
            let _ = ec2
                .terminate_instances()
                .instance_ids(&instances[instance % instances.len()])
                .send()
                .await;
        }
    }
}

/// What DescribeSubnets, DescribeNetworkInterfaces and DescribeInstances hold agrees after
/// every step: each subnet's free addresses and its interfaces' addresses add up to its
/// size, no address is held twice, every attachment is listed by its instance (and only
/// those), device indexes are unique, and a terminated instance holds none.
async fn check_books(ec2: &aws_sdk_ec2::Client, subnets: &[String]) {
    use std::collections::{BTreeMap, BTreeSet};
    let enis = ec2.describe_network_interfaces().send().await.unwrap();
    let mut held = BTreeSet::new();
    let mut by_subnet: BTreeMap<String, i32> = BTreeMap::new();
    let mut attached = BTreeSet::new();
    for e in enis.network_interfaces() {
        for a in e.private_ip_addresses() {
            let ip = a.private_ip_address().unwrap().to_string();
            assert!(held.insert(ip.clone()), "{ip} held twice");
        }
        *by_subnet
            .entry(e.subnet_id().unwrap().to_string())
            .or_default() += i32::try_from(e.private_ip_addresses().len()).unwrap();
        if let Some(a) = e.attachment() {
            attached.insert((
                a.instance_id().unwrap().to_string(),
                e.network_interface_id().unwrap().to_string(),
                a.device_index().unwrap(),
            ));
        }
    }
    for s in subnets {
        // A /24: 256 less AWS's five.
        assert_eq!(
            free_addresses(ec2, s).await + by_subnet.get(s).copied().unwrap_or(0),
            251,
            "{s}"
        );
    }
    let mut listed = BTreeSet::new();
    let reservations = ec2.describe_instances().send().await.unwrap();
    for i in reservations
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
    {
        let id = i.instance_id().unwrap().to_string();
        let mut indexes = BTreeSet::new();
        for n in i.network_interfaces() {
            let index = n.attachment().unwrap().device_index().unwrap();
            assert!(indexes.insert(index), "{id}: device index {index} twice");
            listed.insert((
                id.clone(),
                n.network_interface_id().unwrap().to_string(),
                index,
            ));
        }
        let terminated = i.state().and_then(|s| s.name()).map(|n| n.as_str()) == Some("terminated");
        assert!(!terminated || i.network_interfaces().is_empty(), "{id}");
    }
    assert_eq!(listed, attached);
}

#[test]
fn interfaces_keep_their_books_through_any_sequence_of_calls() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = proptest::test_runner::Config {
        cases: 64,
        failure_persistence: None,
        ..Default::default()
    };
    proptest::proptest!(config, |(steps in proptest::collection::vec(step(), 1..24))| {
        rt.block_on(async {
            let fake = empty_fake().await;
            let ec2 = fake.ec2_client();
            let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
            let subnets = [
                subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await,
                subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await,
            ];
            let instances = [
                instance(&ec2, &subnets[0]).await,
                instance(&ec2, &subnets[1]).await,
            ];
            for s in &steps {
                run_step(&ec2, &subnets, &instances, s).await;
                check_books(&ec2, &subnets).await;
            }
        });
    });
}

fn tracking(
    tcp: Option<i32>,
    udp_stream: Option<i32>,
    udp: Option<i32>,
) -> aws_sdk_ec2::types::ConnectionTrackingSpecificationRequest {
    aws_sdk_ec2::types::ConnectionTrackingSpecificationRequest::builder()
        .set_tcp_established_timeout(tcp)
        .set_udp_stream_timeout(udp_stream)
        .set_udp_timeout(udp)
        .build()
}

/// An interface's connection tracking timeouts as DescribeNetworkInterfaces shows them.
fn timeouts(e: &NetworkInterface) -> Option<(Option<i32>, Option<i32>, Option<i32>)> {
    e.connection_tracking_configuration().map(|c| {
        (
            c.tcp_established_timeout(),
            c.udp_stream_timeout(),
            c.udp_timeout(),
        )
    })
}

#[tokio::test]
async fn connection_tracking_timeouts_are_set_checked_and_changed() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    // Only the timeouts given are shown, as the CLI's documented output shows them.
    let made = ec2
        .create_network_interface()
        .subnet_id(&s)
        .connection_tracking_specification(tracking(Some(86_400), None, Some(60)))
        .send()
        .await
        .unwrap();
    let eni = made
        .network_interface()
        .unwrap()
        .network_interface_id()
        .unwrap()
        .to_string();
    assert_eq!(
        timeouts(made.network_interface().unwrap()),
        Some((Some(86_400), None, Some(60)))
    );
    let plain = create(&ec2, &s).await;
    assert_eq!(timeouts(&describe(&ec2, &plain).await), None);

    // Out of the model's ranges: refused, nothing made or changed.
    let before = interfaces_in(&ec2, &vpc_id).await;
    for bad in [
        tracking(Some(59), None, None),
        tracking(Some(432_001), None, None),
        tracking(None, Some(181), None),
        tracking(None, None, Some(29)),
    ] {
        let refused = ec2
            .create_network_interface()
            .subnet_id(&s)
            .connection_tracking_specification(bad.clone())
            .send()
            .await;
        assert_eq!(code(refused), "InvalidParameterValue");
        let refused = ec2
            .modify_network_interface_attribute()
            .network_interface_id(&eni)
            .connection_tracking_specification(bad)
            .send()
            .await;
        assert_eq!(code(refused), "InvalidParameterValue");
    }
    assert_eq!(interfaces_in(&ec2, &vpc_id).await, before);

    // A change sets the timeouts it gives and keeps the others.
    ec2.modify_network_interface_attribute()
        .network_interface_id(&eni)
        .connection_tracking_specification(tracking(None, Some(120), Some(30)))
        .send()
        .await
        .unwrap();
    assert_eq!(
        timeouts(&describe(&ec2, &eni).await),
        Some((Some(86_400), Some(120), Some(30)))
    );
    // One attribute a call, as for the others.
    let both = ec2
        .modify_network_interface_attribute()
        .network_interface_id(&eni)
        .connection_tracking_specification(tracking(Some(600), None, None))
        .description(
            aws_sdk_ec2::types::AttributeValue::builder()
                .value("x")
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(both), "InvalidParameterCombination");

    // A launch's new interfaces take them, and DescribeInstances shows them; the user's
    // interface, attached as it is, does not.
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launch =
        |nic: aws_sdk_ec2::types::builders::InstanceNetworkInterfaceSpecificationBuilder,
         t: aws_sdk_ec2::types::ConnectionTrackingSpecificationRequest| {
            ec2.run_instances()
                .image_id(&ami)
                .instance_type(InstanceType::M5Large)
                .min_count(1)
                .max_count(1)
                .network_interfaces(
                    nic.device_index(0)
                        .connection_tracking_specification(t)
                        .build(),
                )
                .send()
        };
    let new_one = || InstanceNetworkInterfaceSpecification::builder().subnet_id(&s);
    let launched = launch(new_one(), tracking(Some(3_600), None, None))
        .await
        .unwrap();
    let i = &launched.instances()[0];
    let primary = i.network_interfaces()[0].network_interface_id().unwrap();
    assert_eq!(
        timeouts(&describe(&ec2, primary).await),
        Some((Some(3_600), None, None))
    );
    let shown = crate::described(&ec2, i.instance_id().unwrap()).await;
    let on_instance = shown.network_interfaces()[0]
        .connection_tracking_configuration()
        .unwrap();
    assert_eq!(on_instance.tcp_established_timeout(), Some(3_600));
    assert_eq!(on_instance.udp_timeout(), None);
    let users = InstanceNetworkInterfaceSpecification::builder().network_interface_id(&plain);
    let on_users = launch(users, tracking(Some(3_600), None, None)).await;
    assert_eq!(code(on_users), "InvalidParameterCombination");
    let bad_launch = launch(new_one(), tracking(None, None, Some(61))).await;
    assert_eq!(code(bad_launch), "InvalidParameterValue");

    // A launch template's interfaces carry them to the launch.
    ec2.create_launch_template()
        .launch_template_name("tracked")
        .launch_template_data(
            aws_sdk_ec2::types::RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(InstanceType::M5Large)
                .network_interfaces(
                    aws_sdk_ec2::types::LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
                        .device_index(0)
                        .subnet_id(&s)
                        .connection_tracking_specification(tracking(None, Some(90), None))
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let version = ec2
        .describe_launch_template_versions()
        .launch_template_name("tracked")
        .send()
        .await
        .unwrap();
    let kept = version.launch_template_versions()[0]
        .launch_template_data()
        .unwrap()
        .network_interfaces()[0]
        .connection_tracking_specification()
        .unwrap();
    assert_eq!(kept.udp_stream_timeout(), Some(90));
    let from_template = ec2
        .run_instances()
        .launch_template(
            aws_sdk_ec2::types::LaunchTemplateSpecification::builder()
                .launch_template_name("tracked")
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let eni = from_template.instances()[0].network_interfaces()[0]
        .network_interface_id()
        .unwrap();
    assert_eq!(
        timeouts(&describe(&ec2, eni).await),
        Some((None, Some(90), None))
    );
}

#[tokio::test]
async fn a_secondary_address_named_where_the_primary_would_go_keeps_it_free() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    // 10.0.1.4 is the subnet's lowest free address: the primary, picked by the subnet, goes
    // to the next one.
    let made = ec2
        .create_network_interface()
        .subnet_id(&s)
        .private_ip_addresses(
            aws_sdk_ec2::types::PrivateIpAddressSpecification::builder()
                .private_ip_address("10.0.1.4")
                .primary(false)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    let addresses: Vec<(&str, bool)> = made
        .private_ip_addresses()
        .iter()
        .map(|a| (a.private_ip_address().unwrap(), a.primary().unwrap()))
        .collect();
    assert_eq!(addresses, [("10.0.1.5", true), ("10.0.1.4", false)]);
    let listed = ec2
        .describe_network_interfaces()
        .filters(filter("subnet-id", &[&s]))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.network_interfaces().len(), 1);
}
