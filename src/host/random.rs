//! The host's secure randomness: `crypto.getRandomValues` in wasm, the OS natively.

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

/// A uniformly random float in [0, 1) for backoff jitter (falls back to 0.5 without randomness:
/// jitter is an optimisation, not a correctness property).
pub(crate) fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if random_bytes(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn unit_is_in_range() {
        for _ in 0..100 {
            let u = super::random_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
