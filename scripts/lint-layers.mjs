#!/usr/bin/env node
// The house rule, checked: every module imports only from the layers below it.
//
// Rust: the layers of each crate (the core, src/; the JS binding, binding/src/) are read from the
// comment at the top of its lib.rs (bottom first; one line per
// layer, its modules before the first double space), so the rule and its statement cannot drift.
// A `crate::m` path in code (comments and unit-test modules aside) must name a module of a lower
// layer, or the file's own module; nothing names the crate root (lib.rs only declares and
// re-exports); and inside `store/` a backend names no other store part but the HTTP kit, a
// decorator no backend.
//
// JS: the layers of the npm package's files (pkg/) are in scripts/js-layers.json, bottom first. A
// file may import (JSDoc type imports included) from its own layer or below; no import cycle.
//
// Usage: node scripts/lint-layers.mjs [root]   Prints each violation and a count; exits 1 on any.

import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, relative, dirname, basename } from "node:path";

const root = process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), "..");
const problems = [];

// ------------------------------------------------------------------------------------ Rust

function rustLayers(/** @type {string} */ src) {
  const lib = readFileSync(join(root, src, "lib.rs"), "utf8").split("\n");
  const start = lib.findIndex((l) => /^\/\/ .*From the bottom:/.test(l));
  if (start < 0) throw new Error(`${src}/lib.rs: no layer list (a comment line ending 'From the bottom:')`);
  const layers = new Map();
  let level = 0;
  for (const line of lib.slice(start + 1)) {
    const m = /^\/\/\s{3}(\S.*)$/.exec(line);
    if (!m) {
      if (/^\/\/\s*$/.test(line) && layers.size) break;
      continue;
    }
    const names = m[1].split(/\s{2,}/)[0];
    for (const name of names.split(/,\s*/)) layers.set(name.trim(), level);
    level++;
  }
  return layers;
}

function* walk(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** The file's code lines with their numbers: comments, strings' contents and unit-test modules dropped. */
function codeLines(text) {
  const out = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    // A `#[cfg(test)] mod tests { … }` at the end of a file tests the module from outside.
    if (/^#\[cfg\(test\)\]/.test(lines[i]) && /^mod tests\b/.test(lines[i + 1] ?? "")) break;
    const code = lines[i].replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\/\/.*$/, "");
    if (code.trim()) out.push([i + 1, code]);
  }
  return out;
}

// Backends never use another store part but the HTTP kit (`http`: transports, the exchange,
// encodings, the XML reader), which uses no other store part itself; decorators may compose
// decorators, never a backend.
const BACKENDS = ["memory", "s3", "r2", "azure", "gcs"];
const KIT = "http";
const STORE_PARTS = [...BACKENDS, KIT, "prefix", "counting", "fault"];
const mayUse = (part, other) =>
  other === part ||
  (other === KIT && BACKENDS.includes(part)) ||
  (part !== KIT && other !== KIT && !BACKENDS.includes(part) && !BACKENDS.includes(other));

