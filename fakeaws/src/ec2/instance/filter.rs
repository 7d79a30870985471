//! The filters of DescribeInstances.

use crate::ec2::filter::{Filterable, flag, one};
use crate::ec2::network_interface;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

use super::*;

impl Filterable for (&Instance, &Region) {
    // Linux (no platform); no product code, requester, capacity reservation resource group,
    // Outpost, operator, kernel or RAM disk; no IPv4 or IPv6 prefixes on interfaces; no
    // network performance options or NitroTPM.
    const NEVER_SET: &'static [&'static str] = &[
        "capacity-reservation-specification.capacity-reservation-target.capacity-reservation-resource-group-arn",
        "kernel-id",
        "metadata-options.http-protocol-ipv4",
        "network-interface.addresses.association.customer-owned-ip",
        "network-interface.association.customer-owned-ip",
        "network-interface.deny-all-igw-traffic",
        "network-interface.ipv4-prefixes.ipv4-prefix",
        "network-interface.ipv6-native",
        "network-interface.ipv6-prefixes.ipv6-prefix",
        "network-interface.operator.managed",
        "network-interface.operator.principal",
        "network-interface.outpost-arn",
        "network-interface.requester-id",
        "network-performance-options.bandwidth-weighting",
        "operator.managed",
        "operator.principal",
        "outpost-arn",
        "platform",
        "product-code",
        "product-code.type",
        "ramdisk-id",
        "requester-id",
        "tpm-support",
        "usage-operation-update-time",
    ];
    const NAMES: &'static [&'static str] = &[
        "affinity",
        "architecture",
        "availability-zone",
        "availability-zone-id",
        "boot-mode",
        "capacity-reservation-id",
        "capacity-reservation-specification.capacity-reservation-preference",
        "capacity-reservation-specification.capacity-reservation-target.capacity-reservation-id",
        "capacity-reservation-specification.capacity-reservation-target.capacity-reservation-resource-group-arn",
        "current-instance-boot-mode",
        "ebs-optimized",
        "ena-support",
        "enclave-options.enabled",
        "hibernation-options.configured",
        "host-id",
        "iam-instance-profile.id",
        "ipv6-address",
        "kernel-id",
        "maintenance-options.auto-recovery",
        "metadata-options.http-protocol-ipv4",
        "metadata-options.http-protocol-ipv6",
        "metadata-options.http-put-response-hop-limit",
        "metadata-options.instance-metadata-tags",
        "metadata-options.state",
        "network-interface.addresses.association.allocation-id",
        "network-interface.addresses.association.association-id",
        "network-interface.addresses.association.carrier-ip",
        "network-interface.addresses.association.customer-owned-ip",
        "network-interface.addresses.association.ip-owner-id",
        "network-interface.addresses.association.public-dns-name",
        "network-interface.addresses.association.public-ip",
        "network-interface.addresses.primary",
        "network-interface.addresses.private-dns-name",
        "network-interface.association.allocation-id",
        "network-interface.association.association-id",
        "network-interface.association.carrier-ip",
        "network-interface.association.customer-owned-ip",
        "network-interface.association.ip-owner-id",
        "network-interface.association.public-dns-name",
        "network-interface.attachment.attach-time",
        "network-interface.attachment.delete-on-termination",
        "network-interface.attachment.device-index",
        "network-interface.attachment.instance-id",
        "network-interface.attachment.instance-owner-id",
        "network-interface.attachment.network-card-index",
        "network-interface.attachment.status",
        "network-interface.availability-zone",
        "network-interface.deny-all-igw-traffic",
        "network-interface.description",
        "network-interface.group-name",
        "network-interface.ipv4-prefixes.ipv4-prefix",
        "network-interface.ipv6-address",
        "network-interface.ipv6-addresses.ipv6-address",
        "network-interface.ipv6-addresses.is-primary-ipv6",
        "network-interface.ipv6-native",
        "network-interface.ipv6-prefixes.ipv6-prefix",
        "network-interface.mac-address",
        "network-interface.operator.managed",
        "network-interface.operator.principal",
        "network-interface.outpost-arn",
        "network-interface.owner-id",
        "network-interface.private-dns-name",
        "network-interface.public-dns-name",
        "network-interface.requester-id",
        "network-interface.requester-managed",
        "network-interface.source-dest-check",
        "network-interface.status",
        "network-interface.tag-key",
        "network-interface.tag-value",
        "network-performance-options.bandwidth-weighting",
        "operator.managed",
        "operator.principal",
        "outpost-arn",
        "private-dns-name-options.enable-resource-name-dns-a-record",
        "private-dns-name-options.enable-resource-name-dns-aaaa-record",
        "private-dns-name-options.hostname-type",
        "product-code.type",
        "ramdisk-id",
        "tpm-support",
        "usage-operation",
        "usage-operation-update-time",
        "block-device-mapping.attach-time",
        "block-device-mapping.delete-on-termination",
        "block-device-mapping.device-name",
        "block-device-mapping.status",
        "block-device-mapping.volume-id",
        "client-token",
        "dns-name",
        "group-id",
        "group-name",
        "hypervisor",
        "iam-instance-profile.arn",
        "image-id",
        "instance-id",
        "instance-lifecycle",
        "instance-state-code",
        "instance-state-name",
        "instance-type",
        "instance.group-id",
        "instance.group-name",
        "ip-address",
        "key-name",
        "launch-index",
        "launch-time",
        "metadata-options.http-tokens",
        "metadata-options.http-endpoint",
        "monitoring-state",
        "network-interface.network-interface-id",
        "network-interface.subnet-id",
        "network-interface.vpc-id",
        "network-interface.private-ip-address",
        "network-interface.addresses.private-ip-address",
        "network-interface.association.public-ip",
        "network-interface.attachment.attachment-id",
        "network-interface.group-id",
        "owner-id",
        "placement-group-name",
        "placement-partition-number",
        "platform",
        "platform-details",
        "private-dns-name",
        "private-ip-address",
        "product-code",
        "reason",
        "requester-id",
        "reservation-id",
        "root-device-name",
        "root-device-type",
        "source-dest-check",
        "spot-instance-request-id",
        "state-reason-code",
        "state-reason-message",
        "subnet-id",
        "tenancy",
        "virtualization-type",
        "vpc-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (i, region) = *self;
        let eni = region.network_interfaces.get(&i.eni_id);
        // The address `PublicIpAddress` shows (a carrier IP address too); a public one of
        // AWS's alone has a public DNS name.
        let shown = eni.and_then(|e| e.public_ip.as_ref());
        let public = shown.and_then(|p| p.public());
        // Every interface attached to it, the primary first.
        let enis = || interfaces(region, i);
        let attachments = || {
            i.volumes
                .iter()
                .filter_map(|(_, v)| region.volumes.get(v))
                .filter_map(|v| v.attachment.as_ref())
        };
        let options = || super::options::render(&i.options);
        let dns = || i.options.private_dns.clone().unwrap_or_default();
        let bit = |b: Option<bool>| b.map(flag).unwrap_or_default();
        match name {
            "architecture" => one(i.architecture.as_str()),
            "boot-mode" => i
                .options
                .boot_mode
                .map(|b| one(b.as_str()))
                .unwrap_or_default(),
            "current-instance-boot-mode" => i
                .options
                .current_boot_mode
                .map(|b| one(b.as_str()))
                .unwrap_or_default(),
            "capacity-reservation-id" => {
                i.capacity_reservation.clone().map(one).unwrap_or_default()
            }
            "capacity-reservation-specification.capacity-reservation-preference" => options()
                .capacity
                .and_then(|c| c.capacity_reservation_preference)
                .map(|p| one(p.as_str()))
                .unwrap_or_default(),
            "capacity-reservation-specification.capacity-reservation-target.capacity-reservation-id" => {
                i.options
                    .capacity_target
                    .clone()
                    .map(one)
                    .unwrap_or_default()
            }
            "enclave-options.enabled" => flag(i.options.enclave),
            "hibernation-options.configured" => flag(i.options.hibernation),
            "maintenance-options.auto-recovery" => options()
                .maintenance
                .and_then(|m| m.auto_recovery)
                .map(|a| one(a.as_str()))
                .unwrap_or_default(),
            "private-dns-name-options.hostname-type" => dns()
                .hostname_type
                .map(|h| one(h.as_str()))
                .unwrap_or_default(),
            "private-dns-name-options.enable-resource-name-dns-a-record" => {
                bit(dns().enable_resource_name_dns_a_record)
            }
            "private-dns-name-options.enable-resource-name-dns-aaaa-record" => {
                bit(dns().enable_resource_name_dns_aaaa_record)
            }
            "availability-zone" => one(i.zone.clone()),
            "instance-lifecycle" => i
                .spot_request
                .as_ref()
                .map(|_| one("spot"))
                .unwrap_or_default(),
            "spot-instance-request-id" => i.spot_request.clone().map(one).unwrap_or_default(),
            "placement-group-name" => i
                .placement_group
                .as_deref()
                .and_then(|g| crate::ec2::placement_group::name_of(region, g))
                .map(one)
                .unwrap_or_default(),
            "placement-partition-number" => {
                i.partition.map(|p| one(p.to_string())).unwrap_or_default()
            }
            "block-device-mapping.device-name" => {
                i.volumes.iter().map(|(d, _)| d.clone()).collect()
            }
            "block-device-mapping.volume-id" => i.volumes.iter().map(|(_, v)| v.clone()).collect(),
            "block-device-mapping.attach-time" => attachments()
                .map(|a| format_timestamp(a.attach_time))
                .collect(),
            "block-device-mapping.delete-on-termination" => attachments()
                .map(|a| a.delete_on_termination.to_string())
                .collect(),
            // A volume is attached for as long as its instance lists it.
            "block-device-mapping.status" => attachments().map(|_| "attached".into()).collect(),
            "client-token" => i.client_token.clone().into_iter().collect(),
            "dns-name" => public
                .map(|p| network_interface::public_dns(region, p.ip))
                .into_iter()
                .collect(),
            "group-id" | "instance.group-id" => eni.map(|e| e.groups.clone()).unwrap_or_default(),
            "network-interface.group-id" => enis().flat_map(|e| e.groups.clone()).collect(),
            "group-name" | "instance.group-name" => groups_of(region, i)
                .into_iter()
                .filter_map(|g| g.group_name)
                .collect(),
            "hypervisor" => one("xen"),
            "iam-instance-profile.arn" => {
                i.iam_profile.iter().map(|(arn, _)| arn.clone()).collect()
            }
            "image-id" => one(i.image_id.clone()),
            "instance-id" => one(i.id.clone()),
            "instance-state-code" => one(state_code(i.state).to_string()),
            "instance-state-name" => one(i.state.as_str()),
            "instance-type" => one(i.instance_type.as_str()),
            "ip-address" => shown.map(|p| p.ip.to_string()).into_iter().collect(),
            "network-interface.association.public-ip" => enis()
                .filter_map(|e| e.public_ip.as_ref().and_then(|p| p.public()))
                .map(|p| p.ip.to_string())
                .collect(),
            "network-interface.association.carrier-ip"
            | "network-interface.addresses.association.carrier-ip" => enis()
                .filter_map(|e| e.public_ip.as_ref().filter(|p| p.carrier))
                .map(|p| p.ip.to_string())
                .collect(),
            "key-name" => i.key_name.clone().into_iter().collect(),
            "launch-index" => one(i.launch_index.to_string()),
            "launch-time" => one(format_timestamp(i.launch_time)),
            "metadata-options.http-tokens" => i
                .metadata
                .http_tokens
                .map(|t| t.as_str().to_string())
                .into_iter()
                .collect(),
            "metadata-options.http-endpoint" => i
                .metadata
                .http_endpoint
                .map(|t| t.as_str().to_string())
                .into_iter()
                .collect(),
            "monitoring-state" => one(if i.monitoring { "enabled" } else { "disabled" }),
            "network-interface.network-interface-id" => enis().map(|e| e.id.clone()).collect(),
            "network-interface.subnet-id" => enis().map(|e| e.subnet_id.clone()).collect(),
            "subnet-id" => one(i.subnet_id.clone()),
            "network-interface.vpc-id" | "vpc-id" => one(i.vpc_id.clone()),
            "network-interface.private-ip-address"
            | "network-interface.addresses.private-ip-address" => enis()
                .flat_map(|e| e.addresses().map(|ip| ip.to_string()).collect::<Vec<_>>())
                .collect(),
            "private-ip-address" => one(i.private_ip.to_string()),
            "network-interface.attachment.attachment-id" => enis()
                .filter_map(|e| e.attachment.as_ref().map(|a| a.id.clone()))
                .collect(),
            "owner-id" => one(region.account_id.clone()),
            "platform-details" => one("Linux/UNIX"),
            "private-dns-name" => one(network_interface::private_dns(region, i.private_ip)),
            "reason" => one(i.transition_reason.clone()),
            "reservation-id" => one(i.reservation_id.clone()),
            "root-device-name" => one(i.root_device_name.clone()),
            "root-device-type" => one("ebs"),
            "source-dest-check" => eni
                .map(|e| e.source_dest_check.to_string())
                .into_iter()
                .collect(),
            "state-reason-code" => i.state_reason.iter().map(|(c, _)| c.clone()).collect(),
            "state-reason-message" => i.state_reason.iter().map(|(_, m)| m.clone()).collect(),
            "tenancy" => one(i.tenancy.as_str()),
            "host-id" => i.host_id.iter().cloned().collect(),
            "affinity" => i.affinity.iter().cloned().collect(),
            "availability-zone-id" => region
                .zone(&i.zone)
                .map(|z| one(z.id.clone()))
                .unwrap_or_default(),
            "ebs-optimized" => one(i.ebs_optimized.to_string()),
            "ena-support" => one(i.ena_support.to_string()),
            "iam-instance-profile.id" => i.iam_profile.iter().map(|(_, id)| id.clone()).collect(),
            "metadata-options.http-protocol-ipv6" => {
                text(i.metadata.http_protocol_ipv6.map(|v| v.as_str()))
            }
            "metadata-options.http-put-response-hop-limit" => i
                .metadata
                .http_put_response_hop_limit
                .map(|n| one(n.to_string()))
                .unwrap_or_default(),
            "metadata-options.instance-metadata-tags" => {
                text(i.metadata.instance_metadata_tags.map(|v| v.as_str()))
            }
            "metadata-options.state" => text(i.metadata.state.map(|v| v.as_str())),
            "usage-operation" => one("RunInstances"),
            "ipv6-address" => eni
                .and_then(|e| e.ipv6.first())
                .map(|ip| one(ip.to_string()))
                .unwrap_or_default(),
            n if n.starts_with("network-interface.") => interface_values(region, enis(), n),
            "virtualization-type" => one("hvm"),
            // NEVER_SET, and names outside NAMES, which `Filters::parse` refuses.
            _ => Vec::new(),
        }
    }
}

