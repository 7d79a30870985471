//! The interfaces a user makes: CreateNetworkInterface (`pending` until the clock's next
//! step), AttachNetworkInterface (`attaching`, then `attached`), DetachNetworkInterface
//! (`detaching`, then the interface is `available` again) and DeleteNetworkInterface (only an
//! interface nothing uses), and what an instance's termination does to its interfaces.

use std::net::Ipv4Addr;

use crate::ec2::error::Code;
use crate::ec2::instance;
use crate::ec2::{Kind, fingerprint, security_group, subnet, tags};
use crate::generated::ec2::{
    AttachNetworkInterfaceRequest, AttachNetworkInterfaceResult, CreateNetworkInterfaceRequest,
    CreateNetworkInterfaceResult, DeleteNetworkInterfaceRequest, DetachNetworkInterfaceRequest,
    InstanceStateName, PrivateIpAddressSpecification, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::ipv6::Ipv6Requested;
use super::{Attachment, NewInterface, Phase, limits, render};

/// A private address given in a request: an IPv4 address, or AWS's answer naming `param`.
pub(crate) fn parse_ip(param: &str, raw: &str) -> Result<Ipv4Addr, ApiError> {
    raw.trim()
        .parse()
        .ok()
        .filter(|_| raw.trim() == raw)
        .ok_or_else(|| ApiError::invalid_parameter(param, raw, "Not an IPv4 address."))
}

/// The private addresses a new interface asks for (CreateNetworkInterface, or an interface
/// of a launch): its primary, if named, and its secondaries, named or counted.
pub struct Requested {
    /// The primary address, if named.
    pub primary: Option<Ipv4Addr>,
    /// The secondary addresses named.
    pub named: Vec<Ipv4Addr>,
    /// How many secondary addresses the subnet's lowest free ones fill.
    pub count: usize,
}

impl Requested {
    /// From `PrivateIpAddress`, `PrivateIpAddresses` (at most one marked primary, agreeing
    /// with `PrivateIpAddress`) and `SecondaryPrivateIpAddressCount` (not with named
    /// secondaries), each address once, at most [`limits::MOST_PER_INTERFACE`] in all.
    pub fn parse(
        private_ip_address: Option<&str>,
        specs: &[PrivateIpAddressSpecification],
        count: Option<i32>,
    ) -> Result<Self, ApiError> {
        let mut primary = private_ip_address
            .map(|raw| parse_ip("privateIpAddress", raw))
            .transpose()?;
        if specs.iter().filter(|s| s.primary == Some(true)).count() > 1 {
            return Err(ApiError::invalid_value(
                "Only one of the private IP addresses may be primary.",
            ));
        }
        let mut named = Vec::new();
        for spec in specs {
            let raw = spec.private_ip_address.as_deref().ok_or_else(|| {
                ApiError::missing_parameter("PrivateIpAddresses.N.PrivateIpAddress")
            })?;
            let ip = parse_ip("privateIpAddresses", raw)?;
            if spec.primary == Some(true) {
                if primary.is_some_and(|p| p != ip) {
                    return Err(ApiError::invalid_combination(
                        "The primary private IP address given in PrivateIpAddress differs from the one marked primary in PrivateIpAddresses.",
                    ));
                }
                primary = Some(ip);
            } else {
                if primary == Some(ip) || named.contains(&ip) {
                    return Err(ApiError::invalid_value(format!(
                        "The address {ip} is given more than once."
                    )));
                }
                named.push(ip);
            }
        }
        if primary.is_some_and(|p| named.contains(&p)) {
            return Err(ApiError::invalid_value(
                "The primary address is given again as a secondary address.",
            ));
        }
        let count = match count {
            None => 0,
            Some(n) if n >= 1 && named.is_empty() => usize::try_from(n).unwrap_or(usize::MAX),
            Some(n) if n >= 1 => {
                return Err(ApiError::invalid_combination(
                    "SecondaryPrivateIpAddressCount cannot be used with secondary addresses named in PrivateIpAddresses.",
                ));
            }
            Some(n) => {
                return Err(ApiError::invalid_parameter(
                    "secondaryPrivateIpAddressCount",
                    &n.to_string(),
                    "The count must be at least 1.",
                ));
            }
        };
        let requested = Requested {
            primary,
            named,
            count,
        };
        if requested.addresses() > limits::MOST_PER_INTERFACE {
            return Err(too_many_addresses());
        }
        Ok(requested)
    }

    /// How many addresses the interface holds, its primary included.
    pub fn addresses(&self) -> usize {
        1 + self.named.len() + self.count
    }

    /// Checks the named addresses are free in `subnet_id`.
    pub fn check_free(&self, region: &Region, subnet_id: &str) -> Result<(), ApiError> {
        let subnet = Kind::Subnet.get(&region.subnets, subnet_id)?;
        for ip in self.primary.iter().chain(&self.named) {
            subnet.check_free(*ip)?;
        }
        Ok(())
    }

    /// Gives interface `id` (made with the primary address) its secondary addresses.
    pub fn give_secondaries(&self, region: &mut Region, id: &str) -> Result<(), ApiError> {
        let subnet_id = Kind::NetworkInterface
            .get(&region.network_interfaces, id)?
            .subnet_id
            .clone();
        let mut secondaries = Vec::with_capacity(self.named.len() + self.count);
        let wanted = self
            .named
            .iter()
            .copied()
            .map(Some)
            .chain((0..self.count).map(|_| None));
        for w in wanted {
            let (ip, _, _) = subnet::allocate_address(region, &subnet_id, w)?;
            secondaries.push(ip);
        }
        if let Some(eni) = region.network_interfaces.0.get_mut(id) {
            eni.secondary_ips.extend(secondaries);
        }
        Ok(())
    }
}

/// `InsufficientFreeAddressesInSubnet` unless `subnet_id` has `needed` free addresses.
pub fn check_room(region: &Region, subnet_id: &str, needed: usize) -> Result<(), ApiError> {
    let subnet = Kind::Subnet.get(&region.subnets, subnet_id)?;
    if needed > usize::try_from(subnet.assignable_addresses()).unwrap_or(usize::MAX) {
        return Err(ApiError::new(
            Code::InsufficientFreeAddressesInSubnet,
            format!(
                "There are not enough free addresses in subnet '{subnet_id}' to satisfy the requested number of addresses."
            ),
        ));
    }
    Ok(())
}

/// `CreateNetworkInterface`: an interface in a subnet, with its security groups (the VPC's
/// default group when none are named) and addresses (the lowest free ones unless named);
/// `pending` until the clock's next step. A ClientToken makes retries answer the same
/// interface.
pub fn create_network_interface(
    region: &mut Region,
    mut input: CreateNetworkInterfaceRequest,
) -> Result<CreateNetworkInterfaceResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateNetworkInterface", token.as_deref(), &print)?
        && let Some(e) = region.network_interfaces.get(&id)
    {
        return Ok(CreateNetworkInterfaceResult {
            network_interface: Some(render(region, e)),
            client_token: token,
        });
    }
    let subnet = Kind::Subnet.get(&region.subnets, &input.subnet_id)?;
    let vpc_id = subnet.vpc_id.clone();
    let interface_type = super::efa::asked(input.interface_type.as_ref().map(|t| t.as_str()))?;
    let requested = Requested::parse(
        input.private_ip_address.as_deref(),
        input.private_ip_addresses.as_deref().unwrap_or_default(),
        input.secondary_private_ip_address_count,
    )?;
    let asked_ipv6 = input.ipv6_address_count.is_some()
        || input.ipv6_addresses.as_ref().is_some_and(|a| !a.is_empty());
    let (prefixes, prefixes6) = super::prefix::asked_by_interface(
        input.ipv4_prefixes.as_deref(),
        input.ipv4_prefix_count,
        input.ipv6_prefixes.as_deref(),
        input.ipv6_prefix_count,
        requested.addresses() > 1,
        asked_ipv6,
    )?;
    if requested.addresses() + prefixes.len() > limits::MOST_PER_INTERFACE {
        return Err(too_many_addresses());
    }
    requested.check_free(region, &input.subnet_id)?;
    check_room(region, &input.subnet_id, requested.addresses())?;
    let ipv6 = Ipv6Requested::from_instance_addresses(
        input.ipv6_address_count,
        input.ipv6_addresses.as_deref(),
    )?
    .or_subnet_default(region, &input.subnet_id);
    ipv6.check(region, &input.subnet_id)?;
    let primary_ipv6 = input.enable_primary_ipv6 == Some(true);
    if primary_ipv6 {
        super::ipv6::check_primary(region, &input.subnet_id)?;
    }
    if ipv6.total() + prefixes6.len() > limits::MOST_PER_INTERFACE {
        return Err(ApiError::invalid_value(format!(
            "A network interface takes at most {} IPv6 addresses.",
            limits::MOST_PER_INTERFACE
        )));
    }
    let groups = security_group::of_new_interface(region, &vpc_id, input.groups.iter().flatten())?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::NetworkInterface,
    )?;
    let tracking = super::tracking::asked(input.connection_tracking_specification.as_ref())?;
    if region.network_interfaces.len() >= region.limits.network_interfaces {
        return Err(ApiError::new(
            Code::NetworkInterfaceLimitExceeded,
            "You have reached the maximum number of network interfaces in this region.",
        ));
    }
    let id = super::create_beside(
        region,
        NewInterface {
            subnet_id: &input.subnet_id,
            groups,
            interface_type,
            requester_managed: false,
            description: input.description.take().unwrap_or_default(),
            private_ip: requested.primary,
        },
        &requested.named,
    )?;
    requested.give_secondaries(region, &id)?;
    let prefixes_given = super::prefix::give(region, &id, &input.subnet_id, &prefixes)
        .and_then(|_| super::prefix::give(region, &id, &input.subnet_id, &prefixes6));
    if let Err(e) = prefixes_given {
        // No prefix to be had: nothing is made.
        super::delete(region, &id);
        return Err(e);
    }
    ipv6.give(region, &id)?;
    if primary_ipv6 {
        super::ipv6::enable_primary(region, &id);
    }
    if let Some(t) = &tracking {
        super::tracking::apply(region, &id, t);
    }
    region.tags.insert(&id, tags);
    region
        .ledger
        .record("CreateNetworkInterface", token.as_deref(), &print, &id);
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::NetworkInterface, &id);
    if let Some(eni) = region.network_interfaces.0.get_mut(&id) {
        eni.pending = true;
    }
    let eni = Kind::NetworkInterface.get(&region.network_interfaces, &id)?;
    let out = render(region, eni);
    Ok(CreateNetworkInterfaceResult {
        network_interface: Some(out),
        client_token: token,
    })
}

