//! A NAT gateway's secondary addresses through the SDK: Elastic IPs of a public gateway
//! (at creation, AssociateNatGatewayAddress, DisassociateNatGatewayAddress) and private
//! addresses of a private one (AssignPrivateNatGatewayAddress,
//! UnassignPrivateNatGatewayAddress), each checked through DescribeNatGateways,
//! DescribeAddresses and DescribeNetworkInterfaces; and an Elastic IP on a secondary private
//! address of any interface (AssociateAddress with PrivateIpAddress).

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    ConnectivityType, NatGateway, NatGatewayAddress, NatGatewayAddressStatus,
};
use fakeaws::sim::transitions::Subject;

use crate::nat_gateway::allocation;
use crate::{advance, code, code_and_message, empty_fake, gateway, subnet, vpc};

async fn described(ec2: &aws_sdk_ec2::Client, id: &str) -> NatGateway {
    ec2.describe_nat_gateways()
        .nat_gateway_ids(id)
        .send()
        .await
        .unwrap()
        .nat_gateways()[0]
        .clone()
}

fn secondaries(n: &NatGateway) -> Vec<NatGatewayAddress> {
    n.nat_gateway_addresses()
        .iter()
        .filter(|a| a.is_primary() == Some(false))
        .cloned()
        .collect()
}

/// The association of Elastic IP `alloc`, as DescribeAddresses shows it: (association id,
/// interface, private address).
async fn association_of(
    ec2: &aws_sdk_ec2::Client,
    alloc: &str,
) -> Option<(String, String, String)> {
    let out = ec2
        .describe_addresses()
        .allocation_ids(alloc)
        .send()
        .await
        .unwrap();
    let a = &out.addresses()[0];
    a.association_id().map(|id| {
        (
            id.to_string(),
            a.network_interface_id().unwrap_or_default().to_string(),
            a.private_ip_address().unwrap_or_default().to_string(),
        )
    })
}

/// The free addresses of subnet `s`.
async fn free(ec2: &aws_sdk_ec2::Client, s: &str) -> i32 {
    ec2.describe_subnets()
        .subnet_ids(s)
        .send()
        .await
        .unwrap()
        .subnets()[0]
        .available_ip_address_count()
        .unwrap()
}

