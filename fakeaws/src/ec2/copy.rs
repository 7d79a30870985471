//! CopyImage and CopySnapshot: a copy made in the region the call is sent to (the
//! destination), of an image or a snapshot in `SourceRegion`, that region or another of the
//! same partition, as image pipelines (Packer's `ami_regions`, Cluster API's `clusterawsadm ami
//! copy`) copy them.
//!
//! - The source is read from its region before the destination is changed (the server reads
//!   a source in another region first and hands it over: [`Source`]); a copy across
//!   partitions is refused, as AWS refuses it.
//! - CopyImage copies an `available` image the account may launch (its own, or a public one):
//!   a new snapshot of each device (`Copied for DestinationAmi ami-... from SourceAmi ami-...
//!   for SourceSnapshot snap-.... Task created on ...`, EBS's description), the new image
//!   `pending` until the clock's next step (subject `image`), with `SourceImageId` and
//!   `SourceImageRegion`; `Encrypted` encrypts the copies, a copy of an encrypted snapshot
//!   stays encrypted; `CopyImageTags` copies the account's own tags (not `aws:` ones).
//! - CopySnapshot copies one of the account's `completed` snapshots: `pending`, then
//!   `completed` (subject `snapshot`), its volume `vol-ffffffff` (AWS: an arbitrary volume id
//!   not to be used).
//! - Both take `ClientToken` (CopyImage) and TagSpecifications.

use std::collections::BTreeMap;

