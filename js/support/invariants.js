// The invariants of a coordination history, checked after the fact against what the callers were
// told and what the store holds at the end. One checker for the playground's simulated workers
// (js/playground/report.js) and the chaos suite's real ones (tests/chaos/histories.js): each
// history turns its own records into the plain ones below, and every function returns the
// problems it finds as sentences ([] when the invariant holds).
//
// Plain ES module, no Node or DOM: the playground page imports it as it is.

/**
 * The failure codes that tell the caller nothing was written: the caller's own abort reason
 * ("ABORTED": nothing was in flight, or a read-back proved it did not land), a plain StorageError
 * (an outcome fencepost cannot prove is an AmbiguousWriteError instead), a ConflictError (every
 * attempt lost its race). A write that failed so must not be found in the store.
 */
export const NOTHING_WRITTEN = new Set(["ABORTED", "STORAGE_ERROR", "CONFLICT"]);

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b); // values here are small plain JSON
const show = (v) => JSON.stringify(v);

/**
 * Claims: at most one caller per key is told `won: true`; every caller that got an answer was
 * given the stored value; a caller whose value is stored and who got an answer was told it won;
 * a caller whose calls all failed saying nothing was written does not have its value stored.
 *
 *   calls    [{key, caller, sent, ok: true, won, value, gotKey?}, {key, caller, sent, ok: false, code}]
 *            `sent` is the value the caller claimed with (the same on each of its retries);
 *            `gotKey` the key the answer named, when the answer names one
 *   stored   {key: the stored value, or null}, for every key of `calls`
 *   exactlyOne   every key has exactly one winner (when every caller's outcome is known)
 *   foreign  keys where the history itself injected a competing write of a caller's bytes: that
 *            write wins, so no caller is told it won, though the stored value is a caller's
 */
export function claimProblems(calls, stored, { exactlyOne = false, foreign = new Set() } = {}) {
  const problems = [];
  for (const key of new Set(calls.map((c) => c.key))) {
    const mine = calls.filter((c) => c.key === key);
    const value = stored[key] ?? null;
    const winners = mine.filter((c) => c.ok && c.won === true);
    const foreignWin = winners.length === 0 && foreign.has(key);
    const n = winners.length + (foreignWin ? 1 : 0);
    if (n > 1 || (exactlyOne && n !== 1)) {
      problems.push(`${key}: ${winners.length} callers told won: true (${winners.map((c) => c.caller).join(", ") || "none"})`);
    }
    for (const c of mine) {
      if (!c.ok) continue;
      if (c.gotKey !== undefined && c.gotKey !== key) problems.push(`${key}: ${c.caller} got key ${show(c.gotKey)}`);
      if (!same(c.value, value)) problems.push(`${key}: ${c.caller} (won: ${c.won}) was given ${show(c.value)}, the store holds ${show(value)}`);
    }
    if (value === null) continue;
    for (const caller of new Set(mine.map((c) => c.caller))) {
      const theirs = mine.filter((c) => c.caller === caller);
      const answered = theirs.filter((c) => c.ok);
      if (same(theirs[0].sent, value)) {
        if (answered.length && !answered.some((c) => c.won) && !foreignWin) problems.push(`${key}: ${caller}'s value is stored, but it was told won: false`);
        if (!answered.length && theirs.every((c) => NOTHING_WRITTEN.has(c.code))) {
          problems.push(`${key}: ${caller}'s call failed with ${theirs.map((c) => c.code).join(", ")} (nothing written), yet its value is stored`);
        }
      } else if (answered.some((c) => c.won)) {
        problems.push(`${key}: ${caller} was told won: true, but the store holds ${show(value)}`);
      }
    }
  }
  return problems;
}

/**
 * Lease epochs, for one key: no epoch is acquired twice; with `ordered` (acquisitions listed in
 * the order they happened), each one's epoch is above every earlier one; every write in the log
 * was made under an epoch its writer acquired; the stored epoch is at least the highest acquired.
 *
 *   acquisitions  [{epoch, by, holder}]: `by` the writer name that log entries carry, `holder`
 *                 what tells this acquisition from others by the same writer
 *   log           [{epoch, by, id}]: the lease state's write log, in order
 *   storedEpoch   the epoch of the lease document at the end (null: there is none)
 */
