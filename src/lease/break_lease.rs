//! Breaking a stuck lease, fencing-safe (an operator's `force-unlock`): the next epoch is written
//! as released, so the old holder's next guarded write fails with `LeaseLost` ("stolen") and
//! whoever acquires next gets a higher epoch still.

use serde_json::Value;

use super::acquire::ACQUIRE_ATTEMPTS;
use super::{LeaseDoc, LeaseView, MAX_EPOCH};
use crate::base::error::{Error, Result};
use crate::codec::json::checked;
use crate::objects::Objects;
use crate::objects::events::{Event, LeaseAction};

/// What [`crate::Fencepost::break_lease`] broke.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    pub key: String,
    /// The epoch written (released): the previous one plus one.
    pub epoch: u64,
    /// The period a break ended, as it was recorded and judged at the break (already released or
    /// expired, when it was; its holder is a credential: say whose period it was to operators only).
    pub previous: LeaseView,
}

/// Write `epoch + 1` with no holder and the deadline now, keeping the state (or writing `state`),
/// by compare-and-swap on the version read; a lost race reads again. `None` without a lease
/// document. Two requests.
pub(crate) async fn break_lease(objects: &Objects, key: &str, state: Option<Value>) -> Result<Option<Broken>> {
    objects.check_key(key)?;
    let state = state.map(checked).transpose()?;
    for _ in 0..ACQUIRE_ATTEMPTS {
        let Some(obj) = objects.read(key).await? else { return Ok(None) };
        let value = LeaseDoc::json(key, &obj.body)?;
        let doc = LeaseDoc::from_value(key, value.clone())?;
        let now = objects.now()?;
        let epoch = doc.epoch.checked_add(1).filter(|e| *e <= MAX_EPOCH).ok_or_else(|| {
            Error::corrupt(key, "the next epoch would exceed 2^53-1, which JS numbers cannot carry exactly")
        })?;
        let broken = LeaseDoc {
            epoch,
            holder: None,
            deadline_at: Some(now),
            state: state.clone().unwrap_or_else(|| doc.state.clone()),
            extra: doc.extra.clone(),
        };
        if objects.replace(key, &broken.encode(), &obj.etag, &obj.meta).await?.is_some() {
            objects.emit(Event::Lease { key, epoch, action: LeaseAction::Broken, reason: None });
            return Ok(Some(Broken { key: key.to_owned(), epoch, previous: doc.view(value, now) }));
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: ACQUIRE_ATTEMPTS })
}
