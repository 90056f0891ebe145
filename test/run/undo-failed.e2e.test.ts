/**
 * Issue 26, the blocker: a stopWrites whose undo fails after a later step failed leaves the
 * application down. The run's summary must say so (and what to do), and `syncbook status` must
 * say writes are still stopped, not "not stopped by the run (or undone)".
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
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
/** An http undo to a port nothing listens on, with a secret header: the undo fails; its command is shown, redacted. */
const HTTP_UNDO = `  - id: stop-writes
    stopWrites:
      use: sim-writes
      undo: { use: http, with: { method: PUT, url: "http://127.0.0.1:9/flags/writes?key=\${env.FLAG_KEY}", headers: { Authorization: "Bearer \${env.FLAG_KEY}" }, body: { enabled: true }, timeout: 2s } }
`;
const SECRET = "s3cret-flag-key-0427";
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
    expect(r.all).toContain("do by hand what it does");
    // the simulated application really is still stopped
    expect(s.control.state().writes.enabled).toBe(false);
    const text = await cli(["status", file], { cwd: dir });
    expect(text.stdout).toContain("writes are STILL STOPPED: the undo of step 3 stop-writes (shell) did not succeed");
    expect(text.stdout).not.toContain("not stopped by the run");
    const json = await cli(["status", file, "--json"], { cwd: dir });
    const st = JSON.parse(json.stdout) as Status;
    expect(st.journal.writesUndoFailed).toEqual({
      step: 3,
      id: "stop-writes",
      use: "shell",
      command: `cd ${dir} && node -e 'process.exit(3)'`,
    });
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

  // issue 39, point 1: what the undo does, as a command to paste, and --abort offered before --resume
  it("the run, status and the report show the undo's call as a command, and offer --abort first, then --resume", async () => {
    s = await sim();
    const dir = tempDir();
    const env = { FLAG_KEY: SECRET };
    const file = writeRunbook(dir, runbookFor(s, START + READY + HTTP_UNDO + FAIL));
    const command = `curl -sS -X PUT 'http://127.0.0.1:9/flags/writes?***' -H 'Authorization: ***' -H 'content-type: application/json' --data-raw '{"enabled":true}'`;
    const r = await cli(["run", file, "--yes", "--report", join(dir, "out")], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.all).not.toContain(SECRET);
    expect(r.all).toContain(command);
    const abort = r.all.indexOf(`syncbook run ${file} --abort`);
    const resume = r.all.indexOf(`syncbook run ${file} --resume`);
    expect(abort).toBeGreaterThan(0);
    expect(resume).toBeGreaterThan(abort);
    expect(r.all).toContain("retries the undos still owed, last first (step 3 stop-writes: turns writes back on)");
    expect(r.all).toContain("step 3 stop-writes runs again (writes stay stopped), then step 4 boom and on");
    expect(r.all).not.toContain("resume with:");

    const st = await cli(["status", file], { cwd: dir, env });
    expect(st.stdout).not.toContain(SECRET);
    expect(st.stdout).toContain(command);
    expect(st.stdout.indexOf("--abort")).toBeGreaterThan(0);
    expect(st.stdout.indexOf("--resume\n")).toBeGreaterThan(st.stdout.indexOf("--abort"));

    const html = readFileSync(join(dir, "out", "report.html"), "utf8");
    expect(html).not.toContain(SECRET);
    expect(html).toContain("writes are STILL STOPPED");
    expect(html).toContain(command.replace(/'/g, "&#39;").replace(/"/g, "&quot;"));
    expect(html).toMatch(/--abort[\s\S]*--resume/);

    // --abort retries the undo; it fails again: the verdict once, and the way on again
    const a = await cli(["run", file, "--abort"], { cwd: dir, env });
    expect(a.code).toBe(1);
    expect(a.all.split("1 of 1 undo(s) failed").length - 1).toBe(1);
    expect(a.all).toContain(command);
    expect(a.all).toContain(`syncbook run ${file} --abort`);
    expect(a.all).not.toContain(SECRET);
  });

  // issue 39, point 8: a stop hook that failed part-way and whose undo failed: writes MAY be stopped, not surely
  it("the stop hook itself failed and its undo too: the run, status and the report say writes may be stopped", async () => {
    s = await sim();
    const dir = tempDir();
    const failingStop = `  - { id: stop-writes, stopWrites: { use: shell, with: { command: [node, -e, "process.exit(1)"] }, undo: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } } }\n`;
    const file = writeRunbook(dir, runbookFor(s, START + READY + failingStop));
    const r = await cli(["run", file, "--yes", "--report", join(dir, "out")], { cwd: dir });
    expect(r.code).toBe(1);
    const said =
      "writes may be stopped: the stop hook of step 3 stop-writes failed part-way (it may have stopped some writers), and its undo (shell) did not succeed";
    expect(r.all).toContain(said);
    expect(r.all).not.toContain("STILL STOPPED");
    expect(r.all).toContain(`syncbook run ${file} --abort`);
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(said);
    expect(st.stdout).not.toContain("writes: not stopped by the run");
    expect(readFileSync(join(dir, "out", "report.html"), "utf8")).toContain("writes may be stopped: the stop hook");
  });

  // issue 39, point 8: one step number for one step
  it("--resume after it names the step it starts at (the write stop that runs again), then where the run stopped", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + stop(3) + FAIL));
    expect((await cli(["run", file, "--yes"], { cwd: dir })).code).toBe(1);
    const r = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.all).toContain(
      'resume: continuing at step 3/4 "stop-writes" (it runs again), then step 4/4 "boom", where the cutover stopped',
    );
    expect(r.all).toMatch(/▶ \[3\/4\] stopWrites/);
  });
});
