//! A clock that only moves when told to (tests, simulations), in two flavours:
//! - plain ([`ManualClock::new`]): `sleep` is a timer that stays pending until [`ManualClock::advance`]
//!   (or `set`, or `step_until`) moves time to its due instant; so a test drives keep-alive,
//!   lease waits and backoff deterministically, with no real waiting;
//! - auto-advancing ([`ManualClock::auto_advancing`]): a `sleep` moves the clock forward itself
//!   when it completes, so code that backs off runs through its waits at once (the conformance
//!   suite relies on this, since it runs against real stores too). Not for code that races a
//!   timer against a request (keep-alive's deadline, a store's timeout): the timer wins as soon
//!   as the request takes longer than a poll or two.

use crate::base::sync::Shared;
use crate::base::sync::{Lock, SyncCell};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{Clock, Timestamp};
use crate::base::future::BoxFuture;

#[derive(Clone)]
pub struct ManualClock {
    inner: Shared<Inner>,
}

struct Inner {
    now: SyncCell<Timestamp>,
    auto_advance: bool,
    /// Pending timers, kept in (due instant, id) order so they are woken in due order. A plain
    /// sorted list: a test has a handful of timers, and a map would be kilobytes more wasm.
    timers: Lock<Timers>,
    next_id: SyncCell<u64>,
    /// The state of the jitter generator, seeded by the start instant ([`Clock::jitter`]).
    jitter: SyncCell<u64>,
}

impl ManualClock {
    /// 2026-01-01T00:00:00Z.
    pub const START_2026: Timestamp = Timestamp::from_micros(1_767_225_600_000_000);

    /// A plain manual clock: sleeps wait for `advance`.
    pub fn new(start: Timestamp) -> Self {
        Self::build(start, false)
    }

    /// A clock whose sleeps advance it (by their duration, when they complete) instead of waiting.
    pub fn auto_advancing(start: Timestamp) -> Self {
        Self::build(start, true)
    }

    /// A plain manual clock starting at 2026-01-01T00:00:00Z.
    pub fn starting_2026() -> Self {
        Self::new(Self::START_2026)
    }

    fn build(start: Timestamp, auto_advance: bool) -> Self {
        let inner = Inner {
            now: SyncCell::new(start),
            auto_advance,
            timers: Lock::default(),
            next_id: SyncCell::new(0),
            jitter: SyncCell::new(start.as_micros() as u64),
        };
        ManualClock { inner: Shared::new(inner) }
    }

    pub fn is_auto_advancing(&self) -> bool {
        self.inner.auto_advance
    }

    /// Move time forward by `secs` (backwards if negative), waking every timer due by then.
    pub fn advance(&self, secs: f64) {
        self.set(self.inner.now.get().plus_secs(secs));
    }

    /// Jump to `at`, waking every timer due by then, in due order. The woken tasks run when their
    /// executor next polls them, so they all see `at`: to run timers one instant at a time (a
    /// keep-alive renewing at each of its intervals), use [`ManualClock::step_until`].
    pub fn set(&self, at: Timestamp) {
        self.inner.now.set(at);
        let due: Vec<Waker> = {
            let mut timers = self.inner.timers.lock();
            let due = timers.0.partition_point(|(when, _, _)| *when <= at);
            timers.0.drain(..due).map(|(_, _, waker)| waker).collect()
        };
        for waker in due {
            waker.wake();
        }
    }

    /// The earliest instant a pending timer is due.
    pub fn next_due(&self) -> Option<Timestamp> {
        self.inner.timers.lock().0.first().map(|(due, _, _)| *due)
    }

    pub fn pending_timers(&self) -> usize {
        self.inner.timers.lock().0.len()
    }

    /// One step of a stepwise advance to `until`: when a timer is due at or before `until`, move
    /// time to the earliest such instant, wake the timers due then and return true (the driver
    /// lets them run, then calls again); otherwise move to `until` and return false.
    pub fn step_until(&self, until: Timestamp) -> bool {
        match self.next_due() {
            Some(due) if due <= until => {
                self.set(due.max(self.inner.now.get()));
                true
            }
            _ => {
                // Never backwards: overlapping advances each step to their own target.
                self.set(until.max(self.inner.now.get()));
                false
            }
        }
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.inner.now.get())
            .field("auto_advance", &self.inner.auto_advance)
            .field("pending_timers", &self.pending_timers())
            .finish()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> crate::base::error::Result<Timestamp> {
        Ok(self.inner.now.get())
    }

    fn jitter(&self) -> Option<f64> {
        let mut state = self.inner.jitter.get();
        let bits = crate::base::number::splitmix64(&mut state);
        self.inner.jitter.set(state);
        Some(crate::base::number::unit_float(bits))
    }

    fn sleep(&self, secs: f64) -> BoxFuture<'static, ()> {
        let secs = if secs.is_nan() { 0.0 } else { secs.max(0.0) };
        if self.inner.auto_advance {
            let clock = self.clone();
            return Box::pin(async move {
                // Yield first, so a raced request that is already answered wins over the timer
                // and does not move the clock; advance only if this sleep really completes.
                crate::base::future::yield_now().await;
                clock.advance(secs);
            });
        }
        if secs == 0.0 {
            return Box::pin(crate::base::future::yield_now());
        }
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id.wrapping_add(1));
        let due = self.inner.now.get().plus_secs(secs);
        Box::pin(Timer { clock: self.inner.clone(), due, id })
    }
}

