//! The cluster actuator: reconcile and delete a cluster's network, security groups, bastion
//! and API load balancer. The order is stated once, in [`Step::ORDER`]: reconcile walks it,
//! delete walks it backwards, each step after those it is [`Step::deleted_after`] (and
//! conformance's census and sweep walk the same orders). Every step
//! describes what AWS holds (finding the cluster's own resources by tag, so a lost status
//! never leads to a twin), decides, and acts only where AWS differs from the spec; in the
//! pass that creates the VPC, the steps skip describing what it holds (nothing yet).

pub mod bastion;
pub mod internet_gateway;
pub mod load_balancer;
pub mod nat_gateway;
pub mod route_table;
mod scope;
pub mod security_group;
mod status;
pub mod subnet;
pub mod vpc;

pub use scope::{Scope, is_new};
pub use status::{
    ClusterStatus, Condition, InstanceStatus, LoadBalancerStatus, NatStatus, Outcome, Res,
    RouteTableStatus, SubnetStatus,
};

use crate::aws_error::aws;
use crate::clients::Clients;
use crate::error::Error;
use crate::sdk::filter;
use crate::spec::{self, Cluster, Plan};

/// One step of a cluster: the resources one module reconciles and deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// The VPC and its DNS attributes ([`vpc`]).
    Vpc,
    /// Public and private subnets per zone ([`subnet`]).
    Subnet,
    /// The internet gateway, attached to the VPC ([`internet_gateway`]).
    InternetGateway,
    /// NAT gateways and their Elastic IPs ([`nat_gateway`]).
    NatGateway,
    /// Route tables, their routes and associations ([`route_table`]).
    RouteTable,
    /// Security groups and their rules ([`security_group`]).
    SecurityGroup,
    /// The bastion instance ([`bastion`]); machines are instances too and go with it.
    Bastion,
    /// The classic load balancer of the API servers ([`load_balancer`]).
    LoadBalancer,
}

impl Step {
    /// The order of creation: each step needs only what comes before it. Deletion walks it
    /// backwards.
    pub const ORDER: [Step; 8] = [
        Step::Vpc,
        Step::Subnet,
        Step::InternetGateway,
        Step::NatGateway,
        Step::RouteTable,
        Step::SecurityGroup,
        Step::Bastion,
        Step::LoadBalancer,
    ];

    /// The steps in the order of deletion: [`ORDER`](Self::ORDER) backwards, each step
    /// moved after the steps it is [`deleted_after`](Self::deleted_after). So route tables
    /// go after the subnets.
    pub fn deletion_order() -> Vec<Step> {
        let mut order: Vec<Step> = Vec::with_capacity(Self::ORDER.len());
        while order.len() < Self::ORDER.len() {
            let placed = order.len();
            for step in Self::ORDER.into_iter().rev() {
                if !order.contains(&step) && step.deleted_after().iter().all(|b| order.contains(b))
                {
                    order.push(step);
                }
            }
            if order.len() == placed {
                // A cycle in `deleted_after` (a test rules it out): the rest as written.
                let rest: Vec<Step> = Self::ORDER
                    .into_iter()
                    .rev()
                    .filter(|x| !order.contains(x))
                    .collect();
                order.extend(rest);
            }
        }
        order
    }

