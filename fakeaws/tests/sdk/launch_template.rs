//! Launch templates through the SDK: versions, the default and the latest, describes and
//! their filters, deletion of versions and templates, and instances launched from a template
//! (what the request leaves out comes from the template; AWS's `aws:ec2launchtemplate:*` tags).

use aws_sdk_ec2::types::{
    HttpTokensState, InstanceType, LaunchTemplateBlockDeviceMappingRequest,
    LaunchTemplateEbsBlockDeviceRequest, LaunchTemplateErrorCode, LaunchTemplateHttpTokensState,
    LaunchTemplateInstanceMetadataOptionsRequest, LaunchTemplateSpecification,
    LaunchTemplateTagSpecificationRequest, RequestLaunchTemplateData, ResourceType, Tag,
    VolumeType,
};

use crate::{code, empty_fake, filter, image, subnet, tag_spec, vpc};

const UBUNTU: &str = "capa-ami-ubuntu-24.04-v1.31.0-1727000000";

/// The data of a node template: image, type, user data, metadata, a root volume, a tag.
fn node_data(image_id: &str, group: Option<&str>) -> RequestLaunchTemplateData {
    RequestLaunchTemplateData::builder()
        .image_id(image_id)
        .instance_type(InstanceType::T3Medium)
        .user_data("I2Nsb3VkLWNvbmZpZwo=")
        .set_security_group_ids(group.map(|g| vec![g.to_string()]))
        .metadata_options(
            LaunchTemplateInstanceMetadataOptionsRequest::builder()
                .http_tokens(LaunchTemplateHttpTokensState::Required)
                .http_put_response_hop_limit(2)
                .build(),
        )
        .block_device_mappings(
            LaunchTemplateBlockDeviceMappingRequest::builder()
                .device_name("/dev/sda1")
                .ebs(
                    LaunchTemplateEbsBlockDeviceRequest::builder()
                        .volume_size(40)
                        .volume_type(VolumeType::Gp3)
                        .build(),
                )
                .build(),
        )
        .tag_specifications(
            LaunchTemplateTagSpecificationRequest::builder()
                .resource_type(ResourceType::Instance)
                .tags(Tag::builder().key("role").value("node").build())
                .build(),
        )
        .build()
}

/// (version number, default?, instance type) of what DescribeLaunchTemplateVersions answers.
async fn versions(
    call: aws_sdk_ec2::operation::describe_launch_template_versions::builders::DescribeLaunchTemplateVersionsFluentBuilder,
) -> Vec<(i64, bool, Option<String>)> {
    call.send()
        .await
        .unwrap()
        .launch_template_versions()
        .iter()
        .map(|v| {
            (
                v.version_number().unwrap(),
                v.default_version().unwrap(),
                v.launch_template_data()
                    .and_then(|d| d.instance_type())
                    .map(|t| t.as_str().to_string()),
            )
        })
        .collect()
}

