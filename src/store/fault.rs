//! A store wrapper for tests: counts requests per operation and injects faults — a competing write
//! slipped in just before a put, a response lost after the write landed, throttling, server errors,
//! transport errors, delays. Public so applications can test their own code against the same
//! failures (the JS `fencepost/testing` module is built on it). Two ways to inject:
//! - [`FaultStore::inject`]: one [`Fault`] for the next request of a kind (the Rust suite's way; a
//!   fault may run arbitrary hooks);
//! - [`FaultStore::add_rule`]: an [`Injected`] fault for the next `times` requests matching an op
//!   and a key prefix (the testing toolkit's way).

use crate::base::sync::Shared;
use crate::base::sync::{Lock, SyncCell};

use async_trait::async_trait;

use super::counting::{Op, RequestCounter, RequestCounts};
use super::{
    FailureKind, IfChanged, ListPage, ObjectStore, Precondition, PutOutcome, Reply, Request, StoreError, StoreResult,
    StoredObject, WriteMeta,
};
use crate::base::future::BoxFuture;
use crate::base::sync::{MaybeSend, MaybeSync};
use crate::time::{Clock, Timestamp};

/// What happens to the next matching request.
pub enum Fault {
    /// No fault: lets one request through (to aim a later fault at the request after it).
    Pass,
    /// Run this first (typically: another writer's put on the inner store), then the request.
    Before(Hook),
    /// Forward the request, then run this before answering: `std::future::pending()` makes a
    /// request that lands and is never answered; a hook that fires a cancel makes one that is
    /// cancelled while in flight.
    After(Hook),
    /// Forward the request, let it land, then report a transport error: an ambiguous write.
    LoseResponse,
    /// Do not forward; fail with this HTTP status and S3 error code.
    Status(u16, &'static str),
    /// Do not forward; fail as if the connection was refused.
    Transport,
    /// Puts only: report a client-side timeout now, while the request is still on its way; it
    /// reaches the store just before the next request (of any kind).
    Late,
    /// A rule's fault (see [`FaultStore::add_rule`]).
    Injected(Injected),
}

impl Fault {
    /// Run `hook` (another process's writes) just before the request.
    pub fn before<F: std::future::Future<Output = ()> + MaybeSend + MaybeSync + 'static>(hook: F) -> Fault {
        Fault::Before(Box::new(move || Box::pin(hook)))
    }

    /// Run `hook` after the request reached the store, before its answer is returned.
    pub fn after<F: std::future::Future<Output = ()> + MaybeSend + MaybeSync + 'static>(hook: F) -> Fault {
        Fault::After(Box::new(move || Box::pin(hook)))
    }

    /// A competing write: `key` is overwritten with `body` on `store` just before the request.
    pub fn competing_put(store: Shared<dyn ObjectStore>, key: &str, body: Vec<u8>) -> Fault {
        let key = key.to_owned();
        Fault::Before(Box::new(move || {
            Box::pin(async move {
                let _ = store.put(&key, &body, &Precondition::None, &WriteMeta::default()).await;
            })
        }))
    }
}

/// A fault the testing toolkit injects by rule; unlike [`Fault`] it can be applied again and again.
#[derive(Debug, Clone, PartialEq)]
pub enum Injected {
    /// The request is carried out; its answer is lost (the caller sees a transport error).
    LostResponse,
    /// Nothing is sent; the caller sees a transport error.
    Transport,
    /// Puts: a competing writer lands the very same bytes just before, under the same condition
    /// (as a client racing this one would; without fencepost's provenance), so a claim loses to
    /// it and a compare-and-swap must retry. Never over another client's write the condition
    /// would refuse.
    Conflict,
    /// Nothing is sent; the store answers this HTTP status with this S3 error code.
    Status { status: u16, code: String },
    /// The request waits this many seconds on the fault store's clock first.
    Delay(f64),
    /// The request is never answered: after the fault store's timeout it fails as a request the
    /// S3 store gave up on does (a transport error; nothing was applied).
    Hang,
}

/// Which requests a rule applies to, and how many more times.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub fault: Injected,
    /// Any op when `None` (`Conflict` applies to puts only).
    pub op: Option<Op>,
    /// Keys starting with this ("" for every key; list requests match on their prefix).
    pub key_prefix: String,
    pub times: u32,
}

impl Rule {
    fn matches(&self, op: Op, key: &str) -> bool {
        self.times > 0
            && self.op.is_none_or(|o| o == op)
            && (self.fault != Injected::Conflict || op == Op::Put)
            && key.starts_with(&self.key_prefix)
    }
}

