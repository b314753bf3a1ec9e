//! What the binding keeps between calls, each table bounded or freed at a known moment, so a JS
//! program that drops its handles without a garbage collection ever running keeps a flat wasm
//! memory (no JS handle owns core memory):
//! - `Fencepost`s built from their JS recipe, least recently used out past [`MAX_DBS`]: a dropped
//!   or evicted one is rebuilt from the recipe on its next call (it loses only its caches: doc
//!   versions, the store clock's offset);
//! - leases under keep-alive (`keepAlive`, `withLease`): from its start until it stops, when the
//!   JS handle takes its snapshot back;
//! - lease handles' periods as their last call left them, least recently used out past
//!   [`MAX_KEPT`], each taken out by the handle's next call (two calls at once on one handle
//!   leave one unnamed, for later ones to push out): what spares that call parsing the snapshot
//!   again. A kept lease holds its store, none of its `Fencepost`'s caches. A handle whose entry is gone (evicted, or taken by a call that failed at once)
//!   sends its snapshot instead, as every handle could.

use std::cell::RefCell;

use fencepost::Cancel;
use fencepost::Fencepost;
use fencepost::Lease;
use fencepost::{Error, Result};

/// Fencepost instances kept built (each a store, options and caches of at most about 1 MB).
pub const MAX_DBS: usize = 32;

/// Lease periods kept built for their handles' next calls (each about a snapshot's size, 1–2 KB).
pub const MAX_KEPT: usize = 64;

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
    /// Least recently kept first.
    kept: Vec<(u32, Lease)>,
    /// The last id handed out, for a live entry or a kept lease (one sequence: never the same twice).
    last_id: u32,
}

impl Tables {
    fn next_id(&mut self) -> u32 {
        self.last_id = self.last_id.wrapping_add(1);
        self.last_id
    }
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
        let id = t.next_id();
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

/// Keep `lease` built for its handle's next call: the id the handle names it by.
pub fn keep(lease: Lease) -> u32 {
    with(|t| {
        if t.kept.len() >= MAX_KEPT {
            t.kept.remove(0);
        }
        let id = t.next_id();
        t.kept.push((id, lease));
        id
    })
}

/// The lease kept under `id`, taken out (`None`: evicted or taken already).
pub fn take_kept(id: u32) -> Option<Lease> {
    with(|t| find(&t.kept, id).map(|at| t.kept.remove(at).1))
}
