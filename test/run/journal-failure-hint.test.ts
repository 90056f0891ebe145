/**
 * What a run whose journal failed says of writes turned back on by hand (src/run/unwind.ts
 * `writesAfterJournalFailure`, `byHandThenFrom`). Where no undo ran, the journal still says the
 * write stop holds: writes turned back on by hand then make it false, and a later `--resume` would
 * count the stop and commit while writes flow. The hint said only "or turn the application's
 * writes back on by hand"; it now names the one way on after that, a new run from the stop.
 */
import { describe, expect, it } from "vitest";
import { byHandThenFrom, forcedReport, writesAfterJournalFailure } from "../../src/run/unwind.js";
import { UndoStack } from "../../src/plugin/index.js";
import type { PlannedStep } from "../../src/run/plan.js";
import type { RunMemory } from "../../src/steps/index.js";

const step = (index: number, id: string, opensWriteStop: boolean): PlannedStep =>
  ({ index, id, bound: { opensWriteStop } }) as unknown as PlannedStep;
const steps = [step(0, "drained", false), step(1, "stop writes", true), step(2, "commit", false)];
const memory = (m: Partial<RunMemory>): RunMemory => ({ writesStopped: false, commitSent: false, ...m }) as RunMemory;
const notDistrusted = { ok: new Set<number>(), started: new Set<number>(), distrusted: false };

describe("a journal failure with writes stopped and no undo run", () => {
  it("says --resume, and of writes turned on by hand: go on only --from the stop, never --resume", () => {
    const r = writesAfterJournalFailure(
      { message: "journal: ENOSPC" },
      memory({ writesStopped: true }),
      notDistrusted,
      steps,
      "rb.yaml",
      "rb.yaml",
    );
    expect(r.message).toBe(
      "journal: ENOSPC; application writes are STILL STOPPED (no undo ran, and the journal says so)",
    );
    expect(r.hint).toBe(
      "Free disk space, then run again with --resume (the journal says writes are stopped, which is true): syncbook run rb.yaml --resume. If writes cannot wait for that, turn them back on by hand; the journal will still say they are stopped, so go on later only with syncbook run rb.yaml --from 'stop writes' (it stops them again before its commit), never --resume, which would commit while they flow.",
    );
    expect(r.rerunWith).toBeUndefined();
  });

  it("says nothing of writes by hand where none are stopped or the commit was sent", () => {
    for (const m of [memory({}), memory({ writesStopped: true, commitSent: true })]) {
      const r = writesAfterJournalFailure(
        { message: "journal: ENOSPC" },
        m,
        notDistrusted,
        steps,
        "rb.yaml",
        "rb.yaml",
      );
      expect(r.hint).not.toMatch(/by hand/);
      expect(r.hint).toMatch(/run again with --resume/);
    }
  });

  // an outside review: the command lacked the cutover's --var values (the stop then switched off
  // another environment's writes, and the commit went through while the real source wrote:
  // 3,005,067 writes lost), and named the runbook's first write stop, not the one in force
  it("names the run with the cutover's --var values, and the write stop in force", () => {
    const twice = [...steps, step(3, "reverse", false), step(4, "stop again", true), step(5, "commit again", false)];
    const args = [
      { message: "journal: ENOSPC", step: "commit again" },
      memory({ writesStopped: true }),
      notDistrusted,
      twice,
      "rb.yaml",
      "rb.yaml --var sw=real",
    ] as const;
    const byFailure = writesAfterJournalFailure(...args);
    expect(byFailure.hint).toContain("syncbook run rb.yaml --var sw=real --resume.");
    expect(byFailure.hint).toContain("syncbook run rb.yaml --var sw=real --from 'stop again' (it stops them again");
    // the open window's stop, where the run knows it
    expect(writesAfterJournalFailure(...args, { id: "stop writes" }).hint).toContain("--from 'stop writes'");
    // failed at the first commit: the stop before it
    const first = writesAfterJournalFailure(
      { message: "m", step: "commit" },
      memory({ writesStopped: true }),
      notDistrusted,
      twice,
      "rb.yaml",
      "rb.yaml",
    );
    expect(first.hint).toContain("--from 'stop writes'");
  });

  it("a runbook with no step that stops writes still names the flag, never a bare 'by hand'", () => {
    expect(byHandThenFrom("rb.yaml", undefined)).toContain("syncbook run rb.yaml --from <the write stop's step>");
  });
});

describe("an undo that started after the journal failed, the journal not marked untrusted", () => {
  // a second review: the journal failing after the unwind's check, the undo's start went unrecorded,
  // and the hint said "STILL STOPPED (no undo ran)": a --resume then counted the stop
  it("says writes may be back on, never --resume, and the run --from the stop", () => {
    const r = writesAfterJournalFailure(
      { message: "journal: ENOSPC", step: "commit" },
      memory({ writesStopped: true }),
      { ok: new Set([1]), started: new Set([1]), distrusted: false },
      steps,
      "rb.yaml",
      "rb.yaml --var sw=real",
    );
    expect(r.message).toBe(
      'journal: ENOSPC; application writes may be back on: the undo of step 2 "stop writes" started, and the journal could record it neither as done nor as untrusted: it still says writes are stopped',
    );
    expect(r.hint).toContain("Do not --resume from that journal");
    expect(r.hint).toContain(
      "syncbook run rb.yaml --var sw=real --from 'stop writes' (it stops writes again before commit)",
    );
    expect(r.rerunWith).toBe("--from 'stop writes'");
    expect(r.message).not.toContain("STILL STOPPED");
  });
});

