//! Prefix delegation: the prefixes of its subnet an interface holds beside its addresses, as
//! the EC2 user guide's "Assign prefixes to network interfaces" describes them.
//!
//! - IPv4: /28s (AssignPrivateIpAddresses and CreateNetworkInterface `Ipv4Prefixes` /
//!   `Ipv4PrefixCount`, UnassignPrivateIpAddresses `Ipv4Prefixes`); each takes one of the
//!   interface's address slots (its instance type's IPv4 addresses per interface) and sixteen
//!   addresses of the subnet; by count, the lowest free /28s, from the subnet's `prefix` CIDR
//!   reservations first ([`crate::ec2::subnet`]).
//! - IPv6: /80s of the subnet's /64 (AssignIpv6Addresses and CreateNetworkInterface
//!   `Ipv6Prefixes` / `Ipv6PrefixCount`, UnassignIpv6Addresses `Ipv6Prefixes`); each takes one
//!   of the interface's IPv6 address slots; by count, from the subnet's IPv6 `prefix`
//!   reservations first, else drawn at random as AWS draws IPv6 addresses.
//! - None left is `InsufficientCidrBlocks` in AWS's words.

use std::fmt::Display;

use ipnet::{Ipv4Net, Ipv6Net};

use crate::ec2::network_interface::NetworkInterface;
use crate::ec2::subnet;
use crate::generated::ec2::{Ipv4PrefixSpecificationRequest, Ipv6PrefixSpecificationRequest};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// What differs between IPv4 and IPv6 prefixes.
pub trait Family: Copy + PartialEq + Display + Sized {
    /// The member name in messages.
    const PARAM: &'static str;
    /// The prefix length.
    const LEN: u8;
    /// Parses one as AWS writes it (a network, no host bits).
    fn parse(raw: &str) -> Result<Self, ApiError>;
    /// Its length.
    fn len_of(&self) -> u8;
    /// Takes one from the subnet.
    fn allocate(
        region: &mut Region,
        subnet_id: &str,
        wanted: Option<Self>,
    ) -> Result<Self, ApiError>;
    /// Gives one back to the subnet.
    fn release(region: &mut Region, subnet_id: &str, p: Self);
    /// An interface's prefixes of this family.
    fn held(eni: &NetworkInterface) -> &Vec<Self>;
    /// The same, for writing.
    fn held_mut(eni: &mut NetworkInterface) -> &mut Vec<Self>;
}

impl Family for Ipv4Net {
    const PARAM: &'static str = "ipv4Prefix";
    const LEN: u8 = subnet::PREFIX_LEN;

    fn parse(raw: &str) -> Result<Self, ApiError> {
        crate::ec2::vpc::parse_cidr(raw, Self::PARAM)
    }

    fn len_of(&self) -> u8 {
        self.prefix_len()
    }

    fn allocate(
        region: &mut Region,
        subnet_id: &str,
        wanted: Option<Self>,
    ) -> Result<Self, ApiError> {
        subnet::allocate_prefix(region, subnet_id, wanted)
    }

    fn release(region: &mut Region, subnet_id: &str, p: Self) {
        subnet::release_prefix(region, subnet_id, p);
    }

    fn held(eni: &NetworkInterface) -> &Vec<Self> {
        &eni.ipv4_prefixes
    }

    fn held_mut(eni: &mut NetworkInterface) -> &mut Vec<Self> {
        &mut eni.ipv4_prefixes
    }
}

impl Family for Ipv6Net {
    const PARAM: &'static str = "ipv6Prefix";
    const LEN: u8 = subnet::IPV6_PREFIX_LEN;

    fn parse(raw: &str) -> Result<Self, ApiError> {
        crate::ec2::vpc_ipv6::parse_ipv6_cidr(raw, Self::PARAM)
    }

    fn len_of(&self) -> u8 {
        self.prefix_len()
    }

    fn allocate(
        region: &mut Region,
        subnet_id: &str,
        wanted: Option<Self>,
    ) -> Result<Self, ApiError> {
        subnet::allocate_ipv6_prefix(region, subnet_id, wanted)
    }

    fn release(region: &mut Region, subnet_id: &str, p: Self) {
        subnet::release_ipv6_prefix(region, subnet_id, p);
    }

    fn held(eni: &NetworkInterface) -> &Vec<Self> {
        &eni.ipv6_prefixes
    }

    fn held_mut(eni: &mut NetworkInterface) -> &mut Vec<Self> {
        &mut eni.ipv6_prefixes
    }
}

/// The prefixes a request asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked<N> {
    /// None.
    Nothing,
    /// These.
    Named(Vec<N>),
    /// This many.
    Count(usize),
}

impl<N> Asked<N> {
    /// How many prefixes.
    pub fn len(&self) -> usize {
        match self {
            Asked::Nothing => 0,
            Asked::Named(n) => n.len(),
            Asked::Count(c) => *c,
        }
    }

