//! IPv4 prefix delegation: the /28 prefixes of its subnet an interface holds beside its
//! addresses (AssignPrivateIpAddresses and CreateNetworkInterface `Ipv4Prefixes` /
//! `Ipv4PrefixCount`, UnassignPrivateIpAddresses `Ipv4Prefixes`), as the EC2 user guide's
//! "Assign prefixes to network interfaces" describes them: each prefix takes one of the
//! interface's address slots (its instance type's IPv4 addresses per interface) and sixteen
//! addresses of the subnet; prefixes asked for by count are the lowest free /28s, from the
//! subnet's `prefix` CIDR reservations first ([`crate::ec2::subnet`]), and none left is
//! `InsufficientCidrBlocks` in AWS's words.

use ipnet::Ipv4Net;

use crate::ec2::subnet;
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The prefixes a request asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// None.
    Nothing,
    /// These /28s.
    Named(Vec<Ipv4Net>),
    /// This many, the lowest free.
    Count(usize),
}

impl Asked {
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

/// Reads `Ipv4Prefixes` (each a /28 written as a network) and `Ipv4PrefixCount` (at least
/// 1); both at once is `InvalidParameterCombination`, as the model says.
pub fn asked<'a>(
    named: impl Iterator<Item = &'a str>,
    count: Option<i32>,
) -> Result<Asked, ApiError> {
    let mut list = Vec::new();
    for raw in named {
        let net = crate::ec2::vpc::parse_cidr(raw, "ipv4Prefix")?;
        if net.prefix_len() != subnet::PREFIX_LEN {
            return Err(ApiError::invalid_parameter(
                "ipv4Prefix",
                raw,
                "An IPv4 prefix is a /28.",
            ));
        }
        if !list.contains(&net) {
            list.push(net);
        }
    }
    match (list.is_empty(), count) {
        (false, Some(_)) => Err(ApiError::invalid_combination(
            "You can't specify Ipv4Prefixes and Ipv4PrefixCount together.",
        )),
        (true, Some(n)) if n < 1 => Err(ApiError::invalid_parameter(
            "ipv4PrefixCount",
            &n.to_string(),
            "The count must be at least 1.",
        )),
        (true, Some(n)) => Ok(Asked::Count(usize::try_from(n).unwrap_or(usize::MAX))),
        (false, None) => Ok(Asked::Named(list)),
        (true, None) => Ok(Asked::Nothing),
    }
}

/// Gives interface `eni_id` of subnet `subnet_id` the prefixes asked for; all of them or,
/// when one cannot be had, none (those taken go back).
pub fn give(
    region: &mut Region,
    eni_id: &str,
    subnet_id: &str,
    asked: &Asked,
) -> Result<Vec<Ipv4Net>, ApiError> {
    let wanted: Vec<Option<Ipv4Net>> = match asked {
        Asked::Nothing => Vec::new(),
        Asked::Named(list) => list.iter().copied().map(Some).collect(),
        Asked::Count(n) => vec![None; *n],
    };
    let mut taken = Vec::with_capacity(wanted.len());
    for w in wanted {
        match subnet::allocate_prefix(region, subnet_id, w) {
            Ok(p) => taken.push(p),
            Err(e) => {
                for p in taken {
                    subnet::release_prefix(region, subnet_id, p);
                }
                return Err(e);
            }
        }
    }
    if let Some(e) = region.network_interfaces.0.get_mut(eni_id) {
        e.ipv4_prefixes.extend(taken.iter().copied());
    }
    Ok(taken)
}

/// Takes the prefixes `named` from interface `eni_id`: every one must be its own
/// (`InvalidParameterValue` otherwise, nothing changed).
pub fn take_back(region: &mut Region, eni_id: &str, named: &[Ipv4Net]) -> Result<(), ApiError> {
    let Some(eni) = region.network_interfaces.get(eni_id) else {
        return Ok(());
    };
    if let Some(p) = named.iter().find(|p| !eni.ipv4_prefixes.contains(p)) {
        return Err(ApiError::invalid_parameter(
            "ipv4Prefix",
            &p.to_string(),
            &format!("The prefix is not assigned to interface {eni_id}."),
        ));
    }
    let subnet_id = eni.subnet_id.clone();
    if let Some(e) = region.network_interfaces.0.get_mut(eni_id) {
        e.ipv4_prefixes.retain(|p| !named.contains(p));
    }
    for p in named {
        subnet::release_prefix(region, &subnet_id, *p);
    }
    Ok(())
}
