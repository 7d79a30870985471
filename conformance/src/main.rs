//! `conformance`: runs the property suite and every scenario against a target and prints a
//! table (property or scenario, cases, pass/fail, API calls); `conformance sweep` deletes what
//! a crashed run left. `cargo xtask conformance` and `cargo xtask sweep` call it.

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand};
use conformance::properties::{self, Report};
use conformance::sweep::{Selector, sweep};
use conformance::target::seed_of;
use conformance::world::{Case, cases};
use conformance::{Env, Failure, Target, runner};
use fakeaws::sim::profile::Profile;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

#[derive(Parser)]
#[command(
    name = "conformance",
    about = "The provider's promises, checked against a target"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Delete everything a run (or every run older than some hours) tagged.
    Sweep(SweepArgs),
}

#[derive(Args, Clone)]
struct TargetArgs {
    /// A standalone fakeaws (or any AWS-compatible endpoint).
    #[arg(long, conflicts_with = "real_aws", global = true)]
    endpoint: Option<String>,
    /// Real AWS through the standard credential chain. Creates billed resources.
    #[arg(long, global = true)]
    real_aws: bool,
    /// The region for --real-aws.
    #[arg(long, default_value = "us-east-1", global = true)]
    region: String,
    /// Confirms that --real-aws may create (and will delete) billed resources.
    #[arg(long, global = true)]
    i_understand_this_creates_aws_resources: bool,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Cases per property.
    #[arg(long, default_value_t = 8)]
    cases: u32,
    /// At most this many cases in all (properties and scenarios); default: unlimited on a
    /// fake, 4 on real AWS.
    #[arg(long)]
    budget: Option<u32>,
    /// Run only the properties and scenarios whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// The run id tagged on everything (default: time-based).
    #[arg(long)]
    run_id: Option<String>,
    /// The bad day the in-process fake plays for every property and scenario: `calm` (the
    /// default), `storm`, or a profile file (see fakeaws's `sim::profile`). A standalone
    /// fake plays what it was started with (`fakeaws --faults`).
    #[arg(long, value_name = "PROFILE|FILE", default_value = "calm")]
    faults: String,
    /// The seed of the generated cases (default: from the clock, and printed), so that a run
    /// replays exactly: the same seed gives the same cases, and each case's faults are drawn
    /// from the case itself.
    #[arg(long)]
    seed: Option<u64>,
}

