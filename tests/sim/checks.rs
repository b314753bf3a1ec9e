//! The checks every history must pass, on the ledger of calls, the final state (read from the
//! memory store directly, past the faults) and the layer-0 history of each key.

use std::collections::{BTreeMap, HashMap};

use fencepost::Held;
use serde_json::Value;

use crate::linearizable::{self, Operation};
use crate::workload::{Outcome, Record};

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
/// (guarded or cooperative) stored exactly once, none that failed.
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
