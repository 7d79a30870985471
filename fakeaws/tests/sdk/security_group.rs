//! Security groups through the SDK.

use aws_sdk_ec2::types::{IpPermission, IpRange, ResourceType, UserIdGroupPair};

use crate::{code, empty_fake, filter, instance, subnet, tag_spec, vpc};

fn tcp(port: i32, cidr: &str) -> IpPermission {
    IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(port)
        .to_port(port)
        .ip_ranges(
            IpRange::builder()
                .cidr_ip(cidr)
                .description("from cidr")
                .build(),
        )
        .build()
}

fn from_group(protocol: &str, ports: Option<(i32, i32)>, group: &str) -> IpPermission {
    let mut p = IpPermission::builder()
        .ip_protocol(protocol)
        .user_id_group_pairs(
            UserIdGroupPair::builder()
                .group_id(group)
                .description("peer")
                .build(),
        );
    if let Some((f, t)) = ports {
        p = p.from_port(f).to_port(t);
    }
    p.build()
}

async fn group(ec2: &aws_sdk_ec2::Client, vpc_id: &str, name: &str) -> String {
    ec2.create_security_group()
        .group_name(name)
        .description(format!("Kubernetes cluster test: {name}"))
        .vpc_id(vpc_id)
        .tag_specifications(tag_spec(ResourceType::SecurityGroup, &[("role", name)]))
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap()
}

