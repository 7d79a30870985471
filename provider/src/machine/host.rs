//! A machine's own Dedicated Host (`dynamicHostAllocation`): allocated before its instance is
//! launched, released once that instance is terminated. The host carries the cluster's
//! ownership tags and the machine's name, so a create that lost AllocateHosts' answer finds
//! it again rather than allocating a second, and a delete finds what to release; the user's
//! hosts (`hostID`) carry neither and are never released.

use std::time::Duration;

use aws_sdk_ec2::types::{Host, ResourceType};

use super::{ClusterContext, MachineActuator};
use crate::aws_error::aws;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, tag_spec};
use crate::spec::Cluster;
use crate::spec::machine::Machine;

/// How long a delete waits for the machine's instance to leave its host (EC2 releases no host
/// an instance still runs or shuts down on), and how often it tries.
pub(super) const RELEASE_WITHIN: Duration = Duration::from_secs(20 * 60);
pub(super) const RELEASE_EVERY: Duration = Duration::from_secs(10);

impl MachineActuator {
    /// The machine's available hosts: those tagged as the cluster's with its name.
    async fn own_hosts(&self, ctx: &ClusterContext, machine: &Machine) -> Result<Vec<Host>, Error> {
        let out = self
            .ec2()
            .describe_hosts()
            .filter(filter(&format!("tag:{}", ctx.key), &[ownership::OWNED]))
            .filter(filter("tag:Name", &[&machine.metadata.name]))
            .filter(filter("state", &["available"]))
            .send()
            .await
            .map_err(aws("DescribeHosts"))?;
        Ok(out.hosts().to_vec())
    }

    /// The host the machine's instance is launched on: the one allocated for it before, else a
    /// new one of its instance type in `zone`, tagged as the cluster's with the machine's name,
    /// its additional tags and the allocation's own.
    pub(super) async fn host_for(
        &self,
        cluster: &Cluster,
        ctx: &ClusterContext,
        machine: &Machine,
        zone: &str,
        token: String,
    ) -> Result<String, Error> {
        let mut own = self.own_hosts(ctx, machine).await?;
        own.sort_by(|a, b| a.host_id().cmp(&b.host_id()));
        if let Some(id) = own.first().and_then(|h| h.host_id()) {
            return Ok(id.to_string());
        }
        let s = &machine.spec;
        let mut tags = s
            .dynamic_host_allocation
            .as_ref()
            .map(|d| d.tags.clone())
            .unwrap_or_default();
        // The cluster's ownership tags and the machine's name win a key.
        tags.extend(self.tags(cluster, machine));
        tracing::info!(target: "capa::progress", "allocate a Dedicated Host for {} ({} in {zone})", machine.metadata.name, s.instance_type);
        let out = self
            .ec2()
            .allocate_hosts()
            .instance_type(&s.instance_type)
            .availability_zone(zone)
            .quantity(1)
            .client_token(token)
            .tag_specifications(tag_spec(ResourceType::DedicatedHost, &tags))
            .send()
            .await
            .map_err(aws("AllocateHosts"))?;
        out.host_ids().first().cloned().ok_or_else(|| {
            Error::Conflict(format!(
                "AllocateHosts answered no host for machine {}",
                machine.metadata.name
            ))
        })
    }

    /// Releases the hosts allocated for the machine, waiting (up to [`RELEASE_WITHIN`]) while
    /// its instance still shuts down on one.
    pub(super) async fn release_own_hosts(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
    ) -> Result<(), Error> {
        self.release_within(machine, "Dedicated Host(s)", || async {
            let ids: Vec<String> = self
                .own_hosts(ctx, machine)
                .await?
                .iter()
                .filter_map(|h| h.host_id().map(String::from))
                .collect();
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            tracing::info!(target: "capa::progress", "release Dedicated Host(s) {} ({})", ids.join(", "), machine.metadata.name);
            let out = self
                .ec2()
                .release_hosts()
                .set_host_ids(Some(ids))
                .send()
                .await
                .map_err(aws("ReleaseHosts"))?;
            // A host already released is what was wanted; one an instance still occupies is
            // released on a later try.
            Ok(out
                .unsuccessful()
                .iter()
                .filter(|u| {
                    u.error()
                        .and_then(|e| e.code())
                        .is_none_or(|c| !c.ends_with("InvalidHostID.NotFound"))
                })
                .map(|u| {
                    format!(
                        "{}: {}",
                        u.resource_id().unwrap_or_default(),
                        u.error().and_then(|e| e.message()).unwrap_or_default()
                    )
                })
                .collect())
        })
        .await
    }

    /// Runs `release` (which releases what it can of the machine's `what`, and answers what
    /// is still held, each described) every [`RELEASE_EVERY`] until nothing is held, up to
    /// [`RELEASE_WITHIN`]; then an error naming what is held.
    pub(super) async fn release_within<F, Fut>(
        &self,
        machine: &Machine,
        what: &str,
        mut release: F,
    ) -> Result<(), Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<Vec<String>, Error>>,
    {
        let tries = RELEASE_WITHIN.as_secs() / RELEASE_EVERY.as_secs();
        for attempt in 0..=tries {
            let held = release().await?;
            if held.is_empty() {
                return Ok(());
            }
            if attempt == tries {
                return Err(Error::Conflict(format!(
                    "machine {}: its {what} could not be released: {}",
                    machine.metadata.name,
                    held.join("; ")
                )));
            }
            self.clients.pause(RELEASE_EVERY).await;
        }
        Ok(())
    }
}
