//! EC2 Fleet: CreateFleet, DescribeFleets, DescribeFleetInstances, ModifyFleet, DeleteFleets.
//!
//! - A fleet launches its target capacity from launch templates, each with overrides (a pool:
//!   instance type, subnet or zone, image, weighted capacity, priority, Spot maximum price),
//!   On-Demand and Spot capacity as `TargetCapacitySpecification` splits it (the units neither
//!   `OnDemandTargetCapacity` nor `SpotTargetCapacity` claims go to the
//!   `DefaultTargetCapacityType`, which a request must give). Each launch is a RunInstances
//!   launch of the pool (every check of RunInstances applies); a pool that fails is reported
//!   with RunInstances' code and message and the next is tried, as AWS reports a fleet's
//!   errors. Instances are tagged `aws:ec2:fleet-id`, as AWS tags them; a Spot Instance has its
//!   Spot Instance request.
//! - Order of pools: On-Demand by the fake's On-Demand price per unit (`lowest-price`, the
//!   default) or by priority (`prioritized`: lower first, unset last); Spot by the fake's
//!   current Spot price per unit ([`super::spot_price`]) for `lowest-price` (the default, over
//!   `InstancePoolsToUseCount` pools, 1 by default), `price-capacity-optimized` and
//!   `capacity-optimized` (the fake has no capacity pools: price decides), by priority for
//!   `capacity-optimized-prioritized`, and across every pool for `diversified`. A Spot pool
//!   whose price is above its `MaxPrice` fails with `SpotMaxPriceTooLow`.
//!   `SingleInstanceType` / `SingleAvailabilityZone` keep an instant fleet to the type and
//!   zone of its first launch; `MinTargetCapacity` (instant only) is checked against what the
//!   pools can give before anything launches.
//! - `instant`: launched during the call, answered with its instances and errors, described
//!   only when named by id (as the API reference says), `fulfilled` whatever was launched;
//!   `request`: launched at creation, never replenished; `maintain`: launched at creation and
//!   kept at its target: when one of its instances shuts down, or ModifyFleet changes its
//!   target (`modifying` until then), it launches or (with the `termination` policy, the
//!   default) terminates instances at the next step of the clock (subject `fleet`, which a
//!   test can hold), the highest price per unit terminated first.
//! - DeleteFleets: `deleted_terminating` (described `deleted` once its instances are
//!   terminated) or, for request and maintain fleets, `deleted_running`; an instant fleet
//!   cannot keep its instances; per-fleet failures as the model lists them
//!   (`fleetIdDoesNotExist`, `fleetIdMalformed`, `fleetNotInDeletableState`).
//! - Not served: `InstanceRequirements` (attribute-based selection) and capacity units other
//!   than `units`, reserved and capacity-block capacity, `ValidFrom`, the expiry of a fleet at
//!   `ValidUntil` (kept and shown), `MaxTotalPrice` (kept and shown), health checks
//!   (`ReplaceUnhealthyInstances` is kept and shown), DescribeFleetHistory.

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, fingerprint, instance, page, spot_price, tags};
use crate::generated::ec2::{
    ActiveInstance, BlockDeviceMapping, CreateFleetError, CreateFleetInstance, CreateFleetRequest,
    CreateFleetResult, DefaultTargetCapacityType, DeleteFleetError, DeleteFleetErrorCode,
    DeleteFleetErrorItem, DeleteFleetSuccessItem, DeleteFleetsRequest, DeleteFleetsResult,
    DescribeFleetError, DescribeFleetInstancesRequest, DescribeFleetInstancesResult,
    DescribeFleetsInstances, DescribeFleetsRequest, DescribeFleetsResult, EbsBlockDevice,
    FleetActivityStatus, FleetData, FleetExcessCapacityTerminationPolicy,
    FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides, FleetLaunchTemplateOverridesRequest,
    FleetLaunchTemplateSpecification, FleetOnDemandAllocationStrategy, FleetStateCode, FleetType,
    HttpTokensState, IamInstanceProfileSpecification, InstanceHealthStatus,
    InstanceInterruptionBehavior, InstanceLifecycle, InstanceMarketOptionsRequest,
    InstanceMetadataEndpointState, InstanceMetadataOptionsRequest, InstanceStateName, InstanceType,
    LaunchTemplateAndOverridesResponse, LaunchTemplateSpecification, MarketType,
    ModifyFleetRequest, ModifyFleetResult, OnDemandOptions, Placement, PlacementResponse,
    ResourceType, RunInstancesRequest, SpotAllocationStrategy, SpotInstanceInterruptionBehavior,
    SpotInstanceType, SpotMarketOptions, SpotOptions, TagSpecification,
    TargetCapacitySpecification, TargetCapacityUnitType, TerminateInstancesRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// EC2 Fleets by id.
    Fleets of Fleet
}

/// The tag AWS puts on every instance a fleet launches.
pub const FLEET_TAG: &str = "aws:ec2:fleet-id";

/// One fleet.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Fleet {
    /// `fleet-` and a UUID.
    pub id: String,
    /// `instant`, `request` or `maintain`.
    pub fleet_type: FleetType,
    /// The ClientToken given.
    pub client_token: Option<String>,
    /// When it was made.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// Its launch template configurations, as described.
    pub configs: Vec<FleetLaunchTemplateConfig>,
    /// Its pools: one per override (or per configuration without overrides).
    pub pools: Vec<Pool>,
    /// Its target, split.
    pub target: Target,
    /// The Spot options, as described.
    pub spot: SpotOptions,
    /// The On-Demand options, as described.
    pub on_demand: OnDemandOptions,
    /// `ExcessCapacityTerminationPolicy` (maintain).
    pub excess: FleetExcessCapacityTerminationPolicy,
    /// `TerminateInstancesWithExpiration`.
    pub terminate_with_expiration: bool,
    /// `ReplaceUnhealthyInstances`.
    pub replace_unhealthy: bool,
    /// `ValidUntil`.
    #[serde(with = "crate::state::with::time_opt", default)]
    pub valid_until: Option<DateTime>,
    /// Every instance it launched, with its pool and lifecycle.
    pub members: BTreeMap<String, Member>,
    /// Its launches in order: pool, Spot or not, instances (an instant fleet's answer).
    pub launches: Vec<(usize, bool, Vec<String>)>,
    /// The launches that failed: pool, Spot or not, code, message.
    pub errors: Vec<(usize, bool, String, String)>,
    /// `active`, `modifying`, `deleted_running` or `deleted_terminating`.
    pub state: FleetStateCode,
}

/// A fleet's target capacity: the total, and the part of each lifecycle.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// `TotalTargetCapacity`.
    pub total: i32,
    /// The On-Demand units.
    pub on_demand: i32,
    /// The Spot units.
    pub spot: i32,
    /// `DefaultTargetCapacityType`.
    pub default: DefaultTargetCapacityType,
}

/// One pool: a launch template and one set of overrides.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pool {
    /// The template, as given.
    pub template: FleetLaunchTemplateSpecification,
    /// The overrides, as described (`None` for a configuration without overrides).
    pub overrides: Option<FleetLaunchTemplateOverrides>,
    /// The weighted capacity (1 unless given).
    pub weight: f64,
    /// The instance type launched (the override's, else the template's).
    pub instance_type: Option<InstanceType>,
    /// The zone id launched in, when the override or the template names a subnet or zone.
    pub zone_id: Option<String>,
}

