//! Spot Instances through the SDK: RunInstances with `InstanceMarketOptions`, the one-time
//! request each instance has, DescribeSpotInstanceRequests and its filters, what stopping,
//! terminating and cancelling do, and the options AWS refuses.

use aws_sdk_ec2::types::{
    InstanceInterruptionBehavior, InstanceLifecycleType, InstanceMarketOptionsRequest,
    InstanceType, MarketType, ResourceType, SpotInstanceState, SpotInstanceType, SpotMarketOptions,
};

use crate::{code, empty_fake, filter, image, subnet, tag_spec, vpc};

fn spot(options: SpotMarketOptions) -> InstanceMarketOptionsRequest {
    InstanceMarketOptionsRequest::builder()
        .market_type(MarketType::Spot)
        .spot_options(options)
        .build()
}

async fn request(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::SpotInstanceRequest {
    ec2.describe_spot_instance_requests()
        .spot_instance_request_ids(id)
        .send()
        .await
        .unwrap()
        .spot_instance_requests()[0]
        .clone()
}

#[tokio::test]
async fn a_spot_launch_holds_a_one_time_request() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launched = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::M5Large)
        .subnet_id(&s)
        .min_count(2)
        .max_count(2)
        .instance_market_options(spot(SpotMarketOptions::builder().max_price("0.05").build()))
        .tag_specifications(tag_spec(
            ResourceType::SpotInstancesRequest,
            &[("pool", "workers")],
        ))
        .send()
        .await
        .unwrap();
    let instances = launched.instances();
    assert_eq!(instances.len(), 2);
    let (a, b) = (&instances[0], &instances[1]);
    assert_eq!(a.instance_lifecycle(), Some(&InstanceLifecycleType::Spot));
    let (sir_a, sir_b) = (
        a.spot_instance_request_id().unwrap().to_string(),
        b.spot_instance_request_id().unwrap().to_string(),
    );
    assert!(
        sir_a.starts_with("sir-") && sir_a != sir_b,
        "{sir_a} {sir_b}"
    );

    let r = request(&ec2, &sir_a).await;
    assert_eq!(r.state(), Some(&SpotInstanceState::Active));
    assert_eq!(r.status().unwrap().code(), Some("fulfilled"));
    assert_eq!(r.instance_id(), a.instance_id());
    assert_eq!(r.spot_price(), Some("0.05"));
    assert_eq!(r.r#type(), Some(&SpotInstanceType::OneTime));
    assert_eq!(
        r.instance_interruption_behavior(),
        Some(&InstanceInterruptionBehavior::Terminate)
    );
    assert_eq!(r.launched_availability_zone(), Some("us-east-1a"));
    let spec = r.launch_specification().unwrap();
    assert_eq!(spec.image_id(), Some(ami.as_str()));
    assert_eq!(spec.instance_type(), Some(&InstanceType::M5Large));
    assert_eq!(spec.security_groups()[0].group_name(), Some("default"));
    assert_eq!(r.tags()[0].value(), Some("workers"));

    // Filters, on the requests and on the instances.
    let by = |name: &str, value: &str| {
        ec2.describe_spot_instance_requests()
            .filters(filter(name, &[value]))
    };
    let count = |out: aws_sdk_ec2::operation::describe_spot_instance_requests::DescribeSpotInstanceRequestsOutput| {
        out.spot_instance_requests().len()
    };
    assert_eq!(count(by("state", "active").send().await.unwrap()), 2);
    assert_eq!(
        count(by("launch.instance-type", "m5.large").send().await.unwrap()),
        2
    );
    assert_eq!(
        count(
            by("instance-id", a.instance_id().unwrap())
                .send()
                .await
                .unwrap()
        ),
        1
    );
    assert_eq!(count(by("tag:pool", "workers").send().await.unwrap()), 2);
    assert_eq!(count(by("launch.kernel-id", "*").send().await.unwrap()), 0);
    let spot_instances = ec2
        .describe_instances()
        .filters(filter("instance-lifecycle", &["spot"]))
        .filters(filter("spot-instance-request-id", &[&sir_b]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        spot_instances.reservations()[0].instances()[0].instance_id(),
        b.instance_id()
    );

    // A one-time request's instance cannot be stopped; terminating it closes the request;
    // cancelling leaves the instance running.
    let stop = ec2
        .stop_instances()
        .instance_ids(a.instance_id().unwrap())
        .send()
        .await;
    assert_eq!(code(stop), "UnsupportedOperation");
    ec2.terminate_instances()
        .instance_ids(a.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    let closed = request(&ec2, &sir_a).await;
    assert_eq!(closed.state(), Some(&SpotInstanceState::Closed));
    assert_eq!(
        closed.status().unwrap().code(),
        Some("instance-terminated-by-user")
    );
    let cancelled = ec2
        .cancel_spot_instance_requests()
        .spot_instance_request_ids(&sir_a)
        .spot_instance_request_ids(&sir_b)
        .send()
        .await
        .unwrap();
    let states: Vec<&str> = cancelled
        .cancelled_spot_instance_requests()
        .iter()
        .map(|c| c.state().unwrap().as_str())
        .collect();
    assert_eq!(states, ["closed", "cancelled"]);
    let b_now = request(&ec2, &sir_b).await;
    assert_eq!(b_now.state(), Some(&SpotInstanceState::Cancelled));
    assert_eq!(
        b_now.status().unwrap().code(),
        Some("request-canceled-and-instance-running")
    );
    let still = ec2
        .describe_instances()
        .instance_ids(b.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        still.reservations()[0].instances()[0]
            .state()
            .unwrap()
            .name()
            .unwrap()
            .as_str(),
        "running"
    );
    let unknown = ec2
        .describe_spot_instance_requests()
        .spot_instance_request_ids("sir-0123abcd")
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidSpotInstanceRequestID.NotFound");
}

#[tokio::test]
async fn spot_options_aws_refuses_launch_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let run = || {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::M5Large)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
    };
    let cases = [
        (
            run().instance_market_options(spot(
                SpotMarketOptions::builder()
                    .spot_instance_type(SpotInstanceType::Persistent)
                    .build(),
            )),
            "InvalidParameterCombination",
        ),
        (
            run().instance_market_options(spot(
                SpotMarketOptions::builder()
                    .spot_instance_type(SpotInstanceType::Persistent)
                    .instance_interruption_behavior(InstanceInterruptionBehavior::Stop)
                    .build(),
            )),
            "NotImplemented",
        ),
        (
            run().instance_market_options(spot(
                SpotMarketOptions::builder().max_price("0.0001").build(),
            )),
            "InvalidParameterValue",
        ),
        (
            run().instance_market_options(spot(
                SpotMarketOptions::builder().max_price("cheap").build(),
            )),
            "InvalidParameterValue",
        ),
        (
            run().instance_market_options(spot(
                SpotMarketOptions::builder()
                    .valid_until(aws_sdk_ec2::primitives::DateTime::from_secs(1_900_000_000))
                    .build(),
            )),
            "InvalidParameterCombination",
        ),
        (
            run().tag_specifications(tag_spec(ResourceType::SpotInstancesRequest, &[("a", "b")])),
            "InvalidParameterValue",
        ),
        (
            run().instance_market_options(
                InstanceMarketOptionsRequest::builder()
                    .market_type(MarketType::CapacityBlock)
                    .build(),
            ),
            "NotImplemented",
        ),
        // No Spot Instance runs on a Dedicated Host.
        (
            run()
                .instance_market_options(spot(SpotMarketOptions::builder().build()))
                .placement(
                    aws_sdk_ec2::types::Placement::builder()
                        .tenancy(aws_sdk_ec2::types::Tenancy::Host)
                        .build(),
                ),
            "InvalidParameterCombination",
        ),
    ];
    for (call, want) in cases {
        assert_eq!(code(call.send().await), want);
    }
    nothing_launched(&ec2).await;
}

