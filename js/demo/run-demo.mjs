#!/usr/bin/env node
// The fencepost demo: runs the example Worker (examples/worker.js, configured by wrangler.toml) on a
// local workerd through Miniflare's API, with a simulated in-memory R2 bucket. No account, no
// network: everything listens on 127.0.0.1 and nothing is persisted.
//
//   1. cron dispatch, one winner per tick: 8 concurrent scheduled() invocations for each of 3 ticks;
//      each tick must have exactly one winner, the 7 others converging on its value;
//   2. the winners advance a lease-owned job across the ticks (epoch 1, 2, 3);
//   3. a cooperative cancel of a job while it runs, then a tick that refuses the cancelled job;
//   4. the R2 requests every operation cost, against the floor (docs/operations.md: Requests per operation).
//
// Ends with the line "N passed, M failed" (the checks; what scripts/test.sh counts) and exits 0
// when every check holds, 1 otherwise. Expects the package to be built and installed
// (scripts/build-pkg.sh, scripts/install-pkg.sh): the Worker imports "fencepost" from node_modules.
//
//   node js/demo/run-demo.mjs --config examples/worker-rs/wrangler.toml
// runs the same checks on another Worker with the same API and log lines: one whose wrangler.toml
// has a [build] command (the Rust Worker, built by worker-build) runs as built, from its `main`.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Offline: no metrics, no error reports, no request for Cloudflare's `cf` object.
process.env.WRANGLER_SEND_METRICS = "false";
process.env.WRANGLER_SEND_ERROR_REPORTS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const configArg = process.argv.indexOf("--config");
const CONFIG = path.resolve(configArg > 0 ? process.argv[configArg + 1] : path.join(ROOT, "wrangler.toml"));
const RACERS = 8; // concurrent invocations per tick
const DEADLINE_MS = 90_000; // the whole demo; it normally takes a few seconds

// ------------------------------------------------------------------------------ output helpers

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code) => (s) => (useColor ? `\x1b[${code}m${s}\x1b[0m` : String(s));
const bold = paint("1");
const dim = paint("2");
const green = paint("32");
const red = paint("31");
const yellow = paint("33");
const out = (s = "") => console.log(s);

const checks = [];
function check(ok, what) {
  checks.push({ ok: Boolean(ok), what });
  if (!ok) out(`    ${red("✗ CHECK FAILED:")} ${what}`);
  return Boolean(ok);
}

