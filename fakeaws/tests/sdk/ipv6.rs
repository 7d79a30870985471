//! IPv6 networking through the SDK: a VPC's Amazon-provided /56 (CreateVpc,
//! AssociateVpcCidrBlock, DisassociateVpcCidrBlock), subnets' /64s (CreateSubnet,
//! AssociateSubnetCidrBlock, DisassociateSubnetCidrBlock, AssignIpv6AddressOnCreation),
//! egress-only internet gateways, IPv6 routes, network ACL entries and security group rules,
//! and what a VPC gaining IPv6 changes in its route tables, default ACL and default group.

use aws_sdk_ec2::types::{
    AttributeBooleanValue, IcmpTypeCode, IpPermission, Ipv6Range, ResourceType, RuleAction,
    SubnetCidrBlockStateCode, VpcCidrBlockStateCode,
};

use crate::{code, empty_fake, filter, route_table, tag_spec, vpc};

/// Creates a VPC with an Amazon-provided IPv6 block; returns its id and the block.
async fn ipv6_vpc(ec2: &aws_sdk_ec2::Client, cidr: &str) -> (String, String) {
    let v = ec2
        .create_vpc()
        .cidr_block(cidr)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    let block = v.ipv6_cidr_block_association_set()[0]
        .ipv6_cidr_block()
        .unwrap()
        .to_string();
    (v.vpc_id.unwrap(), block)
}

/// The `n`th /64 of the /56 `block` (`n` < 256).
fn slash64(block: &str, n: u8) -> String {
    part(block, 64, n)
}

/// The `n`th part of prefix length `len` of `block`.
/// A dual-stack subnet of `vpc_id` in `us-east-1a`: IPv4 `cidr` and IPv6 `ipv6` (a /64 of
/// the VPC's block).
async fn dual_stack_subnet(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
    cidr: &str,
    ipv6: &str,
) -> String {
    ec2.create_subnet()
        .vpc_id(vpc_id)
        .cidr_block(cidr)
        .availability_zone("us-east-1a")
        .ipv6_cidr_block(ipv6)
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap()
}

fn part(block: &str, len: u8, n: u8) -> String {
    let net: ipnet::Ipv6Net = block.parse().unwrap();
    net.subnets(len)
        .unwrap()
        .nth(usize::from(n))
        .unwrap()
        .to_string()
}

/// The VPC's IPv6 blocks as DescribeVpcs lists them: (association id, block, state).
async fn blocks(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> Vec<(String, String, String)> {
    let out = ec2.describe_vpcs().vpc_ids(vpc_id).send().await.unwrap();
    out.vpcs()[0]
        .ipv6_cidr_block_association_set()
        .iter()
        .map(|a| {
            (
                a.association_id().unwrap().to_string(),
                a.ipv6_cidr_block().unwrap().to_string(),
                a.ipv6_cidr_block_state()
                    .and_then(|s| s.state())
                    .unwrap()
                    .as_str()
                    .to_string(),
            )
        })
        .collect()
}

/// The routes of a table: (destination, target, state).
async fn routes(ec2: &aws_sdk_ec2::Client, table: &str) -> Vec<(String, String, String)> {
    let out = ec2
        .describe_route_tables()
        .route_table_ids(table)
        .send()
        .await
        .unwrap();
    out.route_tables()[0]
        .routes()
        .iter()
        .map(|r| {
            (
                r.destination_cidr_block()
                    .or(r.destination_ipv6_cidr_block())
                    .unwrap()
                    .to_string(),
                r.gateway_id()
                    .or(r.egress_only_internet_gateway_id())
                    .or(r.nat_gateway_id())
                    .unwrap_or_default()
                    .to_string(),
                r.state().unwrap().as_str().to_string(),
            )
        })
        .collect()
}

/// The entries of an ACL: (rule number, egress, CIDR, action).
async fn entries(ec2: &aws_sdk_ec2::Client, acl: &str) -> Vec<(i32, bool, String, String)> {
    let out = ec2
        .describe_network_acls()
        .network_acl_ids(acl)
        .send()
        .await
        .unwrap();
    out.network_acls()[0]
        .entries()
        .iter()
        .map(|e| {
            (
                e.rule_number().unwrap(),
                e.egress().unwrap(),
                e.cidr_block().or(e.ipv6_cidr_block()).unwrap().to_string(),
                e.rule_action().unwrap().as_str().to_string(),
            )
        })
        .collect()
}

async fn default_acl(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let out = ec2
        .describe_network_acls()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter("default", &["true"]))
        .send()
        .await
        .unwrap();
    out.network_acls()[0].network_acl_id().unwrap().to_string()
}

async fn main_table(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let out = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter("association.main", &["true"]))
        .send()
        .await
        .unwrap();
    out.route_tables()[0].route_table_id().unwrap().to_string()
}

