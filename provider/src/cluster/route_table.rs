//! Route tables: one per subnet the cluster created, public ones routing 0.0.0.0/0 to the
//! internet gateway, private ones to the NAT gateway of their zone; in a dual-stack cluster
//! public ones also route ::/0 to the internet gateway, private ones ::/0 to the egress-only
//! internet gateway (dual-stack subnets reach IPv4 over IPv4: no NAT64 route, as CAPA gives
//! one only to IPv6-only subnets). Pre-existing subnets keep
//! their routing untouched.

use aws_sdk_ec2::types::{ResourceType, RouteTable};

use super::{RouteTableStatus, Scope, is_new};
use crate::aws_error::{Class, aws};
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, until_visible};

/// Where the route of `t` to `destination` (an IPv4 or IPv6 range) goes.
fn target_of(t: &RouteTable, destination: &str) -> Option<String> {
    t.routes()
        .iter()
        .find(|r| {
            r.destination_cidr_block() == Some(destination)
                || r.destination_ipv6_cidr_block() == Some(destination)
        })
        .and_then(|r| {
            r.gateway_id()
                .or(r.nat_gateway_id())
                .or(r.egress_only_internet_gateway_id())
                .or(r.carrier_gateway_id())
                .map(String::from)
        })
}

/// Everywhere, over IPv4.
const ANY_IPV4: &str = "0.0.0.0/0";
/// Everywhere, over IPv6.
const ANY_IPV6: &str = "::/0";

/// Reconciles the route tables of the cluster's own subnets.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let tables: Vec<RouteTable> = if s.vpc_is_empty() {
        Vec::new()
    } else {
        s.ec2()
            .describe_route_tables()
            .filters(filter("vpc-id", &[&vpc_id]))
            .filters(s.owned_filter())
            .send()
            .await
            .map_err(aws("DescribeRouteTables"))?
            .route_tables
            .unwrap_or_default()
    };
    let dual_stack =
        s.plan.spec.network.vpc.ipv6.is_some() && (s.status.vpc_ipv6_cidr.is_some() || s.dry_run);
    let subnets: Vec<_> = s
        .status
        .subnets
        .iter()
        .filter(|x| x.managed)
        .cloned()
        .collect();
    for sn in subnets {
        let kind = if sn.public { "public" } else { "private" };
        let name = format!("{}-rt-{kind}-{}", s.name(), sn.zone);
        let nat = if sn.public {
            None
        } else {
            let home = super::nat_gateway::nat_zone(s, &sn);
            let nat = s
                .status
                .nat_gateways
                .iter()
                .find(|n| n.zone == home)
                .or(s.status.nat_gateways.first());
            match nat {
                Some(n) if n.state == "available" => Some(n.id.clone()),
                Some(n) => {
                    s.wait(format!(
                        "route table of {} waits for nat gateway {}",
                        sn.id, n.id
                    ));
                    None
                }
                None => None,
            }
        };
        // A Wavelength Zone's public subnet reaches the internet through the carrier
        // gateway, the others through the internet gateway.
        let gateway = if sn.is_wavelength() {
            s.status.carrier_gateway.as_ref().map(|g| g.id.clone())
        } else {
            s.status.internet_gateway.as_ref().map(|g| g.id.clone())
        };
        let target = if sn.public { gateway.clone() } else { nat };
        // The routes of the subnet's table: the default route, and in a dual-stack cluster
        // (once AWS shows the VPC's IPv6 block) the IPv6 default route, to the internet
        // gateway or (private) the egress-only one.
        let mut routes: Vec<(&str, Option<String>)> = vec![(ANY_IPV4, target.clone())];
        if dual_stack {
            let v6 = if sn.public {
                gateway
            } else {
                s.status
                    .egress_only_internet_gateway
                    .as_ref()
                    .map(|g| g.id.clone())
            };
            routes.push((ANY_IPV6, v6));
        }
        // The table associated with the subnet, else one of ours with its name left
        // unassociated by an interrupted run.
        let existing = tables
            .iter()
            .find(|t| {
                t.associations()
                    .iter()
                    .any(|a| a.subnet_id() == Some(sn.id.as_str()))
            })
            .or_else(|| {
                tables.iter().find(|t| {
                    ownership::ec2_tag(t.tags(), "Name") == Some(name.as_str())
                        && !t.associations().iter().any(|a| a.subnet_id().is_some())
                })
            })
            .cloned();
        let (id, associated, table) = match existing {
            Some(t) => {
                let id = t.route_table_id().unwrap_or_default().to_string();
                s.ensure_tags(&id, t.tags(), ResourceType::RouteTable, kind, &name)
                    .await?;
                let associated = t
                    .associations()
                    .iter()
                    .any(|a| a.subnet_id() == Some(sn.id.as_str()));
                (id, associated, t)
            }
            None => {
                if !s.act(format!("create route table for {} ({name})", sn.id)) {
                    s.status.route_tables.push(RouteTableStatus {
                        id: format!("<new route table {}>", sn.cidr),
                        subnet_id: sn.id.clone(),
                        default_route: target,
                    });
                    continue;
                }
                let t = s
                    .ec2()
                    .create_route_table()
                    .vpc_id(&vpc_id)
                    .client_token(ownership::client_token(&[s.name(), "rt", &vpc_id, &sn.id]))
                    .tag_specifications(s.tag_spec(ResourceType::RouteTable, kind, &name))
                    .send()
                    .await
                    .map_err(aws("CreateRouteTable"))?
                    .route_table
                    .ok_or_else(|| crate::sdk::empty_answer("CreateRouteTable"))?;
                let id = t.route_table_id().unwrap_or_default().to_string();
                (id, false, t)
            }
        };
        for (destination, target) in routes {
            if let Some(target) = target {
                let current = target_of(&table, destination);
                ensure_route(s, &id, destination, &target, current).await?;
            }
        }
        if !associated
            && !is_new(&sn.id)
            && s.act(format!("associate route table {id} with {}", sn.id))
        {
            s.ec2()
                .associate_route_table()
                .route_table_id(&id)
                .subnet_id(&sn.id)
                .send()
                .await
                .map_err(aws("AssociateRouteTable"))?;
        }
        s.status.route_tables.push(RouteTableStatus {
            id,
            subnet_id: sn.id.clone(),
            default_route: target,
        });
    }
    // A gateway of the cluster's own that the user's replaced is no longer routed to.
    super::internet_gateway::retire_egress_only(s).await
}

