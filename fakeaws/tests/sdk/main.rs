//! The fake driven by the official Rust SDK, one module per resource: every implemented
//! operation's success and its documented errors, paginators and waiters.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod account;
mod address_attribute;
mod availability_zone;
mod boot;
mod capacity_reservation;
mod cluster;
mod consistency;
mod console;
mod copy;
mod credit;
mod dedicated_host;
mod dhcp_options;
mod edge_zone;
mod efa;
mod elastic_ip;
mod envelope;
mod faults;
mod fleet;
mod flow_log;
mod image_attribute;
mod image_key_pair;
mod instance;
mod instance_attribute;
mod instance_connect_endpoint;
mod instance_options;
mod instance_profile;
mod instance_type;
mod internet_gateway;
mod ipam;
mod ipv6;
mod ipv6_pool;
mod key_material;
mod launch_template;
mod load_balancer;
mod load_balancer_certificate;
mod load_balancer_node;
mod load_balancer_policy;
mod managed_prefix_list;
mod nat_gateway;
mod nat_gateway_address;
mod network_acl;
mod network_interface;
mod placement_group;
mod prefix;
mod prefix_list;
mod public_ipv4_pool;
mod route_table;
mod security_group;
mod signatures;
mod snapshot;
mod spot;
mod state;
mod subnet;
mod tags;
mod tenancy;
mod volume;
mod volume_status;
mod vpc;
mod vpc_cidr;
mod vpc_endpoint;
mod vpc_peering;
mod vpn_connection;
mod vpn_gateway;

use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};

/// Moves the clock of the fake's `us-east-1` by `seconds`.
pub fn advance(fake: &fakeaws::FakeAws, seconds: u64) {
    fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(std::time::Duration::from_secs(seconds));
    });
}

/// Stops instance `id` (in `us-east-1`) and waits, the clock moved on, until it is stopped.
pub async fn stop(fake: &fakeaws::FakeAws, ec2: &aws_sdk_ec2::Client, id: &str) {
    ec2.stop_instances().instance_ids(id).send().await.unwrap();
    advance(fake, 600);
    wait(ec2, id, aws_sdk_ec2::types::InstanceStateName::Stopped).await;
}

/// The error code of a failed SDK call.
pub fn code<T, E: ProvideErrorMetadata>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => panic!("expected an error, the call succeeded"),
        Err(e) => e.code().unwrap_or("<no code>").to_string(),
    }
}

