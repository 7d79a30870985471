//! Key pairs: CreateKeyPair, ImportKeyPair, DescribeKeyPairs, DeleteKeyPair.
//!
//! The fake keeps no cryptography: a created key's `KeyMaterial` is a PEM-framed block of
//! random bytes, not a usable private key, and fingerprints are derived from the key's id.
//! Imported public keys are checked for OpenSSH's format and kept as given.

use aws_smithy_types::DateTime;

use crate::ec2::error::{self, Code};
use crate::ec2::filter::{Filterable, Filters, one};
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

fn fingerprint(region: &mut Region, bytes: usize) -> String {
    (0..bytes)
        .map(|_| format!("{:02x}", region.ids.next_u64() & 0xff))
        .collect::<Vec<_>>()
        .join(":")
}

fn base64_of(region: &mut Region, n: usize) -> String {
    let bytes: Vec<u8> = (0..n)
        .map(|_| (region.ids.next_u64() & 0xff) as u8)
        .collect();
    aws_smithy_types::base64::encode(bytes)
}

/// `CreateKeyPair`.
pub fn create_key_pair(
    region: &mut Region,
    input: CreateKeyPairRequest,
) -> Result<KeyPairOut, ApiError> {
    check_name(region, &input.key_name)?;
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::KeyPair)?;
    let key_type = input.key_type.unwrap_or(KeyType::Rsa);
    let id = region.ids.resource("key");
    let fingerprint = fingerprint(region, if key_type == KeyType::Rsa { 20 } else { 32 });
    let body = base64_of(region, if key_type == KeyType::Rsa { 1190 } else { 64 });
    let wrapped: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    let material = match input.key_format.unwrap_or(KeyFormat::Pem) {
        KeyFormat::Pem => {
            let label = if key_type == KeyType::Rsa {
                "RSA PRIVATE KEY"
            } else {
                "OPENSSH PRIVATE KEY"
            };
            format!(
                "-----BEGIN {label}-----\n{}\n-----END {label}-----",
                wrapped.join("\n")
            )
        }
        KeyFormat::Ppk => format!(
            "PuTTY-User-Key-File-3: {}\nEncryption: none\nComment: {}\nPrivate-Lines: {}\n{}",
            if key_type == KeyType::Rsa {
                "ssh-rsa"
            } else {
                "ssh-ed25519"
            },
            input.key_name,
            wrapped.len(),
            wrapped.join("\n")
        ),
    };
    let public_key = format!(
        "{} {}",
        if key_type == KeyType::Rsa {
            "ssh-rsa"
        } else {
            "ssh-ed25519"
        },
        base64_of(region, if key_type == KeyType::Rsa { 279 } else { 51 })
    );
    region.tags.insert(&id, tags);
    let created = region.clock.now_datetime();
    region.key_pairs.0.insert(
        input.key_name.clone(),
        KeyPair {
            id: id.clone(),
            name: input.key_name.clone(),
            key_type,
            fingerprint: fingerprint.clone(),
            public_key,
            created,
        },
    );
    Ok(KeyPairOut {
        tags: region.tags.tag_set(&id),
        key_pair_id: Some(id),
        key_name: Some(input.key_name),
        key_fingerprint: Some(fingerprint),
        key_material: Some(material),
    })
}

/// `ImportKeyPair`: an OpenSSH public key (`ssh-rsa`, `ssh-ed25519`, `ecdsa-sha2-*`).
pub fn import_key_pair(
    region: &mut Region,
    input: ImportKeyPairRequest,
) -> Result<ImportKeyPairResult, ApiError> {
    check_name(region, &input.key_name)?;
    let text = String::from_utf8(input.public_key_material.into_inner()).unwrap_or_default();
    let mut parts = text.split_whitespace();
    let (kind, body) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let key_type = match kind {
        "ssh-rsa" => KeyType::Rsa,
        "ssh-ed25519" => KeyType::Ed25519,
        k if k.starts_with("ecdsa-sha2-") => KeyType::Rsa,
        _ => {
            return Err(ApiError::new(
                Code::InvalidKeyFormat,
                "Key is not in valid OpenSSH public key format",
            ));
        }
    };
    if aws_smithy_types::base64::decode(body).map_or(true, |b| b.is_empty()) {
        return Err(ApiError::new(
            Code::InvalidKeyFormat,
            "Key is not in valid OpenSSH public key format",
        ));
    }
    let tags = tags::from_specs(input.tag_specifications.as_deref(), ResourceType::KeyPair)?;
    let id = region.ids.resource("key");
    let fingerprint = fingerprint(region, 16);
    region.tags.insert(&id, tags);
    let created = region.clock.now_datetime();
    region.key_pairs.0.insert(
        input.key_name.clone(),
        KeyPair {
            id: id.clone(),
            name: input.key_name.clone(),
            key_type,
            fingerprint: fingerprint.clone(),
            public_key: format!("{kind} {body}"),
            created,
        },
    );
    Ok(ImportKeyPairResult {
        key_fingerprint: Some(fingerprint),
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
            tags: region.tags.tag_set(&k.id),
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
