//! Routing, envelope checks, model validation and both error envelopes.

use fakeaws::generated::{ec2 as gen_ec2, elb as gen_elb};

use crate::{auth, ec2, ec2_error, elb, fake, xml};

#[test]
fn every_model_operation_answers_or_errors_well_formed() {
    let f = fake();
    let mut served = 0;
    for op in gen_ec2::ALL_OPERATIONS {
        let a = ec2(&f, &format!("Action={op}&Version=2016-11-15"));
        let doc = xml::parse(&a.body);
        if a.status == 200 {
            assert_eq!(doc.name, format!("{op}Response"));
            served += 1;
        } else {
            let code = ec2_error(&a);
            assert!(
                [
                    "NotImplemented",
                    "MissingParameter",
                    "InvalidPaginationToken"
                ]
                .contains(&code.as_str())
                    || gen_ec2::Action::from_name(op).is_some(),
                "{op}: {code}"
            );
            if code == "NotImplemented" {
                assert_eq!(a.status, 501);
                assert!(
                    doc.child("Errors")
                        .child("Error")
                        .child("Message")
                        .text
                        .contains(op)
                );
            }
        }
    }
    assert_eq!(gen_ec2::ALL_OPERATIONS.len(), 830);
    assert!(served >= 5, "{served}");
    for op in gen_elb::ALL_OPERATIONS {
        let a = elb(&f, &format!("Action={op}&Version=2012-06-01"));
        let doc = xml::parse(&a.body);
        if a.status != 200 {
            assert_eq!(doc.name, "ErrorResponse", "{op}");
            assert!(!doc.child("Error").child("Code").text.is_empty());
            assert!(!doc.child("RequestId").text.is_empty());
        }
    }
}

#[test]
fn unsigned_and_unroutable_requests_get_a_clear_400() {
    let f = fake();
    let a = f.handle(None, b"", b"Action=DescribeVpcs&Version=2016-11-15");
    assert_eq!(a.status, 400);
    assert_eq!(ec2_error(&a), "MissingAuthenticationToken");
    let a = f.handle(
        Some("Bearer abc"),
        b"",
        b"Action=DescribeVpcs&Version=2016-11-15",
    );
    assert_eq!(ec2_error(&a), "MissingAuthenticationToken");
    let a = f.handle(Some(&auth("us-east-1", "s3")), b"", b"Action=ListBuckets");
    assert_eq!(a.status, 400);
    assert_eq!(ec2_error(&a), "UnknownService");
    let a = f.handle(
        Some(&auth("mars", "ec2")),
        b"",
        b"Action=DescribeVpcs&Version=2016-11-15",
    );
    assert_eq!(ec2_error(&a), "InvalidRegion");
}

#[test]
fn presigned_query_string_routes_too() {
    let f = fake();
    let q = "Action=DescribeVpcs&Version=2016-11-15&X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKID%2F20261129%2Feu-west-1%2Fec2%2Faws4_request&X-Amz-Signature=00";
    let a = f.handle(None, q.as_bytes(), b"");
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(xml::parse(&a.body).name, "DescribeVpcsResponse");
}

#[test]
fn action_and_version_checks() {
    let f = fake();
    assert_eq!(ec2_error(&ec2(&f, "Version=2016-11-15")), "MissingAction");
    let a = ec2(&f, "Action=LaunchRockets&Version=2016-11-15");
    assert_eq!((a.status, ec2_error(&a).as_str()), (400, "InvalidAction"));
    assert_eq!(
        ec2_error(&ec2(&f, "Action=DescribeVpcs")),
        "MissingParameter"
    );
    assert_eq!(
        ec2_error(&ec2(&f, "Action=DescribeVpcs&Version=2099-01-01")),
        "NoSuchVersion"
    );
    let a = elb(&f, "Action=DescribeLoadBalancers&Version=2015-12-01");
    assert_eq!(a.status, 501);
    assert!(a.body.contains("ELBv2"));
}

#[test]
fn model_validation() {
    let f = fake();
    let a = ec2(
        &f,
        "Action=CreateSubnet&Version=2016-11-15&CidrBlock=10.0.0.0%2F24",
    );
    assert_eq!(ec2_error(&a), "MissingParameter");
    assert!(a.body.contains("VpcId"));
    let a = ec2(
        &f,
        "Action=DescribeVpcAttribute&Version=2016-11-15&VpcId=vpc-12345678&Attribute=colour",
    );
    assert_eq!(ec2_error(&a), "InvalidParameterValue");
    assert!(
        a.body.contains("enableDnsSupport"),
        "valid values are listed: {}",
        a.body
    );
    let a = ec2(&f, "Action=DescribeVpcs&Version=2016-11-15&MaxResults=many");
    assert_eq!(ec2_error(&a), "InvalidParameterValue");
    let a = ec2(&f, "Action=DescribeVpcs&Version=2016-11-15&DryRun=perhaps");
    assert_eq!(ec2_error(&a), "InvalidParameterValue");
    let a = ec2(&f, "Action=DescribeVpcs&Version=2016-11-15&MaxResults=2000");
    assert_eq!(ec2_error(&a), "InvalidParameterValue");
    let a = ec2(&f, "Action=DescribeVpcs&Version=2016-11-15&Colour=red");
    assert_eq!(ec2_error(&a), "UnknownParameter");
    assert!(a.body.contains("Colour"));
    let a = ec2(
        &f,
        "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16&VpcEncryptionControl.Mode=enforce",
    );
    assert_eq!((a.status, ec2_error(&a).as_str()), (501, "NotImplemented"));
    // None of these created anything.
    let a = ec2(&f, "Action=DescribeVpcs&Version=2016-11-15");
    assert!(xml::parse(&a.body).child("vpcSet").children.is_empty());
}