function fmtCounts(c) {
  if (!c) return "?";
  const parts = ["get", "put", "delete", "list"].filter((k) => c[k]).map((k) => `${k} ${c[k]}`);
  return `${c.total} request${c.total === 1 ? "" : "s"}${parts.length ? ` (${parts.join(", ")})` : ""}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// -------------------------------------------------------------------------------------- setup

const started = Date.now();
let mf;
let buildDir;

async function cleanup() {
  if (mf) {
    const m = mf;
    mf = undefined;
    await m.dispose().catch((e) => console.error(`warning: Miniflare dispose failed: ${e}`));
  }
  removeBuildDir();
}

function removeBuildDir() {
  if (buildDir) {
    rmSync(buildDir, { recursive: true, force: true });
    buildDir = undefined;
  }
}
process.on("exit", removeBuildDir); // whatever ends the process

/** Ctrl-C / SIGTERM: stop workerd, remove the bundle, exit non-zero. */
function handleSignals() {
  // Importing `wrangler` as a library installs SIGINT/SIGTERM handlers that call process.exit()
  // with status 0; drop them so that an interrupted demo does not report success.
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.removeAllListeners(signal);
    process.on(signal, async () => {
      console.error(`\n${signal}: stopping workerd`);
      removeBuildDir();
      await cleanup(); // Miniflare's own exit hook (registered later) may exit first: it stops workerd too
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  }
}
const watchdog = setTimeout(async () => {
  console.error(red(`\ndemo did not finish within ${DEADLINE_MS / 1000} s: giving up`));
  await cleanup();
  process.exit(1);
}, DEADLINE_MS);
watchdog.unref();

/** Everything the Worker logs arrives here; its JSON lines are the record of what happened. */
const events = [];
const otherLogs = [];
function onWorkerLog({ level, message }) {
  for (const line of String(message).split("\n")) {
    if (!line.trim()) continue;
    let parsed = null;
    if (line.startsWith("{")) {
      try {
        parsed = JSON.parse(line);
      } catch {}
    }
    if (parsed && typeof parsed.event === "string") events.push(parsed);
    else {
      otherLogs.push(`[${level}] ${line}`);
      if (level === "error" || level === "warn") console.error(dim(`    workerd ${level}: ${line}`));
    }
  }
}

async function start() {
  const config = (await import("wrangler")).unstable_readConfig({ config: CONFIG });
  const prebuilt = Boolean(config.build?.command);
  if (!prebuilt && !existsSync(path.join(ROOT, "node_modules/fencepost/package.json"))) {
    throw new Error("node_modules/fencepost is missing: run `bash scripts/build-pkg.sh && bash scripts/install-pkg.sh` first");
  }
  const [{ Miniflare }, esbuild, wrangler] = await Promise.all([
    import("miniflare"),
    import("esbuild"),
    import("wrangler"),
  ]);
  handleSignals();

  // The Worker as wrangler.toml describes it (compatibility date, R2 binding, vars, module rules).
  const { workerOptions, main } = wrangler.unstable_getMiniflareWorkerOptions(CONFIG);
  const cron = config.triggers?.crons?.[0];
  if (!cron) throw new Error("wrangler.toml has no cron trigger");

  let modules;
  if (prebuilt) {
    // Built by its own [build] command (worker-build for the Rust Worker): run `main` as it is,
    // its .wasm compiled by workerd.
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`${config.build.command}\` in ${path.dirname(CONFIG)} first`);
    modules = {
      scriptPath: main,
      modulesRoot: path.dirname(main),
      modulesRules: [
        { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
        { type: "CompiledWasm", include: ["**/*.wasm"] },
      ],
    };
  } else {
    // Bundle it the way wrangler does: resolve "fencepost" through its `workerd` export condition,
    // keep the .wasm as a separate module (workerd compiles it: a CompiledWasm module).
    buildDir = mkdtempSync(path.join(tmpdir(), "fencepost-demo-"));
    await esbuild.build({
      entryPoints: [main],
      absWorkingDir: ROOT,
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      conditions: ["workerd", "worker", "browser"],
      loader: { ".wasm": "copy" },
      assetNames: "[name]",
      outdir: buildDir,
      logLevel: "warning",
    });
    modules = { scriptPath: path.join(buildDir, "worker.js"), modulesRoot: buildDir };
  }

  mf = new Miniflare({
    ...workerOptions,
    name: config.name,
    modules: true,
    ...modules,
    host: "127.0.0.1",
    port: 0,
    cf: false, // offline: no request for the `cf` object
    r2Persist: false, // the bucket lives in memory and disappears with workerd
    handleStructuredLogs: onWorkerLog,
  });
  await mf.ready;
  return { worker: await mf.getWorker(), config, cron, vars: workerOptions.bindings ?? {}, entry: main };
}

// ----------------------------------------------------------------------------------- actions

/** Fire `n` scheduled events for the same tick at once; resolves when all have finished. */
async function raceTick(worker, cron, when, n = RACERS) {
  const scheduledTime = new Date(when);
  const results = await Promise.allSettled(
    Array.from({ length: n }, () => worker.scheduled({ cron, scheduledTime })),
  );
  return results.map((r) => (r.status === "fulfilled" ? r.value : { outcome: "exception", error: String(r.reason) }));
}

/** The Worker's log lines for one tick (waits a moment for log lines still in the pipe). */
async function tickEvents(tickIso, n = RACERS) {
  const mine = () => events.filter((e) => e.tick === tickIso);
  for (let i = 0; i < 100 && mine().length < n; i++) await sleep(20);
  return mine();
}

