//! The network interfaces of a launch, planned and checked before anything is made: the
//! primary (new, with its addresses, or one the user made) and the others by device index,
//! within the instance type's interface count and addresses per interface; then, for each
//! instance, made (or taken) and attached.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::network_interface::ipv6::Ipv6Requested;
use crate::ec2::network_interface::lifecycle::{Requested, check_room};
use crate::ec2::network_interface::{self, Attachment, NewInterface, Phase, limits, tracking};
use crate::ec2::{Kind, security_group};
use crate::generated::ec2::{
    ConnectionTrackingConfiguration, InstanceNetworkInterfaceSpecification, InstanceType,
    NetworkInterfaceType, RunInstancesRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::existing_interface;

/// A new interface of a launch.
struct NewOne {
    subnet_id: String,
    groups: Vec<String>,
    requested: Requested,
    ipv6: Ipv6Requested,
    description: String,
    tracking: Option<ConnectionTrackingConfiguration>,
}

/// One interface of each instance of a launch.
struct Planned {
    device_index: i32,
    delete_on_termination: bool,
    /// The user's interface, or a new one.
    made: Result<String, NewOne>,
}

/// A launch's interfaces.
pub(super) struct Plan {
    interfaces: Vec<Planned>,
}

/// What [`Plan::realize`] made for one instance.
pub(super) struct Made {
    /// The primary interface.
    pub(super) primary: String,
    /// Its primary address.
    pub(super) private_ip: Ipv4Addr,
    /// The others, by device index.
    pub(super) others: Vec<String>,
    /// The new interfaces among them all (the launch's TagSpecifications apply to these).
    pub(super) new: Vec<String>,
}

/// Where the primary interface goes (from the launch's placement).
pub(super) struct Primary<'a> {
    pub(super) subnet_id: &'a str,
    pub(super) vpc_id: &'a str,
    pub(super) zone: &'a str,
    pub(super) groups: &'a [String],
}

impl Plan {
    /// Plans and checks the interfaces of a launch: `nic` the primary's specification (if
    /// the launch has `NetworkInterfaces`), `users` the user's interface it names (checked
    /// by `existing_interface`), `others` the rest by device index.
    pub(super) fn new(
        region: &Region,
        input: &RunInstancesRequest,
        nic: Option<&InstanceNetworkInterfaceSpecification>,
        users: Option<String>,
        others: &[InstanceNetworkInterfaceSpecification],
        primary: &Primary<'_>,
        instance_type: InstanceType,
    ) -> Result<Plan, ApiError> {
        let mut interfaces = Vec::with_capacity(1 + others.len());
        let made = match users {
            Some(id) => Ok(id),
            None => {
                let raw_ip = nic
                    .and_then(|n| n.private_ip_address.as_deref())
                    .or(input.private_ip_address.as_deref());
                let requested = Requested::parse(
                    raw_ip,
                    nic.and_then(|n| n.private_ip_addresses.as_deref())
                        .unwrap_or_default(),
                    nic.and_then(|n| n.secondary_private_ip_address_count),
                )?;
                if input.max_count > 1
                    && (requested.primary.is_some() || !requested.named.is_empty())
                {
                    return Err(ApiError::invalid_combination(
                        "PrivateIpAddress cannot be used with MaxCount greater than 1.",
                    ));
                }
                requested.check_free(region, primary.subnet_id)?;
                let ipv6 = match nic {
                    Some(n) => Ipv6Requested::from_instance_addresses(
                        n.ipv6_address_count,
                        n.ipv6_addresses.as_deref(),
                    )?,
                    None => Ipv6Requested::from_instance_addresses(
                        input.ipv6_address_count,
                        input.ipv6_addresses.as_deref(),
                    )?,
                };
                let ipv6 = planned_ipv6(region, input, ipv6, primary.subnet_id)?;
                Err(NewOne {
                    subnet_id: primary.subnet_id.to_string(),
                    groups: primary.groups.to_vec(),
                    requested,
                    ipv6,
                    description: nic.and_then(|n| n.description.clone()).unwrap_or_default(),
                    tracking: tracking::asked(
                        nic.and_then(|n| n.connection_tracking_specification.as_ref()),
                    )?,
                })
            }
        };
        let existing = made.is_ok();
        interfaces.push(Planned {
            device_index: 0,
            delete_on_termination: nic
                .and_then(|n| n.delete_on_termination)
                .unwrap_or(!existing),
            made,
        });
        for one in others {
            interfaces.push(plan_other(region, input, one, primary)?);
        }
        let plan = Plan { interfaces };
        plan.check_type(region, instance_type)?;
        let mut named6 = Vec::new();
        for p in &plan.interfaces {
            if let Err(new) = &p.made {
                for ip in &new.ipv6.named {
                    if named6.contains(ip) {
                        return Err(ApiError::invalid_value(format!(
                            "The address {ip} is given to more than one network interface."
                        )));
                    }
                    named6.push(*ip);
                }
            }
        }
        let mut named: Vec<Ipv4Addr> = Vec::new();
        for p in &plan.interfaces {
            if let Err(new) = &p.made {
                for ip in new.requested.primary.iter().chain(&new.requested.named) {
                    if named.contains(ip) {
                        return Err(ApiError::invalid_value(format!(
                            "The address {ip} is given to more than one network interface."
                        )));
                    }
                    named.push(*ip);
                }
            }
        }
        Ok(plan)
    }

