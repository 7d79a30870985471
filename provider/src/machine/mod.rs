//! The machine actuator: one Machine spec is exactly one EC2 instance. `create` waits for the
//! cluster, finds the machine's instance (by the id in its status, then by tags) and launches
//! one only if none exists, with a deterministic ClientToken; control planes join the API
//! load balancer. `delete` deregisters and terminates; `update` converges the mutable fields
//! (security groups, additional tags) and refuses changes to immutable ones; `exists` reports
//! the instance's state.
//!
//! Machines boot with the cluster's bootstrap material ([`Bootstrap`]: its PKI, token and
//! certificate key), which the actuator is given; kubeadm's order is kept: the init machine
//! first, every join (control plane or node) only once a control plane is `InService` on the
//! API load balancer (until then `create` requeues, saying so).

mod address;
pub mod ami;
mod host;
mod interfaces;
mod launch;
mod load_balancer;
mod update;
pub mod user_data;

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_ec2::types::Instance;
use serde::Serialize;

use crate::aws_error::aws;
use crate::bootstrap::Bootstrap;
use crate::clients::Clients;
use crate::cluster::{ClusterActuator, ClusterStatus, is_new};
use crate::error::Error;
use crate::instance::{instances_of, is_live, state_of};
use crate::ownership;
use crate::sdk::{filter, found, until_visible};
use crate::spec::Cluster;
use crate::spec::machine::{KubeadmOperation, Machine};

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
    /// Its IPv6 address (in a dual-stack cluster's subnets, which give each instance one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6: Option<String>,
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
    /// Why it is not running, as AWS says (`Server.SpotInstanceTermination: ...` for a Spot
    /// Instance EC2 interrupted, `Client.UserInitiatedShutdown: ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The instance.
    pub instance_id: Option<String>,
}

/// The cluster as a machine sees it, read once per call (one plan of the cluster).
struct ClusterContext {
    status: ClusterStatus,
    /// The VPC, once it exists.
    vpc_id: Option<String>,
    key: String,
    /// Why a machine cannot be created yet: what the cluster still lacks or waits for.
    not_ready: Option<String>,
}

impl ClusterContext {
    /// The VPC of a ready cluster, else why it is not ready.
    fn ready(&self) -> Result<&str, String> {
        match (&self.not_ready, &self.vpc_id) {
            (Some(reason), _) => Err(reason.clone()),
            (None, Some(vpc)) => Ok(vpc),
            (None, None) => Err("no VPC".into()),
        }
    }
}

/// Creates, deletes, updates and checks machines through one region's clients.
#[derive(Debug, Clone)]
pub struct MachineActuator {
    clients: Clients,
    bootstrap: Arc<Bootstrap>,
}

fn status_of(i: &Instance, in_load_balancer: bool) -> MachineStatus {
    MachineStatus {
        instance_id: i.instance_id().unwrap_or_default().to_string(),
        state: state_of(i),
        private_ip: i.private_ip_address().map(String::from),
        public_ip: i.public_ip_address().map(String::from),
        ipv6: i
            .ipv6_address()
            .or_else(|| {
                i.network_interfaces()
                    .iter()
                    .flat_map(|n| n.ipv6_addresses())
                    .find_map(|a| a.ipv6_address())
            })
            .map(String::from),
        subnet_id: i.subnet_id().unwrap_or_default().to_string(),
        image_id: i.image_id().unwrap_or_default().to_string(),
        in_load_balancer,
    }
}

/// The outcome of a machine that waits for its cluster.
fn waiting_for_cluster(
    cluster: &Cluster,
    status: Option<&MachineStatus>,
    reason: &str,
) -> MachineOutcome {
    MachineOutcome {
        status: status.cloned(),
        waiting: vec![format!("cluster {}: {reason}", cluster.metadata.name)],
    }
}

