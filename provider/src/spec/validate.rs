//! Validation of a cluster spec: every problem listed at once, by field, and the defaults
//! filled in to make a [`Plan`]. One function per part of the spec (metadata, network,
//! security-group rules, bastion, load balancer) and one per kind of value (CIDR, id, rule,
//! tags).

use std::collections::BTreeMap;

use ipnet::{Ipv4Net, Ipv6Net};

use super::defaults::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_VPC_CIDR, OWN_TAGS, Plan, PlannedSubnet, Zone, ZoneKind,
    default_cni_rules, default_subnets, load_balancer_name,
};
use super::types::{
    DEFAULT_IPAM_NETMASK_LENGTH, HOSTNAME_TYPES, IpamPool, POOL_FALLBACKS, SUBNET_SCHEMAS,
};
use super::{API_VERSION, Cluster, ClusterSpec, CniRule, HealthCheckSpec, Scheme};
use crate::error::Error;

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

fn check_cidr6(problems: &mut Vec<String>, at: &str, raw: &str) {
    match raw.parse::<Ipv6Net>() {
        Ok(net) if net.network() == net.addr() => {}
        Ok(net) => problems.push(format!(
            "{at}: {raw} is not a network address (did you mean {}?)",
            net.trunc()
        )),
        Err(_) => problems.push(format!("{at}: {raw:?} is not an IPv6 CIDR block")),
    }
}

/// An IPv4 or an IPv6 CIDR block, as the raw text's family says.
fn check_cidr_any(problems: &mut Vec<String>, at: &str, raw: &str) {
    if raw.contains(':') {
        check_cidr6(problems, at, raw);
    } else {
        check_cidr(problems, at, raw);
    }
}