/// Routes `destination` of table `id` to `target` (an internet, egress-only internet or NAT
/// gateway), where it goes to `current` now.
async fn ensure_route(
    s: &mut Scope<'_>,
    id: &str,
    destination: &str,
    target: &str,
    current: Option<String>,
) -> Result<(), Error> {
    if current.as_deref() == Some(target)
        || !s.act(format!("route {destination} of {id} to {target}"))
    {
        return Ok(());
    }
    // The target or the table may be new in this reconcile, and not shown by AWS for a
    // moment.
    let to = |yes: bool| yes.then(|| target.to_string());
    let (via_nat, via_egress_only, via_carrier) = (
        target.starts_with("nat-"),
        target.starts_with("eigw-"),
        target.starts_with("cagw-"),
    );
    let (nat, egress_only, carrier) = (to(via_nat), to(via_egress_only), to(via_carrier));
    let gateway = to(!via_nat && !via_egress_only && !via_carrier);
    let ipv6 = destination.contains(':');
    let (v4, v6) = if ipv6 {
        (None, Some(destination.to_string()))
    } else {
        (Some(destination.to_string()), None)
    };
    if current.is_some() {
        until_visible(s.clients, || {
            let call = s
                .ec2()
                .replace_route()
                .route_table_id(id)
                .set_destination_cidr_block(v4.clone())
                .set_destination_ipv6_cidr_block(v6.clone())
                .set_nat_gateway_id(nat.clone())
                .set_gateway_id(gateway.clone())
                .set_egress_only_internet_gateway_id(egress_only.clone())
                .set_carrier_gateway_id(carrier.clone());
            async move { call.send().await.map_err(aws("ReplaceRoute")) }
        })
        .await?;
        return Ok(());
    }
    let created = until_visible(s.clients, || {
        let call = s
            .ec2()
            .create_route()
            .route_table_id(id)
            .set_destination_cidr_block(v4.clone())
            .set_destination_ipv6_cidr_block(v6.clone())
            .set_nat_gateway_id(nat.clone())
            .set_gateway_id(gateway.clone())
            .set_egress_only_internet_gateway_id(egress_only.clone())
            .set_carrier_gateway_id(carrier.clone());
        async move { call.send().await.map_err(aws("CreateRoute")) }
    })
    .await;
    match created {
        Ok(_) => Ok(()),
        // The route was read as missing, yet it is there: a create whose answer was lost
        // (and retried), or one AWS does not show yet. Look again.
        Err(e) if e.class() == Class::Duplicate => Err(Error::NotVisibleYet(format!(
            "the route {destination} of {id}"
        ))),
        Err(e) => Err(e.into()),
    }
}

/// Deletes the cluster's own route tables. It runs after the subnets' step: the subnets it
/// deleted took their associations along; an association still there (a subnet still going
/// away, or one someone associated by hand) is removed first.
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let tables = s
        .ec2()
        .describe_route_tables()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeRouteTables"))?
        .route_tables
        .unwrap_or_default();
    for t in tables {
        let id = t.route_table_id().unwrap_or_default().to_string();
        if t.associations().iter().any(|a| a.main() == Some(true)) {
            continue;
        }
        for a in t.associations() {
            let Some(assoc) = a.route_table_association_id() else {
                continue;
            };
            if !s.act(format!("disassociate {assoc} from {id}")) {
                continue;
            }
            match s
                .ec2()
                .disassociate_route_table()
                .association_id(assoc)
                .send()
                .await
                .map_err(aws("DisassociateRouteTable"))
            {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        if !s.act(format!("delete route table {id}")) {
            continue;
        }
        let r = s
            .ec2()
            .delete_route_table()
            .route_table_id(&id)
            .send()
            .await
            .map_err(aws("DeleteRouteTable"));
        s.settle(&format!("route table {id}"), r)?;
    }
    Ok(())
}