#[tokio::test]
async fn versions_are_numbered_described_and_deleted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = image(&ec2, UBUNTU).await;
    let created = ec2
        .create_launch_template()
        .launch_template_name("nodes")
        .version_description("first")
        .launch_template_data(node_data(&ami, None))
        .tag_specifications(tag_spec(
            ResourceType::LaunchTemplate,
            &[("team", "platform")],
        ))
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap();
    let id = created.launch_template_id().unwrap().to_string();
    assert!(id.starts_with("lt-"), "{id}");
    assert_eq!(created.default_version_number(), Some(1));
    assert_eq!(created.latest_version_number(), Some(1));
    assert_eq!(created.tags().len(), 1);

    // Version 2 from version 1, with another type; version 3 from nothing.
    let v2 = ec2
        .create_launch_template_version()
        .launch_template_name("nodes")
        .source_version("1")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .instance_type(InstanceType::M5Large)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .launch_template_version
        .unwrap();
    assert_eq!(v2.version_number(), Some(2));
    assert_eq!(v2.default_version(), Some(false));
    let data = v2.launch_template_data().unwrap();
    assert_eq!(data.image_id(), Some(ami.as_str()), "kept from the source");
    assert_eq!(data.instance_type(), Some(&InstanceType::M5Large));
    assert_eq!(
        data.metadata_options().unwrap().http_tokens(),
        Some(&LaunchTemplateHttpTokensState::Required)
    );
    assert_eq!(
        data.block_device_mappings()[0].ebs().unwrap().volume_size(),
        Some(40)
    );
    let v3 = ec2
        .create_launch_template_version()
        .launch_template_id(&id)
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .instance_type(InstanceType::C5Large)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .launch_template_version
        .unwrap();
    assert_eq!(v3.version_number(), Some(3));
    assert_eq!(v3.launch_template_data().unwrap().image_id(), None);

    let by_name = || {
        ec2.describe_launch_template_versions()
            .launch_template_name("nodes")
    };
    let t = |s: &str| Some(s.to_string());
    assert_eq!(
        versions(by_name()).await,
        [
            (3, false, t("c5.large")),
            (2, false, t("m5.large")),
            (1, true, t("t3.medium"))
        ]
    );
    assert_eq!(
        versions(by_name().versions("$Default").versions("$Latest")).await,
        [(3, false, t("c5.large")), (1, true, t("t3.medium"))]
    );
    assert_eq!(versions(by_name().min_version("2")).await.len(), 2);
    assert_eq!(
        versions(by_name().filters(filter("is-default-version", &["true"]))).await,
        [(1, true, t("t3.medium"))]
    );
    assert_eq!(
        versions(by_name().filters(filter("instance-type", &["m5.large"]))).await,
        [(2, false, t("m5.large"))]
    );
    assert_eq!(
        code(by_name().versions("9").send().await),
        "InvalidLaunchTemplateId.VersionNotFound"
    );

    // A second template; $Latest across templates is one version each.
    ec2.create_launch_template()
        .launch_template_name("bastion")
        .launch_template_data(node_data(&ami, None))
        .send()
        .await
        .unwrap();
    let latest = versions(ec2.describe_launch_template_versions().versions("$Latest")).await;
    assert_eq!(latest.len(), 2, "{latest:?}");
    let all = ec2.describe_launch_templates().send().await.unwrap();
    assert_eq!(all.launch_templates().len(), 2);
    let tagged = ec2
        .describe_launch_templates()
        .filters(filter("tag:team", &["platform"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        tagged.launch_templates()[0].launch_template_id(),
        Some(id.as_str())
    );
    let named = ec2
        .describe_launch_templates()
        .filters(filter("launch-template-name", &["bast*"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        named.launch_templates()[0].launch_template_name(),
        Some("bastion")
    );

    // A new default; the default version cannot be deleted, others can, numbers are not reused.
    let modified = ec2
        .modify_launch_template()
        .launch_template_id(&id)
        .default_version("2")
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap();
    assert_eq!(modified.default_version_number(), Some(2));
    assert_eq!(modified.latest_version_number(), Some(3));
    let out = ec2
        .delete_launch_template_versions()
        .launch_template_id(&id)
        .versions("2")
        .versions("3")
        .versions("9")
        .send()
        .await
        .unwrap();
    let deleted: Vec<i64> = out
        .successfully_deleted_launch_template_versions()
        .iter()
        .map(|v| v.version_number().unwrap())
        .collect();
    assert_eq!(deleted, [3]);
    let refused: Vec<(i64, LaunchTemplateErrorCode)> = out
        .unsuccessfully_deleted_launch_template_versions()
        .iter()
        .map(|v| {
            (
                v.version_number().unwrap(),
                v.response_error().unwrap().code().unwrap().clone(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            (2, LaunchTemplateErrorCode::UnexpectedError),
            (
                9,
                LaunchTemplateErrorCode::LaunchTemplateVersionDoesNotExist
            )
        ]
    );
    let next = ec2
        .create_launch_template_version()
        .launch_template_id(&id)
        .source_version("$Default")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .ebs_optimized(true)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .launch_template_version
        .unwrap();
    assert_eq!(next.version_number(), Some(4));
    let data = next.launch_template_data().unwrap();
    assert_eq!(data.instance_type(), Some(&InstanceType::M5Large));
    assert_eq!(data.ebs_optimized(), Some(true));

    let gone = ec2
        .delete_launch_template()
        .launch_template_name("nodes")
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap();
    assert_eq!(gone.launch_template_id(), Some(id.as_str()));
    let by_name = ec2
        .describe_launch_templates()
        .launch_template_names("nodes")
        .send()
        .await;
    assert_eq!(code(by_name), "InvalidLaunchTemplateName.NotFoundException");
    let by_id = ec2
        .describe_launch_templates()
        .launch_template_ids(&id)
        .send()
        .await;
    assert_eq!(code(by_id), "InvalidLaunchTemplateId.NotFound");
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert!(
        tags.tags().is_empty(),
        "a deleted template's tags go with it"
    );
}

#[tokio::test]
async fn instances_launch_from_a_template() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = image(&ec2, UBUNTU).await;
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let group = ec2
        .create_security_group()
        .vpc_id(&vpc_id)
        .group_name("nodes")
        .description("nodes")
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let id = ec2
        .create_launch_template()
        .launch_template_name("nodes")
        .launch_template_data(node_data(&ami, Some(&group)))
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap()
        .launch_template_id
        .unwrap();
    ec2.create_launch_template_version()
        .launch_template_id(&id)
        .source_version("1")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .instance_type(InstanceType::M5Large)
                .build(),
        )
        .send()
        .await
        .unwrap();

    // The default version, with the request's own type and tag on top.
    let launched = ec2
        .run_instances()
        .min_count(1)
        .max_count(1)
        .subnet_id(&s)
        .instance_type(InstanceType::T3Large)
        .tag_specifications(tag_spec(ResourceType::Instance, &[("Name", "node-0")]))
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_name("nodes")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let i = &launched.instances()[0];
    let instance_id = i.instance_id().unwrap().to_string();
    assert_eq!(i.image_id(), Some(ami.as_str()));
    assert_eq!(i.instance_type(), Some(&InstanceType::T3Large));
    let groups: Vec<&str> = i
        .security_groups()
        .iter()
        .map(|g| g.group_id().unwrap())
        .collect();
    assert_eq!(groups, [group.as_str()]);
    assert_eq!(
        i.metadata_options().unwrap().http_tokens(),
        Some(&HttpTokensState::Required)
    );
    let described = ec2
        .describe_instances()
        .instance_ids(&instance_id)
        .send()
        .await
        .unwrap();
    let i = &described.reservations()[0].instances()[0];
    let mut tags: Vec<(&str, &str)> = i
        .tags()
        .iter()
        .map(|t| (t.key().unwrap(), t.value().unwrap()))
        .collect();
    tags.sort();
    assert_eq!(
        tags,
        [
            ("Name", "node-0"),
            ("aws:ec2launchtemplate:id", id.as_str()),
            ("aws:ec2launchtemplate:version", "1"),
            ("role", "node"),
        ]
    );
    let root = ec2
        .describe_volumes()
        .filters(filter("attachment.instance-id", &[&instance_id]))
        .send()
        .await
        .unwrap();
    assert_eq!(root.volumes()[0].size(), Some(40));
    assert_eq!(root.volumes()[0].volume_type(), Some(&VolumeType::Gp3));

    // $Latest, by id.
    let latest = ec2
        .run_instances()
        .min_count(1)
        .max_count(1)
        .subnet_id(&s)
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_id(&id)
                .version("$Latest")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        latest.instances()[0].instance_type(),
        Some(&InstanceType::M5Large)
    );

    let spec = |name: &str, version: &str| {
        LaunchTemplateSpecification::builder()
            .launch_template_name(name)
            .version(version)
            .build()
    };
    let run = |spec| {
        ec2.run_instances()
            .min_count(1)
            .max_count(1)
            .subnet_id(&s)
            .launch_template(spec)
    };
    assert_eq!(
        code(run(spec("nope", "1")).send().await),
        "InvalidLaunchTemplateName.NotFoundException"
    );
    assert_eq!(
        code(run(spec("nodes", "7")).send().await),
        "InvalidLaunchTemplateId.VersionNotFound"
    );
    // A template may name an image that does not exist; the launch cannot.
    ec2.create_launch_template()
        .launch_template_name("stale")
        .launch_template_data(node_data("ami-0123456789abcdef0", None))
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(run(spec("stale", "$Default")).send().await),
        "InvalidAMIID.NotFound"
    );
}

#[tokio::test]
async fn bad_templates_are_refused() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = image(&ec2, UBUNTU).await;
    let create = |name: &str| {
        ec2.create_launch_template()
            .launch_template_name(name)
            .launch_template_data(node_data(&ami, None))
    };
    let first = create("nodes").client_token("t-1").send().await.unwrap();
    let again = create("nodes").client_token("t-1").send().await.unwrap();
    assert_eq!(
        first.launch_template().unwrap().launch_template_id(),
        again.launch_template().unwrap().launch_template_id()
    );
    assert_eq!(
        code(create("nodes").send().await),
        "InvalidLaunchTemplateName.AlreadyExistsException"
    );
    assert_eq!(
        code(create("no spaces").send().await),
        "InvalidLaunchTemplateName.MalformedException"
    );
    // A member RunInstances could not launch with (license configurations) is refused.
    let licensed = ec2
        .create_launch_template()
        .launch_template_name("licensed")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .license_specifications(
                    aws_sdk_ec2::types::LaunchTemplateLicenseConfigurationRequest::builder()
                        .license_configuration_arn(
                            "arn:aws:license-manager:us-east-1:123456789012:license-configuration:lic-1",
                        )
                        .build(),
                )
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(licensed), "NotImplemented");
    let id = first
        .launch_template()
        .unwrap()
        .launch_template_id()
        .unwrap();
    let both = ec2
        .describe_launch_template_versions()
        .launch_template_id(id)
        .launch_template_name("nodes")
        .send()
        .await;
    assert_eq!(code(both), "InvalidParameterCombination");
    let neither = ec2
        .modify_launch_template()
        .default_version("1")
        .send()
        .await;
    assert_eq!(code(neither), "MissingParameter");
    let numbers_across = ec2
        .describe_launch_template_versions()
        .versions("1")
        .send()
        .await;
    assert_eq!(code(numbers_across), "InvalidParameterValue");
    let templates = ec2.describe_launch_templates().send().await.unwrap();
    assert_eq!(
        templates.launch_templates().len(),
        1,
        "nothing else was made"
    );
}