impl MachineActuator {
    /// An actuator using `clients`, whose machines boot with the cluster's bootstrap
    /// material `bootstrap`.
    pub fn new(clients: Clients, bootstrap: Arc<Bootstrap>) -> Self {
        MachineActuator { clients, bootstrap }
    }

    fn ec2(&self) -> &aws_sdk_ec2::Client {
        &self.clients.ec2
    }

    fn elb(&self) -> &aws_sdk_elasticloadbalancing::Client {
        &self.clients.elb
    }

    fn check(&self, cluster: &Cluster, machine: &Machine) -> Result<(), Error> {
        let bootstrap = &self.bootstrap;
        let mut problems: Vec<String> = crate::spec::machine::validate(machine)
            .into_iter()
            .map(|p| format!("machine {}: {p}", machine.metadata.name))
            .collect();
        let aaaa = machine
            .spec
            .private_dns_name
            .as_ref()
            .and_then(|d| d.enable_resource_name_dns_aaaa_record);
        if aaaa == Some(true) && cluster.spec.network.vpc.ipv6.is_none() {
            problems.push(format!(
                "machine {}: spec.privateDnsName.enableResourceNameDnsAAAARecord: cluster {} is \
                 not dual stack (spec.network.vpc.ipv6), so its subnets have no IPv6 range and \
                 the instance no IPv6 address to answer with",
                machine.metadata.name, cluster.metadata.name
            ));
        }
        if machine.spec.assign_primary_ipv6.as_deref() == Some("enabled")
            && cluster.spec.network.vpc.ipv6.is_none()
        {
            problems.push(format!(
                "machine {}: spec.assignPrimaryIPv6: enabled, but cluster {} is not dual stack \
                 (spec.network.vpc.ipv6), so its subnets have no IPv6 range",
                machine.metadata.name, cluster.metadata.name
            ));
        }
        if machine.spec.cluster_name != cluster.metadata.name {
            problems.push(format!(
                "machine {}: spec.clusterName {} is not the cluster {}",
                machine.metadata.name, machine.spec.cluster_name, cluster.metadata.name
            ));
        }
        // The user data must fit EC2's limit whatever the endpoint's name (at most a DNS
        // name's 253 characters): checked before any call.
        if problems.is_empty() {
            match user_data::user_data(machine, &"x".repeat(253), bootstrap) {
                Err(Error::UserDataTooLarge { bytes, limit }) => problems.push(format!(
                    "machine {}: its user data is {bytes} bytes {}; EC2 takes at most {limit}",
                    machine.metadata.name,
                    if machine.spec.uncompressed_user_data {
                        "(uncompressedUserData)"
                    } else {
                        "compressed"
                    }
                )),
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidSpec { problems })
        }
    }

    /// The cluster's infrastructure as it is (Describe calls only), and what it still lacks.
    async fn context(&self, cluster: &Cluster) -> Result<ClusterContext, Error> {
        let plan = ClusterActuator::new(self.clients.clone())
            .plan(cluster)
            .await?;
        let vpc_id = plan
            .status
            .vpc
            .as_ref()
            .map(|v| v.id.clone())
            .filter(|id| !is_new(id));
        let not_ready = if let Some(first) = plan.planned.first() {
            Some(format!(
                "{} changes to make first (e.g. {first}); run the cluster reconcile",
                plan.planned.len()
            ))
        } else if let Some(w) = plan.waiting.first() {
            Some(w.clone())
        } else if plan.status.vpc.is_none() {
            Some("no VPC".into())
        } else if plan.status.load_balancer.is_none() {
            Some("no API load balancer".into())
        } else {
            None
        };
        Ok(ClusterContext {
            status: plan.status,
            vpc_id,
            key: ownership::cluster_key(&cluster.metadata.name),
            not_ready,
        })
    }

