//! One region's state: every resource map of EC2 and classic ELB, behind one lock per
//! region (`crate::server::Fake` holds the locks). Resource modules own their maps: each
//! writes only its own and reads the others through them.

use crate::ec2::Kind;
use crate::ec2::error::Code;
use std::collections::{BTreeMap, BTreeSet};

use crate::Config;
use crate::ec2::filter::{Filters, Served};
use crate::ec2::{
    address_attribute, availability_zone, egress_only_gateway, elastic_ip, image, image_attribute,
    instance, internet_gateway, key_pair, launch_template, nat_gateway, network_acl,
    network_interface, placement_group, route_table, security_group, snapshot, spot_request,
    subnet, tags, volume, vpc, vpc_endpoint, vpc_peering,
};
use crate::elb::load_balancer;
use crate::ids::IdGen;
use crate::protocol::error::ApiError;
use crate::sim::clock::Clock;
use crate::sim::consistency::Consistency;
use crate::sim::idempotency::Ledger;
use crate::sim::throttle::Throttle;
use crate::sim::transitions::{Subject, Transitions};

/// Declares a resource module's table: its records by id (or name), which every module reads
/// (the table derefs to its map) and only the declaring module writes, through the private
/// field; the compiler keeps every other module's hands off.
macro_rules! table {
    ($(#[$m:meta])* $name:ident of $record:ty) => {
        $(#[$m])*
        #[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(std::collections::BTreeMap<String, $record>);

        impl std::ops::Deref for $name {
            type Target = std::collections::BTreeMap<String, $record>;

            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }
    };
}
pub(crate) use table;

/// The state of one region of the fake account. What is serialized is what the state file
/// keeps (`crate::state`); the skipped fields come from the configuration (`restored`).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    /// The region's name, such as `us-east-1`.
    pub(crate) name: String,
    /// The account that owns every resource.
    pub(crate) account_id: String,
    /// The id generator.
    pub(crate) ids: IdGen,
    /// The clock.
    pub clock: Clock,
    /// Scheduled state transitions.
    pub transitions: Transitions,
    /// Request throttling (off unless enabled).
    #[serde(skip)]
    pub throttle: Throttle,
    /// Eventual consistency (no lag unless windows are set).
    pub consistency: Consistency,
    /// ClientTokens seen.
    pub(crate) ledger: Ledger,
    /// Limits.
    #[serde(skip)]
    pub(crate) limits: Limits,
    /// The region's availability zones.
    #[serde(skip)]
    pub(crate) zones: Vec<availability_zone::Zone>,
    /// The region's Local Zones and Wavelength Zones.
    #[serde(skip)]
    pub(crate) edge_zones: Vec<availability_zone::Zone>,
    /// The Local Zone and Wavelength Zone groups the account opted in to.
    #[serde(default)]
    pub(crate) opted_in_groups: availability_zone::OptedIn,
    /// The last answers of the operations whose answers are kept, and the generation of
    /// the region's records they were made at.
    #[serde(skip)]
    pub(crate) answers: crate::answers::Answers,
    /// The regions the fake serves beside AWS's own (`Config::extra_regions`), which
    /// DescribeRegions lists with the commercial partition's.
    #[serde(skip)]
    pub(crate) extra_regions: Vec<String>,
    /// The DHCP options set new VPCs are associated with.
    pub(crate) default_dhcp_options_id: String,
    /// DHCP options sets by id, the default one included.
    #[serde(default)]
    pub(crate) dhcp_options: crate::ec2::dhcp_options::DhcpOptionsSets,
    /// VPCs by id.
    pub(crate) vpcs: vpc::Vpcs,
    /// Subnets by id.
    pub(crate) subnets: subnet::Subnets,
    /// Internet gateways by id.
    pub(crate) internet_gateways: internet_gateway::InternetGateways,
    /// Egress-only internet gateways by id.
    #[serde(default)]
    pub(crate) egress_only_gateways: egress_only_gateway::EgressOnlyGateways,
    /// Elastic IPs by allocation id.
    pub(crate) addresses: elastic_ip::Addresses,
    /// The public IPv4 pool of Elastic IPs and instance public addresses.
    pub(crate) public_ips: elastic_ip::Pool,
    /// The account's own public IPv4 ranges (BYOIP), a pool each.
    #[serde(default)]
    pub(crate) public_ipv4_pools: crate::ec2::public_ipv4_pool::Pools,
    /// The account's own IPv6 ranges (BYOIP), a pool each.
    #[serde(default)]
    pub(crate) ipv6_pools: crate::ec2::ipv6_pool::Pools,
    /// NAT gateways by id.
    pub(crate) nat_gateways: nat_gateway::NatGateways,
    /// Route tables by id.
    pub(crate) route_tables: route_table::RouteTables,
    /// Network ACLs by id.
    #[serde(default)]
    pub(crate) network_acls: network_acl::NetworkAcls,
    /// Security groups by id.
    pub(crate) security_groups: security_group::SecurityGroups,
    /// Network interfaces by id.
    pub(crate) network_interfaces: network_interface::NetworkInterfaces,
    /// Instances by id.
    pub(crate) instances: instance::Instances,
    /// Volumes by id.
    pub(crate) volumes: volume::Volumes,
    /// The account's EBS snapshots.
    #[serde(default)]
    pub(crate) snapshots: snapshot::Snapshots,
    #[serde(default)]
    pub(crate) vpc_endpoints: vpc_endpoint::VpcEndpoints,
    #[serde(default)]
    pub(crate) launch_templates: launch_template::LaunchTemplates,
    #[serde(default)]
    pub(crate) placement_groups: placement_group::PlacementGroups,
    #[serde(default)]
    pub(crate) spot_requests: spot_request::SpotRequests,
    /// VPC peering connections by id.
    #[serde(default)]
    pub(crate) vpc_peerings: vpc_peering::VpcPeerings,
    /// Dedicated Hosts by id.
    #[serde(default)]
    pub(crate) dedicated_hosts: crate::ec2::dedicated_host::DedicatedHosts,
    /// Capacity Reservations by id.
    #[serde(default)]
    pub(crate) capacity_reservations: crate::ec2::capacity_reservation::CapacityReservations,
    /// Carrier gateways by id.
    #[serde(default)]
    pub(crate) carrier_gateways: crate::ec2::carrier_gateway::CarrierGateways,
    /// EC2 Instance Connect Endpoints by id.
    #[serde(default)]
    pub(crate) instance_connect_endpoints:
        crate::ec2::instance_connect_endpoint::InstanceConnectEndpoints,
    /// IPAMs.
    #[serde(default)]
    pub(crate) ipams: crate::ec2::ipam::Ipams,
    /// EC2 Fleets.
    #[serde(default)]
    pub(crate) fleets: crate::ec2::fleet::Fleets,
    /// Virtual private gateways.
    #[serde(default)]
    pub(crate) vpn_gateways: crate::ec2::vpn_gateway::VpnGateways,
    /// Customer gateways.
    #[serde(default)]
    pub(crate) customer_gateways: crate::ec2::customer_gateway::CustomerGateways,
    /// Site-to-Site VPN connections.
    #[serde(default)]
    pub(crate) vpn_connections: crate::ec2::vpn_connection::VpnConnections,
    /// IPAM scopes.
    #[serde(default)]
    pub(crate) ipam_scopes: crate::ec2::ipam::IpamScopes,
    /// IPAM pools, with their CIDRs and allocations.
    #[serde(default)]
    pub(crate) ipam_pools: crate::ec2::ipam::IpamPools,
    /// VPC flow logs by id.
    #[serde(default)]
    pub(crate) flow_logs: crate::ec2::flow_log::FlowLogs,
    /// Customer-managed prefix lists by id.
    #[serde(default)]
    pub(crate) prefix_lists: crate::ec2::managed_prefix_list::PrefixLists,
    /// Images by id.
    pub(crate) images: image::Images,
    /// The source of the CopyImage or CopySnapshot being served, read from another region
    /// before this one was locked (`crate::ec2::copy`).
    #[serde(skip)]
    pub(crate) copied: Option<crate::ec2::copy::Source>,
    /// The account's block public access for AMIs.
    #[serde(default)]
    pub(crate) image_sharing: image_attribute::Sharing,
    /// Whether EBS encryption by default is on for the account here.
    #[serde(default)]
    pub(crate) ebs_encryption_by_default: bool,
    /// The key ModifyEbsDefaultKmsKeyId made the default for EBS encryption here, by ARN
    /// (none: the account's AWS managed key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ebs_default_kms_key: Option<String>,
    /// The account's default CPU credit option per burstable instance family.
    #[serde(default)]
    pub(crate) credit_defaults: crate::ec2::instance::CreditDefaults,
    /// The account's instance metadata (IMDS) defaults.
    #[serde(default)]
    pub(crate) imds_defaults: crate::ec2::instance::MetadataDefaults,
    /// Key pairs by name.
    pub(crate) key_pairs: key_pair::KeyPairs,
    /// EC2 tags of every resource.
    pub(crate) tags: tags::TagStore,
    /// Ids of VPC-scoped resources by VPC id.
    pub(crate) by_vpc: Index,
    /// Ids of subnet-scoped resources by subnet id.
    pub(crate) by_subnet: Index,
    /// Classic load balancers by name.
    pub(crate) load_balancers: load_balancer::LoadBalancers,
}

/// A secondary index: key -> ids.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Index(BTreeMap<String, BTreeSet<String>>);

impl Index {
    /// Adds `id` under `key`.
    pub fn insert(&mut self, key: &str, id: &str) {
        self.0
            .entry(key.to_string())
            .or_default()
            .insert(id.to_string());
    }

    /// Removes `id` from under `key`.
    pub fn remove(&mut self, key: &str, id: &str) {
        if let Some(ids) = self.0.get_mut(key) {
            ids.remove(id);
            if ids.is_empty() {
                self.0.remove(key);
            }
        }
    }

    /// The ids under `key`, borrowed.
    pub fn set(&self, key: &str) -> Option<&BTreeSet<String>> {
        self.0.get(key)
    }

    /// The ids under `key`.
    pub fn get(&self, key: &str) -> BTreeSet<String> {
        self.0.get(key).cloned().unwrap_or_default()
    }

    /// The ids under `key` with the id prefix `prefix`.
    pub fn of_kind<'a>(
        &'a self,
        key: &str,
        prefix: &'a str,
    ) -> impl Iterator<Item = &'a String> + 'a {
        self.0
            .get(key)
            .into_iter()
            .flat_map(move |ids| ids_of_kind(ids, prefix))
    }
}

