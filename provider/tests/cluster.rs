//! The cluster actuator against fakeaws through the SDK; every outcome is checked by
//! describing what the fake holds, and call counts come from the fake's own call log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use aws_sdk_ec2::types::{Filter, InstanceStateName, ResourceType, Tag, TagSpecification};
use provider::spec::{Cluster, IngressRule, Role};
use provider::{Clients, ClusterActuator, Error};

const KEY: &str = "sigs.k8s.io/cluster-api-provider-aws/cluster/c1";

fn filter(name: &str, values: &[&str]) -> Filter {
    let mut f = Filter::builder().name(name);
    for v in values {
        f = f.values(*v);
    }
    f.build()
}

async fn fake() -> fakeaws::FakeAws {
    fakeaws::spawn_with(fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Opts the account in to the zone groups `groups` (Local Zones, Wavelength Zones).
async fn opt_in(ec2: &aws_sdk_ec2::Client, groups: &[&str]) {
    for group in groups {
        ec2.modify_availability_zone_group()
            .group_name(*group)
            .opt_in_status(aws_sdk_ec2::types::ModifyAvailabilityZoneOptInStatus::OptedIn)
            .send()
            .await
            .unwrap();
    }
}

fn actuator(fake: &fakeaws::FakeAws) -> ClusterActuator {
    ClusterActuator::new(Clients::for_endpoint(fake.endpoint(), "us-east-1"))
}

fn cluster(yaml_spec: &str) -> Cluster {
    let yaml = format!(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata:\n  name: c1\nspec:\n{yaml_spec}"
    );
    provider::spec::parse(&yaml, "test").unwrap()
}

async fn up(a: &ClusterActuator, c: &Cluster) -> provider::Outcome {
    for _ in 0..10 {
        let o = a.reconcile(c).await.unwrap();
        if o.is_done() {
            return o;
        }
    }
    panic!("reconcile did not finish in 10 rounds");
}

async fn down(a: &ClusterActuator, c: &Cluster) {
    for _ in 0..10 {
        if a.delete(c).await.unwrap().is_done() {
            return;
        }
    }
    panic!("delete did not finish in 10 rounds");
}

fn mutating(fake: &fakeaws::FakeAws) -> Vec<String> {
    fake.fake()
        .take_calls()
        .into_iter()
        .filter(|c| c.is_mutating())
        .map(|c| c.action.into_owned())
        .collect()
}

/// The problems of `c`, which the actuator must refuse before making any call at all.
async fn refused_before_any_call(
    fake: &fakeaws::FakeAws,
    a: &ClusterActuator,
    c: &Cluster,
) -> Vec<String> {
    fake.fake().take_calls();
    let err = a.reconcile(c).await.unwrap_err();
    let Error::InvalidSpec { problems } = err else {
        panic!("{err}")
    };
    assert!(fake.fake().take_calls().is_empty(), "no call: {problems:?}");
    problems
}

/// [`refused_before_any_call`], one of whose problems names `needle`.
async fn refused_naming(fake: &fakeaws::FakeAws, a: &ClusterActuator, c: &Cluster, needle: &str) {
    refused_listing(fake, a, c, &[needle]).await;
}

/// [`refused_before_any_call`], its problems naming each of `needles`.
async fn refused_listing(
    fake: &fakeaws::FakeAws,
    a: &ClusterActuator,
    c: &Cluster,
    needles: &[&str],
) {
    let problems = refused_before_any_call(fake, a, c).await;
    for needle in needles {
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle} in {problems:?}"
        );
    }
}

/// Everything the fake holds that carries the cluster's owned tag and is not gone.
async fn owned_left(ec2: &aws_sdk_ec2::Client) -> Vec<String> {
    let tags = ec2
        .describe_tags()
        .filters(filter("key", &[KEY]))
        .send()
        .await
        .unwrap();
    let mut left = Vec::new();
    for t in tags.tags() {
        let id = t.resource_id().unwrap().to_string();
        // Terminated instances and deleted NAT gateways stay visible for a while, as in AWS.
        if id.starts_with("i-") {
            let d = ec2
                .describe_instances()
                .instance_ids(&id)
                .send()
                .await
                .unwrap();
            let state = d.reservations()[0].instances()[0]
                .state()
                .unwrap()
                .name()
                .cloned();
            if state == Some(InstanceStateName::Terminated) {
                continue;
            }
        }
        if id.starts_with("nat-") {
            let d = ec2
                .describe_nat_gateways()
                .nat_gateway_ids(&id)
                .send()
                .await
                .unwrap();
            if d.nat_gateways()[0].state().map(|s| s.as_str()) == Some("deleted") {
                continue;
            }
        }
        left.push(id);
    }
    left
}

/// The ingress rules of `g`: protocol, first port, source (an IPv4 block, an IPv6 block as
/// AWS spells it, or a group).
fn rules(g: &aws_sdk_ec2::types::SecurityGroup) -> BTreeSet<(String, Option<i32>, String)> {
    let mut out = BTreeSet::new();
    for p in g.ip_permissions() {
        for r in p.ip_ranges() {
            out.insert((
                p.ip_protocol().unwrap().to_string(),
                p.from_port(),
                r.cidr_ip().unwrap().to_string(),
            ));
        }
        for r in p.ipv6_ranges() {
            out.insert((
                p.ip_protocol().unwrap().to_string(),
                p.from_port(),
                r.cidr_ipv6().unwrap().to_string(),
            ));
        }
        for u in p.user_id_group_pairs() {
            out.insert((
                p.ip_protocol().unwrap().to_string(),
                p.from_port(),
                u.group_id().unwrap().to_string(),
            ));
        }
    }
    out
}

/// The cluster's API load balancer as ELB describes it.
async fn api_lb(
    elb: &aws_sdk_elasticloadbalancing::Client,
) -> aws_sdk_elasticloadbalancing::types::LoadBalancerDescription {
    elb.describe_load_balancers()
        .load_balancer_names("c1-apiserver")
        .send()
        .await
        .unwrap()
        .load_balancer_descriptions()[0]
        .clone()
}

#[tokio::test]
async fn greenfield_three_zones_then_steady_state_then_delete() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let elb = fake.elb_client();
    let c = cluster(
        "  region: us-east-1\n  sshKeyName: ops\n  additionalTags: {team: platform}\n  bastion:\n    enabled: true\n    allowedCidrBlocks: [203.0.113.0/24]\n",
    );
    ec2.create_key_pair().key_name("ops").send().await.unwrap();
    let o = up(&a, &c).await;
    assert!(o.status.ready);

    // VPC: CIDR, DNS, tags.
    let vpcs = ec2
        .describe_vpcs()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert_eq!(vpcs.vpcs().len(), 1);
    let vpc = &vpcs.vpcs()[0];
    let vpc_id = vpc.vpc_id().unwrap().to_string();
    assert_eq!(vpc.cidr_block(), Some("10.0.0.0/16"));
    let tag = |tags: &[Tag], k: &str| {
        tags.iter()
            .find(|t| t.key() == Some(k))
            .and_then(|t| t.value())
            .map(String::from)
    };
    assert_eq!(tag(vpc.tags(), "Name").as_deref(), Some("c1-vpc"));
    assert_eq!(tag(vpc.tags(), "team").as_deref(), Some("platform"));
    for attr in [
        aws_sdk_ec2::types::VpcAttributeName::EnableDnsSupport,
        aws_sdk_ec2::types::VpcAttributeName::EnableDnsHostnames,
    ] {
        let d = ec2
            .describe_vpc_attribute()
            .vpc_id(&vpc_id)
            .attribute(attr.clone())
            .send()
            .await
            .unwrap();
        let on = d
            .enable_dns_support()
            .or(d.enable_dns_hostnames())
            .and_then(|v| v.value());
        assert_eq!(on, Some(true), "{attr:?}");
    }

    // Subnets: a public /20 and a private /18 per zone.
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let mut got: Vec<(String, String, bool)> = subnets
        .subnets()
        .iter()
        .map(|s| {
            (
                s.cidr_block().unwrap().to_string(),
                s.availability_zone().unwrap().to_string(),
                s.map_public_ip_on_launch().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("10.0.0.0/20".into(), "us-east-1a".into(), true),
            ("10.0.128.0/18".into(), "us-east-1b".into(), false),
            ("10.0.16.0/20".into(), "us-east-1b".into(), true),
            ("10.0.192.0/18".into(), "us-east-1c".into(), false),
            ("10.0.32.0/20".into(), "us-east-1c".into(), true),
            ("10.0.64.0/18".into(), "us-east-1a".into(), false),
        ]
    );

    // The tags a cloud controller manager looks for.
    for sn in subnets.subnets() {
        let role = if sn.map_public_ip_on_launch() == Some(true) {
            "kubernetes.io/role/elb"
        } else {
            "kubernetes.io/role/internal-elb"
        };
        assert_eq!(tag(sn.tags(), role).as_deref(), Some("1"));
        assert_eq!(
            tag(sn.tags(), "kubernetes.io/cluster/c1").as_deref(),
            Some("owned")
        );
    }

    // Gateway, NAT gateways (one per zone, in the public subnet of the zone), EIPs.
    let igws = ec2
        .describe_internet_gateways()
        .filters(filter("attachment.vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    assert_eq!(igws.internet_gateways().len(), 1);
    let igw = igws.internet_gateways()[0]
        .internet_gateway_id()
        .unwrap()
        .to_string();
    let nats = ec2
        .describe_nat_gateways()
        .filter(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    assert_eq!(nats.nat_gateways().len(), 3);
    let subnet_of = |id: &str| {
        subnets
            .subnets()
            .iter()
            .find(|s| s.subnet_id() == Some(id))
            .unwrap()
            .clone()
    };
    let mut nat_zone = BTreeMap::new();
    for n in nats.nat_gateways() {
        assert_eq!(n.state().unwrap().as_str(), "available");
        let s = subnet_of(n.subnet_id().unwrap());
        assert!(s.map_public_ip_on_launch().unwrap());
        nat_zone.insert(
            s.availability_zone().unwrap().to_string(),
            n.nat_gateway_id().unwrap().to_string(),
        );
    }
    assert_eq!(nat_zone.len(), 3);
    let eips = ec2
        .describe_addresses()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert_eq!(eips.addresses().len(), 3);
    assert!(
        eips.addresses()
            .iter()
            .all(|e| e.association_id().is_some())
    );

    // Routes: public subnets to the gateway, private ones to their zone's NAT gateway.
    for s in subnets.subnets() {
        let rt = ec2
            .describe_route_tables()
            .filters(filter("association.subnet-id", &[s.subnet_id().unwrap()]))
            .send()
            .await
            .unwrap();
        assert_eq!(rt.route_tables().len(), 1);
        let default = rt.route_tables()[0]
            .routes()
            .iter()
            .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
            .unwrap()
            .clone();
        if s.map_public_ip_on_launch().unwrap() {
            assert_eq!(default.gateway_id(), Some(igw.as_str()));
        } else {
            assert_eq!(
                default.nat_gateway_id(),
                Some(nat_zone[s.availability_zone().unwrap()].as_str())
            );
        }
    }

    // Security groups and rules.
    let groups = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert_eq!(groups.security_groups().len(), 5);
    let by_role = |role: &str| {
        groups
            .security_groups()
            .iter()
            .find(|g| {
                tag(g.tags(), "sigs.k8s.io/cluster-api-provider-aws/role").as_deref() == Some(role)
            })
            .unwrap()
            .clone()
    };
    let (bastion_sg, cp, node, lb_sg) = (
        by_role("bastion"),
        by_role("controlplane"),
        by_role("node"),
        by_role("apiserver-lb"),
    );
    let id = |g: &aws_sdk_ec2::types::SecurityGroup| g.group_id().unwrap().to_string();
    assert_eq!(cp.group_name(), Some("c1-controlplane"));
    assert_eq!(
        rules(&bastion_sg),
        BTreeSet::from([("tcp".into(), Some(22), "203.0.113.0/24".into())])
    );
    let cp_rules = rules(&cp);
    let api_sources: BTreeSet<String> = cp_rules
        .iter()
        .filter(|(_, p, _)| *p == Some(6443))
        .map(|(_, _, s)| s.clone())
        .collect();
    assert_eq!(
        api_sources,
        BTreeSet::from([id(&lb_sg), id(&cp), id(&node)])
    );
    for g in [&cp, &node] {
        let ssh: Vec<_> = rules(g)
            .into_iter()
            .filter(|(_, p, _)| *p == Some(22))
            .collect();
        assert_eq!(
            ssh,
            [("tcp".into(), Some(22), id(&bastion_sg))],
            "SSH only from the bastion"
        );
        let r = rules(g);
        assert!(
            r.contains(&("4".into(), None, id(&node))),
            "IP-in-IP from nodes"
        );
        assert!(
            r.contains(&("tcp".into(), Some(179), id(&cp))),
            "BGP from control planes"
        );
        assert!(r.contains(&("tcp".into(), Some(10250), id(&cp))), "kubelet");
    }
    assert!(
        cp_rules.contains(&("tcp".into(), Some(2379), id(&cp))),
        "etcd"
    );
    assert!(rules(&node).contains(&("tcp".into(), Some(30000), "0.0.0.0/0".into())));
    assert_eq!(
        rules(&lb_sg),
        BTreeSet::from([("tcp".into(), Some(6443), "0.0.0.0/0".into())])
    );
    // Only the `lb` group carries the cloud controller manager's cluster tag, and it has no
    // rules of the provider's.
    let ccm = by_role("lb");
    assert!(rules(&ccm).is_empty());
    let tagged: Vec<String> = groups
        .security_groups()
        .iter()
        .filter(|g| tag(g.tags(), "kubernetes.io/cluster/c1").as_deref() == Some("owned"))
        .map(id)
        .collect();
    assert_eq!(tagged, [id(&ccm)]);
    assert_eq!(tag(lb_sg.tags(), "kubernetes.io/cluster/c1"), None);
    assert_eq!(tag(cp.tags(), "kubernetes.io/cluster/c1"), None);

    // Bastion: in a public subnet, with its group and the key.
    let bastions = ec2
        .describe_instances()
        .filters(filter(
            "tag:sigs.k8s.io/cluster-api-provider-aws/role",
            &["bastion"],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(bastions.reservations().len(), 1);
    let b = &bastions.reservations()[0].instances()[0];
    assert!(
        subnet_of(b.subnet_id().unwrap())
            .map_public_ip_on_launch()
            .unwrap()
    );
    assert_eq!(
        b.security_groups()[0].group_id(),
        Some(id(&bastion_sg).as_str())
    );
    assert_eq!(b.key_name(), Some("ops"));
    assert!(b.public_ip_address().is_some());

    // Load balancer.
    let lb = &api_lb(&elb).await;
    assert_eq!(lb.scheme(), Some("internet-facing"));
    assert_eq!(lb.security_groups(), [id(&lb_sg)]);
    assert_eq!(lb.subnets().len(), 3);
    assert!(
        lb.subnets()
            .iter()
            .all(|s| subnet_of(s).map_public_ip_on_launch().unwrap())
    );
    let l = lb.listener_descriptions()[0].listener().unwrap();
    assert_eq!(
        (l.protocol(), l.load_balancer_port(), l.instance_port()),
        ("TCP", 6443, 6443)
    );
    assert_eq!(lb.health_check().unwrap().target(), "TCP:6443");
    let attrs = elb
        .describe_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .send()
        .await
        .unwrap();
    assert_eq!(
        attrs
            .load_balancer_attributes()
            .unwrap()
            .connection_settings()
            .unwrap()
            .idle_timeout(),
        600
    );
    assert_eq!(
        o.status.load_balancer.unwrap().dns_name,
        lb.dns_name().unwrap()
    );

    // A second reconcile with the same spec makes no mutating call.
    fake.fake().take_calls();
    let again = a.reconcile(&c).await.unwrap();
    assert!(again.is_done());
    assert_eq!(mutating(&fake), Vec::<String>::new());

    // Delete leaves nothing owned, and only the default VPC.
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1);
    assert_eq!(vpcs.vpcs()[0].is_default(), Some(true));
    let lbs = elb.describe_load_balancers().send().await.unwrap();
    assert!(lbs.load_balancer_descriptions().is_empty());
    let addrs = ec2.describe_addresses().send().await.unwrap();
    assert!(addrs.addresses().is_empty());
}

/// An account opted in to Local Zones and Wavelength Zones: the cluster's subnets still go to
/// the region's availability zones only (the edge zones' names sort before them).
#[tokio::test]
async fn opted_in_edge_zones_take_no_default_subnet() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    opt_in(&ec2, &["us-east-1-bos-1", "us-east-1-wl1"]).await;
    let c = cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n");
    let o = up(&a, &c).await;
    let vpc_id = o.status.vpc.unwrap().id;
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let zones: Vec<&str> = subnets
        .subnets()
        .iter()
        .map(|s| s.availability_zone().unwrap())
        .collect();
    assert_eq!(zones, ["us-east-1a", "us-east-1a"]);
}

#[tokio::test]
async fn one_zone_internal_without_bastion() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let c = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n    vpc: {cidrBlock: 10.50.0.0/20}\n  controlPlaneLoadBalancer: {scheme: internal, crossZone: true}\n",
    );
    let o = up(&a, &c).await;
    let vpc_id = o.status.vpc.unwrap().id;
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    assert_eq!(subnets.subnets().len(), 2);
    let nats = ec2
        .describe_nat_gateways()
        .filter(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    assert_eq!(nats.nat_gateways().len(), 1);
    let bastions = ec2
        .describe_instances()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    assert!(bastions.reservations().is_empty());
    let lb = &api_lb(&elb).await;
    assert_eq!(lb.scheme(), Some("internal"));
    assert!(lb.dns_name().unwrap().starts_with("internal-c1-apiserver-"));
    let private = subnets
        .subnets()
        .iter()
        .find(|s| s.map_public_ip_on_launch() == Some(false))
        .unwrap();
    assert_eq!(lb.subnets(), [private.subnet_id().unwrap().to_string()]);
    let attrs = elb
        .describe_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .send()
        .await
        .unwrap();
    assert!(
        attrs
            .load_balancer_attributes()
            .unwrap()
            .cross_zone_load_balancing()
            .unwrap()
            .enabled()
    );
    let lb_sg = ec2
        .describe_security_groups()
        .group_ids(&lb.security_groups()[0])
        .send()
        .await
        .unwrap();
    assert_eq!(
        rules(&lb_sg.security_groups()[0]),
        BTreeSet::from([("tcp".into(), Some(6443), "10.50.0.0/20".into())]),
        "an internal load balancer is reachable from the VPC only"
    );
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// A snapshot of describe outputs, for byte-identical comparison.
async fn snapshot(
    ec2: &aws_sdk_ec2::Client,
    elb: &aws_sdk_elasticloadbalancing::Client,
    vpc_id: &str,
) -> String {
    let vpcs = ec2.describe_vpcs().vpc_ids(vpc_id).send().await.unwrap();
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter("tag:origin", &["preexisting"]))
        .send()
        .await
        .unwrap();
    let igws = ec2
        .describe_internet_gateways()
        .filters(filter("tag:origin", &["preexisting"]))
        .send()
        .await
        .unwrap();
    let rts = ec2
        .describe_route_tables()
        .filters(filter("tag:origin", &["preexisting"]))
        .send()
        .await
        .unwrap();
    let sgs = ec2
        .describe_security_groups()
        .filters(filter("tag:origin", &["preexisting"]))
        .send()
        .await
        .unwrap();
    let lbs = elb
        .describe_load_balancers()
        .load_balancer_names("byo-lb")
        .send()
        .await;
    let lb_tags = elb
        .describe_tags()
        .load_balancer_names("byo-lb")
        .send()
        .await;
    let instances = ec2
        .describe_instances()
        .filters(filter("tag:origin", &["preexisting"]))
        .send()
        .await
        .unwrap();
    let lb_attrs = elb
        .describe_load_balancer_attributes()
        .load_balancer_name("byo-lb")
        .send()
        .await;
    // A subnet's free address count tells what uses it (the cluster's load balancer node
    // and instances take addresses of the user's subnets), not what changed it.
    let subnets: Vec<aws_sdk_ec2::types::Subnet> = subnets
        .subnets()
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.available_ip_address_count = None;
            s
        })
        .collect();
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        instances.reservations(),
        vpcs.vpcs(),
        subnets,
        igws.internet_gateways(),
        rts.route_tables(),
        sgs.security_groups(),
        lbs.map(|l| l.load_balancer_descriptions().to_vec()).ok(),
        lb_tags.map(|t| t.tag_descriptions().to_vec()).ok(),
        lb_attrs.map(|a| a.load_balancer_attributes().cloned()).ok(),
    )
}

