//! The reverse DNS (PTR) record of Elastic IPs, the `domain-name` attribute:
//! DescribeAddressesAttribute, ModifyAddressAttribute, ResetAddressAttribute.
//!
//! An address's PTR record is AWS's own name for it (`ec2-192-0-2-1.compute-1.amazonaws.com.`)
//! until the account gives it a domain name. A change is answered with the record as it is and
//! the update `PENDING` (the CLI's documented outputs), and applies at the clock's next step
//! (`addressPtr`); a reset goes back to AWS's name the same way. Names are kept with the final
//! `.` AWS shows.
//!
//! DescribeAddressesAttribute lists the addresses with a domain name of the account's or a
//! change pending: the CLI's documentation of it says an address must first have been given a
//! domain name for its attributes to be shown. terraform's `aws_eip` reads it for every
//! address, and takes an address left out as one without a PTR record.
//!
//! AWS first checks that the domain name resolves to the address (a forward `A` record); the
//! fake resolves nothing and takes any well-formed name.

use crate::ec2::elastic_ip::{self, Address};
use crate::ec2::network_interface;
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    AddressAttribute, DescribeAddressesAttributeRequest, DescribeAddressesAttributeResult,
    ModifyAddressAttributeRequest, ModifyAddressAttributeResult, PtrUpdateStatus,
    ResetAddressAttributeRequest, ResetAddressAttributeResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

/// The status of an update not yet applied.
const PENDING: &str = "PENDING";

/// AWS's own PTR record for `a`: its public DNS name.
fn aws_name(region: &Region, a: &Address) -> String {
    format!("{}.", network_interface::public_dns(region, a.public_ip))
}

/// `a` as the three operations answer it.
fn render(region: &Region, a: &Address) -> AddressAttribute {
    AddressAttribute {
        public_ip: Some(a.public_ip.to_string()),
        allocation_id: Some(a.allocation_id.clone()),
        ptr_record: Some(a.ptr.clone().unwrap_or_else(|| aws_name(region, a))),
        ptr_record_update: a.ptr_update.as_ref().map(|value| PtrUpdateStatus {
            value: Some(value.clone().unwrap_or_else(|| aws_name(region, a))),
            status: Some(PENDING.to_string()),
            reason: None,
        }),
    }
}

/// Whether DescribeAddressesAttribute lists `a`.
fn has_attribute(a: &Address) -> bool {
    a.ptr.is_some() || a.ptr_update.is_some()
}

/// `name` as a PTR record: a DNS name of labels of letters, digits and hyphens (not at a
/// label's ends), 1 to 63 characters each, 253 in all, ending in `.`.
fn domain_name(name: &str) -> Result<String, ApiError> {
    let bare = name.strip_suffix('.').unwrap_or(name);
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if bare.is_empty() || bare.len() > 253 || !bare.split('.').all(label_ok) {
        return Err(ApiError::invalid_parameter(
            "DomainName",
            name,
            "It is not a valid domain name.",
        ));
    }
    Ok(format!("{}.", bare.to_ascii_lowercase()))
}

/// Asks for `update` (a name, or `None` for AWS's own) on address `id`, at the clock's next
/// step; the address as answered.
fn change(region: &mut Region, id: &str, update: Option<String>) -> Result<(), ApiError> {
    let now = region.clock.now();
    let address = elastic_ip::get_mut(region, id).ok_or_else(|| not_found(id))?;
    address.ptr_update = Some(update);
    region.transitions.schedule(now, Subject::AddressPtr, id);
    Ok(())
}

fn not_found(id: &str) -> ApiError {
    Kind::ElasticIp.not_found(&[id])
}

/// The end of a change of address `id`'s PTR record (nothing if it was released meanwhile).
pub fn advance(region: &mut Region, id: &str) {
    if let Some(a) = elastic_ip::get_mut(region, id)
        && let Some(update) = a.ptr_update.take()
    {
        a.ptr = update;
    }
}

/// `ModifyAddressAttribute`: a domain name for the address's PTR record.
pub fn modify_address_attribute(
    region: &mut Region,
    input: ModifyAddressAttributeRequest,
) -> Result<ModifyAddressAttributeResult, ApiError> {
    Kind::ElasticIp.get(&region.addresses, &input.allocation_id)?;
    let name = input
        .domain_name
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("DomainName"))?;
    let name = domain_name(name)?;
    change(region, &input.allocation_id, Some(name))?;
    let a = Kind::ElasticIp.get(&region.addresses, &input.allocation_id)?;
    Ok(ModifyAddressAttributeResult {
        address: Some(render(region, a)),
    })
}

/// `ResetAddressAttribute`: the PTR record back to AWS's own name.
pub fn reset_address_attribute(
    region: &mut Region,
    input: ResetAddressAttributeRequest,
) -> Result<ResetAddressAttributeResult, ApiError> {
    let a = Kind::ElasticIp.get(&region.addresses, &input.allocation_id)?;
    if has_attribute(a) {
        change(region, &input.allocation_id, None)?;
    }
    let a = Kind::ElasticIp.get(&region.addresses, &input.allocation_id)?;
    Ok(ResetAddressAttributeResult {
        address: Some(render(region, a)),
    })
}

/// `DescribeAddressesAttribute`: the addresses named (each must exist) or all, those with a
/// domain name or a change pending, by allocation id, in pages.
pub fn describe_addresses_attribute(
    region: &mut Region,
    input: DescribeAddressesAttributeRequest,
) -> Result<DescribeAddressesAttributeResult, ApiError> {
    page::check_max_results(input.max_results, 1, 1000)?;
    let region = &*region;
    let named = input.allocation_ids.unwrap_or_default();
    let listed: Vec<&Address> = Kind::ElasticIp
        .select(&region.addresses, Some(&named))?
        .into_iter()
        .filter(|a| has_attribute(a))
        .collect();
    let (items, next) = page::page(
        listed,
        |a| a.allocation_id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeAddressesAttributeResult {
        addresses: Some(items.into_iter().map(|a| render(region, a)).collect()),
        next_token: next,
    })
}
