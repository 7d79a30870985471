//! A VPC's IPv6 blocks: the Amazon-provided /56 that CreateVpc and AssociateVpcCidrBlock
//! request with `AmazonProvidedIpv6CidrBlock`, DisassociateVpcCidrBlock of one, and what a
//! VPC gaining its first block changes around it (as the VPC user guide describes):
//!
//! - every route table of the VPC gets the block's `local` route;
//! - the VPC's default network ACL gets rule 101 allowing all IPv6 traffic, inbound and
//!   outbound (a direction whose rules were changed from the defaults gets none), and every
//!   ACL of the VPC its `*` rule denying `::/0`;
//! - the VPC's default security group gets its outbound rule to `::/0`.
//!
//! A block of one of the account's BYOIP IPv6 pools (`Ipv6Pool`) is the pool's
//! ([`crate::ec2::ipv6_pool`]); a block of an IPv6 pool of IPAM (`Ipv6IpamPoolId`, with
//! `Ipv6NetmaskLength` or `Ipv6CidrBlock`) is an allocation of the pool, of resource type
//! `vpc` ([`crate::ec2::ipam`]), which the VPC's association names `IPAM Managed` as AWS
//! does (a private scope's block with `IpSource` `none` and the attribute `private`); an
//! Amazon-provided one is taken at random from the region's
//! /32 of the fake's own (`2600:1fXX::/32`, the
//! byte `XX` from the region's name; AWS's ranges differ by region too) and never twice in a
//! region. Like the IPv4 ranges, a block is answered `associating` (`disassociating`) and the
//! change is complete at once.

use ipnet::{IpNet, Ipv6Net};

use crate::ec2::error::Code;
use crate::ec2::{Kind, network_acl, route_table, security_group};
use crate::generated::ec2::{
    IpSource, Ipv6AddressAttribute, VpcCidrBlockState, VpcCidrBlockStateCode,
    VpcIpv6CidrBlockAssociation,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// One IPv6 block of a VPC.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Ipv6Block {
    /// `vpc-cidr-assoc-...`.
    pub association_id: String,
    /// The /56.
    #[serde(with = "crate::state::with::text")]
    pub cidr: Ipv6Net,
    /// Where AWS advertises it: the region's name.
    pub border_group: String,
    /// The account's BYOIP pool it came from (`ipv6pool-ec2-...`); none for Amazon's.
    #[serde(default)]
    pub pool: Option<String>,
    /// The IPAM pool it is an allocation of (`ipam-pool-...`), if any.
    #[serde(default)]
    pub ipam_pool: Option<String>,
    /// Whether it is private space (an IPAM pool of a private scope): not advertised.
    #[serde(default)]
    pub private: bool,
}

/// The pool a block is drawn from: what its association answers as `Ipv6Pool`.
pub(crate) const AMAZON_POOL: &str = "Amazon";

/// What an association answers as `Ipv6Pool` for a block of an IPAM pool (AWS names no
/// pool there).
pub(crate) const IPAM_MANAGED: &str = "IPAM Managed";

/// The netmask lengths a VPC's IPv6 block from an IPAM pool may have: /44 to /60, in steps
/// of four bits.
pub fn ipam_vpc_prefix_ok(len: u8) -> bool {
    (44..=60).contains(&len) && len.is_multiple_of(4)
}

/// How long a VPC's Amazon-provided block's prefix is.
pub const VPC_PREFIX: u8 = 56;

/// How long a subnet's IPv6 block's prefix is.
pub const SUBNET_PREFIX: u8 = 64;

/// Parses an IPv6 CIDR as AWS takes it: an address, `/`, a length, no host bits.
pub fn parse_ipv6_cidr(raw: &str, param: &str) -> Result<Ipv6Net, ApiError> {
    let bad = || ApiError::invalid_parameter(param, raw, "This is not a valid IPv6 CIDR block.");
    let (addr, len) = raw.split_once('/').ok_or_else(bad)?;
    if len.is_empty() || len.len() > 3 || !len.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if addr.contains('.') || addr.contains(char::is_whitespace) {
        return Err(bad());
    }
    let net = raw.parse::<Ipv6Net>().map_err(|_| bad())?;
    if net.trunc() != net {
        return Err(bad());
    }
    Ok(net)
}

