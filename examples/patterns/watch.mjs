// Be told when something changes: follow who leads (or a shared config doc) with `db.watch`. Each
// poll is a conditional read: while nothing changed the store answers 304 without the body, so an
// idle watch costs one small request per interval.
import { Fencepost, memoryStore } from "fencepost";

const store = memoryStore();
const db = new Fencepost(store);

// Two leaders in turn; the follower watches the leader lease and reports each change of holder.
const leaders = [];
const follower = (async () => {
  for await (const now of db.watch("leader/jobs", { interval: 0.05 })) {
    const holder = now?.lease && !now.lease.released && !now.lease.expired ? now.lease.state?.name : null;
    if (leaders.at(-1) !== holder) leaders.push(holder);
    if (leaders.length === 4) break; // leaving the loop stops the watch
  }
})();
for (const name of ["a", "b"]) {
  await new Fencepost(store).withLease("leader/jobs", { ttl: 10, stateFn: () => ({ name }) }, async () => {
    await new Promise((r) => setTimeout(r, 150)); // ... lead for a while ...
  });
  await new Promise((r) => setTimeout(r, 100));
}
await follower;
if (JSON.stringify(leaders) !== JSON.stringify([null, "a", null, "b"])) throw new Error(`saw ${JSON.stringify(leaders)}`);
console.log(`the follower saw each change of leader: ${JSON.stringify(leaders)}`);
