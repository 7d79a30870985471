//! The control endpoint: JSON over HTTP under `/_fakeaws/`, a path no AWS client uses, so any
//! language can steer a standalone fake: read the call log, set fault rules, turn throttling
//! on or off, move a region's clock, and reset the whole account.
//!
//! | method and path | body | answer |
//! |---|---|---|
//! | `GET /_fakeaws/calls` | | the call log: `[{service, region, action, error, micros}]` |
//! | `GET /_fakeaws/faults` | | the fault rules |
//! | `POST /_fakeaws/faults` | a rule, or a list of rules | how many rules there are |
//! | `DELETE /_fakeaws/faults` | | every rule removed |
//! | `POST /_fakeaws/throttle` | `{"region": R, "scale": 1.0}` (`null`: off) | |
//! | `POST /_fakeaws/consistency` | `{"region": R, "create": {"instance": 5}, "tags": 3, "delete": {"subnet": 3}}` | |
//! | `POST /_fakeaws/clock` | `{"region": R, "advanceSeconds": N}` | the region's time |
//! | `POST /_fakeaws/spot-interruption` | `{"region": R, "instanceIds": [...], "reason": "capacity"}` (or `"price"`) | the instances interrupted: terminated after their two-minute notice |
//! | `POST /_fakeaws/reset` | | every region, the call log and the rules forgotten |
//!
//! Rules are written as `{"on": {"service": "ec2", "action": "RunInstances", "region":
//! "us-east-1", "kind": "instance", "zone": "us-east-1a"}, "when": {"nth": {"n": 1, "times": 1}} | {"probability":
//! 0.05}, "effect": "internalError" | "unavailable" | "loseAnswer" | "cutConnection" |
//! {"latency": {"millis": 200}} | {"error": {"code": ..., "status": ..., "message": ...}} |
//! {"asyncFailure": {"code": ..., "message": ...}}}` (see `crate::sim::faults`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::server::Fake;
use crate::sim::faults::parse_rules;

/// The path prefix of the control endpoint.
pub const PREFIX: &str = "/_fakeaws/";

/// A JSON answer: HTTP status and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: Value,
}

fn ok(body: Value) -> Reply {
    Reply { status: 200, body }
}

/// A refusal: `status` and `{"error": message}`.
pub(crate) fn bad(status: u16, message: impl Into<String>) -> Reply {
    Reply {
        status,
        body: json!({ "error": message.into() }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Throttle {
    region: String,
    scale: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Lag {
    region: String,
    #[serde(default)]
    create: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    tags: f64,
    #[serde(default)]
    delete: std::collections::BTreeMap<String, f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SpotInterruption {
    region: String,
    instance_ids: Vec<String>,
    #[serde(default = "capacity")]
    reason: crate::ec2::spot_request::Interruption,
}

fn capacity() -> crate::ec2::spot_request::Interruption {
    crate::ec2::spot_request::Interruption::Capacity
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Advance {
    region: String,
    advance_seconds: u64,
}

fn parse<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, Reply> {
    serde_json::from_slice(body).map_err(|e| bad(400, format!("the body is not valid: {e}")))
}

/// Saves the account after a change the control endpoint made (with a state file).
fn saved(fake: &Fake) -> Result<(), Reply> {
    fake.save().map_err(|e| bad(500, e.to_string()))
}

fn region_named(fake: &Fake, name: String) -> Result<String, Reply> {
    if fake.knows_region(&name) {
        Ok(name)
    } else {
        Err(bad(400, format!("'{name}' is not a region name")))
    }
}

/// Serves one control request: `method`, the path after [`PREFIX`], the body.
pub fn handle(fake: &Fake, method: &str, path: &str, body: &[u8]) -> Reply {
    let result = match (method, path.trim_end_matches('/')) {
        ("GET", "calls") => Ok(ok(json!(fake.calls()))),
        ("GET", "faults") => Ok(ok(json!(
            fake.with_faults(|f| f.rules().cloned().collect::<Vec<_>>())
        ))),
        ("POST", "faults") => parse_rules(body)
            .map_err(|e| bad(400, format!("the body is not valid: {e}")))
            .map(|rules| {
                let count = fake.with_faults(|f| {
                    for r in rules {
                        f.add(r);
                    }
                    f.rules().count()
                });
                ok(json!({ "rules": count }))
            }),
        ("DELETE", "faults") => {
            fake.with_faults(crate::sim::faults::Faults::clear);
            Ok(ok(json!({ "rules": 0 })))
        }
        ("POST", "throttle") => parse::<Throttle>(body)
            .and_then(|t| region_named(fake, t.region.clone()).map(|_| t))
            .map(|t| {
                fake.with_region(&t.region, |r| match t.scale {
                    Some(scale) => r.throttle.enable(scale),
                    None => r.throttle.disable(),
                });
                ok(json!({ "region": t.region, "scale": t.scale }))
            }),
        ("POST", "consistency") => parse::<Lag>(body)
            .and_then(|l| region_named(fake, l.region.clone()).map(|_| l))
            .and_then(|l| {
                let windows = crate::sim::consistency::Windows {
                    create: l.create,
                    tags: l.tags,
                    delete: l.delete,
                };
                windows
                    .validate()
                    .map_err(|e| bad(400, format!("the body is not valid: {e}")))?;
                fake.with_region(&l.region, |r| {
                    r.consistency.set_windows(windows.clone());
                });
                Ok(ok(json!({ "region": l.region, "windows": windows })))
            }),
        ("POST", "clock") => parse::<Advance>(body)
            .and_then(|a| region_named(fake, a.region.clone()).map(|_| a))
            .and_then(|a| {
                let now = fake.with_region(&a.region, |r| {
                    r.clock.advance(Duration::from_secs(a.advance_seconds));
                    r.clock.now_datetime()
                });
                saved(fake)?;
                Ok(ok(json!({
                    "region": a.region,
                    "now": crate::protocol::xml::format_timestamp(now),
                })))
            }),
        ("POST", "spot-interruption") => parse::<SpotInterruption>(body)
            .and_then(|i| region_named(fake, i.region.clone()).map(|_| i))
            .and_then(|i| {
                fake.with_region(&i.region, |r| {
                    crate::ec2::spot_request::interrupt(r, &i.instance_ids, i.reason)
                })
                .map_err(|problems| {
                    bad(
                        400,
                        format!("nothing was interrupted: {}", problems.join("; ")),
                    )
                })?;
                saved(fake)?;
                Ok(ok(json!({
                    "region": i.region,
                    "interrupted": i.instance_ids,
                    "terminatesInSeconds": crate::ec2::spot_request::INTERRUPTION_NOTICE.as_secs(),
                })))
            }),
        ("POST", "reset") => {
            fake.reset();
            saved(fake).map(|()| ok(json!({ "reset": true })))
        }
        (
            _,
            "calls" | "faults" | "throttle" | "consistency" | "clock" | "spot-interruption"
            | "reset",
        ) => Err(bad(
            405,
            format!("{method} is not served on {PREFIX}{path}"),
        )),
        _ => Err(bad(404, format!("no control endpoint {PREFIX}{path}"))),
    };
    result.unwrap_or_else(|reply| reply)
}
