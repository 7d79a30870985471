//! A classic load balancer's nodes as EC2 shows them: an interface ELB makes and manages in
//! each of its subnets, which holds an address there, carries the load balancer's groups,
//! and outlives the load balancer a while.

use aws_sdk_ec2::types::NetworkInterface;
use aws_sdk_elasticloadbalancing::types::Listener;
use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, empty_fake, filter, gateway, group, subnet, vpc};

fn listener() -> Listener {
    Listener::builder()
        .protocol("TCP")
        .load_balancer_port(6443)
        .instance_port(6443)
        .build()
        .unwrap()
}

/// A VPC with an attached internet gateway: (vpc, gateway).
async fn public_vpc(ec2: &aws_sdk_ec2::Client) -> (String, String) {
    let vpc_id = vpc(ec2, "10.0.0.0/16").await;
    let igw = gateway(ec2, &vpc_id).await;
    (vpc_id, igw)
}

/// The interfaces of load balancer `name`, found by the description AWS gives them, by subnet.
async fn nodes(ec2: &aws_sdk_ec2::Client, name: &str) -> Vec<NetworkInterface> {
    let mut out = ec2
        .describe_network_interfaces()
        .filters(filter("description", &[&format!("ELB {name}")]))
        .send()
        .await
        .unwrap()
        .network_interfaces
        .unwrap_or_default();
    out.sort_by(|a, b| a.subnet_id().cmp(&b.subnet_id()));
    out
}

async fn free(ec2: &aws_sdk_ec2::Client, subnet: &str) -> i32 {
    ec2.describe_subnets()
        .subnet_ids(subnet)
        .send()
        .await
        .unwrap()
        .subnets()[0]
        .available_ip_address_count()
        .unwrap()
}

fn subnets_of(enis: &[NetworkInterface]) -> Vec<&str> {
    enis.iter().filter_map(|e| e.subnet_id()).collect()
}

fn groups_of(eni: &NetworkInterface) -> Vec<&str> {
    eni.groups().iter().filter_map(|g| g.group_id()).collect()
}

