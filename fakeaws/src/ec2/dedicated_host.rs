//! Dedicated Hosts: AllocateHosts, DescribeHosts, ModifyHosts, ReleaseHosts, and the host a
//! launch of `host` tenancy lands on ([`for_launch`], [`for_start`]).
//!
//! - A host supports one instance type (`InstanceType`) or every size of one family
//!   (`InstanceFamily`: `AllowsMultipleInstanceTypes` `on`), never both
//!   (`InvalidParameterCombination`); a family the catalogue of
//!   [`crate::ec2::instance_type`] does not run on Dedicated Hosts is
//!   `InvalidHostConfiguration`. Its hardware is its family's ([`instance_type::host_shape`]):
//!   an `m5` host has 2 sockets, 48 cores and 96 vCPUs, as the user guide's example has it.
//! - Its capacity is in vCPUs: each instance on it that is not stopped or terminated holds its
//!   type's; `AvailableInstanceCapacity` gives, per size it runs, how many more fit and how many
//!   fit on the empty host (48 `m5.large` on an `m5.large` host, as the CLI's documented
//!   output shows, 6 `m5.4xlarge`). A T3 host runs four times as many: 192 of the sizes up to
//!   `medium` ([`instance_type::host_slots`]).
//! - It is `available` once allocated, `released` once released, and stays listed so. Auto
//!   placement and host recovery are `off` unless asked, host maintenance `on`, AWS's
//!   defaults. A host is released only when no instance runs on it: otherwise the item is
//!   unsuccessful with `Client.InvalidHost.Occupied`, as AWS answers it; a released or unknown
//!   host is `Client.InvalidHostID.NotFound` there (the code Terraform's delete expects).
//! - A launch names its host (`Placement.HostId`: tenancy `host`) or asks for tenancy `host`
//!   and lands on a host of its zone with auto placement `on` that supports its type and has
//!   room; else `InsufficientCapacityOnHost`. `Placement.Affinity` `host` keeps a stopped
//!   instance to its host when it starts again; with `default` affinity it starts on its host
//!   if that has room, else on another with auto placement.
//! - ModifyHosts changes auto placement, host recovery and maintenance, and the type or the
//!   family a host supports (within its family, and only while no instance runs on it).
//! - An idempotent AllocateHosts (`ClientToken`) answers the hosts the first call made.

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::instance::Instance;
use crate::ec2::instance_type::{self, HostShape};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    AllocateHostsRequest, AllocateHostsResult, AllocationState, AllowsMultipleInstanceTypes,
    AutoPlacement, AvailableCapacity, DescribeHostsRequest, DescribeHostsResult, Host as HostOut,
    HostInstance, HostMaintenance, HostProperties, HostRecovery, InstanceCapacity,
    InstanceStateName, InstanceType, ModifyHostsRequest, ModifyHostsResult, Placement,
    ReleaseHostsRequest, ReleaseHostsResult, ResourceType, Tenancy, UnsuccessfulItem,
    UnsuccessfulItemError,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Dedicated Hosts by id.
    DedicatedHosts of DedicatedHost
}

/// One Dedicated Host.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DedicatedHost {
    /// `h-...`.
    pub id: String,
    /// Its zone's name.
    pub zone: String,
    /// The family it runs.
    pub family: String,
    /// The one type it runs, unless it runs every size of its family.
    pub instance_type: Option<String>,
    /// Auto placement: untargeted launches of `host` tenancy may land on it.
    pub auto_placement: bool,
    /// Host recovery.
    pub host_recovery: bool,
    /// Host maintenance.
    pub host_maintenance: bool,
    /// The ClientToken it was allocated with.
    pub client_token: Option<String>,
    /// When it was allocated.
    #[serde(with = "crate::state::with::time")]
    pub allocated: DateTime,
    /// When it was released, once it is.
    #[serde(default, with = "crate::state::with::time_opt")]
    pub released: Option<DateTime>,
}

impl DedicatedHost {
    /// Whether it is `available` (not released).
    pub fn is_available(&self) -> bool {
        self.released.is_none()
    }

