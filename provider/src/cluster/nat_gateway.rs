//! NAT gateways and their Elastic IPs: one per zone that has private subnets of the cluster
//! (or one for all), in a public subnet of that zone, created with a deterministic
//! ClientToken so a retry after a crash cannot make a twin. Delete waits for `deleted`
//! before releasing the addresses.

use aws_sdk_ec2::types::{Address, DomainType, NatGateway, NatGatewayState, ResourceType};

use super::{NatStatus, Scope, SubnetStatus};
use crate::aws_error::aws;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, sent_once};

/// The zone whose NAT gateway serves the private subnet `sn`: its own; for one in an edge
/// zone, its own only when that is a Local Zone where the cluster has a public subnet (as
/// CAPA: no NAT gateway runs in a Wavelength Zone), else its parent availability zone's.
pub(super) fn nat_zone(s: &Scope<'_>, sn: &SubnetStatus) -> String {
    if !sn.is_edge() {
        return sn.zone.clone();
    }
    let own_public = !sn.is_wavelength()
        && s.status
            .subnets
            .iter()
            .any(|p| p.public && p.zone == sn.zone);
    if own_public {
        return sn.zone.clone();
    }
    s.plan
        .parent_zone(&sn.zone)
        .map(String::from)
        .unwrap_or_else(|| sn.zone.clone())
}

/// The zones that need a NAT gateway, each with the public subnet to put it in.
fn wanted(s: &Scope<'_>) -> Vec<(String, String)> {
    // Public subnets a NAT gateway may sit in: none in a Wavelength Zone.
    let public: Vec<_> = s
        .status
        .subnets
        .iter()
        .filter(|x| x.public && !x.is_wavelength())
        .collect();
    let Some(first_public) = public.iter().find(|p| !p.is_edge()).or(public.first()) else {
        return Vec::new();
    };
    let mut zones: Vec<String> = s
        .status
        .subnets
        .iter()
        .filter(|x| !x.public && x.managed)
        .map(|x| nat_zone(s, x))
        .collect();
    zones.sort();
    zones.dedup();
    if !s.plan.spec.network.nat_gateway_per_zone {
        zones.truncate(1);
    }
    zones
        .into_iter()
        .map(|z| {
            let subnet = public
                .iter()
                .find(|p| p.zone == z)
                .unwrap_or(first_public)
                .id
                .clone();
            (z, subnet)
        })
        .collect()
}

/// The ClientToken of the NAT gateway of `zone` in `subnet_id`, after `replaced` gateways of
/// that name failed or were deleted (the first one's token has no generation).
fn token(cluster: &str, zone: &str, subnet_id: &str, replaced: usize) -> String {
    let generation = replaced.to_string();
    let mut parts = vec![cluster, "nat", zone, subnet_id];
    if replaced > 0 {
        parts.push(&generation);
    }
    ownership::client_token(&parts)
}

/// The gateway named `name` among `current` that is up or coming up.
fn live<'a>(current: &'a [NatGateway], name: &str) -> Option<&'a NatGateway> {
    current.iter().find(|n| {
        ownership::ec2_tag(n.tags(), "Name") == Some(name)
            && matches!(
                n.state(),
                Some(NatGatewayState::Pending | NatGatewayState::Available)
            )
    })
}

/// How many gateways named `name` among `current` were replaced: failed, deleting or
/// deleted ones.
fn replaced_of(current: &[NatGateway], name: &str) -> usize {
    current
        .iter()
        .filter(|n| ownership::ec2_tag(n.tags(), "Name") == Some(name))
        .filter(|n| {
            matches!(
                n.state(),
                Some(
                    NatGatewayState::Failed | NatGatewayState::Deleting | NatGatewayState::Deleted
                )
            )
        })
        .count()
}

/// The address of ours named `eip_name` for a zone's new gateway: a free one, else (when
/// no gateway of this generation shows, `replaced` being 0) the one in use, which belongs to
/// the gateway this cluster created a moment ago and AWS does not show yet.
fn reusable<'a>(addresses: &'a [Address], eip_name: &str, replaced: usize) -> Option<&'a Address> {
    let ours: Vec<&Address> = addresses
        .iter()
        .filter(|a| ownership::ec2_tag(a.tags(), "Name") == Some(eip_name))
        .collect();
    ours.iter()
        .find(|a| a.association_id().is_none())
        .or_else(|| ours.first().filter(|_| replaced == 0))
        .copied()
}

