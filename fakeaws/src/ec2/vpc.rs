//! VPCs: CreateVpc, DescribeVpcs, DeleteVpc, ModifyVpcAttribute, DescribeVpcAttribute,
//! AssociateVpcCidrBlock and DisassociateVpcCidrBlock (secondary IPv4 ranges), and the default
//! VPC every region starts with.

use ipnet::{IpNet, Ipv4Net};

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::vpc_ipv6::{self, Ipv6Block};
use crate::ec2::{Kind, ipam, page, route_table, security_group, subnet, tags};
use crate::generated::ec2::{
    AttributeBooleanValue, BlockPublicAccessMode, BlockPublicAccessStates, CreateDefaultVpcRequest,
    CreateDefaultVpcResult, CreateVpcRequest, CreateVpcResult, DeleteVpcRequest,
    DescribeVpcAttributeRequest, DescribeVpcAttributeResult, DescribeVpcsRequest,
    DescribeVpcsResult, ModifyVpcAttributeRequest, ModifyVpcTenancyRequest, ModifyVpcTenancyResult,
    ResourceType, Tenancy, Vpc as VpcOut, VpcAttributeName, VpcCidrBlockAssociation,
    VpcCidrBlockState, VpcCidrBlockStateCode, VpcState, VpcTenancy,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The CIDR of every default VPC.
pub const DEFAULT_VPC_CIDR: &str = "172.31.0.0/16";

crate::region::table! {
    /// VPCs by id.
    Vpcs of Vpc
}

/// One VPC.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Vpc {
    /// `vpc-...`.
    pub id: String,
    /// The primary IPv4 range.
    #[serde(with = "crate::state::with::text")]
    pub cidr: Ipv4Net,
    /// The association id of the primary range.
    pub cidr_association_id: String,
    /// `pending` or `available`.
    pub state: VpcState,
    /// Whether this is the region's default VPC.
    pub is_default: bool,
    /// `default` or `dedicated`.
    pub tenancy: Tenancy,
    /// The associated DHCP options.
    pub dhcp_options_id: String,
    /// The `enableDnsSupport` attribute.
    pub dns_support: bool,
    /// The `enableDnsHostnames` attribute.
    pub dns_hostnames: bool,
    /// The `enableNetworkAddressUsageMetrics` attribute.
    pub address_usage_metrics: bool,
    /// The secondary IPv4 ranges (`AssociateVpcCidrBlock`), in the order associated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondary: Vec<SecondaryCidr>,
    /// The IPv6 blocks, in the order associated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ipv6: Vec<Ipv6Block>,
}

/// A secondary IPv4 range of a VPC.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SecondaryCidr {
    /// `vpc-cidr-assoc-...`.
    pub association_id: String,
    /// The range.
    #[serde(with = "crate::state::with::text")]
    pub cidr: Ipv4Net,
}

impl Vpc {
    /// Every IPv4 range of the VPC with its association id: the primary first, then the
    /// secondary ones in the order they were associated.
    pub fn associations(&self) -> impl Iterator<Item = (&str, Ipv4Net)> {
        std::iter::once((self.cidr_association_id.as_str(), self.cidr)).chain(
            self.secondary
                .iter()
                .map(|s| (s.association_id.as_str(), s.cidr)),
        )
    }

    /// Every IPv4 range of the VPC, the primary first.
    pub fn cidrs(&self) -> impl Iterator<Item = Ipv4Net> {
        self.associations().map(|(_, cidr)| cidr)
    }

    /// The range of the VPC that holds `net` whole, if any: a subnet lies within one range.
    pub fn range_holding(&self, net: &Ipv4Net) -> Option<Ipv4Net> {
        self.cidrs().find(|c| c.contains(net))
    }
}

/// Parses an IPv4 CIDR as AWS takes it: exactly `a.b.c.d/n`, each number in decimal without a
/// leading zero, no space around it, and no host bits (`10.0.0.1/16` is refused, not quietly
/// made `10.0.0.0/16`).
pub fn parse_cidr(raw: &str, param: &str) -> Result<Ipv4Net, ApiError> {
    let net = parse_cidr_text(raw, param)?;
    if net.trunc() != net {
        return Err(not_a_cidr(raw, param));
    }
    Ok(net)
}

