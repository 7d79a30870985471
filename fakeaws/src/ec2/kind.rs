//! The table of EC2 resource kinds: for each, its id prefix, the stem of its error codes
//! (`InvalidVpcID` -> `InvalidVpcID.NotFound`, `.Malformed`), the noun of its messages, and
//! the resource type it carries in tags (and, beside the table, the filter naming its own
//! id). Every module names its kind from here; tagging checks and DescribeTags read the same
//! rows.

use std::collections::{BTreeMap, BTreeSet};

use crate::generated::ec2::ResourceType;
use crate::ids;
use crate::protocol::error::ApiError;
use crate::sim::consistency::Consistency;

/// A kind of EC2 resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// VPCs (`vpc-`).
    Vpc,
    /// Subnets (`subnet-`).
    Subnet,
    /// Internet gateways (`igw-`).
    InternetGateway,
    /// Egress-only internet gateways (`eigw-`).
    EgressOnlyInternetGateway,
    /// DHCP options sets (`dopt-`).
    DhcpOptions,
    /// Elastic IPs, by allocation id (`eipalloc-`).
    ElasticIp,
    /// NAT gateways (`nat-`).
    NatGateway,
    /// Route tables (`rtb-`).
    RouteTable,
    /// Network ACLs (`acl-`).
    NetworkAcl,
    /// Security groups (`sg-`).
    SecurityGroup,
    /// Security group rules (`sgr-`).
    SecurityGroupRule,
    /// Network interfaces (`eni-`).
    NetworkInterface,
    /// Instances (`i-`).
    Instance,
    /// EBS volumes (`vol-`).
    Volume,
    /// EBS snapshots (`snap-`).
    Snapshot,
    /// Images (`ami-`).
    Image,
    /// Key pairs, by key pair id (`key-`).
    KeyPair,
    /// VPC endpoints (`vpce-`).
    VpcEndpoint,
    /// Launch templates (`lt-`).
    LaunchTemplate,
    /// Placement groups (`pg-`).
    PlacementGroup,
    /// Spot Instance requests (`sir-`).
    SpotInstanceRequest,
    /// VPC peering connections (`pcx-`).
    VpcPeeringConnection,
    /// Dedicated Hosts (`h-`).
    DedicatedHost,
    /// Capacity Reservations (`cr-`).
    CapacityReservation,
    /// Customer-managed prefix lists (`pl-`).
    PrefixList,
    /// The account's public IPv4 pools of its own addresses (`ipv4pool-ec2-`).
    PublicIpv4Pool,
    /// The account's IPv6 pools of its own addresses (`ipv6pool-ec2-`).
    Ipv6Pool,
    /// VPC flow logs (`fl-`).
    FlowLog,
    /// Carrier gateways (`cagw-`).
    CarrierGateway,
    /// EC2 Instance Connect Endpoints (`eice-`).
    InstanceConnectEndpoint,
    /// IPAM scopes (`ipam-scope-`).
    IpamScope,
    /// IPAM pools (`ipam-pool-`).
    IpamPool,
    /// IPAMs (`ipam-`; after the scopes and pools, whose prefixes begin with its own).
    Ipam,
    /// EC2 Fleets (`fleet-` and a UUID).
    Fleet,
    /// Subnet CIDR reservations (`scr-`).
    SubnetCidrReservation,
    /// Virtual private gateways (`vgw-`).
    VpnGateway,
    /// Customer gateways (`cgw-`).
    CustomerGateway,
    /// Site-to-Site VPN connections (`vpn-`).
    VpnConnection,
}

