//! The API server's classic load balancer: TCP 6443 -> 6443, a TCP:6443 health check, in the
//! public subnets (internal: the private ones), one per zone, with the apiserver-lb group.
//! An existing load balancer named in the spec is validated (in the cluster's VPC) and used.
//! Subnets, groups, the health check, attributes and tags converge; the scheme is immutable.
//!
//! Delete also removes the classic load balancers the cloud controller manager made for the
//! cluster's Services: those in the cluster's VPC tagged `kubernetes.io/cluster/<name>=owned`
//! (never one without that tag), so that the network can go. A deleted load balancer's
//! nodes outlive it some minutes in EC2 (an interface `ELB <name>` in each of its subnets,
//! holding the subnet and its groups), so its step is done when they are gone too.

use aws_sdk_elasticloadbalancing::types::{
    ConnectionSettings, CrossZoneLoadBalancing, HealthCheck, Listener, LoadBalancerAttributes,
    LoadBalancerDescription, Tag,
};

use super::scope::LoadBalancerSeen;
use super::{LoadBalancerStatus, Scope, is_new};
use crate::aws_error::{Class, aws};
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, found, until_visible};
use crate::spec::{Role, Scheme};

async fn describe(s: &Scope<'_>, name: &str) -> Result<Option<LoadBalancerDescription>, Error> {
    let answer = s
        .elb()
        .describe_load_balancers()
        .load_balancer_names(name)
        .send()
        .await
        .map_err(aws("DescribeLoadBalancers"));
    Ok(found(answer)?.and_then(|o| o.load_balancer_descriptions().first().cloned()))
}

async fn owned_by_cluster(s: &Scope<'_>, name: &str) -> Result<(bool, Vec<Tag>), Error> {
    let tags = s
        .elb()
        .describe_tags()
        .load_balancer_names(name)
        .send()
        .await
        .map_err(aws("DescribeTags"))?;
    let tags: Vec<Tag> = tags
        .tag_descriptions()
        .first()
        .map(|d| d.tags().to_vec())
        .unwrap_or_default();
    let managed = ownership::is_managed(s.name(), ownership::elb_pairs(&tags));
    Ok((managed, tags))
}

/// The idle timeout, in seconds, of a classic load balancer made through the API (with
/// cross-zone load balancing off).
const AWS_DEFAULT_IDLE_TIMEOUT: i32 = 60;

fn status_of(d: &LoadBalancerDescription, managed: bool) -> LoadBalancerStatus {
    LoadBalancerStatus {
        name: d.load_balancer_name().unwrap_or_default().to_string(),
        managed,
        dns_name: d.dns_name().unwrap_or_default().to_string(),
        scheme: d.scheme().unwrap_or_default().to_string(),
    }
}

/// The subnets the load balancer should span: the spec's (each a subnet of the cluster, one
/// per zone), or one per zone, public or private by scheme.
fn wanted_subnets(s: &Scope<'_>) -> Result<Vec<String>, Error> {
    let named = &s.plan.spec.control_plane_load_balancer.subnets;
    if !named.is_empty() {
        let public = s.plan.spec.control_plane_load_balancer.scheme == Scheme::InternetFacing;
        let mut zones: Vec<&str> = Vec::new();
        for id in named {
            let problem = match s.status.subnets.iter().find(|x| &x.id == id) {
                None => "is not one of the cluster's subnets".to_string(),
                Some(sn) if public && !sn.public => "is private (no route to an internet \
                     gateway); an internet-facing load balancer needs public subnets"
                    .to_string(),
                Some(sn) if zones.contains(&sn.zone.as_str()) => format!(
                    "is in {}, as another of the list is; a classic load balancer takes one \
                     subnet per zone",
                    sn.zone
                ),
                Some(sn) => {
                    zones.push(&sn.zone);
                    continue;
                }
            };
            return Err(Error::PreExisting {
                resource: format!("spec.controlPlaneLoadBalancer.subnets: {id}"),
                problem,
            });
        }
        let mut out = named.clone();
        out.sort();
        return Ok(out);
    }
    let public = s.plan.spec.control_plane_load_balancer.scheme == Scheme::InternetFacing;
    let mut zones = Vec::new();
    let mut out = Vec::new();
    // One per availability zone: a classic load balancer has no edge zone.
    for sn in s
        .status
        .subnets
        .iter()
        .filter(|x| x.public == public && !x.is_edge())
    {
        if !zones.contains(&sn.zone) {
            zones.push(sn.zone.clone());
            out.push(sn.id.clone());
        }
    }
    out.sort();
    Ok(out)
}

