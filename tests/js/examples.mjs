// Runs every runnable example of the patterns guide (js/examples/*.mjs) against the installed
// package: documentation that cannot rot. Each example exits non-zero when its invariant fails.
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";

const dir = new URL("../../js/examples/", import.meta.url);
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
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
