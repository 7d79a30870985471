//! Amazon VPC IP Address Manager (IPAM): IPAMs, their scopes and pools, the CIDRs provisioned
//! to a pool and the allocations made from it, and VPCs whose range comes from a pool
//! (CreateVpc's `Ipv4IpamPoolId`, as the Cluster API provider's `vpc.ipamPool` asks for).
//!
//! - CreateIpam makes the IPAM with its two default scopes, `private` and `public`; its
//!   operating regions are those named (real regions of its partition) and its own, which
//!   AWS adds. DeleteIpam refuses while pools or scopes of the account's own remain, unless
//!   `Cascade` (then everything of the private scopes goes; a pool in the public scope still
//!   refuses it, as the model documents).
//! - CreateIpamPool makes a top-level pool of a scope, or a pool inside `SourceIpamPoolId`
//!   (same scope and family, depth one more; a source's locale binds the child's). A
//!   `Locale` is one of the IPAM's operating regions, or none (`None`, any locale).
//! - ProvisionIpamPoolCidr gives a pool a CIDR: a top-level pool takes a `Cidr` that no other
//!   top-level pool of the scope holds; a pool with a source takes a `Cidr` or a
//!   `NetmaskLength`, allocated from its source pool (an allocation of resource type
//!   `ipam-pool`). DeprovisionIpamPoolCidr takes it back: a CIDR holding allocations goes
//!   `failed-deprovision` (`The CIDR has one or more allocations.`, as AWS reports it); a
//!   deprovisioned CIDR stays listed as `deprovisioned`, as AWS lists it.
//! - AllocateIpamPoolCidr reserves a `custom` allocation (`Cidr`, `NetmaskLength`, or the
//!   pool's default length; `PreviewNextCidr` only tells which), the lowest free block of the
//!   pool's CIDRs, within the pool's allocation rules (`The allocation size is too big for the
//!   pool.`, AWS's words); ReleaseIpamPoolAllocation returns a custom one.
//! - CreateVpc with `Ipv4IpamPoolId` takes its range from the pool (`Ipv4NetmaskLength`, a
//!   `CidrBlock` of the pool, or the pool's default length): an allocation of resource type
//!   `vpc`, released when the VPC is deleted. The pool's `AllocationResourceTags` must be
//!   among the VPC's tags.
//!
//! - ModifyIpam (description, tier, operating regions), ModifyIpamScope (description) and
//!   ModifyIpamPool (description, auto-import, allocation rules, required tags) answer
//!   `modify-in-progress`; what they changed is described `modify-complete`.
//!
//! Create calls answer `create-in-progress` (and a provision `pending-provision`), as AWS
//! answers them, and what they made is complete from the next call on; a delete answers
//! `delete-in-progress` and the resource is gone. What the fake does not serve: pools in the
//! public scope take no CIDR (BYOIP and Amazon-provided ranges need AWS's own checks);
//! resource discoveries, auto-import and compliance monitoring; an allocation from a pool of
//! an IPAM in another region (a VPC here takes its range from a pool of this region's IPAMs).

use std::net::{Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    AddressFamily, AllocateIpamPoolCidrRequest, AllocateIpamPoolCidrResult, CreateIpamPoolRequest,
    CreateIpamPoolResult, CreateIpamRequest, CreateIpamResult, CreateIpamScopeRequest,
    CreateIpamScopeResult, DeleteIpamPoolRequest, DeleteIpamPoolResult, DeleteIpamRequest,
    DeleteIpamResult, DeleteIpamScopeRequest, DeleteIpamScopeResult,
    DeprovisionIpamPoolCidrRequest, DeprovisionIpamPoolCidrResult, DescribeIpamPoolsRequest,
    DescribeIpamPoolsResult, DescribeIpamScopesRequest, DescribeIpamScopesResult,
    DescribeIpamsRequest, DescribeIpamsResult, GetIpamPoolAllocationsRequest,
    GetIpamPoolAllocationsResult, GetIpamPoolCidrsRequest, GetIpamPoolCidrsResult, Ipam as IpamOut,
    IpamOperatingRegion, IpamPool as PoolOut, IpamPoolAllocation as AllocationOut,
    IpamPoolAllocationResourceType, IpamPoolAwsService, IpamPoolCidr as PoolCidrOut,
    IpamPoolCidrFailureReason, IpamPoolCidrState, IpamPoolState, IpamResourceTag,
    IpamScope as ScopeOut, IpamScopeState, IpamScopeType, IpamState, IpamTier,
    ModifyIpamPoolRequest, ModifyIpamPoolResult, ModifyIpamRequest, ModifyIpamResult,
    ModifyIpamScopeRequest, ModifyIpamScopeResult, ProvisionIpamPoolCidrRequest,
    ProvisionIpamPoolCidrResult, ReleaseIpamPoolAllocationRequest, ReleaseIpamPoolAllocationResult,
    ResourceType, Tag,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// IPAMs by id.
    Ipams of Ipam
}

crate::region::table! {
    /// IPAM scopes by id.
    IpamScopes of Scope
}

crate::region::table! {
    /// IPAM pools by id.
    IpamPools of Pool
}

/// The deepest a pool may sit under its top-level pool (AWS: 10 levels).
const MAX_POOL_DEPTH: i32 = 10;

/// What a CIDR holding allocations answers when deprovisioned (AWS's words).
const HAS_ALLOCATIONS: &str = "The CIDR has one or more allocations.";

/// One IPAM.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Ipam {
    /// `ipam-...`.
    pub id: String,
    /// Its description.
    pub description: Option<String>,
    /// The regions it manages, its own among them.
    pub operating_regions: Vec<String>,
    /// `free` or `advanced`.
    pub tier: IpamTier,
    /// Its default private scope.
    pub private_scope: String,
    /// Its default public scope.
    pub public_scope: String,
    /// Whether ModifyIpam changed it (described `modify-complete` from then on).
    #[serde(default)]
    pub modified: bool,
}

/// One scope of an IPAM.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Scope {
    /// `ipam-scope-...`.
    pub id: String,
    /// Its IPAM.
    pub ipam_id: String,
    /// Whether it is the public scope (else private).
    pub public: bool,
    /// Whether the IPAM made it.
    pub default: bool,
    /// Its description.
    pub description: Option<String>,
    /// Whether ModifyIpamScope changed it (described `modify-complete` from then on).
    #[serde(default)]
    pub modified: bool,
}

/// One pool.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pool {
    /// `ipam-pool-...`.
    pub id: String,
    /// Its IPAM.
    pub ipam_id: String,
    /// Its scope.
    pub scope_id: String,
    /// Whether its scope is public.
    pub public: bool,
    /// The pool it takes its CIDRs from, if any.
    pub source: Option<String>,
    /// 1 for a top-level pool.
    pub depth: i32,
    /// The region its CIDRs are for (none: any).
    pub locale: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// IPv6 (else IPv4).
    pub ipv6: bool,
    /// `AutoImport`, kept and answered.
    pub auto_import: bool,
    /// The allocation rules: shortest, longest and default netmask length.
    pub min_len: Option<u8>,
    /// See [`Pool::min_len`].
    pub max_len: Option<u8>,
    /// See [`Pool::min_len`].
    pub default_len: Option<u8>,
    /// Tags a resource taking a range from the pool must have.
    pub resource_tags: Vec<(String, String)>,
    /// `AwsService`, kept and answered.
    pub aws_service: Option<IpamPoolAwsService>,
    /// Its CIDRs, in the order provisioned.
    pub cidrs: Vec<PoolCidr>,
    /// The allocations made from it.
    pub allocations: Vec<Allocation>,
    /// Whether ModifyIpamPool changed it (described `modify-complete` from then on).
    #[serde(default)]
    pub modified: bool,
}

/// A CIDR provisioned to a pool.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PoolCidr {
    /// `ipam-pool-cidr-...`.
    pub id: String,
    /// The range.
    #[serde(with = "crate::state::with::text")]
    pub cidr: IpNet,
    /// `provisioned`, `failed-deprovision` or `deprovisioned`.
    pub state: IpamPoolCidrState,
}

impl PoolCidr {
    /// Whether its range is the pool's (provisioned, or not yet given back).
    fn holds(&self) -> bool {
        matches!(
            self.state,
            IpamPoolCidrState::Provisioned | IpamPoolCidrState::FailedDeprovision
        )
    }
}

