//! AWS's bad days through the SDK: throttling by token buckets on the fake's clock, fault
//! rules answering errors (retried by the SDK where AWS's errors are retryable), and lost
//! answers of calls that did their work; every outcome read back through Describe calls and
//! the call log.

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::types::InstanceType;
use fakeaws::sim::faults::{Effect, Match, Rule, Trigger};

use crate::{code, empty_fake, filter, image, subnet, vpc};

const AMI: &str = "capa-ami-ubuntu-24.04-v1.31.0-1727000000";

/// Launches one t3.small of `ami` in `subnet`: the SDK's answer.
async fn run_one(
    ec2: &aws_sdk_ec2::Client,
    ami: &str,
    subnet: &str,
) -> Result<
    aws_sdk_ec2::operation::run_instances::RunInstancesOutput,
    aws_sdk_ec2::error::SdkError<aws_sdk_ec2::operation::run_instances::RunInstancesError>,
> {
    ec2.run_instances()
        .image_id(ami)
        .instance_type(InstanceType::T3Small)
        .subnet_id(subnet)
        .min_count(1)
        .max_count(1)
        .send()
        .await
}

/// An EC2 client that does not retry, to see each answer.
fn no_retries(fake: &fakeaws::FakeAws) -> aws_sdk_ec2::Client {
    let conf = fake
        .ec2_client()
        .config()
        .to_builder()
        .retry_config(RetryConfig::disabled())
        .build();
    aws_sdk_ec2::Client::from_conf(conf)
}

/// An EC2 client with the SDK's standard retries, backing off briefly.
fn quick_retries(fake: &fakeaws::FakeAws) -> aws_sdk_ec2::Client {
    let conf = fake
        .ec2_client()
        .config()
        .to_builder()
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(3)
                .with_initial_backoff(Duration::from_millis(5)),
        )
        .build();
    aws_sdk_ec2::Client::from_conf(conf)
}

/// The error code of each call of `action` in the call log, in order (`None`: success).
fn errors_of(fake: &fakeaws::FakeAws, action: &str) -> Vec<Option<String>> {
    fake.fake()
        .calls()
        .into_iter()
        .filter(|c| c.action == action)
        .map(|c| c.error)
        .collect()
}

fn rule(action: &str, when: Trigger, effect: Effect) -> Rule {
    Rule {
        on: Match {
            service: Some("ec2".into()),
            action: Some(action.into()),
            region: None,
            kind: None,
            zone: None,
        },
        when,
        effect,
    }
}

#[tokio::test]
async fn throttling_empties_a_bucket_that_the_clock_refills() {
    let fake = empty_fake().await;
    let ec2 = no_retries(&fake);
    // A fiftieth of AWS's figures: filtered Describe calls get 2 tokens and 0.4 per second,
    // unfiltered ones 1 token.
    fake.fake()
        .with_region("us-east-1", |r| r.throttle.enable(0.02));
    let describe = || {
        ec2.describe_vpcs()
            .filters(filter("cidr", &["10.0.0.0/16"]))
            .send()
    };
    describe().await.unwrap();
    describe().await.unwrap();
    let err = describe().await.unwrap_err();
    assert_eq!(
        err.raw_response().map(|r| r.status().as_u16()),
        Some(503),
        "RequestLimitExceeded is a 503"
    );
    assert_eq!(code(Err::<(), _>(err)), "RequestLimitExceeded");
    // Another action has its own bucket.
    ec2.describe_subnets()
        .filters(filter("cidr-block", &["10.0.0.0/24"]))
        .send()
        .await
        .unwrap();
    fake.fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(5)));
    describe().await.unwrap();

    // Classic ELB answers its own code.
    let elb = fake.elb_client();
    let elb = aws_sdk_elasticloadbalancing::Client::from_conf(
        elb.config()
            .to_builder()
            .retry_config(RetryConfig::disabled())
            .build(),
    );
    elb.describe_load_balancers().send().await.unwrap();
    let err = elb.describe_load_balancers().send().await.unwrap_err();
    assert_eq!(code(Err::<(), _>(err)), "Throttling");
}

#[tokio::test]
async fn a_throttled_call_is_retried_by_the_sdk_and_succeeds() {
    let fake = empty_fake().await;
    fake.fake().with_faults(|f| {
        f.add(rule(
            "CreateVpc",
            Trigger::Nth { n: 1, times: 1 },
            Effect::Error {
                code: "RequestLimitExceeded".into(),
                status: 503,
                message: "Request limit exceeded.".into(),
            },
        ));
    });
    let ec2 = quick_retries(&fake);
    ec2.create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap();
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "one VPC, made by the retry");
    assert_eq!(
        errors_of(&fake, "CreateVpc"),
        [Some("RequestLimitExceeded".to_string()), None]
    );
}

