// Cooperative cancel: anyone may set `cancel` in the lease's state without fencing the holder;
// the holder sees it on its next heartbeat (renew absorbs cooperative writes) and stops cleanly.
import { Fencepost, memoryStore } from "fencepost";

const db = new Fencepost(memoryStore());
const lease = await db.lease("jobs/export", { ttl: 30, stateFn: () => ({ step: 0 }) });

// Elsewhere (an HTTP handler, an operator):
await db.cooperativeWrite("jobs/export", (s) => ({ ...s, cancel: true }));

// The holder's loop:
await lease.renew();
if (lease.state.cancel) {
  await lease.release({ state: { ...lease.state, cancelled: true } });
  console.log(`cancelled cleanly at step ${lease.state.step}, epoch still ${lease.epoch}`);
} else {
  process.exit(1);
}
