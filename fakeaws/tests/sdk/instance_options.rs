//! The options every instance answers (CPU, capacity reservations, hibernation, enclaves,
//! automatic recovery, private DNS names, metadata defaults): AWS's defaults, what a launch or
//! its template asks for, and launches refused for options the type cannot take.

use aws_sdk_ec2::types::{
    ArchitectureValues, AttributeValue, CapacityReservationPreference,
    CapacityReservationSpecification, CapacityReservationTarget, CpuOptionsRequest,
    EnclaveOptionsRequest, HibernationOptionsRequest, HostnameType, HttpTokensState,
    InstanceAutoRecoveryState, InstanceMaintenanceOptionsRequest, InstanceType,
    LaunchTemplateAutoRecoveryState, LaunchTemplateCpuOptionsRequest,
    LaunchTemplateInstanceMaintenanceOptionsRequest, LaunchTemplateSpecification,
    PrivateDnsNameOptionsRequest, RequestLaunchTemplateData,
};

use crate::{
    code, code_and_message, completed_snapshot, described, empty_fake, image, instance_ids,
    register_from, subnet, vpc,
};

const AMI: &str = "capa-ami-ubuntu-24.04-v1.31.0-1727000000";

/// An image of the account's marked for IMDSv2 (`ImdsSupport` `v2.0`): by ModifyImageAttribute
/// after RegisterImage, or by RegisterImage itself (as Packer registers one).
async fn imds_v2_image(ec2: &aws_sdk_ec2::Client, name: &str, at_registration: bool) -> String {
    let snap = completed_snapshot(ec2, "us-east-1a", 8, false).await;
    let id = register_from(ec2, name, "/dev/sda1", &snap)
        .architecture(ArchitectureValues::X8664)
        .set_imds_support(at_registration.then_some(aws_sdk_ec2::types::ImdsSupportValues::V20))
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    if !at_registration {
        ec2.modify_image_attribute()
            .image_id(&id)
            .imds_support(AttributeValue::builder().value("v2.0").build())
            .send()
            .await
            .unwrap();
    }
    let described = ec2.describe_images().image_ids(&id).send().await.unwrap();
    assert_eq!(
        described.images()[0].imds_support(),
        Some(&aws_sdk_ec2::types::ImdsSupportValues::V20)
    );
    id
}

/// The options DescribeInstances answers for one instance.
#[derive(Debug, PartialEq)]
struct Options {
    /// Cores, threads per core.
    cpu: (i32, i32),
    capacity: CapacityReservationPreference,
    hibernation: bool,
    enclave: bool,
    recovery: InstanceAutoRecoveryState,
    /// Hostname type, A record, AAAA record.
    dns: (HostnameType, bool, bool),
}

/// The id of the first instance a launch made.
fn first_id<E: std::fmt::Debug>(
    r: Result<aws_sdk_ec2::operation::run_instances::RunInstancesOutput, E>,
) -> String {
    r.unwrap().instances()[0].instance_id().unwrap().to_string()
}

fn options_of(i: &aws_sdk_ec2::types::Instance) -> Options {
    let cpu = i.cpu_options().unwrap();
    let dns = i.private_dns_name_options().unwrap();
    Options {
        cpu: (cpu.core_count().unwrap(), cpu.threads_per_core().unwrap()),
        capacity: i
            .capacity_reservation_specification()
            .unwrap()
            .capacity_reservation_preference()
            .unwrap()
            .clone(),
        hibernation: i.hibernation_options().unwrap().configured().unwrap(),
        enclave: i.enclave_options().unwrap().enabled().unwrap(),
        recovery: i
            .maintenance_options()
            .unwrap()
            .auto_recovery()
            .unwrap()
            .clone(),
        dns: (
            dns.hostname_type().unwrap().clone(),
            dns.enable_resource_name_dns_a_record().unwrap(),
            dns.enable_resource_name_dns_aaaa_record().unwrap(),
        ),
    }
}