/// Asserts the region holds no instance and no Spot request.
async fn nothing_launched(ec2: &aws_sdk_ec2::Client) {
    let instances = ec2.describe_instances().send().await.unwrap();
    assert!(instances.reservations().is_empty());
    let requests = ec2.describe_spot_instance_requests().send().await.unwrap();
    assert!(requests.spot_instance_requests().is_empty());
}

/// Instance `id` as DescribeInstances shows it.
async fn described_instance(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::Instance {
    ec2.describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .clone()
}

fn state_of(i: &aws_sdk_ec2::types::Instance) -> &str {
    i.state().unwrap().name().unwrap().as_str()
}

#[tokio::test]
async fn an_interrupted_spot_instance_runs_through_its_notice_then_terminates() {
    use fakeaws::ec2::spot_request::{Interruption, interrupt};
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let mut launched = Vec::new();
    for price in [None, Some("0.05"), Some("0.05")] {
        let out = ec2
            .run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::M5Large)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .instance_market_options(spot(
                SpotMarketOptions::builder()
                    .set_max_price(price.map(String::from))
                    .build(),
            ))
            .send()
            .await
            .unwrap();
        let i = &out.instances()[0];
        launched.push((
            i.instance_id().unwrap().to_string(),
            i.spot_instance_request_id().unwrap().to_string(),
        ));
    }
    let on_demand = crate::instance(&ec2, &s).await;
    let [(a, sir_a), (b, sir_b), (c, sir_c)] = launched.try_into().unwrap();
    let interrupted = |ids: &[&str], why: Interruption| {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        fake.fake()
            .with_region("us-east-1", |r| interrupt(r, &ids, why))
    };
    let advance = |seconds: u64| {
        fake.fake().with_region("us-east-1", |r| {
            r.clock.advance(std::time::Duration::from_secs(seconds))
        })
    };

    // What EC2 cannot interrupt is named, every one, and nothing is interrupted.
    let problems = interrupted(
        &[&a, &on_demand, "i-0123456789abcdef0", &b],
        Interruption::Price,
    )
    .unwrap_err();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains(&a) && problems[0].contains("no maximum price"));
    assert!(problems[1].contains(&on_demand) && problems[1].contains("not a Spot Instance"));
    assert!(problems[2].contains("no such instance"));
    assert_eq!(
        request(&ec2, &sir_b).await.status().unwrap().code(),
        Some("fulfilled")
    );

    // Capacity taken back: the request closes at once, the instance runs out its notice.
    interrupted(&[&a], Interruption::Capacity).unwrap();
    let r = request(&ec2, &sir_a).await;
    assert_eq!(r.state(), Some(&SpotInstanceState::Closed));
    assert_eq!(
        r.status().unwrap().code(),
        Some("instance-terminated-no-capacity")
    );
    assert_eq!(state_of(&described_instance(&ec2, &a).await), "running");
    advance(119);
    assert_eq!(state_of(&described_instance(&ec2, &a).await), "running");
    // Interrupting it again changes nothing: it is already on notice.
    interrupted(&[&a], Interruption::Capacity).unwrap();
    advance(1);
    let gone = described_instance(&ec2, &a).await;
    assert_eq!(state_of(&gone), "terminated");
    let reason = gone.state_reason().unwrap();
    assert_eq!(reason.code(), Some("Server.SpotInstanceTermination"));
    assert!(
        gone.state_transition_reason()
            .unwrap()
            .starts_with("Service initiated ("),
        "{:?}",
        gone.state_transition_reason()
    );
    // Its root volume went with it, as at any termination.
    let volumes = ec2
        .describe_volumes()
        .filters(filter("attachment.instance-id", &[&a]))
        .send()
        .await
        .unwrap();
    assert!(volumes.volumes().is_empty());
    assert_eq!(
        request(&ec2, &sir_a).await.status().unwrap().code(),
        Some("instance-terminated-no-capacity")
    );

    // The Spot price rising above a maximum price; its owner terminates it during the notice:
    // terminated as they asked, the request keeping the interruption's status.
    interrupted(&[&c], Interruption::Price).unwrap();
    let r = request(&ec2, &sir_c).await;
    assert_eq!(r.state(), Some(&SpotInstanceState::Closed));
    assert_eq!(
        r.status().unwrap().code(),
        Some("instance-terminated-by-price")
    );
    ec2.terminate_instances()
        .instance_ids(&c)
        .send()
        .await
        .unwrap();
    advance(120);
    let ended = described_instance(&ec2, &c).await;
    assert_eq!(state_of(&ended), "terminated");
    assert_eq!(
        ended.state_reason().unwrap().code(),
        Some("Client.UserInitiatedShutdown")
    );
    assert_eq!(
        request(&ec2, &sir_c).await.status().unwrap().code(),
        Some("instance-terminated-by-price")
    );

    // The others run on untouched.
    assert_eq!(state_of(&described_instance(&ec2, &b).await), "running");
    assert_eq!(
        state_of(&described_instance(&ec2, &on_demand).await),
        "running"
    );
    let r = request(&ec2, &sir_b).await;
    assert_eq!(r.state(), Some(&SpotInstanceState::Active));
    let closed = ec2
        .describe_spot_instance_requests()
        .filters(filter("status-code", &["instance-terminated-no-capacity"]))
        .send()
        .await
        .unwrap();
    let ids: Vec<&str> = closed
        .spot_instance_requests()
        .iter()
        .filter_map(|r| r.spot_instance_request_id())
        .collect();
    assert_eq!(ids, [sir_a.as_str()]);
}

