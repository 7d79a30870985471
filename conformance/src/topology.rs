//! The shape of what a cluster owns, read back through Describe calls and compared with what
//! its spec says, independently of how the provider computes it: counting resources by kind
//! (the census) cannot tell a private subnet routed to the internet gateway from one routed
//! to its zone's NAT gateway.
//!
//! Checked, for what the cluster owns (pre-existing resources are the user's, and another
//! property checks they are untouched):
//! - each owned subnet is associated with one owned route table, whose default route goes to
//!   the VPC's internet gateway (public subnets) or to the NAT gateway of the subnet's zone
//!   (private ones; the single NAT gateway when the spec asks for one);
//! - each NAT gateway sits in a public subnet of the cluster, one per zone with private
//!   subnets (or one in all);
//! - each owned security group holds exactly the ingress rules its role is specified to have
//!   (protocol, ports and source), each with a description;
//! - an owned load balancer has the scheme, the one TCP 6443 listener, the health check, the
//!   subnets (one per zone: public ones when internet-facing, private ones when internal) and
//!   the group the spec says, and every live control-plane machine of the cluster registered;
//! - an owned VPC has DNS support and DNS hostnames on, and holds exactly the secondary
//!   IPv4 ranges the spec names (each `associated`), and an empty `default` security group
//!   when the spec asks for one;
//! - a dual-stack cluster's own VPC holds one IPv6 block (a user's VPC at least one, the
//!   first used), each owned subnet a distinct /64 of it (assigning IPv6 addresses on
//!   launch), its one egress-only internet gateway is in the VPC (none of its own when the
//!   spec names the user's), and each owned subnet's table routes ::/0 to the internet
//!   gateway (public) or the egress-only one (private), and no other IPv6 route but the
//!   VPC's local one; a cluster that is not dual stack holds no IPv6 block in its own VPC
//!   and no egress-only gateway;
//! - every live machine carries exactly one group with `kubernetes.io/cluster/<name>`: the
//!   `lb` group (whose rules are the cloud controller manager's, not checked), and of the
//!   owned groups only that one carries it;
//! - the cluster's own bastion, when it runs, sits in a public subnet of the cluster with a
//!   public address (also in a pre-existing subnet that gives none by default) and the
//!   bastion group;
//! - each owned subnet launches instances with the hostname type the spec names, if any, and
//!   every live machine in one has it;
//! - each owned subnet carries the tags a cloud controller manager looks for:
//!   `kubernetes.io/cluster/<name>=owned`, and `kubernetes.io/role/elb=1` (public) or
//!   `kubernetes.io/role/internal-elb=1` (private), never both; in a Local Zone or a
//!   Wavelength Zone neither role tag (no balancer goes there), its public subnets routing
//!   through a carrier gateway in a Wavelength Zone, its private ones through the NAT gateway
//!   of their Local Zone (when it has a public subnet of the cluster) or of their parent zone;
//! - every owned network resource (VPC, subnets, gateways, addresses, route tables, groups,
//!   the load balancer) carries the spec's `additionalTags`, with the spec's values, and each
//!   owned subnet its own `tags` from the spec (which win);
//! - the load balancer's health check is the spec's in full (target, interval, timeout,
//!   thresholds; kubeadm's defaults otherwise), and its cross-zone and idle-timeout
//!   attributes are the spec's;
//! - every live machine's user data is the cloud-init and kubeadm configuration of its role,
//!   and the machines agree on the token, CA and certificate key ([`crate::user_data`]).

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::{Filter, SecurityGroup};
use provider::ownership::{self, ROLE_KEY};
use provider::spec::{Cluster, Role, Scheme};

use crate::{Failure, aws_failure};

/// An EC2 filter of `name` matching any of `values`.
pub(crate) fn f(name: &str, values: &[&str]) -> Filter {
    let mut b = Filter::builder().name(name);
    for v in values {
        b = b.values(*v);
    }
    b.build()
}

/// The name of `cluster`'s API load balancer: the existing one the spec names, or the one
/// the provider makes (`provider::spec::load_balancer_name`).
pub(crate) fn api_load_balancer_name(cluster: &Cluster) -> String {
    let lb = &cluster.spec.control_plane_load_balancer;
    lb.existing_name.clone().unwrap_or_else(|| {
        provider::spec::load_balancer_name(&cluster.metadata.name, lb.name.as_deref())
    })
}

/// The API load balancer's idle timeout when the spec gives none: kubectl's watches and
/// exec sessions stay open for long, so the provider asks for 600 s, not AWS's 60.
const IDLE_TIMEOUT: i32 = 600;

fn fail(message: String) -> Failure {
    Failure::Check(format!("topology: {message}"))
}

/// One ingress rule as the oracle states it: protocol, ports, source (a CIDR or a group id).
type Rule = (String, Option<(i32, i32)>, String);

fn rule(p: &str, from: Option<i32>, to: Option<i32>, source: &str) -> Rule {
    // Protocol names and numbers compare equal as AWS answers them.
    let p = provider::cluster::security_group::normalise_protocol(p);
    let ports = matches!(p.as_str(), "tcp" | "udp" | "icmp")
        .then(|| (from.unwrap_or(-1), to.unwrap_or(-1)));
    (p, ports, source.to_string())
}

/// An IPv6 CIDR block in one spelling, however the spec or AWS writes it.
/// A CIDR block of either family as AWS spells it.
fn either_family(raw: &str) -> String {
    if raw.contains(':') {
        ipv6_cidr(raw)
    } else {
        raw.to_string()
    }
}

fn ipv6_cidr(raw: &str) -> String {
    provider::cluster::security_group::ipv6_cidr(raw)
}

