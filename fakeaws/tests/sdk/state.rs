//! A fake kept in a state file (`Fake::with_state_file`): a whole network built through the
//! SDK reads back the same after a restart, and the account goes on where it stopped: the
//! ClientToken ledger answers a replayed launch, the id generator never hands out an id
//! twice, the clock, scheduled state changes and held-back tags carry on.

use std::path::PathBuf;
use std::time::Duration;

use aws_sdk_ec2::types::{InstanceType, IpPermission, IpRange, ResourceType};
use aws_sdk_elasticloadbalancing::types::{HealthCheck, Instance, Listener};
use fakeaws::sim::transitions::Subject;

use crate::{filter, tag_spec};

fn config() -> fakeaws::Config {
    fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        // A NAT gateway takes a minute to become available; CreateTags shows after 10 s.
        delays: [(Subject::NatGateway, Duration::from_secs(60))].into(),
        consistency: fakeaws::sim::consistency::Windows {
            tags: 10.0,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn state_file(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("state-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.json"));
    let _ = std::fs::remove_file(&file);
    file
}

async fn open(file: &std::path::Path) -> fakeaws::FakeAws {
    let fake = fakeaws::Fake::with_state_file(config(), file).unwrap();
    fakeaws::serve(fake).await.unwrap()
}

/// Everything the account holds, as the SDK reads it.
async fn world(fake: &fakeaws::FakeAws) -> String {
    let ec2 = fake.ec2_client();
    let elb = fake.elb_client();
    let mut out = String::new();
    let mut add = |what: &str, v: &dyn std::fmt::Debug| out.push_str(&format!("{what}: {v:?}\n"));
    add("vpcs", &ec2.describe_vpcs().send().await.unwrap().vpcs);
    add(
        "network acls",
        &ec2.describe_network_acls()
            .send()
            .await
            .unwrap()
            .network_acls,
    );
    add(
        "subnets",
        &ec2.describe_subnets().send().await.unwrap().subnets,
    );
    add(
        "igws",
        &ec2.describe_internet_gateways()
            .send()
            .await
            .unwrap()
            .internet_gateways,
    );
    add(
        "egress-only gateways",
        &ec2.describe_egress_only_internet_gateways()
            .send()
            .await
            .unwrap()
            .egress_only_internet_gateways,
    );
    add(
        "route tables",
        &ec2.describe_route_tables()
            .send()
            .await
            .unwrap()
            .route_tables,
    );
    add(
        "groups",
        &ec2.describe_security_groups()
            .send()
            .await
            .unwrap()
            .security_groups,
    );
    add(
        "addresses",
        &ec2.describe_addresses().send().await.unwrap().addresses,
    );
    add(
        "nat gateways",
        &ec2.describe_nat_gateways()
            .send()
            .await
            .unwrap()
            .nat_gateways,
    );
    add(
        "instances",
        &ec2.describe_instances().send().await.unwrap().reservations,
    );
    add(
        "volumes",
        &ec2.describe_volumes().send().await.unwrap().volumes,
    );
    add(
        "volume modifications",
        &ec2.describe_volumes_modifications()
            .send()
            .await
            .unwrap()
            .volumes_modifications,
    );
    add(
        "snapshots",
        &ec2.describe_snapshots().send().await.unwrap().snapshots,
    );
    add(
        "snapshots shared",
        &ec2.describe_snapshots()
            .restorable_by_user_ids("444455556666")
            .send()
            .await
            .unwrap()
            .snapshots,
    );
    let own = ec2
        .describe_images()
        .owners("self")
        .send()
        .await
        .unwrap()
        .images;
    for i in own.iter().flatten() {
        add(
            "launch permissions",
            &ec2.describe_image_attribute()
                .image_id(i.image_id().unwrap_or_default())
                .attribute(aws_sdk_ec2::types::ImageAttributeName::LaunchPermission)
                .send()
                .await
                .unwrap()
                .launch_permissions,
        );
    }
    add("own images", &own);
    add(
        "unlimited instances",
        &ec2.describe_instance_credit_specifications()
            .send()
            .await
            .unwrap()
            .instance_credit_specifications,
    );
    add(
        "dhcp options",
        &ec2.describe_dhcp_options()
            .send()
            .await
            .unwrap()
            .dhcp_options,
    );
    add(
        "ebs encryption by default",
        &ec2.get_ebs_encryption_by_default()
            .send()
            .await
            .unwrap()
            .ebs_encryption_by_default,
    );
    add(
        "t2 default credits",
        &ec2.get_default_credit_specification()
            .instance_family(aws_sdk_ec2::types::UnlimitedSupportedInstanceFamily::T2)
            .send()
            .await
            .unwrap()
            .instance_family_credit_specification,
    );
    add(
        "image block public access",
        &ec2.get_image_block_public_access_state()
            .send()
            .await
            .unwrap()
            .image_block_public_access_state,
    );
    add(
        "interfaces",
        &ec2.describe_network_interfaces()
            .send()
            .await
            .unwrap()
            .network_interfaces,
    );
    add(
        "vpc endpoints",
        &ec2.describe_vpc_endpoints()
            .send()
            .await
            .unwrap()
            .vpc_endpoints,
    );
    add(
        "launch templates",
        &ec2.describe_launch_template_versions()
            .launch_template_name("kept")
            .send()
            .await
            .unwrap()
            .launch_template_versions,
    );
    add(
        "spot requests",
        &ec2.describe_spot_instance_requests()
            .send()
            .await
            .unwrap()
            .spot_instance_requests,
    );
    add(
        "placement groups",
        &ec2.describe_placement_groups()
            .send()
            .await
            .unwrap()
            .placement_groups,
    );
    add(
        "key pairs",
        &ec2.describe_key_pairs().send().await.unwrap().key_pairs,
    );
    add("tags", &ec2.describe_tags().send().await.unwrap().tags);
    add(
        "load balancers",
        &elb.describe_load_balancers()
            .send()
            .await
            .unwrap()
            .load_balancer_descriptions,
    );
    add(
        "health",
        &elb.describe_instance_health()
            .load_balancer_name("state-lb")
            .send()
            .await
            .unwrap()
            .instance_states,
    );
    add(
        "lb tags",
        &elb.describe_tags()
            .load_balancer_names("state-lb")
            .send()
            .await
            .unwrap()
            .tag_descriptions,
    );
    out
}

/// A network with one of everything; returns the launch request's ClientToken and the
/// instance it made.
async fn build(fake: &fakeaws::FakeAws) -> (String, String, String) {
    let ec2 = fake.ec2_client();
    let elb = fake.elb_client();
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.40.0.0/16")
        .tag_specifications(tag_spec(ResourceType::Vpc, &[("Name", "kept")]))
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let subnet = crate::subnet(&ec2, &vpc, "10.40.1.0/24", "us-east-1a").await;
    // A secondary range, with a subnet in it and its local route in every table.
    ec2.associate_vpc_cidr_block()
        .vpc_id(&vpc)
        .cidr_block("10.41.0.0/16")
        .send()
        .await
        .unwrap();
    let second = crate::subnet(&ec2, &vpc, "10.41.1.0/24", "us-east-1b").await;
    // An ACL of one's own with an entry, holding that subnet.
    let acl = ec2
        .create_network_acl()
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap()
        .network_acl
        .unwrap()
        .network_acl_id
        .unwrap();
    ec2.create_network_acl_entry()
        .network_acl_id(&acl)
        .rule_number(100)
        .egress(false)
        .rule_action(aws_sdk_ec2::types::RuleAction::Allow)
        .protocol("tcp")
        .port_range(
            aws_sdk_ec2::types::PortRange::builder()
                .from(443)
                .to(443)
                .build(),
        )
        .cidr_block("0.0.0.0/0")
        .send()
        .await
        .unwrap();
    let association = ec2
        .describe_network_acls()
        .filters(filter("association.subnet-id", &[&second]))
        .send()
        .await
        .unwrap()
        .network_acls()[0]
        .associations()
        .iter()
        .find(|a| a.subnet_id() == Some(second.as_str()))
        .unwrap()
        .network_acl_association_id()
        .unwrap()
        .to_string();
    ec2.replace_network_acl_association()
        .association_id(association)
        .network_acl_id(&acl)
        .send()
        .await
        .unwrap();
    let igw = crate::gateway(&ec2, &vpc).await;
    let rt = ec2
        .create_route_table()
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap()
        .route_table
        .unwrap()
        .route_table_id
        .unwrap();
    ec2.create_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    ec2.associate_route_table()
        .route_table_id(&rt)
        .subnet_id(&subnet)
        .send()
        .await
        .unwrap();
    // An IPv6 block (its local routes, the default ACL's and group's IPv6 rules), a /64 for
    // the subnet, and an egress-only gateway with a route to it.
    let block = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&vpc)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .ipv6_cidr_block_association
        .unwrap()
        .ipv6_cidr_block
        .unwrap();
    ec2.associate_subnet_cidr_block()
        .subnet_id(&subnet)
        .ipv6_cidr_block(
            block
                .parse::<ipnet::Ipv6Net>()
                .unwrap()
                .subnets(64)
                .unwrap()
                .nth(7)
                .unwrap()
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    // An interface holding two of the /64's addresses.
    ec2.create_network_interface()
        .subnet_id(&subnet)
        .ipv6_address_count(2)
        .send()
        .await
        .unwrap();
    let eigw = ec2
        .create_egress_only_internet_gateway()
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap()
        .egress_only_internet_gateway
        .unwrap()
        .egress_only_internet_gateway_id
        .unwrap();
    ec2.create_route()
        .route_table_id(&rt)
        .destination_ipv6_cidr_block("::/0")
        .egress_only_internet_gateway_id(&eigw)
        .send()
        .await
        .unwrap();
    let group = ec2
        .create_security_group()
        .group_name("kept")
        .description("kept across restarts")
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    ec2.authorize_security_group_ingress()
        .group_id(&group)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(6443)
                .to_port(6443)
                .ip_ranges(IpRange::builder().cidr_ip("0.0.0.0/0").build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    // A gateway endpoint routing the table, and an interface endpoint with its interface.
    ec2.create_vpc_endpoint()
        .vpc_id(&vpc)
        .service_name("com.amazonaws.us-east-1.s3")
        .route_table_ids(&rt)
        .send()
        .await
        .unwrap();
    ec2.create_vpc_endpoint()
        .vpc_endpoint_type(aws_sdk_ec2::types::VpcEndpointType::Interface)
        .vpc_id(&vpc)
        .service_name("com.amazonaws.us-east-1.sts")
        .subnet_ids(&subnet)
        .security_group_ids(&group)
        .private_dns_enabled(false)
        .send()
        .await
        .unwrap();
    // A Spot Instance and its request.
    ec2.run_instances()
        .image_id(crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Small)
        .subnet_id(&subnet)
        .instance_market_options(
            aws_sdk_ec2::types::InstanceMarketOptionsRequest::builder()
                .market_type(aws_sdk_ec2::types::MarketType::Spot)
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    // A partition placement group.
    ec2.create_placement_group()
        .group_name("kept")
        .strategy(aws_sdk_ec2::types::PlacementStrategy::Partition)
        .partition_count(3)
        .send()
        .await
        .unwrap();
    // A launch template with two versions, the second the default.
    ec2.create_launch_template()
        .launch_template_name("kept")
        .launch_template_data(
            aws_sdk_ec2::types::RequestLaunchTemplateData::builder()
                .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
                .security_group_ids(&group)
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.create_launch_template_version()
        .launch_template_name("kept")
        .source_version("1")
        .launch_template_data(
            aws_sdk_ec2::types::RequestLaunchTemplateData::builder()
                .ebs_optimized(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.modify_launch_template()
        .launch_template_name("kept")
        .default_version("2")
        .send()
        .await
        .unwrap();
    ec2.create_key_pair().key_name("kept").send().await.unwrap();
    let eip = ec2
        .allocate_address()
        .send()
        .await
        .unwrap()
        .allocation_id
        .unwrap();
    ec2.create_nat_gateway()
        .subnet_id(&subnet)
        .allocation_id(&eip)
        .client_token("kept-nat")
        .send()
        .await
        .unwrap();
    let image = ec2
        .describe_images()
        .filters(filter("architecture", &["x86_64"]))
        .send()
        .await
        .unwrap()
        .images()[0]
        .image_id()
        .unwrap()
        .to_string();
    // A snapshot of a volume of its own, tagged.
    let kept_volume = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(12)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap();
    ec2.modify_volume()
        .volume_id(&kept_volume)
        .size(14)
        .send()
        .await
        .unwrap();
    let kept_snapshot = ec2
        .create_snapshot()
        .volume_id(kept_volume)
        .description("kept")
        .tag_specifications(tag_spec(ResourceType::Snapshot, &[("Name", "kept")]))
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    ec2.modify_snapshot_attribute()
        .snapshot_id(&kept_snapshot)
        .attribute(aws_sdk_ec2::types::SnapshotAttributeName::CreateVolumePermission)
        .operation_type(aws_sdk_ec2::types::OperationType::Add)
        .user_ids("444455556666")
        .send()
        .await
        .unwrap();
    // An image of it, shared with another account, and public sharing unblocked.
    let kept_image = ec2
        .register_image()
        .name("kept-image")
        .root_device_name("/dev/xvda")
        .block_device_mappings(
            aws_sdk_ec2::types::BlockDeviceMapping::builder()
                .device_name("/dev/xvda")
                .ebs(
                    aws_sdk_ec2::types::EbsBlockDevice::builder()
                        .snapshot_id(kept_snapshot)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap();
    ec2.modify_image_attribute()
        .image_id(&kept_image)
        .attribute("launchPermission")
        .operation_type(aws_sdk_ec2::types::OperationType::Add)
        .user_ids("111122223333")
        .send()
        .await
        .unwrap();
    ec2.enable_image_deregistration_protection()
        .image_id(&kept_image)
        .with_cooldown(true)
        .send()
        .await
        .unwrap();
    ec2.disable_image_block_public_access()
        .send()
        .await
        .unwrap();
    ec2.enable_ebs_encryption_by_default().send().await.unwrap();
    ec2.create_dhcp_options()
        .dhcp_configurations(
            aws_sdk_ec2::types::NewDhcpConfiguration::builder()
                .key("domain-name")
                .values("corp.example")
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.modify_default_credit_specification()
        .instance_family(aws_sdk_ec2::types::UnlimitedSupportedInstanceFamily::T2)
        .cpu_credits("unlimited")
        .send()
        .await
        .unwrap();
    let token = "kept-launch".to_string();
    let instance = ec2
        .run_instances()
        .image_id(&image)
        .instance_type(InstanceType::T3Small)
        .min_count(1)
        .max_count(1)
        .subnet_id(&subnet)
        .security_group_ids(&group)
        .key_name("kept")
        .client_token(&token)
        .tag_specifications(tag_spec(ResourceType::Instance, &[("Name", "kept-0")]))
        .send()
        .await
        .unwrap()
        .instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    elb.create_load_balancer()
        .load_balancer_name("state-lb")
        .listeners(
            Listener::builder()
                .protocol("TCP")
                .load_balancer_port(6443)
                .instance_protocol("TCP")
                .instance_port(6443)
                .build()
                .unwrap(),
        )
        .subnets(&subnet)
        .security_groups(&group)
        .send()
        .await
        .unwrap();
    elb.configure_health_check()
        .load_balancer_name("state-lb")
        .health_check(
            HealthCheck::builder()
                .target("TCP:6443")
                .interval(10)
                .timeout(5)
                .unhealthy_threshold(3)
                .healthy_threshold(2)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    elb.register_instances_with_load_balancer()
        .load_balancer_name("state-lb")
        .instances(Instance::builder().instance_id(&instance).build())
        .send()
        .await
        .unwrap();
    // An interface of the user's, attached at device index 1 with a secondary address.
    let eni = ec2
        .create_network_interface()
        .subnet_id(&subnet)
        .description("kept")
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    ec2.assign_private_ip_addresses()
        .network_interface_id(&eni)
        .secondary_private_ip_address_count(1)
        .send()
        .await
        .unwrap();
    ec2.attach_network_interface()
        .network_interface_id(&eni)
        .instance_id(&instance)
        .device_index(1)
        .send()
        .await
        .unwrap();
    // Written now, shown 10 s later: still held back when the fake stops.
    ec2.create_tags()
        .resources(&vpc)
        .tags(
            aws_sdk_ec2::types::Tag::builder()
                .key("late")
                .value("yes")
                .build(),
        )
        .send()
        .await
        .unwrap();
    (token, image, instance)
}

#[tokio::test]
async fn the_account_survives_a_restart() {
    let file = state_file("restart");
    let first = open(&file).await;
    let (token, image, instance) = build(&first).await;
    let before = world(&first).await;
    let clock_before = first.fake().with_region("us-east-1", |r| r.clock.now());
    let nat = first
        .ec2_client()
        .describe_nat_gateways()
        .send()
        .await
        .unwrap();
    assert_eq!(
        nat.nat_gateways()[0].state(),
        Some(&aws_sdk_ec2::types::NatGatewayState::Pending)
    );
    assert!(!before.contains("\"late\""), "the late tag is held back");
    assert!(before.contains("\"kept-0\""), "{before}");
    assert!(before.contains("\"111122223333\""), "{before}");
    assert!(!before.contains("snapshots shared: Some([])"), "{before}");
    assert!(before.contains("\"unblocked\""), "{before}");
    assert!(before.contains("\"enabled-with-cooldown\""), "{before}");
    drop(first);

    let second = open(&file).await;
    assert_eq!(
        world(&second).await,
        before,
        "the same world after the restart"
    );
    assert_eq!(
        second.fake().with_region("us-east-1", |r| r.clock.now()),
        clock_before,
        "the clock carries on where it was"
    );

    // The ClientToken ledger: the same launch answers the same instance.
    let ec2 = second.ec2_client();
    let replay = ec2
        .run_instances()
        .image_id(&image)
        .instance_type(InstanceType::T3Small)
        .min_count(1)
        .max_count(1)
        .subnet_id(
            ec2.describe_subnets()
                .filters(filter("cidr-block", &["10.40.1.0/24"]))
                .send()
                .await
                .unwrap()
                .subnets()[0]
                .subnet_id()
                .unwrap(),
        )
        .security_group_ids(
            ec2.describe_security_groups()
                .filters(filter("group-name", &["kept"]))
                .send()
                .await
                .unwrap()
                .security_groups()[0]
                .group_id()
                .unwrap(),
        )
        .key_name("kept")
        .client_token(&token)
        .tag_specifications(tag_spec(ResourceType::Instance, &[("Name", "kept-0")]))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.instances()[0].instance_id(), Some(instance.as_str()));

    // The id generator carries on: a new VPC's id was never handed out before.
    let new_vpc = crate::vpc(&ec2, "10.41.0.0/16").await;
    assert!(!before.contains(&new_vpc), "{new_vpc} is new");

    // Scheduled state changes and held-back tags carry on with the clock.
    second
        .fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(61)));
    let nat = ec2.describe_nat_gateways().send().await.unwrap();
    assert_eq!(
        nat.nat_gateways()[0].state(),
        Some(&aws_sdk_ec2::types::NatGatewayState::Available)
    );
    let late = ec2
        .describe_tags()
        .filters(filter("key", &["late"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        late.tags().len(),
        1,
        "the held-back tag shows after its window"
    );
    drop(second);
    std::fs::remove_file(&file).unwrap();
}

/// A file that is not a fakeaws state, of another version or of another account is refused
/// with a message saying which, and left exactly as it was.
#[tokio::test]
async fn a_file_that_is_not_a_state_is_refused_and_left_alone() {
    let file = state_file("refused");
    let fake = open(&file).await;
    crate::vpc(&fake.ec2_client(), "10.42.0.0/16").await;
    drop(fake);
    let good = std::fs::read(&file).unwrap();

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..good.len() / 2].to_vec(), "is not a fakeaws state"),
        (b"".to_vec(), "is not a fakeaws state"),
        (b"{\"hello\": 1}".to_vec(), "\"format\" is not"),
        (
            String::from_utf8(good.clone())
                .unwrap()
                .replacen("\"version\":1", "\"version\":99", 1)
                .into_bytes(),
            "format version 99",
        ),
        (
            String::from_utf8(good.clone())
                .unwrap()
                .replacen("123456789012", "210987654321", 1)
                .into_bytes(),
            "holds account 210987654321",
        ),
        (
            String::from_utf8(good.clone())
                .unwrap()
                .replacen("\"cidr\":\"10.42.0.0/16\"", "\"cidr\":\"ten\"", 1)
                .into_bytes(),
            "is not a fakeaws state",
        ),
    ];
    for (bytes, says) in cases {
        std::fs::write(&file, &bytes).unwrap();
        let err = fakeaws::Fake::with_state_file(config(), &file).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(says), "{message}");
        assert!(message.contains(file.to_str().unwrap()), "{message}");
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "left as it was");
    }
    std::fs::remove_file(&file).unwrap();
}