fn spec(ami: &str, subnet_id: &str) -> aws_sdk_ec2::types::RequestSpotLaunchSpecification {
    aws_sdk_ec2::types::RequestSpotLaunchSpecification::builder()
        .image_id(ami)
        .instance_type(InstanceType::T3Micro)
        .subnet_id(subnet_id)
        .iam_instance_profile(
            aws_sdk_ec2::types::IamInstanceProfileSpecification::builder()
                .name("nodes")
                .build(),
        )
        .build()
}

#[tokio::test]
async fn request_spot_instances_answers_open_requests_then_fulfils_them() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let ask = ec2
        .request_spot_instances()
        .instance_count(2)
        .spot_price("0.03")
        .launch_group("batch")
        .availability_zone_group("together")
        .launch_specification(spec(&ami, &s))
        .tag_specifications(tag_spec(
            ResourceType::SpotInstancesRequest,
            &[("pool", "batch")],
        ))
        .client_token("spot-token-1");
    let asked = ask.clone().send().await.unwrap();
    let requests = asked.spot_instance_requests();
    assert_eq!(requests.len(), 2);
    // Answered as AWS answers a request it has just taken.
    for r in requests {
        assert_eq!(r.state(), Some(&SpotInstanceState::Open));
        assert_eq!(r.status().unwrap().code(), Some("pending-evaluation"));
        assert_eq!(r.instance_id(), None);
        assert_eq!(r.spot_price(), Some("0.03"));
        assert_eq!(r.r#type(), Some(&SpotInstanceType::OneTime));
        assert_eq!(r.launch_group(), Some("batch"));
        assert_eq!(r.availability_zone_group(), Some("together"));
        assert_eq!(r.tags()[0].value(), Some("batch"));
        // Valid for seven days unless told.
        let created = r.create_time().unwrap().secs();
        assert_eq!(r.valid_until().unwrap().secs(), created + 7 * 24 * 3600);
    }
    let ids: Vec<String> = requests
        .iter()
        .map(|r| r.spot_instance_request_id().unwrap().to_string())
        .collect();

    // Then each is fulfilled by an instance of its own, a Spot Instance of the
    // specification, untagged (the tags were the requests').
    let mut instances = Vec::new();
    for id in &ids {
        let r = request(&ec2, id).await;
        assert_eq!(r.state(), Some(&SpotInstanceState::Active));
        assert_eq!(r.status().unwrap().code(), Some("fulfilled"));
        assert_eq!(r.launched_availability_zone(), Some("us-east-1b"));
        // The launch specification as the CLI's documented output shows it.
        let launched = r.launch_specification().unwrap();
        assert_eq!(launched.image_id(), Some(ami.as_str()));
        assert_eq!(
            launched.iam_instance_profile().and_then(|p| p.arn()),
            Some("arn:aws:iam::123456789012:instance-profile/nodes")
        );
        let i = r.instance_id().unwrap().to_string();
        let described = crate::described(&ec2, &i).await;
        assert_eq!(
            described.instance_lifecycle(),
            Some(&InstanceLifecycleType::Spot)
        );
        assert_eq!(described.spot_instance_request_id(), Some(id.as_str()));
        assert_eq!(described.image_id(), Some(ami.as_str()));
        assert_eq!(described.subnet_id(), Some(s.as_str()));
        assert!(described.tags().is_empty(), "{:?}", described.tags());
        instances.push(i);
    }
    assert_ne!(instances[0], instances[1]);

    // The same token and request answer the same requests and launch nothing more.
    let again = ask.send().await.unwrap();
    let again_ids: Vec<&str> = again
        .spot_instance_requests()
        .iter()
        .filter_map(|r| r.spot_instance_request_id())
        .collect();
    assert_eq!(again_ids, ids);
    let all = ec2.describe_spot_instance_requests().send().await.unwrap();
    assert_eq!(all.spot_instance_requests().len(), 2);

    // The groups and the validity are filters too.
    for (name, value) in [
        ("launch-group", "batch"),
        ("availability-zone-group", "together"),
        ("state", "active"),
    ] {
        let found = ec2
            .describe_spot_instance_requests()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(found.spot_instance_requests().len(), 2, "{name}");
    }

    // Terminating one's instance closes it; cancelling the other leaves its instance running.
    ec2.terminate_instances()
        .instance_ids(&instances[0])
        .send()
        .await
        .unwrap();
    assert_eq!(
        request(&ec2, &ids[0]).await.state(),
        Some(&SpotInstanceState::Closed)
    );
    ec2.cancel_spot_instance_requests()
        .spot_instance_request_ids(&ids[1])
        .send()
        .await
        .unwrap();
    assert_eq!(
        request(&ec2, &ids[1]).await.state(),
        Some(&SpotInstanceState::Cancelled)
    );
    assert_eq!(
        crate::described(&ec2, &instances[1])
            .await
            .state()
            .unwrap()
            .name()
            .unwrap()
            .as_str(),
        "running"
    );
}