/// `PrivateIpAddressLimitExceeded`, AWS's answer to more addresses than an interface takes.
pub fn too_many_addresses() -> ApiError {
    ApiError::new(
        Code::PrivateIpAddressLimitExceeded,
        "Number of private addresses will exceed limit.",
    )
}

/// AWS's answer to deleting or attaching an interface something uses.
fn in_use(id: &str) -> ApiError {
    ApiError::invalid_value(format!("Network interface '{id}' is currently in use."))
}

/// `DeleteNetworkInterface`: only an interface that is not attached (nor being detached) and
/// that no other service manages; its addresses go back to its subnet.
pub fn delete_network_interface(
    region: &mut Region,
    input: DeleteNetworkInterfaceRequest,
) -> Result<(), ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    if eni.in_use() {
        return Err(in_use(&eni.id));
    }
    super::delete(region, &input.network_interface_id);
    Ok(())
}

/// `AttachNetworkInterface`: an interface to a running or stopped instance in its zone, at a
/// free device index, within the instance type's interface count; `attaching` until the
/// clock's next step. Terminating the instance leaves the interface (DeleteOnTermination is
/// false until ModifyNetworkInterfaceAttribute sets it).
pub fn attach_network_interface(
    region: &mut Region,
    input: AttachNetworkInterfaceRequest,
) -> Result<AttachNetworkInterfaceResult, ApiError> {
    if input.network_card_index.is_some_and(|n| n != 0) {
        return Err(ApiError::not_implemented(
            "fakeaws models instance types with one network card: NetworkCardIndex must be 0",
        ));
    }
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let instance = Kind::Instance.get(&region.instances, &input.instance_id)?;
    if eni.in_use() {
        return Err(ApiError::new(
            Code::InvalidNetworkInterfaceInUse,
            format!("Interface: [{}] in use.", eni.id),
        ));
    }
    if !matches!(
        instance.state,
        InstanceStateName::Running | InstanceStateName::Stopped
    ) {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!(
                "The instance '{}' is not in a state from which a network interface can be attached.",
                instance.id
            ),
        ));
    }
    if eni.vpc_id != instance.vpc_id || eni.zone != instance.zone {
        return Err(ApiError::invalid_combination(format!(
            "Network interface '{}' and instance '{}' must be in the same VPC and availability zone.",
            eni.id, instance.id
        )));
    }
    if input.device_index < 0 {
        return Err(ApiError::invalid_parameter(
            "deviceIndex",
            &input.device_index.to_string(),
            "The device index must be 0 or more.",
        ));
    }
    let attached: Vec<i32> = instance::interfaces(region, instance)
        .filter_map(|e| e.attachment.as_ref().map(|a| a.device_index))
        .collect();
    if super::efa::is_efa(eni.interface_type) {
        super::efa::check(
            instance.instance_type,
            super::efa::on_instance(region, instance) + 1,
        )?;
    }
    if attached.contains(&input.device_index) {
        return Err(ApiError::invalid_value(format!(
            "Instance '{}' already has an interface attached at device index '{}'.",
            instance.id, input.device_index
        )));
    }
    let count = attached.len() + 1;
    if let Some(l) = limits::of(instance.instance_type) {
        if count > l.interfaces {
            return Err(ApiError::new(
                Code::AttachmentLimitExceeded,
                format!(
                    "Interface count {count} exceeds the limit for {}",
                    instance.instance_type.as_str()
                ),
            ));
        }
        if eni.addresses().count() > l.ipv4_per_interface {
            return Err(too_many_addresses());
        }
    }
    let instance_id = instance.id.clone();
    let attachment_id = region.ids.resource("eni-attach");
    let attachment = Attachment {
        id: attachment_id.clone(),
        instance_id: instance_id.clone(),
        device_index: input.device_index,
        attach_time: region.clock.now_datetime(),
        delete_on_termination: false,
        phase: Phase::Attaching,
        service: None,
    };
    super::attach(region, &input.network_interface_id, attachment)?;
    instance::add_interface(region, &instance_id, &input.network_interface_id);
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::NetworkInterface, &input.network_interface_id);
    Ok(AttachNetworkInterfaceResult {
        attachment_id: Some(attachment_id),
        network_card_index: Some(0),
    })
}

