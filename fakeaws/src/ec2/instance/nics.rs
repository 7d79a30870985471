//! The network interfaces of a launch, planned and checked before anything is made: the
//! primary (new, with its addresses, or one the user made) and the others by device index,
//! within the instance type's interface count and addresses per interface; then, for each
//! instance, made (or taken) and attached.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use ipnet::{Ipv4Net, Ipv6Net};

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::network_interface::ipv6::Ipv6Requested;
use crate::ec2::network_interface::lifecycle::{Requested, check_room};
use crate::ec2::network_interface::prefix::{self, Asked};
use crate::ec2::network_interface::{self, Attachment, NewInterface, Phase, efa, limits, tracking};
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
    /// Its IPv4 /28 prefixes, as asked.
    prefixes: Asked<Ipv4Net>,
    /// Its IPv6 /80 prefixes, as asked.
    prefixes6: Asked<Ipv6Net>,
    description: String,
    tracking: Option<ConnectionTrackingConfiguration>,
    /// Enabled for a primary IPv6 address (`PrimaryIpv6`, `EnablePrimaryIpv6`).
    primary_ipv6: bool,
    /// `interface`, or `efa` for an Elastic Fabric Adapter (`InterfaceType`).
    interface_type: NetworkInterfaceType,
}

/// The prefixes taken for one instance's new interfaces before any is made (none for the
/// user's interfaces), in the order of the plan's interfaces.
pub(super) type Prefixes = Vec<(Vec<Ipv4Net>, Vec<Ipv6Net>)>;

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
                let explicit6 = match nic {
                    Some(n) => asks_ipv6(n.ipv6_address_count, n.ipv6_addresses.as_deref()),
                    None => asks_ipv6(input.ipv6_address_count, input.ipv6_addresses.as_deref()),
                };
                let ipv6 = planned_ipv6(region, input, ipv6, primary.subnet_id)?;
                let (prefixes, prefixes6) =
                    asked_prefixes(input, nic, &requested, &ipv6, explicit6)?;
                let primary_ipv6 = nic.and_then(|n| n.primary_ipv6) == Some(true)
                    || input.enable_primary_ipv6 == Some(true);
                if primary_ipv6 {
                    network_interface::ipv6::check_primary(region, primary.subnet_id)?;
                }
                Err(NewOne {
                    subnet_id: primary.subnet_id.to_string(),
                    groups: primary.groups.to_vec(),
                    requested,
                    ipv6,
                    prefixes,
                    prefixes6,
                    description: nic.and_then(|n| n.description.clone()).unwrap_or_default(),
                    tracking: tracking::asked(
                        nic.and_then(|n| n.connection_tracking_specification.as_ref()),
                    )?,
                    primary_ipv6,
                    interface_type: efa::asked(nic.and_then(|n| n.interface_type.as_deref()))?,
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

    /// The instance type's interface count and addresses per interface, where it is known,
    /// and its Elastic Fabric Adapters.
    fn check_type(&self, region: &Region, instance_type: InstanceType) -> Result<(), ApiError> {
        let efas = self
            .interfaces
            .iter()
            .filter(|p| match &p.made {
                Ok(id) => region
                    .network_interfaces
                    .get(id)
                    .is_some_and(|e| efa::is_efa(e.interface_type)),
                Err(new) => efa::is_efa(new.interface_type),
            })
            .count();
        efa::check(instance_type, efas)?;
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
                Err(new) => new.requested.addresses() + new.prefixes.len(),
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
                // A /28 prefix takes sixteen of the subnet's addresses.
                *by_subnet.entry(new.subnet_id.as_str()).or_insert(0) +=
                    new.requested.addresses() + new.prefixes.len() * 16;
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

    /// Takes the prefixes of each of `count` instances' new interfaces from their subnets,
    /// before any is made: all of them or, when one cannot be had (`InsufficientCidrBlocks`),
    /// none.
    pub(super) fn reserve_prefixes(
        &self,
        region: &mut Region,
        count: usize,
    ) -> Result<Vec<Prefixes>, ApiError> {
        let asks = self.interfaces.iter().any(|p| {
            p.made
                .as_ref()
                .is_err_and(|n| !n.prefixes.is_empty() || !n.prefixes6.is_empty())
        });
        if !asks {
            return Ok(vec![Vec::new(); count]);
        }
        let mut all = Vec::with_capacity(count);
        for _ in 0..count {
            let mut one = Vec::with_capacity(self.interfaces.len());
            for p in &self.interfaces {
                let taken = match &p.made {
                    Ok(_) => Ok((Vec::new(), Vec::new())),
                    Err(n) => prefix::reserve(region, &n.subnet_id, &n.prefixes).and_then(|v4| {
                        match prefix::reserve(region, &n.subnet_id, &n.prefixes6) {
                            Ok(v6) => Ok((v4, v6)),
                            Err(e) => {
                                prefix::unreserve(region, &n.subnet_id, &v4);
                                Err(e)
                            }
                        }
                    }),
                };
                match taken {
                    Ok(t) => one.push(t),
                    Err(e) => {
                        all.push(one);
                        self.release_prefixes(region, all);
                        return Err(e);
                    }
                }
            }
            all.push(one);
        }
        Ok(all)
    }

    /// Gives back prefixes [`Plan::reserve_prefixes`] took for instances never made.
    pub(super) fn release_prefixes(
        &self,
        region: &mut Region,
        left: impl IntoIterator<Item = Prefixes>,
    ) {
        for one in left {
            for (p, (v4, v6)) in self.interfaces.iter().zip(one) {
                if let Err(n) = &p.made {
                    prefix::unreserve(region, &n.subnet_id, &v4);
                    prefix::unreserve(region, &n.subnet_id, &v6);
                }
            }
        }
    }

    /// Makes (or takes) and attaches instance `instance_id`'s interfaces, handing each new
    /// one the `prefixes` reserved for it.
    pub(super) fn realize(
        &self,
        region: &mut Region,
        instance_id: &str,
        now: DateTime,
        prefixes: Prefixes,
    ) -> Result<Made, ApiError> {
        let mut ids = Vec::with_capacity(self.interfaces.len());
        let mut new_ids = Vec::new();
        let mut private_ip = None;
        let mut prefixes = prefixes.into_iter();
        for p in &self.interfaces {
            let (v4, v6) = prefixes.next().unwrap_or_default();
            let id = match &p.made {
                Ok(id) => id.clone(),
                Err(new) => {
                    check_room(region, &new.subnet_id, new.requested.addresses())?;
                    let id = network_interface::create_beside(
                        region,
                        NewInterface {
                            subnet_id: &new.subnet_id,
                            groups: new.groups.clone(),
                            interface_type: new.interface_type,
                            requester_managed: false,
                            description: new.description.clone(),
                            private_ip: new.requested.primary,
                        },
                        &new.requested.named,
                    )?;
                    new.requested.give_secondaries(region, &id)?;
                    prefix::hand_over(region, &id, &v4);
                    prefix::hand_over(region, &id, &v6);
                    new.ipv6.give(region, &id)?;
                    if new.primary_ipv6 {
                        network_interface::ipv6::enable_primary(region, &id);
                    }
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
    let explicit6 = asks_ipv6(one.ipv6_address_count, one.ipv6_addresses.as_deref());
    let (prefixes, prefixes6) = asked_prefixes(input, Some(one), &requested, &ipv6, explicit6)?;
    let primary_ipv6 = one.primary_ipv6 == Some(true);
    if primary_ipv6 {
        network_interface::ipv6::check_primary(region, subnet_id)?;
    }
    Ok(Planned {
        device_index,
        delete_on_termination: one.delete_on_termination.unwrap_or(true),
        made: Err(NewOne {
            subnet_id: subnet_id.to_string(),
            groups,
            requested,
            ipv6,
            prefixes,
            prefixes6,
            description: one.description.clone().unwrap_or_default(),
            tracking: tracking::asked(one.connection_tracking_specification.as_ref())?,
            primary_ipv6,
            interface_type: efa::asked(one.interface_type.as_deref())?,
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

/// Whether a launch interface asks for IPv6 addresses itself (`Ipv6AddressCount` or
/// `Ipv6Addresses`), beside what its subnet gives by default.
fn asks_ipv6<T>(count: Option<i32>, addresses: Option<&[T]>) -> bool {
    count.is_some() || addresses.is_some_and(|a| !a.is_empty())
}

/// The prefixes a new launch interface asks for (`Ipv4Prefixes` or `Ipv4PrefixCount`,
/// `Ipv6Prefixes` or `Ipv6PrefixCount`), checked as CreateNetworkInterface checks them: not
/// with secondary addresses (IPv4) or addresses asked for (IPv6); named ones not with
/// MaxCount above 1, as for named addresses.
fn asked_prefixes(
    input: &RunInstancesRequest,
    one: Option<&InstanceNetworkInterfaceSpecification>,
    requested: &Requested,
    ipv6: &Ipv6Requested,
    explicit6: bool,
) -> Result<(Asked<Ipv4Net>, Asked<Ipv6Net>), ApiError> {
    let Some(one) = one else {
        return Ok((Asked::Nothing, Asked::Nothing));
    };
    let (v4, v6) = prefix::asked_by_interface(
        one.ipv4_prefixes.as_deref(),
        one.ipv4_prefix_count,
        one.ipv6_prefixes.as_deref(),
        one.ipv6_prefix_count,
        requested.addresses() > 1,
        explicit6,
    )?;
    if ipv6.total() + v6.len() > limits::MOST_PER_INTERFACE {
        return Err(ApiError::invalid_value(format!(
            "A network interface takes at most {} IPv6 addresses.",
            limits::MOST_PER_INTERFACE
        )));
    }
    let named = matches!(v4, Asked::Named(_)) || matches!(v6, Asked::Named(_));
    if named && input.max_count > 1 {
        return Err(ApiError::invalid_combination(
            "Ipv4Prefixes and Ipv6Prefixes cannot be used with MaxCount greater than 1.",
        ));
    }
    Ok((v4, v6))
}
