//! `DescribeAccountLimits`: the account's Classic Load Balancer quotas, by the names AWS
//! answers them: `classic-load-balancers` (the region's `load-balancers` quota, 20 unless
//! raised), `classic-listeners` (100 per load balancer) and `classic-registered-instances`
//! (1,000 per load balancer), AWS's defaults. The last two are reported, not enforced: the
//! ELB model names no error for passing them.

use crate::elb::load_balancer::{MARKER, page};
use crate::generated::elb::{DescribeAccountLimitsInput, DescribeAccountLimitsOutput, Limit};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// Listeners per Classic Load Balancer, AWS's default quota.
const LISTENERS: usize = 100;

/// Registered instances per Classic Load Balancer, AWS's default quota.
const REGISTERED_INSTANCES: usize = 1000;

/// `DescribeAccountLimits`, in name order, paginated by Marker/PageSize.
pub fn describe_account_limits(
    region: &Region,
    input: DescribeAccountLimitsInput,
) -> Result<DescribeAccountLimitsOutput, ApiError> {
    let (page_size, after) = page(input.page_size, input.marker.as_deref())?;
    let all = [
        ("classic-listeners", LISTENERS),
        ("classic-load-balancers", region.limits.load_balancers),
        ("classic-registered-instances", REGISTERED_INSTANCES),
    ];
    let mut selected: Vec<(&str, usize)> = all
        .into_iter()
        .filter(|(name, _)| after.as_deref().is_none_or(|a| *name > a))
        .collect();
    let next_marker = if selected.len() > page_size {
        selected.truncate(page_size);
        selected.last().map(|(name, _)| format!("{MARKER}{name}"))
    } else {
        None
    };
    Ok(DescribeAccountLimitsOutput {
        limits: Some(
            selected
                .into_iter()
                .map(|(name, max)| Limit {
                    name: Some(name.to_string()),
                    max: Some(max.to_string()),
                })
                .collect(),
        ),
        next_marker,
    })
}
