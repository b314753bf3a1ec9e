//! Store handles: `memoryStore()`, `s3Store(…)`, `r2Store(bucket)`, `countingStore(store)`, and the
//! testing toolkit's `faultStore(store)` and `manualClock()`. The JS layer wraps each store in its
//! own `Store` class and passes this one to `new Fencepost(store)`.

use crate::base::error::quoted;
use crate::base::sync::Shared;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::errors::to_js;
use crate::base::error::{Error, Result};
use crate::host::clock::SystemClock;
use crate::store::azure::{AzureConfig, AzureStore};
use crate::store::fault::{FaultStore, Injected, Rule};
use crate::store::gcs::{AccessToken, GcsConfig, GcsStore, Rs256Signer, ServiceAccount, TokenSource};
use crate::store::r2::R2Store;
use crate::store::s3::{Addressing, FetchTransport, S3Config, S3Store};
use crate::store::{CountingStore, FailureKind, MemoryStore, ObjectStore, Op, PrefixStore, RequestCounts, StoreError};
use crate::time::{Clock, ManualClock, Timestamp};

#[wasm_bindgen]
pub struct Store {
    inner: Shared<dyn ObjectStore>,
    counts: Option<Shared<dyn Fn(bool) -> RequestCounts>>,
    faults: Option<Shared<FaultStore>>,
}

impl Store {
    fn new(inner: Shared<dyn ObjectStore>) -> Store {
        Store { inner, counts: None, faults: None }
    }

    pub(crate) fn inner(&self) -> Shared<dyn ObjectStore> {
        self.inner.clone()
    }
}

#[wasm_bindgen]
impl Store {
    /// `[get, put, delete, list]` requests so far (counting and fault stores); `reset` starts again.
    #[wasm_bindgen(js_name = requestCounts)]
    pub fn request_counts(&self, reset: bool) -> Vec<u32> {
        let Some(counts) = &self.counts else { return vec![0; 4] };
        let c = counts(reset);
        vec![c.get, c.put, c.delete, c.list]
    }

    /// Fault stores: apply a fault — `kind` ("lostResponse" | "transport" | "conflict"), or a
    /// `status` (with an optional S3 `code`), or a `delay` — to the next `times` (default 1) requests
    /// matching `op` (any when absent) and the key prefix. The JS layer checks only names and
    /// types; every rule of what a fault may be is here.
    #[allow(clippy::too_many_arguments)]
    pub fn inject(
        &self,
        kind: Option<String>,
        status: Option<u16>,
        code: Option<String>,
        delay: Option<f64>,
        op: Option<String>,
        key: Option<String>,
        times: Option<f64>,
    ) -> std::result::Result<(), JsValue> {
        let rule = || -> Result<()> {
            let faults = self.faults.as_ref().ok_or_else(|| Error::invalid("inject() needs a faultStore()"))?;
            const FAULTS: &str = r#""lostResponse", "transport", "conflict", {status, code?} or {delay}"#;
            let fault = match (kind.as_deref(), status, delay) {
                (Some("lostResponse"), ..) => Injected::LostResponse,
                (Some("transport"), ..) => Injected::Transport,
                (Some("conflict"), ..) => Injected::Conflict,
                (Some(other), ..) => return Err(Error::invalid(format!("unknown fault {}: {FAULTS}", quoted(other)))),
                (None, Some(status), None) => {
                    if !(400..=599).contains(&status) {
                        return Err(Error::invalid("an injected status must be an HTTP error status (400-599)"));
                    }
                    Injected::Status { status, code: code.unwrap_or_else(|| default_code(status).into()) }
                }
                (None, None, Some(d)) if d.is_finite() && d >= 0.0 => Injected::Delay(d),
                (None, None, Some(_)) => {
                    return Err(Error::invalid("an injected delay must be a number of seconds >= 0"));
                }
                (None, ..) => return Err(Error::invalid(format!("a fault is {FAULTS}"))),
            };
            let times = match times {
                None => 1,
                Some(t) if t.fract() == 0.0 && (1.0..=1e6).contains(&t) => t as u32,
                Some(_) => return Err(Error::invalid("inject options.times must be a whole number from 1")),
            };
            let op = match op.as_deref() {
                None => None,
                Some("get") => Some(Op::Get),
                Some("put") => Some(Op::Put),
                Some("delete") => Some(Op::Delete),
                Some("list") => Some(Op::List),
                Some(other) => {
                    return Err(Error::invalid(format!(
                        "inject option op must be get, put, delete or list, not {}",
                        quoted(other)
                    )));
                }
            };
            // A lost response only means something for a request that changes the store.
            let op = op.or((fault == Injected::LostResponse).then_some(Op::Put));
            faults.add_rule(Rule { fault, op, key_prefix: key.unwrap_or_default(), times });
            Ok(())
        };
        rule().map_err(to_js)
    }

    #[wasm_bindgen(js_name = clearFaults)]
    pub fn clear_faults(&self) {
        if let Some(f) = &self.faults {
            f.clear_faults();
        }
    }