fn preexisting(rt: ResourceType) -> TagSpecification {
    TagSpecification::builder()
        .resource_type(rt)
        .tags(Tag::builder().key("origin").value("preexisting").build())
        .build()
}

/// Builds a VPC with a gateway, a public and a private subnet, the way a platform team
/// would have before the cluster; returns (vpc, igw, public, private).
async fn existing_network(ec2: &aws_sdk_ec2::Client) -> (String, String, String, String) {
    let vpc = ec2
        .create_vpc()
        .cidr_block("172.20.0.0/16")
        .tag_specifications(preexisting(ResourceType::Vpc))
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let igw = ec2
        .create_internet_gateway()
        .tag_specifications(preexisting(ResourceType::InternetGateway))
        .send()
        .await
        .unwrap()
        .internet_gateway
        .unwrap()
        .internet_gateway_id
        .unwrap();
    ec2.attach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap();
    let mk = |cidr: &'static str| {
        let ec2 = ec2.clone();
        let vpc = vpc.clone();
        async move {
            ec2.create_subnet()
                .vpc_id(vpc)
                .cidr_block(cidr)
                .availability_zone("us-east-1a")
                .tag_specifications(preexisting(ResourceType::Subnet))
                .send()
                .await
                .unwrap()
                .subnet
                .unwrap()
                .subnet_id
                .unwrap()
        }
    };
    let public = mk("172.20.0.0/24").await;
    let private = mk("172.20.1.0/24").await;
    let rt = ec2
        .create_route_table()
        .vpc_id(&vpc)
        .tag_specifications(preexisting(ResourceType::RouteTable))
        .send()
        .await
        .unwrap()
        .route_table
        .unwrap()
        .route_table_id
        .unwrap();
    ec2.create_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    ec2.associate_route_table()
        .route_table_id(&rt)
        .subnet_id(&public)
        .send()
        .await
        .unwrap();
    (vpc, igw, public, private)
}

#[tokio::test]
async fn existing_vpc_subnets_and_gateway_are_used_never_touched() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc, igw, public, private) = existing_network(&ec2).await;
    let before = snapshot(&ec2, &elb, &vpc).await;
    let c = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n    internetGatewayId: {igw}\n    subnets:\n      - {{id: {public}, public: true}}\n      - {{id: {private}}}\n"
    ));
    let o = up(&a, &c).await;
    assert!(!o.status.vpc.as_ref().unwrap().managed);
    assert!(o.status.subnets.iter().all(|s| !s.managed));
    assert!(!o.status.internet_gateway.as_ref().unwrap().managed);
    // Only what was missing was created: groups and the load balancer.
    let created_vpcs = ec2
        .describe_vpcs()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert!(created_vpcs.vpcs().is_empty());
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc]))
        .send()
        .await
        .unwrap();
    assert_eq!(subnets.subnets().len(), 2);
    let nats = ec2.describe_nat_gateways().send().await.unwrap();
    assert!(
        nats.nat_gateways().is_empty(),
        "pre-existing private subnets keep their routing"
    );
    let groups = ec2
        .describe_security_groups()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert_eq!(groups.security_groups().len(), 5);
    assert_eq!(api_lb(&elb).await.subnets(), std::slice::from_ref(&public));
    assert_eq!(snapshot(&ec2, &elb, &vpc).await, before, "after reconcile");
    fake.fake().take_calls();
    a.reconcile(&c).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &c).await;
    assert_eq!(snapshot(&ec2, &elb, &vpc).await, before, "after delete");
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // A subnet claimed public that is private is refused before anything is created.
    let wrong = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n    subnets:\n      - {{id: {private}, public: true}}\n      - {{id: {public}}}\n"
    ));
    fake.fake().take_calls();
    let err = a.reconcile(&wrong).await.unwrap_err();
    assert!(matches!(err, Error::PreExisting { .. }), "{err}");
    assert_eq!(mutating(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn existing_security_group_and_load_balancer_are_used_never_touched() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc, _igw, public, private) = existing_network(&ec2).await;
    let node_sg = ec2
        .create_security_group()
        .vpc_id(&vpc)
        .group_name("platform-nodes")
        .description("nodes, managed by the platform team")
        .tag_specifications(preexisting(ResourceType::SecurityGroup))
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    elb.create_load_balancer()
        .load_balancer_name("byo-lb")
        .listeners(
            aws_sdk_elasticloadbalancing::types::Listener::builder()
                .protocol("TCP")
                .load_balancer_port(6443)
                .instance_port(6443)
                .build()
                .unwrap(),
        )
        .subnets(&public)
        .tags(
            aws_sdk_elasticloadbalancing::types::Tag::builder()
                .key("origin")
                .value("preexisting")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let ami = ec2
        .describe_images()
        .owners("099720109477")
        .filters(filter("architecture", &["x86_64"]))
        .send()
        .await
        .unwrap()
        .images()[0]
        .image_id()
        .unwrap()
        .to_string();
    let bastion = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Micro)
        .subnet_id(&public)
        .min_count(1)
        .max_count(1)
        .tag_specifications(preexisting(ResourceType::Instance))
        .send()
        .await
        .unwrap()
        .instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    // Let it reach `running` before the snapshot.
    ec2.describe_instances()
        .instance_ids(&bastion)
        .send()
        .await
        .unwrap();
    let before = snapshot(&ec2, &elb, &vpc).await;
    let c = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n    subnets:\n      - {{id: {public}, public: true}}\n      - {{id: {private}}}\n  securityGroupOverrides: {{node: {node_sg}}}\n  bastion: {{id: {bastion}}}\n  controlPlaneLoadBalancer: {{existingName: byo-lb}}\n"
    ));
    let o = up(&a, &c).await;
    assert_eq!(o.status.security_groups[&Role::Node].id, node_sg);
    assert!(!o.status.security_groups[&Role::Node].managed);
    assert!(!o.status.load_balancer.as_ref().unwrap().managed);
    assert_eq!(o.status.bastion.as_ref().unwrap().id, bastion);
    assert!(!o.status.bastion.as_ref().unwrap().managed);
    // The control plane admits the API from the overriding node group.
    let cp = ec2
        .describe_security_groups()
        .group_ids(&o.status.security_groups[&Role::ControlPlane].id)
        .send()
        .await
        .unwrap();
    assert!(rules(&cp.security_groups()[0]).contains(&("tcp".into(), Some(6443), node_sg.clone())));
    assert_eq!(snapshot(&ec2, &elb, &vpc).await, before, "after reconcile");
    down(&a, &c).await;
    assert_eq!(snapshot(&ec2, &elb, &vpc).await, before, "after delete");
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

#[tokio::test]
async fn rule_changes_converge_with_the_fewest_calls() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let mut c = cluster("  region: us-east-1\n  network: {availabilityZoneCount: 1}\n");
    let o = up(&a, &c).await;
    let cp = o.status.security_groups[&Role::ControlPlane].id.clone();
    c.spec
        .additional_control_plane_ingress_rules
        .push(IngressRule {
            description: "metrics".into(),
            protocol: "tcp".into(),
            from_port: Some(9100),
            to_port: Some(9100),
            cidr_blocks: vec!["10.99.0.0/16".into()],
            ipv6_cidr_blocks: vec![],
            source_roles: vec![],
            source_security_group_ids: vec![],
            nat_gateways_ips_source: false,
        });
    c.spec
        .additional_tags
        .insert("cost-centre".into(), "42".into());
    fake.fake().take_calls();
    up(&a, &c).await;
    let calls = mutating(&fake);
    assert_eq!(
        calls
            .iter()
            .filter(|c| *c == "AuthorizeSecurityGroupIngress")
            .count(),
        1,
        "{calls:?}"
    );
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("Revoke") || c.starts_with("Create") && c != "CreateTags"),
        "{calls:?}"
    );
    let g = ec2
        .describe_security_groups()
        .group_ids(&cp)
        .send()
        .await
        .unwrap();
    assert!(rules(&g.security_groups()[0]).contains(&(
        "tcp".into(),
        Some(9100),
        "10.99.0.0/16".into()
    )));
    let vpc = ec2
        .describe_vpcs()
        .vpc_ids(&o.status.vpc.as_ref().unwrap().id)
        .send()
        .await
        .unwrap();
    assert!(
        vpc.vpcs()[0]
            .tags()
            .iter()
            .any(|t| t.key() == Some("cost-centre"))
    );
    assert_eq!(eip_tag(&ec2, "cost-centre").await, [Some("42".to_string())]);

    // A tag someone else puts on the VPC stays when the spec drops its own.
    let vpc_id = o.status.vpc.as_ref().unwrap().id.clone();
    ec2.create_tags()
        .resources(&vpc_id)
        .tags(
            Tag::builder()
                .key("owner-email")
                .value("ops@example.com")
                .build(),
        )
        .send()
        .await
        .unwrap();
    c.spec.additional_tags.remove("cost-centre");
    fake.fake().take_calls();
    up(&a, &c).await;
    let calls = mutating(&fake);
    assert!(
        calls
            .iter()
            .all(|c| c == "DeleteTags" || c == "CreateTags" || c == "RemoveTags" || c == "AddTags"),
        "{calls:?}"
    );
    let vpc = ec2.describe_vpcs().vpc_ids(&vpc_id).send().await.unwrap();
    let keys: Vec<&str> = vpc.vpcs()[0]
        .tags()
        .iter()
        .filter_map(|t| t.key())
        .collect();
    assert!(!keys.contains(&"cost-centre"), "{keys:?}");
    assert!(keys.contains(&"owner-email"), "{keys:?}");
    assert_eq!(eip_tag(&ec2, "cost-centre").await, [None]);
    let lb_tags = fake
        .elb_client()
        .describe_tags()
        .load_balancer_names("c1-apiserver")
        .send()
        .await
        .unwrap();
    assert!(
        !lb_tags.tag_descriptions()[0]
            .tags()
            .iter()
            .any(|t| t.key() == "cost-centre")
    );
    fake.fake().take_calls();
    up(&a, &c).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "tags settled");

    c.spec.additional_control_plane_ingress_rules.clear();
    fake.fake().take_calls();
    up(&a, &c).await;
    assert_eq!(mutating(&fake), ["RevokeSecurityGroupIngress"]);
    let g = ec2
        .describe_security_groups()
        .group_ids(&cp)
        .send()
        .await
        .unwrap();
    assert!(
        !rules(&g.security_groups()[0])
            .iter()
            .any(|(_, p, _)| *p == Some(9100))
    );

    // Turning the bastion on and off converges too.
    c.spec.bastion.enabled = true;
    c.spec.bastion.allowed_cidr_blocks = vec!["198.51.100.7/32".into()];
    let o = up(&a, &c).await;
    assert_eq!(o.status.bastion.as_ref().unwrap().state, "running");
    c.spec.bastion.enabled = false;
    up(&a, &c).await;
    let live = ec2
        .describe_instances()
        .filters(filter("instance-state-name", &["pending", "running"]))
        .send()
        .await
        .unwrap();
    assert!(live.reservations().is_empty());
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

#[tokio::test]
async fn immutable_changes_and_bad_specs_are_refused_without_changes() {
    let fake = fake().await;
    let a = actuator(&fake);
    let c = cluster("  region: us-east-1\n  network: {availabilityZoneCount: 1}\n");
    up(&a, &c).await;
    let moved = cluster(
        "  region: us-east-1\n  network: {availabilityZoneCount: 1, vpc: {cidrBlock: 10.1.0.0/16}}\n",
    );
    fake.fake().take_calls();
    let err = a.reconcile(&moved).await.unwrap_err();
    assert!(
        matches!(err, Error::Immutable { ref field, .. } if field == "spec.network.vpc.cidrBlock"),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new());

    let bad = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 9\n    subnets: [{cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1q}]\n",
    );
    let err = a.reconcile(&bad).await.unwrap_err();
    let Error::InvalidSpec { problems } = err else {
        panic!("{err}")
    };
    assert!(problems.len() >= 3, "{problems:?}");
    let actions = || -> Vec<String> {
        fake.fake()
            .take_calls()
            .into_iter()
            .map(|c| c.action.into_owned())
            .collect()
    };
    // Nothing but the zone lookup, which the clients read on the first reconcile and keep.
    assert_eq!(actions(), Vec::<String>::new(), "no call at all");
    // With clients of their own, the lookup is the one call.
    let fresh = actuator(&fake);
    assert!(fresh.reconcile(&bad).await.is_err());
    let calls = actions();
    assert_eq!(
        calls,
        ["DescribeAvailabilityZones"],
        "nothing but the zone lookup"
    );
}

#[tokio::test]
async fn delete_spares_what_others_put_in_the_cluster_vpc() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster("  region: us-east-1\n  network: {availabilityZoneCount: 1}\n");
    let o = up(&a, &c).await;
    let vpc = o.status.vpc.clone().unwrap().id;
    // Someone else adds a subnet and a group to the cluster's VPC...
    let theirs = ec2
        .create_subnet()
        .vpc_id(&vpc)
        .cidr_block("10.0.100.0/24")
        .availability_zone("us-east-1b")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    // ... and associates it with one of the cluster's route tables by hand.
    let table = o.status.route_tables[0].id.clone();
    ec2.associate_route_table()
        .route_table_id(&table)
        .subnet_id(&theirs)
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    for _ in 0..4 {
        let o = a.delete(&c).await.unwrap();
        if o.is_done() {
            panic!("the VPC cannot go while it holds someone else's subnet");
        }
    }
    // The association outlives the cluster's subnets: it is removed, and the table goes.
    let calls = mutating(&fake);
    assert_eq!(
        calls
            .iter()
            .filter(|c| *c == "DisassociateRouteTable")
            .count(),
        1,
        "{calls:?}"
    );
    let tables = ec2
        .describe_route_tables()
        .filters(filter("route-table-id", &[&table]))
        .send()
        .await
        .unwrap();
    assert!(tables.route_tables().is_empty(), "the table is gone");
    let d = ec2
        .describe_subnets()
        .subnet_ids(&theirs)
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.subnets().len(),
        1,
        "a subnet the cluster does not own is never deleted"
    );
    let o = a.delete(&c).await.unwrap();
    assert!(
        o.waiting.iter().any(|w| w.contains(&vpc)),
        "{:?}",
        o.waiting
    );
    // Once it is gone, the delete completes.
    ec2.delete_subnet().subnet_id(&theirs).send().await.unwrap();
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_bastion_in_a_preexisting_public_subnet_gets_a_public_address() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    // The platform team's public subnet routes to the gateway but maps no public IPs.
    let (vpc, _igw, public, private) = existing_network(&ec2).await;
    let c = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n    subnets:\n      - {{id: {public}, public: true}}\n      - {{id: {private}}}\n  bastion: {{enabled: true, allowedCidrBlocks: [203.0.113.0/24]}}\n"
    ));
    let o = up(&a, &c).await;
    let b = o.status.bastion.unwrap();
    assert!(b.public_ip.is_some(), "{b:?}");
    let sn = ec2
        .describe_subnets()
        .subnet_ids(&public)
        .send()
        .await
        .unwrap();
    assert_eq!(
        sn.subnets()[0].map_public_ip_on_launch(),
        Some(false),
        "the subnet is untouched"
    );
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// Delete removes the route tables after the subnets, whose deletion in the same pass ends
/// their associations: no DisassociateRouteTable (an association that outlives them is
/// removed: `delete_spares_what_others_put_in_the_cluster_vpc`).
#[tokio::test]
async fn route_tables_go_after_their_subnets_without_disassociating() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n");
    up(&a, &c).await;
    fake.fake().take_calls();
    down(&a, &c).await;
    let calls = mutating(&fake);
    assert!(calls.iter().any(|c| c == "DeleteRouteTable"), "{calls:?}");
    assert!(
        !calls.iter().any(|c| c == "DisassociateRouteTable"),
        "{calls:?}"
    );
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// Cluster c1's Elastic IPs.
async fn owned_addresses(ec2: &aws_sdk_ec2::Client) -> Vec<aws_sdk_ec2::types::Address> {
    ec2.describe_addresses()
        .filters(filter(
            "tag:sigs.k8s.io/cluster-api-provider-aws/cluster/c1",
            &["owned"],
        ))
        .send()
        .await
        .unwrap()
        .addresses
        .unwrap_or_default()
}