pub(crate) fn check_id(problems: &mut Vec<String>, at: &str, raw: &str, prefix: &str) {
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

/// The characters besides ASCII letters and digits EC2 takes in a rule's description.
const RULE_DESCRIPTION_PUNCTUATION: &str = ". _-:/()#,@[]+=&;{}!$*";

fn check_rule(
    problems: &mut Vec<String>,
    at: &str,
    description: &str,
    protocol: &str,
    from: Option<i32>,
    to: Option<i32>,
) {
    let allowed = |c: char| c.is_ascii_alphanumeric() || RULE_DESCRIPTION_PUNCTUATION.contains(c);
    if description.chars().count() > 255 || !description.chars().all(allowed) {
        problems.push(format!(
            "{at}.description: {description:?} is not a rule description EC2 takes (at most 255 \
             letters, digits, spaces and {RULE_DESCRIPTION_PUNCTUATION})"
        ));
    }
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

/// Tags at `at`: room on the resource for them beside the provider's own, and each key and
/// value as AWS and the provider take them.
fn check_tags(problems: &mut Vec<String>, at: &str, tags: &BTreeMap<String, String>) {
    check_tag_room(problems, at, tags);
    check_tag_keys(problems, at, tags);
}

/// Whether `tags`, the additional tags of one resource, fit beside the provider's own: AWS's
/// 50 per resource, and the last-applied tag's 256 characters of keys.
fn check_tag_room(problems: &mut Vec<String>, at: &str, tags: &BTreeMap<String, String>) {
    if tags.len() + OWN_TAGS > 50 {
        problems.push(format!(
            "{at}: {} tags; AWS allows 50 per resource and the provider uses {OWN_TAGS}",
            tags.len()
        ));
    }
    let joined: usize = tags.keys().map(|k| k.len() + 1).sum();
    if joined > 257 {
        problems.push(format!(
            "{at}: the keys, joined by commas, exceed the 256 characters the provider can \
             track in its last-applied tag"
        ));
    }
}

/// Each key and value of `tags` as AWS takes them, none of the provider's own keys.
fn check_tag_keys(problems: &mut Vec<String>, at: &str, tags: &BTreeMap<String, String>) {
    for (k, v) in tags {
        if k.contains(',') {
            problems.push(format!("{at}: key {k:?} holds a comma"));
        }
        if k.is_empty() || k.chars().count() > 128 {
            problems.push(format!("{at}: key {k:?} must be 1 to 128 characters"));
        }
        if v.chars().count() > 256 {
            problems.push(format!(
                "{at}[{k}]: the value is longer than 256 characters"
            ));
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            problems.push(format!("{at}: key {k:?} uses the reserved prefix aws:"));
        }
        if k.starts_with("sigs.k8s.io/cluster-api-provider-aws/") || k == "Name" {
            problems.push(format!("{at}: key {k:?} is set by the provider itself"));
        }
    }
}

/// Checks the pool and block of one's own that `ipv6` names for the VPC: a pool's id, a /56
/// network of it (only with the pool), or an IPAM pool and a VPC's netmask length, for a VPC
/// the cluster creates.
fn check_ipv6_pool(p: &mut Vec<String>, ipv6: &crate::spec::Ipv6Spec, existing_vpc: bool) {
    let at = "spec.network.vpc.ipv6";
    if let Some(pool) = &ipv6.ipam_pool {
        let at = format!("{at}.ipamPool");
        check_pool_name(p, &at, pool);
        if let Some(n) = pool.netmask_length
            && !((44..=60).contains(&n) && n % 4 == 0)
        {
            p.push(format!(
                "{at}.netmaskLength: {n} must be 44, 48, 52, 56 or 60 (a VPC's IPv6 block from \
                 IPAM is a /44 to a /60 in steps of four)"
            ));
        }
        if ipv6.pool_id.is_some() || ipv6.cidr_block.is_some() {
            p.push(format!(
                "{at}: give either poolId (and cidrBlock) or ipamPool, not both"
            ));
        }
        if existing_vpc {
            p.push(format!(
                "{at}: only for a VPC the provider creates; an existing VPC \
                 (spec.network.vpc.id) holds its block as it is"
            ));
        }
    }
    if let Some(pool) = &ipv6.pool_id {
        check_id(p, &format!("{at}.poolId"), pool, "ipv6pool-ec2");
    }
    if let Some(raw) = &ipv6.cidr_block {
        match raw.parse::<Ipv6Net>() {
            Ok(c) if c.prefix_len() != 56 => {
                p.push(format!(
                    "{at}.cidrBlock: {raw} is not a /56, a VPC's IPv6 block"
                ));
            }
            Ok(c) if c.trunc() != c => p.push(format!(
                "{at}.cidrBlock: {raw} is not a network address (did you mean {}?)",
                c.trunc()
            )),
            Ok(_) => {}
            Err(_) => p.push(format!("{at}.cidrBlock: {raw:?} is not an IPv6 CIDR block")),
        }
        if ipv6.pool_id.is_none() {
            p.push(format!(
                "{at}.cidrBlock: needs poolId, the pool of your own it comes from (an \
                 Amazon-provided block cannot be chosen)"
            ));
        }
    }
    if existing_vpc && (ipv6.pool_id.is_some() || ipv6.cidr_block.is_some()) {
        p.push(format!(
            "{at}: poolId and cidrBlock are for a VPC the provider creates; an existing VPC \
             (spec.network.vpc.id) holds its block as it is"
        ));
    }
}

/// Validates `cluster` against the region's availability zones (`zones`) and fills in
/// defaults: [`validate_in`] with no edge zone.
pub fn validate(cluster: &Cluster, zones: &[String]) -> Result<Plan, Error> {
    let zones: Vec<Zone> = zones.iter().map(|z| Zone::availability_zone(z)).collect();
    validate_in(cluster, &zones)
}

/// Validates `cluster` against the zones it may use (`zones`, as DescribeAvailabilityZones
/// lists them: the availability zones, and the Local Zones and Wavelength Zones the account
/// opted in to) and fills in defaults. Every problem is listed, not just the first.
pub fn validate_in(cluster: &Cluster, zones: &[Zone]) -> Result<Plan, Error> {
    let mut p = Vec::new();
    let spec = &cluster.spec;
    let name = &cluster.metadata.name;
    check_metadata(&mut p, cluster);
    let Network {
        existing_vpc,
        vpc_cidr,
        secondary,
        subnets,
        subnets_from_vpc_range,
    } = check_network(&mut p, spec, name, zones);
    check_security_group_overrides(&mut p, spec, existing_vpc.is_some());
    let cni_rules = check_ingress_rules(&mut p, spec, &subnets);
    // The bastion and the load balancer go to availability zones only (a classic load
    // balancer has no edge zone; the bastion stays beside the API).
    let in_zones: Vec<PlannedSubnet> = subnets
        .iter()
        .filter(|s| {
            s.zone
                .as_ref()
                .is_none_or(|z| !zones.iter().any(|e| &e.name == z && e.kind.is_edge()))
        })
        .cloned()
        .collect();
    check_bastion(&mut p, spec, &in_zones);
    let health_check = check_load_balancer(&mut p, spec, &in_zones);
    if let Some(f) = &spec.image_lookup_format
        && let Err(e) = super::machine::lookup_pattern(f, "", "")
    {
        p.push(format!("spec.imageLookupFormat: {e}"));
    }
    let lb = &spec.control_plane_load_balancer;
    if !p.is_empty() {
        return Err(Error::InvalidSpec { problems: p });
    }
    Ok(Plan {
        name: name.clone(),
        spec: spec.clone(),
        vpc_cidr,
        secondary_cidrs: secondary,
        discover_subnets: spec.network.subnets.is_empty() && existing_vpc.is_some(),
        // Those checked above were of the range's shape only: the real ones wait for it.
        subnets: if subnets_from_vpc_range.is_some() {
            Vec::new()
        } else {
            subnets
        },
        subnets_from_vpc_range,
        load_balancer_name: lb
            .existing_name
            .clone()
            .unwrap_or_else(|| load_balancer_name(name, lb.name.as_deref())),
        health_check,
        idle_timeout: lb.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        cni_rules,
        zones: zones.to_vec(),
    })
}

/// The cluster's apiVersion, kind, name, region, key name and additional tags.
fn check_metadata(p: &mut Vec<String>, cluster: &Cluster) {
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
    check_tags(p, "spec.additionalTags", &spec.additional_tags);
}

/// What [`check_network`] makes of the network part of the spec.
struct Network {
    /// The existing VPC's id.
    existing_vpc: Option<String>,
    /// The CIDR of the VPC to create (none when it comes from an IPAM pool).
    vpc_cidr: Option<Ipv4Net>,
    /// Its secondary ranges.
    secondary: Vec<Ipv4Net>,
    /// The planned subnets (for a range from an IPAM pool, subnets of the range's shape, for
    /// the checks that depend on them).
    subnets: Vec<PlannedSubnet>,
    /// The zones of the default subnets, when they are cut from the range an IPAM pool gives.
    subnets_from_vpc_range: Option<Vec<String>>,
}

/// `spec.network.vpc.ipamPool`: only for a VPC the cluster creates, instead of `cidrBlock`
/// and its secondary ranges (CAPA's rule), naming a pool by id or name, with a VPC's netmask
/// length.
fn check_ipam_pool(p: &mut Vec<String>, spec: &ClusterSpec, pool: &IpamPool) {
    let at = "spec.network.vpc.ipamPool";
    let vpc = &spec.network.vpc;
    if vpc.id.is_some() {
        p.push(format!(
            "{at}: only for a VPC the provider creates; an existing VPC has its range"
        ));
    }
    if vpc.cidr_block.is_some() {
        p.push("spec.network.vpc: give either cidrBlock or ipamPool, not both".into());
    }
    if !vpc.secondary_cidr_blocks.is_empty() {
        p.push(format!(
            "spec.network.vpc.secondaryCidrBlocks: not with {at} (the VPC's ranges come from              the pool)"
        ));
    }
    check_pool_name(p, at, pool);
    if let Some(n) = pool.netmask_length
        && !(16..=28).contains(&n)
    {
        p.push(format!(
            "{at}.netmaskLength: {n} must be between 16 and 28 (a VPC's range is a /16 to a /28)"
        ));
    }
}

/// A subnet's `ipv6CidrBlock` at `at`: a /64 network, in a dual-stack cluster, inside the
/// VPC's block where the spec names it. Answers the /64 when it is one.
fn check_subnet_ipv6(
    p: &mut Vec<String>,
    at: &str,
    raw: &str,
    net: &crate::spec::NetworkSpec,
) -> Option<Ipv6Net> {
    let Some(v6) = &net.vpc.ipv6 else {
        p.push(format!(
            "{at}: a subnet's IPv6 block needs a dual-stack VPC (spec.network.vpc.ipv6)"
        ));
        return None;
    };
    let c = match raw.parse::<Ipv6Net>() {
        Ok(c) if c.prefix_len() != 64 => {
            p.push(format!("{at}: {raw} is not a /64, a subnet's IPv6 block"));
            return None;
        }
        Ok(c) if c.trunc() != c => {
            p.push(format!(
                "{at}: {raw} is not a network address (did you mean {}?)",
                c.trunc()
            ));
            return None;
        }
        Ok(c) => c,
        Err(_) => {
            p.push(format!("{at}: {raw:?} is not an IPv6 CIDR block"));
            return None;
        }
    };
    if let Some(block) = v6
        .cidr_block
        .as_deref()
        .and_then(|b| b.parse::<Ipv6Net>().ok())
        && !block.contains(&c)
    {
        p.push(format!(
            "{at}: {c} is not inside the VPC's IPv6 block {block} (spec.network.vpc.ipv6.cidrBlock)"
        ));
    }
    Some(c)
}

/// The zones the default subnets of cluster `name` span, of the region's availability zones
/// `zones` (those not `constrained`): `availabilityZoneCount` of them (exactly), or up to
/// `availabilityZoneUsageLimit` (default 3), the first by name or, `Random`, a choice drawn
/// from the cluster's name.
fn check_zone_choice(
    p: &mut Vec<String>,
    spec: &ClusterSpec,
    name: &str,
    zones: &[String],
    constrained: &[String],
) -> Vec<String> {
    let net = &spec.network;
    let limit_at = "spec.network.vpc.availabilityZoneUsageLimit";
    let count = match (
        net.availability_zone_count,
        net.vpc.availability_zone_usage_limit,
    ) {
        (Some(_), Some(_)) => {
            p.push(format!(
                "spec.network.availabilityZoneCount: give either it (exactly so many zones) or \
                 {limit_at} (at most so many), not both"
            ));
            0
        }
        (Some(n), None) => {
            if n == 0 || n > zones.len().max(1) {
                let aside = if constrained.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (beside {}, constrained by AWS, where no default subnet goes)",
                        constrained.join(", ")
                    )
                };
                p.push(format!(
                    "spec.network.availabilityZoneCount: {n} is not between 1 and the {} zones \
                     of {}{aside}",
                    zones.len(),
                    spec.region
                ));
            }
            n
        }
        (None, Some(0)) => {
            p.push(format!(
                "{limit_at}: 0, but the default subnets need a zone"
            ));
            0
        }
        (None, limit) => limit.unwrap_or(crate::spec::DEFAULT_ZONE_COUNT),
    };
    let mut ordered = zones.to_vec();
    ordered.sort();
    match net.vpc.availability_zone_selection.as_deref() {
        None | Some("Ordered") => {}
        Some("Random") => {
            // Each zone ranked by a hash of the cluster's name and the zone's (FNV-1a, then
            // mixed): clusters of other names rank the zones otherwise.
            let rank = |zone: &String| {
                mix(name
                    .bytes()
                    .chain([0])
                    .chain(zone.bytes())
                    .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                    }))
            };
            ordered.sort_by_key(|z| std::cmp::Reverse(rank(z)));
        }
        Some(other) => p.push(format!(
            "spec.network.vpc.availabilityZoneSelection: {other:?} is not {}",
            crate::spec::ZONE_SELECTIONS.join(" or ")
        )),
    }
    ordered.truncate(count);
    ordered.sort();
    ordered
}

