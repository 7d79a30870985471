//! Where a load balancer sits: its subnets (one per zone), the node interface it keeps in
//! each, and its security groups.

use std::collections::BTreeMap;

use crate::ec2::network_interface::{self, NewInterface};
use crate::elb::error::Code;
use crate::generated::ec2::NetworkInterfaceType;
use crate::generated::elb::{
    AddAvailabilityZonesInput, AddAvailabilityZonesOutput, ApplySecurityGroupsToLoadBalancerInput,
    ApplySecurityGroupsToLoadBalancerOutput, AttachLoadBalancerToSubnetsInput,
    AttachLoadBalancerToSubnetsOutput, DetachLoadBalancerFromSubnetsInput,
    DetachLoadBalancerFromSubnetsOutput, RemoveAvailabilityZonesInput,
    RemoveAvailabilityZonesOutput,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::*;

/// Who AWS shows as the requester and instance owner of a load balancer's interfaces.
const SERVICE: &str = "amazon-elb";

/// The free addresses ELB requires of each subnet it places a node in.
const FREE_ADDRESSES: u32 = 8;

/// Fails unless each of `subnets` has the free addresses a load balancer's node requires
/// (`InvalidSubnet`, AWS's words).
pub(super) fn check_room(region: &Region, subnets: &[String]) -> Result<(), ApiError> {
    for id in subnets {
        let free = region
            .subnets
            .get(id)
            .map_or(0, |s| s.assignable_addresses());
        if free < FREE_ADDRESSES {
            return Err(ApiError::new(
                Code::InvalidSubnet,
                format!(
                    "Not enough IP space available in {id}. ELB requires at least \
                     {FREE_ADDRESSES} free IP addresses in each subnet."
                ),
            ));
        }
    }
    Ok(())
}

/// Places load balancer `name`'s node in each of `subnets` (checked by [`check_room`]): an
/// interface ELB makes and manages, `ELB name`, with the load balancer's `groups`, holding
/// an address of the subnet (and a public one unless `internal`). Returns subnet -> interface;
/// on a failure, the interfaces already made go again.
pub(super) fn place_nodes(
    region: &mut Region,
    name: &str,
    subnets: &[String],
    groups: &[String],
    internal: bool,
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut placed = BTreeMap::new();
    for subnet in subnets {
        let made = network_interface::create(
            region,
            NewInterface {
                subnet_id: subnet,
                groups: groups.to_vec(),
                interface_type: NetworkInterfaceType::Interface,
                requester_managed: true,
                description: format!("ELB {name}"),
                private_ip: None,
            },
        );
        match made {
            Ok(eni) => {
                network_interface::hand_to_service(region, &eni, SERVICE, !internal);
                placed.insert(subnet.clone(), eni);
            }
            Err(e) => {
                for eni in placed.values() {
                    network_interface::delete(region, eni);
                }
                return Err(e);
            }
        }
    }
    Ok(placed)
}

/// Lets node interfaces `enis` go as AWS does, not at once: they stay, holding their subnets'
/// addresses and their security groups, until the clock's next step (a profile or a test may
/// delay it: `loadBalancerInterface`).
pub(super) fn release_nodes<'a>(region: &mut Region, enis: impl IntoIterator<Item = &'a String>) {
    let now = region.clock.now();
    for eni in enis {
        region
            .transitions
            .schedule(now, Subject::LoadBalancerInterface, eni);
    }
}

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
    let new: Vec<String> = all
        .iter()
        .filter(|s| !lb.subnets.contains(s))
        .cloned()
        .collect();
    let (groups, internal) = (lb.security_groups.clone(), lb.internal);
    check_room(region, &new)?;
    let placed = place_nodes(region, &input.load_balancer_name, &new, &groups, internal)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.subnets = all;
    lb.nodes.extend(placed);
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
    let subnets = lb.subnets.clone();
    let (kept, gone): (BTreeMap<String, String>, BTreeMap<String, String>) =
        std::mem::take(&mut lb.nodes)
            .into_iter()
            .partition(|(s, _)| subnets.contains(s));
    lb.nodes = kept;
    release_nodes(region, gone.values());
    Ok(DetachLoadBalancerFromSubnetsOutput {
        subnets: Some(subnets),
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
    let nodes: Vec<String> = lb.nodes.values().cloned().collect();
    for eni in &nodes {
        network_interface::set_groups(region, eni, input.security_groups.clone());
    }
    Ok(ApplySecurityGroupsToLoadBalancerOutput {
        security_groups: Some(input.security_groups),
    })
}

/// Fails unless load balancer `name` is in the default VPC: zones are enabled and disabled
/// only there, as the API reference says (elsewhere, subnets are attached and detached).
fn in_default_vpc(region: &Region, name: &str) -> Result<(), ApiError> {
    let lb = get(region, name)?;
    let default = region.default_vpc().map(|v| v.id.as_str());
    if lb.vpc_id.is_none() || lb.vpc_id.as_deref() != default {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            format!(
                "Load balancer {name} is not in the default VPC: use \
                 AttachLoadBalancerToSubnets and DetachLoadBalancerFromSubnets"
            ),
        ));
    }
    Ok(())
}

/// `EnableAvailabilityZonesForLoadBalancer`: the default subnet of each zone joins, as
/// AttachLoadBalancerToSubnets joins a subnet; answers the zones after.
pub fn enable_availability_zones_for_load_balancer(
    region: &mut Region,
    input: AddAvailabilityZonesInput,
) -> Result<AddAvailabilityZonesOutput, ApiError> {
    in_default_vpc(region, &input.load_balancer_name)?;
    let subnets = default_subnets_in(region, &input.availability_zones)?;
    attach_load_balancer_to_subnets(
        region,
        AttachLoadBalancerToSubnetsInput {
            load_balancer_name: input.load_balancer_name.clone(),
            subnets,
        },
    )?;
    let lb = get(region, &input.load_balancer_name)?;
    Ok(AddAvailabilityZonesOutput {
        availability_zones: Some(zones_of(region, lb)),
    })
}

/// `DisableAvailabilityZonesForLoadBalancer`: the load balancer's subnets in the zones leave,
/// as DetachLoadBalancerFromSubnets lets them go (one zone always stays:
/// `InvalidConfigurationRequest`); answers the zones after.
pub fn disable_availability_zones_for_load_balancer(
    region: &mut Region,
    input: RemoveAvailabilityZonesInput,
) -> Result<RemoveAvailabilityZonesOutput, ApiError> {
    in_default_vpc(region, &input.load_balancer_name)?;
    let lb = get(region, &input.load_balancer_name)?;
    let leaving: Vec<String> = lb
        .subnets
        .iter()
        .filter(|s| {
            region
                .subnets
                .get(s.as_str())
                .is_some_and(|s| input.availability_zones.contains(&s.zone))
        })
        .cloned()
        .collect();
    detach_load_balancer_from_subnets(
        region,
        DetachLoadBalancerFromSubnetsInput {
            load_balancer_name: input.load_balancer_name.clone(),
            subnets: leaving,
        },
    )?;
    let lb = get(region, &input.load_balancer_name)?;
    Ok(RemoveAvailabilityZonesOutput {
        availability_zones: Some(zones_of(region, lb)),
    })
}
