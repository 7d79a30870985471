//! The provider's one error type, and [`error_policy`]: what a controller does after a
//! reconcile or delete failed (requeue after how long, or fail), from the classes of
//! `crate::aws_error`.

use crate::aws_error::{Action, AwsError, Class};

/// Why a reconcile, delete or spec load failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is invalid; every problem is listed. Nothing was changed.
    #[error("invalid spec:\n  - {}", problems.join("\n  - "))]
    InvalidSpec {
        /// One line per problem, naming the field.
        problems: Vec<String>,
    },
    /// A field that cannot change after creation was changed.
    #[error(
        "{field} cannot change after creation: {resource} has {current}, the spec asks for {wanted}"
    )]
    Immutable {
        /// The spec field.
        field: String,
        /// The resource holding it.
        resource: String,
        /// Its value in AWS.
        current: String,
        /// The spec's value.
        wanted: String,
    },
    /// A pre-existing resource named in the spec is missing or not what the spec says.
    #[error("{resource}: {problem}")]
    PreExisting {
        /// The resource.
        resource: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Something in AWS stands in the way (a name taken by a resource that is not ours, ...).
    #[error("{0}")]
    Conflict(String),
    /// AWS says something of ours exists that its describes do not show yet (eventual
    /// consistency: a name taken by the group or load balancer this cluster just created).
    #[error("not visible yet: {0}")]
    NotVisibleYet(String),
    /// The machine's user data is larger than EC2 takes, even compressed.
    #[error("the user data is {bytes} bytes as sent (before base64); EC2 takes at most {limit}")]
    UserDataTooLarge {
        /// Its size as sent (gzipped unless the machine asks otherwise), before base64.
        bytes: usize,
        /// EC2's limit.
        limit: usize,
    },
    /// No image matches a machine's lookup.
    #[error("no available image of owner {owner} matches {pattern:?} ({architecture})")]
    NoImage {
        /// The owner searched.
        owner: String,
        /// The name pattern.
        pattern: String,
        /// The architecture.
        architecture: String,
    },
    /// The cluster's PKI or bootstrap material is missing, unreadable or not what kubeadm
    /// takes (never holds a secret).
    #[error("bootstrap material: {0}")]
    Bootstrap(String),
    /// An AWS call failed.
    #[error(transparent)]
    Aws(#[from] AwsError),
    /// Several deletes failed; the delete continued past each.
    #[error("{} resources could not be deleted:\n  - {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  - "))]
    Many(Vec<Error>),
}

/// What a controller does after a reconcile or delete failed with `err`: requeue after a
/// backoff where AWS may mend by itself (throttling, outages, dependencies still going
/// away, a resource not visible yet), fail where the spec or the account must change (an
/// invalid spec, an immutable field, a conflict, a refused request). `Error::Many` follows
/// its most hopeful member: one error worth a retry makes the whole worth a retry.
pub fn error_policy(err: &Error) -> Action {
    match err {
        Error::Aws(e) => match e.class() {
            // A not-found that reached the caller was not a delete's: the resource was
            // expected to be there. Pre-existing resources named in the spec are checked
            // (and reported missing) before they are used, so this one was found or made by
            // this reconcile: AWS does not show it yet (or it went meanwhile, which the next
            // reconcile sees).
            Class::NotFound => Class::NotFoundYet.action(),
            Class::NotAttached => Action::Fail,
            c => c.action(),
        },
        Error::NotVisibleYet(_) => Class::NotFoundYet.action(),
        Error::Many(errors) => errors
            .iter()
            .map(error_policy)
            .filter_map(|a| match a {
                Action::Requeue(d) => Some(d),
                _ => None,
            })
            .min()
            .map_or(Action::Fail, Action::Requeue),
        Error::InvalidSpec { .. }
        | Error::Immutable { .. }
        | Error::PreExisting { .. }
        | Error::Conflict(_)
        | Error::UserDataTooLarge { .. }
        | Error::Bootstrap(_)
        | Error::NoImage { .. } => Action::Fail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_spec_fails_and_a_mix_follows_its_most_hopeful_member() {
        let spec = Error::InvalidSpec {
            problems: vec!["x".into()],
        };
        assert_eq!(error_policy(&spec), Action::Fail);
        assert_eq!(
            error_policy(&Error::Many(vec![spec, Error::Conflict("y".into())])),
            Action::Fail
        );
        let aws = |code: &str| {
            Error::Aws(AwsError {
                op: "CreateVpc",
                code: code.into(),
                message: String::new(),
                source: Box::new(std::io::Error::other("x")),
            })
        };
        // A not-found that reaches the caller is one AWS does not show yet.
        assert_eq!(
            error_policy(&aws("InvalidVpcID.NotFound")),
            Class::NotFoundYet.action()
        );
        assert_eq!(
            error_policy(&Error::NotVisibleYet("sg".into())),
            Class::NotFoundYet.action()
        );
        assert_eq!(error_policy(&aws("Gateway.NotAttached")), Action::Fail);
        let throttled = error_policy(&aws("RequestLimitExceeded"));
        assert!(matches!(throttled, Action::Requeue(_)), "{throttled:?}");
        assert_eq!(
            error_policy(&Error::Many(vec![
                Error::Conflict("y".into()),
                aws("RequestLimitExceeded")
            ])),
            throttled
        );
    }
}
