//! A launch template version's data: taken from the request (the members RunInstances can
//! launch with; any other is `NotImplemented` naming it), kept as AWS answers it, laid over
//! a source version, and merged into a RunInstances request (the request's own members win).

use crate::generated::ec2::{
    BlockDeviceMapping, CapacityReservationSpecification, CapacityReservationTarget,
    CapacityReservationTargetResponse, ConnectionTrackingSpecification,
    ConnectionTrackingSpecificationRequest, CpuOptionsRequest, CreditSpecification,
    CreditSpecificationRequest, EbsBlockDevice, EnclaveOptionsRequest, HibernationOptionsRequest,
    HttpTokensState, IamInstanceProfileSpecification, InstanceAutoRecoveryState,
    InstanceIpv6Address, InstanceMaintenanceOptionsRequest, InstanceMarketOptionsRequest,
    InstanceMetadataEndpointState, InstanceMetadataOptionsRequest, InstanceMetadataProtocolState,
    InstanceMetadataTagsState, InstanceNetworkInterfaceSpecification,
    Ipv4PrefixSpecificationRequest, Ipv4PrefixSpecificationResponse,
    Ipv6PrefixSpecificationRequest, Ipv6PrefixSpecificationResponse,
    LaunchTemplateBlockDeviceMapping, LaunchTemplateCapacityReservationSpecificationResponse,
    LaunchTemplateCpuOptions, LaunchTemplateEbsBlockDevice, LaunchTemplateEnclaveOptions,
    LaunchTemplateHibernationOptions, LaunchTemplateIamInstanceProfileSpecification,
    LaunchTemplateInstanceMaintenanceOptions, LaunchTemplateInstanceMarketOptions,
    LaunchTemplateInstanceMetadataOptions, LaunchTemplateInstanceMetadataOptionsState,
    LaunchTemplateInstanceNetworkInterfaceSpecification, LaunchTemplatePlacement,
    LaunchTemplatePrivateDnsNameOptions, LaunchTemplateSpotMarketOptions,
    LaunchTemplateTagSpecification, LaunchTemplatesMonitoring, Placement,
    PrivateDnsNameOptionsRequest, RequestLaunchTemplateData, ResponseLaunchTemplateData,
    RunInstancesMonitoringEnabled, RunInstancesRequest, SpotMarketOptions, Tag, TagSpecification,
};
use crate::protocol::error::ApiError;

/// `NotImplemented` for the first of `members` given: (given, its name in the request).
fn refuse_given(members: &[(bool, &str)]) -> Result<(), ApiError> {
    match members.iter().find(|(given, _)| *given) {
        Some((_, name)) => Err(ApiError::not_implemented(format!(
            "LaunchTemplateData.{name} is not supported by fakeaws (RunInstances could not launch with it)"
        ))),
        None => Ok(()),
    }
}

