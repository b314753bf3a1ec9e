//! Events for operators ([`crate::Options::on_event`]): every request to the store, every call's
//! end and every lease transition, handed synchronously to one callback as they happen — what
//! metrics, traces and logs are made from. Nothing is built or timed while no one listens.
//!
//! Requests are reported where the objects layer sends them (the one place every request passes),
//! calls where each public method ends ([`Objects::call`]), lease transitions by the lease module.

use crate::base::sync::Shared;
use crate::base::sync::SyncCell;

use super::Objects;
use crate::base::error::{Error, LostReason, Result};
use crate::store::{Op, Reply, Request, StoreResult};

/// The callback: called synchronously, on the task that made the request or call, so it must be
/// quick (queue the work). It cannot change a call's outcome.
#[cfg(not(target_arch = "wasm32"))]
pub type OnEvent = Shared<dyn Fn(&Event<'_>) + Send + Sync>;
/// Who hears events (see [`Event`]); in wasm32 nothing needs to be `Send`.
#[cfg(target_arch = "wasm32")]
pub type OnEvent = Shared<dyn Fn(&Event<'_>)>;

/// What happened. Field names are those of the JS events (`{type: "request", op, key, …}`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// One request to the store (each attempt of a retried request is one).
    Request {
        op: Op,
        key: &'a str,
        /// The HTTP status, or what it would be for stores without HTTP (200; 404 for a missing
        /// key; 412 for a refused condition; 204 for a delete); `None` when no answer came.
        status: Option<u16>,
        /// 1 for the first attempt of the request, 2 for its first retry, …
        attempt: u32,
        ms: f64,
        /// `"ok"`, `"absent"` (a GET of a missing key), `"not-modified"` (a conditional GET of an
        /// unchanged key: 304), `"refused"` (a condition did not hold),
        /// `"abandoned"` (cancelled in flight), or the failure's kind: `"transient"` (worth retrying),
        /// `"conflict"` (409 on a conditional write), `"indeterminate"` (no answer seen: the
        /// write may have landed) or `"fatal"`.
        outcome: &'a str,
    },
    /// A call of the API ended.
    Call {
        /// The method as the JS API names it: `"claim"`, `"lease"`, `"doc.update"`,
        /// `"lease.renew"`, `"objects.put"`, ….
        method: &'static str,
        /// The key (the prefix for `prune`, `objects.list` and `objects.entries`).
        key: &'a str,
        /// Requests the call made, all of them: a call that holds a lease throughout (`withLease`,
        /// `once`, `withPermit`) counts its acquisition, the renewals, the writes through the
        /// lease and the release, which report no call of their own.
        requests: u32,
        ms: f64,
        /// `"ok"`, or the error's code (`"LEASE_LOST"`, `"STORAGE_ERROR"`, …).
        outcome: &'static str,
    },
    /// A lease changed hands or state, as seen by this process.
    Lease { key: &'a str, epoch: u64, action: LeaseAction, reason: Option<LostReason> },
}

/// A lease transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseAction {
    Acquired,
    Renewed,
    Released,
    /// The period ended without a release through its handles (`reason` says how).
    Lost,
    /// An operator broke it (`epoch` is the epoch written).
    Broken,
}

impl LeaseAction {
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseAction::Acquired => "acquired",
            LeaseAction::Renewed => "renewed",
            LeaseAction::Released => "released",
            LeaseAction::Lost => "lost",
            LeaseAction::Broken => "broken",
        }
    }
}

/// One call being observed: its own request count and its start.
pub(crate) struct Call {
    method: &'static str,
    started: f64,
    scope: Shared<CallScope>,
}

/// What the requests made inside one call are counted in, until the call reports.
#[derive(Default)]
pub(super) struct CallScope {
    requests: SyncCell<u32>,
    /// Set when the call has reported: a handle that still carries the scope (a lease clone that
    /// outlived the call) starts calls of its own again.
    closed: SyncCell<bool>,
}

impl CallScope {
    fn open(&self) -> bool {
        !self.closed.get()
    }
}

