//! Images: DescribeImages, RegisterImage, DeregisterImage, and the public catalogue every
//! region starts with, including images named the way Cluster API's AWS provider looks them
//! up (`capa-ami-<os>-<version>-<build>`).

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::image_lifecycle::Protection;
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    ArchitectureValues, BlockDeviceMapping, BootModeValues, DeleteSnapshotReturnCode,
    DeregisterImageRequest, DeregisterImageResult, DescribeImagesRequest, DescribeImagesResult,
    DeviceType, EbsBlockDevice, HypervisorType, Image as ImageOut, ImageState, ImageTypeValues,
    RegisterImageRequest, RegisterImageResult, ResourceType, SnapshotReturnCodes,
    VirtualizationType, VolumeType,
};
use crate::protocol::error::ApiError;
use crate::protocol::error::Common;
use crate::region::Region;

/// The account that publishes Cluster API's AWS images today.
pub const CAPA_OWNER: &str = "819546954734";
/// The account that published them before (being retired; its images are still listed).
pub const CAPA_LEGACY_OWNER: &str = "258751437250";
/// Canonical's account (Ubuntu).
pub const CANONICAL_OWNER: &str = "099720109477";
/// Amazon's account (Amazon Linux).
pub const AMAZON_OWNER: &str = "137112412989";

crate::region::table! {
    /// Images by id.
    Images of Image
}

/// One image.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Image {
    /// `ami-...`.
    pub id: String,
    /// Its name, unique per owner and region.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its owner's account.
    pub owner_id: String,
    /// `amazon` for Amazon's images.
    pub owner_alias: Option<String>,
    /// `x86_64` or `arm64`.
    pub architecture: ArchitectureValues,
    /// `hvm` or `paravirtual`.
    pub virtualization: VirtualizationType,
    /// The root device, such as `/dev/sda1`.
    pub root_device_name: String,
    /// The root snapshot's size in GiB.
    pub root_size: i32,
    /// The root snapshot.
    pub snapshot_id: String,
    /// `2024-09-21T10:00:00.000Z`.
    pub creation_date: String,
    /// Whether anyone may launch it.
    pub public: bool,
    /// Its state.
    pub state: ImageState,
    /// Its EBS devices besides the root, each from a snapshot (CreateImage of an instance
    /// with more volumes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<Device>,
    /// The instance CreateImage made it of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_instance_id: Option<String>,
    /// Who besides its owner may launch it, by name (ModifyImageAttribute's
    /// `launchPermission`; `public` is the group `all`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch_permissions: Vec<crate::ec2::image_attribute::Grantee>,
    /// Whether it asks for IMDSv2 (`ImdsSupport` `v2.0`, which cannot be undone).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imds_v2: bool,
    /// When the account last launched an instance of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_launched: Option<String>,
    /// Whether DisableImage disabled it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// When it is deprecated, in seconds since the epoch (on the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecate_at: Option<i64>,
    /// Its deregistration protection.
    #[serde(default, skip_serializing_if = "Protection::is_off")]
    pub protection: Protection,
    /// The image CopyImage made it of, and that image's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_image: Option<(String, String)>,
    /// Its boot mode parameter (`legacy-bios`, `uefi`, `uefi-preferred`), if it has one: an
    /// image without one boots as its architecture's default (see
    /// the instance module's `boot`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_mode: Option<BootModeValues>,
}

/// An image's EBS device besides its root.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Device {
    /// Its name, such as `/dev/sdf`.
    pub name: String,
    /// The snapshot a launch makes its volume of.
    pub snapshot_id: String,
    /// The volume's size in GiB.
    pub size: i32,
    /// The volume's type.
    pub volume_type: VolumeType,
    /// The volume's IOPS, where its type takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<i32>,
    /// Whether terminating the instance deletes the volume.
    pub delete_on_termination: bool,
}

impl Image {
    /// Its root device (a gp3 volume deleted on termination), as one of its devices.
    fn root(&self) -> Device {
        Device {
            name: self.root_device_name.clone(),
            snapshot_id: self.snapshot_id.clone(),
            size: self.root_size,
            volume_type: VolumeType::Gp3,
            iops: None,
            delete_on_termination: true,
        }
    }

