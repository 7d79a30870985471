//! Secondary private addresses: AssignPrivateIpAddresses (named addresses, or a count the
//! subnet's lowest free ones fill, within the attached instance type's addresses per
//! interface; with AllowReassignment, an address another interface of the subnet holds as a
//! secondary moves over; or IPv4 prefixes, [`super::prefix`]) and UnassignPrivateIpAddresses.

use std::net::Ipv4Addr;

use crate::ec2::error::Code;
use crate::ec2::{Kind, elastic_ip, subnet};
use crate::generated::ec2::{
    AssignPrivateIpAddressesRequest, AssignPrivateIpAddressesResult, AssignedPrivateIpAddress,
    Ipv4PrefixSpecification, UnassignPrivateIpAddressesRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::lifecycle::{parse_ip, too_many_addresses};
use super::{NetworkInterface, limits, prefix};

/// How many private addresses interface `eni` may hold: its instance type's figure while it
/// is attached to an instance of a known type, else the most any type takes.
fn cap(region: &Region, eni: &NetworkInterface) -> usize {
    eni.attachment
        .as_ref()
        .and_then(|a| region.instances.get(&a.instance_id))
        .and_then(|i| limits::of(i.instance_type))
        .map_or(limits::MOST_PER_INTERFACE, |l| l.ipv4_per_interface)
}

/// The interface of subnet `subnet_id` holding `ip`, if any.
fn holder<'r>(region: &'r Region, subnet_id: &str, ip: Ipv4Addr) -> Option<&'r NetworkInterface> {
    region
        .by_subnet
        .of_kind(subnet_id, "eni")
        .filter_map(|id| region.network_interfaces.get(id))
        .find(|e| e.addresses().any(|a| a == ip))
}

/// The Elastic IP mapped to secondary address `ip` of interface `eni_id`, if any.
fn elastic_ip_at(region: &Region, eni_id: &str, ip: Ipv4Addr) -> Option<String> {
    region
        .network_interfaces
        .get(eni_id)?
        .secondary_public
        .get(&ip)?
        .allocation_id
        .clone()
}

