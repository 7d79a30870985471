//! An image's attributes and who may launch it: ModifyImageAttribute, DescribeImageAttribute
//! and ResetImageAttribute, and the account's block public access for AMIs
//! (GetImageBlockPublicAccessState, EnableImageBlockPublicAccess,
//! DisableImageBlockPublicAccess).
//!
//! What AWS documents and the fake does:
//!
//! - ModifyImageAttribute changes one attribute a call: `description`, `imdsSupport` (only
//!   to `v2.0`, never back) or `launchPermission`, named by `Attribute` (with `Value`, or
//!   `OperationType` and `UserIds`/`UserGroups`/`OrganizationArns`/`OrganizationalUnitArns`)
//!   or by its own parameter (`Description`, `ImdsSupport`, `LaunchPermission` with `Add` and
//!   `Remove`). Only the owner changes an image.
//! - The group `all` makes an image public (`Public`, the `is-public` filter, DescribeImages'
//!   `ExecutableUsers` `all`); accounts, organizations and organizational units are kept and
//!   listed by DescribeImageAttribute `launchPermission`. ResetImageAttribute takes them all
//!   away, public sharing included.
//! - Block public access is on for a new account (the EC2 user guide's default for new
//!   accounts): making an image public is then `OperationNotPermitted`, in AWS's words.
//!   Enabling or disabling it takes effect at the clock's next step (AWS: up to 10 minutes,
//!   during which GetImageBlockPublicAccessState still answers the old state; transition
//!   subject `imageBlockPublicAccess`).
//! - An image of encrypted snapshots is made public by no one (`UnsupportedOperation`), and
//!   one with a snapshot of the account's AWS managed key for EBS is shared with no account
//!   or organization either (`InvalidParameter`), in AWS's words.
//! - DescribeImageAttribute `blockDeviceMapping` is `AuthFailure`, as the API reference
//!   documents (describe the image instead).

use crate::ec2::Kind;
use crate::ec2::error::Code;
use crate::generated::ec2::{
    AttributeValue, DescribeImageAttributeRequest, DisableImageBlockPublicAccessRequest,
    DisableImageBlockPublicAccessResult, EnableImageBlockPublicAccessRequest,
    EnableImageBlockPublicAccessResult, GetImageBlockPublicAccessStateRequest,
    GetImageBlockPublicAccessStateResult, ImageAttribute, ImageAttributeName,
    ImageBlockPublicAccessDisabledState, ImageBlockPublicAccessEnabledState, LaunchPermission,
    ManagedBy, ModifyImageAttributeRequest, OperationType, PermissionGroup,
    ResetImageAttributeRequest,
};
use crate::protocol::error::{ApiError, Common};
use crate::region::Region;
use crate::sim::transitions::Subject;

/// Someone besides its owner who may launch an image.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Grantee {
    /// An account, by its 12-digit id.
    Account(String),
    /// An organization, by its ARN.
    Organization(String),
    /// An organizational unit, by its ARN.
    OrganizationalUnit(String),
}

impl Grantee {
    fn render(&self) -> LaunchPermission {
        let mut p = LaunchPermission::default();
        match self {
            Grantee::Account(id) => p.user_id = Some(id.clone()),
            Grantee::Organization(arn) => p.organization_arn = Some(arn.clone()),
            Grantee::OrganizationalUnit(arn) => p.organizational_unit_arn = Some(arn.clone()),
        }
        p
    }
}

/// One launch permission a call adds or removes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Permission {
    /// The group `all`: the image is public.
    Public,
    /// A named grantee.
    Named(Grantee),
}

/// The account's block public access for AMIs, per region.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Sharing {
    /// Whether making an image public is refused (`block-new-sharing`).
    pub blocked: bool,
}

impl Default for Sharing {
    /// A new account's: blocked.
    fn default() -> Self {
        Sharing { blocked: true }
    }
}

