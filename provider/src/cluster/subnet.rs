//! Subnets: existing ones are validated (in the VPC, public or private as the spec claims);
//! an existing VPC given without subnets lends its own ([`discover`]); the cluster's own are
//! found by tag and CIDR, created where missing, public ones mapping public IPs on launch,
//! all giving their instances the spec's hostname type when it names one, tagged with the
//! spec's tags of each beside the cluster's. A subnet's CIDR and zone cannot change.

use aws_sdk_ec2::types::{AttributeBooleanValue, HostnameType, ResourceType, Subnet};

use super::{Scope, SubnetStatus};
use crate::aws_error::aws;
use crate::clients::Clients;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, sent_once};
use crate::spec::{Plan, PlannedSubnet};

fn status_of(sn: &Subnet, managed: bool, public: bool) -> SubnetStatus {
    SubnetStatus {
        id: sn.subnet_id().unwrap_or_default().to_string(),
        managed,
        cidr: sn.cidr_block().unwrap_or_default().to_string(),
        zone: sn.availability_zone().unwrap_or_default().to_string(),
        public,
        maps_public_ip: sn.map_public_ip_on_launch().unwrap_or(false),
    }
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
/// a public subnet in every zone that has a private one (its NAT gateway and load balancer
/// go there). Describe calls only.
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
    for p in out.iter().filter(|p| !p.public) {
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
            s.status.subnets.push(status_of(sn, false, p.public));
        }
    }

    // The cluster's own.
    let owned = if s.vpc_is_empty() {
        Vec::new()
    } else {
        s.ec2()
            .describe_subnets()
            .filters(filter("vpc-id", &[&vpc_id]))
            .filters(s.owned_filter())
            .send()
            .await
            .map_err(aws("DescribeSubnets"))?
            .subnets
            .unwrap_or_default()
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
    for p in planned.iter().filter(|p| p.id.is_none()) {
        let (Some(cidr), Some(zone)) = (p.cidr, p.zone.clone()) else {
            continue;
        };
        let kind = if p.public { "public" } else { "private" };
        let name = format!("{}-subnet-{kind}-{zone}", s.name());
        let current = owned_at(&owned, cidr).cloned();
        let sn = match current {
            Some(sn) => {
                if sn.availability_zone() != Some(zone.as_str()) {
                    return Err(Error::Immutable {
                        field: "spec.network.subnets[].availabilityZone".into(),
                        resource: sn.subnet_id().unwrap_or_default().to_string(),
                        current: sn.availability_zone().unwrap_or_default().to_string(),
                        wanted: zone,
                    });
                }
                let id = sn.subnet_id().unwrap_or_default().to_string();
                s.ensure_tags_with(&id, sn.tags(), ResourceType::Subnet, kind, &name, &p.tags)
                    .await?;
                sn
            }
            None => {
                if !s.act(format!("create subnet {cidr} {kind} in {zone} ({name})")) {
                    s.status.subnets.push(SubnetStatus {
                        id: format!("<new subnet {cidr}>"),
                        managed: true,
                        cidr: cidr.to_string(),
                        zone: zone.clone(),
                        public: p.public,
                        maps_public_ip: p.public,
                    });
                    continue;
                }
                s.ec2()
                    .create_subnet()
                    .vpc_id(&vpc_id)
                    .cidr_block(cidr.to_string())
                    .availability_zone(&zone)
                    .tag_specifications(s.tag_spec_with(ResourceType::Subnet, kind, &name, &p.tags))
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
        if p.public
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
        let mut st = status_of(&sn, true, p.public);
        // A public subnet of the cluster maps public IPs (just set, if it did not).
        st.maps_public_ip |= p.public;
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