#[tokio::test]
async fn default_group_and_default_egress() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let d = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap();
    let default = &d.security_groups()[0];
    let default_id = default.group_id().unwrap().to_string();
    assert_eq!(default.ip_permissions()[0].ip_protocol(), Some("-1"));
    assert_eq!(
        default.ip_permissions()[0].user_id_group_pairs()[0].group_id(),
        Some(default_id.as_str())
    );
    assert_eq!(
        default.ip_permissions_egress()[0].ip_ranges()[0].cidr_ip(),
        Some("0.0.0.0/0")
    );
    assert_eq!(
        code(
            ec2.delete_security_group()
                .group_id(&default_id)
                .send()
                .await
        ),
        "CannotDelete"
    );
    assert_eq!(
        code(
            ec2.create_security_group()
                .group_name("default")
                .description("x")
                .vpc_id(&vpc_id)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let g = group(&ec2, &vpc_id, "node").await;
    let created = ec2
        .describe_security_groups()
        .group_ids(&g)
        .send()
        .await
        .unwrap();
    let egress = created.security_groups()[0].ip_permissions_egress();
    assert_eq!(egress.len(), 1, "a new group allows all egress");
    assert_eq!(egress[0].ip_protocol(), Some("-1"));
    assert_eq!(created.security_groups()[0].tags()[0].value(), Some("node"));
    assert_eq!(
        code(
            ec2.create_security_group()
                .group_name("node")
                .description("again")
                .vpc_id(&vpc_id)
                .send()
                .await
        ),
        "InvalidGroup.Duplicate"
    );
}

#[tokio::test]
async fn rules_by_cidr_and_group_protocols_by_name_and_number() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let bastion = group(&ec2, &vpc_id, "bastion").await;
    let cp = group(&ec2, &vpc_id, "controlplane").await;
    let node = group(&ec2, &vpc_id, "node").await;
    let out = ec2
        .authorize_security_group_ingress()
        .group_id(&cp)
        .ip_permissions(from_group("tcp", Some((22, 22)), &bastion))
        .ip_permissions(tcp(6443, "0.0.0.0/0"))
        .ip_permissions(from_group("tcp", Some((2379, 2380)), &cp))
        .ip_permissions(from_group("4", None, &node))
        .ip_permissions(from_group("TCP", Some((179, 179)), &node))
        .send()
        .await
        .unwrap();
    assert_eq!(out.r#return(), Some(true));
    assert_eq!(out.security_group_rules().len(), 5);
    let rule_ids: Vec<String> = out
        .security_group_rules()
        .iter()
        .map(|r| r.security_group_rule_id().unwrap().to_string())
        .collect();
    let g = ec2
        .describe_security_groups()
        .group_ids(&cp)
        .send()
        .await
        .unwrap();
    let perms = g.security_groups()[0].ip_permissions();
    let ipip = perms.iter().find(|p| p.ip_protocol() == Some("4")).unwrap();
    assert_eq!(ipip.from_port(), None, "protocols without ports carry none");
    assert_eq!(
        ipip.user_id_group_pairs()[0].group_id(),
        Some(node.as_str())
    );
    let ssh = perms.iter().find(|p| p.from_port() == Some(22)).unwrap();
    assert_eq!(ssh.user_id_group_pairs()[0].description(), Some("peer"));
    assert!(
        perms
            .iter()
            .any(|p| p.from_port() == Some(179) && p.ip_protocol() == Some("tcp"))
    );

    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&cp)
                .ip_permissions(tcp(6443, "0.0.0.0/0"))
                .send()
                .await
        ),
        "InvalidPermission.Duplicate"
    );
    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&cp)
                .ip_permissions(from_group("tcp", Some((1, 2)), "sg-0123456789abcdef0"))
                .send()
                .await
        ),
        "InvalidGroup.NotFound"
    );
    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&cp)
                .ip_permissions(
                    IpPermission::builder()
                        .ip_protocol("tcp")
                        .ip_ranges(IpRange::builder().cidr_ip("0.0.0.0/0").build())
                        .build()
                )
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.authorize_security_group_ingress()
                .group_id(&cp)
                .ip_permissions(IpPermission::builder().ip_protocol("bogus").build())
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    // The older single-rule form, as the aws CLI's --protocol/--port/--cidr sends it.
    ec2.authorize_security_group_ingress()
        .group_id(&bastion)
        .ip_protocol("tcp")
        .from_port(22)
        .to_port(22)
        .cidr_ip("203.0.113.0/24")
        .send()
        .await
        .unwrap();

    let rules = ec2
        .describe_security_group_rules()
        .filters(filter("group-id", &[&cp]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        rules.security_group_rules().len(),
        6,
        "5 ingress + the default egress"
    );
    let by_id = ec2
        .describe_security_group_rules()
        .security_group_rule_ids(&rule_ids[0])
        .send()
        .await
        .unwrap();
    assert_eq!(
        by_id.security_group_rules()[0]
            .referenced_group_info()
            .unwrap()
            .group_id(),
        Some(bastion.as_str())
    );
    let using = ec2
        .describe_security_groups()
        .filters(filter("ip-permission.group-id", &[&bastion]))
        .send()
        .await
        .unwrap();
    assert_eq!(using.security_groups()[0].group_id(), Some(cp.as_str()));

    // Referenced groups cannot be deleted.
    assert_eq!(
        code(ec2.delete_security_group().group_id(&bastion).send().await),
        "DependencyViolation"
    );
    let revoked = ec2
        .revoke_security_group_ingress()
        .group_id(&cp)
        .ip_permissions(from_group("tcp", Some((22, 22)), &bastion))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.revoked_security_group_rules().len(), 1);
    assert_eq!(
        code(
            ec2.revoke_security_group_ingress()
                .group_id(&cp)
                .ip_permissions(from_group("tcp", Some((22, 22)), &bastion))
                .send()
                .await
        ),
        "InvalidPermission.NotFound"
    );
    ec2.revoke_security_group_ingress()
        .group_id(&cp)
        .security_group_rule_ids(&rule_ids[1])
        .send()
        .await
        .unwrap();
    ec2.delete_security_group()
        .group_id(&bastion)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.describe_security_groups()
                .group_ids(&bastion)
                .send()
                .await
        ),
        "InvalidGroup.NotFound"
    );

    // Egress: strip the default rule, add one back.
    ec2.revoke_security_group_egress()
        .group_id(&node)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("-1")
                .ip_ranges(IpRange::builder().cidr_ip("0.0.0.0/0").build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    let n = ec2
        .describe_security_groups()
        .group_ids(&node)
        .send()
        .await
        .unwrap();
    assert!(n.security_groups()[0].ip_permissions_egress().is_empty());
    ec2.authorize_security_group_egress()
        .group_id(&node)
        .ip_permissions(tcp(443, "0.0.0.0/0"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );
}

#[tokio::test]
async fn groups_in_use_by_instances_cannot_be_deleted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let g = group(&ec2, &vpc_id, "node").await;
    let i = instance(&ec2, &s).await;
    let eni = ec2
        .describe_network_interfaces()
        .filters(filter("attachment.instance-id", &[&i]))
        .send()
        .await
        .unwrap()
        .network_interfaces()[0]
        .network_interface_id()
        .unwrap()
        .to_string();
    ec2.modify_network_interface_attribute()
        .network_interface_id(&eni)
        .groups(&g)
        .send()
        .await
        .unwrap();
    let inst = ec2
        .describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    assert_eq!(
        inst.reservations()[0].instances()[0].security_groups()[0].group_id(),
        Some(g.as_str())
    );
    assert_eq!(
        code(ec2.delete_security_group().group_id(&g).send().await),
        "DependencyViolation"
    );
    ec2.terminate_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    // Once the instance is terminated its interface is gone and the group is free.
    ec2.describe_instances()
        .instance_ids(&i)
        .send()
        .await
        .unwrap();
    ec2.delete_security_group()
        .group_id(&g)
        .send()
        .await
        .unwrap();
}

