// The public API, the same from every entry point (each entry prepares the wasm core first).
export { Fencepost, Lease, Doc, Objects, Store, memoryStore, s3Store, r2Store, countingStore, objects } from "./api.js";
export {
  FencepostError, LeaseLost, ConflictError, StorageError, AmbiguousWriteError, InvalidArgument, TimeoutError,
  NotFoundError, CorruptObjectError,
} from "./errors.js";
export { initWasm } from "./runtime.js";
