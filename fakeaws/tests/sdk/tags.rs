//! CreateTags, DeleteTags and DescribeTags through the SDK.

use aws_sdk_ec2::types::{ResourceType, Tag};

use crate::{code, empty_fake, filter, subnet, subnet_ids, vpc, vpc_ids};

fn tag(k: &str, v: &str) -> Tag {
    Tag::builder().key(k).value(v).build()
}

#[tokio::test]
async fn create_describe_delete_tags() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;
    ec2.create_tags()
        .resources(&a)
        .resources(&b)
        .tags(tag("env", "dev"))
        .tags(tag("team", "blue"))
        .send()
        .await
        .unwrap();
    let all = ec2.describe_tags().send().await.unwrap();
    assert_eq!(all.tags().len(), 4);
    let only = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&a]))
        .filters(filter("key", &["env"]))
        .send()
        .await
        .unwrap();
    assert_eq!(only.tags().len(), 1);
    assert_eq!(only.tags()[0].resource_type(), Some(&ResourceType::Vpc));
    assert_eq!(only.tags()[0].value(), Some("dev"));

    // Overwrite, then delete by key and by (key, value).
    ec2.create_tags()
        .resources(&a)
        .tags(tag("env", "prod"))
        .send()
        .await
        .unwrap();
    ec2.delete_tags()
        .resources(&a)
        .tags(Tag::builder().key("team").value("not-blue").build())
        .send()
        .await
        .unwrap();
    ec2.delete_tags()
        .resources(&b)
        .tags(Tag::builder().key("env").build())
        .send()
        .await
        .unwrap();
    let vpcs = ec2
        .describe_vpcs()
        .vpc_ids(&a)
        .vpc_ids(&b)
        .send()
        .await
        .unwrap();
    for v in vpcs.vpcs() {
        let mut tags: Vec<(String, String)> = v
            .tags()
            .iter()
            .map(|t| (t.key().unwrap().to_string(), t.value().unwrap().to_string()))
            .collect();
        tags.sort();
        if v.vpc_id() == Some(a.as_str()) {
            assert_eq!(
                tags,
                [
                    ("env".into(), "prod".into()),
                    ("team".into(), "blue".into())
                ]
            );
        } else {
            assert_eq!(tags, [("team".into(), "blue".into())]);
        }
    }
    // Deleting with no tags removes them all.
    ec2.delete_tags().resources(&a).send().await.unwrap();
    let left = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&a]))
        .send()
        .await
        .unwrap();
    assert!(left.tags().is_empty());
}

