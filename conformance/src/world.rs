//! A case: the cluster's shape (zones, CIDR, bastion, load balancer scheme, machines) and which
//! resources pre-exist; the proptest strategy over cases; the creation of pre-existing
//! resources through the SDK, as a platform team would have made them; and the cluster and
//! machine specs of a case.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{InstanceType, ResourceType, Tag, TagSpecification};
use proptest::prelude::*;
use provider::spec::machine::{DynamicHostAllocation, NonRootVolume, SpotMarketOptions};
use provider::spec::{Cluster, Machine};
use scenarios::{MachineDecl, Setup};

use crate::census::Census;
use crate::target::Env;
use crate::{Failure, aws_failure, ensure};

const CIDRS: [&str; 3] = ["10.0.0.0/16", "10.128.0.0/17", "172.16.0.0/16"];

/// The secondary range of a case's VPC: the shared address space, which AWS adds beside any
/// primary range, as a range for machines (and pods) is often chosen.
pub const SECONDARY: &str = "100.64.0.0/16";

/// Which resources exist before the cluster.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preexisting {
    /// The VPC.
    pub vpc: bool,
    /// Its internet gateway.
    pub gateway: bool,
    /// Its subnets (public and private per zone).
    pub subnets: bool,
    /// The node security group.
    pub groups: bool,
    /// A bastion instance.
    pub bastion: bool,
    /// The API load balancer.
    pub load_balancer: bool,
}

/// One generated case.
#[derive(Clone, PartialEq, Eq)]
pub struct Case {
    /// 1 to 3 zones.
    pub zones: usize,
    /// The VPC CIDR (created or pre-existing).
    pub cidr: &'static str,
    /// A bastion (the provider's, or the pre-existing one).
    pub bastion: bool,
    /// An internal load balancer.
    pub internal: bool,
    /// 0 to 5 machines.
    pub machines: usize,
    /// Its nodes (not the control plane) are Spot Instances.
    pub spot: bool,
    /// 0 to 2 EBS data volumes per machine besides its root volume.
    pub data_volumes: usize,
    /// The cluster's own VPC gets a secondary range ([`SECONDARY`]) holding its private
    /// subnets (never with a pre-existing VPC: that is the user's, as it is).
    pub secondary: bool,
    /// The cluster's own VPC has its `default` security group emptied
    /// (`emptyRoutesDefaultVPCSecurityGroup`; never with a pre-existing VPC).
    pub empty_default_group: bool,
    /// The cluster's own subnets launch instances with resource names
    /// (`privateDnsHostnameTypeOnLaunch: resource-name`; only when it has subnets of its own).
    pub resource_names: bool,
    /// The spec names rule sources of every kind the provider takes beside roles and IPv4
    /// blocks: node ports restricted to an IPv4 and an IPv6 block, a node rule from an IPv6
    /// block, and (when the cluster makes NAT gateways) one from their addresses.
    pub rule_sources: bool,
    /// The cluster's default subnets in its own VPC prefer public ones
    /// (`subnetSchema: PreferPublic`: the public subnets take the larger ranges).
    pub prefer_public: bool,
    /// The cluster is dual stack (`ipv6`): its own VPC gets an Amazon-provided IPv6 block, a
    /// pre-existing one holds one already; each subnet of its own a /64 of it; its private
    /// subnets of its own go out through an egress-only internet gateway, the user's when
    /// the internet gateway is the user's too ([`Case::users_egress_only`]), else its own.
    pub ipv6: bool,
    /// The cluster's default subnets in its own VPC span zones drawn from its name
    /// (`availabilityZoneSelection: Random`, `availabilityZoneUsageLimit` of them) rather than
    /// the first by name (`availabilityZoneCount`); its machines go to the zones drawn.
    pub random_zones: bool,
    /// What pre-exists.
    pub pre: Preexisting,
    /// 0 to 2 load balancers the cloud controller manager makes for Services once the
    /// cluster is up (tagged `kubernetes.io/cluster/<name>=owned`, in its public subnets).
    pub services: usize,
}

/// The plainest case, which a named test changes field by field: one zone, the first CIDR,
/// nothing else asked for, nothing pre-existing.
impl Default for Case {
    fn default() -> Case {
        Case {
            zones: 1,
            cidr: CIDRS[0],
            bastion: false,
            internal: false,
            machines: 0,
            spot: false,
            data_volumes: 0,
            secondary: false,
            empty_default_group: false,
            resource_names: false,
            rule_sources: false,
            prefer_public: false,
            ipv6: false,
            random_zones: false,
            pre: Preexisting::default(),
            services: 0,
        }
    }
}

