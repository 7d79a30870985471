//! Elastic IPs: AllocateAddress, DescribeAddresses, AssociateAddress, DisassociateAddress,
//! ReleaseAddress, and the region's pool of public IPv4 addresses (the documentation ranges
//! 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24, so nothing real is ever named).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use crate::ec2::availability_zone::ZoneType;
use crate::ec2::error::{self, Code};
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::network_interface::{self, PublicIp};
use crate::ec2::{Kind, public_ipv4_pool, tags};
use crate::generated::ec2::{
    Address as AddressOut, AllocateAddressRequest, AllocateAddressResult, AssociateAddressRequest,
    AssociateAddressResult, DescribeAddressesRequest, DescribeAddressesResult,
    DisassociateAddressRequest, DomainType, InstanceStateName, ReleaseAddressRequest, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The public IPv4 addresses handed out in one region.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Pool {
    used: BTreeSet<Ipv4Addr>,
}

const RANGES: [[u8; 3]; 3] = [[192, 0, 2], [198, 51, 100], [203, 0, 113]];

impl Pool {
    /// Takes a free address, if any is left.
    fn take(&mut self) -> Option<Ipv4Addr> {
        for [a, b, c] in RANGES {
            for d in 1..=254u8 {
                let ip = Ipv4Addr::new(a, b, c, d);
                if self.used.insert(ip) {
                    return Some(ip);
                }
            }
        }
        None
    }

    /// Takes `ip`, if it is one of the pool's and free.
    fn take_exact(&mut self, ip: Ipv4Addr) -> bool {
        let [a, b, c, d] = ip.octets();
        RANGES.contains(&[a, b, c]) && (1..=254).contains(&d) && self.used.insert(ip)
    }

    /// Returns an address to the pool.
    fn give_back(&mut self, ip: Ipv4Addr) {
        self.used.remove(&ip);
    }
}

/// The ranges of the fake's own public addresses (AWS's pool, `amazon`).
pub fn amazon_ranges() -> impl Iterator<Item = ipnet::Ipv4Net> {
    RANGES
        .iter()
        .filter_map(|[a, b, c]| ipnet::Ipv4Net::new(Ipv4Addr::new(*a, *b, *c, 0), 24).ok())
}

/// Takes a free public address from the region's pool (an instance's public IP), if any is
/// left.
pub fn take_public_ip(region: &mut Region) -> Option<Ipv4Addr> {
    region.public_ips.take()
}

/// Gives a public address back to the region's pool.
pub fn give_back_public_ip(region: &mut Region, ip: Ipv4Addr) {
    region.public_ips.give_back(ip);
}

/// Where an Elastic IP is associated.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Association {
    /// `eipassoc-...`.
    pub id: String,
    /// The interface holding it.
    pub eni_id: String,
    /// The instance, when the interface is attached to one.
    pub instance_id: Option<String>,
    /// The interface's secondary private address it is mapped to (none: its primary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_ip: Option<Ipv4Addr>,
}

impl Association {
    /// The private address it is mapped to.
    pub fn private_address(&self, region: &Region) -> Option<Ipv4Addr> {
        self.private_ip.or_else(|| {
            region
                .network_interfaces
                .get(&self.eni_id)
                .map(|e| e.private_ip)
        })
    }
}

crate::region::table! {
    /// Elastic IPs by allocation id.
    Addresses of Address
}

/// One Elastic IP.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Address {
    /// `eipalloc-...`.
    pub allocation_id: String,
    /// The address.
    pub public_ip: Ipv4Addr,
    /// The account's BYOIP pool it came from; none for AWS's own (`amazon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// Its association, if any.
    pub association: Option<Association>,
    /// Its network border group when it is not the region's: a Local Zone's, or a Wavelength
    /// Zone's (a carrier IP address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub border_group: Option<String>,
    /// The domain name the account gave its reverse DNS (PTR) record, ending in `.`; AWS's
    /// own name without one (`address_attribute.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptr: Option<String>,
    /// A change of that record not yet applied: the name asked for, or `None` for a reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptr_update: Option<Option<String>>,
}

