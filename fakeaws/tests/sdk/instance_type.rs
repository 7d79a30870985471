//! DescribeInstanceTypes and DescribeInstanceTypeOfferings through the SDK.

use aws_sdk_ec2::types::{
    ArchitectureType, BootModeType, InstanceType, InstanceTypeHypervisor, InstanceTypeInfo,
    LocationType,
};

use crate::{code, empty_fake, filter};

async fn one_type(ec2: &aws_sdk_ec2::Client, t: InstanceType) -> InstanceTypeInfo {
    let out = ec2
        .describe_instance_types()
        .instance_types(t)
        .send()
        .await
        .unwrap();
    assert_eq!(out.instance_types().len(), 1);
    out.instance_types()[0].clone()
}

/// (vCPUs, cores, threads per core, memory MiB) of `info`.
fn sizing(info: &InstanceTypeInfo) -> (i32, i32, i32, i64) {
    let v = info.v_cpu_info().unwrap();
    (
        v.default_v_cpus().unwrap(),
        v.default_cores().unwrap(),
        v.default_threads_per_core().unwrap(),
        info.memory_info().unwrap().size_in_mib().unwrap(),
    )
}

/// The names of every type DescribeInstanceTypes lists with `filters`, through the paginator.
async fn names(ec2: &aws_sdk_ec2::Client, filters: &[(&str, &str)]) -> Vec<String> {
    let mut call = ec2.describe_instance_types().max_results(100);
    for (name, value) in filters {
        call = call.filters(filter(name, &[value]));
    }
    let pages: Vec<_> = call.into_paginator().send().collect().await;
    pages
        .into_iter()
        .flat_map(|p| p.unwrap().instance_types().to_vec())
        .map(|t| t.instance_type().unwrap().as_str().to_string())
        .collect()
}

#[tokio::test]
async fn types_are_described_as_their_family_and_size_make_them() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let expected = [
        (InstanceType::T2Micro, (1, 1, 1, 1024)),
        (InstanceType::T3Micro, (2, 1, 2, 1024)),
        (InstanceType::T4gMedium, (2, 2, 1, 4096)),
        (InstanceType::M5Large, (2, 1, 2, 8192)),
        (InstanceType::M6gMedium, (1, 1, 1, 4096)),
        (InstanceType::C7aXlarge, (4, 4, 1, 8192)),
        (InstanceType::R6i2xlarge, (8, 4, 2, 65536)),
        (InstanceType::C524xlarge, (96, 48, 2, 196_608)),
        (InstanceType::M5Metal, (96, 48, 2, 393_216)),
        (InstanceType::R7iMetal24xl, (96, 48, 2, 786_432)),
    ];
    for (t, sized) in expected {
        let info = one_type(&ec2, t.clone()).await;
        assert_eq!(sizing(&info), sized, "{t:?}");
        assert_eq!(info.current_generation(), Some(true));
        assert_eq!(info.supported_in_region(), Some(true));
    }

    let t3 = one_type(&ec2, InstanceType::T3Micro).await;
    assert_eq!(t3.burstable_performance_supported(), Some(true));
    assert_eq!(t3.hypervisor(), Some(&InstanceTypeHypervisor::Nitro));
    assert_eq!(
        t3.processor_info().unwrap().supported_architectures(),
        [ArchitectureType::X8664]
    );
    assert_eq!(t3.processor_info().unwrap().manufacturer(), Some("Intel"));
    // The interface limits AttachNetworkInterface enforces.
    let net = t3.network_info().unwrap();
    assert_eq!(
        (
            net.maximum_network_interfaces(),
            net.ipv4_addresses_per_interface()
        ),
        (Some(2), Some(2))
    );
    let graviton = one_type(&ec2, InstanceType::M7gLarge).await;
    assert_eq!(
        graviton.processor_info().unwrap().supported_architectures(),
        [ArchitectureType::Arm64]
    );
    assert_eq!(graviton.supported_boot_modes(), [BootModeType::Uefi]);
    assert_eq!(graviton.burstable_performance_supported(), Some(false));
    let t2 = one_type(&ec2, InstanceType::T2Micro).await;
    assert_eq!(t2.hypervisor(), Some(&InstanceTypeHypervisor::Xen));
    assert_eq!(
        t2.processor_info().unwrap().supported_architectures(),
        [ArchitectureType::I386, ArchitectureType::X8664]
    );
    let metal = one_type(&ec2, InstanceType::M5Metal).await;
    assert_eq!(metal.bare_metal(), Some(true));
    assert_eq!(metal.hypervisor(), None);

    // Names that are no instance type are refused together, in AWS's words.
    let raw = ec2
        .describe_instance_types()
        .instance_types(InstanceType::from("m5.enormous"))
        .instance_types(InstanceType::T3Micro)
        .instance_types(InstanceType::from("t3.colossal"))
        .send()
        .await;
    let (c, message) = crate::code_and_message(raw);
    assert_eq!(c, "InvalidInstanceType");
    assert_eq!(
        message,
        "The following supplied instance types do not exist: [m5.enormous, t3.colossal]"
    );
    // A type of the model the catalogue does not describe is refused, not made up.
    assert_eq!(
        code(
            ec2.describe_instance_types()
                .instance_types(InstanceType::P4d24xlarge)
                .send()
                .await
        ),
        "NotImplemented"
    );
}

