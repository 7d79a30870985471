//! Request throttling as EC2 does it: token buckets per account and region, one per API action
//! (request rate limiting), sized by the action's category, plus resource token buckets for
//! the instance actions (resource rate limiting: one token per instance). A call that finds
//! its bucket empty is refused with `RequestLimitExceeded` (EC2, HTTP 503) or `Throttling`
//! (classic ELB, HTTP 400), and changes nothing. Buckets refill on the fake's clock, so a test
//! moves a virtual clock instead of sleeping.
//!
//! The figures are those of the EC2 API reference's request-throttling page ("Request token
//! bucket sizes and refill rates", "Resource token bucket sizes and refill rates"). Classic
//! ELB publishes none; its actions use the EC2 categories. Off by default; `scale` multiplies
//! every capacity and refill rate (0.1: a tenth of AWS's allowance).

use std::collections::BTreeMap;
use std::time::SystemTime;

/// The category of an action, which sizes its request bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// `Describe*`, `Get*`, `List*`, `Search*` with a filter or pagination.
    NonMutating,
    /// A non-mutating call with neither filters nor pagination.
    UnfilteredNonMutating,
    /// Every other action that changes state.
    Mutating,
    /// The mutating actions EC2 counts as resource-intensive (instances, images, key pairs,
    /// ingress rules).
    ResourceIntensive,
}

impl Category {
    /// The category of `action`; `unfiltered` when the request has no filter and no
    /// pagination parameter.
    pub fn of(action: &str, unfiltered: bool) -> Category {
        const READS: [&str; 4] = ["Describe", "Get", "List", "Search"];
        const RESOURCE_INTENSIVE: [&str; 8] = [
            "AuthorizeSecurityGroupIngress",
            "CreateKeyPair",
            "DeregisterImage",
            "RegisterImage",
            "RunInstances",
            "StartInstances",
            "StopInstances",
            "TerminateInstances",
        ];
        if READS.iter().any(|p| action.starts_with(p)) {
            if unfiltered {
                Category::UnfilteredNonMutating
            } else {
                Category::NonMutating
            }
        } else if RESOURCE_INTENSIVE.contains(&action) {
            Category::ResourceIntensive
        } else {
            Category::Mutating
        }
    }

    /// AWS's bucket capacity and refill rate (tokens per second) for the category.
    pub fn figures(self) -> (f64, f64) {
        match self {
            Category::NonMutating => (100.0, 20.0),
            Category::UnfilteredNonMutating => (50.0, 10.0),
            Category::Mutating => (200.0, 5.0),
            Category::ResourceIntensive => (50.0, 5.0),
        }
    }
}

/// AWS's resource bucket (capacity, refill per second) of an action that has one: a token per
/// instance the call names or launches.
pub fn resource_figures(action: &str) -> Option<(f64, f64)> {
    match action {
        "RunInstances" | "StartInstances" => Some((1000.0, 2.0)),
        "TerminateInstances" | "StopInstances" => Some((1000.0, 20.0)),
        _ => None,
    }
}

/// One token bucket.
#[derive(Debug, Clone)]
struct Bucket {
    tokens: f64,
    capacity: f64,
    refill: f64,
    at: SystemTime,
}

impl Bucket {
    fn full(capacity: f64, refill: f64, now: SystemTime) -> Self {
        Bucket {
            tokens: capacity,
            capacity,
            refill,
            at: now,
        }
    }

    /// Adds the tokens due since the last look.
    fn refill(&mut self, now: SystemTime) {
        let elapsed = now.duration_since(self.at).unwrap_or_default();
        self.tokens = (self.tokens + elapsed.as_secs_f64() * self.refill).min(self.capacity);
        self.at = now.max(self.at);
    }
}

/// The throttling of one region: off, or on with AWS's figures times a scale.
#[derive(Debug, Clone, Default)]
pub struct Throttle {
    scale: Option<f64>,
    requests: BTreeMap<String, Bucket>,
    resources: BTreeMap<String, Bucket>,
}

/// Why a call was throttled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The action's request bucket is empty.
    Request,
    /// The action's resource bucket holds fewer tokens than the call needs.
    Resource,
}

