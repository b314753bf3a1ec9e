//! counter: a sharded counter, the answer to per-key write limits (R2 takes one write per second
//! per key; GCS about the same) for counters, rate tallies and metrics. Each shard is a doc at
//! `key/<i>`; `add` updates one shard chosen at random (through the doc machinery: exact under
//! contention, a lost response resolved by reading back), `value` sums them all.

use serde_json::Value;

use crate::base::error::{Error, Result};
use crate::base::future::{BoxFuture, join_all};
use crate::doc;
use crate::objects::Objects;
use crate::objects::events::Call;
use crate::objects::transition::transition;

/// Shards when none are asked for.
pub const DEFAULT_SHARDS: u32 = 16;
/// The most shards a counter may have (`value` reads every one).
pub const MAX_SHARDS: u32 = 1000;
/// Attempts of an add under contention (an add is two requests per attempt): more than a doc's
/// default, since adds commute and a burst of them on one shard is what a counter is for.
const ADD_ATTEMPTS: u32 = 64;
/// Integers a JS number carries exactly: a counter's value stays within ±(2^53 - 1). Each of its
/// `n` shards stays within ±(2^53 - 1) / n, so no sum of acknowledged adds can leave that range.
const MAX_SAFE: i64 = (1 << 53) - 1;

/// A sharded counter, from [`crate::Fencepost::counter`]. Each shard's doc handle remembers what
/// it last saw, so an `add` nobody raced costs one request. Clones share the shards' handles.
#[derive(Clone)]
pub struct Counter {
    objects: Objects,
    key: String,
    /// Each shard's key (its last version is remembered by the `Fencepost`, as a doc's is).
    shards: Vec<String>,
}

impl Counter {
    pub(crate) fn new(objects: &Objects, key: &str, shards: u32) -> Result<Counter> {
        // The counter's own key too: "" would make shards at "/0", "/1"… that pass as keys.
        objects.check_key(key)?;
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(Error::invalid(format!("shards must be an integer between 1 and {MAX_SHARDS}")));
        }
        let shards = (0..shards)
            .map(|i| {
                let shard = format!("{key}/{i}");
                objects.check_key(&shard).map(|()| shard)
            })
            .collect::<Result<_>>()?;
        Ok(Counter { objects: objects.clone(), key: key.to_owned(), shards })
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same counter, for calls that obey `cancel` (see [`Objects`]' "Cancellation": an add in
    /// flight when it fires is settled by reading back, never left unknown silently).
    pub fn with_cancel(&self, cancel: &crate::base::cancel::Cancel) -> Counter {
        Counter { objects: self.objects.with_cancel(cancel), ..self.clone() }
    }

    /// Add `n` (a whole number, negative to subtract) to one shard chosen at random. Requests: 1
    /// when that shard's handle saw its current version, else 2 (a read, then the write). Each
    /// shard stays within ±(2^53 - 1) / shards (`InvalidArgument` past it), so the value does.
    pub async fn add(&self, n: i64) -> Result<()> {
        let (objects, call) = self.objects.call("counter.add");
        let added = self.add_to_a_shard(&objects, n).await;
        Call::end(call, &self.objects, &self.key, added)
    }

    async fn add_to_a_shard(&self, objects: &Objects, n: i64) -> Result<()> {
        if n.unsigned_abs() > MAX_SAFE as u64 {
            return Err(Error::invalid("a counter adds integers of at most 2^53 - 1"));
        }
        let pick = ((self.objects.jitter() * self.shards.len() as f64) as usize).min(self.shards.len() - 1);
        let shard = &self.shards[pick];
        let bound = MAX_SAFE / self.shards.len() as i64;
        let mut add = transition(|v: Value| {
            // A shard written otherwise may hold any i64: no arithmetic here may overflow.
            let sum = count(shard, &v)?.checked_add(n).unwrap_or(i64::MAX);
            if sum.unsigned_abs() > bound as u64 {
                return Err(Error::invalid(format!(
                    "the counter would leave ±(2^53 - 1): each of its {} shards stays within ±{bound}",
                    self.shards.len()
                )));
            }
            Ok(Value::from(sum))
        });
        doc::update(objects, shard, &mut *add, Some(Value::from(0)), ADD_ATTEMPTS).await.map(drop)
    }

    /// The sum of every shard (absent shards count 0). Requests: one read per shard, together.
    /// Shards that sum beyond ±(2^53 - 1) (written otherwise) are `Corrupt`.
    pub async fn value(&self) -> Result<i64> {
        let (objects, call) = self.objects.call("counter.value");
        let summed = self.sum(&objects).await;
        Call::end(call, &self.objects, &self.key, summed)
    }

    async fn sum(&self, objects: &Objects) -> Result<i64> {
        let reads: Vec<BoxFuture<'_, Result<i64>>> = self
            .shards
            .iter()
            .map(|shard| -> BoxFuture<'_, Result<i64>> {
                Box::pin(async move {
                    match doc::read(objects, shard).await? {
                        Some(got) => count(shard, &got.value),
                        None => Ok(0),
                    }
                })
            })
            .collect();
        let mut total: i64 = 0;
        for shard in join_all(reads).await {
            total = total.saturating_add(shard?);
        }
        // Only shards written otherwise (another shard count, another tool) can sum beyond: say
        // so rather than answer a number a JS caller would get rounded.
        if total.unsigned_abs() > MAX_SAFE as u64 {
            return Err(Error::corrupt(&self.key, "the counter's shards add up to more than ±(2^53 - 1)"));
        }
        Ok(total)
    }
}

/// A shard's count: a whole number, else the shard is corrupt.
fn count(shard: &str, value: &Value) -> Result<i64> {
    value.as_i64().ok_or_else(|| Error::corrupt(shard, "a counter shard holds something other than a whole number"))
}
