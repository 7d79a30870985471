//! Runs one scenario file against a target: creates its setup, then performs its steps in
//! order, checking each expectation by describing what the target holds.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Tag;
use provider::ClusterActuator;
use provider::spec::Cluster;
use scenarios::{LoadBalancerTamper, Presence, Refused, Scenario, Step, Terminated};

use crate::census::Census;
use crate::crash::crashing;
use crate::properties::{create_machines_from, delete_machines, down, plan, reconcile_settled, up};
use crate::target::Env;
use crate::{Failure, aws_failure, ensure, service_lb, world};

/// The error codes the in-process fake answered after the `from`-th call of its log, with
/// how many times (empty on other targets).
fn errors_since(env: &Env, from: usize) -> std::collections::BTreeMap<String, usize> {
    let mut seen = std::collections::BTreeMap::new();
    if let Some(f) = env.fake() {
        for call in f.fake().calls().into_iter().skip(from) {
            if let Some(code) = call.error {
                *seen.entry(code).or_insert(0) += 1;
            }
        }
    }
    seen
}

/// The profile the in-process fake plays for `scenario`: its own `faults`, else the run's.
pub fn profile_for(
    scenario: &Scenario,
    run: &fakeaws::sim::profile::Profile,
) -> Result<fakeaws::sim::profile::Profile, Failure> {
    Ok(scenario
        .profile()
        .map_err(|e| Failure::Check(format!("scenario {}: {e}", scenario.name)))?
        .unwrap_or_else(|| run.clone()))
}

/// What a scenario run did.
#[derive(Debug, Clone, Default)]
pub struct ScenarioReport {
    /// Whether it was skipped: its faults need the in-process fake.
    pub skipped: bool,
    /// Steps performed.
    pub steps: usize,
    /// API calls the provider made.
    pub calls: u64,
}

fn spec_of(
    env: &Env,
    ex: &world::Existing,
    name: &str,
    spec: &serde_yaml_ng::Value,
) -> Result<Cluster, Failure> {
    let text = serde_yaml_ng::to_string(spec).map_err(|e| Failure::Check(e.to_string()))?;
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(&ex.substitute(&text))
        .map_err(|e| Failure::Check(e.to_string()))?;
    world::cluster(env, name, &value)
}

fn error_kind(e: &provider::Error) -> &'static str {
    match e {
        provider::Error::InvalidSpec { .. } => "InvalidSpec",
        provider::Error::Immutable { .. } => "Immutable",
        provider::Error::PreExisting { .. } => "PreExisting",
        provider::Error::Conflict(_) => "Conflict",
        provider::Error::NotVisibleYet(_) => "NotVisibleYet",
        provider::Error::Aws(_) => "Aws",
        provider::Error::Many(_) => "Many",
        provider::Error::UserDataTooLarge { .. } => "UserDataTooLarge",
        provider::Error::NoImage { .. } => "NoImage",
        provider::Error::Bootstrap(_) => "Bootstrap",
    }
}

