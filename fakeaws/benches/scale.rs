//! One region at scale: 10,000 VPCs, each with a subnet and ten instances (100,000 instances),
//! quotas raised as a load test raises them; and the same at a tenth of the size. For each
//! size, in a process of its own (so that one size's freed memory does not hide the other's):
//!
//! - the resident memory the region takes, per resource it holds (a VPC, a subnet or an
//!   instance), which stays about the same from one size to the other when memory grows
//!   linearly;
//! - the median time of the filtered describes a provisioner makes (instances by tag and by
//!   VPC, VPCs by tag, subnets by VPC), served from indexes: under 1 ms, and about the same at
//!   both sizes;
//! - the median time of a request that reads nothing of the region's resources
//!   (DescribeAvailabilityZones): the per-request bookkeeping (clock tick, due transitions,
//!   call log), which must not grow with the region.
//!
//! Requests go through `Fake::handle` (the whole service but the socket). Prints `figure`
//! lines (`cargo xtask bench` collects them). Under `cargo test --benches` (no `--bench`
//! argument) it runs at a tiny size, as a smoke check.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use fakeaws::{Config, Fake, Limits};

const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/ec2/aws4_request, \
                    SignedHeaders=host, Signature=0";
const CHILD: &str = "FAKEAWS_SCALE_VPCS";
const PER_VPC: usize = 10;

fn call(fake: &Fake, body: &str) -> String {
    let a = fake.handle(Some(AUTH), b"", body.as_bytes());
    assert_eq!(a.status, 200, "{body}: {}", a.body);
    a.body
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    let start = text.find(open).unwrap() + open.len();
    let end = text[start..].find(close).unwrap() + start;
    &text[start..end]
}

/// Resident memory, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// The median of `runs` timings of `body`, in microseconds.
fn median_us(fake: &Fake, body: &str, runs: usize, expect: (&str, usize)) -> f64 {
    assert_eq!(
        call(fake, body).matches(expect.0).count(),
        expect.1,
        "{body}"
    );
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let a = fake.handle(Some(AUTH), b"", body.as_bytes());
            let us = start.elapsed().as_secs_f64() * 1e6;
            assert_eq!(a.status, 200);
            us
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// Builds a region of `vpcs` VPCs and measures it; prints its figures.
fn measure(vpcs: usize, runs: usize) {
    let before = rss();
    let fake = Fake::new(Config {
        default_vpc: false,
        limits: Limits {
            vpcs,
            instances: vpcs * PER_VPC,
            ..Limits::default()
        },
        // Every request runs its describe: the figures are the describes' own cost, not a
        // repeated request's kept answer.
        keep_answers: false,
        ..Config::default()
    });
    let images = call(&fake, "Action=DescribeImages&Version=2016-11-15");
    let image = between(&images, "<imageId>", "</imageId>").to_string();
    let started = Instant::now();
    let mut probe = String::new();
    for i in 0..vpcs {
        let vpc = call(
            &fake,
            &format!(
                "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.{}.0.0/16\
                 &TagSpecification.1.ResourceType=vpc\
                 &TagSpecification.1.Tag.1.Key=cluster&TagSpecification.1.Tag.1.Value=c-{i}",
                i % 256
            ),
        );
        let vpc_id = between(&vpc, "<vpcId>", "</vpcId>").to_string();
        let subnet = call(
            &fake,
            &format!(
                "Action=CreateSubnet&Version=2016-11-15&VpcId={vpc_id}\
                 &CidrBlock=10.{}.0.0/24&AvailabilityZone=us-east-1a\
                 &TagSpecification.1.ResourceType=subnet\
                 &TagSpecification.1.Tag.1.Key=cluster&TagSpecification.1.Tag.1.Value=c-{i}",
                i % 256
            ),
        );
        let subnet_id = between(&subnet, "<subnetId>", "</subnetId>");
        call(
            &fake,
            &format!(
                "Action=RunInstances&Version=2016-11-15&ImageId={image}&InstanceType=t3.micro\
                 &SubnetId={subnet_id}&MinCount={PER_VPC}&MaxCount={PER_VPC}\
                 &TagSpecification.1.ResourceType=instance\
                 &TagSpecification.1.Tag.1.Key=cluster&TagSpecification.1.Tag.1.Value=c-{i}"
            ),
        );
        if i == vpcs / 2 {
            probe = vpc_id;
        }
    }
    let build = started.elapsed();
    let resources = vpcs * (2 + PER_VPC);
    let per = (rss().saturating_sub(before)) as f64 / resources as f64;
    let instances = vpcs * PER_VPC;
    let size = format!("{instances}_instances_{vpcs}_vpcs");
    println!(
        "figure\tscale_build_{size}\t{:.2}\ts ({} requests)\t-",
        build.as_secs_f64(),
        3 * vpcs
    );
    println!("figure\tscale_rss_per_resource_{size}\t{per:.0}\tbytes\tlinear");
    let cluster = format!("c-{}", vpcs / 2);
    let describes = [
        (
            "describe_instances_by_tag",
            format!(
                "Action=DescribeInstances&Version=2016-11-15\
                 &Filter.1.Name=tag:cluster&Filter.1.Value.1={cluster}"
            ),
            ("<instanceId>", PER_VPC),
        ),
        (
            "describe_instances_by_vpc",
            format!(
                "Action=DescribeInstances&Version=2016-11-15\
                 &Filter.1.Name=vpc-id&Filter.1.Value.1={probe}"
            ),
            ("<instanceId>", PER_VPC),
        ),
        (
            "describe_vpcs_by_tag",
            format!(
                "Action=DescribeVpcs&Version=2016-11-15\
                 &Filter.1.Name=tag:cluster&Filter.1.Value.1={cluster}"
            ),
            ("<vpcId>", 1),
        ),
        (
            "describe_subnets_by_vpc",
            format!(
                "Action=DescribeSubnets&Version=2016-11-15\
                 &Filter.1.Name=vpc-id&Filter.1.Value.1={probe}"
            ),
            ("<subnetId>", 1),
        ),
    ];
    for (name, body, expect) in &describes {
        let us = median_us(&fake, body, runs, *expect);
        println!("figure\tscale_{name}_{size}\t{us:.1}\tµs median\t< 1000");
    }
    let zones = "Action=DescribeAvailabilityZones&Version=2016-11-15";
    let n = call(&fake, zones).matches("<zoneName>").count();
    assert!(n > 0);
    let us = median_us(&fake, zones, runs, ("<zoneName>", n));
    println!("figure\tscale_bookkeeping_{size}\t{us:.1}\tµs median\tflat");
}

fn main() {
    if let Ok(vpcs) = std::env::var(CHILD) {
        let runs = if std::env::args().any(|a| a == "--bench") {
            2000
        } else {
            20
        };
        measure(vpcs.parse().unwrap(), runs);
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if bench { &[1_000, 10_000] } else { &[20] };
    for vpcs in sizes {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args(std::env::args().skip(1))
            .env(CHILD, vpcs.to_string());
        let status = child.status().unwrap();
        assert!(status.success(), "the run at {vpcs} VPCs failed: {status}");
    }
}
