//! internet_gateway
