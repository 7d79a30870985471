//! Simulation controls shared by every action: the clock, the state transitions it drives,
//! the idempotency ledger, request throttling, and fault rules.

pub mod clock;
pub mod faults;
pub mod idempotency;
pub mod throttle;
pub mod transitions;
