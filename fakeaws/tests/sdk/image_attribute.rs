//! An image's attributes through the SDK: sharing it with accounts, organizations and
//! everyone (ModifyImageAttribute, DescribeImageAttribute, ResetImageAttribute), the
//! account's block public access for AMIs, and the other attributes (description,
//! IMDSv2, last launch); its life after registration (disabled, deprecated, protected from
//! deregistration).

use aws_sdk_ec2::types::{
    ArchitectureValues, AttributeValue, ImageAttributeName, ImageState, ImdsSupportValues,
    InstanceType, LaunchPermission, LaunchPermissionModifications, OperationType, PermissionGroup,
    ResetImageAttributeName,
};
use fakeaws::sim::transitions::Subject;

use crate::{
    code, code_and_message, completed_snapshot, empty_fake, filter, image, register_from, subnet,
    vpc,
};

/// An image of the account's, registered from a snapshot of a fresh volume (`encrypted` or
/// not); its id.
async fn own_image(ec2: &aws_sdk_ec2::Client, name: &str, encrypted: bool) -> String {
    let snap = completed_snapshot(ec2, "us-east-1a", 8, encrypted).await;
    register_from(ec2, name, "/dev/sda1", &snap)
        .architecture(ArchitectureValues::X8664)
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap()
}

/// A launch permission change adding `p` alone.
fn adding(p: LaunchPermission) -> LaunchPermissionModifications {
    LaunchPermissionModifications::builder().add(p).build()
}

/// Who DescribeImageAttribute `launchPermission` lists for `ami`: `all`, account ids and
/// ARNs, in its order.
async fn permissions(ec2: &aws_sdk_ec2::Client, ami: &str) -> Vec<String> {
    let out = ec2
        .describe_image_attribute()
        .image_id(ami)
        .attribute(ImageAttributeName::LaunchPermission)
        .send()
        .await
        .unwrap();
    assert_eq!(out.image_id(), Some(ami));
    out.launch_permissions()
        .iter()
        .map(|p| {
            p.group()
                .map(|g| g.as_str().to_string())
                .or_else(|| p.user_id().map(String::from))
                .or_else(|| p.organization_arn().map(String::from))
                .or_else(|| p.organizational_unit_arn().map(String::from))
                .unwrap()
        })
        .collect()
}

/// Whether DescribeImages calls `ami` public.
async fn public(ec2: &aws_sdk_ec2::Client, ami: &str) -> bool {
    let out = ec2.describe_images().image_ids(ami).send().await.unwrap();
    out.images()[0].public().unwrap()
}

/// The ids DescribeImages answers to the account's own images executable by `user`.
async fn executable_by(ec2: &aws_sdk_ec2::Client, user: &str) -> Vec<String> {
    let out = ec2
        .describe_images()
        .owners("self")
        .executable_users(user)
        .send()
        .await
        .unwrap();
    out.images()
        .iter()
        .map(|i| i.image_id().unwrap().to_string())
        .collect()
}

const ORG: &str = "arn:aws:organizations::123456789012:organization/o-123example";
const OU: &str = "arn:aws:organizations::123456789012:ou/o-123example/ou-1a2b-34uvwxyz";

