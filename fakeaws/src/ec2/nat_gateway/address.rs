//! A NAT gateway's secondary addresses: Elastic IPs of a public gateway, each on a secondary
//! private address of the gateway's interface (AssociateNatGatewayAddress,
//! DisassociateNatGatewayAddress, CreateNatGateway's `SecondaryAllocationIds`), and the
//! secondary private addresses of a private gateway (AssignPrivateNatGatewayAddress,
//! UnassignPrivateNatGatewayAddress, CreateNatGateway's `SecondaryPrivateIpAddresses` and
//! `SecondaryPrivateIpAddressCount`).
//!
//! A new address is `associating` (`assigning`) until the clock's next step, then
//! `succeeded`. One taken away is `disassociating` (`unassigning`) until the end of the
//! call's `MaxDrainDurationSeconds` (350 by default) on the fake's clock, as AWS documents,
//! then goes: the private address back to the subnet, the Elastic IP still allocated. While
//! any address of a gateway is on its way, another change to its addresses is refused with
//! `OperationInProgress`, AWS's code.

use std::net::Ipv4Addr;
use std::time::{Duration, SystemTime};

use crate::ec2::error::{Code, association_not_found};
use crate::ec2::network_interface::lifecycle::parse_ip;
use crate::ec2::{Kind, elastic_ip, network_interface, subnet};
use crate::generated::ec2::{
    AssignPrivateNatGatewayAddressRequest, AssignPrivateNatGatewayAddressResult,
    AssociateNatGatewayAddressRequest, AssociateNatGatewayAddressResult, ConnectivityType,
    DisassociateNatGatewayAddressRequest, DisassociateNatGatewayAddressResult, NatGatewayAddress,
    NatGatewayAddressStatus, NatGatewayState, UnassignPrivateNatGatewayAddressRequest,
    UnassignPrivateNatGatewayAddressResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::{NatGateway, find};

/// How long a secondary address drains when the call names no `MaxDrainDurationSeconds`.
const DEFAULT_DRAIN_SECONDS: i32 = 350;

/// The private addresses a private NAT gateway holds at most, its primary included (AWS: 8,
/// not adjustable).
pub const PRIVATE_ADDRESSES: usize = 8;

/// One secondary address of a NAT gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Secondary {
    /// The secondary private address of the gateway's interface.
    pub private_ip: Ipv4Addr,
    /// The Elastic IP mapped to it (public gateways).
    pub allocation_id: Option<String>,
    /// `associating` or `assigning`, `succeeded`, `disassociating` or `unassigning`.
    pub status: NatGatewayAddressStatus,
    /// When a draining address goes.
    pub until: Option<SystemTime>,
}

impl Secondary {
    /// Whether it is on its way in or out.
    fn in_progress(&self) -> bool {
        self.status != NatGatewayAddressStatus::Succeeded
    }
}

/// The secondary addresses a new gateway or a call asks for.
pub struct Wanted {
    /// Each address: the private address named, if any, and its Elastic IP (public
    /// gateways).
    pub addresses: Vec<(Option<Ipv4Addr>, Option<String>)>,
}

/// Checks the Elastic IPs `allocation_ids` a public gateway in zone `zone` is to take beside
/// the `held` it has (its primary included), and pairs them with the private addresses
/// `named` (none: the subnet picks them). Nothing changes.
pub fn check_eips(
    region: &Region,
    zone: &str,
    held: usize,
    taken: &[&str],
    allocation_ids: &[String],
    named: &[String],
) -> Result<Wanted, ApiError> {
    if held.saturating_add(allocation_ids.len()) > region.limits.eips_per_nat_gateway {
        return Err(ApiError::new(
            Code::AddressLimitExceeded,
            format!(
                "A public NAT gateway can have at most {} Elastic IP addresses.",
                region.limits.eips_per_nat_gateway
            ),
        ));
    }
    for (n, alloc) in allocation_ids.iter().enumerate() {
        let a = Kind::ElasticIp.get(&region.addresses, alloc)?;
        if a.association.is_some()
            || taken.contains(&alloc.as_str())
            || allocation_ids.iter().take(n).any(|x| x == alloc)
        {
            return Err(ApiError::new(
                Code::ResourceAlreadyAssociated,
                format!("Elastic IP address [{alloc}] is already associated"),
            ));
        }
        elastic_ip::check_border_group(region, a, zone)?;
    }
    if !named.is_empty() && named.len() != allocation_ids.len() {
        return Err(ApiError::invalid_value(
            "The number of private IP addresses must match the number of allocation IDs.",
        ));
    }
    let named = parse_all(named)?;
    let addresses = allocation_ids
        .iter()
        .enumerate()
        .map(|(n, alloc)| (named.get(n).copied(), Some(alloc.clone())))
        .collect();
    Ok(Wanted { addresses })
}

