//! Conversions between JS values and Rust values, all in one place.
//!
//! JS → JSON follows `JSON.stringify`'s data model but refuses what it would silently mangle:
//! BigInt, functions, symbols, NaN/±Infinity, cycles, Maps/Sets and other non-plain objects are an
//! `InvalidArgument` (nothing is written). `toJSON` is honoured (so a `Date` becomes its ISO string),
//! and `undefined` object properties are skipped, as `JSON.stringify` does.

use js_sys::{Array, Object, Reflect};
use serde_json::{Map, Number, Value};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::{Error, Result};

const MAX_DEPTH: usize = 512;
/// Values (array items and object members included) in one converted value: far more than any
/// coordination document needs, and a bound on what a hostile `length` can make us allocate.
const MAX_NODES: usize = 1_000_000;

/// A JS value as JSON; `what` names it in error messages ("value", "stateFn's result"…).
pub fn js_to_value(value: &JsValue, what: &str) -> Result<Value> {
    Walk { what, ancestors: Vec::new(), path: Vec::new(), nodes: 0 }.convert(value)
}

/// Where in the value the walk is; the path is only formatted when there is an error to report.
enum Step {
    Index(usize),
    Key(String),
}

struct Walk<'a> {
    what: &'a str,
    ancestors: Vec<JsValue>,
    path: Vec<Step>,
    nodes: usize,
}

impl Walk<'_> {
    fn bad(&self, m: &str) -> Error {
        let mut at = self.what.to_owned();
        for step in &self.path {
            match step {
                Step::Index(i) => at.push_str(&format!("[{i}]")),
                Step::Key(k) => at.push_str(&format!(".{k}")),
            }
        }
        Error::invalid(format!("{at} {m}"))
    }

    fn convert(&mut self, v: &JsValue) -> Result<Value> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(self.bad(&format!("has more than {MAX_NODES} values")));
        }
        if v.is_null() {
            return Ok(Value::Null);
        }
        if v.is_undefined() {
            return Err(self.bad("is undefined, which JSON cannot represent"));
        }
        if let Some(b) = v.as_bool() {
            return Ok(Value::Bool(b));
        }
        if let Some(f) = v.as_f64() {
            return number(f)
                .ok_or_else(|| self.bad(&format!("is {}, which JSON cannot represent", crate::json::number_text(f))));
        }
        if let Some(s) = js_str(v) {
            return s.map(Value::String).map_err(|m| self.bad(&m));
        }
        if v.is_bigint() {
            return Err(self.bad("is a BigInt, which JSON cannot represent (convert it to a string or number)"));
        }
        if v.is_function() || v.is_symbol() {
            return Err(self.bad("is a function or symbol, which JSON cannot represent"));
        }
        if !v.is_object() {
            return Err(self.bad("is not a JSON value"));
        }
        if self.ancestors.len() >= MAX_DEPTH {
            return Err(self.bad("is nested too deeply"));
        }
        if self.ancestors.iter().any(|a| Object::is(a, v)) {
            return Err(self.bad("contains a cycle"));
        }
        self.ancestors.push(v.clone());
        let result = self.convert_object(v);
        self.ancestors.pop();
        result
    }

    fn convert_object(&mut self, v: &JsValue) -> Result<Value> {
        // toJSON first (Date and user classes that define it), as JSON.stringify does.
        if let Ok(to_json) = Reflect::get(v, &JsValue::from_str("toJSON")) {
            if let Some(f) = to_json.dyn_ref::<js_sys::Function>() {
                let out = f.call0(v).map_err(|_| self.bad("has a toJSON() that threw"))?;
                return self.convert(&out);
            }
        }
        if Array::is_array(v) {
            let arr: &Array = v.unchecked_ref();
            // Never pre-size from `length`: it is the caller's to set (2^32 - 1 is legal).
            let mut items = Vec::new();
            for (i, item) in arr.iter().enumerate() {
                // JSON.stringify turns holes and undefined into null inside arrays.
                items.push(if item.is_undefined() {
                    self.nodes += 1;
                    if self.nodes > MAX_NODES {
                        return Err(self.bad(&format!("has more than {MAX_NODES} values")));
                    }
                    Value::Null
                } else {
                    self.path.push(Step::Index(i));
                    let child = self.convert(&item);
                    self.path.pop();
                    child?
                });
            }
            return Ok(Value::Array(items));
        }
        let proto = Object::get_prototype_of(v);
        let plain = proto.is_null() || Object::is(&proto, &Object::get_prototype_of(&Object::new()));
        if !plain {
            let name = Reflect::get(v, &"constructor".into())
                .ok()
                .and_then(|c| Reflect::get(&c, &"name".into()).ok())
                .and_then(|n| n.as_string())
                .unwrap_or_else(|| "object".into());
            return Err(self.bad(&format!("is a {name}, not a plain object; JSON would lose it")));
        }
        let mut map = Map::new();
        for key in Object::keys(v.unchecked_ref::<Object>()).iter() {
            let k = js_str(&key)
                .unwrap_or_else(|| Ok(String::new()))
                .map_err(|m| self.bad(&format!("has a key that {m}")))?;
            let item = Reflect::get(v, &key).map_err(|_| self.bad(&format!("property {k:?} could not be read")))?;
            if item.is_undefined() {
                continue;
            }
            self.path.push(Step::Key(k));
            let child = self.convert(&item);
            let Some(Step::Key(k)) = self.path.pop() else { continue };
            map.insert(k, child?);
        }
        Ok(Value::Object(map))
    }
}

/// Integral numbers are written as integers, as `JSON.stringify` and Python write them (every
/// integral f64 below 2^64 is exact in i64/u64); other numbers as floats.
fn number(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 {
        // -0 becomes 0, as JSON.stringify does.
        const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
        if (-TWO_POW_63..TWO_POW_63).contains(&f) {
            return Some(Value::Number(Number::from(f as i64)));
        }
        if (0.0..2.0 * TWO_POW_63).contains(&f) {
            return Some(Value::Number(Number::from(f as u64)));
        }
    }
    Number::from_f64(f).map(Value::Number)
}

/// A JS string as a Rust string: `None` if `v` is not a string, an error for lone surrogates
/// (Rust strings are Unicode; converting would silently turn them into U+FFFD, so two different
/// keys could become one).
fn js_str(v: &JsValue) -> Option<std::result::Result<String, String>> {
    let s = v.dyn_ref::<js_sys::JsString>()?;
    if !s.is_valid_utf16() {
        return Some(Err("contains a lone surrogate (not valid Unicode)".into()));
    }
    Some(s.as_string().ok_or_else(|| "is not a string".into()))
}

/// JSON → a fresh JS value.
pub fn value_to_js(value: &Value) -> JsValue {
    // Canonical JSON is always valid JSON, so JSON.parse cannot fail on it (and serde_json's
    // serializer is not compiled in).
    let text = crate::json::to_canonical(value);
    js_sys::JSON::parse(std::str::from_utf8(&text).unwrap_or("null")).unwrap_or(JsValue::NULL)
}
