//! Elastic Volumes: ModifyVolume changes a volume's size, type, IOPS or throughput in place,
//! and DescribeVolumesModifications shows each volume's most recent modification.
//!
//! A modification is `modifying` when asked, `optimizing` at the clock's next step (the
//! volume then has its new configuration, as EBS's size changes take effect from there) and
//! `completed` at the one after (transition subject `volumeModification`). A volume takes
//! no new modification while one is `modifying` or `optimizing`
//! (`IncorrectModificationState`), and at most four in any 24 hours
//! (`VolumeModificationRateExceeded`), EBS's rule since January 2026.

use std::time::Duration;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    DescribeVolumesModificationsRequest, DescribeVolumesModificationsResult, ModifyVolumeRequest,
    ModifyVolumeResult, VolumeModification as ModificationOut, VolumeModificationState, VolumeType,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::{Spec, Volume, specified};

/// The modifications EBS takes of one volume in any 24 hours.
const PER_DAY: usize = 4;

/// The window [`PER_DAY`] counts in.
const DAY: Duration = Duration::from_secs(24 * 3600);

/// A volume's size, type, IOPS and throughput.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Configuration {
    /// Size in GiB.
    pub size: i32,
    /// Type.
    pub volume_type: VolumeType,
    /// IOPS, when the type has them.
    pub iops: Option<i32>,
    /// Throughput (gp3).
    pub throughput: Option<i32>,
}

impl Configuration {
    /// `v`'s configuration now.
    pub fn of(v: &Volume) -> Self {
        Configuration {
            size: v.size,
            volume_type: v.volume_type,
            iops: v.iops,
            throughput: v.throughput,
        }
    }
}

/// A volume's most recent modification.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Modification {
    /// `modifying`, `optimizing` or `completed`.
    pub state: VolumeModificationState,
    /// What the volume was.
    pub original: Configuration,
    /// What it becomes.
    pub target: Configuration,
    /// When it was asked for.
    #[serde(with = "crate::state::with::time")]
    pub started: DateTime,
    /// When it completed.
    #[serde(default, with = "crate::state::with::time_opt")]
    pub ended: Option<DateTime>,
}

impl Modification {
    fn in_progress(&self) -> bool {
        matches!(
            self.state,
            VolumeModificationState::Modifying | VolumeModificationState::Optimizing
        )
    }
}

fn render(volume_id: &str, m: &Modification) -> ModificationOut {
    ModificationOut {
        volume_id: Some(volume_id.to_string()),
        modification_state: Some(m.state),
        target_size: Some(m.target.size),
        target_iops: m.target.iops,
        target_volume_type: Some(m.target.volume_type),
        target_throughput: m.target.throughput,
        target_multi_attach_enabled: Some(false),
        original_size: Some(m.original.size),
        original_iops: m.original.iops,
        original_volume_type: Some(m.original.volume_type),
        original_throughput: m.original.throughput,
        original_multi_attach_enabled: Some(false),
        progress: Some(match m.state {
            VolumeModificationState::Completed => 100,
            VolumeModificationState::Optimizing => 50,
            _ => 0,
        }),
        start_time: Some(m.started),
        end_time: m.ended,
        ..Default::default()
    }
}

/// The configuration `input` asks of `v`: what it names, the rest as `v` has it (its IOPS and
/// throughput kept where the new type takes them), checked as CreateVolume checks a volume.
fn target(v: &Volume, input: &ModifyVolumeRequest) -> Result<Configuration, ApiError> {
    let volume_type = input.volume_type.unwrap_or(v.volume_type);
    let takes_iops = matches!(
        volume_type,
        VolumeType::Gp3 | VolumeType::Io1 | VolumeType::Io2
    );
    let same_type = volume_type == v.volume_type;
    let spec = Spec {
        volume_type: Some(volume_type),
        size: input.size.unwrap_or(v.size),
        iops: input
            .iops
            .or_else(|| v.iops.filter(|_| takes_iops && same_type)),
        throughput: input
            .throughput
            .or_else(|| v.throughput.filter(|_| volume_type == VolumeType::Gp3)),
        encrypted: Some(v.encrypted),
    };
    let checked = specified(&spec, None, &v.zone, "")?;
    Ok(Configuration::of(&checked))
}

