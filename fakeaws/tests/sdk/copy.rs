//! CopyImage and CopySnapshot through the SDK: within a region and from another, the copies'
//! snapshots, states, sources and tags, and what is refused.

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{ArchitectureValues, ImageState, ResourceType, SnapshotState};
use fakeaws::sim::transitions::Subject;

use crate::{
    code, completed_snapshot as snapshot, empty_fake, filter, image, register_from, tag_spec,
};

#[tokio::test]
async fn an_image_is_copied_to_another_region_with_new_snapshots() {
    let fake = empty_fake().await;
    let east = fake.ec2_client();
    let west = fake.ec2_client_in("us-west-2");
    let root = snapshot(&east, "us-east-1a", 10, false).await;
    let ami = register_from(&east, "node-image", "/dev/xvda", &root)
        .description("Kubernetes node")
        .architecture(ArchitectureValues::Arm64)
        .tag_specifications(tag_spec(ResourceType::Image, &[("team", "platform")]))
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();

    fake.fake()
        .with_region("us-west-2", |r| r.transitions.hold(Subject::Image));
    let copy = west
        .copy_image()
        .source_region("us-east-1")
        .source_image_id(&ami)
        .name("node-image-west")
        .copy_image_tags(true)
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("copied", "yes")]))
        .client_token("copy-1")
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    // The same token answers the same image, and makes nothing more.
    let again = west
        .copy_image()
        .source_region("us-east-1")
        .source_image_id(&ami)
        .name("node-image-west")
        .copy_image_tags(true)
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("copied", "yes")]))
        .client_token("copy-1")
        .send()
        .await
        .unwrap();
    assert_eq!(again.image_id(), Some(copy.as_str()));

    let out = west
        .describe_images()
        .image_ids(&copy)
        .send()
        .await
        .unwrap();
    let made = &out.images()[0];
    assert_eq!(made.state(), Some(&ImageState::Pending));
    assert_eq!(made.source_image_id(), Some(ami.as_str()));
    assert_eq!(made.source_image_region(), Some("us-east-1"));
    assert_eq!(made.architecture(), Some(&ArchitectureValues::Arm64));
    assert_eq!(
        made.description(),
        Some(format!("[Copied {ami} from us-east-1] Kubernetes node").as_str())
    );
    let tags: Vec<(&str, &str)> = made
        .tags()
        .iter()
        .map(|t| (t.key().unwrap(), t.value().unwrap()))
        .collect();
    assert_eq!(tags, [("team", "platform")]);
    let root_copy = made.block_device_mappings()[0]
        .ebs()
        .unwrap()
        .snapshot_id()
        .unwrap()
        .to_string();
    assert_ne!(root_copy, root);

    // The copy's snapshot is in the destination, described as EBS describes copies.
    let snaps = west
        .describe_snapshots()
        .owner_ids("self")
        .send()
        .await
        .unwrap();
    assert_eq!(snaps.snapshots().len(), 1);
    let s = &snaps.snapshots()[0];
    assert_eq!(s.snapshot_id(), Some(root_copy.as_str()));
    assert_eq!(s.volume_id(), Some("vol-ffffffff"));
    assert_eq!(s.volume_size(), Some(10));
    let d = s.description().unwrap();
    assert!(
        d.starts_with(&format!(
            "Copied for DestinationAmi {copy} from SourceAmi {ami} for SourceSnapshot {root}. Task created on "
        )),
        "{d}"
    );
    assert_eq!(s.tags()[0].key(), Some("copied"));

    fake.fake()
        .with_region("us-west-2", |r| r.transitions.release(Subject::Image));
    west.wait_until_image_available()
        .image_ids(&copy)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    // The source is untouched.
    let out = east.describe_images().image_ids(&ami).send().await.unwrap();
    assert_eq!(out.images()[0].name(), Some("node-image"));
    assert!(
        east.describe_images()
            .image_ids(&copy)
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn a_public_image_is_copied_within_the_region_and_encrypted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ubuntu = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-*").await;
    let copy = ec2
        .copy_image()
        .source_region("us-east-1")
        .source_image_id(&ubuntu)
        .name("my-capa-node")
        .description("ours now")
        .encrypted(true)
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    ec2.wait_until_image_available()
        .image_ids(&copy)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let out = ec2.describe_images().image_ids(&copy).send().await.unwrap();
    let made = &out.images()[0];
    assert_eq!(made.owner_id(), Some("123456789012"));
    assert_eq!(made.public(), Some(false));
    assert_eq!(made.description(), Some("ours now"));
    assert_eq!(
        made.block_device_mappings()[0].ebs().unwrap().encrypted(),
        Some(true)
    );
    let found = ec2
        .describe_images()
        .owners("self")
        .filters(filter("source-image-id", &[&ubuntu]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.images().len(), 1);

    // A name the account's images hold, a source not there, another partition: refused.
    let refused = [
        (
            "us-east-1",
            ubuntu.as_str(),
            "my-capa-node",
            "InvalidAMIName.Duplicate",
        ),
        (
            "us-west-2",
            copy.as_str(),
            "from-nowhere",
            "InvalidAMIID.NotFound",
        ),
        (
            "cn-north-1",
            ubuntu.as_str(),
            "across",
            "InvalidParameterValue",
        ),
    ];
    for (region, source, name, expected) in refused {
        let r = ec2
            .copy_image()
            .source_region(region)
            .source_image_id(source)
            .name(name)
            .send()
            .await;
        assert_eq!(code(r), expected, "{region} {source} {name}");
    }
    let mine = ec2.describe_images().owners("self").send().await.unwrap();
    assert_eq!(mine.images().len(), 1, "nothing made by a refused copy");
}

#[tokio::test]
async fn a_snapshot_is_copied_pending_then_completed_and_stays_encrypted() {
    let fake = empty_fake().await;
    let east = fake.ec2_client();
    let west = fake.ec2_client_in("us-west-2");
    let plain = snapshot(&east, "us-east-1a", 12, false).await;
    let secret = snapshot(&east, "us-east-1a", 8, true).await;
    fake.fake()
        .with_region("us-west-2", |r| r.transitions.hold(Subject::Snapshot));
    let out = west
        .copy_snapshot()
        .source_region("us-east-1")
        .source_snapshot_id(&plain)
        // What botocore adds to every CopySnapshot: deprecated, taken and ignored.
        .destination_region("us-west-2")
        .presigned_url("https://ec2.us-east-1.amazonaws.com/?Action=CopySnapshot")
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("Name", "dr-copy")]))
        .send()
        .await
        .unwrap();
    let copy = out.snapshot_id().unwrap().to_string();
    assert_eq!(out.tags()[0].value(), Some("dr-copy"));
    let s = west
        .describe_snapshots()
        .snapshot_ids(&copy)
        .send()
        .await
        .unwrap();
    let s = &s.snapshots()[0];
    assert_eq!(s.state(), Some(&SnapshotState::Pending));
    assert_eq!(s.volume_size(), Some(12));
    assert_eq!(s.volume_id(), Some("vol-ffffffff"));
    assert_eq!(s.encrypted(), Some(false));
    assert_eq!(
        s.description(),
        Some(format!("[Copied {plain} from us-east-1]").as_str())
    );
    // A pending snapshot is not copied yet.
    let r = west
        .copy_snapshot()
        .source_region("us-west-2")
        .source_snapshot_id(&copy)
        .send()
        .await;
    assert_eq!(code(r), "IncorrectState");
    fake.fake()
        .with_region("us-west-2", |r| r.transitions.release(Subject::Snapshot));
    west.wait_until_snapshot_completed()
        .snapshot_ids(&copy)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();

    // A copy of an encrypted snapshot is encrypted; an unencrypted one is when asked.
    for (source, encrypt) in [(&secret, false), (&plain, true)] {
        let copy = east
            .copy_snapshot()
            .source_region("us-east-1")
            .source_snapshot_id(source)
            .encrypted(encrypt)
            .send()
            .await
            .unwrap()
            .snapshot_id
            .unwrap();
        let s = east
            .describe_snapshots()
            .snapshot_ids(&copy)
            .send()
            .await
            .unwrap();
        assert_eq!(s.snapshots()[0].encrypted(), Some(true));
    }
    let r = west
        .copy_snapshot()
        .source_region("us-east-1")
        .source_snapshot_id("snap-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(r), "InvalidSnapshot.NotFound");
}

