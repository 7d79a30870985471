//! Round-trip benchmarks: a DescribeVpcs through the official SDK against the in-process fake
//! (HTTP on 127.0.0.1), and the same request served by `Fake::handle` without a socket.

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

    let raw = fake.fake().clone();
    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20261129/us-east-1/ec2/aws4_request, \
                SignedHeaders=host, Signature=0";
    c.bench_function("describe_vpcs_handle_no_socket", |b| {
        b.iter(|| {
            let a = raw.handle(Some(auth), b"", b"Action=DescribeVpcs&Version=2016-11-15");
            assert_eq!(a.status, 200);
            a
        });
    });
}

criterion_group!(benches, sdk_round_trip);
criterion_main!(benches);
