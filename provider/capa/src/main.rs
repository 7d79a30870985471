//! `capa`: reconcile (`up`), delete (`down`), inspect (`status`) or preview (`plan`) a
//! cluster from its spec file. By default against an embedded fakeaws started in-process, so
//! a new user sees a whole cluster come up without an AWS account; `--endpoint URL` for a
//! standalone fakeaws (or any AWS-compatible endpoint); `--aws` for real AWS through the
//! standard credential chain.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use provider::MachineActuator;
use provider::cluster::{ClusterStatus, Outcome};
use provider::machine::{MachineOutcome, MachineStatus};
use provider::spec::{Cluster, Documents, Machine};
use provider::{Clients, ClusterActuator, Error};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    Text,
    Json,
}

/// Prints progress events (target `capa::progress`) as plain lines on stderr.
struct Progress;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Progress {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if event.metadata().target() != "capa::progress" {
            return;
        }
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    let _ = write!(self.0, "{value:?}");
                } else {
                    let _ = write!(self.0, " {}={value:?}", field.name());
                }
            }
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        eprintln!("  · {}", m.0);
    }
}

fn init_logging() {
    // RUST_LOG adds ordinary log lines (e.g. RUST_LOG=provider=debug); progress is always on.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::registry()
        .with(Progress)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter),
        )
        .try_init();
}

use tracing_subscriber::Layer as _;

struct Target {
    clients: Clients,
    /// Kept alive while capa runs.
    _embedded: Option<fakeaws::FakeAws>,
    poll: Duration,
}

async fn target(args: &Args, region: &str) -> anyhow::Result<Target> {
    if args.aws {
        return Ok(Target {
            clients: Clients::from_environment(region).await,
            _embedded: None,
            poll: Duration::from_secs(15),
        });
    }
    if let Some(url) = &args.endpoint {
        return Ok(Target {
            clients: Clients::for_endpoint(url, region),
            _embedded: None,
            poll: Duration::from_millis(500),
        });
    }
    let fake = fakeaws::spawn()
        .await
        .context("starting the embedded fakeaws")?;
    eprintln!(
        "capa: using an embedded fakeaws at {} (its state lives only while capa runs; \
         --endpoint URL for a standalone fakeaws, --aws for real AWS)",
        fake.endpoint()
    );
    Ok(Target {
        clients: Clients::for_endpoint(fake.endpoint(), region),
        _embedded: Some(fake),
        poll: Duration::from_millis(20),
    })
}

fn load(path: &PathBuf) -> anyhow::Result<Documents> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(provider::spec::parse_documents(
        &text,
        &path.display().to_string(),
    )?)
}

fn cluster_of(docs: &Documents, path: &Path) -> anyhow::Result<Cluster> {
    docs.cluster.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "{} holds no Cluster document (kind: Cluster)",
            path.display()
        )
    })
}

fn count(status: &ClusterStatus) -> (usize, usize) {
    let mut owned = 0;
    let mut existing = 0;
    let mut add = |managed: bool| {
        if managed {
            owned += 1;
        } else {
            existing += 1;
        }
    };
    for r in status.vpc.iter().chain(&status.internet_gateway) {
        add(r.managed);
    }
    for s in &status.subnets {
        add(s.managed);
    }
    for _ in &status.nat_gateways {
        add(true);
        add(true);
    }
    for _ in &status.route_tables {
        add(true);
    }
    for g in status.security_groups.values() {
        add(g.managed);
    }
    if let Some(b) = &status.bastion {
        add(b.managed);
    }
    if let Some(l) = &status.load_balancer {
        add(l.managed);
    }
    (owned, existing)
}

