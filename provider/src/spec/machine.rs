//! The machine spec: one EC2 instance of a cluster, its image (by id or looked up), its place,
//! its groups and volume, and the kubeadm configuration it boots with. Secrets (the bootstrap
//! token, the certificate key) never show in `Debug` output, logs or errors.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Metadata;

/// A secret string: serialised as is, shown as `***`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A machine spec file: `apiVersion`, `kind: Machine`, `metadata.name`, `spec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Machine {
    /// Must be [`super::API_VERSION`].
    pub api_version: String,
    /// Must be `Machine`.
    pub kind: String,
    /// The machine's name (the instance's `Name` tag).
    pub metadata: Metadata,
    /// What to run.
    pub spec: MachineSpec,
}

/// `controlplane` or `node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MachineRole {
    /// A control-plane machine: registered with the API load balancer.
    #[serde(rename = "controlplane")]
    ControlPlane,
    /// A worker.
    #[serde(rename = "node")]
    Node,
}

impl MachineRole {
    /// The role's name in tags.
    pub fn as_str(self) -> &'static str {
        match self {
            MachineRole::ControlPlane => "controlplane",
            MachineRole::Node => "node",
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineSpec {
    /// The cluster (its `metadata.name`).
    pub cluster_name: String,
    /// `controlplane` or `node`.
    pub role: MachineRole,
    /// The image.
    #[serde(default)]
    pub ami: AmiSpec,
    /// The instance type. Immutable.
    pub instance_type: String,
    /// Where: a subnet id, or a zone (the cluster's private subnet there). Immutable.
    #[serde(default)]
    pub subnet: MachineSubnet,
    /// A public IP (the machine goes to the cluster's public subnet of its zone). Immutable.
    #[serde(default, rename = "publicIP")]
    pub public_ip: bool,
    /// More security groups beyond the role's. Mutable.
    #[serde(default)]
    pub additional_security_groups: Vec<String>,
    /// Groups of the user's (`sg-` ids, in the cluster's VPC) the machine carries in place of
    /// the cluster's own of a role (CAPA's `securityGroupOverrides`): `node`, `lb`, and
    /// `controlplane` for a control plane machine. Used, never modified. Mutable.
    #[serde(default)]
    pub security_group_overrides: BTreeMap<crate::spec::Role, String>,
    /// Network interfaces of the user's the instance is launched with (CAPA's
    /// `networkInterfaces`): `eni-` ids, at most two, the first the primary (device 0), the
    /// machine's subnet the first's. Used as they are: never tagged, modified or deleted (they
    /// outlive the machine, available again). They carry the user's groups only, so the
    /// machine names the user's group for each of its roles in `securityGroupOverrides`, and
    /// each interface must already carry the machine's groups. Immutable.
    #[serde(default)]
    pub network_interfaces: Vec<String>,
    /// A public IPv4 pool of the user's own addresses (BYOIP) the machine's public address
    /// comes from (CAPA's `elasticIpPool`, with `publicIP: true`): the instance is launched
    /// without one, then, once running, given an Elastic IP of the pool (or AWS's, as the
    /// fallback says), tagged as the machine's and released after its instance is
    /// terminated. Read when the address is allocated: the machine keeps its address.
    #[serde(default)]
    pub elastic_ip_pool: Option<crate::spec::ElasticIpPool>,
    /// The IAM instance profile name. Immutable.
    #[serde(default)]
    pub iam_instance_profile: Option<String>,
    /// The key pair (default: the cluster's). Immutable.
    #[serde(default)]
    pub ssh_key_name: Option<String>,
    /// The root volume (default: the image's). Immutable.
    #[serde(default)]
    pub root_volume: Option<RootVolume>,
    /// More EBS volumes, made with the instance and deleted with it (CAPA's
    /// `nonRootVolumes`). Immutable.
    #[serde(default)]
    pub non_root_volumes: Vec<NonRootVolume>,
    /// Tags added to the instance. Mutable.
    #[serde(default)]
    pub additional_tags: BTreeMap<String, String>,
    /// The tenancy: `default`, `dedicated` or `host` (default: the VPC's; `host` with a
    /// `hostID`). Immutable.
    #[serde(default)]
    pub tenancy: Option<String>,
    /// A Dedicated Host of the user's to run on: used, never modified or released. Immutable.
    #[serde(default, rename = "hostID")]
    pub host_id: Option<String>,
    /// A Dedicated Host the provider allocates for this machine alone (CAPA's
    /// `dynamicHostAllocation`: `{tags}`, tags added to the host's): of the machine's instance
    /// type, in its subnet's zone, tagged as the cluster's, and released once the machine's
    /// instance is terminated. The instance runs on it (tenancy `host`); not with `hostID`.
    /// Immutable.
    #[serde(default)]
    pub dynamic_host_allocation: Option<DynamicHostAllocation>,
    /// The instance's affinity to its Dedicated Host: `default` or `host` (it restarts on the
    /// same host). Immutable.
    #[serde(default)]
    pub host_affinity: Option<String>,
    /// A placement group of the user's to launch into (CAPA's `placementGroupName`): used,
    /// never made, modified or deleted. Immutable.
    #[serde(default)]
    pub placement_group_name: Option<String>,
    /// The partition of that group, for a group of the `partition` strategy (1 to 7; by
    /// default EC2 spreads the group's instances over its partitions). Immutable.
    #[serde(default)]
    pub placement_group_partition: Option<i32>,
    /// Run as a Spot Instance (a one-time request, the instance terminated when EC2
    /// interrupts it; the next create launches another). Immutable.
    #[serde(default)]
    pub spot_market_options: Option<SpotMarketOptions>,
    /// A Capacity Reservation of the user's to launch into (CAPA's `capacityReservationId`):
    /// used, never made, modified or cancelled. Immutable.
    #[serde(default)]
    pub capacity_reservation_id: Option<String>,
    /// Which Capacity Reservations the instance may run in (CAPA's
    /// `capacityReservationPreference`): `Open` (any open one that matches it, else
    /// On-Demand: EC2's default), `None`, or `CapacityReservationsOnly` (it launches only into
    /// a reservation). With `capacityReservationId`, only `CapacityReservationsOnly`.
    /// Immutable.
    #[serde(default)]
    pub capacity_reservation_preference: Option<String>,
    /// The instance metadata service's options (CAPA's `instanceMetadataOptions`); left out,
    /// the launch takes the account's defaults, else the image's. Mutable.
    #[serde(default)]
    pub instance_metadata_options: Option<InstanceMetadataOptions>,
    /// The instance's hostname (CAPA's `privateDnsName`): its type and the DNS records of its
    /// resource name; left out, the subnet's settings. Immutable (the kubelet's node name is
    /// the hostname the instance boots with).
    #[serde(default)]
    pub private_dns_name: Option<PrivateDnsName>,
    /// CPU options (CAPA's `cpuOptions`): confidential computing. Immutable.
    #[serde(default)]
    pub cpu_options: Option<CpuOptions>,
    /// Send the user data as it is rather than gzipped (CAPA's `uncompressedUserData`), for
    /// an image whose boot agent does not take gzip; EC2's 16 KiB limit then applies to the
    /// text itself. Read at launch only, as the kubeadm section is.
    #[serde(default)]
    pub uncompressed_user_data: bool,
    /// Whether the instance's interface is enabled for a primary IPv6 address (CAPA's
    /// `assignPrimaryIPv6`: `enabled` or `disabled`): its first IPv6 address is then its
    /// primary one, kept for the instance's life (what a dual-stack target registered by
    /// instance id needs). By default enabled when the machine's subnet has an IPv6 block (a
    /// dual-stack cluster's), as CAPA does; `enabled` only in a dual-stack cluster, and not
    /// with `networkInterfaces` (the user's interfaces are taken as they are). Read at
    /// launch only: AWS never disables it.
    #[serde(default, rename = "assignPrimaryIPv6")]
    pub assign_primary_ipv6: Option<String>,
    /// The type of the instance's primary interface (CAPA's `networkInterfaceType`):
    /// `interface` or `efa`, an Elastic Fabric Adapter (an ENA interface with OS bypass for
    /// HPC and machine learning traffic), on an instance type that takes one (checked
    /// before the launch); left out, EC2's default (`interface`). Not with
    /// `networkInterfaces` (the user's interfaces are what they were made). Immutable.
    #[serde(default)]
    pub network_interface_type: Option<String>,
    /// The kubeadm configuration the machine boots with.
    pub kubeadm: KubeadmSpec,
}

/// An Elastic Fabric Adapter's interface type (CAPA's `networkInterfaceType`).
pub const EFA: &str = "efa";

/// AMD SEV-SNP's name in `confidentialCompute` (CAPA's).
pub const AMD_SEV_SNP: &str = "AMDEncryptedVirtualizationNestedPaging";

/// A machine's CPU options (CAPA's `cpuOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuOptions {
    /// `AMDEncryptedVirtualizationNestedPaging` (AMD SEV-SNP: the instance's memory encrypted
    /// with a key of its own; on an instance type with the `amd-sev-snp` feature, from an
    /// image booting UEFI) or `Disabled`; left out, EC2's default (disabled).
    #[serde(default, rename = "confidentialCompute")]
    pub confidential_compute: Option<String>,
}

impl CpuOptions {
    /// Whether AMD SEV-SNP is asked for.
    pub fn sev_snp(&self) -> bool {
        self.confidential_compute.as_deref() == Some(AMD_SEV_SNP)
    }
}

/// A machine's hostname options (CAPA's `privateDnsName`); each one left out is the
/// subnet's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateDnsName {
    /// `ip-name` (`ip-10-0-1-5.<region>.compute.internal`) or `resource-name`
    /// (`i-0123456789abcdef0.<region>.compute.internal`).
    #[serde(default, rename = "hostnameType")]
    pub hostname_type: Option<String>,
    /// Whether DNS answers the resource name with the instance's IPv4 address.
    #[serde(default, rename = "enableResourceNameDnsARecord")]
    pub enable_resource_name_dns_a_record: Option<bool>,
    /// Whether DNS answers the resource name with the instance's IPv6 address: only in a
    /// dual-stack cluster (`spec.network.vpc.ipv6`), whose subnets have an IPv6 range.
    #[serde(default, rename = "enableResourceNameDnsAAAARecord")]
    pub enable_resource_name_dns_aaaa_record: Option<bool>,
}

