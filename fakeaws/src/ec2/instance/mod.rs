//! Instances: RunInstances, DescribeInstances, TerminateInstances, StopInstances,
//! StartInstances, RebootInstances, DescribeInstanceStatus, DescribeInstanceAttribute,
//! ModifyInstanceAttribute, ModifyInstanceMetadataOptions. Each instance has a primary network interface
//! (with a private address from its subnet, and a public one when the subnet maps them) and
//! EBS volumes from its image and block device mappings. States follow AWS: `pending` ->
//! `running` -> `stopping` -> `stopped`, and `shutting-down` -> `terminated`, which stays
//! visible for an hour.
//!
//! `run` launches (RunInstances: volumes, capacity, the records), `placement` decides where a
//! launch goes (interface, subnet, zone, groups, profile), `render` answers
//! DescribeInstances and DescribeInstanceAttribute, `attribute` ModifyInstanceAttribute,
//! `filter` holds the instance filters, `credit` the CPU credits of burstable instances,
//! `profile` the IAM instance profile associations, `monitoring` detailed monitoring, `state` the state machine (Terminate, Stop, Start, Reboot,
//! and the transitions the clock applies), `status` DescribeInstanceStatus.

mod attribute;
mod boot;
mod console;
mod credit;
mod filter;
mod metadata_defaults;
mod modify_placement;
mod monitoring;
mod nics;
mod options;
mod placement;
mod profile;
mod render;
mod run;
mod state;
mod status;

use std::net::Ipv4Addr;

use aws_smithy_types::DateTime;

use crate::region::Region;

use crate::generated::ec2::{
    ArchitectureValues, InstanceMetadataOptionsResponse, InstanceState, InstanceStateName,
    InstanceType, ShutdownBehavior, Tenancy,
};

pub use attribute::{
    modify_instance_attribute, modify_instance_metadata_options, reset_instance_attribute,
};
pub use console::{get_console_output, get_password_data};
pub use credit::{
    Defaults as CreditDefaults, describe_instance_credit_specifications,
    get_default_credit_specification, modify_default_credit_specification,
    modify_instance_credit_specification,
};
pub use metadata_defaults::{
    Defaults as MetadataDefaults, get_instance_metadata_defaults, modify_instance_metadata_defaults,
};
pub use modify_placement::modify_instance_placement;
pub use monitoring::{monitor_instances, unmonitor_instances};
pub use options::{
    LaunchOptions, modify_instance_capacity_reservation_attributes,
    modify_instance_maintenance_options, modify_private_dns_name_options,
};
use placement::{
    Placement, existing_interface, groups_of_launch, iam_profile_name, iam_profile_record,
    launch_interfaces, placement,
};
pub use profile::{
    associate_iam_instance_profile, describe_iam_instance_profile_associations,
    disassociate_iam_instance_profile, replace_iam_instance_profile_association,
};
pub use render::{describe_instance_attribute, describe_instances};
use render::{groups_of, render_reservation, reservation};
pub use run::{empty_launch, run_instances};
pub use state::{
    advance, purge, reboot_instances, service_shutdown, start_instances, stop_instances,
    terminate_instances,
};
pub use status::describe_instance_status;

/// The default of a flag that is on unless said otherwise (for state files written before
/// the flag was kept).
fn enabled() -> bool {
    true
}

/// AWS's limit on user data: 16 KiB before base64 encoding.
pub const MAX_USER_DATA: usize = 16 * 1024;

crate::region::table! {
    /// Instances by id.
    Instances of Instance
}

