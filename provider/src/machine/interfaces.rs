//! A machine on network interfaces of the user's (`spec.networkInterfaces`, CAPA's
//! `networkInterfaces`): each checked before the launch, so that a refusal names the spec's
//! field rather than failing in EC2: it exists, in the cluster's VPC and in the first one's
//! zone, is free (or held by this machine's own instance, launched by a pass that stopped
//! before it saw the answer), and already carries every group the machine carries. The
//! interfaces are used as they are: never tagged, modified or deleted.

use aws_sdk_ec2::types::{GroupIdentifier, NetworkInterface, NetworkInterfaceStatus};

use super::MachineActuator;
use crate::aws_error::aws;
use crate::error::Error;
use crate::instance::instances_of;
use crate::ownership;
use crate::spec::machine::Machine;

impl MachineActuator {
    /// Checks the machine's interfaces against `groups` (the machine's); returns the first
    /// one's subnet, the machine's.
    pub(super) async fn check_interfaces(
        &self,
        cluster_name: &str,
        vpc_id: &str,
        machine: &Machine,
        groups: &[String],
    ) -> Result<String, Error> {
        let ids = machine.spec.network_interfaces.clone();
        let found = match self
            .ec2()
            .describe_network_interfaces()
            .set_network_interface_ids(Some(ids.clone()))
            .send()
            .await
            .map_err(aws("DescribeNetworkInterfaces"))
        {
            Ok(o) => o.network_interfaces.unwrap_or_default(),
            // One of them does not exist: each is looked for below.
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut first: Option<&NetworkInterface> = None;
        for (n, id) in ids.iter().enumerate() {
            let refuse = |problem: String| Error::PreExisting {
                resource: format!(
                    "network interface {id} (spec.networkInterfaces[{n}] of machine {})",
                    machine.metadata.name
                ),
                problem,
            };
            let Some(eni) = found
                .iter()
                .find(|e| e.network_interface_id() == Some(id.as_str()))
            else {
                return Err(refuse("does not exist".into()));
            };
            if eni.vpc_id() != Some(vpc_id) {
                return Err(refuse(format!(
                    "is in {}, not in the cluster's VPC {vpc_id}",
                    eni.vpc_id().unwrap_or("no VPC")
                )));
            }
            if let Some(f) = first
                && f.availability_zone() != eni.availability_zone()
            {
                return Err(refuse(format!(
                    "is in {}, the first interface in {}: an instance's interfaces are in one \
                     zone",
                    eni.availability_zone().unwrap_or_default(),
                    f.availability_zone().unwrap_or_default()
                )));
            }
            match eni.attachment().and_then(|a| a.instance_id()) {
                Some(holder) if !self.is_machines(cluster_name, machine, holder).await? => {
                    return Err(refuse(format!("is attached to {holder}")));
                }
                Some(_) => {}
                None if eni.status() != Some(&NetworkInterfaceStatus::Available) => {
                    return Err(refuse(format!(
                        "is {}, not available",
                        eni.status().map(|s| s.as_str()).unwrap_or("of no status")
                    )));
                }
                None => {}
            }
            if let Some(problem) = lacks(eni.groups(), groups) {
                return Err(refuse(problem));
            }
            first.get_or_insert(eni);
        }
        first
            .and_then(|f| f.subnet_id())
            .map(String::from)
            .ok_or_else(|| {
                Error::Conflict(format!(
                    "machine {}: its first network interface has no subnet",
                    machine.metadata.name
                ))
            })
    }

    /// Whether instance `id` is the machine's own (tagged with its name, as the cluster's).
    async fn is_machines(
        &self,
        cluster_name: &str,
        machine: &Machine,
        id: &str,
    ) -> Result<bool, Error> {
        let out = self
            .ec2()
            .describe_instances()
            .instance_ids(id)
            .send()
            .await
            .map_err(aws("DescribeInstances"));
        let Some(out) = crate::sdk::found(out)? else {
            return Ok(false);
        };
        Ok(instances_of(&out).any(|i| {
            ownership::is_managed(cluster_name, ownership::ec2_pairs(i.tags()))
                && ownership::ec2_tag(i.tags(), "Name") == Some(machine.metadata.name.as_str())
        }))
    }

    /// Checks that the machine's interfaces, as instance `i` shows them, carry every one of
    /// `groups` (the machine's): they are never modified, so a group they lack is an error.
    pub(super) fn check_interface_groups(
        machine: &Machine,
        i: &aws_sdk_ec2::types::Instance,
        groups: &[String],
    ) -> Result<(), Error> {
        for n in i.network_interfaces() {
            let Some(id) = n.network_interface_id() else {
                continue;
            };
            if !machine.spec.network_interfaces.iter().any(|e| e == id) {
                continue;
            }
            if let Some(problem) = lacks(n.groups(), groups) {
                return Err(Error::PreExisting {
                    resource: format!(
                        "network interface {id} (spec.networkInterfaces of machine {})",
                        machine.metadata.name
                    ),
                    problem,
                });
            }
        }
        Ok(())
    }
}

/// The problem of an interface carrying `carried` when it lacks some of `groups`.
fn lacks(carried: &[GroupIdentifier], groups: &[String]) -> Option<String> {
    let lacking: Vec<&str> = groups
        .iter()
        .map(String::as_str)
        .filter(|g| !carried.iter().any(|c| c.group_id() == Some(*g)))
        .collect();
    (!lacking.is_empty()).then(|| {
        format!(
            "lacks the machine's security groups {}: the interface is used as it is, never \
             modified; add them to it",
            lacking.join(", ")
        )
    })
}
