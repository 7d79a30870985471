//! Customer-managed prefix lists through the SDK: created `create-in-progress` and complete
//! at the clock's next step; versions made by entry changes and restores and read back with
//! GetManagedPrefixListEntries' `TargetVersion`; the version check, the refusals of a bad
//! name, family, entry or size; a security group rule naming a list, counted at the list's
//! size against the group's quota; a resize the group cannot hold failing with the group in
//! the state message; a deletion failing while a rule names the list, and going through once
//! none does; routes to a list, counted at its size against the table's quota of routes.

use aws_sdk_ec2::types::{
    AddPrefixListEntry, IpPermission, ManagedPrefixList, PrefixListId, PrefixListState,
    RemovePrefixListEntry, ResourceType, RouteOrigin, RouteState, SecurityGroupRuleRequest,
    SecurityGroupRuleUpdate, Tag, TagSpecification,
};

use fakeaws::sim::transitions::Subject;

use crate::{
    advance, code, code_and_message, empty_fake, filter, gateway, group, route_table, subnet, vpc,
};

fn entry(cidr: &str, description: &str) -> AddPrefixListEntry {
    AddPrefixListEntry::builder()
        .cidr(cidr)
        .description(description)
        .build()
}

fn removal(cidr: &str) -> RemovePrefixListEntry {
    RemovePrefixListEntry::builder().cidr(cidr).build()
}

/// The list `id` as DescribeManagedPrefixLists shows it.
async fn described(ec2: &aws_sdk_ec2::Client, id: &str) -> ManagedPrefixList {
    let out = ec2
        .describe_managed_prefix_lists()
        .prefix_list_ids(id)
        .send()
        .await
        .unwrap();
    let [l] = out.prefix_lists() else {
        panic!("one list: {out:?}");
    };
    l.clone()
}

