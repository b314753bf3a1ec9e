// The memory benchmark's Worker: `GET /run?from=I&n=N` makes calls I..I+N of the workload (the
// same as in Node) in one request, and answers the wasm memory it has grown to.
import { wasmBytes } from "./capture.js";
import * as lib from "fencepost";
import { workload } from "./workload.js";

const step = workload(lib, lib.memoryStore());

export default {
  async fetch(/** @type {Request} */ request) {
    const url = new URL(request.url);
    const from = Number(url.searchParams.get("from") ?? 0);
    const n = Number(url.searchParams.get("n") ?? 0);
    for (let i = from; i < from + n; i++) await step(i);
    return Response.json({ wasm: wasmBytes() });
  },
};