/// An instance of a fleet.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// Its pool.
    pub pool: usize,
    /// A Spot Instance.
    pub spot: bool,
}

/// What an instant fleet's overrides add to a launch (never kept).
#[derive(Debug, Default, Clone)]
struct Extras {
    key_name: Option<String>,
    block_devices: Option<Vec<BlockDeviceMapping>>,
    profile: Option<IamInstanceProfileSpecification>,
    metadata: Option<InstanceMetadataOptionsRequest>,
    user_data: Option<String>,
}

fn lifecycle(spot: bool) -> InstanceLifecycle {
    if spot {
        InstanceLifecycle::Spot
    } else {
        InstanceLifecycle::OnDemand
    }
}

fn live(region: &Region, id: &str) -> bool {
    region.instances.get(id).is_some_and(|i| {
        matches!(
            i.state,
            InstanceStateName::Pending | InstanceStateName::Running
        )
    })
}

impl Fleet {
    fn weight(&self, m: &Member) -> f64 {
        self.pools.get(m.pool).map_or(1.0, |p| p.weight)
    }

    /// The units of the instances `counted` keeps: all, and On-Demand.
    fn units(&self, counted: impl Fn(&str) -> bool) -> (f64, f64) {
        let mut all = 0.0;
        let mut on_demand = 0.0;
        for (_, m) in self.members.iter().filter(|(id, _)| counted(id)) {
            all += self.weight(m);
            if !m.spot {
                on_demand += self.weight(m);
            }
        }
        (all, on_demand)
    }

    /// The units of its live instances: all, and On-Demand.
    fn fulfilled(&self, region: &Region) -> (f64, f64) {
        self.units(|id| live(region, id))
    }

    /// The units every launch gave (an instant fleet's figures).
    fn launched(&self) -> (f64, f64) {
        self.units(|_| true)
    }

    fn shown_state(&self, region: &Region) -> FleetStateCode {
        if self.state == FleetStateCode::DeletedTerminating
            && !self.members.keys().any(|id| {
                region
                    .instances
                    .get(id)
                    .is_some_and(|i| i.state != InstanceStateName::Terminated)
            })
        {
            return FleetStateCode::Deleted;
        }
        self.state
    }

    fn activity(&self, region: &Region) -> FleetActivityStatus {
        if self.fleet_type == FleetType::Instant {
            return FleetActivityStatus::Fulfilled;
        }
        let (units, _) = if self.fleet_type == FleetType::Request {
            self.launched()
        } else {
            self.fulfilled(region)
        };
        let total = f64::from(self.target.total);
        if self.state == FleetStateCode::Modifying && units > total {
            FleetActivityStatus::PendingTermination
        } else if units >= total {
            FleetActivityStatus::Fulfilled
        } else if !self.errors.is_empty() && self.state != FleetStateCode::Modifying {
            FleetActivityStatus::Error
        } else {
            FleetActivityStatus::PendingFulfillment
        }
    }
}

fn template_and_overrides(pool: &Pool) -> LaunchTemplateAndOverridesResponse {
    LaunchTemplateAndOverridesResponse {
        launch_template_specification: Some(pool.template.clone()),
        overrides: pool.overrides.clone(),
    }
}

