//! On-Demand Capacity Reservations: CreateCapacityReservation, DescribeCapacityReservations,
//! ModifyCapacityReservation, CancelCapacityReservation, GetCapacityReservationUsage, and the
//! reservation each instance of a launch or a start runs in ([`for_launch`], [`for_start`]).
//! ModifyInstanceCapacityReservationAttributes lives beside the instance settings it changes
//! (`crate::ec2::instance`), and checks a target here ([`target`]).
//!
//! - A reservation holds capacity for `InstanceCount` (1 to 1000) instances of one type,
//!   platform, zone and tenancy (`default` or `dedicated`); it is `active` at once (the fake
//!   serves no future-dated reservations), until it is cancelled, or until its `EndDate` when
//!   its `EndDateType` is `limited` (then `expired`, on the region's clock). A `limited` one
//!   needs an `EndDate` in the future; an `unlimited` one takes none. Cancelled and expired
//!   reservations stay listed, with no available capacity.
//! - An instance that is not stopped or terminated holds one of its reservation's instances:
//!   `AvailableInstanceCount` is the total less those. A stopped instance holds nothing; it
//!   takes its place again when it starts (`ReservationCapacityExceeded` when a reservation it
//!   targets is full, as at launch).
//! - A launch's `CapacityReservationSpecification`: a `CapacityReservationTarget` runs every
//!   instance in that reservation (`active`, of the launch's type, platform, zone and tenancy,
//!   with room for at least `MinCount`: else `ReservationCapacityExceeded`); with no subnet or
//!   zone named, the launch goes to the reservation's zone. Preference `open` (the default)
//!   fills the `open` reservations that match, in id order, and runs the rest On-Demand;
//!   `capacity-reservations-only` runs only in matching `open` reservations (fewer than
//!   `MinCount`: `InsufficientInstanceCapacity`); `none` never uses one. A target with a
//!   preference other than `capacity-reservations-only` is `InvalidParameterCombination`, as
//!   the model documents; Spot Instances run in no reservation (a Spot launch that targets one
//!   is `InvalidParameterCombination`).
//! - Every image the fake holds is `Linux/UNIX`: a reservation of another platform matches no
//!   launch.
//! - ModifyCapacityReservation changes an active reservation's count (not below the instances
//!   running in it), its end, and (while no instance uses it) its match criteria;
//!   ModifyInstanceCapacityReservationAttributes changes a stopped instance's preference or
//!   target. An idempotent CreateCapacityReservation (`ClientToken`) answers the reservation
//!   the first call made.
//!
//! The API reference documents no error for a cancel or modify of a reservation that is no
//! longer active, nor for a launch into one: the fake answers `IncorrectState` for the first
//! and `InvalidParameterValue` for the second; a launch whose type, zone or tenancy does not
//! match its target is `InvalidParameterValue`.

use std::collections::BTreeMap;
use std::time::SystemTime;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::instance::{Instance, LaunchOptions};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    CancelCapacityReservationRequest, CancelCapacityReservationResult, CapacityReservation as Out,
    CapacityReservationInstancePlatform as Platform, CapacityReservationPreference as Preference,
    CapacityReservationSpecification, CapacityReservationState as State,
    CapacityReservationTenancy, CapacityReservationType, CreateCapacityReservationRequest,
    CreateCapacityReservationResult, DescribeCapacityReservationsRequest,
    DescribeCapacityReservationsResult, EndDateType, GetCapacityReservationUsageRequest,
    GetCapacityReservationUsageResult, InstanceMatchCriteria, InstanceStateName, InstanceType,
    InstanceUsage, ModifyCapacityReservationRequest, ModifyCapacityReservationResult, ResourceType,
    Tenancy,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// Capacity Reservations by id.
    CapacityReservations of Reservation
}

/// The most instances one reservation holds, and one modification adds or removes.
const MAX_INSTANCES: i32 = 1000;