/// The value of tag `key` on each of cluster c1's Elastic IPs.
async fn eip_tag(ec2: &aws_sdk_ec2::Client, key: &str) -> Vec<Option<String>> {
    owned_addresses(ec2)
        .await
        .iter()
        .map(|a| {
            a.tags()
                .iter()
                .find(|t| t.key() == Some(key))
                .and_then(|t| t.value().map(String::from))
        })
        .collect()
}

/// An Elastic IP allocated by a pass that stopped before its NAT gateway was made is reused
/// by the next pass, and takes that pass's tags (the spec changed in between); after that,
/// passes with the gateway in place and its tags settled do not read the addresses.
#[tokio::test]
async fn a_reused_elastic_ip_takes_the_tags_of_the_pass_that_reuses_it() {
    use fakeaws::sim::faults::{Effect, Match, Rule, Trigger};
    let fake = fake().await;
    fake.fake().with_faults(|f| {
        f.add(Rule {
            on: Match {
                action: Some("CreateNatGateway".into()),
                ..Default::default()
            },
            when: Trigger::Nth { n: 1, times: 1 },
            effect: Effect::Error {
                code: "UnauthorizedOperation".into(),
                status: 403,
                message: "You are not authorized to perform this operation.".into(),
            },
        })
    });
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let mut c = cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n");
    c.spec.additional_tags.insert("team".into(), "blue".into());
    let mut stopped = false;
    for _ in 0..10 {
        match a.reconcile(&c).await {
            Err(_) => {
                stopped = true;
                break;
            }
            Ok(o) if o.is_done() => break,
            Ok(_) => {}
        }
    }
    assert!(stopped, "the pass stopped at CreateNatGateway");
    assert_eq!(eip_tag(&ec2, "team").await, [Some("blue".to_string())]);

    c.spec.additional_tags.insert("team".into(), "green".into());
    up(&a, &c).await;
    assert_eq!(
        eip_tag(&ec2, "team").await,
        [Some("green".to_string())],
        "the same address, reused and retagged"
    );
    fake.fake().take_calls();
    up(&a, &c).await;
    let calls = fake.fake().take_calls();
    assert!(calls.iter().all(|c| !c.is_mutating()), "{calls:?}");
    assert!(
        !calls.iter().any(|c| c.action == "DescribeAddresses"),
        "{calls:?}"
    );
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// A NAT gateway that AWS fails (as it does when a subnet has no free address) is deleted and
/// replaced with a new ClientToken, its Elastic IP reused; the cluster becomes ready and delete
/// leaves nothing.
#[tokio::test]
async fn a_failed_nat_gateway_is_deleted_and_replaced() {
    let fake = fake().await;
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.fail_next(
            fakeaws::sim::transitions::Subject::NatGateway,
            "InsufficientFreeAddressesInSubnet",
            "Subnet has insufficient free addresses to create this NAT gateway",
        )
    });
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n");
    let o = up(&a, &c).await;
    assert!(o.status.ready);
    let vpc_id = o.status.vpc.unwrap().id;
    let nats = ec2
        .describe_nat_gateways()
        .filter(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let mut states: Vec<(String, Option<String>)> = nats
        .nat_gateways()
        .iter()
        .map(|n| {
            (
                n.state().unwrap().as_str().to_string(),
                n.failure_code().map(String::from),
            )
        })
        .collect();
    states.sort();
    assert_eq!(
        states,
        [
            ("available".to_string(), None),
            (
                "deleted".to_string(),
                Some("InsufficientFreeAddressesInSubnet".to_string())
            ),
        ],
        "the failed gateway deleted, one available in its place"
    );
    assert_eq!(
        owned_addresses(&ec2).await.len(),
        1,
        "the Elastic IP is reused"
    );
    let available = nats
        .nat_gateways()
        .iter()
        .find(|n| n.failure_code().is_none())
        .unwrap();
    let routes = ec2
        .describe_route_tables()
        .filters(filter(
            "route.nat-gateway-id",
            &[available.nat_gateway_id().unwrap()],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        routes.route_tables().len(),
        1,
        "the private subnet routes to it"
    );
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// The `lb` group's rules are the cloud controller manager's: one it adds (as it does for a
/// Service of type LoadBalancer) survives every reconcile, which makes no call about it.
#[tokio::test]
async fn rules_the_ccm_adds_to_the_lb_group_survive_a_reconcile() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster("  region: us-east-1\n  network: {availabilityZoneCount: 1}\n");
    let o = up(&a, &c).await;
    let lb = o.status.security_groups[&provider::spec::Role::Lb]
        .id
        .clone();
    let elb_group = o.status.security_groups[&provider::spec::Role::ApiServerLb]
        .id
        .clone();
    ec2.authorize_security_group_ingress()
        .group_id(&lb)
        .ip_permissions(
            aws_sdk_ec2::types::IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(30080)
                .to_port(30080)
                .user_id_group_pairs(
                    aws_sdk_ec2::types::UserIdGroupPair::builder()
                        .group_id(&elb_group)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    up(&a, &c).await;
    assert!(
        mutating(&fake).is_empty(),
        "a reconcile leaves the lb group alone"
    );
    let g = ec2
        .describe_security_groups()
        .group_ids(&lb)
        .send()
        .await
        .unwrap();
    assert_eq!(
        rules(&g.security_groups()[0]),
        BTreeSet::from([("tcp".into(), Some(30080), elb_group.clone())])
    );
}

/// The API load balancer's group, restricted by `allowedCidrBlocks`, still admits the
/// cluster itself: its NAT gateways' addresses when internet-facing (following them as they
/// come and go), the VPC when internal.
#[tokio::test]
async fn a_restricted_api_still_admits_the_cluster() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let api_sources = |o: &provider::Outcome| {
        let id = o.status.security_groups[&provider::spec::Role::ApiServerLb]
            .id
            .clone();
        let ec2 = ec2.clone();
        async move {
            let g = ec2
                .describe_security_groups()
                .group_ids(id)
                .send()
                .await
                .unwrap();
            rules(&g.security_groups()[0])
                .into_iter()
                .map(|(_, _, s)| s)
                .collect::<BTreeSet<String>>()
        }
    };
    let nat_ips = || {
        let ec2 = ec2.clone();
        async move {
            let n = ec2
                .describe_nat_gateways()
                .filter(filter(&format!("tag:{KEY}"), &["owned"]))
                .filter(filter("state", &["pending", "available"]))
                .send()
                .await
                .unwrap();
            n.nat_gateways()
                .iter()
                .map(|g| format!("{}/32", g.nat_gateway_addresses()[0].public_ip().unwrap()))
                .collect::<BTreeSet<String>>()
        }
    };
    let spec = |per_zone: bool| {
        cluster(&format!(
            "  region: us-east-1\n  network: {{availabilityZoneCount: 2, natGatewayPerZone: {per_zone}}}\n  controlPlaneLoadBalancer: {{allowedCidrBlocks: [203.0.113.0/24]}}\n"
        ))
    };
    let o = up(&a, &spec(true)).await;
    let ips = nat_ips().await;
    assert_eq!(ips.len(), 2);
    let mut want: BTreeSet<String> = ips.clone();
    want.insert("203.0.113.0/24".into());
    assert_eq!(api_sources(&o).await, want);
    // A NAT gateway goes (someone deletes it) and its replacement comes: the list follows.
    let gone = o.status.nat_gateways[0].id.clone();
    ec2.delete_nat_gateway()
        .nat_gateway_id(&gone)
        .send()
        .await
        .unwrap();
    fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(Duration::from_secs(120));
    });
    let o = up(&a, &spec(true)).await;
    assert!(o.status.nat_gateways.iter().all(|n| n.id != gone));
    let ips = nat_ips().await;
    assert_eq!(ips.len(), 2);
    let mut want: BTreeSet<String> = ips.clone();
    want.insert("203.0.113.0/24".into());
    assert_eq!(api_sources(&o).await, want);
    down(&a, &spec(true)).await;

    // Internal: the VPC's CIDR.
    let internal = cluster(
        "  region: us-east-1\n  network: {availabilityZoneCount: 1, vpc: {cidrBlock: 10.60.0.0/16}}\n  controlPlaneLoadBalancer: {scheme: internal, allowedCidrBlocks: [192.0.2.0/24]}\n",
    );
    let o = up(&a, &internal).await;
    assert_eq!(
        api_sources(&o).await,
        BTreeSet::from(["192.0.2.0/24".to_string(), "10.60.0.0/16".to_string()])
    );
}

/// `controlPlaneLoadBalancer.ingressRules` replace the API balancer group's open rule with the
/// spec's (any source a rule takes: blocks of both families, roles' groups), the cluster
/// itself still admitted through its NAT gateways' addresses; steady on the next pass; the
/// open rule back when they go; a wrong rule refused, listed, before any call.
#[tokio::test]
async fn the_api_load_balancer_group_takes_the_ingress_rules_given() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let base = "  region: us-east-1\n  network: {availabilityZoneCount: 2}\n";
    let restricted = cluster(&format!(
        "{base}  controlPlaneLoadBalancer:\n    ingressRules:\n      - {{description: office, protocol: tcp, fromPort: 6443, toPort: 6443, cidrBlocks: [198.51.100.0/24], ipv6CidrBlocks: [\"2001:DB8::/32\"]}}\n      - {{description: health from the nodes, protocol: tcp, fromPort: 6443, toPort: 6443, sourceRoles: [node]}}\n"
    ));
    let o = up(&a, &restricted).await;
    let lb_group = o.status.security_groups[&Role::ApiServerLb].id.clone();
    let node_group = o.status.security_groups[&Role::Node].id.clone();
    let nat_ips: BTreeSet<String> = o
        .status
        .nat_gateways
        .iter()
        .map(|n| format!("{}/32", n.public_ip))
        .collect();
    assert_eq!(nat_ips.len(), 2);
    let mut want: BTreeSet<(String, Option<i32>, String)> = nat_ips
        .iter()
        .map(|ip| ("tcp".to_string(), Some(6443), ip.clone()))
        .collect();
    for source in ["198.51.100.0/24", "2001:db8::/32", node_group.as_str()] {
        want.insert(("tcp".into(), Some(6443), source.into()));
    }
    assert_eq!(sources_of(&ec2, &lb_group).await, want, "no open rule");
    let g = ec2
        .describe_security_groups()
        .group_ids(&lb_group)
        .send()
        .await
        .unwrap();
    let office = g.security_groups()[0].ip_permissions()[0]
        .ip_ranges()
        .iter()
        .find(|r| r.cidr_ip() == Some("198.51.100.0/24"))
        .and_then(|r| r.description())
        .map(String::from);
    assert_eq!(office.as_deref(), Some("office"));

    fake.fake().take_calls();
    up(&a, &restricted).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");

    // Without them, anyone again: one revoke, one authorize.
    let open = cluster(base);
    fake.fake().take_calls();
    up(&a, &open).await;
    let mut calls = mutating(&fake);
    calls.sort();
    assert_eq!(
        calls,
        [
            "AuthorizeSecurityGroupIngress",
            "RevokeSecurityGroupIngress"
        ]
    );
    assert_eq!(
        sources_of(&ec2, &lb_group).await,
        BTreeSet::from([("tcp".to_string(), Some(6443), "0.0.0.0/0".to_string())])
    );
    down(&a, &open).await;

    let bad = cluster(&format!(
        "{base}  controlPlaneLoadBalancer:\n    ingressRules:\n      - {{description: a, protocol: tcp, fromPort: 6443, toPort: 6443, cidrBlocks: [10.0.0.1/8]}}\n      - {{description: b, protocol: tcp, fromPort: 6443, toPort: 6443}}\n"
    ));
    refused_listing(
        &fake,
        &a,
        &bad,
        &[
            "controlPlaneLoadBalancer.ingressRules[0].cidrBlocks",
            "controlPlaneLoadBalancer.ingressRules[1]: needs cidrBlocks",
        ],
    )
    .await;
}

/// An existing VPC named without subnets lends its own; one that cannot hold a cluster (no
/// public subnet) is refused, saying why, before any change.
#[tokio::test]
async fn an_existing_vpc_without_public_subnets_is_refused() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.70.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    ec2.create_subnet()
        .vpc_id(&vpc)
        .cidr_block("10.70.1.0/24")
        .availability_zone("us-east-1a")
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    let c = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n"
    ));
    let err = a.reconcile(&c).await.unwrap_err();
    assert!(
        matches!(&err, provider::Error::PreExisting { problem, .. } if problem.contains("no public subnet")),
        "{err}"
    );
    assert!(mutating(&fake).is_empty());
    // The plan says the same, with Describe calls only.
    assert!(a.plan(&c).await.is_err());
}

/// An existing VPC lending its subnets, one of them a private subnet in a Local Zone with no
/// public subnet beside it: taken (no load balancer goes to an edge zone), shown as an edge
/// subnet, and neither the balancer nor the bastion goes there; nothing of the user's changes.
#[tokio::test]
async fn an_existing_vpcs_private_subnet_in_a_local_zone_is_lent_too() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    opt_in(&ec2, &["us-east-1-bos-1"]).await;
    let (vpc, _igw, public, private) = existing_network(&ec2).await;
    let edge = ec2
        .create_subnet()
        .vpc_id(&vpc)
        .cidr_block("172.20.8.0/24")
        .availability_zone("us-east-1-bos-1a")
        .tag_specifications(preexisting(ResourceType::Subnet))
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    let before = snapshot(&ec2, &elb, &vpc).await;
    let c = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n  bastion: {{enabled: true, allowedCidrBlocks: [203.0.113.0/24]}}\n"
    ));
    let o = up(&a, &c).await;
    let lent: BTreeMap<String, (bool, Option<String>)> = o
        .status
        .subnets
        .iter()
        .map(|s| (s.id.clone(), (s.public, s.edge_zone.clone())))
        .collect();
    assert_eq!(
        lent,
        BTreeMap::from([
            (public.clone(), (true, None)),
            (private.clone(), (false, None)),
            (edge.clone(), (false, Some("local-zone".to_string()))),
        ])
    );
    assert_eq!(api_lb(&elb).await.subnets(), std::slice::from_ref(&public));
    let bastion = o.status.bastion.clone().unwrap();
    let b = ec2
        .describe_instances()
        .instance_ids(&bastion.id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        b.reservations()[0].instances()[0].subnet_id(),
        Some(public.as_str())
    );
    fake.fake().take_calls();
    a.reconcile(&c).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(snapshot(&ec2, &elb, &vpc).await, before);
}

/// Once a cluster is up, a reconcile only reads: at most 12 calls (the three-zone example,
/// bastion and all: each kind described once, the load balancer's attributes and tags, the
/// VPC's two DNS attributes; the zones come from the clients' cache, and the Elastic IPs are
/// not read while their gateways stand with settled tags), none of them changing anything.
#[tokio::test]
async fn a_steady_state_reconcile_reads_little_and_changes_nothing() {
    let fake = fake().await;
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let a = ClusterActuator::new(clients.clone());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/cluster.yaml");
    let c = provider::spec::parse(&std::fs::read_to_string(path).unwrap(), path).unwrap();
    up(&a, &c).await;
    clients.calls.reset();
    let o = a.reconcile(&c).await.unwrap();
    assert!(o.is_done());
    let calls = clients.calls.by_operation();
    assert_eq!(clients.calls.mutating(), 0, "{calls:?}");
    assert!(
        clients.calls.total() <= 12,
        "{} calls: {calls:?}",
        clients.calls.total()
    );
}

/// The VPC's secondary ranges (AssociateVpcCidrBlock): given at create with the subnets the
/// spec puts in them, an internal API admits every range, a steady reconcile changes nothing,
/// a range added later is associated with one call, a range taken out of the spec is refused
/// (nothing changes), and the delete takes the VPC with its ranges.
#[tokio::test]
async fn secondary_ranges_are_associated_and_hold_the_private_subnets() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = |ranges: &[&str]| {
        let ranges: Vec<String> = ranges
            .iter()
            .map(|r| format!("{{ipv4CidrBlock: {r}}}"))
            .collect();
        cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{cidrBlock: 10.0.0.0/16, secondaryCidrBlocks: [{}]}}\n    subnets:\n      - {{cidrBlock: 10.0.0.0/20, availabilityZone: us-east-1a, public: true}}\n      - {{cidrBlock: 10.0.16.0/20, availabilityZone: us-east-1b, public: true}}\n      - {{cidrBlock: 100.64.0.0/18, availabilityZone: us-east-1a}}\n      - {{cidrBlock: 100.64.64.0/18, availabilityZone: us-east-1b}}\n  controlPlaneLoadBalancer: {{scheme: internal}}\n",
            ranges.join(", ")
        ))
    };
    let ranges_of = |vpc_id: String| {
        let ec2 = ec2.clone();
        async move {
            let v = ec2.describe_vpcs().vpc_ids(vpc_id).send().await.unwrap();
            v.vpcs()[0]
                .cidr_block_association_set()
                .iter()
                .map(|a| {
                    (
                        a.cidr_block().unwrap().to_string(),
                        a.cidr_block_state()
                            .unwrap()
                            .state()
                            .unwrap()
                            .as_str()
                            .to_string(),
                    )
                })
                .collect::<BTreeSet<_>>()
        }
    };
    let one = spec(&["100.64.0.0/16"]);

    // The plan names the association before anything exists.
    let planned = a.plan(&one).await.unwrap().planned;
    assert!(
        planned
            .iter()
            .any(|p| p == "associate 100.64.0.0/16 with <new vpc>"),
        "{planned:?}"
    );
    let o = up(&a, &one).await;
    let vpc_id = o.status.vpc.clone().unwrap().id;
    assert_eq!(
        ranges_of(vpc_id.clone()).await,
        BTreeSet::from([
            ("10.0.0.0/16".to_string(), "associated".to_string()),
            ("100.64.0.0/16".to_string(), "associated".to_string()),
        ])
    );
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("cidr-block", &["100.64.0.0/18", "100.64.64.0/18"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        subnets.subnets().len(),
        2,
        "the private subnets, in the range"
    );
    assert!(
        subnets
            .subnets()
            .iter()
            .all(|s| s.map_public_ip_on_launch() == Some(false))
    );
    // Their route tables send 0.0.0.0/0 to a NAT gateway, and know both ranges as local.
    let tables = ec2
        .describe_route_tables()
        .filters(filter(
            "association.subnet-id",
            &[subnets.subnets()[0].subnet_id().unwrap()],
        ))
        .send()
        .await
        .unwrap();
    let routes = tables.route_tables()[0].routes();
    for local in ["10.0.0.0/16", "100.64.0.0/16"] {
        assert!(
            routes
                .iter()
                .any(|r| r.destination_cidr_block() == Some(local)
                    && r.gateway_id() == Some("local")),
            "{routes:?}"
        );
    }
    assert!(routes.iter().any(|r| {
        r.destination_cidr_block() == Some("0.0.0.0/0")
            && r.nat_gateway_id().is_some_and(|n| n.starts_with("nat-"))
    }));
    // The internal API admits the machines of either range.
    let lb_group = o.status.security_groups[&Role::ApiServerLb].id.clone();
    let g = ec2
        .describe_security_groups()
        .group_ids(&lb_group)
        .send()
        .await
        .unwrap();
    assert_eq!(
        rules(&g.security_groups()[0]),
        BTreeSet::from([
            ("tcp".into(), Some(6443), "10.0.0.0/16".into()),
            ("tcp".into(), Some(6443), "100.64.0.0/16".into()),
        ])
    );

    // Steady: nothing changes.
    fake.fake().take_calls();
    up(&a, &one).await;
    assert_eq!(mutating(&fake), Vec::<String>::new());

    // A range added: one association (and the internal API's rule for it).
    let two = spec(&["100.64.0.0/16", "100.65.0.0/16"]);
    let o = up(&a, &two).await;
    assert_eq!(
        mutating(&fake),
        ["AssociateVpcCidrBlock", "AuthorizeSecurityGroupIngress"]
    );
    assert!(
        ranges_of(vpc_id.clone())
            .await
            .contains(&("100.65.0.0/16".to_string(), "associated".to_string()))
    );
    assert_eq!(
        o.status.vpc_secondary_cidrs,
        ["100.64.0.0/16", "100.65.0.0/16"]
    );

    // A range taken out of the spec: refused, nothing changes.
    let err = a.reconcile(&one).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, current, .. }
            if field == "spec.network.vpc.secondaryCidrBlocks" && current == "100.65.0.0/16"),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new());
    assert_eq!(ranges_of(vpc_id.clone()).await.len(), 3);

    down(&a, &two).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    let gone = ec2.describe_vpcs().vpc_ids(&vpc_id).send().await;
    assert!(gone.is_err(), "the VPC and its ranges are gone");
}

