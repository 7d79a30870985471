//! DescribeInstanceTypes and DescribeInstanceTypeOfferings, over a catalogue of the instance
//! types whose specifications follow from their family and size, as the EC2 user guide's
//! instance type specifications give them:
//!
//! - the burstable families `t2`, `t3`, `t3a` and `t4g`, size by size;
//! - the general purpose (`m`), compute (`c`) and memory (`r`) families of the fifth to seventh
//!   generations without local storage or network extras (`m5`, `m5a`, `m6i`, `m6a`, `m6g`,
//!   `m7i`, `m7a`, `m7g`, and the same for `c` and `r`): `medium` 1 vCPU, `large` 2, `xlarge`
//!   4, `Nxlarge` 4N, `metal` as the family's largest size (`metal-Nxl` as `Nxlarge`); 4, 2
//!   and 8 GiB of memory per vCPU; two threads per core on Intel and on AMD before the seventh
//!   generation, one on Graviton and on AMD's seventh.
//!
//! Each type answers what follows from those rules and from the interface limits
//! ([`super::network_interface::limits`]): vCPUs, cores and threads, memory, architectures and
//! manufacturer, hypervisor (`nitro`; `xen` for `t2`; none on metal), boot modes (UEFI alone
//! on Graviton, legacy BIOS alone on `t2` and x86 bare metal, both on the others), AMD SEV-SNP
//! (the `c6a`, `m6a` and `r6a` sizes of the user guide's list), EBS and ENA
//! support, Elastic Fabric Adapters (the user guide's list: each family's largest size from
//! the sixth generation on, Graviton2 aside, and its bare metal size, one EFA each),
//! interfaces and addresses per interface, burstable performance; and the rules of
//! the user guide: the valid threads per core (1, and 2 where a core runs two), the placement
//! strategies (no cluster groups for burstable types), Dedicated Hosts (all but the burstable
//! families other than `t3`), auto
//! recovery (every type here: none has instance store), the free tier (`t2.micro` and
//! `t3.micro`), as the CLI's documented output for `t2.micro` shows them. Figures that differ
//! type by type without a rule (network performance, EBS bandwidth, clock speed, the valid
//! core counts, hibernation) are left out, as a type without them is answered. Other types of the model's list
//! are not described: naming one is `NotImplemented`, and the offerings list the catalogue
//! only.

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::network_interface::limits;
use crate::ec2::page;
use crate::generated::ec2::{
    ArchitectureType, BootModeType, DescribeInstanceTypeOfferingsRequest,
    DescribeInstanceTypeOfferingsResult, DescribeInstanceTypesRequest, DescribeInstanceTypesResult,
    EbsEncryptionSupport, EbsInfo, EbsNvmeSupport, EbsOptimizedSupport, EfaInfo, EnaSupport,
    InstanceType, InstanceTypeHypervisor, InstanceTypeInfo, InstanceTypeOffering, LocationType,
    MemoryInfo, NetworkInfo, PlacementGroupInfo, PlacementGroupStrategy, ProcessorInfo,
    RootDeviceType, SupportedAdditionalProcessorFeature, UsageClassType, VCpuInfo,
    VirtualizationType,
};
use crate::protocol::error::ApiError;
use crate::protocol::query::FormReader;
use crate::region::Region;

/// Who makes a family's processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Maker {
    Intel,
    Amd,
    Aws,
}

impl Maker {
    fn as_str(self) -> &'static str {
        match self {
            Maker::Intel => "Intel",
            Maker::Amd => "AMD",
            Maker::Aws => "AWS",
        }
    }
}

