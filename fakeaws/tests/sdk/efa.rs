//! Elastic Fabric Adapters through the SDK: the instance types that take one
//! (DescribeInstanceTypes), a launch interface of type `efa` (on a type with an EFA, and
//! refused on one without), CreateNetworkInterface's `efa` interfaces and their attachment,
//! a stopped instance's change of type, and a launch template's interface type. Every refused
//! call is checked to change nothing.

use aws_sdk_ec2::types::{
    AttributeValue, InstanceNetworkInterfaceSpecification, InstanceType,
    LaunchTemplateInstanceNetworkInterfaceSpecificationRequest, LaunchTemplateSpecification,
    NetworkInterfaceCreationType, RequestLaunchTemplateData,
};

use crate::{code, code_and_message, empty_fake, filter, image, stop, subnet, vpc};

const UNSUPPORTED: &str = "The requested configuration is currently not supported. \
                           Please check the documentation for supported configurations.";

/// Launches one instance of `instance_type` in `subnet_id` whose primary interface is of
/// `interface_type`, if one is given.
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    subnet_id: &str,
    instance_type: InstanceType,
    interface_type: Option<&str>,
) -> Result<String, String> {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    ec2.run_instances()
        .image_id(ami)
        .instance_type(instance_type)
        .network_interfaces(
            InstanceNetworkInterfaceSpecification::builder()
                .device_index(0)
                .subnet_id(subnet_id)
                .set_interface_type(interface_type.map(String::from))
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .map(|r| r.instances()[0].instance_id().unwrap().to_string())
        .map_err(|e| {
            use aws_sdk_ec2::error::ProvideErrorMetadata;
            format!("{}: {}", e.code().unwrap_or("?"), e.message().unwrap_or(""))
        })
}

/// The types of an instance's interfaces, by device index.
async fn interface_types(ec2: &aws_sdk_ec2::Client, instance_id: &str) -> Vec<String> {
    let out = ec2
        .describe_instances()
        .instance_ids(instance_id)
        .send()
        .await
        .unwrap();
    let mut nics: Vec<(i32, String)> = out.reservations()[0].instances()[0]
        .network_interfaces()
        .iter()
        .map(|n| {
            (
                n.attachment().unwrap().device_index().unwrap(),
                n.interface_type().unwrap().to_string(),
            )
        })
        .collect();
    nics.sort();
    nics.into_iter().map(|(_, t)| t).collect()
}

async fn counts(ec2: &aws_sdk_ec2::Client) -> (usize, usize) {
    let instances: usize = ec2
        .describe_instances()
        .send()
        .await
        .unwrap()
        .reservations()
        .iter()
        .map(|r| r.instances().len())
        .sum();
    let interfaces = ec2
        .describe_network_interfaces()
        .send()
        .await
        .unwrap()
        .network_interfaces()
        .len();
    (instances, interfaces)
}

#[tokio::test]
async fn efa_instance_types_are_the_user_guides() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let out = ec2
        .describe_instance_types()
        .instance_types(InstanceType::C6i32xlarge)
        .instance_types(InstanceType::M5Large)
        .send()
        .await
        .unwrap();
    for t in out.instance_types() {
        let net = t.network_info().unwrap();
        match t.instance_type().unwrap() {
            InstanceType::C6i32xlarge => {
                assert_eq!(net.efa_supported(), Some(true));
                assert_eq!(net.efa_info().unwrap().maximum_efa_interfaces(), Some(1));
            }
            other => {
                assert_eq!(net.efa_supported(), Some(false), "{other}");
                assert!(net.efa_info().is_none(), "{other}");
            }
        }
    }
    let mut efa: Vec<String> = Vec::new();
    let mut token = None;
    loop {
        let page = ec2
            .describe_instance_types()
            .filters(filter("network-info.efa-supported", &["true"]))
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        efa.extend(
            page.instance_types()
                .iter()
                .map(|t| t.instance_type().unwrap().as_str().to_string()),
        );
        token = page.next_token().map(String::from);
        if token.is_none() {
            break;
        }
    }
    for t in [
        "c6i.32xlarge",
        "c6i.metal",
        "m7i.48xlarge",
        "m7i.metal-48xl",
        "r6a.48xlarge",
        "c7g.16xlarge",
        "c7g.metal",
    ] {
        assert!(efa.iter().any(|e| e == t), "{t} missing from {efa:?}");
    }
    for t in [
        "c6i.24xlarge",
        "m7i.metal-24xl",
        "m5.24xlarge",
        "c6g.16xlarge",
        "t3.micro",
    ] {
        assert!(!efa.iter().any(|e| e == t), "{t} in {efa:?}");
    }
    let by_max = ec2
        .describe_instance_types()
        .filters(filter(
            "network-info.efa-info.maximum-efa-interfaces",
            &["1"],
        ))
        .filters(filter("instance-type", &["c6i.*"]))
        .send()
        .await
        .unwrap();
    let mut names: Vec<&str> = by_max
        .instance_types()
        .iter()
        .map(|t| t.instance_type().unwrap().as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["c6i.32xlarge", "c6i.metal"]);
}

