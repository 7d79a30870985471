//! The provider's promises, one function each, checked on one case against one target. Every
//! check reads the target back through Describe calls ([`census`], [`snapshot`]).
//!
//! 1. [`idempotence`]: a second reconcile (and machine create) makes no mutating call and
//!    reports the same status.
//! 2. [`crash_convergence`]: a reconcile cut after its k-th change, then resumed, owns exactly
//!    what an uninterrupted run owns (no twins), and a delete leaves nothing owned.
//! 3. [`preexisting_untouched`]: pre-existing resources describe identically after reconcile,
//!    re-reconcile and delete.
//! 4. [`delete_completeness`]: after a delete (also one cut at its k-th change and rerun)
//!    nothing owned remains.
//! 5. [`isolation`]: two clusters in one region, and two in one pre-existing VPC, never touch
//!    each other.
//! 6. [`machines`]: machine create is idempotent and crash-safe; delete and exists agree with
//!    what the target holds.
//! 7. [`bad_day`]: on a fake playing a bad day (throttling, consistency windows, 500s, lost
//!    answers, latency), the same end state as on a calm one, within 3 times its calls.
//! 9. [`dependency_order`]: with state changes slowed (NAT gateways, instances, load balancer
//!    registrations take their time), no call is refused for a dependency the provider
//!    should have waited for.
//! 8. [`delete_carries_on`]: one kind of delete refused for good (access denied): delete
//!    reports it and removes everything that does not depend on what it could not delete.
//!
//! [`plan`] (the provider's dry run) is checked with them: it makes no mutating call, from any
//! state (nothing yet, a half-finished create, a finished one), and lists nothing to do once
//! a reconcile has converged.
//!
//! After every reconcile that finishes, [`crate::topology`] checks the shape of what the
//! cluster owns (routes, NAT gateways by zone, rules by role, the load balancer).
//!
//! Every property also runs whole under a bad day (`conformance --faults storm`): the
//! in-process fake plays it for the provider, and calms down while the suite sets a case up
//! or reads what the target holds ([`Env::calm`]).

use std::time::Duration;

use provider::aws_error::Action;
use provider::machine::MachineStatus;
use provider::spec::{Cluster, Machine};
use provider::{Clients, ClusterActuator};

use crate::census::Census;
use crate::crash::crashing;
use crate::target::Env;
use crate::world::{self, Case, Existing};
use crate::{Failure, ensure};

/// What one property run did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// API calls the provider made.
    pub calls: u64,
}

/// How many passes a reconcile, delete or machine create gets before it counts as stuck.
pub const ROUNDS: usize = 40;

/// Settles a failed round by the provider's error policy: what time mends (throttling, an
/// outage, something not visible yet, a dependency still going away) is waited out as the
/// policy says, through [`Env::pause`]; anything else fails the property.
async fn after_error(env: &Env, e: provider::Error) -> Result<(), Failure> {
    match provider::error::error_policy(&e) {
        Action::Requeue(after) => {
            env.pause(after).await;
            Ok(())
        }
        Action::Fail | Action::Ignore => Err(e.into()),
    }
}

/// One more reconcile of a cluster that is up, once what AWS shows has settled
/// ([`Env::settle`]): retried only where the error policy says time mends the failure (a
/// throttled or failed call), so that the calls it makes are those of a steady state.
pub async fn reconcile_settled(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
) -> Result<provider::Outcome, Failure> {
    env.settle().await;
    let a = ClusterActuator::new(clients.clone());
    for _ in 0..ROUNDS {
        match a.reconcile(cluster).await {
            Ok(o) => return Ok(o),
            Err(e) => after_error(env, e).await?,
        }
    }
    Err(Failure::Check("reconcile kept failing".into()))
}

