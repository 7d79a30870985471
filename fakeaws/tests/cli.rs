//! Interop with a client no one here wrote: the aws CLI (from PyPI, in a venv of its own)
//! creates a VPC, a subnet and an internet gateway in a running fake, and reads them back
//! as JSON.
//!
//! The CLI is taken from `FAKEAWS_AWS_CLI` when set; otherwise the test installs `awscli`
//! into `$CARGO_TARGET_TMPDIR/awscli-venv` on first use (`python3 -m venv` + `pip`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn aws_cli() -> PathBuf {
    // Tests of this binary run in parallel: one installs, the others wait for it.
    static CLI: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CLI.get_or_init(install_aws_cli).clone()
}

fn install_aws_cli() -> PathBuf {
    if let Some(p) = std::env::var_os("FAKEAWS_AWS_CLI") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("awscli-venv");
    let aws = venv.join("bin").join("aws");
    if aws.exists() {
        return aws;
    }
    let status = Command::new("python3")
        .args(["-m", "venv", "--clear"])
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
    secret: &'static str,
}

impl Cli {
    /// The CLI (installed on first use) for `fake`, with any secret (the fake verifies none).
    async fn for_fake(fake: &fakeaws::FakeAws) -> Cli {
        Cli {
            aws: tokio::task::spawn_blocking(aws_cli).await.unwrap(),
            endpoint: fake.endpoint().to_string(),
            secret: "not-a-secret",
        }
    }

    fn run(&self, args: &[&str]) -> Result<Value, String> {
        self.attempts(args, "1")
    }

    /// Runs the CLI with `AWS_MAX_ATTEMPTS` set to `attempts`.
    fn attempts(&self, args: &[&str], attempts: &str) -> Result<Value, String> {
        let out = Command::new(&self.aws)
            .args(["--endpoint-url", &self.endpoint, "--output", "json"])
            .args(args)
            .env("AWS_ACCESS_KEY_ID", "AKIDCLITEST")
            .env("AWS_SECRET_ACCESS_KEY", self.secret)
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env("AWS_CONFIG_FILE", "/nonexistent")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_MAX_ATTEMPTS", attempts)
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
    let cli = Cli::for_fake(&fake).await;
    tokio::task::spawn_blocking(move || {
        // The first call many a script makes.
        let regions = cli
            .run(&["ec2", "describe-regions", "--region-names", "us-east-1"])
            .unwrap();
        assert_eq!(
            regions["Regions"][0]["Endpoint"],
            "ec2.us-east-1.amazonaws.com"
        );
        let platforms = cli
            .run(&[
                "ec2",
                "describe-account-attributes",
                "--attribute-names",
                "supported-platforms",
            ])
            .unwrap();
        assert_eq!(
            platforms["AccountAttributes"][0]["AttributeValues"][0]["AttributeValue"],
            "VPC"
        );

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
        // As on AWS, the CLI shows an attached gateway's attachment as `available`.
        assert_eq!(
            gws["InternetGateways"][0]["Attachments"][0]["State"],
            "available"
        );

        // An AWS error reaches the CLI as AWS's code.
        let err = cli
            .run(&["ec2", "delete-vpc", "--vpc-id", &vpc_id])
            .unwrap_err();
        assert!(err.contains("DependencyViolation"), "{err}");

        // The CLI's own paginator walks every page.
        let zones = cli.run(&["ec2", "describe-availability-zones"]).unwrap();
        assert_eq!(zones["AvailabilityZones"].as_array().unwrap().len(), 6);
        let lbs = cli.run(&["elb", "describe-load-balancers"]).unwrap();
        assert_eq!(lbs["LoadBalancerDescriptions"].as_array().unwrap().len(), 0);
    })
    .await
    .unwrap();
}

fn id(v: &Value, path: &[&str]) -> String {
    let mut cur = v;
    for p in path {
        cur = match p.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[*p],
        };
    }
    cur.as_str()
        .unwrap_or_else(|| panic!("{path:?} in {v}"))
        .to_string()
}

