//! A whole cluster (the three-zone example: 26 resources) reconciled to ready and deleted
//! again against the in-process fake, through the SDK over 127.0.0.1; and a steady-state
//! reconcile of it. Prints the API call counts of a create and of a steady-state reconcile.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use provider::{Clients, ClusterActuator};

fn example() -> provider::spec::Cluster {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/cluster.yaml");
    provider::spec::parse(&std::fs::read_to_string(path).unwrap(), path).unwrap()
}

async fn up(a: &ClusterActuator, c: &provider::spec::Cluster) {
    while !a.reconcile(c).await.unwrap().is_done() {}
}

async fn down(a: &ClusterActuator, c: &provider::spec::Cluster) {
    while !a.delete(c).await.unwrap().is_done() {}
}

fn cluster(c: &mut Criterion) {
    // In process as `#[tokio::test]` runs it: the provider and the fake on one thread, so a
    // request and its answer wake no other thread.
    let one = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The same beside it on two worker threads, where each request and answer crosses
    // threads (a wakeup costs tens of microseconds on a small VM).
    let two = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let spec = example();
    let mut group = c.benchmark_group("cluster");
    group.sample_size(10);
    for (rt, suffix, counts) in [(&one, "", true), (&two, "_2_threads", false)] {
        let fake = rt.block_on(fakeaws::spawn()).unwrap();
        let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
        let a = ClusterActuator::new(clients.clone());
        if counts {
            print_counts(rt, &a, &clients, &spec);
        }
        group.bench_function(format!("cluster_up_and_down_3_zones{suffix}"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    up(&a, &spec).await;
                    down(&a, &spec).await;
                })
            })
        });
        rt.block_on(up(&a, &spec));
        group.bench_function(format!("cluster_steady_state_reconcile{suffix}"), |b| {
            b.iter(|| rt.block_on(async { a.reconcile(&spec).await.unwrap() }))
        });
        rt.block_on(down(&a, &spec));
    }
    group.finish();
}

/// Prints the calls of a create, a steady-state reconcile and a delete.
fn print_counts(
    rt: &tokio::runtime::Runtime,
    a: &ClusterActuator,
    clients: &Clients,
    spec: &provider::spec::Cluster,
) {
    rt.block_on(async {
        up(a, spec).await;
        eprintln!(
            "create: {} API calls, {} mutating: {:?}",
            clients.calls.total(),
            clients.calls.mutating(),
            clients.calls.by_operation()
        );
        clients.calls.reset();
        a.reconcile(spec).await.unwrap();
        eprintln!(
            "steady-state reconcile: {} API calls, {} mutating: {:?}",
            clients.calls.total(),
            clients.calls.mutating(),
            clients.calls.by_operation()
        );
        clients.calls.reset();
        down(a, spec).await;
        eprintln!(
            "delete: {} API calls, {} mutating: {:?}",
            clients.calls.total(),
            clients.calls.mutating(),
            clients.calls.by_operation()
        );
    });
}

criterion_group!(benches, cluster);
criterion_main!(benches);