/// Checks the secondary private addresses a private gateway is to take beside the `held` it
/// has (its primary included): those `named`, or `count` the subnet picks. Nothing changes.
pub fn check_private(
    held: usize,
    named: &[String],
    count: Option<i32>,
) -> Result<Wanted, ApiError> {
    let wanted: Vec<Option<Ipv4Addr>> = match (named.is_empty(), count) {
        (false, Some(_)) => {
            return Err(ApiError::invalid_combination(
                "PrivateIpAddresses and PrivateIpAddressCount cannot both be specified.",
            ));
        }
        (true, None) => Vec::new(),
        (true, Some(n)) if !(1..=31).contains(&n) => {
            return Err(ApiError::invalid_parameter(
                "privateIpAddressCount",
                &n.to_string(),
                "The count must be between 1 and 31.",
            ));
        }
        (true, Some(n)) => vec![None; usize::try_from(n).unwrap_or(0)],
        (false, None) => parse_all(named)?.into_iter().map(Some).collect(),
    };
    if held.saturating_add(wanted.len()) > PRIVATE_ADDRESSES {
        return Err(ApiError::new(
            Code::PrivateIpAddressLimitExceeded,
            format!(
                "A private NAT gateway can have at most {PRIVATE_ADDRESSES} private IP addresses."
            ),
        ));
    }
    Ok(Wanted {
        addresses: wanted.into_iter().map(|ip| (ip, None)).collect(),
    })
}

/// Distinct addresses, parsed.
fn parse_all(named: &[String]) -> Result<Vec<Ipv4Addr>, ApiError> {
    let mut out = Vec::with_capacity(named.len());
    for raw in named {
        let ip = parse_ip("privateIpAddress", raw)?;
        if out.contains(&ip) {
            return Err(ApiError::invalid_parameter(
                "privateIpAddress",
                raw,
                "The address is named twice.",
            ));
        }
        out.push(ip);
    }
    Ok(out)
}

/// Fails unless subnet `subnet_id` can give the addresses `wanted` asks for: each one named
/// free, and room for those it picks. Nothing changes.
pub fn check_room(region: &Region, subnet_id: &str, wanted: &Wanted) -> Result<(), ApiError> {
    let s = Kind::Subnet.get(&region.subnets, subnet_id)?;
    let mut picked = 0u32;
    for (ip, _) in &wanted.addresses {
        match ip {
            Some(ip) => s.check_free(*ip)?,
            None => picked += 1,
        }
    }
    if picked > s.assignable_addresses() {
        return Err(ApiError::new(
            Code::InsufficientFreeAddressesInSubnet,
            format!("There are not enough free addresses in subnet '{subnet_id}'."),
        ));
    }
    Ok(())
}

/// Gives gateway `id` (interface `eni_id` in subnet `subnet_id`) the addresses `wanted`
/// (checked), each `status`; returns them.
pub fn give(
    region: &mut Region,
    id: &str,
    eni_id: &str,
    subnet_id: &str,
    wanted: Wanted,
    status: NatGatewayAddressStatus,
) -> Result<Vec<Secondary>, ApiError> {
    let mut given = Vec::with_capacity(wanted.addresses.len());
    for (ip, alloc) in wanted.addresses {
        let (ip, _, _) = subnet::allocate_address(region, subnet_id, ip)?;
        network_interface::add_secondary(region, eni_id, ip);
        if let Some(alloc) = &alloc {
            elastic_ip::attach(region, alloc, eni_id, Some(ip))?;
        }
        given.push(Secondary {
            private_ip: ip,
            allocation_id: alloc,
            status,
            until: None,
        });
    }
    if let Some(n) = region.nat_gateways.0.get_mut(id) {
        n.secondary.extend(given.iter().cloned());
    }
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::NatGateway, id);
    Ok(given)
}