/// The whole-cluster sequence of the SDK test, with the aws CLI: up with three zones, then
/// down in reverse, ending with only the default VPC. The CLI's own waiters poll the fake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_whole_cluster_up_and_down() {
    let fake = fakeaws::spawn().await.unwrap();
    let cli = Cli::for_fake(&fake).await;
    tokio::task::spawn_blocking(move || {
        let c = |args: &[&str]| cli.run(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let owned = "ResourceType=RESOURCE,Tags=[{Key=kubernetes.io/cluster/c1,Value=owned}]";
        let tags = |rt: &str| owned.replace("RESOURCE", rt);
        let vpc = id(
            &c(&[
                "ec2",
                "create-vpc",
                "--cidr-block",
                "10.0.0.0/16",
                "--tag-specifications",
                &tags("vpc"),
            ]),
            &["Vpc", "VpcId"],
        );
        c(&[
            "ec2",
            "modify-vpc-attribute",
            "--vpc-id",
            &vpc,
            "--enable-dns-support",
            "{\"Value\":true}",
        ]);
        c(&[
            "ec2",
            "modify-vpc-attribute",
            "--vpc-id",
            &vpc,
            "--enable-dns-hostnames",
            "{\"Value\":true}",
        ]);
        let igw = id(
            &c(&[
                "ec2",
                "create-internet-gateway",
                "--tag-specifications",
                &tags("internet-gateway"),
            ]),
            &["InternetGateway", "InternetGatewayId"],
        );
        c(&[
            "ec2",
            "attach-internet-gateway",
            "--internet-gateway-id",
            &igw,
            "--vpc-id",
            &vpc,
        ]);
        let mut public = Vec::new();
        let mut private = Vec::new();
        for (i, zone) in ["us-east-1a", "us-east-1b", "us-east-1c"]
            .iter()
            .enumerate()
        {
            let p = id(
                &c(&[
                    "ec2",
                    "create-subnet",
                    "--vpc-id",
                    &vpc,
                    "--availability-zone",
                    zone,
                    "--cidr-block",
                    &format!("10.0.{}.0/24", i),
                    "--tag-specifications",
                    &tags("subnet"),
                ]),
                &["Subnet", "SubnetId"],
            );
            c(&[
                "ec2",
                "modify-subnet-attribute",
                "--subnet-id",
                &p,
                "--map-public-ip-on-launch",
            ]);
            let q = id(
                &c(&[
                    "ec2",
                    "create-subnet",
                    "--vpc-id",
                    &vpc,
                    "--availability-zone",
                    zone,
                    "--cidr-block",
                    &format!("10.0.{}.0/24", 100 + i),
                    "--tag-specifications",
                    &tags("subnet"),
                ]),
                &["Subnet", "SubnetId"],
            );
            public.push(p);
            private.push(q);
        }
        let mut eips = Vec::new();
        let mut nats = Vec::new();
        for (i, p) in public.iter().enumerate() {
            let alloc = id(
                &c(&["ec2", "allocate-address", "--domain", "vpc"]),
                &["AllocationId"],
            );
            let nat = id(
                &c(&[
                    "ec2",
                    "create-nat-gateway",
                    "--subnet-id",
                    p,
                    "--allocation-id",
                    &alloc,
                    "--client-token",
                    &format!("c1-nat-{i}"),
                    "--tag-specifications",
                    &tags("natgateway"),
                ]),
                &["NatGateway", "NatGatewayId"],
            );
            eips.push(alloc);
            nats.push(nat);
        }
        let mut args = vec!["ec2", "wait", "nat-gateway-available", "--nat-gateway-ids"];
        args.extend(nats.iter().map(String::as_str));
        c(&args);
        let public_rt = id(
            &c(&[
                "ec2",
                "create-route-table",
                "--vpc-id",
                &vpc,
                "--tag-specifications",
                &tags("route-table"),
            ]),
            &["RouteTable", "RouteTableId"],
        );
        c(&[
            "ec2",
            "create-route",
            "--route-table-id",
            &public_rt,
            "--destination-cidr-block",
            "0.0.0.0/0",
            "--gateway-id",
            &igw,
        ]);
        let mut associations = Vec::new();
        for p in &public {
            associations.push(id(
                &c(&[
                    "ec2",
                    "associate-route-table",
                    "--route-table-id",
                    &public_rt,
                    "--subnet-id",
                    p,
                ]),
                &["AssociationId"],
            ));
        }
        let mut tables = vec![public_rt];
        for (q, nat) in private.iter().zip(&nats) {
            let rt = id(
                &c(&[
                    "ec2",
                    "create-route-table",
                    "--vpc-id",
                    &vpc,
                    "--tag-specifications",
                    &tags("route-table"),
                ]),
                &["RouteTable", "RouteTableId"],
            );
            c(&[
                "ec2",
                "create-route",
                "--route-table-id",
                &rt,
                "--destination-cidr-block",
                "0.0.0.0/0",
                "--nat-gateway-id",
                nat,
            ]);
            associations.push(id(
                &c(&[
                    "ec2",
                    "associate-route-table",
                    "--route-table-id",
                    &rt,
                    "--subnet-id",
                    q,
                ]),
                &["AssociationId"],
            ));
            tables.push(rt);
        }
        let mut groups = Vec::new();
        for role in ["bastion", "controlplane", "node", "apiserver-lb"] {
            groups.push(id(
                &c(&[
                    "ec2",
                    "create-security-group",
                    "--vpc-id",
                    &vpc,
                    "--group-name",
                    &format!("c1-{role}"),
                    "--description",
                    role,
                    "--tag-specifications",
                    &tags("security-group"),
                ]),
                &["GroupId"],
            ));
        }
        c(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            &groups[0],
            "--protocol",
            "tcp",
            "--port",
            "22",
            "--cidr",
            "203.0.113.0/24",
        ]);
        c(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            &groups[1],
            "--protocol",
            "tcp",
            "--port",
            "6443",
            "--source-group",
            &groups[3],
        ]);
        c(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            &groups[1],
            "--ip-permissions",
            &format!("IpProtocol=4,UserIdGroupPairs=[{{GroupId={}}}]", groups[2]),
        ]);
        c(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            &groups[3],
            "--protocol",
            "tcp",
            "--port",
            "6443",
            "--cidr",
            "0.0.0.0/0",
        ]);
        let images = c(&[
            "ec2",
            "describe-images",
            "--owners",
            "258751437250",
            "--filters",
            "Name=name,Values=capa-ami-ubuntu-24.04-?1.31.0-*",
            "Name=architecture,Values=x86_64",
        ]);
        let ami = id(&images, &["Images", "0", "ImageId"]);
        let bastion = id(
            &c(&[
                "ec2",
                "run-instances",
                "--image-id",
                &ami,
                "--instance-type",
                "t3.micro",
                "--subnet-id",
                &public[0],
                "--security-group-ids",
                &groups[0],
                "--count",
                "1",
                "--client-token",
                "c1-bastion",
                "--tag-specifications",
                &tags("instance"),
            ]),
            &["Instances", "0", "InstanceId"],
        );
        c(&[
            "ec2",
            "wait",
            "instance-running",
            "--instance-ids",
            &bastion,
        ]);
        let mut args = vec![
            "elb",
            "create-load-balancer",
            "--load-balancer-name",
            "c1-apiserver",
            "--listeners",
            "Protocol=TCP,LoadBalancerPort=6443,InstanceProtocol=TCP,InstancePort=6443",
            "--security-groups",
            &groups[3],
            "--subnets",
        ];
        args.extend(public.iter().map(String::as_str));
        let lb = c(&args);
        assert!(lb["DNSName"].as_str().unwrap().starts_with("c1-apiserver-"));
        c(&[
            "elb",
            "configure-health-check",
            "--load-balancer-name",
            "c1-apiserver",
            "--health-check",
            "Target=TCP:6443,Interval=10,Timeout=5,UnhealthyThreshold=3,HealthyThreshold=5",
        ]);
        c(&[
            "elb",
            "modify-load-balancer-attributes",
            "--load-balancer-name",
            "c1-apiserver",
            "--load-balancer-attributes",
            "{\"CrossZoneLoadBalancing\":{\"Enabled\":true}}",
        ]);
        c(&[
            "elb",
            "register-instances-with-load-balancer",
            "--load-balancer-name",
            "c1-apiserver",
            "--instances",
            &bastion,
        ]);
        c(&[
            "elb",
            "wait",
            "instance-in-service",
            "--load-balancer-name",
            "c1-apiserver",
        ]);

        let held = c(&[
            "ec2",
            "describe-tags",
            "--filters",
            "Name=key,Values=kubernetes.io/cluster/c1",
        ]);
        // vpc, igw, 6 subnets, 3 NAT gateways, 4 route tables, 4 groups, the bastion.
        assert_eq!(
            held["Tags"].as_array().unwrap().len(),
            1 + 1 + 6 + 3 + 4 + 4 + 1
        );
        let err = cli
            .run(&[
                "ec2",
                "detach-internet-gateway",
                "--internet-gateway-id",
                &igw,
                "--vpc-id",
                &vpc,
            ])
            .unwrap_err();
        assert!(err.contains("DependencyViolation"), "{err}");

        // Down, in reverse.
        c(&[
            "elb",
            "delete-load-balancer",
            "--load-balancer-name",
            "c1-apiserver",
        ]);
        c(&["ec2", "terminate-instances", "--instance-ids", &bastion]);
        c(&[
            "ec2",
            "wait",
            "instance-terminated",
            "--instance-ids",
            &bastion,
        ]);
        c(&[
            "ec2",
            "revoke-security-group-ingress",
            "--group-id",
            &groups[1],
            "--protocol",
            "tcp",
            "--port",
            "6443",
            "--source-group",
            &groups[3],
        ]);
        c(&[
            "ec2",
            "revoke-security-group-ingress",
            "--group-id",
            &groups[1],
            "--ip-permissions",
            &format!("IpProtocol=4,UserIdGroupPairs=[{{GroupId={}}}]", groups[2]),
        ]);
        for g in &groups {
            c(&["ec2", "delete-security-group", "--group-id", g]);
        }
        for a in &associations {
            c(&["ec2", "disassociate-route-table", "--association-id", a]);
        }
        for t in &tables {
            c(&["ec2", "delete-route-table", "--route-table-id", t]);
        }
        for n in &nats {
            c(&["ec2", "delete-nat-gateway", "--nat-gateway-id", n]);
        }
        let mut args = vec!["ec2", "wait", "nat-gateway-deleted", "--nat-gateway-ids"];
        args.extend(nats.iter().map(String::as_str));
        c(&args);
        for a in &eips {
            c(&["ec2", "release-address", "--allocation-id", a]);
        }
        c(&[
            "ec2",
            "detach-internet-gateway",
            "--internet-gateway-id",
            &igw,
            "--vpc-id",
            &vpc,
        ]);
        c(&[
            "ec2",
            "delete-internet-gateway",
            "--internet-gateway-id",
            &igw,
        ]);
        for s in public.iter().chain(&private) {
            c(&["ec2", "delete-subnet", "--subnet-id", s]);
        }
        c(&["ec2", "delete-vpc", "--vpc-id", &vpc]);

        let vpcs = c(&["ec2", "describe-vpcs"]);
        let vpcs = vpcs["Vpcs"].as_array().unwrap();
        assert_eq!(vpcs.len(), 1);
        assert_eq!(vpcs[0]["IsDefault"], true);
        // Only the terminated bastion and the deleted NAT gateways still show (AWS keeps them
        // visible for about an hour), in their final states.
        let held = c(&[
            "ec2",
            "describe-tags",
            "--filters",
            "Name=key,Values=kubernetes.io/cluster/c1",
        ]);
        let mut lingering: Vec<&str> = held["Tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["ResourceId"].as_str().unwrap())
            .collect();
        lingering.sort();
        let mut expected: Vec<&str> = nats.iter().map(String::as_str).collect();
        expected.push(&bastion);
        expected.sort();
        assert_eq!(lingering, expected);
        let gone = c(&["ec2", "describe-instances", "--instance-ids", &bastion]);
        assert_eq!(
            gone["Reservations"][0]["Instances"][0]["State"]["Name"],
            "terminated"
        );
        let addresses = c(&["ec2", "describe-addresses"]);
        assert!(addresses["Addresses"].as_array().unwrap().is_empty());
        let lbs = c(&["elb", "describe-load-balancers"]);
        assert!(
            lbs["LoadBalancerDescriptions"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    })
    .await
    .unwrap();
}