/// The ingress rules of an owned group, as AWS describes them.
fn rules_of(g: &SecurityGroup) -> BTreeSet<Rule> {
    let mut out = BTreeSet::new();
    for p in g.ip_permissions() {
        let proto = p.ip_protocol().unwrap_or("-1");
        for r in p.ip_ranges() {
            out.insert(rule(
                proto,
                p.from_port(),
                p.to_port(),
                r.cidr_ip().unwrap_or_default(),
            ));
        }
        for r in p.ipv6_ranges() {
            out.insert(rule(
                proto,
                p.from_port(),
                p.to_port(),
                &ipv6_cidr(r.cidr_ipv6().unwrap_or_default()),
            ));
        }
        for u in p.user_id_group_pairs() {
            out.insert(rule(
                proto,
                p.from_port(),
                p.to_port(),
                u.group_id().unwrap_or_default(),
            ));
        }
    }
    out
}

/// The rules each role is specified to hold: the reference provider's rules by role
/// (`../shared/research/reference-provider-capa.md`, restated here as the suite's own
/// oracle), the CNI's (calico's BGP and IP-in-IP unless the spec names others), and the
/// spec's additional rules.
fn specified(
    cluster: &Cluster,
    groups: &BTreeMap<Role, String>,
    vpc_ranges: &[String],
    nat_ips: &[String],
) -> BTreeMap<Role, BTreeSet<Rule>> {
    // `vpc_ranges`: the VPC's IPv4 ranges, and its IPv6 block in a dual-stack cluster.
    let spec = &cluster.spec;
    let id = |r: Role| groups.get(&r).cloned().unwrap_or_default();
    let mut out: BTreeMap<Role, BTreeSet<Rule>> = BTreeMap::new();
    let mut add = |role: Role, r: Rule| {
        out.entry(role).or_default().insert(r);
    };
    if spec.bastion.enabled {
        for c in &spec.bastion.allowed_cidr_blocks {
            add(
                Role::Bastion,
                rule("tcp", Some(22), Some(22), &either_family(c)),
            );
        }
    }
    for src in [Role::ApiServerLb, Role::ControlPlane, Role::Node] {
        add(
            Role::ControlPlane,
            rule("tcp", Some(6443), Some(6443), &id(src)),
        );
    }
    add(
        Role::ControlPlane,
        rule("tcp", Some(2379), Some(2380), &id(Role::ControlPlane)),
    );
    let cni: Vec<(String, Option<i32>, Option<i32>)> = match &spec.cni_ingress_rules {
        Some(rules) => rules
            .iter()
            .map(|r| (r.protocol.clone(), r.from_port, r.to_port))
            .collect(),
        None => vec![
            ("tcp".into(), Some(179), Some(179)),
            ("4".into(), None, None),
        ],
    };
    for target in [Role::ControlPlane, Role::Node] {
        for src in [Role::ControlPlane, Role::Node] {
            add(target, rule("tcp", Some(10250), Some(10250), &id(src)));
            for (p, from, to) in &cni {
                add(target, rule(p, *from, *to, &id(src)));
            }
        }
        if spec.bastion.enabled {
            add(target, rule("tcp", Some(22), Some(22), &id(Role::Bastion)));
        }
    }
    // Node ports: from the spec's blocks, or from anywhere.
    let node_ports = &spec.network.node_port_ingress_rule_cidr_blocks;
    let dual_stack = spec.network.vpc.ipv6.is_some();
    if node_ports.is_empty() {
        add(
            Role::Node,
            rule("tcp", Some(30000), Some(32767), "0.0.0.0/0"),
        );
        if dual_stack {
            add(Role::Node, rule("tcp", Some(30000), Some(32767), "::/0"));
        }
    }
    for c in node_ports {
        add(
            Role::Node,
            rule("tcp", Some(30000), Some(32767), &either_family(c)),
        );
    }
    let lb = &spec.control_plane_load_balancer;
    for (role, extra) in [
        (
            Role::ControlPlane,
            &spec.additional_control_plane_ingress_rules,
        ),
        (Role::Node, &spec.additional_node_ingress_rules),
        (Role::ApiServerLb, &lb.ingress_rules),
    ] {
        for r in extra {
            for c in &r.cidr_blocks {
                add(role, rule(&r.protocol, r.from_port, r.to_port, c));
            }
            for c in &r.ipv6_cidr_blocks {
                add(
                    role,
                    rule(&r.protocol, r.from_port, r.to_port, &ipv6_cidr(c)),
                );
            }
            for src in &r.source_roles {
                add(role, rule(&r.protocol, r.from_port, r.to_port, &id(*src)));
            }
            for g in &r.source_security_group_ids {
                add(role, rule(&r.protocol, r.from_port, r.to_port, g));
            }
            if r.nat_gateways_ips_source {
                for ip in nat_ips {
                    add(
                        role,
                        rule(&r.protocol, r.from_port, r.to_port, &format!("{ip}/32")),
                    );
                }
            }
        }
    }
    let allowed: Vec<String> = if !lb.allowed_cidr_blocks.is_empty() || !lb.ingress_rules.is_empty()
    {
        // The cluster itself is never locked out: its NAT gateways' addresses (nodes reach an
        // internet-facing API through them), or the VPC's every range (internal).
        let mut a = lb.allowed_cidr_blocks.clone();
        if lb.scheme == Scheme::Internal {
            a.extend(vpc_ranges.iter().cloned());
        } else {
            a.extend(nat_ips.iter().map(|ip| format!("{ip}/32")));
        }
        a
    } else if lb.scheme == Scheme::Internal {
        vpc_ranges.to_vec()
    } else if dual_stack {
        vec!["0.0.0.0/0".into(), "::/0".into()]
    } else {
        vec!["0.0.0.0/0".into()]
    };
    for c in allowed {
        add(
            Role::ApiServerLb,
            rule("tcp", Some(6443), Some(6443), &either_family(&c)),
        );
    }
    out
}

/// A subnet of the cluster: id, zone, public; its zone's type and parent (an edge zone's).
#[derive(Debug, Clone)]
struct Net {
    id: String,
    zone: String,
    public: bool,
    owned: bool,
    zone_type: String,
    parent: Option<String>,
}

impl Net {
    fn is_edge(&self) -> bool {
        self.zone_type != "availability-zone"
    }

    fn is_wavelength(&self) -> bool {
        self.zone_type == "wavelength-zone"
    }
}

