//! References between the groups of peered VPCs: DescribeStaleSecurityGroups (the rules of a
//! VPC's groups that reference a group of a peer VPC which is gone, or whose VPC the
//! peering connection no longer joins) and DescribeSecurityGroupReferences (the peer VPCs
//! whose groups reference the groups asked about).

use crate::ec2::{Kind, page, vpc_peering};
use crate::generated::ec2::{
    DescribeSecurityGroupReferencesRequest, DescribeSecurityGroupReferencesResult,
    DescribeStaleSecurityGroupsRequest, DescribeStaleSecurityGroupsResult, SecurityGroupReference,
    StaleIpPermission, StaleSecurityGroup,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// Whether a rule of a group of `vpc_id` referencing the group `id` is stale: that group is
/// gone, or is of another VPC no active peering connection joins to `vpc_id`.
fn is_stale(region: &Region, vpc_id: &str, id: &str) -> bool {
    match region.security_groups.get(id) {
        None => true,
        Some(g) if g.vpc_id == vpc_id => false,
        Some(g) => !vpc_peering::peered(region, vpc_id, &g.vpc_id),
    }
}

/// The stale rules of `group` in one direction, as AWS's `StaleIpPermission`s (the group
/// pairs alone: ranges and prefix lists are never stale).
fn stale_permissions(
    region: &Region,
    group: &SecurityGroup,
    egress: bool,
) -> Vec<StaleIpPermission> {
    let stale = group.rules.iter().filter(|r| {
        r.egress == egress
            && matches!(&r.peer, Peer::Group(id) if is_stale(region, &group.vpc_id, id))
    });
    permissions(region, &group.vpc_id, stale.cloned())
        .into_iter()
        .map(|p| StaleIpPermission {
            from_port: p.from_port,
            ip_protocol: p.ip_protocol,
            ip_ranges: None,
            prefix_list_ids: None,
            to_port: p.to_port,
            user_id_group_pairs: p.user_id_group_pairs,
        })
        .collect()
}

/// `DescribeStaleSecurityGroups`: the groups of the VPC with stale rules, by group id, paged
/// (`MaxResults` 5 to 255).
pub fn describe_stale_security_groups(
    region: &mut Region,
    input: DescribeStaleSecurityGroupsRequest,
) -> Result<DescribeStaleSecurityGroupsResult, ApiError> {
    let region = &*region;
    let vpc_id = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?.id.clone();
    let stale: Vec<StaleSecurityGroup> = region
        .by_vpc
        .of_kind(&vpc_id, Kind::SecurityGroup.prefix())
        .filter_map(|id| region.security_groups.get(id))
        .filter_map(|g| {
            let ingress = stale_permissions(region, g, false);
            let egress = stale_permissions(region, g, true);
            (!ingress.is_empty() || !egress.is_empty()).then(|| StaleSecurityGroup {
                description: Some(g.description.clone()),
                group_id: Some(g.id.clone()),
                group_name: Some(g.name.clone()),
                stale_ip_permissions: Some(ingress),
                stale_ip_permissions_egress: Some(egress),
                vpc_id: Some(g.vpc_id.clone()),
            })
        })
        .collect();
    let (items, next) = page::page(
        stale,
        |g| g.group_id.as_deref().unwrap_or_default(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeStaleSecurityGroupsResult {
        stale_security_group_set: Some(items),
        next_token: next,
    })
}

/// `DescribeSecurityGroupReferences`: for each group asked about (each must exist), the
/// other VPCs whose groups have rules referencing it, with the peering connection between.
pub fn describe_security_group_references(
    region: &mut Region,
    input: DescribeSecurityGroupReferencesRequest,
) -> Result<DescribeSecurityGroupReferencesResult, ApiError> {
    let region = &*region;
    let asked = Kind::SecurityGroup.select(&region.security_groups, Some(&input.group_id))?;
    let mut out = Vec::new();
    for target in asked {
        let referencing: std::collections::BTreeSet<&str> = region
            .security_groups
            .values()
            .filter(|g| {
                g.vpc_id != target.vpc_id
                    && g.rules
                        .iter()
                        .any(|r| r.peer == Peer::Group(target.id.clone()))
            })
            .map(|g| g.vpc_id.as_str())
            .collect();
        for vpc in referencing {
            out.push(SecurityGroupReference {
                group_id: Some(target.id.clone()),
                referencing_vpc_id: Some(vpc.to_string()),
                vpc_peering_connection_id: vpc_peering::between(region, &target.vpc_id, vpc)
                    .map(|p| p.id.clone()),
                transit_gateway_id: None,
            });
        }
    }
    Ok(DescribeSecurityGroupReferencesResult {
        security_group_reference_set: Some(out),
    })
}
