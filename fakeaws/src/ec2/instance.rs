//! Instances: RunInstances, DescribeInstances, TerminateInstances, StopInstances,
//! StartInstances, DescribeInstanceStatus. Each instance has a primary network interface
//! (with a private address from its subnet, and a public one when the subnet maps them) and
//! EBS volumes from its image and block device mappings. States follow AWS: `pending` ->
//! `running` -> `stopping` -> `stopped`, and `shutting-down` -> `terminated`, which stays
//! visible for an hour.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use aws_smithy_types::DateTime;

use crate::ec2::error::{self, Code};
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::network_interface::{self, Attachment as EniAttachment, NewInterface, PublicIp};
use crate::ec2::volume::{self, Attachment as VolumeAttachment, Volume};
use crate::ec2::{Kind, elastic_ip, fingerprint, image, page, security_group, tags};
use crate::generated::ec2::{
    ArchitectureValues, AttachmentStatus, AttributeBooleanValue, AttributeValue,
    DescribeInstanceAttributeRequest, DescribeInstanceStatusRequest, DescribeInstanceStatusResult,
    DescribeInstancesRequest, DescribeInstancesResult, DeviceType, EbsInstanceBlockDevice,
    GroupIdentifier, HttpTokensState, HypervisorType, IamInstanceProfile, Instance as InstanceOut,
    InstanceAttribute, InstanceAttributeName, InstanceBlockDeviceMapping,
    InstanceMetadataEndpointState, InstanceMetadataOptionsResponse, InstanceMetadataOptionsState,
    InstanceMetadataProtocolState, InstanceMetadataTagsState, InstanceNetworkInterface,
    InstanceNetworkInterfaceAssociation, InstanceNetworkInterfaceAttachment,
    InstanceNetworkInterfaceSpecification, InstancePrivateIpAddress, InstanceState,
    InstanceStateChange, InstanceStateName, InstanceStatus, InstanceStatusDetails,
    InstanceStatusSummary, InstanceType, Monitoring, MonitoringState, NetworkInterfaceStatus,
    NetworkInterfaceType, Placement, Reservation, ResourceType, RunInstancesRequest,
    ShutdownBehavior, StartInstancesRequest, StartInstancesResult, StateReason, StatusName,
    StatusType, StopInstancesRequest, StopInstancesResult, SummaryStatus, Tenancy,
    TerminateInstancesRequest, TerminateInstancesResult, VirtualizationType, VolumeType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

/// AWS's limit on user data: 16 KiB before base64 encoding.
pub const MAX_USER_DATA: usize = 16 * 1024;

crate::region::table! {
    /// Instances by id.
    Instances of Instance
}

/// One instance.
#[derive(Debug, Clone)]
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
    /// Its private address (kept after termination, as AWS shows it).
    pub private_ip: Ipv4Addr,
    /// Its state.
    pub state: InstanceStateName,
    /// Why it is in its state: (code, message).
    pub state_reason: Option<(String, String)>,
    /// AWS's `stateTransitionReason`.
    pub transition_reason: String,
    /// When it was launched.
    pub launch_time: DateTime,
    /// The root device's name.
    pub root_device_name: String,
    /// Its volumes: (device, volume id).
    pub volumes: Vec<(String, String)>,
    /// Its instance profile: (arn, id).
    pub iam_profile: Option<(String, String)>,
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
    /// `stop` or `terminate` on an OS shutdown.
    pub shutdown_behavior: ShutdownBehavior,
    /// Its instance metadata options.
    pub metadata: InstanceMetadataOptionsResponse,
    /// Its tenancy.
    pub tenancy: Tenancy,
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

/// The architecture an instance type runs: AWS's Graviton families (`a1`, `*g`, `*gd`,
/// `*gn`, ...) are arm64, the rest x86_64.
fn architecture_of(t: InstanceType) -> ArchitectureValues {
    let family = t.as_str().split('.').next().unwrap_or_default();
    let arm = family == "a1"
        || family
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit())
            .is_some_and(|(i, _)| family[i + 1..].starts_with('g'));
    if arm {
        ArchitectureValues::Arm64
    } else {
        ArchitectureValues::X8664
    }
}

struct Planned {
    volume: Volume,
    device: String,
}

/// The primary interface of a `NetworkInterfaces` launch (device index 0, a new interface in a
/// subnet, optionally with a public address), checked as AWS checks it; `None` without one.
fn primary_interface(
    input: &RunInstancesRequest,
) -> Result<Option<InstanceNetworkInterfaceSpecification>, ApiError> {
    let list = input.network_interfaces.as_deref().unwrap_or_default();
    let one = match list {
        [] => return Ok(None),
        [one] => one,
        _ => {
            return Err(ApiError::not_implemented(
                "fakeaws launches instances with one network interface (DeviceIndex 0)",
            ));
        }
    };
    if input.subnet_id.is_some() {
        return Err(ApiError::invalid_combination(
            "Network interfaces and an instance-level subnet ID may not be specified on the same request",
        ));
    }
    if input
        .security_group_ids
        .as_ref()
        .is_some_and(|g| !g.is_empty())
        || input
            .security_groups
            .as_ref()
            .is_some_and(|g| !g.is_empty())
    {
        return Err(ApiError::invalid_combination(
            "Network interfaces and an instance-level security groups may not be specified on the same request",
        ));
    }
    if input.private_ip_address.is_some() && one.private_ip_address.is_some() {
        return Err(ApiError::invalid_combination(
            "Network interfaces and an instance-level private IP address may not be specified on the same request",
        ));
    }
    match one.device_index {
        None => {
            return Err(ApiError::invalid_value(
                "Each network interface requires a device index.",
            ));
        }
        Some(0) => {}
        Some(_) => {
            return Err(ApiError::not_implemented(
                "fakeaws launches instances with only their primary interface (DeviceIndex 0)",
            ));
        }
    }
    let unserved = [
        ("NetworkInterfaceId", one.network_interface_id.is_some()),
        ("Ipv6AddressCount", one.ipv6_address_count.is_some()),
        ("Ipv6Addresses", one.ipv6_addresses.is_some()),
        ("PrivateIpAddresses", one.private_ip_addresses.is_some()),
        (
            "SecondaryPrivateIpAddressCount",
            one.secondary_private_ip_address_count.is_some(),
        ),
        (
            "AssociateCarrierIpAddress",
            one.associate_carrier_ip_address.is_some(),
        ),
        ("InterfaceType", one.interface_type.is_some()),
        (
            "NetworkCardIndex",
            one.network_card_index.is_some_and(|n| n != 0),
        ),
        ("Ipv4Prefixes", one.ipv4_prefixes.is_some()),
        ("Ipv4PrefixCount", one.ipv4_prefix_count.is_some()),
        ("Ipv6Prefixes", one.ipv6_prefixes.is_some()),
        ("Ipv6PrefixCount", one.ipv6_prefix_count.is_some()),
        ("PrimaryIpv6", one.primary_ipv6.is_some()),
        ("EnaSrdSpecification", one.ena_srd_specification.is_some()),
        (
            "ConnectionTrackingSpecification",
            one.connection_tracking_specification.is_some(),
        ),
        ("EnaQueueCount", one.ena_queue_count.is_some()),
    ];
    if let Some((name, _)) = unserved.iter().find(|(_, set)| *set) {
        return Err(ApiError::not_implemented(format!(
            "fakeaws does not serve NetworkInterface.N.{name} of RunInstances"
        )));
    }
    if one.subnet_id.is_none() {
        return Err(ApiError::missing_parameter("NetworkInterface.1.SubnetId"));
    }
    Ok(Some(one.clone()))
}

