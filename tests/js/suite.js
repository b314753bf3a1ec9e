// The JS-level conformance suite, written once and run in every runtime (Node, Deno, workerd,
// Chromium) against every store each runtime can reach. It checks the JS API as docs/api.md
// documents it: names, semantics, typed errors, request counts (docs/operations.md: "Requests per operation"),
// and that bad input is rejected with nothing written.
//
// cases(env) → [{name, fn}] where env = {
//   lib,          // the fencepost module namespace, as the runtime imported it
//   makeStore(),  // → a Store on a fresh, empty namespace
//   schemas?,     // {zod, valibot} when the runtime can import them
// }

export function assert(cond, message) {
  if (!cond) throw new Error(`assertion failed: ${message}`);
}

// Key order does not matter (fencepost hands objects back with keys sorted, as stored).
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object" && !(v instanceof Date)) {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  }
  return v;
}

export function eq(actual, expected, message) {
  const a = JSON.stringify(canonical(actual));
  const e = JSON.stringify(canonical(expected));
  if (a !== e) throw new Error(`${message}: expected ${e}, got ${a}`);
}

export async function rejects(promise, Class, message) {
  try {
    await promise;
  } catch (e) {
    if (!(e instanceof Class)) throw new Error(`${message}: expected ${Class.name}, got ${e?.name}: ${e?.message}`);
    return e;
  }
  throw new Error(`${message}: expected a ${Class.name} rejection, but it resolved`);
}

/** A world for one case: a counted store, a controllable clock, and peers on the same store. */
function world(env, start = Date.UTC(2026, 0, 1)) {
  const { lib } = env;
  const base = env.makeStore();
  const store = lib.countingStore(base);
  const clock = { t: start };
  const options = { now: () => clock.t, retry: { maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05 } };
  const db = new lib.Fencepost(store, options);
  const peer = () => new lib.Fencepost(base, options);
  const counts = () => {
    const c = store.requestCounts();
    store.resetRequestCounts();
    return { get: c.get, put: c.put, delete: c.delete, list: c.list };
  };
  const req = (get, put, del = 0, list = 0) => ({ get, put, delete: del, list });
  const raw = peer().objects;
  const text = async (key) => {
    const o = await raw.get(key);
    return o && new TextDecoder().decode(o.data);
  };
  // A custom store's etags are its own opaque tokens, handed back and compared verbatim.
  const opaqueEtags = base.kind === "custom";
  return { lib, db, peer, clock, counts, req, raw, text, store, options, opaqueEtags, advance: (s) => (clock.t += s * 1000) };
}

