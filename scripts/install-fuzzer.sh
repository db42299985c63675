#!/usr/bin/env bash
# Installs the API fuzzer (schemathesis, pinned) into a project-local virtual environment under the
# git-ignored .local/ folder: .local/venv-fuzz. Skipped when that exact version is already there.
# Prints the path of the `st` command on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
# schemathesis pins hypothesis only loosely; the version it was tried with is pinned too, so a clean machine
# fuzzes with the same generator as the last green run
HYPOTHESIS_VERSION=6.170.15
VENV=.local/venv-fuzz
ST=$VENV/bin/st

say() { printf '[fuzz-install] %s\n' "$*" >&2; }

installed_version() {
  [[ -x $VENV/bin/python ]] || return 1
  "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null
}

# CPython 3.11 keeps the AST constructor's recursion counter in state shared by all threads; two schemathesis
# workers describing hypothesis strategies (ast.parse of their lambdas) at once corrupt it and one of them dies
# with "SystemError: AST constructor recursion depth mismatch" (a Runtime Error in the report, nothing to do with
# the API; CPython 3.12+ keeps the counter per call). The venv's site-packages gets a .pth that serialises
# ast.parse, so the fuzzer's workers can't race there. Written on every call: cheap, and never stale.
ast_lock() {
  local site
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  cat >"$site/_ds_ast_parse_lock.py" <<'PY'
"""Serialises ast.parse (see scripts/install-fuzzer.sh): CPython 3.11's AST constructor is not thread-safe."""
import ast
import sys
import threading

if sys.version_info < (3, 12) and not getattr(ast.parse, "_ds_locked", False):
    _lock = threading.RLock()
    _parse = ast.parse

    def parse(*args, **kwargs):
        with _lock:
            return _parse(*args, **kwargs)

    parse._ds_locked = True
    ast.parse = parse
PY
  printf 'import _ds_ast_parse_lock\n' >"$site/_ds_ast_parse_lock.pth"
}

# a venv moved or made through another path (its scripts' #! names the old one) does not run: made anew
if [[ -x $VENV/bin/python && -x $ST ]] && ! "$ST" --version >/dev/null 2>&1; then
  say "$ST does not run (made at another path?): creating $VENV anew"
  rm -rf "$VENV"
fi

if [[ $(installed_version || true) == "$SCHEMATHESIS_VERSION" && -x $ST ]]; then
  ast_lock
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
"$VENV/bin/python" -m pip install --disable-pip-version-check --quiet \
  "schemathesis==$SCHEMATHESIS_VERSION" "hypothesis==$HYPOTHESIS_VERSION" >&2
[[ $(installed_version) == "$SCHEMATHESIS_VERSION" ]] || {
  say "schemathesis $SCHEMATHESIS_VERSION not found in $VENV after pip install"
  exit 1
}
ast_lock
echo "$ST"
