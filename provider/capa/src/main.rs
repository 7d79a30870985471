//! `capa`: reconcile (`up`), delete (`down`), inspect (`status`) or preview (`plan`) a
//! cluster from its spec file. By default against an embedded fakeaws started in-process, so
//! a new user sees a whole cluster come up without an AWS account; `--endpoint URL` for a
//! standalone fakeaws (or any AWS-compatible endpoint); `--aws` for real AWS through the
//! standard credential chain.

mod output;
mod state;
mod target;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use provider::MachineActuator;
use provider::aws_error::Action;
use provider::cluster::Outcome;
use provider::machine::{MachineOutcome, MachineStatus};
use provider::spec::{Cluster, Machine};
use provider::{ClusterActuator, Error};

use output::{conditions, count, init_logging, machine_line, tree};
use target::{cluster_of, load};

#[derive(Parser)]
#[command(
    name = "capa",
    version,
    about = "Kubernetes cluster infrastructure on AWS"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create or converge the cluster's infrastructure, waiting until it is ready.
    Up(Args),
    /// Delete everything the cluster owns, waiting until it is gone.
    Down(Args),
    /// Show the cluster's resources, owned and pre-existing.
    Status(Args),
    /// Show what `up` would create or change (Describe calls only).
    Plan(Args),
    /// Create, delete or show the machines of a file.
    #[command(subcommand)]
    Machine(MachineCommand),
    /// Write an admin kubeconfig for the cluster: a client certificate of the cluster CA for
    /// `system:masters`, the API server at the load balancer.
    Kubeconfig(KubeconfigArgs),
}

#[derive(clap::Args)]
struct KubeconfigArgs {
    #[command(flatten)]
    args: Args,
    /// Where to write it (mode 0600); standard output without it.
    #[arg(short = 'o', long = "output-file")]
    output_file: Option<PathBuf>,
}

#[derive(Subcommand)]
enum MachineCommand {
    /// Create the file's machines (each exactly one instance), waiting until they run.
    Create(MachineArgs),
    /// Delete the file's machines.
    Delete(MachineArgs),
    /// Show whether each machine's instance exists, and its state.
    Status(MachineArgs),
}

#[derive(clap::Args)]
struct MachineArgs {
    #[command(flatten)]
    args: Args,
    /// The cluster spec, when the machines' file does not hold it.
    #[arg(long)]
    cluster: Option<PathBuf>,
}

#[derive(clap::Args)]
struct Args {
    /// The spec file (YAML): a Cluster document, and Machine documents.
    #[arg(short = 'f', long = "file")]
    file: PathBuf,
    /// An AWS-compatible endpoint, such as a standalone fakeaws (http://127.0.0.1:4566).
    #[arg(long, conflicts_with = "aws")]
    endpoint: Option<String>,
    /// Real AWS, through the standard credential chain. Never the default.
    #[arg(long)]
    aws: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Give up waiting after this many seconds.
    #[arg(long, default_value_t = 1800)]
    timeout: u64,
    /// Where the clusters' PKI and bootstrap tokens are kept (default
    /// $XDG_STATE_HOME/capa, else ~/.local/state/capa; one directory per region and cluster
    /// beneath). Unused with the embedded fake, whose PKI lives only while capa runs.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// With `down`: also delete the cluster's PKI from the state directory.
    #[arg(long)]
    forget_pki: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    Text,
    Json,
}

/// After a failed round: what time mends (throttling, an outage, no capacity yet, something
/// not visible yet, a dependency still going away) is waited out by the error policy, with a
/// visible line, until the timeout; anything else is returned, to stop.
async fn retry_or_stop(
    e: Error,
    start: Instant,
    timeout: Duration,
    poll: Duration,
) -> Result<(), Error> {
    match provider::error::error_policy(&e) {
        Action::Requeue(after) if start.elapsed() <= timeout => {
            tracing::info!(
                target: "capa::progress",
                "retrying in {:.1} s: {e}",
                after.min(poll).as_secs_f64()
            );
            tokio::time::sleep(after.min(poll)).await;
            Ok(())
        }
        Action::Requeue(_) | Action::Fail | Action::Ignore => Err(e),
    }
}

