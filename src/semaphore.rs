//! semaphore: at most `limit` holders of a key at once, each permit fenced.
//!
//! Slot `i` (0 ≤ i < limit) is an ordinary lease document at `key/<i>`, and a permit is a
//! [`Lease`] on one slot: its epoch fences the holder's writes as any lease's does, it is renewed,
//! kept alive and released as a lease is. An acquisition tries the slots from a random start (so
//! acquirers spread over the slots rather than all racing for slot 0), one read each, and takes
//! the first that is free or expired by compare-and-swap. So at most `limit` permits are unexpired
//! at any instant (while clock skew is small against the ttl), and each slot's epochs increase.
//! Lowering `limit` leaves the higher slots to their holders until they release them.
//!
//! Requests: 2 when the first slot tried is free; at most `limit` reads + 1 write otherwise.

use crate::base::error::{Error, Result};
use crate::base::mutation::{self, Mutation};
use crate::lease::acquire;
use crate::lease::with_lease::{self, ours};
use crate::lease::{Lease, LeaseDoc, LeaseOptions};
use crate::objects::Objects;
use crate::objects::events::Call;
use crate::time::Timestamp;

/// The most slots a semaphore may have: every acquisition may read each of them.
pub const MAX_LIMIT: u32 = 1000;

/// A counting semaphore over `limit` lease slots under `key` ([`crate::Fencepost::semaphore`]).
/// Plain data: cloning it or making it again per request costs nothing.
#[derive(Clone)]
pub struct Semaphore {
    objects: Objects,
    key: String,
    limit: u32,
    ttl: f64,
}

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semaphore").field("key", &self.key).field("limit", &self.limit).field("ttl", &self.ttl).finish()
    }
}

/// Options of one acquisition: `PermitOptions::default()`, then what differs.
#[derive(Clone, Default, PartialEq)]
pub struct PermitOptions {
    pub(crate) holder: Option<String>,
    pub(crate) wait: Option<f64>,
    pub(crate) keep_alive_every: Option<f64>,
}

// By hand: the holder is a credential, shown only as there.
impl std::fmt::Debug for PermitOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermitOptions")
            .field("holder", &self.holder.as_ref().map(|_| "[redacted]"))
            .field("wait", &self.wait)
            .field("keep_alive_every", &self.keep_alive_every)
            .finish()
    }
}

impl PermitOptions {
    /// Hold the permit as `holder` (default: a fresh random token).
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = Some(holder.into());
        self
    }

    /// Keep trying for up to `seconds` while every slot is held (default: one round of the slots).
    pub fn wait(mut self, seconds: f64) -> Self {
        self.wait = Some(seconds);
        self
    }

    /// Under [`Semaphore::with_permit`]: renew every `seconds` (default `ttl / 3`).
    pub fn keep_alive_every(mut self, seconds: f64) -> Self {
        self.keep_alive_every = Some(seconds);
        self
    }
}

/// An unexpired permit, as [`Semaphore::holders`] reports it.
/// Ordered by slot first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Permit {
    pub slot: u32,
    pub epoch: u64,
    pub holder: String,
    pub deadline_at: Timestamp,
}

