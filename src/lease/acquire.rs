//! Taking a lease: `Fencepost::lease` (one attempt, or keep trying for `wait` seconds while it is
//! held), `attach_lease`, and `cooperative_write` from outside.

use crate::base::mutation::{self, Mutation};
use serde_json::{Map, Value};

use super::{Lease, LeaseDoc, LeaseOptions, MAX_EPOCH};
use crate::base::error::{Error, Result};
use crate::codec::token::random_token;
use crate::objects::Objects;
use crate::objects::events::LeaseAction;
use crate::objects::transition::{Transition, settle};
use crate::time::Timestamp;

/// Rounds of "lost the race, read again" before acquisition reports a conflict.
pub(super) const ACQUIRE_ATTEMPTS: u32 = 8;
/// `cooperative_write` attempts.
const COOPERATIVE_ATTEMPTS: u32 = 10;
/// A waiting acquisition polls after 0.1 s, then backs off up to this cap (seconds), so a
/// release is noticed within about a second without polling a long-held lease all the time.
const WAIT_FIRST_POLL: f64 = 0.1;
const WAIT_MAX_POLL: f64 = 1.0;

/// What an acquisition may take besides an absent, released or expired lease, and what its state
/// transition is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// A lease: also the holder's own unexpired one (a new period with a higher epoch).
    Lease,
    /// A semaphore's slot: never a held one, even the same holder's (each permit is a slot of its
    /// own, so a holder taking a second permit does not fence its first).
    Slot,
    /// once's run: as a lease, and the transition also sees the state of a lease someone else
    /// holds: its refusal ends the call (a `done` record is the answer, whoever holds the key).
    Once,
}

/// What one acquisition attempt found.
enum Attempt {
    Acquired(Lease),
    /// Actively held by someone else, until this deadline.
    Held(Timestamp),
    /// Expired, but `steal_if_expired` is false.
    Refused,
}

/// Acquire `key`, or `None` when it is held by someone else (or expired and
/// `steal_if_expired` is false). With `wait`, a held lease is tried again until it is acquired
/// or `wait` seconds have passed; the call's cancel ([`Fencepost::with_cancel`]) stops that.
/// Requests: 2 to acquire, 1 per attempt while held.
pub(crate) async fn lease(
    objects: &Objects,
    key: &str,
    options: LeaseOptions,
    state_fn: Option<&mut Transition<'_>>,
) -> Result<Option<Lease>> {
    Ok(lease_or_holder(objects, key, options, Rule::Lease, state_fn).await?.ok())
}

/// [`lease`], saying why not when it could not be acquired: `Err(Some(deadline))` while someone
/// else holds it (until that deadline, as of the last attempt), `Err(None)` when it is expired
/// and `steal_if_expired` is false.
pub(crate) async fn lease_or_holder(
    objects: &Objects,
    key: &str,
    options: LeaseOptions,
    rule: Rule,
    state_fn: Option<&mut Transition<'_>>,
) -> Result<std::result::Result<Lease, Option<Timestamp>>> {
    objects.check_key(key)?;
    lease_among(objects, &[key], options, rule, state_fn).await
}

/// A lease on the first of `keys` (valid keys) that can be acquired, trying each in turn, every
/// poll (a semaphore's slots; one key for a lease): as [`lease_or_holder`], the deadline being the
/// soonest of the held ones.
pub(crate) async fn lease_among(
    objects: &Objects,
    keys: &[&str],
    options: LeaseOptions,
    rule: Rule,
    mut state_fn: Option<&mut Transition<'_>>,
) -> Result<std::result::Result<Lease, Option<Timestamp>>> {
    validate_ttl(options.ttl)?;
    if let Some(wait) = options.wait {
        if !wait.is_finite() || wait < 0.0 {
            return Err(Error::invalid(format!(
                "wait must be a finite number of seconds >= 0, got {}",
                crate::base::number::number_text(wait)
            )));
        }
    }
    let holder = match &options.holder {
        Some(h) => {
            validate_holder(h)?;
            h.clone()
        }
        None => random_token()?,
    };
    let started = objects.local_now()?;
    // A cap on attempts as well, so a clock that does not advance cannot make this loop
    // forever: no pause is shorter than half the first one, except the last before the wait's
    // end or a held lease's deadline.
    let max_polls = (options.wait.unwrap_or(0.0) / (WAIT_FIRST_POLL / 2.0)).ceil().min(1e6) as u32 + 8;
    for poll in 1..=max_polls {
        let mut soonest = None;
        for key in keys {
            match try_acquire(objects, key, &holder, &options, rule, state_fn.as_deref_mut()).await? {
                Attempt::Acquired(lease) => return Ok(Ok(lease)),
                Attempt::Refused => {}
                Attempt::Held(deadline) => soonest = Some(soonest.map_or(deadline, |s: Timestamp| s.min(deadline))),
            }
        }
        let Some(deadline) = soonest else { return Ok(Err(None)) };
        let Some(wait) = options.wait else { return Ok(Err(Some(deadline))) };
        let left = wait - started.secs_until(objects.local_now()?);
        if left <= 0.0 {
            return Ok(Err(Some(deadline)));
        }
        // Never past the wait's end (one last attempt right then), nor past the held lease's
        // deadline (it may be stolen at that very instant).
        let until_expiry = objects.now()?.secs_until(deadline).max(0.0);
        objects.sleep(wait_poll(poll, objects.jitter()).min(left).min(until_expiry)).await?;
    }
    Ok(Err(None))
}