/// The entries of list `id` at `version` (the current one when `None`), as (CIDR,
/// description).
async fn entries(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    version: Option<i64>,
) -> Vec<(String, String)> {
    ec2.get_managed_prefix_list_entries()
        .prefix_list_id(id)
        .set_target_version(version)
        .send()
        .await
        .unwrap()
        .entries()
        .iter()
        .map(|e| {
            (
                e.cidr().unwrap_or_default().to_string(),
                e.description().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A new IPv4 list `name` of `size` holding `cidrs`, complete.
async fn list(
    fake: &fakeaws::FakeAws,
    ec2: &aws_sdk_ec2::Client,
    name: &str,
    size: i32,
    cidrs: &[&str],
) -> String {
    let out = ec2
        .create_managed_prefix_list()
        .prefix_list_name(name)
        .address_family("IPv4")
        .max_entries(size)
        .set_entries(Some(cidrs.iter().map(|c| entry(c, "office")).collect()))
        .send()
        .await
        .unwrap();
    let id = out
        .prefix_list()
        .unwrap()
        .prefix_list_id()
        .unwrap()
        .to_string();
    advance(fake, 1);
    id
}

/// Asks list `id` to grow to `size` entries, which what names it (`who`) cannot hold: the
/// resize fails at the clock's next step, naming `who`, the size as it was (`was`).
async fn resize_fails_naming(
    fake: &fakeaws::FakeAws,
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    (size, was): (i32, i32),
    who: &str,
) {
    ec2.modify_managed_prefix_list()
        .prefix_list_id(id)
        .max_entries(size)
        .send()
        .await
        .unwrap();
    advance(fake, 1);
    let l = described(ec2, id).await;
    assert_eq!(l.state(), Some(&PrefixListState::ModifyFailed));
    assert!(l.state_message().unwrap().contains(who), "{l:?}");
    assert_eq!(l.max_entries(), Some(was), "the size unchanged");
}

/// Asks list `id` to go: at the clock's next step it is gone, or, while `blocked_by` names
/// it, its deletion fails naming that.
async fn deletion(
    fake: &fakeaws::FakeAws,
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    blocked_by: Option<&str>,
) {
    ec2.delete_managed_prefix_list()
        .prefix_list_id(id)
        .send()
        .await
        .unwrap();
    advance(fake, 1);
    let left = ec2
        .describe_managed_prefix_lists()
        .filters(filter("prefix-list-id", &[id]))
        .send()
        .await
        .unwrap();
    match blocked_by {
        Some(who) => {
            let l = described(ec2, id).await;
            assert_eq!(l.state(), Some(&PrefixListState::DeleteFailed));
            assert!(l.state_message().unwrap().contains(who), "{l:?}");
        }
        None => assert!(left.prefix_lists().is_empty(), "{left:?}"),
    }
}

fn tcp_from_list(port: i32, list: &str) -> IpPermission {
    IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(port)
        .to_port(port)
        .prefix_list_ids(
            PrefixListId::builder()
                .prefix_list_id(list)
                .description("from the offices")
                .build(),
        )
        .build()
}

#[tokio::test]
async fn a_list_is_made_changed_by_versions_and_restored() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let create = || {
        ec2.create_managed_prefix_list()
            .prefix_list_name("offices")
            .address_family("IPv4")
            .max_entries(5)
            .entries(entry("10.1.0.0/16", "berlin"))
            .entries(entry("10.0.0.0/16", "paris"))
            .tag_specifications(
                TagSpecification::builder()
                    .resource_type(ResourceType::PrefixList)
                    .tags(Tag::builder().key("team").value("net").build())
                    .build(),
            )
            .client_token("offices-1")
            .send()
    };
    let out = create().await.unwrap();
    let made = out.prefix_list().unwrap();
    let id = made.prefix_list_id().unwrap().to_string();
    assert!(id.starts_with("pl-"), "{id}");
    assert_eq!(made.state(), Some(&PrefixListState::CreateInProgress));
    assert_eq!(made.version(), Some(1));
    assert_eq!(made.max_entries(), Some(5));
    assert_eq!(made.address_family(), Some("IPv4"));
    assert_eq!(made.owner_id(), Some("123456789012"));
    assert_eq!(
        made.prefix_list_arn(),
        Some(format!("arn:aws:ec2:us-east-1:123456789012:prefix-list/{id}").as_str())
    );
    // The same ClientToken answers the same list.
    let again = create().await.unwrap();
    assert_eq!(
        again.prefix_list().unwrap().prefix_list_id(),
        Some(id.as_str())
    );

    advance(&fake, 1);
    let l = described(&ec2, &id).await;
    assert_eq!(l.state(), Some(&PrefixListState::CreateComplete));
    assert_eq!(l.tags()[0].key(), Some("team"));
    // Listed beside AWS's own, and found by name, owner and tag.
    for (name, value) in [
        ("prefix-list-name", "offices"),
        ("owner-id", "123456789012"),
        ("tag:team", "net"),
    ] {
        let out = ec2
            .describe_managed_prefix_lists()
            .filters(filter(name, &[value]))
            .send()
            .await
            .unwrap();
        let ids: Vec<&str> = out
            .prefix_lists()
            .iter()
            .filter_map(|l| l.prefix_list_id())
            .collect();
        assert_eq!(ids, [id.as_str()], "{name}");
    }
    let all = ec2.describe_managed_prefix_lists().send().await.unwrap();
    assert!(
        all.prefix_lists()
            .iter()
            .any(|l| l.owner_id() == Some("AWS"))
    );
    // Entries in the order of their addresses.
    assert_eq!(
        entries(&ec2, &id, None).await,
        [
            ("10.0.0.0/16".to_string(), "paris".to_string()),
            ("10.1.0.0/16".to_string(), "berlin".to_string())
        ]
    );

    // A new description: removed and added in one call, removals first; version 2. (The
    // change held in progress, as AWS's takes some seconds.)
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::PrefixList));
    let out = ec2
        .modify_managed_prefix_list()
        .prefix_list_id(&id)
        .current_version(1)
        .remove_entries(removal("10.0.0.0/16"))
        .add_entries(entry("10.0.0.0/16", "paris office"))
        .add_entries(entry("192.168.0.0/24", "lab"))
        .send()
        .await
        .unwrap();
    let modified = out.prefix_list().unwrap();
    // Answered as it stands until the change is done: the version it started from.
    assert_eq!(modified.state(), Some(&PrefixListState::ModifyInProgress));
    assert_eq!(modified.version(), Some(1));
    assert_eq!(entries(&ec2, &id, None).await.len(), 2);
    // Another change while this one is in progress waits its turn.
    let (c, message) = code_and_message(
        ec2.modify_managed_prefix_list()
            .prefix_list_id(&id)
            .prefix_list_name("offices-2")
            .send()
            .await,
    );
    assert_eq!(c, "IncorrectState");
    assert!(message.contains("(modify-in-progress)"), "{message}");
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::PrefixList));
    advance(&fake, 1);
    let l = described(&ec2, &id).await;
    assert_eq!(l.state(), Some(&PrefixListState::ModifyComplete));
    assert_eq!(l.version(), Some(2));
    assert_eq!(
        entries(&ec2, &id, None).await,
        [
            ("10.0.0.0/16".to_string(), "paris office".to_string()),
            ("10.1.0.0/16".to_string(), "berlin".to_string()),
            ("192.168.0.0/24".to_string(), "lab".to_string())
        ]
    );
    assert_eq!(entries(&ec2, &id, Some(1)).await.len(), 2);
    assert_eq!(
        code(
            ec2.get_managed_prefix_list_entries()
                .prefix_list_id(&id)
                .target_version(3)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );

    // A stale version is refused, in AWS's code and words, and changes nothing.
    let (c, message) = code_and_message(
        ec2.modify_managed_prefix_list()
            .prefix_list_id(&id)
            .current_version(1)
            .remove_entries(removal("10.1.0.0/16"))
            .send()
            .await,
    );
    assert_eq!(c, "PrefixListVersionMismatch");
    assert_eq!(message, "The prefix list has the incorrect version number.");
    // A new name or size makes no version.
    ec2.modify_managed_prefix_list()
        .prefix_list_id(&id)
        .prefix_list_name("offices-eu")
        .send()
        .await
        .unwrap();
    advance(&fake, 1);
    ec2.modify_managed_prefix_list()
        .prefix_list_id(&id)
        .max_entries(10)
        .send()
        .await
        .unwrap();
    advance(&fake, 1);
    let l = described(&ec2, &id).await;
    assert_eq!(
        (l.prefix_list_name(), l.max_entries(), l.version()),
        (Some("offices-eu"), Some(10), Some(2))
    );

    // Version 1 restored as version 3.
    let out = ec2
        .restore_managed_prefix_list_version()
        .prefix_list_id(&id)
        .previous_version(1)
        .current_version(2)
        .send()
        .await
        .unwrap();
    let restoring = out.prefix_list().unwrap();
    assert_eq!(
        (restoring.state(), restoring.version()),
        (Some(&PrefixListState::RestoreInProgress), Some(2))
    );
    advance(&fake, 1);
    let l = described(&ec2, &id).await;
    assert_eq!(l.state(), Some(&PrefixListState::RestoreComplete));
    assert_eq!(l.version(), Some(3));
    assert_eq!(
        entries(&ec2, &id, None).await,
        entries(&ec2, &id, Some(1)).await
    );

    // Deleted: gone, with its tags.
    let out = ec2
        .delete_managed_prefix_list()
        .prefix_list_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.prefix_list().unwrap().state(),
        Some(&PrefixListState::DeleteInProgress)
    );
    advance(&fake, 1);
    assert_eq!(
        code(
            ec2.describe_managed_prefix_lists()
                .prefix_list_ids(&id)
                .send()
                .await
        ),
        "InvalidPrefixListID.NotFound"
    );
    let tags = ec2
        .describe_tags()
        .filters(filter("resource-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert!(tags.tags().is_empty());
}

#[tokio::test]
async fn bad_lists_and_changes_are_refused_and_change_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let create = |name: &str, family: &str, size: i32, cidrs: &[&str]| {
        ec2.create_managed_prefix_list()
            .prefix_list_name(name)
            .address_family(family)
            .max_entries(size)
            .set_entries(Some(cidrs.iter().map(|c| entry(c, "x")).collect()))
            .send()
    };
    // AWS's own names, with their dots: refused in AWS's words; without the dot, taken.
    for reserved in ["com.amazonaws.probe", "com.amazon.probe", "com.aws.probe"] {
        let (c, message) = code_and_message(create(reserved, "IPv4", 2, &[]).await);
        assert_eq!(c, "InvalidParameterValue");
        assert_eq!(
            message,
            "The prefix list name cannot begin with (com.amazonaws., com.amazon., com.aws.)."
        );
    }
    create("com.amazonaws-probe", "IPv4", 2, &[]).await.unwrap();
    for (family, size, cidrs) in [
        ("IPv5", 2, vec![]),
        ("IPv4", 0, vec![]),
        ("IPv4", 1001, vec![]),
        ("IPv4", 1, vec!["10.0.0.0/16", "10.1.0.0/16"]),
        ("IPv4", 2, vec!["10.0.0.0/16", "10.0.0.0/16"]),
        ("IPv4", 2, vec!["10.0.0.1/16"]),
        ("IPv4", 2, vec!["2001:db8::/32"]),
        ("IPv6", 2, vec!["10.0.0.0/16"]),
        ("IPv4", 2, vec!["not-a-block"]),
    ] {
        assert_eq!(
            code(create("bad", family, size, &cidrs).await),
            "InvalidParameterValue",
            "{family} {size} {cidrs:?}"
        );
    }
    let named = ec2
        .describe_managed_prefix_lists()
        .filters(filter("prefix-list-name", &["bad"]))
        .send()
        .await
        .unwrap();
    assert!(named.prefix_lists().is_empty(), "nothing made");
    let six = ec2
        .create_managed_prefix_list()
        .prefix_list_name("v6")
        .address_family("IPv6")
        .max_entries(2)
        .entries(entry("2001:db8::/32", "docs"))
        .send()
        .await
        .unwrap();
    assert_eq!(six.prefix_list().unwrap().address_family(), Some("IPv6"));

    let id = list(&fake, &ec2, "offices", 2, &["10.0.0.0/16"]).await;
    let modify = || ec2.modify_managed_prefix_list().prefix_list_id(&id);
    let (c, message) = code_and_message(
        modify()
            .add_entries(entry("10.1.0.0/16", "x"))
            .max_entries(3)
            .send()
            .await,
    );
    assert_eq!(c, "InvalidParameterCombination");
    assert!(message.contains("same request"), "{message}");
    for refused in [
        // Past the list's size, an entry it holds, one it does not hold, a smaller size than
        // it holds.
        modify()
            .add_entries(entry("10.1.0.0/16", "x"))
            .add_entries(entry("10.2.0.0/16", "x")),
        modify().add_entries(entry("10.0.0.0/16", "x")),
        modify().remove_entries(removal("10.9.0.0/16")),
        modify().max_entries(0),
    ] {
        assert_eq!(code(refused.send().await), "InvalidParameterValue");
    }
    let l = described(&ec2, &id).await;
    assert_eq!((l.version(), l.max_entries()), (Some(1), Some(2)));
    assert_eq!(entries(&ec2, &id, None).await.len(), 1);
    let restore = ec2
        .restore_managed_prefix_list_version()
        .prefix_list_id(&id)
        .previous_version(1)
        .current_version(1)
        .send()
        .await;
    assert_eq!(code(restore), "InvalidParameterValue", "no earlier version");

    // AWS's own lists are not the account's to change.
    let aws = ec2
        .describe_managed_prefix_lists()
        .filters(filter("owner-id", &["AWS"]))
        .send()
        .await
        .unwrap();
    let theirs = aws.prefix_lists()[0].prefix_list_id().unwrap();
    assert_eq!(
        code(
            ec2.delete_managed_prefix_list()
                .prefix_list_id(theirs)
                .send()
                .await
        ),
        "OperationNotPermitted"
    );
    for (unknown, wanted) in [
        ("pl-0123456789abcdef0", "InvalidPrefixListID.NotFound"),
        ("sg-0123456789abcdef0", "InvalidPrefixListId.Malformed"),
    ] {
        assert_eq!(
            code(
                ec2.modify_managed_prefix_list()
                    .prefix_list_id(unknown)
                    .prefix_list_name("x")
                    .send()
                    .await
            ),
            wanted
        );
    }
}