/// Cases: every combination the spec and the ownership rules allow.
pub fn cases(max_machines: usize) -> impl Strategy<Value = Case> {
    (
        1..=3usize,
        0..CIDRS.len(),
        any::<bool>(),
        any::<bool>(),
        0..=max_machines,
        proptest::array::uniform6(any::<bool>()),
        0..=2usize,
        (
            any::<bool>(),
            0..=2usize,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                zones,
                cidr,
                bastion,
                internal,
                machines,
                p,
                services,
                (
                    spot,
                    data_volumes,
                    secondary,
                    empty_default_group,
                    resource_names,
                    rule_sources,
                    prefer_public,
                    ipv6,
                    random_zones,
                ),
            )| {
                let subnets = p[2];
                let bastion_pre = p[4] && subnets && bastion;
                let lb_pre = p[5] && subnets;
                let pre = Preexisting {
                    vpc: p[0] || p[1] || subnets || p[3] || bastion_pre || lb_pre,
                    gateway: p[1] || subnets,
                    subnets,
                    groups: p[3],
                    bastion: bastion_pre,
                    load_balancer: lb_pre,
                };
                Case {
                    zones,
                    cidr: CIDRS[cidr],
                    bastion,
                    // A pre-existing load balancer is internet-facing; keep the spec consistent.
                    internal: internal && !lb_pre,
                    machines,
                    spot,
                    data_volumes,
                    secondary: secondary && !pre.vpc,
                    empty_default_group: empty_default_group && !pre.vpc,
                    resource_names: resource_names && !pre.subnets,
                    rule_sources,
                    // Only the default subnets of the cluster's own VPC follow the schema.
                    prefer_public: prefer_public && !pre.vpc && !secondary,
                    ipv6,
                    // Only the default subnets of the cluster's own VPC are drawn so.
                    random_zones: random_zones && !pre.vpc && !secondary,
                    pre,
                    services,
                }
            },
        )
}

/// As derived, except that `resource_names`, `rule_sources`, `prefer_public`, `ipv6` and
/// `random_zones` show only when set: a case's text seeds its
/// faults ([`crate::target::seed_of`]), and the cases kept from before the field existed
/// must draw the faults they failed with.
impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Case");
        d.field("zones", &self.zones)
            .field("cidr", &self.cidr)
            .field("bastion", &self.bastion)
            .field("internal", &self.internal)
            .field("machines", &self.machines)
            .field("spot", &self.spot)
            .field("data_volumes", &self.data_volumes)
            .field("secondary", &self.secondary)
            .field("empty_default_group", &self.empty_default_group);
        if self.resource_names {
            d.field("resource_names", &self.resource_names);
        }
        if self.rule_sources {
            d.field("rule_sources", &self.rule_sources);
        }
        if self.prefer_public {
            d.field("prefer_public", &self.prefer_public);
        }
        if self.ipv6 {
            d.field("ipv6", &self.ipv6);
        }
        if self.random_zones {
            d.field("random_zones", &self.random_zones);
        }
        d.field("pre", &self.pre)
            .field("services", &self.services)
            .finish()
    }
}

impl Case {
    /// Whether the user brings an egress-only internet gateway, named in the spec: a
    /// dual-stack cluster in a VPC whose internet gateway is the user's.
    pub fn users_egress_only(&self) -> bool {
        self.ipv6 && self.pre.gateway
    }

    /// The names of its Service load balancers, for the cluster `cluster`.
    pub fn service_names(&self, cluster: &str) -> Vec<String> {
        (0..self.services)
            .map(|i| {
                let mut n: String = format!("{cluster}-svc{i}");
                n.truncate(32);
                n
            })
            .collect()
    }

    /// The setup of its pre-existing resources.
    pub fn setup(&self) -> Setup {
        Setup {
            vpc: self.pre.vpc.then(|| self.cidr.to_string()),
            vpc_ipv6: self.pre.vpc && self.ipv6,
            gateway: self.pre.gateway,
            egress_only_gateway: self.users_egress_only(),
            subnet_zones: if self.pre.subnets { self.zones } else { 0 },
            security_groups: if self.pre.groups {
                vec!["node".into()]
            } else {
                Vec::new()
            },
            bastion: self.pre.bastion,
            load_balancer: self.pre.load_balancer,
            stray_gateway: false,
            stray_group: false,
            nat_gateway: false,
            map_public_ip_in_first_subnet: false,
            ipam_pool: None,
        }
    }

