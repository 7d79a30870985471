//! The AWS services a region offers VPC endpoints for, and DescribeVpcEndpointServices.
//!
//! A service is named `com.amazonaws.REGION.NAME`; S3 and DynamoDB take gateway endpoints
//! (a route to the service's prefix list) as well as interface endpoints, the others only
//! interface endpoints (an interface in each chosen subnet). Every service is offered in every
//! zone of the region, owned by `amazon`, takes endpoint policies and accepts endpoints at
//! once, over IPv4.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{account, page};
use crate::generated::ec2::{
    DescribeVpcEndpointServicesRequest, DescribeVpcEndpointServicesResult, PrivateDnsDetails,
    ServiceDetail, ServiceType, ServiceTypeDetail, VpcEndpointType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The services, by the last part of their names, and whether each takes gateway endpoints.
/// Those a Kubernetes cluster's nodes reach without a NAT gateway (images, logs, load
/// balancers, instance metadata agents, tokens, keys and secrets), and the two gateway ones.
const SERVICES: &[(&str, bool)] = &[
    ("autoscaling", false),
    ("dynamodb", true),
    ("ebs", false),
    ("ec2", false),
    ("ec2messages", false),
    ("ecr.api", false),
    ("ecr.dkr", false),
    ("eks", false),
    ("elasticloadbalancing", false),
    ("kms", false),
    ("logs", false),
    ("monitoring", false),
    ("s3", true),
    ("secretsmanager", false),
    ("sns", false),
    ("sqs", false),
    ("ssm", false),
    ("ssmmessages", false),
    ("sts", false),
];

/// One service of a region, as an endpoint names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// The last part of its name: `s3`, `ecr.dkr`.
    pub short: &'static str,
    /// Whether it takes gateway endpoints.
    pub gateway: bool,
}

impl Service {
    /// The service `name` names in `region` (`com.amazonaws.REGION.SHORT`), if offered.
    pub fn named(region: &str, name: &str) -> Option<Service> {
        let short = name
            .strip_prefix("com.amazonaws.")?
            .strip_prefix(region)?
            .strip_prefix('.')?;
        Service::by_short(short)
    }

    /// The services that take gateway endpoints (S3 and DynamoDB), in the order of their
    /// names: each has an AWS-managed prefix list (`crate::ec2::prefix_list`).
    pub fn gateways() -> impl Iterator<Item = Service> {
        SERVICES
            .iter()
            .filter(|(_, gateway)| *gateway)
            .map(|&(short, gateway)| Service { short, gateway })
    }

    /// The service whose name ends in `short`.
    pub fn by_short(short: &str) -> Option<Service> {
        SERVICES
            .iter()
            .find(|(s, _)| *s == short)
            .map(|&(short, gateway)| Service { short, gateway })
    }

    /// Whether endpoints of `kind` can be made to it.
    pub fn takes(self, kind: VpcEndpointType) -> bool {
        match kind {
            VpcEndpointType::Gateway => self.gateway,
            VpcEndpointType::Interface => true,
            _ => false,
        }
    }

    /// Its full name in `region`.
    pub fn name(self, region: &str) -> String {
        Service::full_name(region, self.short)
    }

    /// The full name of the service `short` in `region`: `com.amazonaws.REGION.SHORT`.
    pub fn full_name(region: &str, short: &str) -> String {
        format!("com.amazonaws.{region}.{short}")
    }

    /// The public name of the service in `region`, which an interface endpoint with private
    /// DNS answers inside its VPC: `ssm.us-east-1.amazonaws.com`.
    pub fn private_dns_name(self, region: &str) -> String {
        format!("{}.{region}.{}", self.short, account::domain_of(region))
    }

    /// The domain under which its interface endpoints' own names are made:
    /// `ssm.us-east-1.vpce.amazonaws.com`.
    pub fn endpoint_domain(self, region: &str) -> String {
        format!(
            "{}.{region}.vpce.{}",
            self.short,
            account::domain_of(region)
        )
    }

    /// The id of the prefix list a gateway endpoint's routes lead to: one per service and
    /// region, the same on every call (`pl-` and 8 hex digits).
    pub fn prefix_list_id(self, region: &str) -> String {
        format!("pl-{:08x}", stable_hash(&[region, self.short, "pl"]) as u32)
    }

    /// The id of the service of `kind` (`vpce-svc-` and 17 hex digits).
    fn service_id(self, region: &str, kind: ServiceType) -> String {
        let hash = stable_hash(&[region, self.short, kind.as_str()]);
        let first = stable_hash(&[kind.as_str(), self.short, region]) & 0xf;
        format!("vpce-svc-{first:x}{hash:016x}")
    }
}

/// FNV-1a over `parts`: ids that are the same in every run and every build.
pub(super) fn stable_hash(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// One row of DescribeVpcEndpointServices: a service and one type of endpoint it takes.
struct Offer<'a> {
    region: &'a Region,
    service: Service,
    kind: ServiceType,
    name: String,
}

