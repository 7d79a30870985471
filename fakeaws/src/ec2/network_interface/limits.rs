//! How many network interfaces an instance type takes, and how many private IPv4 addresses
//! each of its interfaces: what AttachNetworkInterface and AssignPrivateIpAddresses check
//! (`AttachmentLimitExceeded`, `PrivateIpAddressLimitExceeded`), as DescribeInstanceTypes
//! reports them (`NetworkInfo.MaximumNetworkInterfaces`, `Ipv4AddressesPerInterface`).
//!
//! Known here: the burstable families (`t2`, `t3`, `t3a`, `t4g`) size by size, and the
//! general purpose, compute and memory families of the fifth to seventh generations (and
//! Graviton's eighth), whose limits follow their size alone. Other types (the newest
//! generations, accelerated, storage and network-optimized families, whose limits differ
//! type by type) are not checked.

use crate::generated::ec2::InstanceType;

/// The interface limits of one instance type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Network interfaces, the primary one included.
    pub interfaces: usize,
    /// Private IPv4 addresses on each interface, its primary address included.
    pub ipv4_per_interface: usize,
}

/// The most private IPv4 addresses any instance type's interface takes: the cap on an
/// interface that is not attached.
pub const MOST_PER_INTERFACE: usize = 64;

/// The families whose limits follow their size alone (`size_rule`).
const BY_SIZE: &[&str] = &[
    "m5", "m5a", "m5ad", "m5d", "m5dn", "m5n", "m6a", "m6g", "m6gd", "m6i", "m6id", "m7a", "m7g",
    "m7gd", "m7i", "m7i-flex", "m8g", "m8gd", "c5", "c5a", "c5ad", "c5d", "c5n", "c6a", "c6g",
    "c6gd", "c6gn", "c6i", "c6id", "c7a", "c7g", "c7gd", "c7gn", "c7i", "c7i-flex", "c8g", "c8gd",
    "r5", "r5a", "r5ad", "r5b", "r5d", "r5dn", "r5n", "r6a", "r6g", "r6gd", "r6i", "r6id", "r7a",
    "r7g", "r7gd", "r7i", "r7iz", "r8g", "r8gd",
];

const fn limits(interfaces: usize, ipv4_per_interface: usize) -> Option<Limits> {
    Some(Limits {
        interfaces,
        ipv4_per_interface,
    })
}

/// The limits of `instance_type`, when it is one of the types this module knows.
pub fn of(instance_type: InstanceType) -> Option<Limits> {
    let (family, size) = instance_type.as_str().split_once('.')?;
    match family {
        "t2" | "t3" | "t3a" | "t4g" => burstable(family, size),
        f if BY_SIZE.contains(&f) => size_rule(size),
        _ => None,
    }
}

/// The burstable families: the same figures for the four, save `t2`'s larger sizes (three
/// interfaces) and `t3a.small` (two).
fn burstable(family: &str, size: &str) -> Option<Limits> {
    match (family, size) {
        (_, "nano" | "micro") => limits(2, 2),
        ("t3a", "small") => limits(2, 4),
        (_, "small") => limits(3, 4),
        (_, "medium") => limits(3, 6),
        (_, "large") => limits(3, 12),
        ("t2", "xlarge" | "2xlarge") => limits(3, 15),
        (_, "xlarge" | "2xlarge") => limits(4, 15),
        _ => None,
    }
}

/// The families of [`BY_SIZE`]: `medium` 2 interfaces of 4 addresses, `large` 3 of 10,
/// `xlarge` and `2xlarge` 4 of 15, up to `12xlarge` 8 of 30, from `16xlarge` (and `metal`)
/// 15 of 50.
fn size_rule(size: &str) -> Option<Limits> {
    match size {
        "medium" => limits(2, 4),
        "large" => limits(3, 10),
        "xlarge" | "2xlarge" => limits(4, 15),
        s if s.starts_with("metal") => limits(15, 50),
        s => {
            let n: u32 = s.strip_suffix("xlarge")?.parse().ok()?;
            if n < 16 {
                limits(8, 30)
            } else {
                limits(15, 50)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_named(name: &str) -> Option<Limits> {
        InstanceType::from_wire(name).and_then(of)
    }

    #[test]
    fn known_types_answer_aws_figures_and_others_none() {
        let l = |interfaces, ipv4_per_interface| {
            Some(Limits {
                interfaces,
                ipv4_per_interface,
            })
        };
        assert_eq!(of_named("t3.medium"), l(3, 6));
        assert_eq!(of_named("t3.micro"), l(2, 2));
        assert_eq!(of_named("t3a.small"), l(2, 4));
        assert_eq!(of_named("t3.small"), l(3, 4));
        assert_eq!(of_named("t2.xlarge"), l(3, 15));
        assert_eq!(of_named("t3.2xlarge"), l(4, 15));
        assert_eq!(of_named("m5.large"), l(3, 10));
        assert_eq!(of_named("m5.xlarge"), l(4, 15));
        assert_eq!(of_named("m5.4xlarge"), l(8, 30));
        assert_eq!(of_named("c5.9xlarge"), l(8, 30));
        assert_eq!(of_named("m5.12xlarge"), l(8, 30));
        assert_eq!(of_named("c5.18xlarge"), l(15, 50));
        assert_eq!(of_named("m6i.32xlarge"), l(15, 50));
        assert_eq!(of_named("m7i.metal-24xl"), l(15, 50));
        assert_eq!(of_named("m6g.medium"), l(2, 4));
        assert_eq!(of_named("p4d.24xlarge"), None);
        assert_eq!(of_named("m8i.large"), None);
        assert_eq!(of_named("c6in.32xlarge"), None);
    }
}
