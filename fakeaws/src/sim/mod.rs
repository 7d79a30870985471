//! Simulation controls shared by every action: the clock, the state transitions it drives,
//! and the idempotency ledger.

pub mod clock;
pub mod idempotency;
pub mod transitions;
