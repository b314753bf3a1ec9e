// Runs every runnable example of the patterns guide (examples/patterns/*.mjs) against the installed
// package: documentation that cannot rot. Each example exits non-zero when its invariant fails.
// Then the tests of the "Testing your code" guide (examples/testing/, docs/testing.md), each
// under the runner it is written for: node --test, deno test, vitest in workerd; one count per test.
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

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

const sum = (text, re) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
const guide = [
  {
    runner: "node --test",
    cmd: process.execPath,
    args: ["--test", "--test-reporter=tap", "examples/testing/cron-job.node.test.mjs"],
    count: (out) => [sum(out, /^# pass (\d+)/gm), sum(out, /^# fail (\d+)/gm)],
  },
  {
    runner: "deno test",
    cmd: `${root}node_modules/.bin/deno`,
    args: ["test", "--allow-read", "examples/testing/cron-job.deno.test.mjs"],
    count: (out) => [sum(out, /^(?:ok|FAILED) \| (\d+) passed/gm), sum(out, /^(?:ok|FAILED) \| \d+ passed(?: \(\d+ steps?\))? \| (\d+) failed/gm)],
  },
  {
    runner: "vitest in workerd",
    file: "examples/testing/cron-job.worker.test.mjs",
    cmd: `${root}node_modules/.bin/vitest`,
    args: ["run", "--config", "examples/testing/vitest.config.mjs"],
    count: (out) => [sum(out, /^ *Tests .*?(\d+) passed/gm), sum(out, /^ *Tests .*?(\d+) failed/gm)],
  },
];
const env = {
  ...process.env, NO_COLOR: "1", FORCE_COLOR: "0",
  WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false",
};
for (const { runner, file, cmd, args, count } of guide) {
  const r = spawnSync(cmd, args, { cwd: root, env, encoding: "utf8", timeout: 180_000 });
  const out = `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
  let [p, f] = count(out);
  if (r.status !== 0 && f === 0) f = 1; // a crash, a timeout or no summary: a failure
  passed += p;
  failed += f;
  const what = `${file ?? args.at(-1)} (${runner}): ${p} passed, ${f} failed`;
  console.log(f === 0 ? `ok - ${what}` : `not ok - ${what} (exit ${r.status ?? r.signal})\n${out}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
