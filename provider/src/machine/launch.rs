//! A machine's launch: the subnet it goes to, its security groups, its tags, and the
//! RunInstances call (image, user data, key, profile, root volume, a deterministic
//! ClientToken).

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{
    AmdSevSnpSpecification, BlockDeviceMapping, CapacityReservationPreference,
    CapacityReservationSpecification, CapacityReservationTarget, CpuOptionsRequest, EbsBlockDevice,
    HostnameType, HttpTokensState, IamInstanceProfileSpecification, Instance,
    InstanceInterruptionBehavior, InstanceMarketOptionsRequest, InstanceMetadataEndpointState,
    InstanceMetadataOptionsRequest, InstanceMetadataProtocolState, InstanceMetadataTagsState,
    InstanceNetworkInterfaceSpecification, InstanceType, InstanceTypeInfo, MarketType, Placement,
    PrivateDnsNameOptionsRequest, ResourceType, SpotInstanceType, SpotMarketOptions,
    SupportedAdditionalProcessorFeature, Tenancy, VolumeType,
};

use super::{ClusterContext, MachineActuator, ami, user_data};
use crate::aws_error::aws;
use crate::cluster::SubnetStatus;
use crate::error::Error;
use crate::instance::place;
use crate::ownership;
use crate::sdk::{empty_answer, tag_spec};
use crate::spec::Cluster;
use crate::spec::machine::{
    CAPACITY_PREFERENCES, EFA, InstanceMetadataOptions, Machine, MachineSpec, carried_roles,
};

impl MachineActuator {
    pub(super) fn subnet_for(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
    ) -> Result<String, Error> {
        let s = &machine.spec;
        if let Some(id) = &s.subnet.id {
            return Ok(id.clone());
        }
        let mut candidates = ctx
            .status
            .subnets
            .iter()
            .filter(|x| x.public == s.public_ip);
        // A machine goes to an edge zone, or to a zone AWS constrains while the cluster has
        // another, only when its spec names the zone.
        let chosen = match &s.subnet.availability_zone {
            Some(z) => candidates.find(|x| &x.zone == z),
            None => SubnetStatus::first_for_launch(candidates),
        };
        chosen
            .map(|x| x.id.clone())
            .ok_or_else(|| Error::InvalidSpec {
                problems: vec![format!(
                    "machine {}: the cluster has no {} subnet{}",
                    machine.metadata.name,
                    if s.public_ip { "public" } else { "private" },
                    s.subnet
                        .availability_zone
                        .as_ref()
                        .map(|z| format!(" in {z}"))
                        .unwrap_or_default()
                )],
            })
    }

    pub(super) fn groups_for(&self, ctx: &ClusterContext, machine: &Machine) -> Vec<String> {
        // Every machine carries the `lb` group, the one the cloud controller manager edits.
        let roles = carried_roles(machine.spec.role);
        // A group of the user's in place of the cluster's of its role, where the spec says so.
        let overrides = &machine.spec.security_group_overrides;
        let mut out: Vec<String> = roles
            .iter()
            .filter_map(|r| {
                overrides
                    .get(r)
                    .cloned()
                    .or_else(|| ctx.status.security_groups.get(r).map(|g| g.id.clone()))
            })
            .collect();
        for g in &machine.spec.additional_security_groups {
            if !out.contains(g) {
                out.push(g.clone());
            }
        }
        out.sort();
        out
    }

