//! Waiting on the JS host (wasm only): a callback the host calls once, as a future; a Promise's
//! settlement through it.

use crate::base::sync::Shared;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The future of one call of a JS callback made for it (a timer's, a Promise's settlement):
/// the callback's first two arguments. One wasm-bindgen closure per wait — `JsFuture` makes
/// two, and a timer through a Promise three; each costs a JS function and a registration with
/// the glue's finalizer. The closure lives until the host calls it, even if this future is
/// dropped first (a Promise still settles later), and is freed by that call; `forget_call`
/// frees it when the host is known never to call (a cleared timer).
pub(crate) struct HostCall(Shared<RefCell<Waiting>>);

struct Waiting {
    args: Option<(JsValue, JsValue)>,
    waker: Option<Waker>,
    closure: Option<Closure<dyn FnMut(JsValue, JsValue)>>,
}

impl HostCall {
    /// A callback for the host to call once, and the future of that call.
    pub(crate) fn new() -> (HostCall, js_sys::Function) {
        let waiting = Shared::new(RefCell::new(Waiting { args: None, waker: None, closure: None }));
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

    /// Whether the host has called the callback.
    pub(crate) fn fired(&self) -> bool {
        self.0.borrow().closure.is_none()
    }

    /// The host will never call (its timer was cleared): free the callback now.
    pub(crate) fn forget_call(&self) {
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
pub fn settled(value: &JsValue) -> impl Future<Output = Result<JsValue, JsValue>> + 'static {
    let (call, callback) = HostCall::new();
    let thrown = crate::host::sys::on_settled(value, &callback).err();
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
