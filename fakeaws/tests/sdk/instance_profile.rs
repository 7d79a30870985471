//! IAM instance profile associations through the SDK: the profile an instance launches with,
//! and Associate, Describe, Replace and Disassociate.

use aws_sdk_ec2::types::{
    IamInstanceProfileAssociationState as State, IamInstanceProfileSpecification,
    InstanceStateName, InstanceType,
};
use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, described, empty_fake, filter, image, subnet, vpc, wait};

fn by_name(name: &str) -> IamInstanceProfileSpecification {
    IamInstanceProfileSpecification::builder()
        .name(name)
        .build()
}

/// (association id, instance, profile ARN) of every association DescribeIamInstanceProfile
/// Associations lists with `filters`.
async fn associations(
    ec2: &aws_sdk_ec2::Client,
    filters: &[(&str, &str)],
) -> Vec<(String, String, String)> {
    let mut call = ec2.describe_iam_instance_profile_associations();
    for (name, value) in filters {
        call = call.filters(filter(name, &[value]));
    }
    call.send()
        .await
        .unwrap()
        .iam_instance_profile_associations()
        .iter()
        .map(|a| {
            assert_eq!(a.state(), Some(&State::Associated));
            (
                a.association_id().unwrap().to_string(),
                a.instance_id().unwrap().to_string(),
                a.iam_instance_profile().unwrap().arn().unwrap().to_string(),
            )
        })
        .collect()
}

/// The profile ARN DescribeInstances shows for `id`.
async fn profile_of(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<String> {
    described(ec2, id)
        .await
        .iam_instance_profile()
        .map(|p| p.arn().unwrap().to_string())
}

#[tokio::test]
async fn profiles_are_associated_replaced_and_disassociated() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launch = |profile: Option<&str>| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::T3Medium)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .set_iam_instance_profile(profile.map(by_name))
            .send()
    };
    let with = launch(Some("nodes")).await.unwrap().instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    let without = launch(None).await.unwrap().instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    let nodes = "arn:aws:iam::123456789012:instance-profile/nodes";

    // The launch's profile is an association of its own.
    let listed = associations(&ec2, &[]).await;
    assert_eq!(listed.len(), 1);
    let (first, instance, arn) = listed[0].clone();
    assert!(first.starts_with("iip-assoc-"), "{first}");
    assert_eq!((instance.as_str(), arn.as_str()), (with.as_str(), nodes));

    // One association per instance, in AWS's words.
    wait(&ec2, &with, InstanceStateName::Running).await;
    let (c, message) = code_and_message(
        ec2.associate_iam_instance_profile()
            .instance_id(&with)
            .iam_instance_profile(by_name("other"))
            .send()
            .await,
    );
    assert_eq!(c, "IncorrectState");
    assert_eq!(
        message,
        format!("There is an existing association for instance {with}")
    );

    // Replaced by ARN: a new association, answered while it associates.
    let replaced = ec2
        .replace_iam_instance_profile_association()
        .association_id(&first)
        .iam_instance_profile(
            IamInstanceProfileSpecification::builder()
                .arn("arn:aws:iam::123456789012:instance-profile/control-plane")
                .build(),
        )
        .send()
        .await
        .unwrap()
        .iam_instance_profile_association
        .unwrap();
    assert_eq!(replaced.state(), Some(&State::Associating));
    let second = replaced.association_id().unwrap().to_string();
    assert_ne!(second, first);
    assert_eq!(
        profile_of(&ec2, &with).await.as_deref(),
        Some("arn:aws:iam::123456789012:instance-profile/control-plane")
    );
    assert_eq!(
        code(
            ec2.describe_iam_instance_profile_associations()
                .association_ids(&first)
                .send()
                .await
        ),
        "InvalidAssociationID.NotFound"
    );

    // An instance without one takes one once running (not while pending).
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Instance));
    let pending = launch(None).await.unwrap().instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.associate_iam_instance_profile()
                .instance_id(&pending)
                .iam_instance_profile(by_name("nodes"))
                .send()
                .await
        ),
        "IncorrectInstanceState"
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Instance));
    wait(&ec2, &without, InstanceStateName::Running).await;
    let third = ec2
        .associate_iam_instance_profile()
        .instance_id(&without)
        .iam_instance_profile(by_name("nodes"))
        .send()
        .await
        .unwrap()
        .iam_instance_profile_association
        .unwrap();
    assert_eq!(third.state(), Some(&State::Associating));
    assert_eq!(profile_of(&ec2, &without).await.as_deref(), Some(nodes));
    let third = third.association_id().unwrap().to_string();
    assert_eq!(
        associations(&ec2, &[("instance-id", &without)]).await,
        [(third.clone(), without.clone(), nodes.to_string())]
    );
    assert_eq!(
        associations(&ec2, &[("state", "associated")]).await.len(),
        2
    );
    assert!(
        associations(&ec2, &[("state", "disassociating")])
            .await
            .is_empty()
    );

    // Disassociated: answered disassociating, then gone, and the instance has no profile.
    let out = ec2
        .disassociate_iam_instance_profile()
        .association_id(&second)
        .send()
        .await
        .unwrap()
        .iam_instance_profile_association
        .unwrap();
    assert_eq!(out.state(), Some(&State::Disassociating));
    assert_eq!(profile_of(&ec2, &with).await, None);
    assert_eq!(
        code(
            ec2.disassociate_iam_instance_profile()
                .association_id(&second)
                .send()
                .await
        ),
        "InvalidAssociationID.NotFound"
    );
    // A terminated instance's association ends with it.
    ec2.terminate_instances()
        .instance_ids(&without)
        .send()
        .await
        .unwrap();
    wait(&ec2, &without, InstanceStateName::Terminated).await;
    assert!(associations(&ec2, &[]).await.is_empty());
    // A bad profile ARN is refused and changes nothing.
    assert_eq!(
        code(
            ec2.associate_iam_instance_profile()
                .instance_id(&with)
                .iam_instance_profile(
                    IamInstanceProfileSpecification::builder()
                        .arn("nodes")
                        .build()
                )
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(profile_of(&ec2, &with).await, None);
}