    /// The cluster's `spec`, naming the pre-existing resources.
    pub fn cluster_spec(&self, ex: &Existing) -> serde_yaml_ng::Value {
        let mut network = serde_yaml_ng::Mapping::new();
        let y = |s: &str| serde_yaml_ng::Value::String(s.to_string());
        if let Some(vpc) = &ex.vpc {
            let mut pairs = vec![("id", y(vpc))];
            if self.ipv6 {
                let named: Vec<(&str, serde_yaml_ng::Value)> = ex
                    .eigw
                    .iter()
                    .map(|g| ("egressOnlyInternetGatewayId", y(g)))
                    .collect();
                pairs.push(("ipv6", yaml_map(&named)));
            }
            network.insert(y("vpc"), yaml_map(&pairs));
            if let Some(igw) = &ex.igw {
                network.insert(y("internetGatewayId"), y(igw));
            }
            let subnets: Vec<serde_yaml_ng::Value> = if self.pre.subnets {
                ex.public
                    .iter()
                    .map(|id| {
                        yaml_map(&[("id", y(id)), ("public", serde_yaml_ng::Value::Bool(true))])
                    })
                    .chain(ex.private.iter().map(|id| yaml_map(&[("id", y(id))])))
                    .collect()
            } else {
                let vpc = self
                    .cidr
                    .parse()
                    .unwrap_or_else(|_| ipnet::Ipv4Net::default());
                provider::spec::default_subnets(vpc, &ex.first_zones(self.zones), false)
                    .into_iter()
                    .map(|p| subnet_yaml(&p))
                    .collect()
            };
            network.insert(y("subnets"), serde_yaml_ng::Value::Sequence(subnets));
        } else if self.secondary {
            // Public subnets from the VPC's range, private ones from the secondary range.
            let mut vpc = self.own_vpc();
            vpc.insert(
                y("secondaryCidrBlocks"),
                serde_yaml_ng::Value::Sequence(vec![yaml_map(&[("ipv4CidrBlock", y(SECONDARY))])]),
            );
            network.insert(y("vpc"), serde_yaml_ng::Value::Mapping(vpc));
            let zones = ex.first_zones(self.zones);
            let split = |range: &str, public: bool| {
                let net = range.parse().unwrap_or_else(|_| ipnet::Ipv4Net::default());
                provider::spec::default_subnets(net, &zones, false)
                    .into_iter()
                    .filter(move |p| p.public == public)
            };
            let subnets = split(self.cidr, true)
                .chain(split(SECONDARY, false))
                .map(|p| subnet_yaml(&p))
                .collect();
            network.insert(y("subnets"), serde_yaml_ng::Value::Sequence(subnets));
        } else {
            let mut vpc = self.own_vpc();
            if self.prefer_public {
                vpc.insert(y("subnetSchema"), y("PreferPublic"));
            }
            let zones = serde_yaml_ng::Value::Number(self.zones.into());
            if self.random_zones {
                // Every region has at least three zones: so many are drawn.
                vpc.insert(y("availabilityZoneUsageLimit"), zones);
                vpc.insert(y("availabilityZoneSelection"), y("Random"));
                network.insert(y("vpc"), serde_yaml_ng::Value::Mapping(vpc));
            } else {
                network.insert(y("vpc"), serde_yaml_ng::Value::Mapping(vpc));
                network.insert(y("availabilityZoneCount"), zones);
            }
        }
        if self.resource_names
            && let Some(serde_yaml_ng::Value::Mapping(vpc)) = network.get_mut(y("vpc"))
        {
            vpc.insert(y("privateDnsHostnameTypeOnLaunch"), y("resource-name"));
        }
        if self.rule_sources {
            network.insert(
                y("nodePortIngressRuleCidrBlocks"),
                serde_yaml_ng::Value::Sequence(vec![y("198.51.100.0/24"), y("2001:DB8:0::/48")]),
            );
        }
        let mut spec = serde_yaml_ng::Mapping::new();
        spec.insert(y("region"), y(&ex.region));
        if self.rule_sources {
            let mut rules = vec![yaml_map(&[
                ("description", y("metrics from the office")),
                ("protocol", y("tcp")),
                ("fromPort", serde_yaml_ng::Value::Number(9100.into())),
                ("toPort", serde_yaml_ng::Value::Number(9100.into())),
                (
                    "ipv6CidrBlocks",
                    serde_yaml_ng::Value::Sequence(vec![y("2001:db8:1::/48")]),
                ),
            ])];
            // The cluster's own private subnets come with its own NAT gateways.
            if !self.pre.subnets {
                rules.push(yaml_map(&[
                    ("description", y("webhooks through NAT")),
                    ("protocol", y("tcp")),
                    ("fromPort", serde_yaml_ng::Value::Number(8443.into())),
                    ("toPort", serde_yaml_ng::Value::Number(8443.into())),
                    ("natGatewaysIPsSource", serde_yaml_ng::Value::Bool(true)),
                ]));
            }
            spec.insert(
                y("additionalNodeIngressRules"),
                serde_yaml_ng::Value::Sequence(rules),
            );
            // A group of the user's as a source: named in a rule, never modified.
            if let Some(sg) = ex.groups.get("node") {
                spec.insert(
                    y("additionalControlPlaneIngressRules"),
                    serde_yaml_ng::Value::Sequence(vec![yaml_map(&[
                        ("description", y("node exporter from a group of the user")),
                        ("protocol", y("tcp")),
                        ("fromPort", serde_yaml_ng::Value::Number(9100.into())),
                        ("toPort", serde_yaml_ng::Value::Number(9100.into())),
                        (
                            "sourceSecurityGroupIds",
                            serde_yaml_ng::Value::Sequence(vec![y(sg)]),
                        ),
                    ])]),
                );
            }
        }
        spec.insert(y("network"), serde_yaml_ng::Value::Mapping(network));
        if let Some(sg) = ex.groups.get("node") {
            spec.insert(y("securityGroupOverrides"), yaml_map(&[("node", y(sg))]));
        }
        if let Some(b) = &ex.bastion {
            spec.insert(y("bastion"), yaml_map(&[("id", y(b))]));
        } else if self.bastion {
            spec.insert(
                y("bastion"),
                yaml_map(&[
                    ("enabled", serde_yaml_ng::Value::Bool(true)),
                    (
                        "allowedCidrBlocks",
                        serde_yaml_ng::Value::Sequence(vec![y("203.0.113.0/24")]),
                    ),
                ]),
            );
        }
        let mut lb = Vec::new();
        if let Some(name) = &ex.lb {
            lb.push(("existingName", y(name)));
        } else if self.internal {
            lb.push(("scheme", y("internal")));
        }
        if self.rule_sources {
            // The API balancer's group restricted to the office, the cluster still admitted.
            lb.push((
                "ingressRules",
                serde_yaml_ng::Value::Sequence(vec![yaml_map(&[
                    ("description", y("Kubernetes API from the office")),
                    ("protocol", y("tcp")),
                    ("fromPort", serde_yaml_ng::Value::Number(6443.into())),
                    ("toPort", serde_yaml_ng::Value::Number(6443.into())),
                    (
                        "cidrBlocks",
                        serde_yaml_ng::Value::Sequence(vec![y("198.51.100.0/24")]),
                    ),
                ])]),
            ));
        }
        if !lb.is_empty() {
            spec.insert(y("controlPlaneLoadBalancer"), yaml_map(&lb));
        }
        serde_yaml_ng::Value::Mapping(spec)
    }