/// A VPC with an internet gateway and a subnet `10.0.1.0/24` in us-east-1a.
async fn network(ec2: &aws_sdk_ec2::Client) -> String {
    let vpc_id = vpc(ec2, "10.0.0.0/16").await;
    gateway(ec2, &vpc_id).await;
    subnet(ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await
}

#[tokio::test]
async fn secondary_elastic_ips_at_creation_and_after() {
    let mut limits = fakeaws::Limits::default();
    limits.set("eips-per-nat-gateway", 3).unwrap();
    let fake = fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        limits,
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_961_900),
        ),
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let s = network(&ec2).await;
    let eips = [
        allocation(&ec2).await,
        allocation(&ec2).await,
        allocation(&ec2).await,
        allocation(&ec2).await,
    ];
    let created = ec2
        .create_nat_gateway()
        .subnet_id(&s)
        .allocation_id(&eips[0])
        .private_ip_address("10.0.1.40")
        .secondary_allocation_ids(&eips[1])
        .secondary_private_ip_addresses("10.0.1.50")
        .send()
        .await
        .unwrap();
    let id = created
        .nat_gateway()
        .unwrap()
        .nat_gateway_id()
        .unwrap()
        .to_string();
    ec2.wait_until_nat_gateway_available()
        .nat_gateway_ids(&id)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let n = described(&ec2, &id).await;
    let primary = &n.nat_gateway_addresses()[0];
    assert_eq!(primary.private_ip(), Some("10.0.1.40"));
    assert_eq!(primary.allocation_id(), Some(eips[0].as_str()));
    let second = secondaries(&n);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].private_ip(), Some("10.0.1.50"));
    assert_eq!(second[0].allocation_id(), Some(eips[1].as_str()));
    assert_eq!(
        second[0].status(),
        Some(&NatGatewayAddressStatus::Succeeded)
    );
    // DescribeAddresses shows the Elastic IP on the interface's secondary address.
    let eni = primary.network_interface_id().unwrap().to_string();
    let (assoc, on, at) = association_of(&ec2, &eips[1]).await.unwrap();
    assert_eq!((on.as_str(), at.as_str()), (eni.as_str(), "10.0.1.50"));
    assert_eq!(second[0].association_id(), Some(assoc.as_str()));
    let interface = ec2
        .describe_network_interfaces()
        .network_interface_ids(&eni)
        .send()
        .await
        .unwrap();
    let addresses = interface.network_interfaces()[0].private_ip_addresses();
    let public: Vec<(&str, Option<&str>)> = addresses
        .iter()
        .map(|a| {
            (
                a.private_ip_address().unwrap(),
                a.association().and_then(|x| x.allocation_id()),
            )
        })
        .collect();
    assert_eq!(
        public,
        [
            ("10.0.1.40", Some(eips[0].as_str())),
            ("10.0.1.50", Some(eips[1].as_str()))
        ]
    );

    // One more, on an address the subnet picks: `associating`, then `succeeded`.
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::NatGateway));
    let answer = ec2
        .associate_nat_gateway_address()
        .nat_gateway_id(&id)
        .allocation_ids(&eips[2])
        .send()
        .await
        .unwrap();
    let given = &answer.nat_gateway_addresses()[0];
    assert_eq!(given.allocation_id(), Some(eips[2].as_str()));
    assert_eq!(given.status(), Some(&NatGatewayAddressStatus::Associating));
    assert_eq!(given.is_primary(), Some(false));
    // While it is on its way, any other change is refused with AWS's code and words.
    let (c, m) = code_and_message(
        ec2.associate_nat_gateway_address()
            .nat_gateway_id(&id)
            .allocation_ids(&eips[3])
            .send()
            .await,
    );
    assert_eq!(c, "OperationInProgress");
    assert_eq!(
        m,
        format!(
            "Service is currently ASSOCIATING the following EIPs: [{}].",
            eips[2]
        )
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::NatGateway));
    let second = secondaries(&described(&ec2, &id).await);
    assert_eq!(second.len(), 2);
    assert!(
        second
            .iter()
            .all(|a| a.status() == Some(&NatGatewayAddressStatus::Succeeded))
    );
    // The quota (raised to 3 here) counts the primary.
    assert_eq!(
        code(
            ec2.associate_nat_gateway_address()
                .nat_gateway_id(&id)
                .allocation_ids(&eips[3])
                .send()
                .await
        ),
        "AddressLimitExceeded"
    );
    // The gateway's Elastic IPs are its own: neither DisassociateAddress nor ReleaseAddress
    // takes them.
    assert_eq!(
        code(ec2.release_address().allocation_id(&eips[2]).send().await),
        "InvalidIPAddress.InUse"
    );
    let (assoc2, _, at2) = association_of(&ec2, &eips[2]).await.unwrap();
    assert_eq!(
        code(
            ec2.disassociate_address()
                .association_id(&assoc2)
                .send()
                .await
        ),
        "InvalidIPAddress.InUse"
    );

    // Disassociating drains until MaxDrainDurationSeconds is up on the fake's clock.
    let primary_assoc = n.nat_gateway_addresses()[0]
        .association_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.disassociate_nat_gateway_address()
                .nat_gateway_id(&id)
                .association_ids(&primary_assoc)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let answer = ec2
        .disassociate_nat_gateway_address()
        .nat_gateway_id(&id)
        .association_ids(&assoc2)
        .max_drain_duration_seconds(60)
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.nat_gateway_addresses()[0].status(),
        Some(&NatGatewayAddressStatus::Disassociating)
    );
    advance(&fake, 59);
    let draining = secondaries(&described(&ec2, &id).await);
    assert!(
        draining
            .iter()
            .any(|a| a.status() == Some(&NatGatewayAddressStatus::Disassociating))
    );
    assert!(association_of(&ec2, &eips[2]).await.is_some());
    advance(&fake, 1);
    let after = secondaries(&described(&ec2, &id).await);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].allocation_id(), Some(eips[1].as_str()));
    // The Elastic IP is free and still allocated; its private address is the subnet's again.
    assert!(association_of(&ec2, &eips[2]).await.is_none());
    let interface = ec2
        .describe_network_interfaces()
        .network_interface_ids(&eni)
        .send()
        .await
        .unwrap();
    assert!(
        !interface.network_interfaces()[0]
            .private_ip_addresses()
            .iter()
            .any(|a| a.private_ip_address() == Some(at2.as_str()))
    );
    ec2.release_address()
        .allocation_id(&eips[2])
        .send()
        .await
        .unwrap();

    // Deleting the gateway frees every Elastic IP it held.
    ec2.delete_nat_gateway()
        .nat_gateway_id(&id)
        .send()
        .await
        .unwrap();
    ec2.wait_until_nat_gateway_deleted()
        .nat_gateway_ids(&id)
        .wait(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    for alloc in &eips[..2] {
        assert!(association_of(&ec2, alloc).await.is_none(), "{alloc}");
    }
}

