//! Security groups for the bastion, the control plane, the nodes and the API load balancer,
//! and their ingress rules: SSH only from the bastion group; 6443 on the control plane only
//! from the load balancer, control-plane and node groups; etcd among control planes; the
//! kubelet; node ports (from IPv6 too in a dual-stack cluster); the CNI's rules; the user's
//! additional rules. Overridden roles use an
//! existing group, whose rules are never touched. Rules converge: extra ones are revoked,
//! missing ones authorized, nothing else is called. The `lb` group, on every machine and the
//! only group carrying `kubernetes.io/cluster/<name>`, is the cloud controller manager's to
//! edit: the provider creates, tags and deletes it, and never touches its rules.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::{
    IpPermission, IpRange, Ipv6Range, ResourceType, SecurityGroup, UserIdGroupPair,
};

use super::{Res, Scope, is_new};
use crate::aws_error::{Class, aws};
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, sent_once, until_visible};
use crate::spec::{IngressRule, Role, Scheme};

/// Where a rule's traffic comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A CIDR block.
    Cidr(String),
    /// An IPv6 CIDR block, in its canonical form (see [`ipv6_cidr`]).
    Cidr6(String),
    /// A security group id.
    Group(String),
}

/// An IPv6 CIDR block in one spelling (`2001:db8::/32`, lower case, zeros compressed), so
/// that the spec's and AWS's compare equal however either writes it.
pub fn ipv6_cidr(raw: &str) -> String {
    raw.parse::<ipnet::Ipv6Net>()
        .map_or_else(|_| raw.to_string(), |n| n.to_string())
}

/// One ingress rule, normalised so that AWS's answer and the spec compare equal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rule {
    /// `tcp`, `udp`, `icmp`, `-1` or a protocol number.
    pub protocol: String,
    /// Ports (tcp, udp, icmp only).
    pub ports: Option<(i32, i32)>,
    /// The source.
    pub source: Source,
}

/// The protocol as AWS reports it.
pub fn normalise_protocol(p: &str) -> String {
    match p.to_ascii_lowercase().as_str() {
        "tcp" | "6" => "tcp".into(),
        "udp" | "17" => "udp".into(),
        "icmp" | "1" => "icmp".into(),
        "all" | "-1" => "-1".into(),
        other => other.to_string(),
    }
}

fn rule(protocol: &str, from: Option<i32>, to: Option<i32>, source: Source) -> Rule {
    let protocol = normalise_protocol(protocol);
    let ports = match protocol.as_str() {
        "tcp" | "udp" | "icmp" => Some((from.unwrap_or(-1), to.unwrap_or(-1))),
        _ => None,
    };
    Rule {
        protocol,
        ports,
        source,
    }
}

fn described(g: &SecurityGroup) -> BTreeMap<Rule, String> {
    let mut out = BTreeMap::new();
    for p in g.ip_permissions() {
        let proto = p.ip_protocol().unwrap_or("-1");
        for r in p.ip_ranges() {
            out.insert(
                rule(
                    proto,
                    p.from_port(),
                    p.to_port(),
                    Source::Cidr(r.cidr_ip().unwrap_or_default().to_string()),
                ),
                r.description().unwrap_or_default().to_string(),
            );
        }
        for r in p.ipv6_ranges() {
            out.insert(
                rule(
                    proto,
                    p.from_port(),
                    p.to_port(),
                    Source::Cidr6(ipv6_cidr(r.cidr_ipv6().unwrap_or_default())),
                ),
                r.description().unwrap_or_default().to_string(),
            );
        }
        for u in p.user_id_group_pairs() {
            out.insert(
                rule(
                    proto,
                    p.from_port(),
                    p.to_port(),
                    Source::Group(u.group_id().unwrap_or_default().to_string()),
                ),
                u.description().unwrap_or_default().to_string(),
            );
        }
    }
    out
}

