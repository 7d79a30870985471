//! ModifyInstancePlacement: a stopped instance's tenancy changed, or the instance moved into,
//! between or out of placement groups, as the API reference documents.
//!
//! At least one of tenancy and placement group is named (`MissingParameter` otherwise, the
//! fake's words); the instance must be `stopped` (`IncorrectInstanceState`, in the words
//! ModifyInstanceAttribute uses for the same rule). A group is named by `GroupName` or
//! `GroupId` and checked as a launch into it is checked (the partition, a cluster group's
//! one zone); `GroupName` `""` takes the instance out of its group. Dedicated Hosts are not
//! served, so `host` tenancy, `Affinity`, `HostId` and `HostResourceGroupArn` are
//! `NotImplemented`.

use crate::ec2::error::Code;
use crate::ec2::{Kind, placement_group};
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
    for (given, member) in [
        (input.affinity.is_some(), "Affinity"),
        (input.host_id.is_some(), "HostId"),
        (
            input.host_resource_group_arn.is_some(),
            "HostResourceGroupArn",
        ),
        (input.tenancy == Some(HostTenancy::Host), "Tenancy host"),
    ] {
        if given {
            return Err(ApiError::not_implemented(format!(
                "ModifyInstancePlacement {member}: fakeaws has no Dedicated Hosts"
            )));
        }
    }
    let moves = input.group_name.is_some() || input.group_id.is_some();
    if input.tenancy.is_none() && !moves {
        if input.partition_number.is_some() {
            return Err(ApiError::invalid_combination(
                "PartitionNumber needs the placement group it is a partition of (GroupName or GroupId).",
            ));
        }
        return Err(ApiError::missing_parameter(
            "Tenancy, GroupName or GroupId (at least one placement attribute)",
        ));
    }
    let id = input.instance_id.clone();
    let i = Kind::Instance.get(&region.instances, &id)?;
    if i.state != InstanceStateName::Stopped {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!("The instance '{id}' is not in the 'stopped' state."),
        ));
    }
    if i.tenancy == Tenancy::Host && input.tenancy.is_some() {
        return Err(ApiError::new(
            Code::InvalidRequest,
            format!("The tenancy of instance '{id}' cannot be changed from host."),
        ));
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
    if let Some(group) = group {
        let (group_id, partition) = group.unzip();
        i.placement_group = group_id;
        i.partition = partition.flatten();
    }
    Ok(ModifyInstancePlacementResult {
        r#return: Some(true),
    })
}
