//! The endpoint: routes a request to its service and region by the SigV4 credential scope,
//! checks the envelope (`Action`, `Version`), runs the generated dispatch under the region's
//! lock, and answers with the service's XML or error envelope and `x-amzn-RequestId`.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::Config;
use crate::answers::KEPT_OPERATIONS;
use crate::generated::{ec2, elb};
use crate::ids::{IdGen, RequestIds};
use crate::protocol::error::ApiError;
use crate::protocol::error::Common;
use crate::protocol::query::{Constraint, FormReader};
use crate::protocol::sigv4;
use crate::region::Region;
use crate::sim::clock::Clock;
use crate::sim::consistency;
use crate::sim::faults::{Decision, Faults, Verdict};
use crate::sim::throttle::{Category, Limit};
use crate::state::{self, StateError};

/// The shared state of one fake account: its regions, each behind its own lock.
#[derive(Clone, Debug)]
pub struct Fake {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    regions: Regions,
    request_ids: RequestIds,
    calls: Mutex<CallLog>,
    faults: Mutex<Faults>,
    /// Whether `faults` holds any rule: a call reads this rather than take the lock, while
    /// there is none.
    faults_armed: AtomicBool,
    /// Whether a region was handed out whole (`Fake::region`): changes made through it go
    /// unseen, so no answer is kept or given again from then on (`crate::answers`).
    handed_out: AtomicBool,
    store: Option<Store>,
}

/// The account's regions. Each region the fake serves ([`AWS_REGIONS`], then the
/// configuration's extra ones, by index) has a slot, filled on first use and read by every
/// call after without a lock (no map to search under a lock, no count to share); any other
/// region (named through [`Fake::region`], or kept in a state file) is in `others`.
#[derive(Debug)]
struct Regions {
    served: Vec<OnceLock<Arc<Mutex<Region>>>>,
    others: Mutex<HashMap<String, Arc<Mutex<Region>>>>,
}

/// Where the account is saved (`--state-file`), and how far the saves have come.
#[derive(Debug)]
struct Store {
    path: PathBuf,
    /// Counts the changes to save; each save records the count it covers.
    changes: AtomicU64,
    /// The count the last save covered; held while saving, so saves never interleave.
    saved: Mutex<u64>,
}

/// How many calls the log keeps before it drops the oldest half.
const CALL_LOG_LIMIT: usize = 100_000;

/// How many calls one chunk of the call log holds.
const CALL_LOG_CHUNK: usize = 1024;

/// The calls answered, oldest first, in chunks of [`CALL_LOG_CHUNK`]: logging a call never
/// copies the calls before it (one vector would copy them all each time it grew, under the
/// log's lock), and forgetting the oldest drops whole chunks.
#[derive(Debug, Default)]
struct CallLog {
    chunks: std::collections::VecDeque<Vec<Call>>,
    len: usize,
}

impl CallLog {
    fn push(&mut self, call: Call) {
        if self.len >= CALL_LOG_LIMIT {
            // A long-running server keeps the most recent half (at least).
            while let Some(oldest) = self.chunks.front() {
                if self.len - oldest.len() < CALL_LOG_LIMIT / 2 {
                    break;
                }
                self.len -= oldest.len();
                self.chunks.pop_front();
            }
        }
        match self.chunks.back_mut() {
            Some(last) if last.len() < CALL_LOG_CHUNK => last.push(call),
            _ => {
                let mut chunk = Vec::with_capacity(CALL_LOG_CHUNK);
                chunk.push(call);
                self.chunks.push_back(chunk);
            }
        }
        self.len += 1;
    }

    fn to_vec(&self) -> Vec<Call> {
        self.chunks.iter().flatten().cloned().collect()
    }

    fn into_vec(self) -> Vec<Call> {
        self.chunks.into_iter().flatten().collect()
    }
}

/// The largest request body the endpoint takes (2 MiB, axum's default): a larger one is
/// refused with 413 in the service's error shape (on the control endpoint, in JSON).
pub const MAX_BODY: usize = 2 * 1024 * 1024;

/// The most header bytes (request line and every `name: value`) a request may carry: far
/// beyond what an SDK sends (a few hundred bytes to a few KiB), as AWS's endpoints take.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The most header fields a request may carry: the HTTP layer's own limit (hyper parses 100
/// into a table on the stack), whose refusal `crate::refusal` answers in the service's shape.
/// A head of more bytes than [`MAX_HEADER_BYTES`] but less than the HTTP layer buffers
/// (about 400 KiB) reaches the handler, which refuses it in the same shape.
pub const MAX_HEADERS: usize = 100;

/// Serves `fake` on `listener` (HTTP/1.1, keep-alive) until `shutdown` completes; then lets the
/// connections in flight finish their requests (up to 10 s) and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    fake: Fake,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    serve_app(listener, router(fake), shutdown).await
}

/// Serves any axum `app` as [`serve`] serves the fake, on the same HTTP stack and settings:
/// what the benchmarks' ceiling (a bare handler with a canned answer) runs on, so that the
/// fake's throughput is measured against the most this stack can do.
pub async fn serve_app(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's own limits on a head (100 fields, about 400 KiB buffered): a head past them is
    // refused by hyper, and that refusal rewritten in the service's shape by `Shaped`.
    http.keep_alive(true);
    let mut connections = 0u64;
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors or a connection reset before it was taken: the
                // listener itself is fine; wait a moment for the pressure to pass.
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        connections += 1;
        let stream = crate::refusal::Shaped::new(stream, connections);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = crate::repoll::repoll(connection).await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(10), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open 10 s after shutdown; dropping them");
    }
    Ok(())
}

/// Serves `app` as [`serve_app`] does, on `127.0.0.1` at a port of the system's choosing, on
/// the current runtime for as long as it runs; returns the address. The workload benchmark
/// records a cluster's requests through a router served this way.
pub async fn spawn_app(app: axum::Router) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(e) = serve_app(listener, app, std::future::pending()).await {
            tracing::error!(error = %e, "server stopped");
        }
    });
    Ok(addr)
}

/// The longest `Action` the call log keeps: longer than any operation of the models
/// (`DescribeInstanceCreditSpecifications`...), so a real one is kept whole and a made-up one
/// cannot grow the log. With the region name capped too, an entry holds at most a few hundred
/// bytes, and the log at most [`CALL_LOG_LIMIT`] of them.
const MAX_LOGGED_ACTION: usize = 64;

/// The longest region name the call log keeps (the longest real one has 14 characters).
const MAX_LOGGED_REGION: usize = 32;

/// At most `n` characters of `s`.
fn capped(s: &str, n: usize) -> Cow<'static, str> {
    // No more bytes than that: no more characters either.
    if s.len() <= n {
        return Cow::Owned(s.to_string());
    }
    match s.char_indices().nth(n) {
        Some((end, _)) => Cow::Owned(s.get(..end).unwrap_or_default().to_string()),
        None => Cow::Owned(s.to_string()),
    }
}

