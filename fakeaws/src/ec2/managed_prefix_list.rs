//! Customer-managed prefix lists: CreateManagedPrefixList, ModifyManagedPrefixList,
//! RestoreManagedPrefixListVersion, DeleteManagedPrefixList and
//! GetManagedPrefixListAssociations; DescribeManagedPrefixLists and
//! GetManagedPrefixListEntries list them beside AWS's own (`crate::ec2::prefix_list`), and a
//! security group rule may name one as its peer.
//!
//! As the VPC user guide and the API reference describe them:
//! - a list holds one address family (`IPv4` or `IPv6`), up to `MaxEntries` entries (1 to
//!   1000), each a CIDR block of that family with an optional description (255 characters);
//!   its name (up to 255 characters) cannot begin with `com.amazonaws.`, `com.amazon.` or
//!   `com.aws.` (AWS's names for its own lists: `InvalidParameterValue`, in AWS's words);
//! - it is made at version 1; every change of its entries (ModifyManagedPrefixList's
//!   `RemoveEntries`, applied before its `AddEntries`, so that one call can replace an
//!   entry's description; RestoreManagedPrefixListVersion) makes the next version, and
//!   GetManagedPrefixListEntries' `TargetVersion` reads any version kept; a new name or size
//!   makes none. A `CurrentVersion` that is not the list's is `PrefixListVersionMismatch`
//!   (`The prefix list has the incorrect version number.`, AWS's words); entries and size
//!   cannot change in one call (`InvalidParameterCombination`, AWS's words);
//! - each call answers the list `create-in-progress`, `modify-in-progress`,
//!   `restore-in-progress` or `delete-in-progress`, the change done at the clock's next step
//!   (`create-complete`, ...: until then the list is as it was, and a modification's answer
//!   shows the version it started from, as the CLI's documented outputs do); meanwhile
//!   another change is `IncorrectState` (`... in the current state (modify-in-progress)`, the
//!   words clients match);
//! - a security group rule that names a list counts as its `MaxEntries` rules against the
//!   group's quota of rules (`RulesPerSecurityGroupLimitExceeded` when it would not fit, as
//!   the user guide says); a new size that a group naming the list cannot hold makes the
//!   modification fail (`modify-failed`, the first ten such groups in its `StateMessage`, the
//!   size unchanged), as the API reference says;
//! - a list still named by a rule is not deleted: it goes `delete-failed`, naming the groups
//!   in its `StateMessage` (AWS: "You must first remove all references"); once deleted it is
//!   gone with its tags.
//!
//! Left out: sharing (RAM), routes to a customer list, the account's quota of lists per
//! Region and of versions per list, IPAM resolvers.

use crate::ec2::error::Code;
use crate::ec2::{Kind, fingerprint, page, route_table, tags};
use crate::generated::ec2::{
    AddPrefixListEntry, CreateManagedPrefixListRequest, CreateManagedPrefixListResult,
    DeleteManagedPrefixListRequest, DeleteManagedPrefixListResult,
    GetManagedPrefixListAssociationsRequest, GetManagedPrefixListAssociationsResult,
    ManagedPrefixList, ModifyManagedPrefixListRequest, ModifyManagedPrefixListResult,
    PrefixListAssociation, PrefixListEntry, PrefixListState as State, ResourceType,
    RestoreManagedPrefixListVersionRequest, RestoreManagedPrefixListVersionResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// Customer-managed prefix lists by id.
    PrefixLists of CustomerList
}

/// The most entries a list may hold (the API reference's quota of entries per list).
const MAX_ENTRIES: i32 = 1000;

/// The most characters of a name, and of an entry's description.
const MAX_TEXT: usize = 255;

/// The name prefixes AWS keeps for its own lists.
const RESERVED: [&str; 3] = ["com.amazonaws.", "com.amazon.", "com.aws."];

/// How many resources a failure's state message names.
const NAMED_IN_MESSAGE: usize = 10;

