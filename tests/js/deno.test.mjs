// The JS conformance suite under `deno test`, on the INSTALLED package (node_modules/fencepost,
// resolved through its "deno" export condition): memory, SeaweedFS, moto, Azurite, fake-gcs-server. One Deno.test per case,
// so Deno's summary line counts cases.
import * as lib from "fencepost";
import * as testing from "fencepost/testing";
import * as zod from "zod";
import * as valibot from "valibot";
import { cases } from "./suite.js";
import { cloudFactories, s3Factories, serverSettings } from "../../js/support/servers.js";

// SeaweedFS, moto, Azurite and fake-gcs-server when running (scripts/test.sh starts them); memory
// alone otherwise.
const settings = serverSettings();
const stores = {
  memory: () => lib.memoryStore(),
  ...s3Factories(lib, settings, "deno"),
  ...cloudFactories(lib, settings, "deno"),
};

for (const [name, makeStore] of Object.entries(stores)) {
  for (const c of cases({ lib, makeStore, schemas: { zod, valibot }, inspect: Deno.inspect, testing })) {
    Deno.test(`deno / ${name} / ${c.name}`, c.fn);
  }
}

// `await using`, natively.
Deno.test("deno / await using releases the lease", async () => {
  const { awaitUsingReleases } = await import("./await-using.ts");
  await awaitUsingReleases(lib);
});
