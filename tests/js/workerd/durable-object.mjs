// Durable Objects for the workerd stage: `durableObjectStore(this.ctx.storage)` tested inside the
// object, on both storage backends (FencepostKvObject: KV-backed; FencepostSqliteObject:
// SQLite-backed; run.mjs binds them as FENCEPOST_DO_KV and FENCEPOST_DO_SQLITE). The test worker
// forwards /cases and /run for stores do-kv and do-sqlite to one object per backend ("suite"),
// which answers as the worker does for other stores:
//   the JS conformance suite (tests/js/suite.js) on the object's storage, a fresh prefix per case;
//   the checks below (checkStore, races inside the object and from outside it, leases, counts, the
//   value limit, listing, validation);
//   storeConformance's report, when fencepost/testing has it (one result per case).
// Another object of the same class (a fresh name) is the target of the races from outside: it
// answers /claim and /increment, one Fencepost per request.
import * as lib from "fencepost";
import * as testing from "fencepost/testing";
import * as zod from "zod";
import * as valibot from "valibot";
import { assert, cases, eq, rejects } from "../suite.js";
import { runCases } from "../harness.js";
import { freshPrefix } from "../../../js/support/servers.js";

/** Store name (as run.mjs lists it) → the binding of its namespace. */
export const DO_STORES = { "do-kv": "FENCEPOST_DO_KV", "do-sqlite": "FENCEPOST_DO_SQLITE" };

const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const RETRY = { maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05 };

/** Counts since the last call (then reset), as {get, put, delete, list}. */
function counter(store) {
  return () => {
    const { get, put, delete: del, list } = store.requestCounts();
    store.resetRequestCounts();
    return { get, put, delete: del, list };
  };
}
const req = (get, put, del = 0, list = 0) => ({ get, put, delete: del, list });

/**
 * The checks run inside the object: `[name, fn(t)]` with t = {storage, sqlite, store(), notes,
 * outside()}: `store()` a durableObjectStore on a fresh prefix, `notes` lines the runner prints
 * under the result, `outside()` a stub of a fresh object of this class.
 */
