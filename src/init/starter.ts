/**
 * The starter runbook `syncbook init` writes: every step of a cutover, each commented with why it
 * is there. A test lints it clean and rehearses it, so the starter never drifts from the format.
 * The service versions it names come from their one home (src/api/versions.ts, `SUPPORT`).
 */
import { SUPPORT } from "../api/versions.js";

export function starterRunbook(name: string, schema = "node_modules/syncbook/schemas/runbook.schema.json"): string {
  return `# yaml-language-server: $schema=${schema}
#
# A cluster-to-cluster sync cutover. Check it:   syncbook lint ${name}.yaml
# Rehearse it against a simulated fleet:        syncbook rehearse ${name}.yaml
# Run it in the maintenance window:             syncbook run ${name}.yaml --step --report out/
runbook: 1
name: ${name}
description: Replica set cluster0 to replica set cluster1.
# The lowest sync service version any instance runs (${SUPPORT.current.version} is the current release; every
# version before ${SUPPORT.oldestSupported.version} is end of life): lint checks start fields and the cutover against it.
serviceVersion: "${SUPPORT.current.version}.0"
# The clusters' server versions: lint checks what the service version supports (from 1.19 a
# destination on server 6.0 is refused).
clusters:
  cluster0: { topology: replicaSet, serverVersion: "7.0" }
  cluster1: { topology: replicaSet, serverVersion: "7.0" }
# One sync service instance per source shard (one for a replica set). The API has no
# authentication: use loopback (an SSH tunnel) or https behind an authenticating proxy.
# With several instances only the first mongosync process's canWrite is valid (the cutover
# page): list the one you start first at the top and mark it, e.g.
#   - { url: http://127.0.0.1:27182, name: shard-a, startedFirst: true }
# Without that mark a canWrite wait is refused, and writes count as back once every instance
# is COMMITTED.
instances:
  - { url: http://127.0.0.1:27182, name: sync0 }
verifier: http://127.0.0.1:27020
vars:
  maxLag: 5
  # Your application's write switch. This default is the simulator's, for rehearsals.
  writeSwitch: http://127.0.0.1:27182/sim/writes
defaults: { pollInterval: 2s, timeout: 30m }
steps:
  - id: start
    start: { source: cluster0, destination: cluster1 }
  - id: ready
    name: Wait until commit is possible and lag is low
    waitFor: { canCommit: true, lagBelow: "\${vars.maxLag}", timeout: 12h }
  - id: check
    name: Start the migration verifier's check (it compares and rechecks while the sync runs)
    startVerification: {}
  - id: stop-writes
    name: Stop application writes (undone automatically if the run fails before commit)
    stopWrites:
      use: http
      with: { url: "\${vars.writeSwitch}", method: POST, body: { enabled: false } }
      undo: { use: http, with: { url: "\${vars.writeSwitch}", method: POST, body: { enabled: true } } }
      # read again right before commit: commit is refused unless the switch still says writes are off
      check: { use: http, with: { url: "\${vars.writeSwitch}", method: GET, expectJson: { writes.enabled: false } } }
  - id: drained
    name: Let the last writes reach the destination
    waitFor: { canCommit: true, lagBelow: 3, timeout: 15m }
  - id: go
    confirm: Commit to cluster1? This is the point of no return.
  - id: commit
    commit: {}
  - id: writable
    name: The destination takes writes (canWrite of the first process, here the only one)
    waitFor: { canWrite: true, timeout: 10m }
  - id: committed
    waitFor: { state: COMMITTED, timeout: 1h }
  - id: verify
    name: Tell the verifier writes are off, then wait for its result (indexes match only once COMMITTED)
    verify: { timeout: 4h }
  - id: announce
    notify: "${name} is committed: point the application at cluster1."
`;
}