    /// Its state as described: `disabled` while DisableImage has it so.
    pub fn shown_state(&self) -> ImageState {
        if self.disabled {
            ImageState::Disabled
        } else {
            self.state
        }
    }

    /// Every device: its root, then the others.
    pub(crate) fn mappings(&self) -> impl Iterator<Item = Device> + '_ {
        std::iter::once(self.root()).chain(self.devices.iter().cloned())
    }

    /// Every snapshot it was made of: its root's, then its other devices'.
    pub fn snapshots(&self) -> impl Iterator<Item = String> + '_ {
        self.mappings().map(|d| d.snapshot_id)
    }
}

fn catalogue_entry(
    region: &mut Region,
    name: &str,
    owner: &str,
    alias: Option<&str>,
    arch: ArchitectureValues,
    created: &str,
    root_device: &str,
) {
    let id = region.ids.resource("ami");
    let snapshot_id = region.ids.resource("snap");
    region.images.0.insert(
        id.clone(),
        Image {
            id,
            name: name.to_string(),
            description: format!("{name} (fakeaws catalogue)"),
            owner_id: owner.to_string(),
            owner_alias: alias.map(String::from),
            architecture: arch,
            virtualization: VirtualizationType::Hvm,
            root_device_name: root_device.to_string(),
            root_size: 8,
            snapshot_id,
            creation_date: created.to_string(),
            public: true,
            state: ImageState::Available,
            devices: Vec::new(),
            source_instance_id: None,
            launch_permissions: Vec::new(),
            imds_v2: false,
            last_launched: None,
            disabled: false,
            deprecate_at: None,
            protection: Protection::Off,
            source_image: None,
            boot_mode: None,
        },
    );
}

/// Seeds the public images of a new region.
pub fn seed_catalogue(region: &mut Region) {
    use ArchitectureValues::{Arm64, X8664};
    let capa = [
        (
            "capa-ami-ubuntu-24.04-v1.31.0-1725000000",
            X8664,
            "2024-08-30T06:40:00.000Z",
        ),
        (
            "capa-ami-ubuntu-24.04-v1.31.0-1727000000",
            X8664,
            "2024-09-22T10:13:20.000Z",
        ),
        (
            "capa-ami-ubuntu-24.04-v1.31.0-1727000001",
            Arm64,
            "2024-09-22T10:13:21.000Z",
        ),
        (
            "capa-ami-ubuntu-24.04-v1.30.4-1724000000",
            X8664,
            "2024-08-18T16:53:20.000Z",
        ),
        (
            "capa-ami-ubuntu-22.04-v1.31.0-1726000000",
            X8664,
            "2024-09-10T20:26:40.000Z",
        ),
        (
            "capa-ami-ubuntu-22.04-v1.30.4-1723000000",
            X8664,
            "2024-08-07T03:06:40.000Z",
        ),
        (
            "capa-ami-flatcar-stable-v1.31.0-1727500000",
            X8664,
            "2024-09-28T05:06:40.000Z",
        ),
    ];
    for owner in [CAPA_OWNER, CAPA_LEGACY_OWNER] {
        for (name, arch, created) in capa {
            catalogue_entry(region, name, owner, None, arch, created, "/dev/sda1");
        }
    }
    let others = [
        (
            "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20241004",
            CANONICAL_OWNER,
            None,
            X8664,
            "2024-10-04T12:00:00.000Z",
            "/dev/sda1",
        ),
        (
            "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-20241004",
            CANONICAL_OWNER,
            None,
            Arm64,
            "2024-10-04T12:00:00.000Z",
            "/dev/sda1",
        ),
        (
            "ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20240927",
            CANONICAL_OWNER,
            None,
            X8664,
            "2024-09-27T12:00:00.000Z",
            "/dev/sda1",
        ),
        (
            "al2023-ami-2023.5.20241001.1-kernel-6.1-x86_64",
            AMAZON_OWNER,
            Some("amazon"),
            X8664,
            "2024-10-01T18:00:00.000Z",
            "/dev/xvda",
        ),
        (
            "al2023-ami-2023.5.20241001.1-kernel-6.1-arm64",
            AMAZON_OWNER,
            Some("amazon"),
            Arm64,
            "2024-10-01T18:00:00.000Z",
            "/dev/xvda",
        ),
    ];
    for (name, owner, alias, arch, created, root) in others {
        catalogue_entry(region, name, owner, alias, arch, created, root);
    }
}

