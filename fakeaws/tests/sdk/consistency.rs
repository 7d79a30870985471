//! Eventual consistency through the SDK: a new resource is unknown to describes and to calls
//! that name it until its window ends on the fake's clock; tags written by CreateTags show
//! late; a cut connection and added latency; every outcome read back through the API.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::types::{IpPermission, IpRange, ResourceType, Tag};
use aws_sdk_elasticloadbalancing::types::Listener;
use fakeaws::sim::consistency::Windows;
use fakeaws::sim::faults::{Effect, Match, Rule, Trigger};

use crate::{
    advance, code, empty_fake, filter, instance, instance_ids, subnet, subnet_ids, tag_spec, vpc,
};

fn lag(fake: &fakeaws::FakeAws, create: &[(&str, f64)], tags: f64) {
    let windows = Windows {
        create: create.iter().map(|(k, s)| (k.to_string(), *s)).collect(),
        tags,
        ..Windows::default()
    };
    fake.fake()
        .with_region("us-east-1", |r| r.consistency.set_windows(windows));
}

#[tokio::test]
async fn a_new_instance_is_unknown_until_its_window_ends() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = subnet(&ec2, &vpc, "10.0.0.0/24", "us-east-1a").await;
    lag(&fake, &[("instance", 5.0)], 0.0);
    let id = instance(&ec2, &subnet).await;

    // Named: its NotFound code, from describes and from calls that act on it.
    let by_id = ec2.describe_instances().instance_ids(&id).send().await;
    assert_eq!(code(by_id), "InvalidInstanceID.NotFound");
    let tag = ec2
        .create_tags()
        .resources(&id)
        .tags(Tag::builder().key("Name").value("x").build())
        .send()
        .await;
    assert_eq!(code(tag), "InvalidInstanceID.NotFound");
    // Listed or filtered: left out. Other kinds have no window: the VPC shows at once.
    assert!(instance_ids(&ec2, &[]).await.is_empty());
    assert!(
        instance_ids(&ec2, &[("subnet-id", &subnet)])
            .await
            .is_empty()
    );
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert!(tags.tags().is_empty());
    assert_eq!(
        ec2.describe_vpcs()
            .vpc_ids(&vpc)
            .send()
            .await
            .unwrap()
            .vpcs()
            .len(),
        1
    );

    advance(&fake, 4);
    assert!(
        instance_ids(&ec2, &[]).await.is_empty(),
        "still inside the window"
    );
    advance(&fake, 1);
    assert_eq!(instance_ids(&ec2, &[]).await, std::slice::from_ref(&id));
    assert_eq!(
        instance_ids(&ec2, &[("subnet-id", &subnet)]).await,
        std::slice::from_ref(&id)
    );
    ec2.create_tags()
        .resources(&id)
        .tags(Tag::builder().key("Name").value("x").build())
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_hidden_group_refuses_rules_but_its_name_is_taken() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    lag(&fake, &[("*", 3.0)], 0.0);
    let group = ec2
        .create_security_group()
        .vpc_id(&vpc)
        .group_name("nodes")
        .description("nodes")
        .tag_specifications(tag_spec(ResourceType::SecurityGroup, &[("role", "nodes")]))
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let authorize = ec2
        .authorize_security_group_ingress()
        .group_id(&group)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(22)
                .to_port(22)
                .ip_ranges(IpRange::builder().cidr_ip("10.0.0.0/16").build())
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(authorize), "InvalidGroup.NotFound");
    let by_tag = || async {
        ec2.describe_security_groups()
            .filters(filter("tag:role", &["nodes"]))
            .send()
            .await
            .unwrap()
            .security_groups
            .unwrap_or_default()
    };
    assert!(by_tag().await.is_empty());
    // AWS still knows the name: a second create is a duplicate, not a twin.
    let again = ec2
        .create_security_group()
        .vpc_id(&vpc)
        .group_name("nodes")
        .description("nodes")
        .send()
        .await;
    assert_eq!(code(again), "InvalidGroup.Duplicate");
    advance(&fake, 3);
    let shown = by_tag().await;
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].group_id(), Some(group.as_str()));
}

