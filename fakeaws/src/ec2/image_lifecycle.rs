//! An image's life after registration, as the API reference documents it: disabling
//! (DisableImage, EnableImage), deprecation (EnableImageDeprecation, DisableImageDeprecation)
//! and deregistration protection (EnableImageDeregistrationProtection,
//! DisableImageDeregistrationProtection). Only the owner changes any of them (`AuthFailure`
//! for another's image, as DeregisterImage).
//!
//! - A disabled image is `disabled`, loses every launch permission (it is private again, and
//!   stays so when enabled), is shared with no one, launches nothing (`InvalidAMIID.Unavailable`,
//!   as for an image not `available`) and is left out of DescribeImages unless
//!   `IncludeDisabled`.
//! - A deprecated image (its `DeprecationTime` passed) still launches; DescribeImages leaves it
//!   out for everyone but its owner unless `IncludeDeprecated`. The time is rounded to the
//!   minute, never in the past, at most 10 years ahead (2 years after creation for a public
//!   image).
//! - A protected image is not deregistered; protection `WithCooldown` keeps it so for 24 hours
//!   after it is disabled.

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::image::{self, Image};
use crate::generated::ec2::{
    DisableImageDeprecationRequest, DisableImageDeprecationResult,
    DisableImageDeregistrationProtectionRequest, DisableImageDeregistrationProtectionResult,
    DisableImageRequest, DisableImageResult, EnableImageDeprecationRequest,
    EnableImageDeprecationResult, EnableImageDeregistrationProtectionRequest,
    EnableImageDeregistrationProtectionResult, EnableImageRequest, EnableImageResult,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

/// How long protection enabled `WithCooldown` outlasts its disabling.
const COOLDOWN_SECS: i64 = 24 * 3600;
/// The furthest ahead a deprecation time may be: 10 years.
const MOST_AHEAD_SECS: i64 = 10 * 365 * 24 * 3600;
/// A public image's latest deprecation time, after its creation: 2 years.
const PUBLIC_MOST_SECS: i64 = 2 * 365 * 24 * 3600;

/// An image's deregistration protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Protection {
    /// None: the image may be deregistered.
    #[default]
    Off,
    /// On; `cooldown`: it lasts 24 hours past its disabling.
    On {
        /// Enabled `WithCooldown`.
        cooldown: bool,
    },
    /// Disabled, but still in force until `until` (seconds since the epoch).
    CoolingDown {
        /// The end of the cooldown.
        until: i64,
    },
}

impl Protection {
    /// Whether it is off (what the state file leaves out).
    pub fn is_off(&self) -> bool {
        *self == Protection::Off
    }

    /// DescribeImages' `DeregistrationProtection`.
    pub fn label(&self) -> &'static str {
        match self {
            Protection::Off | Protection::CoolingDown { .. } => "disabled",
            Protection::On { cooldown: true } => "enabled-with-cooldown",
            Protection::On { cooldown: false } => "enabled-without-cooldown",
        }
    }

    /// Whether it keeps the image from being deregistered at `now` (seconds).
    fn holds(&self, now: i64) -> bool {
        match self {
            Protection::Off => false,
            Protection::On { .. } => true,
            Protection::CoolingDown { until } => now < *until,
        }
    }
}

/// Whether `image` is deprecated at `now` (seconds).
pub fn deprecated(image: &Image, now: i64) -> bool {
    image.deprecate_at.is_some_and(|at| at <= now)
}

/// `image`'s `DeprecationTime`, when it has one.
pub fn deprecation_time(image: &Image) -> Option<String> {
    image
        .deprecate_at
        .map(|at| format_timestamp(DateTime::from_secs(at)))
}

/// `DisableImage`: `disabled`, private, every launch permission gone.
pub fn disable_image(
    region: &mut Region,
    input: DisableImageRequest,
) -> Result<DisableImageResult, ApiError> {
    let image = image::owned_mut(region, &input.image_id)?;
    image.disabled = true;
    image.public = false;
    image.launch_permissions.clear();
    Ok(DisableImageResult {
        r#return: Some(true),
    })
}