/// The `m`, `c` and `r` families of the catalogue: name, processors' maker, GiB of memory per
/// vCPU, threads per core.
const FAMILIES: &[(&str, Maker, i64, i32)] = &[
    ("m5", Maker::Intel, 4, 2),
    ("m5a", Maker::Amd, 4, 2),
    ("m6i", Maker::Intel, 4, 2),
    ("m6a", Maker::Amd, 4, 2),
    ("m6g", Maker::Aws, 4, 1),
    ("m7i", Maker::Intel, 4, 2),
    ("m7a", Maker::Amd, 4, 1),
    ("m7g", Maker::Aws, 4, 1),
    ("c5", Maker::Intel, 2, 2),
    ("c5a", Maker::Amd, 2, 2),
    ("c6i", Maker::Intel, 2, 2),
    ("c6a", Maker::Amd, 2, 2),
    ("c6g", Maker::Aws, 2, 1),
    ("c7i", Maker::Intel, 2, 2),
    ("c7a", Maker::Amd, 2, 1),
    ("c7g", Maker::Aws, 2, 1),
    ("r5", Maker::Intel, 8, 2),
    ("r5a", Maker::Amd, 8, 2),
    ("r6i", Maker::Intel, 8, 2),
    ("r6a", Maker::Amd, 8, 2),
    ("r6g", Maker::Aws, 8, 1),
    ("r7i", Maker::Intel, 8, 2),
    ("r7a", Maker::Amd, 8, 1),
    ("r7g", Maker::Aws, 8, 1),
];

/// What the catalogue knows of one type.
#[derive(Debug, Clone, Copy)]
struct Spec {
    vcpus: i32,
    threads_per_core: i32,
    memory_mib: i64,
    maker: Maker,
    burstable: bool,
    bare_metal: bool,
    /// `t2`: Xen, 32-bit too, no ENA, NVMe or EBS optimization, legacy BIOS only.
    xen: bool,
    interfaces: i32,
    ipv4_per_interface: i32,
}

/// vCPUs and memory (MiB) of a burstable type.
fn burstable(family: &str, size: &str) -> Option<(i32, i64)> {
    const GIB: i64 = 1024;
    Some(match (family, size) {
        ("t2", "nano") => (1, GIB / 2),
        ("t2", "micro") => (1, GIB),
        ("t2", "small") => (1, 2 * GIB),
        (_, "nano") => (2, GIB / 2),
        (_, "micro") => (2, GIB),
        (_, "small") => (2, 2 * GIB),
        (_, "medium") => (2, 4 * GIB),
        (_, "large") => (2, 8 * GIB),
        (_, "xlarge") => (4, 16 * GIB),
        (_, "2xlarge") => (8, 32 * GIB),
        _ => return None,
    })
}

/// vCPUs of a size of the `m`, `c` and `r` families (`metal` resolved by the caller).
fn vcpus_of_size(size: &str) -> Option<i32> {
    match size {
        "medium" => Some(1),
        "large" => Some(2),
        "xlarge" => Some(4),
        s => {
            let n = s
                .strip_prefix("metal-")
                .and_then(|m| m.strip_suffix("xl"))
                .or_else(|| s.strip_suffix("xlarge"))?;
            n.parse::<i32>().ok().map(|n| n * 4)
        }
    }
}

/// The cores and threads per core of `t`, if the catalogue knows it (an instance's default
/// CPU options).
pub fn cores_and_threads(t: InstanceType) -> Option<(i32, i32)> {
    let s = spec(t)?;
    Some((s.vcpus / s.threads_per_core.max(1), s.threads_per_core))
}

/// What the catalogue knows of `t`, if it is one of its types.
fn spec(t: InstanceType) -> Option<Spec> {
    let (family, size) = t.as_str().split_once('.')?;
    let limits = limits::of(t)?;
    let interfaces = i32::try_from(limits.interfaces).ok()?;
    let ipv4_per_interface = i32::try_from(limits.ipv4_per_interface).ok()?;
    if matches!(family, "t2" | "t3" | "t3a" | "t4g") {
        let (vcpus, memory_mib) = burstable(family, size)?;
        let maker = match family {
            "t3a" => Maker::Amd,
            "t4g" => Maker::Aws,
            _ => Maker::Intel,
        };
        // t3 and t3a run two threads per core; t4g and t2 one.
        let threads_per_core = if matches!(family, "t3" | "t3a") { 2 } else { 1 };
        return Some(Spec {
            vcpus,
            threads_per_core,
            memory_mib,
            maker,
            burstable: true,
            bare_metal: false,
            xen: XEN_FAMILIES.contains(&family),
            interfaces,
            ipv4_per_interface,
        });
    }
    let &(_, maker, gib_per_vcpu, threads_per_core) =
        FAMILIES.iter().find(|(name, ..)| *name == family)?;
    let vcpus = if size == "metal" {
        largest(family)?
    } else {
        vcpus_of_size(size)?
    };
    Some(Spec {
        vcpus,
        threads_per_core,
        memory_mib: i64::from(vcpus) * gib_per_vcpu * 1024,
        maker,
        burstable: false,
        bare_metal: size.starts_with("metal"),
        xen: false,
        interfaces,
        ipv4_per_interface,
    })
}

