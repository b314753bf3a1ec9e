// fencepost/testing for Vercel's Edge Runtime: the runtime entry first (it loads the wasm core), then the toolkit.
import "../edge-light.js";

export * from "../testing.js";