/// A machine's instance metadata options. Each one left out takes CAPA's default: the
/// endpoint enabled, its IPv6 address off, a hop limit of 1, tokens required (IMDSv2 only),
/// instance tags not in the metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstanceMetadataOptions {
    /// `enabled` or `disabled`: whether the instance can reach its metadata at all.
    #[serde(default = "enabled")]
    pub http_endpoint: String,
    /// `enabled` or `disabled`: the endpoint's IPv6 address.
    #[serde(default = "disabled", rename = "httpProtocolIPv6")]
    pub http_protocol_ipv6: String,
    /// How many network hops a token's answer travels, 1 to 64 (2 or more for containers
    /// that are not on the host network).
    #[serde(default = "one_hop")]
    pub http_put_response_hop_limit: i32,
    /// `required` (IMDSv2 only) or `optional` (IMDSv1 too).
    #[serde(default = "required")]
    pub http_tokens: String,
    /// `enabled` or `disabled`: the instance's tags in its metadata.
    #[serde(default = "disabled")]
    pub instance_metadata_tags: String,
}

impl Default for InstanceMetadataOptions {
    fn default() -> Self {
        InstanceMetadataOptions {
            http_endpoint: enabled(),
            http_protocol_ipv6: disabled(),
            http_put_response_hop_limit: one_hop(),
            http_tokens: required(),
            instance_metadata_tags: disabled(),
        }
    }
}

