#!/usr/bin/env bash
# Runs every test: installs what is missing and builds (conf/setup.sh), then
# ctest. Tests start their own services (redis-server, the scripted
# upstream, reprox itself) on free loopback ports and stop them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash conf/setup.sh
cd build
ctest --output-on-failure -j2 --timeout 900
