//! Subnets: CreateSubnet, DescribeSubnets, DeleteSubnet, ModifySubnetAttribute, and the
//! default subnets of the default VPC; the addresses and /28 prefixes interfaces take from a
//! subnet; `reservation`: subnet CIDR reservations, which steer the automatic ones.

mod reservation;

pub use reservation::{
    CidrReservation, create_subnet_cidr_reservation, delete_subnet_cidr_reservation,
    get_subnet_cidr_reservations, subnet_of as reservation_subnet,
};

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};

use crate::ec2::availability_zone::Zone;
use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::vpc::parse_cidr;
use crate::ec2::{Kind, page, tags, vpc_ipv6};
use crate::generated::ec2::{
    AssociateSubnetCidrBlockRequest, AssociateSubnetCidrBlockResult, BlockPublicAccessMode,
    BlockPublicAccessStates, CreateDefaultSubnetRequest, CreateDefaultSubnetResult,
    CreateSubnetRequest, CreateSubnetResult, DeleteSubnetRequest, DescribeSubnetsRequest,
    DescribeSubnetsResult, DisassociateSubnetCidrBlockRequest, DisassociateSubnetCidrBlockResult,
    HostnameType, IpSource, Ipv6AddressAttribute, ModifySubnetAttributeRequest,
    PrivateDnsNameOptionsOnLaunch, ResourceType, Subnet as SubnetOut, SubnetCidrBlockState,
    SubnetCidrBlockStateCode, SubnetCidrReservationType, SubnetIpv6CidrBlockAssociation,
    SubnetState,
};
use crate::protocol::error::ApiError;
use crate::protocol::error::Common;
use crate::region::Region;

crate::region::table! {
    /// Subnets by id.
    Subnets of Subnet
}

/// One subnet.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Subnet {
    /// `subnet-...`.
    pub id: String,
    /// The VPC it belongs to.
    pub vpc_id: String,
    /// Its IPv4 range.
    #[serde(with = "crate::state::with::text")]
    pub cidr: Ipv4Net,
    /// Its zone's name.
    pub zone: String,
    /// Its zone's id.
    pub zone_id: String,
    /// `pending` or `available`.
    pub state: SubnetState,
    /// Whether it is a default subnet of the default VPC.
    pub default_for_az: bool,
    /// Whether instances launched in it get a public IPv4 address.
    pub map_public_ip_on_launch: bool,
    /// The hostname type of instances launched in it.
    pub hostname_type: HostnameType,
    /// Whether DNS A records of instance hostnames are answered.
    pub dns_a_record: bool,
    /// Addresses in use by network interfaces.
    pub allocated: BTreeSet<Ipv4Addr>,
    /// Its IPv6 block, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6: Option<SubnetIpv6>,
    /// The `AssignIpv6AddressOnCreation` attribute.
    #[serde(default)]
    pub assign_ipv6_on_creation: bool,
    /// IPv6 addresses in use by network interfaces.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub ipv6_allocated: BTreeSet<Ipv6Addr>,
    /// The `EnableDns64` attribute.
    #[serde(default)]
    pub dns64: bool,
    /// Whether DNS AAAA records of instance hostnames are answered
    /// (`EnableResourceNameDnsAAAARecordOnLaunch`).
    #[serde(default)]
    pub dns_aaaa_record: bool,
    /// Its CIDR reservations, IPv4 and IPv6, in the order they were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<CidrReservation>,
    /// The /80 IPv6 prefixes of its block interfaces hold.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::state::with::text_list"
    )]
    pub ipv6_prefixes: Vec<Ipv6Net>,
}

/// A subnet's IPv6 block: a /64 of one of its VPC's blocks.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SubnetIpv6 {
    /// `subnet-cidr-assoc-...`.
    pub association_id: String,
    /// The /64.
    #[serde(with = "crate::state::with::text")]
    pub cidr: Ipv6Net,
}

impl Subnet {
    /// The number of free addresses: the range less AWS's five reserved and those in use.
    pub fn available_addresses(&self) -> u32 {
        let size = 1u64 << (32 - u32::from(self.cidr.prefix_len()));
        u32::try_from(size.saturating_sub(5))
            .unwrap_or(u32::MAX)
            .saturating_sub(u32::try_from(self.allocated.len()).unwrap_or(u32::MAX))
    }

    /// The number of free addresses the subnet can assign on its own (an address asked for by
    /// count): the free ones outside its IPv4 CIDR reservations. Counted address by address
    /// only when it has a reservation.
    pub fn assignable_addresses(&self) -> u32 {
        if !self.reservations.iter().any(|r| r.v4().is_some()) {
            return self.available_addresses();
        }
        let free = self
            .usable()
            .filter(|ip| !self.allocated.contains(ip) && !self.reserved(*ip))
            .count();
        u32::try_from(free).unwrap_or(u32::MAX)
    }

    /// The addresses interfaces may use: all but the first four and the last.
    fn usable(&self) -> impl Iterator<Item = Ipv4Addr> {
        let first = u32::from(self.cidr.network()) + 4;
        let last = u32::from(self.cidr.broadcast()).saturating_sub(1);
        (first..=last).map(Ipv4Addr::from)
    }

    /// Fails unless `ip` is a usable, free address of this subnet.
    pub fn check_free(&self, ip: Ipv4Addr) -> Result<(), ApiError> {
        if !self.usable().any(|u| u == ip) {
            return Err(ApiError::invalid_parameter(
                "privateIpAddress",
                &ip.to_string(),
                &format!(
                    "Address does not fall within the subnet's address range {}, or is reserved.",
                    self.cidr
                ),
            ));
        }
        if self.allocated.contains(&ip) {
            return Err(ApiError::new(
                Code::InvalidIPAddressInUse,
                format!("Address {ip} is in use."),
            ));
        }
        Ok(())
    }

