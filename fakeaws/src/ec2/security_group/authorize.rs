//! Authorizing and revoking rules, ingress or egress: one path taking the direction.

use crate::ec2::error::Code;

use crate::ec2::tags;
use crate::generated::ec2::{
    AuthorizeSecurityGroupEgressRequest, AuthorizeSecurityGroupEgressResult,
    AuthorizeSecurityGroupIngressRequest, AuthorizeSecurityGroupIngressResult, IpPermission,
    ResourceType, RevokeSecurityGroupEgressRequest, RevokeSecurityGroupEgressResult,
    RevokeSecurityGroupIngressRequest, RevokeSecurityGroupIngressResult, RevokedSecurityGroupRule,
    SecurityGroupRule, TagSpecification,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// The direction of a rule: what a group lets in, or lets out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Inbound rules (`IpPermissions`).
    Ingress,
    /// Outbound rules (`IpPermissionsEgress`).
    Egress,
}

/// What an Authorize or Revoke request names, whatever its direction: the group, the rules
/// (as permissions or the flat fields), rule ids (revoke) and tags for new rules (authorize).
pub(super) struct RuleRequest<'a> {
    pub(super) direction: Direction,
    pub(super) group_id: Option<&'a str>,
    pub(super) group_name: Option<&'a str>,
    pub(super) args: RuleArgs<'a>,
    pub(super) rule_ids: Option<&'a [String]>,
    pub(super) tag_specifications: Option<&'a [TagSpecification]>,
}

/// The flat rule fields every Authorize and Revoke request has.
macro_rules! rule_args {
    ($input:expr) => {
        RuleArgs {
            permissions: $input.ip_permissions.as_deref(),
            protocol: $input.ip_protocol.as_deref(),
            from: $input.from_port,
            to: $input.to_port,
            cidr: $input.cidr_ip.as_deref(),
        }
    };
}

/// Authorizes the rules `req` names, all or none: none may exist already, and the group's
/// quota of rules in that direction must hold them.
pub(super) fn authorize(
    region: &mut Region,
    req: RuleRequest<'_>,
) -> Result<Vec<SecurityGroupRule>, ApiError> {
    let group = by_id_or_name(region, req.group_id, req.group_name)?.clone();
    let egress = req.direction == Direction::Egress;
    let mut wanted = requested_rules(region, &group, egress, false, &req.args)?;
    let specs = req.tag_specifications;
    let tags = tags::from_specs(specs, ResourceType::SecurityGroupRule)?;
    for (i, r) in wanted.iter().enumerate() {
        if group.rules.iter().any(|x| x.same_permission(r))
            || wanted.iter().take(i).any(|x| x.same_permission(r))
        {
            return Err(ApiError::new(
                Code::InvalidPermissionDuplicate,
                format!("the specified rule \"{}\" already exists", describe_rule(r)),
            ));
        }
    }
    // A rule naming a customer-managed prefix list counts as that list's size (the VPC user
    // guide's rule for prefix lists in security groups).
    let weight =
        |r: &Rule| crate::ec2::managed_prefix_list::weight(region, r.peer.prefix_list(), None);
    let count: usize = group
        .rules
        .iter()
        .filter(|r| r.egress == egress)
        .chain(&wanted)
        .map(weight)
        .sum();
    if count > region.limits.rules_per_group {
        return Err(ApiError::new(
            Code::RulesPerSecurityGroupLimitExceeded,
            "The maximum number of rules per security group has been reached.",
        ));
    }
    for r in &mut wanted {
        r.id = region.ids.resource("sgr");
        region.tags.insert(&r.id, tags.clone());
    }
    let rendered = wanted
        .iter()
        .map(|r| render_rule(region, &group, r))
        .collect();
    if let Some(g) = region.security_groups.0.get_mut(&group.id) {
        g.rules.extend(wanted);
    }
    Ok(rendered)
}

/// What a Revoke did: the rules it revoked, and those named by permission that the group
/// does not hold (a default VPC's group only: see [`revoke`]).
pub(super) struct Revoked {
    rules: Vec<RevokedSecurityGroupRule>,
    unknown: Option<Vec<IpPermission>>,
}

