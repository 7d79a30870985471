//! AWS-managed prefix lists: DescribePrefixLists, DescribeManagedPrefixLists and
//! GetManagedPrefixListEntries (the last two also answer the account's own lists,
//! `crate::ec2::managed_prefix_list`).
//!
//! A region holds one AWS-managed prefix list per service that takes gateway endpoints (S3
//! and DynamoDB): the list a gateway endpoint's routes lead to
//! (`vpc_endpoint::Service::prefix_list_id`), named as the service is
//! (`com.amazonaws.REGION.s3`), owned by `AWS`, IPv4, `create-complete`. AWS's own lists hold
//! the service's public ranges, which differ by region and change over time; the fake's hold
//! four /24 blocks of the benchmarking range 198.18.0.0/15 (RFC 2544), the same in every run,
//! different for each service and region, and apart from the addresses the fake hands out
//! (its public addresses come from the documentation ranges).
//!
//! The two not-found codes differ as AWS spells them: `InvalidPrefixListId.NotFound` from
//! DescribePrefixLists, `InvalidPrefixListID.NotFound` from the managed-list calls.

use std::net::Ipv4Addr;

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::managed_prefix_list::{self, CustomerList};
use crate::ec2::page;
use crate::ec2::vpc_endpoint::Service;
use crate::generated::ec2::{
    DescribeManagedPrefixListsRequest, DescribeManagedPrefixListsResult,
    DescribePrefixListsRequest, DescribePrefixListsResult, Filter,
    GetManagedPrefixListEntriesRequest, GetManagedPrefixListEntriesResult, ManagedPrefixList,
    PrefixList, PrefixListEntry, PrefixListState,
};
use crate::ids;
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The owner AWS shows for the lists it manages.
const AWS_OWNER: &str = "AWS";

/// How many blocks an AWS-managed list of the fake holds.
const BLOCKS: u8 = 4;

/// One AWS-managed prefix list of a region.
struct Listed {
    id: String,
    name: String,
    region: String,
    cidrs: Vec<String>,
}

impl Listed {
    fn of(region: &str, service: Service, second_octet: u8) -> Listed {
        let id = service.prefix_list_id(region);
        // Four /24 blocks a quarter of the /16 apart, the first chosen by the list's id.
        let first = id
            .bytes()
            .fold(0u8, |acc, b| acc.wrapping_mul(31).wrapping_add(b))
            % (u8::MAX / BLOCKS + 1);
        // In the order of their addresses.
        let cidrs: Vec<String> = (0..BLOCKS)
            .map(|j| {
                let third = first.saturating_add(j.saturating_mul(u8::MAX / BLOCKS + 1));
                format!("{}/24", Ipv4Addr::new(198, second_octet, third, 0))
            })
            .collect();
        Listed {
            id,
            name: service.name(region),
            region: region.to_string(),
            cidrs,
        }
    }

    fn managed(&self) -> ManagedPrefixList {
        ManagedPrefixList {
            prefix_list_id: Some(self.id.clone()),
            address_family: Some("IPv4".to_string()),
            state: Some(PrefixListState::CreateComplete),
            prefix_list_arn: Some(format!(
                "arn:{}:ec2:{}:aws:prefix-list/{}",
                crate::ec2::account::arn_partition(&self.region),
                self.region,
                self.id
            )),
            prefix_list_name: Some(self.name.clone()),
            tags: Some(Vec::new()),
            owner_id: Some(AWS_OWNER.to_string()),
            ..Default::default()
        }
    }

    fn legacy(&self) -> PrefixList {
        PrefixList {
            cidrs: Some(self.cidrs.clone()),
            prefix_list_id: Some(self.id.clone()),
            prefix_list_name: Some(self.name.clone()),
        }
    }
}

/// The region's AWS-managed lists, in the order of their ids.
fn lists(region: &Region) -> Vec<Listed> {
    let mut lists: Vec<Listed> = Service::gateways()
        .zip(18u8..)
        .map(|(service, octet)| Listed::of(&region.name, service, octet))
        .collect();
    lists.sort_by(|a, b| a.id.cmp(&b.id));
    lists
}

/// A row of DescribePrefixLists, whose filters name no owner.
struct Legacy<'a>(&'a Listed);

impl Filterable for Legacy<'_> {
    const NAMES: &'static [&'static str] = &["prefix-list-id", "prefix-list-name"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "prefix-list-id" => one(self.0.id.clone()),
            "prefix-list-name" => one(self.0.name.clone()),
            _ => Vec::new(),
        }
    }
}