/// The data of a new version, as DescribeLaunchTemplateVersions will answer it.
pub fn from_request(d: RequestLaunchTemplateData) -> Result<ResponseLaunchTemplateData, ApiError> {
    refuse_given(&[
        (d.kernel_id.is_some(), "KernelId"),
        (d.ram_disk_id.is_some(), "RamDiskId"),
        (
            d.elastic_gpu_specifications.is_some(),
            "ElasticGpuSpecifications",
        ),
        (
            d.elastic_inference_accelerators.is_some(),
            "ElasticInferenceAccelerators",
        ),
        (
            d.cpu_options
                .as_ref()
                .is_some_and(|c| c.nested_virtualization.is_some()),
            "CpuOptions.NestedVirtualization",
        ),
        (
            d.capacity_reservation_specification
                .as_ref()
                .and_then(|c| c.capacity_reservation_target.as_ref())
                .is_some_and(|t| t.capacity_reservation_resource_group_arn.is_some()),
            "CapacityReservationSpecification.CapacityReservationTarget.\
             CapacityReservationResourceGroupArn",
        ),
        (d.license_specifications.is_some(), "LicenseSpecifications"),
        (d.instance_requirements.is_some(), "InstanceRequirements"),
        (d.operator.is_some(), "Operator"),
        (
            d.network_performance_options.is_some(),
            "NetworkPerformanceOptions",
        ),
        (d.secondary_interfaces.is_some(), "SecondaryInterfaces"),
    ])?;
    let block_device_mappings = d
        .block_device_mappings
        .map(|list| {
            list.into_iter()
                .map(|m| {
                    let ebs = m
                        .ebs
                        .map(|e| {
                            refuse_given(&[
                                (
                                    e.volume_initialization_rate.is_some(),
                                    "BlockDeviceMappings.Ebs.VolumeInitializationRate",
                                ),
                                (
                                    e.ebs_card_index.is_some(),
                                    "BlockDeviceMappings.Ebs.EbsCardIndex",
                                ),
                            ])?;
                            Ok::<_, ApiError>(LaunchTemplateEbsBlockDevice {
                                encrypted: e.encrypted,
                                delete_on_termination: e.delete_on_termination,
                                iops: e.iops,
                                kms_key_id: e.kms_key_id,
                                snapshot_id: e.snapshot_id,
                                volume_size: e.volume_size,
                                volume_type: e.volume_type,
                                throughput: e.throughput,
                                ..Default::default()
                            })
                        })
                        .transpose()?;
                    Ok(LaunchTemplateBlockDeviceMapping {
                        device_name: m.device_name,
                        virtual_name: m.virtual_name,
                        ebs,
                        no_device: m.no_device,
                    })
                })
                .collect::<Result<Vec<_>, ApiError>>()
        })
        .transpose()?;
    let network_interfaces = d
        .network_interfaces
        .map(|list| {
            list.into_iter()
                .map(|n| {
                    refuse_given(&[
                        (
                            n.private_ip_addresses.is_some()
                                || n.secondary_private_ip_address_count.is_some(),
                            "NetworkInterfaces.PrivateIpAddresses",
                        ),
                        (
                            n.network_card_index.is_some(),
                            "NetworkInterfaces.NetworkCardIndex",
                        ),
                        (
                            n.ena_srd_specification.is_some(),
                            "NetworkInterfaces.EnaSrdSpecification",
                        ),
                        (
                            n.ena_queue_count.is_some(),
                            "NetworkInterfaces.EnaQueueCount",
                        ),
                    ])?;
                    // Prefixes are checked for their shape here, and against the subnet
                    // when a launch takes them.
                    crate::ec2::network_interface::prefix::asked_by_interface(
                        n.ipv4_prefixes.as_deref(),
                        n.ipv4_prefix_count,
                        n.ipv6_prefixes.as_deref(),
                        n.ipv6_prefix_count,
                        false,
                        false,
                    )?;
                    Ok(LaunchTemplateInstanceNetworkInterfaceSpecification {
                        ipv4_prefixes: n.ipv4_prefixes.map(|list| {
                            list.into_iter()
                                .map(|p| Ipv4PrefixSpecificationResponse {
                                    ipv4_prefix: p.ipv4_prefix,
                                })
                                .collect()
                        }),
                        ipv4_prefix_count: n.ipv4_prefix_count,
                        ipv6_prefixes: n.ipv6_prefixes.map(|list| {
                            list.into_iter()
                                .map(|p| Ipv6PrefixSpecificationResponse {
                                    ipv6_prefix: p.ipv6_prefix,
                                })
                                .collect()
                        }),
                        ipv6_prefix_count: n.ipv6_prefix_count,
                        associate_carrier_ip_address: n.associate_carrier_ip_address,
                        associate_public_ip_address: n.associate_public_ip_address,
                        delete_on_termination: n.delete_on_termination,
                        description: n.description,
                        device_index: n.device_index,
                        groups: n.groups,
                        network_interface_id: n.network_interface_id,
                        private_ip_address: n.private_ip_address,
                        subnet_id: n.subnet_id,
                        ipv6_address_count: n.ipv6_address_count,
                        ipv6_addresses: n.ipv6_addresses.map(|list| {
                            list.into_iter()
                                .map(|a| InstanceIpv6Address {
                                    ipv6_address: a.ipv6_address,
                                    is_primary_ipv6: None,
                                })
                                .collect()
                        }),
                        primary_ipv6: n.primary_ipv6,
                        interface_type: n.interface_type,
                        connection_tracking_specification: n.connection_tracking_specification.map(
                            |t| ConnectionTrackingSpecification {
                                tcp_established_timeout: t.tcp_established_timeout,
                                udp_timeout: t.udp_timeout,
                                udp_stream_timeout: t.udp_stream_timeout,
                            },
                        ),
                        ..Default::default()
                    })
                })
                .collect::<Result<Vec<_>, ApiError>>()
        })
        .transpose()?;
    Ok(ResponseLaunchTemplateData {
        ebs_optimized: d.ebs_optimized,
        iam_instance_profile: d.iam_instance_profile.map(|p| {
            LaunchTemplateIamInstanceProfileSpecification {
                arn: p.arn,
                name: p.name,
            }
        }),
        block_device_mappings,
        network_interfaces,
        image_id: d.image_id,
        instance_type: d.instance_type,
        key_name: d.key_name,
        monitoring: d.monitoring.map(|m| LaunchTemplatesMonitoring {
            enabled: m.enabled,
            metric_category_ids: m.metric_category_ids,
        }),
        placement: d.placement.map(|p| LaunchTemplatePlacement {
            availability_zone: p.availability_zone,
            availability_zone_id: p.availability_zone_id,
            affinity: p.affinity,
            group_name: p.group_name,
            host_id: p.host_id,
            tenancy: p.tenancy,
            spread_domain: p.spread_domain,
            host_resource_group_arn: p.host_resource_group_arn,
            partition_number: p.partition_number,
            group_id: p.group_id,
        }),
        disable_api_termination: d.disable_api_termination,
        instance_initiated_shutdown_behavior: d.instance_initiated_shutdown_behavior,
        user_data: d.user_data,
        tag_specifications: d.tag_specifications.map(|specs| {
            specs
                .into_iter()
                .map(|s| LaunchTemplateTagSpecification {
                    resource_type: s.resource_type,
                    tags: s.tags,
                })
                .collect()
        }),
        security_group_ids: d.security_group_ids,
        security_groups: d.security_groups,
        metadata_options: d
            .metadata_options
            .map(|m| LaunchTemplateInstanceMetadataOptions {
                state: Some(LaunchTemplateInstanceMetadataOptionsState::Applied),
                http_tokens: m.http_tokens,
                http_put_response_hop_limit: m.http_put_response_hop_limit,
                http_endpoint: m.http_endpoint,
                http_protocol_ipv6: m.http_protocol_ipv6,
                instance_metadata_tags: m.instance_metadata_tags,
            }),
        disable_api_stop: d.disable_api_stop,
        credit_specification: d.credit_specification.map(|c| CreditSpecification {
            cpu_credits: Some(c.cpu_credits),
        }),
        cpu_options: d.cpu_options.map(|c| LaunchTemplateCpuOptions {
            core_count: c.core_count,
            threads_per_core: c.threads_per_core,
            amd_sev_snp: c.amd_sev_snp,
            ..Default::default()
        }),
        capacity_reservation_specification: d.capacity_reservation_specification.map(|c| {
            LaunchTemplateCapacityReservationSpecificationResponse {
                capacity_reservation_preference: c.capacity_reservation_preference,
                capacity_reservation_target: c.capacity_reservation_target.map(|t| {
                    CapacityReservationTargetResponse {
                        capacity_reservation_id: t.capacity_reservation_id,
                        capacity_reservation_resource_group_arn: None,
                    }
                }),
            }
        }),
        hibernation_options: d
            .hibernation_options
            .map(|h| LaunchTemplateHibernationOptions {
                configured: h.configured,
            }),
        enclave_options: d
            .enclave_options
            .map(|e| LaunchTemplateEnclaveOptions { enabled: e.enabled }),
        maintenance_options: d.maintenance_options.map(|m| {
            LaunchTemplateInstanceMaintenanceOptions {
                auto_recovery: m.auto_recovery,
            }
        }),
        private_dns_name_options: d.private_dns_name_options.map(|p| {
            LaunchTemplatePrivateDnsNameOptions {
                hostname_type: p.hostname_type,
                enable_resource_name_dns_a_record: p.enable_resource_name_dns_a_record,
                enable_resource_name_dns_aaaa_record: p.enable_resource_name_dns_aaaa_record,
            }
        }),
        instance_market_options: d.instance_market_options.map(|m| {
            LaunchTemplateInstanceMarketOptions {
                market_type: m.market_type,
                spot_options: m.spot_options.map(|s| LaunchTemplateSpotMarketOptions {
                    max_price: s.max_price,
                    spot_instance_type: s.spot_instance_type,
                    block_duration_minutes: s.block_duration_minutes,
                    valid_until: s.valid_until,
                    instance_interruption_behavior: s.instance_interruption_behavior,
                }),
            }
        }),
        ..Default::default()
    })
}

