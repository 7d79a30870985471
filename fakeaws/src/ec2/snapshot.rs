//! EBS snapshots of the account's volumes: CreateSnapshot (`pending`, then `completed` at the
//! clock's next step), DescribeSnapshots and DeleteSnapshot; what volumes (CreateVolume,
//! RunInstances' block device mappings) and images (RegisterImage) are made from.
//!
//! The account's own snapshots are the ones described: the public catalogue's images keep
//! their root snapshots to themselves, as their owners' snapshots are not shared.

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    CreateSnapshotRequest, DeleteSnapshotRequest, DescribeSnapshotsRequest,
    DescribeSnapshotsResult, ResourceType, Snapshot as SnapshotOut, SnapshotState, StorageTier,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// The account's snapshots by id.
    Snapshots of Snapshot
}

/// One snapshot.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// `snap-...`.
    pub id: String,
    /// The volume it was taken of.
    pub volume_id: String,
    /// That volume's size, in GiB.
    pub size: i32,
    /// Whether it is encrypted (as its volume was).
    pub encrypted: bool,
    /// Its KMS key, by ARN, when encrypted (its volume's, or a copy's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
    /// Its description.
    pub description: String,
    /// Whether it is still `pending` (until the clock's next step), else `completed`.
    pub pending: bool,
    /// When it was started.
    #[serde(with = "crate::state::with::time")]
    pub started: DateTime,
    /// The accounts it is shared with (ModifySnapshotAttribute's `createVolumePermission`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_with: Vec<String>,
    /// Whether anyone may create volumes of it (the group `all`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
}

/// The longest description EBS takes (of a snapshot, and of an image).
const MAX_DESCRIPTION: usize = 255;

/// `description` (empty when not given), when it is within [`MAX_DESCRIPTION`].
pub fn checked_description(description: Option<String>) -> Result<String, ApiError> {
    let description = description.unwrap_or_default();
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(ApiError::invalid_parameter(
            "description",
            &description,
            &format!("The description is at most {MAX_DESCRIPTION} characters."),
        ));
    }
    Ok(description)
}

impl Snapshot {
    fn state(&self) -> SnapshotState {
        if self.pending {
            SnapshotState::Pending
        } else {
            SnapshotState::Completed
        }
    }

    /// `""` while pending (as CreateSnapshot answers), `100%` once completed.
    fn progress(&self) -> &'static str {
        if self.pending { "" } else { "100%" }
    }
}

impl Filterable for (&Snapshot, &Region) {
    const NAMES: &'static [&'static str] = &[
        "description",
        "encrypted",
        "owner-alias",
        "owner-id",
        "progress",
        "snapshot-id",
        "start-time",
        "status",
        "storage-tier",
        "transfer-type",
        "volume-id",
        "volume-size",
    ];
    // The account's snapshots have no owner alias (Amazon's own have `amazon`), and none is
    // a time-based copy.
    const NEVER_SET: &'static [&'static str] = &["owner-alias", "transfer-type"];

    fn values(&self, name: &str) -> Vec<String> {
        let (s, region) = *self;
        match name {
            "description" => one(s.description.clone()),
            "encrypted" => flag(s.encrypted),
            "owner-id" => one(region.account_id.clone()),
            "progress" => one(s.progress()),
            "snapshot-id" => one(s.id.clone()),
            "start-time" => one(format_timestamp(s.started)),
            "status" => one(s.state().as_str()),
            "storage-tier" => one(StorageTier::Standard.as_str()),
            "volume-id" => one(s.volume_id.clone()),
            "volume-size" => one(s.size.to_string()),
            _ => Vec::new(),
        }
    }
}

fn render(region: &Region, s: &Snapshot) -> SnapshotOut {
    SnapshotOut {
        snapshot_id: Some(s.id.clone()),
        volume_id: Some(s.volume_id.clone()),
        state: Some(s.state()),
        start_time: Some(s.started),
        progress: Some(s.progress().to_string()),
        owner_id: Some(region.account_id.clone()),
        description: Some(s.description.clone()),
        volume_size: Some(s.size),
        encrypted: Some(s.encrypted),
        kms_key_id: key_of(region, s),
        storage_tier: Some(StorageTier::Standard),
        tags: region.tags.tag_set(&s.id),
        ..Default::default()
    }
}

/// `CreateSnapshot`: of a volume of the account, answered `pending`; `completed` at the
/// clock's next step (transition subject `snapshot`), when the `SnapshotCompleted` waiter
/// passes.
pub fn create_snapshot(
    region: &mut Region,
    input: CreateSnapshotRequest,
) -> Result<SnapshotOut, ApiError> {
    let volume = Kind::Volume.get(&region.volumes, &input.volume_id)?;
    let size = volume.size;
    let key = volume.kms_key_id.clone().or_else(|| {
        volume
            .encrypted
            .then(|| crate::ec2::volume::default_key(region))
    });
    let description = checked_description(input.description)?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Snapshot)?;
    let id = take(region, &input.volume_id, size, key, description, tags);
    let s = Kind::Snapshot.get(&region.snapshots, &id)?;
    let mut out = render(region, s);
    out.tags = region.tags.listed(&id);
    Ok(out)
}

/// Starts a snapshot of volume `volume_id` (of `size` GiB), encrypted with `key` (an ARN)
/// when there is one: `pending` until the clock's next step. Returns its id.
pub fn take(
    region: &mut Region,
    volume_id: &str,
    size: i32,
    key: Option<String>,
    description: String,
    tags: std::collections::BTreeMap<String, String>,
) -> String {
    let snapshot = Snapshot {
        id: region.ids.resource("snap"),
        volume_id: volume_id.to_string(),
        size,
        encrypted: key.is_some(),
        kms_key_id: key,
        description,
        pending: true,
        started: region.clock.now_datetime(),
        shared_with: Vec::new(),
        public: false,
    };
    let id = snapshot.id.clone();
    region.tags.insert(&id, tags);
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::Snapshot, &id);
    region.snapshots.0.insert(id.clone(), snapshot);
    id
}