/// MurmurHash3's 64-bit finalizer: every bit of `h` moves about half the bits of the result.
/// Zone names differ in their last letter alone, and FNV-1a's last multiplication carries a
/// difference in the low bits of its state only upward, a little: unmixed, the zones of a
/// region ranked as one of a few fixed orders (on six zones, three drawn were always the first
/// three or the last three by name), whatever the cluster's name.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// An IPAM pool at `at` named by id (an `ipam-pool-` id) or a `Name` tag (not empty).
fn check_pool_name(p: &mut Vec<String>, at: &str, pool: &IpamPool) {
    match (&pool.id, &pool.name) {
        (None, None) => p.push(format!("{at}: give id or name")),
        (Some(id), _) => check_id(p, &format!("{at}.id"), id, "ipam-pool"),
        (None, Some(_)) => {}
    }
    if pool.name.as_deref().is_some_and(str::is_empty) {
        p.push(format!("{at}.name: empty"));
    }
}

/// The VPC (existing, or its CIDR and secondary ranges, or an IPAM pool), the internet
/// gateway, the zone count and the subnets.
fn check_network(
    p: &mut Vec<String>,
    spec: &ClusterSpec,
    name: &str,
    all_zones: &[Zone],
) -> Network {
    let net = &spec.network;
    // The default subnets go to the availability zones only, and not to a constrained one; a
    // subnet named may go to any, or to an opted-in Local Zone or Wavelength Zone too.
    let zones: Vec<String> = all_zones
        .iter()
        .filter(|z| !z.kind.is_edge() && !z.constrained)
        .map(|z| z.name.clone())
        .collect();
    let zones = zones.as_slice();
    let constrained: Vec<String> = all_zones
        .iter()
        .filter(|z| z.constrained)
        .map(|z| z.name.clone())
        .collect();
    let existing_vpc = net.vpc.id.clone();
    let ipam = net.vpc.ipam_pool.as_ref();
    if let Some(pool) = ipam {
        check_ipam_pool(p, spec, pool);
    }
    if let Some(id) = &existing_vpc {
        check_id(p, "spec.network.vpc.id", id, "vpc");
        if net.vpc.cidr_block.is_some() {
            p.push(
                "spec.network.vpc: give either id (an existing VPC) or cidrBlock, not both".into(),
            );
        }
    }
    let vpc_cidr = if existing_vpc.is_none() && ipam.is_none() {
        let raw = net.vpc.cidr_block.as_deref().unwrap_or(DEFAULT_VPC_CIDR);
        let c = check_cidr(p, "spec.network.vpc.cidrBlock", raw);
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
    let secondary = check_secondary_cidrs(p, spec, vpc_cidr);
    if let Some(v6) = &net.vpc.ipv6 {
        check_ipv6_pool(p, v6, existing_vpc.is_some());
    }
    if let Some(eigw) = net
        .vpc
        .ipv6
        .as_ref()
        .and_then(|v| v.egress_only_internet_gateway_id.as_deref())
    {
        let at = "spec.network.vpc.ipv6.egressOnlyInternetGatewayId";
        check_id(p, at, eigw, "eigw");
        if existing_vpc.is_none() {
            p.push(format!(
                "{at}: an existing egress-only internet gateway needs an existing VPC \
                 (spec.network.vpc.id); the cluster's own VPC gets its own gateway"
            ));
        }
    }
    // A VPC's block holds 2^(64 - length) /64s: an Amazon-provided /56 256.
    let v6_len = net
        .vpc
        .ipv6
        .as_ref()
        .and_then(|v| v.ipam_pool.as_ref())
        .map_or(56, |pool| {
            pool.netmask_length
                .unwrap_or(crate::spec::DEFAULT_IPAM_IPV6_NETMASK_LENGTH)
        })
        .clamp(44, 64);
    let v6_subnets = 1usize << (64 - v6_len);
    if net.vpc.ipv6.is_some() && net.subnets.len() > v6_subnets {
        p.push(format!(
            "spec.network.subnets: {} subnets, but a VPC's IPv6 /{v6_len} holds {v6_subnets} \
             /64s",
            net.subnets.len()
        ));
    }
    if existing_vpc.is_some() && net.vpc.empty_default_security_group {
        p.push(
            "spec.network.vpc.emptyRoutesDefaultVPCSecurityGroup: only for a VPC the provider \
             creates; an existing VPC's default group is the user's"
                .into(),
        );
    }
    // Where the spec's subnets may go: the VPC's ranges, primary and secondary.
    let ranges: Vec<Ipv4Net> = vpc_cidr.into_iter().chain(secondary.clone()).collect();
    if let Some(igw) = &net.internet_gateway_id {
        check_id(p, "spec.network.internetGatewayId", igw, "igw");
        if existing_vpc.is_none() {
            p.push(
                "spec.network.internetGatewayId: an existing internet gateway needs an existing \
                 VPC (spec.network.vpc.id)"
                    .into(),
            );
        }
    }
    let default_zones = check_zone_choice(p, spec, name, zones, &constrained);
    let mut subnets = Vec::new();
    let mut subnets_from_vpc_range = None;
    if net.subnets.is_empty() {
        let prefer_public = net.vpc.subnet_schema.as_deref() == Some("PreferPublic");
        let zones = default_zones.as_slice();
        if let Some(vpc) = vpc_cidr {
            subnets = default_subnets(vpc, zones, prefer_public);
        } else if let Some(pool) = ipam.filter(|_| existing_vpc.is_none()) {
            // The range is the pool's to give: checked here by its shape (any range of the
            // length is cut alike), cut for real once the VPC has it.
            let len = pool
                .netmask_length
                .and_then(|n| u8::try_from(n).ok())
                .filter(|n| (16..=28).contains(n))
                .unwrap_or(DEFAULT_IPAM_NETMASK_LENGTH as u8);
            if let Ok(shape) = Ipv4Net::new(std::net::Ipv4Addr::new(10, 0, 0, 0), len) {
                subnets = default_subnets(shape, zones, prefer_public);
            }
            subnets_from_vpc_range = Some(zones.to_vec());
        }
        // An existing VPC without subnets: its own subnets are used (found at plan time).
    } else {
        let mut seen: Vec<(usize, Ipv4Net)> = Vec::new();
        for (i, s) in net.subnets.iter().enumerate() {
            let at = format!("spec.network.subnets[{i}]");
            match (&s.id, &s.cidr_block) {
                (Some(id), None) => {
                    check_id(p, &format!("{at}.id"), id, "subnet");
                    if existing_vpc.is_none() {
                        p.push(format!(
                            "{at}.id: an existing subnet needs an existing VPC (spec.network.vpc.id)"
                        ));
                    }
                    if !s.tags.is_empty() {
                        p.push(format!(
                            "{at}.tags: an existing subnet is the user's, never tagged"
                        ));
                    }
                    if s.ipv6_cidr_block.is_some() {
                        p.push(format!(
                            "{at}.ipv6CidrBlock: an existing subnet holds its own block"
                        ));
                    }
                    subnets.push(PlannedSubnet {
                        id: Some(id.clone()),
                        cidr: None,
                        zone: s.availability_zone.clone(),
                        public: s.public,
                        ipv6: None,
                        tags: BTreeMap::new(),
                    });
                }
                (None, Some(raw)) => {
                    let cidr = check_cidr(p, &format!("{at}.cidrBlock"), raw);
                    if let Some(c) = cidr {
                        if !(16..=28).contains(&c.prefix_len()) {
                            p.push(format!("{at}.cidrBlock: {c} must be between /16 and /28"));
                        }
                        if !ranges.is_empty() && !ranges.iter().any(|r| r.contains(&c)) {
                            let held: Vec<String> = ranges.iter().map(|r| r.to_string()).collect();
                            p.push(format!(
                                "{at}.cidrBlock: {c} is not inside the VPC's {}",
                                held.join(" or ")
                            ));
                        }
                        if vpc_cidr == Some(c) {
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
                        Some(z) if !all_zones.iter().any(|a| &a.name == z) => p.push(format!(
                            "{at}.availabilityZone: {z} is not a zone of {} ({}; a Local Zone \
                             or Wavelength Zone once the account opted in to its group)",
                            spec.region,
                            all_zones
                                .iter()
                                .map(|a| a.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                        Some(z) => {
                            let kind = all_zones
                                .iter()
                                .find(|a| &a.name == z)
                                .map(|a| a.kind)
                                .unwrap_or_default();
                            if kind.is_edge() && net.vpc.ipv6.is_some() {
                                p.push(format!(
                                    "{at}.availabilityZone: {z} is a {}, whose subnets take no \
                                     IPv6 here (spec.network.vpc.ipv6)",
                                    if kind == ZoneKind::LocalZone {
                                        "Local Zone"
                                    } else {
                                        "Wavelength Zone"
                                    }
                                ));
                            }
                        }
                    }
                    if !s.tags.is_empty() {
                        // With the cluster's additional tags, which the subnet carries too.
                        let mut all = spec.additional_tags.clone();
                        all.extend(s.tags.clone());
                        check_tag_room(p, &format!("{at}.tags"), &all);
                        check_tag_keys(p, &format!("{at}.tags"), &s.tags);
                    }
                    let ipv6 = s.ipv6_cidr_block.as_deref().and_then(|raw| {
                        check_subnet_ipv6(p, &format!("{at}.ipv6CidrBlock"), raw, net)
                    });
                    if let Some(c) = ipv6
                        && let Some(j) = net.subnets.iter().take(i).position(|o| {
                            o.ipv6_cidr_block.as_deref().and_then(|r| r.parse().ok()) == Some(c)
                        })
                    {
                        p.push(format!(
                            "{at}.ipv6CidrBlock: {c} is named by spec.network.subnets[{j}] too"
                        ));
                    }
                    subnets.push(PlannedSubnet {
                        id: None,
                        cidr,
                        zone: s.availability_zone.clone(),
                        public: s.public,
                        ipv6,
                        tags: s.tags.clone(),
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

    if let Some(schema) = &net.vpc.subnet_schema {
        if !SUBNET_SCHEMAS.contains(&schema.as_str()) {
            p.push(format!(
                "spec.network.vpc.subnetSchema: {schema:?} is not PreferPrivate or PreferPublic"
            ));
        }
        if !net.subnets.is_empty() || existing_vpc.is_some() {
            p.push(
                "spec.network.vpc.subnetSchema: applies to the subnets the cluster makes by \
                 default in its own VPC, and the spec names its subnets or an existing VPC"
                    .into(),
            );
        }
    }
    if let Some(pool) = &net.vpc.elastic_ip_pool {
        pool_problems(p, "spec.network.vpc.elasticIpPool", pool);
    }
    if let Some(t) = &net.vpc.private_dns_hostname_type_on_launch {
        if !HOSTNAME_TYPES.contains(&t.as_str()) {
            p.push(format!(
                "spec.network.vpc.privateDnsHostnameTypeOnLaunch: {t:?} is not ip-name or \
                 resource-name"
            ));
        }
        // An existing VPC without subnets lends its own: none is the cluster's.
        if subnets.iter().all(|s| s.id.is_some()) {
            p.push(
                "spec.network.vpc.privateDnsHostnameTypeOnLaunch: applies to the subnets the \
                 provider creates, and the spec has none (existing subnets are never modified)"
                    .into(),
            );
        }
    }

    Network {
        existing_vpc,
        vpc_cidr,
        secondary,
        subnets,
        subnets_from_vpc_range,
    }
}

/// The problems of an `elasticIpPool` at `at`.
pub(crate) fn pool_problems(p: &mut Vec<String>, at: &str, pool: &super::types::ElasticIpPool) {
    match &pool.public_ipv4_pool {
        Some(id) => check_id(p, &format!("{at}.publicIpv4Pool"), id, "ipv4pool-ec2"),
        None => p.push(format!("{at}: give publicIpv4Pool")),
    }
    if let Some(f) = &pool.public_ipv4_pool_fallback_order
        && !POOL_FALLBACKS.contains(&f.as_str())
    {
        p.push(format!(
            "{at}.publicIpv4PoolFallbackOrder: {f:?} is not AmazonPool or None"
        ));
    }
}

/// The private ranges of RFC 1918: a VPC's secondary range may come from the one its primary
/// range is in, or from none of them.
const RFC1918: [&str; 3] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"];

/// The RFC 1918 range holding `net`, if any.
fn private_range(net: &Ipv4Net) -> Option<Ipv4Net> {
    RFC1918
        .iter()
        .filter_map(|r| r.parse::<Ipv4Net>().ok())
        .find(|r| r.contains(net))
}

/// `spec.network.vpc.secondaryCidrBlocks`: only for a VPC the cluster creates, each a /16 to
/// /28 network that overlaps no other range of the VPC and that AWS's association
/// restrictions admit beside the primary range (the VPC user guide's "IPv4 CIDR block
/// association restrictions": a range from another RFC 1918 block than the primary's is
/// refused; 198.19.0.0/16 only beside a primary range there; nothing from 10.0.0.0/16 beside
/// a range in 10.0.0.0/15).
fn check_secondary_cidrs(
    p: &mut Vec<String>,
    spec: &ClusterSpec,
    primary: Option<Ipv4Net>,
) -> Vec<Ipv4Net> {
    let blocks = &spec.network.vpc.secondary_cidr_blocks;
    if blocks.is_empty() {
        return Vec::new();
    }
    if spec.network.vpc.id.is_some() {
        p.push(
            "spec.network.vpc.secondaryCidrBlocks: only for a VPC the provider creates; an \
             existing VPC (spec.network.vpc.id) is used as it is, never modified"
                .into(),
        );
        return Vec::new();
    }
    let mut out: Vec<Ipv4Net> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let at = format!("spec.network.vpc.secondaryCidrBlocks[{i}].ipv4CidrBlock");
        let Some(c) = check_cidr(p, &at, &b.ipv4_cidr_block) else {
            continue;
        };
        if !(16..=28).contains(&c.prefix_len()) {
            p.push(format!("{at}: {c} must be between /16 and /28"));
        }
        let overlaps = |r: &Ipv4Net| r.contains(&c) || c.contains(r);
        if let Some(primary) = primary.filter(overlaps) {
            p.push(format!("{at}: {c} overlaps the VPC's cidrBlock {primary}"));
        }
        if let Some(j) = out.iter().position(overlaps) {
            p.push(format!(
                "{at}: {c} overlaps spec.network.vpc.secondaryCidrBlocks[{j}]"
            ));
        }
        if let Some(primary) = primary {
            if let Some(range) = private_range(&c)
                && private_range(&primary) != Some(range)
            {
                p.push(format!(
                    "{at}: {c} is in the private range {range}, but the VPC's cidrBlock \
                     {primary} is not: AWS takes a secondary range from the primary's private \
                     range or a publicly routable one (100.64.0.0/10 too)"
                ));
            }
            let benchmarking: Option<Ipv4Net> = "198.19.0.0/16".parse().ok();
            if let Some(b) = benchmarking
                && b.contains(&c)
                && !b.contains(&primary)
            {
                p.push(format!(
                    "{at}: {c} is in 198.19.0.0/16, which AWS adds only to a VPC whose cidrBlock \
                     lies there"
                ));
            }
            let (ten15, ten16): (Option<Ipv4Net>, Option<Ipv4Net>) =
                ("10.0.0.0/15".parse().ok(), "10.0.0.0/16".parse().ok());
            if let (Some(ten15), Some(ten16)) = (ten15, ten16)
                && ten16.contains(&c)
                && let Some(r) = std::iter::once(&primary)
                    .chain(&out)
                    .find(|r| ten15.contains(*r))
            {
                p.push(format!(
                    "{at}: {c} is in 10.0.0.0/16, which AWS does not add to a VPC with a range \
                     in 10.0.0.0/15 ({r})"
                ));
            }
        }
        out.push(c);
    }
    out
}

/// Existing security groups named by role: each needs an existing VPC.
fn check_security_group_overrides(p: &mut Vec<String>, spec: &ClusterSpec, existing_vpc: bool) {
    for (role, id) in &spec.security_group_overrides {
        check_id(
            p,
            &format!("spec.securityGroupOverrides.{}", role.as_str()),
            id,
            "sg",
        );
        if !existing_vpc {
            p.push(format!(
                "spec.securityGroupOverrides.{}: an existing group needs an existing VPC",
                role.as_str()
            ));
        }
    }
}

/// The CNI rules (calico's by default) and the additional ingress rules.
fn check_ingress_rules(
    p: &mut Vec<String>,
    spec: &ClusterSpec,
    subnets: &[PlannedSubnet],
) -> Vec<CniRule> {
    // NAT gateways: for the private subnets the cluster makes, in its public ones.
    let own_nat_gateways =
        subnets.iter().any(|s| s.id.is_none() && !s.public) && subnets.iter().any(|s| s.public);
    let cni_rules = spec
        .cni_ingress_rules
        .clone()
        .unwrap_or_else(default_cni_rules);
    for (i, r) in cni_rules.iter().enumerate() {
        check_rule(
            p,
            &format!("spec.cniIngressRules[{i}]"),
            &r.description,
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
        (
            "controlPlaneLoadBalancer.ingressRules",
            &spec.control_plane_load_balancer.ingress_rules,
        ),
    ] {
        for (i, r) in rules.iter().enumerate() {
            let at = format!("spec.{field}[{i}]");
            check_rule(p, &at, &r.description, &r.protocol, r.from_port, r.to_port);
            for c in &r.cidr_blocks {
                check_cidr(p, &format!("{at}.cidrBlocks"), c);
            }
            for c in &r.ipv6_cidr_blocks {
                check_cidr6(p, &format!("{at}.ipv6CidrBlocks"), c);
            }
            for (j, id) in r.source_security_group_ids.iter().enumerate() {
                check_id(p, &format!("{at}.sourceSecurityGroupIds[{j}]"), id, "sg");
            }
            if r.nat_gateways_ips_source && !own_nat_gateways {
                p.push(format!(
                    "{at}.natGatewaysIPsSource: the cluster makes no NAT gateway (it makes one \
                     only for private subnets of its own, beside a public subnet)"
                ));
            }
            if r.cidr_blocks.is_empty()
                && r.ipv6_cidr_blocks.is_empty()
                && r.source_roles.is_empty()
                && r.source_security_group_ids.is_empty()
                && !r.nat_gateways_ips_source
            {
                p.push(format!(
                    "{at}: needs cidrBlocks, ipv6CidrBlocks, sourceRoles, \
                     sourceSecurityGroupIds or natGatewaysIPsSource"
                ));
            }
        }
    }
    for (i, c) in spec
        .network
        .node_port_ingress_rule_cidr_blocks
        .iter()
        .enumerate()
    {
        let at = format!("spec.network.nodePortIngressRuleCidrBlocks[{i}]");
        check_cidr_any(p, &at, c);
    }

    cni_rules
}

/// The bastion: an existing one by id, or one to create (who may reach it, its type, image).
fn check_bastion(p: &mut Vec<String>, spec: &ClusterSpec, subnets: &[PlannedSubnet]) {
    let b = &spec.bastion;
    if let Some(id) = &b.id {
        check_id(p, "spec.bastion.id", id, "i");
        if b.enabled {
            p.push(
                "spec.bastion: give either id (an existing bastion) or enabled, not both".into(),
            );
        }
    }
    if b.enabled {
        for c in &b.allowed_cidr_blocks {
            check_cidr_any(p, "spec.bastion.allowedCidrBlocks", c);
        }
        if b.disable_ingress_rules && !b.allowed_cidr_blocks.is_empty() {
            p.push(
                "spec.bastion.allowedCidrBlocks: not with disableIngressRules (its group \
                 admits no one)"
                    .into(),
            );
        }
        if b.allowed_cidr_blocks.is_empty() && !b.disable_ingress_rules {
            p.push(
                "spec.bastion.allowedCidrBlocks: list who may SSH to the bastion \
                 (write 0.0.0.0/0 to open it to the world, or set disableIngressRules to \
                 admit no one)"
                    .into(),
            );
        }
        if b.instance_type.as_deref() == Some("") {
            p.push("spec.bastion.instanceType: empty".into());
        }
        if let Some(ami) = &b.ami {
            check_id(p, "spec.bastion.ami", ami, "ami");
        }
        // (Subnets found in an existing VPC are checked when found: one is public.)
        if !subnets.is_empty() && !subnets.iter().any(|s| s.public) {
            p.push("spec.bastion: a bastion needs a public subnet in an availability zone".into());
        }
    }
}

/// The API load balancer: name, existing name, idle timeout, health check, allowed CIDRs and
/// scheme; the health check with its defaults.
/// The security groups a classic load balancer may carry (ELB's quota, not adjustable).
const MAX_LOAD_BALANCER_GROUPS: usize = 5;

fn check_load_balancer(
    p: &mut Vec<String>,
    spec: &ClusterSpec,
    subnets: &[PlannedSubnet],
) -> HealthCheckSpec {
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
    let mut health_check = lb.health_check.clone().unwrap_or_default();
    if let Some(protocol) = &lb.health_check_protocol {
        let at = "spec.controlPlaneLoadBalancer.healthCheckProtocol";
        match protocol.as_str() {
            "TCP" | "SSL" => health_check.target = format!("{protocol}:6443"),
            "HTTP" | "HTTPS" => health_check.target = format!("{protocol}:6443/readyz"),
            other => p.push(format!("{at}: {other:?} is not TCP, SSL, HTTP or HTTPS")),
        }
        if lb.health_check.is_some() {
            p.push(format!(
                "{at}: not with healthCheck, whose target names the protocol"
            ));
        }
    }
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
        check_cidr_any(p, "spec.controlPlaneLoadBalancer.allowedCidrBlocks", c);
    }
    let extra = &lb.additional_security_groups;
    for (i, id) in extra.iter().enumerate() {
        let at = format!("spec.controlPlaneLoadBalancer.additionalSecurityGroups[{i}]");
        check_id(p, &at, id, "sg");
        if extra[..i].contains(id) {
            p.push(format!("{at}: {id} is named twice"));
        }
    }
    if extra.len() > MAX_LOAD_BALANCER_GROUPS - 1 {
        p.push(format!(
            "spec.controlPlaneLoadBalancer.additionalSecurityGroups: {} groups; a classic load \
             balancer carries at most {MAX_LOAD_BALANCER_GROUPS}, the cluster's own among them",
            extra.len()
        ));
    }
    for (i, id) in lb.subnets.iter().enumerate() {
        let at = format!("spec.controlPlaneLoadBalancer.subnets[{i}]");
        check_id(p, &at, id, "subnet");
        if lb.subnets[..i].contains(id) {
            p.push(format!("{at}: {id} is named twice"));
        }
    }
    if !lb.subnets.is_empty() && lb.existing_name.is_some() {
        p.push(
            "spec.controlPlaneLoadBalancer.subnets: not with existingName (an existing load \
             balancer is used as it is, never modified)"
                .into(),
        );
    }
    if !extra.is_empty() && lb.existing_name.is_some() {
        p.push(
            "spec.controlPlaneLoadBalancer.additionalSecurityGroups: not with existingName (an \
             existing load balancer is used as it is, never modified)"
                .into(),
        );
    }
    if lb.scheme == Scheme::InternetFacing
        && lb.existing_name.is_none()
        && !subnets.is_empty()
        && !subnets.iter().any(|s| s.public)
    {
        p.push(
            "spec.controlPlaneLoadBalancer.scheme: an internet-facing load balancer needs a \
             public subnet in an availability zone"
                .into(),
        );
    }

    health_check
}
