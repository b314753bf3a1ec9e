//! Retries: the policy (exponential backoff with full jitter within a bounded budget), the one
//! loop that repeats a request within it ([`Objects::retrying`]; the write path in `write` makes
//! its attempts through the same backoff), and the equal-jitter schedule of polls and renewals.
//! The only place fencepost waits between attempts of the same request. Bounded because Workers cap subrequests
//! per invocation and a caller must hear "storage is down" rather than wait forever.

use super::Objects;
use crate::base::error::{Error, Result};
use crate::store::{FailureKind, Reply, Request};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per request, the first included (so `1` disables retries).
    pub max_attempts: u32,
    /// Backoff base, seconds: the n-th retry waits a uniform random time in [0, base·2ⁿ⁻¹].
    pub base_delay: f64,
    /// Backoff cap, seconds.
    pub max_delay: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 5, base_delay: 0.05, max_delay: 2.0 }
    }
}

impl RetryPolicy {
    pub fn validate(&self) -> Result<()> {
        if !(1..=20).contains(&self.max_attempts) {
            return Err(Error::invalid("retry.maxAttempts must be between 1 and 20"));
        }
        for (name, v) in [("retry.baseDelay", self.base_delay), ("retry.maxDelay", self.max_delay)] {
            if !v.is_finite() || !(0.0..=60.0).contains(&v) {
                return Err(Error::invalid(format!("{name} must be between 0 and 60 seconds")));
            }
        }
        Ok(())
    }

    /// The wait before retry number `retry` (1-based), seconds: full jitter (AWS's recommendation,
    /// which spreads contending clients best).
    pub fn delay(&self, retry: u32, unit_random: f64) -> f64 {
        let exp = self.base_delay * 2f64.powi(retry.saturating_sub(1).min(30) as i32);
        exp.min(self.max_delay) * unit_random
    }

    /// [`RetryPolicy::delay`], or after an answer that throttled the key (429) at least a random
    /// half to whole of [`THROTTLED_PAUSE`] (at most `max_delay`), so that the key's second passes.
    pub(crate) fn delay_after(&self, retry: u32, unit_random: f64, throttled: bool) -> f64 {
        let delay = self.delay(retry, unit_random);
        if !throttled {
            return delay;
        }
        delay.max(THROTTLED_PAUSE.min(self.max_delay) * (0.5 + 0.5 * unit_random))
    }
}

/// The `n`-th (1-based) of a schedule doubling from `first` up to `max` seconds, with "equal
/// jitter" (half fixed, half random): waiters spread out, but none waits much less than the
/// schedule says. For polls and renewals, where full jitter would sometimes retry at once.
/// `unit` is a random float in [0, 1) ([`Objects::jitter`]).
pub(crate) fn equal_jitter(n: u32, first: f64, max: f64, unit: f64) -> f64 {
    let d = (first * 2f64.powi(n.saturating_sub(1).min(16) as i32)).min(max);
    d * (0.5 + 0.5 * unit)
}

impl Objects {
    /// Run a request that is safe to repeat (get, delete, list) within the retry budget. Retries
    /// stop at a cancel either way; `abandon` says whether an attempt in flight is abandoned too.
    pub(crate) async fn retrying(&self, request: Request<'_>, abandon: Abandon) -> Result<Reply> {
        Ok(self.retrying_noted(request, abandon).await?.0)
    }

    /// [`Objects::retrying`], also saying whether an attempt before the answer went unanswered
    /// (a lost response, a 500): it may have been carried out, so the answer is to a repeat.
    pub(crate) async fn retrying_noted(&self, request: Request<'_>, abandon: Abandon) -> Result<(Reply, bool)> {
        self.retrying_or_stopped(request, abandon).await.map_err(|stopped| stopped.error)
    }