    /// Whether it runs instances of type `t`.
    fn supports(&self, t: InstanceType) -> bool {
        match &self.instance_type {
            Some(only) => only == t.as_str(),
            None => family_of(t.as_str()) == self.family,
        }
    }

    fn shape(&self) -> HostShape {
        instance_type::host_shape(&self.family).unwrap_or(HostShape {
            sockets: 0,
            cores: 0,
            vcpus: 0,
            slots: 0,
        })
    }
}

/// The family of the type called `name` (`m5` of `m5.large`).
fn family_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(f, _)| f)
}

/// Whether an instance in `state` holds capacity on its host (a stopped or terminated one
/// does not: a host is released once its instances are stopped or terminated).
fn holds_capacity(state: InstanceStateName) -> bool {
    !matches!(
        state,
        InstanceStateName::Stopped | InstanceStateName::Terminated
    )
}

/// The instances that hold capacity on host `id`.
fn occupants<'a>(region: &'a Region, id: &'a str) -> impl Iterator<Item = &'a Instance> + 'a {
    region
        .instances
        .values()
        .filter(move |i| i.host_id.as_deref() == Some(id) && holds_capacity(i.state))
}

/// The slots the instances on host `id` hold ([`instance_type::host_slots`]).
fn used_slots(region: &Region, id: &str) -> i32 {
    occupants(region, id)
        .map(|i| instance_type::host_slots(i.instance_type).unwrap_or(0))
        .sum()
}

/// The sizes host `h` runs, with their vCPUs, smallest first.
fn sizes(h: &DedicatedHost) -> Vec<(InstanceType, i32)> {
    instance_type::host_sizes(&h.family)
        .into_iter()
        .filter(|(t, _)| h.supports(*t))
        .collect()
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

fn render(region: &Region, h: &DedicatedHost) -> HostOut {
    let shape = h.shape();
    let free = if h.is_available() {
        (shape.slots - used_slots(region, &h.id)).max(0)
    } else {
        0
    };
    let capacity = sizes(h)
        .into_iter()
        .filter(|&(_, slots)| slots > 0)
        .map(|(t, slots)| InstanceCapacity {
            available_capacity: Some(free / slots),
            instance_type: Some(t.as_str().to_string()),
            total_capacity: Some(shape.slots / slots),
        })
        .collect();
    let free_vcpus = if shape.slots > 0 {
        free * shape.vcpus / shape.slots
    } else {
        0
    };
    let instances = occupants(region, &h.id)
        .map(|i| HostInstance {
            instance_id: Some(i.id.clone()),
            instance_type: Some(i.instance_type.as_str().to_string()),
            owner_id: Some(region.account_id.clone()),
        })
        .collect();
    HostOut {
        auto_placement: Some(if h.auto_placement {
            AutoPlacement::On
        } else {
            AutoPlacement::Off
        }),
        availability_zone: Some(h.zone.clone()),
        available_capacity: Some(AvailableCapacity {
            available_instance_capacity: Some(capacity),
            available_v_cpus: Some(free_vcpus),
        }),
        client_token: h.client_token.clone(),
        host_id: Some(h.id.clone()),
        host_properties: Some(HostProperties {
            cores: Some(shape.cores),
            instance_type: h.instance_type.clone(),
            instance_family: h.instance_type.is_none().then(|| h.family.clone()),
            sockets: Some(shape.sockets),
            total_v_cpus: Some(shape.vcpus),
        }),
        instances: Some(instances),
        state: Some(if h.is_available() {
            AllocationState::Available
        } else {
            AllocationState::Released
        }),
        allocation_time: Some(h.allocated),
        release_time: h.released,
        tags: region.tags.tag_set(&h.id),
        host_recovery: Some(if h.host_recovery {
            HostRecovery::On
        } else {
            HostRecovery::Off
        }),
        allows_multiple_instance_types: Some(if h.instance_type.is_none() {
            AllowsMultipleInstanceTypes::On
        } else {
            AllowsMultipleInstanceTypes::Off
        }),
        owner_id: Some(region.account_id.clone()),
        availability_zone_id: region.zone(&h.zone).map(|z| z.id.clone()),
        member_of_service_linked_resource_group: Some(false),
        host_maintenance: Some(if h.host_maintenance {
            HostMaintenance::On
        } else {
            HostMaintenance::Off
        }),
        ..Default::default()
    }
}

impl Filterable for DedicatedHost {
    const NAMES: &'static [&'static str] = &[
        "auto-placement",
        "availability-zone",
        "client-token",
        "host-reservation-id",
        "instance-type",
        "state",
    ];
    const NEVER_SET: &'static [&'static str] = &["host-reservation-id"];

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "auto-placement" => one(on_off(self.auto_placement)),
            "availability-zone" => one(self.zone.clone()),
            "client-token" => self.client_token.iter().cloned().collect(),
            "instance-type" => self.instance_type.iter().cloned().collect(),
            "state" => one(if self.is_available() {
                "available"
            } else {
                "released"
            }),
            _ => Vec::new(),
        }
    }
}

