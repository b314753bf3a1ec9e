// Vite builds (6, 8) need no configuration: they emit the `.wasm` that the browser entry's
// `new URL("./fencepost_bg.wasm", import.meta.url)` names. Only the dev server of Vite 6 needs this:
// its esbuild dependency pre-bundling copies the package's JS into node_modules/.vite/deps/ but not
// the `.wasm`, so that URL would miss. Vite 8's dev server needs nothing.
export default {
  optimizeDeps: { exclude: ["fencepost"] },
};
