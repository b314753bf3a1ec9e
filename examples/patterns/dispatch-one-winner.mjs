// Dispatch by one winner: many workers see the same event; one claim decides who handles it (one
// winner per event, its side effect run at most once: if the winner crashes, nobody runs it again).
// Losers learn the winner's value, so they can report "handled by X" instead of guessing.
import { Fencepost, memoryStore } from "fencepost";

const db = new Fencepost(memoryStore());

async function onEvent(workerId, eventId) {
  const claim = await db.claim(`events/${eventId}`, { worker: workerId, at: new Date() });
  if (!claim.won) return `${workerId}: skipped, ${claim.value.worker} handles ${eventId}`;
  // ... the side effect, done once ...
  return `${workerId}: handled ${eventId}`;
}

const results = await Promise.all(["w1", "w2", "w3", "w4"].map((w) => onEvent(w, "order-42")));
console.log(results.join("\n"));
if (results.filter((r) => r.includes("handled order-42") && !r.includes("skipped")).length !== 1) process.exit(1);
