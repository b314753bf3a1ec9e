//! Keeping a lease: [`Lease::keep_alive`] renews until stopped, released or lost, and gives up
//! *before* the deadline when it cannot renew in time; [`Fencepost::with_lease`] runs a function
//! under a lease kept alive meanwhile.

use std::future::Future;
use std::pin::pin;

use super::Lease;
use super::LeaseOptions;
use crate::cancel::Cancel;
use crate::error::{Error, Result};
use crate::fencepost::{Fencepost, Transition};
use crate::race::{Either, race};
use crate::time::Timestamp;

/// Retries of a failed renewal wait from this (seconds), doubling up to `RETRY_MAX`.
const RETRY_FIRST: f64 = 0.05;
const RETRY_MAX: f64 = 1.0;

/// How long before its deadline keep-alive gives a lease up when it could not renew it:
/// `min(ttl / 10, 1 s)`. A holder's clock, and the store's, may each be a little off; stopping
/// this much early means the holder has stopped before anyone else can see the lease expired.
pub fn renew_margin(ttl: f64) -> f64 {
    (ttl / 10.0).min(1.0)
}

impl Lease {
    /// Renew every `every` seconds (default `ttl / 3`; must be > 0 and < ttl) until `stop` fires
    /// (→ `Ok`), the lease is released through a handle on its period (→ `Ok`), or it is lost
    /// (→ `Err(LeaseLost)`, and [`Lease::ended`] fires).
    ///
    /// A failed renewal (a storage error, an ambiguous write) is retried with backoff, but only
    /// until `deadline - renew_margin(ttl)`: a renewal still not through by then is abandoned, the
    /// lease is marked lost ("could not renew before the deadline") and the future returns —
    /// before the deadline, never after. It never waits past halfway to that cutoff between
    /// renewals, so a large `every` still leaves room for retries.
    ///
    /// The future owns what it needs (`'static`): drive it, or spawn it (`spawn_local` in wasm).
    /// The handle's own cancel, if any, stops it as `stop` does.
    pub fn keep_alive(&self, every: Option<f64>, stop: &Cancel) -> impl Future<Output = Result<()>> + 'static {
        let halt = Cancel::new();
        halt.follow(stop);
        if let Some(own) = self.objects.cancel() {
            halt.follow(own);
        }
        // Renewals obey `halt`, so one in flight when it fires is settled, not left unknown.
        let lease = self.with_cancel(&halt);
        async move { lease.keep_renewing(every, &halt).await }
    }

    /// The interval `every` stands for (default `ttl / 3`), or why it cannot be used: callers that
    /// spawn keep-alive (the JS binding) report a bad one at once instead of from the task.
    pub fn keep_alive_interval(&self, every: Option<f64>) -> Result<f64> {
        let ttl = self.period.ttl;
        let every = every.unwrap_or(ttl / 3.0);
        if !every.is_finite() || every <= 0.0 || every >= ttl {
            return Err(Error::invalid(format!(
                "keep-alive interval must be > 0 and < the ttl ({} s), got {}",
                crate::json::number_text(ttl),
                crate::json::number_text(every)
            )));
        }
        Ok(every)
    }

    async fn keep_renewing(&self, every: Option<f64>, halt: &Cancel) -> Result<()> {
        let ttl = self.period.ttl;
        let every = self.keep_alive_interval(every)?;
        let margin = renew_margin(ttl);
        loop {
            if let Some(over) = self.keep_alive_over(halt) {
                return over;
            }
            let cutoff = self.deadline_at().plus_secs(-margin);
            let pause = every.min(self.secs_until(cutoff)? / 2.0);
            if pause > 0.0 {
                match race(self.objects.sleep(pause), self.period.ended.cancelled()).await {
                    Either::Left(Ok(())) => {}
                    // Stopped or ended: the top of the loop says which.
                    _ => continue,
                }
            }
            match self.renew_before(cutoff, halt).await {
                Err(_) if self.is_released() => return Ok(()),
                other => other?,
            }
        }
    }

    /// Why keep-alive is over, if it is.
    fn keep_alive_over(&self, halt: &Cancel) -> Option<Result<()>> {
        if self.is_released() {
            return Some(Ok(()));
        }
        if let Some(lost) = self.ended_error() {
            return Some(Err(lost));
        }
        halt.is_cancelled().then_some(Ok(()))
    }

    /// One renewal, retried on transient failures, raced against the cutoff.
    async fn renew_before(&self, cutoff: Timestamp, halt: &Cancel) -> Result<()> {
        let left = self.secs_until(cutoff)?;
        if left <= 0.0 {
            return Err(self.give_up("could not renew before the deadline"));
        }
        let attempts = async {
            let mut failures = 0;
            loop {
                match self.renew().await {
                    Ok(()) => return Ok(()),
                    Err(lost @ Error::LeaseLost { .. }) => return Err(lost),
                    // Stopped mid-renewal: the objects layer has settled the write.
                    Err(_) if halt.is_cancelled() => return Ok(()),
                    Err(Error::Storage(_) | Error::AmbiguousWrite { .. } | Error::Conflict { .. }) => {
                        failures += 1;
                        if self.objects.sleep(retry_pause(failures)).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(other) => return Err(self.give_up(&format!("could not renew: {other}"))),
                }
            }
        };
        match race(attempts, self.objects.timer(left)).await {
            Either::Left(outcome) => outcome,
            // Abandoning the renewal in flight is safe: if it still lands, it only delays others.
            Either::Right(()) => Err(self.give_up("could not renew before the deadline")),
        }
    }

    /// Seconds from now (the deadline's clock) until `at`; a failing clock ends the period, since
    /// without time the lease cannot be kept safely.
    fn secs_until(&self, at: Timestamp) -> Result<f64> {
        match self.objects.now() {
            Ok(now) => Ok(now.secs_until(at)),
            Err(e) => Err(self.give_up(&format!("the clock failed: {e}"))),
        }
    }

    fn give_up(&self, why: &str) -> Error {
        self.end(Error::lease_lost(self.key(), why))
    }
}

