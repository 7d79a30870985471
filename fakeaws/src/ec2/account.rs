//! The account as EC2 describes it: DescribeRegions (the regions of the caller's partition,
//! every one enabled) and DescribeAccountAttributes (the default VPC and the quotas behind
//! them).

use crate::ec2::filter::{Filterable, Filters, one};
use crate::generated::ec2::{
    AccountAttribute, AccountAttributeName, AccountAttributeValue,
    DescribeAccountAttributesRequest, DescribeAccountAttributesResult, DescribeRegionsRequest,
    DescribeRegionsResult, Region as RegionOut,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::server::AWS_REGIONS;

/// The regions AWS opens to an account only when it opts in. The fake's account has opted in
/// to every one (it serves them all), so they are `opted-in`; the others need no opt-in.
const OPT_IN_REGIONS: &[&str] = &[
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-south-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-west-1",
    "eu-central-2",
    "eu-south-1",
    "eu-south-2",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
];

/// AWS's partitions, by the prefix of their regions' names, with the domain of their
/// endpoints and the partition their ARNs name; the commercial partition (`amazonaws.com`,
/// `aws`) holds every other name.
const PARTITIONS: &[(&str, &str, &str)] = &[
    ("cn-", "amazonaws.com.cn", "aws-cn"),
    ("us-gov-", "amazonaws.com", "aws-us-gov"),
    ("us-isob-", "sc2s.sgov.gov", "aws-iso-b"),
    ("us-iso-", "c2s.ic.gov", "aws-iso"),
    ("eusc-", "amazonaws.eu", "aws-eusc"),
];

/// The partition of `region`: an index into [`PARTITIONS`], or `None` for the commercial one
/// (which also holds the regions a user adds, `Config::extra_regions`).
pub(crate) fn partition_of(region: &str) -> Option<usize> {
    PARTITIONS
        .iter()
        .position(|(prefix, _, _)| region.starts_with(prefix))
}

/// One region as DescribeRegions lists it.
struct Listed {
    name: String,
    endpoint: String,
    opt_in_status: &'static str,
}

/// The domain of `region`'s endpoints: `amazonaws.com`, `amazonaws.com.cn`, ...
pub fn domain_of(region: &str) -> &'static str {
    partition_of(region)
        .and_then(|p| PARTITIONS.get(p))
        .map_or("amazonaws.com", |(_, domain, _)| *domain)
}

/// The partition ARNs of `region`'s resources name: `aws`, `aws-cn`, `aws-us-gov`, ...
pub fn arn_partition(region: &str) -> &'static str {
    partition_of(region)
        .and_then(|p| PARTITIONS.get(p))
        .map_or("aws", |(_, _, partition)| *partition)
}

impl Listed {
    fn of(name: &str) -> Self {
        let domain = domain_of(name);
        Listed {
            name: name.to_string(),
            endpoint: format!("ec2.{name}.{domain}"),
            opt_in_status: if OPT_IN_REGIONS.contains(&name) {
                "opted-in"
            } else {
                "opt-in-not-required"
            },
        }
    }
}

impl Filterable for Listed {
    const NAMES: &'static [&'static str] = &["endpoint", "opt-in-status", "region-name"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "endpoint" => one(self.endpoint.clone()),
            "opt-in-status" => one(self.opt_in_status),
            "region-name" => one(self.name.clone()),
            _ => Vec::new(),
        }
    }
}

/// The regions of the partition `region` is in, sorted by name: AWS's own, and in the
/// commercial partition the ones the fake was told to serve too.
fn partition_regions(region: &Region) -> Vec<&str> {
    let partition = partition_of(&region.name);
    let mut names: Vec<&str> = AWS_REGIONS
        .iter()
        .copied()
        .chain(region.extra_regions.iter().map(String::as_str))
        .filter(|r| partition_of(r) == partition)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `DescribeRegions`: every region of the caller's partition is enabled for the fake's
/// account, so `AllRegions` lists the same regions as without it.
pub fn describe_regions(
    region: &Region,
    input: DescribeRegionsRequest,
) -> Result<DescribeRegionsResult, ApiError> {
    let filters = Filters::parse::<Listed>(input.filters)?;
    let known = partition_regions(region);
    let asked = input.region_names.unwrap_or_default();
    if let Some(unknown) = asked.iter().find(|n| !known.contains(&n.as_str())) {
        return Err(ApiError::invalid_value(format!(
            "Invalid region: [{unknown}]"
        )));
    }
    let regions = known
        .into_iter()
        .filter(|name| asked.is_empty() || asked.iter().any(|a| a == name))
        .map(Listed::of)
        .filter(|r| filters.matches(r, None))
        .map(|r| RegionOut {
            region_name: Some(r.name),
            endpoint: Some(r.endpoint),
            opt_in_status: Some(r.opt_in_status.to_string()),
            ..Default::default()
        })
        .collect();
    Ok(DescribeRegionsResult {
        regions: Some(regions),
    })
}

/// `DescribeAccountAttributes`: the attributes asked for (all six without `AttributeName`),
/// in the order AWS lists them. The quotas come from the region's limits (`--quota`), as
/// Service Quotas would raise them; security groups per network interface is AWS's default
/// of 5, which the fake reports but does not enforce.
pub fn describe_account_attributes(
    region: &Region,
    input: DescribeAccountAttributesRequest,
) -> Result<DescribeAccountAttributesResult, ApiError> {
    use AccountAttributeName as Name;
    const ALL: [Name; 6] = [
        Name::VpcMaxSecurityGroupsPerInterface,
        Name::MaxInstances,
        Name::SupportedPlatforms,
        Name::DefaultVpc,
        Name::MaxElasticIps,
        Name::VpcMaxElasticIps,
    ];
    let asked = input.attribute_names.unwrap_or_default();
    let attributes = ALL
        .iter()
        .filter(|name| asked.is_empty() || asked.contains(name))
        .map(|name| {
            let value = match name {
                Name::VpcMaxSecurityGroupsPerInterface => "5".to_string(),
                Name::MaxInstances => region.limits.instances.to_string(),
                Name::SupportedPlatforms => "VPC".to_string(),
                Name::DefaultVpc => region
                    .default_vpc()
                    .map_or_else(|| "none".to_string(), |v| v.id.clone()),
                Name::MaxElasticIps | Name::VpcMaxElasticIps => {
                    region.limits.elastic_ips.to_string()
                }
            };
            AccountAttribute {
                attribute_name: Some(name.as_str().to_string()),
                attribute_values: Some(vec![AccountAttributeValue {
                    attribute_value: Some(value),
                }]),
            }
        })
        .collect();
    Ok(DescribeAccountAttributesResult {
        account_attributes: Some(attributes),
    })
}

/// Whether `s` is shaped as an AWS account id: 12 digits.
pub fn is_account_id(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit())
}
