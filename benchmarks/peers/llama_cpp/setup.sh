#!/usr/bin/env bash
# Installs node-llama-cpp (exactly the version pinned in package.json, with its
# prebuilt llama.cpp CPU binaries) into benchmarks/peers/llama_cpp/node_modules,
# which git ignores. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
want="$(node -p 'require("./package.json").dependencies["node-llama-cpp"]')"
have="$(node -p 'try { require("./node_modules/node-llama-cpp/package.json").version } catch { "" }' 2>/dev/null || true)"
if [[ "$have" != "$want" ]]; then
  echo "setup: installing node-llama-cpp@$want" >&2
  # --ignore-scripts: the postinstall only offers to download models or build
  # from source; the prebuilt binaries come as optional dependencies.
  npm install --no-audit --no-fund --ignore-scripts --save-exact "node-llama-cpp@$want" >&2
fi
