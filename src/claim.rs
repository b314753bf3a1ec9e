//! claim: a unique constraint. Put-if-absent; the loser reads the winner back. Exactly one caller
//! wins; every loser converges on the winner's value. Claims are immutable: there is no unclaim.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::base::error::{Error, Result};
use crate::codec::json::{self, checked};
use crate::objects::Objects;

/// Attempts when the key keeps vanishing between a lost put and the read-back.
const CLAIM_ATTEMPTS: u32 = 8;

/// The outcome of a claim: whether this caller won, and the winning value either way, as `T`
/// (any `serde` type; `serde_json::Value` by default).
#[derive(Debug, Clone, PartialEq)]
pub struct Claim<T = Value> {
    /// This caller's put created the key.
    pub won: bool,
    pub key: String,
    /// The winner's value (this caller's own when it won).
    pub value: T,
    /// The etag of the claim object.
    pub etag: String,
}

impl Claim {
    /// The claim with its value as `T` (see [`json::from_json`]).
    pub(crate) fn typed<T: DeserializeOwned>(self) -> Result<Claim<T>> {
        let Claim { won, key, value, etag } = self;
        let value = json::from_json(value, "claimed value", &key)?;
        Ok(Claim { won, key, value, etag })
    }
}

/// Claim `key` for `value` (see `Fencepost::claim`).
pub(crate) async fn claim(objects: &Objects, key: &str, value: Value) -> Result<Claim> {
    objects.check_key(key)?;
    let value = checked(value)?;
    let body = json::to_canonical(&value);
    for _ in 0..CLAIM_ATTEMPTS {
        if let Some(written) = objects.create(key, &body).await? {
            let etag = match written.etag {
                Some(etag) => etag,
                // Landed, then (against the protocol) rewritten: report what is there now.
                None => objects.read(key).await?.map(|o| o.etag).unwrap_or_default(),
            };
            return Ok(Claim { won: true, key: key.to_owned(), value, etag });
        }
        // Lost: read the winner. If the key vanished in between, claim again.
        if let Some(winner) = objects.read(key).await? {
            let value = json::parse(&winner.body).map_err(|m| Error::corrupt(key, m))?;
            return Ok(Claim { won: false, key: key.to_owned(), value, etag: winner.etag });
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: CLAIM_ATTEMPTS })
}
