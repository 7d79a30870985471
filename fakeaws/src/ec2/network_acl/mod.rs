//! Network ACLs: the default ACL every VPC gets with it (AWS's default rules: rule 100 allows
//! all traffic in and out, the `*` rule, 32767, denies what no other rule allows; 32768 for
//! `::/0` in a VPC with IPv6), listed egress first as AWS lists them, associated
//! with every subnet of the VPC unless one is moved to another ACL, deleted with the VPC; ACLs
//! of one's own (CreateNetworkAcl, DeleteNetworkAcl: only the `*` rules until entries are
//! added); ReplaceNetworkAclAssociation; DescribeNetworkAcls with AWS's filters and
//! pagination. `entry` holds the numbered entries (Create/Replace/DeleteNetworkAclEntry).

mod entry;

use std::collections::BTreeSet;

use ipnet::IpNet;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::vpc::cidr_text;
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    CreateNetworkAclRequest, CreateNetworkAclResult, DeleteNetworkAclRequest,
    DescribeNetworkAclsRequest, DescribeNetworkAclsResult, IcmpTypeCode,
    NetworkAcl as NetworkAclOut, NetworkAclAssociation, NetworkAclEntry, PortRange,
    ReplaceNetworkAclAssociationRequest, ReplaceNetworkAclAssociationResult, ResourceType,
    RuleAction,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

pub use entry::{
    Entry, create_network_acl_entry, delete_network_acl_entry, replace_network_acl_entry,
};

crate::region::table! {
    /// Network ACLs by id.
    NetworkAcls of NetworkAcl
}

/// One network ACL.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NetworkAcl {
    /// `acl-...`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Whether it is its VPC's default ACL.
    pub is_default: bool,
    /// Its numbered entries (rules 1 to 32766, the `*` rules are implied); `None` until one
    /// is changed (and in a state written before entries were kept): those it was made with
    /// ([`made_with`]).
    #[serde(default)]
    pub entries: Option<Vec<Entry>>,
    /// The subnets moved to it by ReplaceNetworkAclAssociation: (association id, subnet id).
    /// A subnet of the VPC in no ACL's list is with the VPC's default ACL, by the association
    /// made with the subnet.
    #[serde(default)]
    pub associations: Vec<(String, String)>,
    /// Whether its VPC has (had) an IPv6 block: its `*` rules deny `::/0` too, and a
    /// default ACL made so allows all IPv6 traffic by rule 101.
    #[serde(default)]
    pub ipv6: bool,
}

impl NetworkAcl {
    /// Its numbered entries.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries
            .clone()
            .unwrap_or_else(|| made_with(self.is_default, self.ipv6))
    }
}

/// The numbered entries an ACL is made with: rule 100 allowing all IPv4 traffic both ways
/// for a VPC's default ACL (and rule 101 all IPv6 traffic, in a VPC with IPv6), none for
/// one's own.
fn made_with(is_default: bool, ipv6: bool) -> Vec<Entry> {
    if !is_default {
        return Vec::new();
    }
    let mut out = Vec::new();
    for egress in [false, true] {
        out.push(Entry::everything(100, egress, RuleAction::Allow, V4_ALL));
        if ipv6 {
            out.push(Entry::everything(101, egress, RuleAction::Allow, V6_ALL));
        }
    }
    out
}

/// All IPv4 addresses.
const V4_ALL: IpNet = IpNet::V4(ipnet::Ipv4Net::new_assert(
    std::net::Ipv4Addr::UNSPECIFIED,
    0,
));

/// All IPv6 addresses.
const V6_ALL: IpNet = IpNet::V6(ipnet::Ipv6Net::new_assert(
    std::net::Ipv6Addr::UNSPECIFIED,
    0,
));

/// Marks the ACLs of `vpc_id`, which has just gained its first IPv6 block, as AWS changes
/// them: every `*` rule denies `::/0` too, and the default ACL gets rule 101 allowing all
/// IPv6 traffic in each direction whose rules are still the defaults (and have no rule 101).
pub fn vpc_gained_ipv6(region: &mut Region, vpc_id: &str) {
    let ids: Vec<String> = region.by_vpc.of_kind(vpc_id, "acl").cloned().collect();
    for id in ids {
        let Some(acl) = region.network_acls.0.get_mut(&id) else {
            continue;
        };
        if acl.ipv6 {
            continue;
        }
        acl.ipv6 = true;
        let (Some(entries), true) = (acl.entries.as_mut(), acl.is_default) else {
            // Unchanged entries follow `made_with`, which now adds rule 101.
            continue;
        };
        for egress in [false, true] {
            let direction: Vec<&Entry> = entries.iter().filter(|e| e.egress == egress).collect();
            let default = Entry::everything(100, egress, RuleAction::Allow, V4_ALL);
            let untouched = matches!(direction.as_slice(), [only] if **only == default);
            if untouched {
                entries.push(Entry::everything(101, egress, RuleAction::Allow, V6_ALL));
            }
        }
    }
}

