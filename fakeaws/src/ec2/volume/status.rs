//! Volume status checks and the I/O attribute: DescribeVolumeStatus, DescribeVolumeAttribute,
//! ModifyVolumeAttribute and EnableVolumeIO.
//!
//! EBS suspends a volume's I/O when it finds its data potentially inconsistent, unless the
//! volume's `autoEnableIO` attribute says to resume at once; EnableVolumeIO resumes it. The
//! fake's volumes never become inconsistent, so every volume's checks pass: status `ok`,
//! `io-enabled` `passed`, and `io-performance` `normal` for a Provisioned IOPS volume (io1,
//! io2) attached to an instance, `not-applicable` otherwise; no events, no actions, as the
//! CLI's documented `describe-volume-status` output shows for a healthy volume.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    AttributeBooleanValue, DescribeVolumeAttributeRequest, DescribeVolumeAttributeResult,
    DescribeVolumeStatusRequest, DescribeVolumeStatusResult, EnableVolumeIORequest,
    ModifyVolumeAttributeRequest, VolumeAttributeName, VolumeStatusAttachmentStatus,
    VolumeStatusDetails, VolumeStatusInfo, VolumeStatusInfoStatus, VolumeStatusItem,
    VolumeStatusName, VolumeType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::Volume;

/// A volume's `io-performance` check: `normal` for a Provisioned IOPS volume attached to an
/// instance (the check watches the IOPS it was provisioned), `not-applicable` otherwise.
fn io_performance(v: &Volume) -> &'static str {
    let provisioned = matches!(v.volume_type, VolumeType::Io1 | VolumeType::Io2);
    if provisioned && v.attachment.is_some() {
        "normal"
    } else {
        "not-applicable"
    }
}

/// One volume's row of DescribeVolumeStatus, for its filters.
struct StatusRow<'a>(&'a Volume);

impl Filterable for StatusRow<'_> {
    const NAMES: &'static [&'static str] = &[
        "action.code",
        "action.description",
        "action.event-id",
        "attachment-status.instance-id",
        "attachment-status.io-performance",
        "availability-zone",
        "event.description",
        "event.event-id",
        "event.event-type",
        "event.not-after",
        "event.not-before",
        "volume-status.details-name",
        "volume-status.details-status",
        "volume-status.status",
    ];
    // No volume here has events, so none has actions either; and the attached instance's
    // IOPS ceiling is not kept.
    const NEVER_SET: &'static [&'static str] = &[
        "action.code",
        "action.description",
        "action.event-id",
        "attachment-status.io-performance",
        "event.description",
        "event.event-id",
        "event.event-type",
        "event.not-after",
        "event.not-before",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let v = self.0;
        match name {
            "attachment-status.instance-id" => {
                v.attachment.iter().map(|a| a.instance_id.clone()).collect()
            }
            "availability-zone" => one(v.zone.clone()),
            "volume-status.details-name" => vec![
                VolumeStatusName::IoEnabled.as_str().to_string(),
                VolumeStatusName::IoPerformance.as_str().to_string(),
            ],
            "volume-status.details-status" => vec!["passed".into(), io_performance(v).into()],
            "volume-status.status" => one(VolumeStatusInfoStatus::Ok.as_str()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, v: &Volume) -> VolumeStatusItem {
    VolumeStatusItem {
        volume_id: Some(v.id.clone()),
        availability_zone: Some(v.zone.clone()),
        availability_zone_id: region.zone(&v.zone).map(|z| z.id.clone()),
        volume_status: Some(VolumeStatusInfo {
            status: Some(VolumeStatusInfoStatus::Ok),
            details: Some(vec![
                VolumeStatusDetails {
                    name: Some(VolumeStatusName::IoEnabled),
                    status: Some("passed".into()),
                },
                VolumeStatusDetails {
                    name: Some(VolumeStatusName::IoPerformance),
                    status: Some(io_performance(v).into()),
                },
            ]),
        }),
        actions: Some(Vec::new()),
        events: Some(Vec::new()),
        attachment_statuses: Some(
            v.attachment
                .iter()
                .map(|a| VolumeStatusAttachmentStatus {
                    instance_id: Some(a.instance_id.clone()),
                    io_performance: None,
                })
                .collect(),
        ),
        ..Default::default()
    }
}

/// `DescribeVolumeStatus`: the named volumes, or all of them, filtered and paged.
pub fn describe_volume_status(
    region: &mut Region,
    input: DescribeVolumeStatusRequest,
) -> Result<DescribeVolumeStatusResult, ApiError> {
    let filters = Filters::parse::<StatusRow>(input.filters)?;
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
            None,
            |v| filters.matches(&StatusRow(v), None),
        )
        .map_err(super::described_not_found)?;
    let (items, next) = page::page(
        found,
        |v| v.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeVolumeStatusResult {
        next_token: next,
        volume_statuses: Some(items.into_iter().map(|v| render(region, v)).collect()),
    })
}

/// `DescribeVolumeAttribute`: `autoEnableIO`, or `productCodes` (always empty: no volume
/// here comes from a Marketplace product).
pub fn describe_volume_attribute(
    region: &mut Region,
    input: DescribeVolumeAttributeRequest,
) -> Result<DescribeVolumeAttributeResult, ApiError> {
    let v = Kind::Volume.get(&region.volumes, &input.volume_id)?;
    let mut out = DescribeVolumeAttributeResult {
        volume_id: Some(v.id.clone()),
        ..Default::default()
    };
    match input.attribute {
        VolumeAttributeName::AutoEnableIO => {
            out.auto_enable_io = Some(AttributeBooleanValue {
                value: Some(v.auto_enable_io),
            });
        }
        VolumeAttributeName::ProductCodes => out.product_codes = Some(Vec::new()),
    }
    Ok(out)
}

/// `ModifyVolumeAttribute`: sets `autoEnableIO`, the one attribute it changes.
pub fn modify_volume_attribute(
    region: &mut Region,
    input: ModifyVolumeAttributeRequest,
) -> Result<(), ApiError> {
    let v = Kind::Volume.get_mut(&mut region.volumes.0, &input.volume_id)?;
    let Some(value) = input.auto_enable_io.and_then(|a| a.value) else {
        return Err(ApiError::missing_parameter("AutoEnableIO"));
    };
    v.auto_enable_io = value;
    Ok(())
}

/// `EnableVolumeIO`: the volume must exist; its I/O, never suspended here, stays enabled.
pub fn enable_volume_io(region: &mut Region, input: EnableVolumeIORequest) -> Result<(), ApiError> {
    Kind::Volume.get(&region.volumes, &input.volume_id)?;
    Ok(())
}
