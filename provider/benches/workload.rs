//! The fake's cost under a whole-cluster SDK workload: the three-zone example cluster (26
//! resources) brought up and deleted again, over and over, by the provider's actuators through
//! the official SDK, against a fakeaws served over 127.0.0.1 as the standalone server serves
//! (`fakeaws::threaded`: one thread per core, each with a runtime of its own). The server
//! CPU per call is the CPU time the fake's threads used (`/proc/self/task/*/schedstat`: the
//! HTTP layer, request decoding, the service and the answer's encoding) divided by the calls
//! it answered. Also: wall time per cluster up and down, and the process's peak RSS.
//!
//! The workload runs on the provider's own runtime (two worker threads), and on a
//! one-thread client, as boto3 and the aws CLI drive AWS (one call after another). Then, when
//! `python3` has boto3, by boto3 itself from a process of its own (`boto3_cluster.py`: the
//! example cluster's resources made and deleted in the order the provider makes them), the
//! way the issue measured its reference figures; its floor is boto3's DescribeVpcs answered
//! by the canned handler. A Python client's call wakes the server once (strace of the
//! standalone server under boto3's DescribeVpcs: one `epoll_wait`, one `recvfrom`, one `writev`
//! per call), after about a millisecond of Python on the client: each call finds the server's
//! code and data cold, which the floor's figure and the fake's own time per call under boto3
//! (from its call log) both show.
//!
//! Under boto3 there is a second floor: the same canned answer from one thread on blocking
//! sockets, with no HTTP library, runtime or poller (`SocketFloor`): what the kernel alone
//! costs per call, so that the difference between the two floors is what the HTTP stack
//! (hyper, tokio, axum) costs at a Python client's pace.
//!
//! Beside each, the floor of that figure on this machine: the same HTTP stack
//! (`fakeaws::server::serve_app`, on the same threads) answering every request with a canned DescribeVpcs answer
//! (the body read, but no decoding, no state, no encoding), called as many times, one call
//! after another, by the same SDK client. What the fake costs above that floor is its own
//! work; the floor itself is the HTTP layer and the kernel (socket reads and writes, thread
//! wakeups), which no handler can spend less than.
//!
//! The clusters of a pass are measured in batches, then the floor in as many batches of as
//! many calls, and every figure is the median of its batches': the machine's speed drifts
//! (another VM on the host, its own housekeeping), and a burst of noise moves one batch
//! rather than the figure. (The floor's batches do not alternate with the fake's: a batch
//! that follows the floor's finds the fake's code and data cold, which measured about 10%
//! more server CPU per call than the same batches run back to back.)
//!
//! With each, how many times per call the server's threads were preempted (taken off their
//! CPU while they still had work, `nonvoluntary_ctxt_switches`), beside the floor's: a thread
//! preempted mid-call resumes later with colder caches, and on two cores that happens more
//! the longer each call keeps the server busy and the more client threads want the cores.
//!
//! Then the fake's own work alone, without sockets or threads: the requests of one cluster up
//! and down, as the SDK sent them (recorded in front of the fake's own router),
//! replayed into fresh fakes one after another in a loop, with the fake's code and data hot.
//! On a noisy machine this is the steadiest figure of what a change to the fake costs.
//!
//! With `--replay-only`, it records one cluster and replays it [`REPLAYS`] times, once, and
//! prints how many requests `Fake::handle` served in all (`handled` and the count): what
//! `cargo xtask bench` runs under callgrind, when valgrind is installed, for the instructions
//! the fake executes per request, a figure the machine's noise does not move.
//!
//! The process runs with the allocator of the standalone fakeaws server (mimalloc,
//! `fakeaws/src/main.rs`), so that the server CPU is the server's as it is shipped: the
//! issue's reference figures were measured against standalone servers.
//!
//! Prints `figure` lines (`cargo xtask bench` collects them). Under `cargo test --benches` (no
//! `--bench` argument) it runs one cluster, as a smoke check.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use provider::{Clients, ClusterActuator};

