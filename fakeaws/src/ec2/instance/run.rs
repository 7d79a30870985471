//! RunInstances: the launch checked as AWS checks it (image, type, subnet and groups, key,
//! user data, profile, interfaces, block devices, capacity), then the instances, their primary
//! interfaces and volumes, and the ClientToken ledger.

use aws_smithy_types::DateTime;

use crate::ec2::error::{self, Code};

use crate::ec2::network_interface::{self, PublicIp};
use crate::ec2::volume::{self, Attachment as VolumeAttachment, Volume};
use crate::ec2::{
    Kind, capacity_reservation, dedicated_host, elastic_ip, fingerprint, image, launch_template,
    placement_group, spot_request, tags,
};
use crate::generated::ec2::{
    ArchitectureValues, HttpTokensState, InstanceMetadataEndpointState,
    InstanceMetadataOptionsResponse, InstanceMetadataOptionsState, InstanceMetadataProtocolState,
    InstanceMetadataTagsState, InstanceStateName, InstanceType, Reservation, ResourceType,
    RunInstancesRequest, ShutdownBehavior, Tenancy,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

use super::*;

/// The architecture an instance type runs: AWS's Graviton families (`a1`, `*g`, `*gd`,
/// `*gn`, ...) are arm64, the rest x86_64.
pub(super) fn architecture_of(t: InstanceType) -> ArchitectureValues {
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

/// User data of `len` bytes (decoded) is within AWS's limit.
pub(super) fn check_user_data_size(len: usize) -> Result<(), ApiError> {
    if len > MAX_USER_DATA {
        return Err(ApiError::invalid_value(format!(
            "User data is limited to {MAX_USER_DATA} bytes; {len} given."
        )));
    }
    Ok(())
}

pub(super) struct Planned {
    pub(super) volume: Volume,
    pub(super) device: String,
}

/// A launch of one instance that names nothing: what another call launching through
/// RunInstances (RequestSpotInstances, CreateFleet) fills in.
pub fn empty_launch() -> RunInstancesRequest {
    RunInstancesRequest {
        block_device_mappings: None,
        image_id: None,
        instance_type: None,
        ipv6_address_count: None,
        ipv6_addresses: None,
        enable_primary_ipv6: None,
        key_name: None,
        max_count: 1,
        min_count: 1,
        monitoring: None,
        placement: None,
        security_group_ids: None,
        security_groups: None,
        subnet_id: None,
        user_data: None,
        tag_specifications: None,
        launch_template: None,
        instance_market_options: None,
        credit_specification: None,
        cpu_options: None,
        capacity_reservation_specification: None,
        hibernation_options: None,
        metadata_options: None,
        enclave_options: None,
        private_dns_name_options: None,
        maintenance_options: None,
        disable_api_stop: None,
        dry_run: None,
        disable_api_termination: None,
        instance_initiated_shutdown_behavior: None,
        private_ip_address: None,
        client_token: None,
        iam_instance_profile: None,
        ebs_optimized: None,
        network_interfaces: None,
    }
}

/// `RunInstances`; the same ClientToken with the same request answers the same reservation.
pub fn run_instances(
    region: &mut Region,
    mut input: RunInstancesRequest,
) -> Result<Reservation, ApiError> {
    // The token is taken out first: the fingerprint is of every other parameter.
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(reservation_id) = region
        .ledger
        .replay("RunInstances", token.as_deref(), &print)?
    {
        return Ok(with_tag_lists(reservation(region, &reservation_id)));
    }
    // A launch template fills in what the request leaves out; its instances are tagged
    // with the template and version, as AWS tags them.
    let template = match input.launch_template.take() {
        Some(spec) => Some(launch_template::resolve(region, &spec, &mut input)?),
        None => None,
    };
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
    // Only an `available` image launches: not one still `pending`, nor a disabled one.
    let state = image.shown_state();
    if state != crate::generated::ec2::ImageState::Available {
        return Err(ApiError::new(
            crate::ec2::error::Code::InvalidAMIIDUnavailable,
            format!(
                "The image id '[{image_id}]' is not available for launches: it is {}",
                state.as_str()
            ),
        ));
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
    let image_boot = (image.boot_mode, image.architecture);
    // A launch that targets a Capacity Reservation and names no subnet or zone goes to the
    // reservation's zone.
    let capacity =
        capacity_reservation::Settings::asked(input.capacity_reservation_specification.as_ref())?;
    if input.subnet_id.is_none()
        && input.network_interfaces.as_ref().is_none_or(Vec::is_empty)
        && input
            .placement
            .as_ref()
            .is_none_or(|p| p.availability_zone.is_none() && p.availability_zone_id.is_none())
        && let Some(zone) = capacity_reservation::target_zone(region, &capacity)?
    {
        input
            .placement
            .get_or_insert_with(Default::default)
            .availability_zone = Some(zone);
    }
    let (nic, other_nics) = launch_interfaces(&input)?;
    // The user's interface the launch takes as its primary, if it names one.
    let users = match &nic {
        Some(n) => existing_interface(region, n)?,
        None => None,
    };
    let Placement {
        subnet_id,
        vpc_id,
        zone,
        maps_public,
        carrier,
    } = placement(region, &input, nic.as_ref(), users)?;
    crate::ec2::instance_type::check_offered(region, &zone, instance_type)?;
    let groups = match users {
        Some(e) => e.groups.clone(),
        None => groups_of_launch(region, &input, nic.as_ref(), &vpc_id)?,
    };
    // An instance launched into a VPC of `dedicated` instance tenancy is a Dedicated Instance
    // whatever tenancy the launch asks for (but `host`), as the EC2 user guide documents.
    let vpc_dedicated = region
        .vpcs
        .get(&vpc_id)
        .is_some_and(|v| v.tenancy == Tenancy::Dedicated);
    // A launch naming a Dedicated Host is of `host` tenancy.
    let names_host = input
        .placement
        .as_ref()
        .is_some_and(|p| p.host_id.is_some());
    let tenancy = match input.placement.as_ref().and_then(|p| p.tenancy) {
        Some(Tenancy::Host) => Tenancy::Host,
        None if names_host => Tenancy::Host,
        Some(other) if names_host => {
            return Err(ApiError::invalid_combination(format!(
                "Placement.HostId is valid only for instances of host tenancy, not {}.",
                other.as_str()
            )));
        }
        _ if vpc_dedicated => Tenancy::Dedicated,
        asked => asked.unwrap_or(Tenancy::Default),
    };
    if let Some(k) = &input.key_name
        && !region.key_pairs.contains_key(k)
    {
        return Err(error::key_pair_not_found(k));
    }
    if let Some(data) = &input.user_data {
        let raw = aws_smithy_types::base64::decode(data.trim())
            .map_err(|_| ApiError::invalid_value("Invalid BASE64 encoding of user data."))?;
        check_user_data_size(raw.len())?;
    }
    let interfaces = nics::Plan::new(
        region,
        &input,
        nic.as_ref(),
        users.map(|e| e.id.clone()),
        &other_nics,
        &nics::Primary {
            subnet_id: &subnet_id,
            vpc_id: &vpc_id,
            zone: &zone,
            groups: &groups,
        },
        instance_type,
    )?;
    let spot = spot_request::plan(input.instance_market_options.as_ref())?;
    if spot.is_some() && tenancy == Tenancy::Host {
        // The model's SpotPlacement: host tenancy is not supported for Spot Instances.
        return Err(ApiError::invalid_combination(
            "Spot Instances cannot be launched with host tenancy (onto a Dedicated Host).",
        ));
    }
    let options = super::options::at_launch(region, &input, instance_type, image_boot, &subnet_id)?;
    let cpu_credits = super::credit::at_launch(
        region,
        instance_type,
        input
            .credit_specification
            .as_ref()
            .map(|c| c.cpu_credits.as_str()),
    )?;
    // A Spot launch's request is taggable too.
    let taggable = [
        ResourceType::Instance,
        ResourceType::Volume,
        ResourceType::NetworkInterface,
        ResourceType::SpotInstancesRequest,
    ];
    let taggable = if spot.is_some() {
        &taggable[..]
    } else {
        &taggable[..3]
    };
    let volume_tags_etc = tags::from_specs_for(input.tag_specifications.as_deref(), taggable)?;
    let iam_profile = iam_profile_name(&region.name, input.iam_instance_profile.as_ref())?;
    let block_devices = plan_volumes(region, &input, &image, &zone)?;

    // Capacity: launch as many as fit, at least MinCount.
    // Every instance the region holds is an upper bound of the live ones: counted only when
    // that bound leaves too little room, so a launch costs the same in a large region.
    let wanted = usize::try_from(input.max_count).unwrap_or(0);
    let live = if region.instances.len().saturating_add(wanted) <= region.limits.instances {
        region.instances.len()
    } else {
        region.instances.values().filter(|i| !i.is_gone()).count()
    };
    let room = region.limits.instances.saturating_sub(live);
    let free = interfaces.fits(region, wanted)?;
    let minimum = usize::try_from(input.min_count).unwrap_or(1);
    let count = wanted.min(room).min(free);
    if count < minimum {
        return Err(if room < minimum && spot.is_some() {
            // A Spot launch counts against the Spot quota, refused in AWS's words.
            ApiError::new(
                Code::MaxSpotInstanceCountExceeded,
                "Max spot instance count exceeded",
            )
        } else if room < minimum {
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

    // The Dedicated Hosts of a launch of `host` tenancy: as many instances as fit.
    let on_hosts = dedicated_host::for_launch(
        region,
        input.placement.as_ref(),
        tenancy,
        instance_type,
        &zone,
        count,
        minimum,
    )?;
    let count = on_hosts.as_ref().map_or(count, |h| h.hosts.len());
    // The Capacity Reservation each instance runs in, as many as may launch.
    let reserved = capacity_reservation::for_launch(
        region,
        &capacity,
        &capacity_reservation::Launch {
            instance_type,
            zone: &zone,
            tenancy,
            spot: spot.is_some(),
            wanted: count,
            minimum,
        },
    )?;
    let count = reserved.len();
    // The placement group named, and each instance's partition in it.
    let group = match &input.placement {
        Some(p) => placement_group::for_launch(region, p, &zone, count)?,
        None => None,
    };
    // The prefixes of every instance's new interfaces, all taken before any is made.
    let mut prefixes = interfaces.reserve_prefixes(region, count)?.into_iter();
    let reservation_id = region.ids.resource("r");
    let now = region.clock.now_datetime();
    let account = region.account_id.clone();
    let mut launched = Vec::with_capacity(count);
    for index in 0..count {
        let id = region.ids.resource("i");
        let mine = prefixes.next().unwrap_or_default();
        let nics::Made {
            primary: eni_id,
            private_ip: eni_private_ip,
            others: secondary_enis,
            new: new_enis,
        } = match interfaces.realize(region, &id, now, mine) {
            Ok(made) => made,
            Err(e) => {
                interfaces.release_prefixes(region, prefixes);
                return Err(e);
            }
        };
        if maps_public && let Some(ip) = elastic_ip::take_public_ip(region) {
            network_interface::set_public_ip(
                region,
                &eni_id,
                None,
                Some(PublicIp {
                    carrier,
                    ..PublicIp::pooled(ip)
                }),
            );
        }
        if let Some(t) = volume_tags_etc.get(&ResourceType::NetworkInterface) {
            for eni in &new_enis {
                region.tags.insert(eni, t.clone());
            }
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
        if let Some((template_id, version)) = &template {
            region.tags.set(
                &id,
                "aws:ec2launchtemplate:id".to_string(),
                template_id.clone(),
            );
            region.tags.set(
                &id,
                "aws:ec2launchtemplate:version".to_string(),
                version.to_string(),
            );
        }
        let metadata = input.metadata_options.as_ref();
        let account_imds = region.imds_defaults.clone();
        let mut instance = Instance {
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
            secondary_enis,
            private_ip: eni_private_ip,
            state: InstanceStateName::Pending,
            state_reason: Some(super::state::pending_reason()),
            transition_reason: String::new(),
            launch_time: now,
            root_device_name: image.root_device_name.clone(),
            volumes,
            iam_profile: iam_profile
                .as_ref()
                .map(|name| iam_profile_record(&region.name, &account, name)),
            iam_association: iam_profile.as_ref().map(|_| super::profile::Association {
                id: region.ids.resource("iip-assoc"),
                since: now,
            }),
            user_data: input.user_data.clone(),
            client_token: token.clone(),
            ebs_optimized: input.ebs_optimized.unwrap_or(false),
            monitoring: input.monitoring.as_ref().is_some_and(|m| m.enabled),
            disable_api_termination: input.disable_api_termination.unwrap_or(false),
            disable_api_stop: input.disable_api_stop.unwrap_or(false),
            ena_support: true,
            public_ip_on_start: maps_public,
            carrier_ip: carrier,
            shutdown_behavior: input
                .instance_initiated_shutdown_behavior
                .unwrap_or(ShutdownBehavior::Stop),
            metadata: InstanceMetadataOptionsResponse {
                state: Some(InstanceMetadataOptionsState::Applied),
                // The launch's options, else the account's defaults
                // (ModifyInstanceMetadataDefaults), else the image's: one marked for IMDSv2
                // (`ImdsSupport` `v2.0`) launches with tokens required and a hop limit of 2;
                // else AWS's, optional and 1 (the model's documentation of HttpTokens, the
                // CLI's documented output).
                http_tokens: Some(
                    metadata
                        .and_then(|m| m.http_tokens)
                        .or(account_imds.http_tokens)
                        .unwrap_or(if image.imds_v2 {
                            HttpTokensState::Required
                        } else {
                            HttpTokensState::Optional
                        }),
                ),
                http_put_response_hop_limit: Some(
                    metadata
                        .and_then(|m| m.http_put_response_hop_limit)
                        .or(account_imds.hop_limit)
                        .unwrap_or(if image.imds_v2 { 2 } else { 1 }),
                ),
                http_endpoint: Some(
                    metadata
                        .and_then(|m| m.http_endpoint)
                        .or(account_imds.http_endpoint)
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
                        .or(account_imds.tags)
                        .unwrap_or(InstanceMetadataTagsState::Disabled),
                ),
            },
            tenancy,
            placement_group: group.as_ref().map(|g| g.group_id.clone()),
            host_id: on_hosts.as_ref().and_then(|h| h.hosts.get(index).cloned()),
            affinity: on_hosts.as_ref().map(|h| h.affinity.clone()),
            partition: group.as_ref().and_then(|g| g.partition(index)),
            spot_request: None,
            capacity_reservation: reserved.get(index).cloned().flatten(),
            cpu_credits: cpu_credits.clone(),
            options: options.clone(),
            hibernating: false,
            console: Vec::new(),
        };
        if let Some(spot) = &spot {
            let request = spot_request::fulfilled(region, spot, &id);
            if let Some(t) = volume_tags_etc.get(&ResourceType::SpotInstancesRequest) {
                region.tags.insert(&request, t.clone());
            }
            instance.spot_request = Some(request);
        }
        region.by_vpc.insert(&vpc_id, &id);
        region.by_subnet.insert(&subnet_id, &id);
        region.instances.0.insert(id.clone(), instance);
        let at = region.clock.now();
        region.transitions.schedule(at, Subject::Instance, &id);
        launched.push(id);
    }
    region
        .ledger
        .record("RunInstances", token.as_deref(), &print, &reservation_id);
    crate::ec2::image_attribute::launched(
        region,
        &image.id,
        crate::protocol::xml::format_timestamp(now),
    );
    // The instances just launched, read by id: a scan for the reservation would cost a
    // launch the size of the region.
    let instances: Vec<&Instance> = launched
        .iter()
        .filter_map(|id| region.instances.get(id))
        .collect();
    Ok(with_tag_lists(render_reservation(
        region,
        &reservation_id,
        &instances,
    )))
}

/// RunInstances' answer lists each instance's tags, empty when it has none, as the CLI's
/// documented output shows (DescribeInstances leaves an untagged instance's out).
fn with_tag_lists(mut r: Reservation) -> Reservation {
    for i in r.instances.iter_mut().flatten() {
        i.tags.get_or_insert_with(Vec::new);
    }
    r
}

/// The volumes an instance gets: the image's root (resized or retyped by a mapping for the
/// root device) and any other EBS mappings.
pub(super) fn plan_volumes(
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
            crate::ec2::snapshot::too_small(size, &image.snapshot_id, image.root_size),
        ));
    }
    out.push(planned(
        region,
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
        // A device of the image is made of the image's snapshot unless the mapping names one.
        let of_image = image.devices.iter().find(|d| d.name == device);
        let source = match (&ebs.snapshot_id, of_image) {
            (Some(id), _) => Some((id.clone(), crate::ec2::snapshot::source(region, id)?.0)),
            (None, Some(d)) => Some((d.snapshot_id.clone(), d.size)),
            (None, None) => None,
        };
        let size = match (&source, ebs.volume_size) {
            (Some((id, least)), size) => {
                let size = size.unwrap_or(*least);
                if size < *least {
                    return Err(ApiError::new(
                        Code::InvalidBlockDeviceMapping,
                        crate::ec2::snapshot::too_small(size, id, *least),
                    ));
                }
                size
            }
            (None, Some(size)) => size,
            (None, None) => {
                return Err(ApiError::missing_parameter(
                    "BlockDeviceMapping.N.Ebs.VolumeSize",
                ));
            }
        };
        out.push(planned(
            region,
            device,
            ebs,
            size,
            source.map(|(id, _)| id),
            zone,
            false,
        )?);
    }
    // The image's other devices the request leaves as they are.
    for d in &image.devices {
        if mappings
            .iter()
            .any(|m| m.device_name.as_deref() == Some(d.name.as_str()))
        {
            continue;
        }
        let ebs = crate::generated::ec2::EbsBlockDevice {
            volume_type: Some(d.volume_type),
            iops: d.iops.filter(|_| {
                matches!(
                    d.volume_type,
                    crate::generated::ec2::VolumeType::Io1 | crate::generated::ec2::VolumeType::Io2
                )
            }),
            delete_on_termination: Some(d.delete_on_termination),
            ..Default::default()
        };
        out.push(planned(
            region,
            &d.name,
            &ebs,
            d.size,
            Some(d.snapshot_id.clone()),
            zone,
            false,
        )?);
    }
    Ok(out)
}

/// A volume of a launch: encrypted when the mapping asks, when its snapshot is, or when
/// encryption by default is on in `region`; with the mapping's key, else its snapshot's, else
/// the region's default one.
pub(super) fn planned(
    region: &Region,
    device: &str,
    ebs: &crate::generated::ec2::EbsBlockDevice,
    size: i32,
    snapshot_id: Option<String>,
    zone: &str,
    root: bool,
) -> Result<Planned, ApiError> {
    let inherited = snapshot_id
        .as_deref()
        .and_then(|id| region.snapshots.get(id))
        .and_then(|s| crate::ec2::snapshot::key_of(region, s));
    let key = volume::key_for(
        region,
        ebs.encrypted == Some(true),
        inherited.as_deref(),
        ebs.kms_key_id.as_deref(),
    )?;
    let spec = volume::Spec {
        volume_type: ebs.volume_type,
        size,
        iops: ebs.iops,
        throughput: ebs.throughput,
        encrypted: Some(key.is_some()),
    };
    let mut volume = volume::specified(&spec, snapshot_id, zone, "BlockDeviceMapping.N.Ebs.")?;
    volume.kms_key_id = key;
    volume.attachment = Some(VolumeAttachment {
        instance_id: String::new(),
        device: device.to_string(),
        delete_on_termination: ebs.delete_on_termination.unwrap_or(root),
        attach_time: DateTime::from_secs(0),
    });
    Ok(Planned {
        device: device.to_string(),
        volume,
    })
}