/// One entry of a list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The block, as written canonically.
    pub cidr: String,
    /// Its description.
    pub description: Option<String>,
}

/// What the call in progress makes of a list at the clock's next step: until then the list
/// is as it was, its answers and entries the old ones (as the CLI's documented outputs show:
/// a modification answered `modify-in-progress` still shows the version it started from).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Step {
    /// `create-complete`.
    Create,
    /// The name, entries (a new version) and size asked for, then `modify-complete`; or,
    /// when groups naming the list cannot hold the new size, none of it: `modify-failed`,
    /// naming them.
    Modify {
        name: Option<String>,
        entries: Option<Vec<Entry>>,
        size: Option<i32>,
        too_small: Vec<String>,
    },
    /// An earlier version's entries as the next version, then `restore-complete`.
    Restore(Vec<Entry>),
    /// A deletion: gone, unless a rule still names the list (`delete-failed`).
    Delete,
}

/// One customer-managed prefix list.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CustomerList {
    /// `pl-...`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `IPv4` or `IPv6`.
    pub family: String,
    /// How many entries it may hold.
    pub max_entries: i32,
    /// Its state.
    pub state: State,
    /// Why the last change failed.
    pub state_message: Option<String>,
    /// The entries of each version, oldest first: version `n` is `versions[n - 1]`.
    pub versions: Vec<Vec<Entry>>,
    /// What the call in progress does at the clock's next step.
    step: Option<Step>,
}

impl CustomerList {
    /// Its current version.
    pub fn version(&self) -> i64 {
        i64::try_from(self.versions.len()).unwrap_or(i64::MAX)
    }

    /// Its current entries.
    pub fn entries(&self) -> &[Entry] {
        self.versions.last().map_or(&[], Vec::as_slice)
    }

    /// Whether its entries are IPv6 blocks.
    pub fn is_ipv6(&self) -> bool {
        self.family == "IPv6"
    }

    /// Whether it is still there for rules to name (not yet deleted).
    pub fn is_usable(&self) -> bool {
        self.step != Some(Step::Delete)
    }
}

/// The list as DescribeManagedPrefixLists and the calls that change it answer it. `Tags` is
/// listed even when empty in the answers of CreateManagedPrefixList and
/// DescribeManagedPrefixLists, left out of the others' (`listed`), as the CLI's documented
/// outputs show them.
pub(crate) fn render(region: &Region, l: &CustomerList, listed: bool) -> ManagedPrefixList {
    ManagedPrefixList {
        prefix_list_id: Some(l.id.clone()),
        address_family: Some(l.family.clone()),
        state: Some(l.state),
        state_message: l.state_message.clone(),
        prefix_list_arn: Some(format!(
            "arn:{}:ec2:{}:{}:prefix-list/{}",
            crate::ec2::account::arn_partition(&region.name),
            region.name,
            region.account_id,
            l.id
        )),
        prefix_list_name: Some(l.name.clone()),
        max_entries: Some(l.max_entries),
        version: Some(l.version()),
        tags: if listed {
            region.tags.listed(&l.id)
        } else {
            region.tags.tag_set(&l.id)
        },
        owner_id: Some(region.account_id.clone()),
        ..Default::default()
    }
}

/// The entries of version `version` (the current one when `None`): `InvalidParameterValue`
/// for a version the list never had.
pub(crate) fn entries_at(l: &CustomerList, version: Option<i64>) -> Result<&[Entry], ApiError> {
    let Some(v) = version else {
        return Ok(l.entries());
    };
    usize::try_from(v)
        .ok()
        .and_then(|v| v.checked_sub(1))
        .and_then(|i| l.versions.get(i))
        .map(Vec::as_slice)
        .ok_or_else(|| {
            ApiError::invalid_parameter(
                "TargetVersion",
                &v.to_string(),
                &format!(
                    "The prefix list {} has versions 1 to {}.",
                    l.id,
                    l.version()
                ),
            )
        })
}

