// Seeded random concurrent histories against fencepost through the fault proxy, and the invariants
// checked on their outcome. The final state is read directly from the store (no proxy).
//
//   claims   many concurrent db.claim(key, value) on a few keys from several Fencepost instances
//   counter  concurrent doc.update(v => v + 1, {create: 0}) on one doc
//   leases   workers loop lease → fenced updateState appends → (keep-alive) → release or abandon,
//            while cooperative writers append from outside
//
// Only updateState and cooperativeWrite change a lease's state, and both only append an entry with
// a unique id (no write(), no release({state})), so "no acknowledged write is lost" is exact.

import { FencepostError } from "fencepost";
import { prng } from "./prng.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/**
 * Failures that say "nothing was written": the bare abort reason (SPEC: nothing was in flight, or
 * the read-back proved it did not land), a plain StorageError (an unprovable outcome is an
 * AmbiguousWriteError instead), a ConflictError (every attempt lost its race).
 */
const DEFINITE = new Set(["ABORTED", "STORAGE_ERROR", "CONFLICT"]);
const INIT = () => ({ log: [], coop: [] });

/** The bookkeeping of one seed: calls, rejections by code, violations by family. */
export class Ledger {
  constructor(families, { watchdog = 30, abortSlack = 10 } = {}) {
    this.calls = Object.create(null);
    this.aborts = { fired: 0, ambiguous: 0, settleAfter: [] };
    this.abortSlack = abortSlack;
    this.rejected = Object.create(null);
    this.violations = Object.fromEntries(families.map((f) => [f, []]));
    this.watchdog = watchdog;
  }

  violate(family, msg) {
    this.violations[family].push(msg);
  }

  /**
   * Run one API call: {ok: true, value} or {ok: false, code, error}. `fn` gets an AbortSignal (or
   * undefined). With `abortMs`, the signal aborts after that many ms with a fresh reason: a
   * rejection with exactly that reason is code "ABORTED" (SPEC: nothing landed). A rejection that
   * is not a FencepostError (nor that reason), or a call that does not settle within the watchdog,
   * is a violation.
   */
  async call(op, fn, { abortMs } = {}) {
    this.calls[op] = (this.calls[op] ?? 0) + 1;
    let timer;
    let abortTimer;
    let abortedAt = null;
    let signal;
    let reason;
    if (abortMs !== undefined) {
      const ac = new AbortController();
      reason = new ChaosAbort(`${op} aborted after ${abortMs.toFixed(0)} ms`);
      abortTimer = setTimeout(() => {
        abortedAt = Date.now();
        this.aborts.fired++;
        ac.abort(reason);
      }, abortMs);
      signal = ac.signal;
    }
    const watchdog = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ hung: true }), this.watchdog * 1000);
    });
    const t0 = Date.now();
    try {
      const r = await Promise.race([
        Promise.resolve().then(() => fn(signal)).then((value) => ({ ok: true, value }), (error) => ({ ok: false, error })),
        watchdog,
      ]);
      if (abortedAt !== null && !r.hung) {
        const after = (Date.now() - abortedAt) / 1000;
        this.aborts.settleAfter.push(after);
        if (after > this.abortSlack) this.violate("errors", `${op}: settled ${after.toFixed(2)} s after its signal aborted`);
      }
      if (r.hung) {
        this.violate("errors", `${op} did not settle within ${this.watchdog} s`);
        this.rejected.HUNG = (this.rejected.HUNG ?? 0) + 1;
        return { ok: false, code: "HUNG" };
      }
      if (r.ok) return r;
      const e = r.error;
      if (reason !== undefined && e === reason) {
        this.rejected.ABORTED = (this.rejected.ABORTED ?? 0) + 1;
        return { ok: false, code: "ABORTED", error: e };
      }
      if (e instanceof FencepostError && typeof e.code === "string") {
        this.rejected[e.code] = (this.rejected[e.code] ?? 0) + 1;
        if (e.code === "AMBIGUOUS_WRITE" && abortedAt !== null) this.aborts.ambiguous++;
        return { ok: false, code: e.code, error: e };
      }
      this.violate("errors", `${op} rejected with a non-FencepostError after ${(Date.now() - t0) / 1000} s: ` +
        `${e?.name ?? typeof e}: ${e?.message ?? String(e)}`);
      this.rejected.UNTYPED = (this.rejected.UNTYPED ?? 0) + 1;
      return { ok: false, code: "UNTYPED", error: e };
    } finally {
      clearTimeout(timer);
      clearTimeout(abortTimer);
    }
  }
}

