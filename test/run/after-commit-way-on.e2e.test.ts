/**
 * A run that fails after its commit names the way on, as `status` does: an adversarial run saw a
 * verify refused after the reversed sync's commit end with no command at all (the run's end offered
 * `--resume` only while not committed). `--resume` runs the failed step again. The built CLI
 * against the simulator over loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import {
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  failingHook,
  READY,
  START,
  STOP,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("a run that fails after its commit", () => {
  it("ends with the --resume that runs the failed step again; it does", async () => {
    const c = await cliCutover(made, [], "");
    writeFileSync(
      c.file,
      readFileSync(c.file, "utf8") +
        START +
        READY +
        STOP +
        DRAINED +
        COMMIT +
        COMMITTED +
        failingHook(c.dir, "after", 1),
    );
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all, first.all).toMatch(/step after failed/);
    expect(first.stderr, first.all).toContain(`resume with: syncbook run ${c.file} --journal-dir ${c.jd} --resume`);
    const st = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    expect(st.stdout, st.all).toContain(`syncbook run ${c.file} --journal-dir ${c.jd} --resume`);
    const resumed = await cli(c.args("--resume", "--yes"), { cwd: c.dir });
    expect(resumed.code, `${first.all}\n--- resume\n${resumed.all}`).toBe(0);
    expect(c.s.control.counts().instances[0]?.["POST /api/v1/commit"]).toBe(1);
  }, 120_000);
});