/// An allocation from a pool.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Allocation {
    /// `ipam-pool-alloc-...`.
    pub id: String,
    /// The range.
    #[serde(with = "crate::state::with::text")]
    pub cidr: IpNet,
    /// What holds it: `custom`, `vpc` or `ipam-pool`.
    pub resource_type: IpamPoolAllocationResourceType,
    /// The VPC or pool that holds it.
    pub resource_id: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// The tags AllocateIpamPoolCidr gave it.
    pub tags: Vec<(String, String)>,
}

impl Filterable for (&Ipam, &Region) {
    const NAMES: &'static [&'static str] = &[
        "ipam-id",
        "ipam-arn",
        "owner-id",
        "ipam-region",
        "description",
        "state",
        "tier",
        "operating-region",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (i, region) = *self;
        match name {
            "ipam-id" => one(i.id.clone()),
            "ipam-arn" => one(arn(region, "ipam", &i.id)),
            "owner-id" => one(region.account_id.clone()),
            "ipam-region" => one(region.name.clone()),
            "description" => i.description.clone().into_iter().collect(),
            "state" => one(ipam_state(i.modified).as_str()),
            "tier" => one(i.tier.as_str()),
            "operating-region" => i.operating_regions.clone(),
            _ => Vec::new(),
        }
    }
}

impl Filterable for (&Scope, &Region) {
    const NAMES: &'static [&'static str] = &[
        "ipam-scope-id",
        "ipam-scope-arn",
        "ipam-id",
        "ipam-arn",
        "owner-id",
        "ipam-region",
        "ipam-scope-type",
        "is-default",
        "description",
        "state",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (s, region) = *self;
        match name {
            "ipam-scope-id" => one(s.id.clone()),
            "ipam-scope-arn" => one(arn(region, "ipam-scope", &s.id)),
            "ipam-id" => one(s.ipam_id.clone()),
            "ipam-arn" => one(arn(region, "ipam", &s.ipam_id)),
            "owner-id" => one(region.account_id.clone()),
            "ipam-region" => one(region.name.clone()),
            "ipam-scope-type" => one(scope_type(s.public).as_str()),
            "is-default" => flag(s.default),
            "description" => s.description.clone().into_iter().collect(),
            "state" => one(scope_state(s.modified).as_str()),
            _ => Vec::new(),
        }
    }
}

impl Filterable for (&Pool, &Region) {
    const NAMES: &'static [&'static str] = &[
        "ipam-pool-id",
        "ipam-pool-arn",
        "ipam-scope-id",
        "ipam-scope-arn",
        "ipam-scope-type",
        "ipam-id",
        "ipam-arn",
        "owner-id",
        "ipam-region",
        "locale",
        "address-family",
        "source-ipam-pool-id",
        "pool-depth",
        "description",
        "state",
        "auto-import",
        "aws-service",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (p, region) = *self;
        match name {
            "ipam-pool-id" => one(p.id.clone()),
            "ipam-pool-arn" => one(arn(region, "ipam-pool", &p.id)),
            "ipam-scope-id" => one(p.scope_id.clone()),
            "ipam-scope-arn" => one(arn(region, "ipam-scope", &p.scope_id)),
            "ipam-scope-type" => one(scope_type(p.public).as_str()),
            "ipam-id" => one(p.ipam_id.clone()),
            "ipam-arn" => one(arn(region, "ipam", &p.ipam_id)),
            "owner-id" => one(region.account_id.clone()),
            "ipam-region" => one(region.name.clone()),
            "locale" => one(p.locale.clone().unwrap_or_else(|| "None".to_string())),
            "address-family" => one(family(p.ipv6).as_str()),
            "source-ipam-pool-id" => p.source.clone().into_iter().collect(),
            "pool-depth" => one(p.depth.to_string()),
            "description" => p.description.clone().into_iter().collect(),
            "state" => one(pool_state(p.modified).as_str()),
            "auto-import" => flag(p.auto_import),
            "aws-service" => p.aws_service.iter().map(|s| s.as_str().into()).collect(),
            _ => Vec::new(),
        }
    }
}

impl Filterable for &PoolCidr {
    const NAMES: &'static [&'static str] =
        &["cidr", "state", "ipam-pool-cidr-id", "netmask-length"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "cidr" => one(self.cidr.to_string()),
            "state" => one(self.state.as_str()),
            "ipam-pool-cidr-id" => one(self.id.clone()),
            "netmask-length" => one(self.cidr.prefix_len().to_string()),
            _ => Vec::new(),
        }
    }
}

impl Filterable for (&Allocation, &Region) {
    const NAMES: &'static [&'static str] = &[
        "ipam-pool-allocation-id",
        "cidr",
        "resource-id",
        "resource-type",
        "resource-owner",
        "resource-region",
        "description",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let (a, region) = *self;
        match name {
            "ipam-pool-allocation-id" => one(a.id.clone()),
            "cidr" => one(a.cidr.to_string()),
            "resource-id" => a.resource_id.clone().into_iter().collect(),
            "resource-type" => one(a.resource_type.as_str()),
            "resource-owner" => one(region.account_id.clone()),
            "resource-region" => one(region.name.clone()),
            "description" => a.description.clone().into_iter().collect(),
            _ => Vec::new(),
        }
    }
}

fn arn(region: &Region, kind: &str, id: &str) -> String {
    format!(
        "arn:{}:ec2::{}:{kind}/{id}",
        crate::ec2::account::arn_partition(&region.name),
        region.account_id
    )
}

/// What a Describe answers of a resource's state: created, or changed since.
fn ipam_state(modified: bool) -> IpamState {
    if modified {
        IpamState::ModifyComplete
    } else {
        IpamState::CreateComplete
    }
}

/// See [`ipam_state`].
fn scope_state(modified: bool) -> IpamScopeState {
    if modified {
        IpamScopeState::ModifyComplete
    } else {
        IpamScopeState::CreateComplete
    }
}

/// See [`ipam_state`].
fn pool_state(modified: bool) -> IpamPoolState {
    if modified {
        IpamPoolState::ModifyComplete
    } else {
        IpamPoolState::CreateComplete
    }
}

fn scope_type(public: bool) -> IpamScopeType {
    if public {
        IpamScopeType::Public
    } else {
        IpamScopeType::Private
    }
}

fn family(ipv6: bool) -> AddressFamily {
    if ipv6 {
        AddressFamily::Ipv6
    } else {
        AddressFamily::Ipv4
    }
}

fn render_ipam(region: &Region, i: &Ipam, state: IpamState) -> IpamOut {
    let scopes = region
        .ipam_scopes
        .values()
        .filter(|s| s.ipam_id == i.id)
        .count();
    IpamOut {
        owner_id: Some(region.account_id.clone()),
        ipam_id: Some(i.id.clone()),
        ipam_arn: Some(arn(region, "ipam", &i.id)),
        ipam_region: Some(region.name.clone()),
        public_default_scope_id: Some(i.public_scope.clone()),
        private_default_scope_id: Some(i.private_scope.clone()),
        scope_count: i32::try_from(scopes).ok(),
        description: i.description.clone(),
        operating_regions: Some(
            i.operating_regions
                .iter()
                .map(|r| IpamOperatingRegion {
                    region_name: Some(r.clone()),
                })
                .collect(),
        ),
        state: Some(state),
        tags: Some(region.tags.tag_set(&i.id).unwrap_or_default()),
        tier: Some(i.tier),
        ..Default::default()
    }
}

fn render_scope(region: &Region, s: &Scope, state: IpamScopeState) -> ScopeOut {
    let pools = region
        .ipam_pools
        .values()
        .filter(|p| p.scope_id == s.id)
        .count();
    ScopeOut {
        owner_id: Some(region.account_id.clone()),
        ipam_scope_id: Some(s.id.clone()),
        ipam_scope_arn: Some(arn(region, "ipam-scope", &s.id)),
        ipam_arn: Some(arn(region, "ipam", &s.ipam_id)),
        ipam_region: Some(region.name.clone()),
        ipam_scope_type: Some(scope_type(s.public)),
        is_default: Some(s.default),
        description: s.description.clone(),
        pool_count: i32::try_from(pools).ok(),
        state: Some(state),
        tags: Some(region.tags.tag_set(&s.id).unwrap_or_default()),
        external_authority_configuration: None,
    }
}

