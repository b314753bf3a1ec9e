//! The checks every history must pass, on the ledger of calls, the final state (read from the
//! memory store directly, past the faults), the layer-0 history of each key, and the journal of
//! the writes the store applied, with their simulated times (the checks of time: `in_time`).

use std::collections::{BTreeMap, HashMap};

use fencepost::Held;
use serde_json::Value;

use crate::linearizable::{self, Operation};
use crate::workload::{Outcome, Record};
use crate::world::Applied;

/// The longest a call may take in simulated seconds: retries are bounded (5 attempts, backoff
/// capped), a delayed request waits at most a few seconds, a lease period with pauses a minute.
pub const SETTLE_BOUND: f64 = 300.0;

/// What the keys hold at the end.
#[derive(Default)]
pub struct Final {
    pub values: BTreeMap<String, Held>,
}

impl Final {
    /// A key's JSON value (a lease document's: its state).
    pub fn json(&self, key: &str) -> Option<&Value> {
        match self.values.get(key)? {
            Held::Json(v) => Some(v),
            Held::Lease(l) => Some(&l.state),
            Held::Bytes(_) => None,
        }
    }
}

pub fn check(records: &[Record], end: &Final, layer0: &BTreeMap<String, Vec<Operation>>) -> Vec<String> {
    let mut violations = Vec::new();
    let mut by_key: BTreeMap<(&str, &str), Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_key.entry((r.what, r.key.as_str())).or_default().push(r);
        if r.ended - r.started > SETTLE_BOUND {
            violations.push(format!("{} on {} by w{} took {:.1} s", r.what, r.key, r.worker, r.ended - r.started));
        }
    }
    // What prunes (not dry runs) deleted: what those keys' claims were told is no longer stored.
    let prunes: Vec<&Record> = records.iter().filter(|r| r.what == "prune" && r.arg == false).collect();
    for ((what, key), calls) in &by_key {
        match *what {
            "claim" => claims(key, calls, end, &prunes, &mut violations),
            "increment" => counter(key, calls, end, &mut violations),
            _ => {}
        }
    }
    for key in
        records.iter().filter(|r| r.what == "lease").map(|r| r.key.as_str()).collect::<std::collections::BTreeSet<_>>()
    {
        leases(key, records, end, &mut violations);
    }
    for (key, ops) in layer0 {
        if let Err(why) = linearizable::check(ops) {
            violations.push(format!("layer 0 on {key}: {why}"));
        }
    }
    violations
}

/// Whether the prune `p` reported `key` deleted.
fn deleted(p: &Record, key: &str) -> bool {
    matches!(&p.outcome, Outcome::Ok(keys) if keys.as_array().is_some_and(|k| k.iter().any(|k| k == key)))
}

/// One winner. Unless a prune deleted the key: every answer names the stored value, and the stored
/// value's claimer was told it won (or could not be told either way). If one did: the key was old
/// — its creation landed after the winner's call began (simulated time), and a prune deletes only
/// what is `PRUNE_AGE` older than its own clock (skewed by at most 1 s).
fn claims(key: &str, calls: &[&Record], end: &Final, prunes: &[&Record], violations: &mut Vec<String>) {
    let winners: Vec<_> = calls.iter().filter(|r| matches!(&r.outcome, Outcome::Ok(v) if v["won"] == true)).collect();
    if winners.len() > 1 {
        violations.push(format!("claim {key}: {} callers were told they won", winners.len()));
    }
    let pruned: Vec<_> = prunes.iter().filter(|p| deleted(p, key)).collect();
    for p in &pruned {
        for w in &winners {
            if w.started >= p.ended + 1.0 - crate::workload::PRUNE_AGE && w.started <= p.ended {
                violations.push(format!("prune deleted {key}, created at most {:.1} s before", p.ended - w.started));
            }
        }
    }
    if !pruned.is_empty() {
        return;
    }
    let stored = end.json(key);
    for r in calls {
        match &r.outcome {
            Outcome::Ok(v) if Some(&v["value"]) != stored => {
                violations
                    .push(format!("claim {key}: w{} was told {} but {:?} is stored", r.worker, v["value"], stored));
            }
            Outcome::Ok(v) if v["won"] == true && Some(&r.arg) != stored => {
                violations.push(format!("claim {key}: w{} won with {} but {:?} is stored", r.worker, r.arg, stored));
            }
            Outcome::Ok(v) if v["won"] == false && Some(&r.arg) == stored => {
                violations.push(format!("claim {key}: w{}'s value is stored but it was told it lost", r.worker));
            }
            Outcome::Failed(code) if Some(&r.arg) == stored => {
                violations.push(format!("claim {key}: w{}'s value is stored but the call failed ({code})", r.worker));
            }
            _ => {}
        }
    }
}

