//! DescribeSecurityGroups and DescribeSecurityGroupRules, with their filters.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    DescribeSecurityGroupRulesRequest, DescribeSecurityGroupRulesResult,
    DescribeSecurityGroupsRequest, DescribeSecurityGroupsResult, GetSecurityGroupsForVpcRequest,
    GetSecurityGroupsForVpcResult, SecurityGroup as SecurityGroupOut, SecurityGroupForVpc,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

pub(super) fn render(region: &Region, g: &SecurityGroup) -> SecurityGroupOut {
    SecurityGroupOut {
        group_id: Some(g.id.clone()),
        ip_permissions_egress: Some(permissions(
            region,
            &g.vpc_id,
            g.rules.iter().filter(|r| r.egress).cloned(),
        )),
        ip_permissions: Some(permissions(
            region,
            &g.vpc_id,
            g.rules.iter().filter(|r| !r.egress).cloned(),
        )),
        tags: region.tags.tag_set(&g.id),
        vpc_id: Some(g.vpc_id.clone()),
        security_group_arn: Some(arn(region, "security-group", &g.id)),
        owner_id: Some(region.account_id.clone()),
        group_name: Some(g.name.clone()),
        description: Some(g.description.clone()),
    }
}

impl Filterable for (&SecurityGroup, &Region) {
    const NAMES: &'static [&'static str] = &[
        "description",
        "egress.ip-permission.cidr",
        "egress.ip-permission.from-port",
        "egress.ip-permission.group-id",
        "egress.ip-permission.group-name",
        "egress.ip-permission.ipv6-cidr",
        "egress.ip-permission.prefix-list-id",
        "egress.ip-permission.protocol",
        "egress.ip-permission.to-port",
        "egress.ip-permission.user-id",
        "group-id",
        "group-name",
        "ip-permission.cidr",
        "ip-permission.from-port",
        "ip-permission.group-id",
        "ip-permission.group-name",
        "ip-permission.ipv6-cidr",
        "ip-permission.prefix-list-id",
        "ip-permission.protocol",
        "ip-permission.to-port",
        "ip-permission.user-id",
        "owner-id",
        "vpc-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (g, region) = *self;
        let (egress, field) = match name.strip_prefix("egress.ip-permission.") {
            Some(f) => (true, f),
            None => match name.strip_prefix("ip-permission.") {
                Some(f) => (false, f),
                None => {
                    return match name {
                        "description" => one(g.description.clone()),
                        "group-id" => one(g.id.clone()),
                        "group-name" => one(g.name.clone()),
                        "owner-id" => one(region.account_id.clone()),
                        "vpc-id" => one(g.vpc_id.clone()),
                        _ => Vec::new(),
                    };
                }
            },
        };
        g.rules
            .iter()
            .filter(|r| r.egress == egress)
            .filter_map(|r| match (field, &r.peer) {
                ("cidr", Peer::Cidr(c)) | ("ipv6-cidr", Peer::Ipv6Cidr(c)) => Some(c.clone()),
                ("group-id", Peer::Group(id)) => Some(id.clone()),
                ("group-name", Peer::Group(id)) => {
                    region.security_groups.get(id).map(|g| g.name.clone())
                }
                ("user-id", Peer::Group(_)) => Some(region.account_id.clone()),
                ("prefix-list-id", Peer::PrefixList(id)) => Some(id.clone()),
                ("protocol", _) => Some(r.protocol.clone()),
                ("from-port", _) => Some(r.from.unwrap_or(-1).to_string()),
                ("to-port", _) => Some(r.to.unwrap_or(-1).to_string()),
                _ => None,
            })
            .collect()
    }
}

/// `DescribeSecurityGroups`: by id, by name (in the default VPC), or filtered.
pub fn describe_security_groups(
    region: &mut Region,
    input: DescribeSecurityGroupsRequest,
) -> Result<DescribeSecurityGroupsResult, ApiError> {
    let filters = Filters::parse::<(&SecurityGroup, &Region)>(input.filters)?;
    let region = &*region;
    let mut ids = input.group_ids.clone().unwrap_or_default();
    for name in input.group_names.iter().flatten() {
        let g = by_name_in_default_vpc(region, name)?;
        ids.push(g.id.clone());
    }
    if !ids.is_empty() && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter groupIds cannot be used with the parameter maxResults",
        ));
    }
    let found = Kind::SecurityGroup.describe(
        &region.consistency,
        &region.security_groups,
        Some(&ids),
        region.candidates(Kind::SecurityGroup, &filters),
        |g| filters.matches(&(g, region), region.tags.get(&g.id)),
    )?;
    let (items, next) = page::page(
        found,
        |g| g.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeSecurityGroupsResult {
        next_token: next,
        security_groups: Some(items.into_iter().map(|g| render(region, g)).collect()),
    })
}