fn render_pool(region: &Region, p: &Pool, state: IpamPoolState) -> PoolOut {
    PoolOut {
        owner_id: Some(region.account_id.clone()),
        ipam_pool_id: Some(p.id.clone()),
        source_ipam_pool_id: p.source.clone(),
        ipam_pool_arn: Some(arn(region, "ipam-pool", &p.id)),
        ipam_scope_arn: Some(arn(region, "ipam-scope", &p.scope_id)),
        ipam_scope_type: Some(scope_type(p.public)),
        ipam_arn: Some(arn(region, "ipam", &p.ipam_id)),
        ipam_region: Some(region.name.clone()),
        locale: Some(p.locale.clone().unwrap_or_else(|| "None".to_string())),
        pool_depth: Some(p.depth),
        state: Some(state),
        description: p.description.clone(),
        auto_import: Some(p.auto_import),
        address_family: Some(family(p.ipv6)),
        allocation_min_netmask_length: p.min_len.map(i32::from),
        allocation_max_netmask_length: p.max_len.map(i32::from),
        allocation_default_netmask_length: p.default_len.map(i32::from),
        allocation_resource_tags: (!p.resource_tags.is_empty()).then(|| {
            p.resource_tags
                .iter()
                .map(|(k, v)| IpamResourceTag {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect()
        }),
        tags: Some(region.tags.tag_set(&p.id).unwrap_or_default()),
        aws_service: p.aws_service,
        ..Default::default()
    }
}

fn render_cidr(c: &PoolCidr, state: IpamPoolCidrState) -> PoolCidrOut {
    PoolCidrOut {
        cidr: Some(c.cidr.to_string()),
        state: Some(state),
        failure_reason: (state == IpamPoolCidrState::FailedDeprovision).then(|| {
            IpamPoolCidrFailureReason {
                code: None,
                message: Some(HAS_ALLOCATIONS.to_string()),
            }
        }),
        ipam_pool_cidr_id: Some(c.id.clone()),
        netmask_length: Some(i32::from(c.cidr.prefix_len())),
    }
}

fn render_allocation(region: &Region, a: &Allocation) -> AllocationOut {
    AllocationOut {
        cidr: Some(a.cidr.to_string()),
        ipam_pool_allocation_id: Some(a.id.clone()),
        description: a.description.clone(),
        resource_id: a.resource_id.clone(),
        resource_type: Some(a.resource_type),
        resource_region: (a.resource_type != IpamPoolAllocationResourceType::Custom)
            .then(|| region.name.clone()),
        resource_owner: Some(region.account_id.clone()),
        tags: (!a.tags.is_empty()).then(|| {
            a.tags
                .iter()
                .map(|(k, v)| Tag {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect()
        }),
    }
}

/// A new allocation id: `ipam-pool-alloc-` and 33 hex digits, as AWS's are.
fn allocation_id(region: &mut Region) -> String {
    let tail = region.ids.next_u64();
    format!("{}{tail:016x}", region.ids.resource("ipam-pool-alloc"))
}

// ---------------------------------------------------------------- address arithmetic

/// `net` as the first and last address, as numbers, and its family's width in bits.
fn bounds(net: &IpNet) -> (u128, u128, u8) {
    match net {
        IpNet::V4(n) => (
            u128::from(u32::from(n.network())),
            u128::from(u32::from(n.broadcast())),
            32,
        ),
        IpNet::V6(n) => (u128::from(n.network()), u128::from(n.broadcast()), 128),
    }
}

/// The block of `len` bits starting at `start`, of the family `v6`.
fn block(start: u128, len: u8, v6: bool) -> Option<IpNet> {
    if v6 {
        Ipv6Net::new(Ipv6Addr::from(start), len).ok().map(IpNet::V6)
    } else {
        let addr = u32::try_from(start).ok()?;
        Ipv4Net::new(Ipv4Addr::from(addr), len).ok().map(IpNet::V4)
    }
}

fn overlaps(a: &IpNet, b: &IpNet) -> bool {
    let (a0, a1, _) = bounds(a);
    let (b0, b1, _) = bounds(b);
    a0 <= b1 && b0 <= a1
}

fn contains(outer: &IpNet, inner: &IpNet) -> bool {
    let (o0, o1, _) = bounds(outer);
    let (i0, i1, _) = bounds(inner);
    o0 <= i0 && i1 <= o1
}

/// The lowest free block of `len` bits inside one of `within` (in their order), overlapping
/// none of `taken`, inside one of `allowed` (when given) and none of `disallowed`. Linear in
/// the lists: each step skips past a block in the way.
fn first_free(
    within: &[IpNet],
    taken: &[IpNet],
    allowed: &[IpNet],
    disallowed: &[IpNet],
    len: u8,
) -> Option<IpNet> {
    let mut avoid: Vec<(u128, u128)> = taken
        .iter()
        .chain(disallowed)
        .map(|n| {
            let (a, b, _) = bounds(n);
            (a, b)
        })
        .collect();
    avoid.sort_unstable();
    for outer in within {
        let (start, end, bits) = bounds(outer);
        let v6 = bits == 128;
        if len < outer.prefix_len() || len > bits {
            continue;
        }
        let host_bits = u32::from(bits - len);
        // The block's size less one: every bit below the netmask.
        let mask = if host_bits >= 128 {
            u128::MAX
        } else {
            (1u128 << host_bits) - 1
        };
        let mut at = start;
        while at <= end {
            // Aligned up to the block size.
            let Some(aligned) = at.checked_add(mask).map(|v| v & !mask) else {
                break;
            };
            let Some(last) = aligned.checked_add(mask) else {
                break;
            };
            if aligned < at || last > end {
                break;
            }
            match avoid.iter().find(|(a, b)| *a <= last && aligned <= *b) {
                Some((_, b)) => match b.checked_add(1) {
                    Some(next) => at = next,
                    None => break,
                },
                None => {
                    let candidate = block(aligned, len, v6)?;
                    if allowed.is_empty() || allowed.iter().any(|a| contains(a, &candidate)) {
                        return Some(candidate);
                    }
                    match last.checked_add(1) {
                        Some(next) => at = next,
                        None => break,
                    }
                }
            }
        }
    }
    None
}

/// Parses a CIDR of either family as AWS writes it (no host bits).
fn parse_net(raw: &str, param: &str) -> Result<IpNet, ApiError> {
    if raw.contains(':') {
        crate::ec2::vpc_ipv6::parse_ipv6_cidr(raw, param).map(IpNet::V6)
    } else {
        crate::ec2::vpc::parse_cidr(raw, param).map(IpNet::V4)
    }
}

fn check_family(pool: &Pool, net: &IpNet, raw: &str) -> Result<(), ApiError> {
    if matches!(net, IpNet::V6(_)) == pool.ipv6 {
        return Ok(());
    }
    Err(ApiError::invalid_value(format!(
        "The CIDR {raw} is not of the pool's address family ({}).",
        family(pool.ipv6).as_str()
    )))
}

fn netmask(len: i32, ipv6: bool, param: &str) -> Result<u8, ApiError> {
    let bits = if ipv6 { 128 } else { 32 };
    u8::try_from(len)
        .ok()
        .filter(|l| *l <= bits)
        .ok_or_else(|| {
            ApiError::invalid_parameter(
                param,
                &len.to_string(),
                &format!("A netmask length is 0 to {bits}."),
            )
        })
}

/// Fails unless the allocation rules agree: min <= default <= max.
fn check_rules(min: Option<u8>, max: Option<u8>, default: Option<u8>) -> Result<(), ApiError> {
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err(ApiError::invalid_value(
            "The minimum netmask length must be less than the maximum netmask length.",
        ));
    }
    if let Some(d) = default
        && (min.is_some_and(|m| d < m) || max.is_some_and(|m| d > m))
    {
        return Err(ApiError::invalid_value(
            "The default netmask length must be between the minimum and maximum netmask \
             lengths.",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- IPAMs and scopes

/// `CreateIpam`: the IPAM and its two default scopes.
pub fn create_ipam(
    region: &mut Region,
    mut input: CreateIpamRequest,
) -> Result<CreateIpamResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateIpam", token.as_deref(), &print)?
        && let Some(i) = region.ipams.get(&id)
    {
        return Ok(CreateIpamResult {
            ipam: Some(render_ipam(region, i, IpamState::CreateInProgress)),
        });
    }
    let mut operating = Vec::new();
    for r in input.operating_regions.iter().flatten() {
        let name = r
            .region_name
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("OperatingRegion.RegionName"))?;
        check_region(region, &name, "OperatingRegion.RegionName")?;
        if !operating.contains(&name) {
            operating.push(name);
        }
    }
    if !operating.contains(&region.name) {
        operating.push(region.name.clone());
    }
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Ipam)?;
    let id = region.ids.resource(Kind::Ipam.prefix());
    let private_scope = region.ids.resource(Kind::IpamScope.prefix());
    let public_scope = region.ids.resource(Kind::IpamScope.prefix());
    for (scope, public) in [(&private_scope, false), (&public_scope, true)] {
        region.ipam_scopes.0.insert(
            scope.clone(),
            Scope {
                id: scope.clone(),
                ipam_id: id.clone(),
                public,
                default: true,
                description: None,
                modified: false,
            },
        );
    }
    let ipam = Ipam {
        id: id.clone(),
        description: input.description,
        operating_regions: operating,
        tier: input.tier.unwrap_or(IpamTier::Advanced),
        private_scope,
        public_scope,
        modified: false,
    };
    region.tags.insert(&id, tags);
    region
        .ledger
        .record("CreateIpam", token.as_deref(), &print, &id);
    let out = render_ipam(region, &ipam, IpamState::CreateInProgress);
    region.ipams.0.insert(id, ipam);
    Ok(CreateIpamResult { ipam: Some(out) })
}

/// Fails unless `name` is a region of the partition of `region` (AWS's, or this one).
fn check_region(region: &Region, name: &str, param: &str) -> Result<(), ApiError> {
    let real = name == region.name
        || (crate::server::AWS_REGIONS.contains(&name)
            && crate::ec2::copy::same_partition(name, &region.name));
    if real {
        Ok(())
    } else {
        Err(ApiError::invalid_parameter(
            param,
            name,
            "This is not a Region of the IPAM's partition.",
        ))
    }
}

/// `DescribeIpams`.
pub fn describe_ipams(
    region: &Region,
    input: DescribeIpamsRequest,
) -> Result<DescribeIpamsResult, ApiError> {
    let filters = Filters::parse::<(&Ipam, &Region)>(input.filters)?;
    page::check_max_results(input.max_results, 5, 1000)?;
    let kind = Kind::Ipam;
    let found = kind.describe(
        &region.consistency,
        &region.ipams,
        input.ipam_ids.as_deref(),
        region.candidates(kind, &filters),
        |i| filters.matches(&(i, region), region.tags.get(&i.id)),
    )?;
    let (items, next) = page::page(
        found,
        |i| i.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeIpamsResult {
        ipams: Some(
            items
                .into_iter()
                .map(|i| render_ipam(region, i, ipam_state(i.modified)))
                .collect(),
        ),
        next_token: next,
    })
}

/// `DeleteIpam`: refused while it has pools or scopes of the account's own, unless
/// `Cascade`.
pub fn delete_ipam(
    region: &mut Region,
    input: DeleteIpamRequest,
) -> Result<DeleteIpamResult, ApiError> {
    let id = input.ipam_id;
    let ipam = Kind::Ipam.get(&region.ipams, &id)?.clone();
    let pools: Vec<&Pool> = region
        .ipam_pools
        .values()
        .filter(|p| p.ipam_id == id)
        .collect();
    if input.cascade == Some(true) {
        if let Some(p) = pools.iter().find(|p| p.public) {
            return Err(ApiError::dependency_violation(format!(
                "The specified action is not valid for {id}. The pool {} is in the public \
                 scope, which a cascading delete does not delete.",
                p.id
            )));
        }
    } else if let Some(p) = pools.first() {
        return Err(ApiError::dependency_violation(format!(
            "The specified action is not valid for {id}. There are one or more pools in the \
             IPAM ({}).",
            p.id
        )));
    } else if let Some(s) = region
        .ipam_scopes
        .values()
        .find(|s| s.ipam_id == id && !s.default)
    {
        return Err(ApiError::dependency_violation(format!(
            "The specified action is not valid for {id}. There are one or more non-default \
             scopes in the IPAM ({}).",
            s.id
        )));
    }
    let out = render_ipam(region, &ipam, IpamState::DeleteInProgress);
    let pools: Vec<String> = pools.iter().map(|p| p.id.clone()).collect();
    for p in pools {
        remove_pool(region, &p);
    }
    let scopes: Vec<String> = region
        .ipam_scopes
        .values()
        .filter(|s| s.ipam_id == id)
        .map(|s| s.id.clone())
        .collect();
    for s in scopes {
        region.ipam_scopes.0.remove(&s);
        region.tags.remove_resource(&s);
    }
    region.ipams.0.remove(&id);
    region.tags.remove_resource(&id);
    Ok(DeleteIpamResult { ipam: Some(out) })
}

/// `CreateIpamScope`: a private scope of the account's own.
pub fn create_ipam_scope(
    region: &mut Region,
    mut input: CreateIpamScopeRequest,
) -> Result<CreateIpamScopeResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateIpamScope", token.as_deref(), &print)?
        && let Some(s) = region.ipam_scopes.get(&id)
    {
        return Ok(CreateIpamScopeResult {
            ipam_scope: Some(render_scope(region, s, IpamScopeState::CreateInProgress)),
        });
    }
    Kind::Ipam.get(&region.ipams, &input.ipam_id)?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::IpamScope)?;
    let scope = Scope {
        id: region.ids.resource(Kind::IpamScope.prefix()),
        ipam_id: input.ipam_id,
        public: false,
        default: false,
        description: input.description,
        modified: false,
    };
    region.tags.insert(&scope.id, tags);
    region
        .ledger
        .record("CreateIpamScope", token.as_deref(), &print, &scope.id);
    let out = render_scope(region, &scope, IpamScopeState::CreateInProgress);
    region.ipam_scopes.0.insert(scope.id.clone(), scope);
    Ok(CreateIpamScopeResult {
        ipam_scope: Some(out),
    })
}

/// `DescribeIpamScopes`.
pub fn describe_ipam_scopes(
    region: &Region,
    input: DescribeIpamScopesRequest,
) -> Result<DescribeIpamScopesResult, ApiError> {
    let filters = Filters::parse::<(&Scope, &Region)>(input.filters)?;
    page::check_max_results(input.max_results, 5, 1000)?;
    let kind = Kind::IpamScope;
    let found = kind.describe(
        &region.consistency,
        &region.ipam_scopes,
        input.ipam_scope_ids.as_deref(),
        region.candidates(kind, &filters),
        |s| filters.matches(&(s, region), region.tags.get(&s.id)),
    )?;
    let (items, next) = page::page(
        found,
        |s| s.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeIpamScopesResult {
        ipam_scopes: Some(
            items
                .into_iter()
                .map(|s| render_scope(region, s, scope_state(s.modified)))
                .collect(),
        ),
        next_token: next,
    })
}

/// `DeleteIpamScope`: a scope of the account's own without pools.
pub fn delete_ipam_scope(
    region: &mut Region,
    input: DeleteIpamScopeRequest,
) -> Result<DeleteIpamScopeResult, ApiError> {
    let id = input.ipam_scope_id;
    let scope = Kind::IpamScope.get(&region.ipam_scopes, &id)?.clone();
    if scope.default {
        return Err(ApiError::invalid_value(format!(
            "The scope {id} is a default scope of its IPAM, deleted only with the IPAM."
        )));
    }
    if let Some(p) = region.ipam_pools.values().find(|p| p.scope_id == id) {
        return Err(ApiError::dependency_violation(format!(
            "The specified action is not valid for {id}. There are one or more pools in the \
             scope ({}).",
            p.id
        )));
    }
    let out = render_scope(region, &scope, IpamScopeState::DeleteInProgress);
    region.ipam_scopes.0.remove(&id);
    region.tags.remove_resource(&id);
    Ok(DeleteIpamScopeResult {
        ipam_scope: Some(out),
    })
}

// ---------------------------------------------------------------- pools

/// `CreateIpamPool`.
pub fn create_ipam_pool(
    region: &mut Region,
    mut input: CreateIpamPoolRequest,
) -> Result<CreateIpamPoolResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateIpamPool", token.as_deref(), &print)?
        && let Some(p) = region.ipam_pools.get(&id)
    {
        return Ok(CreateIpamPoolResult {
            ipam_pool: Some(render_pool(region, p, IpamPoolState::CreateInProgress)),
        });
    }
    let scope = Kind::IpamScope
        .get(&region.ipam_scopes, &input.ipam_scope_id)?
        .clone();
    let ipv6 = input.address_family == AddressFamily::Ipv6;
    let ipam = Kind::Ipam.get(&region.ipams, &scope.ipam_id)?;
    let locale = match input.locale.as_deref() {
        None | Some("" | "None") => None,
        Some(l) if ipam.operating_regions.iter().any(|r| r == l) => Some(l.to_string()),
        Some(l) => {
            return Err(ApiError::invalid_parameter(
                "Locale",
                l,
                "The locale must be one of the IPAM's operating Regions.",
            ));
        }
    };
    let mut depth = 1;
    if let Some(source_id) = input.source_ipam_pool_id.as_deref() {
        let source = Kind::IpamPool.get(&region.ipam_pools, source_id)?;
        if source.scope_id != scope.id {
            return Err(ApiError::invalid_value(format!(
                "The source pool {source_id} is not in the scope {}.",
                scope.id
            )));
        }
        if source.ipv6 != ipv6 {
            return Err(ApiError::invalid_value(format!(
                "The source pool {source_id} is of another address family ({}).",
                family(source.ipv6).as_str()
            )));
        }
        if source.locale.is_some() && source.locale != locale {
            return Err(ApiError::invalid_value(format!(
                "The pool's locale must be its source pool's ({}).",
                source.locale.as_deref().unwrap_or("None")
            )));
        }
        depth = source.depth + 1;
        if depth > MAX_POOL_DEPTH {
            return Err(ApiError::invalid_value(format!(
                "A pool can be at most {MAX_POOL_DEPTH} levels deep."
            )));
        }
    }
    let len = |v: Option<i32>, param: &str| v.map(|l| netmask(l, ipv6, param)).transpose();
    let min_len = len(
        input.allocation_min_netmask_length,
        "AllocationMinNetmaskLength",
    )?;
    let max_len = len(
        input.allocation_max_netmask_length,
        "AllocationMaxNetmaskLength",
    )?;
    let default_len = len(
        input.allocation_default_netmask_length,
        "AllocationDefaultNetmaskLength",
    )?;
    check_rules(min_len, max_len, default_len)?;
    let mut resource_tags = Vec::new();
    for t in input.allocation_resource_tags.iter().flatten() {
        let key = t
            .key
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("AllocationResourceTag.Key"))?;
        resource_tags.push((key, t.value.clone().unwrap_or_default()));
    }
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::IpamPool)?;
    let pool = Pool {
        id: region.ids.resource(Kind::IpamPool.prefix()),
        ipam_id: scope.ipam_id.clone(),
        scope_id: scope.id.clone(),
        public: scope.public,
        source: input.source_ipam_pool_id,
        depth,
        locale,
        description: input.description,
        ipv6,
        auto_import: input.auto_import == Some(true),
        min_len,
        max_len,
        default_len,
        resource_tags,
        aws_service: input.aws_service,
        cidrs: Vec::new(),
        allocations: Vec::new(),
        modified: false,
    };
    region.tags.insert(&pool.id, tags);
    region
        .ledger
        .record("CreateIpamPool", token.as_deref(), &print, &pool.id);
    let out = render_pool(region, &pool, IpamPoolState::CreateInProgress);
    region.ipam_pools.0.insert(pool.id.clone(), pool);
    Ok(CreateIpamPoolResult {
        ipam_pool: Some(out),
    })
}