impl Address {
    /// Its network border group.
    pub fn border_group<'a>(&'a self, region: &'a Region) -> &'a str {
        self.border_group.as_deref().unwrap_or(&region.name)
    }

    /// Whether it is a carrier IP address: one of a Wavelength Zone's border group.
    pub fn is_carrier(&self, region: &Region) -> bool {
        self.border_group.as_deref().is_some_and(|g| {
            region
                .edge_zones
                .iter()
                .any(|z| z.border_group == g && z.kind == ZoneType::Wavelength)
        })
    }
}

/// The network border group of the zone `zone` (the region's for its availability zones).
fn border_group_of_zone(region: &Region, zone: &str) -> String {
    region
        .zone(zone)
        .map_or_else(|| region.name.clone(), |z| z.border_group.clone())
}

/// Fails unless address `a` may be mapped to an interface in zone `zone`: an address
/// serves the zones of its own network border group only (AWS's words for the refusal are
/// not documented; these are the fake's).
pub fn check_border_group(region: &Region, a: &Address, zone: &str) -> Result<(), ApiError> {
    let group = border_group_of_zone(region, zone);
    if group == a.border_group(region) {
        return Ok(());
    }
    Err(ApiError::invalid_combination(format!(
        "The address {} is of the network border group {}; the zone {zone} is in {group}.",
        a.allocation_id,
        a.border_group(region)
    )))
}

/// Elastic IP `id`, to change.
pub(crate) fn get_mut<'a>(region: &'a mut Region, id: &str) -> Option<&'a mut Address> {
    region.addresses.0.get_mut(id)
}