/// `EnableImage`: available again, shared with no one until shared anew.
pub fn enable_image(
    region: &mut Region,
    input: EnableImageRequest,
) -> Result<EnableImageResult, ApiError> {
    image::owned_mut(region, &input.image_id)?.disabled = false;
    Ok(EnableImageResult {
        r#return: Some(true),
    })
}

/// The creation time of `image`, in seconds, when its `CreationDate` reads as one.
fn created(image: &Image) -> Option<i64> {
    DateTime::from_str(
        &image.creation_date,
        aws_smithy_types::date_time::Format::DateTime,
    )
    .ok()
    .map(|t| t.secs())
}

/// `EnableImageDeprecation`.
pub fn enable_image_deprecation(
    region: &mut Region,
    input: EnableImageDeprecationRequest,
) -> Result<EnableImageDeprecationResult, ApiError> {
    let now = region.clock.now_datetime().secs();
    // Rounded to the nearest minute.
    let at = (input.deprecate_at.secs() + 30).div_euclid(60) * 60;
    let image = image::owned_mut(region, &input.image_id)?;
    let shown = format_timestamp(input.deprecate_at);
    if at < now {
        return Err(ApiError::invalid_parameter(
            "DeprecateAt",
            &shown,
            "The deprecation time cannot be in the past.",
        ));
    }
    if at > now + MOST_AHEAD_SECS {
        return Err(ApiError::invalid_parameter(
            "DeprecateAt",
            &shown,
            "The deprecation time is at most 10 years from now.",
        ));
    }
    if image.public
        && let Some(created) = created(image)
        && at > created + PUBLIC_MOST_SECS
    {
        return Err(ApiError::invalid_parameter(
            "DeprecateAt",
            &shown,
            "A public AMI's deprecation time is at most 2 years after its creation date.",
        ));
    }
    image.deprecate_at = Some(at);
    Ok(EnableImageDeprecationResult {
        r#return: Some(true),
    })
}

/// `DisableImageDeprecation`.
pub fn disable_image_deprecation(
    region: &mut Region,
    input: DisableImageDeprecationRequest,
) -> Result<DisableImageDeprecationResult, ApiError> {
    image::owned_mut(region, &input.image_id)?.deprecate_at = None;
    Ok(DisableImageDeprecationResult {
        r#return: Some(true),
    })
}

/// `EnableImageDeregistrationProtection`.
pub fn enable_protection(
    region: &mut Region,
    input: EnableImageDeregistrationProtectionRequest,
) -> Result<EnableImageDeregistrationProtectionResult, ApiError> {
    image::owned_mut(region, &input.image_id)?.protection = Protection::On {
        cooldown: input.with_cooldown.unwrap_or(false),
    };
    Ok(EnableImageDeregistrationProtectionResult {
        r#return: Some("true".into()),
    })
}

/// `DisableImageDeregistrationProtection`: off at once, or 24 hours on when it was enabled
/// with the cooldown.
pub fn disable_protection(
    region: &mut Region,
    input: DisableImageDeregistrationProtectionRequest,
) -> Result<DisableImageDeregistrationProtectionResult, ApiError> {
    let now = region.clock.now_datetime().secs();
    let image = image::owned_mut(region, &input.image_id)?;
    image.protection = match image.protection {
        Protection::On { cooldown: true } => Protection::CoolingDown {
            until: now + COOLDOWN_SECS,
        },
        Protection::CoolingDown { until } => Protection::CoolingDown { until },
        Protection::Off | Protection::On { cooldown: false } => Protection::Off,
    };
    Ok(DisableImageDeregistrationProtectionResult {
        r#return: Some("true".into()),
    })
}

/// Refuses to deregister `image` while its protection holds.
pub fn check_deregister(region: &Region, image: &Image) -> Result<(), ApiError> {
    let now = region.clock.now_datetime().secs();
    if !image.protection.holds(now) {
        return Ok(());
    }
    let message = match image.protection {
        Protection::CoolingDown { until } => format!(
            "The AMI {} has deregistration protection in its cooldown period; it can be deregistered after {}.",
            image.id,
            format_timestamp(DateTime::from_secs(until))
        ),
        _ => format!(
            "The AMI {} has deregistration protection enabled. Disable it with DisableImageDeregistrationProtection first.",
            image.id
        ),
    };
    Err(ApiError::new(Code::OperationNotPermitted, message))
}
