//! The filters of DescribeInstances.

use crate::ec2::filter::{Filterable, one};
use crate::ec2::network_interface;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

use super::*;

impl Filterable for (&Instance, &Region) {
    // Linux (no platform), and no dedicated host, product code or requester.
    const NEVER_SET: &'static [&'static str] =
        &["affinity", "platform", "product-code", "requester-id"];
    const NAMES: &'static [&'static str] = &[
        "affinity",
        "architecture",
        "availability-zone",
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
        let public = eni.and_then(|e| e.public_ip.as_ref());
        // Every interface attached to it, the primary first.
        let enis = || interfaces(region, i);
        let attachments = || {
            i.volumes
                .iter()
                .filter_map(|(_, v)| region.volumes.get(v))
                .filter_map(|v| v.attachment.as_ref())
        };
        match name {
            "architecture" => one(i.architecture.as_str()),
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
            "ip-address" => public.map(|p| p.ip.to_string()).into_iter().collect(),
            "network-interface.association.public-ip" => enis()
                .filter_map(|e| e.public_ip.as_ref().map(|p| p.ip.to_string()))
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
            "virtualization-type" => one("hvm"),
            // NEVER_SET, and names outside NAMES, which `Filters::parse` refuses.
            _ => Vec::new(),
        }
    }
}