/// `RunInstances`; the same ClientToken with the same request answers the same reservation.
pub fn run_instances(
    region: &mut Region,
    input: RunInstancesRequest,
) -> Result<Reservation, ApiError> {
    let print = fingerprint(&RunInstancesRequest {
        client_token: None,
        ..input.clone()
    });
    let token = input.client_token.clone();
    if let Some(reservation_id) = region
        .ledger
        .replay("RunInstances", token.as_deref(), &print)?
    {
        return Ok(reservation(region, &reservation_id));
    }
    if input.min_count < 1 || input.max_count < input.min_count {
        return Err(ApiError::invalid_value(format!(
            "MinCount ({}) must be at least 1 and at most MaxCount ({}).",
            input.min_count, input.max_count
        )));
    }
    let image_id = input
        .image_id
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("ImageId"))?;
    let image = Kind::Image
        .get(&region.images, image_id)
        .map_err(|e| {
            if e.code.ends_with("NotFound") {
                error::image_not_found(image_id)
            } else {
                e
            }
        })?
        .clone();
    if !image.public && image.owner_id != region.account_id {
        return Err(error::image_not_found(image_id));
    }
    let instance_type = input.instance_type.unwrap_or(InstanceType::M1Small);
    let arch = architecture_of(instance_type);
    if arch != image.architecture {
        return Err(ApiError::invalid_value(format!(
            "The architecture '{}' of the specified instance type does not match the architecture '{}' of the specified AMI.",
            arch.as_str(),
            image.architecture.as_str()
        )));
    }
    let placement_zone = input
        .placement
        .as_ref()
        .and_then(|p| p.availability_zone.clone());
    let nic = primary_interface(&input)?;
    let requested_subnet = nic
        .as_ref()
        .and_then(|n| n.subnet_id.clone())
        .or_else(|| input.subnet_id.clone());
    let subnet_id = match &requested_subnet {
        Some(s) => Kind::Subnet.get(&region.subnets, s)?.id.clone(),
        None => {
            let vpc = region.default_vpc().ok_or_else(|| {
                ApiError::new(Code::VPCIdNotSpecified, "No default VPC for this user")
            })?;
            let zone = placement_zone
                .clone()
                .or_else(|| region.zones.first().map(|z| z.name.clone()));
            region
                .by_vpc
                .of_kind(&vpc.id, "subnet")
                .filter_map(|id| region.subnets.get(id))
                .find(|s| s.default_for_az && Some(&s.zone) == zone.as_ref())
                .map(|s| s.id.clone())
                .ok_or_else(|| {
                    ApiError::new(
                        Code::MissingInput,
                        "No subnet found for the default VPC in this zone",
                    )
                })?
        }
    };
    let s = &region.subnets[&subnet_id];
    let maps_public = nic
        .as_ref()
        .and_then(|n| n.associate_public_ip_address)
        .unwrap_or(s.map_public_ip_on_launch);
    let (vpc_id, zone) = (s.vpc_id.clone(), s.zone.clone());
    if let Some(z) = &placement_zone
        && *z != zone
    {
        return Err(ApiError::invalid_value(format!(
            "The subnet {subnet_id} is in {zone}, not in the requested zone {z}."
        )));
    }
    let mut groups = Vec::new();
    let group_ids = nic
        .as_ref()
        .and_then(|n| n.groups.clone())
        .or_else(|| input.security_group_ids.clone());
    for g in group_ids.iter().flatten() {
        let group = Kind::SecurityGroup.get(&region.security_groups, g)?;
        if group.vpc_id != vpc_id {
            return Err(error::group_not_in_vpc(g, &vpc_id));
        }
        if !groups.contains(g) {
            groups.push(g.clone());
        }
    }
    for name in input.security_groups.iter().flatten() {
        let id = region
            .by_vpc
            .of_kind(&vpc_id, "sg")
            .filter_map(|id| region.security_groups.get(id))
            .find(|g| &g.name == name)
            .map(|g| g.id.clone())
            .ok_or_else(|| error::group_not_in_vpc(name, &vpc_id))?;
        if !groups.contains(&id) {
            groups.push(id);
        }
    }
    if groups.is_empty() {
        groups.extend(security_group::default_of(region, &vpc_id));
    }
    if let Some(k) = &input.key_name
        && !region.key_pairs.contains_key(k)
    {
        return Err(error::key_pair_not_found(k));
    }
    if let Some(data) = &input.user_data {
        let raw = aws_smithy_types::base64::decode(data.trim())
            .map_err(|_| ApiError::invalid_value("Invalid BASE64 encoding of user data."))?;
        if raw.len() > MAX_USER_DATA {
            return Err(ApiError::invalid_value(format!(
                "User data is limited to {MAX_USER_DATA} bytes; {} given.",
                raw.len()
            )));
        }
    }
    let private_ip = match nic
        .as_ref()
        .and_then(|n| n.private_ip_address.as_ref())
        .or(input.private_ip_address.as_ref())
    {
        Some(raw) => {
            if input.max_count > 1 {
                return Err(ApiError::invalid_combination(
                    "PrivateIpAddress cannot be used with MaxCount greater than 1.",
                ));
            }
            let ip: Ipv4Addr = raw.parse().map_err(|_| {
                ApiError::invalid_parameter("privateIpAddress", raw, "Not an IPv4 address.")
            })?;
            region.subnets[&subnet_id].check_free(ip)?;
            Some(ip)
        }
        None => None,
    };
    let volume_tags_etc = tags::from_specs_for(
        input.tag_specifications.as_deref(),
        &[
            ResourceType::Instance,
            ResourceType::Volume,
            ResourceType::NetworkInterface,
        ],
    )?;
    let iam_profile = match &input.iam_instance_profile {
        None => None,
        Some(spec) => {
            let name = match (&spec.arn, &spec.name) {
                (Some(arn), _) => arn
                    .rsplit('/')
                    .next()
                    .filter(|n| arn.starts_with("arn:aws:iam::") && !n.is_empty())
                    .map(String::from)
                    .ok_or_else(|| {
                        ApiError::invalid_parameter(
                            "iamInstanceProfile.arn",
                            arn,
                            "Invalid IAM Instance Profile ARN",
                        )
                    })?,
                (None, Some(n)) if !n.is_empty() => n.clone(),
                _ => return Err(ApiError::missing_parameter("IamInstanceProfile.Name")),
            };
            Some(name)
        }
    };
    let block_devices = plan_volumes(region, &input, &image, &zone)?;

    // Capacity: launch as many as fit, at least MinCount.
    let live = region.instances.values().filter(|i| !i.is_gone()).count();
    let room = region.limits.instances.saturating_sub(live);
    let free = usize::try_from(region.subnets[&subnet_id].available_addresses()).unwrap_or(0);
    let wanted = usize::try_from(input.max_count).unwrap_or(0);
    let minimum = usize::try_from(input.min_count).unwrap_or(1);
    let count = wanted.min(room).min(free);
    if count < minimum {
        return Err(if room < minimum {
            ApiError::new(
                Code::InstanceLimitExceeded,
                format!(
                    "Your quota allows for {room} more running instance(s). You requested at least {minimum}."
                ),
            )
        } else {
            ApiError::new(
                Code::InsufficientFreeAddressesInSubnet,
                format!(
                    "There are not enough free addresses in subnet '{subnet_id}' to satisfy the requested number of instances."
                ),
            )
        });
    }

    let reservation_id = region.ids.resource("r");
    let now = region.clock.now_datetime();
    let account = region.account_id.clone();
    for index in 0..count {
        let id = region.ids.resource("i");
        let eni_id = network_interface::create(
            region,
            NewInterface {
                subnet_id: &subnet_id,
                groups: groups.clone(),
                interface_type: NetworkInterfaceType::Interface,
                requester_managed: false,
                description: String::new(),
                private_ip,
            },
        )?;
        let attachment_id = region.ids.resource("eni-attach");
        let eni_private_ip = network_interface::attach(
            region,
            &eni_id,
            EniAttachment {
                id: attachment_id,
                instance_id: id.clone(),
                device_index: 0,
                attach_time: now,
            },
        )?;
        if maps_public && let Some(ip) = elastic_ip::take_public_ip(region) {
            network_interface::set_public_ip(
                region,
                &eni_id,
                Some(PublicIp {
                    ip,
                    allocation_id: None,
                    association_id: None,
                }),
            );
        }
        if let Some(t) = volume_tags_etc.get(&ResourceType::NetworkInterface) {
            region.tags.insert(&eni_id, t.clone());
        }
        let mut volumes = Vec::new();
        for planned in &block_devices {
            let vol_id = volume::create_attached(
                region,
                &planned.volume,
                &id,
                now,
                volume_tags_etc.get(&ResourceType::Volume),
            );
            volumes.push((planned.device.clone(), vol_id));
        }
        if let Some(t) = volume_tags_etc.get(&ResourceType::Instance) {
            region.tags.insert(&id, t.clone());
        }
        let metadata = input.metadata_options.as_ref();
        let instance = Instance {
            id: id.clone(),
            reservation_id: reservation_id.clone(),
            launch_index: i32::try_from(index).unwrap_or(0),
            image_id: image.id.clone(),
            instance_type,
            architecture: image.architecture,
            key_name: input.key_name.clone(),
            subnet_id: subnet_id.clone(),
            vpc_id: vpc_id.clone(),
            zone: zone.clone(),
            eni_id,
            private_ip: eni_private_ip,
            state: InstanceStateName::Pending,
            state_reason: None,
            transition_reason: String::new(),
            launch_time: now,
            root_device_name: image.root_device_name.clone(),
            volumes,
            iam_profile: iam_profile.as_ref().map(|name| {
                (
                    format!("arn:aws:iam::{account}:instance-profile/{name}"),
                    format!(
                        "AIPA{}",
                        name.to_ascii_uppercase()
                            .chars()
                            .filter(char::is_ascii_alphanumeric)
                            .take(17)
                            .collect::<String>()
                    ),
                )
            }),
            user_data: input.user_data.clone(),
            client_token: token.clone(),
            ebs_optimized: input.ebs_optimized.unwrap_or(false),
            monitoring: input.monitoring.as_ref().is_some_and(|m| m.enabled),
            disable_api_termination: input.disable_api_termination.unwrap_or(false),
            shutdown_behavior: input
                .instance_initiated_shutdown_behavior
                .unwrap_or(ShutdownBehavior::Stop),
            metadata: InstanceMetadataOptionsResponse {
                state: Some(InstanceMetadataOptionsState::Applied),
                http_tokens: Some(
                    metadata
                        .and_then(|m| m.http_tokens)
                        .unwrap_or(HttpTokensState::Required),
                ),
                http_put_response_hop_limit: Some(
                    metadata
                        .and_then(|m| m.http_put_response_hop_limit)
                        .unwrap_or(2),
                ),
                http_endpoint: Some(
                    metadata
                        .and_then(|m| m.http_endpoint)
                        .unwrap_or(InstanceMetadataEndpointState::Enabled),
                ),
                http_protocol_ipv6: Some(
                    metadata
                        .and_then(|m| m.http_protocol_ipv6)
                        .unwrap_or(InstanceMetadataProtocolState::Disabled),
                ),
                instance_metadata_tags: Some(
                    metadata
                        .and_then(|m| m.instance_metadata_tags)
                        .unwrap_or(InstanceMetadataTagsState::Disabled),
                ),
            },
            tenancy: input
                .placement
                .as_ref()
                .and_then(|p| p.tenancy)
                .unwrap_or(Tenancy::Default),
        };
        region.by_vpc.insert(&vpc_id, &id);
        region.by_subnet.insert(&subnet_id, &id);
        region.instances.0.insert(id.clone(), instance);
        let at = region.clock.now();
        region.transitions.schedule(at, Subject::Instance, &id);
    }
    region
        .ledger
        .record("RunInstances", token.as_deref(), &print, &reservation_id);
    Ok(reservation(region, &reservation_id))
}