    /// The cluster's own VPC in its spec: its CIDR, and whether its default group is emptied.
    fn own_vpc(&self) -> serde_yaml_ng::Mapping {
        let mut vpc = serde_yaml_ng::Mapping::new();
        vpc.insert("cidrBlock".into(), self.cidr.into());
        if self.empty_default_group {
            vpc.insert("emptyRoutesDefaultVPCSecurityGroup".into(), true.into());
        }
        if self.ipv6 {
            vpc.insert(
                "ipv6".into(),
                serde_yaml_ng::Value::Mapping(serde_yaml_ng::Mapping::new()),
            );
        }
        vpc
    }

    /// The zones of the cluster's subnets, where its machines go: with its own default
    /// subnets, the first of the region by name, or with [`Case::random_zones`] those the
    /// spec of `cluster` draws from the region's availability zones ([`Env::zones`], by the
    /// provider's plan); with subnets named in the spec, the first by name, as
    /// [`Case::cluster_spec`] names them.
    pub fn cluster_zones(&self, env: &Env, cluster: &Cluster) -> Result<Vec<String>, Failure> {
        if !self.random_zones {
            return Ok(env.first_zones(self.zones));
        }
        let region = &env.zones;
        let plan = provider::spec::validate(cluster, region)
            .map_err(|e| Failure::Check(format!("the case's cluster spec: {e}")))?;
        let drawn: std::collections::BTreeSet<String> =
            plan.subnets.iter().filter_map(|p| p.zone.clone()).collect();
        ensure(drawn.len() == self.zones, || {
            format!(
                "the spec draws the zones {drawn:?} of {region:?}, not {} zones",
                self.zones
            )
        })?;
        Ok(drawn.into_iter().collect())
    }

    /// The case on a region with `open` availability zones ([`Env::zones`]): as it is, or with
    /// as many zones as the region has when it has fewer than the case draws (us-west-1 gives
    /// new accounts two).
    pub fn fitted(&self, open: usize) -> Case {
        Case {
            zones: self.zones.min(open.max(1)),
            ..self.clone()
        }
    }

    /// Its machines: one control plane (init) then nodes, spread over the cluster's `zones`
    /// ([`Case::cluster_zones`]).
    pub fn machine_decls(&self, zones: &[String]) -> Vec<MachineDecl> {
        (0..self.machines)
            .map(|i| MachineDecl {
                name: if i == 0 {
                    "cp-0".into()
                } else {
                    format!("node-{i}")
                },
                role: if i == 0 {
                    "controlplane".into()
                } else {
                    "node".into()
                },
                zone: zones.get(i % zones.len().max(1)).cloned(),
                public_ip: false,
                additional_security_groups: Vec::new(),
                ami_id: None,
                spot: self.spot && i > 0,
                data_volumes: self.data_volumes,
                dynamic_host: false,
            })
            .collect()
    }

    /// What the cluster should own once reconciled and its machines created.
    pub fn expected(&self) -> Census {
        let mut c = Census::new();
        let mut put = |k: &str, n: usize| {
            if n > 0 {
                c.insert(k.to_string(), n);
            }
        };
        let managed_subnets = !self.pre.subnets;
        put("vpc", usize::from(!self.pre.vpc));
        put("subnet", if managed_subnets { 2 * self.zones } else { 0 });
        put("internetGateway", usize::from(!self.pre.gateway));
        put(
            "egressOnlyInternetGateway",
            usize::from(self.ipv6 && managed_subnets && !self.users_egress_only()),
        );
        put("natGateway", if managed_subnets { self.zones } else { 0 });
        put("elasticIp", if managed_subnets { self.zones } else { 0 });
        put(
            "routeTable",
            if managed_subnets { 2 * self.zones } else { 0 },
        );
        put("securityGroup", if self.pre.groups { 4 } else { 5 });
        let bastion = usize::from(self.bastion && !self.pre.bastion);
        put("bastion", bastion);
        put("loadBalancer", usize::from(!self.pre.load_balancer));
        put("machine", self.machines);
        put("volume", bastion + self.machines * (1 + self.data_volumes));
        c
    }
}

/// `n` data volumes of 8 GiB of gp3, as `/dev/sdb`, `/dev/sdc`, ... (at most 24: `sdz`).
fn data_volumes(n: usize) -> Result<Vec<NonRootVolume>, Failure> {
    if n > 24 {
        return Err(Failure::Check(format!(
            "{n} data volumes: a machine has at most 24"
        )));
    }
    Ok((b'b'..=b'z')
        .take(n)
        .map(|letter| NonRootVolume {
            device_name: format!("/dev/sd{}", char::from(letter)),
            size: 8,
            r#type: Some("gp3".into()),
            iops: None,
            throughput: None,
            encrypted: false,
            encryption_key: None,
        })
        .collect())
}

