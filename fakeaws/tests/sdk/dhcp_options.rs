//! DHCP options sets through the SDK.

use aws_sdk_ec2::types::{NewDhcpConfiguration, ResourceType};

use crate::{code, empty_fake, filter, tag_spec, vpc};

fn option(key: &str, values: &[&str]) -> NewDhcpConfiguration {
    let mut c = NewDhcpConfiguration::builder().key(key);
    for v in values {
        c = c.values(*v);
    }
    c.build()
}

/// The DHCP options set DescribeVpcs shows for `vpc_id`.
async fn set_of(ec2: &aws_sdk_ec2::Client, vpc_id: &str) -> String {
    let out = ec2.describe_vpcs().vpc_ids(vpc_id).send().await.unwrap();
    out.vpcs()[0].dhcp_options_id().unwrap().to_string()
}

/// The options of the set `id`: (key, values).
async fn options_of(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<(String, Vec<String>)> {
    let out = ec2
        .describe_dhcp_options()
        .dhcp_options_ids(id)
        .send()
        .await
        .unwrap();
    out.dhcp_options()[0]
        .dhcp_configurations()
        .iter()
        .map(|c| {
            (
                c.key().unwrap().to_string(),
                c.values()
                    .iter()
                    .map(|v| v.value().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_default_set_and_sets_of_ones_own() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let v = vpc(&ec2, "10.0.0.0/16").await;
    let default = set_of(&ec2, &v).await;
    assert!(default.starts_with("dopt-"), "{default}");
    assert_eq!(
        options_of(&ec2, &default).await,
        [
            ("domain-name".to_string(), vec!["ec2.internal".to_string()]),
            (
                "domain-name-servers".to_string(),
                vec!["AmazonProvidedDNS".to_string()]
            ),
        ]
    );
    // Another region's default set names that region.
    let west = fake.ec2_client_in("eu-west-1");
    let listed = west.describe_dhcp_options().send().await.unwrap();
    let names: Vec<&str> = listed.dhcp_options()[0]
        .dhcp_configurations()
        .iter()
        .filter(|c| c.key() == Some("domain-name"))
        .flat_map(|c| c.values().iter().map(|v| v.value().unwrap()))
        .collect();
    assert_eq!(names, ["eu-west-1.compute.internal"]);

    let made = ec2
        .create_dhcp_options()
        .dhcp_configurations(option("domain-name", &["corp.example"]))
        .dhcp_configurations(option("domain-name-servers", &["10.0.0.2", "10.0.0.3"]))
        .dhcp_configurations(option("ntp-servers", &["169.254.169.123"]))
        .tag_specifications(tag_spec(ResourceType::DhcpOptions, &[("Name", "corp")]))
        .send()
        .await
        .unwrap()
        .dhcp_options
        .unwrap();
    let id = made.dhcp_options_id().unwrap().to_string();
    assert_eq!(made.owner_id(), Some("123456789012"));
    assert_eq!(made.tags()[0].value(), Some("corp"));
    let found = ec2
        .describe_dhcp_options()
        .filters(filter("key", &["ntp-servers"]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.dhcp_options().len(), 1);
    let by_tag = ec2
        .describe_dhcp_options()
        .filters(filter("tag:Name", &["corp"]))
        .filters(filter("value", &["10.0.0.3"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        by_tag.dhcp_options()[0].dhcp_options_id(),
        Some(id.as_str())
    );

    // Associated, the set is the VPC's and is not deleted; `default` is no set at all.
    ec2.associate_dhcp_options()
        .dhcp_options_id(&id)
        .vpc_id(&v)
        .send()
        .await
        .unwrap();
    assert_eq!(set_of(&ec2, &v).await, id);
    let by_set = ec2
        .describe_vpcs()
        .filters(filter("dhcp-options-id", &[&id]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_set.vpcs().len(), 1);
    assert_eq!(
        code(ec2.delete_dhcp_options().dhcp_options_id(&id).send().await),
        "DependencyViolation"
    );
    ec2.associate_dhcp_options()
        .dhcp_options_id("default")
        .vpc_id(&v)
        .send()
        .await
        .unwrap();
    assert_eq!(set_of(&ec2, &v).await, "default");
    ec2.delete_dhcp_options()
        .dhcp_options_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.describe_dhcp_options()
                .dhcp_options_ids(&id)
                .send()
                .await
        ),
        "InvalidDhcpOptionID.NotFound"
    );
    assert_eq!(
        code(
            ec2.associate_dhcp_options()
                .dhcp_options_id(&id)
                .vpc_id(&v)
                .send()
                .await
        ),
        "InvalidDhcpOptionID.NotFound"
    );

    // Options the API reference does not take are refused, and make no set.
    for bad in [
        option("domain-name-servers", &["a", "b", "c", "d", "e"]),
        option("domain-name-servers", &["dns.example"]),
        option("netbios-node-type", &["3"]),
        option("ipv6-address-preferred-lease-time", &["60"]),
        option("colour", &["red"]),
        option("domain-name", &[]),
    ] {
        assert_eq!(
            code(
                ec2.create_dhcp_options()
                    .dhcp_configurations(bad.clone())
                    .send()
                    .await
            ),
            "InvalidParameterValue",
            "{bad:?}"
        );
    }
    let all = ec2.describe_dhcp_options().send().await.unwrap();
    assert_eq!(all.dhcp_options().len(), 1, "the default set alone");
}
