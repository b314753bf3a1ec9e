//! A lease handle as plain data: what a binding keeps between calls instead of a core object,
//! so a dropped handle holds no memory of the core's (see the npm package's memory rule). A
//! snapshot is taken after each call ([`Lease::snapshot`]) and a handle rebuilt from it for the
//! next ([`Lease::restore`]); rebuilding makes no request.
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
        let mut out = Map::new();
        out.insert("key".into(), p.key.clone().into());
        out.insert("holder".into(), p.holder.clone().into());
        out.insert("epoch".into(), p.epoch.into());
        // Whole numbers as integers: they cross JSON without a float's shortest-digits search.
        let whole = |f: f64| if f.fract() == 0.0 && f.abs() < 9e15 { Value::from(f as i64) } else { Value::from(f) };
        out.insert("ttl".into(), whole(p.ttl));
        out.insert("etag".into(), text(&v.etag));
        out.insert("deadline".into(), v.deadline_at.to_rfc3339().into());
        // The same instant as whole JS milliseconds (as a `Date` keeps it), for readers without an
        // RFC 3339 parser at hand.
        out.insert("deadlineMs".into(), whole(v.deadline_at.as_millis_f64().trunc()));
        out.insert("state".into(), v.state.clone());
        out.insert("released".into(), v.released.into());
        out.insert("extra".into(), Value::Object(v.extra.clone()));
        out.insert("meta".into(), Value::String(meta));
        Value::Object(out)
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
            // Fencing still holds for a restored handle.
            let stale = Lease::restore(db.objects(), &snapshot).unwrap();
            again.release().await.unwrap();
            assert!(stale.renew().await.is_err());
        });
    }
}
