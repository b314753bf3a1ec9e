#!/usr/bin/env node
// The playground (js/playground/) in headless Chromium: a few configurations, each run to the end
// through ?autorun=1; every invariant must hold, the timeline must have drawn its marks (and as
// many as the summary counts), and the same seed must replay the same history.
//
//   node tests/js/playground/run.mjs                 one line per configuration, then "N passed, M failed"
//   node tests/js/playground/run.mjs --screenshot    also save js/playground/screenshot.png (1200×700)
//
// One configuration has the operator break stuck leases often (break=0.3): it must break one, and
// an old holder must be fenced by a break with LeaseLost, reason "stolen".
//
// A screenshot of the first configuration always goes to .run/playground.png. CHROMIUM overrides
// the browser binary (default /usr/bin/chromium). Expects the package built and installed
// (node_modules/fencepost).
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, PAGE, startServer, stopServer } from "../../../js/playground/serve.mjs";
import { checkInvariants } from "../../../js/playground/report.js";
import { CHROMIUM, FLAGS } from "../browser/run.mjs";

const TIMEOUT_MS = 120_000; // per configuration; one takes a few seconds

const CONFIGS = [
  { name: "seed 1, 4 workers, default faults", query: { workers: 4, seed: 1 }, expect: ["fault"], screenshot: true },
  { name: "seed 2, 5 workers, heavier faults", query: { workers: 5, seed: 2, lost: 0.1, conflict: 0.06, unavailable: 0.1, delay: 0.08 }, expect: ["fault"] },
  { name: "seed 3, 3 workers, a stalling worker", query: { workers: 3, seed: 3, stall: 0.3, ttl: 4 }, expect: ["fault", "leaselost", "stall"] },
  // The operator breaks stuck leases often: at least one break, and an old holder fenced by one.
  { name: "seed 4, 4 workers, an operator breaking stuck leases", query: { workers: 4, seed: 4, stall: 0.25, break: 0.3 }, expect: ["fault", "leaselost", "stall", "break", "broken"], breaks: true },
  { name: "seed 1 again: the same history", query: { workers: 4, seed: 1 }, sameAs: 0 },
];

// Each one breaks one invariant in a real history (of the first configuration, or of the one with
// breaks); the checks must notice (and only then are their "all hold" worth anything).
const BREAKS = CONFIGS.findIndex((c) => c.breaks);
/** The first break whose old holder was fenced on a write, and that LeaseLost. */
const fencedByBreak = (events) => {
  for (const b of events.filter((e) => e.type === "break")) {
    const lost = events.find((e) => e.type === "lost" && e.op === "write" && e.w === b.holderW && e.epoch === b.previous.epoch);
    if (lost) return { b, lost };
  }
  throw new Error("no old holder fenced on a write after a break");
};
const TAMPERINGS = [
  [0, "a second winner", ({ events }) => { const won = events.find((e) => e.type === "claim" && e.won); events.find((e) => e.type === "claim" && !e.won && e.key === won.key).won = true; }],
  [0, "a claimer told another value", ({ events }) => { events.find((e) => e.type === "claim" && !e.won).value = { by: "nobody" }; }],
  [1, "two holders in one epoch", ({ events }) => { const a = events.find((e) => e.type === "acquire"); events.push({ ...a, holder: "w9-9", w: 9 }); }],
  [2, "an epoch going back in the log", ({ final }) => { const log = final.job.state.log; [log[0], log[log.length - 1]] = [log[log.length - 1], log[0]]; }],
  [3, "an acknowledged write dropped", ({ final }) => { final.job.state.log.splice(3, 1); }],
  [3, "a write applied twice", ({ final }) => { const log = final.job.state.log; log.splice(3, 0, { ...log[3] }); }],
  [4, "a fenced write landed", ({ events, final }) => { const f = events.find((e) => e.type === "lost" && e.op === "write"); final.job.state.log.push({ epoch: f.epoch, by: `w${f.w}`, n: f.n }); }],
  [6, "a broken epoch's write landed after the break", ({ events, final }) => { const { b } = fencedByBreak(events); final.job.state.log.splice(b.logAt, 0, { epoch: b.previous.epoch, by: `w${b.holderW}`, n: 9999 }); }, BREAKS],
  [6, "an old holder's write acknowledged after a break", ({ events }) => { const { lost } = fencedByBreak(events); Object.assign(lost, { type: "write", reason: undefined }); }, BREAKS],
  [6, "an old holder told another reason", ({ events }) => { fencedByBreak(events).lost.reason = "expired"; }, BREAKS],
  [6, "the next acquisition at the broken epoch", ({ events }) => { const { b } = fencedByBreak(events); events.find((e, i) => e.type === "acquire" && i > events.indexOf(b)).epoch = b.epoch; }, BREAKS],
];