/// Reconciles the NAT gateways (and their addresses).
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let wanted = wanted(s);
    let current: Vec<NatGateway> = if s.vpc_is_empty() {
        Vec::new()
    } else {
        s.ec2()
            .describe_nat_gateways()
            .filter(filter("vpc-id", &[&vpc_id]))
            .filter(s.owned_filter())
            .filter(filter(
                "state",
                &["pending", "available", "failed", "deleting", "deleted"],
            ))
            .send()
            .await
            .map_err(aws("DescribeNatGateways"))?
            .nat_gateways
            .unwrap_or_default()
    };
    // The addresses are read only when a zone needs work on its gateway: one to create, or
    // tags to converge. A gateway in place whose tags are settled has its address's settled
    // too: the address's tags converge before its gateway's (below), and a reused address's
    // before its gateway is created; so a steady-state pass makes no DescribeAddresses.
    let needs_addresses = wanted.iter().any(|(zone, _)| {
        let name = format!("{}-nat-{zone}", s.name());
        match live(&current, &name) {
            Some(n) => {
                let want = s.ec2_tags(&ResourceType::Natgateway, "nat", &name);
                let (missing, dropped) = ownership::tag_changes(n.tags(), &want);
                !missing.is_empty() || !dropped.is_empty()
            }
            None => true,
        }
    });
    let addresses = if !needs_addresses {
        Vec::new()
    } else {
        s.ec2()
            .describe_addresses()
            .filters(s.owned_filter())
            .send()
            .await
            .map_err(aws("DescribeAddresses"))?
            .addresses
            .unwrap_or_default()
    };
    // The pool the new addresses come from, checked once for all of them before any is made.
    let needed = wanted
        .iter()
        .filter(|(zone, _)| {
            let name = format!("{}-nat-{zone}", s.name());
            let eip_name = format!("{}-eip-nat-{zone}", s.name());
            live(&current, &name).is_none()
                && reusable(&addresses, &eip_name, replaced_of(&current, &name)).is_none()
                && s.plan.border_group(zone).is_none()
        })
        .count();
    let pool = match &s.plan.spec.network.vpc.elastic_ip_pool {
        Some(spec) if needed > 0 => {
            crate::elastic_ip::pool_for(
                s.ec2(),
                spec,
                "spec.network.vpc.elasticIpPool",
                needed,
                "the NAT gateways",
            )
            .await?
        }
        _ => None,
    };
    let mut created = Vec::new();
    for (zone, subnet_id) in wanted {
        let name = format!("{}-nat-{zone}", s.name());
        let named: Vec<&NatGateway> = current
            .iter()
            .filter(|n| ownership::ec2_tag(n.tags(), "Name") == Some(name.as_str()))
            .collect();
        if let Some(n) = live(&current, &name) {
            let id = n.nat_gateway_id().unwrap_or_default().to_string();
            let state = n
                .state()
                .map(|x| x.as_str().to_string())
                .unwrap_or_default();
            if state == "pending" {
                s.wait(format!("nat gateway {id} is pending"));
            }
            // The spec's tags converge on the address, then on the gateway (in that order:
            // a gateway whose tags are settled vouches for its address's).
            let eip_name = format!("{}-eip-nat-{zone}", s.name());
            let held = n
                .nat_gateway_addresses()
                .first()
                .and_then(|a| a.allocation_id());
            if let Some(a) = addresses.iter().find(|a| {
                held.is_some()
                    && a.allocation_id() == held
                    && ownership::ec2_tag(a.tags(), "Name") == Some(eip_name.as_str())
            }) {
                let alloc = a.allocation_id().unwrap_or_default();
                s.ensure_tags(alloc, a.tags(), ResourceType::ElasticIp, "nat", &eip_name)
                    .await?;
            }
            s.ensure_tags(&id, n.tags(), ResourceType::Natgateway, "nat", &name)
                .await?;
            s.status.nat_gateways.push(NatStatus {
                id,
                zone,
                subnet_id: n.subnet_id().unwrap_or_default().to_string(),
                public_ip: n
                    .nat_gateway_addresses()
                    .first()
                    .and_then(|a| a.public_ip())
                    .unwrap_or_default()
                    .to_string(),
                allocation_id: n
                    .nat_gateway_addresses()
                    .first()
                    .and_then(|a| a.allocation_id())
                    .unwrap_or_default()
                    .to_string(),
                state,
            });
            continue;
        }
        // A failed gateway is deleted and replaced (its Elastic IP is free again); the
        // replacement gets a new ClientToken, or AWS would answer the failed one again.
        for failed in named
            .iter()
            .filter(|n| n.state() == Some(&NatGatewayState::Failed))
        {
            let id = failed.nat_gateway_id().unwrap_or_default().to_string();
            if s.act(format!(
                "delete failed nat gateway {id} ({}: {})",
                failed.failure_code().unwrap_or_default(),
                failed.failure_message().unwrap_or_default()
            )) {
                let r = s
                    .ec2()
                    .delete_nat_gateway()
                    .nat_gateway_id(&id)
                    .send()
                    .await
                    .map_err(aws("DeleteNatGateway"));
                s.settle(&format!("nat gateway {id}"), r)?;
            }
        }
        let replaced = replaced_of(&current, &name);
        // An address of ours for this zone (`reusable`), else a new one. An address in use
        // while no gateway shows belongs to the gateway this cluster created a moment ago,
        // which AWS does not show yet: creating it again with the same token and address
        // answers that gateway, where a new address would make a twin and a token mismatch.
        let eip_name = format!("{}-eip-nat-{zone}", s.name());
        let allocation_id = match reusable(&addresses, &eip_name, replaced) {
            Some(a) => {
                // A reused address (allocated by a pass that stopped before its gateway was
                // made) takes the spec's tags now, before its gateway vouches for them.
                let alloc = a.allocation_id().unwrap_or_default().to_string();
                s.ensure_tags(&alloc, a.tags(), ResourceType::ElasticIp, "nat", &eip_name)
                    .await?;
                alloc
            }
            None => {
                // A gateway in a Local Zone takes an address of the zone's network border
                // group (never the spec's pool: its addresses are the region's).
                let border_group = s.plan.border_group(&zone).map(String::from);
                let from_pool = if border_group.is_some() {
                    None
                } else {
                    pool.clone()
                };
                if !s.act(format!("allocate elastic ip ({eip_name})")) {
                    "<new elastic ip>".to_string()
                } else {
                    s.ec2()
                        .allocate_address()
                        .domain(DomainType::Vpc)
                        .set_public_ipv4_pool(from_pool)
                        .set_network_border_group(border_group)
                        .tag_specifications(s.tag_spec(ResourceType::ElasticIp, "nat", &eip_name))
                        .customize()
                        .config_override(sent_once())
                        .send()
                        .await
                        .map_err(aws("AllocateAddress"))?
                        .allocation_id
                        .unwrap_or_default()
                }
            }
        };
        if !s.act(format!("create nat gateway in {subnet_id} ({name})")) {
            s.status.nat_gateways.push(NatStatus {
                id: format!("<new nat gateway {zone}>"),
                zone,
                subnet_id,
                allocation_id,
                public_ip: String::new(),
                state: "planned".into(),
            });
            continue;
        }
        let n = s
            .ec2()
            .create_nat_gateway()
            .subnet_id(&subnet_id)
            .allocation_id(&allocation_id)
            .client_token(token(s.name(), &zone, &subnet_id, replaced))
            .tag_specifications(s.tag_spec(ResourceType::Natgateway, "nat", &name))
            .send()
            .await
            .map_err(aws("CreateNatGateway"))?
            .nat_gateway
            .ok_or_else(|| crate::sdk::empty_answer("CreateNatGateway"))?;
        let id = n.nat_gateway_id().unwrap_or_default().to_string();
        let state = n
            .state()
            .map(|x| x.as_str().to_string())
            .unwrap_or_default();
        let public_ip = n
            .nat_gateway_addresses()
            .first()
            .and_then(|a| a.public_ip())
            .unwrap_or_default()
            .to_string();
        created.push(s.status.nat_gateways.len());
        s.status.nat_gateways.push(NatStatus {
            id,
            zone,
            subnet_id,
            allocation_id,
            public_ip,
            state,
        });
    }
    recheck_created(s, created).await
}

