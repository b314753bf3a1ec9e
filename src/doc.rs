//! doc: a JSON document updated by a compare-and-swap retry loop. A handle remembers the version
//! it last read or wrote, so an update by a writer nobody raced costs one request: a PUT guarded by
//! that version's etag (a refused guard reads and retries as before).

use crate::base::mutation::{self, Mutation};
use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use crate::base::error::{Error, Result};
use crate::codec::json::{self, checked};
use crate::objects::Objects;
use crate::objects::Written;
use crate::objects::events::Call;
use crate::objects::transition::Transition;
use crate::store::WriteMeta;

/// See [`Doc::DEFAULT_MAX_ATTEMPTS`].
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// A document's value and the etag of the version it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DocValue {
    pub value: Value,
    pub etag: String,
}

/// A handle on one document key: the key and the version it last read or wrote (its clones
/// share it); cheap to create.
#[derive(Clone)]
pub struct Doc {
    objects: Objects,
    key: String,
    seen: Seen,
}

/// What a handle last read or wrote: the value, its etag and provenance. Empty until then, and
/// after a write whose etag is unknown (replaced since) or a failure.
pub(crate) type Seen = Rc<RefCell<Option<Version>>>;

/// A version of the document as a handle saw it.
pub(crate) struct Version {
    value: Value,
    etag: String,
    meta: WriteMeta,
}

impl Doc {
    /// A handle on `key` (checked here; no request): see `Fencepost::doc`.
    pub(crate) fn new(objects: &Objects, key: &str) -> Result<Doc> {
        objects.check_key(key)?;
        Ok(Doc { objects: objects.clone(), key: key.to_owned(), seen: Seen::default() })
    }

    /// Forget the version this handle remembers: the next [`Doc::update`] reads first.
    pub fn forget(&self) {
        self.seen.replace(None);
    }

    /// The attempts [`Doc::update`] is usually given (what the JS API defaults to).
    pub const DEFAULT_MAX_ATTEMPTS: u32 = DEFAULT_MAX_ATTEMPTS;

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same document, for calls that obey `cancel` (see [`Objects`]' "Cancellation").
    pub fn with_cancel(&self, cancel: &crate::base::cancel::Cancel) -> Doc {
        Doc { objects: self.objects.with_cancel(cancel), key: self.key.clone(), seen: self.seen.clone() }
    }

    /// The current value, or `None`. Requests: 1.
    pub async fn get(&self) -> Result<Option<DocValue>> {
        let (objects, call) = self.objects.call("doc.get");
        Call::end(call, &self.objects, &self.key, read(&objects, &self.key, &self.seen).await)
    }

    /// Read, apply `f` (to the value, or to `create` when absent), write back with CAS (or
    /// put-if-absent); on conflict start over, at most `max_attempts` times. Returns the value
    /// written. When the handle remembers a version (it read or wrote one), `f` is first applied to
    /// that and the write guarded by its etag: 1 request when nobody else wrote since; a refused
    /// guard costs that one PUT, then the loop runs as described. Requests: 2 per attempt.
    pub async fn update(&self, f: &mut Transition<'_>, create: Option<Value>, max_attempts: u32) -> Result<Value> {
        let (objects, call) = self.objects.call("doc.update");
        let updated = update(&objects, &self.key, &self.seen, f, create, max_attempts).await;
        Call::end(call, &self.objects, &self.key, updated)
    }

    /// Delete the document; deleting a missing one is a no-op. Requests: 1.
    pub async fn delete(&self) -> Result<()> {
        let (objects, call) = self.objects.call("doc.delete");
        self.forget();
        Call::end(call, &self.objects, &self.key, objects.remove(&self.key).await)
    }
}

pub(crate) async fn read(objects: &Objects, key: &str, seen: &Seen) -> Result<Option<DocValue>> {
    seen.replace(None);
    let Some(obj) = objects.read(key).await? else { return Ok(None) };
    let value = json::parse(&obj.body).map_err(|m| Error::corrupt(key, m))?;
    seen.replace(Some(Version { value: value.clone(), etag: obj.etag.clone(), meta: obj.meta }));
    Ok(Some(DocValue { value, etag: obj.etag }))
}

/// Remember a version this handle wrote (unless its etag is unknown: then read first next time).
fn remember(seen: &Seen, written: Written, value: &Value) {
    let version = written.etag.map(|etag| Version { value: value.clone(), etag, meta: written.meta });
    seen.replace(version);
}

/// The update loop of [`Doc::update`] (and of the counter's shards).
pub(crate) async fn update(
    objects: &Objects,
    key: &str,
    seen: &Seen,
    f: &mut Transition<'_>,
    create: Option<Value>,
    max_attempts: u32,
) -> Result<Value> {
    if max_attempts == 0 || max_attempts > 1000 {
        return Err(Error::invalid("maxAttempts must be between 1 and 1000"));
    }
    let create = create.map(checked).transpose()?;
    // From the version this handle last saw: one guarded PUT when nobody else wrote since.
    // (Taken, so a failure leaves nothing stale behind.)
    if let Some(last) = seen.take() {
        let next = checked(f(last.value).await?)?;
        let body = json::to_canonical(&next);
        let written = if mutation::on(Mutation::TrustRememberedVersion) {
            objects.overwrite(key, &body, &last.meta).await?
        } else {
            objects.replace(key, &body, &last.etag, &last.meta).await?
        };
        if let Some(written) = written {
            remember(seen, written, &next);
            return Ok(next);
        }
    }
    for _ in 0..max_attempts {
        let current = objects.read(key).await?;
        let (next, written) = match current {
            Some(obj) => {
                let value = json::parse(&obj.body).map_err(|m| Error::corrupt(key, m))?;
                let next = checked(f(value).await?)?;
                let written = objects.replace(key, &json::to_canonical(&next), &obj.etag, &obj.meta).await?;
                (next, written)
            }
            None => {
                let Some(initial) = create.clone() else {
                    return Err(Error::NotFound { key: key.to_owned() });
                };
                let next = checked(f(initial).await?)?;
                let written = objects.create(key, &json::to_canonical(&next)).await?;
                (next, written)
            }
        };
        if let Some(written) = written {
            remember(seen, written, &next);
            return Ok(next);
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: max_attempts })
}