/// Moves the balancer `name` from the subnets it has (`have`) to those it should span
/// (`want`), within classic ELB's rules: one subnet per zone, and never none. New subnets in
/// zones it does not span are attached first; then the old subnets of zones a new one takes
/// are detached, the new ones attached, and the other old ones detached. A move that would
/// leave it no subnet on the way (its only subnet for another of the same zone) is refused,
/// saying why.
async fn converge_subnets(
    s: &mut Scope<'_>,
    name: &str,
    have: &[String],
    want: &[String],
) -> Result<(), Error> {
    let zone_of = |id: &str| {
        s.status
            .subnets
            .iter()
            .find(|x| x.id == id)
            .map(|x| x.zone.clone())
    };
    let held_zones: Vec<Option<String>> = have.iter().map(|x| zone_of(x)).collect();
    let (first, last): (Vec<String>, Vec<String>) = want
        .iter()
        .filter(|x| !have.contains(x) && !is_new(x))
        .cloned()
        .partition(|x| {
            let z = zone_of(x);
            z.is_some() && !held_zones.contains(&z)
        });
    // Old subnets whose zone a new subnet takes (an unknown zone might be one).
    let last_zones: Vec<Option<String>> = last.iter().map(|x| zone_of(x)).collect();
    let (in_the_way, other_old): (Vec<String>, Vec<String>) = have
        .iter()
        .filter(|x| !want.contains(x))
        .cloned()
        .partition(|x| {
            let z = zone_of(x);
            z.is_none() || last_zones.contains(&z) || last_zones.contains(&None)
        });
    let kept = have.iter().filter(|x| want.contains(x)).count();
    if !in_the_way.is_empty() && kept + first.len() + other_old.len() == 0 {
        return Err(Error::Conflict(format!(
            "load balancer {name} cannot move from {} to {}: a classic load balancer keeps at \
             least one subnet and one per zone; name a subnet of another zone too, then drop \
             the old one",
            in_the_way.join(", "),
            last.join(", ")
        )));
    }
    attach(s, name, first).await?;
    detach(s, name, in_the_way).await?;
    attach(s, name, last).await?;
    detach(s, name, other_old).await
}

/// Detaches the balancer `name` from `subnets` (none: no call).
async fn detach(s: &mut Scope<'_>, name: &str, subnets: Vec<String>) -> Result<(), Error> {
    if !subnets.is_empty() && s.act(format!("detach {name} from {}", subnets.join(", "))) {
        s.elb()
            .detach_load_balancer_from_subnets()
            .load_balancer_name(name)
            .set_subnets(Some(subnets))
            .send()
            .await
            .map_err(aws("DetachLoadBalancerFromSubnets"))?;
    }
    Ok(())
}

/// Attaches the balancer `name` to `subnets` (none: no call).
async fn attach(s: &mut Scope<'_>, name: &str, subnets: Vec<String>) -> Result<(), Error> {
    if !subnets.is_empty() && s.act(format!("attach {name} to {}", subnets.join(", "))) {
        s.elb()
            .attach_load_balancer_to_subnets()
            .load_balancer_name(name)
            .set_subnets(Some(subnets))
            .send()
            .await
            .map_err(aws("AttachLoadBalancerToSubnets"))?;
    }
    Ok(())
}