impl Filterable for (&Address, &Region) {
    const NAMES: &'static [&'static str] = &[
        "allocation-id",
        "association-id",
        "domain",
        "instance-id",
        "network-border-group",
        "network-interface-id",
        "network-interface-owner-id",
        "private-ip-address",
        "public-ip",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (a, region) = *self;
        let assoc = || a.association.as_ref();
        match name {
            "allocation-id" => one(a.allocation_id.clone()),
            "association-id" => assoc().map(|x| x.id.clone()).into_iter().collect(),
            "domain" => one("vpc"),
            "instance-id" => assoc()
                .and_then(|x| x.instance_id.clone())
                .into_iter()
                .collect(),
            "network-border-group" => one(a.border_group(region).to_string()),
            "network-interface-id" => assoc().map(|x| x.eni_id.clone()).into_iter().collect(),
            "network-interface-owner-id" => assoc()
                .map(|_| region.account_id.clone())
                .into_iter()
                .collect(),
            "private-ip-address" => assoc()
                .and_then(|x| x.private_address(region))
                .map(|ip| ip.to_string())
                .into_iter()
                .collect(),
            "public-ip" => one(a.public_ip.to_string()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, a: &Address) -> AddressOut {
    let assoc = a.association.as_ref();
    AddressOut {
        allocation_id: Some(a.allocation_id.clone()),
        association_id: assoc.map(|x| x.id.clone()),
        domain: Some(DomainType::Vpc),
        network_interface_id: assoc.map(|x| x.eni_id.clone()),
        network_interface_owner_id: assoc.map(|_| region.account_id.clone()),
        private_ip_address: assoc
            .and_then(|x| x.private_address(region))
            .map(|ip| ip.to_string()),
        tags: region.tags.tag_set(&a.allocation_id),
        public_ipv4_pool: (!a.is_carrier(region))
            .then(|| a.pool.clone().unwrap_or_else(|| "amazon".into())),
        network_border_group: Some(a.border_group(region).to_string()),
        instance_id: assoc.and_then(|x| x.instance_id.clone()),
        public_ip: (!a.is_carrier(region)).then(|| a.public_ip.to_string()),
        carrier_ip: a.is_carrier(region).then(|| a.public_ip.to_string()),
        ..Default::default()
    }
}

/// `AllocateAddress` (domain `vpc`).
pub fn allocate_address(
    region: &mut Region,
    input: AllocateAddressRequest,
) -> Result<AllocateAddressResult, ApiError> {
    if input.domain == Some(DomainType::Standard) {
        return Err(ApiError::invalid_parameter(
            "domain",
            "standard",
            "EC2-Classic addresses are no longer available; use vpc.",
        ));
    }
    let border_group = allocation_border_group(region, &input)?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::ElasticIp)?;
    if region.addresses.len() >= region.limits.elastic_ips {
        return Err(ApiError::new(
            Code::AddressLimitExceeded,
            "The maximum number of addresses has been reached.",
        ));
    }
    let (ip, pool) = address_to_allocate(region, &input)?;
    let id = region.ids.resource("eipalloc");
    region.tags.insert(&id, tags);
    let address = Address {
        allocation_id: id.clone(),
        public_ip: ip,
        pool,
        association: None,
        border_group,
        ptr: None,
        ptr_update: None,
    };
    let out = render(region, &address);
    region.addresses.0.insert(id.clone(), address);
    Ok(AllocateAddressResult {
        allocation_id: Some(id),
        public_ipv4_pool: out.public_ipv4_pool,
        network_border_group: out.network_border_group,
        domain: Some(DomainType::Vpc),
        public_ip: out.public_ip,
        carrier_ip: out.carrier_ip,
        ..Default::default()
    })
}

/// The network border group an AllocateAddress asks for, checked: the region's (none), or
/// that of a Local Zone or Wavelength Zone of the region whose group the account opted in
/// to, which takes an address of AWS's (a carrier IP address in a Wavelength Zone), not one
/// of the account's BYOIP ranges nor a recovered one.
fn allocation_border_group(
    region: &Region,
    input: &AllocateAddressRequest,
) -> Result<Option<String>, ApiError> {
    let Some(group) = input
        .network_border_group
        .as_deref()
        .filter(|g| *g != region.name)
    else {
        return Ok(None);
    };
    let Some(zone) = region.edge_zones.iter().find(|z| z.border_group == group) else {
        let groups: Vec<&str> = std::iter::once(region.name.as_str())
            .chain(region.edge_zones.iter().map(|z| z.border_group.as_str()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        return Err(ApiError::invalid_parameter(
            "NetworkBorderGroup",
            group,
            &format!(
                "The region's network border groups are {}.",
                groups.join(", ")
            ),
        ));
    };
    if !region.zone_usable(zone) {
        return Err(ApiError::invalid_parameter(
            "NetworkBorderGroup",
            group,
            &format!(
                "The account has not opted in to the zone group {} (ModifyAvailabilityZoneGroup).",
                zone.group
            ),
        ));
    }
    if input
        .public_ipv4_pool
        .as_deref()
        .is_some_and(|p| p != "amazon")
        || input.address.is_some()
    {
        return Err(ApiError::invalid_combination(
            "An address of a Local Zone's or Wavelength Zone's network border group comes from \
             AWS's pool: PublicIpv4Pool and Address are for the region's own group.",
        ));
    }
    Ok(Some(group.to_string()))
}

/// The address AllocateAddress takes, and the account's pool it comes from (none: AWS's):
/// from the `PublicIpv4Pool` named (`amazon` is AWS's), the `Address` asked for (one of the
/// account's ranges, or one of AWS's it released and nobody took since: recovered), or the
/// next free one of AWS's.
fn address_to_allocate(
    region: &mut Region,
    input: &AllocateAddressRequest,
) -> Result<(Ipv4Addr, Option<String>), ApiError> {
    let wanted = match input.address.as_deref() {
        Some(raw) => Some(raw.parse::<Ipv4Addr>().map_err(|_| {
            ApiError::invalid_parameter("Address", raw, "The address is not an IPv4 address.")
        })?),
        None => None,
    };
    let pool = match input.public_ipv4_pool.as_deref() {
        Some("amazon") => None,
        Some(id) => Some(id.to_string()),
        // An address of one of the account's ranges comes from its pool.
        None => wanted
            .and_then(|ip| public_ipv4_pool::holding(region, ip))
            .map(|p| p.id.clone()),
    };
    if let Some(id) = &pool {
        return Ok((public_ipv4_pool::take(region, id, wanted)?, pool));
    }
    match wanted {
        Some(ip) if region.public_ips.take_exact(ip) => Ok((ip, None)),
        Some(ip) => Err(ApiError::invalid_parameter(
            "Address",
            &ip.to_string(),
            "The address cannot be recovered: it is not an address of AWS's pool that is free, \
             nor one of the account's own ranges.",
        )),
        None => region
            .public_ips
            .take()
            .map(|ip| (ip, None))
            .ok_or_else(|| {
                ApiError::new(
                    Code::InsufficientAddressCapacity,
                    "There are no more public addresses in the pool.",
                )
            }),
    }
}

/// `DescribeAddresses`: by allocation id, by public IP, or filtered.
pub fn describe_addresses(
    region: &mut Region,
    input: DescribeAddressesRequest,
) -> Result<DescribeAddressesResult, ApiError> {
    let filters = Filters::parse::<(&Address, &Region)>(input.filters)?;
    let region = &*region;
    let mut ids = input.allocation_ids.clone().unwrap_or_default();
    for ip in input.public_ips.iter().flatten() {
        ids.push(by_public_ip(region, ip)?.allocation_id.clone());
    }
    let found = Kind::ElasticIp.describe(
        &region.consistency,
        &region.addresses,
        Some(&ids),
        region.candidates(Kind::ElasticIp, &filters),
        |a| filters.matches(&(a, region), region.tags.get(&a.allocation_id)),
    )?;
    Ok(DescribeAddressesResult {
        addresses: Some(found.into_iter().map(|a| render(region, a)).collect()),
    })
}

/// The Elastic IP of the account whose address is `ip`.
fn by_public_ip<'a>(region: &'a Region, ip: &str) -> Result<&'a Address, ApiError> {
    region
        .addresses
        .values()
        .find(|a| a.public_ip.to_string() == ip)
        .ok_or_else(|| {
            ApiError::new(
                Code::InvalidAddressNotFound,
                format!("Address '{ip}' not found."),
            )
        })
}

/// The refusal of a request naming an address by its deprecated `PublicIp` (EC2-Classic's
/// way) beside or in place of its allocation id: every address here is a VPC's, which AWS
/// names by allocation (or association) id only: `missing` names the id, `doing` completes
/// AWS's words (`releasing a VPC elastic IP address`, ...).
fn public_ip_refused(both: bool, missing: &str, doing: &str) -> ApiError {
    if both {
        ApiError::invalid_combination(format!(
            "You may specify public IP or {missing} id, but not both in the same call"
        ))
    } else {
        ApiError::invalid_value(format!("You must specify an {missing} id when {doing}"))
    }
}

/// Maps an Elastic IP onto an interface (for AssociateAddress and NAT gateways), at its
/// primary private address or, with `at`, at that secondary one; returns the association
/// id. What the address had before is unmapped (an Elastic IP stays allocated).
pub fn attach(
    region: &mut Region,
    allocation_id: &str,
    eni_id: &str,
    at: Option<Ipv4Addr>,
) -> Result<String, ApiError> {
    let address = Kind::ElasticIp.get(&region.addresses, allocation_id)?;
    let (ip, carrier) = (address.public_ip, address.is_carrier(region));
    let assoc_id = region.ids.resource("eipassoc");
    let eni = Kind::NetworkInterface.get(&region.network_interfaces, eni_id)?;
    let instance_id = eni.attachment.as_ref().map(|a| a.instance_id.clone());
    let at = at.filter(|a| *a != eni.private_ip);
    let previous = network_interface::set_public_ip(
        region,
        eni_id,
        at,
        Some(PublicIp {
            ip,
            allocation_id: Some(allocation_id.to_string()),
            association_id: Some(assoc_id.clone()),
            service: None,
            carrier,
        }),
    );
    match previous {
        Some(PublicIp {
            allocation_id: Some(old),
            ..
        }) => forget_association(region, &old),
        Some(PublicIp { ip, .. }) => region.public_ips.give_back(ip),
        None => {}
    }
    if let Some(a) = region.addresses.0.get_mut(allocation_id) {
        a.association = Some(Association {
            id: assoc_id.clone(),
            eni_id: eni_id.to_string(),
            instance_id,
            private_ip: at,
        });
    }
    Ok(assoc_id)
}

/// Clears an Elastic IP's association record (its interface is gone or remapped).
pub fn forget_association(region: &mut Region, allocation_id: &str) {
    if let Some(a) = region.addresses.0.get_mut(allocation_id) {
        a.association = None;
    }
}

/// Unmaps an Elastic IP from its interface.
pub fn detach(region: &mut Region, allocation_id: &str) {
    let Some(assoc) = region
        .addresses
        .0
        .get_mut(allocation_id)
        .and_then(|a| a.association.take())
    else {
        return;
    };
    network_interface::set_public_ip(region, &assoc.eni_id, assoc.private_ip, None);
}

/// `AssociateAddress` with an instance or an interface.
pub fn associate_address(
    region: &mut Region,
    input: AssociateAddressRequest,
) -> Result<AssociateAddressResult, ApiError> {
    if input.public_ip.is_some() {
        // AWS answers this one with InvalidParameterCombination, not InvalidParameterValue.
        let target = if input.network_interface_id.is_some() {
            "a network interface"
        } else {
            "a VPC instance"
        };
        return Err(ApiError::invalid_combination(
            if input.allocation_id.is_some() {
                "You may specify public IP or allocation id, but not both in the same call"
                    .to_string()
            } else {
                format!("You must specify an allocation id when mapping an address to {target}")
            },
        ));
    }
    let allocation_id = input
        .allocation_id
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("AllocationId"))?;
    let address = Kind::ElasticIp.get(&region.addresses, allocation_id)?;
    let eni_id = match (&input.instance_id, &input.network_interface_id) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_combination(
                "Specify either InstanceId or NetworkInterfaceId, not both.",
            ));
        }
        (Some(i), None) => {
            let inst = Kind::Instance.get(&region.instances, i)?;
            if !matches!(
                inst.state,
                InstanceStateName::Running | InstanceStateName::Stopped
            ) {
                return Err(ApiError::new(
                    Code::IncorrectInstanceState,
                    format!(
                        "The {} instance '{i}' is not in a valid state for this operation.",
                        inst.state.as_str()
                    ),
                ));
            }
            inst.eni_id.clone()
        }
        (None, Some(e)) => Kind::NetworkInterface
            .get(&region.network_interfaces, e)?
            .id
            .clone(),
        (None, None) => return Err(ApiError::missing_parameter("InstanceId")),
    };
    let eni = Kind::NetworkInterface.get(&region.network_interfaces, &eni_id)?;
    // The primary private address, or a secondary one the interface holds.
    let at = match &input.private_ip_address {
        None => None,
        Some(p) => match p.parse::<Ipv4Addr>() {
            Ok(ip) if eni.addresses().any(|a| a == ip) => Some(ip),
            _ => {
                return Err(ApiError::invalid_parameter(
                    "privateIpAddress",
                    p,
                    "The address is not assigned to the interface.",
                ));
            }
        },
    };
    check_border_group(region, address, &eni.zone)?;
    // A carrier IP address reaches the carrier's network through the VPC's carrier
    // gateway, not an internet gateway.
    if !address.is_carrier(region) && region.internet_gateway_of(&eni.vpc_id).is_none() {
        return Err(ApiError::new(
            Code::GatewayNotAttached,
            format!(
                "Network {} is not attached to any internet gateway",
                eni.vpc_id
            ),
        ));
    }
    if let Some(current) = &address.association
        && current.eni_id != eni_id
        && input.allow_reassociation != Some(true)
    {
        return Err(ApiError::new(
            Code::ResourceAlreadyAssociated,
            format!(
                "resource {allocation_id} is already associated with associate-id {}",
                current.id
            ),
        ));
    }
    if eni.interface_type == crate::generated::ec2::NetworkInterfaceType::NatGateway {
        return Err(ApiError::invalid_value(
            "A NAT gateway's interface cannot be given an address.",
        ));
    }
    detach(region, allocation_id);
    let id = attach(region, allocation_id, &eni_id, at)?;
    Ok(AssociateAddressResult {
        association_id: Some(id),
    })
}