    /// Takes `wanted`, or the lowest free address outside the subnet's reservations.
    fn allocate(&mut self, wanted: Option<Ipv4Addr>) -> Result<Ipv4Addr, ApiError> {
        let ip = match wanted {
            Some(ip) => {
                self.check_free(ip)?;
                ip
            }
            // An address the subnet assigns itself is never one of a CIDR reservation's.
            None => self
                .usable()
                .find(|ip| !self.allocated.contains(ip) && !self.reserved(*ip))
                .ok_or_else(|| {
                    ApiError::new(
                        Code::InsufficientFreeAddressesInSubnet,
                        format!(
                            "There are not enough free addresses in subnet '{}'.",
                            self.id
                        ),
                    )
                })?,
        };
        self.allocated.insert(ip);
        Ok(ip)
    }

    /// Frees an address.
    fn release(&mut self, ip: Ipv4Addr) {
        self.allocated.remove(&ip);
    }

    /// Whether `ip` is in one of the subnet's IPv4 CIDR reservations.
    fn reserved(&self, ip: Ipv4Addr) -> bool {
        self.reservations.iter().any(|r| r.contains_v4(ip))
    }

    /// Whether the /28 `block` is usable (none of AWS's five addresses) and free.
    fn block_free(&self, block: Ipv4Net) -> bool {
        let first = u32::from(self.cidr.network()) + 4;
        let last = u32::from(self.cidr.broadcast()).saturating_sub(1);
        let (lo, hi) = (u32::from(block.network()), u32::from(block.broadcast()));
        self.cidr.contains(&block)
            && lo >= first
            && hi <= last
            && self
                .allocated
                .range(Ipv4Addr::from(lo)..=Ipv4Addr::from(hi))
                .next()
                .is_none()
    }

    /// The aligned /28s of `range`, lowest first.
    fn blocks_of(range: Ipv4Net) -> impl Iterator<Item = Ipv4Net> {
        let len = range.prefix_len().min(PREFIX_LEN);
        let start = u32::from(range.network());
        let count = 1u32 << (PREFIX_LEN - len);
        (0..count).filter_map(move |n| {
            Ipv4Net::new(Ipv4Addr::from(start + n * PREFIX_SIZE), PREFIX_LEN).ok()
        })
    }

    /// Takes the /28 prefix `wanted`, or the lowest free one: from the subnet's `prefix`
    /// reservations first, then from the space no reservation holds, as AWS assigns them.
    fn allocate_prefix(&mut self, wanted: Option<Ipv4Net>) -> Result<Ipv4Net, ApiError> {
        let block = match wanted {
            Some(p) => {
                if p.prefix_len() != PREFIX_LEN || !self.cidr.contains(&p) {
                    return Err(ApiError::invalid_parameter(
                        "ipv4Prefix",
                        &p.to_string(),
                        &format!(
                            "An IPv4 prefix is a /28 of the subnet's range {}.",
                            self.cidr
                        ),
                    ));
                }
                if !self.block_free(p) {
                    return Err(ApiError::new(
                        Code::InvalidIPAddressInUse,
                        format!(
                            "The prefix {p} holds an address in use or reserved by AWS in subnet '{}'.",
                            self.id
                        ),
                    ));
                }
                p
            }
            None => {
                let in_prefix_reservations = self
                    .reservations
                    .iter()
                    .filter(|r| r.kind == SubnetCidrReservationType::Prefix)
                    .filter_map(|r| r.v4())
                    .flat_map(Self::blocks_of)
                    .find(|b| self.block_free(*b));
                let elsewhere = || {
                    Self::blocks_of(self.cidr).find(|b| {
                        self.block_free(*b)
                            && !self
                                .reservations
                                .iter()
                                .filter_map(|r| r.v4())
                                .any(|r| r.contains(&b.network()) || b.contains(&r.network()))
                    })
                };
                in_prefix_reservations
                    .or_else(elsewhere)
                    .ok_or_else(|| {
                        ApiError::new(
                            Code::InsufficientCidrBlocks,
                            "The specified subnet does not have enough free cidr blocks to satisfy the request.",
                        )
                    })?
            }
        };
        let lo = u32::from(block.network());
        self.allocated
            .extend((lo..lo + PREFIX_SIZE).map(Ipv4Addr::from));
        Ok(block)
    }

    /// Frees the addresses of a /28 prefix.
    fn release_prefix(&mut self, block: Ipv4Net) {
        let lo = u32::from(block.network());
        for a in lo..lo.saturating_add(PREFIX_SIZE) {
            self.allocated.remove(&Ipv4Addr::from(a));
        }
    }

    /// Fails unless `ip` is a usable, free IPv6 address of this subnet's block: AWS keeps the
    /// first four and the last address of a block.
    pub fn check_free_ipv6(&self, ip: Ipv6Addr) -> Result<(), ApiError> {
        let Some(block) = self.ipv6.as_ref().map(|b| b.cidr) else {
            return Err(no_ipv6_block(&self.id));
        };
        // The address's place in the block (none outside it).
        let host = u128::from(ip).checked_sub(u128::from(block.network()));
        let last = u128::from(block.broadcast()) - u128::from(block.network());
        let usable = block.contains(&ip) && host.is_some_and(|h| h >= 4 && h != last);
        if !usable {
            return Err(ApiError::invalid_parameter(
                "ipv6Addresses",
                &ip.to_string(),
                &format!(
                    "Address does not fall within the subnet's IPv6 CIDR block {block}, or is \
                     reserved."
                ),
            ));
        }
        if self.ipv6_allocated.contains(&ip) || self.ipv6_prefixes.iter().any(|p| p.contains(&ip)) {
            return Err(ApiError::new(
                Code::InvalidIPAddressInUse,
                format!("Address {ip} is in use."),
            ));
        }
        Ok(())
    }

