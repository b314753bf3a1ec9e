#!/usr/bin/env node
// Runs the JS conformance suite in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded) against memoryStore() and SeaweedFS through CORS.
//
//   node tests/js/browser/run.mjs           run, print ok / not ok per case, then "N passed, M failed"
//   node tests/js/browser/run.mjs --serve   only serve the repository root and print the page URL,
//                                           for opening the harness by hand (Ctrl-C stops)
//
// Environment: FENCEPOST_<NAME>_* from .run/servers.env (read from that file when not exported),
//   FENCEPOST_BROWSER_STORES  stores to run (default "memory,seaweed"; "moto" also works)
//   FENCEPOST_BROWSER_TIMEOUT seconds for the whole page run (default 480)
//   CHROMIUM                  browser binary (default /usr/bin/chromium)
// Writes a full-page screenshot to .run/browser-harness.png. Exits non-zero on any failure or timeout.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { serverSettings } from "../../../js/support/servers.js";
import { MIME, startServer as serveFolder, stopServer } from "../../../scripts/static-server.mjs";

export const ROOT = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
const PAGE = "/tests/js/browser/index.html";
const SCREENSHOT = join(ROOT, ".run", "browser-harness.png");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const TIMEOUT_S = Number(process.env.FENCEPOST_BROWSER_TIMEOUT ?? 480);
const STORES = (process.env.FENCEPOST_BROWSER_STORES ?? "memory,seaweed").split(",").map((s) => s.trim()).filter(Boolean);
// What headless Chromium needs on a CI machine: running as root (no sandbox), no GPU, a small /dev/shm, no background networking.
export const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];


// ------------------------------------------------------------------ settings
export function settingsFor(stores) {
  const names = stores.filter((s) => s !== "memory").map((s) => s.toUpperCase());
  const source = serverSettings({ names }); // the environment, else .run/servers.env
  const missing = names.filter((n) => !source[`FENCEPOST_${n}_ENDPOINT`]);
  if (missing.length) {
    throw new Error(`no FENCEPOST_${missing[0]}_ENDPOINT: start the servers (scripts/servers/start.sh), ` +
      "or set FENCEPOST_BROWSER_STORES=memory");
  }
  return { stores: stores.join(","), ...source };
}

// ------------------------------------------------------------------ static server
/** The repository root, "/" opening the harness page; `/settings.json` hands it the test servers. */
export function startServer(settings) {
  const routes = { "/settings.json": () => (settings ? { type: MIME[".json"], body: JSON.stringify(settings) } : null) };
  return serveFolder({ root: ROOT, index: PAGE, routes });
}

export { stopServer };

