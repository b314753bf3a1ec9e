#!/usr/bin/env bash
# Profile one operation with wasm function names: builds .run/prof-pkg/fencepost, a copy of the
# package whose .wasm keeps its name section (wasm-bindgen + wasm-opt -Oz -g from the same target/
# build, so the same code, with wasm-bindgen's unminified glue), bundled as the package build
# bundles it, then runs benches/profile.mjs against it.
#   bash benches/profile.sh [memory|s3|aws4fetch|baseline] [scenario id]    (default: memory claimWon)
#   bash benches/profile.sh --build-only                                     (the copy alone)
# Env: FENCEPOST_PKG_SRC (default node_modules/fencepost), PROFILE_N, PROFILE_TOP.
# Touches nothing outside .run/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
src=${FENCEPOST_PKG_SRC:-node_modules/fencepost}
target=${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/fencepost_js.wasm
out=.run/prof-pkg
[ -f "$src/dist/node.js" ] || { echo "no package in $src (npm run build)" >&2; exit 1; }
[ -f "$target" ] || { echo "no $target (npm run build)" >&2; exit 1; }

if [ ! -f "$out/fencepost/fencepost_bg.wasm" ] || [ "$target" -nt "$out/fencepost/fencepost_bg.wasm" ] || [ "$src/dist/fencepost_bg.wasm" -nt "$out/fencepost/fencepost_bg.wasm" ]; then
  rm -rf "$out" && mkdir -p "$out/bg"
  wasm-bindgen --target web --out-dir "$out/bg" --out-name fencepost --no-typescript "$target"
  features="--enable-bulk-memory --enable-mutable-globals --enable-nontrapping-float-to-int --enable-sign-ext --enable-reference-types --enable-multivalue"
  # shellcheck disable=SC2086
  node_modules/.bin/wasm-opt -Oz $features "$out/bg/fencepost_bg.wasm" -o "$out/bg/plain.wasm"
  # shellcheck disable=SC2086
  node_modules/.bin/wasm-opt -Oz -g $features "$out/bg/fencepost_bg.wasm" -o "$out/bg/named.wasm"
  # The JS layer's sources (pkg/) with this glue and wasm, bundled into dist/ as the package is.
  mkdir -p "$out/fencepost"
  cp -r pkg/*.js pkg/package.json pkg/testing pkg/adapters pkg/cli "$out/fencepost/"
  cp -r "$out/bg/snippets" "$out/fencepost/"
  cp "$out/bg/fencepost.js" "$out/fencepost/fencepost.js"
  cp "$out/bg/named.wasm" "$out/fencepost/fencepost_bg.wasm"
  node scripts/bundle-pkg.mjs "$out/fencepost"
fi
# `--build-only`: just the named copy (for benches/instructions-by-function.mjs).
[ "${1:-}" = "--build-only" ] && exit 0
FENCEPOST_PKG_DIR="$out/fencepost" node benches/profile.mjs "${1:-memory}" "${2:-claimWon}"