/// Acknowledged increments ≤ the count ≤ acknowledged + ambiguous; no count acknowledged twice.
fn counter(key: &str, calls: &[&Record], end: &Final, violations: &mut Vec<String>) {
    let stored = end.json(key).and_then(Value::as_i64).unwrap_or(0);
    let acked: Vec<i64> =
        calls.iter().filter_map(|r| if let Outcome::Ok(v) = &r.outcome { v.as_i64() } else { None }).collect();
    let ambiguous = calls.iter().filter(|r| r.outcome == Outcome::Ambiguous).count() as i64;
    let n = acked.len() as i64;
    if stored < n || stored > n + ambiguous {
        violations.push(format!("counter {key}: {stored} stored, {n} acknowledged, {ambiguous} ambiguous"));
    }
    let mut seen = acked.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != acked.len() {
        violations.push(format!("counter {key}: a count was acknowledged twice"));
    }
}

/// Epochs unique and increasing in real time; no write accepted under an epoch older than one
/// acquired before it began (fencing); the log's epochs never decrease; every acknowledged entry
/// (guarded or cooperative) stored once, neither lost nor doubled; none that failed.
fn leases(key: &str, records: &[Record], end: &Final, violations: &mut Vec<String>) {
    let on_key = || records.iter().filter(move |r| r.key == key);
    let epoch_of = |r: &Record| if let Outcome::Ok(v) = &r.outcome { v.as_u64() } else { None };
    let acquired: Vec<(&Record, u64)> =
        on_key().filter(|r| r.what == "lease" || r.what == "break").filter_map(|r| Some((r, epoch_of(r)?))).collect();
    let mut epochs: HashMap<u64, usize> = HashMap::new();
    for (r, e) in &acquired {
        if let Some(other) = epochs.insert(*e, r.worker) {
            violations.push(format!("lease {key}: epoch {e} taken by w{other} and w{}", r.worker));
        }
    }
    for (a, ea) in &acquired {
        for (b, eb) in &acquired {
            if a.ended_seq < b.started_seq && ea >= eb {
                violations.push(format!("lease {key}: epoch {eb} acquired after epoch {ea} was"));
            }
        }
    }
    for w in on_key().filter(|r| r.what == "write" && matches!(r.outcome, Outcome::Ok(_))) {
        let epoch = w.arg[0].as_u64().unwrap_or(0);
        if let Some((a, newer)) = acquired.iter().find(|(a, e)| *e > epoch && a.ended_seq < w.started_seq) {
            violations.push(format!(
                "lease {key}: w{}'s write under epoch {epoch} was accepted after w{} took epoch {newer}",
                w.worker, a.worker
            ));
        }
    }
    let state = end.json(key);
    let list = |field: &str| state.and_then(|s| s.get(field)).and_then(Value::as_array).cloned().unwrap_or_default();
    let log = list("log");
    if log.windows(2).any(|w| w[0][0].as_u64() > w[1][0].as_u64()) {
        violations.push(format!("lease {key}: the log's epochs go back: {}", Value::Array(log.clone())));
    }
    for (what, field) in [("write", "log"), ("cooperative", "coop")] {
        let stored = list(field);
        for r in on_key().filter(|r| r.what == what) {
            let times = stored.iter().filter(|e| **e == r.arg).count();
            match (&r.outcome, times) {
                // A cooperative write on a key without a lease document writes nothing.
                (Outcome::Ok(Value::Bool(false)), 0) => {}
                (Outcome::Ok(v), 1) if *v != Value::Bool(false) => {}
                (Outcome::Ambiguous, 0 | 1) | (Outcome::Failed(_), 0) => {}
                (outcome, times) => violations.push(format!(
                    "lease {key}: {what} {} by w{} ({outcome:?}) is stored {times} times",
                    r.arg, r.worker
                )),
            }
        }
    }
}

/// A lease document's holder and deadline (simulated seconds), when the bytes are one.
fn period(body: Option<&[u8]>) -> Option<(Option<String>, f64, Value)> {
    let doc: Value = serde_json::from_slice(body?).ok()?;
    let deadline = doc.get("deadline_at")?.as_str().and_then(fencepost::Timestamp::parse_rfc3339);
    let at = deadline.map_or(f64::NEG_INFINITY, |d| fencepost::testing::ManualClock::START_2026.secs_until(d));
    Some((doc.get("holder")?.as_str().map(str::to_owned), at, doc.get("state").cloned().unwrap_or(Value::Null)))
}

