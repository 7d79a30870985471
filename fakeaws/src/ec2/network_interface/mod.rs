//! Network interfaces: the interfaces other resources make (an instance's primary interface,
//! a NAT gateway's, an interface endpoint's) and those a user makes, attaches to instances
//! and gives more addresses (`lifecycle`, `address`); DescribeNetworkInterfaces, and the
//! attribute calls (`attribute`).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use aws_smithy_types::DateTime;

use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, page, subnet};
use crate::generated::ec2::{
    AttachmentStatus, DescribeNetworkInterfacesRequest, DescribeNetworkInterfacesResult,
    GroupIdentifier, NetworkInterface as NetworkInterfaceOut, NetworkInterfaceAssociation,
    NetworkInterfaceAttachment, NetworkInterfaceIpv6Address, NetworkInterfacePrivateIpAddress,
    NetworkInterfaceStatus, NetworkInterfaceType,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

pub mod address;
pub mod attribute;
pub mod efa;
pub mod ipv6;
pub mod lifecycle;
pub mod limits;
pub mod prefix;
pub mod tracking;

/// Where an attachment is in its life: AttachNetworkInterface's `attaching` and
/// DetachNetworkInterface's `detaching` last until the clock's next step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Phase {
    /// Being attached.
    Attaching,
    /// Attached.
    #[default]
    Attached,
    /// Being detached: the interface is still in use.
    Detaching,
}

impl Phase {
    /// The attachment status AWS shows for it.
    pub fn status(self) -> AttachmentStatus {
        match self {
            Phase::Attaching => AttachmentStatus::Attaching,
            Phase::Attached => AttachmentStatus::Attached,
            Phase::Detaching => AttachmentStatus::Detaching,
        }
    }
}

fn yes() -> bool {
    true
}

/// An interface's attachment to an instance, or to another service's node.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Attachment {
    /// `eni-attach-...`.
    pub id: String,
    /// The instance (empty when `service` holds the interface).
    pub instance_id: String,
    /// The device index (0: primary).
    pub device_index: i32,
    /// When it was attached.
    #[serde(with = "crate::state::with::time")]
    pub attach_time: DateTime,
    /// Whether terminating the instance deletes the interface (true for the interfaces a
    /// launch makes, false for one AttachNetworkInterface attaches).
    #[serde(default = "yes")]
    pub delete_on_termination: bool,
    /// Attaching, attached or detaching.
    #[serde(default)]
    pub phase: Phase,
    /// The service whose node holds the interface (`amazon-elb`), shown as the attachment's
    /// instance owner; no user call may detach it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

/// A public address mapped to an interface.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PublicIp {
    /// The address.
    pub ip: Ipv4Addr,
    /// The Elastic IP it comes from, if any (else an address from the pool, freed with it).
    pub allocation_id: Option<String>,
    /// The Elastic IP association, if any.
    pub association_id: Option<String>,
    /// The service that mapped a pool address for its own node (`amazon-elb`): the
    /// address's owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Whether it is a carrier IP address (a Wavelength Zone's, from its carrier's network),
    /// which AWS shows as `CarrierIp` rather than `PublicIp`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carrier: bool,
}

impl PublicIp {
    /// An address from the region's pool, freed with the interface.
    pub fn pooled(ip: Ipv4Addr) -> Self {
        PublicIp {
            ip,
            allocation_id: None,
            association_id: None,
            service: None,
            carrier: false,
        }
    }

    /// The address if it is a public one of AWS's (not a carrier IP address).
    pub fn public(&self) -> Option<&Self> {
        (!self.carrier).then_some(self)
    }

    /// Who owns the address, as AWS shows it (`IpOwnerId`): the account for its Elastic
    /// IPs, the service for a node's address, `amazon` for the pool's.
    pub fn owner(&self, region: &Region) -> String {
        match (&self.allocation_id, &self.service) {
            (Some(_), _) => region.account_id.clone(),
            (None, Some(service)) => service.clone(),
            (None, None) => "amazon".to_string(),
        }
    }
}

