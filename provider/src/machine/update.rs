//! A machine's update: the immutable fields checked (a change is an error naming every
//! such field), the mutable ones converged (security groups through the primary interface,
//! tags, load balancer membership).

use super::{
    ClusterContext, MachineActuator, MachineOutcome, MachineStatus, status_of, waiting_for_cluster,
};
use crate::aws_error::aws;
use crate::error::Error;
use crate::sdk;
use crate::spec::Cluster;
use crate::spec::machine::{InstanceMetadataOptions, Machine, NonRootVolume};
use aws_sdk_ec2::types::{Instance, InstanceMetadataOptionsState, InstanceStateName};

impl MachineActuator {
    /// Converges the mutable fields (security groups, additional tags, load balancer
    /// membership); a changed immutable field is an error naming every such field.
    #[tracing::instrument(skip_all, fields(machine = %machine.metadata.name))]
    pub async fn update(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        self.check(cluster, machine)?;
        let ctx = self.context(cluster).await?;
        match ctx.ready() {
            Ok(vpc_id) => self.update_in(&ctx, vpc_id, cluster, machine, status).await,
            Err(reason) => Ok(waiting_for_cluster(cluster, status, &reason)),
        }
    }

    /// [`update`](Self::update) for several machines of one cluster, reading the cluster
    /// once; the first error stops it.
    pub async fn update_all(
        &self,
        cluster: &Cluster,
        machines: &[(&Machine, Option<&MachineStatus>)],
    ) -> Result<Vec<MachineOutcome>, Error> {
        let ctx = match self.context_for_all(cluster, machines).await? {
            Ok(ctx) => ctx,
            Err(waiting) => return Ok(waiting),
        };
        let vpc_id = ctx.ready().unwrap_or_default();
        let mut out = Vec::with_capacity(machines.len());
        for (m, st) in machines {
            out.push(self.update_in(&ctx, vpc_id, cluster, m, *st).await?);
        }
        Ok(out)
    }

