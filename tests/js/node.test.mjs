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
