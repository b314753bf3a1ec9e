// checkStore against real servers, and against a store that ignores conditional writes: moto
// behind the fault proxy with every If-Match / If-None-Match header dropped (moto does not check
// signatures, so the altered requests still reach it). Node only (the proxy is a Node server); the
// conformance suite checks that checkStore passes on every store in every runtime.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as lib from "fencepost";
import { cloudOptions, cloudStore, s3Options, serverSettings } from "../../js/support/servers.js";
import { startFaultProxy } from "../../js/support/fault-proxy.js";

const env = serverSettings();
let proxy;
after(async () => {
  await proxy?.close();
});

for (const server of ["seaweed", "moto"]) {
  const endpoint = env[`FENCEPOST_${server.toUpperCase()}_ENDPOINT`];
  test(`checkStore passes on ${server}`, { skip: !endpoint && "needs the test servers (scripts/test.sh)" }, async () => {
    const report = await lib.checkStore(lib.s3Store(s3Options(env, server)));
    assert.ok(report.ok, JSON.stringify(report.checks));
    console.log(`# ${server}: ${report.checks.map((c) => `${c.name}: ${c.ok ? "ok" : "no"} (${c.detail})`).join("; ")}`);
  });
}

// The Azure and GCS emulators: required checks pass; fake-gcs-server ignores conditions on DELETE,
// which the store does not use there (`conditionalDelete` is off for endpoints not Google's).
for (const server of ["azurite", "fakegcs"]) {
  const options = cloudOptions(env, server);
  test(`checkStore passes on ${server}`, { skip: !options && "needs the test servers (scripts/test.sh)" }, async () => {
    const report = await lib.checkStore(cloudStore(lib, server, options));
    assert.ok(report.ok, JSON.stringify(report.checks));
    console.log(`# ${server}: ${report.checks.map((c) => `${c.name}: ${c.ok ? "ok" : "no"} (${c.detail})`).join("; ")}`);
    if (server === "fakegcs") {
      // Told to use conditional deletes anyway, the check sees the emulator ignore them.
      const forced = await lib.checkStore(lib.gcsStore({ ...options, conditionalDelete: true }));
      const check = forced.checks.find((c) => c.name === "conditional DELETE (If-Match)");
      assert.equal(check.ok, false);
      assert.match(check.detail, /ignored/);
    }
  });
}

const moto = env.FENCEPOST_MOTO_ENDPOINT;
test("checkStore fails on a store that ignores conditional writes, naming the checks", { skip: !moto && "needs moto" }, async () => {
  proxy = await startFaultProxy({ upstream: moto, rules: [{ fault: "dropConditions" }] });
  const report = await lib.checkStore(lib.s3Store({ ...s3Options(env, "moto"), endpoint: proxy.url }));
  assert.equal(report.ok, false);
  const failed = report.checks.filter((c) => c.required && !c.ok).map((c) => c.name);
  for (const name of ["create-only refused on an existing key", "If-Match refused with a stale etag",
    "If-Match refused on a missing key", "a 16-way create race has exactly one winner"]) {
    assert.ok(failed.includes(name), `${name} fails: ${JSON.stringify(report.checks)}`);
  }
  const wrote = report.checks.find((c) => c.name === "create-only refused on an existing key");
  assert.match(wrote.detail, /wrote it anyway/);
});
