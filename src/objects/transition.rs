//! The caller-supplied transitions the compare-and-swap loops apply (`stateFn`, `update`,
//! `cooperativeWrite`…).

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::base::error::Result;
use crate::base::future::BoxFuture;
use crate::base::sync::MaybeSend;
use crate::codec::json;

/// A caller-supplied transition of a JSON value (`stateFn`, `update`, `cooperativeWrite`…). It may
/// be called more than once (each lost race calls it again), so it must be pure. An `Err` aborts the
/// operation with nothing written and reaches the caller unchanged.
#[cfg(not(target_arch = "wasm32"))]
pub type Transition<'a> = dyn FnMut(Value) -> BoxFuture<'a, Result<Value>> + Send + 'a;
/// A caller-supplied transition (see above); in wasm32 nothing needs to be `Send`.
#[cfg(target_arch = "wasm32")]
pub type Transition<'a> = dyn FnMut(Value) -> BoxFuture<'a, Result<Value>> + 'a;

/// What a transition's call (`f(value)`) settles to, under `objects`' cancel, checked as JSON a
/// document can hold. A cancel while it is pending answers at once with the cancel's reason (the
/// loop stops there: nothing is written); the caller's function runs on, unheard.
pub(crate) async fn settle(objects: &super::Objects, next: BoxFuture<'_, Result<Value>>) -> Result<Value> {
    let out = match objects.cancel() {
        Some(cancel) => cancel.run(next).await?,
        None => next.await,
    };
    json::checked(out?)
}

/// Wrap a synchronous closure as a [`Transition`] (the usual case in Rust).
pub fn transition<'a>(
    mut f: impl FnMut(Value) -> Result<Value> + crate::base::sync::MaybeSend + 'a,
) -> Box<Transition<'a>> {
    Box::new(move |v| {
        let out = f(v);
        Box::pin(async move { out })
    })
}

/// A typed transition `f` as the JSON one the core applies: the value read as a `T` (else
/// [`Error::Corrupt`] naming `what` and the key), `f`'s result written back as JSON.
pub(crate) fn typed<'f, T, F, Fut>(
    key: &str,
    what: &'static str,
    f: &'f mut F,
) -> impl FnMut(Value) -> BoxFuture<'f, Result<Value>> + MaybeSend + 'f
where
    T: Serialize + DeserializeOwned + 'f,
    F: FnMut(T) -> Fut + MaybeSend,
    Fut: Future<Output = Result<T>> + MaybeSend + 'f,
{
    let key = key.to_owned();
    move |value: Value| -> BoxFuture<'f, Result<Value>> {
        match json::from_json::<T>(value, what, &key) {
            Ok(typed) => {
                let (next, key) = (f(typed), key.clone());
                Box::pin(async move { json::to_json(&next.await?, what, &key) })
            }
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}
