//! The host's clock: [`SystemClock`], the real [`Clock`] — `Date.now()` and `setTimeout` in wasm
//! (any JS host: Workers, Deno, Node, browsers), the system clock and a timer thread natively.

use crate::base::error::Result;
use crate::base::future::BoxFuture;
use crate::time::{Clock, Timestamp};

/// The real clock: `Date.now()` and `setTimeout` in wasm; the system clock and a timer thread
/// natively (no async runtime needed). The default clock of [`crate::Fencepost`].
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Result<Timestamp> {
        Ok(now())
    }

    fn sleep(&self, secs: f64) -> BoxFuture<'static, ()> {
        sleep(secs)
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::*;
    use crate::host::promise::HostCall;
    use crate::host::sys::{clear_timeout, set_timeout};
    use std::future::Future;
    use std::pin::Pin;
    use wasm_bindgen::JsValue;

    /// Hosts clamp longer delays to about 1 ms (a 32-bit millisecond count): longer sleeps end
    /// early instead, and every caller re-checks the time after a sleep.
    const MAX_TIMER_MILLIS: f64 = 2_147_483_647.0;

    pub fn now() -> Timestamp {
        Timestamp::from_micros((js_sys::Date::now() * 1000.0) as i64)
    }

    /// A host timer: cleared when the sleep is dropped early (raced against a request, a cancel),
    /// so a 30-s request timeout does not keep Node's event loop or a Worker alive after the answer.
    struct Timer {
        call: HostCall,
        handle: JsValue,
    }

    impl Drop for Timer {
        fn drop(&mut self) {
            // Not fired yet (firing takes the closure out): clear the host's timer.
            if !self.call.fired() {
                clear_timeout(&self.handle);
                self.call.forget_call();
            }
        }
    }

    pub fn sleep(secs: f64) -> BoxFuture<'static, ()> {
        let millis = if secs.is_nan() { 0.0 } else { (secs * 1000.0).clamp(0.0, MAX_TIMER_MILLIS) };
        let (call, callback) = HostCall::new();
        let handle = set_timeout(&callback, millis);
        let mut timer = Timer { call, handle };
        Box::pin(std::future::poll_fn(move |cx| Pin::new(&mut timer.call).poll(cx).map(|_| ())))
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Condvar, Mutex, MutexGuard, Once, OnceLock};
    use std::task::{Context, Poll, Waker};
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    pub fn now() -> Timestamp {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp::from_micros(since.as_micros() as i64)
    }

    /// Natively fencepost is used by tests and tools, without any async runtime: one helper
    /// thread serves every sleep (a thread per sleep would pile up: every S3 request races a
    /// 30-s timeout). In wasm, the host's `setTimeout` is used.
    struct Timers {
        pending: Mutex<BTreeMap<(Instant, u64), Waker>>,
        changed: Condvar,
        next_id: AtomicU64,
    }

    fn timers() -> &'static Timers {
        static TIMERS: OnceLock<Timers> = OnceLock::new();
        static THREAD: Once = Once::new();
        let queue = TIMERS.get_or_init(|| Timers {
            pending: Mutex::new(BTreeMap::new()),
            changed: Condvar::new(),
            next_id: AtomicU64::new(0),
        });
        THREAD.call_once(|| {
            let _ = std::thread::Builder::new().name("fencepost-timers".into()).spawn(move || run(queue));
        });
        queue
    }

    fn lock(timers: &Timers) -> MutexGuard<'_, BTreeMap<(Instant, u64), Waker>> {
        timers.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn run(timers: &'static Timers) {
        let mut pending = lock(timers);
        loop {
            let now = Instant::now();
            let later = pending.split_off(&(now, u64::MAX));
            let due = std::mem::replace(&mut *pending, later);
            if !due.is_empty() {
                // Wake outside the lock: a waker may poll (and re-register) right away.
                drop(pending);
                due.into_values().for_each(Waker::wake);
                pending = lock(timers);
                continue;
            }
            pending = match pending.keys().next() {
                Some((at, _)) => {
                    let wait = at.saturating_duration_since(now);
                    timers.changed.wait_timeout(pending, wait).map_or_else(|p| p.into_inner().0, |r| r.0)
                }
                None => timers.changed.wait(pending).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    struct Sleep {
        due: Instant,
        id: u64,
    }

    impl std::future::Future for Sleep {
        type Output = ();

        fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let timers = timers();
            let mut pending = lock(timers);
            if Instant::now() >= self.due {
                pending.remove(&(self.due, self.id));
                return Poll::Ready(());
            }
            let first = pending.keys().next().is_none_or(|k| *k > (self.due, self.id));
            pending.insert((self.due, self.id), cx.waker().clone());
            if first {
                timers.changed.notify_one();
            }
            Poll::Pending
        }
    }

    impl Drop for Sleep {
        fn drop(&mut self) {
            lock(timers()).remove(&(self.due, self.id));
        }
    }

    pub fn sleep(secs: f64) -> BoxFuture<'static, ()> {
        let due = Duration::try_from_secs_f64(secs.max(0.0)).ok().and_then(|d| Instant::now().checked_add(d));
        match due {
            Some(due) => Box::pin(Sleep { due, id: timers().next_id.fetch_add(1, Ordering::Relaxed) }),
            // Longer than the platform can count (or infinite): never.
            None => Box::pin(std::future::pending()),
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn sleeps_end_in_order_and_absurd_ones_do_not_panic() {
            let started = std::time::Instant::now();
            let order = std::cell::RefCell::new(Vec::new());
            futures::executor::block_on(futures::future::join3(
                async {
                    super::sleep(0.03).await;
                    order.borrow_mut().push(30);
                },
                async {
                    super::sleep(0.01).await;
                    order.borrow_mut().push(10);
                },
                async {
                    let never = crate::base::future::race(super::sleep(f64::INFINITY), super::sleep(f64::NAN));
                    assert!(matches!(never.await, crate::base::future::Either::Right(())));
                },
            ));
            assert_eq!(*order.borrow(), [10, 30]);
            assert!(started.elapsed() >= std::time::Duration::from_millis(30));
        }
    }
}
use imp::{now, sleep};
