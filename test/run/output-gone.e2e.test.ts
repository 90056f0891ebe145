/**
 * A cutover goes on when its output goes away. An operator's `syncbook run x.yaml 2>&1 | tee
 * cutover.log`, then Ctrl-C in the write-stop window: the same Ctrl-C stops `tee`, and the
 * runner's first line after it ("SIGINT: stopping cleanly") met a closed pipe (EPIPE): the runner
 * crashed (exit 1) with writes left stopped, no undo, and no end in its journal (a trial of
 * 2026-12-01). The built CLI against the simulator: its stdout and stderr pipes are closed before
 * the Ctrl-C, as `tee` leaves them.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { CLI, READY, runbookFor, sim, START, startCli, STOP, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** A drained wait that holds only once lag falls under 3 s: the test keeps it from holding. */
const DRAINED = "  - { id: drained, waitFor: { canCommit: true, lagBelow: 3, timeout: 60s } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n";

function journalTypes(dir: string): { type: string; outcome?: string }[] {
  const folder = join(dir, ".syncbook", "e2e");
  const file = readdirSync(folder).find((f) => f.endsWith(".jsonl"))!;
  return readFileSync(join(folder, file), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; outcome?: string });
}

describe("the runner's output goes away (a `| tee` stopped by the same Ctrl-C)", () => {
  it.each(["simple", "json"])(
    "renderer %s: Ctrl-C in the write-stop window still stops cleanly: the undo turns writes back on, the journal records the end, exit 130",
    async (renderer) => {
      s = await sim();
      const dir = tempDir();
      const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + DRAINED + COMMIT));
      const run = startCli(["run", file, "--renderer", renderer, "--yes"], { cwd: dir });
      const exited = new Promise<number | null>((resolve) => run.child.on("exit", (code) => resolve(code)));
      // writes stopped (the json renderer's event, the simple one's line)
      await run.waitFor(/"window\.opened"|⏱ writes stopped/);
      // the drained wait cannot hold while lag stays at 30 s
      s.control.addFault("lag-floor=30");
      await new Promise((r) => setTimeout(r, 300));
      expect(s.control.state().writes.enabled).toBe(false);
      run.child.stdout!.destroy();
      run.child.stderr!.destroy();
      await new Promise((r) => setTimeout(r, 200));
      run.child.kill("SIGINT");
      expect(await exited).toBe(130);
      const types = journalTypes(dir);
      expect(types.find((e) => e.type === "run.finished")).toMatchObject({ outcome: "interrupted" });
      expect(s.control.state().writes.enabled, "the stop's undo ran: writes are back on").toBe(true);
      expect(s.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0)).toEqual([0]);
    },
    30_000,
  );

  it("no Ctrl-C: the pipes close in the window and the cutover goes on to its commit, exit 0, its end journaled", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + DRAINED + COMMIT));
    const run = startCli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    const exited = new Promise<number | null>((resolve) => run.child.on("exit", (code) => resolve(code)));
    await run.waitFor(/⏱ writes stopped/);
    s.control.addFault("lag-floor=30");
    await new Promise((r) => setTimeout(r, 300));
    run.child.stdout!.destroy();
    run.child.stderr!.destroy();
    // the wait's lines meet the closed pipes; then lag falls and the wait holds
    await new Promise((r) => setTimeout(r, 500));
    s.control.clearFaults();
    expect(await exited).toBe(0);
    expect(journalTypes(dir).find((e) => e.type === "run.finished")).toMatchObject({ outcome: "ok" });
    expect(s.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0)).toEqual([1]);
  }, 30_000);

  // a log on a full disk (`syncbook run x.yaml > cutover.log 2>&1`): every write fails with ENOSPC
  // from the first line on, not EPIPE; /dev/full is Linux's device for it
  it.skipIf(!existsSync("/dev/full"))(
    "stdout and stderr on a full disk (ENOSPC from the first line): the cutover runs to its commit, exit 0, its end journaled",
    async () => {
      s = await sim();
      const dir = tempDir();
      const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + DRAINED + COMMIT));
      const full = openSync("/dev/full", "w");
      const child = spawn(process.execPath, [CLI, "run", file, "--renderer", "simple", "--yes"], {
        cwd: dir,
        stdio: ["ignore", full, full],
      });
      closeSync(full);
      // a failed or timed-out test leaves no runner behind
      onTestFinished(() => void child.kill("SIGKILL"));
      const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
      expect(code).toBe(0);
      expect(journalTypes(dir).find((e) => e.type === "run.finished")).toMatchObject({ outcome: "ok" });
      expect(s.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0)).toEqual([1]);
    },
    30_000,
  );
});
