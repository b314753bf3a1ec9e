// Renames, in wasm-bindgen's glue (pkg/fencepost.js) and its types (pkg/fencepost.d.ts), the wasm's
// imports, exports and import module as `wasm-opt --minify-imports-and-exports-and-modules`
// renamed them in the wasm (its mapping: the JSON that wasm-opt printed, saved to a file).
// wasm-bindgen names every import `__wbg_<name>_<16 hex digits of hash>`: about 130 such names
// cost some 2 KB of the gzipped wasm, for nothing a user sees. It also lets initSync take a
// compiled module from another realm (below).
//
// usage: node scripts/minify-glue.mjs MAPPING.json pkg/fencepost.js pkg/fencepost.d.ts
import { readFileSync, writeFileSync } from "node:fs";

const [mappingFile, glueFile, typesFile] = process.argv.slice(2);
if (!mappingFile || !glueFile || !typesFile) {
  console.error("usage: node scripts/minify-glue.mjs MAPPING.json GLUE.js TYPES.d.ts");
  process.exit(2);
}
/** @type {{imports: [string, string, string][], exports: [string, string][]}} */
const mapping = JSON.parse(readFileSync(mappingFile, "utf8"));
const modules = new Set(mapping.imports.map(([module]) => module));
if (modules.size !== 1) fail(`expected imports from one module, got ${[...modules].join(", ")}`);
const [module] = modules;

let glue = readFileSync(glueFile, "utf8");
let types = readFileSync(typesFile, "utf8");

/** Replace the one match of `pattern` (a regex source) in `text`, or stop the build. */
function replaceOnce(text, pattern, replacement, what) {
  let seen = 0;
  const out = text.replace(new RegExp(pattern, "g"), (...match) => {
    seen++;
    return typeof replacement === "function" ? replacement(...match) : replacement;
  });
  if (seen !== 1) fail(`${what}: ${seen} matches, expected 1`);
  return out;
}

// The import object: `"./fencepost_bg.js": import0` and each `name: function(…)` entry of it.
const minifiedModule = "a";
glue = replaceOnce(glue, `${JSON.stringify(module).replace(/[.]/g, "\\.")}: import0`, `"${minifiedModule}": import0`, "import module");
for (const [, name, minified] of mapping.imports) {
  glue = replaceOnce(glue, `(\\n\\s+)${name}: `, (_, indent) => `${indent}${key(minified)}: `, `import ${name}`);
}
// A compiled module made in another realm (Next.js's edge sandbox compiles `.wasm?module` imports
// outside the realm the package runs in) fails `instanceof WebAssembly.Module`, and the glue then
// took it for bytes ("Argument 0 must be a buffer source"). Its tag says what it is in any realm,
// and the engine's own check (`new WebAssembly.Instance`) goes by what it is, not by its realm.
glue = replaceOnce(glue, "!\\(module instanceof WebAssembly\\.Module\\)",
  'Object.prototype.toString.call(module) !== "[object WebAssembly.Module]"', "initSync's module check");
// Exports: read as `wasm.name` in the glue, declared as `readonly name:` in InitOutput.
const exported = new Map(mapping.exports);
glue = glue.replace(/\bwasm\.([A-Za-z_$][\w$]*)/g, (whole, name) => {
  const minified = exported.get(name);
  if (minified === undefined) fail(`the glue reads wasm.${name}, which the wasm does not export`);
  return /^[A-Za-z_$][\w$]*$/.test(minified) ? `wasm.${minified}` : `wasm[${JSON.stringify(minified)}]`;
});
types = types.replace(/(\n\s+readonly )([A-Za-z_$][\w$]*)(: )/g, (whole, before, name, after) => {
  const minified = exported.get(name);
  return minified === undefined ? whole : `${before}${key(minified)}${after}`;
});

writeFileSync(glueFile, glue);
writeFileSync(typesFile, types);

/** A property name as written in an object literal or a type. @param {string} name */
function key(name) {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** @param {string} why */
function fail(why) {
  console.error(`minify-glue: ${why}`);
  process.exit(1);
}
