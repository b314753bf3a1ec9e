// The example Worker (examples/worker.js) tested the way Workers users test theirs: vitest inside workerd
// (@cloudflare/vitest-pool-workers), with the R2 bucket of wrangler.toml simulated locally. The
// Worker's seams (createWorker) let each test put fencepost's testing toolkit under it:
// faultStore(env.BUCKET) to lose a response, manualClock() to expire a lease without waiting.
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker, { createWorker } from "../../examples/worker.js";
import { faultStore, manualClock, storeConformance } from "fencepost/testing";
import { Fencepost } from "fencepost";
import { CRON, call, captureEvents, fireTick, stallingStep } from "./helpers.mjs";

const JOB_TTL = Number(env.JOB_TTL); // 30 s (wrangler.toml)

afterEach(() => vi.restoreAllMocks());

/** The claim object in R2 for a tick: the winner's value. */
async function claimed(iso) {
  const obj = await env.BUCKET.get(`cron/${CRON}/${iso}`);
  return obj && JSON.parse(await obj.text());
}

describe("cron dedup: one run per (schedule, scheduled time)", () => {
  it("8 racing deliveries of one tick: one winner, 7 converge on its value", async () => {
    const events = captureEvents();
    const tick = "2026-06-01T09:00:00.000Z";
    await Promise.all(Array.from({ length: 8 }, () => fireTick(worker, env, tick)));
    const won = events.filter((e) => e.event === "tick.won");
    const lost = events.filter((e) => e.event === "tick.lost");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    expect(lost.every((e) => e.winner === won[0].invocation)).toBe(true);
    expect((await claimed(tick)).invocation).toBe(won[0].invocation);
    expect(won[0].requests.total).toBe(1); // a won claim: one put-if-absent
    expect(lost.every((e) => e.requests.total === 2)).toBe(true); // put + read of the winner
  });

  it("the deployed Worker's fetch handler lists the tick (through exports.default)", async () => {
    captureEvents();
    await fireTick(worker, env, "2026-06-01T09:05:00.000Z");
    const res = await exports.default.fetch("http://worker.test/ticks");
    const { ticks } = await res.json();
    expect(ticks.map((t) => t.tick)).toContain("2026-06-01T09:05:00.000Z");
  });

  it("a lost response on the winning claim: one winner, the tick's work runs once", async () => {
    const events = captureEvents();
    const store = faultStore(env.BUCKET);
    const w = createWorker({ store: () => store });
    const tick = "2026-06-02T09:00:00.000Z";
    // The first claim put lands in R2 but its answer is lost: the winner sees a transport error.
    store.inject("lostResponse", { op: "put", key: "cron/" });

    // Two deliveries race; a third arrives after both.
    await Promise.all([fireTick(w, env, tick), fireTick(w, env, tick)]);
    await fireTick(w, env, tick);

    const won = events.filter((e) => e.event === "tick.won");
    const lost = events.filter((e) => e.event === "tick.lost");
    expect(events.filter((e) => e.event === "tick.error")).toEqual([]);
    expect(won).toHaveLength(1);
    // The winner learnt by reading its write token back (put + get) that its claim had landed.
    expect(won[0].requests).toMatchObject({ put: 1, get: 1, total: 2 });
    expect(lost).toHaveLength(2);
    expect(lost.every((e) => e.winner === won[0].invocation)).toBe(true);
    expect((await claimed(tick)).invocation).toBe(won[0].invocation);
    // The tick's work ran once: the day's job has exactly one ownership period.
    const job = await call(w, env, "GET", "/jobs/rollup-2026-06-02");
    expect(job.body.epoch).toBe(1);
    expect(job.body.state.runs).toEqual([{ epoch: 1, by: won[0].invocation, from: 1, to: 3 }]);
  });
});

