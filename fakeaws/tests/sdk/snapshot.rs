//! EBS snapshots through the SDK: CreateSnapshot (pending, then completed), DescribeSnapshots
//! and its owners and filters, volumes and images made of snapshots, DeleteSnapshot, and
//! DeregisterImage taking its snapshot along; sharing a snapshot (ModifySnapshotAttribute).

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    ArchitectureValues, BlockDeviceMapping, CreateVolumePermission,
    CreateVolumePermissionModifications, EbsBlockDevice, InstanceType, OperationType,
    PermissionGroup, ResourceType, SnapshotAttributeName, SnapshotState,
};
use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, empty_fake, filter, register_from, subnet, tag_spec, vpc};

/// A gp3 volume of `size` GiB in us-east-1a; its id.
async fn volume(ec2: &aws_sdk_ec2::Client, size: i32) -> String {
    ec2.create_volume()
        .availability_zone("us-east-1a")
        .size(size)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap()
}

/// The account's snapshots DescribeSnapshots answers with `call`'s options: their ids.
async fn listed(
    call: aws_sdk_ec2::operation::describe_snapshots::builders::DescribeSnapshotsFluentBuilder,
) -> Vec<String> {
    let out = call.send().await.unwrap();
    out.snapshots()
        .iter()
        .filter_map(|s| s.snapshot_id().map(String::from))
        .collect()
}

#[tokio::test]
async fn a_snapshot_is_pending_then_completed_and_volumes_are_made_of_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vol = volume(&ec2, 20).await;
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Snapshot));
    let made = ec2
        .create_snapshot()
        .volume_id(&vol)
        .description("etcd before the upgrade")
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("Name", "etcd-backup")]))
        .send()
        .await
        .unwrap();
    let snap = made.snapshot_id().unwrap().to_string();
    assert!(snap.starts_with("snap-"));
    assert_eq!(made.state(), Some(&SnapshotState::Pending));
    assert_eq!(made.progress(), Some(""));
    assert_eq!(made.volume_id(), Some(vol.as_str()));
    assert_eq!(made.volume_size(), Some(20));
    assert_eq!(made.owner_id(), Some("123456789012"));
    assert_eq!(made.description(), Some("etcd before the upgrade"));
    assert_eq!(made.encrypted(), Some(false));
    assert_eq!(made.tags()[0].value(), Some("etcd-backup"));

    // Not a source of volumes until it completes.
    assert_eq!(
        code_and_message(
            ec2.create_volume()
                .availability_zone("us-east-1b")
                .snapshot_id(&snap)
                .send()
                .await
        ),
        (
            "IncorrectState".to_string(),
            "Snapshot is in invalid state - pending".to_string()
        )
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Snapshot));
    ec2.wait_until_snapshot_completed()
        .snapshot_ids(&snap)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let done = ec2
        .describe_snapshots()
        .snapshot_ids(&snap)
        .send()
        .await
        .unwrap();
    assert_eq!(done.snapshots()[0].state(), Some(&SnapshotState::Completed));
    assert_eq!(done.snapshots()[0].progress(), Some("100%"));

    // A volume of it: its size by default, larger if asked, never smaller; in any zone.
    let restored = ec2
        .create_volume()
        .availability_zone("us-east-1b")
        .snapshot_id(&snap)
        .send()
        .await
        .unwrap();
    assert_eq!(restored.size(), Some(20));
    assert_eq!(restored.snapshot_id(), Some(snap.as_str()));
    let larger = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .snapshot_id(&snap)
        .size(50)
        .send()
        .await
        .unwrap();
    assert_eq!(larger.size(), Some(50));
    assert_eq!(
        code_and_message(
            ec2.create_volume()
                .availability_zone("us-east-1a")
                .snapshot_id(&snap)
                .size(10)
                .send()
                .await
        ),
        (
            "InvalidParameterValue".to_string(),
            format!("Volume of size 10GB is smaller than snapshot '{snap}', expect size >= 20GB")
        )
    );
    let of_it = ec2
        .describe_volumes()
        .filters(filter("snapshot-id", &[&snap]))
        .send()
        .await
        .unwrap();
    assert_eq!(of_it.volumes().len(), 2);

    // An instance's extra device made of it takes its size.
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-*").await;
    let launched = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Medium)
        .subnet_id(&s)
        .block_device_mappings(
            BlockDeviceMapping::builder()
                .device_name("/dev/sdf")
                .ebs(EbsBlockDevice::builder().snapshot_id(&snap).build())
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let id = launched.instances()[0].instance_id().unwrap();
    let attached = ec2
        .describe_volumes()
        .filters(filter("attachment.instance-id", &[id]))
        .filters(filter("snapshot-id", &[&snap]))
        .send()
        .await
        .unwrap();
    assert_eq!(attached.volumes().len(), 1);
    assert_eq!(attached.volumes()[0].size(), Some(20));
    assert_eq!(
        code(
            ec2.run_instances()
                .image_id(&ami)
                .instance_type(InstanceType::T3Medium)
                .subnet_id(&s)
                .block_device_mappings(
                    BlockDeviceMapping::builder()
                        .device_name("/dev/sdf")
                        .ebs(
                            EbsBlockDevice::builder()
                                .snapshot_id(&snap)
                                .volume_size(8)
                                .build()
                        )
                        .build(),
                )
                .min_count(1)
                .max_count(1)
                .send()
                .await
        ),
        "InvalidBlockDeviceMapping"
    );
}

