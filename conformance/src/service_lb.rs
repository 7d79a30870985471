//! Load balancers made the way Kubernetes' AWS cloud controller manager makes them for a
//! Service of type LoadBalancer: a security group `k8s-elb-<name>` in the cluster's VPC, a
//! classic load balancer in the cluster's public subnets with that group, both tagged
//! `kubernetes.io/cluster/<cluster>=owned` (the CCM's mark; `tagged: false` makes one without
//! it, as someone else's), and a rule on the cluster's `lb` group admitting the load balancer
//! to the node ports. The provider's delete must remove the tagged ones and leave the others.

use aws_sdk_ec2::types::{Filter, IpPermission, IpRange, ResourceType, Tag, TagSpecification};
use aws_sdk_elasticloadbalancing::types::{Listener, Tag as LbTag};
use provider::ownership::{self, ROLE_KEY};
use provider::spec::Cluster;

use crate::target::Env;
use crate::{Failure, aws_failure};

fn f(name: &str, values: &[&str]) -> Filter {
    let mut b = Filter::builder().name(name);
    for v in values {
        b = b.values(*v);
    }
    b.build()
}

/// The cluster's VPC and public subnets, as AWS holds them.
async fn network(env: &Env, cluster: &Cluster) -> Result<(String, Vec<String>), Failure> {
    let ec2 = &env.clients.ec2;
    let owned = || {
        f(
            &format!("tag:{}", ownership::cluster_key(&cluster.metadata.name)),
            &["owned"],
        )
    };
    let vpc = match &cluster.spec.network.vpc.id {
        Some(id) => id.clone(),
        None => ec2
            .describe_vpcs()
            .filters(owned())
            .send()
            .await
            .map_err(aws_failure("DescribeVpcs"))?
            .vpcs()
            .first()
            .and_then(|v| v.vpc_id())
            .map(String::from)
            .ok_or_else(|| Failure::Check("the cluster has no VPC".into()))?,
    };
    let mut public: Vec<String> = ec2
        .describe_subnets()
        .filters(owned())
        .filters(f(&format!("tag:{ROLE_KEY}"), &["public"]))
        .send()
        .await
        .map_err(aws_failure("DescribeSubnets"))?
        .subnets()
        .iter()
        .filter_map(|s| s.subnet_id().map(String::from))
        .collect();
    public.extend(
        cluster
            .spec
            .network
            .subnets
            .iter()
            .filter(|s| s.public)
            .filter_map(|s| s.id.clone()),
    );
    Ok((vpc, public))
}

fn group_name(name: &str) -> String {
    format!("k8s-elb-{name}")
}

/// The groups of Service load balancer `name` (by their name).
async fn groups_of(
    env: &Env,
    name: &str,
) -> Result<Vec<aws_sdk_ec2::types::SecurityGroup>, Failure> {
    Ok(env
        .clients
        .ec2
        .describe_security_groups()
        .filters(f("group-name", &[&group_name(name)]))
        .send()
        .await
        .map_err(aws_failure("DescribeSecurityGroups"))?
        .security_groups
        .unwrap_or_default())
}

