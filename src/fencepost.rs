//! `Fencepost`: the entry point of layer 1. Holds the objects layer; each primitive lives in its
//! own module (`claim`, `lease`, `doc`) as an `impl Fencepost` block.

use std::rc::Rc;

use serde_json::Value;

use crate::LocalBoxFuture;
use crate::cancel::Cancel;
use crate::error::Result;
use crate::objects::Objects;
use crate::platform::SystemClock;
use crate::retry::RetryPolicy;
use crate::store::ObjectStore;
use crate::time::{Clock, ClockSource};

/// A caller-supplied transition of a JSON value (`stateFn`, `update`, `cooperativeWrite`…). It may
/// be called more than once (each lost race calls it again), so it must be pure. An `Err` aborts the
/// operation with nothing written and reaches the caller unchanged.
pub type Transition<'a> = dyn FnMut(Value) -> LocalBoxFuture<'a, Result<Value>> + 'a;

/// Wrap a synchronous closure as a [`Transition`] (the usual case in Rust).
pub fn transition<'a>(mut f: impl FnMut(Value) -> Result<Value> + 'a) -> Box<Transition<'a>> {
    Box::new(move |v| {
        let out = f(v);
        Box::pin(async move { out })
    })
}

/// Options of [`Fencepost::new`]; `Options::default()` for the usual ones.
#[derive(Clone, Default)]
pub struct Options {
    /// Where "now" comes from (lease deadlines) and how to wait; defaults to [`SystemClock`].
    pub clock: Option<Rc<dyn Clock>>,
    /// How transient store failures are retried (5 attempts, full-jitter backoff by default).
    pub retry: RetryPolicy,
    /// Whose time lease deadlines are written and judged in: `clock` (default), or the store's
    /// (`clock` corrected by the offset the store's responses show).
    pub clock_source: ClockSource,
}

/// The coordination primitives on one store: [`Fencepost::claim`], [`Fencepost::lease`] (and
/// [`Fencepost::with_lease`], [`Fencepost::attach_lease`], [`Fencepost::cooperative_write`]),
/// [`Fencepost::doc`], and the layer below, [`Fencepost::objects`]. Cheap to clone; several
/// `Fencepost`s on one store behave like separate processes sharing a bucket.
#[derive(Clone)]
pub struct Fencepost {
    pub(crate) objects: Objects,
}

impl Fencepost {
    /// Coordination on `store`. Fails only for invalid `options`.
    pub fn new(store: Rc<dyn ObjectStore>, options: Options) -> Result<Self> {
        let clock = options.clock.unwrap_or_else(|| Rc::new(SystemClock));
        let objects = Objects::new(store, clock, options.retry)?.with_clock_source(options.clock_source);
        Ok(Fencepost { objects })
    }

    /// A handle whose calls obey `cancel`: waits and retries stop when it fires, and the call
    /// settles as described in [`Objects`]' "Cancellation". Docs made from it obey it too; a lease acquired
    /// through it does not (the cancel is the acquisition's; see [`crate::Lease::with_cancel`]).
    pub fn with_cancel(&self, cancel: &Cancel) -> Fencepost {
        Fencepost { objects: self.objects.with_cancel(cancel) }
    }

    /// The layer-0 API on the same store.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }
}
