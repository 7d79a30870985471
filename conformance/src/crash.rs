//! Crashes on demand: clients whose k-th mutating call reaches AWS but loses its answer, and
//! whose later calls fail before they are sent, as if the process died right after the k-th
//! change. Works on any target, real AWS included.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextRef,
};
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use provider::Clients;

/// The interceptor: cut after the `k`-th mutating call.
#[derive(Debug, Clone)]
pub struct CutAfter {
    k: usize,
    seen: Arc<AtomicUsize>,
}

#[derive(Debug, Clone)]
struct LoseAnswer;

impl Storable for LoseAnswer {
    type Storer = StoreReplace<Self>;
}

impl CutAfter {
    /// Cut after the `k`-th mutating call (k >= 1).
    pub fn new(k: usize) -> Self {
        CutAfter {
            k,
            seen: Arc::new(AtomicUsize::new(0)),
        }
    }
}

impl Intercept for CutAfter {
    fn name(&self) -> &'static str {
        "conformance-cut-after"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let mutating = cfg
            .load::<Metadata>()
            .is_some_and(|m| provider::clients::is_mutating(m.name()));
        if !mutating {
            if self.seen.load(Ordering::SeqCst) >= self.k {
                return Err("crashed (cut): no call after the cut".into());
            }
            return Ok(());
        }
        let n = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if n > self.k {
            return Err("crashed (cut): no call after the cut".into());
        }
        if n == self.k {
            cfg.interceptor_state().store_put(LoseAnswer);
        }
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        _context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if cfg.load::<LoseAnswer>().is_some() {
            return Err("crashed (cut): the answer of the last call was lost".into());
        }
        Ok(())
    }
}

/// Clients like `base` (same endpoint, region, credentials and call counter) that crash
/// after the `k`-th mutating call; the SDK's retries are off so the cut is exact.
pub fn crashing(base: &Clients, k: usize) -> Clients {
    let cut = CutAfter::new(k);
    let mut c = base.clone();
    c.ec2 = aws_sdk_ec2::Client::from_conf(
        base.ec2
            .config()
            .to_builder()
            .interceptor(cut.clone())
            .retry_config(aws_sdk_ec2::config::retry::RetryConfig::disabled())
            .build(),
    );
    c.elb = aws_sdk_elasticloadbalancing::Client::from_conf(
        base.elb
            .config()
            .to_builder()
            .interceptor(cut.clone())
            .retry_config(aws_sdk_elasticloadbalancing::config::retry::RetryConfig::disabled())
            .build(),
    );
    c
}
