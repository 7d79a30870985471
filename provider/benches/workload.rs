//! The fake's cost under a whole-cluster SDK workload: the three-zone example cluster (26
//! resources) brought up and deleted again, over and over, by the provider's actuators through
//! the official SDK, against a fakeaws served over 127.0.0.1 on threads of its own. The server
//! CPU per call is the CPU time the fake's threads used (`/proc/self/task/*/schedstat`: the
//! HTTP layer, request decoding, the service and the answer's encoding) divided by the calls
//! it answered. Also: wall time per cluster up and down, and the process's peak RSS.
//!
//! Prints `figure` lines (`cargo xtask bench` collects them). Under `cargo test --benches` (no
//! `--bench` argument) it runs one cluster, as a smoke check.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use provider::{Clients, ClusterActuator};

const SERVER_THREADS: &str = "fakeaws-server";

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

/// CPU time, in nanoseconds, used so far by this process's threads named `name`.
fn cpu_ns_of_threads(name: &str) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        // The kernel keeps the first 15 bytes of a thread's name.
        if !name.starts_with(comm.trim()) || comm.trim().is_empty() {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("schedstat")).unwrap_or_default();
        total += stat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
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

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench { 40 } else { 1 };
    let server = runtime(SERVER_THREADS);
    let client = runtime("provider");
    let fake = server.block_on(fakeaws::spawn()).unwrap();
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let a = ClusterActuator::new(clients.clone());
    let spec = example();
    let once = || {
        client.block_on(async {
            while !a.reconcile(&spec).await.unwrap().is_done() {}
            while !a.delete(&spec).await.unwrap().is_done() {}
        })
    };
    // A warm-up: connections, the zone lookup, the allocator.
    once();
    let calls_before = fake.fake().calls().len();
    let cpu_before = cpu_ns_of_threads(SERVER_THREADS);
    let started = Instant::now();
    for _ in 0..rounds {
        once();
    }
    let wall = started.elapsed();
    let cpu = cpu_ns_of_threads(SERVER_THREADS) - cpu_before;
    // The call log keeps the latest 100,000 calls: far more than these rounds make.
    let calls = clients.calls.total();
    let logged = fake.fake().calls().len() - calls_before;
    assert!(logged > 0 && cpu > 0, "no calls or no server CPU measured");
    println!(
        "figure\tworkload_server_cpu_per_call\t{:.4}\tms ({logged} calls, {rounds} clusters)\t<= 0.05",
        cpu as f64 / 1e6 / logged as f64
    );
    println!(
        "figure\tworkload_cluster_up_and_down\t{:.1}\tms per cluster ({} calls each)\t-",
        wall.as_secs_f64() * 1e3 / rounds as f64,
        calls / (rounds as u64 + 1)
    );
    println!(
        "figure\tworkload_peak_rss\t{:.1}\tMiB (the process: fake and provider)\t-",
        peak_rss_mib()
    );
}
