//! Classic load balancers through the SDK (awsQuery end to end).

use aws_sdk_elasticloadbalancing::error::ProvideErrorMetadata;
use aws_sdk_elasticloadbalancing::operation::delete_load_balancer::DeleteLoadBalancerError;
use aws_sdk_elasticloadbalancing::operation::describe_load_balancers::DescribeLoadBalancersError;
use aws_sdk_elasticloadbalancing::types::{Listener, Tag};

use crate::{code, empty_fake, vpc};

fn listener() -> Listener {
    Listener::builder()
        .protocol("TCP")
        .load_balancer_port(6443)
        .instance_port(6443)
        .build()
        .unwrap()
}

async fn network(ec2: &aws_sdk_ec2::Client, with_gateway: bool) -> (String, Vec<String>) {
    let vpc_id = vpc(ec2, "10.0.0.0/16").await;
    let mut subnets = Vec::new();
    for (i, zone) in ["us-east-1a", "us-east-1b"].iter().enumerate() {
        let s = ec2
            .create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block(format!("10.0.{i}.0/24"))
            .availability_zone(*zone)
            .send()
            .await
            .unwrap();
        subnets.push(s.subnet.unwrap().subnet_id.unwrap());
    }
    if with_gateway {
        let igw = ec2.create_internet_gateway().send().await.unwrap();
        let igw = igw.internet_gateway.unwrap().internet_gateway_id.unwrap();
        ec2.attach_internet_gateway()
            .internet_gateway_id(igw)
            .vpc_id(&vpc_id)
            .send()
            .await
            .unwrap();
    }
    (vpc_id, subnets)
}

