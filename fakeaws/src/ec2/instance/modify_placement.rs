//! ModifyInstancePlacement: a stopped instance's tenancy changed, the instance moved into,
//! between or out of placement groups, or onto a Dedicated Host, and its affinity to its host
//! changed, as the API reference documents.
//!
//! At least one of tenancy, host, affinity and placement group is named (`MissingParameter`
//! otherwise, the fake's words); the instance must be `stopped` (`IncorrectInstanceState`, in
//! the words ModifyInstanceAttribute uses for the same rule), but for a change of affinity
//! alone. A group is named by `GroupName` or `GroupId` and checked as a launch into it is
//! checked (the partition, a cluster group's one zone); `GroupName` `""` takes the instance
//! out of its group. `HostId` (a host available in the instance's zone that runs its type)
//! makes it `host` tenancy on that host; `Tenancy` `host` without one leaves the host to its
//! next start (a host of its zone with auto placement); `Affinity` only for an instance of
//! `host` tenancy (`InvalidParameterCombination`). An instance of `host` tenancy cannot
//! change to another (`InvalidRequest`). `HostResourceGroupArn` is `NotImplemented`.

use crate::ec2::error::Code;
use crate::ec2::{Kind, dedicated_host, placement_group};
use crate::generated::ec2::{
    HostTenancy, InstanceStateName, ModifyInstancePlacementRequest, ModifyInstancePlacementResult,
    Placement, Tenancy,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// Where the instance goes: its group (`None` out of any) and partition.
type Group = Option<(String, Option<i32>)>;

/// `ModifyInstancePlacement`.
pub fn modify_instance_placement(
    region: &mut Region,
    input: ModifyInstancePlacementRequest,
) -> Result<ModifyInstancePlacementResult, ApiError> {
    if input.host_resource_group_arn.is_some() {
        return Err(ApiError::not_implemented(
            "ModifyInstancePlacement HostResourceGroupArn: fakeaws has no host resource groups",
        ));
    }
    let moves = input.group_name.is_some() || input.group_id.is_some();
    let affinity_only = input.tenancy.is_none() && input.host_id.is_none() && !moves;
    if affinity_only && input.affinity.is_none() {
        if input.partition_number.is_some() {
            return Err(ApiError::invalid_combination(
                "PartitionNumber needs the placement group it is a partition of (GroupName or GroupId).",
            ));
        }
        return Err(ApiError::missing_parameter(
            "Tenancy, HostId, Affinity, GroupName or GroupId (at least one placement attribute)",
        ));
    }
    let id = input.instance_id.clone();
    let i = Kind::Instance.get(&region.instances, &id)?;
    if !affinity_only && i.state != InstanceStateName::Stopped {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!("The instance '{id}' is not in the 'stopped' state."),
        ));
    }
    if i.tenancy == Tenancy::Host && input.tenancy.is_some_and(|t| t != HostTenancy::Host) {
        return Err(ApiError::new(
            Code::InvalidRequest,
            format!("The tenancy of instance '{id}' cannot be changed from host."),
        ));
    }
    let to_host = input.host_id.is_some() || input.tenancy == Some(HostTenancy::Host);
    if input.affinity.is_some() && i.tenancy != Tenancy::Host && !to_host {
        return Err(ApiError::invalid_combination(format!(
            "Affinity is valid only for an instance of host tenancy; '{id}' is of {} tenancy.",
            i.tenancy.as_str()
        )));
    }
    if let Some(host) = &input.host_id {
        dedicated_host::named_host(region, host, i.instance_type, &i.zone)?;
    }
    let zone = i.zone.clone();
    let group: Option<Group> = if !moves {
        None
    } else if input.group_name.as_deref() == Some("") && input.group_id.is_none() {
        if input.partition_number.is_some() {
            return Err(ApiError::invalid_combination(
                "PartitionNumber cannot be given when the instance leaves its placement group.",
            ));
        }
        Some(None)
    } else {
        let asked = Placement {
            group_name: input.group_name.clone(),
            group_id: input.group_id.clone(),
            partition_number: input.partition_number,
            ..Default::default()
        };
        placement_group::for_launch(region, &asked, &zone, 1)?
            .map(|g| Some((g.group_id.clone(), g.partition(0))))
    };
    let i = Kind::Instance.get_mut(&mut region.instances.0, &id)?;
    match input.tenancy {
        Some(HostTenancy::Dedicated) => i.tenancy = Tenancy::Dedicated,
        Some(HostTenancy::Default) => i.tenancy = Tenancy::Default,
        Some(HostTenancy::Host) | None => {}
    }
    if to_host && i.tenancy != Tenancy::Host {
        i.tenancy = Tenancy::Host;
        i.host_id = None;
        i.affinity.get_or_insert_with(|| "default".to_string());
    }
    if let Some(host) = input.host_id {
        i.host_id = Some(host);
    }
    if let Some(a) = input.affinity {
        i.affinity = Some(a.as_str().to_string());
    }
    if let Some(group) = group {
        let (group_id, partition) = group.unzip();
        i.placement_group = group_id;
        i.partition = partition.flatten();
    }
    Ok(ModifyInstancePlacementResult {
        r#return: Some(true),
    })
}
