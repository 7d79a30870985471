//! Fault rules: AWS's bad days on demand. A rule matches calls by service, action and region,
//! fires on the n-th matching call (and the ones after, up to a count) or with a probability
//! drawn from the fake's seed, and then answers an error instead of doing the call (a named
//! AWS error, `InternalError` 500, `Unavailable` 503), or does the call and loses its answer
//! (the change is made, the client gets a 500 and retries: AWS's lost-answer case). The same
//! seed and the same calls fire the same faults, so a failing case replays exactly.
//!
//! Every action passes through [`Faults::before`] and [`Faults::after`] in `server.rs`; no
//! resource module knows about faults.

use serde::{Deserialize, Serialize};

use crate::ids::IdGen;
use crate::protocol::error::{ApiError, Common};
use crate::sim::transitions::Subject;

/// Which calls a rule matches; `None` matches any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Match {
    /// `ec2` or `elasticloadbalancing`.
    #[serde(default)]
    pub service: Option<String>,
    /// An action name; a trailing `*` matches a prefix (`Describe*`).
    #[serde(default)]
    pub action: Option<String>,
    /// A region name.
    #[serde(default)]
    pub region: Option<String>,
    /// The kind of resource the action acts on, as tags name resource types (`vpc`,
    /// `subnet`, `natgateway`, `security-group`, `instance`, ...; `load-balancer` for every
    /// classic ELB action): `{"kind": "natgateway"}` matches CreateNatGateway,
    /// DescribeNatGateways and DeleteNatGateway.
    #[serde(default)]
    pub kind: Option<String>,
    /// An availability zone: matches calls that place something there (by
    /// `Placement.AvailabilityZone`, `AvailabilityZone`, or the zone of the subnet they name),
    /// such as a RunInstances into a zone out of capacity.
    #[serde(default)]
    pub zone: Option<String>,
}

/// The kind of resource `action` of `service` acts on, named as [`Match::kind`] names it.
pub fn action_kind(service: &str, action: &str) -> Option<&'static str> {
    if service == "elasticloadbalancing" {
        return Some("load-balancer");
    }
    // Most specific first: "RouteTable" before "Route", "NatGateway" before anything else.
    const NOUNS: [(&str, &str); 14] = [
        ("NatGateway", "natgateway"),
        ("InternetGateway", "internet-gateway"),
        ("RouteTable", "route-table"),
        ("Route", "route-table"),
        ("SecurityGroup", "security-group"),
        ("NetworkInterface", "network-interface"),
        ("PrivateIpAddresses", "network-interface"),
        ("Subnet", "subnet"),
        ("Vpc", "vpc"),
        ("Address", "elastic-ip"),
        ("Instance", "instance"),
        ("Volume", "volume"),
        ("Image", "image"),
        ("KeyPair", "key-pair"),
    ];
    NOUNS
        .iter()
        .find(|(noun, _)| action.contains(noun))
        .map(|(_, kind)| *kind)
}

impl Match {
    fn matches_in(&self, service: &str, action: &str, region: &str, zone: Option<&str>) -> bool {
        if self.zone.is_some() && self.zone.as_deref() != zone {
            return false;
        }
        let action_ok = match self.action.as_deref() {
            None => true,
            Some(pattern) => match pattern.strip_suffix('*') {
                Some(prefix) => action.starts_with(prefix),
                None => action == pattern,
            },
        };
        action_ok
            && self.service.as_deref().is_none_or(|s| s == service)
            && self.region.as_deref().is_none_or(|r| r == region)
            && self
                .kind
                .as_deref()
                .is_none_or(|k| action_kind(service, action) == Some(k))
    }
}

/// When a matching call makes a rule fire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum Trigger {
    /// From the n-th matching call on (1: the first), for `times` calls.
    Nth {
        /// The first matching call that fires (counted from 1).
        n: u64,
        /// How many calls fire, from that one on.
        times: u64,
    },
    /// Each matching call with this probability (0.0 to 1.0), from the fake's seed.
    Probability(f64),
}

