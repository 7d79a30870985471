//! Subnet CIDR reservations: CreateSubnetCidrReservation, GetSubnetCidrReservations,
//! DeleteSubnetCidrReservation.
//!
//! A reservation (`scr-`) sets a range of a subnet apart, IPv4 (within the subnet's range) or
//! IPv6 (within its IPv6 block), written as a network (no host bits), overlapping no other
//! reservation of the subnet. Of either type, its addresses are never ones the subnet assigns
//! on its own (an interface's primary or secondary address asked for by count); `explicit`:
//! they are assigned only when named; `prefix`: the /28 prefixes asked for by count come from
//! the subnet's prefix reservations first (and never from an explicit one), as the VPC user
//! guide describes. A reservation may cover addresses already in use; it goes with its subnet.

use std::net::Ipv4Addr;

use ipnet::{IpNet, Ipv4Net};

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    CreateSubnetCidrReservationRequest, CreateSubnetCidrReservationResult,
    DeleteSubnetCidrReservationRequest, DeleteSubnetCidrReservationResult,
    GetSubnetCidrReservationsRequest, GetSubnetCidrReservationsResult, ResourceType,
    SubnetCidrReservation as ReservationOut, SubnetCidrReservationType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::PREFIX_LEN;

/// One reservation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CidrReservation {
    /// `scr-...`.
    pub id: String,
    /// The range.
    #[serde(with = "crate::state::with::text")]
    pub cidr: IpNet,
    /// `prefix` or `explicit`.
    pub kind: SubnetCidrReservationType,
    /// Its description, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl CidrReservation {
    /// The range, if it is IPv4.
    pub fn v4(&self) -> Option<Ipv4Net> {
        match self.cidr {
            IpNet::V4(n) => Some(n),
            IpNet::V6(_) => None,
        }
    }

    /// The range, if it is IPv6.
    pub fn v6(&self) -> Option<ipnet::Ipv6Net> {
        match self.cidr {
            IpNet::V6(n) => Some(n),
            IpNet::V4(_) => None,
        }
    }

    /// Whether the IPv4 address `ip` is in the range.
    pub fn contains_v4(&self, ip: Ipv4Addr) -> bool {
        self.v4().is_some_and(|n| n.contains(&ip))
    }
}

fn render(region: &Region, subnet_id: &str, r: &CidrReservation) -> ReservationOut {
    ReservationOut {
        subnet_cidr_reservation_id: Some(r.id.clone()),
        subnet_id: Some(subnet_id.to_string()),
        cidr: Some(r.cidr.to_string()),
        reservation_type: Some(r.kind),
        owner_id: Some(region.account_id.clone()),
        description: r.description.clone(),
        tags: region.tags.tag_set(&r.id),
    }
}

/// `CreateSubnetCidrReservation`.
pub fn create_subnet_cidr_reservation(
    region: &mut Region,
    input: CreateSubnetCidrReservationRequest,
) -> Result<CreateSubnetCidrReservationResult, ApiError> {
    let subnet = Kind::Subnet.get(&region.subnets, &input.subnet_id)?;
    let cidr = if input.cidr.contains(':') {
        IpNet::V6(crate::ec2::vpc_ipv6::parse_ipv6_cidr(&input.cidr, "Cidr")?)
    } else {
        IpNet::V4(crate::ec2::vpc::parse_cidr(&input.cidr, "Cidr")?)
    };
    let within = match cidr {
        IpNet::V4(n) => subnet.cidr.contains(&n),
        IpNet::V6(n) => subnet.ipv6.as_ref().is_some_and(|b| b.cidr.contains(&n)),
    };
    if !within {
        return Err(ApiError::invalid_parameter(
            "Cidr",
            &input.cidr,
            &format!(
                "The CIDR is not within the subnet's {} range.",
                if cidr.addr().is_ipv4() {
                    "IPv4"
                } else {
                    "IPv6"
                }
            ),
        ));
    }
    let smallest = if cidr.addr().is_ipv4() {
        PREFIX_LEN
    } else {
        80
    };
    if input.reservation_type == SubnetCidrReservationType::Prefix && cidr.prefix_len() > smallest {
        return Err(ApiError::invalid_parameter(
            "Cidr",
            &input.cidr,
            &format!(
                "A prefix reservation must hold at least one prefix (a /{smallest} or larger)."
            ),
        ));
    }
    if let Some(other) = subnet
        .reservations
        .iter()
        .find(|r| r.cidr.contains(&cidr.network()) || cidr.contains(&r.cidr.network()))
    {
        return Err(ApiError::invalid_parameter(
            "Cidr",
            &input.cidr,
            &format!(
                "The CIDR overlaps the subnet's reservation {} ({}).",
                other.id, other.cidr
            ),
        ));
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::SubnetCidrReservation,
    )?;
    let reservation = CidrReservation {
        id: region.ids.resource(Kind::SubnetCidrReservation.prefix()),
        cidr,
        kind: input.reservation_type,
        description: input.description,
    };
    let subnet_id = input.subnet_id;
    region.tags.insert(&reservation.id, tags);
    let out = render(region, &subnet_id, &reservation);
    if let Some(s) = region.subnets.0.get_mut(&subnet_id) {
        s.reservations.push(reservation);
    }
    Ok(CreateSubnetCidrReservationResult {
        subnet_cidr_reservation: Some(out),
    })
}