/// The volumes an instance gets: the image's root (resized or retyped by a mapping for the
/// root device) and any other EBS mappings.
fn plan_volumes(
    region: &Region,
    input: &RunInstancesRequest,
    image: &image::Image,
    zone: &str,
) -> Result<Vec<Planned>, ApiError> {
    let mut out = Vec::new();
    let mappings = input.block_device_mappings.clone().unwrap_or_default();
    let root_map = mappings
        .iter()
        .find(|m| m.device_name.as_deref() == Some(image.root_device_name.as_str()));
    let root_ebs = root_map.and_then(|m| m.ebs.clone()).unwrap_or_default();
    let size = root_ebs.volume_size.unwrap_or(image.root_size);
    if size < image.root_size {
        return Err(ApiError::new(
            Code::InvalidBlockDeviceMapping,
            format!(
                "Volume of size {size}GB is smaller than snapshot '{}', expect size >= {}GB",
                image.snapshot_id, image.root_size
            ),
        ));
    }
    out.push(planned(
        &image.root_device_name,
        &root_ebs,
        size,
        Some(image.snapshot_id.clone()),
        zone,
        true,
    )?);
    for m in &mappings {
        let Some(device) = m.device_name.as_deref() else {
            return Err(ApiError::missing_parameter(
                "BlockDeviceMapping.N.DeviceName",
            ));
        };
        if device == image.root_device_name || m.no_device.is_some() || m.virtual_name.is_some() {
            continue;
        }
        let Some(ebs) = &m.ebs else { continue };
        let size = ebs
            .volume_size
            .ok_or_else(|| ApiError::missing_parameter("BlockDeviceMapping.N.Ebs.VolumeSize"))?;
        out.push(planned(
            device,
            ebs,
            size,
            ebs.snapshot_id.clone(),
            zone,
            false,
        )?);
    }
    let _ = region;
    Ok(out)
}

