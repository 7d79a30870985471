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
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(fakeaws::spawn()).unwrap();
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let a = ClusterActuator::new(clients.clone());
    let spec = example();

    rt.block_on(async {
        up(&a, &spec).await;
        eprintln!(
            "create: {} API calls, {} mutating: {:?}",
            clients.calls.total(),
            clients.calls.mutating(),
            clients.calls.by_operation()
        );
        clients.calls.reset();
        a.reconcile(&spec).await.unwrap();
        eprintln!(
            "steady-state reconcile: {} API calls, {} mutating",
            clients.calls.total(),
            clients.calls.mutating()
        );
        clients.calls.reset();
        down(&a, &spec).await;
        eprintln!(
            "delete: {} API calls, {} mutating: {:?}",
            clients.calls.total(),
            clients.calls.mutating(),
            clients.calls.by_operation()
        );
    });

    let mut group = c.benchmark_group("cluster");
    group.sample_size(10);
    group.bench_function("cluster_up_and_down_3_zones", |b| {
        b.iter(|| {
            rt.block_on(async {
                up(&a, &spec).await;
                down(&a, &spec).await;
            })
        })
    });
    rt.block_on(up(&a, &spec));
    group.bench_function("cluster_steady_state_reconcile", |b| {
        b.iter(|| rt.block_on(async { a.reconcile(&spec).await.unwrap() }))
    });
    group.finish();
}

criterion_group!(benches, cluster);
criterion_main!(benches);