/// A planned subnet as the spec names one to create.
fn subnet_yaml(p: &provider::spec::PlannedSubnet) -> serde_yaml_ng::Value {
    let y = |s: &str| serde_yaml_ng::Value::String(s.to_string());
    yaml_map(&[
        (
            "cidrBlock",
            y(&p.cidr.map(|c| c.to_string()).unwrap_or_default()),
        ),
        ("availabilityZone", y(p.zone.as_deref().unwrap_or_default())),
        ("public", serde_yaml_ng::Value::Bool(p.public)),
    ])
}

fn yaml_map(pairs: &[(&str, serde_yaml_ng::Value)]) -> serde_yaml_ng::Value {
    let mut m = serde_yaml_ng::Mapping::new();
    for (k, v) in pairs {
        m.insert(serde_yaml_ng::Value::String((*k).to_string()), v.clone());
    }
    serde_yaml_ng::Value::Mapping(m)
}

/// What a setup created, to name in specs.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// The region.
    pub region: String,
    /// The region's availability zones by name ([`Env::zones`]).
    pub zones: Vec<String>,
    /// The VPC.
    pub vpc: Option<String>,
    /// The gateway.
    pub igw: Option<String>,
    /// A gateway attached to no VPC.
    pub stray_igw: Option<String>,
    /// An egress-only internet gateway in the VPC.
    pub eigw: Option<String>,
    /// A group in a VPC of its own (`${strayGroup}`).
    pub stray_group: Option<String>,
    /// Public subnets, by zone order.
    pub public: Vec<String>,
    /// Private subnets, by zone order.
    pub private: Vec<String>,
    /// Groups by role.
    pub groups: BTreeMap<String, String>,
    /// The bastion.
    pub bastion: Option<String>,
    /// The load balancer's name.
    pub lb: Option<String>,
    /// The IPAM holding `ipam_pool`.
    pub ipam: Option<String>,
    /// The IPAM pool (its id).
    pub ipam_pool: Option<String>,
    /// The IPAM pool's `Name` tag.
    pub ipam_pool_name: Option<String>,
}

impl Existing {
    /// The first `n` of the region's availability zones by name.
    pub fn first_zones(&self, n: usize) -> Vec<String> {
        self.zones.iter().take(n).cloned().collect()
    }

    /// Replaces `${vpc}`, `${igw}`, `${strayIgw}`, `${public.N}`, `${private.N}`, `${sg.ROLE}`, `${bastion}`,
    /// `${lb}`, `${ipamPool}` and `${ipamPoolName}` in `text`.
    pub fn substitute(&self, text: &str) -> String {
        let mut out = text.to_string();
        let mut pairs: Vec<(String, String)> = Vec::new();
        if let Some(v) = &self.vpc {
            pairs.push(("${vpc}".into(), v.clone()));
        }
        if let Some(v) = &self.igw {
            pairs.push(("${igw}".into(), v.clone()));
        }
        if let Some(v) = &self.stray_igw {
            pairs.push(("${strayIgw}".into(), v.clone()));
        }
        if let Some(v) = &self.eigw {
            pairs.push(("${eigw}".into(), v.clone()));
        }
        if let Some(v) = &self.stray_group {
            pairs.push(("${strayGroup}".into(), v.clone()));
        }
        for (i, s) in self.public.iter().enumerate() {
            pairs.push((format!("${{public.{i}}}"), s.clone()));
        }
        for (i, s) in self.private.iter().enumerate() {
            pairs.push((format!("${{private.{i}}}"), s.clone()));
        }
        for (r, g) in &self.groups {
            pairs.push((format!("${{sg.{r}}}"), g.clone()));
        }
        if let Some(v) = &self.bastion {
            pairs.push(("${bastion}".into(), v.clone()));
        }
        if let Some(v) = &self.lb {
            pairs.push(("${lb}".into(), v.clone()));
        }
        if let Some(v) = &self.ipam_pool_name {
            pairs.push(("${ipamPoolName}".into(), v.clone()));
        }
        if let Some(v) = &self.ipam_pool {
            pairs.push(("${ipamPool}".into(), v.clone()));
        }
        for (k, v) in pairs {
            out = out.replace(&k, &v);
        }
        out
    }
}

fn tags(env: &Env, origin: &str, rt: ResourceType) -> TagSpecification {
    let mut b = TagSpecification::builder()
        .resource_type(rt)
        .tags(Tag::builder().key(crate::ORIGIN_TAG).value(origin).build());
    for (k, v) in env.run_tags() {
        b = b.tags(Tag::builder().key(k).value(v).build());
    }
    b.build()
}