/// One request the fake answered, as its call log keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Call {
    /// `ec2` or `elasticloadbalancing` (empty when the request named no service). The log
    /// borrows the names it knows (services, regions, served actions) rather than copy them.
    pub service: Cow<'static, str>,
    /// The region of the request's credential scope.
    pub region: Cow<'static, str>,
    /// The `Action` parameter.
    pub action: Cow<'static, str>,
    /// The error code answered, or `None` for a success.
    pub error: Option<String>,
    /// How long the answer took, in microseconds: the fake's own work plus any latency a
    /// fault rule added.
    pub micros: u64,
    /// Whether a fault rule cut the connection instead of answering.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

impl Call {
    /// Whether the action can change state: anything but `Describe*`, `Get*` and `List*`.
    pub fn is_mutating(&self) -> bool {
        !is_read_only(&self.action)
    }
}

/// Whether the action only reads: `Describe*`, `Get*` or `List*`.
fn is_read_only(action: &str) -> bool {
    ["Describe", "Get", "List"]
        .iter()
        .any(|p| action.starts_with(p))
}

/// A response before it becomes HTTP: status, XML body, request id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The XML body.
    pub body: String,
    /// The request id, also sent as `x-amzn-RequestId`.
    pub request_id: String,
    /// How long to wait before answering (latency a fault rule added, on a real clock).
    pub delay: std::time::Duration,
    /// Whether to cut the connection instead of answering (a fault rule's lost answer).
    pub cut: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave a region half-written in a way that matters
    // more than refusing every later request, so a poisoned lock is taken over.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A service the fake serves.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Service {
    /// EC2 (ec2Query).
    Ec2,
    /// Classic ELB (awsQuery).
    Elb,
}

impl Service {
    /// The service a credential scope names, if the fake serves it.
    pub(crate) fn from_name(name: &str) -> Option<Service> {
        match name {
            "ec2" => Some(Service::Ec2),
            "elasticloadbalancing" => Some(Service::Elb),
            _ => None,
        }
    }

    /// Its name in a credential scope (and in the call log).
    fn name(self) -> &'static str {
        match self {
            Service::Ec2 => "ec2",
            Service::Elb => "elasticloadbalancing",
        }
    }
}

/// A served operation of either service.
enum Op {
    Ec2(ec2::Action),
    Elb(elb::Action),
}

impl Op {
    /// The operation `service` serves under the `Action` `named`, if any.
    fn of(service: Service, named: &str) -> Option<Op> {
        match service {
            Service::Ec2 => ec2::Action::from_name(named).map(Op::Ec2),
            Service::Elb => elb::Action::from_name(named).map(Op::Elb),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Op::Ec2(a) => a.name(),
            Op::Elb(a) => a.name(),
        }
    }
}

impl Fake {
    /// A fresh fake account.
    pub fn new(config: Config) -> Self {
        Self::build(config, None)
    }

    /// The account kept in the state file `path` (see `crate::state`): read from it when it
    /// exists, and saved to it (at once, then after every change). A file that is not a
    /// complete fakeaws state of this format version and account is refused, never replaced.
    pub fn with_state_file(config: Config, path: &Path) -> Result<Self, StateError> {
        let loaded = state::load(path, &config.account_id)?;
        let fake = Self::build(
            config,
            Some(Store {
                path: path.to_path_buf(),
                changes: AtomicU64::new(0),
                saved: Mutex::new(0),
            }),
        );
        if let Some(loaded) = loaded {
            fake.inner.request_ids.restore(&loaded.request_ids);
            let mut others = lock(&fake.inner.regions.others);
            for (name, region) in loaded.regions {
                let region = Arc::new(Mutex::new(region.restored(&fake.inner.config)));
                // Every slot is empty yet; a region the fake does not serve is kept aside.
                let slot = fake
                    .slot(&name)
                    .and_then(|i| fake.inner.regions.served.get(i));
                let placed = match slot {
                    Some(slot) => slot.set(region),
                    None => Err(region),
                };
                if let Err(region) = placed {
                    others.insert(name, region);
                }
            }
        }
        fake.save()?;
        Ok(fake)
    }

    /// Saves the account to its state file now (nothing to do without one). The fake saves by
    /// itself after every call that can change state, and after the control endpoint moves a
    /// clock or resets; call this after changing a region directly, and at shutdown.
    pub fn save(&self) -> Result<(), StateError> {
        let Some(store) = &self.inner.store else {
            return Ok(());
        };
        let wanted = store.changes.fetch_add(1, Ordering::SeqCst) + 1;
        self.save_up_to(store, wanted)
    }

    /// Saves unless a save that started after change `wanted` already covered it (a burst of
    /// changes costs one save per waiting caller at most, usually fewer).
    fn save_up_to(&self, store: &Store, wanted: u64) -> Result<(), StateError> {
        let mut saved = lock(&store.saved);
        if *saved >= wanted {
            return Ok(());
        }
        let covers = store.changes.load(Ordering::SeqCst);
        let mut regions: Vec<(String, Arc<Mutex<Region>>)> = lock(&self.inner.regions.others)
            .iter()
            .map(|(name, region)| (name.clone(), region.clone()))
            .collect();
        regions.extend(
            self.served_regions()
                .map(|(n, r)| (n.to_string(), r.clone())),
        );
        // Regions are locked in name order; nothing else ever holds two region locks.
        regions.sort_by(|a, b| a.0.cmp(&b.0));
        let guards: Vec<(&str, MutexGuard<'_, Region>)> = regions
            .iter()
            .map(|(name, region)| (name.as_str(), lock(region)))
            .collect();
        let by_name: BTreeMap<&str, &Region> = guards.iter().map(|(n, g)| (*n, &**g)).collect();
        let request_ids = self.inner.request_ids.generator();
        state::save(
            &store.path,
            &self.inner.config.account_id,
            &request_ids,
            by_name,
        )?;
        *saved = covers;
        Ok(())
    }

    /// After a call that may have changed state: saved before it is answered, so that
    /// whatever a client was told survives a crash. A failure to save is logged (the call
    /// itself is done).
    fn saved_after_change(&self) {
        if let Err(e) = self.save() {
            tracing::error!(error = %e, "the state file was not saved");
        }
    }

    fn build(config: Config, store: Option<Store>) -> Self {
        let request_ids = IdGen::new(config.seed, "request-ids");
        let mut faults = Faults::new(config.seed);
        for rule in &config.faults {
            faults.add(rule.clone());
        }
        let served = AWS_REGIONS.len() + config.extra_regions.len();
        Fake {
            inner: Arc::new(Inner {
                config,
                regions: Regions {
                    served: (0..served).map(|_| OnceLock::new()).collect(),
                    others: Mutex::new(HashMap::new()),
                },
                request_ids: RequestIds::new(&request_ids),
                calls: Mutex::new(CallLog::default()),
                faults_armed: AtomicBool::new(!faults.is_empty()),
                faults: Mutex::new(faults),
                handed_out: AtomicBool::new(false),
                store,
            }),
        }
    }

    /// The fake's configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The region `name`, created as AWS hands it out on first use. What is changed through
    /// it is unseen by the fake until it is locked again, so from then on the fake keeps no
    /// answer for a poller ([`crate::answers`]); [`with_region`](Self::with_region) has no
    /// such cost.
    pub fn region(&self, name: &str) -> Arc<Mutex<Region>> {
        self.inner.handed_out.store(true, Ordering::SeqCst);
        self.region_of(name)
    }

    /// The region `name`, created as AWS hands it out on first use.
    fn region_of(&self, name: &str) -> Arc<Mutex<Region>> {
        if let Some(region) = self.slot(name).and_then(|i| self.served_region(i, name)) {
            return region.clone();
        }
        lock(&self.inner.regions.others)
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(Mutex::new(Region::new(name, &self.inner.config))))
            .clone()
    }

