//! The account's own public IPv4 ranges (BYOIP) through the SDK: each a pool that
//! DescribePublicIpv4Pools shows with its free addresses, AllocateAddress takes addresses
//! from (the next free one, or the one asked for), a released address going back to it; the
//! ranges checked as AWS checks them before the fake starts.

use crate::{code, code_and_message, gateway, instance, subnet, vpc};

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

/// The pool's (total, free) addresses, as DescribePublicIpv4Pools shows them.
async fn counts(ec2: &aws_sdk_ec2::Client, pool: &str) -> (i32, i32) {
    let d = ec2
        .describe_public_ipv4_pools()
        .pool_ids(pool)
        .send()
        .await
        .unwrap();
    let p = &d.public_ipv4_pools()[0];
    let range = &p.pool_address_ranges()[0];
    assert_eq!(
        (range.address_count(), range.available_address_count()),
        (p.total_address_count(), p.total_available_address_count())
    );
    (
        p.total_address_count().unwrap(),
        p.total_available_address_count().unwrap(),
    )
}

#[tokio::test]
async fn addresses_come_from_the_accounts_own_range_and_go_back_to_it() {
    let fake = fake_with(&["198.18.0.0/24", "198.18.4.0/23"]).await;
    let ec2 = fake.ec2_client();
    let pools = ec2.describe_public_ipv4_pools().send().await.unwrap();
    let mut ranges: Vec<(String, String, String)> = pools
        .public_ipv4_pools()
        .iter()
        .map(|p| {
            let r = &p.pool_address_ranges()[0];
            assert!(p.pool_id().unwrap().starts_with("ipv4pool-ec2-"));
            assert_eq!(p.network_border_group(), Some("us-east-1"));
            (
                r.first_address().unwrap().to_string(),
                r.last_address().unwrap().to_string(),
                p.pool_id().unwrap().to_string(),
            )
        })
        .collect();
    ranges.sort();
    let [(first, last, pool), (_, _, big)] = ranges.try_into().unwrap();
    assert_eq!(
        (first.as_str(), last.as_str()),
        ("198.18.0.0", "198.18.0.255")
    );
    assert_eq!(counts(&ec2, &pool).await, (256, 256));
    assert_eq!(counts(&ec2, &big).await, (512, 512));
    // Pages of one.
    let page = ec2
        .describe_public_ipv4_pools()
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(page.public_ipv4_pools().len(), 1);
    let rest = ec2
        .describe_public_ipv4_pools()
        .max_results(1)
        .next_token(page.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.public_ipv4_pools().len(), 1);
    assert_ne!(
        rest.public_ipv4_pools()[0].pool_id(),
        page.public_ipv4_pools()[0].pool_id()
    );

    // The next free address of the pool, then the one asked for.
    let a = ec2
        .allocate_address()
        .public_ipv4_pool(&pool)
        .send()
        .await
        .unwrap();
    assert_eq!(
        (a.public_ip(), a.public_ipv4_pool()),
        (Some("198.18.0.1"), Some(pool.as_str()))
    );
    let b = ec2
        .allocate_address()
        .public_ipv4_pool(&pool)
        .address("198.18.0.77")
        .send()
        .await
        .unwrap();
    assert_eq!(b.public_ip(), Some("198.18.0.77"));
    // An address of the range, named alone, comes from its pool too.
    let c = ec2
        .allocate_address()
        .address("198.18.5.9")
        .send()
        .await
        .unwrap();
    assert_eq!(c.public_ipv4_pool(), Some(big.as_str()));
    assert_eq!(counts(&ec2, &pool).await, (256, 254));
    let held = ec2
        .describe_addresses()
        .allocation_ids(a.allocation_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(held.addresses()[0].public_ipv4_pool(), Some(pool.as_str()));
    // AWS's own addresses still come from AWS's pool.
    let amazon = ec2.allocate_address().send().await.unwrap();
    assert_eq!(amazon.public_ipv4_pool(), Some("amazon"));

    // Refused, nothing allocated: an address taken, one outside the pool, a pool the account
    // does not have.
    for (call, expected) in [
        (
            ec2.allocate_address()
                .public_ipv4_pool(&pool)
                .address("198.18.0.77")
                .send()
                .await,
            "InvalidParameterValue",
        ),
        (
            ec2.allocate_address()
                .public_ipv4_pool(&pool)
                .address("198.18.4.1")
                .send()
                .await,
            "InvalidParameterValue",
        ),
        (
            ec2.allocate_address()
                .public_ipv4_pool("ipv4pool-ec2-0123456789abcdef0")
                .send()
                .await,
            "InvalidPublicIpv4PoolID.NotFound",
        ),
    ] {
        assert_eq!(code(call), expected);
    }
    assert_eq!(
        code(
            ec2.describe_public_ipv4_pools()
                .pool_ids("ipv4pool-ec2-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidPublicIpv4PoolID.NotFound"
    );
    assert_eq!(counts(&ec2, &pool).await, (256, 254));

    // An address of the pool maps onto an instance as any other; released, it is free again.
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let i = instance(&ec2, &s).await;
    gateway(&ec2, &vpc_id).await;
    ec2.associate_address()
        .allocation_id(a.allocation_id().unwrap())
        .instance_id(&i)
        .send()
        .await
        .unwrap();
    let d = ec2
        .describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.reservations()[0].instances()[0].public_ip_address(),
        Some("198.18.0.1")
    );
    for alloc in [&b, &c] {
        ec2.release_address()
            .allocation_id(alloc.allocation_id().unwrap())
            .send()
            .await
            .unwrap();
    }
    assert_eq!(counts(&ec2, &pool).await, (256, 255));
    assert_eq!(counts(&ec2, &big).await, (512, 512));
    let again = ec2
        .allocate_address()
        .address("198.18.0.77")
        .send()
        .await
        .unwrap();
    assert_eq!(again.public_ipv4_pool(), Some(pool.as_str()));
}

/// An address of AWS's pool that the account released can be recovered while nobody took
/// it (`Address` alone); one still held cannot.
#[tokio::test]
async fn a_released_address_of_awss_pool_is_recovered() {
    let fake = fake_with(&[]).await;
    let ec2 = fake.ec2_client();
    let a = ec2.allocate_address().send().await.unwrap();
    let ip = a.public_ip().unwrap().to_string();
    let (code, message) = code_and_message(ec2.allocate_address().address(&ip).send().await);
    assert_eq!(code, "InvalidParameterValue", "{message}");
    ec2.release_address()
        .allocation_id(a.allocation_id().unwrap())
        .send()
        .await
        .unwrap();
    let back = ec2.allocate_address().address(&ip).send().await.unwrap();
    assert_eq!(
        (back.public_ip(), back.public_ipv4_pool()),
        (Some(ip.as_str()), Some("amazon"))
    );
}

/// Ranges AWS would not take are refused before the fake starts, naming the problem.
#[tokio::test]
async fn ranges_aws_would_not_take_are_refused() {
    for (cidrs, needle) in [
        (
            vec!["198.18.0.0/25"],
            "the most specific range AWS takes is a /24",
        ),
        (vec!["10.1.0.0/16"], "is not public"),
        (vec!["203.0.113.0/24"], "the fake's own public addresses"),
        (
            vec!["198.18.0.0/23", "198.18.1.0/24"],
            "overlaps 198.18.0.0/23",
        ),
        (
            vec![
                "198.18.0.0/24",
                "198.18.1.0/24",
                "198.18.2.0/24",
                "198.18.3.0/24",
                "198.18.4.0/24",
                "198.18.5.0/24",
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
    let e = "us-east-1=198.18.0.1/24"
        .parse::<fakeaws::ec2::public_ipv4_pool::ByoipCidr>()
        .unwrap_err();
    assert!(e.contains("host bits"), "{e}");
}

#[tokio::test]
async fn a_pool_takes_tags() {
    let fake = fake_with(&["198.18.0.0/24"]).await;
    let ec2 = fake.ec2_client();
    let pools = ec2.describe_public_ipv4_pools().send().await.unwrap();
    let pool = pools.public_ipv4_pools()[0].pool_id().unwrap().to_string();
    assert!(pools.public_ipv4_pools()[0].tags().is_empty());
    ec2.create_tags()
        .resources(&pool)
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
        .describe_public_ipv4_pools()
        .filters(crate::filter("tag:team", &["net"]))
        .send()
        .await
        .unwrap();
    assert_eq!(tagged.public_ipv4_pools().len(), 1);
    assert_eq!(tagged.public_ipv4_pools()[0].tags()[0].value(), Some("net"));
    let tags = ec2
        .describe_tags()
        .filters(crate::filter("resource-type", &["ipv4pool-ec2"]))
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags().len(), 1);
    assert_eq!(tags.tags()[0].resource_id(), Some(pool.as_str()));
    assert_eq!(
        tags.tags()[0].resource_type().map(|t| t.as_str()),
        Some("ipv4pool-ec2")
    );
    // A pool the account does not have, or an id not shaped as a pool's, changes nothing.
    for (id, want) in [
        (
            "ipv4pool-ec2-0123456789abcdef0",
            "InvalidPublicIpv4PoolID.NotFound",
        ),
        ("ipv4pool-ec2-zz", "InvalidID"),
    ] {
        let refused = ec2
            .create_tags()
            .resources(&pool)
            .resources(id)
            .tags(
                aws_sdk_ec2::types::Tag::builder()
                    .key("k")
                    .value("v")
                    .build(),
            )
            .send()
            .await;
        assert_eq!(code(refused), want);
    }
    ec2.delete_tags().resources(&pool).send().await.unwrap();
    let untagged = ec2
        .describe_public_ipv4_pools()
        .pool_ids(&pool)
        .send()
        .await
        .unwrap();
    assert!(untagged.public_ipv4_pools()[0].tags().is_empty());
}