/// The vCPUs of the largest size of one of the `m`, `c` and `r` families (not bare metal).
fn largest(family: &str) -> Option<i32> {
    InstanceType::VALUES
        .iter()
        .filter_map(|v| v.strip_prefix(family)?.strip_prefix('.'))
        .filter(|s| !s.starts_with("metal"))
        .filter_map(vcpus_of_size)
        .max()
}

/// How many Elastic Fabric Adapters `t` takes, if any (`NetworkInfo.EfaInfo`): as the EC2
/// user guide's list of EFA instance types has it for the catalogue's families, the largest
/// size of each family from the sixth generation on (Graviton2's `m6g`, `c6g` and `r6g`
/// aside) and the bare metal size as large, one EFA each.
pub fn max_efa_interfaces(t: InstanceType) -> Option<i32> {
    let (family, _) = t.as_str().split_once('.')?;
    let s = spec(t)?;
    let generation = family.chars().nth(1)?.to_digit(10)?;
    let graviton2 = generation == 6 && s.maker == Maker::Aws;
    let eligible = !s.burstable && generation >= 6 && !graviton2;
    (eligible && Some(s.vcpus) == largest(family)).then_some(1)
}

/// The vCPUs of `t`, if the catalogue knows it.
pub fn vcpus(t: InstanceType) -> Option<i32> {
    spec(t).map(|s| s.vcpus)
}

/// The fake's On-Demand price of `t` (USD per hour, Linux), if the catalogue knows it: AWS's
/// prices follow no rule the fake could derive, so these are the fake's own, of AWS's order
/// of magnitude and in AWS's proportions: burstable types by memory ($0.0104 per GiB, as
/// `t3` is priced), the others by vCPUs and memory ($0.037 per vCPU and $0.00275 per GiB, as
/// `m5.large` and `c5.large` are priced); AMD's 10% and Graviton's 20% below Intel's.
pub fn on_demand_price(t: InstanceType) -> Option<f64> {
    let s = spec(t)?;
    let gib = s.memory_mib as f64 / 1024.0;
    let base = if s.burstable {
        0.0104 * gib
    } else {
        0.037 * f64::from(s.vcpus) + 0.00275 * gib
    };
    let maker = match s.maker {
        Maker::Intel => 1.0,
        Maker::Amd => 0.9,
        Maker::Aws => 0.8,
    };
    Some(base * maker)
}

/// Every type of the catalogue.
pub fn catalogued() -> impl Iterator<Item = InstanceType> {
    catalogue().map(|(t, _)| t)
}

/// Whether `t` runs on Dedicated Hosts: every type of the catalogue but the burstable ones
/// other than `t3` (T3 is the burstable family with Dedicated Hosts).
fn on_hosts(t: InstanceType) -> bool {
    let family = t.as_str().split_once('.').map_or("", |(f, _)| f);
    spec(t).is_some_and(|s| !s.burstable || family == "t3")
}

/// The hardware of a Dedicated Host of one family: sockets, physical cores, vCPUs, and the
/// slots its instances take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostShape {
    /// Sockets: one on Graviton, two otherwise.
    pub sockets: i32,
    /// Physical cores.
    pub cores: i32,
    /// vCPUs: the cores times the family's threads per core.
    pub vcpus: i32,
    /// The capacity its instances take from ([`host_slots`]): its vCPUs, but twice as many on
    /// a T3 host, whose instances share cores.
    pub slots: i32,
}

/// The types of `family` a Dedicated Host of it runs, with the slots each takes, smallest
/// first: empty when the family is not the catalogue's or does not run on Dedicated Hosts.
pub fn host_sizes(family: &str) -> Vec<(InstanceType, i32)> {
    let mut sizes: Vec<(InstanceType, i32)> = catalogue()
        .filter(|(t, _)| {
            on_hosts(*t) && t.as_str().split_once('.').is_some_and(|(f, _)| f == family)
        })
        .filter_map(|(t, _)| Some((t, host_slots(t)?)))
        .collect();
    sizes.sort_by_key(|&(t, slots)| (slots, t.as_str()));
    sizes
}