/// The entry `a` of a list of `family`, checked: a block of that family written as its
/// network address, a description of at most 255 characters.
fn entry(family: &str, a: AddPrefixListEntry) -> Result<Entry, ApiError> {
    let cidr = canonical(family, &a.cidr)?;
    if let Some(d) = &a.description
        && d.chars().count() > MAX_TEXT
    {
        return Err(ApiError::invalid_parameter(
            "Description",
            d,
            "A prefix list entry's description is at most 255 characters.",
        ));
    }
    Ok(Entry {
        cidr,
        description: a.description,
    })
}

/// `cidr` as a block of `family` (`IPv4` or `IPv6`), written canonically; a block of the
/// other family, with host bits, or not a block at all is `InvalidParameterValue`.
fn canonical(family: &str, cidr: &str) -> Result<String, ApiError> {
    let bad = |why: &str| {
        ApiError::invalid_parameter("Cidr", cidr, &format!("{why} The prefix list is {family}."))
    };
    let net: ipnet::IpNet = cidr.parse().map_err(|_| bad("It is not a CIDR block."))?;
    let fits = matches!(
        (&net, family),
        (ipnet::IpNet::V4(_), "IPv4") | (ipnet::IpNet::V6(_), "IPv6")
    );
    if !fits {
        return Err(bad("It is not of the prefix list's address family."));
    }
    if net.trunc() != net || net.to_string() != cidr {
        return Err(bad("It is not written as a network address."));
    }
    Ok(net.to_string())
}

/// `entries` in the order of their addresses.
fn sorted(mut entries: Vec<Entry>) -> Vec<Entry> {
    entries.sort_by_key(|e| e.cidr.parse::<ipnet::IpNet>().ok());
    entries
}

/// The size `n` of a list, checked.
fn check_size(n: i32) -> Result<(), ApiError> {
    if (1..=MAX_ENTRIES).contains(&n) {
        Ok(())
    } else {
        Err(ApiError::invalid_parameter(
            "MaxEntries",
            &n.to_string(),
            "A prefix list holds 1 to 1000 entries.",
        ))
    }
}

/// The name `n` of a list, checked.
fn check_name(n: &str) -> Result<(), ApiError> {
    if n.is_empty() || n.chars().count() > MAX_TEXT {
        return Err(ApiError::invalid_parameter(
            "PrefixListName",
            n,
            "A prefix list's name is 1 to 255 characters.",
        ));
    }
    if RESERVED.iter().any(|r| n.starts_with(r)) {
        return Err(ApiError::invalid_value(
            "The prefix list name cannot begin with (com.amazonaws., com.amazon., com.aws.).",
        ));
    }
    Ok(())
}

/// The groups whose rules name list `id`, in id order.
fn referencing_groups(region: &Region, id: &str) -> Vec<String> {
    region
        .security_groups
        .values()
        .filter(|g| g.rules().any(|r| r.peer.prefix_list() == Some(id)))
        .map(|g| g.id.clone())
        .collect()
}

/// The security groups whose rules name list `id` and the route tables with a route to it,
/// in id order.
fn references(region: &Region, id: &str) -> Vec<String> {
    let mut out = referencing_groups(region, id);
    out.extend(route_table::referencing_tables(region, id));
    out.sort();
    out
}

/// How many of a group's rules a rule naming `peer_list` (if it names one) counts as: a
/// customer-managed list's `MaxEntries` (or `resized`'s size for that list), else one.
pub(crate) fn weight(
    region: &Region,
    peer_list: Option<&str>,
    resized: Option<(&str, i32)>,
) -> usize {
    let Some(id) = peer_list else {
        return 1;
    };
    let size = match resized {
        Some((r, n)) if r == id => Some(n),
        _ => region.prefix_lists.get(id).map(|l| l.max_entries),
    };
    size.and_then(|n| usize::try_from(n).ok()).unwrap_or(1)
}