impl Filterable for (&Fleet, &Region) {
    const NAMES: &'static [&'static str] = &[
        "activity-status",
        "excess-capacity-termination-policy",
        "fleet-state",
        "replace-unhealthy-instances",
        "type",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (f, region) = *self;
        // The API reference writes the states with hyphens, the model with underscores:
        // either matches.
        let both = |s: &str| vec![s.to_string(), s.replace('_', "-")];
        match name {
            "activity-status" => both(f.activity(region).as_str()),
            "excess-capacity-termination-policy" => {
                flag(f.excess == FleetExcessCapacityTerminationPolicy::Termination)
            }
            "fleet-state" => both(f.shown_state(region).as_str()),
            "replace-unhealthy-instances" => flag(f.replace_unhealthy),
            "type" => one(f.fleet_type.as_str()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, f: &Fleet) -> FleetData {
    let (fulfilled, on_demand) = if f.fleet_type == FleetType::Instant {
        f.launched()
    } else {
        f.fulfilled(region)
    };
    let instant = f.fleet_type == FleetType::Instant;
    FleetData {
        activity_status: Some(f.activity(region)),
        create_time: Some(f.created),
        fleet_id: Some(f.id.clone()),
        fleet_state: Some(f.shown_state(region)),
        client_token: f.client_token.clone(),
        excess_capacity_termination_policy: (f.fleet_type == FleetType::Maintain)
            .then_some(f.excess),
        fulfilled_capacity: Some(crate::protocol::Float(fulfilled)),
        fulfilled_on_demand_capacity: Some(crate::protocol::Float(on_demand)),
        launch_template_configs: Some(f.configs.clone()),
        target_capacity_specification: Some(TargetCapacitySpecification {
            total_target_capacity: Some(f.target.total),
            on_demand_target_capacity: Some(f.target.on_demand),
            spot_target_capacity: Some(f.target.spot),
            default_target_capacity_type: Some(f.target.default),
            target_capacity_unit_type: None,
        }),
        terminate_instances_with_expiration: Some(f.terminate_with_expiration),
        r#type: Some(f.fleet_type),
        valid_from: None,
        valid_until: f.valid_until,
        replace_unhealthy_instances: Some(f.replace_unhealthy),
        spot_options: Some(f.spot.clone()),
        on_demand_options: Some(f.on_demand.clone()),
        reserved_capacity_options: None,
        tags: Some(region.tags.tag_set(&f.id).unwrap_or_default()),
        errors: instant.then(|| {
            f.errors
                .iter()
                .filter_map(|(pool, spot, code, message)| {
                    Some(DescribeFleetError {
                        launch_template_and_overrides: Some(template_and_overrides(
                            f.pools.get(*pool)?,
                        )),
                        lifecycle: Some(lifecycle(*spot)),
                        error_code: Some(code.clone()),
                        error_message: Some(message.clone()),
                    })
                })
                .collect()
        }),
        instances: instant.then(|| {
            f.launches
                .iter()
                .filter_map(|(pool, spot, ids)| {
                    let p = f.pools.get(*pool)?;
                    Some(DescribeFleetsInstances {
                        launch_template_and_overrides: Some(template_and_overrides(p)),
                        lifecycle: Some(lifecycle(*spot)),
                        instance_ids: Some(ids.clone()),
                        instance_type: instance_type_of(region, ids),
                        platform: None,
                    })
                })
                .collect()
        }),
        context: None,
    }
}

fn instance_type_of(region: &Region, ids: &[String]) -> Option<InstanceType> {
    ids.first()
        .and_then(|id| region.instances.get(id))
        .map(|i| i.instance_type)
}

/// `fleet-` and a UUID, as AWS's fleet ids are.
fn new_id(region: &mut Region) -> String {
    let a = region.ids.next_u64();
    let b = region.ids.next_u64();
    format!(
        "fleet-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// Whether `id` is shaped like a fleet id: `fleet-` and a UUID.
pub fn is_well_formed(id: &str) -> bool {
    crate::ids::is_well_formed(id, "fleet")
}

fn not_implemented(member: &str) -> ApiError {
    ApiError::not_implemented(format!("fakeaws does not serve {member} of CreateFleet"))
}

/// The most overrides a fleet takes across its launch templates (the model's figure for
/// request and maintain fleets, held for instant ones too).
const MAX_POOLS: usize = 300;

/// A request's configurations as described, its pools, and what each pool adds to an instant
/// launch.
type Planned = (Vec<FleetLaunchTemplateConfig>, Vec<Pool>, Vec<Extras>);

/// The pools of a request, checked, with what each adds to an instant launch.
fn pools_of(
    region: &Region,
    input: &mut CreateFleetRequest,
    instant: bool,
) -> Result<Planned, ApiError> {
    if input.launch_template_configs.is_empty() {
        return Err(ApiError::missing_parameter("LaunchTemplateConfigs"));
    }
    let mut configs = Vec::new();
    let mut pools = Vec::new();
    let mut extras = Vec::new();
    for config in std::mem::take(&mut input.launch_template_configs) {
        let Some(spec) = config.launch_template_specification else {
            return Err(ApiError::missing_parameter(
                "LaunchTemplateConfigs.LaunchTemplateSpecification",
            ));
        };
        if spec.launch_template_id.is_some() == spec.launch_template_name.is_some() {
            return Err(ApiError::invalid_combination(
                "You must specify either the launch template ID or the launch template name in the request, but not both.",
            ));
        }
        let Some(version) = spec.version.clone() else {
            return Err(ApiError::missing_parameter(
                "LaunchTemplateConfigs.LaunchTemplateSpecification.Version",
            ));
        };
        if spec.launch_template_specification_user_data.is_some() && !instant {
            return Err(instant_only("LaunchTemplateSpecificationUserData"));
        }
        let template = FleetLaunchTemplateSpecification {
            launch_template_id: spec.launch_template_id.clone(),
            launch_template_name: spec.launch_template_name.clone(),
            version: Some(version.clone()),
        };
        // The template must exist, in the version named, before anything launches.
        let mut probe = bare_launch(&LaunchTemplateSpecification {
            launch_template_id: spec.launch_template_id.clone(),
            launch_template_name: spec.launch_template_name.clone(),
            version: Some(version),
        });
        if let Some(t) = probe.launch_template.take() {
            crate::ec2::launch_template::resolve(region, &t, &mut probe)?;
        }
        let overrides = config.overrides.unwrap_or_default();
        let mut described = Vec::new();
        let list: Vec<Option<FleetLaunchTemplateOverridesRequest>> = if overrides.is_empty() {
            vec![None]
        } else {
            overrides.into_iter().map(Some).collect()
        };
        for o in list {
            let (pool, extra) = pool_of(
                region,
                &template,
                &probe,
                o,
                spec.launch_template_specification_user_data.clone(),
                instant,
            )?;
            if let Some(d) = &pool.overrides {
                described.push(d.clone());
            }
            pools.push(pool);
            extras.push(extra);
        }
        configs.push(FleetLaunchTemplateConfig {
            launch_template_specification: Some(template),
            overrides: (!described.is_empty()).then_some(described),
        });
        if pools.len() > MAX_POOLS {
            return Err(ApiError::invalid_parameter(
                "LaunchTemplateConfigs",
                &pools.len().to_string(),
                &format!(
                    "A maximum of {MAX_POOLS} overrides is allowed across all launch templates."
                ),
            ));
        }
    }
    Ok((configs, pools, extras))
}

fn instant_only(member: &str) -> ApiError {
    ApiError::invalid_combination(format!(
        "{member} is supported only for fleets of type instant."
    ))
}

fn pool_of(
    region: &Region,
    template: &FleetLaunchTemplateSpecification,
    probe: &RunInstancesRequest,
    o: Option<FleetLaunchTemplateOverridesRequest>,
    user_data: Option<String>,
    instant: bool,
) -> Result<(Pool, Extras), ApiError> {
    let mut extra = Extras {
        user_data,
        ..Extras::default()
    };
    let Some(o) = o else {
        let pool = Pool {
            template: template.clone(),
            overrides: None,
            weight: 1.0,
            instance_type: probe.instance_type,
            zone_id: zone_of(region, probe.subnet_id.as_deref(), None, None),
        };
        return Ok((pool, extra));
    };
    if o.instance_requirements.is_some() {
        return Err(not_implemented(
            "Overrides.InstanceRequirements (attribute-based instance type selection)",
        ));
    }
    if o.availability_zone.is_some() && o.availability_zone_id.is_some() {
        return Err(ApiError::invalid_combination(
            "Either AvailabilityZone or AvailabilityZoneId must be specified in the request, but not both.",
        ));
    }
    for (given, member) in [
        (o.key_name.is_some(), "Overrides.KeyName"),
        (
            o.block_device_mappings.is_some(),
            "Overrides.BlockDeviceMappings",
        ),
        (
            o.iam_instance_profile.is_some(),
            "Overrides.IamInstanceProfile",
        ),
        (o.metadata_options.is_some(), "Overrides.MetadataOptions"),
    ] {
        if given && !instant {
            return Err(instant_only(member));
        }
    }
    let weight = match o.weighted_capacity.map(|w| w.0) {
        None => 1.0,
        Some(w) if w.is_finite() && w > 0.0 => w,
        Some(w) => {
            return Err(ApiError::invalid_parameter(
                "WeightedCapacity",
                &w.to_string(),
                "The weighted capacity must be a number greater than 0.",
            ));
        }
    };
    if let Some(p) = o.priority.map(|p| p.0)
        && !(p.is_finite() && p >= 0.0)
    {
        return Err(ApiError::invalid_parameter(
            "Priority",
            &p.to_string(),
            "Valid values are whole numbers starting at 0.",
        ));
    }
    if let Some(p) = &o.max_price
        && !p
            .trim()
            .parse::<f64>()
            .is_ok_and(|v| v.is_finite() && v > 0.0)
    {
        return Err(ApiError::invalid_parameter(
            "MaxPrice",
            p,
            "The maximum price must be a number greater than 0 (USD per hour).",
        ));
    }
    if let Some(subnet) = &o.subnet_id {
        Kind::Subnet.get(&region.subnets, subnet)?;
    }
    let zone = match (&o.availability_zone, &o.availability_zone_id) {
        (None, None) => None,
        (name, id) => {
            let name = region.zone_named(name.as_deref(), id.as_deref())?;
            Some(name)
        }
    };
    let zone_id = zone_of(
        region,
        o.subnet_id.as_deref().or(probe.subnet_id.as_deref()),
        zone.as_deref(),
        o.placement
            .as_ref()
            .and_then(|p| p.availability_zone.as_deref()),
    );
    extra.key_name = o.key_name.clone();
    extra.block_devices = o.block_device_mappings.as_ref().map(|list| {
        list.iter()
            .map(|b| BlockDeviceMapping {
                device_name: b.device_name.clone(),
                virtual_name: b.virtual_name.clone(),
                no_device: b.no_device.clone(),
                ebs: b.ebs.as_ref().map(|e| EbsBlockDevice {
                    delete_on_termination: e.delete_on_termination,
                    iops: e.iops,
                    snapshot_id: e.snapshot_id.clone(),
                    volume_size: e.volume_size,
                    volume_type: e.volume_type,
                    kms_key_id: e.kms_key_id.clone(),
                    throughput: e.throughput,
                    encrypted: e.encrypted,
                    ..EbsBlockDevice::default()
                }),
            })
            .collect()
    });
    extra.profile = o
        .iam_instance_profile
        .as_ref()
        .map(|p| IamInstanceProfileSpecification {
            arn: p.arn.clone(),
            name: p.name.clone(),
        });
    extra.metadata = o
        .metadata_options
        .as_ref()
        .map(|m| InstanceMetadataOptionsRequest {
            http_tokens: m
                .http_tokens
                .and_then(|t| HttpTokensState::from_wire(t.as_str())),
            http_put_response_hop_limit: m.http_put_response_hop_limit,
            http_endpoint: m
                .http_endpoint
                .and_then(|e| InstanceMetadataEndpointState::from_wire(e.as_str())),
            http_protocol_ipv6: None,
            instance_metadata_tags: None,
        });
    let described = FleetLaunchTemplateOverrides {
        instance_type: o.instance_type,
        max_price: o.max_price.clone(),
        subnet_id: o.subnet_id.clone(),
        availability_zone: o.availability_zone.clone(),
        weighted_capacity: o.weighted_capacity,
        priority: o.priority,
        placement: o.placement.as_ref().map(|p| PlacementResponse {
            group_name: p.group_name.clone(),
        }),
        instance_requirements: None,
        image_id: o.image_id.clone(),
        block_device_mappings: None,
        availability_zone_id: o.availability_zone_id.clone(),
    };
    let pool = Pool {
        template: template.clone(),
        overrides: Some(described),
        weight,
        instance_type: o.instance_type.or(probe.instance_type),
        zone_id,
    };
    Ok((pool, extra))
}

/// The zone id of a launch into `subnet`, or into zone `zone` / `placement_zone` (names).
fn zone_of(
    region: &Region,
    subnet: Option<&str>,
    zone: Option<&str>,
    placement_zone: Option<&str>,
) -> Option<String> {
    if let Some(s) = subnet.and_then(|s| region.subnets.get(s)) {
        return Some(s.zone_id.clone());
    }
    zone.or(placement_zone)
        .and_then(|z| region.zone(z))
        .map(|z| z.id.clone())
}

/// A RunInstances request of nothing but the template.
fn bare_launch(template: &LaunchTemplateSpecification) -> RunInstancesRequest {
    RunInstancesRequest {
        launch_template: Some(template.clone()),
        ..instance::empty_launch()
    }
}

/// The price per unit of a pool for the order of `lowest-price`: unknown types last.
fn price_per_unit(region: &Region, pool: &Pool, spot: bool) -> f64 {
    let Some(t) = pool.instance_type else {
        return f64::MAX;
    };
    let price = if spot {
        let zone = pool
            .zone_id
            .clone()
            .or_else(|| region.usable_zones().next().map(|z| z.id.clone()))
            .unwrap_or_default();
        spot_price::current(region, t, &zone)
    } else {
        spot_price::on_demand(t, spot_price::LINUX_VPC)
    };
    price.map_or(f64::MAX, |p| p / pool.weight)
}

/// The pools in the order a lifecycle's allocation strategy takes them, and over how many
/// the capacity is spread.
fn order(region: &Region, f: &Fleet, spot: bool) -> (Vec<usize>, usize) {
    let mut pools: Vec<usize> = (0..f.pools.len()).collect();
    let by_priority = |a: &usize, b: &usize| {
        let p = |i: &usize| {
            f.pools
                .get(*i)
                .and_then(|p| p.overrides.as_ref())
                .and_then(|o| o.priority)
                .map_or(f64::MAX, |p| p.0)
        };
        p(a).total_cmp(&p(b))
    };
    let by_price = |a: &usize, b: &usize| {
        let p = |i: &usize| {
            f.pools
                .get(*i)
                .map_or(f64::MAX, |p| price_per_unit(region, p, spot))
        };
        p(a).total_cmp(&p(b))
    };
    if spot {
        let strategy = f
            .spot
            .allocation_strategy
            .unwrap_or(SpotAllocationStrategy::LowestPrice);
        match strategy {
            SpotAllocationStrategy::CapacityOptimizedPrioritized => pools.sort_by(by_priority),
            SpotAllocationStrategy::Diversified => {
                let n = pools.len();
                return (pools, n);
            }
            SpotAllocationStrategy::LowestPrice => {
                pools.sort_by(by_price);
                let n = f.spot.instance_pools_to_use_count.unwrap_or(1).max(1);
                let n = usize::try_from(n).unwrap_or(1).min(pools.len().max(1));
                return (pools, n);
            }
            _ => pools.sort_by(by_price),
        }
    } else {
        match f.on_demand.allocation_strategy {
            Some(FleetOnDemandAllocationStrategy::Prioritized) => pools.sort_by(by_priority),
            _ => pools.sort_by(by_price),
        }
    }
    (pools, 1)
}

/// The launch of `count` instances of pool `index`.
fn launch_request(
    f: &Fleet,
    index: usize,
    spot: bool,
    count: i32,
    extra: Option<&Extras>,
    tag_specs: &[TagSpecification],
) -> Option<RunInstancesRequest> {
    let pool = f.pools.get(index)?;
    let template = LaunchTemplateSpecification {
        launch_template_id: pool.template.launch_template_id.clone(),
        launch_template_name: pool.template.launch_template_name.clone(),
        version: pool.template.version.clone(),
    };
    let mut launch = bare_launch(&template);
    launch.min_count = 1;
    launch.max_count = count;
    if let Some(o) = &pool.overrides {
        launch.instance_type = o.instance_type;
        launch.subnet_id = o.subnet_id.clone();
        launch.image_id = o.image_id.clone();
        let zone = o.availability_zone.clone();
        let group = o.placement.as_ref().and_then(|p| p.group_name.clone());
        if zone.is_some() || o.availability_zone_id.is_some() || group.is_some() {
            launch.placement = Some(Placement {
                availability_zone: zone,
                availability_zone_id: o.availability_zone_id.clone(),
                group_name: group,
                affinity: None,
                partition_number: None,
                host_id: None,
                tenancy: None,
                spread_domain: None,
                host_resource_group_arn: None,
                group_id: None,
            });
        }
    }
    if let Some(e) = extra {
        launch.key_name = e.key_name.clone();
        launch.block_device_mappings = e.block_devices.clone();
        launch.iam_instance_profile = e.profile.clone();
        launch.metadata_options = e.metadata.clone();
        launch.user_data = e.user_data.clone();
    }
    if !tag_specs.is_empty() {
        launch.tag_specifications = Some(tag_specs.to_vec());
    }
    if spot {
        let behaviour = match f.spot.instance_interruption_behavior {
            Some(SpotInstanceInterruptionBehavior::Stop) => InstanceInterruptionBehavior::Stop,
            Some(SpotInstanceInterruptionBehavior::Hibernate) => {
                InstanceInterruptionBehavior::Hibernate
            }
            _ => InstanceInterruptionBehavior::Terminate,
        };
        launch.instance_market_options = Some(InstanceMarketOptionsRequest {
            market_type: Some(MarketType::Spot),
            spot_options: Some(SpotMarketOptions {
                max_price: pool.overrides.as_ref().and_then(|o| o.max_price.clone()),
                spot_instance_type: Some(SpotInstanceType::OneTime),
                block_duration_minutes: None,
                valid_until: None,
                instance_interruption_behavior: Some(behaviour),
            }),
        });
    }
    Some(launch)
}

/// Launches `units` of one lifecycle for fleet `f` (not in the table while it launches).
fn fill(
    region: &mut Region,
    f: &mut Fleet,
    spot: bool,
    units: f64,
    extras: &[Extras],
    tag_specs: &[TagSpecification],
) {
    if units <= 0.0 || f.pools.is_empty() {
        return;
    }
    let (order, spread) = order(region, f, spot);
    let single_type = if spot {
        f.spot.single_instance_type == Some(true)
    } else {
        f.on_demand.single_instance_type == Some(true)
    };
    let single_zone = if spot {
        f.spot.single_availability_zone == Some(true)
    } else {
        f.on_demand.single_availability_zone == Some(true)
    };
    let mut left = units;
    let mut failed: Vec<usize> = Vec::new();
    let mut first: Option<(InstanceType, String)> = None;
    // The first pass spreads over `spread` pools; a second takes what is left greedily.
    for pass in 0..2 {
        let mut slots = if pass == 0 { spread } else { 1 };
        for &index in &order {
            if left <= 1e-9 {
                return;
            }
            if failed.contains(&index) {
                continue;
            }
            let Some(pool) = f.pools.get(index) else {
                continue;
            };
            if let Some((t, zone)) = &first
                && ((single_type && pool.instance_type.is_some_and(|p| p != *t))
                    || (single_zone && pool.zone_id.as_ref().is_some_and(|z| z != zone)))
            {
                continue;
            }
            let share = left / slots.max(1) as f64;
            let count = (share / pool.weight).ceil().max(1.0);
            let count = if count > 1000.0 { 1000 } else { count as i32 };
            if spot && let Some(error) = price_refusal(region, pool) {
                f.errors
                    .push((index, spot, error.code.into_owned(), error.message));
                failed.push(index);
                continue;
            }
            let Some(launch) = launch_request(f, index, spot, count, extras.get(index), tag_specs)
            else {
                continue;
            };
            match instance::run_instances(region, launch) {
                Ok(reservation) => {
                    let ids: Vec<String> = reservation
                        .instances
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|i| i.instance_id)
                        .collect();
                    for id in &ids {
                        region.tags.set(id, FLEET_TAG.to_string(), f.id.clone());
                        f.members.insert(id.clone(), Member { pool: index, spot });
                        if first.is_none()
                            && let Some(i) = region.instances.get(id)
                            && let Some(z) = region.zone(&i.zone)
                        {
                            first = Some((i.instance_type, z.id.clone()));
                        }
                    }
                    left -= ids.len() as f64 * pool.weight;
                    f.launches.push((index, spot, ids));
                    if pass == 0 && slots > 1 {
                        slots -= 1;
                    }
                }
                Err(e) => {
                    f.errors.push((index, spot, e.code.into_owned(), e.message));
                    failed.push(index);
                }
            }
        }
        if spread <= 1 {
            return;
        }
    }
}

/// `SpotMaxPriceTooLow` when the pool's Spot price is above its maximum price.
fn price_refusal(region: &Region, pool: &Pool) -> Option<ApiError> {
    let max = pool.overrides.as_ref()?.max_price.as_deref()?;
    let max_value: f64 = max.trim().parse().ok()?;
    let t = pool.instance_type?;
    let zone = pool
        .zone_id
        .clone()
        .or_else(|| region.usable_zones().next().map(|z| z.id.clone()))?;
    let price = spot_price::current(region, t, &zone)?;
    (price > max_value).then(|| {
        ApiError::new(
            "SpotMaxPriceTooLow",
            format!(
                "Your Spot request price of {max} is lower than the minimum required Spot request fulfillment price of {}.",
                spot_price::shown(price).trim_end_matches('0')
            ),
        )
    })
}

/// The most target capacity one fleet takes (AWS's quota of target capacity per EC2 Fleet).
const MAX_TARGET: i32 = 10_000;

/// The target a request asks for, split by lifecycle.
fn target_of(
    spec: &crate::generated::ec2::TargetCapacitySpecificationRequest,
    instant: bool,
) -> Result<Target, ApiError> {
    if spec
        .target_capacity_unit_type
        .is_some_and(|u| u != TargetCapacityUnitType::Units)
    {
        return Err(not_implemented(
            "TargetCapacityUnitType other than units (it needs InstanceRequirements)",
        ));
    }
    let Some(default) = spec.default_target_capacity_type else {
        return Err(ApiError::missing_parameter(
            "TargetCapacitySpecification.DefaultTargetCapacityType",
        ));
    };
    if !matches!(
        default,
        DefaultTargetCapacityType::Spot | DefaultTargetCapacityType::OnDemand
    ) {
        return Err(not_implemented(&format!(
            "DefaultTargetCapacityType {}",
            default.as_str()
        )));
    }
    let total = spec.total_target_capacity;
    if total > MAX_TARGET {
        return Err(ApiError::invalid_parameter(
            "TotalTargetCapacity",
            &total.to_string(),
            &format!("The target capacity of an EC2 Fleet is at most {MAX_TARGET}."),
        ));
    }
    let minimum = i32::from(instant);
    let on_demand = spec.on_demand_target_capacity.unwrap_or(0);
    let spot = spec.spot_target_capacity.unwrap_or(0);
    if total < minimum || on_demand < 0 || spot < 0 {
        return Err(ApiError::invalid_parameter(
            "TotalTargetCapacity",
            &total.to_string(),
            &format!("The target capacity must be at least {minimum}, and no part of it negative."),
        ));
    }
    let rest = total - on_demand - spot;
    if rest < 0 {
        return Err(ApiError::invalid_combination(format!(
            "The On-Demand ({on_demand}) and Spot ({spot}) target capacities exceed the total target capacity ({total})."
        )));
    }
    Ok(match default {
        DefaultTargetCapacityType::OnDemand => Target {
            total,
            on_demand: on_demand + rest,
            spot,
            default,
        },
        _ => Target {
            total,
            on_demand,
            spot: spot + rest,
            default,
        },
    })
}

/// `CreateFleet`; the same ClientToken with the same request answers the same fleet.
pub fn create_fleet(
    region: &mut Region,
    mut input: CreateFleetRequest,
) -> Result<CreateFleetResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateFleet", token.as_deref(), &print)?
        && let Some(f) = region.fleets.get(&id)
    {
        return Ok(created(region, f));
    }
    let fleet_type = input.r#type.unwrap_or(FleetType::Maintain);
    let instant = fleet_type == FleetType::Instant;
    let target = target_of(&input.target_capacity_specification, instant)?;
    let spot_in = input.spot_options.take();
    let on_demand_in = input.on_demand_options.take();
    for (given, member) in [
        (
            spot_in
                .as_ref()
                .is_some_and(|s| s.min_target_capacity.is_some()),
            "SpotOptions.MinTargetCapacity",
        ),
        (
            spot_in
                .as_ref()
                .is_some_and(|s| s.single_instance_type.is_some()),
            "SpotOptions.SingleInstanceType",
        ),
        (
            spot_in
                .as_ref()
                .is_some_and(|s| s.single_availability_zone.is_some()),
            "SpotOptions.SingleAvailabilityZone",
        ),
        (
            on_demand_in
                .as_ref()
                .is_some_and(|s| s.min_target_capacity.is_some()),
            "OnDemandOptions.MinTargetCapacity",
        ),
        (
            on_demand_in
                .as_ref()
                .is_some_and(|s| s.single_instance_type.is_some()),
            "OnDemandOptions.SingleInstanceType",
        ),
        (
            on_demand_in
                .as_ref()
                .is_some_and(|s| s.single_availability_zone.is_some()),
            "OnDemandOptions.SingleAvailabilityZone",
        ),
        (
            on_demand_in
                .as_ref()
                .is_some_and(|s| s.capacity_reservation_options.is_some()),
            "OnDemandOptions.CapacityReservationOptions",
        ),
    ] {
        if given && !instant {
            return Err(instant_only(member));
        }
    }
    if on_demand_in
        .as_ref()
        .is_some_and(|s| s.capacity_reservation_options.is_some())
    {
        return Err(not_implemented(
            "OnDemandOptions.CapacityReservationOptions",
        ));
    }
    if spot_in
        .as_ref()
        .is_some_and(|s| s.maintenance_strategies.is_some())
    {
        return Err(not_implemented("SpotOptions.MaintenanceStrategies"));
    }
    if input.excess_capacity_termination_policy.is_some() && fleet_type != FleetType::Maintain {
        return Err(ApiError::invalid_combination(
            "ExcessCapacityTerminationPolicy is supported only for fleets of type maintain.",
        ));
    }
    if input.replace_unhealthy_instances == Some(true) && fleet_type != FleetType::Maintain {
        return Err(ApiError::invalid_combination(
            "ReplaceUnhealthyInstances is supported only for fleets of type maintain.",
        ));
    }
    let now = region.clock.now_datetime();
    if let Some(t) = input.valid_until
        && t.secs() <= now.secs()
    {
        return Err(ApiError::invalid_parameter(
            "ValidUntil",
            &crate::protocol::xml::format_timestamp(t),
            "The end of the request's validity must be in the future.",
        ));
    }
    // Tags: the fleet's; an instant fleet's instances, volumes and interfaces too.
    let allowed: &[ResourceType] = if instant {
        &[
            ResourceType::Fleet,
            ResourceType::Instance,
            ResourceType::Volume,
            ResourceType::NetworkInterface,
        ]
    } else {
        &[ResourceType::Fleet]
    };
    let tagged = tags::from_specs_for(input.tag_specifications.as_deref(), allowed)?;
    let launch_tags: Vec<TagSpecification> = input
        .tag_specifications
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.resource_type != Some(ResourceType::Fleet))
        .collect();
    let (configs, pools, extras) = pools_of(region, &mut input, instant)?;
    let strategy = spot_in.as_ref().and_then(|s| s.allocation_strategy);
    let spot = SpotOptions {
        allocation_strategy: Some(strategy.unwrap_or(SpotAllocationStrategy::LowestPrice)),
        maintenance_strategies: None,
        instance_interruption_behavior: Some(
            spot_in
                .as_ref()
                .and_then(|s| s.instance_interruption_behavior)
                .unwrap_or(SpotInstanceInterruptionBehavior::Terminate),
        ),
        instance_pools_to_use_count: match strategy {
            None | Some(SpotAllocationStrategy::LowestPrice) => Some(
                spot_in
                    .as_ref()
                    .and_then(|s| s.instance_pools_to_use_count)
                    .unwrap_or(1),
            ),
            _ => None,
        },
        single_instance_type: spot_in.as_ref().and_then(|s| s.single_instance_type),
        single_availability_zone: spot_in.as_ref().and_then(|s| s.single_availability_zone),
        min_target_capacity: spot_in.as_ref().and_then(|s| s.min_target_capacity),
        max_total_price: spot_in.as_ref().and_then(|s| s.max_total_price.clone()),
    };
    if let Some(n) = spot_in.as_ref().and_then(|s| s.instance_pools_to_use_count)
        && n < 1
    {
        return Err(ApiError::invalid_parameter(
            "InstancePoolsToUseCount",
            &n.to_string(),
            "The number of Spot pools must be at least 1.",
        ));
    }
    let on_demand = OnDemandOptions {
        allocation_strategy: Some(
            on_demand_in
                .as_ref()
                .and_then(|s| s.allocation_strategy)
                .unwrap_or(FleetOnDemandAllocationStrategy::LowestPrice),
        ),
        capacity_reservation_options: None,
        single_instance_type: on_demand_in.as_ref().and_then(|s| s.single_instance_type),
        single_availability_zone: on_demand_in
            .as_ref()
            .and_then(|s| s.single_availability_zone),
        min_target_capacity: on_demand_in.as_ref().and_then(|s| s.min_target_capacity),
        max_total_price: on_demand_in
            .as_ref()
            .and_then(|s| s.max_total_price.clone()),
    };
    for (minimum, wanted) in [
        (spot.min_target_capacity, target.spot),
        (on_demand.min_target_capacity, target.on_demand),
    ] {
        if let Some(m) = minimum
            && (m < 0 || m > wanted || m > 1000)
        {
            return Err(ApiError::invalid_parameter(
                "MinTargetCapacity",
                &m.to_string(),
                "The minimum target capacity must be between 0 and the target capacity of its purchasing option (at most 1000).",
            ));
        }
    }
    let id = new_id(region);
    let mut fleet = Fleet {
        id: id.clone(),
        fleet_type,
        client_token: token.clone(),
        created: now,
        configs,
        pools,
        target,
        spot,
        on_demand,
        excess: input
            .excess_capacity_termination_policy
            .unwrap_or(FleetExcessCapacityTerminationPolicy::Termination),
        terminate_with_expiration: input.terminate_instances_with_expiration == Some(true),
        replace_unhealthy: input.replace_unhealthy_instances == Some(true),
        valid_until: input.valid_until,
        members: BTreeMap::new(),
        launches: Vec::new(),
        errors: Vec::new(),
        state: FleetStateCode::Active,
    };
    if let Some(short) = short_of_minimum(region, &fleet) {
        // What the pools could give falls short of a minimum: nothing launches.
        fleet.errors.push(short);
    } else {
        let extras: &[Extras] = if instant { &extras } else { &[] };
        let target = fleet.target;
        fill(
            region,
            &mut fleet,
            false,
            f64::from(target.on_demand),
            extras,
            &launch_tags,
        );
        fill(
            region,
            &mut fleet,
            true,
            f64::from(target.spot),
            extras,
            &launch_tags,
        );
    }
    if let Some(t) = tagged.get(&ResourceType::Fleet) {
        region.tags.insert(&id, t.clone());
    }
    region
        .ledger
        .record("CreateFleet", token.as_deref(), &print, &id);
    let out = created(region, &fleet);
    region.fleets.0.insert(id, fleet);
    Ok(out)
}

/// The failure of an instant fleet whose minimum target capacity its pools cannot reach (the
/// capacity the region has room for, and Spot prices within the maximum prices), checked
/// before anything launches.
fn short_of_minimum(region: &Region, f: &Fleet) -> Option<(usize, bool, String, String)> {
    for (minimum, spot) in [
        (f.on_demand.min_target_capacity, false),
        (f.spot.min_target_capacity, true),
    ] {
        let Some(m) = minimum.filter(|m| *m > 0) else {
            continue;
        };
        let live = region.instances.values().filter(|i| !i.is_gone()).count();
        let room = region.limits.instances.saturating_sub(live) as f64;
        let best = f
            .pools
            .iter()
            .filter(|p| !spot || price_refusal(region, p).is_none())
            .map(|p| p.weight)
            .fold(0.0, f64::max);
        if best * room < f64::from(m) {
            return Some((
                0,
                spot,
                "UnfulfillableCapacity".to_string(),
                format!(
                    "Unable to fulfill capacity due to your request configuration. The minimum target capacity of {m} cannot be reached."
                ),
            ));
        }
    }
    None
}

fn created(region: &Region, f: &Fleet) -> CreateFleetResult {
    if f.fleet_type != FleetType::Instant {
        return CreateFleetResult {
            fleet_id: Some(f.id.clone()),
            errors: None,
            instances: None,
        };
    }
    CreateFleetResult {
        fleet_id: Some(f.id.clone()),
        errors: Some(
            f.errors
                .iter()
                .filter_map(|(pool, spot, code, message)| {
                    Some(CreateFleetError {
                        launch_template_and_overrides: Some(template_and_overrides(
                            f.pools.get(*pool)?,
                        )),
                        lifecycle: Some(lifecycle(*spot)),
                        error_code: Some(code.clone()),
                        error_message: Some(message.clone()),
                    })
                })
                .collect(),
        ),
        instances: Some(
            f.launches
                .iter()
                .filter_map(|(pool, spot, ids)| {
                    let p = f.pools.get(*pool)?;
                    let first = ids.first().and_then(|id| region.instances.get(id));
                    Some(CreateFleetInstance {
                        launch_template_and_overrides: Some(template_and_overrides(p)),
                        lifecycle: Some(lifecycle(*spot)),
                        instance_ids: Some(ids.clone()),
                        instance_type: first.map(|i| i.instance_type),
                        platform: None,
                        availability_zone: first.map(|i| i.zone.clone()),
                        availability_zone_id: first
                            .and_then(|i| region.zone(&i.zone))
                            .map(|z| z.id.clone()),
                        subnet_id: first.map(|i| i.subnet_id.clone()),
                    })
                })
                .collect(),
        ),
    }
}

/// A fleet by id, checked as DescribeFleetInstances and ModifyFleet check it.
fn get<'a>(region: &'a Region, id: &str) -> Result<&'a Fleet, ApiError> {
    if !is_well_formed(id) {
        return Err(Kind::Fleet.malformed(id));
    }
    region
        .fleets
        .get(id)
        .ok_or_else(|| Kind::Fleet.not_found(&[id]))
}