impl Semaphore {
    /// The semaphore of `limit` slots (1 to [`MAX_LIMIT`]) under `key`, each permit a lease of
    /// `ttl` seconds.
    pub(crate) fn new(objects: &Objects, key: &str, limit: u32, ttl: f64) -> Result<Self> {
        objects.check_key(key)?;
        if limit == 0 || limit > MAX_LIMIT {
            return Err(Error::invalid(format!(
                "a semaphore's limit must be an integer from 1 to {MAX_LIMIT}, got {limit}"
            )));
        }
        acquire::validate_ttl(ttl)?;
        let semaphore = Semaphore { objects: objects.clone(), key: key.to_owned(), limit, ttl };
        // The longest slot key must be a valid key too.
        objects.check_key(&semaphore.slot_key(limit - 1))?;
        Ok(semaphore)
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    pub fn ttl(&self) -> f64 {
        self.ttl
    }

    /// The same semaphore under `objects` (another cancel).
    pub(crate) fn with_objects(&self, objects: &Objects) -> Semaphore {
        Semaphore { objects: objects.clone(), ..self.clone() }
    }

    fn slot_key(&self, slot: u32) -> String {
        format!("{}/{slot}", self.key)
    }

    /// A permit: a lease on the first free or expired slot, or `None` when all `limit` are held
    /// (after waiting up to `options.wait` seconds for one to free).
    pub async fn acquire(&self, options: PermitOptions) -> Result<Option<Lease>> {
        let (objects, call) = self.objects.call("semaphore.acquire");
        Call::end(call, &self.objects, &self.key, self.with_objects(&objects).take(&options).await)
    }

    async fn take(&self, options: &PermitOptions) -> Result<Option<Lease>> {
        let mut lease_options = LeaseOptions::new(self.ttl);
        if let Some(holder) = &options.holder {
            lease_options = lease_options.holder(holder.clone());
        }
        if let Some(wait) = options.wait {
            lease_options = lease_options.wait(wait);
        }
        // Every slot, from a random one on: acquirers spread over the slots.
        let limit = self.limit + u32::from(mutation::on(Mutation::SemaphoreExtraSlot));
        let first = (self.objects.jitter() * f64::from(limit)) as u32;
        let slots: Vec<String> = (0..limit).map(|i| self.slot_key((first + i) % limit)).collect();
        let slots: Vec<&str> = slots.iter().map(String::as_str).collect();
        Ok(acquire::lease_among(&self.objects, &slots, lease_options, acquire::Rule::Slot, None).await?.ok())
    }

    /// Acquire a permit, run `f` with it while keep-alive renews it, then release it: `Ok(None)`
    /// without calling `f` when no permit could be had. The outcomes are
    /// [`crate::Fencepost::with_lease`]'s.
    pub async fn with_permit<T, E, F>(&self, options: PermitOptions, f: F) -> std::result::Result<Option<T>, E>
    where
        F: AsyncFnOnce(&Lease) -> std::result::Result<T, E>,
        E: From<Error> + 'static,
    {
        let (objects, call) = self.objects.call("semaphore.withPermit");
        let (ran, outcome) = self.with_objects(&objects).run_with_permit(&options, f).await;
        Call::report(call, &self.objects, &self.key, outcome);
        ran
    }

    async fn run_with_permit<T, E, F>(
        &self,
        options: &PermitOptions,
        f: F,
    ) -> (std::result::Result<Option<T>, E>, &'static str)
    where
        F: AsyncFnOnce(&Lease) -> std::result::Result<T, E>,
        E: From<Error> + 'static,
    {
        if let Err(e) = with_lease::check_every(self.ttl, options.keep_alive_every) {
            return ours(e);
        }
        let permit = match self.take(options).await {
            Ok(Some(permit)) => permit,
            Ok(None) => return (Ok(None), "ok"),
            Err(e) => return ours(e),
        };
        let (out, outcome) = with_lease::hold(&self.objects, permit, options.keep_alive_every, f, &|_| None).await;
        (out.map(Some), outcome)
    }

    /// The unexpired permits, by slot: one listing, then one read per slot that exists (slots at or
    /// past `limit` included: a lowered limit leaves them to their holders).
    pub async fn holders(&self) -> Result<Vec<Permit>> {
        let (objects, call) = self.objects.call("semaphore.holders");
        Call::end(call, &self.objects, &self.key, self.with_objects(&objects).read_holders().await)
    }

    async fn read_holders(&self) -> Result<Vec<Permit>> {
        let prefix = format!("{}/", self.key);
        let mut permits = Vec::new();
        for key in self.objects.all_keys(&prefix).await? {
            let Some(slot) = key.strip_prefix(&prefix).and_then(slot_number) else { continue };
            let Some(object) = self.objects.read(&key).await? else { continue };
            let doc = LeaseDoc::parse(&key, &object.body)?;
            if doc.is_expired(self.objects.now()?) {
                continue;
            }
            if let (Some(holder), Some(deadline_at)) = (doc.holder, doc.deadline_at) {
                permits.push(Permit { slot, epoch: doc.epoch, holder, deadline_at });
            }
        }
        crate::base::sort::sort(&mut permits);
        Ok(permits)
    }
}

/// A slot's number from the last segment of its key (`"7"`), nothing else (`"07"`, `"x"`, nor
/// `"1000"`: no semaphore has that many slots).
fn slot_number(segment: &str) -> Option<u32> {
    if segment.is_empty() || (segment.starts_with('0') && segment != "0") {
        return None;
    }
    // Digits folded by hand: `str::parse` brings its general integer parser into the wasm.
    let n = segment.bytes().try_fold(0u32, |n, b| match b {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u32::from(b - b'0')),
        _ => None,
    })?;
    (n < MAX_LIMIT).then_some(n)
}

#[cfg(test)]
mod tests {
    #[test]
    fn slot_numbers_are_plain_decimals() {
        assert_eq!(super::slot_number("0"), Some(0));
        assert_eq!(super::slot_number("12"), Some(12));
        assert_eq!(super::slot_number("999"), Some(999));
        for not_a_slot in ["", "07", "x", "1/2", "-1", "1000", "99999999999"] {
            assert_eq!(super::slot_number(not_a_slot), None);
        }
    }
}