/// One Capacity Reservation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Reservation {
    /// `cr-...`.
    pub id: String,
    /// The instance type it holds capacity for.
    pub instance_type: String,
    /// The platform.
    pub platform: Platform,
    /// Its zone's name.
    pub zone: String,
    /// `default` or `dedicated`.
    pub tenancy: CapacityReservationTenancy,
    /// How many instances it holds capacity for.
    pub total: i32,
    /// EBS optimisation.
    pub ebs_optimized: bool,
    /// Instance store (deprecated by AWS; kept as asked).
    pub ephemeral_storage: bool,
    /// `active`, `cancelled` or `expired`.
    pub state: State,
    /// When it was created (and started).
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// When it ends, for a `limited` one.
    #[serde(default, with = "crate::state::with::time_opt")]
    pub end_date: Option<DateTime>,
    /// `open` or `targeted`.
    pub criteria: InstanceMatchCriteria,
    /// The ClientToken it was created with.
    pub client_token: Option<String>,
    /// The account that owns it.
    pub owner: String,
}

impl Reservation {
    fn is_active(&self) -> bool {
        self.state == State::Active
    }

    fn end_date_type(&self) -> EndDateType {
        if self.end_date.is_some() {
            EndDateType::Limited
        } else {
            EndDateType::Unlimited
        }
    }

    /// Whether an instance of type `t`, tenancy `tenancy` in `zone` runs in it.
    fn fits(&self, t: InstanceType, zone: &str, tenancy: Tenancy) -> bool {
        self.instance_type == t.as_str()
            && self.platform == Platform::LinuxUNIX
            && self.zone == zone
            && self.tenancy.as_str() == tenancy.as_str()
    }
}

/// Whether an instance in `state` holds its reservation's capacity.
fn holds(state: InstanceStateName) -> bool {
    !matches!(
        state,
        InstanceStateName::Stopped | InstanceStateName::Terminated
    )
}

/// How many instances run in each reservation: the region's instances read once per call,
/// however many reservations it reads.
#[derive(Default)]
struct Usage(BTreeMap<String, i32>);

impl Usage {
    fn of(region: &Region) -> Usage {
        let mut usage = Usage::default();
        for i in region.instances.values().filter(|i| holds(i.state)) {
            if let Some(id) = &i.capacity_reservation {
                usage.take(id);
            }
        }
        usage
    }

    /// How many instances run in reservation `id`.
    fn used(&self, id: &str) -> i32 {
        self.0.get(id).copied().unwrap_or(0)
    }

    /// How many more instances reservation `r` takes.
    fn available(&self, r: &Reservation) -> i32 {
        if r.is_active() {
            (r.total - self.used(&r.id)).max(0)
        } else {
            0
        }
    }

    /// One more instance in reservation `id`.
    fn take(&mut self, id: &str) {
        *self.0.entry(id.to_string()).or_default() += 1;
    }
}

fn render(region: &Region, usage: &Usage, r: &Reservation) -> Out {
    Out {
        capacity_reservation_id: Some(r.id.clone()),
        owner_id: Some(region.account_id.clone()),
        capacity_reservation_arn: Some(format!(
            "arn:aws:ec2:{}:{}:capacity-reservation/{}",
            region.name, region.account_id, r.id
        )),
        availability_zone_id: region.zone(&r.zone).map(|z| z.id.clone()),
        instance_type: Some(r.instance_type.clone()),
        instance_platform: Some(r.platform),
        availability_zone: Some(r.zone.clone()),
        tenancy: Some(r.tenancy),
        total_instance_count: Some(r.total),
        available_instance_count: Some(usage.available(r)),
        ebs_optimized: Some(r.ebs_optimized),
        ephemeral_storage: Some(r.ephemeral_storage),
        state: Some(r.state),
        start_date: Some(r.created),
        end_date: r.end_date,
        end_date_type: Some(r.end_date_type()),
        instance_match_criteria: Some(r.criteria),
        create_date: Some(r.created),
        tags: Some(region.tags.tag_set(&r.id).unwrap_or_default()),
        capacity_allocations: Some(Vec::new()),
        reservation_type: Some(CapacityReservationType::Default),
        ..Default::default()
    }
}