/// The refusal of a load balancer name another owner holds.
fn name_taken(name: &str, cluster: &str) -> Error {
    Error::Conflict(format!(
        "a load balancer named {name} exists and is not owned by cluster {cluster}; name \
         another in spec.controlPlaneLoadBalancer.name, or use it with existingName"
    ))
}

/// Refuses, before anything changes, a scheme change of the cluster's own load balancer, and
/// a name someone else's load balancer holds (the other steps would otherwise converge their
/// part, such as the groups' rules, first).
pub async fn preflight(s: &mut Scope<'_>) -> Result<(), Error> {
    let spec = &s.plan.spec.control_plane_load_balancer;
    if spec.existing_name.is_some() {
        return Ok(());
    }
    let name = &s.plan.load_balancer_name;
    let Some(d) = describe(s, name).await? else {
        s.load_balancer_seen = LoadBalancerSeen::Absent;
        return Ok(());
    };
    let (managed, tags) = owned_by_cluster(s, name).await?;
    if !managed {
        return Err(name_taken(name, s.name()));
    }
    if d.scheme() != Some(spec.scheme.as_str()) {
        return Err(Error::Immutable {
            field: "spec.controlPlaneLoadBalancer.scheme".into(),
            resource: name.clone(),
            current: d.scheme().unwrap_or_default().to_string(),
            wanted: spec.scheme.as_str().to_string(),
        });
    }
    s.load_balancer_seen = LoadBalancerSeen::Present(Box::new(d), tags);
    Ok(())
}