/// What a host is configured to run: (family, the one type if only one), checked against the
/// catalogue; both or neither is `InvalidParameterCombination` / `MissingParameter`.
fn configuration(
    instance_type: Option<&str>,
    family: Option<&str>,
) -> Result<(String, Option<String>), ApiError> {
    let (family, only) = match (instance_type, family) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_combination(
                "Only one of InstanceType or InstanceFamily may be specified.",
            ));
        }
        (None, None) => {
            return Err(ApiError::missing_parameter(
                "InstanceType or InstanceFamily",
            ));
        }
        (Some(t), None) => {
            let known = InstanceType::from_wire(t)
                .filter(|t| instance_type::vcpus(*t).is_some())
                .ok_or_else(|| {
                    ApiError::invalid_parameter(
                        "InstanceType",
                        t,
                        "The instance type is not one fakeaws describes.",
                    )
                })?;
            (family_of(known.as_str()).to_string(), Some(t.to_string()))
        }
        (None, Some(f)) => (f.to_string(), None),
    };
    if instance_type::host_shape(&family).is_none()
        || only.as_deref().is_some_and(|t| {
            !instance_type::host_sizes(&family)
                .iter()
                .any(|(s, _)| s.as_str() == t)
        })
    {
        return Err(ApiError::new(
            Code::InvalidHostConfiguration,
            format!(
                "The specified Dedicated Host configuration is not supported: {}.",
                only.as_deref().unwrap_or(&family)
            ),
        ));
    }
    Ok((family, only))
}

/// `AllocateHosts`.
pub fn allocate_hosts(
    region: &mut Region,
    mut input: AllocateHostsRequest,
) -> Result<AllocateHostsResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(ids) = region
        .ledger
        .replay("AllocateHosts", token.as_deref(), &print)?
    {
        return Ok(AllocateHostsResult {
            host_ids: Some(ids.split(',').map(String::from).collect()),
        });
    }
    let (family, only) = configuration(
        input.instance_type.as_deref(),
        input.instance_family.as_deref(),
    )?;
    let zone = region.zone_named(
        input.availability_zone.as_deref(),
        input.availability_zone_id.as_deref(),
    )?;
    let quantity = input
        .quantity
        .ok_or_else(|| ApiError::missing_parameter("Quantity"))?;
    if quantity < 1 {
        return Err(ApiError::new(
            Code::InvalidQuantity,
            format!("The specified quantity of Dedicated Hosts is not valid: {quantity}."),
        ));
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::DedicatedHost,
    )?;
    let held = region
        .dedicated_hosts
        .values()
        .filter(|h| h.is_available() && h.family == family)
        .count();
    let limit = region.limits.dedicated_hosts_per_family;
    if held.saturating_add(usize::try_from(quantity).unwrap_or(usize::MAX)) > limit {
        return Err(ApiError::new(
            Code::HostLimitExceeded,
            format!(
                "You have requested more Dedicated Hosts of the {family} family than your \
                 current limit of {limit} allows."
            ),
        ));
    }
    let now = region.clock.now_datetime();
    let mut ids = Vec::new();
    for _ in 0..quantity {
        let host = DedicatedHost {
            id: region.ids.resource(Kind::DedicatedHost.prefix()),
            zone: zone.clone(),
            family: family.clone(),
            instance_type: only.clone(),
            auto_placement: input.auto_placement == Some(AutoPlacement::On),
            host_recovery: input.host_recovery == Some(HostRecovery::On),
            host_maintenance: input.host_maintenance != Some(HostMaintenance::Off),
            client_token: token.clone(),
            allocated: now,
            released: None,
        };
        region.tags.insert(&host.id, tags.clone());
        ids.push(host.id.clone());
        region.dedicated_hosts.0.insert(host.id.clone(), host);
    }
    region
        .ledger
        .record("AllocateHosts", token.as_deref(), &print, &ids.join(","));
    Ok(AllocateHostsResult {
        host_ids: Some(ids),
    })
}

