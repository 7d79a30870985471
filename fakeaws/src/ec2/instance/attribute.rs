//! `ModifyInstanceAttribute`, `ResetInstanceAttribute` and `ModifyInstanceMetadataOptions`.
//!
//! `ModifyInstanceAttribute`: one attribute per call, named by its own member
//! (`InstanceType.Value`, `SourceDestCheck.Value`, `GroupId.N`, ...) or by `Attribute` with a
//! plain `Value`. The type, the user data, EBS optimisation and ENA support change only while
//! the instance is stopped; the groups and the source/destination check are its primary
//! interface's; termination and stop protection are what TerminateInstances and
//! StopInstances refuse on.
//!
//! `ResetInstanceAttribute`, as the API reference describes it: only `kernel` and `ramdisk`
//! (on a stopped instance) and `sourceDestCheck` (running or stopped; back to `true`, checking
//! enabled) can be reset.
//!
//! `ModifyInstanceMetadataOptions`, on a running or stopped instance: the options change at
//! once and are `pending` until they apply, on a running instance at its next step (the
//! clock's, as for its state) and on a stopped one when it runs again.

use crate::ec2::Kind;
use crate::ec2::error::Code;
use crate::ec2::network_interface::attribute::modify_network_interface_attribute;
use crate::generated::ec2::{
    AttributeBooleanValue, AttributeValue, InstanceAttributeName,
    InstanceBlockDeviceMappingSpecification, InstanceMetadataOptionsState, InstanceStateName,
    InstanceType, ModifyInstanceAttributeRequest, ModifyInstanceMetadataOptionsRequest,
    ModifyInstanceMetadataOptionsResult, ModifyNetworkInterfaceAttributeRequest,
    ResetInstanceAttributeRequest, ShutdownBehavior,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::Instance;
use super::run::{architecture_of, check_user_data_size};

/// One change an instance can be asked for.
enum Change {
    InstanceType(String),
    /// Base64, as DescribeInstanceAttribute gives it back.
    UserData(String),
    DisableApiTermination(bool),
    DisableApiStop(bool),
    ShutdownBehavior(String),
    SourceDestCheck(bool),
    Groups(Vec<String>),
    EbsOptimized(bool),
    EnaSupport(bool),
    /// Intel 82599 VF enhanced networking: `simple`, the only value (it cannot be turned off).
    SriovNetSupport(String),
    /// `BlockDeviceMapping.N`: each attached volume's DeleteOnTermination, by device.
    DeleteOnTermination(Vec<VolumeFlag>),
}

/// One `BlockDeviceMapping.N` of ModifyInstanceAttribute.
struct VolumeFlag {
    device: String,
    /// The volume the caller expects at the device, when named.
    volume_id: Option<String>,
    delete_on_termination: bool,
}

impl Change {
    /// The attribute's name, as `Attribute` spells it.
    fn name(&self) -> &'static str {
        match self {
            Change::InstanceType(_) => "instanceType",
            Change::UserData(_) => "userData",
            Change::DisableApiTermination(_) => "disableApiTermination",
            Change::DisableApiStop(_) => "disableApiStop",
            Change::ShutdownBehavior(_) => "instanceInitiatedShutdownBehavior",
            Change::SourceDestCheck(_) => "sourceDestCheck",
            Change::Groups(_) => "groupSet",
            Change::EbsOptimized(_) => "ebsOptimized",
            Change::EnaSupport(_) => "enaSupport",
            Change::SriovNetSupport(_) => "sriovNetSupport",
            Change::DeleteOnTermination(_) => "blockDeviceMapping",
        }
    }

    /// Whether the instance must be stopped for it.
    fn needs_stopped(&self) -> bool {
        matches!(
            self,
            Change::InstanceType(_)
                | Change::UserData(_)
                | Change::EbsOptimized(_)
                | Change::EnaSupport(_)
                | Change::SriovNetSupport(_)
        )
    }
}

/// The value of a `*.Value` boolean member named `member`.
fn flag(v: AttributeBooleanValue, member: &str) -> Result<bool, ApiError> {
    v.value
        .ok_or_else(|| ApiError::missing_parameter(&format!("{member}.Value")))
}

