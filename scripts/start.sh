#!/usr/bin/env bash
# Quick start: local services (PostgreSQL, Temporal + Web UI, MinIO), migrations, API and worker.
# Idempotent: what runs already is reused. Stop everything with scripts/stop.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUN="$ROOT/.local/run"
LOG="$ROOT/.local/log"
mkdir -p "$RUN" "$LOG"

# A development machine: without NODE_ENV the API and the worker refuse the built-in SECRET_KEY unless
# this flag says so (README: ALLOW_DEVELOPMENT_DEFAULTS). A production NODE_ENV never gets it.
if [ -z "${NODE_ENV:-}" ]; then export ALLOW_DEVELOPMENT_DEFAULTS=${ALLOW_DEVELOPMENT_DEFAULTS:-true}; fi

bash scripts/install.sh
bash scripts/services.sh start

echo "[start] migrations"
node dist/db/migrate.js

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_process() { # name entry
  local name=$1 entry=$2
  if running "$RUN/$name.pid"; then
    echo "[start] reusing $name (pid $(cat "$RUN/$name.pid"))"
  else
    echo "[start] starting $name (log .local/log/$name.log)"
    setsid nohup node --enable-source-maps "$entry" >>"$LOG/$name.log" 2>&1 < /dev/null &
    echo $! >"$RUN/$name.pid"
  fi
}

# the local mail sink (SMTP on 127.0.0.1:2525, mails kept in .local/mail/) unless SMTP_URL points elsewhere
if [ -z "${SMTP_URL:-}" ]; then start_process mail-sink dist/scripts/mail-sink.js; fi
start_process worker dist/worker/index.js
start_process api dist/api/server.js

HOST=${HOST:-127.0.0.1}
PORT=${PORT:-3000}
echo -n "[start] waiting for the API to be ready"
for _ in $(seq 1 60); do
  if curl -sf "http://$HOST:$PORT/ready" >/dev/null 2>&1; then
    echo " ok"
    break
  fi
  if ! running "$RUN/api.pid"; then
    echo; echo "[start] the API exited; last lines of .local/log/api.log:"; tail -n 20 "$LOG/api.log"; exit 1
  fi
  echo -n "."
  sleep 1
done
if ! curl -sf "http://$HOST:$PORT/ready" >/dev/null 2>&1; then
  echo; echo "[start] the API is not ready after 60 s:"; curl -s "http://$HOST:$PORT/ready" || true; echo; exit 1
fi
if ! running "$RUN/worker.pid"; then
  echo "[start] the worker exited; last lines of .local/log/worker.log:"; tail -n 20 "$LOG/worker.log"; exit 1
fi

bash scripts/services.sh addresses 2>/dev/null || true
echo "API              http://$HOST:$PORT   (OpenAPI at /openapi.json, docs at /docs)"
echo "Mail sink        smtp://127.0.0.1:2525, mails in .local/mail/"
echo "Logs             .local/log/api.log, .local/log/worker.log"
echo "Stop             bash scripts/stop.sh"