    /// The slot of the region `name`, when the fake serves it: its index in [`AWS_REGIONS`],
    /// or after them, in the configuration's extra regions.
    fn slot(&self, name: &str) -> Option<usize> {
        let packed = pack_region(name.as_bytes());
        let aws = packed
            .and_then(|p| PACKED_REGIONS.binary_search(&p).ok())
            // Padding is zeros: a name that ends in zero bytes packs as the name without.
            .filter(|i| AWS_REGIONS.get(*i) == Some(&name));
        aws.or_else(|| {
            let extra = &self.inner.config.extra_regions;
            extra
                .iter()
                .position(|r| r == name)
                .map(|i| AWS_REGIONS.len() + i)
        })
    }

    /// The served region in slot `i` (named `name`), created on first use.
    fn served_region(&self, i: usize, name: &str) -> Option<&Arc<Mutex<Region>>> {
        let slot = self.inner.regions.served.get(i)?;
        Some(slot.get_or_init(|| Arc::new(Mutex::new(Region::new(name, &self.inner.config)))))
    }

    /// The served regions created so far, with their names.
    fn served_regions(&self) -> impl Iterator<Item = (&str, &Arc<Mutex<Region>>)> {
        let names = AWS_REGIONS
            .iter()
            .copied()
            .chain(self.inner.config.extra_regions.iter().map(String::as_str));
        names
            .zip(&self.inner.regions.served)
            .filter_map(|(name, slot)| Some((name, slot.get()?)))
    }

