#!/usr/bin/env bash
# Installs the npm packages when they are missing or older than package-lock.json, then builds (tsc, strict).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "[install] Node.js 20 and npm are needed: installing Debian's nodejs and npm"
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
node -e 'const [M,m]=process.versions.node.split(".").map(Number); if (M<20||(M===20&&m<19)) { console.error("[install] Node.js >= 20.19 is needed, found "+process.versions.node); process.exit(1) }'

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[install] npm ci"
  npm ci --no-audit --no-fund
fi

echo "[install] building (tsc)"
npx tsc -p tsconfig.json
