//! The control endpoint as another language would use it: plain HTTP and JSON under
//! `/_fakeaws/`, while the official SDK talks to the same fake.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::net::TcpStream;

use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::error::ProvideErrorMetadata;
use serde_json::{Value, json};

/// One HTTP/1.1 request; the status and the JSON body of the answer.
fn http(addr: std::net::SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status: u16 = raw.split(' ').nth(1).unwrap().parse().unwrap();
    let (_, payload) = raw.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(payload).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_throttling_clock_calls_and_reset_over_http() {
    let fake = fakeaws::spawn().await.unwrap();
    let addr = fake.addr();
    let ec2 = aws_sdk_ec2::Client::from_conf(
        fake.ec2_client()
            .config()
            .to_builder()
            .retry_config(RetryConfig::disabled())
            .build(),
    );
    let call = move |method: &'static str, path: &'static str, body: Value| {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        tokio::task::spawn_blocking(move || http(addr, method, path, &body))
    };

    // A fault rule: the first CreateVpc answers a named error, and nothing is created.
    let (status, reply) = call(
        "POST",
        "/_fakeaws/faults",
        json!({
            "on": {"service": "ec2", "action": "CreateVpc"},
            "when": {"nth": {"n": 1, "times": 1}},
            "effect": {"error": {"code": "VpcLimitExceeded", "status": 400,
                                 "message": "The maximum number of VPCs has been reached."}}
        }),
    )
    .await
    .unwrap();
    assert_eq!((status, reply["rules"].clone()), (200, json!(1)));
    let err = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("VpcLimitExceeded"));
    ec2.create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap();
    let (_, calls) = call("GET", "/_fakeaws/calls", Value::Null).await.unwrap();
    let creates: Vec<Value> = calls
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "CreateVpc")
        .map(|c| c["error"].clone())
        .collect();
    assert_eq!(creates, [json!("VpcLimitExceeded"), Value::Null]);
    let (status, _) = call("DELETE", "/_fakeaws/faults", Value::Null)
        .await
        .unwrap();
    assert_eq!(status, 200);
    let (_, rules) = call("GET", "/_fakeaws/faults", Value::Null).await.unwrap();
    assert_eq!(rules, json!([]));

    // Throttling on, then off.
    call(
        "POST",
        "/_fakeaws/throttle",
        json!({"region": "us-east-1", "scale": 0.02}),
    )
    .await
    .unwrap();
    ec2.describe_vpcs().send().await.unwrap();
    let err = ec2.describe_vpcs().send().await.unwrap_err();
    assert_eq!(err.code(), Some("RequestLimitExceeded"));
    call(
        "POST",
        "/_fakeaws/throttle",
        json!({"region": "us-east-1", "scale": null}),
    )
    .await
    .unwrap();
    ec2.describe_vpcs().send().await.unwrap();

    // The clock of a standalone fake moves forward on request.
    let before = std::time::SystemTime::now();
    let (status, moved) = call(
        "POST",
        "/_fakeaws/clock",
        json!({"region": "us-east-1", "advanceSeconds": 7200}),
    )
    .await
    .unwrap();
    assert_eq!(status, 200);
    let now = aws_smithy_types::DateTime::from_str(
        moved["now"].as_str().unwrap(),
        aws_smithy_types::date_time::Format::DateTime,
    )
    .unwrap();
    let now = std::time::SystemTime::try_from(now).unwrap();
    assert!(now.duration_since(before).unwrap().as_secs() >= 7199);

    // Mistakes get a JSON error, and change nothing.
    let (status, reply) = call("POST", "/_fakeaws/faults", json!({"when": "sometimes"}))
        .await
        .unwrap();
    assert_eq!(status, 400, "{reply}");
    assert!(reply["error"].as_str().unwrap().contains("not valid"));
    let (status, _) = call(
        "POST",
        "/_fakeaws/clock",
        json!({"region": "Mars", "advanceSeconds": 1}),
    )
    .await
    .unwrap();
    assert_eq!(status, 400);
    let (status, _) = call("GET", "/_fakeaws/nothing", Value::Null).await.unwrap();
    assert_eq!(status, 404);

    // Reset: the account as it started.
    call("POST", "/_fakeaws/reset", Value::Null).await.unwrap();
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "only the default VPC again");
    assert_eq!(vpcs.vpcs()[0].is_default(), Some(true));
}

