//! The simulated world of one history: the seeded generator, each worker's skewed view of the one
//! simulated clock, and the store stack every worker shares — the memory store, the fault store
//! (faults drawn from the seed, per request), and a recorder of what each request asked and what
//! its caller heard (the layer-0 history the linearizability check reads).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use async_trait::async_trait;
use fencepost::store::{
    ListPage, MemoryStore, ObjectStore, Op, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta,
};
use fencepost::testing::{Fault, FaultStore, ManualClock, seed_random};
use fencepost::{BoxFuture, Clock, Fencepost, Held, Options, Timestamp};

use crate::executor::{Ended, Executor};
use crate::linearizable::{Call, Condition, Operation, Return};

/// One history's world: the seed's generator, the simulated clock, the memory store and the
/// faulty, recorded store on it. While it lives, this thread's tokens and backoff jitter come from
/// the seed too.
pub struct World {
    pub rng: Rng,
    pub clock: ManualClock,
    pub memory: MemoryStore,
    /// Every write the memory store applied, in order, with its simulated time.
    pub journal: Arc<Journal>,
    pub store: Arc<SimStore>,
}

impl World {
    pub fn new(seed: u64, faults: Faults) -> World {
        seed_random(Some(seed));
        let mut rng = Rng::new(seed);
        let clock = ManualClock::starting_2026();
        let memory = MemoryStore::with_clock(Arc::new(clock.clone()));
        let journal = Arc::new(Journal::new(memory.clone(), clock.clone()));
        let store = Arc::new(SimStore::new(journal.clone(), clock.clone(), rng.fork(), faults));
        World { rng, clock, memory, journal, store }
    }

    /// A process of the world: its own `Fencepost` on the shared store, on `clock`.
    pub fn process(&self, clock: Arc<dyn Clock>) -> Fencepost {
        let options = Options { clock: Some(clock), ..Options::default() };
        Fencepost::new(self.store.clone(), options).expect("valid options")
    }

    /// Run `executor` until its tasks are done, or nothing moves within a simulated day.
    pub fn run(&mut self, executor: &mut Executor) -> Ended {
        executor.run(&self.clock, ManualClock::START_2026.plus_secs(24.0 * 3600.0), &mut self.rng)
    }

    /// What `keys` hold now, read from the memory store directly (past the faults).
    pub fn final_state<'a>(&self, keys: impl Iterator<Item = &'a str>) -> BTreeMap<String, Held> {
        let options = Options { clock: Some(Arc::new(self.clock.clone())), ..Options::default() };
        let db = Fencepost::new(Arc::new(self.memory.clone()), options).expect("valid options");
        let mut end = BTreeMap::new();
        for key in keys.collect::<std::collections::BTreeSet<_>>() {
            let inspected = futures::executor::block_on(db.inspect(key)).expect("the memory store answers");
            if let Some(inspection) = inspected {
                end.insert(key.to_owned(), inspection.kind);
            }
        }
        end
    }
}

impl Drop for World {
    fn drop(&mut self) {
        seed_random(None);
    }
}

/// SplitMix64: small, seedable, and good enough to pick faults and interleavings.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// A generator of its own for one purpose, so drawing more for one does not shift another.
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next())
    }
}

/// A worker's clock: the simulation's time plus a fixed skew (waits run on simulated time).
pub struct SkewedClock {
    pub base: ManualClock,
    pub skew: f64,
}

impl Clock for SkewedClock {
    fn now(&self) -> fencepost::Result<Timestamp> {
        Ok(self.base.now()?.plus_secs(self.skew))
    }
    fn sleep(&self, secs: f64) -> BoxFuture<'static, ()> {
        self.base.sleep(secs)
    }
}

/// How often each fault strikes a request.
#[derive(Debug, Clone, Copy)]
pub struct FaultRates {
    pub lost_response: f64,
    pub transport: f64,
    pub server_error: f64,
    pub throttled: f64,
    pub too_many: f64,
    pub conflict_409: f64,
    pub late_put: f64,
    pub delay: f64,
}

