//! EBS volumes through the SDK: CreateVolume, AttachVolume, DetachVolume, DeleteVolume and
//! ModifyInstanceAttribute's DeleteOnTermination, as DescribeVolumes and DescribeInstances then
//! show them.

use std::time::Duration;

use aws_sdk_ec2::types::{
    ResourceType, VolumeAttachmentState, VolumeState, VolumeType as SdkVolumeType,
};

use crate::{code, code_and_message, empty_fake, subnet, tag_spec, vpc};

/// The volume `id` as DescribeVolumes answers it.
async fn volume(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::Volume {
    let out = ec2.describe_volumes().volume_ids(id).send().await.unwrap();
    out.volumes()[0].clone()
}

/// A gp3 volume of `size` GiB in `zone`; its id.
async fn new_volume(ec2: &aws_sdk_ec2::Client, zone: &str, size: i32) -> String {
    let out = ec2
        .create_volume()
        .availability_zone(zone)
        .size(size)
        .send()
        .await
        .unwrap();
    assert_eq!(out.state(), Some(&VolumeState::Creating));
    out.volume_id.unwrap()
}

/// The instance `id`'s block devices: (device, volume id).
async fn block_devices(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<(String, String)> {
    crate::described(ec2, id)
        .await
        .block_device_mappings()
        .iter()
        .map(|m| {
            (
                m.device_name().unwrap().to_string(),
                m.ebs().and_then(|e| e.volume_id()).unwrap().to_string(),
            )
        })
        .collect()
}

/// An instance in a new subnet of us-east-1a, running; its id and its root device's name.
async fn running_instance(ec2: &aws_sdk_ec2::Client) -> (String, String) {
    let vpc_id = vpc(ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let id = crate::instance(ec2, &subnet_id).await;
    let out = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let root = out.reservations()[0].instances()[0]
        .root_device_name()
        .unwrap()
        .to_string();
    (id, root)
}

#[tokio::test]
async fn a_created_volume_is_available_with_ebs_defaults_and_its_tags() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let request = || {
        ec2.create_volume()
            .availability_zone("us-east-1b")
            .size(20)
            .tag_specifications(tag_spec(ResourceType::Volume, &[("Name", "data")]))
            .client_token("vol-token")
    };
    let created = request().send().await.unwrap();
    assert_eq!(created.state(), Some(&VolumeState::Creating));
    let id = created.volume_id().unwrap().to_string();
    let v = volume(&ec2, &id).await;
    assert_eq!(v.state(), Some(&VolumeState::Available));
    assert_eq!(v.availability_zone(), Some("us-east-1b"));
    assert_eq!(v.size(), Some(20));
    assert_eq!(v.volume_type(), Some(&SdkVolumeType::Gp3));
    assert_eq!((v.iops(), v.throughput()), (Some(3000), Some(125)));
    assert!(v.attachments().is_empty());
    assert_eq!(v.tags()[0].value(), Some("data"));
    // The same token and request: the same volume; another request with it: refused.
    let again = request().send().await.unwrap();
    assert_eq!(again.volume_id(), Some(id.as_str()));
    assert_eq!(
        code(
            ec2.create_volume()
                .availability_zone("us-east-1b")
                .size(30)
                .client_token("vol-token")
                .send()
                .await
        ),
        "IdempotentParameterMismatch"
    );
    // A gp2 volume's IOPS follow its size; io1 takes the IOPS asked for.
    let gp2 = ec2
        .create_volume()
        .availability_zone_id("use1-az1")
        .size(100)
        .volume_type(SdkVolumeType::Gp2)
        .send()
        .await
        .unwrap();
    assert_eq!(gp2.availability_zone(), Some("us-east-1a"));
    assert_eq!(gp2.iops(), Some(300));
    let io1 = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(100)
        .volume_type(SdkVolumeType::Io1)
        .iops(2000)
        .send()
        .await
        .unwrap();
    assert_eq!(io1.iops(), Some(2000));
    assert_eq!(
        ec2.describe_volumes().send().await.unwrap().volumes().len(),
        3
    );
}

#[tokio::test]
async fn a_volume_request_is_checked_as_ebs_checks_it_and_a_refusal_creates_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let refused =
        |r: aws_sdk_ec2::operation::create_volume::builders::CreateVolumeFluentBuilder| async move {
            code(r.send().await)
        };
    let in_a = || ec2.create_volume().availability_zone("us-east-1a");
    assert_eq!(
        refused(ec2.create_volume().size(8)).await,
        "MissingParameter"
    );
    assert_eq!(
        refused(ec2.create_volume().availability_zone("us-east-1z").size(8)).await,
        "InvalidParameterValue"
    );
    assert_eq!(refused(in_a()).await, "MissingParameter");
    assert_eq!(refused(in_a().size(0)).await, "InvalidParameterValue");
    assert_eq!(refused(in_a().size(16385)).await, "InvalidParameterValue");
    assert_eq!(
        refused(in_a().size(100).volume_type(SdkVolumeType::St1)).await,
        "InvalidParameterValue"
    );
    assert_eq!(
        refused(in_a().size(100).volume_type(SdkVolumeType::Io2)).await,
        "MissingParameter"
    );
    assert_eq!(
        refused(in_a().size(100).volume_type(SdkVolumeType::Gp2).iops(500)).await,
        "InvalidParameterCombination"
    );
    assert_eq!(
        refused(
            in_a()
                .size(100)
                .volume_type(SdkVolumeType::Io1)
                .iops(500)
                .throughput(200)
        )
        .await,
        "InvalidParameterCombination"
    );
    assert_eq!(
        refused(in_a().size(100).snapshot_id("snap-0123456789abcdef0")).await,
        "InvalidSnapshot.NotFound"
    );
    assert!(
        ec2.describe_volumes()
            .send()
            .await
            .unwrap()
            .volumes()
            .is_empty()
    );
}

#[tokio::test]
async fn a_volume_is_attached_to_an_instance_of_its_zone_and_detached_again() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (instance, root) = running_instance(&ec2).await;
    let id = new_volume(&ec2, "us-east-1a", 50).await;
    let attached = ec2
        .attach_volume()
        .volume_id(&id)
        .instance_id(&instance)
        .device("/dev/sdf")
        .send()
        .await
        .unwrap();
    assert_eq!(attached.state(), Some(&VolumeAttachmentState::Attaching));
    assert_eq!(attached.device(), Some("/dev/sdf"));
    let v = volume(&ec2, &id).await;
    assert_eq!(v.state(), Some(&VolumeState::InUse));
    let a = &v.attachments()[0];
    assert_eq!(a.instance_id(), Some(instance.as_str()));
    assert_eq!(a.state(), Some(&VolumeAttachmentState::Attached));
    assert_eq!(a.delete_on_termination(), Some(false));
    assert!(
        block_devices(&ec2, &instance)
            .await
            .contains(&("/dev/sdf".to_string(), id.clone()))
    );
    // Found by the attachment filters.
    let by_instance = ec2
        .describe_volumes()
        .filters(crate::filter("attachment.instance-id", &[&instance]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_instance.volumes().len(), 2);

    // Not twice, not where the instance has a device, not in another zone, not deleted.
    let other = new_volume(&ec2, "us-east-1a", 10).await;
    let elsewhere = new_volume(&ec2, "us-east-1b", 10).await;
    let attach = |volume: &str, device: &str| {
        ec2.attach_volume()
            .volume_id(volume)
            .instance_id(&instance)
            .device(device)
            .send()
    };
    assert_eq!(code(attach(&id, "/dev/sdg").await), "VolumeInUse");
    assert_eq!(
        code(attach(&other, "/dev/sdf").await),
        "InvalidParameterValue"
    );
    assert_eq!(code(attach(&other, &root).await), "InvalidParameterValue");
    assert_eq!(
        code(attach(&other, "/dev/nvme1n1").await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(attach(&elsewhere, "/dev/sdg").await),
        "InvalidVolume.ZoneMismatch"
    );
    assert_eq!(
        code(attach("vol-0123456789abcdef0", "/dev/sdg").await),
        "InvalidVolume.NotFound"
    );
    assert_eq!(
        code(ec2.delete_volume().volume_id(&id).send().await),
        "VolumeInUse"
    );

    // Detached only as attached, never the root volume of a running instance.
    let root_volume = block_devices(&ec2, &instance)
        .await
        .into_iter()
        .find(|(d, _)| *d == root)
        .unwrap()
        .1;
    assert_eq!(
        code(ec2.detach_volume().volume_id(&root_volume).send().await),
        "IncorrectState"
    );
    assert_eq!(
        code(
            ec2.detach_volume()
                .volume_id(&id)
                .device("/dev/sdh")
                .send()
                .await
        ),
        "InvalidAttachment.NotFound"
    );
    let detached = ec2
        .detach_volume()
        .volume_id(&id)
        .instance_id(&instance)
        .send()
        .await
        .unwrap();
    assert_eq!(detached.state(), Some(&VolumeAttachmentState::Detaching));
    let v = volume(&ec2, &id).await;
    assert_eq!(v.state(), Some(&VolumeState::Available));
    assert!(v.attachments().is_empty());
    assert!(
        !block_devices(&ec2, &instance)
            .await
            .iter()
            .any(|(_, v)| *v == id)
    );
    assert_eq!(
        code(ec2.detach_volume().volume_id(&id).send().await),
        "IncorrectState"
    );
    // Free again: attached at the same device, or deleted.
    attach(&other, "/dev/sdf").await.unwrap();
    ec2.delete_volume().volume_id(&id).send().await.unwrap();
    assert_eq!(
        code(ec2.describe_volumes().volume_ids(&id).send().await),
        "InvalidVolume.NotFound"
    );
    assert_eq!(
        code(ec2.delete_volume().volume_id(&id).send().await),
        "InvalidVolume.NotFound"
    );
}

#[tokio::test]
async fn an_attached_volume_outlives_its_terminated_instance() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (instance, _) = running_instance(&ec2).await;
    let id = new_volume(&ec2, "us-east-1a", 50).await;
    ec2.attach_volume()
        .volume_id(&id)
        .instance_id(&instance)
        .device("/dev/xvdf")
        .send()
        .await
        .unwrap();
    terminate(&ec2, &instance).await;
    let v = volume(&ec2, &id).await;
    assert_eq!(v.state(), Some(&VolumeState::Available));
    assert!(v.attachments().is_empty());
    // A terminated instance takes no volume.
    assert_eq!(
        code(
            ec2.attach_volume()
                .volume_id(&id)
                .instance_id(&instance)
                .device("/dev/xvdf")
                .send()
                .await
        ),
        "IncorrectState"
    );
}

/// The most recent modification of volume `id`.
async fn modification(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
) -> aws_sdk_ec2::types::VolumeModification {
    let out = ec2
        .describe_volumes_modifications()
        .volume_ids(id)
        .send()
        .await
        .unwrap();
    out.volumes_modifications()[0].clone()
}

/// Lets volume `id`'s modification take its two steps of `step` each.
async fn finish(fake: &fakeaws::FakeAws, ec2: &aws_sdk_ec2::Client, id: &str, step: Duration) {
    for _ in 0..2 {
        fake.fake()
            .with_region("us-east-1", |r| r.clock.advance(step));
        modification(ec2, id).await;
    }
}

#[tokio::test]
async fn a_volume_is_modified_in_place_through_modifying_and_optimizing() {
    use aws_sdk_ec2::types::VolumeModificationState as State;
    use fakeaws::sim::transitions::Subject;
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let id = new_volume(&ec2, "us-east-1a", 10).await;
    assert_eq!(
        code(
            ec2.describe_volumes_modifications()
                .volume_ids(&id)
                .send()
                .await
        ),
        "InvalidVolumeModification.NotFound"
    );
    // Each step takes a minute of the fake's clock.
    let step = Duration::from_secs(60);
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.set_delay(Subject::VolumeModification, step)
    });
    let asked = ec2
        .modify_volume()
        .volume_id(&id)
        .size(20)
        .iops(4000)
        .send()
        .await
        .unwrap()
        .volume_modification
        .unwrap();
    assert_eq!(asked.modification_state(), Some(&State::Modifying));
    assert_eq!(
        (asked.original_size(), asked.target_size()),
        (Some(10), Some(20))
    );
    assert_eq!(
        (asked.original_iops(), asked.target_iops()),
        (Some(3000), Some(4000))
    );
    assert_eq!(asked.target_volume_type(), Some(&SdkVolumeType::Gp3));
    assert_eq!(asked.target_throughput(), Some(125), "kept");
    assert_eq!(asked.progress(), Some(0));
    // Until it is optimizing, the volume is as it was; another modification waits.
    assert_eq!(volume(&ec2, &id).await.size(), Some(10));
    assert_eq!(
        crate::code_and_message(ec2.modify_volume().volume_id(&id).size(30).send().await),
        (
            "IncorrectModificationState".to_string(),
            format!("Volume {id} cannot be modified in modification state MODIFYING")
        )
    );
    let modifying = ec2
        .describe_volumes_modifications()
        .filters(crate::filter("modification-state", &["modifying"]))
        .filters(crate::filter("target-size", &["20"]))
        .send()
        .await
        .unwrap();
    assert_eq!(modifying.volumes_modifications().len(), 1);

    fake.fake()
        .with_region("us-east-1", |r| r.clock.advance(step));
    assert_eq!(
        modification(&ec2, &id).await.modification_state(),
        Some(&State::Optimizing)
    );
    let v = volume(&ec2, &id).await;
    assert_eq!((v.size(), v.iops()), (Some(20), Some(4000)));
    fake.fake()
        .with_region("us-east-1", |r| r.clock.advance(step));
    let done = modification(&ec2, &id).await;
    assert_eq!(done.modification_state(), Some(&State::Completed));
    assert_eq!(done.progress(), Some(100));
    assert!(done.end_time().is_some());

    // Never smaller; a type's rules hold as at creation; nothing changes on a refusal.
    assert_eq!(
        crate::code_and_message(ec2.modify_volume().volume_id(&id).size(15).send().await),
        (
            "InvalidParameterValue".to_string(),
            "New size cannot be smaller than existing size".to_string()
        )
    );
    assert_eq!(
        code(
            ec2.modify_volume()
                .volume_id(&id)
                .volume_type(SdkVolumeType::Gp2)
                .throughput(300)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        modification(&ec2, &id).await.original_size(),
        Some(10),
        "the last modification is still the one shown"
    );

    // A type change: gp2 takes neither the IOPS nor the throughput along.
    ec2.modify_volume()
        .volume_id(&id)
        .volume_type(SdkVolumeType::Gp2)
        .send()
        .await
        .unwrap();
    finish(&fake, &ec2, &id, step).await;
    let v = volume(&ec2, &id).await;
    assert_eq!(v.volume_type(), Some(&SdkVolumeType::Gp2));
    assert_eq!((v.iops(), v.throughput()), (Some(100), None));

    // Four in 24 hours, then EBS refuses; a day later it takes one again.
    for size in [21, 22] {
        ec2.modify_volume()
            .volume_id(&id)
            .size(size)
            .send()
            .await
            .unwrap();
        finish(&fake, &ec2, &id, step).await;
    }
    assert_eq!(
        code(ec2.modify_volume().volume_id(&id).size(23).send().await),
        "VolumeModificationRateExceeded"
    );
    assert_eq!(volume(&ec2, &id).await.size(), Some(22));
    fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(Duration::from_secs(24 * 3600))
    });
    ec2.modify_volume()
        .volume_id(&id)
        .size(23)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.modify_volume()
                .volume_id("vol-0123456789abcdef0")
                .size(30)
                .send()
                .await
        ),
        "InvalidVolume.NotFound"
    );
}