#[tokio::test]
async fn a_rule_naming_a_list_counts_its_size_and_keeps_it_from_going() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let sg = group(&ec2, &vpc_id, "db").await;
    let id = list(&fake, &ec2, "offices", 20, &["10.0.0.0/16", "10.1.0.0/16"]).await;
    let big = list(&fake, &ec2, "everyone", 60, &["10.2.0.0/16"]).await;

    ec2.authorize_security_group_ingress()
        .group_id(&sg)
        .ip_permissions(tcp_from_list(5432, &id))
        .send()
        .await
        .unwrap();
    let out = ec2
        .describe_security_groups()
        .group_ids(&sg)
        .send()
        .await
        .unwrap();
    let named = out.security_groups()[0].ip_permissions()[0].prefix_list_ids()[0].clone();
    assert_eq!(named.prefix_list_id(), Some(id.as_str()));
    assert_eq!(named.description(), Some("from the offices"));
    let assoc = ec2
        .get_managed_prefix_list_associations()
        .prefix_list_id(&id)
        .send()
        .await
        .unwrap();
    let [a] = assoc.prefix_list_associations() else {
        panic!("{assoc:?}");
    };
    assert_eq!(
        (a.resource_id(), a.resource_owner()),
        (Some(sg.as_str()), Some("123456789012"))
    );

    // The rule counts as 20 of the group's 60: a 60-entry list no longer fits.
    let (c, message) = code_and_message(
        ec2.authorize_security_group_ingress()
            .group_id(&sg)
            .ip_permissions(tcp_from_list(443, &big))
            .send()
            .await,
    );
    assert_eq!(c, "RulesPerSecurityGroupLimitExceeded");
    assert_eq!(
        message,
        "The maximum number of rules per security group has been reached."
    );
    // Nor by changing a rule to name it.
    let cidr_rule = ec2
        .authorize_security_group_ingress()
        .group_id(&sg)
        .ip_protocol("tcp")
        .from_port(22)
        .to_port(22)
        .cidr_ip("10.9.0.0/16")
        .send()
        .await
        .unwrap()
        .security_group_rules()[0]
        .security_group_rule_id()
        .unwrap()
        .to_string();
    let to_big = ec2
        .modify_security_group_rules()
        .group_id(&sg)
        .security_group_rules(
            SecurityGroupRuleUpdate::builder()
                .security_group_rule_id(&cidr_rule)
                .security_group_rule(
                    SecurityGroupRuleRequest::builder()
                        .ip_protocol("tcp")
                        .from_port(22)
                        .to_port(22)
                        .prefix_list_id(&big)
                        .build(),
                )
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(to_big), "RulesPerSecurityGroupLimitExceeded");
    // Nor does growing the list past what the group holds: the resize fails, naming it.
    resize_fails_naming(&fake, &ec2, &id, (61, 20), &sg).await;
    // Not deleted while the rule names it.
    deletion(&fake, &ec2, &id, Some(&sg)).await;
    // Once the rule is revoked, it goes.
    ec2.revoke_security_group_ingress()
        .group_id(&sg)
        .ip_permissions(tcp_from_list(5432, &id))
        .send()
        .await
        .unwrap();
    deletion(&fake, &ec2, &id, None).await;
    // A rule can no longer name it.
    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&sg)
                .ip_permissions(tcp_from_list(5432, &id))
                .send()
                .await
        ),
        "InvalidPrefixListID.NotFound"
    );
}