/// `DescribeFleets`: instant fleets only when named.
pub fn describe_fleets(
    region: &Region,
    input: DescribeFleetsRequest,
) -> Result<DescribeFleetsResult, ApiError> {
    page::check_max_results(input.max_results, 1, 1000)?;
    let filters = Filters::parse::<(&Fleet, &Region)>(input.filters)?;
    let named = input.fleet_ids.filter(|ids| !ids.is_empty());
    let found: Vec<&Fleet> = match &named {
        Some(ids) => {
            let mut out = Vec::new();
            for id in ids {
                let f = get(region, id)?;
                if !out.iter().any(|o: &&Fleet| o.id == f.id) {
                    out.push(f);
                }
            }
            out.sort_by(|a, b| a.id.cmp(&b.id));
            out
        }
        None => region
            .fleets
            .values()
            .filter(|f| f.fleet_type != FleetType::Instant)
            .collect(),
    };
    let found: Vec<&Fleet> = found
        .into_iter()
        .filter(|f| filters.matches(&(*f, region), region.tags.get(&f.id)))
        .collect();
    let (items, next) = page::page(
        found,
        |f| f.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeFleetsResult {
        fleets: Some(items.into_iter().map(|f| render(region, f)).collect()),
        next_token: next,
    })
}

struct Active<'a> {
    id: &'a str,
    instance_type: InstanceType,
    spot_request: Option<String>,
}

