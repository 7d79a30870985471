//! What a cluster holds in AWS, as reconcile, plan and delete report it: the status of each
//! resource (owned or pre-existing) and the [`Outcome`] of a call (done, or what is pending).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::spec::Role;

/// A resource the cluster uses: created and owned by it, or pre-existing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Res {
    /// Its id (a placeholder `<new ...>` for what a plan would create).
    pub id: String,
    /// Whether the cluster owns it (created it).
    pub managed: bool,
}

/// A subnet of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubnetStatus {
    /// Id.
    pub id: String,
    /// Owned or pre-existing.
    pub managed: bool,
    /// CIDR.
    pub cidr: String,
    /// Zone.
    pub zone: String,
    /// Public or private.
    pub public: bool,
    /// Whether instances launched in it get a public IP without asking.
    pub maps_public_ip: bool,
    /// Its IPv6 /64 (associated, or being associated), in a dual-stack cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6_cidr: Option<String>,
    /// The kind of its zone when that is an edge zone: `local-zone` or `wavelength-zone`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge_zone: Option<String>,
    /// Whether AWS constrains its zone (`spec::CONSTRAINED_ZONE_IDS`: closed to new capacity,
    /// few instance types offered), so that the bastion and a machine naming no zone go
    /// elsewhere when they can.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub constrained: bool,
}

impl SubnetStatus {
    /// Whether it is in a Local Zone or a Wavelength Zone.
    pub fn is_edge(&self) -> bool {
        self.edge_zone.is_some()
    }

    /// Whether it is in a Wavelength Zone (reached through a carrier gateway).
    pub fn is_wavelength(&self) -> bool {
        self.edge_zone.as_deref() == Some(crate::spec::ZoneKind::WavelengthZone.as_str())
    }

    /// Where an instance goes when nothing names its zone: the first of `subnets` in an
    /// availability zone (never an edge zone), one AWS does not constrain when there is one
    /// (a constrained zone offers few instance types, and a launch of another one there is
    /// refused, `Unsupported`, however often it is asked).
    pub fn first_for_launch<'a>(
        subnets: impl IntoIterator<Item = &'a SubnetStatus>,
    ) -> Option<&'a SubnetStatus> {
        let mut constrained = None;
        for s in subnets.into_iter().filter(|s| !s.is_edge()) {
            if !s.constrained {
                return Some(s);
            }
            constrained = constrained.or(Some(s));
        }
        constrained
    }
}

/// A NAT gateway of the cluster, with its Elastic IP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NatStatus {
    /// Id.
    pub id: String,
    /// The zone whose private subnets route to it.
    pub zone: String,
    /// The public subnet it sits in.
    pub subnet_id: String,
    /// Its Elastic IP's allocation id.
    pub allocation_id: String,
    /// Its Elastic IP's address (empty while AWS does not show it).
    pub public_ip: String,
    /// `pending`, `available`, ...
    pub state: String,
}

/// A route table of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteTableStatus {
    /// Id.
    pub id: String,
    /// The subnet it is associated with.
    pub subnet_id: String,
    /// Where 0.0.0.0/0 goes.
    pub default_route: Option<String>,
}

/// The bastion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstanceStatus {
    /// Id.
    pub id: String,
    /// Owned or pre-existing.
    pub managed: bool,
    /// State name.
    pub state: String,
    /// Public IP, if any.
    pub public_ip: Option<String>,
}

/// The API load balancer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadBalancerStatus {
    /// Name.
    pub name: String,
    /// Owned or pre-existing.
    pub managed: bool,
    /// DNS name: the control plane endpoint is `<dns name>:6443`.
    pub dns_name: String,
    /// `internet-facing` or `internal`.
    pub scheme: String,
}

/// The state of one part of a cluster, as a person reads it (`capa status`, the end of
/// `capa up`, `--output json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Condition {
    /// What it is about: `VPC`, `Subnets`, `InternetGateway`, `NATGateways`, `RouteTables`,
    /// `SecurityGroups`, `Bastion`, `LoadBalancer`, `Machines`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether that part is in place with nothing pending.
    pub ready: bool,
    /// Why not (empty when ready): what it waits for, or the changes still to make.
    pub reason: String,
}