export function epochProblems({ acquisitions, log, storedEpoch, ordered = false }) {
  const problems = [];
  const byEpoch = new Map();
  let last = 0;
  for (const a of acquisitions) {
    const earlier = byEpoch.get(a.epoch);
    if (earlier) problems.push(`epoch ${a.epoch} acquired twice (${earlier.holder} and ${a.holder})`);
    else byEpoch.set(a.epoch, a);
    if (ordered && a.epoch <= last) problems.push(`${a.holder} acquired epoch ${a.epoch} after epoch ${last}`);
    last = Math.max(last, a.epoch);
  }
  for (const e of log) {
    const a = byEpoch.get(e.epoch);
    if (!a) problems.push(`${e.id} written under epoch ${e.epoch}, which no caller acquired`);
    else if (a.by !== e.by) problems.push(`${e.id} by ${e.by} under epoch ${e.epoch}, held by ${a.holder}`);
  }
  if (storedEpoch === null || storedEpoch === undefined) {
    if (acquisitions.length) problems.push(`${acquisitions.length} acquisitions, but no lease document`);
  } else if (!(storedEpoch >= last)) {
    problems.push(`the stored epoch ${storedEpoch} is below the highest acquired, ${last}`);
  }
  return problems;
}

/**
 * Fencing, for one key: the epochs in the write log never decrease, and the writes of one epoch
 * (one holder) land in the order it made them.
 *
 *   log  [{epoch, id, seq}]: `seq` orders one holder's writes
 */
export function fencingProblems(log) {
  const problems = [];
  const lastSeq = new Map();
  for (let i = 0; i < log.length; i++) {
    const e = log[i];
    if (i > 0 && e.epoch < log[i - 1].epoch) problems.push(`${e.id} (epoch ${e.epoch}) landed after ${log[i - 1].id} (epoch ${log[i - 1].epoch})`);
    const before = lastSeq.get(e.epoch);
    if (before && e.seq <= before.seq) problems.push(`${e.id} landed after ${before.id}, which was written later`);
    if (!before || e.seq > before.seq) lastSeq.set(e.epoch, e);
  }
  return problems;
}

/**
 * Broken leases (`db.breakLease`), for one key: a break writes the next epoch with no holder, so
 * the holder it broke is fenced. For every break: its epoch is above the one it broke; every
 * acquisition after it that was not already in the store has a higher epoch still; no write under
 * the broken epoch (or an earlier one) lands after it; no guarded operation of the old holder that
 * started after it succeeded; and an old holder that tried one was told `LeaseLost` with reason
 * "stolen" — unless every one it tried failed before it could learn (a storage error). (One that
 * tried none had stopped already: a release that failed leaves the lease to its deadline.)
 *
 *   breaks        [{epoch, previous: {epoch, holder}, at, logAt?}]: `at` orders the break (its
 *                 completion) among the other records; `logAt` the length of the write log right
 *                 after it (null: unknown)
 *   acquisitions  [{epoch, holder, at}]: `at` when it was recorded (after it landed)
 *   log           [{epoch, id}]: the lease state's write log, in order
 *   ops           [{holder, epoch, op, started, ok, reason?, code?, id?}]: the holders' guarded
 *                 operations (write, renew, release): acknowledged (`ok`), or failed with LeaseLost
 *                 (`reason`) or another error (`code`); `started` orders its start among the
 *                 records (after the break when started > the break's `at`); `id` a write's id
 */