    /// Checks that the groups of the user's the machine names in place of the cluster's
    /// exist in the cluster's VPC, so that a launch or a change of its groups is refused
    /// naming the spec's field rather than failing in EC2.
    pub(super) async fn check_group_overrides(
        &self,
        vpc_id: &str,
        machine: &Machine,
    ) -> Result<(), Error> {
        let overrides = &machine.spec.security_group_overrides;
        if overrides.is_empty() {
            return Ok(());
        }
        let ids: Vec<String> = overrides.values().cloned().collect();
        let found = match self
            .ec2()
            .describe_security_groups()
            .set_group_ids(Some(ids))
            .send()
            .await
            .map_err(aws("DescribeSecurityGroups"))
        {
            Ok(o) => o.security_groups.unwrap_or_default(),
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        for (role, id) in overrides {
            let Some(problem) = crate::cluster::security_group::not_in_vpc(&found, id, vpc_id)
            else {
                continue;
            };
            return Err(Error::PreExisting {
                resource: format!(
                    "security group {id} (spec.securityGroupOverrides.{} of machine {})",
                    role.as_str(),
                    machine.metadata.name
                ),
                problem,
            });
        }
        Ok(())
    }

    /// The machine's tags, on its instance, its volumes and its interfaces: the cluster's
    /// `additionalTags`, then the machine's own (which win), and the provider's.
    pub(super) fn tags(&self, cluster: &Cluster, machine: &Machine) -> BTreeMap<String, String> {
        let mut additional = cluster.spec.additional_tags.clone();
        additional.extend(machine.spec.additional_tags.clone());
        let mut t = ownership::tags_for(
            &cluster.metadata.name,
            machine.spec.role.as_str(),
            &machine.metadata.name,
            &additional,
        );
        t.insert(
            ownership::kubernetes_cluster_key(&cluster.metadata.name),
            ownership::OWNED.into(),
        );
        t
    }

    /// The zone of subnet `id`: the cluster's record of it, else AWS's.
    async fn zone_of(&self, ctx: &ClusterContext, id: &str) -> Result<String, Error> {
        if let Some(z) = ctx.status.subnets.iter().find(|x| x.id == id) {
            return Ok(z.zone.clone());
        }
        let out = self
            .ec2()
            .describe_subnets()
            .subnet_ids(id)
            .send()
            .await
            .map_err(aws("DescribeSubnets"))?;
        out.subnets()
            .first()
            .and_then(|x| x.availability_zone())
            .map(String::from)
            .ok_or_else(|| Error::Conflict(format!("subnet {id} has no zone")))
    }

    pub(super) async fn run(
        &self,
        cluster: &Cluster,
        ctx: &ClusterContext,
        vpc_id: &str,
        machine: &Machine,
        generation: usize,
    ) -> Result<Instance, Error> {
        let s = &machine.spec;
        let groups = self.groups_for(ctx, machine);
        self.check_group_overrides(vpc_id, machine).await?;
        // On the user's interfaces, the machine is in the first one's subnet.
        let subnet = if s.network_interfaces.is_empty() {
            self.subnet_for(ctx, machine)?
        } else {
            self.check_interfaces(&cluster.metadata.name, vpc_id, machine, &groups)
                .await?
        };
        let image = ami::resolve(&self.clients, &cluster.spec, s).await?;
        if s.cpu_options.as_ref().is_some_and(|c| c.sev_snp()) {
            self.check_sev_snp(s, &image).await?;
        }
        if s.network_interface_type.as_deref() == Some(EFA) {
            self.check_efa(s).await?;
        }
        let endpoint = ctx
            .status
            .load_balancer
            .as_ref()
            .map(|l| l.dns_name.clone())
            .unwrap_or_default();
        let data = user_data::user_data(machine, &endpoint, &self.bootstrap)?;
        let tags = self.tags(cluster, machine);
        // A retry of this launch (after a crash that lost its answer) reuses the token; a
        // machine recreated after its instance was terminated gets a new one.
        let token = ownership::client_token(&[
            &cluster.metadata.name,
            &machine.metadata.name,
            vpc_id,
            &generation.to_string(),
        ]);
        tracing::info!(target: "capa::progress", "run instance {} ({}) in {subnet}", machine.metadata.name, s.instance_type);
        let mut call = self
            .ec2()
            .run_instances()
            .image_id(&image.id)
            .instance_type(InstanceType::from(s.instance_type.as_str()))
            .user_data(data)
            .min_count(1)
            .max_count(1)
            .client_token(token)
            .tag_specifications(tag_spec(ResourceType::Instance, &tags))
            .tag_specifications(tag_spec(ResourceType::Volume, &tags));
        if s.network_interfaces.is_empty() {
            let home = ctx.status.subnets.iter().find(|x| x.id == subnet);
            let maps = home.is_some_and(|x| x.maps_public_ip);
            let wavelength = home.is_some_and(|x| x.is_wavelength());
            // CAPA's default: a primary IPv6 address wherever the subnet has IPv6.
            let primary_ipv6 = match s.assign_primary_ipv6.as_deref() {
                Some("enabled") => true,
                Some(_) => false,
                None => home.is_some_and(|x| x.ipv6_cidr.is_some()),
            };
            // An Elastic Fabric Adapter (CAPA's `networkInterfaceType: efa`), or EC2's default.
            let interface_type = s.network_interface_type.clone();
            call = if s.public_ip && wavelength {
                // A Wavelength Zone maps no public address: its instance reaches the internet
                // through the carrier gateway with a carrier IP address its interface asks
                // for (CAPA's way).
                call.network_interfaces(
                    InstanceNetworkInterfaceSpecification::builder()
                        .device_index(0)
                        .subnet_id(&subnet)
                        .set_groups(Some(groups))
                        .associate_carrier_ip_address(true)
                        .set_primary_ipv6(primary_ipv6.then_some(true))
                        .set_interface_type(interface_type)
                        .delete_on_termination(true)
                        .build(),
                )
            } else if s.elastic_ip_pool.is_some() {
                // The public address comes from the pool once the instance runs: none at
                // launch, even in a subnet that maps one.
                call.network_interfaces(
                    InstanceNetworkInterfaceSpecification::builder()
                        .device_index(0)
                        .subnet_id(&subnet)
                        .set_groups(Some(groups))
                        .associate_public_ip_address(false)
                        .set_primary_ipv6(primary_ipv6.then_some(true))
                        .set_interface_type(interface_type)
                        .delete_on_termination(true)
                        .build(),
                )
            } else if primary_ipv6 || interface_type.is_some() {
                call.network_interfaces(
                    InstanceNetworkInterfaceSpecification::builder()
                        .device_index(0)
                        .subnet_id(&subnet)
                        .set_groups(Some(groups))
                        .set_associate_public_ip_address((s.public_ip && !maps).then_some(true))
                        .set_primary_ipv6(primary_ipv6.then_some(true))
                        .set_interface_type(interface_type)
                        .delete_on_termination(true)
                        .build(),
                )
            } else {
                place(call, &subnet, groups, s.public_ip && !maps)
            }
            .tag_specifications(tag_spec(ResourceType::NetworkInterface, &tags));
        } else {
            // The user's interfaces, as they are (no tags: those apply to new interfaces).
            for (index, id) in (0..).zip(&s.network_interfaces) {
                call = call.network_interfaces(
                    InstanceNetworkInterfaceSpecification::builder()
                        .device_index(index)
                        .network_interface_id(id)
                        .build(),
                );
            }
        }
        if let Some(k) = s
            .ssh_key_name
            .as_ref()
            .or(cluster.spec.ssh_key_name.as_ref())
        {
            call = call.key_name(k);
        }
        if let Some(p) = &s.iam_instance_profile {
            call = call
                .iam_instance_profile(IamInstanceProfileSpecification::builder().name(p).build());
        }
        // A Dedicated Host's machine: the user's host, one allocated for it, or any of the
        // user's with auto placement.
        let host_id = match &s.dynamic_host_allocation {
            Some(_) => {
                let zone = self.zone_of(ctx, &subnet).await?;
                let token = ownership::client_token(&[
                    &cluster.metadata.name,
                    &machine.metadata.name,
                    vpc_id,
                    "host",
                    &generation.to_string(),
                ]);
                Some(self.host_for(cluster, ctx, machine, &zone, token).await?)
            }
            None => s.host_id.clone(),
        };
        let tenancy = s
            .tenancy
            .clone()
            .or_else(|| host_id.as_ref().map(|_| "host".to_string()));
        // A placement group of the user's, and its partition.
        if tenancy.is_some() || s.host_affinity.is_some() || s.placement_group_name.is_some() {
            call = call.placement(
                Placement::builder()
                    .set_tenancy(tenancy.as_deref().map(Tenancy::from))
                    .set_host_id(host_id)
                    .set_affinity(s.host_affinity.clone())
                    .set_group_name(s.placement_group_name.clone())
                    .set_partition_number(s.placement_group_partition)
                    .build(),
            );
        }
        // A Spot machine: a one-time request, terminated on interruption (AWS's defaults,
        // named so the request says what it is).
        if let Some(spot) = &s.spot_market_options {
            call = call.instance_market_options(
                InstanceMarketOptionsRequest::builder()
                    .market_type(MarketType::Spot)
                    .spot_options(
                        SpotMarketOptions::builder()
                            .set_max_price(spot.max_price.clone())
                            .spot_instance_type(SpotInstanceType::OneTime)
                            .instance_interruption_behavior(InstanceInterruptionBehavior::Terminate)
                            .build(),
                    )
                    .build(),
            );
        }
        if let Some(o) = &s.instance_metadata_options {
            call = call.metadata_options(metadata_request(o));
        }
        if let Some(c) = &s.cpu_options {
            call = call.cpu_options(
                CpuOptionsRequest::builder()
                    .amd_sev_snp(if c.sev_snp() {
                        AmdSevSnpSpecification::Enabled
                    } else {
                        AmdSevSnpSpecification::Disabled
                    })
                    .build(),
            );
        }
        if let Some(d) = &s.private_dns_name {
            call = call.private_dns_name_options(
                PrivateDnsNameOptionsRequest::builder()
                    .set_hostname_type(d.hostname_type.as_deref().map(HostnameType::from))
                    .set_enable_resource_name_dns_a_record(d.enable_resource_name_dns_a_record)
                    .set_enable_resource_name_dns_aaaa_record(
                        d.enable_resource_name_dns_aaaa_record,
                    )
                    .build(),
            );
        }
        // The user's Capacity Reservation, or the preference for any.
        if s.capacity_reservation_id.is_some() || s.capacity_reservation_preference.is_some() {
            call = call.capacity_reservation_specification(
                CapacityReservationSpecification::builder()
                    .set_capacity_reservation_preference(
                        capacity_preference(s).map(CapacityReservationPreference::from),
                    )
                    .set_capacity_reservation_target(s.capacity_reservation_id.as_ref().map(|id| {
                        CapacityReservationTarget::builder()
                            .capacity_reservation_id(id)
                            .build()
                    }))
                    .build(),
            );
        }
        if let Some(r) = &s.root_volume {
            call = call.block_device_mappings(
                BlockDeviceMapping::builder()
                    .device_name(&image.root_device)
                    .ebs(
                        EbsBlockDevice::builder()
                            .volume_size(r.size)
                            .volume_type(VolumeType::from(r.volume_type()))
                            .set_iops(r.iops)
                            .set_throughput(r.throughput)
                            .encrypted(r.encrypted)
                            .set_kms_key_id(r.encryption_key.clone())
                            .delete_on_termination(true)
                            .build(),
                    )
                    .build(),
            );
        }
        for v in &s.non_root_volumes {
            call = call.block_device_mappings(
                BlockDeviceMapping::builder()
                    .device_name(&v.device_name)
                    .ebs(
                        EbsBlockDevice::builder()
                            .volume_size(v.size)
                            .volume_type(VolumeType::from(v.volume_type()))
                            .set_iops(v.iops)
                            .set_throughput(v.throughput)
                            .encrypted(v.encrypted)
                            .set_kms_key_id(v.encryption_key.clone())
                            .delete_on_termination(true)
                            .build(),
                    )
                    .build(),
            );
        }
        let out = call.send().await.map_err(aws("RunInstances"))?;
        out.instances()
            .first()
            .cloned()
            .ok_or_else(|| empty_answer("RunInstances"))
    }

    /// AMD SEV-SNP's requirements, checked before the launch so that the refusal names the
    /// spec's field: an instance type with the `amd-sev-snp` feature (as DescribeInstanceTypes
    /// answers it in the region) and an image that boots UEFI.
    async fn check_sev_snp(&self, s: &MachineSpec, image: &ami::Image) -> Result<(), Error> {
        if !matches!(image.boot_mode.as_deref(), Some("uefi" | "uefi-preferred")) {
            return Err(Error::PreExisting {
                resource: format!("image {} ({})", image.id, image.name),
                problem: format!(
                    "boots {}, and AMD SEV-SNP (spec.cpuOptions.confidentialCompute) needs an \
                     image of boot mode uefi or uefi-preferred",
                    image
                        .boot_mode
                        .as_deref()
                        .unwrap_or("its architecture's default mode")
                ),
            });
        }
        let supported = self
            .instance_type_has(s, |t| {
                t.processor_info().is_some_and(|p| {
                    p.supported_features()
                        .contains(&SupportedAdditionalProcessorFeature::AmdSevSnp)
                })
            })
            .await?;
        if !supported {
            return Err(Error::InvalidSpec {
                problems: vec![format!(
                    "spec.instanceType: {} does not support AMD SEV-SNP \
                     (spec.cpuOptions.confidentialCompute) in this region; the types that do \
                     have the amd-sev-snp processor feature (DescribeInstanceTypes, filter \
                     processor-info.supported-features)",
                    s.instance_type
                )],
            });
        }
        Ok(())
    }

    /// An Elastic Fabric Adapter's requirement, checked before the launch so that the refusal
    /// names the spec's field: an instance type that takes one (DescribeInstanceTypes'
    /// `EfaSupported` in the region).
    async fn check_efa(&self, s: &MachineSpec) -> Result<(), Error> {
        let supported = self
            .instance_type_has(s, |t| {
                t.network_info().and_then(|n| n.efa_supported()) == Some(true)
            })
            .await?;
        if !supported {
            return Err(Error::InvalidSpec {
                problems: vec![format!(
                    "spec.instanceType: {} takes no Elastic Fabric Adapter \
                     (spec.networkInterfaceType: efa) in this region; the types that do \
                     answer DescribeInstanceTypes' filter network-info.efa-supported=true",
                    s.instance_type
                )],
            });
        }
        Ok(())
    }

    /// Whether the machine's instance type, as DescribeInstanceTypes answers it in the
    /// region, has what `has` looks for (a type the region does not offer has nothing).
    async fn instance_type_has(
        &self,
        s: &MachineSpec,
        has: impl Fn(&InstanceTypeInfo) -> bool,
    ) -> Result<bool, Error> {
        let out = self
            .ec2()
            .describe_instance_types()
            .instance_types(InstanceType::from(s.instance_type.as_str()))
            .send()
            .await
            .map_err(aws("DescribeInstanceTypes"))?;
        Ok(out.instance_types().iter().any(has))
    }
}

/// The launch's `MetadataOptions` for a machine's options.
pub(super) fn metadata_request(o: &InstanceMetadataOptions) -> InstanceMetadataOptionsRequest {
    InstanceMetadataOptionsRequest::builder()
        .http_endpoint(InstanceMetadataEndpointState::from(
            o.http_endpoint.as_str(),
        ))
        .http_protocol_ipv6(InstanceMetadataProtocolState::from(
            o.http_protocol_ipv6.as_str(),
        ))
        .http_put_response_hop_limit(o.http_put_response_hop_limit)
        .http_tokens(HttpTokensState::from(o.http_tokens.as_str()))
        .instance_metadata_tags(InstanceMetadataTagsState::from(
            o.instance_metadata_tags.as_str(),
        ))
        .build()
}

/// EC2's word for the Capacity Reservation preference `s` names, if it names one.
pub(super) fn capacity_preference(s: &MachineSpec) -> Option<&'static str> {
    let asked = s.capacity_reservation_preference.as_deref()?;
    CAPACITY_PREFERENCES
        .iter()
        .find(|(capa, _)| *capa == asked)
        .map(|(_, ec2)| *ec2)
}
