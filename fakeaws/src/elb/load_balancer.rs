//! Classic load balancers: create, describe, delete; health checks and attributes;
//! instance registration and health; tags; subnets, security groups and listeners.

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::ec2::security_group;
use crate::elb::error::Code;
use crate::generated::ec2::InstanceStateName;
use crate::generated::elb::{
    AccessLog, AddTagsInput, AddTagsOutput, ApplySecurityGroupsToLoadBalancerInput,
    ApplySecurityGroupsToLoadBalancerOutput, AttachLoadBalancerToSubnetsInput,
    AttachLoadBalancerToSubnetsOutput, ConfigureHealthCheckInput, ConfigureHealthCheckOutput,
    ConnectionDraining, ConnectionSettings, CreateAccessPointInput, CreateAccessPointOutput,
    CreateLoadBalancerListenerInput, CreateLoadBalancerListenerOutput, CrossZoneLoadBalancing,
    DeleteAccessPointInput, DeleteAccessPointOutput, DeleteLoadBalancerListenerInput,
    DeleteLoadBalancerListenerOutput, DeregisterEndPointsInput, DeregisterEndPointsOutput,
    DescribeAccessPointsInput, DescribeAccessPointsOutput, DescribeEndPointStateInput,
    DescribeEndPointStateOutput, DescribeLoadBalancerAttributesInput,
    DescribeLoadBalancerAttributesOutput, DescribeTagsInput, DescribeTagsOutput,
    DetachLoadBalancerFromSubnetsInput, DetachLoadBalancerFromSubnetsOutput, HealthCheck,
    Instance as InstanceRef, InstanceState, Listener, ListenerDescription, LoadBalancerAttributes,
    LoadBalancerDescription, ModifyLoadBalancerAttributesInput, ModifyLoadBalancerAttributesOutput,
    Policies, RegisterEndPointsInput, RegisterEndPointsOutput, RemoveTagsInput, RemoveTagsOutput,
    SourceSecurityGroup, Tag, TagDescription,
};
use crate::protocol::error::ApiError;
use crate::protocol::error::Common;
use crate::region::Region;
use crate::sim::transitions::Subject;

/// AWS's limit of tags on one load balancer.
const MAX_TAGS: usize = 50;

crate::region::table! {
    /// Classic load balancers by name.
    LoadBalancers of LoadBalancer
}

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
    /// Its subnets.
    pub subnets: Vec<String>,
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
    pub created: DateTime,
}

fn validation(message: impl Into<String>) -> ApiError {
    ApiError::new(Common::ValidationError, message)
}

