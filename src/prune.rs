//! prune: delete what has piled up under a prefix (past cron ticks' claims, finished jobs) once it
//! is older than a given age — never a lease that is held. Where the store has a conditional
//! DELETE, each object is deleted only if unchanged since it was judged; where it has not (the R2
//! binding), it is re-read right before the delete.

use crate::base::error::{Error, Result};
use crate::lease::LeaseDoc;
use crate::objects::Objects;
use crate::time::Timestamp;

/// What [`crate::Fencepost::prune`] did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Objects deleted (dry: that would be).
    pub deleted: u64,
    /// Objects under the prefix kept: recent, of unknown age, held leases, changed meanwhile.
    pub kept: u64,
    /// The keys deleted (dry: that would be), in key order.
    pub keys: Vec<String>,
}

/// What [`crate::Fencepost::prune`] deletes: `PruneOptions::older_than(7.0 * 86_400.0)`, and
/// `.dry_run()` to only report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PruneOptions {
    /// Objects last modified more than this many seconds ago.
    pub older_than: f64,
    /// Report what would be deleted; delete nothing.
    pub dry_run: bool,
}

impl PruneOptions {
    pub fn older_than(seconds: f64) -> Self {
        PruneOptions { older_than: seconds, dry_run: false }
    }

    /// Report what would be deleted, deleting nothing.
    pub fn dry_run(self) -> Self {
        PruneOptions { dry_run: true, ..self }
    }
}

/// Delete the objects under `prefix` last modified more than `older_than` seconds ago, except
/// held lease documents. Requests: one list per page, then per old object a read and a delete.
/// Cancelled after a delete has landed, it stops there and answers what it deleted so far.
pub(crate) async fn prune(objects: &Objects, prefix: &str, older_than: f64, dry_run: bool) -> Result<Pruned> {
    if !older_than.is_finite() || older_than < 0.0 {
        return Err(Error::invalid("prune options.olderThan must be a finite number of seconds >= 0"));
    }
    // Everything under a reserved prefix is CairnDB's engine's, which shares the bucket.
    crate::codec::keys::reserved_check(prefix, "prune prefix")?;
    let conditional = objects.conditional_delete();
    let mut out = Pruned::default();
    let mut cursor: Option<String> = None;
    // Bounded as every listing is: a store whose cursors go round in a circle is broken, and a
    // synchronous one would otherwise hold the thread for good.
    for _ in 0..crate::store::MAX_LIST_PAGES {
        let page = objects.entries_page(prefix, None, cursor.as_deref()).await?;
        // Judged after the page's answer: under the store clock the first answer is what sets the
        // clock, and a cutoff taken before it would be the local clock's (minutes off, perhaps).
        let cutoff = objects.now()?.plus_secs(-older_than);
        for entry in page.entries {
            // Unknown age counts as recent: nothing is deleted on a guess. CairnDB's engine
            // objects (a prefix such as "" lists them too) are never fencepost's to delete.
            let reserved = crate::codec::keys::reserved_prefix(&entry.key).is_some();
            if reserved || entry.last_modified.is_none_or(|at| at >= cutoff) {
                out.kept += 1;
                continue;
            }
            match prune_one(objects, &entry.key, cutoff, dry_run, conditional).await {
                Ok(true) => {}
                Ok(false) => {
                    out.kept += 1;
                    continue;
                }
                // Cancelled before or while judging the next object (its read refused, or abandoned:
                // nothing of that one written).
                Err(e) if !matches!(e, Error::AmbiguousWrite { .. }) && stop_here(objects, &out, dry_run) => {
                    return Ok(out);
                }
                Err(e) => return Err(e),
            }
            out.deleted += 1;
            out.keys.push(entry.key);
        }
        match page.next {
            Some(next) if !stop_here(objects, &out, dry_run) => cursor = Some(next),
            _ => return Ok(out),
        }
    }
    let endless = format!("still truncated after {} pages", crate::store::MAX_LIST_PAGES);
    Err(Error::Storage(crate::store::malformed_listing(prefix, &endless).into_failure()))
}

/// Whether a cancelled prune stops with what it has deleted, rather than with the cancel's
/// reason: once a delete has landed, the caller learns which (as a single delete in flight
/// settled by reading back succeeds); before any, or in a dry run, the reason is the answer.
fn stop_here(objects: &Objects, out: &Pruned, dry_run: bool) -> bool {
    !dry_run && out.deleted > 0 && objects.check_cancel().is_err()
}

/// Judge one old object on a fresh read and delete it: `false` when it is kept (gone, changed
/// since the listing, or a held lease).
async fn prune_one(objects: &Objects, key: &str, cutoff: Timestamp, dry_run: bool, conditional: bool) -> Result<bool> {
    let Some(obj) = objects.read(key).await? else { return Ok(false) };
    // A lease document (as `inspect` recognises one: `LeaseDoc` parses it) that is held stays.
    // Held as of this read's answer (the store clock's latest, under it).
    let now = objects.now()?;
    let held = LeaseDoc::parse(key, &obj.body).is_ok_and(|doc| !doc.is_expired(now));
    if held || obj.last_modified.is_some_and(|at| at >= cutoff) {
        return Ok(false);
    }
    if dry_run {
        return Ok(true);
    }
    if conditional {
        objects.delete_if_match(key, &obj.etag).await
    } else {
        // No conditional delete: the read just made is the re-check right before the delete.
        objects.delete(key).await.map(|()| true)
    }
}