#[tokio::test]
async fn an_image_is_shared_with_accounts_and_organizations_and_reset() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = own_image(&ec2, "node-image", false).await;
    assert!(permissions(&ec2, &ami).await.is_empty());
    ec2.modify_image_attribute()
        .image_id(&ami)
        .launch_permission(
            LaunchPermissionModifications::builder()
                .add(LaunchPermission::builder().user_id("111122223333").build())
                .add(LaunchPermission::builder().organization_arn(ORG).build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    // With Attribute naming the same attribute too, as terraform's provider sends it.
    ec2.modify_image_attribute()
        .image_id(&ami)
        .attribute("launchPermission")
        .launch_permission(adding(
            LaunchPermission::builder().user_id("111122223333").build(),
        ))
        .send()
        .await
        .unwrap();
    // Attribute naming another is refused.
    let r = ec2
        .modify_image_attribute()
        .image_id(&ami)
        .attribute("description")
        .launch_permission(adding(
            LaunchPermission::builder().user_id("777788889999").build(),
        ))
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterCombination");
    // The older form: Attribute, OperationType and the lists.
    ec2.modify_image_attribute()
        .image_id(&ami)
        .attribute("launchPermission")
        .operation_type(OperationType::Add)
        .user_ids("444455556666")
        .organizational_unit_arns(OU)
        .send()
        .await
        .unwrap();
    assert_eq!(
        permissions(&ec2, &ami).await,
        ["111122223333", ORG, "444455556666", OU]
    );
    // Shared is not public.
    assert!(!public(&ec2, &ami).await);
    assert_eq!(executable_by(&ec2, "111122223333").await, [ami.as_str()]);
    assert!(executable_by(&ec2, "777788889999").await.is_empty());
    assert!(executable_by(&ec2, "all").await.is_empty());

    // Each bad item is refused, and nothing of the call is kept.
    let bad = [
        LaunchPermission::builder().user_id("12345").build(),
        LaunchPermission::builder()
            .organization_arn("arn:aws:iam::123456789012:root")
            .build(),
    ];
    for item in bad {
        let r = ec2
            .modify_image_attribute()
            .image_id(&ami)
            .launch_permission(
                LaunchPermissionModifications::builder()
                    .add(LaunchPermission::builder().user_id("999999999999").build())
                    .add(item)
                    .build(),
            )
            .send()
            .await;
        assert_eq!(code(r), "InvalidAMIAttributeItemValue");
    }
    let (c, m) = code_and_message(
        ec2.modify_image_attribute()
            .image_id(&ami)
            .attribute("launchPermission")
            .operation_type(OperationType::Add)
            .user_groups("admins")
            .send()
            .await,
    );
    assert_eq!(c, "InvalidAMIAttributeItemValue");
    assert_eq!(
        m,
        "Invalid attribute item value \"admins\" for UserGroup item type."
    );
    assert_eq!(
        permissions(&ec2, &ami).await,
        ["111122223333", ORG, "444455556666", OU]
    );

    // Removing takes one away; adding one twice lists it once.
    ec2.modify_image_attribute()
        .image_id(&ami)
        .launch_permission(
            LaunchPermissionModifications::builder()
                .remove(LaunchPermission::builder().user_id("111122223333").build())
                .add(LaunchPermission::builder().organization_arn(ORG).build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(permissions(&ec2, &ami).await, [ORG, "444455556666", OU]);
    assert!(executable_by(&ec2, "111122223333").await.is_empty());

    ec2.reset_image_attribute()
        .image_id(&ami)
        .attribute(ResetImageAttributeName::LaunchPermission)
        .send()
        .await
        .unwrap();
    assert!(permissions(&ec2, &ami).await.is_empty());

    // Another's image is not the account's to share, nor to read the sharing of.
    let amazon = image(&ec2, "al2023-ami-*").await;
    let r = ec2
        .modify_image_attribute()
        .image_id(&amazon)
        .launch_permission(adding(
            LaunchPermission::builder().user_id("111122223333").build(),
        ))
        .send()
        .await;
    assert_eq!(code(r), "AuthFailure");
    let r = ec2
        .describe_image_attribute()
        .image_id(&amazon)
        .attribute(ImageAttributeName::LaunchPermission)
        .send()
        .await;
    assert_eq!(code(r), "AuthFailure");
    let r = ec2
        .reset_image_attribute()
        .image_id("ami-0123456789abcdef0")
        .attribute(ResetImageAttributeName::LaunchPermission)
        .send()
        .await;
    assert_eq!(code(r), "InvalidAMIID.NotFound");
}

#[tokio::test]
async fn an_image_is_made_public_only_once_block_public_access_is_disabled() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = own_image(&ec2, "public-node-image", false).await;
    let state = || async {
        let out = ec2
            .get_image_block_public_access_state()
            .send()
            .await
            .unwrap();
        assert_eq!(out.managed_by().map(|m| m.as_str()), Some("account"));
        out.image_block_public_access_state().unwrap().to_string()
    };
    let make_public = || {
        ec2.modify_image_attribute()
            .image_id(&ami)
            .launch_permission(
                LaunchPermissionModifications::builder()
                    .add(
                        LaunchPermission::builder()
                            .group(PermissionGroup::All)
                            .build(),
                    )
                    .build(),
            )
            .send()
    };
    // A new account blocks public sharing.
    assert_eq!(state().await, "block-new-sharing");
    let (c, m) = code_and_message(make_public().await);
    assert_eq!(c, "OperationNotPermitted");
    assert!(m.contains("block public access for AMIs is enabled"), "{m}");
    assert!(!public(&ec2, &ami).await);

    // Disabling takes a while, during which the state and the refusal stay.
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.hold(Subject::ImageBlockPublicAccess)
    });
    let out = ec2
        .disable_image_block_public_access()
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.image_block_public_access_state().map(|s| s.as_str()),
        Some("unblocked")
    );
    assert_eq!(state().await, "block-new-sharing");
    assert_eq!(code(make_public().await), "OperationNotPermitted");
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.release(Subject::ImageBlockPublicAccess)
    });
    assert_eq!(state().await, "unblocked");

    make_public().await.unwrap();
    assert!(public(&ec2, &ami).await);
    assert_eq!(permissions(&ec2, &ami).await, ["all"]);
    assert_eq!(executable_by(&ec2, "all").await, [ami.as_str()]);
    let listed = ec2
        .describe_images()
        .owners("self")
        .filters(filter("is-public", &["true"]))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.images().len(), 1);

    // Blocking again keeps the public images public; sharing anew is refused.
    ec2.enable_image_block_public_access()
        .image_block_public_access_state(
            aws_sdk_ec2::types::ImageBlockPublicAccessEnabledState::BlockNewSharing,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(state().await, "block-new-sharing");
    assert!(public(&ec2, &ami).await);
    // The group `all` removed, the image is private again.
    ec2.modify_image_attribute()
        .image_id(&ami)
        .attribute("launchPermission")
        .operation_type(OperationType::Remove)
        .user_groups("all")
        .send()
        .await
        .unwrap();
    assert!(!public(&ec2, &ami).await);
    assert_eq!(code(make_public().await), "OperationNotPermitted");
    assert!(!public(&ec2, &ami).await);
}