/// A row of DescribeManagedPrefixLists: one of AWS's lists, or one of the account's own.
enum Managed<'a> {
    Aws(&'a Listed),
    Own(&'a Region, &'a CustomerList),
}

impl Managed<'_> {
    fn id(&self) -> &str {
        match self {
            Managed::Aws(l) => &l.id,
            Managed::Own(_, l) => &l.id,
        }
    }

    fn render(&self) -> ManagedPrefixList {
        match self {
            Managed::Aws(l) => l.managed(),
            Managed::Own(region, l) => managed_prefix_list::render(region, l, true),
        }
    }
}

impl Filterable for Managed<'_> {
    const NAMES: &'static [&'static str] = &["owner-id", "prefix-list-id", "prefix-list-name"];

    fn values(&self, name: &str) -> Vec<String> {
        match (self, name) {
            (Managed::Aws(_), "owner-id") => one(AWS_OWNER),
            (Managed::Aws(l), _) => Legacy(l).values(name),
            (Managed::Own(region, _), "owner-id") => one(region.account_id.clone()),
            (Managed::Own(_, l), "prefix-list-id") => one(l.id.clone()),
            (Managed::Own(_, l), "prefix-list-name") => one(l.name.clone()),
            _ => Vec::new(),
        }
    }
}

/// The not-found code of `code_stem` (`InvalidPrefixListId` or `InvalidPrefixListID`) for
/// `id`, or the malformed one when `id` is not shaped as a prefix list's id.
fn missing(code_stem: &str, id: &str) -> ApiError {
    if ids::is_well_formed(id, "pl") {
        ApiError::new(
            format!("{code_stem}.NotFound"),
            format!("The prefix list ID '{id}' does not exist"),
        )
    } else {
        ApiError::new(
            "InvalidPrefixListId.Malformed",
            format!("Invalid id: \"{id}\" (expecting \"pl-...\")"),
        )
    }
}

/// Whether `id` is one of the region's AWS-managed lists.
pub(crate) fn is_aws_managed(region: &Region, id: &str) -> bool {
    lists(region).iter().any(|l| l.id == id)
}

/// `id`, a prefix list of the region that a security group rule names, checked to exist:
/// AWS's, or the account's own while not being deleted (`InvalidPrefixListID.NotFound`, or
/// `InvalidPrefixListId.Malformed`).
pub(crate) fn check_exists(region: &Region, id: &str) -> Result<(), ApiError> {
    let own = region
        .prefix_lists
        .get(id)
        .is_some_and(CustomerList::is_usable);
    if own || is_aws_managed(region, id) {
        Ok(())
    } else {
        Err(missing("InvalidPrefixListID", id))
    }
}

/// The lists `ids` names (all of them when it is empty), each of which must exist.
fn chosen<'a>(
    lists: &'a [Listed],
    ids: &[String],
    code_stem: &str,
) -> Result<Vec<&'a Listed>, ApiError> {
    if let Some(gone) = ids.iter().find(|id| !lists.iter().any(|l| &l.id == *id)) {
        return Err(missing(code_stem, gone));
    }
    Ok(lists
        .iter()
        .filter(|l| ids.is_empty() || ids.contains(&l.id))
        .collect())
}

/// The lists a describe call selects, by `ids` (each must exist, else `code_stem`'s
/// not-found code), then by `filters` (those rows `R` document, made by `row`), and its page.
fn select<'a, R: Filterable>(
    lists: &'a [Listed],
    row: fn(&'a Listed) -> R,
    code_stem: &str,
    (ids, filters): (Option<Vec<String>>, Option<Vec<Filter>>),
    (max_results, next_token): (Option<i32>, Option<&str>),
) -> Result<(Vec<&'a Listed>, Option<String>), ApiError> {
    let filters = Filters::parse::<R>(filters)?;
    let rows: Vec<&Listed> = chosen(lists, &ids.unwrap_or_default(), code_stem)?
        .into_iter()
        .filter(|l| filters.matches(&row(l), None))
        .collect();
    page::page(rows, |l| l.id.as_str(), max_results, next_token)
}

/// `DescribePrefixLists`: the region's AWS service lists with their ranges, by id or filters,
/// paginated.
pub fn describe_prefix_lists(
    region: &mut Region,
    input: DescribePrefixListsRequest,
) -> Result<DescribePrefixListsResult, ApiError> {
    let lists = lists(region);
    let (rows, next_token) = select(
        &lists,
        Legacy,
        "InvalidPrefixListId",
        (input.prefix_list_ids, input.filters),
        (input.max_results, input.next_token.as_deref()),
    )?;
    Ok(DescribePrefixListsResult {
        next_token,
        prefix_lists: Some(rows.iter().map(|l| l.legacy()).collect()),
    })
}

