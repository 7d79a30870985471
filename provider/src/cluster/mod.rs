//! The cluster actuator: reconcile and delete a cluster's network, security groups, bastion
//! and API load balancer. The order is stated once, in [`ClusterActuator::reconcile`]; delete
//! walks it backwards. Every step describes what AWS holds (finding the cluster's own
//! resources by tag, so a lost status never leads to a twin), decides, and acts only where
//! AWS differs from the spec.

pub mod bastion;
pub mod internet_gateway;
pub mod load_balancer;
pub mod nat_gateway;
pub mod route_table;
pub mod security_group;
pub mod subnet;
pub mod vpc;

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use ipnet::Ipv4Net;
use serde::Serialize;

use crate::aws_error::{AwsError, aws};
use crate::clients::Clients;
use crate::error::Error;
use crate::ownership;
use crate::spec::{self, Cluster, Plan, Role};

/// A resource the cluster uses: created and owned by it, or pre-existing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Res {
    /// Its id (a placeholder `<new ...>` for what a plan would create).
    pub id: String,
    /// Whether the cluster owns it (created it).
    pub managed: bool,
}

/// A subnet of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubnetStatus {
    /// Id.
    pub id: String,
    /// Owned or pre-existing.
    pub managed: bool,
    /// CIDR.
    pub cidr: String,
    /// Zone.
    pub zone: String,
    /// Public or private.
    pub public: bool,
    /// Whether instances launched in it get a public IP without asking.
    pub maps_public_ip: bool,
}

/// A NAT gateway of the cluster, with its Elastic IP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NatStatus {
    /// Id.
    pub id: String,
    /// The zone whose private subnets route to it.
    pub zone: String,
    /// The public subnet it sits in.
    pub subnet_id: String,
    /// Its Elastic IP's allocation id.
    pub allocation_id: String,
    /// `pending`, `available`, ...
    pub state: String,
}

/// A route table of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteTableStatus {
    /// Id.
    pub id: String,
    /// The subnet it is associated with.
    pub subnet_id: String,
    /// Where 0.0.0.0/0 goes.
    pub default_route: Option<String>,
}

/// The bastion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstanceStatus {
    /// Id.
    pub id: String,
    /// Owned or pre-existing.
    pub managed: bool,
    /// State name.
    pub state: String,
    /// Public IP, if any.
    pub public_ip: Option<String>,
}

/// The API load balancer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadBalancerStatus {
    /// Name.
    pub name: String,
    /// Owned or pre-existing.
    pub managed: bool,
    /// DNS name: the control plane endpoint is `<dns name>:6443`.
    pub dns_name: String,
    /// `internet-facing` or `internal`.
    pub scheme: String,
}

/// What the cluster holds in AWS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClusterStatus {
    /// The VPC.
    pub vpc: Option<Res>,
    /// Its CIDR.
    pub vpc_cidr: Option<String>,
    /// The internet gateway.
    pub internet_gateway: Option<Res>,
    /// Subnets.
    pub subnets: Vec<SubnetStatus>,
    /// NAT gateways.
    pub nat_gateways: Vec<NatStatus>,
    /// Route tables (owned ones).
    pub route_tables: Vec<RouteTableStatus>,
    /// Security groups by role.
    pub security_groups: BTreeMap<Role, Res>,
    /// The bastion.
    pub bastion: Option<InstanceStatus>,
    /// The API load balancer.
    pub load_balancer: Option<LoadBalancerStatus>,
    /// Whether everything is in place and nothing is pending.
    pub ready: bool,
}

/// The result of a reconcile or delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// What the cluster holds.
    pub status: ClusterStatus,
    /// What is still pending (empty when done); call again after `requeue_after`.
    pub waiting: Vec<String>,
    /// What a plan would do (only in plan mode).
    pub planned: Vec<String>,
}

impl Outcome {
    /// Whether the work is finished.
    pub fn is_done(&self) -> bool {
        self.waiting.is_empty()
    }

    /// When to call again, if not done.
    pub fn requeue_after(&self) -> Option<Duration> {
        (!self.is_done()).then_some(Duration::from_secs(15))
    }
}

/// The state one reconcile or delete works on.
pub struct Scope<'a> {
    /// The clients.
    pub clients: &'a Clients,
    /// The validated spec.
    pub plan: &'a Plan,
    /// What has been found or made so far.
    pub status: ClusterStatus,
    /// Plan mode: describe only, record what would be done.
    pub dry_run: bool,
    /// What plan mode would do.
    pub planned: Vec<String>,
    /// What is pending.
    pub waiting: Vec<String>,
}

impl<'a> Scope<'a> {
    fn new(clients: &'a Clients, plan: &'a Plan, dry_run: bool) -> Self {
        Scope {
            clients,
            plan,
            status: ClusterStatus::default(),
            dry_run,
            planned: Vec::new(),
            waiting: Vec::new(),
        }
    }

