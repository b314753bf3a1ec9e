#!/usr/bin/env bash
# The demo: builds the package, then runs the example Worker (wrangler.toml, examples/worker.js) locally
# on workerd with a local R2 bucket (no account, no external server) and fires racing cron ticks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh rust wasm node
bash scripts/build-pkg.sh
bash scripts/install-pkg.sh
exec node js/demo/run-demo.mjs
