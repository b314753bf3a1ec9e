#!/usr/bin/env bash
# Starts local S3 servers for the integration tests, on 127.0.0.1 only.
# Usage: scripts/servers/start.sh [seaweed] [moto]        (default: both)
#   seaweed  SeaweedFS `weed mini` (enforces SigV4; credentials from seaweed-identities.json)
#   moto     moto's S3 behind one global lock (moto_locked.py; accepts any credentials)
# Then:  set -a; . .run/servers.env; set +a     (the JS runners read it themselves: js/support/servers.js)
# Idempotent: an instance recorded in .run/NAME.pid that is alive and answering is reused.
# Environment: FENCEPOST_RUN_DIR (default <repo>/.run), FENCEPOST_VENV (default <repo>/.tools/venv),
#              FENCEPOST_SERVER_TIMEOUT (readiness timeout in seconds, default 60).
# Needs `bash scripts/setup.sh servers` first. Stop with scripts/servers/stop.sh.
set -euo pipefail
. "$(dirname "$0")/common.sh"
parse_servers "$@"

[ -x "$PY" ] || die "no $PY; run: bash scripts/setup.sh servers"
for s in "${SELECTED[@]}"; do
  case "$s" in
    seaweed) [ -x "$WEED" ] || die "no $WEED; run: bash scripts/setup.sh servers" ;;
    moto) "$PY" -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("moto") and u.find_spec("werkzeug")))' \
            || die "moto[server] is not importable from $PY; run: bash scripts/setup.sh servers" ;;
  esac
done

lock_run_dir

now() { date +%s.%N; }

spawn() {  # LOGFILE CMD...: start CMD in its own session (pgid = pid), print its pid
  "$PY" - "$RUN" "$@" <<'EOF'
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
  read -r ak sk < <(credentials "$name")
  "$PY" "$SERVERS_DIR/s3util.py" probe "$ep" "$BUCKET" "$ak" "$sk" "$REGION"
}

start_one() {  # NAME
  local name=$1 upper=${1^^} pid data="" ports port t0 ak sk endpoint create=""
  if running_and_answering "$name"; then
    log "$name already running (pid $(recorded_pid "$name")); reusing it"
    return 0
  fi
  stop_one "$name"  # clear a stale or unresponsive instance and its files
  read -r ak sk < <(credentials "$name")
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
      pid=$(spawn "$RUN/$name.log" "$WEED" mini \
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
      pid=$(spawn "$RUN/$name.log" "$PY" -u "$SERVERS_DIR/moto_locked.py" "$port")
      create=create
      ;;
  esac
  echo "$pid" > "$RUN/$name.pid"
  endpoint="http://127.0.0.1:$port"
  if ! "$PY" "$SERVERS_DIR/s3util.py" wait "$endpoint" "$BUCKET" "$ak" "$sk" "$REGION" \
        "$TIMEOUT" "$pid" $create; then
    log "$name did not become ready; last lines of $RUN/$name.log:"
    tail -n 40 "$RUN/$name.log" >&2 || true
    stop_one "$name"
    write_servers_env
    exit 1
  fi
  if [ "$name" = seaweed ] && ! "$PY" "$SERVERS_DIR/s3util.py" cors "$endpoint" "$BUCKET" "$ak" "$sk" "$REGION"; then
    log "could not set the browser CORS rule on $name"
    stop_one "$name"
    write_servers_env
    exit 1
  fi
  cat > "$RUN/$name.env" <<EOF
FENCEPOST_${upper}_ENDPOINT=$endpoint
FENCEPOST_${upper}_BUCKET=$BUCKET
FENCEPOST_${upper}_ACCESS_KEY=$ak
FENCEPOST_${upper}_SECRET_KEY=$sk
FENCEPOST_${upper}_REGION=$REGION
EOF
  log "$name ready at $endpoint in $(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }') s (pid $pid, log $RUN/$name.log)"
}

for s in "${SELECTED[@]}"; do
  start_one "$s"
done
write_servers_env
log "wrote $RUN/servers.env"