/// The listener and, inside a call, that call's request count (see [`Objects::call`]).
#[derive(Clone, Default)]
pub(super) struct Observer {
    pub(super) on_event: Option<OnEvent>,
    pub(super) call: Option<Shared<CallScope>>,
}

impl Observer {
    /// The call this handle works inside, while it runs.
    fn running_call(&self) -> Option<&CallScope> {
        self.call.as_deref().filter(|scope| scope.open())
    }
}

impl Objects {
    /// Report `event`, when someone listens.
    pub(crate) fn emit(&self, event: Event<'_>) {
        if let Some(on_event) = &self.observer.on_event {
            // A handler that panics is the application's bug to find in its logs (the panic hook
            // prints it), not a failed call: as a JS handler's exception, it is caught here.
            #[cfg(panic = "unwind")]
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_event(&event)));
            #[cfg(not(panic = "unwind"))]
            on_event(&event);
        }
    }

    /// Milliseconds on the configured clock, for durations; only read while someone listens.
    fn millis(&self) -> f64 {
        self.clock.now().map_or(0.0, |t| t.as_millis_f64())
    }

    /// The start of a request, when someone listens.
    pub(super) fn request_started(&self) -> Option<f64> {
        self.observer.on_event.as_ref().map(|_| self.millis())
    }

    /// Report a request that has been answered (`Some`) or abandoned in flight (`None`).
    pub(super) fn request_ended(
        &self,
        started: Option<f64>,
        request: &Request<'_>,
        attempt: u32,
        answer: Option<&StoreResult<Reply>>,
    ) {
        let Some(started) = started else { return };
        if let Some(scope) = self.observer.running_call() {
            scope.requests.set(scope.requests.get() + 1);
        }
        let (status, outcome) = match answer {
            None => (None, "abandoned"),
            Some(Ok(reply)) => {
                let (status, outcome) = reply.status();
                (Some(status), outcome)
            }
            Some(Err(e)) => (e.status, e.kind.as_str()),
        };
        let ms = self.millis() - started;
        let (op, key) = (request.op(), request.key());
        self.emit(Event::Request { op, key, status, attempt, ms, outcome });
    }

    /// The handle one call of `method` works through, and the call's record: with a listener, the
    /// handle counts the call's own requests, and [`Call::end`] reports the call. Inside another
    /// call that is still running (the renewals and release of the lease `once`, `withLease` or
    /// `withPermit` holds) there is no call of its own: its requests are that call's, which
    /// reports them all.
    pub(crate) fn call(&self, method: &'static str) -> (Objects, Option<Call>) {
        if self.observer.on_event.is_none() || self.observer.running_call().is_some() {
            return (self.clone(), None);
        }
        let scope = Shared::new(CallScope::default());
        let mut scoped = self.clone();
        scoped.observer.call = Some(scope.clone());
        (scoped, Some(Call { method, started: self.millis(), scope }))
    }

    fn report_call(&self, call: Call, key: &str, outcome: &'static str) {
        // A call its cancel stopped ends with the canceller's own reason (a JS signal's reason is
        // handed back as it came, as a callback's error is): it reports that it was aborted.
        let aborted = self.cancel.as_ref().is_some_and(crate::base::cancel::Cancel::is_cancelled);
        let outcome = if outcome == "CALLBACK" && aborted { "ABORTED" } else { outcome };
        let ms = self.millis() - call.started;
        call.scope.closed.set(true);
        self.emit(Event::Call { method: call.method, key, requests: call.scope.requests.get(), ms, outcome });
    }
}

impl Call {
    /// Report the call's end (through `objects`, the handle it was made on) and hand its result on.
    pub(crate) fn end<T>(call: Option<Call>, objects: &Objects, key: &str, result: Result<T>) -> Result<T> {
        Call::report(call, objects, key, result.as_ref().map_or_else(Error::code, |_| "ok"));
        result
    }

    /// Report the call's end with `outcome` (`"ok"` or an error code).
    pub(crate) fn report(call: Option<Call>, objects: &Objects, key: &str, outcome: &'static str) {
        if let Some(call) = call {
            objects.report_call(call, key, outcome);
        }
    }
}