/// Moves gateway `id`'s new addresses to `succeeded`, and lets go of the draining ones whose
/// time is up.
pub fn advance(region: &mut Region, id: &str) {
    let now = region.clock.now();
    let Some(n) = region.nat_gateways.0.get_mut(id) else {
        return;
    };
    let mut gone = Vec::new();
    for s in &mut n.secondary {
        match s.status {
            NatGatewayAddressStatus::Associating | NatGatewayAddressStatus::Assigning => {
                s.status = NatGatewayAddressStatus::Succeeded;
            }
            NatGatewayAddressStatus::Disassociating | NatGatewayAddressStatus::Unassigning
                if s.until.is_none_or(|t| t <= now) =>
            {
                gone.push(s.clone());
            }
            _ => {}
        }
    }
    n.secondary
        .retain(|s| !gone.iter().any(|g| g.private_ip == s.private_ip));
    let (eni, subnet_id) = (n.eni_id.clone(), n.subnet_id.clone());
    for s in gone {
        release(region, eni.as_deref(), &subnet_id, &s);
    }
}

/// Gives secondary address `s` of a gateway's interface `eni` back: its Elastic IP
/// disassociated (still allocated), its private address back to the subnet.
fn release(region: &mut Region, eni: Option<&str>, subnet_id: &str, s: &Secondary) {
    if let Some(alloc) = &s.allocation_id {
        elastic_ip::detach(region, alloc);
    }
    if let Some(e) = eni {
        network_interface::remove_secondary(region, e, s.private_ip);
    }
    subnet::release_address(region, subnet_id, s.private_ip);
}

/// The SDK shape of secondary address `s` of gateway `n`.
pub fn render(region: &Region, n: &NatGateway, s: &Secondary) -> NatGatewayAddress {
    let public = n
        .eni_id
        .as_ref()
        .and_then(|e| region.network_interfaces.get(e))
        .and_then(|e| e.secondary_public.get(&s.private_ip));
    let zone = region
        .subnets
        .get(&n.subnet_id)
        .map(|s| (s.zone.clone(), s.zone_id.clone()));
    NatGatewayAddress {
        allocation_id: s.allocation_id.clone(),
        network_interface_id: n.eni_id.clone(),
        private_ip: Some(s.private_ip.to_string()),
        public_ip: public.map(|p| p.ip.to_string()),
        association_id: public.and_then(|p| p.association_id.clone()),
        is_primary: Some(false),
        status: Some(if n.state == NatGatewayState::Deleting {
            leaving(n.connectivity)
        } else {
            s.status
        }),
        availability_zone: zone.as_ref().map(|z| z.0.clone()),
        availability_zone_id: zone.map(|z| z.1),
        ..Default::default()
    }
}

/// The status of an address on its way out of a gateway of `connectivity`.
fn leaving(connectivity: ConnectivityType) -> NatGatewayAddressStatus {
    match connectivity {
        ConnectivityType::Private => NatGatewayAddressStatus::Unassigning,
        _ => NatGatewayAddressStatus::Disassociating,
    }
}

/// Gateway `id`, if it can change its addresses now: `available`, of `connectivity`, with
/// no address on its way in or out.
fn changeable<'r>(
    region: &'r Region,
    id: &str,
    connectivity: ConnectivityType,
) -> Result<&'r NatGateway, ApiError> {
    let n = find(region, id)?;
    if n.connectivity != connectivity {
        return Err(ApiError::invalid_value(match connectivity {
            ConnectivityType::Private => format!(
                "NAT gateway {id} is a public NAT gateway: its private IP addresses come with its Elastic IP addresses."
            ),
            _ => format!(
                "NAT gateway {id} is a private NAT gateway: it takes no Elastic IP addresses."
            ),
        }));
    }
    if n.state != NatGatewayState::Available {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "NAT gateway {id} is {}; its addresses can change only while it is available.",
                n.state.as_str()
            ),
        ));
    }
    let busy: Vec<&Secondary> = n.secondary.iter().filter(|s| s.in_progress()).collect();
    if let Some(first) = busy.first() {
        let what = if first.allocation_id.is_some() {
            "EIPs"
        } else {
            "private IPs"
        };
        let names: Vec<String> = busy
            .iter()
            .map(|s| {
                s.allocation_id
                    .clone()
                    .unwrap_or_else(|| s.private_ip.to_string())
            })
            .collect();
        return Err(ApiError::new(
            Code::OperationInProgress,
            format!(
                "Service is currently {} the following {what}: [{}].",
                first.status.as_str().to_uppercase(),
                names.join(", ")
            ),
        ));
    }
    Ok(n)
}

