//! Breaking a stuck lease, fencing-safe (an operator's `force-unlock`): the next epoch is written
//! as released, so the old holder's next guarded write fails with `LeaseLost` ("stolen") and
//! whoever acquires next gets a higher epoch still.

use serde_json::Value;

use super::acquire::ACQUIRE_ATTEMPTS;
use super::{LeaseDoc, MAX_EPOCH};
use crate::base::error::{Error, Result};
use crate::codec::json::checked;
use crate::objects::Objects;
use crate::objects::events::{Event, LeaseAction};
use crate::time::Timestamp;

/// What [`crate::Fencepost::break_lease`] broke.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    pub key: String,
    /// The epoch written (released): the previous one plus one.
    pub epoch: u64,
    pub previous: Previous,
}

/// The period a break ended, as it was recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Previous {
    pub epoch: u64,
    /// A credential: say whose period it was to operators only.
    pub holder: Option<String>,
    pub deadline_at: Option<Timestamp>,
    /// Past its deadline (or released) when broken.
    pub expired: bool,
    /// Already released when broken (a break then only bumps the epoch).
    pub released: bool,
}

/// Write `epoch + 1` with no holder and the deadline now, keeping the state (or writing `state`),
/// by compare-and-swap on the version read; a lost race reads again. `None` without a lease
/// document. Two requests.
pub(crate) async fn break_lease(objects: &Objects, key: &str, state: Option<Value>) -> Result<Option<Broken>> {
    objects.check_key(key)?;
    let state = state.map(checked).transpose()?;
    for _ in 0..ACQUIRE_ATTEMPTS {
        let Some(obj) = objects.read(key).await? else { return Ok(None) };
        let doc = LeaseDoc::parse(key, &obj.body)?;
        let now = objects.now()?;
        let epoch = doc.epoch.checked_add(1).filter(|e| *e <= MAX_EPOCH).ok_or_else(|| {
            Error::corrupt(key, "the next epoch would exceed 2^53-1, which JS numbers cannot carry exactly")
        })?;
        let previous = Previous {
            epoch: doc.epoch,
            expired: doc.is_expired(now),
            released: doc.holder.is_none(),
            holder: doc.holder.clone(),
            deadline_at: doc.deadline_at,
        };
        let broken = LeaseDoc {
            epoch,
            holder: None,
            deadline_at: Some(now),
            state: state.clone().unwrap_or(doc.state),
            extra: doc.extra,
        };
        if objects.replace(key, &broken.encode(), &obj.etag, &obj.meta).await?.is_some() {
            objects.emit(Event::Lease { key, epoch, action: LeaseAction::Broken, reason: None });
            return Ok(Some(Broken { key: key.to_owned(), epoch, previous }));
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: ACQUIRE_ATTEMPTS })
}
