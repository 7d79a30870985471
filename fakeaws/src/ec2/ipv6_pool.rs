//! Address pools of the account's own IPv6 ranges (BYOIP): DescribeIpv6Pools,
//! GetAssociatedIpv6PoolCidrs, and the VPC blocks CreateVpc and AssociateVpcCidrBlock take
//! from them (`Ipv6Pool`, `Ipv6CidrBlock`).
//!
//! A range is brought by [`crate::Config::byoip`] (`fakeaws --byoip-cidr REGION=CIDR`), as
//! AWS provisions one after ProvisionByoipCidr has checked its route origin authorization,
//! which the fake cannot check. Each range is a pool of its own (`ipv6pool-ec2-...`). The
//! ranges AWS takes: a /56 or larger (a /48 or larger when publicly advertised; the fake
//! does not advertise), global unicast (`2000::/3`), none overlapping the fake's own
//! Amazon-provided blocks; with the IPv4 ones, at most five per region.
//!
//! A VPC's block from a pool is a /56: the one `Ipv6CidrBlock` names (of the pool, no VPC's
//! yet), else the pool's lowest free one. DescribeVpcs shows it with the pool's id as its
//! `Ipv6Pool` and `byoip` as its source; DisassociateVpcCidrBlock or DeleteVpc gives it back.

use std::net::Ipv6Addr;

use ipnet::Ipv6Net;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters};
use crate::ec2::page;
use crate::generated::ec2::{
    DescribeIpv6PoolsRequest, DescribeIpv6PoolsResult, GetAssociatedIpv6PoolCidrsRequest,
    GetAssociatedIpv6PoolCidrsResult, Ipv6CidrAssociation, Ipv6Pool, PoolCidrBlock,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The shortest prefix of a range AWS takes that is not publicly advertised.
const MOST_SPECIFIC: u8 = 56;

/// Checks one range on its own: its prefix, that it is global unicast, and not the fake's
/// own.
pub fn check_range(cidr: Ipv6Net) -> Result<(), String> {
    if cidr.network() != cidr.addr() {
        return Err(format!(
            "{cidr} has host bits set; the range is {}",
            cidr.trunc()
        ));
    }
    if cidr.prefix_len() > MOST_SPECIFIC {
        return Err(format!(
            "{cidr}: the most specific IPv6 range AWS takes is a /{MOST_SPECIFIC}"
        ));
    }
    let global = Ipv6Net::new(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3).unwrap_or_default();
    if !global.contains(&cidr) {
        return Err(format!("{cidr} is not a global unicast range (2000::/3)"));
    }
    let own = super::vpc_ipv6::amazon_range();
    if own.contains(&cidr.network()) || cidr.contains(&own.network()) {
        return Err(format!(
            "{cidr} overlaps {own}, the range of the fake's own Amazon-provided blocks"
        ));
    }
    Ok(())
}

/// One pool: a range the account brought.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pool {
    /// `ipv6pool-ec2-...`.
    pub id: String,
    /// Its range's first address.
    pub network: Ipv6Addr,
    /// Its range's prefix length.
    pub prefix: u8,
}

impl Pool {
    /// Its range.
    fn cidr(&self) -> Ipv6Net {
        Ipv6Net::new(self.network, self.prefix).unwrap_or_default()
    }
}

crate::region::table! {
    /// The account's BYOIP IPv6 pools by id.
    Pools of Pool
}

/// Adds the range `cidr` to `region` as a pool (checked with the region's other ranges).
pub(crate) fn seed(region: &mut Region, cidr: Ipv6Net) {
    let id = region.ids.resource("ipv6pool-ec2");
    region.ipv6_pools.0.insert(
        id.clone(),
        Pool {
            id,
            network: cidr.network(),
            prefix: cidr.prefix_len(),
        },
    );
}

/// The pool `id`, or `InvalidIpv6PoolID.NotFound`.
fn get<'a>(region: &'a Region, id: &str) -> Result<&'a Pool, ApiError> {
    region.ipv6_pools.get(id).ok_or_else(|| {
        ApiError::new(
            Code::InvalidIpv6PoolIdNotFound,
            format!("The IPv6 pool ID '{id}' does not exist"),
        )
    })
}

/// The VPC blocks taken from pool `id`: (block, VPC id), in the blocks' order.
fn taken(region: &Region, id: &str) -> Vec<(Ipv6Net, String)> {
    let mut out: Vec<(Ipv6Net, String)> = region
        .vpcs
        .values()
        .flat_map(|v| {
            v.ipv6
                .iter()
                .filter(|b| b.pool.as_deref() == Some(id))
                .map(|b| (b.cidr, v.id.clone()))
        })
        .collect();
    out.sort();
    out
}

