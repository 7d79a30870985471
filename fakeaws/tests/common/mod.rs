//! What the tests of the standalone binary share: starting it, and clients of it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};

/// Starts the binary with `args`; the child and the endpoint it prints.
pub fn start(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fakeaws"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let endpoint = line
        .trim()
        .strip_prefix("fakeaws listening on ")
        .expect(&line)
        .to_string();
    (child, endpoint)
}

/// Kills the binary at once (`SIGKILL`: no shutdown, no last save) and waits for it.
pub fn kill_9(child: &mut Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// An EC2 client for `region` at `endpoint`, with any credentials.
pub fn ec2_at(endpoint: &str, region: &str) -> aws_sdk_ec2::Client {
    let conf = aws_sdk_ec2::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .credentials_provider(Credentials::new("any", "thing", None, None, "test"))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_ec2::Client::from_conf(conf)
}

/// The body of a GET of `path` at `endpoint` (`http://host:port`).
pub fn http_get(endpoint: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = endpoint.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// A fresh path for a state file named `name` (nothing there yet).
pub fn state_file(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("standalone-state");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.json"));
    let _ = std::fs::remove_file(&file);
    file
}