fn enabled() -> String {
    "enabled".into()
}

fn disabled() -> String {
    "disabled".into()
}

fn required() -> String {
    "required".into()
}

fn one_hop() -> i32 {
    1
}

/// A Dedicated Host allocated for one machine (CAPA's `dynamicHostAllocation`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DynamicHostAllocation {
    /// Tags added to the host's (the machine's additional tags; the cluster's ownership tags
    /// win a key).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

impl MachineSpec {
    /// Whether the machine's instance runs on a Dedicated Host: the user's, one allocated for
    /// it, or any of the user's (tenancy `host`).
    pub fn on_a_host(&self) -> bool {
        self.host_id.is_some()
            || self.dynamic_host_allocation.is_some()
            || self.tenancy.as_deref() == Some("host")
    }
}

/// CAPA's Capacity Reservation preferences, with EC2's word for each.
pub const CAPACITY_PREFERENCES: [(&str, &str); 3] = [
    ("Open", "open"),
    ("None", "none"),
    ("CapacityReservationsOnly", "capacity-reservations-only"),
];

/// A Spot machine's options (CAPA's `spotMarketOptions`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpotMarketOptions {
    /// The most to pay, in US dollars per hour, such as `"0.05"` (default: the On-Demand
    /// price, which caps the Spot price, so that only EC2's need of the capacity interrupts
    /// the machine).
    #[serde(default)]
    pub max_price: Option<String>,
}

/// Whether `price` is a maximum price EC2 takes: a decimal number of dollars per hour
/// (digits, a point and up to six decimals) above a tenth of a cent.
fn is_price(price: &str) -> bool {
    let (whole, fraction) = price.split_once('.').unwrap_or((price, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole)
        && digits(fraction)
        && whole.len() <= 6
        && fraction.len() <= 6
        && price.parse::<f64>().is_ok_and(|v| v > 0.001)
}

/// The image: an id, or a lookup.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AmiSpec {
    /// An image id.
    #[serde(default)]
    pub id: Option<String>,
    /// Find the newest image by name.
    #[serde(default)]
    pub lookup: Option<AmiLookup>,
}

/// CAPA's default image name format.
pub const DEFAULT_LOOKUP_FORMAT: &str = "capa-ami-{{.BaseOS}}-?{{.K8sVersion}}-*";

/// CAPA's default base OS of an image lookup.
pub const DEFAULT_LOOKUP_BASE_OS: &str = "ubuntu-24.04";

/// The name pattern `format` makes for `base_os` and `kubernetes_version` (without its `v`):
/// each `{{.BaseOS}}` and `{{.K8sVersion}}` (spaces inside the braces allowed, as in Go's
/// templates) replaced; any other action, or braces left open, is an error naming it.
pub fn lookup_pattern(
    format: &str,
    base_os: &str,
    kubernetes_version: &str,
) -> Result<String, String> {
    let version = kubernetes_version.trim_start_matches('v');
    let mut out = String::with_capacity(format.len() + 16);
    let mut rest = format;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!(
                "{:?} opens {{{{ without closing it",
                &rest[start..]
            ));
        };
        match after[..end].trim() {
            ".BaseOS" => out.push_str(base_os),
            ".K8sVersion" => out.push_str(version),
            other => {
                return Err(format!(
                    "{{{{{other}}}}} is not {{{{.BaseOS}}}} or {{{{.K8sVersion}}}}"
                ));
            }
        }
        rest = &after[end + 2..];
    }
    if rest.contains("}}") {
        return Err(format!("{rest:?} closes }}}} without opening it"));
    }
    out.push_str(rest);
    Ok(out)
}