async fn drive(
    actuator: &ClusterActuator,
    cluster: &Cluster,
    poll: Duration,
    timeout: Duration,
    delete: bool,
) -> Result<Outcome, Error> {
    let start = Instant::now();
    loop {
        let result = if delete {
            actuator.delete(cluster).await
        } else {
            actuator.reconcile(cluster).await
        };
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(e) => {
                retry_or_stop(e, start, timeout, poll).await?;
                continue;
            }
        };
        let Some(after) = outcome.requeue_after() else {
            return Ok(outcome);
        };
        if start.elapsed() > timeout {
            return Err(Error::Conflict(format!(
                "gave up after {} s; still waiting for: {}",
                timeout.as_secs(),
                outcome.waiting.join("; ")
            )));
        }
        tokio::time::sleep(after.min(poll)).await;
    }
}

/// Creates the machines that have no instance and waits for them; then converges the
/// mutable fields of every one (security groups, tags, metadata options) as the machine
/// actuator's `update` does, which also refuses a changed immutable field, naming it.
async fn create_machines(
    actuator: &MachineActuator,
    cluster: &Cluster,
    machines: &[Machine],
    poll: Duration,
    timeout: Duration,
) -> Result<Vec<Option<MachineStatus>>, Error> {
    let start = Instant::now();
    let mut statuses: Vec<Option<MachineStatus>> = vec![None; machines.len()];
    let mut created = false;
    loop {
        let mut waiting = Vec::new();
        let batch: Vec<(&Machine, Option<&MachineStatus>)> = machines
            .iter()
            .zip(statuses.iter())
            .map(|(m, st)| (m, st.as_ref()))
            .collect();
        let result = if created {
            actuator.update_all(cluster, &batch).await
        } else {
            actuator.create_all(cluster, &batch).await
        };
        let outcomes: Vec<MachineOutcome> = match result {
            Ok(o) => o,
            Err(e) => {
                retry_or_stop(e, start, timeout, poll).await?;
                continue;
            }
        };
        for (st, o) in statuses.iter_mut().zip(outcomes) {
            if o.status.is_some() {
                *st = o.status;
            }
            waiting.extend(o.waiting);
        }
        if waiting.is_empty() {
            if created {
                return Ok(statuses);
            }
            created = true;
            continue;
        }
        if start.elapsed() > timeout {
            return Err(Error::Conflict(format!(
                "gave up after {} s; still waiting for: {}",
                timeout.as_secs(),
                waiting.join("; ")
            )));
        }
        tokio::time::sleep(Duration::from_secs(15).min(poll)).await;
    }
}

/// Where this run keeps the cluster's bootstrap material: in memory with the embedded fake,
/// else in the cluster's state directory.
fn keeper(
    args: &Args,
    target: &target::Target,
    cluster: &Cluster,
) -> anyhow::Result<state::Keeper> {
    if target.is_embedded() {
        return Ok(state::Keeper::Memory);
    }
    let root = state::root(args.state_dir.as_deref())?;
    Ok(state::Keeper::Dir(state::dir_of(&root, cluster)))
}