    /// The instance `id` as AWS describes it, if it shows it: a machine's recorded instance
    /// may be one just launched, which AWS does not show for a moment (AWS keeps terminated
    /// instances listed for about an hour, so a not-found is mostly that).
    async fn describe(&self, id: &str) -> Result<Option<Instance>, Error> {
        let answer = until_visible(&self.clients, || async {
            self.ec2()
                .describe_instances()
                .instance_ids(id)
                .send()
                .await
                .map_err(aws("DescribeInstances"))
        })
        .await;
        Ok(found(answer)?.and_then(|o| instances_of(&o).next().cloned()))
    }

    /// The machine's instance: the one in its status, else the one tagged with its name;
    /// and its instances that are gone (shutting down or terminated, while AWS lists them),
    /// latest first.
    async fn find(
        &self,
        ctx: &ClusterContext,
        vpc_id: &str,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<(Option<Instance>, Vec<Instance>), Error> {
        if let Some(s) = status.filter(|s| !s.instance_id.is_empty())
            && let Some(i) = self.describe(&s.instance_id).await?.filter(is_live)
        {
            return Ok((Some(i), Vec::new()));
        }
        let out = self
            .ec2()
            .describe_instances()
            .filters(filter("vpc-id", &[vpc_id]))
            .filters(filter(&format!("tag:{}", ctx.key), &[ownership::OWNED]))
            .filters(filter("tag:Name", &[&machine.metadata.name]))
            .send()
            .await
            .map_err(aws("DescribeInstances"))?;
        let all: Vec<&Instance> = instances_of(&out).collect();
        let mut gone: Vec<Instance> = all
            .iter()
            .filter(|i| !is_live(i))
            .map(|i| (*i).clone())
            .collect();
        gone.sort_by_key(|i| {
            std::cmp::Reverse(i.launch_time().map(|t| (t.secs(), t.subsec_nanos())))
        });
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

    /// Creates the machine's instance unless it exists; registers a control plane with the
    /// API load balancer. Waits (requeue) while the cluster is not ready.
    #[tracing::instrument(skip_all, fields(machine = %machine.metadata.name))]
    pub async fn create(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        self.check(cluster, machine)?;
        let ctx = self.context(cluster).await?;
        match ctx.ready() {
            Ok(vpc_id) => self.create_in(&ctx, vpc_id, cluster, machine, status).await,
            Err(reason) => Ok(waiting_for_cluster(cluster, status, &reason)),
        }
    }

    /// The cluster as `machines` see it, each checked first and the cluster read once; or,
    /// while the cluster is not ready, each machine's outcome of waiting for it.
    async fn context_for_all(
        &self,
        cluster: &Cluster,
        machines: &[(&Machine, Option<&MachineStatus>)],
    ) -> Result<Result<ClusterContext, Vec<MachineOutcome>>, Error> {
        for (m, _) in machines {
            self.check(cluster, m)?;
        }
        let ctx = self.context(cluster).await?;
        if let Err(reason) = ctx.ready() {
            return Ok(Err(machines
                .iter()
                .map(|(_, st)| waiting_for_cluster(cluster, *st, &reason))
                .collect()));
        }
        Ok(Ok(ctx))
    }

    /// [`create`](Self::create) for several machines of one cluster, reading the cluster once.
    pub async fn create_all(
        &self,
        cluster: &Cluster,
        machines: &[(&Machine, Option<&MachineStatus>)],
    ) -> Result<Vec<MachineOutcome>, Error> {
        let ctx = match self.context_for_all(cluster, machines).await? {
            Ok(ctx) => ctx,
            Err(waiting) => return Ok(waiting),
        };
        let vpc_id = ctx.ready().unwrap_or_default();
        let mut out = Vec::new();
        for (m, st) in machines {
            out.push(self.create_in(&ctx, vpc_id, cluster, m, *st).await?);
        }
        Ok(out)
    }

    async fn create_in(
        &self,
        ctx: &ClusterContext,
        vpc_id: &str,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<MachineOutcome, Error> {
        let (found, gone) = self.find(ctx, vpc_id, machine, status).await?;
        let instance = match found {
            Some(i) => i,
            None => {
                // kubeadm's order: a join needs the API server that init brings up.
                if machine.spec.kubeadm.operation == KubeadmOperation::Join
                    && let Some(reason) = self.api_not_ready(ctx).await?
                {
                    return Ok(MachineOutcome {
                        status: status.cloned(),
                        waiting: vec![format!("machine {}: {reason}", machine.metadata.name)],
                    });
                }
                self.run(cluster, ctx, vpc_id, machine, gone.len()).await?
            }
        };
        let id = instance.instance_id().unwrap_or_default().to_string();
        let in_lb = self.ensure_registered(ctx, machine, &id).await?;
        self.ensure_address(cluster, ctx, machine, &instance)
            .await?;
        // The instance recorded before, when this is another one (that one was terminated
        // behind the provider's back), leaves the load balancer: it serves nothing.
        if let Some(old) = status
            .map(|s| s.instance_id.as_str())
            .filter(|old| !old.is_empty() && *old != id)
        {
            self.deregister(ctx, old).await?;
        }
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

    /// Deregisters and terminates the machine's instance; an instance already terminating
    /// or gone is success.
    #[tracing::instrument(skip_all, fields(machine = %machine.metadata.name))]
    pub async fn delete(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<(), Error> {
        self.check(cluster, machine)?;
        let ctx = self.context(cluster).await?;
        let instance = match ctx.vpc_id.as_deref() {
            Some(vpc_id) => self.find(&ctx, vpc_id, machine, status).await?.0,
            None => None,
        };
        if let Some(i) = instance {
            let id = i.instance_id().unwrap_or_default().to_string();
            self.deregister(&ctx, &id).await?;
            tracing::info!(target: "capa::progress", "terminate {id} ({})", machine.metadata.name);
            let answer = self
                .ec2()
                .terminate_instances()
                .instance_ids(&id)
                .send()
                .await
                .map_err(aws("TerminateInstances"));
            // An instance already gone is what was wanted.
            found(answer)?;
        }
        // Its Elastic IPs (`elasticIpPool`) go once the instance has let go of them; looked
        // for whatever the spec says now, so that none outlives its machine.
        self.release_own_addresses(&ctx, machine).await?;
        // The host allocated for the machine goes once its instance has left it (also after a
        // delete that stopped between the two).
        if machine.spec.dynamic_host_allocation.is_some() {
            self.release_own_hosts(&ctx, machine).await?;
        }
        Ok(())
    }

    /// Whether the machine's instance exists (pending or running), with its state.
    pub async fn exists(
        &self,
        cluster: &Cluster,
        machine: &Machine,
        status: Option<&MachineStatus>,
    ) -> Result<Exists, Error> {
        self.check(cluster, machine)?;
        let ctx = self.context(cluster).await?;
        let Some(vpc_id) = ctx.vpc_id.as_deref() else {
            return Ok(Exists {
                exists: false,
                state: None,
                reason: None,
                instance_id: None,
            });
        };
        let (found, gone) = self.find(&ctx, vpc_id, machine, status).await?;
        let found = match found {
            Some(i) => Some(i),
            // A terminated instance is reported as such while AWS still shows it: the one
            // in the status, else the latest the machine had.
            None => match status.filter(|s| !s.instance_id.is_empty()) {
                Some(s) => self.describe(&s.instance_id).await?,
                None => gone.into_iter().next(),
            },
        };
        Ok(match found {
            Some(i) => {
                let state = state_of(&i);
                let live = state == "pending" || state == "running";
                Exists {
                    exists: live,
                    reason: i
                        .state_reason()
                        .and_then(|r| r.message())
                        .filter(|_| !live)
                        .map(String::from),
                    state: Some(state),
                    instance_id: i.instance_id().map(String::from),
                }
            }
            None => Exists {
                exists: false,
                state: None,
                reason: None,
                instance_id: None,
            },
        })
    }
}
