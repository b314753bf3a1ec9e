//! Running a function under a lease: acquire, keep alive while the function runs, release.
//!
//! One behaviour for every caller (Rust's `Fencepost::with_lease` and the JS binding's
//! `withLease`, which cannot drop a Promise): the function always runs to its end. When the lease
//! is lost meanwhile, the function learns it through [`Lease::ended`] (JS: its `signal` aborts)
//! and through its guarded writes rejecting with `LeaseLost`; its result is then not trusted:
//! the call fails with the `LeaseLost` (or with the function's own error, if it failed).

use std::pin::pin;

use super::{Lease, LeaseOptions, acquire};
use crate::base::cancel::Cancel;
use crate::base::error::Error;
use crate::base::future::{Either, race};
use crate::objects::Objects;
use crate::objects::events::Call;
use crate::objects::transition::Transition;

/// Acquire `key`, run `f` with the lease while keep-alive renews it every
/// `options.keep_alive_every` seconds (default `ttl / 3`), then release it. `Ok(None)` without
/// calling `f` when the lease could not be acquired. Outcomes:
/// - `f` succeeds and the lease was held throughout → `f`'s output, after the release; a failed
///   release is reported (`Err`): the lease then stays held until its deadline, and the caller
///   should know that others cannot take it sooner.
/// - `f` fails → `f`'s error; the lease is released, and a failed release is not reported over
///   `f`'s own error (the lease then expires at its deadline).
/// - the lease is lost while `f` runs → `f` runs on to its end (watching [`Lease::ended`] lets it
///   stop early); then `f`'s error if it failed, else the `LeaseLost`: its work was not fenced to
///   the end. Nothing is released (the period is over).
///
/// `f` may release the lease itself; keep-alive then stops and `f` runs on.
pub(crate) async fn with_lease<S, T, E, F>(
    objects: &Objects,
    key: &str,
    options: LeaseOptions<S>,
    state_fn: Option<&mut Transition<'_>>,
    f: F,
) -> std::result::Result<Option<T>, E>
where
    F: AsyncFnOnce(&Lease<S>) -> std::result::Result<T, E>,
    E: From<Error> + 'static,
{
    let (scoped, call) = objects.call("withLease");
    let (ran, outcome) = run(&scoped, key, options, state_fn, f).await;
    Call::report(call, objects, key, outcome);
    ran
}