/// One instance.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Instance {
    /// `i-...`.
    pub id: String,
    /// `r-...`.
    pub reservation_id: String,
    /// Its position in its reservation.
    pub launch_index: i32,
    /// Its image.
    pub image_id: String,
    /// Its type.
    pub instance_type: InstanceType,
    /// Its architecture (from its image).
    pub architecture: ArchitectureValues,
    /// Its key pair's name.
    pub key_name: Option<String>,
    /// Its subnet.
    pub subnet_id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Its zone.
    pub zone: String,
    /// Its primary interface.
    pub eni_id: String,
    /// The interfaces AttachNetworkInterface attached to it (attaching, attached or
    /// detaching), in the order they were attached.
    #[serde(default)]
    pub secondary_enis: Vec<String>,
    /// Its private address (kept after termination, as AWS shows it).
    pub private_ip: Ipv4Addr,
    /// Its state.
    pub state: InstanceStateName,
    /// Why it is in its state: (code, message).
    pub state_reason: Option<(String, String)>,
    /// AWS's `stateTransitionReason`.
    pub transition_reason: String,
    /// When it was launched.
    #[serde(with = "crate::state::with::time")]
    pub launch_time: DateTime,
    /// The root device's name.
    pub root_device_name: String,
    /// Its volumes: (device, volume id).
    pub volumes: Vec<(String, String)>,
    /// Its instance profile: (arn, id).
    pub iam_profile: Option<(String, String)>,
    /// The association of that profile with the instance (`iip-assoc-...`) and its time.
    #[serde(default)]
    pub iam_association: Option<profile::Association>,
    /// Its user data, base64 as given.
    pub user_data: Option<String>,
    /// The ClientToken it was launched with.
    pub client_token: Option<String>,
    /// EBS optimisation.
    pub ebs_optimized: bool,
    /// Detailed monitoring.
    pub monitoring: bool,
    /// Termination protection.
    pub disable_api_termination: bool,
    /// Stop protection.
    #[serde(default)]
    pub disable_api_stop: bool,
    /// Enhanced networking (ENA), on for every image the fake holds.
    #[serde(default = "enabled")]
    pub ena_support: bool,
    /// Whether its primary interface takes a public address of AWS's pool at launch and at
    /// each start (as the launch decided it: `AssociatePublicIpAddress`, else the subnet's
    /// mapping then), when it holds no Elastic IP.
    #[serde(default = "enabled")]
    pub public_ip_on_start: bool,
    /// Whether that address is a carrier IP address (`AssociateCarrierIpAddress`, in a
    /// Wavelength Zone).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carrier_ip: bool,
    /// `stop` or `terminate` on an OS shutdown.
    pub shutdown_behavior: ShutdownBehavior,
    /// Its instance metadata options.
    pub metadata: InstanceMetadataOptionsResponse,
    /// Its tenancy.
    pub tenancy: Tenancy,
    /// The placement group it was launched into, by id.
    #[serde(default)]
    pub placement_group: Option<String>,
    /// Its partition, in a partition placement group.
    #[serde(default)]
    pub partition: Option<i32>,
    /// The Dedicated Host it runs on (or last ran on), for an instance of `host` tenancy.
    #[serde(default)]
    pub host_id: Option<String>,
    /// Its affinity to that host (`default` or `host`).
    #[serde(default)]
    pub affinity: Option<String>,
    /// Its Spot Instance request, for a Spot Instance.
    #[serde(default)]
    pub spot_request: Option<String>,
    /// The Capacity Reservation it runs in (or last ran in, once stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservation: Option<String>,
    /// The credit option of a burstable instance (`standard` or `unlimited`), kept when it
    /// is resized to another family.
    #[serde(default)]
    pub cpu_credits: Option<String>,
    /// Its CPU, capacity reservation, hibernation, enclave, recovery and private DNS options.
    #[serde(default)]
    pub options: options::LaunchOptions,
    /// Whether it is stopping because StopInstances asked it to hibernate (its `stopped`
    /// state then says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hibernating: bool,
    /// What its console tells (GetConsoleOutput): the transitions the fake made, the latest
    /// few hundred.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<console::Post>,
}

