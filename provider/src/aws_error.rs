//! The one place that knows AWS error codes: SDK errors become [`AwsError`] with the
//! operation, the code and the message, and codes are classified (not found, dependency,
//! duplicate, throttled).

use std::error::Error as StdError;
use std::fmt::Debug;

use aws_sdk_ec2::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

/// A failed AWS call.
#[derive(Debug, thiserror::Error)]
#[error("{op}: {code}: {message}")]
pub struct AwsError {
    /// The operation, such as `CreateVpc`.
    pub op: &'static str,
    /// AWS's error code, or `Unreachable` when no answer came.
    pub code: String,
    /// AWS's message.
    pub message: String,
    /// The SDK error.
    #[source]
    pub source: Box<dyn StdError + Send + Sync>,
}

impl AwsError {
    /// Whether the code says the resource does not exist.
    pub fn is_not_found(&self) -> bool {
        is_not_found(&self.code)
    }

    /// Whether the code says something still depends on the resource.
    pub fn is_dependency(&self) -> bool {
        matches!(
            self.code.as_str(),
            "DependencyViolation" | "InvalidIPAddress.InUse" | "IncorrectState"
        )
    }
}

/// Whether `code` says the resource does not exist.
pub fn is_not_found(code: &str) -> bool {
    code.ends_with(".NotFound")
        || matches!(
            code,
            "LoadBalancerNotFound" | "NatGatewayNotFound" | "InvalidInstance"
        )
}

/// Wraps an SDK error of operation `op`.
pub fn aws<E, R>(op: &'static str) -> impl FnOnce(SdkError<E, R>) -> AwsError
where
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
    R: Debug + Send + Sync + 'static,
{
    move |err| {
        let (code, message) = match err.code() {
            Some(code) => (
                code.to_string(),
                err.message().unwrap_or_default().to_string(),
            ),
            None => {
                // No AWS answer: name the innermost cause (connection refused, DNS, TLS...).
                let mut cause: &dyn StdError = &err;
                while let Some(next) = cause.source() {
                    cause = next;
                }
                let detail = if std::ptr::addr_eq(cause, &err as &dyn StdError) {
                    format!("{}", DisplayErrorContext(&err))
                } else {
                    cause.to_string()
                };
                (
                    "Unreachable".to_string(),
                    format!("no answer from the endpoint: {detail}"),
                )
            }
        };
        AwsError {
            op,
            code,
            message,
            source: Box::new(err),
        }
    }
}
