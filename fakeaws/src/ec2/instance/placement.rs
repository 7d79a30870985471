//! Where a launch goes, checked as AWS checks it: its primary interface (a
//! `NetworkInterfaces` launch), its subnet and zone (the default VPC's subnet when none is
//! named), whether it gets a public address, its security groups, its instance profile.

use crate::ec2::error::{self, Code};
use crate::ec2::network_interface::NetworkInterface;
use crate::ec2::{Kind, security_group};
use crate::generated::ec2::{
    IamInstanceProfileSpecification, InstanceNetworkInterfaceSpecification, RunInstancesRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// Where a launch goes.
pub(super) struct Placement {
    pub(super) subnet_id: String,
    pub(super) vpc_id: String,
    pub(super) zone: String,
    pub(super) maps_public: bool,
    /// The address `maps_public` maps is a carrier IP address (`AssociateCarrierIpAddress`,
    /// in a Wavelength Zone).
    pub(super) carrier: bool,
}

/// The interfaces of a `NetworkInterfaces` launch, checked as AWS checks them: one at device
/// index 0 (the primary), each index once; each interface either one the user made
/// (`NetworkInterfaceId`, attached as it is, for a single instance) or a new one in a subnet.
/// Answers the primary's specification (`None` without `NetworkInterfaces`) and the others,
/// by device index.
pub(super) fn launch_interfaces(
    input: &RunInstancesRequest,
) -> Result<
    (
        Option<InstanceNetworkInterfaceSpecification>,
        Vec<InstanceNetworkInterfaceSpecification>,
    ),
    ApiError,
> {
    let list = input.network_interfaces.as_deref().unwrap_or_default();
    if list.is_empty() {
        return Ok((None, Vec::new()));
    }
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
    let mut by_index: Vec<&InstanceNetworkInterfaceSpecification> = Vec::with_capacity(list.len());
    for one in list {
        let Some(index) = one.device_index else {
            return Err(ApiError::invalid_value(
                "Each network interface requires a device index.",
            ));
        };
        if index < 0 {
            return Err(ApiError::invalid_parameter(
                "deviceIndex",
                &index.to_string(),
                "The device index must be 0 or more.",
            ));
        }
        if by_index.iter().any(|o| o.device_index == Some(index)) {
            return Err(ApiError::invalid_value(format!(
                "More than one network interface is given device index {index}."
            )));
        }
        check_served(one)?;
        by_index.push(one);
    }
    by_index.sort_by_key(|o| o.device_index);
    let Some((primary, others)) = by_index
        .split_first()
        .filter(|(p, _)| p.device_index == Some(0))
    else {
        return Err(ApiError::invalid_value(
            "When specifying network interfaces, you must include a device at index 0.",
        ));
    };
    if input.private_ip_address.is_some() && primary.private_ip_address.is_some() {
        return Err(ApiError::invalid_combination(
            "Network interfaces and an instance-level private IP address may not be specified on the same request",
        ));
    }
    let instance_ipv6 = input.ipv6_address_count.is_some() || input.ipv6_addresses.is_some();
    if instance_ipv6
        && (primary.ipv6_address_count.is_some()
            || primary.ipv6_addresses.is_some()
            || primary.network_interface_id.is_some())
    {
        return Err(ApiError::invalid_combination(
            "Network interfaces and instance-level IPv6 addresses may not be specified on the same request",
        ));
    }
    if list.len() > 1
        && list
            .iter()
            .any(|o| o.associate_public_ip_address == Some(true))
    {
        return Err(ApiError::invalid_combination(
            "The associatePublicIPAddress parameter cannot be specified when launching with multiple network interfaces.",
        ));
    }
    for one in list {
        if one.network_interface_id.is_none() {
            if one.subnet_id.is_none() {
                return Err(ApiError::missing_parameter(&format!(
                    "NetworkInterface.{}.SubnetId",
                    one.device_index.unwrap_or_default() + 1
                )));
            }
            continue;
        }
        if input.max_count > 1 {
            return Err(ApiError::invalid_combination(
                "A network interface given by its ID can be attached to a single instance: MaxCount must be 1.",
            ));
        }
        let new_members = [
            ("SubnetId", one.subnet_id.is_some()),
            ("Groups", one.groups.is_some()),
            ("PrivateIpAddress", one.private_ip_address.is_some()),
            ("PrivateIpAddresses", one.private_ip_addresses.is_some()),
            ("Ipv6AddressCount", one.ipv6_address_count.is_some()),
            ("Ipv6Addresses", one.ipv6_addresses.is_some()),
            (
                "SecondaryPrivateIpAddressCount",
                one.secondary_private_ip_address_count.is_some(),
            ),
            ("Description", one.description.is_some()),
            (
                "ConnectionTrackingSpecification",
                one.connection_tracking_specification.is_some(),
            ),
            (
                "AssociatePublicIpAddress",
                one.associate_public_ip_address.is_some(),
            ),
            (
                "AssociateCarrierIpAddress",
                one.associate_carrier_ip_address.is_some(),
            ),
            (
                "DeleteOnTermination",
                one.delete_on_termination == Some(true),
            ),
            ("PrimaryIpv6", one.primary_ipv6 == Some(true)),
            ("InterfaceType", one.interface_type.is_some()),
        ];
        if let Some((name, _)) = new_members.iter().find(|(_, set)| *set) {
            return Err(ApiError::invalid_combination(format!(
                "A network interface given by its ID is attached as it is: {name} applies only to a new network interface."
            )));
        }
    }
    Ok((
        Some((*primary).clone()),
        others.iter().map(|o| (*o).clone()).collect(),
    ))
}

/// `NotImplemented` for a member of a launch interface the fake does not serve.
fn check_served(one: &InstanceNetworkInterfaceSpecification) -> Result<(), ApiError> {
    let unserved = [
        (
            "NetworkCardIndex",
            one.network_card_index.is_some_and(|n| n != 0),
        ),
        ("EnaSrdSpecification", one.ena_srd_specification.is_some()),
        ("EnaQueueCount", one.ena_queue_count.is_some()),
    ];
    if let Some((name, _)) = unserved.iter().find(|(_, set)| *set) {
        return Err(ApiError::not_implemented(format!(
            "fakeaws does not serve NetworkInterface.N.{name} of RunInstances"
        )));
    }
    Ok(())
}

/// The interface the user made that a launch interface names, if it names one: it must
/// exist and be available (`InvalidNetworkInterface.InUse`, AWS's words).
pub(super) fn existing_interface<'r>(
    region: &'r Region,
    one: &InstanceNetworkInterfaceSpecification,
) -> Result<Option<&'r NetworkInterface>, ApiError> {
    let Some(id) = one.network_interface_id.as_deref() else {
        return Ok(None);
    };
    let eni = Kind::NetworkInterface.get(&region.network_interfaces, id)?;
    if eni.in_use() || eni.pending {
        return Err(ApiError::new(
            Code::InvalidNetworkInterfaceInUse,
            format!("Interface: [{id}] in use."),
        ));
    }
    Ok(Some(eni))
}