/// What a firing rule does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum Effect {
    /// Answers this AWS error (code, HTTP status, message) without doing the call.
    Error {
        /// The code, such as `InsufficientInstanceCapacity`.
        code: String,
        /// The HTTP status.
        status: u16,
        /// The message.
        message: String,
    },
    /// Answers `InternalError` (HTTP 500) without doing the call.
    InternalError,
    /// Answers `Unavailable` (HTTP 503) without doing the call.
    Unavailable,
    /// Does the call, then answers `InternalError` (HTTP 500) instead of its result: the
    /// change is made and the client does not know.
    LoseAnswer,
    /// Does the call, then cuts the connection without an answer: the change is made and the
    /// client sees the connection drop (over HTTP; an in-process caller gets the cut flag).
    CutConnection,
    /// Answers this much later (on a virtual clock, the region's time moves on instead).
    /// Latency adds to whatever else fires.
    Latency {
        /// The delay in milliseconds.
        millis: u64,
    },
    /// Does the call, and makes the asynchronous state it starts fail the way AWS reports
    /// it: the NAT gateway of a CreateNatGateway goes to `failed` with this failure code and
    /// message; the instance of a RunInstances to `terminated` with this state reason (a
    /// `Server.*` code); the instance of a RegisterInstancesWithLoadBalancer stays
    /// `OutOfService` with this reason; the interface endpoint of a CreateVpcEndpoint goes
    /// to `failed` with this code and message as its last error; the connection of a
    /// CreateVpcPeeringConnection to `failed` with this message as its status message. Only
    /// for those five actions.
    AsyncFailure {
        /// The failure code, such as `InsufficientFreeAddressesInSubnet` or
        /// `Server.InternalError`.
        code: String,
        /// The message AWS shows with it.
        message: String,
    },
}

/// The asynchronous state an action starts, which [`Effect::AsyncFailure`] can make fail.
pub fn async_subject(action: &str) -> Option<Subject> {
    match action {
        "CreateNatGateway" => Some(Subject::NatGateway),
        "RunInstances" => Some(Subject::Instance),
        "RegisterInstancesWithLoadBalancer" => Some(Subject::LoadBalancerRegistration),
        "CreateVpcEndpoint" => Some(Subject::VpcEndpoint),
        "CreateVpcPeeringConnection" => Some(Subject::VpcPeering),
        _ => None,
    }
}

/// Checks rules beyond their shape: probabilities in [0, 1], and an asynchronous failure
/// only on an action that starts one.
pub fn validate_rules(rules: &[Rule]) -> Result<(), String> {
    let mut problems = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        if let Trigger::Probability(p) = r.when
            && !(0.0..=1.0).contains(&p)
        {
            problems.push(format!("rule {}: probability {p} is not in [0, 1]", i + 1));
        }
        if matches!(r.effect, Effect::AsyncFailure { .. })
            && r.on.action.as_deref().and_then(async_subject).is_none()
        {
            problems.push(format!(
                "rule {}: asyncFailure needs on.action CreateNatGateway, RunInstances or \
                 RegisterInstancesWithLoadBalancer",
                i + 1
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// One fault rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Which calls it applies to.
    #[serde(default)]
    pub on: Match,
    /// When it fires.
    pub when: Trigger,
    /// What it does.
    pub effect: Effect,
}

/// Rules written as JSON: one rule, or a list of rules (the format of the control endpoint
/// and of `fakeaws --faults FILE`).
pub fn parse_rules(json: &[u8]) -> Result<Vec<Rule>, String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Rules {
        One(Rule),
        Many(Vec<Rule>),
    }
    match serde_json::from_slice::<Rules>(json) {
        Ok(Rules::One(r)) => validate_rules(std::slice::from_ref(&r)).map(|()| vec![r]),
        Ok(Rules::Many(rs)) => validate_rules(&rs).map(|()| rs),
        Err(e) => Err(format!("not fault rules: {e}")),
    }
}

/// The fault rules of a fake account, with how many calls each has seen.
#[derive(Debug, Clone)]
pub struct Faults {
    rules: Vec<(Rule, u64)>,
    random: IdGen,
}

/// What the layer decided for one call before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Do the call and answer its result.
    Proceed,
    /// Do the call, then answer this error instead.
    LoseAnswer(ApiError),
    /// Do the call, then cut the connection.
    Cut,
    /// Answer this error without doing the call.
    Refuse(ApiError),
}

/// The verdict on one call and the latency added to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// What happens to the call.
    pub verdict: Verdict,
    /// How much later it is answered.
    pub latency: std::time::Duration,
    /// The asynchronous state the call starts fails so (subject, code, message).
    pub async_failure: Option<(Subject, String, String)>,
}