#[tokio::test]
async fn an_efa_goes_only_on_a_type_that_takes_one() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;

    // A type without an EFA: AWS's refusal, and nothing made.
    let before = counts(&ec2).await;
    let refused = launch(&ec2, &subnet_id, InstanceType::T3Micro, Some("efa")).await;
    assert_eq!(refused, Err(format!("Unsupported: {UNSUPPORTED}")));
    assert_eq!(counts(&ec2).await, before);
    // Types the fake does not serve, and one that is none.
    let efa_only = launch(
        &ec2,
        &subnet_id,
        InstanceType::C6i32xlarge,
        Some("efa-only"),
    )
    .await;
    assert!(efa_only.unwrap_err().starts_with("NotImplemented"));
    let bogus = launch(&ec2, &subnet_id, InstanceType::C6i32xlarge, Some("fast")).await;
    assert!(bogus.unwrap_err().starts_with("InvalidParameterValue"));
    assert_eq!(counts(&ec2).await, before);

    // A type with one: the instance's primary interface is an EFA, as both describes show.
    let hpc = launch(&ec2, &subnet_id, InstanceType::C6i32xlarge, Some("efa"))
        .await
        .unwrap();
    assert_eq!(interface_types(&ec2, &hpc).await, ["efa"]);
    let efas = ec2
        .describe_network_interfaces()
        .filters(filter("interface-type", &["efa"]))
        .send()
        .await
        .unwrap();
    assert_eq!(efas.network_interfaces().len(), 1);
    let efa = &efas.network_interfaces()[0];
    assert_eq!(
        efa.attachment().unwrap().instance_id(),
        Some(hpc.as_str()),
        "{efa:?}"
    );
    assert!(efa.private_ip_address().is_some(), "an EFA has addresses");
    // `interface` is the default, named or not.
    let plain = launch(
        &ec2,
        &subnet_id,
        InstanceType::C6i32xlarge,
        Some("interface"),
    )
    .await
    .unwrap();
    assert_eq!(interface_types(&ec2, &plain).await, ["interface"]);

    // A user's EFA: attached to a type without one, refused; to an instance that has its
    // one EFA already, refused; to one with room, attached.
    let made = ec2
        .create_network_interface()
        .subnet_id(&subnet_id)
        .interface_type(NetworkInterfaceCreationType::Efa)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap();
    assert_eq!(made.interface_type().map(|t| t.as_str()), Some("efa"));
    let eni = made.network_interface_id().unwrap().to_string();
    let small = launch(&ec2, &subnet_id, InstanceType::T3Micro, None)
        .await
        .unwrap();
    let attach = |instance: String| {
        ec2.attach_network_interface()
            .network_interface_id(&eni)
            .instance_id(instance)
            .device_index(1)
            .send()
    };
    assert_eq!(
        code_and_message(attach(small.clone()).await),
        ("Unsupported".to_string(), UNSUPPORTED.to_string())
    );
    assert_eq!(code(attach(hpc.clone()).await), "AttachmentLimitExceeded");
    assert_eq!(interface_types(&ec2, &small).await, ["interface"]);
    assert_eq!(interface_types(&ec2, &hpc).await, ["efa"]);
    attach(plain.clone()).await.unwrap();
    assert_eq!(interface_types(&ec2, &plain).await, ["interface", "efa"]);

    // A stopped instance with an EFA takes no type without one; it keeps its type.
    stop(&fake, &ec2, &hpc).await;
    let resize = ec2
        .modify_instance_attribute()
        .instance_id(&hpc)
        .instance_type(AttributeValue::builder().value("m5.large").build())
        .send()
        .await;
    assert_eq!(code(resize), "Unsupported");
    let kept = ec2
        .describe_instances()
        .instance_ids(&hpc)
        .send()
        .await
        .unwrap();
    assert_eq!(
        kept.reservations()[0].instances()[0].instance_type(),
        Some(&InstanceType::C6i32xlarge)
    );
    // Another type with an EFA is fine.
    ec2.modify_instance_attribute()
        .instance_id(&hpc)
        .instance_type(AttributeValue::builder().value("c6i.metal").build())
        .send()
        .await
        .unwrap();

    // A user's interface a launch names takes no interface type: it is what it was made.
    let mine = ec2
        .create_network_interface()
        .subnet_id(&subnet_id)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap();
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let before = counts(&ec2).await;
    let named = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::C6i32xlarge)
        .network_interfaces(
            InstanceNetworkInterfaceSpecification::builder()
                .device_index(0)
                .network_interface_id(&mine)
                .interface_type("efa")
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await;
    assert_eq!(code(named), "InvalidParameterCombination");
    assert_eq!(counts(&ec2).await, before);
}

#[tokio::test]
async fn a_launch_template_launches_its_efa() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    ec2.create_launch_template()
        .launch_template_name("hpc")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(InstanceType::C7i48xlarge)
                .network_interfaces(
                    LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
                        .device_index(0)
                        .subnet_id(&subnet_id)
                        .interface_type("efa")
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let version = ec2
        .describe_launch_template_versions()
        .launch_template_name("hpc")
        .send()
        .await
        .unwrap();
    let data = version.launch_template_versions()[0]
        .launch_template_data()
        .unwrap();
    assert_eq!(data.network_interfaces()[0].interface_type(), Some("efa"));
    let out = ec2
        .run_instances()
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_name("hpc")
                .build(),
        )
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let id = out.instances()[0].instance_id().unwrap();
    assert_eq!(interface_types(&ec2, id).await, ["efa"]);
}
