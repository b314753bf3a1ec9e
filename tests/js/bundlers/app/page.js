// What every bundled page runs: what an app does with fencepost in a browser. It imports the package
// by name (so each bundler resolves the `browser`/default entry itself), runs a claim, a lease and
// its release, checks that a released handle rejects with `LeaseLost` (the class the page imported:
// one copy of the error classes in the bundle), and writes the result as JSON into the page and
// `window.__result`, where tests/js/bundlers/run.mjs reads it.
import { Fencepost, memoryStore, LeaseLost } from "fencepost";

async function main() {
  const db = new Fencepost(memoryStore());
  const first = await db.claim("cron/tick", { by: "first" });
  const second = await db.claim("cron/tick", { by: "second" });
  const lease = await db.lease("jobs/1", { ttl: 30 });
  const epoch = lease?.epoch;
  await lease.updateState(() => ({ step: 1 }));
  await lease.release();
  let afterRelease = "resolved";
  try {
    await lease.renew();
  } catch (e) {
    afterRelease = e instanceof LeaseLost ? `LeaseLost ${e.code}` : `${e?.name}: ${e?.message}`;
  }
  const again = await db.lease("jobs/1", { ttl: 30 });
  return {
    ok: first.won === true && second.won === false && second.value?.by === "first" && epoch === 1 &&
      afterRelease === "LeaseLost LEASE_LOST" && again?.epoch === 2 && again.state?.step === 1,
    claim: { first: first.won, second: second.won, winner: second.value?.by },
    lease: { epoch, afterRelease, nextEpoch: again?.epoch, state: again?.state },
  };
}

export function runPage() {
  main().then(
    (result) => report(result),
    (e) => report({ ok: false, error: `${e?.name}: ${e?.message}`, stack: String(e?.stack ?? "") }),
  );
}

function report(result) {
  window.__result = result;
  document.querySelector("#result").textContent = JSON.stringify(result, null, 2);
  console.log(JSON.stringify(result));
}
