//! Classic load balancers: create, describe, delete; health checks and attributes;
//! instance registration and health; tags; subnets, security groups and listeners.
//!
//! `listener` holds listeners, `attributes` the health check and attributes, `instances`
//! registration and health, `tags` the load balancer's tags, `network` its subnets and
//! groups.

mod attributes;
mod instances;
mod listener;
mod network;
mod policy;
mod tags;

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::ec2::security_group;
use crate::elb::error::Code;
use crate::generated::elb::{
    AccessLog, ConnectionDraining, ConnectionSettings, CreateAccessPointInput,
    CreateAccessPointOutput, CrossZoneLoadBalancing, DeleteAccessPointInput,
    DeleteAccessPointOutput, DescribeAccessPointsInput, DescribeAccessPointsOutput, HealthCheck,
    Instance as InstanceRef, Listener, ListenerDescription, LoadBalancerAttributes,
    LoadBalancerDescription, SourceSecurityGroup,
};
use crate::protocol::error::ApiError;
use crate::protocol::error::Common;
use crate::region::Region;

pub use attributes::{
    configure_health_check, describe_load_balancer_attributes, modify_load_balancer_attributes,
};
pub use instances::{
    advance, deregister_instances_from_load_balancer, describe_instance_health,
    register_instances_with_load_balancer,
};
use listener::merge_listeners;
pub use listener::{
    create_load_balancer_listeners, delete_load_balancer_listeners,
    set_load_balancer_listener_ssl_certificate,
};
pub use network::{
    apply_security_groups_to_load_balancer, attach_load_balancer_to_subnets,
    detach_load_balancer_from_subnets, disable_availability_zones_for_load_balancer,
    enable_availability_zones_for_load_balancer,
};
use network::{
    check_groups, check_room, check_subnets, default_subnets_in, place_nodes, release_nodes,
};
pub use policy::{
    create_app_cookie_stickiness_policy, create_lb_cookie_stickiness_policy,
    create_load_balancer_policy, delete_load_balancer_policy, describe_load_balancer_policies,
    describe_load_balancer_policy_types, set_load_balancer_policies_for_backend_server,
    set_load_balancer_policies_of_listener,
};
use tags::{MAX_TAGS, check_tags};
pub use tags::{add_tags, describe_tags, remove_tags};

crate::region::table! {
    /// Classic load balancers by name.
    LoadBalancers of LoadBalancer
}

/// One classic load balancer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LoadBalancer {
    /// Its name, unique in the region.
    pub name: String,
    /// `name-1234567890.region.elb.amazonaws.com`, `internal-` first when internal.
    pub dns_name: String,
    /// Whether the scheme is `internal`.
    pub internal: bool,
    /// Its listeners, normalised (protocols upper-case, instance protocol filled in).
    pub listeners: Vec<Listener>,
    /// Its subnets.
    pub subnets: Vec<String>,
    /// Its node's interface in each subnet: subnet -> `eni-...`.
    #[serde(default)]
    pub nodes: BTreeMap<String, String>,
    /// Its VPC.
    pub vpc_id: Option<String>,
    /// Its security groups.
    pub security_groups: Vec<String>,
    /// Its health check.
    pub health_check: HealthCheck,
    /// Its attributes.
    pub attributes: LoadBalancerAttributes,
    /// Registered instances -> whether their registration completed.
    pub instances: BTreeMap<String, bool>,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// Its policies, in the order created (`policy.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<policy::Policy>,
    /// The policies set on each listener, by load balancer port.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub listener_policies: BTreeMap<i32, Vec<String>>,
    /// The policies set on each back-end (instance) port.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub backend_policies: BTreeMap<i32, Vec<String>>,
}

fn validation(message: impl Into<String>) -> ApiError {
    ApiError::new(Common::ValidationError, message)
}

/// `LoadBalancerNotFound` for `name`.
pub(crate) fn not_found(name: &str) -> ApiError {
    ApiError::new(
        Code::LoadBalancerNotFound,
        format!("There is no ACTIVE Load Balancer named '{name}'"),
    )
}

fn get<'a>(region: &'a Region, name: &str) -> Result<&'a LoadBalancer, ApiError> {
    region
        .load_balancers
        .get(name)
        .ok_or_else(|| not_found(name))
}

