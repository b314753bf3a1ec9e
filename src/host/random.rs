//! The host's secure randomness: `crypto.getRandomValues` in wasm, the OS natively.

/// Fill `buf` from the OS / `crypto.getRandomValues`. Failure here means the host has no secure
/// randomness at all, which no caller can recover from; it is reported, not panicked.
///
/// Bytes are drawn from a small per-thread pool refilled 256 bytes at a time: in wasm each
/// `getRandomValues` is a call into JS, and every write needs a fresh token.
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<(), String> {
    #[cfg(not(target_arch = "wasm32"))]
    if seeded::fill(buf) {
        return Ok(());
    }
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

/// A per-thread seeded generator that replaces the host's randomness while it is set (natively
/// only): deterministic simulations need every token and every backoff jitter to repeat with
/// the seed (jitter from a clock that gives its own, a `ManualClock`'s, does not come here).
/// Public as `crate::testing::seed_random`.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod seeded {
    use std::cell::Cell;

    thread_local! {
        static STATE: Cell<Option<u64>> = const { Cell::new(None) };
    }

    pub(crate) fn set(seed: Option<u64>) {
        STATE.set(seed);
    }

    /// Fill `buf` from the seeded generator when one is set.
    pub(crate) fn fill(buf: &mut [u8]) -> bool {
        let Some(mut state) = STATE.get() else { return false };
        for chunk in buf.chunks_mut(8) {
            chunk.copy_from_slice(&crate::base::number::splitmix64(&mut state).to_le_bytes()[..chunk.len()]);
        }
        STATE.set(Some(state));
        true
    }
}

/// A uniformly random float in [0, 1) for backoff jitter (falls back to 0.5 without randomness:
/// jitter is an optimisation, not a correctness property).
pub(crate) fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if random_bytes(&mut bytes).is_err() {
        return 0.5;
    }
    crate::base::number::unit_float(u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_seed_repeats_its_bytes_and_unsetting_it_restores_the_host() {
        let draw = || {
            let mut bytes = [0u8; 21];
            super::random_bytes(&mut bytes).unwrap();
            bytes
        };
        super::seeded::set(Some(7));
        let (a, b) = (draw(), draw());
        super::seeded::set(Some(7));
        assert_eq!((draw(), draw()), (a, b));
        assert_ne!(a, b);
        super::seeded::set(None);
        assert_ne!(draw(), a);
    }

    #[test]
    fn unit_is_in_range() {
        for _ in 0..100 {
            let u = super::random_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
