#!/usr/bin/env bash
# Builds the npm package in pkg/: its JS binding (binding/, over the Rust core) for wasm32,
# wasm-bindgen's `web` glue, wasm-opt.
# The hand-written files of pkg/ (package.json, the JS layer, index.d.ts, testing.d.ts) are committed;
# what this writes there is ignored by git.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh wasm node >&2

# Panics in the package's wasm were always silent traps (wasm32-unknown-unknown has no stderr for
# std's panic hook to write to), yet the std that rustup ships still carries the hook, the message
# formatting and the unwinding bookkeeping: about 6.6 KB gzipped. So std is built from the
# toolchain's own source (rust-src, which setup adds) with panics that abort at once — the
# `panic = "immediate-abort"` strategy. Both are cargo's unstable -Z options, which this stable
# toolchain takes under RUSTC_BOOTSTRAP=1 for this one build: crates that depend on fencepost, the
# wasm tests and everything native build as usual. A toolchain whose -Z options differ falls back
# to the plain build, saying so (the package then works the same, 6.6 KB larger).
# Two more of std's size options, measured gzipped: -Zlocation-detail=none (with panics aborting at
# once, the file, line and column recorded for each panic site are never read, yet their paths
# stayed in the data: 0.7 KB) and std's `optimize_for_size` feature (its smaller sort and integer
# printing: 0.8 KB).
if ! RUSTC_BOOTSTRAP=1 CARGO_PROFILE_RELEASE_PANIC=immediate-abort RUSTFLAGS="-Zlocation-detail=none" \
    cargo build -p fencepost-js --lib --target wasm32-unknown-unknown --release \
      -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size -Zpanic-immediate-abort; then
  echo "build-pkg: std could not be rebuilt with immediate-abort panics; building with the shipped std" >&2
  cargo build -p fencepost-js --lib --target wasm32-unknown-unknown --release
fi
# With the types of the wasm boundary (fencepost.d.ts), which the JS layer is checked against.
wasm-bindgen --target web --out-dir pkg --out-name fencepost \
  "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/fencepost_js.wasm"
# The JS layer type-checked (a call into the core with arguments in the wrong order, number or type
# fails here) and its declarations written; the error classes' types ship as written from errors.js
# itself, and index.d.ts and testing.d.ts are held to the rest, so neither can drift from the code.
rm -rf .run/pkg-types pkg/errors.d.ts
node_modules/.bin/tsc -p pkg/tsconfig.json
cp .run/pkg-types/errors.d.ts pkg/errors.d.ts
cp pkg/fencepost.d.ts .run/pkg-types/
node_modules/.bin/tsc -p pkg/tsconfig.check.json
# What npm shows: README.md with its links made absolute (scripts/readme-for-npm.mjs).
node scripts/readme-for-npm.mjs
raw=$(stat -c %s pkg/fencepost_bg.wasm)
# The features rustc enables by default for wasm32 today; -Oz for size (Workers bundle limits).
# --low-memory-unused: Rust's stack sits below its data and never reaches the first KB, so
# `load(x + C)` may become `load offset=C (x)` (they differ only when x + C wraps around to there).
# The producers and target-features sections are for tools, not for running it. Merging similar
# functions (monomorphized copies that differ in a constant) after -Oz saves about 0.3 KB gzipped.
# Inlining a function into its only caller only up to 25 bytes: the wasm is 0.9 % larger raw but
# 5.2 KB smaller gzipped (3.0 KB with brotli), because the functions left apart are many, small and
# alike, which compresses better than the same code spread through large callers (measured from 0
# to unlimited; 25 was the smallest, docs/benchmarks.md).
# -g keeps the functions' names for the next step.
node_modules/.bin/wasm-opt --one-caller-inline-max-function-size=25 -Oz --merge-similar-functions -Oz --low-memory-unused --strip-producers --strip-target-features -g \
  --enable-bulk-memory --enable-mutable-globals --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-reference-types --enable-multivalue \
  pkg/fencepost_bg.wasm -o pkg/fencepost_bg.wasm
# The functions laid out so that near-copies sit within gzip's window of each other (about 4 KB
# gzipped; scripts/order-wasm-functions.mjs names them in that order, wasm-opt reorders by name).
# The heuristic's result moves by several hundred bytes with any change to the code and with the
# function it starts from, so five spans of comparison and eight starts are tried (about a second
# each, two at a time) and the smallest result kept (docs/benchmarks.md).
# Then short names for the wasm's imports, exports and import module, and the glue renamed to match
# (wasm-bindgen's import names carry a hash each: about 2 KB gzipped). The mapping stays in .run/.
rm -rf .run/order && mkdir -p .run/order
lay_out() { # window start: one candidate layout, its gzipped size in .run/order/<window>-<start>.size
  local c=".run/order/$1-$2"
  node scripts/order-wasm-functions.mjs pkg/fencepost_bg.wasm "$c.named.wasm" "$1" "$2"
  node_modules/.bin/wasm-opt --reorder-functions-by-name --strip-debug --minify-imports-and-exports-and-modules \
    --enable-bulk-memory --enable-mutable-globals --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-reference-types --enable-multivalue \
    "$c.named.wasm" -o "$c.wasm" > "$c.json"
  rm "$c.named.wasm"
  gzip -9 < "$c.wasm" | wc -c > "$c.size"
}
for window in 24576 28672 32768 36864 40960; do
  for start in 0 2 4 6; do
    lay_out "$window" "$start" & lay_out "$window" "$((start + 1))" & wait
  done
done
best=$(for f in .run/order/*.size; do echo "$(cat "$f") ${f%.size}"; done | sort -n | head -1 | cut -d' ' -f2)
cp "$best.wasm" pkg/fencepost_bg.wasm
cp "$best.json" .run/wasm-names.json
rm -rf .run/order
node scripts/minify-glue.mjs .run/wasm-names.json pkg/fencepost.js pkg/fencepost.d.ts
opt=$(stat -c %s pkg/fencepost_bg.wasm)
gz=$(gzip -9 -c pkg/fencepost_bg.wasm | wc -c)
echo "pkg/fencepost_bg.wasm: $raw bytes from wasm-bindgen, $opt bytes after wasm-opt, $gz bytes gzipped" >&2
# The size budget is a gate, not a hope (scripts/size-budget.json).
budget=$(node -p 'require("./scripts/size-budget.json").wasmGzipBytes')
if [ "$gz" -gt "$budget" ]; then
  echo "build-pkg: the wasm is $gz bytes gzipped, over its budget of $budget (scripts/size-budget.json)" >&2
  exit 1
fi
# What the package ships: each entry bundled, with one chunk they share, and the wasm beside them
# in pkg/dist/ (scripts/bundle-pkg.mjs).
node scripts/bundle-pkg.mjs