#[tokio::test]
async fn an_instance_answers_awss_defaults() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let launch = |ami: String, t: InstanceType| {
        ec2.run_instances()
            .image_id(ami)
            .instance_type(t)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .send()
    };
    let id = first_id(launch(ami.clone(), InstanceType::M5Xlarge).await);
    let i = described(&ec2, &id).await;
    // m5.xlarge: 4 vCPUs, 2 cores of 2 threads.
    assert_eq!(
        options_of(&i),
        Options {
            cpu: (2, 2),
            capacity: CapacityReservationPreference::Open,
            hibernation: false,
            enclave: false,
            recovery: InstanceAutoRecoveryState::Default,
            dns: (HostnameType::IpName, false, false),
        }
    );
    assert_eq!(i.usage_operation_update_time(), i.launch_time());
    // An image without IMDSv2 support: tokens optional, one hop, as the CLI's documented
    // describe-instances output shows.
    let metadata = i.metadata_options().unwrap();
    assert_eq!(metadata.http_tokens(), Some(&HttpTokensState::Optional));
    assert_eq!(metadata.http_put_response_hop_limit(), Some(1));

    // An image marked `v2.0`: tokens required, two hops.
    let own = imds_v2_image(&ec2, "imds-v2-image", false).await;
    let id = first_id(launch(own, InstanceType::T3Micro).await);
    let i = described(&ec2, &id).await;
    let metadata = i.metadata_options().unwrap();
    assert_eq!(metadata.http_tokens(), Some(&HttpTokensState::Required));
    assert_eq!(metadata.http_put_response_hop_limit(), Some(2));
    // t3.micro: 2 vCPUs, 1 core of 2 threads.
    let cpu = i.cpu_options().unwrap();
    assert_eq!(
        (cpu.core_count(), cpu.threads_per_core()),
        (Some(1), Some(2))
    );

    // A subnet whose launches get resource names passes its options on.
    ec2.modify_subnet_attribute()
        .subnet_id(&s)
        .private_dns_hostname_type_on_launch(HostnameType::ResourceName)
        .send()
        .await
        .unwrap();
    let id = first_id(launch(ami, InstanceType::T3Micro).await);
    let i = described(&ec2, &id).await;
    assert_eq!(
        i.private_dns_name_options().unwrap().hostname_type(),
        Some(&HostnameType::ResourceName)
    );
}

