//! The machine actuator: one Machine spec is exactly one EC2 instance. `create` waits for the
//! cluster, finds the machine's instance (by the id in its status, then by tags) and launches
//! one only if none exists, with a deterministic ClientToken; control planes join the API
//! load balancer. `delete` deregisters and terminates; `update` converges the mutable fields
//! (security groups, additional tags) and refuses changes to immutable ones; `exists` reports
//! the instance's state.

pub mod ami;
pub mod user_data;

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_ec2::types::{
    BlockDeviceMapping, EbsBlockDevice, IamInstanceProfileSpecification, Instance,
    InstanceStateName, InstanceType, ResourceType, Tag, TagSpecification, VolumeType,
};
use aws_sdk_elasticloadbalancing::types::Instance as LbInstance;
use serde::Serialize;

use crate::aws_error::aws;
use crate::clients::Clients;
use crate::cluster::{ClusterActuator, ClusterStatus, filter};
use crate::error::Error;
use crate::ownership;
use crate::spec::machine::{Machine, MachineRole};
use crate::spec::{Cluster, Role};

/// What the machine holds in AWS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MachineStatus {
    /// The instance.
    pub instance_id: String,
    /// Its state (`pending`, `running`, `stopped`, ...).
    pub state: String,
    /// Its private IP.
    pub private_ip: Option<String>,
    /// Its public IP.
    pub public_ip: Option<String>,
    /// Its subnet.
    pub subnet_id: String,
    /// Its image.
    pub image_id: String,
    /// Whether it is registered with the API load balancer.
    pub in_load_balancer: bool,
}

/// The result of `create` or `update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineOutcome {
    /// The machine's status (None while waiting for the cluster).
    pub status: Option<MachineStatus>,
    /// What is pending; call again after `requeue_after`.
    pub waiting: Vec<String>,
}

impl MachineOutcome {
    /// Whether the work is finished.
    pub fn is_done(&self) -> bool {
        self.waiting.is_empty()
    }

    /// When to call again, if not done.
    pub fn requeue_after(&self) -> Option<Duration> {
        (!self.is_done()).then_some(Duration::from_secs(15))
    }
}

/// The answer of `exists`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exists {
    /// True for a pending or running instance.
    pub exists: bool,
    /// The instance's state, when there is one (stopped and terminated ones too).
    pub state: Option<String>,
    /// The instance.
    pub instance_id: Option<String>,
}

/// The cluster as a machine sees it.
struct ClusterContext {
    status: ClusterStatus,
    vpc_id: String,
    key: String,
}

/// Creates, deletes, updates and checks machines through one region's clients.
#[derive(Debug, Clone)]
pub struct MachineActuator {
    clients: Clients,
}

fn state_of(i: &Instance) -> String {
    i.state()
        .and_then(|s| s.name())
        .map(|n| n.as_str().to_string())
        .unwrap_or_default()
}

fn status_of(i: &Instance, in_load_balancer: bool) -> MachineStatus {
    MachineStatus {
        instance_id: i.instance_id().unwrap_or_default().to_string(),
        state: state_of(i),
        private_ip: i.private_ip_address().map(String::from),
        public_ip: i.public_ip_address().map(String::from),
        subnet_id: i.subnet_id().unwrap_or_default().to_string(),
        image_id: i.image_id().unwrap_or_default().to_string(),
        in_load_balancer,
    }
}

fn is_live(i: &Instance) -> bool {
    !matches!(
        i.state().and_then(|s| s.name()),
        Some(InstanceStateName::ShuttingDown | InstanceStateName::Terminated)
    )
}

