//! tokio for the native I/O of features `reqwest` and `object_store`: their clients need a tokio
//! runtime, fencepost's futures do not. Each call runs as a task on the caller's runtime when
//! there is one (`Handle::try_current`), otherwise on a small runtime fencepost starts once (one
//! worker thread), so the stores work the same under `#[tokio::main]`, a current-thread runtime, a
//! `LocalSet` or plain `futures::executor::block_on`.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Handle, Runtime};
use tokio::task::AbortHandle;

/// Why [`on_tokio`] has no answer.
pub(crate) enum NoAnswer {
    /// The caller has no runtime and fencepost's own could not start: retrying will not help.
    NoRuntime(String),
    /// The task ended without an answer (it panicked, or the runtime shut down).
    Ended(String),
}

/// Run `work` as a task on the caller's tokio runtime, else on fencepost's own. Dropping the
/// returned future (a timeout, a cancel) aborts the task, and the I/O with it.
pub(crate) async fn on_tokio<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> Result<T, NoAnswer> {
    let handle = match Handle::try_current() {
        Ok(handle) => handle,
        Err(_) => background().map_err(NoAnswer::NoRuntime)?.clone(),
    };
    let task = handle.spawn(work);
    let _abort = AbortOnDrop(task.abort_handle());
    task.await.map_err(|e| NoAnswer::Ended(e.to_string()))
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        // A no-op once the task has finished.
        self.0.abort();
    }
}

/// The runtime tasks run on when the caller has none: started on first use, kept for the life of
/// the process.
fn background() -> Result<&'static Handle, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("fencepost-io")
                .enable_all()
                .build()
                .map_err(|e| format!("could not start fencepost's tokio runtime: {e}"))
        })
        .as_ref()
        .map(Runtime::handle)
        .map_err(Clone::clone)
}
