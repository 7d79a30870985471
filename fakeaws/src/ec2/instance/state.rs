//! The instance state machine: TerminateInstances, StopInstances, StartInstances, and the
//! steps the clock applies (`advance`: pending -> running, stopping -> stopped,
//! shutting-down -> terminated; `purge`: a terminated instance forgotten after an hour).

use crate::ec2::error::Code;
use crate::ec2::network_interface::{self, PublicIp};
use crate::ec2::volume;
use crate::ec2::{Kind, elastic_ip};
use crate::generated::ec2::{
    InstanceMetadataOptionsState, InstanceStateChange, InstanceStateName, RebootInstancesRequest,
    StartInstancesRequest, StartInstancesResult, StopInstancesRequest, StopInstancesResult,
    TerminateInstancesRequest, TerminateInstancesResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::*;

/// The state reason (code, message) of an instance a user stopped or terminated.
/// The state reason of a `pending` instance, as RunInstances answers it (the CLI's
/// documented output: code and message both `pending`).
pub(super) fn pending_reason() -> (String, String) {
    ("pending".into(), "pending".into())
}

fn user_initiated_shutdown() -> (String, String) {
    (
        "Client.UserInitiatedShutdown".into(),
        "Client.UserInitiatedShutdown: User initiated shutdown".into(),
    )
}

/// The state reason of an instance StopInstances hibernated (the model's list of codes).
fn user_initiated_hibernate() -> (String, String) {
    (
        "Client.UserInitiatedHibernate".into(),
        "Client.UserInitiatedHibernate: User initiated hibernate".into(),
    )
}

/// Ends instance `id`: its interfaces and the volumes that go with it are released, it is
/// `terminated` with `reason`, and it is forgotten after AWS's hour.
fn terminate_now(region: &mut Region, id: &str, reason: (String, String)) {
    let volumes: Vec<String> = region
        .instances
        .get(id)
        .map(|i| i.volumes.iter().map(|(_, v)| v.clone()).collect())
        .unwrap_or_default();
    network_interface::lifecycle::release_for(region, id);
    volume::release_for(region, id, &volumes);
    let at = region.clock.now_datetime();
    if let Some(i) = region.instances.0.get_mut(id) {
        i.state = InstanceStateName::Terminated;
        i.state_reason = Some(reason);
        super::console::post(i, at, super::console::Did::Terminated);
    }
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::InstancePurge, id);
}

/// Moves an instance out of `pending`, `stopping` or `shutting-down`.
pub fn advance(region: &mut Region, id: &str) {
    let Some((state, eni, maps, carrier)) = region.instances.get(id).map(|i| {
        (
            i.state,
            i.eni_id.clone(),
            i.public_ip_on_start,
            i.carrier_ip,
        )
    }) else {
        return;
    };
    match state {
        InstanceStateName::Pending
            if let Some(reason) = region.transitions.take_failure(Subject::Instance) =>
        {
            // A launch AWS could not complete: terminated, with its Server.* state reason.
            terminate_now(region, id, reason);
        }
        InstanceStateName::Pending => {
            // As the launch decided, not as the subnet maps now.
            if maps
                && region
                    .network_interfaces
                    .get(&eni)
                    .is_some_and(|e| e.public_ip.is_none())
                && let Some(ip) = elastic_ip::take_public_ip(region)
            {
                network_interface::set_public_ip(
                    region,
                    &eni,
                    None,
                    Some(PublicIp {
                        carrier,
                        ..PublicIp::pooled(ip)
                    }),
                );
            }
            let at = region.clock.now_datetime();
            if let Some(i) = region.instances.0.get_mut(id) {
                i.state = InstanceStateName::Running;
                i.state_reason = None;
                i.transition_reason = String::new();
                super::console::post(i, at, super::console::Did::Booted);
            }
        }
        InstanceStateName::Stopping => {
            // A pool address goes back when the instance stops; an Elastic IP stays.
            network_interface::drop_pool_address(region, &eni);
            let at = region.clock.now_datetime();
            if let Some(i) = region.instances.0.get_mut(id) {
                i.state = InstanceStateName::Stopped;
                i.state_reason = Some(if std::mem::take(&mut i.hibernating) {
                    user_initiated_hibernate()
                } else {
                    user_initiated_shutdown()
                });
                super::console::post(i, at, super::console::Did::Stopped);
            }
        }
        InstanceStateName::ShuttingDown => {
            // A shutdown EC2 began (a Spot interruption) keeps its Server.* reason.
            let reason = region
                .instances
                .get(id)
                .and_then(|i| i.state_reason.clone())
                .filter(|(code, _)| code.starts_with("Server."))
                .unwrap_or_else(user_initiated_shutdown);
            terminate_now(region, id, reason);
        }
        _ => {}
    }
    // Metadata options modified while it ran, or while it was stopped, apply once it runs.
    if let Some(i) = region.instances.0.get_mut(id)
        && i.state == InstanceStateName::Running
        && i.metadata.state == Some(InstanceMetadataOptionsState::Pending)
    {
        i.metadata.state = Some(InstanceMetadataOptionsState::Applied);
    }
}