#[tokio::test]
async fn a_template_can_launch_spot_instances() {
    use aws_sdk_ec2::types::{
        InstanceLifecycleType, LaunchTemplateInstanceMarketOptionsRequest,
        LaunchTemplateSpotMarketOptionsRequest, MarketType,
    };
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let ami = image(&ec2, UBUNTU).await;
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let data = RequestLaunchTemplateData::builder()
        .image_id(&ami)
        .instance_type(InstanceType::M5Large)
        .instance_market_options(
            LaunchTemplateInstanceMarketOptionsRequest::builder()
                .market_type(MarketType::Spot)
                .spot_options(
                    LaunchTemplateSpotMarketOptionsRequest::builder()
                        .max_price("0.1")
                        .build(),
                )
                .build(),
        )
        .build();
    let version = ec2
        .create_launch_template()
        .launch_template_name("spot-workers")
        .launch_template_data(data)
        .send()
        .await
        .unwrap();
    assert!(version.launch_template().is_some());
    let described = ec2
        .describe_launch_template_versions()
        .launch_template_name("spot-workers")
        .send()
        .await
        .unwrap();
    let market = described.launch_template_versions()[0]
        .launch_template_data()
        .unwrap()
        .instance_market_options()
        .unwrap();
    assert_eq!(market.market_type(), Some(&MarketType::Spot));
    assert_eq!(market.spot_options().unwrap().max_price(), Some("0.1"));
    let launched = ec2
        .run_instances()
        .min_count(1)
        .max_count(1)
        .subnet_id(&s)
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_name("spot-workers")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let i = &launched.instances()[0];
    assert_eq!(i.instance_lifecycle(), Some(&InstanceLifecycleType::Spot));
    let request = ec2
        .describe_spot_instance_requests()
        .spot_instance_request_ids(i.spot_instance_request_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        request.spot_instance_requests()[0].spot_price(),
        Some("0.1")
    );
}