    /// The EC2 client.
    pub fn ec2(&self) -> &aws_sdk_ec2::Client {
        &self.clients.ec2
    }

    /// The ELB client.
    pub fn elb(&self) -> &aws_sdk_elasticloadbalancing::Client {
        &self.clients.elb
    }

    /// The cluster's name.
    pub fn name(&self) -> &str {
        &self.plan.name
    }

    /// The ownership tag key.
    pub fn key(&self) -> String {
        ownership::cluster_key(&self.plan.name)
    }

    /// The tags of a created resource.
    pub fn tags(&self, role: &str, name: &str) -> BTreeMap<String, String> {
        ownership::tags_for(&self.plan.name, role, name, &self.plan.spec.additional_tags)
    }

    /// The tags of a created EC2 resource of type `rt`: [`tags`](Self::tags), and the
    /// Kubernetes tags a cloud controller manager looks for: on subnets the cluster tag and
    /// `kubernetes.io/role/elb` (public) or `internal-elb` (private), on the load balancer's
    /// group the cluster tag.
    pub fn ec2_tags(&self, rt: &ResourceType, role: &str, name: &str) -> BTreeMap<String, String> {
        let mut t = self.tags(role, name);
        let cluster_tag = format!("kubernetes.io/cluster/{}", self.plan.name);
        match rt {
            ResourceType::Subnet => {
                t.insert(cluster_tag, ownership::OWNED.into());
                let elb = if role == "public" {
                    "kubernetes.io/role/elb"
                } else {
                    "kubernetes.io/role/internal-elb"
                };
                t.insert(elb.into(), "1".into());
            }
            ResourceType::SecurityGroup if role == Role::ApiServerLb.as_str() => {
                t.insert(cluster_tag, ownership::OWNED.into());
            }
            _ => {}
        }
        t
    }

    /// A TagSpecification for a created resource.
    pub fn tag_spec(&self, rt: ResourceType, role: &str, name: &str) -> TagSpecification {
        let tags = self.ec2_tags(&rt, role, name);
        let mut s = TagSpecification::builder().resource_type(rt);
        for (k, v) in tags {
            s = s.tags(Tag::builder().key(k).value(v).build());
        }
        s.build()
    }

    /// The filter matching what this cluster owns.
    pub fn owned_filter(&self) -> Filter {
        filter(&format!("tag:{}", self.key()), &[ownership::OWNED])
    }

    /// Announces a change: in plan mode records it and returns false (do not act); otherwise
    /// logs it and returns true.
    pub fn act(&mut self, what: String) -> bool {
        if self.dry_run {
            self.planned.push(what);
            false
        } else {
            tracing::info!(target: "capa::progress", "{what}");
            true
        }
    }

    /// Records something pending.
    pub fn wait(&mut self, what: String) {
        tracing::info!(target: "capa::progress", "waiting: {what}");
        self.waiting.push(what);
    }