/** The reason of the chaos suite's own aborts. */
class ChaosAbort extends Error {
  name = "ChaosAbort";
}

// ---------------------------------------------------------------------------------------- claims

export async function claimHistory({ seed, dbs, direct, ledger, calls, keys = 4, spread = 1500, abortRate = 0 }) {
  const rng = prng(seed, "claims");
  const perKey = Math.max(3, Math.round(calls / keys));
  const results = []; // {key, caller, outcome}
  const jobs = [];
  for (let k = 0; k < keys; k++) {
    const key = `claim/${k}`;
    for (let c = 0; c < perKey; c++) {
      const caller = `k${k}c${c}`;
      const db = rng.pick(dbs);
      const delay = rng.range(0, spread);
      const abortMs = rng.chance(abortRate) ? rng.range(0, 150) : undefined;
      jobs.push((async () => {
        await sleep(delay);
        const r = await ledger.call("claim", (signal) => db.claim(key, { caller, seed }, { signal }), { abortMs });
        results.push({ key, caller, r });
      })());
    }
  }
  await Promise.all(jobs);

  for (let k = 0; k < keys; k++) {
    const key = `claim/${k}`;
    const stored = (await direct.doc(key).get())?.value ?? null;
    const mine = results.filter((x) => x.key === key);
    const winners = mine.filter((x) => x.r.ok && x.r.value.won === true);
    const v = (msg) => ledger.violate("claims", `${key}: ${msg}`);
    if (winners.length > 1) v(`${winners.length} callers told won: true (${winners.map((x) => x.caller).join(", ")})`);
    if (stored === null) {
      if (mine.some((x) => x.r.ok)) v(`no claim stored, yet ${mine.filter((x) => x.r.ok).length} calls returned`);
      continue;
    }
    for (const x of mine) {
      if (DEFINITE.has(x.r.code) && stored.caller === x.caller) {
        v(`${x.caller}'s call failed with ${x.r.code} (nothing written), yet its value is the stored winner`);
      }
      if (!x.r.ok) continue;
      const got = x.r.value;
      if (got.key !== key) v(`${x.caller} got key ${JSON.stringify(got.key)}`);
      if (JSON.stringify(got.value) !== JSON.stringify(stored)) {
        v(`${x.caller} (won: ${got.won}) was given ${JSON.stringify(got.value)}, stored winner is ${JSON.stringify(stored)}`);
      }
      const isStored = stored.caller === x.caller;
      if (isStored && got.won !== true) v(`${x.caller}'s value is the stored winner but it was told won: ${got.won}`);
      if (!isStored && got.won === true) v(`${x.caller} was told won: true but the stored winner is ${stored.caller}`);
    }
  }
  return { keys, calls: results.length };
}

// --------------------------------------------------------------------------------------- counter

