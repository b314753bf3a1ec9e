//! checkStore: does a store honour what fencepost relies on? Everything is written under a fresh
//! `__fencepost_check/<random>/` prefix and deleted afterwards. The store is asked directly (one
//! attempt per request, no read-back resolution): the point is to see its own answers. garage and
//! s3rver ignore conditional headers, MinIO does when it loses read quorum; a store that fails a
//! required check here would let two claimers both win.

use crate::base::error::{Error, Result};
use crate::base::future::{BoxFuture, join_all};
use crate::base::number::number_text;
use crate::codec::token::random_token;
use crate::host::clock::SystemClock;
use crate::store::{IfChanged, ObjectStore, Precondition, PutOutcome, StoreError, WriteMeta};
use crate::time::Clock;

/// The prefix every check writes under (then a random part): never a key of an application.
pub const CHECK_PREFIX: &str = "__fencepost_check/";

/// Racers in the create race.
const RACERS: usize = 16;

/// One check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    /// A required check failing makes the store unfit for fencepost; the others inform.
    pub required: bool,
    pub detail: String,
}

/// What [`check_store`] found: `ok` when every required check passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreCheck {
    pub ok: bool,
    pub checks: Vec<Check>,
}

/// Check `store`: create-only refused on an existing key; `If-Match` refused with a stale etag and
/// on a missing key; one winner of a 16-way create race; write tokens round-trip; a written key
/// is listed (required); conditional DELETE, conditional reads (a 304) and the store clock's
/// offset (informational). A store
/// that cannot be reached or refuses the credentials is an `Err` (a `StorageError`), not a report.
pub async fn check_store(store: impl crate::store::IntoStore) -> Result<StoreCheck> {
    let store = store.into_store();
    let space = format!("{CHECK_PREFIX}{}/", random_token()?);
    let outcome = run_checks(&*store, &space).await;
    // Clean up whatever was written, whatever happened (best effort: a failure here is reported
    // only when the checks themselves went through).
    let cleaned = clean_up(&*store, &space).await;
    let checks = outcome?;
    cleaned?;
    let ok = checks.iter().all(|c| c.ok || !c.required);
    Ok(StoreCheck { ok, checks })
}

/// What a conditional put of the first checks is conditioned on.
#[derive(Clone, Copy, PartialEq)]
enum On {
    Absent,
    Nothing,
    /// `If-Match` the etag the unconditional put returned.
    FirstEtag,
}

/// The puts of the first three checks, in order: key (under the check's prefix), body, condition.
const PUTS: [(&str, &[u8], On); 6] = [
    ("create", b"first", On::Absent),
    ("create", b"second", On::Absent),
    ("cas", b"v1", On::Nothing),
    ("cas", b"v2", On::FirstEtag),
    ("cas", b"v3", On::FirstEtag), // stale by now
    ("missing", b"x", On::FirstEtag),
];