    /// The last address of the IPv6 prefix or reservation holding `ip`, if one does: what an
    /// address drawn at random steps over.
    fn ipv6_range_end(&self, ip: Ipv6Addr) -> Option<u128> {
        self.ipv6_prefixes
            .iter()
            .copied()
            .chain(self.reservations.iter().filter_map(|r| r.v6()))
            .find(|n| n.contains(&ip))
            .map(|n| u128::from(n.broadcast()))
    }

    /// Whether the /80 `block` is usable (none of AWS's five addresses of the subnet's /64)
    /// and free: no address, prefix or (unless `in_reservation`) reservation of the subnet in
    /// it.
    fn ipv6_block_free(&self, block: Ipv6Net, within: Ipv6Net, in_reservation: bool) -> bool {
        let (lo, hi) = (block.network(), block.broadcast());
        let first = u128::from(within.network()) + 4;
        let last = u128::from(within.broadcast()) - 1;
        within.contains(&block)
            && u128::from(lo) >= first
            && u128::from(hi) <= last
            && self.ipv6_allocated.range(lo..=hi).next().is_none()
            && !self
                .ipv6_prefixes
                .iter()
                .any(|p| p.contains(&lo) || block.contains(&p.network()))
            && (in_reservation
                || !self
                    .reservations
                    .iter()
                    .filter_map(|r| r.v6())
                    .any(|r| r.contains(&lo) || block.contains(&r.network())))
    }
}

/// The refusal of IPv6 addresses in subnet `id`, which has no IPv6 block.
pub fn no_ipv6_block(id: &str) -> ApiError {
    ApiError::invalid_value(format!(
        "The subnet '{id}' has no IPv6 CIDR block: it has no IPv6 addresses to assign."
    ))
}

/// Takes an IPv6 address in subnet `id` for an interface: `wanted`, or one drawn at random
/// from the subnet's block (as AWS assigns them).
pub fn allocate_ipv6(
    region: &mut Region,
    id: &str,
    wanted: Option<Ipv6Addr>,
) -> Result<Ipv6Addr, ApiError> {
    let draw = region.ids.next_u64();
    let s = Kind::Subnet.get_mut(&mut region.subnets.0, id)?;
    let Some(block) = s.ipv6.as_ref().map(|b| b.cidr) else {
        return Err(no_ipv6_block(id));
    };
    let ip = match wanted {
        Some(ip) => {
            s.check_free_ipv6(ip)?;
            ip
        }
        None => {
            // 2^64 addresses: a draw is free but for a vanishing chance; step on until one is,
            // over prefixes and reservations at a stride. Each step passes one address in use
            // or one range: a block with no free address left ends the walk.
            let base = u128::from(block.network());
            let mask = u128::from(u64::MAX);
            let mut host = u128::from(draw);
            let bound = s.ipv6_allocated.len() + s.ipv6_prefixes.len() + s.reservations.len() + 8;
            let mut found = None;
            for _ in 0..=bound {
                let ip = Ipv6Addr::from(base | host);
                if let Some(end) = s.ipv6_range_end(ip) {
                    host = end.wrapping_add(1).wrapping_sub(base) & mask;
                    continue;
                }
                if s.check_free_ipv6(ip).is_ok() {
                    found = Some(ip);
                    break;
                }
                host = host.wrapping_add(1) & mask;
            }
            found.ok_or_else(|| {
                ApiError::new(
                    Code::InsufficientFreeAddressesInSubnet,
                    format!("There are not enough free addresses in subnet '{id}'."),
                )
            })?
        }
    };
    s.ipv6_allocated.insert(ip);
    Ok(ip)
}

/// The length of the IPv6 prefixes interfaces are assigned.
pub const IPV6_PREFIX_LEN: u8 = 80;

/// Takes a /80 IPv6 prefix of subnet `id`'s block for an interface: `wanted`, or a free one
/// from the subnet's IPv6 `prefix` reservations first, else one drawn at random where no
/// reservation is (`InsufficientCidrBlocks` when none is left).
pub fn allocate_ipv6_prefix(
    region: &mut Region,
    id: &str,
    wanted: Option<Ipv6Net>,
) -> Result<Ipv6Net, ApiError> {
    let draw = region.ids.next_u64();
    let s = Kind::Subnet.get_mut(&mut region.subnets.0, id)?;
    let Some(block) = s.ipv6.as_ref().map(|b| b.cidr) else {
        return Err(no_ipv6_block(id));
    };
    let none_left = || {
        ApiError::new(
            Code::InsufficientCidrBlocks,
            "The specified subnet does not have enough free cidr blocks to satisfy the request.",
        )
    };
    let prefix = match wanted {
        Some(p) => {
            if p.prefix_len() != IPV6_PREFIX_LEN || !block.contains(&p) {
                return Err(ApiError::invalid_parameter(
                    "ipv6Prefix",
                    &p.to_string(),
                    &format!("An IPv6 prefix is a /80 of the subnet's IPv6 block {block}."),
                ));
            }
            if !s.ipv6_block_free(p, block, true) {
                return Err(ApiError::new(
                    Code::InvalidIPAddressInUse,
                    format!(
                        "The prefix {p} holds an address in use or reserved by AWS in subnet '{id}'."
                    ),
                ));
            }
            p
        }
        None => {
            let parts = |within: Ipv6Net| within.subnets(IPV6_PREFIX_LEN).into_iter().flatten();
            let reserved = s
                .reservations
                .iter()
                .filter(|r| r.kind == SubnetCidrReservationType::Prefix)
                .filter_map(|r| r.v6())
                .flat_map(|r| parts(r).filter(move |p| r.contains(p)))
                .find(|p| s.ipv6_block_free(*p, block, true));
            match reserved {
                Some(p) => p,
                None => {
                    // The 2^16 /80s of the /64, from one drawn at random.
                    let count: u128 = 1 << (IPV6_PREFIX_LEN - block.prefix_len().min(80));
                    let start = u128::from(draw) % count;
                    let stride = 1u128 << (128 - IPV6_PREFIX_LEN);
                    (0..count)
                        .filter_map(|n| {
                            let at = u128::from(block.network()) + ((start + n) % count) * stride;
                            Ipv6Net::new(Ipv6Addr::from(at), IPV6_PREFIX_LEN).ok()
                        })
                        .find(|p| s.ipv6_block_free(*p, block, false))
                        .ok_or_else(none_left)?
                }
            }
        }
    };
    s.ipv6_prefixes.push(prefix);
    Ok(prefix)
}

