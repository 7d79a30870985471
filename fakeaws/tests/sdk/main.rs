//! The fake driven by the official Rust SDK, one module per resource: every implemented
//! operation's success and its documented errors, paginators and waiters.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod availability_zone;
mod envelope;
mod internet_gateway;
mod load_balancer;
mod subnet;
mod tags;
mod vpc;

use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};

/// The error code of a failed SDK call.
pub fn code<T, E: ProvideErrorMetadata>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => panic!("expected an error, the call succeeded"),
        Err(e) => e.code().unwrap_or("<no code>").to_string(),
    }
}

/// A filter with one or more values.
pub fn filter(name: &str, values: &[&str]) -> Filter {
    let mut f = Filter::builder().name(name);
    for v in values {
        f = f.values(*v);
    }
    f.build()
}

/// A tag specification for `rt` with `tags`.
pub fn tag_spec(rt: ResourceType, tags: &[(&str, &str)]) -> TagSpecification {
    let mut s = TagSpecification::builder().resource_type(rt);
    for (k, v) in tags {
        s = s.tags(Tag::builder().key(*k).value(*v).build());
    }
    s.build()
}

/// A fake without a default VPC, so describes list only what a test created.
pub async fn empty_fake() -> fakeaws::FakeAws {
    fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Creates a VPC and returns its id.
pub async fn vpc(ec2: &aws_sdk_ec2::Client, cidr: &str) -> String {
    ec2.create_vpc()
        .cidr_block(cidr)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap()
}
