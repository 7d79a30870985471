//! The AWS clients the actuators use, built from the standard credential chain or for an
//! endpoint URL (any service speaking AWS's protocols, such as a standalone fakeaws), and the
//! call counter every client reports to.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::config::timeout::TimeoutConfig;
use aws_sdk_ec2::config::{
    AsyncSleep, BehaviorVersion, Credentials, Region, SharedAsyncSleep,
    StalledStreamProtectionConfig,
};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;

/// The region's available zones, as last read, kept for [`ZoneCache::TTL`]: zones come and
/// go on AWS's timescale (a zone added, one impaired), not a reconcile's, so a controller
/// reconciling every few seconds asks once every few minutes, not every time.
#[derive(Debug, Clone, Default)]
pub struct ZoneCache(Arc<Mutex<Option<ZonesRead>>>);

/// When the zones were read, and the zones.
type ZonesRead = (std::time::Instant, Vec<crate::spec::Zone>);

impl ZoneCache {
    /// How long a reading is used.
    pub const TTL: Duration = Duration::from_secs(300);

    /// The zones read less than [`TTL`](Self::TTL) ago.
    pub fn get(&self) -> Option<Vec<crate::spec::Zone>> {
        let m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.as_ref()
            .filter(|(at, _)| at.elapsed() < Self::TTL)
            .map(|(_, zones)| zones.clone())
    }

    /// Keeps `zones`, read now.
    pub fn put(&self, zones: Vec<crate::spec::Zone>) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *m = Some((std::time::Instant::now(), zones));
    }
}

/// Counts the requests sent, by operation (every attempt, retries included).
#[derive(Debug, Clone, Default)]
pub struct CallCounter(Arc<Mutex<BTreeMap<String, u64>>>);

impl CallCounter {
    fn record(&self, op: &str) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *m.entry(op.to_string()).or_default() += 1;
    }

    /// Requests by operation.
    pub fn by_operation(&self) -> BTreeMap<String, u64> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Every request.
    pub fn total(&self) -> u64 {
        self.by_operation().values().sum()
    }

    /// Requests that can change state (anything but Describe*, Get*, List*).
    pub fn mutating(&self) -> u64 {
        self.by_operation()
            .iter()
            .filter(|(op, _)| is_mutating(op))
            .map(|(_, n)| n)
            .sum()
    }

    /// Forgets every count.
    pub fn reset(&self) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

/// Whether operation `op` can change state.
pub fn is_mutating(op: &str) -> bool {
    !["Describe", "Get", "List"]
        .iter()
        .any(|p| op.starts_with(p))
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "capa-call-counter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(m) = cfg.load::<Metadata>() {
            self.record(m.name());
        }
        Ok(())
    }
}

/// The provider's retry policy for every AWS call: the SDK's adaptive mode (standard retries
/// of throttling, 5xx and transient errors, plus a client-side rate limiter that slows down
/// after throttling), 3 attempts, backoff from 1 s up to 20 s with jitter. A call is retried
/// only briefly: reconcile itself is the long loop (a requeue after the error policy's delay). What the retries
/// cannot mend reaches the caller, whose error policy (`crate::error::error_policy`) decides
/// to requeue or fail. `AWS_MAX_ATTEMPTS` or `AWS_RETRY_MODE` in the environment take
/// precedence for clients from the standard chain.
pub fn retry_config() -> RetryConfig {
    RetryConfig::adaptive()
        .with_max_attempts(3)
        .with_initial_backoff(Duration::from_secs(1))
        .with_max_backoff(Duration::from_secs(20))
}

/// The EC2 and ELB clients of one region, and their call counter.
#[derive(Debug, Clone)]
pub struct Clients {
    /// EC2.
    pub ec2: aws_sdk_ec2::Client,
    /// Classic Elastic Load Balancing.
    pub elb: aws_sdk_elasticloadbalancing::Client,
    /// What they sent.
    pub calls: CallCounter,
    /// The region.
    pub region: String,
    /// How [`Clients::pause`] waits: the EC2 client's own sleep (tokio's) unless set (a test
    /// against a fake on a virtual clock moves the clock instead of sleeping).
    pub sleep: Option<SharedAsyncSleep>,
    /// The region's zones, as last read (shared by clones).
    pub zones: ZoneCache,
}