/// The CLI's own signatures (botocore's signer, other signed headers than the Rust SDK's)
/// pass a fake that verifies them, and a wrong secret is refused with AWS's codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_signatures_are_verified() {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        credentials: [("AKIDCLITEST".to_string(), "not-a-secret".to_string())].into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let aws = tokio::task::spawn_blocking(aws_cli).await.unwrap();
    let endpoint = fake.endpoint().to_string();
    tokio::task::spawn_blocking(move || {
        let right = Cli {
            aws: aws.clone(),
            endpoint: endpoint.clone(),
            secret: "not-a-secret",
        };
        right
            .run(&["ec2", "create-vpc", "--cidr-block", "10.9.0.0/16"])
            .unwrap();
        right.run(&["elb", "describe-load-balancers"]).unwrap();
        let wrong = Cli {
            aws,
            endpoint,
            secret: "wrong-secret",
        };
        let err = wrong.run(&["ec2", "describe-vpcs"]).unwrap_err();
        assert!(err.contains("SignatureDoesNotMatch"), "{err}");
        let err = wrong.run(&["elb", "describe-load-balancers"]).unwrap_err();
        assert!(err.contains("SignatureDoesNotMatch"), "{err}");
    })
    .await
    .unwrap();
}

/// The CLI (botocore's retry handler) retries a throttled call, as it does against AWS, and a
/// CLI that does not retry sees AWS's code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_retries_a_throttled_call() {
    use fakeaws::sim::faults::{Effect, Match, Rule, Trigger};

    /// The next DescribeVpcs is throttled.
    fn throttle_next_describe_vpcs() -> Rule {
        Rule {
            on: Match {
                action: Some("DescribeVpcs".into()),
                ..Match::default()
            },
            when: Trigger::Nth { n: 1, times: 1 },
            effect: Effect::Error {
                code: "RequestLimitExceeded".into(),
                status: 503,
                message: "Request limit exceeded.".into(),
            },
        }
    }

    let fake = fakeaws::spawn().await.unwrap();
    fake.fake()
        .with_faults(|f| f.add(throttle_next_describe_vpcs()));
    let cli = Cli::for_fake(&fake).await;
    let fake2 = fake.fake().clone();
    tokio::task::spawn_blocking(move || {
        let vpcs = cli.attempts(&["ec2", "describe-vpcs"], "3").unwrap();
        assert_eq!(vpcs["Vpcs"].as_array().unwrap().len(), 1);
        let errors: Vec<Option<String>> = fake2
            .calls()
            .into_iter()
            .filter(|c| c.action == "DescribeVpcs")
            .map(|c| c.error)
            .collect();
        assert_eq!(errors, [Some("RequestLimitExceeded".to_string()), None]);
        fake2.with_faults(|f| f.add(throttle_next_describe_vpcs()));
        let err = cli.attempts(&["ec2", "describe-vpcs"], "1").unwrap_err();
        assert!(err.contains("RequestLimitExceeded"), "{err}");
    })
    .await
    .unwrap();
}

