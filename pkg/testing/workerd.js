// fencepost/testing for workerd: the runtime entry first (it loads the wasm core), then the toolkit.
import "../workerd.js";

export * from "../testing.js";