/// Places a launch: in `subnet` with `groups`, and when a public IP is wanted in a subnet that
/// does not map one, through a primary network interface that asks for it.
pub fn place(
    call: aws_sdk_ec2::operation::run_instances::builders::RunInstancesFluentBuilder,
    subnet: &str,
    groups: Vec<String>,
    associate_public_ip: bool,
) -> aws_sdk_ec2::operation::run_instances::builders::RunInstancesFluentBuilder {
    if associate_public_ip {
        call.network_interfaces(
            aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification::builder()
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

impl MachineActuator {
    /// An actuator using `clients`.
    pub fn new(clients: Clients) -> Self {
        MachineActuator { clients }
    }

    fn ec2(&self) -> &aws_sdk_ec2::Client {
        &self.clients.ec2
    }

    fn elb(&self) -> &aws_sdk_elasticloadbalancing::Client {
        &self.clients.elb
    }

    fn check(cluster: &Cluster, machine: &Machine) -> Result<(), Error> {
        let mut problems: Vec<String> = crate::spec::machine::validate(machine)
            .into_iter()
            .map(|p| format!("machine {}: {p}", machine.metadata.name))
            .collect();
        if machine.spec.cluster_name != cluster.metadata.name {
            problems.push(format!(
                "machine {}: spec.clusterName {} is not the cluster {}",
                machine.metadata.name, machine.spec.cluster_name, cluster.metadata.name
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidSpec { problems })
        }
    }

    /// The cluster's infrastructure, or what it still lacks.
    async fn context(&self, cluster: &Cluster) -> Result<Result<ClusterContext, String>, Error> {
        let plan = ClusterActuator::new(self.clients.clone())
            .plan(cluster)
            .await?;
        if let Some(first) = plan.planned.first() {
            return Ok(Err(format!(
                "{} changes to make first (e.g. {first}); run the cluster reconcile",
                plan.planned.len()
            )));
        }
        if let Some(w) = plan.waiting.first() {
            return Ok(Err(w.clone()));
        }
        let Some(vpc) = plan.status.vpc.clone() else {
            return Ok(Err("no VPC".into()));
        };
        if plan.status.load_balancer.is_none() {
            return Ok(Err("no API load balancer".into()));
        }
        Ok(Ok(ClusterContext {
            status: plan.status,
            vpc_id: vpc.id,
            key: ownership::cluster_key(&cluster.metadata.name),
        }))
    }

    /// The machine's instance: the one in its status, else the one tagged with its name.
    async fn find(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<(Option<Instance>, usize), Error> {
        if let Some(s) = status.filter(|s| !s.instance_id.is_empty()) {
            match self
                .ec2()
                .describe_instances()
                .instance_ids(&s.instance_id)
                .send()
                .await
                .map_err(aws("DescribeInstances"))
            {
                Ok(o) => {
                    if let Some(i) = o
                        .reservations()
                        .iter()
                        .flat_map(|r| r.instances())
                        .find(|i| is_live(i))
                    {
                        return Ok((Some(i.clone()), 0));
                    }
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        let out = self
            .ec2()
            .describe_instances()
            .filters(filter("vpc-id", &[&ctx.vpc_id]))
            .filters(filter(&format!("tag:{}", ctx.key), &[ownership::OWNED]))
            .filters(filter("tag:Name", &[&machine.metadata.name]))
            .send()
            .await
            .map_err(aws("DescribeInstances"))?;
        let all: Vec<&Instance> = out
            .reservations()
            .iter()
            .flat_map(|r| r.instances())
            .collect();
        let gone = all.iter().filter(|i| !is_live(i)).count();
        let live: Vec<&Instance> = all.into_iter().filter(|i| is_live(i)).collect();
        match live.as_slice() {
            [] => Ok((None, gone)),
            [one] => Ok((Some((*one).clone()), gone)),
            many => Err(Error::Conflict(format!(
                "machine {} has {} instances: {}",
                machine.metadata.name,
                many.len(),
                many.iter()
                    .filter_map(|i| i.instance_id())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    fn subnet_for(&self, ctx: &ClusterContext, machine: &Machine) -> Result<String, Error> {
        let s = &machine.spec;
        if let Some(id) = &s.subnet.id {
            return Ok(id.clone());
        }
        let candidates: Vec<_> = ctx
            .status
            .subnets
            .iter()
            .filter(|x| x.public == s.public_ip)
            .collect();
        let chosen = match &s.subnet.availability_zone {
            Some(z) => candidates.iter().find(|x| &x.zone == z),
            None => candidates.first(),
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

    fn groups_for(&self, ctx: &ClusterContext, machine: &Machine) -> Vec<String> {
        let roles: &[Role] = match machine.spec.role {
            MachineRole::ControlPlane => &[Role::ControlPlane, Role::Node],
            MachineRole::Node => &[Role::Node],
        };
        let mut out: Vec<String> = roles
            .iter()
            .filter_map(|r| ctx.status.security_groups.get(r).map(|g| g.id.clone()))
            .collect();
        for g in &machine.spec.additional_security_groups {
            if !out.contains(g) {
                out.push(g.clone());
            }
        }
        out.sort();
        out
    }

    fn tags(&self, cluster: &Cluster, machine: &Machine) -> BTreeMap<String, String> {
        let mut t = ownership::tags_for(
            &cluster.metadata.name,
            machine.spec.role.as_str(),
            &machine.metadata.name,
            &machine.spec.additional_tags,
        );
        t.insert(
            format!("kubernetes.io/cluster/{}", cluster.metadata.name),
            ownership::OWNED.into(),
        );
        t
    }

    async fn registered(&self, ctx: &ClusterContext, id: &str) -> Result<bool, Error> {
        let Some(lb) = &ctx.status.load_balancer else {
            return Ok(false);
        };
        let d = self
            .elb()
            .describe_load_balancers()
            .load_balancer_names(&lb.name)
            .send()
            .await
            .map_err(aws("DescribeLoadBalancers"))?;
        Ok(d.load_balancer_descriptions()
            .iter()
            .flat_map(|l| l.instances())
            .any(|i| i.instance_id() == Some(id)))
    }

    async fn ensure_registered(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
        id: &str,
    ) -> Result<bool, Error> {
        if machine.spec.role != MachineRole::ControlPlane {
            return Ok(false);
        }
        let Some(lb) = &ctx.status.load_balancer else {
            return Ok(false);
        };
        if self.registered(ctx, id).await? {
            return Ok(true);
        }
        tracing::info!(target: "capa::progress", "register {id} with {}", lb.name);
        self.elb()
            .register_instances_with_load_balancer()
            .load_balancer_name(&lb.name)
            .instances(LbInstance::builder().instance_id(id).build())
            .send()
            .await
            .map_err(aws("RegisterInstancesWithLoadBalancer"))?;
        Ok(true)
    }

    /// Creates the machine's instance unless it exists; registers a control plane with the
    /// API load balancer. Waits (requeue) while the cluster is not ready.
    #[tracing::instrument(skip_all, fields(machine = %machine.metadata.name))]
    pub async fn create(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        Self::check(cluster, machine)?;
        let ctx = match self.context(cluster).await? {
            Ok(ctx) => ctx,
            Err(reason) => {
                return Ok(MachineOutcome {
                    status: status.cloned(),
                    waiting: vec![format!("cluster {}: {reason}", cluster.metadata.name)],
                });
            }
        };
        self.create_in(&ctx, cluster, machine, status).await
    }

    /// [`create`](Self::create) for several machines of one cluster, reading the cluster once.
    pub async fn create_all(
        &self,
        cluster: &Cluster,
        machines: &[(&Machine, Option<&MachineStatus>)],
    ) -> Result<Vec<MachineOutcome>, Error> {
        for (m, _) in machines {
            Self::check(cluster, m)?;
        }
        let ctx = match self.context(cluster).await? {
            Ok(ctx) => ctx,
            Err(reason) => {
                return Ok(machines
                    .iter()
                    .map(|(_, st)| MachineOutcome {
                        status: st.cloned(),
                        waiting: vec![format!("cluster {}: {reason}", cluster.metadata.name)],
                    })
                    .collect());
            }
        };
        let mut out = Vec::new();
        for (m, st) in machines {
            out.push(self.create_in(&ctx, cluster, m, *st).await?);
        }
        Ok(out)
    }

    async fn create_in(
        &self,
        ctx: &ClusterContext,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        let (found, gone) = self.find(ctx, machine, status).await?;
        let instance = match found {
            Some(i) => i,
            None => self.run(cluster, ctx, machine, gone).await?,
        };
        let id = instance.instance_id().unwrap_or_default().to_string();
        let in_lb = self.ensure_registered(ctx, machine, &id).await?;
        let st = status_of(&instance, in_lb);
        let waiting = if st.state == "pending" {
            vec![format!("instance {id} is pending")]
        } else {
            Vec::new()
        };
        Ok(MachineOutcome {
            status: Some(st),
            waiting,
        })
    }

    async fn run(
        &self,
        cluster: &Cluster,
        ctx: &ClusterContext,
        machine: &Machine,
        generation: usize,
    ) -> Result<Instance, Error> {
        let s = &machine.spec;
        let subnet = self.subnet_for(ctx, machine)?;
        let groups = self.groups_for(ctx, machine);
        let image = ami::resolve(&self.clients, s).await?;
        let endpoint = ctx
            .status
            .load_balancer
            .as_ref()
            .map(|l| l.dns_name.clone())
            .unwrap_or_default();
        let data = user_data::user_data(machine, &endpoint)?;
        let tags = self.tags(cluster, machine);
        let spec_for = |rt: ResourceType| {
            let mut b = TagSpecification::builder().resource_type(rt);
            for (k, v) in &tags {
                b = b.tags(Tag::builder().key(k).value(v).build());
            }
            b.build()
        };
        // A retry of this launch (after a crash that lost its answer) reuses the token; a
        // machine recreated after its instance was terminated gets a new one.
        let token = ownership::client_token(&[
            &cluster.metadata.name,
            &machine.metadata.name,
            &ctx.vpc_id,
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
            .tag_specifications(spec_for(ResourceType::Instance))
            .tag_specifications(spec_for(ResourceType::Volume));
        let maps = ctx
            .status
            .subnets
            .iter()
            .find(|x| x.id == subnet)
            .is_some_and(|x| x.maps_public_ip);
        call = place(call, &subnet, groups, s.public_ip && !maps);
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
        if let Some(r) = &s.root_volume {
            call = call.block_device_mappings(
                BlockDeviceMapping::builder()
                    .device_name(&image.root_device)
                    .ebs(
                        EbsBlockDevice::builder()
                            .volume_size(r.size)
                            .volume_type(VolumeType::from(r.r#type.as_deref().unwrap_or("gp3")))
                            .encrypted(r.encrypted)
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
            .ok_or_else(|| crate::cluster::empty_answer("RunInstances"))
    }

    /// Deregisters and terminates the machine's instance; an instance already terminating
    /// or gone is success.
    #[tracing::instrument(skip_all, fields(machine = %machine.metadata.name))]
    pub async fn delete(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<(), Error> {
        Self::check(cluster, machine)?;
        let plan = ClusterActuator::new(self.clients.clone())
            .plan(cluster)
            .await?;
        let Some(vpc) = plan
            .status
            .vpc
            .clone()
            .filter(|v| !crate::cluster::is_new(&v.id))
        else {
            return Ok(());
        };
        let ctx = ClusterContext {
            status: plan.status,
            vpc_id: vpc.id,
            key: ownership::cluster_key(&cluster.metadata.name),
        };
        let (found, _) = self.find(&ctx, machine, status).await?;
        let Some(i) = found else {
            return Ok(());
        };
        let id = i.instance_id().unwrap_or_default().to_string();
        if let Some(lb) = &ctx.status.load_balancer
            && self.registered(&ctx, &id).await?
        {
            tracing::info!(target: "capa::progress", "deregister {id} from {}", lb.name);
            match self
                .elb()
                .deregister_instances_from_load_balancer()
                .load_balancer_name(&lb.name)
                .instances(LbInstance::builder().instance_id(&id).build())
                .send()
                .await
                .map_err(aws("DeregisterInstancesFromLoadBalancer"))
            {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        tracing::info!(target: "capa::progress", "terminate {id} ({})", machine.metadata.name);
        match self
            .ec2()
            .terminate_instances()
            .instance_ids(&id)
            .send()
            .await
            .map_err(aws("TerminateInstances"))
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the machine's instance exists (pending or running), with its state.
    pub async fn exists(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<Exists, Error> {
        Self::check(cluster, machine)?;
        let plan = ClusterActuator::new(self.clients.clone())
            .plan(cluster)
            .await?;
        let Some(vpc) = plan
            .status
            .vpc
            .clone()
            .filter(|v| !crate::cluster::is_new(&v.id))
        else {
            return Ok(Exists {
                exists: false,
                state: None,
                instance_id: None,
            });
        };
        let ctx = ClusterContext {
            status: plan.status,
            vpc_id: vpc.id,
            key: ownership::cluster_key(&cluster.metadata.name),
        };
        let (found, _) = self.find(&ctx, machine, status).await?;
        let found = match found {
            Some(i) => Some(i),
            // A terminated instance is reported as such while AWS still shows it.
            None => match status.filter(|s| !s.instance_id.is_empty()) {
                Some(s) => match self
                    .ec2()
                    .describe_instances()
                    .instance_ids(&s.instance_id)
                    .send()
                    .await
                    .map_err(aws("DescribeInstances"))
                {
                    Ok(o) => o
                        .reservations()
                        .iter()
                        .flat_map(|r| r.instances())
                        .next()
                        .cloned(),
                    Err(e) if e.is_not_found() => None,
                    Err(e) => return Err(e.into()),
                },
                None => None,
            },
        };
        Ok(match found {
            Some(i) => {
                let state = state_of(&i);
                Exists {
                    exists: state == "pending" || state == "running",
                    state: Some(state),
                    instance_id: i.instance_id().map(String::from),
                }
            }
            None => Exists {
                exists: false,
                state: None,
                instance_id: None,
            },
        })
    }

    /// Converges the mutable fields (security groups, additional tags, load balancer
    /// membership); a changed immutable field is an error naming every such field.
    #[tracing::instrument(skip_all, fields(machine = %machine.metadata.name))]
    pub async fn update(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        Self::check(cluster, machine)?;
        let ctx = match self.context(cluster).await? {
            Ok(ctx) => ctx,
            Err(reason) => {
                return Ok(MachineOutcome {
                    status: status.cloned(),
                    waiting: vec![format!("cluster {}: {reason}", cluster.metadata.name)],
                });
            }
        };
        let (found, _) = self.find(&ctx, machine, status).await?;
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
        immutable(
            "spec.subnet",
            i.subnet_id().unwrap_or_default().to_string(),
            self.subnet_for(&ctx, machine)?,
        );
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
                    immutable(
                        "spec.rootVolume",
                        format!(
                            "{} GiB {} encrypted={}",
                            v.size().unwrap_or_default(),
                            v.volume_type().map(|t| t.as_str()).unwrap_or_default(),
                            v.encrypted().unwrap_or_default()
                        ),
                        format!(
                            "{} GiB {} encrypted={}",
                            r.size,
                            r.r#type.as_deref().unwrap_or("gp3"),
                            r.encrypted
                        ),
                    );
                }
            }
        }
        match changed.len() {
            0 => {}
            1 => return Err(changed.remove(0)),
            _ => return Err(Error::Many(changed)),
        }

        // Security groups, through the primary network interface.
        let want = self.groups_for(&ctx, machine);
        let mut have: Vec<String> = i
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(String::from))
            .collect();
        have.sort();
        if have != want {
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

        // Tags: add missing or changed, remove the additional ones the spec dropped.
        let tags = self.tags(cluster, machine);
        let current = i.tags();
        let (missing, dropped) = ownership::tag_changes(current, &tags);
        if !dropped.is_empty() {
            tracing::info!(target: "capa::progress", "untag {id} ({} tags)", dropped.len());
            self.ec2()
                .delete_tags()
                .resources(&id)
                .set_tags(Some(dropped))
                .send()
                .await
                .map_err(aws("DeleteTags"))?;
        }
        if !missing.is_empty() {
            tracing::info!(target: "capa::progress", "tag {id} ({} tags)", missing.len());
            self.ec2()
                .create_tags()
                .resources(&id)
                .set_tags(Some(missing))
                .send()
                .await
                .map_err(aws("CreateTags"))?;
        }
        let in_lb = self.ensure_registered(&ctx, machine, &id).await?;
        Ok(MachineOutcome {
            status: Some(status_of(&i, in_lb)),
            waiting: Vec::new(),
        })
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