fn get_mut<'a>(region: &'a mut Region, name: &str) -> Result<&'a mut LoadBalancer, ApiError> {
    region
        .load_balancers
        .0
        .get_mut(name)
        .ok_or_else(|| not_found(name))
}

fn check_name(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(validation(format!(
            "LoadBalancerName '{name}' must have at most 32 characters, only alphanumeric \
             characters and hyphens, and must not begin or end with a hyphen"
        )))
    }
}

/// What a `CreateLoadBalancer` asks for, checked and normalised, beside what a load balancer
/// of that name already has.
struct Configuration<'a> {
    internal: bool,
    listeners: &'a [Listener],
    subnets: &'a [String],
    security_groups: &'a [String],
    tags: &'a BTreeMap<String, String>,
}

impl Configuration<'_> {
    /// What of `lb`'s configuration (as it is now: later changes to its subnets, groups,
    /// listeners or tags count) this one asks otherwise, first of its listeners, subnets,
    /// security groups, scheme and tags; `None` when it is the same (lists compared as sets).
    fn differs_from(&self, lb: &LoadBalancer) -> Option<&'static str> {
        fn set<T: Ord + Clone>(items: &[T]) -> Vec<T> {
            let mut items = items.to_vec();
            items.sort();
            items.dedup();
            items
        }
        let ports = |ls: &[Listener]| {
            let mut ls = ls.to_vec();
            ls.sort_by_key(|l| l.load_balancer_port);
            ls
        };
        if ports(self.listeners) != ports(&lb.listeners) {
            Some("listeners")
        } else if set(self.subnets) != set(&lb.subnets) {
            Some("subnets")
        } else if set(self.security_groups) != set(&lb.security_groups) {
            Some("security groups")
        } else if self.internal != lb.internal {
            Some("scheme")
        } else if *self.tags != lb.tags {
            Some("tags")
        } else {
            None
        }
    }
}