impl Filterable for (&Image, &Region) {
    const NAMES: &'static [&'static str] = &[
        "architecture",
        "boot-mode",
        "block-device-mapping.delete-on-termination",
        "block-device-mapping.device-name",
        "block-device-mapping.snapshot-id",
        "block-device-mapping.volume-size",
        "block-device-mapping.volume-type",
        "block-device-mapping.encrypted",
        "creation-date",
        "description",
        "ena-support",
        "free-tier-eligible",
        "hypervisor",
        "image-allowed",
        "image-id",
        "image-type",
        "image-watermark.source-image-creation-time",
        "image-watermark.source-image-id",
        "image-watermark.source-image-region",
        "image-watermark.watermark-creation-time",
        "image-watermark.watermark-key",
        "instance-type-specification.supported-instance-type",
        "instance-type-specification.unsupported-instance-type",
        "is-public",
        "kernel-id",
        "manifest-location",
        "name",
        "owner-alias",
        "owner-id",
        "platform",
        "product-code",
        "product-code.type",
        "public-ssm-parameter-name",
        "ramdisk-id",
        "root-device-name",
        "root-device-type",
        "scan-result.critical-fix-available-since",
        "scan-result.finding-scan-date",
        "scan-result.high-fix-available-since",
        "scan-result.highest-finding-severity-label",
        "scan-result.informational-fix-available-since",
        "scan-result.low-fix-available-since",
        "scan-result.medium-fix-available-since",
        "source-image-id",
        "source-image-region",
        "source-instance-id",
        "state",
        "state-reason-code",
        "state-reason-message",
        "sriov-net-support",
        "virtualization-type",
    ];
    // Images here are available EBS-backed HVM Linux images without product codes, a boot
    // mode, free tier eligibility, an allowed-images setting, watermarks, instance type
    // specifications, SSM parameters, scan results or a source image or instance.
    const NEVER_SET: &'static [&'static str] = &[
        "boot-mode",
        "free-tier-eligible",
        "image-allowed",
        "image-watermark.source-image-creation-time",
        "image-watermark.source-image-id",
        "image-watermark.source-image-region",
        "image-watermark.watermark-creation-time",
        "image-watermark.watermark-key",
        "instance-type-specification.supported-instance-type",
        "instance-type-specification.unsupported-instance-type",
        "kernel-id",
        "manifest-location",
        "platform",
        "product-code",
        "product-code.type",
        "public-ssm-parameter-name",
        "ramdisk-id",
        "scan-result.critical-fix-available-since",
        "scan-result.finding-scan-date",
        "scan-result.high-fix-available-since",
        "scan-result.highest-finding-severity-label",
        "scan-result.informational-fix-available-since",
        "scan-result.low-fix-available-since",
        "scan-result.medium-fix-available-since",
        "source-image-id",
        "source-image-region",
        "sriov-net-support",
        "state-reason-code",
        "state-reason-message",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (i, region) = *self;
        match name {
            "architecture" => one(i.architecture.as_str()),
            "block-device-mapping.delete-on-termination" => i
                .mappings()
                .map(|d| d.delete_on_termination.to_string())
                .collect(),
            "block-device-mapping.device-name" => i.mappings().map(|d| d.name).collect(),
            "root-device-name" => one(i.root_device_name.clone()),
            "block-device-mapping.snapshot-id" => i.snapshots().collect(),
            "block-device-mapping.volume-size" => {
                i.mappings().map(|d| d.size.to_string()).collect()
            }
            "block-device-mapping.volume-type" => i
                .mappings()
                .map(|d| d.volume_type.as_str().to_string())
                .collect(),
            "source-instance-id" => i.source_instance_id.clone().into_iter().collect(),
            "source-image-id" => i.source_image.iter().map(|s| s.0.clone()).collect(),
            "source-image-region" => i.source_image.iter().map(|s| s.1.clone()).collect(),
            "block-device-mapping.encrypted" => i
                .snapshots()
                .map(|s| encrypted(region, &s).to_string())
                .collect(),
            "creation-date" => one(i.creation_date.clone()),
            "description" => one(i.description.clone()),
            "ena-support" => flag(true),
            "hypervisor" => one("xen"),
            "image-id" => one(i.id.clone()),
            "image-type" => one("machine"),
            "is-public" => flag(i.public),
            "name" => one(i.name.clone()),
            "owner-alias" => i.owner_alias.clone().into_iter().collect(),
            "owner-id" => one(i.owner_id.clone()),
            "root-device-type" => one("ebs"),
            "state" => one(i.shown_state().as_str()),
            "virtualization-type" => one(i.virtualization.as_str()),
            _ => Vec::new(),
        }
    }
}

