// `storeConformance(store, {test?})`: does a store do what fencepost relies on? The cases the
// package's own suites run against every store they reach, exported so a store's author (a
// `customStore`, an S3-compatible server, a bucket behind a proxy) can run them from their own test
// runner before relying on it. Each case works under a fresh `__fencepost_conformance/<random>/`
// key prefix and deletes what it wrote. Where `checkStore` checks a bucket once before use (each
// property once), this exercises the store through fencepost's own operations, with the request
// counts each must cost.

import { InvalidArgument } from "./errors.js";
import { options } from "./options.js";
import { Fencepost as Client } from "./db.js";
import { checkStore, countingStore, toStore } from "./stores.js";
import { faultStore } from "./faults.js";

/** The client as users call it (optional options and all: the types in index.d.ts), untyped here. @type {any} */
const Fencepost = Client;

/** A failed expectation: the case's error. */
function expect(/** @type {boolean} */ ok, /** @type {string} */ what) {
  if (!ok) throw new Error(what);
}

const text = (/** @type {{data: Uint8Array} | null} */ o) => (o ? new TextDecoder().decode(o.data) : null);
const random = () => crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(36), "");

/** Retries of transient failures kept short: a store that keeps failing shows up within the case. */
const RETRY = { maxAttempts: 4, baseDelay: 0.02, maxDelay: 0.2 };

/**
 * The cases: `[name, fn(space)]`, each given its key prefix and a store on it. A case throws (or
 * rejects) with what the store did instead.
 * @type {[string, (s: {store: any, ns: string, db: any}) => Promise<void>][]}
 */
