//! What the binding keeps between calls, each table bounded or freed at a known moment, so a JS
//! program that drops its handles without a garbage collection ever running keeps a flat wasm
//! memory (no JS handle owns core memory):
//! - `Fencepost`s built from their JS recipe, least recently used out past [`MAX_DBS`]: a dropped
//!   or evicted one is rebuilt from the recipe on its next call (it loses only its caches: doc
//!   versions, the store clock's offset);
//! - leases under keep-alive (`keepAlive`, `withLease`): from its start until it stops, when the
//!   JS handle takes its snapshot back.

use std::cell::RefCell;

use fencepost::Cancel;
use fencepost::Fencepost;
use fencepost::Lease;
use fencepost::{Error, Result};

/// Fencepost instances kept built (each a store, options and caches of at most about 1 MB).
pub const MAX_DBS: usize = 32;

/// A lease under keep-alive: the handle the JS one calls through meanwhile.
pub struct Live {
    pub lease: Lease,
    /// Fired when the entry goes, so whoever waits on the period's end stops waiting.
    pub closed: Cancel,
}

/// Plain lists, not maps: they are short (at most `MAX_DBS`; the keep-alives a program runs), and
/// a map of another type is kilobytes more of the wasm.
#[derive(Default)]
struct Tables {
    /// Least recently used first.
    dbs: Vec<(u32, Fencepost)>,
    live: Vec<(u32, Live)>,
    next_live: u32,
}

/// Where `id` is in `list`.
pub fn find<T>(list: &[(u32, T)], id: u32) -> Option<usize> {
    list.iter().position(|(i, _)| *i == id)
}

thread_local! {
    static TABLES: RefCell<Tables> = RefCell::default();
}

fn with<R>(f: impl FnOnce(&mut Tables) -> R) -> R {
    TABLES.with(|t| f(&mut t.borrow_mut()))
}

/// The `Fencepost` with JS id `id`, built by `build` when it is not kept (first use, or evicted).
pub fn db(id: u32, build: impl FnOnce() -> Result<Fencepost>) -> Result<Fencepost> {
    let kept = with(|t| find(&t.dbs, id).map(|at| t.dbs.remove(at).1));
    let db = match kept {
        Some(db) => db,
        None => build()?,
    };
    with(|t| {
        if t.dbs.len() >= MAX_DBS {
            t.dbs.remove(0);
        }
        t.dbs.push((id, db.clone()));
    });
    Ok(db)
}

/// The JS handle `id` is gone: forget any `Fencepost` of that id.
pub fn forget(id: u32) {
    with(|t| t.dbs.retain(|(i, _)| *i != id));
}

/// Keep `lease` alive under an id of its own until [`end_live`].
pub fn start_live(lease: Lease) -> (u32, Cancel) {
    with(|t| {
        t.next_live = t.next_live.wrapping_add(1);
        let id = t.next_live;
        let closed = Cancel::new();
        t.live.push((id, Live { lease, closed: closed.clone() }));
        (id, closed)
    })
}

/// The lease under keep-alive with id `id`.
pub fn live(id: u32) -> Result<Lease> {
    with(|t| find(&t.live, id).map(|at| t.live[at].1.lease.clone()))
        .ok_or_else(|| Error::invalid("this lease handle's keep-alive has ended"))
}

/// What fires when the entry `id` goes (`None`: gone already).
pub fn closed(id: u32) -> Option<Cancel> {
    with(|t| find(&t.live, id).map(|at| t.live[at].1.closed.clone()))
}

/// Keep-alive of `id` is over: the entry goes (its waiters are told) and its lease comes back.
pub fn end_live(id: u32) -> Option<Lease> {
    let live = with(|t| find(&t.live, id).map(|at| t.live.remove(at).1))?;
    live.closed.cancel();
    Some(live.lease)
}