    async fn update_in(
        &self,
        ctx: &ClusterContext,
        vpc_id: &str,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        let (found, _) = self.find(ctx, vpc_id, machine, status).await?;
        let Some(i) = found else {
            return Err(Error::Conflict(format!(
                "machine {} has no instance; create it first",
                machine.metadata.name
            )));
        };
        let id = i.instance_id().unwrap_or_default().to_string();
        let s = &machine.spec;
        let mut changed = Vec::new();
        let mut immutable = |field: &str, current: String, wanted: String| {
            if current != wanted {
                changed.push(Error::Immutable {
                    field: field.to_string(),
                    resource: id.clone(),
                    current,
                    wanted,
                });
            }
        };
        immutable(
            "spec.instanceType",
            i.instance_type()
                .map(|t| t.as_str().to_string())
                .unwrap_or_default(),
            s.instance_type.clone(),
        );
        if s.network_interfaces.is_empty() {
            immutable(
                "spec.subnet",
                i.subnet_id().unwrap_or_default().to_string(),
                self.subnet_for(ctx, machine)?,
            );
        } else {
            // The machine's subnet is its first interface's.
            let mut held: Vec<(i32, &str)> = i
                .network_interfaces()
                .iter()
                .filter_map(|n| {
                    let index = n.attachment().and_then(|a| a.device_index())?;
                    Some((index, n.network_interface_id()?))
                })
                .collect();
            held.sort_unstable();
            immutable(
                "spec.networkInterfaces",
                held.iter()
                    .map(|(_, id)| *id)
                    .collect::<Vec<_>>()
                    .join(", "),
                s.network_interfaces.join(", "),
            );
        }
        if let Some(a) = &s.ami.id {
            immutable(
                "spec.ami.id",
                i.image_id().unwrap_or_default().to_string(),
                a.clone(),
            );
        }
        let key = s.ssh_key_name.clone().or(cluster.spec.ssh_key_name.clone());
        immutable(
            "spec.sshKeyName",
            i.key_name().unwrap_or_default().to_string(),
            key.unwrap_or_default(),
        );
        let profile = i
            .iam_instance_profile()
            .and_then(|p| p.arn())
            .and_then(|a| a.rsplit('/').next())
            .unwrap_or_default()
            .to_string();
        immutable(
            "spec.iamInstanceProfile",
            profile,
            s.iam_instance_profile.clone().unwrap_or_default(),
        );
        let placement = i.placement();
        if let Some(t) = &s.tenancy {
            immutable(
                "spec.tenancy",
                placement
                    .and_then(|p| p.tenancy())
                    .map(|t| t.as_str().to_string())
                    .unwrap_or_default(),
                t.clone(),
            );
        }
        if s.dynamic_host_allocation.is_some() {
            immutable(
                "spec.dynamicHostAllocation",
                placement
                    .and_then(|p| p.tenancy())
                    .map(|t| t.as_str().to_string())
                    .unwrap_or_default(),
                "host".to_string(),
            );
        }
        if let Some(h) = &s.host_id {
            immutable(
                "spec.hostID",
                placement
                    .and_then(|p| p.host_id())
                    .unwrap_or_default()
                    .to_string(),
                h.clone(),
            );
        }
        if let Some(a) = &s.host_affinity {
            immutable(
                "spec.hostAffinity",
                placement
                    .and_then(|p| p.affinity())
                    .unwrap_or_default()
                    .to_string(),
                a.clone(),
            );
        }
        // So is the primary interface's type.
        if let Some(wanted) = &s.network_interface_type {
            let primary = i
                .network_interfaces()
                .iter()
                .find(|n| n.attachment().and_then(|a| a.device_index()) == Some(0))
                .and_then(|n| n.interface_type())
                .unwrap_or("interface");
            immutable(
                "spec.networkInterfaceType",
                primary.to_string(),
                wanted.clone(),
            );
        }
        // AMD SEV-SNP is the launch's.
        if let Some(wanted) = s
            .cpu_options
            .as_ref()
            .and_then(|c| c.confidential_compute.clone())
        {
            let enabled = i
                .cpu_options()
                .and_then(|c| c.amd_sev_snp())
                .is_some_and(|a| *a == aws_sdk_ec2::types::AmdSevSnpSpecification::Enabled);
            immutable(
                "spec.cpuOptions.confidentialCompute",
                if enabled {
                    crate::spec::machine::AMD_SEV_SNP
                } else {
                    "Disabled"
                }
                .to_string(),
                wanted,
            );
        }
        // Spot or On-Demand, and the maximum price, are the launch's: AWS changes neither.
        let lifecycle = |spot: bool| if spot { "spot" } else { "on-demand" }.to_string();
        immutable(
            "spec.spotMarketOptions",
            lifecycle(i.spot_instance_request_id().is_some()),
            lifecycle(s.spot_market_options.is_some()),
        );
        if let (Some(request), Some(wanted)) =
            (i.spot_instance_request_id(), s.spot_market_options.as_ref())
        {
            let out = self
                .ec2()
                .describe_spot_instance_requests()
                .spot_instance_request_ids(request)
                .send()
                .await
                .map_err(aws("DescribeSpotInstanceRequests"))?;
            let current = out
                .spot_instance_requests()
                .first()
                .and_then(|r| r.spot_price())
                .map(String::from);
            // A request with no maximum price shows the On-Demand price, or nothing.
            if let Some(price) = &wanted.max_price
                && current.as_ref().is_some_and(|c| !same_price(c, price))
            {
                immutable(
                    "spec.spotMarketOptions.maxPrice",
                    current.unwrap_or_default(),
                    price.clone(),
                );
            }
        }
        // The reservation an instance targets, and its preference, are the launch's while it
        // runs (AWS changes them only on a stopped instance).
        let capacity = i.capacity_reservation_specification();
        immutable(
            "spec.capacityReservationId",
            capacity
                .and_then(|c| c.capacity_reservation_target())
                .and_then(|t| t.capacity_reservation_id())
                .unwrap_or_default()
                .to_string(),
            s.capacity_reservation_id.clone().unwrap_or_default(),
        );
        if let Some(wanted) = super::launch::capacity_preference(s) {
            immutable(
                "spec.capacityReservationPreference",
                capacity
                    .and_then(|c| c.capacity_reservation_preference())
                    .map(|p| p.as_str().to_string())
                    .unwrap_or_default(),
                wanted.to_string(),
            );
        }
        immutable(
            "spec.placementGroupName",
            placement
                .and_then(|p| p.group_name())
                .unwrap_or_default()
                .to_string(),
            s.placement_group_name.clone().unwrap_or_default(),
        );
        if let Some(n) = s.placement_group_partition {
            immutable(
                "spec.placementGroupPartition",
                placement
                    .and_then(|p| p.partition_number())
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                n.to_string(),
            );
        }
        if let Some(r) = &s.root_volume {
            let root = i
                .block_device_mappings()
                .iter()
                .find(|b| b.device_name() == i.root_device_name())
                .and_then(|b| b.ebs())
                .and_then(|e| e.volume_id())
                .map(String::from);
            if let Some(vol) = root {
                let v = self
                    .ec2()
                    .describe_volumes()
                    .volume_ids(&vol)
                    .send()
                    .await
                    .map_err(aws("DescribeVolumes"))?;
                if let Some(v) = v.volumes().first() {
                    let named = Named {
                        iops: r.iops,
                        throughput: r.throughput,
                        key: r.encryption_key.as_deref(),
                    };
                    immutable(
                        "spec.rootVolume",
                        format!(
                            "{} GiB {} encrypted={}{}",
                            v.size().unwrap_or_default(),
                            v.volume_type().map(|t| t.as_str()).unwrap_or_default(),
                            v.encrypted().unwrap_or_default(),
                            named.as_held(v)
                        ),
                        format!(
                            "{} GiB {} encrypted={}{}",
                            r.size,
                            r.volume_type(),
                            r.encrypted,
                            named.as_wanted()
                        ),
                    );
                }
            }
        }
        if let Some(d) = &s.private_dns_name {
            let held = i.private_dns_name_options();
            if let Some(t) = &d.hostname_type {
                immutable(
                    "spec.privateDnsName.hostnameType",
                    held.and_then(|o| o.hostname_type())
                        .map(|t| t.as_str().to_string())
                        .unwrap_or_default(),
                    t.clone(),
                );
            }
            let flag = |v: Option<bool>| v.unwrap_or_default().to_string();
            if let Some(a) = d.enable_resource_name_dns_a_record {
                immutable(
                    "spec.privateDnsName.enableResourceNameDnsARecord",
                    flag(held.and_then(|o| o.enable_resource_name_dns_a_record())),
                    flag(Some(a)),
                );
            }
            if let Some(aaaa) = d.enable_resource_name_dns_aaaa_record {
                immutable(
                    "spec.privateDnsName.enableResourceNameDnsAAAARecord",
                    flag(held.and_then(|o| o.enable_resource_name_dns_aaaa_record())),
                    flag(Some(aaaa)),
                );
            }
        }
        if !s.non_root_volumes.is_empty() {
            let (current, wanted) = self.non_root_volumes(&i, &s.non_root_volumes).await?;
            immutable("spec.nonRootVolumes", current, wanted);
        }
        match changed.len() {
            0 => {}
            1 => return Err(changed.remove(0)),
            _ => return Err(Error::Many(changed)),
        }

        // Security groups, through the primary network interface; the user's interfaces are
        // never modified: they must carry the machine's groups already.
        let want = self.groups_for(ctx, machine);
        Self::check_interface_groups(machine, &i, &want)?;
        let mut have: Vec<String> = i
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(String::from))
            .collect();
        have.sort();
        if have != want && s.network_interfaces.is_empty() {
            self.check_group_overrides(vpc_id, machine).await?;
            let eni = i
                .network_interfaces()
                .iter()
                .find(|n| n.attachment().and_then(|a| a.device_index()) == Some(0))
                .and_then(|n| n.network_interface_id())
                .map(String::from)
                .ok_or_else(|| {
                    Error::Conflict(format!("instance {id} has no primary interface"))
                })?;
            tracing::info!(target: "capa::progress", "set security groups of {id} to {}", want.join(", "));
            self.ec2()
                .modify_network_interface_attribute()
                .network_interface_id(eni)
                .set_groups(Some(want))
                .send()
                .await
                .map_err(aws("ModifyNetworkInterfaceAttribute"))?;
        }