#[tokio::test]
async fn a_launch_or_its_template_sets_the_options() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let run = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::M5Xlarge)
        .subnet_id(&s)
        .min_count(1)
        .max_count(1)
        .cpu_options(
            CpuOptionsRequest::builder()
                .core_count(1)
                .threads_per_core(1)
                .build(),
        )
        .capacity_reservation_specification(
            CapacityReservationSpecification::builder()
                .capacity_reservation_preference(CapacityReservationPreference::None)
                .build(),
        )
        .hibernation_options(
            HibernationOptionsRequest::builder()
                .configured(true)
                .build(),
        )
        .enclave_options(EnclaveOptionsRequest::builder().enabled(true).build())
        .maintenance_options(
            InstanceMaintenanceOptionsRequest::builder()
                .auto_recovery(InstanceAutoRecoveryState::Disabled)
                .build(),
        )
        .private_dns_name_options(
            PrivateDnsNameOptionsRequest::builder()
                .hostname_type(HostnameType::ResourceName)
                .enable_resource_name_dns_a_record(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let i = described(&ec2, run.instances()[0].instance_id().unwrap()).await;
    assert_eq!(
        options_of(&i),
        Options {
            cpu: (1, 1),
            capacity: CapacityReservationPreference::None,
            hibernation: true,
            enclave: true,
            recovery: InstanceAutoRecoveryState::Disabled,
            dns: (HostnameType::ResourceName, true, false),
        }
    );
    // DescribeInstances' filters on the options find what it answers, and only that.
    let configured = run.instances()[0].instance_id().unwrap().to_string();
    let plain = first_id(
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::M5Xlarge)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .send()
            .await,
    );
    for (name, value, want) in [
        ("hibernation-options.configured", "true", &configured),
        ("hibernation-options.configured", "false", &plain),
        ("enclave-options.enabled", "true", &configured),
        ("maintenance-options.auto-recovery", "disabled", &configured),
        ("maintenance-options.auto-recovery", "default", &plain),
        (
            "capacity-reservation-specification.capacity-reservation-preference",
            "none",
            &configured,
        ),
        (
            "capacity-reservation-specification.capacity-reservation-preference",
            "open",
            &plain,
        ),
        (
            "private-dns-name-options.hostname-type",
            "resource-name",
            &configured,
        ),
        ("private-dns-name-options.hostname-type", "ip-name", &plain),
        (
            "private-dns-name-options.enable-resource-name-dns-a-record",
            "true",
            &configured,
        ),
        (
            "private-dns-name-options.enable-resource-name-dns-aaaa-record",
            "false",
            &configured,
        ),
        ("current-instance-boot-mode", "legacy-bios", &configured),
    ] {
        let found = instance_ids(&ec2, &[(name, value)]).await;
        assert!(found.contains(want), "{name}={value}: {found:?}");
        let other = if want == &plain { &configured } else { &plain };
        if name != "private-dns-name-options.enable-resource-name-dns-aaaa-record"
            && name != "current-instance-boot-mode"
        {
            assert!(!found.contains(other), "{name}={value}: {found:?}");
        }
    }

    // A template keeps them and a launch from it takes them; the launch's own win.
    let template = ec2
        .create_launch_template()
        .launch_template_name("options")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(InstanceType::M5Xlarge)
                .cpu_options(
                    LaunchTemplateCpuOptionsRequest::builder()
                        .core_count(2)
                        .threads_per_core(1)
                        .build(),
                )
                .maintenance_options(
                    LaunchTemplateInstanceMaintenanceOptionsRequest::builder()
                        .auto_recovery(LaunchTemplateAutoRecoveryState::Disabled)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let template_id = template
        .launch_template()
        .unwrap()
        .launch_template_id()
        .unwrap()
        .to_string();
    let versions = ec2
        .describe_launch_template_versions()
        .launch_template_id(&template_id)
        .send()
        .await
        .unwrap();
    let data = versions.launch_template_versions()[0]
        .launch_template_data()
        .unwrap();
    assert_eq!(data.cpu_options().unwrap().core_count(), Some(2));
    assert_eq!(
        data.maintenance_options().unwrap().auto_recovery(),
        Some(&LaunchTemplateAutoRecoveryState::Disabled)
    );
    let from_template = |threads: Option<i32>| {
        let mut call = ec2
            .run_instances()
            .launch_template(
                LaunchTemplateSpecification::builder()
                    .launch_template_id(&template_id)
                    .build(),
            )
            .subnet_id(&s)
            .min_count(1)
            .max_count(1);
        if let Some(t) = threads {
            call = call.cpu_options(
                CpuOptionsRequest::builder()
                    .core_count(1)
                    .threads_per_core(t)
                    .build(),
            );
        }
        call.send()
    };
    let i = described(&ec2, &first_id(from_template(None).await)).await;
    let cpu = i.cpu_options().unwrap();
    assert_eq!(
        (cpu.core_count(), cpu.threads_per_core()),
        (Some(2), Some(1))
    );
    assert_eq!(
        i.maintenance_options().unwrap().auto_recovery(),
        Some(&InstanceAutoRecoveryState::Disabled)
    );
    let i = described(
        &ec2,
        from_template(Some(2)).await.unwrap().instances()[0]
            .instance_id()
            .unwrap(),
    )
    .await;
    let cpu = i.cpu_options().unwrap();
    assert_eq!(
        (cpu.core_count(), cpu.threads_per_core()),
        (Some(1), Some(2))
    );
}

#[tokio::test]
async fn options_the_type_cannot_take_launch_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let launch = |cpu: Option<CpuOptionsRequest>,
                  capacity: Option<CapacityReservationSpecification>| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::M5Xlarge)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .set_cpu_options(cpu)
            .set_capacity_reservation_specification(capacity)
            .send()
    };
    let cpu = |cores: i32, threads: i32| {
        Some(
            CpuOptionsRequest::builder()
                .core_count(cores)
                .threads_per_core(threads)
                .build(),
        )
    };
    // m5.xlarge has 2 cores of 2 threads.
    for (cores, threads) in [(3, 1), (0, 1), (1, 3), (1, 0)] {
        let (c, message) = code_and_message(launch(cpu(cores, threads), None).await);
        assert_eq!(c, "InvalidParameterValue", "{cores} {threads}");
        assert!(message.contains("m5.xlarge"), "{message}");
    }
    // No capacity reservation of that id exists to target.
    let target = CapacityReservationSpecification::builder()
        .capacity_reservation_target(
            CapacityReservationTarget::builder()
                .capacity_reservation_id("cr-1234567890abcdef0")
                .build(),
        )
        .build();
    assert_eq!(
        code(launch(None, Some(target)).await),
        "InvalidCapacityReservationId.NotFound"
    );
    assert!(instance_ids(&ec2, &[]).await.is_empty());
}

