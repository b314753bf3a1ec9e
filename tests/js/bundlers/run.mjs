#!/usr/bin/env node
// The bundler matrix: builds the page in app/ (a claim, a lease and its release, on the installed
// package node_modules/fencepost) with each bundler and the least configuration a user needs to
// ship the `.wasm`, serves each output on 127.0.0.1 (an ephemeral port), opens it in headless
// Chromium and checks the page's result. Vite is also checked in dev mode (its dependency
// pre-bundling moves the package's files).
//
//   node tests/js/bundlers/run.mjs [name…]   e.g. `vite8 webpack`; default: all of them
//
// Prints one line per setup (build time, JS and wasm sizes) and "N passed, M failed".
// Outputs go to .run/bundlers/<name>/.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { CHROMIUM, FLAGS } from "../browser/run.mjs";
import { startServer, stopServer } from "../../../scripts/static-server.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const ROOT = resolve(HERE, "../../..");
const OUT = join(ROOT, ".run", "bundlers");
const APP = join(HERE, "app");
const versionOf = (name) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
process.chdir(HERE); // the configs use paths relative to this folder, as a project's would

// ------------------------------------------------------------------ builds
// Each returns { dir, warnings } once the output is in `dir` (and a page at dir/index.html).

/** Vite: no configuration. The rest is test plumbing: where the output and the cache go. */
async function viteBuild(pkg, dir) {
  const vite = await import(pkg);
  const warnings = [];
  await vite.build({
    root: APP,
    configFile: false,
    cacheDir: join(OUT, `${pkg}-cache`),
    logLevel: "silent",
    customLogger: quietLogger(vite, warnings),
    build: { outDir: dir, emptyOutDir: true },
  });
  return { warnings };
}

function quietLogger(vite, warnings) {
  const logger = vite.createLogger("warn", { allowClearScreen: false });
  return { ...logger, warn: (m) => warnings.push(m), warnOnce: (m) => warnings.push(m), info() {} };
}

async function rollupBuild(dir) {
  const { rollup } = await import("rollup");
  const config = (await import("./rollup.config.mjs")).default;
  const warnings = [];
  const bundle = await rollup({ ...config, onwarn: (w) => warnings.push(w.message) });
  await bundle.write({ ...config.output, dir });
  await bundle.close();
  writePage(dir, "module");
  return { warnings };
}

async function webpackBuild(dir) {
  const { default: webpack } = await import("webpack");
  const config = (await import("./webpack.config.mjs")).default;
  const compiler = webpack({ ...config, output: { ...config.output, path: dir, clean: true } });
  const stats = await new Promise((ok, fail) => compiler.run((e, s) => (e ? fail(e) : ok(s))));
  await new Promise((ok) => compiler.close(ok));
  const info = stats.toJson({ all: false, errors: true, warnings: true });
  if (stats.hasErrors()) throw new Error(info.errors.map((e) => e.message).join("\n"));
  writePage(dir, "classic");
  return { warnings: info.warnings.map((w) => w.message.replace(/\s+/g, " ").slice(0, 200)) };
}

async function esbuildBuild(variant, dir) {
  const esbuild = await import("esbuild");
  const setup = (await import("./esbuild.config.mjs"))[variant];
  const result = await esbuild.build({ ...setup.options, outdir: dir, logLevel: "silent" });
  setup.after?.(dir);
  writePage(dir, "module");
  return { warnings: result.warnings.map((w) => w.text) };
}

/** The page for bundlers that do not write one: app/index.html, loading the bundle. */
function writePage(dir, kind) {
  const html = readFileSync(join(APP, "index.html"), "utf8").replace(
    '<script type="module" src="./main.js"></script>',
    kind === "module" ? '<script type="module" src="./main.js"></script>' : '<script defer src="./main.js"></script>',
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.html"), html);
}

// ------------------------------------------------------------------ the matrix
const matrix = [
  { name: "vite6", label: () => `Vite ${versionOf("vite6")}`, build: (dir) => viteBuild("vite6", dir) },
  { name: "vite8", label: () => `Vite ${versionOf("vite8")}`, build: (dir) => viteBuild("vite8", dir) },
  { name: "vite6-dev", label: () => `Vite ${versionOf("vite6")} dev server (vite.config.mjs)`, dev: "vite6", configFile: "vite.config.mjs" },
  { name: "vite8-dev", label: () => `Vite ${versionOf("vite8")} dev server`, dev: "vite8" },
  { name: "esbuild", label: () => `esbuild ${versionOf("esbuild")} (wasm copied)`, build: (dir) => esbuildBuild("copy", dir) },
  { name: "esbuild-initwasm", label: () => `esbuild ${versionOf("esbuild")} (file loader + initWasm)`, build: (dir) => esbuildBuild("initWasm", dir) },
  { name: "rollup", label: () => `Rollup ${versionOf("rollup")} + node-resolve ${versionOf("@rollup/plugin-node-resolve")} (not minified)`, build: rollupBuild },
  { name: "webpack", label: () => `webpack ${versionOf("webpack")}`, build: webpackBuild },
];

// ------------------------------------------------------------------ serving
const serve = (dir) => startServer({ root: dir });
const close = stopServer;

// ------------------------------------------------------------------ checking a page
async function check(context, origin) {
  const page = await context.newPage();
  const problems = [];
  const wasm = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on("response", (r) => { if (new URL(r.url()).pathname.endsWith(".wasm")) wasm.push(`${new URL(r.url()).pathname} ${r.status()} ${r.headers()["content-type"] ?? ""}`); });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  try {
    await page.goto(origin + "/", { waitUntil: "load", timeout: 30_000 });
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000, polling: 100 });
    const result = await page.evaluate(() => window.__result);
    const shown = await page.textContent("#result");
    if (!result.ok) problems.push(`page result: ${JSON.stringify(result)}`);
    if (JSON.stringify(JSON.parse(shown)) !== JSON.stringify(result)) problems.push("the DOM does not show the result");
    if (wasm.length === 0) problems.push("no .wasm was fetched");
    return { result, wasm, problems };
  } catch (e) {
    problems.push(e.message.split("\n")[0]);
    return { result: null, wasm, problems };
  } finally {
    await page.close();
  }
}

