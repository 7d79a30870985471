//! A whole cluster's infrastructure built the way a provisioner builds it (VPC, gateway,
//! subnets in three zones, EIPs, NAT gateways, route tables, security groups, bastion, API
//! load balancer, control planes), then deleted in reverse: the region ends empty but for
//! its default VPC, and every step a dependency forbids is refused on the way.

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, DomainType, InstanceType, IpPermission, IpRange, ResourceType,
    UserIdGroupPair,
};
use aws_sdk_elasticloadbalancing::types::{Instance as LbInstance, Listener};

use crate::{code, default_vpc_id, filter, tag_spec};

const OWNED: (&str, &str) = ("sigs.k8s.io/cluster-api-provider-aws/cluster/c1", "owned");
const ZONES: [&str; 3] = ["us-east-1a", "us-east-1b", "us-east-1c"];

fn tcp(from: i32, to: i32, source: IpPermissionSource<'_>) -> IpPermission {
    let p = IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(from)
        .to_port(to);
    match source {
        IpPermissionSource::Cidr(c) => p.ip_ranges(IpRange::builder().cidr_ip(c).build()),
        IpPermissionSource::Group(g) => {
            p.user_id_group_pairs(UserIdGroupPair::builder().group_id(g).build())
        }
    }
    .build()
}

