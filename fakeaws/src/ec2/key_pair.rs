//! Key pairs: CreateKeyPair, ImportKeyPair, DescribeKeyPairs, DeleteKeyPair.
//!
//! Created keys are real RSA or Ed25519 keys, imported ones real public keys, each with the
//! fingerprint EC2 computes (`key_material.rs`).

use aws_smithy_types::DateTime;

use crate::ec2::error::{self, Code};
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::key_material;
use crate::ec2::tags;
use crate::generated::ec2::{
    CreateKeyPairRequest, DeleteKeyPairRequest, DeleteKeyPairResult, DescribeKeyPairsRequest,
    DescribeKeyPairsResult, ImportKeyPairRequest, ImportKeyPairResult, KeyFormat,
    KeyPair as KeyPairOut, KeyPairInfo, KeyType, ResourceType,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Key pairs by name.
    KeyPairs of KeyPair
}

/// One key pair.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct KeyPair {
    /// `key-...`.
    pub id: String,
    /// Its name, unique in the region.
    pub name: String,
    /// `rsa` or `ed25519`.
    pub key_type: KeyType,
    /// Its fingerprint.
    pub fingerprint: String,
    /// The OpenSSH public key.
    pub public_key: String,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
}

fn check_name(region: &Region, name: &str) -> Result<(), ApiError> {
    if name.is_empty() || name.len() > 255 || !name.is_ascii() {
        return Err(ApiError::invalid_parameter(
            "KeyName",
            name,
            "Key names are 1 to 255 ASCII characters.",
        ));
    }
    if region.key_pairs.contains_key(name) {
        return Err(ApiError::new(
            Code::InvalidKeyPairDuplicate,
            format!("The keypair '{name}' already exists."),
        ));
    }
    Ok(())
}

/// `CreateKeyPair`: a new RSA or Ed25519 key (`key_material.rs`).
pub fn create_key_pair(
    region: &mut Region,
    input: CreateKeyPairRequest,
) -> Result<KeyPairOut, ApiError> {
    check_name(region, &input.key_name)?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::KeyPair)?;
    let key_type = input.key_type.unwrap_or(KeyType::Rsa);
    let made = key_material::make(
        &key_type,
        &input.key_format.unwrap_or(KeyFormat::Pem),
        &input.key_name,
    )?;
    let id = region.ids.resource("key");
    region.tags.insert(&id, tags);
    let created = region.clock.now_datetime();
    region.key_pairs.0.insert(
        input.key_name.clone(),
        KeyPair {
            id: id.clone(),
            name: input.key_name.clone(),
            key_type,
            fingerprint: made.fingerprint.clone(),
            public_key: made.public_key,
            created,
        },
    );
    Ok(KeyPairOut {
        tags: region.tags.tag_set(&id),
        key_pair_id: Some(id),
        key_name: Some(input.key_name),
        key_fingerprint: Some(made.fingerprint),
        key_material: Some(made.material),
    })
}

/// `ImportKeyPair`: an RSA or Ed25519 public key (`key_material.rs` lists the formats).
pub fn import_key_pair(
    region: &mut Region,
    input: ImportKeyPairRequest,
) -> Result<ImportKeyPairResult, ApiError> {
    check_name(region, &input.key_name)?;
    let read = key_material::read(input.public_key_material.as_ref())?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::KeyPair)?;
    let id = region.ids.resource("key");
    region.tags.insert(&id, tags);
    let created = region.clock.now_datetime();
    region.key_pairs.0.insert(
        input.key_name.clone(),
        KeyPair {
            id: id.clone(),
            name: input.key_name.clone(),
            key_type: read.key_type,
            fingerprint: read.fingerprint.clone(),
            public_key: read.public_key,
            created,
        },
    );
    Ok(ImportKeyPairResult {
        key_fingerprint: Some(read.fingerprint),
        key_name: Some(input.key_name),
        tags: region.tags.tag_set(&id),
        key_pair_id: Some(id),
    })
}

impl Filterable for (&KeyPair, &Region) {
    const NAMES: &'static [&'static str] = &["key-pair-id", "fingerprint", "key-name", "key-type"];

    fn values(&self, name: &str) -> Vec<String> {
        let (k, _) = *self;
        match name {
            "key-pair-id" => one(k.id.clone()),
            "fingerprint" => one(k.fingerprint.clone()),
            "key-name" => one(k.name.clone()),
            "key-type" => one(k.key_type.as_str()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeKeyPairs`: by name, by id, or filtered; unknown names are errors.
pub fn describe_key_pairs(
    region: &mut Region,
    input: DescribeKeyPairsRequest,
) -> Result<DescribeKeyPairsResult, ApiError> {
    let filters = Filters::parse::<(&KeyPair, &Region)>(input.filters)?;
    let region = &*region;
    let names = input.key_names.unwrap_or_default();
    let ids = input.key_pair_ids.unwrap_or_default();
    for n in &names {
        if !region.key_pairs.contains_key(n) {
            return Err(error::key_pair_not_found(n));
        }
    }
    for id in &ids {
        if !region.key_pairs.values().any(|k| &k.id == id) {
            return Err(error::key_pair_not_found(id));
        }
    }
    let include_public = input.include_public_key == Some(true);
    let pairs = region
        .key_pairs
        .values()
        .filter(|k| names.is_empty() || names.contains(&k.name))
        .filter(|k| ids.is_empty() || ids.contains(&k.id))
        .filter(|k| filters.matches(&(*k, region), region.tags.get(&k.id)))
        .map(|k| KeyPairInfo {
            key_pair_id: Some(k.id.clone()),
            key_type: Some(k.key_type),
            tags: region.tags.listed(&k.id),
            public_key: include_public.then(|| k.public_key.clone()),
            create_time: Some(k.created),
            key_name: Some(k.name.clone()),
            key_fingerprint: Some(k.fingerprint.clone()),
        })
        .collect();
    Ok(DescribeKeyPairsResult {
        key_pairs: Some(pairs),
    })
}

/// `DeleteKeyPair`: by name or id; a key in use by instances may be deleted (as AWS allows),
/// and deleting a name that does not exist succeeds.
pub fn delete_key_pair(
    region: &mut Region,
    input: DeleteKeyPairRequest,
) -> Result<DeleteKeyPairResult, ApiError> {
    let name = match (&input.key_name, &input.key_pair_id) {
        (Some(n), _) => Some(n.clone()),
        (None, Some(id)) => {
            let found = region
                .key_pairs
                .values()
                .find(|k| &k.id == id)
                .map(|k| k.name.clone());
            if found.is_none() {
                return Err(error::key_pair_not_found(id));
            }
            found
        }
        (None, None) => return Err(ApiError::missing_parameter("KeyName")),
    };
    let removed = name.and_then(|n| region.key_pairs.0.remove(&n));
    if let Some(k) = &removed {
        region.tags.remove_resource(&k.id);
    }
    Ok(DeleteKeyPairResult {
        r#return: Some(true),
        key_pair_id: removed.map(|k| k.id),
    })
}
