//! The `capa` binary as a user runs it: against its embedded fake, against a fake given by
//! `--endpoint` (up, status, plan, down), and with the mistakes a user makes (a bad spec, a
//! missing file, an endpoint nobody listens on): one clear message, an exit code, nothing
//! created.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `capa` for the test named `test`. Whatever a run keeps goes to a scratch directory of
/// that test's own, never the user's: the tests run at once, and two of them building the
/// same example cluster against different fakes must not share its bootstrap material (one's
/// `down` forgets what the other's `up` is about to read).
fn capa(test: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capa"))
        .args(args)
        .env_remove("RUST_LOG")
        .env("XDG_STATE_HOME", state_home(test))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .output()
        .expect("capa runs")
}

/// The scratch directory of the test named `test`.
fn state_home(test: &str) -> PathBuf {
    std::env::temp_dir().join(format!("capa-cli-state-{}-{test}", std::process::id()))
}

/// A test's scratch directory, removed when the test ends (passed or failed).
struct Scratch(PathBuf);

impl Scratch {
    fn of(test: &str) -> Self {
        Scratch(state_home(test))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join("examples")
        .join("cluster.yaml")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn up_on_the_embedded_fake_builds_the_example() {
    let _scratch = Scratch::of("embedded");
    let out = capa("embedded", &["up", "-f", example().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("embedded fakeaws"), "{stderr}");
    assert!(
        stderr.contains("create vpc 10.0.0.0/16"),
        "progress is shown: {stderr}"
    );
    assert!(
        stdout.contains("control plane endpoint: demo-apiserver-"),
        "{stdout}"
    );
    assert!(
        stdout.contains("27 owned and 0 pre-existing resources"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("subnet subnet-").count(), 6, "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_status_plan_down_against_an_endpoint() {
    const TEST: &str = "endpoint";
    let _scratch = Scratch::of(TEST);
    let fake = fakeaws::spawn().await.unwrap();
    let endpoint = fake.endpoint().to_string();
    let file = example();
    let run = move |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            capa(TEST, &refs)
        })
    };
    let args = |verb: &str, json: bool| {
        let mut v = vec![
            verb.to_string(),
            "-f".into(),
            file.to_str().unwrap().to_string(),
            "--endpoint".into(),
            endpoint.clone(),
        ];
        if json {
            v.extend(["--output".to_string(), "json".to_string()]);
        }
        v
    };

    let plan = run(args("plan", false)).await.unwrap();
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    assert!(
        text(&plan.stdout).contains("+ create vpc 10.0.0.0/16"),
        "{}",
        text(&plan.stdout)
    );
    let calls = fake.fake().take_calls();
    assert!(
        calls.iter().all(|c| !c.is_mutating()),
        "plan only describes"
    );

    let up = run(args("up", true)).await.unwrap();
    assert!(up.status.success(), "{}", text(&up.stderr));
    let json: serde_json::Value = serde_json::from_slice(&up.stdout).unwrap();
    assert_eq!(json["status"]["ready"], true);
    let kinds: Vec<&str> = json["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["ready"], true, "{c}");
            c["type"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "VPC",
            "Subnets",
            "InternetGateway",
            "NATGateways",
            "RouteTables",
            "SecurityGroups",
            "Bastion",
            "LoadBalancer"
        ]
    );
    assert_eq!(json["status"]["subnets"].as_array().unwrap().len(), 6);
    let created = json["mutatingCalls"].as_u64().unwrap();
    let fake_saw = fake
        .fake()
        .take_calls()
        .iter()
        .filter(|c| c.is_mutating())
        .count() as u64;
    assert_eq!(created, fake_saw, "capa counts what the fake saw");

    // A second up changes nothing.
    let again = run(args("up", true)).await.unwrap();
    let json: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(json["mutatingCalls"], 0);
    let plan = run(args("plan", false)).await.unwrap();
    assert!(
        text(&plan.stdout).contains("up to date"),
        "{}",
        text(&plan.stdout)
    );
    let status = run(args("status", false)).await.unwrap();
    let s = text(&status.stdout);
    assert!(
        s.contains("load balancer demo-apiserver internet-facing"),
        "{s}"
    );
    assert!(s.contains("[owned]"), "{s}");
    assert!(s.contains("conditions:\n  VPC              ready"), "{s}");
    assert!(s.contains("  LoadBalancer     ready"), "{s}");

    let down = run(args("down", false)).await.unwrap();
    assert!(down.status.success(), "{}", text(&down.stderr));
    let ec2 = fake.ec2_client();
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "only the default VPC is left");
}

#[test]
fn a_bad_spec_lists_every_problem_and_exits_2() {
    let scratch = Scratch::of("bad-spec");
    let dir = scratch.0.clone();
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: Bad}\nspec:\n  region: us-east-1\n  network: {vpc: {cidrBlock: 10.0.0.0/8}}\n  bastion: {enabled: true}\n",
    )
    .unwrap();
    let out = capa("bad-spec", &["up", "-f", bad.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for needle in ["metadata.name", "cidrBlock", "allowedCidrBlocks"] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );

    let out = capa(
        "bad-spec",
        &["up", "-f", dir.join("missing.yaml").to_str().unwrap()],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("cannot read") && stderr.contains("missing.yaml"),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_endpoint_is_one_clear_error() {
    let _scratch = Scratch::of("unreachable");
    // A port nobody listens on: bind, note the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = capa(
        "unreachable",
        &[
            "up",
            "-f",
            example().to_str().unwrap(),
            "--endpoint",
            &format!("http://127.0.0.1:{port}"),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("DescribeAvailabilityZones"), "{stderr}");
    assert!(stderr.lines().count() <= 3, "one clear message: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_with_machines_then_machine_commands() {
    const TEST: &str = "machines";
    let _scratch = Scratch::of(TEST);
    let fake = fakeaws::spawn().await.unwrap();
    let endpoint = fake.endpoint().to_string();
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join("examples")
        .join("cluster-with-machines.yaml");
    let file = file.to_str().unwrap().to_string();
    let run = |args: Vec<&str>| {
        let mut v: Vec<String> = args.into_iter().map(String::from).collect();
        v.extend([
            "-f".to_string(),
            file.clone(),
            "--endpoint".to_string(),
            endpoint.clone(),
        ]);
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = v.iter().map(String::as_str).collect();
            capa(TEST, &refs)
        })
    };
    let up = run(vec!["up"]).await.unwrap();
    let stdout = text(&up.stdout);
    assert!(up.status.success(), "{stdout}{}", text(&up.stderr));
    assert!(stdout.contains("5 machines"), "{stdout}");
    assert_eq!(stdout.matches("in load balancer").count(), 3, "{stdout}");

    // What the fake holds: five running machines, three behind the load balancer.
    let ec2 = fake.ec2_client();
    let running = ec2
        .describe_instances()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("tag:sigs.k8s.io/cluster-api-provider-aws/role")
                .values("controlplane")
                .values("node")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let n: usize = running
        .reservations()
        .iter()
        .map(|r| r.instances().len())
        .sum();
    assert_eq!(n, 5);

    let status = run(vec!["machine", "status", "--output", "json"])
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let rows = json["machines"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r["exists"]["exists"] == true), "{json}");

    // Create again: nothing new.
    let again = run(vec!["machine", "create", "--output", "json"])
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(json["mutatingCalls"], 0, "{json}");

    // An edited file: a changed mutable field converges, a changed immutable one is refused,
    // named, and changes nothing.
    let example = std::fs::read_to_string(&file).unwrap();
    let node_1 = "  instanceType: t3.xlarge\n  subnet: {availabilityZone: us-east-1b}\n";
    assert_eq!(example.matches(node_1).count(), 1);
    let edited = |with: &str, name: &str| {
        let dir = state_home(TEST);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, example.replace(node_1, with)).unwrap();
        path.to_str().unwrap().to_string()
    };
    let converged = edited(
        &format!(
            "{node_1}  additionalTags: {{tier: gold}}\n  instanceMetadataOptions: \
             {{httpTokens: required, httpPutResponseHopLimit: 2}}\n"
        ),
        "converged.yaml",
    );
    let endpoint_ = endpoint.clone();
    let machine_create = move |path: String| {
        let endpoint = endpoint_.clone();
        tokio::task::spawn_blocking(move || {
            capa(
                TEST,
                &["machine", "create", "-f", &path, "--endpoint", &endpoint],
            )
        })
    };
    let out = machine_create(converged).await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let node = ec2
        .describe_instances()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("tag:Name")
                .values("demo-node-1")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let node = &node.reservations()[0].instances()[0];
    assert!(
        node.tags()
            .iter()
            .any(|t| t.key() == Some("tier") && t.value() == Some("gold")),
        "{:?}",
        node.tags()
    );
    let imds = node.metadata_options().unwrap();
    assert_eq!(
        (
            imds.http_tokens().map(|t| t.as_str()),
            imds.http_put_response_hop_limit()
        ),
        (Some("required"), Some(2))
    );
    let resized = edited(
        "  instanceType: t3.2xlarge\n  subnet: {availabilityZone: us-east-1b}\n",
        "resized.yaml",
    );
    let out = machine_create(resized).await.unwrap();
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("spec.instanceType"), "{stderr}");
    let still = ec2
        .describe_instances()
        .instance_ids(node.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        still.reservations()[0].instances()[0]
            .instance_type()
            .map(|t| t.as_str()),
        Some("t3.xlarge")
    );

    let del = run(vec!["machine", "delete"]).await.unwrap();
    assert!(del.status.success(), "{}", text(&del.stderr));
    let status = run(vec!["machine", "status", "--output", "json"])
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        json["machines"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["exists"]["exists"] == false),
        "{json}"
    );

    let down = run(vec!["down"]).await.unwrap();
    assert!(down.status.success(), "{}", text(&down.stderr));
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "only the default VPC is left");
}