/// Revokes the rules `req` names (by id or by permission), all or none: each must exist, except
/// that in a default VPC's group a rule named by permission that the group does not hold is no
/// error but reported back as unknown, as the API reference says of both kinds of VPC.
pub(super) fn revoke(region: &mut Region, req: RuleRequest<'_>) -> Result<Revoked, ApiError> {
    let group = by_id_or_name(region, req.group_id, req.group_name)?.clone();
    let lenient = region.vpcs.get(&group.vpc_id).is_some_and(|v| v.is_default);
    let mut unknown: Vec<Rule> = Vec::new();
    let egress = req.direction == Direction::Egress;
    let wanted = if req.args.is_empty() {
        None
    } else {
        Some(requested_rules(region, &group, egress, true, &req.args)?)
    };
    let rule_ids = req.rule_ids;
    let mut doomed: Vec<String> = Vec::new();
    for id in rule_ids.unwrap_or_default() {
        match group
            .rules
            .iter()
            .find(|r| &r.id == id && r.egress == egress)
        {
            Some(r) => doomed.push(r.id.clone()),
            None => {
                return Err(ApiError::new(
                    Code::InvalidSecurityGroupRuleIdNotFound,
                    format!("The security group rule ID '{id}' does not exist"),
                ));
            }
        }
    }
    for w in wanted.unwrap_or_default() {
        match group.rules.iter().find(|r| r.same_permission(&w)) {
            Some(r) => doomed.push(r.id.clone()),
            None if lenient => unknown.push(w),
            None => {
                return Err(ApiError::new(
                    Code::InvalidPermissionNotFound,
                    format!(
                        "The specified rule does not exist in this security group: \"{}\"",
                        describe_rule(&w)
                    ),
                ));
            }
        }
    }
    if doomed.is_empty() && unknown.is_empty() {
        return Err(ApiError::missing_parameter("IpPermissions"));
    }
    let unknown =
        (!unknown.is_empty()).then(|| permissions(region, &group.vpc_id, unknown.into_iter()));
    let revoked = group
        .rules
        .iter()
        .filter(|r| doomed.contains(&r.id))
        .map(|r| {
            let (cidr, cidr_ipv6, referenced) = match &r.peer {
                Peer::Cidr(c) => (Some(c.clone()), None, None),
                Peer::Ipv6Cidr(c) => (None, Some(c.clone()), None),
                Peer::Group(g) => (None, None, Some(g.clone())),
                Peer::PrefixList(_) => (None, None, None),
            };
            RevokedSecurityGroupRule {
                security_group_rule_id: Some(r.id.clone()),
                group_id: Some(group.id.clone()),
                is_egress: Some(r.egress),
                ip_protocol: Some(r.protocol.clone()),
                from_port: Some(r.from.unwrap_or(-1)),
                to_port: Some(r.to.unwrap_or(-1)),
                cidr_ipv4: cidr,
                cidr_ipv6,
                prefix_list_id: r.peer.prefix_list().map(str::to_string),
                referenced_group_id: referenced,
                description: r.description.clone(),
            }
        })
        .collect();
    for id in &doomed {
        region.tags.remove_resource(id);
    }
    if let Some(g) = region.security_groups.0.get_mut(&group.id) {
        g.rules.retain(|r| !doomed.contains(&r.id));
    }
    Ok(Revoked {
        rules: revoked,
        unknown,
    })
}

/// `AuthorizeSecurityGroupIngress`.
pub fn authorize_security_group_ingress(
    region: &mut Region,
    input: AuthorizeSecurityGroupIngressRequest,
) -> Result<AuthorizeSecurityGroupIngressResult, ApiError> {
    let rules = authorize(
        region,
        RuleRequest {
            direction: Direction::Ingress,
            group_id: input.group_id.as_deref(),
            group_name: input.group_name.as_deref(),
            args: rule_args!(input),
            rule_ids: None,
            tag_specifications: input.tag_specifications.as_deref(),
        },
    )?;
    Ok(AuthorizeSecurityGroupIngressResult {
        r#return: Some(true),
        security_group_rules: Some(rules),
    })
}

/// `AuthorizeSecurityGroupEgress`.
pub fn authorize_security_group_egress(
    region: &mut Region,
    input: AuthorizeSecurityGroupEgressRequest,
) -> Result<AuthorizeSecurityGroupEgressResult, ApiError> {
    let rules = authorize(
        region,
        RuleRequest {
            direction: Direction::Egress,
            group_id: Some(&input.group_id),
            group_name: None,
            args: rule_args!(input),
            rule_ids: None,
            tag_specifications: input.tag_specifications.as_deref(),
        },
    )?;
    Ok(AuthorizeSecurityGroupEgressResult {
        r#return: Some(true),
        security_group_rules: Some(rules),
    })
}

/// `RevokeSecurityGroupIngress`: every rule named must exist (see [`revoke`]).
pub fn revoke_security_group_ingress(
    region: &mut Region,
    input: RevokeSecurityGroupIngressRequest,
) -> Result<RevokeSecurityGroupIngressResult, ApiError> {
    let revoked = revoke(
        region,
        RuleRequest {
            direction: Direction::Ingress,
            group_id: input.group_id.as_deref(),
            group_name: input.group_name.as_deref(),
            args: rule_args!(input),
            rule_ids: input.security_group_rule_ids.as_deref(),
            tag_specifications: None,
        },
    )?;
    Ok(RevokeSecurityGroupIngressResult {
        r#return: Some(true),
        unknown_ip_permissions: revoked.unknown,
        revoked_security_group_rules: Some(revoked.rules),
    })
}

/// `RevokeSecurityGroupEgress`: every rule named must exist (see [`revoke`]).
pub fn revoke_security_group_egress(
    region: &mut Region,
    input: RevokeSecurityGroupEgressRequest,
) -> Result<RevokeSecurityGroupEgressResult, ApiError> {
    let revoked = revoke(
        region,
        RuleRequest {
            direction: Direction::Egress,
            group_id: Some(&input.group_id),
            group_name: None,
            args: rule_args!(input),
            rule_ids: input.security_group_rule_ids.as_deref(),
            tag_specifications: None,
        },
    )?;
    Ok(RevokeSecurityGroupEgressResult {
        r#return: Some(true),
        unknown_ip_permissions: revoked.unknown,
        revoked_security_group_rules: Some(revoked.rules),
    })
}
