//! One region's state: every resource map of EC2 and classic ELB, behind one lock per
//! region (`crate::server::Fake` holds the locks). Resource modules own their maps: each
//! writes only its own and reads the others through them.

use std::collections::{BTreeMap, BTreeSet};

use crate::Config;
use crate::ec2::filter::Filters;
use crate::ec2::{
    availability_zone, elastic_ip, image, instance, internet_gateway, key_pair, nat_gateway,
    network_interface, route_table, security_group, subnet, tags, volume, vpc,
};
use crate::elb::load_balancer;
use crate::ids::IdGen;
use crate::protocol::error::ApiError;
use crate::sim::clock::Clock;
use crate::sim::idempotency::Ledger;
use crate::sim::transitions::{Subject, Transitions};

/// The state of one region of the fake account.
#[derive(Debug)]
pub struct Region {
    /// The region's name, such as `us-east-1`.
    pub name: String,
    /// The account that owns every resource.
    pub account_id: String,
    /// The id generator.
    pub ids: IdGen,
    /// The clock.
    pub clock: Clock,
    /// Scheduled state transitions.
    pub transitions: Transitions,
    /// ClientTokens seen.
    pub ledger: Ledger,
    /// Limits.
    pub limits: Limits,
    /// The region's availability zones.
    pub zones: Vec<availability_zone::Zone>,
    /// The DHCP options set every VPC is associated with.
    pub default_dhcp_options_id: String,
    /// VPCs by id.
    pub vpcs: BTreeMap<String, vpc::Vpc>,
    /// Subnets by id.
    pub subnets: BTreeMap<String, subnet::Subnet>,
    /// Internet gateways by id.
    pub internet_gateways: BTreeMap<String, internet_gateway::InternetGateway>,
    /// Elastic IPs by allocation id.
    pub addresses: BTreeMap<String, elastic_ip::Address>,
    /// The public IPv4 pool of Elastic IPs and instance public addresses.
    pub public_ips: elastic_ip::Pool,
    /// NAT gateways by id.
    pub nat_gateways: BTreeMap<String, nat_gateway::NatGateway>,
    /// Route tables by id.
    pub route_tables: BTreeMap<String, route_table::RouteTable>,
    /// Security groups by id.
    pub security_groups: BTreeMap<String, security_group::SecurityGroup>,
    /// Network interfaces by id.
    pub network_interfaces: BTreeMap<String, network_interface::NetworkInterface>,
    /// Instances by id.
    pub instances: BTreeMap<String, instance::Instance>,
    /// Volumes by id.
    pub volumes: BTreeMap<String, volume::Volume>,
    /// Images by id.
    pub images: BTreeMap<String, image::Image>,
    /// Key pairs by name.
    pub key_pairs: BTreeMap<String, key_pair::KeyPair>,
    /// EC2 tags of every resource.
    pub tags: tags::TagStore,
    /// Ids of VPC-scoped resources by VPC id.
    pub by_vpc: Index,
    /// Ids of subnet-scoped resources by subnet id.
    pub by_subnet: Index,
    /// Classic load balancers by name.
    pub load_balancers: BTreeMap<String, load_balancer::LoadBalancer>,
}

/// A secondary index: key -> ids.
#[derive(Debug, Default)]
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
            .flatten()
            .filter(move |id| id.split('-').next() == Some(prefix))
    }
}

