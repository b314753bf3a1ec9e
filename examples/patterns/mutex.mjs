// A plain mutex: one holder of "locks/report" at a time. A contender that will not wait gets null at
// once (busy); one that waits gets the lock within about a second of its release, at a higher epoch.
// Keep-alive renews it while the work runs; disposing of the lease stops keep-alive and releases it.
import { Fencepost, memoryStore } from "fencepost";

const store = memoryStore(); // in production: r2Store(env.BUCKET) or s3Store({...}) shared by all
const events = [];
let inside = 0;
const at = {};
let aHolds;
const aHeld = new Promise((resolve) => (aHolds = resolve));

// docs/coming-from.md's five lines, for Node 20: `await using lease = await db.lease(…)` (Deno,
// TypeScript, Node ≥ 24) is this try/finally around `lease[Symbol.asyncDispose]()`.
async function report(name, { wait, ms }) {
  const db = new Fencepost(store); // one per process: each contender is a worker of its own
  const lease = await db.lease("locks/report", { ttl: 30, wait });
  if (!lease) return { name, busy: true }; // held by someone else for all of `wait` seconds
  try {
    lease.keepAlive();
    if (++inside !== 1) throw new Error(`${name} is not alone in the critical section`);
    events.push(`${name} in`);
    at[`${name} in`] = performance.now();
    if (name === "a") aHolds();
    await new Promise((resolve) => setTimeout(resolve, ms)); // ... the work; pass lease.signal on ...
    lease.signal.throwIfAborted(); // the lease was lost meanwhile: do not trust the work
    inside--;
    events.push(`${name} out`);
    return { name, epoch: lease.epoch };
  } finally {
    await lease[Symbol.asyncDispose](); // stops keep-alive, then releases
    at[`${name} released`] = performance.now();
  }
}

const a = report("a", { wait: 0, ms: 400 });
await aHeld;
const [b, c] = await Promise.all([report("b", { wait: 0, ms: 10 }), report("c", { wait: 10, ms: 10 })]);
const first = await a;

if (!b.busy) throw new Error("b would not wait: it should have found the lock busy");
if (events.join() !== "a in,a out,c in,c out") throw new Error(`one holder at a time, in order: ${events}`);
if (!(c.epoch > first.epoch)) throw new Error(`each holder a higher epoch: a ${first.epoch}, c ${c.epoch}`);
const seen = await new Fencepost(store).inspect("locks/report");
if (!seen.lease.released) throw new Error("the lock is released at the end of the scope");
const after = Math.round(at["c in"] - at["a released"]);
console.log(`a held the lock (epoch ${first.epoch}); b found it busy; c waited and held it ${after} ms after a released it (epoch ${c.epoch})`);
console.log(`released at the end: epoch ${seen.lease.epoch}, holder ${seen.lease.holder}`);