/// Fails with `IncorrectInstanceState` (in the fake's words) when `i` is shutting down or
/// terminated: `what` of it (`its monitoring`, `its options`) cannot change then.
fn refuse_if_gone(i: &Instance, what: &str) -> Result<(), crate::protocol::error::ApiError> {
    if matches!(
        i.state,
        InstanceStateName::Terminated | InstanceStateName::ShuttingDown
    ) {
        return Err(crate::protocol::error::ApiError::new(
            crate::ec2::error::Code::IncorrectInstanceState,
            format!(
                "The instance '{}' is {}: {what} cannot change.",
                i.id,
                i.state.as_str()
            ),
        ));
    }
    Ok(())
}

/// The security groups of instance `i` (its primary interface's), as its answers list them.
pub fn security_groups(
    region: &crate::region::Region,
    i: &Instance,
) -> Vec<crate::generated::ec2::GroupIdentifier> {
    render::groups_of(region, i)
}

/// Records the volume `volume_id` attached to the instance `id` at `device` (AttachVolume).
pub fn volume_attached(
    region: &mut crate::region::Region,
    id: &str,
    device: &str,
    volume_id: &str,
) {
    if let Some(i) = region.instances.0.get_mut(id) {
        i.volumes.push((device.to_string(), volume_id.to_string()));
    }
}

/// Forgets the volume `volume_id` of the instance `id` (DetachVolume).
pub fn volume_detached(region: &mut crate::region::Region, id: &str, volume_id: &str) {
    if let Some(i) = region.instances.0.get_mut(id) {
        i.volumes.retain(|(_, v)| v != volume_id);
    }
}

impl Instance {
    /// Whether the instance is terminated (or on its way there).
    pub fn is_gone(&self) -> bool {
        matches!(
            self.state,
            InstanceStateName::ShuttingDown | InstanceStateName::Terminated
        )
    }
}

/// AWS's state code of a state name.
pub fn state_code(s: InstanceStateName) -> i32 {
    match s {
        InstanceStateName::Pending => 0,
        InstanceStateName::Running => 16,
        InstanceStateName::ShuttingDown => 32,
        InstanceStateName::Terminated => 48,
        InstanceStateName::Stopping => 64,
        InstanceStateName::Stopped => 80,
    }
}

fn state(s: InstanceStateName) -> InstanceState {
    InstanceState {
        code: Some(state_code(s)),
        name: Some(s),
    }
}

/// The interfaces attached to instance `i` (attaching, attached or detaching), the primary
/// first, then in the order they were attached.
pub fn interfaces<'r>(
    region: &'r Region,
    i: &'r Instance,
) -> impl Iterator<Item = &'r crate::ec2::network_interface::NetworkInterface> {
    std::iter::once(&i.eni_id)
        .chain(&i.secondary_enis)
        .filter_map(|id| region.network_interfaces.get(id))
        .filter(|e| e.attachment.as_ref().is_some_and(|a| a.instance_id == i.id))
}

/// Notes that interface `eni_id` is now attached to instance `id` (AttachNetworkInterface).
pub fn add_interface(region: &mut Region, id: &str, eni_id: &str) {
    if let Some(i) = region.instances.0.get_mut(id) {
        i.secondary_enis.push(eni_id.to_string());
    }
}

/// Notes that interface `eni_id` is no longer attached to instance `id` (its detachment is
/// done).
pub fn drop_interface(region: &mut Region, id: &str, eni_id: &str) {
    if let Some(i) = region.instances.0.get_mut(id) {
        i.secondary_enis.retain(|e| e != eni_id);
    }
}

/// The interfaces of instance `id`, the primary first, its list of the others emptied (it is
/// being terminated).
pub fn take_interfaces(region: &mut Region, id: &str) -> Vec<String> {
    let Some(i) = region.instances.0.get_mut(id) else {
        return Vec::new();
    };
    std::iter::once(i.eni_id.clone())
        .chain(std::mem::take(&mut i.secondary_enis))
        .collect()
}
