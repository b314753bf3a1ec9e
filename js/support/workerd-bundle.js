// A Worker bundled for workerd as Miniflare takes it: esbuild with the conditions
// workerd/worker/browser, each `.wasm` import kept as a CompiledWasm module beside the bundle.
// Used by the workerd conformance stage and the memory benchmark.
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

/**
 * @param {string} entry the worker's entry file (absolute)
 * @param {string} root where node_modules is
 * @returns {Promise<{modules: object[], bytes: number, wasm: string[]}>}
 */
export async function bundleWorker(entry, root) {
  const esbuild = await import("esbuild");
  const here = dirname(entry);
  const wasmFiles = new Map(); // module name in the worker → absolute path
  const wasmExternal = {
    name: "wasm-as-compiled-module",
    setup(/** @type {any} */ build) {
      build.onResolve({ filter: /\.wasm$/ }, (/** @type {any} */ args) => {
        const path = resolve(args.resolveDir, args.path);
        const name = basename(path);
        if (wasmFiles.has(name) && wasmFiles.get(name) !== path) throw new Error(`two wasm files named ${name}`);
        wasmFiles.set(name, path);
        return { path: `./${name}`, external: true };
      });
    },
  };
  const out = resolve(here, basename(entry).replace(/\.m?js$/, ".bundle.js"));
  const result = await esbuild.build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    outfile: out,
    plugins: [wasmExternal],
    logLevel: "warning",
    metafile: true,
  });
  // The package must have resolved through its "workerd" condition (not browser.js / node.js).
  const inputs = Object.keys(result.metafile.inputs).filter((p) => p.includes("node_modules/fencepost/"));
  if (!inputs.some((p) => p.endsWith("node_modules/fencepost/dist/workerd.js"))) {
    throw new Error(`fencepost did not resolve to its workerd entry: bundled ${inputs.join(", ")}`);
  }
  // In-memory modules, named as if they sat next to the entry (stack traces point there).
  const modules = [{ type: "ESModule", path: out, contents: result.outputFiles[0].text }];
  for (const [name, path] of wasmFiles) modules.push({ type: "CompiledWasm", path: resolve(here, name), contents: readFileSync(path) });
  return { modules, bytes: result.outputFiles[0].contents.length, wasm: [...wasmFiles.values()] };
}
