// The memory benchmark's workload, the same in Node and in workerd: the calls a busy Worker or
// server makes per request, on the memory store, each with handles made and dropped as such code
// does, and no forced garbage collection. `step(i)` makes call number i, in rotation:
//   0  a new doc handle per update            db.doc(key).update(fn, {create})
//   1  lease + release                        (await db.lease(key, {ttl})).release()
//   2  withLease                              db.withLease(key, {ttl}, fn)
//   3  a new Fencepost per request + claim    new Fencepost(store).claim(key, value)
//   4  a lease dropped without release        db.lease(key, {ttl: 1}) (expires; re-taken later)
//   5  requests counted per request           new Fencepost(countingStore(store)).claim(key, value)
// Keys repeat (a bounded working set: 100 docs, 50 leases, 1,000 claims), so the store itself
// does not grow: what grows, grows because handles keep memory.

export const KINDS = ["doc.update (new handle)", "lease + release", "withLease", "new Fencepost + claim", "dropped lease",
  "countingStore per request + claim"];

/** @param {any} lib the fencepost module @param {any} store a memory store */
export function workload(lib, store) {
  const db = new lib.Fencepost(store);
  return async function step(/** @type {number} */ i) {
    switch (i % KINDS.length) {
      case 0:
        return db.doc(`doc/${i % 100}`).update((/** @type {number} */ n) => n + 1, { create: 0 });
      case 1: {
        const lease = await db.lease(`lease/${i % 50}`, { ttl: 30 });
        return lease?.release();
      }
      case 2:
        return db.withLease(`with/${i % 50}`, { ttl: 30 }, async (/** @type {any} */ lease) => lease.epoch);
      case 3:
        return new lib.Fencepost(store).claim(`claim/${i % 1000}`, { by: i });
      case 4:
        return db.lease(`dropped/${i % 50}`, { ttl: 1 });
      default:
        return new lib.Fencepost(lib.countingStore(store)).claim(`counted/${i % 1000}`, { by: i });
    }
  };
}
