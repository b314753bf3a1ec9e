// node --test examples/testing/cron-job.node.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { Fencepost, memoryStore } from "fencepost";
import { faultStore, manualClock } from "fencepost/testing";
import { cancelJob, runJob, runOnce, stallAt } from "./cron-job.mjs";

test("a lost response on the winning claim: one winner, the tick's work runs once", async () => {
  const store = faultStore(memoryStore());
  const db = new Fencepost(store);
  store.inject("lostResponse", { op: "put", key: "cron/" }); // the claim lands; its answer is lost
  let runs = 0;
  const work = async () => ++runs;
  const at = Date.UTC(2026, 5, 1, 9);

  const [a, b] = await Promise.all([runOnce(db, "nightly", at, work), runOnce(db, "nightly", at, work)]);
  const late = await runOnce(db, "nightly", at, work); // a re-delivery after both
  assert.equal(runs, 1);
  assert.deepEqual([a.ran, b.ran].sort(), [false, true]);
  assert.equal(late.ran, false);
  assert.equal(store.requestCounts().put, 3); // every delivery tried; only the first write landed
});

test("an owner stalled past its ttl is taken over (epoch + 1) and fenced", async () => {
  const store = memoryStore();
  const clock = manualClock();
  const worker1 = new Fencepost(store, { clock });
  const worker2 = new Fencepost(store, { clock });
  const stall = stallAt(2);

  const first = runJob(worker1, "rollup", { steps: 3, ttl: 30, doStep: stall.doStep });
  await stall.reached; // step 1 checkpointed, step 2 hangs
  assert.deepEqual(await runJob(worker2, "rollup", { steps: 3, doStep: async () => {} }), { outcome: "busy" });

  await clock.advance(31); // no heartbeat for longer than the ttl
  const second = await runJob(worker2, "rollup", { steps: 3, doStep: async () => {} });
  assert.deepEqual(second, { outcome: "done", epoch: 2, step: 3 });

  stall.release(); // the stalled owner wakes up: its checkpoint is refused
  assert.deepEqual(await first, { outcome: "lost", epoch: 1, step: 1 });
});

test("cooperative cancel: the owner stops at its next step", async () => {
  const db = new Fencepost(memoryStore());
  const stall = stallAt(2);
  const running = runJob(db, "export", { steps: 5, doStep: stall.doStep });
  await stall.reached;
  await cancelJob(db, "export"); // from elsewhere: an HTTP handler, an operator
  stall.release();
  assert.deepEqual(await running, { outcome: "cancelled", epoch: 1, step: 2 });
  assert.deepEqual(stall.ran, [1, 2]); // step 3 never started
});