/// One of a VPC's IPv6 blocks as AWS writes it, in `state`.
pub fn association(block: &Ipv6Block, state: VpcCidrBlockStateCode) -> VpcIpv6CidrBlockAssociation {
    VpcIpv6CidrBlockAssociation {
        association_id: Some(block.association_id.clone()),
        ipv6_cidr_block: Some(block.cidr.to_string()),
        ipv6_cidr_block_state: Some(VpcCidrBlockState {
            state: Some(state),
            status_message: None,
        }),
        network_border_group: Some(block.border_group.clone()),
        ipv6_pool: Some(pool_of(block).to_string()),
        ipv6_address_attribute: Some(if block.private {
            Ipv6AddressAttribute::Private
        } else {
            Ipv6AddressAttribute::Public
        }),
        ip_source: Some(if block.private {
            IpSource::None
        } else if block.pool.is_some() {
            IpSource::Byoip
        } else {
            IpSource::Amazon
        }),
    }
}

/// The pool a block came from as AWS names it: a BYOIP pool's id, `IPAM Managed`, or
/// `Amazon`.
pub fn pool_of(block: &Ipv6Block) -> &str {
    match (&block.pool, &block.ipam_pool) {
        (Some(pool), _) => pool,
        (None, Some(_)) => IPAM_MANAGED,
        (None, None) => AMAZON_POOL,
    }
}

/// Where the fake's Amazon-provided blocks come from, every region's /32 within it.
pub fn amazon_range() -> Ipv6Net {
    Ipv6Net::new(
        std::net::Ipv6Addr::new(0x2600, 0x1f00, 0, 0, 0, 0, 0, 0),
        24,
    )
    .unwrap_or_default()
}

/// What a request asks a VPC's new IPv6 block of: Amazon's (`AmazonProvidedIpv6CidrBlock`,
/// optionally in `Ipv6CidrBlockNetworkBorderGroup`), a BYOIP pool's (`Ipv6Pool`, optionally
/// `Ipv6CidrBlock`) or an IPAM pool's (`Ipv6IpamPoolId`, with `Ipv6NetmaskLength`,
/// `Ipv6CidrBlock` or the pool's default length).
pub struct Ask<'a> {
    /// `AmazonProvidedIpv6CidrBlock`.
    pub amazon: bool,
    /// `Ipv6CidrBlockNetworkBorderGroup`.
    pub border_group: Option<&'a str>,
    /// `Ipv6Pool`.
    pub pool: Option<&'a str>,
    /// `Ipv6CidrBlock`.
    pub cidr: Option<&'a str>,
    /// `Ipv6IpamPoolId`.
    pub ipam_pool: Option<&'a str>,
    /// `Ipv6NetmaskLength`.
    pub netmask_length: Option<i32>,
    /// The VPC's tags (an IPAM pool may require some).
    pub tags: &'a std::collections::BTreeMap<String, String>,
}

impl Ask<'_> {
    /// Whether it asks for a block at all (what it asks checked by [`Ask::resolve`]).
    pub fn any(&self) -> bool {
        self.amazon
            || self.border_group.is_some()
            || self.pool.is_some()
            || self.cidr.is_some()
            || self.ipam_pool.is_some()
            || self.netmask_length.is_some()
    }

    /// The block it asks for, checked as AWS checks it, before anything is made: `None`
    /// when it asks for none.
    pub fn resolve(&self, region: &Region) -> Result<Option<Wanted>, ApiError> {
        check_border_group(region, self.amazon, self.border_group)?;
        let ipam_pool = self.ipam_pool.filter(|p| !p.is_empty());
        match ipam_pool {
            None if self.netmask_length.is_some() => {
                return Err(ApiError::invalid_combination(
                    "Ipv6NetmaskLength takes a block from an IPAM pool: it needs \
                     Ipv6IpamPoolId.",
                ));
            }
            Some(_) if self.amazon || self.pool.is_some() => {
                return Err(ApiError::invalid_combination(
                    "Specify one of AmazonProvidedIpv6CidrBlock, Ipv6Pool or Ipv6IpamPoolId.",
                ));
            }
            Some(pool) => {
                let (cidr, private) = crate::ec2::ipam::vpc_ipv6_range(
                    region,
                    pool,
                    self.cidr,
                    self.netmask_length,
                    self.tags,
                )?;
                return Ok(Some(Wanted::Ipam {
                    pool: pool.to_string(),
                    cidr,
                    private,
                }));
            }
            None => {}
        }
        match (self.amazon, self.pool, self.cidr) {
            (true, Some(_), _) | (true, _, Some(_)) => Err(ApiError::invalid_combination(
                "Specify either AmazonProvidedIpv6CidrBlock or an Ipv6Pool, not both.",
            )),
            (false, None, Some(_)) => Err(ApiError::missing_parameter("Ipv6Pool")),
            (false, Some(pool), cidr) => Ok(Some(Wanted::Pool {
                pool: pool.to_string(),
                cidr: crate::ec2::ipv6_pool::take(region, pool, cidr)?,
            })),
            (true, None, None) => Ok(Some(Wanted::Amazon)),
            (false, None, None) => Ok(None),
        }
    }
}