export function cases(env) {
  const { lib } = env;
  const list = [];
  const test = (name, fn) => list.push({ name, fn });

  // ------------------------------------------------------------------ the JS surface
  test("JS surface: handles are plain objects; inspection shows fields, never wasm internals or the holder", async () => {
    const w = world(env);
    const lease = await w.db.lease("job", { ttl: 30, stateFn: () => ({ step: 1 }) });
    for (const field of ["key", "epoch", "ttl", "state", "deadlineAt", "etag", "released"]) {
      assert(Object.keys(lease).includes(field), `own enumerable field ${field}: ${Object.keys(lease)}`);
    }
    for (const handle of [lease, w.db, w.db.doc("d"), w.db.objects, lib.memoryStore()]) {
      const shown = JSON.stringify(Object.entries(handle), (k, v) => (typeof v === "bigint" ? String(v) : v));
      // wasm-bindgen's objects carry `__wbg_ptr`; a field named like a pointer would be one too. (Not
      // a bare "ptr" anywhere: random key prefixes shown as data may contain it.)
      assert(!/__wbg|"ptr"/.test(shown) && !Object.keys(handle).some((k) => k.startsWith("__")), `no wasm internals: ${shown}`);
      assert(typeof handle.free === "undefined", "no free(): memory is reclaimed by the garbage collector");
    }
    assert(typeof lease[Symbol.dispose] === "undefined", "no Symbol.dispose that would free a live lease");
    assert(!Object.values(lease).includes(lease.holder) && !JSON.stringify(lease).includes(lease.holder), "holder not shown");
    if (env.inspect) {
      const text = env.inspect(lease);
      for (const part of ["job", "epoch", "deadlineAt", "state", "step"]) assert(text.includes(part), `inspect shows ${part}: ${text}`);
      assert(!text.includes(lease.holder) && text.includes("[redacted]"), `holder redacted: ${text}`);
      assert(!/__wbg|ptr/.test(text), `no pointer: ${text}`);
      const db = env.inspect(w.db);
      assert(db.includes("Fencepost") && db.includes("Store") && !/__wbg|ptr/.test(db), `Fencepost inspect: ${db}`);
    }
  });

  test("JS surface: an unknown option name is an InvalidArgument naming it and the nearest valid one", async () => {
    const w = world(env);
    const e = await rejects(w.db.lease("k", { ttl: 30, stealIfExpire: false }), lib.InvalidArgument, "typo");
    assert(e.message.includes("stealIfExpire") && e.message.includes("stealIfExpired"), e.message);
    eq(w.counts(), w.req(0, 0), "nothing sent");
    let thrown;
    try {
      new lib.Fencepost(lib.memoryStore(), { retyr: { maxAttempts: 2 } });
    } catch (err) {
      thrown = err;
    }
    assert(thrown instanceof lib.InvalidArgument && thrown.message.includes("retyr") && thrown.message.includes("retry"),
      `constructor: ${thrown}`);
    for (const call of [
      () => w.db.claim("k", 1, { sigal: null }),
      () => w.db.doc("d").update((v) => v, { crate: 1 }),
      () => w.db.objects.put("k", "x", { ifAbsnt: true }),
      () => w.db.objects.waitFor("k", { timout: 1 }),
      () => w.db.attachLease("k", { holder: "h", ttl: 1, tll: 2 }),
    ]) {
      await rejects(call(), lib.InvalidArgument, "typo'd option");
    }
    await rejects(w.db.lease("k", { ttl: "30" }), lib.InvalidArgument, "wrong type");
    // Half a signal (no removeEventListener, which the call needs to let go of it) is refused too.
    await rejects(w.db.claim("k", 1, { signal: { aborted: false, addEventListener() {} } }), lib.InvalidArgument, "not a signal");
    eq(w.counts(), w.req(0, 0), "nothing sent");
    const e2 = await rejects(w.db.withLease("k", { ttl: 1 }), lib.InvalidArgument, "no function");
    assert(e2.message.endsWith("got undefined"), `names what it got: ${e2.message}`);
  });

  test("JS surface: every error's stack includes the caller's own frame", async () => {
    const w = world(env);
    const held = await w.db.lease("job", { ttl: 30 });
    // Each call awaited where it is made, as callers do (V8 records the awaiting async frames).
    async function callerFrameProbe() {
      const errors = [];
      const calls = [() => w.db.claim("log/reserved", 1), () => w.db.lease("job", { ttl: 30, stealIfExpire: true }),
        () => w.db.doc("nothing").update((v) => v), async () => (await held.release(), await held.renew()),
        () => w.db.doc("made").update(() => 10n, { create: 1 }),
        async () => {
          for await (const seen of w.db.watch("log/reserved")) assert(seen === "never", "no change of a reserved key");
        }];
      for (const call of calls) {
        try {
          await call();
        } catch (e) {
          errors.push(e);
        }
      }
      return errors;
    }
    const errors = await callerFrameProbe();
    eq(errors.map((e) => e.code), ["INVALID_ARGUMENT", "INVALID_ARGUMENT", "NOT_FOUND", "LEASE_LOST", "INVALID_ARGUMENT", "INVALID_ARGUMENT"], "codes");
    // A callback's result that JSON cannot hold is the call's own InvalidArgument, its event too.
    const events = [];
    const heard = new lib.Fencepost(w.store, { onEvent: (e) => e.type === "call" && events.push(e.outcome) });
    await rejects(heard.doc("made").update(() => ({ n: 1n }), { create: 1 }), lib.InvalidArgument, "a BigInt from fn");
    eq(events, ["INVALID_ARGUMENT"], "the call's outcome");
    for (const e of errors) {
      assert(e instanceof lib.FencepostError, `typed: ${e}`);
      assert(String(e.stack).includes("callerFrameProbe"), `caller's frame in the stack: ${e.stack}`);
    }
    // A period's LeaseLost is one object (signal.reason too); each caller that meets it finds its
    // own frame in its stack.
    const over = await w.db.lease("over", { ttl: 30 });
    await over.release();
    const caught = async (/** @type {() => Promise<unknown>} */ call) => call().then(() => null, (e) => e);
    async function firstLeaseCaller() {
      return caught(() => over.renew());
    }
    async function secondLeaseCaller() {
      return caught(() => over.write(1));
    }
    const first = await firstLeaseCaller();
    assert(first instanceof lib.LeaseLost && String(first.stack).includes("firstLeaseCaller"), `first caller's frame: ${first?.stack}`);
    const second = await secondLeaseCaller();
    assert(second === over.signal.reason, "the period's one LeaseLost");
    assert(String(second.stack).includes("secondLeaseCaller"), `second caller's frame: ${second.stack}`);
  });

  test("JS surface: an error met at the store keeps the caller's frame (a steal, a refusal, a listing)", async () => {
    // Calls whose error the store's answer decides, each awaited where it is made: Bun's engine
    // keeps the caller's frame only through awaits, not through an async function that hands
    // back another's promise or an async generator's resumption.
    const w = world(env);
    const stolenWrite = await w.db.lease("stolen/w", { ttl: 30 });
    const stolenUpdate = await w.db.lease("stolen/u", { ttl: 30 });
    await w.peer().breakLease("stolen/w");
    await w.peer().breakLease("stolen/u");
    const calls = [() => stolenWrite.write(1), () => stolenUpdate.updateState(() => 2)];
    if (env.testing) {
      const refusing = env.testing.faultStore(w.store);
      refusing.inject({ status: 403, code: "AccessDenied" }, { times: 1000 });
      const db = new lib.Fencepost(refusing, w.options);
      calls.push(() => db.withLease("held", { ttl: 30 }, () => 1),
        () => db.semaphore("pool", { limit: 2, ttl: 30 }).withPermit(() => 1),
        async () => {
          for await (const entry of db.objects.entries("")) assert(entry === "never", "a refused listing lists nothing");
        });
    }
    async function storeAnsweredCaller() {
      const errors = [];
      for (const call of calls) {
        try {
          errors.push(await call());
        } catch (e) {
          errors.push(e);
        }
      }
      return errors;
    }
    const errors = await storeAnsweredCaller();
    eq(errors.map((e) => e?.code), [...["LEASE_LOST", "LEASE_LOST"], ...(env.testing ? ["STORAGE_ERROR", "STORAGE_ERROR", "STORAGE_ERROR"] : [])], "codes");
    for (const e of errors) assert(String(e.stack).includes("storeAnsweredCaller"), `caller's frame in the stack: ${e.stack}`);
  });

  test("JS surface: after release every method rejects with LeaseLost and signal is aborted", async () => {
    const w = world(env);
    const lease = await w.db.lease("job", { ttl: 30 });
    assert(lease.signal instanceof AbortSignal && !lease.signal.aborted, "live signal");
    await lease.release();
    assert(lease.released === true, "released field");
    assert(lease.signal.aborted && lease.signal.reason instanceof lib.LeaseLost, "signal aborted with LeaseLost");
    w.counts();
    for (const call of [() => lease.renew(), () => lease.write(1), () => lease.updateState((s) => s), () => lease.release()]) {
      const e = await rejects(call(), lib.LeaseLost, "after release");
      eq(e.code, "LEASE_LOST", "code");
    }
    eq(w.counts(), w.req(0, 0), "nothing sent after release");
    await lease[Symbol.asyncDispose](); // nothing to do, does not throw
    const thief = await w.peer().lease("job", { ttl: 30 });
    eq(thief.epoch, 2, "re-acquired");
  });

  test("JS surface: Symbol.asyncDispose releases a live lease", async () => {
    const w = world(env);
    const lease = await w.db.lease("job", { ttl: 30 });
    await lease[Symbol.asyncDispose]();
    assert(lease.released && lease.signal.aborted, "released through dispose");
    eq(JSON.parse(await w.text("job")).holder, null, "released on the wire");
  });

  test("JS surface: an already-aborted signal rejects with its reason and sends nothing", async () => {
    const w = world(env);
    const reason = new Error("stop now");
    const signal = AbortSignal.abort(reason);
    for (const call of [() => w.db.claim("k", 1, { signal }), () => w.db.lease("k", { ttl: 1, signal }),
      () => w.db.doc("d").get({ signal }), () => w.db.objects.list("", { signal })]) {
      let got;
      try {
        await call();
      } catch (e) {
        got = e;
      }
      assert(got === reason, `rejected with the signal's reason: ${got}`);
    }
    eq(w.counts(), w.req(0, 0), "nothing sent");
  });

  // ------------------------------------------------------------------ lease lifecycle (real time, short)
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const realDb = (store) => new lib.Fencepost(store, { retry: { maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05 } });

  test("lifecycle: keepAlive renews in the background; stop() stops it; asyncDispose releases", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    const lease = await db.lease("job", { ttl: 1 });
    const first = lease.deadlineAt.getTime();
    const keeper = lease.keepAlive({ every: 0.2 });
    assert(lease.keepAlive() === keeper, "idempotent");
    await sleep(1500); // past the first deadline
    assert(lease.deadlineAt.getTime() > first + 500, `renewed: ${lease.deadlineAt.toISOString()} vs ${new Date(first).toISOString()}`);
    eq(await realDb(store).lease("job", { ttl: 1 }), null, "never stolen while kept alive");
    assert(!lease.signal.aborted, "still ours");
    await keeper.stop();
    const stopped = lease.deadlineAt.getTime();
    await sleep(400);
    eq(lease.deadlineAt.getTime(), stopped, "no renewal after stop()");
    const again = lease.keepAlive({ every: 0.2 });
    assert(again !== keeper, "once stopped, keepAlive() starts it again");
    await sleep(450);
    assert(lease.deadlineAt.getTime() > stopped, "renewing again");
    await again.stop();
    await lease[Symbol.asyncDispose]();
    assert(lease.released && lease.signal.aborted, "released");
    let bad;
    try {
      (await db.lease("other", { ttl: 1 })).keepAlive({ every: 2 });
    } catch (e) {
      bad = e;
    }
    assert(bad instanceof lib.InvalidArgument, `every >= ttl is refused at once: ${bad}`);
  });

  test("lifecycle: keepAlive started while a write or a release is on its way: the handle ends with what they leave", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    const lease = await db.lease("job", { ttl: 2 });
    const writing = lease.write({ step: 1 });
    const keeper = lease.keepAlive({ every: 0.5 });
    await writing;
    const stored = JSON.parse(new TextDecoder().decode((await db.objects.get("job")).data));
    eq(stored.state, { step: 1 }, "written");
    await sleep(700); // a renewal: started from the view before the write, it takes the write in
    eq(lease.state, { step: 1 }, "renewed with the state written");
    await keeper.stop();
    const releasing = lease.release({ state: { done: true } });
    const late = lease.keepAlive();
    await releasing;
    eq([lease.released, lease.state], [true, { done: true }], "released, as the release left it");
    await late.stop();
    eq([lease.released, lease.state], [true, { done: true }], "and it stays so");
    assert(lease.signal.aborted && lease.signal.reason.reason === "released", `signal: ${lease.signal.reason}`);
  });

  test("lifecycle: keep-alive that finds the lease taken aborts signal with LeaseLost", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    const lease = await db.lease("job", { ttl: 1 });
    lease.keepAlive({ every: 0.1 });
    // Someone else takes over (a newer epoch), e.g. after a long stall of ours.
    const raw = realDb(store).objects;
    const doc = JSON.parse(new TextDecoder().decode((await raw.get("job")).data));
    await raw.put("job", JSON.stringify({ ...doc, epoch: doc.epoch + 1, holder: "thief" }));
    const reason = await new Promise((resolve) => lease.signal.addEventListener("abort", () => resolve(lease.signal.reason)));
    assert(reason instanceof lib.LeaseLost, `LeaseLost: ${reason}`);
    await rejects(lease.renew(), lib.LeaseLost, "every later call");
  });

  test("lifecycle: withLease releases on return and on throw, and does not call fn when held", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    let seen;
    const out = await db.withLease("job", { ttl: 2 }, async (lease, signal) => {
      seen = { epoch: lease.epoch, aborted: signal.aborted };
      eq(await realDb(store).lease("job", { ttl: 2 }), null, "held while fn runs");
      return "done";
    });
    eq([out, seen], ["done", { epoch: 1, aborted: false }], "fn's result");
    const after = JSON.parse(new TextDecoder().decode((await db.objects.get("job")).data));
    eq(after.holder, null, "released on return");
    const boom = new Error("boom");
    let caught;
    try {
      await db.withLease("job", { ttl: 2 }, async () => { throw boom; });
    } catch (e) {
      caught = e;
    }
    assert(caught === boom, "fn's error reaches the caller unchanged");
    const thrown = JSON.parse(new TextDecoder().decode((await db.objects.get("job")).data));
    eq([thrown.holder, thrown.epoch], [null, 2], "released on throw");
    const holder = await realDb(store).lease("job", { ttl: 30 });
    let called = false;
    eq(await db.withLease("job", { ttl: 2 }, () => { called = true; }), null, "null when held");
    assert(!called, "fn not called when held");
    await holder.release();
    await rejects(db.withLease("job", { ttl: 2, every: 5 }, () => { called = true; }), lib.InvalidArgument, "every >= ttl");
    assert(!called, "fn not called with a bad keep-alive interval");
    eq(JSON.parse(new TextDecoder().decode((await db.objects.get("job")).data)).holder, null, "and the lease released");
  });

  test("lifecycle: lease({wait}) acquires soon after the holder's release; gives up with null", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    const holder = await db.lease("job", { ttl: 30 });
    const started = Date.now();
    eq(await realDb(store).lease("job", { ttl: 30, wait: 0.3 }), null, "wait ran out");
    assert(Date.now() - started >= 250, "waited");
    setTimeout(() => holder.release(), 300);
    const t0 = Date.now();
    const got = await realDb(store).lease("job", { ttl: 30, wait: 5 });
    const waited = Date.now() - t0;
    assert(got && got.epoch === 2, "acquired after the release");
    assert(waited < 300 + 1300, `within about a second of the release (${waited} ms)`);
  });

  test("lifecycle: an abort stops a wait at once, with the signal's reason", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    await db.lease("job", { ttl: 30 });
    const controller = new AbortController();
    const waiting = realDb(store).lease("job", { ttl: 30, wait: 10, signal: controller.signal });
    await sleep(100);
    const reason = new Error("shutting down");
    const t0 = Date.now();
    controller.abort(reason);
    let got;
    try {
      await waiting;
    } catch (e) {
      got = e;
    }
    assert(got === reason, `rejected with the reason: ${got}`);
    assert(Date.now() - t0 < 250, `promptly (${Date.now() - t0} ms)`);
    const w2 = realDb(store).objects.waitFor("never", { timeout: 10, signal: AbortSignal.timeout(100) });
    const e2 = await w2.catch((e) => e);
    assert(e2?.name === "TimeoutError" && !(e2 instanceof lib.FencepostError), `AbortSignal.timeout's reason: ${e2}`);
  });

  test("lifecycle: an abort while a transition's promise is pending answers at once; nothing is written", async () => {
    const w = world(env);
    await w.db.doc("d").update(() => 1, { create: 0 });
    const lease = await w.db.lease("job", { ttl: 30, stateFn: () => ({ step: 1 }) });
    let release = () => {};
    const slow = () => new Promise((resolve) => (release = () => resolve("late")));
    const reason = new Error("enough");
    for (const call of [
      (signal) => w.db.doc("d").update(slow, { signal }),
      (signal) => w.db.doc("d").update(slow, { signal, fresh: true }),
      (signal) => lease.updateState(slow, { signal }),
      (signal) => w.db.cooperativeWrite("job", slow, { signal }),
      (signal) => w.db.lease("other", { ttl: 30, stateFn: slow, signal }),
    ]) {
      const controller = new AbortController();
      const pending = call(controller.signal);
      await sleep(20);
      const t0 = Date.now();
      controller.abort(reason);
      const got = await pending.catch((e) => e);
      assert(got === reason, `rejected with the reason: ${got}`);
      assert(Date.now() - t0 < 250, `at once (${Date.now() - t0} ms)`);
      release();
    }
    await sleep(20);
    eq((await w.db.doc("d").get()).value, 1, "the doc as it was");
    eq(JSON.parse(await w.text("job")).state, { step: 1 }, "the lease's state as it was");
    eq(await w.raw.get("other"), null, "no lease taken");
    await lease.release();
  });

  // ------------------------------------------------------------------ operating fencepost
  test("operate: inspect tells a lease (its period judged now), a JSON value, bytes; null when absent; 1 request", async () => {
    const w = world(env);
    eq(await w.db.inspect("nothing"), null, "absent");
    const lease = await w.db.lease("jobs/1", { ttl: 30, stateFn: () => ({ step: 1 }) });
    await w.db.claim("cron/t", { by: "a" });
    await w.raw.put("blob", new Uint8Array([0xff, 0x00, 0x01]));
    w.counts();
    const l = await w.db.inspect("jobs/1");
    eq(w.counts(), w.req(1, 0), "one GET");
    eq([l.key, l.kind, l.etag, l.lease.epoch, l.lease.holder, l.lease.expired, l.lease.released, l.lease.expiresIn, l.lease.state],
      ["jobs/1", "lease", lease.etag, 1, lease.holder, false, false, 30, { step: 1 }], "the lease as it is now");
    eq(l.lease.deadlineAt.getTime(), lease.deadlineAt.getTime(), "its deadline");
    eq([l.value.epoch, l.value.holder], [1, lease.holder], "value: the whole document");
    assert(l.lastModified instanceof Date && Math.abs(Date.now() - l.lastModified.getTime()) < 86_400_000, `lastModified: ${l.lastModified}`);
    eq(l.size, new TextEncoder().encode(await w.text("jobs/1")).length, "size in bytes");
    const c = await w.db.inspect("cron/t");
    eq([c.kind, c.value, c.lease], ["json", { by: "a" }, undefined], "a claim is JSON");
    const b = await w.db.inspect("blob");
    eq([b.kind, b.size, Array.from(b.value)], ["bytes", 3, [255, 0, 1]], "bytes");
    w.advance(31);
    const later = await w.db.inspect("jobs/1");
    eq([later.lease.expired, later.lease.released, later.lease.expiresIn], [true, false, -1], "expired a second ago");
    await lease.release().catch(() => {});
    const released = await w.db.inspect("jobs/1");
    eq([released.lease.expired, released.lease.released, released.lease.holder], [true, true, null], "released");
    await rejects(w.db.inspect("log/x"), lib.InvalidArgument, "key rules");
  });

  test("operate: onEvent hears each request, each call's end and each lease transition; counts match requestCounts(); a throwing handler changes nothing", async () => {
    const w = world(env);
    const events = [];
    let requestEvents = 0;
    const onEvent = (e) => {
      events.push(e);
      if (e.type === "request") requestEvents++;
    };
    const db = new lib.Fencepost(w.store, { ...w.options, onEvent });
    const take = () => events.splice(0);
    const line = (e) => e.type === "request" ? `request ${e.op} ${e.key} ${e.status} ${e.attempt} ${e.outcome}`
      : e.type === "call" ? `call ${e.method} ${e.key} ${e.requests} ${e.outcome}`
      : `lease ${e.key} ${e.epoch} ${e.action}${e.reason ? " " + e.reason : ""}`;
    w.counts();
    await db.claim("cron/1", 1);
    const claimed = take();
    eq(claimed.map(line), ["request put cron/1 200 1 ok", "call claim cron/1 1 ok"], "a won claim");
    for (const e of claimed) assert(typeof e.ms === "number" && e.ms >= 0, `ms: ${e.ms}`);
    eq(Object.keys(claimed[0]).sort(), ["attempt", "key", "ms", "op", "outcome", "status", "type"], "a request event's fields");
    eq(Object.keys(claimed[1]).sort(), ["key", "method", "ms", "outcome", "requests", "type"], "a call event's fields");
    const lease = await db.lease("jobs/1", { ttl: 30 });
    eq(take().map(line), ["request get jobs/1 404 1 absent", "request put jobs/1 200 1 ok", "lease jobs/1 1 acquired", "call lease jobs/1 2 ok"], "acquired");
    await lease.renew();
    eq(take().map(line), ["request put jobs/1 200 1 ok", "call lease.renew jobs/1 1 ok", "lease jobs/1 1 renewed"], "renewed");
    await db.breakLease("jobs/1");
    eq(take().map(line), ["request get jobs/1 200 1 ok", "request put jobs/1 200 1 ok", "lease jobs/1 2 broken", "call breakLease jobs/1 2 ok"], "broken");
    await rejects(lease.updateState(() => ({ late: true })), lib.LeaseLost, "fenced");
    eq(take().map(line), ["request put jobs/1 412 1 refused", "request get jobs/1 200 1 ok", "lease jobs/1 1 lost stolen",
      "call lease.updateState jobs/1 2 LEASE_LOST"], "lost, with its reason");
    const next = await db.lease("jobs/1", { ttl: 30 });
    take();
    await next.release();
    eq(take().map(line).slice(-3), ["request put jobs/1 200 1 ok", "lease jobs/1 3 released", "call lease.release jobs/1 1 ok"], "released");
    await rejects(db.claim("log/x", 1), lib.InvalidArgument, "key rules");
    eq(take().map(line), ["call claim log/x 0 INVALID_ARGUMENT"], "a refused call is reported, no request made");
    // A call holding a lease throughout is one call: its acquisition, its work's writes through the
    // lease and its release are its requests.
    await db.withLease("held", { ttl: 30 }, (lease) => lease.write("inside"));
    const held = take();
    eq(held.filter((e) => e.type === "call").map(line), ["call withLease held 4 ok"], "withLease: one call of 4 requests");
    eq(held.filter((e) => e.type === "request").length, 4, "its 4 requests");
    await db.once("report", () => 1);
    eq(take().filter((e) => e.type === "call").map(line), ["call once report 3 ok"], "once: read, create, release");
    const stop = new AbortController();
    stop.abort(new Error("stop"));
    const reason = await rejects(db.claim("cron/9", 1, { signal: stop.signal }), Error, "an aborted call");
    assert(reason === stop.signal.reason, "rejects with the signal's reason");
    eq(take().map(line), ["call claim cron/9 0 ABORTED"], "reported as aborted");
    // Refused by the JS layer's own checks, before the core: reported the same way, key included.
    const done = await db.lease("jobs/3", { ttl: 30 });
    await done.release();
    take();
    await rejects(db.claim(42, 1), lib.InvalidArgument, "a key that is not a string");
    await rejects(db.lease("jobs/2", { ttl: "30" }), lib.InvalidArgument, "an option of the wrong type");
    const both = await rejects(db.objects.put("k", "x", { ifAbsent: true, ifMatch: "e" }), lib.InvalidArgument, "conflicting options");
    eq(both.key, "k", "the refusal carries the call's key");
    await rejects(done.write(1n), lib.InvalidArgument, "a state JSON cannot hold");
    await rejects(done.renew(), lib.LeaseLost, "a handle whose period is over");
    eq(take().map(line), ["call claim  0 INVALID_ARGUMENT", "call lease jobs/2 0 INVALID_ARGUMENT", "call objects.put k 0 INVALID_ARGUMENT",
      "call lease.write jobs/3 0 INVALID_ARGUMENT", "call lease.renew jobs/3 0 LEASE_LOST"], "refused before the core");
    await db.doc("d").update((n) => n + 1, { create: 0 });
    await db.objects.list("");
    const counted = w.counts();
    eq(requestEvents, counted.get + counted.put + counted.delete + counted.list, "one request event per request the store saw");

    // A handler that throws never changes a call's outcome.
    let calls = 0;
    const throwing = new lib.Fencepost(w.store, { ...w.options, onEvent: () => { calls++; throw new Error("handler bug"); } });
    eq((await throwing.claim("cron/2", 2)).won, true, "the call succeeds");
    eq((await throwing.doc("d").update((n) => n + 1)), 2, "and the next");
    assert(calls >= 4, `the handler was called (${calls})`);
    // An async handler's rejection is dropped too: left unhandled, it would end a Node process.
    const rejected = [];
    const onRejected = (/** @type {any} */ e) => rejected.push(e);
    globalThis.process?.on?.("unhandledRejection", onRejected);
    try {
      const asyncThrowing = new lib.Fencepost(w.store, { ...w.options, onEvent: async () => { throw new Error("async handler bug"); } });
      eq((await asyncThrowing.claim("cron/3", 3)).won, true, "the call succeeds");
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      globalThis.process?.off?.("unhandledRejection", onRejected);
    }
    eq(rejected.length, 0, "no unhandled rejection");
    await rejects(Promise.resolve().then(() => new lib.Fencepost(w.store, { onEvent: "log" })), lib.InvalidArgument, "onEvent must be a function");
  });

  test("operate: objects.entries lists page by page (2,500 keys: 3 list requests), in key order, with etag, size, last-modified; startAfter", async () => {
    const w = world(env);
    const keys = Array.from({ length: 2500 }, (_, i) => `many/${String(i).padStart(5, "0")}`);
    for (let i = 0; i < keys.length; i += 100) await Promise.all(keys.slice(i, i + 100).map((k) => w.raw.put(k, k)));
    await w.raw.put("other", "x");
    w.counts();
    const seen = [];
    for await (const e of w.db.objects.entries("many/")) seen.push(e);
    eq(w.counts(), w.req(0, 0, 0, 3), "one list request per page");
    eq(seen.map((e) => e.key), keys, "every key under the prefix, in key order");
    const first = seen[0];
    eq([first.size, typeof first.etag], [10, "string"], "size and etag");
    // A bare etag, as fencepost hands etags out (a custom store's: its own, verbatim).
    if (!w.opaqueEtags) assert(!first.etag.includes('"'), `a bare etag: ${first.etag}`);
    eq(first.etag, (await w.raw.get(first.key)).etag, "the etag get() gives");
    assert(first.lastModified instanceof Date && Math.abs(Date.now() - first.lastModified.getTime()) < 86_400_000, `lastModified: ${first.lastModified}`);
    const tail = [];
    for await (const e of w.db.objects.entries("many/", { startAfter: "many/02497" })) tail.push(e.key);
    eq(tail, ["many/02498", "many/02499"], "startAfter");
    const none = [];
    for await (const e of w.db.objects.entries("nothing/")) none.push(e);
    eq(none, [], "an empty prefix lists nothing");
    // An abort between steps ends the listing at the next one, even one the page at hand could
    // answer: nothing is in flight, so it rejects with the signal's reason (and lists no more).
    const controller = new AbortController();
    const reason = new Error("enough");
    const listing = w.db.objects.entries("many/", { signal: controller.signal });
    eq((await listing.next()).value.key, keys[0], "the first entry");
    w.counts();
    controller.abort(reason);
    let got = null;
    try { await listing.next(); } catch (e) { got = e; }
    assert(got === reason, `the signal's reason (${got})`);
    eq((await listing.next()).done, true, "then it is over");
    eq(w.counts(), w.req(0, 0, 0, 0), "no request after the abort");
  });

  test("operate: breakLease fences the stuck holder (LeaseLost, reason stolen), reports it, and the next epoch is higher; 2 requests", async () => {
    const w = world(env);
    const stuck = await w.db.lease("job", { ttl: 30, stateFn: () => ({ step: 3 }) });
    w.counts();
    const broken = await w.db.breakLease("job");
    eq(w.counts(), w.req(1, 1), "two requests");
    eq([broken.key, broken.epoch, broken.previous.epoch, broken.previous.holder, broken.previous.expired, broken.previous.released],
      ["job", 2, 1, stuck.holder, false, false], "what was broken");
    eq(broken.previous.deadlineAt.getTime(), stuck.deadlineAt.getTime(), "its deadline");
    const e = await rejects(stuck.write({ step: 4 }), lib.LeaseLost, "the stuck holder's next write");
    eq(e.reason, "stolen", "reason");
    assert(stuck.signal.aborted && stuck.signal.reason.reason === "stolen", "its signal says so too");
    const next = await w.peer().lease("job", { ttl: 30 });
    eq([next.epoch, next.state], [3, { step: 3 }], "the next acquirer: a higher epoch, the state kept");
    await next.release();
    const again = await w.db.breakLease("job", { state: { reset: true } });
    eq([again.epoch, again.previous.released], [4, true], "breaking a released lease bumps the epoch");
    eq(JSON.parse(await w.text("job")).state, { reset: true }, "with the state given");
    eq(await w.db.breakLease("nothing"), null, "no lease document");
  });

  test("operate: prune deletes old objects under a prefix, never a held lease nor recent keys; dryRun deletes nothing", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    for (let i = 0; i < 5; i++) await db.claim(`ticks/old-${i}`, { i });
    const held = await db.lease("ticks/held-job", { ttl: 120 });
    const done = await db.lease("ticks/done-job", { ttl: 120 });
    await done.release();
    // S3 dates objects in whole seconds (a key can look up to 1 s older than it is), and a slow
    // server or a busy machine adds to the time between the writes and the prune: a second of
    // margin on each side of olderThan.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await db.claim("ticks/recent", { i: 9 });
    await db.claim("other/old", 1);
    const dry = await db.prune("ticks/", { olderThan: 2, dryRun: true });
    const old = ["ticks/done-job", ...Array.from({ length: 5 }, (_, i) => `ticks/old-${i}`)];
    eq([dry.deleted, dry.kept, dry.keys], [6, 2, old], "what would go");
    eq((await db.objects.list("ticks/")).length, 8, "a dry run deletes nothing");
    const pruned = await db.prune("ticks/", { olderThan: 2 });
    eq([pruned.deleted, pruned.kept, pruned.keys], [6, 2, old], "deleted");
    eq(await db.objects.list("ticks/"), ["ticks/held-job", "ticks/recent"], "the held lease and the recent claim stay");
    assert(await db.objects.get("other/old"), "outside the prefix: untouched");
    await held.renew(); // the held lease is intact
    // Seconds too many to count in microseconds are an age nothing has, not no age at all.
    eq((await db.prune("ticks/", { olderThan: 1.8e302 })).deleted, 0, "nothing is that old");
    await rejects(db.prune("ticks/", {}), lib.InvalidArgument, "olderThan is required");
  });

  test("operate: prune aborted once a delete has landed stops there and says what it deleted; before any, the reason", async () => {
    // A store whose delete lands, then answers only when aborted: the caller gives up meanwhile.
    const objects = new Map();
    let etags = 0;
    const ac = new AbortController();
    const reason = new Error("the caller gave up");
    const old = Date.now() - 3_600_000;
    const store = lib.customStore({
      async get(key) { return objects.get(key) ?? null; },
      async put(key, data, { meta }) {
        const etag = `e${++etags}`;
        objects.set(key, { data, etag, meta, lastModified: old });
        return { etag };
      },
      async delete(key, { signal }) {
        objects.delete(key);
        queueMicrotask(() => ac.abort(reason));
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
      async list(prefix) {
        const keys = [...objects.keys()].filter((k) => k.startsWith(prefix)).sort();
        return { entries: keys.map((key) => ({ key, etag: objects.get(key).etag, size: 1, lastModified: old })) };
      },
    });
    const db = new lib.Fencepost(store);
    await db.objects.put("p/a", "1");
    await db.objects.put("p/b", "2");
    const pruned = await db.prune("p/", { olderThan: 60, signal: ac.signal });
    eq([pruned.deleted, pruned.keys], [1, ["p/a"]], "the landed delete is reported; p/b was not reached");
    eq([...objects.keys()], ["p/b"], "what was left");
    const again = db.prune("p/", { olderThan: 60, signal: ac.signal });
    assert((await again.catch((e) => e)) === reason, "aborted before any delete: the reason");
  });

  test("operate: checkStore passes on this store, names every check, and leaves nothing behind", async () => {
    const store = env.makeStore();
    const report = await lib.checkStore(store);
    const failed = report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    assert(report.ok, `every required check passes: ${failed.join("; ")}`);
    eq(report.checks.filter((c) => c.required).map((c) => c.name), [
      "create-only refused on an existing key",
      "If-Match refused with a stale etag",
      "If-Match refused on a missing key",
      "a 16-way create race has exactly one winner",
      "write tokens round-trip",
      "a written key is listed",
    ], "the required checks");
    eq(report.checks.filter((c) => !c.required).map((c) => c.name),
      ["conditional DELETE (If-Match)", "conditional read (If-None-Match: 304)", "store clock offset"], "informational");
    const read = report.checks.find((c) => c.name.startsWith("conditional read"));
    assert(typeof read.ok === "boolean" && read.detail.length > 0, `whether the store answers 304: ${read.detail}`);
    if (store.kind === "memory") assert(read.ok, `the memory store answers 304: ${read.detail}`);
    const left = await new lib.Fencepost(store).objects.list("__fencepost_check/");
    eq(left, [], "what it wrote is deleted");
    if (!env.testing) return;
    // A store whose listing fails (one of the things checked) is still left clean.
    const faulty = env.testing.faultStore(store);
    faulty.inject({ status: 403, code: "AccessDenied" }, { op: "list", times: 5 });
    await rejects(lib.checkStore(faulty), lib.StorageError, "a refused listing");
    eq(await new lib.Fencepost(store).objects.list("__fencepost_check/"), [], "nothing left behind after a failed check");
  });

  test("operate: LeaseLost.reason says why — released, stolen, deleted", async () => {
    const w = world(env);
    const a = await w.db.lease("a", { ttl: 30 });
    await a.release();
    eq((await rejects(a.renew(), lib.LeaseLost, "after release")).reason, "released", "released");
    eq(a.signal.reason.reason, "released", "the signal's reason");
    const b = await w.db.lease("b", { ttl: 30 });
    w.advance(31);
    await w.peer().lease("b", { ttl: 30 });
    const stolen = await rejects(b.renew(), lib.LeaseLost, "after a steal");
    eq(stolen.reason, "stolen", "stolen");
    assert(b.signal.reason === stolen, "signal.reason is the very error the call rejected with");
    const c = await w.db.lease("c", { ttl: 30 });
    await w.raw.delete("c");
    eq((await rejects(c.renew(), lib.LeaseLost, "after a delete")).reason, "deleted", "deleted");
    eq(new lib.LeaseLost("by hand").reason, "stolen", "one made by hand: not ours any more");
    // Two handles on one period: released through one, the other learns it was released.
    const first = await w.db.lease("d", { ttl: 30, holder: "h" });
    const second = await w.db.attachLease("d", { holder: "h", ttl: 30 });
    await second.release();
    const released = await rejects(first.renew(), lib.LeaseLost, "released through the other handle");
    eq(released.reason, "released", "released, not stolen: nobody else holds it");
    assert(first.signal.reason === released, "the same error on the signal");
    // withLease's rejection for a lost lease is its handle's signal.reason too.
    let held;
    const lost = await rejects(w.db.withLease("e", { ttl: 30 }, async (lease) => {
      held = lease;
      await w.raw.delete("e");
      await lease.renew().catch(() => {});
    }), lib.LeaseLost, "lost while held");
    assert(held.signal.reason === lost, `withLease rejects with the handle's signal.reason: ${lost.reason}`);
  });

  // ------------------------------------------------------------------ cost and scale
  test("doc.update by a single writer: 1 request per update after the first; a stale view costs one extra PUT; fresh reads first", async () => {
    const w = world(env);
    const d = w.db.doc("stats/n");
    w.counts();
    eq(await d.update((n) => n + 1, { create: 0 }), 1, "created");
    eq(w.counts(), w.req(1, 1), "the first update reads");
    for (let n = 2; n <= 5; n++) {
      eq(await d.update((v) => v + 1), n, `update ${n}`);
      eq(w.counts(), w.req(0, 1), "then one guarded PUT");
    }
    await w.peer().doc("stats/n").update((v) => v + 10);
    w.counts();
    let calls = 0;
    eq(await d.update((v) => (calls++, v + 1)), 16, "exact: the other writer's +10 is kept");
    eq([calls, w.counts()], [2, w.req(1, 2)], "the refused guard, then read and CAS");
    // The remembered version never makes an update fail on its own: one attempt, stale, succeeds.
    await w.peer().doc("stats/n").update((v) => v - 10);
    w.counts();
    eq(await d.update((v) => v + 10, { maxAttempts: 1 }), 16, "maxAttempts 1 from a stale view");
    eq(w.counts(), w.req(1, 2), "the refused guard, then read and CAS");
    eq(await d.update((v) => v + 1, { fresh: true }), 17, "fresh");
    eq(w.counts(), w.req(1, 1), "fresh reads first");
    eq((await d.get()).value, 17, "get");
    w.counts();
    await d.update((v) => v + 1);
    eq(w.counts(), w.req(0, 1), "a get refreshes the view too");
    eq(w.db.doc("stats/n").forget(), undefined, "forget: synchronous, from any handle on the key");
    eq(w.counts(), w.req(0, 0), "forget sends nothing");
    eq(await d.update((v) => v + 1), 19, "after forget");
    eq(w.counts(), w.req(1, 1), "the update after forget reads first");
    // Contended: 3 handles × 10 updates each, all exact.
    const handles = [w.peer(), w.peer(), w.peer()].map((db) => db.doc("stats/c"));
    await Promise.all(handles.map(async (h) => { for (let i = 0; i < 10; i++) await h.update((v) => v + 1, { create: 0, maxAttempts: 50 }); }));
    eq((await w.db.doc("stats/c").get()).value, 30, "contended updates stay exact");
    await rejects(d.update((v) => v, { fresh: "yes" }), lib.InvalidArgument, "fresh is a boolean");
  });

  // ------------------------------------------------------------------ once, semaphore, watch
  const record = async (w, key) => JSON.parse(await w.text(key)).state;

  test("once: runs fn once and records its result; a duplicate gets it in 1 request; an unraced run is 3", async () => {
    const w = world(env);
    let runs = 0;
    const first = await w.db.once("reports/2026-05-01", async (signal) => {
      runs++;
      assert(signal instanceof AbortSignal && !signal.aborted, "fn gets a live signal");
      return { sent: 12 };
    });
    eq(first, { status: "done", value: { sent: 12 }, ran: true }, "the run");
    eq(w.counts(), w.req(1, 2), "read, create, release");
    eq(await record(w, "reports/2026-05-01"), { status: "done", value: { sent: 12 }, attempt: 1 }, "the record: a lease document's state");
    for (const db of [w.db, w.peer()]) {
      eq(await db.once("reports/2026-05-01", () => "again"), { status: "done", value: { sent: 12 }, ran: false }, "recorded");
    }
    eq(w.counts().get, 1, "a duplicate: one request");
    eq(runs, 1, "fn ran once");
    await rejects(w.db.once("k", () => 1, { tll: 5 }), lib.InvalidArgument, "option names checked");
    await rejects(Promise.resolve().then(() => w.db.once("k", "not a function")), lib.InvalidArgument, "fn is a function");
    await rejects(w.db.once("log/1", () => 1), lib.InvalidArgument, "keys checked");
  });

  test("once: a duplicate during a run answers running with wait 0, latches onto the result with wait", async () => {
    const store = env.makeStore();
    let finish;
    const gate = new Promise((r) => (finish = r));
    let started;
    const running = new Promise((r) => (started = r));
    const run = realDb(store).once("job", async () => {
      started();
      await gate;
      return "result";
    }, { ttl: 10 });
    await running;
    const dup = await realDb(store).once("job", () => "dup");
    eq(dup.status, "running", "wait 0: running");
    assert(dup.deadlineAt instanceof Date && dup.deadlineAt.getTime() > Date.now(), `the runner's deadline: ${dup.deadlineAt}`);
    const latched = realDb(store).once("job", () => "dup", { wait: 10 });
    setTimeout(finish, 150);
    eq(await latched, { status: "done", value: "result", ran: false }, "wait latches onto the run's result");
    eq(await run, { status: "done", value: "result", ran: true }, "the runner's own answer");
  });

  test("once: a throwing fn is recorded as failed and rethrown, and runs again next; a result that is not JSON is refused", async () => {
    const w = world(env);
    const boom = new TypeError("disk full");
    const caught = await w.db.once("job", () => { throw boom; }).catch((e) => e);
    assert(caught === boom, `fn's error reaches the caller unchanged: ${caught}`);
    eq(await record(w, "job"), { status: "failed", attempt: 1, error: { name: "TypeError", message: "disk full" } }, "recorded");
    eq(await w.db.once("job", async () => 2), { status: "done", value: 2, ran: true }, "run again");
    eq((await record(w, "job")).attempt, 2, "attempt 2");
    const outcomes = [];
    const heard = new lib.Fencepost(w.store, { ...w.options, onEvent: (e) => e.type === "call" && outcomes.push(e.outcome) });
    const refused = await heard.once("bad", () => 10n).catch((e) => e);
    assert(refused instanceof lib.InvalidArgument, `a BigInt result: ${refused}`);
    eq([refused.key, outcomes], ["bad", ["INVALID_ARGUMENT"]], "the call's key and event say so");
    assert(refused.message.includes("BigInt"), `says why: ${refused.message}`);
    const bad = await record(w, "bad");
    eq([bad.status, bad.error.name], ["failed", "InvalidArgument"], "recorded as a failure");
    assert(bad.error.message.includes("BigInt") && !bad.error.message.startsWith("invalid argument"), `recorded message: ${bad.error.message}`);
  });

  test("once: a run whose lease is lost rejects with LeaseLost, even when fn then throws its own error; no failure is recorded", async () => {
    const w = world(env);
    const own = new Error("stopped on my own");
    const lost = await w.db.once("taken", async (signal) => {
      await w.peer().breakLease("taken");
      // Keep-alive (every 0.1 s) finds the lease broken and aborts the signal; fn stops with an error of its own.
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      throw own;
    }, { ttl: 0.3 }).catch((e) => e);
    assert(lost instanceof lib.LeaseLost, `LeaseLost: ${lost}`);
    eq(await record(w, "taken"), { status: "running", attempt: 1 }, "the key is the breaker's: no failure written over it");
    // Lost without anyone noticing until the release that would record the failure.
    const unnoticed = await w.db.once("taken-2", async () => {
      await w.peer().breakLease("taken-2");
      throw own;
    }, { ttl: 30 }).catch((e) => e);
    assert(unnoticed instanceof lib.LeaseLost, `LeaseLost found by the release: ${unnoticed}`);
    eq(await record(w, "taken-2"), { status: "running", attempt: 1 }, "nothing written over the breaker's");
  });

  test("events: a fencepost error thrown through a callback is the call's outcome; any other error is CALLBACK", async () => {
    const w = world(env);
    const outcomes = [];
    const db = new lib.Fencepost(w.store, { ...w.options, onEvent: (e) => e.type === "call" && outcomes.push(`${e.method} ${e.outcome}`) });
    const numbers = { "~standard": { version: 1, vendor: "test", validate: (v) => (typeof v === "number" ? { value: v } : { issues: [{ message: "not a number" }] }) } };
    const bad = await db.doc("n", { schema: numbers }).update(() => "ten", { create: 1 }).catch((e) => e);
    assert(bad instanceof lib.InvalidArgument, `the schema refused fn's result: ${bad}`);
    // A guarded write inside withLease meets the period's end: fn rethrows the LeaseLost.
    const lost = await db.withLease("job", { ttl: 30 }, async (lease) => {
      await w.peer().breakLease("job");
      await lease.write("after the break");
    }).catch((e) => e);
    assert(lost instanceof lib.LeaseLost, `fn's LeaseLost: ${lost}`);
    // A user's own error whose `code` happens to be one of fencepost's is still the user's.
    const boom = Object.assign(new Error("boom"), { code: "NOT_FOUND" });
    eq(await db.withLease("other", { ttl: 30 }, () => { throw boom; }).catch((e) => e), boom, "fn's own error, unchanged");
    eq(outcomes, ["doc.update INVALID_ARGUMENT", "withLease LEASE_LOST", "withLease CALLBACK"], "outcomes");
  });

  test("once: a runner killed mid-run leaves running; it is re-run after its ttl", async () => {
    const w = world(env);
    // A runner that took the run and died: never renewed, never released.
    await w.peer().lease("job", { ttl: 10, holder: "dead", stateFn: () => ({ status: "running", attempt: 1 }) });
    const busy = await w.db.once("job", () => "mine");
    eq([busy.status, busy.deadlineAt.getTime()], ["running", w.clock.t + 10_000], "running until the dead runner's deadline");
    w.advance(10.5);
    eq(await w.db.once("job", () => "mine"), { status: "done", value: "mine", ran: true }, "re-run after the ttl");
    const doc = JSON.parse(await w.text("job"));
    eq([doc.epoch, doc.state.attempt], [2, 2], "a new period, attempt 2");
  });

  test("once: a done record is the answer in 1 request even while someone holds the key's lease", async () => {
    const w = world(env);
    eq(await w.db.once("job", () => "first"), { status: "done", value: "first", ran: true }, "the run");
    // A plain lease on the key keeps its state: the record stays done, under another holder.
    assert(await w.peer().lease("job", { ttl: 30, holder: "other" }), "held by another");
    w.counts();
    let ran = false;
    eq(await w.db.once("job", () => { ran = true; return "again"; }, { wait: 5 }), { status: "done", value: "first", ran: false }, "recorded, not running");
    eq(w.counts(), w.req(1, 0), "one read, nothing written, no waiting");
    assert(!ran, "fn did not run");
  });

  test("options: NaN and ±Infinity are refused by name, never taken as the default", async () => {
    const w = world(env);
    for (const bad of [NaN, Infinity, -Infinity]) {
      const e = await rejects(w.db.once("k", () => 1, { ttl: bad }), lib.InvalidArgument, `once ttl ${bad}`);
      assert(/ttl/.test(e.message) && /finite/.test(e.message), `names the option: ${e.message}`);
      await rejects(w.db.counter("c").add(bad), lib.InvalidArgument, `counter.add(${bad})`);
      await rejects(w.db.lease("k", { ttl: 10, wait: bad }), lib.InvalidArgument, `lease wait ${bad}`);
      await rejects(Promise.resolve().then(() => w.db.watch("k", { interval: bad })), lib.InvalidArgument, `watch interval ${bad}`);
      await rejects(Promise.resolve().then(() => w.db.semaphore("s", { limit: 2, ttl: bad })), lib.InvalidArgument, `semaphore ttl ${bad}`);
    }
    eq(await w.raw.list(), [], "nothing written");
  });

  test("semaphore: 16 concurrent acquirers on limit 3 never hold more than 3 permits at once", async () => {
    const store = env.makeStore();
    let inside = 0;
    let most = 0;
    const epochs = [];
    await Promise.all(Array.from({ length: 16 }, () => realDb(store).semaphore("pool", { limit: 3, ttl: 10 })
      .withPermit({ wait: 30 }, async (permit, signal) => {
        most = Math.max(most, ++inside);
        assert(/^pool\/[0-2]$/.test(permit.key) && !signal.aborted, `a slot: ${permit.key}`);
        epochs.push(permit.epoch);
        await sleep(20);
        inside--;
      })));
    eq(epochs.length, 16, "every acquirer ran");
    assert(most >= 1 && most <= 3, `at most 3 at once, saw ${most}`);
    const holders = await realDb(store).semaphore("pool", { limit: 3, ttl: 10 }).holders();
    eq(holders, [], "all released");
  });

  test("semaphore: a permit is a fenced lease on a slot; 2 requests when free, limit reads when full; holders", async () => {
    const w = world(env);
    const sem = w.db.semaphore("api", { limit: 2, ttl: 30 });
    eq([sem.key, sem.limit, sem.ttl], ["api", 2, 30], "plain data");
    w.counts();
    const a = await sem.acquire({ holder: "a" });
    eq(w.counts(), w.req(1, 1), "one read, one write");
    const b = await sem.acquire();
    assert(a instanceof lib.Lease && b instanceof lib.Lease && a.key !== b.key, "two slots");
    w.counts();
    eq(await sem.acquire(), null, "full");
    eq(w.counts(), w.req(2, 0), "one read per slot");
    const holders = await sem.holders();
    eq(holders.map((h) => h.slot), [0, 1], "by slot");
    const mine = holders.find((h) => h.holder === "a");
    assert(mine && mine.epoch === 1 && mine.deadlineAt instanceof Date, `a's permit: ${JSON.stringify(mine)}`);
    w.advance(31);
    eq(await sem.holders(), [], "expired permits are not holders");
    const c = await sem.acquire();
    assert(c.epoch === 2, "an expired slot is taken with the next epoch");
    const stale = c.key === a.key ? a : b;
    await rejects(stale.write({ late: true }), lib.LeaseLost, "the old permit is fenced");
    await rejects(Promise.resolve().then(() => w.db.semaphore("api", { limit: 3 })), lib.InvalidArgument, "ttl required");
    // A handle refused when it is made is reported as a refused call is: one event, no requests.
    const heard = [];
    const listened = new lib.Fencepost(w.store, { onEvent: (e) => e.type === "call" && heard.push([e.method, e.key, e.requests, e.outcome]) });
    await rejects(Promise.resolve().then(() => listened.semaphore("api", { limit: 3 })), lib.InvalidArgument, "ttl required");
    await rejects(Promise.resolve().then(() => listened.counter("hits", { shards: "4" })), lib.InvalidArgument, "shards a number");
    eq(heard, [["semaphore", "api", 0, "INVALID_ARGUMENT"], ["counter", "hits", 0, "INVALID_ARGUMENT"]], "the refusals' events");
    // Judged when the handle is made where the wasm is loaded, else at the first call: either way, refused.
    await rejects(Promise.resolve().then(() => w.db.semaphore("api", { limit: 0, ttl: 30 }).acquire()), lib.InvalidArgument, "limit >= 1");
    for (const limit of [-1, 2 ** 32 + 1]) {
      const e = await rejects(Promise.resolve().then(() => w.db.semaphore("api", { limit, ttl: 30 }).acquire()), lib.InvalidArgument, `limit ${limit}`);
      assert(e.message.includes(String(limit)) && e.message.includes("from 1 to 1000"), `names the limit given and the range: ${e.message}`);
    }
  });

  test("semaphore: a holder taking a second permit gets a free slot, never its own held one", async () => {
    const w = world(env);
    const sem = w.db.semaphore("pool", { limit: 3, ttl: 30 });
    const permits = [];
    for (let i = 0; i < 3; i++) permits.push(await sem.acquire({ holder: "w" }));
    eq(permits.map((p) => p?.key).sort(), ["pool/0", "pool/1", "pool/2"], "three slots, one each");
    eq(permits.map((p) => p.epoch), [1, 1, 1], "each a first period");
    eq(await sem.acquire({ holder: "w" }), null, "full, even for the same holder");
    for (const p of permits) await p.renew(); // none was fenced by a later acquisition
    eq((await sem.holders()).length, 3, "three holders");
  });

  test("watch: the current state, then 20 successive writes in order, a deletion once; stops on break and on abort", async () => {
    const store = env.makeStore();
    const db = realDb(store);
    const seen = [];
    for await (const now of db.watch("flags", { interval: 0.05 })) {
      seen.push(now === null ? null : now.value.v);
      if (seen.length === 21) break;
      await db.objects.put("flags", JSON.stringify({ v: seen.length }));
    }
    eq(seen, [null, ...Array.from({ length: 20 }, (_, i) => i + 1)], "every write, in order");
    const counted = lib.countingStore(store);
    const cdb = realDb(counted);
    const it = cdb.watch("flags", { interval: 0.05 });
    // Whatever fails below, no watch is left polling (it would keep the process alive).
    const both = db.watch("flags", { interval: 0.05 });
    try {
      const current = await it.next();
      eq([current.done, current.value.kind, current.value.value], [false, "json", { v: 20 }], "the current state first");
      const changed = it.next();
      await sleep(200);
      const polls = counted.requestCounts().get;
      // At most one per interval; at least a second one (a slow server answers fewer in the time).
      assert(polls >= 2 && polls <= 6, `an unchanged key: one small request per interval (${polls})`);
      await db.objects.delete("flags");
      eq((await changed).value, null, "a deletion");
      await it.return();
      const after = counted.requestCounts().get;
      await sleep(150);
      eq(counted.requestCounts().get, after, "nothing more after leaving the loop");
      // Two next() calls made at once queue, as an async generator's do.
      const [first, second] = [both.next(), both.next()];
      eq((await first).value, null, "the first of two next() calls made at once: the current state");
      await db.objects.put("flags", JSON.stringify({ v: 21 }));
      eq((await second).value?.value, { v: 21 }, "the second: the change after it");
    } finally {
      await it.return();
      await both.return();
    }
    const controller = new AbortController();
    const reason = new Error("shutting down");
    const caught = await (async () => {
      for await (const _ of db.watch("flags", { interval: 0.05, signal: controller.signal })) {
        setTimeout(() => controller.abort(reason), 50);
      }
    })().catch((e) => e);
    assert(caught === reason, `an abort stops it with the signal's reason: ${caught}`);
    await rejects(Promise.resolve().then(() => db.watch("flags", { interval: 0 }).next()), lib.InvalidArgument, "interval >= 0.05");
    // Leaving the loop while a poll waits is no failure: its call event says "ok" (an abort's, ABORTED).
    const outcomes = [];
    const heard = new lib.Fencepost(store, { onEvent: (e) => e.type === "call" && outcomes.push(e.outcome) });
    const left = heard.watch("flags", { interval: 0.05 });
    await left.next();
    const waiting = left.next();
    await sleep(120);
    await left.return();
    eq(await waiting, { done: true, value: undefined }, "the waiting next() ends the loop");
    const stopper = new AbortController();
    const aborted = heard.watch("flags", { interval: 0.05, signal: stopper.signal });
    await aborted.next();
    const cut = aborted.next();
    setTimeout(() => stopper.abort(reason), 50);
    eq(await cut.catch((e) => e), reason, "an abort rejects with its reason");
    eq(outcomes, ["ok", "ok", "ok", "ABORTED"], "the events: left is ok, aborted is ABORTED");
  });

  test("objects.get with ifNoneMatch: notModified while unchanged (1 request, reported as a 304), the object once changed", async () => {
    const w = world(env);
    const heard = [];
    const o = new lib.Fencepost(w.store, { ...w.options, onEvent: (e) => e.type === "request" && heard.push(e) }).objects;
    const { etag } = await o.put("k", "one");
    w.counts();
    eq(await o.get("k", { ifNoneMatch: etag }), { notModified: true }, "unchanged");
    eq(w.counts(), w.req(1, 0), "one request");
    // A server that ignores the condition sends the body; the answer and its event say 304 alike.
    eq([heard.at(-1).status, heard.at(-1).outcome], [304, "not-modified"], "the request's event");
    await o.put("k", "two");
    const now = await o.get("k", { ifNoneMatch: etag });
    eq(new TextDecoder().decode(now.data), "two", "changed: the object");
    await o.delete("k");
    eq(await o.get("k", { ifNoneMatch: etag }), null, "deleted: null");
    // `*` is a write's condition: stores answer it on a read each their own way.
    for (const ifNoneMatch of ["*", ""]) await rejects(o.get("k", { ifNoneMatch }), lib.InvalidArgument, `ifNoneMatch ${JSON.stringify(ifNoneMatch)}`);
  });

  test("counter: add touches one shard, value sums them; exact under concurrency; shards are docs at key/<i>", async () => {
    const w = world(env);
    const peers = [w.peer(), w.peer(), w.peer(), w.peer()];
    await Promise.all(peers.map(async (db) => {
      const c = db.counter("metrics/hits", { shards: 4 });
      await Promise.all(Array.from({ length: 10 }, () => c.add()));
    }));
    const c = w.db.counter("metrics/hits", { shards: 4 });
    eq(c.key, "metrics/hits", "key");
    w.counts();
    eq(await c.value(), 40, "every add counted once");
    eq(w.counts(), w.req(4, 0), "value: one read per shard");
    await c.add(5);
    await c.add(-3);
    eq(w.counts().put, 2, "an add whose shard's version is known: one PUT");
    eq(await c.value(), 42, "negative adds subtract");
    const keys = await w.raw.list("metrics/hits/");
    assert(keys.length <= 4 && keys.every((k) => /^metrics\/hits\/[0-3]$/.test(k)), `shard keys: ${keys}`);
    eq(await w.db.counter("metrics/fresh").value(), 0, "an untouched counter is 0 (16 shards by default)");
    await rejects(c.add(1.5), lib.InvalidArgument, "whole numbers");
    await rejects(c.add(2 ** 53), lib.InvalidArgument, "within 2^53");
    // Each of n shards stays within (2^53 - 1) / n, so no acknowledged add makes the value inexact.
    const big = w.db.counter("metrics/big", { shards: 2 });
    const share = Math.floor((2 ** 53 - 1) / 2);
    await w.raw.put("metrics/big/0", String(share));
    await w.raw.put("metrics/big/1", String(share));
    await rejects(big.add(1), lib.InvalidArgument, "a shard past its share of 2^53 - 1");
    eq(await big.value(), 2 * share, "the value at its bound, exact");
    await w.raw.put("metrics/big/0", String(2 ** 53 - 1)); // as a one-shard counter on the key writes
    await rejects(big.value(), lib.CorruptObjectError, "shards summing past 2^53 - 1: refused, not rounded");
    for (const shards of [0, 1001, 2.5]) {
      await rejects(Promise.resolve().then(() => w.db.counter("m", { shards }).value()), lib.InvalidArgument, `${shards} shards`);
    }
    await rejects(Promise.resolve().then(() => w.db.counter("m", { shard: 2 })), lib.InvalidArgument, "option names checked");
    await rejects(Promise.resolve().then(() => w.db.counter("").add(1)), lib.InvalidArgument, "the counter's own key is checked (not only its shards')");
  });

  // ------------------------------------------------------------------ store conformance
  // The cases fencepost/testing exports for users' own stores, run here on every store of every
  // runtime: one test each, named as the export names them.
  if (env.testing?.storeConformance) {
    env.testing.storeConformance(env.makeStore(), { test: (name, fn) => test(`store conformance: ${name}`, fn) });
  }

  // ------------------------------------------------------------------ fencepost/testing
  if (env.testing) {
    const { faultStore, manualClock } = env.testing;
    const tk = () => {
      const base = env.makeStore();
      const store = faultStore(base);
      const clock = manualClock();
      return { base, store, clock, db: new lib.Fencepost(store, { clock }), peer: () => new lib.Fencepost(base, { clock }) };
    };

    test("testing: the toolkit's misuse is an InvalidArgument", async () => {
      const t = tk();
      let made;
      try {
        made = new t.store.constructor();
      } catch (e) {
        made = e;
      }
      assert(made instanceof lib.InvalidArgument, `a FaultStore made directly: ${made}`);
      for (const op of ["get", "delete", "list"]) {
        let e;
        try {
          t.store.inject("conflict", { op });
        } catch (err) {
          e = err;
        }
        assert(e instanceof lib.InvalidArgument, `a conflict on a ${op}: ${e}`);
      }
      await rejects(t.clock.advance(1e300), lib.InvalidArgument, "past the year 9999");
      assert(t.clock.now() < Date.UTC(10000, 0, 1), "the clock stayed where a lease can record it");
      const stopped = new AbortController();
      stopped.abort(new Error("stop"));
      const e = await env.testing.storeConformance(env.makeStore(), { signal: stopped.signal }).catch((err) => err);
      eq(e?.message, "stop", "an aborted run rejects with the signal's reason");
    });

    test("testing: a memory store's objects are stamped by the manual clock, so prune and inspect judge by it", async () => {
      const wraps = [(s, _c) => s, (s, c) => faultStore(s, { clock: c }), (s, _c) => faultStore(s), (s, _c) => lib.countingStore(s)];
      for (const wrap of wraps) {
        const clock = manualClock();
        const db = new lib.Fencepost(wrap(lib.memoryStore(), clock), { clock });
        await db.claim("p/old", 1);
        await clock.advance(100);
        await db.claim("p/new", 2);
        const seen = (await db.inspect("p/old")).lastModified.getTime();
        assert(Math.abs(seen - (clock.now() - 100_000)) < 1000, `stamped on the manual clock: ${new Date(seen).toISOString()}`);
        const pruned = await db.prune("p/", { olderThan: 50 });
        eq([pruned.deleted, pruned.keys], [1, ["p/old"]], "older than 50 s by the manual clock");
      }
    });

    test("testing: a lease handle whose period ended keeps the version it ended with", async () => {
      const t = tk();
      // A renew racing a release on one handle: whichever lands first, the handle ends released.
      const lease = await t.db.lease("ended/race", { ttl: 30 });
      const [released, renewed] = await Promise.allSettled([lease.release(), lease.renew()]);
      eq(released.status, "fulfilled", "the release lands");
      if (renewed.status === "rejected") {
        assert(renewed.reason instanceof lib.LeaseLost && renewed.reason.reason === "released", `the renew: ${renewed.reason}`);
      }
      const stored = (await t.db.inspect("ended/race")).lease;
      eq([lease.released, lease.deadlineAt.getTime()], [true, stored.deadlineAt.getTime()], "the handle shows the release");
      // Released through another handle of the period: this one hears it as a LeaseLost.
      const held = await t.db.lease("ended/other", { ttl: 30, holder: "h" });
      const other = await t.peer().attachLease("ended/other", { holder: "h", ttl: 30 });
      await other.release({ state: { done: 1 } });
      const e = await rejects(held.renew(), lib.LeaseLost, "a renew after another handle released");
      eq([e.reason, held.signal.aborted, held.signal.reason === e], ["released", true, true], "the end, heard");
    });

    test("testing: keepAlive() after stop() starts anew once the stop settles; refused at the end with the handle's own LeaseLost", async () => {
      const t = tk();
      const lease = await t.db.lease("ka/restart", { ttl: 30 });
      const first = lease.keepAlive({ every: 10 });
      const stopping = first.stop();
      let refused;
      try {
        lease.keepAlive({ every: 60 });
      } catch (err) {
        refused = err;
      }
      assert(refused instanceof lib.InvalidArgument && !lease.signal.aborted, `a bad interval while a stop settles: ${refused}`);
      const second = lease.keepAlive({ every: 10 });
      assert(second !== first, "a new keeper, not the stopping one");
      eq(lease.keepAlive(), second, "idempotent while it runs");
      await stopping;
      const before = lease.deadlineAt.getTime();
      await t.clock.advance(11);
      assert(lease.deadlineAt.getTime() > before, "the new keep-alive renewed");
      await second.stop();
      await lease.release();

      const late = await t.db.lease("ka/late", { ttl: 5 });
      const signal = late.signal;
      await t.clock.advance(6);
      let thrown;
      try {
        late.keepAlive();
      } catch (err) {
        thrown = err;
      }
      assert(thrown instanceof lib.LeaseLost && thrown.reason === "expired", `keepAlive past the deadline: ${thrown}`);
      assert(signal.aborted && signal.reason === thrown, "the very LeaseLost the signal carries");
    });

    test("testing: once with a function that returns at once, under R2's one write per second per key, records its result", async () => {
      // Acquiring and releasing are two writes to one key within a second: the release is
      // throttled (429) and must wait out the second, not spend its retries inside it.
      const clock = manualClock();
      const store = faultStore(env.makeStore(), { clock });
      store.limitWrites({ perKey: 1 });
      const db = new lib.Fencepost(store, { clock });
      let settled = false;
      const run = db.once("r2/once", async () => "v").finally(() => (settled = true));
      for (let i = 0; i < 100 && !settled; i++) await clock.advance(0.1);
      eq(await run, { status: "done", value: "v", ran: true }, "the result recorded");
      eq(await db.once("r2/once", async () => "again"), { status: "done", value: "v", ran: false }, "and answered from then on");
    });

    test("testing: a manual clock's advances add up, and its jitter repeats from run to run", async () => {
      const clock = manualClock(Date.UTC(2026, 0, 1));
      await Promise.all([clock.advance(5), clock.advance(3)]);
      eq(clock.now() - Date.UTC(2026, 0, 1), 8000, "advance(5) and advance(3) together move 8 s");
      // Three 503s: the claim backs off three times; under a manual clock it takes the same time on every run.
      const took = [];
      for (let run = 0; run < 3; run++) {
        const t = tk();
        t.store.inject({ status: 503 }, { op: "put", times: 3 });
        let done = false;
        const claim = t.db.claim("jitter/k", 1).then(() => (done = true));
        const start = t.clock.now();
        for (let step = 0; step < 500 && !done; step++) await t.clock.advance(0.01);
        await claim;
        took.push(Math.round(t.clock.now() - start));
      }
      eq(new Set(took).size, 1, `the same backoff on every run: ${took.join(", ")} ms`);
    });

    test("testing: a lost response on a claim's put still reports won: true; a second claimer converges", async () => {
      const t = tk();
      t.store.inject("lostResponse", { op: "put", key: "cron/" });
      const won = await t.db.claim("cron/tick", { by: "a" });
      eq([won.won, won.value], [true, { by: "a" }], "the winner hears it won");
      const lost = await t.peer().claim("cron/tick", { by: "b" });
      eq([lost.won, lost.value], [false, { by: "a" }], "the second claimer converges");
    });

    test("testing: injected conflicts make doc.update retry and land once", async () => {
      const t = tk();
      const d = t.db.doc("counter");
      await d.update(() => 0, { create: 0 });
      t.store.inject("conflict", { op: "put", key: "counter", times: 2 });
      t.store.resetRequestCounts();
      let calls = 0;
      const written = await d.update((v) => (calls++, v + 1));
      eq(calls, 3, "fn ran once per attempt (two conflicts, then success)");
      eq(t.store.requestCounts().total, 5, "the remembered version's PUT, then 2 requests per read-and-CAS attempt");
      eq((await d.get()).value, written, "what update resolved to is what is stored");
      t.store.inject("conflict", { op: "put", key: "claims/" });
      eq((await t.db.claim("claims/x", 1)).won, false, "a claim loses to the competing write");
    });

    test("testing: an injected 412 or 404 on a conditional write is a condition that did not hold, as S3's answer is", async () => {
      const store = faultStore(env.makeStore());
      const o = new lib.Fencepost(store).objects;
      store.inject({ status: 412 }, { op: "put" });
      eq(await o.put("new", "v", { ifAbsent: true }), null, "412 on a create-only put: lost");
      const { etag } = await o.put("k", "v");
      store.inject({ status: 404 }, { op: "put" });
      eq(await o.put("k", "v2", { ifMatch: etag }), null, "404 on If-Match: lost");
      store.inject({ status: 412 }, { op: "put" });
      await rejects(o.put("k", "v3"), lib.StorageError, "412 to a plain put is a failure");
      eq(new TextDecoder().decode((await o.get("k")).data), "v", "nothing written");
      // A 404 NoSuchKey on a read is no object, on a delete nothing left to delete, as S3's is.
      store.inject({ status: 404 }, { op: "get" });
      eq(await o.get("k"), null, "404 on a get: absent");
      store.inject({ status: 404 }, { op: "get" });
      eq(await o.get("k", { ifNoneMatch: etag }), null, "404 on a conditional get: absent");
      store.inject({ status: 404 }, { op: "delete" });
      eq(await o.delete("k"), undefined, "404 on a delete: done");
      store.inject({ status: 404, code: "NoSuchBucket" }, { op: "get" });
      await rejects(o.get("k"), lib.StorageError, "another 404 is a failure");
    });

    test("testing: limitWrites({perKey}) answers 429 past the limit per key per second; a sharded counter gets past it; null lifts it", async () => {
      const base = env.makeStore();
      const store = faultStore(base).limitWrites({ perKey: 1 });
      const db = new lib.Fencepost(store, { retry: { maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.02 } });
      const d = db.doc("hot");
      await d.update((n) => n + 1, { create: 0 });
      const e = await rejects(d.update((n) => n + 1), lib.StorageError, "a second write within the second");
      eq([e.status, e.s3Code], [429, "SlowDown"], "429 SlowDown, as R2 answers");
      await db.doc("other").update((n) => n + 1, { create: 0 });
      const c = db.counter("tally", { shards: 8 });
      let ok = 0, throttled = 0;
      await Promise.all(Array.from({ length: 8 }, () => c.add().then(() => ok++, (err) => {
        if (!(err instanceof lib.StorageError && err.status === 429)) throw err;
        throttled++;
      })));
      eq(await c.value(), ok, "exact: every acknowledged add, none of the refused ones");
      assert(ok >= 2, `spread over shards, several adds get through within one second (${ok} of 8)`);
      store.limitWrites(null);
      await d.update((n) => n + 1);
      await d.update((n) => n + 1);
      eq((await d.get()).value, 3, "no limit");
      await rejects(Promise.resolve().then(() => store.limitWrites({ perKey: 0 })), lib.InvalidArgument, "perKey >= 1");
      await rejects(Promise.resolve().then(() => store.limitWrites({})), lib.InvalidArgument, "perKey required");
    });

    test("withLease, once, withPermit: an abort during the release abandons it and reads back once (AmbiguousWriteError, cause: the reason)", async () => {
      for (const call of ["withLease", "once", "withPermit"]) {
        const clock = manualClock();
        const store = faultStore(env.makeStore(), { clock, timeout: 5 });
        const db = new lib.Fencepost(store, { clock });
        const ac = new AbortController();
        const reason = new Error("the caller gave up");
        const fn = async () => {
          store.inject("hang", { times: 100 }); // the store stops answering: the release hangs
          return 1;
        };
        const options = { ttl: 60, signal: ac.signal };
        const running = call === "once" ? db.once("job", fn, options)
          : call === "withPermit" ? db.semaphore("pool", { limit: 1, ttl: 60 }).withPermit({ signal: ac.signal }, fn)
          : db.withLease("job", options, fn);
        let settled;
        running.then(() => (settled = "resolved"), (e) => (settled = e));
        for (let i = 0; i < 200 && store.requestCounts().put < 2; i++) await new Promise((r) => setTimeout(r, 1));
        ac.abort(reason);
        await clock.advance(5.1); // the one read-back's timeout; the release is not retried
        for (let i = 0; i < 20 && settled === undefined; i++) await new Promise((r) => setTimeout(r, 1));
        assert(settled instanceof lib.AmbiguousWriteError && settled.cause === reason, `${call}: ${settled}`);
      }
    });

    test("testing: a \"hang\" fails after the fault store's timeout with nothing applied; pause(s) holds requests until it ends, or fails them when it outlasts the timeout", async () => {
      const clock = manualClock();
      const store = faultStore(env.makeStore(), { clock, timeout: 5 });
      const db = new lib.Fencepost(store, { clock, retry: { maxAttempts: 1 } });
      await db.objects.put("k", "v1");
      let settled = false;
      store.inject("hang", { op: "get" });
      const hung = db.objects.get("k").finally(() => (settled = true));
      hung.catch(() => {});
      await clock.advance(4.9);
      eq(settled, false, "still waiting before the timeout");
      await clock.advance(0.2);
      const e = await rejects(hung, lib.StorageError, "unanswered after the timeout");
      assert(/no answer within 5 s/.test(e.message), e.message);
      store.pause(3);
      settled = false;
      const held = db.objects.get("k").finally(() => (settled = true));
      await clock.advance(2);
      eq(settled, false, "held while the store is paused");
      await clock.advance(1.5);
      eq(new TextDecoder().decode((await held).data), "v1", "answered once the pause ended");
      store.pause(60);
      const outlasted = db.objects.get("k");
      outlasted.catch(() => {});
      await clock.advance(5.1);
      await rejects(outlasted, lib.StorageError, "a pause past the timeout fails the request");
      await clock.advance(60);
      eq(new TextDecoder().decode((await db.objects.get("k")).data), "v1", "resumed");
      await rejects(Promise.resolve().then(() => faultStore(env.makeStore(), { timeout: 0 }).requestCounts()), lib.InvalidArgument, "timeout > 0");
    });

    test("testing: {status: 503} is retried (under the manual clock's backoff) and counted", async () => {
      const t = tk();
      t.store.inject({ status: 503 }, { op: "get", times: 2 });
      const pending = t.db.doc("x").get();
      await t.clock.advance(5);
      eq(await pending, null, "succeeded on the third attempt");
      eq(t.store.requestCounts().get, 3, "three GETs counted");
      t.store.inject({ status: 403 }, { op: "get" });
      const e = await rejects(t.db.doc("x").get(), lib.StorageError, "403 is not retried");
      eq([e.code, e.s3Code, e.status, e.key], ["STORAGE_ERROR", "AccessDenied", 403, "x"], "typed, with its key");
      t.store.inject({ status: 403 }, { op: "list" });
      eq((await rejects(t.db.objects.list("x/"), lib.StorageError, "a refused listing")).key, undefined, "a listing has no key");
      t.store.inject("transport", { key: "never" });
      t.store.clearFaults();
      eq(await t.db.doc("never").get(), null, "cleared");
    });

    test("testing: a request someone else left unanswered does not hold up a manual clock made after it", async () => {
      // In workerd a request abandoned by an earlier Worker request never settles: advance() waits
      // only for the requests made since its clock was.
      const unanswered = { get: (_key, { signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))) };
      const stuck = lib.customStore({ ...unanswered, put: () => null, delete: () => true, list: () => ({ entries: [] }) }, { timeout: 600 });
      const leaving = new AbortController();
      const left = new lib.Fencepost(stuck).objects.get("k", { signal: leaving.signal });
      left.catch(() => {});
      const clock = manualClock();
      const db = new lib.Fencepost(env.makeStore(), { clock });
      const pending = db.claim("t/unheld", 1);
      const started = Date.now();
      await clock.advance(1);
      assert(Date.now() - started < 10_000, `advance() did not wait for the other request (${Date.now() - started} ms)`);
      eq((await pending).won, true, "the clock's own call ran");
      leaving.abort();
      const reason = await left.then(() => null, (e) => e);
      eq(reason?.name, "AbortError", "the left request, cancelled by its signal");
    });

    test("testing: when keep-alive finds its lease broken, signal's listeners can read the handle's fields", async () => {
      const t = tk();
      const lease = await t.db.lease("job", { ttl: 30 });
      /** @type {any} */
      let seen;
      lease.signal.addEventListener("abort", () => {
        try {
          seen = { epoch: lease.epoch, released: lease.released, etag: lease.etag, state: lease.state, at: lease.deadlineAt.getTime() };
        } catch (e) {
          seen = e;
        }
      });
      lease.keepAlive();
      await t.peer().breakLease("job");
      await t.clock.advance(11);
      assert(lease.signal.aborted && lease.signal.reason?.reason === "stolen", `aborted as stolen: ${lease.signal.reason}`);
      assert(!(seen instanceof Error), `the fields read in the listener: ${seen}`);
      eq([seen?.epoch, seen?.released], [1, false], "the handle's last snapshot");
    });

    test("testing: under manualClock a 30-s lease is not stolen at 29 s and is at 31 s (the old handle fenced)", async () => {
      const t = tk();
      const lease = await t.db.lease("job", { ttl: 30 });
      await t.clock.advance(29);
      eq(await t.peer().lease("job", { ttl: 30 }), null, "held at 29 s");
      await t.clock.advance(2);
      const thief = await t.peer().lease("job", { ttl: 30 });
      eq(thief?.epoch, 2, "stolen at 31 s");
      await rejects(lease.renew(), lib.LeaseLost, "the old handle is fenced");
      assert(lease.signal.aborted, "and its signal aborted");
    });

    // withLease's three outcomes, the same as the Rust core's own tests check them (it is the
    // core's with_lease): a lease lost while fn runs, fn throwing, the release failing.
    test("testing: withLease — a lease lost while fn runs lets fn finish, then rejects with LeaseLost", async () => {
      const t = tk();
      let finished = false;
      let settled = false;
      const run = t.db.withLease("job", { ttl: 3 }, async (_lease, signal) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        finished = true;
        return "fn's result";
      });
      run.then(() => (settled = true), () => (settled = true));
      await t.clock.advance(0.5);
      t.store.inject({ status: 503 }, { op: "put", times: 1000 });
      const started = t.clock.now();
      for (let i = 0; i < 40 && !settled; i++) await t.clock.advance(0.25);
      await rejects(run, lib.LeaseLost, "the lease was lost while fn ran");
      assert(finished, "fn ran to its end (told by its signal)");
      assert(t.clock.now() - started < 3000, `settled before the deadline (${t.clock.now() - started} ms)`);
    });

    test("testing: withLease — fn throwing rejects with its error and releases", async () => {
      const t = tk();
      const boom = new Error("fn failed");
      const e = await t.db.withLease("job", { ttl: 30 }, async () => { throw boom; }).catch((err) => err);
      assert(e === boom, `fn's error unchanged: ${e}`);
      eq(JSON.parse(new TextDecoder().decode((await t.peer().objects.get("job")).data)).holder, null, "released");
    });

    test("testing: withLease — a failed release is reported", async () => {
      const t = tk();
      const run = t.db.withLease("job", { ttl: 30 }, async () => {
        t.store.inject({ status: 403 }, { op: "put" }); // the next put is the release
        return "fn's result";
      });
      const e = await rejects(run, lib.StorageError, "the release failed");
      eq([e.s3Code, e.key], ["AccessDenied", "job"], "the store's refusal, of the lease's key");
      const stored = JSON.parse(new TextDecoder().decode((await t.peer().objects.get("job")).data));
      assert(stored.holder !== null, "still held until its deadline");
    });

    test("testing: LeaseLost.reason is expired when keep-alive cannot renew in time; cause: the last storage error", async () => {
      const t = tk();
      const lease = await t.db.lease("job", { ttl: 3 });
      lease.keepAlive({ every: 1 });
      t.store.inject({ status: 503 }, { op: "put", times: 1000 });
      for (let i = 0; i < 40 && !lease.signal.aborted; i++) await t.clock.advance(0.25);
      const reason = lease.signal.reason;
      assert(reason instanceof lib.LeaseLost, `LeaseLost: ${reason}`);
      eq(reason.reason, "expired", "reason");
      assert(reason.cause instanceof lib.StorageError && reason.cause.status === 503, `cause: ${reason.cause}`);
      t.store.clearFaults();
      eq((await rejects(lease.renew(), lib.LeaseLost, "later calls")).reason, "expired", "the same reason");
    });

    test("testing: keep-alive renews on each advance() with no real waiting", async () => {
      const t = tk();
      const lease = await t.db.lease("job", { ttl: 3 });
      lease.keepAlive({ every: 1 });
      const started = Date.now();
      for (let i = 0; i < 30; i++) {
        await t.clock.advance(1);
        const left = (lease.deadlineAt.getTime() - t.clock.now()) / 1000;
        assert(left > 1.9, `renewed at ${i + 1} s (${left} s left)`);
      }
      eq(await t.peer().lease("job", { ttl: 3 }), null, "never stolen over 30 manual seconds");
      assert(Date.now() - started < 5000, `no real waiting (${Date.now() - started} ms)`);
      await lease[Symbol.asyncDispose]();
      const released = JSON.parse(new TextDecoder().decode((await t.peer().objects.get("job")).data));
      eq(released.holder, null, "released");
    });
  }

  // ------------------------------------------------------------------ exports and errors
  test("exports the documented API and error classes", async () => {
    for (const name of ["Fencepost", "memoryStore", "s3Store", "r2Store", "countingStore", "objects", "Lease", "Doc", "Objects",
      "FencepostError", "LeaseLost", "ConflictError", "StorageError", "InvalidArgument"]) {
      assert(typeof lib[name] === "function", `${name} is exported`);
    }
    // Names survive bundling (esbuild renames colliding classes; inspection and err.name read them).
    for (const name of ["Fencepost", "Lease", "Doc", "Objects", "Store", "FencepostError", "LeaseLost", "StorageError",
      "AmbiguousWriteError", "InvalidArgument", "TimeoutError", "NotFoundError", "CorruptObjectError", "ConflictError"]) {
      eq(lib[name].name, name, `${name}.name`);
    }
    eq(new lib.LeaseLost("x").name, "LeaseLost", "err.name");
    for (const C of [lib.LeaseLost, lib.ConflictError, lib.StorageError, lib.InvalidArgument]) {
      assert(new C("x") instanceof lib.FencepostError, `${C.name} extends FencepostError`);
      assert(new C("x") instanceof Error, `${C.name} extends Error`);
    }
    eq([new lib.LeaseLost("x").code, new lib.ConflictError("x").code, new lib.InvalidArgument("x").code],
      ["LEASE_LOST", "CONFLICT", "INVALID_ARGUMENT"], "stable codes");
    const e = await rejects(new lib.Fencepost(lib.memoryStore()).claim("log/x", 1), lib.InvalidArgument, "reserved");
    eq(JSON.parse(JSON.stringify(e)).code, "INVALID_ARGUMENT", "code survives JSON.stringify (an own property)");
    eq(e.name, "InvalidArgument", "name");
  });

  // ------------------------------------------------------------------ claim
  test("claim: first caller wins in 1 request; losers converge in 2", async () => {
    const w = world(env);
    const first = await w.db.claim("cron/0 * * * */2026-01-01T00:00", { by: "a", n: [1, "é"] });
    eq([first.won, first.key, first.value], [true, "cron/0 * * * */2026-01-01T00:00", { by: "a", n: [1, "é"] }], "winner");
    assert(typeof first.etag === "string" && first.etag.length > 0, "etag");
    eq(w.counts(), w.req(0, 1), "claim won = 1 request");
    const second = await w.db.claim("cron/0 * * * */2026-01-01T00:00", { by: "b" });
    eq([second.won, second.value, second.etag], [false, { by: "a", n: [1, "é"] }, first.etag], "loser converges");
    eq(w.counts(), w.req(1, 1), "claim lost = 2 requests");
    eq(await w.text("cron/0 * * * */2026-01-01T00:00"), '{"by":"a","n":[1,"\\u00e9"]}', "canonical JSON on the wire");
  });

  test("claim: many racing callers, exactly one winner", async () => {
    const w = world(env);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => w.peer().claim("race", i)));
    const winners = results.filter((r) => r.won);
    eq(winners.length, 1, "one winner");
    assert(results.every((r) => r.value === winners[0].value), "all converge on the winner's value");
  });

  test("bad values and keys reject with InvalidArgument and write nothing", async () => {
    const w = world(env);
    const cyclic = { a: 1 };
    cyclic.self = cyclic;
    for (const [what, value] of [["BigInt", 10n], ["cycle", cyclic], ["function", () => 1], ["NaN", NaN],
      ["Infinity", { x: Infinity }], ["nested BigInt", { a: [1, 2n] }], ["undefined", undefined], ["Map", new Map()],
      ["symbol", Symbol("s")], ["lone surrogate", "a\ud800b"], ["lone surrogate key", { "\udc00": 1 }],
      ["sparse array of length 2^32-1", Object.assign([], { length: 2 ** 32 - 1 })],
      ["undefined in an array", [1, undefined]], ["a hole", [1, , 3]], ["an invalid Date", { at: new Date(NaN) }]]) {
      await rejects(w.db.claim("k", value), lib.InvalidArgument, `claim(${what})`);
      await rejects(w.db.doc("d").update(() => value, { create: 1 }), lib.InvalidArgument, `doc.update → ${what}`);
    }
    for (const key of ["", "log/x", "snapshots/1", "logs/a", "txapplied/t", "a/../b", "./a", "/a", "a/", "a//b", "a\\b", "a\nb", "x".repeat(1025), 42, null, "x\ud800"]) {
      await rejects(w.db.claim(key, 1), lib.InvalidArgument, `key ${JSON.stringify(key)}`);
    }
    // Under a microsecond (deadlines are kept to the microsecond) the lease would be expired at once.
    for (const ttl of [0, -1, NaN, Infinity, "10", undefined, 1e-9, 5e-324]) {
      await rejects(w.db.lease("job", { ttl }), lib.InvalidArgument, `ttl ${String(ttl)}`);
    }
    await rejects(w.db.lease("job", { ttl: 10, holder: "" }), lib.InvalidArgument, "empty holder");
    eq((await rejects(w.db.claim("log/x", 1), lib.InvalidArgument, "a reserved key")).key, "log/x", "the refusal carries its key");
    eq((await rejects(w.db.lease("job", { ttl: 0 }), lib.InvalidArgument, "ttl 0")).key, "job", "so does a refused option's");
    await rejects(w.db.objects.put("k", "x", { ifAbsent: true, ifMatch: "abc" }), lib.InvalidArgument, "ifAbsent + ifMatch");
    await rejects(w.db.doc("d").update(() => 1, { maxAttempts: 0 }), lib.InvalidArgument, "maxAttempts 0");
    eq(w.counts().put, 0, "nothing written (doc.update reads before it calls fn)");
    eq(await w.raw.list(), [], "nothing written");
    assert((() => { try { new lib.Fencepost({}); } catch (e) { return e instanceof lib.InvalidArgument; } })(), "a non-store is an InvalidArgument");
  });

  test("Date values encode through toJSON; integral numbers are written as integers", async () => {
    const w = world(env);
    const c = await w.db.claim("when", { at: new Date(Date.UTC(2026, 0, 2)) });
    eq(c.value, { at: "2026-01-02T00:00:00.000Z" }, "ISO string");
    await w.db.claim("big", [2 ** 53, -(2 ** 60), 1.5, 1e21, -(2 ** 63), 2 ** 64 - 2048]);
    eq(await w.text("big"), "[9007199254740992,-1152921504606846976,1.5,1e+21,-9223372036854775808,18446744073709549568]",
      "as JSON.stringify and Python write them (-2^63 too, which JSON.stringify spells beyond it)");
    const floats = [0.1, 0.00001, 0.0001, 1.5e300, 123.456, 5e-324, 2.5e-7, -0.5, 1234567.125, 1.7976931348623157e308, 1e22];
    const c2 = await w.db.claim("floats", floats);
    eq(await w.text("floats"), "[0.1,1e-05,0.0001,1.5e+300,123.456,5e-324,2.5e-07,-0.5,1234567.125,1.7976931348623157e+308,1e+22]",
      "shortest round-trip digits, as Python's repr writes them");
    eq(c2.value, floats, "and read back exactly");
  });

  test("a key within the key rules (≤ 1024 bytes) but over the store's budget (prefix included) is an InvalidArgument", async () => {
    const w = world(env);
    try {
      const c = await w.db.claim("k".repeat(1024), 1); // fits with no store prefix
      eq(c.won, true, "claimed");
    } catch (e) {
      assert(e instanceof lib.InvalidArgument, `not a StorageError: ${e?.name} ${e?.message}`);
    }
  });

  test("a failing or nonsensical options.now is an error, not a silent fallback", async () => {
    const store = env.makeStore();
    const boom = new Error("clock broke");
    let caught;
    try { await new lib.Fencepost(store, { now: () => { throw boom; } }).lease("job", { ttl: 10 }); } catch (e) { caught = e; }
    assert(caught === boom, "the clock's own error");
    await rejects(new lib.Fencepost(store, { now: () => NaN }).lease("job", { ttl: 10 }), lib.InvalidArgument, "NaN");
    await rejects(new lib.Fencepost(store, { now: () => 1e300 }).lease("job", { ttl: 10 }), lib.InvalidArgument, "year > 9999");
    eq(await new lib.Fencepost(store).objects.list(), [], "nothing written");
  });

  // ------------------------------------------------------------------ lease
  test("lease: fresh acquisition is epoch 1 with a random URL-safe holder (2 requests)", async () => {
    const w = world(env);
    const l = await w.db.lease("job", { ttl: 30 });
    eq(w.counts(), w.req(1, 1), "fresh lease = 2 requests");
    eq([l.key, l.epoch, l.ttl, l.state], ["job", 1, 30, null], "handle");
    assert(/^[A-Za-z0-9_-]{22}$/.test(l.holder), `holder ${l.holder}`);
    assert(l.deadlineAt instanceof Date && l.deadlineAt.getTime() === w.clock.t + 30000, "deadlineAt is a Date");
    const doc = JSON.parse(await w.text("job"));
    eq(Object.keys(doc), ["deadline_at", "epoch", "holder", "state"], "lease document, keys sorted");
    assert(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(doc.deadline_at), doc.deadline_at);
    const other = await w.db.lease("job2", { ttl: 30 });
    assert(other.holder !== l.holder, "holders differ");
  });

  test("lease: held → null in 1 request, stateFn not called", async () => {
    const w = world(env);
    await w.peer().lease("job", { ttl: 30, holder: "a" });
    let called = false;
    const got = await w.db.lease("job", { ttl: 30, holder: "b", stateFn: (s) => { called = true; return s; } });
    eq([got, called], [null, false], "held");
    eq(w.counts(), w.req(1, 0), "held = 1 request");
  });

  test("lease: renew extends the deadline; release then re-acquire bumps the epoch and keeps the state", async () => {
    const w = world(env);
    const l = await w.db.lease("job", { ttl: 10, holder: "a" });
    w.advance(7);
    w.counts();
    await l.renew();
    eq(w.counts(), w.req(0, 1), "renew = 1 request");
    eq(l.deadlineAt.getTime(), w.clock.t + 10000, "deadline moved");
    await l.write({ step: 3 });
    await l.release();
    eq(l.released, true, "released");
    const doc = JSON.parse(await w.text("job"));
    eq([doc.holder, doc.epoch], [null, 1], "released document stays");
    w.counts();
    const again = await w.db.lease("job", { ttl: 10, holder: "b" });
    eq(w.counts(), w.req(1, 1), "re-acquire = 2 requests");
    eq([again.epoch, again.state], [2, { step: 3 }], "epoch bumped, state kept");
    await rejects(l.renew(), lib.LeaseLost, "released handle");
    await rejects(l.write(1), lib.LeaseLost, "released handle write");
  });

  test("lease: an expired lease is stolen; the old handle is fenced", async () => {
    const w = world(env);
    const old = await w.peer().lease("job", { ttl: 10, holder: "a" });
    w.advance(10); // the boundary is inclusive
    const stolen = await w.db.lease("job", { ttl: 10, holder: "b" });
    eq([stolen.epoch, stolen.holder], [2, "b"], "stolen");
    const e = await rejects(old.renew(), lib.LeaseLost, "old renew");
    eq(e.code, "LEASE_LOST", "code");
    await rejects(old.release(), lib.LeaseLost, "old release");
    await rejects(old.updateState((s) => s), lib.LeaseLost, "old updateState");
  });

  test("lease: stealIfExpired false refuses; the same holder may re-acquire (fencing its old handle)", async () => {
    const w = world(env);
    const first = await w.db.lease("job", { ttl: 10, holder: "a" });
    w.advance(60);
    eq(await w.peer().lease("job", { ttl: 10, holder: "b", stealIfExpired: false }), null, "no steal");
    const mine = await w.db.lease("job", { ttl: 10, holder: "a" });
    eq(mine.epoch, 2, "same holder re-acquires");
    await rejects(first.renew(), lib.LeaseLost, "old handle fenced");
  });

  test("lease: stateFn seeds, transitions, and its error aborts with nothing written", async () => {
    const w = world(env);
    const seen = [];
    const l = await w.db.lease("job", { ttl: 10, stateFn: (s) => { seen.push(s); return { runs: 1 }; } });
    eq([seen, l.state], [[null], { runs: 1 }], "seeded from null");
    await l.release();
    const l2 = await w.db.lease("job", { ttl: 10, stateFn: async (s) => ({ runs: s.runs + 1 }) });
    eq(l2.state, { runs: 2 }, "async transition");
    await l2.release({ state: { runs: 2, done: true } });
    const before = await w.text("job");
    class Refused extends Error {}
    const boom = new Refused("already done");
    let caught;
    try {
      await w.db.lease("job", { ttl: 10, stateFn: (s) => { if (s.done) throw boom; return s; } });
    } catch (e) {
      caught = e;
    }
    assert(caught === boom, "the callback's own error reaches the caller unchanged");
    eq(await w.text("job"), before, "nothing written");
  });

  test("lease: a deleted document fences; corrupt documents are typed errors and stay untouched", async () => {
    const w = world(env);
    const l = await w.db.lease("job", { ttl: 10, holder: "a" });
    await w.raw.delete("job");
    await rejects(l.renew(), lib.LeaseLost, "deleted");
    for (const body of ["not json", "[]", '{"epoch":"1","holder":"a","deadline_at":"2026-01-01T00:00:00Z","state":null}',
      '{"epoch":1,"holder":7,"deadline_at":"2026-01-01T00:00:00Z"}', '{"epoch":1,"holder":"a","deadline_at":"soon"}']) {
      await w.raw.put("bad", body);
      const e = await rejects(w.db.lease("bad", { ttl: 10 }), lib.FencepostError, body);
      assert(!(e instanceof lib.LeaseLost), "not a LeaseLost");
      await rejects(w.db.cooperativeWrite("bad", (s) => s), lib.FencepostError, body);
      eq(await w.text("bad"), body, "untouched");
    }
  });

  test("lease: of many racing acquirers exactly one wins", async () => {
    const w = world(env);
    const got = await Promise.all(Array.from({ length: 8 }, () => w.peer().lease("job", { ttl: 30 })));
    eq(got.filter(Boolean).length, 1, "one holder");
  });

  // ------------------------------------------------------------------ cooperative writes and attach
  test("cooperativeWrite: 2 requests; seen by renew (3 requests) without fencing; kept by release", async () => {
    const w = world(env);
    const l = await w.db.lease("job", { ttl: 10, holder: "a" });
    await l.write({ count: 0 });
    w.counts();
    eq(await w.db.cooperativeWrite("job", (s) => ({ ...s, cancel: true })), { count: 0, cancel: true }, "new state");
    eq(w.counts(), w.req(1, 1), "cooperativeWrite = 2 requests");
    await l.renew();
    eq(w.counts(), w.req(1, 2), "renew after a cooperative write = 3 requests");
    eq([l.epoch, l.state], [1, { count: 0, cancel: true }], "absorbed, not fenced");
    await w.db.cooperativeWrite("job", (s) => ({ ...s, count: s.count + 10 }));
    eq(await l.updateState((s) => ({ ...s, count: s.count + 1 })), { count: 11, cancel: true }, "merged by updateState");
    await w.db.cooperativeWrite("job", (s) => ({ ...s, note: "x" }));
    await l.release();
    eq(JSON.parse(await w.text("job")).state, { cancel: true, count: 11, note: "x" }, "kept by release");
    eq(await w.db.cooperativeWrite("nothing-here", (s) => s), null, "no lease → null");
  });

  test("cooperativeWrite is discarded by write", async () => {
    const w = world(env);
    const l = await w.db.lease("job", { ttl: 10 });
    await w.db.cooperativeWrite("job", () => "theirs");
    eq(await l.write("mine"), "mine", "write resolves to the state");
    eq(JSON.parse(await w.text("job")).state, "mine", "discarded");
  });

  test("attachLease: one read, no write; handles converge; refused when not ours; fenced by a steal", async () => {
    const w = world(env);
    eq(await w.db.attachLease("job", { holder: "a", ttl: 10 }), null, "absent");
    const l = await w.peer().lease("job", { ttl: 10, holder: "a" });
    w.counts();
    const a = await w.db.attachLease("job", { holder: "a", ttl: 10 });
    eq(w.counts(), w.req(1, 0), "attach = 1 request");
    eq([a.epoch, a.holder, a.deadlineAt.getTime()], [1, "a", l.deadlineAt.getTime()], "same period, same deadline");
    await a.updateState((s) => (s ?? 0) + 1);
    await l.updateState((s) => s + 1);
    await a.renew();
    eq(a.state, 2, "two handles converge");
    eq(await w.db.attachLease("job", { holder: "b", ttl: 10 }), null, "other holder");
    w.advance(10);
    eq(await w.db.attachLease("job", { holder: "a", ttl: 10 }), null, "expired");
    await w.peer().lease("job", { ttl: 10, holder: "c" });
    await rejects(a.renew(), lib.LeaseLost, "attached handle fenced by the steal");
  });

  test("lease handle: calls go on from its snapshot when the core no longer keeps its period", async () => {
    const w = world(env);
    const first = await w.db.lease("first", { ttl: 30 });
    await first.write({ n: 1 });
    // More handles than the core keeps periods built for (64): the first one's entry is pushed out.
    const others = await Promise.all(Array.from({ length: 70 }, (_, i) => w.db.lease(`other/${i}`, { ttl: 30 })));
    w.counts();
    await first.updateState((s) => ({ n: s.n + 1 }));
    eq(w.counts(), w.req(0, 1), "a guarded write from the snapshot: 1 request, as always");
    eq(first.state, { n: 2 }, "state carried on");
    // A call refused at once (a bad interval) takes nothing away: the next call still works.
    let bad;
    try {
      first.keepAlive({ every: 60 });
    } catch (e) {
      bad = e;
    }
    assert(bad instanceof lib.InvalidArgument, `every >= ttl is refused at once: ${bad}`);
    await first.renew();
    // Two calls at once on one handle: both land, the later reply is what the handle keeps.
    await Promise.all([first.renew(), first.write({ n: 3 })]);
    eq((await w.db.inspect("first")).lease.epoch, first.epoch, "same period");
    await first.release();
    assert(first.released, "released");
    await Promise.all(others.map((l) => l.release()));
    eq(await w.db.inspect("other/69").then((s) => s.lease.released), true, "every other handle released");
  });

  // ------------------------------------------------------------------ doc
  test("doc: create, CAS update (2 requests), absent without create, idempotent delete", async () => {
    const w = world(env);
    const d = w.db.doc("cfg");
    eq(await d.get(), null, "absent");
    await rejects(d.update((v) => v), lib.FencepostError, "absent without create");
    w.counts();
    eq(await d.update((v) => ({ n: v.n + 1 }), { create: { n: 41 } }), { n: 42 }, "created");
    eq(w.counts(), w.req(1, 1), "doc.update = 2 requests");
    const got = await d.get();
    eq(got.value, { n: 42 }, "get");
    await d.delete();
    await d.delete();
    eq(await d.get(), null, "deleted");
  });

  test("doc: concurrent increments all land; maxAttempts is honoured", async () => {
    const w = world(env);
    await Promise.all(Array.from({ length: 6 }, () => w.peer().doc("counter").update((n) => n + 1, { create: 0, maxAttempts: 50 })));
    eq((await w.db.doc("counter").get()).value, 6, "all increments");
    let calls = 0;
    const e = await rejects(w.db.doc("counter").update(async (n) => {
      calls++;
      await w.raw.put("counter", String(1000 + calls)); // someone always gets there first
      return n + 1;
    }, { maxAttempts: 3 }), lib.ConflictError, "constant conflict");
    eq([calls, e.code], [3, "CONFLICT"], "fn runs exactly maxAttempts times");
  });

  if (env.schemas?.zod) {
    test("doc: zod schema validates on read and before write", async () => {
      const { z } = env.schemas.zod;
      const w = world(env);
      const d = w.db.doc("typed", { schema: z.object({ n: z.number().int() }) });
      eq(await d.update((v) => ({ n: v.n + 1 }), { create: { n: 0 } }), { n: 1 }, "valid");
      const e = await rejects(d.update(() => ({ n: "one" })), lib.InvalidArgument, "invalid write");
      assert(Array.isArray(e.issues) && e.issues.length > 0, "issues attached");
      eq((await d.get()).value, { n: 1 }, "nothing written");
      await w.raw.put("typed", '{"n":1.5}');
      await rejects(d.get(), lib.InvalidArgument, "invalid stored value");
      await rejects(d.update((v) => v), lib.InvalidArgument, "update validates what it read");
      await w.raw.put("coerced", '{"n":"5"}');
      const seen = [];
      await w.db.doc("coerced", { schema: z.object({ n: z.coerce.number() }) }).update((v) => { seen.push(v); return v; });
      eq(seen, [{ n: 5 }], "fn sees the schema's output");
    });
  }
  if (env.schemas?.valibot) {
    test("doc: valibot schema validates before write", async () => {
      const v = env.schemas.valibot;
      const w = world(env);
      const d = w.db.doc("typed", { schema: v.object({ tags: v.array(v.string()) }) });
      eq(await d.update((x) => ({ tags: [...x.tags, "a"] }), { create: { tags: [] } }), { tags: ["a"] }, "valid");
      await rejects(d.update(() => ({ tags: [1] })), lib.InvalidArgument, "invalid");
    });
  }

  test("doc: a Standard Schema may be a function (arktype's types are); a malformed answer from validate is an InvalidArgument", async () => {
    const w = world(env);
    const type = (v) => v;
    type["~standard"] = { version: 1, vendor: "fn", validate: (v) => (typeof v === "number" ? { value: v } : { issues: [{ message: "not a number" }] }) };
    const d = w.db.doc("fn", { schema: type });
    eq(await d.update((n) => n + 1, { create: 1 }), 2, "a callable schema validates");
    await rejects(d.update(() => "two"), lib.InvalidArgument, "and refuses");
    for (const answer of [5, null, { issues: "bad" }, {}]) {
      const broken = { "~standard": { version: 1, vendor: "broken", validate: () => answer } };
      const e = await rejects(w.db.doc("fn", { schema: broken }).get(), lib.InvalidArgument, `validate answering ${JSON.stringify(answer)}`);
      assert(/Standard Schema result/.test(e.message), `says the schema's answer is malformed: ${e.message}`);
    }
  });

  test("handles: key, epoch, ttl and limit are read-only; stores without options refuse option names", async () => {
    const w = world(env);
    const lease = await w.db.lease("ro", { ttl: 30 });
    const doc = w.db.doc("ro-doc"), counter = w.db.counter("ro-counter"), sem = w.db.semaphore("ro-sem", { limit: 2, ttl: 30 });
    for (const [handle, name] of [[lease, "key"], [lease, "epoch"], [lease, "ttl"], [doc, "key"], [counter, "key"], [sem, "limit"], [w.store, "kind"]]) {
      const before = handle[name];
      try { handle[name] = "changed"; } catch { /* strict mode: a TypeError */ }
      eq(handle[name], before, `${handle.constructor.name}.${name} unchanged`);
    }
    eq(Object.keys(lease).includes("epoch"), true, "still an own enumerable field");
    await lease.release();
    await rejects(Promise.resolve().then(() => lib.memoryStore({ prefx: "a/" })), lib.InvalidArgument, "memoryStore({prefx})");
    await rejects(Promise.resolve().then(() => lib.countingStore(lib.memoryStore(), { verbose: true })), lib.InvalidArgument, "countingStore(store, {verbose})");
    if (env.testing?.storeConformance) {
      const p = env.testing.storeConformance(lib.memoryStore(), { tset: () => {} });
      assert(p instanceof Promise, "a bad option to the report's form is a rejection, not a throw");
      await rejects(p, lib.InvalidArgument, "storeConformance(store, {tset})");
    }
  });

  // ------------------------------------------------------------------ objects
  test("objects: conditional puts, If-Match on a missing key fails, delete is a no-op, list", async () => {
    const w = world(env);
    const o = w.db.objects;
    const a = await o.put("k", "one", { ifAbsent: true });
    assert(a && typeof a.etag === "string", "created");
    eq(await o.put("k", "two", { ifAbsent: true }), null, "ifAbsent lost");
    eq(await o.put("k", "two", { ifMatch: "00000000000000000000000000000000" }), null, "ifMatch lost");
    eq(await o.put("missing", "x", { ifMatch: a.etag }), null, "ifMatch on a missing key");
    const got = await o.get("k");
    assert(got.data instanceof Uint8Array, "data is bytes");
    eq([new TextDecoder().decode(got.data), got.etag], ["one", a.etag], "get");
    const b = await o.put("k", new Uint8Array([1, 2, 3]), { ifMatch: a.etag });
    assert(b.etag !== a.etag, "new etag");
    if (w.opaqueEtags) {
      // A custom store's etags are compared as it handed them out (here quoted, as HTTP's are).
      eq(await o.put("k", "quoted", { ifMatch: `"${b.etag}"` }), null, "a custom store's etag is not unquoted or requoted");
      eq((await o.get("k", { ifNoneMatch: b.etag })).notModified, true, "a conditional read on its etag as given");
    }
    const c = await o.put("k", "quoted", { ifMatch: w.opaqueEtags ? b.etag : `"${b.etag}"` });
    assert(c !== null, "an HTTP-style quoted etag names the same version (a custom store's: as it gave it)");
    for (const bad of ["*", ""]) await rejects(o.put("k", "x", { ifMatch: bad }), lib.InvalidArgument, `ifMatch ${JSON.stringify(bad)}`);
    // A buffer transferred elsewhere is refused, not written as nothing.
    const moved = new ArrayBuffer(4);
    const view = new DataView(moved);
    const bytes = new Uint8Array(moved);
    let detached = false;
    try {
      structuredClone(moved, { transfer: [moved] });
      detached = moved.byteLength === 0;
    } catch {
      // a runtime that cannot transfer: nothing to check
    }
    if (detached) {
      await rejects(o.put("k", moved), lib.InvalidArgument, "a detached ArrayBuffer");
      await rejects(o.put("k", view), lib.InvalidArgument, "a view of one");
      await rejects(o.put("k", bytes), lib.InvalidArgument, "a Uint8Array of one");
    }
    await o.delete("k");
    await o.delete("k");
    eq(await o.get("k"), null, "gone");
    for (const k of ["b/2", "a", "b/1", "c"]) await o.put(k, "x");
    eq(await o.list(), ["a", "b/1", "b/2", "c"], "ascending");
    eq(await o.list("b/"), ["b/1", "b/2"], "by prefix");
  });

  test("objects: keys with special characters round-trip", async () => {
    const w = world(env);
    const keys = ["sp ace", "plus+sign", "per%cent", "eq=&?#~", "ünï/ключ", "astral/😀𝄞"];
    for (const k of keys) await w.db.objects.put(k, k);
    for (const k of keys) eq(new TextDecoder().decode((await w.db.objects.get(k)).data), k, k);
    eq(await w.db.objects.list(), [...keys].sort((x, y) => (Buffer_compare(x, y))), "listed");
  });

  test("objects: waitFor polls once per interval and times out with a typed error", async () => {
    // Real time here: waitFor's timeout is measured by the Fencepost's clock.
    const store = lib.countingStore(env.makeStore());
    const o = new lib.Fencepost(store).objects;
    const e = await rejects(o.waitFor("later", { timeout: 0.2, pollInterval: 0.05 }), lib.FencepostError, "timeout");
    eq(e.code, "TIMEOUT", "code");
    const polls = store.requestCounts().get;
    assert(polls >= 3 && polls <= 6, `one GET per poll (${polls})`);
    setTimeout(() => o.put("later", "here"), 50);
    const got = await o.waitFor("later", { timeout: 5, pollInterval: 0.02 });
    eq(new TextDecoder().decode(got.data), "here", "appeared");
    const changed = o.waitFor("later", { timeout: 5, pollInterval: 0.02, changedFrom: got.etag });
    setTimeout(() => o.put("later", "changed"), 50);
    eq(new TextDecoder().decode((await changed).data), "changed", "changedFrom");
  });

  return list;
}

// Code-point order (what the store lists), not JS's UTF-16 order.
function Buffer_compare(a, b) {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(ea.length, eb.length); i++) if (ea[i] !== eb[i]) return ea[i] - eb[i];
  return ea.length - eb.length;
}
