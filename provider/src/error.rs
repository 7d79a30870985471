//! The provider's one error type.

use crate::aws_error::AwsError;

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
    /// The machine's user data is larger than EC2 takes, even compressed.
    #[error("the user data is {bytes} bytes compressed; EC2 takes at most {limit}")]
    UserDataTooLarge {
        /// Its compressed size.
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
    /// An AWS call failed.
    #[error(transparent)]
    Aws(#[from] AwsError),
    /// Several deletes failed; the delete continued past each.
    #[error("{} resources could not be deleted:\n  - {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  - "))]
    Many(Vec<Error>),
}
