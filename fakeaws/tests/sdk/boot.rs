//! Boot modes and AMD SEV-SNP: an image's boot mode parameter (registered, described, kept
//! by CreateImage), the mode each launch boots in by the type's support, the launches and
//! resizes refused, SEV-SNP on the types that have it, and the filters that find all of it.

use aws_sdk_ec2::types::{
    AmdSevSnpSpecification, ArchitectureValues, BootModeValues, CpuOptionsRequest,
    ImageAttributeName, InstanceBootModeValues, InstanceType, LaunchTemplateCpuOptionsRequest,
    LaunchTemplateSpecification, RequestLaunchTemplateData, SupportedAdditionalProcessorFeature,
};

use crate::{
    code_and_message, completed_snapshot, described, empty_fake, filter, image, instance_ids,
    register_from, stop, subnet, vpc,
};

/// An x86 image of the account's registered with boot mode `mode` (or none).
async fn image_booting(
    ec2: &aws_sdk_ec2::Client,
    name: &str,
    mode: Option<BootModeValues>,
) -> String {
    let snap = completed_snapshot(ec2, "us-east-1a", 8, false).await;
    register_from(ec2, name, "/dev/sda1", &snap)
        .architecture(ArchitectureValues::X8664)
        .set_boot_mode(mode)
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap()
}

/// A launch of one `t` from `ami` in `subnet`, with AMD SEV-SNP as `sev`: the instance's id.
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    ami: &str,
    t: InstanceType,
    subnet: &str,
    sev: Option<AmdSevSnpSpecification>,
) -> Result<String, (String, String)> {
    let r = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(t)
        .subnet_id(subnet)
        .set_cpu_options(sev.map(|s| CpuOptionsRequest::builder().amd_sev_snp(s).build()))
        .min_count(1)
        .max_count(1)
        .send()
        .await;
    match r {
        Ok(o) => Ok(o.instances()[0].instance_id().unwrap().to_string()),
        Err(e) => Err(code_and_message(Err::<(), _>(e))),
    }
}