/// The value of a `*.Value` string member named `member`.
fn text(v: AttributeValue, member: &str) -> Result<String, ApiError> {
    v.value
        .ok_or_else(|| ApiError::missing_parameter(&format!("{member}.Value")))
}

/// `Value` read as a boolean for the attribute `name`.
fn plain_flag(value: &str, name: &str) -> Result<bool, ApiError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(ApiError::invalid_parameter(
            "Value",
            other,
            &format!("The attribute {name} takes true or false."),
        )),
    }
}

/// The change `Attribute` and `Value` ask for.
fn plain(attribute: InstanceAttributeName, value: Option<String>) -> Result<Change, ApiError> {
    let name = attribute.as_str();
    let value = || {
        value
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("Value"))
    };
    Ok(match attribute {
        InstanceAttributeName::InstanceType => Change::InstanceType(value()?),
        InstanceAttributeName::UserData => Change::UserData(value()?),
        InstanceAttributeName::DisableApiTermination => {
            Change::DisableApiTermination(plain_flag(&value()?, name)?)
        }
        InstanceAttributeName::DisableApiStop => {
            Change::DisableApiStop(plain_flag(&value()?, name)?)
        }
        InstanceAttributeName::InstanceInitiatedShutdownBehavior => {
            Change::ShutdownBehavior(value()?)
        }
        InstanceAttributeName::SourceDestCheck => {
            Change::SourceDestCheck(plain_flag(&value()?, name)?)
        }
        InstanceAttributeName::EbsOptimized => Change::EbsOptimized(plain_flag(&value()?, name)?),
        InstanceAttributeName::EnaSupport => Change::EnaSupport(plain_flag(&value()?, name)?),
        InstanceAttributeName::SriovNetSupport => Change::SriovNetSupport(value()?),
        InstanceAttributeName::GroupSet => {
            return Err(ApiError::invalid_combination(
                "The attribute groupSet is modified with GroupId.N, not with Value.",
            ));
        }
        InstanceAttributeName::RootDeviceName | InstanceAttributeName::ProductCodes => {
            return Err(ApiError::invalid_parameter(
                "Attribute",
                name,
                "This attribute cannot be modified.",
            ));
        }
        other => {
            return Err(ApiError::not_implemented(format!(
                "fakeaws does not modify the instance attribute {}",
                other.as_str()
            )));
        }
    })
}

/// Every change `input` asks for, in the order of the model's members.
fn changes(input: ModifyInstanceAttributeRequest) -> Result<Vec<Change>, ApiError> {
    let mut out = Vec::new();
    if let Some(v) = input.source_dest_check {
        out.push(Change::SourceDestCheck(flag(v, "SourceDestCheck")?));
    }
    if let Some(v) = input.disable_api_stop {
        out.push(Change::DisableApiStop(flag(v, "DisableApiStop")?));
    }
    if let Some(a) = input.attribute {
        out.push(plain(a, input.value)?);
    } else if input.value.is_some() {
        return Err(ApiError::missing_parameter("Attribute"));
    }
    if let Some(v) = input.disable_api_termination {
        out.push(Change::DisableApiTermination(flag(
            v,
            "DisableApiTermination",
        )?));
    }
    if let Some(v) = input.instance_type {
        out.push(Change::InstanceType(text(v, "InstanceType")?));
    }
    if let Some(v) = input.user_data {
        let bytes = v
            .value
            .ok_or_else(|| ApiError::missing_parameter("UserData.Value"))?;
        out.push(Change::UserData(aws_smithy_types::base64::encode(
            bytes.as_ref(),
        )));
    }
    if let Some(v) = input.instance_initiated_shutdown_behavior {
        out.push(Change::ShutdownBehavior(text(
            v,
            "InstanceInitiatedShutdownBehavior",
        )?));
    }
    if let Some(groups) = input.groups {
        out.push(Change::Groups(groups));
    }
    if let Some(v) = input.ebs_optimized {
        out.push(Change::EbsOptimized(flag(v, "EbsOptimized")?));
    }
    if let Some(v) = input.ena_support {
        out.push(Change::EnaSupport(flag(v, "EnaSupport")?));
    }
    if let Some(v) = input.sriov_net_support {
        out.push(Change::SriovNetSupport(text(v, "SriovNetSupport")?));
    }
    if let Some(mappings) = input.block_device_mappings {
        out.push(Change::DeleteOnTermination(volume_flags(mappings)?));
    }
    Ok(out)
}