/// A rule as [`rules_of`] lists it: (rule id, protocol, from, to, IPv4 or IPv6 range or
/// referenced group, description).
type RuleRow = (String, String, i32, i32, String, Option<String>);

/// The ingress (or egress) rules of `group_id` as DescribeSecurityGroupRules answers them,
/// sorted.
async fn rules_of(ec2: &aws_sdk_ec2::Client, group_id: &str, egress: bool) -> Vec<RuleRow> {
    let out = ec2
        .describe_security_group_rules()
        .filters(filter("group-id", &[group_id]))
        .send()
        .await
        .unwrap();
    let mut rules: Vec<_> = out
        .security_group_rules()
        .iter()
        .filter(|r| r.is_egress() == Some(egress))
        .map(|r| {
            let peer = r
                .cidr_ipv4()
                .or(r.cidr_ipv6())
                .or(r.referenced_group_info().and_then(|g| g.group_id()))
                .unwrap_or_default();
            (
                r.security_group_rule_id().unwrap().to_string(),
                r.ip_protocol().unwrap().to_string(),
                r.from_port().unwrap(),
                r.to_port().unwrap(),
                peer.to_string(),
                r.description().map(str::to_string),
            )
        })
        .collect();
    rules.sort();
    rules
}

/// The ingress rule `id` of `group_id`, as [`rules_of`] lists it.
async fn rule_by_id(ec2: &aws_sdk_ec2::Client, group_id: &str, id: &str) -> RuleRow {
    let rules = rules_of(ec2, group_id, false).await;
    rules.into_iter().find(|r| r.0 == id).unwrap()
}

/// A rule named by id with its new description.
fn by_id(id: &str, description: &str) -> aws_sdk_ec2::types::SecurityGroupRuleDescription {
    aws_sdk_ec2::types::SecurityGroupRuleDescription::builder()
        .security_group_rule_id(id)
        .description(description)
        .build()
}

/// The error code of an UpdateSecurityGroupRuleDescriptionsIngress of `item` on `group`.
async fn ingress_description_refused(
    ec2: &aws_sdk_ec2::Client,
    group: &str,
    item: aws_sdk_ec2::types::SecurityGroupRuleDescription,
) -> String {
    code(
        ec2.update_security_group_rule_descriptions_ingress()
            .group_id(group)
            .security_group_rule_descriptions(item)
            .send()
            .await,
    )
}