/// The slots an instance of `t` takes on a Dedicated Host: its vCPUs; on a T3 host, which
/// runs four times as many instances as a comparable host (the Dedicated Hosts FAQ), one for
/// the sizes up to `medium` (192 of them on a host) and its vCPUs for the larger ones.
pub fn host_slots(t: InstanceType) -> Option<i32> {
    let s = spec(t)?;
    let small = matches!(
        t.as_str().split_once('.').map(|(_, size)| size),
        Some("nano" | "micro" | "small" | "medium")
    );
    Some(if s.burstable && small { 1 } else { s.vcpus })
}

/// The hardware of a Dedicated Host of `family`, if the family runs on Dedicated Hosts: the
/// family's largest size (its `metal` one where it has one) takes the whole host, as the user
/// guide's m5 example has it (2 sockets, 48 cores, 96 vCPUs, so 6 `m5.4xlarge` of 8 cores
/// each); a T3 host has 2 sockets of 24 cores, 96 vCPUs and 192 slots.
pub fn host_shape(family: &str) -> Option<HostShape> {
    let sizes = host_sizes(family);
    let &(largest, _) = sizes.last()?;
    let s = spec(largest)?;
    let threads = s.threads_per_core.max(1);
    if s.burstable {
        return Some(HostShape {
            sockets: 2,
            cores: 48,
            vcpus: 48 * threads,
            slots: 2 * 48 * threads,
        });
    }
    Some(HostShape {
        sockets: if s.maker == Maker::Aws { 1 } else { 2 },
        cores: s.vcpus / threads,
        vcpus: s.vcpus,
        slots: s.vcpus,
    })
}

/// The catalogue: every type of the model's list the rules describe, by name.
fn catalogue() -> impl Iterator<Item = (InstanceType, Spec)> {
    InstanceType::VALUES.iter().filter_map(|v| {
        let t = InstanceType::from_wire(v)?;
        spec(t).map(|s| (t, s))
    })
}

fn architectures(s: &Spec) -> Vec<ArchitectureType> {
    if s.maker == Maker::Aws {
        vec![ArchitectureType::Arm64]
    } else if s.xen {
        vec![ArchitectureType::I386, ArchitectureType::X8664]
    } else {
        vec![ArchitectureType::X8664]
    }
}

/// The boot modes of a type, as the user guide gives them: UEFI alone on Graviton; legacy
/// BIOS, and UEFI on Nitro types but bare metal ones.
fn boot_modes(s: &Spec) -> Vec<BootModeType> {
    if s.maker == Maker::Aws {
        vec![BootModeType::Uefi]
    } else if s.xen || s.bare_metal {
        vec![BootModeType::LegacyBios]
    } else {
        vec![BootModeType::LegacyBios, BootModeType::Uefi]
    }
}

/// The boot modes `t` supports, if the catalogue knows it.
pub fn supported_boot_modes(t: InstanceType) -> Option<Vec<BootModeType>> {
    spec(t).map(|s| boot_modes(&s))
}

/// Whether `t` supports AMD SEV-SNP: the sizes of `c6a` up to `16xlarge`, of `m6a` up to
/// `8xlarge` and of `r6a` up to `4xlarge`, the user guide's list of supported types.
pub fn supports_sev_snp(t: InstanceType) -> bool {
    let Some((family, size)) = t.as_str().split_once('.') else {
        return false;
    };
    let largest = match family {
        "c6a" => 64,
        "m6a" => 32,
        "r6a" => 16,
        _ => return false,
    };
    size != "medium"
        && !size.starts_with("metal")
        && vcpus_of_size(size).is_some_and(|v| v <= largest)
}

/// The additional processor features of `t` (`amd-sev-snp`).
fn features(t: InstanceType) -> Vec<SupportedAdditionalProcessorFeature> {
    if supports_sev_snp(t) {
        vec![SupportedAdditionalProcessorFeature::AmdSevSnp]
    } else {
        Vec::new()
    }
}

fn hypervisor(s: &Spec) -> Option<InstanceTypeHypervisor> {
    if s.bare_metal {
        None
    } else if s.xen {
        Some(InstanceTypeHypervisor::Xen)
    } else {
        Some(InstanceTypeHypervisor::Nitro)
    }
}