const CHECKS = [
  ["durableObjectStore: checkStore passes every required check", async (t) => {
    const report = await lib.checkStore(t.store());
    for (const c of report.checks) t.notes.push(`${c.ok ? "ok  " : c.required ? "FAIL" : "no  "} ${c.required ? "required" : "info    "} ${c.name}: ${c.detail}`);
    const failed = report.checks.filter((c) => c.required && !c.ok).map((c) => `${c.name}: ${c.detail}`);
    assert(report.ok && failed.length === 0, `every required check passes: ${failed.join("; ")}`);
    const del = report.checks.find((c) => c.name.startsWith("conditional DELETE"));
    assert(del?.ok, `conditional DELETE is honoured (a transaction): ${del?.detail}`);
  }],

  ["durableObjectStore: 16 concurrent db.claim calls inside the object: one winner, every loser gets its value", async (t) => {
    const db = new lib.Fencepost(t.store(), { retry: RETRY });
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => db.claim("race", { racer: i })));
    const winners = results.filter((r) => r.won);
    eq(winners.length, 1, "winners");
    for (const r of results) eq(r.value, winners[0].value, "every caller is told the winner's value");
    eq((await db.objects.list("")).length, 1, "one key written");
  }],

  ["durableObjectStore: 16 concurrent requests from outside the object, each claiming: one winner, every loser gets its value", async (t) => {
    const target = t.outside();
    const prefix = freshPrefix("workerd-do");
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      target.fetch(`http://do/claim?prefix=${prefix}&key=race&racer=${i}`).then((r) => r.json())));
    for (const a of answers) assert(!a.error, `a request failed: ${a.error}`);
    const winners = answers.filter((a) => a.won);
    eq(winners.length, 1, "winners");
    eq(winners[0].value, { racer: winners[0].racer }, "the winner's value is its own");
    for (const a of answers) eq(a.value, winners[0].value, `racer ${a.racer} is told the winner's value`);
  }],

  ["durableObjectStore: a lease cycle: each acquisition a higher epoch, a replaced holder fenced", async (t) => {
    const clock = { t: Date.UTC(2026, 0, 1) };
    const store = t.store();
    const client = () => new lib.Fencepost(store, { now: () => clock.t, retry: RETRY });
    const a = await client().lease("job", { ttl: 30, holder: "a" });
    eq(a?.epoch, 1, "a fresh lease");
    eq(await client().lease("job", { ttl: 30, holder: "b" }), null, "held: not taken");
    clock.t += 10_000;
    await a.renew();
    eq(a.epoch, 1, "a renewal keeps the epoch");
    await a.release();
    const b = await client().lease("job", { ttl: 30, holder: "b" });
    eq(b?.epoch, 2, "acquired after a release");
    clock.t += 31_000;
    const c = await client().lease("job", { ttl: 30, holder: "c" });
    eq(c?.epoch, 3, "taken over after expiry");
    const lost = await rejects(b.renew(), lib.LeaseLost, "the replaced holder renews");
    eq(lost.code, "LEASE_LOST", "typed");
    await c.release();
    const d = await client().lease("job", { ttl: 30, holder: "d" });
    eq(d?.epoch, 4, "epochs keep increasing");
  }],

  ["durableObjectStore: 8 concurrent doc.update increments inside the object land exactly", async (t) => {
    const store = t.store();
    const bump = () => new lib.Fencepost(store, { retry: RETRY }).doc("counter").update((n) => n + 1, { create: 0, maxAttempts: 40 });
    await Promise.all(Array.from({ length: 8 }, bump));
    eq((await new lib.Fencepost(store).doc("counter").get())?.value, 8, "the counter");
  }],

  ["durableObjectStore: 8 concurrent requests from outside the object, each a doc.update increment, land exactly", async (t) => {
    const target = t.outside();
    const prefix = freshPrefix("workerd-do");
    const answers = await Promise.all(Array.from({ length: 8 }, () =>
      target.fetch(`http://do/increment?prefix=${prefix}&key=counter`).then((r) => r.json())));
    for (const a of answers) assert(!a.error, `a request failed: ${a.error}`);
    eq(answers.map((a) => a.value).sort((x, y) => x - y), [1, 2, 3, 4, 5, 6, 7, 8], "each increment saw its own value");
  }],

  ["durableObjectStore: request counts at fencepost's floor (claim won 1 put; lost 1 put + 1 get; lease fresh 1 get + 1 put)", async (t) => {
    const store = lib.countingStore(t.store());
    const counts = counter(store);
    const db = new lib.Fencepost(store, { retry: RETRY });
    eq((await db.claim("c", 1)).won, true, "won");
    eq(counts(), req(0, 1), "a won claim");
    eq((await db.claim("c", 2)).won, false, "lost");
    eq(counts(), req(1, 1), "a lost claim");
    const lease = await db.lease("l", { ttl: 60 });
    eq(counts(), req(1, 1), "a fresh lease");
    eq(await new lib.Fencepost(store).lease("l", { ttl: 60 }), null, "held");
    eq(counts(), req(1, 0), "a held lease");
    await lease.renew();
    eq(counts(), req(0, 1), "a renewal");
    await lease.release();
    eq(counts(), req(0, 1), "a release");
  }],

  ["durableObjectStore: a value over the object's limit is a clear, non-retryable error; nothing is written; one that fits round-trips", async (t) => {
    const limit = t.sqlite ? 2_000_000 : 128 * 1024;
    const store = lib.countingStore(t.store());
    const counts = counter(store);
    const db = new lib.Fencepost(store, { retry: RETRY });
    const e = await rejects(db.objects.put("big", new Uint8Array(limit + 1)), lib.StorageError, "over the limit");
    t.notes.push(`${e.name} ${e.code} s3Code=${e.s3Code} status=${e.status}: ${e.message}`);
    eq([e.code, e.s3Code, e.status], ["STORAGE_ERROR", "EntityTooLarge", 413], "typed");
    assert(e.message.includes(String(limit)) && e.message.includes(t.sqlite ? "SQLite-backed" : "KV-backed"), `the message names the limit: ${e.message}`);
    eq(counts(), req(0, 1), "one attempt, not retried");
    eq(await db.objects.get("big"), null, "nothing written");
    const fits = Uint8Array.from({ length: limit - 4096 }, (_, i) => i % 251);
    await db.objects.put("fits", fits);
    const back = await db.objects.get("fits");
    assert(back && back.data.length === fits.length && back.data.every((b, i) => b === fits[i]), "the largest value round-trips");
    const doc = await rejects(db.doc("big-doc").update(() => ({ text: "x".repeat(limit) }), { create: null }), lib.StorageError, "a doc over the limit");
    eq(doc.s3Code, "EntityTooLarge", "the doc's too");
  }],

  ["durableObjectStore: keys live under fencepost: beside the object's own data; listing pages past 1,000 keys in UTF-8 byte order", async (t) => {
    await t.storage.put("mine", "the object's own data");
    const prefix = freshPrefix("workerd-do");
    const store = lib.countingStore(lib.durableObjectStore(t.storage, { prefix }));
    const counts = counter(store);
    const db = new lib.Fencepost(store, { retry: RETRY });
    const keys = Array.from({ length: 1050 }, (_, i) => `many/${String(i).padStart(4, "0")}`);
    // UTF-16 order puts U+1F600 (a surrogate pair) before U+FFFD; UTF-8 order after.
    const odd = ["odd/\u{1F600}", "odd/\uFFFD", "odd/\u00e9", "odd/z"];
    for (const k of [...keys, ...odd]) await db.objects.put(k, "x");
    // A value the object's own code put under the store's key space is not one of its records.
    await t.storage.put(`fencepost:${prefix}/odd/foreign`, "not a record");
    counts();
    eq(await db.objects.list("many/"), keys, "every key, in order");
    eq(counts(), req(0, 0, 0, 2), "two pages (1,000 keys a page)");
    eq(await db.objects.list("odd/"), ["odd/z", "odd/\u00e9", "odd/\uFFFD", "odd/\u{1F600}"], "UTF-8 byte order");
    const after = [];
    for await (const e of db.objects.entries("many/", { startAfter: "many/1040" })) after.push(e);
    eq(after.map((e) => e.key), keys.slice(1041), "startAfter");
    eq([after[0].size, typeof after[0].etag, after[0].lastModified instanceof Date], [1, "string", true], "size, etag, last-modified");
    const stored = [...(await t.storage.list({ prefix: `fencepost:${prefix}/odd/` })).keys()];
    eq(stored.length, 5, `stored under fencepost:<prefix>/: ${stored}`);
    eq(await t.storage.get("mine"), "the object's own data", "the object's own data is untouched");
    eq((await new lib.Fencepost(lib.durableObjectStore(t.storage)).objects.list("")).includes("mine"), false, "and not listed");
  }],

  ["durableObjectStore: every write a new etag, never repeated (the same bytes again, a delete and a re-create)", async (t) => {
    const db = new lib.Fencepost(t.store(), { retry: RETRY });
    const seen = new Set();
    for (let i = 0; i < 3; i++) seen.add((await db.objects.put("k", "same")).etag);
    await db.objects.delete("k");
    seen.add((await db.objects.put("k", "same", { ifAbsent: true })).etag);
    eq(seen.size, 4, "four writes, four etags");
    eq((await db.objects.get("k")).etag, [...seen][3], "a read gives the last write's etag");
  }],

  ["durableObjectStore: what is not a Durable Object's storage is InvalidArgument", async (t) => {
    for (const bad of [undefined, null, {}, { get() {}, put() {}, delete() {}, list() {} }, t.env.FENCEPOST_DO_KV]) {
      const e = await rejects((async () => lib.durableObjectStore(bad))(), lib.InvalidArgument, `durableObjectStore(${typeof bad})`);
      assert(/Durable Object's storage/.test(e.message), `the message says what is expected: ${e.message}`);
    }
    await rejects((async () => lib.durableObjectStore(t.storage, { prefx: "a" }))(), lib.InvalidArgument, "an unknown option");
  }],
];

