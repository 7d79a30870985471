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

use std::time::Duration;

use provider::machine::MachineStatus;
use provider::spec::{Cluster, Machine};
use provider::{Clients, ClusterActuator, MachineActuator};

use crate::census::{Census, census, snapshot};
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

const ROUNDS: usize = 40;

/// Reconciles until done.
pub async fn up(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
) -> Result<provider::Outcome, Failure> {
    let a = ClusterActuator::new(clients.clone());
    for _ in 0..ROUNDS {
        let o = a.reconcile(cluster).await?;
        if o.is_done() {
            return Ok(o);
        }
        tokio::time::sleep(env.target.poll()).await;
    }
    Err(Failure::Check("reconcile did not finish".into()))
}

/// Deletes until done.
pub async fn down(env: &Env, clients: &Clients, cluster: &Cluster) -> Result<(), Failure> {
    let a = ClusterActuator::new(clients.clone());
    for _ in 0..ROUNDS {
        if a.delete(cluster).await?.is_done() {
            return Ok(());
        }
        tokio::time::sleep(env.target.poll()).await;
    }
    Err(Failure::Check("delete did not finish".into()))
}

/// Creates every machine until running.
pub async fn create_machines(
    env: &Env,
    clients: &Clients,
    cluster: &Cluster,
    machines: &[Machine],
) -> Result<Vec<MachineStatus>, Failure> {
    let m = MachineActuator::new(clients.clone());
    let mut out = Vec::new();
    for mac in machines {
        let mut status = None;
        let mut done = false;
        for _ in 0..ROUNDS {
            let o = m.create(cluster, mac, status.as_ref()).await?;
            status = o.status.clone();
            if o.is_done() {
                done = true;
                break;
            }
            tokio::time::sleep(env.target.poll()).await;
        }
        ensure(done, || {
            format!("machine {} did not come up", mac.metadata.name)
        })?;
        out.push(status.unwrap_or_default());
    }
    Ok(out)
}