/// The threads per core a launch may ask of a type: 1, and 2 where its cores run two.
fn valid_threads_per_core(s: &Spec) -> Vec<i32> {
    if s.threads_per_core == 2 {
        vec![1, 2]
    } else {
        vec![1]
    }
}

/// The placement group strategies a type takes: cluster groups take no burstable type.
fn placement_strategies(s: &Spec) -> Vec<PlacementGroupStrategy> {
    if s.burstable {
        vec![
            PlacementGroupStrategy::Partition,
            PlacementGroupStrategy::Spread,
        ]
    } else {
        vec![
            PlacementGroupStrategy::Cluster,
            PlacementGroupStrategy::Partition,
            PlacementGroupStrategy::Spread,
        ]
    }
}

/// Whether `t` is in the free tier (the classic rule: `t2.micro`, and `t3.micro` where `t2`
/// is not offered; every region here offers both).
fn free_tier(t: InstanceType) -> bool {
    matches!(t.as_str(), "t2.micro" | "t3.micro")
}

/// `t` as DescribeInstanceTypes answers it.
fn render(t: InstanceType, s: &Spec) -> InstanceTypeInfo {
    let nitro = !s.xen;
    InstanceTypeInfo {
        instance_type: Some(t),
        current_generation: Some(true),
        supported_usage_classes: Some(vec![UsageClassType::OnDemand, UsageClassType::Spot]),
        supported_root_device_types: Some(vec![RootDeviceType::Ebs]),
        supported_virtualization_types: Some(vec![VirtualizationType::Hvm]),
        bare_metal: Some(s.bare_metal),
        hypervisor: hypervisor(s),
        processor_info: Some(ProcessorInfo {
            supported_architectures: Some(architectures(s)),
            manufacturer: Some(s.maker.as_str().to_string()),
            supported_features: Some(features(t)).filter(|f| !f.is_empty()),
            ..Default::default()
        }),
        v_cpu_info: Some(VCpuInfo {
            default_v_cpus: Some(s.vcpus),
            default_cores: Some(s.vcpus / s.threads_per_core.max(1)),
            default_threads_per_core: Some(s.threads_per_core),
            valid_threads_per_core: Some(valid_threads_per_core(s)),
            ..Default::default()
        }),
        memory_info: Some(MemoryInfo {
            size_in_mi_b: Some(s.memory_mib),
        }),
        instance_storage_supported: Some(false),
        ebs_info: Some(EbsInfo {
            ebs_optimized_support: Some(if nitro {
                EbsOptimizedSupport::Default
            } else {
                EbsOptimizedSupport::Unsupported
            }),
            encryption_support: Some(EbsEncryptionSupport::Supported),
            nvme_support: Some(if nitro {
                EbsNvmeSupport::Required
            } else {
                EbsNvmeSupport::Unsupported
            }),
            ..Default::default()
        }),
        network_info: Some(NetworkInfo {
            maximum_network_interfaces: Some(s.interfaces),
            maximum_network_cards: Some(1),
            default_network_card_index: Some(0),
            ipv4_addresses_per_interface: Some(s.ipv4_per_interface),
            ipv6_addresses_per_interface: Some(s.ipv4_per_interface),
            ipv6_supported: Some(true),
            ena_support: Some(if nitro {
                EnaSupport::Required
            } else {
                EnaSupport::Unsupported
            }),
            efa_supported: Some(max_efa_interfaces(t).is_some()),
            efa_info: max_efa_interfaces(t).map(|n| EfaInfo {
                maximum_efa_interfaces: Some(n),
            }),
            ..Default::default()
        }),
        burstable_performance_supported: Some(s.burstable),
        placement_group_info: Some(PlacementGroupInfo {
            supported_strategies: Some(placement_strategies(s)),
        }),
        dedicated_hosts_supported: Some(on_hosts(t)),
        auto_recovery_supported: Some(true),
        free_tier_eligible: Some(free_tier(t)),
        supported_boot_modes: Some(boot_modes(s)),
        supported_in_region: Some(true),
        ..Default::default()
    }
}

/// A type as DescribeInstanceTypes filters it.
struct Listed(InstanceType, Spec);