export async function counterHistory({ seed, dbs, direct, ledger, calls, workers = 3, abortRate = 0 }) {
  const key = "counter";
  const per = Math.max(1, Math.round(calls / workers));
  const acked = [];
  let uncertain = 0; // AmbiguousWriteError (or a violation already reported): may have landed
  const definite = {}; // failures that say nothing was written, by code
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    const rng = prng(seed, `counter/${w}`);
    for (let i = 0; i < per; i++) {
      const db = rng.pick(dbs);
      const abortMs = rng.chance(abortRate) ? rng.range(0, 100) : undefined;
      const r = await ledger.call("doc.update", (signal) => db.doc(key).update((v) => v + 1, { create: 0, signal }), { abortMs });
      if (r.ok) acked.push(r.value);
      else if (DEFINITE.has(r.code)) definite[r.code] = (definite[r.code] ?? 0) + 1;
      else uncertain++;
      await sleep(rng.range(0, 60));
    }
  }));
  const stored = (await direct.doc(key).get())?.value ?? 0;
  const v = (msg) => ledger.violate("counter", msg);
  if (typeof stored !== "number") v(`stored counter is ${JSON.stringify(stored)}`);
  if (stored < acked.length) v(`counter is ${stored} but ${acked.length} increments were acknowledged (an increment was lost)`);
  if (stored > acked.length + uncertain) {
    const nDefinite = Object.values(definite).reduce((a, b) => a + b, 0);
    const more = stored <= acked.length + uncertain + nDefinite
      ? ` (a call that failed with ${Object.keys(definite).join(" or ")}, as if nothing was written, landed)` : " (one applied twice)";
    v(`counter is ${stored} but only ${acked.length} acknowledged + ${uncertain} ambiguous increments${more}`);
  }
  const seen = new Map();
  for (const x of acked) seen.set(x, (seen.get(x) ?? 0) + 1);
  for (const [x, n] of seen) if (n > 1) v(`value ${x} was acknowledged to ${n} increments`);
  for (const x of acked) if (!(Number.isInteger(x) && x >= 1 && x <= stored)) v(`acknowledged value ${x} outside 1..${stored}`);
  return { stored, acked: acked.length, uncertain, definite };
}

// ---------------------------------------------------------------------------------------- leases

