// The JS conformance suite under `bun test`, on the INSTALLED package (node_modules/fencepost,
// resolved through its "bun" export condition): memory, SeaweedFS, moto. One test per case.
import { test } from "bun:test";
import * as lib from "fencepost";
import * as testing from "fencepost/testing";
import * as zod from "zod";
import * as valibot from "valibot";
import { cases } from "./suite.js";
import { s3Factories, serverSettings } from "../../js/support/servers.js";

// SeaweedFS and moto when running (scripts/test.sh starts them); memory alone otherwise.
const stores = { memory: () => lib.memoryStore(), ...s3Factories(lib, serverSettings(), "bun") };

for (const [name, makeStore] of Object.entries(stores)) {
  for (const c of cases({ lib, makeStore, schemas: { zod, valibot }, inspect: Bun.inspect, testing })) {
    test(`bun / ${name} / ${c.name}`, c.fn, 60_000);
  }
}

// storeConformance as bun:test users call it: each case a test of theirs.
testing.storeConformance(lib.memoryStore(), { test: (name, fn) => test(`bun / storeConformance({test}) / ${name}`, fn, 60_000) });