export function breakProblems({ breaks, acquisitions, log, ops }) {
  const problems = [];
  const logIds = new Set(log.map((e) => e.id));
  for (const b of breaks) {
    const e = b.previous.epoch;
    const name = `the break of epoch ${e}`;
    if (!(b.epoch > e)) problems.push(`${name} wrote epoch ${b.epoch}, not a higher one`);
    // Acquisitions recorded later with an epoch ≤ e were in the store before the break.
    for (const a of acquisitions) {
      if (a.at > b.at && a.epoch > e && a.epoch <= b.epoch) problems.push(`${a.holder} acquired epoch ${a.epoch} after ${name} (to epoch ${b.epoch})`);
    }
    if (b.logAt !== null && b.logAt !== undefined) {
      if (log.length < b.logAt) problems.push(`the write log has ${log.length} entries, ${b.logAt} at ${name}`);
      for (const entry of log.slice(b.logAt)) {
        if (entry.epoch <= e) problems.push(`${entry.id} (epoch ${entry.epoch}) landed after ${name}`);
      }
    }
    if (b.previous.holder === null || b.previous.holder === undefined) continue;
    const holder = b.previous.holder;
    const mine = ops.filter((o) => o.holder === holder && o.epoch === e);
    const late = mine.filter((o) => o.started > b.at);
    for (const o of late) {
      if (o.ok) problems.push(`${holder}'s ${o.op}${o.id ? ` ${o.id}` : ""} (epoch ${e}), started after ${name}, succeeded`);
      else if (o.id && logIds.has(o.id)) problems.push(`${holder}'s ${o.op} ${o.id} (epoch ${e}), started after ${name}, is in the log`);
    }
    for (const o of mine) {
      if (o.reason !== undefined && o.reason !== "stolen") problems.push(`${holder} (epoch ${e}) was told LeaseLost with reason "${o.reason}" after ${name}, not "stolen"`);
    }
    const told = mine.some((o) => o.reason === "stolen");
    const neverLearnt = late.every((o) => !o.ok && o.reason === undefined);
    if (late.length > 0 && !told && !neverLearnt) problems.push(`${holder} (epoch ${e}) was never told LeaseLost (stolen) after ${name}`);
  }
  return problems;
}

/**
 * Writes: every acknowledged write is in the final state, and no write is there twice.
 *
 *   ids    the ids of the writes in the final state, in order, repeats included
 *   acked  the ids of the acknowledged writes
 */
export function writeProblems(ids, acked) {
  const problems = [];
  const count = new Map();
  for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
  for (const [id, n] of count) if (n > 1) problems.push(`${id} applied ${n} times`);
  for (const id of acked) if (!count.has(id)) problems.push(`acknowledged ${id} is lost`);
  return problems;
}

/**
 * Refused writes: a write whose call said nothing was written (a NOTHING_WRITTEN code, or
 * LeaseLost for a fenced write) is not in the final state.
 *
 *   ids      the ids of the writes in the final state
 *   refused  [{id, code}]
 */
export function refusedProblems(ids, refused) {
  const present = new Set(ids);
  return refused.filter((r) => present.has(r.id)).map((r) => `${r.id} failed with ${r.code} (nothing written), yet it is in the state`);
}

/**
 * A counter incremented by `doc.update(v => v + 1, {create: 0})`: acknowledged increments ≤ the
 * stored value ≤ acknowledged + ambiguous ones; no value is acknowledged to two increments; every
 * acknowledged value lies in 1..stored.
 *
 *   stored          the counter at the end
 *   acked           the values the acknowledged increments resolved to
 *   ambiguous       how many increments may or may not have landed (AmbiguousWriteError)
 *   nothingWritten  {code: count} of the increments that failed saying nothing was written
 */
export function counterProblems({ stored, acked, ambiguous, nothingWritten = {} }) {
  const problems = [];
  if (typeof stored !== "number") problems.push(`the stored counter is ${show(stored)}`);
  if (stored < acked.length) problems.push(`the counter is ${stored} but ${acked.length} increments were acknowledged (an increment was lost)`);
  if (stored > acked.length + ambiguous) {
    const refused = Object.values(nothingWritten).reduce((a, b) => a + b, 0);
    const why = stored <= acked.length + ambiguous + refused
      ? ` (a call that failed with ${Object.keys(nothingWritten).join(" or ")}, as if nothing was written, landed)` : " (one applied twice)";
    problems.push(`the counter is ${stored} but only ${acked.length} acknowledged + ${ambiguous} ambiguous increments${why}`);
  }
  const seen = new Map();
  for (const x of acked) seen.set(x, (seen.get(x) ?? 0) + 1);
  for (const [x, n] of seen) if (n > 1) problems.push(`value ${x} was acknowledged to ${n} increments`);
  for (const x of acked) if (!(Number.isInteger(x) && x >= 1 && x <= stored)) problems.push(`acknowledged value ${x} outside 1..${stored}`);
  return problems;
}
