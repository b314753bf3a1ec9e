// What every entry point exports, once its runtime has instantiated the wasm module.
import { installErrorClasses } from "./fencepost.js";
import * as errors from "./errors.js";

/** Called by each entry file right after the wasm module is initialised. */
export function install() {
  installErrorClasses(errors);
}

export { Fencepost, Lease, Doc, Objects, Store, memoryStore, s3Store, r2Store, countingStore, objects } from "./fencepost.js";
export * from "./errors.js";
