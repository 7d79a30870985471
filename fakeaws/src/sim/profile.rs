//! Named bad days: a profile bundles throttling, consistency windows and fault rules, so one
//! word sets them all (`fakeaws --faults storm`, `cargo xtask conformance --faults storm`,
//! a scenario's `faults: storm`).
//!
//! - `calm` (the default): AWS on a good day; nothing throttles, lags or fails.
//! - `lag`: the storm's consistency windows alone: nothing throttles or fails, but new
//!   resources, tags and deletes show late.
//! - `storm`: EC2's throttling at AWS's documented rates; new instances, NAT gateways,
//!   security groups and load balancers unknown for 5 s after their create and tags written
//!   by CreateTags shown 3 s late; deleted resources still listed for 3 s; 5% of calls answered `InternalError` (500) without being
//!   done, 2% of creates done with their answer lost (500), and 10% of calls 150 ms late.
//!
//! A profile file is JSON: `{"throttling": 1.0, "consistency": {"create": {"instance": 5},
//! "tags": 3, "delete": {"*": 3}}, "rules": [...], "delays": {"natGateway": 60}}`, every field optional; a file
//! holding only rules (one, or a list) is read as a profile with those rules.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sim::consistency::{LOAD_BALANCER, Windows};
use crate::sim::faults::{Effect, Match, Rule, Trigger, parse_rules};
use crate::sim::transitions::Subject;

/// Throttling, consistency windows and fault rules, applied together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Throttling at this scale of AWS's figures (`None`: off).
    #[serde(default)]
    pub throttling: Option<f64>,
    /// Consistency windows.
    #[serde(default)]
    pub consistency: Windows,
    /// Fault rules, in order.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// How long asynchronous state changes take, in seconds, by subject (`instance`,
    /// `natGateway`, `loadBalancerRegistration`); unnamed ones complete by the next request.
    #[serde(default)]
    pub delays: BTreeMap<String, f64>,
}

/// The names [`Profile::named`] knows.
pub const NAMES: &[&str] = &["calm", "lag", "storm"];

impl Profile {
    /// AWS on a good day.
    pub fn calm() -> Self {
        Profile::default()
    }

    /// AWS lagging and nothing else: the storm's consistency windows, with no throttling and
    /// no failures, so that what a lagging describe hides (a twin launched after a lookup that
    /// came back empty) is all that can go wrong.
    pub fn lag() -> Self {
        Profile {
            consistency: Profile::storm().consistency,
            ..Profile::default()
        }
    }

    /// AWS on a bad day (see the module's documentation for the figures).
    pub fn storm() -> Self {
        let any = Match::default();
        let creates = |action: &str| Match {
            action: Some(action.to_string()),
            ..Match::default()
        };
        let rules = vec![
            Rule {
                on: creates("Create*"),
                when: Trigger::Probability(0.02),
                effect: Effect::LoseAnswer,
            },
            Rule {
                on: creates("RunInstances"),
                when: Trigger::Probability(0.02),
                effect: Effect::LoseAnswer,
            },
            Rule {
                on: creates("AllocateAddress"),
                when: Trigger::Probability(0.02),
                effect: Effect::LoseAnswer,
            },
            Rule {
                on: any.clone(),
                when: Trigger::Probability(0.05),
                effect: Effect::InternalError,
            },
            Rule {
                on: any,
                when: Trigger::Probability(0.10),
                effect: Effect::Latency { millis: 150 },
            },
        ];
        let lag = 5.0;
        Profile {
            throttling: Some(1.0),
            consistency: Windows {
                create: BTreeMap::from([
                    ("instance".to_string(), lag),
                    ("natgateway".to_string(), lag),
                    ("security-group".to_string(), lag),
                    (LOAD_BALANCER.to_string(), lag),
                ]),
                tags: 3.0,
                delete: BTreeMap::from([("*".to_string(), 3.0)]),
            },
            rules,
            delays: BTreeMap::new(),
        }
    }

    /// The profile called `name`, if there is one.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "calm" => Some(Profile::calm()),
            "lag" => Some(Profile::lag()),
            "storm" => Some(Profile::storm()),
            _ => None,
        }
    }

    /// A profile written as JSON (or a rule, or a list of rules), checked.
    pub fn parse(json: &[u8]) -> Result<Self, String> {
        let profile = match serde_json::from_slice::<Profile>(json) {
            Ok(p) => p,
            Err(as_profile) => match parse_rules(json) {
                Ok(rules) => Profile {
                    rules,
                    ..Profile::default()
                },
                Err(_) => return Err(format!("not a profile or fault rules: {as_profile}")),
            },
        };
        profile.validate()?;
        Ok(profile)
    }

    /// A profile by name (`calm`, `storm`), or else read from the file at that path.
    pub fn load(name_or_path: &str) -> Result<Self, String> {
        if let Some(p) = Profile::named(name_or_path) {
            return Ok(p);
        }
        let text = std::fs::read(name_or_path).map_err(|e| {
            format!(
                "'{name_or_path}' is neither a profile ({}) nor a readable file: {e}",
                NAMES.join(", ")
            )
        })?;
        Profile::parse(&text).map_err(|e| format!("{name_or_path}: {e}"))
    }

    /// Checks the figures: a positive throttling scale, windows, probabilities in [0, 1].
    pub fn validate(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        if let Some(s) = self.throttling
            && (!s.is_finite() || s <= 0.0)
        {
            problems.push(format!("the throttling scale must be > 0, not {s}"));
        }
        if let Err(e) = self.consistency.validate() {
            problems.push(e);
        }
        if let Err(e) = crate::sim::faults::validate_rules(&self.rules) {
            problems.push(e);
        }
        for (name, seconds) in &self.delays {
            if Subject::named(name).is_none() {
                problems.push(format!(
                    "delays: '{name}' is not one of {}",
                    Subject::NAMES.join(", ")
                ));
            }
            if !seconds.is_finite() || *seconds < 0.0 {
                problems.push(format!(
                    "delays: {name} must be seconds >= 0, not {seconds}"
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_profiles_are_valid_and_calm_does_nothing() {
        for name in NAMES {
            let p = Profile::named(name).unwrap();
            p.validate().unwrap();
        }
        let calm = Profile::calm();
        assert!(calm.rules.is_empty() && calm.throttling.is_none() && calm.consistency.is_zero());
        assert!(!Profile::storm().consistency.is_zero());
    }

    #[test]
    fn a_file_of_rules_is_a_profile_and_a_bad_one_is_refused_with_its_problems() {
        let rules = br#"[{"when": {"nth": {"n": 1, "times": 1}}, "effect": "internalError"}]"#;
        assert_eq!(Profile::parse(rules).unwrap().rules.len(), 1);
        let full = br#"{"throttling": 0.5, "consistency": {"create": {"vpc": 2}}}"#;
        let p = Profile::parse(full).unwrap();
        assert_eq!(p.throttling, Some(0.5));
        let bad = br#"{"throttling": -1, "consistency": {"create": {"vpcs": 2}},
            "rules": [{"when": {"probability": 2.0}, "effect": "unavailable"}]}"#;
        let e = Profile::parse(bad).unwrap_err();
        for part in ["throttling scale", "'vpcs'", "probability 2"] {
            assert!(e.contains(part), "{e}");
        }
        assert!(Profile::parse(b"{\"colour\": 1}").is_err());
        assert!(
            Profile::load("no-such-profile-or-file")
                .unwrap_err()
                .contains("calm, lag, storm")
        );
    }
}