/// The standalone server with `--state-file`, driven by the CLI: what the CLI made is there
/// after a `kill -9` and a restart, and a launch replayed with its ClientToken answers the
/// same instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_state_survives_kill_9() {
    let aws = tokio::task::spawn_blocking(aws_cli).await.unwrap();
    tokio::task::spawn_blocking(move || {
        let file = common::state_file("cli");
        let path = file.to_str().unwrap().to_string();
        let args = ["--port", "0", "--state-file", path.as_str()];
        let (mut child, endpoint) = common::start(&args);
        let cli = Cli {
            aws: aws.clone(),
            endpoint,
            secret: "not-a-secret",
        };
        let vpc = cli
            .run(&[
                "ec2",
                "create-vpc",
                "--cidr-block",
                "10.60.0.0/16",
                "--tag-specifications",
                "ResourceType=vpc,Tags=[{Key=Name,Value=kept}]",
            ])
            .unwrap();
        let vpc_id = vpc["Vpc"]["VpcId"].as_str().unwrap().to_string();
        let image = cli
            .run(&[
                "ec2",
                "describe-images",
                "--filters",
                "Name=architecture,Values=x86_64",
            ])
            .unwrap()["Images"][0]["ImageId"]
            .as_str()
            .unwrap()
            .to_string();
        let launch = [
            "ec2",
            "run-instances",
            "--image-id",
            &image,
            "--instance-type",
            "t3.small",
            "--client-token",
            "cli-kept",
        ];
        let first = cli.run(&launch).unwrap()["Instances"][0]["InstanceId"].clone();
        common::kill_9(&mut child);

        let (mut child, endpoint) = common::start(&args);
        let cli = Cli {
            aws,
            endpoint,
            secret: "not-a-secret",
        };
        let vpcs = cli
            .run(&[
                "ec2",
                "describe-vpcs",
                "--filters",
                "Name=tag:Name,Values=kept",
            ])
            .unwrap();
        assert_eq!(vpcs["Vpcs"][0]["VpcId"], vpc_id.as_str(), "{vpcs}");
        assert_eq!(vpcs["Vpcs"][0]["CidrBlock"], "10.60.0.0/16");
        let again = cli.run(&launch).unwrap()["Instances"][0]["InstanceId"].clone();
        assert_eq!(again, first, "the ClientToken ledger survived");
        let reservations = cli.run(&["ec2", "describe-instances"]).unwrap();
        assert_eq!(reservations["Reservations"].as_array().unwrap().len(), 1);
        common::kill_9(&mut child);
        std::fs::remove_file(&file).unwrap();
    })
    .await
    .unwrap();
}

