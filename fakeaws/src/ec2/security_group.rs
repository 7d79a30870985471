//! Security groups: CreateSecurityGroup, DescribeSecurityGroups, DeleteSecurityGroup,
//! Authorize/RevokeSecurityGroupIngress and Egress, DescribeSecurityGroupRules, and the
//! default group every VPC has.

use crate::ec2::error::{self, Code};
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::vpc::parse_cidr;
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    AuthorizeSecurityGroupEgressRequest, AuthorizeSecurityGroupEgressResult,
    AuthorizeSecurityGroupIngressRequest, AuthorizeSecurityGroupIngressResult,
    CreateSecurityGroupRequest, CreateSecurityGroupResult, DeleteSecurityGroupRequest,
    DeleteSecurityGroupResult, DescribeSecurityGroupRulesRequest, DescribeSecurityGroupRulesResult,
    DescribeSecurityGroupsRequest, DescribeSecurityGroupsResult, IpPermission, IpRange,
    ReferencedSecurityGroup, ResourceType, RevokeSecurityGroupEgressRequest,
    RevokeSecurityGroupEgressResult, RevokeSecurityGroupIngressRequest,
    RevokeSecurityGroupIngressResult, RevokedSecurityGroupRule, SecurityGroup as SecurityGroupOut,
    SecurityGroupRule, TagSpecification, UserIdGroupPair,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The other end of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// An IPv4 range.
    Cidr(String),
    /// Another (or the same) security group.
    Group(String),
}

/// One rule of a group.
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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

fn protocol_name(raw: &str) -> Result<String, ApiError> {
    let p = raw.trim().to_ascii_lowercase();
    Ok(match p.as_str() {
        "tcp" | "6" => "tcp".into(),
        "udp" | "17" => "udp".into(),
        "icmp" | "1" => "icmp".into(),
        "icmpv6" | "58" => "58".into(),
        "-1" | "all" => "-1".into(),
        n => match n.parse::<u8>() {
            Ok(v) => v.to_string(),
            Err(_) => {
                return Err(ApiError::invalid_value(format!(
                    "Invalid value '{raw}' for IP protocol. Unknown protocol."
                )));
            }
        },
    })
}

fn ports(
    protocol: &str,
    from: Option<i32>,
    to: Option<i32>,
) -> Result<(Option<i32>, Option<i32>), ApiError> {
    match protocol {
        "tcp" | "udp" => match (from, to) {
            (Some(f), Some(t))
                if (0..=65535).contains(&f) && (0..=65535).contains(&t) && f <= t =>
            {
                Ok((Some(f), Some(t)))
            }
            (Some(_), Some(_)) => Err(ApiError::invalid_value(format!(
                "Invalid value for portRange. Must specify a valid fromPort and toPort, got {}..{}",
                from.unwrap_or_default(),
                to.unwrap_or_default()
            ))),
            _ => Err(ApiError::invalid_value(
                "Invalid value 'Must specify both from and to ports with TCP/UDP.' for portRange.",
            )),
        },
        "icmp" | "58" => {
            let f = from.unwrap_or(-1);
            let t = to.unwrap_or(-1);
            if !(-1..=255).contains(&f) || !(-1..=255).contains(&t) {
                return Err(ApiError::invalid_value("Invalid ICMP type or code."));
            }
            Ok((Some(f), Some(t)))
        }
        _ => Ok((None, None)),
    }
}

/// The rule parameters of an Authorize or Revoke request: `IpPermissions`, or the older
/// single-rule members.
struct RuleArgs<'a> {
    permissions: Option<&'a [IpPermission]>,
    protocol: Option<&'a str>,
    from: Option<i32>,
    to: Option<i32>,
    cidr: Option<&'a str>,
}

impl RuleArgs<'_> {
    fn is_empty(&self) -> bool {
        self.permissions.is_none_or(<[IpPermission]>::is_empty)
            && self.protocol.is_none()
            && self.cidr.is_none()
            && self.from.is_none()
            && self.to.is_none()
    }
}

