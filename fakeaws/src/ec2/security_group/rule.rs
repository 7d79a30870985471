//! Security group rules as requests give them and answers show them: protocol names, port
//! ranges, peers (CIDR, group, prefix list), IpPermissions and SecurityGroupRule records.

use crate::ec2::error::{self, Code};
use crate::ec2::{Kind, vpc_peering};

use crate::ec2::vpc::parse_rule_cidr;
use crate::ec2::vpc_ipv6::parse_ipv6_cidr;
use crate::generated::ec2::{
    IpPermission, IpRange, Ipv6Range, PrefixListId, ReferencedSecurityGroup, SecurityGroupRule,
    UserIdGroupPair,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

pub(super) fn protocol_name(raw: &str) -> Result<String, ApiError> {
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

pub(super) fn ports(
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
pub(super) struct RuleArgs<'a> {
    pub(super) permissions: Option<&'a [IpPermission]>,
    pub(super) protocol: Option<&'a str>,
    pub(super) from: Option<i32>,
    pub(super) to: Option<i32>,
    pub(super) cidr: Option<&'a str>,
}

impl RuleArgs<'_> {
    pub(super) fn is_empty(&self) -> bool {
        self.permissions.is_none_or(<[IpPermission]>::is_empty)
            && self.protocol.is_none()
            && self.cidr.is_none()
            && self.from.is_none()
            && self.to.is_none()
    }
}

/// The rules a request asks for, checked against the region (referenced groups exist in the
/// same VPC or in a VPC peered with it). With `existing`, a request naming rules the group
/// has (to revoke them or change their descriptions), a group one of its rules references may
/// be named even where it could no longer be (a stale reference: the group or the peering
/// connection gone).
pub(super) fn requested_rules(
    region: &mut Region,
    group: &SecurityGroup,
    egress: bool,
    existing: bool,
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
            peer: Peer::Cidr(parse_rule_cidr(cidr, "cidrIp")?.to_string()),
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
        let mut peers = Vec::new();
        for r in p.ip_ranges.iter().flatten() {
            let raw = r
                .cidr_ip
                .as_deref()
                .ok_or_else(|| ApiError::missing_parameter("IpPermissions.N.IpRanges.N.CidrIp"))?;
            peers.push((
                Peer::Cidr(parse_rule_cidr(raw, "cidrIp")?.to_string()),
                r.description.clone(),
            ));
        }
        for r in p.ipv6_ranges.iter().flatten() {
            let raw = r.cidr_ipv6.as_deref().ok_or_else(|| {
                ApiError::missing_parameter("IpPermissions.N.Ipv6Ranges.N.CidrIpv6")
            })?;
            peers.push((
                Peer::Ipv6Cidr(parse_ipv6_cidr(raw, "cidrIpv6")?.to_string()),
                r.description.clone(),
            ));
        }
        for pair in p.user_id_group_pairs.iter().flatten() {
            let id = match (&pair.group_id, &pair.group_name) {
                (Some(id), _)
                    if existing
                        && group
                            .rules
                            .iter()
                            .any(|r| r.peer == Peer::Group(id.clone())) =>
                {
                    id.clone()
                }
                (Some(id), _) => group_in_vpc(region, group, id)?,
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
        for list in p.prefix_list_ids.iter().flatten() {
            let id = list.prefix_list_id.as_deref().ok_or_else(|| {
                ApiError::missing_parameter("IpPermissions.N.PrefixListIds.N.PrefixListId")
            })?;
            crate::ec2::prefix_list::check_exists(region, id)?;
            peers.push((Peer::PrefixList(id.to_string()), list.description.clone()));
        }
        if peers.is_empty() {
            return Err(ApiError::missing_parameter(
                "IpPermissions.N.IpRanges, IpPermissions.N.Ipv6Ranges, IpPermissions.N.Groups \
                 or IpPermissions.N.PrefixListIds",
            ));
        }
        for (peer, description) in peers {
            if let Some(d) = &description {
                check_description(d)?;
            }
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

/// The group `id`, a rule's peer, checked to be in `group`'s VPC or in a VPC an active
/// peering connection joins to it (AWS: a peer VPC's groups may be referenced in the same
/// region).
pub(super) fn group_in_vpc(
    region: &Region,
    group: &SecurityGroup,
    id: &str,
) -> Result<String, ApiError> {
    let g = Kind::SecurityGroup.get(&region.security_groups, id)?;
    if g.vpc_id != group.vpc_id && !vpc_peering::peered(region, &group.vpc_id, &g.vpc_id) {
        return Err(ApiError::new(
            Code::InvalidGroupNotFound,
            format!(
                "You have specified two resources that belong to different networks: {id} and {}.",
                group.id
            ),
        ));
    }
    Ok(g.id.clone())
}

/// The characters besides ASCII letters and digits a rule's description may hold.
const DESCRIPTION_PUNCTUATION: &str = ". _-:/()#,@[]+=&;{}!$*";

/// A rule's description: fewer than 256 characters, each a letter, a digit or one of
/// [`DESCRIPTION_PUNCTUATION`], as the API reference lists them; AWS's own words otherwise.
pub(super) fn check_description(description: &str) -> Result<(), ApiError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || DESCRIPTION_PUNCTUATION.contains(c);
    if description.chars().count() > 255 || !description.chars().all(allowed) {
        return Err(ApiError::invalid_value(format!(
            "Invalid rule description. Valid descriptions are strings less than 256 characters \
             from the following set:  a-zA-Z0-9{DESCRIPTION_PUNCTUATION}"
        )));
    }
    Ok(())
}

pub(super) fn describe_rule(r: &Rule) -> String {
    let peer = match &r.peer {
        Peer::Cidr(c) | Peer::Ipv6Cidr(c) | Peer::Group(c) | Peer::PrefixList(c) => c.clone(),
    };
    let proto = r.protocol.to_ascii_uppercase();
    match (r.from, r.to) {
        (Some(f), Some(t)) => format!("peer: {peer}, {proto}, from port: {f}, to port: {t}, ALLOW"),
        _ => format!("peer: {peer}, {proto}, ALLOW"),
    }
}

pub(super) fn arn(region: &Region, kind: &str, id: &str) -> String {
    format!(
        "arn:{}:ec2:{}:{}:{kind}/{id}",
        crate::ec2::account::arn_partition(&region.name),
        region.name,
        region.account_id
    )
}

/// What a reference from a group of `vpc_id` to the group `id` shows beyond the group: when
/// `id` is not of `vpc_id` (a peer VPC's group, or one gone), its VPC while it exists, and the
/// peering connection between the two VPCs with its state (`PeeringStatus`).
#[derive(Default)]
pub(super) struct Across {
    pub(super) vpc_id: Option<String>,
    pub(super) peering: Option<(String, String)>,
}

pub(super) fn across(region: &Region, vpc_id: &str, id: &str) -> Across {
    let peer_vpc = region.security_groups.get(id).map(|g| g.vpc_id.clone());
    match peer_vpc {
        Some(v) if v == vpc_id => Across::default(),
        Some(v) => Across {
            peering: vpc_peering::between(region, vpc_id, &v)
                .map(|p| (p.id.clone(), p.state.as_str().to_string())),
            vpc_id: Some(v),
        },
        None => Across::default(),
    }
}

pub(super) fn render_rule(region: &Region, group: &SecurityGroup, r: &Rule) -> SecurityGroupRule {
    let (cidr_ipv4, cidr_ipv6, referenced_group_info) = match &r.peer {
        Peer::Cidr(c) => (Some(c.clone()), None, None),
        Peer::Ipv6Cidr(c) => (None, Some(c.clone()), None),
        Peer::Group(g) => {
            let Across { vpc_id, peering } = across(region, &group.vpc_id, g);
            let (pcx, status) = peering.unzip();
            (
                None,
                None,
                Some(ReferencedSecurityGroup {
                    group_id: Some(g.clone()),
                    user_id: Some(region.account_id.clone()),
                    vpc_id,
                    vpc_peering_connection_id: pcx,
                    peering_status: status,
                }),
            )
        }
        Peer::PrefixList(_) => (None, None, None),
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
        cidr_ipv6,
        prefix_list_id: r.peer.prefix_list().map(str::to_string),
        referenced_group_info,
        description: r.description.clone(),
        tags: region.tags.tag_set(&r.id),
        security_group_rule_arn: Some(arn(region, "security-group-rule", &r.id)),
    }
}

/// Groups the rules of a group of `vpc_id` into AWS's `IpPermission`s: one per (protocol,
/// ports), in first-seen order.
pub(super) fn permissions(
    region: &Region,
    vpc_id: &str,
    rules: impl Iterator<Item = Rule>,
) -> Vec<IpPermission> {
    let mut out: Vec<IpPermission> = Vec::new();
    for r in rules {
        let same = |p: &IpPermission| {
            p.ip_protocol.as_deref() == Some(r.protocol.as_str())
                && p.from_port == r.from
                && p.to_port == r.to
        };
        if !out.iter().any(same) {
            out.push(IpPermission {
                ip_protocol: Some(r.protocol.clone()),
                from_port: r.from,
                to_port: r.to,
                user_id_group_pairs: Some(Vec::new()),
                ip_ranges: Some(Vec::new()),
                ipv6_ranges: Some(Vec::new()),
                prefix_list_ids: Some(Vec::new()),
            });
        }
        let Some(slot) = out.iter_mut().find(|p| same(p)) else {
            continue;
        };
        match r.peer {
            Peer::Cidr(c) => slot.ip_ranges.get_or_insert_default().push(IpRange {
                cidr_ip: Some(c),
                description: r.description,
            }),
            Peer::Ipv6Cidr(c) => slot.ipv6_ranges.get_or_insert_default().push(Ipv6Range {
                cidr_ipv6: Some(c),
                description: r.description,
            }),
            Peer::Group(g) => {
                let Across { vpc_id, peering } = across(region, vpc_id, &g);
                let (pcx, status) = peering.unzip();
                slot.user_id_group_pairs
                    .get_or_insert_default()
                    .push(UserIdGroupPair {
                        group_id: Some(g),
                        user_id: Some(region.account_id.clone()),
                        description: r.description,
                        vpc_id,
                        vpc_peering_connection_id: pcx,
                        peering_status: status,
                        ..Default::default()
                    })
            }
            Peer::PrefixList(id) => {
                slot.prefix_list_ids
                    .get_or_insert_default()
                    .push(PrefixListId {
                        prefix_list_id: Some(id),
                        description: r.description,
                    })
            }
        }
    }
    out
}
