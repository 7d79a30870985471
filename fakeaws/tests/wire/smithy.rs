//! The Smithy protocol test cases for ec2Query and awsQuery (smithy-aws-protocol-tests) that
//! apply to the served operations, restated on this model's shapes: each test names the case
//! it follows. Inputs are decoded by the generated decoders; outputs are encoded by the
//! generated encoders and read back as XML.

use fakeaws::generated::ec2::{
    AttributeBooleanValue, CreateTagsRequest, DescribeVpcAttributeRequest, DescribeVpcsRequest,
    DescribeVpcsResult, Filter, ModifyVpcAttributeRequest, Tag, Vpc, VpcAttributeName,
};
use fakeaws::generated::elb::{CreateAccessPointInput, DescribeAccessPointsInput, Listener};
use fakeaws::protocol::error::ApiError;
use fakeaws::protocol::query::{Decode, FormReader};
use fakeaws::protocol::xml::{ec2_response, query_response};

use crate::{ec2, ec2_error, fake, xml};

fn decode<T: Decode>(body: &str) -> Result<T, ApiError> {
    let mut r = FormReader::from_urlencoded(&[body.as_bytes()]);
    r.strip_envelope();
    let v = T::decode(&mut r, "")?.expect("the root is always present");
    r.finish()?;
    Ok(v)
}

/// Ec2Lists, Ec2ListArgWithXmlNameMember, Ec2ListMemberWithXmlName: every EC2 list is
/// flattened (`Key.N`), the key is the member's capitalised xmlName (`VpcId`, not `VpcIds`),
/// and the list member's own xmlName (`item`) plays no part; lists of structures nest with dots.
#[test]
fn ec2_lists() {
    let r: DescribeVpcsRequest = decode(
        "Action=DescribeVpcs&Version=2016-11-15&VpcId.1=vpc-1&VpcId.2=vpc-2&VpcId.3=vpc-3\
         &Filter.1.Name=tag%3AName&Filter.1.Value.1=a&Filter.1.Value.2=b&Filter.2.Name=state",
    )
    .unwrap();
    assert_eq!(r.vpc_ids.unwrap(), ["vpc-1", "vpc-2", "vpc-3"]);
    assert_eq!(
        r.filters.unwrap(),
        [
            Filter {
                name: Some("tag:Name".into()),
                values: Some(vec!["a".into(), "b".into()])
            },
            Filter {
                name: Some("state".into()),
                values: None
            },
        ]
    );
    // The xmlName of the list member (`item`) is not a key.
    assert!(decode::<DescribeVpcsRequest>("VpcId.item.1=vpc-1").is_err());
    // Nor is the member name when an xmlName exists.
    assert_eq!(
        decode::<DescribeVpcsRequest>("VpcIds.1=vpc-1")
            .unwrap_err()
            .code,
        "UnknownParameter"
    );
}

/// Ec2EmptyQueryLists: an absent list is no list; a bare key is an empty one.
#[test]
fn ec2_empty_lists() {
    let r: DescribeVpcsRequest = decode("Action=DescribeVpcs&Version=2016-11-15").unwrap();
    assert_eq!(r.vpc_ids, None);
    let r: DescribeVpcsRequest = decode("Action=DescribeVpcs&Version=2016-11-15&VpcId=").unwrap();
    assert_eq!(r.vpc_ids, Some(vec![]));
}

/// Ec2SimpleInputParamsStrings / ...Boolean... / ...Integer / Ec2Enums /
/// Ec2XmlNameIsUppercased: scalars by type, `dryRun` sent as `DryRun`.
#[test]
fn ec2_simple_input_params() {
    let r: DescribeVpcAttributeRequest = decode(
        "Action=DescribeVpcAttribute&Version=2016-11-15&VpcId=vpc-1&Attribute=enableDnsSupport&DryRun=false",
    )
    .unwrap();
    assert_eq!(r.vpc_id, "vpc-1");
    assert_eq!(r.attribute, VpcAttributeName::EnableDnsSupport);
    assert_eq!(r.dry_run, Some(false));
    let r: DescribeVpcsRequest = decode("DryRun=true&MaxResults=10").unwrap();
    assert_eq!((r.dry_run, r.max_results), (Some(true), Some(10)));
    // The lower-case xmlName itself is not the key.
    assert_eq!(
        decode::<DescribeVpcsRequest>("dryRun=true")
            .unwrap_err()
            .code,
        "UnknownParameter"
    );
}

/// Ec2NestedStructures: structure members are `Outer.Inner`.
#[test]
fn ec2_nested_structures() {
    let r: ModifyVpcAttributeRequest = decode(
        "Action=ModifyVpcAttribute&Version=2016-11-15&VpcId=vpc-1&EnableDnsHostnames.Value=true",
    )
    .unwrap();
    assert_eq!(
        r.enable_dns_hostnames,
        Some(AttributeBooleanValue { value: Some(true) })
    );
    assert_eq!(r.enable_dns_support, None);
}

/// Percent-encoding as the SDKs send it (`urlencoding`): `%3A`, `%2F`, `%20`, `%2B`.
#[test]
fn percent_encoded_values() {
    let r: CreateTagsRequest = decode(
        "ResourceId.1=vpc-1&Tag.1.Key=sigs.k8s.io%2Fcluster-api-provider-aws%2Fcluster%2Fdemo\
         &Tag.1.Value=a%20b%2Bc%3Ad",
    )
    .unwrap();
    assert_eq!(
        r.tags,
        [Tag {
            key: Some("sigs.k8s.io/cluster-api-provider-aws/cluster/demo".into()),
            value: Some("a b+c:d".into())
        }]
    );
}

