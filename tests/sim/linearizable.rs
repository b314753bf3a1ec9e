//! A linearizability checker for one key of an object store, modelled as a register with
//! conditional writes (Wing & Gong's search, with Lowe's memo of visited configurations, as
//! Porcupine does it). Written here: the crates that exist check histories for models of their
//! own making, and this model is 60 lines.
//!
//! An operation has an invocation and, when its caller heard back, a return; one whose outcome
//! the caller never learned (a lost response, a transport error, a timeout) may take effect at any
//! point after its invocation, or not at all. The store's etag is taken to be a function of the
//! body (as the memory store's and S3's single-part etags are): an `If-Match` etag names the body
//! it was observed with.

use std::collections::{HashMap, HashSet};

/// What a request asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Get,
    Put { body: Vec<u8>, condition: Condition },
    Delete,
    DeleteIfMatch { etag: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    None,
    IfAbsent,
    IfMatch(String),
}

/// What the caller heard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Return {
    Got(Option<(String, Vec<u8>)>),
    Written {
        etag: String,
    },
    /// A conditional put whose condition did not hold.
    Refused,
    /// A delete; for a conditional one, whether it deleted.
    Deleted(bool),
    /// The outcome never reached the caller.
    Unknown,
}

#[derive(Debug, Clone)]
pub struct Operation {
    pub call: Call,
    pub ret: Return,
    /// Positions in one global order of events (invocations and returns).
    pub invoked: u64,
    /// `u64::MAX` when the return is unknown.
    pub returned: u64,
}

/// The first operation (by invocation) that no linearization could place, when there is none.
pub fn check(ops: &[Operation]) -> Result<(), String> {
    if ops.len() > 4096 {
        return Err(format!("{} operations on one key: more than the checker takes", ops.len()));
    }
    let mut etags: HashMap<&str, &[u8]> = HashMap::new();
    for op in ops {
        match (&op.call, &op.ret) {
            (Call::Put { body, .. }, Return::Written { etag }) => {
                etags.insert(etag, body);
            }
            (_, Return::Got(Some((etag, body)))) => {
                etags.insert(etag, body);
            }
            _ => {}
        }
    }
    let mut search = Search { ops, etags, seen: HashSet::new(), deepest: 0 };
    let mut done = vec![false; ops.len()];
    if search.extend(&mut done, None, 0) {
        return Ok(());
    }
    Err(format!("not linearizable: {} of the operations could be placed in order", search.deepest))
}

struct Search<'a> {
    ops: &'a [Operation],
    etags: HashMap<&'a str, &'a [u8]>,
    /// Configurations (which operations are placed, the register's value) already explored.
    seen: HashSet<(Vec<bool>, Option<Vec<u8>>)>,
    deepest: usize,
}

