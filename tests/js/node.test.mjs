// The JS conformance suite under Node's test runner, on the installed package: memory, a custom store
// (a JS Map through customStore), SeaweedFS, moto, Azurite, fake-gcs-server.
import { describe, test } from "node:test";
import { inspect } from "node:util";
import { runInNewContext } from "node:vm";
import { Session } from "node:inspector/promises";
import { execFileSync } from "node:child_process";
import * as lib from "fencepost";
import * as testing from "fencepost/testing";
import * as zod from "zod";
import * as valibot from "valibot";
import { cases } from "./suite.js";
import { cloudFactories, s3Factories, serverSettings } from "../../js/support/servers.js";
import { mapStoreImpl } from "../../js/support/map-store.js";

// SeaweedFS, moto, Azurite and fake-gcs-server when running (scripts/test.sh starts them); memory
// alone otherwise.
const settings = serverSettings();
const stores = {
  memory: () => lib.memoryStore(),
  custom: () => lib.customStore(mapStoreImpl()),
  ...s3Factories(lib, settings, "node"),
  ...cloudFactories(lib, settings, "node"),
};

for (const [name, makeStore] of Object.entries(stores)) {
  describe(`node / ${name}`, () => {
    for (const c of cases({ lib, makeStore, schemas: { zod, valibot }, inspect, testing })) test(c.name, c.fn);
  });
}

// Plain objects made in another realm (node:vm, a test environment's globals, an iframe) are JSON
// as much as this realm's; a class instance from there is still refused.
describe("node / values from another realm", () => {
  test("a plain object, an array or an ArrayBuffer from node:vm is written; a Map from there is refused", async () => {
    const db = new lib.Fencepost(lib.memoryStore());
    const won = await db.claim("vm", runInNewContext("({a: 1, list: [{b: 2}]})"));
    if (JSON.stringify(won.value) !== '{"a":1,"list":[{"b":2}]}') throw new Error(JSON.stringify(won));
    const e = await db.claim("vm-map", runInNewContext("new Map()")).catch((err) => err);
    if (!(e instanceof lib.InvalidArgument)) throw new Error(`a Map from another realm: ${e}`);
    const put = await db.objects.put("vm-bytes", runInNewContext("new Uint8Array([1, 2]).buffer"));
    const got = await db.objects.get("vm-bytes");
    if (!put || got?.data.length !== 2) throw new Error("an ArrayBuffer from another realm was not written as bytes");
  });
});

// A caller's long-lived signal (a process-wide shutdown signal) passed to call after call keeps
// nothing of them: each call's listener goes when it settles, a watch's while it is between polls.
// (AbortSignal.any, which kept one signal per call, held 340 MB of heap per 100,000 calls.)
describe("node / a long-lived caller's signal", () => {
  test("collects no listener per call: withLease, once, withPermit, watch (dropped between polls)", async () => {
    const { getEventListeners } = await import("node:events");
    const db = new lib.Fencepost(lib.memoryStore());
    const shutdown = new AbortController();
    const signal = shutdown.signal;
    for (let i = 0; i < 20; i++) {
      await db.withLease(`w${i}`, { ttl: 30, signal }, async () => 1);
      await db.once(`o${i}`, async () => 1, { signal });
      await db.semaphore("pool", { limit: 2, ttl: 30 }).withPermit({ signal }, async () => 1);
      const watch = db.watch(`o${i}`, { signal })[Symbol.asyncIterator]();
      await watch.next(); // then dropped without return()
    }
    const left = getEventListeners(signal, "abort").length;
    if (left !== 0) throw new Error(`${left} listeners left on the caller's signal`);
    // Where AbortSignal.any keeps the signals it made from this one (Node's own bookkeeping).
    const dependants = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
    const kept = dependants ? signal[dependants]?.size ?? 0 : 0;
    if (kept !== 0) throw new Error(`${kept} signals made from the caller's signal are kept`);
  });
});