/// A route to a list: described with the list as its destination, found by the route
/// filters, its target replaced and the route deleted through `DestinationPrefixListId`; the
/// list's `MaxEntries` counts against the table's quota of routes, so a resize the table
/// cannot hold fails naming it, as does the list's deletion while the route names it.
#[tokio::test]
async fn a_route_to_a_list_counts_its_size_and_keeps_it_from_going() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let igw = gateway(&ec2, &vpc_id).await;
    let rtb = route_table(&ec2, &vpc_id).await;
    let id = list(
        &fake,
        &ec2,
        "offices",
        20,
        &["192.0.2.0/24", "198.51.100.0/24"],
    )
    .await;
    let to_list = || {
        ec2.create_route()
            .route_table_id(&rtb)
            .destination_prefix_list_id(&id)
    };
    to_list().gateway_id(&igw).send().await.unwrap();
    let route_of = |t: &aws_sdk_ec2::types::RouteTable| {
        t.routes()
            .iter()
            .find(|r| r.destination_prefix_list_id() == Some(id.as_str()))
            .cloned()
    };
    let table = |filters: Vec<aws_sdk_ec2::types::Filter>| {
        let ec2 = ec2.clone();
        async move {
            ec2.describe_route_tables()
                .set_filters(Some(filters))
                .send()
                .await
                .unwrap()
                .route_tables()
                .to_vec()
        }
    };
    let found = table(vec![filter("route.destination-prefix-list-id", &[&id])]).await;
    let [t] = found.as_slice() else {
        panic!("{found:?}");
    };
    assert_eq!(t.route_table_id(), Some(rtb.as_str()));
    let r = route_of(t).unwrap();
    assert_eq!(r.gateway_id(), Some(igw.as_str()));
    assert_eq!(r.destination_cidr_block(), None);
    assert_eq!(r.origin(), Some(&RouteOrigin::CreateRoute));
    assert_eq!(r.state(), Some(&RouteState::Active));
    assert_eq!(
        table(vec![filter("route.gateway-id", &[&igw])]).await.len(),
        1
    );

    // Refused: twice, a list of AWS's, a list that is not there, two destinations.
    assert_eq!(
        code(to_list().gateway_id(&igw).send().await),
        "RouteAlreadyExists"
    );
    let s3 = ec2
        .describe_prefix_lists()
        .send()
        .await
        .unwrap()
        .prefix_lists()[0]
        .prefix_list_id()
        .unwrap()
        .to_string();
    let by_id = |list: &str| {
        ec2.create_route()
            .route_table_id(&rtb)
            .destination_prefix_list_id(list)
            .gateway_id(&igw)
    };
    assert_eq!(code(by_id(&s3).send().await), "InvalidParameterValue");
    assert_eq!(
        code(by_id("pl-0123456789abcdef0").send().await),
        "InvalidPrefixListID.NotFound"
    );
    assert_eq!(
        code(by_id("offices").send().await),
        "InvalidPrefixListId.Malformed"
    );
    assert_eq!(
        code(
            to_list()
                .destination_cidr_block("10.9.0.0/16")
                .gateway_id(&igw)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );

    // The table holds its local route, the list's 20, and 29 routes more: 50, its quota.
    for i in 0..29 {
        ec2.create_route()
            .route_table_id(&rtb)
            .destination_cidr_block(format!("172.16.{i}.0/24"))
            .gateway_id(&igw)
            .send()
            .await
            .unwrap();
    }
    let (c, message) = code_and_message(
        ec2.create_route()
            .route_table_id(&rtb)
            .destination_cidr_block("172.16.200.0/24")
            .gateway_id(&igw)
            .send()
            .await,
    );
    assert_eq!(c, "RouteLimitExceeded");
    assert_eq!(message, "The maximum number of routes has been reached.");
    // So the list cannot grow: the resize fails, naming the table.
    resize_fails_naming(&fake, &ec2, &id, (21, 20), &rtb).await;
    let assoc = ec2
        .get_managed_prefix_list_associations()
        .prefix_list_id(&id)
        .send()
        .await
        .unwrap();
    let ids: Vec<Option<&str>> = assoc
        .prefix_list_associations()
        .iter()
        .map(|a| a.resource_id())
        .collect();
    assert_eq!(ids, [Some(rtb.as_str())]);

    // Its target replaced: an interface of the VPC; not `local`.
    let sn = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let eni = ec2
        .create_network_interface()
        .subnet_id(&sn)
        .send()
        .await
        .unwrap()
        .network_interface()
        .unwrap()
        .network_interface_id()
        .unwrap()
        .to_string();
    ec2.replace_route()
        .route_table_id(&rtb)
        .destination_prefix_list_id(&id)
        .network_interface_id(&eni)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.replace_route()
                .route_table_id(&rtb)
                .destination_prefix_list_id(&id)
                .local_target(true)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let [t] = table(vec![filter("route-table-id", &[&rtb])])
        .await
        .try_into()
        .unwrap();
    let r = route_of(&t).unwrap();
    assert_eq!(
        (r.network_interface_id(), r.gateway_id()),
        (Some(eni.as_str()), None)
    );

    // Not deleted while the route names it; once the route is gone, it goes.
    deletion(&fake, &ec2, &id, Some(&rtb)).await;
    let delete_route = || {
        ec2.delete_route()
            .route_table_id(&rtb)
            .destination_prefix_list_id(&id)
            .send()
    };
    delete_route().await.unwrap();
    assert_eq!(code(delete_route().await), "InvalidRoute.NotFound");
    let [t] = table(vec![filter("route-table-id", &[&rtb])])
        .await
        .try_into()
        .unwrap();
    assert!(route_of(&t).is_none());
    // Room again for a route of its own.
    ec2.create_route()
        .route_table_id(&rtb)
        .destination_cidr_block("172.16.200.0/24")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    deletion(&fake, &ec2, &id, None).await;
}