/// The rules a request asks for, checked against the region (referenced groups exist in the
/// same VPC).
fn requested_rules(
    region: &mut Region,
    group: &SecurityGroup,
    egress: bool,
    args: &RuleArgs<'_>,
) -> Result<Vec<Rule>, ApiError> {
    let RuleArgs {
        permissions,
        protocol,
        from,
        to,
        cidr,
    } = *args;
    let legacy = protocol.is_some() || cidr.is_some() || from.is_some() || to.is_some();
    let mut out = Vec::new();
    if legacy {
        if permissions.is_some_and(|p| !p.is_empty()) {
            return Err(ApiError::invalid_combination(
                "The parameter 'ipPermissions' may not be used in combination with 'ipProtocol'",
            ));
        }
        let protocol =
            protocol_name(protocol.ok_or_else(|| ApiError::missing_parameter("IpProtocol"))?)?;
        let (from, to) = ports(&protocol, from, to)?;
        let cidr = cidr.ok_or_else(|| ApiError::missing_parameter("CidrIp"))?;
        out.push(Rule {
            id: String::new(),
            egress,
            protocol,
            from,
            to,
            peer: Peer::Cidr(parse_cidr(cidr, "cidrIp")?.to_string()),
            description: None,
        });
    }
    for p in permissions.unwrap_or_default() {
        let protocol = protocol_name(
            p.ip_protocol
                .as_deref()
                .ok_or_else(|| ApiError::missing_parameter("IpPermissions.N.IpProtocol"))?,
        )?;
        let (from, to) = ports(&protocol, p.from_port, p.to_port)?;
        if p.ipv6_ranges.as_ref().is_some_and(|v| !v.is_empty())
            || p.prefix_list_ids.as_ref().is_some_and(|v| !v.is_empty())
        {
            return Err(ApiError::not_implemented(
                "fakeaws does not implement IPv6 ranges or prefix lists in security group rules",
            ));
        }
        let mut peers = Vec::new();
        for r in p.ip_ranges.iter().flatten() {
            let raw = r
                .cidr_ip
                .as_deref()
                .ok_or_else(|| ApiError::missing_parameter("IpPermissions.N.IpRanges.N.CidrIp"))?;
            peers.push((
                Peer::Cidr(parse_cidr(raw, "cidrIp")?.to_string()),
                r.description.clone(),
            ));
        }
        for pair in p.user_id_group_pairs.iter().flatten() {
            let id = match (&pair.group_id, &pair.group_name) {
                (Some(id), _) => {
                    let g = Kind::SecurityGroup.get(&region.security_groups, id)?;
                    if g.vpc_id != group.vpc_id {
                        return Err(ApiError::new(
                            Code::InvalidGroupNotFound,
                            format!(
                                "You have specified two resources that belong to different networks: {id} and {}.",
                                group.id
                            ),
                        ));
                    }
                    id.clone()
                }
                (None, Some(name)) => region
                    .security_groups
                    .values()
                    .find(|g| g.vpc_id == group.vpc_id && &g.name == name)
                    .map(|g| g.id.clone())
                    .ok_or_else(|| error::group_not_in_vpc(name, &group.vpc_id))?,
                (None, None) => {
                    return Err(ApiError::missing_parameter(
                        "IpPermissions.N.Groups.N.GroupId",
                    ));
                }
            };
            peers.push((Peer::Group(id), pair.description.clone()));
        }
        if peers.is_empty() {
            return Err(ApiError::missing_parameter(
                "IpPermissions.N.IpRanges or IpPermissions.N.Groups",
            ));
        }
        for (peer, description) in peers {
            out.push(Rule {
                id: String::new(),
                egress,
                protocol: protocol.clone(),
                from,
                to,
                peer,
                description,
            });
        }
    }
    if out.is_empty() {
        return Err(ApiError::missing_parameter("IpPermissions"));
    }
    Ok(out)
}

fn describe_rule(r: &Rule) -> String {
    let peer = match &r.peer {
        Peer::Cidr(c) => c.clone(),
        Peer::Group(g) => g.clone(),
    };
    let proto = r.protocol.to_ascii_uppercase();
    match (r.from, r.to) {
        (Some(f), Some(t)) => format!("peer: {peer}, {proto}, from port: {f}, to port: {t}, ALLOW"),
        _ => format!("peer: {peer}, {proto}, ALLOW"),
    }
}

fn arn(region: &Region, kind: &str, id: &str) -> String {
    format!(
        "arn:aws:ec2:{}:{}:{kind}/{id}",
        region.name, region.account_id
    )
}

