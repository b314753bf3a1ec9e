#!/usr/bin/env node
// The package as users get it, whatever packs it: packs pkg/ with npm, pnpm and yarn and checks each
// tarball holds the README, both licenses, the types and the wasm, the command line (`bin`) and
// every module a shipped module imports; runs publint (strict) and
// @arethetypeswrong/cli (esm-only: the package is ESM, with no CommonJS entry) on the npm tarball;
// checks pkg/'s licenses are the root ones, committed (not copied in at pack time), and that the
// npm README is generated from README.md and links only to its own headings and the repository;
// bundles the installed package for Node with esbuild (ES module and CommonJS) and runs it. Run
// after scripts/build-pkg.sh. Prints ok / not ok per check, then "N passed, M failed".
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { npmReadmeFile, repositoryUrl } from "../../scripts/readme-for-npm.mjs";
import { checklist } from "../../js/support/checklist.mjs";

const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const PKG = join(ROOT, "pkg");
const BIN = join(ROOT, "node_modules", ".bin");
// The entries are bundles in dist/ (scripts/bundle-pkg.mjs), the wasm beside them.
const REQUIRED = ["package.json", "README.md", "LICENSE-MIT", "LICENSE-APACHE", "index.d.ts", "errors.d.ts", "wasm.d.ts", "testing.d.ts",
  "dist/fencepost_bg.wasm", ...["node", "deno", "workerd", "browser", "edge-light"].flatMap((e) => [`dist/${e}.js`, `dist/testing/${e}.js`]), "dist/cli.js"];
const COMMITTED = ["pkg/README.md", "pkg/LICENSE-MIT", "pkg/LICENSE-APACHE"];

const { check, summary } = checklist();

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 120_000, ...opts });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}`.trim() };
}

const tmp = mkdtempSync(join(tmpdir(), "fencepost-pack-"));
try {
  // ---------------------------------------------------------------- the files themselves
  check("pkg/LICENSE-MIT and pkg/LICENSE-APACHE are the repository's licenses", ["LICENSE-MIT", "LICENSE-APACHE"].map((f) =>
    !existsSync(join(PKG, f)) ? `pkg/${f} is missing`
      : !readFileSync(join(PKG, f)).equals(readFileSync(join(ROOT, f))) ? `pkg/${f} differs from ${f}` : null));

  if (existsSync(join(ROOT, ".git"))) {
    const tracked = execFileSync("git", ["ls-files", "--", ...COMMITTED], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);
    check("pkg/README.md and the licenses are committed files (any packer finds them)",
      COMMITTED.filter((f) => !tracked.includes(f)).map((f) => `${f} is not tracked by git`));
  }

  check("pkg/README.md is README.md made for npm (scripts/readme-for-npm.mjs), not edited by hand",
    readFileSync(join(PKG, "README.md"), "utf8") === npmReadmeFile() ? null : "pkg/README.md is stale: run node scripts/readme-for-npm.mjs");
  check("pkg/README.md links only to its own headings and to the repository's web pages", readmeLinkProblems(readFileSync(join(PKG, "README.md"), "utf8")));

  // ---------------------------------------------------------------- packing
  const packers = {
    npm: { cmd: "npm", args: (dest) => ["pack", "--silent", "--pack-destination", dest] },
    pnpm: { cmd: join(BIN, "pnpm"), args: (dest) => ["pack", "--pack-destination", dest] },
    yarn: { cmd: join(BIN, "yarn"), args: (dest) => ["pack", "--silent", "--filename", join(dest, "fencepost.tgz")] },
  };
  const tarballs = {};
  for (const [name, { cmd, args }] of Object.entries(packers)) {
    const dest = join(tmp, name);
    mkdirSync(dest);
    const r = run(cmd, args(dest).map(String), { cwd: PKG, env: { ...process.env, npm_config_loglevel: "error" } });
    const file = existsSync(dest) ? readdirSync(dest).find((f) => f.endsWith(".tgz")) : undefined;
    if (!r.ok || !file) {
      check(`${name} pack`, `exit ${r.ok ? 0 : "non-zero"}, no tarball: ${r.out}`);
      continue;
    }
    const tarball = join(dest, file);
    tarballs[name] = tarball;
    const entries = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean).map((e) => e.replace(/^package\//, ""));
    const readme = execFileSync("tar", ["-xzOf", tarball, "package/README.md"]);
    check(`${name} pack: the tarball has ${REQUIRED.join(", ")}`, [
      ...REQUIRED.filter((f) => !entries.includes(f)).map((f) => `missing ${f}`),
      readme.equals(readFileSync(join(PKG, "README.md"))) ? null : "its README.md is not pkg/README.md",
    ]);
    check(`${name} pack: the bin (${binList()}) and every module a shipped module imports are in the tarball`,
      shippedProblems(tarball, entries, join(tmp, `${name}-files`)));
  }

  // ---------------------------------------------------------------- linters, on what npm publishes
  if (tarballs.npm) {
    const lint = run(join(BIN, "publint"), ["run", "--strict", tarballs.npm]);
    check("publint --strict", lint.ok && /All good!/.test(lint.out) ? null : lint.out);
    const attw = run(join(BIN, "attw"), ["--profile", "esm-only", "--no-emoji", "--no-color", "--format", "table", tarballs.npm]);
    check("attw --profile esm-only (every entry point resolves to its types under node16 ESM and bundler)", attw.ok ? null : attw.out);
  }
  // ---------------------------------------------------------------- bundled for Node (Lambda, bun build, Vite SSR)
  // The installed package bundled by esbuild into one file, ES module and CommonJS: it runs with
  // the `.wasm` copied next to the bundle, and without it fails at import with a FencepostError
  // that says what to do (docs/runtimes.md, "Bundling for Node").
  const esbuild = await import("esbuild");
  const app = join(tmp, "node-app");
  mkdirSync(app);
  writeFileSync(join(app, "main.js"), 'import { Fencepost, memoryStore } from "fencepost";\n' +
    'console.log((await new Fencepost(memoryStore()).claim("k", 1)).won);\n');
  for (const format of ["esm", "cjs"]) {
    const dir = join(app, format);
    const file = join(dir, format === "esm" ? "main.mjs" : "main.cjs");
    const source = format === "esm" ? "main.js" : "main-cjs.js";
    if (format === "cjs") {
      // CommonJS has no top-level await: the same program in a then.
      writeFileSync(join(app, source), 'const { Fencepost, memoryStore } = require("fencepost");\n' +
        'new Fencepost(memoryStore()).claim("k", 1).then((r) => console.log(r.won));\n');
    }
    await esbuild.build({ entryPoints: [join(app, source)], bundle: true, platform: "node", format, outfile: file,
      nodePaths: [join(ROOT, "node_modules")], logLevel: "silent" });
    const without = run(process.execPath, [file]);
    copyFileSync(join(ROOT, "node_modules", "fencepost", "dist", "fencepost_bg.wasm"), join(dir, "fencepost_bg.wasm"));
    const copied = run(process.execPath, [file]);
    check(`bundled for Node by esbuild (${format}): runs with the .wasm next to the bundle; without it, a clear FencepostError`, [
      copied.ok && copied.out === "true" ? null : `with the .wasm: ${copied.out}`,
      !without.ok && /FencepostError: fencepost could not read its wasm core at .*Bundling for Node/s.test(without.out) ? null
        : `without the .wasm: ${without.out.slice(0, 400)}`,
    ]);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

process.exit(summary() ? 1 : 0);

/** pkg/package.json's `bin`, as `name -> file` pairs. */
function binList() {
  const { bin = {} } = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
  return Object.entries(bin).map(([name, file]) => `${name} -> ${file}`).join(", ") || "none";
}

/**
 * What a tarball misses for its `bin` and its imports: each bin file shipped, starting with a
 * `#!/usr/bin/env node` line; each relative `import … from "./x.js"` of a shipped .js file shipped
 * (a module left out of `files` breaks only at run time).
 */
