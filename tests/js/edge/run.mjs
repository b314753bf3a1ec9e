// Runs the JS conformance suite inside Vercel's Edge Runtime (npm `edge-runtime`, the runtime Vercel
// and Next.js use for edge functions, in a V8 context with only the Web APIs): suite.mjs bundled
// by esbuild with the "edge-light" condition — the package's `.wasm?module` import becomes a
// WebAssembly.Module compiled outside the runtime's realm, as Next.js's edge sandbox makes it (a
// module from another realm is no `instanceof WebAssembly.Module` there) — then evaluated in an
// EdgeRuntime. Stores:
// memory, and SeaweedFS and moto over the runtime's fetch when scripts/test.sh runs them.
// Prints one ok / not ok line per case and finally `N passed, M failed`; exits 1 on a failure.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EdgeRuntime } from "edge-runtime";
import { createFormat } from "@edge-runtime/format";
import { serverSettings } from "../../../js/support/servers.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");

const esbuild = await import("esbuild");
/** The package's wasm compiled here, in the host's realm (see above). @type {WebAssembly.Module | undefined} */
let hostModule;
const wasmAsModule = {
  name: "wasm-as-module",
  setup(build) {
    build.onResolve({ filter: /\.wasm\?module$/ }, (args) => ({
      path: resolve(args.resolveDir, args.path.replace(/\?module$/, "")),
      namespace: "wasm-module",
    }));
    build.onLoad({ filter: /.*/, namespace: "wasm-module" }, (args) => {
      hostModule = new WebAssembly.Module(readFileSync(args.path));
      return { contents: "export default globalThis.__fencepostWasm;", loader: "js" };
    });
  },
};
const built = await esbuild.build({
  entryPoints: [resolve(here, "suite.mjs")],
  absWorkingDir: root,
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "es2022",
  conditions: ["edge-light"],
  plugins: [wasmAsModule],
  logLevel: "error",
});

const runtime = new EdgeRuntime();
runtime.context.__fencepostWasm = hostModule;
// What the runtime's console.log prints with (its own formatter, which honours only its own inspect
// symbol): the suite's inspect cases check what a handle shows there.
runtime.context.__edgeFormat = createFormat();
runtime.evaluate(built.outputFiles[0].text);
const results = await runtime.evaluate("runSuite")(serverSettings(), 120_000);
let passed = 0;
let failed = 0;
for (const r of results) {
  if (r.ok) {
    passed++;
    console.log(`ok - edge / ${r.name}`);
  } else {
    failed++;
    console.log(`not ok - edge / ${r.name}\n  ${r.error.replace(/\n/g, "\n  ")}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
