#!/usr/bin/env bash
# Installs the API fuzzer (schemathesis, pinned) into a project-local virtual environment under the
# git-ignored .local/ folder: .local/venv-fuzz. Skipped when that exact version is already there.
# Prints the path of the `st` command on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
VENV=.local/venv-fuzz
ST=$VENV/bin/st

say() { printf '[fuzz-install] %s\n' "$*" >&2; }

installed_version() {
  [[ -x $VENV/bin/python ]] || return 1
  "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null
}

if [[ $(installed_version || true) == "$SCHEMATHESIS_VERSION" && -x $ST ]]; then
  echo "$ST"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || {
  say "python3 is needed: installing Debian's python3 and python3-venv"
  apt-get update -qq && apt-get install -y -qq python3 python3-venv
}
mkdir -p .local
[[ -f .local/.gitignore ]] || printf '*\n' >.local/.gitignore
if [[ ! -x $VENV/bin/python ]]; then
  say "creating the virtual environment $VENV"
  python3 -m venv "$VENV" || {
    say "python3 -m venv failed: installing Debian's python3-venv"
    apt-get update -qq && apt-get install -y -qq python3-venv
    rm -rf "$VENV"
    python3 -m venv "$VENV"
  }
fi
say "installing schemathesis==$SCHEMATHESIS_VERSION into $VENV (first time only)"
"$VENV/bin/python" -m pip install --disable-pip-version-check --quiet "schemathesis==$SCHEMATHESIS_VERSION" >&2
[[ $(installed_version) == "$SCHEMATHESIS_VERSION" ]] || {
  say "schemathesis $SCHEMATHESIS_VERSION not found in $VENV after pip install"
  exit 1
}
echo "$ST"