function shippedProblems(tarball, entries, dir) {
  mkdirSync(dir);
  execFileSync("tar", ["-xzf", tarball, "-C", dir, "--strip-components=1"]);
  const problems = [];
  const { bin = {} } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (Object.keys(bin).length === 0) problems.push("package.json has no bin");
  for (const [name, file] of Object.entries(bin)) {
    const path = posix.normalize(file);
    if (!entries.includes(path)) problems.push(`bin ${name}: ${path} is not in the tarball`);
    else if (!readFileSync(join(dir, path), "utf8").startsWith("#!/usr/bin/env node\n")) problems.push(`bin ${name}: ${path} does not start with #!/usr/bin/env node`);
  }
  for (const file of entries.filter((e) => e.endsWith(".js"))) {
    const text = readFileSync(join(dir, file), "utf8");
    const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*["'](\.[^"']+)["']/g),
      ...text.matchAll(/(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g)].map((m) => m[1]);
    for (const spec of specs) {
      // A bundler's import attribute in the specifier (`x.wasm?module`, Vercel's) names the file x.wasm.
      const target = posix.join(posix.dirname(file), spec.replace(/\?[a-z]+$/, ""));
      if (!entries.includes(target)) problems.push(`${file} imports ${spec}, which is not in the tarball (pkg/package.json "files")`);
    }
  }
  return problems;
}

/** Links that are not `#anchor`s of a heading in the same file (npm shows the README alone). */
function readmeLinkProblems(md) {
  const text = md.replace(/^```[\s\S]*?^```/gm, ""); // code blocks hold code, not links
  const slugs = new Map();
  const anchors = new Set();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    // GitHub's (and npm's) heading ids: lower case, punctuation dropped, spaces to hyphens, -N for repeats.
    const base = heading.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = slugs.get(base) ?? 0;
    slugs.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  const problems = [];
  const inline = text.replace(/`[^`\n]*`/g, "");
  for (const [, target] of inline.matchAll(/\]\(([^)\s]+)[^)]*\)/g)) {
    if (target.startsWith(`${repositoryUrl()}/`)) continue; // absolute: works wherever the README is shown
    if (!target.startsWith("#")) problems.push(`link to ${target}: only this README's own headings and absolute links work for every reader`);
    else if (!anchors.has(target.slice(1))) problems.push(`link to ${target}: no such heading`);
  }
  for (const [, target] of inline.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) {
    if (!target.startsWith("#")) problems.push(`reference link to ${target}`);
  }
  if (/<a\s+href=/i.test(inline)) problems.push("an HTML link (<a href>)");
  return problems;
}
