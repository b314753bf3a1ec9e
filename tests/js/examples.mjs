// Runs every runnable example of the patterns guide (examples/patterns/*.mjs) and the Deno Deploy
// cron example (examples/deno-deploy/) against the installed package: documentation that cannot rot. Each example exits non-zero when its invariant
// fails. Then the tests of the "Testing your code" guide (examples/testing/, docs/testing.md), each
// under the runner it is written for: node --test, deno test, vitest in workerd; one count per
// test, read from the runner's JUnit report.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { junitFileCounts } from "../../js/support/junit.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = new URL("../../examples/patterns/", import.meta.url);
let passed = 0;
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".mjs")).sort()) {
  const r = spawnSync(process.execPath, [new URL(file, dir).pathname], { encoding: "utf8", timeout: 60_000 });
  if (r.status === 0) {
    passed++;
    console.log(`ok - ${file}`);
  } else {
    failed++;
    console.log(`not ok - ${file} (exit ${r.status})\n${r.stdout}${r.stderr}`);
  }
}

// Deno Deploy's Deno.cron, deduplicated by a claim: registered, then one tick fired twice at once.
{
  const deno = `${root}node_modules/.bin/deno`;
  const args = ["run", "--unstable-cron", "--allow-read", "--allow-env", "--allow-net=127.0.0.1", "examples/deno-deploy/cron.mjs"];
  const r = spawnSync(deno, args, { cwd: root, encoding: "utf8", timeout: 60_000, env: { ...process.env, NO_COLOR: "1" } });
  if (r.status === 0) {
    passed++;
    console.log("ok - examples/deno-deploy/cron.mjs (deno run --unstable-cron)");
  } else {
    failed++;
    console.log(`not ok - examples/deno-deploy/cron.mjs (exit ${r.status})\n${r.stdout}${r.stderr}`);
  }
}

const guide = [
  {
    runner: "node --test",
    file: "examples/testing/cron-job.node.test.mjs",
    cmd: process.execPath,
    args: (report) => ["--test", "--test-reporter=tap", "--test-reporter-destination=stdout",
      "--test-reporter=junit", `--test-reporter-destination=${report}`, "examples/testing/cron-job.node.test.mjs"],
  },
  {
    runner: "deno test",
    file: "examples/testing/cron-job.deno.test.mjs",
    cmd: `${root}node_modules/.bin/deno`,
    args: (report) => ["test", "--allow-read", `--junit-path=${report}`, "examples/testing/cron-job.deno.test.mjs"],
  },
  {
    runner: "vitest in workerd",
    file: "examples/testing/cron-job.worker.test.mjs",
    cmd: `${root}node_modules/.bin/vitest`,
    args: (report) => ["run", "--config", "examples/testing/vitest.config.mjs", "--reporter=default", "--reporter=junit", `--outputFile.junit=${report}`],
  },
];
const env = {
  ...process.env, NO_COLOR: "1", FORCE_COLOR: "0",
  WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false",
};
const reports = mkdtempSync(join(tmpdir(), "fencepost-examples-"));
for (const [i, { runner, file, cmd, args }] of guide.entries()) {
  const report = join(reports, `${i}.xml`);
  const r = spawnSync(cmd, args(report), { cwd: root, env, encoding: "utf8", timeout: 180_000 });
  const out = `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
  let { passed: p, failed: f } = junitFileCounts(report);
  if (r.status !== 0 && f === 0) f = 1; // a crash, a timeout or no report: a failure
  passed += p;
  failed += f;
  const what = `${file} (${runner}): ${p} passed, ${f} failed`;
  console.log(f === 0 ? `ok - ${what}` : `not ok - ${what} (exit ${r.status ?? r.signal})\n${out}`);
}
rmSync(reports, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
