//! DescribeInstanceStatus: the state and status checks of instances, filtered.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    DescribeInstanceStatusRequest, DescribeInstanceStatusResult, InstanceStateName, InstanceStatus,
    InstanceStatusDetails, InstanceStatusSummary, StatusName, StatusType, SummaryStatus,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

pub(super) struct StatusRow<'a> {
    pub(super) instance: &'a Instance,
    pub(super) region: &'a Region,
}

pub(super) fn summary(i: &Instance) -> SummaryStatus {
    match i.state {
        InstanceStateName::Running => SummaryStatus::Ok,
        InstanceStateName::Pending => SummaryStatus::Initializing,
        _ => SummaryStatus::NotApplicable,
    }
}

impl Filterable for StatusRow<'_> {
    const NAMES: &'static [&'static str] = &[
        "application-status.status",
        "availability-zone",
        "availability-zone-id",
        "event.code",
        "event.description",
        "event.instance-event-id",
        "event.not-after",
        "event.not-before",
        "event.not-before-deadline",
        "instance-state-code",
        "instance-state-name",
        "instance-status.reachability",
        "instance-status.status",
        "system-status.reachability",
        "system-status.status",
        "attached-ebs-status.status",
        "operator.managed",
        "operator.principal",
    ];
    // No scheduled events, application status or operators here.
    const NEVER_SET: &'static [&'static str] = &[
        "application-status.status",
        "operator.managed",
        "operator.principal",
        "event.code",
        "event.description",
        "event.instance-event-id",
        "event.not-after",
        "event.not-before",
        "event.not-before-deadline",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let i = self.instance;
        match name {
            "availability-zone" => one(i.zone.clone()),
            "availability-zone-id" => self
                .region
                .zone(&i.zone)
                .map(|z| one(z.id.clone()))
                .unwrap_or_default(),
            "instance-state-code" => one(state_code(i.state).to_string()),
            "instance-state-name" => one(i.state.as_str()),
            "instance-status.status" | "system-status.status" | "attached-ebs-status.status" => {
                one(summary(i).as_str())
            }
            "instance-status.reachability" | "system-status.reachability" => {
                one(match summary(i) {
                    SummaryStatus::Ok => "passed",
                    SummaryStatus::Initializing => "initializing",
                    _ => "insufficient-data",
                })
            }
            _ => Vec::new(),
        }
    }
}

/// `DescribeInstanceStatus`: running instances, or all with IncludeAllInstances.
pub fn describe_instance_status(
    region: &mut Region,
    input: DescribeInstanceStatusRequest,
) -> Result<DescribeInstanceStatusResult, ApiError> {
    let filters = Filters::parse::<StatusRow>(input.filters)?;
    let region = &*region;
    if input.instance_ids.as_ref().is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter instancesSet cannot be used with the parameter maxResults",
        ));
    }
    page::check_max_results(input.max_results, 5, 1000)?;
    let all = input.include_all_instances == Some(true);
    let found = Kind::Instance.describe(
        &region.consistency,
        &region.instances,
        input.instance_ids.as_deref(),
        None,
        |i| {
            (all || i.state == InstanceStateName::Running)
                && filters.matches(
                    &StatusRow {
                        instance: i,
                        region,
                    },
                    None,
                )
        },
    )?;
    let (items, next) = page::page(
        found,
        |i| i.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    let detail = |i: &Instance| {
        let s = summary(i);
        InstanceStatusSummary {
            details: (s != SummaryStatus::NotApplicable).then(|| {
                vec![InstanceStatusDetails {
                    impaired_since: None,
                    name: Some(StatusName::Reachability),
                    status: Some(if s == SummaryStatus::Ok {
                        StatusType::Passed
                    } else {
                        StatusType::Initializing
                    }),
                }]
            }),
            status: Some(s),
        }
    };
    Ok(DescribeInstanceStatusResult {
        instance_statuses: Some(
            items
                .into_iter()
                .map(|i| InstanceStatus {
                    availability_zone: Some(i.zone.clone()),
                    availability_zone_id: region.zone(&i.zone).map(|z| z.id.clone()),
                    events: Some(Vec::new()),
                    instance_id: Some(i.id.clone()),
                    instance_state: Some(state(i.state)),
                    instance_status: Some(detail(i)),
                    system_status: Some(detail(i)),
                    ..Default::default()
                })
                .collect(),
        ),
        next_token: next,
    })
}