describe("forcedReport: what a forced exit left of writes", () => {
  const RUN = { mode: "run" as const, target: "rb.yaml" };
  // an adversarial run: a forced exit after the commit left said nothing of the way on
  it("after the commit: nothing undone, and the --resume that goes on, with the runbook", () => {
    const lines = forcedReport(
      new UndoStack(),
      memory({ commitSent: true, writesStopped: true }),
      new Set(),
      steps,
      RUN,
    );
    expect(lines).toContain(
      "writes: commit was sent, so nothing is undone: writes stay as they are (stopped, if a stopWrites ran). syncbook run rb.yaml --resume goes on with the cutover: it reads the fleet and never sends the commit twice",
    );
  });
  const stopEntry = {
    step: { index: 1, id: "stop writes", kind: "stopWrites", title: "t", raw: {} },
    use: "shell",
    origin: "runbook" as const,
    run: () => Promise.resolve({ ok: true }),
  };
  it("a stop that did not hold (its hook failed), its undo not run: may be stopped, --resume runs the stop again; never 'still stopped'", () => {
    const undo = new UndoStack();
    undo.push(stopEntry as never);
    const lines = forcedReport(undo, memory({ writesStopped: false }), new Set(), steps, RUN);
    expect(lines.join("\n")).toContain(
      'writes may be stopped: the stop of step 2 "stop writes" did not hold (it failed, or its writes were not seen stopped), and its undo did not run.',
    );
    expect(lines.join("\n")).not.toMatch(/still stopped|will still say they are stopped/);
  });
  it("a stop that held, its undo not run: still stopped, and by hand only with --from the stop", () => {
    const undo = new UndoStack();
    undo.push(stopEntry as never);
    const lines = forcedReport(undo, memory({ writesStopped: true }), new Set(), steps, RUN).join("\n");
    expect(lines).toContain('writes are still stopped: the undo of step 2 "stop writes" did not run.');
    expect(lines).toContain("go on later only with syncbook run rb.yaml --from 'stop writes'");
  });
  // the stop's undo ran and failed, then an earlier hook's undo was cut off: it said "writes are
  // stopped (a stopWrites step ran) and no undo of it was pending"
  it("a stop whose undo started and failed, then another undo cut off: may be stopped or partly back on, --resume runs the stop again", () => {
    const undo = new UndoStack();
    const other = { ...stopEntry, step: { ...stopEntry.step, index: 0, id: "drained", kind: "hook" } };
    undo.push(other as never);
    const at = (started: number[], ok: number[]) =>
      forcedReport(undo, memory({ writesStopped: true }), new Set(ok), steps, RUN, new Set(started)).join("\n");
    expect(at([1], [])).toContain(
      'writes may still be stopped, or partly back on: the undo of step 2 "stop writes" failed. Check the application\'s writers, then run syncbook run rb.yaml --abort (it runs that undo again) or syncbook run rb.yaml --resume (it runs the stop again before its commit), or turn them back on by hand',
    );
    expect(at([1], [])).not.toContain("no undo of it was pending");
    // it finished ok: back on; it never started: still stopped by the run, no undo of it pending
    expect(at([1], [1])).toContain('writes are back on: the undo of step 2 "stop writes" finished');
    expect(at([], [])).toContain("no undo of it was pending");
    // another step's undo failing says nothing of the stop
    expect(at([0], [])).toContain("no undo of it was pending");
    // a resume's owed undo of the same stop still waiting: its failure is said, not "still stopped"
    undo.push(stopEntry as never);
    expect(at([1], [])).toContain(
      'writes may still be stopped, or partly back on: the undo of step 2 "stop writes" failed.',
    );
    expect(at([1], [])).not.toContain("writes are still stopped");
    expect(at([], [])).toContain('writes are still stopped: the undo of step 2 "stop writes" did not run.');
  });
  // an outside review: a rehearsal's forced exit named `syncbook run … --resume`, `--abort` and
  // `--from`, which pasted act on the runbook's real fleet (a rehearsal journals nothing)
  it("a rehearsal's: what it says of writes, and the rehearsal again, never a real run's way on", () => {
    const REHEARSE = { ...RUN, mode: "rehearse" as const };
    const undo = new UndoStack();
    undo.push(stopEntry as never);
    const said = [
      forcedReport(new UndoStack(), memory({ commitSent: true, writesStopped: true }), new Set(), steps, REHEARSE),
      forcedReport(undo, memory({ writesStopped: false }), new Set(), steps, REHEARSE),
      forcedReport(undo, memory({ writesStopped: true }), new Set(), steps, REHEARSE),
      forcedReport(undo, memory({ writesStopped: true }), new Set(), steps, REHEARSE, new Set([1])),
    ].map((lines) => lines.join("\n"));
    for (const lines of said) {
      expect(lines).not.toMatch(/syncbook (run|status)|--resume|--abort|--from/);
      expect(lines).toMatch(/Then rehearse again\.$/);
    }
    expect(said[0]).toContain(
      "writes: commit was sent, so nothing is undone: writes stay as they are (stopped, if a stopWrites ran). These writes are the rehearsal's simulated application's",
    );
    expect(said[2]).toContain('writes are still stopped: the undo of step 2 "stop writes" did not run. These writes');
    expect(said[3]).toContain('the undo of step 2 "stop writes" failed. These writes');
  });
});
