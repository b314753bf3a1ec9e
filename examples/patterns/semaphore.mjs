// A concurrency limit: at most 3 workers call a partner API at once, however many run. Each permit
// is a lease on one of the slots `limits/partner-api/0…2`, fenced by its epoch like any lease, kept
// alive while the work runs and released when it settles (also when it throws).
import { Fencepost, memoryStore } from "fencepost";

const LIMIT = 3;
const store = memoryStore();

let running = 0;
let peak = 0;
let refused = 0;
await Promise.all(Array.from({ length: 10 }, async (_, i) => {
  const db = new Fencepost(store);
  const api = db.semaphore("limits/partner-api", { limit: LIMIT, ttl: 30 });
  // Half of the workers wait for a permit (up to 5 s); the others give up at once if none is free.
  const ran = await api.withPermit({ wait: i % 2 ? 5 : 0 }, async (permit, signal) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 50)); // ... the limited work; pass `signal` on (fetch(url, {signal})) ...
    running--;
    return permit.epoch;
  });
  if (ran === null) refused++;
}));
if (peak > LIMIT || peak < 1) throw new Error(`at most ${LIMIT} at once, saw ${peak}`);
const holders = await new Fencepost(store).semaphore("limits/partner-api", { limit: LIMIT, ttl: 30 }).holders();
if (holders.length !== 0) throw new Error(`every permit released, ${holders.length} held`);
console.log(`10 workers, limit ${LIMIT}: at most ${peak} ran at once, ${refused} found none free and did not wait`);