/// The ids of `ids` with the id prefix `prefix` (`rtb` for `rtb-...`): one range of the set,
/// since ids sort by their prefix, so a set holding every kind is not walked whole.
pub fn ids_of_kind<'a, 'p>(
    ids: &'a BTreeSet<String>,
    prefix: &'p str,
) -> impl Iterator<Item = &'a String> + 'p
where
    'a: 'p,
{
    // Ids sorting after `prefix` but before `prefix-` (none the fake makes) come first; the
    // kind's own end at the first id past them.
    ids.range::<str, _>((
        std::ops::Bound::Included(prefix),
        std::ops::Bound::Unbounded,
    ))
    .skip_while(move |id| {
        id.strip_prefix(prefix)
            .is_some_and(|rest| rest.bytes().next().is_none_or(|b| b < b'-'))
    })
    .take_while(move |id| is_of_kind(id, prefix))
}

/// Whether `id` has the id prefix `prefix` (`rtb-...`, not `rtbassoc-...`).
pub fn is_of_kind(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('-'))
}

/// Per-region quotas, AWS's defaults unless configured.
#[derive(Debug, Clone)]
pub struct Limits {
    /// VPCs per region (AWS: 5).
    pub vpcs: usize,
    /// Subnets per VPC (AWS: 200).
    pub subnets_per_vpc: usize,
    /// IPv4 CIDR blocks per VPC, the primary one included (AWS: 5).
    pub cidr_blocks_per_vpc: usize,
    /// IPv6 CIDR blocks per VPC (AWS: 5).
    pub ipv6_cidr_blocks_per_vpc: usize,
    /// Internet gateways per region (AWS: 5).
    pub internet_gateways: usize,
    /// Virtual private gateways per region (AWS: 5).
    pub vpn_gateways: usize,
    /// Customer gateways per region (AWS: 50).
    pub customer_gateways: usize,
    /// Site-to-Site VPN connections per region (AWS: 50).
    pub vpn_connections: usize,

