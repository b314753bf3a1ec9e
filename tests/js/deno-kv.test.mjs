// denoKvStore on a real local Deno KV (`Deno.openKv(file)` and `Deno.openKv(":memory:")`), under
// `deno test --unstable-kv`, on the INSTALLED package (node_modules/fencepost, through its "deno"
// export condition): checkStore's required checks, a 16-way claim race, a lease cycle, concurrent
// doc updates, fencepost's request floor, the value limit, listing order and pages.
import * as lib from "fencepost";
import * as testing from "fencepost/testing";

const { denoKvStore, countingStore, checkStore, Fencepost } = lib;

function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}
function eq(actual, expected, msg) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${msg}: expected ${e}, got ${a}`);
}
async function rejects(promise, msg) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error(`${msg}: did not reject`);
}

/** A local database in a temporary directory (removed after), and an in-memory one. */
const backends = {
  file: async () => {
    const dir = await Deno.makeTempDir({ prefix: "fencepost-kv-" });
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    return { kv, close: async () => (kv.close(), await Deno.remove(dir, { recursive: true })) };
  },
  memory: async () => {
    const kv = await Deno.openKv(":memory:");
    return { kv, close: async () => kv.close() };
  },
};

/** Each case on its own database: `fn(kv)`. */
function kvTest(name, fn) {
  for (const [backend, open] of Object.entries(backends)) {
    Deno.test(`deno-kv / ${backend} / ${name}`, async () => {
      const { kv, close } = await open();
      try {
        await fn(kv);
      } finally {
        await close();
      }
    });
  }
}

const fast = { retry: { maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05 } };

kvTest("checkStore passes every required check", async (kv) => {
  const report = await checkStore(denoKvStore(kv));
  for (const c of report.checks) {
    console.log(`  ${c.ok ? "ok  " : c.required ? "FAIL" : "no  "} ${c.required ? "required" : "informs "} ${c.name}: ${c.detail}`);
  }
  const failed = report.checks.filter((c) => c.required && !c.ok).map((c) => c.name);
  eq(failed, [], "required checks failed");
  assert(report.ok, "report.ok");
  assert(report.checks.some((c) => c.required), "has required checks");
});

kvTest("a 16-way claim race on one key has exactly one winner; every loser gets its value", async (kv) => {
  const store = denoKvStore(kv);
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) => new Fencepost(store, fast).claim("race/1", { by: i })),
  );
  const winners = results.filter((r) => r.won);
  eq(winners.length, 1, "winners");
  for (const r of results) eq(r.value, winners[0].value, "every caller sees the winner's value");
  eq(new Set(results.map((r) => r.etag)).size, 1, "one etag: one version");
});

kvTest("lease: acquire, renew, release, re-acquire with a higher epoch", async (kv) => {
  const store = denoKvStore(kv);
  const a = new Fencepost(store, fast), b = new Fencepost(store, fast);
  const lease = await a.lease("jobs/nightly", { ttl: 30, stateFn: () => ({ step: 1 }) });
  assert(lease !== null, "acquired");
  eq(lease.epoch, 1, "first epoch");
  eq(await b.lease("jobs/nightly", { ttl: 30 }), null, "held: another caller gets null");
  const before = lease.deadlineAt.getTime();
  await new Promise((r) => setTimeout(r, 20));
  await lease.renew();
  assert(lease.deadlineAt.getTime() > before, "renew moved the deadline");
  await lease.write({ step: 2 });
  await lease.release();
  assert(lease.released, "released");
  const next = await b.lease("jobs/nightly", { ttl: 30 });
  assert(next !== null, "re-acquired after the release");
  eq(next.epoch, 2, "a higher epoch");
  eq(next.state, { step: 2 }, "the state carries over");
  await rejects(lease.renew(), "the old handle is fenced out");
  await next.release();
});

kvTest("8 concurrent doc.update increments land exactly", async (kv) => {
  const store = denoKvStore(kv);
  await Promise.all(
    Array.from({ length: 8 }, () => new Fencepost(store, fast).doc("counter").update((v) => ({ n: v.n + 1 }), { create: { n: 0 }, maxAttempts: 16 })),
  );
  eq((await new Fencepost(store).doc("counter").get()).value, { n: 8 }, "counter");
});

kvTest("request counts at fencepost's floor", async (kv) => {
  const store = countingStore(denoKvStore(kv));
  const db = new Fencepost(store, fast);
  const counts = () => {
    const { get, put, delete: del, list } = store.requestCounts();
    store.resetRequestCounts();
    return { get, put, delete: del, list };
  };
  eq((await db.claim("once/a", 1)).won, true, "won");
  eq(counts(), { get: 0, put: 1, delete: 0, list: 0 }, "claim won: 1 put");
  eq((await db.claim("once/a", 2)).won, false, "lost");
  eq(counts(), { get: 1, put: 1, delete: 0, list: 0 }, "claim lost: 1 put + 1 get");
  const lease = await db.lease("lease/a", { ttl: 30 });
  assert(lease !== null, "acquired");
  eq(counts(), { get: 1, put: 1, delete: 0, list: 0 }, "fresh lease: 1 get + 1 put");
  await lease.release();
});

kvTest("a value over Deno KV's 64 KiB is a clear error, not retried, nothing written", async (kv) => {
  const store = countingStore(denoKvStore(kv));
  const objects = new Fencepost(store, fast).objects;
  // Fits: 60,000 bytes plus fencepost's metadata stay under 65,536 serialised.
  assert(await objects.put("big/fits", new Uint8Array(60_000)), "a 60,000-byte object is written");
  store.resetRequestCounts();
  for (const size of [65_500, 65_536, 200_000]) {
    const e = await rejects(objects.put(`big/${size}`, new Uint8Array(size)), `${size} bytes`);
    assert(e instanceof lib.StorageError, `a StorageError (${e})`);
    assert(/65536 bytes \(64 KiB\)/.test(e.message), `the message names the limit: ${e.message}`);
    eq(e.s3Code, "EntityTooLarge", "its code");
    eq(await objects.get(`big/${size}`), null, "nothing written");
  }
  // One attempt each (no retries), then the reads.
  eq(store.requestCounts().put, 3, "not retried");
  const claim = await rejects(new Fencepost(store, fast).claim("big/claim", "x".repeat(70_000)), "an oversized claim");
  assert(/64 KiB/.test(claim.message), `claim names the limit: ${claim.message}`);
});

kvTest("a KV key over Deno KV's 2048 bytes (a long namespace and key) is a clear error", async (kv) => {
  // fencepost's own keys stop at 1024 bytes; a long namespace can still push the KV key over.
  const store = denoKvStore(kv, { namespace: ["n".repeat(1500)] });
  const e = await rejects(new Fencepost(store, fast).claim("k".repeat(1000), 1), "a long key");
  assert(/2048 bytes/.test(e.message), `names the key limit: ${e.message}`);
});

kvTest("list: UTF-8 byte order, string prefixes, startAfter exclusive, pages past 1000, foreign entries skipped", async (kv) => {
  const store = countingStore(denoKvStore(kv));
  const objects = new Fencepost(store, fast).objects;
  const keys = ["p/a", "p/b", "p/\u{e000}", "p/\u{fffd}", "p/\u{1f600}", "p/a/b", "p", "q", "o/z", "pa"];
  for (const k of keys) await objects.put(k, "x");
  // Something else in the same database: other namespaces, longer keys under ours, other types.
  await kv.set(["elsewhere", "p/zz"], 1);
  await kv.set(["fencepost", "p/c", "extra"], 1);
  await kv.set(["fencepost", 7], 1);
  const utf8 = (a, b) => {
    const [x, y] = [new TextEncoder().encode(a), new TextEncoder().encode(b)];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  };
  eq(await objects.list("p/"), keys.filter((k) => k.startsWith("p/")).sort(utf8), "p/ in UTF-8 order");
  eq(await objects.list("p"), keys.filter((k) => k.startsWith("p")).sort(utf8), "p (a string prefix, not a key part)");
  eq(await objects.list(""), [...keys].sort(utf8), "everything");
  const after = [];
  for await (const e of objects.entries("p/", { startAfter: "p/b" })) after.push(e.key);
  eq(after, ["p/\u{e000}", "p/\u{fffd}", "p/\u{1f600}"], "startAfter is exclusive");

  const many = Array.from({ length: 1005 }, (_, i) => `m/${String(i).padStart(4, "0")}`);
  await Promise.all(many.map((k) => objects.put(k, "")));
  store.resetRequestCounts();
  eq(await objects.list("m/"), many, "two pages, in order, none lost or repeated");
  eq(store.requestCounts().list, 2, "two list requests");
  const entries = [];
  for await (const e of objects.entries("m/", { startAfter: "m/0998" })) entries.push(e);
  eq(entries.map((e) => e.key), many.slice(999), "startAfter near a page boundary");
  assert(entries.every((e) => typeof e.etag === "string" && e.size === 0), "etag and size");
});

kvTest("namespace: the KV key layout, and two namespaces apart", async (kv) => {
  const a = new Fencepost(denoKvStore(kv), fast);
  const b = new Fencepost(denoKvStore(kv, { namespace: ["apps", "b"] }), fast);
  eq((await a.claim("k", "a")).won, true, "a");
  eq((await b.claim("k", "b")).won, true, "b: its own key space");
  const entry = await kv.get(["fencepost", "k"]);
  assert(entry.value.data instanceof Uint8Array && typeof entry.value.modified === "number", "{data, meta, modified}");
  eq((await a.objects.get("k")).etag, entry.versionstamp, "etag = versionstamp");
  eq(JSON.parse(new TextDecoder().decode((await kv.get(["apps", "b", "k"])).value.data)), "b", "at [...namespace, key]");
  const prefixed = new Fencepost(denoKvStore(kv, { prefix: "tenant" }), fast);
  await prefixed.claim("k", "t");
  assert((await kv.get(["fencepost", "tenant/k"])).versionstamp !== null, "the prefix is the core's: tenant/k");
});

Deno.test("deno-kv / arguments: a kv without the methods, a bad namespace, unknown options", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    let e = await rejects((async () => denoKvStore({ get() {}, set() {} }))(), "partial kv");
    assert(e instanceof lib.InvalidArgument, "InvalidArgument");
    assert(/missing delete, list, atomic/.test(e.message), e.message);
    e = await rejects((async () => denoKvStore(undefined))(), "no kv");
    assert(e instanceof lib.InvalidArgument && /missing get, set, delete, list, atomic/.test(e.message), e.message);
    e = await rejects((async () => denoKvStore(kv, { namespace: "fencepost" }))(), "namespace string");
    assert(e instanceof lib.InvalidArgument && /namespace/.test(e.message), e.message);
    e = await rejects((async () => denoKvStore(kv, { namespace: [{}] }))(), "namespace object part");
    assert(e instanceof lib.InvalidArgument, e.message);
    e = await rejects((async () => denoKvStore(kv, { prefx: "a" }))(), "typo");
    assert(e instanceof lib.InvalidArgument && /prefix/.test(e.message), e.message);
  } finally {
    kv.close();
  }
});

Deno.test("deno-kv / a closed database is a non-retried StorageError", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = countingStore(denoKvStore(kv));
  kv.close();
  const e = await rejects(new Fencepost(store, fast).claim("k", 1), "closed");
  assert(e instanceof lib.StorageError, `${e}`);
  eq(store.requestCounts().put, 1, "one attempt");
});

/** `kv` whose next `commit()` throws `error` (without committing), then behaves. */
function failingOnce(kv, error) {
  let armed = true;
  return {
    get: (...a) => kv.get(...a), set: (...a) => kv.set(...a), delete: (...a) => kv.delete(...a), list: (...a) => kv.list(...a),
    atomic() {
      const op = kv.atomic();
      const commit = op.commit.bind(op);
      op.commit = async () => {
        if (armed) {
          armed = false;
          throw error;
        }
        return commit();
      };
      return op;
    },
  };
}

for (const [what, error, retried] of [
  ["Deno.errors.TimedOut", new Deno.errors.TimedOut("operation timed out"), true],
  ["a locked SQLite database", new Error("database is locked"), true],
  ["Deno.errors.ConnectionReset (remote KV)", new Deno.errors.ConnectionReset("connection reset"), true],
  ["a TypeError (an argument refused)", new TypeError("Invalid check"), false],
  ["an unknown storage error", new Error("disk image is malformed"), false],
]) {
  Deno.test(`deno-kv / ${what} is ${retried ? "retried" : "not retried"}`, async () => {
    const kv = await Deno.openKv(":memory:");
    try {
      const store = countingStore(denoKvStore(failingOnce(kv, error)));
      const claim = new Fencepost(store, fast).claim("k", 1);
      if (retried) {
        eq((await claim).won, true, "won after the retry");
        eq(store.requestCounts().put, 2, "two attempts");
      } else {
        const e = await rejects(claim, "not retried");
        assert(e instanceof lib.StorageError && e.message.includes(error.message), `${e}`);
        eq(store.requestCounts().put, 1, "one attempt");
      }
    } finally {
      kv.close();
    }
  });
}

// The shared store conformance suite of fencepost/testing, when this version has it.
// One in-memory database for all its cases (each case works under its own fresh prefix).
if (typeof testing.storeConformance === "function") {
  const kv = await Deno.openKv(":memory:");
  testing.storeConformance(denoKvStore(kv), { test: (name, fn) => Deno.test(`deno-kv / conformance / ${name}`, fn) });
}