    /// Every request answered since the start (or the last `take_calls`), in order.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.inner.calls).to_vec()
    }

    /// Returns the call log and empties it.
    pub fn take_calls(&self) -> Vec<Call> {
        std::mem::take(&mut *lock(&self.inner.calls)).into_vec()
    }

    /// Runs `f` on the region `name` under its lock (tests and admin tools use this to read
    /// or steer the state, e.g. to advance the clock).
    pub fn with_region<R>(&self, name: &str, f: impl FnOnce(&mut Region) -> R) -> R {
        let region = self.region_of(name);
        let mut guard = lock(&region);
        // Whatever `f` changes, no answer kept before is given again.
        guard.answers.changed();
        f(&mut guard)
    }

    /// Forgets everything: every region (they start again as AWS hands them out), the call
    /// log and the fault rules.
    pub fn reset(&self) {
        // A served region's slot stays; what it holds starts again, as a first use makes it.
        for (name, region) in self.served_regions() {
            *lock(region) = Region::new(name, &self.inner.config);
        }
        lock(&self.inner.regions.others).clear();
        *lock(&self.inner.calls) = CallLog::default();
        self.with_faults(Faults::clear);
    }

    /// Whether `name` is a region this fake serves: one of [`AWS_REGIONS`], or one it was
    /// told of.
    pub fn knows_region(&self, name: &str) -> bool {
        self.slot(name).is_some()
    }

    /// Runs `f` on the account's fault rules (to add, list or clear them).
    pub fn with_faults<R>(&self, f: impl FnOnce(&mut Faults) -> R) -> R {
        let mut faults = lock(&self.inner.faults);
        let out = f(&mut faults);
        self.inner
            .faults_armed
            .store(!faults.is_empty(), Ordering::SeqCst);
        out
    }

    /// Serves one HTTP request: when the fake holds credentials, its signature is verified
    /// first (an unknown key, a wrong signature or a time more than 15 minutes off gets the
    /// service's own error); then as [`handle`](Self::handle).
    pub fn handle_request(&self, request: &sigv4::Request<'_>) -> Answer {
        let authorization = request.header("authorization");
        let query = request
            .path_and_query
            .split_once('?')
            .map_or("", |(_, q)| q);
        let credentials = &self.inner.config.credentials;
        if !credentials.is_empty() {
            let service = authorization
                .and_then(sigv4::from_authorization)
                .map(|s| s.service);
            if let Err(refusal) = sigv4::verify(credentials, request, std::time::SystemTime::now())
            {
                let service = service.and_then(Service::from_name);
                let request_id = self.inner.request_ids.next();
                return answer_error(&refused(&refusal, service), service, request_id);
            }
        }
        self.handle(authorization, query.as_bytes(), request.body)
    }

    /// Serves one request: the `Authorization` header, the query string and the form body.
    /// No signature is verified here (in-process callers hold no secrets); HTTP requests go
    /// through [`handle_request`](Self::handle_request).
    pub fn handle(&self, authorization: Option<&str>, query: &[u8], body: &[u8]) -> Answer {
        let request_id = self.inner.request_ids.next();
        let mut form = FormReader::from_urlencoded(&[query, body]);
        // A presigned request's credential is copied out of the form, which decoding consumes.
        let presigned;
        let scope = match authorization.and_then(sigv4::from_authorization) {
            Some(scope) => Some(scope),
            None => {
                presigned = form.peek("X-Amz-Credential").map(str::to_string);
                presigned.as_deref().and_then(sigv4::from_credential)
            }
        };
        let Some(scope) = scope else {
            let err = ApiError::new(
                Common::MissingAuthenticationToken,
                "The request is not signed: fakeaws routes each request by the region and \
                 service of its SigV4 credential scope (Authorization: AWS4-HMAC-SHA256 \
                 Credential=KEY/DATE/REGION/ec2/aws4_request). Any credentials are accepted.",
            )
            .with_status(400);
            return answer_error(&err, None, request_id);
        };
        let Some(service) = Service::from_name(scope.service) else {
            let err = ApiError::new(
                Common::UnknownService,
                format!(
                    "fakeaws serves the services ec2 and elasticloadbalancing; the request is \
                     signed for '{}'",
                    scope.service
                ),
            );
            return answer_error(&err, None, request_id);
        };
        // A character XML 1.0 forbids could never be answered back (every describe of it
        // would be unparseable): refused at the door, as AWS refuses it, naming it by code.
        // The first such parameter in key order is named.
        if let Some((key, c)) = form.first_non_xml() {
            let why = format!(
                "Value for parameter {key} is invalid: it holds the character U+{:04X}, which \
                 XML 1.0 does not allow.",
                u32::from(c)
            );
            let err = match service {
                Service::Ec2 => ApiError::invalid_value(why),
                Service::Elb => ApiError::new(Common::ValidationError, why),
            };
            return answer_error(&err, Some(service), request_id);
        }
        // The operation is looked up once, for the dispatch and the log; the log names a
        // served action and a real region by the fake's own copy of the name.
        let named = form.peek("Action").unwrap_or_default();
        let op = Op::of(service, named);
        let action = op.as_ref().map_or_else(
            || capped(named, MAX_LOGGED_ACTION),
            |op| Cow::Borrowed(op.name()),
        );
        let slot = self.slot(scope.region);
        let region = match slot.and_then(|i| AWS_REGIONS.get(i)) {
            Some(aws) => Cow::Borrowed(*aws),
            None => capped(scope.region, MAX_LOGGED_REGION),
        };
        let started = std::time::Instant::now();
        let mut effects = Effects::default();
        // The answer is written after the region is let go (dispatch holds it), so that the
        // region's other callers don't wait for the XML.
        let served = op.as_ref().map(Op::name);
        let request = Request {
            region: (scope.region, slot),
            raw: (query, body),
            id: &request_id,
        };
        let result = self
            .dispatch(service, op, &request, &mut form, &mut effects)
            .map(|served_now| match (served_now, served) {
                (Served::Kept(text), _) => text,
                (Served::Fresh(answered, keep), Some(action)) => {
                    let text = write_answer(action, answered, &request_id);
                    if let Some((region, generation)) = keep {
                        lock(&region).answers.keep(
                            action,
                            generation,
                            request.raw,
                            &text,
                            &request_id,
                        );
                    }
                    text
                }
                (Served::Fresh(answered, _), None) => answered.encode(&request_id),
            });
        let took = started.elapsed() + effects.latency;
        tracing::debug!(
            region = %region,
            action = %action,
            status = result.as_ref().map_or_else(|e| e.status, |_| 200),
            "request"
        );
        let call = Call {
            service: Cow::Borrowed(service.name()),
            region,
            action,
            error: result.as_ref().err().map(|e| e.code.to_string()),
            micros: u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            cut: effects.cut,
        };
        if call.is_mutating() && !call.action.is_empty() {
            self.saved_after_change();
        }
        lock(&self.inner.calls).push(call);
        let mut answer = match result {
            Ok(body) => Answer {
                status: 200,
                body,
                request_id,
                delay: std::time::Duration::ZERO,
                cut: false,
            },
            Err(err) => answer_error(&err, Some(service), request_id),
        };
        answer.delay = effects.delay;
        answer.cut = effects.cut;
        answer
    }

    fn dispatch(
        &self,
        service: Service,
        op: Option<Op>,
        request: &Request<'_>,
        form: &mut FormReader,
        effects: &mut Effects,
    ) -> Result<Served, ApiError> {
        let (region, slot) = request.region;
        let (api_version, operations, label) = match service {
            Service::Ec2 => (ec2::API_VERSION, ec2::ALL_OPERATIONS, "EC2"),
            Service::Elb => (
                elb::API_VERSION,
                elb::ALL_OPERATIONS,
                "Elastic Load Balancing",
            ),
        };
        let named = form
            .peek("Action")
            .filter(|a| !a.is_empty())
            .ok_or_else(|| {
                ApiError::new(
                    Common::MissingAction,
                    "The request must contain the parameter Action",
                )
            })?;
        // Named now, while the form holds it; an unserved one is answered after the version
        // and the region are checked.
        let op = op.ok_or_else(|| unserved(named, operations, label));
        match form.peek("Version") {
            None | Some("") => return Err(ApiError::missing_parameter("Version")),
            Some(v) if v == api_version => {}
            Some("2015-12-01") if matches!(service, Service::Elb) => {
                return Err(ApiError::not_implemented(
                    "fakeaws serves classic Elastic Load Balancing (Version 2012-06-01); \
                     ELBv2 (Version 2015-12-01) is not implemented",
                ));
            }
            Some(v) => {
                return Err(ApiError::new(
                    Common::NoSuchVersion,
                    format!(
                        "The requested version ({v}) of service {label} is not served: fakeaws \
                         speaks {api_version}"
                    ),
                ));
            }
        }
        form.strip_envelope();
        let Some(state) = slot.and_then(|i| self.served_region(i, region)) else {
            return Err(ApiError::new(
                Common::InvalidRegion,
                format!("'{region}' is not a region name"),
            ));
        };
        let op = op?;
        let action = op.name();
        let name = service.name();
        // A copy from another region reads its source there first, one region locked at a
        // time.
        let copied = match (service, action) {
            (Service::Ec2, "CopyImage" | "CopySnapshot") => {
                self.copy_source(action, region, form)?
            }
            _ => None,
        };
        let mut guard = lock(state);
        guard.tick();
        // Whether the answer may come from the region's kept answers, or go to them: a kept
        // operation (one that only reads the region), while no answer depends on the clock
        // or on counts (`crate::answers`). Any other call may change the region (eventual
        // consistency shows what is due on any call), and no answer kept before it is given
        // again.
        let keeps = self.inner.config.keep_answers
            && matches!(service, Service::Ec2)
            && KEPT_OPERATIONS.binary_search(&action).is_ok()
            && !self.inner.faults_armed.load(Ordering::SeqCst)
            && !self.inner.handed_out.load(Ordering::SeqCst)
            && guard.consistency.is_idle();
        if !keeps {
            guard.answers.changed();
        }
        admit(&mut guard, service, action, form)?;
        if keeps && let Some(text) = guard.answers.answer(action, request.raw, request.id) {
            return Ok(Served::Kept(text));
        }
        let decision = if self.inner.faults_armed.load(Ordering::SeqCst) {
            let mut faults = lock(&self.inner.faults);
            let zone = faults.wants_zone().then(|| zone_of(&guard, form)).flatten();
            faults.before_in(name, action, region, zone.as_deref())
        } else {
            Decision::proceed()
        };
        if decision.latency > Duration::ZERO {
            effects.latency = decision.latency;
            // On a virtual clock the call takes its time there; on a real one, the answer waits.
            match guard.clock {
                Clock::Virtual(_) => guard.clock.advance(decision.latency),
                Clock::Real | Clock::Shifted(_) => effects.delay = decision.latency,
            }
        }
        let verdict = decision.verdict;
        if let Verdict::Refuse(err) = verdict {
            return Err(err);
        }
        let noted = consistency::before(&mut guard, matches!(service, Service::Elb), action, form)?;
        let keep = keeps.then(|| (Arc::clone(state), guard.answers.generation()));
        if let (Service::Ec2, "DescribeInstanceTypes") = (service, action) {
            crate::ec2::instance_type::check_named(form)?;
        }
        guard.copied = copied;
        let result = match op {
            Op::Ec2(op) => ec2::execute(&mut *guard, op, form).map(Answered::Ec2),
            Op::Elb(op) => {
                form.set_constraint(Constraint::AwsQuery);
                elb::execute(&mut *guard, op, form).map(Answered::Elb)
            }
        }
        .map(|answered| Served::Fresh(answered, keep));
        guard.copied = None;
        consistency::after(&mut guard, noted, result.is_ok());
        // The state the call started fails at its next step (taken after this call).
        if let (Some((subject, code, message)), true) = (&decision.async_failure, result.is_ok()) {
            guard.transitions.fail_next(*subject, code, message);
        }
        match verdict {
            Verdict::LoseAnswer(err) if result.is_ok() => Err(err),
            Verdict::Cut if result.is_ok() => {
                effects.cut = true;
                result
            }
            _ => result,
        }
    }
}