/// The subnet, VPC and zone of a launch, and whether it maps a public address (never on
/// `existing`, the user's interface a launch takes as its primary).
pub(super) fn placement(
    region: &Region,
    input: &RunInstancesRequest,
    nic: Option<&InstanceNetworkInterfaceSpecification>,
    existing: Option<&NetworkInterface>,
) -> Result<Placement, ApiError> {
    if let Some(p) = &input.placement {
        let unserved = [
            ("AvailabilityZoneId", p.availability_zone_id.is_some()),
            ("HostResourceGroupArn", p.host_resource_group_arn.is_some()),
            ("SpreadDomain", p.spread_domain.is_some()),
        ];
        if let Some((name, _)) = unserved.iter().find(|(_, set)| *set) {
            return Err(ApiError::not_implemented(format!(
                "fakeaws does not serve Placement.{name} of RunInstances"
            )));
        }
    }
    let placement_zone = input
        .placement
        .as_ref()
        .and_then(|p| p.availability_zone.clone());
    let requested_subnet = nic
        .and_then(|n| n.subnet_id.clone())
        .or_else(|| existing.map(|e| e.subnet_id.clone()))
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
    let s = Kind::Subnet.get(&region.subnets, &subnet_id)?;
    // An interface the user made keeps its own addresses.
    let maps_public = existing.is_none()
        && nic
            .and_then(|n| n.associate_public_ip_address)
            .unwrap_or(s.map_public_ip_on_launch);
    // A Wavelength Zone's instances reach the internet through their carrier's network: a
    // carrier IP address (`AssociateCarrierIpAddress`, the primary interface's only, new),
    // never a public address of AWS's; and a carrier IP address only there (the model's
    // documentation of `AssociateCarrierIpAddress`).
    let carrier =
        existing.is_none() && nic.and_then(|n| n.associate_carrier_ip_address) == Some(true);
    let wavelength = region
        .zone(&s.zone)
        .is_some_and(|z| z.kind == crate::ec2::availability_zone::ZoneType::Wavelength);
    if carrier && !wavelength {
        return Err(ApiError::invalid_combination(format!(
            "A carrier IP address can only be assigned to a network interface in a subnet in a \
             Wavelength Zone; {subnet_id} is in {}.",
            s.zone
        )));
    }
    if wavelength && maps_public {
        return Err(ApiError::invalid_combination(format!(
            "The subnet {subnet_id} is in the Wavelength Zone {}, which has no public IPv4 \
             addresses: use AssociateCarrierIpAddress.",
            s.zone
        )));
    }
    if carrier
        && input
            .network_interfaces
            .as_ref()
            .is_some_and(|l| l.len() > 1)
    {
        return Err(ApiError::invalid_combination(
            "The associateCarrierIpAddress parameter cannot be specified when launching with multiple network interfaces.",
        ));
    }
    let (vpc_id, zone) = (s.vpc_id.clone(), s.zone.clone());
    if let Some(z) = &placement_zone
        && *z != zone
    {
        return Err(ApiError::invalid_value(format!(
            "The subnet {subnet_id} is in {zone}, not in the requested zone {z}."
        )));
    }
    Ok(Placement {
        subnet_id,
        vpc_id,
        zone,
        maps_public: maps_public || carrier,
        carrier,
    })
}

