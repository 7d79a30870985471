//! subnet