impl Clients {
    /// Waits `d` within a step, as AWS's eventual consistency asks after a create: with
    /// [`sleep`](Self::sleep) when set, else the EC2 client's sleep, else tokio's.
    pub async fn pause(&self, d: Duration) {
        let sleep = self
            .sleep
            .clone()
            .or_else(|| self.ec2.config().sleep_impl())
            .or_else(aws_smithy_async::rt::sleep::default_async_sleep);
        if let Some(s) = sleep {
            s.sleep(d).await;
        }
    }

    /// Clients from a loaded SDK configuration (the standard chain: environment, profile,
    /// SSO, instance role; `AWS_ENDPOINT_URL` honoured).
    pub fn from_sdk_config(config: &aws_config::SdkConfig) -> Self {
        let calls = CallCounter::default();
        let ec2 = aws_sdk_ec2::config::Builder::from(config)
            .interceptor(calls.clone())
            .build();
        let elb = aws_sdk_elasticloadbalancing::config::Builder::from(config)
            .interceptor(calls.clone())
            .build();
        Clients {
            ec2: aws_sdk_ec2::Client::from_conf(ec2),
            elb: aws_sdk_elasticloadbalancing::Client::from_conf(elb),
            calls,
            region: config.region().map(ToString::to_string).unwrap_or_default(),
            sleep: None,
            zones: ZoneCache::default(),
        }
    }

    /// Loads the standard credential chain for `region`.
    pub async fn from_environment(region: &str) -> Self {
        let mut loader =
            aws_config::defaults(BehaviorVersion::latest()).region(Region::new(region.to_string()));
        let user_chose = ["AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        if !user_chose {
            loader = loader.retry_config(retry_config());
        }
        let config = loader.load().await;
        Self::from_sdk_config(&config)
    }

    /// Clients for an endpoint URL with static placeholder credentials (for a standalone
    /// AWS-compatible endpoint; requests are still signed SigV4 for `region`).
    pub fn for_endpoint(endpoint: &str, region: &str) -> Self {
        Self::build_for_endpoint(endpoint, region, None)
    }

    /// As [`for_endpoint`](Self::for_endpoint), for a fake on a virtual clock: every wait
    /// (the SDK's retry backoff and rate limiting, the provider's [`pause`](Self::pause))
    /// goes through `sleep`, which moves the fake's clock instead of sleeping, and no
    /// timeout applies (a timeout measured on such a clock would fire at once). The retry
    /// policy stays [`retry_config`].
    pub fn for_endpoint_on_clock(endpoint: &str, region: &str, sleep: SharedAsyncSleep) -> Self {
        Self::build_for_endpoint(endpoint, region, Some(sleep))
    }

    fn build_for_endpoint(endpoint: &str, region: &str, sleep: Option<SharedAsyncSleep>) -> Self {
        let calls = CallCounter::default();
        let creds = Credentials::new("capa", "capa-placeholder", None, None, "capa-endpoint");
        let mut ec2 = aws_sdk_ec2::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region.to_string()))
            .endpoint_url(endpoint)
            .credentials_provider(creds.clone())
            .retry_config(retry_config())
            .interceptor(calls.clone());
        let mut elb = aws_sdk_elasticloadbalancing::Config::builder()
            .behavior_version(aws_sdk_elasticloadbalancing::config::BehaviorVersion::latest())
            .region(aws_sdk_elasticloadbalancing::config::Region::new(
                region.to_string(),
            ))
            .endpoint_url(endpoint)
            .credentials_provider(creds)
            .retry_config(retry_config())
            .interceptor(calls.clone());
        if let Some(sleep) = &sleep {
            ec2 = ec2
                .sleep_impl(sleep.clone())
                .timeout_config(TimeoutConfig::disabled())
                .stalled_stream_protection(StalledStreamProtectionConfig::disabled());
            elb = elb
                .sleep_impl(sleep.clone())
                .timeout_config(TimeoutConfig::disabled())
                .stalled_stream_protection(StalledStreamProtectionConfig::disabled());
        }
        let (ec2, elb) = (ec2.build(), elb.build());
        Clients {
            ec2: aws_sdk_ec2::Client::from_conf(ec2),
            elb: aws_sdk_elasticloadbalancing::Client::from_conf(elb),
            calls,
            region: region.to_string(),
            sleep,
            zones: ZoneCache::default(),
        }
    }
}