/// Reconciles until done.
pub async fn up(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
) -> Result<provider::Outcome, Failure> {
    let a = ClusterActuator::new(clients.clone());
    let mut waiting = Vec::new();
    for _ in 0..ROUNDS {
        match a.reconcile(cluster).await {
            // The status says ready exactly when nothing is pending: a controller (and
            // `capa status`) reads it.
            Ok(o) if o.status.ready != o.is_done() => {
                return Err(Failure::Check(format!(
                    "the status says ready={} while waiting for {:?}",
                    o.status.ready, o.waiting
                )));
            }
            // Its conditions say the same, step by step: all ready when done, else at least
            // one not ready, with its reason.
            Ok(o)
                if o.status
                    .conditions
                    .iter()
                    .any(|c| c.ready != c.reason.is_empty())
                    || o.status.conditions.iter().all(|c| c.ready) != o.is_done() =>
            {
                return Err(Failure::Check(format!(
                    "the conditions {:?} do not match what the reconcile waits for: {:?}",
                    o.status.conditions, o.waiting
                )));
            }
            Ok(o) if o.is_done() => return Ok(o),
            Ok(o) => {
                env.pause(o.requeue_after().unwrap_or_default()).await;
                waiting = o.waiting;
            }
            Err(e) => after_error(env, e).await?,
        }
    }
    Err(Failure::Check(format!(
        "reconcile did not finish; still waiting for: {}",
        waiting.join("; ")
    )))
}

/// The provider's plan (`capa plan`, a dry run) of `cluster` in whatever state the target is:
/// retried only where the error policy says time mends the failure; it must make no
/// mutating call, and, when `converged`, list nothing to do.
pub async fn plan(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
    converged: bool,
) -> Result<provider::Outcome, Failure> {
    let a = ClusterActuator::new(clients.clone());
    let before = clients.calls.mutating();
    let mut planned = None;
    for _ in 0..ROUNDS {
        match a.plan(cluster).await {
            Ok(o) => {
                planned = Some(o);
                break;
            }
            Err(e) => after_error(env, e).await?,
        }
    }
    let o = planned.ok_or_else(|| Failure::Check("plan kept failing".into()))?;
    let made = clients.calls.mutating() - before;
    ensure(made == 0, || {
        format!(
            "the plan made {made} mutating calls: {:?}",
            clients.calls.by_operation()
        )
    })?;
    ensure(!converged || o.planned.is_empty(), || {
        format!("the plan of a converged cluster lists {:?}", o.planned)
    })?;
    ensure(!o.status.ready, || {
        "a plan reported the cluster ready".to_string()
    })?;
    Ok(o)
}

/// Deletes until done.
pub async fn down(env: &Env, clients: &Clients, cluster: &Cluster) -> Result<(), Failure> {
    let a = ClusterActuator::new(clients.clone());
    let mut waiting = Vec::new();
    for _ in 0..ROUNDS {
        match a.delete(cluster).await {
            Ok(o) if o.is_done() => return Ok(()),
            Ok(o) => {
                env.pause(o.requeue_after().unwrap_or_default()).await;
                waiting = o.waiting;
            }
            Err(e) => after_error(env, e).await?,
        }
    }
    Err(Failure::Check(format!(
        "delete did not finish; still waiting for: {}",
        waiting.join("; ")
    )))
}

/// Creates every machine until running.
pub async fn create_machines(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
    machines: &[Machine],
) -> Result<Vec<MachineStatus>, Failure> {
    create_machines_from(env, clients, cluster, machines, &[]).await
}

/// Creates every machine until running, starting from the statuses a controller recorded
/// (the `i`-th machine's, when there is one). The first round creates them all at once, as
/// `capa up` does ([`MachineActuator::create_all`]: one outcome per machine, in order); then
/// each machine not done is created again until it is.
pub async fn create_machines_from(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
    machines: &[Machine],
    recorded: &[MachineStatus],
) -> Result<Vec<MachineStatus>, Failure> {
    let m = env.machine_actuator(clients.clone());
    let mut statuses: Vec<Option<MachineStatus>> = (0..machines.len())
        .map(|i| recorded.get(i).cloned())
        .collect();
    let mut done = vec![false; machines.len()];
    let batch: Vec<(&Machine, Option<&MachineStatus>)> = machines
        .iter()
        .zip(&statuses)
        .map(|(mac, st)| (mac, st.as_ref()))
        .collect();
    match m.create_all(cluster, &batch).await {
        Ok(outcomes) => {
            ensure(outcomes.len() == machines.len(), || {
                format!(
                    "create_all of {} machines answered {} outcomes",
                    machines.len(),
                    outcomes.len()
                )
            })?;
            for (i, o) in outcomes.into_iter().enumerate() {
                done[i] = o.is_done();
                if o.status.is_some() {
                    statuses[i] = o.status;
                }
            }
        }
        Err(e) => after_error(env, e).await?,
    }
    let mut out = Vec::new();
    for (i, mac) in machines.iter().enumerate() {
        let mut status = statuses[i].take();
        for _ in 0..ROUNDS {
            if done[i] {
                break;
            }
            match m.create(cluster, mac, status.as_ref()).await {
                Ok(o) => {
                    status = o.status.clone();
                    if o.is_done() {
                        done[i] = true;
                        break;
                    }
                    env.pause(o.requeue_after().unwrap_or_default()).await;
                }
                Err(e) => after_error(env, e).await?,
            }
        }
        ensure(done[i], || {
            format!("machine {} did not come up", mac.metadata.name)
        })?;
        out.push(status.unwrap_or_default());
    }
    Ok(out)
}

