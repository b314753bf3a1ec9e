//! A JS `AbortSignal` as a core [`Cancel`]: the one place the binding listens to signals. The JS
//! layer passes the caller's signal (or nothing) through to each async method; while the call runs,
//! an `abort` event cancels the core call with the signal's own reason, which reaches the caller
//! unchanged. The listener is removed when the call settles.

use wasm_bindgen::prelude::*;

use fencepost::Cancel;
use fencepost::Error;

#[wasm_bindgen]
extern "C" {
    /// A caller's `AbortSignal`, listened to while its call runs.
    pub type AbortSignal;
    #[wasm_bindgen(method, getter)]
    fn aborted(this: &AbortSignal) -> bool;
    #[wasm_bindgen(method, getter)]
    fn reason(this: &AbortSignal) -> JsValue;
    #[wasm_bindgen(method, js_name = addEventListener)]
    fn add_event_listener(this: &AbortSignal, kind: &str, listener: &js_sys::Function);
    #[wasm_bindgen(method, js_name = removeEventListener)]
    fn remove_event_listener(this: &AbortSignal, kind: &str, listener: &js_sys::Function);
}

/// A [`Cancel`] that follows a signal for as long as this value lives.
pub struct Linked {
    pub cancel: Cancel,
    listening: Option<(AbortSignal, Closure<dyn FnMut()>)>,
}

impl Linked {
    /// `None` when there is no signal: the call then runs without a cancel (and costs nothing).
    pub fn new(signal: Option<AbortSignal>) -> Option<Linked> {
        signal.map(Linked::follow)
    }

    /// A cancel that follows `signal`.
    pub fn follow(signal: AbortSignal) -> Linked {
        let cancel = Cancel::new();
        if signal.aborted() {
            cancel.cancel_with(Error::callback(signal.reason()));
            return Linked { cancel, listening: None };
        }
        let (c, s) = (cancel.clone(), signal.clone().unchecked_into::<AbortSignal>());
        let on_abort = Closure::<dyn FnMut()>::new(move || c.cancel_with(Error::callback(s.reason())));
        signal.add_event_listener("abort", on_abort.as_ref().unchecked_ref());
        Linked { cancel, listening: Some((signal, on_abort)) }
    }
}

impl Drop for Linked {
    fn drop(&mut self) {
        if let Some((signal, listener)) = self.listening.take() {
            signal.remove_event_listener("abort", listener.as_ref().unchecked_ref());
        }
    }
}