impl Search<'_> {
    fn extend(&mut self, done: &mut Vec<bool>, state: Option<&[u8]>, placed: usize) -> bool {
        self.deepest = self.deepest.max(placed);
        if (0..self.ops.len()).all(|i| done[i] || self.ops[i].ret == Return::Unknown) {
            return true;
        }
        if !self.seen.insert((done.clone(), state.map(<[u8]>::to_vec))) {
            return false;
        }
        // An operation can come next only if it was invoked before every pending one returned.
        let first_return = (0..self.ops.len()).filter(|&i| !done[i]).map(|i| self.ops[i].returned).min();
        let first_return = first_return.unwrap_or(u64::MAX);
        for i in 0..self.ops.len() {
            if done[i] || self.ops[i].invoked > first_return {
                continue;
            }
            let Some(next) = self.step(&self.ops[i], state) else { continue };
            done[i] = true;
            let next = next.map(<[u8]>::to_vec);
            if self.extend(done, next.as_deref(), placed + 1) {
                return true;
            }
            done[i] = false;
        }
        false
    }

    /// The register's value after `op` took effect on `state`, if what its caller heard allows it.
    fn step<'s>(&self, op: &'s Operation, state: Option<&'s [u8]>) -> Option<Option<&'s [u8]>> {
        let matches = |etag: &str| state.is_some() && self.etags.get(etag).copied() == state;
        match (&op.call, &op.ret) {
            (Call::Get, Return::Got(got)) => (got.as_ref().map(|(_, b)| b.as_slice()) == state).then_some(state),
            (Call::Get, _) => Some(state),
            (Call::Put { body, condition }, ret) => {
                let holds = match condition {
                    Condition::None => true,
                    Condition::IfAbsent => state.is_none(),
                    Condition::IfMatch(etag) => matches(etag),
                };
                match ret {
                    Return::Written { .. } | Return::Unknown => holds.then_some(Some(body.as_slice())),
                    Return::Refused => (!holds).then_some(state),
                    _ => None,
                }
            }
            (Call::Delete, Return::Deleted(_) | Return::Unknown) => Some(None),
            (Call::DeleteIfMatch { etag }, ret) => match ret {
                Return::Deleted(true) | Return::Unknown => matches(etag).then_some(None),
                Return::Deleted(false) => (!matches(etag)).then_some(state),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The checker's own tests, run before every simulation (the simulation binary has no test
/// harness): each must accept a linearizable history and reject one that is not.
pub fn self_test() {
    tests::two_creates_may_not_both_win();
    tests::overlapping_operations_may_go_either_way_but_sequential_ones_may_not();
    tests::a_compare_and_swap_on_a_stale_etag_must_be_refused();
    tests::an_unknown_outcome_may_have_landed_or_not();
    tests::a_conditional_delete_follows_the_etag();
    tests::many_concurrent_operations_are_searched_quickly();
}

mod tests {
    use super::*;

    fn op(call: Call, ret: Return, invoked: u64, returned: u64) -> Operation {
        Operation { call, ret, invoked, returned }
    }
    fn put(body: &str, condition: Condition) -> Call {
        Call::Put { body: body.into(), condition }
    }
    fn written(etag: &str) -> Return {
        Return::Written { etag: etag.into() }
    }
    fn got(etag: &str, body: &str) -> Return {
        Return::Got(Some((etag.into(), body.into())))
    }

    pub fn two_creates_may_not_both_win() {
        let both = [
            op(put("a", Condition::IfAbsent), written("ea"), 0, 2),
            op(put("b", Condition::IfAbsent), written("eb"), 1, 3),
        ];
        assert!(check(&both).is_err());
        let one = [
            op(put("a", Condition::IfAbsent), written("ea"), 0, 2),
            op(put("b", Condition::IfAbsent), Return::Refused, 1, 3),
        ];
        assert!(check(&one).is_ok());
    }

    pub fn overlapping_operations_may_go_either_way_but_sequential_ones_may_not() {
        // A read that overlaps a write may see either value; one that starts after it returned
        // must see the new one.
        let overlapping = [op(put("v1", Condition::None), written("e1"), 0, 3), op(Call::Get, Return::Got(None), 1, 2)];
        assert!(check(&overlapping).is_ok());
        let after = [op(put("v1", Condition::None), written("e1"), 0, 1), op(Call::Get, Return::Got(None), 2, 3)];
        assert!(check(&after).is_err());
    }

    pub fn a_compare_and_swap_on_a_stale_etag_must_be_refused() {
        let history = [
            op(put("v1", Condition::None), written("e1"), 0, 1),
            op(put("v2", Condition::IfMatch("e1".into())), written("e2"), 2, 3),
            op(put("v3", Condition::IfMatch("e1".into())), written("e3"), 4, 5),
        ];
        assert!(check(&history).is_err());
        let mut refused = history.clone();
        refused[2].ret = Return::Refused;
        assert!(check(&refused).is_ok());
    }

    pub fn an_unknown_outcome_may_have_landed_or_not() {
        let unknown = |returned| op(put("v2", Condition::None), Return::Unknown, 2, returned);
        let landed = [
            op(put("v1", Condition::None), written("e1"), 0, 1),
            unknown(u64::MAX),
            op(Call::Get, got("e2", "v2"), 5, 6),
        ];
        assert!(check(&landed).is_ok());
        let not_landed = [
            op(put("v1", Condition::None), written("e1"), 0, 1),
            unknown(u64::MAX),
            op(Call::Get, got("e1", "v1"), 5, 6),
        ];
        assert!(check(&not_landed).is_ok());
        // …but not before it was sent.
        let too_early = [op(Call::Get, got("e2", "v2"), 0, 1), unknown(u64::MAX)];
        assert!(check(&too_early).is_err());
    }

    pub fn a_conditional_delete_follows_the_etag() {
        let history = [
            op(put("v1", Condition::None), written("e1"), 0, 1),
            op(Call::DeleteIfMatch { etag: "e0".into() }, Return::Deleted(true), 2, 3),
        ];
        assert!(check(&history).is_err());
        let history = [
            op(put("v1", Condition::None), written("e1"), 0, 1),
            op(Call::DeleteIfMatch { etag: "e1".into() }, Return::Deleted(true), 2, 3),
            op(Call::Get, Return::Got(None), 4, 5),
            op(put("v2", Condition::IfAbsent), written("e2"), 6, 7),
        ];
        assert!(check(&history).is_ok());
    }

    pub fn many_concurrent_operations_are_searched_quickly() {
        // 40 overlapping creates, one winner, each followed by a read of the winner.
        let mut history = Vec::new();
        for i in 0..40u64 {
            let ret = if i == 17 { written("w") } else { Return::Refused };
            let body = if i == 17 { "w".to_owned() } else { format!("b{i}") };
            history.push(op(Call::Put { body: body.into_bytes(), condition: Condition::IfAbsent }, ret, i, 100 + i));
            history.push(op(Call::Get, got("w", "w"), 200 + i, 300 + i));
        }
        assert!(check(&history).is_ok());
    }
}