impl Filterable for Reservation {
    const NAMES: &'static [&'static str] = &[
        "availability-zone",
        "end-date",
        "end-date-type",
        "instance-match-criteria",
        "instance-platform",
        "instance-type",
        "outpost-arn",
        "owner-id",
        "placement-group-arn",
        "start-date",
        "state",
        "tenancy",
    ];
    const NEVER_SET: &'static [&'static str] = &["outpost-arn", "placement-group-arn"];

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "availability-zone" => one(self.zone.clone()),
            "end-date" => self.end_date.map(format_timestamp).into_iter().collect(),
            "end-date-type" => one(self.end_date_type().as_str()),
            "instance-match-criteria" => one(self.criteria.as_str()),
            "instance-platform" => one(self.platform.as_str()),
            "instance-type" => one(self.instance_type.clone()),
            "start-date" => one(format_timestamp(self.created)),
            "state" => one(self.state.as_str()),
            "tenancy" => one(self.tenancy.as_str()),
            "owner-id" => one(self.owner.clone()),
            _ => Vec::new(),
        }
    }
}

/// The end of a reservation from `EndDateType` and `EndDate`, checked: `limited` needs a date
/// in the future, `unlimited` (the default) takes none.
fn end_date(
    now: DateTime,
    kind: Option<EndDateType>,
    date: Option<DateTime>,
) -> Result<Option<DateTime>, ApiError> {
    match (kind.unwrap_or(EndDateType::Unlimited), date) {
        (EndDateType::Unlimited, None) => Ok(None),
        (EndDateType::Unlimited, Some(_)) => Err(ApiError::invalid_combination(
            "EndDate cannot be specified when EndDateType is unlimited.",
        )),
        (EndDateType::Limited, None) => Err(ApiError::missing_parameter("EndDate")),
        (EndDateType::Limited, Some(d)) if d.secs() <= now.secs() => {
            Err(ApiError::invalid_parameter(
                "EndDate",
                &format_timestamp(d),
                "EndDate must be in the future.",
            ))
        }
        (EndDateType::Limited, Some(d)) => Ok(Some(d)),
    }
}

fn check_count(n: i32) -> Result<(), ApiError> {
    if (1..=MAX_INSTANCES).contains(&n) {
        Ok(())
    } else {
        Err(ApiError::invalid_parameter(
            "InstanceCount",
            &n.to_string(),
            "InstanceCount must be between 1 and 1000.",
        ))
    }
}

/// Schedules the expiry of reservation `id` at `end`.
fn schedule_expiry(region: &mut Region, id: &str, end: DateTime) {
    let at = SystemTime::try_from(end).unwrap_or_else(|_| region.clock.now());
    region
        .transitions
        .schedule_at(at, Subject::CapacityReservationExpiry, id);
}