/// Reconciles the load balancer.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let spec = s.plan.spec.control_plane_load_balancer.clone();
    let name = s.plan.load_balancer_name.clone();
    if spec.existing_name.is_some() {
        let Some(d) = describe(s, &name).await? else {
            return Err(Error::PreExisting {
                resource: format!(
                    "load balancer {name} (spec.controlPlaneLoadBalancer.existingName)"
                ),
                problem: "does not exist".into(),
            });
        };
        if d.vpc_id() != Some(vpc_id.as_str()) {
            return Err(Error::PreExisting {
                resource: format!("load balancer {name}"),
                problem: format!(
                    "is in {}, not in the cluster's VPC {vpc_id}",
                    d.vpc_id().unwrap_or("no VPC")
                ),
            });
        }
        s.status.load_balancer = Some(status_of(&d, false));
        return Ok(());
    }
    let subnets = wanted_subnets(s)?;
    let group = s
        .status
        .security_groups
        .get(&Role::ApiServerLb)
        .map(|g| g.id.clone())
        .unwrap_or_default();
    // The balancer's groups: the cluster's own, then the spec's others.
    let groups: Vec<String> = std::iter::once(group.clone())
        .chain(spec.additional_security_groups.iter().cloned())
        .collect();
    let scheme = spec.scheme.as_str();
    let hc = &s.plan.health_check;
    let health_check = HealthCheck::builder()
        .target(&hc.target)
        .interval(hc.interval)
        .timeout(hc.timeout)
        .healthy_threshold(hc.healthy_threshold)
        .unhealthy_threshold(hc.unhealthy_threshold)
        .build()
        .map_err(|e| Error::Conflict(format!("health check: {e}")))?;
    let tags = s.tags("apiserver", &name);

    let seen = std::mem::take(&mut s.load_balancer_seen);
    let found = if is_new(&vpc_id) {
        None
    } else {
        match seen {
            LoadBalancerSeen::Present(d, tags) => Some((*d, tags)),
            LoadBalancerSeen::Absent => None,
            LoadBalancerSeen::NotRead => match describe(s, &name).await? {
                Some(d) => {
                    let (managed, current_tags) = owned_by_cluster(s, &name).await?;
                    if !managed {
                        return Err(name_taken(&name, s.name()));
                    }
                    Some((d, current_tags))
                }
                None => None,
            },
        }
    };
    let created = found.is_none();
    let d = match found {
        Some((d, current_tags)) => {
            if d.scheme() != Some(scheme) {
                return Err(Error::Immutable {
                    field: "spec.controlPlaneLoadBalancer.scheme".into(),
                    resource: name,
                    current: d.scheme().unwrap_or_default().to_string(),
                    wanted: scheme.to_string(),
                });
            }
            let missing: Vec<Tag> = tags
                .iter()
                .filter(|(k, v)| {
                    !current_tags
                        .iter()
                        .any(|t| t.key() == k.as_str() && t.value() == Some(v.as_str()))
                })
                .filter_map(|(k, v)| Tag::builder().key(k).value(v).build().ok())
                .collect();
            let last = current_tags
                .iter()
                .find(|t| t.key() == ownership::LAST_APPLIED_KEY)
                .and_then(|t| t.value());
            let dropped: Vec<aws_sdk_elasticloadbalancing::types::TagKeyOnly> =
                ownership::last_applied(last)
                    .into_iter()
                    .filter(|k| !tags.contains_key(k) && current_tags.iter().any(|t| t.key() == k))
                    .map(|k| {
                        aws_sdk_elasticloadbalancing::types::TagKeyOnly::builder()
                            .key(k)
                            .build()
                    })
                    .collect();
            if !dropped.is_empty() && s.act(format!("untag load balancer {name}")) {
                s.elb()
                    .remove_tags()
                    .load_balancer_names(&name)
                    .set_tags(Some(dropped))
                    .send()
                    .await
                    .map_err(aws("RemoveTags"))?;
            }
            if !missing.is_empty() && s.act(format!("tag load balancer {name}")) {
                s.elb()
                    .add_tags()
                    .load_balancer_names(&name)
                    .set_tags(Some(missing))
                    .send()
                    .await
                    .map_err(aws("AddTags"))?;
            }
            converge_subnets(s, &name, d.subnets(), &subnets).await?;
            let mut have: Vec<&String> = d.security_groups().iter().collect();
            let mut want: Vec<&String> = groups.iter().collect();
            have.sort();
            want.sort();
            if have != want
                && !is_new(&group)
                && s.act(format!("apply {} to {name}", groups.join(", ")))
            {
                s.elb()
                    .apply_security_groups_to_load_balancer()
                    .load_balancer_name(&name)
                    .set_security_groups(Some(groups.clone()))
                    .send()
                    .await
                    .map_err(aws("ApplySecurityGroupsToLoadBalancer"))?;
            }
            if d.health_check() != Some(&health_check) {
                configure_health_check(s, &name, health_check.clone()).await?;
            }
            d
        }
        None => {
            if !s.act(format!("create load balancer {name} ({scheme})")) {
                s.status.load_balancer = Some(LoadBalancerStatus {
                    name,
                    managed: true,
                    dns_name: String::new(),
                    scheme: scheme.to_string(),
                });
                return Ok(());
            }
            let listener = Listener::builder()
                .protocol("TCP")
                .load_balancer_port(6443)
                .instance_protocol("TCP")
                .instance_port(6443)
                .build()
                .map_err(|e| Error::Conflict(format!("listener: {e}")))?;
            let mut call = s
                .elb()
                .create_load_balancer()
                .load_balancer_name(&name)
                .listeners(listener)
                .set_subnets(Some(subnets.clone()))
                .set_security_groups(Some(groups.clone()));
            if spec.scheme == Scheme::Internal {
                call = call.scheme("internal");
            }
            for (k, v) in &tags {
                if let Ok(t) = Tag::builder().key(k).value(v).build() {
                    call = call.tags(t);
                }
            }
            let made = match call.send().await.map_err(aws("CreateLoadBalancer")) {
                Ok(made) => made,
                // No describe showed the name before the create: the balancer this cluster
                // created a moment ago (its answer lost), not visible yet.
                Err(e) if e.class() == Class::Duplicate => {
                    return Err(Error::NotVisibleYet(format!("load balancer {name}")));
                }
                Err(e) => return Err(e.into()),
            };
            // AWS may not show the new balancer for a moment: its health check is tried
            // again until it does.
            if s.act(format!(
                "configure health check {} on {name}",
                health_check.target()
            )) {
                until_visible(s.clients, || async {
                    s.elb()
                        .configure_health_check()
                        .load_balancer_name(&name)
                        .health_check(health_check.clone())
                        .send()
                        .await
                        .map_err(aws("ConfigureHealthCheck"))
                })
                .await?;
            }
            // What the status takes (name, DNS name, scheme) is fixed at creation, and the
            // create answers the DNS name.
            LoadBalancerDescription::builder()
                .load_balancer_name(&name)
                .set_dns_name(made.dns_name)
                .scheme(scheme)
                .build()
        }
    };

    // Attributes: cross-zone and idle timeout. A balancer created a moment ago has AWS's
    // defaults for one made through the API: nothing to read.
    let (cross, idle) = if created {
        (false, Some(AWS_DEFAULT_IDLE_TIMEOUT))
    } else {
        let attrs = s
            .elb()
            .describe_load_balancer_attributes()
            .load_balancer_name(&name)
            .send()
            .await
            .map_err(aws("DescribeLoadBalancerAttributes"))?;
        let a = attrs.load_balancer_attributes();
        (
            a.and_then(|a| a.cross_zone_load_balancing())
                .is_some_and(|c| c.enabled()),
            a.and_then(|a| a.connection_settings())
                .map(|c| c.idle_timeout()),
        )
    };
    if (cross != spec.cross_zone || idle != Some(s.plan.idle_timeout))
        && s.act(format!(
            "set {name} attributes (cross-zone {}, idle timeout {} s)",
            spec.cross_zone, s.plan.idle_timeout
        ))
    {
        let attributes = LoadBalancerAttributes::builder()
            .cross_zone_load_balancing(
                CrossZoneLoadBalancing::builder()
                    .enabled(spec.cross_zone)
                    .build(),
            )
            .connection_settings(
                ConnectionSettings::builder()
                    .idle_timeout(s.plan.idle_timeout)
                    .build()
                    .map_err(|e| Error::Conflict(format!("attributes: {e}")))?,
            )
            .build();
        s.elb()
            .modify_load_balancer_attributes()
            .load_balancer_name(&name)
            .load_balancer_attributes(attributes)
            .send()
            .await
            .map_err(aws("ModifyLoadBalancerAttributes"))?;
    }
    s.status.load_balancer = Some(status_of(&d, true));
    Ok(())
}

