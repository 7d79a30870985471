//! The account's own IPv6 ranges (BYOIP) through the SDK: each a pool that DescribeIpv6Pools
//! shows, whose /56s VPCs take (CreateVpc and AssociateVpcCidrBlock with `Ipv6Pool`, the
//! block named or the lowest free one), GetAssociatedIpv6PoolCidrs lists with their VPCs, and
//! DisassociateVpcCidrBlock and DeleteVpc give back; the requests AWS refuses, refused with
//! nothing made; the ranges checked as AWS checks them before the fake starts.

use crate::{code, code_and_message, filter, subnet};

/// A fake whose us-east-1 holds the ranges `cidrs`.
async fn fake_with(cidrs: &[&str]) -> fakeaws::FakeAws {
    fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        byoip: cidrs
            .iter()
            .map(|c| format!("us-east-1={c}").parse().unwrap())
            .collect(),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// The IPv6 pools: (range, id), by range.
async fn pools(ec2: &aws_sdk_ec2::Client) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = ec2
        .describe_ipv6_pools()
        .send()
        .await
        .unwrap()
        .ipv6_pools()
        .iter()
        .map(|p| {
            let [block] = p.pool_cidr_blocks() else {
                panic!("{p:?}")
            };
            (
                block.cidr().unwrap().to_string(),
                p.pool_id().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The blocks of pool `id` VPCs hold: (block, VPC).
async fn associated(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<(String, String)> {
    ec2.get_associated_ipv6_pool_cidrs()
        .pool_id(id)
        .send()
        .await
        .unwrap()
        .ipv6_cidr_associations()
        .iter()
        .map(|a| {
            (
                a.ipv6_cidr().unwrap().to_string(),
                a.associated_resource().unwrap().to_string(),
            )
        })
        .collect()
}

/// The IPv6 blocks of VPC `id` as DescribeVpcs shows them: (block, pool, source, state).
async fn blocks(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<(String, String, String, String)> {
    ec2.describe_vpcs().vpc_ids(id).send().await.unwrap().vpcs()[0]
        .ipv6_cidr_block_association_set()
        .iter()
        .map(|a| {
            (
                a.ipv6_cidr_block().unwrap().to_string(),
                a.ipv6_pool().unwrap().to_string(),
                a.ip_source().unwrap().as_str().to_string(),
                a.ipv6_cidr_block_state()
                    .unwrap()
                    .state()
                    .unwrap()
                    .as_str()
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn vpcs_take_blocks_of_the_accounts_own_range_and_give_them_back() {
    let fake = fake_with(&["2001:db8:100::/48", "2001:db8:200::/55"]).await;
    let ec2 = fake.ec2_client();
    let all = pools(&ec2).await;
    assert_eq!(
        all.iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>(),
        ["2001:db8:100::/48", "2001:db8:200::/55"]
    );
    let (big, small) = (all[0].1.clone(), all[1].1.clone());
    assert!(big.starts_with("ipv6pool-ec2-"), "{big}");

    // The lowest free /56, answered associating, then shown with its pool.
    let made = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .ipv6_pool(&big)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    let first = made.vpc_id().unwrap().to_string();
    let answered = &made.ipv6_cidr_block_association_set()[0];
    assert_eq!(answered.ipv6_cidr_block(), Some("2001:db8:100::/56"));
    assert_eq!(answered.ipv6_pool(), Some(big.as_str()));
    assert_eq!(
        blocks(&ec2, &first).await,
        [(
            "2001:db8:100::/56".to_string(),
            big.clone(),
            "byoip".to_string(),
            "associated".to_string()
        )]
    );
    // The block named, and the next lowest free one after it.
    let named = ec2
        .create_vpc()
        .cidr_block("10.1.0.0/16")
        .ipv6_pool(&big)
        .ipv6_cidr_block("2001:db8:100:300::/56")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let third = ec2
        .create_vpc()
        .cidr_block("10.2.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let out = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&third)
        .ipv6_pool(&big)
        .send()
        .await
        .unwrap();
    let assoc = out.ipv6_cidr_block_association().unwrap();
    assert_eq!(assoc.ipv6_cidr_block(), Some("2001:db8:100:100::/56"));
    assert_eq!(
        assoc
            .ipv6_cidr_block_state()
            .unwrap()
            .state()
            .unwrap()
            .as_str(),
        "associating"
    );
    assert_eq!(
        associated(&ec2, &big).await,
        [
            ("2001:db8:100::/56".to_string(), first.clone()),
            ("2001:db8:100:100::/56".to_string(), third.clone()),
            ("2001:db8:100:300::/56".to_string(), named.clone()),
        ]
    );
    // DescribeVpcs finds them by pool.
    let by_pool = ec2
        .describe_vpcs()
        .filters(filter("ipv6-cidr-block-association.ipv6-pool", &[&big]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_pool.vpcs().len(), 3);
    // A VPC's block from a pool is a block like any other: its subnets take /64s of it.
    let sn = subnet(&ec2, &first, "10.0.0.0/24", "us-east-1a").await;
    let with = ec2
        .associate_subnet_cidr_block()
        .subnet_id(&sn)
        .ipv6_cidr_block("2001:db8:100:0:0::/64")
        .send()
        .await
        .unwrap();
    assert_eq!(
        with.ipv6_cidr_block_association()
            .unwrap()
            .ipv6_cidr_block(),
        Some("2001:db8:100::/64")
    );

    // The small pool holds two /56s: the third ask finds none.
    for cidr in ["10.3.0.0/16", "10.4.0.0/16"] {
        ec2.create_vpc()
            .cidr_block(cidr)
            .ipv6_pool(&small)
            .send()
            .await
            .unwrap();
    }
    let vpcs_before = ec2.describe_vpcs().send().await.unwrap().vpcs().len();
    let r = ec2
        .create_vpc()
        .cidr_block("10.5.0.0/16")
        .ipv6_pool(&small)
        .send()
        .await;
    assert_eq!(code(r), "InsufficientCidrBlocks");
    assert_eq!(
        ec2.describe_vpcs().send().await.unwrap().vpcs().len(),
        vpcs_before,
        "nothing made"
    );

    // Given back: by disassociation and by the VPC's deletion.
    let assoc_id = assoc.association_id().unwrap().to_string();
    ec2.disassociate_vpc_cidr_block()
        .association_id(&assoc_id)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&named).send().await.unwrap();
    assert_eq!(
        associated(&ec2, &big).await,
        [("2001:db8:100::/56".to_string(), first.clone())]
    );
    let again = ec2
        .create_vpc()
        .cidr_block("10.6.0.0/16")
        .ipv6_pool(&big)
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap();
    assert_eq!(
        again.ipv6_cidr_block_association_set()[0].ipv6_cidr_block(),
        Some("2001:db8:100:100::/56")
    );
}

#[tokio::test]
async fn asks_aws_refuses_are_refused_and_make_nothing() {
    let fake = fake_with(&["2001:db8:100::/48"]).await;
    let ec2 = fake.ec2_client();
    let pool = pools(&ec2).await[0].1.clone();
    ec2.create_vpc()
        .cidr_block("10.9.0.0/16")
        .ipv6_pool(&pool)
        .ipv6_cidr_block("2001:db8:100:500::/56")
        .send()
        .await
        .unwrap();
    // (test, pool, block, amazon, code, message part)
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        bool,
        &'a str,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "unknown pool",
            Some("ipv6pool-ec2-0123456789abcdef0"),
            None,
            false,
            "InvalidIpv6PoolID.NotFound",
            "ipv6pool-ec2-0123456789abcdef0",
        ),
        (
            "block without pool",
            None,
            Some("2001:db8:100:100::/56"),
            false,
            "MissingParameter",
            "Ipv6Pool",
        ),
        (
            "pool and Amazon's",
            Some(pool.as_str()),
            None,
            true,
            "InvalidParameterCombination",
            "not both",
        ),
        (
            "not a /56",
            Some(pool.as_str()),
            Some("2001:db8:100:100::/64"),
            false,
            "InvalidParameterValue",
            "/56",
        ),
        (
            "outside the pool",
            Some(pool.as_str()),
            Some("2001:db8:999::/56"),
            false,
            "InvalidParameterValue",
            "not in the IPv6 pool",
        ),
        (
            "taken",
            Some(pool.as_str()),
            Some("2001:db8:100:500::/56"),
            false,
            "InvalidParameterValue",
            "already in use",
        ),
        (
            "host bits",
            Some(pool.as_str()),
            Some("2001:db8:100:501::/56"),
            false,
            "InvalidParameterValue",
            "not a valid IPv6 CIDR",
        ),
    ];
    let target = ec2
        .create_vpc()
        .cidr_block("10.8.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    for (what, p, block, amazon, want_code, part) in cases {
        let before = ec2.describe_vpcs().send().await.unwrap().vpcs().to_vec();
        let r = ec2
            .create_vpc()
            .cidr_block("10.7.0.0/16")
            .set_ipv6_pool(p.map(String::from))
            .set_ipv6_cidr_block(block.map(String::from))
            .set_amazon_provided_ipv6_cidr_block(amazon.then_some(true))
            .send()
            .await;
        let (c, m) = code_and_message(r);
        assert_eq!(c, want_code, "CreateVpc, {what}: {m}");
        assert!(m.contains(part), "CreateVpc, {what}: {m}");
        let r = ec2
            .associate_vpc_cidr_block()
            .vpc_id(&target)
            .set_ipv6_pool(p.map(String::from))
            .set_ipv6_cidr_block(block.map(String::from))
            .set_amazon_provided_ipv6_cidr_block(amazon.then_some(true))
            .send()
            .await;
        let (c, m) = code_and_message(r);
        assert_eq!(c, want_code, "AssociateVpcCidrBlock, {what}: {m}");
        assert_eq!(
            ec2.describe_vpcs().send().await.unwrap().vpcs(),
            before.as_slice(),
            "{what}: nothing made or changed"
        );
    }
    // An IPv4 range and an IPv6 block in one association.
    let r = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&target)
        .cidr_block("10.8.0.0/16")
        .ipv6_pool(&pool)
        .send()
        .await;
    assert_eq!(code(r), "InvalidParameterCombination");
    // Unknown pools are not found by DescribeIpv6Pools or GetAssociatedIpv6PoolCidrs either.
    let r = ec2
        .describe_ipv6_pools()
        .pool_ids("ipv6pool-ec2-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(r), "InvalidIpv6PoolID.NotFound");
    let r = ec2
        .get_associated_ipv6_pool_cidrs()
        .pool_id("ipv6pool-ec2-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(r), "InvalidIpv6PoolID.NotFound");
}

#[tokio::test]
async fn pools_page_and_take_tags() {
    let fake = fake_with(&[
        "2001:db8:100::/48",
        "2001:db8:200::/48",
        "2001:db8:300::/48",
    ])
    .await;
    let ec2 = fake.ec2_client();
    let all = pools(&ec2).await;
    ec2.create_tags()
        .resources(&all[1].1)
        .tags(
            aws_sdk_ec2::types::Tag::builder()
                .key("team")
                .value("net")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let tagged = ec2
        .describe_ipv6_pools()
        .filters(filter("tag:team", &["net"]))
        .send()
        .await
        .unwrap();
    assert_eq!(tagged.ipv6_pools().len(), 1);
    assert_eq!(tagged.ipv6_pools()[0].pool_id(), Some(all[1].1.as_str()));
    assert_eq!(tagged.ipv6_pools()[0].tags()[0].key(), Some("team"));
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&all[1].1]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        tags.tags()[0].resource_type().map(|t| t.as_str()),
        Some("ipv6pool-ec2")
    );
    let mut seen = Vec::new();
    let mut pages = ec2
        .describe_ipv6_pools()
        .max_results(2)
        .into_paginator()
        .send();
    let mut count = 0;
    while let Some(page) = pages.next().await {
        let page = page.unwrap();
        assert!(page.ipv6_pools().len() <= 2);
        count += 1;
        seen.extend(
            page.ipv6_pools()
                .iter()
                .map(|p| p.pool_id().unwrap().to_string()),
        );
    }
    assert_eq!(count, 2);
    seen.sort();
    let mut want: Vec<String> = all.into_iter().map(|(_, id)| id).collect();
    want.sort();
    assert_eq!(seen, want);
}

#[tokio::test]
async fn ipv6_ranges_aws_would_not_take_are_refused() {
    for (cidrs, needle) in [
        (
            vec!["2001:db8:1:100::/57"],
            "the most specific IPv6 range AWS takes is a /56",
        ),
        (vec!["fd12:3456::/48"], "not a global unicast range"),
        (
            vec!["2600:1f00::/40"],
            "the fake's own Amazon-provided blocks",
        ),
        (
            vec!["2001:db8::/32", "2001:db8:5::/48"],
            "overlaps 2001:db8::/32",
        ),
        (
            vec![
                "198.18.0.0/24",
                "198.18.1.0/24",
                "198.18.2.0/24",
                "2001:db8:1::/48",
                "2001:db8:2::/48",
                "2001:db8:3::/48",
            ],
            "at most 5 per region",
        ),
    ] {
        let config = fakeaws::Config {
            byoip: cidrs
                .iter()
                .map(|c| fakeaws::ec2::public_ipv4_pool::ByoipCidr {
                    region: "us-east-1".into(),
                    cidr: c.parse().unwrap(),
                })
                .collect(),
            ..Default::default()
        };
        let e = fakeaws::spawn_with(config).await.err().unwrap();
        assert!(e.to_string().contains(needle), "{needle}: {e}");
    }
    // As `fakeaws --byoip-cidr` reads them.
    let e = "us-east-1=2001:db8::1/48"
        .parse::<fakeaws::ec2::public_ipv4_pool::ByoipCidr>()
        .unwrap_err();
    assert!(e.contains("host bits"), "{e}");
    let e = "us-east-1=2001:db8::/64"
        .parse::<fakeaws::ec2::public_ipv4_pool::ByoipCidr>()
        .unwrap_err();
    assert!(e.contains("/56"), "{e}");
}
