// Run a job once per key with its result recorded: the first caller runs it, every later caller
// gets the recorded result in one request; a caller that arrives while it runs can wait for it; a
// failed run is recorded and run again by the next caller.
import { Fencepost, memoryStore } from "fencepost";

const store = memoryStore();
let runs = 0;
const report = async (signal) => {
  runs++;
  await new Promise((r) => setTimeout(r, 100)); // ... build the report; pass `signal` on ...
  return { rows: 42 };
};

// Five invocations at once: one runs the job, the others wait up to 10 s for its result.
const answers = await Promise.all(Array.from({ length: 5 }, () =>
  new Fencepost(store).once("reports/2026-05-01", report, { ttl: 60, wait: 10 })));
if (runs !== 1) throw new Error(`ran ${runs} times`);
if (!answers.every((a) => a.status === "done" && a.value.rows === 42)) throw new Error(JSON.stringify(answers));
if (answers.filter((a) => a.ran).length !== 1) throw new Error("exactly one answer says it ran");

// Later: the recorded result, without running anything.
const later = await new Fencepost(store).once("reports/2026-05-01", report);
if (later.ran || runs !== 1) throw new Error("a done record is the answer");

// A failure is recorded (and rethrown); the next call runs the job again.
let attempts = 0;
const flaky = async () => {
  if (++attempts === 1) throw new Error("the partner API was down");
  return "sent";
};
const db = new Fencepost(store);
await db.once("emails/welcome/u123", flaky).then(() => { throw new Error("should have thrown"); }, () => {});
const retried = await db.once("emails/welcome/u123", flaky);
if (retried.value !== "sent" || attempts !== 2) throw new Error(JSON.stringify(retried));
console.log(`5 racers: 1 run, 4 latched onto its result; a later call read the record; a failed run ran again (${attempts} attempts)`);