fn permission(r: &Rule, description: &str) -> IpPermission {
    let mut p = IpPermission::builder().ip_protocol(&r.protocol);
    if let Some((from, to)) = r.ports {
        p = p.from_port(from).to_port(to);
    }
    let p = match &r.source {
        Source::Cidr(c) => {
            let mut range = IpRange::builder().cidr_ip(c);
            if !description.is_empty() {
                range = range.description(description);
            }
            p.ip_ranges(range.build())
        }
        Source::Cidr6(c) => {
            let mut range = Ipv6Range::builder().cidr_ipv6(c);
            if !description.is_empty() {
                range = range.description(description);
            }
            p.ipv6_ranges(range.build())
        }
        Source::Group(g) => {
            let mut pair = UserIdGroupPair::builder().group_id(g);
            if !description.is_empty() {
                pair = pair.description(description);
            }
            p.user_id_group_pairs(pair.build())
        }
    };
    p.build()
}

/// A CIDR block of either family as a rule's source.
fn cidr_source(raw: &str) -> Source {
    if raw.contains(':') {
        Source::Cidr6(ipv6_cidr(raw))
    } else {
        Source::Cidr(raw.to_string())
    }
}

/// The rules each role's group should hold, with their descriptions.
fn desired(s: &Scope<'_>, ids: &BTreeMap<Role, String>) -> BTreeMap<Role, BTreeMap<Rule, String>> {
    let spec = &s.plan.spec;
    let group = |r: Role| Source::Group(ids.get(&r).cloned().unwrap_or_default());
    let mut out: BTreeMap<Role, BTreeMap<Rule, String>> = BTreeMap::new();
    let mut add = |role: Role, r: Rule, d: &str| {
        out.entry(role).or_default().insert(r, d.to_string());
    };
    let bastion = spec.bastion.enabled;
    if bastion {
        for c in &spec.bastion.allowed_cidr_blocks {
            add(
                Role::Bastion,
                rule("tcp", Some(22), Some(22), cidr_source(c)),
                "SSH",
            );
        }
    }
    for src in [Role::ApiServerLb, Role::ControlPlane, Role::Node] {
        add(
            Role::ControlPlane,
            rule("tcp", Some(6443), Some(6443), group(src)),
            "Kubernetes API",
        );
    }
    add(
        Role::ControlPlane,
        rule("tcp", Some(2379), Some(2380), group(Role::ControlPlane)),
        "etcd",
    );
    for target in [Role::ControlPlane, Role::Node] {
        for src in [Role::ControlPlane, Role::Node] {
            add(
                target,
                rule("tcp", Some(10250), Some(10250), group(src)),
                "kubelet API",
            );
            for cni in &s.plan.cni_rules {
                add(
                    target,
                    rule(&cni.protocol, cni.from_port, cni.to_port, group(src)),
                    &cni.description,
                );
            }
        }
        if bastion {
            add(
                target,
                rule("tcp", Some(22), Some(22), group(Role::Bastion)),
                "SSH from the bastion",
            );
        }
    }
    let node_ports = &spec.network.node_port_ingress_rule_cidr_blocks;
    let dual_stack = spec.network.vpc.ipv6.is_some();
    let node_ports: Vec<Source> = if node_ports.is_empty() {
        // From anyone: over IPv6 too in a dual-stack cluster.
        let mut anyone = vec![Source::Cidr("0.0.0.0/0".into())];
        if dual_stack {
            anyone.push(Source::Cidr6("::/0".into()));
        }
        anyone
    } else {
        node_ports.iter().map(|c| cidr_source(c)).collect()
    };
    for source in node_ports {
        add(
            Role::Node,
            rule("tcp", Some(30000), Some(32767), source),
            "node port services",
        );
    }
    // The NAT gateways' addresses, known once each gateway has its own.
    let nat_ips: Vec<String> = s
        .status
        .nat_gateways
        .iter()
        .filter(|n| !n.public_ip.is_empty())
        .map(|n| format!("{}/32", n.public_ip))
        .collect();
    let lb = &spec.control_plane_load_balancer;
    for (role, rules) in [
        (
            Role::ControlPlane,
            &spec.additional_control_plane_ingress_rules,
        ),
        (Role::Node, &spec.additional_node_ingress_rules),
        (Role::ApiServerLb, &lb.ingress_rules),
    ] {
        for r in rules {
            for source in rule_sources(r, &group, &nat_ips) {
                add(
                    role,
                    rule(&r.protocol, r.from_port, r.to_port, source),
                    &r.description,
                );
            }
        }
    }
    // Inside the VPC: each of its ranges (machines may be in subnets of a secondary one),
    // and its IPv6 block in a dual-stack cluster.
    let vpc_ranges: Vec<String> = s
        .status
        .vpc_ranges()
        .chain(s.status.vpc_ipv6_cidr.iter().filter(|_| dual_stack))
        .cloned()
        .collect();
    let allowed: Vec<String> = if !lb.allowed_cidr_blocks.is_empty() || !lb.ingress_rules.is_empty()
    {
        // Restricted, but never against the cluster itself: nodes reach an internet-facing
        // API through their NAT gateways' addresses, an internal one from inside the VPC.
        let mut a = lb.allowed_cidr_blocks.clone();
        if lb.scheme == Scheme::Internal {
            a.extend(vpc_ranges);
        } else {
            a.extend(nat_ips);
        }
        a
    } else if lb.scheme == Scheme::Internal {
        vpc_ranges
    } else if dual_stack {
        vec!["0.0.0.0/0".into(), "::/0".into()]
    } else {
        vec!["0.0.0.0/0".into()]
    };
    for c in allowed {
        add(
            Role::ApiServerLb,
            rule("tcp", Some(6443), Some(6443), cidr_source(&c)),
            "Kubernetes API",
        );
    }
    out
}

