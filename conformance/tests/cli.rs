//! The conformance runner as `cargo xtask conformance` runs it: refused against real AWS
//! without the confirmation flag; the real-AWS path proven against a fake standing in for AWS
//! (through `AWS_ENDPOINT_URL` and the standard credential chain), cleaning up after itself;
//! a standalone endpoint; and `sweep` deleting what a crashed run left.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::{Command, Output};

fn conformance(args: &[&str], endpoint_as_aws: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.args(args)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("CONFORMANCE_POLL_MS", "50")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_PROFILE");
    if let Some(url) = endpoint_as_aws {
        c.env("AWS_ENDPOINT_URL", url)
            .env("AWS_ACCESS_KEY_ID", "AKIDCONFORMANCE")
            .env("AWS_SECRET_ACCESS_KEY", "not-a-secret");
    }
    c.output().expect("the conformance binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

async fn tagged_left(fake: &fakeaws::FakeAws, run: &str) -> usize {
    let tags = fake
        .ec2_client()
        .describe_tags()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("tag:capa-conformance-run")
                .values(run)
                .build(),
        )
        .send()
        .await
        .unwrap();
    // Terminated instances and deleted NAT gateways stay visible a while, as in AWS.
    let mut live = 0;
    for t in tags.tags() {
        let id = t.resource_id().unwrap();
        if id.starts_with("i-") || id.starts_with("nat-") {
            continue;
        }
        live += 1;
    }
    let lbs = fake
        .elb_client()
        .describe_load_balancers()
        .send()
        .await
        .unwrap();
    live + lbs.load_balancer_descriptions().len()
}

#[test]
fn real_aws_needs_the_confirmation_flag() {
    let out = conformance(&["--real-aws", "--region", "eu-west-1"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--i-understand-this-creates-aws-resources"),
        "{err}"
    );
    assert!(err.contains("eu-west-1"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_aws_path_against_a_fake_standing_in_for_aws() {
    let fake = fakeaws::spawn().await.unwrap();
    let url = fake.endpoint().to_string();
    let out = tokio::task::spawn_blocking(move || {
        conformance(
            &[
                "--real-aws",
                "--region",
                "us-east-1",
                "--i-understand-this-creates-aws-resources",
                "--cases",
                "1",
                "--budget",
                "3",
                "--run-id",
                "ci-real-path",
            ],
            Some(&url),
        )
    })
    .await
    .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("capa-conformance-run=ci-real-path"),
        "it says what it creates: {stderr}"
    );
    assert!(
        stdout.contains("conformance against AWS us-east-1"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches(" pass ").count(),
        3,
        "the budget is 3 cases: {stdout}"
    );
    assert!(
        fake.fake()
            .calls()
            .iter()
            .any(|c| c.action == "RunInstances" || c.action == "CreateVpc")
    );
    assert_eq!(
        tagged_left(&fake, "ci-real-path").await,
        0,
        "it cleaned up after itself"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_run_and_a_sweep_after_a_crashed_run() {
    let fake = fakeaws::spawn().await.unwrap();
    let url = fake.endpoint().to_string();
    let u = url.clone();
    let out = tokio::task::spawn_blocking(move || {
        conformance(
            &[
                "--endpoint",
                &u,
                "--only",
                "scenario greenfield-1",
                "--run-id",
                "ci-endpoint",
            ],
            None,
        )
    })
    .await
    .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("scenario greenfield-1-zone") && stdout.contains("pass"),
        "{stdout}"
    );

    // A crashed run leaves resources tagged with its id; sweep deletes them.
    let env = conformance::Env::new(&conformance::Target::Endpoint(url.clone()), "ci-crashed", 1)
        .await
        .unwrap();
    let case = conformance::world::Case {
        bastion: true,
        machines: 1,
        pre: conformance::world::Preexisting {
            vpc: true,
            gateway: true,
            ..Default::default()
        },
        ..conformance::world::Case::default()
    };
    let p = conformance::properties::prepare(&env, &case, "crashed")
        .await
        .unwrap();
    conformance::properties::up(&env, &env.clients, &p.cluster)
        .await
        .unwrap();
    conformance::properties::create_machines(&env, &env.clients, &p.cluster, &p.machines)
        .await
        .unwrap();
    // And a scenario's IPAM pool, holding a range of a VPC that is gone.
    let setup = scenarios::Setup {
        ipam_pool: Some("10.128.0.0/12".into()),
        ..scenarios::Setup::default()
    };
    let ex = conformance::world::create_setup(&env, &setup, "crashed-ipam")
        .await
        .unwrap();
    let pool = ex.ipam_pool.unwrap();
    env.clients
        .ec2
        .allocate_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .netmask_length(16)
        .send()
        .await
        .unwrap();
    assert!(tagged_left(&fake, "ci-crashed").await > 10);
    let out = tokio::task::spawn_blocking(move || {
        conformance(
            &["sweep", "--run-id", "ci-crashed", "--endpoint", &url],
            None,
        )
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("resources deleted"));
    assert_eq!(tagged_left(&fake, "ci-crashed").await, 0);
    // The IPAM went with its scopes, pool and allocation.
    let ec2 = fake.ec2_client();
    let ipams = ec2.describe_ipams().send().await.unwrap();
    assert!(ipams.ipams().is_empty(), "{ipams:?}");
    let pools = ec2.describe_ipam_pools().send().await.unwrap();
    assert!(pools.ipam_pools().is_empty(), "{pools:?}");
}

/// `cargo xtask conformance --faults storm`: every property (with the bad-day one) and every
/// scenario passes while the in-process fake plays the storm profile; a profile that is not
/// one is refused before anything runs, and `--faults` is refused for a target the suite does
/// not steer.
#[test]
fn the_whole_suite_passes_in_a_storm() {
    let out = conformance(&["--faults", "storm", "--cases", "2", "--seed", "7"], None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("faults: storm, seed 7"), "{stdout}");
    for row in [
        "converges-on-a-bad-day",
        "crash-at-any-change-then-resume",
        "scenario ",
    ] {
        assert!(stdout.contains(row), "{row} missing:\n{stdout}");
    }
    assert!(!stdout.contains("FAIL"), "{stdout}");

    let out = conformance(&["--faults", "hurricane"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("neither a profile (calm, lag, storm)"),
        "{}",
        text(&out.stderr)
    );
    let out = conformance(
        &["--faults", "storm", "--endpoint", "http://127.0.0.1:9"],
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("start a standalone fakeaws with --faults"),
        "{}",
        text(&out.stderr)
    );
}