/// [`with_lease`], and its outcome as a call event reports it: `"ok"`, the code of fencepost's
/// own error (`f`'s too, when it is one), or `"CALLBACK"` when `f` failed otherwise.
async fn run<S, T, E, F>(
    objects: &Objects,
    key: &str,
    options: LeaseOptions<S>,
    state_fn: Option<&mut Transition<'_>>,
    f: F,
) -> (std::result::Result<Option<T>, E>, &'static str)
where
    F: AsyncFnOnce(&Lease<S>) -> std::result::Result<T, E>,
    E: From<Error> + 'static,
{
    let every = options.keep_alive_every;
    if let Err(e) = check_every(options.ttl, every) {
        return ours(e);
    }
    let lease = match acquire::lease(objects, key, options.state_type(), state_fn).await {
        Ok(Some(lease)) => lease.typed::<S>(),
        Ok(None) => return (Ok(None), "ok"),
        Err(e) => return ours(e),
    };
    let (held, outcome) = hold(objects, lease, every, f, &|_| None).await;
    (held.map(Some), outcome)
}

/// A keep-alive interval (`None`: the default), checked before anything is acquired, so a bad one
/// leaves nothing to release. For every held call: `with_lease`, `once`, `with_permit`.
pub(crate) fn check_every(ttl: f64, every: Option<f64>) -> crate::base::error::Result<()> {
    every.map_or(Ok(()), |every| super::keep_alive::check_interval(ttl, every))
}

/// The outcome of a call whose `f` failed with `e`: the code of fencepost's own error when `e` is
/// one (a `LeaseLost` from a guarded write inside `f`; a host's coded callback error, see
/// [`Error::callback_coded`]), else `CALLBACK`.
pub(crate) fn callback_outcome<E: 'static>(e: &E) -> &'static str {
    (e as &dyn std::any::Any).downcast_ref::<Error>().map_or("CALLBACK", Error::code)
}

/// An error of fencepost's own as a held call's outcome (its code, for the call event).
pub(crate) fn ours<T, E: From<Error>>(e: Error) -> (std::result::Result<T, E>, &'static str) {
    let code = e.code();
    (Err(E::from(e)), code)
}

/// The final state of a held call's lease for `f`'s outcome (`None`: the state as it stands).
/// Behind a reference rather than a type parameter, so `with_lease`, `once` and `with_permit`
/// share one copy of [`hold`] where their `f` is the same type (the npm package's wasm).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Finish<'a, T, E> = dyn Fn(std::result::Result<&T, &E>) -> Option<serde_json::Value> + Sync + 'a;
#[cfg(target_arch = "wasm32")]
pub(crate) type Finish<'a, T, E> = dyn Fn(std::result::Result<&T, &E>) -> Option<serde_json::Value> + 'a;

/// Run `f` with `lease` (already acquired) while keep-alive renews it every `every` seconds
/// (`None`: `ttl / 3`), then release it with the final state `finish` gives for `f`'s outcome
/// (`None`: the state as it stands). The outcomes are [`with_lease`]'s; `once` records its run
/// through `finish`. The renewals, the release and what `f` does through the lease are requests
/// of the call that `call` (its handle) is, as the acquisition was.
pub(crate) async fn hold<S, T, E, F>(
    call: &Objects,
    lease: Lease<S>,
    every: Option<f64>,
    f: F,
    finish: &Finish<'_, T, E>,
) -> (std::result::Result<T, E>, &'static str)
where
    F: AsyncFnOnce(&Lease<S>) -> std::result::Result<T, E>,
    E: From<Error> + 'static,
{
    let lease = lease.counted_in(call);
    // Cancelled while the acquisition was on its way, and it landed: `f` does not start. The lease
    // goes back at once (its release is not the caller's to cancel; `once` records the run as
    // failed, so the next call runs it), and the call ends with the cancel's reason.
    if let Err(reason) = call.check_cancel() {
        let _ = lease.release_value(finish(Err(&E::from(reason.clone())))).await;
        return ours(reason);
    }
    let mut held = ReleaseOnDrop::arm(&lease);
    let stop = Cancel::new();
    let mut keep_alive = pin!(lease.keep_alive_with(every, &stop));
    let mut work = pin!(f(&lease));
    let outcome = match race(work.as_mut(), keep_alive.as_mut()).await {
        Either::Left(outcome) => {
            // Stop keep-alive and let a renewal in flight settle, so the handle's view is current
            // for the release.
            stop.cancel();
            let _ = keep_alive.await;
            outcome
        }
        // Keep-alive is over (lost, or released by `f`): `f` runs on to its end.
        Either::Right(_) => work.await,
    };
    // The release obeys the caller's cancel as any write does (an attempt in flight abandoned,
    // read back once), unless it fired while `f` ran on: the lease then still goes back, retried
    // as usual, rather than stay held until its deadline.
    let releasing = match call.cancel() {
        Some(cancel) if !cancel.is_cancelled() => lease.with_cancel(cancel),
        _ => lease.clone(),
    };
    let ended = match (outcome, lease.lost()) {
        (Err(e), lost) => {
            let record = finish(Err(&e));
            let recorded = record.is_some();
            let released = match lost {
                Some(lost) => Err(lost),
                None if lease.ended().is_cancelled() => Ok(()),
                None => releasing.release_value(record).await,
            };
            match released {
                // `f` failed after the lease was lost (found before, or by the release writing the
                // failure), and its failure was to be recorded (`once`): it cannot be, as another
                // holder has the key, so the call says so with `LeaseLost`, as when `f` succeeded.
                // (`withLease` and `withPermit` record nothing: `f`'s own error.)
                Err(lost @ Error::LeaseLost { .. }) if recorded => ours(lost),
                _ => {
                    let outcome = callback_outcome(&e);
                    (Err(e), outcome)
                }
            }
        }
        (Ok(_), Some(lost)) => ours(lost),
        (Ok(out), None) => match lease.ended().is_cancelled() {
            true => (Ok(out), "ok"),
            false => match releasing.release_value(finish(Ok(&out))).await {
                Ok(()) => (Ok(out), "ok"),
                Err(e) => ours(e),
            },
        },
    };
    held.disarm();
    ended
}

/// Held while `f` runs under the lease: when the future is dropped before the end (a client that
/// disconnected, a timeout), the lease is released in the background where a runtime is at hand,
/// as dropping a `MutexGuard` unlocks; elsewhere it stays held until its deadline. Natively and in
/// Rust Workers (feature `worker`); the npm package's calls are Promises that always run to their
/// end, so its wasm goes without (the drop paths it would add to every held call are 5 KB gzipped).
#[cfg(any(not(target_arch = "wasm32"), feature = "worker"))]
struct ReleaseOnDrop(Option<Lease>);

#[cfg(any(not(target_arch = "wasm32"), feature = "worker"))]
impl ReleaseOnDrop {
    fn arm<S>(lease: &Lease<S>) -> Self {
        ReleaseOnDrop(Some(lease.detached().typed()))
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

#[cfg(all(target_arch = "wasm32", not(feature = "worker")))]
struct ReleaseOnDrop;

#[cfg(all(target_arch = "wasm32", not(feature = "worker")))]
impl ReleaseOnDrop {
    fn arm<S>(_: &Lease<S>) -> Self {
        ReleaseOnDrop
    }

    fn disarm(&mut self) {}
}

#[cfg(any(not(target_arch = "wasm32"), feature = "worker"))]
impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let Some(lease) = self.0.take() else { return };
        if lease.ended().is_cancelled() {
            return;
        }
        // Without a runtime nothing runs: keep-alive went with the future, and the lease lapses
        // at its deadline.
        let _ = crate::host::spawn::detached(Box::pin(async move {
            let _ = lease.release_value(None).await;
        }));
    }
}
