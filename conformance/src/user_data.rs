//! What each live machine of a cluster was booted with, read back from AWS
//! (DescribeInstanceAttribute `userData`) and decoded here, independently of the provider:
//! base64, then gzip, then a cloud-init document that cloud-init renders as a jinja template
//! (`## template: jinja`, then `#cloud-config`) and that writes kubeadm's configuration and
//! runs kubeadm.
//!
//! Checked, for every pending or running machine the cluster owns:
//! - the user data is there, decodes (and the provider, which shows it in `capa machine
//!   status`, reads it back the same), and is a `#cloud-config` mapping behind the jinja
//!   header, with `write_files` and a `runcmd` that runs kubeadm once, `init` or `join`;
//! - the kubeadm configuration is written to one file, readable by root alone (it holds the
//!   bootstrap token and the certificate key), and parses as kubeadm.k8s.io/v1beta4
//!   documents: InitConfiguration and ClusterConfiguration for `kubeadm init` (which also
//!   uploads the certificates), JoinConfiguration alone for `kubeadm join`;
//! - an init carries the cluster's CAs (certificate and key for each) under
//!   `/etc/kubernetes/pki`, keys readable by root alone, and is a control plane; its cluster
//!   is the cluster's name, its control-plane endpoint and certificate SANs the API load
//!   balancer's DNS name (port 6443); a join carries no file of the PKI, finds the API
//!   server at the load balancer's DNS name, and only a control-plane join has a
//!   `controlPlane` part (with a certificate key);
//! - the machines agree with each other: at most one init; every join presents the init's
//!   bootstrap token and pins (among its `caCertHashes`) the public key of the init's CA, and
//!   a control-plane join fetches the certificates with the init's certificate key.

use std::collections::BTreeMap;
use std::io::Read as _;

use aws_sdk_ec2::types::InstanceAttributeName;
use provider::ownership::{self, ROLE_KEY};
use provider::spec::Cluster;
use rcgen::PublicKeyData as _;
use serde_yaml_ng::Value;

use crate::topology::f;
use crate::{Failure, aws_failure};

/// Where the provider promises to write kubeadm's configuration (its machine docs).
const KUBEADM_CONFIG: &str = "/run/kubeadm/kubeadm.yaml";
/// Where kubeadm keeps the cluster's PKI.
const PKI_DIR: &str = "/etc/kubernetes/pki/";
/// The CAs an init machine brings, so that every join's pin holds.
const CAS: [&str; 4] = ["ca", "front-proxy-ca", "etcd/ca", "sa"];

fn fail(instance: &str, message: String) -> Failure {
    Failure::Check(format!("user data of {instance}: {message}"))
}

/// One machine's user data, decoded and read.
struct Boot {
    instance: String,
    control_plane: bool,
    init: bool,
    token: String,
    certificate_key: Option<String>,
    ca_cert_hashes: Vec<String>,
    /// The CA key PEM (init only).
    ca_key: Option<String>,
}

/// Checks the user data of every live machine `cluster` owns (see the module docs).
pub async fn check(clients: &provider::Clients, cluster: &Cluster) -> Result<(), Failure> {
    let ec2 = &clients.ec2;
    let name = &cluster.metadata.name;
    let lb_name = crate::topology::api_load_balancer_name(cluster);
    let machines = ec2
        .describe_instances()
        .filters(f(
            &format!("tag:{}", ownership::cluster_key(name)),
            &["owned"],
        ))
        .filters(f(&format!("tag:{ROLE_KEY}"), &["controlplane", "node"]))
        .filters(f("instance-state-name", &["pending", "running"]))
        .send()
        .await
        .map_err(aws_failure("DescribeInstances"))?;
    let instances: Vec<(String, bool)> = machines
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter_map(|i| {
            let role = i
                .tags()
                .iter()
                .find(|t| t.key() == Some(ROLE_KEY))
                .and_then(|t| t.value());
            Some((i.instance_id()?.to_string(), role == Some("controlplane")))
        })
        .collect();
    if instances.is_empty() {
        return Ok(());
    }
    let lbs = clients
        .elb
        .describe_load_balancers()
        .load_balancer_names(&lb_name)
        .send()
        .await
        .map_err(aws_failure("DescribeLoadBalancers"))?;
    let endpoint = lbs
        .load_balancer_descriptions()
        .first()
        .and_then(|l| l.dns_name())
        .ok_or_else(|| Failure::Check(format!("machines run, but no load balancer {lb_name}")))?
        .to_string();
    let mut boots = Vec::new();
    for (id, control_plane) in instances {
        let a = ec2
            .describe_instance_attribute()
            .instance_id(&id)
            .attribute(InstanceAttributeName::UserData)
            .send()
            .await
            .map_err(aws_failure("DescribeInstanceAttribute"))?;
        let data = a
            .user_data()
            .and_then(|v| v.value())
            .ok_or_else(|| fail(&id, "none".into()))?;
        let text = decode(&id, data)?;
        // `capa machine status` shows user data through the provider's own reading of it.
        if provider::machine::user_data::decode(data).ok().as_deref() != Some(text.as_str()) {
            return Err(fail(&id, "the provider reads it back differently".into()));
        }
        boots.push(read(&id, control_plane, &text, &endpoint, name)?);
    }
    agree(&boots)
}

