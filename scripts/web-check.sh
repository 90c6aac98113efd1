#!/usr/bin/env bash
# The web client's checks, from the repository root: the type check of every module, test and
# benchmark (tsc over JSDoc types, Web/tsconfig.json), then the tests (node --test Web/test/).
# Needs Node 20 and TypeScript (Debian's node-typescript). Exits non-zero when either fails.
set -euo pipefail

cd "$(dirname "$0")/.."

for tool in node tsc; do
  if ! command -v "$tool" >/dev/null; then
    echo "web-check: $tool is missing (Debian: apt-get install -y nodejs node-typescript)" >&2
    exit 1
  fi
done

echo "web-check: node $(node --version), tsc $(tsc --version | sed 's/^Version //')"
echo "web-check: tsc -p Web/tsconfig.json"
tsc -p Web/tsconfig.json
echo "web-check: tsc: no errors"
echo "web-check: node --test Web/test/"
node --test Web/test/
echo "web-check: all passed"