/// The sources an ingress rule of the spec names: its blocks of either family, the groups of
/// the roles and of the user it names, the NAT gateways' addresses (`nat_ips`, /32 each).
fn rule_sources<'a>(
    r: &'a IngressRule,
    group: &'a impl Fn(Role) -> Source,
    nat_ips: &'a [String],
) -> impl Iterator<Item = Source> + 'a {
    r.cidr_blocks
        .iter()
        .map(|c| Source::Cidr(c.clone()))
        .chain(
            r.ipv6_cidr_blocks
                .iter()
                .map(|c| Source::Cidr6(ipv6_cidr(c))),
        )
        .chain(r.source_roles.iter().map(|src| group(*src)))
        .chain(
            r.source_security_group_ids
                .iter()
                .map(|id| Source::Group(id.clone())),
        )
        .chain(
            nat_ips
                .iter()
                .filter(|_| r.nat_gateways_ips_source)
                .map(|c| Source::Cidr(c.clone())),
        )
}

/// What keeps group `id` of the user's from serving in `vpc_id`, by `found` (what a describe
/// of it answered): it does not exist, or it is in another VPC.
pub(crate) fn not_in_vpc(found: &[SecurityGroup], id: &str, vpc_id: &str) -> Option<String> {
    match found.iter().find(|g| g.group_id() == Some(id)) {
        Some(g) if g.vpc_id() == Some(vpc_id) => None,
        Some(g) => Some(format!(
            "is in {}, not in the cluster's VPC {vpc_id}",
            g.vpc_id().unwrap_or("no VPC")
        )),
        None => Some("does not exist".into()),
    }
}

fn role_of(g: &SecurityGroup) -> Option<Role> {
    let r = ownership::ec2_tag(g.tags(), ownership::ROLE_KEY)?;
    Role::ALL.into_iter().find(|x| x.as_str() == r)
}

