#!/usr/bin/env bash
# Benchmarks: `npm run bench` runs every bench/*.ts; `npm run bench -- platform` runs one by name.
# Each prints its own figures and the ratio against its comparison, measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/services.sh start >/dev/null
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in dist/bench/*.js; do names+=("$(basename "$f" .js)"); done
fi
for name in "${names[@]}"; do
  echo "=== bench: $name"
  node --expose-gc dist/bench/"$name".js
done
