//! Stores and clocks from the JS layer's recipes: `memoryStore()`, `s3Store(…)`, `azureStore(…)`,
//! `gcsStore(…)`, `r2Store(bucket)`, `countingStore(store)`, and the testing toolkit's
//! `faultStore(store)` and `manualClock()`. A JS store handle is plain data (its kind, id and
//! settings); the store is built here when a `Fencepost` on it is (see `tables`).

use fencepost::__private::quoted;
use fencepost::Shared;

use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;

use crate::convert::Args;
use crate::tables::find;
use fencepost::SystemClock;
use fencepost::store::azure::{AzureConfig, AzureStore};
use fencepost::store::gcs::{AccessToken, GcsConfig, GcsStore, Rs256Signer, ServiceAccount, TokenSource};
use fencepost::store::js::JsStore;
use fencepost::store::s3::{Addressing, DEFAULT_TIMEOUT, FetchTransport, S3Config, S3Store};
use fencepost::store::{
    CountingStore, FailureKind, MemoryStore, ObjectStore, Op, PrefixStore, RequestCounts, StoreError, Tally,
};
use fencepost::testing::ManualClock;
use fencepost::testing::{FaultStore, Injected, Rule};
use fencepost::{Clock, Timestamp};
use fencepost::{Error, Result};

/// A store as the binding keeps it: the store, and for a fault store its counts and rules (a
/// memory or fault store is state: kept in the held table under its JS id; a counting store's
/// counts are its JS handle's).
#[derive(Clone)]
pub struct Store {
    pub inner: Shared<dyn ObjectStore>,
    counts: Option<Shared<dyn Fn(bool) -> RequestCounts>>,
    faults: Option<Shared<FaultStore>>,
    /// A memory store's stamp clock (see [`Stamp`]).
    stamp: Option<Shared<Stamp>>,
}

impl Store {
    fn new(inner: Shared<dyn ObjectStore>) -> Store {
        Store { inner, counts: None, faults: None, stamp: None }
    }

    /// Requests so far (fault stores; zeros otherwise: a counting store's handle reads its own);
    /// `reset` starts again.
    pub fn request_counts(&self, reset: bool) -> RequestCounts {
        self.counts.as_ref().map_or_else(RequestCounts::default, |counts| counts(reset))
    }

    fn faults(&self, what: &str) -> Result<&Shared<FaultStore>> {
        self.faults.as_ref().ok_or_else(|| Error::invalid(format!("{what}() needs a faultStore()")))
    }

    /// Fault stores: apply a fault — `kind` ("lostResponse" | "transport" | "conflict"), or a
    /// `status` (with an optional S3 `code`), or a `delay` — to the next `times` (default 1) requests
    /// matching `op` (any when absent) and the key prefix `key`. The JS layer checks only names and
    /// types; every rule of what a fault may be is here.
    pub fn inject(&self, args: &Args) -> Result<()> {
        let faults = self.faults("inject")?;
        const FAULTS: &str = r#""lostResponse", "transport", "conflict", "hang", {status, code?} or {delay}"#;
        let status = args.number("status");
        let fault = match (args.text("kind").as_deref(), status, args.number("delay")) {
            (Some("lostResponse"), ..) => Injected::LostResponse,
            (Some("transport"), ..) => Injected::Transport,
            (Some("conflict"), ..) => Injected::Conflict,
            (Some("hang"), ..) => Injected::Hang,
            (Some(other), ..) => return Err(Error::invalid(format!("unknown fault {}: {FAULTS}", quoted(other)))),
            (None, Some(status), None) => {
                if !(400.0..=599.0).contains(&status) || status.fract() != 0.0 {
                    return Err(Error::invalid("an injected status must be an HTTP error status (400-599)"));
                }
                let status = status as u16;
                Injected::Status { status, code: args.text("code").unwrap_or_else(|| default_code(status).into()) }
            }
            (None, None, Some(d)) if d.is_finite() && d >= 0.0 => Injected::Delay(d),
            (None, None, Some(_)) => return Err(Error::invalid("an injected delay must be a number of seconds >= 0")),
            (None, ..) => return Err(Error::invalid(format!("a fault is {FAULTS}"))),
        };
        let times = match args.number("times") {
            None => 1,
            Some(t) if t.fract() == 0.0 && (1.0..=1e6).contains(&t) => t as u32,
            Some(_) => return Err(Error::invalid("inject options.times must be a whole number from 1")),
        };
        let op = match args.text("op").as_deref() {
            None => None,
            Some("get") => Some(Op::Get),
            Some("put") => Some(Op::Put),
            Some("delete") => Some(Op::Delete),
            Some("list") => Some(Op::List),
            Some(other) => {
                let other = quoted(other);
                return Err(Error::invalid(format!("inject option op must be get, put, delete or list, not {other}")));
            }
        };
        // A conflict is a competing write: only a put meets one.
        if fault == Injected::Conflict && op.is_some_and(|op| op != Op::Put) {
            return Err(Error::invalid("a \"conflict\" is injected on puts only (op: \"put\", or no op)"));
        }
        // A lost response only means something for a request that changes the store.
        let op = op.or((fault == Injected::LostResponse).then_some(Op::Put));
        faults.add_rule(Rule { fault, op, key_prefix: args.text("key").unwrap_or_default(), times });
        Ok(())
    }

