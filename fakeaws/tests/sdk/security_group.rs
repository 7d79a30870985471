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
