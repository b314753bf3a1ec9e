#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, starts the test servers on 127.0.0.1,
# runs every stage, stops the servers, and prints one summary line.
#
#   scripts/test.sh            all stages
#   scripts/test.sh node deno  only these stages (native lint servers native-s3 native-cloud native-object-store
#                              service axum wasm node examples types package deno bun edge cli workerd workers browser
#                              bundlers playground demo rust-worker chaos sim)
#
# FENCEPOST_SKIP_BUILD=1 uses pkg/ as it is (its wasm already built): packed and installed, not rebuilt.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
LOGS="$ROOT/.run/test-logs"
mkdir -p "$LOGS"

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(native lint servers native-s3 native-cloud native-object-store service axum wasm node examples types package deno bun edge cli workerd workers browser bundlers playground demo rust-worker chaos sim)
want() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

bash scripts/setup.sh || exit 1

total_passed=0
total_failed=0
failed_stages=()
timings=()

# Run one stage; its own output goes to the terminal and to .run/test-logs/STAGE.log, and the
# stage's parser turns that log into "passed failed": count_cargo reads cargo test's "test result:"
# lines (cargo has no stable machine-readable output), count_plain the line "N passed, M failed"
# that every other stage ends with.
stage() {
  local name=$1 parser=$2; shift 2
  echo
  echo "=== $name: $*"
  local started=$SECONDS
  "$@" 2>&1 | tee "$LOGS/$name.log"
  local rc=${PIPESTATUS[0]}
  read -r p f < <("$parser" "$LOGS/$name.log")
  if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then f=1; fi   # a crash counts as a failure
  total_passed=$((total_passed + ${p:-0}))
  total_failed=$((total_failed + ${f:-0}))
  [ "$rc" -ne 0 ] && failed_stages+=("$name")
  echo "=== $name: ${p:-0} passed, ${f:-0} failed (exit $rc) in $((SECONDS - started)) s"
  timings+=("$name $((SECONDS - started))s")
}

count_cargo() { awk '/^test result:/ {p+=$4; f+=$6} END {print p+0, f+0}' "$1"; }
count_plain() { awk '/^[0-9]+ passed, [0-9]+ failed/ {p+=$1; f+=$3} END {print p+0, f+0}' "$1"; }

# `junit REPORT RUNNER…`: run a JS test runner that also writes a JUnit report to REPORT (node --test,
# deno test, bun test and vitest all can), then print that report's "N passed, M failed" (js/support/junit.mjs).
junit() {
  local report=$1 rc
  shift
  rm -f "$report"
  "$@"
  rc=$?
  node js/support/junit.mjs "$report"
  return $rc
}

if want native; then
  stage native count_cargo cargo test --all-targets --features tokio
  # The rustdoc examples (claim, lease, doc, objects, testing, the Rust guide docs/rust.md, the
  # README's Rust quickstart) run too.
  stage doctests count_cargo cargo test --doc --features reqwest