/// Parses an IPv4 CIDR as a security group rule takes it: written as [`parse_cidr`] requires,
/// but its host bits masked, not refused (`10.0.0.28/29` is the rule of `10.0.0.24/29`, as EC2
/// stores and describes it, and a revoke naming either finds it).
pub fn parse_rule_cidr(raw: &str, param: &str) -> Result<Ipv4Net, ApiError> {
    parse_cidr_text(raw, param).map(|net| net.trunc())
}

fn not_a_cidr(raw: &str, param: &str) -> ApiError {
    ApiError::invalid_parameter(param, raw, "This is not a valid CIDR block.")
}

/// `a.b.c.d/n` as AWS writes it: each number in decimal without a leading zero, no space.
fn parse_cidr_text(raw: &str, param: &str) -> Result<Ipv4Net, ApiError> {
    let bad = || not_a_cidr(raw, param);
    let (addr, len) = raw.split_once('/').ok_or_else(bad)?;
    let canonical_number = |p: &str| {
        !p.is_empty()
            && p.len() <= 3
            && p.bytes().all(|b| b.is_ascii_digit())
            && (p == "0" || !p.starts_with('0'))
    };
    if !canonical_number(len)
        || addr.split('.').count() != 4
        || !addr.split('.').all(canonical_number)
    {
        return Err(bad());
    }
    raw.parse::<Ipv4Net>().map_err(|_| bad())
}

/// `net` as AWS writes it (`10.0.0.0/16`), without the formatting machinery: every describe
/// of a VPC, subnet or route table writes one or more.
pub fn cidr_text(net: &Ipv4Net) -> String {
    let mut out = String::with_capacity(18);
    for (i, octet) in net.addr().octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_decimal(&mut out, octet);
    }
    out.push('/');
    push_decimal(&mut out, net.prefix_len());
    out
}

fn push_decimal(out: &mut String, n: u8) {
    if n >= 100 {
        out.push(char::from(b'0' + n / 100));
    }
    if n >= 10 {
        out.push(char::from(b'0' + n / 10 % 10));
    }
    out.push(char::from(b'0' + n % 10));
}