    /// Elastic IPs per region (AWS: 5).
    pub elastic_ips: usize,
    /// NAT gateways per zone (AWS: 5).
    pub nat_gateways_per_zone: usize,
    /// Elastic IPs per public NAT gateway, its primary one included (AWS: 2, raisable to 8).
    pub eips_per_nat_gateway: usize,
    /// Security groups per VPC (AWS: 2500).
    pub security_groups_per_vpc: usize,
    /// Rules per direction of a security group (AWS: 60).
    pub rules_per_group: usize,
    /// Route tables per VPC (AWS: 200).
    pub route_tables_per_vpc: usize,
    /// Routes per route table, of each family (AWS: 50; a prefix list counts as its
    /// `MaxEntries`).
    pub routes_per_route_table: usize,
    /// Network ACLs per VPC, its default one included (AWS: 200).
    pub network_acls_per_vpc: usize,
    /// Numbered rules per network ACL, in each direction (AWS: 20).
    pub rules_per_network_acl: usize,
    /// Instances not terminated, per region.
    pub instances: usize,
    /// Classic load balancers per region (AWS: 20).
    pub load_balancers: usize,
    /// Gateway VPC endpoints per region.
    pub gateway_endpoints: usize,
    /// Interface VPC endpoints per VPC.
    pub interface_endpoints_per_vpc: usize,
    /// Launch templates per region.
    pub launch_templates: usize,
    /// Placement groups per region.
    pub placement_groups: usize,
    /// Network interfaces per region (CreateNetworkInterface counts every interface of the
    /// region, those launches and other services make included).
    pub network_interfaces: usize,
    /// Active VPC peering connections per VPC (AWS: 50).
    pub active_peerings_per_vpc: usize,
    /// Outstanding VPC peering connection requests per VPC (AWS: 25).
    pub outstanding_peerings_per_vpc: usize,
    /// Dedicated Hosts allocated of each instance family (AWS: "Running Dedicated <family>
    /// Hosts", 2 for the catalogue's families).
    pub dedicated_hosts_per_family: usize,
    /// Flow logs per VPC, subnet or network interface (AWS: 2).
    pub flow_logs_per_resource: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            vpcs: 5,
            subnets_per_vpc: 200,
            cidr_blocks_per_vpc: 5,
            ipv6_cidr_blocks_per_vpc: 5,
            internet_gateways: 5,
            vpn_gateways: 5,
            customer_gateways: 50,
            vpn_connections: 50,
            elastic_ips: 5,
            nat_gateways_per_zone: 5,
            eips_per_nat_gateway: 2,
            security_groups_per_vpc: 2500,
            rules_per_group: 60,
            route_tables_per_vpc: 200,
            routes_per_route_table: 50,
            network_acls_per_vpc: 200,
            rules_per_network_acl: 20,
            instances: 256,
            load_balancers: 20,
            gateway_endpoints: 20,
            interface_endpoints_per_vpc: 50,
            launch_templates: 5000,
            placement_groups: 500,
            network_interfaces: 5000,
            active_peerings_per_vpc: 50,
            outstanding_peerings_per_vpc: 25,
            dedicated_hosts_per_family: 2,
            flow_logs_per_resource: 2,
        }
    }
}