/// The `BlockDeviceMapping.N` of a request, read: a device each, only EBS volumes' flags
/// (instance store volumes are added at launch only), `true` when the flag is left out.
fn volume_flags(
    mappings: Vec<InstanceBlockDeviceMappingSpecification>,
) -> Result<Vec<VolumeFlag>, ApiError> {
    let mut out: Vec<VolumeFlag> = Vec::with_capacity(mappings.len());
    for (n, m) in mappings.into_iter().enumerate() {
        let at = format!("BlockDeviceMapping.{}", n + 1);
        let Some(device) = m.device_name.filter(|d| !d.is_empty()) else {
            return Err(ApiError::missing_parameter(&format!("{at}.DeviceName")));
        };
        if m.virtual_name.is_some() || m.no_device.is_some() {
            return Err(ApiError::new(
                Code::InvalidInstanceAttributeValue,
                format!(
                    "The block device mapping of {device} can only change an attached EBS \
                     volume's DeleteOnTermination: instance store volumes are added, and \
                     devices suppressed, only at launch."
                ),
            ));
        }
        if out.iter().any(|f| f.device == device) {
            return Err(ApiError::invalid_value(format!(
                "The device {device} is named more than once."
            )));
        }
        let (volume_id, delete) = m
            .ebs
            .map_or((None, None), |e| (e.volume_id, e.delete_on_termination));
        out.push(VolumeFlag {
            device,
            volume_id,
            delete_on_termination: delete.unwrap_or(true),
        });
    }
    Ok(out)
}

/// The volumes whose flags `flags` change, with their new values, each checked against what
/// is attached to `i` at its device.
fn flagged_volumes(i: &Instance, flags: Vec<VolumeFlag>) -> Result<Vec<(String, bool)>, ApiError> {
    flags
        .into_iter()
        .map(|f| {
            let Some((_, volume)) = i.volumes.iter().find(|(d, _)| *d == f.device) else {
                return Err(ApiError::new(
                    Code::InvalidInstanceAttributeValue,
                    format!("No device is currently mapped at {}", f.device),
                ));
            };
            match f.volume_id {
                Some(asked) if asked != *volume => Err(ApiError::new(
                    Code::InvalidInstanceAttributeValue,
                    format!(
                        "The volume '{asked}' is not attached to instance '{}' at {}: '{volume}' \
                         is.",
                        i.id, f.device
                    ),
                )),
                _ => Ok((volume.clone(), f.delete_on_termination)),
            }
        })
        .collect()
}

