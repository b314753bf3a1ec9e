//! Every conversion between JS values and the core's, in one place. Calls cross the boundary as
//! JSON text with named fields (`Args`), results go back as JSON text (`Reply`), with the few
//! values JSON cannot carry (bytes, a callback's raw result, a failure record) beside it.
//!
//! JSON text rather than JS objects read field by field (or serde-wasm-bindgen): the core already
//! has a bounded JSON reader and the canonical writer, and a string crosses in one copy; measured
//! smaller in the wasm than either alternative (docs/development.md, "The binding").

use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::*;

use fencepost::Timestamp;
use fencepost::{Error, Result};

/// Integers a JS number carries exactly.
const EXACT: u64 = 1 << 53;

/// JSON text from JS as a value; `what` names it in messages. A JS number past 2^53 was already
/// rounded by JS, so integers are kept as the float JS meant (so `1e300` stays a number), written
/// as integers while they fit 64 bits (-2^63, which `JSON.stringify` spells as
/// -9223372036854776000, included); beyond, as Python writes a float (`1e+20`).
pub fn js_json(text: &str, what: &str) -> Result<Value> {
    let mut value = fencepost::__private::read_json(text.as_bytes()).map_err(|e| {
        let why =
            if e.kind == fencepost::__private::JsonErrorKind::TooDeep { "is nested too deeply" } else { "is not JSON" };
        Error::invalid(format!("{what} {why}"))
    })?;
    exact_integers(&mut value);
    Ok(value)
}

fn exact_integers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            let wide = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
            let exact = match wide {
                Some(i) if i.unsigned_abs() > u128::from(EXACT) => i as f64,
                Some(_) => return,
                // Spelled past 64 bits by JS, as -2^63 is: an integer if it is one within them
                // (`u64::MAX as f64` is 2^64, excluded).
                None => match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && (i64::MIN as f64..u64::MAX as f64).contains(&f) => f,
                    _ => return,
                },
            };
            *n = if exact < 0.0 { Number::from(exact as i64) } else { Number::from(exact as u64) };
        }
        Value::Array(items) => items.iter_mut().for_each(exact_integers),
        Value::Object(map) => map.values_mut().for_each(exact_integers),
        _ => {}
    }
}

/// A value as JSON text (canonical: what the core writes).
pub fn text(value: &Value) -> String {
    fencepost::__private::to_canonical_text(value)
}

/// A call's named arguments (a JSON object the JS layer built from checked options). Each is read
/// here by name; what a value means (key rules, ttl > 0) is judged by the core.
pub struct Args(Map<String, Value>);

impl Args {
    pub fn parse(text: &str) -> Result<Args> {
        match js_json(text, "the call's arguments")? {
            Value::Object(map) => Ok(Args(map)),
            Value::Null => Ok(Args(Map::new())),
            _ => Err(Error::invalid("the call's arguments must be an object")),
        }
    }

    /// A JSON value given by the caller (a claim's value, a state, `create`), `None` when absent
    /// (JSON null is a value: the JS layer leaves out what was not given).
    /// Taken out, leaving a null behind (each is read once): `BTreeMap::remove` would bring its
    /// node merging and rebalancing into the wasm (about 5 KB) for this one use.
    #[inline(never)]
    pub fn value(&mut self, name: &str) -> Option<Value> {
        self.0.get_mut(name).map(Value::take)
    }

    #[inline(never)]
    pub fn text(&self, name: &str) -> Option<String> {
        self.0.get(name).and_then(Value::as_str).map(str::to_owned)
    }

    /// A string that must be there (a key).
    #[inline(never)]
    pub fn string(&self, name: &str) -> Result<String> {
        self.text(name).ok_or_else(|| Error::invalid(format!("{name} is required")))
    }

    #[inline(never)]
    pub fn number(&self, name: &str) -> Option<f64> {
        self.0.get(name).and_then(Value::as_f64)
    }

    #[inline(never)]
    pub fn flag(&self, name: &str) -> Option<bool> {
        self.0.get(name).and_then(Value::as_bool)
    }