impl Fake {
    /// The source of a CopyImage or CopySnapshot sent to `region` from another region of its
    /// partition (`SourceRegion`), read there; `None` for a copy within `region` (or a request
    /// missing the parameters, which its decoding refuses).
    fn copy_source(
        &self,
        action: &str,
        region: &str,
        form: &FormReader,
    ) -> Result<Option<crate::ec2::copy::Source>, ApiError> {
        let Some(source_region) = form.peek("SourceRegion").filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if source_region == region {
            return Ok(None);
        }
        let bad = |why: &str| ApiError::invalid_parameter("SourceRegion", source_region, why);
        let Some(state) = self
            .slot(source_region)
            .and_then(|i| self.served_region(i, source_region))
        else {
            return Err(bad("The source region is not a region name."));
        };
        if !crate::ec2::copy::same_partition(source_region, region) {
            return Err(bad(
                "Copies between partitions are not supported (AWS: CreateStoreImageTask).",
            ));
        }
        let image = action == "CopyImage";
        let id_name = if image {
            "SourceImageId"
        } else {
            "SourceSnapshotId"
        };
        let Some(id) = form.peek(id_name).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let mut source = lock(state);
        source.tick();
        let read = if image {
            crate::ec2::copy::image_source(&source, id)
        } else {
            crate::ec2::copy::snapshot_source(&source, id)
        };
        read.map(Some)
    }
}

/// One request's parts that [`Fake::dispatch`] needs beside its form.
struct Request<'a> {
    /// The region's name and slot.
    region: (&'a str, Option<usize>),
    /// The query string and the body, as they came.
    raw: (&'a [u8], &'a [u8]),
    /// The request id.
    id: &'a str,
}

/// What [`Fake::dispatch`] gives back.
enum Served {
    /// An answer to write; with the region and the generation it was made at when it is to be
    /// kept once written.
    Fresh(
        Answered,
        Option<(Arc<Mutex<Region>>, crate::answers::Generation)>,
    ),
    /// The text of the answer kept for this request, with its request id.
    Kept(String),
}

/// A served operation's answer, not yet written. Small: each service's `Response` holds its
/// output boxed, so that moving the answer from the operation to the writer copies a pointer
/// rather than the largest output (600 bytes: CreateVpc's).
#[derive(Debug, PartialEq)]
enum Answered {
    Ec2(ec2::Response),
    Elb(elb::Response),
}

impl Answered {
    fn encode(&self, request_id: &str) -> String {
        match self {
            Answered::Ec2(r) => r.encode(request_id),
            Answered::Elb(r) => r.encode(request_id),
        }
    }

    /// Where `request_id` sits in `body`, this answer written with it: in EC2's answer the
    /// first element (`requestId`), in ELB's the last (`ResponseMetadata`'s `RequestId`).
    /// Text is escaped, so a tag cannot hide in a value.
    fn request_id_at(&self, body: &str, request_id: &str) -> Option<usize> {
        let at = match self {
            Answered::Ec2(_) => body.find("<requestId>")? + "<requestId>".len(),
            Answered::Elb(_) => body.rfind("<RequestId>")? + "<RequestId>".len(),
        };
        let end = at.checked_add(request_id.len())?;
        (body.get(at..end)? == request_id).then_some(at)
    }
}

/// An answer a thread wrote, kept so that an equal one is not written again: equal answers
/// are written alike but for their request ids (the generated answers hold no bare float,
/// whose `0.0 == -0.0` would break that: a model's numbers are `protocol::Float`, equal only
/// when their bits are).
struct Written {
    /// The operation.
    action: &'static str,
    answered: Answered,
    body: String,
    /// Where the request id sits in `body`.
    id_at: usize,
    id_len: usize,
}

/// How many read-only operations' last answers a thread keeps.
const WRITTEN_KEPT: usize = 8;

/// The largest answer kept: pollers repeat small describes; a large answer is written anew.
const WRITTEN_MAX: usize = 64 * 1024;

