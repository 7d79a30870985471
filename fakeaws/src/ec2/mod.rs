//! EC2 semantics: one module per resource, each owning its records, actions, filters and
//! dependency rules; `impl Api for Region` routes each generated operation to its module.

pub mod availability_zone;
pub mod filter;
pub mod internet_gateway;
pub mod page;
pub mod subnet;
pub mod tags;
pub mod vpc;

use std::collections::BTreeMap;

use crate::generated::ec2::*;
use crate::ids;
use crate::protocol::error::ApiError;
use crate::region::Region;

/// How a resource type names itself in ids and error codes.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// The id prefix, such as `vpc`.
    pub prefix: &'static str,
    /// The error code stem, such as `InvalidVpcID`.
    pub code: &'static str,
    /// The noun in messages, such as `vpc`.
    pub noun: &'static str,
}

impl Kind {
    /// `<code>.NotFound` naming `ids`.
    pub fn not_found(&self, ids: &[&str]) -> ApiError {
        let message = if ids.len() == 1 {
            format!("The {} ID '{}' does not exist", self.noun, ids[0])
        } else {
            format!("The {} IDs '{}' do not exist", self.noun, ids.join(", "))
        };
        ApiError::new(format!("{}.NotFound", self.code), message)
    }

    /// `<code>.Malformed` for `id`.
    pub fn malformed(&self, id: &str) -> ApiError {
        ApiError::new(
            format!("{}.Malformed", self.code),
            format!("Invalid id: \"{id}\" (expecting \"{}-...\")", self.prefix),
        )
    }

    /// The record `id` of `map`, or the right Malformed / NotFound error.
    pub fn get<'a, T>(&self, map: &'a BTreeMap<String, T>, id: &str) -> Result<&'a T, ApiError> {
        if !ids::is_well_formed(id, self.prefix) {
            return Err(self.malformed(id));
        }
        map.get(id).ok_or_else(|| self.not_found(&[id]))
    }

    /// The records named by `ids`, in id order, failing on any malformed or missing id;
    /// `None` selects every record.
    pub fn select<'a, T>(
        &self,
        map: &'a BTreeMap<String, T>,
        ids: Option<&[String]>,
    ) -> Result<Vec<&'a T>, ApiError> {
        let Some(ids) = ids.filter(|i| !i.is_empty()) else {
            return Ok(map.values().collect());
        };
        if let Some(bad) = ids.iter().find(|i| !ids::is_well_formed(i, self.prefix)) {
            return Err(self.malformed(bad));
        }
        let missing: Vec<&str> = ids
            .iter()
            .filter(|i| !map.contains_key(i.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(self.not_found(&missing));
        }
        let wanted: std::collections::BTreeSet<&str> = ids.iter().map(String::as_str).collect();
        Ok(map
            .iter()
            .filter(|(k, _)| wanted.contains(k.as_str()))
            .map(|(_, v)| v)
            .collect())
    }
}

impl Api for Region {
    fn describe_availability_zones(
        &mut self,
        input: DescribeAvailabilityZonesRequest,
    ) -> Result<DescribeAvailabilityZonesResult, ApiError> {
        availability_zone::describe_availability_zones(self, input)
    }

    fn create_vpc(&mut self, input: CreateVpcRequest) -> Result<CreateVpcResult, ApiError> {
        vpc::create_vpc(self, input)
    }

    fn describe_vpcs(
        &mut self,
        input: DescribeVpcsRequest,
    ) -> Result<DescribeVpcsResult, ApiError> {
        vpc::describe_vpcs(self, input)
    }

    fn delete_vpc(&mut self, input: DeleteVpcRequest) -> Result<(), ApiError> {
        vpc::delete_vpc(self, input)
    }

    fn modify_vpc_attribute(&mut self, input: ModifyVpcAttributeRequest) -> Result<(), ApiError> {
        vpc::modify_vpc_attribute(self, input)
    }

    fn describe_vpc_attribute(
        &mut self,
        input: DescribeVpcAttributeRequest,
    ) -> Result<DescribeVpcAttributeResult, ApiError> {
        vpc::describe_vpc_attribute(self, input)
    }

    fn create_subnet(
        &mut self,
        input: CreateSubnetRequest,
    ) -> Result<CreateSubnetResult, ApiError> {
        subnet::create_subnet(self, input)
    }

    fn describe_subnets(
        &mut self,
        input: DescribeSubnetsRequest,
    ) -> Result<DescribeSubnetsResult, ApiError> {
        subnet::describe_subnets(self, input)
    }

    fn delete_subnet(&mut self, input: DeleteSubnetRequest) -> Result<(), ApiError> {
        subnet::delete_subnet(self, input)
    }

    fn modify_subnet_attribute(
        &mut self,
        input: ModifySubnetAttributeRequest,
    ) -> Result<(), ApiError> {
        subnet::modify_subnet_attribute(self, input)
    }

    fn create_internet_gateway(
        &mut self,
        input: CreateInternetGatewayRequest,
    ) -> Result<CreateInternetGatewayResult, ApiError> {
        internet_gateway::create_internet_gateway(self, input)
    }

    fn attach_internet_gateway(
        &mut self,
        input: AttachInternetGatewayRequest,
    ) -> Result<(), ApiError> {
        internet_gateway::attach_internet_gateway(self, input)
    }

    fn detach_internet_gateway(
        &mut self,
        input: DetachInternetGatewayRequest,
    ) -> Result<(), ApiError> {
        internet_gateway::detach_internet_gateway(self, input)
    }

    fn delete_internet_gateway(
        &mut self,
        input: DeleteInternetGatewayRequest,
    ) -> Result<(), ApiError> {
        internet_gateway::delete_internet_gateway(self, input)
    }

    fn describe_internet_gateways(
        &mut self,
        input: DescribeInternetGatewaysRequest,
    ) -> Result<DescribeInternetGatewaysResult, ApiError> {
        internet_gateway::describe_internet_gateways(self, input)
    }

    fn create_tags(&mut self, input: CreateTagsRequest) -> Result<(), ApiError> {
        tags::create_tags(self, input)
    }

    fn delete_tags(&mut self, input: DeleteTagsRequest) -> Result<(), ApiError> {
        tags::delete_tags(self, input)
    }

    fn describe_tags(
        &mut self,
        input: DescribeTagsRequest,
    ) -> Result<DescribeTagsResult, ApiError> {
        tags::describe_tags(self, input)
    }
}