/// `ModifyVolume`.
pub fn modify_volume(
    region: &mut Region,
    input: ModifyVolumeRequest,
) -> Result<ModifyVolumeResult, ApiError> {
    let now = region.clock.now_datetime();
    let v = Kind::Volume.get(&region.volumes, &input.volume_id)?;
    if let Some(m) = v.modification.as_ref().filter(|m| m.in_progress()) {
        return Err(ApiError::new(
            Code::IncorrectModificationState,
            format!(
                "Volume {} cannot be modified in modification state {}",
                v.id,
                m.state.as_str().to_uppercase()
            ),
        ));
    }
    if input.size.is_some_and(|s| s < v.size) {
        return Err(ApiError::invalid_value(
            "New size cannot be smaller than existing size",
        ));
    }
    let recent = v
        .modified_at
        .iter()
        .filter(|t| within(**t, now, DAY))
        .count();
    if recent >= PER_DAY {
        return Err(ApiError::new(
            Code::VolumeModificationRateExceeded,
            format!(
                "You've reached the maximum modification rate per volume limit: at most \
                 {PER_DAY} modifications of an EBS volume in 24 hours."
            ),
        ));
    }
    let modification = Modification {
        state: VolumeModificationState::Modifying,
        original: Configuration::of(v),
        target: target(v, &input)?,
        started: now,
        ended: None,
    };
    let out = render(&v.id, &modification);
    let id = v.id.clone();
    if let Some(v) = region.volumes.0.get_mut(&id) {
        v.modified_at.retain(|t| within(*t, now, DAY));
        v.modified_at.push(now.secs());
        v.modification = Some(modification);
    }
    let at = region.clock.now();
    region
        .transitions
        .schedule(at, Subject::VolumeModification, &id);
    Ok(ModifyVolumeResult {
        volume_modification: Some(out),
    })
}

/// Whether `t` (seconds since the epoch) is less than `window` before `now`.
fn within(t: i64, now: DateTime, window: Duration) -> bool {
    let window = i64::try_from(window.as_secs()).unwrap_or(i64::MAX);
    now.secs().saturating_sub(t) < window
}

/// Takes volume `id`'s modification one step: `modifying` to `optimizing` (the volume takes
/// its new configuration; the next step is scheduled), `optimizing` to `completed`.
pub fn advance(region: &mut Region, id: &str) {
    let now = region.clock.now_datetime();
    let Some(v) = region.volumes.0.get_mut(id) else {
        return;
    };
    let Some(m) = v.modification.as_mut() else {
        return;
    };
    let again = match m.state {
        VolumeModificationState::Modifying => {
            m.state = VolumeModificationState::Optimizing;
            let t = m.target;
            v.size = t.size;
            v.volume_type = t.volume_type;
            v.iops = t.iops;
            v.throughput = t.throughput;
            true
        }
        VolumeModificationState::Optimizing => {
            m.state = VolumeModificationState::Completed;
            m.ended = Some(now);
            false
        }
        _ => false,
    };
    if again {
        let at = region.clock.now();
        region
            .transitions
            .schedule(at, Subject::VolumeModification, id);
    }
}

impl Filterable for (&str, &Modification) {
    const NAMES: &'static [&'static str] = &[
        "modification-state",
        "original-iops",
        "original-size",
        "original-volume-type",
        "originalMultiAttachEnabled",
        "start-time",
        "target-iops",
        "target-size",
        "target-volume-type",
        "targetMultiAttachEnabled",
        "volume-id",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let (id, m) = *self;
        let number = |n: Option<i32>| n.map(|n| n.to_string()).into_iter().collect();
        match name {
            "modification-state" => one(m.state.as_str()),
            "original-iops" => number(m.original.iops),
            "original-size" => one(m.original.size.to_string()),
            "original-volume-type" => one(m.original.volume_type.as_str()),
            "originalMultiAttachEnabled" | "targetMultiAttachEnabled" => one("false"),
            "start-time" => one(format_timestamp(m.started)),
            "target-iops" => number(m.target.iops),
            "target-size" => one(m.target.size.to_string()),
            "target-volume-type" => one(m.target.volume_type.as_str()),
            "volume-id" => one(id),
            _ => Vec::new(),
        }
    }
}

/// `DescribeVolumesModifications`: each volume's most recent modification; a volume named
/// that was never modified is `InvalidVolumeModification.NotFound`.
pub fn describe_volumes_modifications(
    region: &mut Region,
    input: DescribeVolumesModificationsRequest,
) -> Result<DescribeVolumesModificationsResult, ApiError> {
    let filters = Filters::parse::<(&str, &Modification)>(input.filters)?;
    let region = &*region;
    let named = Kind::Volume.select(&region.volumes, input.volume_ids.as_deref())?;
    let explicit = input.volume_ids.as_ref().is_some_and(|i| !i.is_empty());
    if explicit && let Some(v) = named.iter().find(|v| v.modification.is_none()) {
        return Err(ApiError::new(
            Code::InvalidVolumeModificationNotFound,
            format!("Modification for volume '{}' does not exist.", v.id),
        ));
    }
    let found: Vec<(&str, &Modification)> = named
        .into_iter()
        .filter_map(|v| v.modification.as_ref().map(|m| (v.id.as_str(), m)))
        .filter(|pair| filters.matches(pair, None))
        .collect();
    let (items, next) = page::page(
        found,
        |(id, _)| id,
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeVolumesModificationsResult {
        volumes_modifications: Some(items.into_iter().map(|(id, m)| render(id, m)).collect()),
        next_token: next,
    })
}