impl Decision {
    /// The decision on a call no rule matches: it proceeds, on time.
    pub fn proceed() -> Self {
        Decision {
            verdict: Verdict::Proceed,
            latency: std::time::Duration::ZERO,
            async_failure: None,
        }
    }
}

impl Faults {
    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// No rules; `seed` draws the probabilities.
    pub fn new(seed: u64) -> Self {
        Faults {
            rules: Vec::new(),
            random: IdGen::new(seed, "faults"),
        }
    }

    /// Adds a rule after the others (the first firing rule decides a call).
    pub fn add(&mut self, rule: Rule) {
        self.rules.push((rule, 0));
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The rules, in order.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().map(|(r, _)| r)
    }

    /// Decides a call of `action` of `service` in `region`: every matching rule counts it,
    /// the first firing rule that is not latency decides, and every firing latency adds up.
    pub fn before(&mut self, service: &str, action: &str, region: &str) -> Decision {
        self.before_in(service, action, region, None)
    }

    /// Whether any rule matches by zone (then the caller works out the zone of each call).
    pub fn wants_zone(&self) -> bool {
        self.rules.iter().any(|(r, _)| r.on.zone.is_some())
    }

    /// As [`before`](Self::before), for a call that places something in `zone`.
    pub fn before_in(
        &mut self,
        service: &str,
        action: &str,
        region: &str,
        zone: Option<&str>,
    ) -> Decision {
        if self.rules.is_empty() {
            return Decision::proceed();
        }
        let mut verdict = Verdict::Proceed;
        let mut latency = std::time::Duration::ZERO;
        let mut async_failure = None;
        for (rule, seen) in &mut self.rules {
            if !rule.on.matches_in(service, action, region, zone) {
                continue;
            }
            *seen += 1;
            let fires = match rule.when {
                Trigger::Nth { n, times } => *seen >= n && *seen < n.saturating_add(times),
                Trigger::Probability(p) => {
                    // 53 random bits make a uniform draw in [0, 1).
                    #[allow(clippy::cast_precision_loss)]
                    let draw = (self.random.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    draw < p
                }
            };
            if !fires {
                continue;
            }
            if let Effect::Latency { millis } = rule.effect {
                latency += std::time::Duration::from_millis(millis);
                continue;
            }
            if let Effect::AsyncFailure { code, message } = &rule.effect {
                if async_failure.is_none() {
                    async_failure =
                        async_subject(action).map(|s| (s, code.clone(), message.clone()));
                }
                continue;
            }
            if verdict == Verdict::Proceed {
                verdict = match &rule.effect {
                    Effect::Error {
                        code,
                        status,
                        message,
                    } => Verdict::Refuse(
                        ApiError::new(code.clone(), message.clone()).with_status(*status),
                    ),
                    Effect::InternalError => Verdict::Refuse(internal_error()),
                    Effect::Unavailable => Verdict::Refuse(
                        ApiError::new(
                            Common::Unavailable,
                            "The service is unavailable. Please try again shortly.",
                        )
                        .with_status(503),
                    ),
                    Effect::LoseAnswer => Verdict::LoseAnswer(internal_error()),
                    Effect::CutConnection => Verdict::Cut,
                    Effect::Latency { .. } | Effect::AsyncFailure { .. } => Verdict::Proceed,
                };
            }
        }
        Decision {
            verdict,
            latency,
            async_failure,
        }
    }
}

fn internal_error() -> ApiError {
    ApiError::new(
        Common::InternalError,
        "An internal error has occurred. Please try again.",
    )
    .with_status(500)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(action: &str, when: Trigger, effect: Effect) -> Rule {
        Rule {
            on: Match {
                action: Some(action.into()),
                ..Match::default()
            },
            when,
            effect,
        }
    }

    #[test]
    fn nth_fires_on_its_calls_only() {
        let mut f = Faults::new(1);
        f.add(rule(
            "CreateVpc",
            Trigger::Nth { n: 2, times: 2 },
            Effect::InternalError,
        ));
        let seen: Vec<bool> = (0..5)
            .map(|_| f.before("ec2", "CreateVpc", "us-east-1").verdict != Verdict::Proceed)
            .collect();
        assert_eq!(seen, [false, true, true, false, false]);
        assert_eq!(
            f.before("ec2", "DeleteVpc", "us-east-1").verdict,
            Verdict::Proceed,
            "another action"
        );
    }

    #[test]
    fn probability_is_reproducible_from_the_seed() {
        let run = |seed| {
            let mut f = Faults::new(seed);
            f.add(rule(
                "Describe*",
                Trigger::Probability(0.3),
                Effect::Unavailable,
            ));
            (0..200)
                .map(|_| f.before("ec2", "DescribeVpcs", "us-east-1").verdict != Verdict::Proceed)
                .collect::<Vec<_>>()
        };
        let a = run(7);
        assert_eq!(a, run(7));
        let fired = a.iter().filter(|f| **f).count();
        assert!((30..90).contains(&fired), "about 30% of 200: {fired}");
    }

    #[test]
    fn a_kind_matches_every_action_on_it() {
        let on = |kind: &str| Match {
            kind: Some(kind.into()),
            ..Match::default()
        };
        let nat = on("natgateway");
        for a in [
            "CreateNatGateway",
            "DescribeNatGateways",
            "DeleteNatGateway",
        ] {
            assert!(nat.matches_in("ec2", a, "us-east-1", None), "{a}");
        }
        assert!(!nat.matches_in("ec2", "CreateInternetGateway", "us-east-1", None));
        assert!(on("route-table").matches_in("ec2", "CreateRoute", "us-east-1", None));
        assert!(on("elastic-ip").matches_in("ec2", "ReleaseAddress", "us-east-1", None));
        assert!(on("load-balancer").matches_in(
            "elasticloadbalancing",
            "ConfigureHealthCheck",
            "x",
            None
        ));
        assert!(!on("instance").matches_in("ec2", "CreateTags", "us-east-1", None));
    }

    #[test]
    fn a_zone_matches_only_calls_placed_there() {
        let mut f = Faults::new(1);
        f.add(Rule {
            on: Match {
                action: Some("RunInstances".into()),
                zone: Some("us-east-1a".into()),
                ..Match::default()
            },
            when: Trigger::Nth {
                n: 1,
                times: u64::MAX,
            },
            effect: Effect::InternalError,
        });
        assert!(f.wants_zone());
        let fires = |f: &mut Faults, zone| {
            f.before_in("ec2", "RunInstances", "us-east-1", zone)
                .verdict
                != Verdict::Proceed
        };
        assert!(fires(&mut f, Some("us-east-1a")));
        assert!(!fires(&mut f, Some("us-east-1b")));
        assert!(!fires(&mut f, None));
    }

    #[test]
    fn latency_adds_to_the_verdict_of_another_rule() {
        let mut f = Faults::new(1);
        let always = Trigger::Nth {
            n: 1,
            times: u64::MAX,
        };
        f.add(rule(
            "RunInstances",
            always.clone(),
            Effect::Latency { millis: 250 },
        ));
        f.add(rule("Run*", always.clone(), Effect::Latency { millis: 50 }));
        f.add(rule("RunInstances", always, Effect::CutConnection));
        let d = f.before("ec2", "RunInstances", "us-east-1");
        assert_eq!(d.verdict, Verdict::Cut);
        assert_eq!(d.latency, std::time::Duration::from_millis(300));
        let calm = f.before("ec2", "DescribeVpcs", "us-east-1");
        assert_eq!(calm.verdict, Verdict::Proceed);
        assert_eq!(calm.latency, std::time::Duration::ZERO);
    }
}
