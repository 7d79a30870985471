//! What a target holds, read through Describe calls only: the live resources a cluster owns,
//! by kind, and a snapshot of the pre-existing resources a case created, for byte-identical
//! comparison.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Filter;

use provider::cluster::Step;

use crate::{Failure, aws_failure};

/// Live owned resources by kind (`vpc`, `subnet`, `internetGateway`,
/// `egressOnlyInternetGateway`, `carrierGateway`, `elasticIp`,
/// `natGateway`, `routeTable`, `securityGroup`, `bastion`, `machine`, `volume`,
/// `dedicatedHost`, `loadBalancer`); kinds with none are absent.
pub type Census = BTreeMap<String, usize>;

fn f(name: &str, values: &[&str]) -> Filter {
    let mut b = Filter::builder().name(name);
    for v in values {
        b = b.values(*v);
    }
    b.build()
}

/// The live resources `cluster` owns in the target, step by step of the provider's order
/// (`Step::ORDER`), so a new step cannot be left out.
pub async fn census(clients: &provider::Clients, cluster: &str) -> Result<Census, Failure> {
    let ec2 = &clients.ec2;
    let owned = || {
        f(
            &format!("tag:{}", provider::ownership::cluster_key(cluster)),
            &["owned"],
        )
    };
    let mut c = Census::new();
    let mut put = |k: &str, n: usize| {
        if n > 0 {
            c.insert(k.to_string(), n);
        }
    };
    for step in Step::ORDER {
        match step {
            Step::Vpc => {
                let v = ec2
                    .describe_vpcs()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeVpcs"))?;
                put("vpc", v.vpcs().len());
            }
            Step::Subnet => {
                let s = ec2
                    .describe_subnets()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeSubnets"))?;
                put("subnet", s.subnets().len());
            }
            Step::InternetGateway => {
                let g = ec2
                    .describe_internet_gateways()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeInternetGateways"))?;
                put("internetGateway", g.internet_gateways().len());
                let e = ec2
                    .describe_egress_only_internet_gateways()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeEgressOnlyInternetGateways"))?;
                put(
                    "egressOnlyInternetGateway",
                    e.egress_only_internet_gateways().len(),
                );
                let cg = ec2
                    .describe_carrier_gateways()
                    .filters(owned())
                    .filters(f("state", &["pending", "available"]))
                    .send()
                    .await
                    .map_err(aws_failure("DescribeCarrierGateways"))?;
                put("carrierGateway", cg.carrier_gateways().len());
            }
            Step::NatGateway => {
                let n = ec2
                    .describe_nat_gateways()
                    .filter(owned())
                    .filter(f("state", &["pending", "available", "deleting", "failed"]))
                    .send()
                    .await
                    .map_err(aws_failure("DescribeNatGateways"))?;
                put("natGateway", n.nat_gateways().len());
                let a = ec2
                    .describe_addresses()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeAddresses"))?;
                put("elasticIp", a.addresses().len());
            }
            Step::RouteTable => {
                let r = ec2
                    .describe_route_tables()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeRouteTables"))?;
                put("routeTable", r.route_tables().len());
            }
            Step::SecurityGroup => {
                let sg = ec2
                    .describe_security_groups()
                    .filters(owned())
                    .send()
                    .await
                    .map_err(aws_failure("DescribeSecurityGroups"))?;
                put("securityGroup", sg.security_groups().len());
            }
            // Machines and their volumes are instances too; they go with the bastion.
            Step::Bastion => {
                let live = ["pending", "running", "stopping", "stopped"];
                for (kind, roles) in [
                    ("bastion", &["bastion"][..]),
                    ("machine", &["controlplane", "node"][..]),
                ] {
                    let i = ec2
                        .describe_instances()
                        .filters(owned())
                        .filters(f("tag:sigs.k8s.io/cluster-api-provider-aws/role", roles))
                        .filters(f("instance-state-name", &live))
                        .send()
                        .await
                        .map_err(aws_failure("DescribeInstances"))?;
                    put(
                        kind,
                        i.reservations().iter().map(|r| r.instances().len()).sum(),
                    );
                }
                let vol = ec2
                    .describe_volumes()
                    .filters(owned())
                    .filters(f("status", &["creating", "available", "in-use"]))
                    .send()
                    .await
                    .map_err(aws_failure("DescribeVolumes"))?;
                put("volume", vol.volumes().len());
                // The Dedicated Hosts allocated for machines go with them.
                let hosts = ec2
                    .describe_hosts()
                    .filter(owned())
                    .filter(f("state", &["available"]))
                    .send()
                    .await
                    .map_err(aws_failure("DescribeHosts"))?;
                put("dedicatedHost", hosts.hosts().len());
            }
            Step::LoadBalancer => {
                let key = provider::ownership::cluster_key(cluster);
                let owned_lbs = load_balancer_tags(clients)
                    .await?
                    .iter()
                    .filter(|(_, tags)| {
                        tags.iter()
                            .any(|t| t.key() == key && t.value() == Some("owned"))
                    })
                    .count();
                put("loadBalancer", owned_lbs);
            }
        }
    }
    Ok(c)
}