/// Forgets a terminated instance after AWS's retention.
pub fn purge(region: &mut Region, id: &str) {
    if let Some(i) = region.instances.get(id)
        && i.state == InstanceStateName::Terminated
    {
        let (vpc, subnet) = (i.vpc_id.clone(), i.subnet_id.clone());
        if let Some(request) = i.spot_request.clone() {
            crate::ec2::spot_request::forget(region, &request);
        }
        region.instances.0.remove(id);
        region.by_vpc.remove(&vpc, id);
        region.by_subnet.remove(&subnet, id);
        region.tags.remove_resource(id);
    }
}

/// Instance `id`, when pending or running, shutting down at EC2's own initiative for
/// `reason` (a `Server.*` code, kept once it is terminated): as TerminateInstances would,
/// with `Service initiated` as the transition reason.
pub fn service_shutdown(region: &mut Region, id: &str, reason: (String, String)) {
    let Some(i) = region.instances.0.get_mut(id) else {
        return;
    };
    if !matches!(
        i.state,
        InstanceStateName::Pending | InstanceStateName::Running
    ) {
        return;
    }
    i.state_reason = Some(reason);
    set_state(
        region,
        id,
        InstanceStateName::ShuttingDown,
        "Service initiated",
    );
}

/// Checks every id first, so that a bad id changes nothing.
pub(super) fn checked<'a>(
    region: &'a Region,
    ids: &[String],
) -> Result<Vec<&'a Instance>, ApiError> {
    if ids.is_empty() {
        return Err(ApiError::missing_parameter("InstanceId"));
    }
    Kind::Instance.select(&region.instances, Some(ids))
}

pub(super) fn change(
    id: &str,
    previous: InstanceStateName,
    current: InstanceStateName,
) -> InstanceStateChange {
    InstanceStateChange {
        instance_id: Some(id.to_string()),
        current_state: Some(state(current)),
        previous_state: Some(state(previous)),
    }
}

pub(super) fn set_state(region: &mut Region, id: &str, to: InstanceStateName, reason: &str) {
    let now = crate::protocol::xml::format_timestamp(region.clock.now_datetime());
    // AWS's words carry whole seconds: `User initiated (2026-12-05 21:57:38 GMT)`.
    let seconds = now
        .split(['.', 'Z'])
        .next()
        .unwrap_or_default()
        .replace('T', " ");
    if let Some(i) = region.instances.0.get_mut(id) {
        i.state = to;
        i.transition_reason = format!("{reason} ({seconds} GMT)");
    }
    let at = region.clock.now();
    region.transitions.schedule(at, Subject::Instance, id);
    // An instance of a maintain fleet shutting down: the fleet makes up its capacity.
    if to == InstanceStateName::ShuttingDown
        && let Some(fleet) = region
            .tags
            .get(id)
            .and_then(|t| t.get(crate::ec2::fleet::FLEET_TAG))
            .cloned()
    {
        crate::ec2::fleet::member_gone(region, &fleet);
    }
}

/// `OperationNotPermitted` naming the first of `instances` whose protection is on (its
/// `attribute`, which keeps it from being `done`).
fn refuse_protected(
    instances: &[&Instance],
    protected: fn(&Instance) -> bool,
    done: &str,
    attribute: &str,
) -> Result<(), ApiError> {
    match instances.iter().find(|i| protected(i)) {
        Some(i) => Err(ApiError::new(
            Code::OperationNotPermitted,
            format!(
                "The instance '{}' may not be {done}. Modify its '{attribute}' instance attribute and try again.",
                i.id
            ),
        )),
        None => Ok(()),
    }
}

/// `TerminateInstances`: idempotent for instances already terminating.
pub fn terminate_instances(
    region: &mut Region,
    input: TerminateInstancesRequest,
) -> Result<TerminateInstancesResult, ApiError> {
    let instances = checked(region, &input.instance_ids)?;
    refuse_protected(
        &instances,
        |i| i.disable_api_termination,
        "terminated",
        "disableApiTermination",
    )?;
    let plan: Vec<(String, InstanceStateName)> =
        instances.iter().map(|i| (i.id.clone(), i.state)).collect();
    let spot: Vec<String> = instances
        .iter()
        .filter_map(|i| i.spot_request.clone())
        .collect();
    for request in spot {
        crate::ec2::spot_request::instance_terminated(region, &request);
    }
    let mut out = Vec::new();
    for (id, previous) in plan {
        let current = if matches!(
            previous,
            InstanceStateName::ShuttingDown | InstanceStateName::Terminated
        ) {
            previous
        } else {
            set_state(
                region,
                &id,
                InstanceStateName::ShuttingDown,
                "User initiated",
            );
            InstanceStateName::ShuttingDown
        };
        out.push(change(&id, previous, current));
    }
    Ok(TerminateInstancesResult {
        terminating_instances: Some(out),
    })
}

