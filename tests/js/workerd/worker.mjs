// Test worker: the JS conformance suite inside workerd, one case per request (Workers cap the
// subrequests of one invocation). Bundled by run.mjs with esbuild, conditions workerd/worker/browser,
// so `fencepost` resolves to the package's workerd.js entry (CompiledWasm import + initSync).
//
//   GET /cases?store=S          → {names: [...]}
//   GET /run?store=S&case=N     → runCases() result for case N on store S
//   GET /across?step=1, then 2  → a lease handle kept at module scope between two invocations
// Stores: r2 (the R2 binding env.BUCKET, a fresh prefix per case), every S3 server whose
// FENCEPOST_<NAME>_* settings arrive as text bindings (seaweed, moto, azurite, fakegcs), and
// do-kv / do-sqlite: durableObjectStore inside a Durable Object of each storage backend, where
// /cases and /run are forwarded to run (durable-object.mjs).
import * as lib from "fencepost";
import * as testing from "fencepost/testing";
import * as zod from "zod";
import * as valibot from "valibot";
import { cases } from "../suite.js";
import { runCases } from "../harness.js";
import { CLOUD_SERVERS, cloudFactories, freshPrefix, s3Factories } from "../../../js/support/servers.js";
import { DO_STORES } from "./durable-object.mjs";

export { FencepostKvObject, FencepostSqliteObject } from "./durable-object.mjs";

function storesFor(env) {
  const stores = { r2: () => lib.r2Store(env.BUCKET, { prefix: freshPrefix("workerd-r2") }) };
  const names = ["SEAWEED", "MOTO"].filter((n) => env[`FENCEPOST_${n}_ENDPOINT`]);
  const clouds = CLOUD_SERVERS.filter((n) => env[`FENCEPOST_${n}_ENDPOINT`]);
  return { ...stores, ...s3Factories(lib, env, "workerd", names), ...cloudFactories(lib, env, "workerd", clouds) };
}

function caseList(env, store) {
  const makeStore = storesFor(env)[store];
  if (!makeStore) return null;
  return cases({ lib, makeStore, schemas: { zod, valibot }, testing });
}

/** A lease whose `signal` one invocation asked for, released by the next (`/across`). */
let across;

/** `/across` step 1 takes a lease and reads its signal; step 2, another invocation, releases it:
 * Workers refuse to touch one invocation's AbortController from another, so the handle's signal
 * must be replaced there, not thrown at the caller as a plain Error. */
async function acrossInvocations(env, step) {
  const db = new lib.Fencepost(lib.r2Store(env.BUCKET, { prefix: "workerd-across" }));
  if (step === "1") {
    across = await db.lease(freshPrefix("job"), { ttl: 30 });
    return { epoch: across.epoch, aborted: across.signal.aborted };
  }
  // A keep-alive started in one invocation (it never wakes once that one ends), stopped and
  // disposed in the next: no plain Error, and the lease goes back.
  if (step === "ka1") {
    across = await db.lease(freshPrefix("job"), { ttl: 30 });
    across.keepAlive({ every: 10 });
    return { epoch: across.epoch };
  }
  if (step === "ka2") {
    const key = across.key;
    const disposed = await across[Symbol.asyncDispose]().then(() => "disposed", (e) => `${e.name}: ${e.message}`);
    const next = await db.lease(key, { ttl: 30 });
    return { disposed, released: across.released, nextEpoch: next?.epoch ?? null };
  }
  await across.release();
  const reason = across.signal.reason;
  const after = await across.renew().then(() => "renewed", (e) => `${e.name} ${e.reason}`);
  return { aborted: across.signal.aborted, reason: `${reason?.name} ${reason?.reason}`, after, lost: reason === across.signal.reason };
}

const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const store = url.searchParams.get("store") ?? "";
    const objects = Object.keys(DO_STORES).filter((name) => env[DO_STORES[name]]);
    if (url.pathname === "/stores") return json({ stores: [...Object.keys(storesFor(env)), ...objects] });
    if (url.pathname === "/across") {
      try {
        return json(await acrossInvocations(env, url.searchParams.get("step")));
      } catch (e) {
        return json({ error: `${e?.constructor?.name}: ${e?.message}` });
      }
    }
    if (objects.includes(store)) {
      const ns = env[DO_STORES[store]];
      return ns.get(ns.idFromName("suite")).fetch(request);
    }
    const list = caseList(env, store);
    if (!list) return json({ error: `unknown store ${JSON.stringify(store)}` }, 400);
    if (url.pathname === "/cases") return json({ names: list.map((c) => c.name) });
    if (url.pathname === "/run") {
      const n = Number(url.searchParams.get("case"));
      if (!Number.isInteger(n) || n < 0 || n >= list.length) return json({ error: `no case ${n}` }, 400);
      return json(await runCases([list[n]], { prefix: `workerd / ${store} / ` }));
    }
    return json({ error: "not found" }, 404);
  },
};