#[tokio::test]
async fn create_describe_delete() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, subnets) = network(&ec2, true).await;
    let sg = ec2
        .create_security_group()
        .group_name("lb")
        .description("api load balancer")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let out = elb
        .create_load_balancer()
        .load_balancer_name("test-apiserver")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .security_groups(&sg)
        .tags(Tag::builder().key("owner").value("me").build().unwrap())
        .send()
        .await
        .unwrap();
    let dns = out.dns_name().unwrap().to_string();
    assert!(
        dns.starts_with("test-apiserver-") && dns.ends_with(".us-east-1.elb.amazonaws.com"),
        "{dns}"
    );

    let described = elb
        .describe_load_balancers()
        .load_balancer_names("test-apiserver")
        .send()
        .await
        .unwrap();
    let lb = &described.load_balancer_descriptions()[0];
    assert_eq!(lb.dns_name(), Some(dns.as_str()));
    assert_eq!(lb.vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(lb.scheme(), Some("internet-facing"));
    assert_eq!(lb.subnets(), subnets.as_slice());
    assert_eq!(lb.availability_zones(), ["us-east-1a", "us-east-1b"]);
    let l = lb.listener_descriptions()[0].listener().unwrap();
    assert_eq!(
        (l.protocol(), l.load_balancer_port(), l.instance_port()),
        ("TCP", 6443, 6443)
    );
    assert_eq!(lb.health_check().unwrap().target(), "TCP:6443");
    assert!(lb.created_time().is_some());

    // The name is taken: a create asking for another configuration (here, without its tags)
    // is refused.
    let dup = elb
        .create_load_balancer()
        .load_balancer_name("test-apiserver")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .security_groups(&sg)
        .send()
        .await;
    let err = dup.unwrap_err().into_service_error();
    assert!(err.is_duplicate_access_point_name_exception(), "{err:?}");
    assert!(err.message().unwrap().contains("different tags"), "{err:?}");

    // A subnet in use by a load balancer cannot be deleted.
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&subnets[0]).send().await),
        "DependencyViolation"
    );

    elb.delete_load_balancer()
        .load_balancer_name("test-apiserver")
        .send()
        .await
        .unwrap();
    // Deleting again is fine, as AWS documents.
    let r: Result<_, aws_sdk_elasticloadbalancing::error::SdkError<DeleteLoadBalancerError>> = elb
        .delete_load_balancer()
        .load_balancer_name("test-apiserver")
        .send()
        .await;
    r.unwrap();
    let gone = elb
        .describe_load_balancers()
        .load_balancer_names("test-apiserver")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(matches!(
        gone,
        DescribeLoadBalancersError::AccessPointNotFoundException(_)
    ));
    assert_eq!(gone.code(), Some("LoadBalancerNotFound"));
    ec2.delete_subnet()
        .subnet_id(&subnets[0])
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_create_repeating_the_configuration_answers_the_existing_load_balancer() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, subnets) = network(&ec2, true).await;
    let group = |name: &'static str| {
        ec2.create_security_group()
            .group_name(name)
            .description("api load balancer")
            .vpc_id(&vpc_id)
            .send()
    };
    let sg = group("lb").await.unwrap().group_id.unwrap();
    let other_sg = group("other").await.unwrap().group_id.unwrap();
    let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build().unwrap();
    // The configuration of the first create; each call may change one part of it.
    let create =
        |listener: Listener, subnets: Vec<String>, sg: &str, scheme: &str, tags: Vec<Tag>| {
            elb.create_load_balancer()
                .load_balancer_name("api")
                .listeners(listener)
                .set_subnets(Some(subnets))
                .security_groups(sg)
                .scheme(scheme)
                .set_tags(Some(tags))
                .send()
        };
    let owner = || vec![tag("owner", "me"), tag("role", "api")];
    let first = create(listener(), subnets.clone(), &sg, "internet-facing", owner())
        .await
        .unwrap();
    let dns = first.dns_name().unwrap().to_string();

    // The same again (its lists in another order): the same load balancer, no second one.
    let mut reordered = subnets.clone();
    reordered.reverse();
    let tags_reordered = vec![tag("role", "api"), tag("owner", "me")];
    let again = create(
        listener(),
        reordered,
        &sg,
        "internet-facing",
        tags_reordered,
    )
    .await
    .unwrap();
    assert_eq!(again.dns_name(), Some(dns.as_str()));
    let all = elb.describe_load_balancers().send().await.unwrap();
    assert_eq!(all.load_balancer_descriptions().len(), 1);
    assert_eq!(
        all.load_balancer_descriptions()[0].dns_name(),
        Some(dns.as_str())
    );

    // Any part otherwise: `DuplicateLoadBalancerName`, naming the part, and nothing changes.
    let other_listener = Listener::builder()
        .protocol("TCP")
        .load_balancer_port(443)
        .instance_port(6443)
        .build()
        .unwrap();
    let cases = [
        (
            create(
                other_listener,
                subnets.clone(),
                &sg,
                "internet-facing",
                owner(),
            )
            .await,
            "listeners",
        ),
        (
            create(
                listener(),
                subnets[..1].to_vec(),
                &sg,
                "internet-facing",
                owner(),
            )
            .await,
            "subnets",
        ),
        (
            create(
                listener(),
                subnets.clone(),
                &other_sg,
                "internet-facing",
                owner(),
            )
            .await,
            "security groups",
        ),
        (
            create(listener(), subnets.clone(), &sg, "internal", owner()).await,
            "scheme",
        ),
        (
            create(
                listener(),
                subnets.clone(),
                &sg,
                "internet-facing",
                vec![tag("owner", "me")],
            )
            .await,
            "tags",
        ),
    ];
    for (result, part) in cases {
        let (code, message) = crate::code_and_message(result);
        assert_eq!(code, "DuplicateLoadBalancerName", "{part}");
        assert_eq!(
            message,
            format!(
                "Load Balancer named api already exists and it is configured with different {part}."
            )
        );
    }
    let lb = &elb
        .describe_load_balancers()
        .send()
        .await
        .unwrap()
        .load_balancer_descriptions()[0]
        .clone();
    assert_eq!(lb.listener_descriptions().len(), 1);
    assert_eq!(lb.subnets().len(), 2);
    assert_eq!(lb.security_groups(), std::slice::from_ref(&sg));
    assert_eq!(lb.scheme(), Some("internet-facing"));
    let described_tags = elb
        .describe_tags()
        .load_balancer_names("api")
        .send()
        .await
        .unwrap();
    assert_eq!(described_tags.tag_descriptions()[0].tags().len(), 2);

    // What counts is the load balancer as it is now: after a tag is added, the first
    // configuration is another one.
    elb.add_tags()
        .load_balancer_names("api")
        .tags(tag("extra", "1"))
        .send()
        .await
        .unwrap();
    let (code, message) = crate::code_and_message(
        create(listener(), subnets.clone(), &sg, "internet-facing", owner()).await,
    );
    assert_eq!(code, "DuplicateLoadBalancerName");
    assert!(message.ends_with("different tags."), "{message}");
    let mut with_extra = owner();
    with_extra.push(tag("extra", "1"));
    let now = create(
        listener(),
        subnets.clone(),
        &sg,
        "internet-facing",
        with_extra,
    )
    .await
    .unwrap();
    assert_eq!(now.dns_name(), Some(dns.as_str()));
}

