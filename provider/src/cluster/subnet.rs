//! Subnets: existing ones are validated (in the VPC, public or private as the spec claims);
//! an existing VPC given without subnets lends its own ([`discover`]); the cluster's own are
//! found by tag and CIDR, created where missing, public ones mapping public IPs on launch,
//! all giving their instances the spec's hostname type when it names one, in a dual-stack
//! cluster each holding a /64 of the VPC's IPv6 block and giving its instances an IPv6
//! address, tagged with the spec's tags of each beside the cluster's. A subnet's CIDR and zone cannot change.

use aws_sdk_ec2::types::{
    AttributeBooleanValue, HostnameType, ResourceType, Subnet, SubnetCidrBlockStateCode,
};
use ipnet::Ipv6Net;

use super::{Scope, SubnetStatus, is_new};
use crate::aws_error::aws;
use crate::clients::Clients;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, sent_once};
use crate::spec::{Plan, PlannedSubnet};

fn status_of(plan: &Plan, sn: &Subnet, managed: bool, public: bool) -> SubnetStatus {
    let zone = sn.availability_zone().unwrap_or_default();
    let kind = plan.zone_kind(zone);
    SubnetStatus {
        edge_zone: kind.is_edge().then(|| kind.as_str().to_string()),
        id: sn.subnet_id().unwrap_or_default().to_string(),
        managed,
        cidr: sn.cidr_block().unwrap_or_default().to_string(),
        zone: sn.availability_zone().unwrap_or_default().to_string(),
        public,
        maps_public_ip: sn.map_public_ip_on_launch().unwrap_or(false),
        ipv6_cidr: ipv6_block(sn).map(|c| c.to_string()),
        constrained: plan.zone_constrained(zone),
    }
}

/// The subnet's IPv6 /64 (associated, or being associated).
fn ipv6_block(sn: &Subnet) -> Option<Ipv6Net> {
    sn.ipv6_cidr_block_association_set()
        .iter()
        .filter(|a| {
            matches!(
                a.ipv6_cidr_block_state().and_then(|st| st.state()),
                Some(SubnetCidrBlockStateCode::Associated | SubnetCidrBlockStateCode::Associating)
            )
        })
        .find_map(|a| a.ipv6_cidr_block()?.parse().ok())
}

/// The lowest /64 of the VPC's IPv6 block `vpc` that no subnet of `used` holds.
fn free_ipv6_subnet(vpc: Ipv6Net, used: &[Ipv6Net]) -> Option<Ipv6Net> {
    vpc.subnets(64)
        .ok()?
        .find(|c| !used.iter().any(|u| u.contains(c) || c.contains(u)))
}

/// The /64 a subnet of the cluster takes of the VPC's block `block`: the one the spec
/// names (`named`, inside the block: checked for every subnet first), which no subnet of
/// `held` may hold, or the lowest one free of `used`.
fn take_ipv6(
    vpc_id: &str,
    block: Ipv6Net,
    named: Option<Ipv6Net>,
    used: &[Ipv6Net],
    held: &[&Subnet],
) -> Result<Ipv6Net, Error> {
    let resource = || format!("VPC {vpc_id}");
    let Some(c) = named else {
        return free_ipv6_subnet(block, used).ok_or_else(|| Error::PreExisting {
            resource: resource(),
            problem: format!("its IPv6 block {block} has no free /64 left"),
        });
    };
    if let Some(other) = held.iter().find(|sn| ipv6_block(sn) == Some(c)) {
        return Err(Error::PreExisting {
            resource: resource(),
            problem: format!(
                "its subnet {} holds {c} (spec.network.subnets[].ipv6CidrBlock)",
                other.subnet_id().unwrap_or_default()
            ),
        });
    }
    Ok(c)
}

/// The hostname type of the instances EC2 launches in `sn`, as DescribeSubnets shows it.
fn launch_hostname_type(sn: &Subnet) -> Option<&str> {
    sn.private_dns_name_options_on_launch()
        .and_then(|o| o.hostname_type())
        .map(HostnameType::as_str)
}