fn planned(
    device: &str,
    ebs: &crate::generated::ec2::EbsBlockDevice,
    size: i32,
    snapshot_id: Option<String>,
    zone: &str,
    root: bool,
) -> Result<Planned, ApiError> {
    let volume_type = ebs.volume_type.unwrap_or(VolumeType::Gp3);
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
    if matches!(volume_type, VolumeType::Io1 | VolumeType::Io2) && ebs.iops.is_none() {
        return Err(ApiError::missing_parameter("BlockDeviceMapping.N.Ebs.Iops"));
    }
    let iops = match volume_type {
        VolumeType::Gp3 => Some(ebs.iops.unwrap_or(3000)),
        VolumeType::Gp2 => Some((size * 3).clamp(100, 16000)),
        VolumeType::Io1 | VolumeType::Io2 => ebs.iops,
        _ => None,
    };
    Ok(Planned {
        device: device.to_string(),
        volume: Volume {
            id: String::new(),
            size,
            volume_type,
            iops,
            throughput: (volume_type == VolumeType::Gp3).then(|| ebs.throughput.unwrap_or(125)),
            encrypted: ebs.encrypted.unwrap_or(false),
            zone: zone.to_string(),
            snapshot_id,
            attachment: Some(VolumeAttachment {
                instance_id: String::new(),
                device: device.to_string(),
                delete_on_termination: ebs.delete_on_termination.unwrap_or(root),
                attach_time: DateTime::from_secs(0),
            }),
            created: DateTime::from_secs(0),
        },
    })
}

/// The reservation `id` with its instances as they are now.
fn reservation(region: &Region, id: &str) -> Reservation {
    let instances: Vec<&Instance> = region
        .instances
        .values()
        .filter(|i| i.reservation_id == id)
        .collect();
    render_reservation(region, id, &instances)
}

fn render_reservation(region: &Region, id: &str, instances: &[&Instance]) -> Reservation {
    let mut instances: Vec<&Instance> = instances.to_vec();
    instances.sort_by_key(|i| i.launch_index);
    Reservation {
        reservation_id: Some(id.to_string()),
        owner_id: Some(region.account_id.clone()),
        requester_id: None,
        groups: Some(Vec::new()),
        instances: Some(instances.into_iter().map(|i| render(region, i)).collect()),
    }
}

