// A semaphore of N permits on N lease keys: take whichever permit is free (one request per held
// permit), so at most N holders run at once; release returns the permit.
import { Fencepost, memoryStore } from "fencepost";

const PERMITS = 3;
const store = memoryStore();

/** Acquire one of `permits` leases under `name`, or null when all are held. */
async function acquire(db, name, { ttl, permits = PERMITS }) {
  // Start at a random permit so contenders spread out instead of all racing for permit 0.
  const first = Math.floor(Math.random() * permits);
  for (let i = 0; i < permits; i++) {
    const lease = await db.lease(`${name}/permit-${(first + i) % permits}`, { ttl });
    if (lease) return lease;
  }
  return null;
}

let running = 0;
let peak = 0;
let refused = 0;
await Promise.all(Array.from({ length: 10 }, async (_, i) => {
  const db = new Fencepost(store);
  await new Promise((r) => setTimeout(r, i * 5));
  const permit = await acquire(db, "semaphores/exports", { ttl: 30 });
  if (!permit) return void refused++;
  // (`await using permit = …` where the runtime has it: Deno, TypeScript, Node ≥ 24.)
  try {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 50)); // ... the limited work ...
    running--;
  } finally {
    await permit.release(); // the permit is free for the next worker
  }
}));
if (peak > PERMITS) throw new Error(`at most ${PERMITS} at once, saw ${peak}`);
console.log(`10 workers, ${PERMITS} permits: at most ${peak} ran at once, ${refused} found none free`);
