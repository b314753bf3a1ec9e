// The code under test in the "Testing your code" guide (docs/testing.md): what an application
// writes with fencepost, the same in Node, Deno and Workers. Two functions:
//   runOnce  — a cron tick's work, once per (schedule, scheduled time), however many deliveries race
//   runJob   — a job's steps under a lease: heartbeat before each step, checkpoint after it,
//              stop when someone asks (cancelJob), stop at once when the lease is lost
import { LeaseLost } from "fencepost";

/** Run `work(tick)` for this tick unless another delivery of it already won the claim. */
export async function runOnce(db, schedule, scheduledTime, work) {
  const tick = new Date(scheduledTime).toISOString();
  const claim = await db.claim(`cron/${schedule}/${tick}`, { tick });
  if (!claim.won) return { ran: false };
  return { ran: true, result: await work(tick) };
}

/**
 * Run job `id` from its last checkpoint: `doStep(n)` for n = next step … `steps`.
 * Resolves to `{outcome, epoch, step}`, outcome one of "done", "cancelled", "busy" (someone else
 * holds it) or "lost" (someone took it over: our unsaved step is discarded).
 */
export async function runJob(db, id, { steps, ttl = 30, doStep }) {
  const lease = await db.lease(`jobs/${id}`, { ttl, stateFn: (s) => s ?? { step: 0 } });
  if (lease === null) return { outcome: "busy" };
  try {
    for (;;) {
      if (lease.state.cancel) break;
      if (lease.state.step >= steps) break;
      await lease.renew(); // heartbeat; also absorbs a cancel written since our last write
      if (lease.state.cancel) break;
      const step = lease.state.step + 1;
      await doStep(step);
      await lease.updateState((s) => ({ ...s, step })); // checkpoint, fenced by our epoch
    }
    const outcome = lease.state.cancel ? "cancelled" : "done";
    await lease.release();
    return { outcome, epoch: lease.epoch, step: lease.state.step };
  } catch (err) {
    if (err instanceof LeaseLost) return { outcome: "lost", epoch: lease.epoch, step: lease.state.step };
    throw err;
  }
}

/** Ask job `id` to stop before its next step (does not fence its owner). null: no such job. */
export function cancelJob(db, id) {
  return db.cooperativeWrite(`jobs/${id}`, (s) => ({ ...s, cancel: true }));
}

/** For the tests: a doStep that hangs at step `at` (once) until `release()`; `ran` lists the steps. */
export function stallAt(at) {
  let release;
  let reached;
  const gate = new Promise((r) => (release = r));
  const atStep = new Promise((r) => (reached = r));
  const ran = [];
  let stalled = false;
  return {
    ran,
    reached: atStep,
    release: () => release(),
    async doStep(step) {
      ran.push(step);
      if (step === at && !stalled) {
        stalled = true;
        reached();
        await gate;
      }
    },
  };
}
