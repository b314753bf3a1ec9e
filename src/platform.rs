//! The one place that touches the host: wall-clock time, timers and randomness, which differ
//! between wasm (any JS host: Workers, Deno, Node, browsers) and native. [`SystemClock`] is the
//! real [`Clock`] built on them. Everything else in the crate is platform-free: `time` only
//! defines timestamps and the `Clock` seam, and never reads the host's clock itself.

use crate::LocalBoxFuture;
use crate::time::{Clock, Timestamp};

/// The real clock: `Date.now()` and `setTimeout` in wasm; the system clock and a timer thread
/// natively (no async runtime needed). The default clock of [`crate::Fencepost`].
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> crate::Result<Timestamp> {
        Ok(now())
    }

    fn sleep(&self, secs: f64) -> LocalBoxFuture<'static, ()> {
        sleep(secs)
    }
}

/// Fill `buf` from the OS / `crypto.getRandomValues`. Failure here means the host has no secure
/// randomness at all, which no caller can recover from; it is reported, not panicked.
///
/// Bytes are drawn from a small per-thread pool refilled 256 bytes at a time: in wasm each
/// `getRandomValues` is a call into JS, and every write needs a fresh token.
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<(), String> {
    const POOL: usize = 256;
    thread_local! {
        static POOL_BYTES: std::cell::RefCell<([u8; POOL], usize)> = const { std::cell::RefCell::new(([0; POOL], POOL)) };
    }
    if buf.len() > POOL {
        return getrandom::fill(buf).map_err(|e| format!("no secure random source: {e}"));
    }
    POOL_BYTES.with(|pool| {
        let (bytes, used) = &mut *pool.borrow_mut();
        if POOL - *used < buf.len() {
            getrandom::fill(bytes).map_err(|e| format!("no secure random source: {e}"))?;
            *used = 0;
        }
        buf.copy_from_slice(&bytes[*used..*used + buf.len()]);
        // Handed-out bytes are not kept around.
        bytes[*used..*used + buf.len()].fill(0);
        *used += buf.len();
        Ok(())
    })
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::*;
    use crate::js::{clear_timeout, set_timeout};
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::Pin;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::{JsCast, JsValue};

    /// Hosts clamp longer delays to about 1 ms (a 32-bit millisecond count): longer sleeps end
    /// early instead, and every caller re-checks the time after a sleep.
    const MAX_TIMER_MILLIS: f64 = 2_147_483_647.0;

    pub fn now() -> Timestamp {
        Timestamp((js_sys::Date::now() * 1000.0) as i64)
    }

    /// The host's correctly rounded decimal parser: std's would add its tables (≈ 9 KB gzipped)
    /// to a module whose every host already has one.
    pub fn parse_f64(decimal: &str) -> f64 {
        js_sys::parse_float(decimal)
    }

    /// The future of one call of a JS callback made for it (a timer's, a Promise's settlement):
    /// the callback's first two arguments. One wasm-bindgen closure per wait — `JsFuture` makes
    /// two, and a timer through a Promise three; each costs a JS function and a registration with
    /// the glue's finalizer. The closure lives until the host calls it, even if this future is
    /// dropped first (a Promise still settles later), and is freed by that call; `forget_call`
    /// frees it when the host is known never to call (a cleared timer).
    pub(crate) struct HostCall(Rc<RefCell<Waiting>>);

    struct Waiting {
        args: Option<(JsValue, JsValue)>,
        waker: Option<Waker>,
        closure: Option<Closure<dyn FnMut(JsValue, JsValue)>>,
    }

    impl HostCall {
        /// A callback for the host to call once, and the future of that call.
        pub(crate) fn new() -> (HostCall, js_sys::Function) {
            let waiting = Rc::new(RefCell::new(Waiting { args: None, waker: None, closure: None }));
            let shared = waiting.clone();
            let closure = Closure::once(move |a: JsValue, b: JsValue| {
                let (waker, closure) = {
                    let mut w = shared.borrow_mut();
                    w.args = Some((a, b));
                    (w.waker.take(), w.closure.take())
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
                // Freed while running: wasm-bindgen defers the release until this call returns.
                drop(closure);
            });
            let function = closure.as_ref().unchecked_ref::<js_sys::Function>().clone();
            waiting.borrow_mut().closure = Some(closure);
            (HostCall(waiting), function)
        }

        /// The host will never call (its timer was cleared): free the callback now.
        fn forget_call(&self) {
            let closure = self.0.borrow_mut().closure.take();
            drop(closure);
        }
    }

    impl Future for HostCall {
        type Output = (JsValue, JsValue);

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let mut w = self.0.borrow_mut();
            match w.args.take() {
                Some(args) => Poll::Ready(args),
                None => {
                    w.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        }
    }

    /// `value` (a Promise, a thenable or a plain value) once settled: `Ok` fulfilled, `Err` rejected.
    /// Listens at once, like `JsFuture::from`, not when first polled.
    pub(crate) fn settled(value: &JsValue) -> impl Future<Output = Result<JsValue, JsValue>> + 'static {
        let (call, callback) = HostCall::new();
        let thrown = crate::js::settle(value, &callback).err();
        if thrown.is_some() {
            call.forget_call();
        }
        async move {
            if let Some(e) = thrown {
                return Err(e);
            }
            let (fulfilled, value) = call.await;
            if fulfilled.is_truthy() { Ok(value) } else { Err(value) }
        }
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
            if self.call.0.borrow().closure.is_some() {
                clear_timeout(&self.handle);
                self.call.forget_call();
            }
        }
    }

    pub fn sleep(secs: f64) -> LocalBoxFuture<'static, ()> {
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

    pub fn parse_f64(decimal: &str) -> f64 {
        decimal.parse().unwrap_or(f64::NAN)
    }

    pub fn now() -> Timestamp {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp(since.as_micros() as i64)
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

    pub fn sleep(secs: f64) -> LocalBoxFuture<'static, ()> {
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
                    let never = crate::race::race(super::sleep(f64::INFINITY), super::sleep(f64::NAN));
                    assert!(matches!(never.await, crate::race::Either::Right(())));
                },
            ));
            assert_eq!(*order.borrow(), [10, 30]);
            assert!(started.elapsed() >= std::time::Duration::from_millis(30));
        }
    }
}
pub(crate) use imp::parse_f64;
#[cfg(target_arch = "wasm32")]
pub(crate) use imp::settled;
use imp::{now, sleep};
