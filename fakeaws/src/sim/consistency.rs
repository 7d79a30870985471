//! Eventual consistency: AWS answers from replicas that lag behind its writes. A resource just
//! created may be unknown for a while, to describes (they leave it out) and to calls that name
//! it (they answer its NotFound code: "does not mean the instance does not exist", as the EC2
//! guide puts it); tags written by CreateTags may show late. Each lag is a window on the
//! region's clock, per resource type, and zero by default, so nothing lags unless asked.
//!
//! One layer does it for every action, around the call in `server.rs`: [`before`] refuses a
//! call that names something hidden and notes what the call may create; [`after`] hides what
//! it created (every id the region's id generator minted during the call) and holds back the
//! tags it wrote. Describes leave hidden records out through the shared describe path
//! (`Kind::describe`, DescribeTags, DescribeLoadBalancers). No resource module knows.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::ec2::Kind;
use crate::protocol::error::ApiError;
use crate::protocol::query::FormReader;
use crate::region::Region;

/// The resource type key of classic load balancers in [`Windows::create`].
pub const LOAD_BALANCER: &str = "load-balancer";

/// How long each lag lasts, in seconds of the region's clock (all zero by default).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Windows {
    /// How long a new resource stays unknown, by resource type as tags name it (`vpc`,
    /// `subnet`, `security-group`, `instance`, `natgateway`, ..., and `load-balancer` for
    /// classic load balancers); `*` stands for every type without an entry of its own.
    #[serde(default)]
    pub create: BTreeMap<String, f64>,
    /// How long the tags written by CreateTags take to show.
    #[serde(default)]
    pub tags: f64,
}

impl Windows {
    /// Whether nothing lags.
    pub fn is_zero(&self) -> bool {
        self.tags <= 0.0 && self.create.values().all(|s| *s <= 0.0)
    }

    /// The longest window of any kind (how long until everything done shows).
    pub fn longest(&self) -> Duration {
        let longest = self.create.values().copied().fold(self.tags, f64::max);
        seconds_to_duration(longest)
    }

    /// The window of new resources of `resource_type`.
    pub fn create_window(&self, resource_type: &str) -> Duration {
        let seconds = self
            .create
            .get(resource_type)
            .or_else(|| self.create.get("*"))
            .copied()
            .unwrap_or(0.0);
        seconds_to_duration(seconds)
    }

