// The fence end to end, in your own database: Postgres refuses a write whose lease epoch is older than
// the last one it saw. Worker A takes the lease (epoch 1) and writes; A stalls past its ttl; B takes
// over (epoch 2) and writes; A wakes up, its UPDATE matches no row, so A stops — and its next write
// through the lease rejects with LeaseLost. Without the epoch check, A's late write would overwrite
// B's. Postgres here is PGlite (real Postgres compiled to wasm, in process); the SQL is the same on
// any Postgres, and the pattern on any database with a conditional UPDATE.
import { PGlite } from "@electric-sql/pglite";
import { Fencepost, LeaseLost, memoryStore } from "fencepost";
import { manualClock } from "fencepost/testing";

const pg = new PGlite();
await pg.exec(`
  CREATE TABLE reports (
    id         text PRIMARY KEY,
    body       text,
    last_epoch bigint NOT NULL DEFAULT 0  -- the highest lease epoch that wrote this row
  );
  INSERT INTO reports (id) VALUES ('daily');
`);

// Every write carries the writer's epoch and lands only if no later epoch has written the row.
// `<=`, not `<`: a holder writes many times in one period. 0 rows: a later holder wrote; stop.
async function saveReport(id, body, epoch) {
  const { affectedRows } = await pg.query(
    `UPDATE reports SET body = $2, last_epoch = $3
      WHERE id = $1 AND last_epoch <= $3`,
    [id, body, epoch],
  );
  return affectedRows === 1;
}
const row = async () => (await pg.query(`SELECT body, last_epoch FROM reports WHERE id = 'daily'`)).rows[0];

const store = memoryStore(); // in production: r2Store(env.BUCKET) or s3Store({...}) shared by all
const clock = manualClock(); // time moves only when told: the stall below is exact
const workerA = new Fencepost(store, { clock });
const workerB = new Fencepost(store, { clock });

const a = await workerA.lease("reports/daily", { ttl: 30 });
if (a?.epoch !== 1) throw new Error(`A takes the lease at epoch 1, got ${a?.epoch}`);
if (!(await saveReport("daily", "draft by A", a.epoch))) throw new Error("A's first write lands");
console.log(`A holds epoch ${a.epoch} and writes: ${JSON.stringify(await row())}`);

await clock.advance(31); // A stalls (a GC pause, a slow call) past its 30 s ttl without renewing
const b = await workerB.lease("reports/daily", { ttl: 30 });
if (b?.epoch !== 2) throw new Error(`B takes over at epoch 2, got ${b?.epoch}`);
if (!(await saveReport("daily", "final by B", b.epoch))) throw new Error("B's write lands");
console.log(`A stalled past its ttl; B took over at epoch ${b.epoch} and writes: ${JSON.stringify(await row())}`);

// A wakes up, unaware, and writes with its old epoch: Postgres refuses it.
if (await saveReport("daily", "late draft by A", a.epoch)) throw new Error("A's stale write must match no row");
const after = await row();
if (after.body !== "final by B" || Number(after.last_epoch) !== 2) throw new Error(`B's row stands: ${JSON.stringify(after)}`);
console.log(`A's late UPDATE (epoch ${a.epoch}) matched 0 rows: A stops; the row is still B's`);

// The same fence in the bucket: A's next write through its lease rejects.
try {
  await a.updateState(() => ({ step: "saved" }));
  throw new Error("A's write through its lease must reject");
} catch (e) {
  if (!(e instanceof LeaseLost) || e.reason !== "stolen") throw e;
  console.log(`A's next fencepost write: ${e.code} (${e.reason}); a.signal.aborted = ${a.signal.aborted}`);
}
if (!a.signal.aborted) throw new Error("A's signal aborts once it learns its period is over");

await b.release();
await pg.close();
