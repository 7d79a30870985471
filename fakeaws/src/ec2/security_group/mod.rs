//! Security groups: CreateSecurityGroup, DescribeSecurityGroups, DeleteSecurityGroup,
//! Authorize/RevokeSecurityGroupIngress and Egress, DescribeSecurityGroupRules,
//! UpdateSecurityGroupRuleDescriptionsIngress and Egress, ModifySecurityGroupRules, and the
//! default group every VPC has; rules referencing the groups of a peered VPC.
//!
//! `rule` parses and renders rules (protocols, ports, peers, descriptions, IpPermissions);
//! `authorize` is the one rule path of Authorize/Revoke Ingress/Egress, the direction a
//! parameter; `modify` changes rules in place (descriptions, or a rule whole under its id);
//! `describe` answers DescribeSecurityGroups and DescribeSecurityGroupRules; `across` the
//! references between peered VPCs' groups (DescribeStaleSecurityGroups,
//! DescribeSecurityGroupReferences).

mod across;
mod authorize;
mod describe;
mod modify;
mod rule;

use crate::ec2::error::{self, Code};

use crate::ec2::{Kind, tags};
use crate::generated::ec2::{
    CreateSecurityGroupRequest, CreateSecurityGroupResult, DeleteSecurityGroupRequest,
    DeleteSecurityGroupResult, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

pub use across::{describe_security_group_references, describe_stale_security_groups};
pub use authorize::{
    authorize_security_group_egress, authorize_security_group_ingress,
    revoke_security_group_egress, revoke_security_group_ingress,
};
pub use describe::{
    describe_security_group_rules, describe_security_groups, get_security_groups_for_vpc,
};
pub use modify::{
    modify_security_group_rules, update_security_group_rule_descriptions_egress,
    update_security_group_rule_descriptions_ingress,
};
use rule::{RuleArgs, arn, describe_rule, permissions, render_rule, requested_rules};

/// The other end of a rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Peer {
    /// An IPv4 range.
    Cidr(String),
    /// An IPv6 range.
    Ipv6Cidr(String),
    /// Another (or the same) security group.
    Group(String),
    /// A prefix list of the region (`pl-...`): an AWS-managed one
    /// (`crate::ec2::prefix_list`) or one of the account's own
    /// (`crate::ec2::managed_prefix_list`).
    PrefixList(String),
}

impl Peer {
    /// The prefix list this peer is, if it is one.
    pub fn prefix_list(&self) -> Option<&str> {
        match self {
            Peer::PrefixList(id) => Some(id),
            _ => None,
        }
    }
}

/// One rule of a group.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Rule {
    /// `sgr-...`.
    pub id: String,
    /// Egress or ingress.
    pub egress: bool,
    /// `tcp`, `udp`, `icmp`, `-1` or a protocol number such as `4`.
    pub protocol: String,
    /// The first port (ICMP: type), when the protocol has ports.
    pub from: Option<i32>,
    /// The last port (ICMP: code), when the protocol has ports.
    pub to: Option<i32>,
    /// The other end.
    pub peer: Peer,
    /// The rule's description.
    pub description: Option<String>,
}

impl Rule {
    fn same_permission(&self, other: &Rule) -> bool {
        self.egress == other.egress
            && self.protocol == other.protocol
            && self.from == other.from
            && self.to == other.to
            && self.peer == other.peer
    }
}

crate::region::table! {
    /// Security groups by id.
    SecurityGroups of SecurityGroup
}

/// One security group.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SecurityGroup {
    /// `sg-...`.
    pub id: String,
    /// Its name, unique in its VPC.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Its rules, ingress and egress.
    pub rules: Vec<Rule>,
}

impl SecurityGroup {
    /// Every rule.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter()
    }

    fn is_default(&self) -> bool {
        self.name == "default"
    }
}

fn all_egress(region: &mut Region) -> Rule {
    Rule {
        id: region.ids.resource("sgr"),
        egress: true,
        protocol: "-1".into(),
        from: None,
        to: None,
        peer: Peer::Cidr("0.0.0.0/0".into()),
        description: None,
    }
}

fn insert(region: &mut Region, g: SecurityGroup) {
    region.by_vpc.insert(&g.vpc_id, &g.id);
    region.security_groups.0.insert(g.id.clone(), g);
}

