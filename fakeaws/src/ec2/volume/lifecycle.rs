//! A volume's life outside RunInstances: CreateVolume, AttachVolume, DetachVolume and
//! DeleteVolume, checked as EBS checks them.
//!
//! As with CreateVpc, each answer gives the state AWS answers with (`creating`, `attaching`,
//! `detaching`) and the change is complete at once: the next describe shows the volume
//! `available`, `in-use` with its attachment `attached`, or gone. An attached volume is one of
//! its instance's block devices (DescribeInstances) until it is detached or the instance is
//! terminated (when it is detached, or deleted if so marked).

use crate::ec2::error::Code;
use crate::ec2::{Kind, fingerprint, instance, snapshot, tags};
use crate::generated::ec2::{
    AttachVolumeRequest, CreateVolumeRequest, DeleteVolumeRequest, DetachVolumeRequest,
    InstanceStateName, ResourceType, Volume as VolumeOut, VolumeAttachment as AttachmentOut,
    VolumeAttachmentState, VolumeState,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::{Attachment, Spec, render, specified};

/// `CreateVolume`: a new volume in a zone of the region, of a size, or of a completed
/// snapshot of the account (its size unless a larger one is given, encrypted if it is); the
/// same ClientToken with the same request answers the same volume.
pub fn create_volume(
    region: &mut Region,
    mut input: CreateVolumeRequest,
) -> Result<VolumeOut, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateVolume", token.as_deref(), &print)?
        && let Some(v) = region.volumes.get(&id)
    {
        return Ok(render(region, v));
    }
    let zone = region.zone_named(
        input.availability_zone.as_deref(),
        input.availability_zone_id.as_deref(),
    )?;
    let from = match &input.snapshot_id {
        Some(id) => Some((id.clone(), snapshot::source(region, id)?)),
        None => None,
    };
    let size = match (input.size, &from) {
        (Some(size), Some((id, (least, _)))) if size < *least => {
            return Err(ApiError::invalid_value(snapshot::too_small(
                size, id, *least,
            )));
        }
        (Some(size), _) => size,
        (None, Some((_, (least, _)))) => *least,
        (None, None) => return Err(ApiError::missing_parameter("size/snapshot")),
    };
    let inherited = from
        .as_ref()
        .and_then(|(id, _)| region.snapshots.get(id))
        .and_then(|s| snapshot::key_of(region, s));
    let key = super::key_for(
        region,
        input.encrypted == Some(true),
        inherited.as_deref(),
        input.kms_key_id.as_deref(),
    )?;
    let spec = Spec {
        volume_type: input.volume_type,
        size,
        iops: input.iops,
        throughput: input.throughput,
        encrypted: Some(key.is_some()),
    };
    let mut volume = specified(&spec, from.map(|(id, _)| id), &zone, "")?;
    volume.kms_key_id = key;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Volume)?;
    volume.id = region.ids.resource("vol");
    volume.created = region.clock.now_datetime();
    region
        .ledger
        .record("CreateVolume", token.as_deref(), &print, &volume.id);
    region.tags.insert(&volume.id, tags);
    let mut out = render(region, &volume);
    out.state = Some(VolumeState::Creating);
    out.tags = region.tags.listed(&volume.id);
    region.volumes.0.insert(volume.id.clone(), volume);
    Ok(out)
}