fn groups_of(region: &Region, i: &Instance) -> Vec<GroupIdentifier> {
    region
        .network_interfaces
        .get(&i.eni_id)
        .map(|e| {
            e.groups
                .iter()
                .map(|g| GroupIdentifier {
                    group_id: Some(g.clone()),
                    group_name: region.security_groups.get(g).map(|s| s.name.clone()),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn render(region: &Region, i: &Instance) -> InstanceOut {
    let eni = region.network_interfaces.get(&i.eni_id);
    let public = eni.and_then(|e| e.public_ip.as_ref());
    let private_dns = network_interface::private_dns(region, i.private_ip);
    let public_dns = public.map(|p| network_interface::public_dns(region, p.ip));
    let association = public.map(|p| InstanceNetworkInterfaceAssociation {
        ip_owner_id: Some(if p.allocation_id.is_some() {
            region.account_id.clone()
        } else {
            "amazon".into()
        }),
        public_dns_name: public_dns.clone(),
        public_ip: Some(p.ip.to_string()),
        ..Default::default()
    });
    let groups = groups_of(region, i);
    let network_interfaces = eni
        .map(|e| {
            vec![InstanceNetworkInterface {
                association: association.clone(),
                attachment: e
                    .attachment
                    .as_ref()
                    .map(|a| InstanceNetworkInterfaceAttachment {
                        attach_time: Some(a.attach_time),
                        attachment_id: Some(a.id.clone()),
                        delete_on_termination: Some(true),
                        device_index: Some(a.device_index),
                        status: Some(AttachmentStatus::Attached),
                        network_card_index: Some(0),
                        ..Default::default()
                    }),
                description: Some(e.description.clone()),
                groups: Some(groups.clone()),
                ipv6_addresses: Some(Vec::new()),
                mac_address: Some(e.mac.clone()),
                network_interface_id: Some(e.id.clone()),
                owner_id: Some(region.account_id.clone()),
                private_dns_name: Some(private_dns.clone()),
                private_ip_address: Some(e.private_ip.to_string()),
                private_ip_addresses: Some(vec![InstancePrivateIpAddress {
                    association: association.clone(),
                    primary: Some(true),
                    private_dns_name: Some(private_dns.clone()),
                    private_ip_address: Some(e.private_ip.to_string()),
                }]),
                source_dest_check: Some(e.source_dest_check),
                status: Some(NetworkInterfaceStatus::InUse),
                subnet_id: Some(e.subnet_id.clone()),
                vpc_id: Some(e.vpc_id.clone()),
                interface_type: Some("interface".into()),
                ..Default::default()
            }]
        })
        .unwrap_or_default();
    let gone = i.state == InstanceStateName::Terminated;
    InstanceOut {
        architecture: Some(i.architecture),
        block_device_mappings: Some(if gone {
            Vec::new()
        } else {
            i.volumes
                .iter()
                .filter_map(|(device, vol)| {
                    let v = region.volumes.get(vol)?;
                    Some(InstanceBlockDeviceMapping {
                        device_name: Some(device.clone()),
                        ebs: Some(EbsInstanceBlockDevice {
                            attach_time: v.attachment.as_ref().map(|a| a.attach_time),
                            delete_on_termination: v
                                .attachment
                                .as_ref()
                                .map(|a| a.delete_on_termination),
                            status: Some(AttachmentStatus::Attached),
                            volume_id: Some(vol.clone()),
                            ..Default::default()
                        }),
                    })
                })
                .collect()
        }),
        client_token: i.client_token.clone(),
        ebs_optimized: Some(i.ebs_optimized),
        ena_support: Some(true),
        hypervisor: Some(HypervisorType::Xen),
        iam_instance_profile: i.iam_profile.as_ref().map(|(arn, id)| IamInstanceProfile {
            arn: Some(arn.clone()),
            id: Some(id.clone()),
        }),
        network_interfaces: Some(if gone { Vec::new() } else { network_interfaces }),
        root_device_name: Some(i.root_device_name.clone()),
        root_device_type: Some(DeviceType::Ebs),
        security_groups: Some(if gone { Vec::new() } else { groups }),
        source_dest_check: eni.map(|e| e.source_dest_check),
        state_reason: i.state_reason.as_ref().map(|(code, message)| StateReason {
            code: Some(code.clone()),
            message: Some(message.clone()),
        }),
        tags: region.tags.tag_set(&i.id),
        virtualization_type: Some(VirtualizationType::Hvm),
        metadata_options: Some(i.metadata.clone()),
        platform_details: Some("Linux/UNIX".into()),
        usage_operation: Some("RunInstances".into()),
        instance_id: Some(i.id.clone()),
        image_id: Some(i.image_id.clone()),
        state: Some(state(i.state)),
        private_dns_name: Some(if gone { String::new() } else { private_dns }),
        public_dns_name: Some(public_dns.unwrap_or_default()),
        state_transition_reason: Some(i.transition_reason.clone()),
        key_name: i.key_name.clone(),
        ami_launch_index: Some(i.launch_index),
        product_codes: Some(Vec::new()),
        instance_type: Some(i.instance_type),
        launch_time: Some(i.launch_time),
        placement: Some(Placement {
            availability_zone: Some(i.zone.clone()),
            availability_zone_id: region.zone(&i.zone).map(|z| z.id.clone()),
            group_name: Some(String::new()),
            tenancy: Some(i.tenancy),
            ..Default::default()
        }),
        monitoring: Some(Monitoring {
            state: Some(if i.monitoring {
                MonitoringState::Enabled
            } else {
                MonitoringState::Disabled
            }),
            metric_category_ids: None,
        }),
        subnet_id: (!gone).then(|| i.subnet_id.clone()),
        vpc_id: (!gone).then(|| i.vpc_id.clone()),
        private_ip_address: (!gone).then(|| i.private_ip.to_string()),
        public_ip_address: public.map(|p| p.ip.to_string()),
        ..Default::default()
    }
}

/// Moves an instance out of `pending`, `stopping` or `shutting-down`.
pub fn advance(region: &mut Region, id: &str) {
    let Some(state) = region.instances.get(id).map(|i| i.state) else {
        return;
    };
    match state {
        InstanceStateName::Pending => {
            let (eni, maps) = {
                let i = &region.instances[id];
                (
                    i.eni_id.clone(),
                    region
                        .subnets
                        .get(&i.subnet_id)
                        .is_some_and(|s| s.map_public_ip_on_launch),
                )
            };
            if maps
                && region
                    .network_interfaces
                    .get(&eni)
                    .is_some_and(|e| e.public_ip.is_none())
                && let Some(ip) = elastic_ip::take_public_ip(region)
            {
                network_interface::set_public_ip(
                    region,
                    &eni,
                    Some(PublicIp {
                        ip,
                        allocation_id: None,
                        association_id: None,
                    }),
                );
            }
            if let Some(i) = region.instances.0.get_mut(id) {
                i.state = InstanceStateName::Running;
                i.state_reason = None;
                i.transition_reason = String::new();
            }
        }
        InstanceStateName::Stopping => {
            let eni = region.instances[id].eni_id.clone();
            // A pool address goes back when the instance stops; an Elastic IP stays.
            if region
                .network_interfaces
                .get(&eni)
                .and_then(|e| e.public_ip.as_ref())
                .is_some_and(|p| p.allocation_id.is_none())
                && let Some(p) = network_interface::set_public_ip(region, &eni, None)
            {
                elastic_ip::give_back_public_ip(region, p.ip);
            }
            if let Some(i) = region.instances.0.get_mut(id) {
                i.state = InstanceStateName::Stopped;
                i.state_reason = Some((
                    "Client.UserInitiatedShutdown".into(),
                    "Client.UserInitiatedShutdown: User initiated shutdown".into(),
                ));
            }
        }
        InstanceStateName::ShuttingDown => {
            let (eni, volumes) = {
                let i = &region.instances[id];
                (
                    i.eni_id.clone(),
                    i.volumes.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>(),
                )
            };
            network_interface::delete(region, &eni);
            volume::release_for(region, id, &volumes);
            if let Some(i) = region.instances.0.get_mut(id) {
                i.state = InstanceStateName::Terminated;
                i.state_reason = Some((
                    "Client.UserInitiatedShutdown".into(),
                    "Client.UserInitiatedShutdown: User initiated shutdown".into(),
                ));
            }
            let now = region.clock.now();
            region.transitions.schedule(now, Subject::InstancePurge, id);
        }
        _ => {}
    }
}

/// Forgets a terminated instance after AWS's retention.
pub fn purge(region: &mut Region, id: &str) {
    if let Some(i) = region.instances.get(id)
        && i.state == InstanceStateName::Terminated
    {
        let (vpc, subnet) = (i.vpc_id.clone(), i.subnet_id.clone());
        region.instances.0.remove(id);
        region.by_vpc.remove(&vpc, id);
        region.by_subnet.remove(&subnet, id);
        region.tags.remove_resource(id);
    }
}

impl Filterable for (&Instance, &Region) {
    const NAMES: &'static [&'static str] = &[
        "affinity",
        "architecture",
        "availability-zone",
        "block-device-mapping.attach-time",
        "block-device-mapping.delete-on-termination",
        "block-device-mapping.device-name",
        "block-device-mapping.status",
        "block-device-mapping.volume-id",
        "client-token",
        "dns-name",
        "group-id",
        "group-name",
        "hypervisor",
        "iam-instance-profile.arn",
        "image-id",
        "instance-id",
        "instance-lifecycle",
        "instance-state-code",
        "instance-state-name",
        "instance-type",
        "instance.group-id",
        "instance.group-name",
        "ip-address",
        "key-name",
        "launch-index",
        "launch-time",
        "metadata-options.http-tokens",
        "metadata-options.http-endpoint",
        "monitoring-state",
        "network-interface.network-interface-id",
        "network-interface.subnet-id",
        "network-interface.vpc-id",
        "network-interface.private-ip-address",
        "network-interface.addresses.private-ip-address",
        "network-interface.association.public-ip",
        "network-interface.attachment.attachment-id",
        "network-interface.group-id",
        "owner-id",
        "placement-group-name",
        "placement-partition-number",
        "platform",
        "platform-details",
        "private-dns-name",
        "private-ip-address",
        "product-code",
        "reason",
        "requester-id",
        "reservation-id",
        "root-device-name",
        "root-device-type",
        "source-dest-check",
        "spot-instance-request-id",
        "state-reason-code",
        "state-reason-message",
        "subnet-id",
        "tenancy",
        "virtualization-type",
        "vpc-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (i, region) = *self;
        let eni = region.network_interfaces.get(&i.eni_id);
        let public = eni.and_then(|e| e.public_ip.as_ref());
        match name {
            "architecture" => one(i.architecture.as_str()),
            "availability-zone" => one(i.zone.clone()),
            "block-device-mapping.device-name" => {
                i.volumes.iter().map(|(d, _)| d.clone()).collect()
            }
            "block-device-mapping.volume-id" => i.volumes.iter().map(|(_, v)| v.clone()).collect(),
            "client-token" => i.client_token.clone().into_iter().collect(),
            "dns-name" => public
                .map(|p| network_interface::public_dns(region, p.ip))
                .into_iter()
                .collect(),
            "group-id" | "instance.group-id" | "network-interface.group-id" => {
                eni.map(|e| e.groups.clone()).unwrap_or_default()
            }
            "group-name" | "instance.group-name" => groups_of(region, i)
                .into_iter()
                .filter_map(|g| g.group_name)
                .collect(),
            "hypervisor" => one("xen"),
            "iam-instance-profile.arn" => {
                i.iam_profile.iter().map(|(arn, _)| arn.clone()).collect()
            }
            "image-id" => one(i.image_id.clone()),
            "instance-id" => one(i.id.clone()),
            "instance-state-code" => one(state_code(i.state).to_string()),
            "instance-state-name" => one(i.state.as_str()),
            "instance-type" => one(i.instance_type.as_str()),
            "ip-address" | "network-interface.association.public-ip" => {
                public.map(|p| p.ip.to_string()).into_iter().collect()
            }
            "key-name" => i.key_name.clone().into_iter().collect(),
            "launch-index" => one(i.launch_index.to_string()),
            "metadata-options.http-tokens" => i
                .metadata
                .http_tokens
                .map(|t| t.as_str().to_string())
                .into_iter()
                .collect(),
            "metadata-options.http-endpoint" => i
                .metadata
                .http_endpoint
                .map(|t| t.as_str().to_string())
                .into_iter()
                .collect(),
            "monitoring-state" => one(if i.monitoring { "enabled" } else { "disabled" }),
            "network-interface.network-interface-id" => one(i.eni_id.clone()),
            "network-interface.subnet-id" | "subnet-id" => one(i.subnet_id.clone()),
            "network-interface.vpc-id" | "vpc-id" => one(i.vpc_id.clone()),
            "network-interface.private-ip-address"
            | "network-interface.addresses.private-ip-address"
            | "private-ip-address" => one(i.private_ip.to_string()),
            "network-interface.attachment.attachment-id" => eni
                .and_then(|e| e.attachment.as_ref().map(|a| a.id.clone()))
                .into_iter()
                .collect(),
            "owner-id" => one(region.account_id.clone()),
            "platform-details" => one("Linux/UNIX"),
            "private-dns-name" => one(network_interface::private_dns(region, i.private_ip)),
            "reason" => one(i.transition_reason.clone()),
            "reservation-id" => one(i.reservation_id.clone()),
            "root-device-name" => one(i.root_device_name.clone()),
            "root-device-type" => one("ebs"),
            "source-dest-check" => eni
                .map(|e| e.source_dest_check.to_string())
                .into_iter()
                .collect(),
            "state-reason-code" => i.state_reason.iter().map(|(c, _)| c.clone()).collect(),
            "state-reason-message" => i.state_reason.iter().map(|(_, m)| m.clone()).collect(),
            "tenancy" => one(i.tenancy.as_str()),
            "virtualization-type" => one("hvm"),
            _ => Vec::new(),
        }
    }
}

/// `DescribeInstances`: instances grouped by reservation, paginated by reservation.
pub fn describe_instances(
    region: &mut Region,
    input: DescribeInstancesRequest,
) -> Result<DescribeInstancesResult, ApiError> {
    let filters = Filters::parse::<(&Instance, &Region)>(input.filters)?;
    let region = &*region;
    if input.instance_ids.as_ref().is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter instancesSet cannot be used with the parameter maxResults",
        ));
    }
    page::check_max_results(input.max_results, 5, 1000)?;
    let found = Kind::Instance.describe(
        &region.instances,
        input.instance_ids.as_deref(),
        region.candidates(&filters),
        |i| filters.matches(&(i, region), region.tags.get(&i.id)),
    )?;
    let mut by_reservation: BTreeMap<&str, Vec<&Instance>> = BTreeMap::new();
    for i in found {
        by_reservation
            .entry(i.reservation_id.as_str())
            .or_default()
            .push(i);
    }
    let groups: Vec<(&str, Vec<&Instance>)> = by_reservation.into_iter().collect();
    let (items, next) = page::page(
        groups,
        |(r, _)| r,
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInstancesResult {
        next_token: next,
        reservations: Some(
            items
                .into_iter()
                .map(|(r, instances)| render_reservation(region, r, &instances))
                .collect(),
        ),
    })
}

/// Checks every id first, so that a bad id changes nothing.
fn checked<'a>(region: &'a Region, ids: &[String]) -> Result<Vec<&'a Instance>, ApiError> {
    if ids.is_empty() {
        return Err(ApiError::missing_parameter("InstanceId"));
    }
    Kind::Instance.select(&region.instances, Some(ids))
}