async fn configure_health_check(
    s: &mut Scope<'_>,
    name: &str,
    health_check: HealthCheck,
) -> Result<(), Error> {
    if s.act(format!(
        "configure health check {} on {name}",
        health_check.target()
    )) {
        s.elb()
            .configure_health_check()
            .load_balancer_name(name)
            .health_check(health_check)
            .send()
            .await
            .map_err(aws("ConfigureHealthCheck"))?;
    }
    Ok(())
}

/// Deletes the load balancer if the cluster owns it, and waits until it is gone.
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let listed = delete_service_load_balancers(s).await?;
    if s.plan
        .spec
        .control_plane_load_balancer
        .existing_name
        .is_some()
    {
        return Ok(());
    }
    let name = s.plan.load_balancer_name.clone();
    // Shown in the listing of the VPC: its tags are at hand. Else (no VPC, or a listing that
    // does not show it yet) looked up by name.
    let managed = match listed {
        Some(tags) => ownership::is_managed(s.name(), ownership::elb_pairs(&tags)),
        None => {
            if describe(s, &name).await?.is_none() {
                // Gone, or never made: done once its nodes are gone too.
                wait_for_nodes(s, &name).await?;
                return Ok(());
            }
            owned_by_cluster(s, &name).await?.0
        }
    };
    if !managed || !s.act(format!("delete load balancer {name}")) {
        return Ok(());
    }
    s.elb()
        .delete_load_balancer()
        .load_balancer_name(&name)
        .send()
        .await
        .map_err(aws("DeleteLoadBalancer"))?;
    if describe(s, &name).await?.is_some() {
        s.wait(format!("load balancer {name} is being deleted"));
    } else {
        wait_for_nodes(s, &name).await?;
    }
    Ok(())
}

