//! Cancellation: a [`Cancel`] is a single-threaded, cheaply cloned flag with a reason, the Rust
//! counterpart of an `AbortSignal`. A call made through a handle bound to one (`with_cancel` on
//! [`crate::Objects`], [`crate::Fencepost`], [`crate::Doc`], [`crate::Lease`]) stops its waits and
//! retries as soon as it fires; see [`crate::objects`] for what happens to a write in flight.

use crate::base::sync::{Lock, SyncCell};
use crate::base::sync::{Shared, WeakShared};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::base::error::{Error, Result};
use crate::base::future::{Either, race};

/// A cancellation flag with a reason. Clones share it; once fired it stays fired with its first
/// reason (later `cancel` calls are ignored, as with `AbortController.abort`).
#[derive(Clone, Default)]
pub struct Cancel {
    inner: Shared<Inner>,
}

#[derive(Default)]
struct Inner {
    reason: Lock<Option<Error>>,
    /// Wakers of pending [`Cancelled`] futures, by slot id (a re-polled future replaces its own).
    waiters: Lock<Vec<(u64, Waker)>>,
    next_slot: SyncCell<u64>,
    /// Cancels that fire when this one does ([`Cancel::follow`]); weak so a finished call's cancel
    /// is not kept alive by a long-lived parent.
    followers: Lock<Vec<WeakShared<Inner>>>,
}

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Fire with [`Error::Aborted`].
    pub fn cancel(&self) {
        self.cancel_with(Error::Aborted);
    }

    /// Fire with `reason`: every pending [`Cancel::cancelled`] future resolves with it, and every
    /// call bound to this cancel rejects with it (or settles its write first, see `objects`).
    pub fn cancel_with(&self, reason: Error) {
        {
            // Checked and set under one lock: of two threads cancelling at once, one reason wins.
            let mut first = self.inner.reason.lock();
            if first.is_some() {
                return;
            }
            *first = Some(reason.clone());
        }
        // Take the lists out before waking: a woken task or a follower may touch this cancel.
        let waiters = std::mem::take(&mut *self.inner.waiters.lock());
        let followers = std::mem::take(&mut *self.inner.followers.lock());
        for (_, waker) in waiters {
            waker.wake();
        }
        for follower in followers.iter().filter_map(WeakShared::upgrade) {
            Cancel { inner: follower }.cancel_with(reason.clone());
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.reason.lock().is_some()
    }

    pub fn reason(&self) -> Option<Error> {
        self.inner.reason.lock().clone()
    }

    /// `Err(reason)` once cancelled.
    pub fn check(&self) -> Result<()> {
        self.reason().map_or(Ok(()), Err)
    }

    /// Resolves with the reason once cancelled (at once if already).
    pub fn cancelled(&self) -> Cancelled {
        Cancelled { cancel: self.clone(), slot: None }
    }

    /// Fire this cancel (with the same reason) when `parent` fires; at once if it already has.
    pub fn follow(&self, parent: &Cancel) {
        if let Some(reason) = parent.reason() {
            self.cancel_with(reason);
            return;
        }
        let mut followers = parent.inner.followers.lock();
        followers.retain(|f| f.strong_count() > 0);
        followers.push(Shared::downgrade(&self.inner));
    }

    /// Run `f` unless this fires first: then `f` is dropped and the reason returned.
    pub async fn run<F: Future>(&self, f: F) -> Result<F::Output> {
        if let Some(reason) = self.reason() {
            return Err(reason);
        }
        match race(f, self.cancelled()).await {
            Either::Left(out) => Ok(out),
            Either::Right(reason) => Err(reason),
        }
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancel").field("reason", &*self.inner.reason.lock()).finish()
    }
}

/// The future of [`Cancel::cancelled`].
pub struct Cancelled {
    cancel: Cancel,
    slot: Option<u64>,
}