/** The object: runs cases on its own storage, or answers one racer's request. */
class FencepostObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }

  /** This object's namespace binding and backend. */
  get binding() {
    return this instanceof FencepostSqliteObject ? "FENCEPOST_DO_SQLITE" : "FENCEPOST_DO_KV";
  }

  caseList() {
    const storage = this.ctx.storage;
    const makeStore = () => lib.durableObjectStore(storage, { prefix: freshPrefix("workerd-do") });
    const suite = cases({ lib, makeStore, schemas: { zod, valibot }, testing });
    const t = () => ({
      storage,
      env: this.env,
      sqlite: this.binding === "FENCEPOST_DO_SQLITE",
      store: makeStore,
      notes: [],
      outside: () => {
        const ns = this.env[this.binding];
        return ns.get(ns.idFromName(`racers-${crypto.randomUUID()}`));
      },
    });
    const checks = CHECKS.map(([name, fn]) => {
      const ctx = t();
      return { name, notes: ctx.notes, fn: () => fn(ctx) };
    });
    const list = [...suite.map((c) => ({ ...c, notes: [] })), ...checks];
    if (typeof testing.storeConformance === "function") {
      // The report form: one run, one result per case of the report.
      list.push({
        name: "storeConformance",
        conformance: true,
        fn: async (prefix) => {
          const started = Date.now();
          const report = await testing.storeConformance(makeStore());
          const ms = Date.now() - started;
          assert(Array.isArray(report?.cases) && report.cases.length > 0, `a report with cases: ${JSON.stringify(report)}`);
          const results = report.cases.map((c) => ({ name: `${prefix}storeConformance: ${c.name}`, ok: c.ok === true, ms: 0, error: c.error }));
          results.push({ name: `${prefix}storeConformance: the report (ok ${report.ok}, ${report.passed} passed, ${report.failed} failed)`,
            ok: report.ok === results.every((r) => r.ok) && report.passed + report.failed === report.cases.length, ms });
          return results;
        },
      });
    }
    return list;
  }

  async fetch(request) {
    const url = new URL(request.url);
    const store = url.searchParams.get("store") ?? "";
    try {
      if (url.pathname === "/claim") {
        const db = new lib.Fencepost(lib.durableObjectStore(this.ctx.storage, { prefix: url.searchParams.get("prefix") }), { retry: RETRY });
        const racer = Number(url.searchParams.get("racer"));
        const r = await db.claim(url.searchParams.get("key"), { racer });
        return json({ racer, won: r.won, value: r.value });
      }
      if (url.pathname === "/increment") {
        const db = new lib.Fencepost(lib.durableObjectStore(this.ctx.storage, { prefix: url.searchParams.get("prefix") }), { retry: RETRY });
        const value = await db.doc(url.searchParams.get("key")).update((n) => n + 1, { create: 0, maxAttempts: 40 });
        return json({ value });
      }
      const list = this.caseList();
      if (url.pathname === "/cases") return json({ names: list.map((c) => c.name) });
      if (url.pathname === "/run") {
        const n = Number(url.searchParams.get("case"));
        if (!Number.isInteger(n) || n < 0 || n >= list.length) return json({ error: `no case ${n}` }, 400);
        const prefix = `workerd / ${store} / `;
        const c = list[n];
        if (c.conformance) {
          try {
            return json({ results: await c.fn(prefix) });
          } catch (e) {
            return json({ results: [{ name: prefix + c.name, ok: false, ms: 0, error: String(e?.stack ?? e) }] });
          }
        }
        const run = await runCases([c], { prefix });
        run.results[0].notes = c.notes;
        return json(run);
      }
      return json({ error: "not found" }, 404);
    } catch (e) {
      return json({ error: String(e?.stack ?? e) }, 500);
    }
  }
}

export class FencepostKvObject extends FencepostObject {}
export class FencepostSqliteObject extends FencepostObject {}