/// `CreateCapacityReservation`.
pub fn create_capacity_reservation(
    region: &mut Region,
    mut input: CreateCapacityReservationRequest,
) -> Result<CreateCapacityReservationResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateCapacityReservation", token.as_deref(), &print)?
    {
        let r = Kind::CapacityReservation.get(&region.capacity_reservations, &id)?;
        return Ok(CreateCapacityReservationResult {
            capacity_reservation: Some(render(region, &Usage::of(region), r)),
        });
    }
    let t = InstanceType::from_wire(&input.instance_type)
        .filter(|t| crate::ec2::instance_type::vcpus(*t).is_some())
        .ok_or_else(|| {
            ApiError::invalid_parameter(
                "InstanceType",
                &input.instance_type,
                "The instance type is not one fakeaws describes.",
            )
        })?;
    let zone = region.zone_named(
        input.availability_zone.as_deref(),
        input.availability_zone_id.as_deref(),
    )?;
    check_count(input.instance_count)?;
    // AWS's dates of a reservation carry whole seconds.
    let now = DateTime::from_secs(region.clock.now_datetime().secs());
    let end = end_date(now, input.end_date_type, input.end_date)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::CapacityReservation,
    )?;
    let r = Reservation {
        id: region.ids.resource(Kind::CapacityReservation.prefix()),
        instance_type: t.as_str().to_string(),
        platform: input.instance_platform,
        zone,
        tenancy: input.tenancy.unwrap_or(CapacityReservationTenancy::Default),
        total: input.instance_count,
        ebs_optimized: input.ebs_optimized.unwrap_or(false),
        ephemeral_storage: input.ephemeral_storage.unwrap_or(false),
        state: State::Active,
        created: now,
        end_date: end,
        criteria: input
            .instance_match_criteria
            .unwrap_or(InstanceMatchCriteria::Open),
        client_token: token.clone(),
        owner: region.account_id.clone(),
    };
    let id = r.id.clone();
    region.tags.insert(&id, tags);
    region.capacity_reservations.0.insert(id.clone(), r);
    if let Some(end) = end {
        schedule_expiry(region, &id, end);
    }
    region
        .ledger
        .record("CreateCapacityReservation", token.as_deref(), &print, &id);
    let r = Kind::CapacityReservation.get(&region.capacity_reservations, &id)?;
    Ok(CreateCapacityReservationResult {
        capacity_reservation: Some(render(region, &Usage::of(region), r)),
    })
}

/// `DescribeCapacityReservations`: by ids (`InvalidCapacityReservationId.NotFound`), or
/// filters, in pages of 1 to 1000.
pub fn describe_capacity_reservations(
    region: &mut Region,
    input: DescribeCapacityReservationsRequest,
) -> Result<DescribeCapacityReservationsResult, ApiError> {
    let filters = Filters::parse::<Reservation>(input.filters)?;
    page::check_max_results(input.max_results, 1, MAX_INSTANCES)?;
    let region = &*region;
    let found = Kind::CapacityReservation.describe(
        &region.consistency,
        &region.capacity_reservations,
        input.capacity_reservation_ids.as_deref(),
        region.candidates(Kind::CapacityReservation, &filters),
        |r| filters.matches(r, region.tags.get(&r.id)),
    )?;
    let (items, next) = page::page(
        found,
        |r| r.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeCapacityReservationsResult {
        capacity_reservations: Some({
            let usage = Usage::of(region);
            items
                .into_iter()
                .map(|r| render(region, &usage, r))
                .collect()
        }),
        next_token: next,
    })
}

/// The active reservation `id`, for a call that changes it: `IncorrectState` once it is
/// cancelled or expired.
fn active_for_change<'a>(
    region: &'a Region,
    id: &str,
    doing: &str,
) -> Result<&'a Reservation, ApiError> {
    let r = Kind::CapacityReservation.get(&region.capacity_reservations, id)?;
    if !r.is_active() {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "The Capacity Reservation {id} is {} and cannot be {doing}.",
                r.state.as_str()
            ),
        ));
    }
    Ok(r)
}

/// `CancelCapacityReservation`: the reservation is `cancelled`; its instances run on,
/// On-Demand.
pub fn cancel_capacity_reservation(
    region: &mut Region,
    input: CancelCapacityReservationRequest,
) -> Result<CancelCapacityReservationResult, ApiError> {
    active_for_change(region, &input.capacity_reservation_id, "cancelled")?;
    if let Some(r) = region
        .capacity_reservations
        .0
        .get_mut(&input.capacity_reservation_id)
    {
        r.state = State::Cancelled;
    }
    Ok(CancelCapacityReservationResult {
        r#return: Some(true),
    })
}

