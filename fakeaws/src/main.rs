//! The standalone fakeaws server: `fakeaws --port 4566`.

use clap::Parser;

/// mimalloc rather than the system's allocator: serving a request allocates and frees many
/// small strings (the form's values, the answer's records and XML), and mimalloc's per-thread
/// free lists serve them with less CPU than glibc's malloc (`provider/benches/workload.rs`,
/// which runs the fake with this allocator, measures it). In-process fakes
/// (`fakeaws::spawn`) use whatever allocator their program has.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A fake AWS EC2 + classic ELB endpoint for tests and local development.
#[derive(Parser)]
#[command(name = "fakeaws", version)]
struct Args {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 4566)]
    port: u16,
    /// Start regions without a default VPC.
    #[arg(long)]
    no_default_vpc: bool,
    /// The account id owning every resource.
    #[arg(long, default_value = "123456789012")]
    account_id: String,
    /// The seed of generated ids and of probable faults.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Verify every request's SigV4 signature against these credentials (repeatable); without
    /// any, every signature passes.
    #[arg(long = "credentials", value_name = "ACCESS_KEY:SECRET", value_parser = credential)]
    credentials: Vec<(String, String)>,
    /// A bad day to play: `calm` (the default: nothing fails), `storm` (AWS's throttling,
    /// consistency windows of seconds, 5% 500s, lost answers, latency), or a JSON file: a
    /// profile (`{"throttling", "consistency", "rules"}`) or fault rules in the control
    /// endpoint's format (`POST /_fakeaws/faults`).
    #[arg(long, value_name = "PROFILE|FILE")]
    faults: Option<String>,
    /// Throttle requests with EC2's token buckets, at this scale of AWS's figures (1.0: AWS's
    /// own).
    #[arg(long, value_name = "SCALE")]
    throttle: Option<f64>,
    /// Keep the account in this file: read at start when it exists (a file that is not a
    /// complete fakeaws state is refused, never replaced), saved atomically after every
    /// change and at shutdown.
    #[arg(long, value_name = "PATH")]
    state_file: Option<std::path::PathBuf>,
    /// Raise (or lower) a quota from AWS's default, as Service Quotas would: NAME=N
    /// (repeatable; names in README: vpcs, subnets-per-vpc, elastic-ips, instances, ...).
    #[arg(long = "quota", value_name = "NAME=N", value_parser = quota)]
    quotas: Vec<(String, usize)>,
    /// Serve this region too, beside AWS's own (repeatable); any other name is refused.
    #[arg(long = "region", value_name = "NAME", value_parser = region_name)]
    regions: Vec<String>,
    /// Bring a range of the account's to a region (BYOIP): REGION=CIDR, a public IPv4 range
    /// (a /24 or larger) as a pool of Elastic IPs (`AllocateAddress --public-ipv4-pool`), or
    /// an IPv6 one (a /56 or larger, global unicast) as a pool of VPC blocks (`CreateVpc
    /// --ipv6-pool`) (repeatable; at most five a region). Brought when the region is first
    /// made, so not into a region a state file already holds.
    #[arg(long = "byoip-cidr", value_name = "REGION=CIDR", value_parser = byoip_cidr)]
    byoip: Vec<fakeaws::ec2::public_ipv4_pool::ByoipCidr>,
    /// How many threads serve (each connection is served by one of them); default: one per
    /// core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

fn quota(raw: &str) -> Result<(String, usize), String> {
    let (name, n) = raw
        .split_once('=')
        .ok_or_else(|| format!("{raw:?} is not NAME=N"))?;
    let n: usize = n
        .parse()
        .map_err(|_| format!("{raw:?}: {n:?} is not a number"))?;
    // The name is checked against the quotas here, before the server starts.
    fakeaws::region::Limits::default().set(name, n)?;
    Ok((name.to_string(), n))
}

fn region_name(raw: &str) -> Result<String, String> {
    if fakeaws::server::is_region_shaped(raw) {
        Ok(raw.to_string())
    } else {
        Err(format!(
            "{raw:?} is not shaped like a region name (such as us-east-1)"
        ))
    }
}

fn byoip_cidr(raw: &str) -> Result<fakeaws::ec2::public_ipv4_pool::ByoipCidr, String> {
    let b: fakeaws::ec2::public_ipv4_pool::ByoipCidr = raw.parse()?;
    region_name(&b.region)?;
    Ok(b)
}

fn credential(raw: &str) -> Result<(String, String), String> {
    match raw.split_once(':') {
        Some((key, secret)) if !key.is_empty() && !secret.is_empty() => {
            Ok((key.to_string(), secret.to_string()))
        }
        _ => Err(format!("{raw:?} is not ACCESS_KEY:SECRET")),
    }
}

fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let profile = match &args.faults {
        None => fakeaws::sim::profile::Profile::calm(),
        Some(which) => match fakeaws::sim::profile::Profile::load(which) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("fakeaws: --faults: {e}");
                std::process::exit(2);
            }
        },
    };
    let mut config = fakeaws::Config {
        default_vpc: !args.no_default_vpc,
        account_id: args.account_id,
        seed: args.seed,
        credentials: args.credentials.into_iter().collect(),
        extra_regions: args.regions,
        byoip: args.byoip,
        ..fakeaws::Config::default()
    }
    .with_profile(profile);
    if let Err(e) = config.check() {
        eprintln!("fakeaws: --byoip-cidr: {e}");
        std::process::exit(2);
    }
    if args.throttle.is_some() {
        config.throttling = args.throttle;
    }
    for (name, n) in &args.quotas {
        if let Err(e) = config.limits.set(name, *n) {
            eprintln!("fakeaws: --quota: {e}");
            std::process::exit(2);
        }
    }
    let fake = match &args.state_file {
        None => fakeaws::Fake::new(config),
        Some(path) => match fakeaws::Fake::with_state_file(config, path) {
            Ok(fake) => fake,
            Err(e) => {
                eprintln!("fakeaws: --state-file: {e}");
                std::process::exit(2);
            }
        },
    };
    let threads = args
        .threads
        .map_or_else(fakeaws::threaded::default_threads, usize::from);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            // Caught from before the endpoint is printed: a stop right after it still saves.
            let stop = stop_signal()?;
            let app = fakeaws::server::router(fake.clone());
            let server = match start(&args.host, args.port, app, threads) {
                Ok(server) => server,
                Err(e) => {
                    eprintln!("fakeaws: cannot listen on {}:{}: {e}", args.host, args.port);
                    std::process::exit(1);
                }
            };
            println!("fakeaws listening on http://{}", server.addr());
            stop.await;
            server.stop()
        })?;
    if let Err(e) = fake.save() {
        eprintln!("fakeaws: {e}");
        std::process::exit(1);
    }
    eprintln!("fakeaws stopped");
    Ok(())
}

/// Serves `app` on the first address `host` names (an IP address, or a name that resolves to
/// some) that takes it, with `port`.
fn start(
    host: &str,
    port: u16,
    app: axum::Router,
    threads: usize,
) -> std::io::Result<fakeaws::threaded::Threaded> {
    use std::net::ToSocketAddrs;
    let mut last = std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{host:?} names no address"),
    );
    for addr in (host, port).to_socket_addrs()? {
        match fakeaws::threaded::Threaded::start(addr, app.clone(), threads, "fakeaws") {
            Ok(server) => return Ok(server),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM; the handlers are in place once it returns.
#[cfg(unix)]
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
    })
}

/// Completes on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