/// One row of the table.
struct Row {
    prefix: &'static str,
    code: &'static str,
    noun: &'static str,
    resource_type: ResourceType,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 38] = [
        Kind::Vpc,
        Kind::Subnet,
        Kind::InternetGateway,
        Kind::EgressOnlyInternetGateway,
        Kind::DhcpOptions,
        Kind::ElasticIp,
        Kind::NatGateway,
        Kind::RouteTable,
        Kind::NetworkAcl,
        Kind::SecurityGroup,
        Kind::SecurityGroupRule,
        Kind::NetworkInterface,
        Kind::Instance,
        Kind::Volume,
        Kind::Snapshot,
        Kind::Image,
        Kind::KeyPair,
        Kind::VpcEndpoint,
        Kind::LaunchTemplate,
        Kind::PlacementGroup,
        Kind::SpotInstanceRequest,
        Kind::VpcPeeringConnection,
        Kind::DedicatedHost,
        Kind::CapacityReservation,
        Kind::PrefixList,
        Kind::PublicIpv4Pool,
        Kind::Ipv6Pool,
        Kind::FlowLog,
        Kind::CarrierGateway,
        Kind::InstanceConnectEndpoint,
        Kind::IpamScope,
        Kind::IpamPool,
        Kind::Ipam,
        Kind::Fleet,
        Kind::SubnetCidrReservation,
        Kind::VpnGateway,
        Kind::CustomerGateway,
        Kind::VpnConnection,
    ];

    /// The table.
    const fn row(self) -> Row {
        let (prefix, code, noun, resource_type) = match self {
            Kind::Vpc => ("vpc", "InvalidVpcID", "vpc", ResourceType::Vpc),
            Kind::Subnet => ("subnet", "InvalidSubnetID", "subnet", ResourceType::Subnet),
            Kind::InternetGateway => (
                "igw",
                "InvalidInternetGatewayID",
                "internetGateway",
                ResourceType::InternetGateway,
            ),
            Kind::EgressOnlyInternetGateway => (
                "eigw",
                "InvalidEgressOnlyInternetGatewayId",
                "egress-only internet gateway",
                ResourceType::EgressOnlyInternetGateway,
            ),
            Kind::DhcpOptions => (
                "dopt",
                "InvalidDhcpOptionID",
                "dhcpOption",
                ResourceType::DhcpOptions,
            ),
            Kind::ElasticIp => (
                "eipalloc",
                "InvalidAllocationID",
                "allocation",
                ResourceType::ElasticIp,
            ),
            Kind::NatGateway => (
                "nat",
                "InvalidNatGatewayID",
                "natGateway",
                ResourceType::Natgateway,
            ),
            Kind::RouteTable => (
                "rtb",
                "InvalidRouteTableID",
                "routeTable",
                ResourceType::RouteTable,
            ),
            Kind::NetworkAcl => (
                "acl",
                "InvalidNetworkAclID",
                "networkAcl",
                ResourceType::NetworkAcl,
            ),
            Kind::SecurityGroup => (
                "sg",
                "InvalidGroup",
                "security group",
                ResourceType::SecurityGroup,
            ),
            Kind::SecurityGroupRule => (
                "sgr",
                "InvalidSecurityGroupRuleId",
                "security group rule",
                ResourceType::SecurityGroupRule,
            ),
            Kind::NetworkInterface => (
                "eni",
                "InvalidNetworkInterfaceID",
                "networkInterface",
                ResourceType::NetworkInterface,
            ),
            Kind::Instance => ("i", "InvalidInstanceID", "instance", ResourceType::Instance),
            Kind::Volume => ("vol", "InvalidVolume", "volume", ResourceType::Volume),
            Kind::Snapshot => (
                "snap",
                "InvalidSnapshot",
                "snapshot",
                ResourceType::Snapshot,
            ),
            Kind::Image => ("ami", "InvalidAMIID", "image", ResourceType::Image),
            Kind::KeyPair => ("key", "InvalidKeyPair", "key pair", ResourceType::KeyPair),
            Kind::VpcEndpoint => (
                "vpce",
                "InvalidVpcEndpointId",
                "Vpc Endpoint",
                ResourceType::VpcEndpoint,
            ),
            Kind::LaunchTemplate => (
                "lt",
                "InvalidLaunchTemplateId",
                "launch template",
                ResourceType::LaunchTemplate,
            ),
            Kind::PlacementGroup => (
                "pg",
                "InvalidPlacementGroupId",
                "placement group",
                ResourceType::PlacementGroup,
            ),
            Kind::SpotInstanceRequest => (
                "sir",
                "InvalidSpotInstanceRequestID",
                "spot instance request",
                ResourceType::SpotInstancesRequest,
            ),
            Kind::VpcPeeringConnection => (
                "pcx",
                "InvalidVpcPeeringConnectionID",
                "vpcPeeringConnection",
                ResourceType::VpcPeeringConnection,
            ),
            Kind::DedicatedHost => ("h", "InvalidHostID", "host", ResourceType::DedicatedHost),
            Kind::CapacityReservation => (
                "cr",
                "InvalidCapacityReservationId",
                "capacity reservation",
                ResourceType::CapacityReservation,
            ),
            Kind::PrefixList => (
                "pl",
                "InvalidPrefixListID",
                "prefix list",
                ResourceType::PrefixList,
            ),
            Kind::PublicIpv4Pool => (
                "ipv4pool-ec2",
                "InvalidPublicIpv4PoolID",
                "public IPv4 pool",
                ResourceType::Ipv4poolEc2,
            ),
            Kind::Ipv6Pool => (
                "ipv6pool-ec2",
                "InvalidIpv6PoolID",
                "IPv6 pool",
                ResourceType::Ipv6poolEc2,
            ),
            Kind::FlowLog => (
                "fl",
                "InvalidFlowLogId",
                "flow log",
                ResourceType::VpcFlowLog,
            ),
            Kind::CarrierGateway => (
                "cagw",
                "InvalidCarrierGatewayID",
                "carrierGateway",
                ResourceType::CarrierGateway,
            ),
            Kind::InstanceConnectEndpoint => (
                "eice",
                "InvalidInstanceConnectEndpointId",
                "instance connect endpoint",
                ResourceType::InstanceConnectEndpoint,
            ),
            Kind::IpamScope => (
                "ipam-scope",
                "InvalidIpamScopeId",
                "ipam-scope",
                ResourceType::IpamScope,
            ),
            Kind::IpamPool => (
                "ipam-pool",
                "InvalidIpamPoolId",
                "ipam-pool",
                ResourceType::IpamPool,
            ),
            Kind::Ipam => ("ipam", "InvalidIpamId", "ipam", ResourceType::Ipam),
            Kind::Fleet => ("fleet", "InvalidFleetId", "fleet", ResourceType::Fleet),
            Kind::SubnetCidrReservation => (
                "scr",
                "InvalidSubnetCidrReservationID",
                "subnet CIDR reservation",
                ResourceType::SubnetCidrReservation,
            ),
            Kind::VpnGateway => (
                "vgw",
                "InvalidVpnGatewayID",
                "vpnGateway",
                ResourceType::VpnGateway,
            ),
            Kind::CustomerGateway => (
                "cgw",
                "InvalidCustomerGatewayID",
                "customerGateway",
                ResourceType::CustomerGateway,
            ),
            Kind::VpnConnection => (
                "vpn",
                "InvalidVpnConnectionID",
                "vpnConnection",
                ResourceType::VpnConnection,
            ),
        };
        Row {
            prefix,
            code,
            noun,
            resource_type,
        }
    }

    /// The id prefix, such as `vpc`.
    pub const fn prefix(self) -> &'static str {
        self.row().prefix
    }

    /// The filter that names a record of this kind by its own id, such as `vpc-id`.
    pub const fn id_filter(self) -> &'static str {
        match self {
            Kind::Vpc => "vpc-id",
            Kind::Subnet => "subnet-id",
            Kind::InternetGateway => "internet-gateway-id",
            Kind::EgressOnlyInternetGateway => "egress-only-internet-gateway-id",
            Kind::DhcpOptions => "dhcp-options-id",
            Kind::ElasticIp => "allocation-id",
            Kind::NatGateway => "nat-gateway-id",
            Kind::RouteTable => "route-table-id",
            Kind::NetworkAcl => "network-acl-id",
            Kind::SecurityGroup => "group-id",
            Kind::SecurityGroupRule => "security-group-rule-id",
            Kind::NetworkInterface => "network-interface-id",
            Kind::Instance => "instance-id",
            Kind::Volume => "volume-id",
            Kind::Snapshot => "snapshot-id",
            Kind::Image => "image-id",
            Kind::KeyPair => "key-pair-id",
            Kind::VpcEndpoint => "vpc-endpoint-id",
            Kind::LaunchTemplate => "launch-template-id",
            Kind::PlacementGroup => "group-id",
            Kind::SpotInstanceRequest => "spot-instance-request-id",
            Kind::VpcPeeringConnection => "vpc-peering-connection-id",
            Kind::DedicatedHost => "host-id",
            Kind::CapacityReservation => "capacity-reservation-id",
            Kind::PrefixList => "prefix-list-id",
            // DescribePublicIpv4Pools documents no filter by id.
            Kind::PublicIpv4Pool => "pool-id",
            // DescribeIpv6Pools documents no filter by id.
            Kind::Ipv6Pool => "pool-id",
            Kind::FlowLog => "flow-log-id",
            Kind::CarrierGateway => "carrier-gateway-id",
            Kind::InstanceConnectEndpoint => "instance-connect-endpoint-id",
            Kind::IpamScope => "ipam-scope-id",
            Kind::IpamPool => "ipam-pool-id",
            Kind::Ipam => "ipam-id",
            // DescribeFleets documents no filter by id.
            Kind::Fleet => "fleet-id",
            // GetSubnetCidrReservations documents no filter by id.
            Kind::SubnetCidrReservation => "subnet-cidr-reservation-id",
            Kind::VpnGateway => "vpn-gateway-id",
            Kind::CustomerGateway => "customer-gateway-id",
            Kind::VpnConnection => "vpn-connection-id",
        }
    }

    /// The error code stem, such as `InvalidVpcID`.
    pub const fn code(self) -> &'static str {
        self.row().code
    }

    /// The noun in messages, such as `vpc`.
    pub const fn noun(self) -> &'static str {
        self.row().noun
    }

    /// The resource type in tags (`DescribeTags`, `TagSpecifications`).
    pub const fn resource_type(self) -> ResourceType {
        self.row().resource_type
    }

    /// The kind an id names, from its prefix.
    pub fn of_id(id: &str) -> Option<Kind> {
        let prefix = id.split('-').next()?;
        Kind::ALL.into_iter().find(|k| {
            k.prefix() == prefix
                // A prefix of two words (`ipv4pool-ec2`).
                || (k.prefix().contains('-')
                    && id
                        .strip_prefix(k.prefix())
                        .is_some_and(|rest| rest.starts_with('-')))
        })
    }

    /// `<code>.NotFound` naming `ids`.
    pub fn not_found(self, ids: &[&str]) -> ApiError {
        let message = match ids {
            [one] => format!("The {} ID '{one}' does not exist", self.noun()),
            _ => format!("The {} IDs '{}' do not exist", self.noun(), ids.join(", ")),
        };
        ApiError::new(format!("{}.NotFound", self.code()), message)
    }

    /// `<code>.Malformed` for `id`.
    /// (EBS's kinds name the id there: `InvalidVolumeID.Malformed` beside
    /// `InvalidVolume.NotFound`, `InvalidSnapshotID.Malformed` beside
    /// `InvalidSnapshot.NotFound`; `InvalidVpcPeeringConnectionId.Malformed` beside
    /// `InvalidVpcPeeringConnectionID.NotFound`, `InvalidPrefixListId.Malformed` beside
    /// `InvalidPrefixListID.NotFound`, `InvalidCustomerGatewayId.Malformed` beside
    /// `InvalidCustomerGatewayID.NotFound`.)
    pub fn malformed(self, id: &str) -> ApiError {
        let stem = match self {
            Kind::Volume => "InvalidVolumeID",
            Kind::Snapshot => "InvalidSnapshotID",
            Kind::VpcPeeringConnection => "InvalidVpcPeeringConnectionId",
            Kind::PrefixList => "InvalidPrefixListId",
            Kind::CustomerGateway => "InvalidCustomerGatewayId",
            other => other.code(),
        };
        ApiError::new(
            format!("{stem}.Malformed"),
            format!("Invalid id: \"{id}\" (expecting \"{}-...\")", self.prefix()),
        )
    }

    /// Fails with `<code>.Malformed` unless `id` is shaped like this kind's ids.
    pub fn check_shape(self, id: &str) -> Result<(), ApiError> {
        if ids::is_well_formed(id, self.prefix()) {
            Ok(())
        } else {
            Err(self.malformed(id))
        }
    }

    /// The record `id` of `map`, or the right Malformed / NotFound error.
    pub fn get<'a, T>(self, map: &'a BTreeMap<String, T>, id: &str) -> Result<&'a T, ApiError> {
        self.check_shape(id)?;
        map.get(id).ok_or_else(|| self.not_found(&[id]))
    }

    /// The record `id` of `map` for writing, or the right Malformed / NotFound error.
    pub fn get_mut<'a, T>(
        self,
        map: &'a mut BTreeMap<String, T>,
        id: &str,
    ) -> Result<&'a mut T, ApiError> {
        self.check_shape(id)?;
        map.get_mut(id).ok_or_else(|| self.not_found(&[id]))
    }

    /// The records named by `ids`, in id order, failing on any malformed or missing id;
    /// `None` or an empty list selects every record.
    pub fn select<'a, T>(
        self,
        map: &'a BTreeMap<String, T>,
        ids: Option<&[String]>,
    ) -> Result<Vec<&'a T>, ApiError> {
        let Some(ids) = ids.filter(|i| !i.is_empty()) else {
            return Ok(map.values().collect());
        };
        if let Some(bad) = ids.iter().find(|i| !ids::is_well_formed(i, self.prefix())) {
            return Err(self.malformed(bad));
        }
        let missing: Vec<&str> = ids
            .iter()
            .filter(|i| !map.contains_key(i.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(self.not_found(&missing));
        }
        let wanted: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
        Ok(wanted.into_iter().filter_map(|id| map.get(id)).collect())
    }

    /// The records a Describe call answers: those named by `ids` (each must exist), else the
    /// `candidates` an index gave, else all, with what eventual consistency still lists after
    /// its delete (`seen`'s ghosts); then those `keep` accepts and eventual consistency does
    /// not hide yet, in id order.
    pub fn describe<'a, T: 'static>(
        self,
        seen: &'a Consistency,
        map: &'a BTreeMap<String, T>,
        ids: Option<&[String]>,
        candidates: Option<BTreeSet<&str>>,
        keep: impl Fn(&T) -> bool,
    ) -> Result<Vec<&'a T>, ApiError> {
        if ids.is_some_and(|i| !i.is_empty()) {
            return Ok(self
                .select(map, ids)?
                .into_iter()
                .filter(|t| keep(t))
                .collect());
        }
        if seen.has_ghosts() {
            // Every ghost goes through `keep`, which applies every filter: the indexes that
            // gave the candidates no longer know it.
            let mut all: BTreeMap<&String, &T> = match &candidates {
                Some(c) => c.iter().filter_map(|id| map.get_key_value(*id)).collect(),
                None => map.iter().collect(),
            };
            all.extend(seen.ghosts::<T>());
            return Ok(all
                .into_iter()
                .filter(|(id, _)| !seen.hides(id))
                .map(|(_, t)| t)
                .filter(|t| keep(t))
                .collect());
        }
        Ok(match candidates {
            Some(c) => c
                .iter()
                .filter(|id| !seen.hides(id))
                .filter_map(|id| map.get(*id))
                .filter(|t| keep(t))
                .collect(),
            None => map
                .iter()
                .filter(|(id, _)| !seen.hides(id))
                .map(|(_, t)| t)
                .filter(|t| keep(t))
                .collect(),
        })
    }
}