#[tokio::test]
async fn description_imds_support_and_last_launch_are_attributes_too() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = own_image(&ec2, "described-image", false).await;
    let attribute = |name: ImageAttributeName| {
        ec2.describe_image_attribute()
            .image_id(&ami)
            .attribute(name)
            .send()
    };
    let described = || async {
        let out = ec2.describe_images().image_ids(&ami).send().await.unwrap();
        out.images()[0].clone()
    };

    ec2.modify_image_attribute()
        .image_id(&ami)
        .description(AttributeValue::builder().value("Kubernetes node").build())
        .send()
        .await
        .unwrap();
    assert_eq!(described().await.description(), Some("Kubernetes node"));
    ec2.modify_image_attribute()
        .image_id(&ami)
        .attribute("description")
        .value("Kubernetes node, v1.31")
        .send()
        .await
        .unwrap();
    let out = attribute(ImageAttributeName::Description).await.unwrap();
    assert_eq!(
        out.description().and_then(|d| d.value()),
        Some("Kubernetes node, v1.31")
    );

    // One attribute a call; a wrong IMDS value; neither changes anything.
    let r = ec2
        .modify_image_attribute()
        .image_id(&ami)
        .description(AttributeValue::builder().value("other").build())
        .imds_support(AttributeValue::builder().value("v2.0").build())
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterCombination");
    let r = ec2
        .modify_image_attribute()
        .image_id(&ami)
        .imds_support(AttributeValue::builder().value("v1.0").build())
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterValue");
    let image = described().await;
    assert_eq!(image.description(), Some("Kubernetes node, v1.31"));
    assert_eq!(image.imds_support(), None);
    let out = attribute(ImageAttributeName::ImdsSupport).await.unwrap();
    assert_eq!(out.imds_support().and_then(|v| v.value()), None);

    ec2.modify_image_attribute()
        .image_id(&ami)
        .imds_support(AttributeValue::builder().value("v2.0").build())
        .send()
        .await
        .unwrap();
    assert_eq!(
        described().await.imds_support(),
        Some(&ImdsSupportValues::V20)
    );
    let out = attribute(ImageAttributeName::ImdsSupport).await.unwrap();
    assert_eq!(out.imds_support().and_then(|v| v.value()), Some("v2.0"));

    // The block device mappings are the image's to describe, not the attribute's.
    let r = attribute(ImageAttributeName::BlockDeviceMapping).await;
    assert_eq!(code(r), "AuthFailure");

    // Never launched, then launched.
    let out = attribute(ImageAttributeName::LastLaunchedTime)
        .await
        .unwrap();
    assert_eq!(out.last_launched_time().and_then(|v| v.value()), None);
    assert_eq!(described().await.last_launched_time(), None);
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = subnet(&ec2, &vpc, "10.0.1.0/24", "us-east-1a").await;
    ec2.run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(subnet)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let out = attribute(ImageAttributeName::LastLaunchedTime)
        .await
        .unwrap();
    let at = out.last_launched_time().and_then(|v| v.value()).unwrap();
    assert!(at.ends_with('Z') && at.contains('T'), "{at}");
    assert_eq!(described().await.last_launched_time(), Some(at));
}