    /// The instance type's interface count and addresses per interface, where it is known.
    fn check_type(&self, region: &Region, instance_type: InstanceType) -> Result<(), ApiError> {
        let Some(l) = limits::of(instance_type) else {
            return Ok(());
        };
        let count = self.interfaces.len();
        if count > l.interfaces {
            return Err(ApiError::new(
                Code::AttachmentLimitExceeded,
                format!(
                    "Interface count {count} exceeds the limit for {}",
                    instance_type.as_str()
                ),
            ));
        }
        for p in &self.interfaces {
            let addresses = match &p.made {
                Ok(id) => region
                    .network_interfaces
                    .get(id)
                    .map_or(1, |e| e.addresses().count()),
                Err(new) => new.requested.addresses(),
            };
            if addresses > l.ipv4_per_interface {
                return Err(network_interface::lifecycle::too_many_addresses());
            }
        }
        Ok(())
    }

    /// The addresses each instance of the launch takes, by subnet.
    pub(super) fn demand(&self) -> BTreeMap<&str, usize> {
        let mut by_subnet = BTreeMap::new();
        for p in &self.interfaces {
            if let Err(new) = &p.made {
                *by_subnet.entry(new.subnet_id.as_str()).or_insert(0) += new.requested.addresses();
            }
        }
        by_subnet
    }

    /// How many instances the subnets' free addresses take (at most `wanted`).
    pub(super) fn fits(&self, region: &Region, wanted: usize) -> Result<usize, ApiError> {
        let mut fits = wanted;
        for (subnet_id, per_instance) in self.demand() {
            let free = Kind::Subnet
                .get(&region.subnets, subnet_id)?
                .assignable_addresses();
            let free = usize::try_from(free).unwrap_or(usize::MAX);
            fits = fits.min(free / per_instance.max(1));
        }
        Ok(fits)
    }

    /// Makes (or takes) and attaches instance `instance_id`'s interfaces.
    pub(super) fn realize(
        &self,
        region: &mut Region,
        instance_id: &str,
        now: DateTime,
    ) -> Result<Made, ApiError> {
        let mut ids = Vec::with_capacity(self.interfaces.len());
        let mut new_ids = Vec::new();
        let mut private_ip = None;
        for p in &self.interfaces {
            let id = match &p.made {
                Ok(id) => id.clone(),
                Err(new) => {
                    check_room(region, &new.subnet_id, new.requested.addresses())?;
                    let id = network_interface::create(
                        region,
                        NewInterface {
                            subnet_id: &new.subnet_id,
                            groups: new.groups.clone(),
                            interface_type: NetworkInterfaceType::Interface,
                            requester_managed: false,
                            description: new.description.clone(),
                            private_ip: new.requested.primary,
                        },
                    )?;
                    new.requested.give_secondaries(region, &id)?;
                    new.ipv6.give(region, &id)?;
                    if let Some(t) = &new.tracking {
                        tracking::apply(region, &id, t);
                    }
                    new_ids.push(id.clone());
                    id
                }
            };
            let attachment_id = region.ids.resource("eni-attach");
            let ip = network_interface::attach(
                region,
                &id,
                Attachment {
                    id: attachment_id,
                    instance_id: instance_id.to_string(),
                    device_index: p.device_index,
                    attach_time: now,
                    delete_on_termination: p.delete_on_termination,
                    phase: Phase::Attached,
                    service: None,
                },
            )?;
            private_ip.get_or_insert(ip);
            ids.push(id);
        }
        let mut ids = ids.into_iter();
        let primary = ids
            .next()
            .ok_or_else(|| Kind::NetworkInterface.not_found(&["(primary)"]))?;
        let private_ip = private_ip.ok_or_else(|| Kind::NetworkInterface.not_found(&[&primary]))?;
        Ok(Made {
            primary,
            private_ip,
            others: ids.collect(),
            new: new_ids,
        })
    }
}

