#!/usr/bin/env bash
# The whole test suite: install, local services, type check (tsc strict), ESLint, Prettier, then mocha
# against the real PostgreSQL, Temporal and MinIO, then the API fuzzer (schemathesis over /openapi.json,
# scripts/fuzz.ts). Each run uses its own database, bucket prefix and task queue.
# FUZZ=0 leaves the fuzzer out (e.g. when running a few mocha files: scripts/test.sh dist/test/api/x.test.js).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
bash scripts/services.sh start
[ "${FUZZ:-1}" = 0 ] || bash scripts/install-fuzzer.sh >/dev/null

echo "[test] eslint"
npx eslint .
echo "[test] prettier"
npx prettier --check . >/dev/null || { npx prettier --check . ; exit 1; }
echo "[test] mocha"
# with no arguments the whole suite; otherwise only the files named (e.g. dist/test/api/files.test.js)
if [ $# -eq 0 ]; then set -- 'dist/test/**/*.test.js'; fi
MOCHA_LOG=$(mktemp)
trap 'rm -f "$MOCHA_LOG"' EXIT
npx mocha "$@" | tee "$MOCHA_LOG"
passed=$(grep -Eo '^ +[0-9]+ passing' "$MOCHA_LOG" | grep -Eo '[0-9]+' || echo 0)
failed=$(grep -Eo '^ +[0-9]+ failing' "$MOCHA_LOG" | grep -Eo '[0-9]+' || echo 0)
if [ "${FUZZ:-1}" != 0 ]; then
  echo "[test] fuzz (schemathesis)"
  eval "$(bash scripts/services.sh env)"
  node dist/scripts/fuzz.js
fi
# the plain closing line CI reads (mocha's own summary stands above the fuzzer's output)
echo "mocha: ${passed} passed, ${failed} failed"
