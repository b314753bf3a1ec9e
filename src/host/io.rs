//! Store requests on the network right now, noted so that a manual clock's driver can wait for
//! them (see `requests_in_flight_since`).

/// The ids of the requests on the network now (a handful), and the id the next one gets
/// (wrapping after 2^32 requests, which only a driver whose clock lived through them would see).
#[cfg(target_arch = "wasm32")]
struct InFlight {
    ids: Vec<u32>,
    next: u32,
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    static IN_FLIGHT: std::cell::RefCell<InFlight> =
        const { std::cell::RefCell::new(InFlight { ids: Vec::new(), next: 0 }) };
}

/// The id the next store request will get: a mark that [`requests_in_flight_since`] counts from.
#[cfg(target_arch = "wasm32")]
pub fn request_mark() -> u32 {
    IN_FLIGHT.with(|f| f.borrow().next)
}

/// Store requests in this thread on the network right now (S3, Azure, GCS, R2 and custom-store
/// I/O; the memory store has none) that started at or after `mark`. A manual clock's driver waits
/// for them to settle before moving time on, so a renewal woken by `advance()` completes against a
/// real store before the next due instant. Counted from the clock's own mark, not for the whole
/// isolate: a request abandoned by an earlier, finished Worker request stays pending for good
/// (workerd never settles another request's I/O), and must not stall every later clock.
#[cfg(target_arch = "wasm32")]
pub fn requests_in_flight_since(mark: u32) -> usize {
    IN_FLIGHT.with(|f| f.borrow().ids.iter().filter(|id| **id >= mark).count())
}

/// Note `request` as in flight while it runs (a dropped future stops counting too).
#[cfg(target_arch = "wasm32")]
pub(crate) async fn in_flight<T>(request: impl std::future::Future<Output = T>) -> T {
    let _noted = Noted::new();
    request.await
}

/// One request's place among those in flight, given up when dropped. Not generic: one copy for
/// every store.
#[cfg(target_arch = "wasm32")]
struct Noted(u32);

#[cfg(target_arch = "wasm32")]
impl Noted {
    #[inline(never)]
    fn new() -> Self {
        IN_FLIGHT.with(|f| {
            let mut f = f.borrow_mut();
            let id = f.next;
            f.next = id.wrapping_add(1);
            f.ids.push(id);
            Noted(id)
        })
    }
}

#[cfg(target_arch = "wasm32")]
impl Drop for Noted {
    fn drop(&mut self) {
        IN_FLIGHT.with(|f| {
            let mut f = f.borrow_mut();
            if let Some(at) = f.ids.iter().position(|id| *id == self.0) {
                f.ids.swap_remove(at);
            }
        })
    }
}

/// Natively nothing drives a manual clock from outside, so nothing is noted.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) async fn in_flight<T>(request: impl std::future::Future<Output = T>) -> T {
    request.await
}

/// An `AbortController` whose signal goes with one request, aborted when the request is dropped
/// before it finished (a timeout or a cancel abandoned it: dropping the wait alone would leave the
/// connection, or a store's own work, busy). `disarm` once the request has settled.
#[cfg(target_arch = "wasm32")]
pub(crate) struct AbortOnDrop(Option<crate::host::sys::AbortController>);

#[cfg(target_arch = "wasm32")]
impl AbortOnDrop {
    /// A host without `AbortController` gets requests without a signal.
    pub(crate) fn new() -> Self {
        AbortOnDrop(crate::host::sys::AbortController::new().ok())
    }

    pub(crate) fn signal(&self) -> Option<crate::host::sys::AbortSignal> {
        self.0.as_ref().map(crate::host::sys::AbortController::signal)
    }

    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

#[cfg(target_arch = "wasm32")]
impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = &self.0 {
            controller.abort();
        }
    }
}