/// The zone whose NAT gateway serves the private subnet `n` among `nets`: its own, or for
/// one in an edge zone without a public subnet of the cluster there (or in a Wavelength Zone,
/// where none runs) its parent availability zone's.
fn nat_zone(n: &Net, nets: &[Net]) -> String {
    let own_public =
        !n.is_wavelength() && nets.iter().any(|p| p.owned && p.public && p.zone == n.zone);
    if !n.is_edge() || own_public {
        n.zone.clone()
    } else {
        n.parent.clone().unwrap_or_else(|| n.zone.clone())
    }
}

/// Checks the topology of `cluster` in the target (see the module's documentation).
pub async fn topology(clients: &provider::Clients, cluster: &Cluster) -> Result<(), Failure> {
    let ec2 = &clients.ec2;
    let name = &cluster.metadata.name;
    let spec = &cluster.spec;
    let owned = || f(&format!("tag:{}", ownership::cluster_key(name)), &["owned"]);

    // The VPC: named in the spec, or the cluster's own.
    let vpcs = match &spec.network.vpc.id {
        Some(id) => ec2.describe_vpcs().vpc_ids(id).send().await,
        None => ec2.describe_vpcs().filters(owned()).send().await,
    }
    .map_err(aws_failure("DescribeVpcs"))?;
    let [vpc] = vpcs.vpcs() else {
        return Err(fail(format!("{} VPCs, not one", vpcs.vpcs().len())));
    };
    let vpc_id = vpc.vpc_id().unwrap_or_default().to_string();
    // Its ranges, the primary one first, as they are associated.
    let vpc_ranges: Vec<String> = vpc
        .cidr_block()
        .into_iter()
        .chain(
            vpc.cidr_block_association_set()
                .iter()
                .filter(|a| {
                    a.cidr_block_state().and_then(|s| s.state())
                        == Some(&aws_sdk_ec2::types::VpcCidrBlockStateCode::Associated)
                })
                .filter_map(|a| a.cidr_block())
                .filter(|c| Some(*c) != vpc.cidr_block()),
        )
        .map(String::from)
        .collect();
    // Its IPv6 block: one, associated, in a dual-stack cluster's own VPC; none in a VPC of
    // its own that is not.
    let ipv6_blocks: Vec<ipnet::Ipv6Net> = vpc
        .ipv6_cidr_block_association_set()
        .iter()
        .filter(|a| {
            a.ipv6_cidr_block_state().and_then(|s| s.state())
                == Some(&aws_sdk_ec2::types::VpcCidrBlockStateCode::Associated)
        })
        .filter_map(|a| a.ipv6_cidr_block()?.parse().ok())
        .collect();
    let dual_stack = spec.network.vpc.ipv6.is_some();
    let vpc_ipv6 = match (dual_stack, ipv6_blocks.as_slice()) {
        // A VPC of the user's holds what it holds: a dual-stack cluster uses its first block.
        (true, [first, ..]) if spec.network.vpc.id.is_some() => Some(*first),
        (true, []) if spec.network.vpc.id.is_some() => {
            return Err(fail(format!(
                "the user's VPC {vpc_id} of a dual-stack cluster holds no IPv6 block"
            )));
        }
        _ if spec.network.vpc.id.is_some() => None,
        (true, [one]) => Some(*one),
        (false, []) => None,
        (_, held) => {
            return Err(fail(format!(
                "VPC {vpc_id} holds the IPv6 blocks {held:?}; the spec {} IPv6",
                if dual_stack {
                    "asks for"
                } else {
                    "does not ask for"
                }
            )));
        }
    };
    if spec.network.vpc.id.is_none() {
        let held: BTreeSet<&str> = vpc_ranges.iter().skip(1).map(String::as_str).collect();
        let named: BTreeSet<&str> = spec
            .network
            .vpc
            .secondary_cidr_blocks
            .iter()
            .map(|b| b.ipv4_cidr_block.as_str())
            .collect();
        if held != named {
            return Err(fail(format!(
                "VPC {vpc_id} holds the secondary ranges {held:?}, the spec names {named:?}"
            )));
        }
        if spec.network.vpc.empty_default_security_group {
            let default = ec2
                .describe_security_groups()
                .filters(f("vpc-id", &[&vpc_id]))
                .filters(f("group-name", &["default"]))
                .send()
                .await
                .map_err(aws_failure("DescribeSecurityGroups"))?;
            for g in default.security_groups() {
                if !g.ip_permissions().is_empty() || !g.ip_permissions_egress().is_empty() {
                    return Err(fail(format!(
                        "VPC {vpc_id}: its default group {:?} still holds rules (in {:?}, out \
                         {:?})",
                        g.group_id(),
                        g.ip_permissions(),
                        g.ip_permissions_egress()
                    )));
                }
            }
        }
    }

    // A VPC the cluster made resolves names: DNS support and DNS hostnames on (a brought
    // one is the user's, as it is).
    if spec.network.vpc.id.is_none() {
        for attribute in [
            aws_sdk_ec2::types::VpcAttributeName::EnableDnsSupport,
            aws_sdk_ec2::types::VpcAttributeName::EnableDnsHostnames,
        ] {
            let a = ec2
                .describe_vpc_attribute()
                .vpc_id(&vpc_id)
                .attribute(attribute.clone())
                .send()
                .await
                .map_err(aws_failure("DescribeVpcAttribute"))?;
            let on = a
                .enable_dns_support()
                .or(a.enable_dns_hostnames())
                .and_then(|v| v.value())
                .unwrap_or(false);
            if !on {
                return Err(fail(format!("VPC {vpc_id}: {} is off", attribute.as_str())));
            }
        }
    }

    // The zones' types and parents: availability zones, Local Zones, Wavelength Zones.
    let zone_list = ec2
        .describe_availability_zones()
        .all_availability_zones(true)
        .send()
        .await
        .map_err(aws_failure("DescribeAvailabilityZones"))?;
    let zone_of = |name: &str| -> (String, Option<String>) {
        zone_list
            .availability_zones()
            .iter()
            .find(|z| z.zone_name() == Some(name))
            .map(|z| {
                (
                    z.zone_type().unwrap_or("availability-zone").to_string(),
                    z.parent_zone_name().map(String::from),
                )
            })
            .unwrap_or_else(|| ("availability-zone".to_string(), None))
    };
    let net = |id: &str, zone: &str, public: bool, owned: bool| {
        let (zone_type, parent) = zone_of(zone);
        Net {
            id: id.to_string(),
            zone: zone.to_string(),
            public,
            owned,
            zone_type,
            parent,
        }
    };
    // The cluster's subnets: its own, and those the spec names.
    let mut nets: Vec<Net> = Vec::new();
    let mut subnet_blocks: BTreeSet<ipnet::Ipv6Net> = BTreeSet::new();
    let own = ec2
        .describe_subnets()
        .filters(owned())
        .filters(f("vpc-id", &[&vpc_id]))
        .send()
        .await
        .map_err(aws_failure("DescribeSubnets"))?;
    for s in own.subnets() {
        if let Some(t) = &spec.network.vpc.private_dns_hostname_type_on_launch {
            let held = s
                .private_dns_name_options_on_launch()
                .and_then(|o| o.hostname_type())
                .map(|h| h.as_str());
            if held != Some(t.as_str()) {
                return Err(fail(format!(
                    "subnet {:?} launches instances with {held:?} hostnames, the spec says {t}",
                    s.subnet_id()
                )));
            }
        }
        let role = ownership::ec2_tag(s.tags(), ROLE_KEY);
        let public = match role {
            Some("public") => true,
            Some("private") => false,
            other => {
                return Err(fail(format!(
                    "subnet {:?} has the role {other:?}",
                    s.subnet_id()
                )));
            }
        };
        let k8s = |key: &str| ownership::ec2_tag(s.tags(), key);
        let this = net(
            s.subnet_id().unwrap_or_default(),
            s.availability_zone().unwrap_or_default(),
            public,
            true,
        );
        // An edge zone's subnet carries neither load balancer role tag: no balancer of the
        // cloud controller manager goes there.
        if this.is_edge() {
            let tagged: Vec<&str> = ["kubernetes.io/role/elb", "kubernetes.io/role/internal-elb"]
                .into_iter()
                .filter(|k| k8s(k).is_some())
                .collect();
            if k8s(&format!("kubernetes.io/cluster/{name}")) != Some("owned") || !tagged.is_empty()
            {
                return Err(fail(format!(
                    "the subnet {:?} in the {} {} carries {tagged:?} or lacks \
                     kubernetes.io/cluster/{name}=owned: {:?}",
                    s.subnet_id(),
                    this.zone_type,
                    this.zone,
                    s.tags()
                )));
            }
        }
        let (elb, other) = if public {
            ("kubernetes.io/role/elb", "kubernetes.io/role/internal-elb")
        } else {
            ("kubernetes.io/role/internal-elb", "kubernetes.io/role/elb")
        };
        if !this.is_edge()
            && (k8s(&format!("kubernetes.io/cluster/{name}")) != Some("owned")
                || k8s(elb) != Some("1")
                || k8s(other).is_some())
        {
            return Err(fail(format!(
                "the {} subnet {:?} lacks the cloud controller manager's tags \
                 (kubernetes.io/cluster/{name}=owned, {elb}=1, no {other}): {:?}",
                role.unwrap_or_default(),
                s.subnet_id(),
                s.tags()
            )));
        }
        if let Some(block) = vpc_ipv6 {
            let held: Vec<ipnet::Ipv6Net> = s
                .ipv6_cidr_block_association_set()
                .iter()
                .filter(|a| {
                    a.ipv6_cidr_block_state().and_then(|st| st.state())
                        == Some(&aws_sdk_ec2::types::SubnetCidrBlockStateCode::Associated)
                })
                .filter_map(|a| a.ipv6_cidr_block()?.parse().ok())
                .collect();
            let ok = matches!(held.as_slice(), [c] if c.prefix_len() == 64 && block.contains(c));
            if !ok || s.assign_ipv6_address_on_creation() != Some(true) {
                return Err(fail(format!(
                    "subnet {:?} of a dual-stack cluster holds the IPv6 blocks {held:?} (one /64 \
                     of {block} wanted) and assigns IPv6 addresses on launch: {:?}",
                    s.subnet_id(),
                    s.assign_ipv6_address_on_creation()
                )));
            }
            if let Some(c) = held.first()
                && !subnet_blocks.insert(*c)
            {
                return Err(fail(format!("two subnets hold {c}")));
            }
        }
        nets.push(this);
    }
    // The spec's tags of each subnet alone, by the id of the owned subnet of its CIDR.
    let subnet_tags: BTreeMap<String, BTreeMap<String, String>> = own
        .subnets()
        .iter()
        .filter_map(|s| {
            let cidr = s.cidr_block()?;
            let named = spec
                .network
                .subnets
                .iter()
                .find(|n| n.cidr_block.as_deref() == Some(cidr))?;
            let id = s.subnet_id()?.to_string();
            (!named.tags.is_empty()).then(|| (id, named.tags.clone()))
        })
        .collect();
    let named: Vec<(&str, bool)> = spec
        .network
        .subnets
        .iter()
        .filter_map(|s| s.id.as_deref().map(|id| (id, s.public)))
        .collect();
    if !named.is_empty() {
        let ids: Vec<String> = named.iter().map(|(id, _)| id.to_string()).collect();
        let d = ec2
            .describe_subnets()
            .set_subnet_ids(Some(ids))
            .send()
            .await
            .map_err(aws_failure("DescribeSubnets"))?;
        for s in d.subnets() {
            let id = s.subnet_id().unwrap_or_default();
            let public = named.iter().any(|(n, p)| *n == id && *p);
            nets.push(net(
                id,
                s.availability_zone().unwrap_or_default(),
                public,
                false,
            ));
        }
    }
    // An existing VPC named without subnets lends its own: public when its route table (its
    // own, else the main one) sends 0.0.0.0/0 to an internet gateway.
    if spec.network.vpc.id.is_some() && spec.network.subnets.is_empty() {
        let all = ec2
            .describe_subnets()
            .filters(f("vpc-id", &[&vpc_id]))
            .send()
            .await
            .map_err(aws_failure("DescribeSubnets"))?;
        let tables = ec2
            .describe_route_tables()
            .filters(f("vpc-id", &[&vpc_id]))
            .send()
            .await
            .map_err(aws_failure("DescribeRouteTables"))?;
        let internet = |t: &aws_sdk_ec2::types::RouteTable| {
            t.routes().iter().any(|r| {
                r.destination_cidr_block() == Some("0.0.0.0/0")
                    && r.gateway_id().is_some_and(|g| g.starts_with("igw-"))
            })
        };
        let main = tables
            .route_tables()
            .iter()
            .find(|t| t.associations().iter().any(|a| a.main() == Some(true)));
        for sn in all.subnets() {
            let id = sn.subnet_id().unwrap_or_default();
            let own = tables
                .route_tables()
                .iter()
                .find(|t| t.associations().iter().any(|a| a.subnet_id() == Some(id)));
            nets.push(net(
                id,
                sn.availability_zone().unwrap_or_default(),
                own.or(main).is_some_and(internet),
                false,
            ));
        }
    }
    let zones_of = |public: bool| -> BTreeSet<String> {
        nets.iter()
            .filter(|n| n.public == public)
            .map(|n| n.zone.clone())
            .collect()
    };
    // A zone may have public subnets only (the load balancer's, say); a zone with private
    // subnets has a public one for its NAT gateway (an edge zone's are served from its
    // parent).
    for n in nets.iter().filter(|n| n.owned && !n.public && !n.is_edge()) {
        if !zones_of(true).contains(&n.zone) {
            return Err(fail(format!(
                "zone {} has a private subnet and no public one",
                n.zone
            )));
        }
    }

    // The internet gateway attached to the VPC, and the cluster's NAT gateways.
    let igws = ec2
        .describe_internet_gateways()
        .filters(f("attachment.vpc-id", &[&vpc_id]))
        .send()
        .await
        .map_err(aws_failure("DescribeInternetGateways"))?;
    let igw: BTreeSet<String> = igws
        .internet_gateways()
        .iter()
        .filter_map(|g| g.internet_gateway_id().map(String::from))
        .collect();
    let nats = ec2
        .describe_nat_gateways()
        .filter(owned())
        .filter(f("state", &["pending", "available"]))
        .send()
        .await
        .map_err(aws_failure("DescribeNatGateways"))?;
    let mut nat_by_zone: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in nats.nat_gateways() {
        let subnet = n.subnet_id().unwrap_or_default();
        let Some(home) = nets.iter().find(|s| s.id == subnet && s.public) else {
            return Err(fail(format!(
                "NAT gateway {:?} is not in a public subnet of the cluster",
                n.nat_gateway_id()
            )));
        };
        nat_by_zone
            .entry(home.zone.clone())
            .or_default()
            .push(n.nat_gateway_id().unwrap_or_default().to_string());
    }
    let owned_private = nets.iter().any(|n| n.owned && !n.public);
    if owned_private {
        let count: usize = nat_by_zone.values().map(Vec::len).sum();
        if spec.network.nat_gateway_per_zone {
            let private_zones: BTreeSet<String> = nets
                .iter()
                .filter(|n| n.owned && !n.public)
                .map(|n| nat_zone(n, &nets))
                .collect();
            let nat_zones: BTreeSet<String> = nat_by_zone.keys().cloned().collect();
            if nat_zones != private_zones || count != private_zones.len() {
                return Err(fail(format!(
                    "NAT gateways by zone {nat_by_zone:?}, private subnets in {private_zones:?}"
                )));
            }
        } else if count != 1 {
            return Err(fail(format!("{count} NAT gateways, not one")));
        }
    }

    // The cluster's egress-only internet gateways in the VPC: one in a dual-stack cluster
    // with private subnets of its own that names none of the user's, else none.
    let named_eigw = spec
        .network
        .vpc
        .ipv6
        .as_ref()
        .and_then(|v| v.egress_only_internet_gateway_id.clone());
    let eigws = ec2
        .describe_egress_only_internet_gateways()
        .filters(owned())
        .send()
        .await
        .map_err(aws_failure("DescribeEgressOnlyInternetGateways"))?;
    let egress_only: BTreeSet<String> = eigws
        .egress_only_internet_gateways()
        .iter()
        .filter(|g| {
            g.attachments()
                .iter()
                .any(|a| a.vpc_id() == Some(vpc_id.as_str()))
        })
        .filter_map(|g| g.egress_only_internet_gateway_id().map(String::from))
        .collect();
    let wanted_eigws = usize::from(dual_stack && owned_private && named_eigw.is_none());
    if egress_only.len() != wanted_eigws
        || eigws.egress_only_internet_gateways().len() != wanted_eigws
    {
        return Err(fail(format!(
            "egress-only internet gateways {:?} (in the VPC: {egress_only:?}), {wanted_eigws} \
             wanted",
            eigws.egress_only_internet_gateways()
        )));
    }
    // The private subnets' way out over IPv6: the cluster's own gateway, or the user's.
    let egress_only = match named_eigw {
        Some(id) => BTreeSet::from([id]),
        None => egress_only,
    };

    // The VPC's carrier gateways: the way out of Wavelength Zones' public subnets.
    let carriers: BTreeSet<String> = ec2
        .describe_carrier_gateways()
        .filters(f("vpc-id", &[&vpc_id]))
        .filters(f("state", &["available"]))
        .send()
        .await
        .map_err(aws_failure("DescribeCarrierGateways"))?
        .carrier_gateways()
        .iter()
        .filter_map(|g| g.carrier_gateway_id().map(String::from))
        .collect();

    // Each owned subnet's route table and default route.
    for n in nets.iter().filter(|n| n.owned) {
        let rts = ec2
            .describe_route_tables()
            .filters(f("association.subnet-id", &[&n.id]))
            .send()
            .await
            .map_err(aws_failure("DescribeRouteTables"))?;
        let [rt] = rts.route_tables() else {
            return Err(fail(format!(
                "subnet {} is associated with {} route tables, not one",
                n.id,
                rts.route_tables().len()
            )));
        };
        if !provider::ownership::is_managed(name, ownership::ec2_pairs(rt.tags())) {
            return Err(fail(format!(
                "subnet {} is associated with a route table the cluster does not own",
                n.id
            )));
        }
        let default: Vec<_> = rt
            .routes()
            .iter()
            .filter(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
            .collect();
        let [route] = default.as_slice() else {
            return Err(fail(format!(
                "route table of subnet {} has {} default routes",
                n.id,
                default.len()
            )));
        };
        let ok = if n.public && n.is_wavelength() {
            // A Wavelength Zone's public subnet goes out through a carrier gateway of the VPC.
            route
                .carrier_gateway_id()
                .is_some_and(|g| carriers.contains(g))
        } else if n.public {
            route.gateway_id().is_some_and(|g| igw.contains(g))
        } else {
            let wanted: Vec<String> = if spec.network.nat_gateway_per_zone {
                nat_by_zone
                    .get(&nat_zone(n, &nets))
                    .cloned()
                    .unwrap_or_default()
            } else {
                nat_by_zone.values().flatten().cloned().collect()
            };
            route
                .nat_gateway_id()
                .is_some_and(|g| wanted.iter().any(|w| w == g))
        };
        if dual_stack {
            // IPv6 out: public subnets to the internet gateway, private ones to the
            // cluster's egress-only gateway; nothing else but the VPC's local route.
            let v6: Vec<(&str, Option<&str>)> = rt
                .routes()
                .iter()
                .filter_map(|r| {
                    let target = r
                        .gateway_id()
                        .or(r.egress_only_internet_gateway_id())
                        .or(r.nat_gateway_id());
                    Some((r.destination_ipv6_cidr_block()?, target))
                })
                .collect();
            let any = v6.iter().find(|(d, _)| *d == "::/0").and_then(|(_, t)| *t);
            let others = v6
                .iter()
                .filter(|(d, t)| *d != "::/0" && *t != Some("local"))
                .count();
            let ipv6_ok = others == 0
                && if n.public {
                    any.is_some_and(|g| igw.contains(g))
                } else {
                    any.is_some_and(|g| egress_only.contains(g))
                };
            if !ipv6_ok {
                return Err(fail(format!(
                    "the {} subnet {}'s IPv6 routes are {v6:?} (internet gateway {igw:?}, \
                     egress-only {egress_only:?})",
                    if n.public { "public" } else { "private" },
                    n.id,
                )));
            }
        }
        if !ok {
            return Err(fail(format!(
                "the {} subnet {} in {} routes 0.0.0.0/0 to {:?}/{:?} (internet gateway {igw:?}, \
                 NAT gateways {nat_by_zone:?})",
                if n.public { "public" } else { "private" },
                n.id,
                n.zone,
                route.gateway_id(),
                route.nat_gateway_id()
            )));
        }
    }

    // Security groups: owned ones hold exactly their role's rules.
    let sgs = ec2
        .describe_security_groups()
        .filters(owned())
        .filters(f("vpc-id", &[&vpc_id]))
        .send()
        .await
        .map_err(aws_failure("DescribeSecurityGroups"))?;
    let mut groups: BTreeMap<Role, String> = spec
        .security_group_overrides
        .iter()
        .map(|(r, id)| (*r, id.clone()))
        .collect();
    let mut owned_groups: Vec<(Role, &SecurityGroup)> = Vec::new();
    for g in sgs.security_groups() {
        let role = ownership::ec2_tag(g.tags(), ROLE_KEY)
            .and_then(|r| Role::ALL.into_iter().find(|x| x.as_str() == r));
        if let Some(role) = role {
            groups.insert(role, g.group_id().unwrap_or_default().to_string());
            owned_groups.push((role, g));
        }
    }
    let nat_ips: Vec<String> = nats
        .nat_gateways()
        .iter()
        .filter_map(|n| {
            n.nat_gateway_addresses()
                .first()?
                .public_ip()
                .map(String::from)
        })
        .collect();
    let inside: Vec<String> = vpc_ranges
        .iter()
        .cloned()
        .chain(vpc_ipv6.map(|b| ipv6_cidr(&b.to_string())))
        .collect();
    let want = specified(cluster, &groups, &inside, &nat_ips);
    for (role, g) in &owned_groups {
        // The `lb` group's rules are the cloud controller manager's.
        if *role == Role::Lb {
            continue;
        }
        let have = rules_of(g);
        // Each rule says what it is for (the spec's description for its additional rules,
        // the provider's own for the others), unless the spec left that rule's blank.
        let blank: BTreeSet<(String, Option<i32>, Option<i32>)> = spec
            .additional_control_plane_ingress_rules
            .iter()
            .chain(&spec.additional_node_ingress_rules)
            .chain(&spec.control_plane_load_balancer.ingress_rules)
            .filter(|r| r.description.is_empty())
            .map(|r| (r.protocol.to_lowercase(), r.from_port, r.to_port))
            .collect();
        for p in g.ip_permissions() {
            let described = p
                .ip_ranges()
                .iter()
                .map(|r| r.description())
                .chain(p.ipv6_ranges().iter().map(|r| r.description()))
                .chain(p.user_id_group_pairs().iter().map(|u| u.description()))
                .all(|d| d.is_some_and(|d| !d.is_empty()));
            let key = (
                p.ip_protocol().unwrap_or_default().to_lowercase(),
                p.from_port(),
                p.to_port(),
            );
            if !described && !blank.contains(&key) {
                return Err(fail(format!(
                    "the {} group {:?}: a rule without a description: {p:?}",
                    role.as_str(),
                    g.group_id()
                )));
            }
        }
        let wanted = want.get(role).cloned().unwrap_or_default();
        if have != wanted {
            let extra: Vec<_> = have.difference(&wanted).collect();
            let missing: Vec<_> = wanted.difference(&have).collect();
            return Err(fail(format!(
                "the {} group {:?}: extra rules {extra:?}, missing {missing:?}",
                role.as_str(),
                g.group_id()
            )));
        }
    }

    // Every live machine carries exactly one group with the Kubernetes cluster tag (the
    // cloud controller manager errors on several): the `lb` group.
    let k8s_key = format!("kubernetes.io/cluster/{name}");
    let k8s_tagged: BTreeSet<String> = sgs
        .security_groups()
        .iter()
        .filter(|g| ownership::ec2_tag(g.tags(), &k8s_key) == Some("owned"))
        .filter_map(|g| g.group_id().map(String::from))
        .collect();
    let lb_group = groups.get(&Role::Lb).cloned().unwrap_or_default();
    // Of the groups the cluster owns, only its own `lb` group carries that tag (the cloud
    // controller manager edits the tagged group, and errors on several).
    for (role, g) in &owned_groups {
        let id = g.group_id().unwrap_or_default();
        if k8s_tagged.contains(id) != (*role == Role::Lb) {
            return Err(fail(format!(
                "the {} group {id}: {k8s_key} {}; only the lb group carries it",
                role.as_str(),
                if k8s_tagged.contains(id) {
                    "set"
                } else {
                    "missing"
                }
            )));
        }
    }
    let machines = ec2
        .describe_instances()
        .filters(owned())
        .filters(f(&format!("tag:{ROLE_KEY}"), &["controlplane", "node"]))
        .filters(f("instance-state-name", &["pending", "running"]))
        .send()
        .await
        .map_err(aws_failure("DescribeInstances"))?;
    for i in machines.reservations().iter().flat_map(|r| r.instances()) {
        let tagged: Vec<&str> = i
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id())
            .filter(|g| k8s_tagged.contains(*g))
            .collect();
        if tagged != [lb_group.as_str()] {
            return Err(fail(format!(
                "machine {:?} has the cluster-tagged groups {tagged:?}, not [{lb_group}]",
                i.instance_id()
            )));
        }
        // Launched in a subnet of the cluster's own after the step set its hostname type:
        // named as the spec says (its kubelet's node name is that hostname).
        if let Some(t) = &spec.network.vpc.private_dns_hostname_type_on_launch
            && nets
                .iter()
                .any(|n| n.owned && Some(n.id.as_str()) == i.subnet_id())
        {
            let held = i
                .private_dns_name_options()
                .and_then(|o| o.hostname_type())
                .map(|h| h.as_str());
            if held != Some(t.as_str()) {
                return Err(fail(format!(
                    "machine {:?} has {held:?} hostnames, the spec's subnets give {t}",
                    i.instance_id()
                )));
            }
        }
    }

    // The cluster's own bastion.
    let bastions = ec2
        .describe_instances()
        .filters(owned())
        .filters(f(&format!("tag:{ROLE_KEY}"), &["bastion"]))
        .filters(f("instance-state-name", &["running"]))
        .send()
        .await
        .map_err(aws_failure("DescribeInstances"))?;
    let bastion_group = groups.get(&Role::Bastion).cloned().unwrap_or_default();
    for b in bastions.reservations().iter().flat_map(|r| r.instances()) {
        let id = b.instance_id().unwrap_or_default();
        let subnet = b.subnet_id().unwrap_or_default();
        if !nets.iter().any(|n| n.public && n.id == subnet) {
            return Err(fail(format!(
                "bastion {id} is in {subnet}, not a public subnet of the cluster"
            )));
        }
        if b.public_ip_address().is_none() {
            return Err(fail(format!("bastion {id} has no public address")));
        }
        let its: Vec<&str> = b
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id())
            .collect();
        if its != [bastion_group.as_str()] {
            return Err(fail(format!(
                "bastion {id} has the groups {its:?}, not [{bastion_group}]"
            )));
        }
    }

    // The spec's additional tags on every owned network resource, and each subnet's own
    // beside them (machines are checked by their own steps: a machine's own additional tags
    // win over the cluster's, as a subnet's do).
    let key = ownership::cluster_key(name);
    let extra = &spec.additional_tags;
    if !extra.is_empty() || !subnet_tags.is_empty() {
        let mut tagged: Vec<(String, BTreeMap<String, String>)> = Vec::new();
        let listed = crate::census::ec2_tags(
            ec2,
            vec![
                f("key", &[&key]),
                f("value", &["owned"]),
                f(
                    "resource-type",
                    &[
                        "vpc",
                        "subnet",
                        "internet-gateway",
                        "elastic-ip",
                        "route-table",
                        "security-group",
                    ],
                ),
            ],
        )
        .await?;
        let ids: Vec<String> = listed
            .iter()
            .filter_map(|t| t.resource_id().map(String::from))
            .collect();
        for chunk in ids.chunks(100) {
            let ids: Vec<&str> = chunk.iter().map(String::as_str).collect();
            let all = crate::census::ec2_tags(ec2, vec![f("resource-id", &ids)]).await?;
            for id in chunk {
                let of: BTreeMap<String, String> = all
                    .iter()
                    .filter(|t| t.resource_id() == Some(id.as_str()))
                    .filter_map(|t| Some((t.key()?.to_string(), t.value()?.to_string())))
                    .collect();
                tagged.push((id.clone(), of));
            }
        }
        for n in nats.nat_gateways() {
            tagged.push((
                n.nat_gateway_id().unwrap_or_default().to_string(),
                ownership::ec2_pairs(n.tags())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ));
        }
        for (lb_name, tags) in crate::census::load_balancer_tags(clients).await? {
            if tags
                .iter()
                .any(|t| t.key() == key && t.value() == Some("owned"))
            {
                tagged.push((
                    lb_name,
                    tags.iter()
                        .filter_map(|t| Some((t.key().to_string(), t.value()?.to_string())))
                        .collect(),
                ));
            }
        }
        for (id, tags) in &tagged {
            let mut want = extra.clone();
            want.extend(subnet_tags.get(id).cloned().unwrap_or_default());
            let wrong: Vec<(&String, Option<&String>)> = want
                .iter()
                .filter(|(k, v)| tags.get(*k) != Some(*v))
                .map(|(k, _)| (k, tags.get(k)))
                .collect();
            if !wrong.is_empty() {
                return Err(fail(format!(
                    "{id} does not carry the spec's additional tags {want:?}: it has {wrong:?}"
                )));
            }
        }
    }

    // The load balancer, when the cluster owns it.
    let lbs: Vec<String> = crate::census::load_balancer_tags(clients)
        .await?
        .into_iter()
        .filter(|(_, tags)| {
            tags.iter()
                .any(|t| t.key() == key && t.value() == Some("owned"))
        })
        .map(|(n, _)| n)
        .collect();
    for lb_name in &lbs {
        let d = clients
            .elb
            .describe_load_balancers()
            .load_balancer_names(lb_name)
            .send()
            .await
            .map_err(aws_failure("DescribeLoadBalancers"))?;
        let [lb] = d.load_balancer_descriptions() else {
            return Err(fail(format!("load balancer {lb_name} is not described")));
        };
        let lb_spec = &spec.control_plane_load_balancer;
        if lb.scheme() != Some(lb_spec.scheme.as_str()) {
            return Err(fail(format!(
                "load balancer {lb_name} is {:?}, not {}",
                lb.scheme(),
                lb_spec.scheme.as_str()
            )));
        }
        let listeners: Vec<_> = lb
            .listener_descriptions()
            .iter()
            .filter_map(|l| l.listener())
            .map(|l| {
                (
                    l.protocol().to_ascii_uppercase(),
                    l.load_balancer_port(),
                    l.instance_protocol().map(str::to_ascii_uppercase),
                    l.instance_port(),
                )
            })
            .collect();
        let one = vec![("TCP".to_string(), 6443, Some("TCP".to_string()), 6443)];
        if listeners != one {
            return Err(fail(format!(
                "load balancer {lb_name} listens {listeners:?}"
            )));
        }
        // kubeadm's API server answers on TCP 6443; checked every 10 s, 5 s to answer, 5
        // successes to be healthy, 3 failures to be unhealthy, unless the spec says.
        let want = lb_spec.health_check.clone().unwrap_or_default();
        let want = (
            want.target.as_str(),
            want.interval,
            want.timeout,
            want.healthy_threshold,
            want.unhealthy_threshold,
        );
        let have = lb.health_check().map(|h| {
            (
                h.target(),
                h.interval(),
                h.timeout(),
                h.healthy_threshold(),
                h.unhealthy_threshold(),
            )
        });
        if have != Some(want) {
            return Err(fail(format!(
                "load balancer {lb_name} checks (target, interval, timeout, healthy, \
                 unhealthy) {have:?}, not {want:?}"
            )));
        }
        let attrs = clients
            .elb
            .describe_load_balancer_attributes()
            .load_balancer_name(lb_name)
            .send()
            .await
            .map_err(aws_failure("DescribeLoadBalancerAttributes"))?;
        let a = attrs.load_balancer_attributes();
        let cross = a
            .and_then(|a| a.cross_zone_load_balancing())
            .is_some_and(|c| c.enabled());
        let idle = a
            .and_then(|a| a.connection_settings())
            .map(|c| c.idle_timeout());
        let want_idle = lb_spec.idle_timeout.unwrap_or(IDLE_TIMEOUT);
        if cross != lb_spec.cross_zone || idle != Some(want_idle) {
            return Err(fail(format!(
                "load balancer {lb_name}: cross-zone {cross}, idle timeout {idle:?}; the spec \
                 says cross-zone {}, idle timeout {want_idle}",
                lb_spec.cross_zone
            )));
        }
        let public = lb_spec.scheme != Scheme::Internal;
        let mut by_zone: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        // A classic load balancer has no edge zone.
        for n in nets.iter().filter(|n| n.public == public && !n.is_edge()) {
            by_zone.entry(&n.zone).or_default().push(&n.id);
        }
        let subnets: BTreeSet<&str> = lb.subnets().iter().map(String::as_str).collect();
        let named: BTreeSet<&str> = lb_spec.subnets.iter().map(String::as_str).collect();
        if !named.is_empty() && subnets != named {
            return Err(fail(format!(
                "load balancer {lb_name} is in subnets {subnets:?}; the spec names {named:?}"
            )));
        }
        let each_zone_once = by_zone
            .values()
            .all(|ids| ids.iter().filter(|id| subnets.contains(**id)).count() == 1);
        let only_ours = subnets
            .iter()
            .all(|s| by_zone.values().flatten().any(|id| id == s));
        if named.is_empty() && (!each_zone_once || !only_ours) {
            return Err(fail(format!(
                "load balancer {lb_name} is in subnets {subnets:?}; the cluster's {} subnets \
                 by zone are {by_zone:?}",
                if public { "public" } else { "private" }
            )));
        }
        let lb_group = groups.get(&Role::ApiServerLb).cloned().unwrap_or_default();
        let want: BTreeSet<&str> = std::iter::once(lb_group.as_str())
            .chain(
                spec.control_plane_load_balancer
                    .additional_security_groups
                    .iter()
                    .map(String::as_str),
            )
            .collect();
        let have: BTreeSet<&str> = lb.security_groups().iter().map(String::as_str).collect();
        if have != want || have.len() != lb.security_groups().len() {
            return Err(fail(format!(
                "load balancer {lb_name} has groups {:?}, not {want:?}",
                lb.security_groups()
            )));
        }
        let registered: BTreeSet<String> = lb
            .instances()
            .iter()
            .filter_map(|i| i.instance_id().map(String::from))
            .collect();
        let cps = ec2
            .describe_instances()
            .filters(owned())
            .filters(f(&format!("tag:{ROLE_KEY}"), &["controlplane"]))
            .filters(f("instance-state-name", &["pending", "running"]))
            .send()
            .await
            .map_err(aws_failure("DescribeInstances"))?;
        let control_planes: BTreeSet<String> = cps
            .reservations()
            .iter()
            .flat_map(|r| r.instances())
            .filter_map(|i| i.instance_id().map(String::from))
            .collect();
        if registered != control_planes {
            return Err(fail(format!(
                "load balancer {lb_name} has {registered:?} registered; the live control \
                 planes are {control_planes:?}"
            )));
        }
    }
    crate::user_data::check(clients, cluster).await
}
