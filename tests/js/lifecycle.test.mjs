// The lease lifecycle against a real server (SeaweedFS) through the fault proxy holding PUTs:
// keep-alive over many ttls, renewals blocked, hung PUTs cut by the per-attempt timeout, aborts,
// and the store clock with skewed local clocks. Node only (the proxy is a Node server); the
// conformance suite covers the same API in every runtime without faults.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import * as lib from "fencepost";
import { freshPrefix, s3Options, serverSettings } from "../../js/support/servers.js";
import { startFaultProxy } from "../../js/support/fault-proxy.js";

const env = serverSettings();
const upstream = env.FENCEPOST_SEAWEED_ENDPOINT;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * What the proxy does to PUTs (every other request passes): "pass", "hang" (never forwarded,
 * never answered), "late" (forwarded after `lateMs`, answer withheld), "landed" (forwarded at
 * once, answer withheld). The client's per-attempt timeout or abort is what ends a held PUT.
 */
const PUTS = { hang: "hung:dropped", late: "hung:late", landed: "hung:landed" };
let proxy;
let proxyUrl;
function putsMode(mode, { lateMs } = {}) {
  proxy?.setRules(mode === "pass" ? [] : [{ method: "PUT", fault: PUTS[mode], lateMs }]);
}

before(async () => {
  if (!upstream) return;
  // Held requests stay held for the whole test (the client must cut them), not the proxy's default 8 s.
  proxy = await startFaultProxy({ upstream, hungMax: 120 });
  proxyUrl = proxy.url;
});

after(async () => {
  await proxy?.close();
});

function store({ direct = false, timeout = 0.5, prefix } = {}) {
  return lib.s3Store({ ...s3Options(env, "seaweed"), endpoint: direct ? upstream : proxyUrl, prefix, timeout });
}
const retry = { maxAttempts: 3, baseDelay: 0.02, maxDelay: 0.1 };
const skip = !upstream && "needs FENCEPOST_SEAWEED_* (scripts/test.sh starts SeaweedFS)";

test("a 2-s lease kept alive for 20 s is never stolen", { skip }, async () => {
  putsMode("pass");
  const prefix = freshPrefix("lifecycle");
  const db = new lib.Fencepost(store({ prefix }), { retry });
  const thief = new lib.Fencepost(store({ prefix, direct: true }), { retry });
  const lease = await db.lease("job", { ttl: 2 });
  lease.keepAlive();
  let attempts = 0;
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    attempts++;
    assert.equal(await thief.lease("job", { ttl: 2 }), null, `stolen after ${attempts} attempts`);
    await sleep(250);
  }
  assert.ok(!lease.signal.aborted, "still held");
  await lease[Symbol.asyncDispose]();
  console.log(`# ${attempts} steal attempts over 20 s, none succeeded; epoch ${lease.epoch}`);
});

test("renewals blocked: signal aborts with LeaseLost before the deadline; a thief gets it only after", { skip }, async () => {
  putsMode("pass");
  const prefix = freshPrefix("lifecycle");
  const db = new lib.Fencepost(store({ prefix, timeout: 0.3 }), { retry });
  const thief = new lib.Fencepost(store({ prefix, direct: true }), { retry });
  const lease = await db.lease("job", { ttl: 2 });
  lease.keepAlive({ every: 0.5 });
  await sleep(1200);
  putsMode("hang");
  const deadline = lease.deadlineAt.getTime(); // the last renewal that landed (no later one will)
  const aborted = new Promise((resolve) => lease.signal.addEventListener("abort", () => resolve(Date.now())));
  let stolenAt = null;
  const stealing = (async () => {
    while (stolenAt === null && Date.now() < deadline + 5000) {
      if (await thief.lease("job", { ttl: 2 })) stolenAt = Date.now();
      else await sleep(50);
    }
  })();
  const abortedAt = await aborted;
  await stealing;
  putsMode("pass");
  const lastDeadline = Math.max(deadline, lease.deadlineAt.getTime());
  assert.ok(lease.signal.reason instanceof lib.LeaseLost, `reason: ${lease.signal.reason}`);
  assert.ok(abortedAt < lastDeadline, `aborted ${lastDeadline - abortedAt} ms before the deadline`);
  assert.ok(stolenAt !== null && stolenAt >= lastDeadline, `stolen ${stolenAt - lastDeadline} ms after the deadline`);
  console.log(`# signal aborted ${lastDeadline - abortedAt} ms before the deadline; thief succeeded ${stolenAt - lastDeadline} ms after it`);
});

