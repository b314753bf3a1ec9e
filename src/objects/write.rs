//! The write path: one logical write, retried within the budget; outcomes not seen (a transport
//! error, a cancel while in flight) are resolved by reading the key back ([`super::resolve`]).

use super::resolve::Resolution;
use super::retry::Abandon;
use super::{Objects, Written};
use crate::base::error::{Error, Result};
use crate::base::mutation::{self, Mutation};
use crate::codec::token::random_token;
use crate::store::{FailureKind, Precondition, PutOutcome, Reply, Request, WriteMeta};

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
                WriteMeta { token: Some(token), history: String::new(), origin: None }
            }
            None => WriteMeta::creating(token),
        };
        let mut last_error = None;
        // An attempt whose outcome we could not see may still land later (a client-side timeout
        // leaves the request in flight), so a later "precondition failed" may be our own write.
        let mut unanswered = false;
        for attempt in 1..=self.retry.max_attempts {
            if attempt > 1 {
                let throttled = last_error.as_ref().is_some_and(super::retry::throttled);
                if let Err(reason) = self.backoff(attempt - 1, throttled).await {
                    return self.conclude(key, &precondition, &meta, base, Stop::Cancelled(reason), unanswered).await;
                }
            }
            // Cancelled before sending: nothing of this attempt is in flight.
            if let Err(reason) = self.check_cancel() {
                return self.conclude(key, &precondition, &meta, base, Stop::Cancelled(reason), unanswered).await;
            }
            let put = Request::Put { key, body, precondition: &precondition, meta: &meta };
            let sent = match self.send(put, attempt, Abandon::OnCancel).await {
                Ok(sent) => sent,
                // The abandoned attempt itself may still land.
                Err(reason) => {
                    return self.conclude(key, &precondition, &meta, base, Stop::Cancelled(reason), true).await;
                }
            };
            let error = match sent.map(Reply::into_put) {
                Ok(PutOutcome::Written { etag }) => return Ok(Some(Written { etag: Some(etag), meta })),
                Ok(PutOutcome::PreconditionFailed) => {
                    return self.conclude(key, &precondition, &meta, base, Stop::Lost, unanswered).await;
                }
                Err(e) => e,
            };
            match error.kind {
                FailureKind::Fatal => {
                    let refused = Stop::Refused(error.into_error(Some(key)));
                    return self.conclude(key, &precondition, &meta, base, refused, unanswered).await;
                }
                FailureKind::Indeterminate if mutation::on(Mutation::SkipReadBack) => {}
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
                self.conclude(key, &precondition, &meta, base, Stop::Lost, unanswered).await
            }
            Some(e) => {
                let refused = Stop::Refused(e.into_error(Some(key)));
                self.conclude(key, &precondition, &meta, base, refused, unanswered).await
            }
            None => Err(Error::invalid("retry budget allows no attempt")),
        }
    }

    /// The write stops (`why`) without its outcome seen. If nothing of ours can still land
    /// (`may_land` false: no attempt went unanswered, none was abandoned in flight), `why` is the
    /// outcome. Otherwise the key is read back: ours → success, whatever stopped the write; our
    /// write provably lost → the refusal or the cancel (a lost conditional put: nothing written);
    /// not provable → `AmbiguousWrite`, never "nothing was written" while a write of ours may be
    /// on its way. A cancel allows one read-back attempt and no retry (see `resolve`).
    async fn conclude(
        &self,
        key: &str,
        precondition: &Precondition,
        meta: &WriteMeta,
        base: Option<&WriteMeta>,
        why: Stop,
        may_land: bool,
    ) -> Result<Option<Written>> {
        if !may_land {
            return match why {
                Stop::Lost => Ok(None),
                Stop::Refused(e) | Stop::Cancelled(e) => Err(e),
            };
        }
        match (self.resolve(key, precondition, meta, base).await, why) {
            (Resolution::Landed(etag), _) => Ok(Some(Written { etag, meta: meta.clone() })),
            (Resolution::Unknown(why, cause), Stop::Lost) => Err(Error::ambiguous(key, why, cause)),
            (Resolution::Unknown(why, _), Stop::Refused(e) | Stop::Cancelled(e)) => {
                Err(Error::ambiguous(key, why, Some(e)))
            }
            // Someone else's version replaced the one ours needed: ours can never land now.
            (Resolution::Lost | Resolution::NotLanded, Stop::Lost) | (Resolution::Lost, Stop::Refused(_)) => Ok(None),
            (Resolution::Lost, Stop::Cancelled(e)) => Err(e),
            // Not there yet, but an unanswered or abandoned attempt may still land.
            (Resolution::NotLanded, Stop::Refused(e)) => Err(Error::ambiguous(
                key,
                "an attempt whose outcome is unknown (no answer, or a 500) may still land, and the later ones failed",
                Some(e),
            )),
            (Resolution::NotLanded, Stop::Cancelled(e)) => Err(Error::ambiguous(
                key,
                "the call was cancelled while a write that may still land was on its way",
                Some(e),
            )),
        }
    }
}

/// Why a write stops before its outcome was seen.
enum Stop {
    /// A conditional put lost: 412, or 409 `ConditionalRequestConflict` after the retries.
    Lost,
    /// The store refused it (a fatal error), or the retry budget ran out on it.
    Refused(Error),
    /// The call was cancelled (the reason).
    Cancelled(Error),
}
