//! The cluster spec (Kubernetes-style YAML), its defaults, and its validation. A bad spec is
//! rejected with every problem listed at once, before any AWS call that changes anything
//! (the one call validation makes is DescribeAvailabilityZones, to know the region's zones).

use std::collections::BTreeMap;

use ipnet::Ipv4Net;
use serde::{Deserialize, Serialize};

use crate::error::Error;

pub mod machine;

pub use machine::Machine;

/// The `apiVersion` of cluster and machine specs.
pub const API_VERSION: &str = "infrastructure.capa.rs/v1alpha1";

/// The security-group roles of a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Role {
    /// SSH entry point.
    #[serde(rename = "bastion")]
    Bastion,
    /// Control-plane machines.
    #[serde(rename = "controlplane")]
    ControlPlane,
    /// Worker machines.
    #[serde(rename = "node")]
    Node,
    /// The API server load balancer.
    #[serde(rename = "apiserver-lb")]
    ApiServerLb,
}

impl Role {
    /// Every role, in reconcile order.
    pub const ALL: [Role; 4] = [
        Role::Bastion,
        Role::ControlPlane,
        Role::Node,
        Role::ApiServerLb,
    ];

    /// The role's name in tags and group names.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Bastion => "bastion",
            Role::ControlPlane => "controlplane",
            Role::Node => "node",
            Role::ApiServerLb => "apiserver-lb",
        }
    }
}

/// `metadata` of a spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    /// The cluster's name: it names and tags every resource.
    pub name: String,
}

/// A cluster spec file: `apiVersion`, `kind: Cluster`, `metadata.name`, `spec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cluster {
    /// Must be [`API_VERSION`].
    pub api_version: String,
    /// Must be `Cluster`.
    pub kind: String,
    /// The name.
    pub metadata: Metadata,
    /// What to build.
    pub spec: ClusterSpec,
}

/// What to build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSpec {
    /// The AWS region.
    pub region: String,
    /// The EC2 key pair for the bastion (and, by default, machines).
    #[serde(default)]
    pub ssh_key_name: Option<String>,
    /// Tags added to every resource the provider creates.
    #[serde(default)]
    pub additional_tags: BTreeMap<String, String>,
    /// The network.
    #[serde(default)]
    pub network: NetworkSpec,
    /// Existing security groups to use instead of creating a role's group.
    #[serde(default)]
    pub security_group_overrides: BTreeMap<Role, String>,
    /// The CNI's rules between control plane and nodes (default: calico's BGP and IP-in-IP).
    #[serde(default)]
    pub cni_ingress_rules: Option<Vec<CniRule>>,
    /// More ingress rules on the control-plane group.
    #[serde(default)]
    pub additional_control_plane_ingress_rules: Vec<IngressRule>,
    /// More ingress rules on the node group.
    #[serde(default)]
    pub additional_node_ingress_rules: Vec<IngressRule>,
    /// The bastion host.
    #[serde(default)]
    pub bastion: BastionSpec,
    /// The API server's classic load balancer.
    #[serde(default)]
    pub control_plane_load_balancer: LoadBalancerSpec,
}

/// The network: VPC, gateway, subnets, NAT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkSpec {
    /// The VPC: an existing one by id, or one to create.
    #[serde(default)]
    pub vpc: VpcSpec,
    /// An existing internet gateway (only with an existing VPC).
    #[serde(default)]
    pub internet_gateway_id: Option<String>,
    /// Subnets; empty means a public and a private subnet in each of `availabilityZoneCount`
    /// zones.
    #[serde(default)]
    pub subnets: Vec<SubnetSpec>,
    /// How many zones the default subnets span (1 to the region's zone count).
    #[serde(default = "default_zone_count")]
    pub availability_zone_count: usize,
    /// One NAT gateway per zone with private subnets (default), or one for the whole cluster.
    #[serde(default = "yes")]
    pub nat_gateway_per_zone: bool,
}

fn default_zone_count() -> usize {
    3
}

fn yes() -> bool {
    true
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            vpc: VpcSpec::default(),
            internet_gateway_id: None,
            subnets: Vec::new(),
            availability_zone_count: default_zone_count(),
            nat_gateway_per_zone: true,
        }
    }
}

/// The VPC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VpcSpec {
    /// An existing VPC: validated and used, never modified.
    #[serde(default)]
    pub id: Option<String>,
    /// The CIDR of the VPC to create (default 10.0.0.0/16). Immutable.
    #[serde(default)]
    pub cidr_block: Option<String>,
}