/// What a lease promises in time, read off the journal of applied writes (fencing alone would let
/// a protocol that steals early pass): no acquisition, steal or permit while another holder's
/// period is unexpired by more than the clock skew; at most `SEMAPHORE_LIMIT` unexpired permits at
/// any instant. For `once`: one `done` record per key, never changed, every `done` answer equal to
/// it, `ran: true` only for the run that wrote it. For the watch: every version it reports is one
/// the key had, in the key's order, none twice in a row, and the last one is the key's last.
pub fn in_time(records: &[Record], applied: &[Applied]) -> Vec<String> {
    let mut violations = Vec::new();
    let tolerance = crate::MAX_SKEW + 1e-6;
    let mut permits: BTreeMap<&str, (Option<String>, f64)> = BTreeMap::new();
    let mut done: BTreeMap<&str, Value> = BTreeMap::new();
    for a in applied {
        let leased = ["leases/", "once/", "sem/"].iter().any(|p| a.key.starts_with(p));
        if !leased {
            continue;
        }
        let (before, after) = (period(a.before.as_deref()), period(a.after.as_deref()));
        if let (Some((Some(old), deadline, _)), Some((Some(new), _, _))) = (&before, &after) {
            if old != new && *deadline > a.at + tolerance {
                violations.push(format!(
                    "{}: {new} took it at {:.3} s while {old}'s period ran to {deadline:.3} s",
                    a.key, a.at
                ));
            }
        }
        if a.key.starts_with("sem/") {
            let (holder, deadline, _) = after.clone().unwrap_or((None, f64::NEG_INFINITY, Value::Null));
            permits.insert(&a.key, (holder, deadline));
            let unexpired = permits.values().filter(|(h, d)| h.is_some() && *d > a.at + tolerance).count();
            if unexpired > crate::workload::SEMAPHORE_LIMIT as usize {
                violations.push(format!("semaphore: {unexpired} unexpired permits at {:.3} s", a.at));
            }
        }
        if a.key.starts_with("once/") {
            let state = after.map(|(_, _, s)| s).unwrap_or(Value::Null);
            match done.get(a.key.as_str()) {
                Some(record) if *record != state => {
                    violations.push(format!("once {}: the done record {record} was replaced by {state}", a.key));
                }
                None if state["status"] == "done" => {
                    done.insert(&a.key, state);
                }
                _ => {}
            }
        }
    }
    for r in records.iter().filter(|r| r.what == "once") {
        let Outcome::Ok(answer) = &r.outcome else { continue };
        if answer["status"] != "done" {
            continue;
        }
        match done.get(r.key.as_str()) {
            None => {
                violations.push(format!("once {}: w{} was told done, but no done record was written", r.key, r.worker))
            }
            Some(record) if record["value"] != answer["value"] => violations.push(format!(
                "once {}: w{} was told {} but {} is recorded",
                r.key, r.worker, answer["value"], record["value"]
            )),
            _ => {}
        }
        if answer["ran"] == true && answer["value"] != r.arg {
            violations.push(format!(
                "once {}: w{} was told it ran, but {} is not its result",
                r.key, r.worker, answer["value"]
            ));
        }
    }
    let mut ran: BTreeMap<&str, usize> = BTreeMap::new();
    for r in records.iter().filter(|r| r.what == "once") {
        if matches!(&r.outcome, Outcome::Ok(a) if a["ran"] == true) {
            *ran.entry(&r.key).or_default() += 1;
        }
    }
    for (key, n) in ran.into_iter().filter(|(_, n)| *n > 1) {
        violations.push(format!("once {key}: {n} calls were told they ran"));
    }
    watched(records, applied, &mut violations);
    violations
}

/// The watch's reports against the watched key's versions.
fn watched(records: &[Record], applied: &[Applied], violations: &mut Vec<String>) {
    let key = crate::workload::WATCHED_KEY;
    let versions: Vec<Value> =
        applied.iter().filter(|a| a.key == key).map(|a| a.etag.clone().map_or(Value::Null, Value::from)).collect();
    let reports: Vec<&Value> = records
        .iter()
        .filter(|r| r.what == "watch")
        .filter_map(|r| if let Outcome::Ok(v) = &r.outcome { Some(v) } else { None })
        .collect();
    // The first report is the state when the watch began (absent, or any version); each later
    // one a later version, in order.
    let mut at = 0;
    for (i, seen) in reports.iter().enumerate() {
        if i > 0 && reports[i - 1] == *seen {
            violations.push(format!("watch {key}: {seen} reported twice in a row"));
        }
        if seen.is_null() && i == 0 {
            continue;
        }
        match versions.iter().skip(at).position(|v| v == *seen) {
            Some(p) => at += p + 1,
            None => violations.push(format!("watch {key}: {seen} reported out of order, or never written")),
        }
    }
    if let (Some(last), Some(final_version)) = (reports.last(), versions.last()) {
        if *last != final_version {
            violations.push(format!("watch {key}: the last version {final_version} was never reported (last: {last})"));
        }
    }
}
