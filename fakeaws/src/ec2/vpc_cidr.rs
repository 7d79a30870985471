//! A VPC's secondary IPv4 ranges: AssociateVpcCidrBlock and DisassociateVpcCidrBlock.
//!
//! A range is checked as AWS checks it (the VPC user guide's "IPv4 CIDR block association
//! restrictions"): a /16 to /28 network, overlapping none of the VPC's ranges, within the
//! VPC's own private range (RFC 1918) or publicly routable, outside 198.19.0.0/16 unless the
//! VPC is there, and not swallowing a route of the VPC's tables. Every table of the VPC gets
//! the range's `local` route; subnets may then be made in it. Like CreateVpc, the answer says
//! `associating` (`disassociating`) and the change is complete at once: the next describe
//! shows the range `associated` (or gone). An Amazon-provided IPv6 block
//! (`AmazonProvidedIpv6CidrBlock`) is `crate::ec2::vpc_ipv6`'s; BYOIP pools and IPAM are
//! answered `NotImplemented` by the generated layer.

use ipnet::{IpNet, Ipv4Net};

use crate::ec2::error::Code;
use crate::ec2::vpc::{SecondaryCidr, cidr_text, parse_cidr};
use crate::ec2::{Kind, ipam, route_table, vpc, vpc_ipv6};
use crate::generated::ec2::{
    AssociateVpcCidrBlockRequest, AssociateVpcCidrBlockResult, DisassociateVpcCidrBlockRequest,
    DisassociateVpcCidrBlockResult, VpcCidrBlockStateCode,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The private ranges of RFC 1918.
const PRIVATE: [Ipv4Net; 3] = [
    net([10, 0, 0, 0], 8),
    net([172, 16, 0, 0], 12),
    net([192, 168, 0, 0], 16),
];

/// A range AWS keeps from any VPC whose ranges lie elsewhere.
const BENCHMARKING: Ipv4Net = net([198, 19, 0, 0], 16);

/// 10.0.0.0/15 and 10.0.0.0/16: a VPC with a range in the first takes none from the second.
const TEN_15: Ipv4Net = net([10, 0, 0, 0], 15);
const TEN_16: Ipv4Net = net([10, 0, 0, 0], 16);

const fn net(octets: [u8; 4], len: u8) -> Ipv4Net {
    // Evaluated at compile time: a length above 32 would not build.
    Ipv4Net::new_assert(
        std::net::Ipv4Addr::new(octets[0], octets[1], octets[2], octets[3]),
        len,
    )
}

/// The RFC 1918 range holding `n`, if any.
fn private_range_of(n: &Ipv4Net) -> Option<Ipv4Net> {
    PRIVATE.into_iter().find(|p| p.contains(n))
}

/// Why `cidr` may not join a VPC whose primary range is `primary` and whose ranges are
/// `ranges`, when it may not: AWS's association restrictions.
fn restriction(primary: &Ipv4Net, ranges: &[Ipv4Net], cidr: &Ipv4Net) -> Option<&'static str> {
    let own = private_range_of(primary);
    if let Some(private) = private_range_of(cidr)
        && Some(private) != own
    {
        return Some(
            "Use a CIDR from the same private address range as the current VPC CIDR, or use a \
             publicly-routable CIDR.",
        );
    }
    if BENCHMARKING.contains(cidr) && !BENCHMARKING.contains(primary) {
        return Some("A CIDR from 198.19.0.0/16 can only join a VPC whose CIDR lies there.");
    }
    if TEN_16.contains(cidr) && ranges.iter().any(|r| TEN_15.contains(r)) {
        return Some(
            "A VPC with a CIDR in 10.0.0.0/15 cannot be associated with a CIDR from \
             10.0.0.0/16.",
        );
    }
    None
}