async fn run_checks(store: &dyn ObjectStore, space: &str) -> Result<Vec<Check>> {
    let key = |name: &str| format!("{space}{name}");
    let mut checks = Vec::new();
    let mut check = |name: &'static str, required: bool, ok: bool, detail: String| {
        checks.push(Check { name, ok, required, detail });
    };

    // Create-only; If-Match with a stale etag, and on a missing key.
    let mut outcomes = Vec::new();
    let mut first_etag = String::new();
    for (name, body, on) in PUTS {
        let precondition = match on {
            On::Absent => Precondition::IfAbsent,
            On::Nothing => Precondition::None,
            On::FirstEtag => Precondition::IfMatch(first_etag.clone()),
        };
        let outcome = put(store, &key(name), body, &precondition).await?;
        if on == On::Nothing {
            let PutOutcome::Written { etag } = &outcome else {
                return Err(Error::invalid("a plain PUT was refused as if it were conditional"));
            };
            first_etag = etag.clone();
        }
        outcomes.push(outcome);
    }
    let refused = |i: usize, what: &str| {
        let outcome = outcomes.get(i).unwrap_or(&PutOutcome::PreconditionFailed);
        let detail = match outcome {
            PutOutcome::PreconditionFailed => format!("{what}: refused"),
            PutOutcome::Written { .. } => format!("{what}: the store wrote it anyway"),
        };
        (*outcome == PutOutcome::PreconditionFailed, detail)
    };
    let written = |i: usize| matches!(outcomes.get(i), Some(PutOutcome::Written { .. }));
    let (ok, detail) = refused(1, "If-None-Match: *");
    check("create-only refused on an existing key", true, written(0) && ok, detail);
    let (ok, detail) = refused(4, "If-Match on a replaced version");
    check("If-Match refused with a stale etag", true, written(3) && ok, detail);
    let (ok, detail) = refused(5, "If-Match on a missing key");
    check("If-Match refused on a missing key", true, ok, detail);

    // One winner of a create race.
    let racers: Vec<BoxFuture<'_, _>> = (0..RACERS)
        .map(|i| {
            let body = format!("racer {i}").into_bytes();
            let race_key = key("race");
            Box::pin(async move { put(store, &race_key, &body, &Precondition::IfAbsent).await })
                as BoxFuture<'_, Result<PutOutcome>>
        })
        .collect();
    let mut winners = 0;
    for outcome in join_all(racers).await {
        winners += usize::from(matches!(outcome?, PutOutcome::Written { .. }));
    }
    check(
        "a 16-way create race has exactly one winner",
        true,
        winners == 1,
        format!("{winners} of {RACERS} concurrent create-only PUTs succeeded"),
    );

    // Write tokens (fencepost's provenance metadata) come back as written.
    let token = random_token()?;
    let meta = WriteMeta { token: Some(token.clone()), history: random_token()?, origin: Some(token.clone()) };
    store.put(&key("token"), b"t", &Precondition::None, &meta).await.map_err(storage)?;
    let read = store.get(&key("token")).await.map_err(storage)?;
    let back = read.map(|o| o.meta);
    let ok = back.as_ref() == Some(&meta);
    let detail = if ok {
        "token, history and origin read back as written".to_owned()
    } else {
        "the write token did not come back (S3: x-amz-meta-* headers; in a browser, CORS must expose them)".to_owned()
    };
    check("write tokens round-trip", true, ok, detail);

    // Listing.
    // Every page (a store may page after any number of keys; the check wrote fewer than 1,000).
    let (mut listed, mut ok, mut cursor) = (0, false, None);
    for _ in 0..1000 {
        let page = store.list_page(space, None, cursor.as_deref()).await.map_err(storage)?;
        listed += page.entries.len();
        ok |= page.entries.iter().any(|e| e.key == key("token"));
        cursor = page.next;
        if cursor.is_none() {
            break;
        }
    }
    let detail = format!("{listed} objects listed under the check's prefix");
    check("a written key is listed", true, ok, detail);

    // Conditional DELETE (informational: prune re-reads where it is missing).
    let (ok, detail) = conditional_delete(store, &key("cas")).await?;
    check("conditional DELETE (If-Match)", false, ok, detail);

    // Conditional reads (informational: a watch's unchanged poll is then a 304 without the body).
    let (ok, detail) = conditional_get(store, &key("token")).await?;
    check("conditional read (If-None-Match: 304)", false, ok, detail);

    // The store's clock.
    let (ok, detail) = match (store.server_time(), SystemClock.now()) {
        (Some(server), Ok(local)) => {
            let offset = (local.secs_until(server) * 10.0).round() / 10.0;
            let sign = if offset >= 0.0 { "+" } else { "" };
            (offset.abs() < 60.0, format!("the store's clock is {sign}{} s from this one", number_text(offset)))
        }
        _ => (
            true,
            "the store reports no clock (the local clock serves; in a browser, CORS must expose Date)".to_owned(),
        ),
    };
    check("store clock offset", false, ok, detail);
    Ok(checks)
}

/// A conditional DELETE on a stale etag (the version before the current one) must leave the
/// object; on the current one, delete it.
async fn conditional_delete(store: &dyn ObjectStore, key: &str) -> Result<(bool, String)> {
    if !store.conditional_delete() {
        return Ok((false, "not used with this store (prune re-reads right before deleting)".to_owned()));
    }
    let Some(stale) = store.get(key).await.map_err(storage)? else {
        return Ok((false, "the object to test with is gone".to_owned()));
    };
    let PutOutcome::Written { etag: current } =
        put(store, key, b"{\"check\":\"delete\"}", &Precondition::IfMatch(stale.etag.clone())).await?
    else {
        return Ok((false, "the object to test with changed".to_owned()));
    };
    let deleted_stale = store.delete_if_match(key, &stale.etag).await.map_err(storage)?;
    let still_there = store.get(key).await.map_err(storage)?.is_some();
    if deleted_stale || !still_there {
        return Ok((false, "ignored: a DELETE with a stale If-Match deleted the object".to_owned()));
    }
    let deleted = store.delete_if_match(key, &current).await.map_err(storage)?;
    Ok((deleted, if deleted { "honoured".to_owned() } else { "refused on the current etag".to_owned() }))
}