/// `DescribeIpamPools`.
pub fn describe_ipam_pools(
    region: &Region,
    input: DescribeIpamPoolsRequest,
) -> Result<DescribeIpamPoolsResult, ApiError> {
    let filters = Filters::parse::<(&Pool, &Region)>(input.filters)?;
    page::check_max_results(input.max_results, 5, 1000)?;
    let kind = Kind::IpamPool;
    let found = kind.describe(
        &region.consistency,
        &region.ipam_pools,
        input.ipam_pool_ids.as_deref(),
        region.candidates(kind, &filters),
        |p| filters.matches(&(p, region), region.tags.get(&p.id)),
    )?;
    let (items, next) = page::page(
        found,
        |p| p.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeIpamPoolsResult {
        ipam_pools: Some(
            items
                .into_iter()
                .map(|p| render_pool(region, p, pool_state(p.modified)))
                .collect(),
        ),
        next_token: next,
    })
}

/// `DeleteIpamPool`: refused while it has CIDRs, allocations or pools inside it, unless
/// `Cascade` (private scope only).
pub fn delete_ipam_pool(
    region: &mut Region,
    input: DeleteIpamPoolRequest,
) -> Result<DeleteIpamPoolResult, ApiError> {
    let id = input.ipam_pool_id;
    let pool = Kind::IpamPool.get(&region.ipam_pools, &id)?.clone();
    let child = region
        .ipam_pools
        .values()
        .find(|p| p.source.as_deref() == Some(id.as_str()))
        .map(|p| p.id.clone());
    if input.cascade == Some(true) {
        if pool.public {
            return Err(ApiError::invalid_value(
                "Only pools in a private scope can be deleted with Cascade.",
            ));
        }
    } else if let Some(c) = child {
        return Err(ApiError::dependency_violation(format!(
            "The specified action is not valid for {id}. There are one or more pools inside \
             the pool ({c})."
        )));
    } else if pool.cidrs.iter().any(PoolCidr::holds) {
        return Err(ApiError::dependency_violation(format!(
            "The specified action is not valid for {id}. There are one or more pool cidrs \
             provisioned in the pool."
        )));
    } else if !pool.allocations.is_empty() {
        return Err(ApiError::dependency_violation(format!(
            "The specified action is not valid for {id}. There are one or more allocations \
             in the pool."
        )));
    }
    let out = render_pool(region, &pool, IpamPoolState::DeleteInProgress);
    remove_pool(region, &id);
    Ok(DeleteIpamPoolResult {
        ipam_pool: Some(out),
    })
}