/// One subnet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubnetSpec {
    /// An existing subnet: validated (in the VPC, public or private as claimed) and used.
    #[serde(default)]
    pub id: Option<String>,
    /// The CIDR of a subnet to create, inside the VPC's.
    #[serde(default)]
    pub cidr_block: Option<String>,
    /// Its zone (required to create one).
    #[serde(default)]
    pub availability_zone: Option<String>,
    /// Public (routes to the internet gateway, maps public IPs) or private (routes to NAT).
    #[serde(default)]
    pub public: bool,
}

/// A CNI rule: applied to the control-plane and node groups, from both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CniRule {
    /// What it is for.
    pub description: String,
    /// `tcp`, `udp`, `icmp`, `-1` or an IP protocol number such as `4`.
    pub protocol: String,
    /// First port (tcp/udp).
    #[serde(default)]
    pub from_port: Option<i32>,
    /// Last port (tcp/udp).
    #[serde(default)]
    pub to_port: Option<i32>,
}

/// An ingress rule from CIDR blocks or other roles' groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressRule {
    /// What it is for.
    pub description: String,
    /// `tcp`, `udp`, `icmp`, `-1` or an IP protocol number.
    pub protocol: String,
    /// First port (tcp/udp).
    #[serde(default)]
    pub from_port: Option<i32>,
    /// Last port (tcp/udp).
    #[serde(default)]
    pub to_port: Option<i32>,
    /// Source CIDR blocks.
    #[serde(default)]
    pub cidr_blocks: Vec<String>,
    /// Source roles (their groups).
    #[serde(default)]
    pub source_roles: Vec<Role>,
}

/// The bastion host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BastionSpec {
    /// Whether the provider runs a bastion.
    #[serde(default)]
    pub enabled: bool,
    /// An existing bastion instance: used, never touched.
    #[serde(default)]
    pub id: Option<String>,
    /// Who may SSH to it (no default: write 0.0.0.0/0 to open it to the world).
    #[serde(default)]
    pub allowed_cidr_blocks: Vec<String>,
    /// Its instance type (default t3.micro).
    #[serde(default)]
    pub instance_type: Option<String>,
    /// Its image (default: the newest Canonical Ubuntu 24.04 amd64).
    #[serde(default)]
    pub ami: Option<String>,
}

/// `internet-facing` or `internal`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scheme {
    /// Reachable from the internet, in the public subnets.
    #[default]
    #[serde(rename = "internet-facing")]
    InternetFacing,
    /// Reachable in the VPC only, in the private subnets.
    #[serde(rename = "internal")]
    Internal,
}

impl Scheme {
    /// The scheme as ELB spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::InternetFacing => "internet-facing",
            Scheme::Internal => "internal",
        }
    }
}

/// The API server's load balancer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadBalancerSpec {
    /// An existing load balancer, by name: used, never touched.
    #[serde(default)]
    pub existing_name: Option<String>,
    /// Its name (default `<cluster>-apiserver`; longer than 32 characters is hashed to fit).
    #[serde(default)]
    pub name: Option<String>,
    /// `internet-facing` (default) or `internal`. Immutable.
    #[serde(default)]
    pub scheme: Scheme,
    /// Cross-zone load balancing (default false).
    #[serde(default)]
    pub cross_zone: bool,
    /// Idle timeout in seconds (default 600).
    #[serde(default)]
    pub idle_timeout: Option<i32>,
    /// The health check (default TCP:6443, every 10 s).
    #[serde(default)]
    pub health_check: Option<HealthCheckSpec>,
    /// Who may reach port 6443 (default: anyone for internet-facing, the VPC for internal).
    #[serde(default)]
    pub allowed_cidr_blocks: Vec<String>,
}

/// A classic load balancer health check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheckSpec {
    /// `TCP:6443`, `SSL:6443`, `HTTP:6443/readyz` or `HTTPS:6443/readyz`.
    pub target: String,
    /// Seconds between checks (5-300).
    pub interval: i32,
    /// Seconds to wait (2-60, below the interval).
    pub timeout: i32,
    /// Successes to be healthy (2-10).
    pub healthy_threshold: i32,
    /// Failures to be unhealthy (2-10).
    pub unhealthy_threshold: i32,
}

impl Default for HealthCheckSpec {
    fn default() -> Self {
        HealthCheckSpec {
            target: "TCP:6443".into(),
            interval: 10,
            timeout: 5,
            healthy_threshold: 5,
            unhealthy_threshold: 3,
        }
    }
}

