// Leader election: every instance calls withLease on the same key with `wait`; one leads (its lease
// kept alive while it works), the others wait and take over within about a second of its release.
import { Fencepost, memoryStore } from "fencepost";

const store = memoryStore(); // in production: r2Store(env.BUCKET) or s3Store({...}) shared by all
const terms = [];

async function instance(name) {
  const db = new Fencepost(store);
  // Each instance campaigns until it has led once (a real service would loop forever).
  while (!terms.some((t) => t.name === name)) {
    await db.withLease("leader/scheduler", { ttl: 2, wait: 5 }, async (lease, signal) => {
      terms.push({ name, epoch: lease.epoch });
      console.log(`${name} leads (epoch ${lease.epoch})`);
      // ... lead: run the singleton work; stop as soon as `signal` aborts (the lease was lost) ...
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (signal.aborted) throw signal.reason;
    });
  }
}

await Promise.all(["a", "b", "c"].map(instance));
const epochs = terms.map((t) => t.epoch);
if (epochs.join() !== "1,2,3") throw new Error(`one leader per epoch, in order: ${JSON.stringify(terms)}`);
console.log(`three terms, one leader each: ${terms.map((t) => `${t.name}@${t.epoch}`).join(" → ")}`);
