// A script's checks, printed as TAP-like lines ("ok - name" / "not ok - name" with the problems
// indented) and counted, for runners that end with the "N passed, M failed" line scripts/test.sh reads.

/** `check(name, problems)`: no problems (null, "", [] or an array of them) passes. `summary()` prints the counts and sets the exit code. */
export function checklist() {
  let passed = 0;
  let failed = 0;
  return {
    check(name, problems) {
      const list = [problems].flat().filter(Boolean);
      if (list.length === 0) {
        passed++;
        console.log(`ok - ${name}`);
      } else {
        failed++;
        console.log(`not ok - ${name}`);
        for (const p of list) console.log(String(p).split("\n").map((l) => `    ${l}`).join("\n"));
      }
    },
    summary() {
      console.log(`${passed} passed, ${failed} failed`);
      process.exitCode = failed ? 1 : 0;
      return failed;
    },
  };
}
