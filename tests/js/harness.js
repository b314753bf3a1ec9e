// A minimal runner for runtimes without a test framework of their own here (workerd, Chromium):
// runs the cases one after another and reports per case.
export async function runCases(caseList, { prefix = "" } = {}) {
  const results = [];
  for (const { name, fn } of caseList) {
    const started = Date.now();
    try {
      await fn();
      results.push({ name: prefix + name, ok: true, ms: Date.now() - started });
    } catch (e) {
      results.push({ name: prefix + name, ok: false, ms: Date.now() - started, error: String(e?.stack ?? e) });
    }
  }
  return { passed: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length, results };
}