#[tokio::test]
async fn describe_snapshots_by_owner_restorer_filter_and_page() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (small, big) = (volume(&ec2, 8).await, volume(&ec2, 100).await);
    let mut ids = Vec::new();
    for (vol, name) in [(&small, "a"), (&small, "b"), (&big, "c")] {
        let s = ec2
            .create_snapshot()
            .volume_id(vol)
            .description(format!("backup {name}"))
            .tag_specifications(tag_spec(ResourceType::Snapshot, &[("backup", name)]))
            .send()
            .await
            .unwrap();
        ids.push(s.snapshot_id.unwrap());
    }
    ids.sort();
    // The account's own, under every way of asking for them; none under Amazon's or the
    // public ones.
    assert_eq!(listed(ec2.describe_snapshots()).await, ids);
    assert_eq!(
        listed(ec2.describe_snapshots().owner_ids("self")).await,
        ids
    );
    assert_eq!(
        listed(ec2.describe_snapshots().owner_ids("123456789012")).await,
        ids
    );
    assert_eq!(
        listed(ec2.describe_snapshots().restorable_by_user_ids("self")).await,
        ids
    );
    assert!(
        listed(ec2.describe_snapshots().owner_ids("amazon"))
            .await
            .is_empty()
    );
    assert!(
        listed(ec2.describe_snapshots().restorable_by_user_ids("all"))
            .await
            .is_empty()
    );
    // Filters.
    let of_small = listed(
        ec2.describe_snapshots()
            .filters(filter("volume-id", &[&small])),
    )
    .await;
    assert_eq!(of_small.len(), 2);
    for (name, value, count) in [
        ("volume-size", "100", 1),
        ("description", "backup *", 3),
        ("status", "completed", 3),
        ("progress", "100%", 3),
        ("encrypted", "false", 3),
        ("owner-id", "123456789012", 3),
        ("storage-tier", "standard", 3),
        ("start-time", "*", 3),
        ("tag:backup", "b", 1),
        ("tag-key", "backup", 3),
        ("owner-alias", "amazon", 0),
    ] {
        let found = listed(ec2.describe_snapshots().filters(filter(name, &[value]))).await;
        assert_eq!(found.len(), count, "{name}={value}");
    }
    assert_eq!(
        code(
            ec2.describe_snapshots()
                .filters(filter("colour", &["red"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // Pages: three more snapshots make six, in pages of 5 and 1 that cover each once.
    for _ in 0..3 {
        let s = ec2.create_snapshot().volume_id(&big).send().await.unwrap();
        ids.push(s.snapshot_id.unwrap());
    }
    ids.sort();
    let first = ec2
        .describe_snapshots()
        .max_results(5)
        .send()
        .await
        .unwrap();
    assert_eq!(first.snapshots().len(), 5);
    let token = first.next_token().unwrap();
    let second = ec2
        .describe_snapshots()
        .max_results(5)
        .next_token(token)
        .send()
        .await
        .unwrap();
    assert!(second.next_token().is_none());
    let mut paged: Vec<String> = first
        .snapshots()
        .iter()
        .chain(second.snapshots())
        .filter_map(|s| s.snapshot_id().map(String::from))
        .collect();
    paged.sort();
    assert_eq!(paged, ids);
    // Ids: each must exist and be shaped like one.
    assert_eq!(
        code(
            ec2.describe_snapshots()
                .snapshot_ids("snap-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidSnapshot.NotFound"
    );
    assert_eq!(
        code(
            ec2.describe_snapshots()
                .snapshot_ids("snapshot-1")
                .send()
                .await
        ),
        "InvalidSnapshotID.Malformed"
    );
    assert_eq!(
        code(
            ec2.create_snapshot()
                .volume_id("vol-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidVolume.NotFound"
    );
    assert_eq!(
        listed(ec2.describe_snapshots()).await,
        ids,
        "nothing changed"
    );
}

#[tokio::test]
async fn an_image_keeps_its_snapshot_until_deregistered_with_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vol = volume(&ec2, 30).await;
    let snap = ec2
        .create_snapshot()
        .volume_id(&vol)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    let register = |name: &str| {
        register_from(&ec2, name, "/dev/sda1", &snap).architecture(ArchitectureValues::X8664)
    };
    let first = register("node-image-1")
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    let second = register("node-image-2")
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    // The image's root is the snapshot's size.
    let img = ec2
        .describe_images()
        .image_ids(&first)
        .send()
        .await
        .unwrap();
    let root = img.images()[0].block_device_mappings()[0].ebs().unwrap();
    assert_eq!(root.snapshot_id(), Some(snap.as_str()));
    assert_eq!(root.volume_size(), Some(30));
    let (c, m) = code_and_message(ec2.delete_snapshot().snapshot_id(&snap).send().await);
    assert_eq!(c, "InvalidSnapshot.InUse");
    assert!(
        m.starts_with(&format!("The snapshot {snap} is currently in use by ami-")),
        "{m}"
    );

    // Deregistering one image with its snapshots skips a snapshot another image uses...
    let out = ec2
        .deregister_image()
        .image_id(&first)
        .delete_associated_snapshots(true)
        .send()
        .await
        .unwrap();
    let results = out.delete_snapshot_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].snapshot_id(), Some(snap.as_str()));
    assert_eq!(results[0].return_code().unwrap().as_str(), "skipped");
    assert_eq!(
        listed(ec2.describe_snapshots()).await,
        std::slice::from_ref(&snap)
    );
    // ... and takes it with the last.
    let out = ec2
        .deregister_image()
        .image_id(&second)
        .delete_associated_snapshots(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.delete_snapshot_results()[0]
            .return_code()
            .unwrap()
            .as_str(),
        "success"
    );
    assert!(listed(ec2.describe_snapshots()).await.is_empty());
    assert_eq!(
        code(ec2.delete_snapshot().snapshot_id(&snap).send().await),
        "InvalidSnapshot.NotFound"
    );

    // A snapshot no image uses goes with DeleteSnapshot; its tags with it.
    let other = ec2
        .create_snapshot()
        .volume_id(&vol)
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("k", "v")]))
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    ec2.delete_snapshot()
        .snapshot_id(&other)
        .send()
        .await
        .unwrap();
    assert!(listed(ec2.describe_snapshots()).await.is_empty());
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&other]))
        .send()
        .await
        .unwrap();
    assert!(tags.tags().is_empty());
}

