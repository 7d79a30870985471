//! Changing rules in place: UpdateSecurityGroupRuleDescriptionsIngress and Egress (a rule's
//! description, the rule named by its permission or by its id) and ModifySecurityGroupRules (a
//! rule replaced whole, keeping its id and tags). Each call changes all it names or nothing.

use crate::ec2::error::Code;
use crate::ec2::vpc::parse_rule_cidr;
use crate::ec2::vpc_ipv6::parse_ipv6_cidr;
use crate::generated::ec2::{
    IpPermission, ModifySecurityGroupRulesRequest, ModifySecurityGroupRulesResult,
    SecurityGroupRuleDescription, SecurityGroupRuleRequest,
    UpdateSecurityGroupRuleDescriptionsEgressRequest,
    UpdateSecurityGroupRuleDescriptionsEgressResult,
    UpdateSecurityGroupRuleDescriptionsIngressRequest,
    UpdateSecurityGroupRuleDescriptionsIngressResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::authorize::Direction;
use super::rule::{check_description, group_in_vpc, ports, protocol_name};
use super::*;

/// `InvalidSecurityGroupRuleId.NotFound` for `id`.
fn rule_not_found(id: &str) -> ApiError {
    ApiError::new(
        Code::InvalidSecurityGroupRuleIdNotFound,
        format!("The security group rule ID '{id}' does not exist"),
    )
}

/// What an UpdateSecurityGroupRuleDescriptions request names, whatever its direction.
struct DescriptionsRequest<'a> {
    direction: Direction,
    group_id: Option<&'a str>,
    group_name: Option<&'a str>,
    permissions: Option<&'a [IpPermission]>,
    by_id: Option<&'a [SecurityGroupRuleDescription]>,
}

/// Sets the descriptions `req` names: each rule of a permission (its ranges' and pairs'
/// descriptions; none removes the rule's) or each rule id with its description. Every rule
/// must exist in the group, in the request's direction.
fn update_descriptions(region: &mut Region, req: DescriptionsRequest<'_>) -> Result<(), ApiError> {
    let group = by_id_or_name(region, req.group_id, req.group_name)?.clone();
    let egress = req.direction == Direction::Egress;
    let mut changes: Vec<(String, Option<String>)> = Vec::new();
    if req.permissions.is_some_and(|p| !p.is_empty()) {
        let args = RuleArgs {
            permissions: req.permissions,
            protocol: None,
            from: None,
            to: None,
            cidr: None,
        };
        for wanted in requested_rules(region, &group, egress, true, &args)? {
            let Some(rule) = group.rules.iter().find(|r| r.same_permission(&wanted)) else {
                return Err(ApiError::new(
                    Code::InvalidPermissionNotFound,
                    format!(
                        "The specified rule does not exist in this security group: \"{}\"",
                        describe_rule(&wanted)
                    ),
                ));
            };
            changes.push((rule.id.clone(), wanted.description));
        }
    }
    for item in req.by_id.unwrap_or_default() {
        let id = item.security_group_rule_id.as_deref().ok_or_else(|| {
            ApiError::missing_parameter("SecurityGroupRuleDescriptions.N.SecurityGroupRuleId")
        })?;
        if !group.rules.iter().any(|r| r.id == id && r.egress == egress) {
            return Err(rule_not_found(id));
        }
        if let Some(d) = &item.description {
            check_description(d)?;
        }
        changes.push((id.to_string(), item.description.clone()));
    }
    if changes.is_empty() {
        return Err(ApiError::missing_parameter(
            "IpPermissions or SecurityGroupRuleDescriptions",
        ));
    }
    if let Some(g) = region.security_groups.0.get_mut(&group.id) {
        for (id, description) in changes {
            if let Some(rule) = g.rules.iter_mut().find(|r| r.id == id) {
                rule.description = description;
            }
        }
    }
    Ok(())
}

/// `UpdateSecurityGroupRuleDescriptionsIngress`.
pub fn update_security_group_rule_descriptions_ingress(
    region: &mut Region,
    input: UpdateSecurityGroupRuleDescriptionsIngressRequest,
) -> Result<UpdateSecurityGroupRuleDescriptionsIngressResult, ApiError> {
    update_descriptions(
        region,
        DescriptionsRequest {
            direction: Direction::Ingress,
            group_id: input.group_id.as_deref(),
            group_name: input.group_name.as_deref(),
            permissions: input.ip_permissions.as_deref(),
            by_id: input.security_group_rule_descriptions.as_deref(),
        },
    )?;
    Ok(UpdateSecurityGroupRuleDescriptionsIngressResult {
        r#return: Some(true),
    })
}