/// `DescribeHosts`: by ids (`InvalidHostID.NotFound`), or filters, in pages of 5 to 500
/// (not with ids).
pub fn describe_hosts(
    region: &mut Region,
    input: DescribeHostsRequest,
) -> Result<DescribeHostsResult, ApiError> {
    let filters = Filters::parse::<DedicatedHost>(input.filter)?;
    if input.max_results.is_some() && input.host_ids.as_ref().is_some_and(|i| !i.is_empty()) {
        return Err(ApiError::invalid_combination(
            "MaxResults cannot be specified with HostIds.",
        ));
    }
    page::check_max_results(input.max_results, 5, 500)?;
    let region = &*region;
    let found = Kind::DedicatedHost.describe(
        &region.consistency,
        &region.dedicated_hosts,
        input.host_ids.as_deref(),
        region.candidates(Kind::DedicatedHost, &filters),
        |h| filters.matches(h, region.tags.get(&h.id)),
    )?;
    let (items, next) = page::page(
        found,
        |h| h.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeHostsResult {
        hosts: Some(items.into_iter().map(|h| render(region, h)).collect()),
        next_token: next,
    })
}

fn unsuccessful(id: &str, code: &str, message: String) -> UnsuccessfulItem {
    UnsuccessfulItem {
        error: Some(UnsuccessfulItemError {
            code: Some(code.to_string()),
            message: Some(message),
        }),
        resource_id: Some(id.to_string()),
    }
}

/// The available host `id`, or the unsuccessful item naming it.
fn available_or_item<'a>(
    region: &'a Region,
    id: &str,
) -> Result<&'a DedicatedHost, UnsuccessfulItem> {
    region
        .dedicated_hosts
        .get(id)
        .filter(|h| h.is_available())
        .ok_or_else(|| {
            unsuccessful(
                id,
                "Client.InvalidHostID.NotFound",
                format!("The host ID '{id}' does not exist"),
            )
        })
}

fn occupied(id: &str, doing: &str) -> UnsuccessfulItem {
    unsuccessful(
        id,
        "Client.InvalidHost.Occupied",
        format!("Dedicated host '{id}' cannot be {doing} as it is occupied."),
    )
}

/// `ModifyHosts`: each host changed, or an unsuccessful item saying why not.
pub fn modify_hosts(
    region: &mut Region,
    input: ModifyHostsRequest,
) -> Result<ModifyHostsResult, ApiError> {
    if input.auto_placement.is_none()
        && input.host_recovery.is_none()
        && input.host_maintenance.is_none()
        && input.instance_type.is_none()
        && input.instance_family.is_none()
    {
        return Err(ApiError::missing_parameter(
            "AutoPlacement, HostRecovery, HostMaintenance, InstanceType or InstanceFamily",
        ));
    }
    let reconfigured = if input.instance_type.is_some() || input.instance_family.is_some() {
        Some(configuration(
            input.instance_type.as_deref(),
            input.instance_family.as_deref(),
        )?)
    } else {
        None
    };
    for id in &input.host_ids {
        Kind::DedicatedHost.check_shape(id)?;
    }
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    let mut changes: BTreeMap<String, DedicatedHost> = BTreeMap::new();
    for id in &input.host_ids {
        let h = match available_or_item(region, id) {
            Ok(h) => h,
            Err(item) => {
                failed.push(item);
                continue;
            }
        };
        let mut changed = h.clone();
        if let Some((family, only)) = &reconfigured {
            if *family != h.family {
                failed.push(unsuccessful(
                    id,
                    "Client.InvalidParameterValue",
                    format!(
                        "Dedicated host '{id}' runs the {} family; it cannot be modified to \
                         support {}.",
                        h.family,
                        only.as_deref().unwrap_or(family)
                    ),
                ));
                continue;
            }
            if occupants(region, id).next().is_some() {
                failed.push(occupied(id, "modified"));
                continue;
            }
            changed.instance_type.clone_from(only);
        }
        if let Some(a) = input.auto_placement {
            changed.auto_placement = a == AutoPlacement::On;
        }
        if let Some(r) = input.host_recovery {
            changed.host_recovery = r == HostRecovery::On;
        }
        if let Some(m) = input.host_maintenance {
            changed.host_maintenance = m == HostMaintenance::On;
        }
        done.push(id.clone());
        changes.insert(id.clone(), changed);
    }
    for (id, h) in changes {
        region.dedicated_hosts.0.insert(id, h);
    }
    Ok(ModifyHostsResult {
        successful: Some(done),
        unsuccessful: Some(failed),
    })
}