// ------------------------------------------------------------------ run
const cleanups = [];
async function cleanup() {
  while (cleanups.length) {
    try {
      const step = cleanups.pop();
      let timer;
      await Promise.race([step(), new Promise((_, no) => { timer = setTimeout(() => no(new Error("timed out")), 15_000); })])
        .finally(() => clearTimeout(timer));
    } catch (e) {
      console.error(`# cleanup: ${e?.message ?? e}`);
    }
  }
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const indent = (text) => String(text).split("\n").map((l) => `    ${l}`).join("\n");

async function serveOnly() {
  let settings = null;
  try {
    settings = settingsFor(STORES);
  } catch (e) {
    console.error(`# ${e.message}; serving without /settings.json (memory store only)`);
  }
  const { server, origin } = await startServer(settings);
  cleanups.push(() => stopServer(server));
  console.log(`serving ${ROOT} at ${origin}\nopen ${origin}${PAGE}`);
  await new Promise(() => {}); // until a signal
}

async function run() {
  const started = Date.now();
  let results = [];
  let extraFailures = 0;
  let exitCode = 0;
  try {
    const settings = settingsFor(STORES);
    const { server, notFound, origin } = await startServer(settings);
    cleanups.push(() => stopServer(server));

    const { chromium } = await import("playwright-core");
    const profile = mkdtempSync(join(tmpdir(), "fencepost-chromium-"));
    cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
    // A persistent context is how playwright takes an explicit (fresh, throwaway) --user-data-dir.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1200, height: 900 },
      timeout: 60_000,
    });
    cleanups.push(() => context.close());
    const browserVersion = context.browser()?.version() ?? "?";
    const page = context.pages()[0] ?? (await context.newPage());

    // What the S3 servers actually send (network level), to compare with what page JS can read.
    const s3Origins = new Map(STORES.filter((s) => s !== "memory").map((s) => [new URL(settings[`FENCEPOST_${s.toUpperCase()}_ENDPOINT`]).origin, s]));
    const wire = new Map([...s3Origins.values()].map((s) => [s, { gets: 0, token: 0, history: 0, expose: new Set(), failed: 0 }]));
    const console_ = [];
    // Chromium logs every non-2xx fetch ("Failed to load resource: … 412"); the expected S3 answers
    // (404 absent key, 412 lost race) are only counted, anything else is printed.
    const statusLogs = new Map();
    page.on("console", (m) => {
      if (m.type() !== "error" && m.type() !== "warning") return;
      const status = /^Failed to load resource: the server responded with a status of (404|412)\b/.exec(m.text())?.[1];
      if (status && s3Origins.has(new URL(m.location().url || origin).origin)) statusLogs.set(status, (statusLogs.get(status) ?? 0) + 1);
      else console_.push(`${m.type()}: ${m.text()}${m.location().url ? ` (${m.location().url})` : ""}`);
    });
    page.on("pageerror", (e) => console_.push(`pageerror: ${e.message}`));

    const pending = [];
    page.on("response", (resp) => {
      const store = s3Origins.get(new URL(resp.url()).origin);
      if (!store || resp.request().method() !== "GET" || resp.status() !== 200 || resp.url().includes("list-type")) return;
      pending.push(resp.allHeaders().then((h) => {
        const w = wire.get(store);
        w.gets++;
        if (h["x-amz-meta-fencepost-token"] !== undefined) w.token++;
        if (h["x-amz-meta-fencepost-history"] !== undefined) w.history++;
        if (h["access-control-expose-headers"]) w.expose.add(h["access-control-expose-headers"]);
      }, () => {}));
    });
    page.on("requestfailed", (req) => {
      const store = s3Origins.get(new URL(req.url()).origin);
      if (store) wire.get(store).failed++;
      else console_.push(`requestfailed: ${req.url()} ${req.failure()?.errorText}`);
    });

    console.log(`# chromium ${browserVersion}, page ${origin}${PAGE}, stores ${STORES.join(", ")}`);
    await page.goto(origin + PAGE, { waitUntil: "load", timeout: 60_000 });

    let report;
    try {
      await page.waitForFunction(() => window.__results !== undefined, null, { timeout: TIMEOUT_S * 1000, polling: 250 });
      report = await page.evaluate(() => window.__results);
    } catch (e) {
      const progress = await page.evaluate(() => window.__progress).catch(() => null);
      report = {
        results: [...(progress?.results ?? []), {
          store: "harness", name: "harness", ok: false, ms: TIMEOUT_S * 1000,
          error: `no window.__results after ${TIMEOUT_S} s (${progress ? `${progress.done}/${progress.total} cases done, running: ${progress.current}` : "page not reachable"}): ${e.message.split("\n")[0]}`,
        }],
        stores: {},
      };
    }
    results = report.results ?? [];

    results.forEach((r, i) => {
      console.log(`${r.ok ? "ok" : "not ok"} ${i + 1} - ${r.name} (${r.ms} ms)`);
      if (!r.ok) console.log(indent(r.error));
    });
    for (const [store, s] of Object.entries(report.stores ?? {})) {
      console.log(`# ${store}: ${s.passed} passed, ${s.failed} failed in ${seconds(s.ms)}`);
    }
    if (report.schemas) console.log(`# schemas loaded in the page: ${report.schemas.join(", ") || "none"}`);

    await Promise.all(pending);
    for (const [store, c] of Object.entries(report.cors ?? {})) {
      const w = wire.get(store);
      console.log(`# cors ${store}: ${c.requests} requests from page JS, ${c.transportErrors} transport errors, ${w.failed} failed at the network level` +
        (c.probeError ? `, probe error: ${c.probeError}` : ""));
      console.log(`#   ETag readable by JS on ${c.getEtag}/${c.getOk} GET and ${c.putEtag}/${c.putOk} PUT responses`);
      console.log(`#   x-amz-meta-fencepost-token: sent by the server on ${w.token}/${w.gets} GETs, readable by JS on ${c.getToken}/${c.getOk}` +
        `; -history sent on ${w.history}, readable on ${c.getHistory}`);
      console.log(`#   Access-Control-Expose-Headers: ${[...w.expose].join(" | ") || "(none)"}`);
      console.log(`#   headers JS sees on a GET: ${(c.lastGetHeaders ?? []).join(", ")}`);
    }
    for (const line of report.pageErrors ?? []) console.log(`# page: ${line}`);
    if (statusLogs.size) console.log(`# chromium logged expected S3 answers: ${[...statusLogs].map(([s, n]) => `${n}× ${s}`).join(", ")}`);
    for (const line of console_.slice(0, 30)) console.log(`# console ${line}`);
    if (console_.length > 30) console.log(`# console … ${console_.length - 30} more lines`);
    if (notFound.length) console.log(`# 404: ${[...new Set(notFound)].join(", ")}`);

    mkdirSync(join(ROOT, ".run"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true }).then(
      () => console.log(`# screenshot: ${SCREENSHOT}`),
      (e) => console.log(`# screenshot failed: ${e.message}`),
    );
    if (results.length === 0) {
      extraFailures++;
      console.log("not ok - the page reported no cases");
    }
  } catch (e) {
    extraFailures++;
    console.log(`not ok - browser harness: ${e?.message ?? e}`);
    if (e?.stack) console.log(indent(e.stack));
  } finally {
    await cleanup();
  }
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed + extraFailures;
  if (failed > 0) exitCode = 1;
  console.log(`# total ${seconds(Date.now() - started)}`);
  console.log(`${passed} passed, ${failed} failed`);
  return exitCode;
}

// Run only as a script; lost-responses.mjs imports the server and settings helpers.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]]) {
    process.once(sig, () => cleanup().finally(() => process.exit(code)));
  }
  if (process.argv.includes("--serve")) await serveOnly();
  else process.exitCode = await run();
}