/// The error code and message of a failed SDK call.
pub fn code_and_message<T, E: ProvideErrorMetadata>(r: Result<T, E>) -> (String, String) {
    match r {
        Ok(_) => panic!("expected an error, the call succeeded"),
        Err(e) => (
            e.code().unwrap_or("<no code>").to_string(),
            e.message().unwrap_or_default().to_string(),
        ),
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

/// A fake without a default VPC, so describes list only what a test created, on a virtual
/// clock that only the test moves.
pub async fn empty_fake() -> fakeaws::FakeAws {
    fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_961_900),
        ),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// A fake without a default VPC whose quota `name` is `n`.
pub async fn fake_with_quota(name: &str, n: usize) -> fakeaws::FakeAws {
    let mut limits = fakeaws::Limits::default();
    limits.set(name, n).unwrap();
    fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        limits,
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

/// Creates a route table in `vpc_id` and returns its id.
pub async fn route_table(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let out = ec2
        .create_route_table()
        .vpc_id(vpc_id)
        .send()
        .await
        .unwrap();
    out.route_table.unwrap().route_table_id.unwrap()
}

/// Creates a subnet and returns its id.
pub async fn subnet(ec2: &aws_sdk_ec2::Client, vpc_id: &str, cidr: &str, zone: &str) -> String {
    ec2.create_subnet()
        .vpc_id(vpc_id)
        .cidr_block(cidr)
        .availability_zone(zone)
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap()
}

/// Creates an internet gateway attached to `vpc_id` and returns its id.
pub async fn gateway(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let igw = ec2
        .create_internet_gateway()
        .send()
        .await
        .unwrap()
        .internet_gateway
        .unwrap()
        .internet_gateway_id
        .unwrap();
    ec2.attach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(vpc_id)
        .send()
        .await
        .unwrap();
    igw
}

/// The id of the internet gateway attached to `vpc_id`.
pub async fn gateway_of(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let out = ec2
        .describe_internet_gateways()
        .filters(filter("attachment.vpc-id", &[vpc_id]))
        .send()
        .await
        .unwrap();
    out.internet_gateways()[0]
        .internet_gateway_id()
        .unwrap()
        .to_string()
}

/// The id of the default subnet of `zone`.
pub async fn default_subnet_in(ec2: &aws_sdk_ec2::Client, zone: &str) -> String {
    let out = ec2
        .describe_subnets()
        .filters(filter("default-for-az", &["true"]))
        .filters(filter("availability-zone", &[zone]))
        .send()
        .await
        .unwrap();
    out.subnets()[0].subnet_id().unwrap().to_string()
}

/// Creates a security group in `vpc_id` (its description its name) and returns its id.
pub async fn group(ec2: &aws_sdk_ec2::Client, vpc_id: &str, name: &str) -> String {
    ec2.create_security_group()
        .group_name(name)
        .description(name)
        .vpc_id(vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap()
}

/// The id of a public image of the catalogue whose name matches `pattern`.
pub async fn image(ec2: &aws_sdk_ec2::Client, pattern: &str) -> String {
    let images = ec2
        .describe_images()
        .filters(filter("name", &[pattern]))
        .send()
        .await
        .unwrap();
    images.images()[0].image_id().unwrap().to_string()
}

/// Launches one instance in `subnet_id` and returns its id.
pub async fn instance(ec2: &aws_sdk_ec2::Client, subnet_id: &str) -> String {
    instance_placed(ec2, subnet_id, None).await
}

/// Launches one instance in `subnet_id` with `placement`, if given, and returns its id.
pub async fn instance_placed(
    ec2: &aws_sdk_ec2::Client,
    subnet_id: &str,
    placement: Option<aws_sdk_ec2::types::Placement>,
) -> String {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let r = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
        .subnet_id(subnet_id)
        .set_placement(placement)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    r.instances()[0].instance_id().unwrap().to_string()
}

/// The ids of the subnets a DescribeSubnets with `filters` answers, sorted.
pub async fn subnet_ids(ec2: &aws_sdk_ec2::Client, filters: Vec<Filter>) -> Vec<String> {
    let mut ids: Vec<String> = ec2
        .describe_subnets()
        .set_filters(Some(filters))
        .send()
        .await
        .unwrap()
        .subnets()
        .iter()
        .filter_map(|s| s.subnet_id().map(String::from))
        .collect();
    ids.sort();
    ids
}

/// The ids of the VPCs a DescribeVpcs with `filters` answers, sorted.
pub async fn vpc_ids(ec2: &aws_sdk_ec2::Client, filters: Vec<Filter>) -> Vec<String> {
    let mut ids: Vec<String> = ec2
        .describe_vpcs()
        .set_filters(Some(filters))
        .send()
        .await
        .unwrap()
        .vpcs()
        .iter()
        .filter_map(|v| v.vpc_id().map(String::from))
        .collect();
    ids.sort();
    ids
}

/// The default VPC's id, as DescribeVpcs lists it.
pub async fn default_vpc_id(ec2: &aws_sdk_ec2::Client) -> String {
    let ids = vpc_ids(ec2, vec![filter("is-default", &["true"])]).await;
    assert_eq!(ids.len(), 1, "one default VPC: {ids:?}");
    ids.into_iter().next().unwrap_or_default()
}

/// Allocates `quota` Elastic IPs, each accepted, and checks that one more is refused with
/// `AddressLimitExceeded`.
pub async fn allocate_addresses_up_to(ec2: &aws_sdk_ec2::Client, quota: usize) {
    use aws_sdk_ec2::types::DomainType;
    for _ in 0..quota {
        ec2.allocate_address()
            .domain(DomainType::Vpc)
            .send()
            .await
            .unwrap();
    }
    assert_eq!(
        code(ec2.allocate_address().domain(DomainType::Vpc).send().await),
        "AddressLimitExceeded"
    );
}

/// The ids of the instances a DescribeInstances with `filters` (name, one value) answers.
pub async fn instance_ids(ec2: &aws_sdk_ec2::Client, filters: &[(&str, &str)]) -> Vec<String> {
    let mut call = ec2.describe_instances();
    for (name, value) in filters {
        call = call.filters(filter(name, &[value]));
    }
    call.send()
        .await
        .unwrap()
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter_map(|i| i.instance_id().map(String::from))
        .collect()
}

/// Waits until the instance is in `state`.
pub async fn wait(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    state: aws_sdk_ec2::types::InstanceStateName,
) {
    use aws_sdk_ec2::client::Waiters;
    use aws_sdk_ec2::types::InstanceStateName as State;
    let wait = std::time::Duration::from_secs(5);
    match state {
        State::Running => {
            ec2.wait_until_instance_running()
                .instance_ids(id)
                .wait(wait)
                .await
                .unwrap();
        }
        State::Stopped => {
            ec2.wait_until_instance_stopped()
                .instance_ids(id)
                .wait(wait)
                .await
                .unwrap();
        }
        State::Terminated => {
            ec2.wait_until_instance_terminated()
                .instance_ids(id)
                .wait(wait)
                .await
                .unwrap();
        }
        other => panic!("no waiter for {other:?}"),
    }
}

/// The instance `id` as DescribeInstances shows it.
pub async fn described(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::Instance {
    let d = ec2
        .describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap();
    d.reservations()[0].instances()[0].clone()
}

/// A completed snapshot of a fresh volume of `size` GiB in `ec2`'s region (`encrypted` or
/// not); its id.
pub async fn completed_snapshot(
    ec2: &aws_sdk_ec2::Client,
    zone: &str,
    size: i32,
    encrypted: bool,
) -> String {
    let vol = ec2
        .create_volume()
        .availability_zone(zone)
        .size(size)
        .encrypted(encrypted)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap();
    let snap = ec2
        .create_snapshot()
        .volume_id(vol)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    aws_sdk_ec2::client::Waiters::wait_until_snapshot_completed(ec2)
        .snapshot_ids(&snap)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    snap
}

/// RegisterImage of `name`, its root device `root` made of `snapshot`: the call, to send or
/// to add to.
pub fn register_from(
    ec2: &aws_sdk_ec2::Client,
    name: &str,
    root: &str,
    snapshot: &str,
) -> aws_sdk_ec2::operation::register_image::builders::RegisterImageFluentBuilder {
    ec2.register_image()
        .name(name)
        .root_device_name(root)
        .block_device_mappings(
            aws_sdk_ec2::types::BlockDeviceMapping::builder()
                .device_name(root)
                .ebs(
                    aws_sdk_ec2::types::EbsBlockDevice::builder()
                        .snapshot_id(snapshot)
                        .build(),
                )
                .build(),
        )
}