/// The cluster's bootstrap material for launching machines: asks AWS whether the cluster
/// exists only when none is kept.
async fn obtain(
    keeper: &state::Keeper,
    actuator: &ClusterActuator,
    cluster: &Cluster,
) -> anyhow::Result<std::sync::Arc<provider::bootstrap::Bootstrap>> {
    let exists = match keeper {
        state::Keeper::Dir(d) if state::load(d)?.is_none() => {
            state::exists_in_aws(&actuator.plan(cluster).await?.status)
        }
        _ => false,
    };
    keeper.obtain(exists, cluster)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Machine(cmd) = &cli.command {
        return run_machines(cmd).await;
    }
    let (Command::Up(args)
    | Command::Down(args)
    | Command::Status(args)
    | Command::Plan(args)
    | Command::Kubeconfig(KubeconfigArgs { args, .. })) = &cli.command
    else {
        return Ok(());
    };
    let docs = load(&args.file)?;
    let cluster = cluster_of(&docs, &args.file)?;
    let target = target::connect(args, &cluster.spec.region).await?;
    let keeper = keeper(args, &target, &cluster)?;
    let actuator = ClusterActuator::new(target.clients.clone());
    let start = Instant::now();
    let timeout = Duration::from_secs(args.timeout);
    let mut machine_status: Vec<Option<MachineStatus>> = vec![None; docs.machines.len()];
    let (verb, mut outcome) = match &cli.command {
        Command::Up(_) => {
            // Before any change: a live cluster whose PKI is lost is refused here.
            let bootstrap = obtain(&keeper, &actuator, &cluster).await?;
            let machines = MachineActuator::new(target.clients.clone(), bootstrap);
            let o = drive(&actuator, &cluster, target.poll, timeout, false).await?;
            machine_status =
                create_machines(&machines, &cluster, &docs.machines, target.poll, timeout).await?;
            ("up", o)
        }
        Command::Down(_) => {
            let machines = MachineActuator::new(target.clients.clone(), keeper.for_delete()?);
            for m in &docs.machines {
                machines.delete(&cluster, m, None).await?;
            }
            let o = drive(&actuator, &cluster, target.poll, timeout, true).await?;
            if let state::Keeper::Dir(dir) = &keeper {
                if args.forget_pki {
                    state::forget(dir)?;
                    eprintln!("capa: deleted the cluster's PKI from {}", dir.display());
                } else if dir.exists() {
                    eprintln!(
                        "capa: the cluster's PKI stays in {} (capa down --forget-pki deletes it)",
                        dir.display()
                    );
                }
            }
            ("down", o)
        }
        Command::Kubeconfig(k) => {
            let b = keeper.existing("capa kubeconfig", &cluster)?;
            let plan = actuator.plan(&cluster).await?;
            let lb = plan
                .status
                .load_balancer
                .filter(|l| !l.dns_name.is_empty())
                .with_context(|| {
                    format!(
                        "cluster {} has no API load balancer yet (capa up makes it)",
                        cluster.metadata.name
                    )
                })?;
            let server = format!("https://{}:6443", lb.dns_name);
            let config = b.pki.admin_kubeconfig(&cluster.metadata.name, &server)?;
            match &k.output_file {
                Some(path) => {
                    state::write_kubeconfig(path, &config)?;
                    eprintln!(
                        "capa: wrote an admin kubeconfig for {} ({server}) to {}",
                        cluster.metadata.name,
                        path.display()
                    );
                }
                None => print!("{config}"),
            }
            return Ok(());
        }
        Command::Status(_) => {
            let o = actuator.plan(&cluster).await?;
            if !docs.machines.is_empty() {
                let machines = MachineActuator::new(target.clients.clone(), keeper.for_delete()?);
                for (i, m) in docs.machines.iter().enumerate() {
                    let e = machines.exists(&cluster, m, None).await?;
                    machine_status[i] = e.instance_id.map(|id| MachineStatus {
                        instance_id: id,
                        state: e.state.unwrap_or_default(),
                        ..MachineStatus::default()
                    });
                }
            }
            ("status", o)
        }
        _ => ("plan", actuator.plan(&cluster).await?),
    };
    // The machines' condition, beside the cluster's steps.
    if matches!(verb, "up" | "status") && !docs.machines.is_empty() {
        let not_running: Vec<String> = docs
            .machines
            .iter()
            .zip(&machine_status)
            .filter(|(_, st)| st.as_ref().is_none_or(|s| s.state != "running"))
            .map(|(m, st)| {
                format!(
                    "machine {} is {}",
                    m.metadata.name,
                    st.as_ref().map_or("not created", |s| s.state.as_str())
                )
            })
            .collect();
        outcome
            .status
            .conditions
            .push(provider::cluster::Condition::of(
                "Machines",
                &not_running,
                &[],
            ));
    }
    let calls = target.clients.calls.clone();
    let elapsed = start.elapsed();
    if args.output == Output::Json {
        let json = serde_json::json!({
            "command": verb,
            "cluster": cluster.metadata.name,
            "status": outcome.status,
            "planned": outcome.planned,
            "machines": machine_status,
            "waiting": outcome.waiting,
            "apiCalls": calls.total(),
            "mutatingCalls": calls.mutating(),
            "callsByOperation": calls.by_operation(),
            "elapsedMs": elapsed.as_millis(),
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    match verb {
        "plan" => {
            if outcome.planned.is_empty() {
                println!(
                    "cluster {}: up to date, nothing to do",
                    cluster.metadata.name
                );
            } else {
                println!("cluster {}: up would", cluster.metadata.name);
                for p in &outcome.planned {
                    println!("  + {p}");
                }
            }
        }
        "down" => println!(
            "cluster {}: deleted everything it owned",
            cluster.metadata.name
        ),
        _ => {
            print!("{}", tree(&outcome.status));
            if verb == "up" || verb == "status" {
                let n = docs.machines.len();
                for (i, (m, st)) in docs.machines.iter().zip(&machine_status).enumerate() {
                    println!("{}", machine_line(m, st.as_ref(), i + 1 == n));
                }
            }
            print!("{}", conditions(&outcome.status));
            if verb == "status" && !outcome.planned.is_empty() {
                println!(
                    "(missing: {} changes pending; see capa plan)",
                    outcome.planned.len()
                );
            }
        }
    }
    let (owned, existing) = count(&outcome.status);
    if verb != "down" {
        println!("{owned} owned and {existing} pre-existing resources");
        let running = machine_status.iter().flatten().count();
        if running > 0 {
            println!("{running} machines");
        }
    }
    println!(
        "{} API calls ({} mutating) in {:.1} s",
        calls.total(),
        calls.mutating(),
        elapsed.as_secs_f64()
    );
    if let Some(l) = outcome
        .status
        .load_balancer
        .as_ref()
        .filter(|_| verb == "up")
    {
        println!("control plane endpoint: {}:6443", l.dns_name);
    }
    Ok(())
}

async fn run_machines(cmd: &MachineCommand) -> anyhow::Result<()> {
    let (MachineCommand::Create(margs)
    | MachineCommand::Delete(margs)
    | MachineCommand::Status(margs)) = cmd;
    let args = &margs.args;
    let docs = load(&args.file)?;
    let cluster = match &margs.cluster {
        Some(path) => cluster_of(&load(path)?, path)?,
        None => {
            cluster_of(&docs, &args.file).context("give the cluster spec with --cluster FILE")?
        }
    };
    if docs.machines.is_empty() {
        anyhow::bail!("{} holds no Machine document", args.file.display());
    }
    let target = target::connect(args, &cluster.spec.region).await?;
    let keeper = keeper(args, &target, &cluster)?;
    let bootstrap = match cmd {
        MachineCommand::Create(_) => {
            obtain(
                &keeper,
                &ClusterActuator::new(target.clients.clone()),
                &cluster,
            )
            .await?
        }
        MachineCommand::Delete(_) | MachineCommand::Status(_) => keeper.for_delete()?,
    };
    let actuator = MachineActuator::new(target.clients.clone(), bootstrap);
    let start = Instant::now();
    let timeout = Duration::from_secs(args.timeout);
    let mut rows = Vec::new();
    match cmd {
        MachineCommand::Create(_) => {
            let statuses =
                create_machines(&actuator, &cluster, &docs.machines, target.poll, timeout).await?;
            for (m, st) in docs.machines.iter().zip(&statuses) {
                rows.push(serde_json::json!({"machine": m.metadata.name, "status": st}));
                if args.output == Output::Text {
                    println!("{}", machine_line(m, st.as_ref(), false));
                }
            }
        }
        MachineCommand::Delete(_) => {
            for m in &docs.machines {
                actuator.delete(&cluster, m, None).await?;
                rows.push(serde_json::json!({"machine": m.metadata.name, "deleted": true}));
                if args.output == Output::Text {
                    println!("machine {} deleted", m.metadata.name);
                }
            }
        }
        MachineCommand::Status(_) => {
            for m in &docs.machines {
                let e = actuator.exists(&cluster, m, None).await?;
                if args.output == Output::Text {
                    println!(
                        "machine {}: {} {}{}",
                        m.metadata.name,
                        e.instance_id.as_deref().unwrap_or("no instance"),
                        e.state.as_deref().unwrap_or(""),
                        e.reason
                            .as_deref()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default()
                    );
                }
                rows.push(serde_json::json!({"machine": m.metadata.name, "exists": e}));
            }
        }
    }
    let calls = target.clients.calls.clone();
    if args.output == Output::Json {
        let json = serde_json::json!({
            "machines": rows,
            "apiCalls": calls.total(),
            "mutatingCalls": calls.mutating(),
            "elapsedMs": start.elapsed().as_millis(),
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!(
            "{} API calls ({} mutating) in {:.1} s",
            calls.total(),
            calls.mutating(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("capa: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let invalid = matches!(e.downcast_ref::<Error>(), Some(Error::InvalidSpec { .. }));
            // The provider's errors say all a person needs; the SDK's chain behind them is
            // for RUST_LOG=debug.
            if e.downcast_ref::<Error>().is_some() {
                eprintln!("capa: {e}");
                tracing::debug!("{e:?}");
            } else {
                eprintln!("capa: {e:#}");
            }
            ExitCode::from(if invalid { 2 } else { 1 })
        }
    }
}
