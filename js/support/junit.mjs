#!/usr/bin/env node
// The counts of a JUnit XML report, the machine-readable output all three JS test runners write:
// `node --test --test-reporter=junit`, `deno test --junit-path=…`, `vitest --reporter=junit`.
// Every <testcase> is one test: failed when it holds a <failure> or an <error>, skipped (counted
// neither way) when it holds a <skipped>, passed otherwise. The runners' own summaries count the
// same tests as long as no test has subtests (node reports a test with subtests as a
// <testsuite>, deno reports each step as a <testcase> of its own); none of this repository's do.
//
//   node js/support/junit.mjs REPORT.xml…    prints "N passed, M failed" over every report
//                                            (a report that is missing counts nothing)
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/** {passed, failed, skipped} of one report's text. */
export function junitCounts(xml) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  // <testcase …/> or <testcase …>…</testcase>; attribute values may hold a raw ">".
  const testcase = /<testcase\b(?:[^>"']|"[^"]*"|'[^']*')*?(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(testcase)) {
    const body = m[2] ?? "";
    if (/<(failure|error)\b/.test(body)) counts.failed++;
    else if (/<skipped\b/.test(body)) counts.skipped++;
    else counts.passed++;
  }
  return counts;
}

/** The counts of the report in `file`; all 0 when there is none (its runner crashed first). */
export function junitFileCounts(file) {
  try {
    return junitCounts(readFileSync(file, "utf8"));
  } catch {
    return { passed: 0, failed: 0, skipped: 0 };
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let passed = 0;
  let failed = 0;
  for (const file of process.argv.slice(2)) {
    const c = junitFileCounts(file);
    passed += c.passed;
    failed += c.failed;
  }
  console.log(`${passed} passed, ${failed} failed`);
}