impl Future for Cancelled {
    type Output = Error;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Error> {
        if let Some(reason) = self.cancel.reason() {
            return Poll::Ready(reason);
        }
        #[cfg(test)]
        tests::between_check_and_register();
        let inner = self.cancel.inner.clone();
        let mut waiters = inner.waiters.lock();
        match self.slot.and_then(|id| waiters.iter_mut().find(|(slot, _)| *slot == id)) {
            Some((_, waker)) => waker.clone_from(cx.waker()),
            None => {
                let id = inner.next_slot.get();
                inner.next_slot.set(id.wrapping_add(1));
                waiters.push((id, cx.waker().clone()));
                self.slot = Some(id);
            }
        }
        // Fired from another thread since the check above, its waiters maybe taken already (it
        // sets the reason first): then this waker was never heard, so the answer is now.
        if let Some(reason) = self.cancel.reason() {
            return Poll::Ready(reason);
        }
        Poll::Pending
    }
}

impl Drop for Cancelled {
    fn drop(&mut self) {
        if let Some(id) = self.slot {
            if let Some(mut waiters) = self.cancel.inner.waiters.try_lock() {
                waiters.retain(|(slot, _)| *slot != id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::LocalPool;
    use futures::task::LocalSpawnExt;

    thread_local! {
        /// Run by the next `Cancelled::poll` between its check of the reason and its waker's
        /// registration: where another thread's cancel can land.
        static BETWEEN: std::cell::RefCell<Option<Box<dyn FnOnce()>>> = const { std::cell::RefCell::new(None) };
    }

    pub(super) fn between_check_and_register() {
        if let Some(f) = BETWEEN.with(|b| b.borrow_mut().take()) {
            f();
        }
    }

    /// A cancel landing between a poll's check and its waker's registration (from another thread,
    /// on a multi-threaded runtime) is answered by that poll: no waker is left unheard.
    #[test]
    fn a_cancel_between_check_and_register_is_answered() {
        let cancel = Cancel::new();
        let fire = cancel.clone();
        BETWEEN.with(|b| *b.borrow_mut() = Some(Box::new(move || fire.cancel())));
        let mut cancelled = Box::pin(cancel.cancelled());
        let polled = cancelled.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(matches!(polled, Poll::Ready(Error::Aborted)), "{polled:?}");
    }

    #[test]
    fn first_reason_wins_and_reaches_every_waiter() {
        let c = Cancel::new();
        assert!(!c.is_cancelled() && c.check().is_ok());
        let mut pool = LocalPool::new();
        let got = Shared::new(Lock::new(Vec::new()));
        for _ in 0..3 {
            let (c, got) = (c.clone(), got.clone());
            pool.spawner()
                .spawn_local(async move {
                    let code = c.cancelled().await.code();
                    got.lock().push(code);
                })
                .unwrap();
        }
        pool.run_until_stalled();
        assert!(got.lock().is_empty());
        assert_eq!(c.inner.waiters.lock().len(), 3, "one slot per waiter, however often polled");
        c.cancel_with(Error::invalid("first"));
        c.cancel();
        pool.run_until_stalled();
        assert_eq!(*got.lock(), ["INVALID_ARGUMENT"; 3]);
        assert!(matches!(c.reason(), Some(Error::InvalidArgument(m)) if m == "first"));
        assert!(c.inner.waiters.lock().is_empty());
    }

    #[test]
    fn dropped_waiters_leave_no_slot_and_followers_fire() {
        let c = Cancel::new();
        let mut waiting = Box::pin(c.cancelled());
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert_eq!(c.inner.waiters.lock().len(), 1);
        drop(waiting);
        assert!(c.inner.waiters.lock().is_empty());

        let child = Cancel::new();
        child.follow(&c);
        let grandchild = Cancel::new();
        grandchild.follow(&child);
        {
            let dropped = Cancel::new();
            dropped.follow(&c);
        }
        c.cancel();
        assert!(matches!(grandchild.reason(), Some(Error::Aborted)));
        let late = Cancel::new();
        late.follow(&c);
        assert!(late.is_cancelled(), "following a fired cancel fires at once");
    }

    #[test]
    fn run_returns_the_reason_instead_of_the_output() {
        let c = Cancel::new();
        assert_eq!(futures::executor::block_on(c.run(async { 7 })).unwrap(), 7);
        c.cancel();
        let e = futures::executor::block_on(c.run(async { 7 })).unwrap_err();
        assert!(matches!(e, Error::Aborted));
    }
}
