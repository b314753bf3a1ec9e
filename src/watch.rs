//! watch: be told when a key changes, by polling with a conditional read.
//!
//! The first answer is the key's current state (what [`crate::Fencepost::inspect`] says, or `None`
//! while absent); after it, each change of the key's etag, polled every `interval` seconds with
//! `If-None-Match: <etag>` (a 304 without the body on every store that answers conditional reads),
//! so an unchanged poll costs one small request. A deletion answers `None` once; the key coming
//! back answers again. Changes between two polls are seen as one (the latest): a watch follows the
//! key's state, it is not a log of its writes.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::base::cancel::Cancel;
use crate::base::error::{Error, Result};
use crate::base::future::BoxFuture;
use crate::base::mutation::{self, Mutation};
use crate::inspect::{Inspection, inspection};
use crate::objects::Objects;
use crate::store::IfChanged;

/// The shortest poll interval (seconds): a tighter loop would spend a Worker's subrequests. (Its
/// message spells it out: formatting an `f64` would bring float printing into the wasm.)
pub const MIN_WATCH_INTERVAL: f64 = 0.05;

/// What a watch last reported of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Nothing yet: the next answer is the current state, at once.
    Nothing,
    Absent,
    /// The version with this etag.
    Version(String),
}

/// One change: what the key holds now (`None`: absent).
pub type Change = Option<Inspection>;

/// Polls one key ([`Watcher::changed`]); [`Watch`] is the same as a `Stream`.
#[derive(Clone)]
pub struct Watcher {
    objects: Objects,
    key: String,
    interval: f64,
    seen: Seen,
}

impl Watcher {
    /// A watcher of `key` polling every `interval` seconds, having last reported `seen`.
    #[doc(hidden)]
    pub fn resume(objects: &Objects, key: &str, interval: f64, seen: Seen) -> Result<Self> {
        objects.check_key(key)?;
        if !interval.is_finite() || interval < MIN_WATCH_INTERVAL {
            return Err(Error::invalid(format!(
                "a watch's interval must be a finite number of seconds >= 0.05, got {}",
                crate::base::number::number_text(interval)
            )));
        }
        Ok(Watcher { objects: objects.clone(), key: key.to_owned(), interval, seen })
    }

    /// What it last reported.
    pub fn seen(&self) -> &Seen {
        &self.seen
    }

    /// The next change: the current state at once the first time, then the next change of etag
    /// (one request per interval until there is one).
    pub async fn changed(&mut self) -> Result<Change> {
        self.changed_until(&Cancel::new()).await?.ok_or(Error::Aborted)
    }

    /// [`Watcher::changed`], or `None` once `stop` fires: the watch was left by its consumer (a
    /// JS loop's `break`), which is no failure (its call event says "ok"), unlike an abort of the
    /// call's own cancel.
    #[doc(hidden)]
    pub async fn changed_until(&mut self, stop: &Cancel) -> Result<Option<Change>> {
        let (objects, call) = self.objects.call("watch");
        let either = Cancel::new();
        either.follow(stop);
        if let Some(own) = objects.cancel() {
            either.follow(own);
        }
        let changed = match self.poll_until_changed(&objects.with_cancel(&either)).await {
            Err(_) if stop.is_cancelled() => Ok(None),
            other => other.map(Some),
        };
        crate::objects::events::Call::end(call, &self.objects, &self.key, changed)
    }

    async fn poll_until_changed(&mut self, objects: &Objects) -> Result<Change> {
        if self.seen == Seen::Nothing {
            let now = objects.read(&self.key).await?;
            return self.report(objects, now);
        }
        loop {
            objects.sleep(self.interval).await?;
            let now = match &self.seen {
                Seen::Version(etag) => match objects.read_if_changed(&self.key, etag).await? {
                    IfChanged::NotModified => continue,
                    IfChanged::Current(now) => now,
                },
                _ => match objects.read(&self.key).await? {
                    None => continue,
                    now => now,
                },
            };
            return self.report(objects, now);
        }
    }

    fn report(&mut self, objects: &Objects, now: Option<crate::store::StoredObject>) -> Result<Change> {
        match now {
            None => {
                self.seen = Seen::Absent;
                Ok(None)
            }
            Some(object) => {
                let etag = object.etag.clone();
                let seen = inspection(objects, &self.key, object)?;
                let forget = mutation::on(Mutation::WatchForgetsVersion) && matches!(self.seen, Seen::Version(_));
                if !forget {
                    self.seen = Seen::Version(etag);
                }
                Ok(Some(seen))
            }
        }
    }
}

/// A watch as a `Stream` of changes ([`crate::Fencepost::watch`]): never-ending; drop it to stop
/// (a poll in flight is dropped with it). A failed poll is an `Err` item, and the next one polls
/// again. A watch whose key or interval was refused yields that `Err` once, then ends; so does a
/// watch whose cancel ([`crate::Fencepost::with_cancel`]) fired: its reason once, then the end.
pub struct Watch {
    idle: Option<Watcher>,
    pending: Option<BoxFuture<'static, (Watcher, Result<Change>)>>,
    /// The error handed out last, before the end: the refusal of its key or interval, or its
    /// cancel's reason.
    last_error: Option<Error>,
}

impl Watch {
    pub(crate) fn new(watcher: Result<Watcher>) -> Self {
        match watcher {
            Ok(watcher) => Watch { idle: Some(watcher), pending: None, last_error: None },
            Err(e) => Watch { idle: None, pending: None, last_error: Some(e) },
        }
    }

    /// The next change (the `Stream`'s next item, as an inherent method).
    pub async fn changed(&mut self) -> Result<Change> {
        std::future::poll_fn(|cx| self.poll_change(cx)).await
    }

    /// Over: its refusal, or its cancel's reason, was handed out (nothing more will come).
    fn ended(&self) -> bool {
        self.idle.is_none() && self.pending.is_none() && self.last_error.is_none()
    }

    fn poll_change(&mut self, cx: &mut Context<'_>) -> Poll<Result<Change>> {
        if let Some(last) = self.last_error.take() {
            return Poll::Ready(Err(last));
        }
        if self.pending.is_none() {
            let Some(mut watcher) = self.idle.take() else {
                return Poll::Ready(Err(Error::invalid(
                    "the watch has ended (refused or cancelled): it has nothing more to tell",
                )));
            };
            self.pending = Some(Box::pin(async move {
                let change = watcher.changed().await;
                (watcher, change)
            }));
        }
        let Some(pending) = self.pending.as_mut() else { return Poll::Pending };
        match pending.as_mut().poll(cx) {
            Poll::Ready((watcher, change)) => {
                self.pending = None;
                // Cancelled, every later poll would fail at once: the stream ends instead (a
                // consumer that logs errors and goes on would otherwise spin), after the reason
                // (handed out next when this poll still brought a change).
                match watcher.objects.check_cancel() {
                    Ok(()) => self.idle = Some(watcher),
                    Err(reason) if change.is_ok() => self.last_error = Some(reason),
                    Err(_) => {}
                }
                Poll::Ready(change)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl futures_core::Stream for Watch {
    type Item = Result<Change>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let watch = self.get_mut();
        if watch.ended() {
            return Poll::Ready(None);
        }
        watch.poll_change(cx).map(Some)
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let watcher = self.idle.as_ref();
        f.debug_struct("Watch")
            .field("key", &watcher.map(|w| w.key.as_str()))
            .field("seen", &watcher.map(|w| &w.seen))
            .field("polling", &self.pending.is_some())
            .finish()
    }
}
