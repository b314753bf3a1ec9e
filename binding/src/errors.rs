//! Core errors → failure records for the JS layer: `{__fencepost: code, message, …details}`. The JS
//! layer (`pkg/errors.js`, the one list of error classes) turns a record into its class inside the
//! caller's async stack, so the error's stack shows the caller's frame. The core knows codes only,
//! never JS class names. A callback's own error is handed back unchanged.

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

use fencepost::Error;

/// The property that marks a failure record (`MARK` in `pkg/errors.js`).
pub(crate) const MARK: &str = "__fencepost";

/// The JS value to reject with.
pub fn to_js(e: Error) -> JsValue {
    let e = match e {
        Error::Callback(payload) => match Error::callback_value(&payload).downcast_ref::<JsValue>() {
            Some(js) => return js.clone(),
            None => Error::invalid("a callback failed"),
        },
        other => other,
    };
    let record = Object::new();
    let set = |k: &str, v: JsValue| {
        if !v.is_undefined() {
            let _ = Reflect::set(&record, &k.into(), &v);
        }
    };
    set(MARK, e.code().into());
    set("message", e.to_string().into());
    match &e {
        Error::LeaseLost { key, reason, cause, .. } => {
            set("key", key.into());
            set("reason", reason.as_str().into());
            set("cause", cause.as_deref().map_or(JsValue::UNDEFINED, |c| to_js(c.clone())));
        }
        Error::Conflict { key, attempts } => {
            set("key", key.into());
            set("attempts", (*attempts).into());
        }
        Error::Storage(f) => {
            set("key", f.key.as_deref().map_or(JsValue::UNDEFINED, JsValue::from));
            set("s3Code", f.code.clone().map_or(JsValue::UNDEFINED, JsValue::from));
            set("status", f.status.map_or(JsValue::UNDEFINED, JsValue::from));
        }
        Error::AmbiguousWrite { key, cause, .. } => {
            set("key", key.into());
            // An abort's reason (or whatever made the outcome unknowable), as the JS `cause`.
            set("cause", cause.as_deref().map_or(JsValue::UNDEFINED, |c| to_js(c.clone())));
        }
        Error::NotFound { key } | Error::Corrupt { key, .. } => {
            set("key", key.into());
        }
        Error::Timeout { key, seconds } => {
            set("key", key.into());
            set("timeout", (*seconds).into());
        }
        // The error is non-exhaustive: a variant added later carries its code and message.
        _ => {}
    }
    record.into()
}