/// `emptyRoutesDefaultVPCSecurityGroup`: the cluster's VPC's `default` group loses AWS's
/// rules (all from itself in, all out), a rule someone adds later goes on the next reconcile,
/// a steady reconcile only reads it; an existing VPC's default group is refused before any
/// call.
#[tokio::test]
async fn the_default_security_group_of_the_cluster_vpc_is_kept_empty() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster(
        "  region: us-east-1\n  network: {availabilityZoneCount: 1, vpc: {emptyRoutesDefaultVPCSecurityGroup: true}}\n",
    );
    let planned = a.plan(&c).await.unwrap().planned;
    assert!(
        planned
            .iter()
            .any(|p| p == "empty the default security group of <new vpc>"),
        "{planned:?}"
    );
    let o = up(&a, &c).await;
    let vpc_id = o.status.vpc.unwrap().id;
    let default_group = || {
        let (ec2, vpc_id) = (ec2.clone(), vpc_id.clone());
        async move {
            let g = ec2
                .describe_security_groups()
                .filters(filter("vpc-id", &[&vpc_id]))
                .filters(filter("group-name", &["default"]))
                .send()
                .await
                .unwrap();
            g.security_groups()[0].clone()
        }
    };
    let g = default_group().await;
    assert!(g.ip_permissions().is_empty(), "{g:?}");
    assert!(g.ip_permissions_egress().is_empty(), "{g:?}");
    let rules = ec2
        .describe_security_group_rules()
        .filters(filter("group-id", &[g.group_id().unwrap()]))
        .send()
        .await
        .unwrap();
    assert!(rules.security_group_rules().is_empty());

    // Steady: one look, no change.
    fake.fake().take_calls();
    up(&a, &c).await;
    assert_eq!(mutating(&fake), Vec::<String>::new());

    // Someone opens it again: the next reconcile closes it.
    ec2.authorize_security_group_ingress()
        .group_id(g.group_id().unwrap())
        .ip_permissions(
            aws_sdk_ec2::types::IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(22)
                .to_port(22)
                .ip_ranges(
                    aws_sdk_ec2::types::IpRange::builder()
                        .cidr_ip("0.0.0.0/0")
                        .description("ssh from anywhere")
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    up(&a, &c).await;
    assert_eq!(mutating(&fake), ["RevokeSecurityGroupIngress"]);
    assert!(default_group().await.ip_permissions().is_empty());
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // Without the flag, a new VPC's default group keeps AWS's rules.
    let open = cluster("  region: us-east-1\n  network: {availabilityZoneCount: 1}\n");
    let o = up(&a, &open).await;
    let vpc = o.status.vpc.unwrap().id;
    let g = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap();
    assert_eq!(g.security_groups()[0].ip_permissions().len(), 1);
    assert_eq!(g.security_groups()[0].ip_permissions_egress().len(), 1);
    down(&a, &open).await;

    // An existing VPC's group is the user's.
    let mine = cluster(
        "  region: us-east-1\n  network: {vpc: {id: vpc-12345678, emptyRoutesDefaultVPCSecurityGroup: true}}\n",
    );
    refused_naming(&fake, &a, &mine, "emptyRoutesDefaultVPCSecurityGroup").await;
}

/// `controlPlaneLoadBalancer.additionalSecurityGroups`: the balancer carries the user's
/// groups beside the cluster's own (at create, and converged when the list changes), never
/// changing them; the delete leaves them.
#[tokio::test]
async fn the_api_load_balancer_carries_the_users_groups_too() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc, igw, public, private) = existing_network(&ec2).await;
    let group = |name: &'static str| {
        let (ec2, vpc) = (ec2.clone(), vpc.clone());
        async move {
            ec2.create_security_group()
                .vpc_id(vpc)
                .group_name(name)
                .description("the platform team's monitoring probes")
                .tag_specifications(preexisting(ResourceType::SecurityGroup))
                .send()
                .await
                .unwrap()
                .group_id
                .unwrap()
        }
    };
    let (probes, audit) = (group("probes").await, group("audit").await);
    let spec = |extra: &[&str]| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}}}\n    internetGatewayId: {igw}\n    subnets: [{{id: {public}, public: true}}, {{id: {private}}}]\n  controlPlaneLoadBalancer: {{additionalSecurityGroups: [{}]}}\n",
            extra.join(", ")
        ))
    };
    let groups_of_lb = || {
        let elb = elb.clone();
        async move {
            api_lb(&elb)
                .await
                .security_groups()
                .iter()
                .cloned()
                .collect::<BTreeSet<String>>()
        }
    };
    let before = snapshot(&ec2, &elb, &vpc).await;
    let o = up(&a, &spec(&[&probes])).await;
    let own = o.status.security_groups[&Role::ApiServerLb].id.clone();
    assert_eq!(
        groups_of_lb().await,
        BTreeSet::from([own.clone(), probes.clone()])
    );
    fake.fake().take_calls();
    up(&a, &spec(&[&probes])).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");

    // The list changes: one call brings the balancer to it.
    up(&a, &spec(&[&audit, &probes])).await;
    assert_eq!(mutating(&fake), ["ApplySecurityGroupsToLoadBalancer"]);
    assert_eq!(
        groups_of_lb().await,
        BTreeSet::from([own.clone(), probes.clone(), audit.clone()])
    );
    up(&a, &spec(&[])).await;
    assert_eq!(groups_of_lb().await, BTreeSet::from([own]));

    // Six groups are more than a classic balancer carries: refused before any call.
    let six = spec(&[
        "sg-00000001",
        "sg-00000002",
        "sg-00000003",
        "sg-00000004",
        "sg-00000004",
    ]);
    let problems = refused_before_any_call(&fake, &a, &six).await;
    assert_eq!(problems.len(), 2, "{problems:?}");

    down(&a, &spec(&[&probes])).await;
    // The user's groups, and everything else of theirs, as they were.
    assert_eq!(snapshot(&ec2, &elb, &vpc).await, before);
}

/// A subnet's own `tags` (such as the discovery tag a node autoscaler looks for): on the
/// subnet from its create, beside the cluster's additional tags (its own win), converging when
/// the spec changes them; an existing subnet is never tagged (refused before any call).
#[tokio::test]
async fn a_subnets_own_tags_are_created_with_it_and_converge() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = |private_tags: &str| {
        cluster(&format!(
            "  region: us-east-1\n  additionalTags: {{team: red, tier: shared}}\n  network:\n    subnets:\n      - {{cidrBlock: 10.0.0.0/20, availabilityZone: us-east-1a, public: true}}\n      - {{cidrBlock: 10.0.64.0/18, availabilityZone: us-east-1a, tags: {private_tags}}}\n"
        ))
    };
    let tags_of = |cidr: &'static str| {
        let ec2 = ec2.clone();
        async move {
            let s = ec2
                .describe_subnets()
                .filters(filter("cidr-block", &[cidr]))
                .filters(filter(&format!("tag:{KEY}"), &["owned"]))
                .send()
                .await
                .unwrap();
            s.subnets()[0]
                .tags()
                .iter()
                .map(|t| (t.key().unwrap().to_string(), t.value().unwrap().to_string()))
                .filter(|(k, _)| ["team", "tier", "karpenter.sh/discovery"].contains(&k.as_str()))
                .collect::<BTreeSet<_>>()
        }
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    up(&a, &spec("{karpenter.sh/discovery: c1, tier: nodes}")).await;
    assert_eq!(
        tags_of("10.0.64.0/18").await,
        BTreeSet::from([
            pair("team", "red"),
            pair("tier", "nodes"),
            pair("karpenter.sh/discovery", "c1"),
        ])
    );
    assert_eq!(
        tags_of("10.0.0.0/20").await,
        BTreeSet::from([pair("team", "red"), pair("tier", "shared")])
    );
    fake.fake().take_calls();
    up(&a, &spec("{karpenter.sh/discovery: c1, tier: nodes}")).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");

    // The discovery tag dropped and the override gone: the subnet is back to the cluster's.
    up(&a, &spec("{}")).await;
    assert_eq!(mutating(&fake), ["DeleteTags", "CreateTags"]);
    assert_eq!(
        tags_of("10.0.64.0/18").await,
        BTreeSet::from([pair("team", "red"), pair("tier", "shared")])
    );
    down(&a, &spec("{}")).await;

    let existing = cluster(
        "  region: us-east-1\n  network:\n    vpc: {id: vpc-12345678}\n    subnets:\n      - {id: subnet-12345678, public: true}\n      - {id: subnet-87654321, tags: {karpenter.sh/discovery: c1}}\n",
    );
    refused_naming(&fake, &a, &existing, "subnets[1].tags: an existing subnet").await;
}

/// `bastion.disableIngressRules`: the bastion's group admits no one (a rule someone adds goes
/// on the next reconcile), the machines still admit SSH from it; with `allowedCidrBlocks` too
/// the spec is refused before any call.
#[tokio::test]
async fn a_bastion_without_ingress_rules_admits_no_one() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster(
        "  region: us-east-1\n  network: {availabilityZoneCount: 1}\n  bastion: {enabled: true, disableIngressRules: true}\n",
    );
    let o = up(&a, &c).await;
    let group_rules = |role: Role| {
        let id = o.status.security_groups[&role].id.clone();
        let ec2 = ec2.clone();
        async move {
            let g = ec2
                .describe_security_groups()
                .group_ids(id)
                .send()
                .await
                .unwrap();
            g.security_groups()[0].clone()
        }
    };
    let bastion = group_rules(Role::Bastion).await;
    assert!(bastion.ip_permissions().is_empty(), "{bastion:?}");
    let bastion_id = bastion.group_id().unwrap().to_string();
    for role in [Role::ControlPlane, Role::Node] {
        let g = group_rules(role).await;
        assert!(
            rules(&g).contains(&("tcp".into(), Some(22), bastion_id.clone())),
            "{role:?}: {:?}",
            rules(&g)
        );
    }
    assert!(o.status.bastion.is_some(), "the bastion runs");

    ec2.authorize_security_group_ingress()
        .group_id(&bastion_id)
        .ip_protocol("tcp")
        .from_port(22)
        .to_port(22)
        .cidr_ip("0.0.0.0/0")
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    up(&a, &c).await;
    assert_eq!(mutating(&fake), ["RevokeSecurityGroupIngress"]);
    assert!(group_rules(Role::Bastion).await.ip_permissions().is_empty());
    down(&a, &c).await;

    let both = cluster(
        "  region: us-east-1\n  bastion: {enabled: true, disableIngressRules: true, allowedCidrBlocks: [203.0.113.0/24]}\n",
    );
    let problems = refused_before_any_call(&fake, &a, &both).await;
    assert!(
        problems.len() == 1 && problems[0].contains("disableIngressRules"),
        "{problems:?}"
    );
}

/// The bastion goes to the first public subnet of a zone AWS does not constrain: us-east-1's
/// use1-az3 (`us-east-1e` in the fake) offers only Xen-based types, where the bastion's
/// t3.micro is refused (`Unsupported`) however often it is asked. Named first, such a subnet
/// still holds the cluster's other resources.
#[tokio::test]
async fn the_bastion_skips_a_public_subnet_of_a_constrained_zone() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {cidrBlock: 10.0.0.0/16}\n    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1e, public: true}\n      - {cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.16.0/20, availabilityZone: us-east-1a}\n  bastion: {enabled: true, allowedCidrBlocks: [203.0.113.0/24]}\n",
    );
    let o = up(&a, &c).await;
    let id = o.status.bastion.as_ref().expect("a bastion").id.clone();
    let d = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let i = &d.reservations()[0].instances()[0];
    assert_eq!(
        i.placement().and_then(|p| p.availability_zone()),
        Some("us-east-1a"),
        "{i:?}"
    );
    let in_a = o
        .status
        .subnets
        .iter()
        .find(|x| x.public && x.zone == "us-east-1a")
        .unwrap();
    assert_eq!(i.subnet_id(), Some(in_a.id.as_str()));
    // No launch was refused on the way.
    let refused: Vec<_> = fake
        .fake()
        .calls()
        .into_iter()
        .filter(|c| c.action == "RunInstances" && c.error.is_some())
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
    down(&a, &c).await;
}

/// `vpc.privateDnsHostnameTypeOnLaunch`: the cluster's own subnets give their instances the
/// hostname type asked (set once made, converged when someone changes it or the spec does);
/// a value EC2 does not have, or a spec with no subnet of the cluster's own, is refused before
/// any call.
#[tokio::test]
async fn the_cluster_subnets_give_instances_the_hostname_type_asked() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = |t: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network: {{availabilityZoneCount: 1, vpc: {{privateDnsHostnameTypeOnLaunch: {t}}}}}\n"
        ))
    };
    // Each owned subnet's hostname type on launch, by id.
    let hostname_types = || {
        let ec2 = ec2.clone();
        async move {
            ec2.describe_subnets()
                .filters(filter(&format!("tag:{KEY}"), &["owned"]))
                .send()
                .await
                .unwrap()
                .subnets()
                .iter()
                .map(|s| {
                    let t = s.private_dns_name_options_on_launch().unwrap();
                    (
                        s.subnet_id().unwrap().to_string(),
                        t.hostname_type().unwrap().as_str().to_string(),
                    )
                })
                .collect::<BTreeMap<_, _>>()
        }
    };
    let all = |m: &BTreeMap<String, String>, t: &str| m.len() == 2 && m.values().all(|v| v == t);

    up(&a, &spec("resource-name")).await;
    let types = hostname_types().await;
    assert!(all(&types, "resource-name"), "{types:?}");
    // An instance launched there without options of its own is named after its id.
    let subnet = types.keys().next().unwrap().clone();
    let ami = ec2
        .describe_images()
        .owners("819546954734")
        .send()
        .await
        .unwrap()
        .images()[0]
        .image_id()
        .unwrap()
        .to_string();
    let run = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
        .subnet_id(&subnet)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let options = run.instances()[0].private_dns_name_options().unwrap();
    assert_eq!(options.hostname_type().unwrap().as_str(), "resource-name");
    ec2.terminate_instances()
        .instance_ids(run.instances()[0].instance_id().unwrap())
        .send()
        .await
        .unwrap();

    fake.fake().take_calls();
    up(&a, &spec("resource-name")).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");

    // Changed behind the provider's back on one subnet: that one is set again.
    ec2.modify_subnet_attribute()
        .subnet_id(&subnet)
        .private_dns_hostname_type_on_launch(aws_sdk_ec2::types::HostnameType::IpName)
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    up(&a, &spec("resource-name")).await;
    assert_eq!(mutating(&fake), ["ModifySubnetAttribute"]);
    assert!(all(&hostname_types().await, "resource-name"));

    // The spec changed: both subnets follow.
    up(&a, &spec("ip-name")).await;
    assert_eq!(
        mutating(&fake),
        ["ModifySubnetAttribute", "ModifySubnetAttribute"]
    );
    assert!(all(&hostname_types().await, "ip-name"));
    down(&a, &spec("ip-name")).await;

    refused_naming(
        &fake,
        &a,
        &spec("instance-id"),
        "privateDnsHostnameTypeOnLaunch: \"instance-id\" is not",
    )
    .await;
    let existing = cluster(
        "  region: us-east-1\n  network: {vpc: {id: vpc-12345678, privateDnsHostnameTypeOnLaunch: resource-name}}\n",
    );
    refused_naming(&fake, &a, &existing, "the spec has none").await;
}

/// The ingress rules of the group `id` as AWS describes them (see [`rules`]).
async fn sources_of(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
) -> BTreeSet<(String, Option<i32>, String)> {
    let g = ec2
        .describe_security_groups()
        .group_ids(id)
        .send()
        .await
        .unwrap();
    rules(&g.security_groups()[0])
}