const CASES = [
  ["a create-only write of an existing key is refused (If-None-Match: *)", async ({ db, ns }) => {
    const first = await db.objects.put(`${ns}k`, "first", { ifAbsent: true });
    expect(first !== null, "the first create-only write of a new key was refused");
    const second = await db.objects.put(`${ns}k`, "second", { ifAbsent: true });
    expect(second === null, "a create-only write of an existing key landed: the store ignores ifNoneMatch");
    expect(text(await db.objects.get(`${ns}k`)) === "first", "the key no longer holds the first write");
  }],
  ["a compare-and-swap lands on the current etag only (If-Match)", async ({ db, ns }) => {
    const v1 = await db.objects.put(`${ns}k`, "v1");
    const v2 = await db.objects.put(`${ns}k`, "v2", { ifMatch: /** @type {any} */ (v1).etag });
    expect(v2 !== null && v2.etag !== null && v2.etag !== v1?.etag, "a write on the current etag was refused, or kept the old etag");
    const stale = await db.objects.put(`${ns}k`, "stale", { ifMatch: /** @type {any} */ (v1).etag });
    expect(stale === null, "a write naming a replaced etag landed: the store ignores ifMatch");
    const missing = await db.objects.put(`${ns}absent`, "x", { ifMatch: /** @type {any} */ (v2).etag });
    expect(missing === null, "a write naming an etag on a missing key landed: the store ignores ifMatch there");
    // Etags are opaque: one this store never gave (another store's, a typo) matches nothing, and is no error.
    for (const key of [`${ns}k`, `${ns}absent`]) {
      const foreign = await db.objects.put(key, "foreign", { ifMatch: "\"0f-not-an-etag-of-this-store\"" });
      expect(foreign === null, `a write naming an etag the store never gave landed on ${key.slice(ns.length)}`);
    }
    expect(text(await db.objects.get(`${ns}k`)) === "v2", "the key does not hold the last successful write");
  }],
  ["a read gives back the bytes and etag written; a missing key reads null", async ({ db, ns }) => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const put = await db.objects.put(`${ns}bytes`, bytes);
    const got = await db.objects.get(`${ns}bytes`);
    expect(got !== null && got.etag === put?.etag, "the read's etag is not the write's");
    expect(got?.data.length === 256 && got.data.every((/** @type {number} */ b, /** @type {number} */ i) => b === i), "the bytes read are not the bytes written");
    expect((await db.objects.get(`${ns}absent`)) === null, "a key never written did not read null");
  }],
  ["write tokens (meta) round-trip: a claim whose response was lost is still won", async ({ store, ns }) => {
    const faults = faultStore(store, {});
    faults.inject("lostResponse", { op: "put", key: ns });
    const claim = await new Fencepost(faults, { retry: RETRY }).claim(`${ns}tick`, { by: "me" });
    expect(claim.won, "the write landed but was not recognised as ours on read-back: the store loses meta");
  }],
  ["all of meta round-trips: an update whose answer was lost is settled even after another writer built on it", async ({ store, ns }) => {
    // X's update lands but its answer is lost, and its read-back waits (1 s) while Y updates on
    // top of it. Y's write carries the tokens of the versions it replaced in its meta: a store
    // that keeps only part of meta loses that history, and X could only give up (an
    // AmbiguousWriteError) instead of learning that its write landed.
    const key = `${ns}doc`;
    const faults = faultStore(store, {});
    const x = new Fencepost(faults, { retry: RETRY });
    await x.doc(key).update(() => 1, { create: 0 });
    faults.inject("lostResponse", { op: "put", key });
    faults.inject({ delay: 1 }, { op: "get", key });
    const landed = x.doc(key).update((/** @type {number} */ n) => n + 10).then((/** @type {number} */ v) => ({ v, e: undefined }), (/** @type {any} */ e) => ({ v: undefined, e }));
    // Y builds on X's write once it is there (read past the fault store: its delay is X's).
    const y = new Fencepost(store, { retry: RETRY });
    for (let i = 0; i < 200 && text(await y.objects.get(key)) !== "11"; i++) await new Promise((r) => setTimeout(r, 5));
    await y.doc(key).update((/** @type {number} */ n) => n + 100);
    const { v, e } = await landed;
    expect(e === undefined, `X's lost update was not settled once Y built on it (${e?.name}: ${e?.message}): the store keeps only part of meta`);
    expect(v === 11, `X's update resolved ${JSON.stringify(v)}, not the 11 it wrote`);
    // A version also carries the lineage it started (its origin): a claim whose put went unanswered,
    // on a key another caller created, reads that back and knows it lost, rather than giving up.
    const claimed = `${ns}claimed`;
    await y.claim(claimed, "y");
    faults.inject("transport", { op: "put", key: claimed });
    const lost = await x.claim(claimed, "x").catch((/** @type {any} */ err) => err);
    expect(lost?.won === false, `a claim whose put went unanswered, on a key another caller created, answered ${lost?.name ?? JSON.stringify(lost)} (not won: false): the store keeps only part of meta`);
  }],
  ["16 concurrent claims of one key: exactly one winner, every other caller gets its value", async ({ store, ns }) => {
    const racers = Array.from({ length: 16 }, (_, i) => new Fencepost(store, { retry: RETRY }).claim(`${ns}race`, { racer: i }));
    const results = await Promise.all(racers);
    const winners = results.filter((r) => r.won);
    expect(winners.length === 1, `${winners.length} of 16 concurrent claims won: creates are not atomic`);
    const value = JSON.stringify(winners[0]?.value);
    expect(results.every((r) => JSON.stringify(r.value) === value), "a loser was told another value than the winner's");
  }],
  ["8 concurrent compare-and-swap increments: none lost", async ({ store, ns }) => {
    const bump = () => new Fencepost(store, { retry: RETRY }).doc(`${ns}counter`).update((/** @type {number} */ n) => n + 1, { create: 0, maxAttempts: 40 });
    await Promise.all(Array.from({ length: 8 }, bump));
    const got = await new Fencepost(store, {}).doc(`${ns}counter`).get({});
    expect(got?.value === 8, `the counter is ${got?.value} after 8 increments: compare-and-swap is not atomic`);
  }],
  ["leases: each acquisition a higher epoch; a replaced holder is fenced", async ({ store, ns }) => {
    // Expiry seen by a client whose clock reads 11 s ahead (`now`), not by a manual clock: a
    // memory store keeps the first manual clock it is used under, and this is the caller's store.
    const first = await new Fencepost(store, { retry: RETRY }).lease(`${ns}job`, { ttl: 10 });
    expect(first?.epoch === 1, `a fresh lease had epoch ${first?.epoch}`);
    expect((await new Fencepost(store, { retry: RETRY }).lease(`${ns}job`, { ttl: 10 })) === null, "a held lease was taken");
    const later = new Fencepost(store, { retry: RETRY, now: () => Date.now() + 11_000 });
    const second = await later.lease(`${ns}job`, { ttl: 10 });
    expect(second?.epoch === 2, `the lease taken over after expiry had epoch ${second?.epoch}`);
    const fenced = await /** @type {any} */ (first).renew().then(() => "renewed", (/** @type {any} */ e) => e?.code);
    expect(fenced === "LEASE_LOST", `the replaced holder's renewal was ${fenced}, not LEASE_LOST`);
    await /** @type {any} */ (second).release();
  }],
  // ASCII keys of one depth are ordered: some S3-compatible servers (SeaweedFS) list `c/d` before
  // `c-e` and non-ASCII keys in an order of their own, which S3's byte order puts otherwise;
  // fencepost's listings rely only on the store's order being the same from page to page.
  ["listing: the keys under a prefix, in ascending byte order, resumable after a key", async ({ db, ns }) => {
    const keys = ["b", "a", "c-e", "c", "Z", "z", "_", "0"].map((k) => `${ns}list/${k}`);
    for (const k of keys) await db.objects.put(k, "x");
    await db.objects.put(`${ns}other`, "x");
    const bytes = (/** @type {string} */ k) => new TextEncoder().encode(k);
    const byBytes = (/** @type {string} */ a, /** @type {string} */ b) => {
      const [x, y] = [bytes(a), bytes(b)];
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    };
    const want = [...keys].sort(byBytes);
    const listed = await db.objects.list(`${ns}list/`);
    expect(JSON.stringify(listed) === JSON.stringify(want), `listed ${JSON.stringify(listed)}, expected ${JSON.stringify(want)}`);
    const after = [];
    for await (const e of db.objects.entries(`${ns}list/`, { startAfter: want[2] })) after.push(e.key);
    expect(JSON.stringify(after) === JSON.stringify(want.slice(3)), `entries after ${want[2]}: ${JSON.stringify(after)}`);
  }],
  // A lease's fencing rests on an etag never naming two versions of a key: a per-key counter
  // that starts again after a delete would let a replaced holder's guarded write land.
  ["an etag names one version of a key: a write after a delete gets an etag not given before (nor, in a custom store, the same bytes again)", async ({ store, db, ns }) => {
    const seen = [];
    for (const v of ["one", "two"]) seen.push(/** @type {any} */ (await db.objects.put(`${ns}k`, v)).etag);
    await db.objects.delete(`${ns}k`);
    const again = /** @type {any} */ (await db.objects.put(`${ns}k`, "three")).etag;
    expect(!seen.includes(again), `a write after a delete was given the etag ${JSON.stringify(again)} of an earlier version`);
    // A custom store promises etags that never come back, and fencepost settles a lost write's
    // outcome by it: a hash of the bytes gives the same bytes written again an earlier etag, and
    // a write whose answer was lost could then be applied twice. (S3's MD5 does so: fencepost
    // does not rely on it there.)
    if (store.kind === "custom") {
      const same = /** @type {any} */ (await db.objects.put(`${ns}k`, "one")).etag;
      expect(![...seen, again].includes(same),
        `the bytes "one" written again were given the etag ${JSON.stringify(same)} of an earlier version: a custom store's etags must never come back (a hash of the bytes does)`);
    }
  }],
  // prune and `entries` delete as they go: a cursor that counts entries (an offset) would skip
  // keys once the ones before it are gone. (8 keys: a store whose pages hold more shows it only
  // past its first page, which this case does not reach.)
  ["listing goes on past keys deleted since the last page: a cursor is a place in the key order", async ({ db, ns }) => {
    const keys = Array.from({ length: 8 }, (_, i) => `${ns}gone/${i}`);
    for (const k of keys) await db.objects.put(k, "x");
    const listed = [];
    for await (const e of db.objects.entries(`${ns}gone/`)) {
      listed.push(e.key);
      await db.objects.delete(e.key);
    }
    expect(JSON.stringify(listed) === JSON.stringify(keys), `listed ${JSON.stringify(listed)} while deleting each key listed, expected all 8`);
  }],
  ["a read naming the current etag answers not modified; after a write, the new version", async ({ db, ns }) => {
    const put = await db.objects.put(`${ns}k`, "v1");
    const same = await db.objects.get(`${ns}k`, { ifNoneMatch: /** @type {any} */ (put).etag });
    expect(same !== null && "notModified" in same, "an unchanged key did not answer not modified");
    await db.objects.put(`${ns}k`, "v2");
    const changed = await db.objects.get(`${ns}k`, { ifNoneMatch: /** @type {any} */ (put).etag });
    expect(changed !== null && "data" in changed && text(changed) === "v2", "a changed key did not answer its new version");
  }],
  ["delete: a deleted key reads null; deleting a missing key is no error; a stale etag deletes nothing; prune keeps a held lease", async ({ store, db, ns }) => {
    await db.objects.put(`${ns}k`, "x");
    await db.objects.delete(`${ns}k`);
    expect((await db.objects.get(`${ns}k`)) === null, "a deleted key still reads");
    await db.objects.delete(`${ns}never`);
    await db.objects.put(`${ns}old/a`, "x");
    const held = await db.lease(`${ns}old/lease`, { ttl: 86_400 });
    // Everything is older than zero seconds from an hour on.
    const later = new Fencepost(store, { now: () => Date.now() + 3_600_000, retry: RETRY });
    // A store that lists no lastModified has nothing prune can judge by: it then deletes nothing.
    let dated = false;
    for await (const e of db.objects.entries(`${ns}old/a`)) dated = e.lastModified !== null;
    const pruned = await later.prune(`${ns}old/`, { olderThan: 1 });
    const want = dated ? [`${ns}old/a`] : [];
    expect(JSON.stringify(pruned.keys) === JSON.stringify(want), `prune deleted ${JSON.stringify(pruned.keys)}, not ${JSON.stringify(want)}`);
    expect((await db.objects.get(`${ns}old/lease`)) !== null, "prune deleted a held lease");
    await /** @type {any} */ (held).release();
    // Where the store offers a conditional delete (a custom store always does), prune counts on it
    // to spare an object rewritten since its re-read (a lease just taken): it must refuse a stale etag.
    const conditional = (await checkStore(store)).checks.find((c) => c.name === "conditional DELETE (If-Match)");
    expect(!conditional || conditional.ok || /^not used/.test(conditional.detail),
      `a delete naming a stale etag: ${conditional?.detail} (prune would delete an object changed since it read it)`);
  }],
  ["keys with slashes, spaces, quotes, non-ASCII and 900 bytes round-trip", async ({ db, ns }) => {
    // 900 bytes in all, in segments of at most 200 (file-backed stores cap a segment at 255).
    const long = Array.from({ length: 5 }, (_, i) => String(i).repeat(200)).join("/").slice(0, 900 - new TextEncoder().encode(ns).length);
    const keys = ["a/b/c", "with space", "q'u\"o?te&=+", "caf\u00e9/\u65e5\u672c/\u{1F600}", long];
    for (const k of keys) {
      await db.objects.put(`${ns}${k}`, k);
      expect(text(await db.objects.get(`${ns}${k}`)) === k, `key ${JSON.stringify(k.slice(0, 40))} did not round-trip`);
    }
  }],
  ["each operation costs the fewest requests (claim 1 won, 2 lost; lease 2 fresh, 1 held; renew 1; doc.update 1 on a current handle)", async ({ store, ns }) => {
    const counted = countingStore(store);
    const db = new Fencepost(counted, {});
    const cost = async (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ fn, /** @type {number} */ want) => {
      counted.resetRequestCounts();
      await fn();
      const { total } = counted.requestCounts();
      expect(total === want, `${what} cost ${total} requests, not ${want}`);
    };
    await cost("a won claim", () => db.claim(`${ns}c`, 1), 1);
    await cost("a lost claim", () => db.claim(`${ns}c`, 2), 2);
    /** @type {any} */
    let lease;
    await cost("a fresh lease", async () => (lease = await db.lease(`${ns}l`, { ttl: 60 })), 2);
    await cost("a held lease", () => new Fencepost(counted, {}).lease(`${ns}l`, { ttl: 60 }), 1);
    await cost("a renewal", () => lease.renew(), 1);
    await cost("a release", () => lease.release(), 1);
    const doc = db.doc(`${ns}d`);
    await doc.update((/** @type {number} */ n) => n + 1, { create: 0 });
    await cost("doc.update on a current handle", () => doc.update((/** @type {number} */ n) => n + 1), 1);
  }],
];

