#!/usr/bin/env bash
# Contract test: the simulator against its OpenAPI document (crates/sim/openapi.yaml), with
# schemathesis.
#
# Builds nothing. Needs:
#   - the `dcs` binary at ${CARGO_TARGET_DIR:-<repo>/target}/debug/dcs   (cargo build -p dcs-cli)
#   - schemathesis in <repo>/.venv:
#       python3 -m venv .venv && .venv/bin/pip install -r tests/contract/requirements.txt
#
# Starts `dcs sim` on a free port, takes a token for the demo reseller key, and runs
# schemathesis against <sim>/openapi.yaml: no 5xx, and every answer conforms to the document
# (status code, content type, headers, body schema). Exits non-zero on any failure.
#
# Knobs (environment): CONTRACT_MAX_EXAMPLES (cases per operation and phase, default 40),
# CONTRACT_SEED (schemathesis seed, default 20260101), CONTRACT_WORKERS (default 1: schemathesis 4.32 can trip over its own cache with several),
# CONTRACT_REPORT_DIR (where the JUnit/NDJSON reports go; a temporary folder by default).
# Further arguments go to `st run` (e.g. --include-operation-id listDownlinks to narrow a run).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
DCS="$TARGET/debug/dcs"
ST="$ROOT/.venv/bin/st"
PY="$ROOT/.venv/bin/python"
MAX_EXAMPLES="${CONTRACT_MAX_EXAMPLES:-40}"
SEED="${CONTRACT_SEED:-20260101}"
WORKERS="${CONTRACT_WORKERS:-1}"
AUDIENCE="4dc82561-f65f-523g-dek9-6c79ec314f02"

if [[ ! -x "$DCS" ]]; then
    echo "contract: no dcs binary at $DCS; build it with: cargo build -p dcs-cli" >&2
    exit 2
fi
if [[ ! -x "$ST" || ! -x "$PY" ]]; then
    echo "contract: no schemathesis in $ROOT/.venv; install it with:" >&2
    echo "  python3 -m venv .venv && .venv/bin/pip install -r tests/contract/requirements.txt" >&2
    exit 2
fi

WORK="$(mktemp -d)"
REPORT_DIR="${CONTRACT_REPORT_DIR:-$WORK/report}"
SIM_PID=""
cleanup() {
    if [[ -n "$SIM_PID" ]] && kill -0 "$SIM_PID" 2>/dev/null; then
        kill "$SIM_PID" 2>/dev/null || true
        wait "$SIM_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The simulator prints its URL on the first line of stdout.
"$DCS" sim --port 0 --seed 1 --devices-per-client 200 >"$WORK/sim.out" 2>"$WORK/sim.err" &
SIM_PID=$!
URL=""
for _ in $(seq 1 600); do
    URL="$(head -n 1 "$WORK/sim.out" 2>/dev/null | grep -o 'http://[^ ]*' || true)"
    [[ -n "$URL" ]] && break
    if ! kill -0 "$SIM_PID" 2>/dev/null; then
        echo "contract: the simulator exited before listening:" >&2
        cat "$WORK/sim.err" >&2
        exit 1
    fi
    sleep 0.1
done
if [[ -z "$URL" ]]; then
    echo "contract: the simulator printed no URL within 60 s" >&2
    exit 1
fi
echo "contract: simulator at $URL (pid $SIM_PID)"

# A token for the demo reseller key (valid one hour: enough for the whole run).
KEY_JSON="$("$DCS" sim demo-key --seed 1 --json)"
TOKEN_BODY="$(KEY_JSON="$KEY_JSON" AUDIENCE="$AUDIENCE" "$PY" -c '
import json, os
k = json.loads(os.environ["KEY_JSON"])
print(json.dumps({"grant_type": "client_credentials", "audience": os.environ["AUDIENCE"],
                  "client_id": k["clientId"], "client_secret": k["clientSecret"]}))')"
TOKEN="$(TOKEN_BODY="$TOKEN_BODY" URL="$URL" "$PY" -c '
import json, os, urllib.request
req = urllib.request.Request(os.environ["URL"] + "/api/v3/idp/oidc/token",
                             data=os.environ["TOKEN_BODY"].encode(),
                             headers={"Content-Type": "application/json"}, method="POST")
with urllib.request.urlopen(req, timeout=10) as res:
    print(json.load(res)["access_token"])')"

# The beta API wants its vendor media types named in Accept (A-48, A-52, A-55); one Accept
# listing all of them lets the generated requests get past that check on every operation.
ACCEPT="application/json, application/vnd.service.device.v1.response+json, application/vnd.service.actuator.v1.response+json, */*"

START=$(date +%s)
set +e
PYTHONPATH="$ROOT/tests/contract${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=contract_hooks \
"$ST" --config-file "$ROOT/tests/contract/schemathesis.toml" run "$URL/openapi.yaml" \
    --url "$URL" \
    --header "Authorization: Bearer $TOKEN" \
    --header "Accept: $ACCEPT" \
    --exclude-tag simulator \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing,stateful \
    --max-examples "$MAX_EXAMPLES" \
    --seed "$SEED" \
    --workers "$WORKERS" \
    --generation-database none \
    --max-redirects 0 \
    --request-timeout 20 \
    --max-failures 50 \
    --no-color \
    --report junit,ndjson --report-dir "$REPORT_DIR" \
    "$@" \
    2>&1 | tee "$WORK/st.out"
STATUS=${PIPESTATUS[0]}
set -e
ELAPSED=$(( $(date +%s) - START ))

# The total of generated cases, from schemathesis's summary ("Test cases:" then "N generated, ...").
TOTAL="$(grep -A 1 '^Test cases:' "$WORK/st.out" | grep -Eo '[0-9]+ generated' | grep -Eo '[0-9]+' | tail -n 1 || true)"
echo "contract: ${TOTAL:-?} generated test cases in ${ELAPSED}s (max ${MAX_EXAMPLES} per operation and phase, seed ${SEED})"
if [[ "$STATUS" -ne 0 ]]; then
    echo "contract: FAILED (schemathesis exit status $STATUS)" >&2
    exit "$STATUS"
fi
if [[ -z "$TOTAL" || "$TOTAL" -lt 1000 ]]; then
    echo "contract: FAILED: fewer than 1000 generated cases (${TOTAL:-none found})" >&2
    exit 1
fi
echo "contract: OK"
