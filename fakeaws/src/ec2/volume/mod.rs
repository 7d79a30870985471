//! EBS volumes: DescribeVolumes, the volumes RunInstances makes from block device mappings
//! (deleted with their instance when DeleteOnTermination is set), and, in `lifecycle`,
//! CreateVolume, AttachVolume, DetachVolume and DeleteVolume.

mod encryption;
mod lifecycle;
mod modify;
mod status;

pub use encryption::{
    default_key, disable_ebs_encryption_by_default, enable_ebs_encryption_by_default, encrypts,
    get_ebs_default_kms_key_id, get_ebs_encryption_by_default, is_aws_managed, key_for,
    modify_ebs_default_kms_key_id, reset_ebs_default_kms_key_id,
};
pub use lifecycle::{attach_volume, create_volume, delete_volume, detach_volume};
pub use modify::{advance as advance_modification, describe_volumes_modifications, modify_volume};
pub use status::{
    describe_volume_attribute, describe_volume_status, enable_volume_io, modify_volume_attribute,
};

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    DescribeVolumesRequest, DescribeVolumesResult, Volume as VolumeOut, VolumeAttachment,
    VolumeAttachmentState, VolumeState, VolumeType,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

/// A volume's attachment to an instance.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Attachment {
    /// The instance.
    pub instance_id: String,
    /// The device name, such as `/dev/sda1`.
    pub device: String,
    /// Whether terminating the instance deletes the volume.
    pub delete_on_termination: bool,
    /// When it was attached.
    #[serde(with = "crate::state::with::time")]
    pub attach_time: DateTime,
}

crate::region::table! {
    /// Volumes by id.
    Volumes of Volume
}

/// One volume.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Volume {
    /// `vol-...`.
    pub id: String,
    /// Its size in GiB.
    pub size: i32,
    /// Its type.
    pub volume_type: VolumeType,
    /// Its IOPS, when the type has them.
    pub iops: Option<i32>,
    /// Its throughput (gp3).
    pub throughput: Option<i32>,
    /// Whether it is encrypted.
    pub encrypted: bool,
    /// Its KMS key, by ARN, when encrypted (a volume of a state file from before keys were
    /// kept shows the region's default key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
    /// Its zone.
    pub zone: String,
    /// The snapshot it was made from.
    pub snapshot_id: Option<String>,
    /// Its attachment, if attached.
    pub attachment: Option<Attachment>,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// Its most recent modification (ModifyVolume), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modification: Option<modify::Modification>,
    /// When its modifications of the last 24 hours were asked for, in seconds since the epoch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modified_at: Vec<i64>,
    /// Whether EBS resumes the volume's I/O by itself after finding its data potentially
    /// inconsistent (`autoEnableIO`; off until ModifyVolumeAttribute turns it on).
    #[serde(default)]
    pub auto_enable_io: bool,
}

/// What a request asks of a volume (CreateVolume, or a block device mapping of RunInstances).
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The type (gp3 when not given).
    pub volume_type: Option<VolumeType>,
    /// The size in GiB.
    pub size: i32,
    /// Provisioned IOPS.
    pub iops: Option<i32>,
    /// Throughput in MiB/s.
    pub throughput: Option<i32>,
    /// Encryption.
    pub encrypted: Option<bool>,
}

