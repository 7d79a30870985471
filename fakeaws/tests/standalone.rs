//! The standalone binary: starts on a free port, prints its endpoint, serves the SDK, and
//! stops cleanly on Ctrl-C (SIGINT).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_ec2::error::ProvideErrorMetadata;

/// Starts the binary with `args`; the child and the endpoint it prints.
/// An EC2 client for `region` at `endpoint`, with any credentials.
fn ec2_at(endpoint: &str, region: &str) -> aws_sdk_ec2::Client {
    let conf = aws_sdk_ec2::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .credentials_provider(Credentials::new("any", "thing", None, None, "test"))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_ec2::Client::from_conf(conf)
}

/// The body of a GET of `path` at `endpoint` (`http://host:port`).
fn http_get(endpoint: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = endpoint.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split_once("\r\n\r\n").unwrap().1.to_string()
}

fn start(args: &[&str]) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fakeaws"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let endpoint = line
        .trim()
        .strip_prefix("fakeaws listening on ")
        .expect(&line)
        .to_string();
    (child, endpoint)
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
    let out = Command::new(env!("CARGO_BIN_EXE_fakeaws"))
        .args(["--port", "0", "--faults", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a profile or fault rules"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_fakeaws"))
        .args(["--port", "0", "--faults", "stormy"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("neither a profile (calm, storm)"),
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
