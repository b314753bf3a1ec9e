// The error classes have one source, pkg/errors.js: every code the Rust core can report to JS maps
// onto a class there, and the READMEs and the API reference name every class.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as lib from "fencepost";

const root = new URL("../../", import.meta.url);
const classes = Object.values(lib).filter((v) => typeof v === "function" && v.prototype instanceof Error);

test("every code of the Rust core has its JS class", () => {
  const rust = readFileSync(new URL("src/base/error.rs", root), "utf8");
  const body = rust.slice(rust.indexOf("pub fn code(&self)"), rust.indexOf("pub fn invalid("));
  // Codes the core never hands to JS as a failure record: a callback's own error and an abort
  // reason are passed through unchanged.
  const passedThrough = new Set(["CALLBACK", "ABORTED"]);
  const codes = [...body.matchAll(/=> "([A-Z_]+)"/g)].map((m) => m[1]).filter((c) => !passedThrough.has(c));
  assert.ok(codes.length >= 8, `found the codes (${codes})`);
  const js = new Set(classes.map((C) => C.code));
  for (const code of codes) assert.ok(js.has(code), `${code} has a class in pkg/errors.js`);
});

test("the READMEs (the repository's and npm's) and the API reference name every error class", () => {
  for (const file of ["README.md", "pkg/README.md", "docs/api.md"]) {
    const readme = readFileSync(new URL(file, root), "utf8");
    for (const C of classes) assert.ok(readme.includes("`" + C.name + "`"), `${C.name} in ${file}`);
  }
});
