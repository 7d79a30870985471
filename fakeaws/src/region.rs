//! One region's state: every resource map of EC2 and classic ELB, behind one lock per
//! region (`crate::server::Fake` holds the locks). Resource modules own their maps: each
//! writes only its own and reads the others through them.

use std::collections::BTreeMap;

use crate::Config;
use crate::ec2::{availability_zone, internet_gateway, subnet, tags, vpc};
use crate::elb::load_balancer;
use crate::ids::IdGen;
use crate::protocol::error::ApiError;
use crate::sim::clock::Clock;

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
    /// EC2 tags of every resource.
    pub tags: tags::TagStore,
    /// Classic load balancers by name.
    pub load_balancers: BTreeMap<String, load_balancer::LoadBalancer>,
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
    /// Classic load balancers per region (AWS: 20).
    pub load_balancers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            vpcs: 5,
            subnets_per_vpc: 200,
            internet_gateways: 5,
            load_balancers: 20,
        }
    }
}

impl Region {
    /// A fresh region as AWS hands it out: zones, and the default VPC unless switched off.
    pub fn new(name: &str, config: &Config) -> Self {
        let mut ids = IdGen::new(config.seed, name);
        let default_dhcp_options_id = ids.resource("dopt");
        let mut region = Region {
            name: name.to_string(),
            account_id: config.account_id.clone(),
            zones: availability_zone::zones_of(name),
            ids,
            clock: config.clock.clone(),
            limits: config.limits.clone(),
            default_dhcp_options_id,
            vpcs: BTreeMap::new(),
            subnets: BTreeMap::new(),
            internet_gateways: BTreeMap::new(),
            tags: tags::TagStore::default(),
            load_balancers: BTreeMap::new(),
        };
        if config.default_vpc {
            vpc::create_default(&mut region);
        }
        region
    }

    /// Fails with the type's NotFound code unless `id` names an existing taggable resource.
    pub fn check_taggable(&self, id: &str) -> Result<(), ApiError> {
        let exists = match id.split('-').next().unwrap_or_default() {
            "vpc" => self.vpcs.contains_key(id),
            "subnet" => self.subnets.contains_key(id),
            "igw" => self.internet_gateways.contains_key(id),
            "dopt" => id == self.default_dhcp_options_id,
            _ => {
                return Err(ApiError::new(
                    "InvalidID",
                    format!("The ID '{id}' is not valid"),
                ));
            }
        };
        if exists {
            return Ok(());
        }
        Err(match id.split('-').next().unwrap_or_default() {
            "vpc" => vpc::KIND.not_found(&[id]),
            "subnet" => subnet::KIND.not_found(&[id]),
            "igw" => internet_gateway::KIND.not_found(&[id]),
            _ => ApiError::new(
                "InvalidDhcpOptionID.NotFound",
                format!("The dhcpOption ID '{id}' does not exist"),
            ),
        })
    }
}