    /// Fault stores: refuse writes past `per_key` per key per second with 429 (`None` lifts it).
    #[wasm_bindgen(js_name = limitWrites)]
    pub fn limit_writes(&self, per_key: Option<f64>) -> std::result::Result<(), JsValue> {
        let limit = || -> Result<()> {
            let faults = self.faults.as_ref().ok_or_else(|| Error::invalid("limitWrites() needs a faultStore()"))?;
            let per_key = match per_key {
                None => None,
                Some(n) if n.fract() == 0.0 && (1.0..=1e6).contains(&n) => Some(n as u32),
                Some(_) => return Err(Error::invalid("limitWrites perKey must be an integer between 1 and 1000000")),
            };
            faults.limit_writes(per_key);
            Ok(())
        };
        limit().map_err(to_js)
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

#[wasm_bindgen(js_name = memoryStore)]
pub fn memory_store() -> Store {
    Store::new(Shared::new(MemoryStore::new()))
}

#[wasm_bindgen(typescript_custom_section)]
const S3_SETTINGS: &str = r#"
/** `s3Store`'s options as the JS layer checked them (names and types); null or undefined: not given. */
export interface S3Settings {
  endpoint: string | null | undefined;
  bucket: string | null | undefined;
  region: string | null | undefined;
  accessKeyId: string | null | undefined;
  secretAccessKey: string | null | undefined;
  sessionToken: string | null | undefined;
  prefix: string | null | undefined;
  forcePathStyle: boolean | null | undefined;
  timeout: number | null | undefined;
}"#;

#[wasm_bindgen]
extern "C" {
    /// `s3Store`'s options object (typed for the JS layer's checker; read by name here).
    #[wasm_bindgen(typescript_type = "S3Settings")]
    pub type S3Settings;
}

/// JS users may leave the region out (Rust users name it): AWS's default region.
const DEFAULT_REGION: &str = "us-east-1";

/// A store's options object as the JS layer checked it (names and types), read field by field:
/// one reader for every store. Its lookups are kept out of line so the wasm carries each once,
/// not once per option read.
struct Settings<'a> {
    object: &'a JsValue,
    /// The store's function, as error messages name it (`s3Store`).
    store: &'static str,
}

impl Settings<'_> {
    /// `object[name]`, undefined when absent.
    #[inline(never)]
    fn field(&self, name: &str) -> JsValue {
        js_sys::Reflect::get(self.object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }

    #[inline(never)]
    fn text(&self, name: &str) -> Option<String> {
        self.field(name).as_string()
    }

    #[inline(never)]
    fn required(&self, name: &str) -> Result<String> {
        self.text(name).ok_or_else(|| Error::invalid(format!("{} options.{name} is required", self.store)))
    }

    fn number(&self, name: &str) -> Option<f64> {
        self.field(name).as_f64()
    }

    fn flag(&self, name: &str) -> Option<bool> {
        self.field(name).as_bool()
    }

    fn function(&self, name: &str) -> Option<js_sys::Function> {
        self.field(name).dyn_into::<js_sys::Function>().ok()
    }

    /// `store` with the options' `prefix` around it, as the package's handle.
    fn prefixed(&self, store: Shared<dyn ObjectStore>) -> Result<Store> {
        prefixed(store, &self.text("prefix").unwrap_or_default())
    }
}

/// `store` under `prefix`, as the package's handle.
fn prefixed(store: Shared<dyn ObjectStore>, prefix: &str) -> Result<Store> {
    Ok(Store::new(Shared::new(PrefixStore::new(store, prefix)?)))
}

#[wasm_bindgen(js_name = s3Store)]
pub fn s3_store(settings: &S3Settings) -> std::result::Result<Store, JsValue> {
    let settings = Settings { object: settings, store: "s3Store" };
    let build = || -> Result<Store> {
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
        let store =
            S3Store::with_transport(config.build()?, Shared::new(FetchTransport::new()), Shared::new(SystemClock));
        settings.prefixed(Shared::new(store))
    };
    build().map_err(to_js)
}

#[wasm_bindgen(typescript_custom_section)]
const CLOUD_SETTINGS: &str = r#"
/** `azureStore`'s options as the JS layer checked them; null or undefined: not given. */
export interface AzureSettings {
  account: string | null | undefined;
  container: string | null | undefined;
  accountKey: string | null | undefined;
  sasToken: string | null | undefined;
  endpoint: string | null | undefined;
  prefix: string | null | undefined;
  timeout: number | null | undefined;
}
/** `gcsStore`'s options as the JS layer made them: `credentials` became `serviceAccount`, whose
 * `sign` is the runtime's WebCrypto RS256 with the account's key. */
export interface GcsSettings {
  bucket: string | null | undefined;
  accessToken: string | null | undefined;
  getAccessToken: Function | null | undefined;
  serviceAccount: {clientEmail: string, tokenUri: string, privateKeyId?: string,
    sign: (message: Uint8Array<ArrayBuffer>) => Promise<ArrayBuffer>} | null | undefined;
  endpoint: string | null | undefined;
  prefix: string | null | undefined;
  timeout: number | null | undefined;
  conditionalDelete: boolean | null | undefined;
}"#;

#[wasm_bindgen]
extern "C" {
    /// `azureStore`'s options object (read by name here).
    #[wasm_bindgen(typescript_type = "AzureSettings")]
    pub type AzureSettings;
    /// `gcsStore`'s options object (read by name here).
    #[wasm_bindgen(typescript_type = "GcsSettings")]
    pub type GcsSettings;
}

#[wasm_bindgen(js_name = azureStore)]
pub fn azure_store(settings: &AzureSettings) -> std::result::Result<Store, JsValue> {
    let settings = Settings { object: settings, store: "azureStore" };
    let build = || -> Result<Store> {
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
    };
    build().map_err(to_js)
}

#[wasm_bindgen(js_name = gcsStore)]
pub fn gcs_store(settings: &GcsSettings) -> std::result::Result<Store, JsValue> {
    let settings = Settings { object: settings, store: "gcsStore" };
    let build = || -> Result<Store> {
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
        let store =
            GcsStore::with_transport(config.build()?, Shared::new(FetchTransport::new()), Shared::new(SystemClock));
        settings.prefixed(Shared::new(store))
    };
    build().map_err(to_js)
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
    async fn token(&self) -> crate::store::StoreResult<AccessToken> {
        let failed = |why: String| {
            StoreError::new(FailureKind::Fatal, Some("TokenFailed"), None, format!("getAccessToken: {why}"))
        };
        let value = self.0.call0(&JsValue::UNDEFINED).map_err(|e| failed(thrown_text(&e)))?;
        let value = crate::host::promise::settled(&value).await.map_err(|e| failed(thrown_text(&e)))?;
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
        let value = crate::host::promise::settled(&value).await.map_err(|e| thrown_text(&e))?;
        Ok(js_sys::Uint8Array::new(&value).to_vec())
    }
}

#[wasm_bindgen(js_name = r2Store)]
pub fn r2_store(bucket: JsValue, prefix: Option<String>) -> std::result::Result<Store, JsValue> {
    let build = || -> Result<Store> { prefixed(Shared::new(R2Store::from_js(bucket)?), &prefix.unwrap_or_default()) };
    build().map_err(to_js)
}

#[wasm_bindgen(js_name = countingStore)]
pub fn counting_store(inner: &Store) -> Store {
    let counting = Shared::new(CountingStore::new(inner.inner()));
    let c = counting.clone();
    let counts = Shared::new(move |reset| if reset { c.take_counts() } else { c.counts() });
    Store { inner: counting, counts: Some(counts), faults: None }
}

/// The testing toolkit's fault store; its injected delays wait on `clock` when given.
#[wasm_bindgen(js_name = faultStore)]
pub fn fault_store(inner: &Store, clock: Option<JsManualClock>) -> Store {
    let clock: Shared<dyn Clock> = match clock {
        Some(c) => Shared::new(c.inner),
        None => Shared::new(SystemClock),
    };
    let faults = Shared::new(FaultStore::with_clock(inner.inner(), clock));
    let f = faults.clone();
    let counts = Shared::new(move |reset| if reset { f.take_counts() } else { f.counts() });
    Store { inner: faults.clone(), counts: Some(counts), faults: Some(faults) }
}

/// The testing toolkit's manual clock: time moves only when told to, and every wait fencepost makes
/// on it is a timer that `stepUntil` fires in due order.
#[wasm_bindgen(js_name = ManualClock)]
#[derive(Clone)]
pub struct JsManualClock {
    pub(crate) inner: ManualClock,
}

#[wasm_bindgen(js_class = ManualClock)]
impl JsManualClock {
    /// Starting at `start_ms`, or at the core's own start (2026-01-01T00:00:00Z) when not given.
    #[wasm_bindgen(constructor)]
    pub fn new(start_ms: Option<f64>) -> std::result::Result<JsManualClock, JsValue> {
        let Some(start_ms) = start_ms else { return Ok(JsManualClock { inner: ManualClock::starting_2026() }) };
        let start = Timestamp::from_millis_f64(start_ms);
        if !start_ms.is_finite() || !start.is_on_wire() {
            return Err(to_js(Error::invalid("manualClock(start) must be a time in the years 1-9999")));
        }
        Ok(JsManualClock { inner: ManualClock::new(start) })
    }

    /// Milliseconds since the epoch.
    pub fn now(&self) -> f64 {
        self.inner.now().map_or(f64::NAN, |t| t.as_millis_f64())
    }

    /// One step towards `until_ms`: fire the earliest timer due by then (true), or arrive (false).
    #[wasm_bindgen(js_name = stepUntil)]
    pub fn step_until(&self, until_ms: f64) -> bool {
        self.inner.step_until(Timestamp::from_millis_f64(until_ms))
    }

    /// Store requests on the network right now (the driver lets them settle between steps).
    #[wasm_bindgen(js_name = ioInFlight)]
    pub fn io_in_flight(&self) -> u32 {
        crate::host::io::requests_in_flight() as u32
    }

    /// A second handle on the same clock (for `new Fencepost(store, {clock})`).
    pub fn share(&self) -> JsManualClock {
        self.clone()
    }
}