#[tokio::test]
async fn rule_descriptions_are_updated_by_permission_or_by_id() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let cp = group(&ec2, &vpc_id, "controlplane").await;
    let node = group(&ec2, &vpc_id, "node").await;
    ec2.authorize_security_group_ingress()
        .group_id(&cp)
        .ip_permissions(tcp(6443, "0.0.0.0/0"))
        .ip_permissions(from_group("tcp", Some((10250, 10250)), &node))
        .send()
        .await
        .unwrap();

    // By permission: the range's new description replaces the old.
    let mut api = tcp(6443, "0.0.0.0/0");
    api.ip_ranges = Some(vec![
        IpRange::builder()
            .cidr_ip("0.0.0.0/0")
            .description("Kubernetes API")
            .build(),
    ]);
    let out = ec2
        .update_security_group_rule_descriptions_ingress()
        .group_id(&cp)
        .ip_permissions(api)
        .send()
        .await
        .unwrap();
    assert_eq!(out.r#return(), Some(true));
    // By id: a new description, and a rule's description removed by leaving it out.
    let before = rules_of(&ec2, &cp, false).await;
    let kubelet = before.iter().find(|r| r.2 == 10250).unwrap().0.clone();
    ec2.update_security_group_rule_descriptions_ingress()
        .group_id(&cp)
        .security_group_rule_descriptions(by_id(&kubelet, "kubelet API (nodes)"))
        .send()
        .await
        .unwrap();
    let rules = rules_of(&ec2, &cp, false).await;
    let described: Vec<(i32, Option<&str>)> = rules.iter().map(|r| (r.2, r.5.as_deref())).collect();
    assert!(
        described.contains(&(6443, Some("Kubernetes API"))),
        "{described:?}"
    );
    assert!(
        described.contains(&(10250, Some("kubelet API (nodes)"))),
        "{described:?}"
    );
    // The rules themselves and their ids are unchanged; DescribeSecurityGroups agrees.
    let ids = |r: &[RuleRow]| r.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&rules), ids(&before));
    let g = ec2
        .describe_security_groups()
        .group_ids(&cp)
        .send()
        .await
        .unwrap();
    let perms = g.security_groups()[0].ip_permissions();
    let api = perms.iter().find(|p| p.from_port() == Some(6443)).unwrap();
    assert_eq!(api.ip_ranges()[0].description(), Some("Kubernetes API"));
    ec2.update_security_group_rule_descriptions_ingress()
        .group_id(&cp)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(10250)
                .to_port(10250)
                .user_id_group_pairs(UserIdGroupPair::builder().group_id(&node).build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    let kubelet_rule = rule_by_id(&ec2, &cp, &kubelet).await;
    assert_eq!(kubelet_rule.5, None, "left out, the description is removed");

    // The egress rule every group has, by permission.
    ec2.update_security_group_rule_descriptions_egress()
        .group_id(&cp)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("-1")
                .ip_ranges(
                    IpRange::builder()
                        .cidr_ip("0.0.0.0/0")
                        .description("all out")
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        rules_of(&ec2, &cp, true).await[0].5.as_deref(),
        Some("all out")
    );

    // Refusals change nothing: a rule that is not there, an ingress rule's id given as egress,
    // an unknown id, a description AWS does not take, or nothing named at all.
    let now = rules_of(&ec2, &cp, false).await;
    let refusals = [
        (
            code(
                ec2.update_security_group_rule_descriptions_ingress()
                    .group_id(&cp)
                    .ip_permissions(tcp(22, "10.0.0.0/8"))
                    .send()
                    .await,
            ),
            "InvalidPermission.NotFound",
        ),
        (
            code(
                ec2.update_security_group_rule_descriptions_egress()
                    .group_id(&cp)
                    .security_group_rule_descriptions(by_id(&kubelet, "x"))
                    .send()
                    .await,
            ),
            "InvalidSecurityGroupRuleId.NotFound",
        ),
        (
            ingress_description_refused(&ec2, &cp, by_id("sgr-0123456789abcdef0", "x")).await,
            "InvalidSecurityGroupRuleId.NotFound",
        ),
        (
            ingress_description_refused(&ec2, &cp, by_id(&kubelet, "Let's Encrypt")).await,
            "InvalidParameterValue",
        ),
        (
            code(
                ec2.update_security_group_rule_descriptions_ingress()
                    .group_id(&cp)
                    .send()
                    .await,
            ),
            "MissingParameter",
        ),
    ];
    for (got, expected) in refusals {
        assert_eq!(got, expected);
    }
    assert_eq!(rules_of(&ec2, &cp, false).await, now);
}

