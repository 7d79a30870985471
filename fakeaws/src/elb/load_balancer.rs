//! Classic load balancers: CreateLoadBalancer, DescribeLoadBalancers, DeleteLoadBalancer.

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::generated::elb::{
    CreateAccessPointInput, CreateAccessPointOutput, DeleteAccessPointInput,
    DeleteAccessPointOutput, DescribeAccessPointsInput, DescribeAccessPointsOutput, HealthCheck,
    Listener, ListenerDescription, LoadBalancerDescription, Policies, SourceSecurityGroup,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// AWS's limit of tags on one load balancer.
const MAX_TAGS: usize = 50;

/// One classic load balancer.
#[derive(Debug, Clone)]
pub struct LoadBalancer {
    /// Its name, unique in the region.
    pub name: String,
    /// `name-1234567890.region.elb.amazonaws.com`, `internal-` first when internal.
    pub dns_name: String,
    /// Whether the scheme is `internal`.
    pub internal: bool,
    /// Its listeners, normalised (protocols upper-case, instance protocol filled in).
    pub listeners: Vec<Listener>,
    /// The zones of its subnets.
    pub zones: Vec<String>,
    /// Its subnets.
    pub subnets: Vec<String>,
    /// Its VPC, when it has subnets.
    pub vpc_id: Option<String>,
    /// Its security groups.
    pub security_groups: Vec<String>,
    /// Its health check.
    pub health_check: HealthCheck,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// When it was created.
    pub created: DateTime,
}

fn validation(message: impl Into<String>) -> ApiError {
    ApiError::new("ValidationError", message)
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

fn normalise_listener(l: &Listener) -> Result<Listener, ApiError> {
    let protocol = l.protocol.to_ascii_uppercase();
    if !["HTTP", "HTTPS", "TCP", "SSL"].contains(&protocol.as_str()) {
        return Err(validation(format!(
            "Invalid protocol '{}': must be one of HTTP, HTTPS, TCP, SSL",
            l.protocol
        )));
    }
    let instance_protocol = match &l.instance_protocol {
        Some(p) => p.to_ascii_uppercase(),
        None => match protocol.as_str() {
            "HTTPS" => "HTTP".to_string(),
            "SSL" => "TCP".to_string(),
            other => other.to_string(),
        },
    };
    if !["HTTP", "HTTPS", "TCP", "SSL"].contains(&instance_protocol.as_str()) {
        return Err(validation(format!(
            "Invalid instance protocol '{instance_protocol}'"
        )));
    }
    for port in [l.load_balancer_port, l.instance_port] {
        if !(1..=65535).contains(&port) {
            return Err(validation(format!(
                "Invalid port {port}: must be between 1 and 65535"
            )));
        }
    }
    if matches!(protocol.as_str(), "HTTPS" | "SSL") && l.ssl_certificate_id.is_none() {
        return Err(validation(
            "SSLCertificateId is required for HTTPS and SSL listeners",
        ));
    }
    Ok(Listener {
        protocol,
        load_balancer_port: l.load_balancer_port,
        instance_protocol: Some(instance_protocol),
        instance_port: l.instance_port,
        ssl_certificate_id: l.ssl_certificate_id.clone(),
    })
}

fn not_found(name: &str) -> ApiError {
    ApiError::new(
        "LoadBalancerNotFound",
        format!("There is no ACTIVE Load Balancer named '{name}'"),
    )
}

/// `CreateLoadBalancer`: a name already in use in the region is `DuplicateLoadBalancerName`.
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
    for l in &input.listeners {
        let l = normalise_listener(l)?;
        if listeners
            .iter()
            .any(|x: &Listener| x.load_balancer_port == l.load_balancer_port)
        {
            return Err(ApiError::new(
                "DuplicateListener",
                format!(
                    "A listener already exists for {name} with LoadBalancerPort {}",
                    l.load_balancer_port
                ),
            ));
        }
        listeners.push(l);
    }
    let internal = match input.scheme.as_deref() {
        None | Some("internet-facing") => false,
        Some("internal") => true,
        Some(other) => {
            return Err(validation(format!(
                "Invalid scheme '{other}': must be internet-facing or internal"
            )));
        }
    };
    let mut tags = BTreeMap::new();
    for t in input.tags.iter().flatten() {
        if t.key.is_empty() || t.key.len() > 128 || t.value.as_ref().is_some_and(|v| v.len() > 256)
        {
            return Err(validation(format!("Invalid tag '{}'", t.key)));
        }
        if tags
            .insert(t.key.clone(), t.value.clone().unwrap_or_default())
            .is_some()
        {
            return Err(ApiError::new(
                "DuplicateTagKeys",
                format!("Tag key '{}' is given more than once", t.key),
            ));
        }
    }
    if tags.len() > MAX_TAGS {
        return Err(ApiError::new(
            "TooManyTags",
            format!("A load balancer can have at most {MAX_TAGS} tags"),
        ));
    }

    let subnet_ids: Vec<String> = match (&input.subnets, &input.availability_zones) {
        (Some(s), _) if !s.is_empty() => s.clone(),
        (_, Some(zones)) if !zones.is_empty() => default_subnets_in(region, zones)?,
        _ => {
            return Err(validation(
                "Either Subnets or AvailabilityZones must be specified",
            ));
        }
    };
    let mut zones = Vec::new();
    let mut vpc_id: Option<String> = None;
    for id in &subnet_ids {
        let subnet = region.subnets.get(id).ok_or_else(|| {
            ApiError::new(
                "SubnetNotFound",
                format!("The subnet '{id}' does not exist"),
            )
        })?;
        if zones.contains(&subnet.zone) {
            return Err(ApiError::new(
                "InvalidConfigurationRequest",
                "LoadBalancer attached to multiple subnets in the same AZ.",
            ));
        }
        match &vpc_id {
            Some(v) if *v != subnet.vpc_id => {
                return Err(ApiError::new(
                    "InvalidConfigurationRequest",
                    "All subnets must belong to the same VPC.",
                ));
            }
            _ => vpc_id = Some(subnet.vpc_id.clone()),
        }
        zones.push(subnet.zone.clone());
    }
    if let Some(vpc) = &vpc_id
        && !internal
        && region.internet_gateway_of(vpc).is_none()
    {
        return Err(ApiError::new(
            "InvalidSubnet",
            format!("VPC {vpc} has no internet gateway"),
        ));
    }
    let security_groups = input.security_groups.clone().unwrap_or_default();
    let health_check = HealthCheck {
        target: Some(format!("TCP:{}", listeners[0].instance_port)),
        interval: Some(30),
        timeout: Some(5),
        unhealthy_threshold: Some(2),
        healthy_threshold: Some(10),
    };

    if region.load_balancers.contains_key(&name) {
        return Err(ApiError::new(
            "DuplicateLoadBalancerName",
            format!("Load balancer name '{name}' already exists for this account."),
        ));
    }
    if region.load_balancers.len() >= region.limits.load_balancers {
        return Err(ApiError::new(
            "TooManyLoadBalancers",
            format!(
                "Exceeded quota of account {}: at most {} load balancers",
                region.account_id, region.limits.load_balancers
            ),
        ));
    }
    let dns_name = format!(
        "{}{name}-{}.{}.elb.amazonaws.com",
        if internal { "internal-" } else { "" },
        region.ids.digits(10),
        region.name
    );
    let lb = LoadBalancer {
        name: name.clone(),
        dns_name: dns_name.clone(),
        internal,
        listeners,
        zones,
        subnets: subnet_ids,
        vpc_id,
        security_groups,
        health_check,
        tags,
        created: region.clock.now_datetime(),
    };
    region.load_balancers.insert(name, lb);
    Ok(CreateAccessPointOutput {
        dns_name: Some(dns_name),
    })
}

/// The default subnets of the default VPC in `zones` (load balancers created by zone).
fn default_subnets_in(region: &Region, zones: &[String]) -> Result<Vec<String>, ApiError> {
    let Some(vpc) = region.default_vpc() else {
        return Err(ApiError::new(
            "InvalidConfigurationRequest",
            "There is no default VPC: specify Subnets.",
        ));
    };
    zones
        .iter()
        .map(|z| {
            region
                .subnets
                .values()
                .find(|s| s.vpc_id == vpc.id && s.default_for_az && s.zone == *z)
                .map(|s| s.id.clone())
                .ok_or_else(|| {
                    validation(format!(
                        "There is no default subnet in availability zone {z}"
                    ))
                })
        })
        .collect()
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

fn render(region: &Region, lb: &LoadBalancer) -> LoadBalancerDescription {
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
                    policy_names: Some(Vec::new()),
                })
                .collect(),
        ),
        policies: Some(Policies {
            app_cookie_stickiness_policies: Some(Vec::new()),
            lb_cookie_stickiness_policies: Some(Vec::new()),
            other_policies: Some(Vec::new()),
        }),
        backend_server_descriptions: Some(Vec::new()),
        availability_zones: Some(lb.zones.clone()),
        subnets: Some(lb.subnets.clone()),
        vpc_id: lb.vpc_id.clone(),
        instances: Some(Vec::new()),
        health_check: Some(lb.health_check.clone()),
        source_security_group: Some(SourceSecurityGroup {
            owner_alias: Some(region.account_id.clone()),
            group_name: lb.security_groups.first().cloned(),
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

/// `DescribeLoadBalancers`: by name (each must exist) or all, paginated by Marker/PageSize.
pub fn describe_load_balancers(
    region: &Region,
    input: DescribeAccessPointsInput,
) -> Result<DescribeAccessPointsOutput, ApiError> {
    let names = input.load_balancer_names.unwrap_or_default();
    for n in &names {
        if !region.load_balancers.contains_key(n) {
            return Err(not_found(n));
        }
    }
    let page_size = match input.page_size {
        None => 400,
        Some(n) if (1..=400).contains(&n) => usize::try_from(n).unwrap_or(400),
        Some(n) => {
            return Err(validation(format!(
                "PageSize {n} is invalid: must be between 1 and 400"
            )));
        }
    };
    let after = match input.marker.as_deref().filter(|m| !m.is_empty()) {
        Some(m) => Some(
            m.strip_prefix("fakeaws-marker:")
                .ok_or_else(|| validation(format!("Invalid Marker '{m}'")))?
                .to_string(),
        ),
        None => None,
    };
    let mut selected: Vec<&LoadBalancer> = region
        .load_balancers
        .values()
        .filter(|lb| names.is_empty() || names.contains(&lb.name))
        .filter(|lb| after.as_deref().is_none_or(|a| lb.name.as_str() > a))
        .collect();
    let next_marker = if selected.len() > page_size {
        selected.truncate(page_size);
        selected
            .last()
            .map(|l| format!("fakeaws-marker:{}", l.name))
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

/// `DeleteLoadBalancer`: idempotent, as AWS documents; a missing name is success.
pub fn delete_load_balancer(
    region: &mut Region,
    input: DeleteAccessPointInput,
) -> Result<DeleteAccessPointOutput, ApiError> {
    region.load_balancers.remove(&input.load_balancer_name);
    Ok(DeleteAccessPointOutput {})
}