thread_local! {
    static WRITTEN: std::cell::RefCell<Vec<Written>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The body of `answered` with `request_id`. A read-only operation (`Describe*`, `Get*`,
/// `List*`) that answers what this thread last answered it (a poller waiting on a state, a
/// reconcile finding nothing to do) gets that answer's text with its own request id, rather
/// than the XML written again; any other is written.
fn write_answer(action: &'static str, answered: Answered, request_id: &str) -> String {
    if !is_read_only(action) {
        return answered.encode(request_id);
    }
    WRITTEN.with(|written| {
        let Ok(mut written) = written.try_borrow_mut() else {
            return answered.encode(request_id);
        };
        let kept = written.iter().position(|w| w.action == action);
        if let Some(w) = kept.and_then(|i| written.get(i))
            && w.answered == answered
            && let Some(body) =
                crate::answers::with_request_id(&w.body, (w.id_at, w.id_len), request_id)
        {
            return body;
        }
        let body = answered.encode(request_id);
        let Some(id_at) = answered
            .request_id_at(&body, request_id)
            .filter(|_| body.len() <= WRITTEN_MAX)
        else {
            return body;
        };
        let w = Written {
            action,
            answered,
            body: body.clone(),
            id_at,
            id_len: request_id.len(),
        };
        match kept {
            Some(i) => {
                if let Some(slot) = written.get_mut(i) {
                    *slot = w;
                }
            }
            None if written.len() < WRITTEN_KEPT => written.push(w),
            // Full: the oldest kept goes.
            None => {
                written.remove(0);
                written.push(w);
            }
        }
        body
    })
}

/// The availability zone a call places something in: named (`Placement.AvailabilityZone`,
/// `AvailabilityZone`), or the zone of the subnet it names (`SubnetId`, or its first
/// network interface's).
fn zone_of(region: &Region, form: &FormReader) -> Option<String> {
    if let Some(z) = form
        .peek("Placement.AvailabilityZone")
        .or_else(|| form.peek("AvailabilityZone"))
    {
        return Some(z.to_string());
    }
    let subnet = form
        .peek("SubnetId")
        .or_else(|| form.peek("NetworkInterface.1.SubnetId"))?;
    region.subnets.get(subnet).map(|s| s.zone.clone())
}

/// What the fault layer did to a call besides its verdict.
#[derive(Debug, Default)]
struct Effects {
    /// Latency added (on any clock).
    latency: Duration,
    /// How long the HTTP answer waits (latency on a real clock).
    delay: Duration,
    /// The connection is cut instead of answered.
    cut: bool,
}

/// Takes the call's tokens from the region's throttle, or answers the service's throttling
/// error (EC2 `RequestLimitExceeded`, HTTP 503; classic ELB `Throttling`, HTTP 400).
fn admit(
    region: &mut Region,
    service: Service,
    action: &str,
    form: &FormReader,
) -> Result<(), ApiError> {
    if !region.throttle.is_enabled() {
        return Ok(());
    }
    let unfiltered = !["Filter", "MaxResults", "NextToken", "Marker", "PageSize"]
        .iter()
        .any(|k| form.has_prefix(k));
    let units = match action {
        "RunInstances" => form
            .peek("MaxCount")
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(1),
        _ => form.count_under("InstanceId"),
    };
    let now = region.clock.now();
    let category = Category::of(action, unfiltered);
    match region.throttle.admit(action, category, units, now) {
        Ok(()) => Ok(()),
        Err(limit) => Err(match service {
            Service::Ec2 => ApiError::new(
                crate::ec2::error::Code::RequestLimitExceeded,
                match limit {
                    Limit::Request => format!(
                        "Request limit exceeded. Account {} has been throttled on \
                         ec2:{action} because it exceeded its request rate limit.",
                        region.account_id
                    ),
                    Limit::Resource => format!(
                        "Request limit exceeded. Account {} has been throttled on \
                         ec2:{action} because it exceeded its resource rate limit.",
                        region.account_id
                    ),
                },
            )
            .with_status(503),
            Service::Elb => {
                ApiError::new(crate::elb::error::Code::Throttling, "Rate exceeded").with_status(400)
            }
        }),
    }
}

/// The service's error for a refused signature.
fn refused(refusal: &sigv4::Refusal, service: Option<Service>) -> ApiError {
    match refusal {
        sigv4::Refusal::Incomplete(why) => {
            ApiError::new(Common::IncompleteSignature, why.clone()).with_status(400)
        }
        sigv4::Refusal::UnknownKey(key) => match service {
            Some(Service::Elb) => ApiError::new(
                Common::InvalidClientTokenId,
                "The security token included in the request is invalid.",
            )
            .with_status(403),
            _ => ApiError::new(
                Common::AuthFailure,
                format!("AWS was not able to validate the provided access credentials ({key})"),
            )
            .with_status(401),
        },
        sigv4::Refusal::Mismatch => ApiError::new(
            Common::SignatureDoesNotMatch,
            "The request signature we calculated does not match the signature you provided. \
             Check your AWS Secret Access Key and signing method.",
        )
        .with_status(403),
        sigv4::Refusal::Expired { signed_at } => ApiError::new(
            Common::RequestExpired,
            format!(
                "Request has expired: it was signed at {signed_at}, more than 15 minutes from \
                 the server's time."
            ),
        )
        .with_status(400),
    }
}

/// Region names as AWS spells them: lower-case words and a number, joined by hyphens.
/// The regions of AWS's partitions (aws, aws-cn, aws-us-gov, aws-iso, aws-iso-b, aws-eusc),
/// as the SDKs' endpoint metadata lists them. Only these exist, with those the fake was told
/// of ([`crate::Config::extra_regions`]): a made-up name is `InvalidRegion`, never a new region.
/// Sorted, for a binary search per request (`Fake::slot`); a region's slot is its index here.
pub const AWS_REGIONS: &[&str] = &[
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "cn-north-1",
    "cn-northwest-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "eusc-de-east-1",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-gov-east-1",
    "us-gov-west-1",
    "us-iso-east-1",
    "us-iso-west-1",
    "us-isob-east-1",
    "us-west-1",
    "us-west-2",
];

/// [`AWS_REGIONS`], each packed into one number ([`pack_region`]): searched by comparing
/// numbers rather than text, in the same order.
static PACKED_REGIONS: [u128; AWS_REGIONS.len()] = pack_regions();

/// The bytes of a name of at most 16, big-endian in a `u128` and zero-padded, so that packed
/// names sort as the names do (no region name holds a zero byte); `None` for a longer name.
// The index is below the length it is checked against, which a const fn cannot say with
// `get`.
#[allow(clippy::indexing_slicing)]
const fn pack_region(name: &[u8]) -> Option<u128> {
    if name.len() > 16 {
        return None;
    }
    let mut packed = 0u128;
    let mut i = 0;
    while i < 16 {
        let byte = if i < name.len() { name[i] } else { 0 };
        packed = packed << 8 | byte as u128;
        i += 1;
    }
    Some(packed)
}

// The indexes are below the lengths they are checked against, which a const fn cannot say
// with `get`.
#[allow(clippy::indexing_slicing)]
const fn pack_regions() -> [u128; AWS_REGIONS.len()] {
    let mut out = [0u128; AWS_REGIONS.len()];
    let mut i = 0;
    while i < AWS_REGIONS.len() {
        // A longer name would be 0, out of order: a test checks the order.
        out[i] = match pack_region(AWS_REGIONS[i].as_bytes()) {
            Some(p) => p,
            None => 0,
        };
        i += 1;
    }
    out
}

/// Whether `s` has the shape of a region name (`xx-yyyy-N`), as a flag adding one must.
pub fn is_region_shaped(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    s.len() <= 32
        && parts.len() >= 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        && parts
            .last()
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

fn unserved(action: &str, operations: &[&str], label: &str) -> ApiError {
    if operations.binary_search(&action).is_ok() {
        ApiError::not_implemented(format!(
            "fakeaws does not implement the {label} operation {action} yet"
        ))
    } else {
        ApiError::new(
            Common::InvalidAction,
            format!("The action {action} is not valid for this web service."),
        )
    }
}

pub(crate) fn answer_error(err: &ApiError, service: Option<Service>, request_id: String) -> Answer {
    let body = match service {
        Some(Service::Elb) => {
            let sender = elb::MODELED_ERRORS
                .iter()
                .find(|(code, _, _)| *code == err.code)
                .map_or(err.status < 500, |(_, _, sender)| *sender);
            err.to_query_xml(elb::XML_NAMESPACE, &request_id, sender)
        }
        _ => err.to_ec2_xml(&request_id),
    };
    let status = match service {
        Some(Service::Elb) => elb::MODELED_ERRORS
            .iter()
            .find(|(code, _, _)| *code == err.code)
            .map_or(err.status, |(_, status, _)| *status),
        _ => err.status,
    };
    Answer {
        status,
        body,
        request_id,
        delay: Duration::ZERO,
        cut: false,
    }
}

/// The axum router serving the fake on every path, and the control endpoint under
/// `/_fakeaws/` (`crate::control`). One handler takes every request and reads its body up to
/// [`MAX_BODY`] itself: no route table to search and no layer to pass through on the way to
/// the fake.
pub fn router(fake: Fake) -> axum::Router {
    axum::Router::new().fallback(handle_http).with_state(fake)
}

/// The body of a request, read whole up to [`MAX_BODY`] bytes; or the status of the refusal:
/// 413 for a larger one, 400 for one that could not be read.
async fn read_body(body: axum::body::Body) -> Result<Bytes, StatusCode> {
    use http_body_util::BodyExt;
    match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(StatusCode::PAYLOAD_TOO_LARGE),
        Err(_) => Err(StatusCode::BAD_REQUEST),
    }
}

/// A request to the control endpoint: `path` is what follows `/_fakeaws/`, still
/// percent-encoded.
fn control_http(
    fake: &Fake,
    method: &Method,
    path: &str,
    body: Result<Bytes, StatusCode>,
) -> Response {
    let reply = match (
        percent_encoding::percent_decode_str(path).decode_utf8(),
        body,
    ) {
        (Ok(path), Ok(body)) => crate::control::handle(fake, method.as_str(), &path, &body),
        (Err(_), _) => crate::control::bad(400, "the path is not valid UTF-8"),
        (_, Err(status)) => crate::control::bad(
            status.as_u16(),
            format!("the body could not be read whole (at most {MAX_BODY} bytes)"),
        ),
    };
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::BAD_REQUEST);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        reply.body.to_string(),
    )
        .into_response()
}