test("a PUT that never answers settles within timeout × attempts", { skip }, async () => {
  putsMode("hang");
  const db = new lib.Fencepost(store({ prefix: freshPrefix("lifecycle"), timeout: 0.3 }), { retry });
  const t0 = Date.now();
  const err = await db.claim("cron/tick", { by: "me" }).catch((e) => e);
  const ms = Date.now() - t0;
  putsMode("pass");
  // A timed-out PUT may still land: after the budget the outcome is ambiguous, never "not written".
  assert.ok(err instanceof lib.AmbiguousWriteError, `an AmbiguousWriteError: ${err}`);
  assert.ok(err.cause instanceof lib.StorageError, `its cause is the store's failure, typed: ${err.cause}`);
  // 3 attempts × 0.3 s, plus the read-backs that prove each did not land and the backoff between.
  assert.ok(ms < 3 * 300 + 600, `settled in ${ms} ms`);
  console.log(`# hung PUT: ${err.code} after ${ms} ms (3 attempts × 300 ms timeout)`);
});

test("a claim race under PUTs that land late tells exactly one caller won", { skip }, async () => {
  putsMode("late", { lateMs: 500 });
  const prefix = freshPrefix("lifecycle");
  const racers = Array.from({ length: 4 }, () => new lib.Fencepost(store({ prefix, timeout: 0.3 }), { retry }));
  const results = await Promise.allSettled(racers.map((db, i) => db.claim("cron/race", { by: i })));
  putsMode("pass");
  const direct = new lib.Fencepost(store({ prefix, direct: true }));
  const stored = JSON.parse(new TextDecoder().decode((await direct.objects.get("cron/race")).data));
  const won = results.filter((r) => r.status === "fulfilled" && r.value.won);
  assert.ok(won.length <= 1, `at most one winner (${won.length})`);
  for (const r of results) {
    if (r.status === "fulfilled") assert.deepEqual(r.value.value, stored, "every caller agrees with the stored winner");
    else assert.ok(r.reason instanceof lib.FencepostError, `typed: ${r.reason}`);
  }
  if (won.length === 1) assert.deepEqual(won[0].value.value, stored, "the winner's value is stored");
  console.log(`# late PUTs: ${won.length} won, ${results.filter((r) => r.status === "rejected").map((r) => r.reason.code).join(",") || "no"} rejections; stored ${JSON.stringify(stored)}`);
});

test("an aborted call rejects within 50 ms; a landed claim still reports won: true", { skip }, async () => {
  putsMode("hang");
  const prefix = freshPrefix("lifecycle");
  const db = new lib.Fencepost(store({ prefix, timeout: 5 }), { retry });
  const controller = new AbortController();
  const pending = db.claim("cron/abort", 1, { signal: controller.signal });
  await sleep(100);
  const reason = new Error("stop");
  const t0 = Date.now();
  controller.abort(reason);
  const err = await pending.catch((e) => e);
  const ms = Date.now() - t0;
  // The PUT was on its way when the abort came: the read-back does not show it, but it may still
  // land, so the call does not claim "nothing was written".
  assert.ok(err instanceof lib.AmbiguousWriteError && err.cause === reason, `ambiguous, caused by the abort (${err})`);
  assert.ok(ms <= 50, `within 50 ms (${ms})`);
  // The PUT reaches the store and lands, but its answer never comes; the abort's read-back proves it.
  putsMode("landed");
  const c2 = new AbortController();
  const landing = db.claim("cron/abort-landed", { by: "me" }, { signal: c2.signal });
  await sleep(200);
  const t1 = Date.now();
  c2.abort(new Error("stop"));
  const result = await landing;
  const ms2 = Date.now() - t1;
  putsMode("pass");
  assert.equal(result.won, true, "a landed claim reports won: true");
  assert.ok(ms2 <= 50, `within 50 ms (${ms2})`);
  console.log(`# abort with the PUT unanswered: ${err.code} in ${ms} ms; abort after the write landed: won=${result.won} in ${ms2} ms`);
});

