//! Network ACLs: every VPC's default ACL with AWS's default rules, associated with every
//! subnet of the VPC, found by AWS's filters, deleted with the VPC.

use aws_sdk_ec2::types::RuleAction;

use crate::{code, empty_fake, filter, subnet, vpc};

#[tokio::test]
async fn a_vpc_has_a_default_acl_with_every_subnet() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;

    let acls = ec2
        .describe_network_acls()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let [acl] = acls.network_acls() else {
        panic!("{acls:?}");
    };
    assert_eq!(acl.is_default(), Some(true));
    assert!(acl.network_acl_id().unwrap().starts_with("acl-"));
    // AWS's default rules: 100 allows everything, `*` (32767) denies the rest; both ways.
    let mut entries: Vec<(i32, bool, RuleAction, &str, &str)> = acl
        .entries()
        .iter()
        .map(|e| {
            (
                e.rule_number().unwrap(),
                e.egress().unwrap(),
                e.rule_action().unwrap().clone(),
                e.protocol().unwrap(),
                e.cidr_block().unwrap(),
            )
        })
        .collect();
    entries.sort_by_key(|e| (e.1, e.0));
    assert_eq!(
        entries,
        [
            (100, false, RuleAction::Allow, "-1", "0.0.0.0/0"),
            (32767, false, RuleAction::Deny, "-1", "0.0.0.0/0"),
            (100, true, RuleAction::Allow, "-1", "0.0.0.0/0"),
            (32767, true, RuleAction::Deny, "-1", "0.0.0.0/0"),
        ]
    );
    let mut associated: Vec<&str> = acl
        .associations()
        .iter()
        .map(|x| x.subnet_id().unwrap())
        .collect();
    associated.sort();
    let mut want = vec![a.as_str(), b.as_str()];
    want.sort();
    assert_eq!(associated, want);

    // AWS's filters.
    for (name, value, n) in [
        ("default", "true", 1),
        ("default", "false", 0),
        ("association.subnet-id", a.as_str(), 1),
        ("entry.rule-number", "32767", 1),
        ("network-acl-id", acl.network_acl_id().unwrap(), 1),
    ] {
        let found = ec2
            .describe_network_acls()
            .filters(filter("vpc-id", &[&vpc_id]))
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        assert_eq!(found.network_acls().len(), n, "{name}={value}");
    }
    let bad = ec2
        .describe_network_acls()
        .filters(filter("no-such-filter", &["x"]))
        .send()
        .await;
    assert_eq!(code(bad), "InvalidParameterValue");
    let missing = ec2
        .describe_network_acls()
        .network_acl_ids("acl-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(missing), "InvalidNetworkAclID.NotFound");

    // It goes with its VPC, and never holds the VPC back.
    for s in [&a, &b] {
        ec2.delete_subnet().subnet_id(s).send().await.unwrap();
    }
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
    let left = ec2.describe_network_acls().send().await.unwrap();
    assert!(left.network_acls().is_empty(), "{left:?}");
}
