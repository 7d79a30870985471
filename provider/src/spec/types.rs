//! The cluster spec's types, Kubernetes style (`apiVersion`, `kind`, `metadata`, `spec`), as
//! they are read from YAML, with the defaults serde fills in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// The group the cloud controller manager puts its rules on (for the load balancers it
    /// makes for Services): on every machine, the only one carrying
    /// `kubernetes.io/cluster/<name>`, its rules never reconciled by the provider.
    #[serde(rename = "lb")]
    Lb,
}

impl Role {
    /// Every role, in reconcile order.
    pub const ALL: [Role; 5] = [
        Role::Bastion,
        Role::ControlPlane,
        Role::Node,
        Role::ApiServerLb,
        Role::Lb,
    ];

    /// The role's name in tags and group names.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Bastion => "bastion",
            Role::ControlPlane => "controlplane",
            Role::Node => "node",
            Role::ApiServerLb => "apiserver-lb",
            Role::Lb => "lb",
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
    /// The machines' image lookups' name format when theirs names none (CAPA's field).
    #[serde(default)]
    pub image_lookup_format: Option<String>,
    /// The machines' image lookups' owner when theirs names none (CAPA's field: the account
    /// publishing the images).
    #[serde(default)]
    pub image_lookup_org: Option<String>,
    /// The machines' image lookups' base OS when theirs names none (CAPA's field).
    #[serde(default, rename = "imageLookupBaseOS")]
    pub image_lookup_base_os: Option<String>,
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
    /// How many zones the default subnets span, exactly (1 to the region's zone count);
    /// without it (and without `vpc.availabilityZoneUsageLimit`), up to
    /// [`DEFAULT_ZONE_COUNT`], fewer in a region with fewer.
    #[serde(default)]
    pub availability_zone_count: Option<usize>,
    /// One NAT gateway per zone with private subnets (default), or one for the whole cluster.
    #[serde(default = "yes")]
    pub nat_gateway_per_zone: bool,
    /// Who may reach the nodes' NodePort services (TCP 30000-32767), IPv4 or IPv6 CIDR
    /// blocks; empty means anyone (0.0.0.0/0).
    #[serde(default)]
    pub node_port_ingress_rule_cidr_blocks: Vec<String>,
}

/// How many zones the default subnets span at most when the spec says nothing (CAPA's
/// `availabilityZoneUsageLimit` default).
pub const DEFAULT_ZONE_COUNT: usize = 3;

/// The values of `network.vpc.availabilityZoneSelection`.
pub const ZONE_SELECTIONS: [&str; 2] = ["Ordered", "Random"];

