//! Network ACLs: the default ACL every VPC gets with it (AWS's default rules: rule 100 allows
//! all traffic in and out, the `*` rule, 32767, denies what no other rule allows), associated
//! with every subnet of the VPC, deleted with the VPC. DescribeNetworkAcls with AWS's filters
//! and pagination. (Custom ACLs are not served: every subnet keeps its VPC's default ACL.)

use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    DescribeNetworkAclsRequest, DescribeNetworkAclsResult, NetworkAcl as NetworkAclOut,
    NetworkAclAssociation, NetworkAclEntry, RuleAction,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

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
}

/// One entry of a default ACL: rule number, egress, action.
const DEFAULT_ENTRIES: [(i32, bool, RuleAction); 4] = [
    (100, false, RuleAction::Allow),
    (32767, false, RuleAction::Deny),
    (100, true, RuleAction::Allow),
    (32767, true, RuleAction::Deny),
];

/// Creates the default ACL of the new VPC `vpc_id`.
pub fn create_default(region: &mut Region, vpc_id: &str) {
    let id = region.ids.resource("acl");
    region.by_vpc.insert(vpc_id, &id);
    region.network_acls.0.insert(
        id.clone(),
        NetworkAcl {
            id,
            vpc_id: vpc_id.to_string(),
            is_default: true,
        },
    );
}

/// Deletes the ACLs of the VPC `vpc_id` (going with it).
pub fn delete_of_vpc(region: &mut Region, vpc_id: &str) {
    let ids: Vec<String> = region
        .network_acls
        .values()
        .filter(|a| a.vpc_id == vpc_id)
        .map(|a| a.id.clone())
        .collect();
    for id in ids {
        region.by_vpc.remove(vpc_id, &id);
        region.network_acls.0.remove(&id);
        region.tags.remove_resource(&id);
    }
}

/// The association id of `subnet_id` with its ACL: stable, one per subnet.
fn association_id(subnet_id: &str) -> String {
    format!(
        "aclassoc-{}",
        subnet_id.strip_prefix("subnet-").unwrap_or(subnet_id)
    )
}

/// The subnets associated with `acl`: every subnet of its VPC, for its default ACL.
fn subnets_of<'a>(region: &'a Region, acl: &NetworkAcl) -> Vec<&'a str> {
    if !acl.is_default {
        return Vec::new();
    }
    region
        .subnets
        .values()
        .filter(|s| s.vpc_id == acl.vpc_id)
        .map(|s| s.id.as_str())
        .collect()
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
    const NEVER_SET: &'static [&'static str] = &[
        "entry.icmp.code",
        "entry.icmp.type",
        "entry.ipv6-cidr",
        "entry.port-range.from",
        "entry.port-range.to",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (a, region) = *self;
        let subnets = || subnets_of(region, a);
        match name {
            "association.association-id" => subnets().into_iter().map(association_id).collect(),
            "association.network-acl-id" => {
                if subnets().is_empty() {
                    Vec::new()
                } else {
                    one(a.id.clone())
                }
            }
            "association.subnet-id" => subnets().into_iter().map(String::from).collect(),
            "default" => flag(a.is_default),
            "entry.cidr" => one("0.0.0.0/0"),
            "entry.protocol" => one("-1"),
            "entry.rule-action" => vec!["allow".into(), "deny".into()],
            "entry.egress" => vec!["true".into(), "false".into()],
            "entry.rule-number" => vec!["100".into(), "32767".into()],
            "network-acl-id" => one(a.id.clone()),
            "owner-id" => one(region.account_id.clone()),
            "vpc-id" => one(a.vpc_id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, a: &NetworkAcl) -> NetworkAclOut {
    let entries = if a.is_default {
        DEFAULT_ENTRIES
            .iter()
            .map(|(number, egress, action)| NetworkAclEntry {
                cidr_block: Some("0.0.0.0/0".into()),
                egress: Some(*egress),
                icmp_type_code: None,
                ipv6_cidr_block: None,
                port_range: None,
                protocol: Some("-1".into()),
                rule_action: Some(*action),
                rule_number: Some(*number),
            })
            .collect()
    } else {
        Vec::new()
    };
    NetworkAclOut {
        associations: Some(
            subnets_of(region, a)
                .into_iter()
                .map(|s| NetworkAclAssociation {
                    network_acl_association_id: Some(association_id(s)),
                    network_acl_id: Some(a.id.clone()),
                    subnet_id: Some(s.to_string()),
                })
                .collect(),
        ),
        entries: Some(entries),
        is_default: Some(a.is_default),
        network_acl_id: Some(a.id.clone()),
        tags: region.tags.tag_set(&a.id),
        vpc_id: Some(a.vpc_id.clone()),
        owner_id: Some(region.account_id.clone()),
    }
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