/// Whether snapshot `id` is one of the account's, encrypted.
fn encrypted(region: &Region, id: &str) -> bool {
    region.snapshots.get(id).is_some_and(|s| s.encrypted)
}

/// The SDK shape of an image.
pub fn render(region: &Region, i: &Image) -> ImageOut {
    ImageOut {
        platform_details: Some("Linux/UNIX".into()),
        usage_operation: Some("RunInstances".into()),
        block_device_mappings: Some(
            i.mappings()
                .map(|d| BlockDeviceMapping {
                    device_name: Some(d.name),
                    ebs: Some(EbsBlockDevice {
                        delete_on_termination: Some(d.delete_on_termination),
                        volume_size: Some(d.size),
                        volume_type: Some(d.volume_type),
                        iops: d.iops,
                        encrypted: Some(encrypted(region, &d.snapshot_id)),
                        snapshot_id: Some(d.snapshot_id),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .collect(),
        ),
        source_instance_id: i.source_instance_id.clone(),
        source_image_id: i.source_image.as_ref().map(|s| s.0.clone()),
        source_image_region: i.source_image.as_ref().map(|s| s.1.clone()),
        imds_support: i
            .imds_v2
            .then_some(crate::generated::ec2::ImdsSupportValues::V20),
        boot_mode: i.boot_mode,
        last_launched_time: i.last_launched.clone(),
        description: Some(i.description.clone()),
        ena_support: Some(true),
        hypervisor: Some(HypervisorType::Xen),
        image_owner_alias: i.owner_alias.clone(),
        name: Some(i.name.clone()),
        root_device_name: Some(i.root_device_name.clone()),
        root_device_type: Some(DeviceType::Ebs),
        sriov_net_support: Some("simple".into()),
        tags: region.tags.tag_set(&i.id),
        virtualization_type: Some(i.virtualization),
        image_id: Some(i.id.clone()),
        image_location: Some(format!("{}/{}", i.owner_id, i.name)),
        state: Some(i.shown_state()),
        deprecation_time: crate::ec2::image_lifecycle::deprecation_time(i),
        deregistration_protection: (i.owner_id == region.account_id)
            .then(|| i.protection.label().to_string()),
        owner_id: Some(i.owner_id.clone()),
        creation_date: Some(i.creation_date.clone()),
        public: Some(i.public),
        architecture: Some(i.architecture),
        image_type: Some(ImageTypeValues::Machine),
        ..Default::default()
    }
}

/// Whether `owner` (an account id, `self`, `amazon` or `aws-marketplace`) names `image`'s owner.
fn owned_by(region: &Region, image: &Image, owner: &str) -> bool {
    match owner {
        "self" => image.owner_id == region.account_id,
        "amazon" => image.owner_alias.as_deref() == Some("amazon"),
        "aws-marketplace" => false,
        id => image.owner_id == id,
    }
}

/// Whether `user` (DescribeImages' `ExecutableUsers`) has an explicit launch permission for
/// `image`, as the API reference scopes it: `all`, the public images; an account id, or
/// `self` for the account's own, the images shared with that account by name (not the public
/// ones, nor the owner's own).
fn executable_by(region: &Region, image: &Image, user: &str) -> bool {
    let id = match user {
        "all" => return image.public,
        "self" => region.account_id.as_str(),
        id => id,
    };
    image
        .launch_permissions
        .contains(&crate::ec2::image_attribute::Grantee::Account(
            id.to_string(),
        ))
}

/// `DescribeImages`: by id, by owner, filtered (with `*`/`?` in values), paginated.
pub fn describe_images(
    region: &mut Region,
    input: DescribeImagesRequest,
) -> Result<DescribeImagesResult, ApiError> {
    let filters = Filters::parse::<(&Image, &Region)>(input.filters)?;
    let region = &*region;
    if input.image_ids.as_ref().is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter imageIdsSet cannot be used with the parameter maxResults",
        ));
    }
    if let Some(max) = input.max_results {
        page::check_max_results(Some(max), 5, 1000)?;
    }
    let owners = input.owners.unwrap_or_default();
    for o in &owners {
        let valid = matches!(o.as_str(), "self" | "amazon" | "aws-marketplace")
            || crate::ec2::account::is_account_id(o);
        if !valid {
            return Err(ApiError::invalid_parameter(
                "Owner",
                o,
                "Expected an account id, self, amazon or aws-marketplace.",
            ));
        }
    }
    let users = input.executable_users.unwrap_or_default();
    let include_disabled = input.include_disabled.unwrap_or(false);
    let include_deprecated = input.include_deprecated.unwrap_or(false);
    let now = region.clock.now_datetime().secs();
    let found = Kind::Image.describe(
        &region.consistency,
        &region.images,
        input.image_ids.as_deref(),
        region.candidates(Kind::Image, &filters),
        |i| {
            (owners.is_empty() || owners.iter().any(|o| owned_by(region, i, o)))
                && (users.is_empty() || users.iter().any(|u| executable_by(region, i, u)))
                && (i.public || i.owner_id == region.account_id)
                && (include_disabled || !i.disabled)
                && (include_deprecated
                    || i.owner_id == region.account_id
                    || !crate::ec2::image_lifecycle::deprecated(i, now))
                && filters.matches(&(i, region), region.tags.get(&i.id))
        },
    )?;
    let (items, next) = page::page(
        found,
        |i| i.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeImagesResult {
        images: Some(items.into_iter().map(|i| render(region, i)).collect()),
        next_token: next,
    })
}

/// Adds `image` to the region.
pub(crate) fn add(region: &mut Region, image: Image) {
    region.images.0.insert(image.id.clone(), image);
}

/// `AuthFailure` for an image of another owner, in AWS's words.
pub(crate) fn not_authorized(id: &str) -> ApiError {
    ApiError::new(
        Common::AuthFailure,
        format!("Not authorized for image:{id}"),
    )
}

/// The account's own image `id`: NotFound for one the account cannot see, `AuthFailure` for
/// another's public image.
pub(crate) fn owned<'a>(region: &'a Region, id: &str) -> Result<&'a Image, ApiError> {
    let image = Kind::Image.get(&region.images, id)?;
    if !image.public && image.owner_id != region.account_id {
        return Err(crate::ec2::error::image_not_found(id));
    }
    if image.owner_id != region.account_id {
        return Err(not_authorized(id));
    }
    Ok(image)
}

