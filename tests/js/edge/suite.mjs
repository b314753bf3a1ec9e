// What runs inside Vercel's Edge Runtime: the JS conformance suite on the package as the
// "edge-light" condition resolves it, bundled by run.mjs into one script.
import * as lib from "fencepost";
import * as testing from "fencepost/testing";
import * as zod from "zod";
import * as valibot from "valibot";
import { cases } from "../suite.js";
import { s3Factories } from "../../../js/support/servers.js";

/** Run every case on every store `settings` configure (and memory); one result per case. */
globalThis.runSuite = async (settings, caseTimeoutMs) => {
  const stores = { memory: () => lib.memoryStore(), ...s3Factories(lib, settings, "edge") };
  const results = [];
  for (const [store, makeStore] of Object.entries(stores)) {
    for (const c of cases({ lib, makeStore, schemas: { zod, valibot }, testing, inspect: globalThis.__edgeFormat })) {
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${caseTimeoutMs} ms`)), caseTimeoutMs);
      });
      try {
        await Promise.race([c.fn(), timeout]);
        results.push({ name: `${store} / ${c.name}`, ok: true });
      } catch (e) {
        results.push({ name: `${store} / ${c.name}`, ok: false, error: String(e?.stack ?? e) });
      } finally {
        clearTimeout(timer);
      }
    }
  }
  return results;
};