impl Limits {
    /// The quotas by the names `--quota NAME=N` takes, with AWS's Service Quotas name of each.
    pub const NAMES: &'static [(&'static str, &'static str)] = &[
        ("vpcs", "VPCs per Region"),
        ("subnets-per-vpc", "Subnets per VPC"),
        ("cidr-blocks-per-vpc", "IPv4 CIDR blocks per VPC"),
        ("ipv6-cidr-blocks-per-vpc", "IPv6 CIDR blocks per VPC"),
        ("internet-gateways", "Internet gateways per Region"),
        ("vpn-gateways", "Virtual private gateways per Region"),
        ("customer-gateways", "Customer gateways per Region"),
        ("vpn-connections", "Site-to-Site VPN connections per Region"),
        ("elastic-ips", "EC2-VPC Elastic IPs"),
        (
            "nat-gateways-per-zone",
            "NAT gateways per Availability Zone",
        ),
        (
            "eips-per-nat-gateway",
            "Elastic IP addresses per public NAT gateway",
        ),
        ("security-groups-per-vpc", "VPC security groups per Region"),
        (
            "rules-per-group",
            "Inbound or outbound rules per security group",
        ),
        ("route-tables-per-vpc", "Route tables per VPC"),
        (
            "routes-per-route-table",
            "Routes per route table (non-propagated routes)",
        ),
        ("network-acls-per-vpc", "Network ACLs per VPC"),
        ("rules-per-network-acl", "Rules per network ACL"),
        (
            "instances",
            "Running On-Demand instances (counted as instances here)",
        ),
        ("load-balancers", "Classic Load Balancers per Region"),
        ("gateway-endpoints", "Gateway VPC endpoints per Region"),
        (
            "interface-endpoints-per-vpc",
            "Interface and Gateway Load Balancer endpoints per VPC",
        ),
        ("launch-templates", "Launch templates per Region"),
        ("placement-groups", "Placement groups per Region"),
        ("network-interfaces", "Network interfaces per Region"),
        (
            "active-peerings-per-vpc",
            "Active VPC peering connections per VPC",
        ),
        (
            "outstanding-peerings-per-vpc",
            "Outstanding VPC peering connection requests",
        ),
        (
            "dedicated-hosts-per-family",
            "Running Dedicated <family> Hosts (each family)",
        ),
        (
            "flow-logs-per-resource",
            "Flow logs per single network interface, subnet, or VPC",
        ),
    ];

    /// Raises (or lowers) the quota `name` (one of [`NAMES`](Self::NAMES)) to `n`.
    pub fn set(&mut self, name: &str, n: usize) -> Result<(), String> {
        let slot = match name {
            "vpcs" => &mut self.vpcs,
            "subnets-per-vpc" => &mut self.subnets_per_vpc,
            "cidr-blocks-per-vpc" => &mut self.cidr_blocks_per_vpc,
            "ipv6-cidr-blocks-per-vpc" => &mut self.ipv6_cidr_blocks_per_vpc,
            "internet-gateways" => &mut self.internet_gateways,
            "vpn-gateways" => &mut self.vpn_gateways,
            "customer-gateways" => &mut self.customer_gateways,
            "vpn-connections" => &mut self.vpn_connections,
            "elastic-ips" => &mut self.elastic_ips,
            "nat-gateways-per-zone" => &mut self.nat_gateways_per_zone,
            "eips-per-nat-gateway" => &mut self.eips_per_nat_gateway,
            "security-groups-per-vpc" => &mut self.security_groups_per_vpc,
            "rules-per-group" => &mut self.rules_per_group,
            "route-tables-per-vpc" => &mut self.route_tables_per_vpc,
            "routes-per-route-table" => &mut self.routes_per_route_table,
            "network-acls-per-vpc" => &mut self.network_acls_per_vpc,
            "rules-per-network-acl" => &mut self.rules_per_network_acl,
            "instances" => &mut self.instances,
            "load-balancers" => &mut self.load_balancers,
            "gateway-endpoints" => &mut self.gateway_endpoints,
            "interface-endpoints-per-vpc" => &mut self.interface_endpoints_per_vpc,
            "launch-templates" => &mut self.launch_templates,
            "placement-groups" => &mut self.placement_groups,
            "network-interfaces" => &mut self.network_interfaces,
            "active-peerings-per-vpc" => &mut self.active_peerings_per_vpc,
            "outstanding-peerings-per-vpc" => &mut self.outstanding_peerings_per_vpc,
            "dedicated-hosts-per-family" => &mut self.dedicated_hosts_per_family,
            "flow-logs-per-resource" => &mut self.flow_logs_per_resource,
            other => {
                let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "no quota named {other:?}; the quotas are {}",
                    names.join(", ")
                ));
            }
        };
        *slot = n;
        Ok(())
    }
}

