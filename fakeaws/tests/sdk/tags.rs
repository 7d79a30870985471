//! tags