/// `ModifyInstanceAttribute`.
pub fn modify_instance_attribute(
    region: &mut Region,
    input: ModifyInstanceAttributeRequest,
) -> Result<(), ApiError> {
    let id = input.instance_id.clone();
    let i = Kind::Instance.get(&region.instances, &id)?;
    let mut asked = changes(input)?;
    let change = match asked.len() {
        0 => {
            return Err(ApiError::missing_parameter(
                "Attribute (or one attribute's own member, such as InstanceType.Value)",
            ));
        }
        1 => asked.remove(0),
        _ => {
            let names: Vec<&str> = asked.iter().map(Change::name).collect();
            return Err(ApiError::invalid_combination(format!(
                "Fields for multiple attribute types specified: {}",
                names.join(", ")
            )));
        }
    };
    if i.is_gone() {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!("The instance '{id}' is not in a state from which it can be modified."),
        ));
    }
    if change.needs_stopped() && i.state != InstanceStateName::Stopped {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!("The instance '{id}' is not in the 'stopped' state."),
        ));
    }
    let on_interface = |groups, source_dest_check| ModifyNetworkInterfaceAttributeRequest {
        dry_run: None,
        network_interface_id: i.eni_id.clone(),
        description: None,
        source_dest_check,
        groups,
        attachment: None,
        connection_tracking_specification: None,
        enable_primary_ipv6: None,
    };
    let architecture = i.architecture;
    let current_type = i.instance_type;
    // Checked first, applied after: a refused change leaves the instance as it was.
    let apply: Box<dyn FnOnce(&mut Instance)> = match change {
        Change::InstanceType(t) => {
            let wanted = InstanceType::from_wire(&t).ok_or_else(|| {
                ApiError::invalid_value(crate::ec2::instance_type::not_types(&[t.as_str()]))
            })?;
            if architecture_of(wanted) != architecture {
                return Err(ApiError::new(
                    Code::InvalidInstanceAttributeValue,
                    format!(
                        "Modifying the instance type from {} to {t} is not allowed: the \
                         instance's image is {}, the type {}.",
                        current_type.as_str(),
                        architecture.as_str(),
                        architecture_of(wanted).as_str()
                    ),
                ));
            }
            // The new type must boot the instance's image, and keep its AMD SEV-SNP.
            let boot = super::boot::current_mode(i.options.boot_mode, architecture, wanted)?;
            super::boot::check_sev_snp(i.options.amd_sev_snp, wanted, boot)?;
            // And carry its Elastic Fabric Adapters.
            let efas = crate::ec2::network_interface::efa::on_instance(region, i);
            crate::ec2::network_interface::efa::check(wanted, efas)?;
            let cpu_credits = super::credit::after_resize(region, i, wanted);
            Box::new(move |i| {
                i.instance_type = wanted;
                i.cpu_credits = cpu_credits;
                i.options.current_boot_mode = Some(boot);
            })
        }
        Change::UserData(data) => {
            let raw = aws_smithy_types::base64::decode(data.trim())
                .map_err(|_| ApiError::invalid_value("Invalid BASE64 encoding of user data."))?;
            check_user_data_size(raw.len())?;
            Box::new(move |i| i.user_data = Some(data))
        }
        Change::ShutdownBehavior(b) => {
            let behaviour = ShutdownBehavior::from_wire(&b).ok_or_else(|| {
                ApiError::new(
                    Code::InvalidInstanceAttributeValue,
                    format!(
                        "Value ({b}) for parameter instanceInitiatedShutdownBehavior is \
                         invalid: it must be stop or terminate."
                    ),
                )
            })?;
            Box::new(move |i| i.shutdown_behavior = behaviour)
        }
        Change::DisableApiTermination(v) => Box::new(move |i| i.disable_api_termination = v),
        Change::DisableApiStop(v) => Box::new(move |i| i.disable_api_stop = v),
        Change::EbsOptimized(v) => Box::new(move |i| i.ebs_optimized = v),
        Change::EnaSupport(v) => Box::new(move |i| i.ena_support = v),
        // Every image here has it on (`simple`), and so has every instance: the one value
        // the API reference documents is kept as it is; there is no way to turn it off.
        Change::SriovNetSupport(v) => {
            if v != "simple" {
                return Err(ApiError::new(
                    Code::InvalidInstanceAttributeValue,
                    format!(
                        "Value ({v}) for parameter sriovNetSupport is invalid. The only \
                         supported value is simple."
                    ),
                ));
            }
            return Ok(());
        }
        // The primary interface's groups and check, checked and set as
        // ModifyNetworkInterfaceAttribute checks and sets them.
        Change::Groups(groups) => {
            return modify_network_interface_attribute(region, on_interface(Some(groups), None));
        }
        Change::SourceDestCheck(v) => {
            let check = AttributeBooleanValue { value: Some(v) };
            return modify_network_interface_attribute(region, on_interface(None, Some(check)));
        }
        // Kept on each volume's attachment, where DescribeVolumes, DescribeInstances and
        // termination read it.
        Change::DeleteOnTermination(flags) => {
            for (volume, delete) in flagged_volumes(i, flags)? {
                crate::ec2::volume::set_delete_on_termination(region, &volume, &id, delete);
            }
            return Ok(());
        }
    };
    let Some(i) = region.instances.0.get_mut(&id) else {
        return Err(Kind::Instance.not_found(&[&id]));
    };
    apply(i);
    Ok(())
}