/// Removes pool `id`, the pools inside it, and what each took from its source.
fn remove_pool(region: &mut Region, id: &str) {
    let children: Vec<String> = region
        .ipam_pools
        .values()
        .filter(|p| p.source.as_deref() == Some(id))
        .map(|p| p.id.clone())
        .collect();
    for c in children {
        remove_pool(region, &c);
    }
    if let Some(pool) = region.ipam_pools.0.remove(id) {
        if let Some(source) = pool.source.and_then(|s| region.ipam_pools.0.get_mut(&s)) {
            source
                .allocations
                .retain(|a| a.resource_id.as_deref() != Some(id));
        }
        region.tags.remove_resource(id);
    }
}

// ---------------------------------------------------------------- pool CIDRs

/// `ProvisionIpamPoolCidr`.
pub fn provision_ipam_pool_cidr(
    region: &mut Region,
    mut input: ProvisionIpamPoolCidrRequest,
) -> Result<ProvisionIpamPoolCidrResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    let pool_id = input.ipam_pool_id.clone();
    let pool = Kind::IpamPool.get(&region.ipam_pools, &pool_id)?.clone();
    if let Some(cidr_id) =
        region
            .ledger
            .replay("ProvisionIpamPoolCidr", token.as_deref(), &print)?
        && let Some(c) = pool.cidrs.iter().find(|c| c.id == cidr_id)
    {
        return Ok(ProvisionIpamPoolCidrResult {
            ipam_pool_cidr: Some(render_cidr(c, IpamPoolCidrState::PendingProvision)),
        });
    }
    if pool.public {
        return Err(ApiError::not_implemented(
            "a CIDR for a pool in the public scope (BYOIP or Amazon-provided ranges)",
        ));
    }
    let wanted = match (input.cidr.as_deref(), input.netmask_length) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ApiError::invalid_combination(
                "Either a CIDR or a netmask length is required, not both.",
            ));
        }
        (Some(raw), None) => {
            let net = parse_net(raw, "Cidr")?;
            check_family(&pool, &net, raw)?;
            Wanted::Cidr(net)
        }
        (None, Some(len)) => {
            if pool.source.is_none() {
                return Err(ApiError::invalid_combination(
                    "A netmask length provisions a pool with a source pool only: a top-level \
                     pool takes a CIDR.",
                ));
            }
            Wanted::Length(netmask(len, pool.ipv6, "NetmaskLength")?)
        }
    };
    let cidr = match &pool.source {
        Some(source_id) => {
            let source = Kind::IpamPool.get(&region.ipam_pools, source_id)?;
            let net = take_from(source, &wanted, &[], &[])?;
            let allocation = Allocation {
                id: allocation_id(region),
                cidr: net,
                resource_type: IpamPoolAllocationResourceType::IpamPool,
                resource_id: Some(pool_id.clone()),
                description: None,
                tags: Vec::new(),
            };
            if let Some(source) = region.ipam_pools.0.get_mut(source_id) {
                source.allocations.push(allocation);
            }
            net
        }
        None => {
            let Wanted::Cidr(net) = wanted else {
                return Err(ApiError::invalid_combination(
                    "A top-level pool takes a CIDR.",
                ));
            };
            // No two top-level pools of a scope hold overlapping ranges.
            if let Some((other, held)) = region
                .ipam_pools
                .values()
                .filter(|p| p.scope_id == pool.scope_id && p.source.is_none())
                .flat_map(|p| p.cidrs.iter().filter(|c| c.holds()).map(move |c| (p, c)))
                .find(|(_, c)| overlaps(&c.cidr, &net))
            {
                return Err(ApiError::invalid_value(format!(
                    "The CIDR {net} overlaps {} provisioned to the pool {} of the same scope.",
                    held.cidr, other.id
                )));
            }
            net
        }
    };
    let pool_cidr = PoolCidr {
        id: region.ids.resource("ipam-pool-cidr"),
        cidr,
        state: IpamPoolCidrState::Provisioned,
    };
    region.ledger.record(
        "ProvisionIpamPoolCidr",
        token.as_deref(),
        &print,
        &pool_cidr.id,
    );
    let out = render_cidr(&pool_cidr, IpamPoolCidrState::PendingProvision);
    if let Some(p) = region.ipam_pools.0.get_mut(&pool_id) {
        // A range provisioned again replaces its deprovisioned record.
        p.cidrs
            .retain(|c| !(c.cidr == cidr && c.state == IpamPoolCidrState::Deprovisioned));
        p.cidrs.push(pool_cidr);
    }
    Ok(ProvisionIpamPoolCidrResult {
        ipam_pool_cidr: Some(out),
    })
}

