//! [`Scope`]: the state one reconcile, plan or delete works on (clients, the validated spec,
//! what has been found so far, what is pending), and the few things every resource step does
//! through it: announce a change (`act`, which plan mode records instead), record what is
//! pending (`wait`), read a delete's answer (`settle`), tag what it creates.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use ipnet::Ipv4Net;

use super::ClusterStatus;
use crate::aws_error::{Action, AwsError, Class};
use crate::clients::Clients;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{self, filter};
use crate::spec::{Plan, Role};

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
    /// The cluster's own load balancer as the preflight read it (nothing between the
    /// preflight and the load balancer's step changes it): its step reads it from here
    /// instead of again.
    pub(super) load_balancer_seen: LoadBalancerSeen,
    /// Whether this pass created the VPC: then nothing else is in it yet (no one else knows
    /// its id), and the steps skip their describes of what it holds.
    pub(super) vpc_created: bool,
}

/// What the preflight read of the cluster's own load balancer.
#[derive(Debug, Default)]
pub(super) enum LoadBalancerSeen {
    /// Not read (the spec names an existing balancer, or the read was taken).
    #[default]
    NotRead,
    /// There is none.
    Absent,
    /// The balancer and its tags.
    Present(
        Box<aws_sdk_elasticloadbalancing::types::LoadBalancerDescription>,
        Vec<aws_sdk_elasticloadbalancing::types::Tag>,
    ),
}

impl<'a> Scope<'a> {
    pub(super) fn new(clients: &'a Clients, plan: &'a Plan, dry_run: bool) -> Self {
        Scope {
            clients,
            plan,
            status: ClusterStatus::default(),
            dry_run,
            planned: Vec::new(),
            waiting: Vec::new(),
            load_balancer_seen: LoadBalancerSeen::NotRead,
            vpc_created: false,
        }
    }

