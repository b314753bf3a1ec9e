// fencepost example Worker: coordination on nothing but an R2 bucket.
//
// Two patterns, both driven by one cron trigger (wrangler.toml: crons = ["*/5 * * * *"]):
//
//  (a) Cron dispatch with `claim`: one winner per tick, its work run at most once.
//      A cron event can be delivered more than once, and several invocations may race for the
//      same tick. Every invocation claims the key `cron/<cron>/<scheduled time>`; the store's
//      put-if-absent lets exactly one of them win. The winner runs the tick's work; every loser
//      learns the winner's value (which invocation runs the tick) and returns.
//      The claim decides who runs the tick, once; it does not re-run a tick whose winner crashed.
//      Work that must survive a crash belongs in a job (b), which a later tick resumes.
//
//  (b) A long job owned through a `lease`, with heartbeat, checkpoints and cooperative cancel.
//      The tick's work is to advance today's job, `jobs/rollup-<YYYY-MM-DD>`, by a few steps. The
//      lease makes one invocation at a time its owner; its `epoch` grows with each owner (each
//      tick that picks the job up); its `state` is the checkpoint: `{status, step, total, runs}`.
//      The owner renews the lease before each step (heartbeat), checkpoints after each step, and
//      stops when `state.cancel` shows up: `POST /jobs/<id>/cancel` sets it from outside with
//      `cooperativeWrite`, without fencing the owner. If the owner dies, its lease expires after
//      JOB_TTL seconds and a later tick takes over from the last checkpoint. `LeaseLost` on any
//      write means someone else owns the job now: stop at once, the new owner carries on.
//
// HTTP endpoints (fetch handler), all JSON:
//   GET  /ticks              the ticks that ran, with the invocation that won each one
//   GET  /jobs/<id>          a job's lease: epoch, whether it is held, its state
//   GET  /leases             what is held: every job's lease as an operator sees it (inspect)
//   POST /jobs/<id>/cancel   ask the job to stop (it stops before its next step)
//
// Every line this Worker logs is one JSON object (Workers Logs and `wrangler tail` index them by
// field); `npm run demo` reads them to tell what happened.
//
// Run it locally: `npx wrangler dev`, then fire the cron for a given time (ms since the epoch):
//   curl "http://127.0.0.1:8787/cdn-cgi/handler/scheduled?cron=*/5+*+*+*+*&time=1777626000000"
//   curl http://127.0.0.1:8787/ticks
// (`wrangler dev --test-scheduled` also offers /__scheduled?cron=..., which ignores `time`.)

// Testing it: `createWorker(seams)` builds the same Worker with its seams replaced (the store under
// the R2 binding, Fencepost's options such as a manual clock, the job's step function), so a test
// can lose the claim's response or expire a lease by moving a clock; the default export is
// `createWorker()`. The tests in tests/workers/ run it inside workerd (vitest-pool-workers).

import { Fencepost, countingStore, LeaseLost, InvalidArgument } from "fencepost";

/**
 * The Worker, with its seams. Every one is optional; `createWorker()` is the deployed Worker.
 *   store(env)  the store (or R2 binding) under this invocation's Fencepost; default env.BUCKET.
 *               Called once per invocation; it may return the same store every time (a test's
 *               `faultStore(env.BUCKET)`). It is wrapped in `countingStore` for the logs.
 *   options     `new Fencepost(store, options)`: e.g. `{clock: manualClock()}` in a test; the
 *               Worker's own idea of "now" (is a job's lease held?) follows that clock too.
 *   doStep(jobId, step, ms)  one step of the job's work (default: wait `ms`).
 */
export function createWorker({ store = (env) => env.BUCKET, options = {}, doStep = simulatedStep } = {}) {
  const deps = { store, options, doStep, now: clockOf(options) };
  return {
    /** Cron Trigger: claim the tick, and if this invocation won it, do the tick's work. */
    async scheduled(controller, env, ctx) {
      await runTick(controller, env, deps);
    },

    /** Small JSON API over the same bucket. */
    async fetch(request, env, ctx) {
      return handleRequest(request, env, deps);
    },
  };
}

