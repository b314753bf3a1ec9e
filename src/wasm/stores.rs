//! Store handles: `memoryStore()`, `s3Store(…)`, `r2Store(bucket)`, `countingStore(store)`. The JS
//! layer wraps each in its own `Store` class and passes this one to `new Fencepost(store)`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::errors::to_js;
use crate::error::{Error, Result};
use crate::keys::normalize_store_prefix;
use crate::store::r2::R2Store;
use crate::store::s3::{Addressing, FetchTransport, S3Config, S3Store};
use crate::store::{FaultStore, MemoryStore, ObjectStore};
use crate::time::SystemClock;

#[wasm_bindgen]
pub struct Store {
    inner: Rc<dyn ObjectStore>,
    counting: Option<Rc<FaultStore>>,
}

impl Store {
    fn new(inner: Rc<dyn ObjectStore>) -> Store {
        Store { inner, counting: None }
    }

    pub(crate) fn inner(&self) -> Rc<dyn ObjectStore> {
        self.inner.clone()
    }
}

#[wasm_bindgen]
impl Store {
    /// `[get, put, delete, list]` requests so far (`countingStore` only); `reset` starts again at 0.
    #[wasm_bindgen(js_name = requestCounts)]
    pub fn request_counts(&self, reset: bool) -> Vec<u32> {
        let Some(c) = &self.counting else { return vec![0; 4] };
        let counts = if reset { c.take_counts() } else { c.counts() };
        vec![counts.get, counts.put, counts.delete, counts.list]
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
        let config = S3Config::builder(endpoint, bucket, region, access_key_id, secret_access_key)
            .session_token(session_token)
            .prefix(&prefix.unwrap_or_default())
            .addressing(addressing)
            .timeout(timeout.unwrap_or(crate::store::s3::DEFAULT_TIMEOUT))
            .build()?;
        Ok(Store::new(Rc::new(S3Store::new(config, Rc::new(FetchTransport::new()), Rc::new(SystemClock)))))
    };
    build().map_err(to_js)
}

#[wasm_bindgen(js_name = r2Store)]
pub fn r2_store(bucket: JsValue, prefix: Option<String>) -> std::result::Result<Store, JsValue> {
    let build = || -> Result<Store> {
        let prefix = normalize_store_prefix(&prefix.unwrap_or_default())?;
        let store = R2Store::new(bucket, prefix).map_err(Error::invalid)?;
        Ok(Store::new(Rc::new(store)))
    };
    build().map_err(to_js)
}

#[wasm_bindgen(js_name = countingStore)]
pub fn counting_store(inner: &Store) -> Store {
    let counting = Rc::new(FaultStore::new(inner.inner()));
    Store { inner: counting.clone(), counting: Some(counting) }
}
