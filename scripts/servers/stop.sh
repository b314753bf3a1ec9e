#!/usr/bin/env bash
# Stops the servers that scripts/servers/start.sh recorded, and only those.
# Usage: scripts/servers/stop.sh [seaweed] [moto] [azurite] [fakegcs]        (default: all)
# Sends SIGTERM to each recorded pid's process group (SIGKILL after 15 s), removes its pid/env
# files and data dir, and rewrites .run/servers.env (deleted when no server remains).
# Logs (.run/NAME.log) are kept. A pid that no longer runs our command is left alone.
set -euo pipefail
. "$(dirname "$0")/common.sh"
parse_servers "$@"
lock_run_dir
for s in "${SELECTED[@]}"; do
  stop_one "$s"
done
write_servers_env