test("clock: 'store' — a client 10 minutes fast does not steal; one 10 minutes slow writes live deadlines", { skip }, async () => {
  putsMode("pass");
  const prefix = freshPrefix("lifecycle");
  const tenMinutes = 10 * 60 * 1000;
  const honest = new lib.Fencepost(store({ prefix, direct: true }), { retry });
  const fast = new lib.Fencepost(store({ prefix, direct: true }), { retry, clock: "store", now: () => Date.now() + tenMinutes });
  const slow = new lib.Fencepost(store({ prefix, direct: true }), { retry, clock: "store", now: () => Date.now() - tenMinutes });
  const naiveFast = new lib.Fencepost(store({ prefix, direct: true }), { retry, now: () => Date.now() + tenMinutes });

  const held = await honest.lease("a", { ttl: 30 });
  await fast.objects.get("warm-up"); // any response tells the store's time
  assert.equal(await fast.lease("a", { ttl: 30 }), null, "the fast client does not steal a live lease");
  await held.release();
  // Control: with its local clock alone, the same client would steal a live lease.
  await honest.lease("c", { ttl: 30 });
  assert.ok(await naiveFast.lease("c", { ttl: 30 }), "the local clock 10 minutes fast steals");

  await slow.objects.get("warm-up");
  const mine = await slow.lease("b", { ttl: 30 });
  const skew = Math.abs(mine.deadlineAt.getTime() - (Date.now() + 30_000));
  assert.ok(skew < 3000, `the deadline is in the store's time (${skew} ms off)`);
  assert.equal(await honest.lease("b", { ttl: 30 }), null, "others see the slow client's lease as live");
  await mine.release();
});

test("clock: 'store' — a Fencepost's first call, a prune, judges by the store's time", { skip }, async () => {
  putsMode("pass");
  const prefix = freshPrefix("lifecycle");
  const honest = new lib.Fencepost(store({ prefix, direct: true }), { retry });
  const held = await honest.lease("jobs/held", { ttl: 600 });
  await honest.objects.put("jobs/fresh", new Uint8Array([1]));
  // 14 minutes fast, and no request made yet: the listing's answer is the first word of the store's time.
  const fast = new lib.Fencepost(store({ prefix, direct: true }), { retry, clock: "store", now: () => Date.now() + 14 * 60_000 });
  const pruned = await fast.prune("jobs/", { olderThan: 600 });
  assert.deepEqual([pruned.deleted, pruned.kept], [0, 2], JSON.stringify(pruned));
  await held.renew();
  await held.release();
});

test("a request that provably was never sent (connection refused) is a StorageError, not ambiguous", async () => {
  // A port nothing listens on: every attempt is refused before a byte is sent.
  const probe = http.createServer();
  await new Promise((r) => probe.listen(0, "127.0.0.1", r));
  const port = probe.address().port;
  await new Promise((r) => probe.close(r));
  const db = new lib.Fencepost(lib.s3Store({ endpoint: `http://127.0.0.1:${port}`, bucket: "b", accessKeyId: "a", secretAccessKey: "s" }),
    { retry: { maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.02 } });
  for (const call of [() => db.claim("k", 1), () => db.doc("d").update((v) => v + 1, { create: 0 })]) {
    const err = await call().catch((e) => e);
    assert.ok(err instanceof lib.StorageError && !(err instanceof lib.AmbiguousWriteError), `${err?.name}: ${err?.message}`);
    assert.equal(err.code, "STORAGE_ERROR");
  }
});

