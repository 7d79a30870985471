//! IPv4 prefix delegation and subnet CIDR reservations through the SDK: /28 prefixes
//! assigned by count or by name (AssignPrivateIpAddresses, CreateNetworkInterface), what they
//! take of the subnet and of the interface's address slots, a subnet with no free /28 left
//! (`InsufficientCidrBlocks`), unassigning, and the reservations that steer where automatic
//! addresses and prefixes come from.

use aws_sdk_ec2::types::{Ipv4PrefixSpecificationRequest, ResourceType, SubnetCidrReservationType};

use crate::{code, code_and_message, empty_fake, filter, instance, subnet, tag_spec, vpc};

async fn free(ec2: &aws_sdk_ec2::Client, subnet_id: &str) -> i32 {
    ec2.describe_subnets()
        .subnet_ids(subnet_id)
        .send()
        .await
        .unwrap()
        .subnets()[0]
        .available_ip_address_count()
        .unwrap()
}

async fn prefixes_of(ec2: &aws_sdk_ec2::Client, eni: &str) -> Vec<String> {
    ec2.describe_network_interfaces()
        .network_interface_ids(eni)
        .send()
        .await
        .unwrap()
        .network_interfaces()[0]
        .ipv4_prefixes()
        .iter()
        .map(|p| p.ipv4_prefix().unwrap().to_string())
        .collect()
}