/// A put that timed out client-side and is still on its way: key, body, precondition, provenance.
type LatePut = (String, Vec<u8>, Precondition, WriteMeta);

/// Clones share the faults, rules and counts.
#[derive(Clone)]
pub struct FaultStore {
    state: Shared<FaultState>,
}

struct FaultState {
    inner: Shared<dyn ObjectStore>,
    faults: Lock<Vec<(Op, Fault)>>,
    rules: Lock<Vec<Rule>>,
    /// What `Injected::Delay` waits on.
    clock: Shared<dyn Clock>,
    counter: RequestCounter,
    hide_write_meta: SyncCell<bool>,
    late_put: Lock<Option<LatePut>>,
    /// Writes allowed per key per second ([`FaultStore::limit_writes`]).
    write_limit: SyncCell<Option<u32>>,
    /// The keys written within the last second, with when.
    recent_writes: Lock<Vec<(String, Vec<Timestamp>)>>,
    /// Until when the store answers nothing ([`FaultStore::pause`]).
    paused_until: SyncCell<Option<Timestamp>>,
    /// How long a request waits for an answer that does not come (a hang, a pause): seconds.
    timeout: SyncCell<f64>,
}

impl FaultStore {
    pub fn new(inner: impl super::IntoStore) -> Self {
        Self::with_clock(inner, Shared::new(crate::host::clock::SystemClock))
    }

    /// A fault store whose injected delays wait on `clock` (a manual clock makes them instant).
    pub fn with_clock(inner: impl super::IntoStore, clock: Shared<dyn Clock>) -> Self {
        let inner = inner.into_store();
        let state = FaultState {
            inner,
            faults: Lock::new(Vec::new()),
            rules: Lock::new(Vec::new()),
            clock,
            counter: RequestCounter::default(),
            hide_write_meta: SyncCell::new(false),
            late_put: Lock::new(None),
            write_limit: SyncCell::new(None),
            recent_writes: Lock::new(Vec::new()),
            paused_until: SyncCell::new(None),
            timeout: SyncCell::new(super::DEFAULT_TIMEOUT),
        };
        FaultStore { state: Shared::new(state) }
    }

    /// Read objects without their write tokens, as a browser does when the bucket's CORS rules do
    /// not expose the `x-amz-meta-*` headers.
    pub fn hide_write_meta(&self, hide: bool) {
        self.state.hide_write_meta.set(hide);
    }

    /// Queue a fault for the next request of kind `op` (faults for one op fire in order).
    pub fn inject(&self, op: Op, fault: Fault) {
        self.state.faults.lock().push((op, fault));
    }

    /// Apply `rule.fault` to the next `rule.times` requests that match it (rules are tried in the
    /// order they were added; one fault per request).
    pub fn add_rule(&self, rule: Rule) {
        self.state.rules.lock().push(rule);
    }

    /// Refuse writes (PUT, DELETE) past `per_key` to one key within a second with 429 `SlowDown`,
    /// as R2 does past one write per second per key; `None` lifts the limit. Seconds are the
    /// store's clock's ([`FaultStore::with_clock`]). A refused write is still a request (counted).
    pub fn limit_writes(&self, per_key: Option<u32>) {
        self.state.write_limit.set(per_key);
        self.state.recent_writes.lock().clear();
    }

    /// Under a write limit: whether a write to `key` now is one too many (else it is recorded).
    fn throttled(&self, key: &str) -> bool {
        let (Some(limit), Ok(now)) = (self.state.write_limit.get(), self.state.clock.now()) else { return false };
        let mut recent = self.state.recent_writes.lock();
        recent.retain_mut(|(_, times)| {
            times.retain(|t| t.secs_until(now) < 1.0);
            !times.is_empty()
        });
        let at = recent.iter().position(|(k, _)| k == key).unwrap_or_else(|| {
            recent.push((key.to_owned(), Vec::new()));
            recent.len() - 1
        });
        let times = &mut recent[at].1;
        if times.len() >= limit as usize {
            return true;
        }
        times.push(now);
        false
    }

    /// The store stops answering for `secs` seconds from now (on its clock), then resumes: a
    /// request made meanwhile waits for the end of the pause, or fails after the store's timeout
    /// when the pause outlasts it (as a hung request does).
    pub fn pause(&self, secs: f64) {
        let until = self.state.clock.now().ok().map(|now| now.plus_secs(secs.max(0.0)));
        self.state.paused_until.set(until);
    }

    /// How long a request waits for an answer that does not come (an injected hang, a pause),
    /// in seconds; 30 by default, as the S3 store's per-attempt timeout.
    pub fn set_timeout(&self, secs: f64) -> crate::base::error::Result<()> {
        super::validate_timeout("faultStore", secs)?;
        self.state.timeout.set(secs);
        Ok(())
    }