/// Creates what `setup` asks, tagged `origin` and with the run's tags, as a user's own.
pub async fn create_setup(env: &Env, setup: &Setup, origin: &str) -> Result<Existing, Failure> {
    // The suite's own setup runs calm: a bad day is for the provider.
    let _calm = env.calm();
    let ec2 = &env.clients.ec2;
    let mut ex = Existing {
        region: env.region.clone(),
        zones: env.zones.clone(),
        ..Existing::default()
    };
    if let Some(cidr) = &setup.ipam_pool {
        create_ipam_pool(env, cidr, origin, &mut ex).await?;
    }
    let Some(cidr) = &setup.vpc else {
        return Ok(ex);
    };
    let new_vpc = |cidr: String| async move {
        ec2.create_vpc()
            .cidr_block(cidr)
            .tag_specifications(tags(env, origin, ResourceType::Vpc))
            .send()
            .await
            .map_err(aws_failure("CreateVpc"))
            .map(|o| o.vpc.and_then(|v| v.vpc_id).unwrap_or_default())
    };
    let vpc = new_vpc(cidr.clone()).await?;
    let new_group = |vpc: String, name: String, description: String| async move {
        ec2.create_security_group()
            .vpc_id(vpc)
            .group_name(name)
            .description(description)
            .tag_specifications(tags(env, origin, ResourceType::SecurityGroup))
            .send()
            .await
            .map_err(aws_failure("CreateSecurityGroup"))
            .map(|o| o.group_id.unwrap_or_default())
    };
    ex.vpc = Some(vpc.clone());
    let new_gateway = || async {
        ec2.create_internet_gateway()
            .tag_specifications(tags(env, origin, ResourceType::InternetGateway))
            .send()
            .await
            .map_err(aws_failure("CreateInternetGateway"))
            .map(|o| {
                o.internet_gateway
                    .and_then(|g| g.internet_gateway_id)
                    .unwrap_or_default()
            })
    };
    let new_route_table = || async {
        ec2.create_route_table()
            .vpc_id(&vpc)
            .tag_specifications(tags(env, origin, ResourceType::RouteTable))
            .send()
            .await
            .map_err(aws_failure("CreateRouteTable"))
            .map(|o| {
                o.route_table
                    .and_then(|r| r.route_table_id)
                    .unwrap_or_default()
            })
    };
    if setup.gateway {
        let igw = new_gateway().await?;
        ec2.attach_internet_gateway()
            .internet_gateway_id(&igw)
            .vpc_id(&vpc)
            .send()
            .await
            .map_err(aws_failure("AttachInternetGateway"))?;
        ex.igw = Some(igw);
    }
    if setup.stray_gateway {
        ex.stray_igw = Some(new_gateway().await?);
    }
    if setup.vpc_ipv6 {
        ec2.associate_vpc_cidr_block()
            .vpc_id(&vpc)
            .amazon_provided_ipv6_cidr_block(true)
            .send()
            .await
            .map_err(aws_failure("AssociateVpcCidrBlock"))?;
    }
    if setup.egress_only_gateway {
        let eigw = ec2
            .create_egress_only_internet_gateway()
            .vpc_id(&vpc)
            .tag_specifications(tags(env, origin, ResourceType::EgressOnlyInternetGateway))
            .send()
            .await
            .map_err(aws_failure("CreateEgressOnlyInternetGateway"))?
            .egress_only_internet_gateway
            .and_then(|g| g.egress_only_internet_gateway_id)
            .unwrap_or_default();
        ex.eigw = Some(eigw);
    }
    if setup.stray_group {
        let other = new_vpc("10.254.0.0/24".to_string()).await?;
        let group = new_group(
            other,
            format!("{origin}-stray"),
            "a group of another VPC".into(),
        )
        .await?;
        ex.stray_group = Some(group);
    }
    if setup.subnet_zones > 0 {
        let net: ipnet::Ipv4Net = cidr
            .parse()
            .map_err(|_| Failure::Check(format!("setup.vpc {cidr} is not a CIDR")))?;
        let zones = env.first_zones(setup.subnet_zones);
        let rt = new_route_table().await?;
        if let Some(igw) = &ex.igw {
            ec2.create_route()
                .route_table_id(&rt)
                .destination_cidr_block("0.0.0.0/0")
                .gateway_id(igw)
                .send()
                .await
                .map_err(aws_failure("CreateRoute"))?;
        }
        for p in provider::spec::default_subnets(net, &zones, false) {
            let id = ec2
                .create_subnet()
                .vpc_id(&vpc)
                .cidr_block(p.cidr.map(|c| c.to_string()).unwrap_or_default())
                .availability_zone(p.zone.clone().unwrap_or_default())
                .tag_specifications(tags(env, origin, ResourceType::Subnet))
                .send()
                .await
                .map_err(aws_failure("CreateSubnet"))?
                .subnet
                .and_then(|s| s.subnet_id)
                .unwrap_or_default();
            if p.public && ex.public.is_empty() && setup.map_public_ip_in_first_subnet {
                ec2.modify_subnet_attribute()
                    .subnet_id(&id)
                    .map_public_ip_on_launch(
                        aws_sdk_ec2::types::AttributeBooleanValue::builder()
                            .value(true)
                            .build(),
                    )
                    .send()
                    .await
                    .map_err(aws_failure("ModifySubnetAttribute"))?;
            }
            if p.public {
                ec2.associate_route_table()
                    .route_table_id(&rt)
                    .subnet_id(&id)
                    .send()
                    .await
                    .map_err(aws_failure("AssociateRouteTable"))?;
                ex.public.push(id);
            } else {
                ex.private.push(id);
            }
        }
    }
    if setup.nat_gateway
        && let Some(subnet) = ex.public.first()
    {
        let eip = ec2
            .allocate_address()
            .domain(aws_sdk_ec2::types::DomainType::Vpc)
            .tag_specifications(tags(env, origin, ResourceType::ElasticIp))
            .send()
            .await
            .map_err(aws_failure("AllocateAddress"))?
            .allocation_id
            .unwrap_or_default();
        let nat = ec2
            .create_nat_gateway()
            .subnet_id(subnet)
            .allocation_id(eip)
            .tag_specifications(tags(env, origin, ResourceType::Natgateway))
            .send()
            .await
            .map_err(aws_failure("CreateNatGateway"))?
            .nat_gateway
            .and_then(|n| n.nat_gateway_id)
            .unwrap_or_default();
        let rt = new_route_table().await?;
        ec2.create_route()
            .route_table_id(&rt)
            .destination_cidr_block("0.0.0.0/0")
            .nat_gateway_id(nat)
            .send()
            .await
            .map_err(aws_failure("CreateRoute"))?;
        for id in &ex.private {
            ec2.associate_route_table()
                .route_table_id(&rt)
                .subnet_id(id)
                .send()
                .await
                .map_err(aws_failure("AssociateRouteTable"))?;
        }
    }
    for role in &setup.security_groups {
        let id = new_group(
            vpc.clone(),
            format!("{origin}-{role}"),
            format!("the platform team's {role} group"),
        )
        .await?;
        ex.groups.insert(role.clone(), id);
    }
    if setup.bastion
        && let Some(subnet) = ex.public.first()
    {
        let ami = ec2
            .describe_images()
            .owners(provider::cluster::bastion::CANONICAL)
            .filters(
                aws_sdk_ec2::types::Filter::builder()
                    .name("name")
                    .values(provider::cluster::bastion::UBUNTU_PATTERN)
                    .build(),
            )
            .send()
            .await
            .map_err(aws_failure("DescribeImages"))?
            .images()
            .iter()
            .max_by(|a, b| a.creation_date().cmp(&b.creation_date()))
            .and_then(|i| i.image_id().map(String::from))
            .unwrap_or_default();
        let id = ec2
            .run_instances()
            .image_id(ami)
            .instance_type(InstanceType::T3Micro)
            .subnet_id(subnet)
            .min_count(1)
            .max_count(1)
            .tag_specifications(tags(env, origin, ResourceType::Instance))
            .send()
            .await
            .map_err(aws_failure("RunInstances"))?
            .instances()
            .first()
            .and_then(|i| i.instance_id().map(String::from))
            .unwrap_or_default();
        // Running before the snapshots, so that they compare a settled state.
        settled(
            env,
            &format!("the pre-existing bastion {id} never reached running"),
            || async {
                let now = crate::runner::states(env, std::slice::from_ref(&id)).await?;
                Ok(now.iter().any(|(_, state)| state == "running"))
            },
        )
        .await?;
        ex.bastion = Some(id);
    }
    if setup.load_balancer && !ex.public.is_empty() {
        let name = format!("{origin}-byo");
        let mut call = env
            .clients
            .elb
            .create_load_balancer()
            .load_balancer_name(&name)
            .listeners(
                aws_sdk_elasticloadbalancing::types::Listener::builder()
                    .protocol("TCP")
                    .load_balancer_port(6443)
                    .instance_port(6443)
                    .build()
                    .map_err(|e| Failure::Check(e.to_string()))?,
            )
            .set_subnets(Some(ex.public.clone()));
        let mut all = env.run_tags();
        all.push((crate::ORIGIN_TAG.to_string(), origin.to_string()));
        for (k, v) in all {
            if let Ok(t) = aws_sdk_elasticloadbalancing::types::Tag::builder()
                .key(k)
                .value(v)
                .build()
            {
                call = call.tags(t);
            }
        }
        call.send()
            .await
            .map_err(aws_failure("CreateLoadBalancer"))?;
        ex.lb = Some(name);
    }
    Ok(ex)
}

