//! Spot Instances launched by RunInstances (`InstanceMarketOptions`) or asked for by
//! RequestSpotInstances ([`request`]), their one-time Spot Instance requests,
//! DescribeSpotInstanceRequests and CancelSpotInstanceRequests.
//!
//! Each instance of a Spot launch has a request of its own (`sir-`), `active` and `fulfilled`
//! from the launch on. The instance is `spot` in its `InstanceLifecycle`; it cannot be stopped
//! (a one-time request's instance cannot, on AWS either). Terminating it closes its request
//! (`instance-terminated-by-user`); cancelling the request leaves the instance running
//! (`request-canceled-and-instance-running`). The fake has no Spot market: a launch is
//! fulfilled at once whatever `MaxPrice` says. AWS's interruptions are played on demand
//! ([`interrupt`]: the control endpoint's `spot-interruption`, or a test through
//! `Fake::with_region`): the request is closed at once with the interruption's status, the
//! instance runs on through its two-minute notice, then is terminated with the state reason
//! `Server.SpotInstanceTermination`. A request is forgotten with its instance.

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    CancelSpotInstanceRequestState, CancelSpotInstanceRequestsRequest,
    CancelSpotInstanceRequestsResult, CancelledSpotInstanceRequest,
    DescribeSpotInstanceRequestsRequest, DescribeSpotInstanceRequestsResult,
    IamInstanceProfileSpecification, InstanceInterruptionBehavior, InstanceMarketOptionsRequest,
    InstanceStateName, LaunchSpecification, MarketType, RIProductDescription,
    RunInstancesMonitoringEnabled, SpotInstanceRequest, SpotInstanceState, SpotInstanceStatus,
    SpotInstanceType, SpotPlacement,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

mod request;

pub use request::{Asked, request_spot_instances};

crate::region::table! {
    /// Spot Instance requests by id.
    SpotRequests of SpotRequest
}

/// One Spot Instance request.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SpotRequest {
    /// `sir-...`.
    pub id: String,
    /// The instance that fulfilled it.
    pub instance_id: String,
    /// The maximum price asked, as given.
    pub max_price: Option<String>,
    /// What happens to the instance when it is interrupted.
    pub interruption: InstanceInterruptionBehavior,
    /// Its state.
    pub state: SpotInstanceState,
    /// Its status: (code, message).
    pub status: (String, String),
    /// When its status last changed.
    #[serde(with = "crate::state::with::time")]
    pub status_time: DateTime,
    /// When it was made.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// What RequestSpotInstances asked beyond the launch; `None` for the request of a
    /// RunInstances launch.
    #[serde(default)]
    pub asked: Option<Asked>,
}

/// What a Spot launch asks for.
#[derive(Debug, Clone)]
pub struct Spot {
    max_price: Option<String>,
    interruption: InstanceInterruptionBehavior,
}