        // The instance metadata options, when the spec names them.
        let mut waiting = Vec::new();
        if let Some(wanted) = &s.instance_metadata_options
            && let Some(w) = self.converge_metadata(&i, wanted).await?
        {
            waiting.push(w);
        }

        // Tags, on the instance, its volumes and its interfaces: add missing or changed,
        // remove the additional ones the specs dropped.
        let tags = self.tags(cluster, machine);
        let mut vols = Vec::new();
        let mut nics = Vec::new();
        let volumes: Vec<String> = i
            .block_device_mappings()
            .iter()
            .filter_map(|b| b.ebs().and_then(|e| e.volume_id()).map(String::from))
            .collect();
        if !volumes.is_empty() {
            let d = self
                .ec2()
                .describe_volumes()
                .set_volume_ids(Some(volumes))
                .send()
                .await
                .map_err(aws("DescribeVolumes"))?;
            vols = d.volumes().to_vec();
        }
        // The machine's own interfaces, not the user's.
        let interfaces: Vec<String> = i
            .network_interfaces()
            .iter()
            .filter_map(|n| n.network_interface_id().map(String::from))
            .filter(|n| !s.network_interfaces.contains(n))
            .collect();
        if !interfaces.is_empty() {
            let d = self
                .ec2()
                .describe_network_interfaces()
                .set_network_interface_ids(Some(interfaces))
                .send()
                .await
                .map_err(aws("DescribeNetworkInterfaces"))?;
            nics = d.network_interfaces().to_vec();
        }
        let mut resources: Vec<(&str, &[aws_sdk_ec2::types::Tag])> = vec![(&id, i.tags())];
        resources.extend(
            vols.iter()
                .map(|v| (v.volume_id().unwrap_or_default(), v.tags())),
        );
        resources.extend(
            nics.iter()
                .map(|n| (n.network_interface_id().unwrap_or_default(), n.tag_set())),
        );
        sdk::converge_tags_of(self.ec2(), &resources, &tags, |what| {
            tracing::info!(target: "capa::progress", "{what}");
            true
        })
        .await?;
        let in_lb = self.ensure_registered(ctx, machine, &id).await?;
        self.ensure_address(cluster, ctx, machine, &i).await?;
        Ok(MachineOutcome {
            status: Some(status_of(&i, in_lb)),
            waiting,
        })
    }

    /// The volumes `wanted` as instance `i` has them, and as wanted, each as `device size
    /// type`: the devices named in the spec only (a volume the user attached later is theirs).
    async fn non_root_volumes(
        &self,
        i: &Instance,
        wanted: &[NonRootVolume],
    ) -> Result<(String, String), Error> {
        let attached: Vec<(&str, &str)> = i
            .block_device_mappings()
            .iter()
            .filter_map(|b| {
                let volume = b.ebs().and_then(|e| e.volume_id())?;
                Some((b.device_name()?, volume))
            })
            .collect();
        let ids: Vec<String> = wanted
            .iter()
            .filter_map(|w| {
                attached
                    .iter()
                    .find(|(device, _)| *device == w.device_name)
                    .map(|(_, id)| id.to_string())
            })
            .collect();
        let described = if ids.is_empty() {
            Vec::new()
        } else {
            self.ec2()
                .describe_volumes()
                .set_volume_ids(Some(ids))
                .send()
                .await
                .map_err(aws("DescribeVolumes"))?
                .volumes()
                .to_vec()
        };
        let mut current = Vec::new();
        for w in wanted {
            let volume = attached
                .iter()
                .find(|(device, _)| *device == w.device_name)
                .and_then(|(_, id)| described.iter().find(|v| v.volume_id() == Some(*id)));
            let named = Named {
                iops: w.iops,
                throughput: w.throughput,
                key: w.encryption_key.as_deref(),
            };
            current.push(match volume {
                Some(v) => format!(
                    "{} {} GiB {}{}",
                    w.device_name,
                    v.size().unwrap_or_default(),
                    v.volume_type().map(|t| t.as_str()).unwrap_or_default(),
                    named.as_held(v)
                ),
                None => format!("{} none", w.device_name),
            });
        }
        let wanted: Vec<String> = wanted
            .iter()
            .map(|w| {
                let named = Named {
                    iops: w.iops,
                    throughput: w.throughput,
                    key: w.encryption_key.as_deref(),
                };
                format!(
                    "{} {} GiB {}{}",
                    w.device_name,
                    w.size,
                    w.volume_type(),
                    named.as_wanted()
                )
            })
            .collect();
        Ok((current.join(", "), wanted.join(", ")))
    }

    /// Sets instance `i`'s metadata options to `wanted` when they differ
    /// (ModifyInstanceMetadataOptions, which takes a running or stopped instance); what is
    /// still to wait for, if anything: the instance reaching such a state, or the options it
    /// was given becoming `applied`.
    async fn converge_metadata(
        &self,
        i: &Instance,
        wanted: &InstanceMetadataOptions,
    ) -> Result<Option<String>, Error> {
        let id = i.instance_id().unwrap_or_default();
        let have = i.metadata_options();
        let text = |v: Option<&str>| v.unwrap_or_default().to_string();
        let current = InstanceMetadataOptions {
            http_endpoint: text(have.and_then(|m| m.http_endpoint()).map(|v| v.as_str())),
            http_protocol_ipv6: text(
                have.and_then(|m| m.http_protocol_ipv6())
                    .map(|v| v.as_str()),
            ),
            http_put_response_hop_limit: have
                .and_then(|m| m.http_put_response_hop_limit())
                .unwrap_or_default(),
            http_tokens: text(have.and_then(|m| m.http_tokens()).map(|v| v.as_str())),
            instance_metadata_tags: text(
                have.and_then(|m| m.instance_metadata_tags())
                    .map(|v| v.as_str()),
            ),
        };
        if &current == wanted {
            let pending =
                have.and_then(|m| m.state()) == Some(&InstanceMetadataOptionsState::Pending);
            return Ok(pending.then(|| format!("the metadata options of {id} are pending")));
        }
        let state = i.state().and_then(|s| s.name());
        if !matches!(
            state,
            Some(InstanceStateName::Running | InstanceStateName::Stopped)
        ) {
            return Ok(Some(format!(
                "instance {id} is {}; its metadata options change once it runs",
                state.map(|s| s.as_str()).unwrap_or("unknown")
            )));
        }
        tracing::info!(target: "capa::progress", "set the metadata options of {id}: tokens {}, hop limit {}, endpoint {}", wanted.http_tokens, wanted.http_put_response_hop_limit, wanted.http_endpoint);
        let o = super::launch::metadata_request(wanted);
        self.ec2()
            .modify_instance_metadata_options()
            .instance_id(id)
            .set_http_tokens(o.http_tokens().cloned())
            .set_http_put_response_hop_limit(o.http_put_response_hop_limit())
            .set_http_endpoint(o.http_endpoint().cloned())
            .set_http_protocol_ipv6(o.http_protocol_ipv6().cloned())
            .set_instance_metadata_tags(o.instance_metadata_tags().cloned())
            .send()
            .await
            .map_err(aws("ModifyInstanceMetadataOptions"))?;
        Ok(Some(format!("the metadata options of {id} are pending")))
    }
}

