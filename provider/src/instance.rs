//! What the bastion and the machines share about EC2 instances: where a launch goes
//! (subnet, groups, a public address through the primary interface), whether an instance is
//! live, its state's name, and the architecture of an instance type.

use aws_sdk_ec2::operation::run_instances::builders::RunInstancesFluentBuilder;
use aws_sdk_ec2::types::{Instance, InstanceNetworkInterfaceSpecification, InstanceStateName};

/// The name of an instance's state (`pending`, `running`, ...), empty when AWS gave none.
pub fn state_of(i: &Instance) -> String {
    i.state()
        .and_then(|s| s.name())
        .map(|n| n.as_str().to_string())
        .unwrap_or_default()
}

/// Whether an instance is neither shutting down nor terminated.
pub fn is_live(i: &Instance) -> bool {
    !matches!(
        i.state().and_then(|s| s.name()),
        Some(InstanceStateName::ShuttingDown | InstanceStateName::Terminated)
    )
}

/// The instances of a DescribeInstances answer, across its reservations.
pub fn instances_of(
    out: &aws_sdk_ec2::operation::describe_instances::DescribeInstancesOutput,
) -> impl Iterator<Item = &Instance> {
    out.reservations().iter().flat_map(|r| r.instances())
}

/// Places a launch: in `subnet` with `groups`, and when a public IP is wanted in a subnet that
/// does not map one, through a primary network interface that asks for it.
pub fn place(
    call: RunInstancesFluentBuilder,
    subnet: &str,
    groups: Vec<String>,
    associate_public_ip: bool,
) -> RunInstancesFluentBuilder {
    if associate_public_ip {
        call.network_interfaces(
            InstanceNetworkInterfaceSpecification::builder()
                .device_index(0)
                .subnet_id(subnet)
                .set_groups(Some(groups))
                .associate_public_ip_address(true)
                .delete_on_termination(true)
                .build(),
        )
    } else {
        call.subnet_id(subnet).set_security_group_ids(Some(groups))
    }
}

/// The architecture of an instance type: Graviton families (`a1`, `*g`, `*gd`, `*gn`) are arm64.
pub fn architecture_of(instance_type: &str) -> &'static str {
    let family = instance_type.split('.').next().unwrap_or_default();
    let generation_suffix = family.trim_start_matches(|c: char| c.is_ascii_lowercase());
    let suffix = generation_suffix.trim_start_matches(|c: char| c.is_ascii_digit());
    if family == "a1" || suffix.starts_with('g') {
        "arm64"
    } else {
        "x86_64"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graviton_types_are_arm64() {
        for t in [
            "t4g.medium",
            "m6g.large",
            "c7gd.xlarge",
            "a1.large",
            "c6gn.large",
        ] {
            assert_eq!(architecture_of(t), "arm64", "{t}");
        }
        for t in [
            "t3.medium",
            "m5.large",
            "c7i.xlarge",
            "t3a.micro",
            "m7a.large",
        ] {
            assert_eq!(architecture_of(t), "x86_64", "{t}");
        }
    }
}