export async function leaseHistory({ seed, dbs, direct, ledger, calls, keys = 2, workers = 3, ttl = 2, deadline, abortRate = 0 }) {
  const acquisitions = []; // {key, epoch, w, i}
  const ackedLog = new Map(); // id -> {key, entry}
  const ackedCoop = new Map(); // id -> key
  const definiteLog = new Map(); // id -> {key, code}: updateState / cooperativeWrite failed saying nothing was written
  const budget = new Map(); // worker -> calls left
  const stats = { acquired: 0, held: 0, released: 0, abandoned: 0, lost: 0, stalls: 0, keepAlive: 0, withLease: 0 };
  const perWorker = Math.max(4, Math.round((calls * 1.2) / (keys * workers)));
  const running = new Map(); // key -> workers still running

  // One ownership period: 1–4 fenced appends (some aborted), stalls past the ttl. → "lost" | "ok"
  async function hold(lease, key, w, i, rng, managed) {
    stats.acquired++;
    acquisitions.push({ key, epoch: lease.epoch, w, i });
    const writes = 1 + rng.int(4);
    for (let j = 0; j < writes && budget.get(w) > 0; j++) {
      budget.set(w, budget.get(w) - 1);
      const id = `${key}#${w}.${i}.${j}`;
      const entry = { epoch: lease.epoch, id, w };
      const abortMs = rng.chance(abortRate) ? rng.range(0, 40) : undefined;
      const r = await ledger.call("updateState", (signal) =>
        lease.updateState((s) => {
          const b = s ?? INIT();
          return { ...b, log: [...(b.log ?? []), entry] };
        }, { signal }), { abortMs });
      if (r.ok) {
        ackedLog.set(id, { key, entry });
        if (!r.value?.log?.some((x) => x.id === id)) {
          ledger.violate("lease-writes", `${id}: updateState resolved to a state without its entry`);
        }
      } else if (DEFINITE.has(r.code)) {
        definiteLog.set(id, { key, code: r.code });
      }
      if (r.code === "LEASE_LOST") {
        if (!lease.signal?.aborted) ledger.violate("errors", `${id}: LeaseLost but lease.signal is not aborted`);
        stats.lost++;
        return "lost";
      }
      if (rng.chance(0.1)) {
        stats.stalls++;
        await sleep(ttl * 1300); // a stalled holder: expired unless keep-alive renewed it
      } else {
        await sleep(rng.range(10, 150));
      }
    }
    return lease.signal?.aborted && !managed ? "lost" : "ok";
  }

  async function worker(key, w) {
    const rng = prng(seed, `lease/${key}/${w}`);
    budget.set(w, perWorker);
    let i = 0;
    const stateFn = (s) => s ?? INIT();
    while (budget.get(w) > 0 && Date.now() < deadline) {
      i++;
      budget.set(w, budget.get(w) - 1);
      const db = rng.pick(dbs);
      const wait = rng.chance(0.4) ? rng.range(0.2, 1.5) : undefined;
      const opts = { ttl, stateFn, ...(wait !== undefined ? { wait } : {}) };
      if (rng.chance(0.3)) {
        // withLease: acquire, keep alive, release when fn settles
        let ran = false;
        const r = await ledger.call("withLease", () =>
          db.withLease(key, { ...opts, every: ttl / 3 }, async (lease) => {
            ran = true;
            stats.withLease++;
            return hold(lease, key, w, i, rng, true);
          }));
        if (r.ok && r.value === null) stats.held++;
        if (r.ok && r.value !== null) stats.released++;
        if (!ran) {
          if (r.ok) budget.set(w, budget.get(w) + 0.75);
          await sleep(rng.range(80, 400));
        }
        await sleep(rng.range(0, 200));
        continue;
      }
      const abortMs = rng.chance(abortRate / 2) ? rng.range(0, 100) : undefined;
      const got = await ledger.call("lease", (signal) => db.lease(key, { ...opts, signal }), { abortMs });
      if (!got.ok || !got.value) {
        if (got.ok) {
          stats.held++;
          budget.set(w, budget.get(w) + 0.75); // finding it held is cheap: a quarter of an attempt
        }
        await sleep(rng.range(80, 400));
        continue;
      }
      const lease = got.value;
      let stop = null;
      if (rng.chance(0.6)) {
        const ka = await ledger.call("keepAlive", () => lease.keepAlive({ every: ttl / 3 }));
        if (ka.ok) {
          stats.keepAlive++;
          stop = () => ka.value.stop();
        }
      }
      const end = await hold(lease, key, w, i, rng, false);
      if (stop) await ledger.call("keepAlive.stop", () => stop());
      if (end !== "lost" && !lease.signal?.aborted) {
        if (rng.chance(0.7)) {
          budget.set(w, budget.get(w) - 1);
          const r = await ledger.call("release", () => lease.release());
          if (r.ok) stats.released++;
          if (r.ok && !lease.signal?.aborted) ledger.violate("errors", `${key} epoch ${lease.epoch}: released but lease.signal is not aborted`);
        } else {
          stats.abandoned++; // let it expire: another worker steals it after ttl
        }
      }
      await sleep(rng.range(0, 200));
    }
  }

  // Cooperative writes from outside, for as long as the key's workers run.
  async function cooperator(key, k) {
    const rng = prng(seed, `coop/${key}`);
    for (let j = 0; running.get(key) > 0 && Date.now() < deadline; j++) {
      const id = `${key}#c${k}.${j}`;
      const db = rng.pick(dbs);
      const r = await ledger.call("cooperativeWrite", () =>
        db.cooperativeWrite(key, (s) => {
          const b = s ?? INIT();
          return { ...b, coop: [...(b.coop ?? []), id] };
        }));
      if (DEFINITE.has(r.code)) definiteLog.set(id, { key, code: r.code });
      if (r.ok && r.value !== null) {
        ackedCoop.set(id, key);
        if (!r.value?.coop?.includes(id)) ledger.violate("lease-writes", `${id}: cooperativeWrite resolved to a state without its entry`);
      }
      await sleep(rng.range(100, 600));
    }
  }

  const jobs = [];
  for (let k = 0; k < keys; k++) {
    const key = `lease/${k}`;
    running.set(key, workers);
    for (let w = 0; w < workers; w++) jobs.push(worker(key, `w${w}`).finally(() => running.set(key, running.get(key) - 1)));
    jobs.push(cooperator(key, k));
  }
  await Promise.all(jobs);

  for (let k = 0; k < keys; k++) {
    const key = `lease/${k}`;
    const obj = await direct.objects.get(key);
    const doc = obj ? JSON.parse(new TextDecoder().decode(obj.data)) : null;
    const acq = acquisitions.filter((a) => a.key === key);
    const byEpoch = new Map();
    for (const a of acq) {
      if (byEpoch.has(a.epoch)) {
        const b = byEpoch.get(a.epoch);
        ledger.violate("lease-epochs", `${key}: epoch ${a.epoch} acquired twice (${b.w} try ${b.i} and ${a.w} try ${a.i})`);
      } else byEpoch.set(a.epoch, a);
    }
    if (!doc) {
      if (acq.length) ledger.violate("lease-epochs", `${key}: ${acq.length} acquisitions but no lease document`);
      continue;
    }
    const maxEpoch = Math.max(0, ...acq.map((a) => a.epoch));
    if (!(doc.epoch >= maxEpoch)) ledger.violate("lease-epochs", `${key}: stored epoch ${doc.epoch} below acquired epoch ${maxEpoch}`);
    const log = doc.state?.log ?? [];
    const coop = doc.state?.coop ?? [];
    // every logged write came from the holder that acquired its epoch
    for (const e of log) {
      const a = byEpoch.get(e.epoch);
      if (!a) ledger.violate("lease-epochs", `${key}: ${e.id} written under epoch ${e.epoch}, which no caller acquired`);
      else if (a.w !== e.w) ledger.violate("lease-epochs", `${key}: ${e.id} by ${e.w} under epoch ${e.epoch}, held by ${a.w}`);
    }
    // fencing: no write of an older epoch after a newer one; a holder's own writes in order
    for (let x = 1; x < log.length; x++) {
      if (log[x].epoch < log[x - 1].epoch) {
        ledger.violate("lease-fencing", `${key}: ${log[x].id} (epoch ${log[x].epoch}) landed after ${log[x - 1].id} (epoch ${log[x - 1].epoch})`);
      }
      const [a, b] = [log[x - 1].id.split("."), log[x].id.split(".")];
      if (a[0] === b[0] && a[1] === b[1] && Number(b[2]) <= Number(a[2])) {
        ledger.violate("lease-fencing", `${key}: ${log[x].id} landed after ${log[x - 1].id}`);
      }
    }
    // no acknowledged write lost, none applied twice
    const count = (xs) => xs.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map());
    const logIds = count(log.map((e) => e.id));
    const coopIds = count(coop);
    for (const [id, n] of logIds) if (n > 1) ledger.violate("lease-writes", `${key}: ${id} applied ${n} times`);
    for (const [id, n] of coopIds) if (n > 1) ledger.violate("lease-writes", `${key}: cooperative ${id} applied ${n} times`);
    for (const [id, x] of ackedLog) if (x.key === key && !logIds.has(id)) ledger.violate("lease-writes", `${key}: acknowledged ${id} (epoch ${x.entry.epoch}) is lost`);
    for (const [id, kk] of ackedCoop) if (kk === key && !coopIds.has(id)) ledger.violate("lease-writes", `${key}: acknowledged cooperative ${id} is lost`);
    for (const [id, x] of definiteLog) {
      if (x.key === key && (logIds.has(id) || coopIds.has(id))) {
        ledger.violate("lease-writes", `${key}: ${id} failed with ${x.code} (nothing written), yet it is in the state`);
      }
    }
  }
  return {
    ...stats,
    epochs: acquisitions.length,
    ackedWrites: ackedLog.size,
    ackedCoop: ackedCoop.size,
    definiteWrites: definiteLog.size,
  };
}
