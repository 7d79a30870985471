//! Images (the seeded catalogue, owners, name globs, Register/Deregister) and key pairs
//! (create, import, describe, delete) through the SDK.

use aws_sdk_ec2::primitives::Blob;
use aws_sdk_ec2::types::{
    ArchitectureValues, BlockDeviceMapping, EbsBlockDevice, ImageState, KeyType, ResourceType,
};

use crate::{code, empty_fake, filter, subnet, tag_spec, vpc};

/// Where the reference project publishes its images today, and where it did before.
const CAPA_OWNER: &str = "819546954734";
const CAPA_LEGACY_OWNER: &str = "258751437250";

#[tokio::test]
async fn catalogue_by_owner_name_glob_and_architecture() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    // The lookup the provider makes: owner + name pattern, newest by creation date.
    let found = ec2
        .describe_images()
        .owners(CAPA_OWNER)
        .filters(filter("name", &["capa-ami-ubuntu-24.04-?1.31.0-*"]))
        .filters(filter("architecture", &["x86_64"]))
        .filters(filter("state", &["available"]))
        .send()
        .await
        .unwrap();
    let mut images = found.images().to_vec();
    assert_eq!(images.len(), 2, "two x86_64 builds of v1.31.0 on 24.04");
    images.sort_by(|a, b| b.creation_date().cmp(&a.creation_date()));
    assert_eq!(
        images[0].name(),
        Some("capa-ami-ubuntu-24.04-v1.31.0-1727000000")
    );
    assert_eq!(images[0].owner_id(), Some(CAPA_OWNER));
    assert_eq!(images[0].state(), Some(&ImageState::Available));
    assert_eq!(images[0].architecture(), Some(&ArchitectureValues::X8664));
    assert!(
        images[0].block_device_mappings()[0]
            .ebs()
            .unwrap()
            .snapshot_id()
            .is_some()
    );

    let arm = ec2
        .describe_images()
        .owners(CAPA_OWNER)
        .filters(filter("name", &["capa-ami-ubuntu-24.04-?1.31.0-*"]))
        .filters(filter("architecture", &["arm64"]))
        .send()
        .await
        .unwrap();
    assert_eq!(arm.images().len(), 1);
    // The retiring account still lists the same builds.
    let legacy = ec2
        .describe_images()
        .owners(CAPA_LEGACY_OWNER)
        .filters(filter("name", &["capa-ami-ubuntu-24.04-?1.31.0-*"]))
        .send()
        .await
        .unwrap();
    assert_eq!(legacy.images().len(), 3);
    assert!(
        legacy
            .images()
            .iter()
            .all(|i| i.owner_id() == Some(CAPA_LEGACY_OWNER))
    );

    // `?` matches exactly one character, `*` any run; a pattern that matches nothing is an
    // empty answer, not an error.
    let none = ec2
        .describe_images()
        .filters(filter("name", &["capa-ami-ubuntu-24.04-??1.31.0-*"]))
        .send()
        .await
        .unwrap();
    assert!(none.images().is_empty());
    let amazon = ec2
        .describe_images()
        .owners("amazon")
        .filters(filter("name", &["al2023-ami-*"]))
        .send()
        .await
        .unwrap();
    assert_eq!(amazon.images().len(), 2);
    let other_owner = ec2
        .describe_images()
        .owners("111122223333")
        .send()
        .await
        .unwrap();
    assert!(other_owner.images().is_empty());
    assert_eq!(
        code(ec2.describe_images().owners("nobody").send().await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.describe_images()
                .image_ids("ami-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidAMIID.NotFound"
    );
    assert_eq!(
        code(
            ec2.describe_images()
                .filters(filter("colour", &["red"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

#[tokio::test]
async fn register_describe_launch_deregister() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    // The root snapshot must be one of the account's: a made-up one is refused.
    let root = |snapshot: &str| {
        BlockDeviceMapping::builder()
            .device_name("/dev/sda1")
            .ebs(
                EbsBlockDevice::builder()
                    .snapshot_id(snapshot)
                    .volume_size(20)
                    .build(),
            )
            .build()
    };
    assert_eq!(
        code(
            ec2.register_image()
                .name("made-up")
                .root_device_name("/dev/sda1")
                .block_device_mappings(root("snap-0123456789abcdef0"))
                .send()
                .await
        ),
        "InvalidSnapshot.NotFound"
    );
    let volume = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(16)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap();
    let snapshot = ec2
        .create_snapshot()
        .volume_id(volume)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    let registered = ec2
        .register_image()
        .name("capa-ami-ubuntu-24.04-v1.32.0-1730000000")
        .architecture(ArchitectureValues::X8664)
        .root_device_name("/dev/sda1")
        .virtualization_type("hvm")
        .block_device_mappings(root(&snapshot))
        .tag_specifications(tag_spec(ResourceType::Image, &[("built-by", "packer")]))
        .send()
        .await
        .unwrap();
    let ami = registered.image_id().unwrap().to_string();
    assert_eq!(
        code(
            ec2.register_image()
                .name("capa-ami-ubuntu-24.04-v1.32.0-1730000000")
                .root_device_name("/dev/sda1")
                .send()
                .await
        ),
        "InvalidAMIName.Duplicate"
    );
    let mine = ec2.describe_images().owners("self").send().await.unwrap();
    assert_eq!(mine.images().len(), 1);
    let image = &mine.images()[0];
    assert_eq!(image.image_id(), Some(ami.as_str()));
    assert_eq!(image.public(), Some(false));
    assert!(image.tags().iter().any(|t| t.key() == Some("built-by")));
    let tagged = ec2
        .describe_images()
        .filters(filter("tag:built-by", &["packer"]))
        .send()
        .await
        .unwrap();
    assert_eq!(tagged.images().len(), 1);

    // It can be launched, with a root volume of its size.
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let run = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
        .subnet_id(&s)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let vol = run.instances()[0].block_device_mappings()[0]
        .ebs()
        .unwrap()
        .volume_id()
        .unwrap()
        .to_string();
    let v = ec2.describe_volumes().volume_ids(vol).send().await.unwrap();
    assert_eq!(v.volumes()[0].size(), Some(20));

    // A catalogue image is not ours to deregister; ours is.
    let public = crate::image(&ec2, "capa-ami-ubuntu-22.04-v1.30.4-1723000000").await;
    assert_eq!(
        code(ec2.deregister_image().image_id(&public).send().await),
        "AuthFailure"
    );
    ec2.deregister_image().image_id(&ami).send().await.unwrap();
    assert_eq!(
        code(ec2.describe_images().image_ids(&ami).send().await),
        "InvalidAMIID.NotFound"
    );
    assert_eq!(
        code(ec2.deregister_image().image_id(&ami).send().await),
        "InvalidAMIID.NotFound"
    );
}

#[tokio::test]
async fn key_pairs_create_import_describe_delete() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let created = ec2
        .create_key_pair()
        .key_name("ops")
        .tag_specifications(tag_spec(ResourceType::KeyPair, &[("team", "platform")]))
        .send()
        .await
        .unwrap();
    assert!(
        created
            .key_material()
            .unwrap()
            .starts_with("-----BEGIN RSA PRIVATE KEY-----")
    );
    assert!(created.key_pair_id().unwrap().starts_with("key-"));
    assert_eq!(
        code(ec2.create_key_pair().key_name("ops").send().await),
        "InvalidKeyPair.Duplicate"
    );
    // An Ed25519 public key's SSH blob: its type, then its 32 bytes, each length-prefixed.
    let blob = [
        &[0, 0, 0, 11][..],
        b"ssh-ed25519",
        &[0, 0, 0, 32],
        &[7u8; 32],
    ]
    .concat();
    let public = format!(
        "ssh-ed25519 {} someone@example",
        aws_smithy_types::base64::encode(blob)
    );
    let imported = ec2
        .import_key_pair()
        .key_name("laptop")
        .public_key_material(Blob::new(public.as_bytes()))
        .send()
        .await
        .unwrap();
    assert_eq!(imported.key_name(), Some("laptop"));
    assert_eq!(
        code(
            ec2.import_key_pair()
                .key_name("broken")
                .public_key_material(Blob::new("not a key".as_bytes()))
                .send()
                .await
        ),
        "InvalidKey.Format"
    );

    let all = ec2.describe_key_pairs().send().await.unwrap();
    let mut names: Vec<_> = all
        .key_pairs()
        .iter()
        .map(|k| k.key_name().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["laptop", "ops"]);
    let laptop = ec2
        .describe_key_pairs()
        .key_names("laptop")
        .include_public_key(true)
        .send()
        .await
        .unwrap();
    assert_eq!(laptop.key_pairs()[0].key_type(), Some(&KeyType::Ed25519));
    assert!(
        laptop.key_pairs()[0]
            .public_key()
            .unwrap()
            .starts_with("ssh-ed25519 ")
    );
    let by_tag = ec2
        .describe_key_pairs()
        .filters(filter("tag:team", &["platform"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_tag.key_pairs().len(), 1);
    assert_eq!(
        code(ec2.describe_key_pairs().key_names("nobody").send().await),
        "InvalidKeyPair.NotFound"
    );

    // A key in use by an instance can be deleted, as AWS allows; the instance keeps its name.
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let run = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
        .subnet_id(&s)
        .key_name("ops")
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    ec2.delete_key_pair().key_name("ops").send().await.unwrap();
    let d = ec2
        .describe_instances()
        .instance_ids(run.instances()[0].instance_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(d.reservations()[0].instances()[0].key_name(), Some("ops"));
    // Deleting a missing name succeeds; a missing id does not.
    ec2.delete_key_pair().key_name("ops").send().await.unwrap();
    assert_eq!(
        code(
            ec2.delete_key_pair()
                .key_pair_id("key-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidKeyPair.NotFound"
    );
    let left = ec2.describe_key_pairs().send().await.unwrap();
    assert_eq!(left.key_pairs().len(), 1);
}
