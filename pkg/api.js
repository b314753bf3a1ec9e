// The public API, the same from every entry point (each entry instantiates the wasm module first).
export { Fencepost, Lease, Doc, Objects, Store, memoryStore, s3Store, r2Store, countingStore, objects } from "./fencepost.js";
export * from "./errors.js";