#[tokio::test]
async fn refusals_change_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let s = network(&ec2).await;
    let (a, b, c) = (
        allocation(&ec2).await,
        allocation(&ec2).await,
        allocation(&ec2).await,
    );
    // AWS's default: two Elastic IPs per public gateway, the primary counted.
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id(&s)
                .allocation_id(&a)
                .secondary_allocation_ids(&b)
                .secondary_allocation_ids(&c)
                .send()
                .await
        ),
        "AddressLimitExceeded"
    );
    // Named addresses pair with the Elastic IPs one to one.
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id(&s)
                .allocation_id(&a)
                .secondary_private_ip_addresses("10.0.1.50")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // A count is for private gateways.
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id(&s)
                .allocation_id(&a)
                .secondary_private_ip_address_count(2)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    // An address outside the subnet is refused before anything is made.
    assert_eq!(
        code(
            ec2.create_nat_gateway()
                .subnet_id(&s)
                .allocation_id(&a)
                .secondary_allocation_ids(&b)
                .secondary_private_ip_addresses("10.0.0.9")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let left = ec2.describe_nat_gateways().send().await.unwrap();
    assert!(left.nat_gateways().is_empty());
    // A secondary address named where the subnet would put the primary: the primary goes
    // elsewhere.
    let lowest = ec2
        .create_nat_gateway()
        .subnet_id(&s)
        .allocation_id(&a)
        .secondary_allocation_ids(&b)
        .secondary_private_ip_addresses("10.0.1.4")
        .send()
        .await
        .unwrap()
        .nat_gateway
        .unwrap();
    let addresses: Vec<(&str, bool)> = lowest
        .nat_gateway_addresses()
        .iter()
        .map(|x| (x.private_ip().unwrap(), x.is_primary().unwrap()))
        .collect();
    assert_eq!(addresses, [("10.0.1.5", true), ("10.0.1.4", false)]);
    ec2.delete_nat_gateway()
        .nat_gateway_id(lowest.nat_gateway_id().unwrap())
        .send()
        .await
        .unwrap();
    let left = ec2
        .describe_nat_gateways()
        .filter(crate::filter("state", &["pending", "available"]))
        .send()
        .await
        .unwrap();
    assert!(left.nat_gateways().is_empty());
    let interfaces = ec2.describe_network_interfaces().send().await.unwrap();
    assert!(interfaces.network_interfaces().is_empty());
    for alloc in [&a, &b, &c] {
        assert!(association_of(&ec2, alloc).await.is_none());
    }
    assert_eq!(
        code(
            ec2.associate_nat_gateway_address()
                .nat_gateway_id("nat-0123456789abcdef0")
                .allocation_ids(&a)
                .send()
                .await
        ),
        "NatGatewayNotFound"
    );
}

#[tokio::test]
async fn private_gateway_addresses() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let free_before = free(&ec2, &s).await;
    let created = ec2
        .create_nat_gateway()
        .subnet_id(&s)
        .connectivity_type(ConnectivityType::Private)
        .secondary_private_ip_address_count(2)
        .send()
        .await
        .unwrap();
    let id = created
        .nat_gateway()
        .unwrap()
        .nat_gateway_id()
        .unwrap()
        .to_string();
    let n = described(&ec2, &id).await;
    assert_eq!(n.nat_gateway_addresses().len(), 3);
    assert!(
        secondaries(&n).iter().all(|a| a.allocation_id().is_none()
            && a.status() == Some(&NatGatewayAddressStatus::Succeeded))
    );
    // Every address is one of the subnet's.
    assert_eq!(free(&ec2, &s).await, free_before - 3);

    // By count (the answer names no address, as AWS's), then by name.
    let answer = ec2
        .assign_private_nat_gateway_address()
        .nat_gateway_id(&id)
        .private_ip_address_count(2)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.nat_gateway_addresses().len(), 2);
    assert!(answer.nat_gateway_addresses().iter().all(
        |a| a.private_ip().is_none() && a.status() == Some(&NatGatewayAddressStatus::Assigning)
    ));
    ec2.assign_private_nat_gateway_address()
        .nat_gateway_id(&id)
        .private_ip_addresses("10.0.1.200")
        .send()
        .await
        .unwrap();
    assert_eq!(free(&ec2, &s).await, free_before - 6);
    // Eight at most, the primary included (not adjustable).
    assert_eq!(
        code(
            ec2.assign_private_nat_gateway_address()
                .nat_gateway_id(&id)
                .private_ip_address_count(3)
                .send()
                .await
        ),
        "PrivateIpAddressLimitExceeded"
    );
    // A private gateway takes no Elastic IP.
    let alloc = allocation(&ec2).await;
    assert_eq!(
        code(
            ec2.associate_nat_gateway_address()
                .nat_gateway_id(&id)
                .allocation_ids(&alloc)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // The primary stays.
    let primary = described(&ec2, &id).await.nat_gateway_addresses()[0]
        .private_ip()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.unassign_private_nat_gateway_address()
                .nat_gateway_id(&id)
                .private_ip_addresses(&primary)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let answer = ec2
        .unassign_private_nat_gateway_address()
        .nat_gateway_id(&id)
        .private_ip_addresses("10.0.1.200")
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.nat_gateway_addresses()[0].status(),
        Some(&NatGatewayAddressStatus::Unassigning)
    );
    assert_eq!(
        code(
            ec2.assign_private_nat_gateway_address()
                .nat_gateway_id(&id)
                .private_ip_address_count(1)
                .send()
                .await
        ),
        "OperationInProgress"
    );
    // AWS's default drain: 350 seconds.
    advance(&fake, 349);
    assert_eq!(free(&ec2, &s).await, free_before - 6);
    advance(&fake, 1);
    assert_eq!(free(&ec2, &s).await, free_before - 5);
    let n = described(&ec2, &id).await;
    assert!(
        !n.nat_gateway_addresses()
            .iter()
            .any(|a| a.private_ip() == Some("10.0.1.200"))
    );
}

