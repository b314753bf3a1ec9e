// Seeded random concurrent histories against fencepost through the fault proxy; their outcome is
// checked with the shared invariants (js/support/invariants.js) on the final state, read directly
// from the store (no proxy).
//
//   claims   many concurrent db.claim(key, value) on a few keys from several Fencepost instances
//   counter  concurrent doc.update(v => v + 1, {create: 0}) on one doc
//   leases   workers loop lease → fenced updateState appends → (keep-alive) → release or abandon,
//            while cooperative writers append from outside
//
// Only updateState and cooperativeWrite change a lease's state, and both only append an entry with
// a unique id (no write(), no release({state})), so "no acknowledged write is lost" is exact.

import { FencepostError } from "fencepost";
import { prng } from "../../js/support/prng.js";
import { NOTHING_WRITTEN, claimProblems, counterProblems, epochProblems, fencingProblems, refusedProblems, writeProblems } from "../../js/support/invariants.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
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
   * rejection with exactly that reason is code "ABORTED" (fencepost rejects with the bare reason
   * only when nothing landed). A rejection that
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
  const results = []; // {key, caller, r}
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

  const stored = {};
  for (let k = 0; k < keys; k++) stored[`claim/${k}`] = (await direct.doc(`claim/${k}`).get())?.value ?? null;
  const outcomes = results.map(({ key, caller, r }) => {
    const sent = { caller, seed };
    if (!r.ok) return { key, caller, sent, ok: false, code: r.code };
    return { key, caller, sent, ok: true, won: r.value.won, value: r.value.value, gotKey: r.value.key };
  });
  for (const p of claimProblems(outcomes, stored)) ledger.violate("claims", p);
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
      else if (NOTHING_WRITTEN.has(r.code)) definite[r.code] = (definite[r.code] ?? 0) + 1;
      else uncertain++;
      await sleep(rng.range(0, 60));
    }
  }));
  const stored = (await direct.doc(key).get())?.value ?? 0;
  for (const p of counterProblems({ stored, acked, ambiguous: uncertain, nothingWritten: definite })) ledger.violate("counter", p);
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
      } else if (NOTHING_WRITTEN.has(r.code)) {
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
      if (NOTHING_WRITTEN.has(r.code)) definiteLog.set(id, { key, code: r.code });
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
    const log = doc?.state?.log ?? [];
    const coop = doc?.state?.coop ?? [];
    const v = (family) => (p) => ledger.violate(family, `${key}: ${p}`);
    const acquired = acquisitions.filter((a) => a.key === key).map((a) => ({ epoch: a.epoch, by: a.w, holder: `${a.w} try ${a.i}` }));
    epochProblems({ acquisitions: acquired, log: log.map((e) => ({ epoch: e.epoch, by: e.w, id: e.id })), storedEpoch: doc?.epoch ?? null })
      .forEach(v("lease-epochs"));
    // An entry's id is `${key}#${w}.${i}.${j}`: the j-th write of the worker's i-th holding.
    fencingProblems(log.map((e) => ({ epoch: e.epoch, id: e.id, seq: Number(e.id.split(".")[2]) }))).forEach(v("lease-fencing"));
    const logIds = log.map((e) => e.id);
    const acked = [...ackedLog].filter(([, x]) => x.key === key).map(([id]) => id);
    const ackedCoopHere = [...ackedCoop].filter(([, k]) => k === key).map(([id]) => id);
    const refused = [...definiteLog].filter(([, x]) => x.key === key).map(([id, x]) => ({ id, code: x.code }));
    writeProblems(logIds, acked).forEach(v("lease-writes"));
    writeProblems(coop, ackedCoopHere).map((p) => `cooperative ${p}`).forEach(v("lease-writes"));
    refusedProblems([...logIds, ...coop], refused).forEach(v("lease-writes"));
  }
  return {
    ...stats,
    epochs: acquisitions.length,
    ackedWrites: ackedLog.size,
    ackedCoop: ackedCoop.size,
    definiteWrites: definiteLog.size,
  };
}