/// An image lookup: the newest image of `owner` whose name matches `format`
/// (`capa-ami-<baseOS>-?<kubernetesVersion>-*` by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AmiLookup {
    /// The name format (CAPA's `imageLookupFormat`): a pattern of `*` and `?` in which
    /// `{{.BaseOS}}` and `{{.K8sVersion}}` (the version without its `v`) are replaced
    /// (default: the cluster's `imageLookupFormat`, else [`DEFAULT_LOOKUP_FORMAT`]).
    #[serde(default)]
    pub format: Option<String>,
    /// Such as `ubuntu-24.04` (default: the cluster's `imageLookupBaseOS`, else
    /// [`DEFAULT_LOOKUP_BASE_OS`]).
    #[serde(default, rename = "baseOS")]
    pub base_os: Option<String>,
    /// Such as `v1.31.0` (default: kubeadm.kubernetesVersion).
    #[serde(default)]
    pub kubernetes_version: Option<String>,
    /// The publishing account (default: the cluster's `imageLookupOrg`, else Cluster API's,
    /// 819546954734).
    #[serde(default)]
    pub owner: Option<String>,
    /// `x86_64` or `arm64` (default: the instance type's).
    #[serde(default)]
    pub architecture: Option<String>,
}

/// The machine's subnet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineSubnet {
    /// A subnet id.
    #[serde(default)]
    pub id: Option<String>,
    /// A zone of the cluster.
    #[serde(default)]
    pub availability_zone: Option<String>,
}

/// The root volume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RootVolume {
    /// GiB.
    pub size: i32,
    /// `gp3` (default), `gp2`, `io1`, ...
    #[serde(default)]
    pub r#type: Option<String>,
    /// Provisioned IOPS (`gp3`, `io1`, `io2`; required for the last two).
    #[serde(default)]
    pub iops: Option<i32>,
    /// Throughput in MiB/s (`gp3` only).
    #[serde(default)]
    pub throughput: Option<i32>,
    /// Encrypted (default false, or the account's EBS encryption by default).
    #[serde(default)]
    pub encrypted: bool,
    /// The KMS key encrypting it (a key id, key ARN, alias or alias ARN; needs `encrypted`);
    /// by default the account's default key for EBS.
    #[serde(default)]
    pub encryption_key: Option<String>,
}

impl RootVolume {
    /// Its type, `gp3` unless named.
    pub fn volume_type(&self) -> &str {
        self.r#type.as_deref().unwrap_or("gp3")
    }
}

/// A volume beside the root one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NonRootVolume {
    /// The device it is attached as: `/dev/sd[b-z]` or `/dev/xvd[b-z]`.
    pub device_name: String,
    /// GiB.
    pub size: i32,
    /// `gp3` (default), `gp2`, `io1`, `io2`, `st1`, `sc1` or `standard`.
    #[serde(default)]
    pub r#type: Option<String>,
    /// Provisioned IOPS (`gp3`, `io1`, `io2`; required for the last two).
    #[serde(default)]
    pub iops: Option<i32>,
    /// Throughput in MiB/s (`gp3` only).
    #[serde(default)]
    pub throughput: Option<i32>,
    /// Encrypted (default false, or the account's EBS encryption by default).
    #[serde(default)]
    pub encrypted: bool,
    /// The KMS key encrypting it (a key id, key ARN, alias or alias ARN; needs `encrypted`);
    /// by default the account's default key for EBS.
    #[serde(default)]
    pub encryption_key: Option<String>,
}

impl NonRootVolume {
    /// Its type, `gp3` unless named.
    pub fn volume_type(&self) -> &str {
        self.r#type.as_deref().unwrap_or("gp3")
    }
}

/// The problems of `volumes`: device names (the form EC2 recommends for Linux, each once),
/// types, sizes, and the options only some types take.
fn volume_problems(volumes: &[NonRootVolume], p: &mut Vec<String>) {
    let mut seen = std::collections::BTreeSet::new();
    for (n, v) in volumes.iter().enumerate() {
        let at = format!("spec.nonRootVolumes[{n}]");
        let letter = v
            .device_name
            .strip_prefix("/dev/sd")
            .or_else(|| v.device_name.strip_prefix("/dev/xvd"));
        if !letter.is_some_and(|l| l.len() == 1 && ("b"..="z").contains(&l)) {
            p.push(format!(
                "{at}.deviceName: {:?} is not /dev/sd[b-z] or /dev/xvd[b-z]",
                v.device_name
            ));
        }
        // `/dev/sdf` and `/dev/xvdf` are one device to the kernel's naming.
        if let Some(l) = letter
            && !seen.insert(l.to_string())
        {
            p.push(format!(
                "{at}.deviceName: {:?} is named twice",
                v.device_name
            ));
        }
        ebs_problems(
            &at,
            v.volume_type(),
            v.size,
            v.iops,
            v.throughput,
            (v.encrypted, v.encryption_key.as_deref()),
            p,
        );
    }
}