/// A read naming the current etag must answer "not modified" — from the store itself, which is
/// what makes a watch's unchanged poll cheap — and one naming another etag the object.
async fn conditional_get(store: &dyn ObjectStore, key: &str) -> Result<(bool, String)> {
    let Some(current) = store.get(key).await.map_err(storage)? else {
        return Ok((false, "the object to test with is gone".to_owned()));
    };
    if !store.conditional_get() {
        return Ok((false, "not offered: reads compare etags after a full GET".to_owned()));
    }
    let unchanged = store.get_if_changed(key, &current.etag).await.map_err(storage)?;
    let changed = store.get_if_changed(key, "0123456789abcdef").await.map_err(storage)?;
    Ok(match (unchanged, changed) {
        (IfChanged::NotModified, IfChanged::Current(Some(_))) => (true, "304 Not Modified while unchanged".to_owned()),
        (IfChanged::Current(_), _) => {
            (false, "ignored: the whole object came back (fencepost compares etags instead)".to_owned())
        }
        (IfChanged::NotModified, _) => (false, "answered \"not modified\" for an etag it never had".to_owned()),
    })
}

async fn put(store: &dyn ObjectStore, key: &str, body: &[u8], precondition: &Precondition) -> Result<PutOutcome> {
    let meta = WriteMeta::creating(random_token()?);
    store.put(key, body, precondition, &meta).await.map_err(storage)
}

fn storage(e: StoreError) -> Error {
    Error::Storage(e.into_failure())
}

/// The names the checks write under their prefix (a store that ignores conditions writes them all).
const WRITTEN: [&str; 5] = ["create", "cas", "missing", "race", "token"];

/// Delete what the checks wrote, by name: not by listing the prefix, so a store whose listing
/// fails (one of the things checked) is still left clean. Deleting a key that is not there is a
/// no-op in every store.
async fn clean_up(store: &dyn ObjectStore, space: &str) -> Result<()> {
    for name in WRITTEN {
        store.delete(&format!("{space}{name}")).await.map_err(storage)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sync::Shared;
    use crate::store::{ListPage, MemoryStore, StoreResult, StoredObject};
    use async_trait::async_trait;
    use futures::executor::block_on;

    /// A store that ignores conditional writes, as garage and s3rver do.
    struct Unconditional(MemoryStore);

    #[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
    #[cfg_attr(not(target_arch = "wasm32"), async_trait)]
    impl ObjectStore for Unconditional {
        async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
            self.0.get(key).await
        }
        async fn put(&self, key: &str, body: &[u8], _: &Precondition, meta: &WriteMeta) -> StoreResult<PutOutcome> {
            self.0.put(key, body, &Precondition::None, meta).await
        }
        async fn delete(&self, key: &str) -> StoreResult<()> {
            self.0.delete(key).await
        }
        async fn list_page(&self, prefix: &str, after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
            self.0.list_page(prefix, after, cursor).await
        }
    }

    #[test]
    fn the_memory_store_passes_and_nothing_is_left_behind() {
        let store = Shared::new(MemoryStore::new());
        let report = block_on(check_store(store.clone())).unwrap();
        assert!(report.ok, "{report:?}");
        assert_eq!(report.checks.iter().filter(|c| c.required).count(), 6);
        assert!(block_on((store as Shared<dyn ObjectStore>).list("")).unwrap().is_empty());
    }

    #[test]
    fn a_store_that_ignores_conditions_fails_naming_the_checks() {
        let report = block_on(check_store(Shared::new(Unconditional(MemoryStore::new())))).unwrap();
        assert!(!report.ok);
        let failed: Vec<_> = report.checks.iter().filter(|c| c.required && !c.ok).map(|c| c.name).collect();
        assert_eq!(
            failed,
            [
                "create-only refused on an existing key",
                "If-Match refused with a stale etag",
                "If-Match refused on a missing key",
                "a 16-way create race has exactly one winner"
            ]
        );
    }
}
