// The README's snippets cannot drift from the API: every fenced code block of README.md is compiled
// or run here, and every relative link of README.md, CHANGELOG.md and docs/*.md resolves to a file
// (and, with a `#fragment`, to a heading of it).
//
// - `toml` + the Worker `ts` blocks (those with a `scheduled` handler): a scratch Worker project as a
//   newcomer builds it from the README (its wrangler.toml, `wrangler types` for `Env`), type-checked
//   against the installed package's index.d.ts; then each runs under `wrangler dev --test-scheduled`
//   on local R2 and is triggered twice (the `once` job: run by the first tick, answered by the second).
// - `ts` / `js` blocks for Deno (`npm:fencepost`, `Deno.`): `deno check`.
// - every other `ts` / `js` block: `tsc` (strict, Node's and the DOM's types), against index.d.ts.
// - `rust` blocks: doctests of the crate (`src/lib.rs` includes README.md under `cfg(doctest)`), run
//   by `cargo test --doc` in the native stage; counted here.
// - `sh` blocks: parsed by `bash -n`.
//
//   node tests/js/readme.mjs          (after scripts/install-pkg.sh: it imports the installed package)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checklist } from "../../js/support/checklist.mjs";

const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const BIN = join(ROOT, "node_modules", ".bin");
const WORK = join(ROOT, ".run", "readme");

const { check, summary } = checklist();

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 180_000, env: { ...process.env, NO_COLOR: "1" }, ...opts });
  return r.status === 0 ? null : `${cmd} ${args.join(" ")} failed:\n${`${r.stdout ?? ""}${r.stderr ?? ""}${r.error?.message ?? ""}`.trim()}`;
}

// ---------------------------------------------------------------------------------------- links

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function anchorsOf(file) {
  const seen = new Map();
  const anchors = new Set();
  let fenced = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative links of a markdown file (outside code blocks and code spans) that lead nowhere. */
function brokenLinks(file) {
  const problems = [];
  let fenced = false;
  for (const [i, line] of readFileSync(file, "utf8").split("\n").entries()) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const [, target] of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path, fragment] = target.split("#");
      const dest = path ? resolve(dirname(file), decodeURI(path)) : file;
      const where = `${file.slice(ROOT.length + 1)}:${i + 1}: ${target}`;
      if (!existsSync(dest)) problems.push(`${where}: no such file`);
      else if (fragment && dest.endsWith(".md") && !anchorsOf(dest).has(fragment)) problems.push(`${where}: no such heading`);
    }
  }
  return problems;
}

const pages = ["README.md", "CHANGELOG.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
for (const page of pages) check(`${page}: every relative link resolves`, existsSync(join(ROOT, page)) ? brokenLinks(join(ROOT, page)) : "no such file");

// ---------------------------------------------------------------------------------------- blocks

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = [...readme.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)].map((m) => ({
  lang: m[1], code: m[2], line: readme.slice(0, m.index).split("\n").length,
}));
const isWorker = (b) => /^(ts|js)$/.test(b.lang) && /\bscheduled\s*\(/.test(b.code);
const isDeno = (b) => /^(ts|js)$/.test(b.lang) && /npm:fencepost|\bDeno\./.test(b.code);
const label = (b) => `README.md:${b.line} (${b.lang})`;
const known = new Set(["sh", "toml", "ts", "js", "rust"]);
check("every README block has a language this script compiles or runs",
  blocks.filter((b) => !known.has(b.lang)).map((b) => `${label(b)}: "${b.lang}" is neither compiled nor run`));

rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });

// sh: parsed.
for (const b of blocks.filter((b) => b.lang === "sh")) check(`${label(b)} parses (bash -n)`, run("bash", ["-n", "-c", b.code]));

// rust: doctests of the crate.
const rust = blocks.filter((b) => b.lang === "rust");
check(`${rust.length} rust block(s) are doctests (src/lib.rs includes README.md; cargo test --doc runs them)`,
  /#\[doc = include_str!\("\.\.\/README\.md"\)\]/.test(readFileSync(join(ROOT, "src", "lib.rs"), "utf8")) ? null : "src/lib.rs does not include README.md as doctests");

// Plain ts/js: one tsc program, each block a module of its own.
const plain = blocks.filter((b) => /^(ts|js)$/.test(b.lang) && !isWorker(b) && !isDeno(b));
{
  const dir = join(WORK, "plain");
  mkdirSync(dir, { recursive: true });
  const files = plain.map((b) => {
    const name = `line-${b.line}.${b.lang === "ts" ? "ts" : "mjs"}`;
    writeFileSync(join(dir, name), b.code);
    return name;
  });
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      strict: true, noImplicitAny: false, noEmit: true, allowJs: true, checkJs: true, skipLibCheck: true,
      target: "es2022", module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"],
      types: ["node"], typeRoots: [join(ROOT, "node_modules", "@types")],
    },
    files,
  }));
  check(`${plain.length} ts/js block(s) type-check against index.d.ts (${plain.map((b) => b.line).join(", ")})`, run(join(BIN, "tsc"), ["-p", dir]));
}