/// Whether the volume `id` is encrypted, as DescribeVolumes answers.
async fn encrypted(ec2: &aws_sdk_ec2::Client, id: &str) -> bool {
    volume(ec2, id).await.encrypted().unwrap()
}

/// Whether each volume of the instance `id` is encrypted.
async fn instance_volumes_encrypted(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<bool> {
    let mut out = Vec::new();
    for (_, vol) in block_devices(ec2, id).await {
        out.push(encrypted(ec2, &vol).await);
    }
    out
}

#[tokio::test]
async fn encryption_by_default_encrypts_every_new_volume_and_copy() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let state = || async {
        ec2.get_ebs_encryption_by_default()
            .send()
            .await
            .unwrap()
            .ebs_encryption_by_default()
            .unwrap()
    };
    assert!(!state().await, "off for a new account");
    assert_eq!(
        ec2.get_ebs_default_kms_key_id()
            .send()
            .await
            .unwrap()
            .kms_key_id(),
        Some("alias/aws/ebs")
    );
    let before = new_volume(&ec2, "us-east-1a", 8).await;
    let plain_snapshot = crate::completed_snapshot(&ec2, "us-east-1a", 8, false).await;
    let (launched_before, _) = running_instance(&ec2).await;
    assert!(!encrypted(&ec2, &before).await);
    assert_eq!(
        instance_volumes_encrypted(&ec2, &launched_before).await,
        [false]
    );

    let on = ec2.enable_ebs_encryption_by_default().send().await.unwrap();
    assert_eq!(on.ebs_encryption_by_default(), Some(true));
    assert!(state().await);
    // New volumes are encrypted, even when the request says otherwise.
    let asked_not = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(8)
        .encrypted(false)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap();
    assert!(encrypted(&ec2, &asked_not).await);
    assert!(encrypted(&ec2, &new_volume(&ec2, "us-east-1a", 8).await).await);
    let vpc_id = vpc(&ec2, "10.9.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.9.1.0/24", "us-east-1a").await;
    let launched = crate::instance(&ec2, &subnet_id).await;
    assert_eq!(instance_volumes_encrypted(&ec2, &launched).await, [true]);
    // A snapshot copy too.
    let copy = ec2
        .copy_snapshot()
        .source_region("us-east-1")
        .source_snapshot_id(&plain_snapshot)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    let copied = ec2
        .describe_snapshots()
        .snapshot_ids(&copy)
        .send()
        .await
        .unwrap();
    assert_eq!(copied.snapshots()[0].encrypted(), Some(true));
    // What was there before is as it was.
    assert!(!encrypted(&ec2, &before).await);
    assert_eq!(
        instance_volumes_encrypted(&ec2, &launched_before).await,
        [false]
    );

    // Off again: new volumes as asked; but a volume of an encrypted snapshot is encrypted.
    let off = ec2
        .disable_ebs_encryption_by_default()
        .send()
        .await
        .unwrap();
    assert_eq!(off.ebs_encryption_by_default(), Some(false));
    assert!(!encrypted(&ec2, &new_volume(&ec2, "us-east-1a", 8).await).await);
    let sealed = crate::completed_snapshot(&ec2, "us-east-1a", 8, true).await;
    let image = crate::register_from(&ec2, "sealed", "/dev/sda1", &sealed)
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    aws_sdk_ec2::client::Waiters::wait_until_image_available(&ec2)
        .image_ids(&image)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let run = ec2
        .run_instances()
        .image_id(&image)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Micro)
        .subnet_id(&subnet_id)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let id = run.instances()[0].instance_id().unwrap().to_string();
    assert_eq!(instance_volumes_encrypted(&ec2, &id).await, [true]);
}