impl Region {
    /// A fresh region as AWS hands it out: zones, public images, and the default VPC unless
    /// switched off.
    pub fn new(name: &str, config: &Config) -> Self {
        let mut ids = IdGen::new(config.seed, name);
        let default_dhcp_options_id = ids.resource("dopt");
        let mut region = Region {
            name: name.to_string(),
            account_id: config.account_id.clone(),
            zones: availability_zone::zones_of(name),
            edge_zones: availability_zone::edge_zones_of(name),
            opted_in_groups: Default::default(),
            extra_regions: Vec::new(),
            answers: Default::default(),
            ids,
            clock: config.clock.clone(),
            transitions: Transitions::default(),
            throttle: Throttle::default(),
            consistency: Consistency::default(),
            ledger: Ledger::default(),
            limits: Limits::default(),
            default_dhcp_options_id,
            dhcp_options: Default::default(),
            vpcs: Default::default(),
            subnets: Default::default(),
            internet_gateways: Default::default(),
            egress_only_gateways: Default::default(),
            addresses: Default::default(),
            public_ips: elastic_ip::Pool::default(),
            public_ipv4_pools: Default::default(),
            ipv6_pools: Default::default(),
            nat_gateways: Default::default(),
            route_tables: Default::default(),
            network_acls: Default::default(),
            security_groups: Default::default(),
            network_interfaces: Default::default(),
            instances: Default::default(),
            volumes: Default::default(),
            snapshots: Default::default(),
            vpc_endpoints: Default::default(),
            launch_templates: Default::default(),
            placement_groups: Default::default(),
            spot_requests: Default::default(),
            vpc_peerings: Default::default(),
            dedicated_hosts: Default::default(),
            capacity_reservations: Default::default(),
            prefix_lists: Default::default(),
            flow_logs: Default::default(),
            carrier_gateways: Default::default(),
            instance_connect_endpoints: Default::default(),
            ipams: Default::default(),
            fleets: Default::default(),
            vpn_gateways: Default::default(),
            customer_gateways: Default::default(),
            vpn_connections: Default::default(),
            ipam_scopes: Default::default(),
            ipam_pools: Default::default(),
            images: Default::default(),
            image_sharing: Default::default(),
            credit_defaults: Default::default(),
            imds_defaults: Default::default(),
            ebs_encryption_by_default: false,
            ebs_default_kms_key: None,
            copied: None,
            key_pairs: Default::default(),
            tags: tags::TagStore::default(),
            by_vpc: Index::default(),
            by_subnet: Index::default(),
            load_balancers: Default::default(),
        };
        region.configure(config);
        crate::ec2::dhcp_options::ensure_default(&mut region);
        image::seed_catalogue(&mut region);
        // `Config::check` refuses bad ranges before a server starts; a fake made without it
        // serves the region without them.
        if let Err(e) = crate::ec2::public_ipv4_pool::seed(&mut region, config) {
            tracing::error!(region = %name, "BYOIP ranges not brought: {e}");
        }
        if config.default_vpc {
            vpc::create_default(&mut region);
        }
        region
    }