/// The CIDRs of a group's egress rules, IPv4 and IPv6.
async fn egress_cidrs(ec2: &aws_sdk_ec2::Client, group: &str) -> Vec<String> {
    let out = ec2
        .describe_security_groups()
        .group_ids(group)
        .send()
        .await
        .unwrap();
    let mut cidrs: Vec<String> = out.security_groups()[0]
        .ip_permissions_egress()
        .iter()
        .flat_map(|p| {
            p.ip_ranges()
                .iter()
                .filter_map(|r| r.cidr_ip())
                .chain(p.ipv6_ranges().iter().filter_map(|r| r.cidr_ipv6()))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    cidrs.sort();
    cidrs
}

async fn default_group(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let out = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap();
    out.security_groups()[0].group_id().unwrap().to_string()
}

fn s(v: &str) -> String {
    v.to_string()
}

#[tokio::test]
async fn a_vpc_made_with_an_ipv6_block_has_it_everywhere_aws_puts_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let made = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .amazon_provided_ipv6_cidr_block(true)
        .ipv6_cidr_block_network_border_group("us-east-1")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    let vpc_id = made.vpc_id().unwrap().to_string();
    // Answered associating, from Amazon's pool, advertised in the region.
    let a = &made.ipv6_cidr_block_association_set()[0];
    assert_eq!(
        a.ipv6_cidr_block_state().and_then(|s| s.state()),
        Some(&VpcCidrBlockStateCode::Associating)
    );
    assert_eq!(a.network_border_group(), Some("us-east-1"));
    assert_eq!(a.ipv6_pool(), Some("Amazon"));
    let block = a.ipv6_cidr_block().unwrap().to_string();
    let net: ipnet::Ipv6Net = block.parse().unwrap();
    assert_eq!(net.prefix_len(), 56, "{block}");
    assert_eq!(net.trunc(), net, "{block}");
    // Then associated.
    let listed = blocks(&ec2, &vpc_id).await;
    assert_eq!(
        listed,
        [(
            s(a.association_id().unwrap()),
            block.clone(),
            s("associated")
        )]
    );
    // Filters.
    for (name, value) in [
        (
            "ipv6-cidr-block-association.ipv6-cidr-block",
            block.as_str(),
        ),
        (
            "ipv6-cidr-block-association.association-id",
            a.association_id().unwrap(),
        ),
        ("ipv6-cidr-block-association.state", "associated"),
        ("ipv6-cidr-block-association.ipv6-pool", "Amazon"),
    ] {
        let out = ec2
            .describe_vpcs()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(out.vpcs().len(), 1, "{name}");
    }
    // A second VPC gets another block.
    let (_, other) = ipv6_vpc(&ec2, "10.1.0.0/16").await;
    assert_ne!(other, block);
    let out = ec2
        .describe_vpcs()
        .filters(filter(
            "ipv6-cidr-block-association.ipv6-cidr-block",
            &[&block],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(out.vpcs().len(), 1);

    // The main table and every new one have the block's local route.
    let main = main_table(&ec2, &vpc_id).await;
    let own = route_table(&ec2, &vpc_id).await;
    for t in [&main, &own] {
        assert_eq!(
            routes(&ec2, t).await,
            [
                (s("10.0.0.0/16"), s("local"), s("active")),
                (block.clone(), s("local"), s("active"))
            ]
        );
    }
    // The default ACL allows all IPv6 traffic by rule 101; every ACL's `*` rules deny ::/0
    // (as rule 32768); egress first, as the AWS CLI's documented output lists them.
    let acl = default_acl(&ec2, &vpc_id).await;
    let allow = s("allow");
    let deny = s("deny");
    assert_eq!(
        entries(&ec2, &acl).await,
        [
            (100, true, s("0.0.0.0/0"), allow.clone()),
            (101, true, s("::/0"), allow.clone()),
            (32767, true, s("0.0.0.0/0"), deny.clone()),
            (32768, true, s("::/0"), deny.clone()),
            (100, false, s("0.0.0.0/0"), allow.clone()),
            (101, false, s("::/0"), allow.clone()),
            (32767, false, s("0.0.0.0/0"), deny.clone()),
            (32768, false, s("::/0"), deny.clone()),
        ]
    );
    // Found by the IPv6 `*` rule's number.
    let by_star = ec2
        .describe_network_acls()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("entry.rule-number", &["32768"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_star.network_acls().len(), 1);
    let own_acl = ec2
        .create_network_acl()
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .network_acl
        .unwrap()
        .network_acl_id
        .unwrap();
    assert_eq!(
        entries(&ec2, &own_acl).await,
        [
            (32767, true, s("0.0.0.0/0"), deny.clone()),
            (32768, true, s("::/0"), deny.clone()),
            (32767, false, s("0.0.0.0/0"), deny.clone()),
            (32768, false, s("::/0"), deny.clone()),
        ]
    );
    // The default group sends to ::/0 too; a group of one's own only to 0.0.0.0/0.
    let default = default_group(&ec2, &vpc_id).await;
    assert_eq!(egress_cidrs(&ec2, &default).await, ["0.0.0.0/0", "::/0"]);
    let group = ec2
        .create_security_group()
        .group_name("own")
        .description("own")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    assert_eq!(egress_cidrs(&ec2, &group).await, ["0.0.0.0/0"]);

    // A border group other than the region's, or one without the block, is refused and
    // makes nothing.
    let before = ec2.describe_vpcs().send().await.unwrap().vpcs().len();
    assert_eq!(
        code(
            ec2.create_vpc()
                .cidr_block("10.2.0.0/16")
                .amazon_provided_ipv6_cidr_block(true)
                .ipv6_cidr_block_network_border_group("us-west-2")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.create_vpc()
                .cidr_block("10.2.0.0/16")
                .ipv6_cidr_block_network_border_group("us-east-1")
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        ec2.describe_vpcs().send().await.unwrap().vpcs().len(),
        before
    );
}

#[tokio::test]
async fn ipv6_blocks_are_associated_and_disassociated() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let main = main_table(&ec2, &vpc_id).await;
    let acl = default_acl(&ec2, &vpc_id).await;
    let group = default_group(&ec2, &vpc_id).await;
    // The inbound rules of the default ACL are changed before the VPC gets IPv6: that
    // direction gets no rule 101.
    ec2.replace_network_acl_entry()
        .network_acl_id(&acl)
        .rule_number(100)
        .egress(false)
        .protocol("6")
        .port_range(
            aws_sdk_ec2::types::PortRange::builder()
                .from(443)
                .to(443)
                .build(),
        )
        .cidr_block("0.0.0.0/0")
        .rule_action(RuleAction::Allow)
        .send()
        .await
        .unwrap();
    assert_eq!(egress_cidrs(&ec2, &group).await, ["0.0.0.0/0"]);

    let out = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&vpc_id)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap();
    assert_eq!(out.vpc_id(), Some(vpc_id.as_str()));
    assert!(out.cidr_block_association().is_none());
    let a = out.ipv6_cidr_block_association().unwrap();
    assert_eq!(
        a.ipv6_cidr_block_state().and_then(|s| s.state()),
        Some(&VpcCidrBlockStateCode::Associating)
    );
    let block = a.ipv6_cidr_block().unwrap().to_string();
    let association = a.association_id().unwrap().to_string();
    assert_eq!(
        blocks(&ec2, &vpc_id).await,
        [(association.clone(), block.clone(), s("associated"))]
    );
    assert_eq!(
        routes(&ec2, &main).await,
        [
            (s("10.0.0.0/16"), s("local"), s("active")),
            (block.clone(), s("local"), s("active"))
        ]
    );
    let inbound_101 = |e: &[(i32, bool, String, String)], egress: bool| {
        e.iter().any(|(n, out, _, _)| *n == 101 && *out == egress)
    };
    let now = entries(&ec2, &acl).await;
    assert!(!inbound_101(&now, false), "{now:?}");
    assert!(inbound_101(&now, true), "{now:?}");
    assert!(now.contains(&(32768, false, s("::/0"), s("deny"))));
    assert_eq!(egress_cidrs(&ec2, &group).await, ["0.0.0.0/0", "::/0"]);

    // Both kinds at once, and a second block past the quota, are refused.
    assert_eq!(
        code(
            ec2.associate_vpc_cidr_block()
                .vpc_id(&vpc_id)
                .cidr_block("10.1.0.0/16")
                .amazon_provided_ipv6_cidr_block(true)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    for _ in 1..5 {
        ec2.associate_vpc_cidr_block()
            .vpc_id(&vpc_id)
            .amazon_provided_ipv6_cidr_block(true)
            .send()
            .await
            .unwrap();
    }
    assert_eq!(
        code(
            ec2.associate_vpc_cidr_block()
                .vpc_id(&vpc_id)
                .amazon_provided_ipv6_cidr_block(true)
                .send()
                .await
        ),
        "CidrLimitExceeded"
    );
    let all = blocks(&ec2, &vpc_id).await;
    assert_eq!(all.len(), 5);
    let distinct: std::collections::BTreeSet<&String> = all.iter().map(|(_, b, _)| b).collect();
    assert_eq!(distinct.len(), 5);
    assert_eq!(routes(&ec2, &main).await.len(), 6);

    // A block holding a subnet's /64 stays; once the subnet's goes, so can the block.
    let subnet = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.1.0/24")
        .ipv6_cidr_block(slash64(&block, 7))
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    assert_eq!(
        code(
            ec2.disassociate_vpc_cidr_block()
                .association_id(&association)
                .send()
                .await
        ),
        "DependencyViolation"
    );
    assert_eq!(blocks(&ec2, &vpc_id).await.len(), 5);
    ec2.disassociate_subnet_cidr_block()
        .association_id(
            subnet.ipv6_cidr_block_association_set()[0]
                .association_id()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let out = ec2
        .disassociate_vpc_cidr_block()
        .association_id(&association)
        .send()
        .await
        .unwrap();
    let gone = out.ipv6_cidr_block_association().unwrap();
    assert_eq!(gone.ipv6_cidr_block(), Some(block.as_str()));
    assert_eq!(
        gone.ipv6_cidr_block_state().and_then(|s| s.state()),
        Some(&VpcCidrBlockStateCode::Disassociating)
    );
    assert!(
        blocks(&ec2, &vpc_id)
            .await
            .iter()
            .all(|(id, _, _)| *id != association)
    );
    assert!(
        routes(&ec2, &main)
            .await
            .iter()
            .all(|(d, _, _)| *d != block)
    );
    assert_eq!(
        code(
            ec2.disassociate_vpc_cidr_block()
                .association_id(&association)
                .send()
                .await
        ),
        "InvalidVpcCidrBlockAssociationID.NotFound"
    );
}

#[tokio::test]
async fn subnets_take_a_slash_64_of_their_vpc() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, block) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let made = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.1.0/24")
        .ipv6_cidr_block(slash64(&block, 1))
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    let id = made.subnet_id().unwrap().to_string();
    let a = &made.ipv6_cidr_block_association_set()[0];
    assert_eq!(a.ipv6_cidr_block(), Some(slash64(&block, 1).as_str()));
    assert_eq!(
        a.ipv6_cidr_block_state().and_then(|s| s.state()),
        Some(&SubnetCidrBlockStateCode::Associating)
    );
    assert!(
        a.association_id()
            .unwrap()
            .starts_with("subnet-cidr-assoc-")
    );
    let listed = ec2
        .describe_subnets()
        .filters(filter(
            "ipv6-cidr-block-association.ipv6-cidr-block",
            &[&slash64(&block, 1)],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.subnets().len(), 1);
    assert_eq!(listed.subnets()[0].subnet_id(), Some(id.as_str()));
    assert_eq!(
        listed.subnets()[0].ipv6_cidr_block_association_set()[0]
            .ipv6_cidr_block_state()
            .and_then(|s| s.state()),
        Some(&SubnetCidrBlockStateCode::Associated)
    );

    // Taken, outside the VPC's blocks, or not a /64: refused, nothing made.
    for (cidr, expected) in [
        (slash64(&block, 1), "InvalidSubnet.Conflict"),
        (s("2001:db8::/64"), "InvalidSubnet.Range"),
        (part(&block, 60, 1), "InvalidParameterValue"),
        (s("2600:1f18::1/64"), "InvalidParameterValue"),
    ] {
        let r = ec2
            .create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block("10.0.2.0/24")
            .ipv6_cidr_block(&cidr)
            .send()
            .await;
        assert_eq!(code(r), expected, "{cidr}");
    }
    assert_eq!(
        ec2.describe_subnets().send().await.unwrap().subnets().len(),
        1
    );

    // A subnet made without one gets one, once.
    let plain = crate::subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let out = ec2
        .associate_subnet_cidr_block()
        .subnet_id(&plain)
        .ipv6_cidr_block(slash64(&block, 2))
        .send()
        .await
        .unwrap();
    assert_eq!(out.subnet_id(), Some(plain.as_str()));
    let association = out
        .ipv6_cidr_block_association()
        .unwrap()
        .association_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.associate_subnet_cidr_block()
                .subnet_id(&plain)
                .ipv6_cidr_block(slash64(&block, 3))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.associate_subnet_cidr_block()
                .subnet_id(&plain)
                .send()
                .await
        ),
        "MissingParameter"
    );
    // AssignIpv6AddressOnCreation: only with a block; while set, the block stays.
    let bare = crate::subnet(&ec2, &vpc_id, "10.0.3.0/24", "us-east-1c").await;
    assert_eq!(
        code(
            ec2.modify_subnet_attribute()
                .subnet_id(&bare)
                .assign_ipv6_address_on_creation(
                    AttributeBooleanValue::builder().value(true).build()
                )
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    ec2.modify_subnet_attribute()
        .subnet_id(&plain)
        .assign_ipv6_address_on_creation(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await
        .unwrap();
    let described = ec2
        .describe_subnets()
        .subnet_ids(&plain)
        .send()
        .await
        .unwrap();
    assert_eq!(
        described.subnets()[0].assign_ipv6_address_on_creation(),
        Some(true)
    );
    assert_eq!(
        code(
            ec2.disassociate_subnet_cidr_block()
                .association_id(&association)
                .send()
                .await
        ),
        "InvalidCidrBlock.InUse"
    );
    ec2.modify_subnet_attribute()
        .subnet_id(&plain)
        .assign_ipv6_address_on_creation(AttributeBooleanValue::builder().value(false).build())
        .send()
        .await
        .unwrap();
    // Disassociated: the block goes, the subnet stays.
    let out = ec2
        .disassociate_subnet_cidr_block()
        .association_id(&association)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.ipv6_cidr_block_association()
            .and_then(|a| a.ipv6_cidr_block_state())
            .and_then(|s| s.state()),
        Some(&SubnetCidrBlockStateCode::Disassociating)
    );
    let described = ec2
        .describe_subnets()
        .subnet_ids(&plain)
        .send()
        .await
        .unwrap();
    assert!(
        described.subnets()[0]
            .ipv6_cidr_block_association_set()
            .is_empty()
    );
    assert_eq!(
        code(
            ec2.disassociate_subnet_cidr_block()
                .association_id(&association)
                .send()
                .await
        ),
        "InvalidSubnetCidrBlockAssociationID.NotFound"
    );
    // Its /64 is free again.
    ec2.associate_subnet_cidr_block()
        .subnet_id(&plain)
        .ipv6_cidr_block(slash64(&block, 2))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn egress_only_gateways_carry_ipv6_routes() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, block) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let made = ec2
        .create_egress_only_internet_gateway()
        .vpc_id(&vpc_id)
        .client_token("eigw-1")
        .tag_specifications(tag_spec(
            ResourceType::EgressOnlyInternetGateway,
            &[("Name", "out")],
        ))
        .send()
        .await
        .unwrap();
    let g = made.egress_only_internet_gateway().unwrap();
    let id = g.egress_only_internet_gateway_id().unwrap().to_string();
    assert!(id.starts_with("eigw-"), "{id}");
    assert_eq!(g.attachments()[0].vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(
        g.attachments()[0].state().map(|s| s.as_str()),
        Some("attached")
    );
    // The same token answers the same gateway.
    let again = ec2
        .create_egress_only_internet_gateway()
        .vpc_id(&vpc_id)
        .client_token("eigw-1")
        .tag_specifications(tag_spec(
            ResourceType::EgressOnlyInternetGateway,
            &[("Name", "out")],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        again
            .egress_only_internet_gateway()
            .and_then(|g| g.egress_only_internet_gateway_id()),
        Some(id.as_str())
    );
    let by_tag = ec2
        .describe_egress_only_internet_gateways()
        .filters(filter("tag:Name", &["out"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_tag.egress_only_internet_gateways().len(), 1);
    // An id naming no gateway lists nothing; a malformed one is refused.
    let none = ec2
        .describe_egress_only_internet_gateways()
        .egress_only_internet_gateway_ids("eigw-0123456789abcdef0")
        .send()
        .await
        .unwrap();
    assert!(none.egress_only_internet_gateways().is_empty());
    assert_eq!(
        code(
            ec2.describe_egress_only_internet_gateways()
                .egress_only_internet_gateway_ids("igw-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidEgressOnlyInternetGatewayId.Malformed"
    );

    // IPv6 routes: out through the gateway; an IPv4 one through it is refused.
    let table = route_table(&ec2, &vpc_id).await;
    ec2.create_route()
        .route_table_id(&table)
        .destination_ipv6_cidr_block("::/0")
        .egress_only_internet_gateway_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&table)
                .destination_cidr_block("0.0.0.0/0")
                .egress_only_internet_gateway_id(&id)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&table)
                .destination_ipv6_cidr_block("::/0")
                .egress_only_internet_gateway_id(&id)
                .send()
                .await
        ),
        "RouteAlreadyExists"
    );
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&table)
                .destination_cidr_block("0.0.0.0/0")
                .destination_ipv6_cidr_block("::/0")
                .egress_only_internet_gateway_id(&id)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    // A destination within the VPC's own block takes an interface or an instance only.
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&table)
                .destination_ipv6_cidr_block(slash64(&block, 4))
                .egress_only_internet_gateway_id(&id)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    for (name, value) in [
        ("route.destination-ipv6-cidr-block", "::/0"),
        ("route.egress-only-internet-gateway-id", id.as_str()),
    ] {
        let out = ec2
            .describe_route_tables()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(out.route_tables().len(), 1, "{name}");
    }
    // ReplaceRoute to the internet gateway, then back; DeleteRoute.
    let igw = crate::gateway(&ec2, &vpc_id).await;
    ec2.replace_route()
        .route_table_id(&table)
        .destination_ipv6_cidr_block("::/0")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    assert!(
        routes(&ec2, &table)
            .await
            .contains(&(s("::/0"), igw.clone(), s("active")))
    );
    ec2.replace_route()
        .route_table_id(&table)
        .destination_ipv6_cidr_block("::/0")
        .egress_only_internet_gateway_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.delete_route()
                .route_table_id(&table)
                .destination_ipv6_cidr_block(&block)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.delete_route()
                .route_table_id(&table)
                .destination_ipv6_cidr_block("2001:db8::/32")
                .send()
                .await
        ),
        "InvalidRoute.NotFound"
    );

    // Once deleted, its route is a blackhole.
    let out = ec2
        .delete_egress_only_internet_gateway()
        .egress_only_internet_gateway_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(out.return_code(), Some(true));
    assert!(
        routes(&ec2, &table)
            .await
            .contains(&(s("::/0"), id.clone(), s("blackhole")))
    );
    assert_eq!(
        code(
            ec2.delete_egress_only_internet_gateway()
                .egress_only_internet_gateway_id(&id)
                .send()
                .await
        ),
        "InvalidEgressOnlyInternetGatewayId.NotFound"
    );

    // A gateway keeps its VPC from deletion.
    let other = vpc(&ec2, "10.9.0.0/16").await;
    let g = ec2
        .create_egress_only_internet_gateway()
        .vpc_id(&other)
        .send()
        .await
        .unwrap()
        .egress_only_internet_gateway
        .unwrap()
        .egress_only_internet_gateway_id
        .unwrap();
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&other).send().await),
        "DependencyViolation"
    );
    ec2.delete_egress_only_internet_gateway()
        .egress_only_internet_gateway_id(&g)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&other).send().await.unwrap();
}