/// Looks once more at the gateways this pass created (`created`: their indexes in the
/// status) before the pass waits for them: a gateway that became available meanwhile holds
/// nothing up (its routes are made in this pass, not the next). One call, only in a pass that
/// created a gateway; a gateway this read does not show yet (AWS's describes lag behind its
/// creates) is still pending.
async fn recheck_created(s: &mut Scope<'_>, created: Vec<usize>) -> Result<(), Error> {
    let ids: Vec<String> = created
        .iter()
        .filter_map(|&i| s.status.nat_gateways.get(i))
        .filter(|n| n.state != "available")
        .map(|n| n.id.clone())
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let now = by_ids(s, &ids).await?;
    for i in created {
        let Some(n) = s.status.nat_gateways.get_mut(i) else {
            continue;
        };
        if let Some(seen) = now
            .iter()
            .find(|g| g.nat_gateway_id() == Some(n.id.as_str()))
        {
            if let Some(state) = seen.state() {
                n.state = state.as_str().to_string();
            }
            if let Some(ip) = seen
                .nat_gateway_addresses()
                .first()
                .and_then(|a| a.public_ip())
            {
                n.public_ip = ip.to_string();
            }
        }
        if n.state != "available" {
            let what = format!("nat gateway {} is {}", n.id, n.state);
            s.wait(what);
        }
    }
    Ok(())
}