#[tokio::test]
async fn internal_scheme_and_validation() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (_, subnets) = network(&ec2, false).await;
    // Internet-facing needs an internet gateway in the VPC.
    let r = elb
        .create_load_balancer()
        .load_balancer_name("public")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .send()
        .await;
    assert_eq!(
        r.unwrap_err().into_service_error().code(),
        Some("InvalidSubnet")
    );
    let out = elb
        .create_load_balancer()
        .load_balancer_name("private")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .scheme("internal")
        .send()
        .await
        .unwrap();
    assert!(out.dns_name().unwrap().starts_with("internal-private-"));

    let bad_name = elb
        .create_load_balancer()
        .load_balancer_name("-bad")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .send()
        .await;
    assert_eq!(
        bad_name.unwrap_err().into_service_error().code(),
        Some("ValidationError")
    );
    let missing_subnet = elb
        .create_load_balancer()
        .load_balancer_name("x")
        .listeners(listener())
        .subnets("subnet-0123456789abcdef0")
        .scheme("internal")
        .send()
        .await;
    assert!(
        missing_subnet
            .unwrap_err()
            .into_service_error()
            .is_subnet_not_found_exception()
    );
    let missing_listeners = elb
        .create_load_balancer()
        .load_balancer_name("x")
        .set_subnets(Some(subnets.clone()))
        .send()
        .await;
    assert_eq!(
        missing_listeners.unwrap_err().into_service_error().code(),
        Some("MissingParameter")
    );
    let names: Vec<String> = elb
        .describe_load_balancers()
        .send()
        .await
        .unwrap()
        .load_balancer_descriptions()
        .iter()
        .map(|l| l.load_balancer_name().unwrap().to_string())
        .collect();
    assert_eq!(names, ["private"]);
}

#[tokio::test]
async fn paginates_with_marker() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (_, subnets) = network(&ec2, true).await;
    for i in 0..5 {
        elb.create_load_balancer()
            .load_balancer_name(format!("lb-{i}"))
            .listeners(listener())
            .subnets(&subnets[0])
            .send()
            .await
            .unwrap();
    }
    let pages: Vec<_> = elb
        .describe_load_balancers()
        .page_size(2)
        .into_paginator()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(pages.len(), 3);
    let total: usize = pages
        .iter()
        .map(|p| p.load_balancer_descriptions().len())
        .sum();
    assert_eq!(total, 5);
}

async fn api_lb(
    ec2: &aws_sdk_ec2::Client,
    elb: &aws_sdk_elasticloadbalancing::Client,
) -> (String, Vec<String>, String) {
    let (vpc_id, subnets) = network(ec2, true).await;
    let sg = ec2
        .create_security_group()
        .group_name("apiserver-lb")
        .description("api load balancer")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    elb.create_load_balancer()
        .load_balancer_name("c1-apiserver")
        .listeners(listener())
        .subnets(&subnets[0])
        .security_groups(&sg)
        .send()
        .await
        .unwrap();
    (vpc_id, subnets, sg)
}