impl FaultRates {
    pub const DEFAULT: FaultRates = FaultRates {
        lost_response: 0.04,
        transport: 0.02,
        server_error: 0.02,
        throttled: 0.02,
        too_many: 0.01,
        conflict_409: 0.01,
        late_put: 0.01,
        delay: 0.15,
    };
}

/// Which requests meet a fault.
#[derive(Debug, Clone, Copy)]
pub enum Faults {
    /// Each request draws from these rates.
    Random(FaultRates),
    /// The response of every other conditional PUT is lost (it lands; its caller hears nothing).
    EveryOtherConditionalPutLost,
}

/// Counts of the faults a history met, by kind.
#[derive(Debug, Default, Clone)]
pub struct FaultCounts(pub BTreeMap<&'static str, u64>);

/// The store stack's top: draws a fault for each request, records it in the layer-0 history.
pub struct SimStore {
    pub faults: Arc<FaultStore>,
    rng: Mutex<Rng>,
    policy: Faults,
    conditional_puts: AtomicU64,
    clock: ManualClock,
    pub counts: Mutex<FaultCounts>,
    /// One order of every invocation and return.
    sequence: AtomicU64,
    pub history: Mutex<BTreeMap<String, Vec<Operation>>>,
}

impl SimStore {
    pub fn new(inner: Arc<dyn ObjectStore>, clock: ManualClock, rng: Rng, policy: Faults) -> Self {
        SimStore {
            faults: Arc::new(FaultStore::with_clock(inner, Arc::new(clock.clone()))),
            rng: Mutex::new(rng),
            policy,
            conditional_puts: AtomicU64::new(0),
            clock,
            counts: Mutex::default(),
            sequence: AtomicU64::new(0),
            history: Mutex::default(),
        }
    }

    fn tick(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::SeqCst)
    }

    /// Queue this request's fault (if the draw gives one) in the fault store.
    fn draw(&self, op: Op, conditional: bool) {
        let r = match self.policy {
            Faults::Random(rates) => rates,
            Faults::EveryOtherConditionalPutLost => {
                if op == Op::Put && conditional {
                    let n = self.conditional_puts.fetch_add(1, Ordering::SeqCst) + 1;
                    if n % 2 == 0 {
                        *self.counts.lock().unwrap().0.entry("lost response").or_default() += 1;
                        self.faults.inject(op, Fault::LoseResponse);
                    }
                }
                return;
            }
        };
        let mut rng = self.rng.lock().unwrap();
        let roll = rng.unit();
        let mut edge = 0.0;
        let mut pick = |rate: f64| {
            edge += rate;
            roll < edge
        };
        let (name, fault) = if pick(r.lost_response) {
            ("lost response", Fault::LoseResponse)
        } else if pick(r.transport) {
            ("transport error", Fault::Transport)
        } else if pick(r.server_error) {
            ("500", Fault::Status(500, "InternalError"))
        } else if pick(r.throttled) {
            ("503 SlowDown", Fault::Status(503, "SlowDown"))
        } else if pick(r.too_many) {
            ("429", Fault::Status(429, "SlowDown"))
        } else if pick(r.conflict_409) {
            ("409", Fault::Status(409, "ConditionalRequestConflict"))
        } else if op == Op::Put && pick(r.late_put) {
            ("late put", Fault::Late)
        } else if pick(r.delay) {
            let secs = 0.05 + rng.unit() * 3.0;
            let clock = self.clock.clone();
            ("delay", Fault::before(SyncHook(Mutex::new(clock.sleep(secs)))))
        } else {
            return;
        };
        *self.counts.lock().unwrap().0.entry(name).or_default() += 1;
        self.faults.inject(op, fault);
    }

    fn record(&self, key: &str, call: Call, invoked: u64, ret: Return) {
        let returned = if ret == Return::Unknown { u64::MAX } else { self.tick() };
        let op = Operation { call, ret, invoked, returned };
        self.history.lock().unwrap().entry(key.to_owned()).or_default().push(op);
    }
}