/// Pending timers in (due, id) order.
#[derive(Default)]
struct Timers(Vec<(Timestamp, u64, Waker)>);

impl Timers {
    fn position(&self, due: Timestamp, id: u64) -> Result<usize, usize> {
        self.0.binary_search_by(|(d, i, _)| (*d, *i).cmp(&(due, id)))
    }

    /// Register (or re-register, with the latest waker) the timer `(due, id)`.
    fn insert(&mut self, due: Timestamp, id: u64, waker: &Waker) {
        match self.position(due, id) {
            Ok(at) => self.0[at].2.clone_from(waker),
            Err(at) => self.0.insert(at, (due, id, waker.clone())),
        }
    }

    fn remove(&mut self, due: Timestamp, id: u64) {
        if let Ok(at) = self.position(due, id) {
            self.0.remove(at);
        }
    }
}

/// A plain manual clock's sleep: pending until the clock reaches `due`.
struct Timer {
    clock: Shared<Inner>,
    due: Timestamp,
    id: u64,
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut timers = self.clock.timers.lock();
        if self.clock.now.get() >= self.due {
            timers.remove(self.due, self.id);
            return Poll::Ready(());
        }
        // (Re-)register: `set` removes the timers it wakes, and time may have moved back since.
        timers.insert(self.due, self.id, cx.waker());
        Poll::Pending
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(mut timers) = self.clock.timers.try_lock() {
            timers.remove(self.due, self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::LocalPool;
    use futures::task::LocalSpawnExt;

    #[test]
    fn plain_timers_wait_for_advance_and_fire_in_due_order() {
        let clock = ManualClock::starting_2026();
        let mut pool = LocalPool::new();
        let fired = Shared::new(Lock::new(Vec::new()));
        for secs in [3.0, 1.0, 2.0] {
            let (clock2, fired) = (clock.clone(), fired.clone());
            pool.spawner()
                .spawn_local(async move {
                    clock2.sleep(secs).await;
                    fired.lock().push(secs);
                })
                .unwrap();
        }
        pool.run_until_stalled();
        assert_eq!(clock.pending_timers(), 3);
        assert!(fired.lock().is_empty(), "no time passed");
        clock.advance(1.5);
        pool.run_until_stalled();
        assert_eq!(*fired.lock(), [1.0]);
        clock.advance(5.0);
        pool.run_until_stalled();
        assert_eq!(*fired.lock(), [1.0, 2.0, 3.0], "due order");
        assert_eq!(clock.pending_timers(), 0);
        assert_eq!(clock.now().unwrap(), ManualClock::START_2026.plus_secs(6.5));
    }

    #[test]
    fn step_until_never_goes_back_and_jitter_repeats_with_the_start() {
        let clock = ManualClock::starting_2026();
        clock.set(ManualClock::START_2026.plus_secs(8.0));
        assert!(!clock.step_until(ManualClock::START_2026.plus_secs(5.0)));
        assert_eq!(clock.now().unwrap(), ManualClock::START_2026.plus_secs(8.0), "an earlier target leaves it");
        let draws = |c: &ManualClock| [c.jitter().unwrap(), c.jitter().unwrap(), c.jitter().unwrap()];
        let (a, b) = (draws(&ManualClock::starting_2026()), draws(&ManualClock::starting_2026()));
        assert_eq!(a, b, "the same start, the same jitter");
        assert!(a.iter().all(|u| (0.0..1.0).contains(u)) && a[0] != a[1]);
        assert_ne!(a, draws(&ManualClock::new(ManualClock::START_2026.plus_secs(1.0))));
    }

    #[test]
    fn step_until_visits_each_due_instant_and_dropped_timers_vanish() {
        let clock = ManualClock::starting_2026();
        let mut pool = LocalPool::new();
        let seen = Shared::new(Lock::new(Vec::new()));
        let (c, s) = (clock.clone(), seen.clone());
        pool.spawner()
            .spawn_local(async move {
                for _ in 0..3 {
                    c.sleep(2.0).await;
                    s.lock().push(c.now().unwrap());
                }
            })
            .unwrap();
        pool.run_until_stalled();
        let until = ManualClock::START_2026.plus_secs(5.0);
        while clock.step_until(until) {
            pool.run_until_stalled();
        }
        let start = ManualClock::START_2026;
        assert_eq!(*seen.lock(), [start.plus_secs(2.0), start.plus_secs(4.0)]);
        assert_eq!(clock.now().unwrap(), until);
        drop(pool);
        assert_eq!(clock.pending_timers(), 0, "a dropped sleep leaves no timer");
    }

    #[test]
    fn auto_advancing_sleeps_move_time_when_they_complete() {
        let clock = ManualClock::auto_advancing(ManualClock::START_2026);
        futures::executor::block_on(clock.sleep(1.5));
        assert_eq!(clock.now().unwrap(), ManualClock::START_2026.plus_secs(1.5));
        let raced = crate::base::future::race(async {}, clock.sleep(10.0));
        futures::executor::block_on(raced);
        assert_eq!(clock.now().unwrap(), ManualClock::START_2026.plus_secs(1.5), "an abandoned sleep moves nothing");
        futures::executor::block_on(clock.sleep(f64::NAN));
        futures::executor::block_on(ManualClock::starting_2026().sleep(-1.0));
    }
}
