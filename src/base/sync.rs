//! Sharing across threads where there are threads, and for free where there are none.
//!
//! Natively, fencepost's handles, stores and futures are `Send + Sync` (an axum handler, a task
//! under `tokio::spawn`); in wasm32 JS values are not `Send` and there is one thread, so nothing
//! there needs to be. One core serves both: the bounds below are `Send`/`Sync` natively and empty
//! in wasm, and the interior mutability is a `Mutex` natively and a `RefCell`/`Cell` in wasm
//! (where a `Mutex` would only add code: no thread can contend for it).
//!
//! A lock is only ever held for a few statements and never across an `.await` (the futures would
//! not be `Send` otherwise, which the native build's compile-time test catches), so the wasm
//! `RefCell` never sees a second borrow and the native `Mutex` never waits long.

use std::future::Future;
use std::pin::Pin;

/// Shared ownership: `Arc` natively, `Rc` in wasm32, where one thread needs no atomic counts
/// (and the module is smaller by about 1 KB gzipped without them).
#[cfg(target_arch = "wasm32")]
pub use std::rc::{Rc as Shared, Weak as WeakShared};
/// Shared ownership: `Arc` natively, `Rc` in wasm32, where one thread needs no atomic counts
/// (and the module is smaller by about 1 KB gzipped without them).
#[cfg(not(target_arch = "wasm32"))]
pub use std::sync::{Arc as Shared, Weak as WeakShared};

/// `Send` natively; nothing in wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> MaybeSend for T {}
/// `Send` natively; nothing in wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` natively; nothing in wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> MaybeSync for T {}
/// `Sync` natively; nothing in wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSync for T {}

/// A boxed future, `Send` natively (so it can cross threads), not in wasm32 (JS values are not).
#[cfg(not(target_arch = "wasm32"))]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
/// A boxed future, `Send` natively (so it can cross threads), not in wasm32 (JS values are not).
#[cfg(target_arch = "wasm32")]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Interior mutability for shared state: a `Mutex` natively, a `RefCell` in wasm32.
#[derive(Default)]
pub(crate) struct Lock<T> {
    #[cfg(not(target_arch = "wasm32"))]
    inner: std::sync::Mutex<T>,
    #[cfg(target_arch = "wasm32")]
    inner: std::cell::RefCell<T>,
}

impl<T> Lock<T> {
    pub(crate) fn new(value: T) -> Self {
        Lock { inner: value.into() }
    }

    /// Exclusive access until the guard drops. Never hold it across an `.await`.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        // A panic elsewhere while holding it leaves the data as consistent as each short critical
        // section makes it: carry on rather than poison every later call.
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    /// Exclusive access until the guard drops. Never hold it across an `.await`.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn lock(&self) -> std::cell::RefMut<'_, T> {
        self.inner.borrow_mut()
    }
}

/// A shared `Copy` value: a `Mutex` natively, a `Cell` in wasm32.
#[derive(Default)]
pub(crate) struct SyncCell<T: Copy> {
    #[cfg(not(target_arch = "wasm32"))]
    inner: std::sync::Mutex<T>,
    #[cfg(target_arch = "wasm32")]
    inner: std::cell::Cell<T>,
}

impl<T: Copy> SyncCell<T> {
    pub(crate) fn new(value: T) -> Self {
        SyncCell { inner: value.into() }
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn get(&self) -> T {
        *self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn get(&self) -> T {
        self.inner.get()
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn set(&self, value: T) {
        *self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = value;
    }
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn set(&self, value: T) {
        self.inner.set(value);
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for SyncCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl<T> Lock<T> {
    /// Exclusive access if nobody holds it right now (a `Drop` that must not wait or panic).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn try_lock(&self) -> Option<std::sync::MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
    /// Exclusive access if nobody holds it right now (a `Drop` that must not wait or panic).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn try_lock(&self) -> Option<std::cell::RefMut<'_, T>> {
        self.inner.try_borrow_mut().ok()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Lock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.try_lock() {
            Some(value) => value.fmt(f),
            None => f.write_str("<locked>"),
        }
    }
}

impl<T: Copy> SyncCell<T> {
    pub(crate) fn replace(&self, value: T) -> T {
        let old = self.get();
        self.set(value);
        old
    }
}