#[tokio::test]
async fn ipv6_rules_in_groups_and_acls() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, _) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let group = ec2
        .create_security_group()
        .group_name("web")
        .description("web")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let https = |cidr: &str| {
        IpPermission::builder()
            .ip_protocol("tcp")
            .from_port(443)
            .to_port(443)
            .ipv6_ranges(
                Ipv6Range::builder()
                    .cidr_ipv6(cidr)
                    .description("https")
                    .build(),
            )
            .build()
    };
    let out = ec2
        .authorize_security_group_ingress()
        .group_id(&group)
        .ip_permissions(https("::/0"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.security_group_rules()[0].cidr_ipv6(), Some("::/0"));
    let described = ec2
        .describe_security_groups()
        .group_ids(&group)
        .send()
        .await
        .unwrap();
    let p = &described.security_groups()[0].ip_permissions()[0];
    assert_eq!(p.ipv6_ranges()[0].cidr_ipv6(), Some("::/0"));
    assert_eq!(p.ipv6_ranges()[0].description(), Some("https"));
    assert!(p.ip_ranges().is_empty());
    let by_filter = ec2
        .describe_security_groups()
        .filters(filter("ip-permission.ipv6-cidr", &["::/0"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_filter.security_groups().len(), 1);
    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&group)
                .ip_permissions(https("::/0"))
                .send()
                .await
        ),
        "InvalidPermission.Duplicate"
    );
    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&group)
                .ip_permissions(https("2001:db8::1/32"))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let out = ec2
        .revoke_security_group_ingress()
        .group_id(&group)
        .ip_permissions(https("::/0"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.revoked_security_group_rules()[0].cidr_ipv6(),
        Some("::/0")
    );
    let described = ec2
        .describe_security_groups()
        .group_ids(&group)
        .send()
        .await
        .unwrap();
    assert!(described.security_groups()[0].ip_permissions().is_empty());

    // ACL entries for IPv6 ranges; ICMPv6 takes a type and code.
    let acl = default_acl(&ec2, &vpc_id).await;
    ec2.create_network_acl_entry()
        .network_acl_id(&acl)
        .rule_number(110)
        .egress(false)
        .protocol("58")
        .icmp_type_code(IcmpTypeCode::builder().r#type(128).code(-1).build())
        .ipv6_cidr_block("2001:db8::/32")
        .rule_action(RuleAction::Deny)
        .send()
        .await
        .unwrap();
    assert!(
        entries(&ec2, &acl)
            .await
            .contains(&(110, false, s("2001:db8::/32"), s("deny")))
    );
    let by_filter = ec2
        .describe_network_acls()
        .filters(filter("entry.ipv6-cidr", &["2001:db8::/32"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_filter.network_acls().len(), 1);
    for (protocol, icmp, v4, v6, expected) in [
        ("58", false, None, Some("2001:db8::/32"), "MissingParameter"),
        (
            "-1",
            false,
            Some("10.0.0.0/8"),
            Some("2001:db8::/32"),
            "InvalidParameterCombination",
        ),
        ("-1", false, None, None, "MissingParameter"),
        (
            "-1",
            false,
            None,
            Some("2001:db8::1/32"),
            "InvalidParameterValue",
        ),
        (
            "58",
            true,
            None,
            Some("2001:db8::/32"),
            "NetworkAclEntryAlreadyExists",
        ),
    ] {
        let mut r = ec2
            .create_network_acl_entry()
            .network_acl_id(&acl)
            .rule_number(if expected == "NetworkAclEntryAlreadyExists" {
                110
            } else {
                120
            })
            .egress(false)
            .protocol(protocol)
            .rule_action(RuleAction::Allow)
            .set_cidr_block(v4.map(str::to_string))
            .set_ipv6_cidr_block(v6.map(str::to_string));
        if icmp {
            r = r.icmp_type_code(IcmpTypeCode::builder().r#type(-1).code(-1).build());
        }
        assert_eq!(code(r.send().await), expected, "{protocol} {v4:?} {v6:?}");
    }
    assert_eq!(entries(&ec2, &acl).await.len(), 9);
}

/// The IPv6 addresses of an interface, as DescribeNetworkInterfaces lists them.
async fn interface_ipv6(ec2: &aws_sdk_ec2::Client, eni: &str) -> Vec<std::net::Ipv6Addr> {
    let out = ec2
        .describe_network_interfaces()
        .network_interface_ids(eni)
        .send()
        .await
        .unwrap();
    out.network_interfaces()[0]
        .ipv6_addresses()
        .iter()
        .map(|a| a.ipv6_address().unwrap().parse().unwrap())
        .collect()
}

/// Creates an interface in `subnet` with `count` IPv6 addresses (none when 0).
async fn ipv6_interface(ec2: &aws_sdk_ec2::Client, subnet: &str, count: i32) -> String {
    let mut r = ec2.create_network_interface().subnet_id(subnet);
    if count > 0 {
        r = r.ipv6_address_count(count);
    }
    r.send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap()
}

#[tokio::test]
async fn interfaces_and_instances_take_addresses_of_their_subnets_slash_64() {
    use aws_sdk_ec2::types::InstanceIpv6Address;
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, block) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let slash64: ipnet::Ipv6Net = slash64(&block, 1).parse().unwrap();
    let subnet = dual_stack_subnet(&ec2, &vpc_id, "10.0.1.0/24", &slash64.to_string()).await;
    let usable = |ip: &std::net::Ipv6Addr| {
        let host = u128::from(*ip) - u128::from(slash64.network());
        slash64.contains(ip) && host >= 4 && host != u128::from(u64::MAX)
    };

    // Drawn at random from the /64, none of AWS's reserved ones.
    let eni = ipv6_interface(&ec2, &subnet, 2).await;
    let drawn = interface_ipv6(&ec2, &eni).await;
    assert_eq!(drawn.len(), 2);
    assert_ne!(drawn[0], drawn[1]);
    assert!(drawn.iter().all(usable), "{drawn:?}");
    let by_filter = ec2
        .describe_network_interfaces()
        .filters(filter(
            "ipv6-addresses.ipv6-address",
            &[&drawn[0].to_string()],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(by_filter.network_interfaces().len(), 1);

    // Named: taken as given, once; a reserved or foreign one, both forms at once, or a count
    // below 1, refused with nothing made.
    let named = std::net::Ipv6Addr::from(u128::from(slash64.network()) + 0x10);
    let named_eni = ec2
        .create_network_interface()
        .subnet_id(&subnet)
        .ipv6_addresses(
            InstanceIpv6Address::builder()
                .ipv6_address(named.to_string())
                .build(),
        )
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    assert_eq!(interface_ipv6(&ec2, &named_eni).await, [named]);
    let before = ec2
        .describe_network_interfaces()
        .send()
        .await
        .unwrap()
        .network_interfaces()
        .len();
    let reserved = std::net::Ipv6Addr::from(u128::from(slash64.network()) + 1);
    for (addresses, count, expected) in [
        (vec![named], None, "InvalidIPAddress.InUse"),
        (vec![reserved], None, "InvalidParameterValue"),
        (
            vec!["2001:db8::10".parse().unwrap()],
            None,
            "InvalidParameterValue",
        ),
        (vec![named], Some(1), "InvalidParameterCombination"),
        (vec![], Some(0), "InvalidParameterValue"),
    ] {
        let mut r = ec2
            .create_network_interface()
            .subnet_id(&subnet)
            .set_ipv6_address_count(count);
        for a in &addresses {
            r = r.ipv6_addresses(
                InstanceIpv6Address::builder()
                    .ipv6_address(a.to_string())
                    .build(),
            );
        }
        assert_eq!(code(r.send().await), expected, "{addresses:?} {count:?}");
    }
    assert_eq!(
        ec2.describe_network_interfaces()
            .send()
            .await
            .unwrap()
            .network_interfaces()
            .len(),
        before
    );

    // Assigned and unassigned.
    let out = ec2
        .assign_ipv6_addresses()
        .network_interface_id(&eni)
        .ipv6_address_count(1)
        .send()
        .await
        .unwrap();
    assert_eq!(out.network_interface_id(), Some(eni.as_str()));
    let assigned: std::net::Ipv6Addr = out.assigned_ipv6_addresses()[0].parse().unwrap();
    assert!(usable(&assigned));
    assert_eq!(interface_ipv6(&ec2, &eni).await.len(), 3);
    assert_eq!(
        code(
            ec2.unassign_ipv6_addresses()
                .network_interface_id(&eni)
                .ipv6_addresses(assigned.to_string())
                .ipv6_addresses(named.to_string())
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(interface_ipv6(&ec2, &eni).await.len(), 3);
    let out = ec2
        .unassign_ipv6_addresses()
        .network_interface_id(&eni)
        .ipv6_addresses(assigned.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(out.unassigned_ipv6_addresses(), [assigned.to_string()]);
    assert_eq!(interface_ipv6(&ec2, &eni).await, drawn);
    // A deleted interface gives its addresses back.
    ec2.delete_network_interface()
        .network_interface_id(&named_eni)
        .send()
        .await
        .unwrap();
    ec2.assign_ipv6_addresses()
        .network_interface_id(&eni)
        .ipv6_addresses(named.to_string())
        .send()
        .await
        .unwrap();

    // A subnet without a block gives none.
    let plain = crate::subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&plain)
                .ipv6_address_count(1)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let plain_eni = ipv6_interface(&ec2, &plain, 0).await;
    assert!(interface_ipv6(&ec2, &plain_eni).await.is_empty());

    // Launches: a count for the instance, and the subnet's default of one.
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let launched = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Small)
        .subnet_id(&subnet)
        .ipv6_address_count(2)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let i = &launched.instances()[0];
    let nic = &i.network_interfaces()[0];
    assert_eq!(nic.ipv6_addresses().len(), 2);
    assert_eq!(i.ipv6_address(), nic.ipv6_addresses()[0].ipv6_address());
    let id = i.instance_id().unwrap().to_string();
    let by_filter = ec2
        .describe_instances()
        .filters(filter("ipv6-address", &[i.ipv6_address().unwrap()]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        by_filter.reservations()[0].instances()[0].instance_id(),
        Some(id.as_str())
    );
    assert_eq!(
        code(
            ec2.run_instances()
                .image_id(&ami)
                .instance_type(aws_sdk_ec2::types::InstanceType::T3Small)
                .subnet_id(&subnet)
                .ipv6_addresses(
                    InstanceIpv6Address::builder()
                        .ipv6_address(
                            std::net::Ipv6Addr::from(u128::from(slash64.network()) + 0x20)
                                .to_string()
                        )
                        .build()
                )
                .min_count(2)
                .max_count(2)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    ec2.modify_subnet_attribute()
        .subnet_id(&subnet)
        .assign_ipv6_address_on_creation(AttributeBooleanValue::builder().value(true).build())
        .send()
        .await
        .unwrap();
    let defaulted = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Small)
        .subnet_id(&subnet)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    assert_eq!(
        defaulted.instances()[0].network_interfaces()[0]
            .ipv6_addresses()
            .len(),
        1
    );
    let defaulted_eni = ipv6_interface(&ec2, &subnet, 0).await;
    assert_eq!(interface_ipv6(&ec2, &defaulted_eni).await.len(), 1);

    // The subnet's block stays while interfaces hold its addresses.
    ec2.modify_subnet_attribute()
        .subnet_id(&subnet)
        .assign_ipv6_address_on_creation(AttributeBooleanValue::builder().value(false).build())
        .send()
        .await
        .unwrap();
    let association = ec2
        .describe_subnets()
        .subnet_ids(&subnet)
        .send()
        .await
        .unwrap()
        .subnets()[0]
        .ipv6_cidr_block_association_set()[0]
        .association_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.disassociate_subnet_cidr_block()
                .association_id(&association)
                .send()
                .await
        ),
        "InvalidCidrBlock.InUse"
    );
}

/// The addresses of interface `eni` marked primary (`IsPrimaryIpv6`).
async fn primary_ipv6(ec2: &aws_sdk_ec2::Client, eni: &str) -> Vec<String> {
    let out = ec2
        .describe_network_interfaces()
        .network_interface_ids(eni)
        .send()
        .await
        .unwrap();
    out.network_interfaces()[0]
        .ipv6_addresses()
        .iter()
        .filter(|a| a.is_primary_ipv6() == Some(true))
        .map(|a| a.ipv6_address().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_primary_ipv6_address_is_the_first_and_stays() {
    use aws_sdk_ec2::types::{InstanceNetworkInterfaceSpecification, InstanceType};
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, block) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let subnet = dual_stack_subnet(&ec2, &vpc_id, "10.0.1.0/24", &slash64(&block, 1)).await;
    let plain = crate::subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;

    // A launch enabling it: the first of the interface's addresses is its primary one, and
    // the instance's IPv6 address.
    let launched = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Small)
        .subnet_id(&subnet)
        .ipv6_address_count(2)
        .enable_primary_ipv6(true)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let i = &launched.instances()[0];
    let nic = &i.network_interfaces()[0];
    let addresses: Vec<(&str, bool)> = nic
        .ipv6_addresses()
        .iter()
        .map(|a| (a.ipv6_address().unwrap(), a.is_primary_ipv6().unwrap()))
        .collect();
    assert_eq!(addresses.len(), 2);
    assert_eq!(
        addresses.iter().map(|a| a.1).collect::<Vec<_>>(),
        [true, false]
    );
    let eni = nic.network_interface_id().unwrap().to_string();
    let first = addresses[0].0.to_string();
    let described = ec2
        .describe_instances()
        .instance_ids(i.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    let di = &described.reservations()[0].instances()[0];
    assert_eq!(di.ipv6_address(), Some(first.as_str()));
    assert_eq!(
        di.network_interfaces()[0]
            .ipv6_addresses()
            .iter()
            .filter(|a| a.is_primary_ipv6() == Some(true))
            .map(|a| a.ipv6_address().unwrap())
            .collect::<Vec<_>>(),
        [first.as_str()]
    );
    assert_eq!(primary_ipv6(&ec2, &eni).await, std::slice::from_ref(&first));

    // It stays: not unassigned, not disabled; the other address goes.
    assert_eq!(
        code(
            ec2.unassign_ipv6_addresses()
                .network_interface_id(&eni)
                .ipv6_addresses(&first)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.modify_network_interface_attribute()
                .network_interface_id(&eni)
                .enable_primary_ipv6(false)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    ec2.unassign_ipv6_addresses()
        .network_interface_id(&eni)
        .ipv6_addresses(addresses[1].0)
        .send()
        .await
        .unwrap();
    assert_eq!(primary_ipv6(&ec2, &eni).await, [first]);

    // A launch interface's PrimaryIpv6, and an interface made or modified to have one.
    let launched = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Small)
        .network_interfaces(
            InstanceNetworkInterfaceSpecification::builder()
                .device_index(0)
                .subnet_id(&subnet)
                .ipv6_address_count(1)
                .primary_ipv6(true)
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let eni = launched.instances()[0].network_interfaces()[0]
        .network_interface_id()
        .unwrap()
        .to_string();
    assert_eq!(primary_ipv6(&ec2, &eni).await.len(), 1);
    let made = ec2
        .create_network_interface()
        .subnet_id(&subnet)
        .ipv6_address_count(1)
        .enable_primary_ipv6(true)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    assert_eq!(primary_ipv6(&ec2, &made).await.len(), 1);
    let later = ipv6_interface(&ec2, &subnet, 1).await;
    assert!(primary_ipv6(&ec2, &later).await.is_empty());
    ec2.modify_network_interface_attribute()
        .network_interface_id(&later)
        .enable_primary_ipv6(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        primary_ipv6(&ec2, &later).await,
        interface_ipv6(&ec2, &later)
            .await
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );

    // Only in a subnet with an IPv6 block; nothing is made.
    let before = ec2
        .describe_instances()
        .send()
        .await
        .unwrap()
        .reservations()
        .len();
    assert_eq!(
        code(
            ec2.run_instances()
                .image_id(&ami)
                .instance_type(InstanceType::T3Small)
                .subnet_id(&plain)
                .enable_primary_ipv6(true)
                .min_count(1)
                .max_count(1)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        ec2.describe_instances()
            .send()
            .await
            .unwrap()
            .reservations()
            .len(),
        before
    );
    assert_eq!(
        code(
            ec2.create_network_interface()
                .subnet_id(&plain)
                .enable_primary_ipv6(true)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

#[tokio::test]
async fn a_template_launches_instances_with_ipv6_addresses() {
    use aws_sdk_ec2::types::{
        LaunchTemplateInstanceNetworkInterfaceSpecificationRequest, LaunchTemplateSpecification,
        RequestLaunchTemplateData,
    };
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, block) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let subnet = dual_stack_subnet(&ec2, &vpc_id, "10.0.1.0/24", &slash64(&block, 9)).await;
    let ami = crate::image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    ec2.create_launch_template()
        .launch_template_name("dual-stack")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(aws_sdk_ec2::types::InstanceType::T3Small)
                .network_interfaces(
                    LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
                        .device_index(0)
                        .subnet_id(&subnet)
                        .ipv6_address_count(2)
                        .primary_ipv6(true)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let versions = ec2
        .describe_launch_template_versions()
        .launch_template_name("dual-stack")
        .send()
        .await
        .unwrap();
    let data = versions.launch_template_versions()[0]
        .launch_template_data()
        .unwrap();
    assert_eq!(data.network_interfaces()[0].ipv6_address_count(), Some(2));
    assert_eq!(data.network_interfaces()[0].primary_ipv6(), Some(true));
    let run = ec2
        .run_instances()
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_name("dual-stack")
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let nic = &run.instances()[0].network_interfaces()[0];
    assert_eq!(nic.subnet_id(), Some(subnet.as_str()));
    let net: ipnet::Ipv6Net = slash64(&block, 9).parse().unwrap();
    let addresses: Vec<std::net::Ipv6Addr> = nic
        .ipv6_addresses()
        .iter()
        .map(|a| a.ipv6_address().unwrap().parse().unwrap())
        .collect();
    assert_eq!(addresses.len(), 2);
    assert!(addresses.iter().all(|a| net.contains(a)), "{addresses:?}");
    // The template's PrimaryIpv6: the first address is the interface's primary one.
    assert_eq!(
        nic.ipv6_addresses()
            .iter()
            .map(|a| a.is_primary_ipv6())
            .collect::<Vec<_>>(),
        [Some(true), Some(false)]
    );
}

#[tokio::test]
async fn dns64_and_aaaa_records_need_the_subnets_ipv6_block() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (vpc_id, block) = ipv6_vpc(&ec2, "10.0.0.0/16").await;
    let dual = ec2
        .create_subnet()
        .vpc_id(&vpc_id)
        .cidr_block("10.0.1.0/24")
        .ipv6_cidr_block(slash64(&block, 1))
        .availability_zone("us-east-1a")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap();
    let (dual_id, association) = (
        dual.subnet_id().unwrap().to_string(),
        dual.ipv6_cidr_block_association_set()[0]
            .association_id()
            .unwrap()
            .to_string(),
    );
    let bare = crate::subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1a").await;
    let on = || AttributeBooleanValue::builder().value(true).build();
    let off = || AttributeBooleanValue::builder().value(false).build();
    // (DNS64, AAAA records) as DescribeSubnets shows them and its filters find them.
    let shown = |id: String| {
        let ec2 = ec2.clone();
        async move {
            let out = ec2.describe_subnets().subnet_ids(&id).send().await.unwrap();
            let s = &out.subnets()[0];
            (
                s.enable_dns64().unwrap(),
                s.private_dns_name_options_on_launch()
                    .unwrap()
                    .enable_resource_name_dns_aaaa_record()
                    .unwrap(),
            )
        }
    };
    assert_eq!(shown(dual_id.clone()).await, (false, false));

    // On a subnet without an IPv6 block: refused in AWS's words, nothing changed.
    let (code_of, message) = crate::code_and_message(
        ec2.modify_subnet_attribute()
            .subnet_id(&bare)
            .enable_dns64(on())
            .send()
            .await,
    );
    assert_eq!(code_of, "InvalidParameterValue");
    assert!(
        message.contains("Cannot set enable-dns64 to true unless the subnet"),
        "{message}"
    );
    let refused = ec2
        .modify_subnet_attribute()
        .subnet_id(&bare)
        .enable_resource_name_dns_aaaa_record_on_launch(on())
        .send()
        .await;
    assert_eq!(code(refused), "InvalidParameterValue");
    assert_eq!(shown(bare.clone()).await, (false, false));

    // One at a time, on the subnet with a block.
    let both = ec2
        .modify_subnet_attribute()
        .subnet_id(&dual_id)
        .enable_dns64(on())
        .enable_resource_name_dns_aaaa_record_on_launch(on())
        .send()
        .await;
    assert_eq!(code(both), "InvalidParameterCombination");
    ec2.modify_subnet_attribute()
        .subnet_id(&dual_id)
        .enable_dns64(on())
        .send()
        .await
        .unwrap();
    assert_eq!(shown(dual_id.clone()).await, (true, false));
    ec2.modify_subnet_attribute()
        .subnet_id(&dual_id)
        .enable_resource_name_dns_aaaa_record_on_launch(on())
        .send()
        .await
        .unwrap();
    assert_eq!(shown(dual_id.clone()).await, (true, true));
    for name in [
        "enable-dns64",
        "private-dns-name-options-on-launch.enable-resource-name-dns-aaaa-record",
    ] {
        let found = crate::subnet_ids(&ec2, vec![filter(name, &["true"])]).await;
        assert_eq!(found, std::slice::from_ref(&dual_id), "{name}");
    }

    // An instance launched there answers AAAA records of its name unless it says otherwise.
    let i = crate::instance(&ec2, &dual_id).await;
    let described = crate::described(&ec2, &i).await;
    assert_eq!(
        described
            .private_dns_name_options()
            .unwrap()
            .enable_resource_name_dns_aaaa_record(),
        Some(true)
    );

    // While either is on, the block stays; once off, it goes.
    ec2.terminate_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    let disassociate = || {
        ec2.disassociate_subnet_cidr_block()
            .association_id(&association)
            .send()
    };
    assert_eq!(code(disassociate().await), "InvalidCidrBlock.InUse");
    ec2.modify_subnet_attribute()
        .subnet_id(&dual_id)
        .enable_dns64(off())
        .send()
        .await
        .unwrap();
    assert_eq!(code(disassociate().await), "InvalidCidrBlock.InUse");
    ec2.modify_subnet_attribute()
        .subnet_id(&dual_id)
        .enable_resource_name_dns_aaaa_record_on_launch(off())
        .send()
        .await
        .unwrap();
    disassociate().await.unwrap();
    assert_eq!(shown(dual_id).await, (false, false));
}
