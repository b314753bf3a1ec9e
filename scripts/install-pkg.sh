#!/usr/bin/env bash
# Packs pkg/ with `npm pack` and installs the tarball as node_modules/fencepost, so every test
# runtime imports exactly what users get from the registry. pkg/README.md and pkg/LICENSE-* are
# committed files, so `pnpm pack` or `yarn pack` in pkg/ ship them too.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f pkg/fencepost-*.tgz
tarball=$(cd pkg && npm pack --silent)
rm -rf node_modules/fencepost
mkdir -p node_modules/fencepost
tar -xzf "pkg/$tarball" -C node_modules/fencepost --strip-components=1
size=$(stat -c %s "pkg/$tarball")
echo "packed pkg/$tarball: $size bytes (gzipped tarball); installed as node_modules/fencepost" >&2
budget=$(node -p 'require("./scripts/size-budget.json").tarballBytes')
if [ "$size" -gt "$budget" ]; then
  echo "install-pkg: the packed tarball is $size bytes, over its budget of $budget (scripts/size-budget.json)" >&2
  exit 1
fi
