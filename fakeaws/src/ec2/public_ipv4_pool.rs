//! Address pools of the account's own public IPv4 ranges (BYOIP): DescribePublicIpv4Pools,
//! and the addresses AllocateAddress takes from them (`PublicIpv4Pool`, `Address`).
//!
//! A range is brought by [`crate::Config::byoip`] (`fakeaws --byoip-cidr REGION=CIDR`, an
//! IPv4 range here; an IPv6 one is [`super::ipv6_pool`]'s):
//! provisioned as AWS provisions a range after ProvisionByoipCidr has checked its route
//! origin authorization, which the fake cannot check. Each range is a pool of its own
//! (`ipv4pool-ec2-...`), in the region's network border group, every address of it
//! allocatable; a released address goes back to its pool. The ranges AWS takes: a /24 or
//! larger, public (not private, shared, loopback, link-local or multicast), no two
//! overlapping, none overlapping the fake's own public addresses, at most five per region
//! (AWS's quota of BYOIP ranges).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::{IpNet, Ipv4Net};

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters};
use crate::ec2::page;
use crate::generated::ec2::{
    DescribePublicIpv4PoolsRequest, DescribePublicIpv4PoolsResult, PublicIpv4Pool,
    PublicIpv4PoolRange,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// A range the account brought to a region, as [`crate::Config::byoip`] names it: a public
/// IPv4 range (a pool of Elastic IPs) or an IPv6 one (a pool of VPC blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByoipCidr {
    /// The region.
    pub region: String,
    /// The range.
    pub cidr: IpNet,
}

impl std::str::FromStr for ByoipCidr {
    type Err = String;

    /// `REGION=CIDR`, as `fakeaws --byoip-cidr` takes it; the range checked as AWS checks it.
    fn from_str(raw: &str) -> Result<Self, String> {
        let (region, cidr) = raw
            .split_once('=')
            .ok_or_else(|| format!("{raw:?} is not REGION=CIDR"))?;
        let cidr: IpNet = cidr
            .parse()
            .map_err(|_| format!("{raw:?}: {cidr:?} is not an IPv4 or IPv6 CIDR"))?;
        match cidr {
            IpNet::V4(c) => check_range(c)?,
            IpNet::V6(c) => super::ipv6_pool::check_range(c)?,
        }
        Ok(ByoipCidr {
            region: region.to_string(),
            cidr,
        })
    }
}

/// How many ranges a region takes (AWS's quota of BYOIP ranges per region, IPv4 and IPv6
/// together).
pub const MAX_RANGES: usize = 5;

/// Ranges that are never anyone's public addresses.
const NOT_PUBLIC: [(Ipv4Addr, u8); 8] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(127, 0, 0, 0), 8),
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(224, 0, 0, 0), 3),
];

/// Checks one range on its own: its prefix, that it is public and not the fake's own.
pub fn check_range(cidr: Ipv4Net) -> Result<(), String> {
    if cidr.network() != cidr.addr() {
        return Err(format!(
            "{cidr} has host bits set; the range is {}",
            cidr.trunc()
        ));
    }
    if cidr.prefix_len() > 24 {
        return Err(format!(
            "{cidr}: the most specific range AWS takes is a /24"
        ));
    }
    let overlaps = |a: Ipv4Net, b: Ipv4Net| a.contains(&b.network()) || b.contains(&a.network());
    for (addr, len) in NOT_PUBLIC {
        if let Ok(special) = Ipv4Net::new(addr, len)
            && overlaps(cidr, special)
        {
            return Err(format!("{cidr} overlaps {special}, which is not public"));
        }
    }
    for own in super::elastic_ip::amazon_ranges() {
        if overlaps(cidr, own) {
            return Err(format!(
                "{cidr} overlaps {own}, a range of the fake's own public addresses"
            ));
        }
    }
    Ok(())
}

/// One pool: a range the account brought.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pool {
    /// `ipv4pool-ec2-...`.
    pub id: String,
    /// Its range's first address.
    pub network: Ipv4Addr,
    /// Its range's prefix length.
    pub prefix: u8,
}

impl Pool {
    /// Its range.
    fn cidr(&self) -> Ipv4Net {
        Ipv4Net::new(self.network, self.prefix).unwrap_or_default()
    }
}

crate::region::table! {
    /// The account's BYOIP pools by id.
    Pools of Pool
}

/// Checks the ranges of one region together: each on its own, no two overlapping, at most
/// [`MAX_RANGES`].
fn check_region(region: &str, ranges: &[IpNet]) -> Result<(), String> {
    if ranges.len() > MAX_RANGES {
        return Err(format!(
            "{region}: {} ranges brought, AWS takes at most {MAX_RANGES} per region",
            ranges.len()
        ));
    }
    for (n, cidr) in ranges.iter().enumerate() {
        match cidr {
            IpNet::V4(c) => check_range(*c)?,
            IpNet::V6(c) => super::ipv6_pool::check_range(*c)?,
        }
        if let Some(other) = ranges
            .iter()
            .take(n)
            .find(|o| o.contains(&cidr.network()) || cidr.contains(&o.network()))
        {
            return Err(format!("{region}: {cidr} overlaps {other}"));
        }
    }
    Ok(())
}

/// Checks every range `byoip` brings, region by region.
pub fn check_all(byoip: &[ByoipCidr]) -> Result<(), String> {
    let regions: BTreeSet<&str> = byoip.iter().map(|b| b.region.as_str()).collect();
    for region in regions {
        check_region(region, &brought(byoip, region))?;
    }
    Ok(())
}