/// Snapshot `id` of the account, to change.
pub(crate) fn get_mut<'a>(region: &'a mut Region, id: &str) -> Option<&'a mut Snapshot> {
    region.snapshots.0.get_mut(id)
}

/// Completes snapshot `id`.
pub fn advance(region: &mut Region, id: &str) {
    if let Some(s) = region.snapshots.0.get_mut(id) {
        s.pending = false;
    }
}

/// Whether `owners` (DescribeSnapshots' `OwnerIds`) take in the account's own snapshots:
/// `self` or the account's id does; `amazon` or another account takes none of them. No list
/// takes every one.
fn includes_own(region: &Region, owners: Option<&[String]>) -> bool {
    owners
        .filter(|o| !o.is_empty())
        .is_none_or(|o| o.iter().any(|x| x == "self" || *x == region.account_id))
}

/// Whether snapshot `s` is one DescribeSnapshots' `RestorableByUserIds` asks for: `self` or
/// the account's id (the owner restores all of its own), `all` (public snapshots), another
/// account (those shared with it by name). No list takes every one.
fn restorable_by(region: &Region, s: &Snapshot, users: Option<&[String]>) -> bool {
    users.filter(|u| !u.is_empty()).is_none_or(|u| {
        u.iter().any(|x| match x.as_str() {
            "self" => true,
            "all" => s.public,
            id => id == region.account_id || s.shared_with.iter().any(|w| w == id),
        })
    })
}

/// `DescribeSnapshots`: the account's snapshots, by id (each must exist), owner, who may
/// restore them, and filters; paginated.
pub fn describe_snapshots(
    region: &mut Region,
    input: DescribeSnapshotsRequest,
) -> Result<DescribeSnapshotsResult, ApiError> {
    let filters = Filters::parse::<(&Snapshot, &Region)>(input.filters)?;
    let region = &*region;
    let ids = input.snapshot_ids.as_deref();
    if ids.is_some_and(|i| !i.is_empty()) && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter snapshotSet cannot be used with the parameter maxResults",
        ));
    }
    // Owners are accounts or the aliases; who may restore, accounts, `self` or `all`.
    for o in input.owner_ids.iter().flatten() {
        if !matches!(o.as_str(), "self" | "amazon" | "aws-marketplace") {
            crate::ec2::snapshot_attribute::check_user_id(o)?;
        }
    }
    for u in input.restorable_by_user_ids.iter().flatten() {
        if !matches!(u.as_str(), "self" | "all") {
            crate::ec2::snapshot_attribute::check_user_id(u)?;
        }
    }
    let own = includes_own(region, input.owner_ids.as_deref());
    let users = input.restorable_by_user_ids.as_deref();
    let found = Kind::Snapshot.describe(
        &region.consistency,
        &region.snapshots,
        ids,
        region.candidates(Kind::Snapshot, &filters),
        |s| {
            own && restorable_by(region, s, users)
                && filters.matches(&(s, region), region.tags.get(&s.id))
        },
    )?;
    let (items, next) = page::page(
        found,
        |s| s.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeSnapshotsResult {
        snapshots: Some(items.into_iter().map(|s| render(region, s)).collect()),
        next_token: next,
    })
}

/// The account's image that was registered from snapshot `id`, if any.
pub fn image_using(region: &Region, id: &str) -> Option<String> {
    region
        .images
        .values()
        .find(|i| i.owner_id == region.account_id && i.snapshots().any(|s| s == id))
        .map(|i| i.id.clone())
}

/// `DeleteSnapshot`: not while an image of the account was registered from it
/// (`InvalidSnapshot.InUse`, AWS's words).
pub fn delete_snapshot(region: &mut Region, input: DeleteSnapshotRequest) -> Result<(), ApiError> {
    let id = input.snapshot_id;
    Kind::Snapshot.get(&region.snapshots, &id)?;
    if let Some(image) = image_using(region, &id) {
        return Err(ApiError::new(
            Code::InvalidSnapshotInUse,
            format!("The snapshot {id} is currently in use by {image}"),
        ));
    }
    remove(region, &id);
    Ok(())
}

/// Snapshot `s`'s key, by ARN, when it is encrypted (one of a state file from before keys
/// were kept: the region's default key).
pub fn key_of(region: &Region, s: &Snapshot) -> Option<String> {
    s.kms_key_id
        .clone()
        .or_else(|| s.encrypted.then(|| crate::ec2::volume::default_key(region)))
}

/// Removes snapshot `id` and its tags.
pub fn remove(region: &mut Region, id: &str) {
    region.snapshots.0.remove(id);
    region.tags.remove_resource(id);
}

/// The completed snapshot `id` a volume is made from: its size and encryption. A pending
/// one is `IncorrectState` (EBS makes volumes of completed snapshots).
pub fn source(region: &Region, id: &str) -> Result<(i32, bool), ApiError> {
    let s = Kind::Snapshot.get(&region.snapshots, id)?;
    if s.pending {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!(
                "Snapshot is in invalid state - {}",
                SnapshotState::Pending.as_str()
            ),
        ));
    }
    Ok((s.size, s.encrypted))
}

/// EBS's words refusing a volume of `size` GiB made of a snapshot of `snapshot_size`.
pub fn too_small(size: i32, snapshot_id: &str, snapshot_size: i32) -> String {
    format!(
        "Volume of size {size}GB is smaller than snapshot '{snapshot_id}', expect size >= \
         {snapshot_size}GB"
    )
}
