//! fakeaws: a fake AWS EC2 + classic Elastic Load Balancing endpoint that speaks the real
//! wire protocols (ec2Query and awsQuery), so the official SDKs, the aws CLI and anything
//! else that honours an endpoint URL talk to it unchanged.
//!
//! In a test:
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let fake = fakeaws::spawn().await?;
//! # #[cfg(feature = "sdk")]
//! let ec2 = fake.ec2_client();
//! # Ok(()) }
//! ```
//!
//! Standalone: `cargo run --release -p fakeaws -- --port 4566`.
//!
//! Never a panic: besides `unwrap`, `expect` and `panic!` (denied workspace-wide), indexing
//! and slicing that could go out of bounds are denied in the library's code, so every
//! lookup says what happens when the thing is not there.

#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod answers;
pub mod control;
pub mod ec2;
pub mod elb;
pub mod generated;
pub mod ids;
pub mod protocol;
mod refusal;
pub mod region;
mod repoll;
pub mod server;
pub mod sim;
pub mod state;
pub mod threaded;

use std::net::SocketAddr;

use tokio::sync::oneshot;

pub use region::{Limits, Region};
pub use server::{Call, Fake};
pub use sim::clock::Clock;

/// How a fake account starts.
#[derive(Debug, Clone)]
pub struct Config {
    /// Whether each region starts with a default VPC, as AWS accounts do (default: true).
    pub default_vpc: bool,
    /// The account id owning every resource.
    pub account_id: String,
    /// The seed of resource and request ids.
    pub seed: u64,
    /// The clock: real by default.
    pub clock: Clock,
    /// Per-region quotas.
    pub limits: Limits,
    /// Access key -> secret. When any is given, every request over HTTP must be signed (SigV4)
    /// with one of them; without, any signature passes.
    pub credentials: std::collections::BTreeMap<String, String>,
    /// Whether a repeated request of a describe that only reads its region is answered from
    /// the region's kept answer while nothing changed (`answers`; default: true). Off, every
    /// request runs its operation: what benchmarks of an operation's own cost set.
    pub keep_answers: bool,
    /// Regions served beside AWS's own ([`server::AWS_REGIONS`]), such as a local zone's
    /// test region (`fakeaws --region NAME`); any other name is `InvalidRegion`.
    pub extra_regions: Vec<String>,
    /// Ranges the account brought to AWS (BYOIP), each a pool of its region: a public IPv4
    /// one for AllocateAddress, an IPv6 one for the blocks of VPCs (`fakeaws --byoip-cidr
    /// REGION=CIDR`); checked by [`Config::check`].
    pub byoip: Vec<ec2::public_ipv4_pool::ByoipCidr>,
    /// Request throttling in every region: off (`None`, the default), or AWS's figures times
    /// this scale (`Some(1.0)`: AWS's own). `Region::throttle` changes it per region.
    pub throttling: Option<f64>,
    /// Eventual consistency in every region: how long new resources stay unknown and tags
    /// take to show (no lag by default). `Region::consistency` changes it per region.
    pub consistency: sim::consistency::Windows,
    /// Fault rules the account starts with (`Fake::with_faults` changes them).
    pub faults: Vec<sim::faults::Rule>,
    /// How long asynchronous state changes take in every region (none: by the next
    /// request); `Region::transitions` changes them per region.
    pub delays: std::collections::BTreeMap<sim::transitions::Subject, std::time::Duration>,
}

impl Config {
    /// Checks what the configuration brings that AWS would refuse: the BYOIP ranges (each a
    /// /24 or larger, public, not the fake's own addresses, none overlapping another of its
    /// region, at most five a region).
    pub fn check(&self) -> Result<(), String> {
        ec2::public_ipv4_pool::check_all(&self.byoip)
    }

