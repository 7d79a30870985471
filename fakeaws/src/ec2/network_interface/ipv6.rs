//! A network interface's IPv6 addresses: asked for by CreateNetworkInterface and RunInstances
//! (`Ipv6AddressCount` or `Ipv6Addresses`, and one by default in a subnet that has
//! `AssignIpv6AddressOnCreation`), added by AssignIpv6Addresses and given back by
//! UnassignIpv6Addresses. Each comes from the interface's subnet's /64: a named one must be
//! free and not one AWS keeps (the block's first four and its last), the others are drawn at
//! random, as AWS draws them. IPv6 prefixes (`Ipv6Prefixes`, `Ipv6PrefixCount`):
//! [`super::prefix`].
//!
//! An interface enabled for a primary IPv6 address (`EnablePrimaryIpv6` of RunInstances,
//! CreateNetworkInterface and ModifyNetworkInterfaceAttribute, a launch interface's
//! `PrimaryIpv6`) has its first global unicast address (GUA, `2000::/3`) as its primary
//! IPv6 address (`IsPrimaryIpv6`), as the model documents: only in a subnet with an IPv6
//! block, never disabled once enabled, and the primary address is not unassigned.

use std::net::Ipv6Addr;

use ipnet::Ipv6Net;

use crate::ec2::network_interface::{limits, prefix};
use crate::ec2::{Kind, subnet};
use crate::generated::ec2::{
    AssignIpv6AddressesRequest, AssignIpv6AddressesResult, InstanceIpv6Address,
    UnassignIpv6AddressesRequest, UnassignIpv6AddressesResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The IPv6 addresses a request asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ipv6Requested {
    /// The addresses named.
    pub named: Vec<Ipv6Addr>,
    /// How many more the subnet draws.
    pub count: usize,
}

impl Ipv6Requested {
    /// From `Ipv6AddressCount` (at least 1) or `Ipv6Addresses` (each once), not both; at
    /// most [`limits::MOST_PER_INTERFACE`].
    pub fn parse<'a>(
        count: Option<i32>,
        addresses: impl IntoIterator<Item = Option<&'a str>>,
    ) -> Result<Self, ApiError> {
        let mut named = Vec::new();
        for raw in addresses {
            let raw = raw.ok_or_else(|| ApiError::missing_parameter("Ipv6Addresses.N"))?;
            let ip: Ipv6Addr = raw.parse().map_err(|_| {
                ApiError::invalid_parameter("ipv6Addresses", raw, "This is not an IPv6 address.")
            })?;
            if named.contains(&ip) {
                return Err(ApiError::invalid_value(format!(
                    "The address {ip} is given more than once."
                )));
            }
            named.push(ip);
        }
        let count = match count {
            None => 0,
            Some(_) if !named.is_empty() => {
                return Err(ApiError::invalid_combination(
                    "Ipv6AddressCount cannot be used with Ipv6Addresses.",
                ));
            }
            Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
            Some(n) => {
                return Err(ApiError::invalid_parameter(
                    "ipv6AddressCount",
                    &n.to_string(),
                    "The count must be at least 1.",
                ));
            }
        };
        let requested = Ipv6Requested { named, count };
        if requested.total() > limits::MOST_PER_INTERFACE {
            return Err(too_many());
        }
        Ok(requested)
    }

    /// From a list of `InstanceIpv6Address`es (CreateNetworkInterface, RunInstances).
    pub fn from_instance_addresses(
        count: Option<i32>,
        addresses: Option<&[InstanceIpv6Address]>,
    ) -> Result<Self, ApiError> {
        Self::parse(
            count,
            addresses
                .unwrap_or_default()
                .iter()
                .map(|a| a.ipv6_address.as_deref()),
        )
    }

    /// From a list of addresses as text (AssignIpv6Addresses, UnassignIpv6Addresses).
    pub fn from_texts(count: Option<i32>, addresses: Option<&[String]>) -> Result<Self, ApiError> {
        Self::parse(
            count,
            addresses
                .unwrap_or_default()
                .iter()
                .map(|a| Some(a.as_str())),
        )
    }

    /// How many addresses it asks for.
    pub fn total(&self) -> usize {
        self.named.len() + self.count
    }

    /// What a new interface in subnet `subnet_id` takes: what was asked for, or one address
    /// when nothing was and the subnet has `AssignIpv6AddressOnCreation`.
    pub fn or_subnet_default(self, region: &Region, subnet_id: &str) -> Self {
        let default = region
            .subnets
            .get(subnet_id)
            .is_some_and(|s| s.assign_ipv6_on_creation);
        if self.total() == 0 && default {
            Ipv6Requested {
                named: Vec::new(),
                count: 1,
            }
        } else {
            self
        }
    }

    /// Checks that subnet `subnet_id` can give them: it has an IPv6 block, and the named
    /// addresses are its own, usable and free.
    pub fn check(&self, region: &Region, subnet_id: &str) -> Result<(), ApiError> {
        if self.total() == 0 {
            return Ok(());
        }
        let subnet = Kind::Subnet.get(&region.subnets, subnet_id)?;
        if subnet.ipv6.is_none() {
            return Err(subnet::no_ipv6_block(subnet_id));
        }
        for ip in &self.named {
            subnet.check_free_ipv6(*ip)?;
        }
        Ok(())
    }

    /// Gives interface `id` the addresses, from its subnet; returns them.
    pub fn give(&self, region: &mut Region, id: &str) -> Result<Vec<Ipv6Addr>, ApiError> {
        if self.total() == 0 {
            return Ok(Vec::new());
        }
        let subnet_id = Kind::NetworkInterface
            .get(&region.network_interfaces, id)?
            .subnet_id
            .clone();
        let wanted = self
            .named
            .iter()
            .copied()
            .map(Some)
            .chain((0..self.count).map(|_| None));
        let mut given = Vec::with_capacity(self.total());
        for w in wanted {
            given.push(subnet::allocate_ipv6(region, &subnet_id, w)?);
        }
        if let Some(eni) = region.network_interfaces.0.get_mut(id) {
            eni.ipv6.extend(given.iter().copied());
        }
        Ok(given)
    }
}