/// The drain a call asks for, 1 to 4000 seconds (350 by default).
fn drain(region: &Region, seconds: Option<i32>) -> Result<SystemTime, ApiError> {
    let seconds = seconds.unwrap_or(DEFAULT_DRAIN_SECONDS);
    if !(1..=4000).contains(&seconds) {
        return Err(ApiError::invalid_parameter(
            "maxDrainDurationSeconds",
            &seconds.to_string(),
            "The value must be between 1 and 4000.",
        ));
    }
    let secs = u64::try_from(seconds).unwrap_or(0);
    Ok(region.clock.now() + Duration::from_secs(secs))
}

/// Starts draining the secondary addresses `ips` of gateway `id` until `until`; returns
/// them as they are now.
fn start_drain(
    region: &mut Region,
    id: &str,
    ips: &[Ipv4Addr],
    until: SystemTime,
) -> Vec<NatGatewayAddress> {
    let Some(n) = region.nat_gateways.0.get_mut(id) else {
        return Vec::new();
    };
    let status = leaving(n.connectivity);
    for s in n
        .secondary
        .iter_mut()
        .filter(|s| ips.contains(&s.private_ip))
    {
        s.status = status;
        s.until = Some(until);
    }
    region
        .transitions
        .schedule_at(until, Subject::NatGateway, id);
    let Some(n) = region.nat_gateways.get(id) else {
        return Vec::new();
    };
    n.secondary
        .iter()
        .filter(|s| ips.contains(&s.private_ip))
        .map(|s| render(region, n, s))
        .collect()
}

/// Gives gateway `id` the addresses `wanted` (checked but for the subnet's room), each
/// `status`; answers them as AWS does: the private address only where the call `named` it.
fn add(
    region: &mut Region,
    id: &str,
    wanted: Wanted,
    status: NatGatewayAddressStatus,
    named: bool,
) -> Result<Vec<NatGatewayAddress>, ApiError> {
    let n = find(region, id)?;
    check_room(region, &n.subnet_id, &wanted)?;
    let (eni_id, subnet_id) = (n.eni_id.clone().unwrap_or_default(), n.subnet_id.clone());
    let given = give(region, id, &eni_id, &subnet_id, wanted, status)?;
    let n = find(region, id)?;
    Ok(given
        .iter()
        .map(|s| NatGatewayAddress {
            allocation_id: s.allocation_id.clone(),
            network_interface_id: n.eni_id.clone(),
            private_ip: named.then(|| s.private_ip.to_string()),
            is_primary: Some(false),
            status: Some(s.status),
            ..Default::default()
        })
        .collect())
}

/// `AssociateNatGatewayAddress`: more Elastic IPs for a public gateway, each on a new
/// secondary private address (named, or the subnet's pick).
pub fn associate_nat_gateway_address(
    region: &mut Region,
    input: AssociateNatGatewayAddressRequest,
) -> Result<AssociateNatGatewayAddressResult, ApiError> {
    let id = input.nat_gateway_id;
    let n = changeable(region, &id, ConnectivityType::Public)?;
    if input.allocation_ids.is_empty() {
        return Err(ApiError::missing_parameter("AllocationId"));
    }
    let zone = Kind::Subnet
        .get(&region.subnets, &n.subnet_id)?
        .zone
        .clone();
    let held = 1 + n
        .secondary
        .iter()
        .filter(|s| s.allocation_id.is_some())
        .count();
    let named = input.private_ip_addresses.unwrap_or_default();
    let wanted = check_eips(region, &zone, held, &[], &input.allocation_ids, &named)?;
    let given = add(
        region,
        &id,
        wanted,
        NatGatewayAddressStatus::Associating,
        !named.is_empty(),
    )?;
    Ok(AssociateNatGatewayAddressResult {
        nat_gateway_addresses: Some(given),
        nat_gateway_id: Some(id),
    })
}