/// `ModifyCapacityReservation`: the count, the end, the match criteria of an active
/// reservation.
pub fn modify_capacity_reservation(
    region: &mut Region,
    input: ModifyCapacityReservationRequest,
) -> Result<ModifyCapacityReservationResult, ApiError> {
    let id = input.capacity_reservation_id.as_str();
    let r = active_for_change(region, id, "modified")?;
    if input.instance_count.is_none()
        && input.end_date.is_none()
        && input.end_date_type.is_none()
        && input.instance_match_criteria.is_none()
    {
        return Err(ApiError::missing_parameter(
            "InstanceCount, EndDate, EndDateType or InstanceMatchCriteria",
        ));
    }
    let in_use = Usage::of(region).used(id);
    let mut changed = r.clone();
    if let Some(n) = input.instance_count {
        check_count(n)?;
        if (n - r.total).abs() > MAX_INSTANCES {
            return Err(ApiError::invalid_parameter(
                "InstanceCount",
                &n.to_string(),
                "The instance count cannot change by more than 1000 in one request.",
            ));
        }
        if n < in_use {
            return Err(ApiError::invalid_parameter(
                "InstanceCount",
                &n.to_string(),
                &format!("{in_use} instances run in the Capacity Reservation {id}."),
            ));
        }
        changed.total = n;
    }
    let now = region.clock.now_datetime();
    if input.end_date.is_some() || input.end_date_type.is_some() {
        let kind = input.end_date_type.or(if input.end_date.is_some() {
            Some(EndDateType::Limited)
        } else {
            None
        });
        changed.end_date = end_date(now, kind, input.end_date)?;
    }
    if let Some(c) = input.instance_match_criteria
        && c != r.criteria
    {
        if in_use > 0 {
            return Err(ApiError::invalid_parameter(
                "InstanceMatchCriteria",
                c.as_str(),
                &format!(
                    "The instance eligibility of the Capacity Reservation {id} changes only \
                     while no instance runs in it ({in_use} do)."
                ),
            ));
        }
        changed.criteria = c;
    }
    let new_end = changed.end_date.filter(|e| Some(*e) != r.end_date);
    region
        .capacity_reservations
        .0
        .insert(id.to_string(), changed);
    if let Some(end) = new_end {
        schedule_expiry(region, id, end);
    }
    Ok(ModifyCapacityReservationResult {
        r#return: Some(true),
        ..Default::default()
    })
}

/// `GetCapacityReservationUsage`: the owner's usage (the fake shares no reservation).
pub fn get_capacity_reservation_usage(
    region: &mut Region,
    input: GetCapacityReservationUsageRequest,
) -> Result<GetCapacityReservationUsageResult, ApiError> {
    page::check_max_results(input.max_results, 1, MAX_INSTANCES)?;
    let r = Kind::CapacityReservation.get(
        &region.capacity_reservations,
        &input.capacity_reservation_id,
    )?;
    let usage = Usage::of(region);
    let in_use = usage.used(&r.id);
    let usages: Vec<InstanceUsage> = (in_use > 0)
        .then(|| InstanceUsage {
            account_id: Some(region.account_id.clone()),
            used_instance_count: Some(in_use),
        })
        .into_iter()
        .collect();
    let (usages, next) = page::page(
        usages,
        |u| u.account_id.as_deref().unwrap_or_default(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetCapacityReservationUsageResult {
        next_token: next,
        capacity_reservation_id: Some(r.id.clone()),
        instance_type: Some(r.instance_type.clone()),
        total_instance_count: Some(r.total),
        available_instance_count: Some(usage.available(r)),
        state: Some(r.state),
        instance_usages: Some(usages),
        ..Default::default()
    })
}

/// A reservation reaching its end date: `expired` (once the date it has now is due).
pub fn expire(region: &mut Region, id: &str) {
    let now = region.clock.now_datetime();
    if let Some(r) = region.capacity_reservations.0.get_mut(id)
        && r.is_active()
        && r.end_date.is_some_and(|e| e.secs() <= now.secs())
    {
        r.state = State::Expired;
    }
}

/// An instance's Capacity Reservation settings: its preference, and the reservation it
/// targets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `open`, `none` or `capacity-reservations-only` (`open` when not told).
    pub preference: Option<Preference>,
    /// The reservation it targets.
    pub target: Option<String>,
}

