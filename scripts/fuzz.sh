#!/usr/bin/env bash
# The API fuzzer alone (`npm run fuzz`): install and build, local services, schemathesis (pinned, in
# .local/venv-fuzz), then dist/scripts/fuzz.js, which starts the API on 127.0.0.1 over a database of its own
# and runs schemathesis over /openapi.json with a session and with an API key (scripts/fuzz.ts says more).
# Extra arguments are ignored; tune with FUZZ_MAX_EXAMPLES, FUZZ_MAX_SECONDS, FUZZ_SEED, FUZZ_RUNS.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
bash scripts/services.sh start >/dev/null
bash scripts/install-fuzzer.sh >/dev/null
eval "$(bash scripts/services.sh env)"
node dist/scripts/fuzz.js