/// The proptest generator of property `name` in a run seeded with `seed`.
fn rng_of(seed: u64, name: &str) -> TestRng {
    let salt = seed_of(&name, 0);
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let word = if i % 2 == 0 { seed } else { salt };
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

#[derive(Args)]
struct SweepArgs {
    /// The run to sweep.
    #[arg(long, conflicts_with = "older_than_hours")]
    run_id: Option<String>,
    /// Sweep every run started more than this many hours ago.
    #[arg(long)]
    older_than_hours: Option<u64>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn target(t: &TargetArgs) -> anyhow::Result<Target> {
    if t.real_aws {
        if !t.i_understand_this_creates_aws_resources {
            bail!(
                "--real-aws creates billed resources in {} (VPCs, NAT gateways, Elastic IPs, \
                 instances, load balancers), tags them with the run id and deletes them at the \
                 end. Add --i-understand-this-creates-aws-resources to go on.",
                t.region
            );
        }
        return Ok(Target::RealAws(t.region.clone()));
    }
    Ok(match &t.endpoint {
        Some(url) => Target::Endpoint(url.clone()),
        None => Target::InProcess,
    })
}

struct Row {
    name: String,
    cases: u32,
    passed: bool,
    calls: u64,
    detail: String,
}

/// A property over one case and a cut point.
type Property = for<'a> fn(
    &'a Env,
    &'a Case,
    usize,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Report, Failure>> + 'a>,
>;

/// Where a property runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Runs {
    /// On every target, with the bad day `--faults` names.
    Anywhere,
    /// While the in-process fake lags (the `lag` profile, unless `--faults` names a bad day
    /// of its own); skipped on other targets.
    Lagging,
    /// On the in-process fake only (the property steers it).
    InProcess,
}

/// The properties: name, most machines per case, the property, and where it runs.
fn property_list() -> Vec<(&'static str, usize, Property, Runs)> {
    vec![
        (
            "idempotence",
            3,
            |e, c, _| Box::pin(properties::idempotence(e, c)),
            Runs::Anywhere,
        ),
        (
            "crash-at-any-change-then-resume",
            2,
            |e, c, k| Box::pin(properties::crash_convergence(e, c, k)),
            Runs::Anywhere,
        ),
        (
            "idempotence-under-lag",
            3,
            |e, c, _| Box::pin(properties::idempotence(e, c)),
            Runs::Lagging,
        ),
        (
            "crash-at-any-change-under-lag",
            3,
            |e, c, k| Box::pin(properties::crash_convergence(e, c, k)),
            Runs::Lagging,
        ),
        (
            "pre-existing-untouched",
            2,
            |e, c, _| Box::pin(properties::preexisting_untouched(e, c)),
            Runs::Anywhere,
        ),
        (
            "delete-complete-even-when-cut",
            2,
            |e, c, k| Box::pin(properties::delete_completeness(e, c, k)),
            Runs::Anywhere,
        ),
        (
            "machines-once-each",
            5,
            |e, c, k| Box::pin(properties::machines(e, c, k.min(2))),
            Runs::Anywhere,
        ),
        (
            "dependency-order",
            3,
            |e, c, _| Box::pin(properties::dependency_order(e, c)),
            Runs::InProcess,
        ),
        (
            "delete-carries-on",
            2,
            |e, c, k| Box::pin(properties::delete_carries_on(e, c, k)),
            Runs::InProcess,
        ),
    ]
}

fn run(cli: RunArgs) -> anyhow::Result<bool> {
    let target = target(&cli.target)?;
    let profile = Profile::load(&cli.faults).map_err(|e| anyhow::anyhow!("--faults: {e}"))?;
    if profile != Profile::calm() && !matches!(target, Target::InProcess) {
        bail!(
            "--faults steers the in-process fake; start a standalone fakeaws with --faults {} \
             instead, or leave real AWS to its own days",
            cli.faults
        );
    }
    let started = now();
    let run_id = cli
        .run_id
        .clone()
        .unwrap_or_else(|| format!("run{started}"));
    let budget = cli.budget.unwrap_or(match target {
        Target::RealAws(_) => 4,
        _ => u32::MAX,
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    if let Target::RealAws(region) = &target {
        eprintln!(
            "conformance: running against AWS {region} as run {run_id}: each case creates a VPC \
             or uses one it creates, subnets, up to 3 NAT gateways and Elastic IPs, up to 5 \
             t3.large and t3.micro instances and a classic load balancer, all tagged \
             capa-conformance-run={run_id}; at most {budget} cases; everything is deleted at \
             the end (or: cargo xtask sweep --run-id {run_id} --real-aws --region {region})."
        );
    }
    let seed = cli.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos().into())
            ^ started
    });
    let wanted = |name: &str| cli.only.as_deref().is_none_or(|o| name.contains(o));
    let mut used = 0u32;
    let mut rows = Vec::new();
    let clock = Instant::now();

    for (name, max_machines, prop, runs) in property_list() {
        let in_process = matches!(target, Target::InProcess);
        if !wanted(name) || used >= budget || (runs != Runs::Anywhere && !in_process) {
            continue;
        }
        let profile = if runs == Runs::Lagging && profile == Profile::calm() {
            Profile::lag()
        } else {
            profile.clone()
        };
        let n = cli.cases.min(budget - used);
        used += n;
        let mut runner = TestRunner::new_with_rng(
            Config {
                cases: n,
                failure_persistence: None,
                ..Config::default()
            },
            rng_of(seed, name),
        );
        let calls = std::cell::Cell::new(0u64);
        let strategy = (cases(max_machines), 1usize..30);
        let outcome = runner.run(&strategy, |(case, k)| {
            let result = rt.block_on(async {
                let env = Env::with_profile(
                    &target,
                    &run_id,
                    started,
                    profile.clone(),
                    seed_of(&case, k),
                )
                .await
                .map_err(Failure::Check)?;
                let case = case.fitted(env.zones.len());
                let r = prop(&env, &case, k).await;
                let cleanup = properties::cleanup(&env).await;
                let r = r?;
                cleanup?;
                Ok::<Report, Failure>(r)
            });
            match result {
                Ok(r) => {
                    calls.set(calls.get() + r.calls);
                    Ok(())
                }
                Err(e) => Err(proptest::test_runner::TestCaseError::fail(format!(
                    "{case:?} k={k}: {e}"
                ))),
            }
        });
        let (passed, detail) = match outcome {
            Ok(()) => (true, String::new()),
            Err(e) => (false, e.to_string()),
        };
        rows.push(Row {
            name: name.to_string(),
            cases: n,
            passed,
            calls: calls.get(),
            detail,
        });
    }

    // On a bad day against a calm one: the in-process fake plays both.
    let bad_day_name = "converges-on-a-bad-day";
    if wanted(bad_day_name) && used < budget && matches!(target, Target::InProcess) {
        let n = cli.cases.min(budget - used);
        used += n;
        let storm = if profile == Profile::calm() {
            Profile::storm()
        } else {
            profile.clone()
        };
        let mut runner = TestRunner::new_with_rng(
            Config {
                cases: n,
                failure_persistence: None,
                ..Config::default()
            },
            rng_of(seed, bad_day_name),
        );
        let calls = std::cell::Cell::new(0u64);
        let outcome = runner.run(&cases(3), |case| {
            let result = rt.block_on(async {
                let calm = Env::new(&target, &run_id, started)
                    .await
                    .map_err(Failure::Check)?;
                let bad =
                    Env::with_profile(&target, &run_id, started, storm.clone(), seed_of(&case, 0))
                        .await
                        .map_err(Failure::Check)?;
                let case = case.fitted(calm.zones.len());
                properties::bad_day(&calm, &bad, &case).await
            });
            match result {
                Ok(r) => {
                    calls.set(calls.get() + r.calls);
                    Ok(())
                }
                Err(e) => Err(proptest::test_runner::TestCaseError::fail(format!(
                    "{case:?}: {e}"
                ))),
            }
        });
        rows.push(Row {
            name: bad_day_name.to_string(),
            cases: n,
            passed: outcome.is_ok(),
            calls: calls.get(),
            detail: outcome.err().map(|e| e.to_string()).unwrap_or_default(),
        });
    }

    if wanted("isolation") && used < budget {
        used += 1;
        let r = rt.block_on(async {
            let env = Env::with_profile(&target, &run_id, started, profile.clone(), 7)
                .await
                .map_err(Failure::Check)?;
            let r = properties::isolation(&env).await;
            let cleanup = properties::cleanup(&env).await;
            let r = r?;
            cleanup?;
            Ok::<Report, Failure>(r)
        });
        rows.push(Row {
            name: "isolation".into(),
            cases: 1,
            passed: r.is_ok(),
            calls: r.as_ref().map_or(0, |r| r.calls),
            detail: r.err().map(|e| e.to_string()).unwrap_or_default(),
        });
    }

    let all = scenarios::load_all(&scenarios::dir())?;
    for s in all {
        let name = format!("scenario {}", s.name);
        if !wanted(&name) || used >= budget {
            continue;
        }
        used += 1;
        let r = rt.block_on(async {
            let env = Env::with_profile(
                &target,
                &run_id,
                started,
                runner::profile_for(&s, &profile)?,
                seed_of(&s.name, 0),
            )
            .await
            .map_err(Failure::Check)?;
            let r = runner::run(&env, &s).await;
            let cleanup = properties::cleanup(&env).await;
            let r = r?;
            cleanup?;
            Ok::<_, Failure>(r)
        });
        let skipped = r.as_ref().is_ok_and(|r| r.skipped);
        rows.push(Row {
            name: if skipped {
                format!("{name} (skipped: its faults need the in-process fake)")
            } else {
                name
            },
            cases: u32::from(!skipped),
            passed: r.is_ok(),
            calls: r.as_ref().map_or(0, |r| r.calls),
            detail: r.err().map(|e| e.to_string()).unwrap_or_default(),
        });
    }

    // Always clean up a shared target, whatever happened.
    if !matches!(target, Target::InProcess) {
        rt.block_on(async {
            let env = Env::new(&target, &run_id, started)
                .await
                .map_err(Failure::Check)?;
            sweep(
                &env.clients,
                &Selector::Run(run_id.clone()),
                target.poll(),
                Duration::from_secs(1800),
            )
            .await
        })
        .context("final cleanup")?;
    }

    println!(
        "\nconformance against {} (run {run_id}, faults: {}, seed {seed}: --seed {seed} replays it)",
        target.label(),
        cli.faults
    );
    println!(
        "{:<48} {:>6} {:>6} {:>10}",
        "property / scenario", "cases", "result", "API calls"
    );
    for r in &rows {
        println!(
            "{:<48} {:>6} {:>6} {:>10}",
            r.name,
            r.cases,
            if r.passed { "pass" } else { "FAIL" },
            r.calls
        );
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| !r.passed).collect();
    println!(
        "{} passed, {} failed in {:.1} s",
        rows.len() - failed.len(),
        failed.len(),
        clock.elapsed().as_secs_f64()
    );
    for r in &failed {
        println!("\n{}: {}", r.name, r.detail);
    }
    Ok(failed.is_empty())
}

fn sweep_cmd(t: &TargetArgs, a: &SweepArgs) -> anyhow::Result<bool> {
    let target = target(t)?;
    let sel = match (&a.run_id, a.older_than_hours) {
        (Some(id), _) => Selector::Run(id.clone()),
        (None, Some(h)) => Selector::StartedBefore(now().saturating_sub(h * 3600)),
        (None, None) => bail!("give --run-id ID or --older-than-hours N"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let swept = rt.block_on(async {
        let env = Env::new(&target, "sweep", now())
            .await
            .map_err(Failure::Check)?;
        sweep(&env.clients, &sel, target.poll(), Duration::from_secs(1800)).await
    })?;
    for (kind, id) in &swept.0 {
        println!("deleted {kind} {id}");
    }
    println!("{} resources deleted", swept.0.len());
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Sweep(a)) => sweep_cmd(&cli.run.target, a),
        None => run(cli.run),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("conformance: {e:#}");
            ExitCode::from(2)
        }
    }
}
