//! Routes to a customer-managed prefix list (`DestinationPrefixListId` of CreateRoute,
//! ReplaceRoute and DeleteRoute): every entry of the list through one target. A list counts
//! as its `MaxEntries` against the table's quota of routes of its family, so a list's resize
//! that a table naming it could not hold fails, as does its deletion while a route names it
//! (both in [`crate::ec2::managed_prefix_list`], which asks [`referencing_tables`] and
//! [`tables_too_small`]). AWS-managed lists reach route tables only through gateway
//! endpoints.

use crate::ec2::Kind;
use crate::ec2::error::Code;
use crate::ec2::prefix_list::{check_exists, is_aws_managed};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::route::{Targets, check_room, resolve_target, routes_held};
use super::{PrefixRoute, RouteTable, Target};

/// Whether list `id`, which a route may name, holds IPv6 entries: one of the account's lists,
/// not being deleted (else `InvalidPrefixListID.NotFound`, `InvalidPrefixListId.Malformed`,
/// or `InvalidParameterValue` for one of AWS's).
fn family_of(region: &Region, id: &str) -> Result<bool, ApiError> {
    match region.prefix_lists.get(id).filter(|l| l.is_usable()) {
        Some(l) => Ok(l.is_ipv6()),
        None if is_aws_managed(region, id) => Err(ApiError::invalid_value(format!(
            "The prefix list {id} is managed by AWS; a route can only name a customer-managed \
             prefix list."
        ))),
        None => Err(check_exists(region, id)
            .err()
            .unwrap_or_else(|| ApiError::invalid_value(format!("No prefix list {id}.")))),
    }
}

fn route_not_found(id: &str, table: &str) -> ApiError {
    ApiError::new(
        Code::InvalidRouteNotFound,
        format!("no route with destination-prefix-list-id {id} in route table {table}"),
    )
}

/// The target of a route to list `id` (of IPv6 entries if `ipv6`) in table `t`: not `local`.
fn target_for(
    region: &Region,
    t: &RouteTable,
    (id, ipv6): (&str, bool),
    targets: &Targets<'_>,
) -> Result<Target, ApiError> {
    let target = resolve_target(region, &t.vpc_id, &t.id, (id, ipv6), targets)?;
    if target == Target::Local {
        return Err(ApiError::invalid_value(format!(
            "A route to the prefix list {id} cannot target the VPC (local)."
        )));
    }
    Ok(target)
}

/// `CreateRoute` to list `id` in table `table_id`.
pub(super) fn create(
    region: &mut Region,
    table_id: &str,
    id: &str,
    targets: &Targets<'_>,
) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, table_id)?;
    let ipv6 = family_of(region, id)?;
    if t.prefix_routes.iter().any(|r| r.prefix_list_id == id) {
        return Err(ApiError::new(
            Code::RouteAlreadyExists,
            format!("The route identified by {id} already exists."),
        ));
    }
    let target = target_for(region, t, (id, ipv6), targets)?;
    let size = crate::ec2::managed_prefix_list::weight(region, Some(id), None);
    check_room(region, t, ipv6, size)?;
    if let Some(t) = region.route_tables.0.get_mut(table_id) {
        t.prefix_routes.push(PrefixRoute {
            prefix_list_id: id.to_string(),
            target,
        });
    }
    Ok(())
}

/// `ReplaceRoute` of the route to list `id` in table `table_id`: a new target, never `local`.
pub(super) fn replace(
    region: &mut Region,
    table_id: &str,
    id: &str,
    targets: &Targets<'_>,
    local: bool,
) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, table_id)?;
    if !t.prefix_routes.iter().any(|r| r.prefix_list_id == id) {
        return Err(route_not_found(id, table_id));
    }
    if local {
        return Err(ApiError::invalid_value(format!(
            "A route to the prefix list {id} cannot target the VPC (local)."
        )));
    }
    let ipv6 = family_of(region, id)?;
    let target = target_for(region, t, (id, ipv6), targets)?;
    if let Some(route) = region
        .route_tables
        .0
        .get_mut(table_id)
        .and_then(|t| t.prefix_routes.iter_mut().find(|r| r.prefix_list_id == id))
    {
        route.target = target;
    }
    Ok(())
}

/// `DeleteRoute` of the route to list `id` in table `table_id`.
pub(super) fn delete(region: &mut Region, table_id: &str, id: &str) -> Result<(), ApiError> {
    let t = Kind::RouteTable.get(&region.route_tables, table_id)?;
    if !t.prefix_routes.iter().any(|r| r.prefix_list_id == id) {
        return Err(route_not_found(id, table_id));
    }
    if let Some(t) = region.route_tables.0.get_mut(table_id) {
        t.prefix_routes.retain(|r| r.prefix_list_id != id);
    }
    Ok(())
}

/// The route tables with a route to list `id`, in id order.
pub fn referencing_tables(region: &Region, id: &str) -> Vec<String> {
    region
        .route_tables
        .values()
        .filter(|t| t.prefix_routes.iter().any(|r| r.prefix_list_id == id))
        .map(|t| t.id.clone())
        .collect()
}

/// The route tables naming list `id` (of IPv6 entries if `ipv6`) whose routes of its family
/// would exceed their quota were the list `size` entries long.
pub fn tables_too_small(region: &Region, id: &str, ipv6: bool, size: i32) -> Vec<String> {
    referencing_tables(region, id)
        .into_iter()
        .filter(|t| {
            region.route_tables.get(t).is_some_and(|t| {
                routes_held(region, t, ipv6, Some((id, size)))
                    > region.limits.routes_per_route_table
            })
        })
        .collect()
}
