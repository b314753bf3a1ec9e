// A worker lease with heartbeat and step checkpoints. The lease's epoch is a fence token: after a
// stall, another worker steals the expired lease and the stalled one gets LeaseLost on its next
// write, so it can never overwrite the new owner's progress.
import { Fencepost, memoryStore, LeaseLost } from "fencepost";

const store = memoryStore();
let now = Date.UTC(2026, 0, 1);
const db = new Fencepost(store, { now: () => now }); // a controllable clock, for the example

const lease = await db.lease("jobs/report", { ttl: 30, stateFn: (s) => s ?? { step: 0 } });
console.log(`acquired epoch ${lease.epoch} as ${lease.holder}`);
for (let i = 0; i < 3; i++) {
  // ... do one step of work, then checkpoint it (the write is guarded: it fails if fenced) ...
  await lease.updateState((s) => ({ ...s, step: s.step + 1 }));
  await lease.renew(); // heartbeat: deadline = now + ttl
  now += 10_000;
}
console.log(`checkpointed step ${lease.state.step}`);

now += 60_000; // the worker stalls past its deadline...
const rescuer = await db.lease("jobs/report", { ttl: 30 });
console.log(`rescuer took over at epoch ${rescuer.epoch}, resuming from step ${rescuer.state.step}`);
try {
  await lease.updateState((s) => ({ ...s, step: s.step + 1 }));
  process.exit(1);
} catch (e) {
  if (!(e instanceof LeaseLost)) throw e;
  console.log(`stalled worker: ${e.code}, it stops and discards its work`);
}