#[tokio::test]
async fn an_image_of_encrypted_snapshots_is_shared_with_no_one() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    ec2.disable_image_block_public_access()
        .send()
        .await
        .unwrap();
    let ami = own_image(&ec2, "encrypted-image", true).await;
    // The image shows its snapshot encrypted, and the filter finds it so.
    let out = ec2.describe_images().image_ids(&ami).send().await.unwrap();
    let ebs = out.images()[0].block_device_mappings()[0].ebs().unwrap();
    assert_eq!(ebs.encrypted(), Some(true));
    let found = ec2
        .describe_images()
        .owners("self")
        .filters(filter("block-device-mapping.encrypted", &["true"]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.images().len(), 1);

    let share = |p: LaunchPermission| {
        ec2.modify_image_attribute()
            .image_id(&ami)
            .launch_permission(adding(p))
            .send()
    };
    let (c, m) =
        code_and_message(share(LaunchPermission::builder().user_id("111122223333").build()).await);
    assert_eq!(c, "InvalidParameter");
    assert!(
        m.starts_with("Snapshots encrypted with the AWS Managed CMK"),
        "{m}"
    );
    let (c, m) = code_and_message(
        share(
            LaunchPermission::builder()
                .group(PermissionGroup::All)
                .build(),
        )
        .await,
    );
    assert_eq!(c, "UnsupportedOperation");
    assert!(m.starts_with("Encrypted snapshots can"), "{m}");
    assert!(permissions(&ec2, &ami).await.is_empty());
    assert!(!public(&ec2, &ami).await);
}

/// Whether DescribeImages lists `ami` among the account's images with `call`'s options.
async fn lists(
    ami: &str,
    call: aws_sdk_ec2::operation::describe_images::builders::DescribeImagesFluentBuilder,
) -> bool {
    let out = call.send().await.unwrap();
    out.images().iter().any(|i| i.image_id() == Some(ami))
}

/// Launches one instance of `ami` in a new subnet: the launch's result.
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    ami: &str,
) -> Result<
    (),
    aws_sdk_ec2::error::SdkError<aws_sdk_ec2::operation::run_instances::RunInstancesError>,