/// `DescribeManagedPrefixLists`: the region's AWS-managed lists and the account's own, by id
/// (each must exist) or filters (tags too, for the account's own), in id order, paginated.
pub fn describe_managed_prefix_lists(
    region: &mut Region,
    input: DescribeManagedPrefixListsRequest,
) -> Result<DescribeManagedPrefixListsResult, ApiError> {
    let region = &*region;
    let aws = lists(region);
    let filters = Filters::parse::<Managed<'_>>(input.filters)?;
    let mut rows: Vec<Managed<'_>> = aws
        .iter()
        .map(Managed::Aws)
        .chain(
            region
                .prefix_lists
                .values()
                .map(|l| Managed::Own(region, l)),
        )
        .collect();
    rows.sort_by(|a, b| a.id().cmp(b.id()));
    let ids = input.prefix_list_ids.unwrap_or_default();
    if let Some(gone) = ids
        .iter()
        .find(|id| !rows.iter().any(|r| r.id() == id.as_str()))
    {
        return Err(missing("InvalidPrefixListID", gone));
    }
    let rows: Vec<Managed<'_>> = rows
        .into_iter()
        .filter(|r| ids.is_empty() || ids.iter().any(|id| id == r.id()))
        .filter(|r| filters.matches(r, region.tags.get(r.id())))
        .collect();
    let (rows, next_token) = page::page(
        rows,
        Managed::id,
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeManagedPrefixListsResult {
        next_token,
        prefix_lists: Some(rows.iter().map(Managed::render).collect()),
    })
}

/// `GetManagedPrefixListEntries`: a list's ranges (AWS-managed lists carry no descriptions),
/// paginated. An AWS-managed list shows no version, so no `TargetVersion` names one of its
/// versions (`InvalidParameterValue`, the fake's words); one of the account's own answers
/// the entries of the version asked for, else its current ones.
pub fn get_managed_prefix_list_entries(
    region: &mut Region,
    input: GetManagedPrefixListEntriesRequest,
) -> Result<GetManagedPrefixListEntriesResult, ApiError> {
    let id = input.prefix_list_id;
    let all: Vec<PrefixListEntry> = if let Some(own) = region.prefix_lists.get(&id) {
        managed_prefix_list::wire_entries(managed_prefix_list::entries_at(
            own,
            input.target_version,
        )?)
    } else {
        let lists = lists(region);
        let list = chosen(&lists, std::slice::from_ref(&id), "InvalidPrefixListID")?
            .into_iter()
            .next()
            .ok_or_else(|| missing("InvalidPrefixListID", &id))?;
        if let Some(version) = input.target_version {
            return Err(ApiError::invalid_parameter(
                "TargetVersion",
                &version.to_string(),
                &format!(
                    "The prefix list {id} is managed by AWS and has no versions to choose from."
                ),
            ));
        }
        list.cidrs
            .iter()
            .map(|c| PrefixListEntry {
                cidr: Some(c.clone()),
                description: None,
            })
            .collect()
    };
    // Paged by a key that sorts as the addresses do: the entry's place in the list.
    let keyed: Vec<(String, PrefixListEntry)> = all
        .into_iter()
        .enumerate()
        .map(|(i, e)| (format!("{i:04}"), e))
        .collect();
    let (rows, next_token) = page::page(
        keyed,
        |(key, _)| key.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetManagedPrefixListEntriesResult {
        entries: Some(rows.into_iter().map(|(_, e)| e).collect()),
        next_token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gateway_service_has_one_list_of_distinct_benchmarking_blocks_per_region() {
        let mut seen = std::collections::BTreeSet::new();
        for region in ["us-east-1", "eu-west-1", "ap-southeast-2"] {
            let s3 = Service::by_short("s3").map(|s| Listed::of(region, s, 19));
            let ddb = Service::by_short("dynamodb").map(|s| Listed::of(region, s, 18));
            for list in [s3, ddb].into_iter().flatten() {
                assert_eq!(list.cidrs.len(), usize::from(BLOCKS));
                for cidr in &list.cidrs {
                    let net: ipnet::Ipv4Net = cidr.parse().unwrap_or_default();
                    assert_eq!(net.to_string(), *cidr, "a network address: {cidr}");
                    assert!(
                        "198.18.0.0/15"
                            .parse::<ipnet::Ipv4Net>()
                            .is_ok_and(|b| b.contains(&net)),
                        "{cidr}"
                    );
                    assert!(seen.insert((region, cidr.clone())), "{region} {cidr} twice");
                }
            }
        }
    }
}