    /// Fault stores: answer nothing for `seconds` from now, then resume.
    pub fn pause(&self, args: &Args) -> Result<()> {
        let faults = self.faults("pause")?;
        match args.number("seconds") {
            Some(s) if s.is_finite() && s >= 0.0 => {
                faults.pause(s);
                Ok(())
            }
            _ => Err(Error::invalid("pause(seconds) needs a number of seconds >= 0")),
        }
    }

    pub fn clear_faults(&self) {
        if let Some(f) = &self.faults {
            f.clear_faults();
        }
    }

    /// Fault stores: refuse writes past `perKey` per key per second with 429 (absent lifts it).
    pub fn limit_writes(&self, args: &Args) -> Result<()> {
        let faults = self.faults("limitWrites")?;
        let per_key = match args.number("perKey") {
            None => None,
            Some(n) if n.fract() == 0.0 && (1.0..=1e6).contains(&n) => Some(n as u32),
            Some(_) => return Err(Error::invalid("limitWrites perKey must be an integer between 1 and 1000000")),
        };
        faults.limit_writes(per_key);
        Ok(())
    }
}

/// The S3 error code a real store answers with for `status`.
fn default_code(status: u16) -> &'static str {
    match status {
        400 => "BadRequest",
        403 => "AccessDenied",
        404 => "NoSuchKey",
        409 => "ConditionalRequestConflict",
        412 => "PreconditionFailed",
        429 | 503 => "SlowDown",
        500 => "InternalError",
        502 => "BadGateway",
        504 => "GatewayTimeout",
        _ => "InjectedError",
    }
}

/// JS users may leave the region out (Rust users name it): AWS's default region.
const DEFAULT_REGION: &str = "us-east-1";

/// A store's options object as the JS layer checked it (names and types), read field by field:
/// one reader for every store. Its lookups are kept out of line so the wasm carries each once,
/// not once per option read.
pub struct Settings<'a> {
    pub object: &'a JsValue,
    /// The store's function, as error messages name it (`s3Store`).
    pub store: &'static str,
}

impl Settings<'_> {
    /// `object[name]`, undefined when absent.
    #[inline(never)]
    pub fn field(&self, name: &str) -> JsValue {
        js_sys::Reflect::get(self.object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }

    #[inline(never)]
    pub fn text(&self, name: &str) -> Option<String> {
        self.field(name).as_string()
    }

    #[inline(never)]
    pub fn required(&self, name: &str) -> Result<String> {
        self.text(name).ok_or_else(|| Error::invalid(format!("{} options.{name} is required", self.store)))
    }

    pub fn number(&self, name: &str) -> Option<f64> {
        self.field(name).as_f64()
    }

    pub fn flag(&self, name: &str) -> Option<bool> {
        self.field(name).as_bool()
    }

    pub fn function(&self, name: &str) -> Option<js_sys::Function> {
        self.field(name).dyn_into::<js_sys::Function>().ok()
    }

    /// `store` with the options' `prefix` around it, as the package's handle.
    pub fn prefixed(&self, store: Shared<dyn ObjectStore>) -> Result<Store> {
        prefixed(store, &self.text("prefix").unwrap_or_default())
    }
}

/// `store` under `prefix`, as the package's handle.
fn prefixed(store: Shared<dyn ObjectStore>, prefix: &str) -> Result<Store> {
    Ok(Store::new(Shared::new(PrefixStore::new(store, prefix)?)))
}

