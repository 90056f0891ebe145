/**
 * Issue 30, "Smaller": "a full journal disk skips the undo without saying the application is
 * still stopped" (and the undo's `hook.started` is not written though the undo runs).
 *
 * The journal fills up during the wait after stopWrites: a file size limit (`ulimit -f`, in KiB)
 * on the shell that starts the CLI makes its writes fail (EFBIG; Node ignores SIGXFSZ), as a full
 * disk (ENOSPC) does, at a point set by the journal's size and not by timing. The undo must still
 * run and be shown, and the output must say where writes are and what to do: the journal cannot
 * record the undo, so it is marked untrusted before the undo runs (issue 42: its witness emptied,
 * which needs no disk space), `--resume` refuses it, and every line says the same way on.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { CLI, cli, outputOf, posts, runbookFor, sim, START, tempDir, type CliResult } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const READY = "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n  - { id: committed, waitFor: { state: COMMITTED } }\n";
const stop = (undoUrl?: string): string =>
  `  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true${undoUrl ? `, url: "${undoUrl}"` : ""} } } } }\n`;

/** The CLI under a file size limit of `kib` KiB (every file it writes: here only the journal grows). */
function cliWithFileLimit(args: string[], cwd: string, kib: number): Promise<CliResult> {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const child = spawn("bash", ["-c", `ulimit -f ${kib} && exec ${quoted}`], {
    cwd,
    env: { ...process.env, CI: "1", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return outputOf(child);
}

describe("the journal's disk fills up after stopWrites", () => {
  it("the undo runs and is shown; the output says writes are back on, that the journal does not know it, and to run again with --from (which then cuts over once)", async () => {
    s = await sim();
    // never ready: the wait polls, and its samples fill the journal
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, runbookFor(s, START + stop() + READY + COMMIT));
    const r = await cliWithFileLimit(["run", file, "--renderer", "simple"], dir, 48);
    expect(r.code, r.all).toBe(1);
    expect(r.stderr).toMatch(/the journal could not be written \(cannot write the journal .*: (EFBIG|ENOSPC)\)/);
    // the undo is shown, though the journal could not take its lines
    expect(r.all).toMatch(/undo hook sim-writes started \(stop-writes\)/);
    expect(r.all).toMatch(/undo hook sim-writes ok/);
    expect(r.stderr).toMatch(
      /writes are back on: the undo of step 2 "stop-writes" ran, but the journal could not record it and was marked untrusted first \(--resume refuses it\)/,
    );
    expect(r.stderr).toMatch(/hint: Free disk space, .*then run again with --from stop-writes \(not --resume\)/);
    // the command that shows the fleet names the runbook (a previous review: "(syncbook status)")
    expect(r.stderr).toContain(`check the application's writes and the fleet (syncbook status ${file}), then run`);
    expect(r.stderr).toContain(`run again with: syncbook run ${file} --from stop-writes (not --resume)`);
    // one way on: no line of the output offers --resume (issue 42: "every hint says the same thing")
    expect(r.all).not.toMatch(/resume with:|then run again with --resume|then --resume/);
    expect(s.control.state().writes.enabled).toBe(true);
    expect(posts(s, "commit")).toEqual([0]);

    // the journal was marked untrusted (its witness emptied, which needs no disk space): --resume refuses it, saying the same
    const resumed = await cli(["run", file, "--resume", "--renderer", "simple"], { cwd: dir });
    expect(resumed.code, resumed.all).toBe(2);
    expect(resumed.stderr).toMatch(/its own run marked it untrusted \(its witness .* is empty\)/);
    expect(resumed.stderr).toContain(`then run again with: syncbook run ${file} --from stop-writes`);
    // status says what --resume would, with the same commands
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(
      `(syncbook status ${file}), then run again with: syncbook run ${file} --from stop-writes`,
    );
    expect(posts(s, "commit")).toEqual([0]);

    // the way on it names: writes are stopped again before commit, and nothing is lost; taken in
    // two runs (the first stopped by --to), the second is not refused by the journal marked
    // untrusted, now an earlier one of the folder: it is read as it is (src/run/earlier.ts
    // `readFolderJournals`: what it records of commands is whole)
    s.control.clearFaults();
    const part = await cli(["run", file, "--from", "stop-writes", "--to", "stop-writes", "--renderer", "simple"], {
      cwd: dir,
    });
    expect(part.code, part.all).toBe(0);
    const again = await cli(["run", file, "--from", "stop-writes", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(again.code, again.all).toBe(0);
    expect(posts(s, "start")).toEqual([1]);
    expect(posts(s, "commit")).toEqual([1]);
    expect(s.control.state().writes.lost).toBe(0);
  }, 90_000);

  it("an undo that fails as well: the output says writes are STILL STOPPED, to turn them on by hand", async () => {
    s = await sim();
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    // the undo's control address answers nothing (port 9, discard: nothing listens there)
    writeFileSync(file, runbookFor(s, START + stop("http://127.0.0.1:9") + READY + COMMIT));
    const r = await cliWithFileLimit(["run", file, "--renderer", "simple"], dir, 48);
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(/undo hook sim-writes started \(stop-writes\)/);
    expect(r.stderr).toMatch(
      /application writes may be STILL STOPPED, or partly back on: the undo of step 2 "stop-writes" failed, but the journal could not record it and was marked untrusted first/,
    );
    expect(r.stderr).toMatch(
      /hint: Check the application's writers and turn them back on by hand if they are off\. .*--from stop-writes \(not --resume\)/,
    );
    expect(r.all).not.toMatch(/resume with:|then run again with --resume/);
    expect(s.control.state().writes.enabled).toBe(false);
  }, 90_000);
});
