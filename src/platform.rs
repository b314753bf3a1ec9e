//! The few things that differ between wasm (any JS host) and native: wall-clock time, timers and
//! randomness. Everything else in the crate is platform-free.

use crate::LocalBoxFuture;
use crate::time::Timestamp;

/// Fill `buf` from the OS / `crypto.getRandomValues`. Failure here means the host has no secure
/// randomness at all, which no caller can recover from; it is reported, not panicked.
pub fn random_bytes(buf: &mut [u8]) -> Result<(), String> {
    getrandom::fill(buf).map_err(|e| format!("no secure random source: {e}"))
}

/// A future that is pending once, letting other tasks on a single-threaded executor run.
pub fn yield_now() -> impl std::future::Future<Output = ()> {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::*;
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        // The global `setTimeout`, present in Workers, Deno, Node and browsers (`window` is not).
        #[wasm_bindgen(js_name = setTimeout)]
        fn set_timeout(callback: &js_sys::Function, millis: f64) -> JsValue;
    }

    pub fn now() -> Timestamp {
        Timestamp((js_sys::Date::now() * 1000.0) as i64)
    }

    pub fn sleep(secs: f64) -> LocalBoxFuture<'static, ()> {
        let millis = (secs * 1000.0).max(0.0);
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            set_timeout(&resolve, millis);
        });
        Box::pin(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::task::{Poll, Waker};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    pub fn now() -> Timestamp {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp(since.as_micros() as i64)
    }

    /// A timer that needs no runtime: a helper thread wakes the task. Natively fencepost is used by
    /// tests and tools, where this is plenty; in production (wasm) the host's `setTimeout` is used.
    pub fn sleep(secs: f64) -> LocalBoxFuture<'static, ()> {
        let duration = Duration::from_secs_f64(secs.max(0.0));
        let state: Arc<Mutex<(bool, Option<Waker>)>> = Arc::new(Mutex::new((false, None)));
        let thread_state = state.clone();
        std::thread::spawn(move || {
            std::thread::sleep(duration);
            if let Ok(mut s) = thread_state.lock() {
                s.0 = true;
                if let Some(w) = s.1.take() {
                    w.wake();
                }
            }
        });
        Box::pin(std::future::poll_fn(move |cx| match state.lock() {
            Ok(s) if s.0 => Poll::Ready(()),
            Ok(mut s) => {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
            Err(_) => Poll::Ready(()),
        }))
    }
}

pub use imp::{now, sleep};