/// The groups naming list `id` whose ingress or egress rules would exceed their quota were
/// the list `size` entries long.
fn groups_too_small(region: &Region, id: &str, size: i32) -> Vec<String> {
    referencing_groups(region, id)
        .into_iter()
        .filter(|g| {
            region.security_groups.get(g).is_some_and(|g| {
                [false, true].into_iter().any(|egress| {
                    let count: usize = g
                        .rules()
                        .filter(|r| r.egress == egress)
                        .map(|r| weight(region, r.peer.prefix_list(), Some((id, size))))
                        .sum();
                    count > region.limits.rules_per_group
                })
            })
        })
        .collect()
}

/// `id`, a customer-managed list a call may change now: `IncorrectState` while a change is
/// in progress. An AWS-managed list is `OperationNotPermitted`.
fn for_change<'a>(region: &'a Region, id: &str) -> Result<&'a CustomerList, ApiError> {
    if !region.prefix_lists.contains_key(id) && crate::ec2::prefix_list::is_aws_managed(region, id)
    {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            format!("The prefix list {id} is managed by AWS: it cannot be changed."),
        ));
    }
    let l = Kind::PrefixList.get(&region.prefix_lists, id)?;
    if l.step.is_some() {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "The request cannot be completed with the prefix list {id} in the current \
                 state ({}).",
                l.state.as_str()
            ),
        ));
    }
    Ok(l)
}

/// Fails with `PrefixListVersionMismatch` unless `asked` (when given) is `l`'s version.
fn check_version(l: &CustomerList, asked: Option<i64>) -> Result<(), ApiError> {
    match asked {
        Some(v) if v != l.version() => Err(ApiError::new(
            Code::PrefixListVersionMismatch,
            "The prefix list has the incorrect version number.",
        )),
        _ => Ok(()),
    }
}

/// Puts list `id` in `state` until the clock's next step does `step`, and answers it.
fn begin(region: &mut Region, id: &str, state: State, step: Step) -> Option<ManagedPrefixList> {
    let now = region.clock.now();
    if let Some(l) = region.prefix_lists.0.get_mut(id) {
        l.state = state;
        l.step = Some(step);
        l.state_message = None;
    }
    region.transitions.schedule(now, Subject::PrefixList, id);
    region
        .prefix_lists
        .get(id)
        .map(|l| render(region, l, state == State::CreateInProgress))
}

/// The clock's step for list `id`: the call in progress done.
pub fn advance(region: &mut Region, id: &str) {
    let Some(step) = region.prefix_lists.get(id).and_then(|l| l.step.clone()) else {
        return;
    };
    // Only a deletion asks what still names the list.
    let referenced = if step == Step::Delete {
        references(region, id)
    } else {
        Vec::new()
    };
    let Some(l) = region.prefix_lists.0.get_mut(id) else {
        return;
    };
    l.step = None;
    let named = |ids: &[String]| {
        ids.iter()
            .take(NAMED_IN_MESSAGE)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    match step {
        Step::Create => l.state = State::CreateComplete,
        Step::Modify { too_small, .. } if !too_small.is_empty() => {
            l.state = State::ModifyFailed;
            l.state_message = Some(format!(
                "The following resources cannot hold the new maximum number of entries: {}",
                named(&too_small)
            ));
        }
        Step::Modify {
            name,
            entries,
            size,
            ..
        } => {
            if let Some(n) = name {
                l.name = n;
            }
            if let Some(e) = entries {
                l.versions.push(e);
            }
            if let Some(n) = size {
                l.max_entries = n;
            }
            l.state = State::ModifyComplete;
        }
        Step::Restore(entries) => {
            l.versions.push(entries);
            l.state = State::RestoreComplete;
        }
        Step::Delete if !referenced.is_empty() => {
            l.state = State::DeleteFailed;
            l.state_message = Some(format!(
                "The prefix list is still referenced by: {}",
                named(&referenced)
            ));
        }
        Step::Delete => {
            region.prefix_lists.0.remove(id);
            region.tags.remove_resource(id);
        }
    }
}

/// `CreateManagedPrefixList`.
pub fn create_managed_prefix_list(
    region: &mut Region,
    mut input: CreateManagedPrefixListRequest,
) -> Result<CreateManagedPrefixListResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateManagedPrefixList", token.as_deref(), &print)?
    {
        let l = Kind::PrefixList.get(&region.prefix_lists, &id)?;
        return Ok(CreateManagedPrefixListResult {
            prefix_list: Some(render(region, l, true)),
        });
    }
    check_name(&input.prefix_list_name)?;
    check_size(input.max_entries)?;
    let family = input.address_family;
    if family != "IPv4" && family != "IPv6" {
        return Err(ApiError::invalid_parameter(
            "AddressFamily",
            &family,
            "It must be IPv4 or IPv6.",
        ));
    }
    let mut entries: Vec<Entry> = Vec::new();
    for a in input.entries.unwrap_or_default() {
        let e = entry(&family, a)?;
        if entries.iter().any(|x| x.cidr == e.cidr) {
            return Err(duplicate(&e.cidr));
        }
        entries.push(e);
    }
    check_fits(entries.len(), input.max_entries)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::PrefixList,
    )?;
    let id = region.ids.resource(Kind::PrefixList.prefix());
    let l = CustomerList {
        id: id.clone(),
        name: input.prefix_list_name,
        family,
        max_entries: input.max_entries,
        state: State::CreateInProgress,
        state_message: None,
        versions: vec![sorted(entries)],
        step: None,
    };
    region.tags.insert(&id, tags);
    region.prefix_lists.0.insert(id.clone(), l);
    region
        .ledger
        .record("CreateManagedPrefixList", token.as_deref(), &print, &id);
    Ok(CreateManagedPrefixListResult {
        prefix_list: begin(region, &id, State::CreateInProgress, Step::Create),
    })
}

