//! Keeping a lease: [`Lease::keep_alive`] renews until stopped, released or lost, and gives up
//! *before* the deadline when it cannot renew in time.

use std::future::Future;

use super::Lease;
use crate::base::cancel::Cancel;
use crate::base::error::{Error, LostReason, Result};
use crate::base::future::{Either, race};
use crate::base::sync::MaybeSend;
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

impl<T> Lease<T> {
    /// Renew every `ttl / 3` seconds until `stop` fires (see [`Lease::keep_alive_every`]).
    pub fn keep_alive(&self, stop: &Cancel) -> impl Future<Output = Result<()>> + MaybeSend + 'static {
        self.keep_alive_with(None, stop)
    }

    /// Renew every `every` seconds (must be > 0 and < ttl) until `stop` fires
    /// (→ `Ok`), the lease is released through a handle on its period (→ `Ok`), or it is lost
    /// (→ `Err(LeaseLost)`, and [`Lease::ended`] fires).
    ///
    /// A failed renewal (a storage error, an ambiguous write) is retried with backoff, but only
    /// until `deadline - renew_margin(ttl)`: a renewal still not through by then is abandoned, the
    /// lease is marked lost ("could not renew before the deadline") and the future returns —
    /// before the deadline, never after. It never waits past halfway to that cutoff between
    /// renewals, so a large `every` still leaves room for retries.
    ///
    /// The future owns what it needs (`'static`, and `Send` natively): drive it, or spawn it
    /// (`tokio::spawn`; `spawn_local` in wasm).
    /// The handle's own cancel, if any, stops it as `stop` does.
    pub fn keep_alive_every(
        &self,
        every: f64,
        stop: &Cancel,
    ) -> impl Future<Output = Result<()>> + MaybeSend + 'static {
        self.keep_alive_with(Some(every), stop)
    }

    /// Keep-alive every `every` seconds, `None` for `ttl / 3`.
    pub(crate) fn keep_alive_with(
        &self,
        every: Option<f64>,
        stop: &Cancel,
    ) -> impl Future<Output = Result<()>> + MaybeSend + 'static {
        let halt = Cancel::new();
        halt.follow(stop);
        if let Some(own) = self.objects.cancel() {
            halt.follow(own);
        }
        // Renewals obey `halt`, so one in flight when it fires is settled, not left unknown.
        let lease = self.with_cancel(&halt).typed::<serde_json::Value>();
        async move { lease.keep_renewing(every, &halt).await }
    }

    /// The interval `every` stands for (default `ttl / 3`), or why it cannot be used: callers that
    /// spawn keep-alive (the JS binding) report a bad one at once instead of from the task.
    pub(crate) fn keep_alive_interval(&self, every: Option<f64>) -> Result<f64> {
        let ttl = self.period.ttl;
        let every = every.unwrap_or(ttl / 3.0);
        check_interval(ttl, every)?;
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
            return Err(self.give_up("could not renew before the deadline", None));
        }
        // The last failure, for the `LeaseLost` if the deadline comes first (its `cause`).
        let last_failure = crate::base::sync::Lock::new(None);
        let attempts = async {
            let mut failures = 0;
            loop {
                match self.renew().await {
                    Ok(()) => return Ok(()),
                    Err(lost @ Error::LeaseLost { .. }) => return Err(lost),
                    // Stopped mid-renewal: the objects layer has settled the write.
                    Err(_) if halt.is_cancelled() => return Ok(()),
                    Err(e @ (Error::Storage(_) | Error::AmbiguousWrite { .. } | Error::Conflict { .. })) => {
                        *last_failure.lock() = Some(e);
                        failures += 1;
                        if self.objects.sleep(retry_pause(failures, self.objects.jitter())).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(other) => return Err(self.give_up(&format!("could not renew: {other}"), Some(other))),
                }
            }
        };
        match race(attempts, self.objects.timer(left)).await {
            Either::Left(outcome) => outcome,
            // Abandoning the renewal in flight is safe: if it still lands, it only delays others.
            Either::Right(()) => Err(self.give_up("could not renew before the deadline", last_failure.lock().take())),
        }
    }

    /// Seconds from now (the deadline's clock) until `at`; a failing clock ends the period, since
    /// without time the lease cannot be kept safely.
    fn secs_until(&self, at: Timestamp) -> Result<f64> {
        match self.objects.now() {
            Ok(now) => Ok(now.secs_until(at)),
            Err(e) => Err(self.give_up(&format!("the clock failed: {e}"), Some(e))),
        }
    }

    /// Keep-alive could not keep the period: it ends as expired (`cause`: the last failure).
    fn give_up(&self, why: &str, cause: Option<Error>) -> Error {
        self.end(Error::LeaseLost {
            key: self.key().to_owned(),
            reason: LostReason::Expired,
            message: why.to_owned(),
            cause: cause.map(Box::new),
        })
    }
}

/// A keep-alive interval: seconds, > 0 and < the ttl.
pub(crate) fn check_interval(ttl: f64, every: f64) -> Result<()> {
    if every.is_finite() && every > 0.0 && every < ttl {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "keep-alive interval must be > 0 and < the ttl ({} s), got {}",
        crate::base::number::number_text(ttl),
        crate::base::number::number_text(every)
    )))
}

/// The pause after the `n`-th failed renewal: doubling, with equal jitter.
fn retry_pause(n: u32, unit: f64) -> f64 {
    crate::objects::retry::equal_jitter(n, RETRY_FIRST, RETRY_MAX, unit)
}