#[tokio::test]
async fn a_refused_spot_request_makes_nothing() {
    let fake = crate::fake_with_quota("instances", 2).await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let bad = [
        // More than the quota allows: AWS's Spot code and words.
        (
            ec2.request_spot_instances()
                .instance_count(3)
                .launch_specification(spec(&ami, &s)),
            "MaxSpotInstanceCountExceeded",
        ),
        // What RunInstances refuses, it refuses.
        (
            ec2.request_spot_instances()
                .launch_specification(spec("ami-0123456789abcdef0", &s)),
            "InvalidAMIID.NotFound",
        ),
        (
            ec2.request_spot_instances()
                .launch_specification(spec(&ami, "subnet-0123456789abcdef0")),
            "InvalidSubnetID.NotFound",
        ),
        (
            ec2.request_spot_instances()
                .spot_price("0.0001")
                .launch_specification(spec(&ami, &s)),
            "InvalidParameterValue",
        ),
        (
            ec2.request_spot_instances()
                .instance_interruption_behavior(InstanceInterruptionBehavior::Stop)
                .launch_specification(spec(&ami, &s)),
            "InvalidParameterCombination",
        ),
        (
            ec2.request_spot_instances()
                .instance_count(0)
                .launch_specification(spec(&ami, &s)),
            "InvalidParameterValue",
        ),
        // Tags go on the requests only.
        (
            ec2.request_spot_instances()
                .launch_specification(spec(&ami, &s))
                .tag_specifications(tag_spec(ResourceType::Instance, &[("a", "b")])),
            "InvalidParameterValue",
        ),
        (
            ec2.request_spot_instances()
                .valid_until(aws_sdk_ec2::primitives::DateTime::from_secs(1_000))
                .launch_specification(spec(&ami, &s)),
            "InvalidParameterValue",
        ),
        (ec2.request_spot_instances(), "MissingParameter"),
        (
            ec2.request_spot_instances()
                .r#type(SpotInstanceType::Persistent)
                .launch_specification(spec(&ami, &s)),
            "NotImplemented",
        ),
    ];
    for (call, want) in bad {
        assert_eq!(code(call.send().await), want);
    }
    nothing_launched(&ec2).await;
    // Within the quota it is taken.
    let ok = ec2
        .request_spot_instances()
        .instance_count(2)
        .launch_specification(spec(&ami, &s))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.spot_instance_requests().len(), 2);
}
