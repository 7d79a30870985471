//! The VPC: an existing one (validated, never modified), or the cluster's own, found by its
//! owned tag, created with DNS support and hostnames on, given the spec's secondary IPv4
//! ranges (AssociateVpcCidrBlock) where it lacks one, and, when the spec asks, with its
//! `default` security group kept empty, and, for a dual-stack cluster, an Amazon-provided
//! IPv6 /56 (an existing VPC of a dual-stack cluster must hold one already). Its CIDR is immutable, and a secondary range or IPv6 block is never taken away:
//! one the spec no longer names is an error, as a subnet is.

use aws_sdk_ec2::types::{
    AddressFamily, AttributeBooleanValue, ResourceType, Vpc, VpcAttributeName,
    VpcCidrBlockStateCode,
};

use super::{Res, Scope, is_new};
use crate::aws_error::aws;
use crate::error::Error;
use crate::sdk::{filter, found, sent_once};
use crate::spec::IpamPool;

fn record(s: &mut Scope<'_>, v: &Vpc, managed: bool) {
    s.status.vpc = Some(Res {
        id: v.vpc_id().unwrap_or_default().to_string(),
        managed,
    });
    s.status.vpc_cidr = v.cidr_block().map(String::from);
    s.status.vpc_secondary_cidrs = secondary_ranges(v);
    s.status.vpc_ipv6_cidr = ipv6_block(v);
}

/// Whether a CIDR block association is held or being made (not being taken away, or failed).
fn live(state: Option<&VpcCidrBlockStateCode>) -> bool {
    matches!(
        state,
        Some(VpcCidrBlockStateCode::Associated | VpcCidrBlockStateCode::Associating)
    )
}

/// Whether the VPC holds an IPv6 block or is being given one (its range may not be shown yet).
fn has_ipv6(v: &Vpc) -> bool {
    v.ipv6_cidr_block_association_set()
        .iter()
        .any(|a| live(a.ipv6_cidr_block_state().and_then(|st| st.state())))
}

/// The VPC's IPv6 block, once AWS shows its range.
fn ipv6_block(v: &Vpc) -> Option<String> {
    v.ipv6_cidr_block_association_set()
        .iter()
        .filter(|a| live(a.ipv6_cidr_block_state().and_then(|st| st.state())))
        .find_map(|a| a.ipv6_cidr_block().filter(|c| !c.is_empty()))
        .map(String::from)
}

/// The VPC's IPv4 ranges besides its primary one that it holds or is being given (not those
/// being taken away, or whose association failed).
fn secondary_ranges(v: &Vpc) -> Vec<String> {
    v.cidr_block_association_set()
        .iter()
        .filter(|a| live(a.cidr_block_state().and_then(|st| st.state())))
        .filter_map(|a| a.cidr_block())
        .filter(|c| Some(*c) != v.cidr_block())
        .map(String::from)
        .collect()
}

