// fencepost/testing for node: the runtime entry first (it loads the wasm core), then the toolkit.
import "../node.js";

export * from "../testing.js";