/// An encrypted 8 GiB volume in us-east-1a, under `key` when given: CreateVolume's answer
/// (its id, and its key as the answer names it).
async fn sealed_volume(
    ec2: &aws_sdk_ec2::Client,
    key: Option<&str>,
) -> aws_sdk_ec2::operation::create_volume::CreateVolumeOutput {
    ec2.create_volume()
        .availability_zone("us-east-1a")
        .size(8)
        .encrypted(true)
        .set_kms_key_id(key.map(String::from))
        .send()
        .await
        .unwrap()
}

/// The key of volume `id`, as DescribeVolumes answers it.
async fn key_of(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<String> {
    volume(ec2, id).await.kms_key_id().map(String::from)
}

#[tokio::test]
async fn every_encrypted_volume_and_snapshot_names_its_kms_key() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let arn = |id: &str| format!("arn:aws:kms:us-east-1:123456789012:key/{id}");
    let key_id = "1234abcd-12ab-34cd-56ef-1234567890ab";

    // Encrypted without a key: the AWS managed key, by ARN; not encrypted: no key.
    let sealed = sealed_volume(&ec2, None).await;
    let managed = sealed.kms_key_id().unwrap().to_string();
    assert!(
        managed.starts_with("arn:aws:kms:us-east-1:123456789012:key/"),
        "{managed}"
    );
    assert_eq!(
        key_of(&ec2, sealed.volume_id().unwrap()).await,
        Some(managed.clone())
    );
    let plain = new_volume(&ec2, "us-east-1a", 8).await;
    assert_eq!(key_of(&ec2, &plain).await, None);
    // alias/aws/ebs and its alias ARN name that same key.
    for alias in [
        "alias/aws/ebs",
        "arn:aws:kms:us-east-1:123456789012:alias/aws/ebs",
    ] {
        let v = sealed_volume(&ec2, Some(alias)).await;
        assert_eq!(v.kms_key_id(), Some(managed.as_str()), "{alias}");
    }

    // A key of the account's own, by id or by ARN: the volume names it by ARN.
    let by_id = sealed_volume(&ec2, Some(key_id)).await.volume_id.unwrap();
    let by_arn = sealed_volume(&ec2, Some(&arn(key_id)))
        .await
        .volume_id
        .unwrap();
    assert_eq!(key_of(&ec2, &by_id).await, Some(arn(key_id)));
    assert_eq!(key_of(&ec2, &by_arn).await, Some(arn(key_id)));
    assert!(volume(&ec2, &by_id).await.encrypted().unwrap());

    // Its snapshot keeps the key, and a volume of that snapshot too.
    let snap = ec2
        .create_snapshot()
        .volume_id(&by_id)
        .send()
        .await
        .unwrap();
    assert_eq!(snap.kms_key_id(), Some(arn(key_id).as_str()));
    aws_sdk_ec2::client::Waiters::wait_until_snapshot_completed(&ec2)
        .snapshot_ids(snap.snapshot_id().unwrap())
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let restored = ec2
        .create_volume()
        .availability_zone("us-east-1b")
        .snapshot_id(snap.snapshot_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(restored.kms_key_id(), Some(arn(key_id).as_str()));
    // Such a snapshot may be shared with another account; one of the AWS managed key not.
    ec2.modify_snapshot_attribute()
        .snapshot_id(snap.snapshot_id().unwrap())
        .attribute(aws_sdk_ec2::types::SnapshotAttributeName::CreateVolumePermission)
        .operation_type(aws_sdk_ec2::types::OperationType::Add)
        .user_ids("210987654321")
        .send()
        .await
        .unwrap();
    let managed_snap = crate::completed_snapshot(&ec2, "us-east-1a", 8, true).await;
    let err = ec2
        .modify_snapshot_attribute()
        .snapshot_id(&managed_snap)
        .attribute(aws_sdk_ec2::types::SnapshotAttributeName::CreateVolumePermission)
        .operation_type(aws_sdk_ec2::types::OperationType::Add)
        .user_ids("210987654321")
        .send()
        .await;
    assert_eq!(code(err), "OperationNotPermitted");

    // A launch's volume takes its mapping's key.
    let vpc_id = vpc(&ec2, "10.9.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.9.1.0/24", "us-east-1a").await;
    let image = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let run = ec2
        .run_instances()
        .image_id(&image)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Micro)
        .subnet_id(&subnet_id)
        .min_count(1)
        .max_count(1)
        .block_device_mappings(
            aws_sdk_ec2::types::BlockDeviceMapping::builder()
                .device_name("/dev/sdb")
                .ebs(
                    aws_sdk_ec2::types::EbsBlockDevice::builder()
                        .volume_size(10)
                        .encrypted(true)
                        .kms_key_id(arn(key_id))
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let launched = run.instances()[0].instance_id().unwrap().to_string();
    let devices = block_devices(&ec2, &launched).await;
    let data = &devices.iter().find(|(d, _)| d == "/dev/sdb").unwrap().1;
    assert_eq!(key_of(&ec2, data).await, Some(arn(key_id)));

    // A key without encryption, and a value that names no key: refused, nothing made.
    let before = ec2.describe_volumes().send().await.unwrap().volumes().len();
    let err = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(8)
        .kms_key_id(key_id)
        .send()
        .await;
    assert_eq!(code(err), "InvalidParameterDependency");
    let err = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(8)
        .encrypted(true)
        .kms_key_id("my-key")
        .send()
        .await;
    assert_eq!(code(err), "InvalidParameterValue");
    assert_eq!(
        ec2.describe_volumes().send().await.unwrap().volumes().len(),
        before
    );

    // The default key: another key named, then the AWS managed key again.
    let set = ec2
        .modify_ebs_default_kms_key_id()
        .kms_key_id(key_id)
        .send()
        .await
        .unwrap();
    assert_eq!(set.kms_key_id(), Some(arn(key_id).as_str()));
    assert_eq!(
        ec2.get_ebs_default_kms_key_id()
            .send()
            .await
            .unwrap()
            .kms_key_id(),
        Some(arn(key_id).as_str())
    );
    let v = sealed_volume(&ec2, None).await;
    assert_eq!(v.kms_key_id(), Some(arn(key_id).as_str()));
    let reset = ec2.reset_ebs_default_kms_key_id().send().await.unwrap();
    assert_eq!(reset.kms_key_id(), Some(managed.as_str()));
    assert_eq!(
        ec2.get_ebs_default_kms_key_id()
            .send()
            .await
            .unwrap()
            .kms_key_id(),
        Some("alias/aws/ebs")
    );
}

/// Whether each device of `mappings` (DescribeInstances' or the `blockDeviceMapping`
/// attribute's) is deleted with its instance, by device.
fn deleted_with(
    mappings: &[aws_sdk_ec2::types::InstanceBlockDeviceMapping],
) -> Vec<(String, bool)> {
    mappings
        .iter()
        .map(|m| {
            let e = m.ebs().unwrap();
            (
                m.device_name().unwrap().to_string(),
                e.delete_on_termination().unwrap(),
            )
        })
        .collect()
}

/// [`deleted_with`] of the instance `id`, as DescribeInstances shows it.
async fn described_deleted_with(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<(String, bool)> {
    deleted_with(crate::described(ec2, id).await.block_device_mappings())
}

/// Terminates the instance `id` and waits until it is terminated.
async fn terminate(ec2: &aws_sdk_ec2::Client, id: &str) {
    ec2.terminate_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap();
    crate::wait(ec2, id, aws_sdk_ec2::types::InstanceStateName::Terminated).await;
}

#[tokio::test]
async fn delete_on_termination_changes_on_attached_volumes_and_termination_follows_it() {
    use aws_sdk_ec2::types::{
        EbsInstanceBlockDeviceSpecification as Ebs, InstanceAttributeName,
        InstanceBlockDeviceMappingSpecification as Mapping,
    };
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (instance, root) = running_instance(&ec2).await;
    let root_volume = block_devices(&ec2, &instance).await[0].1.clone();
    let data = new_volume(&ec2, "us-east-1a", 50).await;
    ec2.attach_volume()
        .volume_id(&data)
        .instance_id(&instance)
        .device("/dev/sdf")
        .send()
        .await
        .unwrap();
    let before = vec![(root.clone(), true), ("/dev/sdf".to_string(), false)];
    assert_eq!(described_deleted_with(&ec2, &instance).await, before);

    let mapping = |device: &str, ebs: Option<Ebs>| {
        Mapping::builder().device_name(device).set_ebs(ebs).build()
    };
    let flag = |delete: bool| Some(Ebs::builder().delete_on_termination(delete).build());
    let modify = |mappings: Vec<Mapping>| {
        ec2.modify_instance_attribute()
            .instance_id(&instance)
            .set_block_device_mappings(Some(mappings))
            .send()
    };

    // Refused, each changing nothing: a device with nothing attached (even beside a good one),
    // another volume than the one at the device, instance store, a second attribute.
    let (refusal, message) = code_and_message(
        modify(vec![
            mapping(&root, flag(false)),
            mapping("/dev/sdz", flag(true)),
        ])
        .await,
    );
    assert_eq!(refusal, "InvalidInstanceAttributeValue");
    assert!(message.contains("/dev/sdz"), "{message}");
    let other = Ebs::builder()
        .volume_id(&root_volume)
        .delete_on_termination(true)
        .build();
    assert_eq!(
        code(modify(vec![mapping("/dev/sdf", Some(other))]).await),
        "InvalidInstanceAttributeValue"
    );
    let suppressed = Mapping::builder()
        .device_name("/dev/sdf")
        .no_device("")
        .build();
    assert_eq!(
        code(modify(vec![suppressed]).await),
        "InvalidInstanceAttributeValue"
    );
    assert_eq!(
        code(
            ec2.modify_instance_attribute()
                .instance_id(&instance)
                .block_device_mappings(mapping(&root, flag(false)))
                .ebs_optimized(
                    aws_sdk_ec2::types::AttributeBooleanValue::builder()
                        .value(true)
                        .build()
                )
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(described_deleted_with(&ec2, &instance).await, before);

    // The root volume kept, the data volume deleted with the instance: a mapping without a
    // flag means true, as the API reference says.
    modify(vec![mapping(&root, flag(false)), mapping("/dev/sdf", None)])
        .await
        .unwrap();
    let after = vec![(root.clone(), false), ("/dev/sdf".to_string(), true)];
    assert_eq!(described_deleted_with(&ec2, &instance).await, after);
    let attribute = ec2
        .describe_instance_attribute()
        .instance_id(&instance)
        .attribute(InstanceAttributeName::BlockDeviceMapping)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted_with(attribute.block_device_mappings()), after);
    let attachment = volume(&ec2, &root_volume).await.attachments()[0].clone();
    assert_eq!(attachment.delete_on_termination(), Some(false));

    terminate(&ec2, &instance).await;
    assert_eq!(
        volume(&ec2, &root_volume).await.state(),
        Some(&VolumeState::Available)
    );
    assert_eq!(
        code(ec2.describe_volumes().volume_ids(&data).send().await),
        "InvalidVolume.NotFound"
    );
    // A terminated instance's flags change no more.
    assert_eq!(
        code(modify(vec![mapping(&root, flag(true))]).await),
        "IncorrectInstanceState"
    );
}