/// The documented filter names of [`Listed`], each written once: those its `values` answer,
/// then those no type of the catalogue has (`NEVER_SET`).
macro_rules! filter_names {
    (answered: [$($a:literal),* $(,)?], never: [$($n:literal),* $(,)?] $(,)?) => {
        const NAMES: &'static [&'static str] = &[$($a,)* $($n,)*];
        const NEVER_SET: &'static [&'static str] = &[$($n,)*];
    };
}

impl Filterable for Listed {
    filter_names! {
        answered: [
            "auto-recovery-supported",
            "bare-metal",
            "burstable-performance-supported",
            "current-generation",
            "dedicated-hosts-supported",
            "ebs-info.ebs-optimized-support",
            "ebs-info.encryption-support",
            "ebs-info.nvme-support",
            "free-tier-eligible",
            "hypervisor",
            "instance-storage-supported",
            "instance-type",
            "memory-info.size-in-mib",
            "network-info.efa-info.maximum-efa-interfaces",
            "network-info.efa-supported",
            "network-info.ena-support",
            "network-info.ipv4-addresses-per-interface",
            "network-info.ipv6-addresses-per-interface",
            "network-info.ipv6-supported",
            "network-info.maximum-network-cards",
            "network-info.maximum-network-interfaces",
            "processor-info.supported-architecture",
            "processor-info.supported-features",
            "supported-boot-mode",
            "supported-root-device-type",
            "supported-usage-class",
            "supported-virtualization-type",
            "vcpu-info.default-cores",
            "vcpu-info.default-threads-per-core",
            "vcpu-info.default-vcpus",
            "vcpu-info.valid-threads-per-core",
        ],
        // Figures the catalogue does not hold: no type matches them.
        never: [
            "ebs-info.attachment-limit-type",
            "ebs-info.maximum-ebs-attachments",
            "ebs-info.ebs-optimized-info.baseline-bandwidth-in-mbps",
            "ebs-info.ebs-optimized-info.baseline-iops",
            "ebs-info.ebs-optimized-info.baseline-throughput-in-mbps",
            "ebs-info.ebs-optimized-info.maximum-bandwidth-in-mbps",
            "ebs-info.ebs-optimized-info.maximum-iops",
            "ebs-info.ebs-optimized-info.maximum-throughput-in-mbps",
            "hibernation-supported",
            "instance-storage-info.disk.count",
            "instance-storage-info.disk.size-in-gb",
            "instance-storage-info.disk.type",
            "instance-storage-info.encryption-support",
            "instance-storage-info.nvme-support",
            "instance-storage-info.total-size-in-gb",
            "network-info.bandwidth-weightings",
            "network-info.flexible-ena-queues-support",
            "network-info.encryption-in-transit-supported",
            "network-info.network-performance",
            "nitro-enclaves-support",
            "nitro-tpm-support",
            "nitro-tpm-info.supported-versions",
            "processor-info.sustained-clock-speed-in-ghz",
            "reboot-migration-support",
            "vcpu-info.valid-cores",
        ],
    }
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let Listed(t, s) = self;
        let list = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
        match name {
            "bare-metal" => flag(s.bare_metal),
            "burstable-performance-supported" => flag(s.burstable),
            "current-generation" => flag(true),
            "ebs-info.ebs-optimized-support" => one(if s.xen { "unsupported" } else { "default" }),
            "ebs-info.encryption-support" => one("supported"),
            "ebs-info.nvme-support" => one(if s.xen { "unsupported" } else { "required" }),
            "hypervisor" => hypervisor(s).map(|h| one(h.as_str())).unwrap_or_default(),
            "instance-storage-supported" => flag(false),
            "instance-type" => one(t.as_str()),
            "memory-info.size-in-mib" => one(s.memory_mib.to_string()),
            "network-info.efa-supported" => flag(max_efa_interfaces(*t).is_some()),
            "network-info.efa-info.maximum-efa-interfaces" => max_efa_interfaces(*t)
                .map(|n| one(n.to_string()))
                .unwrap_or_default(),
            "network-info.ena-support" => one(if s.xen { "unsupported" } else { "required" }),
            "network-info.ipv4-addresses-per-interface"
            | "network-info.ipv6-addresses-per-interface" => one(s.ipv4_per_interface.to_string()),
            "network-info.ipv6-supported" => flag(true),
            "network-info.maximum-network-cards" => one("1"),
            "network-info.maximum-network-interfaces" => one(s.interfaces.to_string()),
            "processor-info.supported-architecture" => architectures(s)
                .iter()
                .map(|a| a.as_str().to_string())
                .collect(),
            "processor-info.supported-features" => features(*t)
                .iter()
                .map(|f| f.as_str().to_string())
                .collect(),
            "supported-boot-mode" => boot_modes(s)
                .iter()
                .map(|b| b.as_str().to_string())
                .collect(),
            "supported-root-device-type" => one("ebs"),
            "supported-usage-class" => list(vec!["on-demand", "spot"]),
            "supported-virtualization-type" => one("hvm"),
            "vcpu-info.default-cores" => one((s.vcpus / s.threads_per_core.max(1)).to_string()),
            "vcpu-info.default-threads-per-core" => one(s.threads_per_core.to_string()),
            "vcpu-info.default-vcpus" => one(s.vcpus.to_string()),
            "vcpu-info.valid-threads-per-core" => valid_threads_per_core(s)
                .iter()
                .map(i32::to_string)
                .collect(),
            "auto-recovery-supported" => flag(true),
            "dedicated-hosts-supported" => flag(on_hosts(*t)),
            "free-tier-eligible" => flag(free_tier(*t)),
            _ => Vec::new(),
        }
    }
}