/// `CreateLoadBalancer`. A name already in use in the region is answered as AWS answers it
/// (undocumented in the API reference, but what the service does): with the existing load
/// balancer's DNS name when the request repeats its configuration, so a create retried after
/// a lost answer succeeds; otherwise `DuplicateLoadBalancerName`, naming what differs.
pub fn create_load_balancer(
    region: &mut Region,
    input: CreateAccessPointInput,
) -> Result<CreateAccessPointOutput, ApiError> {
    let name = input.load_balancer_name.clone();
    check_name(&name)?;
    if input.listeners.is_empty() {
        return Err(validation("At least one listener is required"));
    }
    let mut listeners = Vec::new();
    merge_listeners(region, &name, &mut listeners, &input.listeners)?;
    let internal = match input.scheme.as_deref() {
        None | Some("internet-facing") => false,
        Some("internal") => true,
        Some(other) => {
            return Err(validation(format!(
                "Invalid scheme '{other}': must be internet-facing or internal"
            )));
        }
    };
    let tags = check_tags(input.tags.as_deref().unwrap_or_default())?;
    if tags.len() > MAX_TAGS {
        return Err(ApiError::new(
            Code::TooManyTags,
            format!("A load balancer can have at most {MAX_TAGS} tags"),
        ));
    }
    let subnet_ids: Vec<String> = match (&input.subnets, &input.availability_zones) {
        (Some(s), Some(z)) if !s.is_empty() && !z.is_empty() => {
            return Err(validation(
                "Specify either Subnets or AvailabilityZones, not both",
            ));
        }
        (Some(s), _) if !s.is_empty() => s.clone(),
        (_, Some(zones)) if !zones.is_empty() => default_subnets_in(region, zones)?,
        _ => {
            return Err(validation(
                "Either Subnets or AvailabilityZones must be specified",
            ));
        }
    };
    let (vpc_id, _) = check_subnets(region, &subnet_ids)?;
    if !internal && region.internet_gateway_of(&vpc_id).is_none() {
        return Err(ApiError::new(
            Code::InvalidSubnet,
            format!("VPC {vpc_id} has no internet gateway"),
        ));
    }
    let security_groups = match input.security_groups.clone().filter(|g| !g.is_empty()) {
        Some(groups) => {
            check_groups(region, &vpc_id, &groups)?;
            groups
        }
        None => security_group::default_of(region, &vpc_id)
            .into_iter()
            .collect(),
    };
    // A create repeating a load balancer's configuration is answered with that load balancer,
    // changing nothing; one that asks for another configuration under its name is refused.
    if let Some(existing) = region.load_balancers.get(&name) {
        let asked = Configuration {
            internal,
            listeners: &listeners,
            subnets: &subnet_ids,
            security_groups: &security_groups,
            tags: &tags,
        };
        return match asked.differs_from(existing) {
            None => Ok(CreateAccessPointOutput {
                dns_name: Some(existing.dns_name.clone()),
            }),
            Some(what) => Err(ApiError::new(
                Code::DuplicateLoadBalancerName,
                format!(
                    "Load Balancer named {name} already exists and it is configured with \
                     different {what}."
                ),
            )),
        };
    }
    if region.load_balancers.len() >= region.limits.load_balancers {
        return Err(ApiError::new(
            Code::TooManyLoadBalancers,
            format!(
                "Exceeded quota of account {}: at most {} load balancers",
                region.account_id, region.limits.load_balancers
            ),
        ));
    }
    check_room(region, &subnet_ids)?;
    // The listeners were checked to be at least one.
    let first_port = listeners.first().map_or(0, |l| l.instance_port);
    let health_check = HealthCheck {
        target: format!("TCP:{first_port}"),
        interval: 30,
        timeout: 5,
        unhealthy_threshold: 2,
        healthy_threshold: 10,
    };
    let dns_name = format!(
        "{}{name}-{}.{}.elb.amazonaws.com",
        if internal { "internal-" } else { "" },
        region.ids.digits(10),
        region.name
    );
    let nodes = place_nodes(region, &name, &subnet_ids, &security_groups, internal)?;
    let lb = LoadBalancer {
        name: name.clone(),
        dns_name: dns_name.clone(),
        internal,
        listeners,
        subnets: subnet_ids,
        nodes,
        vpc_id: Some(vpc_id),
        security_groups,
        health_check,
        attributes: LoadBalancerAttributes {
            cross_zone_load_balancing: Some(CrossZoneLoadBalancing { enabled: false }),
            access_log: Some(AccessLog {
                enabled: false,
                ..Default::default()
            }),
            connection_draining: Some(ConnectionDraining {
                enabled: false,
                timeout: Some(300),
            }),
            connection_settings: Some(ConnectionSettings { idle_timeout: 60 }),
            additional_attributes: Some(attributes::default_additional()),
        },
        instances: BTreeMap::new(),
        tags,
        created: region.clock.now_datetime(),
        policies: Vec::new(),
        listener_policies: BTreeMap::new(),
        backend_policies: BTreeMap::new(),
    };
    region.load_balancers.0.insert(name, lb);
    Ok(CreateAccessPointOutput {
        dns_name: Some(dns_name),
    })
}

/// The hosted zone id of ELB DNS names in `region`.
fn hosted_zone_id(region: &str) -> &'static str {
    match region {
        "us-east-1" => "Z35SXDOTRQ7X7K",
        "us-east-2" => "Z3AADJGX6KTTL2",
        "us-west-1" => "Z368ELLRRE2KJ0",
        "us-west-2" => "Z1H1FL5HABSF5",
        "eu-west-1" => "Z32O12XQLNTSW2",
        "eu-central-1" => "Z215JYRZR1TBD5",
        "ap-northeast-1" => "Z14GRHDCWA56QT",
        "ap-southeast-1" => "Z1LMS91P8CMLE5",
        "ap-southeast-2" => "Z1GM3OXH4ZPM65",
        _ => "Z3DZXE0EXAMPLE",
    }
}

fn zones_of(region: &Region, lb: &LoadBalancer) -> Vec<String> {
    lb.subnets
        .iter()
        .filter_map(|s| region.subnets.get(s).map(|s| s.zone.clone()))
        .collect()
}

