#!/usr/bin/env bash
# Benchmarks: `npm run bench` runs every bench/*.ts; `npm run bench -- platform` runs one by name;
# `npm run bench -- report --runs 1 --mb 1` passes the options after the names to each named benchmark.
# Each prints its own figures and the ratio against its comparison, measured in the same run.
# bench/lib.ts is their shared library, not a benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/services.sh start >/dev/null
names=()
while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
  names+=("$1")
  shift
done
if [ ${#names[@]} -eq 0 ]; then
  for f in bench/*.ts; do
    name="$(basename "$f" .ts)"
    [ "$name" = lib ] || names+=("$name")
  done
fi
for name in "${names[@]}"; do
  echo "=== bench: $name"
  node --expose-gc dist/bench/"$name".js "$@"
done
