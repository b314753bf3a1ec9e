//! Rust errors → JS errors. The classes are defined in JS (`pkg/errors.js`, so `instanceof` works
//! across the package) and handed to the module once at start-up through `installErrorClasses`.
//! Until then (e.g. in wasm unit tests) plain `Error`s with the same `name` and `code` are thrown.

use std::cell::RefCell;

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::error::Error;

thread_local! {
    static CLASSES: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// Called by the package's entry files with the module namespace of `errors.js`.
#[wasm_bindgen(js_name = installErrorClasses)]
pub fn install_error_classes(classes: JsValue) {
    CLASSES.with(|c| *c.borrow_mut() = Some(classes));
}

fn class_name(e: &Error) -> &'static str {
    match e {
        Error::InvalidArgument(_) => "InvalidArgument",
        Error::LeaseLost { .. } => "LeaseLost",
        Error::Conflict { .. } => "ConflictError",
        Error::Storage(_) => "StorageError",
        Error::AmbiguousWrite { .. } => "AmbiguousWriteError",
        Error::Timeout { .. } => "TimeoutError",
        Error::NotFound { .. } => "NotFoundError",
        Error::Corrupt { .. } => "CorruptObjectError",
        Error::Aborted | Error::Callback(_) => "FencepostError",
    }
}

/// The JS value to reject with. A callback's own error is handed back unchanged.
pub fn to_js(e: Error) -> JsValue {
    let e = match e {
        Error::Callback(payload) => match payload.downcast::<JsValue>() {
            Ok(js) => return (*js).clone(),
            Err(_) => Error::invalid("a callback failed"),
        },
        other => other,
    };
    let message = e.to_string();
    let name = class_name(&e);
    let details = js_sys::Object::new();
    let detail = |k: &str, v: JsValue| {
        if !v.is_undefined() {
            set(&details, k, &v);
        }
    };
    match &e {
        Error::LeaseLost { key, reason } => {
            detail("key", key.into());
            detail("reason", reason.into());
        }
        Error::Conflict { key, attempts } => {
            detail("key", key.into());
            detail("attempts", (*attempts).into());
        }
        // SPEC: StorageError carries the S3 error code (as its `code`) and the HTTP status.
        Error::Storage(f) => {
            detail("code", f.code.clone().map_or(JsValue::UNDEFINED, JsValue::from));
            detail("s3Code", f.code.clone().map_or(JsValue::UNDEFINED, JsValue::from));
            detail("status", f.status.map_or(JsValue::UNDEFINED, JsValue::from));
        }
        Error::AmbiguousWrite { key, .. } | Error::NotFound { key } | Error::Corrupt { key, .. } => {
            detail("key", key.into());
        }
        Error::Timeout { key, seconds } => {
            detail("key", key.into());
            detail("timeout", (*seconds).into());
        }
        Error::InvalidArgument(_) | Error::Aborted | Error::Callback(_) => {}
    }
    let ctor = CLASSES.with(|c| c.borrow().as_ref().and_then(|m| Reflect::get(m, &name.into()).ok()));
    let constructed = ctor
        .and_then(|c| c.dyn_into::<js_sys::Function>().ok())
        .and_then(|ctor| Reflect::construct(&ctor, &js_sys::Array::of2(&message.clone().into(), &details)).ok());
    match constructed {
        Some(err) => err,
        None => {
            // No classes installed (wasm unit tests): an Error with the same name, code and fields.
            let plain = js_sys::Error::new(&message);
            plain.set_name(name);
            let code = match &e {
                Error::Storage(f) => f.code.clone().unwrap_or_else(|| "STORAGE_ERROR".into()),
                other => other.code().to_owned(),
            };
            set(&plain, "code", &code.into());
            let _ = js_sys::Object::assign(plain.unchecked_ref(), &details);
            plain.into()
        }
    }
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &key.into(), value);
}

/// An `InvalidArgument` carrying a schema's issues (Standard Schema validation failure).
pub fn schema_error(message: String, issues: JsValue) -> JsValue {
    let err = to_js(Error::invalid(message));
    set(&err, "issues", &issues);
    err
}

/// Wrap a JS-side failure (a thrown callback) so it travels through the core unchanged.
pub fn callback(e: JsValue) -> Error {
    Error::callback(e)
}
