//! Eventual consistency: AWS answers from replicas that lag behind its writes. A resource just
//! created may be unknown for a while, to describes (they leave it out) and to calls that name
//! it (they answer its NotFound code: "does not mean the instance does not exist", as the EC2
//! guide puts it); tags written by CreateTags may show late. Each lag is a window on the
//! region's clock, per resource type, and zero by default, so nothing lags unless asked. A
//! resource just deleted may still be listed for a while: describes that list (all, or by
//! filters) still show it as it was, with its tags, while calls naming it answer its NotFound
//! code and nothing depends on it any more.
//!
//! One layer does it for every action, around the call in `server.rs`: [`before`] refuses a
//! call that names something hidden and notes what the call may create or delete; [`after`]
//! hides what it created (every id the region's id generator minted during the call), holds
//! back the tags it wrote and keeps a ghost of what it deleted. Describes leave hidden records
//! out and list ghosts through the shared describe path (`Kind::describe`, DescribeTags,
//! DescribeLoadBalancers). No resource module knows.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;
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
    /// How long a deleted resource is still listed, by resource type (those of [`GHOSTS`]);
    /// `*` stands for every type without an entry of its own.
    #[serde(default)]
    pub delete: BTreeMap<String, f64>,
}

impl Windows {
    /// Whether nothing lags.
    pub fn is_zero(&self) -> bool {
        self.tags <= 0.0
            && self
                .create
                .values()
                .chain(self.delete.values())
                .all(|s| *s <= 0.0)
    }

    /// The longest window of any kind (how long until everything done shows).
    pub fn longest(&self) -> Duration {
        let longest = self
            .create
            .values()
            .chain(self.delete.values())
            .copied()
            .fold(self.tags, f64::max);
        seconds_to_duration(longest)
    }

    /// The window of new resources of `resource_type`.
    pub fn create_window(&self, resource_type: &str) -> Duration {
        window_of(&self.create, resource_type)
    }