    /// A whole number from 1 to `max` (attempts, shards, a limit: `max` the core's bound), refused
    /// here naming the number as given (clamped into `u32` first, the core's message would name
    /// another number).
    #[inline(never)]
    pub fn count(&self, name: &str, what: &str, max: u32) -> Result<Option<u32>> {
        match self.number(name) {
            None => Ok(None),
            Some(n) if n.fract() == 0.0 && (1.0..=f64::from(max)).contains(&n) => Ok(Some(n as u32)),
            Some(n) => Err(Error::invalid(format!(
                "{what} must be an integer from 1 to {max}, got {}",
                fencepost::__private::number_text(n)
            ))),
        }
    }
}

/// An object of named fields, for a reply (one copy in the wasm for every reply's shape). Built by
/// insertion: `Map::from_iter` sorts first, which brought std's stable sort into the wasm for
/// replies of a few fields (about 3 KB).
#[inline(never)]
pub fn object(fields: Vec<(&str, Value)>) -> Value {
    let mut map = Map::new();
    for (k, v) in fields {
        map.insert(k.to_owned(), v);
    }
    Value::Object(map)
}

/// An object's JSON text from its named fields, written straight out (no map built; the keys in
/// the canonical writer's order, so JS sees the same object either way).
#[inline(never)]
pub fn object_text(mut fields: Vec<(&str, Value)>) -> String {
    fencepost::__private::json_fields_text(&mut fields)
}

/// An object's JSON text from fields whose values are JSON text already, in the order given
/// (the core's writer: code-point order of the keys keeps it canonical).
pub fn texts_object(fields: &[(&str, &str)]) -> String {
    fencepost::__private::json_texts_object(fields)
}

/// A time as JS milliseconds, or null.
pub fn millis(at: Option<Timestamp>) -> Value {
    at.map_or(Value::Null, |t| Value::from(t.as_millis_f64()))
}

/// What a call resolves to: JSON text, and beside it what JSON cannot carry. Crosses as the JSON
/// text alone when there is nothing beside it (the common case: one string, no object built here).
pub struct Reply {
    pub json: String,
    /// Boxed, so that the common reply (text alone) stays two words wherever one is made.
    pub beside: Option<Box<Beside>>,
}

/// What a reply carries beside its JSON text.
#[derive(Default)]
pub struct Beside {
    /// Object bytes (`objects.get`, `waitFor`, `inspect` of bytes).
    pub bytes: Option<Vec<u8>>,
    /// A lease handle's period ended during the call: why (a failure record).
    pub ended: Option<Error>,
    /// The call failed after it learnt something the handle keeps (a lease snapshot in `lease`).
    pub failure: Option<Error>,
    /// A lease handle's snapshot after the call, as JSON text apart from `json`: the handle keeps
    /// the text and sends it back as it is, parsing it only when one of its fields is read.
    pub lease: Option<String>,
    /// The id under which the binding keeps that period's core `Lease` built (`tables::keep`), so
    /// the handle's next call names it instead of sending its snapshot to be parsed again.
    pub kept: Option<u32>,
}

impl Default for Reply {
    fn default() -> Reply {
        Reply { json: "null".into(), beside: None }
    }
}

impl From<Value> for Reply {
    fn from(json: Value) -> Reply {
        Reply { json: text(&json), beside: None }
    }
}

impl Reply {
    /// A reply of an object with these fields ([`object_text`]).
    pub fn object(fields: Vec<(&str, Value)>) -> Reply {
        Reply { json: object_text(fields), beside: None }
    }

    /// JSON text with `beside` next to it.
    pub fn with(json: String, beside: Beside) -> Reply {
        Reply { json, beside: Some(Box::new(beside)) }
    }

    pub fn into_js(self) -> JsValue {
        let json = JsValue::from(self.json);
        let Some(beside) = self.beside else { return json };
        let out = js_sys::Object::new();
        let set = |k: &str, v: JsValue| drop(js_sys::Reflect::set(&out, &k.into(), &v));
        set("json", json);
        let Beside { bytes, ended, failure, lease, kept } = *beside;
        if let Some(bytes) = bytes {
            set("bytes", js_sys::Uint8Array::from(bytes.as_slice()).into());
        }
        if let Some(lease) = lease {
            set("lease", lease.into());
        }
        if let Some(id) = kept {
            set("kept", id.into());
        }
        if let Some(e) = ended {
            set("ended", crate::errors::to_js(e));
        }
        if let Some(e) = failure {
            set("failure", crate::errors::to_js(e));
        }
        out.into()
    }
}
