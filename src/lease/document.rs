//! The stored lease document `{epoch, holder, deadline_at, state}`: strict parsing (never a
//! panic, never a silent repair) and canonical encoding that keeps unknown fields.

use serde_json::{Map, Value};

use crate::base::error::{Error, Result};
use crate::codec::json;
use crate::time::Timestamp;

/// Epochs stay exact in every JSON reader, JS's included (2^53 - 1).
pub const MAX_EPOCH: u64 = 9_007_199_254_740_991;

/// The stored lease document.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseDoc {
    pub epoch: u64,
    pub holder: Option<String>,
    /// `None` only for a document without a holder (some writers release with a null deadline);
    /// written back as null, so a rewrite never invents a time.
    pub deadline_at: Option<Timestamp>,
    pub state: Value,
    /// Fields fencepost does not know (another tool's, a later version's): carried through every
    /// rewrite unchanged, so sharing a bucket never loses them.
    pub extra: Map<String, Value>,
}

/// A lease document as an operator needs it, judged at the time it was read (what `inspect`
/// shows, and what `break_lease` reports it broke).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseView {
    pub epoch: u64,
    /// A credential: show it to operators only (the CLI prints a fingerprint unless asked).
    pub holder: Option<String>,
    /// `None` for a released document written with a null deadline.
    pub deadline_at: Option<Timestamp>,
    /// Released (no holder) or past its deadline (inclusive): anyone may acquire it now.
    pub expired: bool,
    /// No holder: released, or broken.
    pub released: bool,
    /// Seconds until the deadline, negative once past (`-inf` without a deadline).
    pub expires_in: f64,
    pub state: Value,
    /// The whole document as stored (unknown fields included).
    pub document: Value,
}

impl LeaseDoc {
    /// Parse stored bytes strictly: anything but the expected shape is `Corrupt`, never a panic
    /// and never silently repaired (a repair would overwrite someone's data).
    pub fn parse(key: &str, bytes: &[u8]) -> Result<Self> {
        Self::from_value(key, Self::json(key, bytes)?)
    }

    /// The stored bytes as JSON, failing as [`LeaseDoc::parse`] does (for a caller that keeps the
    /// value as well as the document).
    pub(crate) fn json(key: &str, bytes: &[u8]) -> Result<Value> {
        json::parse(bytes).map_err(|m| Error::corrupt(key, format!("not a lease document: {m}")))
    }

    /// The document judged at `now`; `document` is the value it was parsed from.
    pub(crate) fn view(self, document: Value, now: Timestamp) -> LeaseView {
        LeaseView {
            epoch: self.epoch,
            expired: self.is_expired(now),
            released: self.holder.is_none(),
            expires_in: self.deadline_at.map_or(f64::NEG_INFINITY, |d| now.secs_until(d)),
            holder: self.holder,
            deadline_at: self.deadline_at,
            state: self.state,
            document,
        }
    }