fn duplicate(cidr: &str) -> ApiError {
    ApiError::invalid_value(format!(
        "The prefix list entry {cidr} is named more than once."
    ))
}

/// Fails unless `count` entries fit a list of `size`.
fn check_fits(count: usize, size: i32) -> Result<(), ApiError> {
    if usize::try_from(size).is_ok_and(|s| count <= s) {
        Ok(())
    } else {
        Err(ApiError::invalid_value(format!(
            "The prefix list would hold {count} entries; its maximum is {size}."
        )))
    }
}

/// `ModifyManagedPrefixList`: a new name, new entries (removals first) or a new size.
pub fn modify_managed_prefix_list(
    region: &mut Region,
    input: ModifyManagedPrefixListRequest,
) -> Result<ModifyManagedPrefixListResult, ApiError> {
    let id = input.prefix_list_id;
    let l = for_change(region, &id)?;
    check_version(l, input.current_version)?;
    let adds = input.add_entries.unwrap_or_default();
    let removes = input.remove_entries.unwrap_or_default();
    let changes_entries = !adds.is_empty() || !removes.is_empty();
    if changes_entries && input.max_entries.is_some() {
        return Err(ApiError::invalid_combination(
            "You cannot modify the entries and the maximum number of entries for the prefix \
             list in the same request.",
        ));
    }
    if let Some(n) = &input.prefix_list_name {
        check_name(n)?;
    }
    // Checked first, applied after: a refused call changes nothing.
    let mut entries = l.entries().to_vec();
    for r in &removes {
        let cidr = canonical(&l.family, &r.cidr)?;
        let Some(at) = entries.iter().position(|e| e.cidr == cidr) else {
            return Err(ApiError::invalid_value(format!(
                "The prefix list entry {cidr} is not in the prefix list {id}."
            )));
        };
        entries.remove(at);
    }
    let removed = entries.len();
    for a in adds {
        let e = entry(&l.family, a)?;
        if entries.iter().any(|x| x.cidr == e.cidr) {
            return Err(if entries.iter().take(removed).any(|x| x.cidr == e.cidr) {
                ApiError::invalid_value(format!(
                    "The prefix list entry {} is already in the prefix list {id}.",
                    e.cidr
                ))
            } else {
                duplicate(&e.cidr)
            });
        }
        entries.push(e);
    }
    check_fits(entries.len(), l.max_entries)?;
    let mut too_small = Vec::new();
    if let Some(n) = input.max_entries {
        check_size(n)?;
        let held = l.entries().len();
        if usize::try_from(n).is_ok_and(|n| n < held) {
            return Err(ApiError::invalid_parameter(
                "MaxEntries",
                &n.to_string(),
                &format!("The prefix list holds {held} entries."),
            ));
        }
        too_small = groups_too_small(region, &id, n);
        too_small.extend(route_table::tables_too_small(region, &id, l.is_ipv6(), n));
    }
    let step = Step::Modify {
        name: input.prefix_list_name,
        entries: changes_entries.then(|| sorted(entries)),
        size: input.max_entries,
        too_small,
    };
    Ok(ModifyManagedPrefixListResult {
        prefix_list: begin(region, &id, State::ModifyInProgress, step),
    })
}