impl Filterable for (&Vpc, &Region) {
    const NAMES: &'static [&'static str] = &[
        "cidr",
        "cidr-block-association.cidr-block",
        "cidr-block-association.association-id",
        "cidr-block-association.state",
        "dhcp-options-id",
        "ipv6-cidr-block-association.ipv6-cidr-block",
        "ipv6-cidr-block-association.ipv6-pool",
        "ipv6-cidr-block-association.association-id",
        "ipv6-cidr-block-association.state",
        "is-default",
        "owner-id",
        "state",
        "vpc-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (v, region) = *self;
        match name {
            "cidr" => one(cidr_text(&v.cidr)),
            "cidr-block-association.cidr-block" => v.cidrs().map(|c| cidr_text(&c)).collect(),
            "cidr-block-association.association-id" => {
                v.associations().map(|(id, _)| id.to_string()).collect()
            }
            "cidr-block-association.state" => one("associated"),
            "dhcp-options-id" => one(v.dhcp_options_id.clone()),
            "ipv6-cidr-block-association.ipv6-cidr-block" => {
                v.ipv6.iter().map(|b| b.cidr.to_string()).collect()
            }
            "ipv6-cidr-block-association.ipv6-pool" => v
                .ipv6
                .iter()
                .map(|b| vpc_ipv6::pool_of(b).to_string())
                .collect(),
            "ipv6-cidr-block-association.association-id" => {
                v.ipv6.iter().map(|b| b.association_id.clone()).collect()
            }
            "ipv6-cidr-block-association.state" => {
                v.ipv6.iter().map(|_| "associated".to_string()).collect()
            }
            "is-default" => flag(v.is_default),
            "owner-id" => one(region.account_id.clone()),
            "state" => one(v.state.as_str()),
            "vpc-id" => one(v.id.clone()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, v: &Vpc) -> VpcOut {
    let cidr = cidr_text(&v.cidr);
    VpcOut {
        owner_id: Some(region.account_id.clone()),
        instance_tenancy: Some(v.tenancy),
        cidr_block_association_set: Some(
            v.associations()
                .map(|(id, c)| association(id, c, VpcCidrBlockStateCode::Associated))
                .collect(),
        ),
        ipv6_cidr_block_association_set: (!v.ipv6.is_empty()).then(|| {
            v.ipv6
                .iter()
                .map(|b| vpc_ipv6::association(b, VpcCidrBlockStateCode::Associated))
                .collect()
        }),
        is_default: Some(v.is_default),
        tags: region.tags.tag_set(&v.id),
        block_public_access_states: Some(BlockPublicAccessStates {
            internet_gateway_block_mode: Some(BlockPublicAccessMode::Off),
        }),
        vpc_id: Some(v.id.clone()),
        state: Some(v.state),
        cidr_block: Some(cidr),
        dhcp_options_id: Some(v.dhcp_options_id.clone()),
        ..Default::default()
    }
}

/// One of a VPC's IPv4 ranges as AWS writes it, in `state`.
pub(super) fn association(
    id: &str,
    cidr: Ipv4Net,
    state: VpcCidrBlockStateCode,
) -> VpcCidrBlockAssociation {
    VpcCidrBlockAssociation {
        association_id: Some(id.to_string()),
        cidr_block: Some(cidr_text(&cidr)),
        cidr_block_state: Some(VpcCidrBlockState {
            state: Some(state),
            status_message: None,
        }),
    }
}

fn new_vpc(region: &mut Region, cidr: Ipv4Net, tenancy: Tenancy, is_default: bool) -> Vpc {
    Vpc {
        id: region.ids.resource("vpc"),
        cidr,
        cidr_association_id: region.ids.resource("vpc-cidr-assoc"),
        state: VpcState::Available,
        is_default,
        tenancy,
        dhcp_options_id: crate::ec2::dhcp_options::for_new_vpc(region),
        dns_support: true,
        dns_hostnames: is_default,
        address_usage_metrics: false,
        secondary: Vec::new(),
        ipv6: Vec::new(),
    }
}

/// Creates the region's default VPC: 172.31.0.0/16, a default /20 subnet per zone that maps
/// public IPs, an attached internet gateway with a default route to it in the main table,
/// and the default security group.
pub fn create_default(region: &mut Region) {
    let Ok(cidr) = DEFAULT_VPC_CIDR.parse::<Ipv4Net>() else {
        return;
    };
    let vpc = new_vpc(region, cidr, Tenancy::Default, true);
    let vpc_id = vpc.id.clone();
    region.vpcs.0.insert(vpc_id.clone(), vpc);
    let main = route_table::create_main(region, &vpc_id, cidr);
    crate::ec2::network_acl::create_default(region, &vpc_id);
    security_group::create_default(region, &vpc_id);
    subnet::create_defaults(region, &vpc_id, cidr);
    let igw = crate::ec2::internet_gateway::create_attached(region, &vpc_id);
    if let Ok(everywhere) = "0.0.0.0/0".parse::<Ipv4Net>() {
        route_table::add_route_unchecked(
            region,
            &main,
            everywhere,
            route_table::Target::Gateway(igw),
        );
    }
}

/// The VPC `id` for writing, or the right Malformed / NotFound error.
pub(crate) fn get_mut<'a>(region: &'a mut Region, id: &str) -> Result<&'a mut Vpc, ApiError> {
    Kind::Vpc.get_mut(&mut region.vpcs.0, id)
}

/// `CreateDefaultVpc`: the default VPC again, as the region started with it, once the old one
/// is deleted; it counts against the VPC quota like any other.
pub fn create_default_vpc(
    region: &mut Region,
    _input: CreateDefaultVpcRequest,
) -> Result<CreateDefaultVpcResult, ApiError> {
    if region.default_vpc().is_some() {
        return Err(ApiError::new(
            Code::DefaultVpcAlreadyExists,
            "A Default VPC already exists for this account in this region.",
        ));
    }
    if region.vpcs.len() >= region.limits.vpcs {
        return Err(ApiError::new(
            Code::VpcLimitExceeded,
            "The maximum number of VPCs has been reached.",
        ));
    }
    create_default(region);
    let Some(vpc) = region.default_vpc() else {
        return Err(ApiError::new(
            crate::protocol::error::Common::InternalError,
            "The default VPC was not made.",
        ));
    };
    let mut out = render(region, vpc);
    // Answered pending, as CreateVpc answers (the AWS CLI's documented example shows it so).
    out.state = Some(VpcState::Pending);
    Ok(CreateDefaultVpcResult { vpc: Some(out) })
}

