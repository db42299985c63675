#!/usr/bin/env bash
# Stops the API and the worker (gracefully: SIGTERM, then waits), then the local services.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=.local/run

stop_process() {
  local name=$1 pidfile="$RUN/$1.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    local pid; pid=$(cat "$pidfile")
    echo "[stop] stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && { echo "[stop] $name did not stop in 15 s: killing"; kill -KILL "$pid" || true; }
  fi
  rm -f "$pidfile"
}

stop_process api
stop_process worker
stop_process mail-sink
bash scripts/services.sh stop