#[tokio::test]
async fn recovery_and_private_dns_options_change_in_place() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let id = crate::instance(&ec2, &s).await;
    let changed = ec2
        .modify_instance_maintenance_options()
        .instance_id(&id)
        .auto_recovery(InstanceAutoRecoveryState::Disabled)
        .send()
        .await
        .unwrap();
    assert_eq!(changed.instance_id(), Some(id.as_str()));
    assert_eq!(
        changed.auto_recovery(),
        Some(&InstanceAutoRecoveryState::Disabled)
    );
    let done = ec2
        .modify_private_dns_name_options()
        .instance_id(&id)
        .private_dns_hostname_type(HostnameType::ResourceName)
        .enable_resource_name_dns_a_record(true)
        .send()
        .await
        .unwrap();
    assert_eq!(done.r#return(), Some(true));
    let i = described(&ec2, &id).await;
    let o = options_of(&i);
    assert_eq!(o.recovery, InstanceAutoRecoveryState::Disabled);
    assert_eq!(o.dns, (HostnameType::ResourceName, true, false));
    // Only what a call gives changes.
    ec2.modify_private_dns_name_options()
        .instance_id(&id)
        .enable_resource_name_dns_aaaa_record(true)
        .send()
        .await
        .unwrap();
    let o = options_of(&described(&ec2, &id).await);
    assert_eq!(o.dns, (HostnameType::ResourceName, true, true));

    // Not on an unknown or a terminated instance.
    let r = ec2
        .modify_instance_maintenance_options()
        .instance_id("i-1234567890abcdef0")
        .auto_recovery(InstanceAutoRecoveryState::Default)
        .send()
        .await;
    assert_eq!(code(r), "InvalidInstanceID.NotFound");
    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let r = ec2
        .modify_instance_maintenance_options()
        .instance_id(&id)
        .auto_recovery(InstanceAutoRecoveryState::Default)
        .send()
        .await;
    assert_eq!(code(r), "IncorrectInstanceState");
    let r = ec2
        .modify_private_dns_name_options()
        .instance_id(&id)
        .enable_resource_name_dns_a_record(false)
        .send()
        .await;
    assert_eq!(code(r), "IncorrectInstanceState");
}

