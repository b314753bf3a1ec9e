// Step checkpoints: each finished step is recorded in the lease state with a guarded write, so a
// successor resumes after the last finished step and no step's result is recorded twice.
import { Fencepost, memoryStore } from "fencepost";

const db = new Fencepost(memoryStore());
const steps = ["fetch", "transform", "upload"];

async function run(workerName, crashAfter = Infinity) {
  const lease = await db.lease("jobs/pipeline", { ttl: 30, holder: workerName, stateFn: (s) => s ?? { done: [] } });
  if (!lease) return;
  for (const step of steps) {
    if (lease.state.done.includes(step)) continue;
    if (lease.state.done.length >= crashAfter) return; // simulate a crash: no release
    // ... do the step ...
    await lease.updateState((s) => ({ ...s, done: [...s.done, step] }));
  }
  await lease.release();
}

await run("first", 1); // finishes "fetch", then dies holding the lease
const stuck = await db.lease("jobs/pipeline", { ttl: 30, holder: "first" }); // its own holder may take it back
await stuck.release();
await run("second");
const { state } = JSON.parse(new TextDecoder().decode((await db.objects.get("jobs/pipeline")).data));
console.log(`steps done: ${state.done.join(" → ")}`);
if (state.done.join() !== steps.join()) process.exit(1);