/// The standalone fakeaws server's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SERVER_THREADS: &str = "fakeaws-server";
const FLOOR_THREADS: &str = "canned-server";
const SOCKET_FLOOR_THREAD: &str = "socket-floor";

fn example() -> provider::spec::Cluster {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/cluster.yaml");
    provider::spec::parse(&std::fs::read_to_string(path).unwrap(), path).unwrap()
}

fn runtime(name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .unwrap()
}

/// The sum of `read` over this process's threads named `name`.
fn sum_over_threads(name: &str, read: impl Fn(&std::path::Path) -> Option<u64>) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        // The kernel keeps the first 15 bytes of a thread's name.
        if !name.starts_with(comm.trim()) || comm.trim().is_empty() {
            continue;
        }
        total += read(&dir).unwrap_or(0);
    }
    total
}

/// CPU time, in nanoseconds, used so far by this process's threads named `name`.
fn cpu_ns_of_threads(name: &str) -> u64 {
    sum_over_threads(name, |dir| {
        let stat = std::fs::read_to_string(dir.join("schedstat")).ok()?;
        stat.split_whitespace().next()?.parse().ok()
    })
}

/// How many times so far this process's threads named `name` were taken off their CPU while
/// they still had work (`nonvoluntary_ctxt_switches`): preempted by another thread, whose
/// run on that CPU leaves them colder caches when they resume.
fn preemptions_of_threads(name: &str) -> u64 {
    sum_over_threads(name, |dir| {
        let status = std::fs::read_to_string(dir.join("status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))?
            .trim()
            .parse()
            .ok()
    })
}

/// What this process's threads named `name` have used so far: CPU time and preemptions.
#[derive(Clone, Copy)]
struct Used {
    cpu_ns: u64,
    preempted: u64,
}

impl Used {
    fn now(name: &str) -> Self {
        Used {
            cpu_ns: cpu_ns_of_threads(name),
            preempted: preemptions_of_threads(name),
        }
    }

    /// Per call of `calls` made since `self` was taken: CPU in ms, and preemptions.
    fn per_call_since(self, name: &str, calls: usize) -> (f64, f64) {
        let now = Used::now(name);
        (
            (now.cpu_ns - self.cpu_ns) as f64 / 1e6 / calls as f64,
            (now.preempted - self.preempted) as f64 / calls as f64,
        )
    }
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024.0
}

/// Serves `app` as the standalone `fakeaws` serves: on threads of its own named `name`, one
/// per core, each with its own runtime (`fakeaws::threaded`).
fn serve(app: axum::Router, name: &str) -> fakeaws::threaded::Threaded {
    fakeaws::threaded::Threaded::on_loopback(app, name).unwrap()
}

/// A fake served as the standalone `fakeaws` serves it ([`serve`]), with a fresh account.
struct Served {
    _server: fakeaws::threaded::Threaded,
    endpoint: String,
    fake: fakeaws::Fake,
}

impl Served {
    fn start() -> Self {
        let fake = fakeaws::Fake::new(fakeaws::Config::default());
        let server = serve(fakeaws::server::router(fake.clone()), SERVER_THREADS);
        Served {
            endpoint: format!("http://{}", server.addr()),
            _server: server,
            fake,
        }
    }

    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn fake(&self) -> &fakeaws::Fake {
        &self.fake
    }
}

/// The canned answer of the floors: a fresh fake's DescribeVpcs (its default VPC), as XML.
fn canned_describe_vpcs() -> String {
    const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/ec2/aws4_request, \
                        SignedHeaders=host, Signature=0";
    let answer = fakeaws::Fake::new(fakeaws::Config::default()).handle(
        Some(AUTH),
        b"",
        b"Action=DescribeVpcs&Version=2016-11-15",
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body
}

/// The floor: the fake's HTTP stack (`fakeaws::server::serve_app`) served as the fake is
/// ([`serve`]), answering every request with a canned DescribeVpcs answer, and an SDK client for it.
struct Floor {
    _server: fakeaws::threaded::Threaded,
    endpoint: String,
    clients: Clients,
}

impl Floor {
    fn start() -> Self {
        let body = axum::body::Bytes::from(canned_describe_vpcs());
        let canned = axum::Router::new().fallback(move |_body: axum::body::Bytes| {
            let body = body.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "text/xml")], body) }
        });
        let server = serve(canned, FLOOR_THREADS);
        let endpoint = format!("http://{}", server.addr());
        Floor {
            _server: server,
            clients: Clients::for_endpoint(&endpoint, "us-east-1"),
            endpoint,
        }
    }

    /// `n` DescribeVpcs made one after another on `client`.
    fn describe(&self, client: &tokio::runtime::Runtime, n: usize) {
        client.block_on(async {
            for _ in 0..n {
                let out = self.clients.ec2.describe_vpcs().send().await.unwrap();
                assert_eq!(out.vpcs().len(), 1);
            }
        })
    }

    /// Server CPU per call, in ms, of `calls` made on `client`; and how many times per call
    /// the server's threads were preempted.
    fn per_call(&self, client: &tokio::runtime::Runtime, calls: usize) -> (f64, f64) {
        let before = Used::now(FLOOR_THREADS);
        self.describe(client, calls);
        before.per_call_since(FLOOR_THREADS, calls)
    }
}

