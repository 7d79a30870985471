//! Instances behind a load balancer: registration, deregistration, their health (OutOfService
//! until the registration's transition makes them InService).

use crate::elb::error::Code;
use crate::generated::ec2::InstanceStateName;
use crate::generated::elb::{
    DeregisterEndPointsInput, DeregisterEndPointsOutput, DescribeEndPointStateInput,
    DescribeEndPointStateOutput, Instance as InstanceRef, InstanceState, RegisterEndPointsInput,
    RegisterEndPointsOutput,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::*;

pub(super) fn instance_ids(instances: &[InstanceRef]) -> Result<Vec<String>, ApiError> {
    instances
        .iter()
        .map(|i| {
            i.instance_id
                .clone()
                .ok_or_else(|| ApiError::missing_parameter("Instances.member.N.InstanceId"))
        })
        .collect()
}

pub(super) fn invalid_instance(message: String) -> ApiError {
    ApiError::new(Code::InvalidInstance, message)
}

/// `RegisterInstancesWithLoadBalancer`: instances of the load balancer's VPC.
pub fn register_instances_with_load_balancer(
    region: &mut Region,
    input: RegisterEndPointsInput,
) -> Result<RegisterEndPointsOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let ids = instance_ids(&input.instances)?;
    for id in &ids {
        let inst = region
            .instances
            .get(id)
            .filter(|i| !i.is_gone())
            .ok_or_else(|| {
                invalid_instance(format!("The following instance is not valid: {id}"))
            })?;
        if Some(&inst.vpc_id) != lb.vpc_id.as_ref() {
            return Err(invalid_instance(format!(
                "The following instance is not in the same VPC as the load balancer: {id}"
            )));
        }
    }
    let now = region.clock.now();
    let name = input.load_balancer_name.clone();
    let mut newly = Vec::new();
    let lb = get_mut(region, &name)?;
    for id in ids {
        if !lb.instances.contains_key(&id) {
            lb.instances.insert(id.clone(), false);
            newly.push(id);
        }
    }
    let registered = render_instances(lb);
    for id in newly {
        region.transitions.schedule(
            now,
            Subject::LoadBalancerRegistration,
            &format!("{name}\n{id}"),
        );
    }
    Ok(RegisterEndPointsOutput {
        instances: Some(registered),
    })
}

pub(super) fn render_instances(lb: &LoadBalancer) -> Vec<InstanceRef> {
    lb.instances
        .keys()
        .map(|i| InstanceRef {
            instance_id: Some(i.clone()),
        })
        .collect()
}

/// Completes an instance's registration (`"<lb name>\n<instance id>"`).
pub fn advance(region: &mut Region, key: &str) {
    let Some((name, id)) = key.split_once('\n') else {
        return;
    };
    // A registration asked to fail stays OutOfService, as an instance failing its health
    // check does.
    if region
        .transitions
        .take_failure(Subject::LoadBalancerRegistration)
        .is_some()
    {
        return;
    }
    if let Some(slot) = region
        .load_balancers
        .0
        .get_mut(name)
        .and_then(|lb| lb.instances.get_mut(id))
    {
        *slot = true;
    }
}

/// `DeregisterInstancesFromLoadBalancer`.
pub fn deregister_instances_from_load_balancer(
    region: &mut Region,
    input: DeregisterEndPointsInput,
) -> Result<DeregisterEndPointsOutput, ApiError> {
    let ids = instance_ids(&input.instances)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    if let Some(id) = ids.iter().find(|i| !lb.instances.contains_key(*i)) {
        return Err(invalid_instance(format!(
            "The instance {id} is not registered with the load balancer"
        )));
    }
    for id in &ids {
        lb.instances.remove(id);
    }
    Ok(DeregisterEndPointsOutput {
        instances: Some(render_instances(lb)),
    })
}

/// `DescribeInstanceHealth`: `InService` once registration completed and the instance runs.
pub fn describe_instance_health(
    region: &mut Region,
    input: DescribeEndPointStateInput,
) -> Result<DescribeEndPointStateOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let ids = match &input.instances {
        Some(list) if !list.is_empty() => instance_ids(list)?,
        _ => lb.instances.keys().cloned().collect(),
    };
    let mut states = Vec::new();
    for id in ids {
        let Some(done) = lb.instances.get(&id) else {
            return Err(invalid_instance(format!(
                "The instance {id} is not registered with the load balancer"
            )));
        };
        let running = region.instances.get(&id).map(|i| i.state);
        let (state, reason, description) = match (running, done) {
            (Some(InstanceStateName::Running), true) => ("InService", "N/A", "N/A".to_string()),
            (Some(InstanceStateName::Running) | Some(InstanceStateName::Pending), false) => (
                "OutOfService",
                "ELB",
                "Instance registration is still in progress.".to_string(),
            ),
            (Some(s), _) => (
                "OutOfService",
                "Instance",
                format!("Instance is in {} state.", s.as_str()),
            ),
            (None, _) => (
                "OutOfService",
                "Instance",
                "Instance is in terminated state.".to_string(),
            ),
        };
        states.push(InstanceState {
            instance_id: Some(id),
            state: Some(state.to_string()),
            reason_code: Some(reason.to_string()),
            description: Some(description),
        });
    }
    Ok(DescribeEndPointStateOutput {
        instance_states: Some(states),
    })
}