/// `CreateVpc`.
pub fn create_vpc(
    region: &mut Region,
    input: CreateVpcRequest,
) -> Result<CreateVpcResult, ApiError> {
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Vpc)?;
    let pool = input.ipv4_ipam_pool_id.as_deref().filter(|p| !p.is_empty());
    let cidr = match pool {
        // The range comes from an IPAM pool: `CidrBlock` of it, or a netmask length.
        Some(pool) => ipam::vpc_range(
            region,
            pool,
            input.cidr_block.as_deref(),
            input.ipv4_netmask_length,
            &tags,
        )?,
        None if input.ipv4_netmask_length.is_some() => {
            return Err(ApiError::invalid_combination(
                "Ipv4NetmaskLength takes a range from an IPAM pool: it needs Ipv4IpamPoolId.",
            ));
        }
        None => {
            let raw = input
                .cidr_block
                .as_deref()
                .ok_or_else(|| ApiError::missing_parameter("CidrBlock"))?;
            parse_cidr(raw, "cidrBlock")?
        }
    };
    if !(16..=28).contains(&cidr.prefix_len()) {
        return Err(ApiError::new(
            Code::InvalidVpcRange,
            format!("The CIDR '{cidr}' is invalid."),
        ));
    }
    let tenancy = input.instance_tenancy.unwrap_or(Tenancy::Default);
    if tenancy == Tenancy::Host {
        return Err(ApiError::invalid_parameter(
            "instanceTenancy",
            "host",
            "A VPC's tenancy must be default or dedicated.",
        ));
    }
    let ask = vpc_ipv6::Ask {
        amazon: input.amazon_provided_ipv6_cidr_block == Some(true),
        border_group: input.ipv6_cidr_block_network_border_group.as_deref(),
        pool: input.ipv6_pool.as_deref(),
        cidr: input.ipv6_cidr_block.as_deref(),
        ipam_pool: input.ipv6_ipam_pool_id.as_deref(),
        netmask_length: input.ipv6_netmask_length,
        tags: &tags,
    };
    let wanted = ask.resolve(region)?;
    if region.vpcs.len() >= region.limits.vpcs {
        return Err(ApiError::new(
            Code::VpcLimitExceeded,
            "The maximum number of VPCs has been reached.",
        ));
    }
    let vpc = new_vpc(region, cidr, tenancy, false);
    let id = vpc.id.clone();
    region.tags.insert(&id, tags);
    region.vpcs.0.insert(id.clone(), vpc);
    if let Some(pool) = pool {
        ipam::vpc_allocated(region, pool, &id, IpNet::V4(cidr));
    }
    route_table::create_main(region, &id, cidr);
    crate::ec2::network_acl::create_default(region, &id);
    security_group::create_default(region, &id);
    if let Some(wanted) = wanted {
        let block = wanted.make(region);
        vpc_ipv6::add(region, &id, block);
    }
    let Some(vpc) = region.vpcs.get(&id) else {
        return Err(Kind::Vpc.not_found(&[&id]));
    };
    let mut out = render(region, vpc);
    // AWS answers CreateVpc while the VPC is still pending (and its IPv6 block still
    // associating); both are ready right after.
    out.state = Some(VpcState::Pending);
    for a in out.ipv6_cidr_block_association_set.iter_mut().flatten() {
        a.ipv6_cidr_block_state = Some(VpcCidrBlockState {
            state: Some(VpcCidrBlockStateCode::Associating),
            status_message: None,
        });
    }
    Ok(CreateVpcResult { vpc: Some(out) })
}

/// `DescribeVpcs`.
pub fn describe_vpcs(
    region: &Region,
    input: DescribeVpcsRequest,
) -> Result<DescribeVpcsResult, ApiError> {
    let filters = Filters::parse::<(&Vpc, &Region)>(input.filters)?;
    let matching = Kind::Vpc.describe(
        &region.consistency,
        &region.vpcs,
        input.vpc_ids.as_deref(),
        region.candidates(Kind::Vpc, &filters),
        |v| filters.matches(&(v, region), region.tags.get(&v.id)),
    )?;
    let (items, next) = page::page(
        matching,
        |v| v.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeVpcsResult {
        next_token: next,
        vpcs: Some(items.into_iter().map(|v| render(region, v)).collect()),
    })
}