impl Settings {
    /// The settings `spec` asks for, checked: a target only with no preference or
    /// `capacity-reservations-only`; no reservation group.
    pub fn asked(spec: Option<&CapacityReservationSpecification>) -> Result<Settings, ApiError> {
        let Some(spec) = spec else {
            return Ok(Settings::default());
        };
        let target = match &spec.capacity_reservation_target {
            None => None,
            Some(t) => {
                if t.capacity_reservation_resource_group_arn.is_some() {
                    return Err(ApiError::not_implemented(
                        "CapacityReservationTarget.CapacityReservationResourceGroupArn \
                         (fakeaws serves no Capacity Reservation groups)",
                    ));
                }
                Some(t.capacity_reservation_id.clone().ok_or_else(|| {
                    ApiError::missing_parameter("CapacityReservationTarget.CapacityReservationId")
                })?)
            }
        };
        if target.is_some()
            && spec
                .capacity_reservation_preference
                .is_some_and(|p| p != Preference::CapacityReservationsOnly)
        {
            return Err(ApiError::invalid_combination(
                "CapacityReservationPreference and CapacityReservationTarget can be specified \
                 together only when the preference is capacity-reservations-only.",
            ));
        }
        Ok(Settings {
            preference: spec.capacity_reservation_preference,
            target,
        })
    }

    fn preference(&self) -> Preference {
        self.preference.unwrap_or(Preference::Open)
    }

    /// The settings an instance keeps.
    pub fn of(o: &LaunchOptions) -> Settings {
        Settings {
            preference: o.capacity_preference,
            target: o.capacity_target.clone(),
        }
    }

    /// Keeps these settings in `o`.
    pub fn keep(self, o: &mut LaunchOptions) {
        o.capacity_preference = self.preference;
        o.capacity_target = self.target;
    }
}

/// The zone of the reservation `settings` target, for a launch that names none.
pub fn target_zone(region: &Region, settings: &Settings) -> Result<Option<String>, ApiError> {
    match &settings.target {
        None => Ok(None),
        Some(id) => Ok(Some(
            Kind::CapacityReservation
                .get(&region.capacity_reservations, id)?
                .zone
                .clone(),
        )),
    }
}

/// The reservation `id` an instance of type `t` in `zone` with `tenancy` targets: active,
/// and of its type, platform, zone and tenancy.
pub fn target<'a>(
    region: &'a Region,
    id: &str,
    t: InstanceType,
    zone: &str,
    tenancy: Tenancy,
) -> Result<&'a Reservation, ApiError> {
    let r = Kind::CapacityReservation.get(&region.capacity_reservations, id)?;
    if !r.is_active() {
        return Err(ApiError::invalid_value(format!(
            "The Capacity Reservation {id} is {}: instances can no longer launch into it.",
            r.state.as_str()
        )));
    }
    if !r.fits(t, zone, tenancy) {
        return Err(ApiError::invalid_value(format!(
            "The Capacity Reservation {id} holds capacity for {} {} instances of {} tenancy \
             in {}, not for a {} instance of {} tenancy in {zone}.",
            r.instance_type,
            r.platform.as_str(),
            r.tenancy.as_str(),
            r.zone,
            t.as_str(),
            tenancy.as_str()
        )));
    }
    Ok(r)
}

fn full(id: &str, minimum: usize) -> ApiError {
    ApiError::new(
        Code::ReservationCapacityExceeded,
        format!(
            "The Capacity Reservation {id} does not have enough available capacity for {minimum} \
             more instance(s)."
        ),
    )
}

fn none_open(t: InstanceType, zone: &str) -> ApiError {
    ApiError::new(
        Code::InsufficientInstanceCapacity,
        format!(
            "There is not enough capacity in open Capacity Reservations for {} instances in \
             {zone}, and the launch runs only in Capacity Reservations.",
            t.as_str()
        ),
    )
}

/// One launch, for [`for_launch`].
pub struct Launch<'a> {
    /// Its instance type.
    pub instance_type: InstanceType,
    /// Its zone.
    pub zone: &'a str,
    /// Its tenancy.
    pub tenancy: Tenancy,
    /// Whether it launches Spot Instances.
    pub spot: bool,
    /// At most this many instances.
    pub wanted: usize,
    /// At least this many.
    pub minimum: usize,
}