#[tokio::test]
async fn an_instance_makes_an_image_of_its_volumes_and_launches_from_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let base = crate::image(&ec2, "capa-ami-ubuntu-24.04-*").await;
    let launch = |image: &str| {
        ec2.run_instances()
            .image_id(image)
            .instance_type(InstanceType::T3Medium)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
    };
    let builder = launch(&base)
        .block_device_mappings(
            BlockDeviceMapping::builder()
                .device_name("/dev/sdf")
                .ebs(
                    EbsBlockDevice::builder()
                        .volume_size(50)
                        .delete_on_termination(false)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let builder = builder.instances()[0].instance_id().unwrap().to_string();
    ec2.wait_until_instance_running()
        .instance_ids(&builder)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();

    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Image));
    let ami = ec2
        .create_image()
        .instance_id(&builder)
        .name("node-1.32-baked")
        .description("baked by the image pipeline")
        .no_reboot(true)
        .tag_specifications(tag_spec(ResourceType::Image, &[("role", "node")]))
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("role", "node-disk")]))
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    let described = ec2.describe_images().image_ids(&ami).send().await.unwrap();
    let image = &described.images()[0];
    assert_eq!(image.state().unwrap().as_str(), "pending");
    assert_eq!(image.source_instance_id(), Some(builder.as_str()));
    assert_eq!(image.tags()[0].value(), Some("node"));
    let mappings: Vec<(&str, i32)> = image
        .block_device_mappings()
        .iter()
        .map(|m| {
            (
                m.device_name().unwrap(),
                m.ebs().unwrap().volume_size().unwrap(),
            )
        })
        .collect();
    assert_eq!(mappings[1], ("/dev/sdf", 50));
    assert_eq!(mappings.len(), 2);
    // A snapshot of each volume, described as EBS describes them.
    let made = ec2
        .describe_snapshots()
        .filters(filter(
            "description",
            &[&format!(
                "Created by CreateImage({builder}) for {ami} from vol-*"
            )],
        ))
        .filters(filter("tag:role", &["node-disk"]))
        .send()
        .await
        .unwrap();
    assert_eq!(made.snapshots().len(), 2);
    assert_eq!(
        code(
            ec2.create_image()
                .instance_id(&builder)
                .name("node-1.32-baked")
                .send()
                .await
        ),
        "InvalidAMIName.Duplicate"
    );
    // Nothing launches from it while it is pending.
    assert_eq!(code(launch(&ami).send().await), "InvalidAMIID.Unavailable");
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Image));
    ec2.wait_until_image_available()
        .image_ids(&ami)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();

    // A launch from it gets a volume of each snapshot.
    let node = launch(&ami).send().await.unwrap();
    let node = node.instances()[0].instance_id().unwrap();
    let volumes = ec2
        .describe_volumes()
        .filters(filter("attachment.instance-id", &[node]))
        .send()
        .await
        .unwrap();
    let mut got: Vec<(i32, bool)> = volumes
        .volumes()
        .iter()
        .map(|v| {
            let from = v.snapshot_id().unwrap_or_default();
            (
                v.size().unwrap(),
                made.snapshots()
                    .iter()
                    .any(|s| s.snapshot_id() == Some(from)),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, [(8, true), (50, true)]);

    // Not of a terminated instance.
    ec2.terminate_instances()
        .instance_ids(&builder)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code_and_message(
            ec2.create_image()
                .instance_id(&builder)
                .name("too-late")
                .send()
                .await
        ),
        (
            "InvalidParameterValue".to_string(),
            format!(
                "Invalid value '{builder}' for instanceId. Instance is not in state 'running' \
                 or 'stopping' or 'stopped'"
            )
        )
    );
    // Deregistered with its snapshots, both of them.
    let out = ec2
        .deregister_image()
        .image_id(&ami)
        .delete_associated_snapshots(true)
        .send()
        .await
        .unwrap();
    let codes: Vec<&str> = out
        .delete_snapshot_results()
        .iter()
        .map(|r| r.return_code().unwrap().as_str())
        .collect();
    assert_eq!(codes, ["success", "success"]);
}