/// `AssignPrivateIpAddresses`.
pub fn assign_private_ip_addresses(
    region: &mut Region,
    input: AssignPrivateIpAddressesRequest,
) -> Result<AssignPrivateIpAddressesResult, ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let prefixes = prefix::asked::<ipnet::Ipv4Net>(
        input.ipv4_prefixes.iter().flatten().map(String::as_str),
        input.ipv4_prefix_count,
    )?;
    if !prefixes.is_empty() {
        if input
            .private_ip_addresses
            .as_ref()
            .is_some_and(|a| !a.is_empty())
            || input.secondary_private_ip_address_count.is_some()
        {
            return Err(ApiError::invalid_combination(
                "You can't assign IPv4 prefixes and private IPv4 addresses in the same request.",
            ));
        }
        let held = eni.addresses().count() + eni.ipv4_prefixes.len();
        if held.saturating_add(prefixes.len()) > cap(region, eni) {
            return Err(too_many_addresses());
        }
        let (eni_id, subnet_id) = (eni.id.clone(), eni.subnet_id.clone());
        let taken = prefix::give(region, &eni_id, &subnet_id, &prefixes)?;
        return Ok(AssignPrivateIpAddressesResult {
            network_interface_id: Some(eni_id),
            assigned_private_ip_addresses: Some(Vec::new()),
            assigned_ipv4_prefixes: Some(
                taken
                    .iter()
                    .map(|p| Ipv4PrefixSpecification {
                        ipv4_prefix: Some(p.to_string()),
                    })
                    .collect(),
            ),
        });
    }
    let mut named = Vec::new();
    for raw in input.private_ip_addresses.as_deref().unwrap_or_default() {
        let ip = parse_ip("privateIpAddress", raw)?;
        if !named.contains(&ip) {
            named.push(ip);
        }
    }
    let count = match (named.is_empty(), input.secondary_private_ip_address_count) {
        (false, Some(_)) => {
            return Err(ApiError::invalid_combination(
                "PrivateIpAddresses and SecondaryPrivateIpAddressCount cannot both be specified.",
            ));
        }
        (true, None) => {
            return Err(ApiError::missing_parameter(
                "PrivateIpAddress or SecondaryPrivateIpAddressCount",
            ));
        }
        (true, Some(n)) if n < 1 => {
            return Err(ApiError::invalid_parameter(
                "secondaryPrivateIpAddressCount",
                &n.to_string(),
                "The count must be at least 1.",
            ));
        }
        (true, Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
        (false, None) => named.len(),
    };
    let held = eni.addresses().count() + eni.ipv4_prefixes.len();
    if held.saturating_add(count) > cap(region, eni) {
        return Err(too_many_addresses());
    }
    let subnet = Kind::Subnet.get(&region.subnets, &eni.subnet_id)?;
    // Every named address checked (and every move decided) before any is taken.
    let mut moves = Vec::new();
    for ip in &named {
        match subnet.check_free(*ip) {
            Ok(()) => {}
            Err(e) => match holder(region, &eni.subnet_id, *ip) {
                Some(h) if h.id == eni.id => return Err(e),
                Some(h) if input.allow_reassignment == Some(true) && h.private_ip != *ip => {
                    moves.push((h.id.clone(), *ip));
                }
                _ => return Err(e),
            },
        }
    }
    if named.is_empty()
        && count > usize::try_from(subnet.assignable_addresses()).unwrap_or(usize::MAX)
    {
        return Err(ApiError::new(
            Code::InsufficientFreeAddressesInSubnet,
            format!(
                "There are not enough free addresses in subnet '{}' to satisfy the requested number of secondary addresses.",
                eni.subnet_id
            ),
        ));
    }
    let (eni_id, subnet_id) = (eni.id.clone(), eni.subnet_id.clone());
    // An Elastic IP mapped to a moved address moves with it.
    let mut follow = Vec::new();
    for (from, ip) in &moves {
        if let Some(alloc) = elastic_ip_at(region, from, *ip) {
            elastic_ip::detach(region, &alloc);
            follow.push((alloc, *ip));
        }
        if let Some(other) = region.network_interfaces.0.get_mut(from) {
            other.secondary_ips.retain(|a| a != ip);
        }
        subnet::release_address(region, &subnet_id, *ip);
    }
    let mut assigned = Vec::with_capacity(count);
    let wanted: Vec<Option<Ipv4Addr>> = if named.is_empty() {
        vec![None; count]
    } else {
        named.into_iter().map(Some).collect()
    };
    for w in wanted {
        let (ip, _, _) = subnet::allocate_address(region, &subnet_id, w)?;
        assigned.push(ip);
    }
    if let Some(e) = region.network_interfaces.0.get_mut(&eni_id) {
        e.secondary_ips.extend(assigned.iter().copied());
    }
    for (alloc, ip) in follow {
        elastic_ip::attach(region, &alloc, &eni_id, Some(ip))?;
    }
    Ok(AssignPrivateIpAddressesResult {
        network_interface_id: Some(eni_id),
        assigned_private_ip_addresses: Some(
            assigned
                .iter()
                .map(|ip| AssignedPrivateIpAddress {
                    private_ip_address: Some(ip.to_string()),
                })
                .collect(),
        ),
        assigned_ipv4_prefixes: Some(Vec::new()),
    })
}

/// `UnassignPrivateIpAddresses`: secondary addresses and prefixes of the interface only;
/// every one named is checked before any goes back to the subnet.
pub fn unassign_private_ip_addresses(
    region: &mut Region,
    input: UnassignPrivateIpAddressesRequest,
) -> Result<(), ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let prefixes = match prefix::asked::<ipnet::Ipv4Net>(
        input.ipv4_prefixes.iter().flatten().map(String::as_str),
        None,
    )? {
        prefix::Asked::Named(list) => list,
        _ => Vec::new(),
    };
    let named = input.private_ip_addresses.as_deref().unwrap_or_default();
    if named.is_empty() && prefixes.is_empty() {
        return Err(ApiError::missing_parameter("PrivateIpAddress"));
    }
    let mut ips = Vec::with_capacity(named.len());
    for raw in named {
        let ip = parse_ip("privateIpAddress", raw)?;
        if ip == eni.private_ip {
            return Err(ApiError::invalid_value(format!(
                "The primary private IP address {ip} of interface {} cannot be unassigned.",
                eni.id
            )));
        }
        if !eni.secondary_ips.contains(&ip) {
            return Err(ApiError::invalid_value(format!(
                "Some of the specified addresses are not assigned to interface {}",
                eni.id
            )));
        }
        ips.push(ip);
    }
    let (eni_id, subnet_id) = (eni.id.clone(), eni.subnet_id.clone());
    prefix::take_back(region, &eni_id, &prefixes)?;
    // An Elastic IP mapped to an address going is disassociated (it stays allocated).
    for ip in &ips {
        if let Some(alloc) = elastic_ip_at(region, &eni_id, *ip) {
            elastic_ip::detach(region, &alloc);
        }
    }
    if let Some(e) = region.network_interfaces.0.get_mut(&eni_id) {
        e.secondary_ips.retain(|a| !ips.contains(a));
    }
    for ip in ips {
        subnet::release_address(region, &subnet_id, ip);
    }
    Ok(())
}