/// Sends a request of `head` (its request line and header lines) and `body` to `addr`, and
/// returns the whole answer. The server may answer and close before the whole body is sent.
fn send_large(addr: std::net::SocketAddr, head: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    let head = format!(
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body.as_bytes());
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

/// A body larger than the endpoint takes gets the service's own error shape (XML, its
/// envelope, 413), not a text answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_gets_an_aws_shaped_413() {
    let fake = fakeaws::spawn().await.unwrap();
    let addr = fake.addr();
    let answer = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        for service in ["ec2", "elasticloadbalancing"] {
            let body = format!(
                "Action=DescribeVpcs&Version=2016-11-15&Filler={}",
                "x".repeat(fakeaws::server::MAX_BODY + 1)
            );
            let head = format!(
                "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                 Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=00\r\n"
            );
            out.push(send_large(addr, &head, &body));
        }
        out
    })
    .await
    .unwrap();
    for (raw, root) in answer.iter().zip(["<Response>", "<ErrorResponse"]) {
        let status: u16 = raw.split(' ').nth(1).unwrap().parse().unwrap();
        assert_eq!(status, 413, "{raw}");
        assert!(
            raw.to_ascii_lowercase().contains("content-type: text/xml"),
            "{raw}"
        );
        assert!(raw.contains(root), "{raw}");
        assert!(raw.contains("<Code>RequestEntityTooLarge</Code>"), "{raw}");
    }
}

/// The control endpoint reads its path percent-decoded, and answers a body larger than the
/// endpoint takes with a JSON refusal (413), changing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_path_is_percent_decoded_and_its_body_limited() {
    let fake = fakeaws::spawn().await.unwrap();
    let addr = fake.addr();
    tokio::task::spawn_blocking(move || {
        let (status, rules) = http(addr, "GET", "/_fakeaws/fault%73", "");
        assert_eq!((status, rules), (200, json!([])));
        let (status, reply) = http(addr, "GET", "/_fakeaws/fault%FF", "");
        assert_eq!(status, 400, "{reply}");
        // A list of rules padded past the limit with spaces (valid JSON, were it taken).
        let rule = json!({"on": {"action": "CreateVpc"}, "effect": {"error": {
            "code": "VpcLimitExceeded", "status": 400, "message": "no"}}});
        let body = format!("[{rule}{}]", " ".repeat(fakeaws::server::MAX_BODY));
        let head = format!(
            "POST /_fakeaws/faults HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n"
        );
        let raw = send_large(addr, &head, &body);
        let status: u16 = raw.split(' ').nth(1).unwrap().parse().unwrap();
        assert_eq!(status, 413, "{raw}");
        let (_, payload) = raw.split_once("\r\n\r\n").unwrap();
        let reply: Value = serde_json::from_str(payload).unwrap();
        assert!(
            reply["error"].as_str().unwrap().contains("bytes"),
            "{reply}"
        );
        let (_, rules) = http(addr, "GET", "/_fakeaws/faults", "");
        assert_eq!(rules, json!([]), "the refused rule was not added");
    })
    .await
    .unwrap();
}