/// Ec2XmlLists / Ec2XmlEmptyLists (responses): a list is a wrapper element named by the
/// member's xmlName holding `<item>` elements; an empty list is an empty wrapper. No Result
/// wrapper, `requestId` under the root.
#[test]
fn ec2_xml_lists() {
    let out = DescribeVpcsResult {
        next_token: None,
        vpcs: Some(vec![
            Vpc {
                vpc_id: Some("vpc-1".into()),
                tags: Some(vec![Tag {
                    key: Some("k".into()),
                    value: Some("v".into()),
                }]),
                ..Default::default()
            },
            Vpc {
                vpc_id: Some("vpc-2".into()),
                tags: Some(vec![]),
                ..Default::default()
            },
        ]),
    };
    let body = ec2_response(
        "DescribeVpcs",
        "http://ec2.amazonaws.com/doc/2016-11-15/",
        "rid",
        &out,
    );
    let doc = xml::parse(&body);
    assert_eq!(doc.name, "DescribeVpcsResponse");
    assert_eq!(doc.child("requestId").text, "rid");
    let items = doc.child("vpcSet").all("item");
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].child("vpcId").text, "vpc-1");
    assert_eq!(
        items[0].child("tagSet").child("item").child("key").text,
        "k"
    );
    assert!(items[1].child("tagSet").children.is_empty());
    assert!(doc.all("nextToken").is_empty(), "unset members are omitted");
}

/// Ec2InvalidGreetingError / Ec2ComplexError: `<Response><Errors><Error>` with Code and
/// Message, and `<RequestID>` (capital ID) after `<Errors>`.
#[test]
fn ec2_xml_errors() {
    let f = fake();
    let a = ec2(
        &f,
        "Action=DeleteVpc&Version=2016-11-15&VpcId=vpc-0123456789abcdef0",
    );
    assert_eq!(ec2_error(&a), "InvalidVpcID.NotFound");
    let doc = xml::parse(&a.body);
    assert_eq!(
        doc.children
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["Errors", "RequestID"]
    );
}

/// QueryLists, EmptyQueryList, NestedStructures (awsQuery): lists are `Key.member.N`, list
/// members that are structures nest with dots, a bare key is an empty list.
#[test]
fn aws_query_lists() {
    let r: CreateAccessPointInput = decode(
        "Action=CreateLoadBalancer&Version=2012-06-01&LoadBalancerName=lb\
         &Listeners.member.1.Protocol=TCP&Listeners.member.1.LoadBalancerPort=6443&Listeners.member.1.InstancePort=6443\
         &Listeners.member.2.Protocol=HTTP&Listeners.member.2.LoadBalancerPort=80&Listeners.member.2.InstancePort=8080\
         &Subnets.member.1=subnet-1&Subnets.member.2=subnet-2&SecurityGroups=",
    )
    .unwrap();
    assert_eq!(r.load_balancer_name, "lb");
    assert_eq!(r.listeners.len(), 2);
    assert_eq!(
        r.listeners[1],
        Listener {
            protocol: "HTTP".into(),
            load_balancer_port: 80,
            instance_protocol: None,
            instance_port: 8080,
            ssl_certificate_id: None,
        }
    );
    assert_eq!(r.subnets.unwrap(), ["subnet-1", "subnet-2"]);
    assert_eq!(r.security_groups, Some(vec![]));
    // ec2Query-style flattened keys are not awsQuery keys.
    assert_eq!(
        decode::<DescribeAccessPointsInput>("LoadBalancerNames.1=lb")
            .unwrap_err()
            .code,
        "UnknownParameter"
    );
    // A required member of a list element is required.
    let err = decode::<CreateAccessPointInput>(
        "LoadBalancerName=lb&Listeners.member.1.Protocol=TCP&Listeners.member.1.InstancePort=1",
    )
    .unwrap_err();
    assert_eq!(err.code, "MissingParameter");
    assert!(
        err.message.contains("Listeners.member.1.LoadBalancerPort"),
        "{}",
        err.message
    );
}

/// QueryXmlLists / awsQuery responses: `<OpResult>` first, `<member>` list items, then
/// `<ResponseMetadata><RequestId>`.
#[test]
fn aws_query_xml_lists() {
    let out = fakeaws::generated::elb::DescribeAccessPointsOutput {
        load_balancer_descriptions: Some(vec![fakeaws::generated::elb::LoadBalancerDescription {
            load_balancer_name: Some("lb".into()),
            subnets: Some(vec!["subnet-1".into(), "subnet-2".into()]),
            ..Default::default()
        }]),
        next_marker: None,
    };
    let body = query_response(
        "DescribeLoadBalancers",
        "http://elasticloadbalancing.amazonaws.com/doc/2012-06-01/",
        "rid",
        Some(&out),
    );
    let doc = xml::parse(&body);
    assert_eq!(doc.children[0].name, "DescribeLoadBalancersResult");
    let lb = doc.children[0]
        .child("LoadBalancerDescriptions")
        .child("member");
    assert_eq!(lb.child("LoadBalancerName").text, "lb");
    let subnets: Vec<&str> = lb
        .child("Subnets")
        .all("member")
        .iter()
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(subnets, ["subnet-1", "subnet-2"]);
    assert_eq!(doc.children[1].name, "ResponseMetadata");
    assert_eq!(doc.child("ResponseMetadata").child("RequestId").text, "rid");
}