/// Makes Service load balancer `name` of `cluster` as the CCM would (see the module's
/// documentation); `tagged: false` leaves out the CCM's cluster tag.
pub async fn make(env: &Env, cluster: &Cluster, name: &str, tagged: bool) -> Result<(), Failure> {
    let _calm = env.calm();
    let (ec2, elb) = (&env.clients.ec2, &env.clients.elb);
    let (vpc, public) = network(env, cluster).await?;
    let key = ownership::kubernetes_cluster_key(&cluster.metadata.name);
    let mut tags: Vec<(String, String)> = env.run_tags();
    tags.push((
        "kubernetes.io/service-name".into(),
        format!("default/{name}"),
    ));
    if tagged {
        tags.push((key.clone(), "owned".into()));
    }
    let mut spec = TagSpecification::builder().resource_type(ResourceType::SecurityGroup);
    for (k, v) in &tags {
        spec = spec.tags(Tag::builder().key(k).value(v).build());
    }
    let group = ec2
        .create_security_group()
        .vpc_id(&vpc)
        .group_name(group_name(name))
        .description(format!(
            "Security group for Kubernetes ELB {name} (default/{name})"
        ))
        .tag_specifications(spec.build())
        .send()
        .await
        .map_err(aws_failure("CreateSecurityGroup"))?
        .group_id
        .unwrap_or_default();
    ec2.authorize_security_group_ingress()
        .group_id(&group)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(80)
                .to_port(80)
                .ip_ranges(IpRange::builder().cidr_ip("0.0.0.0/0").build())
                .build(),
        )
        .send()
        .await
        .map_err(aws_failure("AuthorizeSecurityGroupIngress"))?;
    if tagged {
        // The CCM admits its load balancer to the node ports on the cluster-tagged group.
        let lb_group = ec2
            .describe_security_groups()
            .filters(f("vpc-id", &[&vpc]))
            .filters(f(&format!("tag:{key}"), &["owned"]))
            .filters(f(&format!("tag:{ROLE_KEY}"), &["lb"]))
            .send()
            .await
            .map_err(aws_failure("DescribeSecurityGroups"))?
            .security_groups()
            .first()
            .and_then(|g| g.group_id())
            .map(String::from)
            .ok_or_else(|| Failure::Check("the cluster has no lb group".into()))?;
        ec2.authorize_security_group_ingress()
            .group_id(&lb_group)
            .ip_permissions(
                IpPermission::builder()
                    .ip_protocol("tcp")
                    .from_port(30000)
                    .to_port(32767)
                    .user_id_group_pairs(
                        aws_sdk_ec2::types::UserIdGroupPair::builder()
                            .group_id(&group)
                            .build(),
                    )
                    .build(),
            )
            .send()
            .await
            .map_err(aws_failure("AuthorizeSecurityGroupIngress"))?;
    }
    let mut call = elb
        .create_load_balancer()
        .load_balancer_name(name)
        .listeners(
            Listener::builder()
                .protocol("TCP")
                .load_balancer_port(80)
                .instance_protocol("TCP")
                .instance_port(30080)
                .build()
                .map_err(|e| Failure::Check(e.to_string()))?,
        )
        .set_subnets(Some(public))
        .security_groups(&group);
    for (k, v) in &tags {
        call = call.tags(
            LbTag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(|e| Failure::Check(e.to_string()))?,
        );
    }
    call.send()
        .await
        .map_err(aws_failure("CreateLoadBalancer"))?;
    Ok(())
}

/// Whether Service load balancer `name` and its group are there (both, or neither: anything
/// else is a failure).
pub async fn present(env: &Env, cluster: &Cluster, name: &str) -> Result<bool, Failure> {
    let _calm = env.calm();
    let lb = env
        .clients
        .elb
        .describe_load_balancers()
        .load_balancer_names(name)
        .send()
        .await;
    let lb = match lb {
        Ok(d) => !d.load_balancer_descriptions().is_empty(),
        Err(e)
            if e.as_service_error().and_then(|s| {
                aws_sdk_elasticloadbalancing::error::ProvideErrorMetadata::code(s)
            }) == Some("LoadBalancerNotFound") =>
        {
            false
        }
        Err(e) => return Err(aws_failure("DescribeLoadBalancers")(e)),
    };
    let group = !groups_of(env, name).await?.is_empty();
    if lb != group {
        return Err(Failure::Check(format!(
            "Service load balancer {name} of cluster {}: load balancer {}, group {}",
            cluster.metadata.name,
            if lb { "present" } else { "gone" },
            if group { "present" } else { "gone" }
        )));
    }
    Ok(lb)
}

/// Deletes Service load balancer `name` and its group, as their owner would.
pub async fn remove(env: &Env, name: &str) -> Result<(), Failure> {
    let _calm = env.calm();
    env.clients
        .elb
        .delete_load_balancer()
        .load_balancer_name(name)
        .send()
        .await
        .map_err(aws_failure("DeleteLoadBalancer"))?;
    for g in groups_of(env, name).await? {
        // On AWS the load balancer's interfaces hold the group for a while.
        let mut tries = 0;
        loop {
            let r = env
                .clients
                .ec2
                .delete_security_group()
                .group_id(g.group_id().unwrap_or_default())
                .send()
                .await;
            match r {
                Ok(_) => break,
                Err(e)
                    if tries < 24
                        && e.as_service_error()
                            .and_then(|s| aws_sdk_ec2::error::ProvideErrorMetadata::code(s))
                            == Some("DependencyViolation") =>
                {
                    tries += 1;
                    env.pause(std::time::Duration::from_secs(5)).await;
                }
                Err(e) => return Err(aws_failure("DeleteSecurityGroup")(e)),
            }
        }
    }
    Ok(())
}