    /// Wait out a pause in force, or fail as a request that got no answer in time.
    async fn unpaused(&self) -> StoreResult<()> {
        let (Some(until), Ok(now)) = (self.state.paused_until.get(), self.state.clock.now()) else { return Ok(()) };
        let left = now.secs_until(until);
        if left <= 0.0 {
            return Ok(());
        }
        if left < self.state.timeout.get() {
            self.state.clock.sleep(left).await;
            return Ok(());
        }
        self.unanswered().await
    }

    /// A request whose answer never comes: it fails after the timeout, unsent.
    async fn unanswered(&self) -> StoreResult<()> {
        let timeout = self.state.timeout.get();
        self.state.clock.sleep(timeout).await;
        let why = format!("injected: no answer within {} s", crate::base::number::number_text(timeout));
        Err(StoreError::transport(why))
    }

    /// Forget every queued fault and rule.
    pub fn clear_faults(&self) {
        self.state.faults.lock().clear();
        self.state.rules.lock().clear();
    }

    pub fn counts(&self) -> RequestCounts {
        self.state.counter.get()
    }

    /// The counts so far, and start again from zero.
    pub fn take_counts(&self) -> RequestCounts {
        self.state.counter.take()
    }

    /// Count the request and take the fault for it: a queued one for its op first, else a rule's.
    fn begin(&self, op: Op, key: &str) -> Option<Fault> {
        self.state.counter.record(op);
        let mut faults = self.state.faults.lock();
        if let Some(pos) = faults.iter().position(|(o, _)| *o == op) {
            return Some(faults.remove(pos).1);
        }
        // A rule that has fired its `times` is dropped, so later requests do not scan it again.
        let mut rules = self.state.rules.lock();
        let at = rules.iter().position(|r| r.matches(op, key))?;
        rules[at].times -= 1;
        let fault = if rules[at].times == 0 { rules.remove(at).fault } else { rules[at].fault.clone() };
        Some(Fault::Injected(fault))
    }

    /// A `Late` put arrives now, before the request being made.
    async fn deliver_late_put(&self) {
        let late = self.state.late_put.lock().take();
        if let Some((key, body, precondition, meta)) = late {
            let _ = self.state.inner.put(&key, &body, &precondition, &meta).await;
        }
    }

    /// Apply the fault (if any) around `request`.
    async fn run(&self, request: Request<'_>) -> StoreResult<Reply> {
        self.deliver_late_put().await;
        self.apply(self.begin(request.op(), request.key()), request).await
    }

    /// Apply the fault (if any) around `request`: compiled once for every operation.
    async fn apply(&self, fault: Option<Fault>, request: Request<'_>) -> StoreResult<Reply> {
        self.unpaused().await?;
        let (send, after) = match self.prepare(fault).await {
            Err(refused) => return Err(refused),
            Ok(plan) => plan,
        };
        if request.writes() && self.throttled(request.key()) {
            let why = "injected: more writes to this key within a second than limitWrites allows";
            return Err(StoreError::new(FailureKind::Transient, Some("SlowDown"), Some(429), why));
        }
        let answer = self.state.inner.send(request).await;
        if let Some(hook) = after {
            hook().await;
        }
        match send {
            Send::Answer => answer,
            Send::LoseAnswer(why) => answer.and(Err(StoreError::transport(why))),
        }
    }

    /// Run what comes before the request (a hook, a delay) and say what becomes of it: refused
    /// unsent (`Err`), or sent with its answer kept or lost, and a hook to run after it.
    async fn prepare(&self, fault: Option<Fault>) -> StoreResult<(Send, Option<Hook>)> {
        let injected = |status: u16, code: &str| {
            // Classified exactly as the S3 store classifies a real answer.
            StoreError::new(FailureKind::of_http(status, Some(code)), Some(code), Some(status), "injected")
        };
        Ok(match fault {
            None | Some(Fault::Pass) => (Send::Answer, None),
            Some(Fault::Before(hook)) => {
                hook().await;
                (Send::Answer, None)
            }
            Some(Fault::After(hook)) => (Send::Answer, Some(hook)),
            Some(Fault::LoseResponse) => {
                (Send::LoseAnswer("injected: connection reset after the request was sent"), None)
            }
            Some(Fault::Status(status, code)) => return Err(injected(status, code)),
            Some(Fault::Transport) => return Err(StoreError::transport("injected: connection refused")),
            Some(Fault::Late) => return Err(StoreError::transport("injected: Late applies to puts only")),
            Some(Fault::Injected(injected_fault)) => match injected_fault {
                Injected::LostResponse => {
                    (Send::LoseAnswer("injected: the response was lost after the request was carried out"), None)
                }
                Injected::Transport => return Err(StoreError::transport("injected: the request could not be sent")),
                Injected::Status { status, code } => return Err(injected(status, &code)),
                Injected::Delay(secs) => {
                    self.state.clock.sleep(secs).await;
                    (Send::Answer, None)
                }
                Injected::Hang => return self.unanswered().await.map(|()| (Send::Answer, None)),
                // Landed by `put` before the request (only puts match a conflict).
                Injected::Conflict => (Send::Answer, None),
            },
        })
    }
}