#[tokio::test]
async fn tags_written_by_create_tags_show_late_and_in_order() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    lag(&fake, &[], 3.0);
    let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build();
    ec2.create_tags()
        .resources(&vpc)
        .tags(tag("team", "a"))
        .send()
        .await
        .unwrap();
    let tags_of = || async {
        let out = ec2
            .describe_tags()
            .filters(filter("resource-id", &[&vpc]))
            .send()
            .await
            .unwrap();
        out.tags()
            .iter()
            .map(|t| (t.key().unwrap().to_string(), t.value().unwrap().to_string()))
            .collect::<BTreeMap<_, _>>()
    };
    assert!(tags_of().await.is_empty(), "not shown yet");
    let filtered = ec2
        .describe_vpcs()
        .filters(filter("tag:team", &["a"]))
        .send()
        .await
        .unwrap();
    assert!(filtered.vpcs().is_empty());
    advance(&fake, 3);
    assert_eq!(
        tags_of().await,
        BTreeMap::from([("team".into(), "a".into())])
    );
    // Two writes inside one window show in the order they were made.
    ec2.create_tags()
        .resources(&vpc)
        .tags(tag("team", "b"))
        .send()
        .await
        .unwrap();
    ec2.create_tags()
        .resources(&vpc)
        .tags(tag("tier", "1"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        tags_of().await,
        BTreeMap::from([("team".into(), "a".into())])
    );
    advance(&fake, 3);
    assert_eq!(
        tags_of().await,
        BTreeMap::from([("team".into(), "b".into()), ("tier".into(), "1".into())])
    );
}

/// A deleted subnet and security group are still listed, with their tags, until their delete
/// window ends, by every listing describe and filter; calls naming them answer NotFound, and
/// nothing depends on them any more (the VPC deletes at once).
#[tokio::test]
async fn a_deleted_resource_is_still_listed_until_its_window_ends() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = ec2
        .create_subnet()
        .vpc_id(&vpc)
        .cidr_block("10.0.1.0/24")
        .tag_specifications(tag_spec(ResourceType::Subnet, &[("Name", "going")]))
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    let group = ec2
        .create_security_group()
        .group_name("going")
        .description("going")
        .vpc_id(&vpc)
        .tag_specifications(tag_spec(ResourceType::SecurityGroup, &[("Name", "going")]))
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    fake.fake().with_region("us-east-1", |r| {
        r.consistency.set_windows(Windows {
            delete: BTreeMap::from([("subnet".into(), 4.0), ("security-group".into(), 2.0)]),
            ..Windows::default()
        });
    });
    ec2.delete_subnet().subnet_id(&subnet).send().await.unwrap();
    ec2.delete_security_group()
        .group_id(&group)
        .send()
        .await
        .unwrap();

    let only = vec![subnet.clone()];
    let subnets = |filters| subnet_ids(&ec2, filters);
    assert_eq!(subnets(vec![]).await, only);
    assert_eq!(subnets(vec![filter("tag:Name", &["going"])]).await, only);
    assert_eq!(subnets(vec![filter("vpc-id", &[&vpc])]).await, only);
    assert!(
        subnets(vec![filter("tag:Name", &["other"])])
            .await
            .is_empty()
    );
    let groups = ec2
        .describe_security_groups()
        .filters(filter("group-name", &["going"]))
        .send()
        .await
        .unwrap();
    assert_eq!(groups.security_groups().len(), 1);
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&subnet]))
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags().len(), 1, "listed with its tags");

    // Named, it is gone: NotFound; and nothing depends on it.
    let by_id = ec2.describe_subnets().subnet_ids(&subnet).send().await;
    assert_eq!(code(by_id), "InvalidSubnetID.NotFound");
    let again = ec2.delete_subnet().subnet_id(&subnet).send().await;
    assert_eq!(code(again), "InvalidSubnetID.NotFound");
    ec2.delete_vpc().vpc_id(&vpc).send().await.unwrap();

    advance(&fake, 2);
    let groups = ec2.describe_security_groups().send().await.unwrap();
    assert!(groups.security_groups().is_empty(), "its window ended");
    assert_eq!(subnets(vec![]).await, only, "not yet");
    advance(&fake, 2);
    assert!(subnets(vec![]).await.is_empty());
    let tags = ec2.describe_tags().send().await.unwrap();
    assert!(tags.tags().is_empty(), "its tags went with it");
}