/// The pause after the `n`-th failed renewal: doubling, with equal jitter.
fn retry_pause(n: u32) -> f64 {
    crate::retry::equal_jitter(n, RETRY_FIRST, RETRY_MAX)
}

impl Fencepost {
    /// Acquire `key` (honouring `options.wait` and this handle's cancel), run `f` with the lease
    /// while keep-alive renews it, then release it. `Ok(None)` without calling `f` when the lease
    /// could not be acquired.
    ///
    /// - `f` finishes → its output; the lease is released (a failed release is not reported: the
    ///   lease then expires at its deadline, and `f`'s result is what the caller needs).
    /// - keep-alive loses the lease first → `Err(LeaseLost)`, and `f`'s future is dropped (it
    ///   can also watch [`Lease::ended`] itself).
    /// - this handle's cancel fires while `f` runs → `f` is dropped, the lease released, and the
    ///   cancel's reason returned.
    ///
    /// `f` may release the lease itself; keep-alive then stops and `f` runs on. `f` is an async
    /// closure (`async |lease| { … }`), so it may borrow from its surroundings.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, LeaseOptions, Options, transition};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(Rc::new(MemoryStore::new()), Options::default())?;
    /// let mut steps_run = Vec::new();
    /// let outcome = db
    ///     .with_lease("jobs/rollup", LeaseOptions::new(30.0), None, async |lease| {
    ///         for step in 1..=3 {
    ///             // ... one idempotent step of work, then a checkpoint guarded by the epoch ...
    ///             lease.write(json!({"step": step})).await?;
    ///             steps_run.push(step);
    ///         }
    ///         Ok::<_, fencepost::Error>(lease.epoch())
    ///     })
    ///     .await?;
    /// assert_eq!(outcome.transpose()?, Some(1), "ran under epoch 1");
    /// assert_eq!(steps_run, [1, 2, 3]);
    /// // Released at the end: the next taker gets epoch 2 and the last checkpoint.
    /// let next = db.lease("jobs/rollup", LeaseOptions::new(30.0), None).await?.expect("released");
    /// assert_eq!((next.epoch(), next.state()), (2, json!({"step": 3})));
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn with_lease<T, F>(
        &self,
        key: &str,
        options: LeaseOptions,
        state_fn: Option<&mut Transition<'_>>,
        f: F,
    ) -> Result<Option<T>>
    where
        F: AsyncFnOnce(&Lease) -> T,
    {
        let Some(lease) = self.lease(key, options, state_fn).await? else { return Ok(None) };
        let stop = Cancel::new();
        let mut keep_alive = pin!(lease.keep_alive(None, &stop));
        let caller = self.objects.cancel().cloned();
        let abandoned = async move {
            match caller {
                Some(cancel) => cancel.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let mut work = pin!(race(f(&lease), abandoned));
        let (outcome, keep_alive_over) = match race(work.as_mut(), keep_alive.as_mut()).await {
            Either::Left(outcome) => (outcome, false),
            Either::Right(Err(lost)) => return Err(lost),
            // Released by `f` itself: nothing left to keep alive; `f` runs on.
            Either::Right(Ok(())) => (work.as_mut().await, true),
        };
        // Stop keep-alive and let it settle a renewal in flight, so the handle's view is current
        // for the release.
        stop.cancel();
        if !keep_alive_over {
            let _ = keep_alive.as_mut().await;
        }
        if !lease.ended().is_cancelled() {
            let _ = lease.release(None).await;
        }
        match outcome {
            Either::Left(out) => Ok(Some(out)),
            Either::Right(reason) => Err(reason),
        }
    }
}