/** Delete what a case wrote (best effort: a store failing here has failed its case already). */
async function cleanUp(/** @type {any} */ db, /** @type {string} */ ns) {
  try {
    for (const key of await db.objects.list(ns)) await db.objects.delete(key);
  } catch {
    // left for the store's own clean-up (a lifecycle rule on __fencepost_conformance/)
  }
}

/** One case on a fresh prefix of `store`. */
async function runCase(/** @type {any} */ store, /** @type {(typeof CASES)[number][1]} */ fn) {
  const ns = `__fencepost_conformance/${random()}/`;
  const db = new Fencepost(store, { retry: RETRY });
  try {
    await fn({ store, ns, db });
  } finally {
    await cleanUp(db, ns);
  }
}

/** @typedef {{ok: boolean, passed: number, failed: number, cases: {name: string, ok: boolean, error?: string}[]}} StoreConformanceReport */

/**
 * Run the store conformance cases against `store`. With `{test}` — node:test's or bun:test's
 * `test`, vitest's `test`/`it`, `Deno.test`: anything called as `test(name, fn)` — each case is
 * registered as a test of that runner and nothing is returned. Without it, every case runs now, one
 * after another, and the Promise resolves to `{ok, passed, failed, cases: [{name, ok, error?}]}`.
 * @overload
 * @param {any} store @param {{test: (name: string, fn: () => Promise<void>) => unknown}} opts
 * @returns {void}
 */
