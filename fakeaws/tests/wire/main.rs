//! The wire layer without an SDK: raw form bodies through `Fake::handle`, checked against the
//! protocols' envelopes, the Smithy protocol test cases that apply to the served operations,
//! and a property test that no form body makes the fake panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod envelope;
mod fuzz;
mod smithy;
mod xml;

use fakeaws::server::{Answer, Fake};

/// The `Authorization` header of a request signed for `service` in `region`.
pub fn auth(region: &str, service: &str) -> String {
    format!(
        "AWS4-HMAC-SHA256 Credential=AKID/20261129/{region}/{service}/aws4_request, \
         SignedHeaders=host;x-amz-date, Signature=00"
    )
}

/// A fake without a default VPC.
pub fn fake() -> Fake {
    Fake::new(fakeaws::Config {
        default_vpc: false,
        ..Default::default()
    })
}

/// Sends an EC2 form body (Action and Version included by the caller).
pub fn ec2(fake: &Fake, body: &str) -> Answer {
    fake.handle(Some(&auth("us-east-1", "ec2")), b"", body.as_bytes())
}

/// Sends a classic ELB form body.
pub fn elb(fake: &Fake, body: &str) -> Answer {
    fake.handle(
        Some(&auth("us-east-1", "elasticloadbalancing")),
        b"",
        body.as_bytes(),
    )
}

/// The error code of an EC2 error answer, checking the envelope's shape.
pub fn ec2_error(a: &Answer) -> String {
    assert_ne!(a.status, 200, "expected an error: {}", a.body);
    let doc = xml::parse(&a.body);
    assert_eq!(doc.name, "Response", "{}", a.body);
    assert_eq!(doc.child("RequestID").text, a.request_id);
    let e = doc.child("Errors").child("Error");
    assert!(!e.child("Message").text.is_empty());
    e.child("Code").text.clone()
}