impl Filterable for Active<'_> {
    const NAMES: &'static [&'static str] = &["instance-type"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "instance-type" => one(self.instance_type.as_str()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeFleetInstances`: the running (and pending) instances of a request or maintain
/// fleet.
pub fn describe_fleet_instances(
    region: &Region,
    input: DescribeFleetInstancesRequest,
) -> Result<DescribeFleetInstancesResult, ApiError> {
    page::check_max_results(input.max_results, 1, 1000)?;
    let filters = Filters::parse::<Active>(input.filters)?;
    let f = get(region, &input.fleet_id)?;
    if f.fleet_type == FleetType::Instant {
        return Err(ApiError::invalid_parameter(
            "FleetId",
            &f.id,
            "DescribeFleetInstances does not support fleets of type instant: use DescribeFleets.",
        ));
    }
    let found: Vec<Active> = f
        .members
        .keys()
        .filter(|id| live(region, id))
        .filter_map(|id| {
            let i = region.instances.get(id)?;
            Some(Active {
                id,
                instance_type: i.instance_type,
                spot_request: i.spot_request.clone(),
            })
        })
        .filter(|a| filters.matches(a, None))
        .collect();
    let (items, next) = page::page(
        found,
        |a| a.id,
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeFleetInstancesResult {
        active_instances: Some(
            items
                .into_iter()
                .map(|a| ActiveInstance {
                    instance_id: Some(a.id.to_string()),
                    instance_type: Some(a.instance_type.as_str().to_string()),
                    spot_instance_request_id: a.spot_request,
                    instance_health: Some(InstanceHealthStatus::Healthy),
                })
                .collect(),
        ),
        next_token: next,
        fleet_id: Some(f.id.clone()),
    })
}

/// `ModifyFleet`: a maintain fleet's target and excess capacity policy; the fleet is
/// `modifying` until the clock's next step applies the change.
pub fn modify_fleet(
    region: &mut Region,
    input: ModifyFleetRequest,
) -> Result<ModifyFleetResult, ApiError> {
    let f = get(region, &input.fleet_id)?;
    if f.fleet_type != FleetType::Maintain {
        return Err(ApiError::new(
            "InvalidFleetConfig",
            format!(
                "You can only modify an EC2 Fleet request of type maintain; {} is of type {}.",
                f.id,
                f.fleet_type.as_str()
            ),
        ));
    }
    if !matches!(f.state, FleetStateCode::Active | FleetStateCode::Modifying) {
        return Err(ApiError::new(
            "IncorrectState",
            format!("The fleet {} is {}.", f.id, f.state.as_str()),
        ));
    }
    let target = match &input.target_capacity_specification {
        Some(spec) => {
            let mut spec = spec.clone();
            if spec.default_target_capacity_type.is_none() {
                spec.default_target_capacity_type = Some(f.target.default);
            }
            Some(target_of(&spec, false)?)
        }
        None => None,
    };
    if target.is_none() && input.excess_capacity_termination_policy.is_none() {
        return Err(ApiError::missing_parameter("TargetCapacitySpecification"));
    }
    let id = f.id.clone();
    if let Some(f) = region.fleets.0.get_mut(&id) {
        if let Some(t) = target {
            f.target = t;
        }
        if let Some(p) = input.excess_capacity_termination_policy {
            f.excess = p;
        }
        f.state = FleetStateCode::Modifying;
    }
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::Fleet, &id);
    Ok(ModifyFleetResult {
        r#return: Some(true),
    })
}

/// Fleet `id`'s instance shut down: a maintain fleet makes up its capacity at the clock's
/// next step.
pub fn member_gone(region: &mut Region, id: &str) {
    if region
        .fleets
        .get(id)
        .is_some_and(|f| f.fleet_type == FleetType::Maintain && f.state == FleetStateCode::Active)
    {
        let now = region.clock.now();
        region.transitions.schedule(now, Subject::Fleet, id);
    }
}

/// The clock's step of a maintain fleet: launches what it lacks of each lifecycle's target;
/// with the `termination` policy, terminates what exceeds it, the highest price per unit
/// first.
pub fn advance(region: &mut Region, id: &str) {
    let Some(mut f) = region.fleets.0.remove(id) else {
        return;
    };
    if f.fleet_type == FleetType::Maintain
        && matches!(f.state, FleetStateCode::Active | FleetStateCode::Modifying)
    {
        let still_valid = f
            .valid_until
            .is_none_or(|t| region.clock.now_datetime().secs() < t.secs());
        for spot in [false, true] {
            let wanted = f64::from(if spot {
                f.target.spot
            } else {
                f.target.on_demand
            });
            let mut have: Vec<(String, f64)> = f
                .members
                .iter()
                .filter(|(i, m)| m.spot == spot && live(region, i))
                .map(|(i, m)| (i.clone(), f.weight(m)))
                .collect();
            let units: f64 = have.iter().map(|(_, w)| w).sum();
            if units < wanted && still_valid {
                fill(region, &mut f, spot, wanted - units, &[], &[]);
            } else if units > wanted
                && f.excess == FleetExcessCapacityTerminationPolicy::Termination
            {
                // The most expensive per unit first, then the newest.
                have.sort_by(|a, b| {
                    let price = |(i, _): &(String, f64)| {
                        f.members
                            .get(i)
                            .and_then(|m| f.pools.get(m.pool))
                            .map_or(0.0, |p| price_per_unit(region, p, spot))
                    };
                    price(b).total_cmp(&price(a)).then(b.0.cmp(&a.0))
                });
                let mut excess = units - wanted;
                let mut gone = Vec::new();
                for (i, w) in have {
                    if excess < w - 1e-9 {
                        continue;
                    }
                    excess -= w;
                    gone.push(i);
                }
                terminate(region, gone);
            }
        }
        f.state = FleetStateCode::Active;
    }
    region.fleets.0.insert(id.to_string(), f);
}

fn terminate(region: &mut Region, ids: Vec<String>) {
    if ids.is_empty() {
        return;
    }
    // A protected instance keeps running, as it would for the user.
    let ids: Vec<String> = ids
        .into_iter()
        .filter(|i| {
            region
                .instances
                .get(i)
                .is_some_and(|x| !x.disable_api_termination)
        })
        .collect();
    if ids.is_empty() {
        return;
    }
    let _ = instance::terminate_instances(
        region,
        TerminateInstancesRequest {
            instance_ids: ids,
            dry_run: None,
            skip_os_shutdown: None,
        },
    );
}

/// The most fleets of type instant, and of the other types, one DeleteFleets takes.
const MAX_INSTANT_DELETES: usize = 25;
const MAX_OTHER_DELETES: usize = 100;

/// `DeleteFleets`.
pub fn delete_fleets(
    region: &mut Region,
    input: DeleteFleetsRequest,
) -> Result<DeleteFleetsResult, ApiError> {
    if input.fleet_ids.is_empty() {
        return Err(ApiError::missing_parameter("FleetIds"));
    }
    let mut ids: Vec<String> = Vec::new();
    for id in input.fleet_ids {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let instant = ids
        .iter()
        .filter(|i| {
            region
                .fleets
                .get(i.as_str())
                .is_some_and(|f| f.fleet_type == FleetType::Instant)
        })
        .count();
    if instant > MAX_INSTANT_DELETES || ids.len() - instant > MAX_OTHER_DELETES {
        return Err(ApiError::invalid_parameter(
            "FleetIds",
            &ids.len().to_string(),
            &format!(
                "You can delete up to {MAX_INSTANT_DELETES} fleets of type instant and up to {MAX_OTHER_DELETES} fleets of type maintain or request in a single request."
            ),
        ));
    }
    if !input.terminate_instances && instant > 0 {
        return Err(ApiError::invalid_combination(
            "For instant fleets, you cannot specify NoTerminateInstances: a deleted instant fleet with running instances is not supported.",
        ));
    }
    let mut done = Vec::new();
    let mut failed = Vec::new();
    let refusal = |id: &str, code: DeleteFleetErrorCode, message: String| DeleteFleetErrorItem {
        error: Some(DeleteFleetError {
            code: Some(code),
            message: Some(message),
        }),
        fleet_id: Some(id.to_string()),
    };
    for id in ids {
        if !is_well_formed(&id) {
            failed.push(refusal(
                &id,
                DeleteFleetErrorCode::FleetIdMalformed,
                format!("The fleet ID '{id}' is malformed"),
            ));
            continue;
        }
        let Some(f) = region.fleets.get(&id) else {
            failed.push(refusal(
                &id,
                DeleteFleetErrorCode::FleetIdDoesNotExist,
                format!("The fleet ID '{id}' does not exist"),
            ));
            continue;
        };
        let previous = f.shown_state(region);
        if !matches!(previous, FleetStateCode::Active | FleetStateCode::Modifying) {
            failed.push(refusal(
                &id,
                DeleteFleetErrorCode::FleetNotInDeletableState,
                format!(
                    "The fleet {id} is {} and cannot be deleted",
                    previous.as_str()
                ),
            ));
            continue;
        }
        let members: Vec<String> = f.members.keys().cloned().collect();
        let current = if input.terminate_instances {
            FleetStateCode::DeletedTerminating
        } else {
            FleetStateCode::DeletedRunning
        };
        if let Some(f) = region.fleets.0.get_mut(&id) {
            f.state = current;
        }
        if input.terminate_instances {
            let live: Vec<String> = members.into_iter().filter(|i| live(region, i)).collect();
            terminate(region, live);
        }
        done.push(DeleteFleetSuccessItem {
            current_fleet_state: Some(current),
            previous_fleet_state: Some(previous),
            fleet_id: Some(id),
        });
    }
    Ok(DeleteFleetsResult {
        successful_fleet_deletions: Some(done),
        unsuccessful_fleet_deletions: Some(failed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_ids_are_uuid_shaped() {
        assert!(is_well_formed("fleet-12a34b55-67cd-8ef9-ba9b-9208d0e5a4b1"));
        assert!(!is_well_formed("fleet-12a34b55"));
        assert!(!is_well_formed(
            "fleet-12a34b55-67cd-8ef9-ba9b-9208dEXAMPLX"
        ));
        assert!(!is_well_formed("sfr-12a34b55-67cd-8ef9-ba9b-9208d0e5a4b1"));
    }
}
