#!/usr/bin/env bash
# The write-stop window as most operators script it today: a bash loop of curl and jq with
# `sleep 1`. Used by bench/downtime.mjs as the baseline for the runner's share of the window.
#
#   INSTANCES="http://127.0.0.1:27182 http://127.0.0.1:27183" CONTROL=http://127.0.0.1:27182 POLL=1 \
#   bash bench/shell-window.sh
#
# The sync is already in change event application. Once every instance says canCommit, writes off (the simulator's source
# application: $CONTROL/sim/writes); poll every instance until canCommit and lag below 5 s;
# commit on every instance at once (commit blocks until every instance has it: a sequential loop
# would wait forever on the first); poll the first process until it reports canWrite; then tell the
# application it may write (here: GET $CONTROL/sim/state, the end marker the bench looks for).
# Deliberately what a careful operator writes: set -euo pipefail, success checks, timeouts.
set -euo pipefail

: "${INSTANCES:?space-separated instance URLs}"
: "${CONTROL:?URL serving the simulator control API}"
POLL="${POLL:-1}"
DEADLINE=$(( $(date +%s) + ${TIMEOUT:-600} ))

post() { # url body
  local out
  out=$(curl -sS --max-time 60 -X POST -H 'Content-Type: application/json' -d "$2" "$1")
  if [ "$(jq -r '.success' <<<"$out")" != "true" ]; then
    echo "POST $1 failed: $out" >&2
    exit 1
  fi
}

# all_instances JQ_CONDITION: polls every instance once; 0 when the condition holds on every one.
all_instances() {
  local ok=0 url out
  for url in $INSTANCES; do
    out=$(curl -sS --max-time 10 "$url/api/v1/progress" || true)
    if ! jq -e "$1" >/dev/null 2>&1 <<<"$out"; then ok=1; fi
  done
  return $ok
}

wait_for() { # JQ_CONDITION
  while ! all_instances "$1"; do
    if [ "$(date +%s)" -gt "$DEADLINE" ]; then echo "timed out waiting for $1" >&2; exit 1; fi
    sleep "$POLL"
  done
}

wait_for '.progress.state == "RUNNING" and .progress.canCommit == true'
post "$CONTROL/sim/writes" '{"enabled":false}'
wait_for '.progress.state == "RUNNING" and .progress.canCommit == true and .progress.lagTimeSeconds < 5'
pids=()
for url in $INSTANCES; do post "$url/api/v1/commit" '{}' & pids+=("$!"); done
for p in "${pids[@]}"; do wait "$p"; done
# canWrite on the first process only (mongodb/docs reference/cutover-process.txt: "The canWrite
# status of any subsequent mongosync processes is not valid"): the first URL of INSTANCES
INSTANCES="${INSTANCES%% *}" wait_for '.progress.canWrite == true'
curl -sS --max-time 10 "$CONTROL/sim/state" >/dev/null
