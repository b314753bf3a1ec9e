// Vitest config of the example Worker's tests (tests/workers/*.test.mjs): they run inside workerd
// through @cloudflare/vitest-pool-workers' `cloudflareTest` plugin, with the Worker's own
// wrangler.toml (its R2 binding becomes a local, in-memory R2 bucket).
//
//   npx vitest run --config tests/workers/vitest.config.mjs      (the `workers` stage of scripts/test.sh)
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Offline: no metrics, no error reports, no request for Cloudflare's `cf` object.
process.env.WRANGLER_SEND_METRICS ??= "false";
process.env.WRANGLER_SEND_ERROR_REPORTS ??= "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

const root = fileURLToPath(new URL("../..", import.meta.url));

export default defineConfig({
  // The folder that holds node_modules/fencepost. With a root below it (this folder), the pool
  // looks for the package's .wasm under <root>/@fs/… and fails with "No such module".
  root,
  plugins: [
    cloudflareTest({
      wrangler: { configPath: fileURLToPath(new URL("../../wrangler.toml", import.meta.url)) },
      // Steps take no time here (the deployed Worker's are 150 ms); tests that need a slow step
      // pass their own doStep.
      miniflare: { bindings: { STEP_MS: "0" } },
    }),
  ],
  test: {
    include: ["tests/workers/**/*.test.mjs"],
    testTimeout: 30_000,
  },
});
