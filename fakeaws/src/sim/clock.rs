//! The fake's clock: real time in the server (which `advance` shifts forward, for a
//! standalone server steered from outside), virtual time in tests (moved only by `advance`),
//! so that time-dependent behaviour is tested without sleeping.

use std::time::{Duration, SystemTime};

use aws_smithy_types::DateTime;

/// A clock: real, or virtual starting at a fixed instant.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub enum Clock {
    /// The system's time.
    #[default]
    Real,
    /// A virtual instant that only `advance` moves.
    Virtual(SystemTime),
    /// The system's time shifted forward by `advance`.
    Shifted(Duration),
}

impl Clock {
    /// A virtual clock at `start`.
    pub fn virtual_at(start: SystemTime) -> Self {
        Clock::Virtual(start)
    }

    /// The current instant.
    pub fn now(&self) -> SystemTime {
        match self {
            Clock::Real => SystemTime::now(),
            Clock::Virtual(t) => *t,
            Clock::Shifted(by) => SystemTime::now() + *by,
        }
    }

    /// The current instant as a smithy timestamp, truncated to milliseconds.
    pub fn now_datetime(&self) -> DateTime {
        let t = DateTime::from(self.now());
        DateTime::from_millis(t.to_millis().unwrap_or(0))
    }

    /// Moves the clock forward: a virtual one by `by`, a real one becomes shifted by `by`.
    pub fn advance(&mut self, by: Duration) {
        match self {
            Clock::Virtual(t) => *t += by,
            Clock::Real => *self = Clock::Shifted(by),
            Clock::Shifted(d) => *d += by,
        }
    }
}
