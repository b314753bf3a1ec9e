//! fencepost: coordination for serverless and edge code on nothing but an object store's
//! conditional writes. See `SPEC.md`-derived docs in the README.
//!
//! Layering (each layer knows only the one below it):
//! - [`store`]: the `ObjectStore` seam and its backends (memory, S3 over an HTTP transport, R2
//!   binding) plus a fault-injecting wrapper for tests;
//! - [`objects`]: layer 0 for callers: key rules, bounded retries with backoff, resolution of
//!   ambiguous writes through write tokens, `wait_for`;
//! - [`claim`], [`lease`], [`doc`]: layer 1, the coordination primitives, on [`Fencepost`];
//! - `wasm` (wasm32 only): the thin JS binding.

#![allow(async_fn_in_trait)]
#![doc = include_str!("../README.md")]

pub mod cancel;
pub mod claim;
pub mod doc;
pub mod error;
pub mod fencepost;
#[cfg(target_arch = "wasm32")]
mod js;
pub mod json;
pub mod keys;
pub mod lease;
pub mod objects;
mod platform;
pub mod race;
pub mod retry;
pub mod store;
pub mod time;
pub mod token;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use cancel::Cancel;
pub use claim::Claim;
pub use doc::{Doc, DocValue};
pub use error::{Error, Result, StorageFailure};
pub use fencepost::{Fencepost, Options};
pub use lease::{Lease, LeaseOptions};
pub use objects::{Objects, Written};
pub use platform::SystemClock;
pub use retry::RetryPolicy;
pub use time::{Clock, ClockSource, ManualClock, Timestamp};

/// A boxed future that need not be `Send`: wasm hosts and Workers are single-threaded.
pub type LocalBoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>>;