/// Runs `scenario` in `env`.
pub async fn run(env: &Env, scenario: &Scenario) -> Result<ScenarioReport, Failure> {
    let c = &env.clients;
    let origin = format!(
        "{}-{}",
        env.prefix,
        scenario.name.chars().take(12).collect::<String>()
    )
    .trim_end_matches('-')
    .to_string();
    let ex = world::create_setup(env, &scenario.setup, &origin).await?;
    let name = origin.clone();
    let mut cluster = spec_of(env, &ex, &name, &scenario.cluster)?;
    let decls: Vec<scenarios::MachineDecl> = scenario
        .machines
        .iter()
        .map(|d| scenarios::MachineDecl {
            additional_security_groups: d
                .additional_security_groups
                .iter()
                .map(|g| ex.substitute(g))
                .collect(),
            ..d.clone()
        })
        .collect();
    let mut machines = world::machines(env, &cluster, &decls)?;
    let lb = ex.lb.clone();
    let before = env.snapshot(&origin, lb.as_deref()).await?;
    c.calls.reset();
    let mut report = ScenarioReport::default();
    if scenario.faults.is_some() && env.fake().is_none() {
        // Only the in-process fake is steered; elsewhere the scenario cannot play its day.
        report.skipped = true;
        return Ok(report);
    }
    let log_start = env.fake().map_or(0, |f| f.fake().calls().len());
    // The machines' statuses, as a controller keeps them between steps.
    let mut statuses = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = |what: String| Failure::Check(format!("step {} ({step:?}): {what}", i + 1));
        report.steps += 1;
        match step {
            Step::Reconcile => {
                up(env, c, &cluster).await?;
            }
            Step::ReconcileUnchanged => {
                env.settle().await;
                plan(env, c, &cluster, true)
                    .await
                    .map_err(|e| at(e.to_string()))?;
                let before_calls = c.calls.mutating();
                reconcile_settled(env, c, &cluster).await?;
                let made = c.calls.mutating() - before_calls;
                if made != 0 {
                    return Err(at(format!(
                        "{made} mutating calls: {:?}",
                        c.calls.by_operation()
                    )));
                }
            }
            Step::ReconcileFails(kind) => match up(env, c, &cluster).await {
                Ok(_) => return Err(at(format!("succeeded; expected {kind}"))),
                Err(Failure::Provider(e)) if error_kind(&e) == kind => {}
                Err(e) => return Err(at(format!("{e}; expected {kind}"))),
            },
            Step::ReconcileCutAfter(k) => {
                let cut = crashing(c, *k);
                let _ = ClusterActuator::new(cut).reconcile(&cluster).await;
            }
            Step::CreateMachines => {
                statuses = create_machines_from(env, c, &cluster, &machines, &statuses).await?;
            }
            Step::CreateMachinesFails(kind) => {
                match create_machines_from(env, c, &cluster, &machines, &statuses).await {
                    Ok(_) => return Err(at(format!("succeeded; expected {kind}"))),
                    Err(Failure::Provider(e)) if error_kind(&e) == kind => {}
                    Err(e) => return Err(at(format!("{e}; expected {kind}"))),
                }
            }
            Step::UpdateMachines => {
                let m = env.machine_actuator(c.clone());
                for (mac, st) in machines.iter().zip(&statuses) {
                    m.update(&cluster, mac, Some(st)).await?;
                }
            }
            Step::ChangeMachine(change) => {
                let Some(i) = decls.iter().position(|d| d.name == change.name) else {
                    return Err(at(format!("no machine {} in the scenario", change.name)));
                };
                let mac = &mut machines[i];
                if let Some(groups) = &change.additional_security_groups {
                    mac.spec.additional_security_groups =
                        groups.iter().map(|g| ex.substitute(g)).collect();
                }
                if let Some(size) = change.root_volume_size {
                    mac.spec.root_volume = Some(provider::spec::machine::RootVolume {
                        size,
                        r#type: None,
                        iops: None,
                        throughput: None,
                        encrypted: false,
                        encryption_key: None,
                    });
                }
                let m = env.machine_actuator(c.clone());
                let got = m.update(&cluster, &machines[i], statuses.get(i)).await;
                match (got, &change.expect_error) {
                    (Ok(_), None) => {}
                    (Ok(_), Some(kind)) => {
                        return Err(at(format!("the update succeeded; expected {kind}")));
                    }
                    (Err(e), Some(kind)) if error_kind(&e) == kind => {}
                    (Err(e), _) => return Err(at(format!("the update failed: {e}"))),
                }
            }
            Step::TamperMachineTags(t) => {
                let _calm = env.calm();
                let mut remove = t.remove.clone();
                if t.remove_provider_tags {
                    remove.extend([
                        provider::ownership::cluster_key(&cluster.metadata.name),
                        provider::ownership::ROLE_KEY.to_string(),
                        "Name".to_string(),
                    ]);
                }
                for st in &statuses {
                    if !remove.is_empty() {
                        let keys: Vec<Tag> = remove
                            .iter()
                            .map(|k| Tag::builder().key(k).build())
                            .collect();
                        c.ec2
                            .delete_tags()
                            .resources(&st.instance_id)
                            .set_tags(Some(keys))
                            .send()
                            .await
                            .map_err(aws_failure("DeleteTags"))?;
                    }
                    if !t.set.is_empty() {
                        let tags: Vec<Tag> = t
                            .set
                            .iter()
                            .map(|(k, v)| Tag::builder().key(k).value(v).build())
                            .collect();
                        c.ec2
                            .create_tags()
                            .resources(&st.instance_id)
                            .set_tags(Some(tags))
                            .send()
                            .await
                            .map_err(aws_failure("CreateTags"))?;
                    }
                }
            }
            Step::TamperLoadBalancer(t) => {
                tamper_load_balancer(env, &cluster, t)
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::TerminateBehindItsBack(what) => {
                terminate_behind_its_back(env, &cluster, &statuses, *what)
                    .await
                    .map_err(|e| at(e.to_string()))?;
                if *what == Terminated::Machines {
                    // `exists`, asked with the recorded status, tells what AWS still shows:
                    // that very instance, terminated.
                    let m = env.machine_actuator(c.clone());
                    for (mac, st) in machines.iter().zip(&statuses) {
                        let e = m.exists(&cluster, mac, Some(st)).await?;
                        if e.exists
                            || e.instance_id.as_deref() != Some(st.instance_id.as_str())
                            || e.state.as_deref() != Some("terminated")
                        {
                            return Err(at(format!(
                                "exists of machine {} says {e:?}; its instance {} is terminated",
                                mac.metadata.name, st.instance_id
                            )));
                        }
                    }
                }
            }
            Step::MakeServiceLoadBalancer(lb) => {
                service_lb::make(env, &cluster, &lb.name, lb.tagged)
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::ExpectServiceLoadBalancers(want) => {
                for (name, p) in want {
                    let there = service_lb::present(env, &cluster, name)
                        .await
                        .map_err(|e| at(e.to_string()))?;
                    if there != (*p == Presence::Present) {
                        return Err(at(format!(
                            "Service load balancer {name} is {}",
                            if there { "present" } else { "absent" }
                        )));
                    }
                }
            }
            Step::RemoveServiceLoadBalancer(name) => {
                service_lb::remove(env, name)
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::RefuseMachine(r) => {
                refuse_machine(env, &cluster, r)
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::ExpectMachinesTagged => {
                let _calm = env.calm();
                let key = provider::ownership::cluster_key(&cluster.metadata.name);
                for (mac, st) in machines.iter().zip(&statuses) {
                    let d = c
                        .ec2
                        .describe_instances()
                        .instance_ids(&st.instance_id)
                        .send()
                        .await
                        .map_err(aws_failure("DescribeInstances"))?;
                    let tags: BTreeMap<&str, &str> = d
                        .reservations()
                        .iter()
                        .flat_map(|r| r.instances())
                        .flat_map(|i| i.tags())
                        .filter_map(|t| Some((t.key()?, t.value()?)))
                        .collect();
                    let name = mac.metadata.name.as_str();
                    let role = tags.get(provider::ownership::ROLE_KEY).copied();
                    if tags.get(key.as_str()) != Some(&"owned")
                        || tags.get("Name") != Some(&name)
                        || !matches!(role, Some("controlplane" | "node"))
                    {
                        return Err(at(format!(
                            "machine {name} ({}) is tagged {tags:?}",
                            st.instance_id
                        )));
                    }
                    for i in d.reservations().iter().flat_map(|r| r.instances()) {
                        placed_as_asked(c, mac, i)
                            .await
                            .map_err(|e| at(e.to_string()))?;
                    }
                }
            }
            Step::CreateMachinesCutAfter(k) => {
                let cut = crashing(c, *k);
                let m = env.machine_actuator(cut);
                for mac in &machines {
                    let _ = m.create(&cluster, mac, None).await;
                }
            }
            Step::DeleteMachines => delete_machines(env, c, &cluster, &machines, &statuses).await?,
            Step::Delete => down(env, c, &cluster).await?,
            Step::DeleteWithoutErrors => {
                let a = ClusterActuator::new(c.clone());
                let mut done = false;
                for _ in 0..crate::properties::ROUNDS {
                    match a.delete(&cluster).await {
                        Ok(o) if o.is_done() => {
                            done = true;
                            break;
                        }
                        Ok(o) => env.pause(o.requeue_after().unwrap_or_default()).await,
                        Err(e) => return Err(at(format!("a delete pass failed: {e}"))),
                    }
                }
                ensure(done, || "delete did not finish".to_string())
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::DeleteCutAfter(k) => {
                let cut = crashing(c, *k);
                let _ = ClusterActuator::new(cut).delete(&cluster).await;
            }
            Step::Change(change) => {
                let next = spec_of(env, &ex, &name, &change.cluster)?;
                let before_calls = c.calls.mutating();
                let result = up(env, c, &next).await;
                match (&change.expect_error, result) {
                    (None, Ok(_)) => cluster = next,
                    (None, Err(e)) => return Err(at(format!("failed: {e}"))),
                    (Some(kind), Ok(_)) => return Err(at(format!("succeeded; expected {kind}"))),
                    (Some(kind), Err(Failure::Provider(e))) => {
                        if error_kind(&e) != kind {
                            return Err(at(format!("{} ({e}); expected {kind}", error_kind(&e))));
                        }
                        let made = c.calls.mutating() - before_calls;
                        ensure(made == 0, || {
                            format!(
                                "step {}: the refused change made {made} mutating calls",
                                i + 1
                            )
                        })?;
                    }
                    (Some(kind), Err(e)) => return Err(at(format!("{e}; expected {kind}"))),
                }
            }
            Step::ExpectOwned(want) => {
                let got = env.census(&cluster.metadata.name).await?;
                // Volumes follow instances; a scenario names them only if it wants to. A kind
                // named with 0 is one the target must not hold.
                let got: Census = got
                    .into_iter()
                    .filter(|(k, _)| k != "volume" || want.contains_key("volume"))
                    .collect();
                let want: Census = want
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(k, n)| (k.clone(), *n))
                    .collect();
                if got != want {
                    return Err(at(format!("the target holds {got:?}, expected {want:?}")));
                }
            }
            Step::ExpectPreExistingUnchanged => {
                let now = env.snapshot(&origin, lb.as_deref()).await?;
                if now != before {
                    return Err(at(format!(
                        "pre-existing resources changed:\nbefore {before}\nnow    {now}"
                    )));
                }
            }
            Step::ExpectTopology => env.topology(&cluster).await?,
            Step::ExpectNothingOwned => {
                let got = env.census(&cluster.metadata.name).await?;
                if !got.is_empty() {
                    return Err(at(format!("still owned: {got:?}")));
                }
            }
            Step::ExpectErrors(want) => {
                let seen = errors_since(env, log_start);
                for (code, at_least) in want {
                    let n = seen.get(code).copied().unwrap_or(0);
                    if n < *at_least {
                        return Err(at(format!(
                            "{n} answers with {code}, expected at least {at_least}; the fake \
                             answered these errors: {seen:?}"
                        )));
                    }
                }
            }
            Step::ExpectCalls(want) => {
                if let Some(f) = env.fake() {
                    let log = f.fake().calls();
                    for (action, n) in want {
                        let done = log
                            .iter()
                            .skip(log_start)
                            .filter(|c| &c.action == action && c.error.is_none())
                            .count();
                        if done != *n {
                            return Err(at(format!(
                                "{done} successful {action} calls, expected {n}"
                            )));
                        }
                    }
                }
            }
            Step::ExpectTagsAbsent(keys) => {
                let found = tagged_with(env, &cluster.metadata.name, keys).await?;
                if !found.is_empty() {
                    return Err(at(format!("still tagged: {found:?}")));
                }
            }
            Step::ExpectNoErrors(codes) => {
                let seen = errors_since(env, log_start);
                let found: Vec<_> = codes
                    .iter()
                    .filter_map(|c| seen.get(c).map(|n| format!("{c} x{n}")))
                    .collect();
                if !found.is_empty() {
                    return Err(at(format!("the fake answered {}", found.join(", "))));
                }
            }
        }
    }
    report.calls = c.calls.total();
    Ok(report)
}

/// Whether `instance` sits where its machine's spec asks: in a public subnet (one routing
/// 0.0.0.0/0 to an internet gateway) with a public address when it asks for one, in a private
/// one without otherwise; in the zone or subnet it names; with every additional group it
/// names.
async fn placed_as_asked(
    c: &provider::Clients,
    machine: &provider::spec::machine::Machine,
    instance: &aws_sdk_ec2::types::Instance,
) -> Result<(), Failure> {
    let spec = &machine.spec;
    let name = &machine.metadata.name;
    let subnet = instance.subnet_id().unwrap_or_default();
    let vpc = instance.vpc_id().unwrap_or_default();
    let f = |n: &str, v: &str| crate::topology::f(n, &[v]);
    let mut tables = c
        .ec2
        .describe_route_tables()
        .filters(f("association.subnet-id", subnet))
        .send()
        .await
        .map_err(aws_failure("DescribeRouteTables"))?
        .route_tables
        .unwrap_or_default();
    if tables.is_empty() {
        tables = c
            .ec2
            .describe_route_tables()
            .filters(f("vpc-id", vpc))
            .filters(f("association.main", "true"))
            .send()
            .await
            .map_err(aws_failure("DescribeRouteTables"))?
            .route_tables
            .unwrap_or_default();
    }
    let public = tables.iter().flat_map(|t| t.routes()).any(|r| {
        r.destination_cidr_block() == Some("0.0.0.0/0")
            && r.gateway_id().is_some_and(|g| g.starts_with("igw-"))
    });
    let address = instance.public_ip_address().is_some();
    let mut problems = Vec::new();
    if public != spec.public_ip || address != spec.public_ip {
        problems.push(format!(
            "is in {} subnet {subnet} {} a public address; its spec says publicIp {}",
            if public { "public" } else { "private" },
            if address { "with" } else { "without" },
            spec.public_ip
        ));
    }
    if let Some(id) = &spec.subnet.id
        && id != subnet
    {
        problems.push(format!(
            "is in {subnet}, not in the subnet {id} its spec names"
        ));
    }
    let zone = instance
        .placement()
        .and_then(|p| p.availability_zone())
        .unwrap_or_default();
    if let Some(z) = &spec.subnet.availability_zone
        && z != zone
    {
        problems.push(format!("is in {zone}, not in the zone {z} its spec names"));
    }
    let groups: Vec<&str> = instance
        .security_groups()
        .iter()
        .filter_map(|g| g.group_id())
        .collect();
    for g in &spec.additional_security_groups {
        if !groups.contains(&g.as_str()) {
            problems.push(format!("lacks the additional group {g} (has {groups:?})"));
        }
    }
    let spot =
        instance.instance_lifecycle() == Some(&aws_sdk_ec2::types::InstanceLifecycleType::Spot);
    if spot != spec.spot_market_options.is_some() {
        problems.push(format!(
            "is {} Spot Instance; its spec says {}",
            if spot { "a" } else { "not a" },
            if spec.spot_market_options.is_some() {
                "Spot"
            } else {
                "On-Demand"
            }
        ));
    }
    if spec.dynamic_host_allocation.is_some()
        && instance.placement().and_then(|p| p.host_id()).is_none()
    {
        problems.push("runs on no Dedicated Host; its spec asks for one of its own".into());
    }
    let devices: Vec<&str> = instance
        .block_device_mappings()
        .iter()
        .filter(|m| m.ebs().is_some_and(|e| e.volume_id().is_some()))
        .filter_map(|m| m.device_name())
        .collect();
    for v in &spec.non_root_volumes {
        if !devices.contains(&v.device_name.as_str()) {
            problems.push(format!(
                "has no volume at {} (has {devices:?})",
                v.device_name
            ));
        }
    }
    ensure(problems.is_empty(), || {
        format!(
            "machine {name} ({}) {}",
            instance.instance_id().unwrap_or_default(),
            problems.join("; ")
        )
    })
}

/// What `cluster` owns that carries a tag with one of `keys`: (resource, key).
async fn tagged_with(
    env: &Env,
    cluster: &str,
    keys: &[String],
) -> Result<Vec<(String, String)>, Failure> {
    let owner = provider::ownership::cluster_key(cluster);
    let ec2 = &env.clients.ec2;
    let owned = crate::census::ec2_tags(ec2, vec![crate::topology::f("key", &[&owner])]).await?;
    let ids: std::collections::BTreeSet<&str> =
        owned.iter().filter_map(|t| t.resource_id()).collect();
    let mut found = Vec::new();
    if !keys.is_empty() {
        let with = {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            crate::census::ec2_tags(ec2, vec![crate::topology::f("key", &keys)]).await?
        };
        for t in with {
            if let (Some(id), Some(k)) = (t.resource_id(), t.key())
                && ids.contains(id)
            {
                found.push((id.to_string(), k.to_string()));
            }
        }
    }
    for (lb, tags) in crate::census::load_balancer_tags(&env.clients).await? {
        if tags.iter().any(|t| t.key() == owner) {
            for t in tags.iter().filter(|t| keys.iter().any(|k| k == t.key())) {
                found.push((lb.clone(), t.key().to_string()));
            }
        }
    }
    Ok(found)
}

/// The instances of `ids` as the target describes them: id and state.
pub(crate) async fn states(env: &Env, ids: &[String]) -> Result<Vec<(String, String)>, Failure> {
    let d = env
        .clients
        .ec2
        .describe_instances()
        .set_instance_ids(Some(ids.to_vec()))
        .send()
        .await
        .map_err(aws_failure("DescribeInstances"))?;
    Ok(d.reservations()
        .iter()
        .flat_map(|r| r.instances())
        .map(|i| {
            (
                i.instance_id().unwrap_or_default().to_string(),
                i.state()
                    .and_then(|s| s.name())
                    .map_or("", |n| n.as_str())
                    .to_string(),
            )
        })
        .collect())
}

/// Someone else terminates the machines' instances or the cluster's bastion, and waits until
/// AWS shows them terminated.
async fn terminate_behind_its_back(
    env: &Env,
    cluster: &Cluster,
    statuses: &[provider::machine::MachineStatus],
    what: Terminated,
) -> Result<(), Failure> {
    let _calm = env.calm();
    let ec2 = &env.clients.ec2;
    let ids: Vec<String> = match (what, &cluster.spec.bastion.id) {
        (Terminated::Machines, _) => statuses
            .iter()
            .map(|s| s.instance_id.clone())
            .filter(|id| !id.is_empty())
            .collect(),
        (Terminated::Bastion, Some(id)) => vec![id.clone()],
        (Terminated::Bastion, None) => {
            let f = |k: &str, v: &str| {
                aws_sdk_ec2::types::Filter::builder()
                    .name(k)
                    .values(v)
                    .build()
            };
            let key = provider::ownership::cluster_key(&cluster.metadata.name);
            ec2.describe_instances()
                .filters(f(&format!("tag:{key}"), "owned"))
                .filters(f(
                    &format!("tag:{}", provider::ownership::ROLE_KEY),
                    "bastion",
                ))
                .filters(f("instance-state-name", "running"))
                .send()
                .await
                .map_err(aws_failure("DescribeInstances"))?
                .reservations()
                .iter()
                .flat_map(|r| r.instances())
                .filter_map(|i| i.instance_id().map(String::from))
                .collect()
        }
    };
    ensure(!ids.is_empty(), || {
        format!("no running {what:?} to terminate")
    })?;
    ec2.terminate_instances()
        .set_instance_ids(Some(ids.clone()))
        .send()
        .await
        .map_err(aws_failure("TerminateInstances"))?;
    for _ in 0..40 {
        let now = states(env, &ids).await?;
        if now.len() == ids.len() && now.iter().all(|(_, s)| s == "terminated") {
            return Ok(());
        }
        env.pause(std::time::Duration::from_secs(5)).await;
    }
    Err(Failure::Check(format!(
        "{ids:?} were not terminated: {:?}",
        states(env, &ids).await?
    )))
}

/// A machine the provider must refuse: every machine call answers `InvalidSpec`, listing
/// each thing wrong, before any call to AWS.
/// Someone else detaches the cluster's API load balancer from a subnet or swaps its group.
async fn tamper_load_balancer(
    env: &Env,
    cluster: &Cluster,
    t: &LoadBalancerTamper,
) -> Result<(), Failure> {
    let _calm = env.calm();
    let c = &env.clients;
    let name = crate::topology::api_load_balancer_name(cluster);
    let d = c
        .elb
        .describe_load_balancers()
        .load_balancer_names(&name)
        .send()
        .await
        .map_err(aws_failure("DescribeLoadBalancers"))?;
    let Some(found) = d.load_balancer_descriptions().first() else {
        return Err(Failure::Check(format!(
            "no load balancer {name} to tamper with"
        )));
    };
    if t.detach_one_subnet {
        let Some(last) = found.subnets().last() else {
            return Err(Failure::Check(format!(
                "load balancer {name} has no subnet"
            )));
        };
        c.elb
            .detach_load_balancer_from_subnets()
            .load_balancer_name(&name)
            .subnets(last)
            .send()
            .await
            .map_err(aws_failure("DetachLoadBalancerFromSubnets"))?;
    }
    if let Some(role) = &t.group_role {
        let owned = provider::ownership::cluster_key(&cluster.metadata.name);
        let groups = c
            .ec2
            .describe_security_groups()
            .filters(crate::topology::f(&format!("tag:{owned}"), &["owned"]))
            .filters(crate::topology::f(
                &format!("tag:{}", provider::ownership::ROLE_KEY),
                &[role],
            ))
            .send()
            .await
            .map_err(aws_failure("DescribeSecurityGroups"))?;
        let Some(id) = groups.security_groups().first().and_then(|g| g.group_id()) else {
            return Err(Failure::Check(format!("the cluster has no {role} group")));
        };
        c.elb
            .apply_security_groups_to_load_balancer()
            .load_balancer_name(&name)
            .security_groups(id)
            .send()
            .await
            .map_err(aws_failure("ApplySecurityGroupsToLoadBalancer"))?;
    }
    Ok(())
}

async fn refuse_machine(env: &Env, cluster: &Cluster, r: &Refused) -> Result<(), Failure> {
    let mut made = world::machines(env, cluster, std::slice::from_ref(&r.machine))?;
    let Some(mut mac) = made.pop() else {
        return Err(Failure::Check("no machine made".into()));
    };
    let mut wrong = 0;
    if let Some(n) = &r.cluster_name {
        mac.spec.cluster_name = n.clone();
        wrong += 1;
    }
    if let Some(t) = &r.instance_type {
        mac.spec.instance_type = t.clone();
        wrong += 1;
    }
    if let Some(n) = r.extra_ca_cert_hashes {
        // Distinct digests, as incompressible as real pins.
        for i in 0..n {
            let d = ring::digest::digest(&ring::digest::SHA256, &i.to_le_bytes());
            let hex: String = d.as_ref().iter().map(|b| format!("{b:02x}")).collect();
            mac.spec
                .kubeadm
                .ca_cert_hashes
                .push(format!("sha256:{hex}"));
        }
        wrong += 1;
    }
    ensure(wrong > 0, || {
        "refuseMachine: say what is wrong (clusterName, instanceType, extraCaCertHashes)"
            .to_string()
    })?;
    let c = &env.clients;
    let before = c.calls.total();
    let m = env.machine_actuator(c.clone());
    let answers = [
        ("create", m.create(cluster, &mac, None).await.map(|_| ())),
        ("update", m.update(cluster, &mac, None).await.map(|_| ())),
        ("exists", m.exists(cluster, &mac, None).await.map(|_| ())),
        ("delete", m.delete(cluster, &mac, None).await),
    ];
    for (op, answer) in answers {
        match answer {
            Err(provider::Error::InvalidSpec { problems }) if problems.len() == wrong => {}
            other => {
                return Err(Failure::Check(format!(
                    "{op} of machine {} answered {other:?}; expected InvalidSpec listing \
                     {wrong} problems",
                    mac.metadata.name
                )));
            }
        }
    }
    let calls = c.calls.total() - before;
    ensure(calls == 0, || {
        format!(
            "the refused machine {} made {calls} calls",
            mac.metadata.name
        )
    })
}
