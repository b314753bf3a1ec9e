// The module `import("fencepost")` loads in Node from the package in a directory (its manifest's
// `exports["."]`, conditions resolved as Node resolves them, or `main`): shared by the
// instruction-count scripts, which run other builds of the package than the installed one.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The entry file's path. @param {string} dir */
export function entryPath(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let entry = manifest.exports?.["."] ?? manifest.main;
  while (entry && typeof entry === "object") entry = entry.node ?? entry.import ?? entry.default;
  return resolve(dir, entry);
}