// A store whose list cursors go round in a circle: every listing gives up (a broken server), prune
// too, even with a synchronous store (which would otherwise hold the event loop for good).
describe("node / a store of one's own that lists out of order", () => {
  test("objects.entries still hands out each key once, in key order; a time past year 9999 is no time", async () => {
    const entry = (key, lastModified = 0) => ({ key, etag: `e-${key}`, size: 1, lastModified });
    const pages = { "": { entries: [entry("p/b"), entry("p/a"), entry("p/b")], cursor: "1" }, 1: { entries: [entry("p/a"), entry("p/c", 1e20)] } };
    const db = new lib.Fencepost(lib.customStore({
      get: () => null,
      put: () => ({ etag: "e" }),
      delete: () => true,
      list: (prefix, { cursor }) => pages[cursor ?? ""],
    }));
    const seen = [];
    for await (const e of db.objects.entries("p/")) seen.push([e.key, e.lastModified === null ? null : e.lastModified.getTime()]);
    if (JSON.stringify(seen) !== JSON.stringify([["p/a", 0], ["p/b", 0], ["p/c", null]])) throw new Error(JSON.stringify(seen));
  });
});

describe("node / a store of one's own: paging, refusals before anything applied, thrown objects", () => {
  test("checkStore follows a listing's pages (a store paging after 1 key passes)", async () => {
    const report = await lib.checkStore(lib.customStore(mapStoreImpl({ pageSize: 1 })));
    if (!report.ok) throw new Error(JSON.stringify(report.checks.filter((c) => !c.ok)));
  });
  test("a write refused with status 503 (or 429) is retried without a read-back; a thrown object's message is kept", async () => {
    const impl = /** @type {any} */ (mapStoreImpl());
    const [put, get] = [impl.put.bind(impl), impl.get.bind(impl)];
    let refusals = 1;
    let reads = 0;
    impl.put = async (...a) => {
      if (refusals-- > 0) throw { retryable: true, status: 503, code: "Locked", message: "database is locked" };
      return put(...a);
    };
    impl.get = async (...a) => (reads++, get(...a));
    const db = new lib.Fencepost(lib.customStore(impl), { retry: { baseDelay: 0.001, maxDelay: 0.002 } });
    const won = await db.claim("k", 1);
    if (!won.won || reads !== 0) throw new Error(`won ${won.won} after ${reads} read-backs`);
    refusals = 100;
    const e = await db.claim("j", 1).catch((err) => err);
    if (!(e instanceof lib.StorageError) || e instanceof lib.AmbiguousWriteError || !e.message.includes("database is locked") || e.status !== 503) {
      throw new Error(`refused throughout: ${e?.name} ${e?.message}`);
    }
  });
});

describe("node / a store whose cursors go round in a circle", () => {
  test("prune, list and entries fail with a MalformedResponse StorageError", async () => {
    const old = Date.now() - 3_600_000;
    const store = lib.customStore({
      get: () => null,
      put: () => ({ etag: "e" }),
      delete: () => true,
      // A page of one key each time, the same key: nothing new reaches an entries loop either.
      list: (prefix, { cursor }) => ({ entries: [{ key: `${prefix}a`, etag: "e", size: 1, lastModified: old }], cursor: cursor === "c1" ? "c0" : "c1" }),
    });
    const db = new lib.Fencepost(store);
    const entries = async () => {
      for await (const e of db.objects.entries("p/")) if (e.key !== "p/a") throw new Error(`listed ${e.key}`);
    };
    for (const call of [() => db.prune("p/", { olderThan: 0, dryRun: true }), () => db.objects.list("p/"), entries]) {
      const e = await call().catch((err) => err);
      if (!(e instanceof lib.StorageError) || e.s3Code !== "MalformedResponse") throw new Error(`${e}`);
    }
  });
});

