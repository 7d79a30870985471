//! User data: a `#cloud-config` document, rendered by cloud-init as a jinja template (it
//! begins with `## template: jinja`, so that each instance fills in its own hostname and
//! address from its metadata), that writes the kubeadm configuration
//! (kubeadm.k8s.io/v1beta4: InitConfiguration + ClusterConfiguration for `init`,
//! JoinConfiguration for `join`) and runs kubeadm; gzipped (unless the machine asks for it
//! uncompressed) and base64-encoded as EC2 takes it, refused when it exceeds EC2's 16 KB.
//!
//! The init machine also carries the cluster's PKI ([`Bootstrap`]) at `/etc/kubernetes/pki`,
//! so that kubeadm uses the CAs whose pin every join checks instead of making its own; it
//! creates the bootstrap token the joins present and uploads the control-plane certificates
//! under the certificate key the control-plane joins fetch them with. Joins carry only what
//! a join needs: the endpoint, the token, the CA pin and (control planes) the certificate
//! key, never a CA key. User data is readable by anyone allowed DescribeInstanceAttribute:
//! it is never logged.

use std::io::Write as _;

use serde_json::{Value, json};

use crate::bootstrap::Bootstrap;
use crate::error::Error;
use crate::spec::machine::{KubeadmOperation, Machine, MachineRole};

/// EC2's limit on user data, before base64.
pub const MAX_USER_DATA: usize = 16 * 1024;

/// Where the kubeadm configuration is written on the machine.
pub const KUBEADM_CONFIG_PATH: &str = "/run/kubeadm/kubeadm.yaml";

/// Where kubeadm keeps the cluster's PKI.
pub const PKI_DIR: &str = "/etc/kubernetes/pki";

/// The first line of the user data: cloud-init renders the rest as a jinja template.
pub const JINJA_HEADER: &str = "## template: jinja";

fn yaml(v: &Value) -> Result<String, Error> {
    serde_yaml_ng::to_string(v).map_err(|e| Error::Conflict(format!("rendering YAML: {e}")))
}

/// The machine's bootstrap token, CA pins and certificate key: its spec's where it gives
/// them, else the cluster's; the pins always include the cluster CA's.
struct Material {
    token: String,
    ca_cert_hashes: Vec<String>,
    certificate_key: String,
}

fn material(machine: &Machine, b: &Bootstrap) -> Result<Material, Error> {
    let k = &machine.spec.kubeadm;
    let mut hashes = vec![b.pki.ca_cert_hash()?];
    for h in &k.ca_cert_hashes {
        if !hashes.contains(h) {
            hashes.push(h.clone());
        }
    }
    Ok(Material {
        token: k.bootstrap_token.as_ref().unwrap_or(&b.token).0.clone(),
        ca_cert_hashes: hashes,
        certificate_key: k
            .certificate_key
            .as_ref()
            .unwrap_or(&b.certificate_key)
            .0
            .clone(),
    })
}

/// The kubeadm configuration documents of `machine`, whose control plane answers at
/// `endpoint` (the load balancer's DNS name), with the cluster's bootstrap material `b`.
pub fn kubeadm_config(machine: &Machine, endpoint: &str, b: &Bootstrap) -> Result<String, Error> {
    let k = &machine.spec.kubeadm;
    let m = material(machine, b)?;
    let node_registration = json!({
        "name": "{{ ds.meta_data.local_hostname }}",
        "criSocket": "unix:///var/run/containerd/containerd.sock",
        "kubeletExtraArgs": [
            {"name": "cloud-provider", "value": "external"},
            {"name": "node-ip", "value": "{{ ds.meta_data.local_ipv4 }}"}
        ]
    });
    let docs = match k.operation {
        KubeadmOperation::Init => vec![
            json!({
                "apiVersion": "kubeadm.k8s.io/v1beta4",
                "kind": "InitConfiguration",
                "bootstrapTokens": [{
                    "token": m.token,
                    "ttl": crate::bootstrap::TOKEN_TTL,
                    "usages": ["signing", "authentication"],
                    "groups": ["system:bootstrappers:kubeadm:default-node-token"]
                }],
                "certificateKey": m.certificate_key,
                "nodeRegistration": node_registration,
                "localAPIEndpoint": {"advertiseAddress": "{{ ds.meta_data.local_ipv4 }}", "bindPort": 6443}
            }),
            json!({
                "apiVersion": "kubeadm.k8s.io/v1beta4",
                "kind": "ClusterConfiguration",
                "clusterName": machine.spec.cluster_name,
                "kubernetesVersion": k.kubernetes_version,
                "controlPlaneEndpoint": format!("{endpoint}:6443"),
                "certificatesDir": PKI_DIR,
                "encryptionAlgorithm": "ECDSA-P256",
                "apiServer": {"certSANs": [endpoint, "localhost", "127.0.0.1"]},
                "networking": {
                    "podSubnet": k.pod_subnet.clone().unwrap_or_else(|| "192.168.0.0/16".into()),
                    "serviceSubnet": k.service_subnet.clone().unwrap_or_else(|| "10.96.0.0/12".into()),
                    "dnsDomain": "cluster.local"
                }
            }),
        ],
        KubeadmOperation::Join => {
            let mut join = json!({
                "apiVersion": "kubeadm.k8s.io/v1beta4",
                "kind": "JoinConfiguration",
                "discovery": {
                    "bootstrapToken": {
                        "apiServerEndpoint": format!("{endpoint}:6443"),
                        "token": m.token,
                        "caCertHashes": m.ca_cert_hashes
                    }
                },
                "nodeRegistration": node_registration
            });
            if machine.spec.role == MachineRole::ControlPlane
                && let Some(obj) = join.as_object_mut()
            {
                obj.insert(
                    "controlPlane".into(),
                    json!({
                        "localAPIEndpoint": {"advertiseAddress": "{{ ds.meta_data.local_ipv4 }}", "bindPort": 6443},
                        "certificateKey": m.certificate_key
                    }),
                );
            }
            vec![join]
        }
    };
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&yaml(d)?);
    }
    Ok(out)
}