/// Deletes every machine, each by its status when known (as a controller keeps it).
pub async fn delete_machines(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
    machines: &[Machine],
    statuses: &[MachineStatus],
) -> Result<(), Failure> {
    let m = env.machine_actuator(clients.clone());
    for (i, mac) in machines.iter().enumerate() {
        let mut done = false;
        for _ in 0..ROUNDS {
            match m.delete(cluster, mac, statuses.get(i)).await {
                Ok(_) => {
                    done = true;
                    break;
                }
                Err(e) => after_error(env, e).await?,
            }
        }
        ensure(done, || {
            format!("machine {} was not deleted", mac.metadata.name)
        })?;
    }
    Ok(())
}

/// A case made concrete: its pre-existing resources, its cluster and machines.
pub struct Prepared {
    /// What was created beforehand.
    pub existing: Existing,
    /// The origin tag value of the pre-existing resources.
    pub origin: String,
    /// The cluster.
    pub cluster: Cluster,
    /// Its machines.
    pub machines: Vec<Machine>,
}

/// Creates the case's pre-existing resources and its specs.
pub async fn prepare(env: &Env, case: &Case, suffix: &str) -> Result<Prepared, Failure> {
    let origin = format!("{}-{suffix}", env.prefix);
    let existing = world::create_setup(env, &case.setup(), &origin).await?;
    let cluster = world::cluster(env, &origin, &case.cluster_spec(&existing))?;
    let zones = case.cluster_zones(env, &cluster)?;
    let machines = world::machines(env, &cluster, &case.machine_decls(&zones))?;
    Ok(Prepared {
        existing,
        origin,
        cluster,
        machines,
    })
}

fn expect_census(what: &str, got: &Census, want: &Census) -> Result<(), Failure> {
    ensure(got == want, || {
        format!("{what}: the target holds {got:?}, expected {want:?}")
    })
}

/// Property 1.
pub async fn idempotence(env: &Env, case: &Case) -> Result<Report, Failure> {
    let p = prepare(env, case, "idem").await?;
    let c = &env.clients;
    let before = plan(env, c, &p.cluster, false).await?;
    ensure(!before.planned.is_empty(), || {
        "the plan of a cluster not made yet lists nothing to do".to_string()
    })?;
    let first = up(env, c, &p.cluster).await?;
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    env.topology(&p.cluster).await?;
    // What the cloud controller manager makes is not the provider's to change.
    let services = case.service_names(&p.cluster.metadata.name);
    for s in &services {
        crate::service_lb::make(env, &p.cluster, s, true).await?;
    }
    let calls = c.calls.total();
    c.calls.reset();
    env.settle().await;
    plan(env, c, &p.cluster, true).await?;
    let again = reconcile_settled(env, c, &p.cluster).await?;
    ensure(c.calls.mutating() == 0, || {
        format!(
            "a second reconcile made mutating calls: {:?}",
            c.calls.by_operation()
        )
    })?;
    ensure(again.status == first.status, || {
        format!("status changed: {:?} -> {:?}", first.status, again.status)
    })?;
    let m = env.machine_actuator(c.clone());
    for (mac, st) in p.machines.iter().zip(&statuses) {
        // Again as a controller would: an error the policy retries (a 500 on a bad day) is
        // tried again; only the answer counts.
        let mut again = None;
        for _ in 0..ROUNDS {
            match m.create(&p.cluster, mac, Some(st)).await {
                Ok(o) => {
                    again = Some(o);
                    break;
                }
                Err(e) => after_error(env, e).await?,
            }
        }
        let o = again.ok_or_else(|| {
            Failure::Check(format!("machine {} never answered", mac.metadata.name))
        })?;
        ensure(
            o.status.as_ref().map(|s| &s.instance_id) == Some(&st.instance_id),
            || format!("machine {} changed instance", mac.metadata.name),
        )?;
    }
    ensure(c.calls.mutating() == 0, || {
        format!(
            "a second machine create made mutating calls: {:?}",
            c.calls.by_operation()
        )
    })?;
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    down(env, c, &p.cluster).await?;
    Ok(Report { calls })
}