/// An IPAM operating in the target's region and an IPv4 pool of its private scope, of the
/// region, with `cidr` provisioned, tagged `origin` (the pool also `Name=<origin>-pool`) and
/// with the run's tags; waits until the CIDR is provisioned ([`settled`]), so that snapshots
/// compare a settled pool.
async fn create_ipam_pool(
    env: &Env,
    cidr: &str,
    origin: &str,
    ex: &mut Existing,
) -> Result<(), Failure> {
    let ec2 = &env.clients.ec2;
    let ipam = ec2
        .create_ipam()
        .operating_regions(
            aws_sdk_ec2::types::AddIpamOperatingRegion::builder()
                .region_name(&env.region)
                .build(),
        )
        .tag_specifications(tags(env, origin, ResourceType::Ipam))
        .send()
        .await
        .map_err(aws_failure("CreateIpam"))?
        .ipam
        .ok_or_else(|| Failure::Check("CreateIpam answered no IPAM".into()))?;
    let ipam_id = ipam.ipam_id().unwrap_or_default().to_string();
    let scope = ipam
        .private_default_scope_id()
        .unwrap_or_default()
        .to_string();
    ex.ipam = Some(ipam_id);
    let name = format!("{origin}-pool");
    let mut pool_tags = tags(env, origin, ResourceType::IpamPool);
    pool_tags
        .tags
        .get_or_insert_with(Vec::new)
        .push(Tag::builder().key("Name").value(&name).build());
    let pool = ec2
        .create_ipam_pool()
        .ipam_scope_id(scope)
        .address_family(aws_sdk_ec2::types::AddressFamily::Ipv4)
        .locale(&env.region)
        .tag_specifications(pool_tags)
        .send()
        .await
        .map_err(aws_failure("CreateIpamPool"))?
        .ipam_pool
        .and_then(|p| p.ipam_pool_id)
        .unwrap_or_default();
    ex.ipam_pool = Some(pool.clone());
    ex.ipam_pool_name = Some(name);
    ec2.provision_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .cidr(cidr)
        .send()
        .await
        .map_err(aws_failure("ProvisionIpamPoolCidr"))?;
    settled(
        env,
        &format!("the pre-existing IPAM pool {pool} never provisioned {cidr}"),
        || async {
            let cidrs = ec2
                .get_ipam_pool_cidrs()
                .ipam_pool_id(&pool)
                .send()
                .await
                .map_err(aws_failure("GetIpamPoolCidrs"))?;
            Ok(cidrs.ipam_pool_cidrs().iter().any(|c| {
                c.cidr() == Some(cidr)
                    && c.state() == Some(&aws_sdk_ec2::types::IpamPoolCidrState::Provisioned)
            }))
        },
    )
    .await
}