fn not_found(name: &str) -> ApiError {
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

fn normalise_listener(l: &Listener) -> Result<Listener, ApiError> {
    let protocol = l.protocol.to_ascii_uppercase();
    if !["HTTP", "HTTPS", "TCP", "SSL"].contains(&protocol.as_str()) {
        return Err(ApiError::new(
            Code::UnsupportedProtocol,
            format!(
                "Invalid protocol '{}': must be one of HTTP, HTTPS, TCP, SSL",
                l.protocol
            ),
        ));
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
        return Err(ApiError::new(
            Code::UnsupportedProtocol,
            format!("Invalid instance protocol '{instance_protocol}'"),
        ));
    }
    for port in [l.load_balancer_port, l.instance_port] {
        if !(1..=65535).contains(&port) {
            return Err(validation(format!(
                "Invalid port {port}: must be between 1 and 65535"
            )));
        }
    }
    if matches!(protocol.as_str(), "HTTPS" | "SSL") && l.ssl_certificate_id.is_none() {
        return Err(ApiError::new(
            Code::CertificateNotFound,
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

/// Adds `new` listeners to `existing`: the same listener again is fine, another one on a
/// port in use is `DuplicateListener`.
fn merge_listeners(
    name: &str,
    existing: &mut Vec<Listener>,
    new: &[Listener],
) -> Result<(), ApiError> {
    for l in new {
        let l = normalise_listener(l)?;
        match existing
            .iter()
            .find(|x| x.load_balancer_port == l.load_balancer_port)
        {
            Some(x) if *x == l => {}
            Some(_) => {
                return Err(ApiError::new(
                    Code::DuplicateListener,
                    format!(
                        "A listener already exists for {name} with LoadBalancerPort {}, but with a different InstancePort, Protocol, or SSLCertificateId",
                        l.load_balancer_port
                    ),
                ));
            }
            None => existing.push(l),
        }
    }
    Ok(())
}

fn check_tags(tags: &[Tag]) -> Result<BTreeMap<String, String>, ApiError> {
    let mut out = BTreeMap::new();
    for t in tags {
        if t.key.is_empty() || t.key.len() > 128 || t.value.as_ref().is_some_and(|v| v.len() > 256)
        {
            return Err(validation(format!("Invalid tag '{}'", t.key)));
        }
        if t.key.to_ascii_lowercase().starts_with("aws:") {
            return Err(validation(format!(
                "Tag key '{}' uses the reserved prefix aws:",
                t.key
            )));
        }
        if out
            .insert(t.key.clone(), t.value.clone().unwrap_or_default())
            .is_some()
        {
            return Err(ApiError::new(
                Code::DuplicateTagKeys,
                format!("Tag key '{}' is given more than once", t.key),
            ));
        }
    }
    Ok(out)
}

/// Checks subnets for a load balancer: they exist, lie in one VPC, one per zone.
fn check_subnets(region: &Region, ids: &[String]) -> Result<(String, Vec<String>), ApiError> {
    let mut zones: Vec<String> = Vec::new();
    let mut vpc_id: Option<String> = None;
    for id in ids {
        let subnet = region.subnets.get(id).ok_or_else(|| {
            ApiError::new(
                Code::SubnetNotFound,
                format!("The subnet '{id}' does not exist"),
            )
        })?;
        if zones.contains(&subnet.zone) {
            return Err(ApiError::new(
                Code::InvalidConfigurationRequest,
                "LoadBalancer attached to multiple subnets in the same AZ.",
            ));
        }
        match &vpc_id {
            Some(v) if *v != subnet.vpc_id => {
                return Err(ApiError::new(
                    Code::InvalidConfigurationRequest,
                    "All subnets must belong to the same VPC.",
                ));
            }
            _ => vpc_id = Some(subnet.vpc_id.clone()),
        }
        zones.push(subnet.zone.clone());
    }
    let vpc = vpc_id.ok_or_else(|| validation("At least one subnet is required"))?;
    Ok((vpc, zones))
}

fn check_groups(region: &Region, vpc_id: &str, groups: &[String]) -> Result<(), ApiError> {
    for g in groups {
        let ok = region
            .security_groups
            .get(g)
            .is_some_and(|s| s.vpc_id == vpc_id);
        if !ok {
            return Err(ApiError::new(
                Code::InvalidSecurityGroup,
                format!("One or more security groups are invalid: {g} does not exist in {vpc_id}"),
            ));
        }
    }
    Ok(())
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
    merge_listeners(&name, &mut listeners, &input.listeners)?;
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
    if region.load_balancers.contains_key(&name) {
        return Err(ApiError::new(
            Code::DuplicateLoadBalancerName,
            format!("Load balancer name '{name}' already exists for this account."),
        ));
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
    let health_check = HealthCheck {
        target: format!("TCP:{}", listeners[0].instance_port),
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
    let lb = LoadBalancer {
        name: name.clone(),
        dns_name: dns_name.clone(),
        internal,
        listeners,
        subnets: subnet_ids,
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
            additional_attributes: None,
        },
        instances: BTreeMap::new(),
        tags,
        created: region.clock.now_datetime(),
    };
    region.load_balancers.0.insert(name, lb);
    Ok(CreateAccessPointOutput {
        dns_name: Some(dns_name),
    })
}

/// The default subnets of the default VPC in `zones` (load balancers created by zone).
fn default_subnets_in(region: &Region, zones: &[String]) -> Result<Vec<String>, ApiError> {
    let Some(vpc) = region.default_vpc() else {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
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

fn zones_of(region: &Region, lb: &LoadBalancer) -> Vec<String> {
    lb.subnets
        .iter()
        .filter_map(|s| region.subnets.get(s).map(|s| s.zone.clone()))
        .collect()
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
    region.load_balancers.0.remove(&input.load_balancer_name);
    Ok(DeleteAccessPointOutput {})
}

fn parse_target(target: &str) -> Result<(), ApiError> {
    let bad = || {
        validation(format!(
            "Invalid health check target '{target}': expected PROTOCOL:PORT[/PATH]"
        ))
    };
    let (proto, rest) = target.split_once(':').ok_or_else(bad)?;
    let (port, path) = match rest.split_once('/') {
        Some((p, path)) => (p, Some(path)),
        None => (rest, None),
    };
    let port: u32 = port.parse().map_err(|_| bad())?;
    if !(1..=65535).contains(&port) {
        return Err(bad());
    }
    match proto.to_ascii_uppercase().as_str() {
        "TCP" | "SSL" if path.is_none() => Ok(()),
        "HTTP" | "HTTPS" if path.is_some() => Ok(()),
        _ => Err(bad()),
    }
}

/// `ConfigureHealthCheck`.
pub fn configure_health_check(
    region: &mut Region,
    input: ConfigureHealthCheckInput,
) -> Result<ConfigureHealthCheckOutput, ApiError> {
    let h = &input.health_check;
    parse_target(&h.target)?;
    let check = |v: i32, lo: i32, hi: i32, what: &str| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(validation(format!(
                "{what} must be between {lo} and {hi}; {v} given"
            )))
        }
    };
    check(h.interval, 5, 300, "Interval")?;
    check(h.timeout, 2, 60, "Timeout")?;
    check(h.unhealthy_threshold, 2, 10, "UnhealthyThreshold")?;
    check(h.healthy_threshold, 2, 10, "HealthyThreshold")?;
    if h.timeout >= h.interval {
        return Err(validation("Timeout must be smaller than Interval"));
    }
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.health_check = input.health_check.clone();
    Ok(ConfigureHealthCheckOutput {
        health_check: Some(input.health_check),
    })
}

/// `DescribeLoadBalancerAttributes`.
pub fn describe_load_balancer_attributes(
    region: &mut Region,
    input: DescribeLoadBalancerAttributesInput,
) -> Result<DescribeLoadBalancerAttributesOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    Ok(DescribeLoadBalancerAttributesOutput {
        load_balancer_attributes: Some(lb.attributes.clone()),
    })
}

/// `ModifyLoadBalancerAttributes`: cross-zone, access log, connection draining, idle timeout.
pub fn modify_load_balancer_attributes(
    region: &mut Region,
    input: ModifyLoadBalancerAttributesInput,
) -> Result<ModifyLoadBalancerAttributesOutput, ApiError> {
    let a = &input.load_balancer_attributes;
    if let Some(c) = &a.connection_settings
        && !(1..=4000).contains(&c.idle_timeout)
    {
        return Err(validation(
            "ConnectionSettings.IdleTimeout must be between 1 and 4000 seconds",
        ));
    }
    if let Some(d) = &a.connection_draining
        && d.timeout.is_some_and(|t| !(1..=3600).contains(&t))
    {
        return Err(validation(
            "ConnectionDraining.Timeout must be between 1 and 3600 seconds",
        ));
    }
    if let Some(l) = &a.access_log {
        if l.emit_interval.is_some_and(|i| i != 5 && i != 60) {
            return Err(validation("AccessLog.EmitInterval must be 5 or 60"));
        }
        if l.enabled && l.s3_bucket_name.as_deref().is_none_or(str::is_empty) {
            return Err(ApiError::new(
                Code::InvalidConfigurationRequest,
                "An access log needs an S3 bucket name",
            ));
        }
    }
    if a.additional_attributes
        .as_ref()
        .is_some_and(|v| !v.is_empty())
    {
        return Err(ApiError::new(
            Code::LoadBalancerAttributeNotFound,
            "fakeaws knows no additional load balancer attributes",
        ));
    }
    let lb = get_mut(region, &input.load_balancer_name)?;
    if let Some(c) = &a.cross_zone_load_balancing {
        lb.attributes.cross_zone_load_balancing = Some(c.clone());
    }
    if let Some(c) = &a.connection_settings {
        lb.attributes.connection_settings = Some(c.clone());
    }
    if let Some(d) = &a.connection_draining {
        let timeout = d.timeout.or_else(|| {
            lb.attributes
                .connection_draining
                .as_ref()
                .and_then(|x| x.timeout)
        });
        lb.attributes.connection_draining = Some(ConnectionDraining {
            enabled: d.enabled,
            timeout,
        });
    }
    if let Some(l) = &a.access_log {
        lb.attributes.access_log = Some(AccessLog {
            enabled: l.enabled,
            s3_bucket_name: l.s3_bucket_name.clone(),
            emit_interval: l.emit_interval.or(Some(60)).filter(|_| l.enabled),
            s3_bucket_prefix: l.s3_bucket_prefix.clone(),
        });
    }
    Ok(ModifyLoadBalancerAttributesOutput {
        load_balancer_name: Some(lb.name.clone()),
        load_balancer_attributes: Some(lb.attributes.clone()),
    })
}

fn instance_ids(instances: &[InstanceRef]) -> Result<Vec<String>, ApiError> {
    instances
        .iter()
        .map(|i| {
            i.instance_id
                .clone()
                .ok_or_else(|| ApiError::missing_parameter("Instances.member.N.InstanceId"))
        })
        .collect()
}

fn invalid_instance(message: String) -> ApiError {
    ApiError::new(Code::InvalidInstance, message)
}

/// `RegisterInstancesWithLoadBalancer`: instances of the load balancer's VPC.
pub fn register_instances_with_load_balancer(
    region: &mut Region,
    input: RegisterEndPointsInput,
) -> Result<RegisterEndPointsOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let ids = instance_ids(&input.instances)?;
    for id in &ids {
        let inst = region
            .instances
            .get(id)
            .filter(|i| !i.is_gone())
            .ok_or_else(|| {
                invalid_instance(format!("The following instance is not valid: {id}"))
            })?;
        if Some(&inst.vpc_id) != lb.vpc_id.as_ref() {
            return Err(invalid_instance(format!(
                "The following instance is not in the same VPC as the load balancer: {id}"
            )));
        }
    }
    let now = region.clock.now();
    let name = input.load_balancer_name.clone();
    let mut newly = Vec::new();
    let lb = get_mut(region, &name)?;
    for id in ids {
        if !lb.instances.contains_key(&id) {
            lb.instances.insert(id.clone(), false);
            newly.push(id);
        }
    }
    let registered = render_instances(lb);
    for id in newly {
        region.transitions.schedule(
            now,
            Subject::LoadBalancerRegistration,
            &format!("{name}\n{id}"),
        );
    }
    Ok(RegisterEndPointsOutput {
        instances: Some(registered),
    })
}

fn render_instances(lb: &LoadBalancer) -> Vec<InstanceRef> {
    lb.instances
        .keys()
        .map(|i| InstanceRef {
            instance_id: Some(i.clone()),
        })
        .collect()
}

/// Completes an instance's registration (`"<lb name>\n<instance id>"`).
pub fn advance(region: &mut Region, key: &str) {
    let Some((name, id)) = key.split_once('\n') else {
        return;
    };
    if let Some(slot) = region
        .load_balancers
        .0
        .get_mut(name)
        .and_then(|lb| lb.instances.get_mut(id))
    {
        *slot = true;
    }
}

/// `DeregisterInstancesFromLoadBalancer`.
pub fn deregister_instances_from_load_balancer(
    region: &mut Region,
    input: DeregisterEndPointsInput,
) -> Result<DeregisterEndPointsOutput, ApiError> {
    let ids = instance_ids(&input.instances)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    if let Some(id) = ids.iter().find(|i| !lb.instances.contains_key(*i)) {
        return Err(invalid_instance(format!(
            "The instance {id} is not registered with the load balancer"
        )));
    }
    for id in &ids {
        lb.instances.remove(id);
    }
    Ok(DeregisterEndPointsOutput {
        instances: Some(render_instances(lb)),
    })
}

/// `DescribeInstanceHealth`: `InService` once registration completed and the instance runs.
pub fn describe_instance_health(
    region: &mut Region,
    input: DescribeEndPointStateInput,
) -> Result<DescribeEndPointStateOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let ids = match &input.instances {
        Some(list) if !list.is_empty() => instance_ids(list)?,
        _ => lb.instances.keys().cloned().collect(),
    };
    let mut states = Vec::new();
    for id in ids {
        let Some(done) = lb.instances.get(&id) else {
            return Err(invalid_instance(format!(
                "The instance {id} is not registered with the load balancer"
            )));
        };
        let running = region.instances.get(&id).map(|i| i.state);
        let (state, reason, description) = match (running, done) {
            (Some(InstanceStateName::Running), true) => ("InService", "N/A", "N/A".to_string()),
            (Some(InstanceStateName::Running) | Some(InstanceStateName::Pending), false) => (
                "OutOfService",
                "ELB",
                "Instance registration is still in progress.".to_string(),
            ),
            (Some(s), _) => (
                "OutOfService",
                "Instance",
                format!("Instance is in {} state.", s.as_str()),
            ),
            (None, _) => (
                "OutOfService",
                "Instance",
                "Instance is in terminated state.".to_string(),
            ),
        };
        states.push(InstanceState {
            instance_id: Some(id),
            state: Some(state.to_string()),
            reason_code: Some(reason.to_string()),
            description: Some(description),
        });
    }
    Ok(DescribeEndPointStateOutput {
        instance_states: Some(states),
    })
}

/// `AddTags`: to every named load balancer, all or nothing.
pub fn add_tags(region: &mut Region, input: AddTagsInput) -> Result<AddTagsOutput, ApiError> {
    let tags = check_tags(&input.tags)?;
    for name in &input.load_balancer_names {
        let lb = get(region, name)?;
        let mut keys: Vec<&String> = lb.tags.keys().collect();
        keys.extend(tags.keys().filter(|k| !lb.tags.contains_key(*k)));
        if keys.len() > MAX_TAGS {
            return Err(ApiError::new(
                Code::TooManyTags,
                format!("Load balancer {name} would have more than {MAX_TAGS} tags"),
            ));
        }
    }
    for name in &input.load_balancer_names {
        let lb = get_mut(region, name)?;
        lb.tags.extend(tags.clone());
    }
    Ok(AddTagsOutput {})
}

/// `RemoveTags`.
pub fn remove_tags(
    region: &mut Region,
    input: RemoveTagsInput,
) -> Result<RemoveTagsOutput, ApiError> {
    for name in &input.load_balancer_names {
        get(region, name)?;
    }
    for name in &input.load_balancer_names {
        let lb = get_mut(region, name)?;
        for k in input.tags.iter().filter_map(|t| t.key.as_ref()) {
            lb.tags.remove(k);
        }
    }
    Ok(RemoveTagsOutput {})
}

/// `DescribeTags`: up to 20 load balancers.
pub fn describe_tags(
    region: &mut Region,
    input: DescribeTagsInput,
) -> Result<DescribeTagsOutput, ApiError> {
    let mut out = Vec::new();
    for name in &input.load_balancer_names {
        let lb = get(region, name)?;
        out.push(TagDescription {
            load_balancer_name: Some(lb.name.clone()),
            tags: Some(
                lb.tags
                    .iter()
                    .map(|(k, v)| Tag {
                        key: k.clone(),
                        value: Some(v.clone()),
                    })
                    .collect(),
            ),
        });
    }
    Ok(DescribeTagsOutput {
        tag_descriptions: Some(out),
    })
}

/// `AttachLoadBalancerToSubnets`.
pub fn attach_load_balancer_to_subnets(
    region: &mut Region,
    input: AttachLoadBalancerToSubnetsInput,
) -> Result<AttachLoadBalancerToSubnetsOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let mut all = lb.subnets.clone();
    for s in &input.subnets {
        if !all.contains(s) {
            all.push(s.clone());
        }
    }
    let (vpc, _) = check_subnets(region, &all)?;
    if lb.vpc_id.as_deref() != Some(vpc.as_str()) {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            "All subnets must belong to the load balancer's VPC.",
        ));
    }
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.subnets = all;
    Ok(AttachLoadBalancerToSubnetsOutput {
        subnets: Some(lb.subnets.clone()),
    })
}