async fn handle_http(State(fake): State<Fake>, request: axum::extract::Request) -> Response {
    // The head is read where it lies (no copy of the headers); the body up to its limit.
    let (parts, body) = request.into_parts();
    let body = read_body(body).await;
    let (method, headers, uri) = (&parts.method, &parts.headers, &parts.uri);
    if let Some(path) = uri.path().strip_prefix(crate::control::PREFIX) {
        return control_http(&fake, method, path, body);
    }
    let head = uri.path_and_query().map_or(1, |p| p.as_str().len())
        + method.as_str().len()
        + headers
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len() + 4)
            .sum::<usize>();
    if head > MAX_HEADER_BYTES || headers.len() > MAX_HEADERS {
        let err = ApiError::new(
            Common::RequestHeaderSectionTooLarge,
            format!(
                "The request's headers are {head} bytes in {} fields; this endpoint takes at \
                 most {MAX_HEADER_BYTES} bytes in {MAX_HEADERS} fields.",
                headers.len()
            ),
        )
        .with_status(431);
        let request_id = fake.inner.request_ids.next();
        return to_response(answer_error(&err, service_of(headers), request_id));
    }
    let body = match body {
        Ok(b) => b,
        // Too large (or unreadable): answered in the service's own error shape, not as text.
        Err(status) => {
            let service = service_of(headers);
            let err = if status == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    Common::RequestEntityTooLarge,
                    format!(
                        "The request body is larger than the {} bytes this endpoint takes.",
                        MAX_BODY
                    ),
                )
                .with_status(413)
            } else {
                ApiError::new(
                    Common::InvalidParameterValue,
                    "The request body could not be read.",
                )
                .with_status(status.as_u16())
            };
            let request_id = fake.inner.request_ids.next();
            return to_response(answer_error(&err, service, request_id));
        }
    };
    let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str());
    let answer = if fake.inner.config.credentials.is_empty() {
        // Nothing to verify: the credential scope is all the fake reads of the headers.
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let query = path_and_query.split_once('?').map_or("", |(_, q)| q);
        fake.handle(authorization, query.as_bytes(), &body)
    } else {
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str(), v)))
            .collect();
        fake.handle_request(&sigv4::Request {
            method: method.as_str(),
            path_and_query,
            headers: &pairs,
            body: &body,
        })
    };
    if answer.delay > Duration::ZERO {
        tokio::time::sleep(answer.delay).await;
    }
    if answer.cut {
        return cut_connection();
    }
    to_response(answer)
}

/// The service a request's credential scope names, when it is one of ours: the shape its
/// error answers take.
fn service_of(headers: &HeaderMap) -> Option<Service> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(sigv4::from_authorization)
        .and_then(|s| Service::from_name(s.service))
}

/// The HTTP response of `answer`: its status, its XML, AWS's headers.
fn to_response(answer: Answer) -> Response {
    let mut response = Response::new(axum::body::Body::from(answer.body));
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_REQUEST);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/xml;charset=UTF-8"),
    );
    if let Ok(v) = HeaderValue::from_maybe_shared(Bytes::from(answer.request_id)) {
        // HTTP/1 writes header names in lower case: AWS's `x-amzn-RequestId` is this one.
        h.insert(HeaderName::from_static("x-amzn-requestid"), v);
    }
    response
}