fn render_rule(region: &Region, group: &SecurityGroup, r: &Rule) -> SecurityGroupRule {
    let (cidr_ipv4, referenced_group_info) = match &r.peer {
        Peer::Cidr(c) => (Some(c.clone()), None),
        Peer::Group(g) => (
            None,
            Some(ReferencedSecurityGroup {
                group_id: Some(g.clone()),
                user_id: Some(region.account_id.clone()),
                ..Default::default()
            }),
        ),
    };
    SecurityGroupRule {
        security_group_rule_id: Some(r.id.clone()),
        group_id: Some(group.id.clone()),
        group_owner_id: Some(region.account_id.clone()),
        is_egress: Some(r.egress),
        ip_protocol: Some(r.protocol.clone()),
        from_port: Some(r.from.unwrap_or(-1)),
        to_port: Some(r.to.unwrap_or(-1)),
        cidr_ipv4,
        referenced_group_info,
        description: r.description.clone(),
        tags: region.tags.tag_set(&r.id),
        security_group_rule_arn: Some(arn(region, "security-group-rule", &r.id)),
        ..Default::default()
    }
}

/// Groups rules into AWS's `IpPermission`s: one per (protocol, ports), in first-seen order.
fn permissions(region: &Region, rules: impl Iterator<Item = Rule>) -> Vec<IpPermission> {
    let mut out: Vec<IpPermission> = Vec::new();
    for r in rules {
        let slot = match out.iter_mut().position(|p| {
            p.ip_protocol.as_deref() == Some(r.protocol.as_str())
                && p.from_port == r.from
                && p.to_port == r.to
        }) {
            Some(i) => &mut out[i],
            None => {
                out.push(IpPermission {
                    ip_protocol: Some(r.protocol.clone()),
                    from_port: r.from,
                    to_port: r.to,
                    user_id_group_pairs: Some(Vec::new()),
                    ip_ranges: Some(Vec::new()),
                    ipv6_ranges: Some(Vec::new()),
                    prefix_list_ids: Some(Vec::new()),
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        match r.peer {
            Peer::Cidr(c) => slot.ip_ranges.get_or_insert_default().push(IpRange {
                cidr_ip: Some(c),
                description: r.description,
            }),
            Peer::Group(g) => {
                slot.user_id_group_pairs
                    .get_or_insert_default()
                    .push(UserIdGroupPair {
                        group_id: Some(g),
                        user_id: Some(region.account_id.clone()),
                        description: r.description,
                        ..Default::default()
                    })
            }
        }
    }
    out
}

fn render(region: &Region, g: &SecurityGroup) -> SecurityGroupOut {
    SecurityGroupOut {
        group_id: Some(g.id.clone()),
        ip_permissions_egress: Some(permissions(
            region,
            g.rules.iter().filter(|r| r.egress).cloned(),
        )),
        ip_permissions: Some(permissions(
            region,
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
        return Err(ApiError::invalid_value(
            "Group names may not be in the format sg-*",
        ));
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
                ("cidr", Peer::Cidr(c)) => Some(c.clone()),
                ("group-id", Peer::Group(id)) => Some(id.clone()),
                ("group-name", Peer::Group(id)) => {
                    region.security_groups.get(id).map(|g| g.name.clone())
                }
                ("user-id", Peer::Group(_)) => Some(region.account_id.clone()),
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
        let default_vpc = region
            .default_vpc()
            .map(|v| v.id.clone())
            .unwrap_or_default();
        let g = region
            .security_groups
            .values()
            .find(|g| g.vpc_id == default_vpc && &g.name == name)
            .ok_or_else(|| error::group_not_in_default_vpc(name, &default_vpc))?;
        ids.push(g.id.clone());
    }
    if !ids.is_empty() && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter groupIds cannot be used with the parameter maxResults",
        ));
    }
    let found = Kind::SecurityGroup.describe(
        &region.security_groups,
        Some(&ids),
        region.candidates(&filters),
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

/// Why `id` cannot be deleted, if something still uses it.
fn in_use(region: &Region, id: &str) -> Option<String> {
    if let Some(other) = region.security_groups.values().find(|g| {
        g.id != id
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
    let id = match (&input.group_id, &input.group_name) {
        (Some(id), _) => Kind::SecurityGroup
            .get(&region.security_groups, id)?
            .id
            .clone(),
        (None, Some(name)) => {
            let default_vpc = region
                .default_vpc()
                .map(|v| v.id.clone())
                .unwrap_or_default();
            region
                .security_groups
                .values()
                .find(|g| g.vpc_id == default_vpc && &g.name == name)
                .map(|g| g.id.clone())
                .ok_or_else(|| error::group_not_in_default_vpc(name, &default_vpc))?
        }
        (None, None) => return Err(ApiError::missing_parameter("GroupId")),
    };
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

fn group_for(
    region: &Region,
    id: Option<&str>,
    name: Option<&str>,
) -> Result<SecurityGroup, ApiError> {
    match (id, name) {
        (Some(id), _) => Ok(Kind::SecurityGroup
            .get(&region.security_groups, id)?
            .clone()),
        (None, Some(name)) => {
            let default_vpc = region
                .default_vpc()
                .map(|v| v.id.clone())
                .unwrap_or_default();
            region
                .security_groups
                .values()
                .find(|g| g.vpc_id == default_vpc && g.name == name)
                .cloned()
                .ok_or_else(|| error::group_not_in_default_vpc(name, &default_vpc))
        }
        (None, None) => Err(ApiError::missing_parameter("GroupId")),
    }
}

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
struct RuleRequest<'a> {
    direction: Direction,
    group_id: Option<&'a str>,
    group_name: Option<&'a str>,
    args: RuleArgs<'a>,
    rule_ids: Option<&'a [String]>,
    tag_specifications: Option<&'a [TagSpecification]>,
}

/// Authorizes the rules `req` names, all or none: none may exist already, and the group's
/// quota of rules in that direction must hold them.
fn authorize(
    region: &mut Region,
    req: RuleRequest<'_>,
) -> Result<Vec<SecurityGroupRule>, ApiError> {
    let group = group_for(region, req.group_id, req.group_name)?;
    let egress = req.direction == Direction::Egress;
    let mut wanted = requested_rules(region, &group, egress, &req.args)?;
    let specs = req.tag_specifications;
    let tags = tags::from_specs(specs, ResourceType::SecurityGroupRule)?;
    for (i, r) in wanted.iter().enumerate() {
        if group.rules.iter().any(|x| x.same_permission(r))
            || wanted[..i].iter().any(|x| x.same_permission(r))
        {
            return Err(ApiError::new(
                Code::InvalidPermissionDuplicate,
                format!("the specified rule \"{}\" already exists", describe_rule(r)),
            ));
        }
    }
    let count = group.rules.iter().filter(|r| r.egress == egress).count() + wanted.len();
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

/// Revokes the rules `req` names (by id or by permission), all or none: each must exist.
fn revoke(
    region: &mut Region,
    req: RuleRequest<'_>,
) -> Result<Vec<RevokedSecurityGroupRule>, ApiError> {
    let group = group_for(region, req.group_id, req.group_name)?;
    let egress = req.direction == Direction::Egress;
    let wanted = if req.args.is_empty() {
        None
    } else {
        Some(requested_rules(region, &group, egress, &req.args)?)
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
    if doomed.is_empty() {
        return Err(ApiError::missing_parameter("IpPermissions"));
    }
    let revoked = group
        .rules
        .iter()
        .filter(|r| doomed.contains(&r.id))
        .map(|r| {
            let (cidr, referenced) = match &r.peer {
                Peer::Cidr(c) => (Some(c.clone()), None),
                Peer::Group(g) => (None, Some(g.clone())),
            };
            RevokedSecurityGroupRule {
                security_group_rule_id: Some(r.id.clone()),
                group_id: Some(group.id.clone()),
                is_egress: Some(r.egress),
                ip_protocol: Some(r.protocol.clone()),
                from_port: Some(r.from.unwrap_or(-1)),
                to_port: Some(r.to.unwrap_or(-1)),
                cidr_ipv4: cidr,
                referenced_group_id: referenced,
                description: r.description.clone(),
                ..Default::default()
            }
        })
        .collect();
    for id in &doomed {
        region.tags.remove_resource(id);
    }
    if let Some(g) = region.security_groups.0.get_mut(&group.id) {
        g.rules.retain(|r| !doomed.contains(&r.id));
    }
    Ok(revoked)
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

/// `RevokeSecurityGroupIngress`: every rule named must exist.
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
        unknown_ip_permissions: None,
        revoked_security_group_rules: Some(revoked),
    })
}

/// `RevokeSecurityGroupEgress`: every rule named must exist.
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
        unknown_ip_permissions: None,
        revoked_security_group_rules: Some(revoked),
    })
}

struct RuleRow<'a> {
    group: &'a SecurityGroup,
    rule: &'a Rule,
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
                .map(|r| render_rule(region, r.group, r.rule))
                .collect(),
        ),
        next_token: next,
    })
}