/// The words AWS refuses names that are no instance type with.
pub fn not_types(names: &[&str]) -> String {
    format!(
        "The following supplied instance types do not exist: [{}]",
        names.join(", ")
    )
}

/// DescribeInstanceTypes' refusal of names that are no instance type: all of them in one
/// `InvalidInstanceType`, in AWS's words, read from the form before it is decoded (whose
/// enum check would refuse the first as any other value).
pub fn check_named(form: &FormReader) -> Result<(), ApiError> {
    let unknown: Vec<&str> = form
        .pairs()
        .filter(|(key, _)| {
            key.strip_prefix("InstanceType.")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .map(|(_, value)| value)
        .filter(|value| InstanceType::from_wire(value).is_none())
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(ApiError::new(
            Code::InvalidInstanceType,
            not_types(&unknown),
        ))
    }
}

/// `DescribeInstanceTypes`: the types named (each one the catalogue describes), else the
/// whole catalogue; filters; `MaxResults` 5..100 and `NextToken`, by type name.
pub fn describe_instance_types(
    _region: &mut Region,
    input: DescribeInstanceTypesRequest,
) -> Result<DescribeInstanceTypesResult, ApiError> {
    page::check_max_results(input.max_results, 5, 100)?;
    let filters = Filters::parse::<Listed>(input.filters)?;
    let mut found: Vec<Listed> = match input.instance_types.filter(|v| !v.is_empty()) {
        Some(named) => {
            let mut out = Vec::new();
            for t in named {
                let s = spec(t).ok_or_else(|| {
                    ApiError::not_implemented(format!(
                        "fakeaws does not describe the instance type {} (its catalogue: the \
                         t2, t3, t3a and t4g families, and the m, c and r families of the fifth \
                         to seventh generations without local storage)",
                        t.as_str()
                    ))
                })?;
                out.push(Listed(t, s));
            }
            out
        }
        None => catalogue().map(|(t, s)| Listed(t, s)).collect(),
    };
    found.retain(|l| filters.matches(l, None));
    found.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    found.dedup_by(|a, b| a.0 == b.0);
    let (items, next) = page::page(
        found,
        |l| l.0.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInstanceTypesResult {
        instance_types: Some(items.iter().map(|l| render(l.0, &l.1)).collect()),
        next_token: next,
    })
}

/// An offering as DescribeInstanceTypeOfferings filters and pages it.
struct Offering {
    instance_type: InstanceType,
    location: String,
    /// `location/type`: the order of the answer and its pages.
    key: String,
}

impl Filterable for Offering {
    const NAMES: &'static [&'static str] = &["instance-type", "location"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "instance-type" => one(self.instance_type.as_str()),
            "location" => one(self.location.clone()),
            _ => Vec::new(),
        }
    }
}