/// Node ports restricted to blocks of both families; additional rules from IPv6 blocks, from
/// a group of the user's (named, never modified) and from the cluster's NAT gateways'
/// addresses (following them); all of it steady on the next pass however the spec spells an
/// IPv6 block; and a spec naming sources wrongly refused, every problem listed, before any
/// call.
#[tokio::test]
async fn rules_take_ipv6_blocks_user_groups_and_the_nat_gateways_as_sources() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let base = "  region: us-east-1\n  network:\n    availabilityZoneCount: 2\n    natGatewayPerZone: true\n";
    let o = up(&a, &cluster(base)).await;
    let vpc_id = o.status.vpc.as_ref().unwrap().id.clone();
    let nodes = o.status.security_groups[&Role::Node].id.clone();
    let cp = o.status.security_groups[&Role::ControlPlane].id.clone();
    assert!(
        sources_of(&ec2, &nodes)
            .await
            .contains(&("tcp".into(), Some(30000), "0.0.0.0/0".into())),
        "node ports open to anyone by default"
    );
    // A group of the user's in the cluster's VPC, with a rule of its own.
    let mine = ec2
        .create_security_group()
        .group_name("monitoring")
        .description("the user's monitoring hosts")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    ec2.authorize_security_group_ingress()
        .group_id(&mine)
        .ip_protocol("tcp")
        .from_port(22)
        .to_port(22)
        .cidr_ip("192.0.2.0/24")
        .send()
        .await
        .unwrap();
    let describe_mine = || {
        let ec2 = ec2.clone();
        let mine = mine.clone();
        async move {
            let g = ec2
                .describe_security_groups()
                .group_ids(mine)
                .send()
                .await
                .unwrap();
            (
                g.security_groups()[0].ip_permissions().to_vec(),
                g.security_groups()[0].ip_permissions_egress().to_vec(),
                g.security_groups()[0].tags().to_vec(),
            )
        }
    };
    let mine_before = describe_mine().await;

    let with_sources = cluster(&format!(
        "{base}    nodePortIngressRuleCidrBlocks: [198.51.100.0/24, \"2001:DB8:0::/32\"]\n  additionalNodeIngressRules:\n    - {{description: metrics, protocol: tcp, fromPort: 9100, toPort: 9100, ipv6CidrBlocks: [\"2001:db8:00ff::/48\"], sourceSecurityGroupIds: [{mine}]}}\n  additionalControlPlaneIngressRules:\n    - {{description: webhooks through NAT, protocol: tcp, fromPort: 8443, toPort: 8443, natGatewaysIPsSource: true}}\n"
    ));
    let o = up(&a, &with_sources).await;
    let node_rules = sources_of(&ec2, &nodes).await;
    let node_ports: BTreeSet<&str> = node_rules
        .iter()
        .filter(|(_, p, _)| *p == Some(30000))
        .map(|(_, _, s)| s.as_str())
        .collect();
    assert_eq!(
        node_ports
            .into_iter()
            .map(|s| s.to_lowercase())
            .collect::<BTreeSet<_>>(),
        BTreeSet::from(["198.51.100.0/24".to_string(), "2001:db8::/32".to_string()]),
        "only the spec's blocks reach the node ports"
    );
    let metrics: BTreeSet<String> = node_rules
        .iter()
        .filter(|(_, p, _)| *p == Some(9100))
        .map(|(_, _, s)| s.to_lowercase())
        .collect();
    assert_eq!(
        metrics,
        BTreeSet::from(["2001:db8:ff::/48".to_string(), mine.clone()])
    );
    let nat_ips: BTreeSet<String> = ec2
        .describe_nat_gateways()
        .filter(filter("vpc-id", &[&vpc_id]))
        .filter(filter("state", &["pending", "available"]))
        .send()
        .await
        .unwrap()
        .nat_gateways()
        .iter()
        .map(|n| format!("{}/32", n.nat_gateway_addresses()[0].public_ip().unwrap()))
        .collect();
    assert_eq!(nat_ips.len(), 2);
    let webhooks: BTreeSet<String> = sources_of(&ec2, &cp)
        .await
        .into_iter()
        .filter(|(_, p, _)| *p == Some(8443))
        .map(|(_, _, s)| s)
        .collect();
    assert_eq!(webhooks, nat_ips, "a /32 per NAT gateway");
    assert_eq!(o.status.nat_gateways.len(), 2);

    // Steady: the spec's spelling of an IPv6 block and AWS's compare equal.
    fake.fake().take_calls();
    up(&a, &with_sources).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");
    assert_eq!(
        describe_mine().await,
        mine_before,
        "the user's group is untouched"
    );

    // Back to the defaults: the restricted node-port rules go, the open one comes back.
    fake.fake().take_calls();
    up(&a, &cluster(base)).await;
    let mut calls = mutating(&fake);
    calls.sort();
    assert_eq!(
        calls,
        [
            "AuthorizeSecurityGroupIngress",
            "RevokeSecurityGroupIngress",
            "RevokeSecurityGroupIngress"
        ],
        "one authorize and a revoke per group"
    );
    let node_rules = sources_of(&ec2, &nodes).await;
    assert!(node_rules.contains(&("tcp".into(), Some(30000), "0.0.0.0/0".into())));
    assert!(!node_rules.iter().any(|(_, p, _)| *p == Some(9100)));
    assert!(
        !sources_of(&ec2, &cp)
            .await
            .iter()
            .any(|(_, p, _)| *p == Some(8443))
    );

    // The cluster's deletion spares the user's group (and so waits on the VPC it holds);
    // once the user deletes it, the cluster goes.
    for _ in 0..3 {
        assert!(!a.delete(&cluster(base)).await.unwrap().is_done());
    }
    assert_eq!(describe_mine().await, mine_before);
    ec2.delete_security_group()
        .group_id(&mine)
        .send()
        .await
        .unwrap();
    down(&a, &cluster(base)).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // Sources named wrongly, every one listed, before any call.
    let bad = cluster(
        "  region: us-east-1\n  network:\n    nodePortIngressRuleCidrBlocks: [2001:db8::1/64, 10.0.0.0/33]\n    subnets: [{id: subnet-0123456789abcdef0, public: true}]\n    vpc: {id: vpc-0123456789abcdef0}\n  additionalNodeIngressRules:\n    - {description: a, protocol: tcp, fromPort: 1, toPort: 1, ipv6CidrBlocks: [10.0.0.0/8], sourceSecurityGroupIds: [group-1]}\n    - {description: b, protocol: tcp, fromPort: 2, toPort: 2, natGatewaysIPsSource: true}\n    - {description: c, protocol: tcp, fromPort: 3, toPort: 3}\n",
    );
    refused_listing(
        &fake,
        &a,
        &bad,
        &[
            "nodePortIngressRuleCidrBlocks[0]: 2001:db8::1/64 is not a network address",
            "nodePortIngressRuleCidrBlocks[1]",
            "additionalNodeIngressRules[0].ipv6CidrBlocks",
            "additionalNodeIngressRules[0].sourceSecurityGroupIds[0]",
            "additionalNodeIngressRules[1].natGatewaysIPsSource",
            "additionalNodeIngressRules[2]: needs cidrBlocks",
        ],
    )
    .await;
}

/// `controlPlaneLoadBalancer.subnets` picks the balancer's subnets among the cluster's: at
/// create and when the list changes, within classic ELB's rules (one subnet per zone, never
/// none), so a subnet is swapped for another of its zone by detaching it first; a list the
/// balancer cannot take is refused, saying why, with the balancer as it was.
#[tokio::test]
async fn the_api_load_balancer_spans_the_subnets_named() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let subnets = "    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.2.0/24, availabilityZone: us-east-1b, public: true}\n      - {cidrBlock: 10.0.10.0/24, availabilityZone: us-east-1a}\n      - {cidrBlock: 10.0.11.0/24, availabilityZone: us-east-1b}\n";
    let spec = |named: &[&str]| {
        let lb = if named.is_empty() {
            String::new()
        } else {
            format!(
                "  controlPlaneLoadBalancer: {{subnets: [{}]}}\n",
                named.join(", ")
            )
        };
        cluster(&format!("  region: us-east-1\n  network:\n{subnets}{lb}"))
    };
    let spanned = || {
        let elb = elb.clone();
        async move {
            api_lb(&elb)
                .await
                .subnets()
                .iter()
                .cloned()
                .collect::<BTreeSet<String>>()
        }
    };
    let o = up(&a, &spec(&[])).await;
    let id = |cidr: &str| {
        o.status
            .subnets
            .iter()
            .find(|s| s.cidr == cidr)
            .unwrap()
            .id
            .clone()
    };
    let (a1, a2, b, private_a) = (
        id("10.0.0.0/24"),
        id("10.0.1.0/24"),
        id("10.0.2.0/24"),
        id("10.0.10.0/24"),
    );
    // By default one public subnet per zone.
    let default = spanned().await;
    assert_eq!(default.len(), 2);
    assert!(default.contains(&b), "{default:?}");

    // The second subnet of zone a, for the first: the old one goes first (one per zone).
    let (keep_a, other_a) = if default.contains(&a1) {
        (a1, a2)
    } else {
        (a2, a1)
    };
    fake.fake().take_calls();
    up(&a, &spec(&[&other_a, &b])).await;
    assert_eq!(
        mutating(&fake),
        [
            "DetachLoadBalancerFromSubnets",
            "AttachLoadBalancerToSubnets"
        ]
    );
    assert_eq!(
        spanned().await,
        BTreeSet::from([other_a.clone(), b.clone()])
    );
    fake.fake().take_calls();
    up(&a, &spec(&[&other_a, &b])).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");

    // To zone a's other subnet alone: zone b's stays until the new one is in.
    up(&a, &spec(&[&keep_a])).await;
    assert_eq!(spanned().await, BTreeSet::from([keep_a.clone()]));

    // Lists the balancer cannot take: refused, the balancer as it was.
    for (named, why) in [
        (vec![other_a.as_str()], "cannot move"),
        (vec![private_a.as_str()], "is private"),
        (
            vec![keep_a.as_str(), other_a.as_str()],
            "one subnet per zone",
        ),
        (
            vec!["subnet-0123456789abcdef0"],
            "is not one of the cluster's subnets",
        ),
    ] {
        let err = a.reconcile(&spec(&named)).await.unwrap_err();
        assert!(err.to_string().contains(why), "{why}: {err}");
        assert_eq!(spanned().await, BTreeSet::from([keep_a.clone()]));
    }
    // Malformed: refused before any call.
    let problems = refused_before_any_call(&fake, &a, &spec(&["subnet-1", &b, &b])).await;
    assert_eq!(problems.len(), 2, "{problems:?}");

    // Back to the default.
    up(&a, &spec(&[])).await;
    assert_eq!(spanned().await.len(), 2);
    down(&a, &spec(&[])).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// `network.vpc.subnetSchema: PreferPublic` (CAPA's): the default subnets' roles swapped, the
/// public ones taking the VPC's larger parts; the NAT gateways in them as ever; a schema the
/// cluster cannot apply, or an unknown one, refused before any call.
#[tokio::test]
async fn a_cluster_preferring_public_subnets_gives_them_the_larger_ranges() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 3\n    vpc: {cidrBlock: 10.0.0.0/16, subnetSchema: PreferPublic}\n",
    );
    let o = up(&a, &spec).await;
    let subnets = ec2
        .describe_subnets()
        .filters(filter(
            "vpc-id",
            &[o.status.vpc.as_ref().unwrap().id.as_str()],
        ))
        .send()
        .await
        .unwrap();
    let mut by_role: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in subnets.subnets() {
        let role = s
            .tags()
            .iter()
            .find(|t| t.key() == Some("sigs.k8s.io/cluster-api-provider-aws/role"))
            .and_then(|t| t.value())
            .unwrap()
            .to_string();
        by_role
            .entry(role)
            .or_default()
            .insert(s.cidr_block().unwrap().to_string());
    }
    assert_eq!(
        by_role["public"],
        BTreeSet::from(["10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18"].map(String::from))
    );
    assert_eq!(
        by_role["private"],
        BTreeSet::from(["10.0.0.0/20", "10.0.16.0/20", "10.0.32.0/20"].map(String::from))
    );
    // The NAT gateways live in the public subnets, one per zone's private subnet routes.
    let public: Vec<&String> = by_role["public"].iter().collect();
    let nats = ec2
        .describe_nat_gateways()
        .filter(filter("state", &["pending", "available"]))
        .send()
        .await
        .unwrap();
    for n in nats.nat_gateways() {
        let in_subnet = subnets
            .subnets()
            .iter()
            .find(|s| s.subnet_id() == n.subnet_id())
            .and_then(|s| s.cidr_block())
            .unwrap()
            .to_string();
        assert!(public.contains(&&in_subnet), "{in_subnet}");
    }
    fake.fake().take_calls();
    up(&a, &spec).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");
    // The schema cannot change under existing subnets: refused, nothing touched.
    let flipped = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 3\n    vpc: {cidrBlock: 10.0.0.0/16}\n",
    );
    let err = a.reconcile(&flipped).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.network.vpc.subnetSchema"),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new(), "refused untouched");
    down(&a, &spec).await;

    // Likewise a subnet of the spec's whose role flips.
    let named = |first_public: bool| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    subnets:\n      - {{cidrBlock: 10.0.0.0/20, availabilityZone: us-east-1a, public: {first_public}}}\n      - {{cidrBlock: 10.0.64.0/18, availabilityZone: us-east-1a, public: {}}}\n",
            !first_public
        ))
    };
    up(&a, &named(true)).await;
    fake.fake().take_calls();
    let err = a.reconcile(&named(false)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.network.subnets[].public"),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new(), "refused untouched");
    down(&a, &named(true)).await;

    let bad = cluster(
        "  region: us-east-1\n  network:\n    vpc: {id: vpc-0123456789abcdef0, subnetSchema: PreferLarge}\n",
    );
    refused_listing(
        &fake,
        &a,
        &bad,
        &[
            "spec.network.vpc.subnetSchema: \"PreferLarge\" is not PreferPrivate or PreferPublic",
            "spec.network.vpc.subnetSchema: applies to the subnets the cluster makes by default",
        ],
    )
    .await;
}

/// `controlPlaneLoadBalancer.healthCheckProtocol` (CAPA's): the API balancer checks the API
/// servers over the protocol named (`/readyz` for HTTP and HTTPS), converged when it changes;
/// an unknown protocol, or one beside a whole `healthCheck`, refused before any call.
#[tokio::test]
async fn the_api_load_balancer_checks_over_the_protocol_named() {
    let fake = fake().await;
    let a = actuator(&fake);
    let elb = fake.elb_client();
    let with = |protocol: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network: {{availabilityZoneCount: 1}}\n  controlPlaneLoadBalancer: {{healthCheckProtocol: {protocol}}}\n"
        ))
    };
    up(&a, &with("HTTPS")).await;
    let target = |d: aws_sdk_elasticloadbalancing::types::LoadBalancerDescription| {
        let h = d.health_check().unwrap();
        (h.target().to_string(), h.interval(), h.healthy_threshold())
    };
    assert_eq!(
        target(api_lb(&elb).await),
        ("HTTPS:6443/readyz".to_string(), 10, 5)
    );
    fake.fake().take_calls();
    up(&a, &with("SSL")).await;
    assert_eq!(mutating(&fake), ["ConfigureHealthCheck"]);
    assert_eq!(target(api_lb(&elb).await).0, "SSL:6443");
    down(&a, &with("SSL")).await;

    let both = cluster(
        "  region: us-east-1\n  controlPlaneLoadBalancer:\n    healthCheckProtocol: UDP\n    healthCheck: {target: \"TCP:6443\", interval: 10, timeout: 5, healthyThreshold: 5, unhealthyThreshold: 3}\n",
    );
    refused_listing(
        &fake,
        &a,
        &both,
        &[
            "healthCheckProtocol: \"UDP\" is not TCP, SSL, HTTP or HTTPS",
            "healthCheckProtocol: not with healthCheck",
        ],
    )
    .await;
}

/// `network.vpc.elasticIpPool` (CAPA's): the NAT gateways' addresses come from the
/// account's own range (BYOIP) when it has enough free, checked once before any is
/// allocated; too few: AWS's addresses with `publicIpv4PoolFallbackOrder: AmazonPool`,
/// else refused naming the pool, nothing allocated; a bad pool spec refused before any call.
#[tokio::test]
async fn nat_gateway_addresses_come_from_the_accounts_own_pool() {
    let mut limits = fakeaws::region::Limits::default();
    limits.set("elastic-ips", 300).unwrap();
    let fake = fakeaws::spawn_with(fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        limits,
        byoip: vec!["us-east-1=198.18.0.0/24".parse().unwrap()],
        ..Default::default()
    })
    .await
    .unwrap();
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let pools = ec2.describe_public_ipv4_pools().send().await.unwrap();
    let pool = pools.public_ipv4_pools()[0].pool_id().unwrap().to_string();
    let free = || {
        let (ec2, pool) = (ec2.clone(), pool.clone());
        async move {
            ec2.describe_public_ipv4_pools()
                .pool_ids(pool)
                .send()
                .await
                .unwrap()
                .public_ipv4_pools()[0]
                .total_available_address_count()
                .unwrap()
        }
    };
    let spec = |fallback: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    availabilityZoneCount: 2\n    vpc: {{elasticIpPool: {{publicIpv4Pool: {pool}{fallback}}}}}\n"
        ))
    };
    let pools_of = |addresses: Vec<aws_sdk_ec2::types::Address>| {
        let mut v: Vec<(String, bool)> = addresses
            .iter()
            .map(|x| {
                (
                    x.public_ipv4_pool().unwrap().to_string(),
                    x.public_ip().unwrap().starts_with("198.18.0."),
                )
            })
            .collect();
        v.sort();
        v
    };

    up(&a, &spec("")).await;
    assert_eq!(
        pools_of(owned_addresses(&ec2).await),
        vec![(pool.clone(), true), (pool.clone(), true)],
        "both gateways' addresses from the pool"
    );
    assert_eq!(free().await, 254);
    fake.fake().take_calls();
    up(&a, &spec("")).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");
    down(&a, &spec("")).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(free().await, 256, "released back to the pool");

    // The pool all but full: one address free, two needed.
    for _ in 0..255 {
        ec2.allocate_address()
            .public_ipv4_pool(&pool)
            .send()
            .await
            .unwrap();
    }
    let err = a.reconcile(&spec("")).await.unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "public IPv4 pool {pool} (spec.network.vpc.elasticIpPool.publicIpv4Pool): has 1 \
             free addresses, 2 needed for the NAT gateways"
        )),
        "{err}"
    );
    assert!(owned_addresses(&ec2).await.is_empty(), "nothing allocated");
    assert_eq!(free().await, 1);
    let amazon = spec(", publicIpv4PoolFallbackOrder: AmazonPool");
    up(&a, &amazon).await;
    assert_eq!(
        pools_of(owned_addresses(&ec2).await),
        vec![("amazon".to_string(), false), ("amazon".to_string(), false)]
    );
    assert_eq!(free().await, 1);
    down(&a, &amazon).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // A pool the account does not have.
    let missing = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n    vpc: {elasticIpPool: {publicIpv4Pool: ipv4pool-ec2-0123456789abcdef0}}\n",
    );
    let err = a.reconcile(&missing).await.unwrap_err().to_string();
    assert!(
        err.contains("ipv4pool-ec2-0123456789abcdef0 (spec.network.vpc.elasticIpPool.publicIpv4Pool): does not exist"),
        "{err}"
    );
    assert!(owned_addresses(&ec2).await.is_empty());
    down(&a, &missing).await;

    let bad = cluster(
        "  region: us-east-1\n  network:\n    vpc: {elasticIpPool: {publicIpv4Pool: pool-1, publicIpv4PoolFallbackOrder: Anywhere}}\n",
    );
    refused_listing(
        &fake,
        &a,
        &bad,
        &[
            "spec.network.vpc.elasticIpPool.publicIpv4Pool: \"pool-1\" is not a ipv4pool-ec2- id",
            "spec.network.vpc.elasticIpPool.publicIpv4PoolFallbackOrder: \"Anywhere\" is not AmazonPool or None",
        ],
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster("  region: us-east-1\n  network:\n    vpc: {elasticIpPool: {}}\n"),
        "spec.network.vpc.elasticIpPool: give publicIpv4Pool",
    )
    .await;
}