#[tokio::test]
async fn a_load_balancer_keeps_an_interface_of_its_own_in_each_subnet() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, _) = public_vpc(&ec2).await;
    let a = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    let sg = group(&ec2, &vpc_id, "apiserver-lb").await;
    let (free_a, free_b) = (free(&ec2, &a).await, free(&ec2, &b).await);

    elb.create_load_balancer()
        .load_balancer_name("c1-api")
        .listeners(listener())
        .subnets(&a)
        .subnets(&b)
        .security_groups(&sg)
        .send()
        .await
        .unwrap();
    let enis = nodes(&ec2, "c1-api").await;
    assert_eq!(subnets_of(&enis), [a.as_str(), b.as_str()]);
    for e in &enis {
        assert_eq!(groups_of(e), [sg.as_str()]);
        assert_eq!(e.vpc_id(), Some(vpc_id.as_str()));
        assert_eq!(e.requester_managed(), Some(true));
        assert_eq!(e.requester_id(), Some("amazon-elb"));
        assert_eq!(e.interface_type().unwrap().as_str(), "interface");
        assert_eq!(e.status().unwrap().as_str(), "in-use");
        let att = e.attachment().unwrap();
        assert!(att.attachment_id().unwrap().starts_with("eni-attach-"));
        assert_eq!(att.device_index(), Some(1));
        assert_eq!(att.instance_owner_id(), Some("amazon-elb"));
        assert_eq!(att.instance_id(), None);
        assert_eq!(att.delete_on_termination(), Some(false));
        assert_eq!(att.status().unwrap().as_str(), "attached");
        // Internet-facing: a public address of ELB's own.
        let assoc = e.association().unwrap();
        assert_eq!(assoc.ip_owner_id(), Some("amazon-elb"));
        assert!(assoc.public_ip().is_some());
        assert!(
            assoc
                .public_dns_name()
                .unwrap()
                .ends_with(".compute-1.amazonaws.com")
        );
    }
    // Each holds an address of its subnet.
    assert_eq!(free(&ec2, &a).await, free_a - 1);
    assert_eq!(free(&ec2, &b).await, free_b - 1);
    // The filters find them by their requester and owner.
    for (name, value) in [
        ("requester-id", "amazon-elb"),
        ("attachment.instance-owner-id", "amazon-elb"),
        ("association.ip-owner-id", "amazon-elb"),
        ("requester-managed", "true"),
        ("attachment.device-index", "1"),
    ] {
        let found = ec2
            .describe_network_interfaces()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(subnets_of(found.network_interfaces()).len(), 2, "{name}");
    }

    // An internal one's nodes have no public address; without groups, the VPC's default.
    elb.create_load_balancer()
        .load_balancer_name("c1-internal")
        .scheme("internal")
        .listeners(listener())
        .subnets(&a)
        .send()
        .await
        .unwrap();
    let internal = nodes(&ec2, "c1-internal").await;
    assert_eq!(subnets_of(&internal), [a.as_str()]);
    assert!(internal[0].association().is_none());
    assert_eq!(internal[0].groups()[0].group_name(), Some("default"));

    // Nobody but ELB detaches or deletes them.
    let eni = enis[0].network_interface_id().unwrap();
    let attachment = enis[0].attachment().unwrap().attachment_id().unwrap();
    assert_eq!(
        code_and_message(
            ec2.detach_network_interface()
                .attachment_id(attachment)
                .force(true)
                .send()
                .await
        ),
        (
            "OperationNotPermitted".to_string(),
            "You are not allowed to manage 'eni-attach' attachments.".to_string()
        )
    );
    assert_eq!(
        code(
            ec2.delete_network_interface()
                .network_interface_id(eni)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(nodes(&ec2, "c1-api").await, enis);

    // New groups reach the nodes, and the old group is free to go.
    let sg2 = group(&ec2, &vpc_id, "apiserver-lb-2").await;
    elb.apply_security_groups_to_load_balancer()
        .load_balancer_name("c1-api")
        .security_groups(&sg2)
        .send()
        .await
        .unwrap();
    for e in nodes(&ec2, "c1-api").await {
        assert_eq!(groups_of(&e), [sg2.as_str()]);
    }
    ec2.delete_security_group()
        .group_id(&sg)
        .send()
        .await
        .unwrap();

    // A subnet left takes its node with it; a subnet joined gets one.
    elb.detach_load_balancer_from_subnets()
        .load_balancer_name("c1-api")
        .subnets(&a)
        .send()
        .await
        .unwrap();
    let left = nodes(&ec2, "c1-api").await;
    assert_eq!(subnets_of(&left), [b.as_str()]);
    assert_eq!(
        left[0].network_interface_id(),
        enis[1].network_interface_id()
    );
    assert_eq!(
        free(&ec2, &a).await,
        free_a - 1,
        "the internal one's node stays"
    );
    elb.attach_load_balancer_to_subnets()
        .load_balancer_name("c1-api")
        .subnets(&a)
        .send()
        .await
        .unwrap();
    let again = nodes(&ec2, "c1-api").await;
    assert_eq!(subnets_of(&again), [a.as_str(), b.as_str()]);
    assert_ne!(
        again[0].network_interface_id(),
        enis[0].network_interface_id()
    );
    assert_eq!(groups_of(&again[0]), [sg2.as_str()]);
}

#[tokio::test]
async fn a_deleted_load_balancers_interfaces_linger_and_hold_their_subnets_and_groups() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, igw) = public_vpc(&ec2).await;
    let a = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    let sg = group(&ec2, &vpc_id, "apiserver-lb").await;
    let (free_a, free_b) = (free(&ec2, &a).await, free(&ec2, &b).await);
    elb.create_load_balancer()
        .load_balancer_name("c1-api")
        .listeners(listener())
        .subnets(&a)
        .subnets(&b)
        .security_groups(&sg)
        .send()
        .await
        .unwrap();
    let enis = nodes(&ec2, "c1-api").await;
    assert_eq!(enis.len(), 2);

    // AWS takes minutes to remove them: here, until the test lets the step happen.
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.hold(Subject::LoadBalancerInterface)
    });
    elb.delete_load_balancer()
        .load_balancer_name("c1-api")
        .send()
        .await
        .unwrap();
    let listed = elb.describe_load_balancers().send().await.unwrap();
    assert!(listed.load_balancer_descriptions().is_empty());
    assert_eq!(nodes(&ec2, "c1-api").await, enis);
    assert_eq!(
        code_and_message(ec2.delete_security_group().group_id(&sg).send().await).0,
        "DependencyViolation"
    );
    for s in [&a, &b] {
        assert_eq!(
            code_and_message(ec2.delete_subnet().subnet_id(s).send().await),
            (
                "DependencyViolation".to_string(),
                format!("The subnet '{s}' has dependencies and cannot be deleted.")
            )
        );
    }
    assert_eq!(
        code(
            ec2.detach_internet_gateway()
                .internet_gateway_id(&igw)
                .vpc_id(&vpc_id)
                .send()
                .await
        ),
        "DependencyViolation"
    );

    // Gone: their addresses back, and nothing holds the network any more.
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.release(Subject::LoadBalancerInterface)
    });
    assert!(nodes(&ec2, "c1-api").await.is_empty());
    assert_eq!(free(&ec2, &a).await, free_a);
    assert_eq!(free(&ec2, &b).await, free_b);
    ec2.delete_security_group()
        .group_id(&sg)
        .send()
        .await
        .unwrap();
    for s in [&a, &b] {
        ec2.delete_subnet().subnet_id(s).send().await.unwrap();
    }
    ec2.detach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
}

