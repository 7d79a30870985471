//! How an instance boots, and AMD SEV-SNP, as the EC2 user guide gives them.
//!
//! Boot mode: an image's boot mode parameter and the instance type's supported boot modes
//! decide it at launch, and again at each start (the type may have changed meanwhile):
//! - `uefi`: UEFI, on a type that supports it; a type that does not refuses the launch or
//!   start (`InvalidParameterValue`, in AWS's words as real answers show them);
//! - `legacy-bios`: legacy BIOS, likewise;
//! - `uefi-preferred`: UEFI where the type supports it, else legacy BIOS;
//! - none: the architecture's default, UEFI on Arm, legacy BIOS on x86.
//!
//! DescribeInstances answers the image's parameter as `BootMode` (when the image has one) and
//! the mode the instance booted in as `CurrentInstanceBootMode`.
//!
//! AMD SEV-SNP (`CpuOptions.AmdSevSnp`): asked at launch only, on a type that supports it
//! (the catalogue's `amd-sev-snp` feature) and booting in UEFI, so from an image whose boot
//! mode is `uefi` or `uefi-preferred` (the user guide's requirements). Refusals are
//! `InvalidParameterValue` in the fake's words (AWS documents neither code nor wording). An
//! instance keeps it for life: a stopped one may not be resized to a type without it.

use crate::generated::ec2::{
    AmdSevSnpSpecification, ArchitectureValues, BootModeType, BootModeValues,
    InstanceBootModeValues, InstanceType,
};
use crate::protocol::error::ApiError;

use crate::ec2::instance_type::{supported_boot_modes, supports_sev_snp};

/// The mode an instance of `t` boots in from an image of `image` boot mode and `arch`.
pub fn current_mode(
    image: Option<BootModeValues>,
    arch: ArchitectureValues,
    t: InstanceType,
) -> Result<InstanceBootModeValues, ApiError> {
    // A type outside the catalogue is taken to boot as asked.
    let supported = supported_boot_modes(t);
    let supports = |m: BootModeType| supported.as_ref().is_none_or(|s| s.contains(&m));
    let refuse = |mode: &str, hint: &str| {
        ApiError::invalid_value(format!(
            "The {} instance type does not support an AMI with a boot mode of {mode}. {hint}",
            t.as_str()
        ))
    };
    match image {
        Some(BootModeValues::Uefi) => {
            if supports(BootModeType::Uefi) {
                Ok(InstanceBootModeValues::Uefi)
            } else {
                Err(refuse(
                    "UEFI",
                    "Only instance types built on the Nitro System support UEFI. Specify an \
                     instance type that supports UEFI, and try again.",
                ))
            }
        }
        Some(BootModeValues::LegacyBios) => {
            if supports(BootModeType::LegacyBios) {
                Ok(InstanceBootModeValues::LegacyBios)
            } else {
                Err(refuse(
                    "Legacy BIOS",
                    "Specify an instance type that supports Legacy BIOS, and try again.",
                ))
            }
        }
        Some(BootModeValues::UefiPreferred) => Ok(if supports(BootModeType::Uefi) {
            InstanceBootModeValues::Uefi
        } else {
            InstanceBootModeValues::LegacyBios
        }),
        None => Ok(if arch == ArchitectureValues::Arm64 {
            InstanceBootModeValues::Uefi
        } else {
            InstanceBootModeValues::LegacyBios
        }),
    }
}

/// Checks AMD SEV-SNP `asked` of an instance of `t` booting in `mode`.
pub fn check_sev_snp(
    asked: Option<AmdSevSnpSpecification>,
    t: InstanceType,
    mode: InstanceBootModeValues,
) -> Result<(), ApiError> {
    if asked != Some(AmdSevSnpSpecification::Enabled) {
        return Ok(());
    }
    if !supports_sev_snp(t) {
        return Err(ApiError::invalid_value(format!(
            "The {} instance type does not support AMD SEV-SNP. Specify an instance type that \
             supports it (DescribeInstanceTypes, filter processor-info.supported-features \
             amd-sev-snp), and try again.",
            t.as_str()
        )));
    }
    if mode != InstanceBootModeValues::Uefi {
        return Err(ApiError::invalid_value(
            "AMD SEV-SNP requires UEFI boot: specify an AMI whose boot mode is uefi or \
             uefi-preferred, and try again.",
        ));
    }
    Ok(())
}
