//! Who may create volumes of a snapshot: ModifySnapshotAttribute, DescribeSnapshotAttribute
//! and ResetSnapshotAttribute (`createVolumePermission`; `productCodes` is described, always
//! empty, and changed by no call).
//!
//! As the API reference documents: one call adds or removes, never both; at most 500
//! modifications a call; encrypted snapshots cannot be made public, and those encrypted with
//! the account's AWS managed key for EBS cannot be shared with other accounts
//! (`OperationNotPermitted` `Encrypted snapshots with EBS default key cannot be shared`, AWS's
//! words); one encrypted with a key of the account's own can. DescribeSnapshots'
//! `RestorableByUserIds` finds what is shared.

use crate::ec2::Kind;
use crate::ec2::error::Code;
use crate::ec2::snapshot::Snapshot;
use crate::generated::ec2::{
    CreateVolumePermission, DescribeSnapshotAttributeRequest, DescribeSnapshotAttributeResult,
    ModifySnapshotAttributeRequest, OperationType, PermissionGroup, ResetSnapshotAttributeRequest,
    SnapshotAttributeName,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The most modifications one call makes.
const MAX_MODIFICATIONS: usize = 500;

/// One create volume permission a call adds or removes.
#[derive(Debug, PartialEq, Eq)]
enum Permission {
    /// The group `all`.
    Public,
    /// An account.
    Account(String),
}

/// `InvalidUserID.Malformed` for `id`, unless it is an account id of 12 digits; AWS's words.
pub fn check_user_id(id: &str) -> Result<(), ApiError> {
    if crate::ec2::account::is_account_id(id) {
        Ok(())
    } else {
        Err(ApiError::new(
            Code::InvalidUserIDMalformed,
            format!("User ID '{id}' is invalid"),
        ))
    }
}

fn account(id: &str) -> Result<Permission, ApiError> {
    check_user_id(id)?;
    Ok(Permission::Account(id.to_string()))
}

fn permission(p: &CreateVolumePermission) -> Result<Permission, ApiError> {
    match (&p.user_id, &p.group) {
        (Some(id), None) => account(id),
        (None, Some(PermissionGroup::All)) => Ok(Permission::Public),
        _ => Err(ApiError::invalid_value(
            "A create volume permission names exactly one of UserId and Group.",
        )),
    }
}

/// The call's operation and permissions, from `CreateVolumePermission` or from
/// `OperationType` with `UserIds` and `GroupNames`.
fn change_of(input: &ModifySnapshotAttributeRequest) -> Result<(bool, Vec<Permission>), ApiError> {
    if input.attribute == Some(SnapshotAttributeName::ProductCodes) {
        return Err(ApiError::invalid_parameter(
            "Attribute",
            "productCodes",
            "Only volume creation permissions (createVolumePermission) can be modified.",
        ));
    }
    let listed =
        input.user_ids.iter().flatten().count() + input.group_names.iter().flatten().count();
    let (add, permissions) = match &input.create_volume_permission {
        Some(m) => {
            if listed > 0 || input.operation_type.is_some() {
                return Err(ApiError::invalid_combination(
                    "Give CreateVolumePermission, or OperationType with UserIds and GroupNames, not both.",
                ));
            }
            let add: Vec<&CreateVolumePermission> = m.add.iter().flatten().collect();
            let remove: Vec<&CreateVolumePermission> = m.remove.iter().flatten().collect();
            if !add.is_empty() && !remove.is_empty() {
                return Err(ApiError::invalid_combination(
                    "A snapshot's create volume permissions are added or removed in one call, not both.",
                ));
            }
            let is_add = !add.is_empty();
            let items = if is_add { add } else { remove };
            let permissions = items
                .into_iter()
                .map(permission)
                .collect::<Result<Vec<_>, _>>()?;
            (is_add, permissions)
        }
        None => {
            let Some(operation) = input.operation_type else {
                return Err(ApiError::missing_parameter("OperationType"));
            };
            let mut permissions = Vec::new();
            for id in input.user_ids.iter().flatten() {
                permissions.push(account(id)?);
            }
            for g in input.group_names.iter().flatten() {
                if g != PermissionGroup::All.as_str() {
                    return Err(ApiError::invalid_parameter(
                        "GroupName",
                        g,
                        "The only group is all.",
                    ));
                }
                permissions.push(Permission::Public);
            }
            (operation == OperationType::Add, permissions)
        }
    };
    if permissions.is_empty() {
        return Err(ApiError::missing_parameter("CreateVolumePermission"));
    }
    if permissions.len() > MAX_MODIFICATIONS {
        return Err(ApiError::invalid_value(format!(
            "A call makes at most {MAX_MODIFICATIONS} modifications to a snapshot's permissions ({} given).",
            permissions.len()
        )));
    }
    Ok((add, permissions))
}

/// `ModifySnapshotAttribute` (`createVolumePermission`).
pub fn modify_snapshot_attribute(
    region: &mut Region,
    input: ModifySnapshotAttributeRequest,
) -> Result<(), ApiError> {
    let (add, permissions) = change_of(&input)?;
    let snapshot = Kind::Snapshot.get(&region.snapshots, &input.snapshot_id)?;
    let public = permissions.iter().any(|p| matches!(p, Permission::Public));
    let aws_managed = crate::ec2::snapshot::key_of(region, snapshot)
        .is_some_and(|k| crate::ec2::volume::is_aws_managed(region, &k));
    if add && snapshot.encrypted && (public || aws_managed) {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            "Encrypted snapshots with EBS default key cannot be shared",
        ));
    }
    let Some(snapshot) = crate::ec2::snapshot::get_mut(region, &input.snapshot_id) else {
        return Ok(());
    };
    for p in permissions {
        match (p, add) {
            (Permission::Public, add) => snapshot.public = add,
            (Permission::Account(id), true) => {
                if !snapshot.shared_with.contains(&id) {
                    snapshot.shared_with.push(id);
                }
            }
            (Permission::Account(id), false) => snapshot.shared_with.retain(|w| *w != id),
        }
    }
    Ok(())
}