crate::region::table! {
    /// Network interfaces by id.
    NetworkInterfaces of NetworkInterface
}

/// One network interface.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NetworkInterface {
    /// `eni-...`.
    pub id: String,
    /// Its subnet.
    pub subnet_id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Its zone.
    pub zone: String,
    /// Its primary private address.
    pub private_ip: Ipv4Addr,
    /// Its secondary private addresses, in the order they were assigned.
    #[serde(default)]
    pub secondary_ips: Vec<Ipv4Addr>,
    /// Whether it is still `pending` (CreateNetworkInterface's answer, until the clock's next
    /// step).
    #[serde(default)]
    pub pending: bool,
    /// Its MAC address.
    pub mac: String,
    /// Its security groups.
    pub groups: Vec<String>,
    /// `interface`, `nat_gateway`, ...
    pub interface_type: NetworkInterfaceType,
    /// Whether AWS manages it for another service.
    pub requester_managed: bool,
    /// The service that made it, where AWS names one (`amazon-elb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester_id: Option<String>,
    /// Its description.
    pub description: String,
    /// Its attachment, if attached.
    pub attachment: Option<Attachment>,
    /// Its public address (mapped to its primary private address), if any.
    pub public_ip: Option<PublicIp>,
    /// The Elastic IPs mapped to its secondary private addresses, by that address.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secondary_public: BTreeMap<Ipv4Addr, PublicIp>,
    /// The source/destination check.
    pub source_dest_check: bool,
    /// Its IPv6 addresses, in the order they were assigned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ipv6: Vec<std::net::Ipv6Addr>,
    /// Whether it was enabled for a primary IPv6 address (`EnablePrimaryIpv6`): its first
    /// global unicast IPv6 address is then the primary one ([`ipv6::primary`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary_ipv6: bool,
    /// The idle connection tracking timeouts set on it, if any ([`tracking`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking: Option<Box<crate::generated::ec2::ConnectionTrackingConfiguration>>,
    /// Its IPv4 prefixes (/28s of its subnet), in the order they were assigned.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::state::with::text_list"
    )]
    pub ipv4_prefixes: Vec<ipnet::Ipv4Net>,
    /// Its IPv6 prefixes (/80s of its subnet's block), in the order they were assigned.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::state::with::text_list"
    )]
    pub ipv6_prefixes: Vec<ipnet::Ipv6Net>,
}

/// What a new interface is for.
pub struct NewInterface<'a> {
    /// The subnet to take an address from.
    pub subnet_id: &'a str,
    /// Its security groups.
    pub groups: Vec<String>,
    /// Its type.
    pub interface_type: NetworkInterfaceType,
    /// Whether AWS manages it.
    pub requester_managed: bool,
    /// Its description.
    pub description: String,
    /// A private address asked for, if any.
    pub private_ip: Option<Ipv4Addr>,
}

/// Creates an interface, taking an address from its subnet; returns its id.
pub fn create(region: &mut Region, new: NewInterface<'_>) -> Result<String, ApiError> {
    let id = region.ids.resource("eni");
    let mac_bits = region.ids.next_u64();
    let (private_ip, vpc_id, zone) =
        subnet::allocate_address(region, new.subnet_id, new.private_ip)?;
    let mac = format!(
        "0e:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        (mac_bits >> 32) & 0xff,
        (mac_bits >> 24) & 0xff,
        (mac_bits >> 16) & 0xff,
        (mac_bits >> 8) & 0xff,
        mac_bits & 0xff
    );
    region.by_vpc.insert(&vpc_id, &id);
    region.by_subnet.insert(new.subnet_id, &id);
    region.network_interfaces.0.insert(
        id.clone(),
        NetworkInterface {
            id: id.clone(),
            subnet_id: new.subnet_id.to_string(),
            vpc_id,
            zone,
            private_ip,
            secondary_ips: Vec::new(),
            pending: false,
            mac,
            groups: new.groups,
            interface_type: new.interface_type,
            requester_managed: new.requester_managed,
            requester_id: None,
            description: new.description,
            attachment: None,
            public_ip: None,
            secondary_public: BTreeMap::new(),
            source_dest_check: true,
            ipv6: Vec::new(),
            primary_ipv6: false,
            tracking: None,
            ipv4_prefixes: Vec::new(),
            ipv6_prefixes: Vec::new(),
        },
    );
    Ok(id)
}