/// `DisassociateAddress`; an association already undone is no error, as AWS documents.
pub fn disassociate_address(
    region: &mut Region,
    input: DisassociateAddressRequest,
) -> Result<(), ApiError> {
    if let Some(ip) = &input.public_ip {
        if input.association_id.is_none() {
            by_public_ip(region, ip)?;
        }
        return Err(public_ip_refused(
            input.association_id.is_some(),
            "association",
            "unmapping an address from a VPC instance",
        ));
    }
    let id = input
        .association_id
        .ok_or_else(|| ApiError::missing_parameter("AssociationId"))?;
    if !crate::ids::is_well_formed(&id, "eipassoc") {
        return Err(error::association_not_found(&id));
    }
    let Some(address) = region
        .addresses
        .values()
        .find(|a| a.association.as_ref().is_some_and(|x| x.id == id))
    else {
        return Ok(());
    };
    let eni = address
        .association
        .as_ref()
        .and_then(|x| region.network_interfaces.get(&x.eni_id));
    if eni.is_some_and(|e| {
        e.interface_type == crate::generated::ec2::NetworkInterfaceType::NatGateway
    }) {
        return Err(ApiError::new(
            Code::InvalidIPAddressInUse,
            format!(
                "The address {} is used by a NAT gateway.",
                address.public_ip
            ),
        ));
    }
    let allocation_id = address.allocation_id.clone();
    detach(region, &allocation_id);
    Ok(())
}