fn yes() -> bool {
    true
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            vpc: VpcSpec::default(),
            internet_gateway_id: None,
            subnets: Vec::new(),
            availability_zone_count: None,
            nat_gateway_per_zone: true,
            node_port_ingress_rule_cidr_blocks: Vec::new(),
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
    /// At most how many zones the default subnets span (CAPA's
    /// `availabilityZoneUsageLimit`, default 3): all of the region's when it has fewer. Not
    /// with `network.availabilityZoneCount`, which asks for exactly that many.
    #[serde(default)]
    pub availability_zone_usage_limit: Option<usize>,
    /// Which zones the default subnets take when the region has more than they span (CAPA's
    /// `availabilityZoneSelection`): `Ordered` (the default: the first by name) or `Random`
    /// (a choice of the cluster's own, drawn from its name: clusters spread over the region's
    /// zones, and each reconcile of a cluster draws the same).
    #[serde(default)]
    pub availability_zone_selection: Option<String>,
    /// The CIDR of the VPC to create (default 10.0.0.0/16). Immutable.
    #[serde(default)]
    pub cidr_block: Option<String>,
    /// More IPv4 ranges for the VPC to create (AssociateVpcCidrBlock), for subnets of their
    /// own, such as a range for pods. Added when missing; never removed.
    #[serde(default)]
    pub secondary_cidr_blocks: Vec<VpcCidrBlock>,
    /// Empty the VPC's `default` security group (every ingress and egress rule revoked, and
    /// kept so), which AWS makes open to itself and to the internet and the cluster never
    /// uses. Only for a VPC the cluster creates.
    #[serde(default, rename = "emptyRoutesDefaultVPCSecurityGroup")]
    pub empty_default_security_group: bool,
    /// The hostname type of the instances launched in the cluster's own subnets (CAPA's
    /// field): `ip-name` (`ip-10-0-1-5...`, EC2's default) or `resource-name` (the instance
    /// id, `i-0123...`). Converged on each subnet the cluster creates; never set on an
    /// existing subnet.
    #[serde(default)]
    pub private_dns_hostname_type_on_launch: Option<String>,
    /// How the VPC's range is shared between the subnets the cluster makes by default (CAPA's
    /// field): `PreferPrivate` (the default: the private subnets take the larger pieces) or
    /// `PreferPublic` (the public ones do). Immutable once the subnets exist.
    #[serde(default)]
    pub subnet_schema: Option<String>,
    /// A public IPv4 pool of the account's own addresses (BYOIP) the NAT gateways' Elastic
    /// IPs come from (CAPA's `elasticIpPool`), with what to do when it has too few free
    /// addresses. Read when addresses are allocated: addresses already held are kept.
    #[serde(default)]
    pub elastic_ip_pool: Option<ElasticIpPool>,
    /// An IPv4 pool of Amazon VPC IP Address Manager (IPAM) the VPC's range comes from
    /// (CAPA's `ipamPool`), instead of `cidrBlock`: found by id or `Name` tag when the VPC is
    /// created (CreateVpc allocates the range). The default subnets are cut from the range
    /// the VPC gets. Read only when the VPC is created: the cluster's VPC keeps its range.
    #[serde(default)]
    pub ipam_pool: Option<IpamPool>,
    /// Dual stack (CAPA's `ipv6`): `ipv6: {}` gives the VPC the cluster creates an
    /// Amazon-provided IPv6 /56 (`poolId`: a /56 of the account's own pool instead), each subnet the cluster creates a /64 of it (instances get
    /// an IPv6 address at launch), an egress-only internet gateway for the private subnets'
    /// outbound IPv6 (`::/0`), public subnets `::/0` to the internet gateway, and the node
    /// port and API rules an IPv6 source beside the IPv4 one. Added to a cluster's VPC that
    /// lacks it; never taken away. With an existing VPC (`id`), the VPC must hold an IPv6
    /// block already (it is never modified): the subnets the cluster creates in it take
    /// /64s no subnet of the VPC holds, and their private ones go out through the
    /// `egressOnlyInternetGatewayId` named, else an egress-only gateway of the cluster's
    /// own. (No NAT64 route nor DNS64, as CAPA gives them only to IPv6-only subnets:
    /// dual-stack machines reach IPv4 over IPv4.)
    #[serde(default)]
    pub ipv6: Option<Ipv6Spec>,
}

/// IPv6 of the cluster's VPC (CAPA's `IPv6`): an Amazon-provided /56 of the VPC the cluster
/// creates, a /56 of the account's own IPv6 pool (BYOIP), a block of an IPv6 pool of IPAM,
/// or the block an existing VPC holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6Spec {
    /// The account's own IPv6 pool (`ipv6pool-ec2-...`, BYOIP) the block of the VPC the
    /// cluster creates comes from, instead of Amazon's (CAPA's `poolId`).
    #[serde(default)]
    pub pool_id: Option<String>,
    /// The /56 of `poolId` the VPC takes (CAPA's `cidrBlock`); without it, the pool's next
    /// free one.
    #[serde(default)]
    pub cidr_block: Option<String>,
    /// An IPv6 pool of Amazon VPC IP Address Manager (IPAM) the block of the VPC the cluster
    /// creates comes from (CAPA's `ipamPool`): found by id or `Name` tag, a
    /// /`netmaskLength` of it (default /56; a /44 to a /60 in steps of four, as AWS sizes a
    /// VPC's block from IPAM), given back to the pool with the VPC.
    #[serde(default)]
    pub ipam_pool: Option<IpamPool>,
    /// An existing egress-only internet gateway (`eigw-...`) of an existing VPC, the way out
    /// over IPv6 of the private subnets the cluster creates there (CAPA's field). Checked to
    /// be attached to the VPC; never modified or deleted.
    #[serde(default, rename = "egressOnlyInternetGatewayId")]
    pub egress_only_internet_gateway_id: Option<String>,
}

/// The IPAM pool a VPC's range comes from (CAPA's `IPAMPool`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IpamPool {
    /// The pool's id (`ipam-pool-...`).
    #[serde(default)]
    pub id: Option<String>,
    /// The pool's `Name` tag.
    #[serde(default)]
    pub name: Option<String>,
    /// The netmask length of the VPC's range (default /16; /16 to /28, as a VPC's), or of its
    /// IPv6 block (`ipv6.ipamPool`: default /56; /44 to /60 in steps of four).
    #[serde(default)]
    pub netmask_length: Option<i32>,
}