// storeConformance as node:test users call it: each case a test of theirs.
describe("node / storeConformance({test})", () => {
  testing.storeConformance(lib.memoryStore(), { test });
});

// What a debugger shows of a handle (Chromium's console lists private fields, a Proxy's target, a
// function's closure scopes): walked here through V8's inspector, as DevTools expands an object.
// No credential may be there: not the S3, Azure or GCS secrets, not a lease's holder.
test("node / a debugger expanding handles finds no credential", async () => {
  const secrets = { s3: "S3-SECRET-ab12", session: "S3-SESSION-cd34", azure: Buffer.from("AZURE-KEY-ef56").toString("base64"),
    token: "GCS-TOKEN-gh78", holder: "LEASE-HOLDER-ij90" };
  const db = new lib.Fencepost(lib.memoryStore());
  globalThis.__handles = {
    s3: new lib.Fencepost(lib.s3Store({ endpoint: "http://127.0.0.1:9", bucket: "b", accessKeyId: "AKIA-ID", secretAccessKey: secrets.s3, sessionToken: secrets.session })),
    azure: lib.azureStore({ account: "acct", container: "box", accountKey: secrets.azure }),
    gcs: lib.gcsStore({ bucket: "bkt", accessToken: secrets.token }),
    gcsFn: lib.gcsStore({ bucket: "bkt", getAccessToken: () => secrets.token }),
    lease: await db.lease("k", { ttl: 30, holder: secrets.holder }),
    doc: db.doc("d"),
  };
  const session = new Session();
  session.connect();
  const seen = [];
  let budget = 5000;
  const walk = async (objectId, depth) => {
    const got = await session.post("Runtime.getProperties", { objectId, ownProperties: true, generatePreview: false });
    const props = [...got.result, ...(got.privateProperties ?? []), ...(got.internalProperties ?? [])];
    for (const p of props) {
      if (--budget < 0 || p.name === "__proto__" || p.name === "[[Prototype]]") continue;
      const v = p.value;
      if (!v) continue;
      seen.push(`${p.name}=${v.type === "string" ? v.value : v.description ?? ""}`);
      // Not into the wasm module and its memory, nor the globals a closure scope reaches.
      if (v.objectId && depth > 0 && !/^(WebAssembly|Memory|ArrayBuffer|Uint8Array|global|Global)/.test(v.className ?? "") && p.name !== "globalThis") {
        await walk(v.objectId, depth - 1);
      }
    }
  };
  try {
    const { result } = await session.post("Runtime.evaluate", { expression: "globalThis.__handles" });
    await walk(result.objectId, 5);
  } finally {
    session.disconnect();
    delete globalThis.__handles;
  }
  const text = seen.join("\n");
  for (const [what, secret] of Object.entries(secrets)) {
    if (text.includes(secret)) throw new Error(`${what} shown: ${seen.filter((l) => l.includes(secret)).join(" | ")}`);
  }
  if (!text.includes("LEASE-HOLDER") && !/#db|#recipe/.test(text)) throw new Error("the walk saw no private fields");
});

// The browser entry's lazy load (pkg/runtime.js itself, in a fresh process: the Node entry loads
// the wasm at import): a default place that cannot even be named (a bundle without
// `import.meta.url`) is a rejected FencepostError, not a synchronous TypeError; a source given
// while a call's load from the default place is on its way is tried when that fails, and the
// call that started first follows it.
test("node / initWasm: an unknown default place rejects typed; a later initWasm(source) takes over a failing load", () => {
  const runtime = new URL("../../pkg/runtime.js", import.meta.url).href;
  const wasm = new URL("../../pkg/fencepost_bg.wasm", import.meta.url).pathname;
  const script = `
    const rt = await import(${JSON.stringify(runtime)});
    const bytes = (await import("node:fs")).readFileSync(${JSON.stringify(wasm)});
    const out = [];
    rt.setDefaultSource(() => { throw new TypeError("Invalid URL"); });
    let p;
    try { p = rt.initWasm(); out.push("returned " + typeof p?.then); } catch (e) { out.push("threw " + e.name); }
    out.push(await p.then(() => "ok", (e) => e.constructor.name + ": " + /could not load its wasm core: Invalid URL/.test(e.message)));
    rt.setDefaultSource(() => new URL("file:///nonexistent/fencepost_bg.wasm"));
    const first = rt.whenReady().then(() => "first ok", (e) => "first " + e.message.slice(0, 60));
    const given = rt.initWasm(bytes).then(() => "given ok", (e) => "given " + e.message.slice(0, 60));
    out.push(await given, await first, rt.isReady());
    console.log(JSON.stringify(out));`;
  const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
  const want = ["returned function", "FencepostError: true", "given ok", "first ok", true];
  if (JSON.stringify(out) !== JSON.stringify(want)) throw new Error(JSON.stringify(out));
});

// An advance that runs out of due instants says so (a TimeoutError) instead of resolving short;
// each instant costs a setImmediate here, not a 1 ms setTimeout.
test("node / manualClock.advance stopped short by its step bound rejects with TimeoutError", async () => {
  const clock = testing.manualClock();
  const db = new lib.Fencepost(lib.memoryStore(), { clock });
  const polls = db.watch("w", { interval: 0.05 });
  await polls.next();
  const pending = polls.next();
  const start = clock.now();
  const e = await clock.advance(5100).catch((err) => err);
  if (!(e instanceof lib.TimeoutError) || !/short of its end/.test(e.message)) throw new Error(`expected a TimeoutError: ${e}`);
  const moved = (clock.now() - start) / 1000;
  if (!(moved >= 4999 && moved < 5100)) throw new Error(`the clock moved ${moved} s`);
  await polls.return();
  await pending;
  await clock.advance(1); // the next advance goes on from where this one stopped
});

// The run leaves the caller's store as it found it: a memory store keeps the first manual clock
// it is used under, so no case may use one on it (keys written afterwards would be stamped in
// 2026-01-01's time, and a real-time prune would delete them at once).
test("node / storeConformance leaves a memory store on the real clock", async () => {
  const store = lib.memoryStore();
  const report = await testing.storeConformance(store);
  if (!report.ok) throw new Error(JSON.stringify(report.cases.filter((c) => !c.ok)));
  const db = new lib.Fencepost(store);
  await db.objects.put("fresh", "x");
  const age = Date.now() - (await db.inspect("fresh")).lastModified.getTime();
  if (!(age >= 0 && age < 60_000)) throw new Error(`written ${age} ms ago by the store's clock`);
  const pruned = await db.prune("", { olderThan: 3600 });
  if (pruned.deleted !== 0) throw new Error(`prune deleted ${JSON.stringify(pruned.keys)}`);
});

// Store conformance must fail, naming the case, on a store that breaks what fencepost relies on.
describe("node / store conformance catches a broken custom store", () => {
  const broken = {
    "ignores ifMatch": [{ ignoreIfMatch: true }, "a compare-and-swap lands on the current etag only (If-Match)"],
    "ignores ifNoneMatch": [{ ignoreIfNoneMatch: true }, "a create-only write of an existing key is refused (If-None-Match: *)"],
    "loses meta": [{ loseMeta: true }, "write tokens (meta) round-trip: a claim whose response was lost is still won"],
    "counts etags per key": [{ etagPerKey: true }, "an etag names one version of a key: a write after a delete gets an etag not given before (nor, in a custom store, the same bytes again)"],
    "hashes its bytes for etags": [{ etagOfBytes: true }, "an etag names one version of a key: a write after a delete gets an etag not given before (nor, in a custom store, the same bytes again)"],
    "keeps only part of meta": [{ firstMetaOnly: true }, "all of meta round-trips: an update whose answer was lost is settled even after another writer built on it"],
    "drops a version's origin": [{ dropMeta: "fencepost-origin" }, "all of meta round-trips: an update whose answer was lost is settled even after another writer built on it"],
    "pages by offset": [{ offsetCursor: true, pageSize: 2 }, "listing goes on past keys deleted since the last page: a cursor is a place in the key order"],
    "deletes whatever the etag": [{ ignoreDeleteIfMatch: true },
      "delete: a deleted key reads null; deleting a missing key is no error; a stale etag deletes nothing; prune keeps a held lease"],
  };
  for (const [what, [flaws, caseName]] of Object.entries(broken)) {
    test(`a custom store that ${what} fails "${caseName}"`, async () => {
      const report = await testing.storeConformance(lib.customStore(mapStoreImpl(flaws)));
      const failed = report.cases.filter((c) => !c.ok).map((c) => c.name);
      if (report.ok || !failed.includes(caseName)) throw new Error(`expected "${caseName}" among the failures, got ${JSON.stringify(failed)}`);
    });
  }
  test("a correct custom store passes every case", async () => {
    const report = await testing.storeConformance(lib.customStore(mapStoreImpl()));
    if (!report.ok || report.cases.length < 14) throw new Error(JSON.stringify(report.cases.filter((c) => !c.ok)));
  });
  test("a delete answered with something other than a boolean (or nothing) is a malformed answer", async () => {
    const impl = /** @type {any} */ (mapStoreImpl());
    const plain = impl.delete.bind(impl);
    impl.delete = async (/** @type {string} */ key, /** @type {any} */ o) => (await plain(key, o), "x");
    const e = await new lib.Fencepost(lib.customStore(impl)).objects.delete("k").catch((err) => err);
    if (!(e instanceof lib.StorageError) || e.s3Code !== "MalformedResponse") throw new Error(`expected a MalformedResponse: ${e}`);
    impl.delete = async (/** @type {string} */ key, /** @type {any} */ o) => void (await plain(key, o));
    await new lib.Fencepost(lib.customStore(impl)).objects.delete("k"); // nothing answered: fine
  });
  test("a put answered with nothing is a malformed answer, not a refused condition (it may have written)", async () => {
    const impl = /** @type {any} */ (mapStoreImpl());
    const plain = impl.put.bind(impl);
    impl.put = async (/** @type {any[]} */ ...args) => void plain(...args);
    const db = new lib.Fencepost(lib.customStore(impl), { retry: { maxAttempts: 1 } });
    for (const call of [() => db.claim("c", 1), () => db.lease("l", { ttl: 5 }), () => db.objects.put("o", "x", { ifAbsent: true })]) {
      const e = await call().then((r) => r, (err) => err);
      if (!(e instanceof lib.StorageError) || e.s3Code !== "MalformedResponse" || !/undefined/.test(e.message)) throw new Error(`expected a MalformedResponse: ${e}`);
    }
  });
});

// A custom store's thrown `retryable` error: a read is tried again; a write is read back first
// (it may have landed), and tried again when the read-back proves it did not (a custom store's
// etags never come back, so the etag the write named still being there is that proof).
// A bucket shared with CairnDB holds its engine's objects under log/, snapshots/, logs/ and
// txapplied/: a listing shows them, but fencepost never deletes them.
describe("node / prune on a bucket shared with CairnDB", () => {
  test("objects under the reserved prefixes are kept, even by a prune of everything; a reserved prefix is refused", async () => {
    const impl = /** @type {any} */ (mapStoreImpl());
    const db = new lib.Fencepost(lib.customStore(impl));
    for (const key of ["app/old", "log/0001.json", "snapshots/s1", "logs/x", "txapplied/t"]) {
      impl.put(key, new TextEncoder().encode("{}"), { meta: {} });
    }
    const tenDaysAgo = Date.now() - 10 * 86_400_000;
    const [realList, realGet] = [impl.list.bind(impl), impl.get.bind(impl)];
    impl.list = (/** @type {any[]} */ ...args) => {
      const page = realList(...args);
      return { ...page, entries: page.entries.map((/** @type {any} */ e) => ({ ...e, lastModified: tenDaysAgo })) };
    };
    impl.get = (/** @type {string} */ key) => {
      const o = realGet(key);
      return o && { ...o, lastModified: tenDaysAgo };
    };
    const dry = await db.prune("", { olderThan: 86_400, dryRun: true });
    if (JSON.stringify([dry.deleted, dry.kept, dry.keys]) !== JSON.stringify([1, 4, ["app/old"]])) throw new Error(`dry run: ${JSON.stringify(dry)}`);
    const pruned = await db.prune("", { olderThan: 86_400 });
    if (JSON.stringify([pruned.deleted, pruned.kept, pruned.keys]) !== JSON.stringify([1, 4, ["app/old"]])) throw new Error(`prune: ${JSON.stringify(pruned)}`);
    for (const key of ["log/0001.json", "snapshots/s1", "logs/x", "txapplied/t"]) if (!impl.get(key)) throw new Error(`${key} was deleted`);
    const refused = await db.prune("log/", { olderThan: 0 }).catch((e) => e);
    if (!(refused instanceof lib.InvalidArgument) || !/reserved prefix "log\/"/.test(refused.message)) throw new Error(`refused: ${refused}`);
  });
});

describe("node / a custom store's retryable failures", () => {
  /** A Map store whose next `n` calls of `method` throw a retryable error first; counts every call. */
  function flaky() {
    const impl = /** @type {any} */ (mapStoreImpl());
    const calls = { get: 0, put: 0, delete: 0, list: 0 };
    const failing = { get: 0, put: 0, delete: 0, list: 0 };
    for (const m of /** @type {const} */ (["get", "put", "delete", "list"])) {
      const real = impl[m].bind(impl);
      impl[m] = (/** @type {any[]} */ ...args) => {
        calls[m]++;
        if (failing[m] > 0) {
          failing[m]--;
          throw Object.assign(new Error("try again"), { retryable: true, status: 500 }); // may have landed (a 503 says it did not)
        }
        return real(...args);
      };
    }
    const retry = { maxAttempts: 3, baseDelay: 0.001, maxDelay: 0.002 };
    return { db: new lib.Fencepost(lib.customStore(impl), { retry }), calls, failing };
  }

  test("an ifMatch put that failed retryably is read back, then put again", async () => {
    const { db, calls, failing } = flaky();
    const first = await db.objects.put("k", "1");
    Object.assign(calls, { get: 0, put: 0 });
    failing.put = 1;
    const second = await db.objects.put("k", "2", { ifMatch: first.etag });
    if (!second?.etag || second.etag === first.etag) throw new Error(`written: ${JSON.stringify(second)}`);
    if (calls.put !== 2 || calls.get !== 1) throw new Error(`a put, a read-back, a put: ${JSON.stringify(calls)}`);
    if (new TextDecoder().decode((await db.objects.get("k")).data) !== "2") throw new Error("the new value is stored");
  });

  test("a read that failed retryably is tried again; a write that cannot be proven either way is an AmbiguousWriteError", async () => {
    const { db, calls, failing } = flaky();
    await db.objects.put("k", "1");
    failing.get = 2;
    calls.get = 0;
    if (new TextDecoder().decode((await db.objects.get("k")).data) !== "1") throw new Error("read");
    if (calls.get !== 3) throw new Error(`three attempts: ${calls.get}`);
    // A plain put over an existing key: the read-back shows a version that is not ours, which ours
    // may have preceded, so a second put could write twice.
    failing.put = 1;
    const err = await db.objects.put("k", "2").catch((e) => e);
    if (!(err instanceof lib.AmbiguousWriteError)) throw new Error(`ambiguous: ${err}`);
  });
});