const BLOCKED: &str = "block-new-sharing";
const UNBLOCKED: &str = "unblocked";

impl Sharing {
    fn state(&self) -> &'static str {
        if self.blocked { BLOCKED } else { UNBLOCKED }
    }
}

/// The end of an Enable/DisableImageBlockPublicAccess: `state` is the state it asked for.
pub fn advance(region: &mut Region, state: &str) {
    region.image_sharing.blocked = state == BLOCKED;
}

/// `InvalidAMIAttributeItemValue`, in AWS's words.
fn bad_item(value: &str, item_type: &str) -> ApiError {
    ApiError::new(
        Code::InvalidAMIAttributeItemValue,
        format!("Invalid attribute item value \"{value}\" for {item_type} item type."),
    )
}

fn account(id: &str) -> Result<Permission, ApiError> {
    if crate::ec2::account::is_account_id(id) {
        Ok(Permission::Named(Grantee::Account(id.to_string())))
    } else {
        Err(bad_item(id, "UserId"))
    }
}

fn group(name: &str) -> Result<Permission, ApiError> {
    if name == PermissionGroup::All.as_str() {
        Ok(Permission::Public)
    } else {
        Err(bad_item(name, "UserGroup"))
    }
}

/// An organization's ARN: `arn:<partition>:organizations::<account>:organization/o-...`.
fn organization(arn: &str) -> Result<Permission, ApiError> {
    if organizations_arn(arn, "organization/o-") {
        Ok(Permission::Named(Grantee::Organization(arn.to_string())))
    } else {
        Err(bad_item(arn, "OrganizationArn"))
    }
}

/// An organizational unit's ARN: `arn:<partition>:organizations::<account>:ou/o-.../ou-...`.
fn organizational_unit(arn: &str) -> Result<Permission, ApiError> {
    if organizations_arn(arn, "ou/o-") && arn.contains("/ou-") {
        Ok(Permission::Named(Grantee::OrganizationalUnit(
            arn.to_string(),
        )))
    } else {
        Err(bad_item(arn, "OrganizationalUnitArn"))
    }
}

fn organizations_arn(arn: &str, resource: &str) -> bool {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(partition), Some("organizations"), Some(""), Some(account), Some(rest)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    partition.starts_with("aws")
        && crate::ec2::account::is_account_id(account)
        && rest.starts_with(resource)
        && rest.len() > resource.len()
}

/// One `LaunchPermission` item: exactly one of its four members.
fn permission(p: &LaunchPermission) -> Result<Permission, ApiError> {
    match (
        &p.user_id,
        &p.group,
        &p.organization_arn,
        &p.organizational_unit_arn,
    ) {
        (Some(id), None, None, None) => account(id),
        (None, Some(g), None, None) => group(g.as_str()),
        (None, None, Some(arn), None) => organization(arn),
        (None, None, None, Some(arn)) => organizational_unit(arn),
        _ => Err(ApiError::invalid_value(
            "A launch permission names exactly one of UserId, Group, OrganizationArn and OrganizationalUnitArn.",
        )),
    }
}

/// What one ModifyImageAttribute call changes.
enum Change {
    Description(String),
    ImdsV2,
    Permissions {
        add: Vec<Permission>,
        remove: Vec<Permission>,
    },
}

/// The legacy form's permissions: `UserIds`, `UserGroups`, `OrganizationArns`,
/// `OrganizationalUnitArns`.
fn listed(input: &ModifyImageAttributeRequest) -> Result<Vec<Permission>, ApiError> {
    let mut out = Vec::new();
    for id in input.user_ids.iter().flatten() {
        out.push(account(id)?);
    }
    for g in input.user_groups.iter().flatten() {
        out.push(group(g)?);
    }
    for arn in input.organization_arns.iter().flatten() {
        out.push(organization(arn)?);
    }
    for arn in input.organizational_unit_arns.iter().flatten() {
        out.push(organizational_unit(arn)?);
    }
    Ok(out)
}

