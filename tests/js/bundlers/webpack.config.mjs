// webpack 5: nothing fencepost-specific. Asset modules turn the browser entry's
// `new URL("./fencepost_bg.wasm", import.meta.url)` into an emitted `[hash].wasm` and its URL.
import { resolve } from "node:path";

export default {
  mode: "production",
  entry: "./app/main.js",
  output: { path: resolve("dist/webpack"), filename: "main.js" },
};
