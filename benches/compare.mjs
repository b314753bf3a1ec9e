// Before/after table of two `benches/run.mjs` outputs:
//   node benches/compare.mjs .run/bench-before.json .run/bench.json [--markdown]
// Rows are the `flat` figures present in either file; Δ is after relative to before.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const markdown = args.includes("--markdown");
const [beforePath, afterPath] = args.filter((a) => !a.startsWith("--"));
if (!beforePath || !afterPath) {
  console.error("usage: node benches/compare.mjs BEFORE.json AFTER.json [--markdown]");
  process.exit(2);
}
const load = (/** @type {string} */ p) => JSON.parse(readFileSync(p, "utf8"));
const before = load(beforePath);
const after = load(afterPath);
const keys = [...new Set([...Object.keys(before.flat ?? {}), ...Object.keys(after.flat ?? {})])];

const fmt = (/** @type {number | undefined} */ x) =>
  x === undefined || !Number.isFinite(x) ? "—" : Math.abs(x) >= 1000 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
const rows = keys.map((k) => {
  const b = before.flat?.[k];
  const a = after.flat?.[k];
  const delta = b !== undefined && a !== undefined && b !== 0 ? `${a >= b ? "+" : ""}${(((a - b) / b) * 100).toFixed(0)}%` : "";
  return [k, fmt(b), fmt(a), delta];
});
const head = ["figure", `before (${before.meta?.wasmSha256?.slice(0, 8) ?? "?"})`, `after (${after.meta?.wasmSha256?.slice(0, 8) ?? "?"})`, "Δ"];

if (markdown) {
  console.log(`| ${head.join(" | ")} |`);
  console.log(`|${head.map((_, i) => (i ? "---:" : "---")).join("|")}|`);
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
} else {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (/** @type {string[]} */ r) => r.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  console.log(line(head));
  console.log(widths.map((w) => "─".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}