/// The rule number of the `*` rule, which denies what no other rule allows.
const STAR: i32 = 32767;

/// The rule number AWS lists the IPv6 `*` rule under (denying `::/0`), in a VPC with IPv6:
/// one above the IPv4 one, as the AWS CLI's documented `describe-network-acls` output shows.
const STAR_V6: i32 = 32768;

fn new_acl(region: &mut Region, vpc_id: &str, is_default: bool) -> NetworkAcl {
    let id = region.ids.resource("acl");
    let ipv6 = region.vpcs.get(vpc_id).is_some_and(|v| !v.ipv6.is_empty());
    NetworkAcl {
        id,
        vpc_id: vpc_id.to_string(),
        is_default,
        // Those it is made with until one changes (a VPC's default ACL is seldom changed:
        // no copy of AWS's defaults per VPC).
        entries: None,
        associations: Vec::new(),
        ipv6,
    }
}

fn insert(region: &mut Region, acl: NetworkAcl) {
    region.by_vpc.insert(&acl.vpc_id, &acl.id);
    region.network_acls.0.insert(acl.id.clone(), acl);
}

/// Creates the default ACL of the new VPC `vpc_id`.
pub fn create_default(region: &mut Region, vpc_id: &str) {
    let acl = new_acl(region, vpc_id, true);
    insert(region, acl);
}

/// Deletes the ACLs of the VPC `vpc_id` (going with it).
pub fn delete_of_vpc(region: &mut Region, vpc_id: &str) {
    let ids: Vec<String> = region.by_vpc.of_kind(vpc_id, "acl").cloned().collect();
    for id in ids {
        region.by_vpc.remove(vpc_id, &id);
        region.network_acls.0.remove(&id);
        region.tags.remove_resource(&id);
    }
}

/// Forgets a deleted subnet's association.
pub fn forget_subnet(region: &mut Region, subnet_id: &str) {
    for a in region.network_acls.0.values_mut() {
        a.associations.retain(|(_, s)| s != subnet_id);
    }
}

/// The id of the association made with `subnet_id` (with its VPC's default ACL): stable, one
/// per subnet.
fn first_association_id(subnet_id: &str) -> String {
    format!(
        "aclassoc-{}",
        subnet_id.strip_prefix("subnet-").unwrap_or(subnet_id)
    )
}

/// The ACLs of the VPC `vpc_id`.
fn acls_of<'a>(region: &'a Region, vpc_id: &str) -> impl Iterator<Item = &'a NetworkAcl> {
    region
        .by_vpc
        .of_kind(vpc_id, "acl")
        .filter_map(|id| region.network_acls.get(id))
}

/// The subnets of the VPC `vpc_id` moved to an ACL by ReplaceNetworkAclAssociation.
fn moved_subnets<'a>(region: &'a Region, vpc_id: &str) -> BTreeSet<&'a str> {
    acls_of(region, vpc_id)
        .flat_map(|a| a.associations.iter().map(|(_, s)| s.as_str()))
        .collect()
}

/// The subnets associated with `acl`: (association id, subnet id). Those moved to it, and for
/// a default ACL every other subnet of its VPC.
fn subnets_of(region: &Region, acl: &NetworkAcl) -> Vec<(String, String)> {
    let mut out = acl.associations.clone();
    if acl.is_default {
        let moved = moved_subnets(region, &acl.vpc_id);
        out.extend(
            region
                .by_vpc
                .of_kind(&acl.vpc_id, "subnet")
                .filter(|s| !moved.contains(s.as_str()))
                .map(|s| (first_association_id(s), s.clone())),
        );
    }
    out
}