// ------------------------------------------------------------------ figures
function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath ?? d.path, d.name));
}

function sizes(dir) {
  const all = files(dir);
  const js = all.filter((f) => f.endsWith(".js"));
  const wasm = all.filter((f) => f.endsWith(".wasm"));
  const bytes = (list) => list.reduce((n, f) => n + statSync(f).size, 0);
  const gz = (list) => list.reduce((n, f) => n + gzipSync(readFileSync(f), { level: 9 }).length, 0);
  return { js: bytes(js), jsGz: gz(js), wasm: bytes(wasm), wasmGz: gz(wasm), wasmFiles: wasm.map((f) => relative(dir, f)) };
}

const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
const secs = (ms) => `${(ms / 1000).toFixed(ms < 1000 ? 2 : 1)} s`;

// ------------------------------------------------------------------ run
async function main() {
  const started = Date.now();
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !matrix.some((m) => m.name === w));
  if (unknown.length) {
    console.error(`unknown setup(s): ${unknown.join(", ")}; known: ${matrix.map((m) => m.name).join(", ")}`);
    return 2;
  }
  const setups = matrix.filter((m) => wanted.length === 0 || wanted.includes(m.name));
  mkdirSync(OUT, { recursive: true });

  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(join(tmpdir(), "fencepost-bundlers-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 60_000 });
  console.log(`# chromium ${context.browser()?.version() ?? "?"}, node ${process.version}, package ${versionOf("fencepost")}`);

  let passed = 0;
  let failed = 0;
  try {
    for (const setup of setups) {
      const label = setup.label();
      const dir = join(OUT, setup.name);
      let line;
      const notes = [];
      let server;
      let vite;
      try {
        const t0 = Date.now();
        let origin;
        let notFound = [];
        let figures = "";
        if (setup.dev) {
          const mod = await import(setup.dev);
          const warnings = [];
          vite = await mod.createServer({
            root: APP, configFile: setup.configFile ? join(HERE, setup.configFile) : false, cacheDir: join(OUT, `${setup.dev}-dev-cache`), logLevel: "silent",
            customLogger: quietLogger(mod, warnings), clearScreen: false,
            server: { host: "127.0.0.1", port: 0, strictPort: true, hmr: false },
            optimizeDeps: { force: true },
          });
          await vite.listen();
          const address = vite.httpServer.address();
          origin = `http://127.0.0.1:${address.port}`;
          figures = `dev server up in ${secs(Date.now() - t0)} (it pre-bundles on the first request)`;
          notes.push(...warnings);
        } else {
          rmSync(dir, { recursive: true, force: true });
          const { warnings } = await setup.build(dir);
          const ms = Date.now() - t0;
          const s = sizes(dir);
          figures = `build ${secs(ms)}, js ${kB(s.js)} (${kB(s.jsGz)} gz), wasm ${kB(s.wasm)} (${kB(s.wasmGz)} gz) as ${s.wasmFiles.join(", ")}`;
          notes.push(...warnings.map((w) => `build warning: ${w}`));
          ({ server, notFound } = await serve(dir));
          origin = `http://127.0.0.1:${server.address().port}`;
        }
        const t1 = Date.now();
        const { result, wasm, problems } = await check(context, origin);
        const missing = notFound;
        if (missing.length) problems.push(`404: ${missing.join(", ")}`);
        const ok = problems.length === 0;
        ok ? passed++ : failed++;
        line = `${ok ? "ok" : "not ok"} - ${label}: ${figures}; page ${secs(Date.now() - t1)}, loaded ${wasm.join(", ") || "no wasm"}`;
        if (!ok) notes.push(...problems, `result: ${JSON.stringify(result)}`);
      } catch (e) {
        failed++;
        line = `not ok - ${label}: ${e?.message?.split("\n").slice(0, 6).join("\n    ") ?? e}`;
      } finally {
        if (server) await close(server);
        if (vite) await vite.close();
      }
      console.log(line);
      for (const n of notes) console.log(`    ${n.split("\n")[0]}`);
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(`# total ${secs(Date.now() - started)}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
