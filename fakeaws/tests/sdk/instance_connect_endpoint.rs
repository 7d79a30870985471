//! EC2 Instance Connect Endpoints through the SDK: made in a subnet with a requester-managed
//! interface and the VPC's default group (or those named), described with their DNS names,
//! holding their subnet and groups until deleted, and the refusals of a bad request.

use aws_sdk_ec2::types::{Ec2InstanceConnectEndpointState as State, IpAddressType, ResourceType};

use crate::{code_and_message, empty_fake, filter, group, subnet, tag_spec, vpc};

#[tokio::test]
async fn an_endpoint_holds_its_subnet_until_deleted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let out = ec2
        .create_instance_connect_endpoint()
        .subnet_id(&subnet_id)
        .client_token("eice-1")
        .tag_specifications(tag_spec(
            ResourceType::InstanceConnectEndpoint,
            &[("Name", "way-in")],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(out.client_token(), Some("eice-1"));
    let made = out.instance_connect_endpoint().unwrap();
    let id = made.instance_connect_endpoint_id().unwrap().to_string();
    assert!(id.starts_with("eice-"), "{id}");
    assert_eq!(made.state(), Some(&State::CreateInProgress));
    assert_eq!(made.vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(made.availability_zone(), Some("us-east-1a"));
    assert_eq!(made.preserve_client_ip(), Some(false));
    assert_eq!(made.ip_address_type(), Some(&IpAddressType::Ipv4));
    let [eni] = made.network_interface_ids() else {
        panic!("{made:?}")
    };
    // The VPC's default group, none being named.
    let default_group = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap()
        .security_groups()[0]
        .group_id()
        .unwrap()
        .to_string();
    assert_eq!(made.security_group_ids(), [default_group]);
    let interfaces = ec2
        .describe_network_interfaces()
        .network_interface_ids(eni)
        .send()
        .await
        .unwrap();
    let interface = &interfaces.network_interfaces()[0];
    assert_eq!(interface.requester_managed(), Some(true));
    assert_eq!(interface.subnet_id(), Some(subnet_id.as_str()));

    // The same token answers the same endpoint.
    let again = ec2
        .create_instance_connect_endpoint()
        .subnet_id(&subnet_id)
        .client_token("eice-1")
        .tag_specifications(tag_spec(
            ResourceType::InstanceConnectEndpoint,
            &[("Name", "way-in")],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        again
            .instance_connect_endpoint()
            .unwrap()
            .instance_connect_endpoint_id(),
        Some(id.as_str())
    );

    for f in [
        filter("subnet-id", &[&subnet_id]),
        filter("vpc-id", &[&vpc_id]),
        filter("state", &["create-complete"]),
        filter("tag:Name", &["way-in"]),
    ] {
        let found = ec2
            .describe_instance_connect_endpoints()
            .filters(f)
            .send()
            .await
            .unwrap();
        let [e] = found.instance_connect_endpoints() else {
            panic!("{found:?}")
        };
        assert_eq!(e.state(), Some(&State::CreateComplete));
        let dns = e.dns_name().unwrap();
        assert!(
            dns.starts_with(&format!("{id}."))
                && dns.ends_with(".ec2-instance-connect-endpoint.us-east-1.amazonaws.com"),
            "{dns}"
        );
        assert!(e.fips_dns_name().unwrap().contains(".fips."));
    }

    // Its interface keeps the subnet.
    let (code, _) = code_and_message(ec2.delete_subnet().subnet_id(&subnet_id).send().await);
    assert_eq!(code, "DependencyViolation");

    let deleted = ec2
        .delete_instance_connect_endpoint()
        .instance_connect_endpoint_id(&id)
        .send()
        .await
        .unwrap();
    let d = deleted.instance_connect_endpoint().unwrap();
    assert_eq!(d.state(), Some(&State::DeleteInProgress));
    assert!(d.network_interface_ids().is_empty());
    let (code, _) = code_and_message(
        ec2.describe_instance_connect_endpoints()
            .instance_connect_endpoint_ids(&id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidInstanceConnectEndpointId.NotFound");
    let (code, _) = code_and_message(
        ec2.describe_network_interfaces()
            .network_interface_ids(eni)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidNetworkInterfaceID.NotFound");
    ec2.delete_subnet()
        .subnet_id(&subnet_id)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_endpoint_holds_the_groups_it_is_given() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1b").await;
    let g = group(&ec2, &vpc_id, "eice").await;
    let out = ec2
        .create_instance_connect_endpoint()
        .subnet_id(&subnet_id)
        .security_group_ids(&g)
        .preserve_client_ip(true)
        .send()
        .await
        .unwrap();
    let e = out.instance_connect_endpoint().unwrap();
    assert_eq!(e.security_group_ids(), std::slice::from_ref(&g));
    assert_eq!(e.preserve_client_ip(), Some(true));
    let (code, _) = code_and_message(ec2.delete_security_group().group_id(&g).send().await);
    assert_eq!(code, "DependencyViolation");
    ec2.delete_instance_connect_endpoint()
        .instance_connect_endpoint_id(e.instance_connect_endpoint_id().unwrap())
        .send()
        .await
        .unwrap();
    ec2.delete_security_group()
        .group_id(&g)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_bad_endpoint_request_is_refused_and_makes_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let stranger = group(&ec2, &other_vpc, "elsewhere").await;

    let (code, message) = code_and_message(
        ec2.create_instance_connect_endpoint()
            .subnet_id(&subnet_id)
            .security_group_ids(&stranger)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidGroup.NotFound");
    assert!(message.contains(&vpc_id), "{message}");
    let (code, _) = code_and_message(
        ec2.create_instance_connect_endpoint()
            .subnet_id(&subnet_id)
            .ip_address_type(IpAddressType::Dualstack)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    let (code, _) = code_and_message(
        ec2.create_instance_connect_endpoint()
            .subnet_id("subnet-0123456789abcdef0")
            .send()
            .await,
    );
    assert_eq!(code, "InvalidSubnetID.NotFound");
    let none = ec2
        .describe_instance_connect_endpoints()
        .send()
        .await
        .unwrap();
    assert!(none.instance_connect_endpoints().is_empty());
    let interfaces = ec2
        .describe_network_interfaces()
        .filters(filter("subnet-id", &[&subnet_id]))
        .send()
        .await
        .unwrap();
    assert!(interfaces.network_interfaces().is_empty());

    // A preserved client address needs the IPv4 address type, in a subnet with an IPv6
    // range too.
    let block = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&vpc_id)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .ipv6_cidr_block_association
        .unwrap()
        .ipv6_cidr_block
        .unwrap();
    let first64 = block
        .parse::<ipnet::Ipv6Net>()
        .unwrap()
        .subnets(64)
        .unwrap()
        .next()
        .unwrap()
        .to_string();
    ec2.associate_subnet_cidr_block()
        .subnet_id(&subnet_id)
        .ipv6_cidr_block(first64)
        .send()
        .await
        .unwrap();
    let (code, message) = code_and_message(
        ec2.create_instance_connect_endpoint()
            .subnet_id(&subnet_id)
            .preserve_client_ip(true)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterCombination");
    assert!(message.contains("PreserveClientIp"), "{message}");
    // With the IPv4 type named, it is made; without a preserved address, the subnet's type.
    let made = ec2
        .create_instance_connect_endpoint()
        .subnet_id(&subnet_id)
        .preserve_client_ip(true)
        .ip_address_type(IpAddressType::Ipv4)
        .send()
        .await
        .unwrap();
    assert_eq!(
        made.instance_connect_endpoint().unwrap().ip_address_type(),
        Some(&IpAddressType::Ipv4)
    );
}
