//! Local Zones and Wavelength Zones through the SDK: listed with their type, group, border
//! group and parent zone; usable once the account opts in to their group; subnets there;
//! carrier gateways, the routes to them, and what deleting one leaves.

use aws_sdk_ec2::types::{
    AvailabilityZoneOptInStatus, CarrierGatewayState, ModifyAvailabilityZoneOptInStatus,
    ResourceType, RouteState,
};

use aws_sdk_ec2::types::{InstanceNetworkInterfaceSpecification, InstanceStateName, InstanceType};

use crate::{
    advance, code_and_message, empty_fake, filter, image, route_table, stop, tag_spec, vpc, wait,
};

/// The zone names DescribeAvailabilityZones answers, all of them or not.
async fn zone_names(ec2: &aws_sdk_ec2::Client, all: bool, filters: &[(&str, &str)]) -> Vec<String> {
    let mut call = ec2
        .describe_availability_zones()
        .all_availability_zones(all);
    for (name, value) in filters {
        call = call.filters(filter(name, &[value]));
    }
    call.send()
        .await
        .unwrap()
        .availability_zones()
        .iter()
        .map(|z| z.zone_name().unwrap().to_string())
        .collect()
}

async fn opt_in(ec2: &aws_sdk_ec2::Client, group: &str) {
    let out = ec2
        .modify_availability_zone_group()
        .group_name(group)
        .opt_in_status(ModifyAvailabilityZoneOptInStatus::OptedIn)
        .send()
        .await
        .unwrap();
    assert_eq!(out.r#return(), Some(true));
}

#[tokio::test]
async fn edge_zones_are_listed_and_usable_once_opted_in() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();

    // Without opting in: the availability zones only, unless all are asked for.
    assert_eq!(
        zone_names(&ec2, false, &[]).await,
        [
            "us-east-1a",
            "us-east-1b",
            "us-east-1c",
            "us-east-1d",
            "us-east-1e",
            "us-east-1f"
        ]
    );
    let local = zone_names(&ec2, true, &[("zone-type", "local-zone")]).await;
    assert_eq!(local, ["us-east-1-bos-1a", "us-east-1-nyc-1a"]);
    let all = ec2
        .describe_availability_zones()
        .all_availability_zones(true)
        .send()
        .await
        .unwrap();
    let nyc = all
        .availability_zones()
        .iter()
        .find(|z| z.zone_name() == Some("us-east-1-wl1-nyc-wlz-1"))
        .unwrap();
    assert_eq!(nyc.zone_type(), Some("wavelength-zone"));
    assert_eq!(nyc.zone_id(), Some("use1-wl1-nyc-wlz1"));
    assert_eq!(nyc.group_name(), Some("us-east-1-wl1"));
    assert_eq!(nyc.network_border_group(), Some("us-east-1-wl1-nyc-wlz-1"));
    assert_eq!(nyc.parent_zone_name(), Some("us-east-1b"));
    assert_eq!(nyc.parent_zone_id(), Some("use1-az2"));
    assert_eq!(
        nyc.opt_in_status(),
        Some(&AvailabilityZoneOptInStatus::NotOptedIn)
    );
    let az = &all.availability_zones()[0];
    assert_eq!(az.zone_type(), Some("availability-zone"));
    assert_eq!(az.parent_zone_name(), None);

    // A subnet in a zone the account has not opted in to is refused, as one in no zone.
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_in = |zone: &str| {
        ec2.create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block("10.0.128.0/25")
            .availability_zone(zone)
    };
    let (code, message) = code_and_message(subnet_in("us-east-1-nyc-1a").send().await);
    assert_eq!(code, "InvalidParameterValue");
    assert!(
        message.ends_with(
            "following availability zones: us-east-1a, us-east-1b, us-east-1c, us-east-1d, \
             us-east-1e, us-east-1f."
        ),
        "{message}"
    );

    // Opted in: listed, and subnets go there.
    opt_in(&ec2, "us-east-1-nyc-1").await;
    assert_eq!(
        zone_names(&ec2, false, &[]).await,
        [
            "us-east-1a",
            "us-east-1b",
            "us-east-1c",
            "us-east-1d",
            "us-east-1e",
            "us-east-1f",
            "us-east-1-nyc-1a"
        ]
    );
    assert_eq!(
        zone_names(&ec2, false, &[("opt-in-status", "opted-in")]).await,
        ["us-east-1-nyc-1a"]
    );
    assert_eq!(
        zone_names(&ec2, true, &[("parent-zone-name", "us-east-1b")]).await,
        ["us-east-1-nyc-1a", "us-east-1-wl1-nyc-wlz-1"]
    );
    let subnet = subnet_in("us-east-1-nyc-1a")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    assert_eq!(subnet.availability_zone(), Some("us-east-1-nyc-1a"));
    assert_eq!(subnet.availability_zone_id(), Some("use1-nyc1-az1"));
    // A volume there too; the Wavelength Zones are still closed.
    let volume = ec2
        .create_volume()
        .availability_zone("us-east-1-nyc-1a")
        .size(8)
        .send()
        .await
        .unwrap();
    assert_eq!(volume.availability_zone_id(), Some("use1-nyc1-az1"));
    let (code, _) = code_and_message(
        ec2.create_volume()
            .availability_zone("us-east-1-wl1-nyc-wlz-1")
            .size(8)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");

    // Only edge zone groups take an opt-in, and only `opted-in`.
    for (group, status) in [
        ("us-east-1", ModifyAvailabilityZoneOptInStatus::OptedIn),
        (
            "us-east-1-nowhere-1",
            ModifyAvailabilityZoneOptInStatus::OptedIn,
        ),
        (
            "us-east-1-nyc-1",
            ModifyAvailabilityZoneOptInStatus::NotOptedIn,
        ),
    ] {
        let (code, _) = code_and_message(
            ec2.modify_availability_zone_group()
                .group_name(group)
                .opt_in_status(status)
                .send()
                .await,
        );
        assert_eq!(code, "InvalidParameterValue", "{group}");
    }
    assert!(
        zone_names(&ec2, false, &[])
            .await
            .contains(&"us-east-1-nyc-1a".to_string())
    );
}

#[tokio::test]
async fn carrier_gateways_take_routes_and_hold_their_vpc() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    opt_in(&ec2, "us-east-1-wl1").await;
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.128.0/25")
        .availability_zone("us-east-1-wl1-was-wlz-1")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    assert_eq!(subnet.availability_zone_id(), Some("use1-wl1-was-wlz1"));

    let made = ec2
        .create_carrier_gateway()
        .vpc_id(&vpc_id)
        .tag_specifications(tag_spec(ResourceType::CarrierGateway, &[("Name", "edge")]))
        .send()
        .await
        .unwrap()
        .carrier_gateway
        .unwrap();
    assert_eq!(made.state(), Some(&CarrierGatewayState::Pending));
    assert_eq!(made.vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(made.owner_id(), Some("123456789012"));
    let id = made.carrier_gateway_id().unwrap().to_string();
    assert!(id.starts_with("cagw-"));
    let described = ec2
        .describe_carrier_gateways()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("tag:Name", &["edge"]))
        .send()
        .await
        .unwrap();
    let [g] = described.carrier_gateways() else {
        panic!("{described:?}")
    };
    assert_eq!(g.carrier_gateway_id(), Some(id.as_str()));
    assert_eq!(g.state(), Some(&CarrierGatewayState::Available));
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-type", &["carrier-gateway"]))
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags()[0].resource_id(), Some(id.as_str()));

    // A route of the VPC's table to it, active; none from another VPC's table or for IPv6.
    let table = route_table(&ec2, &vpc_id).await;
    ec2.create_route()
        .route_table_id(&table)
        .destination_cidr_block("0.0.0.0/0")
        .carrier_gateway_id(&id)
        .send()
        .await
        .unwrap();
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let other_table = route_table(&ec2, &other_vpc).await;
    let (code, _) = code_and_message(
        ec2.create_route()
            .route_table_id(&other_table)
            .destination_cidr_block("0.0.0.0/0")
            .carrier_gateway_id(&id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    let route_to_gateway = || async {
        ec2.describe_route_tables()
            .route_table_ids(&table)
            .send()
            .await
            .unwrap()
            .route_tables()[0]
            .routes()
            .iter()
            .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
            .cloned()
            .unwrap()
    };
    let route = route_to_gateway().await;
    assert_eq!(route.carrier_gateway_id(), Some(id.as_str()));
    assert_eq!(route.state(), Some(&RouteState::Active));

    // It holds its VPC; deleted, it is answered `deleting`, gone, and the route blackholed.
    ec2.delete_subnet()
        .subnet_id(subnet.subnet_id().unwrap())
        .send()
        .await
        .unwrap();
    let (code, _) = code_and_message(ec2.delete_vpc().vpc_id(&vpc_id).send().await);
    assert_eq!(code, "DependencyViolation");
    let deleted = ec2
        .delete_carrier_gateway()
        .carrier_gateway_id(&id)
        .send()
        .await
        .unwrap()
        .carrier_gateway
        .unwrap();
    assert_eq!(deleted.state(), Some(&CarrierGatewayState::Deleting));
    let (code, _) = code_and_message(
        ec2.describe_carrier_gateways()
            .carrier_gateway_ids(&id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidCarrierGatewayID.NotFound");
    assert_eq!(
        route_to_gateway().await.state(),
        Some(&RouteState::Blackhole)
    );
    let (code, _) = code_and_message(
        ec2.delete_carrier_gateway()
            .carrier_gateway_id(&id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidCarrierGatewayID.NotFound");
    let (code, _) = code_and_message(ec2.describe_carrier_gateways().max_results(1).send().await);
    assert_eq!(code, "InvalidParameterValue");
}

/// The carrier IP address of instance `id`'s primary interface, and its public IP address.
async fn addresses_of(ec2: &aws_sdk_ec2::Client, id: &str) -> (Option<String>, Option<String>) {
    let i = ec2
        .describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .clone();
    let carrier = i.network_interfaces()[0]
        .association()
        .and_then(|a| a.carrier_ip())
        .map(String::from);
    (carrier, i.public_ip_address().map(String::from))
}

#[tokio::test]
async fn edge_zones_take_addresses_of_their_own_border_group() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let allocate = |group: &str| ec2.allocate_address().network_border_group(group).send();

    // A group the account has not opted in to, or one the region lacks, gives nothing.
    let (code, _) = code_and_message(allocate("us-east-1-nyc-1").await);
    assert_eq!(code, "InvalidParameterValue");
    let (code, _) = code_and_message(allocate("us-east-1-nowhere-1").await);
    assert_eq!(code, "InvalidParameterValue");
    opt_in(&ec2, "us-east-1-nyc-1").await;
    opt_in(&ec2, "us-east-1-wl1").await;

    // A Local Zone's address is a public one; a Wavelength Zone's a carrier IP address.
    let local = allocate("us-east-1-nyc-1").await.unwrap();
    assert_eq!(local.network_border_group(), Some("us-east-1-nyc-1"));
    assert!(local.public_ip().is_some());
    assert_eq!(local.carrier_ip(), None);
    let carrier = allocate("us-east-1-wl1-nyc-wlz-1").await.unwrap();
    assert_eq!(
        carrier.network_border_group(),
        Some("us-east-1-wl1-nyc-wlz-1")
    );
    assert_eq!(carrier.public_ip(), None);
    let carrier_ip = carrier.carrier_ip().unwrap().to_string();
    let in_group = ec2
        .describe_addresses()
        .filters(filter("network-border-group", &["us-east-1-wl1-nyc-wlz-1"]))
        .send()
        .await
        .unwrap();
    let [a] = in_group.addresses() else {
        panic!("{in_group:?}")
    };
    assert_eq!(a.carrier_ip(), Some(carrier_ip.as_str()));

    // A Wavelength subnet maps no public addresses; its instances take carrier IP addresses.
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let wavelength = crate::subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1-wl1-nyc-wlz-1").await;
    let (code, _) = code_and_message(
        ec2.modify_subnet_attribute()
            .subnet_id(&wavelength)
            .map_public_ip_on_launch(
                aws_sdk_ec2::types::AttributeBooleanValue::builder()
                    .value(true)
                    .build(),
            )
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launch = |subnet: &str, carrier: Option<bool>, public: Option<bool>| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::T3Medium)
            .min_count(1)
            .max_count(1)
            .network_interfaces(
                InstanceNetworkInterfaceSpecification::builder()
                    .device_index(0)
                    .subnet_id(subnet)
                    .set_associate_carrier_ip_address(carrier)
                    .set_associate_public_ip_address(public)
                    .build(),
            )
            .send()
    };
    let (code, _) = code_and_message(launch(&wavelength, None, Some(true)).await);
    assert_eq!(code, "InvalidParameterCombination");
    let regional = crate::subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    let (code, _) = code_and_message(launch(&regional, Some(true), None).await);
    assert_eq!(code, "InvalidParameterCombination");
    let id = launch(&wavelength, Some(true), None)
        .await
        .unwrap()
        .instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    advance(&fake, 60);
    wait(&ec2, &id, InstanceStateName::Running).await;
    // The carrier IP address is the interface's `CarrierIp`, and the instance's
    // `PublicIpAddress` ("the public IPv4 address, or the Carrier IP address assigned to the
    // instance", the model says), with no public DNS name.
    let (pooled, public) = addresses_of(&ec2, &id).await;
    assert!(pooled.is_some());
    assert_eq!(public, pooled);
    for name in ["network-interface.association.carrier-ip", "ip-address"] {
        let found = ec2
            .describe_instances()
            .filters(filter(name, &[pooled.as_deref().unwrap()]))
            .send()
            .await
            .unwrap();
        assert_eq!(found.reservations().len(), 1, "{name}");
        let i = &found.reservations()[0].instances()[0];
        assert_eq!(i.public_dns_name().unwrap_or_default(), "", "{name}");
    }
    // Stopped and started, it takes a carrier IP address again.
    stop(&fake, &ec2, &id).await;
    assert_eq!(addresses_of(&ec2, &id).await, (None, None));
    ec2.start_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    advance(&fake, 60);
    wait(&ec2, &id, InstanceStateName::Running).await;
    assert!(addresses_of(&ec2, &id).await.0.is_some());

    // An address goes to an interface of its own border group only.
    let (code, _) = code_and_message(
        ec2.associate_address()
            .allocation_id(local.allocation_id().unwrap())
            .instance_id(&id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterCombination");
    ec2.associate_address()
        .allocation_id(carrier.allocation_id().unwrap())
        .instance_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        addresses_of(&ec2, &id).await,
        (Some(carrier_ip.clone()), Some(carrier_ip))
    );

    // Released with its own border group named, not another.
    let (code, _) = code_and_message(
        ec2.release_address()
            .allocation_id(local.allocation_id().unwrap())
            .network_border_group("us-east-1")
            .send()
            .await,
    );
    assert_eq!(code, "InvalidAddress.NotFound");
    ec2.release_address()
        .allocation_id(local.allocation_id().unwrap())
        .network_border_group("us-east-1-nyc-1")
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_launch_template_asks_for_a_carrier_ip_address() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    opt_in(&ec2, "us-east-1-wl1").await;
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let wavelength = crate::subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1-wl1-bos-wlz-1").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    ec2.create_launch_template()
        .launch_template_name("edge")
        .launch_template_data(
            aws_sdk_ec2::types::RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(InstanceType::T3Medium)
                .network_interfaces(
                    aws_sdk_ec2::types::LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
                        .device_index(0)
                        .subnet_id(&wavelength)
                        .associate_carrier_ip_address(true)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let version = ec2
        .describe_launch_template_versions()
        .launch_template_name("edge")
        .send()
        .await
        .unwrap();
    let data = version.launch_template_versions()[0]
        .launch_template_data()
        .unwrap();
    assert_eq!(
        data.network_interfaces()[0].associate_carrier_ip_address(),
        Some(true)
    );
    let id = ec2
        .run_instances()
        .launch_template(
            aws_sdk_ec2::types::LaunchTemplateSpecification::builder()
                .launch_template_name("edge")
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap()
        .instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    let (carrier, public) = addresses_of(&ec2, &id).await;
    assert!(carrier.is_some());
    assert_eq!(public, carrier);
}
