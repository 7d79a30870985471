//! Where a load balancer sits: its subnets (one per zone) and security groups.

use crate::elb::error::Code;
use crate::generated::elb::{
    ApplySecurityGroupsToLoadBalancerInput, ApplySecurityGroupsToLoadBalancerOutput,
    AttachLoadBalancerToSubnetsInput, AttachLoadBalancerToSubnetsOutput,
    DetachLoadBalancerFromSubnetsInput, DetachLoadBalancerFromSubnetsOutput,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// Checks subnets for a load balancer: they exist, lie in one VPC, one per zone.
pub(super) fn check_subnets(
    region: &Region,
    ids: &[String],
) -> Result<(String, Vec<String>), ApiError> {
    let mut zones: Vec<String> = Vec::new();
    let mut vpc_id: Option<String> = None;
    for id in ids {
        let subnet = region.subnets.get(id).ok_or_else(|| {
            ApiError::new(
                Code::SubnetNotFound,
                format!("The subnet '{id}' does not exist"),
            )
        })?;
        if zones.contains(&subnet.zone) {
            return Err(ApiError::new(
                Code::InvalidConfigurationRequest,
                "LoadBalancer attached to multiple subnets in the same AZ.",
            ));
        }
        match &vpc_id {
            Some(v) if *v != subnet.vpc_id => {
                return Err(ApiError::new(
                    Code::InvalidConfigurationRequest,
                    "All subnets must belong to the same VPC.",
                ));
            }
            _ => vpc_id = Some(subnet.vpc_id.clone()),
        }
        zones.push(subnet.zone.clone());
    }
    let vpc = vpc_id.ok_or_else(|| validation("At least one subnet is required"))?;
    Ok((vpc, zones))
}

pub(super) fn check_groups(
    region: &Region,
    vpc_id: &str,
    groups: &[String],
) -> Result<(), ApiError> {
    for g in groups {
        let ok = region
            .security_groups
            .get(g)
            .is_some_and(|s| s.vpc_id == vpc_id);
        if !ok {
            return Err(ApiError::new(
                Code::InvalidSecurityGroup,
                format!("One or more security groups are invalid: {g} does not exist in {vpc_id}"),
            ));
        }
    }
    Ok(())
}

/// The default subnets of the default VPC in `zones` (load balancers created by zone).
pub(super) fn default_subnets_in(
    region: &Region,
    zones: &[String],
) -> Result<Vec<String>, ApiError> {
    let Some(vpc) = region.default_vpc() else {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            "There is no default VPC: specify Subnets.",
        ));
    };
    zones
        .iter()
        .map(|z| {
            region
                .subnets
                .values()
                .find(|s| s.vpc_id == vpc.id && s.default_for_az && s.zone == *z)
                .map(|s| s.id.clone())
                .ok_or_else(|| {
                    validation(format!(
                        "There is no default subnet in availability zone {z}"
                    ))
                })
        })
        .collect()
}

/// `AttachLoadBalancerToSubnets`.
pub fn attach_load_balancer_to_subnets(
    region: &mut Region,
    input: AttachLoadBalancerToSubnetsInput,
) -> Result<AttachLoadBalancerToSubnetsOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let mut all = lb.subnets.clone();
    for s in &input.subnets {
        if !all.contains(s) {
            all.push(s.clone());
        }
    }
    let (vpc, _) = check_subnets(region, &all)?;
    if lb.vpc_id.as_deref() != Some(vpc.as_str()) {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            "All subnets must belong to the load balancer's VPC.",
        ));
    }
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.subnets = all;
    Ok(AttachLoadBalancerToSubnetsOutput {
        subnets: Some(lb.subnets.clone()),
    })
}

/// `DetachLoadBalancerFromSubnets`: a load balancer keeps at least one subnet.
pub fn detach_load_balancer_from_subnets(
    region: &mut Region,
    input: DetachLoadBalancerFromSubnetsInput,
) -> Result<DetachLoadBalancerFromSubnetsOutput, ApiError> {
    let lb = get_mut(region, &input.load_balancer_name)?;
    let left: Vec<String> = lb
        .subnets
        .iter()
        .filter(|s| !input.subnets.contains(s))
        .cloned()
        .collect();
    if left.is_empty() {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            "A load balancer must remain attached to at least one subnet.",
        ));
    }
    lb.subnets = left;
    Ok(DetachLoadBalancerFromSubnetsOutput {
        subnets: Some(lb.subnets.clone()),
    })
}

/// `ApplySecurityGroupsToLoadBalancer`: replaces the groups.
pub fn apply_security_groups_to_load_balancer(
    region: &mut Region,
    input: ApplySecurityGroupsToLoadBalancerInput,
) -> Result<ApplySecurityGroupsToLoadBalancerOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let vpc = lb.vpc_id.clone().unwrap_or_default();
    check_groups(region, &vpc, &input.security_groups)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.security_groups = input.security_groups.clone();
    Ok(ApplySecurityGroupsToLoadBalancerOutput {
        security_groups: Some(lb.security_groups.clone()),
    })
}