/// `ReleaseAddress`: refused while associated.
pub fn release_address(region: &mut Region, input: ReleaseAddressRequest) -> Result<(), ApiError> {
    if let Some(ip) = &input.public_ip {
        if input.allocation_id.is_none() {
            by_public_ip(region, ip)?;
        }
        return Err(public_ip_refused(
            input.allocation_id.is_some(),
            "allocation",
            "releasing a VPC elastic IP address",
        ));
    }
    let id = input
        .allocation_id
        .ok_or_else(|| ApiError::missing_parameter("AllocationId"))?;
    let address = Kind::ElasticIp.get(&region.addresses, &id)?;
    // AWS: "If you provide an incorrect network border group, you receive an
    // InvalidAddress.NotFound error."
    if let Some(group) = &input.network_border_group
        && group != address.border_group(region)
    {
        return Err(ApiError::new(
            Code::InvalidAddressNotFound,
            format!(
                "The address {} is not in the network border group {group}.",
                address.public_ip
            ),
        ));
    }
    if address.association.is_some() {
        return Err(ApiError::new(
            Code::InvalidIPAddressInUse,
            format!("Address {} is in use.", address.public_ip),
        ));
    }
    let ip = address.public_ip;
    region.addresses.0.remove(&id);
    region.public_ips.give_back(ip);
    region.tags.remove_resource(&id);
    Ok(())
}