fn s3_store(settings: &JsValue) -> Result<Store> {
    let settings = Settings { object: settings, store: "s3Store" };
    let region = settings.text("region");
    let mut config = S3Config::builder(
        &settings.required("endpoint")?,
        &settings.required("bucket")?,
        region.as_deref().unwrap_or(DEFAULT_REGION),
        &settings.required("accessKeyId")?,
        &settings.required("secretAccessKey")?,
    )
    .session_token(settings.text("sessionToken"));
    if settings.flag("forcePathStyle") == Some(false) {
        config = config.addressing(Addressing::VirtualHosted);
    }
    if let Some(timeout) = settings.number("timeout") {
        config = config.timeout(timeout);
    }
    let store = S3Store::with_transport(config.build()?, Shared::new(FetchTransport::new()), Shared::new(SystemClock));
    settings.prefixed(Shared::new(store))
}

fn azure_store(settings: &JsValue) -> Result<Store> {
    let settings = Settings { object: settings, store: "azureStore" };
    let mut config = AzureConfig::builder(&settings.required("account")?, &settings.required("container")?);
    if let Some(endpoint) = settings.text("endpoint") {
        config = config.endpoint(endpoint);
    }
    if let Some(key) = settings.text("accountKey") {
        config = config.account_key(key);
    }
    if let Some(sas) = settings.text("sasToken") {
        config = config.sas_token(sas);
    }
    if let Some(timeout) = settings.number("timeout") {
        config = config.timeout(timeout);
    }
    let store =
        AzureStore::with_transport(config.build()?, Shared::new(FetchTransport::new()), Shared::new(SystemClock));
    settings.prefixed(Shared::new(store))
}

fn gcs_store(settings: &JsValue) -> Result<Store> {
    let settings = Settings { object: settings, store: "gcsStore" };
    let mut config = GcsConfig::builder(&settings.required("bucket")?);
    if let Some(endpoint) = settings.text("endpoint") {
        config = config.endpoint(endpoint);
    }
    let token = settings.text("accessToken");
    let get_token = settings.function("getAccessToken");
    let account = settings.field("serviceAccount");
    let account = (!account.is_undefined() && !account.is_null()).then_some(account);
    if [token.is_some(), get_token.is_some(), account.is_some()].iter().filter(|given| **given).count() > 1 {
        return Err(Error::invalid("give gcsStore one of accessToken, getAccessToken and credentials"));
    }
    if let Some(token) = token {
        config = config.access_token(token);
    }
    if let Some(function) = get_token {
        config = config.token_source(Shared::new(JsTokenSource(function)));
    }
    if let Some(account) = &account {
        let account = Settings { object: account, store: "gcsStore" };
        let sign = account
            .function("sign")
            .ok_or_else(|| Error::invalid("gcsStore credentials could not be turned into a signer"))?;
        config = config.service_account(ServiceAccount {
            client_email: account.text("clientEmail").unwrap_or_default(),
            token_uri: account.text("tokenUri").unwrap_or_default(),
            private_key_id: account.text("privateKeyId"),
            signer: Shared::new(JsSigner(sign)),
        });
    }
    if let Some(timeout) = settings.number("timeout") {
        config = config.timeout(timeout);
    }
    if let Some(honoured) = settings.flag("conditionalDelete") {
        config = config.conditional_delete(honoured);
    }
    let store = GcsStore::with_transport(config.build()?, Shared::new(FetchTransport::new()), Shared::new(SystemClock));
    settings.prefixed(Shared::new(store))
}

/// The text of what a JS callback threw or rejected with.
fn thrown_text(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "failed".into())
}

/// `getAccessToken()`: a string, or a Promise of one, asked before each request.
struct JsTokenSource(js_sys::Function);

#[async_trait::async_trait(?Send)]
impl TokenSource for JsTokenSource {
    async fn token(&self) -> fencepost::store::StoreResult<AccessToken> {
        let failed = |why: String| {
            StoreError::new(FailureKind::Fatal, Some("TokenFailed"), None, format!("getAccessToken: {why}"))
        };
        let value = self.0.call0(&JsValue::UNDEFINED).map_err(|e| failed(thrown_text(&e)))?;
        let value = fencepost::__private::settled(&value).await.map_err(|e| failed(thrown_text(&e)))?;
        match value.as_string().filter(|t| !t.is_empty()) {
            Some(token) => Ok(AccessToken { token, expires_at: None }),
            None => Err(failed("did not give a token string".into())),
        }
    }
}