fi
if want lint; then
  # The Rust API as docs.rs shows it, and clippy on every target and feature set users build.
  lint_rust() {
    local ok=0
    run() { echo "+ $*"; "$@" || ok=1; }
    run cargo clippy --quiet --all-targets -- -D warnings
    run cargo clippy --quiet --all-targets --features reqwest,gcs-service-account -- -D warnings
    run cargo clippy --quiet --lib --target wasm32-unknown-unknown -- -D warnings
    run cargo clippy --quiet -p fencepost-js --lib --target wasm32-unknown-unknown -- -D warnings
    run cargo clippy --quiet --lib --target wasm32-unknown-unknown --features worker -- -D warnings
    run cargo clippy --quiet --manifest-path examples/worker-rs/Cargo.toml --target wasm32-unknown-unknown -- -D warnings
    run env RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --features reqwest,gcs-service-account
    run env RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --target wasm32-unknown-unknown --features worker
    # House rules: every module imports only from the layers below it (the lists at the top of
    # src/lib.rs and binding/src/lib.rs; the JS layer's in scripts/js-layers.json), no cycles; the stores call JS through
    # the typed bindings of src/host/sys.rs, never a method looked up by name.
    run node scripts/lint-layers.mjs
    run bash -c '! grep -rn "Reflect" src/store src/host --exclude=sys.rs'
    [ $ok -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
    return $ok
  }
  stage lint count_plain lint_rust
fi

needs_pkg=0
needs_servers=0
for s in node deno bun edge cli workerd browser chaos; do want "$s" && needs_pkg=1 && needs_servers=1; done
for s in examples types package bundlers workers playground demo; do want "$s" && needs_pkg=1; done   # the package only
for s in servers native-s3 native-cloud native-object-store service axum wasm; do want "$s" && needs_servers=1; done                       # the servers only
if [ $needs_pkg -eq 1 ]; then
  if [ "${FENCEPOST_SKIP_BUILD:-}" = 1 ]; then
    [ -f pkg/fencepost_bg.wasm ] || { echo "FENCEPOST_SKIP_BUILD=1 but pkg/ has no wasm: build it first"; echo "0 passed, 1 failed"; exit 1; }
  else
    bash scripts/build-pkg.sh || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
  fi
  bash scripts/install-pkg.sh || { echo "packing failed"; echo "0 passed, 1 failed"; exit 1; }
fi
if [ $needs_servers -eq 1 ]; then
  scripts/servers/start.sh || { echo "test servers failed to start"; echo "0 passed, 1 failed"; exit 1; }
  trap 'scripts/servers/stop.sh >/dev/null 2>&1' EXIT
  set -a; . .run/servers.env; set +a
fi

if want servers; then
  # The servers themselves still honour what the suites assume (conditional PUTs, an atomic race,
  # SigV4 enforced): a server regression shows here, not as a fencepost failure further on.
  stage servers count_plain .tools/venv/bin/python scripts/servers/selftest.py
fi
if want native-s3; then
  # The conformance suite natively through ReqwestTransport against SeaweedFS and moto.
  stage native-s3 count_cargo cargo test --features reqwest --test native_s3
fi
if want native-cloud; then
  # The conformance suite natively against the Azure Blob and GCS emulators (Azurite,
  # fake-gcs-server), plus a wrong key and races (tests/native_cloud.rs).
  stage native-cloud count_cargo cargo test --features reqwest,gcs-service-account --test native_cloud
fi
if want native-object-store; then
  # The conformance suite through ObjectStoreAdapter: object_store's InMemory, and its S3 client
  # against SeaweedFS; the local filesystem's refusal of a compare-and-swap.
  stage native-object-store count_cargo cargo test --features object_store --test native_object_store
fi
if want service; then
  # examples/service.rs plays a Worker and a native service on one bucket (claims, a cancel).
  service_selftest() {
    local server rc=0
    for server in SEAWEED MOTO; do
      local e="FENCEPOST_${server}_ENDPOINT" b="FENCEPOST_${server}_BUCKET" r="FENCEPOST_${server}_REGION"
      local a="FENCEPOST_${server}_ACCESS_KEY" k="FENCEPOST_${server}_SECRET_KEY"
      echo "--- service selftest on ${server,,}"
      FENCEPOST_S3_ENDPOINT=${!e} FENCEPOST_S3_BUCKET=${!b} FENCEPOST_S3_REGION=${!r} \
        FENCEPOST_S3_ACCESS_KEY=${!a} FENCEPOST_S3_SECRET_KEY=${!k} \
        cargo run --quiet --example service --features reqwest -- selftest || rc=1
    done
    return $rc
  }
  stage service count_plain service_selftest
fi
if want axum; then
  # examples/axum.rs: the HTTP service on a multi-threaded tokio runtime, three instances on
  # SeaweedFS raced by 16 concurrent HTTP clients (one claim winner, an exclusive job lease, an
  # exact typed counter).
  stage axum count_cargo cargo test --features reqwest --example axum
fi
if want wasm; then
  stage wasm count_cargo env CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test --target wasm32-unknown-unknown --test wasm
fi
if want node; then
  report=$LOGS/node.junit.xml
  stage node count_plain junit "$report" node --test --test-reporter=tap --test-reporter-destination=stdout \
    --test-reporter=junit --test-reporter-destination="$report" \
    tests/js/node.test.mjs tests/js/error-codes.test.mjs tests/js/lifecycle.test.mjs tests/js/check-store.test.mjs \
    tests/js/cloud-auth.test.mjs
fi
if want examples; then
  stage examples count_plain node tests/js/examples.mjs
fi
if want types; then
  # The package's types under each moduleResolution a user may have; then `await using` as Node 20
  # users get it (TypeScript's downlevel), compiled and run.
  for resolution in nodenext node16 bundler; do
    config=tests/js/tsconfig.json; [ $resolution = nodenext ] || config=tests/js/tsconfig.$resolution.json
    stage "types-$resolution" count_plain bash -c "tsc -p $config && echo '1 passed, 0 failed'"
  done
  stage await-using count_plain bash -c 'tsc -p tests/js/tsconfig.await-using.json && node .run/await-using/await-using.node.mjs'
  # Every README code block compiled or run (the Worker quickstarts built from its wrangler.toml and
  # run under `wrangler dev`, Deno's under `deno check`, the rest by tsc), every docs link resolving.
  stage readme count_plain node tests/js/readme.mjs
fi
if want package; then
  stage package count_plain node tests/js/package-check.mjs
fi
if want deno; then
  report=$LOGS/deno.junit.xml
  stage deno count_plain junit "$report" deno test --allow-read --allow-env --allow-net=127.0.0.1 --config tests/js/deno.json \
    --unstable-kv --allow-write="${TMPDIR:-/tmp}" --junit-path="$report" tests/js/deno.test.mjs tests/js/deno-kv.test.mjs
fi
if want bun; then
  # The same suite in Bun (npm `bun`), through the package's "bun" export condition.
  report=$LOGS/bun.junit.xml
  stage bun count_plain junit "$report" bun test --timeout 60000 --reporter=junit --reporter-outfile="$report" \
    tests/js/bun.test.mjs
fi
if want edge; then
  # The same suite in Vercel's Edge Runtime (npm `edge-runtime`), bundled with the "edge-light"
  # condition (tests/js/edge/).
  stage edge count_plain node tests/js/edge/run.mjs
fi
if want cli; then
  # The `fencepost` command line of the installed package, run as a subprocess under Node and Deno
  # (and as the bin: npx, deno run npm:fencepost) against SeaweedFS: every command, exit statuses.
  report=$LOGS/cli.junit.xml
  stage cli count_plain junit "$report" node --test --test-reporter=tap --test-reporter-destination=stdout \
    --test-reporter=junit --test-reporter-destination="$report" tests/js/cli.test.mjs
fi
if want workerd; then
  stage workerd count_plain node tests/js/workerd/run.mjs
fi
if want workers; then
  # The example Worker's own tests, as Workers users write them: vitest inside workerd
  # (@cloudflare/vitest-pool-workers), local R2 (tests/workers/).
  report=$LOGS/workers.junit.xml
  stage workers count_plain junit "$report" vitest run --config tests/workers/vitest.config.mjs \
    --reporter=default --reporter=junit --outputFile.junit="$report"
fi
if want browser; then
  stage browser count_plain node tests/js/browser/run.mjs
  stage lost-responses count_plain node tests/js/browser/lost-responses.mjs
fi

if want bundlers; then
  stage bundlers count_plain node tests/js/bundlers/run.mjs
fi

if want playground; then
  # The playground page (js/playground/) in headless Chromium: seeded runs, invariants, the drawn timeline.
  stage playground count_plain node tests/js/playground/run.mjs
fi

if want demo; then
  stage demo count_plain node js/demo/run-demo.mjs
fi

if want rust-worker; then
  # The Rust example Worker (workers-rs, fencepost's `worker` feature), built by worker-build and
  # checked by the same demo as examples/worker.js on local workerd + local R2.
  stage rust-worker count_plain bash scripts/rust-worker.sh
fi

if want chaos; then
  # Seeded fault injection in front of SeaweedFS (CHAOS_SEEDS, CHAOS_CALLS): see tests/chaos/run.mjs.
  stage chaos count_plain node tests/chaos/run.mjs
fi
if want sim; then
  # Deterministic simulation of the real core (tests/sim): the mutation table (each deliberately
  # broken protocol must be caught), the ambiguity rate under contention and lost responses, then
  # 10,000 seeded histories, every check on each.
  stage sim count_plain cargo test --features mutations --test sim -- --histories "${SIM_HISTORIES:-10000}" --mutations --ambiguity
fi

echo
# Where the time goes (the whole suite should stay under 30 minutes from a clean clone).
[ ${#timings[@]} -gt 0 ] && echo "stage times: ${timings[*]}; all: $SECONDS s"
if [ ${#failed_stages[@]} -gt 0 ]; then
  echo "failed stages: ${failed_stages[*]} (logs in .run/test-logs/)"
fi
echo "$total_passed passed, $total_failed failed"
[ ${#failed_stages[@]} -eq 0 ] && [ "$total_failed" -eq 0 ]