/// Gives the /80 IPv6 prefix `prefix` back to subnet `id`.
pub fn release_ipv6_prefix(region: &mut Region, id: &str, prefix: Ipv6Net) {
    if let Some(s) = region.subnets.0.get_mut(id) {
        s.ipv6_prefixes.retain(|p| *p != prefix);
    }
}

/// Gives the IPv6 address `ip` back to subnet `id`.
pub fn release_ipv6(region: &mut Region, id: &str, ip: Ipv6Addr) {
    if let Some(s) = region.subnets.0.get_mut(id) {
        s.ipv6_allocated.remove(&ip);
    }
}

impl Filterable for (&Subnet, &Region) {
    const NAMES: &'static [&'static str] = &[
        "availability-zone",
        "availability-zone-id",
        "availabilityZone",
        "available-ip-address-count",
        "cidr",
        "cidr-block",
        "cidrBlock",
        "customer-owned-ipv4-pool",
        "default-for-az",
        "defaultForAz",
        "enable-dns64",
        "enable-lni-at-device-index",
        "ipv6-cidr-block-association.ipv6-cidr-block",
        "ipv6-cidr-block-association.association-id",
        "ipv6-cidr-block-association.state",
        "ipv6-native",
        "map-customer-owned-ip-on-launch",
        "map-public-ip-on-launch",
        "outpost-arn",
        "owner-id",
        "private-dns-name-options-on-launch.hostname-type",
        "private-dns-name-options-on-launch.enable-resource-name-dns-a-record",
        "private-dns-name-options-on-launch.enable-resource-name-dns-aaaa-record",
        "state",
        "subnet-arn",
        "subnet-id",
        "vpc-id",
    ];
    // No customer-owned pools, LNI or outposts here.
    const NEVER_SET: &'static [&'static str] = &[
        "customer-owned-ipv4-pool",
        "enable-lni-at-device-index",
        "outpost-arn",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (s, region) = *self;
        match name {
            "availability-zone" | "availabilityZone" => one(s.zone.clone()),
            "availability-zone-id" => one(s.zone_id.clone()),
            "available-ip-address-count" => one(s.available_addresses().to_string()),
            "cidr" | "cidr-block" | "cidrBlock" => one(crate::ec2::vpc::cidr_text(&s.cidr)),
            "default-for-az" | "defaultForAz" => flag(s.default_for_az),
            "enable-dns64" => flag(s.dns64),
            "ipv6-native" | "map-customer-owned-ip-on-launch" => flag(false),
            "ipv6-cidr-block-association.ipv6-cidr-block" => {
                s.ipv6.iter().map(|b| b.cidr.to_string()).collect()
            }
            "ipv6-cidr-block-association.association-id" => {
                s.ipv6.iter().map(|b| b.association_id.clone()).collect()
            }
            "ipv6-cidr-block-association.state" => {
                s.ipv6.iter().map(|_| "associated".to_string()).collect()
            }
            "map-public-ip-on-launch" => flag(s.map_public_ip_on_launch),
            "owner-id" => one(region.account_id.clone()),
            "private-dns-name-options-on-launch.hostname-type" => one(s.hostname_type.as_str()),
            "private-dns-name-options-on-launch.enable-resource-name-dns-a-record" => {
                flag(s.dns_a_record)
            }
            "private-dns-name-options-on-launch.enable-resource-name-dns-aaaa-record" => {
                flag(s.dns_aaaa_record)
            }
            "state" => one(s.state.as_str()),
            "subnet-arn" => one(arn(region, &s.id)),
            "subnet-id" => one(s.id.clone()),
            "vpc-id" => one(s.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

fn arn(region: &Region, id: &str) -> String {
    format!(
        "arn:{}:ec2:{}:{}:subnet/{id}",
        crate::ec2::account::arn_partition(&region.name),
        region.name,
        region.account_id
    )
}

fn render(region: &Region, s: &Subnet) -> SubnetOut {
    SubnetOut {
        availability_zone_id: Some(s.zone_id.clone()),
        map_customer_owned_ip_on_launch: Some(false),
        owner_id: Some(region.account_id.clone()),
        assign_ipv6_address_on_creation: Some(s.assign_ipv6_on_creation),
        ipv6_cidr_block_association_set: Some(
            s.ipv6
                .iter()
                .map(|b| ipv6_association(b, SubnetCidrBlockStateCode::Associated))
                .collect(),
        ),
        tags: region.tags.tag_set(&s.id),
        subnet_arn: Some(arn(region, &s.id)),
        enable_dns64: Some(s.dns64),
        ipv6_native: Some(false),
        private_dns_name_options_on_launch: Some(PrivateDnsNameOptionsOnLaunch {
            hostname_type: Some(s.hostname_type),
            enable_resource_name_dns_a_record: Some(s.dns_a_record),
            enable_resource_name_dns_aaaa_record: Some(s.dns_aaaa_record),
        }),
        block_public_access_states: Some(BlockPublicAccessStates {
            internet_gateway_block_mode: Some(BlockPublicAccessMode::Off),
        }),
        subnet_id: Some(s.id.clone()),
        state: Some(s.state),
        vpc_id: Some(s.vpc_id.clone()),
        cidr_block: Some(crate::ec2::vpc::cidr_text(&s.cidr)),
        available_ip_address_count: Some(
            i32::try_from(s.available_addresses()).unwrap_or(i32::MAX),
        ),
        availability_zone: Some(s.zone.clone()),
        default_for_az: Some(s.default_for_az),
        map_public_ip_on_launch: Some(s.map_public_ip_on_launch),
        ..Default::default()
    }
}

/// A subnet's IPv6 block as AWS writes it, in `state`.
fn ipv6_association(
    b: &SubnetIpv6,
    state: SubnetCidrBlockStateCode,
) -> SubnetIpv6CidrBlockAssociation {
    SubnetIpv6CidrBlockAssociation {
        association_id: Some(b.association_id.clone()),
        ipv6_cidr_block: Some(b.cidr.to_string()),
        ipv6_cidr_block_state: Some(SubnetCidrBlockState {
            state: Some(state),
            status_message: None,
        }),
        ipv6_address_attribute: Some(Ipv6AddressAttribute::Public),
        ip_source: Some(IpSource::Amazon),
    }
}

/// Checks `raw` as the IPv6 block of a subnet (without one) of the VPC `vpc_id`: a /64
/// within one of the VPC's blocks that no subnet of the VPC holds.
fn check_ipv6_block(region: &Region, vpc_id: &str, raw: &str) -> Result<Ipv6Net, ApiError> {
    let cidr = vpc_ipv6::parse_ipv6_cidr(raw, "ipv6CidrBlock")?;
    // AWS's answers, words and all: a length other than /64 is a bad value, a /64 outside
    // the VPC's blocks a bad range.
    if cidr.prefix_len() != vpc_ipv6::SUBNET_PREFIX {
        return Err(ApiError::invalid_value(format!(
            "invalid value for parameter ipv6-cidr-block: {raw}"
        )));
    }
    let in_vpc = region
        .vpcs
        .get(vpc_id)
        .is_some_and(|v| v.ipv6.iter().any(|b| b.cidr.contains(&cidr)));
    if !in_vpc {
        return Err(ApiError::new(
            Code::InvalidSubnetRange,
            format!("The IPv6 CIDR '{raw}' is invalid."),
        ));
    }
    if region
        .by_vpc
        .of_kind(vpc_id, "subnet")
        .filter_map(|id| region.subnets.get(id))
        .any(|s| s.ipv6.as_ref().is_some_and(|b| b.cidr == cidr))
    {
        return Err(ApiError::new(
            Code::InvalidSubnetConflict,
            format!("The IPv6 CIDR '{raw}' conflicts with another subnet"),
        ));
    }
    Ok(cidr)
}

/// `AssociateSubnetCidrBlock`: a /64 of the VPC's IPv6 blocks, for a subnet without one.
pub fn associate_subnet_cidr_block(
    region: &mut Region,
    input: AssociateSubnetCidrBlockRequest,
) -> Result<AssociateSubnetCidrBlockResult, ApiError> {
    let subnet = Kind::Subnet.get(&region.subnets, &input.subnet_id)?;
    let raw = input
        .ipv6_cidr_block
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("Ipv6CidrBlock"))?;
    if let Some(b) = &subnet.ipv6 {
        return Err(ApiError::invalid_value(format!(
            "The subnet '{}' already has the IPv6 CIDR block {} ({}).",
            subnet.id, b.cidr, b.association_id
        )));
    }
    let cidr = check_ipv6_block(region, &subnet.vpc_id, raw)?;
    let block = SubnetIpv6 {
        association_id: region.ids.resource("subnet-cidr-assoc"),
        cidr,
    };
    let out = ipv6_association(&block, SubnetCidrBlockStateCode::Associating);
    if let Some(s) = region.subnets.0.get_mut(&input.subnet_id) {
        s.ipv6 = Some(block);
    }
    Ok(AssociateSubnetCidrBlockResult {
        ipv6_cidr_block_association: Some(out),
        subnet_id: Some(input.subnet_id),
    })
}

/// `DisassociateSubnetCidrBlock`: the subnet's IPv6 block goes (the subnet stays); refused
/// while the subnet assigns IPv6 addresses on creation, as AWS refuses it.
pub fn disassociate_subnet_cidr_block(
    region: &mut Region,
    input: DisassociateSubnetCidrBlockRequest,
) -> Result<DisassociateSubnetCidrBlockResult, ApiError> {
    let id = input.association_id;
    let Some(subnet) = region
        .subnets
        .0
        .values_mut()
        .find(|s| s.ipv6.as_ref().is_some_and(|b| b.association_id == id))
    else {
        return Err(ApiError::new(
            Code::InvalidSubnetCidrBlockAssociationIDNotFound,
            format!("The subnet CIDR block association ID '{id}' does not exist"),
        ));
    };
    if !subnet.ipv6_allocated.is_empty() {
        return Err(ApiError::new(
            Code::InvalidCidrBlockInUse,
            format!(
                "The subnet IPv6 CIDR block with association ID {id} may not be disassociated \
                 while network interfaces hold {} of its addresses.",
                subnet.ipv6_allocated.len()
            ),
        ));
    }
    // An IPv6 attribute set to true keeps the block, as assign-ipv6-address-on-creation does
    // on AWS.
    let set = [
        (
            subnet.assign_ipv6_on_creation,
            "assign-ipv6-address-on-creation",
        ),
        (subnet.dns64, "enable-dns64"),
        (
            subnet.dns_aaaa_record,
            "enable-resource-name-dns-aaaa-record-on-launch",
        ),
    ];
    if let Some((_, attribute)) = set.iter().find(|(on, _)| *on) {
        return Err(ApiError::new(
            Code::InvalidCidrBlockInUse,
            format!(
                "The subnet IPv6 CIDR block with association ID {id} may not be disassociated, \
                 because its subnet has {attribute} set to true."
            ),
        ));
    }
    let out = subnet
        .ipv6
        .take()
        .map(|b| ipv6_association(&b, SubnetCidrBlockStateCode::Disassociating));
    Ok(DisassociateSubnetCidrBlockResult {
        ipv6_cidr_block_association: out,
        subnet_id: Some(subnet.id.clone()),
    })
}

/// Creates the default VPC's subnets: one /20 per zone, mapping public IPs.
pub fn create_defaults(region: &mut Region, vpc_id: &str, vpc_cidr: Ipv4Net) {
    let Ok(mut ranges) = vpc_cidr.subnets(20) else {
        return;
    };
    let zones = region.zones.clone();
    for zone in zones {
        let Some(cidr) = ranges.next() else { return };
        insert_default(region, vpc_id, cidr, &zone);
    }
}

/// Adds a default subnet of `vpc_id`: `cidr` in `zone`, mapping public IPs; returns its id.
fn insert_default(region: &mut Region, vpc_id: &str, cidr: Ipv4Net, zone: &Zone) -> String {
    let id = region.ids.resource("subnet");
    region.by_vpc.insert(vpc_id, &id);
    region.subnets.0.insert(
        id.clone(),
        Subnet {
            id: id.clone(),
            vpc_id: vpc_id.to_string(),
            cidr,
            zone: zone.name.clone(),
            zone_id: zone.id.clone(),
            state: SubnetState::Available,
            default_for_az: true,
            map_public_ip_on_launch: true,
            hostname_type: HostnameType::IpName,
            dns_a_record: false,
            allocated: BTreeSet::new(),
            ipv6: None,
            assign_ipv6_on_creation: false,
            ipv6_allocated: BTreeSet::new(),
            dns64: false,
            dns_aaaa_record: false,
            reservations: Vec::new(),
            ipv6_prefixes: Vec::new(),
        },
    );
    id
}

/// The zone a request names by `AvailabilityZone` or `AvailabilityZoneId` (not both), if it
/// names one.
fn requested_zone(
    region: &Region,
    name: Option<&str>,
    id: Option<&str>,
) -> Result<Option<Zone>, ApiError> {
    match (name, id) {
        (Some(_), Some(_)) => Err(ApiError::invalid_combination(
            "Only one of AvailabilityZone or AvailabilityZoneId may be specified.",
        )),
        (Some(name), None) => region
            .zone(name)
            .filter(|z| region.zone_usable(z))
            .cloned()
            .map(Some)
            .ok_or_else(|| {
            ApiError::invalid_parameter(
                "availabilityZone",
                name,
                &format!(
                    "Subnets can currently only be created in the following availability zones: {}.",
                    zone_list(region)
                ),
            )
        }),
        (None, Some(id)) => region
            .zone_by_id(id)
            .filter(|z| region.zone_usable(z))
            .cloned()
            .map(Some)
            .ok_or_else(|| {
            ApiError::invalid_parameter("availabilityZoneId", id, "No such availability zone.")
        }),
        (None, None) => Ok(None),
    }
}

/// `CreateDefaultSubnet`: a default subnet (a /20 mapping public IPs) in the zone named, in
/// the default VPC, which holds one per zone at most; its range is the lowest /20 of the
/// VPC's block that no subnet of the VPC overlaps.
pub fn create_default_subnet(
    region: &mut Region,
    input: CreateDefaultSubnetRequest,
) -> Result<CreateDefaultSubnetResult, ApiError> {
    if input.ipv6_native == Some(true) {
        return Err(ApiError::not_implemented(
            "fakeaws does not serve IPv6-only subnets (Ipv6Native)",
        ));
    }
    let zone = requested_zone(
        region,
        input.availability_zone.as_deref(),
        input.availability_zone_id.as_deref(),
    )?
    .ok_or_else(|| ApiError::missing_parameter("AvailabilityZone"))?;
    let Some(vpc) = region.default_vpc() else {
        return Err(ApiError::new(
            Code::DefaultVpcDoesNotExist,
            "There is no default VPC in which to carry out this request.",
        ));
    };
    let (vpc_id, vpc_cidr) = (vpc.id.clone(), vpc.cidr);
    let subnets: Vec<&Subnet> = region
        .by_vpc
        .of_kind(&vpc_id, "subnet")
        .filter_map(|id| region.subnets.get(id))
        .collect();
    if subnets
        .iter()
        .any(|s| s.default_for_az && s.zone == zone.name)
    {
        return Err(ApiError::new(
            Code::DefaultSubnetAlreadyExistsInAvailabilityZone,
            format!(
                "A default subnet already exists in the Availability Zone {}.",
                zone.name
            ),
        ));
    }
    if subnets.len() >= region.limits.subnets_per_vpc {
        return Err(ApiError::new(
            Code::SubnetLimitExceeded,
            "The maximum number of subnets for this VPC has been reached.",
        ));
    }
    let free = vpc_cidr.subnets(20).ok().and_then(|mut ranges| {
        ranges.find(|r| {
            !subnets
                .iter()
                .any(|s| s.cidr.contains(r) || r.contains(&s.cidr))
        })
    });
    let Some(cidr) = free else {
        return Err(ApiError::new(
            Code::InvalidSubnetConflict,
            format!("The default VPC {vpc_id} has no /20 range free for a default subnet."),
        ));
    };
    let id = insert_default(region, &vpc_id, cidr, &zone);
    let Some(subnet) = region.subnets.get(&id) else {
        return Err(Kind::Subnet.not_found(&[&id]));
    };
    Ok(CreateDefaultSubnetResult {
        subnet: Some(render(region, subnet)),
    })
}

/// `CreateSubnet`.
pub fn create_subnet(
    region: &mut Region,
    input: CreateSubnetRequest,
) -> Result<CreateSubnetResult, ApiError> {
    let vpc = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let raw = input
        .cidr_block
        .ok_or_else(|| ApiError::missing_parameter("CidrBlock"))?;
    let cidr = parse_cidr(&raw, "cidrBlock")?;
    // Within one of the VPC's ranges (a subnet never spans two).
    if !(16..=28).contains(&cidr.prefix_len()) || vpc.range_holding(&cidr).is_none() {
        return Err(ApiError::new(
            Code::InvalidSubnetRange,
            format!("The CIDR '{raw}' is invalid."),
        ));
    }
    // The VPC's own subnets, from its index: the cost follows the VPC, not the region.
    if region
        .by_vpc
        .of_kind(&input.vpc_id, "subnet")
        .filter_map(|id| region.subnets.get(id))
        .any(|s| s.cidr.contains(&cidr) || cidr.contains(&s.cidr))
    {
        return Err(ApiError::new(
            Code::InvalidSubnetConflict,
            format!("The CIDR '{raw}' conflicts with another subnet"),
        ));
    }
    let requested = requested_zone(
        region,
        input.availability_zone.as_deref(),
        input.availability_zone_id.as_deref(),
    )?;
    let zone = match requested {
        Some(zone) => zone,
        None => {
            // AWS picks a zone; spread subnets over the zones in turn.
            let n = region.by_vpc.of_kind(&input.vpc_id, "subnet").count();
            let index = n % region.zones.len().max(1);
            region.zones.get(index).cloned().ok_or_else(|| {
                ApiError::new(
                    Common::InternalError,
                    "The region has no availability zones.",
                )
            })?
        }
    };
    let ipv6 = input
        .ipv6_cidr_block
        .as_deref()
        .map(|raw| check_ipv6_block(region, &input.vpc_id, raw))
        .transpose()?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Subnet)?;
    // From the VPC index: the cost follows the VPC, not the region.
    let in_vpc = region.by_vpc.of_kind(&input.vpc_id, "subnet").count();
    if in_vpc >= region.limits.subnets_per_vpc {
        return Err(ApiError::new(
            Code::SubnetLimitExceeded,
            "The maximum number of subnets for this VPC has been reached.",
        ));
    }
    let id = region.ids.resource("subnet");
    let ipv6 = ipv6.map(|cidr| SubnetIpv6 {
        association_id: region.ids.resource("subnet-cidr-assoc"),
        cidr,
    });
    let subnet = Subnet {
        id,
        vpc_id: input.vpc_id,
        cidr,
        zone: zone.name,
        zone_id: zone.id,
        state: SubnetState::Available,
        default_for_az: false,
        map_public_ip_on_launch: false,
        hostname_type: HostnameType::IpName,
        dns_a_record: false,
        allocated: BTreeSet::new(),
        ipv6,
        assign_ipv6_on_creation: false,
        ipv6_allocated: BTreeSet::new(),
        dns64: false,
        dns_aaaa_record: false,
        reservations: Vec::new(),
        ipv6_prefixes: Vec::new(),
    };
    region.tags.insert(&subnet.id, tags);
    let mut out = render(region, &subnet);
    // AWS answers CreateSubnet while the subnet is pending (and its IPv6 block still
    // associating); both are ready right after.
    out.state = Some(SubnetState::Pending);
    out.ipv6_cidr_block_association_set = Some(
        subnet
            .ipv6
            .iter()
            .map(|b| ipv6_association(b, SubnetCidrBlockStateCode::Associating))
            .collect(),
    );
    region.by_vpc.insert(&subnet.vpc_id, &subnet.id);
    region.subnets.0.insert(subnet.id.clone(), subnet);
    Ok(CreateSubnetResult { subnet: Some(out) })
}

fn zone_list(region: &Region) -> String {
    region
        .usable_zones()
        .map(|z| z.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `DescribeSubnets`.
pub fn describe_subnets(
    region: &Region,
    input: DescribeSubnetsRequest,
) -> Result<DescribeSubnetsResult, ApiError> {
    let filters = Filters::parse::<(&Subnet, &Region)>(input.filters)?;
    let matching = Kind::Subnet.describe(
        &region.consistency,
        &region.subnets,
        input.subnet_ids.as_deref(),
        region.candidates(Kind::Subnet, &filters),
        |s| filters.matches(&(s, region), region.tags.get(&s.id)),
    )?;
    let (items, next) = page::page(
        matching,
        |s| s.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeSubnetsResult {
        next_token: next,
        subnets: Some(items.into_iter().map(|s| render(region, s)).collect()),
    })
}

/// `DeleteSubnet`: refused while anything uses an address in it (interfaces of instances
/// and NAT gateways, load balancer nodes); its route table association goes with it.
pub fn delete_subnet(region: &mut Region, input: DeleteSubnetRequest) -> Result<(), ApiError> {
    let id = input.subnet_id;
    let subnet = Kind::Subnet.get(&region.subnets, &id)?;
    let used_by_lb = region
        .load_balancers
        .values()
        .any(|lb| lb.subnets.contains(&id));
    let live_instance = region
        .by_subnet
        .of_kind(&id, "i")
        .filter_map(|i| region.instances.get(i))
        .any(|i| i.state != crate::generated::ec2::InstanceStateName::Terminated);
    if !subnet.allocated.is_empty() || used_by_lb || live_instance {
        return Err(ApiError::dependency_violation(format!(
            "The subnet '{id}' has dependencies and cannot be deleted."
        )));
    }
    let vpc_id = subnet.vpc_id.clone();
    let reservations: Vec<String> = subnet.reservations.iter().map(|r| r.id.clone()).collect();
    region.subnets.0.remove(&id);
    region.by_vpc.remove(&vpc_id, &id);
    region.tags.remove_resource(&id);
    for r in reservations {
        region.tags.remove_resource(&r);
    }
    crate::ec2::route_table::forget_subnet(region, &id);
    crate::ec2::network_acl::forget_subnet(region, &id);
    crate::ec2::flow_log::resource_gone(region, &id);
    Ok(())
}

/// `ModifySubnetAttribute`: one attribute per call, as AWS requires.
pub fn modify_subnet_attribute(
    region: &mut Region,
    input: ModifySubnetAttributeRequest,
) -> Result<(), ApiError> {
    Kind::Subnet.get(&region.subnets, &input.subnet_id)?;
    let given = usize::from(input.map_public_ip_on_launch.is_some())
        + usize::from(input.private_dns_hostname_type_on_launch.is_some())
        + usize::from(input.enable_resource_name_dns_a_record_on_launch.is_some())
        + usize::from(input.assign_ipv6_address_on_creation.is_some())
        + usize::from(input.enable_dns64.is_some())
        + usize::from(
            input
                .enable_resource_name_dns_aaaa_record_on_launch
                .is_some(),
        );
    if given == 0 {
        return Err(ApiError::missing_parameter("MapPublicIpOnLaunch"));
    }
    if given > 1 {
        return Err(ApiError::invalid_combination(
            "Specify only one attribute to modify at a time.",
        ));
    }
    let flag_value = |v: &crate::generated::ec2::AttributeBooleanValue, name: &str| {
        v.value
            .ok_or_else(|| ApiError::missing_parameter(&format!("{name}.Value")))
    };
    let map_public = input
        .map_public_ip_on_launch
        .as_ref()
        .map(|v| flag_value(v, "MapPublicIpOnLaunch"))
        .transpose()?;
    let a_record = input
        .enable_resource_name_dns_a_record_on_launch
        .as_ref()
        .map(|v| flag_value(v, "EnableResourceNameDnsARecordOnLaunch"))
        .transpose()?;
    let assign_ipv6 = input
        .assign_ipv6_address_on_creation
        .as_ref()
        .map(|v| flag_value(v, "AssignIpv6AddressOnCreation"))
        .transpose()?;
    let dns64 = input
        .enable_dns64
        .as_ref()
        .map(|v| flag_value(v, "EnableDns64"))
        .transpose()?;
    let aaaa_record = input
        .enable_resource_name_dns_aaaa_record_on_launch
        .as_ref()
        .map(|v| flag_value(v, "EnableResourceNameDnsAAAARecordOnLaunch"))
        .transpose()?;
    // A Wavelength Zone has no public IPv4 addresses of AWS's to map: its instances take
    // carrier IP addresses, asked for at launch (as the Cluster API provider documents: the
    // attribute set on such a subnet fails).
    if map_public == Some(true)
        && let Some(zone) = region
            .subnets
            .get(&input.subnet_id)
            .and_then(|s| region.zone(&s.zone))
            .filter(|z| z.kind == crate::ec2::availability_zone::ZoneType::Wavelength)
    {
        return Err(ApiError::invalid_value(format!(
            "Invalid value 'true' for map-public-ip-on-launch. The subnet ({}) is in the \
             Wavelength Zone {}, which maps no public IPv4 addresses: assign a carrier IP \
             address at launch instead.",
            input.subnet_id, zone.name
        )));
    }
    let Some(subnet) = region.subnets.0.get_mut(&input.subnet_id) else {
        return Err(Kind::Subnet.not_found(&[&input.subnet_id]));
    };
    // Each IPv6 attribute is true only for a subnet with an IPv6 block, refused in AWS's
    // words otherwise.
    for (v, attribute) in [
        (assign_ipv6, "assign-ipv6-address-on-creation"),
        (dns64, "enable-dns64"),
        (
            aaaa_record,
            "enable-resource-name-dns-aaaa-record-on-launch",
        ),
    ] {
        if v == Some(true) && subnet.ipv6.is_none() {
            return Err(ApiError::invalid_value(format!(
                "Invalid value 'true' for {attribute}. Cannot set {attribute} to true unless \
                 the subnet ({}) has an IPv6 CIDR block associated with it.",
                subnet.id
            )));
        }
    }
    if let Some(v) = assign_ipv6 {
        subnet.assign_ipv6_on_creation = v;
    }
    if let Some(v) = dns64 {
        subnet.dns64 = v;
    }
    if let Some(v) = aaaa_record {
        subnet.dns_aaaa_record = v;
    }
    if let Some(v) = map_public {
        subnet.map_public_ip_on_launch = v;
    }
    if let Some(v) = a_record {
        subnet.dns_a_record = v;
    }
    if let Some(t) = input.private_dns_hostname_type_on_launch {
        subnet.hostname_type = t;
    }
    Ok(())
}

/// Takes a private address in subnet `id` for a new interface (the one `wanted`, or the
/// next free one); returns it with the subnet's VPC and zone.
pub fn allocate_address(
    region: &mut Region,
    id: &str,
    wanted: Option<Ipv4Addr>,
) -> Result<(Ipv4Addr, String, String), ApiError> {
    let s = Kind::Subnet.get_mut(&mut region.subnets.0, id)?;
    let ip = s.allocate(wanted)?;
    Ok((ip, s.vpc_id.clone(), s.zone.clone()))
}

/// The length of the IPv4 prefixes interfaces are assigned, and their addresses.
pub const PREFIX_LEN: u8 = 28;
const PREFIX_SIZE: u32 = 16;

/// Takes a /28 prefix in subnet `id` for an interface: `wanted`, or the lowest free one
/// (`InsufficientCidrBlocks` when none is left).
pub fn allocate_prefix(
    region: &mut Region,
    id: &str,
    wanted: Option<Ipv4Net>,
) -> Result<Ipv4Net, ApiError> {
    let s = Kind::Subnet.get_mut(&mut region.subnets.0, id)?;
    s.allocate_prefix(wanted)
}

/// Gives the /28 prefix `block` back to subnet `id`.
pub fn release_prefix(region: &mut Region, id: &str, block: Ipv4Net) {
    if let Some(s) = region.subnets.0.get_mut(id) {
        s.release_prefix(block);
    }
}

/// Gives the private address `ip` back to subnet `id` (its interface is gone).
pub fn release_address(region: &mut Region, id: &str, ip: Ipv4Addr) {
    if let Some(s) = region.subnets.0.get_mut(id) {
        s.release(ip);
    }
}