/// The default private scope of a new IPAM of the fake's region.
async fn ipam_scope(ec2: &aws_sdk_ec2::Client) -> String {
    ec2.create_ipam()
        .send()
        .await
        .unwrap()
        .ipam()
        .unwrap()
        .private_default_scope_id()
        .unwrap()
        .to_string()
}

/// A pool of `family` in `scope` for us-east-1, named `name`, holding `cidr`; its id.
async fn ipam_pool(
    ec2: &aws_sdk_ec2::Client,
    scope: &str,
    family: aws_sdk_ec2::types::AddressFamily,
    name: &str,
    cidr: &str,
) -> String {
    use aws_sdk_ec2::types::{ResourceType, Tag};
    let pool = ec2
        .create_ipam_pool()
        .ipam_scope_id(scope)
        .address_family(family)
        .locale("us-east-1")
        .tag_specifications(
            TagSpecification::builder()
                .resource_type(ResourceType::IpamPool)
                .tags(Tag::builder().key("Name").value(name).build())
                .build(),
        )
        .send()
        .await
        .unwrap()
        .ipam_pool()
        .unwrap()
        .ipam_pool_id()
        .unwrap()
        .to_string();
    ec2.provision_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .cidr(cidr)
        .send()
        .await
        .unwrap();
    pool
}

/// The allocations of `pool` as GetIpamPoolAllocations lists them: (range, resource type),
/// sorted.
async fn pool_allocations(
    ec2: &aws_sdk_ec2::Client,
    pool: &str,
) -> Vec<(String, aws_sdk_ec2::types::IpamPoolAllocationResourceType)> {
    let mut v: Vec<_> = ec2
        .get_ipam_pool_allocations()
        .ipam_pool_id(pool)
        .send()
        .await
        .unwrap()
        .ipam_pool_allocations()
        .iter()
        .map(|x| {
            (
                x.cidr().unwrap().to_string(),
                x.resource_type().unwrap().clone(),
            )
        })
        .collect();
    v.sort_by(|x, y| x.0.cmp(&y.0));
    v
}

/// `network.vpc.ipamPool` (CAPA's): the cluster's VPC takes its range from an IPAM pool found
/// by name (or id), the default subnets are cut from the range it gets, a second pass changes
/// nothing, and deleting the cluster gives the range back to the pool. A pool that is not
/// there is refused before anything is made; a bad pool spec before any call.
#[tokio::test]
async fn the_vpc_range_comes_from_an_ipam_pool() {
    use aws_sdk_ec2::types::{AddressFamily, IpamPoolAllocationResourceType};
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let scope = ipam_scope(&ec2).await;
    let pool = ipam_pool(
        &ec2,
        &scope,
        AddressFamily::Ipv4,
        "clusters",
        "10.64.0.0/12",
    )
    .await;
    // Another tenant of the pool holds its first /16.
    ec2.allocate_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .netmask_length(16)
        .send()
        .await
        .unwrap();
    let allocations = || pool_allocations(&ec2, &pool);

    let spec = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 2\n    vpc: {ipamPool: {name: clusters, netmaskLength: 20}}\n",
    );
    let o = up(&a, &spec).await;
    assert_eq!(o.status.vpc_cidr.as_deref(), Some("10.65.0.0/20"));
    assert_eq!(
        allocations().await,
        [
            (
                "10.64.0.0/16".to_string(),
                IpamPoolAllocationResourceType::Custom
            ),
            (
                "10.65.0.0/20".to_string(),
                IpamPoolAllocationResourceType::Vpc
            ),
        ]
    );
    let vpc = o.status.vpc.as_ref().unwrap().id.clone();
    let described = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc]))
        .send()
        .await
        .unwrap();
    let mut cidrs: Vec<&str> = described
        .subnets()
        .iter()
        .filter_map(|s| s.cidr_block())
        .collect();
    cidrs.sort();
    // The /20 over two zones as the default split cuts a range: public /24s, private /22s.
    assert_eq!(
        cidrs,
        [
            "10.65.0.0/24",
            "10.65.1.0/24",
            "10.65.4.0/22",
            "10.65.8.0/22"
        ]
    );
    fake.fake().take_calls();
    up(&a, &spec).await;
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");
    down(&a, &spec).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(
        allocations().await,
        [(
            "10.64.0.0/16".to_string(),
            IpamPoolAllocationResourceType::Custom
        )],
        "the VPC's range is back in the pool"
    );

    // By id, the pool's default length (/16).
    let by_id = cluster(&format!(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n    vpc: {{ipamPool: {{id: {pool}}}}}\n"
    ));
    let o = up(&a, &by_id).await;
    assert_eq!(o.status.vpc_cidr.as_deref(), Some("10.65.0.0/16"));
    down(&a, &by_id).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    let missing =
        cluster("  region: us-east-1\n  network:\n    vpc: {ipamPool: {name: elsewhere}}\n");
    let err = a.reconcile(&missing).await.unwrap_err().to_string();
    assert!(
        err.contains("IPAM pool named elsewhere (spec.network.vpc.ipamPool): is not among"),
        "{err}"
    );
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new(), "nothing made");

    refused_listing(
        &fake,
        &a,
        &cluster(
            "  region: us-east-1\n  network:\n    vpc: {cidrBlock: 10.0.0.0/16, ipamPool: {id: pool-1, netmaskLength: 8}, secondaryCidrBlocks: [{ipv4CidrBlock: 100.64.0.0/16}]}\n",
        ),
        &[
            "spec.network.vpc: give either cidrBlock or ipamPool, not both",
            "spec.network.vpc.secondaryCidrBlocks: not with spec.network.vpc.ipamPool",
            "spec.network.vpc.ipamPool.id: \"pool-1\" is not a ipam-pool- id",
            "spec.network.vpc.ipamPool.netmaskLength: 8 must be between 16 and 28",
        ],
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster("  region: us-east-1\n  network:\n    vpc: {ipamPool: {}}\n"),
        "spec.network.vpc.ipamPool: give id or name",
    )
    .await;
}

/// The IPv6 picture of a dual-stack cluster as EC2 holds it, checked whole: the VPC's block,
/// each owned subnet's distinct /64 inside it (assigning addresses on launch), the owned
/// egress-only gateway in the VPC, each owned route table's IPv6 routes, and the node port
/// and API rules from `::/0`. Returns the VPC's block.
async fn check_dual_stack(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
    internet_facing: bool,
) -> ipnet::Ipv6Net {
    let vpc = ec2.describe_vpcs().vpc_ids(vpc_id).send().await.unwrap();
    let blocks: Vec<_> = vpc.vpcs()[0]
        .ipv6_cidr_block_association_set()
        .iter()
        .map(|a| {
            (
                a.ipv6_cidr_block().unwrap().to_string(),
                a.ipv6_cidr_block_state().unwrap().state().unwrap().as_str(),
            )
        })
        .collect();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0].1, "associated");
    let block: ipnet::Ipv6Net = blocks[0].0.parse().unwrap();
    assert_eq!(block.prefix_len(), 56);

    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    let mut seen = BTreeSet::new();
    for sn in subnets.subnets() {
        let set = sn.ipv6_cidr_block_association_set();
        assert_eq!(set.len(), 1, "{sn:?}");
        let c: ipnet::Ipv6Net = set[0].ipv6_cidr_block().unwrap().parse().unwrap();
        assert_eq!(c.prefix_len(), 64);
        assert!(block.contains(&c), "{c} outside {block}");
        assert!(seen.insert(c), "{c} twice");
        assert_eq!(sn.assign_ipv6_address_on_creation(), Some(true), "{sn:?}");
    }
    assert!(!seen.is_empty());

    let eigws = ec2
        .describe_egress_only_internet_gateways()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    let [eigw] = eigws.egress_only_internet_gateways() else {
        panic!("{eigws:?}")
    };
    assert_eq!(eigw.attachments()[0].vpc_id(), Some(vpc_id));
    let eigw_id = eigw.egress_only_internet_gateway_id().unwrap();

    let tables = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    for t in tables.route_tables() {
        let role = t
            .tags()
            .iter()
            .find(|t| t.key() == Some("sigs.k8s.io/cluster-api-provider-aws/role"))
            .and_then(|t| t.value())
            .unwrap();
        let v6: BTreeMap<&str, String> = t
            .routes()
            .iter()
            .filter_map(|r| {
                let target = r
                    .gateway_id()
                    .or(r.nat_gateway_id())
                    .or(r.egress_only_internet_gateway_id())?;
                Some((r.destination_ipv6_cidr_block()?, target.to_string()))
            })
            .collect();
        let v4_target = t
            .routes()
            .iter()
            .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
            .and_then(|r| r.gateway_id().or(r.nat_gateway_id()))
            .unwrap()
            .to_string();
        let block = block.to_string();
        let want: BTreeMap<&str, String> = if role == "public" {
            assert!(v4_target.starts_with("igw-"));
            BTreeMap::from([("::/0", v4_target), (block.as_str(), "local".to_string())])
        } else {
            assert!(v4_target.starts_with("nat-"));
            BTreeMap::from([
                ("::/0", eigw_id.to_string()),
                (block.as_str(), "local".to_string()),
            ])
        };
        assert_eq!(v6, want, "{role} table {:?}", t.route_table_id());
    }

    let groups = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    let group = |role: &str| {
        groups
            .security_groups()
            .iter()
            .find(|g| g.group_name().unwrap().ends_with(&format!("-{role}")))
            .unwrap()
    };
    assert!(rules(group("node")).contains(&("tcp".into(), Some(30000), "::/0".into())));
    assert_eq!(
        rules(group("apiserver-lb")).contains(&("tcp".into(), Some(6443), "::/0".into())),
        internet_facing
    );
    block
}

#[tokio::test]
async fn a_dual_stack_cluster_has_ipv6_in_every_part_it_makes_and_leaves_none() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {ipv6: {}}\n    availabilityZoneCount: 2\n  bastion: {enabled: true, allowedCidrBlocks: [203.0.113.0/24, \"2001:DB8::/32\"]}\n",
    );

    // The plan names the IPv6 parts before anything exists.
    let planned = a.plan(&c).await.unwrap().planned;
    for needle in [
        "create vpc 10.0.0.0/16 and an Amazon-provided IPv6 /56",
        "and a /64 of the VPC's IPv6 block public in us-east-1a",
        "create egress-only internet gateway in <new vpc>",
    ] {
        assert!(
            planned.iter().any(|p| p.contains(needle)),
            "{needle} in {planned:?}"
        );
    }
    assert!(mutating(&fake).is_empty());

    let o = up(&a, &c).await;
    let vpc_id = o.status.vpc.clone().unwrap().id;
    let block = check_dual_stack(&ec2, &vpc_id, true).await;
    assert_eq!(o.status.vpc_ipv6_cidr, Some(block.to_string()));
    assert!(o.status.subnets.iter().all(|s| s.ipv6_cidr.is_some()));
    // The bastion admits SSH from the IPv6 block named, as AWS spells it.
    let bastion_group = ec2
        .describe_security_groups()
        .filters(filter("group-name", &["c1-bastion"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        rules(&bastion_group.security_groups()[0]),
        BTreeSet::from([
            ("tcp".to_string(), Some(22), "203.0.113.0/24".to_string()),
            ("tcp".to_string(), Some(22), "2001:db8::/32".to_string()),
        ])
    );
    // The bastion, launched in a public subnet, holds an IPv6 address of its /64.
    let bastion = o.status.bastion.clone().unwrap().id;
    let d = ec2
        .describe_instances()
        .instance_ids(&bastion)
        .send()
        .await
        .unwrap();
    let i = &d.reservations()[0].instances()[0];
    let v6: std::net::Ipv6Addr = i.network_interfaces()[0].ipv6_addresses()[0]
        .ipv6_address()
        .unwrap()
        .parse()
        .unwrap();
    let subnet_block = o
        .status
        .subnets
        .iter()
        .find(|s| Some(s.id.as_str()) == i.subnet_id())
        .and_then(|s| s.ipv6_cidr.clone())
        .unwrap();
    assert!(
        subnet_block
            .parse::<ipnet::Ipv6Net>()
            .unwrap()
            .contains(&v6)
    );

    // Steady state: nothing to change.
    fake.fake().take_calls();
    assert!(a.reconcile(&c).await.unwrap().is_done());
    assert_eq!(mutating(&fake), Vec::<String>::new());

    // A route taken away by hand comes back, and only it.
    let private_table = o
        .status
        .route_tables
        .iter()
        .find(|t| {
            o.status
                .subnets
                .iter()
                .any(|s| s.id == t.subnet_id && !s.public)
        })
        .unwrap()
        .id
        .clone();
    ec2.delete_route()
        .route_table_id(&private_table)
        .destination_ipv6_cidr_block("::/0")
        .send()
        .await
        .unwrap();
    fake.fake().take_calls();
    up(&a, &c).await;
    assert_eq!(mutating(&fake), ["CreateRoute"]);
    check_dual_stack(&ec2, &vpc_id, true).await;

    // IPv6 is never taken away.
    let without = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 2\n  bastion: {enabled: true, allowedCidrBlocks: [203.0.113.0/24, \"2001:DB8::/32\"]}\n",
    );
    fake.fake().take_calls();
    let err = a.reconcile(&without).await.unwrap_err();
    assert!(err.to_string().contains("spec.network.vpc.ipv6"), "{err}");
    assert_eq!(mutating(&fake), Vec::<String>::new());

    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    let eigws = ec2
        .describe_egress_only_internet_gateways()
        .send()
        .await
        .unwrap();
    assert!(
        eigws.egress_only_internet_gateways().is_empty(),
        "{eigws:?}"
    );
}

#[tokio::test]
async fn a_cluster_made_single_stack_becomes_dual_stack_when_asked() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let v4 = cluster(
        "  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n  controlPlaneLoadBalancer: {scheme: internal}\n",
    );
    let o = up(&a, &v4).await;
    let vpc_id = o.status.vpc.clone().unwrap().id;
    assert!(o.status.vpc_ipv6_cidr.is_none());

    let dual = cluster(
        "  region: us-east-1\n  network:\n    vpc: {ipv6: {}}\n    availabilityZoneCount: 1\n  controlPlaneLoadBalancer: {scheme: internal}\n",
    );
    fake.fake().take_calls();
    let o = up(&a, &dual).await;
    let mut calls = mutating(&fake);
    calls.sort();
    assert_eq!(
        calls,
        [
            "AssociateSubnetCidrBlock",
            "AssociateSubnetCidrBlock",
            "AssociateVpcCidrBlock",
            "AuthorizeSecurityGroupIngress",
            "AuthorizeSecurityGroupIngress",
            "CreateEgressOnlyInternetGateway",
            "CreateRoute",
            "CreateRoute",
            "ModifySubnetAttribute",
            "ModifySubnetAttribute",
        ]
    );
    let block = check_dual_stack(&ec2, &vpc_id, false).await;
    assert_eq!(o.status.vpc_ipv6_cidr, Some(block.to_string()));
    // An internal API admits the VPC's IPv6 block beside its IPv4 range.
    let groups = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("group-name", &["c1-apiserver-lb"]))
        .send()
        .await
        .unwrap();
    let lb_rules = rules(&groups.security_groups()[0]);
    assert!(lb_rules.contains(&("tcp".into(), Some(6443), block.to_string())));
    assert!(!lb_rules.contains(&("tcp".into(), Some(6443), "::/0".into())));

    down(&a, &dual).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

/// The IPv6 routes of the cluster's own route tables in `vpc_id`, by role (`public` or
/// `private`): destination -> target, each role's tables alike.
async fn owned_ipv6_routes(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let tables = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for t in tables.route_tables() {
        let role = t
            .tags()
            .iter()
            .find(|t| t.key() == Some("sigs.k8s.io/cluster-api-provider-aws/role"))
            .and_then(|t| t.value())
            .unwrap()
            .to_string();
        let v6: BTreeMap<String, String> = t
            .routes()
            .iter()
            .filter_map(|r| {
                let target = r
                    .gateway_id()
                    .or(r.egress_only_internet_gateway_id())
                    .or(r.nat_gateway_id())?;
                Some((
                    r.destination_ipv6_cidr_block()?.to_string(),
                    target.to_string(),
                ))
            })
            .collect();
        if let Some(seen) = out.get(&role) {
            assert_eq!(seen, &v6, "the {role} tables differ");
        }
        out.insert(role, v6);
    }
    out
}

#[tokio::test]
async fn a_dual_stack_cluster_in_an_existing_vpc_uses_its_block_and_never_touches_it() {
    let fake = fake().await;
    let a = actuator(&fake);
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc, igw, public, _private) = existing_network(&ec2).await;
    let spec = |eigw: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{id: {vpc}, ipv6: {{{eigw}}}}}\n    internetGatewayId: {igw}\n    subnets:\n      - {{cidrBlock: 172.20.10.0/24, availabilityZone: us-east-1b, public: true}}\n      - {{cidrBlock: 172.20.11.0/24, availabilityZone: us-east-1b}}\n"
        ))
    };
    let own_eigw = spec("");

    // A VPC without an IPv6 block is never given one: refused, with nothing made.
    fake.fake().take_calls();
    let err = a.reconcile(&own_eigw).await.unwrap_err();
    assert!(
        matches!(&err, Error::PreExisting { problem, .. } if problem.contains("holds no IPv6 block")),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new());
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // The user gives the VPC a block, its public subnet the block's first /64, and makes
    // an egress-only gateway of their own.
    let block: ipnet::Ipv6Net = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&vpc)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .ipv6_cidr_block_association()
        .unwrap()
        .ipv6_cidr_block()
        .unwrap()
        .parse()
        .unwrap();
    let first = ipnet::Ipv6Net::new(block.network(), 64).unwrap();
    ec2.associate_subnet_cidr_block()
        .subnet_id(&public)
        .ipv6_cidr_block(first.to_string())
        .send()
        .await
        .unwrap();
    let users_eigw = ec2
        .create_egress_only_internet_gateway()
        .vpc_id(&vpc)
        .tag_specifications(preexisting(ResourceType::EgressOnlyInternetGateway))
        .send()
        .await
        .unwrap()
        .egress_only_internet_gateway
        .unwrap()
        .egress_only_internet_gateway_id
        .unwrap();
    let eigw_of = |id: &str| {
        let ec2 = ec2.clone();
        let id = id.to_string();
        async move {
            ec2.describe_egress_only_internet_gateways()
                .egress_only_internet_gateway_ids(id)
                .send()
                .await
                .unwrap()
                .egress_only_internet_gateways()
                .to_vec()
        }
    };
    let before = (snapshot(&ec2, &elb, &vpc).await, eigw_of(&users_eigw).await);

    // The user's gateway, named: the private subnets go out through it.
    let named = spec(&format!("egressOnlyInternetGatewayId: {users_eigw}"));
    let o = up(&a, &named).await;
    assert_eq!(o.status.vpc_ipv6_cidr, Some(block.to_string()));
    let gw = o.status.egress_only_internet_gateway.clone().unwrap();
    assert_eq!((gw.id.as_str(), gw.managed), (users_eigw.as_str(), false));
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc]))
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    let mut own = BTreeSet::new();
    for sn in subnets.subnets() {
        let set = sn.ipv6_cidr_block_association_set();
        assert_eq!(set.len(), 1, "{sn:?}");
        let c: ipnet::Ipv6Net = set[0].ipv6_cidr_block().unwrap().parse().unwrap();
        assert!(block.contains(&c) && c.prefix_len() == 64, "{c}");
        assert_ne!(c, first, "the user's subnet holds {first}");
        assert!(own.insert(c), "{c} twice");
        assert_eq!(sn.assign_ipv6_address_on_creation(), Some(true));
    }
    assert_eq!(own.len(), 2);
    let routes = owned_ipv6_routes(&ec2, &vpc).await;
    let local = (block.to_string(), "local".to_string());
    assert_eq!(
        routes["private"],
        BTreeMap::from([("::/0".to_string(), users_eigw.clone()), local.clone()])
    );
    assert_eq!(
        routes["public"],
        BTreeMap::from([("::/0".to_string(), igw.clone()), local.clone()])
    );
    let owned_eigws = ec2
        .describe_egress_only_internet_gateways()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert!(owned_eigws.egress_only_internet_gateways().is_empty());
    fake.fake().take_calls();
    a.reconcile(&named).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &named).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(
        (snapshot(&ec2, &elb, &vpc).await, eigw_of(&users_eigw).await),
        before
    );

    // None named: the cluster makes its own, and deletes only that one.
    let o = up(&a, &own_eigw).await;
    let gw = o.status.egress_only_internet_gateway.clone().unwrap();
    assert!(gw.managed && gw.id != users_eigw, "{gw:?}");
    assert_eq!(
        owned_ipv6_routes(&ec2, &vpc).await["private"],
        BTreeMap::from([("::/0".to_string(), gw.id.clone()), local.clone()])
    );
    // Then the user's named: the private subnets go out through it, and the cluster's own
    // gateway, routed to no more, is deleted.
    let o = up(&a, &named).await;
    assert_eq!(
        o.status.egress_only_internet_gateway.clone().map(|g| g.id),
        Some(users_eigw.clone())
    );
    assert_eq!(
        owned_ipv6_routes(&ec2, &vpc).await["private"],
        BTreeMap::from([("::/0".to_string(), users_eigw.clone()), local])
    );
    assert!(
        eigw_of(&gw.id).await.is_empty(),
        "{:?}",
        eigw_of(&gw.id).await
    );
    fake.fake().take_calls();
    a.reconcile(&named).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &named).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(
        (snapshot(&ec2, &elb, &vpc).await, eigw_of(&users_eigw).await),
        before
    );

    // A gateway named that is not the VPC's is refused, with nothing made.
    let other_vpc = ec2
        .create_vpc()
        .cidr_block("10.9.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let elsewhere = ec2
        .create_egress_only_internet_gateway()
        .vpc_id(&other_vpc)
        .send()
        .await
        .unwrap()
        .egress_only_internet_gateway
        .unwrap()
        .egress_only_internet_gateway_id
        .unwrap();
    fake.fake().take_calls();
    let err = a
        .reconcile(&spec(&format!("egressOnlyInternetGatewayId: {elsewhere}")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::PreExisting { problem, .. } if problem.contains("is not attached to the cluster's VPC")),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new());
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
}