describe("the job's lease", () => {
  it("an owner stalled past its ttl is taken over with epoch + 1 and fenced (manual clock)", async () => {
    const events = captureEvents();
    const clock = manualClock(new Date("2026-06-03T09:00:00Z"));
    const stall = stallingStep(2); // the first owner hangs in step 2
    const w = createWorker({ options: { clock }, doStep: stall.doStep });
    const id = "rollup-2026-06-03";

    const first = fireTick(w, env, "2026-06-03T09:00:00.000Z");
    await stall.reached; // step 1 is checkpointed; step 2 hangs
    let job = (await call(w, env, "GET", `/jobs/${id}`)).body;
    expect(job).toMatchObject({ epoch: 1, held: true, state: { step: 1 } });

    await clock.advance(JOB_TTL + 1); // no heartbeat for longer than the ttl
    expect((await call(w, env, "GET", `/jobs/${id}`)).body.held).toBe(false);

    // The next tick takes the job over from the last checkpoint.
    await fireTick(w, env, "2026-06-03T09:05:00.000Z");
    const second = events.find((e) => e.event === "tick.won" && e.tick === "2026-06-03T09:05:00.000Z");
    expect(second.job).toMatchObject({ epoch: 2, from: 2, to: 4, outcome: "paused" });

    // The stalled owner wakes up: its checkpoint is refused (LeaseLost), it stops.
    stall.release();
    await first;
    const stalled = events.find((e) => e.event === "tick.won" && e.tick === "2026-06-03T09:00:00.000Z");
    expect(stalled.job).toMatchObject({ epoch: 1, from: 1, to: 1, outcome: "lost" });

    job = (await call(w, env, "GET", `/jobs/${id}`)).body;
    expect(job.epoch).toBe(2);
    expect(job.state.step).toBe(4);
    expect(job.state.runs.map(({ epoch, from, to }) => ({ epoch, from, to }))).toEqual([
      { epoch: 1, from: 1, to: 1 },
      { epoch: 2, from: 2, to: 4 },
    ]);
  });

  it("POST /jobs/<id>/cancel: the owner stops at its next step", async () => {
    const events = captureEvents();
    const stall = stallingStep(2);
    const w = createWorker({ doStep: stall.doStep });
    const id = "rollup-2026-06-04";

    const running = fireTick(w, env, "2026-06-04T09:00:00.000Z");
    await stall.reached; // the owner is in step 2
    // The deployed Worker's HTTP API on the same bucket (a different invocation, no lease).
    const cancel = await exports.default.fetch(`http://worker.test/jobs/${id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(202);
    expect((await cancel.json()).state.cancel).toBe(true);
    stall.release();
    await running;

    const run = events.find((e) => e.event === "tick.won" && e.tick === "2026-06-04T09:00:00.000Z");
    // Step 2 (in flight) is finished and checkpointed, absorbing the cancel; step 3 never starts.
    expect(run.job).toMatchObject({ epoch: 1, to: 2, outcome: "cancelled", step: 2 });
    expect(stall.ran).toEqual([1, 2]);
    const job = (await call(w, env, "GET", `/jobs/${id}`)).body;
    expect(job).toMatchObject({ held: false, state: { status: "cancelled", cancel: true, step: 2 } });

    // Cancelled is final: another cancel is refused, and a later tick refuses the job.
    expect((await call(w, env, "POST", `/jobs/${id}/cancel`)).status).toBe(409);
    await fireTick(w, env, "2026-06-04T09:05:00.000Z");
    const later = events.find((e) => e.event === "tick.won" && e.tick === "2026-06-04T09:05:00.000Z");
    expect(later.job.outcome).toBe("refused");
  });
});

describe("operations: GET /leases", () => {
  it("shows what is held — epoch, held, seconds left, status — with the holder only as a fingerprint", async () => {
    const db = new Fencepost(env.BUCKET);
    const lease = await db.lease("jobs/report-7", { ttl: 30, stateFn: () => ({ status: "running", step: 2 }) });
    const released = await db.lease("jobs/report-6", { ttl: 30, stateFn: () => ({ status: "done" }) });
    await released.release();
    const res = await exports.default.fetch("http://worker.test/leases");
    expect(res.status).toBe(200);
    const { leases } = await res.json();
    const held = leases.find((l) => l.key === "jobs/report-7");
    expect(held).toMatchObject({ epoch: 1, held: true, released: false, status: "running" });
    expect(held.expiresIn).toBeGreaterThan(25);
    expect(held.holder).not.toBe(lease.holder);
    expect(lease.holder.startsWith(held.holder.slice(0, -1))).toBe(true);
    expect(JSON.stringify(leases)).not.toContain(lease.holder);
    expect(leases.find((l) => l.key === "jobs/report-6")).toMatchObject({ held: false, released: true, status: "done", holder: null });
  });
});

// storeConformance as vitest users call it, on the local R2 bucket of wrangler.toml.
describe("storeConformance(env.BUCKET, {test: it})", () => {
  storeConformance(env.BUCKET, { test: it });
});