/// The reservation each instance of a launch runs in (`None`: On-Demand), as many as may
/// launch (at most `wanted`, at least `minimum`).
pub fn for_launch(
    region: &Region,
    settings: &Settings,
    launch: &Launch,
) -> Result<Vec<Option<String>>, ApiError> {
    let Launch {
        instance_type: t,
        zone,
        tenancy,
        spot,
        wanted,
        minimum,
    } = *launch;
    if spot
        && (settings.target.is_some()
            || settings.preference() == Preference::CapacityReservationsOnly)
    {
        return Err(ApiError::invalid_combination(
            "Spot Instances cannot run in a Capacity Reservation.",
        ));
    }
    if let Some(id) = &settings.target {
        let r = target(region, id, t, zone, tenancy)?;
        let room = usize::try_from(Usage::of(region).available(r)).unwrap_or(0);
        if room < minimum {
            return Err(full(id, minimum));
        }
        return Ok(vec![Some(id.clone()); wanted.min(room)]);
    }
    if spot || settings.preference() == Preference::None || region.capacity_reservations.is_empty()
    {
        if settings.preference() == Preference::CapacityReservationsOnly {
            return Err(none_open(t, zone));
        }
        return Ok(vec![None; wanted]);
    }
    let usage = Usage::of(region);
    let mut each = Vec::with_capacity(wanted);
    for r in region.capacity_reservations.values().filter(|r| {
        r.is_active() && r.criteria == InstanceMatchCriteria::Open && r.fits(t, zone, tenancy)
    }) {
        let room = usize::try_from(usage.available(r)).unwrap_or(0);
        let take = room.min(wanted - each.len());
        each.extend(std::iter::repeat_n(Some(r.id.clone()), take));
        if each.len() == wanted {
            break;
        }
    }
    if settings.preference() == Preference::CapacityReservationsOnly {
        if each.len() < minimum {
            return Err(none_open(t, zone));
        }
    } else {
        each.resize(wanted, None);
    }
    Ok(each)
}

/// The reservation each of `starting` (the stopped ones among them) runs in once started: its
/// target (with room, else `ReservationCapacityExceeded`), else with preference `open` the
/// reservation it ran in or another open one that matches, with room. Nothing changes until
/// every one has its place.
pub fn for_start(
    region: &Region,
    starting: &[&Instance],
) -> Result<Vec<(String, Option<String>)>, ApiError> {
    if region.capacity_reservations.is_empty() {
        return Ok(Vec::new());
    }
    // The places this call gives count as taken for the instances after them.
    let mut usage = Usage::of(region);
    let mut chosen = Vec::new();
    for i in starting
        .iter()
        .filter(|i| i.state == InstanceStateName::Stopped)
    {
        let settings = &Settings::of(&i.options);
        let place = if let Some(id) = &settings.target {
            let r = target(region, id, i.instance_type, &i.zone, i.tenancy)?;
            if usage.available(r) == 0 {
                return Err(full(id, 1));
            }
            Some(id.clone())
        } else if settings.preference() == Preference::None {
            None
        } else {
            let open = |r: &&Reservation| {
                r.is_active()
                    && r.criteria == InstanceMatchCriteria::Open
                    && r.fits(i.instance_type, &i.zone, i.tenancy)
                    && usage.available(r) > 0
            };
            let previous = i
                .capacity_reservation
                .as_deref()
                .and_then(|id| region.capacity_reservations.get(id))
                .filter(open);
            let found = previous
                .or_else(|| region.capacity_reservations.values().find(open))
                .map(|r| r.id.clone());
            if found.is_none() && settings.preference() == Preference::CapacityReservationsOnly {
                return Err(none_open(i.instance_type, &i.zone));
            }
            found
        };
        if let Some(id) = &place {
            usage.take(id);
        }
        chosen.push((i.id.clone(), place));
    }
    Ok(chosen)
}
