//! The reverse DNS (PTR) record of Elastic IPs through the SDK: DescribeAddressesAttribute,
//! ModifyAddressAttribute and ResetAddressAttribute, a change `PENDING` until the clock's next
//! step, and what is refused.

use aws_sdk_ec2::types::{AddressAttribute, AddressAttributeName, DomainType};
use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, empty_fake};

/// The addresses DescribeAddressesAttribute lists for `ids` (all without): allocation id,
/// PTR record, pending update.
async fn listed(
    ec2: &aws_sdk_ec2::Client,
    ids: &[&str],
) -> Vec<(String, String, Option<(String, String)>)> {
    let mut call = ec2
        .describe_addresses_attribute()
        .attribute(AddressAttributeName::DomainName);
    for id in ids {
        call = call.allocation_ids(*id);
    }
    call.send()
        .await
        .unwrap()
        .addresses()
        .iter()
        .map(summary)
        .collect()
}

fn summary(a: &AddressAttribute) -> (String, String, Option<(String, String)>) {
    (
        a.allocation_id().unwrap().to_string(),
        a.ptr_record().unwrap().to_string(),
        a.ptr_record_update().map(|u| {
            (
                u.value().unwrap().to_string(),
                u.status().unwrap().to_string(),
            )
        }),
    )
}

#[tokio::test]
async fn a_domain_name_is_pending_then_the_ptr_record() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let mut ids = Vec::new();
    let mut aws_names = Vec::new();
    for _ in 0..2 {
        let a = ec2
            .allocate_address()
            .domain(DomainType::Vpc)
            .send()
            .await
            .unwrap();
        let ip = a.public_ip().unwrap().replace('.', "-");
        aws_names.push(format!("ec2-{ip}.compute-1.amazonaws.com."));
        ids.push(a.allocation_id().unwrap().to_string());
    }
    let (a, b) = (ids[0].as_str(), ids[1].as_str());
    // No address has a domain name yet: none is listed, named or not.
    assert!(listed(&ec2, &[]).await.is_empty());
    assert!(listed(&ec2, &[a, b]).await.is_empty());

    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::AddressPtr));
    let changed = ec2
        .modify_address_attribute()
        .allocation_id(a)
        .domain_name("Mail.Example.com")
        .send()
        .await
        .unwrap();
    let pending = Some(("mail.example.com.".to_string(), "PENDING".to_string()));
    assert_eq!(
        summary(changed.address().unwrap()),
        (a.to_string(), aws_names[0].clone(), pending.clone())
    );
    assert_eq!(
        listed(&ec2, &[]).await,
        [(a.to_string(), aws_names[0].clone(), pending)]
    );

    // Names that are no domain name change nothing.
    for bad in ["bad_name.example.com", "-a.example.com", "a..b", ""] {
        let r = ec2
            .modify_address_attribute()
            .allocation_id(b)
            .domain_name(bad)
            .send()
            .await;
        assert_eq!(code(r), "InvalidParameterValue", "{bad:?}");
    }
    assert_eq!(listed(&ec2, &[b]).await, []);

    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::AddressPtr));
    assert_eq!(
        listed(&ec2, &[a]).await,
        [(a.to_string(), "mail.example.com.".to_string(), None)]
    );
    ec2.modify_address_attribute()
        .allocation_id(b)
        .domain_name("relay.example.org.")
        .send()
        .await
        .unwrap();
    // Pages of one, in allocation id order.
    let first = ec2
        .describe_addresses_attribute()
        .attribute(AddressAttributeName::DomainName)
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(first.addresses().len(), 1);
    let second = ec2
        .describe_addresses_attribute()
        .attribute(AddressAttributeName::DomainName)
        .max_results(1)
        .next_token(first.next_token().unwrap())
        .send()
        .await
        .unwrap();
    let mut both: Vec<String> = first
        .addresses()
        .iter()
        .chain(second.addresses())
        .map(|x| x.ptr_record().unwrap().to_string())
        .collect();
    both.sort();
    assert_eq!(both, ["mail.example.com.", "relay.example.org."]);
    assert_eq!(second.next_token(), None);

    // A reset goes back to AWS's own name, and the address is no longer listed.
    let reset = ec2
        .reset_address_attribute()
        .allocation_id(a)
        .attribute(AddressAttributeName::DomainName)
        .send()
        .await
        .unwrap();
    let update = reset.address().unwrap().ptr_record_update().unwrap();
    assert_eq!(update.value(), Some(aws_names[0].as_str()));
    assert_eq!(listed(&ec2, &[a]).await, []);
}

#[tokio::test]
async fn unknown_addresses_and_bad_pages_are_refused() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let r = ec2
        .describe_addresses_attribute()
        .allocation_ids("eipalloc-1234567890abcdef0")
        .send()
        .await;
    assert_eq!(code(r), "InvalidAllocationID.NotFound");
    let r = ec2
        .modify_address_attribute()
        .allocation_id("eipalloc-1234567890abcdef0")
        .domain_name("example.com")
        .send()
        .await;
    assert_eq!(code(r), "InvalidAllocationID.NotFound");
    let r = ec2
        .reset_address_attribute()
        .allocation_id("eipalloc-zz")
        .attribute(AddressAttributeName::DomainName)
        .send()
        .await;
    assert_eq!(code(r), "InvalidAllocationID.Malformed");
    let (c, message) = code_and_message(
        ec2.describe_addresses_attribute()
            .max_results(0)
            .send()
            .await,
    );
    assert_eq!(c, "InvalidParameterValue");
    assert!(message.contains("MaxResults"), "{message}");
}
