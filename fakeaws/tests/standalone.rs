//! The standalone binary: starts on a free port, prints its endpoint, serves the SDK, and
//! stops cleanly on Ctrl-C (SIGINT).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::process::Command;

use aws_sdk_ec2::error::ProvideErrorMetadata;
use common::{ec2_at, http_get, start};

/// What the binary started with `args` prints on stderr as it exits with `code`, at once.
fn refused(args: &[&str], code: i32) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fakeaws"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    stderr
}

#[tokio::test]
async fn binary_serves_and_stops_on_ctrl_c() {
    let (mut child, endpoint) = start(&["--port", "0", "--no-default-vpc"]);
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");

    let ec2 = ec2_at(&endpoint, "eu-central-1");
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap();
    let id = vpc.vpc().unwrap().vpc_id().unwrap();
    let got = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(got.vpcs().len(), 1);
    assert_eq!(got.vpcs()[0].vpc_id(), Some(id));

    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "fakeaws exits cleanly on SIGINT: {exit:?}");
}

/// `--faults FILE` starts the server with fault rules; a file that is not rules is refused at
/// start with a clear message.
#[tokio::test]
async fn binary_starts_with_the_fault_rules_of_a_file() {
    let dir = std::env::temp_dir().join(format!("fakeaws-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("faults.json");
    std::fs::write(
        &file,
        r#"[{"on": {"action": "CreateVpc"}, "when": {"nth": {"n": 1, "times": 1}},
             "effect": {"error": {"code": "VpcLimitExceeded", "status": 400,
                                  "message": "The maximum number of VPCs has been reached."}}}]"#,
    )
    .unwrap();
    let (mut child, endpoint) = start(&["--port", "0", "--faults", file.to_str().unwrap()]);
    let ec2 = ec2_at(&endpoint, "us-east-1");
    let first = ec2.create_vpc().cidr_block("10.0.0.0/16").send().await;
    assert_eq!(first.unwrap_err().code(), Some("VpcLimitExceeded"));
    ec2.create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    std::fs::write(&file, r#"{"when": "sometimes"}"#).unwrap();
    let stderr = refused(&["--port", "0", "--faults", file.to_str().unwrap()], 2);
    assert!(stderr.contains("not a profile or fault rules"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();

    let stderr = refused(&["--port", "0", "--faults", "stormy"], 2);
    assert!(
        stderr.contains("neither a profile (calm, lag, storm)"),
        "{stderr}"
    );
}

/// `--faults storm` starts the server on a bad day: its rules are listed by the control
/// endpoint, and a new instance is unknown to a describe right after its launch.
#[tokio::test]
async fn binary_plays_the_storm_profile() {
    let (mut child, endpoint) = start(&["--port", "0", "--faults", "storm"]);
    let rules: serde_json::Value =
        serde_json::from_str(&http_get(&endpoint, "/_fakeaws/faults")).unwrap();
    assert!(rules.as_array().is_some_and(|r| r.len() >= 3), "{rules}");
    let ec2 = ec2_at(&endpoint, "us-east-1");
    let images = ec2
        .describe_images()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("architecture")
                .values("x86_64")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let ami = images.images()[0].image_id().unwrap().to_string();
    let run = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Small)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let id = run.instances()[0].instance_id().unwrap().to_string();
    let seen = ec2.describe_instances().instance_ids(&id).send().await;
    assert_eq!(
        seen.unwrap_err().code(),
        Some("InvalidInstanceID.NotFound"),
        "unknown right after its launch"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `--state-file`: whatever the server acknowledged is there after a `kill -9`, at any
/// moment, with creates still in flight; each restart reads the last complete state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_file_survives_kill_9_mid_flight() {
    use std::sync::{Arc, Mutex};

    let file = common::state_file("kill-9");
    let path = file.to_str().unwrap().to_string();
    let args = ["--port", "0", "--no-default-vpc", "--state-file", &path];
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut vpc = None;
    for round in 0..4usize {
        let (mut child, endpoint) = start(&args);
        let ec2 = ec2_at(&endpoint, "us-east-1");
        // Everything acknowledged in the rounds before is there.
        let held: Vec<String> = ec2
            .describe_security_groups()
            .send()
            .await
            .unwrap()
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(str::to_string))
            .collect();
        for id in acknowledged.lock().unwrap().iter() {
            assert!(held.contains(id), "round {round}: {id} was acknowledged");
        }
        let vpc_id = match &vpc {
            Some(id) => id,
            None => vpc.insert(
                ec2.create_vpc()
                    .cidr_block("10.0.0.0/16")
                    .send()
                    .await
                    .unwrap()
                    .vpc()
                    .unwrap()
                    .vpc_id()
                    .unwrap()
                    .to_string(),
            ),
        };
        // Four writers create groups until the server dies under them.
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let ec2 = ec2.clone();
                let vpc_id = vpc_id.clone();
                let acknowledged = acknowledged.clone();
                tokio::spawn(async move {
                    for n in 0.. {
                        let made = ec2
                            .create_security_group()
                            .group_name(format!("r{round}-w{w}-{n}"))
                            .description("kill -9")
                            .vpc_id(&vpc_id)
                            .send()
                            .await;
                        match made {
                            Ok(out) => acknowledged
                                .lock()
                                .unwrap()
                                .push(out.group_id().unwrap().to_string()),
                            Err(_) => return,
                        }
                    }
                })
            })
            .collect();
        let goal = acknowledged.lock().unwrap().len() + 3 + 5 * round;
        while acknowledged.lock().unwrap().len() < goal {
            tokio::task::yield_now().await;
        }
        common::kill_9(&mut child);
        for w in writers {
            w.await.unwrap();
        }
    }
    // A last restart: the file is a complete state, with every acknowledged group.
    let (mut child, endpoint) = start(&args);
    let ec2 = ec2_at(&endpoint, "us-east-1");
    let groups = ec2.describe_security_groups().send().await.unwrap();
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= 3 + 8 + 13 + 18);
    for id in &acknowledged {
        assert!(
            groups
                .security_groups()
                .iter()
                .any(|g| g.group_id() == Some(id)),
            "{id} was acknowledged"
        );
    }
    common::kill_9(&mut child);
    std::fs::remove_file(&file).unwrap();
}

