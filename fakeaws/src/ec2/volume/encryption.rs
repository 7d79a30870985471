//! EBS encryption by default: GetEbsEncryptionByDefault, EnableEbsEncryptionByDefault,
//! DisableEbsEncryptionByDefault and GetEbsDefaultKmsKeyId. Off for a new account, as on AWS.
//! While it is on, every volume made in the region (CreateVolume, RunInstances' volumes) and
//! every snapshot copy (CopySnapshot, CopyImage) is encrypted, whatever the request says, as
//! the API reference and the EBS user guide document; turning it on or off changes no volume
//! or snapshot already there.

use crate::generated::ec2::{
    DisableEbsEncryptionByDefaultRequest, DisableEbsEncryptionByDefaultResult,
    EnableEbsEncryptionByDefaultRequest, EnableEbsEncryptionByDefaultResult,
    GetEbsDefaultKmsKeyIdRequest, GetEbsDefaultKmsKeyIdResult, GetEbsEncryptionByDefaultRequest,
    GetEbsEncryptionByDefaultResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The KMS key of encryption by default: the account's AWS managed key for EBS (the fake has
/// no KMS to choose another).
const DEFAULT_KMS_KEY: &str = "alias/aws/ebs";

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

/// `GetEbsDefaultKmsKeyId`: the AWS managed key for EBS.
pub fn get_ebs_default_kms_key_id(
    _region: &mut Region,
    _input: GetEbsDefaultKmsKeyIdRequest,
) -> Result<GetEbsDefaultKmsKeyIdResult, ApiError> {
    Ok(GetEbsDefaultKmsKeyIdResult {
        kms_key_id: Some(DEFAULT_KMS_KEY.to_string()),
    })
}
