#!/usr/bin/env bash
# The Rust example Worker (examples/worker-rs): builds it with worker-build, prints its size, then
# runs the demo's checks on it (js/demo/run-demo.mjs --config examples/worker-rs/wrangler.toml):
# racing cron ticks on local workerd with a simulated R2 bucket, the job across epochs, the cancel,
# the requests per operation. Needs `bash scripts/setup.sh rust-worker node` (test.sh runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$HOME/.cargo/bin:$PATH"

# worker-build would download wasm-bindgen, wasm-opt and esbuild; use the ones setup installed
# (the wasm-bindgen CLI pinned with the crate, binaryen and esbuild from node_modules).
export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$ROOT/node_modules/.bin/esbuild"

# At a lower CPU priority: scripts/test.sh runs this beside the JS lane, whose timers need the CPU.
(cd examples/worker-rs && nice -n 10 worker-build --release) >&2
wasm=examples/worker-rs/build/index_bg.wasm
js=examples/worker-rs/build/index.js
echo "rust worker: $(stat -c %s "$wasm") bytes of wasm ($(gzip -9 -c "$wasm" | wc -c) gzipped) + $(stat -c %s "$js") bytes of JS glue ($(gzip -9 -c "$js" | wc -c) gzipped)"

exec node js/demo/run-demo.mjs --config examples/worker-rs/wrangler.toml