/// The gateways `ids` as a filtered describe shows them (a filter, unlike NatGatewayIds, does
/// not refuse an id AWS does not show yet).
async fn by_ids(s: &Scope<'_>, ids: &[String]) -> Result<Vec<NatGateway>, Error> {
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    Ok(s.ec2()
        .describe_nat_gateways()
        .filter(filter("nat-gateway-id", &ids))
        .send()
        .await
        .map_err(aws("DescribeNatGateways"))?
        .nat_gateways
        .unwrap_or_default())
}

/// Deletes the cluster's NAT gateways, then (once they are gone) releases its addresses.
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let owned = s
        .ec2()
        .describe_nat_gateways()
        .filter(s.owned_filter())
        .filter(filter(
            "state",
            &["pending", "available", "failed", "deleting"],
        ))
        .send()
        .await
        .map_err(aws("DescribeNatGateways"))?
        .nat_gateways
        .unwrap_or_default();
    let mut deleting = Vec::new();
    let mut deleted_now = Vec::new();
    for n in owned {
        let id = n.nat_gateway_id().unwrap_or_default().to_string();
        if n.state() == Some(&NatGatewayState::Deleting) {
            deleting.push(id);
            continue;
        }
        if !s.act(format!("delete nat gateway {id}")) {
            continue;
        }
        match s
            .ec2()
            .delete_nat_gateway()
            .nat_gateway_id(&id)
            .send()
            .await
            .map_err(aws("DeleteNatGateway"))
        {
            Ok(_) => deleted_now.push(id),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    // The gateways this pass deleted are looked at once more: gone already, they hold
    // nothing up (the addresses, the subnets and the internet gateway go in this pass). One
    // call, only in a pass that deleted a gateway.
    if !deleted_now.is_empty() {
        let now = by_ids(s, &deleted_now).await?;
        deleted_now.retain(|id| {
            !now.iter().any(|n| {
                n.nat_gateway_id() == Some(id.as_str())
                    && n.state() == Some(&NatGatewayState::Deleted)
            })
        });
    }
    deleting.extend(deleted_now);
    for id in &deleting {
        s.wait(format!("nat gateway {id} is deleting"));
    }
    if !deleting.is_empty() {
        return Ok(());
    }
    let addresses = s
        .ec2()
        .describe_addresses()
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeAddresses"))?
        .addresses
        .unwrap_or_default();
    for a in addresses {
        let id = a.allocation_id().unwrap_or_default().to_string();
        if !s.act(format!("release elastic ip {id}")) {
            continue;
        }
        let r = s
            .ec2()
            .release_address()
            .allocation_id(&id)
            .send()
            .await
            .map_err(aws("ReleaseAddress"));
        s.settle(&format!("elastic ip {id}"), r)?;
    }
    Ok(())
}
