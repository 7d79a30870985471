//! Network ACLs: every VPC's default ACL with AWS's default rules, associated with every
//! subnet of the VPC, found by AWS's filters, deleted with the VPC; ACLs of one's own, their
//! entries, and subnets moved between ACLs.

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
    // AWS's default rules: 100 allows everything, `*` (32767) denies the rest; both ways,
    // listed as AWS lists them (the AWS CLI's documented output): egress first.
    let entries: Vec<(i32, bool, RuleAction, &str, &str)> = acl
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
    assert_eq!(
        entries,
        [
            (100, true, RuleAction::Allow, "-1", "0.0.0.0/0"),
            (32767, true, RuleAction::Deny, "-1", "0.0.0.0/0"),
            (100, false, RuleAction::Allow, "-1", "0.0.0.0/0"),
            (32767, false, RuleAction::Deny, "-1", "0.0.0.0/0"),
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
        // The IPv6 `*` rule is only in a VPC with IPv6.
        ("entry.rule-number", "32768", 0),
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

/// The ACL `id` as DescribeNetworkAcls answers it.
async fn acl(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::NetworkAcl {
    let out = ec2
        .describe_network_acls()
        .network_acl_ids(id)
        .send()
        .await
        .unwrap();
    out.network_acls()[0].clone()
}

/// An entry as a test compares it: (rule number, egress, action, protocol, cidr, ports).
type Row = (i32, bool, String, String, String, Option<(i32, i32)>);

/// The entries of `acl`.
fn entries(acl: &aws_sdk_ec2::types::NetworkAcl) -> Vec<Row> {
    acl.entries()
        .iter()
        .map(|e| {
            (
                e.rule_number().unwrap(),
                e.egress().unwrap(),
                e.rule_action().unwrap().as_str().to_string(),
                e.protocol().unwrap().to_string(),
                e.cidr_block().unwrap().to_string(),
                e.port_range().map(|p| (p.from().unwrap(), p.to().unwrap())),
            )
        })
        .collect()
}

fn entry(
    number: i32,
    egress: bool,
    action: &str,
    protocol: &str,
    cidr: &str,
    ports: Option<(i32, i32)>,
) -> Row {
    (
        number,
        egress,
        action.to_string(),
        protocol.to_string(),
        cidr.to_string(),
        ports,
    )
}

#[tokio::test]
async fn an_acl_of_ones_own_denies_until_entries_allow_and_takes_subnets() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let created = ec2
        .create_network_acl()
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .network_acl
        .unwrap();
    assert_eq!(created.is_default(), Some(false));
    assert!(created.associations().is_empty());
    // Only the `*` rules: everything denied both ways.
    assert_eq!(
        entries(&created),
        [
            entry(32767, true, "deny", "-1", "0.0.0.0/0", None),
            entry(32767, false, "deny", "-1", "0.0.0.0/0", None),
        ]
    );
    let id = created.network_acl_id().unwrap().to_string();

    // Entries: by protocol name or number, TCP with its ports.
    let add = |number: i32, egress: bool, protocol: &str, ports: Option<(i32, i32)>| {
        let mut r = ec2
            .create_network_acl_entry()
            .network_acl_id(&id)
            .rule_number(number)
            .egress(egress)
            .rule_action(RuleAction::Allow)
            .protocol(protocol)
            .cidr_block("10.0.0.0/8");
        if let Some((from, to)) = ports {
            r = r.port_range(
                aws_sdk_ec2::types::PortRange::builder()
                    .from(from)
                    .to(to)
                    .build(),
            );
        }
        r.send()
    };
    add(110, false, "tcp", Some((443, 443))).await.unwrap();
    add(100, false, "6", Some((22, 22))).await.unwrap();
    add(100, true, "-1", None).await.unwrap();
    assert_eq!(
        entries(&acl(&ec2, &id).await),
        [
            entry(100, true, "allow", "-1", "10.0.0.0/8", None),
            entry(32767, true, "deny", "-1", "0.0.0.0/0", None),
            entry(100, false, "allow", "6", "10.0.0.0/8", Some((22, 22))),
            entry(110, false, "allow", "6", "10.0.0.0/8", Some((443, 443))),
            entry(32767, false, "deny", "-1", "0.0.0.0/0", None),
        ]
    );
    // Refused: a taken number, TCP without ports, a bad protocol, the `*` rule's number.
    assert_eq!(
        code(add(110, false, "udp", Some((53, 53))).await),
        "NetworkAclEntryAlreadyExists"
    );
    assert_eq!(code(add(120, false, "tcp", None).await), "MissingParameter");
    assert_eq!(
        code(add(120, false, "gre", None).await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(add(32767, false, "-1", None).await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(add(120, false, "tcp", Some((100, 20))).await),
        "InvalidParameterValue"
    );

    // Replaced whole, deleted, and neither where nothing is.
    ec2.replace_network_acl_entry()
        .network_acl_id(&id)
        .rule_number(110)
        .egress(false)
        .rule_action(RuleAction::Deny)
        .protocol("udp")
        .cidr_block("0.0.0.0/0")
        .port_range(
            aws_sdk_ec2::types::PortRange::builder()
                .from(53)
                .to(53)
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.delete_network_acl_entry()
        .network_acl_id(&id)
        .rule_number(100)
        .egress(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        entries(&acl(&ec2, &id).await),
        [
            entry(32767, true, "deny", "-1", "0.0.0.0/0", None),
            entry(100, false, "allow", "6", "10.0.0.0/8", Some((22, 22))),
            entry(110, false, "deny", "17", "0.0.0.0/0", Some((53, 53))),
            entry(32767, false, "deny", "-1", "0.0.0.0/0", None),
        ]
    );
    assert_eq!(
        code(
            ec2.delete_network_acl_entry()
                .network_acl_id(&id)
                .rule_number(100)
                .egress(true)
                .send()
                .await
        ),
        "InvalidNetworkAclEntry.NotFound"
    );
    // Found by its entries.
    let by_port = ec2
        .describe_network_acls()
        .filters(filter("entry.port-range.from", &["53"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_port.network_acls().len(), 1);

    // The subnet moves to it under a new association id; the old id is gone.
    let default = ec2
        .describe_network_acls()
        .filters(filter("association.subnet-id", &[&a]))
        .send()
        .await
        .unwrap();
    let old = default.network_acls()[0].associations()[0]
        .network_acl_association_id()
        .unwrap()
        .to_string();
    let default_id = default.network_acls()[0]
        .network_acl_id()
        .unwrap()
        .to_string();
    let new = ec2
        .replace_network_acl_association()
        .association_id(&old)
        .network_acl_id(&id)
        .send()
        .await
        .unwrap()
        .new_association_id
        .unwrap();
    assert_ne!(new, old);
    let moved = acl(&ec2, &id).await;
    assert_eq!(moved.associations()[0].subnet_id(), Some(a.as_str()));
    assert_eq!(
        moved.associations()[0].network_acl_association_id(),
        Some(new.as_str())
    );
    assert!(acl(&ec2, &default_id).await.associations().is_empty());
    assert_eq!(
        code(
            ec2.replace_network_acl_association()
                .association_id(&old)
                .network_acl_id(&default_id)
                .send()
                .await
        ),
        "InvalidAssociationID.NotFound"
    );
    // Not deleted while it holds a subnet, nor is the VPC; the default ACL never.
    assert_eq!(
        code(ec2.delete_network_acl().network_acl_id(&id).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(
            ec2.delete_network_acl()
                .network_acl_id(&default_id)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // Back to the default ACL; then the ACL goes, and with it nothing else.
    ec2.replace_network_acl_association()
        .association_id(&new)
        .network_acl_id(&default_id)
        .send()
        .await
        .unwrap();
    ec2.delete_network_acl()
        .network_acl_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.describe_network_acls()
                .network_acl_ids(&id)
                .send()
                .await
        ),
        "InvalidNetworkAclID.NotFound"
    );
    let back = acl(&ec2, &default_id).await;
    assert_eq!(back.associations()[0].subnet_id(), Some(a.as_str()));
    // A deleted subnet leaves no association behind.
    ec2.delete_subnet().subnet_id(&a).send().await.unwrap();
    assert!(acl(&ec2, &default_id).await.associations().is_empty());
}

#[tokio::test]
async fn an_acl_of_ones_own_keeps_its_vpc_and_the_quotas() {
    let mut limits = fakeaws::region::Limits::default();
    limits.set("network-acls-per-vpc", 2).unwrap();
    limits.set("rules-per-network-acl", 2).unwrap();
    let fake = fakeaws::spawn_with(fakeaws::Config {
        limits,
        default_vpc: false,
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let other = vpc(&ec2, "10.1.0.0/16").await;
    let b = subnet(&ec2, &other, "10.1.1.0/24", "us-east-1a").await;
    let create = || ec2.create_network_acl().vpc_id(&vpc_id).send();
    let id = create()
        .await
        .unwrap()
        .network_acl
        .unwrap()
        .network_acl_id
        .unwrap();
    // The default ACL and this one: the quota of 2.
    assert_eq!(code(create().await), "NetworkAclLimitExceeded");
    // A subnet of another VPC cannot move to it.
    let assoc = ec2
        .describe_network_acls()
        .filters(filter("association.subnet-id", &[&b]))
        .send()
        .await
        .unwrap()
        .network_acls()[0]
        .associations()[0]
        .network_acl_association_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.replace_network_acl_association()
                .association_id(&assoc)
                .network_acl_id(&id)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // Two rules each way.
    for number in [100, 200, 300] {
        let r = ec2
            .create_network_acl_entry()
            .network_acl_id(&id)
            .rule_number(number)
            .egress(false)
            .rule_action(RuleAction::Allow)
            .protocol("-1")
            .cidr_block("0.0.0.0/0")
            .send()
            .await;
        if number == 300 {
            assert_eq!(code(r), "NetworkAclEntryLimitExceeded");
        } else {
            r.unwrap();
        }
    }
    // An ACL of one's own keeps its VPC from being deleted.
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );
    ec2.delete_network_acl()
        .network_acl_id(&id)
        .send()
        .await
        .unwrap();
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
}
