//! A machine's public address from a public IPv4 pool of the user's own addresses
//! (`spec.elasticIpPool`, CAPA's): the instance is launched without a public address; once
//! it runs it is given an Elastic IP of the pool (or AWS's, as the fallback says), allocated
//! once with the machine's tags (so a pass that stopped after the allocation finds it again)
//! and associated; the machine's addresses are released after its instance is terminated.

use aws_sdk_ec2::types::{Address, DomainType, Instance, InstanceStateName, ResourceType};

use super::{ClusterContext, MachineActuator};
use crate::aws_error::aws;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, sent_once, tag_spec};
use crate::spec::Cluster;
use crate::spec::machine::Machine;

impl MachineActuator {
    /// The Elastic IPs tagged as the machine's.
    async fn own_addresses(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
    ) -> Result<Vec<Address>, Error> {
        Ok(self
            .ec2()
            .describe_addresses()
            .filters(filter(&format!("tag:{}", ctx.key), &[ownership::OWNED]))
            .filters(filter("tag:Name", &[&machine.metadata.name]))
            .send()
            .await
            .map_err(aws("DescribeAddresses"))?
            .addresses
            .unwrap_or_default())
    }

    /// Gives instance `i` the machine's address from its pool, once it runs. Nothing for a
    /// machine without `elasticIpPool`.
    pub(super) async fn ensure_address(
        &self,
        cluster: &Cluster,
        ctx: &ClusterContext,
        machine: &Machine,
        i: &Instance,
    ) -> Result<(), Error> {
        let Some(pool) = &machine.spec.elastic_ip_pool else {
            return Ok(());
        };
        let id = i.instance_id().unwrap_or_default();
        // A pending instance gets it once it runs (the caller waits for that).
        if i.state().and_then(|s| s.name()) != Some(&InstanceStateName::Running) {
            return Ok(());
        }
        let held = self.own_addresses(ctx, machine).await?;
        let allocation = match held.as_slice() {
            [a] if a.instance_id() == Some(id) => return Ok(()),
            [a] => a.allocation_id().unwrap_or_default().to_string(),
            [] => {
                let from = crate::elastic_ip::pool_for(
                    self.ec2(),
                    pool,
                    "spec.elasticIpPool",
                    1,
                    &format!("machine {}", machine.metadata.name),
                )
                .await?;
                tracing::info!(target: "capa::progress", "allocate elastic ip for {} ({})", machine.metadata.name, from.as_deref().unwrap_or("amazon"));
                // Sent once: a retry after a lost answer would allocate a second address;
                // the next pass finds the first by its tags instead.
                self.ec2()
                    .allocate_address()
                    .domain(DomainType::Vpc)
                    .set_public_ipv4_pool(from)
                    .tag_specifications(tag_spec(
                        ResourceType::ElasticIp,
                        &self.tags(cluster, machine),
                    ))
                    .customize()
                    .config_override(sent_once())
                    .send()
                    .await
                    .map_err(aws("AllocateAddress"))?
                    .allocation_id
                    .unwrap_or_default()
            }
            many => {
                return Err(Error::Conflict(format!(
                    "machine {} has {} Elastic IPs: {}",
                    machine.metadata.name,
                    many.len(),
                    many.iter()
                        .filter_map(|a| a.allocation_id())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        tracing::info!(target: "capa::progress", "associate elastic ip {allocation} with {id} ({})", machine.metadata.name);
        self.ec2()
            .associate_address()
            .allocation_id(&allocation)
            .instance_id(id)
            .allow_reassociation(true)
            .send()
            .await
            .map_err(aws("AssociateAddress"))?;
        Ok(())
    }

    /// Releases the machine's Elastic IPs once its instance has let go of them (AWS unmaps an
    /// address when the instance it is mapped to is terminated), waiting up to
    /// [`super::host::RELEASE_WITHIN`].
    pub(super) async fn release_own_addresses(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
    ) -> Result<(), Error> {
        self.release_within(machine, "Elastic IP(s)", || async {
            let mut in_use = Vec::new();
            for a in self.own_addresses(ctx, machine).await? {
                let id = a.allocation_id().unwrap_or_default();
                if a.association_id().is_some() {
                    in_use.push(format!(
                        "{id} (mapped to {})",
                        a.instance_id().unwrap_or("an interface")
                    ));
                    continue;
                }
                tracing::info!(target: "capa::progress", "release elastic ip {id} ({})", machine.metadata.name);
                let answer = self
                    .ec2()
                    .release_address()
                    .allocation_id(id)
                    .send()
                    .await
                    .map_err(aws("ReleaseAddress"));
                // An address already released is what was wanted.
                crate::sdk::found(answer)?;
            }
            Ok(in_use)
        })
        .await
    }
}