async fn primary_interface(ec2: &aws_sdk_ec2::Client, instance_id: &str) -> String {
    ec2.describe_instances()
        .instance_ids(instance_id)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .network_interfaces()[0]
        .network_interface_id()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn prefixes_are_free_28s_of_the_subnet_and_take_address_slots() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    // A t3.medium: six IPv4 addresses per interface.
    let i = instance(&ec2, &s).await;
    let eni = primary_interface(&ec2, &i).await;
    assert_eq!(free(&ec2, &s).await, 250);

    let out = ec2
        .assign_private_ip_addresses()
        .network_interface_id(&eni)
        .ipv4_prefix_count(2)
        .send()
        .await
        .unwrap();
    let assigned: Vec<&str> = out
        .assigned_ipv4_prefixes()
        .iter()
        .map(|p| p.ipv4_prefix().unwrap())
        .collect();
    // The first /28 holds AWS's reserved addresses and the primary address: the next two.
    assert_eq!(assigned, vec!["10.0.1.16/28", "10.0.1.32/28"]);
    assert!(out.assigned_private_ip_addresses().is_empty());
    assert_eq!(
        prefixes_of(&ec2, &eni).await,
        vec!["10.0.1.16/28", "10.0.1.32/28"]
    );
    assert_eq!(free(&ec2, &s).await, 250 - 32);
    let described = ec2
        .describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    let nic = &described.reservations()[0].instances()[0].network_interfaces()[0];
    let on_instance: Vec<&str> = nic
        .ipv4_prefixes()
        .iter()
        .map(|p| p.ipv4_prefix().unwrap())
        .collect();
    assert_eq!(on_instance, vec!["10.0.1.16/28", "10.0.1.32/28"]);

    // Named prefixes: a /28 written as a network, free.
    let assign_named = |p: &str| {
        ec2.assign_private_ip_addresses()
            .network_interface_id(&eni)
            .ipv4_prefixes(p)
            .send()
    };
    assert_eq!(
        code(assign_named("10.0.1.16/28").await),
        "InvalidIPAddress.InUse"
    );
    assert_eq!(
        code(assign_named("10.0.1.17/28").await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(assign_named("10.0.1.64/27").await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(assign_named("10.0.9.0/28").await),
        "InvalidParameterValue"
    );
    let named = assign_named("10.0.1.96/28").await.unwrap();
    assert_eq!(
        named.assigned_ipv4_prefixes()[0].ipv4_prefix(),
        Some("10.0.1.96/28")
    );
    assert_eq!(
        code(
            ec2.assign_private_ip_addresses()
                .network_interface_id(&eni)
                .ipv4_prefixes("10.0.1.112/28")
                .ipv4_prefix_count(1)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            ec2.assign_private_ip_addresses()
                .network_interface_id(&eni)
                .ipv4_prefix_count(1)
                .secondary_private_ip_address_count(1)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    // An address inside a prefix is in use.
    assert_eq!(
        code(
            ec2.assign_private_ip_addresses()
                .network_interface_id(&eni)
                .private_ip_addresses("10.0.1.20")
                .send()
                .await
        ),
        "InvalidIPAddress.InUse"
    );

    // Primary, three prefixes: two slots left of six.
    ec2.assign_private_ip_addresses()
        .network_interface_id(&eni)
        .ipv4_prefix_count(2)
        .send()
        .await
        .unwrap();
    let (c, m) = code_and_message(
        ec2.assign_private_ip_addresses()
            .network_interface_id(&eni)
            .secondary_private_ip_address_count(1)
            .send()
            .await,
    );
    assert_eq!(
        (c.as_str(), m.as_str()),
        (
            "PrivateIpAddressLimitExceeded",
            "Number of private addresses will exceed limit."
        )
    );
    assert_eq!(prefixes_of(&ec2, &eni).await.len(), 5);

    // Unassigned, a prefix's addresses go back to the subnet.
    assert_eq!(
        code(
            ec2.unassign_private_ip_addresses()
                .network_interface_id(&eni)
                .ipv4_prefixes("10.0.1.224/28")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    ec2.unassign_private_ip_addresses()
        .network_interface_id(&eni)
        .ipv4_prefixes("10.0.1.32/28")
        .send()
        .await
        .unwrap();
    let left = prefixes_of(&ec2, &eni).await;
    assert!(!left.contains(&"10.0.1.32/28".to_string()) && left.len() == 4);
    assert_eq!(free(&ec2, &s).await, 250 - 64);

    // The instance gone, its interface and prefixes are too.
    ec2.terminate_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    crate::advance(&fake, 60);
    crate::wait(&ec2, &i, aws_sdk_ec2::types::InstanceStateName::Terminated).await;
    assert_eq!(free(&ec2, &s).await, 251);
}

#[tokio::test]
async fn a_subnet_without_a_free_28_refuses_prefixes_and_keeps_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    // A /27: its two /28s hold AWS's reserved addresses.
    let small = subnet(&ec2, &vpc_id, "10.0.2.0/27", "us-east-1a").await;
    let (c, m) = code_and_message(
        ec2.create_network_interface()
            .subnet_id(&small)
            .ipv4_prefix_count(1)
            .send()
            .await,
    );
    assert_eq!(
        (c.as_str(), m.as_str()),
        (
            "InsufficientCidrBlocks",
            "The specified subnet does not have enough free cidr blocks to satisfy the request."
        )
    );
    let none = ec2
        .describe_network_interfaces()
        .filters(filter("subnet-id", &[&small]))
        .send()
        .await
        .unwrap();
    assert!(none.network_interfaces().is_empty());
    assert_eq!(free(&ec2, &small).await, 27);

    // A /26 has two usable /28s; an address in one leaves one.
    let s = subnet(&ec2, &vpc_id, "10.0.3.0/26", "us-east-1a").await;
    ec2.create_network_interface()
        .subnet_id(&s)
        .private_ip_address("10.0.3.20")
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&s)
                .ipv4_prefix_count(2)
                .send()
                .await
        ),
        "InsufficientCidrBlocks"
    );
    assert_eq!(free(&ec2, &s).await, 58);
    let made = ec2
        .create_network_interface()
        .subnet_id(&s)
        .ipv4_prefixes(
            Ipv4PrefixSpecificationRequest::builder()
                .ipv4_prefix("10.0.3.32/28")
                .build(),
        )
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    assert_eq!(made.ipv4_prefixes()[0].ipv4_prefix(), Some("10.0.3.32/28"));
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&s)
                .ipv4_prefix_count(1)
                .secondary_private_ip_address_count(1)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
}

#[tokio::test]
async fn cidr_reservations_steer_automatic_addresses_and_prefixes() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.4.0/24", "us-east-1a").await;
    let reserve = |cidr: &str, t: SubnetCidrReservationType| {
        ec2.create_subnet_cidr_reservation()
            .subnet_id(&s)
            .cidr(cidr)
            .reservation_type(t)
    };
    let prefixes = reserve("10.0.4.128/25", SubnetCidrReservationType::Prefix)
        .description("pods")
        .tag_specifications(tag_spec(
            ResourceType::SubnetCidrReservation,
            &[("use", "pods")],
        ))
        .send()
        .await
        .unwrap()
        .subnet_cidr_reservation
        .unwrap();
    let prefix_id = prefixes.subnet_cidr_reservation_id().unwrap().to_string();
    assert!(prefix_id.starts_with("scr-"), "{prefix_id}");
    assert_eq!(prefixes.cidr(), Some("10.0.4.128/25"));
    assert_eq!(prefixes.subnet_id(), Some(s.as_str()));
    assert_eq!(
        prefixes.reservation_type(),
        Some(&SubnetCidrReservationType::Prefix)
    );
    assert_eq!(prefixes.description(), Some("pods"));
    assert!(prefixes.owner_id().is_some());
    let explicit = reserve("10.0.4.0/27", SubnetCidrReservationType::Explicit)
        .send()
        .await
        .unwrap()
        .subnet_cidr_reservation
        .unwrap();
    let explicit_id = explicit.subnet_cidr_reservation_id().unwrap().to_string();

    // Addresses the subnet picks avoid both reservations; prefixes come from the prefix one.
    let eni = ec2
        .create_network_interface()
        .subnet_id(&s)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    assert_eq!(eni.private_ip_address(), Some("10.0.4.32"));
    let eni_id = eni.network_interface_id().unwrap().to_string();
    let out = ec2
        .assign_private_ip_addresses()
        .network_interface_id(&eni_id)
        .ipv4_prefix_count(2)
        .send()
        .await
        .unwrap();
    let got: Vec<&str> = out
        .assigned_ipv4_prefixes()
        .iter()
        .map(|p| p.ipv4_prefix().unwrap())
        .collect();
    assert_eq!(got, vec!["10.0.4.128/28", "10.0.4.144/28"]);
    let secondary = ec2
        .assign_private_ip_addresses()
        .network_interface_id(&eni_id)
        .secondary_private_ip_address_count(1)
        .send()
        .await
        .unwrap();
    assert_eq!(
        secondary.assigned_private_ip_addresses()[0].private_ip_address(),
        Some("10.0.4.33")
    );
    // Named, an address or a prefix of an explicit reservation is assigned.
    let named = ec2
        .create_network_interface()
        .subnet_id(&s)
        .private_ip_address("10.0.4.10")
        .send()
        .await
        .unwrap();
    assert_eq!(
        named.network_interface.unwrap().private_ip_address(),
        Some("10.0.4.10")
    );
    ec2.assign_private_ip_addresses()
        .network_interface_id(&eni_id)
        .ipv4_prefixes("10.0.4.16/28")
        .send()
        .await
        .unwrap();

    let listed = ec2
        .get_subnet_cidr_reservations()
        .subnet_id(&s)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.subnet_ipv4_cidr_reservations().len(), 2);
    assert!(listed.subnet_ipv6_cidr_reservations().is_empty());
    let only_explicit = ec2
        .get_subnet_cidr_reservations()
        .subnet_id(&s)
        .filters(filter("reservationType", &["explicit"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        only_explicit.subnet_ipv4_cidr_reservations()[0].subnet_cidr_reservation_id(),
        Some(explicit_id.as_str())
    );
    let tagged = ec2
        .get_subnet_cidr_reservations()
        .subnet_id(&s)
        .filters(filter("tag:use", &["pods"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        tagged.subnet_ipv4_cidr_reservations()[0].tags()[0].value(),
        Some("pods")
    );
    let described_tags = ec2
        .describe_tags()
        .filters(filter("resource-type", &["subnet-cidr-reservation"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        described_tags.tags()[0].resource_id(),
        Some(prefix_id.as_str())
    );

    // Refusals: overlap, outside the subnet, host bits, a prefix reservation under a /28.
    for (cidr, t) in [
        ("10.0.4.128/26", SubnetCidrReservationType::Explicit),
        ("10.0.5.0/28", SubnetCidrReservationType::Explicit),
        ("10.0.4.65/26", SubnetCidrReservationType::Explicit),
        ("10.0.4.64/29", SubnetCidrReservationType::Prefix),
    ] {
        assert_eq!(
            code(reserve(cidr, t).send().await),
            "InvalidParameterValue",
            "{cidr}"
        );
    }

    // Deleted: answered as it was, gone, and its range free for automatic addresses again.
    let deleted = ec2
        .delete_subnet_cidr_reservation()
        .subnet_cidr_reservation_id(&explicit_id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        deleted.deleted_subnet_cidr_reservation().unwrap().cidr(),
        Some("10.0.4.0/27")
    );
    assert_eq!(
        code(
            ec2.delete_subnet_cidr_reservation()
                .subnet_cidr_reservation_id(&explicit_id)
                .send()
                .await
        ),
        "InvalidSubnetCidrReservationID.NotFound"
    );
    assert_eq!(
        code(
            ec2.delete_subnet_cidr_reservation()
                .subnet_cidr_reservation_id("scr-zz")
                .send()
                .await
        ),
        "InvalidSubnetCidrReservationID.Malformed"
    );
    let next = ec2
        .create_network_interface()
        .subnet_id(&s)
        .send()
        .await
        .unwrap();
    assert_eq!(
        next.network_interface.unwrap().private_ip_address(),
        Some("10.0.4.4")
    );
    let left = ec2
        .get_subnet_cidr_reservations()
        .subnet_id(&s)
        .send()
        .await
        .unwrap();
    assert_eq!(left.subnet_ipv4_cidr_reservations().len(), 1);
}

#[tokio::test]
async fn an_ipv6_reservation_is_listed_apart_and_within_the_subnet_block() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    let block: ipnet::Ipv6Net = v.ipv6_cidr_block_association_set()[0]
        .ipv6_cidr_block()
        .unwrap()
        .parse()
        .unwrap();
    let mut sixty_fours = block.subnets(64).unwrap();
    let (first, second) = (sixty_fours.next().unwrap(), sixty_fours.next().unwrap());
    let s = ec2
        .create_subnet()
        .vpc_id(v.vpc_id().unwrap())
        .cidr_block("10.0.1.0/24")
        .ipv6_cidr_block(first.to_string())
        .availability_zone("us-east-1a")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    let inside = first.subnets(80).unwrap().nth(1).unwrap().to_string();
    let outside = second.subnets(80).unwrap().next().unwrap().to_string();
    let reserve = |cidr: String| {
        ec2.create_subnet_cidr_reservation()
            .subnet_id(&s)
            .cidr(cidr)
            .reservation_type(SubnetCidrReservationType::Prefix)
            .send()
    };
    assert_eq!(code(reserve(outside).await), "InvalidParameterValue");
    reserve(inside.clone()).await.unwrap();
    let listed = ec2
        .get_subnet_cidr_reservations()
        .subnet_id(&s)
        .send()
        .await
        .unwrap();
    assert!(listed.subnet_ipv4_cidr_reservations().is_empty());
    assert_eq!(
        listed.subnet_ipv6_cidr_reservations()[0].cidr(),
        Some(inside.as_str())
    );
}

#[tokio::test]
async fn ipv6_prefixes_are_80s_of_the_subnet_block() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    let vpc_id = v.vpc_id().unwrap().to_string();
    let block: ipnet::Ipv6Net = v.ipv6_cidr_block_association_set()[0]
        .ipv6_cidr_block()
        .unwrap()
        .parse()
        .unwrap();
    let sixty_four = block.subnets(64).unwrap().next().unwrap();
    let s = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.1.0/24")
        .ipv6_cidr_block(sixty_four.to_string())
        .availability_zone("us-east-1a")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    let v4_only = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&v4_only)
                .ipv6_prefix_count(1)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert!(
        ec2.describe_network_interfaces()
            .filters(filter("subnet-id", &[&v4_only]))
            .send()
            .await
            .unwrap()
            .network_interfaces()
            .is_empty()
    );

    let eni = ec2
        .create_network_interface()
        .subnet_id(&s)
        .ipv6_prefix_count(1)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    let eni_id = eni.network_interface_id().unwrap().to_string();
    let first: ipnet::Ipv6Net = eni.ipv6_prefixes()[0]
        .ipv6_prefix()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(first.prefix_len(), 80);
    assert!(sixty_four.contains(&first), "{first}");
    let more = ec2
        .assign_ipv6_addresses()
        .network_interface_id(&eni_id)
        .ipv6_prefix_count(2)
        .send()
        .await
        .unwrap();
    let mut held: Vec<String> = more.assigned_ipv6_prefixes().to_vec();
    held.push(first.to_string());
    held.sort();
    held.dedup();
    assert_eq!(held.len(), 3);
    let described = ec2
        .describe_network_interfaces()
        .network_interface_ids(&eni_id)
        .send()
        .await
        .unwrap();
    let mut shown: Vec<String> = described.network_interfaces()[0]
        .ipv6_prefixes()
        .iter()
        .map(|p| p.ipv6_prefix().unwrap().to_string())
        .collect();
    shown.sort();
    assert_eq!(shown, held);

    // Named: a free /80; the first holds AWS's reserved addresses; an address in a prefix is
    // in use.
    let eightys: Vec<ipnet::Ipv6Net> = sixty_four.subnets(80).unwrap().take(8).collect();
    let free_one = eightys[1..]
        .iter()
        .find(|p| !held.contains(&p.to_string()))
        .unwrap()
        .to_string();
    let assign_named = |p: String| {
        ec2.assign_ipv6_addresses()
            .network_interface_id(&eni_id)
            .ipv6_prefixes(p)
            .send()
    };
    assert_eq!(
        code(assign_named(eightys[0].to_string()).await),
        "InvalidIPAddress.InUse"
    );
    assert_eq!(
        code(assign_named(format!("{}/96", eightys[1].network())).await),
        "InvalidParameterValue"
    );
    assign_named(free_one.clone()).await.unwrap();
    assert_eq!(
        code(assign_named(free_one.clone()).await),
        "InvalidIPAddress.InUse"
    );
    let inside = free_one.parse::<ipnet::Ipv6Net>().unwrap().network();
    let inside = std::net::Ipv6Addr::from(u128::from(inside) + 9).to_string();
    assert_eq!(
        code(
            ec2.assign_ipv6_addresses()
                .network_interface_id(&eni_id)
                .ipv6_addresses(inside)
                .send()
                .await
        ),
        "InvalidIPAddress.InUse"
    );
    assert_eq!(
        code(
            ec2.assign_ipv6_addresses()
                .network_interface_id(&eni_id)
                .ipv6_prefix_count(1)
                .ipv6_address_count(1)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );

    // A prefix reservation: the next prefixes come from it.
    let reserved = sixty_four.subnets(72).unwrap().nth(200).unwrap();
    ec2.create_subnet_cidr_reservation()
        .subnet_id(&s)
        .cidr(reserved.to_string())
        .reservation_type(SubnetCidrReservationType::Prefix)
        .send()
        .await
        .unwrap();
    let from_reservation = ec2
        .assign_ipv6_addresses()
        .network_interface_id(&eni_id)
        .ipv6_prefix_count(1)
        .send()
        .await
        .unwrap();
    let got: ipnet::Ipv6Net = from_reservation.assigned_ipv6_prefixes()[0]
        .parse()
        .unwrap();
    assert_eq!(got, reserved.subnets(80).unwrap().next().unwrap());

    // Unassigned, and given back when the interface goes.
    assert_eq!(
        code(
            ec2.unassign_ipv6_addresses()
                .network_interface_id(&eni_id)
                .ipv6_prefixes(eightys[0].to_string())
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let out = ec2
        .unassign_ipv6_addresses()
        .network_interface_id(&eni_id)
        .ipv6_prefixes(got.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(out.unassigned_ipv6_prefixes(), &[got.to_string()]);
    ec2.delete_network_interface()
        .network_interface_id(&eni_id)
        .send()
        .await
        .unwrap();
    let again = ec2
        .create_network_interface()
        .subnet_id(&s)
        .ipv6_prefixes(
            aws_sdk_ec2::types::Ipv6PrefixSpecificationRequest::builder()
                .ipv6_prefix(free_one.clone())
                .build(),
        )
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    assert_eq!(
        again.ipv6_prefixes()[0].ipv6_prefix(),
        Some(free_one.as_str())
    );
    // A launch interface takes them too.
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launched = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
        .network_interfaces(
            aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification::builder()
                .device_index(0)
                .subnet_id(&s)
                .ipv6_prefix_count(2)
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let held = launched.instances()[0].network_interfaces()[0].ipv6_prefixes();
    assert_eq!(held.len(), 2);
    for p in held {
        let net: ipnet::Ipv6Net = p.ipv6_prefix().unwrap().parse().unwrap();
        assert_eq!(net.prefix_len(), 80);
        assert!(sixty_four.contains(&net));
    }
}

#[tokio::test]
async fn reserved_space_does_not_count_as_room_for_automatic_addresses() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    // A /28: eleven usable addresses, .4 to .14; .8 to .15 reserved leaves four.
    let s = subnet(&ec2, &vpc_id, "10.0.6.0/28", "us-east-1a").await;
    ec2.create_subnet_cidr_reservation()
        .subnet_id(&s)
        .cidr("10.0.6.8/29")
        .reservation_type(SubnetCidrReservationType::Explicit)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&s)
                .secondary_private_ip_address_count(4)
                .send()
                .await
        ),
        "InsufficientFreeAddressesInSubnet"
    );
    let none = ec2
        .describe_network_interfaces()
        .filters(filter("subnet-id", &[&s]))
        .send()
        .await
        .unwrap();
    assert!(none.network_interfaces().is_empty());
    assert_eq!(free(&ec2, &s).await, 11);
    let made = ec2
        .create_network_interface()
        .subnet_id(&s)
        .secondary_private_ip_address_count(3)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    let mut addresses: Vec<&str> = made
        .private_ip_addresses()
        .iter()
        .map(|a| a.private_ip_address().unwrap())
        .collect();
    addresses.sort();
    assert_eq!(
        addresses,
        vec!["10.0.6.4", "10.0.6.5", "10.0.6.6", "10.0.6.7"]
    );
}

/// A launch interface asking for prefixes, on a t3.medium (six IPv4 addresses per
/// interface).
fn launch(
    ec2: &aws_sdk_ec2::Client,
    ami: &str,
    nic: aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification,
    count: i32,
) -> aws_sdk_ec2::operation::run_instances::builders::RunInstancesFluentBuilder {
    ec2.run_instances()
        .image_id(ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
        .network_interfaces(nic)
        .min_count(count)
        .max_count(count)
}

#[tokio::test]
async fn a_launch_gives_its_new_interfaces_the_prefixes_they_ask_for() {
    use aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification as Nic;
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let nic = |count: i32| {
        Nic::builder()
            .device_index(0)
            .subnet_id(&s)
            .ipv4_prefix_count(count)
            .build()
    };
    assert_eq!(free(&ec2, &s).await, 251);
    // Three instances, five /28s each: the subnet (sixteen /28s, the first and the last
    // holding AWS's reserved addresses) has fourteen free.
    assert_eq!(
        code(launch(&ec2, &ami, nic(5), 3).send().await),
        "InsufficientCidrBlocks"
    );
    // Nothing was made: no instance, no interface, every address free.
    assert!(
        ec2.describe_network_interfaces()
            .send()
            .await
            .unwrap()
            .network_interfaces()
            .is_empty()
    );
    assert_eq!(free(&ec2, &s).await, 251);
    // One instance, two /28s: each takes sixteen addresses and one address slot.
    let out = launch(&ec2, &ami, nic(2), 1).send().await.unwrap();
    let launched = &out.instances()[0];
    let shown: Vec<&str> = launched.network_interfaces()[0]
        .ipv4_prefixes()
        .iter()
        .map(|p| p.ipv4_prefix().unwrap())
        .collect();
    assert_eq!(shown.len(), 2);
    let eni = launched.network_interfaces()[0]
        .network_interface_id()
        .unwrap()
        .to_string();
    let held = prefixes_of(&ec2, &eni).await;
    assert_eq!(held, shown);
    for p in &held {
        let net: ipnet::Ipv4Net = p.parse().unwrap();
        assert_eq!(net.prefix_len(), 28);
        assert!(
            "10.0.1.0/26"
                .parse::<ipnet::Ipv4Net>()
                .unwrap()
                .contains(&net)
        );
        let primary: std::net::Ipv4Addr = launched.private_ip_address().unwrap().parse().unwrap();
        assert!(!net.contains(&primary), "{p} holds the primary address");
    }
    assert_eq!(free(&ec2, &s).await, 251 - 1 - 32);
    // The address slots: a primary and six prefixes is more than a t3.medium's six.
    assert_eq!(
        code(launch(&ec2, &ami, nic(6), 1).send().await),
        "PrivateIpAddressLimitExceeded"
    );
    // Prefixes are not asked for with secondary addresses, nor named for several instances.
    assert_eq!(
        code(
            launch(
                &ec2,
                &ami,
                Nic::builder()
                    .device_index(0)
                    .subnet_id(&s)
                    .ipv4_prefix_count(1)
                    .secondary_private_ip_address_count(1)
                    .build(),
                1
            )
            .send()
            .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            launch(
                &ec2,
                &ami,
                Nic::builder()
                    .device_index(0)
                    .subnet_id(&s)
                    .ipv4_prefixes(
                        Ipv4PrefixSpecificationRequest::builder()
                            .ipv4_prefix("10.0.1.48/28")
                            .build()
                    )
                    .build(),
                2
            )
            .send()
            .await
        ),
        "InvalidParameterCombination"
    );
    // A launch template's interface carries them to the launch.
    use aws_sdk_ec2::types::{
        LaunchTemplateInstanceNetworkInterfaceSpecificationRequest as TemplateNic,
        RequestLaunchTemplateData,
    };
    let template_nic = |prefix: Option<&str>| {
        let b = TemplateNic::builder().device_index(0).subnet_id(&s);
        match prefix {
            Some(p) => b.ipv4_prefixes(
                Ipv4PrefixSpecificationRequest::builder()
                    .ipv4_prefix(p)
                    .build(),
            ),
            None => b.ipv4_prefix_count(1),
        }
        .build()
    };
    assert_eq!(
        code(
            ec2.create_launch_template()
                .launch_template_name("wrong-length")
                .launch_template_data(
                    RequestLaunchTemplateData::builder()
                        .network_interfaces(template_nic(Some("10.0.1.64/27")))
                        .build()
                )
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let template = ec2
        .create_launch_template()
        .launch_template_name("with-prefixes")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(aws_sdk_ec2::types::InstanceType::T3Medium)
                .network_interfaces(template_nic(None))
                .build(),
        )
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap()
        .launch_template_id
        .unwrap();
    let versions = ec2
        .describe_launch_template_versions()
        .launch_template_id(&template)
        .send()
        .await
        .unwrap();
    let stored = &versions.launch_template_versions()[0]
        .launch_template_data()
        .unwrap()
        .network_interfaces()[0];
    assert_eq!(stored.ipv4_prefix_count(), Some(1));
    let from_template = ec2
        .run_instances()
        .launch_template(
            aws_sdk_ec2::types::LaunchTemplateSpecification::builder()
                .launch_template_id(&template)
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let other = &from_template.instances()[0];
    assert_eq!(other.network_interfaces()[0].ipv4_prefixes().len(), 1);
    assert_eq!(free(&ec2, &s).await, 251 - 1 - 32 - 1 - 16);
    let other_id = other.instance_id().unwrap().to_string();
    ec2.terminate_instances()
        .instance_ids(&other_id)
        .send()
        .await
        .unwrap();
    crate::wait(
        &ec2,
        &other_id,
        aws_sdk_ec2::types::InstanceStateName::Terminated,
    )
    .await;
    // Terminated, the instance's interface gives its prefixes back.
    let id = launched.instance_id().unwrap().to_string();
    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    crate::wait(&ec2, &id, aws_sdk_ec2::types::InstanceStateName::Terminated).await;
    assert_eq!(free(&ec2, &s).await, 251);
}
