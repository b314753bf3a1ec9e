// Small helpers shared by the example Worker's tests (they run inside workerd).
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { vi } from "vitest";

export const CRON = "*/5 * * * *"; // wrangler.toml's trigger

/** Run the Worker's scheduled() handler for the tick at `iso`, as the runtime would. */
export async function fireTick(worker, env, iso) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: CRON, scheduledTime: new Date(iso) }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** The Worker's JSON log lines (`{event, ...}`), collected while the test runs. */
export function captureEvents() {
  const events = [];
  const log = console.log;
  vi.spyOn(console, "log").mockImplementation((...args) => {
    const line = String(args[0]);
    try {
      const e = JSON.parse(line);
      if (e && typeof e.event === "string") return void events.push(e);
    } catch {}
    log(...args);
  });
  return events;
}

/** A promise with its resolve function outside: lets a test hold a job at one of its steps. */
export function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

/** A doStep that stops at step `at` (once) until the test lets it go; records every step run. */
export function stallingStep(at) {
  const reached = deferred();
  const release = deferred();
  const ran = [];
  let stalled = false;
  async function doStep(jobId, step) {
    ran.push(step);
    if (step === at && !stalled) {
      stalled = true;
      reached.resolve();
      await release.promise;
    }
  }
  return { doStep, reached: reached.promise, release: () => release.resolve(), ran };
}

/** GET/POST through the Worker's fetch handler; resolves to {status, body}. */
export async function call(worker, env, method, path) {
  const res = await worker.fetch(new Request(`http://worker.test${path}`, { method }), env, createExecutionContext());
  return { status: res.status, body: await res.json() };
}