/// The problems of one EBS volume at `at`: its type, its size for that type, the IOPS and
/// throughput only some types take, and its KMS key (named as KMS names keys, on an
/// encrypted volume).
fn ebs_problems(
    at: &str,
    kind: &str,
    size: i32,
    iops: Option<i32>,
    throughput: Option<i32>,
    (encrypted, key): (bool, Option<&str>),
    p: &mut Vec<String>,
) {
    {
        let sizes = match kind {
            "gp2" | "gp3" => Some(1..=16384),
            "io1" | "io2" => Some(4..=16384),
            "st1" | "sc1" => Some(125..=16384),
            "standard" => Some(1..=1024),
            _ => None,
        };
        match sizes {
            None => p.push(format!(
                "{at}.type: {kind:?} is not gp2, gp3, io1, io2, st1, sc1 or standard"
            )),
            Some(r) if !r.contains(&size) => p.push(format!(
                "{at}.size: {size} GiB is not between {} and {} for {kind}",
                r.start(),
                r.end()
            )),
            Some(_) => {}
        }
        if iops.is_some() && !matches!(kind, "gp3" | "io1" | "io2") {
            p.push(format!("{at}.iops: {kind} volumes take no IOPS"));
        }
        if iops.is_none() && matches!(kind, "io1" | "io2") {
            p.push(format!("{at}.iops: {kind} volumes need their IOPS"));
        }
        if throughput.is_some() && kind != "gp3" {
            p.push(format!(
                "{at}.throughput: only gp3 volumes take a throughput"
            ));
        }
        if let Some(k) = key {
            if !encrypted {
                p.push(format!(
                    "{at}.encryptionKey: needs encrypted: true (EC2 takes a key only for an \
                     encrypted volume)"
                ));
            }
            if !is_kms_key(k) {
                p.push(format!(
                    "{at}.encryptionKey: {k:?} is not a KMS key id, key ARN, alias \
                     (alias/...) or alias ARN"
                ));
            }
        }
    }
}

/// Whether `s` names a KMS key as EC2 takes one: a key id (8-4-4-4-12 hex digits, or a
/// multi-Region `mrk-` id), a key ARN, an alias (`alias/...`) or an alias ARN.
fn is_kms_key(s: &str) -> bool {
    let key_id = |id: &str| {
        if let Some(hex) = id.strip_prefix("mrk-") {
            return hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
        }
        let groups: Vec<&str> = id.split('-').collect();
        groups.len() == 5
            && groups
                .iter()
                .zip([8, 4, 4, 4, 12])
                .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let alias = |a: &str| {
        a.strip_prefix("alias/").is_some_and(|name| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_-".contains(&b))
        })
    };
    let resource = match s.strip_prefix("arn:") {
        Some(arn) => match arn.splitn(5, ':').collect::<Vec<_>>().as_slice() {
            [_, "kms", region, account, resource]
                if !region.is_empty()
                    && account.len() == 12
                    && account.bytes().all(|b| b.is_ascii_digit()) =>
            {
                if let Some(id) = resource.strip_prefix("key/") {
                    return key_id(id);
                }
                *resource
            }
            _ => return false,
        },
        None => s,
    };
    key_id(resource) || alias(resource)
}

/// The key id a volume's `encryptionKey` names, when it names one by id or key ARN (an alias
/// names a key only KMS can tell).
pub fn named_key_id(key: &str) -> Option<&str> {
    let id = key.rsplit_once(":key/").map_or(key, |(_, id)| id);
    (!id.starts_with("alias/") && !id.contains(":alias/")).then_some(id)
}

/// The kubeadm configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeadmSpec {
    /// `init` for the first control plane, `join` for the rest.
    pub operation: KubeadmOperation,
    /// Such as `v1.31.0`.
    pub kubernetes_version: String,
    /// A bootstrap token of the user's (`[a-z0-9]{6}.[a-z0-9]{16}`); by default the
    /// cluster's, made by capa ([`crate::bootstrap`]). Init creates it, joins present it.
    #[serde(default)]
    pub bootstrap_token: Option<Secret>,
    /// For join: CA pins (`sha256:` and 64 hex digits) accepted beside the cluster CA's,
    /// which is always computed from the cluster's PKI.
    #[serde(default)]
    pub ca_cert_hashes: Vec<String>,
    /// A certificate key of the user's (64 hex digits): init uploads the control-plane
    /// certificates under it, control-plane joins fetch them with it; by default the
    /// cluster's, made by capa.
    #[serde(default)]
    pub certificate_key: Option<Secret>,
    /// The pod network (default 192.168.0.0/16, calico's); dual stack as kubeadm takes it,
    /// an IPv4 and an IPv6 CIDR comma-separated.
    #[serde(default)]
    pub pod_subnet: Option<String>,
    /// The service network (default 10.96.0.0/12); dual stack as `podSubnet`.
    #[serde(default)]
    pub service_subnet: Option<String>,
}

/// Checks a Kubernetes network as kubeadm takes it: one CIDR, or (dual stack) an IPv4 and
/// an IPv6 one, comma-separated.
fn kubernetes_network(v: &str) -> Result<(), String> {
    let parts: Vec<&str> = v.split(',').collect();
    let mut families = Vec::new();
    for part in &parts {
        match part.parse::<ipnet::IpNet>() {
            Ok(net) if net.trunc() == net => families.push(matches!(net, ipnet::IpNet::V4(_))),
            Ok(net) => {
                return Err(format!(
                    "has host bits set in {part} (the network is {})",
                    net.trunc()
                ));
            }
            Err(_) => return Err(format!("holds {part:?}, not a CIDR")),
        }
    }
    match families.as_slice() {
        [_] => Ok(()),
        [a, b] if a != b => Ok(()),
        _ => Err("is one CIDR, or an IPv4 and an IPv6 one for dual stack".into()),
    }
}

