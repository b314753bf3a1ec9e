//! Work that outlives its caller: a lease released in the background when the future holding it
//! is dropped. It needs a runtime to run on: the JS event loop in a Rust Worker (wasm32, feature
//! `worker`), the caller's tokio runtime natively (feature `tokio`, which `reqwest` and
//! `object_store` turn on). Without one, nothing runs, and the caller is told so.

use crate::base::future::BoxFuture;

/// Run `work` to its end in the background; `false` when there is no runtime at hand to run it.
pub(crate) fn detached(work: BoxFuture<'static, ()>) -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        wasm_bindgen_futures::spawn_local(work);
        true
    }
    #[cfg(all(not(target_arch = "wasm32"), feature = "tokio"))]
    {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                drop(handle.spawn(work));
                true
            }
            Err(_) => false,
        }
    }
    #[cfg(all(not(target_arch = "wasm32"), not(feature = "tokio")))]
    {
        drop(work);
        false
    }
}
