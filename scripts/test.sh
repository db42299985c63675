#!/usr/bin/env bash
# The whole test suite: install, local services, type check (tsc strict), ESLint, Prettier, then mocha
# against the real PostgreSQL, Temporal and MinIO. Each run uses its own database, bucket prefix and task queue.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
bash scripts/services.sh start

echo "[test] eslint"
npx eslint .
echo "[test] prettier"
npx prettier --check . >/dev/null || { npx prettier --check . ; exit 1; }
echo "[test] mocha"
# with no arguments the whole suite; otherwise only the files named (e.g. dist/test/api/files.test.js)
if [ $# -eq 0 ]; then set -- 'dist/test/**/*.test.js'; fi
npx mocha "$@"