/// The volume `spec` asks for in `zone`, checked as EBS checks it (each type's sizes, IOPS
/// required by io1 and io2 and taken only by them and gp3, throughput only by gp3), with
/// EBS's defaults (gp2's 3 IOPS per GiB, gp3's 3,000 IOPS and 125 MiB/s); not attached, not yet
/// given an id. `at` prefixes the names of missing members (`BlockDeviceMapping.N.Ebs.`).
pub fn specified(
    spec: &Spec,
    snapshot_id: Option<String>,
    zone: &str,
    at: &str,
) -> Result<Volume, ApiError> {
    let volume_type = spec.volume_type.unwrap_or(VolumeType::Gp3);
    let size = spec.size;
    let (min, max) = match volume_type {
        VolumeType::Gp2 | VolumeType::Gp3 => (1, 16384),
        VolumeType::Io1 | VolumeType::Io2 => (4, 65536),
        VolumeType::St1 | VolumeType::Sc1 => (125, 16384),
        VolumeType::Standard => (1, 1024),
    };
    if size < min || size > max {
        return Err(ApiError::invalid_parameter(
            "size",
            &size.to_string(),
            &format!(
                "Volumes of type {} are {min} to {max} GiB.",
                volume_type.as_str()
            ),
        ));
    }
    let provisioned = matches!(volume_type, VolumeType::Io1 | VolumeType::Io2);
    if provisioned && spec.iops.is_none() {
        return Err(ApiError::missing_parameter(&format!("{at}Iops")));
    }
    if spec.iops.is_some() && !provisioned && volume_type != VolumeType::Gp3 {
        return Err(ApiError::invalid_combination(format!(
            "The parameter iops is not supported for {} volumes.",
            volume_type.as_str()
        )));
    }
    if spec.throughput.is_some() && volume_type != VolumeType::Gp3 {
        return Err(ApiError::invalid_combination(format!(
            "The parameter throughput is not supported for {} volumes.",
            volume_type.as_str()
        )));
    }
    let iops = match volume_type {
        VolumeType::Gp3 => Some(spec.iops.unwrap_or(3000)),
        VolumeType::Gp2 => Some((size * 3).clamp(100, 16000)),
        VolumeType::Io1 | VolumeType::Io2 => spec.iops,
        _ => None,
    };
    Ok(Volume {
        id: String::new(),
        size,
        volume_type,
        iops,
        throughput: (volume_type == VolumeType::Gp3).then(|| spec.throughput.unwrap_or(125)),
        encrypted: spec.encrypted.unwrap_or(false),
        kms_key_id: None,
        zone: zone.to_string(),
        snapshot_id,
        attachment: None,
        created: DateTime::from_secs(0),
        modification: None,
        modified_at: Vec::new(),
        auto_enable_io: false,
    })
}

impl Filterable for (&Volume, &Region) {
    const NAMES: &'static [&'static str] = &[
        "attachment.attach-time",
        "attachment.delete-on-termination",
        "attachment.device",
        "attachment.instance-id",
        "attachment.status",
        "availability-zone",
        "availability-zone-id",
        "create-time",
        "encrypted",
        "multi-attach-enabled",
        "fast-restored",
        "operator.managed",
        "operator.principal",
        "size",
        "snapshot-id",
        "status",
        "volume-id",
        "volume-type",
    ];
    // No operators here.
    const NEVER_SET: &'static [&'static str] = &["operator.managed", "operator.principal"];

    fn values(&self, name: &str) -> Vec<String> {
        let (v, region) = *self;
        let att = || v.attachment.as_ref();
        match name {
            "attachment.delete-on-termination" => att()
                .map(|a| a.delete_on_termination.to_string())
                .into_iter()
                .collect(),
            "attachment.attach-time" => att()
                .map(|a| format_timestamp(a.attach_time))
                .into_iter()
                .collect(),
            "attachment.device" => att().map(|a| a.device.clone()).into_iter().collect(),
            "attachment.instance-id" => att().map(|a| a.instance_id.clone()).into_iter().collect(),
            "attachment.status" => att().map(|_| "attached".to_string()).into_iter().collect(),
            "availability-zone" => one(v.zone.clone()),
            "availability-zone-id" => region
                .zone(&v.zone)
                .map(|z| one(z.id.clone()))
                .unwrap_or_default(),
            "create-time" => one(format_timestamp(v.created)),
            "encrypted" => flag(v.encrypted),
            "multi-attach-enabled" | "fast-restored" => flag(false),
            "size" => one(v.size.to_string()),
            "snapshot-id" => v.snapshot_id.clone().into_iter().collect(),
            "status" => one(state(v).as_str()),
            "volume-id" => one(v.id.clone()),
            "volume-type" => one(v.volume_type.as_str()),
            _ => Vec::new(),
        }
    }
}

fn state(v: &Volume) -> VolumeState {
    if v.attachment.is_some() {
        VolumeState::InUse
    } else {
        VolumeState::Available
    }
}

/// Volume `v`'s key, by ARN, when it is encrypted (one of a state file from before keys were
/// kept: the region's default key).
pub fn key_of(region: &Region, v: &Volume) -> Option<String> {
    v.kms_key_id
        .clone()
        .or_else(|| v.encrypted.then(|| default_key(region)))
}

