//! Where the suite runs: a fresh in-process fake per case, a standalone fake at an endpoint,
//! or real AWS through the standard credential chain. The suite's code is the same for all.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use provider::Clients;

/// A target of the suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A fresh fake in this process for every case (virtual clock, instant transitions).
    InProcess,
    /// An AWS-compatible endpoint, such as a standalone fakeaws.
    Endpoint(String),
    /// Real AWS in a region, through the standard credential chain.
    RealAws(String),
}

impl Target {
    /// A short label for tables.
    pub fn label(&self) -> String {
        match self {
            Target::InProcess => "in-process fake".into(),
            Target::Endpoint(u) => format!("endpoint {u}"),
            Target::RealAws(r) => format!("AWS {r}"),
        }
    }

    /// How long to wait between polls of something pending (`CONFORMANCE_POLL_MS`
    /// overrides it, e.g. for a fake standing in for AWS).
    pub fn poll(&self) -> Duration {
        if let Some(ms) = std::env::var("CONFORMANCE_POLL_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            return Duration::from_millis(ms);
        }
        match self {
            Target::InProcess => Duration::ZERO,
            Target::Endpoint(_) => Duration::from_millis(200),
            Target::RealAws(_) => Duration::from_secs(10),
        }
    }
}

/// One case's environment: clients for the target, the run id, a unique prefix for names.
#[derive(Debug)]
pub struct Env {
    /// The target.
    pub target: Target,
    /// Clients for the region.
    pub clients: Clients,
    /// The run id, tagged on everything.
    pub run_id: String,
    /// The run's start (Unix seconds).
    pub started: u64,
    /// A prefix unique to this case, for cluster names.
    pub prefix: String,
    /// The region.
    pub region: String,
    fake: Option<fakeaws::FakeAws>,
}

static CASES: AtomicU64 = AtomicU64::new(0);

impl Env {
    /// A new environment for one case.
    pub async fn new(target: &Target, run_id: &str, started: u64) -> Result<Env, String> {
        let n = CASES.fetch_add(1, Ordering::SeqCst);
        let (clients, fake, region) = match target {
            Target::InProcess => {
                let fake = fakeaws::spawn_with(fakeaws::Config {
                    clock: fakeaws::Clock::virtual_at(
                        std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
                    ),
                    ..Default::default()
                })
                .await
                .map_err(|e| format!("starting the fake: {e}"))?;
                let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
                (clients, Some(fake), "us-east-1".to_string())
            }
            Target::Endpoint(url) => (
                Clients::for_endpoint(url, "us-east-1"),
                None,
                "us-east-1".to_string(),
            ),
            Target::RealAws(region) => (
                Clients::from_environment(region).await,
                None,
                region.clone(),
            ),
        };
        let short: String = run_id
            .chars()
            .rev()
            .take(6)
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        Ok(Env {
            target: target.clone(),
            clients,
            run_id: run_id.to_string(),
            started,
            prefix: format!("cf{short}-{n}"),
            region,
            fake,
        })
    }

    /// The in-process fake, if the target is one.
    pub fn fake(&self) -> Option<&fakeaws::FakeAws> {
        self.fake.as_ref()
    }

    /// The tags every resource of this run carries.
    pub fn run_tags(&self) -> Vec<(String, String)> {
        vec![
            (crate::RUN_TAG.to_string(), self.run_id.clone()),
            (crate::RUN_STARTED_TAG.to_string(), self.started.to_string()),
        ]
    }
}