/// A /56 of pool `id` for a VPC: `wanted` when it is a /56 of the pool that no VPC holds,
/// else the pool's lowest free one.
pub(crate) fn take(region: &Region, id: &str, wanted: Option<&str>) -> Result<Ipv6Net, ApiError> {
    let pool = get(region, id)?;
    let range = pool.cidr();
    let used: Vec<Ipv6Net> = taken(region, id).into_iter().map(|(b, _)| b).collect();
    let prefix = super::vpc_ipv6::VPC_PREFIX;
    if let Some(raw) = wanted {
        let cidr = super::vpc_ipv6::parse_ipv6_cidr(raw, "ipv6CidrBlock")?;
        let why = if cidr.prefix_len() != prefix {
            Some(format!("A VPC's IPv6 CIDR block is a /{prefix}."))
        } else if !range.contains(&cidr) {
            Some(format!("The CIDR is not in the IPv6 pool {id} ({range})."))
        } else if used.contains(&cidr) {
            Some("The CIDR is already in use.".to_string())
        } else {
            None
        };
        return match why {
            Some(why) => Err(ApiError::invalid_parameter("ipv6CidrBlock", raw, &why)),
            None => Ok(cidr),
        };
    }
    let fits = range.prefix_len() <= prefix;
    range
        .subnets(prefix)
        .ok()
        .filter(|_| fits)
        .into_iter()
        .flatten()
        .find(|c| !used.contains(c))
        .ok_or_else(|| {
            ApiError::new(
                Code::InsufficientCidrBlocks,
                format!("The IPv6 pool {id} has no free /{prefix} left."),
            )
        })
}

impl Filterable for (&Pool, &Region) {
    const NAMES: &'static [&'static str] = &[];

    fn values(&self, _name: &str) -> Vec<String> {
        Vec::new()
    }
}

fn render(region: &Region, p: &Pool) -> Ipv6Pool {
    Ipv6Pool {
        pool_id: Some(p.id.clone()),
        description: None,
        pool_cidr_blocks: Some(vec![PoolCidrBlock {
            cidr: Some(p.cidr().to_string()),
        }]),
        tags: region.tags.tag_set(&p.id),
    }
}

/// `DescribeIpv6Pools`: by ids (an unknown one is `InvalidIpv6PoolID.NotFound`), filtered by
/// tags, paginated (1 to 1000 a page).
pub fn describe_ipv6_pools(
    region: &mut Region,
    input: DescribeIpv6PoolsRequest,
) -> Result<DescribeIpv6PoolsResult, ApiError> {
    page::check_max_results(input.max_results, 1, 1000)?;
    let filters = Filters::parse::<(&Pool, &Region)>(input.filters)?;
    let region = &*region;
    let ids = input.pool_ids.unwrap_or_default();
    for id in &ids {
        get(region, id)?;
    }
    let found: Vec<&Pool> = region
        .ipv6_pools
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
    Ok(DescribeIpv6PoolsResult {
        ipv6_pools: Some(items.into_iter().map(|p| render(region, p)).collect()),
        next_token: next,
    })
}

/// `GetAssociatedIpv6PoolCidrs`: the blocks of pool `PoolId` VPCs hold, each with its VPC,
/// paginated (1 to 1000 a page).
pub fn get_associated_ipv6_pool_cidrs(
    region: &mut Region,
    input: GetAssociatedIpv6PoolCidrsRequest,
) -> Result<GetAssociatedIpv6PoolCidrsResult, ApiError> {
    page::check_max_results(input.max_results, 1, 1000)?;
    get(region, &input.pool_id)?;
    // In the blocks' order (`taken`'s), the token the block's first address in hex.
    let keyed: Vec<(String, Ipv6Net, String)> = taken(region, &input.pool_id)
        .into_iter()
        .map(|(b, vpc)| (format!("{:032x}", u128::from(b.network())), b, vpc))
        .collect();
    let (items, next) = page::page(
        keyed,
        |(k, _, _)| k.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetAssociatedIpv6PoolCidrsResult {
        ipv6_cidr_associations: Some(
            items
                .into_iter()
                .map(|(_, b, vpc)| Ipv6CidrAssociation {
                    ipv6_cidr: Some(b.to_string()),
                    associated_resource: Some(vpc),
                })
                .collect(),
        ),
        next_token: next,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ranges_are_taken_as_aws_takes_them() {
        for ok in [
            "2001:db8::/48",
            "2a05:d000:1200::/40",
            "2001:db8:1:100::/56",
        ] {
            assert!(check_range(ok.parse().unwrap()).is_ok(), "{ok}");
        }
        for bad in [
            "2001:db8:1:1::/64",
            "2001:db8::1/48",
            "fd00:1::/48",
            "fe80::/48",
            "2600:1f00::/32",
        ] {
            assert!(check_range(bad.parse().unwrap()).is_err(), "{bad}");
        }
    }
}
