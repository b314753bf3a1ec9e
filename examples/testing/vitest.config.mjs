// The Workers flavour of the guide's tests (cron-job.worker.test.mjs): vitest inside workerd
// through @cloudflare/vitest-pool-workers, with a local R2 bucket bound as env.BUCKET.
//   npx vitest run --config examples/testing/vitest.config.mjs
// In your own Worker, point `wrangler.configPath` at your wrangler config instead of `miniflare`.
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Vitest's root must be the folder whose node_modules holds fencepost (your project's root);
  // from a folder below it the pool cannot find fencepost's .wasm ("No such module …/@fs/…").
  // This example lives two levels below this repository's root.
  root: fileURLToPath(new URL("../..", import.meta.url)),
  plugins: [
    cloudflareTest({
      miniflare: {
        compatibilityDate: "2026-04-20",
        r2Buckets: ["BUCKET"],
        // With a wrangler config (wrangler.configPath) this rule is wrangler's default; with
        // `miniflare` options alone it must be given, or Vite's own wasm handling takes the
        // import and fails ("Cannot find module './fencepost_bg.js'").
        modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      },
    }),
  ],
  test: { include: ["examples/testing/*.worker.test.mjs"] },
});
