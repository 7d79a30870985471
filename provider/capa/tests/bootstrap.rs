//! The example cluster's machines as the programs that consume them see them: each
//! machine's user data, read back from the fake (DescribeInstanceAttribute), rendered by the
//! real cloud-init (`cloud-init devel render`, with EC2-shaped instance data for that
//! instance), validated by `cloud-init schema`, and its kubeadm documents checked against each
//! other (one init; every join presents init's token, pins init's CA, names the load
//! balancer; control planes fetch init's certificate key); the CA pin recomputed by
//! `openssl`; `capa kubeconfig` read by `kubectl` and its client certificate verified by
//! `openssl verify`; the PKI kept between runs, and a live cluster whose PKI is lost refused.
//! cloud-init, openssl and kubectl are Debian's packages (`.ci/run` installs them).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aws_sdk_ec2::types::{Filter, InstanceAttributeName};
use serde_yaml_ng::Value;

fn capa(args: &[&str], state_home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capa"))
        .args(args)
        .env_remove("RUST_LOG")
        .env("XDG_STATE_HOME", state_home)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .output()
        .expect("capa runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cluster-with-machines.yaml")
}

fn scratch(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("capa-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `program` with `args`, which must succeed; its standard output.
fn tool(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} (Debian's package; .ci/run installs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The pin kubeadm computes, by openssl: the SHA-256 of the certificate's public key (DER).
fn openssl_pin(cert: &Path, dir: &Path) -> String {
    let pubkey = dir.join("pub.pem");
    let der = dir.join("pub.der");
    std::fs::write(
        &pubkey,
        tool(
            "openssl",
            &["x509", "-pubkey", "-noout", "-in", cert.to_str().unwrap()],
        ),
    )
    .unwrap();
    tool(
        "openssl",
        &[
            "pkey",
            "-pubin",
            "-in",
            pubkey.to_str().unwrap(),
            "-outform",
            "der",
            "-out",
            der.to_str().unwrap(),
        ],
    );
    let digest = tool("openssl", &["dgst", "-sha256", "-r", der.to_str().unwrap()]);
    format!("sha256:{}", digest.split_whitespace().next().unwrap())
}

struct Rendered {
    name: String,
    hostname: String,
    ip: String,
    files: BTreeMap<String, (String, String)>,
    kubeadm: Vec<Value>,
}

/// Every machine of cluster `demo` (not the bastion), its user data rendered by cloud-init
/// with its own instance data and validated by `cloud-init schema`.
async fn rendered_machines(ec2: &aws_sdk_ec2::Client, dir: &Path) -> Vec<Rendered> {
    let f = |k: &str, v: &[&str]| {
        let mut b = Filter::builder().name(k);
        for x in v {
            b = b.values(*x);
        }
        b.build()
    };
    let d = ec2
        .describe_instances()
        .filters(f("tag:kubernetes.io/cluster/demo", &["owned"]))
        .filters(f(
            "tag:sigs.k8s.io/cluster-api-provider-aws/role",
            &["controlplane", "node"],
        ))
        .filters(f("instance-state-name", &["pending", "running"]))
        .send()
        .await
        .unwrap();
    let mut out = Vec::new();
    for i in d.reservations().iter().flat_map(|r| r.instances()) {
        let id = i.instance_id().unwrap();
        let name = i
            .tags()
            .iter()
            .find(|t| t.key() == Some("Name"))
            .and_then(|t| t.value())
            .unwrap()
            .to_string();
        let hostname = i.private_dns_name().unwrap().to_string();
        let ip = i.private_ip_address().unwrap().to_string();
        let attr = ec2
            .describe_instance_attribute()
            .instance_id(id)
            .attribute(InstanceAttributeName::UserData)
            .send()
            .await
            .unwrap();
        let raw =
            provider::machine::user_data::decode(attr.user_data().and_then(|u| u.value()).unwrap())
                .unwrap();
        assert!(raw.starts_with("## template: jinja\n#cloud-config\n"));
        let user_data = dir.join(format!("{name}.user-data"));
        std::fs::write(&user_data, &raw).unwrap();
        let instance_data = dir.join(format!("{name}.instance-data.json"));
        std::fs::write(
            &instance_data,
            serde_json::json!({
                "ds": {"meta_data": {
                    "instance-id": id,
                    "local-hostname": hostname,
                    "local-ipv4": ip,
                    "placement": {"availability-zone": i.placement().and_then(|p| p.availability_zone()).unwrap_or_default()},
                }},
                "v1": {
                    "cloud_name": "aws", "platform": "ec2", "instance_id": id,
                    "local_hostname": hostname, "region": "us-east-1",
                },
            })
            .to_string(),
        )
        .unwrap();
        let rendered = tool(
            "cloud-init",
            &[
                "devel",
                "render",
                user_data.to_str().unwrap(),
                "--instance-data",
                instance_data.to_str().unwrap(),
            ],
        );
        assert!(!rendered.contains("{{"), "{name}: unrendered template");
        let rendered_path = dir.join(format!("{name}.rendered"));
        std::fs::write(&rendered_path, &rendered).unwrap();
        tool(
            "cloud-init",
            &["schema", "--config-file", rendered_path.to_str().unwrap()],
        );
        let doc: Value = serde_yaml_ng::from_str(&rendered).unwrap();
        let files: BTreeMap<String, (String, String)> = doc["write_files"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    (
                        f["permissions"].as_str().unwrap().to_string(),
                        f["content"].as_str().unwrap().to_string(),
                    ),
                )
            })
            .collect();
        let config = &files["/run/kubeadm/kubeadm.yaml"].1;
        let kubeadm: Vec<Value> = serde_yaml_ng::Deserializer::from_str(config)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
        out.push(Rendered {
            name,
            hostname,
            ip,
            files,
            kubeadm,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

const PKI: [&str; 8] = [
    "ca.crt",
    "ca.key",
    "front-proxy-ca.crt",
    "front-proxy-ca.key",
    "etcd/ca.crt",
    "etcd/ca.key",
    "sa.key",
    "sa.pub",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_clusters_machines_bootstrap_one_kubernetes_cluster() {
    let fake = fakeaws::spawn().await.unwrap();
    let endpoint = fake.endpoint().to_string();
    let home = scratch("bootstrap-home");
    let work = scratch("bootstrap-work");
    let file = example();
    let run = {
        let home = home.clone();
        move |args: Vec<String>| {
            let home = home.clone();
            tokio::task::spawn_blocking(move || {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                capa(&refs, &home)
            })
        }
    };
    let args = |verb: &str, extra: &[&str]| {
        let mut v = vec![
            verb.to_string(),
            "-f".into(),
            file.to_str().unwrap().to_string(),
            "--endpoint".into(),
            endpoint.clone(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };

    // Before: every condition says what is missing, machines included.
    let before = run(args("status", &[])).await.unwrap();
    let b = text(&before.stdout);
    assert!(
        b.contains("  Machines         not ready: machine demo-cp-0 is not created"),
        "{b}"
    );
    assert!(
        b.contains("  VPC              not ready: to do: create vpc"),
        "{b}"
    );
    let up = run(args("up", &[])).await.unwrap();
    assert!(up.status.success(), "{}", text(&up.stderr));
    let after = run(args("status", &[])).await.unwrap();
    let a = text(&after.stdout);
    assert!(a.contains("  Machines         ready"), "{a}");
    assert!(!a.contains("not ready"), "{a}");
    let state = home.join("capa/us-east-1/demo");
    for f in PKI {
        let meta = std::fs::metadata(state.join("pki").join(f)).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{f}");
    }
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(
        std::fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let kept = std::fs::read_to_string(state.join("bootstrap.json")).unwrap();
    let kept: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let token = kept["token"].as_str().unwrap().to_string();
    let certificate_key = kept["certificateKey"].as_str().unwrap().to_string();
    for secret in [&token, &certificate_key] {
        assert!(!text(&up.stdout).contains(secret.as_str()));
        assert!(!text(&up.stderr).contains(secret.as_str()));
    }

    let dns = fake
        .elb_client()
        .describe_load_balancers()
        .load_balancer_names("demo-apiserver")
        .send()
        .await
        .unwrap()
        .load_balancer_descriptions()[0]
        .dns_name()
        .unwrap()
        .to_string();
    let machines = rendered_machines(&fake.ec2_client(), &work).await;
    assert_eq!(machines.len(), 5);

    // Exactly one init, carrying the PKI; its CA's pin, as openssl computes it.
    let inits: Vec<&Rendered> = machines
        .iter()
        .filter(|m| m.kubeadm[0]["kind"] == "InitConfiguration")
        .collect();
    let [init] = inits.as_slice() else {
        panic!("{} init machines", inits.len());
    };
    for f in PKI {
        let (mode, _) = &init.files[&format!("/etc/kubernetes/pki/{f}")];
        let secret = f.ends_with(".key");
        assert_eq!(mode, if secret { "0600" } else { "0644" }, "{f}");
    }
    let ca = work.join("init-ca.crt");
    std::fs::write(&ca, &init.files["/etc/kubernetes/pki/ca.crt"].1).unwrap();
    let pin = openssl_pin(&ca, &work);
    let kept_ca = std::fs::read_to_string(state.join("pki/ca.crt")).unwrap();
    assert_eq!(kept_ca, init.files["/etc/kubernetes/pki/ca.crt"].1);
    let init_conf = &init.kubeadm[0];
    assert_eq!(
        init_conf["bootstrapTokens"][0]["token"].as_str(),
        Some(token.as_str())
    );
    assert_eq!(
        init_conf["certificateKey"].as_str(),
        Some(certificate_key.as_str())
    );
    assert_eq!(
        init.kubeadm[1]["controlPlaneEndpoint"].as_str(),
        Some(format!("{dns}:6443").as_str())
    );
    assert_eq!(
        init_conf["nodeRegistration"]["name"].as_str(),
        Some(init.hostname.as_str())
    );
    assert_eq!(
        init_conf["localAPIEndpoint"]["advertiseAddress"].as_str(),
        Some(init.ip.as_str())
    );

    // Every join: init's token, init's CA pinned, the load balancer, its own name and address;
    // control planes init's certificate key; no CA key anywhere.
    let mut joined_control_planes = 0;
    for m in machines.iter().filter(|m| m.name != init.name) {
        let j = &m.kubeadm[0];
        assert_eq!(j["kind"], "JoinConfiguration", "{}", m.name);
        assert!(
            m.files
                .keys()
                .all(|p| !p.starts_with("/etc/kubernetes/pki")),
            "{} carries PKI files",
            m.name
        );
        let bt = &j["discovery"]["bootstrapToken"];
        assert_eq!(bt["token"].as_str(), Some(token.as_str()), "{}", m.name);
        assert_eq!(
            bt["apiServerEndpoint"].as_str(),
            Some(format!("{dns}:6443").as_str())
        );
        let hashes: Vec<&str> = bt["caCertHashes"]
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            hashes.contains(&pin.as_str()),
            "{}: {hashes:?} vs {pin}",
            m.name
        );
        assert_eq!(
            j["nodeRegistration"]["name"].as_str(),
            Some(m.hostname.as_str())
        );
        let node_ip = j["nodeRegistration"]["kubeletExtraArgs"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "node-ip")
            .and_then(|a| a["value"].as_str());
        assert_eq!(node_ip, Some(m.ip.as_str()), "{}", m.name);
        if m.name.contains("-cp-") {
            joined_control_planes += 1;
            let cp = &j["controlPlane"];
            assert_eq!(
                cp["certificateKey"].as_str(),
                Some(certificate_key.as_str())
            );
            assert_eq!(
                cp["localAPIEndpoint"]["advertiseAddress"].as_str(),
                Some(m.ip.as_str())
            );
        } else {
            assert!(j["controlPlane"].is_null(), "{}", m.name);
        }
    }
    assert_eq!(joined_control_planes, 2);

    // An admin kubeconfig: kubectl reads it; its client certificate is the CA's.
    let kubeconfig = work.join("admin.kubeconfig");
    let out = run(args("kubeconfig", &["-o", kubeconfig.to_str().unwrap()]))
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::metadata(&kubeconfig).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let view = tool(
        "kubectl",
        &[
            "config",
            "view",
            "--raw",
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ],
    );
    let view: serde_json::Value = serde_json::from_str(&view).unwrap();
    assert_eq!(
        view["clusters"][0]["cluster"]["server"].as_str(),
        Some(format!("https://{dns}:6443").as_str())
    );
    let b64 =
        |v: &serde_json::Value| aws_smithy_types::base64::decode(v.as_str().unwrap()).unwrap();
    let ca_pem = work.join("kubeconfig-ca.pem");
    let client_pem = work.join("kubeconfig-client.pem");
    std::fs::write(
        &ca_pem,
        b64(&view["clusters"][0]["cluster"]["certificate-authority-data"]),
    )
    .unwrap();
    std::fs::write(
        &client_pem,
        b64(&view["users"][0]["user"]["client-certificate-data"]),
    )
    .unwrap();
    assert_eq!(openssl_pin(&ca_pem, &work), pin);
    let verified = tool(
        "openssl",
        &[
            "verify",
            "-CAfile",
            ca_pem.to_str().unwrap(),
            client_pem.to_str().unwrap(),
        ],
    );
    assert!(verified.contains(": OK"), "{verified}");
    let subject = tool(
        "openssl",
        &[
            "x509",
            "-noout",
            "-subject",
            "-in",
            client_pem.to_str().unwrap(),
        ],
    );
    assert!(subject.contains("O = system:masters"), "{subject}");

    // A second up reuses the PKI: the same CA, nothing to change.
    let again = run(args("up", &["--output", "json"])).await.unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
    let json: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(json["mutatingCalls"], 0);
    let ca_again = work.join("ca-again.crt");
    std::fs::copy(state.join("pki/ca.crt"), &ca_again).unwrap();
    assert_eq!(openssl_pin(&ca_again, &work), pin);

    // The PKI lost while the cluster lives: refused before any change, no new CA made.
    let aside = home.join("aside");
    std::fs::rename(&state, &aside).unwrap();
    fake.fake().take_calls();
    let refused = run(args("up", &[])).await.unwrap();
    assert!(!refused.status.success());
    let err = text(&refused.stderr);
    assert!(err.contains("exists") && err.contains("PKI"), "{err}");
    assert!(fake.fake().take_calls().iter().all(|c| !c.is_mutating()));
    assert!(!state.exists(), "no new PKI was made");

    // Put back: down says where it stays; --forget-pki deletes it.
    std::fs::rename(&aside, &state).unwrap();
    let down = run(args("down", &[])).await.unwrap();
    assert!(down.status.success(), "{}", text(&down.stderr));
    assert!(
        text(&down.stderr).contains("stays in"),
        "{}",
        text(&down.stderr)
    );
    assert!(state.join("pki/ca.key").exists());
    let forget = run(args("down", &["--forget-pki"])).await.unwrap();
    assert!(forget.status.success(), "{}", text(&forget.stderr));
    assert!(!state.exists());
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_embedded_fake_leaves_nothing_in_the_state_directory() {
    let home = scratch("embedded-home");
    let out = capa(&["up", "-f", example().to_str().unwrap()], &home);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("5 machines"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&home);
}
