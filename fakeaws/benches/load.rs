//! DescribeVpcs under concurrent load, beside its ceiling: the standalone server's HTTP stack
//! (`fakeaws::server::serve_app` on `fakeaws::threaded`'s threads, as `fakeaws` serves) with a
//! bare axum handler that answers every request with the fake's own DescribeVpcs answer,
//! canned. Both are loaded in the same run by the same load generator (16 keep-alive HTTP/1.1
//! connections from hyper's client, each sending its next request when the last is answered),
//! in alternating rounds (11 of 2 s each, the order swapped every round), so the ratio of
//! their medians holds on a noisy machine where the absolute figures don't.
//!
//! Prints `figure` lines (`cargo xtask bench` collects them). Under `cargo test --benches` (no
//! `--bench` argument) it runs one short round of each, as a smoke check.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};

const CONNECTIONS: usize = 16;
const BODY: &str = "Action=DescribeVpcs&Version=2016-11-15";
const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/ec2/aws4_request, \
                    SignedHeaders=content-type;host;x-amz-date, Signature=0";

fn runtime(name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .unwrap()
}

/// Serves `app` on 127.0.0.1 as the standalone server serves (`fakeaws::threaded`: one
/// thread per core, each with a runtime of its own) until the process ends.
fn start(app: axum::Router) -> fakeaws::threaded::Threaded {
    fakeaws::threaded::Threaded::on_loopback(app, "server").unwrap()
}

/// One connection's requests until `until`; the answers' bodies, read whole, are checked.
async fn connection(addr: SocketAddr, until: Instant, expect: usize) -> u64 {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let mut n = 0;
    while Instant::now() < until {
        let request = hyper::Request::post("/")
            .header("host", addr.to_string())
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-amz-date", "20261201T000000Z")
            .header("authorization", AUTH)
            .body(Full::new(Bytes::from_static(BODY.as_bytes())))
            .unwrap();
        let answer = sender.send_request(request).await.unwrap();
        assert_eq!(answer.status(), 200);
        let body = answer.into_body().collect().await.unwrap().to_bytes();
        // The request id differs from answer to answer; the length hardly does.
        assert!(body.len().abs_diff(expect) < 16, "{body:?}");
        n += 1;
    }
    n
}

/// Requests per second `addr` answers over `CONNECTIONS` connections for `each`.
fn load(client: &tokio::runtime::Runtime, addr: SocketAddr, each: Duration, expect: usize) -> f64 {
    client.block_on(async {
        let start = Instant::now();
        let until = start + each;
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|_| tokio::spawn(connection(addr, until, expect)))
            .collect();
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        total as f64 / start.elapsed().as_secs_f64()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let (rounds, each) = if bench {
        (11, Duration::from_secs(2))
    } else {
        (1, Duration::from_millis(200))
    };
    let client = runtime("load");

    let fake = fakeaws::Fake::new(fakeaws::Config::default());
    let canned = fake.handle(Some(AUTH), b"", BODY.as_bytes());
    assert_eq!(canned.status, 200, "{}", canned.body);
    let canned_body = Bytes::from(canned.body.clone());
    let expect = canned_body.len();
    let fake_server = start(fakeaws::server::router(fake));
    let fake_addr = fake_server.addr();
    let ceiling = axum::Router::new().fallback(move |_body: Bytes| {
        let body = canned_body.clone();
        async move { ([(axum::http::header::CONTENT_TYPE, "text/xml")], body) }
    });
    let ceiling_server = start(ceiling);
    let ceiling_addr = ceiling_server.addr();

    // A warm-up of each, then alternating rounds.
    load(&client, fake_addr, each / 4, expect);
    load(&client, ceiling_addr, each / 4, expect);
    let (mut fake_rates, mut ceiling_rates) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Which goes first changes from round to round, so that neither always follows the
        // other (and inherits what it left: connections closing, caches, the scheduler).
        if round % 2 == 0 {
            fake_rates.push(load(&client, fake_addr, each, expect));
            ceiling_rates.push(load(&client, ceiling_addr, each, expect));
        } else {
            ceiling_rates.push(load(&client, ceiling_addr, each, expect));
            fake_rates.push(load(&client, fake_addr, each, expect));
        }
    }
    // Each round's rate, to show how much the machine moved during the run.
    eprintln!("rounds, req/s: fake {fake_rates:.0?}, ceiling {ceiling_rates:.0?}");
    let (f, c) = (median(fake_rates), median(ceiling_rates));
    println!("figure\tdescribe_vpcs_16_connections_fake\t{f:.0}\treq/s\t-");
    println!("figure\tdescribe_vpcs_16_connections_ceiling\t{c:.0}\treq/s\t-");
    println!(
        "figure\tdescribe_vpcs_16_connections_ratio\t{:.3}\tof the ceiling\t>= 0.75",
        f / c
    );
}
