//! User data: a `#cloud-config` document that writes the kubeadm configuration
//! (kubeadm.k8s.io/v1beta4: InitConfiguration + ClusterConfiguration for `init`,
//! JoinConfiguration for `join`) and runs kubeadm; gzipped and base64-encoded as EC2 takes it,
//! refused when it exceeds EC2's 16 KB. The document holds secrets: it is never logged.

use std::io::Write as _;

use serde_json::{Value, json};

use crate::error::Error;
use crate::spec::machine::{KubeadmOperation, Machine, MachineRole};

/// EC2's limit on user data, before base64.
pub const MAX_USER_DATA: usize = 16 * 1024;

/// Where the kubeadm configuration is written on the machine.
pub const KUBEADM_CONFIG_PATH: &str = "/run/kubeadm/kubeadm.yaml";

fn yaml(v: &Value) -> Result<String, Error> {
    serde_yaml_ng::to_string(v).map_err(|e| Error::Conflict(format!("rendering YAML: {e}")))
}

/// The kubeadm configuration documents of `machine`, whose control plane answers at
/// `endpoint` (the load balancer's DNS name).
pub fn kubeadm_config(machine: &Machine, endpoint: &str) -> Result<String, Error> {
    let k = &machine.spec.kubeadm;
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
                    "token": k.bootstrap_token.0,
                    "ttl": "24h0m0s",
                    "usages": ["signing", "authentication"],
                    "groups": ["system:bootstrappers:kubeadm:default-node-token"]
                }],
                "nodeRegistration": node_registration,
                "localAPIEndpoint": {"advertiseAddress": "{{ ds.meta_data.local_ipv4 }}", "bindPort": 6443}
            }),
            json!({
                "apiVersion": "kubeadm.k8s.io/v1beta4",
                "kind": "ClusterConfiguration",
                "clusterName": machine.spec.cluster_name,
                "kubernetesVersion": k.kubernetes_version,
                "controlPlaneEndpoint": format!("{endpoint}:6443"),
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
                        "token": k.bootstrap_token.0,
                        "caCertHashes": k.ca_cert_hashes
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
                        "certificateKey": k.certificate_key.as_ref().map(|c| c.0.clone()).unwrap_or_default()
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

/// The `#cloud-config` document of `machine`.
pub fn cloud_config(machine: &Machine, endpoint: &str) -> Result<String, Error> {
    let config = kubeadm_config(machine, endpoint)?;
    let command = match machine.spec.kubeadm.operation {
        KubeadmOperation::Init => json!([
            "kubeadm",
            "init",
            "--config",
            KUBEADM_CONFIG_PATH,
            "--upload-certs"
        ]),
        KubeadmOperation::Join => json!(["kubeadm", "join", "--config", KUBEADM_CONFIG_PATH]),
    };
    let doc = json!({
        "write_files": [{
            "path": KUBEADM_CONFIG_PATH,
            "owner": "root:root",
            "permissions": "0640",
            "content": config
        }],
        "runcmd": [command]
    });
    Ok(format!("#cloud-config\n{}", yaml(&doc)?))
}

/// `text` gzipped, checked against EC2's limit, base64-encoded.
pub fn encode(text: &str) -> Result<String, Error> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text.as_bytes())
        .map_err(|e| Error::Conflict(format!("compressing user data: {e}")))?;
    let bytes = gz
        .finish()
        .map_err(|e| Error::Conflict(format!("compressing user data: {e}")))?;
    if bytes.len() > MAX_USER_DATA {
        return Err(Error::UserDataTooLarge {
            bytes: bytes.len(),
            limit: MAX_USER_DATA,
        });
    }
    Ok(aws_smithy_types::base64::encode(bytes))
}

/// The user data of `machine`: cloud-config, gzipped, base64.
pub fn user_data(machine: &Machine, endpoint: &str) -> Result<String, Error> {
    encode(&cloud_config(machine, endpoint)?)
}

/// Decodes user data made by [`encode`] (for tests and `capa machine status`).
pub fn decode(data: &str) -> Result<String, Error> {
    let raw = aws_smithy_types::base64::decode(data)
        .map_err(|e| Error::Conflict(format!("user data is not base64: {e}")))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut text)
        .map_err(|e| Error::Conflict(format!("user data is not gzip: {e}")))?;
    Ok(text)
}