    /// Settles the answer of a delete (or detach) of `what`: `Ok(true)` when it succeeded or
    /// the resource is already gone, `Ok(false)` (and recorded as pending) when something
    /// still depends on it, the error otherwise.
    pub fn settle<T>(&mut self, what: &str, result: Result<T, AwsError>) -> Result<bool, Error> {
        match result {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(true),
            Err(e) if e.is_dependency() => {
                self.wait(format!("{what}: {}", e.message));
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The VPC id (or its placeholder).
    pub fn vpc_id(&self) -> Option<&str> {
        self.status.vpc.as_ref().map(|v| v.id.as_str())
    }

    /// The VPC's CIDR.
    pub fn vpc_cidr(&self) -> Option<Ipv4Net> {
        self.status.vpc_cidr.as_deref().and_then(|c| c.parse().ok())
    }

    /// Brings the cluster's tags onto an owned EC2 resource: adds the missing or changed ones,
    /// removes additional tags the spec no longer has (tags others put on it stay).
    pub async fn ensure_tags(
        &mut self,
        id: &str,
        current: &[Tag],
        rt: ResourceType,
        role: &str,
        name: &str,
    ) -> Result<(), Error> {
        let want = self.ec2_tags(&rt, role, name);
        if is_new(id) {
            return Ok(());
        }
        let (missing, dropped) = ownership::tag_changes(current, &want);
        if !dropped.is_empty() && self.act(format!("untag {id} ({} tags)", dropped.len())) {
            self.ec2()
                .delete_tags()
                .resources(id)
                .set_tags(Some(dropped))
                .send()
                .await
                .map_err(aws("DeleteTags"))?;
        }
        if missing.is_empty() {
            return Ok(());
        }
        if self.act(format!("tag {id} ({} tags)", missing.len())) {
            self.ec2()
                .create_tags()
                .resources(id)
                .set_tags(Some(missing))
                .send()
                .await
                .map_err(aws("CreateTags"))?;
        }
        Ok(())
    }
}

/// The error for a create call whose answer lacks the created resource.
pub fn empty_answer(op: &str) -> Error {
    Error::Conflict(format!("{op} answered without the created resource"))
}

/// Whether `id` is a plan-mode placeholder.
pub fn is_new(id: &str) -> bool {
    id.starts_with('<')
}

/// An EC2 filter.
pub fn filter(name: &str, values: &[&str]) -> Filter {
    let mut f = Filter::builder().name(name);
    for v in values {
        f = f.values(*v);
    }
    f.build()
}

/// Reconciles and deletes clusters through one region's clients.
#[derive(Debug, Clone)]
pub struct ClusterActuator {
    clients: Clients,
}

impl ClusterActuator {
    /// An actuator using `clients`.
    pub fn new(clients: Clients) -> Self {
        ClusterActuator { clients }
    }

    /// The clients (and their call counter).
    pub fn clients(&self) -> &Clients {
        &self.clients
    }

    /// Validates `cluster` against its region (one DescribeAvailabilityZones call).
    pub async fn validate(&self, cluster: &Cluster) -> Result<Plan, Error> {
        let zones = self
            .clients
            .ec2
            .describe_availability_zones()
            .filters(filter("state", &["available"]))
            .send()
            .await
            .map_err(aws("DescribeAvailabilityZones"))?;
        let mut names: Vec<String> = zones
            .availability_zones()
            .iter()
            .filter_map(|z| z.zone_name().map(String::from))
            .collect();
        names.sort();
        spec::validate(cluster, &names)
    }

    /// Reconciles `cluster`: creates what is missing, converges what drifted. Done when
    /// [`Outcome::is_done`]; otherwise call again after [`Outcome::requeue_after`].
    #[tracing::instrument(skip_all, fields(cluster = %cluster.metadata.name))]
    pub async fn reconcile(&self, cluster: &Cluster) -> Result<Outcome, Error> {
        self.run(cluster, false).await
    }

    /// What [`reconcile`](Self::reconcile) would do, with Describe calls only.
    pub async fn plan(&self, cluster: &Cluster) -> Result<Outcome, Error> {
        self.run(cluster, true).await
    }

    async fn run(&self, cluster: &Cluster, dry_run: bool) -> Result<Outcome, Error> {
        if cluster.spec.region != self.clients.region {
            return Err(Error::InvalidSpec {
                problems: vec![format!(
                    "spec.region: {} but the clients are for {}",
                    cluster.spec.region, self.clients.region
                )],
            });
        }
        let plan = self.validate(cluster).await?;
        let mut s = Scope::new(&self.clients, &plan, dry_run);
        load_balancer::preflight(&s).await?;
        vpc::reconcile(&mut s).await?;
        subnet::reconcile(&mut s).await?;
        internet_gateway::reconcile(&mut s).await?;
        nat_gateway::reconcile(&mut s).await?;
        route_table::reconcile(&mut s).await?;
        security_group::reconcile(&mut s).await?;
        bastion::reconcile(&mut s).await?;
        load_balancer::reconcile(&mut s).await?;
        s.status.ready = s.waiting.is_empty() && !dry_run;
        Ok(Outcome {
            status: s.status,
            waiting: s.waiting,
            planned: s.planned,
        })
    }

    /// Deletes what the cluster owns, in reverse order, continuing past failures; never
    /// touches pre-existing resources. Done when [`Outcome::is_done`].
    #[tracing::instrument(skip_all, fields(cluster = %cluster.metadata.name))]
    pub async fn delete(&self, cluster: &Cluster) -> Result<Outcome, Error> {
        let plan = self.validate(cluster).await?;
        let mut s = Scope::new(&self.clients, &plan, false);
        vpc::find(&mut s).await?;
        let mut errors = Vec::new();
        if let Err(e) = load_balancer::delete(&mut s).await {
            errors.push(e);
        }
        if let Err(e) = bastion::delete(&mut s).await {
            errors.push(e);
        }
        if let Err(e) = security_group::delete(&mut s).await {
            errors.push(e);
        }
        if let Err(e) = route_table::delete(&mut s).await {
            errors.push(e);
        }
        if let Err(e) = nat_gateway::delete(&mut s).await {
            errors.push(e);
        }
        if let Err(e) = internet_gateway::delete(&mut s).await {
            errors.push(e);
        }
        if let Err(e) = subnet::delete(&mut s).await {
            errors.push(e);
        }
        if s.waiting.is_empty()
            && let Err(e) = vpc::delete(&mut s).await
        {
            errors.push(e);
        }
        match errors.len() {
            0 => Ok(Outcome {
                status: s.status,
                waiting: s.waiting,
                planned: Vec::new(),
            }),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Many(errors)),
        }
    }
}