/// Creates an interface as [`create`] does while the secondary addresses `named` (to be
/// given to it next) are held, so that the subnet does not pick one of them as its primary.
pub fn create_beside(
    region: &mut Region,
    new: NewInterface<'_>,
    named: &[Ipv4Addr],
) -> Result<String, ApiError> {
    let subnet_id = new.subnet_id.to_string();
    let mut held = Vec::with_capacity(named.len());
    let mut made = Ok(());
    for ip in named {
        match subnet::allocate_address(region, &subnet_id, Some(*ip)) {
            Ok(_) => held.push(*ip),
            Err(e) => {
                made = Err(e);
                break;
            }
        }
    }
    let made = made.and_then(|()| create(region, new));
    for ip in held {
        subnet::release_address(region, &subnet_id, ip);
    }
    made
}

/// Deletes an interface: frees its address, its pool public address, and any Elastic IP
/// association.
pub fn delete(region: &mut Region, id: &str) {
    let Some(eni) = region.network_interfaces.0.remove(id) else {
        return;
    };
    for ip in std::iter::once(eni.private_ip).chain(eni.secondary_ips.iter().copied()) {
        subnet::release_address(region, &eni.subnet_id, ip);
    }
    for ip in &eni.ipv6 {
        subnet::release_ipv6(region, &eni.subnet_id, *ip);
    }
    for p in &eni.ipv4_prefixes {
        subnet::release_prefix(region, &eni.subnet_id, *p);
    }
    for p in &eni.ipv6_prefixes {
        subnet::release_ipv6_prefix(region, &eni.subnet_id, *p);
    }
    region.by_vpc.remove(&eni.vpc_id, id);
    region.by_subnet.remove(&eni.subnet_id, id);
    region.tags.remove_resource(id);
    crate::ec2::flow_log::resource_gone(region, id);
    for p in eni
        .public_ip
        .into_iter()
        .chain(eni.secondary_public.into_values())
    {
        match p.allocation_id {
            Some(alloc) => crate::ec2::elastic_ip::forget_association(region, &alloc),
            None => crate::ec2::elastic_ip::give_back_public_ip(region, p.ip),
        }
    }
}

/// Hands interface `id` (just made, requester-managed) to `service`'s node: attached at
/// device index 1 with the service as its instance owner and requester, and, when `public`,
/// an address of the region's pool mapped to it in the service's name (none when the pool
/// is spent). Nothing happens for an interface that does not exist.
pub fn hand_to_service(region: &mut Region, id: &str, service: &str, public: bool) {
    let attachment_id = region.ids.resource("eni-attach");
    let now = region.clock.now_datetime();
    let public_ip = if public {
        crate::ec2::elastic_ip::take_public_ip(region).map(|ip| PublicIp {
            service: Some(service.to_string()),
            ..PublicIp::pooled(ip)
        })
    } else {
        None
    };
    let Some(eni) = region.network_interfaces.0.get_mut(id) else {
        if let Some(p) = public_ip {
            crate::ec2::elastic_ip::give_back_public_ip(region, p.ip);
        }
        return;
    };
    eni.requester_id = Some(service.to_string());
    eni.attachment = Some(Attachment {
        id: attachment_id,
        instance_id: String::new(),
        device_index: 1,
        attach_time: now,
        delete_on_termination: false,
        phase: Phase::Attached,
        service: Some(service.to_string()),
    });
    eni.public_ip = public_ip;
}

