//! The one place that knows AWS error codes, and the error policy for them. An SDK error
//! becomes an [`AwsError`] (operation, code, message); its code falls into one [`Class`];
//! each class maps to what the caller does next ([`Class::action`]: requeue after how long,
//! fail, or ignore). `crate::error::error_policy` applies the same table to the crate's
//! `Error`, in the manner of kube-runtime's `error_policy`. No other module compares an AWS
//! error code.

use std::error::Error as StdError;
use std::fmt::Debug;
use std::time::Duration;

use aws_sdk_ec2::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

/// The code an [`AwsError`] carries when no answer came from the endpoint.
pub const UNREACHABLE: &str = "Unreachable";

/// A failed AWS call.
#[derive(Debug, thiserror::Error)]
#[error("{op}: {code}: {message}")]
pub struct AwsError {
    /// The operation, such as `CreateVpc`.
    pub op: &'static str,
    /// AWS's error code, or [`UNREACHABLE`] when no answer came.
    pub code: String,
    /// AWS's message.
    pub message: String,
    /// The SDK error.
    #[source]
    pub source: Box<dyn StdError + Send + Sync>,
}

/// What an AWS error code says, as far as the provider acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The resource does not exist (`*.NotFound`, `LoadBalancerNotFound`, ...).
    NotFound,
    /// The resource does not exist yet: a not-found answer about something this run has
    /// just created, which AWS's eventual consistency hides for a while. Only
    /// [`AwsError::class_after_create`] gives it.
    NotFoundYet,
    /// Something still depends on the resource (`DependencyViolation`, an address in use, a
    /// resource in the wrong state for the call).
    Dependency,
    /// A resource of that name already exists (`InvalidGroup.Duplicate`, ...).
    Duplicate,
    /// The resource is not attached where the call says (`Gateway.NotAttached`).
    NotAttached,
    /// The account's request rate is exceeded (`RequestLimitExceeded`, `Throttling`).
    Throttled,
    /// AWS failed for now (`InternalError`, `Unavailable`).
    Unavailable,
    /// AWS has no capacity for the request where it was asked for
    /// (`InsufficientInstanceCapacity`): AWS says it works on more, so it may come later;
    /// the message names the zone and the zones that have it.
    Capacity,
    /// No answer came at all, even after the SDK's own retries (connection refused, DNS,
    /// TLS): a wrong endpoint or no network, which waiting does not mend.
    Unreachable,
    /// Anything else: the request itself is wrong, or AWS refuses it for good.
    Other,
}

/// What the caller does with a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Call again after this long; nothing is wrong that time does not mend.
    Requeue(Duration),
    /// Stop and report: the spec or the account must change first.
    Fail,
    /// What was wanted already holds (a delete of something gone, a detach of something not
    /// attached): carry on as if the call succeeded.
    Ignore,
}

impl Class {
    /// The class of an AWS error code.
    pub fn of(code: &str) -> Class {
        match code {
            c if c.ends_with(".NotFound") => Class::NotFound,
            "LoadBalancerNotFound" | "NatGatewayNotFound" | "InvalidInstance" => Class::NotFound,
            "DependencyViolation" | "InvalidIPAddress.InUse" | "IncorrectState" => {
                Class::Dependency
            }
            c if c.ends_with(".Duplicate") => Class::Duplicate,
            "DuplicateLoadBalancerName" | "DuplicateTagKeys" | "RouteAlreadyExists" => {
                Class::Duplicate
            }
            "Gateway.NotAttached" => Class::NotAttached,
            "RequestLimitExceeded" | "Throttling" | "ThrottlingException" => Class::Throttled,
            "InternalError" | "InternalFailure" | "Unavailable" | "ServiceUnavailable" => {
                Class::Unavailable
            }
            "InsufficientInstanceCapacity"
            | "InsufficientHostCapacity"
            | "InsufficientCapacity" => Class::Capacity,
            UNREACHABLE => Class::Unreachable,
            _ => Class::Other,
        }
    }

    /// What a caller does with an error of this class, when the call was a delete or detach
    /// (where not found and not attached mean done) or a step of a reconcile.
    pub fn action(self) -> Action {
        match self {
            Class::NotFound | Class::NotAttached => Action::Ignore,
            Class::NotFoundYet => Action::Requeue(Duration::from_secs(5)),
            Class::Dependency => Action::Requeue(Duration::from_secs(15)),
            Class::Throttled => Action::Requeue(Duration::from_secs(30)),
            Class::Unavailable => Action::Requeue(Duration::from_secs(10)),
            Class::Capacity => Action::Requeue(Duration::from_secs(60)),
            Class::Duplicate | Class::Unreachable | Class::Other => Action::Fail,
        }
    }
}

impl AwsError {
    /// The class of the error's code.
    pub fn class(&self) -> Class {
        Class::of(&self.code)
    }

    /// The class of an error about a resource this run has just created: not found is
    /// [`Class::NotFoundYet`], since AWS may not show a new resource at once.
    pub fn class_after_create(&self) -> Class {
        match self.class() {
            Class::NotFound => Class::NotFoundYet,
            c => c,
        }
    }

    /// Whether the code says the resource does not exist.
    pub fn is_not_found(&self) -> bool {
        self.class() == Class::NotFound
    }
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
                    UNREACHABLE.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_fall_into_their_classes() {
        for (code, class) in [
            ("InvalidVpcID.NotFound", Class::NotFound),
            ("LoadBalancerNotFound", Class::NotFound),
            ("DependencyViolation", Class::Dependency),
            ("InvalidIPAddress.InUse", Class::Dependency),
            ("InvalidGroup.Duplicate", Class::Duplicate),
            ("Gateway.NotAttached", Class::NotAttached),
            ("RequestLimitExceeded", Class::Throttled),
            ("Throttling", Class::Throttled),
            ("InternalError", Class::Unavailable),
            (UNREACHABLE, Class::Unreachable),
            ("InvalidParameterValue", Class::Other),
        ] {
            assert_eq!(Class::of(code), class, "{code}");
        }
    }

    #[test]
    fn the_policy_requeues_what_time_mends_and_fails_the_rest() {
        assert_eq!(Class::NotFound.action(), Action::Ignore);
        assert!(matches!(Class::NotFoundYet.action(), Action::Requeue(_)));
        assert!(matches!(Class::Throttled.action(), Action::Requeue(_)));
        assert_eq!(Class::Other.action(), Action::Fail);
        assert_eq!(Class::Unreachable.action(), Action::Fail);
    }
}