/// `ReleaseHosts`: each host without an instance running on it released; the others
/// unsuccessful items.
pub fn release_hosts(
    region: &mut Region,
    input: ReleaseHostsRequest,
) -> Result<ReleaseHostsResult, ApiError> {
    for id in &input.host_ids {
        Kind::DedicatedHost.check_shape(id)?;
    }
    let now = region.clock.now_datetime();
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    for id in &input.host_ids {
        if let Err(item) = available_or_item(region, id) {
            failed.push(item);
            continue;
        }
        if occupants(region, id).next().is_some() {
            failed.push(occupied(id, "released"));
            continue;
        }
        if let Some(h) = region.dedicated_hosts.0.get_mut(id) {
            h.released = Some(now);
            h.auto_placement = false;
        }
        done.push(id.clone());
    }
    Ok(ReleaseHostsResult {
        successful: Some(done),
        unsuccessful: Some(failed),
    })
}

/// The placement of a launch of `host` tenancy (or naming a host): the tenancy, and each of
/// its instances' host.
pub struct OnHosts {
    /// The affinity the instances keep (`default` or `host`).
    pub affinity: String,
    /// The host of each instance, as many as fit (at least the launch's minimum).
    pub hosts: Vec<String>,
}

/// The affinity a placement asks for, checked: `default` unless told; only with `host`
/// tenancy.
fn affinity(placement: &Placement, tenancy: Tenancy) -> Result<String, ApiError> {
    match placement.affinity.as_deref() {
        None => Ok("default".to_string()),
        Some(a @ ("default" | "host")) if tenancy == Tenancy::Host => Ok(a.to_string()),
        Some("default" | "host") => Err(ApiError::invalid_combination(
            "Placement.Affinity is valid only for instances of host tenancy.",
        )),
        Some(other) => Err(ApiError::invalid_parameter(
            "Placement.Affinity",
            other,
            "Affinity is 'default' or 'host'.",
        )),
    }
}

/// How many more instances taking `slots` each fit on host `h`, besides `taken` slots this
/// call already placed there.
fn room(region: &Region, h: &DedicatedHost, slots: i32, taken: i32) -> usize {
    let free = h.shape().slots - used_slots(region, &h.id) - taken;
    if slots <= 0 || free <= 0 {
        return 0;
    }
    usize::try_from(free / slots).unwrap_or(0)
}

fn no_capacity(zone: &str, t: InstanceType) -> ApiError {
    ApiError::new(
        Code::InsufficientCapacityOnHost,
        format!(
            "You do not have a Dedicated Host in {zone} with auto-placement on, a matching \
             configuration for {} and sufficient capacity. Allocate a host and try again.",
            t.as_str()
        ),
    )
}

fn host_full(id: &str) -> ApiError {
    ApiError::new(
        Code::InsufficientCapacityOnHost,
        format!(
            "There is not enough capacity on the Dedicated Host {id} to launch or start the \
             instance."
        ),
    )
}