use crate::ec2::error::Code;
use crate::ec2::image::{Device, Image};
use crate::ec2::snapshot::Snapshot;
use crate::ec2::{Kind, fingerprint, snapshot, tags};
use crate::generated::ec2::{
    CopyImageRequest, CopyImageResult, CopySnapshotRequest, CopySnapshotResult, ImageState,
    ResourceType,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;
use crate::sim::transitions::Subject;

/// The volume id AWS gives every copied snapshot.
const COPIED_VOLUME: &str = "vol-ffffffff";

/// What a copy is made of, read from the source region.
#[derive(Debug, Clone)]
pub enum Source {
    /// An image: the record, whether each of its devices' snapshots is encrypted (root first),
    /// and the account's own tags of it.
    Image {
        /// The image.
        image: Box<Image>,
        /// Each device's snapshot encrypted, in [`Image::snapshots`] order.
        encrypted: Vec<bool>,
        /// Its user tags, when it is the account's.
        tags: BTreeMap<String, String>,
    },
    /// A snapshot of the account's.
    Snapshot(Box<Snapshot>),
}

/// The image `id` of `region` as a copy's source: one the account may launch, `available`.
pub fn image_source(region: &Region, id: &str) -> Result<Source, ApiError> {
    let image = Kind::Image.get(&region.images, id)?;
    let own = image.owner_id == region.account_id;
    if !image.public && !own {
        return Err(crate::ec2::error::image_not_found(id));
    }
    let state = image.shown_state();
    if state != ImageState::Available {
        return Err(ApiError::new(
            Code::InvalidAMIIDUnavailable,
            format!(
                "The image id '[{id}]' cannot be copied: it is {}",
                state.as_str()
            ),
        ));
    }
    let encrypted = image
        .snapshots()
        .map(|s| region.snapshots.get(&s).is_some_and(|s| s.encrypted))
        .collect();
    let tags = if own {
        region
            .tags
            .get(id)
            .map(|t| {
                t.iter()
                    .filter(|(k, _)| !k.starts_with("aws:"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        BTreeMap::new()
    };
    Ok(Source::Image {
        image: Box::new(image.clone()),
        encrypted,
        tags,
    })
}

/// The snapshot `id` of `region` as a copy's source: one of the account's, `completed`.
pub fn snapshot_source(region: &Region, id: &str) -> Result<Source, ApiError> {
    let s = Kind::Snapshot.get(&region.snapshots, id)?;
    if s.pending {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!("Snapshot {id} is not completed: it cannot be copied while it is pending."),
        ));
    }
    Ok(Source::Snapshot(Box::new(s.clone())))
}

/// Whether the regions `a` and `b` are of one partition.
pub fn same_partition(a: &str, b: &str) -> bool {
    crate::ec2::account::partition_of(a) == crate::ec2::account::partition_of(b)
}

/// The source of a copy into `region` from `source_region`: the one the server read there,
/// or, in the same region, read here.
fn source_of(
    region: &mut Region,
    source_region: &str,
    read: impl FnOnce(&Region) -> Result<Source, ApiError>,
) -> Result<Source, ApiError> {
    if let Some(source) = region.copied.take() {
        return Ok(source);
    }
    if source_region == region.name {
        return read(region);
    }
    Err(ApiError::invalid_parameter(
        "SourceRegion",
        source_region,
        "The source region is not one this endpoint serves.",
    ))
}

/// `1,566,308,778,174`: milliseconds since the epoch with thousands separated, as EBS writes
/// them in a copied image's snapshot descriptions.
fn grouped_millis(region: &Region) -> String {
    let millis = region.clock.now_datetime().to_millis().unwrap_or(0).max(0);
    let digits = millis.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `CopyImage`.
pub fn copy_image(
    region: &mut Region,
    mut input: CopyImageRequest,
) -> Result<CopyImageResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CopyImage", token.as_deref(), &print)?
    {
        region.copied = None;
        return Ok(CopyImageResult { image_id: Some(id) });
    }
    let source_region = input.source_region.clone();
    let source = source_of(region, &source_region, |r| {
        image_source(r, &input.source_image_id)
    })?;
    let Source::Image {
        image: source,
        encrypted,
        tags: source_tags,
    } = source
    else {
        return Err(crate::ec2::error::image_not_found(&input.source_image_id));
    };
    let name = crate::ec2::image::check_name(region, &input.name)?;
    let description =
        snapshot::checked_description(Some(input.description.unwrap_or_else(|| {
            format!(
                "[Copied {} from {source_region}] {}",
                source.id, source.description
            )
        })))?;
    let mut by_type = tags::from_specs_for(
        input.tag_specifications.as_deref(),
        &[ResourceType::Image, ResourceType::Snapshot],
    )?;
    let mut image_tags = if input.copy_image_tags == Some(true) {
        source_tags
    } else {
        BTreeMap::new()
    };
    image_tags.extend(by_type.remove(&ResourceType::Image).unwrap_or_default());
    let snapshot_tags = by_type.remove(&ResourceType::Snapshot).unwrap_or_default();
    let encrypt = input.encrypted == Some(true);
    // A key asked for, checked before anything is made: it needs `Encrypted` (or encryption
    // by default), as for CopySnapshot.
    let asked_key = match input.kms_key_id.as_deref() {
        Some(k) => crate::ec2::volume::key_for(region, encrypt, None, Some(k))?,
        None => None,
    };
    let id = region.ids.resource("ami");
    let task = grouped_millis(region);
    let mut copies = Vec::new();
    let mappings: Vec<Device> = source.mappings().collect();
    let encrypted = encrypted.iter().chain(std::iter::repeat(&false));
    for (device, was_encrypted) in mappings.iter().zip(encrypted) {
        // A copy is encrypted with the key asked for, else the destination region's
        // default key.
        let key = match &asked_key {
            Some(k) => Some(k.clone()),
            None => crate::ec2::volume::encrypts(region, encrypt || *was_encrypted)
                .then(|| crate::ec2::volume::default_key(region)),
        };
        let copy = snapshot::take(
            region,
            COPIED_VOLUME,
            device.size,
            key,
            format!(
                "Copied for DestinationAmi {id} from SourceAmi {} for SourceSnapshot {}. Task created on {task}.",
                source.id, device.snapshot_id
            ),
            snapshot_tags.clone(),
        );
        copies.push(Device {
            snapshot_id: copy,
            ..device.clone()
        });
    }
    let mut copies = copies.into_iter();
    let Some(root) = copies.next() else {
        return Err(crate::ec2::error::image_not_found(&source.id));
    };
    region.tags.insert(&id, image_tags);
    let created = format_timestamp(region.clock.now_datetime());
    let account = region.account_id.clone();
    crate::ec2::image::add(
        region,
        Image {
            id: id.clone(),
            name,
            description,
            owner_id: account,
            owner_alias: None,
            root_size: root.size,
            snapshot_id: root.snapshot_id,
            devices: copies.collect(),
            creation_date: created,
            public: false,
            state: ImageState::Pending,
            source_instance_id: None,
            source_image: Some((source.id.clone(), source_region)),
            launch_permissions: Vec::new(),
            last_launched: None,
            disabled: false,
            deprecate_at: None,
            protection: crate::ec2::image_lifecycle::Protection::Off,
            ..*source
        },
    );
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::Image, &id);
    region
        .ledger
        .record("CopyImage", token.as_deref(), &print, &id);
    Ok(CopyImageResult { image_id: Some(id) })
}

/// `CopySnapshot`.
pub fn copy_snapshot(
    region: &mut Region,
    input: CopySnapshotRequest,
) -> Result<CopySnapshotResult, ApiError> {
    let source_region = input.source_region.clone();
    let source = source_of(region, &source_region, |r| {
        snapshot_source(r, &input.source_snapshot_id)
    })?;
    let Source::Snapshot(source) = source else {
        return Err(Kind::Snapshot.not_found(&[&input.source_snapshot_id]));
    };
    let description = snapshot::checked_description(Some(
        input
            .description
            .unwrap_or_else(|| format!("[Copied {} from {source_region}]", source.id)),
    ))?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::Snapshot)?;
    // A copy is encrypted with the key asked for (which needs `Encrypted`, or encryption by
    // default), else the destination region's default key.
    let asked = input.encrypted == Some(true);
    let key = match input.kms_key_id.as_deref() {
        Some(k) => crate::ec2::volume::key_for(region, asked, None, Some(k))?,
        None => crate::ec2::volume::key_for(region, source.encrypted || asked, None, None)?,
    };
    let id = snapshot::take(region, COPIED_VOLUME, source.size, key, description, tags);
    Ok(CopySnapshotResult {
        tags: region.tags.tag_set(&id),
        snapshot_id: Some(id),
    })
}