fn change(
    id: &str,
    previous: InstanceStateName,
    current: InstanceStateName,
) -> InstanceStateChange {
    InstanceStateChange {
        instance_id: Some(id.to_string()),
        current_state: Some(state(current)),
        previous_state: Some(state(previous)),
    }
}

fn set_state(region: &mut Region, id: &str, to: InstanceStateName, reason: &str) {
    let now = crate::protocol::xml::format_timestamp(region.clock.now_datetime());
    if let Some(i) = region.instances.0.get_mut(id) {
        i.state = to;
        i.transition_reason = format!(
            "{reason} ({} GMT)",
            now.replace('T', " ")
                .trim_end_matches(".000Z")
                .trim_end_matches('Z')
        );
    }
    let at = region.clock.now();
    region.transitions.schedule(at, Subject::Instance, id);
}

/// `TerminateInstances`: idempotent for instances already terminating.
pub fn terminate_instances(
    region: &mut Region,
    input: TerminateInstancesRequest,
) -> Result<TerminateInstancesResult, ApiError> {
    let instances = checked(region, &input.instance_ids)?;
    if let Some(p) = instances.iter().find(|i| i.disable_api_termination) {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            format!(
                "The instance '{}' may not be terminated. Modify its 'disableApiTermination' instance attribute and try again.",
                p.id
            ),
        ));
    }
    let plan: Vec<(String, InstanceStateName)> =
        instances.iter().map(|i| (i.id.clone(), i.state)).collect();
    let mut out = Vec::new();
    for (id, previous) in plan {
        let current = if matches!(
            previous,
            InstanceStateName::ShuttingDown | InstanceStateName::Terminated
        ) {
            previous
        } else {
            set_state(
                region,
                &id,
                InstanceStateName::ShuttingDown,
                "User initiated",
            );
            InstanceStateName::ShuttingDown
        };
        out.push(change(&id, previous, current));
    }
    Ok(TerminateInstancesResult {
        terminating_instances: Some(out),
    })
}