#[tokio::test]
async fn instances_boot_as_their_image_and_type_allow() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.1.0/24", "us-east-1a").await;
    let uefi = image_booting(&ec2, "uefi", Some(BootModeValues::Uefi)).await;
    let legacy = image_booting(&ec2, "legacy", Some(BootModeValues::LegacyBios)).await;
    let either = image_booting(&ec2, "either", Some(BootModeValues::UefiPreferred)).await;
    let unset = image_booting(&ec2, "unset", None).await;

    // The parameter as registered, in DescribeImages and DescribeImageAttribute.
    let d = ec2
        .describe_images()
        .image_ids(&uefi)
        .image_ids(&unset)
        .send()
        .await
        .unwrap();
    for i in d.images() {
        let want = (i.image_id() == Some(uefi.as_str())).then_some(BootModeValues::Uefi);
        assert_eq!(i.boot_mode().cloned(), want);
    }
    let attr = ec2
        .describe_image_attribute()
        .image_id(&either)
        .attribute(ImageAttributeName::BootMode)
        .send()
        .await
        .unwrap();
    assert_eq!(
        attr.boot_mode().and_then(|b| b.value()),
        Some("uefi-preferred")
    );

    // Each launch boots in the mode its image and type decide.
    let cases = [
        (&uefi, InstanceType::M5Large, InstanceBootModeValues::Uefi),
        (
            &legacy,
            InstanceType::M5Large,
            InstanceBootModeValues::LegacyBios,
        ),
        (&either, InstanceType::M5Large, InstanceBootModeValues::Uefi),
        (
            &either,
            InstanceType::T2Micro,
            InstanceBootModeValues::LegacyBios,
        ),
        (
            &either,
            InstanceType::M5Metal,
            InstanceBootModeValues::LegacyBios,
        ),
        (
            &unset,
            InstanceType::T3Medium,
            InstanceBootModeValues::LegacyBios,
        ),
    ];
    let mut launched = Vec::new();
    for (ami, t, want) in cases {
        let id = launch(&ec2, ami, t.clone(), &s, None).await.unwrap();
        let i = described(&ec2, &id).await;
        assert_eq!(i.current_instance_boot_mode(), Some(&want), "{ami} on {t}");
        let image_mode = ec2
            .describe_images()
            .image_ids(ami.as_str())
            .send()
            .await
            .unwrap()
            .images()[0]
            .boot_mode()
            .cloned();
        assert_eq!(i.boot_mode().cloned(), image_mode, "the image's parameter");
        launched.push((id, want));
    }
    // An Arm image without a parameter boots UEFI, the only mode Graviton has.
    let arm = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000001").await;
    let id = launch(&ec2, &arm, InstanceType::M6gLarge, &s, None)
        .await
        .unwrap();
    assert_eq!(
        described(&ec2, &id).await.current_instance_boot_mode(),
        Some(&InstanceBootModeValues::Uefi)
    );

    // A UEFI image on a type without UEFI is refused, in AWS's words; nothing launches.
    let before = instance_ids(&ec2, &[]).await.len();
    let (code, message) = launch(&ec2, &uefi, InstanceType::T2Micro, &s, None)
        .await
        .unwrap_err();
    assert_eq!(code, "InvalidParameterValue");
    assert!(
        message.starts_with(
            "The t2.micro instance type does not support an AMI with a boot mode of UEFI."
        ),
        "{message}"
    );
    assert_eq!(instance_ids(&ec2, &[]).await.len(), before);

    // The filters find each mode.
    let found = |name: &'static str, value: &'static str| {
        let ec2 = ec2.clone();
        async move {
            let mut ids = instance_ids(&ec2, &[(name, value)]).await;
            ids.sort();
            ids
        }
    };
    let mut legacy_ids: Vec<String> = launched
        .iter()
        .filter(|(_, m)| *m == InstanceBootModeValues::LegacyBios)
        .map(|(id, _)| id.clone())
        .collect();
    legacy_ids.sort();
    assert_eq!(
        found("current-instance-boot-mode", "legacy-bios").await,
        legacy_ids
    );
    assert_eq!(found("boot-mode", "uefi-preferred").await.len(), 3);

    // A resize of a stopped UEFI instance to a type without UEFI is refused, the type kept.
    let (uefi_id, _) = &launched[0];
    stop(&fake, &ec2, uefi_id).await;
    let r = ec2
        .modify_instance_attribute()
        .instance_id(uefi_id)
        .instance_type(
            aws_sdk_ec2::types::AttributeValue::builder()
                .value("t2.large")
                .build(),
        )
        .send()
        .await;
    assert_eq!(code_and_message(r).0, "InvalidParameterValue");
    assert_eq!(
        described(&ec2, uefi_id).await.instance_type(),
        Some(&InstanceType::M5Large)
    );

    // An image made of an instance keeps the boot mode of the instance's image.
    let made = ec2
        .create_image()
        .instance_id(uefi_id)
        .name("from-uefi")
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    let d = ec2.describe_images().image_ids(&made).send().await.unwrap();
    assert_eq!(d.images()[0].boot_mode(), Some(&BootModeValues::Uefi));
}

