#!/usr/bin/env bash
# Packs pkg/ with `npm pack` and installs the tarball as node_modules/fencepost, so every test
# runtime imports exactly what users get from the registry.
set -euo pipefail
cd "$(dirname "$0")/.."
cp README.md pkg/README.md 2>/dev/null || true
cp LICENSE-MIT LICENSE-APACHE pkg/
rm -f pkg/fencepost-*.tgz
tarball=$(cd pkg && npm pack --silent)
rm -rf node_modules/fencepost
mkdir -p node_modules/fencepost
tar -xzf "pkg/$tarball" -C node_modules/fencepost --strip-components=1
size=$(stat -c %s "pkg/$tarball")
echo "packed pkg/$tarball: $size bytes (gzipped tarball); installed as node_modules/fencepost" >&2