/// The canned DescribeVpcs answer with no HTTP library, no runtime and no poller under it: one
/// thread with blocking sockets, taking one connection after another and answering each
/// request of it (its head read to the blank line, its body to its `Content-Length`) with the
/// same bytes. What a Python client's call costs the kernel (a wake, a read, a write) and
/// nothing else: the part of the floor no HTTP server can spend less than, beside which the
/// canned floor's figure shows what the HTTP stack (hyper, tokio, axum) costs under the same
/// calls.
struct SocketFloor {
    endpoint: String,
}

impl SocketFloor {
    fn start() -> Self {
        use std::io::{Read, Write};
        let body = canned_describe_vpcs();
        let mut response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/xml\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        response.extend_from_slice(body.as_bytes());
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        std::thread::Builder::new()
            .name(SOCKET_FLOOR_THREAD.to_string())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(mut stream) = stream else { continue };
                    let _ = stream.set_nodelay(true);
                    let mut buf = vec![0u8; 1 << 16];
                    let mut have = 0;
                    'requests: loop {
                        let (head_end, length) = loop {
                            if let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n")
                            {
                                let head =
                                    String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                                let length = head
                                    .lines()
                                    .find_map(|l| l.strip_prefix("content-length:"))
                                    .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                                break (end + 4, length);
                            }
                            match stream.read(&mut buf[have..]) {
                                Ok(0) | Err(_) => break 'requests,
                                Ok(n) => have += n,
                            }
                        };
                        while have < head_end + length {
                            match stream.read(&mut buf[have..]) {
                                Ok(0) | Err(_) => break 'requests,
                                Ok(n) => have += n,
                            }
                        }
                        buf.copy_within(head_end + length..have, 0);
                        have -= head_end + length;
                        if stream.write_all(&response).is_err() {
                            break;
                        }
                    }
                }
            })
            .unwrap();
        SocketFloor { endpoint }
    }
}

/// The median of `values` (the mean of the middle two when their number is even).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One request as the SDK sent it: its `Authorization` header, query string and body.
type Recorded = (Option<String>, String, axum::body::Bytes);