    /// This configuration with a profile's throttling, consistency windows and fault rules
    /// (see `sim::profile`; `calm` changes nothing).
    pub fn with_profile(mut self, profile: sim::profile::Profile) -> Self {
        if profile.throttling.is_some() {
            self.throttling = profile.throttling;
        }
        if !profile.consistency.is_zero() {
            self.consistency = profile.consistency;
        }
        self.faults.extend(profile.rules);
        for (name, seconds) in profile.delays {
            if let Some(subject) = sim::transitions::Subject::named(&name) {
                let d = std::time::Duration::try_from_secs_f64(seconds).unwrap_or_default();
                self.delays.insert(subject, d);
            }
        }
        self
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_vpc: true,
            account_id: "123456789012".to_string(),
            seed: 1,
            clock: Clock::Real,
            limits: Limits::default(),
            throttling: None,
            consistency: sim::consistency::Windows::default(),
            faults: Vec::new(),
            delays: std::collections::BTreeMap::new(),
            credentials: std::collections::BTreeMap::new(),
            extra_regions: Vec::new(),
            byoip: Vec::new(),
            keep_answers: true,
        }
    }
}

/// A running fake on 127.0.0.1, stopped when dropped.
#[derive(Debug)]
pub struct FakeAws {
    endpoint: String,
    addr: SocketAddr,
    fake: Fake,
    shutdown: Option<oneshot::Sender<()>>,
}

/// Starts a fresh, isolated fake with the default configuration on `127.0.0.1:0`.
pub async fn spawn() -> std::io::Result<FakeAws> {
    spawn_with(Config::default()).await
}

/// Starts a fresh, isolated fake with `config` on `127.0.0.1:0`.
pub async fn spawn_with(config: Config) -> std::io::Result<FakeAws> {
    config
        .check()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    serve(Fake::new(config)).await
}

/// Serves `fake` (such as one kept in a state file: `Fake::with_state_file`) on
/// `127.0.0.1:0`.
pub async fn serve(fake: Fake) -> std::io::Result<FakeAws> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    let served_fake = fake.clone();
    tokio::spawn(async move {
        let served = server::serve(listener, served_fake, async {
            let _ = rx.await;
        })
        .await;
        if let Err(e) = served {
            tracing::error!(error = %e, "fakeaws server stopped");
        }
    });
    Ok(FakeAws {
        endpoint: format!("http://{addr}"),
        addr,
        fake,
        shutdown: Some(tx),
    })
}

impl FakeAws {
    /// The endpoint URL, such as `http://127.0.0.1:41234`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The fake's state, to read or steer it directly.
    pub fn fake(&self) -> &Fake {
        &self.fake
    }
}

impl Drop for FakeAws {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

#[cfg(feature = "sdk")]
mod sdk {
    //! Ready SDK clients pointed at a running fake.

    use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};

    /// The region clients use unless told otherwise.
    pub const DEFAULT_REGION: &str = "us-east-1";

    fn credentials() -> Credentials {
        Credentials::new(
            "AKIDFAKEAWS0000000",
            "fakeaws-secret",
            None,
            None,
            "fakeaws",
        )
    }

    impl super::FakeAws {
        /// An EC2 client for `us-east-1`.
        pub fn ec2_client(&self) -> aws_sdk_ec2::Client {
            self.ec2_client_in(DEFAULT_REGION)
        }

        /// An EC2 client for `region`.
        pub fn ec2_client_in(&self, region: &str) -> aws_sdk_ec2::Client {
            let conf = aws_sdk_ec2::Config::builder()
                .behavior_version(BehaviorVersion::latest())
                .region(Region::new(region.to_string()))
                .credentials_provider(credentials())
                .endpoint_url(self.endpoint())
                .build();
            aws_sdk_ec2::Client::from_conf(conf)
        }

        /// A classic ELB client for `us-east-1`.
        pub fn elb_client(&self) -> aws_sdk_elasticloadbalancing::Client {
            self.elb_client_in(DEFAULT_REGION)
        }

        /// A classic ELB client for `region`.
        pub fn elb_client_in(&self, region: &str) -> aws_sdk_elasticloadbalancing::Client {
            let conf = aws_sdk_elasticloadbalancing::Config::builder()
                .behavior_version(BehaviorVersion::latest())
                .region(Region::new(region.to_string()))
                .credentials_provider(credentials())
                .endpoint_url(self.endpoint())
                .build();
            aws_sdk_elasticloadbalancing::Client::from_conf(conf)
        }
    }
}