#[tokio::test]
async fn a_subnet_without_eight_free_addresses_takes_no_node() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, _) = public_vpc(&ec2).await;
    // A /28 has 11 addresses for interfaces; four of the user's leave 7.
    let small = subnet(&ec2, &vpc_id, "10.0.0.0/28", "us-east-1a").await;
    let roomy = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    let mut mine = Vec::new();
    for _ in 0..4 {
        let eni = ec2
            .create_network_interface()
            .subnet_id(&small)
            .send()
            .await
            .unwrap()
            .network_interface
            .unwrap()
            .network_interface_id
            .unwrap();
        mine.push(eni);
    }
    assert_eq!(free(&ec2, &small).await, 7);
    let roomy_free = free(&ec2, &roomy).await;

    let refused = elb
        .create_load_balancer()
        .load_balancer_name("c1-api")
        .listeners(listener())
        .subnets(&roomy)
        .subnets(&small)
        .send()
        .await;
    assert_eq!(
        code_and_message(refused),
        (
            "InvalidSubnet".to_string(),
            format!(
                "Not enough IP space available in {small}. ELB requires at least 8 free IP \
                 addresses in each subnet."
            )
        )
    );
    // Nothing was made: no load balancer, no node in the subnet that had room.
    assert_eq!(
        code(
            elb.describe_load_balancers()
                .load_balancer_names("c1-api")
                .send()
                .await
        ),
        "LoadBalancerNotFound"
    );
    assert!(nodes(&ec2, "c1-api").await.is_empty());
    assert_eq!(free(&ec2, &roomy).await, roomy_free);

    // In the roomy subnet alone it is made; joining the small one is refused the same way.
    elb.create_load_balancer()
        .load_balancer_name("c1-api")
        .listeners(listener())
        .subnets(&roomy)
        .send()
        .await
        .unwrap();
    let (c, m) = code_and_message(
        elb.attach_load_balancer_to_subnets()
            .load_balancer_name("c1-api")
            .subnets(&small)
            .send()
            .await,
    );
    assert_eq!(c, "InvalidSubnet");
    assert!(m.contains(&small), "{m}");
    let lb = elb
        .describe_load_balancers()
        .load_balancer_names("c1-api")
        .send()
        .await
        .unwrap();
    assert_eq!(
        lb.load_balancer_descriptions()[0].subnets(),
        std::slice::from_ref(&roomy)
    );
    assert_eq!(subnets_of(&nodes(&ec2, "c1-api").await), [roomy.as_str()]);

    // One address freed makes room.
    ec2.delete_network_interface()
        .network_interface_id(&mine[0])
        .send()
        .await
        .unwrap();
    elb.attach_load_balancer_to_subnets()
        .load_balancer_name("c1-api")
        .subnets(&small)
        .send()
        .await
        .unwrap();
    assert_eq!(free(&ec2, &small).await, 7);
    let both = nodes(&ec2, "c1-api").await;
    assert_eq!(both.len(), 2);
}