impl Filterable for (&NetworkAcl, &Region) {
    const NAMES: &'static [&'static str] = &[
        "association.association-id",
        "association.network-acl-id",
        "association.subnet-id",
        "default",
        "entry.cidr",
        "entry.icmp.code",
        "entry.icmp.type",
        "entry.ipv6-cidr",
        "entry.port-range.from",
        "entry.port-range.to",
        "entry.protocol",
        "entry.rule-action",
        "entry.egress",
        "entry.rule-number",
        "network-acl-id",
        "owner-id",
        "vpc-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (a, region) = *self;
        let subnets = || subnets_of(region, a);
        // The entries as they are listed, the `*` rules with them.
        let entries = || render_entries(a);
        let of_entries = |f: &dyn Fn(&NetworkAclEntry) -> Option<String>| {
            entries().iter().filter_map(f).collect()
        };
        match name {
            "association.association-id" => subnets().into_iter().map(|(id, _)| id).collect(),
            "association.network-acl-id" => {
                if subnets().is_empty() {
                    Vec::new()
                } else {
                    one(a.id.clone())
                }
            }
            "association.subnet-id" => subnets().into_iter().map(|(_, s)| s).collect(),
            "default" => flag(a.is_default),
            "entry.cidr" => of_entries(&|e| e.cidr_block.clone()),
            "entry.ipv6-cidr" => of_entries(&|e| e.ipv6_cidr_block.clone()),
            "entry.icmp.code" => {
                of_entries(&|e| e.icmp_type_code.as_ref()?.code.map(|c| c.to_string()))
            }
            "entry.icmp.type" => {
                of_entries(&|e| e.icmp_type_code.as_ref()?.r#type.map(|t| t.to_string()))
            }
            "entry.port-range.from" => {
                of_entries(&|e| e.port_range.as_ref()?.from.map(|p| p.to_string()))
            }
            "entry.port-range.to" => {
                of_entries(&|e| e.port_range.as_ref()?.to.map(|p| p.to_string()))
            }
            "entry.protocol" => of_entries(&|e| e.protocol.clone()),
            "entry.rule-action" => of_entries(&|e| e.rule_action.map(|r| r.as_str().to_string())),
            "entry.egress" => of_entries(&|e| e.egress.map(|b| b.to_string())),
            "entry.rule-number" => of_entries(&|e| e.rule_number.map(|n| n.to_string())),
            "network-acl-id" => one(a.id.clone()),
            "owner-id" => one(region.account_id.clone()),
            "vpc-id" => one(a.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

/// The ACL's entries as AWS lists them: ingress then egress, each by rule number, the `*`
/// rule last.
/// An ACL's entries as AWS lists them: the egress rules first, then the ingress rules, each
/// direction by rule number and ending with its `*` rules (IPv4 32767, then IPv6 32768).
fn render_entries(a: &NetworkAcl) -> Vec<NetworkAclEntry> {
    let mut entries = a.entries();
    entries.sort_by_key(|e| (!e.egress, e.number));
    let mut out = Vec::with_capacity(entries.len() + 4);
    for egress in [true, false] {
        out.extend(
            entries
                .iter()
                .filter(|e| e.egress == egress)
                .map(Entry::render),
        );
        out.push(Entry::everything(STAR, egress, RuleAction::Deny, V4_ALL).render());
        if a.ipv6 {
            out.push(Entry::everything(STAR_V6, egress, RuleAction::Deny, V6_ALL).render());
        }
    }
    out
}

fn render(region: &Region, a: &NetworkAcl) -> NetworkAclOut {
    NetworkAclOut {
        associations: Some(
            subnets_of(region, a)
                .into_iter()
                .map(|(id, s)| NetworkAclAssociation {
                    network_acl_association_id: Some(id),
                    network_acl_id: Some(a.id.clone()),
                    subnet_id: Some(s),
                })
                .collect(),
        ),
        entries: Some(render_entries(a)),
        is_default: Some(a.is_default),
        network_acl_id: Some(a.id.clone()),
        tags: region.tags.listed(&a.id),
        vpc_id: Some(a.vpc_id.clone()),
        owner_id: Some(region.account_id.clone()),
    }
}

impl Entry {
    /// An entry for all traffic of all protocols.
    fn everything(number: i32, egress: bool, action: RuleAction, cidr: IpNet) -> Entry {
        Entry {
            number,
            egress,
            action,
            protocol: "-1".to_string(),
            cidr,
            ports: None,
            icmp: None,
        }
    }

    fn render(&self) -> NetworkAclEntry {
        NetworkAclEntry {
            cidr_block: match &self.cidr {
                IpNet::V4(c) => Some(cidr_text(c)),
                IpNet::V6(_) => None,
            },
            egress: Some(self.egress),
            icmp_type_code: self.icmp.map(|(t, c)| IcmpTypeCode {
                code: Some(c),
                r#type: Some(t),
            }),
            ipv6_cidr_block: match &self.cidr {
                IpNet::V6(c) => Some(c.to_string()),
                IpNet::V4(_) => None,
            },
            port_range: self.ports.map(|(from, to)| PortRange {
                from: Some(from),
                to: Some(to),
            }),
            protocol: Some(self.protocol.clone()),
            rule_action: Some(self.action),
            rule_number: Some(self.number),
        }
    }
}

/// `CreateNetworkAcl`: an ACL of one's own in a VPC, denying everything (its `*` rules) until
/// entries are added; the `network ACLs per VPC` quota; the same ClientToken with the same
/// request answers the same ACL.
pub fn create_network_acl(
    region: &mut Region,
    mut input: CreateNetworkAclRequest,
) -> Result<CreateNetworkAclResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateNetworkAcl", token.as_deref(), &print)?
        && let Some(a) = region.network_acls.get(&id)
    {
        return Ok(CreateNetworkAclResult {
            network_acl: Some(render(region, a)),
            client_token: token,
        });
    }
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::NetworkAcl,
    )?;
    if acls_of(region, &input.vpc_id).count() >= region.limits.network_acls_per_vpc {
        return Err(ApiError::new(
            Code::NetworkAclLimitExceeded,
            "The maximum number of network ACLs has been reached.",
        ));
    }
    let acl = new_acl(region, &input.vpc_id, false);
    region.tags.insert(&acl.id, tags);
    region
        .ledger
        .record("CreateNetworkAcl", token.as_deref(), &print, &acl.id);
    let out = render(region, &acl);
    insert(region, acl);
    Ok(CreateNetworkAclResult {
        network_acl: Some(out),
        client_token: token,
    })
}

/// `DeleteNetworkAcl`: one's own ACL with no subnet; never a VPC's default ACL.
pub fn delete_network_acl(
    region: &mut Region,
    input: DeleteNetworkAclRequest,
) -> Result<(), ApiError> {
    let id = input.network_acl_id;
    let acl = Kind::NetworkAcl.get(&region.network_acls, &id)?;
    if acl.is_default {
        return Err(ApiError::invalid_value(format!(
            "cannot delete default network ACL {id}"
        )));
    }
    if !acl.associations.is_empty() {
        return Err(ApiError::dependency_violation(format!(
            "The networkAcl '{id}' has dependencies and cannot be deleted."
        )));
    }
    let vpc_id = acl.vpc_id.clone();
    region.by_vpc.remove(&vpc_id, &id);
    region.network_acls.0.remove(&id);
    region.tags.remove_resource(&id);
    Ok(())
}

/// The subnet of the association `id`, and its VPC: one moved to an ACL (in that ACL's list),
/// or one still with its VPC's default ACL by the association made with it.
fn associated_subnet(region: &Region, id: &str) -> Option<(String, String)> {
    let moved = region.network_acls.values().find_map(|a| {
        a.associations
            .iter()
            .find(|(assoc, _)| assoc == id)
            .map(|(_, s)| (s.clone(), a.vpc_id.clone()))
    });
    if moved.is_some() {
        return moved;
    }
    let subnet_id = format!("subnet-{}", id.strip_prefix("aclassoc-")?);
    let subnet = region.subnets.get(&subnet_id)?;
    let moved = moved_subnets(region, &subnet.vpc_id).contains(subnet_id.as_str());
    (!moved).then(|| (subnet_id, subnet.vpc_id.clone()))
}

/// `ReplaceNetworkAclAssociation`: moves the subnet of an association to another ACL of its
/// VPC; the association gets a new id (the old one is gone).
pub fn replace_network_acl_association(
    region: &mut Region,
    input: ReplaceNetworkAclAssociationRequest,
) -> Result<ReplaceNetworkAclAssociationResult, ApiError> {
    let target = Kind::NetworkAcl.get(&region.network_acls, &input.network_acl_id)?;
    let target_vpc = target.vpc_id.clone();
    let Some((subnet_id, vpc_id)) = associated_subnet(region, &input.association_id) else {
        return Err(crate::ec2::error::association_not_found(
            &input.association_id,
        ));
    };
    if vpc_id != target_vpc {
        return Err(ApiError::invalid_value(format!(
            "Network ACL {} and subnet {subnet_id} belong to different VPCs.",
            input.network_acl_id
        )));
    }
    forget_subnet(region, &subnet_id);
    let new_id = region.ids.resource("aclassoc");
    if let Some(a) = region.network_acls.0.get_mut(&input.network_acl_id) {
        a.associations.push((new_id.clone(), subnet_id));
    }
    Ok(ReplaceNetworkAclAssociationResult {
        new_association_id: Some(new_id),
    })
}

/// `DescribeNetworkAcls`.
pub fn describe_network_acls(
    region: &Region,
    input: DescribeNetworkAclsRequest,
) -> Result<DescribeNetworkAclsResult, ApiError> {
    let filters = Filters::parse::<(&NetworkAcl, &Region)>(input.filters)?;
    let found = Kind::NetworkAcl.describe(
        &region.consistency,
        &region.network_acls,
        input.network_acl_ids.as_deref(),
        region.candidates(Kind::NetworkAcl, &filters),
        |a| filters.matches(&(a, region), region.tags.get(&a.id)),
    )?;
    let (items, next) = page::page(
        found,
        |a| a.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeNetworkAclsResult {
        network_acls: Some(items.into_iter().map(|a| render(region, a)).collect()),
        next_token: next,
    })
}
