/**
 * What a run whose journal failed says of writes turned back on by hand (src/run/unwind.ts
 * `writesAfterJournalFailure`, `byHandThenFrom`). Where no undo ran, the journal still says the
 * write stop holds: writes turned back on by hand then make it false, and a later `--resume` would
 * count the stop and commit while writes flow. The hint said only "or turn the application's
 * writes back on by hand"; it now names the one way on after that, a new run from the stop.
 */
import { describe, expect, it } from "vitest";
import { byHandThenFrom, writesAfterJournalFailure } from "../../src/run/unwind.js";
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
