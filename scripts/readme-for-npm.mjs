// pkg/README.md, what npm shows, is generated from README.md: never edit it by hand. npm shows the
// README alone, so links to the repository's files become absolute (the package.json `repository`),
// links to the README's own headings stay, and the contributors' commands at the top are dropped.
//
//   node scripts/readme-for-npm.mjs            writes pkg/README.md (the package build runs it)
//   node scripts/readme-for-npm.mjs --check    exits 1 when pkg/README.md is not what it would write
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(new URL("../", import.meta.url)));

/** The repository's web address for a file or folder at `path` on the main branch. */
export function repositoryUrl(pkg = JSON.parse(readFileSync(resolve(ROOT, "pkg/package.json"), "utf8"))) {
  const url = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  if (!url) throw new Error("pkg/package.json has no repository: npm's README needs it for its links");
  return url.replace(/^git\+/, "").replace(/\.git$/, "");
}

/** README.md as npm shows it. */
export function npmReadme(readme, base = repositoryUrl()) {
  const lines = readme.split("\n");
  // The title, then the contributors' block and the sentence about it: users of the package need neither.
  const body = readme.replace(/^(# .*\n\n)```sh\n[\s\S]*?\n```\n\n[^\n]*\n(?:[^\n]+\n)*\n/, "$1");
  if (body === readme && lines[2]?.startsWith("```")) throw new Error("README.md's opening changed: update readme-for-npm.mjs");
  let fenced = false;
  return body.split("\n").map((line) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return line;
    return line.replace(/\]\(([^)\s#][^)\s]*)\)/g, (whole, target) =>
      /^[a-z]+:/i.test(target) ? whole : `](${base}/blob/main/${target.replace(/^\.\//, "")})`);
  }).join("\n");
}

/** pkg/README.md's whole text, from the repository's README.md as it is now. */
export function npmReadmeFile() {
  const readme = readFileSync(resolve(ROOT, "README.md"), "utf8");
  return `<!-- Generated from the repository's README.md by scripts/readme-for-npm.mjs: edit that, not this. -->\n${npmReadme(readme)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const want = npmReadmeFile();
  const target = resolve(ROOT, "pkg/README.md");
  if (process.argv.includes("--check")) {
    const ok = readFileSync(target, "utf8") === want;
    console.log(ok ? "pkg/README.md is README.md made for npm" : "pkg/README.md is stale: run node scripts/readme-for-npm.mjs");
    process.exitCode = ok ? 0 : 1;
  } else {
    writeFileSync(target, want);
  }
}
