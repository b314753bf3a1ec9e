//! **fencepost** lets serverless, edge and ordinary services coordinate with nothing but an object
//! store's conditional writes (S3's `If-None-Match: *` / `If-Match`, R2's `onlyIf`): no
//! coordinator server, no database.
//!
//! - **claim** ([`Fencepost::claim`]): a unique constraint, exactly one winner per key; every loser
//!   gets the winner's value. The winner's work runs at most once (if the winner crashes, nobody
//!   runs it again): start a cron tick's work, dispatch an event.
//! - **lease** ([`Fencepost::lease`], [`Lease`]): expiring ownership with an epoch fence token,
//!   renewals and keep-alive ([`Lease::keep_alive`], [`Fencepost::with_lease`]), guarded writes,
//!   cooperative writes from outside ([`Fencepost::cooperative_write`]: cancel a job).
//! - **doc** ([`Fencepost::doc`], [`Doc`]): a small JSON document with a compare-and-swap loop.
//! - **once** ([`Fencepost::once`]): one recorded result per key; duplicates get the recorded
//!   result. The function runs at least once and may run again after a crash: a runner that dies
//!   is replaced after its ttl.
//! - **semaphore** ([`Fencepost::semaphore`], [`Semaphore`]): at most `limit` holders at once,
//!   each permit a lease fenced by its epoch.
//! - **watch** ([`Fencepost::watch`], [`Watch`]): a key's changes as a `Stream`, polled with
//!   conditional reads (a 304 without the body while nothing changed).
//! - **objects** ([`Objects`]): the layer underneath: get, conditional put, delete, list, wait.
//!
//! ```
//! use fencepost::store::MemoryStore;
//! use fencepost::{Fencepost, LeaseOptions, Options};
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Tick { by: String }
//! #[derive(serde::Serialize, serde::Deserialize, Default)]
//! struct Job { done: u32 }
//!
//! # futures::executor::block_on(async {
//! let db = Fencepost::new(MemoryStore::new(), Options::default())?;
//! let tick = db.claim("cron/nightly/2026-05-01", Tick { by: "worker-1".into() }).await?;
//! if tick.won {
//!     let options = LeaseOptions::new(30.0).initial_state(Job::default());
//!     if let Some(lease) = db.lease("jobs/nightly", options).await? {
//!         // ... the job, checkpointing under the epoch's fence ...
//!         lease.update_state(|job| Ok(Job { done: job.done + 1 })).await?;
//!         lease.release().await?;
//!     }
//! }
//! # Ok::<(), fencepost::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Stores
//!
//! Every primitive works on any [`store::ObjectStore`]:
//! - [`store::MemoryStore`]: in memory, behaving like S3 (tests, simulations);
//! - [`store::s3::S3Store`]: any S3-compatible service (AWS S3, R2's S3 endpoint, SeaweedFS,
//!   MinIO…), SigV4-signed, over an [`store::s3::HttpTransport`]: `ReqwestTransport` natively
//!   (feature `reqwest`), `FetchTransport` in wasm (the host's `fetch`), or your own;
//! - [`store::azure::AzureStore`]: Azure Blob Storage (Shared Key or a SAS token), and
//!   [`store::gcs::GcsStore`]: Google Cloud Storage's JSON API (an access token, a
//!   [`store::gcs::TokenSource`], or a service account), over the same transports;
//! - `store::r2::R2Store` (wasm32): a Workers R2 binding, `R2Store::from_bucket(&env.bucket("BUCKET")?)`
//!   in a workers-rs Worker (feature `worker`);
//! - `store::object_store::ObjectStoreAdapter` (feature `object_store`): any store of the
//!   `object_store` crate that Rust services already use, with `PutMode::Create` / `Update`;
//! - [`store::CountingStore`] counts requests (each one a Workers subrequest); the fault store of
//!   [`testing`] injects failures.
//!
//! # Feature flags
//!
//! | feature | what it adds |
//! |---|---|
//! | `reqwest` | `store::s3::ReqwestTransport` (native only): the S3 store over reqwest (rustls TLS). It needs no async runtime of yours: inside a tokio runtime it uses that one, elsewhere a small background one. |
//! | `gcs-service-account` | `store::gcs::RsaSigner` and `ServiceAccount::from_json` (native only): the GCS store gets its tokens from a service account's JSON key (an RS256 JWT signed with the `rsa` crate). |
//! | `object_store` | `store::object_store::ObjectStoreAdapter` (native only): any `Arc<dyn object_store::ObjectStore>` of the Apache Arrow crate with conditional puts (S3, Azure, memory; the local filesystem creates only) as a store. |
//! | `worker` | `store::r2::R2Store::from_bucket` (wasm32 only): the R2 store from a workers-rs `worker::Bucket`. |
//! | `tokio` | A [`Fencepost::with_lease`], [`Fencepost::once`] or [`Semaphore::with_permit`] future dropped while it holds its lease (a client disconnecting from an axum handler, `tokio::time::timeout`) releases the lease in the background on the current tokio runtime, as dropping a `MutexGuard` unlocks. Turned on by `reqwest` and `object_store`. Without it, or outside a runtime, the lease stays held until its ttl runs out. (In a Rust Worker, feature `worker`, the JS event loop runs the release. The npm package's calls are Promises, which always run to their end.) |
//!
//! # Runtimes and threads
//!
//! Natively, [`Fencepost`], [`Lease`], [`Doc`], [`Objects`], [`Counter`] and every store are
//! `Send + Sync + Clone`, and every future they return is `Send`: await them in an axum handler,
//! hand them to `tokio::spawn`, share one `Fencepost` across a multi-threaded runtime. No
//! runtime is required either: the clock's sleeps ([`SystemClock`]) run on a timer thread of
//! fencepost's own, so `futures::executor::block_on` works too. In wasm32 (Workers, browsers, the
//! npm package) nothing is required to be `Send` (JS values are not), and the same core runs on
//! the host's `setTimeout` and `fetch`. A store of your own implements [`store::ObjectStore`]
//! with `#[async_trait::async_trait]` natively (`#[async_trait(?Send)]` in wasm32).
//!
//! Values are any `serde` type: [`Claim<T>`], [`Doc<T>`] and [`Lease<T>`]'s state
//! (`serde_json::Value` by default). One that does not serialize is [`Error::InvalidArgument`];
//! a stored value that does not deserialize as the `T` asked for is [`Error::Corrupt`], naming the
//! key and serde's error.
//!
//! # Semantics
//!
//! Every duration is in seconds. Failures are an [`Error`] with a stable [`Error::code`]. A write
//! whose response is lost is resolved by reading the key back (each write carries a random token),
//! so a landed claim still wins and a landed update is applied once, neither lost nor doubled; what
//! cannot be proven is an [`Error::AmbiguousWrite`], never a guess (see [`Objects`]). Keys:
//! non-empty, at most 1024 UTF-8 bytes, no control characters, no `.`/`..` segment, not under
//! `log/`, `snapshots/`, `logs/`, `txapplied/`. Documents are
//! canonical JSON (byte-identical to Python's `json.dumps(v, sort_keys=True, separators=(",", ":"))`),
//! so a CairnDB process, a JS Worker using the npm package and a Rust service can share a bucket.
//! docs/semantics.md has the full semantics and the wire format, docs/operations.md the requests
//! each operation costs.