fn tree(status: &ClusterStatus) -> String {
    let tag = |managed: bool| if managed { "owned" } else { "pre-existing" };
    let mut t = String::new();
    if let Some(v) = &status.vpc {
        let _ = writeln!(
            t,
            "vpc {} {} [{}]",
            v.id,
            status.vpc_cidr.as_deref().unwrap_or_default(),
            tag(v.managed)
        );
    }
    if let Some(g) = &status.internet_gateway {
        let _ = writeln!(t, "├─ internet gateway {} [{}]", g.id, tag(g.managed));
    }
    for s in &status.subnets {
        let _ = writeln!(
            t,
            "├─ subnet {} {} {} {} [{}]",
            s.id,
            s.cidr,
            s.zone,
            if s.public { "public" } else { "private" },
            tag(s.managed)
        );
        for r in status.route_tables.iter().filter(|r| r.subnet_id == s.id) {
            let _ = writeln!(
                t,
                "│  └─ route table {} 0.0.0.0/0 -> {} [owned]",
                r.id,
                r.default_route.as_deref().unwrap_or("(none yet)")
            );
        }
        for n in status.nat_gateways.iter().filter(|n| n.subnet_id == s.id) {
            let _ = writeln!(
                t,
                "│  └─ nat gateway {} ({}) eip {} for {} [owned]",
                n.id, n.state, n.allocation_id, n.zone
            );
        }
    }
    for (role, g) in &status.security_groups {
        let _ = writeln!(
            t,
            "├─ security group {} {} [{}]",
            role.as_str(),
            g.id,
            tag(g.managed)
        );
    }
    if let Some(b) = &status.bastion {
        let _ = writeln!(
            t,
            "├─ bastion {} {} {} [{}]",
            b.id,
            b.state,
            b.public_ip.as_deref().unwrap_or(""),
            tag(b.managed)
        );
    }
    if let Some(l) = &status.load_balancer {
        let _ = writeln!(
            t,
            "├─ load balancer {} {} {} [{}]",
            l.name,
            l.scheme,
            l.dns_name,
            tag(l.managed)
        );
    }
    t
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
        let outcome = if delete {
            actuator.delete(cluster).await?
        } else {
            actuator.reconcile(cluster).await?
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

fn machine_line(m: &Machine, st: Option<&MachineStatus>, last: bool) -> String {
    let glyph = if last { "└─" } else { "├─" };
    match st {
        Some(st) => format!(
            "{glyph} machine {} ({}) {} {} {} {}[owned]",
            m.metadata.name,
            m.spec.role.as_str(),
            st.instance_id,
            st.state,
            st.private_ip.as_deref().unwrap_or(""),
            if st.in_load_balancer {
                "in load balancer "
            } else {
                ""
            }
        ),
        None => format!("{glyph} machine {} (no instance)", m.metadata.name),
    }
}

async fn create_machines(
    actuator: &MachineActuator,
    cluster: &Cluster,
    machines: &[Machine],
    poll: Duration,
    timeout: Duration,
) -> Result<Vec<Option<MachineStatus>>, Error> {
    let start = Instant::now();
    let mut statuses: Vec<Option<MachineStatus>> = vec![None; machines.len()];
    loop {
        let mut waiting = Vec::new();
        let batch: Vec<(&Machine, Option<&MachineStatus>)> = machines
            .iter()
            .zip(statuses.iter())
            .map(|(m, st)| (m, st.as_ref()))
            .collect();
        let outcomes: Vec<MachineOutcome> = actuator.create_all(cluster, &batch).await?;
        for (st, o) in statuses.iter_mut().zip(outcomes) {
            *st = o.status;
            waiting.extend(o.waiting);
        }
        if waiting.is_empty() {
            return Ok(statuses);
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

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Machine(cmd) = &cli.command {
        return run_machines(cmd).await;
    }
    let (Command::Up(args) | Command::Down(args) | Command::Status(args) | Command::Plan(args)) =
        &cli.command
    else {
        return Ok(());
    };
    let docs = load(&args.file)?;
    let cluster = cluster_of(&docs, &args.file)?;
    let target = target(args, &cluster.spec.region).await?;
    let actuator = ClusterActuator::new(target.clients.clone());
    let start = Instant::now();
    let timeout = Duration::from_secs(args.timeout);
    let machines = MachineActuator::new(target.clients.clone());
    let mut machine_status: Vec<Option<MachineStatus>> = vec![None; docs.machines.len()];
    let (verb, outcome) = match &cli.command {
        Command::Up(_) => {
            let o = drive(&actuator, &cluster, target.poll, timeout, false).await?;
            machine_status =
                create_machines(&machines, &cluster, &docs.machines, target.poll, timeout).await?;
            ("up", o)
        }
        Command::Down(_) => {
            for m in &docs.machines {
                machines.delete(&cluster, m, None).await?;
            }
            (
                "down",
                drive(&actuator, &cluster, target.poll, timeout, true).await?,
            )
        }
        Command::Status(_) => ("status", actuator.plan(&cluster).await?),
        _ => ("plan", actuator.plan(&cluster).await?),
    };
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
            if verb == "up" {
                let n = docs.machines.len();
                for (i, (m, st)) in docs.machines.iter().zip(&machine_status).enumerate() {
                    println!("{}", machine_line(m, st.as_ref(), i + 1 == n));
                }
            }
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
    let target = target(args, &cluster.spec.region).await?;
    let actuator = MachineActuator::new(target.clients.clone());
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
                        "machine {}: {} {}",
                        m.metadata.name,
                        e.instance_id.as_deref().unwrap_or("no instance"),
                        e.state.as_deref().unwrap_or("")
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