impl Throttle {
    /// Turns throttling on with AWS's figures times `scale` (1.0: AWS's own), full buckets.
    pub fn enable(&mut self, scale: f64) {
        self.scale = Some(scale.max(0.0));
        self.requests.clear();
        self.resources.clear();
    }

    /// Turns throttling off (the default).
    pub fn disable(&mut self) {
        self.scale = None;
        self.requests.clear();
        self.resources.clear();
    }

    /// Whether throttling is on.
    pub fn is_enabled(&self) -> bool {
        self.scale.is_some()
    }

    /// Takes the tokens a call of `action` in `category` needs (`units` resource tokens for
    /// the instance actions): all, or none when a bucket is short.
    pub fn admit(
        &mut self,
        action: &str,
        category: Category,
        units: usize,
        now: SystemTime,
    ) -> Result<(), Limit> {
        let Some(scale) = self.scale else {
            return Ok(());
        };
        let (capacity, refill) = category.figures();
        let request = self
            .requests
            .entry(action.to_string())
            .or_insert_with(|| Bucket::full(capacity * scale, refill * scale, now));
        request.refill(now);
        if request.tokens < 1.0 {
            return Err(Limit::Request);
        }
        if let Some((capacity, refill)) = resource_figures(action) {
            let resource = self
                .resources
                .entry(action.to_string())
                .or_insert_with(|| Bucket::full(capacity * scale, refill * scale, now));
            resource.refill(now);
            // Precision: f64 holds every count of instances a request can name.
            #[allow(clippy::cast_precision_loss)]
            let needed = units.max(1) as f64;
            if resource.tokens < needed {
                return Err(Limit::Resource);
            }
            resource.tokens -= needed;
        }
        if let Some(request) = self.requests.get_mut(action) {
            request.tokens -= 1.0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn buckets_empty_then_refill_at_the_documented_rate() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut t = Throttle::default();
        assert!(t.admit("CreateVpc", Category::Mutating, 0, t0).is_ok());
        t.enable(0.1);
        // Mutating: 200 tokens, 5 per second; a tenth of that is 20 and 0.5.
        for _ in 0..20 {
            assert_eq!(t.admit("CreateVpc", Category::Mutating, 0, t0), Ok(()));
        }
        assert_eq!(
            t.admit("CreateVpc", Category::Mutating, 0, t0),
            Err(Limit::Request)
        );
        // Another action has its own bucket.
        assert_eq!(t.admit("CreateSubnet", Category::Mutating, 0, t0), Ok(()));
        let t2 = t0 + Duration::from_secs(2);
        assert_eq!(t.admit("CreateVpc", Category::Mutating, 0, t2), Ok(()));
        assert_eq!(
            t.admit("CreateVpc", Category::Mutating, 0, t2),
            Err(Limit::Request)
        );
    }

    #[test]
    fn instance_actions_also_spend_a_token_per_instance() {
        let t0 = SystemTime::UNIX_EPOCH;
        let mut t = Throttle::default();
        t.enable(0.1);
        // RunInstances' resource bucket: 1000 tokens at 2 per second; a tenth is 100. Its
        // request bucket (resource-intensive: 50) holds 5.
        assert_eq!(
            t.admit("RunInstances", Category::ResourceIntensive, 80, t0),
            Ok(())
        );
        assert_eq!(
            t.admit("RunInstances", Category::ResourceIntensive, 30, t0),
            Err(Limit::Resource)
        );
        assert_eq!(
            t.admit("RunInstances", Category::ResourceIntensive, 20, t0),
            Ok(())
        );
    }

    #[test]
    fn categories_follow_the_action_and_its_parameters() {
        assert_eq!(Category::of("DescribeVpcs", false), Category::NonMutating);
        assert_eq!(
            Category::of("DescribeVpcs", true),
            Category::UnfilteredNonMutating
        );
        assert_eq!(Category::of("CreateVpc", true), Category::Mutating);
        assert_eq!(
            Category::of("RunInstances", true),
            Category::ResourceIntensive
        );
    }
}
