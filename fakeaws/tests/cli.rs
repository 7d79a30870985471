//! Interop with a client no one here wrote: the aws CLI (from PyPI, in a venv of its own)
//! creates a VPC, a subnet and an internet gateway in a running fake, and reads them back
//! as JSON.
//!
//! The CLI is taken from `FAKEAWS_AWS_CLI` when set; otherwise the test installs `awscli`
//! into `$CARGO_TARGET_TMPDIR/awscli-venv` on first use (`python3 -m venv` + `pip`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn aws_cli() -> PathBuf {
    if let Some(p) = std::env::var_os("FAKEAWS_AWS_CLI") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("awscli-venv");
    let aws = venv.join("bin").join("aws");
    if aws.exists() {
        return aws;
    }
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .expect("python3 is needed to install the aws CLI for this test");
    assert!(status.success(), "python3 -m venv failed");
    let status = Command::new(venv.join("bin").join("pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "awscli",
        ])
        .status()
        .expect("pip runs");
    assert!(status.success(), "pip install awscli failed");
    aws
}

struct Cli {
    aws: PathBuf,
    endpoint: String,
}

impl Cli {
    fn run(&self, args: &[&str]) -> Result<Value, String> {
        let out = Command::new(&self.aws)
            .args(["--endpoint-url", &self.endpoint, "--output", "json"])
            .args(args)
            .env("AWS_ACCESS_KEY_ID", "AKIDCLITEST")
            .env("AWS_SECRET_ACCESS_KEY", "not-a-secret")
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env("AWS_CONFIG_FILE", "/nonexistent")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_MAX_ATTEMPTS", "1")
            .output()
            .expect("the aws CLI runs");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        if stdout.trim().is_empty() {
            return Ok(Value::Null);
        }
        Ok(serde_json::from_str(&stdout).expect("the CLI prints JSON"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_builds_and_reads_a_network() {
    let fake = fakeaws::spawn().await.unwrap();
    let cli = Cli {
        aws: tokio::task::spawn_blocking(aws_cli).await.unwrap(),
        endpoint: fake.endpoint().to_string(),
    };
    tokio::task::spawn_blocking(move || {
        let vpc = cli
            .run(&[
                "ec2",
                "create-vpc",
                "--cidr-block",
                "10.20.0.0/16",
                "--tag-specifications",
                "ResourceType=vpc,Tags=[{Key=Name,Value=from-cli}]",
            ])
            .unwrap();
        let vpc_id = vpc["Vpc"]["VpcId"].as_str().unwrap().to_string();
        assert_eq!(vpc["Vpc"]["CidrBlock"], "10.20.0.0/16");

        let subnet = cli
            .run(&[
                "ec2",
                "create-subnet",
                "--vpc-id",
                &vpc_id,
                "--cidr-block",
                "10.20.1.0/24",
                "--availability-zone",
                "us-east-1b",
            ])
            .unwrap();
        let subnet_id = subnet["Subnet"]["SubnetId"].as_str().unwrap().to_string();

        let igw = cli.run(&["ec2", "create-internet-gateway"]).unwrap();
        let igw_id = igw["InternetGateway"]["InternetGatewayId"]
            .as_str()
            .unwrap()
            .to_string();
        cli.run(&[
            "ec2",
            "attach-internet-gateway",
            "--internet-gateway-id",
            &igw_id,
            "--vpc-id",
            &vpc_id,
        ])
        .unwrap();

        let vpcs = cli
            .run(&["ec2", "describe-vpcs", "--vpc-ids", &vpc_id])
            .unwrap();
        assert_eq!(vpcs["Vpcs"][0]["State"], "available");
        assert_eq!(vpcs["Vpcs"][0]["Tags"][0]["Value"], "from-cli");

        let subnets = cli
            .run(&[
                "ec2",
                "describe-subnets",
                "--filters",
                &format!("Name=vpc-id,Values={vpc_id}"),
            ])
            .unwrap();
        assert_eq!(subnets["Subnets"].as_array().unwrap().len(), 1);
        assert_eq!(subnets["Subnets"][0]["SubnetId"], subnet_id.as_str());
        assert_eq!(subnets["Subnets"][0]["AvailabilityZone"], "us-east-1b");
        assert_eq!(subnets["Subnets"][0]["AvailableIpAddressCount"], 251);

        let gws = cli
            .run(&[
                "ec2",
                "describe-internet-gateways",
                "--filters",
                &format!("Name=attachment.vpc-id,Values={vpc_id}"),
            ])
            .unwrap();
        assert_eq!(
            gws["InternetGateways"][0]["InternetGatewayId"],
            igw_id.as_str()
        );

        // An AWS error reaches the CLI as AWS's code.
        let err = cli
            .run(&["ec2", "delete-vpc", "--vpc-id", &vpc_id])
            .unwrap_err();
        assert!(err.contains("DependencyViolation"), "{err}");

        // The CLI's own paginator walks every page.
        let zones = cli.run(&["ec2", "describe-availability-zones"]).unwrap();
        assert_eq!(zones["AvailabilityZones"].as_array().unwrap().len(), 3);
        let lbs = cli.run(&["elb", "describe-load-balancers"]).unwrap();
        assert_eq!(lbs["LoadBalancerDescriptions"].as_array().unwrap().len(), 0);
    })
    .await
    .unwrap();
}