/// A block a request asks for, resolved ([`Ask::resolve`]).
pub enum Wanted {
    /// A new Amazon-provided block.
    Amazon,
    /// A block of one of the account's pools.
    Pool {
        /// The pool (`ipv6pool-ec2-...`).
        pool: String,
        /// The block, free in the pool.
        cidr: Ipv6Net,
    },
    /// An allocation of an IPAM pool.
    Ipam {
        /// The pool (`ipam-pool-...`).
        pool: String,
        /// The block, free in the pool.
        cidr: Ipv6Net,
        /// Whether the pool's scope is private.
        private: bool,
    },
}

impl Wanted {
    /// The block, made.
    pub fn make(self, region: &mut Region) -> Ipv6Block {
        match self {
            Wanted::Amazon => new_block(region),
            Wanted::Pool { pool, cidr } => Ipv6Block {
                association_id: region.ids.resource("vpc-cidr-assoc"),
                cidr,
                border_group: region.name.clone(),
                pool: Some(pool),
                ipam_pool: None,
                private: false,
            },
            Wanted::Ipam {
                pool,
                cidr,
                private,
            } => Ipv6Block {
                association_id: region.ids.resource("vpc-cidr-assoc"),
                cidr,
                border_group: region.name.clone(),
                pool: None,
                ipam_pool: Some(pool),
                private,
            },
        }
    }
}

/// The region's /32 of Amazon-provided blocks: `2600:1fXX::/32`.
fn region_pool(region: &Region) -> u128 {
    let byte = region
        .name
        .bytes()
        .fold(0u8, |h, b| h.wrapping_mul(31).wrapping_add(b));
    (0x2600_1f00_u128 | u128::from(byte)) << 96
}

/// Checks the border group a request names (the region's own name, the only one served).
pub fn check_border_group(
    region: &Region,
    amazon_provided: bool,
    border_group: Option<&str>,
) -> Result<(), ApiError> {
    match border_group {
        None => Ok(()),
        Some(_) if !amazon_provided => Err(ApiError::invalid_combination(
            "Ipv6CidrBlockNetworkBorderGroup can only be specified with \
             AmazonProvidedIpv6CidrBlock.",
        )),
        Some(g) if g == region.name => Ok(()),
        Some(g) => Err(ApiError::invalid_parameter(
            "ipv6CidrBlockNetworkBorderGroup",
            g,
            &format!(
                "The network border group of region {} is {}.",
                region.name, region.name
            ),
        )),
    }
}

/// A new Amazon-provided block for a VPC of the region: a /56 no VPC of the region holds.
pub fn new_block(region: &mut Region) -> Ipv6Block {
    let pool = region_pool(region);
    let cidr = loop {
        // 24 bits of /56 within the /32.
        let index = u128::from(region.ids.next_u64() & 0x00ff_ffff);
        let addr = std::net::Ipv6Addr::from(pool | (index << 72));
        let Ok(cidr) = Ipv6Net::new(addr, VPC_PREFIX) else {
            continue;
        };
        if !region
            .vpcs
            .values()
            .any(|v| v.ipv6.iter().any(|b| b.cidr == cidr))
        {
            break cidr;
        }
    };
    Ipv6Block {
        association_id: region.ids.resource("vpc-cidr-assoc"),
        cidr,
        border_group: region.name.clone(),
        pool: None,
        ipam_pool: None,
        private: false,
    }
}