#[tokio::test]
async fn elastic_ip_on_a_secondary_private_address() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let s = network(&ec2).await;
    let eni = ec2
        .create_network_interface()
        .subnet_id(&s)
        .private_ip_address("10.0.1.10")
        .private_ip_addresses(
            aws_sdk_ec2::types::PrivateIpAddressSpecification::builder()
                .private_ip_address("10.0.1.11")
                .primary(false)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    let (a, b) = (allocation(&ec2).await, allocation(&ec2).await);
    ec2.associate_address()
        .allocation_id(&a)
        .network_interface_id(&eni)
        .send()
        .await
        .unwrap();
    ec2.associate_address()
        .allocation_id(&b)
        .network_interface_id(&eni)
        .private_ip_address("10.0.1.11")
        .send()
        .await
        .unwrap();
    // Both stay: one on each address.
    let (_, _, at_a) = association_of(&ec2, &a).await.unwrap();
    let (_, _, at_b) = association_of(&ec2, &b).await.unwrap();
    assert_eq!((at_a.as_str(), at_b.as_str()), ("10.0.1.10", "10.0.1.11"));
    let public_b = ec2
        .describe_addresses()
        .allocation_ids(&b)
        .send()
        .await
        .unwrap()
        .addresses()[0]
        .public_ip()
        .unwrap()
        .to_string();
    let found = ec2
        .describe_network_interfaces()
        .filters(crate::filter(
            "addresses.association.public-ip",
            &[&public_b],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(found.network_interfaces().len(), 1);
    // An address the interface does not hold is refused.
    assert_eq!(
        code(
            ec2.associate_address()
                .allocation_id(&b)
                .network_interface_id(&eni)
                .private_ip_address("10.0.1.12")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // Moving the address to another interface moves its Elastic IP (AWS's documented
    // behaviour of AllowReassignment).
    let other = ec2
        .create_network_interface()
        .subnet_id(&s)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    ec2.assign_private_ip_addresses()
        .network_interface_id(&other)
        .private_ip_addresses("10.0.1.11")
        .allow_reassignment(true)
        .send()
        .await
        .unwrap();
    let (_, on, at) = association_of(&ec2, &b).await.unwrap();
    assert_eq!((on.as_str(), at.as_str()), (other.as_str(), "10.0.1.11"));
    // Unassigning the address disassociates its Elastic IP, which stays allocated.
    ec2.unassign_private_ip_addresses()
        .network_interface_id(&other)
        .private_ip_addresses("10.0.1.11")
        .send()
        .await
        .unwrap();
    assert!(association_of(&ec2, &b).await.is_none());
    assert!(association_of(&ec2, &a).await.is_some());
    ec2.release_address()
        .allocation_id(&b)
        .send()
        .await
        .unwrap();
}