> {
    let vpc = vpc(ec2, "10.0.0.0/16").await;
    let subnet = subnet(ec2, &vpc, "10.0.1.0/24", "us-east-1a").await;
    ec2.run_instances()
        .image_id(ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(subnet)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .map(|_| ())
}

#[tokio::test]
async fn a_disabled_image_is_private_unlisted_and_launches_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = own_image(&ec2, "to-disable", false).await;
    ec2.modify_image_attribute()
        .image_id(&ami)
        .launch_permission(adding(
            LaunchPermission::builder().user_id("111122223333").build(),
        ))
        .send()
        .await
        .unwrap();
    let out = ec2.disable_image().image_id(&ami).send().await.unwrap();
    assert_eq!(out.r#return(), Some(true));

    assert!(!lists(&ami, ec2.describe_images().owners("self")).await);
    assert!(!lists(&ami, ec2.describe_images().image_ids(&ami)).await);
    let out = ec2
        .describe_images()
        .image_ids(&ami)
        .include_disabled(true)
        .send()
        .await
        .unwrap();
    assert_eq!(out.images()[0].state(), Some(&ImageState::Disabled));
    assert!(permissions(&ec2, &ami).await.is_empty());
    let (c, _) = code_and_message(launch(&ec2, &ami).await);
    assert_eq!(c, "InvalidAMIID.Unavailable");
    let r = ec2
        .modify_image_attribute()
        .image_id(&ami)
        .launch_permission(adding(
            LaunchPermission::builder().user_id("111122223333").build(),
        ))
        .send()
        .await;
    assert_eq!(code(r), "OperationNotPermitted");

    // Enabled, it is listed and launches again, still shared with no one.
    ec2.enable_image().image_id(&ami).send().await.unwrap();
    let out = ec2.describe_images().image_ids(&ami).send().await.unwrap();
    assert_eq!(out.images()[0].state(), Some(&ImageState::Available));
    assert!(permissions(&ec2, &ami).await.is_empty());
    launch(&ec2, &ami).await.unwrap();

    // Another's image is not the account's to disable.
    let amazon = image(&ec2, "al2023-ami-*").await;
    let r = ec2.disable_image().image_id(&amazon).send().await;
    assert_eq!(code(r), "AuthFailure");
}

#[tokio::test]
async fn a_deprecated_image_is_listed_to_its_owner_and_still_launches() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = own_image(&ec2, "to-deprecate", false).await;
    let now = fake
        .fake()
        .with_region("us-east-1", |r| r.clock.now_datetime().secs());
    let at = |secs: i64| aws_sdk_ec2::primitives::DateTime::from_secs(secs);
    let deprecate = |secs: i64| {
        ec2.enable_image_deprecation()
            .image_id(&ami)
            .deprecate_at(at(secs))
            .send()
    };
    // Never in the past, never more than 10 years ahead; nothing kept.
    assert_eq!(code(deprecate(now - 3600).await), "InvalidParameterValue");
    assert_eq!(
        code(deprecate(now + 11 * 365 * 24 * 3600).await),
        "InvalidParameterValue"
    );
    let described = || async {
        let out = ec2.describe_images().image_ids(&ami).send().await.unwrap();
        out.images()[0].clone()
    };
    assert_eq!(described().await.deprecation_time(), None);

    // An hour ahead, to the minute (the seconds rounded).
    let out = deprecate(now + 3600 + 20).await.unwrap();
    assert_eq!(out.r#return(), Some(true));
    let time = described().await.deprecation_time().unwrap().to_string();
    let parsed = aws_sdk_ec2::primitives::DateTime::from_str(
        &time,
        aws_sdk_ec2::primitives::DateTimeFormat::DateTime,
    )
    .unwrap();
    assert_eq!(parsed.secs() % 60, 0, "{time}");
    assert!((parsed.secs() - (now + 3600)).abs() <= 60, "{time}");

    // Once the time passes, the owner still sees it, and launches from it.
    fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(std::time::Duration::from_secs(7200))
    });
    assert!(lists(&ami, ec2.describe_images().owners("self")).await);
    launch(&ec2, &ami).await.unwrap();
    ec2.disable_image_deprecation()
        .image_id(&ami)
        .send()
        .await
        .unwrap();
    assert_eq!(described().await.deprecation_time(), None);
}

#[tokio::test]
async fn a_protected_image_is_not_deregistered_until_its_cooldown_ends() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = own_image(&ec2, "protected", false).await;
    let protection = || async {
        let out = ec2.describe_images().image_ids(&ami).send().await.unwrap();
        out.images()[0]
            .deregistration_protection()
            .unwrap()
            .to_string()
    };
    let deregister = || ec2.deregister_image().image_id(&ami).send();
    assert_eq!(protection().await, "disabled");

    ec2.enable_image_deregistration_protection()
        .image_id(&ami)
        .send()
        .await
        .unwrap();
    assert_eq!(protection().await, "enabled-without-cooldown");
    assert_eq!(code(deregister().await), "OperationNotPermitted");
    ec2.enable_image_deregistration_protection()
        .image_id(&ami)
        .with_cooldown(true)
        .send()
        .await
        .unwrap();
    assert_eq!(protection().await, "enabled-with-cooldown");
    let out = ec2
        .describe_image_attribute()
        .image_id(&ami)
        .attribute(ImageAttributeName::DeregistrationProtection)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.deregistration_protection().and_then(|v| v.value()),
        Some("enabled-with-cooldown")
    );

    // Disabled with the cooldown: still protected for 24 hours.
    ec2.disable_image_deregistration_protection()
        .image_id(&ami)
        .send()
        .await
        .unwrap();
    assert_eq!(code(deregister().await), "OperationNotPermitted");
    fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(std::time::Duration::from_secs(23 * 3600))
    });
    assert_eq!(code(deregister().await), "OperationNotPermitted");
    assert!(lists(&ami, ec2.describe_images().owners("self")).await);
    fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(std::time::Duration::from_secs(3600))
    });
    deregister().await.unwrap();
    assert!(!lists(&ami, ec2.describe_images().owners("self")).await);
}