function checkTamperings(histories) {
  const missed = [];
  for (const [target, name, tamper, from = 0] of TAMPERINGS) {
    if (!histories[from]) {
      missed.push(`${name}: no history from "${CONFIGS[from].name}"`);
      continue;
    }
    try {
      const copy = structuredClone(histories[from]);
      tamper(copy);
      const result = checkInvariants(copy.events, copy.final);
      if (result[target].ok) missed.push(`${name}: "${result[target].name}" still holds`);
    } catch (e) {
      missed.push(`${name}: ${e?.message ?? e}`);
    }
  }
  return missed;
}

const cleanups = [];
async function cleanup() {
  while (cleanups.length) await cleanups.pop()().catch((e) => console.error(`# cleanup: ${e?.message ?? e}`));
}
for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]]) process.once(sig, () => cleanup().finally(() => process.exit(code)));

let passed = 0, failed = 0;
const started = Date.now();
try {
  const { server, origin, notFound } = await startServer();
  cleanups.push(() => stopServer(server));
  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(join(tmpdir(), "fencepost-playground-"));
  cleanups.push(async () => rmSync(profile, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1200, height: 700 }, timeout: 60_000,
  });
  cleanups.push(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && pageErrors.push(`console: ${m.text()}`));
  console.log(`# chromium ${context.browser()?.version() ?? "?"}, ${origin}${PAGE}`);

  const results = [];
  for (const [i, config] of CONFIGS.entries()) {
    const t0 = Date.now();
    const problems = [];
    let report = null, marks = {};
    pageErrors.length = 0;
    try {
      const query = new URLSearchParams({ autorun: "1", ...Object.fromEntries(Object.entries(config.query).map(([k, v]) => [k, String(v)])) });
      await page.goto(`${origin}${PAGE}?${query}`, { waitUntil: "load" });
      await page.waitForFunction(() => window.__playground?.done === true, null, { timeout: TIMEOUT_MS, polling: 100 });
      report = await page.evaluate(() => window.__playground);
      // Count what the SVG holds, independently of what the page says it drew.
      marks = await page.evaluate(() => Object.fromEntries(["lease", "epoch", "write", "claim", "claim-won", "claim-converged", "fault", "leaselost", "stall", "rejected", "cancel", "break", "broken"]
        .map((c) => [c, document.querySelectorAll(`#timeline .${c}`).length])));
      if (report.error) problems.push(`page error: ${report.error.split("\n")[0]}`);
      for (const inv of report.invariants ?? []) if (!inv.ok) problems.push(`invariant "${inv.name}": ${inv.detail}`);
      if ((report.invariants ?? []).length < 7) problems.push(`only ${(report.invariants ?? []).length} invariants checked`);
      const s = report.summary;
      for (const c of ["lease", "epoch", "write", "claim", ...(config.expect ?? [])]) if (!(marks[c] > 0)) problems.push(`no .${c} marks drawn`);
      if (s) {
        if (marks.write !== s.writes.acknowledged) problems.push(`${marks.write} write ticks for ${s.writes.acknowledged} acknowledged writes`);
        if (marks.claim !== s.claims.won + s.claims.converged) problems.push(`${marks.claim} claim marks for ${s.claims.won + s.claims.converged} claims`);
        if (marks.leaselost !== s.lease.leaseLost) problems.push(`${marks.leaselost} LeaseLost marks for ${s.lease.leaseLost}`);
        if (marks.lease !== s.lease.epochs) problems.push(`${marks.lease} lease bars for ${s.lease.epochs} epochs`);
        const faults = Object.values(s.faults).reduce((a, b) => a + b, 0);
        if (marks.fault !== faults) problems.push(`${marks.fault} fault markers for ${faults} faults`);
        if (marks.break !== s.breaks.count) problems.push(`${marks.break} break marks for ${s.breaks.count} breaks`);
      }
      if (config.breaks) {
        // From the history itself: a break, then its old holder's LeaseLost with reason "stolen".
        const events = report.history?.events ?? [];
        const breaks = events.filter((e) => e.type === "break");
        const fenced = breaks.filter((b) => events.some((e, i) => i > events.indexOf(b) && e.type === "lost" && e.w === b.holderW && e.epoch === b.previous.epoch && e.reason === "stolen"));
        if (breaks.length === 0) problems.push("no lease was broken");
        if (fenced.length === 0) problems.push(`no old holder was fenced with LeaseLost (stolen) after a break (${breaks.length} breaks)`);
        if (!((s?.breaks.fenced.stolen ?? 0) >= 1)) problems.push(`the summary counts ${JSON.stringify(s?.breaks.fenced)} old holders fenced`);
      }
      if (config.sameAs !== undefined) {
        const other = results[config.sameAs]?.report;
        if (!other || other.fingerprint !== report.fingerprint) problems.push(`fingerprint ${report.fingerprint}, but ${other?.fingerprint ?? "none"} for "${CONFIGS[config.sameAs].name}"`);
      }
      problems.push(...pageErrors.slice(0, 5));
      if (config.screenshot) {
        mkdirSync(join(ROOT, ".run"), { recursive: true });
        await page.screenshot({ path: join(ROOT, ".run", "playground.png") });
        if (process.argv.includes("--screenshot")) {
          await page.screenshot({ path: join(ROOT, "js", "playground", "screenshot.png") });
          console.log("# screenshot: js/playground/screenshot.png");
        }
      }
    } catch (e) {
      problems.push(`${e?.message?.split("\n")[0] ?? e}`);
    }
    results.push({ report });
    const ok = problems.length === 0;
    ok ? passed++ : failed++;
    const s = report?.summary;
    const inv = report?.invariants ?? [];
    console.log(`${ok ? "ok" : "not ok"} ${i + 1} - ${config.name}: ` +
      `${inv.filter((x) => x.ok).length}/${inv.length} invariants hold` +
      (s ? `; ${s.claims.keys} claim keys (${s.claims.won} won, ${s.claims.converged} converged), ${s.lease.epochs} epochs, ` +
        `${s.writes.acknowledged} fenced writes, ${s.lease.leaseLost} LeaseLost, ${s.breaks.count} breaks (old holders fenced: ${JSON.stringify(s.breaks.fenced)}), faults ${JSON.stringify(s.faults)}, rejections ${JSON.stringify(s.rejections)}` : "") +
      `; drawn ${marks.lease ?? 0} lease bars, ${marks.write ?? 0} write ticks, ${marks.claim ?? 0} claims, ${marks.fault ?? 0} faults, ${marks.leaselost ?? 0} LeaseLost, ${marks.stall ?? 0} stalls, ${marks.break ?? 0} breaks` +
      `; fingerprint ${report?.fingerprint ?? "—"} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    for (const p of problems) console.log(`    ${p}`);
  }
  // The checks themselves, on real histories.
  const missed = checkTamperings(results.map((r) => r?.report?.history));
  missed.length ? failed++ : passed++;
  console.log(`${missed.length ? "not ok" : "ok"} ${CONFIGS.length + 1} - the invariant checks catch ${TAMPERINGS.length - missed.length}/${TAMPERINGS.length} tampered histories (${TAMPERINGS.map(([, n]) => n).join(", ")})`);
  for (const m of missed) console.log(`    ${m}`);
  if (notFound.length) console.log(`# 404: ${[...new Set(notFound)].join(", ")}`);
} catch (e) {
  failed++;
  console.log(`not ok - playground: ${e?.stack ?? e}`);
} finally {
  await cleanup();
}
console.log(`# total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