#[tokio::test]
async fn health_check_and_attributes() {
    use aws_sdk_elasticloadbalancing::types::{
        ConnectionDraining, ConnectionSettings, CrossZoneLoadBalancing, HealthCheck,
        LoadBalancerAttributes,
    };
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    api_lb(&ec2, &elb).await;
    let hc = |target: &str, interval: i32, timeout: i32| {
        HealthCheck::builder()
            .target(target)
            .interval(interval)
            .timeout(timeout)
            .healthy_threshold(5)
            .unhealthy_threshold(3)
            .build()
            .unwrap()
    };
    let out = elb
        .configure_health_check()
        .load_balancer_name("c1-apiserver")
        .health_check(hc("TCP:6443", 10, 5))
        .send()
        .await
        .unwrap();
    assert_eq!(out.health_check().unwrap().target(), "TCP:6443");
    let d = elb
        .describe_load_balancers()
        .load_balancer_names("c1-apiserver")
        .send()
        .await
        .unwrap();
    let described = d.load_balancer_descriptions()[0].health_check().unwrap();
    assert_eq!(described.interval(), 10);
    assert_eq!(described.healthy_threshold(), 5);
    for bad in [
        hc("TCP:6443/healthz", 10, 5),
        hc("HTTP:80", 10, 5),
        hc("TCP:6443", 10, 10),
    ] {
        assert_eq!(
            code(
                elb.configure_health_check()
                    .load_balancer_name("c1-apiserver")
                    .health_check(bad)
                    .send()
                    .await
            ),
            "ValidationError"
        );
    }
    assert_eq!(
        code(
            elb.configure_health_check()
                .load_balancer_name("nope")
                .health_check(hc("TCP:6443", 10, 5))
                .send()
                .await
        ),
        "LoadBalancerNotFound"
    );

    // Defaults as AWS reports them for a new load balancer.
    let attrs = elb
        .describe_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .send()
        .await
        .unwrap();
    let a = attrs.load_balancer_attributes().unwrap();
    assert!(!a.cross_zone_load_balancing().unwrap().enabled());
    assert_eq!(a.connection_settings().unwrap().idle_timeout(), 60);
    assert!(!a.connection_draining().unwrap().enabled());
    assert!(!a.access_log().unwrap().enabled());

    elb.modify_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .load_balancer_attributes(
            LoadBalancerAttributes::builder()
                .cross_zone_load_balancing(CrossZoneLoadBalancing::builder().enabled(true).build())
                .connection_settings(
                    ConnectionSettings::builder()
                        .idle_timeout(600)
                        .build()
                        .unwrap(),
                )
                .connection_draining(
                    ConnectionDraining::builder()
                        .enabled(true)
                        .timeout(120)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let attrs = elb
        .describe_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .send()
        .await
        .unwrap();
    let a = attrs.load_balancer_attributes().unwrap();
    assert!(a.cross_zone_load_balancing().unwrap().enabled());
    assert_eq!(a.connection_settings().unwrap().idle_timeout(), 600);
    assert_eq!(a.connection_draining().unwrap().timeout(), Some(120));
    assert_eq!(
        code(
            elb.modify_load_balancer_attributes()
                .load_balancer_name("c1-apiserver")
                .load_balancer_attributes(
                    LoadBalancerAttributes::builder()
                        .connection_settings(
                            ConnectionSettings::builder()
                                .idle_timeout(5000)
                                .build()
                                .unwrap(),
                        )
                        .build(),
                )
                .send()
                .await
        ),
        "ValidationError"
    );
}

#[tokio::test]
async fn the_desync_mitigation_mode_is_an_additional_attribute() {
    use aws_sdk_elasticloadbalancing::types::{
        AdditionalAttribute, ConnectionSettings, LoadBalancerAttributes,
    };
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    api_lb(&ec2, &elb).await;
    let mode = |key: &str, value: &str| {
        LoadBalancerAttributes::builder()
            .additional_attributes(AdditionalAttribute::builder().key(key).value(value).build())
            .build()
    };
    let described = || async {
        let attrs = elb
            .describe_load_balancer_attributes()
            .load_balancer_name("c1-apiserver")
            .send()
            .await
            .unwrap();
        attrs
            .load_balancer_attributes()
            .unwrap()
            .additional_attributes()
            .iter()
            .map(|a| (a.key().unwrap().to_string(), a.value().unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    let key = "elb.http.desyncmitigationmode".to_string();
    // AWS's default.
    assert_eq!(described().await, [(key.clone(), "defensive".to_string())]);
    let changed = elb
        .modify_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .load_balancer_attributes(mode(&key, "strictest"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        changed
            .load_balancer_attributes()
            .unwrap()
            .additional_attributes()[0]
            .value(),
        Some("strictest")
    );
    assert_eq!(described().await, [(key.clone(), "strictest".to_string())]);
    // Another change leaves it as it is.
    elb.modify_load_balancer_attributes()
        .load_balancer_name("c1-apiserver")
        .load_balancer_attributes(
            LoadBalancerAttributes::builder()
                .connection_settings(
                    ConnectionSettings::builder()
                        .idle_timeout(90)
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(described().await, [(key.clone(), "strictest".to_string())]);
    // An attribute AWS does not have, or a mode it does not list: refused, nothing changed.
    for (k, v, want) in [
        ("elb.http.other", "on", "LoadBalancerAttributeNotFound"),
        (key.as_str(), "lenient", "ValidationError"),
    ] {
        let refused = elb
            .modify_load_balancer_attributes()
            .load_balancer_name("c1-apiserver")
            .load_balancer_attributes(mode(k, v))
            .send()
            .await;
        assert_eq!(code(refused), want);
    }
    assert_eq!(described().await, [(key, "strictest".to_string())]);
}

#[tokio::test]
async fn register_instances_and_wait_in_service() {
    use aws_sdk_elasticloadbalancing::client::Waiters;
    use aws_sdk_elasticloadbalancing::types::Instance;
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (_, subnets, _) = api_lb(&ec2, &elb).await;
    let cp0 = crate::instance(&ec2, &subnets[0]).await;
    let cp1 = crate::instance(&ec2, &subnets[1]).await;
    let reg = elb
        .register_instances_with_load_balancer()
        .load_balancer_name("c1-apiserver")
        .instances(Instance::builder().instance_id(&cp0).build())
        .instances(Instance::builder().instance_id(&cp1).build())
        .send()
        .await
        .unwrap();
    assert_eq!(reg.instances().len(), 2);
    elb.wait_until_instance_in_service()
        .load_balancer_name("c1-apiserver")
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let health = elb
        .describe_instance_health()
        .load_balancer_name("c1-apiserver")
        .send()
        .await
        .unwrap();
    assert_eq!(health.instance_states().len(), 2);
    assert!(
        health
            .instance_states()
            .iter()
            .all(|s| s.state() == Some("InService"))
    );
    let d = elb
        .describe_load_balancers()
        .load_balancer_names("c1-apiserver")
        .send()
        .await
        .unwrap();
    assert_eq!(d.load_balancer_descriptions()[0].instances().len(), 2);

    assert_eq!(
        code(
            elb.register_instances_with_load_balancer()
                .load_balancer_name("c1-apiserver")
                .instances(
                    Instance::builder()
                        .instance_id("i-0123456789abcdef0")
                        .build()
                )
                .send()
                .await
        ),
        "InvalidInstance"
    );
    // A terminated instance is reported out of service.
    ec2.terminate_instances()
        .instance_ids(&cp1)
        .send()
        .await
        .unwrap();
    let health = elb
        .describe_instance_health()
        .load_balancer_name("c1-apiserver")
        .instances(Instance::builder().instance_id(&cp1).build())
        .send()
        .await
        .unwrap();
    assert_eq!(health.instance_states()[0].state(), Some("OutOfService"));
    let left = elb
        .deregister_instances_from_load_balancer()
        .load_balancer_name("c1-apiserver")
        .instances(Instance::builder().instance_id(&cp1).build())
        .send()
        .await
        .unwrap();
    assert_eq!(left.instances().len(), 1);
    assert_eq!(left.instances()[0].instance_id(), Some(cp0.as_str()));
    assert_eq!(
        code(
            elb.deregister_instances_from_load_balancer()
                .load_balancer_name("c1-apiserver")
                .instances(Instance::builder().instance_id(&cp1).build())
                .send()
                .await
        ),
        "InvalidInstance"
    );
}

#[tokio::test]
async fn tags_subnets_groups_and_listeners() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, subnets, sg) = api_lb(&ec2, &elb).await;
    let name = "c1-apiserver";

    elb.add_tags()
        .load_balancer_names(name)
        .tags(Tag::builder().key("owned").value("c1").build().unwrap())
        .tags(
            Tag::builder()
                .key("role")
                .value("apiserver")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    elb.remove_tags()
        .load_balancer_names(name)
        .tags(
            aws_sdk_elasticloadbalancing::types::TagKeyOnly::builder()
                .key("role")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let tags = elb
        .describe_tags()
        .load_balancer_names(name)
        .send()
        .await
        .unwrap();
    let t = tags.tag_descriptions()[0].tags();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].key(), "owned");
    assert_eq!(
        code(elb.describe_tags().load_balancer_names("nope").send().await),
        "LoadBalancerNotFound"
    );

    // Subnets: attach the second, detach the first, never the last.
    let out = elb
        .attach_load_balancer_to_subnets()
        .load_balancer_name(name)
        .subnets(&subnets[1])
        .send()
        .await
        .unwrap();
    assert_eq!(out.subnets().len(), 2);
    let out = elb
        .detach_load_balancer_from_subnets()
        .load_balancer_name(name)
        .subnets(&subnets[0])
        .send()
        .await
        .unwrap();
    assert_eq!(out.subnets(), [subnets[1].clone()]);
    assert_eq!(
        code(
            elb.detach_load_balancer_from_subnets()
                .load_balancer_name(name)
                .subnets(&subnets[1])
                .send()
                .await
        ),
        "InvalidConfigurationRequest"
    );
    // The subnet it holds cannot be deleted; the one it let go can.
    assert_eq!(
        crate::code(ec2.delete_subnet().subnet_id(&subnets[1]).send().await),
        "DependencyViolation"
    );
    ec2.delete_subnet()
        .subnet_id(&subnets[0])
        .send()
        .await
        .unwrap();

    // Security groups are replaced; a group of another VPC is refused.
    let sg2 = ec2
        .create_security_group()
        .group_name("extra")
        .description("extra")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let applied = elb
        .apply_security_groups_to_load_balancer()
        .load_balancer_name(name)
        .security_groups(&sg2)
        .send()
        .await
        .unwrap();
    assert_eq!(applied.security_groups(), std::slice::from_ref(&sg2));
    ec2.delete_security_group()
        .group_id(&sg)
        .send()
        .await
        .unwrap();
    assert_eq!(
        crate::code(ec2.delete_security_group().group_id(&sg2).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(
            elb.apply_security_groups_to_load_balancer()
                .load_balancer_name(name)
                .security_groups("sg-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidSecurityGroup"
    );

    // Listeners: add one, a conflicting one on the same port is refused, delete it.
    elb.create_load_balancer_listeners()
        .load_balancer_name(name)
        .listeners(
            Listener::builder()
                .protocol("TCP")
                .load_balancer_port(22)
                .instance_port(22)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            elb.create_load_balancer_listeners()
                .load_balancer_name(name)
                .listeners(
                    Listener::builder()
                        .protocol("TCP")
                        .load_balancer_port(22)
                        .instance_port(2222)
                        .build()
                        .unwrap(),
                )
                .send()
                .await
        ),
        "DuplicateListener"
    );
    elb.delete_load_balancer_listeners()
        .load_balancer_name(name)
        .load_balancer_ports(22)
        .send()
        .await
        .unwrap();
    let d = elb
        .describe_load_balancers()
        .load_balancer_names(name)
        .send()
        .await
        .unwrap();
    let ports: Vec<i32> = d.load_balancer_descriptions()[0]
        .listener_descriptions()
        .iter()
        .map(|l| l.listener().unwrap().load_balancer_port())
        .collect();
    assert_eq!(ports, [6443]);
}

#[tokio::test]
async fn account_limits_answer_the_quotas_by_page() {
    let limits_of = |out: &aws_sdk_elasticloadbalancing::operation::describe_account_limits::DescribeAccountLimitsOutput| {
        out.limits()
            .iter()
            .map(|l| (l.name().unwrap().to_string(), l.max().unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    let fake = empty_fake().await;
    let elb = fake.elb_client();
    let all = elb.describe_account_limits().send().await.unwrap();
    assert_eq!(
        limits_of(&all),
        [
            ("classic-listeners".to_string(), "100".to_string()),
            ("classic-load-balancers".to_string(), "20".to_string()),
            (
                "classic-registered-instances".to_string(),
                "1000".to_string()
            ),
        ]
    );
    assert_eq!(all.next_marker(), None);
    // One a page, by the marker.
    let mut names = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let page = elb
            .describe_account_limits()
            .page_size(1)
            .set_marker(marker.clone())
            .send()
            .await
            .unwrap();
        names.extend(limits_of(&page).into_iter().map(|(n, _)| n));
        match page.next_marker() {
            Some(m) => marker = Some(m.to_string()),
            None => break,
        }
    }
    assert_eq!(
        names,
        [
            "classic-listeners",
            "classic-load-balancers",
            "classic-registered-instances"
        ]
    );
    assert_eq!(
        elb.describe_account_limits()
            .page_size(0)
            .send()
            .await
            .unwrap_err()
            .code(),
        Some("ValidationError")
    );

    // A raised quota is what the account reports.
    let raised = crate::fake_with_quota("load-balancers", 50).await;
    let out = raised
        .elb_client()
        .describe_account_limits()
        .send()
        .await
        .unwrap();
    assert_eq!(
        limits_of(&out)[1],
        ("classic-load-balancers".to_string(), "50".to_string())
    );
}

#[tokio::test]
async fn zones_of_a_default_vpc_load_balancer_are_enabled_and_disabled() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    ec2.create_default_vpc().send().await.unwrap();
    elb.create_load_balancer()
        .load_balancer_name("zoned")
        .listeners(listener())
        .availability_zones("us-east-1a")
        .send()
        .await
        .unwrap();
    let zones = || async {
        let out = elb
            .describe_load_balancers()
            .load_balancer_names("zoned")
            .send()
            .await
            .unwrap();
        let lb = &out.load_balancer_descriptions()[0];
        (lb.availability_zones().to_vec(), lb.subnets().to_vec())
    };
    let enabled = elb
        .enable_availability_zones_for_load_balancer()
        .load_balancer_name("zoned")
        .availability_zones("us-east-1b")
        .send()
        .await
        .unwrap();
    assert_eq!(enabled.availability_zones(), ["us-east-1a", "us-east-1b"]);
    // The zone's default subnet joined.
    let b = crate::default_subnet_in(&ec2, "us-east-1b").await;
    assert!(zones().await.1.contains(&b));
    let disabled = elb
        .disable_availability_zones_for_load_balancer()
        .load_balancer_name("zoned")
        .availability_zones("us-east-1a")
        .send()
        .await
        .unwrap();
    assert_eq!(disabled.availability_zones(), ["us-east-1b"]);

    // Refused, changing nothing: the last zone, a zone without a default subnet, an unknown
    // load balancer.
    let r = elb
        .disable_availability_zones_for_load_balancer()
        .load_balancer_name("zoned")
        .availability_zones("us-east-1b")
        .send()
        .await;
    assert_eq!(code(r), "InvalidConfigurationRequest");
    let r = elb
        .enable_availability_zones_for_load_balancer()
        .load_balancer_name("zoned")
        .availability_zones("us-east-1z")
        .send()
        .await;
    assert_eq!(code(r), "ValidationError");
    assert_eq!(zones().await, (vec!["us-east-1b".to_string()], vec![b]));
    let r = elb
        .enable_availability_zones_for_load_balancer()
        .load_balancer_name("nope")
        .availability_zones("us-east-1a")
        .send()
        .await;
    assert_eq!(code(r), "LoadBalancerNotFound");

    // A load balancer in another VPC attaches subnets instead.
    let (_, subnets) = network(&ec2, true).await;
    elb.create_load_balancer()
        .load_balancer_name("in-vpc")
        .listeners(listener())
        .subnets(&subnets[0])
        .send()
        .await
        .unwrap();
    let r = elb
        .enable_availability_zones_for_load_balancer()
        .load_balancer_name("in-vpc")
        .availability_zones("us-east-1b")
        .send()
        .await;
    assert_eq!(code(r), "InvalidConfigurationRequest");
}