/// `--state-file`: a stop (SIGTERM) saves, the next start reads it; a file that is not a
/// state is refused at start (exit 2, a message naming the file) and left as it was.
#[tokio::test]
async fn state_file_across_a_stop_and_a_corrupt_file() {
    let file = common::state_file("stop");
    let path = file.to_str().unwrap().to_string();
    let args = ["--port", "0", "--state-file", &path];
    let (mut child, endpoint) = start(&args);
    let ec2 = ec2_at(&endpoint, "eu-west-1");
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.7.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc()
        .unwrap()
        .vpc_id()
        .unwrap()
        .to_string();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success(), "a clean stop");

    let (mut child, endpoint) = start(&args);
    let ec2 = ec2_at(&endpoint, "eu-west-1");
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    let ids: Vec<&str> = vpcs.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
    assert_eq!(ids.len(), 2, "the default VPC and ours: {ids:?}");
    assert!(ids.contains(&vpc.as_str()));
    common::kill_9(&mut child);

    let saved = std::fs::read(&file).unwrap();
    let broken = &saved[..saved.len() - 20];
    std::fs::write(&file, broken).unwrap();
    let stderr = refused(&args, 2);
    assert!(stderr.contains("is not a fakeaws state"), "{stderr}");
    assert!(stderr.contains(&path), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), broken, "left as it was");
    std::fs::remove_file(&file).unwrap();
}

/// Quotas start at AWS's defaults (5 VPCs a region, the default one included) and a run
/// raises them by flag, as Service Quotas would; a quota that does not exist is refused.
#[tokio::test]
async fn quotas_are_raised_by_flag() {
    let (mut child, endpoint) = start(&["--quota", "vpcs=8", "--quota", "elastic-ips=9"]);
    let ec2 = ec2_at(&endpoint, "us-east-1");
    for i in 0..7 {
        ec2.create_vpc()
            .cidr_block(format!("10.{i}.0.0/16"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("VPC {i}: {e:?}"));
    }
    let over = ec2.create_vpc().cidr_block("10.99.0.0/16").send().await;
    assert_eq!(
        over.unwrap_err().as_service_error().and_then(|e| e.code()),
        Some("VpcLimitExceeded")
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let stderr = refused(&["--port", "0", "--quota", "vpc=8"], 2);
    assert!(stderr.contains("no quota named \"vpc\""), "{stderr}");
    assert!(stderr.contains("subnets-per-vpc"), "{stderr}");
}

/// `--threads N`: N threads serve, each the connections it accepted, all of them one account;
/// no thread at all is refused.
#[tokio::test]
async fn every_serving_thread_serves_the_same_account() {
    let (mut child, endpoint) = start(&["--port", "0", "--threads", "3", "--quota", "vpcs=40"]);
    // Clients of their own, each with connections of its own, which the kernel spreads over
    // the threads' sockets; all at once.
    let made = futures_util::future::join_all((0..24).map(|i| {
        let ec2 = ec2_at(&endpoint, "us-east-1");
        async move {
            let vpc = ec2
                .create_vpc()
                .cidr_block(format!("10.{i}.0.0/16"))
                .send()
                .await
                .unwrap_or_else(|e| panic!("VPC {i}: {e:?}"));
            vpc.vpc().unwrap().vpc_id().unwrap().to_string()
        }
    }))
    .await;
    let described = ec2_at(&endpoint, "us-east-1")
        .describe_vpcs()
        .send()
        .await
        .unwrap();
    let listed: std::collections::BTreeSet<_> =
        described.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
    assert_eq!(listed.len(), 25, "the default VPC and the 24 made");
    for id in &made {
        assert!(listed.contains(id.as_str()), "{id} made but not listed");
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let stderr = refused(&["--port", "0", "--threads", "0"], 2);
    assert!(stderr.contains("--threads"), "{stderr}");
}

/// A port another socket holds is refused with a message, not served on beside it.
#[test]
fn a_port_in_use_is_refused() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let stderr = refused(&["--port", &port], 1);
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
}