/// `GetIpamPoolCidrs`.
pub fn get_ipam_pool_cidrs(
    region: &Region,
    input: GetIpamPoolCidrsRequest,
) -> Result<GetIpamPoolCidrsResult, ApiError> {
    let filters = Filters::parse::<&PoolCidr>(input.filters)?;
    page::check_max_results(input.max_results, 5, 1000)?;
    let pool = Kind::IpamPool.get(&region.ipam_pools, &input.ipam_pool_id)?;
    let mut found: Vec<&PoolCidr> = pool
        .cidrs
        .iter()
        .filter(|c| filters.matches(c, None))
        .collect();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    let (items, next) = page::page(
        found,
        |c| c.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetIpamPoolCidrsResult {
        ipam_pool_cidrs: Some(items.into_iter().map(|c| render_cidr(c, c.state)).collect()),
        next_token: next,
    })
}

/// `DeprovisionIpamPoolCidr`: a CIDR holding allocations goes `failed-deprovision`; else it
/// is given back (to the source pool, if any) and listed `deprovisioned`.
pub fn deprovision_ipam_pool_cidr(
    region: &mut Region,
    input: DeprovisionIpamPoolCidrRequest,
) -> Result<DeprovisionIpamPoolCidrResult, ApiError> {
    let pool_id = input.ipam_pool_id;
    let pool = Kind::IpamPool.get(&region.ipam_pools, &pool_id)?;
    let raw = input
        .cidr
        .ok_or_else(|| ApiError::missing_parameter("Cidr"))?;
    let net = parse_net(&raw, "Cidr")?;
    let Some(index) = pool.cidrs.iter().position(|c| c.cidr == net && c.holds()) else {
        return Err(ApiError::invalid_parameter(
            "Cidr",
            &raw,
            "The CIDR is not provisioned to the pool.",
        ));
    };
    let busy = pool.allocations.iter().any(|a| contains(&net, &a.cidr));
    let source = pool.source.clone();
    let Some(pool) = region.ipam_pools.0.get_mut(&pool_id) else {
        return Err(Kind::IpamPool.not_found(&[&pool_id]));
    };
    let Some(c) = pool.cidrs.get_mut(index) else {
        return Err(Kind::IpamPool.not_found(&[&pool_id]));
    };
    let out = render_cidr(c, IpamPoolCidrState::PendingDeprovision);
    if busy {
        c.state = IpamPoolCidrState::FailedDeprovision;
        return Ok(DeprovisionIpamPoolCidrResult {
            ipam_pool_cidr: Some(out),
        });
    }
    c.state = IpamPoolCidrState::Deprovisioned;
    if let Some(source) = source.and_then(|s| region.ipam_pools.0.get_mut(&s)) {
        source
            .allocations
            .retain(|a| !(a.resource_id.as_deref() == Some(pool_id.as_str()) && a.cidr == net));
    }
    Ok(DeprovisionIpamPoolCidrResult {
        ipam_pool_cidr: Some(out),
    })
}

// ---------------------------------------------------------------- allocations

/// What a caller asks of a pool: a given range, or the lowest free block of a length.
enum Wanted {
    Cidr(IpNet),
    Length(u8),
}

impl Wanted {
    /// The netmask length of the range asked for.
    fn len(&self) -> u8 {
        match self {
            Wanted::Cidr(n) => n.prefix_len(),
            Wanted::Length(l) => *l,
        }
    }
}

/// The range `wanted` takes from `pool` (not yet recorded): inside the pool's CIDRs, free,
/// within its allocation rules.
fn take_from(
    pool: &Pool,
    wanted: &Wanted,
    allowed: &[IpNet],
    disallowed: &[IpNet],
) -> Result<IpNet, ApiError> {
    let len = wanted.len();
    // A CIDR whose deprovisioning failed is still the pool's.
    let held: Vec<IpNet> = pool
        .cidrs
        .iter()
        .filter(|c| c.holds())
        .map(|c| c.cidr)
        .collect();
    let biggest = held.iter().map(IpNet::prefix_len).min();
    if pool.min_len.is_some_and(|m| len < m) || biggest.is_none_or(|b| len < b) {
        return Err(ApiError::invalid_value(
            "The allocation size is too big for the pool.",
        ));
    }
    if pool.max_len.is_some_and(|m| len > m) {
        return Err(ApiError::invalid_value(
            "The allocation size is too small for the pool.",
        ));
    }
    let taken: Vec<IpNet> = pool.allocations.iter().map(|a| a.cidr).collect();
    match wanted {
        Wanted::Cidr(net) => {
            if !held.iter().any(|h| contains(h, net)) {
                return Err(ApiError::invalid_value(format!(
                    "The CIDR {net} is not inside a CIDR provisioned to the pool {}.",
                    pool.id
                )));
            }
            if let Some(t) = taken.iter().find(|t| overlaps(t, net)) {
                return Err(ApiError::invalid_value(format!(
                    "The CIDR {net} overlaps the allocation {t} of the pool {}.",
                    pool.id
                )));
            }
            Ok(*net)
        }
        Wanted::Length(len) => {
            first_free(&held, &taken, allowed, disallowed, *len).ok_or_else(|| {
                ApiError::invalid_value(format!(
                    "The pool {} has no free CIDR of netmask length {len}.",
                    pool.id
                ))
            })
        }
    }
}

/// What a request asks of a pool from its `Cidr` and netmask length: exactly one, or the
/// pool's default length.
fn wanted(
    pool: &Pool,
    cidr: Option<&str>,
    cidr_param: &str,
    length: Option<i32>,
    length_param: &str,
) -> Result<Wanted, ApiError> {
    match (cidr, length) {
        (Some(_), Some(_)) => Err(ApiError::invalid_combination(
            "The request cannot contain both a CIDR and a Netmask Length. Exactly one of them \
             should be provided.",
        )),
        (Some(raw), None) => {
            let net = parse_net(raw, cidr_param)?;
            check_family(pool, &net, raw)?;
            Ok(Wanted::Cidr(net))
        }
        (None, Some(len)) => Ok(Wanted::Length(netmask(len, pool.ipv6, length_param)?)),
        (None, None) => pool.default_len.map(Wanted::Length).ok_or_else(|| {
            ApiError::invalid_combination(
                "The request cannot contain empty CIDR and Netmask Length for a pool with no \
                 default allocation netmask length set. Exactly one of them should be provided.",
            )
        }),
    }
}

/// Fails unless pool `pool` serves allocations in `region` (its locale, or none).
fn check_locale(region: &Region, pool: &Pool) -> Result<(), ApiError> {
    match &pool.locale {
        Some(l) if *l != region.name => Err(ApiError::invalid_value(format!(
            "The pool {} is for allocations in {l}, not {}.",
            pool.id, region.name
        ))),
        _ => Ok(()),
    }
}