/// A hook future the fault store accepts: it asks for `Send + Sync`, and a boxed future is only
/// `Send`; the `Mutex` makes it `Sync` (it is only ever polled through `&mut`).
struct SyncHook(Mutex<BoxFuture<'static, ()>>);

impl Future for SyncHook {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.get_mut().unwrap().as_mut().poll(cx)
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for SimStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        self.draw(Op::Get, false);
        let invoked = self.tick();
        let got = self.faults.get(key).await;
        let ret = match &got {
            Ok(o) => Return::Got(o.as_ref().map(|o| (o.etag.clone(), o.body.clone()))),
            Err(_) => Return::Unknown,
        };
        self.record(key, Call::Get, invoked, ret);
        got
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        self.draw(Op::Put, *precondition != Precondition::None);
        let invoked = self.tick();
        let put = self.faults.put(key, body, precondition, meta).await;
        let ret = match &put {
            Ok(PutOutcome::Written { etag }) => Return::Written { etag: etag.clone() },
            Ok(PutOutcome::PreconditionFailed) => Return::Refused,
            Err(_) => Return::Unknown,
        };
        let condition = match precondition {
            Precondition::None => Condition::None,
            Precondition::IfAbsent => Condition::IfAbsent,
            Precondition::IfMatch(etag) => Condition::IfMatch(etag.clone()),
        };
        self.record(key, Call::Put { body: body.to_vec(), condition }, invoked, ret);
        put
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.draw(Op::Delete, false);
        let invoked = self.tick();
        let deleted = self.faults.delete(key).await;
        let ret = if deleted.is_ok() { Return::Deleted(true) } else { Return::Unknown };
        self.record(key, Call::Delete, invoked, ret);
        deleted
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        self.draw(Op::Delete, true);
        let invoked = self.tick();
        let deleted = self.faults.delete_if_match(key, etag).await;
        let ret = deleted.as_ref().map_or(Return::Unknown, |d| Return::Deleted(*d));
        self.record(key, Call::DeleteIfMatch { etag: etag.to_owned() }, invoked, ret);
        deleted
    }

    fn conditional_delete(&self) -> bool {
        true
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        self.draw(Op::List, false);
        self.faults.list_page(prefix, start_after, cursor).await
    }
}

/// One write the memory store applied: when (simulated seconds), to which key, the version it
/// replaced and the one it made (`None`: absent, a deletion), with the new version's etag.
#[derive(Debug, Clone)]
pub struct Applied {
    pub at: f64,
    pub key: String,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    pub etag: Option<String>,
}

/// Right above the memory store, below the faults: every write that lands (late and unanswered
/// ones included) is journaled as it is applied, at the simulated instant it is. What the checks of
/// time (a lease taken while unexpired, permits over the limit) and of watches read.
pub struct Journal {
    inner: MemoryStore,
    clock: ManualClock,
    current: Mutex<BTreeMap<String, Vec<u8>>>,
    pub applied: Mutex<Vec<Applied>>,
}

impl Journal {
    fn new(inner: MemoryStore, clock: ManualClock) -> Self {
        Journal { inner, clock, current: Mutex::default(), applied: Mutex::default() }
    }

    fn note(&self, key: &str, after: Option<Vec<u8>>, etag: Option<String>) {
        let at = ManualClock::START_2026.secs_until(self.clock.now().expect("a manual clock has a time"));
        let mut current = self.current.lock().unwrap();
        let before = match &after {
            Some(body) => current.insert(key.to_owned(), body.clone()),
            None => current.remove(key),
        };
        self.applied.lock().unwrap().push(Applied { at, key: key.to_owned(), before, after, etag });
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for Journal {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        self.inner.get(key).await
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        // The memory store applies a put when it answers, and nothing runs between its answer
        // and this note: the journal's order is the store's.
        let put = self.inner.put(key, body, precondition, meta).await;
        if let Ok(PutOutcome::Written { etag }) = &put {
            self.note(key, Some(body.to_vec()), Some(etag.clone()));
        }
        put
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        let deleted = self.inner.delete(key).await;
        if deleted.is_ok() && self.current.lock().unwrap().contains_key(key) {
            self.note(key, None, None);
        }
        deleted
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        let deleted = self.inner.delete_if_match(key, etag).await;
        if let Ok(true) = deleted {
            self.note(key, None, None);
        }
        deleted
    }

    fn conditional_delete(&self) -> bool {
        true
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        self.inner.list_page(prefix, start_after, cursor).await
    }
}