    /// Checks the figures: finite, not negative, and known resource types.
    pub fn validate(&self) -> Result<(), String> {
        let known = |t: &str| {
            t == "*"
                || t == LOAD_BALANCER
                || Kind::ALL.iter().any(|k| k.resource_type().as_str() == t)
        };
        let mut problems = Vec::new();
        for (t, s) in &self.create {
            if !known(t) {
                problems.push(format!("'{t}' is not a resource type"));
            }
            if !s.is_finite() || *s < 0.0 {
                problems.push(format!("the window of '{t}' must be seconds >= 0, not {s}"));
            }
        }
        if !self.tags.is_finite() || self.tags < 0.0 {
            problems.push(format!(
                "the tags window must be seconds >= 0, not {}",
                self.tags
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

fn seconds_to_duration(seconds: f64) -> Duration {
    if seconds.is_finite() && seconds > 0.0 {
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
    } else {
        Duration::ZERO
    }
}

/// One region's lag: its windows, what is hidden until when, and tags held back. The state
/// file keeps what is hidden and held back (a write a client was told succeeded must show
/// after a restart too), not the windows, which come from the configuration.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Consistency {
    #[serde(skip)]
    windows: Windows,
    /// EC2 ids, and `elb/` + name for load balancers -> when they show.
    hidden: BTreeMap<String, SystemTime>,
    /// Tags written by CreateTags and not shown yet: when, on what, which.
    late_tags: Vec<(SystemTime, String, BTreeMap<String, String>)>,
}

impl Consistency {
    /// The windows.
    pub fn windows(&self) -> &Windows {
        &self.windows
    }

    /// Sets the windows; what is already hidden stays hidden until its time.
    pub fn set_windows(&mut self, windows: Windows) {
        self.windows = windows;
    }

    /// Whether the layer has nothing to do: no window and nothing pending.
    pub fn is_idle(&self) -> bool {
        self.hidden.is_empty() && self.late_tags.is_empty() && self.windows.is_zero()
    }

    /// Whether the EC2 resource `id` is hidden.
    pub fn hides(&self, id: &str) -> bool {
        !self.hidden.is_empty() && self.hidden.contains_key(id)
    }

    /// Whether the classic load balancer `name` is hidden.
    pub fn hides_load_balancer(&self, name: &str) -> bool {
        !self.hidden.is_empty() && self.hidden.contains_key(&elb_key(name))
    }

    /// Shows what is due at `now`; returns the held-back tags now due, in order written.
    pub fn settle(&mut self, now: SystemTime) -> Vec<(String, BTreeMap<String, String>)> {
        self.hidden.retain(|_, at| *at > now);
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.late_tags)
            .into_iter()
            .partition(|(at, _, _)| *at <= now);
        self.late_tags = later;
        due.into_iter().map(|(_, id, tags)| (id, tags)).collect()
    }

    /// Removes and returns the held-back tags of `id` (a later write to its tags goes after
    /// them).
    fn take_late_tags_of(&mut self, id: &str) -> Vec<BTreeMap<String, String>> {
        let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.late_tags)
            .into_iter()
            .partition(|(_, of, _)| of == id);
        self.late_tags = others;
        mine.into_iter().map(|(_, _, tags)| tags).collect()
    }
}

fn elb_key(name: &str) -> String {
    format!("elb/{name}")
}

/// What [`before`] noted for [`after`].
#[derive(Debug, Default)]
pub struct Noted {
    /// Whether the id generator is recording this call's new ids.
    recording: bool,
    /// CreateTags: each named resource's tags before the call.
    tags_before: Vec<(String, BTreeMap<String, String>)>,
    /// CreateLoadBalancer of a name that did not exist.
    new_load_balancer: Option<String>,
}

/// Before a call of `action`: refuses it with the NotFound answer of the first hidden thing
/// it names (filters aside: a filter only matches), and notes what [`after`] needs.
pub fn before(
    region: &mut Region,
    elb: bool,
    action: &str,
    form: &FormReader,
) -> Result<Noted, ApiError> {
    if region.consistency.is_idle() {
        return Ok(Noted::default());
    }
    let now = region.clock.now();
    for (id, tags) in region.consistency.settle(now) {
        show_tags(region, &id, tags);
    }
    let c = &region.consistency;
    for (key, value) in form.pairs() {
        if elb {
            let names_a_balancer =
                key == "LoadBalancerName" || key.starts_with("LoadBalancerNames.");
            if names_a_balancer && action != "CreateLoadBalancer" && c.hides_load_balancer(value) {
                return Err(crate::elb::load_balancer::not_found(value));
            }
        } else if !key.starts_with("Filter.")
            && c.hides(value)
            && let Some(kind) = Kind::of_id(value)
        {
            return Err(kind.not_found(&[value]));
        }
    }
    let mut noted = Noted::default();
    if elb {
        if action == "CreateLoadBalancer" && c.windows.create_window(LOAD_BALANCER) > Duration::ZERO
        {
            noted.new_load_balancer = form
                .peek("LoadBalancerName")
                .filter(|n| !region.load_balancers.contains_key(*n))
                .map(String::from);
        }
        return Ok(noted);
    }
    if !c.windows.create.is_empty() {
        region.ids.record();
        noted.recording = true;
    }
    if matches!(action, "CreateTags" | "DeleteTags") {
        let named: Vec<String> = form
            .pairs()
            .filter(|(k, _)| k.starts_with("ResourceId."))
            .map(|(_, v)| v.to_string())
            .collect();
        for id in named {
            if action == "DeleteTags" {
                // Tags still held back show before a delete takes them away.
                for tags in region.consistency.take_late_tags_of(&id) {
                    show_tags(region, &id, tags);
                }
            } else if region.consistency.windows.tags > 0.0 {
                let before = region.tags.get(&id).cloned().unwrap_or_default();
                noted.tags_before.push((id, before));
            }
        }
    }
    Ok(noted)
}

/// After a call: when it succeeded, hides what it created and holds back the tags it wrote.
pub fn after(region: &mut Region, noted: Noted, succeeded: bool) {
    let minted = if noted.recording {
        region.ids.take_recorded()
    } else {
        Vec::new()
    };
    if !succeeded {
        return;
    }
    let now = region.clock.now();
    for id in minted {
        let Some(kind) = Kind::of_id(&id) else {
            continue;
        };
        let window = region
            .consistency
            .windows
            .create_window(kind.resource_type().as_str());
        if window > Duration::ZERO {
            region.consistency.hidden.insert(id, now + window);
        }
    }
    if let Some(name) = noted.new_load_balancer
        && region.load_balancers.contains_key(&name)
    {
        let window = region.consistency.windows.create_window(LOAD_BALANCER);
        region
            .consistency
            .hidden
            .insert(elb_key(&name), now + window);
    }
    let tag_window = seconds_to_duration(region.consistency.windows.tags);
    for (id, before) in noted.tags_before {
        let written: BTreeMap<String, String> = region
            .tags
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|(k, v)| before.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if written.is_empty() {
            continue;
        }
        // Back to what the replicas still show; the write shows when its window ends.
        for k in written.keys() {
            match before.get(k) {
                Some(old) => region.tags.set(&id, k.clone(), old.clone()),
                None => region.tags.remove(&id, k),
            }
        }
        region
            .consistency
            .late_tags
            .push((now + tag_window, id, written));
    }
}

/// Shows held-back tags, unless the resource has gone meanwhile.
fn show_tags(region: &mut Region, id: &str, tags: BTreeMap<String, String>) {
    if region.check_taggable(id).is_ok() {
        region.tags.insert(id, tags);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_without_a_window_of_its_own_takes_the_star() {
        let w = Windows {
            create: BTreeMap::from([("*".into(), 2.0), ("instance".into(), 5.0)]),
            tags: 0.0,
        };
        assert_eq!(w.create_window("instance"), Duration::from_secs(5));
        assert_eq!(w.create_window("vpc"), Duration::from_secs(2));
        assert_eq!(w.longest(), Duration::from_secs(5));
        assert_eq!(Windows::default().longest(), Duration::ZERO);
        assert!(!w.is_zero());
        assert!(Windows::default().is_zero());
    }

    #[test]
    fn bad_windows_are_named() {
        let w = Windows {
            create: BTreeMap::from([("vpcs".into(), -1.0)]),
            tags: f64::NAN,
        };
        let problems = w.validate().unwrap_err();
        assert!(
            problems.contains("'vpcs' is not a resource type"),
            "{problems}"
        );
        assert!(
            problems.contains("must be seconds >= 0, not -1"),
            "{problems}"
        );
        assert!(problems.contains("tags window"), "{problems}");
    }

    #[test]
    fn settle_shows_what_is_due_and_keeps_the_rest() {
        let t0 = SystemTime::UNIX_EPOCH;
        let mut c = Consistency::default();
        c.hidden.insert("i-1".into(), t0 + Duration::from_secs(5));
        c.late_tags
            .push((t0 + Duration::from_secs(3), "i-1".into(), BTreeMap::new()));
        assert!(c.settle(t0 + Duration::from_secs(1)).is_empty());
        assert!(c.hides("i-1"));
        assert_eq!(c.settle(t0 + Duration::from_secs(3)).len(), 1);
        assert!(c.hides("i-1"));
        assert!(c.settle(t0 + Duration::from_secs(5)).is_empty());
        assert!(!c.hides("i-1"));
        assert!(c.is_idle());
    }
}