/// The requests of one cluster brought up and deleted by the provider through the SDK, served
/// by the fake's own router behind a layer that records each as it passes.
fn record_cluster(client: &tokio::runtime::Runtime) -> Vec<Recorded> {
    let recorded = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Recorded>::new()));
    let sink = recorded.clone();
    let record = move |request: axum::extract::Request, next: axum::middleware::Next| {
        let sink = sink.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, fakeaws::server::MAX_BODY)
                .await
                .unwrap();
            let authorization = parts
                .headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let query = parts.uri.query().unwrap_or_default().to_string();
            sink.lock()
                .unwrap()
                .push((authorization, query, body.clone()));
            next.run(axum::extract::Request::from_parts(parts, body.into()))
                .await
        }
    };
    let app = fakeaws::server::router(fakeaws::Fake::new(fakeaws::Config::default()))
        .layer(axum::middleware::from_fn(record));
    let addr = client.block_on(fakeaws::server::spawn_app(app)).unwrap();
    let a = ClusterActuator::new(Clients::for_endpoint(
        &format!("http://{addr}"),
        "us-east-1",
    ));
    let spec = example();
    client.block_on(async {
        while !a.reconcile(&spec).await.unwrap().is_done() {}
        while !a.delete(&spec).await.unwrap().is_done() {}
    });
    std::mem::take(&mut *recorded.lock().unwrap())
}

/// The fake's own time per call, in µs: `requests` handled by a fresh fake, `rounds` times
/// over; the best of five such runs.
fn replay_per_call(requests: &[Recorded], rounds: usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        replay(requests, rounds);
        let per_call = started.elapsed().as_secs_f64() * 1e6 / (rounds * requests.len()) as f64;
        best = best.min(per_call);
    }
    best
}

/// `requests` handled by a fresh fake, `rounds` times over.
fn replay(requests: &[Recorded], rounds: usize) {
    for _ in 0..rounds {
        let fake = fakeaws::Fake::new(fakeaws::Config::default());
        for (authorization, query, body) in requests {
            let answer = fake.handle(authorization.as_deref(), query.as_bytes(), body);
            assert!(answer.status < 500, "{}", answer.body);
            std::hint::black_box(answer);
        }
    }
}

/// One client's pass over the workload: `rounds` clusters up and down, in batches, then as
/// many calls to the floor in as many batches.
struct Pass {
    /// Server CPU per call, in ms: the median of the batches'.
    per_call: f64,
    /// The floor's server CPU per call, in ms: the median of its batches'.
    floor: f64,
    /// The fake above its floor, in ms: the difference of the two medians.
    above_floor: f64,
    /// How many times per call the server's threads were preempted (over all batches).
    preempted_per_call: f64,
    /// The same of the floor's.
    floor_preempted_per_call: f64,
    /// How many batches the figures are the medians of.
    batches: usize,
    /// Calls the fake answered (its call log).
    logged: usize,
    /// The fake's own time per call from its log, in ms.
    handled_per_call: f64,
    /// Wall time per cluster up and down, in ms.
    wall_per_cluster: f64,
    /// Calls the provider made per cluster.
    calls_per_cluster: u64,
}

/// How many batches a pass's clusters are measured in: the figures are their medians, so
/// that a burst of the machine's noise moves one batch, not the figure.
const BATCHES: usize = 8;

/// How many clusters each batch of a pass of `rounds` clusters holds: [`BATCHES`] batches
/// (fewer when there are fewer clusters), as even as the division allows.
fn batch_sizes(rounds: usize) -> Vec<usize> {
    let batches = BATCHES.min(rounds);
    (0..batches)
        .map(|batch| rounds / batches + usize::from(batch < rounds % batches))
        .collect()
}

/// The fake's own time in `log`'s calls, in microseconds, as its call log measures it (from
/// the decoded request to the encoded answer: lookups, the operation, the XML); prints the
/// operations that took most of it on stderr.
fn where_time_went(log: &[fakeaws::server::Call]) -> u64 {
    let handled: u64 = log.iter().map(|c| c.micros).sum();
    let mut by_action = std::collections::BTreeMap::<&str, (u64, u64)>::new();
    for c in log {
        let e = by_action.entry(&c.action).or_default();
        e.0 += 1;
        e.1 += c.micros;
    }
    let mut by_action: Vec<_> = by_action.into_iter().collect();
    by_action.sort_by_key(|(_, (_, micros))| std::cmp::Reverse(*micros));
    for (action, (n, micros)) in by_action.iter().take(8) {
        eprintln!(
            "{action:32} {n:6} calls {:8.1} µs each, {:4.1}% of the fake's time",
            *micros as f64 / *n as f64,
            100.0 * *micros as f64 / handled.max(1) as f64
        );
    }
    handled
}