/// Who DescribeSnapshotAttribute `createVolumePermission` lists for `snap`: `all`, then
/// account ids.
async fn create_volume_permissions(ec2: &aws_sdk_ec2::Client, snap: &str) -> Vec<String> {
    let out = ec2
        .describe_snapshot_attribute()
        .snapshot_id(snap)
        .attribute(SnapshotAttributeName::CreateVolumePermission)
        .send()
        .await
        .unwrap();
    assert_eq!(out.snapshot_id(), Some(snap));
    out.create_volume_permissions()
        .iter()
        .map(|p| {
            p.group()
                .map(|g| g.as_str().to_string())
                .or_else(|| p.user_id().map(String::from))
                .unwrap()
        })
        .collect()
}

#[tokio::test]
async fn a_snapshot_is_shared_with_accounts_and_everyone_unless_encrypted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vol = volume(&ec2, 8).await;
    let snap = ec2
        .create_snapshot()
        .volume_id(&vol)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    let permission = |user: Option<&str>| {
        let p = CreateVolumePermission::builder();
        match user {
            Some(id) => p.user_id(id).build(),
            None => p.group(PermissionGroup::All).build(),
        }
    };
    let restorable_by =
        |user: &'static str| listed(ec2.describe_snapshots().restorable_by_user_ids(user));
    assert!(create_volume_permissions(&ec2, &snap).await.is_empty());
    assert!(restorable_by("111122223333").await.is_empty());

    ec2.modify_snapshot_attribute()
        .snapshot_id(&snap)
        .create_volume_permission(
            CreateVolumePermissionModifications::builder()
                .add(permission(Some("111122223333")))
                .add(permission(Some("444455556666")))
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        create_volume_permissions(&ec2, &snap).await,
        ["111122223333", "444455556666"]
    );
    assert_eq!(restorable_by("111122223333").await, [snap.as_str()]);
    assert!(restorable_by("777788889999").await.is_empty());
    assert!(restorable_by("all").await.is_empty());

    // One call adds or removes, not both; a malformed account is refused; neither keeps
    // anything.
    let r = ec2
        .modify_snapshot_attribute()
        .snapshot_id(&snap)
        .create_volume_permission(
            CreateVolumePermissionModifications::builder()
                .add(permission(Some("777788889999")))
                .remove(permission(Some("111122223333")))
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterCombination");
    let (c, m) = code_and_message(
        ec2.modify_snapshot_attribute()
            .snapshot_id(&snap)
            .attribute(SnapshotAttributeName::CreateVolumePermission)
            .operation_type(OperationType::Add)
            .user_ids("777788889999")
            .user_ids("12345")
            .send()
            .await,
    );
    assert_eq!(
        (c.as_str(), m.as_str()),
        ("InvalidUserID.Malformed", "User ID '12345' is invalid")
    );
    assert_eq!(
        code(ec2.describe_snapshots().owner_ids("12345").send().await),
        "InvalidUserID.Malformed"
    );
    assert_eq!(
        create_volume_permissions(&ec2, &snap).await,
        ["111122223333", "444455556666"]
    );

    // Everyone, by the older form; then one account less.
    ec2.modify_snapshot_attribute()
        .snapshot_id(&snap)
        .attribute(SnapshotAttributeName::CreateVolumePermission)
        .operation_type(OperationType::Add)
        .group_names("all")
        .send()
        .await
        .unwrap();
    ec2.modify_snapshot_attribute()
        .snapshot_id(&snap)
        .create_volume_permission(
            CreateVolumePermissionModifications::builder()
                .remove(permission(Some("111122223333")))
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        create_volume_permissions(&ec2, &snap).await,
        ["all", "444455556666"]
    );
    assert_eq!(restorable_by("all").await, [snap.as_str()]);
    assert!(restorable_by("777788889999").await.is_empty());

    ec2.reset_snapshot_attribute()
        .snapshot_id(&snap)
        .attribute(SnapshotAttributeName::CreateVolumePermission)
        .send()
        .await
        .unwrap();
    assert!(create_volume_permissions(&ec2, &snap).await.is_empty());
    assert!(restorable_by("all").await.is_empty());

    // An encrypted snapshot (the account's default key) is shared with no one.
    let encrypted = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(8)
        .encrypted(true)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap();
    let secret = ec2
        .create_snapshot()
        .volume_id(&encrypted)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    for p in [permission(Some("111122223333")), permission(None)] {
        let (c, m) = code_and_message(
            ec2.modify_snapshot_attribute()
                .snapshot_id(&secret)
                .create_volume_permission(
                    CreateVolumePermissionModifications::builder()
                        .add(p)
                        .build(),
                )
                .send()
                .await,
        );
        assert_eq!(c, "OperationNotPermitted");
        assert_eq!(
            m,
            "Encrypted snapshots with EBS default key cannot be shared"
        );
    }
    assert!(create_volume_permissions(&ec2, &secret).await.is_empty());
    let r = ec2
        .describe_snapshot_attribute()
        .snapshot_id("snap-0123456789abcdef0")
        .attribute(SnapshotAttributeName::CreateVolumePermission)
        .send()
        .await;
    assert_eq!(code(r), "InvalidSnapshot.NotFound");
}