#[tokio::test]
async fn a_new_load_balancer_is_unknown_until_its_window_ends() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let elb = fake.elb_client();
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = subnet(&ec2, &vpc, "10.0.0.0/24", "us-east-1a").await;
    crate::gateway(&ec2, &vpc).await;
    lag(&fake, &[("load-balancer", 2.0)], 0.0);
    let create = || {
        elb.create_load_balancer()
            .load_balancer_name("api")
            .listeners(
                Listener::builder()
                    .protocol("TCP")
                    .load_balancer_port(6443)
                    .instance_port(6443)
                    .build()
                    .unwrap(),
            )
            .subnets(&subnet)
            .send()
    };
    let dns = create().await.unwrap().dns_name.unwrap();
    let named = elb
        .describe_load_balancers()
        .load_balancer_names("api")
        .send()
        .await;
    assert_eq!(code(named), "LoadBalancerNotFound");
    let all = elb.describe_load_balancers().send().await.unwrap();
    assert!(all.load_balancer_descriptions().is_empty());
    // Its name is taken all the same: the same create again answers the load balancer made,
    // not a twin.
    assert_eq!(create().await.unwrap().dns_name(), Some(dns.as_str()));
    advance(&fake, 2);
    let all = elb.describe_load_balancers().send().await.unwrap();
    assert_eq!(all.load_balancer_descriptions().len(), 1);
    assert_eq!(
        all.load_balancer_descriptions()[0].dns_name(),
        Some(dns.as_str())
    );
}

#[tokio::test]
async fn a_cut_connection_is_retried_by_the_sdk_and_the_token_prevents_a_twin() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = subnet(&ec2, &vpc, "10.0.0.0/24", "us-east-1a").await;
    fake.fake().with_faults(|f| {
        f.add(Rule {
            on: Match {
                action: Some("RunInstances".into()),
                ..Match::default()
            },
            when: Trigger::Nth { n: 1, times: 1 },
            effect: Effect::CutConnection,
        })
    });
    let retrying = aws_sdk_ec2::Client::from_conf(
        ec2.config()
            .to_builder()
            .retry_config(
                RetryConfig::standard()
                    .with_max_attempts(3)
                    .with_initial_backoff(Duration::from_millis(5)),
            )
            .build(),
    );
    let id = instance(&retrying, &subnet).await;
    assert_eq!(instance_ids(&ec2, &[]).await, [id]);
    let runs: Vec<bool> = fake
        .fake()
        .calls()
        .into_iter()
        .filter(|c| c.action == "RunInstances")
        .map(|c| c.cut)
        .collect();
    assert_eq!(runs, [true, false], "cut once, then answered");
}

#[tokio::test]
async fn latency_moves_a_virtual_clock_and_is_logged() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    fake.fake().with_faults(|f| {
        f.add(Rule {
            on: Match::default(),
            when: Trigger::Nth { n: 1, times: 1 },
            effect: Effect::Latency { millis: 2500 },
        })
    });
    let before = fake.fake().with_region("us-east-1", |r| r.clock.now());
    ec2.describe_vpcs().send().await.unwrap();
    let after = fake.fake().with_region("us-east-1", |r| r.clock.now());
    assert_eq!(
        after.duration_since(before).unwrap(),
        Duration::from_millis(2500)
    );
    let log = fake.fake().calls();
    assert!(log[0].micros >= 2_500_000, "{:?}", log[0]);
}