/// The Spot options of a launch's `InstanceMarketOptions`, checked as AWS checks them; `None`
/// for an on-demand launch.
pub fn plan(options: Option<&InstanceMarketOptionsRequest>) -> Result<Option<Spot>, ApiError> {
    let Some(options) = options else {
        return Ok(None);
    };
    let market = options.market_type.unwrap_or(MarketType::Spot);
    match market {
        MarketType::Spot => {}
        MarketType::OnDemand => {
            if options.spot_options.is_some() {
                return Err(ApiError::invalid_combination(
                    "SpotOptions can be given only with the spot market type.",
                ));
            }
            return Ok(None);
        }
        other => {
            return Err(ApiError::not_implemented(format!(
                "fakeaws does not serve the {} market type of RunInstances",
                other.as_str()
            )));
        }
    }
    let spot = options.spot_options.as_ref();
    if let Some(kind) = spot.and_then(|s| s.spot_instance_type)
        && kind == SpotInstanceType::Persistent
    {
        let behaviour = spot.and_then(|s| s.instance_interruption_behavior);
        if !matches!(
            behaviour,
            Some(InstanceInterruptionBehavior::Stop | InstanceInterruptionBehavior::Hibernate)
        ) {
            return Err(ApiError::invalid_combination(
                "For RunInstances, persistent Spot Instance requests are only supported when the instance interruption behavior is either hibernate or stop.",
            ));
        }
        return Err(ApiError::not_implemented(
            "fakeaws serves one-time Spot Instance requests only (SpotOptions.SpotInstanceType persistent)",
        ));
    }
    if spot.is_some_and(|s| s.valid_until.is_some()) {
        return Err(ApiError::invalid_combination(
            "ValidUntil is supported only for persistent Spot Instance requests.",
        ));
    }
    if spot.is_some_and(|s| s.block_duration_minutes.is_some()) {
        return Err(ApiError::invalid_value(
            "Spot blocks (BlockDurationMinutes) are no longer offered.",
        ));
    }
    let max_price = spot.and_then(|s| s.max_price.clone());
    if let Some(p) = &max_price {
        let ok = p
            .trim()
            .parse::<f64>()
            .is_ok_and(|v| v.is_finite() && v > 0.001);
        if !ok {
            return Err(ApiError::invalid_parameter(
                "MaxPrice",
                p,
                "The maximum price must be a number more than 0.001 (USD per hour).",
            ));
        }
    }
    let interruption = spot
        .and_then(|s| s.instance_interruption_behavior)
        .unwrap_or(InstanceInterruptionBehavior::Terminate);
    if interruption != InstanceInterruptionBehavior::Terminate {
        return Err(ApiError::invalid_combination(format!(
            "The interruption behavior {} is supported only for persistent Spot Instance requests.",
            interruption.as_str()
        )));
    }
    Ok(Some(Spot {
        max_price,
        interruption,
    }))
}

/// Opens the fulfilled request of instance `instance_id`, launched as `spot` asked; answers
/// its id.
pub fn fulfilled(region: &mut Region, spot: &Spot, instance_id: &str) -> String {
    let id = region.ids.short("sir");
    let now = region.clock.now_datetime();
    region.spot_requests.0.insert(
        id.clone(),
        SpotRequest {
            id: id.clone(),
            instance_id: instance_id.to_string(),
            max_price: spot.max_price.clone(),
            interruption: spot.interruption,
            state: SpotInstanceState::Active,
            status: (
                "fulfilled".to_string(),
                "Your spot request is fulfilled.".to_string(),
            ),
            status_time: now,
            created: now,
            asked: None,
        },
    );
    id
}

/// Closes request `id` because its instance was terminated by its owner.
pub fn instance_terminated(region: &mut Region, id: &str) {
    let now = region.clock.now_datetime();
    if let Some(r) = region.spot_requests.0.get_mut(id)
        && r.state == SpotInstanceState::Active
    {
        r.state = SpotInstanceState::Closed;
        r.status = (
            "instance-terminated-by-user".to_string(),
            "Spot Instance terminated due to user-initiated termination.".to_string(),
        );
        r.status_time = now;
    }
}

/// Why AWS interrupts a Spot Instance (its request's status code says which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Interruption {
    /// EC2 needs the capacity back (`instance-terminated-no-capacity`), the usual reason.
    Capacity,
    /// The Spot price rose above the request's maximum price (`instance-terminated-by-price`);
    /// only for a request that named one, since the On-Demand price, the default maximum,
    /// caps the Spot price.
    Price,
}

impl Interruption {
    /// The request's status (code, message) once the instance is interrupted.
    fn status(self) -> (String, String) {
        let (code, message) = match self {
            Interruption::Capacity => (
                "instance-terminated-no-capacity",
                "Spot Instance terminated due to no available capacity.",
            ),
            Interruption::Price => (
                "instance-terminated-by-price",
                "Spot Instance terminated due to price.",
            ),
        };
        (code.to_string(), message.to_string())
    }
}

/// How long a Spot Instance runs on after its interruption notice before EC2 terminates it.
pub const INTERRUPTION_NOTICE: std::time::Duration = std::time::Duration::from_secs(120);

