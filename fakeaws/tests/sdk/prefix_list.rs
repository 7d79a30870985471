//! AWS-managed prefix lists through the SDK: the list a gateway endpoint's route leads to is
//! described by DescribePrefixLists (as Terraform reads a gateway endpoint's `cidr_blocks`)
//! and DescribeManagedPrefixLists, its ranges by GetManagedPrefixListEntries; filters,
//! pagination and AWS's two spellings of the not-found code.

use std::collections::BTreeSet;

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
