// The playground's simulation: N workers in one page (or one Node process) sharing a memoryStore(),
// each through its own faultStore, all on one manualClock. Every worker runs two tasks:
//   cron — at every tick boundary, db.claim("cron/<tick>", {by, tick}): exactly one worker wins;
//   job  — db.lease("job", {ttl}), then units of work: a fenced write (updateState appending
//          {epoch, by, n} to state.log) and a heartbeat (renew), until the job is done (release),
//          cancelled (a cooperativeWrite set state.cancel), or lost. Sometimes a worker stalls
//          longer than the ttl: the lease expires, another worker steals it, and the stalled
//          holder's next write is fenced with LeaseLost. Idle workers sometimes request a cancel.
// An operator (its own task and store, no faults) checks the job lease once a second with
// db.inspect; when it looks stuck — held, but no heartbeat for over half the ttl, as while its
// holder stalls — it breaks it (db.breakLease) with the `break` probability: the store moves to
// the next epoch with no holder, the old holder's next guarded write is fenced with LeaseLost
// (reason "stolen"), and the next acquirer gets a higher epoch still.
// Before an operation the task may inject one fault on its own store (lost response, competing
// write, 503s, delay); it is recorded only if the operation actually made the request it targets.
//
// Time moves only through advance(): all waits (the workers' sleeps, injected delays, retries)
// are waits on the manual clock. Retries have no backoff here (baseDelay 0): backoff jitter is the
// core's own randomness, and without it a seed replays exactly the same history.
import { Fencepost, LeaseLost, FencepostError, memoryStore, initWasm } from "fencepost";
import { faultStore, manualClock } from "fencepost/testing";
import { prng } from "../support/prng.js";

export const DEFAULTS = Object.freeze({
  workers: 4, // simulated workers
  seed: 1,
  ttl: 6, // lease ttl, seconds
  duration: 90, // simulated seconds of work (then workers wind down)
  cronEvery: 5, // seconds between cron ticks
  lost: 0.06, // per operation: a write lands but its answer is lost
  conflict: 0.04, // per operation: a competing write of the same bytes lands just before
  unavailable: 0.06, // per operation: 1–4 answers of 503 (4 exhausts the retries)
  delay: 0.05, // per operation: the request waits 0.5 s – ttl/2 first
  stall: 0.06, // per unit of work: the holder pauses 1.4–2.2 × ttl without renewing
  cancel: 0.03, // per idle poll: request a cooperative cancel of the running job
  break: 0.15, // per operator check (one a second) while the job lease looks stuck: db.breakLease("job")
});

/** Limits for the controls and the query string: [min, max, integer?]. */
export const LIMITS = {
  workers: [1, 12, true], seed: [0, 2 ** 31 - 1, true], ttl: [2, 60, false], duration: [10, 600, false],
  cronEvery: [1, 60, false], lost: [0, 1, false], conflict: [0, 1, false], unavailable: [0, 1, false],
  delay: [0, 1, false], stall: [0, 1, false], cancel: [0, 1, false], break: [0, 1, false],
};

const ALL_FAULTS = ["lost", "conflict", "unavailable", "delay"];
const MAX_ATTEMPTS = 4; // per request; a burst of 4 × 503 therefore surfaces as a StorageError
const START = Date.UTC(2026, 0, 1);
const OPERATOR_OFFSET = 0.125; // seconds past each whole second: off the 0.25-s grid of the job's operations

/** A config with every field present and in range (unknown or invalid fields fall back to DEFAULTS). */
export function normalizeConfig(input = {}) {
  const out = {};
  for (const [name, def] of Object.entries(DEFAULTS)) {
    let v = input[name] === undefined || input[name] === "" ? def : Number(input[name]);
    const [min, max, int] = LIMITS[name];
    if (!Number.isFinite(v)) v = def;
    v = Math.min(max, Math.max(min, int ? Math.round(v) : v));
    out[name] = v;
  }
  return out;
}

const quarter = (s) => Math.max(0.25, Math.round(s * 4) / 4); // keep sleeps on a 0.25-s grid

export class Simulation {
  /** Load the wasm core (browsers) and set up the workers; nothing runs before advance(). */
  static async create(config) {
    await initWasm();
    return new Simulation(normalizeConfig(config));
  }