/// `UpdateSecurityGroupRuleDescriptionsEgress`.
pub fn update_security_group_rule_descriptions_egress(
    region: &mut Region,
    input: UpdateSecurityGroupRuleDescriptionsEgressRequest,
) -> Result<UpdateSecurityGroupRuleDescriptionsEgressResult, ApiError> {
    update_descriptions(
        region,
        DescriptionsRequest {
            direction: Direction::Egress,
            group_id: input.group_id.as_deref(),
            group_name: input.group_name.as_deref(),
            permissions: input.ip_permissions.as_deref(),
            by_id: input.security_group_rule_descriptions.as_deref(),
        },
    )?;
    Ok(UpdateSecurityGroupRuleDescriptionsEgressResult {
        r#return: Some(true),
    })
}

/// The rule a `SecurityGroupRuleRequest` describes, in `group` and the direction `egress`:
/// a protocol, its ports, and one peer (an IPv4 or IPv6 range, or a group of the same VPC).
fn requested_rule(
    region: &Region,
    group: &SecurityGroup,
    egress: bool,
    spec: &SecurityGroupRuleRequest,
) -> Result<Rule, ApiError> {
    let protocol = protocol_name(spec.ip_protocol.as_deref().ok_or_else(|| {
        ApiError::missing_parameter("SecurityGroupRules.N.SecurityGroupRule.IpProtocol")
    })?)?;
    let (from, to) = ports(&protocol, spec.from_port, spec.to_port)?;
    let peer = match (
        &spec.cidr_ipv4,
        &spec.cidr_ipv6,
        &spec.referenced_group_id,
        &spec.prefix_list_id,
    ) {
        (Some(c), None, None, None) => Peer::Cidr(parse_rule_cidr(c, "cidrIpv4")?.to_string()),
        (None, Some(c), None, None) => Peer::Ipv6Cidr(parse_ipv6_cidr(c, "cidrIpv6")?.to_string()),
        (None, None, Some(g), None) => Peer::Group(group_in_vpc(region, group, g)?),
        (None, None, None, Some(id)) => {
            crate::ec2::prefix_list::check_exists(region, id)?;
            Peer::PrefixList(id.clone())
        }
        (None, None, None, None) => {
            return Err(ApiError::missing_parameter(
                "SecurityGroupRules.N.SecurityGroupRule: CidrIpv4, CidrIpv6, ReferencedGroupId \
                 or PrefixListId",
            ));
        }
        _ => {
            return Err(ApiError::invalid_combination(
                "A security group rule has one peer: CidrIpv4, CidrIpv6, ReferencedGroupId or \
                 PrefixListId.",
            ));
        }
    };
    if let Some(d) = &spec.description {
        check_description(d)?;
    }
    Ok(Rule {
        id: String::new(),
        egress,
        protocol,
        from,
        to,
        peer,
        description: spec.description.clone(),
    })
}

/// `ModifySecurityGroupRules`: each rule named by id, in the group, replaced whole by the rule
/// given (its direction, id and tags kept); none may then repeat another rule of the group.
pub fn modify_security_group_rules(
    region: &mut Region,
    input: ModifySecurityGroupRulesRequest,
) -> Result<ModifySecurityGroupRulesResult, ApiError> {
    let group = Kind::SecurityGroup
        .get(&region.security_groups, &input.group_id)?
        .clone();
    if input.security_group_rules.is_empty() {
        return Err(ApiError::missing_parameter("SecurityGroupRules"));
    }
    let mut rules = group.rules.clone();
    let mut modified: Vec<String> = Vec::new();
    for update in &input.security_group_rules {
        let id = &update.security_group_rule_id;
        let Some(slot) = rules.iter_mut().find(|r| &r.id == id) else {
            return Err(rule_not_found(id));
        };
        let spec = update
            .security_group_rule
            .as_ref()
            .ok_or_else(|| ApiError::missing_parameter("SecurityGroupRules.N.SecurityGroupRule"))?;
        let rule = requested_rule(region, &group, slot.egress, spec)?;
        *slot = Rule {
            id: id.clone(),
            ..rule
        };
        modified.push(id.clone());
    }
    for id in &modified {
        if let Some(r) = rules.iter().find(|r| &r.id == id)
            && rules.iter().any(|x| &x.id != id && x.same_permission(r))
        {
            return Err(ApiError::new(
                Code::InvalidPermissionDuplicate,
                format!("the specified rule \"{}\" already exists", describe_rule(r)),
            ));
        }
    }
    // A rule now naming a customer-managed prefix list counts as that list's size, as at
    // Authorize.
    for egress in [false, true] {
        let count: usize = rules
            .iter()
            .filter(|r| r.egress == egress)
            .map(|r| crate::ec2::managed_prefix_list::weight(region, r.peer.prefix_list(), None))
            .sum();
        if count > region.limits.rules_per_group {
            return Err(ApiError::new(
                Code::RulesPerSecurityGroupLimitExceeded,
                "The maximum number of rules per security group has been reached.",
            ));
        }
    }
    if let Some(g) = region.security_groups.0.get_mut(&group.id) {
        g.rules = rules;
    }
    Ok(ModifySecurityGroupRulesResult {
        r#return: Some(true),
    })
}