/// `StopInstances`.
pub fn stop_instances(
    region: &mut Region,
    input: StopInstancesRequest,
) -> Result<StopInstancesResult, ApiError> {
    // `SkipOsShutdown` and `Force` change how the guest is shut down, which the fake has none of.
    let hibernate = input.hibernate == Some(true);
    let instances = checked(region, &input.instance_ids)?;
    refuse_protected(
        &instances,
        |i| i.disable_api_stop,
        "stopped",
        "disableApiStop",
    )?;
    for i in &instances {
        match i.state {
            InstanceStateName::Pending => {
                return Err(ApiError::new(
                    Code::IncorrectInstanceState,
                    format!(
                        "Instance '{}' cannot be stopped as it has never reached the 'running' state.",
                        i.id
                    ),
                ));
            }
            InstanceStateName::ShuttingDown | InstanceStateName::Terminated => {
                return Err(ApiError::new(
                    Code::IncorrectInstanceState,
                    format!(
                        "This instance '{}' is not in a state from which it can be stopped.",
                        i.id
                    ),
                ));
            }
            _ => {}
        }
        if i.spot_request.is_some() {
            return Err(crate::ec2::spot_request::cannot_stop(&i.id));
        }
        if hibernate && i.state == InstanceStateName::Running && !i.options.hibernation {
            return Err(ApiError::new(
                Code::UnsupportedHibernationConfiguration,
                format!(
                    "The instance can't be hibernated because it was not configured at launch \
                     for hibernation: {}",
                    i.id
                ),
            ));
        }
    }
    let plan: Vec<(String, InstanceStateName)> =
        instances.iter().map(|i| (i.id.clone(), i.state)).collect();
    let mut out = Vec::new();
    for (id, previous) in plan {
        let current = if previous == InstanceStateName::Running {
            set_state(region, &id, InstanceStateName::Stopping, "User initiated");
            if let Some(i) = region.instances.0.get_mut(&id) {
                i.hibernating = hibernate;
            }
            InstanceStateName::Stopping
        } else {
            previous
        };
        out.push(change(&id, previous, current));
    }
    Ok(StopInstancesResult {
        stopping_instances: Some(out),
    })
}

/// `RebootInstances`: every id checked first; a running instance's reboot is queued (it stays
/// `running`, as AWS shows a rebooting instance), a terminated one's ignored, as AWS
/// documents; one pending, stopping, stopped or shutting down cannot be rebooted.
pub fn reboot_instances(
    region: &mut Region,
    input: RebootInstancesRequest,
) -> Result<(), ApiError> {
    let instances = checked(region, &input.instance_ids)?;
    if let Some(i) = instances.iter().find(|i| {
        !matches!(
            i.state,
            InstanceStateName::Running | InstanceStateName::Terminated
        )
    }) {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!(
                "The instance '{}' is not in a state from which it can be rebooted.",
                i.id
            ),
        ));
    }
    // A terminated instance is taken and left as it is; a running one reboots.
    let running: Vec<String> = instances
        .iter()
        .filter(|i| i.state == InstanceStateName::Running)
        .map(|i| i.id.clone())
        .collect();
    let at = region.clock.now_datetime();
    for id in running {
        if let Some(i) = region.instances.0.get_mut(&id) {
            super::console::post(i, at, super::console::Did::Rebooted);
        }
    }
    Ok(())
}

/// `StartInstances`.
pub fn start_instances(
    region: &mut Region,
    input: StartInstancesRequest,
) -> Result<StartInstancesResult, ApiError> {
    let instances = checked(region, &input.instance_ids)?;
    for i in &instances {
        if matches!(
            i.state,
            InstanceStateName::Stopping
                | InstanceStateName::ShuttingDown
                | InstanceStateName::Terminated
        ) {
            return Err(ApiError::new(
                Code::IncorrectInstanceState,
                format!(
                    "The instance '{}' is not in a state from which it can be started.",
                    i.id
                ),
            ));
        }
    }
    // An instance of `host` tenancy starts on a Dedicated Host with room for it; one that
    // targets a Capacity Reservation, in it.
    let hosts = crate::ec2::dedicated_host::for_start(region, &instances)?;
    let reserved = crate::ec2::capacity_reservation::for_start(region, &instances)?;
    let plan: Vec<(String, InstanceStateName)> =
        instances.iter().map(|i| (i.id.clone(), i.state)).collect();
    for (id, host) in hosts {
        if let Some(i) = region.instances.0.get_mut(&id) {
            i.host_id = Some(host);
        }
    }
    for (id, reservation) in reserved {
        if let Some(i) = region.instances.0.get_mut(&id) {
            i.capacity_reservation = reservation;
        }
    }
    let mut out = Vec::new();
    for (id, previous) in plan {
        let current = if previous == InstanceStateName::Stopped {
            set_state(region, &id, InstanceStateName::Pending, "");
            if let Some(i) = region.instances.0.get_mut(&id) {
                i.state_reason = Some(pending_reason());
                i.transition_reason = String::new();
            }
            InstanceStateName::Pending
        } else {
            previous
        };
        out.push(change(&id, previous, current));
    }
    Ok(StartInstancesResult {
        starting_instances: Some(out),
    })
}