/// Waits while the cluster's VPC still holds a node interface of load balancer `name`
/// (description `ELB <name>`): ELB removes them some minutes after the load balancer, and
/// until then they keep its subnets, its groups and (internet-facing) the gateway from
/// deletion. A load balancer named `name` in the cluster's VPC is the cluster's own (its name
/// comes from the cluster's), so none of these interfaces is anyone else's.
async fn wait_for_nodes(s: &mut Scope<'_>, name: &str) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    if is_new(&vpc_id) {
        return Ok(());
    }
    let left = s
        .ec2()
        .describe_network_interfaces()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("description", &[&format!("ELB {name}")]))
        .send()
        .await
        .map_err(aws("DescribeNetworkInterfaces"))?;
    if !left.network_interfaces().is_empty() {
        s.wait(format!(
            "the network interfaces of load balancer {name} are going"
        ));
    }
    Ok(())
}

/// The classic load balancers in `vpc_id`, each with its tags.
async fn in_vpc_with_tags(s: &Scope<'_>, vpc_id: &str) -> Result<Vec<(String, Vec<Tag>)>, Error> {
    let mut in_vpc = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let page = s
            .elb()
            .describe_load_balancers()
            .set_marker(marker.clone())
            .send()
            .await
            .map_err(aws("DescribeLoadBalancers"))?;
        in_vpc.extend(
            page.load_balancer_descriptions()
                .iter()
                .filter(|d| d.vpc_id() == Some(vpc_id))
                .filter_map(|d| d.load_balancer_name().map(String::from)),
        );
        marker = page.next_marker().map(String::from);
        if marker.is_none() {
            break;
        }
    }
    let mut out = Vec::new();
    // DescribeTags takes at most 20 names.
    for names in in_vpc.chunks(20) {
        let tags = s
            .elb()
            .describe_tags()
            .set_load_balancer_names(Some(names.to_vec()))
            .send()
            .await
            .map_err(aws("DescribeTags"))?;
        for d in tags.tag_descriptions() {
            if let Some(name) = d.load_balancer_name() {
                out.push((name.to_string(), d.tags().to_vec()));
            }
        }
    }
    Ok(out)
}

/// Deletes the load balancers the cloud controller manager made for the cluster's Services
/// (tagged `kubernetes.io/cluster/<name>=owned`, in the cluster's VPC, without the
/// provider's own ownership tag). Returns the tags of the cluster's own balancer when the
/// listing of the VPC showed it (its step then reads them from here, not again).
async fn delete_service_load_balancers(s: &mut Scope<'_>) -> Result<Option<Vec<Tag>>, Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(None);
    };
    if is_new(&vpc_id) {
        return Ok(None);
    }
    let key = ownership::kubernetes_cluster_key(s.name());
    let listed = in_vpc_with_tags(s, &vpc_id).await?;
    let own = listed
        .iter()
        .find(|(name, _)| *name == s.plan.load_balancer_name)
        .map(|(_, tags)| tags.clone());
    for (name, tags) in listed {
        let service = ownership::elb_pairs(&tags).any(|(k, v)| k == key && v == ownership::OWNED);
        if !service || ownership::is_managed(s.name(), ownership::elb_pairs(&tags)) {
            continue;
        }
        if !s.act(format!("delete the Service load balancer {name}")) {
            continue;
        }
        let r = s
            .elb()
            .delete_load_balancer()
            .load_balancer_name(&name)
            .send()
            .await
            .map_err(aws("DeleteLoadBalancer"));
        found(r)?;
        if describe(s, &name).await?.is_some() {
            s.wait(format!("Service load balancer {name} is being deleted"));
        } else {
            wait_for_nodes(s, &name).await?;
        }
    }
    Ok(own)
}