/// [`owned`], to change.
pub(crate) fn owned_mut<'a>(region: &'a mut Region, id: &str) -> Result<&'a mut Image, ApiError> {
    owned(region, id)?;
    region
        .images
        .0
        .get_mut(id)
        .ok_or_else(|| crate::ec2::error::image_not_found(id))
}

/// Image `id` of the region, to change.
pub(crate) fn get_mut<'a>(region: &'a mut Region, id: &str) -> Option<&'a mut Image> {
    region.images.0.get_mut(id)
}

/// Makes image `id` `available` (the end of CreateImage's `pending`).
pub fn advance(region: &mut Region, id: &str) {
    if let Some(i) = region.images.0.get_mut(id) {
        i.state = ImageState::Available;
    }
}

/// `name` trimmed, when it is a valid AMI name no image of the account has.
pub(crate) fn check_name(region: &Region, name: &str) -> Result<String, ApiError> {
    let name = name.trim().to_string();
    let valid = (3..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "()[] ./-'@_".contains(c));
    if !valid {
        return Err(ApiError::invalid_parameter(
            "name",
            &name,
            "AMI names are 3 to 128 characters: letters, digits, ( ) [ ] space . / - ' @ _",
        ));
    }
    if let Some(other) = region
        .images
        .values()
        .find(|i| i.name == name && i.owner_id == region.account_id)
    {
        return Err(ApiError::new(
            Code::InvalidAMINameDuplicate,
            format!("AMI name {name} is already in use by AMI {}", other.id),
        ));
    }
    Ok(name)
}