/// The security groups of a launch in `vpc_id`: by id or by name, each in that VPC; the
/// VPC's default group when none is named.
pub(super) fn groups_of_launch(
    region: &Region,
    input: &RunInstancesRequest,
    nic: Option<&InstanceNetworkInterfaceSpecification>,
    vpc_id: &str,
) -> Result<Vec<String>, ApiError> {
    let group_ids = nic
        .and_then(|n| n.groups.as_ref())
        .or(input.security_group_ids.as_ref());
    let mut groups =
        security_group::checked_in_vpc(region, vpc_id, group_ids.into_iter().flatten())?;
    for name in input.security_groups.iter().flatten() {
        let id = region
            .by_vpc
            .of_kind(vpc_id, "sg")
            .filter_map(|id| region.security_groups.get(id))
            .find(|g| &g.name == name)
            .map(|g| g.id.clone())
            .ok_or_else(|| error::group_not_in_vpc(name, vpc_id))?;
        if !groups.contains(&id) {
            groups.push(id);
        }
    }
    if groups.is_empty() {
        groups.extend(security_group::default_of(region, vpc_id));
    }
    Ok(groups)
}

/// The instance profile's name, from its ARN or name.
pub(super) fn iam_profile_name(
    region: &str,
    spec: Option<&IamInstanceProfileSpecification>,
) -> Result<Option<String>, ApiError> {
    Ok(match spec {
        None => None,
        Some(spec) => {
            let name = match (&spec.arn, &spec.name) {
                (Some(arn), _) => arn
                    .rsplit('/')
                    .next()
                    .filter(|n| {
                        arn.strip_prefix("arn:")
                            .and_then(|a| {
                                a.strip_prefix(crate::ec2::account::arn_partition(region))
                            })
                            .is_some_and(|a| a.starts_with(":iam::"))
                            && !n.is_empty()
                    })
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
    })
}

/// The profile `name` of `account` as an instance shows it: its ARN and an id (`AIPA...`)
/// made from the name.
pub(super) fn iam_profile_record(region: &str, account: &str, name: &str) -> (String, String) {
    (
        format!(
            "arn:{}:iam::{account}:instance-profile/{name}",
            crate::ec2::account::arn_partition(region)
        ),
        format!(
            "AIPA{}",
            name.to_ascii_uppercase()
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(17)
                .collect::<String>()
        ),
    )
}
