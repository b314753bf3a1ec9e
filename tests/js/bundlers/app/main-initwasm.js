// The page's entry when the bundler puts the `.wasm` somewhere of its own choosing (here esbuild's
// `file` loader, which emits `fencepost_bg-HASH.wasm` and makes the import its URL): tell fencepost
// where it is before the first call. No top-level await needed; calls made meanwhile wait for it.
import wasmUrl from "fencepost/fencepost_bg.wasm";
import { initWasm } from "fencepost";
import { runPage } from "./page.js";

initWasm(wasmUrl);
runPage();