/// Property 7: converges on a bad day. The case is built twice, on `calm` and on `bad` (an
/// in-process fake playing a bad day, such as the `storm` profile): the bad day ends with the
/// same owned resources by kind as the calm one, the pre-existing ones describe identically,
/// it takes at most 3 times the calm number of calls, and its delete leaves nothing owned.
pub async fn bad_day(calm: &Env, bad: &Env, case: &Case) -> Result<Report, Failure> {
    let calm_calls = {
        let p = prepare(calm, case, "calm").await?;
        let c = &calm.clients;
        c.calls.reset();
        up(calm, c, &p.cluster).await?;
        create_machines(calm, c, &p.cluster, &p.machines).await?;
        let calls = c.calls.total();
        let got = calm.census(&p.cluster.metadata.name).await?;
        expect_census("on a calm day", &got, &case.expected())?;
        calm.topology(&p.cluster).await?;
        calls
    };
    let p = prepare(bad, case, "bad").await?;
    let c = &bad.clients;
    let lb = p.existing.lb.as_deref();
    let before = bad.snapshot(&p.origin, lb).await?;
    c.calls.reset();
    up(bad, c, &p.cluster).await?;
    let statuses = create_machines(bad, c, &p.cluster, &p.machines).await?;
    let calls = c.calls.total();
    let got = bad.census(&p.cluster.metadata.name).await?;
    expect_census("on a bad day", &got, &case.expected())?;
    bad.topology(&p.cluster).await?;
    ensure(calls <= 3 * calm_calls, || {
        format!(
            "the bad day took {calls} calls, more than 3 times the calm day's {calm_calls}: {:?}",
            c.calls.by_operation()
        )
    })?;
    delete_machines(bad, c, &p.cluster, &p.machines, &statuses).await?;
    down(bad, c, &p.cluster).await?;
    let left = bad.census(&p.cluster.metadata.name).await?;
    expect_census("after a delete on a bad day", &left, &Census::new())?;
    ensure(bad.snapshot(&p.origin, lb).await? == before, || {
        "a pre-existing resource changed on a bad day".into()
    })?;
    Ok(Report { calls })
}

