// Re-attach: a Worker invocation that acquired a lease can hand its holder token to a later
// invocation (a queue message, a Durable Object alarm…), which re-attaches with one read and no
// write. Both handles name the same ownership period and converge instead of fencing each other.
import { Fencepost, memoryStore } from "fencepost";

const db = new Fencepost(memoryStore());
const first = await db.lease("jobs/sync", { ttl: 60, stateFn: () => ({ pages: 0 }) });
const holder = first.holder; // a credential: whoever knows it can attach

const later = await db.attachLease("jobs/sync", { holder, ttl: 60 });
await later.updateState((s) => ({ ...s, pages: s.pages + 10 }));
await first.updateState((s) => ({ ...s, pages: s.pages + 1 }));
console.log(`epoch ${later.epoch} == ${first.epoch}, pages ${first.state.pages}`);
if (first.state.pages !== 11) process.exit(1);