/// Runs the workload on `client` against `fake`, and as many calls against `floor`: a
/// warm-up (connections, the zone lookup, the allocator), then `rounds` measured clusters
/// in [`BATCHES`] batches. Prints where the fake's time went.
fn pass(client: &tokio::runtime::Runtime, fake: &Served, floor: &Floor, rounds: usize) -> Pass {
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let a = ClusterActuator::new(clients.clone());
    let spec = example();
    let once = || {
        client.block_on(async {
            while !a.reconcile(&spec).await.unwrap().is_done() {}
            while !a.delete(&spec).await.unwrap().is_done() {}
        })
    };
    once();
    let calls_before = fake.fake().calls().len();
    let batches = batch_sizes(rounds);
    let (mut ours, mut floors, mut sizes) = (vec![], vec![], vec![]);
    let (mut preempted, mut floor_preempted) = (0.0, 0.0);
    let mut wall = std::time::Duration::ZERO;
    for &clusters in &batches {
        let logged_before = fake.fake().calls().len();
        let before = Used::now(SERVER_THREADS);
        let started = Instant::now();
        for _ in 0..clusters {
            once();
        }
        wall += started.elapsed();
        // The call log keeps the latest 100,000 calls: far more than these rounds make.
        let calls = fake.fake().calls().len() - logged_before;
        let (cpu, pre) = before.per_call_since(SERVER_THREADS, calls.max(1));
        ours.push(cpu);
        sizes.push(calls.max(1));
        preempted += pre * calls as f64;
    }
    // The floor, batch for batch: as many calls as each of the fake's batches answered.
    // (After the fake's, not between them: a batch that follows the floor's finds the fake's
    // code and data cold, which costs it more than a workload of its own would.)
    floor.describe(client, 100);
    for calls in sizes {
        let (floor_cpu, floor_pre) = floor.per_call(client, calls);
        floors.push(floor_cpu);
        floor_preempted += floor_pre * calls as f64;
    }
    let log = fake.fake().calls();
    let log = &log[calls_before..];
    let logged = log.len();
    let per_call = median(&ours);
    assert!(
        logged > 0 && per_call > 0.0,
        "no calls or no server CPU measured"
    );
    let handled = where_time_went(log);
    eprintln!("server CPU per call by batch (ms), fake: {ours:.4?}; floor: {floors:.4?}");
    Pass {
        per_call,
        floor: median(&floors),
        above_floor: per_call - median(&floors),
        preempted_per_call: preempted / logged.max(1) as f64,
        floor_preempted_per_call: floor_preempted / logged.max(1) as f64,
        batches: batches.len(),
        logged,
        handled_per_call: handled as f64 / 1e3 / logged as f64,
        wall_per_cluster: wall.as_secs_f64() * 1e3 / rounds as f64,
        calls_per_cluster: clients.calls.total() / (rounds as u64 + 1),
    }
}

/// The boto3 client (`boto3_cluster.py`), fed to `python3 -` on its standard input.
const BOTO3_CLIENT: &str = include_str!("boto3_cluster.py");

