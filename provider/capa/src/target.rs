//! Where `capa` works: the embedded fakeaws (the default), an endpoint, or real AWS; and
//! the spec files it reads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use provider::Clients;
use provider::spec::{Cluster, Documents};

use crate::Args;

pub(super) struct Target {
    pub(super) clients: Clients,
    /// Kept alive while capa runs.
    pub(super) _embedded: Option<fakeaws::FakeAws>,
    pub(super) poll: Duration,
}

impl Target {
    /// Whether this is the embedded fake, whose world ends with the command.
    pub(super) fn is_embedded(&self) -> bool {
        self._embedded.is_some()
    }
}

pub(super) async fn connect(args: &Args, region: &str) -> anyhow::Result<Target> {
    if args.aws {
        return Ok(Target {
            clients: Clients::from_environment(region).await,
            _embedded: None,
            poll: Duration::from_secs(15),
        });
    }
    if let Some(url) = &args.endpoint {
        return Ok(Target {
            clients: Clients::for_endpoint(url, region),
            _embedded: None,
            poll: Duration::from_millis(500),
        });
    }
    let fake = fakeaws::spawn()
        .await
        .context("starting the embedded fakeaws")?;
    eprintln!(
        "capa: using an embedded fakeaws at {} (its state lives only while capa runs; \
         --endpoint URL for a standalone fakeaws, --aws for real AWS)",
        fake.endpoint()
    );
    Ok(Target {
        clients: Clients::for_endpoint(fake.endpoint(), region),
        _embedded: Some(fake),
        poll: Duration::from_millis(20),
    })
}

pub(super) fn load(path: &PathBuf) -> anyhow::Result<Documents> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(provider::spec::parse_documents(
        &text,
        &path.display().to_string(),
    )?)
}

pub(super) fn cluster_of(docs: &Documents, path: &Path) -> anyhow::Result<Cluster> {
    docs.cluster.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "{} holds no Cluster document (kind: Cluster)",
            path.display()
        )
    })
}