async function api(method, pathname) {
  const res = await mf.dispatchFetch(`http://127.0.0.1${pathname}`, { method });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

// ------------------------------------------------------------------------------------ report

const jobRuns = []; // every winner's job summary, for part 4
const claimCosts = { won: [], lost: [] };

function describeJob(job) {
  if (!job) return "no job";
  const steps =
    job.to >= job.from ? (job.to === job.from ? `step ${job.from}` : `steps ${job.from}–${job.to}`) : "no step";
  switch (job.outcome) {
    case "refused":
      return `job ${job.id}: refused (${job.reason}); nothing written`;
    case "busy":
      return `job ${job.id}: held by another invocation, skipped`;
    default:
      return `job ${job.id}, lease epoch ${job.epoch}: ${steps} → ${job.outcome} (at ${job.step}/${job.total})`;
  }
}

/** Print one tick's outcome and check its invariants; returns the winner's log line. */
async function reportTick(label, tickIso, results) {
  const evs = await tickEvents(tickIso);
  const won = evs.filter((e) => e.event === "tick.won");
  const lost = evs.filter((e) => e.event === "tick.lost");
  const errors = evs.filter((e) => e.event === "tick.error");
  const peak = Math.max(0, ...evs.map((e) => e.racing ?? 0));
  out(`  ${bold(label)} ${tickIso}  ${dim(`(${results.length} concurrent scheduled() calls; up to ${peak} in flight at once in the isolate)`)}`);
  for (const w of won) {
    out(`    ${green("winner")}  ${w.invocation}  claim won: ${fmtCounts(w.requests)}`);
    out(`             ran the tick's work: ${describeJob(w.job)}`);
    out(`             ${dim(`job requests: ${fmtCounts(w.job?.requests)}`)}`);
    claimCosts.won.push(w.requests?.total);
    if (w.job) jobRuns.push({ tick: tickIso, ...w.job });
  }
  for (const l of lost) {
    out(`    ${yellow("lost")}    ${l.invocation}  converged on ${l.winner}: ${fmtCounts(l.requests)}`);
    claimCosts.lost.push(l.requests?.total);
  }
  for (const e of errors) out(`    ${red("error")}   ${e.invocation}  ${e.error}`);

  const winner = won[0];
  check(results.every((r) => r.outcome === "ok"), `${tickIso}: every scheduled() call finished with outcome "ok" (got ${[...new Set(results.map((r) => r.outcome))].join(", ")})`);
  check(won.length === 1, `${tickIso}: exactly one winner (got ${won.length})`);
  check(peak > 1, `${tickIso}: the invocations overlapped (up to ${peak} at once)`);
  check(lost.length === results.length - 1, `${tickIso}: ${results.length - 1} losers (got ${lost.length})`);
  check(errors.length === 0, `${tickIso}: no invocation failed`);
  if (winner) {
    check(lost.every((l) => l.winner === winner.invocation), `${tickIso}: every loser converged on the winner's value`);
    const ids = new Set(evs.map((e) => e.invocation));
    check(ids.size === evs.length, `${tickIso}: invocation ids are distinct`);
    // Cross-check with the bucket itself: the claim object holds the winner's value.
    const bucket = await mf.getR2Bucket("BUCKET");
    const obj = await bucket.get(`cron/${winner.cron}/${tickIso}`);
    const stored = obj ? JSON.parse(await obj.text()) : null;
    check(stored?.invocation === winner.invocation, `${tickIso}: the claim object in R2 names the winner (${stored?.invocation})`);
  }
  return winner;
}

async function main() {
  out(bold("fencepost demo — the example Worker on local workerd, R2 simulated in memory"));
  const { worker, config, cron, vars, entry } = await start();
  out(
    dim(
      `  worker "${config.name}" (${path.relative(ROOT, entry)}), compatibility date ${config.compatibility_date}, cron "${cron}"; ` +
        `job: ${vars.JOB_STEPS} steps, ≤ ${vars.STEPS_PER_TICK} per tick, ${vars.STEP_MS} ms each, lease ttl ${vars.JOB_TTL} s`,
    ),
  );
  out(dim(`  started in ${((Date.now() - started) / 1000).toFixed(1)} s`));

  // ------------------------------------------------------------------ part 1 (+ part 2's job)
  out();
  out(bold(`1. Cron dispatch, one winner per tick: ${RACERS} invocations race for each tick`));
  out(dim(`   each one claims cron/${cron}/<tick>; the winner advances today's job, the others return`));
  const day1 = ["2026-05-01T09:00:00.000Z", "2026-05-01T09:05:00.000Z", "2026-05-01T09:10:00.000Z"];
  for (const [i, tickIso] of day1.entries()) {
    const results = await raceTick(worker, cron, tickIso);
    await reportTick(`tick ${i + 1}`, tickIso, results);
  }

  // ------------------------------------------------------------------------------- part 2
  out();
  out(bold("2. The job, owned through a lease: one owner per tick, a new epoch each time"));
  const job1 = await api("GET", "/jobs/rollup-2026-05-01");
  out(`  GET /jobs/rollup-2026-05-01 → ${job1.status}: epoch ${job1.body.epoch}, held ${job1.body.held}, status "${job1.body.state?.status}", step ${job1.body.state?.step}/${job1.body.state?.total}`);
  for (const r of job1.body.state?.runs ?? []) {
    out(`    epoch ${r.epoch}: invocation ${r.by} ran ${r.from === r.to ? `step ${r.from}` : `steps ${r.from}–${r.to}`}`);
  }
  const day1Runs = jobRuns.filter((j) => j.id === "rollup-2026-05-01");
  check(day1Runs.map((j) => j.epoch).join() === "1,2,3", `job rollup-2026-05-01 was owned with epochs 1, 2, 3 (got ${day1Runs.map((j) => j.epoch).join(", ")})`);
  check(job1.body.state?.status === "done" && job1.body.state.step === job1.body.state.total, `the job is done with every step run`);
  const covered = (job1.body.state?.runs ?? []).flatMap((r) => Array.from({ length: r.to - r.from + 1 }, (_, k) => r.from + k));
  check(covered.join() === Array.from({ length: Number(vars.JOB_STEPS) }, (_, k) => k + 1).join(), `the runs' checkpoints cover every step once, in order, across the epochs (${covered.join(",")})`);
  check(job1.body.held === false, "the finished job's lease is released");

  // ------------------------------------------------------------------------------- part 3
  out();
  out(bold("3. Cooperative cancel of a running job"));
  const day2 = ["2026-05-02T09:00:00.000Z", "2026-05-02T09:05:00.000Z"];
  const jobId = "rollup-2026-05-02";
  out(dim(`   tick 4 starts ${jobId}; once it has checkpointed a step, POST /jobs/${jobId}/cancel`));
  const tick4 = raceTick(worker, cron, day2[0]);
  let seen = null;
  for (let i = 0; i < 500; i++) {
    const r = await api("GET", `/jobs/${jobId}`);
    if (r.status === 200 && r.body.state?.step >= 1) {
      seen = r.body;
      break;
    }
    await sleep(10);
  }
  if (check(seen, `the job was seen running (step ≥ 1) before the cancel`)) {
    out(`  GET /jobs/${jobId} → epoch ${seen.epoch}, held ${seen.held}, step ${seen.state.step}/${seen.state.total}`);
  }
  const cancel = await api("POST", `/jobs/${jobId}/cancel`);
  out(`  POST /jobs/${jobId}/cancel → ${cancel.status}: state.cancel = ${cancel.body.state?.cancel}; cooperativeWrite cost ${fmtCounts(cancel.body.requests)}`);
  check(cancel.status === 202 && cancel.body.state?.cancel === true, "the cancel was accepted (202, state.cancel = true)");
  const w4 = await reportTick("tick 4", day2[0], await tick4);
  check(w4?.job?.outcome === "cancelled", `the running job stopped with outcome "cancelled" (got ${w4?.job?.outcome})`);
  check(w4?.job && w4.job.step < w4.job.total, "it stopped before its last step");
  const job2 = await api("GET", `/jobs/${jobId}`);
  out(`  GET /jobs/${jobId} → epoch ${job2.body.epoch}, held ${job2.body.held}, status "${job2.body.state?.status}", step ${job2.body.state?.step}/${job2.body.state?.total}, cancel ${job2.body.state?.cancel}`);
  check(job2.body.state?.status === "cancelled" && job2.body.held === false, "the lease was released with final status \"cancelled\"");

  out(dim(`   tick 5, same day: the winner's stateFn refuses the cancelled job`));
  const w5 = await reportTick("tick 5", day2[1], await raceTick(worker, cron, day2[1]));
  check(w5?.job?.outcome === "refused", `tick 5 refused the finished job (got ${w5?.job?.outcome})`);
  const again = await api("POST", `/jobs/${jobId}/cancel`);
  out(`  POST /jobs/${jobId}/cancel again → ${again.status}: ${again.body.error}`);
  check(again.status === 409, "cancelling a finished job is refused with 409");

  // ------------------------------------------------------------------------------- part 4
  out();
  out(bold("4. What it cost: R2 requests (each one a Workers subrequest)"));
  const ticks = await api("GET", "/ticks");
  out(`  GET /ticks → ${ticks.body.ticks?.length} ticks ran: ${ticks.body.ticks?.map((t) => `${t.tick.slice(5, 16)} by ${t.winner?.invocation}`).join(", ")}`);
  check(ticks.body.ticks?.length === day1.length + day2.length, "GET /ticks lists every tick once");
  const uniq = (xs) => [...new Set(xs)].join("/");
  out(`  claim won  × ${claimCosts.won.length}: ${uniq(claimCosts.won)} request each   ${dim("(floor: 1 — put-if-absent)")}`);
  out(`  claim lost × ${claimCosts.lost.length}: ${uniq(claimCosts.lost)} requests each  ${dim("(floor: 2 — failed put-if-absent + read of the winner)")}`);
  check(claimCosts.won.every((n) => n === 1), "every won claim cost 1 request");
  check(claimCosts.lost.every((n) => n === 2), "every lost claim cost 2 requests");
  out(`  job runs: lease acquire 2 + per step (renew 1 + checkpoint 1) + release 1, and +2 when a write`);
  out(`  finds a cooperative write (its guard fails: re-read, absorb, write again):`);
  for (const j of jobRuns) {
    const steps = Math.max(0, j.to - j.from + 1);
    let expected;
    let note;
    if (j.outcome === "refused") {
      expected = 1;
      note = "floor 1: lease read, stateFn threw, nothing written";
    } else {
      const floor = 2 + 2 * steps + 1;
      expected = j.outcome === "cancelled" ? floor + 2 : floor;
      note = `${steps} step${steps === 1 ? "" : "s"}: floor ${floor}` + (j.outcome === "cancelled" ? " + 2 for absorbing the cancel" : "");
    }
    out(`    ${j.tick.slice(0, 16)} ${j.id} epoch ${j.epoch ?? "-"} ${j.outcome.padEnd(9)} ${fmtCounts(j.requests).padEnd(28)} ${dim(note)}`);
    check(j.requests?.total === expected, `${j.tick} job run cost ${expected} requests (got ${j.requests?.total})`);
  }
  out(`  cooperativeWrite (the cancel): ${fmtCounts(cancel.body.requests)}   ${dim("(floor: 2)")}`);
  check(cancel.body.requests?.total === 2, "the cooperative write cost 2 requests");

  out();
  const failed = checks.filter((c) => !c.ok);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (failed.length === 0) {
    out(green(bold(`All ${checks.length} checks passed`)) + ` in ${secs} s: each of ${day1.length + day2.length} ticks had one winner out of ${RACERS} racing invocations.`);
  } else {
    out(red(bold(`${failed.length} of ${checks.length} checks FAILED:`)));
    for (const f of failed) out(`  - ${f.what}`);
    if (otherLogs.length) {
      out(dim("worker output that was not a JSON event:"));
      for (const l of otherLogs.slice(-30)) out(dim(`  ${l}`));
    }
  }
  out(`${checks.length - failed.length} passed, ${failed.length} failed`);
  return failed.length === 0;
}

let ok = false;
try {
  ok = await main();
} catch (err) {
  console.error(red(`demo crashed: ${err?.stack ?? err}`));
  if (otherLogs.length) for (const l of otherLogs.slice(-30)) console.error(dim(`  ${l}`));
} finally {
  await cleanup();
}
process.exit(ok ? 0 : 1);