/// Per-region quotas, AWS's defaults unless configured.
#[derive(Debug, Clone)]
pub struct Limits {
    /// VPCs per region (AWS: 5).
    pub vpcs: usize,
    /// Subnets per VPC (AWS: 200).
    pub subnets_per_vpc: usize,
    /// Internet gateways per region (AWS: 5).
    pub internet_gateways: usize,
    /// Elastic IPs per region (AWS: 5).
    pub elastic_ips: usize,
    /// NAT gateways per zone (AWS: 5).
    pub nat_gateways_per_zone: usize,
    /// Security groups per VPC (AWS: 2500).
    pub security_groups_per_vpc: usize,
    /// Rules per direction of a security group (AWS: 60).
    pub rules_per_group: usize,
    /// Route tables per VPC (AWS: 200).
    pub route_tables_per_vpc: usize,
    /// Instances not terminated, per region.
    pub instances: usize,
    /// Classic load balancers per region (AWS: 20).
    pub load_balancers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            vpcs: 5,
            subnets_per_vpc: 200,
            internet_gateways: 5,
            elastic_ips: 5,
            nat_gateways_per_zone: 5,
            security_groups_per_vpc: 2500,
            rules_per_group: 60,
            route_tables_per_vpc: 200,
            instances: 256,
            load_balancers: 20,
        }
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
            ids,
            clock: config.clock.clone(),
            transitions: Transitions::default(),
            ledger: Ledger::default(),
            limits: config.limits.clone(),
            default_dhcp_options_id,
            vpcs: BTreeMap::new(),
            subnets: BTreeMap::new(),
            internet_gateways: BTreeMap::new(),
            addresses: BTreeMap::new(),
            public_ips: elastic_ip::Pool::default(),
            nat_gateways: BTreeMap::new(),
            route_tables: BTreeMap::new(),
            security_groups: BTreeMap::new(),
            network_interfaces: BTreeMap::new(),
            instances: BTreeMap::new(),
            volumes: BTreeMap::new(),
            images: BTreeMap::new(),
            key_pairs: BTreeMap::new(),
            tags: tags::TagStore::default(),
            by_vpc: Index::default(),
            by_subnet: Index::default(),
            load_balancers: BTreeMap::new(),
        };
        image::seed_catalogue(&mut region);
        if config.default_vpc {
            vpc::create_default(&mut region);
        }
        region
    }

    /// Applies every state transition that is due; called before each request.
    pub fn tick(&mut self) {
        let now = self.clock.now();
        // A step may schedule another that is due at once (`stopping` then `stopped` is not
        // one of them, but a purge with no delay is): loop until nothing is due.
        for _ in 0..8 {
            let due = self.transitions.take_due(now);
            if due.is_empty() {
                return;
            }
            for (subject, id) in due {
                match subject {
                    Subject::Instance => instance::advance(self, &id),
                    Subject::InstancePurge => instance::purge(self, &id),
                    Subject::NatGateway => nat_gateway::advance(self, &id),
                    Subject::NatGatewayPurge => nat_gateway::purge(self, &id),
                    Subject::LoadBalancerRegistration => load_balancer::advance(self, &id),
                }
            }
        }
    }

    /// The ids that can match `filters`, from the tag, VPC and subnet indexes.
    pub fn candidates(&self, filters: &Filters) -> Option<BTreeSet<String>> {
        filters.candidates(&self.tags, |name, value| {
            let mut ids = match name {
                "vpc-id" => self.by_vpc.get(value),
                "subnet-id" => self.by_subnet.get(value),
                _ => return None,
            };
            // The VPC or subnet itself matches its own id.
            ids.insert(value.to_string());
            Some(ids)
        })
    }

    /// Fails with the type's NotFound code unless `id` names an existing taggable resource.
    pub fn check_taggable(&self, id: &str) -> Result<(), ApiError> {
        let prefix = id.split('-').next().unwrap_or_default();
        let (exists, kind) = match prefix {
            "vpc" => (self.vpcs.contains_key(id), vpc::KIND),
            "subnet" => (self.subnets.contains_key(id), subnet::KIND),
            "igw" => (
                self.internet_gateways.contains_key(id),
                internet_gateway::KIND,
            ),
            "eipalloc" => (self.addresses.contains_key(id), elastic_ip::KIND),
            "nat" => (self.nat_gateways.contains_key(id), nat_gateway::KIND),
            "rtb" => (self.route_tables.contains_key(id), route_table::KIND),
            "sg" => (self.security_groups.contains_key(id), security_group::KIND),
            "sgr" => (
                self.security_groups
                    .values()
                    .any(|g| g.rules().any(|r| r.id == id)),
                security_group::RULE_KIND,
            ),
            "eni" => (
                self.network_interfaces.contains_key(id),
                network_interface::KIND,
            ),
            "i" => (self.instances.contains_key(id), instance::KIND),
            "vol" => (self.volumes.contains_key(id), volume::KIND),
            "ami" => (self.images.contains_key(id), image::KIND),
            "key" => (
                self.key_pairs.values().any(|k| k.id == id),
                key_pair::ID_KIND,
            ),
            "dopt" => (
                id == self.default_dhcp_options_id,
                crate::ec2::Kind {
                    prefix: "dopt",
                    code: "InvalidDhcpOptionID",
                    noun: "dhcpOption",
                },
            ),
            _ => {
                return Err(ApiError::new(
                    "InvalidID",
                    format!("The ID '{id}' is not valid"),
                ));
            }
        };
        if exists {
            Ok(())
        } else {
            Err(kind.not_found(&[id]))
        }
    }
}
