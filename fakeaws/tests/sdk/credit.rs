//! CPU credits of burstable instances through the SDK: the option an instance launches with,
//! DescribeInstanceCreditSpecifications, ModifyInstanceCreditSpecification and the account's
//! defaults per family.

use aws_sdk_ec2::types::{
    AttributeValue, CreditSpecificationRequest, InstanceCreditSpecificationRequest,
    InstanceStateName, InstanceType, UnlimitedSupportedInstanceFamily,
    UnsuccessfulInstanceCreditSpecificationErrorCode as ItemCode,
};

use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, empty_fake, image, subnet, vpc, wait};

/// Launches one instance of `t` in `subnet_id`, with `credits` when given.
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    subnet_id: &str,
    t: InstanceType,
    credits: Option<&str>,
) -> Result<String, String> {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let mut call = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(t)
        .subnet_id(subnet_id)
        .min_count(1)
        .max_count(1);
    if let Some(c) = credits {
        call =
            call.credit_specification(CreditSpecificationRequest::builder().cpu_credits(c).build());
    }
    match call.send().await {
        Ok(r) => Ok(r.instances()[0].instance_id().unwrap().to_string()),
        Err(e) => Err(code_and_message(Err::<(), _>(e)).1),
    }
}

/// The credit options DescribeInstanceCreditSpecifications answers for `ids` (all the
/// account's `unlimited` instances when `ids` is empty), sorted by instance.
async fn credits(ec2: &aws_sdk_ec2::Client, ids: &[&str]) -> Vec<(String, String)> {
    let mut call = ec2.describe_instance_credit_specifications();
    for id in ids {
        call = call.instance_ids(*id);
    }
    let mut out: Vec<(String, String)> = call
        .send()
        .await
        .unwrap()
        .instance_credit_specifications()
        .iter()
        .map(|c| {
            (
                c.instance_id().unwrap().to_string(),
                c.cpu_credits().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn pair(id: &str, option: &str) -> (String, String) {
    (id.to_string(), option.to_string())
}

#[tokio::test]
async fn burstable_instances_launch_with_their_familys_credit_option() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.0.0/24", "us-east-1a").await;
    let t3 = launch(&ec2, &s, InstanceType::T3Medium, None)
        .await
        .unwrap();
    let t2 = launch(&ec2, &s, InstanceType::T2Micro, None).await.unwrap();
    let t3_standard = launch(&ec2, &s, InstanceType::T3Small, Some("standard"))
        .await
        .unwrap();
    let m5 = launch(&ec2, &s, InstanceType::M5Large, None).await.unwrap();

    // By id: each its own option; a type outside the burstable families `standard`.
    assert_eq!(credits(&ec2, &[&t3, &t2, &t3_standard, &m5]).await, {
        let mut v = vec![
            pair(&t3, "unlimited"),
            pair(&t2, "standard"),
            pair(&t3_standard, "standard"),
            pair(&m5, "standard"),
        ];
        v.sort();
        v
    });
    // Without ids: the unlimited ones only.
    assert_eq!(credits(&ec2, &[]).await, [pair(&t3, "unlimited")]);
    // The instance-id filter narrows that list.
    let filtered = ec2
        .describe_instance_credit_specifications()
        .filters(crate::filter("instance-id", &[&t2]))
        .send()
        .await
        .unwrap();
    assert!(filtered.instance_credit_specifications().is_empty());

    // A type outside the burstable families takes no credit option, in AWS's words; nor is
    // an option other than standard or unlimited taken. Neither launches anything.
    let before = crate::instance_ids(&ec2, &[]).await.len();
    assert_eq!(
        launch(&ec2, &s, InstanceType::M5Large, Some("standard")).await,
        Err("The m5.large instance type does not support T2 Unlimited.".to_string())
    );
    assert!(
        launch(&ec2, &s, InstanceType::T3Micro, Some("turbo"))
            .await
            .is_err()
    );
    assert_eq!(crate::instance_ids(&ec2, &[]).await.len(), before);

    // Ids and MaxResults do not go together; an unknown id is an error.
    assert_eq!(
        code(
            ec2.describe_instance_credit_specifications()
                .instance_ids(&t3)
                .max_results(5)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            ec2.describe_instance_credit_specifications()
                .instance_ids("i-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidInstanceID.NotFound"
    );
}

#[tokio::test]
async fn credit_options_are_modified_per_instance_and_per_family() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.0.0/24", "us-east-1a").await;
    let t3 = launch(&ec2, &s, InstanceType::T3Medium, None)
        .await
        .unwrap();
    let m5 = launch(&ec2, &s, InstanceType::M5Large, None).await.unwrap();
    wait(&ec2, &t3, InstanceStateName::Running).await;
    wait(&ec2, &m5, InstanceStateName::Running).await;
    // A third held at pending.
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Instance));
    let pending_now = launch(&ec2, &s, InstanceType::T3Micro, None).await.unwrap();
    let item = |id: &str, c: &str| {
        InstanceCreditSpecificationRequest::builder()
            .instance_id(id)
            .cpu_credits(c)
            .build()
    };
    let out = ec2
        .modify_instance_credit_specification()
        .instance_credit_specifications(item(&t3, "standard"))
        .instance_credit_specifications(item(&m5, "unlimited"))
        .instance_credit_specifications(item(&pending_now, "standard"))
        .instance_credit_specifications(item("i-0123456789abcdef0", "standard"))
        .instance_credit_specifications(item("instance-1", "standard"))
        .send()
        .await
        .unwrap();
    let ok: Vec<&str> = out
        .successful_instance_credit_specifications()
        .iter()
        .map(|s| s.instance_id().unwrap())
        .collect();
    assert_eq!(ok, [t3.as_str()]);
    let failed: Vec<(&str, &ItemCode)> = out
        .unsuccessful_instance_credit_specifications()
        .iter()
        .map(|u| (u.instance_id().unwrap(), u.error().unwrap().code().unwrap()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                m5.as_str(),
                &ItemCode::InstanceCreditSpecificationNotSupported
            ),
            (pending_now.as_str(), &ItemCode::IncorrectInstanceState),
            ("i-0123456789abcdef0", &ItemCode::InstanceNotFound),
            ("instance-1", &ItemCode::InvalidInstanceId),
        ]
    );
    assert_eq!(credits(&ec2, &[&t3, &m5, &pending_now]).await, {
        let mut v = vec![
            pair(&t3, "standard"),
            pair(&m5, "standard"),
            pair(&pending_now, "unlimited"),
        ];
        v.sort();
        v
    });
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Instance));

    // A t3 made unlimited keeps its option when resized to m5, and is still listed.
    ec2.modify_instance_credit_specification()
        .instance_credit_specifications(item(&t3, "unlimited"))
        .send()
        .await
        .unwrap();
    ec2.stop_instances().instance_ids(&t3).send().await.unwrap();
    wait(&ec2, &t3, InstanceStateName::Stopped).await;
    ec2.modify_instance_attribute()
        .instance_id(&t3)
        .instance_type(AttributeValue::builder().value("m5.large").build())
        .send()
        .await
        .unwrap();
    assert!(credits(&ec2, &[]).await.contains(&pair(&t3, "unlimited")));

    // The account's default per family: t2 standard, t3 unlimited, until changed.
    let default_of = |family: UnlimitedSupportedInstanceFamily| {
        let ec2 = ec2.clone();
        async move {
            ec2.get_default_credit_specification()
                .instance_family(family)
                .send()
                .await
                .unwrap()
                .instance_family_credit_specification()
                .unwrap()
                .cpu_credits()
                .unwrap()
                .to_string()
        }
    };
    assert_eq!(
        default_of(UnlimitedSupportedInstanceFamily::T2).await,
        "standard"
    );
    assert_eq!(
        default_of(UnlimitedSupportedInstanceFamily::T3).await,
        "unlimited"
    );
    let out = ec2
        .modify_default_credit_specification()
        .instance_family(UnlimitedSupportedInstanceFamily::T3)
        .cpu_credits("standard")
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.instance_family_credit_specification()
            .unwrap()
            .cpu_credits(),
        Some("standard")
    );
    assert_eq!(
        default_of(UnlimitedSupportedInstanceFamily::T3).await,
        "standard"
    );
    let after = launch(&ec2, &s, InstanceType::T3Large, None).await.unwrap();
    assert_eq!(credits(&ec2, &[&after]).await, [pair(&after, "standard")]);
    assert_eq!(
        code(
            ec2.modify_default_credit_specification()
                .instance_family(UnlimitedSupportedInstanceFamily::T3)
                .cpu_credits("boundless")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        default_of(UnlimitedSupportedInstanceFamily::T3).await,
        "standard"
    );
}

