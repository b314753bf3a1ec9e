//! A lease handle as plain data: what a binding keeps between calls instead of a core object,
//! so a dropped handle holds no memory of the core's (see the npm package's memory rule). A
//! snapshot is taken after each call ([`Lease::snapshot`]), and a handle is rebuilt from it
//! ([`Lease::restore`], no request) for a call the binding has not kept the period built for.
//!
//! The snapshot is a JSON object: `key`, `holder`, `epoch`, `ttl`, `etag` (null when unknown),
//! `deadline` (RFC 3339; `deadlineMs` beside it, read by nobody here), `state`, `released`, `extra` (fields of the document fencepost does not
//! know), `meta` (the write provenance the next guarded write chains from: its token, origin and
//! history in one string). The holder is a credential: a snapshot is the handle itself, not for logs.

use std::marker::PhantomData;

use serde_json::{Map, Value};

use super::{Lease, Period, View};
use crate::base::cancel::Cancel;
use crate::base::error::{Error, Result};
use crate::base::sync::{Lock, Shared};
use crate::objects::Objects;
use crate::store::WriteMeta;
use crate::time::Timestamp;

impl<T> Lease<T> {
    /// The handle as plain data (see the module's doc).
    pub fn snapshot(&self) -> Value {
        // Built by insertion: `Map::from_iter` sorts first, which brings std's stable sort along.
        let mut out = Map::new();
        for (name, value) in self.snapshot_fields() {
            out.insert(name.to_owned(), value);
        }
        Value::Object(out)
    }

    /// [`Lease::snapshot`] as its canonical JSON text, written straight from its fields (no map
    /// built: what a binding hands over after every call through a lease handle).
    pub fn snapshot_text(&self) -> String {
        crate::codec::json::fields_text(&mut self.snapshot_fields())
    }

    fn snapshot_fields(&self) -> Vec<(&'static str, Value)> {
        let p = &self.period;
        let v = p.view.lock();
        let text = |s: &Option<String>| s.clone().map_or(Value::Null, Value::String);
        // The provenance as one string: "<token> <origin> <history…>", `-` for an absent one
        // (tokens are URL-safe, never a space or a lone `-`). One string instead of an array of up
        // to 34 makes a snapshot's round trip through JSON several times cheaper.
        let or_dash = |s: &Option<String>| s.as_deref().unwrap_or("-").to_owned();
        let mut meta = or_dash(&v.meta.token) + " " + &or_dash(&v.meta.origin);
        if !v.meta.history.is_empty() {
            meta.push(' ');
            meta.push_str(&v.meta.history);
        }
        // Whole numbers as integers: they cross JSON without a float's shortest-digits search.
        let whole = |f: f64| if f.fract() == 0.0 && f.abs() < 9e15 { Value::from(f as i64) } else { Value::from(f) };
        vec![
            ("key", p.key.clone().into()),
            ("holder", p.holder.clone().into()),
            ("epoch", p.epoch.into()),
            ("ttl", whole(p.ttl)),
            ("etag", text(&v.etag)),
            ("deadline", v.deadline_at.to_rfc3339().into()),
            // The same instant as whole JS milliseconds (as a `Date` keeps it), for readers without
            // an RFC 3339 parser at hand.
            ("deadlineMs", whole(v.deadline_at.as_millis_f64().trunc())),
            ("state", v.state.clone()),
            ("released", v.released.into()),
            ("extra", Value::Object(v.extra.clone())),
            ("meta", Value::String(meta)),
        ]
    }
}

impl Lease {
    /// A handle rebuilt from [`Lease::snapshot`] on `objects` (no request). Its period is live:
    /// a binding does not hand back the snapshot of a period it knows is over.
    pub fn restore(objects: &Objects, snapshot: &Value) -> Result<Lease> {
        let bad = || Error::invalid("not a lease handle's snapshot");
        let field = |name: &str| snapshot.get(name).ok_or_else(bad);
        let text = |v: &Value| -> Result<Option<String>> {
            match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                _ => Err(bad()),
            }
        };
        let string = |name: &str| text(field(name)?)?.ok_or_else(bad);
        let provenance = string("meta")?;
        let mut parts = provenance.splitn(3, ' ');
        let given = |t: Option<&str>| t.filter(|t| *t != "-").map(str::to_owned);
        let (token, origin) = (given(parts.next()), given(parts.next()));
        // The history as the snapshot carries it (whoever reads it skips empty tokens).
        let meta = WriteMeta { token, origin, history: parts.next().unwrap_or_default().to_owned() };
        let deadline_at = Timestamp::parse_rfc3339(&string("deadline")?).ok_or_else(bad)?;
        let Value::Object(extra) = field("extra")?.clone() else { return Err(bad()) };
        let view = View {
            etag: text(field("etag")?)?,
            extra,
            meta,
            deadline_at,
            state: field("state")?.clone(),
            released: field("released")?.as_bool().ok_or_else(bad)?,
        };
        let period = Period {
            key: string("key")?,
            holder: string("holder")?,
            epoch: field("epoch")?.as_u64().ok_or_else(bad)?,
            ttl: field("ttl")?.as_f64().ok_or_else(bad)?,
            view: Lock::new(view),
            ended: Cancel::new(),
        };
        objects.check_key(&period.key)?;
        Ok(Lease { objects: objects.detached(), period: Shared::new(period), state: PhantomData })
    }
}

#[cfg(test)]
mod tests {
    use crate::store::MemoryStore;
    use crate::{Fencepost, Lease, LeaseOptions, Options};

    #[test]
    fn a_restored_handle_writes_on_from_its_snapshot_in_one_request() {
        futures::executor::block_on(async {
            let store = crate::store::CountingStore::new(crate::Shared::new(MemoryStore::new()));
            let store = crate::Shared::new(store);
            let db = Fencepost::from_shared(store.clone(), Options::default()).unwrap();
            let lease = db.lease("jobs/a", LeaseOptions::new(30.0)).await.unwrap().unwrap();
            lease.write(&serde_json::json!({"step": 1})).await.unwrap();
            let snapshot = lease.snapshot();
            drop(lease);
            store.take_counts();
            let again = Lease::restore(db.objects(), &snapshot).unwrap();
            again.write(&serde_json::json!({"step": 2})).await.unwrap();
            assert_eq!(store.take_counts().put, 1, "one guarded PUT, no read");
            assert_eq!(again.epoch(), 1);
            // The text form is the canonical text of the value form.
            assert_eq!(again.snapshot_text().into_bytes(), crate::codec::json::to_canonical(&again.snapshot()));
            // Fencing still holds for a restored handle.
            let stale = Lease::restore(db.objects(), &snapshot).unwrap();
            again.release().await.unwrap();
            assert!(stale.renew().await.is_err());
        });
    }
}