/// `data` laid over `base`: each member the new version gives replaces the source's.
pub fn overlay(
    base: &ResponseLaunchTemplateData,
    data: ResponseLaunchTemplateData,
) -> Result<ResponseLaunchTemplateData, ApiError> {
    let internal = |e: serde_json::Error| {
        ApiError::new(
            crate::protocol::error::Common::InternalError,
            format!("launch template data: {e}"),
        )
    };
    let mut merged = serde_json::to_value(base).map_err(internal)?;
    let given = serde_json::to_value(data).map_err(internal)?;
    if let (Some(merged), serde_json::Value::Object(given)) = (merged.as_object_mut(), given) {
        merged.extend(given.into_iter().filter(|(_, v)| !v.is_null()));
    }
    serde_json::from_value(merged).map_err(internal)
}

/// Completes a RunInstances request from a template version's data: every member the request
/// leaves out is the template's; tags of both apply, the request's winning a key. (The
/// template's metadata enums and RunInstances' share their wire values.)
pub fn merge_into(data: &ResponseLaunchTemplateData, input: &mut RunInstancesRequest) {
    let d = data.clone();
    input.image_id = input.image_id.take().or(d.image_id);
    input.instance_type = input.instance_type.or(d.instance_type);
    input.key_name = input.key_name.take().or(d.key_name);
    input.user_data = input.user_data.take().or(d.user_data);
    input.ebs_optimized = input.ebs_optimized.or(d.ebs_optimized);
    input.disable_api_termination = input.disable_api_termination.or(d.disable_api_termination);
    input.disable_api_stop = input.disable_api_stop.or(d.disable_api_stop);
    if input.credit_specification.is_none() {
        input.credit_specification = d
            .credit_specification
            .and_then(|c| c.cpu_credits)
            .map(|cpu_credits| CreditSpecificationRequest { cpu_credits });
    }
    input.instance_initiated_shutdown_behavior = input
        .instance_initiated_shutdown_behavior
        .or(d.instance_initiated_shutdown_behavior);
    if input.cpu_options.is_none() {
        input.cpu_options = d.cpu_options.map(|c| CpuOptionsRequest {
            core_count: c.core_count,
            threads_per_core: c.threads_per_core,
            amd_sev_snp: c.amd_sev_snp,
            nested_virtualization: None,
        });
    }
    if input.capacity_reservation_specification.is_none() {
        input.capacity_reservation_specification =
            d.capacity_reservation_specification
                .map(|c| CapacityReservationSpecification {
                    capacity_reservation_preference: c.capacity_reservation_preference,
                    capacity_reservation_target: c.capacity_reservation_target.map(|t| {
                        CapacityReservationTarget {
                            capacity_reservation_id: t.capacity_reservation_id,
                            capacity_reservation_resource_group_arn: None,
                        }
                    }),
                });
    }
    if input.hibernation_options.is_none() {
        input.hibernation_options = d.hibernation_options.map(|h| HibernationOptionsRequest {
            configured: h.configured,
        });
    }
    if input.enclave_options.is_none() {
        input.enclave_options = d
            .enclave_options
            .map(|e| EnclaveOptionsRequest { enabled: e.enabled });
    }
    if input.maintenance_options.is_none() {
        input.maintenance_options =
            d.maintenance_options
                .map(|m| InstanceMaintenanceOptionsRequest {
                    auto_recovery: m
                        .auto_recovery
                        .and_then(|a| InstanceAutoRecoveryState::from_wire(a.as_str())),
                });
    }
    if input.private_dns_name_options.is_none() {
        input.private_dns_name_options =
            d.private_dns_name_options
                .map(|p| PrivateDnsNameOptionsRequest {
                    hostname_type: p.hostname_type,
                    enable_resource_name_dns_a_record: p.enable_resource_name_dns_a_record,
                    enable_resource_name_dns_aaaa_record: p.enable_resource_name_dns_aaaa_record,
                });
    }
    if input.security_group_ids.is_none() && input.security_groups.is_none() {
        input.security_group_ids = d.security_group_ids;
        input.security_groups = d.security_groups;
    }
    if input.iam_instance_profile.is_none() {
        input.iam_instance_profile =
            d.iam_instance_profile
                .map(|p| IamInstanceProfileSpecification {
                    arn: p.arn,
                    name: p.name,
                });
    }
    if input.monitoring.is_none() {
        input.monitoring =
            d.monitoring
                .and_then(|m| m.enabled)
                .map(|enabled| RunInstancesMonitoringEnabled {
                    metric_category_ids: None,
                    enabled,
                });
    }
    if input.block_device_mappings.is_none() {
        input.block_device_mappings = d.block_device_mappings.map(|list| {
            list.into_iter()
                .map(|m| BlockDeviceMapping {
                    ebs: m.ebs.map(|e| EbsBlockDevice {
                        delete_on_termination: e.delete_on_termination,
                        iops: e.iops,
                        snapshot_id: e.snapshot_id,
                        volume_size: e.volume_size,
                        volume_type: e.volume_type,
                        kms_key_id: e.kms_key_id,
                        throughput: e.throughput,
                        encrypted: e.encrypted,
                        ..Default::default()
                    }),
                    no_device: m.no_device,
                    device_name: m.device_name,
                    virtual_name: m.virtual_name,
                })
                .collect()
        });
    }
    if input.network_interfaces.is_none() {
        input.network_interfaces = d.network_interfaces.map(|list| {
            list.into_iter()
                .map(|n| InstanceNetworkInterfaceSpecification {
                    associate_public_ip_address: n.associate_public_ip_address,
                    delete_on_termination: n.delete_on_termination,
                    description: n.description,
                    device_index: n.device_index,
                    groups: n.groups,
                    ipv6_address_count: n.ipv6_address_count,
                    ipv6_addresses: n.ipv6_addresses,
                    network_interface_id: n.network_interface_id,
                    private_ip_address: n.private_ip_address,
                    private_ip_addresses: None,
                    secondary_private_ip_address_count: None,
                    subnet_id: n.subnet_id,
                    associate_carrier_ip_address: n.associate_carrier_ip_address,
                    interface_type: n.interface_type,
                    network_card_index: None,
                    ipv4_prefixes: n.ipv4_prefixes.map(|list| {
                        list.into_iter()
                            .map(|p| Ipv4PrefixSpecificationRequest {
                                ipv4_prefix: p.ipv4_prefix,
                            })
                            .collect()
                    }),
                    ipv4_prefix_count: n.ipv4_prefix_count,
                    ipv6_prefixes: n.ipv6_prefixes.map(|list| {
                        list.into_iter()
                            .map(|p| Ipv6PrefixSpecificationRequest {
                                ipv6_prefix: p.ipv6_prefix,
                            })
                            .collect()
                    }),
                    ipv6_prefix_count: n.ipv6_prefix_count,
                    primary_ipv6: n.primary_ipv6,
                    ena_srd_specification: None,
                    connection_tracking_specification: n.connection_tracking_specification.map(
                        |t| ConnectionTrackingSpecificationRequest {
                            tcp_established_timeout: t.tcp_established_timeout,
                            udp_stream_timeout: t.udp_stream_timeout,
                            udp_timeout: t.udp_timeout,
                        },
                    ),
                    ena_queue_count: None,
                })
                .collect()
        });
    }
    if input.instance_market_options.is_none() {
        input.instance_market_options =
            d.instance_market_options
                .map(|m| InstanceMarketOptionsRequest {
                    market_type: m.market_type,
                    spot_options: m.spot_options.map(|s| SpotMarketOptions {
                        max_price: s.max_price,
                        spot_instance_type: s.spot_instance_type,
                        block_duration_minutes: s.block_duration_minutes,
                        valid_until: s.valid_until,
                        instance_interruption_behavior: s.instance_interruption_behavior,
                    }),
                });
    }
    if input.placement.is_none() {
        input.placement = d.placement.map(|p| Placement {
            availability_zone_id: p.availability_zone_id,
            affinity: p.affinity,
            group_name: p.group_name,
            partition_number: p.partition_number,
            host_id: p.host_id,
            tenancy: p.tenancy,
            spread_domain: p.spread_domain,
            host_resource_group_arn: p.host_resource_group_arn,
            group_id: p.group_id,
            availability_zone: p.availability_zone,
        });
    }
    if input.metadata_options.is_none() {
        input.metadata_options = d.metadata_options.map(|m| InstanceMetadataOptionsRequest {
            http_tokens: m
                .http_tokens
                .and_then(|t| HttpTokensState::from_wire(t.as_str())),
            http_put_response_hop_limit: m.http_put_response_hop_limit,
            http_endpoint: m
                .http_endpoint
                .and_then(|t| InstanceMetadataEndpointState::from_wire(t.as_str())),
            http_protocol_ipv6: m
                .http_protocol_ipv6
                .and_then(|t| InstanceMetadataProtocolState::from_wire(t.as_str())),
            instance_metadata_tags: m
                .instance_metadata_tags
                .and_then(|t| InstanceMetadataTagsState::from_wire(t.as_str())),
        });
    }
    if let Some(template_specs) = d.tag_specifications {
        let mut specs: Vec<TagSpecification> = input.tag_specifications.take().unwrap_or_default();
        for t in template_specs {
            let tags: Vec<Tag> = t.tags.unwrap_or_default();
            match specs
                .iter_mut()
                .find(|s| s.resource_type.is_some() && s.resource_type == t.resource_type)
            {
                Some(s) => {
                    let own = s.tags.get_or_insert_with(Vec::new);
                    for tag in tags {
                        if !own.iter().any(|o| o.key == tag.key) {
                            own.push(tag);
                        }
                    }
                }
                None => specs.push(TagSpecification {
                    resource_type: t.resource_type,
                    tags: Some(tags),
                }),
            }
        }
        input.tag_specifications = Some(specs);
    }
}
