//! Filtered Describe calls at a small and a large region: the filters a provisioner uses
//! (`tag:K`, `vpc-id`) are served from indexes, so a call costs in proportion to its matches,
//! not to the region's size. Each benchmark is named `<call>_at_<N>_vpcs`; the two sizes
//! should report about the same median.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use fakeaws::{Config, Fake, Limits};

const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261129/us-east-1/ec2/aws4_request, \
                    SignedHeaders=host, Signature=0";

fn call(fake: &Fake, body: &str) -> String {
    let a = fake.handle(Some(AUTH), b"", body.as_bytes());
    assert_eq!(a.status, 200, "{}", a.body);
    a.body
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    let start = text.find(open).unwrap() + open.len();
    let end = text[start..].find(close).unwrap() + start;
    &text[start..end]
}

/// A region holding `n` clusters: one tagged VPC each, with two subnets and a security group.
/// Returns the fake and the id of the VPC of cluster `n / 2`.
fn region_with(n: usize) -> (Fake, String) {
    let fake = Fake::new(Config {
        default_vpc: false,
        limits: Limits {
            vpcs: n,
            ..Limits::default()
        },
        // Every request runs its describe: the figures are the describes' own cost, not a
        // repeated request's kept answer.
        keep_answers: false,
        ..Config::default()
    });
    let mut probe = String::new();
    for i in 0..n {
        let vpc = call(
            &fake,
            &format!(
                "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0/16\
                 &TagSpecification.1.ResourceType=vpc\
                 &TagSpecification.1.Tag.1.Key=cluster&TagSpecification.1.Tag.1.Value=c-{i}\
                 &TagSpecification.1.Tag.2.Key=Name&TagSpecification.1.Tag.2.Value=vpc-of-c-{i}"
            ),
        );
        let vpc_id = between(&vpc, "<vpcId>", "</vpcId>").to_string();
        for (j, zone) in ["us-east-1a", "us-east-1b"].iter().enumerate() {
            call(
                &fake,
                &format!(
                    "Action=CreateSubnet&Version=2016-11-15&VpcId={vpc_id}\
                     &CidrBlock=10.0.{j}.0/24&AvailabilityZone={zone}\
                     &TagSpecification.1.ResourceType=subnet\
                     &TagSpecification.1.Tag.1.Key=cluster&TagSpecification.1.Tag.1.Value=c-{i}"
                ),
            );
        }
        call(
            &fake,
            &format!(
                "Action=CreateSecurityGroup&Version=2016-11-15&VpcId={vpc_id}\
                 &GroupName=nodes&GroupDescription=nodes\
                 &TagSpecification.1.ResourceType=security-group\
                 &TagSpecification.1.Tag.1.Key=cluster&TagSpecification.1.Tag.1.Value=c-{i}"
            ),
        );
        if i == n / 2 {
            probe = vpc_id;
        }
    }
    (fake, probe)
}

fn filtered_describes(c: &mut Criterion) {
    for n in [50, 2000] {
        let (fake, vpc_id) = region_with(n);
        let cluster = format!("c-{}", n / 2);
        let vpcs = format!(
            "Action=DescribeVpcs&Version=2016-11-15\
             &Filter.1.Name=tag:cluster&Filter.1.Value.1={cluster}"
        );
        let subnets = format!(
            "Action=DescribeSubnets&Version=2016-11-15\
             &Filter.1.Name=vpc-id&Filter.1.Value.1={vpc_id}"
        );
        let groups = format!(
            "Action=DescribeSecurityGroups&Version=2016-11-15\
             &Filter.1.Name=vpc-id&Filter.1.Value.1={vpc_id}\
             &Filter.2.Name=tag:cluster&Filter.2.Value.1={cluster}"
        );
        // The answers hold exactly the cluster's resources.
        assert_eq!(call(&fake, &vpcs).matches("<vpcId>").count(), 1);
        assert_eq!(call(&fake, &subnets).matches("<subnetId>").count(), 2);
        assert_eq!(call(&fake, &groups).matches("<groupName>").count(), 1);
        c.bench_function(&format!("describe_vpcs_by_tag_at_{n}_vpcs"), |b| {
            b.iter(|| call(&fake, &vpcs))
        });
        c.bench_function(&format!("describe_subnets_by_vpc_at_{n}_vpcs"), |b| {
            b.iter(|| call(&fake, &subnets))
        });
        c.bench_function(
            &format!("describe_groups_by_vpc_and_tag_at_{n}_vpcs"),
            |b| b.iter(|| call(&fake, &groups)),
        );
    }
}

criterion_group!(benches, filtered_describes);
criterion_main!(benches);