/// `init` or `join`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KubeadmOperation {
    /// `kubeadm init`: the first control plane.
    #[serde(rename = "init")]
    Init,
    /// `kubeadm join`.
    #[serde(rename = "join")]
    Join,
}

/// The roles whose security groups a machine of `role` carries.
pub fn carried_roles(role: MachineRole) -> &'static [crate::spec::Role] {
    use crate::spec::Role;
    match role {
        MachineRole::ControlPlane => &[Role::ControlPlane, Role::Node, Role::Lb],
        MachineRole::Node => &[Role::Node, Role::Lb],
    }
}

/// The problems of a machine's `networkInterfaces`.
fn interface_problems(p: &mut Vec<String>, s: &MachineSpec) {
    let enis = &s.network_interfaces;
    if enis.is_empty() {
        return;
    }
    if enis.len() > MAX_NETWORK_INTERFACES {
        p.push(format!(
            "spec.networkInterfaces: {} interfaces, at most {MAX_NETWORK_INTERFACES}",
            enis.len()
        ));
    }
    for (i, id) in enis.iter().enumerate() {
        let at = format!("spec.networkInterfaces[{i}]");
        crate::spec::validate::check_id(p, &at, id, "eni");
        if enis[..i].contains(id) {
            p.push(format!("{at}: {id} is named twice"));
        }
    }
    if s.subnet.id.is_some() || s.subnet.availability_zone.is_some() {
        p.push(
            "spec.subnet: a machine on spec.networkInterfaces is in its first interface's \
             subnet; give no subnet"
                .into(),
        );
    }
    if s.public_ip {
        p.push(
            "spec.publicIP: AWS maps a public address at launch only to an interface it \
             makes, not to one of spec.networkInterfaces"
                .into(),
        );
    }
    let missing: Vec<&str> = carried_roles(s.role)
        .iter()
        .filter(|r| !s.security_group_overrides.contains_key(r))
        .map(|r| r.as_str())
        .collect();
    if !missing.is_empty() {
        p.push(format!(
            "spec.networkInterfaces: the user's interfaces carry the user's groups only (the \
             provider never changes them, and a group of the cluster's on them would keep \
             the cluster from being deleted): name the user's group in \
             spec.securityGroupOverrides for {}",
            missing.join(", ")
        ));
    }
}

/// How many interfaces of the user's a machine takes (CAPA's limit).
pub const MAX_NETWORK_INTERFACES: usize = 2;