/// `DisassociateNatGatewayAddress`: secondary Elastic IPs of a public gateway, by their
/// association ids; the primary one stays.
pub fn disassociate_nat_gateway_address(
    region: &mut Region,
    input: DisassociateNatGatewayAddressRequest,
) -> Result<DisassociateNatGatewayAddressResult, ApiError> {
    let id = input.nat_gateway_id;
    let n = changeable(region, &id, ConnectivityType::Public)?;
    if input.association_ids.is_empty() {
        return Err(ApiError::missing_parameter("AssociationId"));
    }
    let eni = n
        .eni_id
        .as_ref()
        .and_then(|e| region.network_interfaces.get(e));
    let mut ips = Vec::with_capacity(input.association_ids.len());
    for assoc in &input.association_ids {
        let primary = eni
            .and_then(|e| e.public_ip.as_ref())
            .is_some_and(|p| p.association_id.as_deref() == Some(assoc.as_str()));
        if primary {
            return Err(ApiError::invalid_value(format!(
                "The association {assoc} is of the primary Elastic IP address of NAT gateway {id}, which cannot be disassociated."
            )));
        }
        let ip = eni
            .and_then(|e| {
                e.secondary_public
                    .iter()
                    .find(|(_, p)| p.association_id.as_deref() == Some(assoc.as_str()))
            })
            .map(|(ip, _)| *ip)
            .ok_or_else(|| association_not_found(assoc))?;
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    let until = drain(region, input.max_drain_duration_seconds)?;
    let addresses = start_drain(region, &id, &ips, until);
    Ok(DisassociateNatGatewayAddressResult {
        nat_gateway_addresses: Some(addresses),
        nat_gateway_id: Some(id),
    })
}

/// `AssignPrivateNatGatewayAddress`: more private addresses for a private gateway, named or
/// by count.
pub fn assign_private_nat_gateway_address(
    region: &mut Region,
    input: AssignPrivateNatGatewayAddressRequest,
) -> Result<AssignPrivateNatGatewayAddressResult, ApiError> {
    let id = input.nat_gateway_id;
    let n = changeable(region, &id, ConnectivityType::Private)?;
    let named = input.private_ip_addresses.unwrap_or_default();
    if named.is_empty() && input.private_ip_address_count.is_none() {
        return Err(ApiError::missing_parameter(
            "PrivateIpAddresses or PrivateIpAddressCount",
        ));
    }
    let wanted = check_private(
        1 + n.secondary.len(),
        &named,
        input.private_ip_address_count,
    )?;
    let given = add(
        region,
        &id,
        wanted,
        NatGatewayAddressStatus::Assigning,
        !named.is_empty(),
    )?;
    Ok(AssignPrivateNatGatewayAddressResult {
        nat_gateway_addresses: Some(given),
        nat_gateway_id: Some(id),
    })
}

/// `UnassignPrivateNatGatewayAddress`: secondary private addresses of a private gateway; its
/// primary one stays.
pub fn unassign_private_nat_gateway_address(
    region: &mut Region,
    input: UnassignPrivateNatGatewayAddressRequest,
) -> Result<UnassignPrivateNatGatewayAddressResult, ApiError> {
    let id = input.nat_gateway_id;
    let n = changeable(region, &id, ConnectivityType::Private)?;
    if input.private_ip_addresses.is_empty() {
        return Err(ApiError::missing_parameter("PrivateIpAddress"));
    }
    let ips = parse_all(&input.private_ip_addresses)?;
    for ip in &ips {
        if n.private_ip == ip.to_string() {
            return Err(ApiError::invalid_value(format!(
                "The primary private IP address {ip} of NAT gateway {id} cannot be unassigned."
            )));
        }
        if !n.secondary.iter().any(|s| s.private_ip == *ip) {
            return Err(ApiError::invalid_value(format!(
                "The private IP address {ip} is not assigned to NAT gateway {id}."
            )));
        }
    }
    let until = drain(region, input.max_drain_duration_seconds)?;
    let addresses = start_drain(region, &id, &ips, until);
    Ok(UnassignPrivateNatGatewayAddressResult {
        nat_gateway_addresses: Some(addresses),
        nat_gateway_id: Some(id),
    })
}