#[tokio::test]
async fn server_errors_are_retried_and_named_errors_are_not() {
    let fake = empty_fake().await;
    fake.fake().with_faults(|f| {
        f.add(rule(
            "CreateVpc",
            Trigger::Nth { n: 1, times: 2 },
            Effect::InternalError,
        ));
        f.add(rule(
            "CreateInternetGateway",
            Trigger::Nth { n: 1, times: 1 },
            Effect::Unavailable,
        ));
        f.add(rule(
            "RunInstances",
            Trigger::Nth { n: 1, times: 1 },
            Effect::Error {
                code: "InsufficientInstanceCapacity".into(),
                status: 400,
                message: "We currently do not have sufficient t3.small capacity in the \
                          Availability Zone you requested (us-east-1a)."
                    .into(),
            },
        ));
    });
    let ec2 = quick_retries(&fake);
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    ec2.create_internet_gateway().send().await.unwrap();
    let subnet = subnet(&ec2, &vpc, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    let run = run_one(&ec2, &ami, &subnet).await;
    assert_eq!(code(run), "InsufficientInstanceCapacity");
    assert_eq!(ec2.describe_vpcs().send().await.unwrap().vpcs().len(), 1);
    assert_eq!(
        ec2.describe_internet_gateways()
            .send()
            .await
            .unwrap()
            .internet_gateways()
            .len(),
        1
    );
    let instances = ec2.describe_instances().send().await.unwrap();
    assert!(instances.reservations().is_empty(), "nothing launched");
    let log: Vec<(String, Option<String>)> = fake
        .fake()
        .calls()
        .into_iter()
        .filter(|c| !c.action.starts_with("Describe"))
        .map(|c| (c.action.into_owned(), c.error))
        .collect();
    let expected = [
        ("CreateVpc", Some("InternalError")),
        ("CreateVpc", Some("InternalError")),
        ("CreateVpc", None),
        ("CreateInternetGateway", Some("Unavailable")),
        ("CreateInternetGateway", None),
        ("CreateSubnet", None),
        ("RunInstances", Some("InsufficientInstanceCapacity")),
    ]
    .map(|(a, e)| (a.to_string(), e.map(String::from)));
    assert_eq!(log, expected);
}

#[tokio::test]
async fn a_lost_answer_did_the_work_and_the_retry_replays_it() {
    let fake = empty_fake().await;
    let ec2 = quick_retries(&fake);
    let vpc = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = subnet(&ec2, &vpc, "10.0.0.0/24", "us-east-1a").await;
    let ami = image(&ec2, AMI).await;
    fake.fake().with_faults(|f| {
        f.add(rule(
            "RunInstances",
            Trigger::Nth { n: 1, times: 1 },
            Effect::LoseAnswer,
        ))
    });
    // The SDK fills in a ClientToken once per call; its retry carries the same token, so the
    // fake answers the instance the lost answer launched instead of launching another.
    let run = run_one(&ec2, &ami, &subnet).await.unwrap();
    let answered = run.instances()[0].instance_id().unwrap().to_string();
    let all = crate::instance_ids(&ec2, &[]).await;
    assert_eq!(all, [answered], "exactly one instance");
    assert_eq!(
        errors_of(&fake, "RunInstances"),
        [Some("InternalError".to_string()), None]
    );
}

#[tokio::test]
async fn probable_faults_replay_with_the_seed() {
    async fn errors() -> Vec<bool> {
        let fake = empty_fake().await;
        fake.fake().with_faults(|f| {
            f.add(rule(
                "Describe*",
                Trigger::Probability(0.4),
                Effect::InternalError,
            ))
        });
        let ec2 = no_retries(&fake);
        let mut out = Vec::new();
        for _ in 0..30 {
            out.push(ec2.describe_vpcs().send().await.is_err());
        }
        out
    }
    let first = errors().await;
    assert_eq!(first, errors().await, "the same seed fires the same faults");
    assert!(first.iter().any(|e| *e) && first.iter().any(|e| !*e));
}

/// Asynchronous states fail the way AWS reports them: a launch AWS cannot complete ends
/// `terminated` with a `Server.*` state reason (its interface and volume released), and a
/// registration that fails its health check stays `OutOfService`.
#[tokio::test]
async fn launches_and_registrations_fail_as_aws_reports_them() {
    use fakeaws::sim::transitions::Subject;

    let fake = fakeaws::spawn().await.unwrap();
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.fail_next(
            Subject::Instance,
            "Server.InsufficientInstanceCapacity",
            "Server.InsufficientInstanceCapacity: Insufficient capacity.",
        );
        r.transitions.fail_next(
            Subject::LoadBalancerRegistration,
            "Instance.FailedHealthCheck",
            "Instance has failed at least the UnhealthyThreshold number of health checks.",
        );
    });
    let ec2 = no_retries(&fake);
    let ami = image(&ec2, AMI).await;
    let launch = || {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::T3Small)
            .min_count(1)
            .max_count(1)
            .send()
    };
    let failed = launch().await.unwrap().instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    let d = ec2
        .describe_instances()
        .instance_ids(&failed)
        .send()
        .await
        .unwrap();
    let i = &d.reservations()[0].instances()[0];
    assert_eq!(i.state().unwrap().name().unwrap().as_str(), "terminated");
    assert_eq!(
        i.state_reason().unwrap().code(),
        Some("Server.InsufficientInstanceCapacity")
    );
    let left = ec2
        .describe_network_interfaces()
        .filters(filter("attachment.instance-id", &[&failed]))
        .send()
        .await
        .unwrap();
    assert!(
        left.network_interfaces().is_empty(),
        "its interface is gone"
    );
    // The next launch is fine.
    let ok = launch().await.unwrap().instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    ec2.wait_until_instance_running()
        .instance_ids(&ok)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();

    let elb = fake.elb_client();
    elb.create_load_balancer()
        .load_balancer_name("web")
        .availability_zones("us-east-1a")
        .listeners(
            aws_sdk_elasticloadbalancing::types::Listener::builder()
                .protocol("TCP")
                .load_balancer_port(80)
                .instance_port(80)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    elb.register_instances_with_load_balancer()
        .load_balancer_name("web")
        .instances(
            aws_sdk_elasticloadbalancing::types::Instance::builder()
                .instance_id(&ok)
                .build(),
        )
        .send()
        .await
        .unwrap();
    for _ in 0..3 {
        let health = elb
            .describe_instance_health()
            .load_balancer_name("web")
            .send()
            .await
            .unwrap();
        assert_eq!(
            health.instance_states()[0].state(),
            Some("OutOfService"),
            "a failed registration stays out of service"
        );
    }
}