/// The group named `name` in the default VPC: how requests that name groups rather than
/// give their ids address them.
pub(super) fn by_name_in_default_vpc<'a>(
    region: &'a Region,
    name: &str,
) -> Result<&'a SecurityGroup, ApiError> {
    let default_vpc = region
        .default_vpc()
        .map(|v| v.id.clone())
        .unwrap_or_default();
    region
        .security_groups
        .values()
        .find(|g| g.vpc_id == default_vpc && g.name == name)
        .ok_or_else(|| error::group_not_in_default_vpc(name, &default_vpc))
}

/// The group a request names: by id, else by name in the default VPC.
pub(super) fn by_id_or_name<'a>(
    region: &'a Region,
    id: Option<&str>,
    name: Option<&str>,
) -> Result<&'a SecurityGroup, ApiError> {
    match (id, name) {
        (Some(id), _) => Kind::SecurityGroup.get(&region.security_groups, id),
        (None, Some(name)) => by_name_in_default_vpc(region, name),
        (None, None) => Err(ApiError::missing_parameter("GroupId")),
    }
}

/// Gives the default group of `vpc_id`, which has just gained its first IPv6 block, its
/// outbound rule to `::/0` (unless it has one).
pub fn vpc_gained_ipv6(region: &mut Region, vpc_id: &str) {
    let Some(id) = default_of(region, vpc_id) else {
        return;
    };
    let everywhere = Peer::Ipv6Cidr("::/0".into());
    if region.security_groups.get(&id).is_some_and(|g| {
        g.rules
            .iter()
            .any(|r| r.egress && r.peer == everywhere && r.protocol == "-1")
    }) {
        return;
    }
    let rule = Rule {
        id: region.ids.resource("sgr"),
        egress: true,
        protocol: "-1".into(),
        from: None,
        to: None,
        peer: everywhere,
        description: None,
    };
    if let Some(g) = region.security_groups.0.get_mut(&id) {
        g.rules.push(rule);
    }
}

/// Creates a VPC's default group: all traffic from itself in, all traffic out.
pub fn create_default(region: &mut Region, vpc_id: &str) {
    let id = region.ids.resource("sg");
    let ingress = Rule {
        id: region.ids.resource("sgr"),
        egress: false,
        protocol: "-1".into(),
        from: None,
        to: None,
        peer: Peer::Group(id.clone()),
        description: None,
    };
    let egress = all_egress(region);
    insert(
        region,
        SecurityGroup {
            id,
            name: "default".into(),
            description: "default VPC security group".into(),
            vpc_id: vpc_id.to_string(),
            rules: vec![ingress, egress],
        },
    );
}

/// The default group of `vpc_id`.
pub fn default_of(region: &Region, vpc_id: &str) -> Option<String> {
    region
        .by_vpc
        .of_kind(vpc_id, "sg")
        .filter_map(|id| region.security_groups.get(id))
        .find(|g| g.is_default())
        .map(|g| g.id.clone())
}

/// The groups `ids` names, each once and in order, each checked: it exists
/// (`InvalidGroup.NotFound`) and is a group of `vpc_id`.
pub fn checked_in_vpc<'a>(
    region: &Region,
    vpc_id: &str,
    ids: impl IntoIterator<Item = &'a String>,
) -> Result<Vec<String>, ApiError> {
    let mut groups: Vec<String> = Vec::new();
    for g in ids {
        let group = Kind::SecurityGroup.get(&region.security_groups, g)?;
        if group.vpc_id != vpc_id {
            return Err(error::group_not_in_vpc(g, vpc_id));
        }
        if !groups.contains(g) {
            groups.push(g.clone());
        }
    }
    Ok(groups)
}

/// The groups of a new interface in `vpc_id`: those `ids` names, checked as
/// [`checked_in_vpc`] checks them, or the VPC's default group when it names none.
pub fn of_new_interface<'a>(
    region: &Region,
    vpc_id: &str,
    ids: impl IntoIterator<Item = &'a String>,
) -> Result<Vec<String>, ApiError> {
    let mut groups = checked_in_vpc(region, vpc_id, ids)?;
    if groups.is_empty() {
        groups.extend(default_of(region, vpc_id));
    }
    Ok(groups)
}

/// Deletes the default group of a VPC being deleted.
pub fn delete_default(region: &mut Region, vpc_id: &str) {
    if let Some(id) = default_of(region, vpc_id) {
        remove(region, &id);
    }
}

fn remove(region: &mut Region, id: &str) {
    if let Some(g) = region.security_groups.0.remove(id) {
        region.by_vpc.remove(&g.vpc_id, id);
        region.tags.remove_resource(id);
        for r in &g.rules {
            region.tags.remove_resource(&r.id);
        }
    }
}