/// Every EC2 tag matching all of `filters`, every page of DescribeTags.
pub async fn ec2_tags(
    ec2: &aws_sdk_ec2::Client,
    filters: Vec<aws_sdk_ec2::types::Filter>,
) -> Result<Vec<aws_sdk_ec2::types::TagDescription>, Failure> {
    ec2.describe_tags()
        .set_filters(Some(filters))
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(aws_failure("DescribeTags"))
}

/// Every classic load balancer of the target with its tags (DescribeTags takes 20 names at a
/// time).
pub async fn load_balancer_tags(
    clients: &provider::Clients,
) -> Result<Vec<(String, Vec<aws_sdk_elasticloadbalancing::types::Tag>)>, Failure> {
    let pages = clients
        .elb
        .describe_load_balancers()
        .into_paginator()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(aws_failure("DescribeLoadBalancers"))?;
    let names: Vec<String> = pages
        .iter()
        .flat_map(|p| p.load_balancer_descriptions())
        .filter_map(|d| d.load_balancer_name().map(String::from))
        .collect();
    let mut out = Vec::new();
    for chunk in names.chunks(20) {
        let t = clients
            .elb
            .describe_tags()
            .set_load_balancer_names(Some(chunk.to_vec()))
            .send()
            .await
            .map_err(aws_failure("DescribeTags"))?;
        out.extend(t.tag_descriptions().iter().map(|d| {
            (
                d.load_balancer_name().unwrap_or_default().to_string(),
                d.tags().to_vec(),
            )
        }));
    }
    Ok(out)
}

/// Drops a derived field from a Debug rendering: `name: Some(..),` up to the next comma.
fn without(mut text: String, field: &str) -> String {
    let needle = format!("{field}: ");
    while let Some(start) = text.find(&needle) {
        let rest = &text[start..];
        let end = rest.find(", ").map_or(rest.len(), |e| e + 2);
        text.replace_range(start..start + end, "");
    }
    text
}

/// Everything tagged `origin=<origin>` (what a case created beforehand), described: VPCs,
/// subnets (without the derived free-address count), gateways (egress-only ones too), route
/// tables, groups, instances, IPAM pools with their CIDRs and allocations, and the load
/// balancer `lb` with its tags and attributes.
pub async fn snapshot(
    clients: &provider::Clients,
    origin: &str,
    lb: Option<&str>,
) -> Result<String, Failure> {
    let ec2 = &clients.ec2;
    let tagged = || f(&format!("tag:{}", crate::ORIGIN_TAG), &[origin]);
    let vpcs = ec2
        .describe_vpcs()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeVpcs"))?;
    let subnets = ec2
        .describe_subnets()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeSubnets"))?;
    let igws = ec2
        .describe_internet_gateways()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeInternetGateways"))?;
    let eigws = ec2
        .describe_egress_only_internet_gateways()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeEgressOnlyInternetGateways"))?;
    let rts = ec2
        .describe_route_tables()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeRouteTables"))?;
    let sgs = ec2
        .describe_security_groups()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeSecurityGroups"))?;
    let instances = ec2
        .describe_instances()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeInstances"))?;
    let pools = ec2
        .describe_ipam_pools()
        .filters(tagged())
        .send()
        .await
        .map_err(aws_failure("DescribeIpamPools"))?;
    let mut held = String::new();
    for pool in pools.ipam_pools() {
        let id = pool.ipam_pool_id().unwrap_or_default();
        let cidrs = ec2
            .get_ipam_pool_cidrs()
            .ipam_pool_id(id)
            .send()
            .await
            .map_err(aws_failure("GetIpamPoolCidrs"))?;
        let allocations = ec2
            .get_ipam_pool_allocations()
            .ipam_pool_id(id)
            .send()
            .await
            .map_err(aws_failure("GetIpamPoolAllocations"))?;
        held.push_str(&format!(
            "{:?}\n{:?}\n",
            cidrs.ipam_pool_cidrs(),
            allocations.ipam_pool_allocations()
        ));
    }
    let mut out = format!(
        "{:?}\n{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{held}",
        vpcs.vpcs(),
        without(
            format!("{:?}", subnets.subnets()),
            "available_ip_address_count"
        ),
        igws.internet_gateways(),
        eigws.egress_only_internet_gateways(),
        rts.route_tables(),
        sgs.security_groups(),
        instances.reservations(),
        pools.ipam_pools(),
    );
    if let Some(name) = lb {
        let d = clients
            .elb
            .describe_load_balancers()
            .load_balancer_names(name)
            .send()
            .await
            .map_err(aws_failure("DescribeLoadBalancers"))?;
        let t = clients
            .elb
            .describe_tags()
            .load_balancer_names(name)
            .send()
            .await
            .map_err(aws_failure("DescribeTags"))?;
        let a = clients
            .elb
            .describe_load_balancer_attributes()
            .load_balancer_name(name)
            .send()
            .await
            .map_err(aws_failure("DescribeLoadBalancerAttributes"))?;
        out.push_str(&format!(
            "{:?}\n{:?}\n{:?}\n",
            d.load_balancer_descriptions(),
            t.tag_descriptions(),
            a.load_balancer_attributes()
        ));
    }
    Ok(out)
}
