//! `RequestSpotInstances`: one-time Spot Instance requests made on their own, the older way
//! to ask for Spot Instances.
//!
//! The fake has no Spot market, so a request is evaluated and fulfilled when it is made: the
//! launch specification is launched as RunInstances launches a Spot launch (every check of
//! RunInstances applies, and its errors are the call's, nothing made), one instance per
//! request. The answer shows each request as AWS answers a new one, `open` and
//! `pending-evaluation`, without an instance; from the next call on it is described
//! `active` and `fulfilled` with its instance, as a request AWS fulfils at once. Tags
//! (`spot-instances-request` only) go on the requests, not on the instances, as the API
//! reference says. `ValidUntil` is kept and shown (seven days from the request unless
//! given); the launch and zone groups are kept and shown, and hold trivially, since every
//! instance of a call launches in one zone at once.

use aws_smithy_types::DateTime;

use crate::ec2::tags;
use crate::generated::ec2::{
    InstanceMarketOptionsRequest, MarketType, Placement, RequestSpotInstancesRequest,
    RequestSpotInstancesResult, ResourceType, RunInstancesRequest, SpotInstanceRequest,
    SpotInstanceState, SpotInstanceStatus, SpotInstanceType, SpotMarketOptions,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// How long a request is valid when `ValidUntil` is not given: seven days, as the API
/// reference documents.
const DEFAULT_VALIDITY_SECS: i64 = 7 * 24 * 60 * 60;

/// What RequestSpotInstances asks beyond the launch, kept with each of its requests.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Asked {
    /// The end of the request's validity.
    #[serde(with = "crate::state::with::time")]
    pub valid_until: DateTime,
    /// `LaunchGroup`, as given.
    pub launch_group: Option<String>,
    /// `AvailabilityZoneGroup`, as given.
    pub zone_group: Option<String>,
}

/// `RequestSpotInstances`; the same ClientToken with the same request answers the same
/// requests.
pub fn request_spot_instances(
    region: &mut Region,
    mut input: RequestSpotInstancesRequest,
) -> Result<RequestSpotInstancesResult, ApiError> {
    let token = input.client_token.take();
    let print = crate::ec2::fingerprint(&input);
    if let Some(ids) = region
        .ledger
        .replay("RequestSpotInstances", token.as_deref(), &print)?
    {
        let requests = ids
            .split(' ')
            .filter_map(|id| region.spot_requests.get(id))
            .map(|r| super::render(region, r))
            .collect();
        return Ok(RequestSpotInstancesResult {
            spot_instance_requests: Some(requests),
        });
    }
    if input.r#type == Some(SpotInstanceType::Persistent) {
        return Err(ApiError::not_implemented(
            "fakeaws serves one-time Spot Instance requests only (Type persistent)",
        ));
    }
    let count = input.instance_count.unwrap_or(1);
    if count < 1 {
        return Err(ApiError::invalid_parameter(
            "InstanceCount",
            &count.to_string(),
            "The number of instances must be at least 1.",
        ));
    }
    let now = region.clock.now_datetime();
    let valid_until = match input.valid_until {
        Some(t) if t.secs() <= now.secs() => {
            return Err(ApiError::invalid_parameter(
                "ValidUntil",
                &crate::protocol::xml::format_timestamp(t),
                "The end of the request's validity must be in the future.",
            ));
        }
        Some(t) => t,
        None => DateTime::from_secs(now.secs().saturating_add(DEFAULT_VALIDITY_SECS)),
    };
    // The tags are the requests': any other resource type is refused before anything runs.
    let tagged = tags::from_specs_for(
        input.tag_specifications.as_deref(),
        &[ResourceType::SpotInstancesRequest],
    )?;
    let launch = launch_of(&mut input, count)?;
    let reservation = crate::ec2::instance::run_instances(region, launch)?;
    let asked = Asked {
        valid_until,
        launch_group: input.launch_group.take(),
        zone_group: input.availability_zone_group.take(),
    };
    let mut ids = Vec::new();
    for instance in reservation.instances.unwrap_or_default() {
        let Some(request) = instance
            .instance_id
            .as_deref()
            .and_then(|id| region.instances.get(id))
            .and_then(|i| i.spot_request.clone())
        else {
            continue;
        };
        if let Some(r) = region.spot_requests.0.get_mut(&request) {
            r.asked = Some(asked.clone());
        }
        if let Some(t) = tagged.get(&ResourceType::SpotInstancesRequest) {
            region.tags.insert(&request, t.clone());
        }
        ids.push(request);
    }
    region.ledger.record(
        "RequestSpotInstances",
        token.as_deref(),
        &print,
        &ids.join(" "),
    );
    let requests = ids
        .iter()
        .filter_map(|id| region.spot_requests.get(id))
        .map(|r| submitted(super::render(region, r)))
        .collect();
    Ok(RequestSpotInstancesResult {
        spot_instance_requests: Some(requests),
    })
}

/// A request as AWS answers it when it is made: `open`, pending evaluation, no instance yet.
fn submitted(mut r: SpotInstanceRequest) -> SpotInstanceRequest {
    r.state = Some(SpotInstanceState::Open);
    r.status = Some(SpotInstanceStatus {
        code: Some("pending-evaluation".to_string()),
        message: Some(
            "Your Spot request has been submitted for review, and is pending evaluation."
                .to_string(),
        ),
        update_time: r.create_time,
    });
    r.instance_id = None;
    r.launched_availability_zone = None;
    r.launched_availability_zone_id = None;
    r
}

/// The RunInstances launch of `count` Spot Instances that the request's launch
/// specification and options describe.
fn launch_of(
    input: &mut RequestSpotInstancesRequest,
    count: i32,
) -> Result<RunInstancesRequest, ApiError> {
    let Some(spec) = input.launch_specification.take() else {
        return Err(ApiError::missing_parameter("LaunchSpecification"));
    };
    for (given, member) in [
        (spec.addressing_type.is_some(), "AddressingType"),
        (spec.kernel_id.is_some(), "KernelId"),
        (spec.ramdisk_id.is_some(), "RamdiskId"),
    ] {
        if given {
            return Err(ApiError::not_implemented(format!(
                "fakeaws does not serve LaunchSpecification.{member} of RequestSpotInstances"
            )));
        }
    }
    let placement = spec.placement.map(|p| Placement {
        availability_zone: p.availability_zone,
        availability_zone_id: p.availability_zone_id,
        group_name: p.group_name,
        tenancy: p.tenancy,
        ..Default::default()
    });
    Ok(RunInstancesRequest {
        image_id: spec.image_id,
        instance_type: spec.instance_type,
        key_name: spec.key_name,
        subnet_id: spec.subnet_id,
        user_data: spec.user_data,
        block_device_mappings: spec.block_device_mappings,
        ebs_optimized: spec.ebs_optimized,
        iam_instance_profile: spec.iam_instance_profile,
        monitoring: spec.monitoring,
        network_interfaces: spec.network_interfaces,
        security_group_ids: spec.security_group_ids,
        security_groups: spec.security_groups,
        placement,
        min_count: count,
        max_count: count,
        instance_market_options: Some(InstanceMarketOptionsRequest {
            market_type: Some(MarketType::Spot),
            spot_options: Some(SpotMarketOptions {
                max_price: input.spot_price.clone(),
                spot_instance_type: Some(SpotInstanceType::OneTime),
                block_duration_minutes: input.block_duration_minutes,
                instance_interruption_behavior: input.instance_interruption_behavior,
                valid_until: None,
            }),
        }),
        ..crate::ec2::instance::empty_launch()
    })
}
