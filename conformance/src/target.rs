//! Where the suite runs: a fresh in-process fake per case, a standalone fake at an endpoint,
//! or real AWS through the standard credential chain. The suite's code is the same for all.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use aws_sdk_ec2::config::{AsyncSleep, SharedAsyncSleep, Sleep};
use fakeaws::sim::consistency::Windows;
use fakeaws::sim::profile::Profile;
use provider::bootstrap::Bootstrap;
use provider::{Clients, MachineActuator};

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
    /// The region's availability zones open to the account, by name, as the target lists
    /// them (not every region's are `a`, `b` and `c`), but those AWS constrains
    /// ([`provider::spec::CONSTRAINED_ZONE_IDS`]), where the provider puts no default subnet
    /// and the current instance types may not run.
    pub zones: Vec<String>,
    /// The bad day the in-process fake plays (`calm` unless asked).
    pub profile: Profile,
    /// The bootstrap material the suite's machines boot with (one PKI for the process: the
    /// suite checks infrastructure, not kubeadm).
    pub bootstrap: Arc<Bootstrap>,
    fake: Option<fakeaws::FakeAws>,
}

/// The process's bootstrap material, made once.
fn bootstrap() -> Result<Arc<Bootstrap>, String> {
    static MADE: OnceLock<Result<Arc<Bootstrap>, String>> = OnceLock::new();
    MADE.get_or_init(|| {
        Bootstrap::generate()
            .map(Arc::new)
            .map_err(|e| e.to_string())
    })
    .clone()
}

/// While alive, the in-process fake is calm ([`Env::calm`]); dropped, it plays the
/// environment's profile again.
#[derive(Debug)]
pub struct Calm<'a> {
    env: &'a Env,
}

impl Drop for Calm<'_> {
    fn drop(&mut self) {
        let Some(fake) = &self.env.fake else {
            return;
        };
        let profile = &self.env.profile;
        fake.fake().with_faults(|f| {
            f.clear();
            for rule in &profile.rules {
                f.add(rule.clone());
            }
        });
        fake.fake().with_region(&self.env.region, |r| {
            if let Some(scale) = profile.throttling {
                r.throttle.enable(scale);
            }
            r.consistency.set_windows(profile.consistency.clone());
        });
    }
}

