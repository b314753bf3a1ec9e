//! Values cross the boundary as JSON text, in both directions: the JS layer (`pkg/json.js`) turns
//! JS values into JSON the `JSON.stringify` way and refuses what it would mangle; here the text is
//! parsed into the core's `Value`, and values go back as canonical JSON for `JSON.parse`. Neither
//! side walks the other's object graph, so no JS object is touched from Rust.

use serde_json::{Number, Value};

use crate::base::error::{Error, Result};

/// Integers beyond 2^53 in text from JS are the digits JS prints for a double (`-(2 ** 60)` prints
/// as `-1152921504606847000`): written as the double's exact integer value, as Python and CairnDB
/// read it (`-1152921504606846976`).
const EXACT: u64 = 1 << 53;

/// JSON text from the JS layer as a value; `what` names it in the (unexpected) error.
pub fn js_json(text: &str, what: &str) -> Result<Value> {
    let mut value = crate::codec::json::read(text.as_bytes()).map_err(|e| {
        let why = if e.kind == crate::codec::json::ErrorKind::TooDeep { "is nested too deeply" } else { "is not JSON" };
        Error::invalid(format!("{what} {why}"))
    })?;
    exact_integers(&mut value);
    Ok(value)
}

fn exact_integers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            let wide = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
            if let Some(i) = wide.filter(|i| i.unsigned_abs() > u128::from(EXACT)) {
                let exact = i as f64;
                *n = if exact < 0.0 { Number::from(exact as i64) } else { Number::from(exact as u64) };
            }
        }
        Value::Array(items) => items.iter_mut().for_each(exact_integers),
        Value::Object(map) => map.values_mut().for_each(exact_integers),
        _ => {}
    }
}

/// A value as JSON text for `JSON.parse` (canonical JSON: always valid, and serde_json's
/// serializer is not compiled in).
pub fn text(value: &Value) -> String {
    String::from_utf8(crate::codec::json::to_canonical(value)).unwrap_or_else(|_| "null".into())
}