/// `StopInstances`.
pub fn stop_instances(
    region: &mut Region,
    input: StopInstancesRequest,
) -> Result<StopInstancesResult, ApiError> {
    let instances = checked(region, &input.instance_ids)?;
    for i in &instances {
        match i.state {
            InstanceStateName::Pending => {
                return Err(ApiError::new(
                    Code::IncorrectInstanceState,
                    format!(
                        "Instance '{}' cannot be stopped as it has never reached the 'running' state.",
                        i.id
                    ),
                ));
            }
            InstanceStateName::ShuttingDown | InstanceStateName::Terminated => {
                return Err(ApiError::new(
                    Code::IncorrectInstanceState,
                    format!(
                        "This instance '{}' is not in a state from which it can be stopped.",
                        i.id
                    ),
                ));
            }
            _ => {}
        }
    }
    let plan: Vec<(String, InstanceStateName)> =
        instances.iter().map(|i| (i.id.clone(), i.state)).collect();
    let mut out = Vec::new();
    for (id, previous) in plan {
        let current = if previous == InstanceStateName::Running {
            set_state(region, &id, InstanceStateName::Stopping, "User initiated");
            InstanceStateName::Stopping
        } else {
            previous
        };
        out.push(change(&id, previous, current));
    }
    Ok(StopInstancesResult {
        stopping_instances: Some(out),
    })
}

/// `StartInstances`.
pub fn start_instances(
    region: &mut Region,
    input: StartInstancesRequest,
) -> Result<StartInstancesResult, ApiError> {
    let instances = checked(region, &input.instance_ids)?;
    for i in &instances {
        if matches!(
            i.state,
            InstanceStateName::Stopping
                | InstanceStateName::ShuttingDown
                | InstanceStateName::Terminated
        ) {
            return Err(ApiError::new(
                Code::IncorrectInstanceState,
                format!(
                    "The instance '{}' is not in a state from which it can be started.",
                    i.id
                ),
            ));
        }
    }
    let plan: Vec<(String, InstanceStateName)> =
        instances.iter().map(|i| (i.id.clone(), i.state)).collect();
    let mut out = Vec::new();
    for (id, previous) in plan {
        let current = if previous == InstanceStateName::Stopped {
            set_state(region, &id, InstanceStateName::Pending, "");
            if let Some(i) = region.instances.0.get_mut(&id) {
                i.state_reason = None;
                i.transition_reason = String::new();
            }
            InstanceStateName::Pending
        } else {
            previous
        };
        out.push(change(&id, previous, current));
    }
    Ok(StartInstancesResult {
        starting_instances: Some(out),
    })
}