impl Filterable for (&CidrReservation, &str) {
    const NAMES: &'static [&'static str] = &["reservationType", "subnet-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (r, subnet_id) = *self;
        match name {
            "reservationType" => one(r.kind.as_str()),
            "subnet-id" => one(subnet_id),
            _ => Vec::new(),
        }
    }
}

/// `GetSubnetCidrReservations`: a subnet's reservations, IPv4 and IPv6 apart; filters,
/// `MaxResults` 5 to 1000 (the model's range).
pub fn get_subnet_cidr_reservations(
    region: &Region,
    input: GetSubnetCidrReservationsRequest,
) -> Result<GetSubnetCidrReservationsResult, ApiError> {
    let filters = Filters::parse::<(&CidrReservation, &str)>(input.filters)?;
    let subnet = Kind::Subnet.get(&region.subnets, &input.subnet_id)?;
    let mut found: Vec<&CidrReservation> = subnet
        .reservations
        .iter()
        .filter(|r| filters.matches(&(*r, subnet.id.as_str()), region.tags.get(&r.id)))
        .collect();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    let (items, next) = page::page(
        found,
        |r| r.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    let (v4, v6): (Vec<&CidrReservation>, Vec<&CidrReservation>) =
        items.into_iter().partition(|r| r.cidr.addr().is_ipv4());
    Ok(GetSubnetCidrReservationsResult {
        subnet_ipv4_cidr_reservations: Some(
            v4.into_iter()
                .map(|r| render(region, &subnet.id, r))
                .collect(),
        ),
        subnet_ipv6_cidr_reservations: Some(
            v6.into_iter()
                .map(|r| render(region, &subnet.id, r))
                .collect(),
        ),
        next_token: next,
    })
}

/// The subnet holding reservation `id`.
pub fn subnet_of(region: &Region, id: &str) -> Option<String> {
    region
        .subnets
        .values()
        .find(|s| s.reservations.iter().any(|r| r.id == id))
        .map(|s| s.id.clone())
}

/// `DeleteSubnetCidrReservation`: answered with the reservation as it was.
pub fn delete_subnet_cidr_reservation(
    region: &mut Region,
    input: DeleteSubnetCidrReservationRequest,
) -> Result<DeleteSubnetCidrReservationResult, ApiError> {
    let id = input.subnet_cidr_reservation_id;
    let kind = Kind::SubnetCidrReservation;
    kind.check_shape(&id)?;
    let subnet_id = subnet_of(region, &id).ok_or_else(|| kind.not_found(&[&id]))?;
    let Some(reservation) = region
        .subnets
        .get(&subnet_id)
        .and_then(|s| s.reservations.iter().find(|r| r.id == id))
        .cloned()
    else {
        return Err(kind.not_found(&[&id]));
    };
    let out = render(region, &subnet_id, &reservation);
    if let Some(s) = region.subnets.0.get_mut(&subnet_id) {
        s.reservations.retain(|r| r.id != id);
    }
    region.tags.remove_resource(&id);
    Ok(DeleteSubnetCidrReservationResult {
        deleted_subnet_cidr_reservation: Some(out),
    })
}