/// A response that never completes: its headers promise a body whose stream fails at once,
/// so the server drops the connection and the client gets no answer (as when a connection
/// to AWS breaks after the request was done).
fn cut_connection() -> Response {
    let failing = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "fakeaws: connection cut by a fault rule",
        ))
    });
    let mut response = axum::body::Body::from_stream(failing).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from_static("512"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_log_keeps_the_latest_calls_in_order_and_at_most_its_limit() {
        let call = |n: u64| Call {
            service: Cow::Borrowed("ec2"),
            region: Cow::Borrowed("us-east-1"),
            action: Cow::Borrowed("DescribeVpcs"),
            error: None,
            micros: n,
            cut: false,
        };
        let mut log = CallLog::default();
        let total = 2 * CALL_LOG_LIMIT + 3 * CALL_LOG_CHUNK + 7;
        for n in 0..total {
            log.push(call(n as u64));
            assert!(log.len <= CALL_LOG_LIMIT, "{}", log.len);
        }
        let kept = log.to_vec();
        assert_eq!(kept.len(), log.len);
        assert!(kept.len() >= CALL_LOG_LIMIT / 2, "{}", kept.len());
        // The latest calls, oldest first, none missing in between.
        let first = (total - kept.len()) as u64;
        assert!(kept.iter().map(|c| c.micros).eq(first..total as u64));
        assert_eq!(log.into_vec(), kept);
    }

    #[test]
    fn the_regions_are_sorted_for_their_binary_search() {
        assert!(AWS_REGIONS.windows(2).all(|w| w[0] < w[1]));
        assert!(PACKED_REGIONS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(pack_region(&[b'a'; 17]), None);
        let fake = Fake::new(Config::default());
        for region in AWS_REGIONS {
            assert!(fake.knows_region(region), "{region}");
        }
        assert!(!fake.knows_region("xx-made-up-1"));
        assert!(!fake.knows_region("us-east-1\0") && fake.knows_region("us-east-1"));
    }

    fn vpc(id: &str, cidr: &str) -> ec2::Vpc {
        ec2::Vpc {
            vpc_id: Some(id.to_string()),
            cidr_block: Some(cidr.to_string()),
            ..ec2::Vpc::default()
        }
    }

    #[test]
    fn a_kept_answer_is_written_as_a_new_one_would_be() {
        let vpcs = |v: Vec<ec2::Vpc>| {
            Answered::Ec2(ec2::Response::DescribeVpcs(Box::new(
                ec2::DescribeVpcsResult {
                    vpcs: Some(v),
                    next_token: None,
                },
            )))
        };
        let lbs = |n: &str| {
            Answered::Elb(elb::Response::DescribeLoadBalancers(Box::new(
                elb::DescribeAccessPointsOutput {
                    load_balancer_descriptions: None,
                    next_marker: Some(n.to_string()),
                },
            )))
        };
        let answers = [
            ("DescribeVpcs", vpcs(vec![vpc("vpc-1", "10.0.0.0/16")])),
            ("DescribeVpcs", vpcs(vec![vpc("vpc-1", "10.0.0.0/16")])),
            // One member changed: written anew, and kept in place of the last.
            ("DescribeVpcs", vpcs(vec![vpc("vpc-1", "10.1.0.0/16")])),
            ("DescribeVpcs", vpcs(vec![vpc("vpc-1", "10.1.0.0/16")])),
            ("DescribeVpcs", vpcs(vec![])),
            ("DescribeLoadBalancers", lbs("a<b")),
            ("DescribeLoadBalancers", lbs("a<b")),
            ("DescribeVpcs", vpcs(vec![])),
        ];
        for (i, (action, answered)) in answers.into_iter().enumerate() {
            let id = format!("00000000-0000-4000-8000-{i:012}");
            let want = answered.encode(&id);
            assert_eq!(write_answer(action, answered, &id), want, "answer {i}");
        }
        // A thread keeps a bounded few.
        for i in 0..2 * WRITTEN_KEPT {
            let action: &'static str = format!("DescribeThing{i}").leak();
            write_answer(action, vpcs(vec![]), "00000000-0000-4000-8000-000000000000");
        }
        assert_eq!(WRITTEN.with(|w| w.borrow().len()), WRITTEN_KEPT);
    }

    #[test]
    fn equal_answers_are_written_alike_because_no_answer_holds_a_float() {
        for generated in [
            include_str!("generated/ec2.rs"),
            include_str!("generated/elb.rs"),
        ] {
            for float in ["f32", "f64"] {
                assert!(
                    !generated.contains(float),
                    "a generated shape holds {float}"
                );
            }
        }
    }

    const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/ec2/aws4_request, \
                        SignedHeaders=host, Signature=0";

    #[test]
    fn a_repeated_describe_sees_every_change_in_between() {
        let fake = Fake::new(Config::default());
        let describe = || {
            let a = fake.handle(Some(AUTH), b"", b"Action=DescribeVpcs&Version=2016-11-15");
            assert_eq!(a.status, 200, "{}", a.body);
            (a.body.replace(&a.request_id, "ID"), a.request_id)
        };
        let (first, id1) = describe();
        let (second, id2) = describe();
        assert_eq!(first, second);
        assert_ne!(id1, id2);
        let vpc_id = first
            .split("<vpcId>")
            .nth(1)
            .and_then(|r| r.split('<').next())
            .unwrap_or_default()
            .to_string();
        let tag = format!(
            "Action=CreateTags&Version=2016-11-15&ResourceId.1={vpc_id}&Tag.1.Key=k&Tag.1.Value=v"
        );
        assert_eq!(fake.handle(Some(AUTH), b"", tag.as_bytes()).status, 200);
        let (third, _) = describe();
        assert_ne!(third, first);
        assert!(third.contains("<key>k</key><value>v</value>"), "{third}");
    }

    /// A VPC made by the fake's own semantics, bypassing the wire (as a test or an admin tool
    /// holding the region would).
    fn make_vpc(region: &mut Region, cidr: &str) {
        let mut form = FormReader::from_pairs([("CidrBlock", cidr)]);
        assert!(ec2::execute(region, ec2::Action::CreateVpc, &mut form).is_ok());
    }

    #[test]
    fn a_kept_answer_is_not_given_after_a_change_made_outside_a_request() {
        let fake = Fake::new(Config::default());
        let describe = || {
            let a = fake.handle(Some(AUTH), b"", b"Action=DescribeVpcs&Version=2016-11-15");
            assert_eq!(a.status, 200, "{}", a.body);
            a.body
        };
        describe();
        describe();
        // Through `with_region`.
        fake.with_region("us-east-1", |r| make_vpc(r, "10.61.0.0/16"));
        assert!(describe().contains("10.61.0.0/16"));
        describe();
        // Through a region handed out whole, changed after the next answer was kept.
        let region = fake.region("us-east-1");
        describe();
        make_vpc(&mut lock(&region), "10.62.0.0/16");
        assert!(describe().contains("10.62.0.0/16"));
    }

    #[test]
    fn a_kept_answer_is_not_given_after_a_transition_is_applied() {
        let fake = Fake::new(Config {
            clock: Clock::virtual_at(std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
            ..Config::default()
        });
        let region = fake.region_of("us-east-1");
        let generation = || lock(&region).answers.generation();
        let before = generation();
        // Nothing due: a tick changes nothing.
        lock(&region).tick();
        assert_eq!(generation(), before);
        {
            let mut r = lock(&region);
            let now = r.clock.now();
            r.transitions.schedule(
                now,
                crate::sim::transitions::Subject::NatGatewayPurge,
                "nat-0",
            );
            r.tick();
        }
        assert_eq!(generation(), before, "scheduled, not due yet");
        lock(&region).clock.advance(Duration::from_secs(7200));
        lock(&region).tick();
        assert_ne!(generation(), before);
    }

    #[test]
    fn answers_are_kept_unless_the_configuration_says_not() {
        for keep_answers in [true, false] {
            let fake = Fake::new(Config {
                keep_answers,
                ..Config::default()
            });
            for _ in 0..2 {
                let a = fake.handle(Some(AUTH), b"", b"Action=DescribeVpcs&Version=2016-11-15");
                assert_eq!(a.status, 200, "{}", a.body);
            }
            let kept = lock(&fake.region_of("us-east-1")).answers.kept();
            assert_eq!(kept, usize::from(keep_answers));
        }
    }

    #[test]
    fn kept_operations_are_sorted_served_reads() {
        assert!(KEPT_OPERATIONS.windows(2).all(|w| w[0] < w[1]));
        for name in KEPT_OPERATIONS {
            assert!(ec2::Action::from_name(name).is_some(), "{name}");
            assert!(is_read_only(name), "{name}");
        }
    }
}
