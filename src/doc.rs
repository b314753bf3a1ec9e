//! doc: a JSON document updated by a compare-and-swap retry loop.

use serde_json::Value;

use crate::base::error::{Error, Result};
use crate::codec::json::{self, checked};
use crate::objects::Objects;
use crate::objects::events::Call;
use crate::objects::transition::Transition;

/// See [`Doc::DEFAULT_MAX_ATTEMPTS`].
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// A document's value and the etag of the version it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DocValue {
    pub value: Value,
    pub etag: String,
}

/// A handle on one document key. Holds no state besides the key; cheap to create.
#[derive(Clone)]
pub struct Doc {
    objects: Objects,
    key: String,
}

impl Doc {
    /// A handle on `key` (checked here; no request): see `Fencepost::doc`.
    pub(crate) fn new(objects: &Objects, key: &str) -> Result<Doc> {
        objects.check_key(key)?;
        Ok(Doc { objects: objects.clone(), key: key.to_owned() })
    }

    /// The attempts [`Doc::update`] is usually given (what the JS API defaults to).
    pub const DEFAULT_MAX_ATTEMPTS: u32 = DEFAULT_MAX_ATTEMPTS;

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same document, for calls that obey `cancel` (see [`Objects`]' "Cancellation").
    pub fn with_cancel(&self, cancel: &crate::base::cancel::Cancel) -> Doc {
        Doc { objects: self.objects.with_cancel(cancel), key: self.key.clone() }
    }

    /// The current value, or `None`. Requests: 1.
    pub async fn get(&self) -> Result<Option<DocValue>> {
        let (objects, call) = self.objects.call("doc.get");
        Call::end(call, &self.objects, &self.key, read(&objects, &self.key).await)
    }

    /// Read, apply `f` (to the value, or to `create` when absent), write back with CAS (or
    /// put-if-absent); on conflict start over, at most `max_attempts` times. Returns the value
    /// written. Requests: 2 per attempt.
    pub async fn update(&self, f: &mut Transition<'_>, create: Option<Value>, max_attempts: u32) -> Result<Value> {
        let (objects, call) = self.objects.call("doc.update");
        let updated = update(&objects, &self.key, f, create, max_attempts).await;
        Call::end(call, &self.objects, &self.key, updated)
    }

    /// Delete the document; deleting a missing one is a no-op. Requests: 1.
    pub async fn delete(&self) -> Result<()> {
        let (objects, call) = self.objects.call("doc.delete");
        Call::end(call, &self.objects, &self.key, objects.remove(&self.key).await)
    }
}

async fn read(objects: &Objects, key: &str) -> Result<Option<DocValue>> {
    let Some(obj) = objects.read(key).await? else { return Ok(None) };
    let value = json::parse(&obj.body).map_err(|m| Error::corrupt(key, m))?;
    Ok(Some(DocValue { value, etag: obj.etag }))
}

async fn update(
    objects: &Objects,
    key: &str,
    f: &mut Transition<'_>,
    create: Option<Value>,
    max_attempts: u32,
) -> Result<Value> {
    if max_attempts == 0 || max_attempts > 1000 {
        return Err(Error::invalid("maxAttempts must be between 1 and 1000"));
    }
    let create = create.map(checked).transpose()?;
    for _ in 0..max_attempts {
        let current = objects.read(key).await?;
        let written = match current {
            Some(obj) => {
                let value = json::parse(&obj.body).map_err(|m| Error::corrupt(key, m))?;
                let next = checked(f(value).await?)?;
                objects.replace(key, &json::to_canonical(&next), &obj.etag, &obj.meta).await?.map(|_| next)
            }
            None => {
                let Some(initial) = create.clone() else {
                    return Err(Error::NotFound { key: key.to_owned() });
                };
                let next = checked(f(initial).await?)?;
                objects.create(key, &json::to_canonical(&next)).await?.map(|_| next)
            }
        };
        if let Some(value) = written {
            return Ok(value);
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: max_attempts })
}