/// `DetachLoadBalancerFromSubnets`: a load balancer keeps at least one subnet.
pub fn detach_load_balancer_from_subnets(
    region: &mut Region,
    input: DetachLoadBalancerFromSubnetsInput,
) -> Result<DetachLoadBalancerFromSubnetsOutput, ApiError> {
    let lb = get_mut(region, &input.load_balancer_name)?;
    let left: Vec<String> = lb
        .subnets
        .iter()
        .filter(|s| !input.subnets.contains(s))
        .cloned()
        .collect();
    if left.is_empty() {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            "A load balancer must remain attached to at least one subnet.",
        ));
    }
    lb.subnets = left;
    Ok(DetachLoadBalancerFromSubnetsOutput {
        subnets: Some(lb.subnets.clone()),
    })
}

/// `ApplySecurityGroupsToLoadBalancer`: replaces the groups.
pub fn apply_security_groups_to_load_balancer(
    region: &mut Region,
    input: ApplySecurityGroupsToLoadBalancerInput,
) -> Result<ApplySecurityGroupsToLoadBalancerOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let vpc = lb.vpc_id.clone().unwrap_or_default();
    check_groups(region, &vpc, &input.security_groups)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.security_groups = input.security_groups.clone();
    Ok(ApplySecurityGroupsToLoadBalancerOutput {
        security_groups: Some(lb.security_groups.clone()),
    })
}

/// `CreateLoadBalancerListeners`.
pub fn create_load_balancer_listeners(
    region: &mut Region,
    input: CreateLoadBalancerListenerInput,
) -> Result<CreateLoadBalancerListenerOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let mut listeners = lb.listeners.clone();
    merge_listeners(&lb.name, &mut listeners, &input.listeners)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.listeners = listeners;
    Ok(CreateLoadBalancerListenerOutput {})
}

/// `DeleteLoadBalancerListeners`: ports without a listener are ignored.
pub fn delete_load_balancer_listeners(
    region: &mut Region,
    input: DeleteLoadBalancerListenerInput,
) -> Result<DeleteLoadBalancerListenerOutput, ApiError> {
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.listeners
        .retain(|l| !input.load_balancer_ports.contains(&l.load_balancer_port));
    Ok(DeleteLoadBalancerListenerOutput {})
}