/// Asks `done` until it answers true: in-process, moving the fake's clock between asks;
/// against AWS, a poll interval at a time, for 10 minutes at most; then the failure `never`.
async fn settled<F, Fut>(env: &Env, never: &str, mut done: F) -> Result<(), Failure>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, Failure>>,
{
    for _ in 0..=600 {
        if done().await? {
            return Ok(());
        }
        env.pause(env.target.poll().max(std::time::Duration::from_secs(1)))
            .await;
    }
    Err(Failure::Check(never.to_string()))
}

/// The cluster named `name` from a `spec` value, with the run's tags added.
pub fn cluster(env: &Env, name: &str, spec: &serde_yaml_ng::Value) -> Result<Cluster, Failure> {
    let mut spec = spec.clone();
    if let Some(m) = spec.as_mapping_mut() {
        let key = serde_yaml_ng::Value::String("additionalTags".into());
        let mut tags = m
            .get(&key)
            .and_then(|v| v.as_mapping().cloned())
            .unwrap_or_default();
        for (k, v) in env.run_tags() {
            tags.insert(
                serde_yaml_ng::Value::String(k),
                serde_yaml_ng::Value::String(v),
            );
        }
        m.insert(key, serde_yaml_ng::Value::Mapping(tags));
    }
    let doc = yaml_map(&[
        (
            "apiVersion",
            serde_yaml_ng::Value::String(provider::spec::API_VERSION.into()),
        ),
        ("kind", serde_yaml_ng::Value::String("Cluster".into())),
        (
            "metadata",
            yaml_map(&[("name", serde_yaml_ng::Value::String(name.into()))]),
        ),
        ("spec", spec),
    ]);
    serde_yaml_ng::from_value(doc).map_err(|e| Failure::Check(format!("cluster spec: {e}")))
}

/// The machines of `cluster` from their declarations: the first control plane inits, the
/// others join.
pub fn machines(
    env: &Env,
    cluster: &Cluster,
    decls: &[MachineDecl],
) -> Result<Vec<Machine>, Failure> {
    let mut out = Vec::new();
    let mut first_cp = true;
    for d in decls {
        let cp = d.role == "controlplane";
        let init = cp && first_cp;
        if cp {
            first_cp = false;
        }
        let mut tags: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in env.run_tags() {
            tags.insert(k, v);
        }
        let yaml = format!(
            "apiVersion: {api}\nkind: Machine\nmetadata: {{name: {cluster}-{name}}}\nspec:\n  clusterName: {cluster}\n  role: {role}\n  ami: {{lookup: {{baseOS: ubuntu-24.04}}}}\n  instanceType: t3.large\n  subnet: {{availabilityZone: {zone}}}\n  kubeadm:\n    operation: {op}\n    kubernetesVersion: v1.31.0\n",
            api = provider::spec::API_VERSION,
            cluster = cluster.metadata.name,
            name = d.name,
            role = d.role,
            zone = d
                .zone
                .clone()
                .or_else(|| env.zones.first().cloned())
                .unwrap_or_default(),
            op = if init { "init" } else { "join" },
        );
        let mut docs = provider::spec::parse_documents(&yaml, &d.name)?;
        let Some(mut m) = docs.machines.pop() else {
            return Err(Failure::Check(format!("machine {} did not parse", d.name)));
        };
        // On real AWS the node image (images/) lives in the account that built it.
        if let (Ok(owner), Some(l)) = (
            std::env::var("CONFORMANCE_AMI_OWNER"),
            m.spec.ami.lookup.as_mut(),
        ) {
            l.owner = Some(owner);
        }
        m.spec.additional_tags = tags;
        m.spec.public_ip = d.public_ip;
        m.spec.additional_security_groups = d.additional_security_groups.clone();
        if let Some(id) = &d.ami_id {
            m.spec.ami.id = Some(id.clone());
            m.spec.ami.lookup = None;
        }
        if d.spot {
            m.spec.spot_market_options = Some(SpotMarketOptions::default());
        }
        if d.dynamic_host {
            m.spec.dynamic_host_allocation = Some(DynamicHostAllocation::default());
        }
        m.spec.non_root_volumes = data_volumes(d.data_volumes)?;
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_fits_a_region_with_fewer_zones_and_keeps_the_rest() {
        let case = Case {
            zones: 3,
            bastion: true,
            machines: 2,
            data_volumes: 1,
            ..Case::default()
        };
        // us-west-1 gives new accounts two zones: two subnets, NAT gateways and route tables
        // fewer are expected.
        let two = case.fitted(2);
        assert_eq!(two.zones, 2);
        assert_eq!(two.expected().get("subnet"), Some(&4));
        assert_eq!(
            Case {
                zones: 3,
                ..two.clone()
            },
            case
        );
        // A region with as many or more keeps the case as it is.
        assert_eq!(case.fitted(3), case);
        assert_eq!(case.fitted(5), case);
    }
}