/// `e`'s primary IPv6 address: its first global unicast one, when it is enabled for one.
pub fn primary(e: &super::NetworkInterface) -> Option<Ipv6Addr> {
    if !e.primary_ipv6 {
        return None;
    }
    e.ipv6
        .iter()
        .copied()
        .find(|ip| ip.segments()[0] & 0xe000 == 0x2000)
}

/// Fails unless an interface of subnet `subnet_id` may be enabled for a primary IPv6
/// address: the subnet has an IPv6 block (a dual-stack or IPv6-only subnet).
pub fn check_primary(region: &Region, subnet_id: &str) -> Result<(), ApiError> {
    let subnet = Kind::Subnet.get(&region.subnets, subnet_id)?;
    if subnet.ipv6.is_none() {
        return Err(ApiError::invalid_value(format!(
            "A primary IPv6 address needs a subnet with an IPv6 CIDR block; the subnet \
             {subnet_id} has none."
        )));
    }
    Ok(())
}

/// Enables interface `id` for a primary IPv6 address (checked by [`check_primary`]).
pub fn enable_primary(region: &mut Region, id: &str) {
    if let Some(e) = region.network_interfaces.0.get_mut(id) {
        e.primary_ipv6 = true;
    }
}

/// The refusal of more IPv6 addresses than an interface takes.
fn too_many() -> ApiError {
    ApiError::invalid_value(format!(
        "A network interface takes at most {} IPv6 addresses.",
        limits::MOST_PER_INTERFACE
    ))
}