#[tokio::test]
async fn ipv6_blocks_and_gateways_in_the_wrong_place_are_refused_before_any_call() {
    let fake = fake().await;
    let a = actuator(&fake);
    // The region's zones are read once (and kept); then the spec is refused with no call.
    a.plan(&cluster("  region: us-east-1\n")).await.unwrap();
    // An egress-only gateway of the user's goes with a VPC of the user's, and is an eigw- id.
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {ipv6: {egressOnlyInternetGatewayId: eigw-12345678}}\n",
    );
    refused_naming(
        &fake,
        &a,
        &c,
        "spec.network.vpc.ipv6.egressOnlyInternetGatewayId: an existing egress-only internet gateway needs an existing VPC",
    )
    .await;
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {id: vpc-12345678, ipv6: {egressOnlyInternetGatewayId: igw-12345678}}\n",
    );
    refused_naming(
        &fake,
        &a,
        &c,
        "spec.network.vpc.ipv6.egressOnlyInternetGatewayId: \"igw-12345678\" is not a eigw- id",
    )
    .await;
    // Blocks of either family are taken where a rule's source is, and checked.
    let c = cluster(
        "  region: us-east-1\n  bastion: {enabled: true, allowedCidrBlocks: [\"2001:db8::1/32\"]}\n  controlPlaneLoadBalancer: {allowedCidrBlocks: [\"2001:db8:x::/48\"]}\n",
    );
    refused_listing(
        &fake,
        &a,
        &c,
        &[
            "spec.bastion.allowedCidrBlocks: 2001:db8::1/32 is not a network address (did you mean 2001:db8::/32?)",
            "spec.controlPlaneLoadBalancer.allowedCidrBlocks: \"2001:db8:x::/48\" is not an IPv6 CIDR block",
        ],
    )
    .await;
    // A block of one's own pool: a /56 network, with its pool, for the cluster's own VPC.
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {ipv6: {cidrBlock: \"2001:db8:1200:1a00::/64\"}}\n",
    );
    refused_listing(
        &fake,
        &a,
        &c,
        &[
            "spec.network.vpc.ipv6.cidrBlock: 2001:db8:1200:1a00::/64 is not a /56",
            "spec.network.vpc.ipv6.cidrBlock: needs poolId",
        ],
    )
    .await;
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {ipv6: {poolId: ipv4pool-ec2-0123456789abcdef0, cidrBlock: \"2001:db8:1200:1a01::/56\"}}\n",
    );
    refused_listing(
        &fake,
        &a,
        &c,
        &[
            "spec.network.vpc.ipv6.poolId: \"ipv4pool-ec2-0123456789abcdef0\" is not a ipv6pool-ec2- id",
            "spec.network.vpc.ipv6.cidrBlock: 2001:db8:1200:1a01::/56 is not a network address (did you mean 2001:db8:1200:1a00::/56?)",
        ],
    )
    .await;
    let c = cluster(
        "  region: us-east-1\n  network:\n    vpc: {id: vpc-12345678, ipv6: {poolId: ipv6pool-ec2-0123456789abcdef0}}\n",
    );
    refused_naming(
        &fake,
        &a,
        &c,
        "spec.network.vpc.ipv6: poolId and cidrBlock are for a VPC the provider creates",
    )
    .await;
}

/// A fake whose account brought its own IPv6 range, `2001:db8:1200::/48` in us-east-1
/// (BYOIP), and the id of the pool it is.
async fn byoip_ipv6_fake() -> (fakeaws::FakeAws, String) {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        byoip: vec!["us-east-1=2001:db8:1200::/48".parse().unwrap()],
        ..Default::default()
    })
    .await
    .unwrap();
    let pool = fake
        .ec2_client()
        .describe_ipv6_pools()
        .send()
        .await
        .unwrap()
        .ipv6_pools()[0]
        .pool_id()
        .unwrap()
        .to_string();
    (fake, pool)
}

#[tokio::test]
async fn a_dual_stack_vpc_takes_its_block_from_the_accounts_own_pool() {
    let (fake, pool) = byoip_ipv6_fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = |ipv6: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{ipv6: {{{ipv6}}}}}\n    availabilityZoneCount: 1\n"
        ))
    };
    let held = || {
        let (ec2, pool) = (ec2.clone(), pool.clone());
        async move {
            ec2.get_associated_ipv6_pool_cidrs()
                .pool_id(pool)
                .send()
                .await
                .unwrap()
                .ipv6_cidr_associations()
                .iter()
                .map(|a| {
                    (
                        a.ipv6_cidr().unwrap().to_string(),
                        a.associated_resource().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };

    // The block named.
    let named = spec(&format!(
        "poolId: {pool}, cidrBlock: \"2001:db8:1200:1a00::/56\""
    ));
    let o = up(&a, &named).await;
    let vpc_id = o.status.vpc.clone().unwrap().id;
    let block = check_dual_stack(&ec2, &vpc_id, true).await;
    assert_eq!(block.to_string(), "2001:db8:1200:1a00::/56");
    assert_eq!(
        o.status.vpc_ipv6_cidr.as_deref(),
        Some("2001:db8:1200:1a00::/56")
    );
    assert_eq!(
        held().await,
        [("2001:db8:1200:1a00::/56".to_string(), vpc_id.clone())]
    );
    fake.fake().take_calls();
    a.reconcile(&named).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new());
    // A block is never replaced: another block, or Amazon's, is refused, with no change.
    for other in [
        spec(&format!(
            "poolId: {pool}, cidrBlock: \"2001:db8:1200:1b00::/56\""
        )),
        spec(""),
    ] {
        fake.fake().take_calls();
        let err = a.reconcile(&other).await.unwrap_err();
        assert!(
            matches!(&err, Error::Immutable { field, .. } if field == "spec.network.vpc.ipv6"),
            "{err}"
        );
        assert_eq!(mutating(&fake), Vec::<String>::new());
    }
    down(&a, &named).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(held().await, Vec::<(String, String)>::new(), "given back");

    // The pool's next free block, for a cluster made single stack before.
    let single = cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n");
    up(&a, &single).await;
    let any = spec(&format!("poolId: {pool}"));
    fake.fake().take_calls();
    let o = up(&a, &any).await;
    assert!(mutating(&fake).contains(&"AssociateVpcCidrBlock".to_string()));
    assert_eq!(
        o.status.vpc_ipv6_cidr.as_deref(),
        Some("2001:db8:1200::/56")
    );
    let vpc_id = o.status.vpc.clone().unwrap().id;
    check_dual_stack(&ec2, &vpc_id, true).await;
    assert_eq!(held().await, [("2001:db8:1200::/56".to_string(), vpc_id)]);
    down(&a, &any).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // A pool the account lacks, or a block its pool does not hold: refused before the VPC
    // is made.
    for (bad, needle) in [
        (
            spec("poolId: ipv6pool-ec2-0123456789abcdef0"),
            "does not exist",
        ),
        (
            spec(&format!(
                "poolId: {pool}, cidrBlock: \"2001:db8:9900::/56\""
            )),
            "holds 2001:db8:1200::/48, not the block 2001:db8:9900::/56",
        ),
    ] {
        fake.fake().take_calls();
        let err = a.reconcile(&bad).await.unwrap_err();
        assert!(
            matches!(&err, Error::PreExisting { problem, .. } if problem.contains(needle)),
            "{err}"
        );
        assert_eq!(mutating(&fake), Vec::<String>::new());
        assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    }
}

/// `network.vpc.ipv6.ipamPool` (CAPA's): the dual-stack VPC takes its block from an IPv6
/// pool of IPAM, found by name or id, a /`netmaskLength` (default /56) of it, at CreateVpc or,
/// for a VPC made single stack before, AssociateVpcCidrBlock; the block is never replaced,
/// and deleting the cluster gives it back to the pool. A pool that is not there, or of IPv4,
/// is refused before anything is made; a bad spec before any call.
#[tokio::test]
async fn a_dual_stack_vpc_takes_its_block_from_an_ipam_pool() {
    use aws_sdk_ec2::types::{AddressFamily, IpamPoolAllocationResourceType};
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let scope = ipam_scope(&ec2).await;
    let pool = ipam_pool(
        &ec2,
        &scope,
        AddressFamily::Ipv6,
        "v6-clusters",
        "fd12:3456:7800::/48",
    )
    .await;
    let v4_pool = ipam_pool(
        &ec2,
        &scope,
        AddressFamily::Ipv4,
        "v4-clusters",
        "10.64.0.0/12",
    )
    .await;
    // Another tenant of the pool holds its first /56.
    ec2.allocate_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .netmask_length(56)
        .send()
        .await
        .unwrap();
    let allocations = || pool_allocations(&ec2, &pool);
    let tenant = (
        "fd12:3456:7800::/56".to_string(),
        IpamPoolAllocationResourceType::Custom,
    );
    let spec = |ipv6: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{ipv6: {{{ipv6}}}}}\n    availabilityZoneCount: 1\n"
        ))
    };

    // By name, the default /56: the pool's lowest free one.
    let named = spec("ipamPool: {name: v6-clusters}");
    let o = up(&a, &named).await;
    let vpc_id = o.status.vpc.clone().unwrap().id;
    let block = check_dual_stack(&ec2, &vpc_id, true).await;
    assert_eq!(block.to_string(), "fd12:3456:7800:100::/56");
    assert_eq!(
        o.status.vpc_ipv6_cidr.as_deref(),
        Some("fd12:3456:7800:100::/56")
    );
    assert_eq!(
        allocations().await,
        [
            (
                "fd12:3456:7800:100::/56".to_string(),
                IpamPoolAllocationResourceType::Vpc
            ),
            tenant.clone(),
        ]
    );
    fake.fake().take_calls();
    a.reconcile(&named).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");
    // A block is never replaced: another length, or Amazon's, is refused with no change.
    for other in [
        spec("ipamPool: {name: v6-clusters, netmaskLength: 52}"),
        spec(""),
    ] {
        fake.fake().take_calls();
        let err = a.reconcile(&other).await.unwrap_err();
        assert!(
            matches!(&err, Error::Immutable { field, .. } if field == "spec.network.vpc.ipv6"),
            "{err}"
        );
        assert_eq!(mutating(&fake), Vec::<String>::new());
    }
    down(&a, &named).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(
        allocations().await,
        std::slice::from_ref(&tenant),
        "given back"
    );

    // By id, a /60, for a cluster made single stack before.
    let single = cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 1\n");
    up(&a, &single).await;
    let by_id = spec(&format!("ipamPool: {{id: {pool}, netmaskLength: 60}}"));
    fake.fake().take_calls();
    let o = up(&a, &by_id).await;
    assert!(mutating(&fake).contains(&"AssociateVpcCidrBlock".to_string()));
    assert_eq!(
        o.status.vpc_ipv6_cidr.as_deref(),
        Some("fd12:3456:7800:100::/60")
    );
    let vpc_id = o.status.vpc.clone().unwrap().id;
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let mut v6: Vec<&str> = subnets
        .subnets()
        .iter()
        .flat_map(|s| s.ipv6_cidr_block_association_set())
        .filter_map(|a| a.ipv6_cidr_block())
        .collect();
    v6.sort();
    assert_eq!(
        v6,
        ["fd12:3456:7800:100::/64", "fd12:3456:7800:101::/64"],
        "the subnets' /64s of the /60"
    );
    down(&a, &by_id).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    assert_eq!(allocations().await, [tenant], "given back");

    // A pool that is not there, or of IPv4: refused before the VPC is made.
    for (bad, needle) in [
        (spec("ipamPool: {name: elsewhere}"), "is not among"),
        (
            spec(&format!("ipamPool: {{id: {v4_pool}}}")),
            "is an ipv4 pool; spec.network.vpc.ipv6.ipamPool takes an ipv6 one",
        ),
    ] {
        fake.fake().take_calls();
        let err = a.reconcile(&bad).await.unwrap_err();
        assert!(
            matches!(&err, Error::PreExisting { problem, .. } if problem.contains(needle)),
            "{err}"
        );
        assert_eq!(mutating(&fake), Vec::<String>::new());
        assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    }

    refused_listing(
        &fake,
        &a,
        &spec("poolId: ipv6pool-ec2-0123456789abcdef0, ipamPool: {netmaskLength: 50}"),
        &[
            "spec.network.vpc.ipv6.ipamPool: give id or name",
            "spec.network.vpc.ipv6.ipamPool.netmaskLength: 50 must be 44, 48, 52, 56 or 60",
            "spec.network.vpc.ipv6.ipamPool: give either poolId (and cidrBlock) or ipamPool",
        ],
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster(
            "  region: us-east-1\n  network:\n    vpc: {id: vpc-12345678, ipv6: {ipamPool: {name: v6-clusters}}}\n",
        ),
        "spec.network.vpc.ipv6.ipamPool: only for a VPC the provider creates",
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{ipv6: {{ipamPool: {{name: v6-clusters, netmaskLength: 60}}}}}}\n    subnets:\n{}",
            (0..17)
                .map(|i| format!(
                    "      - {{cidrBlock: 10.0.{i}.0/24, availabilityZone: us-east-1a}}\n"
                ))
                .collect::<String>()
        )),
        "17 subnets, but a VPC's IPv6 /60 holds 16 /64s",
    )
    .await;
}