#[tokio::test]
async fn the_catalogue_pages_filters_and_offerings() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let all = names(&ec2, &[]).await;
    assert!(all.len() > 200, "{}", all.len());
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, all, "in name order, each once");
    for t in [
        "t3.nano",
        "m5.large",
        "c6g.16xlarge",
        "r7a.metal-48xl",
        "t2.2xlarge",
    ] {
        assert!(all.iter().any(|a| a == t), "{t}");
    }

    let arm = names(&ec2, &[("processor-info.supported-architecture", "arm64")]).await;
    assert!(!arm.is_empty());
    assert!(
        arm.iter()
            .all(|t| t.starts_with("t4g") || t.split('.').next().unwrap().ends_with('g')),
        "{arm:?}"
    );
    let burstable = names(&ec2, &[("burstable-performance-supported", "true")]).await;
    assert!(
        burstable.iter().all(|t| t.starts_with('t')),
        "{burstable:?}"
    );
    assert_eq!(burstable.len(), 28);
    let two_by_eight = names(
        &ec2,
        &[
            ("vcpu-info.default-vcpus", "2"),
            ("memory-info.size-in-mib", "8192"),
            ("current-generation", "true"),
        ],
    )
    .await;
    for t in ["m5.large", "m7g.large", "t3.large", "t2.large"] {
        assert!(two_by_eight.iter().any(|a| a == t), "{t}: {two_by_eight:?}");
    }
    assert!(!two_by_eight.iter().any(|a| a == "c5.large"));
    // Figures the catalogue does not hold match nothing.
    assert!(
        names(
            &ec2,
            &[("network-info.network-performance", "Up to 5 Gigabit")]
        )
        .await
        .is_empty()
    );
    assert_eq!(
        code(
            ec2.describe_instance_types()
                .filters(filter("colour", &["red"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );

    // Offerings: each type in the region, or in each zone.
    let in_region = ec2
        .describe_instance_type_offerings()
        .into_paginator()
        .send()
        .collect::<Vec<_>>()
        .await;
    let offered: Vec<String> = in_region
        .into_iter()
        .flat_map(|p| p.unwrap().instance_type_offerings().to_vec())
        .map(|o| {
            assert_eq!(o.location(), Some("us-east-1"));
            assert_eq!(o.location_type(), Some(&LocationType::Region));
            o.instance_type().unwrap().as_str().to_string()
        })
        .collect();
    assert_eq!(offered, all);
    let zonal = ec2
        .describe_instance_type_offerings()
        .location_type(LocationType::AvailabilityZone)
        .filters(filter("instance-type", &["t3.micro"]))
        .send()
        .await
        .unwrap();
    let zones: Vec<&str> = zonal
        .instance_type_offerings()
        .iter()
        .map(|o| o.location().unwrap())
        .collect();
    assert!(
        zones.contains(&"us-east-1a") && zones.len() >= 3,
        "{zones:?}"
    );
    let one = ec2
        .describe_instance_type_offerings()
        .location_type(LocationType::AvailabilityZoneId)
        .filters(filter("location", &["use1-az1"]))
        .filters(filter("instance-type", &["m5.large"]))
        .send()
        .await
        .unwrap();
    assert_eq!(one.instance_type_offerings().len(), 1);
}

#[tokio::test]
async fn threads_placement_strategies_hosts_recovery_and_free_tier_follow_the_guides_rules() {
    use aws_sdk_ec2::types::PlacementGroupStrategy as S;

    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    /// A type, its valid threads per core, placement strategies, Dedicated Hosts and free tier.
    type Expected = (InstanceType, &'static [i32], &'static [S], bool, bool);
    let expected: [Expected; 4] = [
        // The CLI's documented output for t2.micro.
        (
            InstanceType::T2Micro,
            &[1],
            &[S::Partition, S::Spread],
            false,
            true,
        ),
        (
            InstanceType::T3Micro,
            &[1, 2],
            &[S::Partition, S::Spread],
            true,
            true,
        ),
        (
            InstanceType::M5Large,
            &[1, 2],
            &[S::Cluster, S::Partition, S::Spread],
            true,
            false,
        ),
        (
            InstanceType::C7gXlarge,
            &[1],
            &[S::Cluster, S::Partition, S::Spread],
            true,
            false,
        ),
    ];
    for (t, threads, strategies, hosts, free) in expected {
        let info = one_type(&ec2, t.clone()).await;
        let v = info.v_cpu_info().unwrap();
        assert_eq!(v.valid_threads_per_core(), threads, "{t}");
        assert!(v.valid_cores().is_empty(), "{t}: not held by the catalogue");
        assert_eq!(
            info.placement_group_info().unwrap().supported_strategies(),
            strategies,
            "{t}"
        );
        assert_eq!(info.dedicated_hosts_supported(), Some(hosts), "{t}");
        assert_eq!(info.auto_recovery_supported(), Some(true), "{t}");
        assert_eq!(info.free_tier_eligible(), Some(free), "{t}");
    }

    // The same through filters.
    assert_eq!(
        names(&ec2, &[("free-tier-eligible", "true")]).await,
        ["t2.micro", "t3.micro"]
    );
    let no_hosts = names(&ec2, &[("dedicated-hosts-supported", "false")]).await;
    assert!(!no_hosts.is_empty());
    // Of the burstable families only T3 runs on Dedicated Hosts.
    assert!(
        no_hosts
            .iter()
            .all(|n| ["t2.", "t3a.", "t4g."].iter().any(|f| n.starts_with(f))),
        "{no_hosts:?}"
    );
    assert!(
        no_hosts.contains(&"t4g.micro".to_string()) && !no_hosts.contains(&"t3.micro".to_string())
    );
    let two_threads = names(&ec2, &[("vcpu-info.valid-threads-per-core", "2")]).await;
    assert!(two_threads.contains(&"m5.large".to_string()));
    assert!(!two_threads.contains(&"c7g.xlarge".to_string()));
    assert!(
        names(&ec2, &[("auto-recovery-supported", "false")])
            .await
            .is_empty()
    );
}

/// us-east-1's constrained zone (`use1-az3`, `us-east-1e` here) offers the older, Xen-based
/// types only: DescribeInstanceTypeOfferings lists only those there, and a launch of another
/// type there is `Unsupported` in AWS's words, naming the zones that offer it, and makes
/// nothing; the same type launches in the other zones, and `t2` there.
#[tokio::test]
async fn a_constrained_zone_offers_the_older_types_only() {
    // With the default VPC, for launches that name no subnet.
    let fake = fakeaws::spawn().await.unwrap();
    let ec2 = fake.ec2_client();
    let offered = |location_type: LocationType, location: &'static str| {
        let ec2 = ec2.clone();
        async move {
            let mut types: Vec<String> = Vec::new();
            let mut pages = ec2
                .describe_instance_type_offerings()
                .location_type(location_type)
                .filters(filter("location", &[location]))
                .into_paginator()
                .send();
            while let Some(page) = pages.next().await {
                for o in page.unwrap().instance_type_offerings() {
                    types.push(o.instance_type().unwrap().as_str().to_string());
                }
            }
            types
        }
    };
    let constrained = offered(LocationType::AvailabilityZone, "us-east-1e").await;
    assert!(!constrained.is_empty());
    assert!(
        constrained.iter().all(|t| t.starts_with("t2.")),
        "{constrained:?}"
    );
    assert_eq!(
        offered(LocationType::AvailabilityZoneId, "use1-az3").await,
        constrained
    );
    let open = offered(LocationType::AvailabilityZone, "us-east-1d").await;
    assert!(open.contains(&"t3.micro".to_string()) && open.len() > constrained.len());
    let regional = offered(LocationType::Region, "us-east-1").await;
    assert_eq!(regional.len(), open.len());

    let vpc = crate::vpc(&ec2, "10.0.0.0/16").await;
    let in_e = crate::subnet(&ec2, &vpc, "10.0.1.0/24", "us-east-1e").await;
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launch = |t: InstanceType, subnet: Option<&str>, zone: Option<&str>| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(t)
            .set_subnet_id(subnet.map(String::from))
            .set_placement(zone.map(|z| {
                aws_sdk_ec2::types::Placement::builder()
                    .availability_zone(z)
                    .build()
            }))
            .min_count(1)
            .max_count(1)
    };
    let (code, message) = crate::code_and_message(
        launch(InstanceType::T3Micro, Some(&in_e), None)
            .send()
            .await,
    );
    assert_eq!(code, "Unsupported");
    assert_eq!(
        message,
        "Your requested instance type (t3.micro) is not supported in your requested \
         Availability Zone (us-east-1e). Please retry your request by not specifying an \
         Availability Zone or choosing us-east-1a, us-east-1b, us-east-1c, us-east-1d, \
         us-east-1f."
    );
    // The default VPC's subnet there, by placement alone: the same.
    assert_eq!(
        crate::code(
            launch(InstanceType::M5Large, None, Some("us-east-1e"))
                .send()
                .await
        ),
        "Unsupported"
    );
    assert!(crate::instance_ids(&ec2, &[]).await.is_empty());
    // A Xen-based type launches there; the refused one anywhere else, and with no zone named.
    launch(InstanceType::T2Micro, Some(&in_e), None)
        .send()
        .await
        .unwrap();
    launch(InstanceType::T3Micro, None, Some("us-east-1d"))
        .send()
        .await
        .unwrap();
    let anywhere = launch(InstanceType::T3Micro, None, None)
        .send()
        .await
        .unwrap();
    assert_ne!(
        anywhere.instances()[0]
            .placement()
            .and_then(|p| p.availability_zone()),
        Some("us-east-1e")
    );
    assert_eq!(crate::instance_ids(&ec2, &[]).await.len(), 3);
}