/// Parses a cluster spec from YAML, naming the file in errors.
pub fn parse(yaml: &str, origin: &str) -> Result<Cluster, Error> {
    serde_yaml_ng::from_str(yaml).map_err(|e| Error::InvalidSpec {
        problems: vec![format!("{origin}: {e}")],
    })
}

/// The documents of one spec file: at most one cluster and any number of machines.
#[derive(Debug, Clone, Default)]
pub struct Documents {
    /// The cluster.
    pub cluster: Option<Cluster>,
    /// The machines, in file order.
    pub machines: Vec<Machine>,
}

/// Parses a file of YAML documents (`---` separated), each a `Cluster` or a `Machine`.
pub fn parse_documents(yaml: &str, origin: &str) -> Result<Documents, Error> {
    let mut docs = Documents::default();
    let mut problems = Vec::new();
    for (i, de) in serde_yaml_ng::Deserializer::from_str(yaml).enumerate() {
        let value = match serde_yaml_ng::Value::deserialize(de) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("{origin}: document {}: {e}", i + 1));
                continue;
            }
        };
        if value.is_null() {
            continue;
        }
        let kind = value
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or_default()
            .to_string();
        match kind.as_str() {
            "Cluster" => match serde_yaml_ng::from_value::<Cluster>(value) {
                Ok(c) if docs.cluster.is_none() => docs.cluster = Some(c),
                Ok(_) => problems.push(format!("{origin}: more than one Cluster document")),
                Err(e) => problems.push(format!("{origin}: document {} (Cluster): {e}", i + 1)),
            },
            "Machine" => match serde_yaml_ng::from_value::<Machine>(value) {
                Ok(m) => {
                    for p in machine::validate(&m) {
                        problems.push(format!("{origin}: machine {}: {p}", m.metadata.name));
                    }
                    docs.machines.push(m);
                }
                Err(e) => problems.push(format!("{origin}: document {} (Machine): {e}", i + 1)),
            },
            other => problems.push(format!(
                "{origin}: document {}: kind {other:?} is neither Cluster nor Machine",
                i + 1
            )),
        }
    }
    if problems.is_empty() {
        Ok(docs)
    } else {
        Err(Error::InvalidSpec { problems })
    }
}

/// The default VPC CIDR.
pub const DEFAULT_VPC_CIDR: &str = "10.0.0.0/16";
/// The default bastion instance type.
pub const DEFAULT_BASTION_TYPE: &str = "t3.micro";
/// The default idle timeout of the API load balancer.
pub const DEFAULT_IDLE_TIMEOUT: i32 = 600;
/// AWS allows 50 tags per resource; the provider uses up to this many of its own.
const OWN_TAGS: usize = 7;

/// One subnet of the plan: existing or to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedSubnet {
    /// Set for an existing subnet.
    pub id: Option<String>,
    /// The CIDR (unknown until described for an existing subnet).
    pub cidr: Option<Ipv4Net>,
    /// The zone (unknown until described for an existing subnet).
    pub zone: Option<String>,
    /// Public or private.
    pub public: bool,
}

/// A validated spec with its defaults filled in.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The cluster's name.
    pub name: String,
    /// The spec as written.
    pub spec: ClusterSpec,
    /// The VPC CIDR to create (None with an existing VPC).
    pub vpc_cidr: Option<Ipv4Net>,
    /// The subnets, existing and to create.
    pub subnets: Vec<PlannedSubnet>,
    /// The load balancer's name.
    pub load_balancer_name: String,
    /// The health check.
    pub health_check: HealthCheckSpec,
    /// The idle timeout.
    pub idle_timeout: i32,
    /// CNI rules.
    pub cni_rules: Vec<CniRule>,
}

/// The CNI rules used when the spec names none: calico's BGP and IP-in-IP.
pub fn default_cni_rules() -> Vec<CniRule> {
    vec![
        CniRule {
            description: "bgp (calico)".into(),
            protocol: "tcp".into(),
            from_port: Some(179),
            to_port: Some(179),
        },
        CniRule {
            description: "IP-in-IP (calico)".into(),
            protocol: "4".into(),
            from_port: None,
            to_port: None,
        },
    ]
}

