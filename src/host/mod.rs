//! The one layer that touches the host: wall-clock time and timers, randomness, number parsing,
//! (in wasm) the JS host's functions and Promises, and (natively, for the reqwest and object_store
//! features) the tokio runtime their I/O runs on. The layers below (`base`, `time`) are
//! pure; everything above reaches the host only through here.

pub mod clock;
pub(crate) mod float;
pub(crate) mod io;
#[cfg(target_arch = "wasm32")]
pub(crate) mod promise;
pub(crate) mod random;
#[cfg(any(not(target_arch = "wasm32"), feature = "worker"))]
pub(crate) mod spawn;
#[cfg(target_arch = "wasm32")]
pub(crate) mod sys;
#[cfg(all(not(target_arch = "wasm32"), any(feature = "reqwest", feature = "object_store")))]
pub(crate) mod tokio;