/// Sends one raw request with `extra` header lines to `addr` and returns the whole answer.
fn raw_request(addr: std::net::SocketAddr, service: &str, extra: &str) -> String {
    let body = "Action=DescribeVpcs&Version=2016-11-15";
    let mut s = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=00\r\n\
         {extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // The server may answer and close before the whole request is sent.
    let _ = s.write_all(head.as_bytes());
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

/// Headers larger, or more, than the endpoint takes get the service's own error shape (XML,
/// its envelope, 431), from a head just over the limit to one of 9 MiB, from one field too
/// many to thousands (the HTTP layer's own refusals, rewritten); a head within the limits is
/// served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_get_an_aws_shaped_431() {
    let fake = fakeaws::spawn().await.unwrap();
    let addr = fake.addr();
    let limit = fakeaws::server::MAX_HEADER_BYTES;
    let answers = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        for (service, root) in [
            ("ec2", "<Response>"),
            ("elasticloadbalancing", "<ErrorResponse"),
        ] {
            let fields =
                |n: usize| -> String { (0..n).map(|i| format!("X-Filler-{i}: x\r\n")).collect() };
            for extra in [
                format!("X-Filler: {}\r\n", "x".repeat(limit)),
                format!("X-Filler: {}\r\n", "x".repeat(3 * 1024 * 1024)),
                format!("X-Filler: {}\r\n", "x".repeat(9 * 1024 * 1024)),
                fields(fakeaws::server::MAX_HEADERS + 1),
                fields(5_000),
            ] {
                out.push((raw_request(addr, service, &extra), root));
            }
        }
        // Within the limits: served.
        let ok = raw_request(
            addr,
            "ec2",
            &format!("X-Filler: {}\r\n", "x".repeat(limit / 2)),
        );
        (out, ok)
    })
    .await
    .unwrap();
    let (refused, ok) = answers;
    for (raw, root) in &refused {
        let status: u16 = raw.split(' ').nth(1).unwrap_or("0").parse().unwrap_or(0);
        assert_eq!(status, 431, "{}", &raw[..raw.len().min(300)]);
        assert!(
            raw.to_ascii_lowercase().contains("content-type: text/xml"),
            "{raw}"
        );
        assert!(raw.contains(root), "{raw}");
        assert!(
            raw.contains("<Code>RequestHeaderSectionTooLarge</Code>"),
            "{raw}"
        );
    }
    assert!(
        ok.starts_with("HTTP/1.1 200"),
        "{}",
        &ok[..ok.len().min(300)]
    );
    assert!(ok.contains("<DescribeVpcsResponse"), "{ok}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spot_interruption_over_http() {
    use aws_sdk_ec2::types::{InstanceMarketOptionsRequest, InstanceType, MarketType};
    let fake = fakeaws::spawn().await.unwrap();
    let addr = fake.addr();
    let ec2 = fake.ec2_client();
    let call = move |path: &'static str, body: Value| {
        tokio::task::spawn_blocking(move || http(addr, "POST", path, &body.to_string()))
    };
    let image = ec2
        .describe_images()
        .owners("self")
        .owners("amazon")
        .owners("819546954734")
        .send()
        .await
        .unwrap()
        .images()[0]
        .image_id()
        .unwrap()
        .to_string();
    let launched = ec2
        .run_instances()
        .image_id(image)
        .instance_type(InstanceType::T3Medium)
        .min_count(1)
        .max_count(1)
        .instance_market_options(
            InstanceMarketOptionsRequest::builder()
                .market_type(MarketType::Spot)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let id = launched.instances()[0].instance_id().unwrap().to_string();
    let state = |ec2: aws_sdk_ec2::Client, id: String| async move {
        ec2.describe_instances()
            .instance_ids(id)
            .send()
            .await
            .unwrap()
            .reservations()[0]
            .instances()[0]
            .state()
            .unwrap()
            .name()
            .unwrap()
            .as_str()
            .to_string()
    };

    // Refused, naming why, and nothing changes: a price interruption of a request with no
    // maximum price, an unknown reason, a made-up region.
    let (status, reply) = call(
        "/_fakeaws/spot-interruption",
        json!({"region": "us-east-1", "instanceIds": [id], "reason": "price"}),
    )
    .await
    .unwrap();
    assert_eq!(status, 400, "{reply}");
    assert!(
        reply["error"]
            .as_str()
            .unwrap()
            .contains("no maximum price")
    );
    let (status, _) = call(
        "/_fakeaws/spot-interruption",
        json!({"region": "us-east-1", "instanceIds": [id], "reason": "weather"}),
    )
    .await
    .unwrap();
    assert_eq!(status, 400);
    let (status, _) = call(
        "/_fakeaws/spot-interruption",
        json!({"region": "xx-nowhere-1", "instanceIds": [id]}),
    )
    .await
    .unwrap();
    assert_eq!(status, 400);
    assert_eq!(state(ec2.clone(), id.clone()).await, "running");

    // Interrupted for capacity (the default reason): terminated once its notice is over.
    let (status, reply) = call(
        "/_fakeaws/spot-interruption",
        json!({"region": "us-east-1", "instanceIds": [id]}),
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["terminatesInSeconds"], json!(120));
    assert_eq!(state(ec2.clone(), id.clone()).await, "running");
    call(
        "/_fakeaws/clock",
        json!({"region": "us-east-1", "advanceSeconds": 120}),
    )
    .await
    .unwrap();
    // Shutting down, or already terminated: the step after is due by the next request.
    let now = state(ec2.clone(), id.clone()).await;
    assert!(now == "shutting-down" || now == "terminated", "{now}");
    assert_eq!(state(ec2.clone(), id.clone()).await, "terminated");
    // In AWS's words, to the second, whatever the real clock's milliseconds.
    let described = ec2
        .describe_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    let why = described.reservations()[0].instances()[0]
        .state_transition_reason()
        .unwrap()
        .to_string();
    let when = why
        .strip_prefix("Service initiated (")
        .and_then(|w| w.strip_suffix(" GMT)"))
        .unwrap_or_else(|| panic!("{why}"));
    assert!(
        when.len() == 19 && when.as_bytes()[10] == b' ' && !when.contains('.'),
        "{why}"
    );
}