/// `DeleteVpc`: refused while anything but its main route table, default network ACL and
/// default security group still lives in it; those go with it.
pub fn delete_vpc(region: &mut Region, input: DeleteVpcRequest) -> Result<(), ApiError> {
    let id = input.vpc_id;
    Kind::Vpc.get(&region.vpcs, &id)?;
    let blocking = region
        .by_vpc
        .get(&id)
        .into_iter()
        .find(|r| match r.split('-').next() {
            Some("rtb") => !region.route_tables.get(r).is_some_and(|t| t.main),
            // The default network ACL goes with its VPC.
            Some("acl") => !region.network_acls.get(r).is_some_and(|a| a.is_default),
            Some("sg") => security_group::default_of(region, &id).as_deref() != Some(r.as_str()),
            Some("i") => region
                .instances
                .get(r)
                .is_some_and(|i| i.state != crate::generated::ec2::InstanceStateName::Terminated),
            // An endpoint blocks its VPC until it is gone, deleting or not.
            Some("vpce") => region.vpc_endpoints.contains_key(r),
            // An accepted or active peering connection holds both its VPCs; a request still
            // pending goes with its VPC, an ended connection holds nothing.
            Some("pcx") => crate::ec2::vpc_peering::holds_vpc(region, r),
            Some("nat") => region.nat_gateways.get(r).is_some_and(|n| {
                !matches!(
                    n.state,
                    crate::generated::ec2::NatGatewayState::Deleted
                        | crate::generated::ec2::NatGatewayState::Failed
                )
            }),
            _ => true,
        });
    let has_gateway = region.internet_gateway_of(&id).is_some();
    let has_lb = region
        .load_balancers
        .values()
        .any(|lb| lb.vpc_id.as_deref() == Some(id.as_str()));
    if blocking.is_some() || has_gateway || has_lb {
        return Err(ApiError::dependency_violation(format!(
            "The vpc '{id}' has dependencies and cannot be deleted."
        )));
    }
    crate::ec2::vpc_peering::vpc_deleted(region, &id);
    route_table::delete_main(region, &id);
    crate::ec2::network_acl::delete_of_vpc(region, &id);
    security_group::delete_default(region, &id);
    region.vpcs.0.remove(&id);
    region.tags.remove_resource(&id);
    crate::ec2::flow_log::resource_gone(region, &id);
    ipam::vpc_released(region, &id, None);
    Ok(())
}

fn set_flag(slot: &mut bool, value: &AttributeBooleanValue, name: &str) -> Result<(), ApiError> {
    match value.value {
        Some(v) => {
            *slot = v;
            Ok(())
        }
        None => Err(ApiError::missing_parameter(&format!("{name}.Value"))),
    }
}

/// `ModifyVpcTenancy`: a VPC's instance tenancy, to `default` only (the model's `VpcTenancy`
/// has no other value); instances launched before keep theirs, later launches default to
/// shared tenancy.
pub fn modify_vpc_tenancy(
    region: &mut Region,
    input: ModifyVpcTenancyRequest,
) -> Result<ModifyVpcTenancyResult, ApiError> {
    let vpc = get_mut(region, &input.vpc_id)?;
    match input.instance_tenancy {
        VpcTenancy::Default => vpc.tenancy = Tenancy::Default,
    }
    Ok(ModifyVpcTenancyResult {
        return_value: Some(true),
    })
}

/// `ModifyVpcAttribute`: one attribute per call, as AWS requires.
pub fn modify_vpc_attribute(
    region: &mut Region,
    input: ModifyVpcAttributeRequest,
) -> Result<(), ApiError> {
    Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let given: Vec<&str> = [
        input
            .enable_dns_hostnames
            .as_ref()
            .map(|_| "enableDnsHostnames"),
        input
            .enable_dns_support
            .as_ref()
            .map(|_| "enableDnsSupport"),
        input
            .enable_network_address_usage_metrics
            .as_ref()
            .map(|_| "enableNetworkAddressUsageMetrics"),
    ]
    .into_iter()
    .flatten()
    .collect();
    match given.len() {
        0 => {
            return Err(ApiError::missing_parameter(
                "EnableDnsHostnames, EnableDnsSupport or EnableNetworkAddressUsageMetrics",
            ));
        }
        1 => {}
        _ => {
            return Err(ApiError::invalid_combination(format!(
                "Fields for multiple attribute types specified: {}",
                given.join(", ")
            )));
        }
    }
    let Some(vpc) = region.vpcs.0.get_mut(&input.vpc_id) else {
        return Err(Kind::Vpc.not_found(&[&input.vpc_id]));
    };
    if let Some(v) = &input.enable_dns_hostnames {
        set_flag(&mut vpc.dns_hostnames, v, "EnableDnsHostnames")?;
    }
    if let Some(v) = &input.enable_dns_support {
        set_flag(&mut vpc.dns_support, v, "EnableDnsSupport")?;
    }
    if let Some(v) = &input.enable_network_address_usage_metrics {
        set_flag(
            &mut vpc.address_usage_metrics,
            v,
            "EnableNetworkAddressUsageMetrics",
        )?;
    }
    Ok(())
}