/// `RestoreManagedPrefixListVersion`: an earlier version's entries, as the next version.
pub fn restore_managed_prefix_list_version(
    region: &mut Region,
    input: RestoreManagedPrefixListVersionRequest,
) -> Result<RestoreManagedPrefixListVersionResult, ApiError> {
    let id = input.prefix_list_id;
    let l = for_change(region, &id)?;
    check_version(l, Some(input.current_version))?;
    if input.previous_version >= l.version() {
        return Err(ApiError::invalid_parameter(
            "PreviousVersion",
            &input.previous_version.to_string(),
            &format!(
                "The version to restore must be earlier than the current one, {}.",
                l.version()
            ),
        ));
    }
    let entries = entries_at(l, Some(input.previous_version))
        .map_err(|_| {
            ApiError::invalid_parameter(
                "PreviousVersion",
                &input.previous_version.to_string(),
                &format!("The prefix list {id} has no such version."),
            )
        })?
        .to_vec();
    check_fits(entries.len(), l.max_entries)?;
    Ok(RestoreManagedPrefixListVersionResult {
        prefix_list: begin(
            region,
            &id,
            State::RestoreInProgress,
            Step::Restore(entries),
        ),
    })
}

/// `DeleteManagedPrefixList`: `delete-in-progress`, then gone, unless still referenced.
pub fn delete_managed_prefix_list(
    region: &mut Region,
    input: DeleteManagedPrefixListRequest,
) -> Result<DeleteManagedPrefixListResult, ApiError> {
    let id = input.prefix_list_id;
    for_change(region, &id)?;
    Ok(DeleteManagedPrefixListResult {
        prefix_list: begin(region, &id, State::DeleteInProgress, Step::Delete),
    })
}

/// `GetManagedPrefixListAssociations`: the security groups whose rules name the list and the
/// route tables with a route to it, by id, paginated.
pub fn get_managed_prefix_list_associations(
    region: &mut Region,
    input: GetManagedPrefixListAssociationsRequest,
) -> Result<GetManagedPrefixListAssociationsResult, ApiError> {
    let id = input.prefix_list_id;
    if !crate::ec2::prefix_list::is_aws_managed(region, &id) {
        Kind::PrefixList.get(&region.prefix_lists, &id)?;
    }
    let (rows, next_token) = page::page(
        references(region, &id),
        String::as_str,
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(GetManagedPrefixListAssociationsResult {
        prefix_list_associations: Some(
            rows.into_iter()
                .map(|g| PrefixListAssociation {
                    resource_id: Some(g),
                    resource_owner: Some(region.account_id.clone()),
                })
                .collect(),
        ),
        next_token,
    })
}

/// `entries` as GetManagedPrefixListEntries answers them.
pub(crate) fn wire_entries(entries: &[Entry]) -> Vec<PrefixListEntry> {
    entries
        .iter()
        .map(|e| PrefixListEntry {
            cidr: Some(e.cidr.clone()),
            description: e.description.clone(),
        })
        .collect()
}