    /// The subnets of the plan: the spec's (or its defaults), or, when the VPC's range comes
    /// from an IPAM pool, the default subnets cut from the range the VPC holds (none until it
    /// has one: in plan mode, before the VPC exists).
    pub fn planned_subnets(&self) -> Vec<crate::spec::PlannedSubnet> {
        let Some(zones) = &self.plan.subnets_from_vpc_range else {
            return self.plan.subnets.clone();
        };
        let Some(range) = self
            .status
            .vpc_cidr
            .as_deref()
            .and_then(|c| c.parse::<Ipv4Net>().ok())
        else {
            return Vec::new();
        };
        let prefer_public =
            self.plan.spec.network.vpc.subnet_schema.as_deref() == Some("PreferPublic");
        crate::spec::default_subnets(range, zones, prefer_public)
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

    /// [`tags`](Self::tags) with `own`, the spec's tags of that resource alone, beside the
    /// cluster's additional tags (its own win).
    fn tags_with(
        &self,
        role: &str,
        name: &str,
        own: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        if own.is_empty() {
            return self.tags(role, name);
        }
        let mut additional = self.plan.spec.additional_tags.clone();
        additional.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        ownership::tags_for(&self.plan.name, role, name, &additional)
    }

    /// The tags of a created EC2 resource of type `rt`: [`tags`](Self::tags), and the
    /// Kubernetes tags a cloud controller manager looks for: on subnets the cluster tag and
    /// `kubernetes.io/role/elb` (public) or `internal-elb` (private), on the `lb` group (the
    /// one the cloud controller manager edits; no other group carries it) the cluster tag.
    pub fn ec2_tags(&self, rt: &ResourceType, role: &str, name: &str) -> BTreeMap<String, String> {
        self.ec2_tags_in(rt, role, name, &BTreeMap::new(), true)
    }

    /// [`ec2_tags`](Self::ec2_tags) with the spec's tags of that resource alone (`own`); a
    /// subnet carries the load balancer role tag
    /// only when `elb` (not in an edge zone, where no load balancer of the cloud controller
    /// manager may go, as CAPA leaves them out there).
    fn ec2_tags_in(
        &self,
        rt: &ResourceType,
        role: &str,
        name: &str,
        own: &BTreeMap<String, String>,
        elb: bool,
    ) -> BTreeMap<String, String> {
        let mut t = self.tags_with(role, name, own);
        let cluster_tag = ownership::kubernetes_cluster_key(&self.plan.name);
        match rt {
            ResourceType::Subnet => {
                t.insert(cluster_tag, ownership::OWNED.into());
                let tag = if role == "public" {
                    "kubernetes.io/role/elb"
                } else {
                    "kubernetes.io/role/internal-elb"
                };
                if elb {
                    t.insert(tag.into(), "1".into());
                }
            }
            ResourceType::SecurityGroup if role == Role::Lb.as_str() => {
                t.insert(cluster_tag, ownership::OWNED.into());
            }
            _ => {}
        }
        t
    }

    /// A TagSpecification for a created resource.
    pub fn tag_spec(&self, rt: ResourceType, role: &str, name: &str) -> TagSpecification {
        let tags = self.ec2_tags(&rt, role, name);
        sdk::tag_spec(rt, &tags)
    }

    /// The tags of a subnet of the cluster's in `zone`, `role` `public` or `private`, with the
    /// spec's tags of that subnet alone (`own`): no load balancer role tag in an edge zone.
    pub fn subnet_tags(
        &self,
        role: &str,
        zone: &str,
        name: &str,
        own: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let elb = !self.plan.zone_kind(zone).is_edge();
        self.ec2_tags_in(&ResourceType::Subnet, role, name, own, elb)
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

    /// Settles the answer of a delete (or detach) of `what` by the error policy: `Ok(true)`
    /// when it succeeded or what was wanted already holds (gone, not attached), `Ok(false)`
    /// (and recorded as pending) when time will mend it (something still depends on it), the
    /// error otherwise.
    pub fn settle<T>(&mut self, what: &str, result: Result<T, AwsError>) -> Result<bool, Error> {
        let Err(e) = result else {
            return Ok(true);
        };
        match e.class().action() {
            Action::Ignore => Ok(true),
            Action::Requeue(_) if e.class() == Class::Dependency => {
                self.wait(format!("{what}: {}", e.message));
                Ok(false)
            }
            Action::Requeue(_) | Action::Fail => Err(e.into()),
        }
    }

    /// The VPC id (or its placeholder).
    pub fn vpc_id(&self) -> Option<&str> {
        self.status.vpc.as_ref().map(|v| v.id.as_str())
    }

    /// Whether the cluster's VPC can hold nothing of the cluster's yet: a plan-mode
    /// placeholder, or a VPC this pass created (so a step need not describe what is in it).
    pub fn vpc_is_empty(&self) -> bool {
        self.vpc_created || self.vpc_id().is_some_and(is_new)
    }

    /// The VPC's CIDR.
    pub fn vpc_cidr(&self) -> Option<Ipv4Net> {
        self.status.vpc_cidr.as_deref().and_then(|c| c.parse().ok())
    }

    /// Every IPv4 range of the VPC: its CIDR, then its secondary ranges.
    pub fn vpc_ranges(&self) -> Vec<Ipv4Net> {
        self.status
            .vpc_ranges()
            .filter_map(|c| c.parse().ok())
            .collect()
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
        self.converge_tags(id, current, &want).await
    }

    /// Brings the tags `want` onto an owned EC2 resource (see
    /// [`ensure_tags`](Self::ensure_tags)).
    pub async fn converge_tags(
        &mut self,
        id: &str,
        current: &[Tag],
        want: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        if is_new(id) {
            return Ok(());
        }
        let clients = self.clients;
        sdk::converge_tags(&clients.ec2, id, current, want, |what| self.act(what)).await
    }
}

/// Whether `id` is a plan-mode placeholder.
pub fn is_new(id: &str) -> bool {
    id.starts_with('<')
}