#[test]
fn ec2_success_envelope() {
    let f = fake();
    let a = ec2(
        &f,
        "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16",
    );
    assert_eq!(a.status, 200);
    assert!(
        a.body
            .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
    );
    let doc = xml::parse(&a.body);
    assert_eq!(doc.name, "CreateVpcResponse");
    assert_eq!(doc.child("requestId").text, a.request_id);
    let vpc = doc.child("vpc");
    assert_eq!(vpc.child("state").text, "pending");
    let id = vpc.child("vpcId").text.clone();
    let a = ec2(
        &f,
        &format!("Action=DeleteVpc&Version=2016-11-15&VpcId={id}"),
    );
    let doc = xml::parse(&a.body);
    assert_eq!(doc.name, "DeleteVpcResponse");
    assert_eq!(doc.child("return").text, "true");
}

#[test]
fn elb_envelopes() {
    let f = fake();
    let a = elb(&f, "Action=DescribeLoadBalancers&Version=2012-06-01");
    let doc = xml::parse(&a.body);
    assert_eq!(doc.name, "DescribeLoadBalancersResponse");
    assert_eq!(
        doc.children[0].name, "DescribeLoadBalancersResult",
        "the Result comes first"
    );
    assert_eq!(
        doc.child("ResponseMetadata").child("RequestId").text,
        a.request_id
    );

    let a = elb(
        &f,
        "Action=DescribeLoadBalancers&Version=2012-06-01&LoadBalancerNames.member.1=nope",
    );
    assert_eq!(a.status, 400);
    let doc = xml::parse(&a.body);
    assert_eq!(doc.name, "ErrorResponse");
    let e = doc.child("Error");
    assert_eq!(e.child("Type").text, "Sender");
    assert_eq!(e.child("Code").text, "LoadBalancerNotFound");
    assert!(e.child("Message").text.contains("nope"));
    assert_eq!(doc.child("RequestId").text, a.request_id);

    // InvalidConfigurationRequest is HTTP 409 in the model: two subnets in one zone.
    let mk = |body: &str| xml::parse(&ec2(&f, body).body);
    let vpc = mk("Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16")
        .child("vpc")
        .child("vpcId")
        .text
        .clone();
    let s1 = mk(&format!("Action=CreateSubnet&Version=2016-11-15&VpcId={vpc}&CidrBlock=10.0.1.0%2F24&AvailabilityZone=us-east-1a"))
        .child("subnet").child("subnetId").text.clone();
    let s2 = mk(&format!("Action=CreateSubnet&Version=2016-11-15&VpcId={vpc}&CidrBlock=10.0.2.0%2F24&AvailabilityZone=us-east-1a"))
        .child("subnet").child("subnetId").text.clone();
    let a = elb(
        &f,
        &format!(
            "Action=CreateLoadBalancer&Version=2012-06-01&LoadBalancerName=lb&Scheme=internal\
             &Listeners.member.1.Protocol=TCP&Listeners.member.1.LoadBalancerPort=6443\
             &Listeners.member.1.InstancePort=6443&Subnets.member.1={s1}&Subnets.member.2={s2}"
        ),
    );
    assert_eq!(a.status, 409, "{}", a.body);
    assert_eq!(
        xml::parse(&a.body).child("Error").child("Code").text,
        "InvalidConfigurationRequest"
    );
}

#[test]
fn error_statuses() {
    use fakeaws::protocol::error::ApiError;
    assert_eq!(
        ApiError::new("RequestLimitExceeded", "slow down").status,
        503
    );
    assert_eq!(ApiError::new("InternalError", "oops").status, 500);
    assert_eq!(ApiError::new("Unavailable", "later").status, 503);
    assert_eq!(ApiError::dry_run().status, 412);
    assert_eq!(ApiError::new("InvalidVpcID.NotFound", "x").status, 400);
}

#[test]
fn xml_special_characters_are_escaped() {
    let f = fake();
    let a = ec2(
        &f,
        "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16\
        &TagSpecification.1.ResourceType=vpc&TagSpecification.1.Tag.1.Key=Name\
        &TagSpecification.1.Tag.1.Value=%3Ca%20%26%20b%3E%22",
    );
    let doc = xml::parse(&a.body);
    let tag = &doc.child("vpc").child("tagSet").all("item")[0].clone();
    assert_eq!(tag.child("value").text, "<a & b>\"");
    let a = ec2(&f, "Action=DescribeVpcs&Version=2016-11-15&VpcId.1=%3Cx%3E");
    assert_eq!(ec2_error(&a), "InvalidVpcID.Malformed");
    xml::parse(&a.body);
}

