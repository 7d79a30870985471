//! Detailed monitoring: MonitorInstances and UnmonitorInstances. Each answers the instances
//! while the change is under way (`pending`, `disabling`), as the AWS CLI's documented
//! examples show; DescribeInstances shows it done (`enabled`, `disabled`) right after.

use crate::ec2::Kind;
use crate::generated::ec2::{
    InstanceMonitoring, MonitorInstancesRequest, MonitorInstancesResult, Monitoring,
    MonitoringState, UnmonitorInstancesRequest, UnmonitorInstancesResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// Turns detailed monitoring of `ids` on or off, all or none: each must exist and not be
/// terminated. Answers each `answered`.
fn set(
    region: &mut Region,
    ids: &[String],
    on: bool,
    answered: MonitoringState,
) -> Result<Vec<InstanceMonitoring>, ApiError> {
    if ids.is_empty() {
        return Err(ApiError::missing_parameter("InstanceId"));
    }
    for i in Kind::Instance.select(&region.instances, Some(ids))? {
        super::refuse_if_gone(i, "its monitoring")?;
    }
    let mut out = Vec::new();
    for id in ids {
        if let Some(i) = region.instances.0.get_mut(id) {
            i.monitoring = on;
        }
        out.push(InstanceMonitoring {
            instance_id: Some(id.clone()),
            monitoring: Some(Monitoring {
                state: Some(answered),
                metric_category_ids: None,
            }),
        });
    }
    Ok(out)
}

/// `MonitorInstances`.
pub fn monitor_instances(
    region: &mut Region,
    input: MonitorInstancesRequest,
) -> Result<MonitorInstancesResult, ApiError> {
    let out = set(region, &input.instance_ids, true, MonitoringState::Pending)?;
    Ok(MonitorInstancesResult {
        instance_monitorings: Some(out),
    })
}

/// `UnmonitorInstances`.
pub fn unmonitor_instances(
    region: &mut Region,
    input: UnmonitorInstancesRequest,
) -> Result<UnmonitorInstancesResult, ApiError> {
    let out = set(
        region,
        &input.instance_ids,
        false,
        MonitoringState::Disabling,
    )?;
    Ok(UnmonitorInstancesResult {
        instance_monitorings: Some(out),
    })
}