/// `DetachNetworkInterface`: a secondary interface, by its attachment; `detaching` (and in
/// use) until the clock's next step, then `available`. The primary interface stays.
pub fn detach_network_interface(
    region: &mut Region,
    input: DetachNetworkInterfaceRequest,
) -> Result<(), ApiError> {
    let Some((id, attachment)) = region.network_interfaces.values().find_map(|e| {
        e.attachment
            .as_ref()
            .filter(|a| a.id == input.attachment_id)
            .map(|a| (e.id.clone(), a))
    }) else {
        return Err(super::attachment_not_found(&input.attachment_id));
    };
    if attachment.service.is_some() {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            "You are not allowed to manage 'eni-attach' attachments.",
        ));
    }
    if attachment.device_index == 0 {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            "The network interface at device index 0 and networkCard index 0 cannot be detached.",
        ));
    }
    if attachment.phase == Phase::Detaching {
        return Ok(());
    }
    if let Some(a) = region
        .network_interfaces
        .0
        .get_mut(&id)
        .and_then(|e| e.attachment.as_mut())
    {
        a.phase = Phase::Detaching;
    }
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::NetworkInterface, &id);
    Ok(())
}

/// Finishes what interface `id` was doing: `pending` becomes `available`, `attaching`
/// `attached`, and `detaching` leaves it unattached.
pub fn advance(region: &mut Region, id: &str) {
    let Some(eni) = region.network_interfaces.0.get_mut(id) else {
        return;
    };
    eni.pending = false;
    let detached = match eni.attachment.as_mut() {
        Some(a) if a.phase == Phase::Attaching => {
            a.phase = Phase::Attached;
            None
        }
        Some(a) if a.phase == Phase::Detaching => Some(a.instance_id.clone()),
        _ => None,
    };
    if let Some(instance_id) = detached {
        eni.attachment = None;
        instance::drop_interface(region, &instance_id, id);
    }
}

/// What terminating an instance does to its interfaces: each that is deleted on termination
/// goes (the primary, unless told otherwise), the others are detached and `available`.
pub fn release_for(region: &mut Region, instance_id: &str) {
    for id in instance::take_interfaces(region, instance_id) {
        let Some(eni) = region.network_interfaces.0.get_mut(&id) else {
            continue;
        };
        match eni.attachment.as_ref() {
            Some(a) if a.instance_id == instance_id && a.delete_on_termination => {
                super::delete(region, &id);
            }
            Some(a) if a.instance_id == instance_id => {
                eni.attachment = None;
                super::drop_pool_address(region, &id);
            }
            _ => {}
        }
    }
}