/// The ranges `byoip` brings to `region`.
fn brought(byoip: &[ByoipCidr], region: &str) -> Vec<IpNet> {
    byoip
        .iter()
        .filter(|b| b.region == region)
        .map(|b| b.cidr)
        .collect()
}

/// Adds the ranges `config` brings to `region`, a pool each (a new region's): IPv4 ones
/// here, IPv6 ones to [`super::ipv6_pool`].
pub(crate) fn seed(region: &mut Region, config: &crate::Config) -> Result<(), String> {
    let ranges = brought(&config.byoip, &region.name);
    check_region(&region.name, &ranges)?;
    for cidr in &ranges {
        let cidr = match cidr {
            IpNet::V4(c) => c,
            IpNet::V6(c) => {
                super::ipv6_pool::seed(region, *c);
                continue;
            }
        };
        let id = region.ids.resource("ipv4pool-ec2");
        region.public_ipv4_pools.0.insert(
            id.clone(),
            Pool {
                id,
                network: cidr.network(),
                prefix: cidr.prefix_len(),
            },
        );
    }
    Ok(())
}

/// The addresses of pool `id` held by Elastic IPs.
fn used(region: &Region, id: &str) -> BTreeSet<Ipv4Addr> {
    region
        .addresses
        .values()
        .filter(|a| a.pool.as_deref() == Some(id))
        .map(|a| a.public_ip)
        .collect()
}

/// The pool `id`, or `InvalidPublicIpv4PoolID.NotFound`.
fn get<'a>(region: &'a Region, id: &str) -> Result<&'a Pool, ApiError> {
    region.public_ipv4_pools.get(id).ok_or_else(|| {
        ApiError::new(
            Code::InvalidPublicIpv4PoolIdNotFound,
            format!("The public IPv4 pool ID '{id}' does not exist"),
        )
    })
}

/// An address of pool `id` for AllocateAddress: `wanted` when it is the pool's and free,
/// else the lowest free one.
pub(crate) fn take(
    region: &Region,
    id: &str,
    wanted: Option<Ipv4Addr>,
) -> Result<Ipv4Addr, ApiError> {
    let pool = get(region, id)?;
    let used = used(region, id);
    match wanted {
        Some(ip) if !pool.cidr().contains(&ip) => Err(ApiError::invalid_parameter(
            "Address",
            &ip.to_string(),
            &format!("The address is not in the pool {id} ({}).", pool.cidr()),
        )),
        Some(ip) if used.contains(&ip) => Err(ApiError::invalid_parameter(
            "Address",
            &ip.to_string(),
            "The address is already allocated.",
        )),
        Some(ip) => Ok(ip),
        None => all(pool.cidr())
            .find(|ip| !used.contains(ip))
            .ok_or_else(|| {
                ApiError::new(
                    Code::InsufficientAddressCapacity,
                    format!("The public IPv4 pool {id} has no free address."),
                )
            }),
    }
}

/// Every address of `cidr`, each allocatable (AWS counts them all): the hosts first, then
/// the range's first and last addresses.
fn all(cidr: Ipv4Net) -> impl Iterator<Item = Ipv4Addr> {
    cidr.hosts()
        .chain([cidr.network(), cidr.broadcast()])
        .filter(move |ip| cidr.contains(ip))
}

/// How many addresses `cidr` holds.
fn size(cidr: Ipv4Net) -> usize {
    1usize << (32 - u32::from(cidr.prefix_len()))
}

/// The pool whose range holds `ip`, if any.
pub(crate) fn holding(region: &Region, ip: Ipv4Addr) -> Option<&Pool> {
    region
        .public_ipv4_pools
        .values()
        .find(|p| p.cidr().contains(&ip))
}

impl Filterable for (&Pool, &Region) {
    const NAMES: &'static [&'static str] = &[];

    fn values(&self, _name: &str) -> Vec<String> {
        Vec::new()
    }
}

fn count(n: usize) -> Option<i32> {
    Some(i32::try_from(n).unwrap_or(i32::MAX))
}

fn render(region: &Region, p: &Pool) -> PublicIpv4Pool {
    let total = size(p.cidr());
    let free = total.saturating_sub(used(region, &p.id).len());
    PublicIpv4Pool {
        pool_id: Some(p.id.clone()),
        description: None,
        pool_address_ranges: Some(vec![PublicIpv4PoolRange {
            first_address: Some(p.cidr().network().to_string()),
            last_address: Some(p.cidr().broadcast().to_string()),
            address_count: count(total),
            available_address_count: count(free),
        }]),
        total_address_count: count(total),
        total_available_address_count: count(free),
        network_border_group: Some(region.name.clone()),
        tags: region.tags.tag_set(&p.id),
    }
}

/// `DescribePublicIpv4Pools`: by ids (an unknown one is `InvalidPublicIpv4PoolID.NotFound`),
/// filtered by tags, paginated (1 to 10 a page).
pub fn describe_public_ipv4_pools(
    region: &mut Region,
    input: DescribePublicIpv4PoolsRequest,
) -> Result<DescribePublicIpv4PoolsResult, ApiError> {
    let filters = Filters::parse::<(&Pool, &Region)>(input.filters)?;
    let region = &*region;
    let ids = input.pool_ids.unwrap_or_default();
    for id in &ids {
        get(region, id)?;
    }
    let found: Vec<&Pool> = region
        .public_ipv4_pools
        .values()
        .filter(|p| ids.is_empty() || ids.contains(&p.id))
        .filter(|p| filters.matches(&(*p, region), region.tags.get(&p.id)))
        .collect();
    let (items, next) = page::page(
        found,
        |p| p.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribePublicIpv4PoolsResult {
        public_ipv4_pools: Some(items.into_iter().map(|p| render(region, p)).collect()),
        next_token: next,
    })
}