/// `RegisterImage` (from snapshots: the block device mappings).
pub fn register_image(
    region: &mut Region,
    input: RegisterImageRequest,
) -> Result<RegisterImageResult, ApiError> {
    let name = check_name(region, &input.name)?;
    let virtualization = match input.virtualization_type.as_deref() {
        None | Some("hvm") => VirtualizationType::Hvm,
        Some("paravirtual") => VirtualizationType::Paravirtual,
        Some(other) => {
            return Err(ApiError::invalid_parameter(
                "virtualizationType",
                other,
                "Valid values: hvm, paravirtual",
            ));
        }
    };
    let root_device_name = input
        .root_device_name
        .clone()
        .unwrap_or_else(|| "/dev/sda1".into());
    let root = input
        .block_device_mappings
        .iter()
        .flatten()
        .find(|m| m.device_name.as_deref() == Some(root_device_name.as_str()))
        .and_then(|m| m.ebs.clone());
    // A root snapshot named must be one of the account's (its size the root's least).
    let from = match root.as_ref().and_then(|e| e.snapshot_id.clone()) {
        Some(s) => {
            let size = Kind::Snapshot.get(&region.snapshots, &s)?.size;
            Some((s, size))
        }
        None => None,
    };
    let root_size = match (root.as_ref().and_then(|e| e.volume_size), &from) {
        (Some(size), Some((s, least))) if size < *least => {
            return Err(ApiError::new(
                Code::InvalidBlockDeviceMapping,
                crate::ec2::snapshot::too_small(size, s, *least),
            ));
        }
        (Some(size), _) => size,
        (None, Some((_, least))) => *least,
        (None, None) => 8,
    };
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Image)?;
    let id = region.ids.resource("ami");
    let snapshot_id = match from {
        Some((s, _)) => s,
        None => region.ids.resource("snap"),
    };
    let created = crate::protocol::xml::format_timestamp(region.clock.now_datetime());
    region.tags.insert(&id, tags);
    region.images.0.insert(
        id.clone(),
        Image {
            id: id.clone(),
            name,
            description: input.description.unwrap_or_default(),
            owner_id: region.account_id.clone(),
            owner_alias: None,
            architecture: input.architecture.unwrap_or(ArchitectureValues::X8664),
            virtualization,
            root_device_name,
            root_size,
            snapshot_id,
            creation_date: created,
            public: false,
            state: ImageState::Available,
            devices: Vec::new(),
            source_instance_id: None,
            launch_permissions: Vec::new(),
            // `v2.0`, the one value the model allows: launches require tokens, two hops.
            imds_v2: input.imds_support.is_some(),
            last_launched: None,
            disabled: false,
            deprecate_at: None,
            protection: Protection::Off,
            source_image: None,
            boot_mode: input.boot_mode,
        },
    );
    Ok(RegisterImageResult { image_id: Some(id) })
}

/// `DeregisterImage`: only the account's own images; with `DeleteAssociatedSnapshots`, its
/// snapshot goes too (`success`), unless another of the account's images was registered from
/// it (`skipped`), as the API reference documents.
pub fn deregister_image(
    region: &mut Region,
    input: DeregisterImageRequest,
) -> Result<DeregisterImageResult, ApiError> {
    let image = Kind::Image.get(&region.images, &input.image_id)?;
    if image.owner_id != region.account_id {
        return Err(not_authorized(&image.id));
    }
    crate::ec2::image_lifecycle::check_deregister(region, image)?;
    let snapshots: Vec<String> = image.snapshots().collect();
    region.images.0.remove(&input.image_id);
    region.tags.remove_resource(&input.image_id);
    let mut delete_snapshot_results = None;
    if input.delete_associated_snapshots == Some(true) {
        let mut results = Vec::new();
        for s in snapshots {
            if !region.snapshots.contains_key(&s) {
                continue;
            }
            let code = if crate::ec2::snapshot::image_using(region, &s).is_some() {
                SnapshotReturnCodes::Skipped
            } else {
                crate::ec2::snapshot::remove(region, &s);
                SnapshotReturnCodes::Success
            };
            results.push(DeleteSnapshotReturnCode {
                snapshot_id: Some(s),
                return_code: Some(code),
            });
        }
        delete_snapshot_results = Some(results);
    }
    Ok(DeregisterImageResult {
        r#return: Some(true),
        delete_snapshot_results,
    })
}