/// Finds the cluster's VPC (the spec's, or the owned one) without changing anything.
pub async fn find(s: &mut Scope<'_>) -> Result<Option<Vpc>, Error> {
    if let Some(id) = s.plan.spec.network.vpc.id.clone() {
        let out = s
            .ec2()
            .describe_vpcs()
            .vpc_ids(&id)
            .send()
            .await
            .map_err(aws("DescribeVpcs"));
        let vpc = found(out)?.and_then(|o| o.vpcs().first().cloned());
        let Some(vpc) = vpc else {
            return Err(Error::PreExisting {
                resource: format!("VPC {id} (spec.network.vpc.id)"),
                problem: format!("does not exist in {}", s.clients.region),
            });
        };
        record(s, &vpc, false);
        return Ok(Some(vpc));
    }
    let found = s
        .ec2()
        .describe_vpcs()
        .filters(s.owned_filter())
        .filters(filter("state", &["pending", "available"]))
        .send()
        .await
        .map_err(aws("DescribeVpcs"))?;
    match found.vpcs() {
        [] => Ok(None),
        [one] => {
            record(s, one, true);
            Ok(Some(one.clone()))
        }
        many => Err(Error::Conflict(format!(
            "{} VPCs are tagged as owned by cluster {}: {}; delete the extra ones",
            many.len(),
            s.name(),
            many.iter()
                .filter_map(|v| v.vpc_id())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Reconciles the VPC.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let found = find(s).await?;
    if let Some(id) = s.plan.spec.network.vpc.id.clone() {
        if s.plan.spec.network.vpc.ipv6.is_some() {
            existing_ipv6(s, &id, found.as_ref())?;
        }
        return super::internet_gateway::check_users(s, &id).await;
    }
    let wanted = s
        .plan
        .vpc_cidr
        .map(|c| c.to_string())
        .unwrap_or_else(|| crate::spec::DEFAULT_VPC_CIDR.to_string());
    // A range from an IPAM pool is whatever the pool gave.
    let pool = s.plan.spec.network.vpc.ipam_pool.clone();
    let name = format!("{}-vpc", s.name());
    let vpc = match found {
        Some(v) => {
            if pool.is_none() && v.cidr_block() != Some(wanted.as_str()) {
                return Err(Error::Immutable {
                    field: "spec.network.vpc.cidrBlock".into(),
                    resource: v.vpc_id().unwrap_or_default().to_string(),
                    current: v.cidr_block().unwrap_or_default().to_string(),
                    wanted,
                });
            }
            let id = v.vpc_id().unwrap_or_default().to_string();
            s.ensure_tags(&id, v.tags(), ResourceType::Vpc, "common", &name)
                .await?;
            v
        }
        None => {
            let from_pool = match &pool {
                Some(p) => Some((
                    ipam_pool_id(s, p, "spec.network.vpc.ipamPool", AddressFamily::Ipv4).await?,
                    p.netmask_length
                        .unwrap_or(crate::spec::DEFAULT_IPAM_NETMASK_LENGTH),
                )),
                None => None,
            };
            let what = match &from_pool {
                Some((pool_id, len)) => format!("a /{len} of IPAM pool {pool_id}"),
                None => wanted.clone(),
            };
            let what = match ipv6_ask(s) {
                Some(ask) => format!("{what} and {}", ask.describe()),
                None => what,
            };
            if !s.act(format!("create vpc {what} ({name})")) {
                s.status.vpc = Some(Res {
                    id: "<new vpc>".into(),
                    managed: true,
                });
                s.status.vpc_cidr = from_pool.is_none().then_some(wanted);
                secondary(s, "<new vpc>").await?;
                if s.plan.spec.network.vpc.empty_default_security_group {
                    s.act("empty the default security group of <new vpc>".into());
                }
                return Ok(());
            }
            let call = s.ec2().create_vpc();
            let call = match from_pool {
                Some((pool_id, len)) => call.ipv4_ipam_pool_id(pool_id).ipv4_netmask_length(len),
                None => call.cidr_block(&wanted),
            };
            let call = match ipv6_ask(s) {
                Some(Ipv6Ask::Amazon) => call.amazon_provided_ipv6_cidr_block(true),
                Some(Ipv6Ask::Pool { pool, cidr }) => {
                    check_ipv6_pool(s, &pool, cidr.as_deref()).await?;
                    call.ipv6_pool(pool).set_ipv6_cidr_block(cidr)
                }
                Some(Ipv6Ask::Ipam { pool, len }) => {
                    let id = ipam_pool_id(s, &pool, IPV6_IPAM_POOL, AddressFamily::Ipv6).await?;
                    call.ipv6_ipam_pool_id(id).ipv6_netmask_length(len)
                }
                None => call,
            };
            let out = call
                .tag_specifications(s.tag_spec(ResourceType::Vpc, "common", &name))
                .customize()
                .config_override(sent_once())
                .send()
                .await
                .map_err(aws("CreateVpc"))?;
            let v = out
                .vpc
                .ok_or_else(|| crate::sdk::empty_answer("CreateVpc"))?;
            record(s, &v, true);
            s.vpc_created = true;
            v
        }
    };
    let id = vpc.vpc_id().unwrap_or_default().to_string();
    secondary(s, &id).await?;
    if is_new(&id) {
        return Ok(());
    }
    ipv6(s, &id, &vpc).await?;
    if s.plan.spec.network.vpc.empty_default_security_group {
        empty_default_group(s, &id).await?;
    }
    for attr in [
        VpcAttributeName::EnableDnsSupport,
        VpcAttributeName::EnableDnsHostnames,
    ] {
        // A VPC created a moment ago has AWS's defaults for a nondefault VPC (DNS support
        // on, DNS hostnames off): nothing to read. One found holds whatever it was left with.
        let on = if s.vpc_created {
            attr == VpcAttributeName::EnableDnsSupport
        } else {
            let current = s
                .ec2()
                .describe_vpc_attribute()
                .vpc_id(&id)
                .attribute(attr.clone())
                .send()
                .await
                .map_err(aws("DescribeVpcAttribute"))?;
            match attr {
                VpcAttributeName::EnableDnsSupport => current.enable_dns_support(),
                _ => current.enable_dns_hostnames(),
            }
            .and_then(|a| a.value())
            .unwrap_or(false)
        };
        if on || !s.act(format!("turn on {} of {id}", attr.as_str())) {
            continue;
        }
        let on = AttributeBooleanValue::builder().value(true).build();
        let call = s.ec2().modify_vpc_attribute().vpc_id(&id);
        let call = match attr {
            VpcAttributeName::EnableDnsSupport => call.enable_dns_support(on),
            _ => call.enable_dns_hostnames(on),
        };
        call.send().await.map_err(aws("ModifyVpcAttribute"))?;
    }
    Ok(())
}

/// Where the spec names the IPv6 IPAM pool.
const IPV6_IPAM_POOL: &str = "spec.network.vpc.ipv6.ipamPool";

/// The id of the IPAM pool the spec names at `at` (by id, `Name` tag, or both): exactly one
/// must answer, of address family `family`.
async fn ipam_pool_id(
    s: &Scope<'_>,
    pool: &IpamPool,
    at: &str,
    family: AddressFamily,
) -> Result<String, Error> {
    let mut call = s.ec2().describe_ipam_pools();
    if let Some(id) = &pool.id {
        call = call.filters(filter("ipam-pool-id", &[id]));
    }
    if let Some(name) = &pool.name {
        call = call.filters(filter("tag:Name", &[name]));
    }
    let out = call.send().await.map_err(aws("DescribeIpamPools"))?;
    let named = || match (&pool.id, &pool.name) {
        (Some(id), _) => id.clone(),
        (None, Some(name)) => format!("named {name}"),
        (None, None) => String::new(),
    };
    let resource = || format!("IPAM pool {} ({at})", named());
    match out.ipam_pools() {
        [one] if one.address_family() == Some(&family) => {
            Ok(one.ipam_pool_id().unwrap_or_default().to_string())
        }
        [one] => Err(Error::PreExisting {
            resource: resource(),
            problem: format!(
                "is an {} pool; {at} takes an {} one",
                one.address_family().map_or("unknown", |f| f.as_str()),
                family.as_str()
            ),
        }),
        [] => Err(Error::PreExisting {
            resource: resource(),
            problem: format!("is not among the IPAM pools of {}", s.clients.region),
        }),
        many => Err(Error::PreExisting {
            resource: resource(),
            problem: format!(
                "names {} pools ({}); name one",
                many.len(),
                many.iter()
                    .filter_map(|p| p.ipam_pool_id())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Gives the cluster's VPC `id` the spec's secondary ranges it lacks; one it holds that the
/// spec no longer names is an error (its subnets and their addresses would go with it).
async fn secondary(s: &mut Scope<'_>, id: &str) -> Result<(), Error> {
    let wanted: Vec<String> = s
        .plan
        .secondary_cidrs
        .iter()
        .map(|c| c.to_string())
        .collect();
    let held = s.status.vpc_secondary_cidrs.clone();
    if let Some(extra) = held.iter().find(|h| !wanted.contains(h)) {
        return Err(Error::Immutable {
            field: "spec.network.vpc.secondaryCidrBlocks".into(),
            resource: id.to_string(),
            current: extra.clone(),
            wanted: "no such range".into(),
        });
    }
    for cidr in wanted.iter().filter(|w| !held.contains(w)) {
        if !s.act(format!("associate {cidr} with {id}")) || is_new(id) {
            s.status.vpc_secondary_cidrs.push(cidr.clone());
            continue;
        }
        s.ec2()
            .associate_vpc_cidr_block()
            .vpc_id(id)
            .cidr_block(cidr)
            .customize()
            .config_override(sent_once())
            .send()
            .await
            .map_err(aws("AssociateVpcCidrBlock"))?;
        s.status.vpc_secondary_cidrs.push(cidr.clone());
    }
    Ok(())
}

/// Gives the cluster's VPC `id` (as `vpc` shows it) the Amazon-provided IPv6 block the spec
/// asks for when it holds none; one it holds that the spec no longer asks for is an error, as
/// a secondary range is (its subnets' /64s would go with it). AWS may show the block's range
/// only once it is associated: until the VPC is seen with it, the subnets wait for it.
async fn ipv6(s: &mut Scope<'_>, id: &str, vpc: &Vpc) -> Result<(), Error> {
    let wanted = s.plan.spec.network.vpc.ipv6.is_some();
    if !wanted {
        if has_ipv6(vpc) {
            return Err(Error::Immutable {
                field: "spec.network.vpc.ipv6".into(),
                resource: id.to_string(),
                current: ipv6_block(vpc).unwrap_or_else(|| "an IPv6 block".into()),
                wanted: "no IPv6".into(),
            });
        }
        return Ok(());
    }
    let ask = ipv6_ask(s).unwrap_or(Ipv6Ask::Amazon);
    if has_ipv6(vpc) {
        let block = same_ipv6(id, vpc, &ask)?;
        if !block.is_empty() {
            s.status.vpc_ipv6_cidr = Some(block);
        }
    } else {
        if !s.act(format!("associate {} with {id}", ask.describe())) {
            return Ok(());
        }
        let call = s.ec2().associate_vpc_cidr_block().vpc_id(id);
        let call = match &ask {
            Ipv6Ask::Amazon => call.amazon_provided_ipv6_cidr_block(true),
            Ipv6Ask::Pool { pool, cidr } => {
                check_ipv6_pool(s, pool, cidr.as_deref()).await?;
                call.ipv6_pool(pool).set_ipv6_cidr_block(cidr.clone())
            }
            Ipv6Ask::Ipam { pool, len } => {
                let id = ipam_pool_id(s, pool, IPV6_IPAM_POOL, AddressFamily::Ipv6).await?;
                call.ipv6_ipam_pool_id(id).ipv6_netmask_length(*len)
            }
        };
        let out = call
            .customize()
            .config_override(sent_once())
            .send()
            .await
            .map_err(aws("AssociateVpcCidrBlock"))?;
        s.status.vpc_ipv6_cidr = out
            .ipv6_cidr_block_association()
            .and_then(|a| a.ipv6_cidr_block())
            .filter(|c| !c.is_empty())
            .map(String::from);
    }
    if s.status.vpc_ipv6_cidr.is_none() {
        // Being associated, its range not shown yet: look once more.
        let again = s
            .ec2()
            .describe_vpcs()
            .vpc_ids(id)
            .send()
            .await
            .map_err(aws("DescribeVpcs"))?;
        s.status.vpc_ipv6_cidr = again.vpcs().first().and_then(ipv6_block);
        if s.status.vpc_ipv6_cidr.is_none() {
            s.wait(format!("the IPv6 block of {id}: being associated"));
        }
    }
    Ok(())
}

/// Where the spec asks the block of the VPC the cluster creates from.
enum Ipv6Ask {
    /// An Amazon-provided /56.
    Amazon,
    /// A /56 of the account's own pool: the one named, or the pool's next free one.
    Pool { pool: String, cidr: Option<String> },
    /// A /`len` of an IPv6 pool of IPAM.
    Ipam { pool: IpamPool, len: i32 },
}

impl Ipv6Ask {
    fn describe(&self) -> String {
        match self {
            Ipv6Ask::Amazon => "an Amazon-provided IPv6 /56".into(),
            Ipv6Ask::Pool {
                pool,
                cidr: Some(c),
            } => format!("the IPv6 block {c} of pool {pool}"),
            Ipv6Ask::Pool { pool, cidr: None } => format!("an IPv6 /56 of pool {pool}"),
            Ipv6Ask::Ipam { pool, len } => {
                let named = match (&pool.id, &pool.name) {
                    (Some(id), _) => id.clone(),
                    (None, Some(name)) => format!("named {name}"),
                    (None, None) => String::new(),
                };
                format!("an IPv6 /{len} of IPAM pool {named}")
            }
        }
    }

    /// The pool a block of it shows (`Ipv6Pool`): the pool's id, `IPAM Managed` (AWS names
    /// no pool of IPAM), or `Amazon`.
    fn pool(&self) -> &str {
        match self {
            Ipv6Ask::Amazon => "Amazon",
            Ipv6Ask::Pool { pool, .. } => pool,
            Ipv6Ask::Ipam { .. } => "IPAM Managed",
        }
    }
}

/// What the spec asks of the VPC's IPv6 block, if it is dual stack.
fn ipv6_ask(s: &Scope<'_>) -> Option<Ipv6Ask> {
    let v6 = s.plan.spec.network.vpc.ipv6.as_ref()?;
    Some(match (&v6.pool_id, &v6.ipam_pool) {
        (Some(pool), _) => Ipv6Ask::Pool {
            pool: pool.clone(),
            cidr: v6.cidr_block.clone(),
        },
        (None, Some(pool)) => Ipv6Ask::Ipam {
            pool: pool.clone(),
            len: pool
                .netmask_length
                .unwrap_or(crate::spec::DEFAULT_IPAM_IPV6_NETMASK_LENGTH),
        },
        (None, None) => Ipv6Ask::Amazon,
    })
}

/// Checks, before a block is taken from it, that the account's IPv6 pool `pool` exists and
/// holds the block `cidr` named.
async fn check_ipv6_pool(s: &Scope<'_>, pool: &str, cidr: Option<&str>) -> Result<(), Error> {
    let answer = s
        .ec2()
        .describe_ipv6_pools()
        .pool_ids(pool)
        .send()
        .await
        .map_err(aws("DescribeIpv6Pools"));
    let found = found(answer)?.and_then(|o| o.ipv6_pools().first().cloned());
    let resource = format!("IPv6 pool {pool} (spec.network.vpc.ipv6.poolId)");
    let Some(found) = found else {
        return Err(Error::PreExisting {
            resource,
            problem: format!("does not exist in {}", s.clients.region),
        });
    };
    let ranges: Vec<ipnet::Ipv6Net> = found
        .pool_cidr_blocks()
        .iter()
        .filter_map(|b| b.cidr()?.parse().ok())
        .collect();
    if let Some(c) = cidr.and_then(|c| c.parse::<ipnet::Ipv6Net>().ok())
        && !ranges.iter().any(|r| r.contains(&c))
    {
        let held: Vec<String> = ranges.iter().map(|r| r.to_string()).collect();
        return Err(Error::PreExisting {
            resource,
            problem: format!(
                "holds {}, not the block {c} of spec.network.vpc.ipv6.cidrBlock",
                held.join(", ")
            ),
        });
    }
    Ok(())
}

/// Checks that the IPv6 block VPC `id` holds is the one the spec asks for: of its pool, and
/// the block it names (of IPAM: of the length it names). A block is never replaced. Answers the block (empty while AWS does
/// not show its range yet).
fn same_ipv6(id: &str, vpc: &Vpc, ask: &Ipv6Ask) -> Result<String, Error> {
    let held: Vec<(&str, &str)> = vpc
        .ipv6_cidr_block_association_set()
        .iter()
        .filter(|a| live(a.ipv6_cidr_block_state().and_then(|st| st.state())))
        .map(|a| {
            (
                a.ipv6_cidr_block().unwrap_or_default(),
                a.ipv6_pool().unwrap_or_default(),
            )
        })
        .collect();
    let named = match ask {
        Ipv6Ask::Pool { cidr, .. } => cidr.as_deref(),
        Ipv6Ask::Amazon | Ipv6Ask::Ipam { .. } => None,
    };
    let length = match ask {
        Ipv6Ask::Ipam { len, .. } => u8::try_from(*len).ok(),
        Ipv6Ask::Amazon | Ipv6Ask::Pool { .. } => None,
    };
    let matches = |(block, pool): &(&str, &str)| {
        let net = block.parse::<ipnet::Ipv6Net>().ok();
        *pool == ask.pool()
            && (block.is_empty()
                || (named.is_none_or(|n| net == n.parse().ok())
                    && length.is_none_or(|l| net.map(|n| n.prefix_len()) == Some(l))))
    };
    if let Some((block, _)) = held.iter().find(|h| matches(h)) {
        return Ok((*block).to_string());
    }
    Err(Error::Immutable {
        field: "spec.network.vpc.ipv6".into(),
        resource: id.to_string(),
        current: held
            .iter()
            .map(|(b, p)| format!("{b} of pool {p}"))
            .collect::<Vec<_>>()
            .join(", "),
        wanted: ask.describe(),
    })
}

/// Checks that an existing VPC `id` of a dual-stack cluster holds an IPv6 block: it is never
/// given one. One being associated makes the cluster's new subnets wait for its range.
fn existing_ipv6(s: &mut Scope<'_>, id: &str, vpc: Option<&Vpc>) -> Result<(), Error> {
    if !vpc.is_some_and(has_ipv6) {
        return Err(Error::PreExisting {
            resource: format!("VPC {id} (spec.network.vpc.id)"),
            problem: format!(
                "holds no IPv6 block, which dual stack (spec.network.vpc.ipv6) needs; a VPC of \
                 yours is never modified: give it one first (aws ec2 associate-vpc-cidr-block \
                 --vpc-id {id} --amazon-provided-ipv6-cidr-block)"
            ),
        });
    }
    if s.status.vpc_ipv6_cidr.is_none() {
        s.wait(format!("the IPv6 block of {id}: being associated"));
    }
    Ok(())
}

/// Revokes every rule of the `default` security group of the cluster's VPC `id` (AWS gives it
/// all traffic from itself in, and all traffic out): one describe when it holds none.
async fn empty_default_group(s: &mut Scope<'_>, id: &str) -> Result<(), Error> {
    let groups = s
        .ec2()
        .describe_security_groups()
        .filters(filter("vpc-id", &[id]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .map_err(aws("DescribeSecurityGroups"))?
        .security_groups
        .unwrap_or_default();
    let Some(group) = groups.first() else {
        // Every VPC has one; a VPC made a moment ago may not show it yet. Not done until the
        // group is seen empty.
        s.wait(format!(
            "the default security group of {id}: not visible yet"
        ));
        return Ok(());
    };
    let group_id = group.group_id().unwrap_or_default().to_string();
    let (ingress, egress) = (group.ip_permissions(), group.ip_permissions_egress());
    if !ingress.is_empty() && s.act(format!("revoke the ingress rules of {group_id} (default)")) {
        s.ec2()
            .revoke_security_group_ingress()
            .group_id(&group_id)
            .set_ip_permissions(Some(ingress.to_vec()))
            .send()
            .await
            .map_err(aws("RevokeSecurityGroupIngress"))?;
    }
    if !egress.is_empty() && s.act(format!("revoke the egress rules of {group_id} (default)")) {
        s.ec2()
            .revoke_security_group_egress()
            .group_id(&group_id)
            .set_ip_permissions(Some(egress.to_vec()))
            .send()
            .await
            .map_err(aws("RevokeSecurityGroupEgress"))?;
    }
    Ok(())
}

/// Deletes the VPC if the cluster owns it, once nothing else of the cluster is pending
/// (everything in it goes first).
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc) = s.status.vpc.clone().filter(|v| v.managed) else {
        return Ok(());
    };
    if !s.waiting.is_empty() {
        return Ok(());
    }
    if !s.act(format!("delete vpc {}", vpc.id)) {
        return Ok(());
    }
    let r = s
        .ec2()
        .delete_vpc()
        .vpc_id(&vpc.id)
        .send()
        .await
        .map_err(aws("DeleteVpc"));
    if s.settle(&format!("vpc {}", vpc.id), r)? {
        s.status.vpc = None;
    }
    Ok(())
}
