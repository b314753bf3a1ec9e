//! doc: a JSON document updated by a compare-and-swap retry loop. A handle remembers the version
//! it last read or wrote, so an update by a writer nobody raced costs one request: a PUT guarded by
//! that version's etag (a refused guard reads and retries as before).

use std::future::Future;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::base::mutation::{self, Mutation};
use crate::base::sync::MaybeSend;

use crate::base::error::{Error, Result};
use crate::codec::json::{self, checked};
use crate::objects::Objects;
use crate::objects::Written;
use crate::objects::events::Call;
use crate::objects::transition::{Transition, settle};
use crate::objects::versions::Version;

/// See [`Doc::DEFAULT_MAX_ATTEMPTS`].
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 10;
/// The most attempts an update may be given.
pub const MAX_UPDATE_ATTEMPTS: u32 = 1000;

/// A document's value (as `T`: any `serde` type, `serde_json::Value` by default) and the etag of
/// the version it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DocValue<T = Value> {
    pub value: T,
    pub etag: String,
}

/// How [`Doc::update_with`] runs: `UpdateOptions { create: Some(0), ..Default::default() }`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateOptions<T = Value> {
    /// The value the transition starts from when the document is absent (`None`: an absent
    /// document is [`Error::NotFound`]).
    pub create: Option<T>,
    /// Attempts before [`Error::Conflict`] (1 to 1000; default 10): each applies `f` once and writes
    /// (the first from the version the `Fencepost` remembers of the key, when it does).
    pub max_attempts: u32,
    /// Read first even when the handle remembers a version (someone else surely wrote since).
    pub fresh: bool,
}

impl<T> Default for UpdateOptions<T> {
    fn default() -> Self {
        UpdateOptions { create: None, max_attempts: DEFAULT_MAX_ATTEMPTS, fresh: false }
    }
}

/// A handle on one document key, its value a `T` (any `serde` type; `serde_json::Value` by
/// default): the key and the version it last read or wrote (its clones share it); cheap to create.
///
/// ```
/// use fencepost::store::MemoryStore;
/// use fencepost::{Doc, Fencepost, Options};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, Default, PartialEq)]
/// struct Stats { visits: u64, last: Option<String> }
///
/// # futures::executor::block_on(async {
/// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
/// let stats: Doc<Stats> = db.doc("stats/home")?;
/// // Read, apply, compare-and-swap; start from the default when absent; retry on conflict.
/// for page in ["/", "/about"] {
///     stats.update_or_insert(Stats::default(), |mut s| {
///         s.visits += 1;
///         s.last = Some(page.into());
///         Ok(s)
///     }).await?;
/// }
/// let seen = stats.get().await?.expect("written");
/// assert_eq!(seen.value, Stats { visits: 2, last: Some("/about".into()) });
/// # Ok::<(), fencepost::Error>(())
/// # }).unwrap();
/// ```
pub struct Doc<T = Value> {
    objects: Objects,
    key: String,
    value: PhantomData<fn() -> T>,
}

impl<T> Clone for Doc<T> {
    fn clone(&self) -> Self {
        Doc { objects: self.objects.clone(), key: self.key.clone(), value: PhantomData }
    }
}

impl<T> std::fmt::Debug for Doc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doc").field("key", &self.key).finish_non_exhaustive()
    }
}

impl<T> Doc<T> {
    /// A handle on `key` (checked here; no request): see `Fencepost::doc`.
    pub(crate) fn new(objects: &Objects, key: &str) -> Result<Doc<T>> {
        objects.check_key(key)?;
        Ok(Doc { objects: objects.clone(), key: key.to_owned(), value: PhantomData })
    }

    /// Forget the version remembered of this key (by this `Fencepost`, for every handle on the
    /// key): the next update reads first.
    pub fn forget(&self) {
        self.objects.versions().forget(&self.key);
    }

    /// The attempts an update is given unless told otherwise (what the JS API defaults to).
    pub const DEFAULT_MAX_ATTEMPTS: u32 = DEFAULT_MAX_ATTEMPTS;

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same document, for calls that obey `cancel` (see [`Objects`]' "Cancellation").
    pub fn with_cancel(&self, cancel: &crate::base::cancel::Cancel) -> Doc<T> {
        Doc { objects: self.objects.with_cancel(cancel), ..self.clone() }
    }

    /// Delete the document; deleting a missing one is a no-op. Requests: 1.
    pub async fn delete(&self) -> Result<()> {
        let (objects, call) = self.objects.call("doc.delete");
        self.forget();
        Call::end(call, &self.objects, &self.key, objects.remove(&self.key).await)
    }

    /// [`Doc::update_with`] of a JSON transition, the form the bindings call.
    #[doc(hidden)]
    pub async fn update_value(
        &self,
        f: &mut Transition<'_>,
        create: Option<Value>,
        max_attempts: u32,
    ) -> Result<Value> {
        let (objects, call) = self.objects.call("doc.update");
        let updated = update(&objects, &self.key, f, create, max_attempts).await;
        Call::end(call, &self.objects, &self.key, updated)
    }

    /// [`Doc::get`] as JSON, the form the bindings call.
    #[doc(hidden)]
    pub async fn get_value(&self) -> Result<Option<DocValue>> {
        let (objects, call) = self.objects.call("doc.get");
        Call::end(call, &self.objects, &self.key, read(&objects, &self.key).await)
    }
}

impl<T: Serialize + DeserializeOwned + MaybeSend + 'static> Doc<T> {
    /// The current value, or `None`. A stored value that is not a `T` is [`Error::Corrupt`]
    /// (naming the key and serde's error). Requests: 1.
    pub async fn get(&self) -> Result<Option<DocValue<T>>> {
        let Some(DocValue { value, etag }) = self.get_value().await? else { return Ok(None) };
        Ok(Some(DocValue { value: json::from_json(value, "document", &self.key)?, etag }))
    }