#![allow(async_fn_in_trait)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The house rule: each module imports only from the layers below it (checked by the lint stage,
// scripts/lint-layers.mjs), and nothing imports from this file, which only declares and
// re-exports. From the bottom:
//
//   base        errors, numbers as text, futures, the cancel seam
//   time        timestamps and the `Clock` seam (pure: it never reads the host)
//   host        the host's clock and timers, randomness, float parsing, JS host calls (wasm), tokio (native I/O)
//   codec       canonical JSON, tokens, hex/base64, key rules
//   store       the `ObjectStore` trait, its decorators (prefix, counting, fault) and backends
//               (memory, s3, azure, gcs, r2, js), which never import each other, only the HTTP kit
//               (http) the HTTP ones share
//   objects     the layer-0 API (`Objects`), the one retry loop, ambiguous-write resolution
//   claim, lease, doc      the primitives
//   counter, once, semaphore     the sharded counter, made of docs; once and semaphore, made of leases
//   inspect, prune, check      what an operator reads, cleans up and checks
//   watch       a key's changes, polled with conditional reads
//   client      `Fencepost`: the whole API, each method a short delegation
//   testing     the test toolkit
//
// The npm package's JS binding is a crate of its own (binding/), over the public API and the
// `__private` items below.

mod base;
mod check;
mod claim;
mod client;
mod codec;
mod counter;
mod doc;
mod host;
mod inspect;
mod lease;
mod objects;
mod once;
mod prune;
mod semaphore;
pub mod store;
pub mod testing;
mod time;
mod watch;

pub use base::cancel::{Cancel, Cancelled};
pub use base::error::{CodedCallback, Error, LostReason, Result, StorageFailure};
pub use base::future::BoxFuture;
pub use base::sync::{MaybeSend, MaybeSync, Shared};
pub use check::{Check, StoreCheck, check_store};
pub use claim::Claim;
pub use client::{Fencepost, Options};
pub use counter::Counter;
pub use doc::{Doc, DocValue, UpdateOptions};
pub use host::clock::SystemClock;
pub use inspect::{Held, Inspection};
pub use lease::break_lease::Broken;
pub use lease::{Lease, LeaseOptions, LeaseView};
pub use objects::events::{Event, LeaseAction, OnEvent};
pub use objects::retry::RetryPolicy;
pub use objects::transition::{Transition, transition};
pub use objects::{Objects, WaitOptions, Written};
pub use once::{Once, OnceOptions};
pub use prune::{PruneOptions, Pruned};
pub use semaphore::{MAX_LIMIT as MAX_SEMAPHORE_LIMIT, Permit, PermitOptions, Semaphore};
pub use time::{Clock, ClockSource, Timestamp};
pub use watch::{Change, MIN_WATCH_INTERVAL, Seen, Watch, Watcher};

/// What fencepost's own JS binding (the `fencepost-js` crate in `binding/`, from which the npm
/// package is built) uses of the core beyond its public API: the JSON-level forms of the calls,
/// the host's Promise seam. Not a stable API; it changes with the binding.
#[doc(hidden)]
pub mod __private {
    pub use crate::base::error::quoted;
    pub use crate::base::number::number_text;
    pub use crate::codec::json::{
        ErrorKind as JsonErrorKind, fields_text as json_fields_text, read as read_json,
        texts_object as json_texts_object, to_canonical, to_canonical_text,
    };
    pub use crate::counter::{DEFAULT_SHARDS, MAX_SHARDS};
    pub use crate::doc::MAX_UPDATE_ATTEMPTS;
    #[cfg(target_arch = "wasm32")]
    pub use crate::host::{
        io::{request_mark, requests_in_flight_since},
        promise::settled,
    };
}

/// The Rust guide's examples (docs/rust.md), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/rust.md")]
struct RustGuideDoctests;

/// The README's Rust quickstart, compiled and run as a doctest (its other blocks are tagged with
/// other languages, which rustdoc leaves alone; tests/js/readme.mjs checks those).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Shared by the unit tests.
#[cfg(test)]
mod test_support {
    /// A small deterministic generator (xorshift64) for the random-input tests: the same inputs
    /// on every run and machine.
    pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }
}