/// `AssignIpv6Addresses`: more addresses for an interface in a subnet with an IPv6 block.
pub fn assign_ipv6_addresses(
    region: &mut Region,
    input: AssignIpv6AddressesRequest,
) -> Result<AssignIpv6AddressesResult, ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let requested =
        Ipv6Requested::from_texts(input.ipv6_address_count, input.ipv6_addresses.as_deref())?;
    let prefixes = prefix::asked::<Ipv6Net>(
        input.ipv6_prefixes.iter().flatten().map(String::as_str),
        input.ipv6_prefix_count,
    )?;
    let held = eni.ipv6.len() + eni.ipv6_prefixes.len();
    if !prefixes.is_empty() {
        if requested.total() > 0 {
            return Err(ApiError::invalid_combination(
                "You can't assign IPv6 prefixes and IPv6 addresses in the same request.",
            ));
        }
        if held + prefixes.len() > limits::MOST_PER_INTERFACE {
            return Err(too_many());
        }
        let (eni_id, subnet_id) = (eni.id.clone(), eni.subnet_id.clone());
        let taken = prefix::give(region, &eni_id, &subnet_id, &prefixes)?;
        return Ok(AssignIpv6AddressesResult {
            assigned_ipv6_addresses: Some(Vec::new()),
            assigned_ipv6_prefixes: Some(taken.iter().map(ToString::to_string).collect()),
            network_interface_id: Some(eni_id),
        });
    }
    if requested.total() == 0 {
        return Err(ApiError::missing_parameter(
            "Ipv6AddressCount or Ipv6Addresses",
        ));
    }
    if held + requested.total() > limits::MOST_PER_INTERFACE {
        return Err(too_many());
    }
    requested.check(region, &eni.subnet_id)?;
    let given = requested.give(region, &input.network_interface_id)?;
    Ok(AssignIpv6AddressesResult {
        assigned_ipv6_addresses: Some(given.iter().map(ToString::to_string).collect()),
        assigned_ipv6_prefixes: None,
        network_interface_id: Some(input.network_interface_id),
    })
}

/// `UnassignIpv6Addresses`: addresses the interface holds, each checked before any goes.
pub fn unassign_ipv6_addresses(
    region: &mut Region,
    input: UnassignIpv6AddressesRequest,
) -> Result<UnassignIpv6AddressesResult, ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let requested = Ipv6Requested::from_texts(None, input.ipv6_addresses.as_deref())?;
    let prefixes = match prefix::asked::<Ipv6Net>(
        input.ipv6_prefixes.iter().flatten().map(String::as_str),
        None,
    )? {
        prefix::Asked::Named(list) => list,
        _ => Vec::new(),
    };
    if requested.named.is_empty() && prefixes.is_empty() {
        return Err(ApiError::missing_parameter("Ipv6Addresses"));
    }
    if let Some(ip) = requested.named.iter().find(|ip| !eni.ipv6.contains(ip)) {
        return Err(ApiError::invalid_value(format!(
            "The network interface {} does not have the IPv6 address {ip}.",
            eni.id
        )));
    }
    if let Some(ip) = primary(eni).filter(|ip| requested.named.contains(ip)) {
        return Err(ApiError::invalid_value(format!(
            "The IPv6 address {ip} is the primary IPv6 address of the network interface {}: \
             it stays while the interface is enabled for one.",
            eni.id
        )));
    }
    let subnet_id = eni.subnet_id.clone();
    prefix::take_back(region, &input.network_interface_id, &prefixes)?;
    for ip in &requested.named {
        subnet::release_ipv6(region, &subnet_id, *ip);
    }
    if let Some(eni) = region
        .network_interfaces
        .0
        .get_mut(&input.network_interface_id)
    {
        eni.ipv6.retain(|ip| !requested.named.contains(ip));
    }
    Ok(UnassignIpv6AddressesResult {
        network_interface_id: Some(input.network_interface_id),
        unassigned_ipv6_addresses: Some(requested.named.iter().map(ToString::to_string).collect()),
        unassigned_ipv6_prefixes: Some(prefixes.iter().map(ToString::to_string).collect()),
    })
}
