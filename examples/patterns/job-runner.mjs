// A job runner that honours cancel through `signal`: the job's steps run under withLease; a
// cooperative cancel from outside is seen at the next step, and a lost lease aborts `signal`, so
// the runner stops before doing work it no longer owns.
import { Fencepost, memoryStore } from "fencepost";

const store = memoryStore();
const db = new Fencepost(store);

async function runJob(id) {
  return db.withLease(`jobs/${id}`, { ttl: 2, stateFn: (s) => s ?? { step: 0, total: 10 } }, async (lease, signal) => {
    while (lease.state.step < lease.state.total) {
      signal.throwIfAborted(); // the lease was lost: stop, someone else owns the job now
      if (lease.state.cancel) return { outcome: "cancelled", step: lease.state.step };
      await new Promise((r) => setTimeout(r, 20)); // ... one step of work ...
      // Checkpoint (guarded: rejects with LeaseLost if fenced); sees cooperative writes.
      await lease.updateState((s) => ({ ...s, step: s.step + 1 }));
    }
    return { outcome: "done", step: lease.state.step };
  });
}

const running = runJob("export-1");
setTimeout(() => db.cooperativeWrite("jobs/export-1", (s) => ({ ...s, cancel: true })), 90);
const result = await running;
if (result.outcome !== "cancelled" || result.step >= 10) throw new Error(`cancel honoured: ${JSON.stringify(result)}`);
const after = JSON.parse(new TextDecoder().decode((await db.objects.get("jobs/export-1")).data));
if (after.holder !== null) throw new Error("released after the job returned");
console.log(`cancelled at step ${result.step} of 10; the lease was released (epoch ${after.epoch})`);
