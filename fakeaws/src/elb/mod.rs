//! Classic Elastic Load Balancing semantics; `impl Api for Region` routes each generated
//! operation to its module.

pub mod load_balancer;

use crate::generated::elb::*;
use crate::protocol::error::ApiError;
use crate::region::Region;

impl Api for Region {
    fn create_load_balancer(
        &mut self,
        input: CreateAccessPointInput,
    ) -> Result<CreateAccessPointOutput, ApiError> {
        load_balancer::create_load_balancer(self, input)
    }

    fn describe_load_balancers(
        &mut self,
        input: DescribeAccessPointsInput,
    ) -> Result<DescribeAccessPointsOutput, ApiError> {
        load_balancer::describe_load_balancers(self, input)
    }

    fn delete_load_balancer(
        &mut self,
        input: DeleteAccessPointInput,
    ) -> Result<DeleteAccessPointOutput, ApiError> {
        load_balancer::delete_load_balancer(self, input)
    }
}