/// Maps `public` onto interface `id` (or unmaps it with `None`), at its primary private
/// address or, with `at`, at that secondary one; returns what that address had. Nothing
/// happens for an interface that does not exist.
pub fn set_public_ip(
    region: &mut Region,
    id: &str,
    at: Option<Ipv4Addr>,
    public: Option<PublicIp>,
) -> Option<PublicIp> {
    let eni = region.network_interfaces.0.get_mut(id)?;
    match at.filter(|ip| *ip != eni.private_ip) {
        None => std::mem::replace(&mut eni.public_ip, public),
        Some(ip) => match public {
            Some(p) => eni.secondary_public.insert(ip, p),
            None => eni.secondary_public.remove(&ip),
        },
    }
}

/// Adds `ip` to the secondary private addresses of interface `id` (taken from its subnet
/// by the caller). Nothing happens for an interface that does not exist.
pub fn add_secondary(region: &mut Region, id: &str, ip: Ipv4Addr) {
    if let Some(e) = region.network_interfaces.0.get_mut(id) {
        e.secondary_ips.push(ip);
    }
}

/// Takes `ip` out of the secondary private addresses of interface `id` (the caller gives it
/// back to the subnet). Nothing happens for an interface that does not exist.
pub fn remove_secondary(region: &mut Region, id: &str, ip: Ipv4Addr) {
    if let Some(e) = region.network_interfaces.0.get_mut(id) {
        e.secondary_ips.retain(|a| *a != ip);
    }
}

/// Sets the security groups of interface `id` (one another service manages: its checks are
/// that service's). Nothing happens for an interface that does not exist.
pub fn set_groups(region: &mut Region, id: &str, groups: Vec<String>) {
    if let Some(eni) = region.network_interfaces.0.get_mut(id) {
        eni.groups = groups;
    }
}

/// Attaches interface `id` to an instance as `attachment`; returns its private address.
pub fn attach(region: &mut Region, id: &str, attachment: Attachment) -> Result<Ipv4Addr, ApiError> {
    let eni = Kind::NetworkInterface.get_mut(&mut region.network_interfaces.0, id)?;
    eni.attachment = Some(attachment);
    Ok(eni.private_ip)
}

/// Gives the pool public address mapped to interface `id` back to the pool, if it has one
/// (an instance stopping or terminating); an Elastic IP stays with the interface.
pub fn drop_pool_address(region: &mut Region, id: &str) {
    let pooled = region
        .network_interfaces
        .get(id)
        .and_then(|e| e.public_ip.as_ref())
        .is_some_and(|p| p.allocation_id.is_none());
    if pooled && let Some(p) = set_public_ip(region, id, None, None) {
        crate::ec2::elastic_ip::give_back_public_ip(region, p.ip);
    }
}

/// `InvalidAttachmentID.NotFound` for attachment `id`.
pub fn attachment_not_found(id: &str) -> ApiError {
    ApiError::new(
        crate::ec2::error::Code::InvalidAttachmentIDNotFound,
        format!("The attachment ID '{id}' does not exist."),
    )
}

/// Whether any interface in `vpc_id` has a public address mapped.
pub fn public_addresses_in(region: &Region, vpc_id: &str) -> bool {
    region
        .by_vpc
        .of_kind(vpc_id, "eni")
        .filter_map(|id| region.network_interfaces.get(id))
        .any(|e| e.public_ip.is_some() || !e.secondary_public.is_empty())
}