    /// How long a deleted resource of `resource_type` is still listed.
    pub fn delete_window(&self, resource_type: &str) -> Duration {
        window_of(&self.delete, resource_type)
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
        for (t, s) in &self.delete {
            if t != "*" && !GHOSTS.iter().any(|(_, k)| k.resource_type().as_str() == t) {
                let listed: Vec<&str> = GHOSTS
                    .iter()
                    .map(|(_, k)| k.resource_type().as_str())
                    .collect();
                problems.push(format!(
                    "'{t}' is not a resource type a delete window applies to ({})",
                    listed.join(", ")
                ));
            }
            if !s.is_finite() || *s < 0.0 {
                problems.push(format!(
                    "the delete window of '{t}' must be seconds >= 0, not {s}"
                ));
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

fn window_of(windows: &BTreeMap<String, f64>, resource_type: &str) -> Duration {
    let seconds = windows
        .get(resource_type)
        .or_else(|| windows.get("*"))
        .copied()
        .unwrap_or(0.0);
    seconds_to_duration(seconds)
}

/// The deletes whose resource may still be listed afterwards: action, and the kind of the id
/// it names. (Instances and NAT gateways are listed for an hour anyway, `terminated` and
/// `deleted`.)
pub const GHOSTS: &[(&str, Kind)] = &[
    ("DeleteVpc", Kind::Vpc),
    ("DeleteSubnet", Kind::Subnet),
    ("DeleteInternetGateway", Kind::InternetGateway),
    ("DeleteSecurityGroup", Kind::SecurityGroup),
    ("DeleteRouteTable", Kind::RouteTable),
    ("DeleteNetworkInterface", Kind::NetworkInterface),
    ("DeleteVolume", Kind::Volume),
    ("ReleaseAddress", Kind::ElasticIp),
];

/// A resource deleted and still listed: until when, its tags, and its record as it was (a
/// record of its kind's table; the state file keeps the rest, and the record is gone after a
/// restart).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ghost {
    until: SystemTime,
    tags: BTreeMap<String, String>,
    #[serde(skip)]
    record: Option<Arc<dyn Any + Send + Sync>>,
}

/// A copy of the record `id` of `kind`'s table, when it is one that can linger.
fn record_of(region: &Region, kind: Kind, id: &str) -> Option<Arc<dyn Any + Send + Sync>> {
    fn copy<T: Clone + Send + Sync + 'static>(
        map: &BTreeMap<String, T>,
        id: &str,
    ) -> Option<Arc<dyn Any + Send + Sync>> {
        map.get(id)
            .map(|r| Arc::new(r.clone()) as Arc<dyn Any + Send + Sync>)
    }
    match kind {
        Kind::Vpc => copy(&region.vpcs, id),
        Kind::Subnet => copy(&region.subnets, id),
        Kind::InternetGateway => copy(&region.internet_gateways, id),
        Kind::SecurityGroup => copy(&region.security_groups, id),
        Kind::RouteTable => copy(&region.route_tables, id),
        Kind::NetworkInterface => copy(&region.network_interfaces, id),
        Kind::Volume => copy(&region.volumes, id),
        Kind::ElasticIp => copy(&region.addresses, id),
        _ => None,
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
    /// Resources deleted and still listed, by id.
    #[serde(default)]
    ghosts: BTreeMap<String, Ghost>,
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
        self.hidden.is_empty()
            && self.late_tags.is_empty()
            && self.ghosts.is_empty()
            && self.windows.is_zero()
    }

    /// The ghosts of type `T` (records of one kind's table) still listed, by id.
    pub fn ghosts<T: 'static>(&self) -> impl Iterator<Item = (&String, &T)> {
        self.ghosts.iter().filter_map(|(id, g)| {
            g.record
                .as_deref()
                .and_then(|r| r.downcast_ref::<T>())
                .map(|r| (id, r))
        })
    }

    /// Whether any deleted resource is still listed.
    pub fn has_ghosts(&self) -> bool {
        !self.ghosts.is_empty()
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

    /// Removes the ghosts whose window has ended at `now`; returns their ids and tags.
    fn expire_ghosts(&mut self, now: SystemTime) -> Vec<(String, BTreeMap<String, String>)> {
        let gone: Vec<String> = self
            .ghosts
            .iter()
            .filter(|(_, g)| g.until <= now)
            .map(|(id, _)| id.clone())
            .collect();
        gone.into_iter()
            .filter_map(|id| self.ghosts.remove(&id).map(|g| (id, g.tags)))
            .collect()
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
    /// A delete: what it names, as it was (with its window).
    deleting: Vec<(String, Ghost)>,
}

impl Noted {
    /// Nothing noted: the call leaves nothing for [`after`] to do (every call while the
    /// region plays no consistency window).
    fn is_empty(&self) -> bool {
        !self.recording
            && self.tags_before.is_empty()
            && self.new_load_balancer.is_none()
            && self.deleting.is_empty()
    }
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
    for (id, tags) in region.consistency.expire_ghosts(now) {
        // Its tags were listed with it; they go with it (unless the id lives again, which an
        // id never does).
        if region.check_taggable(&id).is_err() {
            for key in tags.keys() {
                region.tags.remove(&id, key);
            }
        }
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
    if let Some((_, kind)) = GHOSTS.iter().find(|(a, _)| *a == action) {
        let window = c.windows.delete_window(kind.resource_type().as_str());
        if window > Duration::ZERO {
            for (_, value) in form.pairs() {
                if Kind::of_id(value) == Some(*kind)
                    && let Some(record) = record_of(region, *kind, value)
                {
                    let ghost = Ghost {
                        until: now + window,
                        tags: region.tags.get(value).cloned().unwrap_or_default(),
                        record: Some(record),
                    };
                    noted.deleting.push((value.to_string(), ghost));
                }
            }
        }
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
    if noted.is_empty() {
        return;
    }
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
    for (id, ghost) in noted.deleting {
        // Deleted indeed: still listed, with its tags, until its window ends.
        if region.check_taggable(&id).is_err() {
            region.tags.insert(&id, ghost.tags.clone());
            region.consistency.ghosts.insert(id, ghost);
        }
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
            delete: BTreeMap::new(),
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
            delete: BTreeMap::from([("instance".into(), 1.0)]),
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
        assert!(
            problems.contains("'instance' is not a resource type a delete window applies to"),
            "{problems}"
        );
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
