//! conformance: the provider's promises, stated as properties and scenarios and checked
//! against a [`Target`]: the in-process fake (default), a standalone fake at an endpoint, or
//! real AWS. Outcomes are always read back by describing what the target holds
//! ([`census`], [`snapshot`]), never from the provider's own status.
//!
//! - [`world`]: a case (zones, CIDR, bastion, scheme, machines, which resources pre-exist),
//!   its proptest strategy, and the setup of pre-existing resources.
//! - [`properties`]: idempotence, convergence after a crash at any call, managed vs
//!   pre-existing, delete completeness, isolation, machines.
//! - [`runner`]: runs the scenario files of the `scenarios` crate.
//! - [`sweep`]: deletes everything a run tagged, in dependency order.
//! - [`topology`]: what a cluster owns, read back and compared with its spec: routes, NAT
//!   gateways per zone, security-group rules by role, the load balancer; and (`user_data`)
//!   what each machine was booted with.

pub mod census;
pub mod crash;
pub mod properties;
pub mod runner;
pub mod service_lb;
pub mod sweep;
pub mod target;
pub mod topology;
pub mod user_data;
pub mod world;

pub use census::{Census, census, snapshot};
pub use target::{Env, Target};
pub use topology::topology;

/// The tag every resource of a conformance run carries: `capa-conformance-run=<run id>`.
pub const RUN_TAG: &str = "capa-conformance-run";
/// The tag carrying a run's start (Unix seconds), for `sweep --older-than`.
pub const RUN_STARTED_TAG: &str = "capa-conformance-started";
/// The tag of resources a case created beforehand, as a user's own.
pub const ORIGIN_TAG: &str = "capa-conformance-origin";

/// A failed check: what was expected and what the target holds.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A property or expectation does not hold.
    #[error("{0}")]
    Check(String),
    /// The provider failed where it should not.
    #[error("provider: {0}")]
    Provider(#[from] provider::Error),
    /// An AWS call of the suite itself failed.
    #[error("{0}")]
    Aws(String),
}

/// Turns an SDK error of the suite's own calls into a [`Failure`].
pub fn aws_failure<E: std::fmt::Display>(op: &str) -> impl FnOnce(E) -> Failure + '_ {
    move |e| Failure::Aws(format!("{op}: {e}"))
}

/// Fails with `message` unless `cond`.
pub fn ensure(cond: bool, message: impl FnOnce() -> String) -> Result<(), Failure> {
    if cond {
        Ok(())
    } else {
        Err(Failure::Check(message()))
    }
}
