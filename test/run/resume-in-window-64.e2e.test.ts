/**
 * A kill -9 inside the write-stop window of a 64-instance fleet, while the runner waits for the
 * first process's canWrite after the commit, then `--resume` (the built CLI against the
 * simulator). The simulator's clock is the test's (time scale 0, moved by hand), so COMMITTING
 * lasts until the test says. The resumed run must not send commit again to any of the 64, must
 * wait for canWrite on the first process (the cutover page: "only check that canWrite is true on
 * the first mongosync process", content/mongosync/current/source/reference/cutover-process.txt),
 * close the window on it, and only then run the write-on hook, once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import type { Simulator } from "../../src/sim/index.js";
import { cli, posts, READY, runbookFor, sim, START, startCli, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const N = 64;
const STOP = "  - { id: stop-writes, stopWrites: { use: sim-writes } }\n";
const DRAINED = "  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n";
const WRITABLE = "  - { id: writable, waitFor: { canWrite: true, timeout: 60s } }\n";
const APP_ON = "  - { id: app-on, hook: { use: sim-writes, with: { enabled: true }, writesOn: true } }\n";

/** Polls `ok` every 20 ms until it holds (the simulator's clock does not move by itself here). */
async function until(ok: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("kill -9 in a 64-instance window, waiting for canWrite; then --resume", () => {
  it("the resumed run sends no commit again, closes the window on the first process's canWrite, then turns writes on once", async () => {
    s = await sim({ instances: N, timeScale: 0 });
    const sim0 = s;
    dir = tempDir();
    const file = writeRunbook(dir, runbookFor(sim0, START + READY + STOP + DRAINED + COMMIT + WRITABLE + APP_ON));
    const run = startCli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    // the sync runs, and reaches change event application with canCommit once its clock moves
    await until(() => posts(sim0, "start").every((n) => n === 1), "start reached every instance");
    sim0.control.advance(60);
    // writes stop: the last writes drain once the clock moves again
    await until(() => !sim0.control.state().writes.enabled, "the write stop");
    sim0.control.advance(5);
    // the commit reaches all 64; COMMITTING lasts, canWrite stays false (the clock is held)
    await until(() => posts(sim0, "commit").every((n) => n === 1), "commit reached every instance");
    await run.waitFor(/writable/);
    await new Promise((r) => setTimeout(r, 300));
    expect(sim0.control.state().instances.every((i) => i.state === "COMMITTING")).toBe(true);
    run.child.kill("SIGKILL");
    const killed = await run.done;
    expect(killed.signal).toBe("SIGKILL");
    expect(sim0.control.state().writes.enabled).toBe(false);

    // COMMITTING is over where it is: canWrite on the first process
    sim0.control.advance(2);
    expect(sim0.control.state().instances[0]!.state).toMatch(/COMMITTING|COMMITTED/);
    const resumed = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(resumed.code, resumed.all).toBe(0);
    // never a second commit, to any of the 64
    expect(posts(sim0, "commit")).toEqual(Array.from({ length: N }, () => 1));
    // the application writes again: the hook ran once, after the window closed on canWrite
    expect(sim0.control.state().writes.enabled).toBe(true);
    // the resume says the dead runner's 64 locks in one line, not 64
    expect(resumed.all).toMatch(
      /fleet: took over the stale locks of 64 instances \(sync\d+ \(http:[^)]*\), .* and 61 more\), all left by one runner: pid \d+ on .*: that process is gone/,
    );
    expect(resumed.all).not.toMatch(/took over the stale lock of instance/);
    // the window closed on the first process's canWrite, then the write-on hook ran, once; the
    // time no runner was alive (the kill) is said as such in the window's shares
    const closed = resumed.all.search(
      /⏱ canWrite on the first process: the destination takes writes; writes were stopped .*no runner/,
    );
    const hook = resumed.all.indexOf("hook sim-writes started (app-on)");
    expect(closed).toBeGreaterThan(-1);
    expect(hook).toBeGreaterThan(closed);
    expect(resumed.all.match(/hook sim-writes started \(app-on\)/g)).toHaveLength(1);
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toMatch(
      /the application writes again since .* \(its writesOn hook\); the destination took writes at .* \(canWrite on the first process\)/,
    );
    expect(st.stdout).toMatch(/^fleet: 64 instances: COMMITTED×64$/m);
  }, 120_000);
});
