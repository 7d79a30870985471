//! Where `capa` keeps a cluster's bootstrap material ([`Bootstrap`]: its PKI, bootstrap token
//! and certificate key) between runs: a state directory per cluster and region, by default
//! `$XDG_STATE_HOME/capa/<region>/<cluster>` (`~/.local/state/capa/...` without it),
//! `--state-dir DIR` for another root. The PKI is laid out as kubeadm lays it out
//! (`pki/ca.crt`, `pki/ca.key`, `pki/front-proxy-ca.*`, `pki/etcd/ca.*`, `pki/sa.key`,
//! `pki/sa.pub`), the token and the certificate key in `bootstrap.json`; directories are
//! 0700 and files 0600. Nothing of it is ever logged or printed.
//!
//! The first `up` of a cluster makes the material; every later run reuses it. A cluster that
//! exists in AWS while its material is missing here is an error, never a new CA (the
//! machines it has would not trust the new one). With the embedded fake, whose world ends
//! with the command, the material lives in memory and goes with it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use provider::bootstrap::{Bootstrap, Ca, CertAndKey, Pki};
use provider::cluster::{ClusterStatus, is_new};
use provider::spec::Cluster;
use provider::spec::machine::Secret;
use serde::{Deserialize, Serialize};

/// The state directories' root: `--state-dir`, else `$XDG_STATE_HOME/capa`, else
/// `$HOME/.local/state/capa`.
pub(super) fn root(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| !x.is_empty()) {
        return Ok(PathBuf::from(x).join("capa"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("no state directory: set HOME or XDG_STATE_HOME, or give --state-dir")?;
    Ok(PathBuf::from(home).join(".local/state/capa"))
}

/// The state directory of `cluster` under `root`.
pub(super) fn dir_of(root: &Path, cluster: &Cluster) -> PathBuf {
    root.join(&cluster.spec.region).join(&cluster.metadata.name)
}

/// `bootstrap.json`: what is not a file of kubeadm's PKI.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Tokens {
    token: Secret,
    certificate_key: Secret,
}

fn mkdir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    // A directory that existed keeps its mode unless made private here.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("making {} private", dir.display()))
}

/// Writes `content` to `path`, readable by its owner only, through a temporary file renamed
/// into place (an interrupted save leaves the old file or the new, never half of one).
fn write_private(path: &Path, content: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(content.as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

fn read(dir: &Path, name: &str) -> anyhow::Result<String> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
}

/// Saves `b` in `dir`.
pub(super) fn save(dir: &Path, b: &Bootstrap) -> anyhow::Result<()> {
    mkdir(&dir.join("pki").join("etcd"))?;
    mkdir(&dir.join("pki"))?;
    mkdir(dir)?;
    for (name, content, _) in b.pki.files() {
        write_private(&dir.join("pki").join(name), content)?;
    }
    let tokens = Tokens {
        token: b.token.clone(),
        certificate_key: b.certificate_key.clone(),
    };
    write_private(
        &dir.join("bootstrap.json"),
        &serde_json::to_string_pretty(&tokens)?,
    )
}

/// The material kept in `dir`, if there is any; incomplete or unreadable material is an
/// error (never replaced).
pub(super) fn load(dir: &Path) -> anyhow::Result<Option<Bootstrap>> {
    if !dir.join("bootstrap.json").exists() && !dir.join("pki").exists() {
        return Ok(None);
    }
    let pki_dir = dir.join("pki");
    let pair = |ca: Ca| -> anyhow::Result<CertAndKey> {
        Ok(CertAndKey {
            cert: read(&pki_dir, ca.cert_file())?,
            key: Secret(read(&pki_dir, ca.key_file())?),
        })
    };
    let tokens: Tokens = serde_json::from_str(&read(dir, "bootstrap.json")?)
        .with_context(|| format!("reading {}", dir.join("bootstrap.json").display()))?;
    let b = Bootstrap {
        pki: Pki {
            ca: pair(Ca::Cluster)?,
            front_proxy_ca: pair(Ca::FrontProxy)?,
            etcd_ca: pair(Ca::Etcd)?,
            sa_key: Secret(read(&pki_dir, "sa.key")?),
            sa_pub: read(&pki_dir, "sa.pub")?,
        },
        token: tokens.token,
        certificate_key: tokens.certificate_key,
    };
    b.check()
        .with_context(|| format!("the bootstrap material in {}", dir.display()))?;
    Ok(Some(b))
}

/// Deletes the material kept in `dir`.
pub(super) fn forget(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("deleting {}", dir.display())),
    }
}

/// Whether AWS holds anything of the cluster (as a plan reads it): its own VPC, its own
/// security groups, its load balancer.
pub(super) fn exists_in_aws(status: &ClusterStatus) -> bool {
    status
        .vpc
        .as_ref()
        .is_some_and(|v| v.managed && !is_new(&v.id))
        || status
            .security_groups
            .values()
            .any(|g| g.managed && !is_new(&g.id))
        || status
            .load_balancer
            .as_ref()
            .is_some_and(|l| l.managed && !l.dns_name.is_empty())
}

/// Where the material of a run lives.
pub(super) enum Keeper {
    /// In memory, with the embedded fake.
    Memory,
    /// In this state directory.
    Dir(PathBuf),
}

impl Keeper {
    /// The material for a run that may launch machines: kept material, else (when the
    /// cluster does not exist in AWS yet, `exists` says) new material, saved before any
    /// machine uses it.
    pub(super) fn obtain(&self, exists: bool, cluster: &Cluster) -> anyhow::Result<Arc<Bootstrap>> {
        let dir = match self {
            Keeper::Memory => return Ok(Arc::new(Bootstrap::generate()?)),
            Keeper::Dir(d) => d,
        };
        if let Some(b) = load(dir)? {
            return Ok(Arc::new(b));
        }
        if exists {
            bail!(
                "cluster {} exists in {} but its PKI is not in {}: capa will not make a new CA \
                 for a live cluster (its machines would not trust it). Restore that directory \
                 (or give --state-dir where it is) and run again.",
                cluster.metadata.name,
                cluster.spec.region,
                dir.display()
            );
        }
        let b = Bootstrap::generate()?;
        save(dir, &b)?;
        tracing::info!(target: "capa::progress", "made the cluster's PKI in {}", dir.display());
        Ok(Arc::new(b))
    }

    /// The kept material, which must exist (`what` needs it).
    pub(super) fn existing(&self, what: &str, cluster: &Cluster) -> anyhow::Result<Bootstrap> {
        match self {
            Keeper::Memory => bail!(
                "{what} needs the cluster's PKI, which the embedded fake's run does not keep: \
                 use --endpoint URL (a standalone fakeaws) or --aws"
            ),
            Keeper::Dir(d) => load(d)?.with_context(|| {
                format!(
                    "{what}: no PKI for cluster {} in {} (capa up makes it)",
                    cluster.metadata.name,
                    d.display()
                )
            }),
        }
    }

    /// Material for deleting machines: the kept one, else a throwaway one (deleting launches
    /// nothing, so no CA of it is ever trusted).
    pub(super) fn for_delete(&self) -> anyhow::Result<Arc<Bootstrap>> {
        if let Keeper::Dir(d) = self
            && let Some(b) = load(d)?
        {
            return Ok(Arc::new(b));
        }
        Ok(Arc::new(Bootstrap::generate()?))
    }
}

/// Writes a kubeconfig to `path`, readable by its owner only (it holds an admin key).
pub(super) fn write_kubeconfig(path: &Path, config: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    write_private(path, config)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("making {} private", path.display()))
}
