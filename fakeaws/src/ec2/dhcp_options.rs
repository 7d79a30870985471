//! DHCP options sets: CreateDhcpOptions, DescribeDhcpOptions, DeleteDhcpOptions,
//! AssociateDhcpOptions, and the set every region starts with, which new VPCs take: the
//! region's domain name (`ec2.internal` in us-east-1, `REGION.compute.internal` elsewhere) and
//! `AmazonProvidedDNS`, as the VPC user guide describes the default set.
//!
//! A set's options are checked as the API reference lists them: `domain-name` (one value),
//! `domain-name-servers` (up to four, addresses or `AmazonProvidedDNS`), `ntp-servers` and
//! `netbios-name-servers` (up to four addresses), `netbios-node-type` (1, 2, 4 or 8) and
//! `ipv6-address-preferred-lease-time` (140 to 2,147,483,647 seconds); the refusals' words are
//! the fake's. A set a VPC uses is not deleted (`DependencyViolation`).

use std::net::IpAddr;

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    AssociateDhcpOptionsRequest, AttributeValue, CreateDhcpOptionsRequest, CreateDhcpOptionsResult,
    DeleteDhcpOptionsRequest, DescribeDhcpOptionsRequest, DescribeDhcpOptionsResult,
    DhcpConfiguration, DhcpOptions as DhcpOptionsOut, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// DHCP options sets by id.
    DhcpOptionsSets of DhcpOptionsSet
}

/// One DHCP options set: its options in the order given.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DhcpOptionsSet {
    /// `dopt-...`.
    pub id: String,
    /// Each option's key and values.
    pub options: Vec<(String, Vec<String>)>,
}

/// What AssociateDhcpOptions takes for "no DHCP options", and what a VPC without any shows.
const NONE: &str = "default";

/// The options of the set a region starts with.
fn default_options(region_name: &str) -> Vec<(String, Vec<String>)> {
    let domain = if region_name == "us-east-1" {
        "ec2.internal".to_string()
    } else {
        format!("{region_name}.compute.internal")
    };
    vec![
        ("domain-name".into(), vec![domain]),
        (
            "domain-name-servers".into(),
            vec!["AmazonProvidedDNS".into()],
        ),
    ]
}

/// Makes the region's default set under its id, unless it is there (a region read back from
/// a state file written before sets were kept has its id only).
pub fn ensure_default(region: &mut Region) {
    let id = region.default_dhcp_options_id.clone();
    if !region.dhcp_options.contains_key(&id) {
        let options = default_options(&region.name);
        region
            .dhcp_options
            .0
            .insert(id.clone(), DhcpOptionsSet { id, options });
    }
}

/// The set a new VPC takes: the region's default one, or none once it is deleted.
pub fn for_new_vpc(region: &Region) -> String {
    if region
        .dhcp_options
        .contains_key(&region.default_dhcp_options_id)
    {
        region.default_dhcp_options_id.clone()
    } else {
        NONE.to_string()
    }
}

/// `InvalidParameterValue` for the option `key`.
fn bad(key: &str, why: &str) -> ApiError {
    ApiError::invalid_value(format!("Invalid value for the DHCP option {key}: {why}"))
}

/// The values of the option `key`, checked.
fn checked(key: &str, values: Vec<String>) -> Result<(String, Vec<String>), ApiError> {
    if values.is_empty() {
        return Err(bad(key, "it needs a value."));
    }
    let addresses = |allow_amazon: bool| -> Result<(), ApiError> {
        if values.len() > 4 {
            return Err(bad(key, "at most four servers."));
        }
        for v in &values {
            let amazon = allow_amazon && v == "AmazonProvidedDNS";
            if !amazon && v.parse::<IpAddr>().is_err() {
                return Err(bad(key, &format!("{v} is not an IP address.")));
            }
        }
        Ok(())
    };
    let single = || {
        if values.len() == 1 {
            Ok(())
        } else {
            Err(bad(key, "it takes one value."))
        }
    };
    match key {
        "domain-name" => single()?,
        "domain-name-servers" => addresses(true)?,
        "ntp-servers" | "netbios-name-servers" => addresses(false)?,
        "netbios-node-type" => {
            single()?;
            if !["1", "2", "4", "8"].contains(&values.first().map_or("", String::as_str)) {
                return Err(bad(key, "the node type is 1, 2, 4 or 8."));
            }
        }
        "ipv6-address-preferred-lease-time" => {
            single()?;
            let ok = values
                .first()
                .and_then(|v| v.parse::<u64>().ok())
                .is_some_and(|s| (140..=2_147_483_647).contains(&s));
            if !ok {
                return Err(bad(key, "140 to 2147483647 seconds."));
            }
        }
        other => {
            return Err(ApiError::invalid_value(format!(
                "Value ({other}) for parameter name is invalid. Unrecognized DHCP option."
            )));
        }
    }
    Ok((key.to_string(), values))
}

