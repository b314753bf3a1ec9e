// Deno Deploy: `Deno.cron` runs a handler on a schedule — and, across regions, restarts and retried
// deliveries, the same tick may start more than once. A claim on the tick's key gives each tick one
// winner, whose work runs at most once; every other start learns who ran it.
//
//   deno run --unstable-cron --allow-net --allow-env --allow-read examples/deno-deploy/cron.mjs
//
// With FENCEPOST_S3_ENDPOINT (and bucket, keys) set it uses that bucket, else an in-memory store, and
// fires one tick twice at once (two isolates, one tick), checks exactly one ran, and exits.
import { Fencepost, memoryStore, s3Store } from "fencepost"; // or "npm:fencepost" without a package.json

const env = (name) => Deno.env.get(name);
const db = new Fencepost(env("FENCEPOST_S3_ENDPOINT")
  ? s3Store({ endpoint: env("FENCEPOST_S3_ENDPOINT"), bucket: env("FENCEPOST_S3_BUCKET"), region: env("AWS_REGION") ?? "auto",
    accessKeyId: env("AWS_ACCESS_KEY_ID"), secretAccessKey: env("AWS_SECRET_ACCESS_KEY"), prefix: "deno-cron-example" })
  : memoryStore());

let runs = 0;

/** One delivery of the tick scheduled for `at` (the minute it is for, whoever delivers it). */
async function tick(at, isolate) {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString();
  const claim = await db.claim(`cron/report/${minute}`, { by: isolate });
  if (!claim.won) return `${isolate}: ${minute} already ran on ${claim.value.by}`;
  runs++; // ... the tick's work, once ...
  return `${isolate}: ran ${minute}`;
}

Deno.cron("fencepost report", "*/5 * * * *", () => tick(new Date(), Deno.env.get("DENO_REGION") ?? "local"));

// Two isolates starting the same tick at once: one runs it, the other converges.
const now = new Date();
for (const line of await Promise.all([tick(now, "isolate-a"), tick(now, "isolate-b")])) console.log(line);
if (runs !== 1) {
  console.error(`expected exactly one run, got ${runs}`);
  Deno.exit(1);
}
Deno.exit(0); // the registered cron would keep the process alive