/// The families of the previous generations, on the Xen hypervisor, that RunInstances
/// launches though the catalogue does not describe them (the EC2 user guide's Xen-based and
/// previous-generation types).
const XEN_FAMILIES: &[&str] = &[
    "t1", "t2", "m1", "m2", "m3", "m4", "c1", "c3", "c4", "r3", "r4", "i2", "i3", "d2", "g2", "g3",
    "p2", "p3", "x1", "x1e", "h1", "hs1", "cc2", "cr1",
];

/// Whether `t` runs on the Xen hypervisor (the catalogue's `t2`, and the previous
/// generations' families; a bare metal size never).
pub fn is_xen(t: InstanceType) -> bool {
    match t.as_str().split_once('.') {
        Some((family, size)) => XEN_FAMILIES.contains(&family) && size != "metal",
        None => false,
    }
}

/// Whether `zone` offers `t`: every zone offers every type, except an availability zone
/// whose AZ id is one of [`crate::ec2::availability_zone::XEN_ONLY_ZONE_IDS`], which offers
/// the Xen-based types only.
pub fn offered_in(zone: &crate::ec2::availability_zone::Zone, t: InstanceType) -> bool {
    !crate::ec2::availability_zone::XEN_ONLY_ZONE_IDS.contains(&zone.id.as_str()) || is_xen(t)
}

/// Refuses a launch of `t` in `zone` (a zone the request named, by its subnet or its
/// placement) when the zone does not offer it: `Unsupported`, naming the region's zones that
/// do, as AWS words it.
pub fn check_offered(region: &Region, zone: &str, t: InstanceType) -> Result<(), ApiError> {
    let Some(z) = region.zones.iter().find(|z| z.name == zone) else {
        return Ok(());
    };
    if offered_in(z, t) {
        return Ok(());
    }
    let others: Vec<&str> = region
        .zones
        .iter()
        .filter(|o| offered_in(o, t))
        .map(|o| o.name.as_str())
        .collect();
    Err(ApiError::new(
        "Unsupported",
        format!(
            "Your requested instance type ({}) is not supported in your requested Availability \
             Zone ({zone}). Please retry your request by not specifying an Availability Zone or \
             choosing {}.",
            t.as_str(),
            others.join(", ")
        ),
    ))
}

/// `DescribeInstanceTypeOfferings`: every type of the catalogue in the region, or in each of
/// its zones (by name or id) those the zone offers ([`offered_in`]); filters `instance-type`
/// and `location`; `MaxResults` 5..1000.
pub fn describe_instance_type_offerings(
    region: &mut Region,
    input: DescribeInstanceTypeOfferingsRequest,
) -> Result<DescribeInstanceTypeOfferingsResult, ApiError> {
    page::check_max_results(input.max_results, 5, 1000)?;
    let filters = Filters::parse::<Offering>(input.filters)?;
    let location_type = input.location_type.unwrap_or(LocationType::Region);
    // Each location, and the zone it is (none for the region).
    let locations: Vec<(String, Option<&crate::ec2::availability_zone::Zone>)> = match location_type
    {
        LocationType::Region => vec![(region.name.clone(), None)],
        LocationType::AvailabilityZone => region
            .zones
            .iter()
            .map(|z| (z.name.clone(), Some(z)))
            .collect(),
        LocationType::AvailabilityZoneId => region
            .zones
            .iter()
            .map(|z| (z.id.clone(), Some(z)))
            .collect(),
        LocationType::Outpost => {
            return Err(ApiError::not_implemented(
                "fakeaws serves no Outposts (LocationType outpost)",
            ));
        }
    };
    let mut found: Vec<Offering> = locations
        .iter()
        .flat_map(|(location, zone)| {
            catalogue()
                .filter(move |(t, _)| zone.is_none_or(|z| offered_in(z, *t)))
                .map(move |(t, _)| Offering {
                    instance_type: t,
                    location: location.clone(),
                    key: format!("{location}/{}", t.as_str()),
                })
        })
        .filter(|o| filters.matches(o, None))
        .collect();
    found.sort_by(|a, b| a.key.cmp(&b.key));
    let (items, next) = page::page(
        found,
        |o| o.key.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInstanceTypeOfferingsResult {
        instance_type_offerings: Some(
            items
                .into_iter()
                .map(|o| InstanceTypeOffering {
                    instance_type: Some(o.instance_type),
                    location_type: Some(location_type),
                    location: Some(o.location),
                })
                .collect(),
        ),
        next_token: next,
    })
}
