//! Store handles: `memoryStore()`, `s3Store(…)`, `r2Store(bucket)`, `countingStore(store)`, and the
//! testing toolkit's `faultStore(store)` and `manualClock()`. The JS layer wraps each store in its
//! own `Store` class and passes this one to `new Fencepost(store)`.

use crate::base::error::quoted;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::errors::to_js;
use crate::base::error::{Error, Result};
use crate::host::clock::SystemClock;
use crate::store::fault::{FaultStore, Injected, Rule};
use crate::store::r2::R2Store;
use crate::store::s3::{Addressing, FetchTransport, S3Config, S3Store};
use crate::store::{CountingStore, MemoryStore, ObjectStore, Op, PrefixStore, RequestCounts};
use crate::time::{Clock, ManualClock, Timestamp};

#[wasm_bindgen]
pub struct Store {
    inner: Rc<dyn ObjectStore>,
    counts: Option<Rc<dyn Fn(bool) -> RequestCounts>>,
    faults: Option<Rc<FaultStore>>,
}

impl Store {
    fn new(inner: Rc<dyn ObjectStore>) -> Store {
        Store { inner, counts: None, faults: None }
    }

    pub(crate) fn inner(&self) -> Rc<dyn ObjectStore> {
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

    /// Fault stores: apply `kind` ("lostResponse" | "transport" | "conflict" | "status" | "delay")
    /// to the next `times` requests matching `op` (any when absent) and the key prefix.
    #[allow(clippy::too_many_arguments)]
    pub fn inject(
        &self,
        kind: &str,
        status: Option<u16>,
        code: Option<String>,
        delay: Option<f64>,
        op: Option<String>,
        key: Option<String>,
        times: u32,
    ) -> std::result::Result<(), JsValue> {
        let rule = || -> Result<()> {
            let faults = self.faults.as_ref().ok_or_else(|| Error::invalid("inject() needs a faultStore()"))?;
            let fault = match kind {
                "lostResponse" => Injected::LostResponse,
                "transport" => Injected::Transport,
                "conflict" => Injected::Conflict,
                "status" => {
                    let status = status
                        .filter(|s| (400..=599).contains(s))
                        .ok_or_else(|| Error::invalid("an injected status must be an HTTP error status (400-599)"))?;
                    Injected::Status { status, code: code.unwrap_or_else(|| default_code(status).into()) }
                }
                "delay" => match delay {
                    Some(d) if d.is_finite() && d >= 0.0 => Injected::Delay(d),
                    _ => return Err(Error::invalid("an injected delay must be a number of seconds >= 0")),
                },
                other => return Err(Error::invalid(format!("unknown fault {}", quoted(other)))),
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
    Store::new(Rc::new(MemoryStore::new()))
}

#[wasm_bindgen(js_name = s3Store)]
#[allow(clippy::too_many_arguments)]
pub fn s3_store(
    endpoint: &str,
    bucket: &str,
    region: &str,
    access_key_id: &str,
    secret_access_key: &str,
    session_token: Option<String>,
    prefix: Option<String>,
    path_style: bool,
    timeout: Option<f64>,
) -> std::result::Result<Store, JsValue> {
    let build = || -> Result<Store> {
        let addressing = if path_style { Addressing::Path } else { Addressing::VirtualHosted };
        let mut config = S3Config::builder(endpoint, bucket, region, access_key_id, secret_access_key)
            .session_token(session_token)
            .addressing(addressing);
        if let Some(timeout) = timeout {
            config = config.timeout(timeout);
        }
        let config = config.build()?;
        let store = S3Store::new(config, Rc::new(FetchTransport::new()), Rc::new(SystemClock));
        Ok(Store::new(PrefixStore::wrap(Rc::new(store), &prefix.unwrap_or_default())?))
    };
    build().map_err(to_js)
}

#[wasm_bindgen(js_name = r2Store)]
pub fn r2_store(bucket: JsValue, prefix: Option<String>) -> std::result::Result<Store, JsValue> {
    let build = || -> Result<Store> {
        let store = R2Store::from_js(bucket)?;
        Ok(Store::new(PrefixStore::wrap(Rc::new(store), &prefix.unwrap_or_default())?))
    };
    build().map_err(to_js)
}

#[wasm_bindgen(js_name = countingStore)]
pub fn counting_store(inner: &Store) -> Store {
    let counting = Rc::new(CountingStore::new(inner.inner()));
    let c = counting.clone();
    let counts = Rc::new(move |reset| if reset { c.take_counts() } else { c.counts() });
    Store { inner: counting, counts: Some(counts), faults: None }
}

/// The testing toolkit's fault store; its injected delays wait on `clock` when given.
#[wasm_bindgen(js_name = faultStore)]
pub fn fault_store(inner: &Store, clock: Option<JsManualClock>) -> Store {
    let clock: Rc<dyn Clock> = match clock {
        Some(c) => Rc::new(c.inner),
        None => Rc::new(SystemClock),
    };
    let faults = Rc::new(FaultStore::with_clock(inner.inner(), clock));
    let f = faults.clone();
    let counts = Rc::new(move |reset| if reset { f.take_counts() } else { f.counts() });
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
    #[wasm_bindgen(constructor)]
    pub fn new(start_ms: f64) -> std::result::Result<JsManualClock, JsValue> {
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