/** One crate's sources (`src`: the core; `binding/src`: the JS binding, above the whole core). */
function checkRust(/** @type {string} */ src) {
  const layers = rustLayers(src);
  let files = 0;
  for (const path of walk(join(root, src))) {
    if (!path.endsWith(".rs")) continue;
    const rel = relative(join(root, src), path);
    if (rel === "lib.rs" || basename(rel) === "tests.rs") continue;
    files++;
    const parts = rel.replace(/\.rs$/, "").split("/");
    const own = parts[0];
    if (!layers.has(own)) {
      problems.push(`${src}/${rel}: module \`${own}\` is in no layer of src/lib.rs`);
      continue;
    }
    const storePart = own === "store" && parts.length > 1 && parts[1] !== "mod" ? parts[1] : null;
    for (const [n, code] of codeLines(readFileSync(path, "utf8"))) {
      // `use crate::{a, b}` names the root's re-exports.
      if (/\bcrate::\{/.test(code)) problems.push(`${src}/${rel}:${n}: imports from the crate root (lib.rs only re-exports)`);
      for (const [, target] of code.matchAll(/\bcrate::(\w+)/g)) {
        if (target === own) {
          const sub = new RegExp(`\\bcrate::store::(${STORE_PARTS.join("|")})\\b`).exec(code);
          if (storePart && sub && !mayUse(storePart, sub[1])) {
            problems.push(`${src}/${rel}:${n}: store/${storePart} uses store/${sub[1]} (a backend uses no other store part; a decorator no backend)`);
          }
          continue;
        }
        if (!layers.has(target)) {
          problems.push(`${src}/${rel}:${n}: \`crate::${target}\` is the crate root's, not a module (import it from its module)`);
        } else if (layers.get(target) >= layers.get(own)) {
          problems.push(`${src}/${rel}:${n}: \`${own}\` (layer ${layers.get(own)}) uses \`${target}\` (layer ${layers.get(target)}): imports go only downward`);
        }
      }
      if (storePart) {
        for (const [, sibling] of code.matchAll(/\bsuper::(\w+)/g)) {
          if (STORE_PARTS.includes(sibling) && !mayUse(storePart, sibling) && parts.length === 2) {
            problems.push(`${src}/${rel}:${n}: store/${storePart} uses store/${sibling} (a backend uses no other store part; a decorator no backend)`);
          }
        }
      }
    }
  }
  return files;
}

// ------------------------------------------------------------------------------------ JS

function checkJs() {
  const config = join(root, "scripts/js-layers.json");
  if (!existsSync(config)) return 0;
  const dir = "pkg";
  const layers = /** @type {string[][]} */ (JSON.parse(readFileSync(config, "utf8")));
  const level = new Map();
  layers.forEach((files, i) => files.forEach((f) => level.set(f, i)));
  const graph = new Map();
  for (const file of level.keys()) {
    const path = join(root, dir, file);
    // wasm-bindgen's output (generated, at the bottom) imports only its own snippets.
    if (file === "fencepost.js") continue;
    if (!existsSync(path)) {
      problems.push(`${dir}/${file}: listed in scripts/js-layers.json but missing`);
      continue;
    }
    const text = readFileSync(path, "utf8");
    const deps = [];
    for (const [, spec] of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*["'](\.[^"']+)["']/g)) {
      deps.push(join(dirname(file), spec).replace(/^\.\//, ""));
    }
    for (const [, spec] of text.matchAll(/(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g)) deps.push(join(dirname(file), spec));
    // JSDoc type imports count too: a type from above is an upward dependency all the same.
    for (const [, spec] of text.matchAll(/import\(["'](\.[^"']+)["']\)/g)) deps.push(join(dirname(file), spec));
    graph.set(file, deps);
    for (const dep of deps) {
      if (!level.has(dep)) {
        // The wasm, its glue, and package.json (data: the command line's version) are no layer.
        if (!/(fencepost(_bg)?\.(js|wasm(\?module)?)|^package\.json)$/.test(dep)) problems.push(`${dir}/${file}: imports ${dep}, which is in no layer of scripts/js-layers.json`);
      } else if (level.get(dep) > level.get(file)) {
        problems.push(`${dir}/${file} (layer ${level.get(file)}) imports ${dep} (layer ${level.get(dep)}): imports go only downward`);
      }
    }
  }
  // Cycles: a depth-first search over the import graph.
  const state = new Map();
  const visit = (file, trail) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      problems.push(`${dir}: import cycle ${[...trail.slice(trail.indexOf(file)), file].join(" -> ")}`);
      return;
    }
    state.set(file, "open");
    for (const dep of graph.get(file) ?? []) if (graph.has(dep)) visit(dep, [...trail, file]);
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file, []);
  return graph.size;
}

const rustFiles = checkRust("src") + checkRust("binding/src");
const jsFiles = checkJs();
for (const p of problems) console.log(p);
console.log(`layers: ${rustFiles} Rust files, ${jsFiles} JS files checked, ${problems.length} violation(s)`);
process.exit(problems.length ? 1 : 0);
