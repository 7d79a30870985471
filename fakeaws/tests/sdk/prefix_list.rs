//! AWS-managed prefix lists through the SDK: the list a gateway endpoint's route leads to is
//! described by DescribePrefixLists (as Terraform reads a gateway endpoint's `cidr_blocks`)
//! and DescribeManagedPrefixLists, its ranges by GetManagedPrefixListEntries; filters,
//! pagination and AWS's two spellings of the not-found code; security group rules to such a
//! list (Authorize, Describe, Modify, Revoke).

use std::collections::BTreeSet;

use aws_sdk_ec2::types::{
    IpPermission, IpRange, PrefixListId, SecurityGroupRuleRequest, SecurityGroupRuleUpdate,
};

use crate::{code, code_and_message, empty_fake, filter, route_table, vpc};

const S3: &str = "com.amazonaws.us-east-1.s3";
const DYNAMODB: &str = "com.amazonaws.us-east-1.dynamodb";

/// The prefix list a new gateway endpoint to `service` routes `table` to.
async fn routed_list(ec2: &aws_sdk_ec2::Client, vpc_id: &str, service: &str) -> String {
    let table = route_table(ec2, vpc_id).await;
    ec2.create_vpc_endpoint()
        .vpc_id(vpc_id)
        .service_name(service)
        .route_table_ids(&table)
        .send()
        .await
        .unwrap();
    let out = ec2
        .describe_route_tables()
        .route_table_ids(&table)
        .send()
        .await
        .unwrap();
    out.route_tables()[0]
        .routes()
        .iter()
        .find_map(|r| r.destination_prefix_list_id())
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_gateway_endpoints_prefix_list_is_described_with_its_ranges() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s3 = routed_list(&ec2, &vpc_id, S3).await;
    let ddb = routed_list(&ec2, &vpc_id, DYNAMODB).await;

    // DescribePrefixLists by the service's name, as Terraform finds an endpoint's list.
    let by_name = ec2
        .describe_prefix_lists()
        .filters(filter("prefix-list-name", &[S3]))
        .send()
        .await
        .unwrap();
    let [listed] = by_name.prefix_lists() else {
        panic!("one list: {by_name:?}");
    };
    assert_eq!(listed.prefix_list_id(), Some(s3.as_str()));
    assert_eq!(listed.prefix_list_name(), Some(S3));
    let cidrs: Vec<ipnet::Ipv4Net> = listed.cidrs().iter().map(|c| c.parse().unwrap()).collect();
    assert!(!cidrs.is_empty());
    assert!(cidrs.iter().all(|c| c.addr() == c.network()), "{cidrs:?}");

    // Every list of the region: exactly the two the endpoints route to.
    let all = ec2.describe_prefix_lists().send().await.unwrap();
    let ids: BTreeSet<&str> = all
        .prefix_lists()
        .iter()
        .map(|p| p.prefix_list_id().unwrap())
        .collect();
    assert_eq!(ids, BTreeSet::from([s3.as_str(), ddb.as_str()]));

    // The same lists as managed lists: AWS's, IPv4, complete.
    let managed = ec2
        .describe_managed_prefix_lists()
        .prefix_list_ids(&ddb)
        .send()
        .await
        .unwrap();
    let [m] = managed.prefix_lists() else {
        panic!("one list: {managed:?}");
    };
    assert_eq!(m.prefix_list_name(), Some(DYNAMODB));
    assert_eq!(m.owner_id(), Some("AWS"));
    assert_eq!(m.address_family(), Some("IPv4"));
    assert_eq!(m.state().map(|s| s.as_str()), Some("create-complete"));
    assert_eq!(
        m.prefix_list_arn(),
        Some(format!("arn:aws:ec2:us-east-1:aws:prefix-list/{ddb}").as_str())
    );
    let owned_by_aws = ec2
        .describe_managed_prefix_lists()
        .filters(filter("owner-id", &["AWS"]))
        .send()
        .await
        .unwrap();
    assert_eq!(owned_by_aws.prefix_lists().len(), 2);
    let owned_by_me = ec2
        .describe_managed_prefix_lists()
        .filters(filter("owner-id", &["123456789012"]))
        .send()
        .await
        .unwrap();
    assert!(owned_by_me.prefix_lists().is_empty());

    // The entries are the ranges DescribePrefixLists gives, a page at a time.
    let mut entries = Vec::new();
    let mut pages = ec2
        .get_managed_prefix_list_entries()
        .prefix_list_id(&s3)
        .max_results(1)
        .into_paginator()
        .send();
    let mut count = 0;
    while let Some(page) = pages.next().await {
        let page = page.unwrap();
        assert_eq!(page.entries().len(), 1);
        count += 1;
        for e in page.entries() {
            assert_eq!(e.description(), None);
            entries.push(e.cidr().unwrap().parse::<ipnet::Ipv4Net>().unwrap());
        }
    }
    assert_eq!(count, cidrs.len());
    assert_eq!(entries, cidrs);
    assert!(entries.windows(2).all(|w| w[0] < w[1]), "{entries:?}");
}