/// Whether two prices in dollars are the same amount (`0.05` and `0.050000`).
fn same_price(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() < 1e-9,
        _ => a == b,
    }
}

/// What a volume's spec names beyond its size, type and encryption, compared with the volume
/// only when named: its IOPS, its throughput and its KMS key (by key id; a key named by an
/// alias is not compared, since only KMS can tell which key an alias names).
struct Named<'a> {
    iops: Option<i32>,
    throughput: Option<i32>,
    key: Option<&'a str>,
}

impl Named<'_> {
    /// The named settings as volume `v` has them.
    fn as_held(&self, v: &aws_sdk_ec2::types::Volume) -> String {
        let mut out = String::new();
        if self.iops.is_some() {
            out.push_str(&format!(" iops={}", v.iops().unwrap_or_default()));
        }
        if self.throughput.is_some() {
            out.push_str(&format!(
                " throughput={}",
                v.throughput().unwrap_or_default()
            ));
        }
        if self
            .key
            .and_then(crate::spec::machine::named_key_id)
            .is_some()
        {
            let held = v
                .kms_key_id()
                .map(|k| k.rsplit_once(":key/").map_or(k, |(_, id)| id));
            out.push_str(&format!(" key={}", held.unwrap_or("none")));
        }
        out
    }

    /// The named settings as the spec wants them.
    fn as_wanted(&self) -> String {
        let mut out = String::new();
        if let Some(n) = self.iops {
            out.push_str(&format!(" iops={n}"));
        }
        if let Some(t) = self.throughput {
            out.push_str(&format!(" throughput={t}"));
        }
        if let Some(id) = self.key.and_then(crate::spec::machine::named_key_id) {
            out.push_str(&format!(" key={id}"));
        }
        out
    }
}
