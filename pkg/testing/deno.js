// fencepost/testing for deno: the runtime entry first (it loads the wasm core), then the toolkit.
import "../deno.js";

export * from "../testing.js";