/// The JS layer's WebCrypto RS256 signer of a service account's key.
struct JsSigner(js_sys::Function);

#[async_trait::async_trait(?Send)]
impl Rs256Signer for JsSigner {
    async fn sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, String> {
        let bytes = js_sys::Uint8Array::from(message);
        let value = self.0.call1(&JsValue::UNDEFINED, &bytes).map_err(|e| thrown_text(&e))?;
        let value = fencepost::__private::settled(&value).await.map_err(|e| thrown_text(&e))?;
        Ok(js_sys::Uint8Array::new(&value).to_vec())
    }
}

/// The store a JS store handle describes (its recipe: `{id, kind, settings?, bucket?, prefix?,
/// inner?, clock?}`). Stores that are state (memory, fault) are kept under their id from
/// their first use; the others are built from their settings each time a `Fencepost` is.
pub fn store(recipe: &JsValue) -> Result<Store> {
    let r = Settings { object: recipe, store: "store" };
    let id = r.number("id").unwrap_or(0.0) as u32;
    match r.text("kind").as_deref() {
        Some("memory") => memory_store(id),
        // Its counts are its JS handle's (`count(i)` adds one to `[get, put, delete, list][i]`,
        // which the handle reads itself), so it is built from its recipe like any other store and
        // holds nothing of its own.
        Some("counting") => {
            let count = r.function("count").ok_or_else(bad_recipe)?;
            let inner = store(&r.field("inner"))?.inner;
            Ok(Store::new(Shared::new(CountingStore::with_tally(inner, Shared::new(JsTally(count))))))
        }
        // Held (its faults are state), so built once: a memory store under it stamps by the fault
        // store's own clock when it has one.
        Some("fault") => held_store(id, || {
            let clock = r.field("clock");
            let clock: Shared<dyn Clock> = match clock.is_object() {
                true => {
                    let manual: Shared<dyn Clock> = Shared::new(manual_clock(&clock)?);
                    adopt_clock(&r.field("inner"), &manual)?;
                    manual
                }
                false => Shared::new(SystemClock),
            };
            let faults = Shared::new(FaultStore::with_clock(store(&r.field("inner"))?.inner, clock));
            if let Some(timeout) = r.number("timeout") {
                faults.set_timeout(timeout)?;
            }
            let f = faults.clone();
            let counts = Shared::new(move |reset| if reset { f.take_counts() } else { f.counts() });
            Ok(Store { inner: faults.clone(), counts: Some(counts), faults: Some(faults), stamp: None })
        }),
        Some("s3") => s3_store(&r.field("settings")),
        Some("azure") => azure_store(&r.field("settings")),
        Some("gcs") => gcs_store(&r.field("settings")),
        // Stores written in JS (`customStore`, and the R2 binding through the same door): the JS
        // layer hands over their calls in fixed shapes (pkg/host-stores.js).
        Some(kind @ ("custom" | "r2")) => {
            let name = if kind == "r2" { "R2" } else { "custom store" };
            let timeout = r.number("timeout").unwrap_or(DEFAULT_TIMEOUT);
            let js = JsStore::from_js(r.field("host"), name, Shared::new(SystemClock), timeout)?;
            let js = if kind == "custom" { js.with_custom_contract() } else { js };
            prefixed(Shared::new(js), &r.text("prefix").unwrap_or_default())
        }
        _ => Err(bad_recipe()),
    }
}

fn bad_recipe() -> Error {
    Error::invalid("not a store handle")
}

/// The memory store held under `id`, made on first use, its writes stamped by its [`Stamp`].
fn memory_store(id: u32) -> Result<Store> {
    held_store(id, || {
        let stamp = Shared::new(Stamp::default());
        let memory = MemoryStore::with_clock(stamp.clone());
        Ok(Store { stamp: Some(stamp), ..Store::new(Shared::new(memory)) })
    })
}

/// What a memory store stamps its writes by (`lastModified`, which `prune` and `inspect` judge):
/// the system clock, until a manual clock adopts it. A manual clock is the whole test's time, so
/// a memory store used under one (a `Fencepost`'s, or a fault store's around it) stamps by the
/// first it meets from then on, as a real store stamps by its own clock. (A `Fencepost`'s `now` is
/// that client's clock, which may be off from the store's on purpose: it adopts nothing.)
#[derive(Default)]
pub struct Stamp(std::cell::RefCell<Option<Shared<dyn Clock>>>);