/// `value` as a filter's values: one, or none.
fn text(value: Option<&str>) -> Vec<String> {
    value.map(one).unwrap_or_default()
}

/// The values of the `network-interface.*` filter `name` (those not answered above) over the
/// instance's interfaces `enis`.
fn interface_values<'a>(
    region: &Region,
    enis: impl Iterator<Item = &'a network_interface::NetworkInterface>,
    name: &str,
) -> Vec<String> {
    let field = name.strip_prefix("network-interface.").unwrap_or(name);
    let mut out = Vec::new();
    for e in enis {
        let public = e.public_ip.as_ref();
        let owner = |p: &network_interface::PublicIp| {
            if p.allocation_id.is_some() {
                region.account_id.clone()
            } else {
                "amazon".to_string()
            }
        };
        let attachment = e.attachment.as_ref();
        let tags = region.tags.get(&e.id);
        match field {
            "addresses.primary" => {
                out.extend(e.addresses().enumerate().map(|(n, _)| (n == 0).to_string()));
            }
            "addresses.private-dns-name" => out.extend(
                e.addresses()
                    .map(|ip| network_interface::private_dns(region, ip)),
            ),
            "private-dns-name" => out.push(network_interface::private_dns(region, e.private_ip)),
            "ipv6-address" | "ipv6-addresses.ipv6-address" => {
                out.extend(e.ipv6.iter().map(ToString::to_string));
            }
            "ipv6-addresses.is-primary-ipv6" => out.extend(e.ipv6.iter().map(|_| "false".into())),
            "addresses.association.public-ip" => out.extend(
                e.publics()
                    .filter_map(|(_, p)| p.public())
                    .map(|p| p.ip.to_string()),
            ),
            "addresses.association.ip-owner-id" => {
                out.extend(e.publics().map(|(_, p)| owner(p)));
            }
            "association.ip-owner-id" => out.extend(public.map(owner)),
            "addresses.association.public-dns-name" => out.extend(
                e.publics()
                    .filter_map(|(_, p)| p.public())
                    .map(|p| network_interface::public_dns(region, p.ip)),
            ),
            "association.public-dns-name" | "public-dns-name" => {
                out.extend(
                    public
                        .and_then(|p| p.public())
                        .map(|p| network_interface::public_dns(region, p.ip)),
                );
            }
            "addresses.association.allocation-id" => {
                out.extend(e.publics().filter_map(|(_, p)| p.allocation_id.clone()));
            }
            "association.allocation-id" => {
                out.extend(public.and_then(|p| p.allocation_id.clone()));
            }
            "addresses.association.association-id" => {
                out.extend(e.publics().filter_map(|(_, p)| p.association_id.clone()));
            }
            "association.association-id" => {
                out.extend(public.and_then(|p| p.association_id.clone()));
            }
            "attachment.attach-time" => {
                out.extend(attachment.map(|a| format_timestamp(a.attach_time)));
            }
            "attachment.delete-on-termination" => {
                out.extend(attachment.map(|a| a.delete_on_termination.to_string()));
            }
            "attachment.device-index" => {
                out.extend(attachment.map(|a| a.device_index.to_string()));
            }
            "attachment.instance-id" => out.extend(attachment.map(|a| a.instance_id.clone())),
            "attachment.instance-owner-id" | "owner-id" => out.push(region.account_id.clone()),
            "attachment.network-card-index" => out.extend(attachment.map(|_| "0".to_string())),
            "attachment.status" => {
                out.extend(attachment.map(|a| a.phase.status().as_str().to_string()));
            }
            "availability-zone" => out.push(e.zone.clone()),
            "description" => out.push(e.description.clone()),
            "group-name" => out.extend(
                e.groups
                    .iter()
                    .filter_map(|g| region.security_groups.get(g))
                    .map(|g| g.name.clone()),
            ),
            "mac-address" => out.push(e.mac.clone()),
            "requester-managed" => out.push(e.requester_managed.to_string()),
            "source-dest-check" => out.push(e.source_dest_check.to_string()),
            // As DescribeInstances shows an attached interface.
            "status" => out.push("in-use".to_string()),
            "tag-key" => out.extend(tags.into_iter().flat_map(|t| t.keys().cloned())),
            "tag-value" => out.extend(tags.into_iter().flat_map(|t| t.values().cloned())),
            _ => {}
        }
    }
    out
}
