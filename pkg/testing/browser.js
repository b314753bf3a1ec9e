// fencepost/testing for browser: the runtime entry first (it loads the wasm core), then the toolkit.
import "../browser.js";

export * from "../testing.js";