/// `capa up` rides out transient AWS errors (here every attempt the SDK makes at the first
/// CreateVpc answers 500) with a visible retry line, and stops at once, with AWS's code, on
/// an error no retry mends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_retries_transient_errors_and_stops_on_the_others() {
    use fakeaws::sim::faults::{Effect, Match, Rule, Trigger};

    let _scratch = Scratch::of("retries");
    let create_vpc = |effect: Effect, times: u64| Rule {
        on: Match {
            action: Some("CreateVpc".into()),
            ..Match::default()
        },
        when: Trigger::Nth { n: 1, times },
        effect,
    };
    let up = |endpoint: String| {
        tokio::task::spawn_blocking(move || {
            capa(
                "retries",
                &[
                    "up",
                    "-f",
                    example().to_str().unwrap(),
                    "--endpoint",
                    &endpoint,
                ],
            )
        })
    };

    let fake = fakeaws::spawn().await.unwrap();
    fake.fake()
        .with_faults(|f| f.add(create_vpc(Effect::InternalError, 3)));
    let out = up(fake.endpoint().to_string()).await.unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("retrying in"), "{stderr}");
    assert!(stderr.contains("InternalError"), "{stderr}");
    let vpcs = fake
        .ec2_client()
        .describe_vpcs()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("tag:sigs.k8s.io/cluster-api-provider-aws/cluster/demo")
                .values("owned")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "one VPC, however many retries");

    let fake = fakeaws::spawn().await.unwrap();
    fake.fake().with_faults(|f| {
        f.add(create_vpc(
            Effect::Error {
                code: "VpcLimitExceeded".into(),
                status: 400,
                message: "The maximum number of VPCs has been reached.".into(),
            },
            1,
        ))
    });
    let out = up(fake.endpoint().to_string()).await.unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("VpcLimitExceeded"), "{stderr}");
    assert!(!stderr.contains("retrying in"), "{stderr}");
}