    /// A region read back from a state file (`crate::state`), given what the file does not
    /// keep: its zones, the quotas and the bad day of `config`.
    pub fn restored(mut self, config: &Config) -> Self {
        self.zones = availability_zone::zones_of(&self.name);
        self.edge_zones = availability_zone::edge_zones_of(&self.name);
        self.configure(config);
        crate::ec2::dhcp_options::ensure_default(&mut self);
        self
    }

    /// Applies what `config` says of every region: quotas, the regions served beside AWS's,
    /// consistency windows, transition delays and throttling.
    fn configure(&mut self, config: &Config) {
        self.limits = config.limits.clone();
        self.extra_regions = config.extra_regions.clone();
        self.consistency.set_windows(config.consistency.clone());
        for (subject, delay) in &config.delays {
            self.transitions.set_delay(*subject, *delay);
        }
        if let Some(scale) = config.throttling {
            self.throttle.enable(scale);
        }
    }

    /// Applies every state transition that is due; called before each request.
    pub fn tick(&mut self) {
        if self.transitions.pending() == 0 {
            return;
        }
        let now = self.clock.now();
        // A step may schedule another that is due at once (`stopping` then `stopped` is not
        // one of them, but a purge with no delay is): loop until nothing is due.
        for _ in 0..8 {
            let due = self.transitions.take_due(now);
            if due.is_empty() {
                return;
            }
            self.answers.changed();
            for (subject, id) in due {
                match subject {
                    Subject::Instance => instance::advance(self, &id),
                    Subject::InstancePurge => instance::purge(self, &id),
                    Subject::NatGateway => nat_gateway::advance(self, &id),
                    Subject::NatGatewayPurge => nat_gateway::purge(self, &id),
                    Subject::LoadBalancerRegistration => load_balancer::advance(self, &id),
                    Subject::VpcEndpoint => vpc_endpoint::advance(self, &id),
                    Subject::NetworkInterface => {
                        network_interface::lifecycle::advance(self, &id);
                    }
                    Subject::LoadBalancerInterface => network_interface::delete(self, &id),
                    Subject::Snapshot => snapshot::advance(self, &id),
                    Subject::VolumeModification => volume::advance_modification(self, &id),
                    Subject::Image => image::advance(self, &id),
                    Subject::ImageBlockPublicAccess => image_attribute::advance(self, &id),
                    Subject::AddressPtr => address_attribute::advance(self, &id),
                    Subject::VpcPeering => vpc_peering::advance(self, &id),
                    Subject::VpcPeeringExpiry => vpc_peering::expire(self, &id),
                    Subject::VpcPeeringPurge => vpc_peering::purge(self, &id),
                    Subject::SpotInterruption => spot_request::notice_over(self, &id),
                    Subject::CapacityReservationExpiry => {
                        crate::ec2::capacity_reservation::expire(self, &id);
                    }
                    Subject::PrefixList => crate::ec2::managed_prefix_list::advance(self, &id),
                    Subject::Fleet => crate::ec2::fleet::advance(self, &id),
                    Subject::VpnConnection => crate::ec2::vpn_connection::advance(self, &id),
                }
            }
        }
    }

