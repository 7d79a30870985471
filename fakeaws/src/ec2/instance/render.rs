//! DescribeInstances and DescribeInstanceAttribute: an instance as AWS renders it, in its
//! reservation.

use std::collections::BTreeMap;

use crate::ec2::filter::Filters;
use crate::ec2::network_interface::{self, NetworkInterface};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    AttachmentStatus, AttributeBooleanValue, AttributeValue, DescribeInstanceAttributeRequest,
    DescribeInstancesRequest, DescribeInstancesResult, DeviceType, EbsInstanceBlockDevice,
    GroupIdentifier, HypervisorType, IamInstanceProfile, Instance as InstanceOut,
    InstanceAttribute, InstanceAttributeName, InstanceBlockDeviceMapping, InstanceIpv6Address,
    InstanceNetworkInterface, InstanceNetworkInterfaceAssociation,
    InstanceNetworkInterfaceAttachment, InstancePrivateIpAddress, InstanceStateName, Monitoring,
    MonitoringState, NetworkInterfaceStatus, Placement, Reservation, StateReason,
    VirtualizationType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// The reservation `id` with its instances as they are now.
pub(super) fn reservation(region: &Region, id: &str) -> Reservation {
    let instances: Vec<&Instance> = region
        .instances
        .values()
        .filter(|i| i.reservation_id == id)
        .collect();
    render_reservation(region, id, &instances)
}

pub(super) fn render_reservation(
    region: &Region,
    id: &str,
    instances: &[&Instance],
) -> Reservation {
    let mut instances: Vec<&Instance> = instances.to_vec();
    instances.sort_by_key(|i| i.launch_index);
    Reservation {
        reservation_id: Some(id.to_string()),
        owner_id: Some(region.account_id.clone()),
        requester_id: None,
        groups: Some(Vec::new()),
        instances: Some(instances.into_iter().map(|i| render(region, i)).collect()),
    }
}

pub(super) fn groups_of(region: &Region, i: &Instance) -> Vec<GroupIdentifier> {
    region
        .network_interfaces
        .get(&i.eni_id)
        .map(|e| network_interface::group_identifiers(region, &e.groups))
        .unwrap_or_default()
}

/// The interfaces attached to instance `i` (any phase), by device index.
fn interfaces_of<'r>(region: &'r Region, i: &'r Instance) -> Vec<&'r NetworkInterface> {
    let mut all: Vec<&NetworkInterface> = interfaces(region, i).collect();
    all.sort_by_key(|e| e.attachment.as_ref().map_or(0, |a| a.device_index));
    all
}

/// One of an instance's interfaces, as DescribeInstances shows it.
fn instance_interface(region: &Region, e: &NetworkInterface) -> InstanceNetworkInterface {
    let primary6 = network_interface::ipv6::primary(e);
    let association = |p: &network_interface::PublicIp| InstanceNetworkInterfaceAssociation {
        ip_owner_id: Some(if p.allocation_id.is_some() {
            region.account_id.clone()
        } else {
            "amazon".into()
        }),
        public_dns_name: p
            .public()
            .map(|p| network_interface::public_dns(region, p.ip)),
        public_ip: p.public().map(|p| p.ip.to_string()),
        carrier_ip: p.carrier.then(|| p.ip.to_string()),
        ..Default::default()
    };
    let groups = network_interface::group_identifiers(region, &e.groups);
    InstanceNetworkInterface {
        association: e.public_ip.as_ref().map(association),
        attachment: e
            .attachment
            .as_ref()
            .map(|a| InstanceNetworkInterfaceAttachment {
                attach_time: Some(a.attach_time),
                attachment_id: Some(a.id.clone()),
                delete_on_termination: Some(a.delete_on_termination),
                device_index: Some(a.device_index),
                status: Some(a.phase.status()),
                network_card_index: Some(0),
                ..Default::default()
            }),
        description: Some(e.description.clone()),
        groups: Some(groups),
        ipv6_addresses: Some(
            e.ipv6
                .iter()
                .map(|ip| InstanceIpv6Address {
                    ipv6_address: Some(ip.to_string()),
                    is_primary_ipv6: Some(primary6 == Some(*ip)),
                })
                .collect(),
        ),
        mac_address: Some(e.mac.clone()),
        network_interface_id: Some(e.id.clone()),
        owner_id: Some(region.account_id.clone()),
        private_dns_name: Some(network_interface::private_dns(region, e.private_ip)),
        private_ip_address: Some(e.private_ip.to_string()),
        private_ip_addresses: Some(
            e.addresses()
                .enumerate()
                .map(|(n, ip)| InstancePrivateIpAddress {
                    association: e.public_at(ip).map(association),
                    primary: Some(n == 0),
                    private_dns_name: Some(network_interface::private_dns(region, ip)),
                    private_ip_address: Some(ip.to_string()),
                })
                .collect(),
        ),
        source_dest_check: Some(e.source_dest_check),
        status: Some(NetworkInterfaceStatus::InUse),
        subnet_id: Some(e.subnet_id.clone()),
        vpc_id: Some(e.vpc_id.clone()),
        interface_type: Some(e.interface_type.as_str().into()),
        connection_tracking_configuration: e
            .tracking
            .as_deref()
            .map(network_interface::tracking::for_instance),
        ipv4_prefixes: (!e.ipv4_prefixes.is_empty()).then(|| {
            e.ipv4_prefixes
                .iter()
                .map(|p| crate::generated::ec2::InstanceIpv4Prefix {
                    ipv4_prefix: Some(p.to_string()),
                })
                .collect()
        }),
        ipv6_prefixes: (!e.ipv6_prefixes.is_empty()).then(|| {
            e.ipv6_prefixes
                .iter()
                .map(|p| crate::generated::ec2::InstanceIpv6Prefix {
                    ipv6_prefix: Some(p.to_string()),
                })
                .collect()
        }),
        ..Default::default()
    }
}