/// The host `id` a launch or start of type `t` in `zone` names: it must be available, in that
/// zone, and run that type.
pub fn named_host<'a>(
    region: &'a Region,
    id: &str,
    t: InstanceType,
    zone: &str,
) -> Result<&'a DedicatedHost, ApiError> {
    let h = Kind::DedicatedHost.get(&region.dedicated_hosts, id)?;
    if !h.is_available() {
        return Err(ApiError::new(
            Code::InvalidHostState,
            format!("The Dedicated Host {id} must be in the available state (it is released)."),
        ));
    }
    if h.zone != zone {
        return Err(ApiError::invalid_value(format!(
            "The Dedicated Host {id} is in {}, not in {zone}, the zone of the instance's subnet.",
            h.zone
        )));
    }
    if !h.supports(t) {
        return Err(ApiError::invalid_value(format!(
            "The Dedicated Host {id} does not support instances of type {} (it runs {}).",
            t.as_str(),
            h.instance_type.as_deref().unwrap_or(&h.family)
        )));
    }
    Ok(h)
}

/// Where a launch of `wanted` instances (at least `minimum`) of type `t` into `zone` goes when
/// its placement is of `host` tenancy: on the host it names, else on the hosts of that zone
/// with auto placement on that run the type, in id order, as many as fit. `None` for any other
/// tenancy.
pub fn for_launch(
    region: &Region,
    placement: Option<&Placement>,
    tenancy: Tenancy,
    t: InstanceType,
    zone: &str,
    wanted: usize,
    minimum: usize,
) -> Result<Option<OnHosts>, ApiError> {
    let Some(placement) = placement else {
        return Ok(None);
    };
    let affinity = affinity(placement, tenancy)?;
    if tenancy != Tenancy::Host {
        return Ok(None);
    }
    let slots = instance_type::host_slots(t).unwrap_or(0);
    let mut hosts = Vec::with_capacity(wanted);
    if let Some(id) = &placement.host_id {
        let h = named_host(region, id, t, zone)?;
        let fits = room(region, h, slots, 0).min(wanted);
        if fits < minimum.max(1) {
            return Err(host_full(id));
        }
        hosts.resize(fits, h.id.clone());
    } else {
        for h in region
            .dedicated_hosts
            .values()
            .filter(|h| h.is_available() && h.auto_placement && h.zone == zone && h.supports(t))
        {
            let fits = room(region, h, slots, 0).min(wanted - hosts.len());
            hosts.extend(std::iter::repeat_n(h.id.clone(), fits));
            if hosts.len() == wanted {
                break;
            }
        }
        if hosts.len() < minimum.max(1) {
            return Err(no_capacity(zone, t));
        }
    }
    Ok(Some(OnHosts { affinity, hosts }))
}

/// The host each of `starting` (stopped instances of `host` tenancy) starts on: its own when
/// that has room, else (with `default` affinity) another of its zone with auto placement on;
/// else `InsufficientCapacityOnHost`. Nothing changes until every one has a host.
pub fn for_start(
    region: &Region,
    starting: &[&Instance],
) -> Result<Vec<(String, String)>, ApiError> {
    let mut taken: BTreeMap<String, i32> = BTreeMap::new();
    let mut chosen = Vec::new();
    for i in starting
        .iter()
        .filter(|i| i.tenancy == Tenancy::Host && i.state == InstanceStateName::Stopped)
    {
        let slots = instance_type::host_slots(i.instance_type).unwrap_or(0);
        let fits = |h: &DedicatedHost, taken: &BTreeMap<String, i32>| {
            h.is_available()
                && h.supports(i.instance_type)
                && room(region, h, slots, taken.get(&h.id).copied().unwrap_or(0)) > 0
        };
        let own = i
            .host_id
            .as_deref()
            .and_then(|id| region.dedicated_hosts.get(id));
        let host = match own {
            Some(h) if fits(h, &taken) => h.id.clone(),
            Some(h) if i.affinity.as_deref() == Some("host") => return Err(host_full(&h.id)),
            _ => region
                .dedicated_hosts
                .values()
                .find(|h| h.auto_placement && h.zone == i.zone && fits(h, &taken))
                .map(|h| h.id.clone())
                .ok_or_else(|| no_capacity(&i.zone, i.instance_type))?,
        };
        *taken.entry(host.clone()).or_default() += slots;
        chosen.push((i.id.clone(), host));
    }
    Ok(chosen)
}