/// Checks a machine spec on its own (the cluster-dependent checks come at create time).
pub fn validate(m: &Machine) -> Vec<String> {
    let mut p = Vec::new();
    if m.api_version != super::API_VERSION {
        p.push(format!(
            "apiVersion: {:?}, expected {:?}",
            m.api_version,
            super::API_VERSION
        ));
    }
    if m.kind != "Machine" {
        p.push(format!("kind: {:?}, expected \"Machine\"", m.kind));
    }
    let name = &m.metadata.name;
    if name.is_empty()
        || name.len() > 63
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        p.push(format!(
            "metadata.name: {name:?} must be 1 to 63 lower-case letters, digits and hyphens"
        ));
    }
    let s = &m.spec;
    match s.assign_primary_ipv6.as_deref() {
        None | Some("enabled" | "disabled") => {}
        Some(other) => p.push(format!(
            "spec.assignPrimaryIPv6: {other:?} is not enabled or disabled"
        )),
    }
    if s.assign_primary_ipv6.as_deref() == Some("enabled") && !s.network_interfaces.is_empty() {
        p.push(
            "spec.assignPrimaryIPv6: enabled, but networkInterfaces are your own interfaces, \
             taken as they are (enable one with aws ec2 modify-network-interface-attribute \
             --enable-primary-ipv6)"
                .into(),
        );
    }
    match s.network_interface_type.as_deref() {
        None | Some("interface" | EFA) => {}
        Some(other) => p.push(format!(
            "spec.networkInterfaceType: {other:?} is not interface or efa"
        )),
    }
    if s.network_interface_type.is_some() && !s.network_interfaces.is_empty() {
        p.push(
            "spec.networkInterfaceType: given, but networkInterfaces are your own interfaces, \
             of the type they were made with (aws ec2 create-network-interface \
             --interface-type efa)"
                .into(),
        );
    }
    if let Some(l) = &s.ami.lookup
        && let Some(f) = &l.format
        && let Err(e) = lookup_pattern(f, DEFAULT_LOOKUP_BASE_OS, &s.kubeadm.kubernetes_version)
    {
        p.push(format!("spec.ami.lookup.format: {e}"));
    }
    match (&s.ami.id, &s.ami.lookup) {
        (Some(_), Some(_)) => p.push("spec.ami: give either id or lookup, not both".into()),
        (None, None) => p.push("spec.ami: give id or lookup".into()),
        (Some(id), None) if !id.starts_with("ami-") => {
            p.push(format!("spec.ami.id: {id:?} is not an ami- id"));
        }
        _ => {}
    }
    if s.instance_type.is_empty() || !s.instance_type.contains('.') {
        p.push(format!(
            "spec.instanceType: {:?} is not an instance type such as t3.large",
            s.instance_type
        ));
    }
    if s.subnet.id.is_some() && s.subnet.availability_zone.is_some() {
        p.push("spec.subnet: give either id or availabilityZone, not both".into());
    }
    if let Some(r) = &s.root_volume {
        if !(8..=16384).contains(&r.size) {
            p.push(format!(
                "spec.rootVolume.size: {} GiB is not between 8 and 16384",
                r.size
            ));
        }
        ebs_problems(
            "spec.rootVolume",
            r.volume_type(),
            // (Its size is checked above: at least 8 GiB.)
            r.size.max(8),
            r.iops,
            r.throughput,
            (r.encrypted, r.encryption_key.as_deref()),
            &mut p,
        );
    }
    volume_problems(&s.non_root_volumes, &mut p);
    let host_tags = s.dynamic_host_allocation.as_ref().map(|d| &d.tags);
    for (field, tags) in [
        ("spec.additionalTags", Some(&s.additional_tags)),
        ("spec.dynamicHostAllocation.tags", host_tags),
    ] {
        for (k, v) in tags.into_iter().flatten() {
            if k.is_empty()
                || k.len() > 128
                || v.len() > 256
                || k.to_ascii_lowercase().starts_with("aws:")
            {
                p.push(format!("{field}: {k:?} is not a valid tag"));
            }
            if k.contains(',')
                || k == "Name"
                || k.starts_with("sigs.k8s.io/cluster-api-provider-aws/")
            {
                p.push(format!("{field}: key {k:?} is reserved or holds a comma"));
            }
        }
    }
    if let Some(t) = &s.tenancy
        && !matches!(t.as_str(), "default" | "dedicated" | "host")
    {
        p.push(format!(
            "spec.tenancy: {t:?} is not default, dedicated or host"
        ));
    }
    if let Some(h) = &s.host_id
        && !h
            .strip_prefix("h-")
            .is_some_and(|x| matches!(x.len(), 8 | 17) && x.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        p.push(format!(
            "spec.hostID: {h:?} is not a Dedicated Host id (h-...)"
        ));
    }
    if let Some(a) = &s.host_affinity
        && !matches!(a.as_str(), "default" | "host")
    {
        p.push(format!("spec.hostAffinity: {a:?} is not default or host"));
    }
    if (s.host_id.is_some() || s.host_affinity.is_some() || s.dynamic_host_allocation.is_some())
        && s.tenancy.as_deref().is_some_and(|t| t != "host")
    {
        p.push(
            "spec.hostID, spec.hostAffinity and spec.dynamicHostAllocation need tenancy host"
                .into(),
        );
    }
    if s.host_id.is_some() && s.dynamic_host_allocation.is_some() {
        p.push(
            "spec.dynamicHostAllocation: a machine runs on the user's host (hostID) or on one \
             allocated for it, not both"
                .into(),
        );
    }
    if let Some(g) = &s.placement_group_name
        && (g.is_empty() || g.len() > 255)
    {
        p.push(format!(
            "spec.placementGroupName: {g:?} is not a placement group name (1 to 255 characters)"
        ));
    }
    if let Some(n) = s.placement_group_partition {
        if !(1..=7).contains(&n) {
            p.push(format!(
                "spec.placementGroupPartition: {n} is not a partition from 1 to 7"
            ));
        }
        if s.placement_group_name.is_none() {
            p.push("spec.placementGroupPartition needs spec.placementGroupName".into());
        }
    }
    if s.placement_group_name.is_some() && s.on_a_host() {
        p.push(
            "spec.placementGroupName: an instance on a Dedicated Host is in no placement group"
                .into(),
        );
    }
    if let Some(spot) = &s.spot_market_options {
        if let Some(price) = &spot.max_price
            && !is_price(price)
        {
            p.push(format!(
                "spec.spotMarketOptions.maxPrice: {price:?} is not a price in dollars per hour \
                 (a number above 0.001 such as \"0.05\")"
            ));
        }
        if s.on_a_host() {
            p.push(
                "spec.spotMarketOptions: Spot Instances do not run on Dedicated Hosts \
                 (tenancy host, hostID, dynamicHostAllocation)"
                    .into(),
            );
        }
    }
    if let Some(id) = &s.capacity_reservation_id {
        let hex = id.strip_prefix("cr-").unwrap_or_default();
        if !matches!(hex.len(), 8 | 17) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            p.push(format!(
                "spec.capacityReservationId: {id:?} is not a Capacity Reservation id \
                 (cr- and 17 hexadecimal digits)"
            ));
        }
        if s.on_a_host() {
            p.push(
                "spec.capacityReservationId: an instance on a Dedicated Host runs in no \
                 Capacity Reservation"
                    .into(),
            );
        }
    }
    if let Some(pref) = &s.capacity_reservation_preference
        && !CAPACITY_PREFERENCES.iter().any(|(capa, _)| capa == pref)
    {
        p.push(format!(
            "spec.capacityReservationPreference: {pref:?} is not Open, None or \
             CapacityReservationsOnly"
        ));
    }
    if s.capacity_reservation_id.is_some()
        && matches!(
            s.capacity_reservation_preference.as_deref(),
            Some("Open" | "None")
        )
    {
        p.push(
            "spec.capacityReservationPreference: with capacityReservationId it may only be \
             CapacityReservationsOnly or left out"
                .into(),
        );
    }
    if s.spot_market_options.is_some()
        && (s.capacity_reservation_id.is_some()
            || s.capacity_reservation_preference.as_deref() == Some("CapacityReservationsOnly"))
    {
        p.push(
            "spec.spotMarketOptions: Spot Instances run in no Capacity Reservation \
             (capacityReservationId, capacityReservationPreference CapacityReservationsOnly)"
                .into(),
        );
    }
    if let Some(o) = &s.instance_metadata_options {
        let mut one_of = |field: &str, value: &str, allowed: [&str; 2]| {
            if !allowed.contains(&value) {
                p.push(format!(
                    "spec.instanceMetadataOptions.{field}: {value:?} is not {} or {}",
                    allowed[0], allowed[1]
                ));
            }
        };
        one_of("httpEndpoint", &o.http_endpoint, ["enabled", "disabled"]);
        one_of(
            "httpProtocolIPv6",
            &o.http_protocol_ipv6,
            ["enabled", "disabled"],
        );
        one_of("httpTokens", &o.http_tokens, ["required", "optional"]);
        one_of(
            "instanceMetadataTags",
            &o.instance_metadata_tags,
            ["enabled", "disabled"],
        );
        if !(1..=64).contains(&o.http_put_response_hop_limit) {
            p.push(format!(
                "spec.instanceMetadataOptions.httpPutResponseHopLimit: {} is not from 1 to 64",
                o.http_put_response_hop_limit
            ));
        }
    }
    if let Some(t) = s
        .private_dns_name
        .as_ref()
        .and_then(|d| d.hostname_type.as_ref())
        && !crate::spec::HOSTNAME_TYPES.contains(&t.as_str())
    {
        p.push(format!(
            "spec.privateDnsName.hostnameType: {t:?} is not ip-name or resource-name"
        ));
    }
    for (i, g) in s.additional_security_groups.iter().enumerate() {
        crate::spec::validate::check_id(
            &mut p,
            &format!("spec.additionalSecurityGroups[{i}]"),
            g,
            "sg",
        );
    }
    for (role, g) in &s.security_group_overrides {
        let at = format!("spec.securityGroupOverrides.{}", role.as_str());
        crate::spec::validate::check_id(&mut p, &at, g, "sg");
        let carried = match role {
            crate::spec::Role::Node | crate::spec::Role::Lb => true,
            crate::spec::Role::ControlPlane => s.role == MachineRole::ControlPlane,
            _ => false,
        };
        if !carried {
            p.push(format!(
                "{at}: a {} machine carries no {} group (it carries node and lb{})",
                s.role.as_str(),
                role.as_str(),
                if s.role == MachineRole::ControlPlane {
                    ", and controlplane"
                } else {
                    ""
                }
            ));
        }
    }
    interface_problems(&mut p, s);
    if let Some(pool) = &s.elastic_ip_pool {
        crate::spec::validate::pool_problems(&mut p, "spec.elasticIpPool", pool);
        if !s.public_ip {
            p.push(
                "spec.elasticIpPool: gives the machine its public address, and spec.publicIP \
                 is not true"
                    .into(),
            );
        }
    }
    if let Some(c) = &s.cpu_options {
        match c.confidential_compute.as_deref() {
            Some(AMD_SEV_SNP | "Disabled") => {}
            Some(other) => p.push(format!(
                "spec.cpuOptions.confidentialCompute: {other:?} is not {AMD_SEV_SNP} or Disabled"
            )),
            None => p.push("spec.cpuOptions: give confidentialCompute".into()),
        }
    }
    let k = &s.kubeadm;
    if k.bootstrap_token
        .as_ref()
        .is_some_and(|t| !crate::bootstrap::is_token(&t.0))
    {
        // The value is a secret: never repeat it.
        p.push("spec.kubeadm.bootstrapToken: not of the form [a-z0-9]{6}.[a-z0-9]{16}".into());
    }
    for h in &k.ca_cert_hashes {
        if !crate::bootstrap::is_ca_cert_hash(h) {
            p.push(format!(
                "spec.kubeadm.caCertHashes: {h:?} is not sha256: and 64 hex digits"
            ));
        }
    }
    if k.certificate_key
        .as_ref()
        .is_some_and(|c| !crate::bootstrap::is_certificate_key(&c.0))
    {
        p.push("spec.kubeadm.certificateKey: not 64 hex digits".into());
    }
    for (field, value) in [
        ("podSubnet", &k.pod_subnet),
        ("serviceSubnet", &k.service_subnet),
    ] {
        if let Some(v) = value
            && let Err(e) = kubernetes_network(v)
        {
            p.push(format!("spec.kubeadm.{field}: {v:?} {e}"));
        }
    }
    if !k.kubernetes_version.starts_with('v') {
        p.push(format!(
            "spec.kubeadm.kubernetesVersion: {:?} must look like v1.31.0",
            k.kubernetes_version
        ));
    }
    if k.operation == KubeadmOperation::Init && s.role != MachineRole::ControlPlane {
        p.push("spec.kubeadm.operation: only a control plane can init".into());
    }
    p
}