enum IpPermissionSource<'a> {
    Cidr(&'a str),
    Group(&'a str),
}

/// Counts what a region holds, through Describe calls, excluding the default VPC's things.
async fn census(ec2: &aws_sdk_ec2::Client, default_vpc: &str) -> Vec<(&'static str, usize)> {
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    let subnets = ec2.describe_subnets().send().await.unwrap();
    let igws = ec2.describe_internet_gateways().send().await.unwrap();
    let addrs = ec2.describe_addresses().send().await.unwrap();
    let nats = ec2
        .describe_nat_gateways()
        .filter(filter(
            "state",
            &["pending", "available", "deleting", "failed"],
        ))
        .send()
        .await
        .unwrap();
    let rts = ec2.describe_route_tables().send().await.unwrap();
    let sgs = ec2.describe_security_groups().send().await.unwrap();
    let instances = ec2
        .describe_instances()
        .filters(filter(
            "instance-state-name",
            &["pending", "running", "stopping", "stopped", "shutting-down"],
        ))
        .send()
        .await
        .unwrap();
    let vols = ec2.describe_volumes().send().await.unwrap();
    let enis = ec2.describe_network_interfaces().send().await.unwrap();
    let not_default = |v: Option<&str>| v != Some(default_vpc);
    vec![
        (
            "vpcs",
            vpcs.vpcs()
                .iter()
                .filter(|v| not_default(v.vpc_id()))
                .count(),
        ),
        (
            "subnets",
            subnets
                .subnets()
                .iter()
                .filter(|s| not_default(s.vpc_id()))
                .count(),
        ),
        (
            "internet gateways",
            igws.internet_gateways()
                .iter()
                .filter(|g| g.attachments().iter().all(|a| not_default(a.vpc_id())))
                .count(),
        ),
        ("addresses", addrs.addresses().len()),
        ("nat gateways", nats.nat_gateways().len()),
        (
            "route tables",
            rts.route_tables()
                .iter()
                .filter(|t| not_default(t.vpc_id()))
                .count(),
        ),
        (
            "security groups",
            sgs.security_groups()
                .iter()
                .filter(|g| not_default(g.vpc_id()))
                .count(),
        ),
        ("instances", instances.reservations().len()),
        ("volumes", vols.volumes().len()),
        ("network interfaces", enis.network_interfaces().len()),
    ]
}

#[tokio::test]
async fn whole_cluster_up_then_down_leaves_only_the_default_vpc() {
    // With the default VPC, as a real account has.
    let fake = fakeaws::spawn_with(fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        ..Default::default()
    })
    .await
    .unwrap();
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let default_vpc = default_vpc_id(&ec2).await;
    let before = census(&ec2, &default_vpc).await;
    assert!(before.iter().all(|(_, n)| *n == 0), "{before:?}");

    // VPC with DNS support and hostnames.
    let vpc_id = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .tag_specifications(tag_spec(ResourceType::Vpc, &[OWNED, ("Name", "c1-vpc")]))
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    for (support, hostnames) in [(Some(true), None), (None, Some(true))] {
        ec2.modify_vpc_attribute()
            .vpc_id(&vpc_id)
            .set_enable_dns_support(
                support.map(|v| AttributeBooleanValue::builder().value(v).build()),
            )
            .set_enable_dns_hostnames(
                hostnames.map(|v| AttributeBooleanValue::builder().value(v).build()),
            )
            .send()
            .await
            .unwrap();
    }

    // Subnets: public 10.0.{0,1,2}.0/20-ish, private above.
    let mut public = Vec::new();
    let mut private = Vec::new();
    for (i, zone) in ZONES.iter().enumerate() {
        for (is_public, third) in [(true, i * 16), (false, 64 + i * 32)] {
            let s = ec2
                .create_subnet()
                .vpc_id(&vpc_id)
                .cidr_block(format!(
                    "10.0.{third}.0/{}",
                    if is_public { 20 } else { 19 }
                ))
                .availability_zone(*zone)
                .tag_specifications(tag_spec(ResourceType::Subnet, &[OWNED]))
                .send()
                .await
                .unwrap()
                .subnet
                .unwrap()
                .subnet_id
                .unwrap();
            if is_public {
                ec2.modify_subnet_attribute()
                    .subnet_id(&s)
                    .map_public_ip_on_launch(AttributeBooleanValue::builder().value(true).build())
                    .send()
                    .await
                    .unwrap();
                public.push(s);
            } else {
                private.push(s);
            }
        }
    }

    // Internet gateway.
    let igw = ec2
        .create_internet_gateway()
        .tag_specifications(tag_spec(ResourceType::InternetGateway, &[OWNED]))
        .send()
        .await
        .unwrap()
        .internet_gateway
        .unwrap()
        .internet_gateway_id
        .unwrap();
    ec2.attach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap();

    // EIPs and NAT gateways, one per zone.
    let mut nats = Vec::new();
    let mut eips = Vec::new();
    for (i, s) in public.iter().enumerate() {
        let alloc = ec2
            .allocate_address()
            .domain(DomainType::Vpc)
            .tag_specifications(tag_spec(ResourceType::ElasticIp, &[OWNED]))
            .send()
            .await
            .unwrap()
            .allocation_id
            .unwrap();
        let nat = ec2
            .create_nat_gateway()
            .subnet_id(s)
            .allocation_id(&alloc)
            .client_token(format!("c1-nat-{i}"))
            .tag_specifications(tag_spec(ResourceType::Natgateway, &[OWNED]))
            .send()
            .await
            .unwrap()
            .nat_gateway
            .unwrap()
            .nat_gateway_id
            .unwrap();
        eips.push(alloc);
        nats.push(nat);
    }
    ec2.wait_until_nat_gateway_available()
        .set_nat_gateway_ids(Some(nats.clone()))
        .wait(Duration::from_secs(5))
        .await
        .unwrap();

    // Route tables: public to the gateway, private to its zone's NAT gateway.
    let mut tables = Vec::new();
    for (i, zone) in ZONES.iter().enumerate() {
        for (subnet_id, is_public) in [(&public[i], true), (&private[i], false)] {
            let rt = ec2
                .create_route_table()
                .vpc_id(&vpc_id)
                .tag_specifications(tag_spec(
                    ResourceType::RouteTable,
                    &[OWNED, ("Name", &format!("c1-rt-{zone}-{is_public}"))],
                ))
                .send()
                .await
                .unwrap()
                .route_table
                .unwrap()
                .route_table_id
                .unwrap();
            let route = ec2
                .create_route()
                .route_table_id(&rt)
                .destination_cidr_block("0.0.0.0/0");
            let route = if is_public {
                route.gateway_id(&igw)
            } else {
                route.nat_gateway_id(&nats[i])
            };
            route.send().await.unwrap();
            let assoc = ec2
                .associate_route_table()
                .route_table_id(&rt)
                .subnet_id(subnet_id)
                .send()
                .await
                .unwrap()
                .association_id
                .unwrap();
            tables.push((rt, assoc));
        }
    }

    // Security groups and their rules.
    let mut groups = std::collections::BTreeMap::new();
    for role in ["bastion", "controlplane", "node", "apiserver-lb"] {
        let id = ec2
            .create_security_group()
            .group_name(format!("c1-{role}"))
            .description(format!("Kubernetes cluster c1: {role}"))
            .vpc_id(&vpc_id)
            .tag_specifications(tag_spec(
                ResourceType::SecurityGroup,
                &[OWNED, ("role", role)],
            ))
            .send()
            .await
            .unwrap()
            .group_id
            .unwrap();
        groups.insert(role, id);
    }
    let (bastion_sg, cp_sg, node_sg, lb_sg) = (
        groups["bastion"].clone(),
        groups["controlplane"].clone(),
        groups["node"].clone(),
        groups["apiserver-lb"].clone(),
    );
    ec2.authorize_security_group_ingress()
        .group_id(&bastion_sg)
        .ip_permissions(tcp(22, 22, IpPermissionSource::Cidr("203.0.113.0/24")))
        .send()
        .await
        .unwrap();
    ec2.authorize_security_group_ingress()
        .group_id(&cp_sg)
        .ip_permissions(tcp(6443, 6443, IpPermissionSource::Group(&lb_sg)))
        .ip_permissions(tcp(2379, 2380, IpPermissionSource::Group(&cp_sg)))
        .ip_permissions(tcp(22, 22, IpPermissionSource::Group(&bastion_sg)))
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("4")
                .user_id_group_pairs(UserIdGroupPair::builder().group_id(&node_sg).build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.authorize_security_group_ingress()
        .group_id(&node_sg)
        .ip_permissions(tcp(10250, 10250, IpPermissionSource::Group(&cp_sg)))
        .ip_permissions(tcp(30000, 32767, IpPermissionSource::Cidr("0.0.0.0/0")))
        .ip_permissions(tcp(179, 179, IpPermissionSource::Group(&cp_sg)))
        .send()
        .await
        .unwrap();
    ec2.authorize_security_group_ingress()
        .group_id(&lb_sg)
        .ip_permissions(tcp(6443, 6443, IpPermissionSource::Cidr("0.0.0.0/0")))
        .send()
        .await
        .unwrap();

    // Bastion in the first public subnet.
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let bastion = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(&public[0])
        .security_group_ids(&bastion_sg)
        .client_token("c1-bastion")
        .tag_specifications(tag_spec(
            ResourceType::Instance,
            &[OWNED, ("role", "bastion")],
        ))
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap()
        .instances()[0]
        .instance_id()
        .unwrap()
        .to_string();

    // The API load balancer in the public subnets.
    let lb = elb
        .create_load_balancer()
        .load_balancer_name("c1-apiserver")
        .listeners(
            Listener::builder()
                .protocol("TCP")
                .load_balancer_port(6443)
                .instance_protocol("TCP")
                .instance_port(6443)
                .build()
                .unwrap(),
        )
        .set_subnets(Some(public.clone()))
        .security_groups(&lb_sg)
        .tags(
            aws_sdk_elasticloadbalancing::types::Tag::builder()
                .key(OWNED.0)
                .value(OWNED.1)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert!(lb.dns_name().unwrap().starts_with("c1-apiserver-"));

    // Three control planes, one per zone, behind the load balancer.
    let mut control_planes = Vec::new();
    for (i, s) in private.iter().enumerate() {
        let id = ec2
            .run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::T3Large)
            .subnet_id(s)
            .security_group_ids(&cp_sg)
            .security_group_ids(&node_sg)
            .client_token(format!("c1-cp-{i}"))
            .tag_specifications(tag_spec(ResourceType::Instance, &[OWNED]))
            .min_count(1)
            .max_count(1)
            .send()
            .await
            .unwrap()
            .instances()[0]
            .instance_id()
            .unwrap()
            .to_string();
        control_planes.push(id);
    }
    ec2.wait_until_instance_running()
        .set_instance_ids(Some(control_planes.clone()))
        .instance_ids(&bastion)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    let mut register = elb
        .register_instances_with_load_balancer()
        .load_balancer_name("c1-apiserver");
    for id in &control_planes {
        register = register.instances(LbInstance::builder().instance_id(id).build());
    }
    register.send().await.unwrap();

    // What the region holds, by tag.
    let owned = ec2
        .describe_tags()
        .filters(filter("key", &[OWNED.0]))
        .max_results(1000)
        .send()
        .await
        .unwrap();
    // vpc + 6 subnets + igw + 3 eips + 3 nats + 6 rts + 4 sgs + 4 instances.
    assert_eq!(owned.tags().len(), 1 + 6 + 1 + 3 + 3 + 6 + 4 + 4);
    let up = census(&ec2, &default_vpc).await;
    assert_eq!(
        up,
        [
            ("vpcs", 1),
            ("subnets", 6),
            ("internet gateways", 1),
            ("addresses", 3),
            ("nat gateways", 3),
            ("route tables", 7),
            ("security groups", 5),
            ("instances", 4),
            ("volumes", 4),
            // The instances', the NAT gateways' and the load balancer's node in each of
            // its three subnets.
            ("network interfaces", 4 + 3 + 3),
        ]
    );

    // Things AWS refuses while the cluster stands.
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&private[0]).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(
            ec2.detach_internet_gateway()
                .internet_gateway_id(&igw)
                .vpc_id(&vpc_id)
                .send()
                .await
        ),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_security_group().group_id(&lb_sg).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.release_address().allocation_id(&eips[0]).send().await),
        "InvalidIPAddress.InUse"
    );

    // Down, in reverse.
    elb.delete_load_balancer()
        .load_balancer_name("c1-apiserver")
        .send()
        .await
        .unwrap();
    let mut all = control_planes.clone();
    all.push(bastion);
    ec2.terminate_instances()
        .set_instance_ids(Some(all.clone()))
        .send()
        .await
        .unwrap();
    ec2.wait_until_instance_terminated()
        .set_instance_ids(Some(all))
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    // Groups reference each other: revoke the references first, then delete.
    for g in [&cp_sg, &node_sg] {
        let rules = ec2
            .describe_security_groups()
            .group_ids(g)
            .send()
            .await
            .unwrap();
        let perms = rules.security_groups()[0].ip_permissions().to_vec();
        assert_eq!(
            code(
                ec2.delete_security_group()
                    .group_id(if *g == cp_sg { &lb_sg } else { &cp_sg })
                    .send()
                    .await
            ),
            "DependencyViolation"
        );
        ec2.revoke_security_group_ingress()
            .group_id(g)
            .set_ip_permissions(Some(perms))
            .send()
            .await
            .unwrap();
    }
    for g in groups.values() {
        ec2.delete_security_group()
            .group_id(g)
            .send()
            .await
            .unwrap();
    }
    for (rt, assoc) in &tables {
        ec2.disassociate_route_table()
            .association_id(assoc)
            .send()
            .await
            .unwrap();
        ec2.delete_route_table()
            .route_table_id(rt)
            .send()
            .await
            .unwrap();
    }
    for nat in &nats {
        ec2.delete_nat_gateway()
            .nat_gateway_id(nat)
            .send()
            .await
            .unwrap();
    }
    // Deleted NAT gateways stay visible as `deleted` for a while, as AWS keeps them.
    let gone = ec2
        .describe_nat_gateways()
        .set_nat_gateway_ids(Some(nats.clone()))
        .send()
        .await
        .unwrap();
    assert!(
        gone.nat_gateways()
            .iter()
            .all(|n| n.state() == Some(&aws_sdk_ec2::types::NatGatewayState::Deleted))
    );
    for alloc in &eips {
        ec2.release_address()
            .allocation_id(alloc)
            .send()
            .await
            .unwrap();
    }
    ec2.detach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap();
    ec2.delete_internet_gateway()
        .internet_gateway_id(&igw)
        .send()
        .await
        .unwrap();
    for s in public.iter().chain(&private) {
        ec2.delete_subnet().subnet_id(s).send().await.unwrap();
    }
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();

    let after = census(&ec2, &default_vpc).await;
    assert!(after.iter().all(|(_, n)| *n == 0), "{after:?}");
    let owned = ec2
        .describe_tags()
        .filters(filter("key", &[OWNED.0]))
        .send()
        .await
        .unwrap();
    // Terminated instances and deleted NAT gateways stay visible, with their tags, for about
    // an hour, as AWS keeps them; then they are gone and so are their tags.
    let lingering: Vec<_> = owned
        .tags()
        .iter()
        .map(|t| t.resource_id().unwrap())
        .collect();
    assert!(
        lingering
            .iter()
            .all(|id| id.starts_with("i-") || id.starts_with("nat-")),
        "{lingering:?}"
    );
    fake.fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(3601)));
    let owned = ec2
        .describe_tags()
        .filters(filter("key", &[OWNED.0]))
        .send()
        .await
        .unwrap();
    assert!(owned.tags().is_empty(), "no tag outlives its resource");
    let d = elb.describe_load_balancers().send().await.unwrap();
    assert!(d.load_balancer_descriptions().is_empty());
}
