// Counters and small shared documents: doc.update is a compare-and-swap loop; concurrent updates
// are retried, never lost. With a Standard Schema (zod here) values are checked on read and before write.
import { Fencepost, memoryStore } from "fencepost";
import { z } from "zod";

const db = new Fencepost(memoryStore());
const counter = db.doc("stats/visits", { schema: z.object({ n: z.number().int().nonnegative() }) });

await Promise.all(Array.from({ length: 20 }, () => counter.update((v) => ({ n: v.n + 1 }), { create: { n: 0 }, maxAttempts: 50 })));
const { value } = await counter.get();
console.log(`visits: ${value.n}`);
if (value.n !== 20) process.exit(1);