/// Adds `block` to the VPC `vpc_id` with what comes with it: the local routes, the default
/// ACL's IPv6 rules and the default group's IPv6 egress rule when it is the VPC's first;
/// the IPAM pool's allocation, for a block of one.
pub fn add(region: &mut Region, vpc_id: &str, block: Ipv6Block) {
    let first = region.vpcs.get(vpc_id).is_some_and(|v| v.ipv6.is_empty());
    let cidr = block.cidr;
    if let Some(pool) = &block.ipam_pool {
        crate::ec2::ipam::vpc_allocated(region, pool, vpc_id, IpNet::V6(cidr));
    }
    crate::ec2::vpc::add_ipv6(region, vpc_id, block);
    route_table::add_local_routes(region, vpc_id, IpNet::V6(cidr));
    if first {
        network_acl::vpc_gained_ipv6(region, vpc_id);
        security_group::vpc_gained_ipv6(region, vpc_id);
    }
}

/// `AssociateVpcCidrBlock` with `AmazonProvidedIpv6CidrBlock`, `Ipv6Pool` or
/// `Ipv6IpamPoolId`: the IPv6 CIDR
/// blocks per VPC quota (5, `ipv6-cidr-blocks-per-vpc`; `CidrLimitExceeded`).
pub fn associate(
    region: &mut Region,
    vpc_id: &str,
    ask: &Ask<'_>,
) -> Result<VpcIpv6CidrBlockAssociation, ApiError> {
    let vpc = Kind::Vpc.get(&region.vpcs, vpc_id)?;
    let wanted = ask.resolve(region)?;
    if vpc.ipv6.len() >= region.limits.ipv6_cidr_blocks_per_vpc {
        return Err(ApiError::new(
            Code::CidrLimitExceeded,
            format!(
                "This network '{vpc_id}' has met its maximum number of allowed IPv6 CIDRs: {}",
                region.limits.ipv6_cidr_blocks_per_vpc
            ),
        ));
    }
    let Some(wanted) = wanted else {
        return Err(ApiError::missing_parameter(
            "CidrBlock, AmazonProvidedIpv6CidrBlock, Ipv6Pool or Ipv6IpamPoolId",
        ));
    };
    let block = wanted.make(region);
    let out = association(&block, VpcCidrBlockStateCode::Associating);
    add(region, vpc_id, block);
    Ok(out)
}

/// DisassociateVpcCidrBlock of the IPv6 block `association_id` of the VPC `vpc_id`: refused
/// while a subnet holds a block within it; its local routes go with it.
pub fn disassociate(
    region: &mut Region,
    vpc_id: &str,
    association_id: &str,
) -> Result<VpcIpv6CidrBlockAssociation, ApiError> {
    let Some(block) = region
        .vpcs
        .get(vpc_id)
        .and_then(|v| v.ipv6.iter().find(|b| b.association_id == association_id))
        .cloned()
    else {
        return Err(ApiError::new(
            Code::InvalidVpcCidrBlockAssociationIDNotFound,
            format!("The vpc CIDR block association ID '{association_id}' does not exist"),
        ));
    };
    if let Some(subnet) = region
        .by_vpc
        .of_kind(vpc_id, "subnet")
        .filter_map(|s| region.subnets.get(s))
        .find(|s| {
            s.ipv6
                .as_ref()
                .is_some_and(|b| block.cidr.contains(&b.cidr))
        })
    {
        return Err(ApiError::dependency_violation(format!(
            "The IPv6 CIDR '{}' of the vpc '{vpc_id}' holds the IPv6 CIDR of the subnet '{}' \
             and cannot be disassociated.",
            block.cidr, subnet.id
        )));
    }
    crate::ec2::vpc::remove_ipv6(region, vpc_id, association_id);
    route_table::remove_local_routes(region, vpc_id, IpNet::V6(block.cidr));
    crate::ec2::ipam::vpc_released(region, vpc_id, Some(IpNet::V6(block.cidr)));
    Ok(association(&block, VpcCidrBlockStateCode::Disassociating))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ipv6_cidrs_are_taken_as_aws_takes_them() {
        for ok in ["2600:1f18:abc:de00::/56", "2600:1f18:abc:de01::/64", "::/0"] {
            assert!(parse_ipv6_cidr(ok, "ipv6CidrBlock").is_ok(), "{ok}");
        }
        for bad in [
            "2600:1f18:abc:de01::/56",
            "2600:1f18:abc:de00::",
            "2600:1f18:abc:de00::/129",
            " 2600:1f18::/32",
            "10.0.0.0/16",
            "::ffff:10.0.0.0/120",
            "2600:1f18::/+32",
        ] {
            let e = parse_ipv6_cidr(bad, "ipv6CidrBlock").unwrap_err();
            assert_eq!(e.code, "InvalidParameterValue", "{bad}");
        }
    }
}