/// The load balancer name for `cluster`: `<cluster>-apiserver`, or, when that is longer than
/// ELB's 32 characters, a stable hash of it that fits.
pub fn load_balancer_name(cluster: &str, explicit: Option<&str>) -> String {
    let wanted = explicit.map_or_else(|| format!("{cluster}-apiserver"), String::from);
    let wanted = wanted.replace('.', "-");
    if wanted.len() <= 32 {
        return wanted;
    }
    // 28 base-36 characters of two FNV-1a hashes, then "-k8s": 32 characters in all.
    let mut out = String::new();
    for seed in [0xcbf2_9ce4_8422_2325_u64, 0x8422_2325_cbf2_9ce4] {
        let mut h = crate::ownership::fnv1a(seed, wanted.as_bytes());
        for _ in 0..14 {
            let d = (h % 36) as u32;
            out.push(char::from_digit(d, 36).unwrap_or('0'));
            h /= 36;
        }
    }
    format!("{out}-k8s")
}

fn check_cidr(problems: &mut Vec<String>, at: &str, raw: &str) -> Option<Ipv4Net> {
    match raw.parse::<Ipv4Net>() {
        Ok(net) if net.network() == net.addr() => Some(net),
        Ok(net) => {
            problems.push(format!(
                "{at}: {raw} is not a network address (did you mean {}?)",
                net.trunc()
            ));
            None
        }
        Err(_) => {
            problems.push(format!("{at}: {raw:?} is not an IPv4 CIDR block"));
            None
        }
    }
}

