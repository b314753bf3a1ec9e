#!/usr/bin/env node
// Lost responses end to end: `fetch` is wrapped so one conditional PUT reaches SeaweedFS and lands,
// then throws as a reset connection would. The write-token read-back must give the right answer
// (or a distinct AmbiguousWriteError), in Node and in headless Chromium — where the x-amz-meta-*
// headers are visible only through the bucket's CORS ExposeHeaders (scripts/servers sets it).
//   node tests/js/browser/lost-responses.mjs      (FENCEPOST_BROWSER_STORES default "seaweed")
// Exits non-zero if any scenario gives a wrong answer in either runtime.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lib from "fencepost";
import { s3Factories } from "../../../js/support/servers.js";
import { scenarios } from "./ambiguous-scenarios.js";
import { CHROMIUM, FLAGS, settingsFor, startServer, stopServer } from "./run.mjs";

const stores = (process.env.FENCEPOST_BROWSER_STORES ?? "seaweed").split(",").filter((s) => s && s !== "memory");
const settings = settingsFor(stores);
let bad = 0;
let total = 0;
const print = (runtime, r) => {
  total++;
  if (!r.ok) bad++;
  console.log(`${r.ok ? "ok" : "not ok"} - ${runtime} / ${r.store} / ${r.name}\n    ${r.detail} (lost response injected: ${r.fired}, server answered ${r.status})`);
};

for (const [store, make] of Object.entries(s3Factories(lib, settings, "node-ambig", stores.map((s) => s.toUpperCase())))) {
  for (const r of await scenarios(lib, make)) print("node", { store, ...r });
}

const { chromium } = await import("playwright-core");
const { server, origin } = await startServer(settings);
const profile = mkdtempSync(join(tmpdir(), "fencepost-chromium-"));
let context;
try {
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (e) => console.log(`# pageerror: ${e.message}`));
  await page.goto(`${origin}/tests/js/browser/ambiguous.html`);
  await page.waitForFunction(() => window.__results, null, { timeout: 120_000 });
  for (const r of await page.evaluate(() => window.__results)) print("chromium", r);
} catch (e) {
  bad++;
  total++;
  console.log(`not ok - chromium: ${e.message}`);
} finally {
  await context?.close().catch(() => {});
  await stopServer(server);
  rmSync(profile, { recursive: true, force: true });
}
console.log(`${total - bad} passed, ${bad} failed`);
process.exitCode = bad ? 1 : 0;
