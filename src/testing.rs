//! For testing code that uses fencepost (the Rust side of the JS `fencepost/testing`):
//! - [`FaultStore`] wraps any store, counts its requests and injects faults: lost responses,
//!   transport errors, competing writes, HTTP statuses, delays, hooks that run other writers
//!   just before or after a request;
//! - [`ManualClock`] is a clock that moves only when told to, so expiry, keep-alive, lease waits
//!   and backoff run instantly and deterministically.
//!
//! ```
//! use fencepost::Shared;
//! use fencepost::store::{MemoryStore, Op};
//! use fencepost::testing::{Fault, FaultStore, ManualClock};
//! use fencepost::{Fencepost, LeaseOptions, Options};
//! use serde_json::json;
//!
//! # futures::executor::block_on(async {
//! let store = Shared::new(FaultStore::new(Shared::new(MemoryStore::new())));
//! let clock = ManualClock::auto_advancing(ManualClock::START_2026);
//! let db = Fencepost::new(store.clone(), Options { clock: Some(Shared::new(clock.clone())), ..Options::default() })?;
//!
//! // The winning put lands but its response is lost: the claim still reports the win.
//! store.inject(Op::Put, Fault::LoseResponse);
//! assert!(db.claim("cron/tick", json!("mine")).await?.won);
//! assert_eq!(store.take_counts().total(), 2, "the put and one read-back");
//!
//! // A 30-second lease expires after 30 seconds of manual time.
//! let first = db.lease("jobs/1", LeaseOptions::new(30.0)).await?.expect("free");
//! clock.advance(30.0);
//! let second = db.lease("jobs/1", LeaseOptions::new(30.0)).await?.expect("expired, so stolen");
//! assert_eq!((first.epoch(), second.epoch()), (1, 2));
//! assert!(first.renew().await.is_err(), "the old holder is fenced");
//! # Ok::<(), fencepost::Error>(())
//! # }).unwrap();
//! ```

pub use crate::store::fault::{Fault, FaultStore, Injected, Rule};
pub use crate::time::ManualClock;

/// The deliberately broken variants of the protocol the simulation must catch (feature `mutations`).
#[cfg(feature = "mutations")]
pub use crate::base::mutation::{Mutation, set as set_mutation};

/// Draw this thread's tokens (lease holders, write tokens) and backoff jitter from a generator
/// seeded with `seed`, so a simulation repeats exactly (a client on a [`ManualClock`] draws its
/// jitter from the clock's own generator instead, seeded by its start); `None` returns to the
/// operating system's secure randomness. For tests only: seeded tokens are predictable. Not in wasm, where every
/// token comes from `crypto.getRandomValues`.
#[cfg(not(target_arch = "wasm32"))]
pub fn seed_random(seed: Option<u64>) {
    crate::host::random::seeded::set(seed);
}