/// A seed for a case's faults, from the case itself, so a failing case replays exactly.
pub fn seed_of(case: &impl std::fmt::Debug, k: usize) -> u64 {
    format!("{case:?}/{k}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

static CASES: AtomicU64 = AtomicU64::new(0);

/// Every wait of the in-process clients (the SDK's retry backoff, the provider's pauses
/// within a step): the fake's virtual clock moves on by the wait, and nothing sleeps.
#[derive(Debug)]
struct ClockSleep {
    fake: fakeaws::Fake,
    region: String,
}

impl AsyncSleep for ClockSleep {
    fn sleep(&self, d: Duration) -> Sleep {
        // The clock moves when the wait is waited out, not when it is made: a timeout that
        // loses its race never moves it.
        let fake = self.fake.clone();
        let region = self.region.clone();
        Sleep::new(async move {
            fake.with_region(&region, |r| r.clock.advance(d));
        })
    }
}

impl Env {
    /// A new environment for one case, on a calm day.
    pub async fn new(target: &Target, run_id: &str, started: u64) -> Result<Env, String> {
        Env::with_profile(target, run_id, started, Profile::calm(), 1).await
    }

    /// A new environment for one case whose in-process fake plays `profile`, drawing its
    /// faults from `seed` (the same seed and case replay the same faults). A standalone fake
    /// plays what it was started with; real AWS plays its own day.
    pub async fn with_profile(
        target: &Target,
        run_id: &str,
        started: u64,
        profile: Profile,
        seed: u64,
    ) -> Result<Env, String> {
        let n = CASES.fetch_add(1, Ordering::SeqCst);
        let (clients, fake, region) = match target {
            Target::InProcess => {
                let config = fakeaws::Config {
                    clock: fakeaws::Clock::virtual_at(
                        std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
                    ),
                    seed,
                    ..Default::default()
                }
                .with_profile(profile.clone());
                let fake = fakeaws::spawn_with(config)
                    .await
                    .map_err(|e| format!("starting the fake: {e}"))?;
                let clients = Clients::for_endpoint_on_clock(
                    fake.endpoint(),
                    "us-east-1",
                    SharedAsyncSleep::new(ClockSleep {
                        fake: fake.fake().clone(),
                        region: "us-east-1".to_string(),
                    }),
                );
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
        let mut env = Env {
            target: target.clone(),
            clients,
            run_id: run_id.to_string(),
            started,
            prefix: format!("cf{short}-{n}"),
            region,
            zones: Vec::new(),
            profile,
            bootstrap: bootstrap()?,
            fake,
        };
        env.zones = env.availability_zones().await?;
        Ok(env)
    }

    /// The region's open availability zones (not its Local or Wavelength Zones, nor a
    /// constrained one), by name: the in-process fake's from its table (a request would move
    /// its clock and its draws of faults, which a case's seed replays), another target's from
    /// DescribeAvailabilityZones.
    async fn availability_zones(&self) -> Result<Vec<String>, String> {
        let open = |id: &str| !provider::spec::CONSTRAINED_ZONE_IDS.contains(&id);
        if self.fake.is_some() {
            let mut zones: Vec<String> = fakeaws::ec2::availability_zone::zones_of(&self.region)
                .into_iter()
                .filter(|z| open(&z.id))
                .map(|z| z.name)
                .collect();
            zones.sort();
            return Ok(zones);
        }
        let out = self
            .clients
            .ec2
            .describe_availability_zones()
            .filters(
                aws_sdk_ec2::types::Filter::builder()
                    .name("zone-type")
                    .values("availability-zone")
                    .build(),
            )
            .send()
            .await
            .map_err(|e| format!("DescribeAvailabilityZones: {e}"))?;
        let mut zones: Vec<String> = out
            .availability_zones()
            .iter()
            .filter(|z| z.zone_id().is_some_and(open))
            .filter_map(|z| z.zone_name().map(str::to_string))
            .collect();
        zones.sort();
        if zones.is_empty() {
            return Err(format!("{} lists no availability zone", self.region));
        }
        Ok(zones)
    }

    /// The first `n` of the region's availability zones by name (all when it has fewer).
    pub fn first_zones(&self, n: usize) -> Vec<String> {
        self.zones.iter().take(n).cloned().collect()
    }

    /// A machine actuator on `clients` (these, or a crashing view of them), booting machines
    /// with the suite's bootstrap material.
    pub fn machine_actuator(&self, clients: Clients) -> MachineActuator {
        MachineActuator::new(clients, self.bootstrap.clone())
    }

    /// Calms the in-process fake until the guard drops: no fault rules, no throttling, no
    /// consistency windows, and whatever was still hidden shown (its clock moves past every
    /// window). The suite's own setup and its readings of what the target holds run calm, so
    /// that a bad day tests the provider, not the suite. Elsewhere it does nothing.
    pub fn calm(&self) -> Calm<'_> {
        if let Some(fake) = &self.fake {
            fake.fake().with_faults(fakeaws::sim::faults::Faults::clear);
            fake.fake().with_region(&self.region, |r| {
                r.throttle.disable();
                r.consistency.set_windows(Windows::default());
                let longest = self.profile.consistency.longest();
                r.clock.advance(longest + Duration::from_secs(1));
            });
        }
        Calm { env: self }
    }

    /// What `cluster` owns in the target, read on a calm day ([`Env::calm`]).
    pub async fn census(&self, cluster: &str) -> Result<crate::Census, crate::Failure> {
        let _calm = self.calm();
        crate::census(&self.clients, cluster).await
    }

    /// Checks the shape of what `cluster` owns against its spec (`crate::topology`), on a
    /// calm day.
    pub async fn topology(&self, cluster: &provider::spec::Cluster) -> Result<(), crate::Failure> {
        let _calm = self.calm();
        crate::topology(&self.clients, cluster).await
    }

    /// The pre-existing resources of `origin` (and the load balancer `lb`), described on a
    /// calm day ([`Env::calm`]).
    pub async fn snapshot(&self, origin: &str, lb: Option<&str>) -> Result<String, crate::Failure> {
        let _calm = self.calm();
        crate::snapshot(&self.clients, origin, lb).await
    }

    /// Waits until what AWS shows has caught up with what was done: on the in-process fake,
    /// its clock moves past the profile's longest consistency window; elsewhere the suite
    /// waits one poll interval.
    pub async fn settle(&self) {
        let longest = self.profile.consistency.longest();
        match &self.fake {
            Some(_) if longest.is_zero() => {}
            Some(_) => self.pause(longest + Duration::from_secs(1)).await,
            None => tokio::time::sleep(self.target.poll()).await,
        }
    }

    /// Waits `d` before looking again: on the in-process fake, its virtual clock moves on by
    /// `d` (at least a second), so pending states, consistency windows and throttling buckets
    /// move with it and nothing sleeps; elsewhere the suite sleeps, at most the target's poll
    /// interval when the provider asks for more.
    pub async fn pause(&self, d: Duration) {
        match &self.fake {
            Some(fake) => fake.fake().with_region(&self.region, |r| {
                r.clock.advance(d.max(Duration::from_secs(1)));
            }),
            None => {
                tokio::time::sleep(d.min(self.target.poll().max(Duration::from_millis(1)))).await
            }
        }
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