#[tokio::test]
async fn errors_change_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    // One missing resource fails the whole call.
    let r = ec2
        .create_tags()
        .resources(&a)
        .resources("vpc-0123456789abcdef0")
        .tags(tag("k", "v"))
        .send()
        .await;
    assert_eq!(code(r), "InvalidVpcID.NotFound");
    // An id of no kind, or of a known kind but not shaped as its ids are.
    for bad in ["nonsense", "vpc-zz", "i-123", "sg-0123456789abcdefg"] {
        assert_eq!(
            code(
                ec2.create_tags()
                    .resources(&a)
                    .resources(bad)
                    .tags(tag("k", "v"))
                    .send()
                    .await
            ),
            "InvalidID",
            "{bad}"
        );
        assert_eq!(
            code(ec2.delete_tags().resources(bad).send().await),
            "InvalidID",
            "{bad}"
        );
    }
    assert_eq!(
        code(
            ec2.create_tags()
                .resources(&a)
                .tags(tag("aws:x", "v"))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.create_tags()
                .resources(&a)
                .tags(tag(&"k".repeat(129), "v"))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(ec2.create_tags().tags(tag("k", "v")).send().await),
        "MissingParameter"
    );
    let mut too_many = ec2.create_tags().resources(&a);
    for i in 0..51 {
        too_many = too_many.tags(tag(&format!("k{i}"), "v"));
    }
    assert_eq!(code(too_many.send().await), "TagLimitExceeded");
    assert!(ec2.describe_tags().send().await.unwrap().tags().is_empty());
    assert_eq!(
        code(
            ec2.describe_tags()
                .filters(filter("owner", &["x"]))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

#[tokio::test]
async fn paginates() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let mut req = ec2.create_tags().resources(&a);
    for i in 0..12 {
        req = req.tags(tag(&format!("k{i:02}"), "v"));
    }
    req.send().await.unwrap();
    let items: Vec<_> = ec2
        .describe_tags()
        .max_results(5)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(items.len(), 12);
    assert_eq!(
        code(ec2.describe_tags().max_results(2).send().await),
        "InvalidParameterValue"
    );
}

/// Filters are capped as EC2 caps them: at most 200 values in one call
/// (`FilterLimitExceeded`), and no value longer than any a filter can match.
#[tokio::test]
async fn filter_values_are_capped() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let id = vpc(&ec2, "10.0.0.0/16").await;
    ec2.create_tags()
        .resources(&id)
        .tags(Tag::builder().key("team").value("v7").build())
        .send()
        .await
        .unwrap();
    let values: Vec<String> = (0..200).map(|i| format!("v{i}")).collect();
    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let found = ec2
        .describe_vpcs()
        .filters(filter("tag-value", &refs))
        .send()
        .await
        .unwrap();
    assert_eq!(found.vpcs().len(), 1);
    let mut more = refs.clone();
    more.push("v200");
    let over = ec2
        .describe_vpcs()
        .filters(filter("tag-value", &more[..100]))
        .filters(filter("tag-key", &more[100..]))
        .send()
        .await;
    assert_eq!(code(over), "FilterLimitExceeded");
    let long = "*".repeat(5000);
    let too_long = ec2
        .describe_vpcs()
        .filters(filter("tag-value", &[&long]))
        .send()
        .await;
    assert_eq!(code(too_long), "InvalidParameterValue");
}

/// Filters answered from the indexes (a tag, `vpc-id`, a resource's own id) combine as
/// filters do, whichever of them the fake reads first: every one must hold, and a tag other
/// kinds carry too brings none of them into the answer.
#[tokio::test]
async fn indexed_filters_all_hold_and_keep_to_the_kind() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;
    let a1 = subnet(&ec2, &a, "10.0.1.0/24", "us-east-1a").await;
    let a2 = subnet(&ec2, &a, "10.0.2.0/24", "us-east-1a").await;
    let b1 = subnet(&ec2, &b, "10.1.1.0/24", "us-east-1a").await;
    let group = ec2
        .create_security_group()
        .vpc_id(&a)
        .group_name("g")
        .description("d")
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    ec2.create_tags()
        .resources(&a)
        .resources(&a1)
        .resources(&b1)
        .resources(&group)
        .tags(tag("team", "x"))
        .send()
        .await
        .unwrap();
    let subnets = |filters| subnet_ids(&ec2, filters);
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        subnets(vec![filter("tag:team", &["x"])]).await,
        sorted(vec![a1.clone(), b1.clone()])
    );
    assert_eq!(
        subnets(vec![filter("vpc-id", &[&a]), filter("tag:team", &["x"])]).await,
        vec![a1.clone()]
    );
    assert_eq!(
        subnets(vec![filter("tag:team", &["x"]), filter("vpc-id", &[&b])]).await,
        vec![b1.clone()]
    );
    assert_eq!(
        subnets(vec![
            filter("subnet-id", &[&a2, &b1]),
            filter("tag-key", &["team"])
        ])
        .await,
        vec![b1.clone()]
    );
    assert_eq!(
        subnets(vec![filter("subnet-id", &[&a1]), filter("vpc-id", &[&b])]).await,
        Vec::<String>::new()
    );
    assert_eq!(
        subnets(vec![filter("subnet-id", &["subnet-0123456789abcdef0"])]).await,
        Vec::<String>::new()
    );
    assert_eq!(
        subnets(vec![filter("vpc-id", &[&a])]).await,
        sorted(vec![a1.clone(), a2.clone()])
    );
    assert_eq!(
        vpc_ids(&ec2, vec![filter("tag:team", &["x"])]).await,
        vec![a.clone()]
    );
    assert_eq!(
        vpc_ids(&ec2, vec![filter("vpc-id", &[&b])]).await,
        vec![b.clone()]
    );
    let groups = ec2
        .describe_security_groups()
        .filters(filter("group-id", &[&group]))
        .filters(filter("vpc-id", &[&a]))
        .filters(filter("tag:team", &["x"]))
        .send()
        .await
        .unwrap();
    let ids: Vec<_> = groups
        .security_groups()
        .iter()
        .filter_map(|g| g.group_id())
        .collect();
    assert_eq!(ids, vec![group.as_str()]);
}

/// A value with carriage returns, tabs and markup reads back exactly as it was stored: the
/// answer escapes what an XML reader would otherwise normalize (CR LF to LF).
#[tokio::test]
async fn tag_values_read_back_exactly() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let value = "line one\r\nline two\rthree\tfour <five> & 'six'";
    ec2.create_tags()
        .resources(&a)
        .tags(tag("note", value))
        .send()
        .await
        .unwrap();
    let got = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&a]))
        .send()
        .await
        .unwrap();
    assert_eq!(got.tags().len(), 1);
    assert_eq!(got.tags()[0].value(), Some(value));
}
