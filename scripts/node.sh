#!/bin/sh
# Runs Node with the arguments given: this machine's `node` when it is 24 or later (package.json `engines`),
# otherwise the Node 24 that `npm ci` fetched for it into node_modules/.pagecast-node (scripts/postinstall.mjs;
# docs/operations.md#installing). npm start, npm test, npm run docs and npm run bench go through it.
#
#   sh scripts/node.sh src/server.ts
set -eu

min_major=24
root=$(cd "$(dirname "$0")/.." && pwd)
fallback="$root/node_modules/.pagecast-node/node_modules/.bin"

version=$(node -v 2>/dev/null || true)
major=${version#v}
major=${major%%.*}
case "$major" in ''|*[!0-9]*) major=0 ;; esac

if [ "$major" -ge "$min_major" ]; then
  exec node "$@"
fi
if [ -x "$fallback/node" ]; then
  # First on PATH too, so that whatever the service or the tests start as `node` is this one as well.
  PATH="$fallback:$PATH"
  export PATH
  exec "$fallback/node" "$@"
fi
echo "[node.sh] pagecast needs Node $min_major or later; this machine's is ${version:-missing}." >&2
echo "[node.sh] Run npm ci (it fetches Node $min_major when the machine's is older), or install Node $min_major." >&2
exit 1