fn render(region: &Region, lb: &LoadBalancer) -> LoadBalancerDescription {
    let (policies, backends) = policy::render(lb);
    LoadBalancerDescription {
        load_balancer_name: Some(lb.name.clone()),
        dns_name: Some(lb.dns_name.clone()),
        canonical_hosted_zone_name: (!lb.internal).then(|| lb.dns_name.clone()),
        canonical_hosted_zone_name_id: Some(hosted_zone_id(&region.name).to_string()),
        listener_descriptions: Some(
            lb.listeners
                .iter()
                .map(|l| ListenerDescription {
                    listener: Some(l.clone()),
                    policy_names: Some(
                        lb.listener_policies
                            .get(&l.load_balancer_port)
                            .cloned()
                            .unwrap_or_default(),
                    ),
                })
                .collect(),
        ),
        policies: Some(policies),
        backend_server_descriptions: Some(backends),
        availability_zones: Some(zones_of(region, lb)),
        subnets: Some(lb.subnets.clone()),
        vpc_id: lb.vpc_id.clone(),
        instances: Some(
            lb.instances
                .keys()
                .map(|i| InstanceRef {
                    instance_id: Some(i.clone()),
                })
                .collect(),
        ),
        health_check: Some(lb.health_check.clone()),
        source_security_group: Some(SourceSecurityGroup {
            owner_alias: Some(region.account_id.clone()),
            group_name: lb
                .security_groups
                .first()
                .and_then(|g| region.security_groups.get(g))
                .map(|g| g.name.clone()),
        }),
        security_groups: Some(lb.security_groups.clone()),
        created_time: Some(lb.created),
        scheme: Some(
            if lb.internal {
                "internal"
            } else {
                "internet-facing"
            }
            .to_string(),
        ),
    }
}

/// ELB's pagination: `PageSize` (1 to 400, 400 when not given) and the name after which a
/// `Marker` this fake handed out resumes.
pub(crate) fn page(
    page_size: Option<i32>,
    marker: Option<&str>,
) -> Result<(usize, Option<String>), ApiError> {
    let page_size = match page_size {
        None => 400,
        Some(n) if (1..=400).contains(&n) => usize::try_from(n).unwrap_or(400),
        Some(n) => {
            return Err(validation(format!(
                "PageSize {n} is invalid: must be between 1 and 400"
            )));
        }
    };
    let after = match marker.filter(|m| !m.is_empty()) {
        Some(m) => Some(
            m.strip_prefix(MARKER)
                .ok_or_else(|| validation(format!("Invalid Marker '{m}'")))?
                .to_string(),
        ),
        None => None,
    };
    Ok((page_size, after))
}

/// What this fake's ELB markers start with (the name after which the next page starts
/// follows).
pub(crate) const MARKER: &str = "fakeaws-marker:";

/// `DescribeLoadBalancers`: by name (each must exist) or all, paginated by Marker/PageSize.
pub fn describe_load_balancers(
    region: &mut Region,
    input: DescribeAccessPointsInput,
) -> Result<DescribeAccessPointsOutput, ApiError> {
    let region = &*region;
    let names = input.load_balancer_names.unwrap_or_default();
    for n in &names {
        get(region, n)?;
    }
    let (page_size, after) = page(input.page_size, input.marker.as_deref())?;
    let mut selected: Vec<&LoadBalancer> = region
        .load_balancers
        .values()
        .filter(|lb| names.is_empty() || names.contains(&lb.name))
        .filter(|lb| !region.consistency.hides_load_balancer(&lb.name))
        .filter(|lb| after.as_deref().is_none_or(|a| lb.name.as_str() > a))
        .collect();
    let next_marker = if selected.len() > page_size {
        selected.truncate(page_size);
        selected.last().map(|l| format!("{MARKER}{}", l.name))
    } else {
        None
    };
    Ok(DescribeAccessPointsOutput {
        load_balancer_descriptions: Some(
            selected.into_iter().map(|lb| render(region, lb)).collect(),
        ),
        next_marker,
    })
}

/// `DeleteLoadBalancer`: idempotent, as AWS documents; a missing name is success. Its node
/// interfaces linger a while, as AWS's do (see `network::release_nodes`).
pub fn delete_load_balancer(
    region: &mut Region,
    input: DeleteAccessPointInput,
) -> Result<DeleteAccessPointOutput, ApiError> {
    if let Some(lb) = region.load_balancers.0.remove(&input.load_balancer_name) {
        release_nodes(region, lb.nodes.values());
    }
    Ok(DeleteAccessPointOutput {})
}