fn has_listed(input: &ModifyImageAttributeRequest) -> bool {
    [
        &input.user_ids,
        &input.user_groups,
        &input.organization_arns,
        &input.organizational_unit_arns,
    ]
    .iter()
    .any(|l| l.as_ref().is_some_and(|l| !l.is_empty()))
}

/// The one change a ModifyImageAttribute request asks for.
fn change_of(input: &ModifyImageAttributeRequest) -> Result<Change, ApiError> {
    // The attributes named by their own parameter; `Attribute` may name the same one too (as
    // terraform's provider sends it), never another.
    let named: Vec<&str> = [
        (input.description.is_some(), "description"),
        (input.imds_support.is_some(), "imdsSupport"),
        (input.launch_permission.is_some(), "launchPermission"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect();
    let other_attribute = match (named.first(), input.attribute.as_deref()) {
        (Some(n), Some(a)) => *n != a,
        _ => false,
    };
    if named.len() > 1 || other_attribute {
        return Err(ApiError::invalid_combination(
            "ModifyImageAttribute changes one attribute at a time: Description, ImdsSupport or LaunchPermission, or Attribute naming the same one.",
        ));
    }
    let legacy = has_listed(input) || input.operation_type.is_some();
    let launch = input.attribute.as_deref() == Some("launchPermission");
    if legacy && input.launch_permission.is_some() {
        return Err(ApiError::invalid_combination(
            "Give LaunchPermission, or OperationType with UserIds, UserGroups, OrganizationArns and OrganizationalUnitArns, not both.",
        ));
    }
    if legacy && !launch {
        return Err(ApiError::invalid_combination(
            "OperationType, UserIds, UserGroups, OrganizationArns and OrganizationalUnitArns go only with the Attribute launchPermission.",
        ));
    }
    if input.value.is_some() && launch {
        return Err(ApiError::invalid_combination(
            "Value goes only with the Attribute description or imdsSupport.",
        ));
    }
    if let Some(d) = &input.description {
        return Ok(Change::Description(d.value.clone().unwrap_or_default()));
    }
    if let Some(v) = &input.imds_support {
        return imds(v.value.as_deref().unwrap_or_default());
    }
    if let Some(l) = &input.launch_permission {
        let add = l.add.iter().flatten().map(permission);
        let remove = l.remove.iter().flatten().map(permission);
        return Ok(Change::Permissions {
            add: add.collect::<Result<_, _>>()?,
            remove: remove.collect::<Result<_, _>>()?,
        });
    }
    let value = || {
        input
            .value
            .clone()
            .ok_or_else(|| ApiError::missing_parameter("Value"))
    };
    match input.attribute.as_deref() {
        None => Err(ApiError::missing_parameter("Attribute")),
        Some("description") => Ok(Change::Description(value()?)),
        Some("imdsSupport") => imds(&value()?),
        Some("launchPermission") => {
            let listed = listed(input)?;
            match input.operation_type {
                None => Err(ApiError::missing_parameter("OperationType")),
                Some(_) if listed.is_empty() => Err(ApiError::missing_parameter("UserId")),
                Some(OperationType::Add) => Ok(Change::Permissions {
                    add: listed,
                    remove: Vec::new(),
                }),
                Some(OperationType::Remove) => Ok(Change::Permissions {
                    add: Vec::new(),
                    remove: listed,
                }),
            }
        }
        Some(other) => Err(ApiError::invalid_parameter(
            "Attribute",
            other,
            "Valid values: description | imdsSupport | launchPermission",
        )),
    }
}

fn imds(value: &str) -> Result<Change, ApiError> {
    if value == "v2.0" {
        Ok(Change::ImdsV2)
    } else {
        Err(ApiError::invalid_parameter(
            "ImdsSupport",
            value,
            "The only value is v2.0.",
        ))
    }
}

/// Whether any snapshot of image `id` is encrypted (with any key, or, with `aws_managed`, with
/// the account's AWS managed key for EBS).
fn encrypted(region: &Region, id: &str, aws_managed: bool) -> bool {
    region.images.get(id).is_some_and(|i| {
        i.snapshots().any(|s| {
            region.snapshots.get(&s).is_some_and(|s| {
                s.encrypted
                    && (!aws_managed
                        || crate::ec2::snapshot::key_of(region, s)
                            .is_some_and(|k| crate::ec2::volume::is_aws_managed(region, &k)))
            })
        })
    })
}

/// `ModifyImageAttribute`.
pub fn modify_image_attribute(
    region: &mut Region,
    input: ModifyImageAttributeRequest,
) -> Result<(), ApiError> {
    let change = change_of(&input)?;
    let image = crate::ec2::image::owned(region, &input.image_id)?;
    if let Change::Permissions { add, .. } = &change
        && !add.is_empty()
        && image.disabled
    {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            format!(
                "The AMI {} is disabled, and a disabled AMI cannot be shared: enable it with EnableImage first.",
                image.id
            ),
        ));
    }
    if let Change::Permissions { add, .. } = &change
        && add.contains(&Permission::Public)
        && region.image_sharing.blocked
    {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            "You can\u{2019}t publicly share this image because block public access for AMIs is enabled for this account. To publicly share the image, you must call the DisableImageBlockPublicAccess API.",
        ));
    }
    if let Change::Permissions { add, .. } = &change
        && !add.is_empty()
        && encrypted(region, &input.image_id, !add.contains(&Permission::Public))
    {
        return Err(if add.contains(&Permission::Public) {
            ApiError::new(
                Code::UnsupportedOperation,
                "Encrypted snapshots can\u{2019}t be shared publicly. Specify another snapshot.",
            )
        } else {
            ApiError::new(
                Code::InvalidParameter,
                "Snapshots encrypted with the AWS Managed CMK can't be shared. Specify another snapshot.",
            )
        });
    }
    let description = match &change {
        Change::Description(d) => Some(crate::ec2::snapshot::checked_description(Some(d.clone()))?),
        _ => None,
    };
    let Some(image) = crate::ec2::image::get_mut(region, &input.image_id) else {
        return Err(crate::ec2::error::image_not_found(&input.image_id));
    };
    match change {
        Change::Description(_) => image.description = description.unwrap_or_default(),
        Change::ImdsV2 => image.imds_v2 = true,
        Change::Permissions { add, remove } => {
            for p in remove {
                match p {
                    Permission::Public => image.public = false,
                    Permission::Named(g) => image.launch_permissions.retain(|h| *h != g),
                }
            }
            for p in add {
                match p {
                    Permission::Public => image.public = true,
                    Permission::Named(g) => {
                        if !image.launch_permissions.contains(&g) {
                            image.launch_permissions.push(g);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// An attribute's value (`<value>` inside the attribute's element), or the element empty.
fn value(v: Option<String>) -> Option<AttributeValue> {
    Some(AttributeValue { value: v })
}

/// `DescribeImageAttribute`: any attribute of an image the account may launch, save
/// `launchPermission`, which only the owner sees, and `blockDeviceMapping`, which AWS no
/// longer answers.
pub fn describe_image_attribute(
    region: &mut Region,
    input: DescribeImageAttributeRequest,
) -> Result<ImageAttribute, ApiError> {
    let image = Kind::Image.get(&region.images, &input.image_id)?;
    let own = image.owner_id == region.account_id;
    if !image.public && !own {
        return Err(crate::ec2::error::image_not_found(&input.image_id));
    }
    let mut out = ImageAttribute {
        image_id: Some(image.id.clone()),
        ..Default::default()
    };
    match input.attribute {
        ImageAttributeName::Description => out.description = value(Some(image.description.clone())),
        ImageAttributeName::Kernel => out.kernel_id = value(None),
        ImageAttributeName::Ramdisk => out.ramdisk_id = value(None),
        ImageAttributeName::LaunchPermission => {
            if !own {
                return Err(crate::ec2::image::not_authorized(&image.id));
            }
            let public = image.public.then(|| LaunchPermission {
                group: Some(PermissionGroup::All),
                ..Default::default()
            });
            out.launch_permissions = Some(
                public
                    .into_iter()
                    .chain(image.launch_permissions.iter().map(Grantee::render))
                    .collect(),
            );
        }
        ImageAttributeName::ProductCodes => out.product_codes = Some(Vec::new()),
        ImageAttributeName::BlockDeviceMapping => {
            return Err(ApiError::new(
                Common::AuthFailure,
                "The blockDeviceMapping attribute is no longer described: describe the image instead.",
            ));
        }
        ImageAttributeName::SriovNetSupport => out.sriov_net_support = value(Some("simple".into())),
        ImageAttributeName::BootMode => {
            out.boot_mode = value(image.boot_mode.map(|b| b.as_str().to_string()));
        }
        ImageAttributeName::TpmSupport => out.tpm_support = value(None),
        ImageAttributeName::UefiData => out.uefi_data = value(None),
        ImageAttributeName::LastLaunchedTime => {
            out.last_launched_time = value(image.last_launched.clone().filter(|_| own));
        }
        ImageAttributeName::ImdsSupport => {
            out.imds_support = value(image.imds_v2.then(|| "v2.0".to_string()));
        }
        ImageAttributeName::DeregistrationProtection => {
            out.deregistration_protection = value(Some(image.protection.label().into()));
        }
    }
    Ok(out)
}

/// `ResetImageAttribute` (`launchPermission`, the only one): no one but the owner may launch
/// the image any more, public sharing included.
pub fn reset_image_attribute(
    region: &mut Region,
    input: ResetImageAttributeRequest,
) -> Result<(), ApiError> {
    crate::ec2::image::owned(region, &input.image_id)?;
    if let Some(image) = crate::ec2::image::get_mut(region, &input.image_id) {
        image.public = false;
        image.launch_permissions.clear();
    }
    Ok(())
}

/// `GetImageBlockPublicAccessState`.
pub fn get_state(
    region: &mut Region,
    _input: GetImageBlockPublicAccessStateRequest,
) -> Result<GetImageBlockPublicAccessStateResult, ApiError> {
    Ok(GetImageBlockPublicAccessStateResult {
        image_block_public_access_state: Some(region.image_sharing.state().to_string()),
        managed_by: Some(ManagedBy::Account),
    })
}

/// `EnableImageBlockPublicAccess`: in force at the transition's step.
pub fn enable(
    region: &mut Region,
    _input: EnableImageBlockPublicAccessRequest,
) -> Result<EnableImageBlockPublicAccessResult, ApiError> {
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::ImageBlockPublicAccess, BLOCKED);
    Ok(EnableImageBlockPublicAccessResult {
        image_block_public_access_state: Some(ImageBlockPublicAccessEnabledState::BlockNewSharing),
    })
}

/// `DisableImageBlockPublicAccess`: in force at the transition's step.
pub fn disable(
    region: &mut Region,
    _input: DisableImageBlockPublicAccessRequest,
) -> Result<DisableImageBlockPublicAccessResult, ApiError> {
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::ImageBlockPublicAccess, UNBLOCKED);
    Ok(DisableImageBlockPublicAccessResult {
        image_block_public_access_state: Some(ImageBlockPublicAccessDisabledState::Unblocked),
    })
}

/// Records a launch of `image_id` by the account (`lastLaunchedTime`, for its own images).
pub fn launched(region: &mut Region, image_id: &str, at: String) {
    let account = region.account_id.clone();
    if let Some(image) = crate::ec2::image::get_mut(region, image_id)
        && image.owner_id == account
    {
        image.last_launched = Some(at);
    }
}
