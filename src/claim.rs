//! claim: a unique constraint. Put-if-absent; the loser reads the winner back. Exactly one caller
//! wins; every loser converges on the winner's value. Claims are immutable: there is no unclaim.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::fencepost::Fencepost;
use crate::json::{self, checked};

/// Attempts when the key keeps vanishing between a lost put and the read-back.
const CLAIM_ATTEMPTS: u32 = 8;

/// The outcome of a claim: whether this caller won, and the winning value either way.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// This caller's put created the key.
    pub won: bool,
    pub key: String,
    /// The winner's value (this caller's own when it won).
    pub value: Value,
    /// The etag of the claim object.
    pub etag: String,
}

impl Fencepost {
    /// Claim `key` for `value`: put-if-absent, then (having lost) read the winner. Exactly one
    /// caller wins; every loser gets the winner's value. Claims are immutable: there is no
    /// unclaim. Requests: 1 when won, 2 when lost.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Options};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// // Two Workers on one bucket (here: one memory store) racing for the same cron tick.
    /// let bucket = Rc::new(MemoryStore::new());
    /// let a = Fencepost::new(bucket.clone(), Options::default())?;
    /// let b = Fencepost::new(bucket, Options::default())?;
    /// let key = "cron/*/5 * * * */2026-05-01T09:00:00.000Z";
    /// let (ca, cb) = futures::join!(a.claim(key, json!({"by": "a"})), b.claim(key, json!({"by": "b"})));
    /// let (ca, cb) = (ca?, cb?);
    /// assert!(ca.won != cb.won, "exactly one winner");
    /// assert_eq!(ca.value, cb.value, "the loser learns the winner's value");
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn claim(&self, key: &str, value: Value) -> Result<Claim> {
        self.objects.check_key(key)?;
        let value = checked(value)?;
        let body = json::to_canonical(&value);
        for _ in 0..CLAIM_ATTEMPTS {
            if let Some(written) = self.objects.create(key, &body).await? {
                let etag = match written.etag {
                    Some(etag) => etag,
                    // Landed, then (against the protocol) rewritten: report what is there now.
                    None => self.objects.read(key).await?.map(|o| o.etag).unwrap_or_default(),
                };
                return Ok(Claim { won: true, key: key.to_owned(), value, etag });
            }
            // Lost: read the winner. If the key vanished in between, claim again.
            if let Some(winner) = self.objects.read(key).await? {
                let value = json::parse(&winner.body).map_err(|m| Error::corrupt(key, m))?;
                return Ok(Claim { won: false, key: key.to_owned(), value, etag: winner.etag });
            }
        }
        Err(Error::Conflict { key: key.to_owned(), attempts: CLAIM_ATTEMPTS })
    }
}
