//! One request through the whole wire layer: the form decoder, the routing by SigV4 scope,
//! the envelope checks and the generated decode (and, when it decodes, the operation) of
//! every served EC2 and ELB operation, on a fresh fake. Whatever comes in: no panic, an HTTP
//! status AWS uses, and a body that parses as XML.
//!
//! The input: its first byte chooses the service and whether the form travels in the query
//! string or the body; the rest is the form.

#![no_main]

use libfuzzer_sys::fuzz_target;

const EC2: &str = "AWS4-HMAC-SHA256 Credential=AKIDFUZZ/20261201/us-east-1/ec2/aws4_request, \
                   SignedHeaders=host, Signature=00";
const ELB: &str = "AWS4-HMAC-SHA256 Credential=AKIDFUZZ/20261201/us-east-1/elasticloadbalancing/\
                   aws4_request, SignedHeaders=host, Signature=00";

fuzz_target!(|data: &[u8]| {
    let Some((&how, form)) = data.split_first() else {
        return;
    };
    let auth = if how & 1 == 0 { EC2 } else { ELB };
    let (query, body) = if how & 2 == 0 {
        (&b""[..], form)
    } else {
        (form, &b""[..])
    };
    let fake = fakeaws::Fake::new(fakeaws::Config::default());
    let answer = fake.handle(Some(auth), query, body);
    assert!(
        (200..600).contains(&answer.status),
        "status {}",
        answer.status
    );
    let mut reader = quick_xml::Reader::from_str(&answer.body);
    let mut depth = 0usize;
    let mut roots = 0usize;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Start(_)) => {
                if depth == 0 {
                    roots += 1;
                }
                depth += 1;
            }
            Ok(quick_xml::events::Event::End(_)) => depth -= 1,
            Ok(quick_xml::events::Event::GeneralRef(r)) => {
                assert!(
                    r.resolve_char_ref().is_ok(),
                    "a bad character reference in {}",
                    answer.body
                );
            }
            Ok(_) => {}
            Err(e) => panic!("the answer does not parse ({e}): {}", answer.body),
        }
    }
    assert_eq!(depth, 0, "unclosed elements: {}", answer.body);
    assert_eq!(roots, 1, "not one root element: {}", answer.body);
});
