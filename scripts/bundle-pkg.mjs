// Bundles the npm package's entries into pkg/dist/ (run by scripts/build-pkg.sh): what the package
// ships and what `exports` points at. The hand-written modules of pkg/ stay the source.
//
// Why: Node, Deno and Bun load an ES module graph one file at a time, and `import("fencepost")`
// spent more time resolving and reading the ~25 modules of the JS layer than compiling the wasm.
// One esbuild run over every entry with code splitting gives each entry one file plus one chunk
// they all share, so `fencepost` and `fencepost/testing` (and the command line) still share one
// wasm instance, one set of error classes and one handle table.
//
// The library is not minified (the command line's own code is: below): stack traces and a user's
// debugger show the JS layer as written. Its comments are
// dropped, though: esbuild keeps the JSDoc type casts and notes inside expressions (about 5 KB of
// the packed tarball), so they are cut out afterwards (acorn finds them, so nothing inside a
// string or template is touched). What tools read stays: the `// file.js` markers before each
// module's code, the `@__PURE__` annotations that users' bundlers tree-shake by, the command
// line's `#!`.
//
// The wasm is copied next to the bundles, where their `new URL("./fencepost_bg.wasm",
// import.meta.url)` and `import "./fencepost_bg.wasm"` find it; those imports stay as written
// (`external`), for Node/Deno to read, wrangler and Vercel to compile, and web bundlers to emit.
import { parse } from "acorn";
import { build, transform } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// usage: node scripts/bundle-pkg.mjs [PKG_DIR]   (default: pkg/; benches/profile.sh bundles a copy)
const pkg = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "pkg"));
const out = join(pkg, "dist");
// The entries are what pkg/package.json's `exports` and `bin` name in dist/ (one list, not two).
const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
const targets = [...Object.values(manifest.exports).flatMap((t) => (typeof t === "string" ? [t] : Object.values(t))),
  ...Object.values(manifest.bin)];
const entries = [...new Set(targets.filter((t) => /^\.\/dist\/.*\.js$/.test(t)).map((t) => t.slice("./dist/".length, -".js".length)))];

// The runtime entries (`dist/node.js`, `dist/deno.js`, …) each load the wasm in their own way. The
// other entries (`testing/*`, the command line) import their runtime's entry to have it loaded;
// bundled as is, esbuild would move each runtime entry's loading into a chunk of its own, which
// the entry then imports: Node reads one module file more per `import("fencepost")` (about 1 ms
// of the import's time, measured). So an import of a runtime entry from another entry stays an
// import of that entry's file (`dist/` mirrors `pkg/`, so its relative path holds): a runtime
// entry is its loading plus one import of the shared chunk.
const runtimeEntries = new Set(Object.values(manifest.exports["."]).filter((t) => t.startsWith("./dist/"))
  .map((t) => join(pkg, t.slice("./dist/".length))));
const runtimeEntryImports = {
  name: "runtime-entries-stay-files",
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/[a-z-]+\.js$/ }, (args) => {
      const target = resolve(args.resolveDir, args.path);
      return runtimeEntries.has(target) && args.kind === "import-statement"
        ? { path: args.path, external: true }
        : undefined;
    });
  },
};

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  absWorkingDir: pkg,
  entryPoints: Object.fromEntries(entries.map((e) => [e, `./${e}.js`])),
  outdir: out,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  // What every supported runtime has (Node 20, Deno 2, workerd, current browsers); nothing is
  // lowered, so the output is the source's own syntax.
  target: "es2022",
  chunkNames: "chunk-[hash]",
  external: ["*.wasm", "*.wasm?module", "node:*"],
  legalComments: "none",
  // pkg/package.json's "sideEffects" describes the bundles (dist/), not these sources: every
  // entry's import of its runtime entry (which instantiates the wasm) is kept.
  ignoreAnnotations: true,
  logLevel: "warning",
  plugins: [runtimeEntryImports],
});

/** Comments tools read: a module's path marker, and bundlers' annotations. */
const KEPT_COMMENT = /^\s*[\w./-]+\.js\s*$|[@#]__(PURE|NO_SIDE_EFFECTS)__/;

/**
 * `code` without its comments (but the kept ones); a comment alone on its line goes with its line.
 * Nothing else is touched (a blank line inside a template is the template's). @param {string} code
 */
function withoutComments(code) {
  /** @type {[number, number][]} */
  const cuts = [];
  parse(code, {
    ecmaVersion: "latest",
    sourceType: "module",
    onComment: (_block, text, start, end) => {
      // The command line's `#!/usr/bin/env node` (acorn reports it as a comment) stays too.
      const hashbang = start === 0 && code.startsWith("#!");
      if (!hashbang && !KEPT_COMMENT.test(text)) cuts.push(wholeLine(code, start, end));
    },
  });
  let out = "";
  let at = 0;
  for (const [start, end] of cuts) {
    out += code.slice(Math.min(at, start), start);
    at = Math.max(at, end);
  }
  return out + code.slice(at);
}

/** The span `[start, end)`, widened to its whole line (and the line break) when nothing else is on it. */
function wholeLine(/** @type {string} */ code, /** @type {number} */ start, /** @type {number} */ end) {
  const lineStart = code.lastIndexOf("\n", start - 1) + 1;
  const lineEnd = code.indexOf("\n", end);
  const stop = lineEnd === -1 ? code.length : lineEnd;
  const alone = /^[ \t]*$/.test(code.slice(lineStart, start)) && /^[ \t]*$/.test(code.slice(end, stop));
  return alone ? [lineStart, lineEnd === -1 ? stop : stop + 1] : [start, end];
}

for (const file of readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"))) {
  const path = join(out, file);
  writeFileSync(path, withoutComments(readFileSync(path, "utf8")));
}

// The command line's own code (dist/cli.js: its argument parsing, help and output; the library it
// runs is the shared chunk, untouched) is minified: it is a program, whose users read its messages,
// not its frames, and minified it is 1.7 KB less of the packed tarball.
for (const bin of Object.values(manifest.bin)) {
  const path = join(pkg, bin);
  const { code } = await transform(readFileSync(path, "utf8"), { minify: true, format: "esm", target: "es2022", legalComments: "none" });
  writeFileSync(path, code);
}
copyFileSync(join(pkg, "fencepost_bg.wasm"), join(out, "fencepost_bg.wasm"));