impl Filterable for Offer<'_> {
    const NAMES: &'static [&'static str] = &[
        "owner",
        "service-name",
        "service-region",
        "service-type",
        "supported-ip-address-types",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "owner" => one("amazon"),
            "service-name" => one(self.name.clone()),
            "service-region" => one(self.region.name.clone()),
            "service-type" => one(self.kind.as_str()),
            "supported-ip-address-types" => one("ipv4"),
            _ => Vec::new(),
        }
    }
}

impl Offer<'_> {
    fn key(&self) -> String {
        format!("{} {}", self.name, self.kind.as_str())
    }

    fn render(&self) -> ServiceDetail {
        let region = &self.region.name;
        let interface = self.kind == ServiceType::Interface;
        let private = interface.then(|| self.service.private_dns_name(region));
        ServiceDetail {
            service_name: Some(self.name.clone()),
            service_id: Some(self.service.service_id(region, self.kind)),
            service_type: Some(vec![ServiceTypeDetail {
                service_type: Some(self.kind),
            }]),
            service_region: Some(region.clone()),
            availability_zones: Some(self.region.zones.iter().map(|z| z.name.clone()).collect()),
            availability_zone_ids: Some(self.region.zones.iter().map(|z| z.id.clone()).collect()),
            owner: Some("amazon".to_string()),
            base_endpoint_dns_names: Some(vec![if interface {
                self.service.endpoint_domain(region)
            } else {
                self.service.private_dns_name(region)
            }]),
            private_dns_names: private.as_ref().map(|p| {
                vec![PrivateDnsDetails {
                    private_dns_name: Some(p.clone()),
                }]
            }),
            private_dns_name: private,
            vpc_endpoint_policy_supported: Some(true),
            acceptance_required: Some(false),
            manages_vpc_endpoints: Some(false),
            tags: Some(Vec::new()),
            ..Default::default()
        }
    }
}

/// `DescribeVpcEndpointServices`: the region's services, by name or filters, a row per type
/// of endpoint each takes, paginated.
pub fn describe_vpc_endpoint_services(
    region: &mut Region,
    input: DescribeVpcEndpointServicesRequest,
) -> Result<DescribeVpcEndpointServicesResult, ApiError> {
    let filters = Filters::parse::<Offer<'_>>(input.filters)?;
    let region = &*region;
    let wanted = input.service_names.unwrap_or_default();
    for name in &wanted {
        if Service::named(&region.name, name).is_none() {
            return Err(super::unknown_service(name));
        }
    }
    let mut offers: Vec<Offer<'_>> = SERVICES
        .iter()
        .map(|&(short, gateway)| Service { short, gateway })
        .flat_map(|service| {
            let name = service.name(&region.name);
            let mut kinds = vec![ServiceType::Interface];
            if service.gateway {
                kinds.insert(0, ServiceType::Gateway);
            }
            kinds.into_iter().map(move |kind| Offer {
                region,
                service,
                kind,
                name: name.clone(),
            })
        })
        .filter(|o| wanted.is_empty() || wanted.contains(&o.name))
        .filter(|o| filters.matches(o, None))
        .collect();
    offers.sort_by_key(Offer::key);
    let keys: Vec<String> = offers.iter().map(Offer::key).collect();
    let (page, next) = page::page(
        offers.iter().zip(&keys).collect(),
        |(_, k)| k.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    let mut names: Vec<String> = page.iter().map(|(o, _)| o.name.clone()).collect();
    names.dedup();
    Ok(DescribeVpcEndpointServicesResult {
        service_names: Some(names),
        service_details: Some(page.iter().map(|(o, _)| o.render()).collect()),
        next_token: next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_named_in_its_own_region_only() {
        let s3 = Service::named("us-east-1", "com.amazonaws.us-east-1.s3");
        assert_eq!(
            s3,
            Some(Service {
                short: "s3",
                gateway: true
            })
        );
        assert_eq!(
            Service::named("us-east-1", "com.amazonaws.eu-west-1.s3"),
            None
        );
        assert_eq!(
            Service::named("us-east-1", "com.amazonaws.us-east-1.nope"),
            None
        );
        assert_eq!(
            Service::named("us-east-1", "com.amazonaws.us-east-1s3"),
            None
        );
        let ssm = Service::named("us-east-1", "com.amazonaws.us-east-1.ssm");
        assert!(ssm.is_some_and(|s| !s.takes(VpcEndpointType::Gateway)));
        assert!(ssm.is_some_and(|s| s.takes(VpcEndpointType::Interface)));
    }

    #[test]
    fn prefix_lists_are_stable_and_differ_by_service_and_region() {
        let s3 = Service {
            short: "s3",
            gateway: true,
        };
        let ddb = Service {
            short: "dynamodb",
            gateway: true,
        };
        let id = s3.prefix_list_id("us-east-1");
        assert_eq!(id, s3.prefix_list_id("us-east-1"));
        assert!(id.starts_with("pl-") && id.len() == 11, "{id}");
        assert_ne!(id, ddb.prefix_list_id("us-east-1"));
        assert_ne!(id, s3.prefix_list_id("eu-west-1"));
    }
}