/// Whether the CLI's JSON object `v` lists `key`, and as an empty list.
fn lists_empty(v: &Value, key: &str) -> bool {
    v.get(key)
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
}

/// Where AWS lists an untagged resource's tags as `[]` (the CLI's documented outputs show
/// `"Tags": []` there), the CLI finds an empty list, so a script reading
/// `["Tags"]` works; where AWS leaves them out, so does the fake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_finds_empty_tag_lists_where_aws_gives_them() {
    let fake = fakeaws::spawn().await.unwrap();
    let cli = Cli::for_fake(&fake).await;
    tokio::task::spawn_blocking(move || {
        let c = |args: &[&str]| cli.run(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let vpc = c(&["ec2", "create-vpc", "--cidr-block", "10.30.0.0/16"]);
        let vpc_id = id(&vpc, &["Vpc", "VpcId"]);
        let in_vpc = format!("Name=vpc-id,Values={vpc_id}");
        let subnet = c(&[
            "ec2",
            "create-subnet",
            "--vpc-id",
            &vpc_id,
            "--cidr-block",
            "10.30.1.0/24",
        ]);
        let subnet_id = id(&subnet, &["Subnet", "SubnetId"]);

        // Left out, as AWS leaves them out.
        let vpcs = c(&["ec2", "describe-vpcs", "--vpc-ids", &vpc_id]);
        assert!(vpcs["Vpcs"][0].get("Tags").is_none(), "{vpcs}");

        // Listed, empty.
        let tables = c(&["ec2", "describe-route-tables", "--filters", &in_vpc]);
        assert!(lists_empty(&tables["RouteTables"][0], "Tags"), "{tables}");
        let table = c(&["ec2", "create-route-table", "--vpc-id", &vpc_id]);
        assert!(lists_empty(&table["RouteTable"], "Tags"), "{table}");
        let acls = c(&["ec2", "describe-network-acls", "--filters", &in_vpc]);
        assert!(lists_empty(&acls["NetworkAcls"][0], "Tags"), "{acls}");
        let eni = c(&["ec2", "create-network-interface", "--subnet-id", &subnet_id]);
        assert!(lists_empty(&eni["NetworkInterface"], "TagSet"), "{eni}");
        let enis = c(&["ec2", "describe-network-interfaces", "--filters", &in_vpc]);
        assert!(
            lists_empty(&enis["NetworkInterfaces"][0], "TagSet"),
            "{enis}"
        );
        let rules = c(&["ec2", "describe-security-group-rules"]);
        assert!(
            lists_empty(&rules["SecurityGroupRules"][0], "Tags"),
            "{rules}"
        );
        c(&["ec2", "create-key-pair", "--key-name", "untagged"]);
        let keys = c(&["ec2", "describe-key-pairs", "--key-names", "untagged"]);
        assert!(lists_empty(&keys["KeyPairs"][0], "Tags"), "{keys}");
        let volume = c(&[
            "ec2",
            "create-volume",
            "--availability-zone",
            "us-east-1a",
            "--size",
            "8",
        ]);
        assert!(lists_empty(&volume, "Tags"), "{volume}");
        let snapshot = c(&[
            "ec2",
            "create-snapshot",
            "--volume-id",
            &id(&volume, &["VolumeId"]),
        ]);
        assert!(lists_empty(&snapshot, "Tags"), "{snapshot}");

        // A launch lists its untagged instance's tags; a describe leaves them out.
        let image = c(&["ec2", "describe-images", "--owners", "amazon"]);
        let image_id = id(&image, &["Images", "0", "ImageId"]);
        let launched = c(&[
            "ec2",
            "run-instances",
            "--image-id",
            &image_id,
            "--instance-type",
            "t3.micro",
            "--subnet-id",
            &subnet_id,
        ]);
        assert!(lists_empty(&launched["Instances"][0], "Tags"), "{launched}");
        let instance_id = id(&launched, &["Instances", "0", "InstanceId"]);
        let described = c(&["ec2", "describe-instances", "--instance-ids", &instance_id]);
        assert!(
            described["Reservations"][0]["Instances"][0]
                .get("Tags")
                .is_none(),
            "{described}"
        );
    })
    .await
    .unwrap();
}