/// `AssociateVpcCidrBlock`: an IPv4 range, or an Amazon-provided IPv6 block.
pub fn associate_vpc_cidr_block(
    region: &mut Region,
    input: AssociateVpcCidrBlockRequest,
) -> Result<AssociateVpcCidrBlockResult, ApiError> {
    let vpc_tags = region.tags.get(&input.vpc_id).cloned().unwrap_or_default();
    let ask = vpc_ipv6::Ask {
        amazon: input.amazon_provided_ipv6_cidr_block == Some(true),
        border_group: input.ipv6_cidr_block_network_border_group.as_deref(),
        pool: input.ipv6_pool.as_deref(),
        cidr: input.ipv6_cidr_block.as_deref(),
        ipam_pool: input.ipv6_ipam_pool_id.as_deref(),
        netmask_length: input.ipv6_netmask_length,
        tags: &vpc_tags,
    };
    if ask.any()
        && (input.cidr_block.is_some()
            || input.ipv4_ipam_pool_id.is_some()
            || input.ipv4_netmask_length.is_some())
    {
        return Err(ApiError::invalid_combination(
            "Specify either an IPv4 range (CidrBlock, Ipv4IpamPoolId) or an IPv6 block \
             (AmazonProvidedIpv6CidrBlock, Ipv6Pool, Ipv6IpamPoolId), not both.",
        ));
    }
    if ask.any() {
        let association = vpc_ipv6::associate(region, &input.vpc_id, &ask)?;
        return Ok(AssociateVpcCidrBlockResult {
            cidr_block_association: None,
            vpc_id: Some(input.vpc_id),
            ipv6_cidr_block_association: Some(association),
        });
    }
    let vpc = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let pool = input.ipv4_ipam_pool_id.as_deref().filter(|p| !p.is_empty());
    let cidr = match pool {
        // The range comes from an IPAM pool, which the VPC's tags must satisfy.
        Some(pool) => {
            let no_tags = std::collections::BTreeMap::new();
            ipam::vpc_range(
                region,
                pool,
                input.cidr_block.as_deref(),
                input.ipv4_netmask_length,
                region.tags.get(&vpc.id).unwrap_or(&no_tags),
            )?
        }
        None if input.ipv4_netmask_length.is_some() => {
            return Err(ApiError::invalid_combination(
                "Ipv4NetmaskLength takes a range from an IPAM pool: it needs Ipv4IpamPoolId.",
            ));
        }
        None => {
            let raw = input.cidr_block.as_deref().ok_or_else(|| {
                ApiError::missing_parameter("CidrBlock or AmazonProvidedIpv6CidrBlock")
            })?;
            parse_cidr(raw, "cidrBlock")?
        }
    };
    let raw = cidr.to_string();
    let invalid = |why: String| ApiError::new(Code::InvalidVpcRange, why);
    if !(16..=28).contains(&cidr.prefix_len()) {
        return Err(invalid(format!("The CIDR '{raw}' is invalid.")));
    }
    let ranges: Vec<Ipv4Net> = vpc.cidrs().collect();
    if let Some(other) = ranges
        .iter()
        .find(|r| r.contains(&cidr) || cidr.contains(*r))
    {
        return Err(invalid(format!(
            "The CIDR '{raw}' conflicts with the CIDR '{other}' of the vpc '{}'.",
            vpc.id
        )));
    }
    if let Some(why) = restriction(&vpc.cidr, &ranges, &cidr) {
        return Err(invalid(format!("The CIDR '{raw}' is restricted. {why}")));
    }
    if let Some((table, dest)) = route_table::route_within(region, &input.vpc_id, &cidr) {
        return Err(invalid(format!(
            "The CIDR '{raw}' is the same as or larger than the destination {dest} of a route \
             in the route table {table}."
        )));
    }
    if ranges.len() >= region.limits.cidr_blocks_per_vpc {
        return Err(ApiError::new(
            Code::CidrLimitExceeded,
            format!(
                "This network '{}' has met its maximum number of allowed CIDRs: {}",
                input.vpc_id, region.limits.cidr_blocks_per_vpc
            ),
        ));
    }
    let association_id = region.ids.resource("vpc-cidr-assoc");
    vpc::add_range(
        region,
        &input.vpc_id,
        SecondaryCidr {
            association_id: association_id.clone(),
            cidr,
        },
    );
    route_table::add_local_routes(region, &input.vpc_id, IpNet::V4(cidr));
    if let Some(pool) = pool {
        ipam::vpc_allocated(region, pool, &input.vpc_id, IpNet::V4(cidr));
    }
    Ok(AssociateVpcCidrBlockResult {
        cidr_block_association: Some(vpc::association(
            &association_id,
            cidr,
            VpcCidrBlockStateCode::Associating,
        )),
        vpc_id: Some(input.vpc_id),
        ipv6_cidr_block_association: None,
    })
}

