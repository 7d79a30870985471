//! Subnet associations: AssociateRouteTable, DisassociateRouteTable,
//! ReplaceRouteTableAssociation (which also moves a VPC's main association), and a deleted
//! subnet's association forgotten.

use crate::ec2::Kind;
use crate::ec2::error::{self, Code};
use crate::generated::ec2::{
    AssociateRouteTableRequest, AssociateRouteTableResult, DisassociateRouteTableRequest,
    ReplaceRouteTableAssociationRequest, ReplaceRouteTableAssociationResult,
    RouteTableAssociationState, RouteTableAssociationStateCode,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

pub(super) fn associated() -> RouteTableAssociationState {
    RouteTableAssociationState {
        state: Some(RouteTableAssociationStateCode::Associated),
        status_message: None,
    }
}

/// Removes a deleted subnet's association, as AWS does implicitly.
pub fn forget_subnet(region: &mut Region, subnet_id: &str) {
    for t in region.route_tables.0.values_mut() {
        t.associations
            .retain(|a| a.subnet_id.as_deref() != Some(subnet_id));
    }
}

/// `AssociateRouteTable` with a subnet.
pub fn associate_route_table(
    region: &mut Region,
    input: AssociateRouteTableRequest,
) -> Result<AssociateRouteTableResult, ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    let subnet_id = input
        .subnet_id
        .as_deref()
        .ok_or_else(|| ApiError::missing_parameter("SubnetId"))?;
    let s = Kind::Subnet.get(&region.subnets, subnet_id)?;
    if s.vpc_id != t.vpc_id {
        return Err(different_networks(&t.id, subnet_id));
    }
    if let Some(other) = region.route_tables.values().find(|o| {
        o.associations
            .iter()
            .any(|a| a.subnet_id.as_deref() == Some(subnet_id))
    }) {
        return Err(ApiError::new(
            Code::ResourceAlreadyAssociated,
            format!(
                "the specified association for route table {} conflicts with an existing association ({})",
                t.id, other.id
            ),
        ));
    }
    let id = region.ids.resource("rtbassoc");
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.associations.push(Association {
            id: id.clone(),
            subnet_id: Some(subnet_id.to_string()),
        });
    }
    Ok(AssociateRouteTableResult {
        association_id: Some(id),
        association_state: Some(associated()),
    })
}

/// `DisassociateRouteTable`: not the main association.
pub fn disassociate_route_table(
    region: &mut Region,
    input: DisassociateRouteTableRequest,
) -> Result<(), ApiError> {
    let id = input.association_id;
    let Some(table) = region
        .route_tables
        .0
        .values_mut()
        .find(|t| t.associations.iter().any(|a| a.id == id))
    else {
        return Err(error::association_not_found(&id));
    };
    if table.main_association().is_some_and(|a| a.id == id) {
        return Err(ApiError::invalid_value(format!(
            "cannot disassociate the main route table association {id}"
        )));
    }
    table.associations.retain(|a| a.id != id);
    Ok(())
}

/// `InvalidParameterValue` for a table and a subnet of different VPCs.
fn different_networks(table_id: &str, subnet_id: &str) -> ApiError {
    ApiError::invalid_value(format!(
        "Route table {table_id} and subnet {subnet_id} belong to different networks."
    ))
}

/// `ReplaceRouteTableAssociation`: the association `AssociationId` ends and its subnet is
/// associated with `RouteTableId` under a new association id, as AWS answers. The main
/// association's replacement makes `RouteTableId` its VPC's main table, and the table it
/// leaves an ordinary one (which may then be deleted).
pub fn replace_route_table_association(
    region: &mut Region,
    input: ReplaceRouteTableAssociationRequest,
) -> Result<ReplaceRouteTableAssociationResult, ApiError> {
    let id = input.association_id;
    let Some((old_table, vpc_id, subnet_id)) = region.route_tables.values().find_map(|t| {
        let a = t.associations.iter().find(|a| a.id == id)?;
        Some((t.id.clone(), t.vpc_id.clone(), a.subnet_id.clone()))
    }) else {
        return Err(error::association_not_found(&id));
    };
    let new_table = Kind::RouteTable.get(&region.route_tables, &input.route_table_id)?;
    if new_table.vpc_id != vpc_id {
        return Err(match &subnet_id {
            Some(subnet) => different_networks(&new_table.id, subnet),
            None => ApiError::invalid_value(format!(
                "Route table {} does not belong to {vpc_id}, the VPC of main route table \
                 association {id}.",
                new_table.id
            )),
        });
    }
    let main = subnet_id.is_none();
    let new_id = region.ids.resource("rtbassoc");
    if let Some(t) = region.route_tables.0.get_mut(&old_table) {
        t.associations.retain(|a| a.id != id);
        if main {
            t.main = false;
        }
    }
    if let Some(t) = region.route_tables.0.get_mut(&input.route_table_id) {
        t.associations.push(Association {
            id: new_id.clone(),
            subnet_id,
        });
        if main {
            t.main = true;
        }
    }
    Ok(ReplaceRouteTableAssociationResult {
        new_association_id: Some(new_id),
        association_state: Some(associated()),
    })
}