/// The AWS CLI's documented examples of BYOIP IPv6 pools, against a fake holding one range:
/// `describe-ipv6-pools`, `create-vpc --ipv6-pool`, `get-associated-ipv6-pool-cidrs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_takes_vpc_blocks_from_an_ipv6_pool() {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        byoip: vec!["us-east-1=2001:db8:1200::/48".parse().unwrap()],
        ..Default::default()
    })
    .await
    .unwrap();
    let cli = Cli::for_fake(&fake).await;
    tokio::task::spawn_blocking(move || {
        let pools = cli.run(&["ec2", "describe-ipv6-pools"]).unwrap();
        let pool = pools["Ipv6Pools"][0]["PoolId"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(pool.starts_with("ipv6pool-ec2-"), "{pools}");
        assert_eq!(
            pools["Ipv6Pools"][0]["PoolCidrBlocks"][0]["Cidr"],
            "2001:db8:1200::/48"
        );
        let vpc = cli
            .run(&[
                "ec2",
                "create-vpc",
                "--cidr-block",
                "10.0.0.0/16",
                "--ipv6-pool",
                &pool,
                "--ipv6-cidr-block",
                "2001:db8:1200:1a00::/56",
            ])
            .unwrap();
        let id = id(&vpc, &["Vpc", "VpcId"]);
        let block = &vpc["Vpc"]["Ipv6CidrBlockAssociationSet"][0];
        assert_eq!(block["Ipv6CidrBlock"], "2001:db8:1200:1a00::/56");
        assert_eq!(block["Ipv6Pool"], pool.as_str());
        assert_eq!(block["IpSource"], "byoip");
        let held = cli
            .run(&["ec2", "get-associated-ipv6-pool-cidrs", "--pool-id", &pool])
            .unwrap();
        assert_eq!(
            held["Ipv6CidrAssociations"],
            serde_json::json!([{"Ipv6Cidr": "2001:db8:1200:1a00::/56", "AssociatedResource": id}])
        );
        let refused = cli
            .run(&[
                "ec2",
                "create-vpc",
                "--cidr-block",
                "10.1.0.0/16",
                "--ipv6-pool",
                "ipv6pool-ec2-0123456789abcdef0",
            ])
            .unwrap_err();
        assert!(refused.contains("InvalidIpv6PoolID.NotFound"), "{refused}");
    })
    .await
    .unwrap();
}
