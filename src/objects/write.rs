//! The write path: one logical write, retried within the budget; outcomes not seen (a transport
//! error, a cancel while in flight) are resolved by reading the key back ([`super::resolve`]).

use super::resolve::Resolution;
use super::{Objects, Written};
use crate::error::{Error, Result};
use crate::store::{FailureKind, Precondition, PutOutcome, WriteMeta};
use crate::token::random_token;

impl Objects {
    /// One logical write: retried within the budget, ambiguous outcomes resolved by read-back.
    pub(super) async fn write(
        &self,
        key: &str,
        body: &[u8],
        precondition: Precondition,
        base: Option<&WriteMeta>,
    ) -> Result<Option<Written>> {
        let token = random_token()?;
        let meta = match base {
            Some(base) => WriteMeta::replacing(token, base),
            // A create or plain put starts a lineage; a layer-0 `ifMatch` put does not know the
            // version it replaces, so its lineage is unknown.
            None if matches!(precondition, Precondition::IfMatch(_)) => {
                WriteMeta { token: Some(token), history: Vec::new(), origin: None }
            }
            None => WriteMeta::creating(token),
        };
        let mut last_error = None;
        // An attempt whose outcome we could not see may still land later (a client-side timeout
        // leaves the request in flight), so a later "precondition failed" may be our own write.
        let mut unanswered = false;
        for attempt in 1..=self.retry.max_attempts {
            if attempt > 1 {
                if let Err(reason) = self.backoff(attempt - 1).await {
                    return self.abandon(key, &precondition, &meta, base, reason, unanswered, false).await;
                }
            }
            // Cancelled before sending: nothing of this attempt is in flight.
            if let Err(reason) = self.check_cancel() {
                return self.abandon(key, &precondition, &meta, base, reason, unanswered, false).await;
            }
            let sent = match self.send(self.store.put(key, body, &precondition, &meta)).await {
                Ok(sent) => sent,
                Err(reason) => return self.abandon(key, &precondition, &meta, base, reason, unanswered, true).await,
            };
            let error = match sent {
                Ok(PutOutcome::Written { etag }) => return Ok(Some(Written { etag: Some(etag), meta })),
                Ok(PutOutcome::PreconditionFailed) if unanswered => {
                    return self.settle_lost(key, &precondition, &meta, base).await;
                }
                Ok(PutOutcome::PreconditionFailed) => return Ok(None),
                Err(e) => e,
            };
            match error.kind {
                FailureKind::Fatal => return self.give_up(key, &precondition, &meta, base, error, unanswered).await,
                FailureKind::Indeterminate => match self.resolve(key, &precondition, &meta, base).await {
                    Resolution::Landed(etag) => return Ok(Some(Written { etag, meta })),
                    Resolution::Lost => return Ok(None),
                    Resolution::NotLanded => unanswered = true,
                    Resolution::Unknown(why, cause) => return Err(Error::ambiguous(key, why, cause)),
                },
                FailureKind::Transient | FailureKind::ConditionalConflict => {}
            }
            last_error = Some(error);
        }
        match last_error {
            // A conditional put still meeting 409 ConditionalRequestConflict after its retries has lost:
            // another conditional write on the key won (S3 and R2 say so for concurrent writers).
            // (Our own unanswered attempt may be what conflicts: settle that first.)
            Some(e) if e.kind == FailureKind::ConditionalConflict && precondition != Precondition::None => {
                if unanswered { self.settle_lost(key, &precondition, &meta, base).await } else { Ok(None) }
            }
            Some(e) => self.give_up(key, &precondition, &meta, base, e, unanswered).await,
            None => Err(Error::invalid("retry budget allows no attempt")),
        }
    }

    /// The store refused the write (`error`) or the budget ran out on it. If an earlier attempt
    /// went unanswered it may have landed, or may still land: the store's refusal is not the
    /// outcome then. Read back: ours → success; the version it meant to replace has a successor
    /// that is not ours → lost; otherwise not provable → `AmbiguousWrite` (never "nothing was
    /// written" while a write of ours may be on its way).
    async fn give_up(
        &self,
        key: &str,
        precondition: &Precondition,
        meta: &WriteMeta,
        base: Option<&WriteMeta>,
        error: crate::store::StoreError,
        unanswered: bool,
    ) -> Result<Option<Written>> {
        if !unanswered {
            return Err(Error::Storage(error.into_failure()));
        }
        let failure = Error::Storage(error.into_failure());
        match self.resolve(key, precondition, meta, base).await {
            Resolution::Landed(etag) => Ok(Some(Written { etag, meta: meta.clone() })),
            Resolution::Lost => Ok(None),
            Resolution::NotLanded => Err(Error::ambiguous(
                key,
                "an attempt that went unanswered may still land, and the later ones failed",
                Some(failure),
            )),
            Resolution::Unknown(why, _) => Err(Error::ambiguous(key, why, Some(failure))),
        }
    }

    /// A conditional put lost after an earlier attempt went unanswered: was it our own late write?
    async fn settle_lost(
        &self,
        key: &str,
        precondition: &Precondition,
        meta: &WriteMeta,
        base: Option<&WriteMeta>,
    ) -> Result<Option<Written>> {
        match self.resolve(key, precondition, meta, base).await {
            Resolution::Landed(etag) => Ok(Some(Written { etag, meta: meta.clone() })),
            Resolution::Unknown(why, cause) => Err(Error::ambiguous(key, why, cause)),
            Resolution::NotLanded | Resolution::Lost => Ok(None),
        }
    }

    /// The write was cancelled (`reason`). With nothing that may land (`in_flight`: the attempt
    /// just abandoned; `unanswered`: an earlier one that timed out), that is the outcome; otherwise
    /// one read-back attempt (the cancel allows no retry) decides. A read-back that does not show
    /// our write proves nothing while an attempt may still be on its way (an aborted request can
    /// still reach the store): that is an `AmbiguousWrite` with the reason as its cause.
    #[allow(clippy::too_many_arguments)]
    async fn abandon(
        &self,
        key: &str,
        precondition: &Precondition,
        meta: &WriteMeta,
        base: Option<&WriteMeta>,
        reason: Error,
        unanswered: bool,
        in_flight: bool,
    ) -> Result<Option<Written>> {
        if !in_flight && !unanswered {
            return Err(reason);
        }
        match self.resolve(key, precondition, meta, base).await {
            Resolution::Landed(etag) => Ok(Some(Written { etag, meta: meta.clone() })),
            // Not there yet, but the abandoned (or an earlier unanswered) attempt may still land.
            Resolution::NotLanded => Err(Error::ambiguous(
                key,
                "the call was cancelled while a write that may still land was on its way",
                Some(reason),
            )),
            // Someone else's version replaced the one ours needed: ours can never land now.
            Resolution::Lost => Err(reason),
            Resolution::Unknown(why, _) => Err(Error::ambiguous(key, why, Some(reason))),
        }
    }
}
