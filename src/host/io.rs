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
