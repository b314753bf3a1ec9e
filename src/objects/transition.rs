//! The caller-supplied transitions the compare-and-swap loops apply (`stateFn`, `update`,
//! `cooperativeWrite`…).

use serde_json::Value;

use crate::base::error::Result;
use crate::base::future::LocalBoxFuture;

/// A caller-supplied transition of a JSON value (`stateFn`, `update`, `cooperativeWrite`…). It may
/// be called more than once (each lost race calls it again), so it must be pure. An `Err` aborts the
/// operation with nothing written and reaches the caller unchanged.
pub type Transition<'a> = dyn FnMut(Value) -> LocalBoxFuture<'a, Result<Value>> + 'a;

/// Wrap a synchronous closure as a [`Transition`] (the usual case in Rust).
pub fn transition<'a>(mut f: impl FnMut(Value) -> Result<Value> + 'a) -> Box<Transition<'a>> {
    Box::new(move |v| {
        let out = f(v);
        Box::pin(async move { out })
    })
}