    /// Whether it asks for none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Reads the named prefixes (each of the family's length, written as a network) and the
/// count (at least 1); both at once is `InvalidParameterCombination`, as the model says.
pub fn asked<'a, N: Family>(
    named: impl Iterator<Item = &'a str>,
    count: Option<i32>,
) -> Result<Asked<N>, ApiError> {
    let mut list = Vec::new();
    for raw in named {
        let net = N::parse(raw)?;
        if net.len_of() != N::LEN {
            return Err(ApiError::invalid_parameter(
                N::PARAM,
                raw,
                &format!("A prefix here is a /{}.", N::LEN),
            ));
        }
        if !list.contains(&net) {
            list.push(net);
        }
    }
    match (list.is_empty(), count) {
        (false, Some(_)) => Err(ApiError::invalid_combination(
            "You can't specify both prefixes and a count of prefixes.",
        )),
        (true, Some(n)) if n < 1 => Err(ApiError::invalid_parameter(
            &format!("{}Count", N::PARAM),
            &n.to_string(),
            "The count must be at least 1.",
        )),
        (true, Some(n)) => Ok(Asked::Count(usize::try_from(n).unwrap_or(usize::MAX))),
        (false, None) => Ok(Asked::Named(list)),
        (true, None) => Ok(Asked::Nothing),
    }
}

/// The prefixes one interface asks for (`Ipv4Prefixes` or `Ipv4PrefixCount`, `Ipv6Prefixes`
/// or `Ipv6PrefixCount`: CreateNetworkInterface, a launch's interface, a launch template's),
/// not beside secondary IPv4 addresses (`secondaries`) or IPv6 addresses asked for (`ipv6`):
/// `InvalidParameterCombination`.
pub fn asked_by_interface(
    v4: Option<&[Ipv4PrefixSpecificationRequest]>,
    v4_count: Option<i32>,
    v6: Option<&[Ipv6PrefixSpecificationRequest]>,
    v6_count: Option<i32>,
    secondaries: bool,
    ipv6: bool,
) -> Result<(Asked<Ipv4Net>, Asked<Ipv6Net>), ApiError> {
    let v4 = asked::<Ipv4Net>(
        v4.unwrap_or_default()
            .iter()
            .filter_map(|p| p.ipv4_prefix.as_deref()),
        v4_count,
    )?;
    if !v4.is_empty() && secondaries {
        return Err(ApiError::invalid_combination(
            "You can't specify IPv4 prefixes with specific private IPv4 addresses or a count of them.",
        ));
    }
    let v6 = asked::<Ipv6Net>(
        v6.unwrap_or_default()
            .iter()
            .filter_map(|p| p.ipv6_prefix.as_deref()),
        v6_count,
    )?;
    if !v6.is_empty() && ipv6 {
        return Err(ApiError::invalid_combination(
            "You can't specify IPv6 prefixes with specific IPv6 addresses or a count of them.",
        ));
    }
    Ok((v4, v6))
}

/// Gives interface `eni_id` of subnet `subnet_id` the prefixes asked for; all of them or,
/// when one cannot be had, none (those taken go back).
pub fn give<N: Family>(
    region: &mut Region,
    eni_id: &str,
    subnet_id: &str,
    asked: &Asked<N>,
) -> Result<Vec<N>, ApiError> {
    let taken = reserve(region, subnet_id, asked)?;
    hand_over(region, eni_id, &taken);
    Ok(taken)
}

/// Takes from subnet `subnet_id` the prefixes asked for, for an interface still to be made
/// (a launch's); all of them or, when one cannot be had, none (those taken go back).
pub fn reserve<N: Family>(
    region: &mut Region,
    subnet_id: &str,
    asked: &Asked<N>,
) -> Result<Vec<N>, ApiError> {
    let wanted: Vec<Option<N>> = match asked {
        Asked::Nothing => Vec::new(),
        Asked::Named(list) => list.iter().copied().map(Some).collect(),
        Asked::Count(n) => vec![None; *n],
    };
    let mut taken = Vec::with_capacity(wanted.len());
    for w in wanted {
        match N::allocate(region, subnet_id, w) {
            Ok(p) => taken.push(p),
            Err(e) => {
                unreserve(region, subnet_id, &taken);
                return Err(e);
            }
        }
    }
    Ok(taken)
}

/// Hands the prefixes `taken` by [`reserve`] to interface `eni_id`.
pub fn hand_over<N: Family>(region: &mut Region, eni_id: &str, taken: &[N]) {
    if let Some(e) = region.network_interfaces.0.get_mut(eni_id) {
        N::held_mut(e).extend(taken.iter().copied());
    }
}

/// Gives the prefixes `taken` by [`reserve`] and never handed over back to subnet
/// `subnet_id`.
pub fn unreserve<N: Family>(region: &mut Region, subnet_id: &str, taken: &[N]) {
    for p in taken {
        N::release(region, subnet_id, *p);
    }
}

/// Takes the prefixes `named` from interface `eni_id`: every one must be its own
/// (`InvalidParameterValue` otherwise, nothing changed).
pub fn take_back<N: Family>(
    region: &mut Region,
    eni_id: &str,
    named: &[N],
) -> Result<(), ApiError> {
    let Some(eni) = region.network_interfaces.get(eni_id) else {
        return Ok(());
    };
    if let Some(p) = named.iter().find(|p| !N::held(eni).contains(p)) {
        return Err(ApiError::invalid_parameter(
            N::PARAM,
            &p.to_string(),
            &format!("The prefix is not assigned to interface {eni_id}."),
        ));
    }
    let subnet_id = eni.subnet_id.clone();
    if let Some(e) = region.network_interfaces.0.get_mut(eni_id) {
        N::held_mut(e).retain(|p| !named.contains(p));
    }
    for p in named {
        N::release(region, &subnet_id, *p);
    }
    Ok(())
}
