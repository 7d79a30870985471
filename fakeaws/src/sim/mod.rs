//! Simulation controls shared by every action: the clock, the state transitions it drives,
//! the idempotency ledger, request throttling, fault rules, and eventual consistency.

pub mod clock;
pub mod consistency;
pub mod faults;
pub mod idempotency;
pub mod profile;
pub mod throttle;
pub mod transitions;