/// A subnet's `ipv6CidrBlock` (CAPA's): the subnet takes the /64 the spec names, the others
/// the lowest /64s no subnet holds or names; a named /64 never replaces the one a subnet
/// holds; one outside the VPC's block is refused before the subnet is made; a bad one before
/// any call.
#[tokio::test]
async fn subnets_take_the_ipv6_blocks_the_spec_names() {
    let (fake, pool) = byoip_ipv6_fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = |ipv6: &str, public_v6: &str| {
        cluster(&format!(
            "  region: us-east-1\n  network:\n    vpc: {{cidrBlock: 10.0.0.0/16, ipv6: {{{ipv6}}}}}\n    subnets:\n      - {{cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true, ipv6CidrBlock: \"{public_v6}\"}}\n      - {{cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a}}\n      - {{cidrBlock: 10.0.2.0/24, availabilityZone: us-east-1b, ipv6CidrBlock: \"2001:db8:1200:1a00::/64\"}}\n"
        ))
    };
    let from_pool = format!("poolId: {pool}, cidrBlock: \"2001:db8:1200:1a00::/56\"");
    let c = spec(&from_pool, "2001:db8:1200:1a05::/64");
    let o = up(&a, &c).await;
    let vpc_id = o.status.vpc.clone().unwrap().id;
    let described = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let mut v6: Vec<(String, String)> = described
        .subnets()
        .iter()
        .map(|sn| {
            (
                sn.cidr_block().unwrap().to_string(),
                sn.ipv6_cidr_block_association_set()[0]
                    .ipv6_cidr_block()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    v6.sort();
    assert_eq!(
        v6,
        [
            (
                "10.0.0.0/24".to_string(),
                "2001:db8:1200:1a05::/64".to_string()
            ),
            // The lowest /64 neither held nor named by another subnet.
            (
                "10.0.1.0/24".to_string(),
                "2001:db8:1200:1a01::/64".to_string()
            ),
            (
                "10.0.2.0/24".to_string(),
                "2001:db8:1200:1a00::/64".to_string()
            ),
        ]
    );
    fake.fake().take_calls();
    a.reconcile(&c).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");

    // Another /64 for a subnet that holds one: refused, with no change.
    let moved = spec(&from_pool, "2001:db8:1200:1a06::/64");
    fake.fake().take_calls();
    let err = a.reconcile(&moved).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, current, .. }
            if field == "spec.network.subnets[].ipv6CidrBlock" && current == "2001:db8:1200:1a05::/64"),
        "{err}"
    );
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // A /64 outside an Amazon-provided block (known only once the VPC has it): refused
    // before any subnet is made.
    let outside = cluster(
        "  region: us-east-1\n  network:\n    vpc: {cidrBlock: 10.0.0.0/16, ipv6: {}}\n    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a, ipv6CidrBlock: \"2001:db8:9999::/64\"}\n",
    );
    let mut err = None;
    for _ in 0..5 {
        match a.reconcile(&outside).await {
            Ok(_) => continue,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("refused");
    assert!(
        matches!(&err, Error::PreExisting { problem, .. } if problem.contains("does not hold 2001:db8:9999::/64")),
        "{err}"
    );
    let subnets = ec2
        .describe_subnets()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    assert!(subnets.subnets().is_empty(), "{subnets:?}");
    down(&a, &outside).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    let bad = cluster(&format!(
        "  region: us-east-1\n  network:\n    vpc: {{cidrBlock: 10.0.0.0/16, ipv6: {{{from_pool}}}}}\n    subnets:\n      - {{cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true, ipv6CidrBlock: \"2001:db8:1200:1a00::/56\"}}\n      - {{cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a, ipv6CidrBlock: \"2001:db8:1200:1a00::1/64\"}}\n      - {{cidrBlock: 10.0.2.0/24, availabilityZone: us-east-1b, ipv6CidrBlock: \"2001:db8:1200:1b00::/64\"}}\n      - {{cidrBlock: 10.0.3.0/24, availabilityZone: us-east-1b, ipv6CidrBlock: \"2001:db8:1200:1b00::/64\"}}\n"
    ));
    refused_listing(
        &fake,
        &a,
        &bad,
        &[
            "spec.network.subnets[0].ipv6CidrBlock: 2001:db8:1200:1a00::/56 is not a /64",
            "spec.network.subnets[1].ipv6CidrBlock: 2001:db8:1200:1a00::1/64 is not a network address",
            "spec.network.subnets[2].ipv6CidrBlock: 2001:db8:1200:1b00::/64 is not inside the VPC's IPv6 block 2001:db8:1200:1a00::/56",
            "spec.network.subnets[3].ipv6CidrBlock: 2001:db8:1200:1b00::/64 is named by spec.network.subnets[2] too",
        ],
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster(
            "  region: us-east-1\n  network:\n    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a, ipv6CidrBlock: \"2001:db8::/64\"}\n",
        ),
        "spec.network.subnets[1].ipv6CidrBlock: a subnet's IPv6 block needs a dual-stack VPC",
    )
    .await;
}

/// `availabilityZoneSelection: Random` spreads clusters over a region's zones evenly: on six
/// zones (us-east-1's on AWS), three drawn for each of 600 names take every zone about as
/// often, and nearly every one of the 20 possible sets of three comes up.
#[test]
fn zones_drawn_at_random_spread_evenly() {
    let zones: Vec<String> = ('a'..='f').map(|l| format!("us-east-1{l}")).collect();
    let mut per_zone: BTreeMap<String, usize> = BTreeMap::new();
    let mut sets = BTreeSet::new();
    for i in 0..600 {
        let c = provider::spec::parse(
            &format!(
                "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata:\n  name: team-{i}\nspec:\n  region: us-east-1\n  network:\n    vpc: {{availabilityZoneUsageLimit: 3, availabilityZoneSelection: Random}}\n"
            ),
            "test",
        )
        .unwrap();
        let plan = provider::spec::validate(&c, &zones).unwrap();
        let drawn: BTreeSet<String> = plan.subnets.iter().filter_map(|p| p.zone.clone()).collect();
        assert_eq!(drawn.len(), 3, "{drawn:?}");
        for z in &drawn {
            *per_zone.entry(z.clone()).or_default() += 1;
        }
        sets.insert(drawn);
    }
    // 300 each on average; a fair draw stays within 240..360 (over four standard deviations).
    assert_eq!(per_zone.len(), 6, "{per_zone:?}");
    for (zone, n) in &per_zone {
        assert!(
            (240..=360).contains(n),
            "{zone} drawn {n} times of 600: {per_zone:?}"
        );
    }
    assert!(
        sets.len() >= 18,
        "only {} sets of three: {sets:?}",
        sets.len()
    );
}

/// CAPA's `availabilityZoneUsageLimit` and `availabilityZoneSelection`: the default subnets
/// span at most so many zones, the first by name or a choice drawn from the cluster's name
/// (clusters spread; a cluster's own choice holds from one reconcile to the next).
#[tokio::test]
async fn default_subnets_take_the_zones_the_spec_chooses() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let named = |name: &str, vpc: &str| {
        provider::spec::parse(
            &format!(
                "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata:\n  name: {name}\nspec:\n  region: us-east-1\n  network:\n    vpc: {{{vpc}}}\n"
            ),
            "test",
        )
        .unwrap()
    };
    let zones_of = |o: &provider::Outcome| {
        let mut z: Vec<(String, bool)> = o
            .status
            .subnets
            .iter()
            .map(|s| (s.zone.clone(), s.public))
            .collect();
        z.sort();
        z
    };
    let both = |zones: &[&str]| {
        zones
            .iter()
            .flat_map(|z| [(z.to_string(), false), (z.to_string(), true)])
            .collect::<Vec<_>>()
    };

    // Ordered: the first two by name, as EC2 holds them.
    let ordered = named("c1", "availabilityZoneUsageLimit: 2");
    let o = up(&a, &ordered).await;
    assert_eq!(zones_of(&o), both(&["us-east-1a", "us-east-1b"]));
    let vpc_id = o.status.vpc.clone().unwrap().id;
    let described = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let mut held: Vec<&str> = described
        .subnets()
        .iter()
        .filter_map(|s| s.availability_zone())
        .collect();
    held.sort();
    assert_eq!(
        held,
        ["us-east-1a", "us-east-1a", "us-east-1b", "us-east-1b"]
    );
    // The same cluster drawing its zones instead (its name draws others than a and b): the
    // subnets it holds do not move, an Immutable error naming the zone choice, no change.
    let drawn = named(
        "c1",
        "availabilityZoneUsageLimit: 2, availabilityZoneSelection: Random",
    );
    let region: Vec<String> = ('a'..='f').map(|l| format!("us-east-1{l}")).collect();
    let drawn_zones: BTreeSet<String> = provider::spec::validate(&drawn, &region)
        .unwrap()
        .subnets
        .iter()
        .filter_map(|p| p.zone.clone())
        .collect();
    assert_ne!(
        drawn_zones,
        BTreeSet::from(["us-east-1a".to_string(), "us-east-1b".to_string()])
    );
    fake.fake().take_calls();
    let err = a.reconcile(&drawn).await.unwrap_err().to_string();
    assert!(
        err.starts_with("the default subnets' zones (spec.network.availabilityZoneCount, "),
        "{err}"
    );
    assert!(err.contains("has us-east-1"), "{err}");
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &ordered).await;

    // Random: two zones each, not the same two for every name; the same for one name.
    let mut choices = BTreeSet::new();
    for i in 0..24 {
        let c = named(
            &format!("team-{i}"),
            "availabilityZoneUsageLimit: 2, availabilityZoneSelection: Random",
        );
        let planned = zones_of(&a.plan(&c).await.unwrap());
        assert_eq!(planned.len(), 4, "{planned:?}");
        // Never the zone AWS constrains (use1-az3).
        assert!(
            planned.iter().all(|(z, _)| z != "us-east-1e"),
            "{planned:?}"
        );
        assert_eq!(planned, zones_of(&a.plan(&c).await.unwrap()));
        choices.insert(planned);
    }
    assert!(choices.len() > 1, "every name chose {choices:?}");
    let random = named(
        "team-3",
        "availabilityZoneUsageLimit: 2, availabilityZoneSelection: Random",
    );
    let o = up(&a, &random).await;
    assert!(choices.contains(&zones_of(&o)));
    fake.fake().take_calls();
    a.reconcile(&random).await.unwrap();
    assert_eq!(mutating(&fake), Vec::<String>::new(), "steady");
    down(&a, &random).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());

    // A limit above the region's zones takes them all, us-east-1's six but its constrained
    // one, use1-az3 (us-east-1e here), which takes no current instance type (a count above
    // them is refused).
    let o = a
        .plan(&named("c1", "availabilityZoneUsageLimit: 10"))
        .await
        .unwrap();
    assert_eq!(
        zones_of(&o),
        both(&[
            "us-east-1a",
            "us-east-1b",
            "us-east-1c",
            "us-east-1d",
            "us-east-1f"
        ])
    );
    refused_listing(
        &fake,
        &a,
        &cluster(
            "  region: us-east-1\n  network:\n    availabilityZoneCount: 2\n    vpc: {availabilityZoneUsageLimit: 2, availabilityZoneSelection: Shuffled}\n",
        ),
        &[
            "spec.network.availabilityZoneCount: give either it (exactly so many zones) or spec.network.vpc.availabilityZoneUsageLimit",
            "spec.network.vpc.availabilityZoneSelection: \"Shuffled\" is not Ordered or Random",
        ],
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster("  region: us-east-1\n  network:\n    vpc: {availabilityZoneUsageLimit: 0}\n"),
        "spec.network.vpc.availabilityZoneUsageLimit: 0",
    )
    .await;
    refused_naming(
        &fake,
        &a,
        &cluster("  region: us-east-1\n  network:\n    availabilityZoneCount: 6\n"),
        "spec.network.availabilityZoneCount: 6 is not between 1 and the 5 zones of us-east-1 \
         (beside us-east-1e, constrained by AWS, where no default subnet goes)",
    )
    .await;
}

#[tokio::test]
async fn subnets_in_edge_zones_route_as_their_zone_allows() {
    let fake = fake().await;
    let a = actuator(&fake);
    let ec2 = fake.ec2_client();
    let spec = "  region: us-east-1\n  network:\n    vpc: {cidrBlock: 10.0.0.0/16}\n    subnets:\n      - {cidrBlock: 10.0.0.0/20, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.16.0/20, availabilityZone: us-east-1a}\n      - {cidrBlock: 10.0.32.0/24, availabilityZone: us-east-1-bos-1a, public: true}\n      - {cidrBlock: 10.0.33.0/24, availabilityZone: us-east-1-bos-1a}\n      - {cidrBlock: 10.0.35.0/24, availabilityZone: us-east-1-wl1-bos-wlz-1, public: true}\n      - {cidrBlock: 10.0.36.0/24, availabilityZone: us-east-1-wl1-bos-wlz-1}\n  bastion: {enabled: true, allowedCidrBlocks: [203.0.113.0/24]}\n";
    let c = cluster(spec);

    // Before the account opts in, the edge zones are not zones of the region: refused, with
    // no change.
    let problems = {
        let err = a.reconcile(&c).await.unwrap_err();
        let Error::InvalidSpec { problems } = err else {
            panic!("{err}")
        };
        problems
    };
    assert!(
        problems
            .iter()
            .any(|p| p.contains("us-east-1-wl1-bos-wlz-1 is not a zone of us-east-1")),
        "{problems:?}"
    );
    assert!(mutating(&fake).is_empty());
    opt_in(&ec2, &["us-east-1-bos-1", "us-east-1-wl1"]).await;
    // (A new actuator: the first one keeps the zones it read for five minutes.)
    let a = actuator(&fake);
    let o = up(&a, &c).await;
    let by_cidr = |cidr: &str| {
        o.status
            .subnets
            .iter()
            .find(|s| s.cidr == cidr)
            .unwrap()
            .clone()
    };
    let (az_public, az_private) = (by_cidr("10.0.0.0/20"), by_cidr("10.0.16.0/20"));
    let (lz_public, lz_private) = (by_cidr("10.0.32.0/24"), by_cidr("10.0.33.0/24"));
    let (wl_public, wl_private) = (by_cidr("10.0.35.0/24"), by_cidr("10.0.36.0/24"));
    assert_eq!(wl_public.edge_zone.as_deref(), Some("wavelength-zone"));
    assert_eq!(lz_public.edge_zone.as_deref(), Some("local-zone"));

    // Each subnet's default route, as EC2 holds it.
    let default_route = |subnet: String| {
        let ec2 = ec2.clone();
        async move {
            let t = ec2
                .describe_route_tables()
                .filters(filter("association.subnet-id", &[&subnet]))
                .send()
                .await
                .unwrap();
            let r = t.route_tables()[0]
                .routes()
                .iter()
                .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
                .unwrap()
                .clone();
            r.gateway_id()
                .or(r.nat_gateway_id())
                .or(r.carrier_gateway_id())
                .unwrap()
                .to_string()
        }
    };
    let nats = ec2
        .describe_nat_gateways()
        .filter(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    let nat_in = |subnet: &str| {
        nats.nat_gateways()
            .iter()
            .find(|n| n.subnet_id() == Some(subnet))
            .unwrap()
            .nat_gateway_id()
            .unwrap()
            .to_string()
    };
    // Two NAT gateways: the availability zone's and the Local Zone's (no Wavelength Zone
    // runs one).
    assert_eq!(nats.nat_gateways().len(), 2, "{nats:?}");
    let igw = o.status.internet_gateway.clone().unwrap().id;
    let cagw = o.status.carrier_gateway.clone().unwrap().id;
    assert!(cagw.starts_with("cagw-"));
    assert_eq!(default_route(az_public.id.clone()).await, igw);
    assert_eq!(default_route(lz_public.id.clone()).await, igw);
    assert_eq!(default_route(wl_public.id.clone()).await, cagw);
    assert_eq!(
        default_route(az_private.id.clone()).await,
        nat_in(&az_public.id)
    );
    assert_eq!(
        default_route(lz_private.id.clone()).await,
        nat_in(&lz_public.id)
    );
    // The Wavelength Zone's private subnet goes out through its parent zone's gateway.
    assert_eq!(
        default_route(wl_private.id.clone()).await,
        nat_in(&az_public.id)
    );

    // Public IPv4 addresses on launch, except in the Wavelength Zone (carrier addresses
    // there); no load balancer role tag on an edge subnet.
    let subnets = ec2
        .describe_subnets()
        .filters(filter(&format!("tag:{KEY}"), &["owned"]))
        .send()
        .await
        .unwrap();
    for sn in subnets.subnets() {
        let id = sn.subnet_id().unwrap();
        let edge = id != az_public.id && id != az_private.id;
        let public = id == az_public.id || id == lz_public.id || id == wl_public.id;
        assert_eq!(
            sn.map_public_ip_on_launch(),
            Some(public && id != wl_public.id),
            "{id}"
        );
        let role_tags: Vec<&str> = sn
            .tags()
            .iter()
            .filter_map(|t| t.key())
            .filter(|k| k.starts_with("kubernetes.io/role/"))
            .collect();
        assert_eq!(role_tags.is_empty(), edge, "{id}: {role_tags:?}");
    }
    // The load balancer and the bastion stay in the availability zone.
    assert_eq!(
        api_lb(&fake.elb_client()).await.subnets(),
        [az_public.id.as_str()]
    );
    let bastion = o.status.bastion.clone().unwrap().id;
    let d = ec2
        .describe_instances()
        .instance_ids(&bastion)
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.reservations()[0].instances()[0].subnet_id(),
        Some(az_public.id.as_str())
    );

    // Steady state, then nothing left.
    fake.fake().take_calls();
    assert!(a.reconcile(&c).await.unwrap().is_done());
    assert_eq!(mutating(&fake), Vec::<String>::new());
    down(&a, &c).await;
    assert_eq!(owned_left(&ec2).await, Vec::<String>::new());
    let carriers = ec2.describe_carrier_gateways().send().await.unwrap();
    assert!(
        carriers
            .carrier_gateways()
            .iter()
            .all(|g| g.state().map(|s| s.as_str()) == Some("deleted")),
        "{carriers:?}"
    );

    // IPv6 is not given to an edge zone's subnet.
    refused_naming(
        &fake,
        &a,
        &cluster(&spec.replace(
            "vpc: {cidrBlock: 10.0.0.0/16}",
            "vpc: {cidrBlock: 10.0.0.0/16, ipv6: {}}",
        )),
        "us-east-1-bos-1a is a Local Zone, whose subnets take no IPv6",
    )
    .await;
}