/// A hook a fault runs around a request.
#[cfg(not(target_arch = "wasm32"))]
type Hook = Box<dyn FnOnce() -> BoxFuture<'static, ()> + std::marker::Send + Sync>;
#[cfg(target_arch = "wasm32")]
type Hook = Box<dyn FnOnce() -> BoxFuture<'static, ()>>;

/// What becomes of a request that is sent.
enum Send {
    Answer,
    /// It is carried out, but its answer is replaced by this transport error.
    LoseAnswer(&'static str),
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for FaultStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let got = match self.run(Request::Get(key)).await {
            Err(e) if no_such_key(&e) => return Ok(None),
            answer => answer?.into_object(),
        };
        Ok(got.map(
            |o| if self.state.hide_write_meta.get() { StoredObject { meta: WriteMeta::default(), ..o } } else { o },
        ))
    }

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        let answer = match self.run(Request::GetIfChanged { key, etag }).await {
            Err(e) if no_such_key(&e) => return Ok(IfChanged::Current(None)),
            answer => answer?,
        };
        Ok(match answer.into_if_changed() {
            IfChanged::Current(Some(o)) if self.state.hide_write_meta.get() => {
                IfChanged::Current(Some(StoredObject { meta: WriteMeta::default(), ..o }))
            }
            other => other,
        })
    }

    fn conditional_get(&self) -> bool {
        self.state.inner.conditional_get()
    }

    fn unique_etags(&self) -> bool {
        self.state.inner.unique_etags()
    }

    fn opaque_etags(&self) -> bool {
        self.state.inner.opaque_etags()
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        self.deliver_late_put().await;
        match self.begin(Op::Put, key) {
            Some(Fault::Injected(Injected::Conflict)) => {
                // Another writer's put of the same bytes under the same condition, with none of
                // fencepost's provenance.
                let _ = self.state.inner.put(key, body, precondition, &WriteMeta::default()).await;
                self.state.inner.put(key, body, precondition, meta).await
            }
            Some(Fault::Late) => {
                *self.state.late_put.lock() = Some((key.to_owned(), body.to_vec(), precondition.clone(), meta.clone()));
                Err(StoreError::transport("injected: timed out while the request is still on its way"))
            }
            fault => match self.apply(fault, Request::Put { key, body, precondition, meta }).await {
                Err(e) if *precondition != Precondition::None && lost_condition(&e) => {
                    Ok(PutOutcome::PreconditionFailed)
                }
                answer => Ok(answer?.into_put()),
            },
        }
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        match self.run(Request::Delete(key)).await {
            Err(e) if no_such_key(&e) => Ok(()),
            answer => answer.map(drop),
        }
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        match self.run(Request::DeleteIfMatch { key, etag }).await {
            Err(e) if lost_condition(&e) => Ok(false),
            answer => Ok(answer?.into_deleted()),
        }
    }

    fn conditional_delete(&self) -> bool {
        self.state.inner.conditional_delete()
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        Ok(self.run(Request::List { prefix, start_after, cursor }).await?.into_page())
    }

    fn max_key_bytes(&self) -> usize {
        self.state.inner.max_key_bytes()
    }

    fn server_time(&self) -> Option<crate::time::Timestamp> {
        self.state.inner.server_time()
    }
}

/// An injected status that a conditional request's store answers for a condition that did not
/// hold, read as the S3 store reads a real one: 412, or a 404 `NoSuchKey` (AWS's answer to
/// `If-Match` on a missing key; the code an injected 404 has unless given another). The request
/// lost; it did not fail.
fn lost_condition(e: &StoreError) -> bool {
    e.status == Some(412) || no_such_key(e)
}

/// An injected 404 `NoSuchKey` (the code an injected 404 has unless given another), read as the S3
/// store reads a real one: on a read, no object; on a delete, nothing left to delete.
fn no_such_key(e: &StoreError) -> bool {
    e.status == Some(404) && e.code.as_deref() == Some("NoSuchKey")
}