#[tokio::test]
async fn the_accounts_metadata_defaults_come_between_the_launch_and_the_image() {
    use aws_sdk_ec2::types::{
        DefaultHttpTokensEnforcedState, DefaultInstanceMetadataEndpointState,
        DefaultInstanceMetadataTagsState, InstanceMetadataEndpointState,
        InstanceMetadataOptionsRequest, InstanceMetadataTagsState, ManagedBy,
        MetadataDefaultHttpTokensState,
    };
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &v, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let defaults = || async {
        ec2.get_instance_metadata_defaults()
            .send()
            .await
            .unwrap()
            .account_level()
            .unwrap()
            .clone()
    };
    // None set: the account manages them and has no preference.
    let none = defaults().await;
    assert_eq!(none.managed_by(), Some(&ManagedBy::Account));
    assert_eq!(none.http_tokens(), None);
    assert_eq!(none.http_put_response_hop_limit(), None);

    ec2.modify_instance_metadata_defaults()
        .http_tokens(MetadataDefaultHttpTokensState::Required)
        .http_put_response_hop_limit(3)
        .instance_metadata_tags(DefaultInstanceMetadataTagsState::Enabled)
        .send()
        .await
        .unwrap();
    let set = defaults().await;
    assert_eq!(set.http_tokens(), Some(&HttpTokensState::Required));
    assert_eq!(set.http_put_response_hop_limit(), Some(3));
    assert_eq!(
        set.instance_metadata_tags(),
        Some(&InstanceMetadataTagsState::Enabled)
    );
    assert_eq!(set.http_endpoint(), None);

    let launch = |image: &str, metadata: Option<InstanceMetadataOptionsRequest>| {
        ec2.run_instances()
            .image_id(image)
            .instance_type(InstanceType::T3Micro)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .set_metadata_options(metadata)
            .send()
    };
    let metadata_of = |run: aws_sdk_ec2::operation::run_instances::RunInstancesOutput| {
        let ec2 = ec2.clone();
        async move {
            let i = described(&ec2, run.instances()[0].instance_id().unwrap()).await;
            let m = i.metadata_options().unwrap().clone();
            (
                m.http_tokens().cloned(),
                m.http_put_response_hop_limit(),
                m.http_endpoint().cloned(),
                m.instance_metadata_tags().cloned(),
            )
        }
    };
    // The account's defaults where the launch says nothing (this image has no IMDS mark).
    let plain = metadata_of(launch(&ami, None).await.unwrap()).await;
    assert_eq!(
        plain,
        (
            Some(HttpTokensState::Required),
            Some(3),
            Some(InstanceMetadataEndpointState::Enabled),
            Some(InstanceMetadataTagsState::Enabled)
        )
    );
    // The launch's own options first.
    let asked = InstanceMetadataOptionsRequest::builder()
        .http_tokens(HttpTokensState::Optional)
        .http_put_response_hop_limit(1)
        .build();
    let own = metadata_of(launch(&ami, Some(asked)).await.unwrap()).await;
    assert_eq!(
        (own.0, own.1, own.3),
        (
            Some(HttpTokensState::Optional),
            Some(1),
            Some(InstanceMetadataTagsState::Enabled)
        )
    );

    // Cleared (`no-preference`, `-1`): AWS's own defaults again; set one at a time.
    ec2.modify_instance_metadata_defaults()
        .http_tokens(MetadataDefaultHttpTokensState::NoPreference)
        .http_put_response_hop_limit(-1)
        .send()
        .await
        .unwrap();
    ec2.modify_instance_metadata_defaults()
        .http_endpoint(DefaultInstanceMetadataEndpointState::Disabled)
        .send()
        .await
        .unwrap();
    let cleared = metadata_of(launch(&ami, None).await.unwrap()).await;
    assert_eq!(
        cleared,
        (
            Some(HttpTokensState::Optional),
            Some(1),
            Some(InstanceMetadataEndpointState::Disabled),
            Some(InstanceMetadataTagsState::Enabled)
        )
    );

    // The account's `optional` over an image marked `v2.0` (the API reference's HttpTokens
    // default); the image still gives its two hops.
    let v2 = imds_v2_image(&ec2, "imds-v2-defaults", true).await;
    ec2.modify_instance_metadata_defaults()
        .http_tokens(MetadataDefaultHttpTokensState::Optional)
        .send()
        .await
        .unwrap();
    let from_v2 = metadata_of(launch(&v2, None).await.unwrap()).await;
    assert_eq!(
        (from_v2.0, from_v2.1),
        (Some(HttpTokensState::Optional), Some(2))
    );
    ec2.modify_instance_metadata_defaults()
        .http_tokens(MetadataDefaultHttpTokensState::NoPreference)
        .send()
        .await
        .unwrap();

    // Bad values change nothing.
    for bad in [0, 65, -2] {
        let r = ec2
            .modify_instance_metadata_defaults()
            .http_tokens(MetadataDefaultHttpTokensState::Required)
            .http_put_response_hop_limit(bad)
            .send()
            .await;
        assert_eq!(code(r), "InvalidParameterValue", "{bad}");
    }
    let nothing = ec2.modify_instance_metadata_defaults().send().await;
    assert_eq!(code(nothing), "MissingParameter");
    let enforced = ec2
        .modify_instance_metadata_defaults()
        .http_tokens_enforced(DefaultHttpTokensEnforcedState::Enabled)
        .send()
        .await;
    assert_eq!(code(enforced), "NotImplemented");
    let after = defaults().await;
    assert_eq!(after.http_tokens(), None);
    assert_eq!(
        after.http_endpoint(),
        Some(&InstanceMetadataEndpointState::Disabled)
    );
    // Per region: another region's account defaults are its own.
    let west = fake.ec2_client_in("us-west-2");
    let other = west.get_instance_metadata_defaults().send().await.unwrap();
    assert_eq!(other.account_level().unwrap().http_endpoint(), None);
}

