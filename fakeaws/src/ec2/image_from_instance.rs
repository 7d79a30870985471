//! CreateImage: an image of an instance, as image bakers (Packer's EBS builder, terraform's
//! `aws_ami_from_instance`) make them. Each of the instance's EBS volumes is snapshotted
//! (`Created by CreateImage(i-...) for ami-... from vol-...`, as EBS describes them) and
//! the image, made of those snapshots, is `pending` until the clock's next step, then
//! `available` (transition subject `image`; the `ImageAvailable` waiter passes).

use crate::ec2::image::{Device, Image, add, check_name};
use crate::ec2::{Kind, snapshot, tags};
use crate::generated::ec2::{
    CreateImageRequest, CreateImageResult, ImageState, InstanceStateName, ResourceType,
    VirtualizationType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

/// `CreateImage`: of an instance `running`, `stopping` or `stopped` (else
/// `InvalidParameterValue`, AWS's words), named as RegisterImage names images; its
/// TagSpecifications tag the image and the snapshots. `NoReboot` is taken: nothing here
/// tells a rebooted instance from another.
pub fn create_image(
    region: &mut Region,
    input: CreateImageRequest,
) -> Result<CreateImageResult, ApiError> {
    let instance = Kind::Instance.get(&region.instances, &input.instance_id)?;
    if !matches!(
        instance.state,
        InstanceStateName::Running | InstanceStateName::Stopping | InstanceStateName::Stopped
    ) {
        return Err(ApiError::invalid_value(format!(
            "Invalid value '{}' for instanceId. Instance is not in state 'running' or \
             'stopping' or 'stopped'",
            instance.id
        )));
    }
    let boot_mode = instance.options.boot_mode;
    let name = check_name(region, &input.name)?;
    let description = snapshot::checked_description(input.description)?;
    let mut by_type = tags::from_specs_for(
        input.tag_specifications.as_deref(),
        &[ResourceType::Image, ResourceType::Snapshot],
    )?;
    let image_tags = by_type.remove(&ResourceType::Image).unwrap_or_default();
    let snapshot_tags = by_type.remove(&ResourceType::Snapshot).unwrap_or_default();
    // The volumes to snapshot: (device, volume, size, key when encrypted, (type, IOPS),
    // delete on termination).
    let volumes: Vec<_> = instance
        .volumes
        .iter()
        .filter_map(|(device, id)| {
            let v = region.volumes.get(id)?;
            let delete = v
                .attachment
                .as_ref()
                .is_some_and(|a| a.delete_on_termination);
            Some((
                device.clone(),
                id.clone(),
                v.size,
                crate::ec2::volume::key_of(region, v),
                (v.volume_type, v.iops),
                delete,
            ))
        })
        .collect();
    let (instance_id, root_device, architecture) = (
        instance.id.clone(),
        instance.root_device_name.clone(),
        instance.architecture,
    );
    let id = region.ids.resource("ami");
    let mut root = None;
    let mut devices = Vec::new();
    for (device, volume, size, key, (volume_type, iops), delete) in volumes {
        let snapshot_id = snapshot::take(
            region,
            &volume,
            size,
            key,
            format!("Created by CreateImage({instance_id}) for {id} from {volume}"),
            snapshot_tags.clone(),
        );
        if device == root_device {
            root = Some((snapshot_id, size));
        } else {
            devices.push(Device {
                name: device,
                snapshot_id,
                size,
                volume_type,
                iops,
                delete_on_termination: delete,
            });
        }
    }
    let Some((snapshot_id, root_size)) = root else {
        return Err(ApiError::invalid_value(format!(
            "Instance {instance_id} has no root volume to make an image of"
        )));
    };
    region.tags.insert(&id, image_tags);
    let created = crate::protocol::xml::format_timestamp(region.clock.now_datetime());
    add(
        region,
        Image {
            id: id.clone(),
            name,
            description,
            owner_id: region.account_id.clone(),
            owner_alias: None,
            architecture,
            virtualization: VirtualizationType::Hvm,
            root_device_name: root_device,
            root_size,
            snapshot_id,
            creation_date: created,
            public: false,
            state: ImageState::Pending,
            devices,
            source_instance_id: Some(instance_id),
            launch_permissions: Vec::new(),
            imds_v2: false,
            last_launched: None,
            disabled: false,
            deprecate_at: None,
            protection: crate::ec2::image_lifecycle::Protection::Off,
            source_image: None,
            // The boot mode of the image the instance was launched from.
            boot_mode,
        },
    );
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::Image, &id);
    Ok(CreateImageResult { image_id: Some(id) })
}
