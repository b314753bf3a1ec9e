//! Store requests on the network right now, counted so that a manual clock's driver can wait for
//! them (see `requests_in_flight`).

thread_local! {
    static IN_FLIGHT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Store requests on the network in this thread right now (S3 and R2 I/O; the memory store has
/// none). A manual clock's driver waits for them to settle before moving time on, so a renewal
/// woken by `advance()` completes against a real store before the next due instant.
#[cfg(target_arch = "wasm32")]
pub fn requests_in_flight() -> usize {
    IN_FLIGHT.with(|n| n.get())
}

/// Count `request` as in flight while it runs (a dropped future stops counting too).
pub(crate) async fn in_flight<T>(request: impl std::future::Future<Output = T>) -> T {
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            IN_FLIGHT.with(|n| n.set(n.get().saturating_sub(1)));
        }
    }
    IN_FLIGHT.with(|n| n.set(n.get() + 1));
    let _counted = Counted;
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