/// `DescribeVpcAttribute`.
pub fn describe_vpc_attribute(
    region: &Region,
    input: DescribeVpcAttributeRequest,
) -> Result<DescribeVpcAttributeResult, ApiError> {
    let vpc = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?;
    let value = |b: bool| Some(AttributeBooleanValue { value: Some(b) });
    let mut out = DescribeVpcAttributeResult {
        vpc_id: Some(vpc.id.clone()),
        ..Default::default()
    };
    match input.attribute {
        VpcAttributeName::EnableDnsSupport => out.enable_dns_support = value(vpc.dns_support),
        VpcAttributeName::EnableDnsHostnames => out.enable_dns_hostnames = value(vpc.dns_hostnames),
        VpcAttributeName::EnableNetworkAddressUsageMetrics => {
            out.enable_network_address_usage_metrics = value(vpc.address_usage_metrics);
        }
    }
    Ok(out)
}

/// Adds a secondary range to the VPC `vpc_id` (`crate::ec2::vpc_cidr` checks it first).
pub(super) fn add_range(region: &mut Region, vpc_id: &str, range: SecondaryCidr) {
    if let Some(v) = region.vpcs.0.get_mut(vpc_id) {
        v.secondary.push(range);
    }
}

/// Adds an IPv6 block to the VPC `vpc_id` (`crate::ec2::vpc_ipv6` checks it first).
pub(super) fn add_ipv6(region: &mut Region, vpc_id: &str, block: Ipv6Block) {
    if let Some(v) = region.vpcs.0.get_mut(vpc_id) {
        v.ipv6.push(block);
    }
}

/// Removes the IPv6 block of association `association_id` from the VPC `vpc_id`.
pub(super) fn remove_ipv6(region: &mut Region, vpc_id: &str, association_id: &str) {
    if let Some(v) = region.vpcs.0.get_mut(vpc_id) {
        v.ipv6.retain(|b| b.association_id != association_id);
    }
}

/// Removes the secondary range of association `association_id` from the VPC `vpc_id`.
pub(super) fn remove_range(region: &mut Region, vpc_id: &str, association_id: &str) {
    if let Some(v) = region.vpcs.0.get_mut(vpc_id) {
        v.secondary.retain(|s| s.association_id != association_id);
    }
}

impl Region {
    /// The region's default VPC, if it has one.
    pub fn default_vpc(&self) -> Option<&Vpc> {
        self.vpcs.values().find(|v| v.is_default)
    }
}

#[cfg(test)]
mod cidr_tests {
    #![allow(clippy::unwrap_used)]
    use super::{Ipv4Net, cidr_text, parse_cidr};

    #[test]
    fn cidrs_are_taken_as_aws_takes_them() {
        for ok in ["10.0.0.0/16", "0.0.0.0/0", "192.168.10.0/24", "10.0.0.5/32"] {
            assert!(parse_cidr(ok, "cidrBlock").is_ok(), "{ok}");
        }
        for bad in [
            "10.0.0.1/16",
            "010.0.0.0/16",
            "10.0.0.0/016",
            "10.0.0.0/16 ",
            " 10.0.0.0/16",
            "10.0.0/16",
            "10.0.0.0",
            "10.0.0.0/33",
            "10.0.0.256/32",
            "+10.0.0.0/16",
        ] {
            let e = parse_cidr(bad, "cidrBlock").unwrap_err();
            assert_eq!(e.code, "InvalidParameterValue", "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn cidr_text_writes_what_display_writes(a: u32, len in 0u8..=32) {
            let net = Ipv4Net::new(std::net::Ipv4Addr::from(a), len).unwrap().trunc();
            proptest::prop_assert_eq!(cidr_text(&net), net.to_string());
        }
    }
}