/**
 * @overload
 * @param {any} store @param {{signal?: AbortSignal}} [opts]
 * @returns {Promise<StoreConformanceReport>}
 */
/**
 * @param {any} store @param {any} [opts]
 * @returns {Promise<StoreConformanceReport> | void}
 */
export function storeConformance(store, opts) {
  let test, signal, s;
  try {
    ({ test, signal } = options(opts, { test: "function", signal: "signal" }, "storeConformance options"));
    if (test && signal) throw new InvalidArgument("storeConformance options: a test runner stops its own tests; give test or signal, not both");
    s = toStore(store);
  } catch (e) {
    // Registering tests is synchronous, so is its refusal; the report's form is a Promise, and
    // rejects, as every asynchronous call of the package does with bad arguments.
    if (typeof opts?.test === "function") throw e;
    return Promise.reject(e);
  }
  if (test) {
    for (const [name, fn] of CASES) test(name, () => runCase(s, fn));
    return;
  }
  return (async () => {
    /** @type {{name: string, ok: boolean, error?: string}[]} */
    const cases = [];
    for (const [name, fn] of CASES) {
      // Between cases: a case runs to its end, so that it cleans up what it wrote.
      if (signal?.aborted) throw signal.reason;
      try {
        await runCase(s, fn);
        cases.push({ name, ok: true });
      } catch (e) {
        cases.push({ name, ok: false, error: e instanceof Error ? e.message : String(e) });
      }
    }
    const failed = cases.filter((c) => !c.ok).length;
    return { ok: failed === 0, passed: cases.length - failed, failed, cases };
  })();
}