/// Plans and checks one interface at device index 1 or more: the user's (in the primary's
/// VPC and zone), or a new one in a subnet of them.
fn plan_other(
    region: &Region,
    input: &RunInstancesRequest,
    one: &InstanceNetworkInterfaceSpecification,
    primary: &Primary<'_>,
) -> Result<Planned, ApiError> {
    let device_index = one.device_index.unwrap_or_default();
    let same_place = |vpc_id: &str, zone: &str, what: &str| {
        if vpc_id == primary.vpc_id && zone == primary.zone {
            Ok(())
        } else {
            Err(ApiError::invalid_combination(format!(
                "The network interfaces of an instance must be in one VPC and availability zone: {what} is not in {} and {}.",
                primary.vpc_id, primary.zone
            )))
        }
    };
    if let Some(e) = existing_interface(region, one)? {
        same_place(&e.vpc_id, &e.zone, &e.id)?;
        return Ok(Planned {
            device_index,
            delete_on_termination: false,
            made: Ok(e.id.clone()),
        });
    }
    let subnet_id = one.subnet_id.as_deref().unwrap_or_default();
    let subnet = Kind::Subnet.get(&region.subnets, subnet_id)?;
    same_place(&subnet.vpc_id, &subnet.zone, subnet_id)?;
    let groups =
        security_group::of_new_interface(region, primary.vpc_id, one.groups.iter().flatten())?;
    let requested = Requested::parse(
        one.private_ip_address.as_deref(),
        one.private_ip_addresses.as_deref().unwrap_or_default(),
        one.secondary_private_ip_address_count,
    )?;
    if input.max_count > 1 && (requested.primary.is_some() || !requested.named.is_empty()) {
        return Err(ApiError::invalid_combination(
            "PrivateIpAddress cannot be used with MaxCount greater than 1.",
        ));
    }
    requested.check_free(region, subnet_id)?;
    let ipv6 = Ipv6Requested::from_instance_addresses(
        one.ipv6_address_count,
        one.ipv6_addresses.as_deref(),
    )?;
    let ipv6 = planned_ipv6(region, input, ipv6, subnet_id)?;
    Ok(Planned {
        device_index,
        delete_on_termination: one.delete_on_termination.unwrap_or(true),
        made: Err(NewOne {
            subnet_id: subnet_id.to_string(),
            groups,
            requested,
            ipv6,
            description: one.description.clone().unwrap_or_default(),
            tracking: tracking::asked(one.connection_tracking_specification.as_ref())?,
        }),
    })
}

/// The IPv6 addresses a new interface of a launch takes in subnet `subnet_id`: those asked for
/// (named ones only for a single instance), or the subnet's default; checked.
fn planned_ipv6(
    region: &Region,
    input: &RunInstancesRequest,
    asked: Ipv6Requested,
    subnet_id: &str,
) -> Result<Ipv6Requested, ApiError> {
    if input.max_count > 1 && !asked.named.is_empty() {
        return Err(ApiError::invalid_combination(
            "Ipv6Addresses cannot be used with MaxCount greater than 1.",
        ));
    }
    let ipv6 = asked.or_subnet_default(region, subnet_id);
    ipv6.check(region, subnet_id)?;
    Ok(ipv6)
}
