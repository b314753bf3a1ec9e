// The JS conformance suite under Node's test runner, on the installed package: memory, a custom store
// (a JS Map through customStore), SeaweedFS, moto, Azurite, fake-gcs-server.
import { describe, test } from "node:test";
import { inspect } from "node:util";
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

// storeConformance as node:test users call it: each case a test of theirs.
describe("node / storeConformance({test})", () => {
  testing.storeConformance(lib.memoryStore(), { test });
});

// Store conformance must fail, naming the case, on a store that breaks what fencepost relies on.
describe("node / store conformance catches a broken custom store", () => {
  const broken = {
    "ignores ifMatch": [{ ignoreIfMatch: true }, "a compare-and-swap lands on the current etag only (If-Match)"],
    "ignores ifNoneMatch": [{ ignoreIfNoneMatch: true }, "a create-only write of an existing key is refused (If-None-Match: *)"],
    "loses meta": [{ loseMeta: true }, "write tokens (meta) round-trip: a claim whose response was lost is still won"],
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
    if (!report.ok || report.cases.length < 12) throw new Error(JSON.stringify(report.cases.filter((c) => !c.ok)));
  });
});
