//! The spec's defaults: the VPC CIDR and its split into subnets, the bastion type, the load
//! balancer's name (hashed to fit ELB's 32 characters) and idle timeout, calico's CNI rules;
//! and [`Plan`], a validated spec with its defaults filled in.

use std::collections::BTreeMap;

use ipnet::{Ipv4Net, Ipv6Net};

use super::{ClusterSpec, CniRule, HealthCheckSpec};

/// The default VPC CIDR.
pub const DEFAULT_VPC_CIDR: &str = "10.0.0.0/16";
/// The default bastion instance type.
pub const DEFAULT_BASTION_TYPE: &str = "t3.micro";
/// The default idle timeout of the API load balancer.
pub const DEFAULT_IDLE_TIMEOUT: i32 = 600;
/// AWS allows 50 tags per resource; the provider uses up to this many of its own.
pub(super) const OWN_TAGS: usize = 7;

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
    /// The /64 of the VPC's IPv6 block the spec names for it (one to create).
    pub ipv6: Option<Ipv6Net>,
    /// The spec's tags of this subnet alone (one to create).
    pub tags: BTreeMap<String, String>,
}

/// What kind of zone a zone is (DescribeAvailabilityZones' `ZoneType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZoneKind {
    /// An availability zone of the region (`availability-zone`).
    #[default]
    AvailabilityZone,
    /// A Local Zone (`local-zone`): AWS in a metropolitan area, tied to a parent zone.
    LocalZone,
    /// A Wavelength Zone (`wavelength-zone`): AWS in a carrier's 5G network, tied to a
    /// parent zone, reached from the internet through a carrier gateway.
    WavelengthZone,
}

impl ZoneKind {
    /// The kind of a zone of `ZoneType` `t`, when it is one subnets go to.
    pub fn of_type(t: &str) -> Option<ZoneKind> {
        match t {
            "availability-zone" => Some(ZoneKind::AvailabilityZone),
            "local-zone" => Some(ZoneKind::LocalZone),
            "wavelength-zone" => Some(ZoneKind::WavelengthZone),
            _ => None,
        }
    }

    /// Its `ZoneType`.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneKind::AvailabilityZone => "availability-zone",
            ZoneKind::LocalZone => "local-zone",
            ZoneKind::WavelengthZone => "wavelength-zone",
        }
    }

    /// A Local Zone or a Wavelength Zone.
    pub fn is_edge(self) -> bool {
        self != ZoneKind::AvailabilityZone
    }
}

/// A zone the account may place subnets in: the region's availability zones, and the Local
/// Zones and Wavelength Zones it opted in to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// Its name (`us-east-1a`, `us-east-1-bos-1a`, `us-east-1-wl1-bos-wlz-1`).
    pub name: String,
    /// Its kind.
    pub kind: ZoneKind,
    /// An edge zone's parent availability zone.
    pub parent: Option<String>,
    /// An edge zone's network border group (`us-east-1-bos-1`): where the public addresses
    /// of its subnets come from.
    pub border_group: Option<String>,
    /// A constrained availability zone ([`CONSTRAINED_ZONE_IDS`]): the default subnets do not
    /// go there; a subnet the spec names may.
    pub constrained: bool,
}

/// The AZ ids of availability zones AWS constrains: `use1-az3`, which takes none of the
/// current instance types (a launch of `t3.micro` or `m5.large` there is `Unsupported`), and
/// `usw1-az2` and `cac1-az3`, closed to new customers (eksctl avoids the same three). Zone
/// names map to AZ ids per account in the oldest regions, so the ids tell them.
pub const CONSTRAINED_ZONE_IDS: [&str; 3] = ["use1-az3", "usw1-az2", "cac1-az3"];

impl Zone {
    /// The availability zone `name`.
    pub fn availability_zone(name: &str) -> Zone {
        Zone {
            name: name.to_string(),
            kind: ZoneKind::AvailabilityZone,
            parent: None,
            border_group: None,
            constrained: false,
        }
    }
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
    /// The VPC's secondary IPv4 ranges (only for a VPC the cluster creates).
    pub secondary_cidrs: Vec<Ipv4Net>,
    /// The subnets, existing and to create.
    pub subnets: Vec<PlannedSubnet>,
    /// The VPC's range comes from an IPAM pool and the spec names no subnets: the default
    /// subnets are cut from the range the VPC gets, over these zones, once it is known
    /// ([`Plan::subnets`] stays empty).
    pub subnets_from_vpc_range: Option<Vec<String>>,
    /// An existing VPC given without subnets: the cluster uses the VPC's own subnets, found
    /// (and classified public or private by their routes) when the plan is made.
    pub discover_subnets: bool,
    /// The load balancer's name.
    pub load_balancer_name: String,
    /// The health check.
    pub health_check: HealthCheckSpec,
    /// The idle timeout.
    pub idle_timeout: i32,
    /// CNI rules.
    pub cni_rules: Vec<CniRule>,
    /// The zones the plan was made against (availability zones, opted-in edge zones).
    pub zones: Vec<Zone>,
}

impl Plan {
    /// The kind of the zone `name` (an availability zone when the plan does not know it).
    pub fn zone_kind(&self, name: &str) -> ZoneKind {
        self.zones
            .iter()
            .find(|z| z.name == name)
            .map(|z| z.kind)
            .unwrap_or_default()
    }

    /// Whether AWS constrains the zone `name` (`spec::CONSTRAINED_ZONE_IDS`: closed to new
    /// capacity, few instance types offered), as DescribeAvailabilityZones' ids tell.
    pub fn zone_constrained(&self, name: &str) -> bool {
        self.zones.iter().any(|z| z.name == name && z.constrained)
    }

    /// The network border group of the edge zone `name` (None for an availability zone,
    /// whose addresses are the region's).
    pub fn border_group(&self, name: &str) -> Option<&str> {
        self.zones
            .iter()
            .find(|z| z.name == name && z.kind.is_edge())
            .and_then(|z| z.border_group.as_deref())
    }

    /// The parent availability zone of the edge zone `name`.
    pub fn parent_zone(&self, name: &str) -> Option<&str> {
        self.zones
            .iter()
            .find(|z| z.name == name)
            .and_then(|z| z.parent.as_deref())
    }
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

/// The default subnets of `vpc` over `zones`: the VPC split into (zones + 1) equal parts
/// (rounded up to a power of two); the first part split again into (zones + 1) pieces for the
/// public subnets, the next parts private, one per zone. A /16 over 3 zones gives public /20s
/// and private /18s (as Cluster API's AWS provider does); a piece always stays free. With
/// `prefer_public` (CAPA's `PreferPublic` subnet schema) the two roles are swapped: the
/// public subnets take the parts, the private ones the pieces of the first.
pub fn default_subnets(vpc: Ipv4Net, zones: &[String], prefer_public: bool) -> Vec<PlannedSubnet> {
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
    // n + 1 pieces of the first part (public by default): one always stays free, so the VPC
    // keeps room to grow.
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
                public: !prefer_public,
                ipv6: None,
                tags: Default::default(),
            });
        }
        if let Some(c) = pieces.get(i + 1) {
            out.push(PlannedSubnet {
                id: None,
                cidr: Some(*c),
                zone: Some(zone.clone()),
                public: prefer_public,
                ipv6: None,
                tags: Default::default(),
            });
        }
    }
    out
}