/// Whether this machine's `python3` has boto3.
fn boto3_installed() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import boto3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs the boto3 client against `endpoint` in a process of its own, in `mode` `cluster`
/// (clusters `first` to `first + n - 1` up and down) or `describe` (`n` DescribeVpcs); the
/// calls it made.
fn boto3(endpoint: &str, mode: &str, n: usize, first: usize) -> usize {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .arg("-")
        .args([endpoint, mode, &n.to_string(), &first.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(BOTO3_CLIENT.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the boto3 client failed: {}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("calls ")?.trim().parse().ok())
        .unwrap()
}

/// The boto3 client's pass: `rounds` clusters up and down against `fake`, in batches, each
/// batch a process of its own (after a warm-up cluster); then the floor, as many
/// DescribeVpcs from boto3 in as many batches. Server CPU per call: the medians of the
/// batches', the fake's and the floor's.
fn boto3_pass(fake: &Served, floor: &Floor, rounds: usize) -> (f64, f64, f64, usize, f64) {
    boto3(fake.endpoint(), "cluster", 1, 0);
    let calls_before = fake.fake().calls().len();
    let (mut ours, mut floors, mut sizes) = (vec![], vec![], vec![]);
    let mut first = 1;
    for clusters in batch_sizes(rounds) {
        let logged_before = fake.fake().calls().len();
        let before = Used::now(SERVER_THREADS);
        boto3(fake.endpoint(), "cluster", clusters, first);
        first += clusters;
        let calls = (fake.fake().calls().len() - logged_before).max(1);
        ours.push(before.per_call_since(SERVER_THREADS, calls).0);
        sizes.push(calls);
    }
    let log = fake.fake().calls();
    let log = &log[calls_before..];
    let handled_per_call = where_time_went(log) as f64 / 1e3 / log.len().max(1) as f64;
    boto3(&floor.endpoint, "describe", 100, 0);
    for &calls in &sizes {
        let before = Used::now(FLOOR_THREADS);
        let made = boto3(&floor.endpoint, "describe", calls, 0);
        floors.push(before.per_call_since(FLOOR_THREADS, made).0);
    }
    let sockets = SocketFloor::start();
    let mut bare = vec![];
    boto3(&sockets.endpoint, "describe", 100, 0);
    for &calls in &sizes {
        let before = Used::now(SOCKET_FLOOR_THREAD);
        let made = boto3(&sockets.endpoint, "describe", calls, 0);
        bare.push(before.per_call_since(SOCKET_FLOOR_THREAD, made).0);
    }
    eprintln!(
        "boto3 client, server CPU per call by batch (ms), fake: {ours:.4?}; floor: {floors:.4?}; \
         bare sockets: {bare:.4?}"
    );
    (
        median(&ours),
        median(&floors),
        median(&bare),
        sizes.iter().sum(),
        handled_per_call,
    )
}

/// How many times `--replay-only` replays the recorded cluster.
const REPLAYS: usize = 20;

fn main() {
    if std::env::args().any(|a| a == "--replay-only") {
        let client = runtime("provider");
        let requests = record_cluster(&client);
        replay(&requests, REPLAYS);
        // Recording served each request once too.
        println!("handled\t{}", (REPLAYS + 1) * requests.len());
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench { 40 } else { 1 };
    let fake = Served::start();

    // The provider as it runs: its runtime's two workers. (Each client has a floor of its
    // own: an SDK client's connections live on the runtime that made them.)
    let client = runtime("provider");
    let p = pass(&client, &fake, &Floor::start(), rounds);
    let logged = p.logged;
    println!(
        "figure\tworkload_server_cpu_per_call\t{:.4}\tms (median of {} batches; {logged} calls, \
         {rounds} clusters)\t<= 0.05",
        p.per_call, p.batches
    );
    println!(
        "figure\tworkload_floor_cpu_per_call\t{:.4}\tms (the HTTP stack answering a canned \
         DescribeVpcs, as many SDK calls after each batch; median)\t-",
        p.floor
    );
    println!(
        "figure\tworkload_fake_time_per_call\t{:.4}\tms (from the call log: the operation and \
         its answer)\t-",
        p.handled_per_call
    );
    println!(
        "figure\tworkload_server_cpu_per_call_above_floor\t{:.4}\tms (the fake's own work; \
         the medians' difference)\t-",
        p.above_floor
    );
    println!(
        "figure\tworkload_server_preemptions_per_call\t{:.3}\tper call (the server's threads \
         taken off their CPU with work left; the floor's {:.3})\t-",
        p.preempted_per_call, p.floor_preempted_per_call
    );
    println!(
        "figure\tworkload_cluster_up_and_down\t{:.1}\tms per cluster ({} calls each)\t-",
        p.wall_per_cluster, p.calls_per_cluster
    );

    // The same workload driven as boto3 and the aws CLI drive AWS, the way the issue's
    // reference figures were measured: one thread, one call after another. The server's
    // share of each call's wakeups is smaller when the client's thread is the one it wakes.
    let sequential = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A fake of its own, which starts as the first did (the first holds what its clusters
    // left: the terminated instances and deleted gateways AWS lists for an hour).
    let fresh = Served::start();
    let s = pass(&sequential, &fresh, &Floor::start(), rounds);
    println!(
        "figure\tworkload_server_cpu_per_call_sequential_client\t{:.4}\tms (median of {} \
         batches; {} calls, {rounds} clusters, a one-thread client)\t<= 0.05",
        s.per_call, s.batches, s.logged
    );
    println!(
        "figure\tworkload_floor_cpu_per_call_sequential_client\t{:.4}\tms (the canned \
         answer, the same one-thread client; median)\t-",
        s.floor
    );
    println!(
        "figure\tworkload_server_cpu_per_call_above_floor_sequential_client\t{:.4}\tms (the \
         fake's own work; the medians' difference)\t-",
        s.above_floor
    );
    println!(
        "figure\tworkload_server_preemptions_per_call_sequential_client\t{:.3}\tper call (the \
         floor's {:.3})\t-",
        s.preempted_per_call, s.floor_preempted_per_call
    );
    println!(
        "figure\tworkload_peak_rss\t{:.1}\tMiB (the process: fake and provider)\t-",
        peak_rss_mib()
    );

    // The same cluster driven by boto3 from a process of its own, as the reference
    // figures were measured (a Python tool's client, one call after another).
    if boto3_installed() {
        let fresh = Served::start();
        let (per_call, floor, bare, calls, handled) = boto3_pass(&fresh, &Floor::start(), rounds);
        println!(
            "figure\tworkload_server_cpu_per_call_boto3_client\t{per_call:.4}\tms (median of \
             {} batches; {calls} calls, {rounds} clusters, boto3 in a process of its own)\t<= \
             0.05",
            batch_sizes(rounds).len()
        );
        println!(
            "figure\tworkload_floor_cpu_per_call_boto3_client\t{floor:.4}\tms (the canned \
             answer, as many DescribeVpcs from boto3; median)\t-"
        );
        println!(
            "figure\tworkload_socket_floor_cpu_per_call_boto3_client\t{bare:.4}\tms (the canned \
             answer from blocking sockets, no HTTP library or runtime; as many DescribeVpcs \
             from boto3; median)\t-"
        );
        println!(
            "figure\tworkload_server_cpu_per_call_above_floor_boto3_client\t{:.4}\tms (the \
             fake's own work; the medians' difference)\t-",
            per_call - floor
        );
        println!(
            "figure\tworkload_fake_time_per_call_boto3_client\t{handled:.4}\tms (from the call \
             log: the operation and its answer, between a Python client's calls)\t-"
        );
    } else {
        eprintln!("python3 has no boto3: no boto3 client pass");
    }
    // The fake alone, hot: one cluster's requests replayed, each round into a fresh fake
    // (whose first request creates the region and its default VPC, as in the passes above).
    let requests = record_cluster(&client);
    let per_call = replay_per_call(&requests, if bench { 200 } else { 1 });
    println!(
        "figure\tworkload_replayed_fake_time_per_call\t{per_call:.2}\tµs (one cluster's {} \
         requests replayed into Fake::handle, hot, no sockets)\t-",
        requests.len()
    );
}