pub(super) fn render(region: &Region, i: &Instance) -> InstanceOut {
    let eni = region.network_interfaces.get(&i.eni_id);
    // A carrier IP address is no public address of AWS's: the interface shows it alone.
    // `PublicIpAddress` is "the public IPv4 address, or the Carrier IP address assigned to the
    // instance" (the model); only a public one of AWS's has a public DNS name.
    let shown = eni.and_then(|e| e.public_ip.as_ref());
    let public = shown.and_then(|p| p.public());
    let private_dns = network_interface::private_dns(region, i.private_ip);
    let public_dns = public.map(|p| network_interface::public_dns(region, p.ip));
    let groups = groups_of(region, i);
    let network_interfaces = interfaces_of(region, i)
        .into_iter()
        .map(|e| instance_interface(region, e))
        .collect();
    let gone = i.state == InstanceStateName::Terminated;
    let options = super::options::render(&i.options);
    InstanceOut {
        architecture: Some(i.architecture),
        block_device_mappings: Some(if gone {
            Vec::new()
        } else {
            i.volumes
                .iter()
                .filter_map(|(device, vol)| {
                    let v = region.volumes.get(vol)?;
                    Some(InstanceBlockDeviceMapping {
                        device_name: Some(device.clone()),
                        ebs: Some(EbsInstanceBlockDevice {
                            attach_time: v.attachment.as_ref().map(|a| a.attach_time),
                            delete_on_termination: v
                                .attachment
                                .as_ref()
                                .map(|a| a.delete_on_termination),
                            status: Some(AttachmentStatus::Attached),
                            volume_id: Some(vol.clone()),
                            ..Default::default()
                        }),
                    })
                })
                .collect()
        }),
        client_token: i.client_token.clone(),
        ebs_optimized: Some(i.ebs_optimized),
        ena_support: Some(i.ena_support),
        hypervisor: Some(HypervisorType::Xen),
        instance_lifecycle: i
            .spot_request
            .as_ref()
            .map(|_| crate::generated::ec2::InstanceLifecycleType::Spot),
        spot_instance_request_id: i.spot_request.clone(),
        iam_instance_profile: i.iam_profile.as_ref().map(|(arn, id)| IamInstanceProfile {
            arn: Some(arn.clone()),
            id: Some(id.clone()),
        }),
        network_interfaces: Some(if gone { Vec::new() } else { network_interfaces }),
        root_device_name: Some(i.root_device_name.clone()),
        root_device_type: Some(DeviceType::Ebs),
        security_groups: Some(if gone { Vec::new() } else { groups }),
        source_dest_check: eni.map(|e| e.source_dest_check),
        state_reason: i.state_reason.as_ref().map(|(code, message)| StateReason {
            code: Some(code.clone()),
            message: Some(message.clone()),
        }),
        tags: region.tags.tag_set(&i.id),
        virtualization_type: Some(VirtualizationType::Hvm),
        metadata_options: Some(i.metadata.clone()),
        platform_details: Some("Linux/UNIX".into()),
        usage_operation: Some("RunInstances".into()),
        usage_operation_update_time: Some(i.launch_time),
        cpu_options: options.cpu,
        boot_mode: options.boot_mode,
        current_instance_boot_mode: options.current_boot_mode,
        capacity_reservation_specification: options.capacity,
        capacity_reservation_id: i.capacity_reservation.clone(),
        hibernation_options: options.hibernation,
        enclave_options: options.enclave,
        maintenance_options: options.maintenance,
        private_dns_name_options: options.private_dns,
        instance_id: Some(i.id.clone()),
        image_id: Some(i.image_id.clone()),
        state: Some(state(i.state)),
        private_dns_name: Some(if gone { String::new() } else { private_dns }),
        public_dns_name: Some(public_dns.unwrap_or_default()),
        state_transition_reason: Some(i.transition_reason.clone()),
        key_name: i.key_name.clone(),
        ami_launch_index: Some(i.launch_index),
        product_codes: Some(Vec::new()),
        instance_type: Some(i.instance_type),
        launch_time: Some(i.launch_time),
        placement: Some(Placement {
            availability_zone: Some(i.zone.clone()),
            availability_zone_id: region.zone(&i.zone).map(|z| z.id.clone()),
            group_name: Some(
                i.placement_group
                    .as_deref()
                    .and_then(|g| crate::ec2::placement_group::name_of(region, g))
                    .unwrap_or_default(),
            ),
            group_id: i.placement_group.clone(),
            partition_number: i.partition,
            host_id: i.host_id.clone(),
            affinity: i.affinity.clone(),
            tenancy: Some(i.tenancy),
            ..Default::default()
        }),
        monitoring: Some(Monitoring {
            state: Some(if i.monitoring {
                MonitoringState::Enabled
            } else {
                MonitoringState::Disabled
            }),
            metric_category_ids: None,
        }),
        subnet_id: (!gone).then(|| i.subnet_id.clone()),
        vpc_id: (!gone).then(|| i.vpc_id.clone()),
        private_ip_address: (!gone).then(|| i.private_ip.to_string()),
        public_ip_address: shown.map(|p| p.ip.to_string()),
        // The primary interface's primary IPv6 address, else its first.
        ipv6_address: eni
            .filter(|_| !gone)
            .and_then(|e| {
                crate::ec2::network_interface::ipv6::primary(e).or(e.ipv6.first().copied())
            })
            .map(|ip| ip.to_string()),
        ..Default::default()
    }
}

