//! Runs one scenario file against a target: creates its setup, then performs its steps in
//! order, checking each expectation by describing what the target holds.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Tag;
use provider::spec::Cluster;
use provider::{ClusterActuator, MachineActuator};
use scenarios::{Scenario, Step};

use crate::census::Census;
use crate::crash::crashing;
use crate::properties::{create_machines_from, delete_machines, down, reconcile_settled, up};
use crate::target::Env;
use crate::{Failure, aws_failure, ensure, world};

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
    let machines = world::machines(env, &cluster, &scenario.machines)?;
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
            Step::ReconcileCutAfter(k) => {
                let cut = crashing(c, *k);
                let _ = ClusterActuator::new(cut).reconcile(&cluster).await;
            }
            Step::CreateMachines => {
                statuses = create_machines_from(env, c, &cluster, &machines, &statuses).await?;
            }
            Step::UpdateMachines => {
                let m = MachineActuator::new(c.clone());
                for (mac, st) in machines.iter().zip(&statuses) {
                    m.update(&cluster, mac, Some(st)).await?;
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
                }
            }
            Step::CreateMachinesCutAfter(k) => {
                let cut = crashing(c, *k);
                let m = MachineActuator::new(cut);
                for mac in &machines {
                    let _ = m.create(&cluster, mac, None).await;
                }
            }
            Step::DeleteMachines => delete_machines(env, c, &cluster, &machines, &statuses).await?,
            Step::Delete => down(env, c, &cluster).await?,
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
                // Volumes follow instances; a scenario names them only if it wants to.
                let got: Census = got
                    .into_iter()
                    .filter(|(k, _)| k != "volume" || want.contains_key("volume"))
                    .collect();
                if &got != want {
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