/// The instance `id`'s state reason code.
async fn reason_of(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<String> {
    described(ec2, id)
        .await
        .state_reason()
        .and_then(|r| r.code())
        .map(str::to_string)
}

#[tokio::test]
async fn only_an_instance_configured_for_hibernation_hibernates() {
    use aws_sdk_ec2::types::InstanceStateName;
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let launch = |configured: Option<bool>| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::M5Large)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .set_hibernation_options(
                configured.map(|c| HibernationOptionsRequest::builder().configured(c).build()),
            )
            .send()
    };
    let id_of = |r: aws_sdk_ec2::operation::run_instances::RunInstancesOutput| {
        r.instances()[0].instance_id().unwrap().to_string()
    };
    let sleeper = id_of(launch(Some(true)).await.unwrap());
    let plain = id_of(launch(None).await.unwrap());
    for id in [&sleeper, &plain] {
        crate::wait(&ec2, id, InstanceStateName::Running).await;
    }

    // Asked of both at once, refused for the one launched without it, and neither stops.
    let hibernate = |ids: &[&String]| {
        ec2.stop_instances()
            .set_instance_ids(Some(ids.iter().map(|i| i.to_string()).collect()))
            .hibernate(true)
            .send()
    };
    let (refusal, message) = code_and_message(hibernate(&[&sleeper, &plain]).await);
    assert_eq!(refusal, "UnsupportedHibernationConfiguration");
    assert!(message.contains(&plain), "{message}");
    for id in [&sleeper, &plain] {
        assert_eq!(
            described(&ec2, id).await.state().unwrap().name(),
            Some(&InstanceStateName::Running)
        );
    }

    // The configured one hibernates, and says so once stopped; the other stops as usual,
    // `Hibernate` false being a plain stop; SkipOsShutdown is taken.
    let stopping = hibernate(&[&sleeper]).await.unwrap();
    assert_eq!(
        stopping.stopping_instances()[0]
            .current_state()
            .unwrap()
            .name(),
        Some(&InstanceStateName::Stopping)
    );
    ec2.stop_instances()
        .instance_ids(&plain)
        .hibernate(false)
        .skip_os_shutdown(true)
        .send()
        .await
        .unwrap();
    crate::advance(&fake, 600);
    for id in [&sleeper, &plain] {
        crate::wait(&ec2, id, InstanceStateName::Stopped).await;
    }
    assert_eq!(
        reason_of(&ec2, &sleeper).await.as_deref(),
        Some("Client.UserInitiatedHibernate")
    );
    assert_eq!(
        reason_of(&ec2, &plain).await.as_deref(),
        Some("Client.UserInitiatedShutdown")
    );
    assert_eq!(
        instance_ids(
            &ec2,
            &[("state-reason-code", "Client.UserInitiatedHibernate")]
        )
        .await,
        vec![sleeper.clone()]
    );

    // Started again, it runs with no reason; stopped plainly the next time, it says so.
    ec2.start_instances()
        .instance_ids(&sleeper)
        .send()
        .await
        .unwrap();
    crate::advance(&fake, 600);
    crate::wait(&ec2, &sleeper, InstanceStateName::Running).await;
    assert_eq!(reason_of(&ec2, &sleeper).await, None);
    crate::stop(&fake, &ec2, &sleeper).await;
    assert_eq!(
        reason_of(&ec2, &sleeper).await.as_deref(),
        Some("Client.UserInitiatedShutdown")
    );
}