fn render(region: &Region, v: &Volume) -> VolumeOut {
    VolumeOut {
        availability_zone_id: region.zone(&v.zone).map(|z| z.id.clone()),
        iops: v.iops,
        tags: region.tags.tag_set(&v.id),
        volume_type: Some(v.volume_type),
        fast_restored: Some(false),
        multi_attach_enabled: Some(false),
        throughput: v.throughput,
        volume_arn: Some(format!(
            "arn:{}:ec2:{}:{}:volume/{}",
            crate::ec2::account::arn_partition(&region.name),
            region.name,
            region.account_id,
            v.id
        )),
        owner_id: Some(region.account_id.clone()),
        volume_id: Some(v.id.clone()),
        size: Some(v.size),
        snapshot_id: Some(v.snapshot_id.clone().unwrap_or_default()),
        availability_zone: Some(v.zone.clone()),
        state: Some(state(v)),
        create_time: Some(v.created),
        attachments: Some(
            v.attachment
                .iter()
                .map(|a| VolumeAttachment {
                    delete_on_termination: Some(a.delete_on_termination),
                    volume_id: Some(v.id.clone()),
                    instance_id: Some(a.instance_id.clone()),
                    device: Some(a.device.clone()),
                    state: Some(VolumeAttachmentState::Attached),
                    attach_time: Some(a.attach_time),
                    ..Default::default()
                })
                .collect(),
        ),
        encrypted: Some(v.encrypted),
        kms_key_id: key_of(region, v),
        ..Default::default()
    }
}

/// A describe call's `InvalidVolume.NotFound` in AWS's words for it (`The volume 'vol-...'
/// does not exist.`); any other error as it is.
fn described_not_found(e: ApiError) -> ApiError {
    if e.code == Code::InvalidVolumeNotFound {
        ApiError::new(
            Code::InvalidVolumeNotFound,
            e.message.replace("volume ID", "volume"),
        )
    } else {
        e
    }
}

/// `DescribeVolumes`.
pub fn describe_volumes(
    region: &mut Region,
    input: DescribeVolumesRequest,
) -> Result<DescribeVolumesResult, ApiError> {
    let filters = Filters::parse::<(&Volume, &Region)>(input.filters)?;
    let region = &*region;
    if input.volume_ids.as_ref().is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter volumeIds cannot be used with the parameter maxResults",
        ));
    }
    let found = Kind::Volume
        .describe(
            &region.consistency,
            &region.volumes,
            input.volume_ids.as_deref(),
            region.candidates(Kind::Volume, &filters),
            |v| filters.matches(&(v, region), region.tags.get(&v.id)),
        )
        .map_err(described_not_found)?;
    let (items, next) = page::page(
        found,
        |v| v.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeVolumesResult {
        next_token: next,
        volumes: Some(items.into_iter().map(|v| render(region, v)).collect()),
    })
}

/// Sets whether terminating the instance `instance_id` deletes the volume `id` attached to it
/// (ModifyInstanceAttribute's block device mapping).
pub fn set_delete_on_termination(region: &mut Region, id: &str, instance_id: &str, delete: bool) {
    if let Some(a) = region
        .volumes
        .0
        .get_mut(id)
        .and_then(|v| v.attachment.as_mut())
        .filter(|a| a.instance_id == instance_id)
    {
        a.delete_on_termination = delete;
    }
}

/// Detaches every volume of a terminated instance, deleting those marked
/// DeleteOnTermination.
pub fn release_for(region: &mut Region, instance_id: &str, volume_ids: &[String]) {
    for id in volume_ids {
        let delete = match region.volumes.0.get_mut(id) {
            Some(v)
                if v.attachment
                    .as_ref()
                    .is_some_and(|a| a.instance_id == instance_id) =>
            {
                let delete = v
                    .attachment
                    .as_ref()
                    .is_some_and(|a| a.delete_on_termination);
                v.attachment = None;
                delete
            }
            _ => false,
        };
        if delete {
            region.volumes.0.remove(id);
            region.tags.remove_resource(id);
        }
    }
}

/// Creates the volume `planned` attached to instance `instance_id` at `now` (a volume of
/// RunInstances' block device mappings), tagged with `tags`; returns its id.
pub fn create_attached(
    region: &mut Region,
    planned: &Volume,
    instance_id: &str,
    now: DateTime,
    tags: Option<&BTreeMap<String, String>>,
) -> String {
    let vol_id = region.ids.resource("vol");
    let mut v = planned.clone();
    v.id = vol_id.clone();
    v.created = now;
    if let Some(a) = &mut v.attachment {
        a.instance_id = instance_id.to_string();
        a.attach_time = now;
    }
    region.volumes.0.insert(vol_id.clone(), v);
    if let Some(t) = tags {
        region.tags.insert(&vol_id, t.clone());
    }
    vol_id
}
