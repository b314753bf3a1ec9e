// Refusing finished work: stateFn makes acquisition a transition. Throwing from it refuses the
// lease and writes nothing; the error reaches you unchanged.
import { Fencepost, memoryStore } from "fencepost";

const db = new Fencepost(memoryStore());
class AlreadyDone extends Error {}
const takeUnlessDone = (s) => {
  if (s?.done) throw new AlreadyDone("job already finished");
  return { ...(s ?? {}), attempts: (s?.attempts ?? 0) + 1 };
};

const first = await db.lease("jobs/import", { ttl: 60, stateFn: takeUnlessDone });
await first.release({ state: { ...first.state, done: true } });
try {
  await db.lease("jobs/import", { ttl: 60, stateFn: takeUnlessDone });
  process.exit(1);
} catch (e) {
  if (!(e instanceof AlreadyDone)) throw e;
  console.log(`refused: ${e.message}`);
}
