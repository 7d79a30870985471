//! The attribute calls of an interface: ModifyNetworkInterfaceAttribute,
//! DescribeNetworkInterfaceAttribute (one attribute per call) and
//! ResetNetworkInterfaceAttribute (the source/destination check back to true).

use crate::ec2::{Kind, security_group};
use crate::generated::ec2::{
    AttributeBooleanValue, AttributeValue, DescribeNetworkInterfaceAttributeRequest,
    DescribeNetworkInterfaceAttributeResult, ModifyNetworkInterfaceAttributeRequest,
    NetworkInterfaceAttachmentChanges, NetworkInterfaceAttribute,
    ResetNetworkInterfaceAttributeRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::{NetworkInterface, group_identifiers, render_attachment};

/// `ModifyNetworkInterfaceAttribute`: one attribute per call (groups, source/destination
/// check, description, the attachment's DeleteOnTermination).
pub fn modify_network_interface_attribute(
    region: &mut Region,
    input: ModifyNetworkInterfaceAttributeRequest,
) -> Result<(), ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let given = usize::from(input.groups.is_some())
        + usize::from(input.source_dest_check.is_some())
        + usize::from(input.description.is_some())
        + usize::from(input.attachment.is_some())
        + usize::from(input.connection_tracking_specification.is_some())
        + usize::from(input.enable_primary_ipv6.is_some());
    if given == 0 {
        return Err(ApiError::missing_parameter(
            "Groups, SourceDestCheck, Description, Attachment, ConnectionTrackingSpecification \
             or EnablePrimaryIpv6",
        ));
    }
    if given > 1 {
        return Err(ApiError::invalid_combination(
            "Fields for multiple attribute types specified",
        ));
    }
    let groups = match &input.groups {
        Some(groups) if groups.is_empty() => {
            return Err(ApiError::missing_parameter("SecurityGroupId"));
        }
        Some(groups) => Some(security_group::checked_in_vpc(region, &eni.vpc_id, groups)?),
        None => None,
    };
    let tracking = super::tracking::asked(input.connection_tracking_specification.as_ref())?;
    match input.enable_primary_ipv6 {
        Some(true) => super::ipv6::check_primary(region, &eni.subnet_id)?,
        Some(false) if eni.primary_ipv6 => {
            return Err(ApiError::invalid_value(format!(
                "The network interface {} is enabled for a primary IPv6 address, which cannot \
                 be disabled.",
                eni.id
            )));
        }
        _ => {}
    }
    let delete_on_termination = match &input.attachment {
        Some(changes) => Some(attachment_change(eni, changes)?),
        None => None,
    };
    let source_dest = input
        .source_dest_check
        .as_ref()
        .map(|v| {
            v.value
                .ok_or_else(|| ApiError::missing_parameter("SourceDestCheck.Value"))
        })
        .transpose()?;
    let Some(eni) = region
        .network_interfaces
        .0
        .get_mut(&input.network_interface_id)
    else {
        return Err(Kind::NetworkInterface.not_found(&[&input.network_interface_id]));
    };
    if let Some(groups) = groups {
        eni.groups = groups;
    }
    if let Some(v) = source_dest {
        eni.source_dest_check = v;
    }
    if let Some(d) = input.description.and_then(|d| d.value) {
        eni.description = d;
    }
    if let Some(v) = delete_on_termination
        && let Some(a) = eni.attachment.as_mut()
    {
        a.delete_on_termination = v;
    }
    if let Some(t) = &tracking {
        super::tracking::merge(eni, t);
    }
    if input.enable_primary_ipv6 == Some(true) {
        eni.primary_ipv6 = true;
    }
    Ok(())
}

/// The DeleteOnTermination an `Attachment` change sets on `eni`'s attachment, checked: the
/// attachment it names must be the interface's.
fn attachment_change(
    eni: &NetworkInterface,
    changes: &NetworkInterfaceAttachmentChanges,
) -> Result<bool, ApiError> {
    if changes.ena_queue_count.is_some() || changes.default_ena_queue_count.is_some() {
        return Err(ApiError::not_implemented(
            "fakeaws does not serve Attachment.EnaQueueCount of ModifyNetworkInterfaceAttribute",
        ));
    }
    let id = changes
        .attachment_id
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("Attachment.AttachmentId"))?;
    if eni.attachment.as_ref().is_none_or(|a| a.id != id) {
        return Err(super::attachment_not_found(id));
    }
    changes
        .delete_on_termination
        .ok_or_else(|| ApiError::missing_parameter("Attachment.DeleteOnTermination"))
}

/// `DescribeNetworkInterfaceAttribute`: the one attribute asked for (AWS requires it).
pub fn describe_network_interface_attribute(
    region: &Region,
    input: DescribeNetworkInterfaceAttributeRequest,
) -> Result<DescribeNetworkInterfaceAttributeResult, ApiError> {
    let eni =
        Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    let attribute = input
        .attribute
        .ok_or_else(|| ApiError::missing_parameter("Attribute"))?;
    let mut out = DescribeNetworkInterfaceAttributeResult {
        network_interface_id: Some(eni.id.clone()),
        ..Default::default()
    };
    match attribute {
        NetworkInterfaceAttribute::Description => {
            out.description = Some(AttributeValue {
                value: Some(eni.description.clone()),
            });
        }
        NetworkInterfaceAttribute::GroupSet => {
            out.groups = Some(group_identifiers(region, &eni.groups));
        }
        NetworkInterfaceAttribute::SourceDestCheck => {
            out.source_dest_check = Some(AttributeBooleanValue {
                value: Some(eni.source_dest_check),
            });
        }
        NetworkInterfaceAttribute::Attachment => {
            out.attachment = eni
                .attachment
                .as_ref()
                .map(|a| render_attachment(region, a));
        }
        NetworkInterfaceAttribute::AssociatePublicIpAddress => {
            out.associate_public_ip_address = Some(eni.public_ip.is_some());
        }
    }
    Ok(out)
}

/// `ResetNetworkInterfaceAttribute`: the source/destination check (the one attribute it
/// resets), back to true.
pub fn reset_network_interface_attribute(
    region: &mut Region,
    input: ResetNetworkInterfaceAttributeRequest,
) -> Result<(), ApiError> {
    Kind::NetworkInterface.get(&region.network_interfaces, &input.network_interface_id)?;
    // The member names the attribute; its value is not read.
    if input.source_dest_check.is_none() {
        return Err(ApiError::missing_parameter("SourceDestCheck"));
    }
    if let Some(e) = region
        .network_interfaces
        .0
        .get_mut(&input.network_interface_id)
    {
        e.source_dest_check = true;
    }
    Ok(())
}