#[tokio::test]
async fn each_region_has_lists_of_its_own() {
    let fake = empty_fake().await;
    let east = fake.ec2_client();
    let west = fake.ec2_client_in("eu-west-1");
    let names = |out: &aws_sdk_ec2::operation::describe_prefix_lists::DescribePrefixListsOutput| {
        out.prefix_lists()
            .iter()
            .map(|p| {
                (
                    p.prefix_list_id().unwrap().to_string(),
                    p.prefix_list_name().unwrap().to_string(),
                    p.cidrs().to_vec(),
                )
            })
            .collect::<Vec<_>>()
    };
    let e = names(&east.describe_prefix_lists().send().await.unwrap());
    let w = names(&west.describe_prefix_lists().send().await.unwrap());
    assert_eq!(e.len(), 2);
    assert_eq!(w.len(), 2);
    for (id, name, cidrs) in &w {
        assert!(name.starts_with("com.amazonaws.eu-west-1."), "{name}");
        assert!(
            e.iter().all(|(i, _, c)| i != id && c != cidrs),
            "{e:?} {w:?}"
        );
    }
    // The same on every call.
    assert_eq!(
        e,
        names(&east.describe_prefix_lists().send().await.unwrap())
    );
}

#[tokio::test]
async fn unknown_and_malformed_lists_are_refused_as_aws_refuses_them() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (c, message) = code_and_message(
        ec2.describe_prefix_lists()
            .prefix_list_ids("pl-00000000")
            .send()
            .await,
    );
    assert_eq!(c, "InvalidPrefixListId.NotFound");
    assert_eq!(message, "The prefix list ID 'pl-00000000' does not exist");
    assert_eq!(
        code(
            ec2.describe_managed_prefix_lists()
                .prefix_list_ids("pl-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidPrefixListID.NotFound"
    );
    assert_eq!(
        code(
            ec2.get_managed_prefix_list_entries()
                .prefix_list_id("pl-00000000")
                .send()
                .await
        ),
        "InvalidPrefixListID.NotFound"
    );
    assert_eq!(
        code(
            ec2.get_managed_prefix_list_entries()
                .prefix_list_id("sg-00000000")
                .send()
                .await
        ),
        "InvalidPrefixListId.Malformed"
    );
    assert_eq!(
        code(
            ec2.describe_prefix_lists()
                .filters(filter("owner-id", &["AWS"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let s3 = ec2
        .describe_prefix_lists()
        .filters(filter("prefix-list-name", &["*.s3"]))
        .send()
        .await
        .unwrap();
    let id = s3.prefix_lists()[0].prefix_list_id().unwrap();
    assert_eq!(
        code(
            ec2.get_managed_prefix_list_entries()
                .prefix_list_id(id)
                .target_version(1)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.describe_managed_prefix_lists()
                .max_results(101)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

/// The id of the region's AWS-managed list for `service` (`com.amazonaws.REGION.SERVICE`).
async fn list_named(ec2: &aws_sdk_ec2::Client, service: &str) -> String {
    ec2.describe_prefix_lists()
        .filters(filter("prefix-list-name", &[service]))
        .send()
        .await
        .unwrap()
        .prefix_lists()[0]
        .prefix_list_id()
        .unwrap()
        .to_string()
}

/// A TCP permission on `port` to the prefix list `list`, and to `cidr` when given.
fn tcp_to_list(port: i32, list: &str, cidr: Option<&str>) -> IpPermission {
    let mut p = IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(port)
        .to_port(port)
        .prefix_list_ids(
            PrefixListId::builder()
                .prefix_list_id(list)
                .description("to the service")
                .build(),
        );
    if let Some(cidr) = cidr {
        p = p.ip_ranges(IpRange::builder().cidr_ip(cidr).build());
    }
    p.build()
}

/// The group's egress rules as DescribeSecurityGroupRules shows them: (id, port, prefix
/// list, CIDR).
async fn egress_rules(
    ec2: &aws_sdk_ec2::Client,
    group_id: &str,
) -> Vec<(String, i32, Option<String>, Option<String>)> {
    let out = ec2
        .describe_security_group_rules()
        .filters(filter("group-id", &[group_id]))
        .send()
        .await
        .unwrap();
    let mut rules: Vec<_> = out
        .security_group_rules()
        .iter()
        .filter(|r| r.is_egress() == Some(true))
        .map(|r| {
            (
                r.security_group_rule_id().unwrap().to_string(),
                r.from_port().unwrap(),
                r.prefix_list_id().map(str::to_string),
                r.cidr_ipv4().map(str::to_string),
            )
        })
        .collect();
    rules.sort();
    rules
}

#[tokio::test]
async fn security_group_rules_reach_aws_managed_prefix_lists() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let group = crate::group(&ec2, &vpc_id, "nodes").await;
    let (s3, ddb) = (list_named(&ec2, S3).await, list_named(&ec2, DYNAMODB).await);
    let before = egress_rules(&ec2, &group).await;

    // Egress to S3's list on 443: the rule names the list, and no range.
    let out = ec2
        .authorize_security_group_egress()
        .group_id(&group)
        .ip_permissions(tcp_to_list(443, &s3, None))
        .send()
        .await
        .unwrap();
    let [rule] = out.security_group_rules() else {
        panic!("one rule: {out:?}");
    };
    assert_eq!(rule.prefix_list_id(), Some(s3.as_str()));
    assert_eq!(
        (rule.cidr_ipv4(), rule.description()),
        (None, Some("to the service"))
    );
    let rule_id = rule.security_group_rule_id().unwrap().to_string();
    let after = egress_rules(&ec2, &group).await;
    assert_eq!(after.len(), before.len() + 1);
    assert!(after.contains(&(rule_id.clone(), 443, Some(s3.clone()), None)));

    // DescribeSecurityGroups groups it in its permission, and its filter finds the group.
    let described = ec2
        .describe_security_groups()
        .filters(filter("egress.ip-permission.prefix-list-id", &[&s3]))
        .send()
        .await
        .unwrap();
    let [g] = described.security_groups() else {
        panic!("one group: {described:?}");
    };
    let permission = g
        .ip_permissions_egress()
        .iter()
        .find(|p| p.from_port() == Some(443))
        .unwrap();
    let lists: Vec<(&str, &str)> = permission
        .prefix_list_ids()
        .iter()
        .map(|p| (p.prefix_list_id().unwrap(), p.description().unwrap()))
        .collect();
    assert_eq!(lists, [(s3.as_str(), "to the service")]);
    assert!(permission.ip_ranges().is_empty());
    for name in [
        "egress.ip-permission.prefix-list-id",
        "ip-permission.prefix-list-id",
    ] {
        let other = if name.starts_with("egress") {
            &ddb
        } else {
            &s3
        };
        let none = ec2
            .describe_security_groups()
            .filters(filter(name, &[other]))
            .send()
            .await
            .unwrap();
        assert!(none.security_groups().is_empty(), "{name} {other}");
    }

    // The same rule again is a duplicate; an unknown list refuses the whole permission.
    assert_eq!(
        code(
            ec2.authorize_security_group_egress()
                .group_id(&group)
                .ip_permissions(tcp_to_list(443, &s3, None))
                .send()
                .await
        ),
        "InvalidPermission.Duplicate"
    );
    let (c, message) = code_and_message(
        ec2.authorize_security_group_egress()
            .group_id(&group)
            .ip_permissions(tcp_to_list(8443, "pl-00000000", Some("10.1.0.0/16")))
            .send()
            .await,
    );
    assert_eq!(c, "InvalidPrefixListID.NotFound");
    assert_eq!(message, "The prefix list ID 'pl-00000000' does not exist");
    assert_eq!(egress_rules(&ec2, &group).await, after);

    // ModifySecurityGroupRules points the rule at DynamoDB's list, under its id.
    ec2.modify_security_group_rules()
        .group_id(&group)
        .security_group_rules(
            SecurityGroupRuleUpdate::builder()
                .security_group_rule_id(&rule_id)
                .security_group_rule(
                    SecurityGroupRuleRequest::builder()
                        .ip_protocol("tcp")
                        .from_port(443)
                        .to_port(443)
                        .prefix_list_id(&ddb)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert!(egress_rules(&ec2, &group).await.contains(&(
        rule_id.clone(),
        443,
        Some(ddb.clone()),
        None
    )));

    // Revoked by its permission, as Terraform revokes it: gone, and answered as revoked.
    let revoked = ec2
        .revoke_security_group_egress()
        .group_id(&group)
        .ip_permissions(tcp_to_list(443, &ddb, None))
        .send()
        .await
        .unwrap();
    let [gone] = revoked.revoked_security_group_rules() else {
        panic!("one rule: {revoked:?}");
    };
    assert_eq!(
        (gone.security_group_rule_id(), gone.prefix_list_id()),
        (Some(rule_id.as_str()), Some(ddb.as_str()))
    );
    assert_eq!(egress_rules(&ec2, &group).await, before);
}
