//! EBS encryption by default and the KMS keys of encrypted volumes and snapshots:
//! GetEbsEncryptionByDefault, EnableEbsEncryptionByDefault, DisableEbsEncryptionByDefault,
//! GetEbsDefaultKmsKeyId, ModifyEbsDefaultKmsKeyId and ResetEbsDefaultKmsKeyId. Encryption by
//! default is off for a new account, as on AWS. While it is on, every volume made in the
//! region (CreateVolume, RunInstances' volumes) and every snapshot copy (CopySnapshot,
//! CopyImage) is encrypted, whatever the request says, as the API reference and the EBS user
//! guide document; turning it on or off changes no volume or snapshot already there.
//!
//! Every encrypted volume and snapshot names its key by ARN (`KmsKeyId`): the one the request
//! names, else its snapshot's, else the region's default key for EBS, which is the account's
//! AWS managed key (`alias/aws/ebs`, whose ARN is stable per account and region) until
//! ModifyEbsDefaultKmsKeyId names another. A key is named as KMS takes it: a key id, a key
//! ARN, an alias (`alias/...`) or an alias ARN. The fake has no KMS: an id becomes its key
//! ARN in the region, `alias/aws/ebs` the AWS managed key's, and another alias a key ARN
//! derived from the alias's name (the same alias, the same key); a value of none of these
//! forms is refused at once (AWS accepts it and fails the volume later), and a key with
//! encryption neither asked for nor on by default is `InvalidParameterDependency`.