fn check_id(problems: &mut Vec<String>, at: &str, raw: &str, prefix: &str) {
    let ok = raw
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|hex| {
            (hex.len() == 8 || hex.len() == 17) && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
    if !ok {
        problems.push(format!("{at}: {raw:?} is not a {prefix}- id"));
    }
}

fn check_rule(
    problems: &mut Vec<String>,
    at: &str,
    protocol: &str,
    from: Option<i32>,
    to: Option<i32>,
) {
    let ported = match protocol {
        "tcp" | "udp" | "6" | "17" => true,
        "icmp" | "1" | "-1" | "all" => false,
        p => match p.parse::<u8>() {
            Ok(_) => false,
            Err(_) => {
                problems.push(format!(
                    "{at}.protocol: {p:?} is not tcp, udp, icmp, -1 or a protocol number 0-255"
                ));
                return;
            }
        },
    };
    if ported {
        match (from, to) {
            (Some(f), Some(t)) if (0..=65535).contains(&f) && (f..=65535).contains(&t) => {}
            (Some(_), Some(_)) => problems.push(format!(
                "{at}: ports must satisfy 0 <= fromPort <= toPort <= 65535"
            )),
            _ => problems.push(format!(
                "{at}: protocol {protocol} needs fromPort and toPort"
            )),
        }
    }
}

fn check_tags(problems: &mut Vec<String>, tags: &BTreeMap<String, String>) {
    if tags.len() + OWN_TAGS > 50 {
        problems.push(format!(
            "spec.additionalTags: {} tags; AWS allows 50 per resource and the provider uses {OWN_TAGS}",
            tags.len()
        ));
    }
    let joined: usize = tags.keys().map(|k| k.len() + 1).sum();
    if joined > 257 {
        problems.push(
            "spec.additionalTags: the keys, joined by commas, exceed the 256 characters the \
             provider can track in its last-applied tag"
                .into(),
        );
    }
    for (k, v) in tags {
        if k.contains(',') {
            problems.push(format!("spec.additionalTags: key {k:?} holds a comma"));
        }
        if k.is_empty() || k.chars().count() > 128 {
            problems.push(format!(
                "spec.additionalTags: key {k:?} must be 1 to 128 characters"
            ));
        }
        if v.chars().count() > 256 {
            problems.push(format!(
                "spec.additionalTags[{k}]: the value is longer than 256 characters"
            ));
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            problems.push(format!(
                "spec.additionalTags: key {k:?} uses the reserved prefix aws:"
            ));
        }
        if k.starts_with("sigs.k8s.io/cluster-api-provider-aws/") || k == "Name" {
            problems.push(format!(
                "spec.additionalTags: key {k:?} is set by the provider itself"
            ));
        }
    }
}

/// Validates `cluster` against the region's zones (`zones`, as DescribeAvailabilityZones
/// lists them) and fills in defaults. Every problem is listed, not just the first.
pub fn validate(cluster: &Cluster, zones: &[String]) -> Result<Plan, Error> {
    let mut p = Vec::new();
    let spec = &cluster.spec;
    if cluster.api_version != API_VERSION {
        p.push(format!(
            "apiVersion: {:?}, expected {API_VERSION:?}",
            cluster.api_version
        ));
    }
    if cluster.kind != "Cluster" {
        p.push(format!("kind: {:?}, expected \"Cluster\"", cluster.kind));
    }
    let name = &cluster.metadata.name;
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !name_ok {
        p.push(format!(
            "metadata.name: {name:?} must be 1 to 63 lower-case letters, digits and hyphens, \
             not starting or ending with a hyphen"
        ));
    }
    let region_ok = {
        let parts: Vec<&str> = spec.region.split('-').collect();
        parts.len() >= 3
            && parts.iter().all(|s| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
    };
    if !region_ok {
        p.push(format!(
            "spec.region: {:?} is not a region name such as us-east-1",
            spec.region
        ));
    }
    if let Some(k) = &spec.ssh_key_name
        && (k.is_empty() || k.len() > 255)
    {
        p.push("spec.sshKeyName: must be 1 to 255 characters".into());
    }
    check_tags(&mut p, &spec.additional_tags);

    // Network.
    let net = &spec.network;
    let existing_vpc = net.vpc.id.clone();
    if let Some(id) = &existing_vpc {
        check_id(&mut p, "spec.network.vpc.id", id, "vpc");
        if net.vpc.cidr_block.is_some() {
            p.push(
                "spec.network.vpc: give either id (an existing VPC) or cidrBlock, not both".into(),
            );
        }
    }
    let vpc_cidr = if existing_vpc.is_none() {
        let raw = net.vpc.cidr_block.as_deref().unwrap_or(DEFAULT_VPC_CIDR);
        let c = check_cidr(&mut p, "spec.network.vpc.cidrBlock", raw);
        if let Some(c) = c
            && !(16..=28).contains(&c.prefix_len())
        {
            p.push(format!(
                "spec.network.vpc.cidrBlock: {c} must be between /16 and /28"
            ));
        }
        c
    } else {
        None
    };
    if let Some(igw) = &net.internet_gateway_id {
        check_id(&mut p, "spec.network.internetGatewayId", igw, "igw");
        if existing_vpc.is_none() {
            p.push(
                "spec.network.internetGatewayId: an existing internet gateway needs an existing \
                 VPC (spec.network.vpc.id)"
                    .into(),
            );
        }
    }
    if net.availability_zone_count == 0 || net.availability_zone_count > zones.len().max(1) {
        p.push(format!(
            "spec.network.availabilityZoneCount: {} is not between 1 and the {} zones of {}",
            net.availability_zone_count,
            zones.len(),
            spec.region
        ));
    }
    let mut subnets = Vec::new();
    if net.subnets.is_empty() {
        if let Some(vpc) = vpc_cidr {
            subnets = default_subnets(vpc, &zones[..net.availability_zone_count.min(zones.len())]);
        } else if existing_vpc.is_some() {
            p.push(
                "spec.network.subnets: with an existing VPC, list its subnets (by id) or the \
                 subnets to create in it (cidrBlock, availabilityZone)"
                    .into(),
            );
        }
    } else {
        let mut seen: Vec<(usize, Ipv4Net)> = Vec::new();
        for (i, s) in net.subnets.iter().enumerate() {
            let at = format!("spec.network.subnets[{i}]");
            match (&s.id, &s.cidr_block) {
                (Some(id), None) => {
                    check_id(&mut p, &format!("{at}.id"), id, "subnet");
                    if existing_vpc.is_none() {
                        p.push(format!(
                            "{at}.id: an existing subnet needs an existing VPC (spec.network.vpc.id)"
                        ));
                    }
                    subnets.push(PlannedSubnet {
                        id: Some(id.clone()),
                        cidr: None,
                        zone: s.availability_zone.clone(),
                        public: s.public,
                    });
                }
                (None, Some(raw)) => {
                    let cidr = check_cidr(&mut p, &format!("{at}.cidrBlock"), raw);
                    if let Some(c) = cidr {
                        if !(16..=28).contains(&c.prefix_len()) {
                            p.push(format!("{at}.cidrBlock: {c} must be between /16 and /28"));
                        }
                        if let Some(vpc) = vpc_cidr
                            && !vpc.contains(&c)
                        {
                            p.push(format!("{at}.cidrBlock: {c} is not inside the VPC's {vpc}"));
                        }
                        if let Some(vpc) = vpc_cidr
                            && vpc == c
                        {
                            p.push(format!(
                                "{at}.cidrBlock: {c} is the whole VPC; leave room to grow"
                            ));
                        }
                        for (j, other) in &seen {
                            if other.contains(&c.network()) || c.contains(&other.network()) {
                                p.push(format!(
                                    "{at}.cidrBlock: {c} overlaps spec.network.subnets[{j}] ({other})"
                                ));
                            }
                        }
                        seen.push((i, c));
                    }
                    match &s.availability_zone {
                        None => p.push(format!(
                            "{at}.availabilityZone: required to create a subnet"
                        )),
                        Some(z) if !zones.contains(z) => p.push(format!(
                            "{at}.availabilityZone: {z} is not a zone of {} ({})",
                            spec.region,
                            zones.join(", ")
                        )),
                        Some(_) => {}
                    }
                    subnets.push(PlannedSubnet {
                        id: None,
                        cidr,
                        zone: s.availability_zone.clone(),
                        public: s.public,
                    });
                }
                (Some(_), Some(_)) => p.push(format!(
                    "{at}: give either id (an existing subnet) or cidrBlock, not both"
                )),
                (None, None) => p.push(format!("{at}: give id or cidrBlock")),
            }
        }
        if !subnets.iter().any(|s| !s.public) {
            p.push(
                "spec.network.subnets: at least one private subnet is needed for machines".into(),
            );
        }
    }

    // Security groups.
    for (role, id) in &spec.security_group_overrides {
        check_id(
            &mut p,
            &format!("spec.securityGroupOverrides.{}", role.as_str()),
            id,
            "sg",
        );
        if existing_vpc.is_none() {
            p.push(format!(
                "spec.securityGroupOverrides.{}: an existing group needs an existing VPC",
                role.as_str()
            ));
        }
    }
    let cni_rules = spec
        .cni_ingress_rules
        .clone()
        .unwrap_or_else(default_cni_rules);
    for (i, r) in cni_rules.iter().enumerate() {
        check_rule(
            &mut p,
            &format!("spec.cniIngressRules[{i}]"),
            &r.protocol,
            r.from_port,
            r.to_port,
        );
    }
    for (field, rules) in [
        (
            "additionalControlPlaneIngressRules",
            &spec.additional_control_plane_ingress_rules,
        ),
        (
            "additionalNodeIngressRules",
            &spec.additional_node_ingress_rules,
        ),
    ] {
        for (i, r) in rules.iter().enumerate() {
            let at = format!("spec.{field}[{i}]");
            check_rule(&mut p, &at, &r.protocol, r.from_port, r.to_port);
            for c in &r.cidr_blocks {
                check_cidr(&mut p, &format!("{at}.cidrBlocks"), c);
            }
            if r.cidr_blocks.is_empty() && r.source_roles.is_empty() {
                p.push(format!("{at}: needs cidrBlocks or sourceRoles"));
            }
        }
    }

    // Bastion.
    let b = &spec.bastion;
    if let Some(id) = &b.id {
        check_id(&mut p, "spec.bastion.id", id, "i");
        if b.enabled {
            p.push(
                "spec.bastion: give either id (an existing bastion) or enabled, not both".into(),
            );
        }
    }
    if b.enabled {
        for c in &b.allowed_cidr_blocks {
            check_cidr(&mut p, "spec.bastion.allowedCidrBlocks", c);
        }
        if b.allowed_cidr_blocks.is_empty() {
            p.push(
                "spec.bastion.allowedCidrBlocks: list who may SSH to the bastion \
                 (write 0.0.0.0/0 to open it to the world)"
                    .into(),
            );
        }
        if b.instance_type.as_deref() == Some("") {
            p.push("spec.bastion.instanceType: empty".into());
        }
        if let Some(ami) = &b.ami {
            check_id(&mut p, "spec.bastion.ami", ami, "ami");
        }
        if !subnets.iter().any(|s| s.public) {
            p.push("spec.bastion: a bastion needs a public subnet".into());
        }
    }

    // Load balancer.
    let lb = &spec.control_plane_load_balancer;
    if let Some(n) = &lb.name {
        let ok = !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !n.starts_with('-')
            && !n.ends_with('-');
        if !ok {
            p.push(format!(
                "spec.controlPlaneLoadBalancer.name: {n:?} may hold only letters, digits and \
                 hyphens, not at either end"
            ));
        }
    }
    if let Some(n) = &lb.existing_name
        && (n.is_empty() || n.len() > 32)
    {
        p.push(format!(
            "spec.controlPlaneLoadBalancer.existingName: {n:?} is not a load balancer name"
        ));
    }
    if let Some(t) = lb.idle_timeout
        && !(1..=3600).contains(&t)
    {
        p.push(format!(
            "spec.controlPlaneLoadBalancer.idleTimeout: {t} is not between 1 and 3600 seconds"
        ));
    }
    let health_check = lb.health_check.clone().unwrap_or_default();
    {
        let h = &health_check;
        let at = "spec.controlPlaneLoadBalancer.healthCheck";
        let target_ok = match h.target.split_once(':') {
            Some(("TCP" | "SSL", port)) => port.parse::<u16>().is_ok_and(|p| p > 0),
            Some(("HTTP" | "HTTPS", rest)) => rest
                .split_once('/')
                .is_some_and(|(port, _)| port.parse::<u16>().is_ok_and(|p| p > 0)),
            _ => false,
        };
        if !target_ok {
            p.push(format!(
                "{at}.target: {:?} is not TCP:port, SSL:port, HTTP:port/path or HTTPS:port/path",
                h.target
            ));
        }
        for (what, v, lo, hi) in [
            ("interval", h.interval, 5, 300),
            ("timeout", h.timeout, 2, 60),
            ("healthyThreshold", h.healthy_threshold, 2, 10),
            ("unhealthyThreshold", h.unhealthy_threshold, 2, 10),
        ] {
            if !(lo..=hi).contains(&v) {
                p.push(format!("{at}.{what}: {v} is not between {lo} and {hi}"));
            }
        }
        if h.timeout >= h.interval {
            p.push(format!("{at}: timeout must be shorter than interval"));
        }
    }
    for c in &lb.allowed_cidr_blocks {
        check_cidr(&mut p, "spec.controlPlaneLoadBalancer.allowedCidrBlocks", c);
    }
    if lb.scheme == Scheme::InternetFacing
        && lb.existing_name.is_none()
        && !subnets.is_empty()
        && !subnets.iter().any(|s| s.public)
    {
        p.push(
            "spec.controlPlaneLoadBalancer.scheme: an internet-facing load balancer needs a \
             public subnet"
                .into(),
        );
    }

    if !p.is_empty() {
        return Err(Error::InvalidSpec { problems: p });
    }
    Ok(Plan {
        name: name.clone(),
        spec: spec.clone(),
        vpc_cidr,
        subnets,
        load_balancer_name: lb
            .existing_name
            .clone()
            .unwrap_or_else(|| load_balancer_name(name, lb.name.as_deref())),
        health_check,
        idle_timeout: lb.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        cni_rules,
    })
}

/// The default subnets of `vpc` over `zones`: the VPC split into (zones + 1) equal parts
/// (rounded up to a power of two); the first part split again into (zones + 1) pieces for the
/// public subnets, the next parts private, one per zone. A /16 over 3 zones gives public /20s
/// and private /18s (as Cluster API's AWS provider does); a piece always stays free.
pub fn default_subnets(vpc: Ipv4Net, zones: &[String]) -> Vec<PlannedSubnet> {
    let n = zones.len().max(1);
    let parts = (n + 1).next_power_of_two();
    let bits = parts.trailing_zeros() as u8;
    let Ok(pieces) = vpc.subnets(vpc.prefix_len().saturating_add(bits).min(28)) else {
        return Vec::new();
    };
    let pieces: Vec<Ipv4Net> = pieces.collect();
    let Some(first) = pieces.first().copied() else {
        return Vec::new();
    };
    // n + 1 public pieces: one always stays free, so the VPC keeps room to grow.
    let public_bits = (n + 1).next_power_of_two().trailing_zeros() as u8;
    let public: Vec<Ipv4Net> = first
        .subnets(first.prefix_len().saturating_add(public_bits).min(28))
        .map(|s| s.collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, zone) in zones.iter().enumerate() {
        if let Some(c) = public.get(i) {
            out.push(PlannedSubnet {
                id: None,
                cidr: Some(*c),
                zone: Some(zone.clone()),
                public: true,
            });
        }
        if let Some(c) = pieces.get(i + 1) {
            out.push(PlannedSubnet {
                id: None,
                cidr: Some(*c),
                zone: Some(zone.clone()),
                public: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones() -> Vec<String> {
        ["us-east-1a", "us-east-1b", "us-east-1c"]
            .map(String::from)
            .to_vec()
    }

    fn minimal() -> Cluster {
        parse(
            "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {region: us-east-1}\n",
            "test",
        )
        .unwrap()
    }

    #[test]
    fn defaults_split_the_vpc_like_capa() {
        let plan = validate(&minimal(), &zones()).unwrap();
        let got: Vec<(String, bool)> = plan
            .subnets
            .iter()
            .map(|s| (s.cidr.unwrap().to_string(), s.public))
            .collect();
        assert_eq!(
            got,
            [
                ("10.0.0.0/20".to_string(), true),
                ("10.0.64.0/18".to_string(), false),
                ("10.0.16.0/20".to_string(), true),
                ("10.0.128.0/18".to_string(), false),
                ("10.0.32.0/20".to_string(), true),
                ("10.0.192.0/18".to_string(), false),
            ]
        );
        assert_eq!(plan.load_balancer_name, "c1-apiserver");
    }

    #[test]
    fn one_zone_leaves_room() {
        let mut c = minimal();
        c.spec.network.availability_zone_count = 1;
        let plan = validate(&c, &zones()).unwrap();
        let cidrs: Vec<String> = plan
            .subnets
            .iter()
            .map(|s| s.cidr.unwrap().to_string())
            .collect();
        assert_eq!(cidrs, ["10.0.0.0/18", "10.0.128.0/17"]);
        assert!(
            plan.subnets
                .iter()
                .all(|s| s.cidr.unwrap().prefix_len() > 16)
        );
    }

    #[test]
    fn long_names_are_hashed_to_32() {
        let n = load_balancer_name("a-very-long-cluster-name-for-production", None);
        assert_eq!(n.len(), 32);
        assert!(n.ends_with("-k8s"));
        assert_eq!(
            n,
            load_balancer_name("a-very-long-cluster-name-for-production", None)
        );
        assert_ne!(
            n,
            load_balancer_name("a-very-long-cluster-name-for-productioN", None)
        );
    }

    #[test]
    fn every_problem_is_listed() {
        let yaml = r#"
apiVersion: v1
kind: Klaster
metadata: {name: "Bad_Name"}
spec:
  region: mars
  additionalTags: {"aws:x": "y"}
  network:
    vpc: {cidrBlock: 10.0.0.0/8}
    internetGatewayId: igw-12345678
    subnets:
      - {cidrBlock: 10.1.0.0/24, availabilityZone: us-east-1z}
      - {id: subnet-12345678}
  bastion: {enabled: true}
  controlPlaneLoadBalancer:
    idleTimeout: 0
    healthCheck: {target: "TCP:6443/x", interval: 5, timeout: 5, healthyThreshold: 1, unhealthyThreshold: 3}
"#;
        let c = parse(yaml, "bad.yaml").unwrap();
        let Err(Error::InvalidSpec { problems }) = validate(&c, &zones()) else {
            panic!("accepted");
        };
        let text = problems.join("\n");
        for needle in [
            "apiVersion",
            "kind",
            "metadata.name",
            "spec.region",
            "aws:",
            "between /16 and /28",
            "internetGatewayId",
            "us-east-1z",
            "subnets[1].id",
            "allowedCidrBlocks",
            "idleTimeout",
            "healthCheck.target",
            "healthyThreshold",
            "timeout must be shorter",
        ] {
            assert!(text.contains(needle), "{needle} missing from:\n{text}");
        }
    }

    #[test]
    fn overlapping_and_outside_subnets() {
        let yaml = r#"
apiVersion: infrastructure.capa.rs/v1alpha1
kind: Cluster
metadata: {name: c1}
spec:
  region: us-east-1
  network:
    subnets:
      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}
      - {cidrBlock: 10.0.0.128/25, availabilityZone: us-east-1a}
      - {cidrBlock: 10.9.0.0/24, availabilityZone: us-east-1b}
"#;
        let Err(Error::InvalidSpec { problems }) = validate(&parse(yaml, "x").unwrap(), &zones())
        else {
            panic!("accepted");
        };
        let text = problems.join("\n");
        assert!(text.contains("overlaps"), "{text}");
        assert!(text.contains("not inside the VPC"), "{text}");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let yaml = "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {region: us-east-1, vpcCidr: 10.0.0.0/16}\n";
        let Err(Error::InvalidSpec { problems }) = parse(yaml, "c.yaml") else {
            panic!("accepted");
        };
        assert!(problems[0].contains("vpcCidr"), "{problems:?}");
    }
}