  /** @private */
  constructor(config) {
    this.config = config;
    this.clock = manualClock(START);
    this.memory = memoryStore(); // the shared "bucket"
    // Sleeping on the manual clock: a waitFor on a key that never appears, in a store of its own.
    this.sleeper = new Fencepost(memoryStore(), { clock: this.clock });
    this.inspector = new Fencepost(this.memory, { clock: this.clock }); // reads the truth at the end, no faults
    this.events = [];
    this.claimStarted = new Set(); // claim keys some worker has already called claim() on
    this.brokenEpochs = new Set(); // job epochs the operator has broken
    this.done = false;
    this.final = null;
    this.workers = Array.from({ length: config.workers }, (_, i) => this.#makeWorker(i + 1));
    // The operator only exists with a break rate (at 0 it makes no requests and draws no random numbers).
    this.operator = config.break > 0 ? this.#makeOperator() : null;
    this.pending = this.workers.length * 2 + (this.operator ? 1 : 0);
    this.tasks = this.workers.flatMap((w) => [this.#task(w, "cron", () => this.#cronLoop(w)), this.#task(w, "job", () => this.#jobLoop(w))]);
    if (this.operator) this.tasks.push(this.#task(this.operator, "operator", () => this.#operatorLoop()));
  }

  /** Simulated seconds since the start. */
  get now() {
    return (this.clock.now() - START) / 1000;
  }

  /** Past `duration` the workers wind down (judged in simulated time, so the step size does not matter). */
  get stopping() {
    return this.now >= this.config.duration;
  }

  /** Move time on by `seconds` (everything due runs, in order). */
  async advance(seconds) {
    if (this.done) return;
    await this.clock.advance(seconds);
    if (this.stopping && this.pending === 0 && !this.done) {
      this.final = await this.#readFinal();
      this.done = true;
    }
  }

  /** Run to the end (duration, then until every task has stopped), `step` seconds at a time. */
  async runToEnd({ step = 1, onStep } = {}) {
    const limit = this.config.duration + 20 * this.config.ttl + 120;
    while (!this.done) {
      if (this.now > limit) throw new Error(`the workers did not wind down by t=${limit} s (${this.pending} tasks still running)`);
      await this.advance(step);
      if (onStep) await onStep(this);
    }
    return this;
  }

  // ------------------------------------------------------------------------------------ workers

  #makeWorker(id) {
    const name = `w${id}`;
    const retry = { maxAttempts: MAX_ATTEMPTS, baseDelay: 0, maxDelay: 0 };
    // One fault store per task, so a fault injected for an operation is seen by that operation only.
    const cronStore = faultStore(this.memory, { clock: this.clock });
    const jobStore = faultStore(this.memory, { clock: this.clock });
    return {
      id, name,
      cron: { store: cronStore, db: new Fencepost(cronStore, { clock: this.clock, retry }), rng: prng(this.config.seed, `${name}/cron`) },
      job: { store: jobStore, db: new Fencepost(jobStore, { clock: this.clock, retry }), rng: prng(this.config.seed, `${name}/job`) },
      n: 0, // fenced writes attempted
      acquisitions: 0,
      stall: null, // {epoch, until} while the job task stalls
    };
  }

  #makeOperator() {
    const store = faultStore(this.memory, { clock: this.clock }); // no faults injected: only counted
    return { id: 0, name: "operator", store, db: new Fencepost(store, { clock: this.clock }), rng: prng(this.config.seed, "operator") };
  }

  async #task(w, kind, body) {
    try {
      await body();
    } catch (e) {
      // Not an expected rejection: a bug in the playground or the library. Shown as an invariant.
      this.#record({ type: "crash", w: w.id, task: kind, message: String(e?.stack ?? e) });
    } finally {
      this.pending--;
    }
  }

  #record(event) {
    const e = { t: Math.round(this.now * 1000) / 1000, ...event };
    this.events.push(e);
    return e;
  }