/// `ResetInstanceAttribute`.
pub fn reset_instance_attribute(
    region: &mut Region,
    input: ResetInstanceAttributeRequest,
) -> Result<(), ApiError> {
    let id = input.instance_id;
    let i = Kind::Instance.get(&region.instances, &id)?;
    let (state, eni_id) = (i.state, i.eni_id.clone());
    let wrong_state = |wanted: &str| {
        ApiError::new(
            Code::IncorrectInstanceState,
            format!("The instance '{id}' is not in the {wanted} state."),
        )
    };
    match input.attribute {
        InstanceAttributeName::SourceDestCheck => {
            if !matches!(
                state,
                InstanceStateName::Running | InstanceStateName::Stopped
            ) {
                return Err(wrong_state("'running' or 'stopped'"));
            }
            // The primary interface's, set as ModifyInstanceAttribute sets it.
            modify_network_interface_attribute(
                region,
                ModifyNetworkInterfaceAttributeRequest {
                    dry_run: None,
                    network_interface_id: eni_id,
                    description: None,
                    source_dest_check: Some(AttributeBooleanValue { value: Some(true) }),
                    groups: None,
                    attachment: None,
                    connection_tracking_specification: None,
                    enable_primary_ipv6: None,
                },
            )
        }
        InstanceAttributeName::Kernel | InstanceAttributeName::Ramdisk => {
            if state != InstanceStateName::Stopped {
                return Err(wrong_state("'stopped'"));
            }
            // The fake's instances boot their image's own kernel (HVM): they hold no kernel
            // or ramdisk of their own, which is what a reset leaves them with.
            Ok(())
        }
        other => Err(ApiError::invalid_parameter(
            "attribute",
            other.as_str(),
            "Only kernel, ramdisk and sourceDestCheck can be reset.",
        )),
    }
}

/// The hop limits the instance metadata service takes.
const HOP_LIMITS: std::ops::RangeInclusive<i32> = 1..=64;

/// `ModifyInstanceMetadataOptions`.
pub fn modify_instance_metadata_options(
    region: &mut Region,
    input: ModifyInstanceMetadataOptionsRequest,
) -> Result<ModifyInstanceMetadataOptionsResult, ApiError> {
    let id = input.instance_id.clone();
    let i = Kind::Instance.get(&region.instances, &id)?;
    let state = i.state;
    if !matches!(
        state,
        InstanceStateName::Running | InstanceStateName::Stopped
    ) {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!(
                "The instance '{id}' is not in the 'running' or 'stopped' state: its metadata \
                 options cannot be modified."
            ),
        ));
    }
    if let Some(hops) = input.http_put_response_hop_limit
        && !HOP_LIMITS.contains(&hops)
    {
        return Err(ApiError::invalid_parameter(
            "HttpPutResponseHopLimit",
            &hops.to_string(),
            "It must be an integer from 1 to 64.",
        ));
    }
    let Some(i) = region.instances.0.get_mut(&id) else {
        return Err(Kind::Instance.not_found(&[&id]));
    };
    let m = &mut i.metadata;
    // Each option given is set; whether any was decides whether anything is pending.
    let changed = [
        input.http_tokens.map(|v| m.http_tokens = Some(v)),
        input
            .http_put_response_hop_limit
            .map(|v| m.http_put_response_hop_limit = Some(v)),
        input.http_endpoint.map(|v| m.http_endpoint = Some(v)),
        input
            .http_protocol_ipv6
            .map(|v| m.http_protocol_ipv6 = Some(v)),
        input
            .instance_metadata_tags
            .map(|v| m.instance_metadata_tags = Some(v)),
    ]
    .iter()
    .any(Option::is_some);
    if changed {
        m.state = Some(InstanceMetadataOptionsState::Pending);
    }
    let options = m.clone();
    // A running instance applies them at its next step; a stopped one when it runs again.
    if state == InstanceStateName::Running && changed {
        let now = region.clock.now();
        region.transitions.schedule(now, Subject::Instance, &id);
    }
    Ok(ModifyInstanceMetadataOptionsResult {
        instance_id: Some(id),
        instance_metadata_options: Some(options),
    })
}
