// Ambiguous writes, exercised through the real S3 store: the global fetch is wrapped so that one
// chosen conditional PUT reaches the server (and lands) but its response is thrown away, as a lost
// response would be. fencepost's contract: the caller then still learns the truth (a claim's winner
// reports won: true, an update is applied once) or gets a distinct AmbiguousWriteError —
// never a guess.
//
// Runs in any runtime with a global fetch (Node as the control, Chromium through CORS).
// scenarios(lib, makeStore) → [{name, ok, detail}]

function injectLostResponse(match) {
  const original = globalThis.fetch;
  const state = { fired: false };
  globalThis.fetch = async function fetch(input, init) {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const res = await original(input, init);
    if (!state.fired && match(method, headers)) {
      state.fired = true;
      state.status = res.status;
      await res.arrayBuffer().catch(() => {});
      throw new TypeError("simulated lost response (the request reached the server)");
    }
    return res;
  };
  return { state, restore: () => { globalThis.fetch = original; } };
}

const createOnly = (m, h) => m === "PUT" && h.get("if-none-match") === "*";
const compareAndSwap = (m, h) => m === "PUT" && h.has("if-match");

async function outcome(lib, fn) {
  try {
    return { value: await fn() };
  } catch (e) {
    return { error: e, ambiguous: e instanceof lib.AmbiguousWriteError || e?.code === "AMBIGUOUS_WRITE" };
  }
}

export async function scenarios(lib, makeStore) {
  const out = [];
  const run = async (name, match, fn) => {
    const store = makeStore();
    const db = new lib.Fencepost(store, { retry: { maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05 } });
    const peer = new lib.Fencepost(store);
    let injected;
    try {
      const r = await fn(db, peer, () => (injected = injectLostResponse(match)), () => injected?.restore());
      out.push({ name, ...r, fired: injected?.state.fired ?? false, status: injected?.state.status });
    } catch (e) {
      out.push({ name, ok: false, detail: `harness error: ${e?.stack ?? e}` });
    } finally {
      injected?.restore();
    }
  };

  await run("claim whose winning PUT response is lost reports won: true (or AmbiguousWrite)", createOnly, async (db, peer, inject, restore) => {
    inject();
    const r = await outcome(lib, () => db.claim("job/run-1", { by: "me" }));
    restore();
    const stored = await peer.doc("job/run-1").get();
    if (r.ambiguous) return { ok: true, detail: `AmbiguousWriteError: ${r.error.message}` };
    if (r.error) return { ok: false, detail: `unexpected ${r.error.name}: ${r.error.message}` };
    return {
      ok: r.value.won === true,
      detail: `won=${r.value.won}, value=${JSON.stringify(r.value.value)}, stored=${JSON.stringify(stored?.value)}` +
        (r.value.won ? "" : " — the only writer of this key was told it lost: nobody runs the job"),
    };
  });

  await run("doc.update creating the doc, response lost: applied once (or AmbiguousWrite)", createOnly, async (db, peer, inject, restore) => {
    let calls = 0;
    inject();
    const r = await outcome(lib, () => db.doc("counter").update((n) => { calls++; return n + 1; }, { create: 0 }));
    restore();
    const stored = (await peer.doc("counter").get())?.value;
    if (r.ambiguous) return { ok: true, detail: `AmbiguousWriteError; stored=${stored}` };
    if (r.error) return { ok: false, detail: `unexpected ${r.error.name}: ${r.error.message}` };
    return {
      ok: r.value === 1 && stored === 1,
      detail: `returned ${r.value}, stored ${stored}, fn called ${calls}×` + (stored === 1 ? "" : " — one increment applied twice"),
    };
  });

  await run("fresh lease whose PUT response is lost is acquired (or AmbiguousWrite)", createOnly, async (db, peer, inject, restore) => {
    inject();
    const r = await outcome(lib, () => db.lease("lease/1", { ttl: 60 })); // the default: a fresh random holder
    restore();
    const stored = (await peer.objects.get("lease/1"));
    const doc = stored && JSON.parse(new TextDecoder().decode(stored.data));
    if (r.ambiguous) return { ok: true, detail: `AmbiguousWriteError; stored holder=${doc?.holder}` };
    if (r.error) return { ok: false, detail: `unexpected ${r.error.name}: ${r.error.message}` };
    return {
      ok: r.value !== null && r.value.holder === doc?.holder,
      detail: r.value ? `acquired epoch ${r.value.epoch}` :
        `null ("held by someone else") while the stored holder ${JSON.stringify(doc?.holder)} is the caller's own: locked out for the whole ttl`,
    };
  });

  await run("doc.update CAS, response lost: applied once (or AmbiguousWrite)", compareAndSwap, async (db, peer, inject, restore) => {
    await peer.doc("cas").update(() => 10, { create: 10 });
    inject();
    const r = await outcome(lib, () => db.doc("cas").update((n) => n + 1));
    restore();
    const stored = (await peer.doc("cas").get())?.value;
    if (r.ambiguous) return { ok: true, detail: `AmbiguousWriteError; stored=${stored}` };
    if (r.error) return { ok: false, detail: `unexpected ${r.error.name}: ${r.error.message}` };
    return { ok: r.value === 11 && stored === 11, detail: `returned ${r.value}, stored ${stored}` };
  });

  return out;
}
