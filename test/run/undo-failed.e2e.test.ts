/**
 * Issue 26, the blocker: a stopWrites whose undo fails after a later step failed leaves the
 * application down. The run's summary must say so (and what to do), and `syncbook status` must
 * say writes are still stopped, not "not stopped by the run (or undone)".
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import type { Status } from "../../src/run/status.js";
import { cli, READY, runbookFor, sim, START, STOP, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const stop = (undoExit: number): string =>
  `  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: shell, with: { command: [node, -e, "process.exit(${undoExit})"] } } } }\n`;
const FAIL = `  - { id: boom, hook: { use: shell, with: { command: [node, -e, "process.exit(1)"] } } }\n`;

describe("a stopWrites whose undo fails", () => {
  it("the run's summary and status both say writes are still stopped", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + stop(3) + FAIL));
    const r = await cli(["run", file, "--yes"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.all).toContain("undo hook shell failed");
    expect(r.all).toContain("✖ writes are STILL STOPPED: the undo of step 3 stop-writes (shell) did not succeed");
    expect(r.all).toContain("do by hand what that undo does");
    // the simulated application really is still stopped
    expect(s.control.state().writes.enabled).toBe(false);
    const text = await cli(["status", file], { cwd: dir });
    expect(text.stdout).toContain("writes are STILL STOPPED: the undo of step 3 stop-writes did not succeed");
    expect(text.stdout).not.toContain("not stopped by the run");
    const json = await cli(["status", file, "--json"], { cwd: dir });
    const st = JSON.parse(json.stdout) as Status;
    expect(st.journal.writesUndoFailed).toEqual({ step: 3, id: "stop-writes" });
  });

  it("an undo that succeeds: no alarm, and status says writes are not stopped", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + FAIL));
    const r = await cli(["run", file, "--yes"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.all).not.toContain("STILL STOPPED");
    expect(s.control.state().writes.enabled).toBe(true);
    const text = await cli(["status", file], { cwd: dir });
    expect(text.stdout).toContain("writes: not stopped by the run (or undone)");
    expect(text.stdout).not.toContain("STILL STOPPED");
  });
});