impl Clock for Stamp {
    fn now(&self) -> Result<Timestamp> {
        match &*self.0.borrow() {
            Some(clock) => clock.now(),
            None => SystemClock.now(),
        }
    }

    fn sleep(&self, secs: f64) -> fencepost::BoxFuture<'static, ()> {
        SystemClock.sleep(secs)
    }
}

/// The memory store in the store `recipe` describes (under counting and fault stores too) takes
/// `clock` as its [`Stamp`], unless it has one already.
pub fn adopt_clock(recipe: &JsValue, clock: &Shared<dyn Clock>) -> Result<()> {
    let r = Settings { object: recipe, store: "store" };
    match r.text("kind").as_deref() {
        Some("memory") => {
            if let Some(stamp) = memory_store(r.number("id").unwrap_or(0.0) as u32)?.stamp {
                stamp.0.borrow_mut().get_or_insert_with(|| clock.clone());
            }
            Ok(())
        }
        Some("counting" | "fault") => adopt_clock(&r.field("inner"), clock),
        _ => Ok(()),
    }
}

/// A counting store's counts, kept by its JS handle: `count(i)` for the i-th of get, put, delete, list.
struct JsTally(js_sys::Function);

impl Tally for JsTally {
    fn record(&self, op: Op) {
        // `Op`'s variants are declared in that order.
        let _ = self.0.call1(&JsValue::UNDEFINED, &JsValue::from(op as u32));
    }
}

/// Stores and clocks that *are* state (a memory store's objects, a fault store's rules, a manual
/// clock's time), kept under their JS handle's id from their first
/// use until the handle says `drop` (which the JS layer does when the handle is collected, where
/// the runtime collects): the user's own data, as a `Map` of theirs would be.
#[derive(Clone)]
enum Held {
    Store(Store),
    /// A manual clock, and the mark from which the store requests its driver waits for count
    /// (those made since it was: see `requests_in_flight_since`).
    Clock(ManualClock, u32),
}

thread_local! {
    static HELD: std::cell::RefCell<Vec<(u32, Held)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The resource held under `id`, made by `make` on first use.
fn held(id: u32, make: impl FnOnce() -> Result<Held>) -> Result<Held> {
    if let Some(found) = HELD.with(|h| {
        let h = h.borrow();
        find(&h, id).map(|at| h[at].1.clone())
    }) {
        return Ok(found);
    }
    let made = make()?;
    HELD.with(|h| h.borrow_mut().push((id, made.clone())));
    Ok(made)
}

/// The JS handle `id` is gone: forget what was held for it.
pub fn forget(id: u32) {
    HELD.with(|h| h.borrow_mut().retain(|(i, _)| *i != id));
}

/// The store held under `id`, made by `make` on first use.
fn held_store(id: u32, make: impl FnOnce() -> Result<Store>) -> Result<Store> {
    match held(id, || make().map(Held::Store))? {
        Held::Store(store) => Ok(store),
        Held::Clock(..) => Err(bad_recipe()),
    }
}

/// The manual clock a `manualClock()` recipe (`{id, start?}`) names, made on first use: time moves
/// only when told to, and every wait fencepost makes on it is a timer that `stepUntil` fires.
pub fn manual_clock(recipe: &JsValue) -> Result<ManualClock> {
    held_clock(recipe).map(|(clock, _)| clock)
}

/// Store requests on the network that a `manualClock()` recipe's driver waits for: those made
/// since the clock was (a request that an earlier Worker request abandoned never settles).
pub fn io_in_flight(recipe: &JsValue) -> Result<usize> {
    held_clock(recipe).map(|(_, mark)| fencepost::__private::requests_in_flight_since(mark))
}

fn held_clock(recipe: &JsValue) -> Result<(ManualClock, u32)> {
    let r = Settings { object: recipe, store: "manualClock" };
    let made = held(r.number("id").unwrap_or(0.0) as u32, || {
        let clock = match r.number("start") {
            None => ManualClock::starting_2026(),
            Some(ms) => {
                let start = Timestamp::from_millis_f64(ms);
                if !ms.is_finite() || !start.is_on_wire() {
                    return Err(Error::invalid("manualClock(start) must be a time in the years 1-9999"));
                }
                ManualClock::new(start)
            }
        };
        Ok(Held::Clock(clock, fencepost::__private::request_mark()))
    })?;
    match made {
        Held::Clock(clock, mark) => Ok((clock, mark)),
        Held::Store(_) => Err(Error::invalid("not a manualClock()")),
    }
}