/// The snapshot `id`'s key, as DescribeSnapshots answers it.
async fn snapshot_key(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<String> {
    let out = ec2
        .describe_snapshots()
        .snapshot_ids(id)
        .send()
        .await
        .unwrap();
    out.snapshots()[0].kms_key_id().map(String::from)
}

#[tokio::test]
async fn copies_are_encrypted_with_the_key_asked_for() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let west = fake.ec2_client_in("us-west-2");
    let key = "1234abcd-12ab-34cd-56ef-1234567890ab";
    let west_key = format!("arn:aws:kms:us-west-2:123456789012:key/{key}");
    let plain = snapshot(&ec2, "us-east-1a", 8, false).await;

    // CopySnapshot: by key id, into the destination region's key ARN.
    let copy = west
        .copy_snapshot()
        .source_region("us-east-1")
        .source_snapshot_id(&plain)
        .encrypted(true)
        .kms_key_id(key)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    assert_eq!(snapshot_key(&west, &copy).await, Some(west_key.clone()));
    // Without a key: the destination's default key, not the source's.
    let copy = west
        .copy_snapshot()
        .source_region("us-east-1")
        .source_snapshot_id(&plain)
        .encrypted(true)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    let default = snapshot_key(&west, &copy).await.unwrap();
    assert!(
        default.starts_with("arn:aws:kms:us-west-2:123456789012:key/") && default != west_key,
        "{default}"
    );
    // A key without Encrypted: refused, nothing copied.
    let before = west
        .describe_snapshots()
        .owner_ids("self")
        .send()
        .await
        .unwrap()
        .snapshots()
        .len();
    let r = west
        .copy_snapshot()
        .source_region("us-east-1")
        .source_snapshot_id(&plain)
        .kms_key_id(key)
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterDependency");

    // CopyImage: every snapshot of the copy under the key.
    let ubuntu = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-*").await;
    let r = west
        .copy_image()
        .source_region("us-east-1")
        .source_image_id(&ubuntu)
        .name("keyless")
        .kms_key_id(key)
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterDependency");
    assert_eq!(
        west.describe_snapshots()
            .owner_ids("self")
            .send()
            .await
            .unwrap()
            .snapshots()
            .len(),
        before,
        "nothing made by the refused copies"
    );
    let copied = west
        .copy_image()
        .source_region("us-east-1")
        .source_image_id(&ubuntu)
        .name("sealed-node")
        .encrypted(true)
        .kms_key_id(format!("arn:aws:kms:us-west-2:123456789012:key/{key}"))
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    let out = west
        .describe_images()
        .image_ids(&copied)
        .send()
        .await
        .unwrap();
    let snapshots: Vec<String> = out.images()[0]
        .block_device_mappings()
        .iter()
        .filter_map(|m| m.ebs().and_then(|e| e.snapshot_id()).map(String::from))
        .collect();
    assert!(!snapshots.is_empty());
    for s in &snapshots {
        assert_eq!(snapshot_key(&west, s).await, Some(west_key.clone()), "{s}");
    }
}
