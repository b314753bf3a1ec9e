// Cron dedup: every scheduled invocation of the same tick claims (schedule, scheduledTime).
// In a Worker this is the body of `scheduled(controller, env, ctx)`; see examples/worker.js.
import { Fencepost, memoryStore } from "fencepost";

const db = new Fencepost(memoryStore());

async function scheduled(controller, invocation) {
  const tick = new Date(controller.scheduledTime).toISOString();
  const { won, value } = await db.claim(`cron/${controller.cron}/${tick}`, { invocation });
  if (!won) return `${invocation}: tick ${tick} already run by ${value.invocation}`;
  return `${invocation}: running tick ${tick}`;
}

const controller = { cron: "*/5 * * * *", scheduledTime: Date.UTC(2026, 10, 30, 12, 0) };
const out = await Promise.all(["inv-a", "inv-b", "inv-c"].map((id) => scheduled(controller, id)));
console.log(out.join("\n"));
if (out.filter((l) => l.includes("running")).length !== 1) process.exit(1);