  async #sleep(seconds) {
    try {
      await this.sleeper.objects.waitFor("never", { timeout: seconds, pollInterval: seconds });
    } catch (e) {
      if (e?.code !== "TIMEOUT") throw e;
    }
  }

  /**
   * Maybe inject one fault (of `kinds`, rates from the config) for the next operation of `task`,
   * run `op`, and record the fault if the operation made the request it targets. A competing
   * write is only injected when `conflictOk()` says it cannot clobber someone else's write.
   */
  async #withFault(w, task, what, key, { kinds: allow, conflictOk = () => true }, op) {
    const { store, rng } = w[task];
    const c = this.config;
    const kinds = [["lost", c.lost], ["conflict", c.conflict], ["unavailable", c.unavailable], ["delay", c.delay]]
      .filter(([k]) => allow.includes(k));
    let fault = null;
    let r = rng();
    for (const [kind, rate] of kinds) {
      if (r < rate) {
        fault = { kind };
        break;
      }
      r -= rate;
    }
    if (fault?.kind === "conflict" && !conflictOk()) fault = null;
    if (fault) {
      if (fault.kind === "lost") store.inject("lostResponse", { op: "put", key });
      if (fault.kind === "conflict") store.inject("conflict", { op: "put", key });
      if (fault.kind === "unavailable") {
        fault.times = 1 + Math.floor(rng() * MAX_ATTEMPTS);
        store.inject({ status: 503 }, { key, times: fault.times });
      }
      if (fault.kind === "delay") {
        fault.seconds = quarter(0.5 + rng() * (c.ttl / 2 - 0.5));
        store.inject({ delay: fault.seconds }, { key });
      }
    }
    const before = store.requestCounts();
    const t = this.now;
    try {
      return await op();
    } finally {
      if (fault) {
        store.clearFaults();
        const after = store.requestCounts();
        const targeted = fault.kind === "lost" || fault.kind === "conflict" ? after.put > before.put : after.total > before.total;
        if (targeted) this.events.push({ t: Math.round(t * 1000) / 1000, type: "fault", w: w.id, task, op: what, key, ...fault });
      }
    }
  }

  /** An expected rejection (a FencepostError): recorded by code. Anything else is rethrown. */
  #rejected(w, op, e, extra = {}) {
    if (!(e instanceof FencepostError)) throw e;
    return this.#record({ type: "rejected", w: w.id, op, code: e.code, message: e.message, ...extra });
  }

  // --------------------------------------------------------------------------------------- cron

  async #cronLoop(w) {
    const { db } = w.cron;
    for (let tick = 1; ; tick++) {
      const at = tick * this.config.cronEvery;
      if (at >= this.config.duration) return; // the workers wind down from `duration` on
      await this.#sleep(at - this.now);
      if (this.stopping) return;
      const key = `cron/${tick}`;
      for (let attempt = 1; attempt <= 3; attempt++) {
        // A competing write of the same bytes only on the first claim of a key (it then wins with
        // this worker's value, as a foreign writer would); later it would overwrite the winner.
        const first = !this.claimStarted.has(key);
        this.claimStarted.add(key);
        const faults = { kinds: ALL_FAULTS, conflictOk: () => first };
        try {
          const r = await this.#withFault(w, "cron", "claim", key, faults, () => db.claim(key, { by: w.name, tick }));
          this.#record({ type: "claim", w: w.id, key, tick, won: r.won, value: r.value });
          break;
        } catch (e) {
          this.#rejected(w, "claim", e, { key, attempt });
          await this.#sleep(0.5);
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------- job

  async #jobLoop(w) {
    const { db, rng } = w.job;
    const ttl = this.config.ttl;
    while (!this.stopping) {
      const holder = `${w.name}-${w.acquisitions + 1}`;
      let lease = null;
      try {
        lease = await this.#withFault(w, "job", "lease", "job", { kinds: ["unavailable", "delay"] }, () => db.lease("job", { ttl, holder }));
      } catch (e) {
        this.#rejected(w, "lease", e);
      }
      if (lease) {
        w.acquisitions++;
        this.#record({ type: "acquire", w: w.id, epoch: lease.epoch, holder, deadline: this.#rel(lease.deadlineAt) });
        await this.#hold(w, lease);
        await this.#sleep(quarter(0.5 + rng() * 1.5));
        continue;
      }
      if (this.stopping) return;
      if (rng() < this.config.cancel) await this.#requestCancel(w);
      await this.#sleep(quarter(0.75 + rng()));
    }
  }

  /** Hold the lease: units of fenced work, each with a heartbeat, until done, cancelled or lost. */
  async #hold(w, lease) {
    const { rng } = w.job;
    const { ttl } = this.config;
    const epoch = lease.epoch;
    const units = 3 + Math.floor(rng() * 6);
    for (let unit = 0; unit < units && !this.stopping; unit++) {
      if (this.#cancelRequested(w, lease)) return this.#release(w, lease, "cancelled");
      if (rng() < this.config.stall) {
        const t0 = this.now;
        const seconds = quarter(ttl * (1.4 + 0.8 * rng()));
        this.#record({ type: "stall", w: w.id, epoch, seconds, until: t0 + seconds, deadline: this.#rel(lease.deadlineAt) });
        w.stall = { epoch, until: t0 + seconds };
        await this.#sleep(seconds);
        w.stall = null;
      } else {
        await this.#sleep(quarter(0.5 + rng()));
      }

      // A fenced write: append {epoch, by, n} unless it is already there (a transition must be
      // idempotent: after a competing write the handle absorbs the fresh state and calls it again).
      const entry = { epoch, by: w.name, n: ++w.n };
      const append = (s) => {
        const log = Array.isArray(s?.log) ? s.log : [];
        if (log.some((e) => e.by === entry.by && e.n === entry.n)) return s;
        return { ...(s ?? {}), log: [...log, entry] };
      };
      // A competing write of these bytes only while nobody can have taken the lease over: not near
      // its deadline, and not broken by the operator (the fault puts the old holder's document
      // unconditionally, which would undo the break as no real writer could).
      const safe = () => !this.brokenEpochs.has(epoch) && lease.deadlineAt.getTime() - this.clock.now() > 500;
      // `seq`: how many events were recorded when an operation started (it orders the operation
      // after every event before it, a break included).
      let seq = this.events.length;
      try {
        await this.#withFault(w, "job", "write", "job", { kinds: ALL_FAULTS, conflictOk: safe }, () => lease.updateState(append));
        this.#record({ type: "write", w: w.id, epoch, n: entry.n, seq });
      } catch (e) {
        if (e instanceof LeaseLost) return this.#lost(w, lease, "write", e, seq, entry);
        this.#rejected(w, "write", e, { epoch, n: entry.n, seq, unacknowledged: true });
      }
      if (this.#cancelRequested(w, lease)) return this.#release(w, lease, "cancelled");

      // Heartbeat: the deadline moves to now + ttl (and any cooperative write is absorbed).
      seq = this.events.length;
      try {
        await this.#withFault(w, "job", "renew", "job", { kinds: ALL_FAULTS, conflictOk: safe }, () => lease.renew());
        this.#record({ type: "renew", w: w.id, epoch, seq, deadline: this.#rel(lease.deadlineAt) });
      } catch (e) {
        if (e instanceof LeaseLost) return this.#lost(w, lease, "renew", e, seq);
        this.#rejected(w, "renew", e, { epoch, seq });
      }
    }
    return this.#release(w, lease, this.stopping ? "stopped" : "done");
  }

  #cancelRequested(w, lease) {
    const cancel = lease.state?.cancel;
    if (!cancel) return false;
    this.#record({ type: "cancelSeen", w: w.id, epoch: lease.epoch, by: cancel.by });
    return true;
  }

  async #release(w, lease, reason) {
    const seq = this.events.length;
    try {
      if (reason === "cancelled") {
        // Honour the cancel: the final state clears it (and keeps the log).
        const { cancel, ...rest } = lease.state ?? {};
        await this.#withFault(w, "job", "release", "job", { kinds: ["unavailable"] }, () => lease.release({ state: { ...rest, cancelled: (rest.cancelled ?? 0) + 1 } }));
      } else {
        await this.#withFault(w, "job", "release", "job", { kinds: ["lost", "unavailable"] }, () => lease.release());
      }
      this.#record({ type: "release", w: w.id, epoch: lease.epoch, reason, seq });
    } catch (e) {
      if (e instanceof LeaseLost) return this.#lost(w, lease, "release", e, seq);
      this.#rejected(w, "release", e, { epoch: lease.epoch, seq });
      // Not released: the lease simply expires at its deadline.
      this.#record({ type: "abandon", w: w.id, epoch: lease.epoch, reason, deadline: this.#rel(lease.deadlineAt) });
    }
  }

  #lost(w, lease, op, e, seq, entry) {
    this.#record({ type: "lost", w: w.id, epoch: lease.epoch, op, n: entry?.n, seq, reason: e.reason, message: e.message });
  }

  async #requestCancel(w) {
    const { db } = w.job;
    try {
      const state = await this.#withFault(w, "job", "cancel", "job", { kinds: ["lost", "unavailable", "delay"] },
        () => db.cooperativeWrite("job", (s) => ({ ...(s ?? {}), cancel: { by: w.name, at: this.now } })));
      this.#record({ type: "cancelRequest", w: w.id, applied: state !== null });
    } catch (e) {
      this.#rejected(w, "cancel", e);
    }
  }

  // ----------------------------------------------------------------------------------- operator

  /** The operator's call `op`: its result, or undefined after a rejection (recorded). */
  async #operatorCall(/** @type {string} */ op, /** @type {() => Promise<any>} */ call) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof FencepostError)) throw e;
      this.#record({ type: "rejected", operator: true, op, code: e.code, message: e.message });
      return undefined;
    }
  }

  /**
   * Once a second: inspect the job lease; if it is held but looks stuck (no heartbeat for over half
   * the ttl), break it with the `break` probability. What the operator goes by comes from the store
   * alone (the `stalled` it records is the simulation's knowledge, for the timeline). It acts an
   * eighth of a second past the whole second, off the quarter-second grid every job operation runs
   * on, so its requests never interleave with a worker's: the log length it reads right after a
   * break is the log at the break.
   */
  async #operatorLoop() {
    const { db, rng } = this.operator;
    const { ttl } = this.config;
    for (let tick = 1; tick < this.config.duration; tick++) {
      await this.#sleep(tick + OPERATOR_OFFSET - this.now);
      if (this.stopping) return;
      const seen = await this.#operatorCall("inspect", () => db.inspect("job"));
      const held = seen?.kind === "lease" ? seen.lease : null;
      if (!held || held.released || held.expired || held.holder === null) continue;
      const quiet = ttl - held.expiresIn; // seconds since the last heartbeat (or the acquisition)
      if (quiet <= ttl / 2 || rng() >= this.config.break) continue;
      const broken = await this.#operatorCall("break", () => db.breakLease("job"));
      if (!broken) continue;
      const { previous } = broken;
      this.brokenEpochs.add(previous.epoch);
      const holder = this.workers.find((w) => previous.holder?.startsWith(`${w.name}-`)) ?? null;
      const event = this.#record({
        type: "break", epoch: broken.epoch,
        previous: { epoch: previous.epoch, holder: previous.holder, deadline: previous.deadlineAt ? this.#rel(previous.deadlineAt) : null, expired: previous.expired, released: previous.released },
        holderW: holder?.id ?? null,
        stalled: holder?.stall?.epoch === previous.epoch && holder.stall.until > this.now,
        quiet: Math.round(quiet * 1000) / 1000,
        logAt: null,
      });
      // Where the write log stood at the break: nothing under the broken epoch may follow it. Read at
      // once (no time passes, no worker runs meanwhile, nobody holds the new epoch).
      try {
        const after = await db.inspect("job");
        if (after?.kind === "lease" && after.lease.epoch === broken.epoch) event.logAt = after.lease.state?.log?.length ?? 0;
      } catch (e) {
        if (!(e instanceof FencepostError)) throw e;
      }
    }
  }

  #rel(date) {
    return (date.getTime() - START) / 1000;
  }

  // ------------------------------------------------------------------------------------ the end

  /** What the store holds at the end: the job document and every claim. */
  async #readFinal() {
    const objects = this.inspector.objects;
    const decode = (o) => (o ? JSON.parse(new TextDecoder().decode(o.data)) : null);
    const job = decode(await objects.get("job"));
    const claims = {};
    for (const key of await objects.list("cron/")) claims[key] = decode(await objects.get(key));
    const requests = { get: 0, put: 0, delete: 0, list: 0, total: 0 };
    const stores = this.workers.flatMap((w) => [w.cron.store, w.job.store]);
    if (this.operator) stores.push(this.operator.store);
    for (const store of stores) {
      const c = store.requestCounts();
      for (const k of Object.keys(requests)) requests[k] += c[k];
    }
    const operatorRequests = this.operator ? this.operator.store.requestCounts().total : 0;
    return { job, claims, requests, operatorRequests, t: this.now };
  }
}
