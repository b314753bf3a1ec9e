//! Deciding what happened to a write whose outcome was not seen, from the version read back
//! (see the module doc of [`crate::objects`]). A pure function of what was read.

use super::{Abandon, Objects};
use crate::base::error::{Error, Result};
use crate::store::{Precondition, Request, StoredObject, WriteMeta};

pub(super) enum Resolution {
    /// Our write landed; its etag when it is still the current version.
    Landed(Option<String>),
    /// Our write is not there, and the version we meant to replace (or the absence) still is.
    NotLanded,
    /// Someone else's write won; ours can no longer land.
    Lost,
    /// Not provable either way: why, and what stopped the read-back (a failure, a cancel).
    Unknown(String, Option<Error>),
}

impl Objects {
    /// After an ambiguous put: read the key back and decide what happened (see the module doc).
    /// A read-back that fails leaves the outcome unproven: that is an ambiguous write, not a
    /// storage error about some other request.
    pub(super) async fn resolve(
        &self,
        key: &str,
        precondition: &Precondition,
        mine: &WriteMeta,
        base: Option<&WriteMeta>,
    ) -> Resolution {
        match self.read_back(key).await {
            Ok(current) => judge(current, precondition, mine, base, self.store.unique_etags()),
            Err(cause @ Error::Storage(_)) => {
                Resolution::Unknown(format!("the read-back failed: {cause}"), Some(cause))
            }
            Err(cause) => {
                Resolution::Unknown("the call was cancelled before the read-back succeeded".into(), Some(cause))
            }
        }
    }

    /// The read of a resolution. Its attempts are always made and never abandoned, even when the
    /// call is cancelled (it is what settles a write in flight, and it is prompt when the store
    /// answers reads); retries stop at a cancel like every other wait.
    pub(super) async fn read_back(&self, key: &str) -> Result<Option<StoredObject>> {
        Ok(self.retrying(Request::Get(key), Abandon::Never).await?.into_object())
    }
}

/// Judge the version read back after a put of `mine` (replacing `base`) under `precondition`, on a
/// store whose etags are `unique_etags` ([`crate::store::ObjectStore::unique_etags`]).
pub(super) fn judge(
    current: Option<StoredObject>,
    precondition: &Precondition,
    mine: &WriteMeta,
    base: Option<&WriteMeta>,
    unique_etags: bool,
) -> Resolution {
    let my_token = mine.token.as_deref().unwrap_or_default();
    let Some(current) = current else {
        return match precondition {
            // Nothing there: our create or plain put did not land (or landed and was deleted,
            // which leaves the same state): trying again is safe.
            Precondition::None | Precondition::IfAbsent => Resolution::NotLanded,
            // The version we meant to replace is gone, so our write cannot succeed any more.
            Precondition::IfMatch(_) => Resolution::Lost,
        };
    };
    if current.meta.token.as_deref() == Some(my_token) {
        return Resolution::Landed(Some(current.etag));
    }
    if current.meta.contains(my_token) || current.meta.origin.as_deref() == Some(my_token) {
        return Resolution::Landed(None);
    }
    let unknown = |why: &str| Resolution::Unknown(why.to_owned(), None);
    match precondition {
        // Someone else's version is there and does not descend from ours: a retry would overwrite
        // it, and ours may have landed before it. Not provable either way.
        Precondition::None => unknown("another write replaced the key; ours may have landed before it"),
        // The key's lineage was started by someone else's create: ours did not win.
        Precondition::IfAbsent if current.meta.origin.is_some() => Resolution::Lost,
        Precondition::IfAbsent => unknown("the key exists but its provenance is not visible"),
        Precondition::IfMatch(etag) => match base.and_then(|b| b.token.as_deref()) {
            // Still the very version we meant to replace (tokens are unique; an equal etag alone
            // is not enough: equal bytes give equal etags): ours did not land.
            Some(base_token) if current.meta.token.as_deref() == Some(base_token) && current.etag == *etag => {
                Resolution::NotLanded
            }
            // The version we meant to replace has a successor, and it is not ours.
            Some(base_token) if current.meta.history_tokens().any(|t| t == base_token) => Resolution::Lost,
            // A layer-0 put does not know the token of the version it names: where etags never
            // come back, that etag still being there is that version. (Knowing the token, the arms
            // above decide; an equal etag is not asked to prove more.)
            None if unique_etags && current.etag == *etag => Resolution::NotLanded,
            _ => unknown("the key changed, or its provenance is not visible"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(etag: &str, token: &str) -> Option<StoredObject> {
        let meta = WriteMeta::creating(token.to_owned());
        Some(StoredObject { body: Vec::new(), etag: etag.to_owned(), meta, last_modified: None })
    }

    #[test]
    fn the_named_etag_still_there_proves_nothing_landed_only_where_etags_never_come_back() {
        let mine = WriteMeta::creating("mine".to_owned());
        let cas = Precondition::IfMatch("e1".to_owned());
        let judged = |current, unique| judge(current, &cas, &mine, None, unique);
        assert!(matches!(judged(version("e1", "theirs"), true), Resolution::NotLanded));
        assert!(matches!(judged(version("e1", "theirs"), false), Resolution::Unknown(..)), "equal bytes, equal etags");
        assert!(
            matches!(judged(version("e2", "theirs"), true), Resolution::Unknown(..)),
            "changed: ours may be under it"
        );
        assert!(matches!(judged(version("e2", "mine"), true), Resolution::Landed(Some(_))));
        assert!(matches!(judged(None, true), Resolution::Lost));
    }
}