export default createWorker();

/** Milliseconds since the epoch, as the Fencepost options see them (manual clock, `now`, or Date.now). */
function clockOf(options) {
  if (options.clock && typeof options.clock.now === "function") return () => options.clock.now();
  if (typeof options.now === "function") return () => Number(options.now());
  return () => Date.now();
}

// ----------------------------------------------------------------------------------- settings

function settings(env) {
  const int = (v, dflt) => (Number.isFinite(Number.parseInt(v, 10)) ? Number.parseInt(v, 10) : dflt);
  return {
    jobSteps: int(env.JOB_STEPS, 7), // steps in a day's job
    stepsPerTick: int(env.STEPS_PER_TICK, 3), // at most this many steps per tick
    stepMs: int(env.STEP_MS, 150), // how long one (simulated) step takes
    jobTtl: int(env.JOB_TTL, 30), // seconds: lease time-to-live, renewed before every step
  };
}

/**
 * One Fencepost per invocation, on the R2 binding wrapped in `countingStore` so that each log
 * line can say how many R2 requests (Workers subrequests) each operation cost. In production you
 * would usually write `new Fencepost(env.BUCKET)`; `r2Store(env.BUCKET, {prefix})` adds a prefix.
 */
function open(env, deps) {
  const store = countingStore(deps.store(env));
  const db = new Fencepost(store, deps.options);
  return {
    db,
    store,
    /** Requests made since the previous call, per operation: {get, put, delete, list, total}. */
    requests() {
      const counts = store.requestCounts();
      store.resetRequestCounts();
      return counts;
    },
  };
}

function log(event, fields) {
  console.log(JSON.stringify({ event, ...fields }));
}

// ------------------------------------------------------- (a) cron dispatch, one winner per tick

/** Diagnostics only: how many ticks this isolate is running right now (the racers overlap). */
let inFlight = 0;

async function runTick(controller, env, deps) {
  // A short name for this invocation, so that the logs can tell the racers apart.
  const invocation = crypto.randomUUID().slice(0, 8);
  // The tick this event is for. Cron has minute resolution, so flooring to the minute names the
  // same tick for every delivery of it, even where the firing time carries milliseconds (as with
  // `wrangler dev`'s /__scheduled, which passes the current time).
  const tick = new Date(Math.floor(controller.scheduledTime / 60_000) * 60_000).toISOString();
  const { db, requests } = open(env, deps);
  inFlight++;
  try {
    // One key per (cron expression, scheduled time). All invocations for this tick race on it;
    // the value says who won. Claims are immutable: the key also records that the tick ran.
    const claim = await db.claim(`cron/${controller.cron}/${tick}`, {
      invocation,
      claimedAt: new Date(deps.now()).toISOString(),
    });
    const claimRequests = requests(); // 1 when won, 2 when lost (the loser reads the winner)
    const racing = inFlight; // invocations of this Worker in flight in this isolate just now

    if (!claim.won) {
      // Someone else runs this tick. `claim.value` is the winner's value, the same for every loser.
      log("tick.lost", { cron: controller.cron, tick, invocation, winner: claim.value.invocation, requests: claimRequests, racing });
      return;
    }

    // This invocation, and no other, does the tick's work: advance today's job.
    const job = await advanceJob(db, env, `rollup-${tick.slice(0, 10)}`, invocation, deps.doStep);
    log("tick.won", { cron: controller.cron, tick, invocation, requests: claimRequests, racing, job: { ...job, requests: requests() } });
  } catch (err) {
    log("tick.error", { cron: controller.cron, tick, invocation, error: String(err), code: err?.code });
    throw err; // the invocation is reported as failed
  } finally {
    inFlight--;
  }
}

// ------------------------------------------------- (b) a job owned through a lease, cancellable

/** Thrown by `stateFn` to refuse a job that is already finished: nothing is written then. */
class JobFinished extends Error {
  constructor(status) {
    super(`job already ${status}`);
    this.status = status;
  }
}