/// One security group as GetSecurityGroupsForVpc filters it.
struct ForVpcRow<'a> {
    group: &'a SecurityGroup,
    owner: &'a str,
}

impl Filterable for ForVpcRow<'_> {
    const NAMES: &'static [&'static str] = &[
        "description",
        "group-id",
        "group-name",
        "owner-id",
        "primary-vpc-id",
    ];
    // The API reference documents no tag filters for this call.
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let g = self.group;
        match name {
            "description" => one(g.description.clone()),
            "group-id" => one(g.id.clone()),
            "group-name" => one(g.name.clone()),
            "owner-id" => one(self.owner),
            "primary-vpc-id" => one(g.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

/// `GetSecurityGroupsForVpc`: the groups interfaces in the VPC can take, which are the groups
/// made in it (no group here is associated with another VPC), filtered and paged.
pub fn get_security_groups_for_vpc(
    region: &mut Region,
    input: GetSecurityGroupsForVpcRequest,
) -> Result<GetSecurityGroupsForVpcResult, ApiError> {
    let filters = Filters::parse::<ForVpcRow>(input.filters)?;
    page::check_max_results(input.max_results, 5, 1000)?;
    let region = &*region;
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let owner = region.account_id.as_str();
    let found = Kind::SecurityGroup.describe(
        &region.consistency,
        &region.security_groups,
        None,
        None,
        |g| g.vpc_id == input.vpc_id && filters.matches(&ForVpcRow { group: g, owner }, None),
    )?;
    let (items, next) = page::page(
        found,
        |g| g.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetSecurityGroupsForVpcResult {
        next_token: next,
        security_group_for_vpcs: Some(
            items
                .into_iter()
                .map(|g| SecurityGroupForVpc {
                    description: Some(g.description.clone()),
                    group_name: Some(g.name.clone()),
                    owner_id: Some(region.account_id.clone()),
                    group_id: Some(g.id.clone()),
                    // Listed even when empty, as the CLI's documented output shows.
                    tags: region.tags.listed(&g.id),
                    primary_vpc_id: Some(g.vpc_id.clone()),
                })
                .collect(),
        ),
    })
}

pub(super) struct RuleRow<'a> {
    pub(super) group: &'a SecurityGroup,
    pub(super) rule: &'a Rule,
}

impl Filterable for RuleRow<'_> {
    const NAMES: &'static [&'static str] = &["group-id", "security-group-rule-id"];
    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "group-id" => one(self.group.id.clone()),
            "security-group-rule-id" => one(self.rule.id.clone()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeSecurityGroupRules`.
pub fn describe_security_group_rules(
    region: &mut Region,
    input: DescribeSecurityGroupRulesRequest,
) -> Result<DescribeSecurityGroupRulesResult, ApiError> {
    let filters = Filters::parse::<RuleRow>(input.filters)?;
    let region = &*region;
    let wanted = input.security_group_rule_ids.unwrap_or_default();
    let mut rows: Vec<RuleRow> = Vec::new();
    for g in region.security_groups.values() {
        for r in &g.rules {
            let row = RuleRow { group: g, rule: r };
            if (wanted.is_empty() || wanted.contains(&r.id))
                && filters.matches(&row, region.tags.get(&r.id))
            {
                rows.push(row);
            }
        }
    }
    if let Some(missing) = wanted
        .iter()
        .find(|id| !rows.iter().any(|r| &r.rule.id == *id))
    {
        return Err(Kind::SecurityGroupRule.not_found(&[missing]));
    }
    rows.sort_by(|a, b| a.rule.id.cmp(&b.rule.id));
    let (items, next) = page::page(
        rows,
        |r| r.rule.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeSecurityGroupRulesResult {
        security_group_rules: Some(
            items
                .into_iter()
                .map(|r| {
                    // Listed even when empty here (not in Authorize's answer), as the CLI's
                    // documented outputs show.
                    let mut out = render_rule(region, r.group, r.rule);
                    out.tags = region.tags.listed(&r.rule.id);
                    out
                })
                .collect(),
        ),
        next_token: next,
    })
}