    /// [`Objects::retrying_noted`], its failure saying whether an attempt may still be carried out
    /// when a cancel stopped the call: one abandoned in flight, or an earlier one that went
    /// unanswered (what a delete settles by reading back; nothing else can land).
    pub(crate) async fn retrying_or_stopped(
        &self,
        request: Request<'_>,
        abandon: Abandon,
    ) -> std::result::Result<(Reply, bool), Stopped> {
        let mut attempt = 1;
        let mut unanswered = false;
        let stopped = |error, may_land| Stopped { error, may_land };
        loop {
            // Cancelled before this attempt is sent: only an earlier unanswered one may land. (A
            // read-back is never abandoned: it is sent even when the call is cancelled.)
            if let Abandon::OnCancel = abandon {
                self.check_cancel().map_err(|e| stopped(e, unanswered))?;
            }
            match self.send(request, attempt, abandon).await.map_err(|e| stopped(e, true))? {
                Ok(v) => return Ok((v, unanswered)),
                Err(e) if e.kind != FailureKind::Fatal && attempt < self.retry.max_attempts => {
                    unanswered |= e.kind == FailureKind::Indeterminate;
                    self.backoff(attempt, throttled(&e)).await.map_err(|e| stopped(e, unanswered))?;
                    attempt += 1;
                }
                // Fatal, or the budget is spent: report the store's own words.
                Err(e) => return Err(stopped(e.into_error(request.object_key()), false)),
            }
        }
    }

    /// The wait before retry number `retry` ([`RetryPolicy::delay_after`]); the cancel's reason if
    /// it fires (or has fired).
    pub(super) async fn backoff(&self, retry: u32, throttled: bool) -> Result<()> {
        self.check_cancel()?;
        let delay = self.retry.delay_after(retry, self.jitter(), throttled);
        if delay > 0.0 { self.sleep(delay).await } else { Ok(()) }
    }
}

/// The pause a store asks for when it throttles a key (429): R2 takes one write per second per
/// key, so a lease released right after it was taken, or a `once` whose function returns at
/// once, is answered 429 for up to a second: the backoff's first steps (tens of milliseconds)
/// would spend the whole budget inside that second. (S3's 503 `SlowDown` is about the request
/// rate of a whole prefix, and keeps the plain backoff.)
const THROTTLED_PAUSE: f64 = 1.0;

/// Whether the store throttled the key (429).
pub(crate) fn throttled(e: &crate::store::StoreError) -> bool {
    e.status == Some(429)
}

/// How [`Objects::retrying_or_stopped`] failed: the error, and whether an attempt may still be
/// carried out (the call was cancelled with one in flight, or after one went unanswered).
pub(crate) struct Stopped {
    pub error: Error,
    pub may_land: bool,
}

/// Whether a cancel abandons a request in flight ([`Objects::retrying`]).
#[derive(Clone, Copy)]
pub(crate) enum Abandon {
    OnCancel,
    /// Always awaited: a read-back, which settles a write in flight.
    Never,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_and_cap() {
        let p = RetryPolicy { max_attempts: 10, base_delay: 0.1, max_delay: 1.0 };
        assert_eq!(p.delay(1, 1.0), 0.1);
        assert_eq!(p.delay(3, 1.0), 0.4);
        assert_eq!(p.delay(9, 1.0), 1.0);
        assert_eq!(p.delay(4, 0.5), 0.4);
        assert_eq!(p.delay(4, 0.0), 0.0);
        // After a 429: half to all of a second, whatever the step; capped by max_delay.
        assert_eq!(p.delay_after(1, 0.0, true), 0.5);
        assert_eq!(p.delay_after(1, 1.0, true), 1.0);
        assert_eq!(p.delay_after(9, 1.0, true), 1.0);
        assert_eq!(p.delay_after(1, 1.0, false), 0.1);
        let short = RetryPolicy { max_delay: 0.2, ..p };
        assert_eq!(short.delay_after(1, 1.0, true), 0.2);
    }

    #[test]
    fn validates() {
        assert!(RetryPolicy::default().validate().is_ok());
        assert!(RetryPolicy { max_attempts: 0, ..Default::default() }.validate().is_err());
        assert!(RetryPolicy { base_delay: f64::NAN, ..Default::default() }.validate().is_err());
    }
}
