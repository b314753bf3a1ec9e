// Imported before fencepost: remembers the memory of every wasm instance made after it, so the
// benchmark can read the instance's `memory.buffer.byteLength` (what a wasm memory has grown to;
// it never shrinks). Wraps `WebAssembly.Instance` and `WebAssembly.instantiate`, the two ways
// wasm-bindgen's glue instantiates a module.

/** @type {WebAssembly.Memory[]} */
export const memories = [];

function remember(/** @type {WebAssembly.Instance} */ instance) {
  for (const value of Object.values(instance.exports)) {
    if (value instanceof WebAssembly.Memory) memories.push(value);
  }
  return instance;
}

const Instance = WebAssembly.Instance;
const Wrapped = function (/** @type {any} */ module, /** @type {any} */ imports) {
  return remember(new Instance(module, imports));
};
Wrapped.prototype = Instance.prototype;
WebAssembly.Instance = /** @type {any} */ (Wrapped);

const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = /** @type {any} */ (async (/** @type {any} */ source, /** @type {any} */ imports) => {
  const made = await instantiate(source, imports);
  remember(/** @type {any} */ (made).instance ?? made);
  return made;
});

/** The wasm memory fencepost's instance has grown to, in bytes. */
export function wasmBytes() {
  return memories.reduce((sum, m) => sum + m.buffer.byteLength, 0);
}