/// The state reason (code, message) of an instance EC2 terminated to interrupt it.
pub fn termination_reason() -> (String, String) {
    (
        "Server.SpotInstanceTermination".to_string(),
        "Server.SpotInstanceTermination: Spot instance termination".to_string(),
    )
}

/// Interrupts the Spot Instances `ids` as EC2 does when it reclaims them (a one-time request
/// whose instance terminates on interruption, the only kind the fake serves): each request's
/// status turns at once to the interruption's (`instance-terminated-no-capacity` or
/// `instance-terminated-by-price`) and an active one is `closed`, while the instance stays
/// `running` through its two-minute notice ([`INTERRUPTION_NOTICE`] on the region's clock);
/// then it is terminated, its state reason `Server.SpotInstanceTermination`. An instance
/// already interrupted is left to its notice. Every id is checked first: one that is not a
/// pending or running Spot Instance of this region, or a price interruption of a request
/// with no maximum price, changes nothing and is named in the answer, with all the others.
pub fn interrupt(
    region: &mut Region,
    ids: &[String],
    why: Interruption,
) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    if ids.is_empty() {
        problems.push("no instance named (instanceIds)".to_string());
    }
    let mut requests = Vec::new();
    for id in ids {
        let Some(i) = region.instances.get(id) else {
            problems.push(format!("{id}: no such instance in {}", region.name));
            continue;
        };
        let Some(request) = i
            .spot_request
            .as_ref()
            .and_then(|r| region.spot_requests.get(r))
        else {
            problems.push(format!("{id}: not a Spot Instance"));
            continue;
        };
        if !matches!(
            i.state,
            InstanceStateName::Pending | InstanceStateName::Running
        ) {
            problems.push(format!(
                "{id}: {}, not pending or running",
                i.state.as_str()
            ));
            continue;
        }
        if why == Interruption::Price && request.max_price.is_none() {
            problems.push(format!(
                "{id}: its request {} has no maximum price, so the Spot price (capped at the \
                 On-Demand price) cannot exceed it",
                request.id
            ));
            continue;
        }
        let interrupted = [Interruption::Capacity, Interruption::Price]
            .iter()
            .any(|w| w.status().0 == request.status.0);
        if !interrupted {
            requests.push((id.clone(), request.id.clone()));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    region.answers.changed();
    let now = region.clock.now_datetime();
    for (instance, request) in requests {
        if let Some(r) = region.spot_requests.0.get_mut(&request) {
            if r.state == SpotInstanceState::Active {
                r.state = SpotInstanceState::Closed;
            }
            r.status = why.status();
            r.status_time = now;
        }
        let at = region.clock.now();
        region.transitions.schedule(
            at,
            crate::sim::transitions::Subject::SpotInterruption,
            &instance,
        );
    }
    Ok(())
}

/// The end of instance `id`'s interruption notice: EC2 shuts it down, unless its owner
/// already terminated it.
pub fn notice_over(region: &mut Region, id: &str) {
    crate::ec2::instance::service_shutdown(region, id, termination_reason());
}

/// Forgets request `id` with its instance.
pub fn forget(region: &mut Region, id: &str) {
    region.spot_requests.0.remove(id);
    region.tags.remove_resource(id);
}

/// `UnsupportedOperation` for stopping the instance of a one-time request.
pub fn cannot_stop(instance_id: &str) -> ApiError {
    ApiError::new(
        Code::UnsupportedOperation,
        format!(
            "You can't stop the Spot Instance '{instance_id}' because it is associated with a one-time Spot Instance request. You can only stop Spot Instances associated with persistent requests."
        ),
    )
}

fn render(region: &Region, r: &SpotRequest) -> SpotInstanceRequest {
    let i = region.instances.get(&r.instance_id);
    let zone = i.map(|i| i.zone.clone());
    SpotInstanceRequest {
        create_time: Some(r.created),
        instance_id: Some(r.instance_id.clone()),
        launch_specification: i.map(|i| LaunchSpecification {
            user_data: None,
            image_id: Some(i.image_id.clone()),
            instance_type: Some(i.instance_type),
            key_name: i.key_name.clone(),
            iam_instance_profile: i.iam_profile.as_ref().map(|(arn, _)| {
                IamInstanceProfileSpecification {
                    arn: Some(arn.clone()),
                    name: None,
                }
            }),
            subnet_id: Some(i.subnet_id.clone()),
            ebs_optimized: Some(i.ebs_optimized),
            security_groups: Some(crate::ec2::instance::security_groups(region, i)),
            monitoring: Some(RunInstancesMonitoringEnabled {
                enabled: i.monitoring,
                ..Default::default()
            }),
            placement: Some(SpotPlacement {
                availability_zone: Some(i.zone.clone()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        launched_availability_zone_id: zone
            .as_ref()
            .and_then(|z| region.zone(z))
            .map(|z| z.id.clone()),
        launched_availability_zone: zone,
        product_description: Some(RIProductDescription::LinuxUNIX),
        spot_instance_request_id: Some(r.id.clone()),
        spot_price: r.max_price.clone(),
        state: Some(r.state),
        status: Some(SpotInstanceStatus {
            code: Some(r.status.0.clone()),
            message: Some(r.status.1.clone()),
            update_time: Some(r.status_time),
        }),
        tags: region.tags.tag_set(&r.id),
        r#type: Some(SpotInstanceType::OneTime),
        instance_interruption_behavior: Some(r.interruption),
        valid_until: r.asked.as_ref().map(|a| a.valid_until),
        launch_group: r.asked.as_ref().and_then(|a| a.launch_group.clone()),
        availability_zone_group: r.asked.as_ref().and_then(|a| a.zone_group.clone()),
        ..Default::default()
    }
}

impl Filterable for (&SpotRequest, &Region) {
    const NAMES: &'static [&'static str] = &[
        "availability-zone-group",
        "create-time",
        "fault-code",
        "fault-message",
        "instance-id",
        "launch-group",
        "launch.block-device-mapping.delete-on-termination",
        "launch.block-device-mapping.device-name",
        "launch.block-device-mapping.snapshot-id",
        "launch.block-device-mapping.volume-size",
        "launch.block-device-mapping.volume-type",
        "launch.group-id",
        "launch.group-name",
        "launch.image-id",
        "launch.instance-type",
        "launch.kernel-id",
        "launch.key-name",
        "launch.monitoring-enabled",
        "launch.ramdisk-id",
        "launched-availability-zone",
        "launched-availability-zone-id",
        "network-interface.addresses.primary",
        "network-interface.delete-on-termination",
        "network-interface.description",
        "network-interface.device-index",
        "network-interface.group-id",
        "network-interface.network-interface-id",
        "network-interface.private-ip-address",
        "network-interface.subnet-id",
        "product-description",
        "spot-instance-request-id",
        "spot-price",
        "state",
        "status-code",
        "status-message",
        "type",
        "valid-from",
        "valid-until",
    ];
    // No faults, kernels, RAM disks or future start here; the launch specification of a
    // request lists no block devices or interfaces.
    const NEVER_SET: &'static [&'static str] = &[
        "fault-code",
        "fault-message",
        "launch.block-device-mapping.delete-on-termination",
        "launch.block-device-mapping.device-name",
        "launch.block-device-mapping.snapshot-id",
        "launch.block-device-mapping.volume-size",
        "launch.block-device-mapping.volume-type",
        "launch.kernel-id",
        "launch.ramdisk-id",
        "network-interface.addresses.primary",
        "network-interface.delete-on-termination",
        "network-interface.description",
        "network-interface.device-index",
        "network-interface.group-id",
        "network-interface.network-interface-id",
        "network-interface.private-ip-address",
        "network-interface.subnet-id",
        "valid-from",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (r, region) = *self;
        let i = region.instances.get(&r.instance_id);
        match name {
            "create-time" => one(format_timestamp(r.created)),
            "instance-id" => one(r.instance_id.clone()),
            "launch.group-id" | "launch.group-name" => i
                .map(|i| {
                    crate::ec2::instance::security_groups(region, i)
                        .into_iter()
                        .filter_map(|g| {
                            if name == "launch.group-id" {
                                g.group_id
                            } else {
                                g.group_name
                            }
                        })
                        .collect()
                })
                .unwrap_or_default(),
            "launch.image-id" => i.map(|i| one(i.image_id.clone())).unwrap_or_default(),
            "launch.instance-type" => i.map(|i| one(i.instance_type.as_str())).unwrap_or_default(),
            "launch.key-name" => i
                .and_then(|i| i.key_name.clone())
                .map(one)
                .unwrap_or_default(),
            "launch.monitoring-enabled" => i
                .map(|i| crate::ec2::filter::flag(i.monitoring))
                .unwrap_or_default(),
            "launched-availability-zone" => i.map(|i| one(i.zone.clone())).unwrap_or_default(),
            "launched-availability-zone-id" => i
                .and_then(|i| region.zone(&i.zone))
                .map(|z| one(z.id.clone()))
                .unwrap_or_default(),
            "product-description" => one(RIProductDescription::LinuxUNIX.as_str()),
            "spot-instance-request-id" => one(r.id.clone()),
            "spot-price" => r.max_price.clone().map(one).unwrap_or_default(),
            "state" => one(r.state.as_str()),
            "status-code" => one(r.status.0.clone()),
            "status-message" => one(r.status.1.clone()),
            "type" => one(SpotInstanceType::OneTime.as_str()),
            "valid-until" => r
                .asked
                .as_ref()
                .map(|a| one(format_timestamp(a.valid_until)))
                .unwrap_or_default(),
            "launch-group" => r
                .asked
                .as_ref()
                .and_then(|a| a.launch_group.clone())
                .map(one)
                .unwrap_or_default(),
            "availability-zone-group" => r
                .asked
                .as_ref()
                .and_then(|a| a.zone_group.clone())
                .map(one)
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// `DescribeSpotInstanceRequests`.
pub fn describe_spot_instance_requests(
    region: &mut Region,
    input: DescribeSpotInstanceRequestsRequest,
) -> Result<DescribeSpotInstanceRequestsResult, ApiError> {
    let filters = Filters::parse::<(&SpotRequest, &Region)>(input.filters)?;
    let region = &*region;
    let found: Vec<&SpotRequest> = Kind::SpotInstanceRequest
        .select(
            &region.spot_requests,
            input.spot_instance_request_ids.as_deref(),
        )?
        .into_iter()
        .filter(|r| filters.matches(&(*r, region), region.tags.get(&r.id)))
        .collect();
    let (items, next) = page::page(
        found,
        |r| r.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeSpotInstanceRequestsResult {
        spot_instance_requests: Some(items.into_iter().map(|r| render(region, r)).collect()),
        next_token: next,
    })
}

/// `CancelSpotInstanceRequests`: an active request is cancelled and its instance runs on; a
/// closed or cancelled one stays as it is. Every id is checked first.
pub fn cancel_spot_instance_requests(
    region: &mut Region,
    input: CancelSpotInstanceRequestsRequest,
) -> Result<CancelSpotInstanceRequestsResult, ApiError> {
    Kind::SpotInstanceRequest.select(
        &region.spot_requests,
        Some(&input.spot_instance_request_ids),
    )?;
    let now = region.clock.now_datetime();
    let mut out = Vec::new();
    for id in input.spot_instance_request_ids {
        let Some(r) = region.spot_requests.0.get_mut(&id) else {
            continue;
        };
        if matches!(r.state, SpotInstanceState::Active | SpotInstanceState::Open) {
            r.state = SpotInstanceState::Cancelled;
            r.status = (
                "request-canceled-and-instance-running".to_string(),
                "Spot Instance Request canceled, but the instance is still running.".to_string(),
            );
            r.status_time = now;
        }
        let state = match r.state {
            SpotInstanceState::Closed => CancelSpotInstanceRequestState::Closed,
            _ => CancelSpotInstanceRequestState::Cancelled,
        };
        out.push(CancelledSpotInstanceRequest {
            spot_instance_request_id: Some(id),
            state: Some(state),
        });
    }
    Ok(CancelSpotInstanceRequestsResult {
        cancelled_spot_instance_requests: Some(out),
    })
}