/// Whether `subnet_id` routes 0.0.0.0/0 to an internet gateway (through its own route table,
/// or the VPC's main one).
pub async fn is_public(s: &Scope<'_>, vpc_id: &str, subnet_id: &str) -> Result<bool, Error> {
    let own = s
        .ec2()
        .describe_route_tables()
        .filters(filter("association.subnet-id", &[subnet_id]))
        .send()
        .await
        .map_err(aws("DescribeRouteTables"))?;
    let tables = if own.route_tables().is_empty() {
        s.ec2()
            .describe_route_tables()
            .filters(filter("vpc-id", &[vpc_id]))
            .filters(filter("association.main", &["true"]))
            .send()
            .await
            .map_err(aws("DescribeRouteTables"))?
            .route_tables
            .unwrap_or_default()
    } else {
        own.route_tables.unwrap_or_default()
    };
    Ok(tables.iter().flat_map(|t| t.routes()).any(|r| {
        r.destination_cidr_block() == Some("0.0.0.0/0")
            && r.gateway_id().is_some_and(|g| g.starts_with("igw-"))
    }))
}

/// The subnets of an existing VPC given without subnets, each public when its route table
/// (its own, else the VPC's main one) sends 0.0.0.0/0 to an internet gateway: what the cluster
/// uses, never tags or modifies. Checked as named subnets are: at least one of each kind, and
/// a public subnet in every availability zone that has a private one (its load balancer goes
/// there; none goes to a Local Zone or Wavelength Zone). Describe calls only.
pub async fn discover(clients: &Clients, plan: &Plan) -> Result<Vec<PlannedSubnet>, Error> {
    let vpc_id = plan.spec.network.vpc.id.clone().unwrap_or_default();
    let subnets = clients
        .ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .map_err(aws("DescribeSubnets"))?
        .subnets
        .unwrap_or_default();
    let tables = clients
        .ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .map_err(aws("DescribeRouteTables"))?
        .route_tables
        .unwrap_or_default();
    let to_internet = |t: &aws_sdk_ec2::types::RouteTable| {
        t.routes().iter().any(|r| {
            r.destination_cidr_block() == Some("0.0.0.0/0")
                && r.gateway_id().is_some_and(|g| g.starts_with("igw-"))
        })
    };
    let main = tables
        .iter()
        .find(|t| t.associations().iter().any(|a| a.main() == Some(true)));
    let mut out: Vec<PlannedSubnet> = subnets
        .iter()
        .map(|sn| {
            let id = sn.subnet_id().unwrap_or_default();
            let own = tables
                .iter()
                .find(|t| t.associations().iter().any(|a| a.subnet_id() == Some(id)));
            PlannedSubnet {
                id: Some(id.to_string()),
                cidr: None,
                zone: sn.availability_zone().map(String::from),
                public: own.or(main).is_some_and(to_internet),
                ipv6: None,
                tags: Default::default(),
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.zone, !a.public, &a.id).cmp(&(&b.zone, !b.public, &b.id)));
    let mut problems = Vec::new();
    if !out.iter().any(|p| p.public) {
        problems.push(format!(
            "VPC {vpc_id} has no public subnet (none routes 0.0.0.0/0 to an internet gateway)"
        ));
    }
    if !out.iter().any(|p| !p.public) {
        problems.push(format!("VPC {vpc_id} has no private subnet"));
    }
    // A private subnet in a Local Zone or Wavelength Zone needs none: no load balancer
    // goes there.
    let edge = |p: &PlannedSubnet| {
        p.zone
            .as_deref()
            .is_some_and(|z| plan.zone_kind(z).is_edge())
    };
    for p in out.iter().filter(|p| !p.public && !edge(p)) {
        if !out.iter().any(|q| q.public && q.zone == p.zone) {
            problems.push(format!(
                "the private subnet {} in {} has no public subnet in its zone",
                p.id.clone().unwrap_or_default(),
                p.zone.clone().unwrap_or_default()
            ));
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Error::PreExisting {
            resource: format!(
                "the subnets of VPC {vpc_id} (spec.network.vpc.id, no subnets given)"
            ),
            problem: problems.join("; "),
        })
    }
}

/// Reconciles the subnets.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let planned = s.planned_subnets();
    let hostname_type = s
        .plan
        .spec
        .network
        .vpc
        .private_dns_hostname_type_on_launch
        .clone();

    // Existing subnets: validate.
    let existing: Vec<String> = planned.iter().filter_map(|p| p.id.clone()).collect();
    if !existing.is_empty() {
        let found = match s
            .ec2()
            .describe_subnets()
            .set_subnet_ids(Some(existing.clone()))
            .send()
            .await
            .map_err(aws("DescribeSubnets"))
        {
            Ok(o) => o.subnets.unwrap_or_default(),
            Err(e) if e.is_not_found() => {
                return Err(Error::PreExisting {
                    resource: "spec.network.subnets".into(),
                    problem: e.message,
                });
            }
            Err(e) => return Err(e.into()),
        };
        for p in planned.iter().filter(|p| p.id.is_some()) {
            let id = p.id.clone().unwrap_or_default();
            let Some(sn) = found.iter().find(|x| x.subnet_id() == Some(id.as_str())) else {
                return Err(Error::PreExisting {
                    resource: format!("subnet {id}"),
                    problem: "does not exist".into(),
                });
            };
            if sn.vpc_id() != Some(vpc_id.as_str()) {
                return Err(Error::PreExisting {
                    resource: format!("subnet {id}"),
                    problem: format!(
                        "is in {}, not in the cluster's VPC {vpc_id}",
                        sn.vpc_id().unwrap_or_default()
                    ),
                });
            }
            let public = is_public(s, &vpc_id, &id).await?;
            if public != p.public {
                return Err(Error::PreExisting {
                    resource: format!("subnet {id}"),
                    problem: format!(
                        "the spec says it is {}, but its route table {} a route to an internet gateway",
                        if p.public { "public" } else { "private" },
                        if public { "has" } else { "has no" }
                    ),
                });
            }
            if let Some(z) = &p.zone
                && sn.availability_zone() != Some(z.as_str())
            {
                return Err(Error::PreExisting {
                    resource: format!("subnet {id}"),
                    problem: format!(
                        "is in {}, not in {z}",
                        sn.availability_zone().unwrap_or_default()
                    ),
                });
            }
            let st = status_of(s.plan, sn, false, p.public);
            s.status.subnets.push(st);
        }
    }

    // The cluster's own; in an existing VPC of a dual-stack cluster, every subnet of the VPC,
    // since the /64s of the others are not free.
    let wants_ipv6 = s.plan.spec.network.vpc.ipv6.is_some();
    let all_of_vpc = wants_ipv6 && s.plan.spec.network.vpc.id.is_some();
    let (owned, others): (Vec<Subnet>, Vec<Subnet>) = if s.vpc_is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let mut call = s
            .ec2()
            .describe_subnets()
            .filters(filter("vpc-id", &[&vpc_id]));
        if !all_of_vpc {
            call = call.filters(s.owned_filter());
        }
        let name = s.name().to_string();
        call.send()
            .await
            .map_err(aws("DescribeSubnets"))?
            .subnets
            .unwrap_or_default()
            .into_iter()
            .partition(|sn| {
                !all_of_vpc || ownership::is_managed(&name, ownership::ec2_pairs(sn.tags()))
            })
    };
    let wanted: Vec<String> = planned
        .iter()
        .filter_map(|p| p.cidr.map(|c| c.to_string()))
        .collect();
    if let Some(extra) = owned
        .iter()
        .find(|o| !wanted.iter().any(|w| o.cidr_block() == Some(w.as_str())))
    {
        return Err(Error::Immutable {
            field: "spec.network.subnets".into(),
            resource: extra.subnet_id().unwrap_or_default().to_string(),
            current: extra.cidr_block().unwrap_or_default().to_string(),
            wanted: "no such subnet".into(),
        });
    }
    // A subnet keeps its role: public and private subnets differ in their routes, their NAT
    // gateways and the addresses they give, which no step moves from one to the other.
    for p in planned.iter().filter(|p| p.id.is_none()) {
        let kind = if p.public { "public" } else { "private" };
        if let Some(sn) = p.cidr.and_then(|c| owned_at(&owned, c))
            && let Some(role) = ownership::ec2_tag(sn.tags(), ownership::ROLE_KEY)
            && role != kind
        {
            let field = if s.plan.spec.network.subnets.is_empty() {
                "spec.network.vpc.subnetSchema"
            } else {
                "spec.network.subnets[].public"
            };
            return Err(Error::Immutable {
                field: field.into(),
                resource: sn.subnet_id().unwrap_or_default().to_string(),
                current: role.to_string(),
                wanted: kind.into(),
            });
        }
    }
    // A dual-stack cluster's subnets each take a /64 of the VPC's IPv6 block: those found
    // keep theirs, a new one takes the lowest free /64. Until AWS shows the block's range,
    // the subnets the cluster lacks wait for it.
    let vpc_ipv6: Option<Ipv6Net> = s
        .status
        .vpc_ipv6_cidr
        .as_deref()
        .and_then(|c| c.parse().ok());
    // The /64s held, and those the spec names, are not free for the others.
    let mut ipv6_used: Vec<Ipv6Net> = owned
        .iter()
        .chain(&others)
        .filter_map(ipv6_block)
        .chain(planned.iter().filter_map(|p| p.ipv6))
        .collect();
    let held: Vec<&Subnet> = owned.iter().chain(&others).collect();
    let ranges = s.vpc_ranges();
    if !ranges.is_empty() {
        for p in planned.iter().filter(|p| p.id.is_none()) {
            if let Some(c) = p.cidr
                && !ranges.iter().any(|r| r.contains(&c))
            {
                let held: Vec<String> = ranges.iter().map(|r| r.to_string()).collect();
                return Err(Error::PreExisting {
                    resource: format!("VPC {vpc_id}"),
                    problem: format!(
                        "its CIDR {} does not hold the subnet {c} of the spec",
                        held.join(" or ")
                    ),
                });
            }
        }
    }
    // The /64s the spec names lie in the VPC's block (known only once AWS shows it, for an
    // Amazon-provided one), checked before any subnet is made.
    if let Some(block) = vpc_ipv6
        && let Some(c) = planned
            .iter()
            .filter_map(|p| p.ipv6)
            .find(|c| !block.contains(c))
    {
        return Err(Error::PreExisting {
            resource: format!("VPC {vpc_id}"),
            problem: format!(
                "its IPv6 block {block} does not hold {c} (spec.network.subnets[].ipv6CidrBlock)"
            ),
        });
    }
    for p in planned.iter().filter(|p| p.id.is_none()) {
        let (Some(cidr), Some(zone)) = (p.cidr, p.zone.clone()) else {
            continue;
        };
        let kind = if p.public { "public" } else { "private" };
        let name = format!("{}-subnet-{kind}-{zone}", s.name());
        let zone_kind = s.plan.zone_kind(&zone);
        let edge_zone = zone_kind.is_edge().then(|| zone_kind.as_str().to_string());
        // A Wavelength Zone maps no public IPv4 address on launch (AWS refuses the attribute):
        // its instances take a carrier IP address through their interface instead.
        let wavelength = zone_kind == crate::spec::ZoneKind::WavelengthZone;
        let current = owned_at(&owned, cidr).cloned();
        let sn = match current {
            Some(sn) => {
                if sn.availability_zone() != Some(zone.as_str()) {
                    // The default subnets' zones come from the zone count, limit and
                    // selection: a change to those moves them, which no step does.
                    let field = if s.plan.spec.network.subnets.is_empty() {
                        "the default subnets' zones (spec.network.availabilityZoneCount, \
                         spec.network.vpc.availabilityZoneUsageLimit and \
                         availabilityZoneSelection)"
                    } else {
                        "spec.network.subnets[].availabilityZone"
                    };
                    return Err(Error::Immutable {
                        field: field.into(),
                        resource: sn.subnet_id().unwrap_or_default().to_string(),
                        current: sn.availability_zone().unwrap_or_default().to_string(),
                        wanted: zone,
                    });
                }
                let id = sn.subnet_id().unwrap_or_default().to_string();
                if let (Some(named), Some(current)) = (p.ipv6, ipv6_block(&sn))
                    && named != current
                {
                    return Err(Error::Immutable {
                        field: "spec.network.subnets[].ipv6CidrBlock".into(),
                        resource: id,
                        current: current.to_string(),
                        wanted: named.to_string(),
                    });
                }
                let want = s.subnet_tags(kind, &zone, &name, &p.tags);
                s.converge_tags(&id, sn.tags(), &want).await?;
                sn
            }
            None => {
                let ipv6 = match (wants_ipv6, vpc_ipv6) {
                    (false, _) => None,
                    (true, Some(block)) => {
                        let c = take_ipv6(&vpc_id, block, p.ipv6, &ipv6_used, &held)?;
                        ipv6_used.push(c);
                        Some(c)
                    }
                    (true, None) if !s.dry_run && !is_new(&vpc_id) => {
                        s.wait(format!(
                            "subnet {cidr} waits for the IPv6 block of {vpc_id}"
                        ));
                        continue;
                    }
                    (true, None) => None,
                };
                let what = match (wants_ipv6, ipv6.or(p.ipv6)) {
                    (true, Some(c)) => format!("{cidr} and {c}"),
                    (true, None) => format!("{cidr} and a /64 of the VPC's IPv6 block"),
                    (false, _) => cidr.to_string(),
                };
                if !s.act(format!("create subnet {what} {kind} in {zone} ({name})")) {
                    s.status.subnets.push(SubnetStatus {
                        id: format!("<new subnet {cidr}>"),
                        managed: true,
                        cidr: cidr.to_string(),
                        zone: zone.clone(),
                        public: p.public,
                        maps_public_ip: p.public && !wavelength,
                        ipv6_cidr: ipv6.or(p.ipv6).map(|c| c.to_string()),
                        edge_zone: edge_zone.clone(),
                        constrained: s.plan.zone_constrained(&zone),
                    });
                    continue;
                }
                s.ec2()
                    .create_subnet()
                    .vpc_id(&vpc_id)
                    .cidr_block(cidr.to_string())
                    .set_ipv6_cidr_block(ipv6.map(|c| c.to_string()))
                    .availability_zone(&zone)
                    .tag_specifications(crate::sdk::tag_spec(
                        ResourceType::Subnet,
                        &s.subnet_tags(kind, &zone, &name, &p.tags),
                    ))
                    .customize()
                    .config_override(sent_once())
                    .send()
                    .await
                    .map_err(aws("CreateSubnet"))?
                    .subnet
                    .ok_or_else(|| crate::sdk::empty_answer("CreateSubnet"))?
            }
        };
        let id = sn.subnet_id().unwrap_or_default().to_string();
        let mut ipv6 = ipv6_block(&sn);
        if wants_ipv6 && ipv6.is_none() {
            // A subnet of the cluster's from before it was dual stack.
            match vpc_ipv6 {
                None => s.wait(format!("subnet {id} waits for the IPv6 block of {vpc_id}")),
                Some(block) => {
                    let c = take_ipv6(&vpc_id, block, p.ipv6, &ipv6_used, &held)?;
                    if s.act(format!("associate {c} with subnet {id}")) {
                        s.ec2()
                            .associate_subnet_cidr_block()
                            .subnet_id(&id)
                            .ipv6_cidr_block(c.to_string())
                            .send()
                            .await
                            .map_err(aws("AssociateSubnetCidrBlock"))?;
                        ipv6_used.push(c);
                        ipv6 = Some(c);
                    }
                }
            }
        }
        // Instances launched in a dual-stack subnet get an IPv6 address of its /64, as a
        // public subnet's get a public IPv4 address.
        if ipv6.is_some()
            && sn.assign_ipv6_address_on_creation() != Some(true)
            && s.act(format!("assign IPv6 addresses on launch in {id}"))
        {
            s.ec2()
                .modify_subnet_attribute()
                .subnet_id(&id)
                .assign_ipv6_address_on_creation(
                    AttributeBooleanValue::builder().value(true).build(),
                )
                .send()
                .await
                .map_err(aws("ModifySubnetAttribute"))?;
        }
        if p.public
            && !wavelength
            && sn.map_public_ip_on_launch() != Some(true)
            && s.act(format!("map public IPs on launch in {id}"))
        {
            s.ec2()
                .modify_subnet_attribute()
                .subnet_id(&id)
                .map_public_ip_on_launch(AttributeBooleanValue::builder().value(true).build())
                .send()
                .await
                .map_err(aws("ModifySubnetAttribute"))?;
        }
        if let Some(t) = &hostname_type
            && launch_hostname_type(&sn) != Some(t.as_str())
            && s.act(format!("give instances launched in {id} {t} hostnames"))
        {
            // One attribute per ModifySubnetAttribute, as EC2 takes them.
            s.ec2()
                .modify_subnet_attribute()
                .subnet_id(&id)
                .private_dns_hostname_type_on_launch(HostnameType::from(t.as_str()))
                .send()
                .await
                .map_err(aws("ModifySubnetAttribute"))?;
        }
        let mut st = status_of(s.plan, &sn, true, p.public);
        // A public subnet of the cluster maps public IPs (just set, if it did not).
        st.maps_public_ip |= p.public && !wavelength;
        st.ipv6_cidr = ipv6.map(|c| c.to_string());
        s.status.subnets.push(st);
    }
    Ok(())
}

/// Deletes the subnets the cluster owns.
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let owned = s
        .ec2()
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeSubnets"))?
        .subnets
        .unwrap_or_default();
    for sn in owned {
        let id = sn.subnet_id().unwrap_or_default().to_string();
        if !s.act(format!("delete subnet {id}")) {
            continue;
        }
        let r = s
            .ec2()
            .delete_subnet()
            .subnet_id(&id)
            .send()
            .await
            .map_err(aws("DeleteSubnet"));
        s.settle(&format!("subnet {id}"), r)?;
    }
    Ok(())
}

/// The subnet of `owned` with range `cidr`.
fn owned_at(owned: &[Subnet], cidr: ipnet::Ipv4Net) -> Option<&Subnet> {
    let cidr = cidr.to_string();
    owned.iter().find(|o| o.cidr_block() == Some(cidr.as_str()))
}