    /// Read, apply `f`, write back with compare-and-swap; on conflict start over (at most
    /// [`Doc::DEFAULT_MAX_ATTEMPTS`] times). An absent document is [`Error::NotFound`]: see
    /// [`Doc::update_or_insert`]. Returns the value written. `f` may run more than once (each lost
    /// race runs it again), so keep it free of side effects; its `Err` aborts with nothing written.
    ///
    /// When the handle remembers a version (it read or wrote one), `f` is first applied to that and
    /// the write guarded by its etag: 1 request when nobody else wrote since; a refused guard costs
    /// that one PUT, then the loop runs as described. Requests: 2 per attempt otherwise.
    pub async fn update(&self, f: impl FnMut(T) -> Result<T> + MaybeSend) -> Result<T> {
        self.update_with(UpdateOptions::default(), f).await
    }

    /// [`Doc::update`], starting from `initial` when the document is absent (created by a
    /// put-if-absent, so two first writers cannot both create it).
    pub async fn update_or_insert(&self, initial: T, f: impl FnMut(T) -> Result<T> + MaybeSend) -> Result<T> {
        self.update_with(UpdateOptions { create: Some(initial), ..UpdateOptions::default() }, f).await
    }

    /// [`Doc::update`] with [`UpdateOptions`] (a value to create from, the attempts, a fresh read).
    pub async fn update_with(
        &self,
        options: UpdateOptions<T>,
        mut f: impl FnMut(T) -> Result<T> + MaybeSend,
    ) -> Result<T> {
        self.update_async(options, move |v| std::future::ready(f(v))).await
    }

    /// [`Doc::update_with`] for a transition that must await (look something up first). It may
    /// run more than once, like `f` of [`Doc::update`].
    pub async fn update_async<F, Fut>(&self, options: UpdateOptions<T>, mut f: F) -> Result<T>
    where
        F: FnMut(T) -> Fut + MaybeSend,
        Fut: Future<Output = Result<T>> + MaybeSend + 'static,
    {
        let key = self.key.clone();
        let create = options.create.map(|c| json::to_json(&c, "initial document", &key)).transpose()?;
        if options.fresh {
            self.forget();
        }
        let mut transition = crate::objects::transition::typed(&key, "document", &mut f);
        let written = self.update_value(&mut transition, create, options.max_attempts).await?;
        json::from_json(written, "document", &self.key)
    }
}

pub(crate) async fn read(objects: &Objects, key: &str) -> Result<Option<DocValue>> {
    objects.versions().forget(key);
    let Some(obj) = objects.read(key).await? else { return Ok(None) };
    let value = json::parse(&obj.body).map_err(|m| Error::corrupt(key, m))?;
    let size = obj.body.len();
    objects.versions().put(key, Version { value: value.clone(), etag: obj.etag.clone(), meta: obj.meta, size });
    Ok(Some(DocValue { value, etag: obj.etag }))
}

/// Remember a version written (unless its etag is unknown: then read first next time).
fn remember(objects: &Objects, key: &str, written: Written, value: &Value, size: usize) {
    if let Some(etag) = written.etag {
        objects.versions().put(key, Version { value: value.clone(), etag, meta: written.meta, size });
    }
}

/// The update loop of [`Doc::update`] (and of the counter's shards).
pub(crate) async fn update(
    objects: &Objects,
    key: &str,
    f: &mut Transition<'_>,
    create: Option<Value>,
    max_attempts: u32,
) -> Result<Value> {
    if max_attempts == 0 || max_attempts > MAX_UPDATE_ATTEMPTS {
        return Err(Error::invalid(format!("maxAttempts must be between 1 and {MAX_UPDATE_ATTEMPTS}")));
    }
    let create = create.map(checked).transpose()?;
    // From the version this handle last saw: one guarded PUT when nobody else wrote since.
    // (Taken, so a failure leaves nothing stale behind.)
    // That attempt is one of `max_attempts` (`f` runs that many times at most under contention,
    // whichever handle or version it starts from; twice for 1), but the loop always gets one:
    // what the cache remembers never makes an update fail on its own, it only costs a PUT.
    let mut attempts = max_attempts;
    if let Some(last) = objects.versions().take(key) {
        attempts = attempts.saturating_sub(1).max(1);
        let next = settle(objects, f(last.value)).await?;
        let body = json::to_canonical(&next);
        let written = if mutation::on(Mutation::TrustRememberedVersion) {
            objects.overwrite(key, &body, &last.meta).await?
        } else {
            objects.replace(key, &body, &last.etag, &last.meta).await?
        };
        if let Some(written) = written {
            remember(objects, key, written, &next, body.len());
            return Ok(next);
        }
    }
    for _ in 0..attempts {
        let current = objects.read(key).await?;
        let (next, body, written) = match current {
            Some(obj) => {
                let value = json::parse(&obj.body).map_err(|m| Error::corrupt(key, m))?;
                let next = settle(objects, f(value)).await?;
                let body = json::to_canonical(&next);
                let written = objects.replace(key, &body, &obj.etag, &obj.meta).await?;
                (next, body, written)
            }
            None => {
                let Some(initial) = create.clone() else {
                    return Err(Error::NotFound { key: key.to_owned() });
                };
                let next = settle(objects, f(initial)).await?;
                let body = json::to_canonical(&next);
                let written = objects.create(key, &body).await?;
                (next, body, written)
            }
        };
        if let Some(written) = written {
            remember(objects, key, written, &next, body.len());
            return Ok(next);
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: max_attempts })
}