#[tokio::test]
async fn rule_descriptions_outside_aws_set_are_refused_with_its_words() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let g = group(&ec2, &vpc_id, "web").await;
    for bad in ["Let's Encrypt", "Saída liberada", "why?", &"x".repeat(256)] {
        let mut p = tcp(443, "0.0.0.0/0");
        p.ip_ranges = Some(vec![
            IpRange::builder()
                .cidr_ip("0.0.0.0/0")
                .description(bad)
                .build(),
        ]);
        let (code, message) = crate::code_and_message(
            ec2.authorize_security_group_ingress()
                .group_id(&g)
                .ip_permissions(p)
                .send()
                .await,
        );
        assert_eq!(code, "InvalidParameterValue", "{bad}");
        assert_eq!(
            message,
            "Invalid rule description. Valid descriptions are strings less than 256 characters \
             from the following set:  a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*"
        );
    }
    assert!(rules_of(&ec2, &g, false).await.is_empty());
    // Every character of the set, up to 255 of them, is taken.
    let mut p = tcp(443, "0.0.0.0/0");
    let good = "HTTPS from anywhere: (a-z) [0-9] #1, @ops +=&; {x}!$* /._";
    p.ip_ranges = Some(vec![
        IpRange::builder()
            .cidr_ip("0.0.0.0/0")
            .description(good)
            .build(),
    ]);
    ec2.authorize_security_group_ingress()
        .group_id(&g)
        .ip_permissions(p)
        .send()
        .await
        .unwrap();
    assert_eq!(rules_of(&ec2, &g, false).await[0].5.as_deref(), Some(good));

    // A group's name and description: ASCII only, and a name not shaped like an id.
    for (name, description, parameter) in [
        ("web-é", "web", "GroupName"),
        ("web2", "web — public", "GroupDescription"),
    ] {
        let (code, message) = crate::code_and_message(
            ec2.create_security_group()
                .group_name(name)
                .description(description)
                .vpc_id(&vpc_id)
                .send()
                .await,
        );
        assert_eq!(code, "InvalidParameterValue");
        let value = if parameter == "GroupName" {
            name
        } else {
            description
        };
        assert_eq!(
            message,
            format!(
                "Value ({value}) for parameter {parameter} is invalid. Character sets beyond \
                 ASCII are not supported."
            )
        );
    }
    let (code, message) = crate::code_and_message(
        ec2.create_security_group()
            .group_name("sg-web")
            .description("web")
            .vpc_id(&vpc_id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    assert_eq!(
        message,
        "Value (sg-web) for parameter GroupName is invalid. Group names may not be in the format \
         sg-*."
    );
    let groups = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .send()
        .await
        .unwrap();
    let mut names: Vec<&str> = groups
        .security_groups()
        .iter()
        .map(|g| g.group_name().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["default", "web"]);
}

#[tokio::test]
async fn modify_security_group_rules_replaces_a_rule_under_its_id() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let lb = group(&ec2, &vpc_id, "lb").await;
    let node = group(&ec2, &vpc_id, "node").await;
    let out = ec2
        .authorize_security_group_ingress()
        .group_id(&lb)
        .ip_permissions(tcp(6443, "0.0.0.0/0"))
        .ip_permissions(tcp(443, "0.0.0.0/0"))
        .tag_specifications(tag_spec(
            ResourceType::SecurityGroupRule,
            &[("team", "infra")],
        ))
        .send()
        .await
        .unwrap();
    let api = out
        .security_group_rules()
        .iter()
        .find(|r| r.from_port() == Some(6443))
        .unwrap()
        .security_group_rule_id()
        .unwrap()
        .to_string();
    let rule = |protocol: &str, from: i32, to: i32| {
        aws_sdk_ec2::types::SecurityGroupRuleRequest::builder()
            .ip_protocol(protocol)
            .from_port(from)
            .to_port(to)
    };
    let update = |id: &str, r: aws_sdk_ec2::types::SecurityGroupRuleRequest| {
        aws_sdk_ec2::types::SecurityGroupRuleUpdate::builder()
            .security_group_rule_id(id)
            .security_group_rule(r)
            .build()
    };
    let out = ec2
        .modify_security_group_rules()
        .group_id(&lb)
        .security_group_rules(update(
            &api,
            rule("tcp", 6443, 6444)
                .cidr_ipv4("10.0.0.0/8")
                .description("API from the VPN")
                .build(),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(out.r#return(), Some(true));
    let rules = rules_of(&ec2, &lb, false).await;
    let modified = rules.iter().find(|r| r.0 == api).unwrap();
    assert_eq!(
        (
            &modified.1[..],
            modified.2,
            modified.3,
            &modified.4[..],
            modified.5.as_deref()
        ),
        ("tcp", 6443, 6444, "10.0.0.0/8", Some("API from the VPN"))
    );
    // Its tags stay with its id.
    let tagged = ec2
        .describe_security_group_rules()
        .security_group_rule_ids(&api)
        .send()
        .await
        .unwrap();
    assert_eq!(
        tagged.security_group_rules()[0].tags()[0].key(),
        Some("team")
    );
    // To a group peer, and (the rule's direction kept) the egress rule too.
    ec2.modify_security_group_rules()
        .group_id(&lb)
        .security_group_rules(update(
            &api,
            rule("tcp", 6443, 6443).referenced_group_id(&node).build(),
        ))
        .send()
        .await
        .unwrap();
    let modified = rule_by_id(&ec2, &lb, &api).await;
    assert_eq!((modified.4.as_str(), modified.5), (node.as_str(), None));
    let egress = rules_of(&ec2, &lb, true).await[0].0.clone();
    ec2.modify_security_group_rules()
        .group_id(&lb)
        .security_group_rules(update(
            &egress,
            rule("tcp", 443, 443).cidr_ipv4("0.0.0.0/0").build(),
        ))
        .send()
        .await
        .unwrap();
    let out_rules = rules_of(&ec2, &lb, true).await;
    assert_eq!((out_rules[0].1.as_str(), out_rules[0].2), ("tcp", 443));

    // Refusals change nothing.
    let now = rules_of(&ec2, &lb, false).await;
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let foreign = group(&ec2, &other_vpc, "foreign").await;
    let cases = [
        // The same as the group's other rule.
        (
            update(&api, rule("tcp", 443, 443).cidr_ipv4("0.0.0.0/0").build()),
            "InvalidPermission.Duplicate",
        ),
        (
            update(
                "sgr-0123456789abcdef0",
                rule("tcp", 1, 2).cidr_ipv4("0.0.0.0/0").build(),
            ),
            "InvalidSecurityGroupRuleId.NotFound",
        ),
        (update(&api, rule("tcp", 1, 2).build()), "MissingParameter"),
        (
            update(
                &api,
                rule("tcp", 1, 2)
                    .cidr_ipv4("0.0.0.0/0")
                    .referenced_group_id(&node)
                    .build(),
            ),
            "InvalidParameterCombination",
        ),
        (
            update(&api, rule("tcp", 9, 1).cidr_ipv4("0.0.0.0/0").build()),
            "InvalidParameterValue",
        ),
        (
            update(
                &api,
                rule("tcp", 1, 2).referenced_group_id(&foreign).build(),
            ),
            "InvalidGroup.NotFound",
        ),
        (
            update(
                &api,
                rule("tcp", 1, 2)
                    .cidr_ipv4("0.0.0.0/0")
                    .description("naïve")
                    .build(),
            ),
            "InvalidParameterValue",
        ),
    ];
    for (u, expected) in cases {
        assert_eq!(
            code(
                ec2.modify_security_group_rules()
                    .group_id(&lb)
                    .security_group_rules(u)
                    .send()
                    .await
            ),
            expected
        );
    }
    // A rule of another group is not this group's.
    let foreign_rule = rules_of(&ec2, &foreign, true).await[0].0.clone();
    assert_eq!(
        code(
            ec2.modify_security_group_rules()
                .group_id(&lb)
                .security_group_rules(update(
                    &foreign_rule,
                    rule("tcp", 1, 2).cidr_ipv4("0.0.0.0/0").build(),
                ))
                .send()
                .await
        ),
        "InvalidSecurityGroupRuleId.NotFound"
    );
    assert_eq!(rules_of(&ec2, &lb, false).await, now);
}

/// The groups GetSecurityGroupsForVpc answers for `vpc_id` with `filters`: (id, name,
/// primary VPC), sorted by id.
async fn groups_for_vpc(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
    filters: Vec<aws_sdk_ec2::types::Filter>,
) -> Vec<(String, String, String)> {
    let out = ec2
        .get_security_groups_for_vpc()
        .vpc_id(vpc_id)
        .set_filters(Some(filters))
        .send()
        .await
        .unwrap();
    let mut all: Vec<_> = out
        .security_group_for_vpcs()
        .iter()
        .map(|g| {
            assert_eq!(g.owner_id(), Some("123456789012"));
            (
                g.group_id().unwrap().to_string(),
                g.group_name().unwrap().to_string(),
                g.primary_vpc_id().unwrap().to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

#[tokio::test]
async fn get_security_groups_for_vpc_lists_the_groups_made_in_the_vpc_filtered_and_paged() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;
    let web = ec2
        .create_security_group()
        .group_name("web")
        .description("web servers")
        .vpc_id(&a)
        .tag_specifications(tag_spec(ResourceType::SecurityGroup, &[("Name", "web")]))
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let db = crate::group(&ec2, &a, "db").await;
    crate::group(&ec2, &b, "elsewhere").await;
    let default_of_a = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&a]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap()
        .security_groups()[0]
        .group_id()
        .unwrap()
        .to_string();

    let mut expected = vec![
        (web.clone(), "web".to_string(), a.clone()),
        (db.clone(), "db".to_string(), a.clone()),
        (default_of_a.clone(), "default".to_string(), a.clone()),
    ];
    expected.sort();
    assert_eq!(groups_for_vpc(&ec2, &a, vec![]).await, expected);

    // Its description and tags, as DescribeSecurityGroups has them.
    let out = ec2
        .get_security_groups_for_vpc()
        .vpc_id(&a)
        .filters(filter("group-id", &[&web]))
        .send()
        .await
        .unwrap();
    let g = &out.security_group_for_vpcs()[0];
    assert_eq!(g.description(), Some("web servers"));
    assert_eq!(g.tags()[0].value(), Some("web"));

    // Filters.
    assert_eq!(
        groups_for_vpc(&ec2, &a, vec![filter("group-name", &["d*"])])
            .await
            .len(),
        2
    );
    assert_eq!(
        groups_for_vpc(&ec2, &a, vec![filter("description", &["web servers"])]).await,
        [(web.clone(), "web".into(), a.clone())]
    );
    assert_eq!(
        groups_for_vpc(&ec2, &a, vec![filter("primary-vpc-id", &[&b])])
            .await
            .len(),
        0
    );
    assert_eq!(
        groups_for_vpc(&ec2, &a, vec![filter("owner-id", &["123456789012"])])
            .await
            .len(),
        3
    );
    let by_tag = ec2
        .get_security_groups_for_vpc()
        .vpc_id(&a)
        .filters(filter("tag:Name", &["web"]))
        .send()
        .await;
    assert_eq!(code(by_tag), "InvalidParameterValue");

    // Paged, five at a time at least.
    for n in 0..5 {
        crate::group(&ec2, &a, &format!("extra-{n}")).await;
    }
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let out = ec2
            .get_security_groups_for_vpc()
            .vpc_id(&a)
            .max_results(5)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        seen.extend(
            out.security_group_for_vpcs()
                .iter()
                .map(|g| g.group_id().unwrap().to_string()),
        );
        token = out.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 8);
    let too_few = ec2
        .get_security_groups_for_vpc()
        .vpc_id(&a)
        .max_results(4)
        .send()
        .await;
    assert_eq!(code(too_few), "InvalidParameterValue");
    let missing = ec2
        .get_security_groups_for_vpc()
        .vpc_id("vpc-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(missing), "InvalidVpcID.NotFound");
}

/// RevokeSecurityGroupIngress/Egress naming a rule the group does not hold: in a default VPC
/// no error, the rules it does hold revoked and the others answered as unknown; in any other
/// VPC `InvalidPermission.NotFound` and nothing revoked (the API reference's two cases).
#[tokio::test]
async fn revoking_an_unknown_rule_is_lenient_only_in_a_default_vpc() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let default_vpc = ec2
        .create_default_vpc()
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let other_vpc = vpc(&ec2, "10.0.0.0/16").await;
    let group_in = |vpc_id: String, name: &'static str| {
        let ec2 = ec2.clone();
        async move {
            let g = group(&ec2, &vpc_id, name).await;
            ec2.authorize_security_group_ingress()
                .group_id(&g)
                .ip_permissions(tcp(22, "10.0.0.0/8"))
                .send()
                .await
                .unwrap();
            g
        }
    };
    let ingress_ports = |g: String| {
        let ec2 = ec2.clone();
        async move {
            let d = ec2
                .describe_security_groups()
                .group_ids(g)
                .send()
                .await
                .unwrap();
            d.security_groups()[0]
                .ip_permissions()
                .iter()
                .map(|p| p.from_port().unwrap())
                .collect::<Vec<_>>()
        }
    };
    let revoke = |g: &str| {
        ec2.revoke_security_group_ingress()
            .group_id(g)
            .ip_permissions(tcp(22, "10.0.0.0/8"))
            .ip_permissions(tcp(443, "10.0.0.0/8"))
            .send()
    };

    // Another VPC: refused, the rule it holds kept.
    let strict = group_in(other_vpc, "strict").await;
    assert_eq!(code(revoke(&strict).await), "InvalidPermission.NotFound");
    assert_eq!(ingress_ports(strict).await, [22]);

    // The default VPC: 22 revoked, 443 answered as unknown.
    let lenient = group_in(default_vpc, "lenient").await;
    let out = revoke(&lenient).await.unwrap();
    assert_eq!(out.r#return(), Some(true));
    let revoked: Vec<_> = out
        .revoked_security_group_rules()
        .iter()
        .map(|r| r.from_port())
        .collect();
    assert_eq!(revoked, [Some(22)]);
    let unknown = out.unknown_ip_permissions();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0].from_port(), Some(443));
    assert_eq!(unknown[0].ip_ranges()[0].cidr_ip(), Some("10.0.0.0/8"));
    assert_eq!(ingress_ports(lenient.clone()).await, Vec::<i32>::new());
    // Nothing left to revoke there: still no error, all of it unknown.
    let again = revoke(&lenient).await.unwrap();
    assert!(again.revoked_security_group_rules().is_empty());
    assert_eq!(again.unknown_ip_permissions().len(), 2);
}

/// A rule's CIDR with host bits is masked, as EC2 stores it (a second authorize of either form
/// is a duplicate; a revoke of either form finds it); a CIDR not written as AWS writes one is
/// still refused.
#[tokio::test]
async fn a_rule_cidr_with_host_bits_is_masked() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let g = group(&ec2, &vpc_id, "masked").await;
    let authorize = |cidr: &str| {
        ec2.authorize_security_group_ingress()
            .group_id(&g)
            .ip_permissions(tcp(22, cidr))
            .send()
    };
    let out = authorize("10.0.0.28/29").await.unwrap();
    assert_eq!(
        out.security_group_rules()[0].cidr_ipv4(),
        Some("10.0.0.24/29")
    );
    let described = ec2
        .describe_security_groups()
        .group_ids(&g)
        .send()
        .await
        .unwrap();
    let ranges: Vec<_> = described.security_groups()[0].ip_permissions()[0]
        .ip_ranges()
        .iter()
        .map(|r| r.cidr_ip().unwrap().to_string())
        .collect();
    assert_eq!(ranges, ["10.0.0.24/29"]);
    assert_eq!(
        code(authorize("10.0.0.24/29").await),
        "InvalidPermission.Duplicate"
    );
    for bad in ["010.0.0.0/8", "10.0.0.0/08", " 10.0.0.0/8", "10.0.0.0/33"] {
        assert_eq!(code(authorize(bad).await), "InvalidParameterValue", "{bad}");
    }
    let revoked = ec2
        .revoke_security_group_ingress()
        .group_id(&g)
        .ip_permissions(tcp(22, "10.0.0.31/29"))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.revoked_security_group_rules().len(), 1);
}