// Deno blocks: deno check (npm:fencepost resolves to the installed package).
const deno = blocks.filter(isDeno);
{
  const dir = join(WORK, "deno");
  mkdirSync(dir, { recursive: true });
  const files = deno.map((b) => {
    const file = join(dir, `line-${b.line}.ts`);
    writeFileSync(file, b.code);
    return file;
  });
  check(`${deno.length} Deno block(s) pass deno check (${deno.map((b) => b.line).join(", ")})`,
    files.length ? run(join(BIN, "deno"), ["check", "--unstable-cron", ...files], { cwd: ROOT }) : "no Deno block");
}

// The Worker: the README's wrangler.toml, `wrangler types`, each Worker block type-checked and run.
const toml = blocks.filter((b) => b.lang === "toml");
const workers = blocks.filter(isWorker);
check("the README has one wrangler.toml and at least one Worker", toml.length === 1 && workers.length > 0 ? null : `${toml.length} toml, ${workers.length} Worker blocks`);

/** A free port on 127.0.0.1. */
function freePort() {
  return new Promise((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** `wrangler dev --test-scheduled` on `dir`, triggered `times` times: the log. */
async function triggerScheduled(dir, times) {
  const port = await freePort();
  const child = spawn(join(BIN, "wrangler"), ["dev", "--test-scheduled", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", join(dir, ".state")], {
    cwd: dir, env: { ...process.env, NO_COLOR: "1", WRANGLER_SEND_METRICS: "false", CI: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true,
  });
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (log += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (log += d));
  try {
    const deadline = Date.now() + 90_000;
    while (!/Ready on/.test(log)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`wrangler dev did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const cron = encodeURIComponent("*/5 * * * *");
    for (let i = 0; i < times; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/__scheduled?cron=${cron}`);
      if (!res.ok) throw new Error(`/__scheduled answered ${res.status}:\n${log}`);
      await new Promise((r) => setTimeout(r, 300)); // the handler's console lines reach the log
    }
    return log;
  } finally {
    try { process.kill(-child.pid, "SIGTERM"); } catch { /* already gone */ }
  }
}

if (toml.length === 1) {
  const dir = join(WORK, "worker");
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "wrangler.toml"), toml[0].code);
  writeFileSync(join(dir, "src", "index.ts"), "export default {};\n");
  const typed = run(join(BIN, "wrangler"), ["types"], { cwd: dir, env: { ...process.env, NO_COLOR: "1", WRANGLER_SEND_METRICS: "false", CI: "1" } });
  check("the README's wrangler.toml: `wrangler types` writes Env", typed ?? (/BUCKET: R2Bucket/.test(readFileSync(join(dir, "worker-configuration.d.ts"), "utf8")) ? null : "no BUCKET: R2Bucket in Env"));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, skipLibCheck: true, target: "es2022", module: "es2022", moduleResolution: "bundler",
      lib: ["es2022"], types: [], typeRoots: [],
    },
    files: ["worker-configuration.d.ts", "src/index.ts"],
  }));
  for (const b of workers) {
    writeFileSync(join(dir, "src", "index.ts"), b.code);
    check(`${label(b)}: the Worker type-checks with wrangler's Env and runtime types`, run(join(BIN, "tsc"), ["-p", dir]));
    let problem = null;
    try {
      const log = await triggerScheduled(dir, 2);
      if (/\bonce\(/.test(b.code)) {
        const lines = log.split("\n").filter((l) => /^report \d{4}-\d\d-\d\d:/.test(l.trim()));
        if (lines.length !== 2 || !/\(this tick\)/.test(lines[0]) || /\(this tick\)/.test(lines[1])) {
          problem = `expected the first tick to run the report and the second to get its record:\n${log}`;
        }
      } else if (/\[wrangler:error\]|Uncaught/.test(log.replace(/Handler does not export a fetch\(\) function\./g, ""))) {
        problem = `an error in the log:\n${log}`;
      }
    } catch (e) {
      problem = String(e?.stack ?? e);
    }
    check(`${label(b)}: runs under wrangler dev --test-scheduled, triggered twice`, problem);
  }
}

summary();
