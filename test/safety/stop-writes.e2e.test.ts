/**
 * Issue 12, item 3: "A `stopWrites` step that turns writes on passes the interlock. `sim-writes`
 * with `enabled: true` under `stopWrites` lints clean, the interlock says 'writes stopped', and
 * 14,124 writes were lost (the rehearsal hides it by swapping the hook). Lint the built-in write
 * hooks' options for the direction they are used in; in rehearsals with `--keep-hooks`, verify
 * the simulated application actually stopped writing before the interlock passes."
 * Spec, commit: "Preconditions: application writes to the source are stopped (… writes during
 * commit may lose data)".
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { lineOf, lintCalls, runbook } from "../support/plugin.js";
import {
  cli,
  COMMIT,
  decisions,
  posts,
  READY,
  runbookFor,
  runYaml,
  sim,
  START,
  tempDir as runDir,
  writeRunbook,
} from "../support/run.js";

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

describe("lint: a write hook is held to the direction it is used in", () => {
  it("sim-writes turning writes on under stopWrites is an error at its options (it linted clean)", async () => {
    const text = runbook("  - stopWrites: { use: sim-writes, with: { enabled: true } }\n");
    const d = await lintCalls(text);
    expect(d.map((x) => x.at)).toEqual([`plugin-options@${lineOf(text, "enabled: true")}`]);
    expect(d[0]!.severity).toBe("error");
    expect(d[0]!.message).toMatch(/turns application writes on, under `stopWrites`/);
  });

  it("its undo turning writes off is an error too (a failed cutover would leave the application unable to write)", async () => {
    const text = runbook(
      "  - stopWrites:\n      use: sim-writes\n      undo: { use: sim-writes, with: { enabled: false } }\n",
    );
    const d = await lintCalls(text);
    expect(d.map((x) => x.at)).toEqual([`plugin-options@${lineOf(text, "enabled: false")}`]);
    expect(d[0]!.message).toMatch(/turns application writes off, as the undo of `stopWrites`/);
  });

  it("the right way round (the default stops writes, the undo starts them) and a plain hook step: no findings", async () => {
    const text = runbook(
      "  - stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } }\n  - hook: { use: sim-writes, with: { enabled: true } }\n",
    );
    expect(await lintCalls(text)).toEqual([]);
  });

  it("options that come from ${…} are judged at run time, not guessed at lint", async () => {
    const text = runbook('  - stopWrites: { use: sim-writes, with: { enabled: "${env.ON}" } }\n');
    expect((await lintCalls(text)).filter((d) => /turns application writes/.test(d.message))).toEqual([]);
  });
});

describe("the runner: the interlock passes only when writes are stopped", () => {
  it("a stopWrites hook whose options turn writes on is refused before it runs (exit 3), commit never sent", async () => {
    const s = await sim();
    sims.push(s);
    const steps = `${START}${READY}  - { id: stop-writes, stopWrites: { use: sim-writes, with: { enabled: true } } }\n${COMMIT}`;
    const { result, events } = await runYaml(runbookFor(s, steps));
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(writes-stopped\): hook sim-writes .* turns application writes on/);
    expect(decisions(events).some((d) => d.check === "writes-stopped" && d.ok)).toBe(false);
    expect(s.control.counts().instances[0]!["POST /sim/writes"] ?? 0).toBe(0);
    expect(posts(s, "commit")).toEqual([0]);
  });

  it("a rehearsal: a hook that succeeds without stopping the writes fails the step, and commit is never sent", async () => {
    const s = await sim();
    sims.push(s);
    const steps = `${START}${READY}  - { id: stop-writes, stopWrites: { use: shell, with: { command: [node, -e, ""] } } }\n${COMMIT}`;
    const probe = () => {
      const w = s.control.state().writes;
      return Promise.resolve({ stopped: !w.enabled, detail: `${w.ratePerSecond}/s` });
    };
    const { result } = await runYaml(runbookFor(s, steps), { writesProbe: probe });
    expect(result.exitCode).toBe(1);
    expect(result.failedStep).toBe("stop-writes");
    expect(result.message).toMatch(/hook shell succeeded, but the application still writes/);
    expect(posts(s, "commit")).toEqual([0]);
    expect(s.control.state().writes.lost).toBe(0);
  });
});

describe("syncbook rehearse --keep-hooks (the built CLI)", () => {
  it("the runbook's own stopWrites hook that does not stop the writes: the rehearsal fails at that step, nothing lost", async () => {
    const dir = runDir();
    const file = writeRunbook(
      dir,
      `runbook: 1
name: keep
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: [http://127.0.0.1:27182]
verifier: http://127.0.0.1:27020
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - id: stop-writes
    stopWrites: { use: shell, with: { command: [node, -e, "console.log('pretending')"] }, undo: { use: shell, with: { command: [node, -e, ""] } } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
`,
    );
    const r = await cli(["rehearse", file, "--keep-hooks", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(/hook shell succeeded, but the application still writes \(the simulated application writes/);
    expect(r.all).toMatch(/writes lost: +0/);
    expect(r.all).toMatch(/not committed/);
  });

  it("sim-writes turning writes on under stopWrites: the rehearsal refuses the runbook before anything runs (exit 2)", async () => {
    const dir = runDir();
    const file = writeRunbook(
      dir,
      `runbook: 1
name: on
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: [http://127.0.0.1:27182]
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true } }
  - { id: stop-writes, stopWrites: { use: sim-writes, with: { enabled: true }, undo: { use: sim-writes, with: { enabled: false } } } }
  - { id: commit, commit: {} }
`,
    );
    const r = await cli(["rehearse", file, "--keep-hooks", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.all).toMatch(/turns application writes on, under `stopWrites`/);
    expect(r.all).toMatch(/turns application writes off, as the undo of `stopWrites`/);
  });
});
