// Counters and small shared documents: doc.update is a compare-and-swap loop; concurrent updates
// are retried, never lost. With a Standard Schema (zod here) values are checked on read and before write.
// A counter that many workers bump is one key, and stores cap writes per key (R2: about one a
// second): db.counter spreads it over shards, and faultStore(...).limitWrites tests that locally.
import { Fencepost, memoryStore } from "fencepost";
import { faultStore } from "fencepost/testing";
import { z } from "zod";

const db = new Fencepost(memoryStore());
const counter = db.doc("stats/visits", { schema: z.object({ n: z.number().int().nonnegative() }) });

await Promise.all(Array.from({ length: 20 }, () => counter.update((v) => ({ n: v.n + 1 }), { create: { n: 0 }, maxAttempts: 50 })));
const { value } = await counter.get();
console.log(`visits: ${value.n}`);
// One writer's next update starts from the version its handle remembers: one request.
await counter.update((v) => ({ n: v.n + 1 }));

// Under R2's limit (1 write per key per second), 8 workers adding for 2 seconds: 16 shards take
// about 16 writes a second where one key takes one.
const limited = new Fencepost(faultStore(memoryStore()).limitWrites({ perKey: 1 }));
const hits = limited.counter("stats/hits", { shards: 16 });
let acked = 0;
const until = Date.now() + 2000;
await Promise.all(Array.from({ length: 8 }, async () => {
  while (Date.now() < until) await hits.add().then(() => acked++, (e) => { if (e.status !== 429) throw e; });
}));
const total = await hits.value();
console.log(`hits: ${total} (every acknowledged add, none of the refused ones)`);
if (value.n !== 20 || (await counter.get()).value.n !== 21 || total !== acked || acked < 8) process.exit(1);