/// `DescribeInstances`: instances grouped by reservation, paginated by reservation.
pub fn describe_instances(
    region: &mut Region,
    input: DescribeInstancesRequest,
) -> Result<DescribeInstancesResult, ApiError> {
    let filters = Filters::parse::<(&Instance, &Region)>(input.filters)?;
    let region = &*region;
    if input.instance_ids.as_ref().is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter instancesSet cannot be used with the parameter maxResults",
        ));
    }
    page::check_max_results(input.max_results, 5, 1000)?;
    let found = Kind::Instance.describe(
        &region.consistency,
        &region.instances,
        input.instance_ids.as_deref(),
        region.candidates(Kind::Instance, &filters),
        |i| filters.matches(&(i, region), region.tags.get(&i.id)),
    )?;
    let mut by_reservation: BTreeMap<&str, Vec<&Instance>> = BTreeMap::new();
    for i in found {
        by_reservation
            .entry(i.reservation_id.as_str())
            .or_default()
            .push(i);
    }
    let groups: Vec<(&str, Vec<&Instance>)> = by_reservation.into_iter().collect();
    let (items, next) = page::page(
        groups,
        |(r, _)| r,
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInstancesResult {
        next_token: next,
        reservations: Some(
            items
                .into_iter()
                .map(|(r, instances)| render_reservation(region, r, &instances))
                .collect(),
        ),
    })
}

/// `DescribeInstanceAttribute`: one attribute of one instance.
pub fn describe_instance_attribute(
    region: &mut Region,
    input: DescribeInstanceAttributeRequest,
) -> Result<InstanceAttribute, ApiError> {
    let region = &*region;
    let i = Kind::Instance.get(&region.instances, &input.instance_id)?;
    let out = render(region, i);
    let value = |v: Option<String>| Some(AttributeValue { value: v });
    let flag = |v: bool| Some(AttributeBooleanValue { value: Some(v) });
    let mut a = InstanceAttribute {
        instance_id: Some(i.id.clone()),
        ..Default::default()
    };
    match input.attribute {
        InstanceAttributeName::InstanceType => {
            a.instance_type = value(Some(i.instance_type.as_str().to_string()));
        }
        InstanceAttributeName::UserData => a.user_data = value(i.user_data.clone()),
        InstanceAttributeName::DisableApiTermination => {
            a.disable_api_termination = flag(i.disable_api_termination);
        }
        InstanceAttributeName::InstanceInitiatedShutdownBehavior => {
            a.instance_initiated_shutdown_behavior =
                value(Some(i.shutdown_behavior.as_str().to_string()));
        }
        InstanceAttributeName::RootDeviceName => {
            a.root_device_name = value(Some(i.root_device_name.clone()));
        }
        InstanceAttributeName::BlockDeviceMapping => {
            a.block_device_mappings = out.block_device_mappings;
        }
        InstanceAttributeName::SourceDestCheck => {
            a.source_dest_check = out
                .source_dest_check
                .map(|v| AttributeBooleanValue { value: Some(v) });
        }
        InstanceAttributeName::GroupSet => a.groups = out.security_groups,
        InstanceAttributeName::EbsOptimized => a.ebs_optimized = flag(i.ebs_optimized),
        InstanceAttributeName::EnaSupport => a.ena_support = flag(i.ena_support),
        // On for every image here (`simple`), and so for every instance.
        InstanceAttributeName::SriovNetSupport => {
            a.sriov_net_support = value(Some("simple".into()))
        }
        InstanceAttributeName::DisableApiStop => a.disable_api_stop = flag(i.disable_api_stop),
        InstanceAttributeName::ProductCodes => a.product_codes = Some(Vec::new()),
        InstanceAttributeName::Kernel | InstanceAttributeName::Ramdisk => {}
        other => {
            return Err(ApiError::not_implemented(format!(
                "fakeaws does not serve the instance attribute {}",
                other.as_str()
            )));
        }
    }
    Ok(a)
}
