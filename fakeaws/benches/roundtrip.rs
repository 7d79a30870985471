//! Round-trip benchmarks: a DescribeVpcs through the official SDK against the in-process fake
//! (HTTP on 127.0.0.1), and the same request served by `Fake::handle` without a socket; a
//! CreateTags served without a socket, by a fake in memory and by one that keeps a state file
//! (each change saved before it is answered: serialize, write, fsync, rename).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};

fn sdk_round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(fakeaws::spawn()).unwrap();
    let ec2 = fake.ec2_client();
    // The default VPC plus four more, each with a tag: a realistic small answer.
    rt.block_on(async {
        for i in 0..4 {
            let id = ec2
                .create_vpc()
                .cidr_block(format!("10.{i}.0.0/16"))
                .send()
                .await
                .unwrap()
                .vpc
                .unwrap()
                .vpc_id
                .unwrap();
            ec2.create_tags()
                .resources(id)
                .tags(
                    aws_sdk_ec2::types::Tag::builder()
                        .key("Name")
                        .value("bench")
                        .build(),
                )
                .send()
                .await
                .unwrap();
        }
    });
    c.bench_function("describe_vpcs_sdk_round_trip", |b| {
        b.iter(|| {
            rt.block_on(async { ec2.describe_vpcs().send().await.unwrap() });
        });
    });

    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20261129/us-east-1/ec2/aws4_request, \
                SignedHeaders=host, Signature=0";
    // The whole service but the socket: the describe run each time, and a poller's repeated
    // request, answered from the region's kept answer.
    let fresh = fakeaws::Fake::new(fakeaws::Config {
        keep_answers: false,
        ..fakeaws::Config::default()
    });
    let kept = fake.fake().clone();
    for (name, raw) in [
        ("describe_vpcs_handle_no_socket", &fresh),
        ("describe_vpcs_handle_no_socket_kept", &kept),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| {
                let a = raw.handle(Some(auth), b"", b"Action=DescribeVpcs&Version=2016-11-15");
                assert_eq!(a.status, 200);
                a
            });
        });
    }
}

fn state_file_save(c: &mut Criterion) {
    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20261129/us-east-1/ec2/aws4_request, \
                SignedHeaders=host, Signature=0";
    let dir = std::env::temp_dir().join(format!("fakeaws-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("state.json");
    let in_memory = fakeaws::Fake::new(fakeaws::Config::default());
    let kept = fakeaws::Fake::with_state_file(fakeaws::Config::default(), &file).unwrap();
    for (name, fake) in [
        ("create_tags_handle_in_memory", in_memory),
        ("create_tags_handle_state_file", kept),
    ] {
        // A default region (its VPC, subnets, images) plus twenty tagged groups.
        let vpcs = fake.handle(Some(auth), b"", b"Action=DescribeVpcs&Version=2016-11-15");
        let vpc = vpcs
            .body
            .split_once("<vpcId>")
            .and_then(|(_, rest)| rest.split_once("</vpcId>"))
            .unwrap()
            .0
            .to_string();
        for i in 0..20 {
            let body = format!(
                "Action=CreateSecurityGroup&Version=2016-11-15&GroupName=g{i}&\
                 GroupDescription=bench&VpcId={vpc}&TagSpecification.1.ResourceType=\
                 security-group&TagSpecification.1.Tag.1.Key=Name&\
                 TagSpecification.1.Tag.1.Value=g{i}"
            );
            assert_eq!(fake.handle(Some(auth), b"", body.as_bytes()).status, 200);
        }
        let mut n = 0u64;
        c.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                let body = format!(
                    "Action=CreateTags&Version=2016-11-15&ResourceId.1={vpc}&Tag.1.Key=n&\
                     Tag.1.Value={n}"
                );
                let a = fake.handle(Some(auth), b"", body.as_bytes());
                assert_eq!(a.status, 200);
                a
            });
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, sdk_round_trip, state_file_save);
criterion_main!(benches);
