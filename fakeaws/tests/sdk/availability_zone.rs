//! availability_zone