/// `AllocateIpamPoolCidr`: a `custom` allocation (or, with `PreviewNextCidr`, only the range
/// it would take).
pub fn allocate_ipam_pool_cidr(
    region: &mut Region,
    mut input: AllocateIpamPoolCidrRequest,
) -> Result<AllocateIpamPoolCidrResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    let pool_id = input.ipam_pool_id.clone();
    let pool = Kind::IpamPool.get(&region.ipam_pools, &pool_id)?;
    if let Some(id) = region
        .ledger
        .replay("AllocateIpamPoolCidr", token.as_deref(), &print)?
        && let Some(a) = pool.allocations.iter().find(|a| a.id == id)
    {
        return Ok(AllocateIpamPoolCidrResult {
            ipam_pool_allocation: Some(render_allocation(region, a)),
        });
    }
    check_locale(region, pool)?;
    let wanted = wanted(
        pool,
        input.cidr.as_deref(),
        "Cidr",
        input.netmask_length,
        "NetmaskLength",
    )?;
    let list = |v: Option<&Vec<String>>, param: &str| -> Result<Vec<IpNet>, ApiError> {
        v.into_iter()
            .flatten()
            .map(|raw| parse_net(raw, param))
            .collect()
    };
    let allowed = list(input.allowed_cidrs.as_ref(), "AllowedCidrs")?;
    let disallowed = list(input.disallowed_cidrs.as_ref(), "DisallowedCidrs")?;
    if matches!(wanted, Wanted::Cidr(_)) && !(allowed.is_empty() && disallowed.is_empty()) {
        return Err(ApiError::invalid_combination(
            "Allowed and disallowed CIDRs are only allowed with a netmask length.",
        ));
    }
    let net = take_from(pool, &wanted, &allowed, &disallowed)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::IpamPoolAllocation,
    )?;
    if input.preview_next_cidr == Some(true) {
        return Ok(AllocateIpamPoolCidrResult {
            ipam_pool_allocation: Some(AllocationOut {
                cidr: Some(net.to_string()),
                ..Default::default()
            }),
        });
    }
    let allocation = Allocation {
        id: allocation_id(region),
        cidr: net,
        resource_type: IpamPoolAllocationResourceType::Custom,
        resource_id: None,
        description: input.description,
        tags: tags.into_iter().collect(),
    };
    region.ledger.record(
        "AllocateIpamPoolCidr",
        token.as_deref(),
        &print,
        &allocation.id,
    );
    let out = render_allocation(region, &allocation);
    if let Some(p) = region.ipam_pools.0.get_mut(&pool_id) {
        p.allocations.push(allocation);
    }
    Ok(AllocateIpamPoolCidrResult {
        ipam_pool_allocation: Some(out),
    })
}

fn allocation_not_found(id: &str) -> ApiError {
    ApiError::new(
        Code::InvalidIpamPoolAllocationIdNotFound,
        format!("The IPAM pool allocation ({id}) does not exist."),
    )
}

/// `GetIpamPoolAllocations`: by id (which must exist), filters, pages (`MaxResults` 1000 to
/// 100000).
pub fn get_ipam_pool_allocations(
    region: &Region,
    input: GetIpamPoolAllocationsRequest,
) -> Result<GetIpamPoolAllocationsResult, ApiError> {
    let filters = Filters::parse::<(&Allocation, &Region)>(input.filters)?;
    page::check_max_results(input.max_results, 1000, 100_000)?;
    let pool = Kind::IpamPool.get(&region.ipam_pools, &input.ipam_pool_id)?;
    let only = input.ipam_pool_allocation_id.filter(|i| !i.is_empty());
    if let Some(id) = &only
        && !pool.allocations.iter().any(|a| a.id == *id)
    {
        return Err(allocation_not_found(id));
    }
    let mut found: Vec<&Allocation> = pool
        .allocations
        .iter()
        .filter(|a| only.as_ref().is_none_or(|o| a.id == *o))
        .filter(|a| filters.matches(&(*a, region), None))
        .collect();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    let (items, next) = page::page(
        found,
        |a| a.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetIpamPoolAllocationsResult {
        ipam_pool_allocations: Some(
            items
                .into_iter()
                .map(|a| render_allocation(region, a))
                .collect(),
        ),
        next_token: next,
    })
}

/// `ReleaseIpamPoolAllocation`: a `custom` allocation, named by id and range.
pub fn release_ipam_pool_allocation(
    region: &mut Region,
    input: ReleaseIpamPoolAllocationRequest,
) -> Result<ReleaseIpamPoolAllocationResult, ApiError> {
    let pool_id = input.ipam_pool_id;
    let pool = Kind::IpamPool.get(&region.ipam_pools, &pool_id)?;
    check_locale(region, pool)?;
    let id = input.ipam_pool_allocation_id;
    let Some(a) = pool.allocations.iter().find(|a| a.id == id) else {
        return Err(allocation_not_found(&id));
    };
    if a.cidr.to_string() != input.cidr {
        return Err(ApiError::invalid_combination(format!(
            "No allocation found for {} with id {id}.",
            input.cidr
        )));
    }
    if a.resource_type != IpamPoolAllocationResourceType::Custom {
        return Err(ApiError::invalid_value(format!(
            "The allocation {id} is held by a {}: only custom allocations are released.",
            a.resource_type.as_str()
        )));
    }
    if let Some(p) = region.ipam_pools.0.get_mut(&pool_id) {
        p.allocations.retain(|a| a.id != id);
    }
    Ok(ReleaseIpamPoolAllocationResult {
        success: Some(true),
    })
}

// ---------------------------------------------------------------- changes

/// `ModifyIpam`: its description, tier, and operating regions added or removed (never its
/// own, nor one a pool's locale names).
pub fn modify_ipam(
    region: &mut Region,
    input: ModifyIpamRequest,
) -> Result<ModifyIpamResult, ApiError> {
    let id = input.ipam_id;
    let ipam = Kind::Ipam.get(&region.ipams, &id)?;
    let mut regions = ipam.operating_regions.clone();
    for r in input.add_operating_regions.iter().flatten() {
        let name = r
            .region_name
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("AddOperatingRegion.RegionName"))?;
        check_region(region, &name, "AddOperatingRegion.RegionName")?;
        if !regions.contains(&name) {
            regions.push(name);
        }
    }
    for r in input.remove_operating_regions.iter().flatten() {
        let name = r
            .region_name
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("RemoveOperatingRegion.RegionName"))?;
        if name == region.name {
            return Err(ApiError::invalid_parameter(
                "RemoveOperatingRegion.RegionName",
                &name,
                "The IPAM's home Region is always one of its operating Regions.",
            ));
        }
        if let Some(p) = region
            .ipam_pools
            .values()
            .find(|p| p.ipam_id == id && p.locale.as_deref() == Some(name.as_str()))
        {
            return Err(ApiError::invalid_parameter(
                "RemoveOperatingRegion.RegionName",
                &name,
                &format!("The pool {} has this Region as its locale.", p.id),
            ));
        }
        regions.retain(|r| *r != name);
    }
    let Some(ipam) = region.ipams.0.get_mut(&id) else {
        return Err(Kind::Ipam.not_found(&[&id]));
    };
    ipam.operating_regions = regions;
    ipam.modified = true;
    if let Some(d) = input.description {
        ipam.description = Some(d);
    }
    if let Some(t) = input.tier {
        ipam.tier = t;
    }
    let ipam = ipam.clone();
    Ok(ModifyIpamResult {
        ipam: Some(render_ipam(region, &ipam, IpamState::ModifyInProgress)),
    })
}

/// `ModifyIpamScope`: its description.
pub fn modify_ipam_scope(
    region: &mut Region,
    input: ModifyIpamScopeRequest,
) -> Result<ModifyIpamScopeResult, ApiError> {
    let id = input.ipam_scope_id;
    let scope = Kind::IpamScope.get_mut(&mut region.ipam_scopes.0, &id)?;
    if let Some(d) = input.description {
        scope.description = Some(d);
    }
    scope.modified = true;
    let scope = scope.clone();
    Ok(ModifyIpamScopeResult {
        ipam_scope: Some(render_scope(
            region,
            &scope,
            IpamScopeState::ModifyInProgress,
        )),
    })
}

