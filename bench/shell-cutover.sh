#!/usr/bin/env bash
# The cutover most operators script today: a bash loop of curl and jq. Used by
# bench/rehearsal-vs-shell.mjs as the baseline for syncbook's reaction time and CPU.
#
#   INSTANCES="http://127.0.0.1:27182 http://127.0.0.1:27183" \
#   CONTROL=http://127.0.0.1:27182 POLL=1 START_BODY='{"source":"cluster0","destination":"cluster1"}' \
#   bash bench/shell-cutover.sh
#
# start on every instance; poll progress until every instance is RUNNING with canCommit;
# POST writes off (the simulator's source application: $CONTROL/sim/writes); commit on every
# instance; poll until every instance is COMMITTED. Prints `RESULT {json}` last: the reaction
# times (the answer that completed a condition → the next request sent) in ms.
# Deliberately what a careful operator writes: set -euo pipefail, success checks, timeouts.
set -euo pipefail

: "${INSTANCES:?space-separated instance URLs}"
: "${CONTROL:?URL serving the simulator control API}"
POLL="${POLL:-1}"
START_BODY="${START_BODY:-{\"source\":\"cluster0\",\"destination\":\"cluster1\"\}}"
DEADLINE=$(( $(date +%s) + ${TIMEOUT:-600} ))

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

post() { # url body
  local out
  out=$(curl -sS --max-time 10 -X POST -H 'Content-Type: application/json' -d "$2" "$1")
  if [ "$(jq -r '.success' <<<"$out")" != "true" ]; then
    echo "POST $1 failed: $out" >&2
    exit 1
  fi
}

# all_instances JQ_CONDITION: polls every instance once; sets LAST_ANSWER_MS to the time the
# last answer arrived; returns 0 when the condition holds on every instance.
all_instances() {
  local ok=0 url out
  for url in $INSTANCES; do
    out=$(curl -sS --max-time 10 "$url/api/v1/progress" || true)
    LAST_ANSWER_MS=$(now_ms)
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

T0=$(now_ms)
for url in $INSTANCES; do post "$url/api/v1/start" "$START_BODY"; done

wait_for '.progress.state == "RUNNING" and .progress.canCommit == true'
MET1=$LAST_ANSWER_MS
SENT1=$(now_ms)
post "$CONTROL/sim/writes" '{"enabled":false}'

# commit blocks until every instance has it (service facts): a sequential loop would wait forever
# on the first instance, so the requests go out at once and the loop waits for all of them
pids=()
for url in $INSTANCES; do post "$url/api/v1/commit" '{}' & pids+=("$!"); done
for p in "${pids[@]}"; do wait "$p"; done
wait_for '.progress.state == "COMMITTED"'
T1=$(now_ms)

echo "RESULT {\"reactionMs\":$((SENT1 - MET1)),\"wallMs\":$((T1 - T0))}"