/// `DescribeInstanceAttribute`: one attribute of one instance.
pub fn describe_instance_attribute(
    region: &mut Region,
    input: DescribeInstanceAttributeRequest,
) -> Result<InstanceAttribute, ApiError> {
    let region = &*region;
    let i = Kind::Instance.get(&region.instances, &input.instance_id)?;
    let out = render(region, i);
    let value = |v: Option<String>| Some(AttributeValue { value: v });
    let flag = |v: bool| Some(AttributeBooleanValue { value: Some(v) });
    let mut a = InstanceAttribute {
        instance_id: Some(i.id.clone()),
        ..Default::default()
    };
    match input.attribute {
        InstanceAttributeName::InstanceType => {
            a.instance_type = value(Some(i.instance_type.as_str().to_string()));
        }
        InstanceAttributeName::UserData => a.user_data = value(i.user_data.clone()),
        InstanceAttributeName::DisableApiTermination => {
            a.disable_api_termination = flag(i.disable_api_termination);
        }
        InstanceAttributeName::InstanceInitiatedShutdownBehavior => {
            a.instance_initiated_shutdown_behavior =
                value(Some(i.shutdown_behavior.as_str().to_string()));
        }
        InstanceAttributeName::RootDeviceName => {
            a.root_device_name = value(Some(i.root_device_name.clone()));
        }
        InstanceAttributeName::BlockDeviceMapping => {
            a.block_device_mappings = out.block_device_mappings;
        }
        InstanceAttributeName::SourceDestCheck => {
            a.source_dest_check = out
                .source_dest_check
                .map(|v| AttributeBooleanValue { value: Some(v) });
        }
        InstanceAttributeName::GroupSet => a.groups = out.security_groups,
        InstanceAttributeName::EbsOptimized => a.ebs_optimized = flag(i.ebs_optimized),
        InstanceAttributeName::EnaSupport => a.ena_support = flag(true),
        InstanceAttributeName::DisableApiStop => a.disable_api_stop = flag(false),
        InstanceAttributeName::ProductCodes => a.product_codes = Some(Vec::new()),
        InstanceAttributeName::Kernel | InstanceAttributeName::Ramdisk => {}
        other => {
            return Err(ApiError::not_implemented(format!(
                "fakeaws does not serve the instance attribute {}",
                other.as_str()
            )));
        }
    }
    Ok(a)
}

struct StatusRow<'a> {
    instance: &'a Instance,
}

fn summary(i: &Instance) -> SummaryStatus {
    match i.state {
        InstanceStateName::Running => SummaryStatus::Ok,
        InstanceStateName::Pending => SummaryStatus::Initializing,
        _ => SummaryStatus::NotApplicable,
    }
}

impl Filterable for StatusRow<'_> {
    const NAMES: &'static [&'static str] = &[
        "availability-zone",
        "event.code",
        "event.description",
        "event.instance-event-id",
        "event.not-after",
        "event.not-before",
        "event.not-before-deadline",
        "instance-state-code",
        "instance-state-name",
        "instance-status.reachability",
        "instance-status.status",
        "system-status.reachability",
        "system-status.status",
        "attached-ebs-status.status",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let i = self.instance;
        match name {
            "availability-zone" => one(i.zone.clone()),
            "instance-state-code" => one(state_code(i.state).to_string()),
            "instance-state-name" => one(i.state.as_str()),
            "instance-status.status" | "system-status.status" | "attached-ebs-status.status" => {
                one(summary(i).as_str())
            }
            "instance-status.reachability" | "system-status.reachability" => {
                one(match summary(i) {
                    SummaryStatus::Ok => "passed",
                    SummaryStatus::Initializing => "initializing",
                    _ => "insufficient-data",
                })
            }
            _ => Vec::new(),
        }
    }
}

/// `DescribeInstanceStatus`: running instances, or all with IncludeAllInstances.
pub fn describe_instance_status(
    region: &mut Region,
    input: DescribeInstanceStatusRequest,
) -> Result<DescribeInstanceStatusResult, ApiError> {
    let filters = Filters::parse::<StatusRow>(input.filters)?;
    let region = &*region;
    if input.instance_ids.as_ref().is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter instancesSet cannot be used with the parameter maxResults",
        ));
    }
    page::check_max_results(input.max_results, 5, 1000)?;
    let all = input.include_all_instances == Some(true);
    let found = Kind::Instance.describe(
        &region.instances,
        input.instance_ids.as_deref(),
        None,
        |i| {
            (all || i.state == InstanceStateName::Running)
                && filters.matches(&StatusRow { instance: i }, None)
        },
    )?;
    let (items, next) = page::page(
        found,
        |i| i.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    let detail = |i: &Instance| {
        let s = summary(i);
        InstanceStatusSummary {
            details: (s != SummaryStatus::NotApplicable).then(|| {
                vec![InstanceStatusDetails {
                    impaired_since: None,
                    name: Some(StatusName::Reachability),
                    status: Some(if s == SummaryStatus::Ok {
                        StatusType::Passed
                    } else {
                        StatusType::Initializing
                    }),
                }]
            }),
            status: Some(s),
        }
    };
    Ok(DescribeInstanceStatusResult {
        instance_statuses: Some(
            items
                .into_iter()
                .map(|i| InstanceStatus {
                    availability_zone: Some(i.zone.clone()),
                    availability_zone_id: region.zone(&i.zone).map(|z| z.id.clone()),
                    events: Some(Vec::new()),
                    instance_id: Some(i.id.clone()),
                    instance_state: Some(state(i.state)),
                    instance_status: Some(detail(i)),
                    system_status: Some(detail(i)),
                    ..Default::default()
                })
                .collect(),
        ),
        next_token: next,
    })
}