/// `CreateSecurityGroup`.
pub fn create_security_group(
    region: &mut Region,
    input: CreateSecurityGroupRequest,
) -> Result<CreateSecurityGroupResult, ApiError> {
    let vpc_id = match &input.vpc_id {
        Some(v) => Kind::Vpc.get(&region.vpcs, v)?.id.clone(),
        None => region.default_vpc().map(|v| v.id.clone()).ok_or_else(|| {
            ApiError::new(Code::VPCIdNotSpecified, "No default VPC for this user")
        })?,
    };
    let name = input.group_name.trim().to_string();
    if name.is_empty() || name.len() > 255 || input.description.len() > 255 {
        return Err(ApiError::invalid_value(
            "Group names and descriptions are 1 to 255 characters long.",
        ));
    }
    if name.eq_ignore_ascii_case("default") {
        return Err(ApiError::invalid_value(
            "Cannot use reserved security group name: default",
        ));
    }
    if name.starts_with("sg-") {
        return Err(ApiError::invalid_value(format!(
            "Value ({name}) for parameter GroupName is invalid. Group names may not be in the \
             format sg-*."
        )));
    }
    for (parameter, value) in [
        ("GroupName", &name),
        ("GroupDescription", &input.description),
    ] {
        if !value.is_ascii() {
            return Err(ApiError::invalid_value(format!(
                "Value ({value}) for parameter {parameter} is invalid. Character sets beyond \
                 ASCII are not supported."
            )));
        }
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::SecurityGroup,
    )?;
    if region
        .by_vpc
        .of_kind(&vpc_id, "sg")
        .filter_map(|id| region.security_groups.get(id))
        .any(|g| g.name == name)
    {
        return Err(ApiError::new(
            Code::InvalidGroupDuplicate,
            format!("The security group '{name}' already exists for VPC '{vpc_id}'"),
        ));
    }
    if region.by_vpc.of_kind(&vpc_id, "sg").count() >= region.limits.security_groups_per_vpc {
        return Err(ApiError::new(
            Code::SecurityGroupLimitExceeded,
            "The maximum number of security groups for the VPC has been reached.",
        ));
    }
    let id = region.ids.resource("sg");
    let egress = all_egress(region);
    region.tags.insert(&id, tags);
    insert(
        region,
        SecurityGroup {
            id: id.clone(),
            name,
            description: input.description,
            vpc_id,
            rules: vec![egress],
        },
    );
    Ok(CreateSecurityGroupResult {
        tags: region.tags.tag_set(&id),
        security_group_arn: Some(arn(region, "security-group", &id)),
        group_id: Some(id),
    })
}

/// Why `id` cannot be deleted, if something still uses it. A reference from a group of a
/// peer VPC does not hold it: that rule goes stale (DescribeStaleSecurityGroups).
fn in_use(region: &Region, id: &str) -> Option<String> {
    let vpc = region.security_groups.get(id).map(|g| g.vpc_id.as_str());
    if let Some(other) = region.security_groups.values().find(|g| {
        g.id != id
            && Some(g.vpc_id.as_str()) == vpc
            && g.rules
                .iter()
                .any(|r| r.peer == Peer::Group(id.to_string()))
    }) {
        return Some(format!("referenced by a rule of {}", other.id));
    }
    if let Some(eni) = region
        .network_interfaces
        .values()
        .find(|e| e.groups.iter().any(|g| g == id))
    {
        return Some(format!("used by network interface {}", eni.id));
    }
    if let Some(lb) = region
        .load_balancers
        .values()
        .find(|lb| lb.security_groups.iter().any(|g| g == id))
    {
        return Some(format!("used by load balancer {}", lb.name));
    }
    None
}

/// `DeleteSecurityGroup`: not the default group, not while referenced or in use.
pub fn delete_security_group(
    region: &mut Region,
    input: DeleteSecurityGroupRequest,
) -> Result<DeleteSecurityGroupResult, ApiError> {
    let id = by_id_or_name(
        region,
        input.group_id.as_deref(),
        input.group_name.as_deref(),
    )?
    .id
    .clone();
    if region
        .security_groups
        .get(&id)
        .is_some_and(SecurityGroup::is_default)
    {
        return Err(ApiError::new(
            Code::CannotDelete,
            format!("the specified group: \"{id}\" name: \"default\" cannot be deleted by a user"),
        ));
    }
    if let Some(why) = in_use(region, &id) {
        return Err(ApiError::dependency_violation(format!(
            "resource {id} has a dependent object ({why})"
        )));
    }
    remove(region, &id);
    Ok(DeleteSecurityGroupResult {
        r#return: Some(true),
        group_id: Some(id),
    })
}
