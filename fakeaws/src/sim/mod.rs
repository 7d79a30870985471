//! Simulation controls shared by every action: the clock.

pub mod clock;