/// The user data of `machine` before compression: the jinja header, then the
/// `#cloud-config` document.
pub fn cloud_config(machine: &Machine, endpoint: &str, b: &Bootstrap) -> Result<String, Error> {
    let config = kubeadm_config(machine, endpoint, b)?;
    let init = machine.spec.kubeadm.operation == KubeadmOperation::Init;
    let command = if init {
        json!([
            "kubeadm",
            "init",
            "--config",
            KUBEADM_CONFIG_PATH,
            "--upload-certs"
        ])
    } else {
        json!(["kubeadm", "join", "--config", KUBEADM_CONFIG_PATH])
    };
    let file = |path: String, content: &str, secret: bool| {
        json!({
            "path": path,
            "owner": "root:root",
            "permissions": if secret { "0600" } else { "0644" },
            "content": content
        })
    };
    let mut files = Vec::new();
    if init {
        for (name, content, secret) in b.pki.files() {
            files.push(file(format!("{PKI_DIR}/{name}"), content, secret));
        }
    }
    // The configuration holds the token and the certificate key.
    files.push(file(KUBEADM_CONFIG_PATH.to_string(), &config, true));
    let doc = json!({
        "write_files": files,
        "runcmd": [command]
    });
    Ok(format!("{JINJA_HEADER}\n#cloud-config\n{}", yaml(&doc)?))
}

/// `text` gzipped, checked against EC2's limit, base64-encoded.
pub fn encode(text: &str) -> Result<String, Error> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text.as_bytes())
        .map_err(|e| Error::Conflict(format!("compressing user data: {e}")))?;
    let bytes = gz
        .finish()
        .map_err(|e| Error::Conflict(format!("compressing user data: {e}")))?;
    within_limit(&bytes)
}

/// `bytes` base64-encoded, once checked against EC2's limit.
fn within_limit(bytes: &[u8]) -> Result<String, Error> {
    if bytes.len() > MAX_USER_DATA {
        return Err(Error::UserDataTooLarge {
            bytes: bytes.len(),
            limit: MAX_USER_DATA,
        });
    }
    Ok(aws_smithy_types::base64::encode(bytes))
}

/// The user data of `machine`: [`cloud_config`], gzipped unless its spec says
/// `uncompressedUserData`, base64.
pub fn user_data(machine: &Machine, endpoint: &str, b: &Bootstrap) -> Result<String, Error> {
    let text = cloud_config(machine, endpoint, b)?;
    if machine.spec.uncompressed_user_data {
        within_limit(text.as_bytes())
    } else {
        encode(&text)
    }
}

/// Decodes user data made by [`user_data`], gzipped or not (for tests and `capa machine
/// status`).
pub fn decode(data: &str) -> Result<String, Error> {
    let raw = aws_smithy_types::base64::decode(data)
        .map_err(|e| Error::Conflict(format!("user data is not base64: {e}")))?;
    if !raw.starts_with(&GZIP_MAGIC) {
        return String::from_utf8(raw)
            .map_err(|e| Error::Conflict(format!("user data is neither gzip nor text: {e}")));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut text)
        .map_err(|e| Error::Conflict(format!("user data is not gzip: {e}")))?;
    Ok(text)
}

/// The first two bytes of a gzip stream (RFC 1952), by which cloud-init tells it from text.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