impl Filterable for (&NetworkInterface, &Region) {
    const NAMES: &'static [&'static str] = &[
        "addresses.private-ip-address",
        "addresses.primary",
        "addresses.association.public-ip",
        "addresses.association.owner-id",
        "association.association-id",
        "association.allocation-id",
        "association.ip-owner-id",
        "association.public-ip",
        "association.public-dns-name",
        "attachment.attachment-id",
        "attachment.attach-time",
        "attachment.delete-on-termination",
        "attachment.device-index",
        "attachment.instance-id",
        "attachment.instance-owner-id",
        "attachment.status",
        "availability-zone",
        "availability-zone-id",
        "description",
        "group-id",
        "group-name",
        "interface-type",
        "ipv6-addresses.ipv6-address",
        "mac-address",
        "network-interface-id",
        "operator.managed",
        "operator.principal",
        "owner-id",
        "private-dns-name",
        "private-ip-address",
        "requester-id",
        "requester-managed",
        "source-dest-check",
        "status",
        "subnet-id",
        "vpc-id",
    ];
    // No operators.
    const NEVER_SET: &'static [&'static str] = &["operator.managed", "operator.principal"];

    fn values(&self, name: &str) -> Vec<String> {
        let (e, region) = *self;
        let public = || e.public_ip.as_ref();
        let att = || e.attachment.as_ref();
        match name {
            "addresses.private-ip-address" | "private-ip-address" => {
                e.addresses().map(|ip| ip.to_string()).collect()
            }
            "addresses.primary" => {
                let mut v = flag(true);
                if !e.secondary_ips.is_empty() {
                    v.extend(flag(false));
                }
                v
            }
            "association.public-ip" => public()
                .and_then(|p| p.public())
                .map(|p| p.ip.to_string())
                .into_iter()
                .collect(),
            "addresses.association.public-ip" => e
                .publics()
                .filter_map(|(_, p)| p.public())
                .map(|p| p.ip.to_string())
                .collect(),
            "association.association-id" => public()
                .and_then(|p| p.association_id.clone())
                .into_iter()
                .collect(),
            "association.allocation-id" => public()
                .and_then(|p| p.allocation_id.clone())
                .into_iter()
                .collect(),
            "association.ip-owner-id" => public().map(|p| p.owner(region)).into_iter().collect(),
            "addresses.association.owner-id" => e.publics().map(|(_, p)| p.owner(region)).collect(),
            "association.public-dns-name" => public()
                .and_then(|p| p.public())
                .map(|p| public_dns(region, p.ip))
                .into_iter()
                .collect(),
            "attachment.attach-time" => att()
                .map(|a| format_timestamp(a.attach_time))
                .into_iter()
                .collect(),
            "attachment.attachment-id" => att().map(|a| a.id.clone()).into_iter().collect(),
            "attachment.delete-on-termination" => att()
                .map(|a| a.delete_on_termination.to_string())
                .into_iter()
                .collect(),
            "attachment.device-index" => att()
                .map(|a| a.device_index.to_string())
                .into_iter()
                .collect(),
            "attachment.instance-id" => att()
                .filter(|a| a.service.is_none())
                .map(|a| a.instance_id.clone())
                .into_iter()
                .collect(),
            "attachment.instance-owner-id" => att()
                .map(|a| {
                    a.service
                        .clone()
                        .unwrap_or_else(|| region.account_id.clone())
                })
                .into_iter()
                .collect(),
            "attachment.status" => att()
                .map(|a| a.phase.status().as_str().to_string())
                .into_iter()
                .collect(),
            "availability-zone" => one(e.zone.clone()),
            "ipv6-addresses.ipv6-address" => e.ipv6.iter().map(ToString::to_string).collect(),
            "availability-zone-id" => region
                .zone(&e.zone)
                .map(|z| one(z.id.clone()))
                .unwrap_or_default(),
            "description" => one(e.description.clone()),
            "group-id" => e.groups.clone(),
            "group-name" => e
                .groups
                .iter()
                .filter_map(|g| region.security_groups.get(g).map(|g| g.name.clone()))
                .collect(),
            "interface-type" => one(e.interface_type.as_str()),
            "mac-address" => one(e.mac.clone()),
            "network-interface-id" => one(e.id.clone()),
            "owner-id" => one(region.account_id.clone()),
            "private-dns-name" => one(private_dns(region, e.private_ip)),
            "requester-id" => e.requester_id.clone().into_iter().collect(),
            "requester-managed" => flag(e.requester_managed),
            "source-dest-check" => flag(e.source_dest_check),
            "status" => one(status(e).as_str()),
            "subnet-id" => one(e.subnet_id.clone()),
            "vpc-id" => one(e.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

/// `ip-10-0-1-5.ec2.internal` (us-east-1) or `ip-10-0-1-5.REGION.compute.internal`.
pub fn private_dns(region: &Region, ip: Ipv4Addr) -> String {
    let host = format!("ip-{}", ip.to_string().replace('.', "-"));
    if region.name == "us-east-1" {
        format!("{host}.ec2.internal")
    } else {
        format!("{host}.{}.compute.internal", region.name)
    }
}

/// `ec2-203-0-113-5.compute-1.amazonaws.com` style public DNS names.
pub fn public_dns(region: &Region, ip: Ipv4Addr) -> String {
    let host = format!("ec2-{}", ip.to_string().replace('.', "-"));
    if region.name == "us-east-1" {
        format!("{host}.compute-1.amazonaws.com")
    } else {
        format!("{host}.{}.compute.amazonaws.com", region.name)
    }
}

fn status(e: &NetworkInterface) -> NetworkInterfaceStatus {
    if e.pending {
        NetworkInterfaceStatus::Pending
    } else if e.in_use() {
        NetworkInterfaceStatus::InUse
    } else {
        NetworkInterfaceStatus::Available
    }
}

impl NetworkInterface {
    /// Whether it is attached (or being attached or detached), or another service's: what
    /// keeps it from DeleteNetworkInterface and from another attachment.
    pub fn in_use(&self) -> bool {
        self.attachment.is_some() || self.requester_managed
    }

    /// Its private addresses, the primary first.
    pub fn addresses(&self) -> impl Iterator<Item = Ipv4Addr> + '_ {
        std::iter::once(self.private_ip).chain(self.secondary_ips.iter().copied())
    }

    /// The public address mapped to its private address `ip`, if any.
    pub fn public_at(&self, ip: Ipv4Addr) -> Option<&PublicIp> {
        if ip == self.private_ip {
            self.public_ip.as_ref()
        } else {
            self.secondary_public.get(&ip)
        }
    }

    /// Its public addresses with the private address each is mapped to, the primary's
    /// first.
    pub fn publics(&self) -> impl Iterator<Item = (Ipv4Addr, &PublicIp)> + '_ {
        self.public_ip
            .iter()
            .map(|p| (self.private_ip, p))
            .chain(self.secondary_public.iter().map(|(ip, p)| (*ip, p)))
    }
}

/// The SDK shape of security groups `groups`: each id with its name.
pub fn group_identifiers(region: &Region, groups: &[String]) -> Vec<GroupIdentifier> {
    groups
        .iter()
        .map(|g| GroupIdentifier {
            group_id: Some(g.clone()),
            group_name: region.security_groups.get(g).map(|s| s.name.clone()),
        })
        .collect()
}

/// The SDK shape of an interface's attachment.
pub fn render_attachment(region: &Region, a: &Attachment) -> NetworkInterfaceAttachment {
    NetworkInterfaceAttachment {
        attach_time: Some(a.attach_time),
        attachment_id: Some(a.id.clone()),
        delete_on_termination: Some(a.delete_on_termination),
        device_index: Some(a.device_index),
        network_card_index: Some(0),
        instance_id: a.service.is_none().then(|| a.instance_id.clone()),
        instance_owner_id: Some(
            a.service
                .clone()
                .unwrap_or_else(|| region.account_id.clone()),
        ),
        status: Some(a.phase.status()),
        ..Default::default()
    }
}

/// The SDK shape of an interface.
pub fn render(region: &Region, e: &NetworkInterface) -> NetworkInterfaceOut {
    let association = |p: &PublicIp| NetworkInterfaceAssociation {
        allocation_id: p.allocation_id.clone(),
        association_id: p.association_id.clone(),
        ip_owner_id: Some(p.owner(region)),
        public_dns_name: p.public().map(|p| public_dns(region, p.ip)),
        public_ip: p.public().map(|p| p.ip.to_string()),
        carrier_ip: p.carrier.then(|| p.ip.to_string()),
        ..Default::default()
    };
    let primary6 = ipv6::primary(e);
    NetworkInterfaceOut {
        association: e.public_ip.as_ref().map(association),
        attachment: e.attachment.as_ref().map(|a| render_attachment(region, a)),
        availability_zone: Some(e.zone.clone()),
        availability_zone_id: region.zone(&e.zone).map(|z| z.id.clone()),
        description: Some(e.description.clone()),
        groups: Some(group_identifiers(region, &e.groups)),
        interface_type: Some(e.interface_type),
        ipv6_addresses: Some(
            e.ipv6
                .iter()
                .map(|ip| NetworkInterfaceIpv6Address {
                    ipv6_address: Some(ip.to_string()),
                    is_primary_ipv6: Some(primary6 == Some(*ip)),
                    public_ipv6_dns_name: None,
                })
                .collect(),
        ),
        mac_address: Some(e.mac.clone()),
        network_interface_id: Some(e.id.clone()),
        owner_id: Some(region.account_id.clone()),
        private_dns_name: Some(private_dns(region, e.private_ip)),
        private_ip_address: Some(e.private_ip.to_string()),
        private_ip_addresses: Some(
            e.addresses()
                .enumerate()
                .map(|(n, ip)| NetworkInterfacePrivateIpAddress {
                    association: e.public_at(ip).map(association),
                    primary: Some(n == 0),
                    private_dns_name: Some(private_dns(region, ip)),
                    private_ip_address: Some(ip.to_string()),
                })
                .collect(),
        ),
        requester_id: e.requester_id.clone(),
        requester_managed: Some(e.requester_managed),
        source_dest_check: Some(e.source_dest_check),
        status: Some(status(e)),
        subnet_id: Some(e.subnet_id.clone()),
        tag_set: region.tags.listed(&e.id),
        vpc_id: Some(e.vpc_id.clone()),
        connection_tracking_configuration: e.tracking.as_deref().cloned(),
        ipv4_prefixes: (!e.ipv4_prefixes.is_empty()).then(|| {
            e.ipv4_prefixes
                .iter()
                .map(|p| crate::generated::ec2::Ipv4PrefixSpecification {
                    ipv4_prefix: Some(p.to_string()),
                })
                .collect()
        }),
        ipv6_prefixes: (!e.ipv6_prefixes.is_empty()).then(|| {
            e.ipv6_prefixes
                .iter()
                .map(|p| crate::generated::ec2::Ipv6PrefixSpecification {
                    ipv6_prefix: Some(p.to_string()),
                })
                .collect()
        }),
        ..Default::default()
    }
}

/// `DescribeNetworkInterfaces`.
pub fn describe_network_interfaces(
    region: &mut Region,
    input: DescribeNetworkInterfacesRequest,
) -> Result<DescribeNetworkInterfacesResult, ApiError> {
    let filters = Filters::parse::<(&NetworkInterface, &Region)>(input.filters)?;
    let region = &*region;
    if input
        .network_interface_ids
        .as_ref()
        .is_some_and(|i| !i.is_empty())
        && input.max_results.is_some()
    {
        return Err(ApiError::invalid_combination(
            "The parameter networkInterfaceIdSet cannot be used with the parameter maxResults",
        ));
    }
    let found = Kind::NetworkInterface.describe(
        &region.consistency,
        &region.network_interfaces,
        input.network_interface_ids.as_deref(),
        region.candidates(Kind::NetworkInterface, &filters),
        |e| filters.matches(&(e, region), region.tags.get(&e.id)),
    )?;
    let (items, next) = page::page(
        found,
        |e| e.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeNetworkInterfacesResult {
        network_interfaces: Some(items.into_iter().map(|e| render(region, e)).collect()),
        next_token: next,
    })
}