#[tokio::test]
async fn amd_sev_snp_runs_on_the_types_that_have_it_from_uefi_images() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.1.0/24", "us-east-1a").await;
    let uefi = image_booting(&ec2, "uefi", Some(BootModeValues::Uefi)).await;
    let either = image_booting(&ec2, "either", Some(BootModeValues::UefiPreferred)).await;
    let unset = image_booting(&ec2, "unset", None).await;

    // The types with the feature, by DescribeInstanceTypes' filter: the user guide's sixteen.
    let mut with = Vec::new();
    let mut token = None;
    loop {
        let page = ec2
            .describe_instance_types()
            .filters(filter(
                "processor-info.supported-features",
                &["amd-sev-snp"],
            ))
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        for t in page.instance_types() {
            assert_eq!(
                t.processor_info().unwrap().supported_features(),
                [SupportedAdditionalProcessorFeature::AmdSevSnp]
            );
            with.push(t.instance_type().unwrap().as_str().to_string());
        }
        token = page.next_token().map(String::from);
        if token.is_none() {
            break;
        }
    }
    with.sort();
    let mut want: Vec<String> = [
        "c6a.large",
        "c6a.xlarge",
        "c6a.2xlarge",
        "c6a.4xlarge",
        "c6a.8xlarge",
        "c6a.12xlarge",
        "c6a.16xlarge",
        "m6a.large",
        "m6a.xlarge",
        "m6a.2xlarge",
        "m6a.4xlarge",
        "m6a.8xlarge",
        "r6a.large",
        "r6a.xlarge",
        "r6a.2xlarge",
        "r6a.4xlarge",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    want.sort();
    assert_eq!(with, want);
    let m5 = ec2
        .describe_instance_types()
        .instance_types(InstanceType::M5Large)
        .send()
        .await
        .unwrap();
    assert!(
        m5.instance_types()[0]
            .processor_info()
            .unwrap()
            .supported_features()
            .is_empty()
    );

    // Enabled on a type that has it, from UEFI images: shown in the CPU options and found.
    let on = launch(
        &ec2,
        &uefi,
        InstanceType::C6aLarge,
        &s,
        Some(AmdSevSnpSpecification::Enabled),
    )
    .await
    .unwrap();
    let cpu = described(&ec2, &on).await.cpu_options().cloned().unwrap();
    assert_eq!(cpu.amd_sev_snp(), Some(&AmdSevSnpSpecification::Enabled));
    assert_eq!(
        (cpu.core_count(), cpu.threads_per_core()),
        (Some(1), Some(2))
    );
    launch(
        &ec2,
        &either,
        InstanceType::M6a8xlarge,
        &s,
        Some(AmdSevSnpSpecification::Enabled),
    )
    .await
    .unwrap();
    // Disabled, asked, is answered as asked, on any type.
    let off = launch(
        &ec2,
        &unset,
        InstanceType::M5Large,
        &s,
        Some(AmdSevSnpSpecification::Disabled),
    )
    .await
    .unwrap();
    assert_eq!(
        described(&ec2, &off)
            .await
            .cpu_options()
            .and_then(|c| c.amd_sev_snp()),
        Some(&AmdSevSnpSpecification::Disabled)
    );

    // Refused: a type without it (a larger m6a size too), and an image that boots legacy BIOS.
    let before = instance_ids(&ec2, &[]).await.len();
    for (ami, t) in [
        (&uefi, InstanceType::M5Large),
        (&uefi, InstanceType::M6a12xlarge),
        (&unset, InstanceType::C6aLarge),
    ] {
        let (code, message) = launch(
            &ec2,
            ami,
            t.clone(),
            &s,
            Some(AmdSevSnpSpecification::Enabled),
        )
        .await
        .unwrap_err();
        assert_eq!(code, "InvalidParameterValue", "{t}: {message}");
        assert!(message.contains("AMD SEV-SNP"), "{message}");
    }
    assert_eq!(instance_ids(&ec2, &[]).await.len(), before);

    // Kept for life: a stopped instance may not move to a type without it.
    stop(&fake, &ec2, &on).await;
    let r = ec2
        .modify_instance_attribute()
        .instance_id(&on)
        .instance_type(
            aws_sdk_ec2::types::AttributeValue::builder()
                .value("c5.large")
                .build(),
        )
        .send()
        .await;
    assert_eq!(code_and_message(r).0, "InvalidParameterValue");
    ec2.modify_instance_attribute()
        .instance_id(&on)
        .instance_type(
            aws_sdk_ec2::types::AttributeValue::builder()
                .value("c6a.xlarge")
                .build(),
        )
        .send()
        .await
        .unwrap();

    // From a launch template: the template holds it, the launch takes it.
    let lt = ec2
        .create_launch_template()
        .launch_template_name("confidential")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(&uefi)
                .instance_type(InstanceType::R6aLarge)
                .cpu_options(
                    LaunchTemplateCpuOptionsRequest::builder()
                        .amd_sev_snp(AmdSevSnpSpecification::Enabled)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let lt_id = lt.launch_template().unwrap().launch_template_id().unwrap();
    let versions = ec2
        .describe_launch_template_versions()
        .launch_template_id(lt_id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        versions.launch_template_versions()[0]
            .launch_template_data()
            .and_then(|d| d.cpu_options())
            .and_then(|c| c.amd_sev_snp()),
        Some(&AmdSevSnpSpecification::Enabled)
    );
    let from_template = ec2
        .run_instances()
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_id(lt_id)
                .build(),
        )
        .subnet_id(&s)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let id = from_template.instances()[0].instance_id().unwrap();
    assert_eq!(
        described(&ec2, id)
            .await
            .cpu_options()
            .and_then(|c| c.amd_sev_snp()),
        Some(&AmdSevSnpSpecification::Enabled)
    );
}