/** The job's "work": one step of a rollup. Steps must be idempotent (see the checkpoint below). */
async function simulatedStep(jobId, step, ms) {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Take the job's lease and run at most `stepsPerTick` steps. Resolves to a summary for the log:
 * `{id, outcome, epoch, from, to, step, total}` where `outcome` is one of
 *   "paused"    budget for this tick used up; the next tick resumes from the checkpoint
 *   "done"      the last step ran
 *   "cancelled" the job saw `state.cancel` and stopped
 *   "refused"   the job was already done or cancelled (stateFn threw, nothing was written)
 *   "busy"      another invocation holds the lease (a slow previous tick): skip this tick
 *   "lost"      LeaseLost: another invocation took the job over; our work since the last
 *               checkpoint is discarded
 */
async function advanceJob(db, env, jobId, invocation, doStep) {
  const { jobSteps, stepsPerTick, stepMs, jobTtl } = settings(env);
  const key = `jobs/${jobId}`;

  // Acquisition is a transition from the previous state, written atomically with the new epoch.
  // stateFn must be pure (it runs again if another invocation wins a race for the document).
  let lease;
  try {
    lease = await db.lease(key, {
      ttl: jobTtl,
      stateFn: (prev) => {
        if (prev === null) return { status: "running", step: 0, total: jobSteps, runs: [] }; // fresh job
        if (prev.status !== "running") throw new JobFinished(prev.status); // refuse finished work
        return prev; // resume from the last checkpoint (also after a crashed owner's lease expired)
      },
    });
  } catch (err) {
    if (err instanceof JobFinished) return { id: jobId, outcome: "refused", reason: err.message };
    throw err;
  }
  if (lease === null) return { id: jobId, outcome: "busy" };

  const summary = { id: jobId, epoch: lease.epoch, from: lease.state.step + 1, to: lease.state.step };
  try {
    let ran = 0;
    let outcome;
    for (;;) {
      // `lease.state` is the freshest state this handle has seen, cooperative writes included.
      if (lease.state.cancel) { outcome = "cancelled"; break; }
      if (lease.state.step >= lease.state.total) { outcome = "done"; break; }
      if (ran === stepsPerTick) { outcome = "paused"; break; }

      // Heartbeat: deadline = now + ttl, so the step below has a full TTL to run. If a cooperative
      // write (a cancel) landed since our last write, renew absorbs it into `lease.state`.
      await lease.renew();
      if (lease.state.cancel) continue; // → "cancelled" at the top of the loop

      const step = lease.state.step + 1;
      await doStep(jobId, step, stepMs);

      // Checkpoint, guarded by our epoch: if the job was taken over meanwhile this rejects with
      // LeaseLost instead of overwriting the new owner's progress. A crash between the step and
      // the checkpoint means the step runs again on the next owner: steps must be idempotent.
      await lease.updateState((s) => ({
        ...s,
        step,
        runs: recordRun(s.runs, { epoch: lease.epoch, by: invocation, from: summary.from, to: step }),
      }));
      summary.to = step;
      ran++;
    }

    if (outcome === "paused") {
      // Keep the state as it is (a cancel that arrives right now is absorbed, not overwritten):
      // the next tick re-acquires with epoch + 1 and resumes from `step`.
      await lease.release();
    } else {
      // Final state. release({state}) replaces the state as given: fine for a finished job.
      await lease.release({ state: { ...lease.state, status: outcome } });
    }
    return { ...summary, outcome, step: lease.state.step, total: lease.state.total };
  } catch (err) {
    if (err instanceof LeaseLost) {
      // Someone else owns the job now (our lease expired and was taken over): stop, do nothing more.
      return { ...summary, outcome: "lost", reason: err.reason ?? err.message };
    }
    throw err;
  }
}

/** `runs` keeps one entry per ownership period (epoch): who ran which steps. */
function recordRun(runs, run) {
  const last = runs[runs.length - 1];
  return last && last.epoch === run.epoch ? [...runs.slice(0, -1), run] : [...runs, run];
}

// --------------------------------------------------------------------------------- HTTP API

async function handleRequest(request, env, deps) {
  const url = new URL(request.url);
  const { db, requests } = open(env, deps);
  try {
    if (request.method === "GET" && url.pathname === "/ticks") {
      return json(200, { ticks: await listTicks(db) });
    }
    if (request.method === "GET" && url.pathname === "/leases") {
      return json(200, { leases: await listLeases(db), requests: requests() });
    }
    let m = url.pathname.match(/^\/jobs\/([A-Za-z0-9_-]+)$/);
    if (m && request.method === "GET") {
      const job = await readJob(db, m[1], deps.now());
      return job ? json(200, job) : json(404, { error: `no job ${m[1]}` });
    }
    m = url.pathname.match(/^\/jobs\/([A-Za-z0-9_-]+)\/cancel$/);
    if (m && request.method === "POST") {
      // Change the state of the job's lease without fencing its owner: the owner absorbs the
      // write on its next heartbeat or checkpoint, sees `cancel`, and stops. Works whether the
      // job is running right now or waiting for its next tick. Throwing in the function writes
      // nothing.
      try {
        const state = await db.cooperativeWrite(`jobs/${m[1]}`, (s) => {
          if (s.status !== "running") throw new JobFinished(s.status);
          return { ...s, cancel: true };
        });
        if (state === null) return json(404, { error: `no job ${m[1]}` });
        return json(202, { id: m[1], state, requests: requests() });
      } catch (err) {
        if (err instanceof JobFinished) return json(409, { id: m[1], error: err.message });
        throw err;
      }
    }
    if (request.method === "GET" && url.pathname === "/") {
      return json(200, { endpoints: ["GET /ticks", "GET /jobs/<id>", "GET /leases", "POST /jobs/<id>/cancel"] });
    }
    return json(404, { error: "not found" });
  } catch (err) {
    if (err instanceof InvalidArgument) return json(400, { error: err.message });
    return json(500, { error: String(err), code: err?.code });
  }
}

/**
 * What is held: every lease under `jobs/`, page by page (`objects.entries`), each read once
 * (`inspect`). A holder is a credential (whoever knows it can attach), so only its first
 * characters are shown.
 */
async function listLeases(db) {
  const leases = [];
  for await (const { key } of db.objects.entries("jobs/")) {
    const seen = await db.inspect(key);
    if (seen?.kind !== "lease") continue;
    const { epoch, holder, expired, released, expiresIn, deadlineAt, state } = seen.lease;
    leases.push({
      key, epoch, held: !expired, released, holder: holder && `${holder.slice(0, 6)}…`,
      expiresIn: Math.round(expiresIn * 10) / 10, deadlineAt, status: state?.status ?? null,
    });
  }
  return leases;
}

/** Every claimed tick, oldest first, with the invocation that won it. */
async function listTicks(db) {
  const keys = await db.objects.list("cron/"); // ascending; keys are cron/<cron>/<ISO time>
  const ticks = [];
  for (const key of keys.slice(-100)) {
    const got = await db.doc(key).get(); // a claim is stored as the JSON of its value
    const cut = key.lastIndexOf("/");
    ticks.push({ cron: key.slice("cron/".length, cut), tick: key.slice(cut + 1), winner: got?.value ?? null });
  }
  return ticks;
}

/**
 * A job's lease document, read as plain JSON: `{epoch, holder, deadline_at, state}`. The holder
 * token is a credential (whoever knows it can `attachLease`), so it is not shown.
 */
async function readJob(db, id, now) {
  const got = await db.doc(`jobs/${id}`).get();
  if (!got) return null;
  const { epoch, holder, deadline_at, state } = got.value;
  const held = holder !== null && Date.parse(deadline_at) > now;
  return { id, epoch, held, deadlineAt: deadline_at, state };
}

function json(status, body) {
  return new Response(JSON.stringify(body, null, 2) + "\n", {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}