    /// The steps whose resources must be gone before this step's can be deleted, as AWS
    /// refuses otherwise (`DependencyViolation`): a group while an instance or a load
    /// balancer uses it; a gateway while a NAT gateway, the bastion or an internet-facing
    /// balancer holds a public address behind it; a subnet while anything has an interface
    /// in it; the VPC while anything is in it.
    pub fn needs_gone(self) -> &'static [Step] {
        match self {
            Step::SecurityGroup => &[Step::Bastion, Step::LoadBalancer],
            Step::InternetGateway | Step::Subnet => {
                &[Step::NatGateway, Step::Bastion, Step::LoadBalancer]
            }
            Step::Vpc => &[
                Step::Subnet,
                Step::InternetGateway,
                Step::NatGateway,
                Step::RouteTable,
                Step::SecurityGroup,
                Step::Bastion,
                Step::LoadBalancer,
            ],
            Step::NatGateway | Step::RouteTable | Step::Bastion | Step::LoadBalancer => &[],
        }
    }

    /// The steps whose delete comes before this step's in a pass: those it
    /// [`needs_gone`](Self::needs_gone), and for route tables the subnets. A subnet's
    /// deletion ends its route table association, so a table whose subnets went earlier in
    /// the pass needs no DisassociateRouteTable; it does not wait for them (while they stay,
    /// its associations are removed and it goes, so delete carries on).
    pub fn deleted_after(self) -> &'static [Step] {
        match self {
            Step::RouteTable => &[Step::Subnet],
            other => other.needs_gone(),
        }
    }

    /// The name of this step's condition in a cluster's status.
    pub fn condition(self) -> &'static str {
        match self {
            Step::Vpc => "VPC",
            Step::Subnet => "Subnets",
            Step::InternetGateway => "InternetGateway",
            Step::NatGateway => "NATGateways",
            Step::RouteTable => "RouteTables",
            Step::SecurityGroup => "SecurityGroups",
            Step::Bastion => "Bastion",
            Step::LoadBalancer => "LoadBalancer",
        }
    }

    async fn reconcile(self, s: &mut Scope<'_>) -> Result<(), Error> {
        match self {
            Step::Vpc => vpc::reconcile(s).await,
            Step::Subnet => subnet::reconcile(s).await,
            Step::InternetGateway => internet_gateway::reconcile(s).await,
            Step::NatGateway => nat_gateway::reconcile(s).await,
            Step::RouteTable => route_table::reconcile(s).await,
            Step::SecurityGroup => security_group::reconcile(s).await,
            Step::Bastion => bastion::reconcile(s).await,
            Step::LoadBalancer => load_balancer::reconcile(s).await,
        }
    }

    async fn delete(self, s: &mut Scope<'_>) -> Result<(), Error> {
        match self {
            Step::Vpc => vpc::delete(s).await,
            Step::Subnet => subnet::delete(s).await,
            Step::InternetGateway => internet_gateway::delete(s).await,
            Step::NatGateway => nat_gateway::delete(s).await,
            Step::RouteTable => route_table::delete(s).await,
            Step::SecurityGroup => security_group::delete(s).await,
            Step::Bastion => bastion::delete(s).await,
            Step::LoadBalancer => load_balancer::delete(s).await,
        }
    }
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

    /// Validates `cluster` against its region (one DescribeAvailabilityZones call, unless the
    /// clients read the zones in the last five minutes): its availability zones, and the
    /// Local Zones and Wavelength Zones the account opted in to (which AWS lists beside them),
    /// where subnets the spec names may go.
    pub async fn validate(&self, cluster: &Cluster) -> Result<Plan, Error> {
        let zones = match self.clients.zones.get() {
            Some(zones) => zones,
            None => {
                let answer = self
                    .clients
                    .ec2
                    .describe_availability_zones()
                    .filters(filter("state", &["available"]))
                    .send()
                    .await
                    .map_err(aws("DescribeAvailabilityZones"))?;
                let mut zones: Vec<spec::Zone> = answer
                    .availability_zones()
                    .iter()
                    .filter_map(|z| {
                        let kind = spec::ZoneKind::of_type(z.zone_type()?)?;
                        Some(spec::Zone {
                            name: z.zone_name()?.to_string(),
                            kind,
                            parent: z.parent_zone_name().map(String::from),
                            border_group: z
                                .network_border_group()
                                .filter(|_| kind.is_edge())
                                .map(String::from),
                            constrained: z
                                .zone_id()
                                .is_some_and(|id| spec::CONSTRAINED_ZONE_IDS.contains(&id)),
                        })
                    })
                    .collect();
                zones.sort_by(|a, b| a.name.cmp(&b.name));
                self.clients.zones.put(zones.clone());
                zones
            }
        };
        let mut plan = spec::validate_in(cluster, &zones)?;
        if plan.discover_subnets {
            plan.subnets = subnet::discover(&self.clients, &plan).await?;
        }
        Ok(plan)
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
        load_balancer::preflight(&mut s).await?;
        for step in Step::ORDER {
            let (waiting, planned) = (s.waiting.len(), s.planned.len());
            step.reconcile(&mut s).await?;
            let c = Condition::of(
                step.condition(),
                &s.waiting[waiting..],
                &s.planned[planned..],
            );
            s.status.conditions.push(c);
        }
        s.status.ready = s.waiting.is_empty() && !dry_run;
        Ok(Outcome {
            status: s.status,
            waiting: s.waiting,
            planned: s.planned,
        })
    }

    /// Deletes what the cluster owns, in [`Step::deletion_order`], continuing past failures; never
    /// touches pre-existing resources. Done when [`Outcome::is_done`].
    #[tracing::instrument(skip_all, fields(cluster = %cluster.metadata.name))]
    pub async fn delete(&self, cluster: &Cluster) -> Result<Outcome, Error> {
        let plan = self.validate(cluster).await?;
        let mut s = Scope::new(&self.clients, &plan, false);
        vpc::find(&mut s).await?;
        // Delete carries on past a step that fails or waits, but never tries a step while
        // something it depends on is still going away: it waits for it instead of being
        // refused. (After a step that failed, its dependents are tried: what remains of it
        // may not hold them, and if it does AWS says so and they wait.)
        let mut errors = Vec::new();
        let mut unfinished = std::collections::BTreeSet::new();
        for step in Step::deletion_order() {
            if let Some(blocker) = step.needs_gone().iter().find(|b| unfinished.contains(*b)) {
                s.wait(format!("{step:?} waits for {blocker:?} to be gone"));
                unfinished.insert(step);
                continue;
            }
            let waiting = s.waiting.len();
            if let Err(e) = step.delete(&mut s).await {
                errors.push(e);
            }
            if s.waiting.len() > waiting {
                unfinished.insert(step);
            }
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

#[cfg(test)]
mod tests {
    use super::Step;

    #[test]
    fn deletion_order_holds_every_step_once_each_after_what_it_is_deleted_after() {
        let order = Step::deletion_order();
        let mut sorted = order.clone();
        sorted.sort();
        let mut all = Step::ORDER.to_vec();
        all.sort();
        assert_eq!(sorted, all);
        for (i, step) in order.iter().enumerate() {
            for b in step.deleted_after() {
                let at = order.iter().position(|x| x == b).unwrap();
                assert!(at < i, "{step:?} is deleted before {b:?}: {order:?}");
            }
        }
        assert_eq!(
            order,
            [
                Step::LoadBalancer,
                Step::Bastion,
                Step::SecurityGroup,
                Step::NatGateway,
                Step::InternetGateway,
                Step::Subnet,
                Step::RouteTable,
                Step::Vpc,
            ]
        );
    }
}