fn render_permissions(s: &Snapshot) -> Vec<CreateVolumePermission> {
    let public = s.public.then_some(CreateVolumePermission {
        group: Some(PermissionGroup::All),
        user_id: None,
    });
    public
        .into_iter()
        .chain(s.shared_with.iter().map(|id| CreateVolumePermission {
            user_id: Some(id.clone()),
            group: None,
        }))
        .collect()
}

/// `DescribeSnapshotAttribute`.
pub fn describe_snapshot_attribute(
    region: &mut Region,
    input: DescribeSnapshotAttributeRequest,
) -> Result<DescribeSnapshotAttributeResult, ApiError> {
    let s = Kind::Snapshot.get(&region.snapshots, &input.snapshot_id)?;
    let mut out = DescribeSnapshotAttributeResult {
        snapshot_id: Some(s.id.clone()),
        ..Default::default()
    };
    match input.attribute {
        SnapshotAttributeName::CreateVolumePermission => {
            out.create_volume_permissions = Some(render_permissions(s));
        }
        SnapshotAttributeName::ProductCodes => out.product_codes = Some(Vec::new()),
    }
    Ok(out)
}

/// `ResetSnapshotAttribute` (`createVolumePermission`): shared with no one, private.
pub fn reset_snapshot_attribute(
    region: &mut Region,
    input: ResetSnapshotAttributeRequest,
) -> Result<(), ApiError> {
    Kind::Snapshot.get(&region.snapshots, &input.snapshot_id)?;
    if input.attribute == SnapshotAttributeName::ProductCodes {
        return Err(ApiError::invalid_parameter(
            "Attribute",
            "productCodes",
            "Only volume creation permissions (createVolumePermission) can be reset.",
        ));
    }
    if let Some(s) = crate::ec2::snapshot::get_mut(region, &input.snapshot_id) {
        s.public = false;
        s.shared_with.clear();
    }
    Ok(())
}