/// One acquisition: read, then create, steal or re-acquire by compare-and-swap; a lost race
/// reads again (at most `ACQUIRE_ATTEMPTS` times).
async fn try_acquire(
    objects: &Objects,
    key: &str,
    holder: &str,
    options: &LeaseOptions,
    rule: Rule,
    mut state_fn: Option<&mut Transition<'_>>,
) -> Result<Attempt> {
    for _ in 0..ACQUIRE_ATTEMPTS {
        let current = objects.read(key).await?;
        // `held`: until when someone else holds it (a lease's state transition is not run then,
        // but once's is, for its refusal alone).
        let (next_epoch, prior_state, extra, base, held) = match &current {
            None => (1, Value::Null, Map::new(), None, None),
            Some(obj) => {
                let doc = LeaseDoc::parse(key, &obj.body)?;
                let early = if mutation::on(Mutation::StealEarly) { 5.0 } else { 0.0 };
                let now = objects.now()?.plus_secs(early);
                let ours = doc.holder.as_deref() == Some(holder) && rule != Rule::Slot;
                let held = (!ours && !doc.is_expired(now)).then(|| doc.deadline());
                if let Some(deadline) = held.filter(|_| rule != Rule::Once) {
                    return Ok(Attempt::Held(deadline));
                }
                if held.is_none() && !ours && !options.steal_if_expired {
                    return Ok(Attempt::Refused);
                }
                let bump = u64::from(ours || !mutation::on(Mutation::NoEpochBumpOnSteal));
                let next = doc.epoch.checked_add(bump).filter(|e| *e <= MAX_EPOCH).ok_or_else(|| {
                    Error::corrupt(key, "the next epoch would exceed 2^53-1, which JS numbers cannot carry exactly")
                })?;
                (next, doc.state, doc.extra, Some(obj), held)
            }
        };
        let state = match state_fn.as_deref_mut() {
            Some(f) => settle(objects, f(prior_state)).await?,
            None => prior_state,
        };
        if let Some(deadline) = held {
            return Ok(Attempt::Held(deadline));
        }
        let doc = LeaseDoc {
            epoch: next_epoch,
            holder: Some(holder.to_owned()),
            deadline_at: Some(objects.deadline_in(options.ttl)?),
            state,
            extra,
        };
        let body = doc.encode();
        let written = match base {
            None => objects.create(key, &body).await?,
            Some(base) => objects.replace(key, &body, &base.etag, &base.meta).await?,
        };
        if let Some(w) = written {
            let lease = Lease::from_write(objects, key, options.ttl, doc, w.etag, w.meta);
            lease.transition(LeaseAction::Acquired, None);
            return Ok(Attempt::Acquired(lease));
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: ACQUIRE_ATTEMPTS })
}

/// Re-attach to the current ownership period of `holder`: one read, nothing written. `None`
/// when the lease is absent, released, held by someone else, or expired.
pub(crate) async fn attach_lease(objects: &Objects, key: &str, holder: &str, ttl: f64) -> Result<Option<Lease>> {
    objects.check_key(key)?;
    validate_holder(holder)?;
    validate_ttl(ttl)?;
    let Some(obj) = objects.read(key).await? else { return Ok(None) };
    let doc = LeaseDoc::parse(key, &obj.body)?;
    if doc.holder.as_deref() != Some(holder) || doc.is_expired(objects.now()?) {
        return Ok(None);
    }
    Ok(Some(Lease::from_write(objects, key, ttl, doc, Some(obj.etag), obj.meta)))
}

/// Change the state of a lease from outside: a CAS loop on `state` only; epoch, holder and
/// deadline are preserved and the holder is not fenced. `None` when there is no lease document.
/// Requests: 2.
pub(crate) async fn cooperative_write(objects: &Objects, key: &str, f: &mut Transition<'_>) -> Result<Option<Value>> {
    objects.check_key(key)?;
    for _ in 0..COOPERATIVE_ATTEMPTS {
        let Some(obj) = objects.read(key).await? else { return Ok(None) };
        let mut doc = LeaseDoc::parse(key, &obj.body)?;
        doc.state = settle(objects, f(doc.state)).await?;
        if objects.replace(key, &doc.encode(), &obj.etag, &obj.meta).await?.is_some() {
            return Ok(Some(doc.state));
        }
    }
    Err(Error::Conflict { key: key.to_owned(), attempts: COOPERATIVE_ATTEMPTS })
}

/// The pause before poll `n + 1` of a waiting acquisition: doubling from `WAIT_FIRST_POLL` up to
/// `WAIT_MAX_POLL`, with "equal jitter" (half fixed, half random) so waiters spread out but none
/// polls much more often than the schedule says.
fn wait_poll(n: u32, unit: f64) -> f64 {
    crate::objects::retry::equal_jitter(n, WAIT_FIRST_POLL, WAIT_MAX_POLL, unit)
}

/// A lease's ttl: seconds, at least a microsecond (a deadline is written to the microsecond: a
/// shorter ttl would hand out a lease already expired, anyone's to take at once), at most 100
/// years (a deadline must stay writable).
pub(crate) fn validate_ttl(ttl: f64) -> Result<()> {
    if (1e-6..=100.0 * 365.0 * 86_400.0).contains(&ttl) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "ttl must be a number of seconds from 0.000001 (deadlines are kept to the microsecond) to 100 years, got {}",
            crate::base::number::number_text(ttl)
        )))
    }
}

/// A holder is stored in the lease document and compared verbatim; it may be a caller's own id.
pub(crate) fn validate_holder(holder: &str) -> Result<()> {
    if holder.is_empty() || holder.len() > 1024 || holder.chars().any(char::is_control) {
        Err(Error::invalid("holder must be a non-empty string of at most 1024 bytes without control characters"))
    } else {
        Ok(())
    }
}