impl Condition {
    /// A condition of `kind` from what its step left waiting and planned.
    pub fn of(kind: &str, waiting: &[String], planned: &[String]) -> Condition {
        let reason = if !waiting.is_empty() {
            waiting.join("; ")
        } else if let Some(first) = planned.first() {
            if planned.len() == 1 {
                format!("to do: {first}")
            } else {
                format!("{} changes to make, first: {first}", planned.len())
            }
        } else {
            String::new()
        };
        Condition {
            kind: kind.to_string(),
            ready: reason.is_empty(),
            reason,
        }
    }
}

/// What the cluster holds in AWS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClusterStatus {
    /// The VPC.
    pub vpc: Option<Res>,
    /// Its CIDR.
    pub vpc_cidr: Option<String>,
    /// Its secondary IPv4 ranges (associated, or being associated).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vpc_secondary_cidrs: Vec<String>,
    /// Its IPv6 block (associated, or being associated), in a dual-stack cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vpc_ipv6_cidr: Option<String>,
    /// The internet gateway.
    pub internet_gateway: Option<Res>,
    /// The egress-only internet gateway of a dual-stack cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress_only_internet_gateway: Option<Res>,
    /// The carrier gateway of a cluster with public subnets in Wavelength Zones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carrier_gateway: Option<Res>,
    /// Subnets.
    pub subnets: Vec<SubnetStatus>,
    /// NAT gateways.
    pub nat_gateways: Vec<NatStatus>,
    /// Route tables (owned ones).
    pub route_tables: Vec<RouteTableStatus>,
    /// Security groups by role.
    pub security_groups: BTreeMap<Role, Res>,
    /// The bastion.
    pub bastion: Option<InstanceStatus>,
    /// The API load balancer.
    pub load_balancer: Option<LoadBalancerStatus>,
    /// Whether everything is in place and nothing is pending.
    pub ready: bool,
    /// One condition per step of the cluster, in order: ready, or the reason it is not.
    pub conditions: Vec<Condition>,
}

impl ClusterStatus {
    /// The VPC's IPv4 ranges as text: its CIDR, then its secondary ranges.
    pub fn vpc_ranges(&self) -> impl Iterator<Item = &String> {
        self.vpc_cidr.iter().chain(&self.vpc_secondary_cidrs)
    }
}

/// The result of a reconcile or delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// What the cluster holds.
    pub status: ClusterStatus,
    /// What is still pending (empty when done); call again after `requeue_after`.
    pub waiting: Vec<String>,
    /// What a plan would do (only in plan mode).
    pub planned: Vec<String>,
}

impl Outcome {
    /// Whether the work is finished.
    pub fn is_done(&self) -> bool {
        self.waiting.is_empty()
    }

    /// When to call again, if not done.
    pub fn requeue_after(&self) -> Option<Duration> {
        (!self.is_done()).then_some(Duration::from_secs(15))
    }
}

#[cfg(test)]
mod tests {
    use super::SubnetStatus;

    fn subnet(id: &str, edge: bool, constrained: bool) -> SubnetStatus {
        SubnetStatus {
            id: id.into(),
            managed: true,
            cidr: "10.0.0.0/24".into(),
            zone: "us-east-1a".into(),
            public: true,
            maps_public_ip: true,
            ipv6_cidr: None,
            edge_zone: edge.then(|| "local-zone".into()),
            constrained,
        }
    }

    #[test]
    fn a_launch_prefers_an_unconstrained_availability_zone_and_never_an_edge_one() {
        let id = |subnets: &[SubnetStatus]| {
            SubnetStatus::first_for_launch(subnets).map(|s| s.id.clone())
        };
        let edge = subnet("edge", true, false);
        let tight = subnet("tight", false, true);
        let tight2 = subnet("tight2", false, true);
        let open = subnet("open", false, false);
        assert_eq!(
            id(&[edge.clone(), tight.clone(), open.clone()]),
            Some("open".into())
        );
        // Only constrained ones: the first of them, rather than none.
        assert_eq!(id(&[edge.clone(), tight, tight2]), Some("tight".into()));
        assert_eq!(id(&[edge]), None);
        assert_eq!(id(&[]), None);
    }
}