/// `DisassociateVpcCidrBlock`: a secondary range without subnets; never the primary one.
pub fn disassociate_vpc_cidr_block(
    region: &mut Region,
    input: DisassociateVpcCidrBlockRequest,
) -> Result<DisassociateVpcCidrBlockResult, ApiError> {
    let id = input.association_id;
    // The VPC holding the association, and the range unless it is the primary one.
    let found = region.vpcs.values().find_map(|v| {
        if v.cidr_association_id == id {
            return Some((v.id.clone(), None));
        }
        v.secondary
            .iter()
            .find(|s| s.association_id == id)
            .map(|s| (v.id.clone(), Some(s.cidr)))
    });
    let (vpc_id, cidr) = match found {
        None => {
            if let Some(vpc_id) = region
                .vpcs
                .values()
                .find(|v| v.ipv6.iter().any(|b| b.association_id == id))
                .map(|v| v.id.clone())
            {
                let association = vpc_ipv6::disassociate(region, &vpc_id, &id)?;
                return Ok(DisassociateVpcCidrBlockResult {
                    cidr_block_association: None,
                    vpc_id: Some(vpc_id),
                    ipv6_cidr_block_association: Some(association),
                });
            }
            return Err(ApiError::new(
                Code::InvalidVpcCidrBlockAssociationIDNotFound,
                format!("The vpc CIDR block association ID '{id}' does not exist"),
            ));
        }
        Some((_, None)) => {
            return Err(ApiError::new(
                Code::OperationNotPermitted,
                format!(
                    "The vpc CIDR block with association ID {id} may not be disassociated. It \
                     is the primary IPv4 CIDR block of the VPC"
                ),
            ));
        }
        Some((vpc_id, Some(cidr))) => (vpc_id, cidr),
    };
    if let Some(subnet) = region
        .by_vpc
        .of_kind(&vpc_id, "subnet")
        .filter_map(|s| region.subnets.get(s))
        .find(|s| cidr.contains(&s.cidr))
    {
        return Err(ApiError::dependency_violation(format!(
            "The CIDR '{}' of the vpc '{vpc_id}' holds the subnet '{}' and cannot be \
             disassociated.",
            cidr_text(&cidr),
            subnet.id
        )));
    }
    vpc::remove_range(region, &vpc_id, &id);
    route_table::remove_local_routes(region, &vpc_id, IpNet::V4(cidr));
    ipam::vpc_released(region, &vpc_id, Some(IpNet::V4(cidr)));
    Ok(DisassociateVpcCidrBlockResult {
        cidr_block_association: Some(vpc::association(
            &id,
            cidr,
            VpcCidrBlockStateCode::Disassociating,
        )),
        vpc_id: Some(vpc_id),
        ipv6_cidr_block_association: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn n(s: &str) -> Ipv4Net {
        s.parse().unwrap()
    }

    #[test]
    fn ranges_are_restricted_as_aws_restricts_them() {
        let restricted =
            |primary: &str, cidr: &str| restriction(&n(primary), &[n(primary)], &n(cidr)).is_some();
        // Another private range than the VPC's own.
        assert!(restricted("10.1.0.0/16", "172.16.0.0/16"));
        assert!(restricted("10.1.0.0/16", "192.168.0.0/20"));
        assert!(restricted("172.31.0.0/16", "10.1.0.0/16"));
        assert!(restricted("100.64.0.0/16", "10.1.0.0/16"));
        // The VPC's own private range, a public one, 100.64.0.0/10.
        assert!(!restricted("10.1.0.0/16", "10.2.0.0/16"));
        assert!(!restricted("10.1.0.0/16", "100.64.0.0/16"));
        assert!(!restricted("10.1.0.0/16", "52.0.0.0/24"));
        assert!(!restricted("172.31.0.0/16", "172.30.0.0/16"));
        // 198.19.0.0/16 only beside itself.
        assert!(restricted("10.1.0.0/16", "198.19.0.0/20"));
        assert!(!restricted("198.19.0.0/20", "198.19.16.0/20"));
        // 10.0.0.0/16 not beside 10.0.0.0/15.
        assert!(restricted("10.1.0.0/16", "10.0.0.0/24"));
        assert!(!restricted("10.2.0.0/16", "10.0.0.0/24"));
    }
}
