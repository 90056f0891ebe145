/**
 * Issue 14, point 5: "Resume re-checks what a re-run invalidated. When `--resume` re-runs
 * `stopWrites` (its undo started), the waits after it (for example "drained", lagBelow 3) ran
 * while writes were back on: run them again. More generally, a step whose precondition a later
 * undo broke is not 'done'."
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli } from "../support/run.js";
import {
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  posts,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("a resume after an undo", () => {
  it("runs the write stop again, and the waits that passed while writes were stopped, before commit", async () => {
    s = await fastSim({ instances: 1, timeScale: 100 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const go = '  - { id: go, confirm: "Commit?" }\n';
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 3s } }",
        steps: START + READY + stopVia(s.verifierUrl) + DRAINED + go + COMMIT + COMMITTED,
      }),
    );
    // no terminal and no --yes: the confirm fails, and the undo turns writes back on
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/undo hook sim-writes ok/);
    expect(s.control.state().writes.enabled).toBe(true);

    const r = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stderr).toContain('resume: step 3 "stop-writes" runs again: its undo ran: writes went back on');
    expect(r.stderr).toContain(
      'resume: step 4 "drained" runs again: it passed while writes were stopped by step 3, whose undo has run since',
    );
    // the order: the write stop, then the drained wait, then the confirm and the commit
    const ran = [...r.all.matchAll(/✔ \[(\d)\/7\]/g)].map((m) => Number(m[1]));
    expect(ran).toEqual([3, 4, 5, 6, 7]);
    expect(r.all).toMatch(/↓ \[1\/7\] .* skipped: done in an earlier run/);
    expect(r.all).toMatch(/↓ \[2\/7\] .* skipped: done in an earlier run/);
    expect(posts(s, "start")).toEqual([1]);
    expect(posts(s, "commit")).toEqual([1]);
    expect(s.control.state().writes.lost).toBe(0);
  });
});
