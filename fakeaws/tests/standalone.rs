//! The standalone binary: starts on a free port, prints its endpoint, serves the SDK, and
//! stops cleanly on Ctrl-C (SIGINT).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};

#[tokio::test]
async fn binary_serves_and_stops_on_ctrl_c() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fakeaws"))
        .args(["--port", "0", "--no-default-vpc"])
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
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");

    let conf = aws_sdk_ec2::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("eu-central-1"))
        .credentials_provider(Credentials::new("any", "thing", None, None, "test"))
        .endpoint_url(&endpoint)
        .build();
    let ec2 = aws_sdk_ec2::Client::from_conf(conf);
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