/// Whether every character of `s` is one XML 1.0 allows.
fn xml_clean(s: &str) -> bool {
    s.chars().all(|c| {
        matches!(c,
            '\t' | '\n' | '\r'
            | '\u{20}'..='\u{D7FF}'
            | '\u{E000}'..='\u{FFFD}'
            | '\u{10000}'..='\u{10FFFF}')
    })
}

#[test]
fn characters_xml_forbids_are_refused_and_never_answered() {
    let f = fake();
    let vpcs = |f: &fakeaws::Fake| {
        let a = ec2(f, "Action=DescribeVpcs&Version=2016-11-15");
        assert!(xml_clean(&a.body));
        xml::parse(&a.body).child("vpcSet").all("item").len()
    };
    let before = vpcs(&f);
    // A tag value with U+0001, a key with NUL, a value with U+FFFE: each refused, nothing made.
    for tag in [
        "Key=team&TagSpecification.1.Tag.1.Value=a%01b",
        "Key=te%00am&TagSpecification.1.Tag.1.Value=x",
        "Key=team&TagSpecification.1.Tag.1.Value=%EF%BF%BE",
    ] {
        let a = ec2(
            &f,
            &format!(
                "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.9.0.0/16&TagSpecification.1.ResourceType=vpc&TagSpecification.1.Tag.1.{tag}"
            ),
        );
        assert!(xml_clean(&a.body), "{:?}", a.body);
        assert_eq!(ec2_error(&a), "InvalidParameterValue", "{}", a.body);
        assert!(a.body.contains("U+"), "{}", a.body);
    }
    assert_eq!(vpcs(&f), before);
    // ELB says ValidationError, in its own envelope.
    let a = elb(
        &f,
        "Action=DescribeLoadBalancers&Version=2012-06-01&LoadBalancerNames.member.1=a%02b",
    );
    assert!(xml_clean(&a.body), "{:?}", a.body);
    assert_eq!(a.status, 400);
    let doc = xml::parse(&a.body);
    assert_eq!(doc.child("Error").child("Code").text, "ValidationError");
}

#[test]
fn the_call_log_keeps_a_bounded_entry_whatever_the_request() {
    let f = fake();
    let long = "A".repeat(1 << 20);
    let a = ec2(&f, &format!("Action={long}&Version=2016-11-15"));
    assert_eq!(ec2_error(&a), "InvalidAction");
    let a = f.handle(
        Some(&auth(&format!("us-east-{}", "9".repeat(1 << 16)), "ec2")),
        b"",
        b"Action=DescribeVpcs&Version=2016-11-15",
    );
    assert_ne!(a.status, 200);
    let calls = f.calls();
    assert_eq!(calls.len(), 2);
    for c in &calls {
        assert!(c.action.len() <= 64, "{}", c.action.len());
        assert!(c.region.len() <= 32, "{}", c.region.len());
    }
    // A real operation's name is kept whole.
    ec2(
        &f,
        "Action=DescribeInstanceCreditSpecifications&Version=2016-11-15",
    );
    assert_eq!(
        f.calls().last().map(|c| &*c.action),
        Some("DescribeInstanceCreditSpecifications")
    );
}

#[test]
fn only_real_regions_exist_and_those_the_fake_was_told_of() {
    let describe = |f: &fakeaws::Fake, region: &str| {
        f.handle(
            Some(&auth(region, "ec2")),
            b"",
            b"Action=DescribeVpcs&Version=2016-11-15",
        )
    };
    let f = fake();
    for made_up in ["zz-made-up-1", "us-east-9", "x-y-1"] {
        let a = describe(&f, made_up);
        assert_eq!(ec2_error(&a), "InvalidRegion", "{made_up}");
    }
    for real in ["us-east-1", "ap-southeast-7", "us-gov-west-1", "cn-north-1"] {
        assert_eq!(describe(&f, real).status, 200, "{real}");
    }
    let told = fakeaws::Fake::new(fakeaws::Config {
        extra_regions: vec!["zz-made-up-1".into()],
        ..fakeaws::Config::default()
    });
    let a = describe(&told, "zz-made-up-1");
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(xml::parse(&a.body).child("vpcSet").all("item").len(), 1);
}

/// Every filter name the API reference documents for a served Describe operation is taken:
/// answered from the record, or matching nothing where the fake's records never have the
/// property, but never refused as an unknown filter.
#[test]
fn every_documented_filter_name_is_taken() {
    let f = fake();
    let mut checked = 0;
    for (op, names) in gen_ec2::DOCUMENTED_FILTERS {
        for name in *names {
            let body =
                format!("Action={op}&Version=2016-11-15&Filter.1.Name={name}&Filter.1.Value.1=x");
            let a = ec2(&f, &body);
            if a.status != 200 {
                let doc = xml::parse(&a.body);
                let message = &doc.child("Errors").child("Error").child("Message").text;
                assert!(
                    !message.contains("filter"),
                    "{op} refuses the documented filter {name}: {} {message}",
                    ec2_error(&a)
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked}");
}