/// Property 2: cut the reconcile (and the machine creates) after the k-th change.
pub async fn crash_convergence(env: &Env, case: &Case, k: usize) -> Result<Report, Failure> {
    let p = prepare(env, case, "crash").await?;
    let c = &env.clients;
    let cut = crashing(c, k);
    // The cut run may fail or, with few changes, finish: both are fine.
    let _ = ClusterActuator::new(cut).reconcile(&p.cluster).await;
    plan(env, c, &p.cluster, false).await?;
    up(env, c, &p.cluster).await?;
    if !p.machines.is_empty() {
        let cut = crashing(c, k.min(3));
        let m = env.machine_actuator(cut);
        for mac in &p.machines {
            let _ = m.create(&p.cluster, mac, None).await;
        }
    }
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    let got = env.census(&p.cluster.metadata.name).await?;
    expect_census(
        &format!("after a crash at change {k} and a resume"),
        &got,
        &case.expected(),
    )?;
    env.topology(&p.cluster).await?;
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    down(env, c, &p.cluster).await?;
    let left = env.census(&p.cluster.metadata.name).await?;
    expect_census("after delete", &left, &Census::new())?;
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// Property 3.
pub async fn preexisting_untouched(env: &Env, case: &Case) -> Result<Report, Failure> {
    let p = prepare(env, case, "pre").await?;
    let c = &env.clients;
    let lb = p.existing.lb.as_deref();
    let before = env.snapshot(&p.origin, lb).await?;
    up(env, c, &p.cluster).await?;
    ensure(env.snapshot(&p.origin, lb).await? == before, || {
        "a pre-existing resource changed during reconcile".into()
    })?;
    up(env, c, &p.cluster).await?;
    ensure(env.snapshot(&p.origin, lb).await? == before, || {
        "a pre-existing resource changed during a second reconcile".into()
    })?;
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    env.topology(&p.cluster).await?;
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    down(env, c, &p.cluster).await?;
    let after = env.snapshot(&p.origin, lb).await?;
    ensure(after == before, || {
        format!("a pre-existing resource changed by delete:\nbefore {before}\nafter  {after}")
    })?;
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// Property 4: delete, cut after its k-th change, rerun: nothing owned remains.
pub async fn delete_completeness(env: &Env, case: &Case, k: usize) -> Result<Report, Failure> {
    let p = prepare(env, case, "del").await?;
    let c = &env.clients;
    up(env, c, &p.cluster).await?;
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    let services = case.service_names(&p.cluster.metadata.name);
    for s in &services {
        crate::service_lb::make(env, &p.cluster, s, true).await?;
    }
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    let cut = crashing(c, k);
    let _ = ClusterActuator::new(cut).delete(&p.cluster).await;
    down(env, c, &p.cluster).await?;
    let left = env.census(&p.cluster.metadata.name).await?;
    expect_census(
        &format!("after a delete cut at change {k} and rerun"),
        &left,
        &Census::new(),
    )?;
    for s in &services {
        ensure(
            !crate::service_lb::present(env, &p.cluster, s).await?,
            || format!("the Service load balancer {s} outlived the cluster's delete"),
        )?;
    }
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// Property 5: clusters side by side, and two in one pre-existing VPC.
pub async fn isolation(env: &Env) -> Result<Report, Failure> {
    let c = &env.clients;
    let one_zone = Case {
        machines: 1,
        ..Case::default()
    };
    let a = prepare(env, &one_zone, "a").await?;
    let b = prepare(
        env,
        &Case {
            cidr: "10.128.0.0/17",
            ..one_zone.clone()
        },
        "b",
    )
    .await?;
    // Two clusters sharing one pre-existing VPC, each with its own subnets.
    let shared = world::create_setup(
        env,
        &scenarios::Setup {
            vpc: Some("172.16.0.0/16".into()),
            gateway: true,
            ..Default::default()
        },
        &format!("{}-shared", env.prefix),
    )
    .await?;
    let vpc = shared.vpc.clone().unwrap_or_default();
    let igw = shared.igw.clone().unwrap_or_default();
    let in_shared = |n: u8| -> Result<Cluster, Failure> {
        let spec: serde_yaml_ng::Value = serde_yaml_ng::from_str(&format!(
            "region: {r}\nnetwork:\n  vpc: {{id: {vpc}}}\n  internetGatewayId: {igw}\n  subnets:\n    - {{cidrBlock: 172.16.{p}.0/24, availabilityZone: {r}a, public: true}}\n    - {{cidrBlock: 172.16.{q}.0/24, availabilityZone: {r}a}}\n  natGatewayPerZone: true\n",
            r = env.region,
            p = n * 10,
            q = n * 10 + 1
        ))
        .map_err(|e| Failure::Check(e.to_string()))?;
        world::cluster(env, &format!("{}-s{n}", env.prefix), &spec)
    };
    let s1 = in_shared(1)?;
    let s2 = in_shared(2)?;
    for cl in [&a.cluster, &b.cluster, &s1, &s2] {
        up(env, c, cl).await?;
    }
    let statuses_a = create_machines(env, c, &a.cluster, &a.machines).await?;
    let statuses_b = create_machines(env, c, &b.cluster, &b.machines).await?;
    let b_before = env.census(&b.cluster.metadata.name).await?;
    let s2_before = env.census(&s2.metadata.name).await?;
    expect_census("cluster b", &b_before, &one_zone.expected())?;
    // Deleting a and s1 leaves b and s2 whole, and their reconcile unchanged.
    delete_machines(env, c, &a.cluster, &a.machines, &statuses_a).await?;
    down(env, c, &a.cluster).await?;
    down(env, c, &s1).await?;
    expect_census(
        "cluster b after a's delete",
        &env.census(&b.cluster.metadata.name).await?,
        &b_before,
    )?;
    expect_census(
        "cluster s2 after s1's delete",
        &env.census(&s2.metadata.name).await?,
        &s2_before,
    )?;
    c.calls.reset();
    ClusterActuator::new(c.clone())
        .reconcile(&b.cluster)
        .await?;
    ClusterActuator::new(c.clone()).reconcile(&s2).await?;
    ensure(c.calls.mutating() == 0, || {
        format!("the survivors needed changes: {:?}", c.calls.by_operation())
    })?;
    delete_machines(env, c, &b.cluster, &b.machines, &statuses_b).await?;
    down(env, c, &b.cluster).await?;
    down(env, c, &s2).await?;
    for cl in [&a.cluster, &b.cluster, &s1, &s2] {
        expect_census(
            &format!("{} after delete", cl.metadata.name),
            &env.census(&cl.metadata.name).await?,
            &Census::new(),
        )?;
    }
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// Property 6.
pub async fn machines(env: &Env, case: &Case, k: usize) -> Result<Report, Failure> {
    let p = prepare(env, case, "mach").await?;
    let c = &env.clients;
    up(env, c, &p.cluster).await?;
    let m = env.machine_actuator(c.clone());
    let cut = crashing(c, k);
    let crashing_m = env.machine_actuator(cut);
    for mac in &p.machines {
        let _ = crashing_m.create(&p.cluster, mac, None).await;
    }
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    create_machines(env, c, &p.cluster, &p.machines).await?;
    let got = env.census(&p.cluster.metadata.name).await?;
    ensure(
        got.get("machine").copied().unwrap_or(0) == p.machines.len(),
        || format!("{} machines, the target holds {got:?}", p.machines.len()),
    )?;
    env.topology(&p.cluster).await?;
    for (mac, st) in p.machines.iter().zip(&statuses) {
        let e = m.exists(&p.cluster, mac, Some(st)).await?;
        ensure(e.exists, || {
            format!("{} should exist: {e:?}", mac.metadata.name)
        })?;
        let d = c
            .ec2
            .describe_instances()
            .instance_ids(&st.instance_id)
            .send()
            .await
            .map_err(crate::aws_failure("DescribeInstances"))?;
        let state = d
            .reservations()
            .iter()
            .flat_map(|r| r.instances())
            .next()
            .and_then(|i| {
                i.state()
                    .and_then(|s| s.name())
                    .map(|n| n.as_str().to_string())
            });
        ensure(state.as_deref() == e.state.as_deref(), || {
            format!("exists says {:?}, the target {state:?}", e.state)
        })?;
    }
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    for (mac, st) in p.machines.iter().zip(&statuses) {
        let e = m.exists(&p.cluster, mac, Some(st)).await?;
        ensure(!e.exists, || {
            format!("{} still exists after delete: {e:?}", mac.metadata.name)
        })?;
    }
    down(env, c, &p.cluster).await?;
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// Cleans up after a case on a shared target (a no-op for the in-process fake, which goes
/// with the case).
pub async fn cleanup(env: &Env) -> Result<(), Failure> {
    if env.fake().is_some() {
        return Ok(());
    }
    crate::sweep::sweep(
        &env.clients,
        &crate::sweep::Selector::Run(env.run_id.clone()),
        env.target.poll(),
        Duration::from_secs(1800),
    )
    .await
    .map(|_| ())
}

/// The deletes [`delete_carries_on`] refuses in turn: service, action, the refusal's code
/// and status, and the census kinds that may remain when it is refused (the refused
/// resource's kind and what cannot go while it stays: its subnet, its VPC, the gateway its
/// public address needs, its groups).
const REFUSED_DELETES: &[(&str, &str, &str, u16, &[&str])] = &[
    (
        "ec2",
        "DeleteNatGateway",
        "UnauthorizedOperation",
        403,
        &[
            "natGateway",
            "elasticIp",
            "subnet",
            "vpc",
            "internetGateway",
        ],
    ),
    (
        "ec2",
        "ReleaseAddress",
        "UnauthorizedOperation",
        403,
        &["elasticIp"],
    ),
    (
        "ec2",
        "DeleteRouteTable",
        "UnauthorizedOperation",
        403,
        &["routeTable", "vpc"],
    ),
    (
        "ec2",
        "DisassociateRouteTable",
        "UnauthorizedOperation",
        403,
        &["routeTable", "subnet", "vpc"],
    ),
    (
        "ec2",
        "DeleteSecurityGroup",
        "UnauthorizedOperation",
        403,
        &["securityGroup", "vpc"],
    ),
    (
        "ec2",
        "RevokeSecurityGroupIngress",
        "UnauthorizedOperation",
        403,
        &["securityGroup", "vpc"],
    ),
    (
        "ec2",
        "TerminateInstances",
        "UnauthorizedOperation",
        403,
        &[
            "bastion",
            "volume",
            "subnet",
            "securityGroup",
            "vpc",
            "internetGateway",
        ],
    ),
    (
        "elasticloadbalancing",
        "DeleteLoadBalancer",
        "AccessDenied",
        403,
        &[
            "loadBalancer",
            "subnet",
            "securityGroup",
            "vpc",
            "internetGateway",
        ],
    ),
    (
        "ec2",
        "DeleteSubnet",
        "UnauthorizedOperation",
        403,
        &["subnet", "vpc"],
    ),
    (
        "ec2",
        "DetachInternetGateway",
        "UnauthorizedOperation",
        403,
        &["internetGateway", "vpc"],
    ),
    ("ec2", "DeleteVpc", "UnauthorizedOperation", 403, &["vpc"]),
];

/// How many kinds of delete [`delete_carries_on`] refuses in turn (its `k` wraps around).
pub const REFUSED_DELETE_KINDS: usize = REFUSED_DELETES.len();

/// Property 8: delete carries on. Once the cluster is up and its machines are gone, one kind
/// of delete (the `k`-th of [`REFUSED_DELETES`]) is refused for good, as AWS refuses a call
/// the credentials may not make. Delete must report it, and leave only what could not go
/// while the refused resource stays; once the refusal is lifted, a delete finishes the job.
/// In-process only (it steers the fake); elsewhere it passes vacuously.
pub async fn delete_carries_on(env: &Env, case: &Case, k: usize) -> Result<Report, Failure> {
    let Some(fake) = env.fake() else {
        return Ok(Report { calls: 0 });
    };
    let p = prepare(env, case, "carry").await?;
    let c = &env.clients;
    up(env, c, &p.cluster).await?;
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    let (service, action, code, status, may_remain) = REFUSED_DELETES[k % REFUSED_DELETES.len()];
    let before = fake.fake().calls().len();
    fake.fake().with_faults(|f| {
        f.add(fakeaws::sim::faults::Rule {
            on: fakeaws::sim::faults::Match {
                service: Some(service.into()),
                action: Some(action.into()),
                ..Default::default()
            },
            when: fakeaws::sim::faults::Trigger::Nth {
                n: 1,
                times: u64::MAX,
            },
            effect: fakeaws::sim::faults::Effect::Error {
                code: code.into(),
                status,
                message: format!("You are not authorized to perform {action}."),
            },
        });
    });
    // As a controller does: a failed delete is tried again later, a few times.
    let a = ClusterActuator::new(c.clone());
    let mut reported = None;
    let mut failures = 0;
    for _ in 0..ROUNDS {
        match a.delete(&p.cluster).await {
            Ok(o) if o.is_done() => break,
            Ok(o) => env.pause(o.requeue_after().unwrap_or_default()).await,
            Err(e) => {
                reported = Some(e.to_string());
                failures += 1;
                if failures == 8 {
                    break;
                }
                match provider::error::error_policy(&e) {
                    Action::Requeue(after) => env.pause(after).await,
                    Action::Fail | Action::Ignore => env.pause(Duration::from_secs(30)).await,
                }
            }
        }
    }
    let refused = fake.fake().calls()[before..]
        .iter()
        .any(|call| call.action == action && call.error.as_deref() == Some(code));
    // The census calms the fake, which lifts the refusal.
    let left = env.census(&p.cluster.metadata.name).await?;
    if refused {
        ensure(
            reported.as_deref().is_some_and(|r| r.contains(code)),
            || format!("{action} was refused with {code}, and delete reported {reported:?}"),
        )?;
        let stray: Vec<&String> = left
            .keys()
            .filter(|kind| !may_remain.contains(&kind.as_str()))
            .collect();
        ensure(stray.is_empty(), || {
            format!(
                "with {action} refused, delete gave up on what does not depend on it: \
                 {stray:?} remain ({left:?})"
            )
        })?;
    } else {
        expect_census(
            &format!("after a delete ({action}, never called, was to be refused)"),
            &left,
            &Census::new(),
        )?;
    }
    down(env, c, &p.cluster).await?;
    let left = env.census(&p.cluster.metadata.name).await?;
    expect_census("after the refusal was lifted", &left, &Census::new())?;
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// The answers that mean "you did not wait for a dependency": a release of an address still
/// in use, a delete of something still depended on, an action on an instance in the wrong
/// state.
pub const DEPENDENCY_CODES: &[&str] = &[
    "DependencyViolation",
    "InvalidIPAddress.InUse",
    "IncorrectInstanceState",
    "InvalidInstanceID.NotFound",
    "InvalidState",
    "ResourceInUse",
];

/// What a create makes and the one call that deletes it.
const MADE_AND_DELETED: &[(&str, &str)] = &[
    ("RunInstances", "TerminateInstances"),
    ("CreateNatGateway", "DeleteNatGateway"),
    ("AllocateAddress", "ReleaseAddress"),
    ("CreateSubnet", "DeleteSubnet"),
    ("CreateRouteTable", "DeleteRouteTable"),
    ("CreateInternetGateway", "DeleteInternetGateway"),
    ("CreateSecurityGroup", "DeleteSecurityGroup"),
    ("CreateLoadBalancer", "DeleteLoadBalancer"),
    ("CreateVpc", "DeleteVpc"),
];

/// Property 9: dependency order. Every state change takes a while (a NAT gateway 90 s to be
/// available or gone, an instance 40 s to run or terminate, a registration 30 s to pass its
/// health check, a deleted load balancer's node interfaces 120 s to go), and the provider builds, adds machines, removes them and deletes: no call
/// of the provider's may be refused with one of [`DEPENDENCY_CODES`] (it must wait for what
/// it depends on, not try and fail); on a day that loses no answer, each resource it made
/// is deleted by one successful call (waiting for what is going away, not deleting it
/// again). In-process only (it steers the fake's clock).
pub async fn dependency_order(env: &Env, case: &Case) -> Result<Report, Failure> {
    use fakeaws::sim::transitions::Subject;
    let Some(fake) = env.fake() else {
        return Ok(Report { calls: 0 });
    };
    // The case's pre-existing resources are set up first, as their owner made them.
    let p = prepare(env, case, "deps").await?;
    fake.fake().with_region(&env.region, |r| {
        r.transitions
            .set_delay(Subject::NatGateway, Duration::from_secs(90));
        r.transitions
            .set_delay(Subject::Instance, Duration::from_secs(40));
        r.transitions
            .set_delay(Subject::LoadBalancerRegistration, Duration::from_secs(30));
        // A deleted load balancer's node interfaces linger, holding subnets and groups.
        r.transitions
            .set_delay(Subject::LoadBalancerInterface, Duration::from_secs(120));
    });
    let c = &env.clients;
    let start = fake.fake().calls().len();
    up(env, c, &p.cluster).await?;
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    // A machine's create is done when its instance runs, not when it was launched.
    for st in &statuses {
        let d = c
            .ec2
            .describe_instances()
            .instance_ids(&st.instance_id)
            .send()
            .await
            .map_err(crate::aws_failure("DescribeInstances"))?;
        let state: Vec<&str> = d
            .reservations()
            .iter()
            .flat_map(|r| r.instances())
            .filter_map(|i| i.state().and_then(|s| s.name()).map(|n| n.as_str()))
            .collect();
        ensure(state == ["running"], || {
            format!(
                "machine create was done with instance {} {state:?}",
                st.instance_id
            )
        })?;
    }
    delete_machines(env, c, &p.cluster, &p.machines, &statuses).await?;
    down(env, c, &p.cluster).await?;
    let log = fake.fake().calls();
    // On a day where no answer is lost and nothing deleted stays listed, whatever the provider
    // made it deletes with one call: a delete repeated while its resource is still going away
    // (a NAT gateway deleting, an instance shutting down) is a call AWS did not need.
    if env.profile.rules.is_empty() && env.profile.consistency.delete.is_empty() {
        let done = |action: &str| {
            log[start..]
                .iter()
                .filter(|c| c.action == action && c.error.is_none())
                .count()
        };
        for (made, gone) in MADE_AND_DELETED {
            let (m, g) = (done(made), done(gone));
            ensure(m == g, || {
                format!("{m} successful {made} calls and {g} successful {gone} calls")
            })?;
        }
    }
    // A describe that does not find what was just made is AWS lagging (the provider waits
    // it out); a refused action is the provider not waiting.
    let refused: Vec<String> = log[start..]
        .iter()
        .filter(|call| call.is_mutating())
        .filter_map(|call| {
            let code = call.error.as_deref()?;
            DEPENDENCY_CODES
                .contains(&code)
                .then(|| format!("{} {code}", call.action))
        })
        .collect();
    ensure(refused.is_empty(), || {
        format!("calls refused for a dependency the provider should have waited for: {refused:?}")
    })?;
    let left = env.census(&p.cluster.metadata.name).await?;
    expect_census("after delete", &left, &Census::new())?;
    Ok(Report {
        calls: c.calls.total(),
    })
}