    /// The ids of `kind` that can match `filters`, from the tag, VPC and subnet indexes, and
    /// the kind's own id filter (`nat-gateway-id`).
    pub fn candidates<'a>(&'a self, kind: Kind, filters: &'a Filters) -> Option<BTreeSet<&'a str>> {
        filters.candidates(&self.tags, kind.prefix(), |name, value| {
            if name == kind.id_filter() {
                return Some(Served::ids(vec![value]));
            }
            let index = match name {
                "vpc-id" => &self.by_vpc,
                "subnet-id" => &self.by_subnet,
                _ => return None,
            };
            Some(Served::sets(index.set(value).into_iter().collect()))
        })
    }

    /// Fails with the kind's NotFound code unless `id` names an existing resource; an id of
    /// no known kind, or not shaped as its kind's ids are (`vpc-zz`), is `InvalidID`, as
    /// CreateTags and DeleteTags answer it.
    pub fn check_taggable(&self, id: &str) -> Result<(), ApiError> {
        let Some(kind) = Kind::of_id(id).filter(|k| crate::ids::is_well_formed(id, k.prefix()))
        else {
            return Err(ApiError::new(
                Code::InvalidID,
                format!("The ID '{id}' is not valid"),
            ));
        };
        let exists = match kind {
            Kind::Vpc => self.vpcs.contains_key(id),
            Kind::Subnet => self.subnets.contains_key(id),
            Kind::InternetGateway => self.internet_gateways.contains_key(id),
            Kind::EgressOnlyInternetGateway => self.egress_only_gateways.contains_key(id),
            Kind::DhcpOptions => self.dhcp_options.contains_key(id),
            Kind::ElasticIp => self.addresses.contains_key(id),
            Kind::NatGateway => self.nat_gateways.contains_key(id),
            Kind::RouteTable => self.route_tables.contains_key(id),
            Kind::NetworkAcl => self.network_acls.contains_key(id),
            Kind::SecurityGroup => self.security_groups.contains_key(id),
            Kind::SecurityGroupRule => self
                .security_groups
                .values()
                .any(|g| g.rules().any(|r| r.id == id)),
            Kind::NetworkInterface => self.network_interfaces.contains_key(id),
            Kind::Instance => self.instances.contains_key(id),
            Kind::Volume => self.volumes.contains_key(id),
            Kind::Snapshot => self.snapshots.contains_key(id),
            Kind::Image => self.images.contains_key(id),
            Kind::KeyPair => self.key_pairs.values().any(|k| k.id == id),
            Kind::VpcEndpoint => self.vpc_endpoints.contains_key(id),
            Kind::LaunchTemplate => self.launch_templates.contains_key(id),
            Kind::PlacementGroup => self.placement_groups.contains_key(id),
            Kind::SpotInstanceRequest => self.spot_requests.contains_key(id),
            Kind::VpcPeeringConnection => self.vpc_peerings.contains_key(id),
            Kind::DedicatedHost => self.dedicated_hosts.contains_key(id),
            Kind::CapacityReservation => self.capacity_reservations.contains_key(id),
            Kind::PrefixList => self.prefix_lists.contains_key(id),
            Kind::PublicIpv4Pool => self.public_ipv4_pools.contains_key(id),
            Kind::Ipv6Pool => self.ipv6_pools.contains_key(id),
            Kind::FlowLog => self.flow_logs.contains_key(id),
            Kind::CarrierGateway => self.carrier_gateways.contains_key(id),
            Kind::InstanceConnectEndpoint => self.instance_connect_endpoints.contains_key(id),
            Kind::IpamScope => self.ipam_scopes.contains_key(id),
            Kind::IpamPool => self.ipam_pools.contains_key(id),
            Kind::Ipam => self.ipams.contains_key(id),
            Kind::Fleet => self.fleets.contains_key(id),
            Kind::SubnetCidrReservation => {
                crate::ec2::subnet::reservation_subnet(self, id).is_some()
            }
            Kind::VpnGateway => self.vpn_gateways.contains_key(id),
            Kind::CustomerGateway => self.customer_gateways.contains_key(id),
            Kind::VpnConnection => self.vpn_connections.contains_key(id),
        };
        if exists {
            Ok(())
        } else {
            Err(kind.not_found(&[id]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_its_own_range_even_beside_longer_prefixes() {
        let ids: BTreeSet<String> = [
            "i-0",
            "i-1",
            "igw-2",
            "rtb-3",
            "rtbassoc-4",
            "sg-5",
            "sgr-6",
            "subnet-7",
            "vpc-8",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let of = |prefix: &str| -> Vec<String> { ids_of_kind(&ids, prefix).cloned().collect() };
        assert_eq!(of("i"), ["i-0", "i-1"]);
        assert_eq!(of("igw"), ["igw-2"]);
        assert_eq!(of("rtb"), ["rtb-3"]);
        assert_eq!(of("sg"), ["sg-5"]);
        assert_eq!(of("subnet"), ["subnet-7"]);
        assert!(of("nat").is_empty() && of("s").is_empty() && of("vpc-8").is_empty());
    }
}
