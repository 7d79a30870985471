//! load_balancer