    /// The same, from a value already parsed (an operator's read keeps the value too).
    pub fn from_value(key: &str, value: Value) -> Result<Self> {
        let bad = |m: &str| Error::corrupt(key, format!("not a lease document: {m}"));
        let Value::Object(map) = value else { return Err(bad("not a JSON object")) };
        let epoch = match map.get("epoch") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64().filter(|f| f.fract() == 0.0 && (0.0..=MAX_EPOCH as f64).contains(f)).map(|f| f as u64)
                })
                .filter(|e| *e <= MAX_EPOCH)
                .ok_or_else(|| bad("epoch is not an integer from 0 to 2^53-1"))?,
            _ => return Err(bad("epoch is missing or not a number")),
        };
        let holder = match map.get("holder") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) => None,
            _ => return Err(bad("holder is missing or not a string or null")),
        };
        let deadline_at = match map.get("deadline_at") {
            Some(Value::String(s)) => Some(
                Timestamp::parse_rfc3339(s)
                    .filter(|t| t.is_on_wire())
                    .ok_or_else(|| bad("deadline_at is not an RFC 3339 timestamp in the years 1-9999"))?,
            ),
            // A null deadline can only mean "not held".
            Some(Value::Null) if holder.is_none() => None,
            _ => return Err(bad("deadline_at is missing or not a timestamp")),
        };
        // The state and the unknown fields are moved out (not removed one by one: a map's removal
        // code is kilobytes of wasm, and this is its only user).
        let mut state = Value::Null;
        let mut extra = Map::new();
        for (name, value) in map {
            match name.as_str() {
                "state" => state = value,
                "epoch" | "holder" | "deadline_at" => {}
                _ => {
                    extra.insert(name, value);
                }
            }
        }
        Ok(LeaseDoc { epoch, holder, deadline_at, state, extra })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut map = self.extra.clone();
        map.insert("epoch".into(), Value::from(self.epoch));
        map.insert("holder".into(), self.holder.clone().map_or(Value::Null, Value::String));
        map.insert("deadline_at".into(), self.deadline_at.map_or(Value::Null, |t| Value::String(t.to_rfc3339())));
        map.insert("state".into(), self.state.clone());
        json::to_canonical(&Value::Object(map))
    }

    /// The deadline of a held lease (`parse` refuses a holder without one); the earliest time for
    /// an unheld document without a deadline.
    pub(crate) fn deadline(&self) -> Timestamp {
        self.deadline_at.unwrap_or(Timestamp::WIRE_MIN)
    }

    /// Expired means released (no holder), or a deadline at or before now: inclusive, so a lease
    /// whose deadline is exactly now may be taken (docs/semantics.md).
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.holder.is_none() || self.deadline_at.is_none_or(|d| d <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &[u8] =
        br#"{"deadline_at":"2026-01-01T00:00:30.000000Z","epoch":7,"holder":"h","state":{"a":[1,"x"]}}"#;

    #[test]
    fn parses_and_round_trips() {
        let doc = LeaseDoc::parse("k", VALID).unwrap();
        assert_eq!((doc.epoch, doc.holder.as_deref()), (7, Some("h")));
        assert_eq!(doc.encode(), VALID);
        // CairnDB/Python spellings: `+00:00` offsets, integral floats for the epoch.
        let py = br#"{"deadline_at": "2026-01-01T00:00:30+00:00", "epoch": 7.0, "holder": null, "state": null}"#;
        let doc = LeaseDoc::parse("k", py).unwrap();
        assert!(doc.holder.is_none() && doc.epoch == 7);
        // Fields of other tools survive a rewrite.
        let more =
            br#"{"deadline_at":"2026-01-01T00:00:30.000000Z","epoch":7,"holder":"h","owner_host":"py-1","state":null}"#;
        assert_eq!(LeaseDoc::parse("k", more).unwrap().encode(), more);
    }

    /// No stored bytes can panic the parser: random bytes, and every single-byte mutation and
    /// truncation of a valid document, give a value or a `Corrupt` error.
    #[test]
    fn never_panics_on_stored_bytes() {
        let mut next = crate::test_support::xorshift(0x9E37_79B9_7F4A_7C15u64);
        for _ in 0..2000 {
            let len = (next() % 64) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if let Err(e) = LeaseDoc::parse("k", &bytes) {
                assert!(matches!(e, Error::Corrupt { .. }));
            }
        }
        for i in 0..VALID.len() {
            let _ = LeaseDoc::parse("k", &VALID[..i]);
            for b in [b'"', b'0', b'-', b'}', b'\\', 0xff, b'e', b'9'] {
                let mut m = VALID.to_vec();
                m[i] = b;
                let _ = LeaseDoc::parse("k", &m);
            }
        }
        for weird in [
            r#"{"deadline_at":"2026-01-01T00:00:30Z","epoch":1e400,"holder":"h"}"#,
            r#"{"deadline_at":"9999-12-31T23:59:60.999999-23:59","epoch":18446744073709551615,"holder":"h"}"#,
        ] {
            let _ = LeaseDoc::parse("k", weird.as_bytes());
        }
    }
}