/// The netmask length of a VPC's range from an IPAM pool when the spec names none (CAPA's).
pub const DEFAULT_IPAM_NETMASK_LENGTH: i32 = 16;

/// The netmask length of a VPC's IPv6 block from an IPAM pool when the spec names none
/// (CAPA's).
pub const DEFAULT_IPAM_IPV6_NETMASK_LENGTH: i32 = 56;

/// Where Elastic IPs come from (CAPA's `ElasticIPPool`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ElasticIpPool {
    /// The pool (`ipv4pool-ec2-...`), one of the account's BYOIP ranges.
    #[serde(default)]
    pub public_ipv4_pool: Option<String>,
    /// When the pool has too few free addresses: `AmazonPool` (take AWS's addresses
    /// instead) or `None` (the default: refuse, naming the pool).
    #[serde(default)]
    pub public_ipv4_pool_fallback_order: Option<String>,
}

/// The values of `elasticIpPool.publicIpv4PoolFallbackOrder`.
pub const POOL_FALLBACKS: [&str; 2] = ["AmazonPool", "None"];

/// The values of `network.vpc.subnetSchema`.
pub const SUBNET_SCHEMAS: [&str; 2] = ["PreferPrivate", "PreferPublic"];

/// The hostname types EC2 gives instances.
pub const HOSTNAME_TYPES: [&str; 2] = ["ip-name", "resource-name"];

/// A secondary IPv4 range of the VPC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VpcCidrBlock {
    /// The range, such as `100.64.0.0/16` (a /16 to a /28).
    #[serde(rename = "ipv4CidrBlock")]
    pub ipv4_cidr_block: String,
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
    /// The /64 of the VPC's IPv6 block this subnet takes in a dual-stack cluster (CAPA's
    /// `ipv6CidrBlock`); without it, the lowest /64 no other subnet holds or names.
    #[serde(default, rename = "ipv6CidrBlock")]
    pub ipv6_cidr_block: Option<String>,
    /// Tags of this subnet alone (a subnet to create), beside the cluster's `additionalTags`
    /// (these win); they converge as those do.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
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

/// An ingress rule from CIDR blocks, other roles' groups, existing groups or the cluster's
/// NAT gateways.
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
    /// Source IPv6 CIDR blocks.
    #[serde(default, rename = "ipv6CidrBlocks")]
    pub ipv6_cidr_blocks: Vec<String>,
    /// Source roles (their groups).
    #[serde(default)]
    pub source_roles: Vec<Role>,
    /// Source security groups of the user's (`sg-` ids, in the VPC): named in the rule,
    /// never modified.
    #[serde(default)]
    pub source_security_group_ids: Vec<String>,
    /// The cluster's NAT gateways' Elastic IPs (a /32 each, following them) as sources.
    #[serde(default, rename = "natGatewaysIPsSource")]
    pub nat_gateways_ips_source: bool,
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
    /// No ingress rule at all on its group (reached through Session Manager or an EC2
    /// Instance Connect endpoint instead); then `allowedCidrBlocks` stays empty.
    #[serde(default)]
    pub disable_ingress_rules: bool,
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
    /// The health check's protocol alone (CAPA's field): `TCP` or `SSL` (`<protocol>:6443`),
    /// `HTTP` or `HTTPS` (`<protocol>:6443/readyz`), the other settings the defaults. Not
    /// with `health_check`, which names its own target.
    #[serde(default)]
    pub health_check_protocol: Option<String>,
    /// Who may reach port 6443 (default: anyone for internet-facing, the VPC for internal).
    #[serde(default)]
    pub allowed_cidr_blocks: Vec<String>,
    /// The balancer group's ingress rules, instead of the default (anyone on 6443 for
    /// internet-facing, the VPC for internal); the cluster itself is admitted as with
    /// `allowed_cidr_blocks`.
    #[serde(default)]
    pub ingress_rules: Vec<IngressRule>,
    /// Existing security groups the balancer carries besides the cluster's `apiserver-lb`
    /// group: used, never modified.
    #[serde(default)]
    pub additional_security_groups: Vec<String>,
    /// The subnets it spans, of the cluster's (one per zone); by default one per zone of the
    /// cluster's public subnets (internal: private ones).
    #[serde(default)]
    pub subnets: Vec<String>,
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