/// Whether `device` is a name EBS takes for a volume: `/dev/sd*` or `/dev/xvd*` (or `xvd*`)
/// followed by a letter and at most one more, then digits.
fn is_device_name(device: &str) -> bool {
    let name = device.strip_prefix("/dev/").unwrap_or(device);
    let Some(rest) = name
        .strip_prefix("xvd")
        .or_else(|| device.strip_prefix("/dev/sd"))
    else {
        return false;
    };
    let letters = rest.bytes().take_while(u8::is_ascii_lowercase).count();
    let digits = rest.get(letters..).unwrap_or_default();
    (1..=2).contains(&letters) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// What AttachVolume and DetachVolume answer: the attachment in `state`.
fn attachment_out(volume_id: &str, a: &Attachment, state: VolumeAttachmentState) -> AttachmentOut {
    AttachmentOut {
        delete_on_termination: Some(a.delete_on_termination),
        volume_id: Some(volume_id.to_string()),
        instance_id: Some(a.instance_id.clone()),
        device: Some(a.device.clone()),
        state: Some(state),
        attach_time: Some(a.attach_time),
        ..Default::default()
    }
}

/// `AttachVolume`: an available volume to a running or stopped instance of its zone, at a
/// device name the instance does not use.
pub fn attach_volume(
    region: &mut Region,
    input: AttachVolumeRequest,
) -> Result<AttachmentOut, ApiError> {
    let volume = Kind::Volume.get(&region.volumes, &input.volume_id)?;
    let instance = Kind::Instance.get(&region.instances, &input.instance_id)?;
    if !is_device_name(&input.device) {
        return Err(ApiError::invalid_parameter(
            "device",
            &input.device,
            &format!("{} is not a valid EBS device name.", input.device),
        ));
    }
    if volume.attachment.is_some() {
        return Err(ApiError::new(
            Code::VolumeInUse,
            format!("{} is already attached to an instance", volume.id),
        ));
    }
    if !matches!(
        instance.state,
        InstanceStateName::Running | InstanceStateName::Stopped
    ) {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!("Instance '{}' is not 'running'.", instance.id),
        ));
    }
    if volume.zone != instance.zone {
        return Err(ApiError::new(
            Code::InvalidVolumeZoneMismatch,
            format!(
                "The volume '{}' is not in the same availability zone as instance '{}'",
                volume.id, instance.id
            ),
        ));
    }
    if instance.volumes.iter().any(|(d, _)| *d == input.device) {
        return Err(ApiError::invalid_value(format!(
            "Invalid value '{0}' for unixDevice. Attachment point {0} is already in use",
            input.device
        )));
    }
    let attachment = Attachment {
        instance_id: input.instance_id.clone(),
        device: input.device.clone(),
        delete_on_termination: false,
        attach_time: region.clock.now_datetime(),
    };
    let out = attachment_out(
        &input.volume_id,
        &attachment,
        VolumeAttachmentState::Attaching,
    );
    if let Some(v) = region.volumes.0.get_mut(&input.volume_id) {
        v.attachment = Some(attachment);
    }
    instance::volume_attached(region, &input.instance_id, &input.device, &input.volume_id);
    Ok(out)
}

/// `DetachVolume`: an attached volume (from the instance and at the device given, if given);
/// not an instance's root volume unless the instance is stopped.
pub fn detach_volume(
    region: &mut Region,
    input: DetachVolumeRequest,
) -> Result<AttachmentOut, ApiError> {
    let volume = Kind::Volume.get(&region.volumes, &input.volume_id)?;
    if let Some(i) = &input.instance_id {
        Kind::Instance.get(&region.instances, i)?;
    }
    let Some(attachment) = volume.attachment.clone() else {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!("Volume '{}' is in the 'available' state.", volume.id),
        ));
    };
    let elsewhere = input
        .instance_id
        .as_ref()
        .is_some_and(|i| *i != attachment.instance_id)
        || input
            .device
            .as_ref()
            .is_some_and(|d| *d != attachment.device);
    if elsewhere {
        return Err(ApiError::new(
            Code::InvalidAttachmentNotFound,
            format!(
                "Volume '{}' is attached to instance '{}' at '{}', not as the request says.",
                volume.id, attachment.instance_id, attachment.device
            ),
        ));
    }
    // The root volume of an instance that is neither stopped nor gone.
    let holds_root = region
        .instances
        .get(&attachment.instance_id)
        .is_some_and(|i| {
            i.root_device_name == attachment.device
                && !i.is_gone()
                && i.state != InstanceStateName::Stopped
        });
    if holds_root {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "Unable to detach root volume '{}' from instance '{}'",
                volume.id, attachment.instance_id
            ),
        ));
    }
    let out = attachment_out(
        &input.volume_id,
        &attachment,
        VolumeAttachmentState::Detaching,
    );
    if let Some(v) = region.volumes.0.get_mut(&input.volume_id) {
        v.attachment = None;
    }
    instance::volume_detached(region, &attachment.instance_id, &input.volume_id);
    Ok(out)
}

/// `DeleteVolume`: a volume not attached to any instance.
pub fn delete_volume(region: &mut Region, input: DeleteVolumeRequest) -> Result<(), ApiError> {
    let volume = Kind::Volume.get(&region.volumes, &input.volume_id)?;
    if let Some(a) = &volume.attachment {
        return Err(ApiError::new(
            Code::VolumeInUse,
            format!(
                "Volume {} is currently attached to {}",
                volume.id, a.instance_id
            ),
        ));
    }
    region.volumes.0.remove(&input.volume_id);
    region.tags.remove_resource(&input.volume_id);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_device_name;

    #[test]
    fn device_names_are_taken_as_ebs_takes_them() {
        for ok in [
            "/dev/sdf",
            "/dev/sdp",
            "/dev/xvdf",
            "xvdba",
            "/dev/sdf1",
            "/dev/xvdaa",
        ] {
            assert!(is_device_name(ok), "{ok}");
        }
        for bad in [
            "",
            "/dev/",
            "sdf",
            "/dev/sd",
            "/dev/nvme1n1",
            "/dev/sdF",
            "/dev/sdabc",
        ] {
            assert!(!is_device_name(bad), "{bad}");
        }
    }
}
