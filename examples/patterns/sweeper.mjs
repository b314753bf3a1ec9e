// A sweeper: list leases, and take over the expired ones (stealIfExpired defaults to true). A
// lease that is still held returns null in one request, so sweeping is cheap.
import { Fencepost, memoryStore } from "fencepost";

let now = Date.UTC(2026, 0, 1);
const db = new Fencepost(memoryStore(), { now: () => now });
await db.lease("jobs/a", { ttl: 10 });
await db.lease("jobs/b", { ttl: 100 });
now += 20_000; // jobs/a's holder died

const rescued = [];
for (const key of await db.objects.list("jobs/")) {
  const lease = await db.lease(key, { ttl: 60 });
  if (!lease) continue; // still held by a live worker
  rescued.push(`${key}@epoch${lease.epoch}`);
  // ... resume from lease.state, then release ...
  await lease.release();
}
console.log(`rescued: ${rescued.join(", ")}`);
if (rescued.join() !== "jobs/a@epoch2") process.exit(1);