/// `ModifyIpamPool`: its description, auto-import, allocation rules and the resource tags
/// it requires, checked as CreateIpamPool checks them (what is already allocated stays).
pub fn modify_ipam_pool(
    region: &mut Region,
    input: ModifyIpamPoolRequest,
) -> Result<ModifyIpamPoolResult, ApiError> {
    let id = input.ipam_pool_id;
    let mut pool = Kind::IpamPool.get(&region.ipam_pools, &id)?.clone();
    let ipv6 = pool.ipv6;
    let len = |v: Option<i32>, param: &str| v.map(|l| netmask(l, ipv6, param)).transpose();
    if let Some(l) = len(
        input.allocation_min_netmask_length,
        "AllocationMinNetmaskLength",
    )? {
        pool.min_len = Some(l);
    }
    if let Some(l) = len(
        input.allocation_max_netmask_length,
        "AllocationMaxNetmaskLength",
    )? {
        pool.max_len = Some(l);
    }
    match (
        len(
            input.allocation_default_netmask_length,
            "AllocationDefaultNetmaskLength",
        )?,
        input.clear_allocation_default_netmask_length == Some(true),
    ) {
        (Some(_), true) => {
            return Err(ApiError::invalid_combination(
                "AllocationDefaultNetmaskLength and ClearAllocationDefaultNetmaskLength \
                 cannot both be given.",
            ));
        }
        (Some(l), false) => pool.default_len = Some(l),
        (None, true) => pool.default_len = None,
        (None, false) => {}
    }
    check_rules(pool.min_len, pool.max_len, pool.default_len)?;
    for t in input.remove_allocation_resource_tags.iter().flatten() {
        pool.resource_tags.retain(|(k, v)| {
            !(Some(k) == t.key.as_ref() && t.value.as_ref().is_none_or(|w| w == v))
        });
    }
    for t in input.add_allocation_resource_tags.iter().flatten() {
        let key = t
            .key
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("AddAllocationResourceTag.Key"))?;
        pool.resource_tags.retain(|(k, _)| *k != key);
        pool.resource_tags
            .push((key, t.value.clone().unwrap_or_default()));
    }
    if let Some(d) = input.description {
        pool.description = Some(d);
    }
    if let Some(a) = input.auto_import {
        pool.auto_import = a;
    }
    pool.modified = true;
    let out = render_pool(region, &pool, IpamPoolState::ModifyInProgress);
    region.ipam_pools.0.insert(id, pool);
    Ok(ModifyIpamPoolResult {
        ipam_pool: Some(out),
    })
}

// ---------------------------------------------------------------- VPCs

/// The range a new VPC takes from pool `pool_id` (`cidr` of it, `length` bits, or the pool's
/// default), checked and not yet recorded; `tags` are the VPC's.
pub fn vpc_range(
    region: &Region,
    pool_id: &str,
    cidr: Option<&str>,
    length: Option<i32>,
    tags: &std::collections::BTreeMap<String, String>,
) -> Result<Ipv4Net, ApiError> {
    let pool = Kind::IpamPool.get(&region.ipam_pools, pool_id)?;
    if pool.ipv6 || pool.public {
        return Err(ApiError::invalid_parameter(
            "Ipv4IpamPoolId",
            pool_id,
            "A VPC's IPv4 range comes from an IPv4 pool of a private scope.",
        ));
    }
    check_vpc_use(region, pool, tags)?;
    let wanted = wanted(pool, cidr, "CidrBlock", length, "Ipv4NetmaskLength")?;
    match take_from(pool, &wanted, &[], &[])? {
        IpNet::V4(net) => Ok(net),
        IpNet::V6(_) => Err(ApiError::invalid_parameter(
            "Ipv4IpamPoolId",
            pool_id,
            "A VPC's IPv4 range comes from an IPv4 pool.",
        )),
    }
}

/// Fails unless a VPC with `tags` may take a range of `pool` here: the pool's locale is
/// this region (or none), and the VPC has the tags the pool requires.
fn check_vpc_use(
    region: &Region,
    pool: &Pool,
    tags: &std::collections::BTreeMap<String, String>,
) -> Result<(), ApiError> {
    check_locale(region, pool)?;
    if pool
        .resource_tags
        .iter()
        .any(|(k, v)| tags.get(k) != Some(v))
    {
        return Err(ApiError::invalid_value(
            "The resource is missing one or more of the resource tags required by the IPAM \
             pool.",
        ));
    }
    Ok(())
}

/// The IPv6 block a VPC takes from pool `pool_id` (`cidr` of it, `length` bits, or the
/// pool's default), checked and not yet recorded, and whether it is private space (the
/// pool's scope is private); `tags` are the VPC's. The block is a /44 to a /60 in steps of
/// four bits, as the VPC user guide sizes one from IPAM.
pub fn vpc_ipv6_range(
    region: &Region,
    pool_id: &str,
    cidr: Option<&str>,
    length: Option<i32>,
    tags: &std::collections::BTreeMap<String, String>,
) -> Result<(Ipv6Net, bool), ApiError> {
    let pool = Kind::IpamPool.get(&region.ipam_pools, pool_id)?;
    if !pool.ipv6 {
        return Err(ApiError::invalid_parameter(
            "Ipv6IpamPoolId",
            pool_id,
            "A VPC's IPv6 block comes from an IPv6 pool.",
        ));
    }
    check_vpc_use(region, pool, tags)?;
    let wanted = wanted(pool, cidr, "Ipv6CidrBlock", length, "Ipv6NetmaskLength")?;
    let len = wanted.len();
    if !crate::ec2::vpc_ipv6::ipam_vpc_prefix_ok(len) {
        return Err(ApiError::invalid_value(format!(
            "A VPC's IPv6 block from an IPAM pool is a /44 to a /60 in increments of /4, not \
             a /{len}."
        )));
    }
    match take_from(pool, &wanted, &[], &[])? {
        IpNet::V6(net) => Ok((net, !pool.public)),
        IpNet::V4(_) => Err(ApiError::invalid_parameter(
            "Ipv6IpamPoolId",
            pool_id,
            "A VPC's IPv6 block comes from an IPv6 pool.",
        )),
    }
}

/// Records that VPC `vpc_id` holds `net` of pool `pool_id`.
pub fn vpc_allocated(region: &mut Region, pool_id: &str, vpc_id: &str, net: IpNet) {
    let allocation = Allocation {
        id: allocation_id(region),
        cidr: net,
        resource_type: IpamPoolAllocationResourceType::Vpc,
        resource_id: Some(vpc_id.to_string()),
        description: None,
        tags: Vec::new(),
    };
    if let Some(p) = region.ipam_pools.0.get_mut(pool_id) {
        p.allocations.push(allocation);
    }
}

/// VPC `vpc_id` no longer holds `net` (none: any of its ranges, the VPC being gone): its
/// allocations of them are released.
pub fn vpc_released(region: &mut Region, vpc_id: &str, net: Option<IpNet>) {
    for pool in region.ipam_pools.0.values_mut() {
        pool.allocations.retain(|a| {
            !(a.resource_type == IpamPoolAllocationResourceType::Vpc
                && a.resource_id.as_deref() == Some(vpc_id)
                && net.is_none_or(|n| a.cidr == n))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> IpNet {
        s.parse().unwrap_or_else(|_| IpNet::V4(Ipv4Net::default()))
    }

    #[test]
    fn the_lowest_free_aligned_block_is_taken() {
        let within = [net("10.0.0.0/16")];
        assert_eq!(
            first_free(&within, &[], &[], &[], 24),
            Some(net("10.0.0.0/24"))
        );
        let taken = [net("10.0.0.0/25"), net("10.0.1.0/24")];
        assert_eq!(
            first_free(&within, &taken, &[], &[], 24),
            Some(net("10.0.2.0/24"))
        );
        assert_eq!(
            first_free(&within, &taken, &[], &[], 25),
            Some(net("10.0.0.128/25"))
        );
        assert_eq!(
            first_free(&within, &[net("10.0.0.0/16")], &[], &[], 28),
            None
        );
        assert_eq!(first_free(&within, &[], &[], &[], 15), None);
        assert_eq!(
            first_free(&within, &[], &[net("10.0.128.0/17")], &[], 20),
            Some(net("10.0.128.0/20"))
        );
        assert_eq!(
            first_free(&within, &[], &[], &[net("10.0.0.0/17")], 20),
            Some(net("10.0.128.0/20"))
        );
        let v6 = [net("fd00::/8")];
        assert_eq!(first_free(&v6, &[], &[], &[], 56), Some(net("fd00::/56")));
        assert_eq!(
            first_free(&[net("::/0")], &[net("::/1")], &[], &[], 1),
            Some(net("8000::/1"))
        );
    }
}