/// Deletes every machine.
pub async fn delete_machines(
    clients: &Clients,
    cluster: &Cluster,
    machines: &[Machine],
) -> Result<(), Failure> {
    let m = MachineActuator::new(clients.clone());
    for mac in machines {
        m.delete(cluster, mac, None).await?;
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
    let machines = world::machines(env, &cluster, &case.machine_decls(&env.region))?;
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
    let first = up(env, c, &p.cluster).await?;
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    let calls = c.calls.total();
    c.calls.reset();
    let again = ClusterActuator::new(c.clone())
        .reconcile(&p.cluster)
        .await?;
    ensure(c.calls.mutating() == 0, || {
        format!(
            "a second reconcile made mutating calls: {:?}",
            c.calls.by_operation()
        )
    })?;
    ensure(again.status == first.status, || {
        format!("status changed: {:?} -> {:?}", first.status, again.status)
    })?;
    let m = MachineActuator::new(c.clone());
    for (mac, st) in p.machines.iter().zip(&statuses) {
        let o = m.create(&p.cluster, mac, Some(st)).await?;
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
    delete_machines(c, &p.cluster, &p.machines).await?;
    down(env, c, &p.cluster).await?;
    Ok(Report { calls })
}

/// Property 2: cut the reconcile (and the machine creates) after the k-th change.
pub async fn crash_convergence(env: &Env, case: &Case, k: usize) -> Result<Report, Failure> {
    let p = prepare(env, case, "crash").await?;
    let c = &env.clients;
    let cut = crashing(c, k);
    // The cut run may fail or, with few changes, finish: both are fine.
    let _ = ClusterActuator::new(cut).reconcile(&p.cluster).await;
    up(env, c, &p.cluster).await?;
    if !p.machines.is_empty() {
        let cut = crashing(c, k.min(3));
        let m = MachineActuator::new(cut);
        for mac in &p.machines {
            let _ = m.create(&p.cluster, mac, None).await;
        }
    }
    create_machines(env, c, &p.cluster, &p.machines).await?;
    let got = census(c, &p.cluster.metadata.name).await?;
    expect_census(
        &format!("after a crash at change {k} and a resume"),
        &got,
        &case.expected(),
    )?;
    delete_machines(c, &p.cluster, &p.machines).await?;
    down(env, c, &p.cluster).await?;
    let left = census(c, &p.cluster.metadata.name).await?;
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
    let before = snapshot(c, &p.origin, lb).await?;
    up(env, c, &p.cluster).await?;
    ensure(snapshot(c, &p.origin, lb).await? == before, || {
        "a pre-existing resource changed during reconcile".into()
    })?;
    up(env, c, &p.cluster).await?;
    ensure(snapshot(c, &p.origin, lb).await? == before, || {
        "a pre-existing resource changed during a second reconcile".into()
    })?;
    create_machines(env, c, &p.cluster, &p.machines).await?;
    delete_machines(c, &p.cluster, &p.machines).await?;
    down(env, c, &p.cluster).await?;
    let after = snapshot(c, &p.origin, lb).await?;
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
    create_machines(env, c, &p.cluster, &p.machines).await?;
    delete_machines(c, &p.cluster, &p.machines).await?;
    let cut = crashing(c, k);
    let _ = ClusterActuator::new(cut).delete(&p.cluster).await;
    down(env, c, &p.cluster).await?;
    let left = census(c, &p.cluster.metadata.name).await?;
    expect_census(
        &format!("after a delete cut at change {k} and rerun"),
        &left,
        &Census::new(),
    )?;
    Ok(Report {
        calls: c.calls.total(),
    })
}

/// Property 5: clusters side by side, and two in one pre-existing VPC.
pub async fn isolation(env: &Env) -> Result<Report, Failure> {
    let c = &env.clients;
    let one_zone = Case {
        zones: 1,
        cidr: "10.0.0.0/16",
        bastion: false,
        internal: false,
        machines: 1,
        pre: Default::default(),
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
    create_machines(env, c, &a.cluster, &a.machines).await?;
    create_machines(env, c, &b.cluster, &b.machines).await?;
    let b_before = census(c, &b.cluster.metadata.name).await?;
    let s2_before = census(c, &s2.metadata.name).await?;
    expect_census("cluster b", &b_before, &one_zone.expected())?;
    // Deleting a and s1 leaves b and s2 whole, and their reconcile unchanged.
    delete_machines(c, &a.cluster, &a.machines).await?;
    down(env, c, &a.cluster).await?;
    down(env, c, &s1).await?;
    expect_census(
        "cluster b after a's delete",
        &census(c, &b.cluster.metadata.name).await?,
        &b_before,
    )?;
    expect_census(
        "cluster s2 after s1's delete",
        &census(c, &s2.metadata.name).await?,
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
    delete_machines(c, &b.cluster, &b.machines).await?;
    down(env, c, &b.cluster).await?;
    down(env, c, &s2).await?;
    for cl in [&a.cluster, &b.cluster, &s1, &s2] {
        expect_census(
            &format!("{} after delete", cl.metadata.name),
            &census(c, &cl.metadata.name).await?,
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
    let m = MachineActuator::new(c.clone());
    let cut = crashing(c, k);
    let crashing_m = MachineActuator::new(cut);
    for mac in &p.machines {
        let _ = crashing_m.create(&p.cluster, mac, None).await;
    }
    let statuses = create_machines(env, c, &p.cluster, &p.machines).await?;
    create_machines(env, c, &p.cluster, &p.machines).await?;
    let got = census(c, &p.cluster.metadata.name).await?;
    ensure(
        got.get("machine").copied().unwrap_or(0) == p.machines.len(),
        || format!("{} machines, the target holds {got:?}", p.machines.len()),
    )?;
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
    delete_machines(c, &p.cluster, &p.machines).await?;
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
