//! Property: no form body, however malformed, makes the fake panic or answer anything but a
//! well-formed XML document with a request id.

use proptest::prelude::*;

use crate::{auth, fake, xml};

/// Keys near the served operations' real keys, so decoding gets deep.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Action".to_string()),
        Just("Version".to_string()),
        "(VpcId|SubnetId|CidrBlock|DryRun|MaxResults|NextToken|Attribute|InternetGatewayId)",
        "(VpcId|ResourceId|ZoneName|Filter|TagSpecification|Tag)\\.[0-9]{1,3}",
        "Filter\\.[0-9]{1,2}\\.(Name|Value\\.[0-9]{1,2})",
        "TagSpecification\\.[0-9]\\.(ResourceType|Tag\\.[0-9]\\.(Key|Value))",
        "(EnableDnsHostnames|EnableDnsSupport|MapPublicIpOnLaunch)\\.(Value|Bogus)",
        "(Listeners|Subnets|LoadBalancerNames|Tags)\\.member\\.[0-9]{1,2}(\\.(Protocol|LoadBalancerPort|InstancePort|Key|Value))?",
        "[A-Za-z0-9.%&=]{0,12}",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("2016-11-15".to_string()),
        Just("2012-06-01".to_string()),
        "(DescribeVpcs|CreateVpc|CreateSubnet|DeleteVpc|ModifyVpcAttribute|CreateTags|DescribeTags|CreateLoadBalancer|DescribeLoadBalancers|RunInstances)",
        "10\\.[0-9]{1,3}\\.0\\.0/[0-9]{1,2}",
        "(vpc|subnet|igw)-[0-9a-f]{0,17}",
        "(true|false|-1|0|5|99999999999|enableDnsSupport|vpc)",
        ".{0,20}",
    ]
}

fn body() -> impl Strategy<Value = String> {
    prop::collection::vec((key(), value()), 0..12).prop_map(|pairs| {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs {
            s.append_pair(&k, &v);
        }
        s.finish()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decoder_never_panics(body in body(), raw in prop::collection::vec(any::<u8>(), 0..64), elb in any::<bool>()) {
        let f = fake();
        let service = if elb { "elasticloadbalancing" } else { "ec2" };
        for bytes in [body.as_bytes(), raw.as_slice()] {
            let a = f.handle(Some(&auth("us-east-1", service)), b"", bytes);
            prop_assert!(a.status == 200 || (400..600).contains(&a.status));
            let doc = xml::parse(&a.body);
            if a.status != 200 {
                prop_assert!(doc.name == "Response" || doc.name == "ErrorResponse", "{}", a.body);
            }
            prop_assert_eq!(a.request_id.len(), 36);
        }
    }
}