fn render(region: &Region, set: &DhcpOptionsSet) -> DhcpOptionsOut {
    DhcpOptionsOut {
        owner_id: Some(region.account_id.clone()),
        tags: region.tags.tag_set(&set.id),
        dhcp_options_id: Some(set.id.clone()),
        dhcp_configurations: Some(
            set.options
                .iter()
                .map(|(key, values)| DhcpConfiguration {
                    key: Some(key.clone()),
                    values: Some(
                        values
                            .iter()
                            .map(|v| AttributeValue {
                                value: Some(v.clone()),
                            })
                            .collect(),
                    ),
                })
                .collect(),
        ),
    }
}

/// `CreateDhcpOptions`.
pub fn create_dhcp_options(
    region: &mut Region,
    input: CreateDhcpOptionsRequest,
) -> Result<CreateDhcpOptionsResult, ApiError> {
    if input.dhcp_configurations.is_empty() {
        return Err(ApiError::missing_parameter("DhcpConfiguration"));
    }
    let mut options: Vec<(String, Vec<String>)> = Vec::new();
    for c in input.dhcp_configurations {
        let key = c
            .key
            .ok_or_else(|| ApiError::missing_parameter("DhcpConfiguration.N.Key"))?;
        if options.iter().any(|(k, _)| *k == key) {
            return Err(bad(&key, "the option is given twice."));
        }
        options.push(checked(&key, c.values.unwrap_or_default())?);
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::DhcpOptions,
    )?;
    let id = region.ids.resource("dopt");
    region.tags.insert(&id, tags);
    let set = DhcpOptionsSet {
        id: id.clone(),
        options,
    };
    let out = render(region, &set);
    region.dhcp_options.0.insert(id, set);
    Ok(CreateDhcpOptionsResult {
        dhcp_options: Some(out),
    })
}

/// `DeleteDhcpOptions`: not while a VPC uses the set.
pub fn delete_dhcp_options(
    region: &mut Region,
    input: DeleteDhcpOptionsRequest,
) -> Result<(), ApiError> {
    let id = input.dhcp_options_id;
    Kind::DhcpOptions.get(&region.dhcp_options, &id)?;
    if region.vpcs.values().any(|v| v.dhcp_options_id == id) {
        return Err(ApiError::dependency_violation(format!(
            "The dhcpOptions '{id}' has dependencies and cannot be deleted."
        )));
    }
    region.dhcp_options.0.remove(&id);
    region.tags.remove_resource(&id);
    Ok(())
}

/// `AssociateDhcpOptions`: the VPC takes the set, or none (`default`).
pub fn associate_dhcp_options(
    region: &mut Region,
    input: AssociateDhcpOptionsRequest,
) -> Result<(), ApiError> {
    let id = input.dhcp_options_id;
    if id != NONE {
        Kind::DhcpOptions.get(&region.dhcp_options, &id)?;
    }
    let vpc = crate::ec2::vpc::get_mut(region, &input.vpc_id)?;
    vpc.dhcp_options_id = id;
    Ok(())
}

impl Filterable for (&DhcpOptionsSet, &Region) {
    const NAMES: &'static [&'static str] = &["dhcp-options-id", "key", "value", "owner-id"];

    fn values(&self, name: &str) -> Vec<String> {
        let (set, region) = *self;
        match name {
            "dhcp-options-id" => one(set.id.clone()),
            "key" => set.options.iter().map(|(k, _)| k.clone()).collect(),
            "value" => set.options.iter().flat_map(|(_, v)| v.clone()).collect(),
            "owner-id" => one(region.account_id.clone()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeDhcpOptions`: by ids, or every set; filters; `MaxResults` 5..1000 and `NextToken`.
pub fn describe_dhcp_options(
    region: &mut Region,
    input: DescribeDhcpOptionsRequest,
) -> Result<DescribeDhcpOptionsResult, ApiError> {
    page::check_max_results(input.max_results, 5, 1000)?;
    let filters = Filters::parse::<(&DhcpOptionsSet, &Region)>(input.filters)?;
    let region = &*region;
    let found: Vec<&DhcpOptionsSet> = Kind::DhcpOptions
        .select(&region.dhcp_options, input.dhcp_options_ids.as_deref())?
        .into_iter()
        .filter(|s| filters.matches(&(*s, region), region.tags.get(&s.id)))
        .collect();
    let (items, next) = page::page(
        found,
        |s| s.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeDhcpOptionsResult {
        dhcp_options: Some(items.into_iter().map(|s| render(region, s)).collect()),
        next_token: next,
    })
}