/// base64, then gzip.
fn decode(id: &str, data: &str) -> Result<String, Failure> {
    let raw =
        aws_smithy_types::base64::decode(data).map_err(|e| fail(id, format!("not base64: {e}")))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_string(&mut text)
        .map_err(|e| fail(id, format!("not gzipped text: {e}")))?;
    Ok(text)
}

fn s<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut v = v;
    for k in path {
        v = v.get(*k)?;
    }
    v.as_str()
}

/// Reads and checks one machine's decoded user data.
fn read(
    id: &str,
    control_plane: bool,
    text: &str,
    endpoint: &str,
    cluster: &str,
) -> Result<Boot, Failure> {
    let Some(body) = text.strip_prefix("## template: jinja\n#cloud-config\n") else {
        let head: String = text.lines().take(2).collect::<Vec<_>>().join("\\n");
        return Err(fail(
            id,
            format!("does not begin with the jinja header and #cloud-config, but {head:?}"),
        ));
    };
    let doc: Value = serde_yaml_ng::from_str(body)
        .map_err(|e| fail(id, format!("the cloud-config is not YAML: {e}")))?;
    let mut files: BTreeMap<String, (String, String)> = BTreeMap::new();
    for file in doc
        .get("write_files")
        .and_then(Value::as_sequence)
        .ok_or_else(|| fail(id, "no write_files list".into()))?
    {
        let path = s(file, &["path"]).unwrap_or_default().to_string();
        let mode = s(file, &["permissions"]).unwrap_or_default().to_string();
        let content = s(file, &["content"]).unwrap_or_default().to_string();
        if files.insert(path.clone(), (mode, content)).is_some() {
            return Err(fail(id, format!("writes {path} twice")));
        }
    }
    let commands: Vec<Vec<String>> = doc
        .get("runcmd")
        .and_then(Value::as_sequence)
        .ok_or_else(|| fail(id, "no runcmd list".into()))?
        .iter()
        .map(|c| {
            c.as_sequence()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let kubeadm: Vec<&Vec<String>> = commands
        .iter()
        .filter(|c| c.first().map(String::as_str) == Some("kubeadm"))
        .collect();
    let [command] = kubeadm[..] else {
        return Err(fail(id, format!("runs kubeadm {} times", kubeadm.len())));
    };
    let init = match command.get(1).map(String::as_str) {
        Some("init") => true,
        Some("join") => false,
        other => return Err(fail(id, format!("runs kubeadm {other:?}"))),
    };
    let has = |a: &str| command.iter().any(|x| x == a);
    let config_at = command
        .iter()
        .position(|x| x == "--config")
        .and_then(|p| command.get(p + 1));
    if config_at.map(String::as_str) != Some(KUBEADM_CONFIG) || (init && !has("--upload-certs")) {
        return Err(fail(id, format!("runs {command:?}")));
    }
    let Some((mode, config)) = files.get(KUBEADM_CONFIG) else {
        return Err(fail(id, format!("does not write {KUBEADM_CONFIG}")));
    };
    if mode != "0600" {
        return Err(fail(
            id,
            format!("writes {KUBEADM_CONFIG} with mode {mode}"),
        ));
    }
    let mut docs: BTreeMap<String, Value> = BTreeMap::new();
    for d in serde_yaml_ng::Deserializer::from_str(config) {
        let v = <Value as serde::Deserialize>::deserialize(d)
            .map_err(|e| fail(id, format!("the kubeadm configuration is not YAML: {e}")))?;
        if v.is_null() {
            continue;
        }
        if s(&v, &["apiVersion"]) != Some("kubeadm.k8s.io/v1beta4") {
            return Err(fail(
                id,
                format!("a kubeadm document of {:?}", v.get("apiVersion")),
            ));
        }
        let kind = s(&v, &["kind"]).unwrap_or_default().to_string();
        if docs.insert(kind.clone(), v).is_some() {
            return Err(fail(id, format!("two {kind} documents")));
        }
    }
    let kinds: Vec<&str> = docs.keys().map(String::as_str).collect();
    let want: &[&str] = if init {
        &["ClusterConfiguration", "InitConfiguration"]
    } else {
        &["JoinConfiguration"]
    };
    if kinds != want {
        return Err(fail(
            id,
            format!("kubeadm {} with the documents {kinds:?}", command[1]),
        ));
    }
    let api = format!("{endpoint}:6443");
    let pki: Vec<&String> = files.keys().filter(|p| p.starts_with(PKI_DIR)).collect();
    if init {
        if !control_plane {
            return Err(fail(id, "a worker node runs kubeadm init".into()));
        }
        let c = &docs["ClusterConfiguration"];
        let i = &docs["InitConfiguration"];
        if s(c, &["clusterName"]) != Some(cluster) {
            return Err(fail(
                id,
                format!("clusterName {:?}", s(c, &["clusterName"])),
            ));
        }
        if s(c, &["controlPlaneEndpoint"]) != Some(api.as_str()) {
            return Err(fail(
                id,
                format!(
                    "controlPlaneEndpoint {:?}, not {api}",
                    s(c, &["controlPlaneEndpoint"])
                ),
            ));
        }
        let sans: Vec<&str> = c
            .get("apiServer")
            .and_then(|a| a.get("certSANs"))
            .and_then(Value::as_sequence)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !sans.contains(&endpoint) {
            return Err(fail(id, format!("certSANs {sans:?} lack {endpoint}")));
        }
        for ca in CAS {
            for (ext, secret) in [("crt", false), ("key", true)] {
                let path = format!("{PKI_DIR}{ca}.{}", if ca == "sa" { sa(ext) } else { ext });
                match files.get(&path) {
                    None => return Err(fail(id, format!("an init without {path}"))),
                    Some((mode, _)) if secret && mode != "0600" => {
                        return Err(fail(id, format!("writes {path} with mode {mode}")));
                    }
                    Some(_) => {}
                }
            }
        }
        let token = i
            .get("bootstrapTokens")
            .and_then(Value::as_sequence)
            .and_then(|t| t.first())
            .and_then(|t| s(t, &["token"]))
            .unwrap_or_default();
        if !is_token(token) {
            return Err(fail(
                id,
                format!("the bootstrap token {token:?} is not one"),
            ));
        }
        let key = s(i, &["certificateKey"]).unwrap_or_default();
        if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(fail(
                id,
                "the certificate key is not 32 bytes of hex".into(),
            ));
        }
        Ok(Boot {
            instance: id.to_string(),
            control_plane,
            init,
            token: token.to_string(),
            certificate_key: Some(key.to_string()),
            ca_cert_hashes: Vec::new(),
            ca_key: files.get(&format!("{PKI_DIR}ca.key")).map(|f| f.1.clone()),
        })
    } else {
        if !pki.is_empty() {
            return Err(fail(id, format!("a join writes the PKI files {pki:?}")));
        }
        let j = &docs["JoinConfiguration"];
        let b = j
            .get("discovery")
            .and_then(|d| d.get("bootstrapToken"))
            .ok_or_else(|| fail(id, "a join without discovery.bootstrapToken".into()))?;
        if s(b, &["apiServerEndpoint"]) != Some(api.as_str()) {
            return Err(fail(
                id,
                format!("joins at {:?}, not {api}", s(b, &["apiServerEndpoint"])),
            ));
        }
        let token = s(b, &["token"]).unwrap_or_default().to_string();
        let hashes: Vec<String> = b
            .get("caCertHashes")
            .and_then(Value::as_sequence)
            .map(|v| {
                v.iter()
                    .filter_map(|h| h.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if hashes.is_empty() || !hashes.iter().all(|h| is_pin(h)) {
            return Err(fail(id, format!("caCertHashes {hashes:?}")));
        }
        let cp = j.get("controlPlane");
        if cp.is_some() != control_plane {
            return Err(fail(
                id,
                format!(
                    "a {} join {} a controlPlane part",
                    if control_plane {
                        "control-plane"
                    } else {
                        "worker"
                    },
                    if cp.is_some() { "with" } else { "without" }
                ),
            ));
        }
        Ok(Boot {
            instance: id.to_string(),
            control_plane,
            init,
            token,
            certificate_key: cp.and_then(|c| s(c, &["certificateKey"])).map(String::from),
            ca_cert_hashes: hashes,
            ca_key: None,
        })
    }
}

/// kubeadm names the service-account pair `sa.pub` and `sa.key`.
fn sa(ext: &str) -> &str {
    if ext == "crt" { "pub" } else { ext }
}

/// A kubeadm bootstrap token: `[a-z0-9]{6}.[a-z0-9]{16}`.
fn is_token(t: &str) -> bool {
    let ok = |p: &str, n: usize| {
        p.len() == n
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    t.split_once('.')
        .is_some_and(|(a, b)| ok(a, 6) && ok(b, 16))
}

/// A CA pin: `sha256:` and 64 hex digits.
fn is_pin(h: &str) -> bool {
    h.strip_prefix("sha256:")
        .is_some_and(|x| x.len() == 64 && x.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The pin of the CA whose key is `pem`: the SHA-256 of its SubjectPublicKeyInfo.
fn pin_of(id: &str, pem: &str) -> Result<String, Failure> {
    let key = rcgen::KeyPair::from_pem(pem)
        .map_err(|e| fail(id, format!("the CA key does not parse: {e}")))?;
    let digest = ring::digest::digest(&ring::digest::SHA256, &key.subject_public_key_info());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// The machines agree: one init at most, whose token, CA and certificate key every join
/// uses.
fn agree(boots: &[Boot]) -> Result<(), Failure> {
    let inits: Vec<&Boot> = boots.iter().filter(|b| b.init).collect();
    let init = match inits[..] {
        [] => return Ok(()),
        [one] => one,
        _ => {
            let ids: Vec<&str> = inits.iter().map(|b| b.instance.as_str()).collect();
            return Err(Failure::Check(format!(
                "user data: {} machines run kubeadm init: {ids:?}",
                ids.len()
            )));
        }
    };
    let pin = match &init.ca_key {
        Some(k) => pin_of(&init.instance, k)?,
        None => return Err(fail(&init.instance, "an init without the CA key".into())),
    };
    for j in boots.iter().filter(|b| !b.init) {
        if j.token != init.token {
            return Err(fail(
                &j.instance,
                format!(
                    "joins with a token that is not the init's ({})",
                    init.instance
                ),
            ));
        }
        if !j.ca_cert_hashes.contains(&pin) {
            return Err(fail(
                &j.instance,
                format!("pins {:?}, not the init's CA ({pin})", j.ca_cert_hashes),
            ));
        }
        if j.control_plane && j.certificate_key != init.certificate_key {
            return Err(fail(
                &j.instance,
                "a control-plane join without the init's certificate key".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_pins_are_recognised() {
        assert!(is_token("abcdef.0123456789abcdef"));
        assert!(!is_token("abcdef0123456789abcdef"));
        assert!(!is_token("ABCDEF.0123456789abcdef"));
        assert!(is_pin(&format!("sha256:{}", "a".repeat(64))));
        assert!(!is_pin(&format!("sha256:{}", "a".repeat(63))));
        assert!(!is_pin(&"a".repeat(71)));
    }

    #[test]
    fn a_worker_join_with_a_control_plane_part_is_refused() {
        let text = "## template: jinja\n#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  permissions: '0600'\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: JoinConfiguration\n    discovery:\n      bootstrapToken:\n        apiServerEndpoint: lb:6443\n        token: abcdef.0123456789abcdef\n        caCertHashes: [sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n    controlPlane:\n      certificateKey: x\nruncmd:\n- [kubeadm, join, --config, /run/kubeadm/kubeadm.yaml]\n";
        let e = read("i-1", false, text, "lb", "c")
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("worker join with a controlPlane")),
            "{e:?}"
        );
        let ok = read("i-1", true, text, "lb", "c");
        assert!(ok.is_ok(), "{:?}", ok.err());
        let e = read("i-1", true, text, "other", "c")
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("joins at")),
            "{e:?}"
        );
    }
}