use crate::ec2::error::Code;
use crate::generated::ec2::{
    DisableEbsEncryptionByDefaultRequest, DisableEbsEncryptionByDefaultResult,
    EnableEbsEncryptionByDefaultRequest, EnableEbsEncryptionByDefaultResult,
    GetEbsDefaultKmsKeyIdRequest, GetEbsDefaultKmsKeyIdResult, GetEbsEncryptionByDefaultRequest,
    GetEbsEncryptionByDefaultResult, ModifyEbsDefaultKmsKeyIdRequest,
    ModifyEbsDefaultKmsKeyIdResult, ResetEbsDefaultKmsKeyIdRequest, ResetEbsDefaultKmsKeyIdResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The alias of the account's AWS managed key for EBS.
const AWS_MANAGED_ALIAS: &str = "alias/aws/ebs";

/// A key id as KMS makes them, stable for `seed`: a random (version 4) UUID's form, 32 hex
/// digits in 8-4-4-4-12 groups.
fn key_id_for(seed: &str) -> String {
    let hash = |salt: u64| {
        seed.bytes().fold(salt, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let hex = format!(
        "{:016x}{:016x}",
        hash(0xcbf2_9ce4_8422_2325),
        hash(0x8422_2325_cbf2_9ce4)
    );
    let part = |from: usize, to: usize| hex.get(from..to).unwrap_or_default();
    // The version digit (4) and the variant's (8, 9, a or b).
    let variant = ["8", "9", "a", "b"]
        .get(usize::from(
            hex.as_bytes().get(16).copied().unwrap_or(0) % 4,
        ))
        .copied()
        .unwrap_or("8");
    format!(
        "{}-{}-4{}-{variant}{}-{}",
        part(0, 8),
        part(8, 12),
        part(13, 16),
        part(17, 20),
        part(20, 32)
    )
}

/// The ARN of key `id` of the account in `region`.
fn key_arn(region: &Region, id: &str) -> String {
    format!(
        "arn:{}:kms:{}:{}:key/{id}",
        crate::ec2::account::arn_partition(&region.name),
        region.name,
        region.account_id
    )
}

/// The ARN of the account's AWS managed key for EBS in `region`.
fn aws_managed_key(region: &Region) -> String {
    key_arn(
        region,
        &key_id_for(&format!(
            "{}/{}/{AWS_MANAGED_ALIAS}",
            region.account_id, region.name
        )),
    )
}

/// Whether `key` (an ARN) is the account's AWS managed key for EBS in `region`, whose
/// snapshots AWS shares with no one.
pub fn is_aws_managed(region: &Region, key: &str) -> bool {
    key == aws_managed_key(region)
}

/// The region's default key for EBS encryption, by ARN.
pub fn default_key(region: &Region) -> String {
    region
        .ebs_default_kms_key
        .clone()
        .unwrap_or_else(|| aws_managed_key(region))
}

/// Whether `s` is a key id as KMS makes them (8-4-4-4-12 hex digits) or a multi-Region one
/// (`mrk-` and 32 hex digits).
fn is_key_id(s: &str) -> bool {
    if let Some(hex) = s.strip_prefix("mrk-") {
        return hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `s` is an alias name KMS takes: `alias/` then letters, digits, `/_-`.
fn is_alias(s: &str) -> bool {
    s.strip_prefix("alias/").is_some_and(|name| {
        !name.is_empty()
            && name.len() <= 250
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/_-".contains(&b))
    })
}

/// The key `given` names (a key id, a key ARN, an alias or an alias ARN), by its key ARN.
pub fn resolve(region: &Region, given: &str) -> Result<String, ApiError> {
    let invalid = || {
        ApiError::invalid_value(format!(
            "Invalid id: \"{given}\" (expecting a KMS key id, a key ARN, an alias or an alias \
             ARN)"
        ))
    };
    let resource = match given.strip_prefix("arn:") {
        Some(arn) => {
            // arn:PARTITION:kms:REGION:ACCOUNT:RESOURCE
            let parts: Vec<&str> = arn.splitn(5, ':').collect();
            match parts.as_slice() {
                [_, "kms", r, account, resource]
                    if !r.is_empty()
                        && account.len() == 12
                        && account.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    if let Some(id) = resource.strip_prefix("key/") {
                        if !is_key_id(id) {
                            return Err(invalid());
                        }
                        return Ok(given.to_string());
                    }
                    *resource
                }
                _ => return Err(invalid()),
            }
        }
        None => given,
    };
    if is_key_id(resource) {
        return Ok(key_arn(region, resource));
    }
    if !is_alias(resource) {
        return Err(invalid());
    }
    if resource == AWS_MANAGED_ALIAS {
        return Ok(aws_managed_key(region));
    }
    Ok(key_arn(
        region,
        &key_id_for(&format!("{}/{}/{resource}", region.account_id, region.name)),
    ))
}

/// The key of a new volume or snapshot copy, by ARN, or none for an unencrypted one: the key
/// `given` (which needs encryption asked for, inherited or on by default), else the key
/// `inherited` from an encrypted source, else the region's default key when encryption is
/// asked for or on by default.
pub fn key_for(
    region: &Region,
    asked: bool,
    inherited: Option<&str>,
    given: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let encrypted = encrypts(region, asked || inherited.is_some());
    match (given, inherited) {
        (Some(_), _) if !encrypted => Err(ApiError::new(
            Code::InvalidParameterDependency,
            "The parameter KmsKeyId requires the parameter Encrypted to be set.",
        )),
        (Some(g), _) => resolve(region, g).map(Some),
        (None, Some(k)) => Ok(Some(k.to_string())),
        (None, None) => Ok(encrypted.then(|| default_key(region))),
    }
}

/// Whether a new volume or snapshot copy is encrypted: as asked (or as its source), or
/// because encryption by default is on in the region.
pub fn encrypts(region: &Region, asked: bool) -> bool {
    asked || region.ebs_encryption_by_default
}

/// `GetEbsEncryptionByDefault`.
pub fn get_ebs_encryption_by_default(
    region: &mut Region,
    _input: GetEbsEncryptionByDefaultRequest,
) -> Result<GetEbsEncryptionByDefaultResult, ApiError> {
    Ok(GetEbsEncryptionByDefaultResult {
        ebs_encryption_by_default: Some(region.ebs_encryption_by_default),
        sse_type: None,
    })
}

/// `EnableEbsEncryptionByDefault`.
pub fn enable_ebs_encryption_by_default(
    region: &mut Region,
    _input: EnableEbsEncryptionByDefaultRequest,
) -> Result<EnableEbsEncryptionByDefaultResult, ApiError> {
    region.ebs_encryption_by_default = true;
    Ok(EnableEbsEncryptionByDefaultResult {
        ebs_encryption_by_default: Some(true),
    })
}

/// `DisableEbsEncryptionByDefault`.
pub fn disable_ebs_encryption_by_default(
    region: &mut Region,
    _input: DisableEbsEncryptionByDefaultRequest,
) -> Result<DisableEbsEncryptionByDefaultResult, ApiError> {
    region.ebs_encryption_by_default = false;
    Ok(DisableEbsEncryptionByDefaultResult {
        ebs_encryption_by_default: Some(false),
    })
}

/// `GetEbsDefaultKmsKeyId`: the key ModifyEbsDefaultKmsKeyId named, by ARN, or
/// `alias/aws/ebs` (the AWS managed key), as the CLI's documented outputs show them.
pub fn get_ebs_default_kms_key_id(
    region: &mut Region,
    _input: GetEbsDefaultKmsKeyIdRequest,
) -> Result<GetEbsDefaultKmsKeyIdResult, ApiError> {
    Ok(GetEbsDefaultKmsKeyIdResult {
        kms_key_id: Some(
            region
                .ebs_default_kms_key
                .clone()
                .unwrap_or_else(|| AWS_MANAGED_ALIAS.to_string()),
        ),
    })
}

/// `ModifyEbsDefaultKmsKeyId`: the region's default key for EBS encryption from now on
/// (volumes and snapshots already there keep theirs); answers its ARN.
pub fn modify_ebs_default_kms_key_id(
    region: &mut Region,
    input: ModifyEbsDefaultKmsKeyIdRequest,
) -> Result<ModifyEbsDefaultKmsKeyIdResult, ApiError> {
    let key = resolve(region, &input.kms_key_id)?;
    region.ebs_default_kms_key = Some(key.clone());
    Ok(ModifyEbsDefaultKmsKeyIdResult {
        kms_key_id: Some(key),
    })
}

/// `ResetEbsDefaultKmsKeyId`: back to the AWS managed key, answered by its ARN.
pub fn reset_ebs_default_kms_key_id(
    region: &mut Region,
    _input: ResetEbsDefaultKmsKeyIdRequest,
) -> Result<ResetEbsDefaultKmsKeyIdResult, ApiError> {
    region.ebs_default_kms_key = None;
    Ok(ResetEbsDefaultKmsKeyIdResult {
        kms_key_id: Some(aws_managed_key(region)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_key_ids_have_the_form_of_kms_key_ids() {
        for seed in [
            "123456789012/us-east-1/alias/aws/ebs",
            "a",
            "",
            "alias/data",
        ] {
            let id = key_id_for(seed);
            assert!(is_key_id(&id), "{id}");
            assert_eq!(id.as_bytes()[14], b'4', "{id}");
            assert!(b"89ab".contains(&id.as_bytes()[19]), "{id}");
            assert_eq!(id, key_id_for(seed), "stable");
        }
        assert_ne!(key_id_for("a"), key_id_for("b"));
        assert!(is_key_id("mrk-1234abcd12ab34cd56ef1234567890ab"));
        for bad in [
            "1234abcd-12ab-34cd-56ef",
            "zzzzzzzz-12ab-34cd-56ef-1234567890ab",
            "",
        ] {
            assert!(!is_key_id(bad), "{bad}");
        }
        for (alias, ok) in [
            ("alias/data", true),
            ("alias/", false),
            ("data", false),
            ("alias/a b", false),
        ] {
            assert_eq!(is_alias(alias), ok, "{alias}");
        }
    }
}
