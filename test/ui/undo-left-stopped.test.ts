/**
 * `undoLeftStopped` (src/ui/format.ts): the one reader of a write stop left stopped, which the run's
 * summary (src/ui/model.ts) and report.html (src/report/html.ts) both ask. An adversarial run: a
 * `--keep-hooks` rehearsal whose own stop hook had no undo left the real application's writers
 * stopped, and said only "writes stopped … (still stopped)".
 */
import { describe, expect, it } from "vitest";
import { undoLeftStopped, writesStillStopped, type HookCallSeen } from "../../src/ui/format.js";

const steps = [
  { index: 0, id: "start", kind: "start" },
  { index: 2, id: "stop-writes", kind: "stopWrites" },
];
const ask = (
  calls: HookCallSeen[],
  o: Partial<{ rehearsal: boolean; committed: boolean; writesOnSeen: boolean }> = {},
): ReturnType<typeof undoLeftStopped> =>
  undoLeftStopped(steps, (i) => (i === 2 ? calls : []), {
    rehearsal: false,
    committed: false,
    writesOnSeen: false,
    ...o,
  });

const stop = (use: string, ok: boolean | undefined = true): HookCallSeen => ({ undo: false, use, ok });
const undo = (use: string, ok: boolean, more: Partial<HookCallSeen> = {}): HookCallSeen => ({
  undo: true,
  use,
  ok,
  ...more,
});

describe("undoLeftStopped", () => {
  it("a failed undo: its step, its hook, its error and command; the stop's own failure said; none once committed", () => {
    expect(ask([stop("shell"), undo("shell", false, { error: "exited 3", command: "curl x" })])).toEqual({
      number: 3,
      id: "stop-writes",
      use: "shell",
      error: "exited 3",
      command: "curl x",
    });
    expect(ask([stop("shell", false), undo("shell", false)])).toEqual({
      number: 3,
      id: "stop-writes",
      use: "shell",
      stopFailed: true,
    });
    expect(ask([stop("shell"), undo("shell", false)], { rehearsal: true })).toMatchObject({ rehearsal: true });
    expect(ask([stop("shell"), undo("shell", false)], { committed: true })).toBeUndefined();
    // the last undo decides: one that failed, then succeeded, left nothing stopped
    expect(ask([stop("shell"), undo("shell", false), undo("shell", true)])).toBeUndefined();
  });

  it("a real run's stop not undone is no alarm here (its window and --abort say it): only a failed undo is", () => {
    expect(ask([stop("shell")])).toBeUndefined();
    expect(ask([stop("http")], { committed: true })).toBeUndefined();
  });

  it("a rehearsal's own stop hook (--keep-hooks) that no undo and no write-on hook followed: still stopped, committed or not", () => {
    const left = { number: 3, id: "stop-writes", use: "http", rehearsal: true, undoNotRun: true };
    expect(ask([stop("http")], { rehearsal: true })).toEqual(left);
    expect(ask([stop("http")], { rehearsal: true, committed: true })).toEqual(left);
    expect(ask([stop("http", false)], { rehearsal: true })).toEqual({ ...left, stopFailed: true });
    // an undo that succeeded after it, or a write-on hook: nothing left stopped
    expect(ask([stop("http"), undo("http", true)], { rehearsal: true })).toBeUndefined();
    expect(ask([stop("http")], { rehearsal: true, writesOnSeen: true })).toBeUndefined();
    // an undo that succeeded before the last stop (stopped again after it) undid the earlier one only
    expect(ask([stop("http"), undo("http", true), stop("http")], { rehearsal: true })).toEqual(left);
    // the simulator's switch: stopped with the rehearsal, nothing real to turn back on
    expect(ask([stop("sim-writes")], { rehearsal: true })).toBeUndefined();
    expect(ask([], { rehearsal: true })).toBeUndefined();
  });

  it("its words: the rehearsal's own hook, nothing undid it, what to do by hand; may be stopped when the hook failed", () => {
    const w = writesStillStopped({ number: 3, id: "stop-writes", use: "http", rehearsal: true, undoNotRun: true });
    expect(w.headline).toBe(
      "writes are STILL STOPPED: the rehearsal ran the runbook's own stop hook of step 3 stop-writes (http, --keep-hooks) and nothing turned the writers it stopped back on",
    );
    expect(w.undo).toEqual([
      "no undo of it ran (the runbook gives it none, a commit kept it off, or the rehearsal was cut short): see the runbook's `undo:` of step 3 stop-writes",
    ]);
    expect(w.advice).toBe(
      "the rehearsal's commands went to its simulator, not to the real fleet: turn the application's writers back on by hand, then check that the application writes again",
    );
    expect(
      writesStillStopped({ number: 3, id: "s", rehearsal: true, undoNotRun: true, stopFailed: true }).headline,
    ).toBe(
      "writes may be stopped: the rehearsal ran the runbook's own stop hook of step 3 s (--keep-hooks), which failed part-way (it may have stopped some writers), and nothing turned the writers it stopped back on",
    );
  });
});
