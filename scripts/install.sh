#!/usr/bin/env bash
# Installs the npm packages when they are missing or older than package-lock.json, then builds (tsc, strict).
#   --deps-only   install the packages, do not build (the Dockerfile's dependency layer, before the sources)
set -euo pipefail
cd "$(dirname "$0")/.."
deps_only=false
[ "${1:-}" = "--deps-only" ] && deps_only=true

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "[install] Node.js 20 and npm are needed: installing Debian's nodejs and npm"
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
node -e 'const [M,m]=process.versions.node.split(".").map(Number); if (M<20||(M===20&&m<19)) { console.error("[install] Node.js >= 20.19 is needed, found "+process.versions.node); process.exit(1) }'

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[install] npm ci"
  # npm 11 here leaves other platforms' optional binaries (@swc/core-darwin-*, …) out of the lock file it
  # writes and then `npm ci` refuses that lock as out of sync; `npm install --no-save` installs the same
  # locked versions (every dependency is pinned exactly) without rewriting package.json or the lock.
  if ! npm ci --no-audit --no-fund 2>.local-npm-ci.log; then
    echo "[install] npm ci refused the lock file ($(grep -m1 -o 'Missing: [^ ]*' .local-npm-ci.log || echo 'see npm log')); installing the locked versions with npm install --no-save"
    npm install --no-save --no-audit --no-fund
  fi
  rm -f .local-npm-ci.log
fi

if $deps_only; then exit 0; fi

echo "[install] building (tsc)"
npx tsc -p tsconfig.json
# tsc never removes the output of a source file that was moved or deleted: drop it, or mocha would still run
# the old copy of a moved test (dist/x/y.js and its map stay only while x/y.ts exists)
if [ -d dist ]; then
  find dist -name '*.js' -print0 | while IFS= read -r -d '' js; do
    src=${js#dist/}
    [ -f "${src%.js}.ts" ] || rm -f "$js" "$js.map"
  done
fi