/// Reconciles the groups and their rules.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let owned: Vec<SecurityGroup> = if s.vpc_is_empty() {
        Vec::new()
    } else {
        s.ec2()
            .describe_security_groups()
            .filters(filter("vpc-id", &[&vpc_id]))
            .filters(s.owned_filter())
            .send()
            .await
            .map_err(aws("DescribeSecurityGroups"))?
            .security_groups
            .unwrap_or_default()
    };
    let overrides = s.plan.spec.security_group_overrides.clone();
    if !overrides.is_empty() {
        let ids: Vec<String> = overrides.values().cloned().collect();
        let found = match s
            .ec2()
            .describe_security_groups()
            .set_group_ids(Some(ids))
            .send()
            .await
            .map_err(aws("DescribeSecurityGroups"))
        {
            Ok(o) => o.security_groups.unwrap_or_default(),
            Err(e) if e.is_not_found() => {
                return Err(Error::PreExisting {
                    resource: "spec.securityGroupOverrides".into(),
                    problem: e.message,
                });
            }
            Err(e) => return Err(e.into()),
        };
        for (role, id) in &overrides {
            if let Some(problem) = not_in_vpc(&found, id, &vpc_id) {
                return Err(Error::PreExisting {
                    resource: format!("security group {id} ({})", role.as_str()),
                    problem,
                });
            }
        }
    }

    let mut ids: BTreeMap<Role, String> = BTreeMap::new();
    // Groups created by this reconcile: AWS may not show them for a moment.
    let mut fresh: BTreeSet<Role> = BTreeSet::new();
    let mut current: BTreeMap<Role, BTreeMap<Rule, String>> = BTreeMap::new();
    for role in Role::ALL {
        if let Some(id) = overrides.get(&role) {
            ids.insert(role, id.clone());
            s.status.security_groups.insert(
                role,
                Res {
                    id: id.clone(),
                    managed: false,
                },
            );
            continue;
        }
        let name = format!("{}-{}", s.name(), role.as_str());
        let id = match owned.iter().find(|g| role_of(g) == Some(role)) {
            Some(g) => {
                let id = g.group_id().unwrap_or_default().to_string();
                s.ensure_tags(
                    &id,
                    g.tags(),
                    ResourceType::SecurityGroup,
                    role.as_str(),
                    &name,
                )
                .await?;
                current.insert(role, described(g));
                id
            }
            None => {
                current.insert(role, BTreeMap::new());
                if !s.act(format!("create security group {name}")) {
                    format!("<new security group {}>", role.as_str())
                } else {
                    match s
                        .ec2()
                        .create_security_group()
                        .vpc_id(&vpc_id)
                        .group_name(&name)
                        .description(format!(
                            "Kubernetes cluster {}: {}",
                            s.name(),
                            role.as_str()
                        ))
                        .tag_specifications(s.tag_spec(
                            ResourceType::SecurityGroup,
                            role.as_str(),
                            &name,
                        ))
                        .customize()
                        .config_override(sent_once())
                        .send()
                        .await
                        .map_err(aws("CreateSecurityGroup"))
                    {
                        Ok(o) => {
                            fresh.insert(role);
                            o.group_id.unwrap_or_default()
                        }
                        Err(e) if e.class() == Class::Duplicate => {
                            if named_group_is_others(s, &vpc_id, &name).await? != Some(true) {
                                // The name is taken, yet no describe shows the group, or it
                                // shows this cluster's: the one it created a moment ago, not
                                // visible yet to the describe of its owned groups above.
                                return Err(Error::NotVisibleYet(format!(
                                    "security group {name} in {vpc_id}"
                                )));
                            }
                            return Err(Error::Conflict(format!(
                                "a security group named {name} already exists in {vpc_id} and \
                                 is not owned by cluster {}; name it in \
                                 spec.securityGroupOverrides.{} or remove it",
                                s.name(),
                                role.as_str()
                            )));
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        };
        ids.insert(role, id.clone());
        s.status
            .security_groups
            .insert(role, Res { id, managed: true });
    }

    let want = desired(s, &ids);
    let spec = &s.plan.spec;
    let wants_nat_ips = spec
        .additional_control_plane_ingress_rules
        .iter()
        .chain(&spec.additional_node_ingress_rules)
        .chain(&spec.control_plane_load_balancer.ingress_rules)
        .any(|r| r.nat_gateways_ips_source);
    if wants_nat_ips
        && (s.status.nat_gateways.is_empty()
            || s.status.nat_gateways.iter().any(|n| n.public_ip.is_empty()))
    {
        s.wait("the NAT gateways' addresses, sources of ingress rules".into());
    }
    for role in Role::ALL {
        // The cloud controller manager owns the `lb` group's rules.
        if overrides.contains_key(&role) || role == Role::Lb {
            continue;
        }
        let Some(id) = ids.get(&role).cloned() else {
            continue;
        };
        let have = current.remove(&role).unwrap_or_default();
        let wanted = want.get(&role).cloned().unwrap_or_default();
        let have_keys: BTreeSet<&Rule> = have.keys().collect();
        let want_keys: BTreeSet<&Rule> = wanted.keys().collect();
        let revoke: Vec<IpPermission> = have_keys
            .difference(&want_keys)
            .map(|r| permission(r, ""))
            .collect();
        let authorize: Vec<IpPermission> = want_keys
            .difference(&have_keys)
            .map(|r| permission(r, wanted.get(*r).map_or("", String::as_str)))
            .collect();
        if !revoke.is_empty()
            && !is_new(&id)
            && s.act(format!("revoke {} rules of {id}", revoke.len()))
        {
            s.ec2()
                .revoke_security_group_ingress()
                .group_id(&id)
                .set_ip_permissions(Some(revoke))
                .send()
                .await
                .map_err(aws("RevokeSecurityGroupIngress"))?;
        }
        if !authorize.is_empty()
            && s.act(format!(
                "authorize {} rules on {} ({})",
                authorize.len(),
                id,
                role.as_str()
            ))
        {
            let ec2 = s.ec2().clone();
            let call = || {
                ec2.authorize_security_group_ingress()
                    .group_id(&id)
                    .set_ip_permissions(Some(authorize.clone()))
                    .send()
            };
            // A rule may name any group of this cluster, so any new one may not show yet.
            let answer = if fresh.is_empty() {
                call().await.map_err(aws("AuthorizeSecurityGroupIngress"))
            } else {
                until_visible(s.clients, || async {
                    call().await.map_err(aws("AuthorizeSecurityGroupIngress"))
                })
                .await
            };
            match answer {
                Ok(_) => {}
                // Rules read as missing are there: an authorize whose answer was lost (and
                // retried), or rules AWS does not show yet. Look again.
                Err(e) if e.class() == Class::Duplicate => {
                    return Err(Error::NotVisibleYet(format!("the rules of {id}")));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// Whether the group a describe shows named `name` in `vpc_id` is someone else's (not this
/// cluster's, by its tags); `None` when no describe shows one.
async fn named_group_is_others(
    s: &Scope<'_>,
    vpc_id: &str,
    name: &str,
) -> Result<Option<bool>, Error> {
    let out = s
        .ec2()
        .describe_security_groups()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter("group-name", &[name]))
        .send()
        .await
        .map_err(aws("DescribeSecurityGroups"))?;
    Ok(out
        .security_groups()
        .first()
        .map(|g| !ownership::is_managed(s.name(), ownership::ec2_pairs(g.tags()))))
}

/// Revokes the ingress rules of the cluster's own groups (they reference each other), then
/// deletes them; a group still used by an instance or interface is waited for.
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let owned = s
        .ec2()
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeSecurityGroups"))?
        .security_groups
        .unwrap_or_default();
    for g in &owned {
        let id = g.group_id().unwrap_or_default().to_string();
        let rules: Vec<IpPermission> = described(g).keys().map(|r| permission(r, "")).collect();
        if rules.is_empty() || !s.act(format!("revoke the rules of {id}")) {
            continue;
        }
        match s
            .ec2()
            .revoke_security_group_ingress()
            .group_id(&id)
            .set_ip_permissions(Some(rules))
            .send()
            .await
            .map_err(aws("RevokeSecurityGroupIngress"))
        {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    for g in &owned {
        let id = g.group_id().unwrap_or_default().to_string();
        delete_group(s, &id, "delete security group").await?;
    }
    // The groups the cloud controller manager made for its Service load balancers (deleted
    // in the load-balancer step, before this one): tagged with the Kubernetes cluster tag,
    // not the provider's. Rules of the provider's groups that named them went above.
    let key = ownership::kubernetes_cluster_key(s.name());
    let ccm: Vec<SecurityGroup> = s
        .ec2()
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter(&format!("tag:{key}"), &[ownership::OWNED]))
        .send()
        .await
        .map_err(aws("DescribeSecurityGroups"))?
        .security_groups
        .unwrap_or_default()
        .into_iter()
        .filter(|g| !ownership::is_managed(s.name(), ownership::ec2_pairs(g.tags())))
        .collect();
    for g in ccm {
        let id = g.group_id().unwrap_or_default().to_string();
        delete_group(s, &id, "delete the Service load balancer group").await?;
    }
    Ok(())
}

/// Deletes group `id` (announced as `what`), reading AWS's answer by the delete policy.
async fn delete_group(s: &mut Scope<'_>, id: &str, what: &str) -> Result<(), Error> {
    if !s.act(format!("{what} {id}")) {
        return Ok(());
    }
    let r = s
        .ec2()
        .delete_security_group()
        .group_id(id)
        .send()
        .await
        .map_err(aws("DeleteSecurityGroup"));
    s.settle(&format!("security group {id}"), r)?;
    Ok(())
}
