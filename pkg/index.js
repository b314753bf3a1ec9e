// The public API, the same from every entry point (each entry prepares the wasm core first).
//
// The JS layer's modules, bottom to top; a module imports only from its own layer or those below
// (scripts/js-layers.json holds the same order, which the lint reads):
//   fencepost.js (wasm-bindgen's glue) · errors.js · options.js, json.js, runtime.js · binding.js ·
//   stores.js, objects.js, claim.js, doc.js, lease.js… · db.js, faults.js, adapters/ · conformance.js ·
//   index.js, testing.js · the entries
//   (node.js, deno.js, workerd.js, browser.js, testing/*.js) · the command line (cli.js, cli/*.js)
export { Fencepost, objects } from "./db.js";
export { Store, memoryStore, s3Store, azureStore, gcsStore, r2Store, customStore, countingStore, checkStore } from "./stores.js";
export { denoKvStore } from "./adapters/deno-kv.js";
export { durableObjectStore } from "./adapters/durable-object.js";
export { Lease } from "./lease.js";
export { Doc } from "./doc.js";
export { Counter } from "./counter.js";
export { Semaphore } from "./semaphore.js";
export { Objects } from "./objects.js";
export {
  FencepostError, LeaseLost, ConflictError, StorageError, AmbiguousWriteError, InvalidArgument, TimeoutError,
  NotFoundError, CorruptObjectError,
} from "./errors.js";
export { initWasm } from "./runtime.js";