/// Launches one instance from the launch template `template` in `subnet_id`, with `credits`
/// when given.
async fn from_template(
    ec2: &aws_sdk_ec2::Client,
    template: &str,
    subnet_id: &str,
    credits: Option<&str>,
) -> String {
    let mut call = ec2
        .run_instances()
        .launch_template(
            aws_sdk_ec2::types::LaunchTemplateSpecification::builder()
                .launch_template_id(template)
                .build(),
        )
        .subnet_id(subnet_id)
        .min_count(1)
        .max_count(1);
    if let Some(c) = credits {
        call =
            call.credit_specification(CreditSpecificationRequest::builder().cpu_credits(c).build());
    }
    let run = call.send().await.unwrap();
    run.instances()[0].instance_id().unwrap().to_string()
}

#[tokio::test]
async fn a_launch_templates_credit_option_applies_to_its_instances() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let template = ec2
        .create_launch_template()
        .launch_template_name("burst")
        .launch_template_data(
            aws_sdk_ec2::types::RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(InstanceType::T3Medium)
                .credit_specification(
                    CreditSpecificationRequest::builder()
                        .cpu_credits("standard")
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap()
        .launch_template_id
        .unwrap();
    let versions = ec2
        .describe_launch_template_versions()
        .launch_template_id(&template)
        .send()
        .await
        .unwrap();
    let data = versions.launch_template_versions()[0]
        .launch_template_data()
        .unwrap();
    assert_eq!(
        data.credit_specification().unwrap().cpu_credits(),
        Some("standard")
    );
    let id = from_template(&ec2, &template, &s, None).await;
    assert_eq!(credits(&ec2, &[&id]).await, [pair(&id, "standard")]);
    // The request's own option wins over the template's.
    let id = from_template(&ec2, &template, &s, Some("unlimited")).await;
    assert_eq!(credits(&ec2, &[&id]).await, [pair(&id, "unlimited")]);
}
