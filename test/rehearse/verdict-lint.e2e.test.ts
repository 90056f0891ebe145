/**
 * Issue 39, point 5: verdicts carry what lint knows. A rehearsal's verdict names the lint
 * warnings the runbook carries (a safe rehearsal does not make them go away), says where the
 * simulated fleet differs from the runbook's, and a team can accept one warning in the runbook
 * with its reason (`accept:`), reported wherever the warning would be, so that
 * `--max-warnings 0` stays usable.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";

const RUNBOOK = (source: string, head = "") => `runbook: 1
name: three-for-one
serviceVersion: "1.22.0"
clusters:
  cluster0: ${source}
  cluster1: ${source}
instances:
  - { url: "http://127.0.0.1:27182", name: a }
  - { url: "http://127.0.0.1:27183", name: b }
  - { url: "http://127.0.0.1:27184", name: c }
verifier: http://127.0.0.1:27020
${head}steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: check, startVerification: {} }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
  - { id: verify, verify: {} }
`;
const RS = '{ topology: replicaSet, serverVersion: "7.0" }';
const ACCEPT = `accept:
  - rule: instance-count
    reason: three instances while the source is being sharded
`;

function write(text: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-verdict-"));
  const file = join(dir, "cutover.yaml");
  writeFileSync(file, text);
  return { dir, file };
}

describe("a rehearsal's verdict and lint", () => {
  it("three instances for a replica set: SAFE, with the lint warning named in the verdict", async () => {
    const { dir, file } = write(RUNBOOK(RS));
    const r = await cli(["rehearse", file, "--renderer", "silent"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("rehearsal verdict: SAFE, with 1 lint warning (instance-count) (exit 0)");
    expect(r.stdout).toMatch(/ {2}lint: {10}1 warning\(s\): instance-count at line 7/);
    const lint = await cli(["lint", file, "--max-warnings", "0"], { cwd: dir });
    expect(lint.code).toBe(1);
  }, 60_000);

  // issue 36, point 2: a cutover without verification is never called safe
  it("no verify step: NOT VERIFIED (never SAFE), with lint's commit-without-verify named in the verdict", async () => {
    const text = RUNBOOK('{ topology: sharded, shards: 3, serverVersion: "7.0" }')
      .replace("  - { id: check, startVerification: {} }\n", "")
      .replace("  - { id: verify, verify: {} }\n", "");
    const { dir, file } = write(text);
    const r = await cli(["rehearse", file, "--renderer", "silent"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain(
      "rehearsal verdict: NOT VERIFIED, with 1 lint warning (commit-without-verify) (exit 0: nothing unsafe was seen, and nothing verified the destination: the runbook has no `verify` step)",
    );
    expect(r.stdout).not.toMatch(/verdict: SAFE/);
    expect(r.stdout).toMatch(/ {2}verified: {6}no: the runbook has no `verify` step/);
  }, 60_000);

  it("the warning accepted with a reason: lint --max-warnings 0 passes, and the finding is still shown with the reason", async () => {
    const { dir, file } = write(RUNBOOK(RS, ACCEPT));
    const lint = await cli(["lint", file, "--max-warnings", "0"], { cwd: dir });
    expect(lint.code, lint.all).toBe(0);
    expect(lint.all).toContain(
      "info[instance-count]: Source `cluster0` is a replica set, which one instance syncs, but 3 instances are listed. (accepted in the runbook: three instances while the source is being sharded)",
    );
    const r = await cli(["rehearse", file, "--renderer", "silent"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    // shown where the warning would be (before the run), and in the verdict
    expect(r.stderr).toContain("(accepted in the runbook: three instances while the source is being sharded)");
    expect(r.stdout).toContain("rehearsal verdict: SAFE (exit 0)");
    expect(r.stdout).toContain(
      "lint:          no warnings; 1 accepted: instance-count at line 7: three instances while the source is being sharded",
    );
  }, 60_000);

  it("a sharded cluster without its shard count: the verdict says what the simulator took", async () => {
    const { dir, file } = write(RUNBOOK('{ topology: sharded, serverVersion: "7.0" }'));
    const r = await cli(["rehearse", file, "--renderer", "silent"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain(
      "fleet shape:   cluster0: sharded, its shard count not in the runbook: simulated with 3",
    );
    const given = write(RUNBOOK('{ topology: sharded, shards: 3, serverVersion: "7.0" }'));
    const g = await cli(["rehearse", given.file, "--renderer", "silent"], { cwd: given.dir });
    expect(g.code, g.all).toBe(0);
    expect(g.stdout).not.toContain("fleet shape");
  }, 60_000);
});
