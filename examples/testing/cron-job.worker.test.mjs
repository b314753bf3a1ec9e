// npx vitest run --config examples/testing/vitest.config.mjs
// The same tests inside workerd, on an R2 binding: faultStore wraps env.BUCKET directly.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { Fencepost } from "fencepost";
import { faultStore, manualClock } from "fencepost/testing";
import { cancelJob, runJob, runOnce, stallAt } from "./cron-job.mjs";

it("a lost response on the winning claim: one winner, the tick's work runs once", async () => {
  const store = faultStore(env.BUCKET);
  const db = new Fencepost(store);
  store.inject("lostResponse", { op: "put", key: "cron/" }); // the claim lands in R2; its answer is lost
  let runs = 0;
  const work = async () => ++runs;
  const at = Date.UTC(2026, 5, 1, 9);

  const [a, b] = await Promise.all([runOnce(db, "nightly", at, work), runOnce(db, "nightly", at, work)]);
  const late = await runOnce(db, "nightly", at, work);
  expect(runs).toBe(1);
  expect([a.ran, b.ran].sort()).toEqual([false, true]);
  expect(late.ran).toBe(false);
});

it("an owner stalled past its ttl is taken over (epoch + 1) and fenced", async () => {
  const clock = manualClock();
  const worker1 = new Fencepost(env.BUCKET, { clock });
  const worker2 = new Fencepost(env.BUCKET, { clock });
  const stall = stallAt(2);

  const first = runJob(worker1, "rollup", { steps: 3, ttl: 30, doStep: stall.doStep });
  await stall.reached;
  await clock.advance(31);
  expect(await runJob(worker2, "rollup", { steps: 3, doStep: async () => {} })).toEqual({ outcome: "done", epoch: 2, step: 3 });

  stall.release();
  expect(await first).toEqual({ outcome: "lost", epoch: 1, step: 1 });
});

it("cooperative cancel: the owner stops at its next step", async () => {
  const db = new Fencepost(env.BUCKET);
  const stall = stallAt(2);
  const running = runJob(db, "export", { steps: 5, doStep: stall.doStep });
  await stall.reached;
  await cancelJob(db, "export");
  stall.release();
  expect(await running).toEqual({ outcome: "cancelled", epoch: 1, step: 2 });
  expect(stall.ran).toEqual([1, 2]);
});
