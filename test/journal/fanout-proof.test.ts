/**
 * Issue 30, case 2: a kill inside a fan-out's journal lines. The lines of one broadcast are
 * written back to back and no request leaves before the last is on disk (src/fleet/fleet.ts), so
 * a journal holding fewer of them than the fan-out's size proves that none of it left: the reader
 * records those sends as never sent, and a resume sends the command to every instance, once.
 * Before, those lines read as "sent, no answer": resume #1 completed the commit to the missing
 * instance only, and resume #2 sent it to all three (one instance received it twice).
 */
import { afterEach, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/journal.js";
import { readJournalState } from "../../src/journal/state.js";
import { reconcile } from "../../src/journal/reconcile.js";
import { eventFactory, inst, STEPS, tempDir } from "../support/journal.js";
import { traitsOf } from "../../src/steps/index.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A journal up to the commit step, then `lines` of the commit fan-out's n request lines. */
function journalCutInFanout(lines: number, n = 3, answers = false): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const j = openJournal({ dir: t.dir, runbookName: "rb", runbookHash: "h" });
  const ev = eventFactory();
  const refs = [0, 1, 2].slice(0, n).map((i) => inst(i));
  j.write(
    ev("run.started", {
      runbook: "rb",
      file: "rb.yaml",
      hash: "h",
      instances: refs,
      steps: STEPS,
      mode: "run",
    } as never),
  );
  for (const [i, s] of STEPS.slice(0, 3).entries()) {
    j.write(ev("step.started", { index: i, id: s.id, kind: s.kind, title: s.title }));
    if (i === 0) {
      for (const r of refs)
        j.write(
          ev("request.sent", {
            id: 100 + r.index,
            instance: r,
            target: "service",
            method: "POST",
            path: "/api/v1/start",
            fanout: [r.index, n],
          }),
        );
      for (const r of refs)
        j.write(
          ev("response.received", {
            id: 100 + r.index,
            instance: r,
            target: "service",
            ok: true,
            status: 200,
            durationMs: 1,
          } as never),
        );
    }
    j.write(ev("step.finished", { index: i, id: s.id, outcome: "ok", durationMs: 1 }));
  }
  j.write(ev("step.started", { index: 3, id: "commit", kind: "commit", title: "commit" }));
  for (const r of refs.slice(0, lines))
    j.write(
      ev("request.sent", {
        id: 200 + r.index,
        instance: r,
        target: "service",
        method: "POST",
        path: "/api/v1/commit",
        fanout: [r.index, n],
      }),
      { more: r.index < n - 1 },
    );
  if (answers)
    for (const r of refs.slice(0, lines))
      j.write(
        ev("response.received", {
          id: 200 + r.index,
          instance: r,
          target: "service",
          ok: false,
          error: "timeout",
          errorKind: "transport",
          durationMs: 1,
        } as never),
      );
  j.close();
  return j.file;
}

const RB = {
  hash: "h",
  steps: STEPS.map((s) => ({ id: s.id, kind: s.kind, command: traitsOf(s.kind).command })),
  args: { status: "rb.yaml", run: "rb.yaml" },
};
const running = (n = 3) => [0, 1, 2].slice(0, n).map((i) => ({ instance: `i${i}`, state: "RUNNING", canCommit: true }));

describe("a fan-out cut inside its journal lines", () => {
  it.each([1, 2])(
    "%i of 3 commit lines: none left, every send is 'never sent', and the commit goes to all three",
    async (lines) => {
      const state = await readJournalState(journalCutInFanout(lines), traitsOf);
      const commit = state.commandsSent.find((c) => c.op === "commit")!;
      expect(commit.perInstance.map((p) => p.answered)).toEqual(Array(lines).fill("error"));
      expect(state.warnings.join("\n")).toMatch(
        new RegExp(`a fan-out of 3 request\\(s\\) was cut off after ${lines} of its journal lines: none of it left`),
      );
      const r = reconcile(state, RB, running());
      expect(r.ok && r.complete).toBe(undefined);
      expect(r.ok && r.resumeAt).toBe(3);
      // the start fan-out was whole and answered: untouched
      expect(state.commandsSent.find((c) => c.op === "start")!.answered).toBe("ok");
    },
  );

  it("all 3 lines written (requests may have left), no answer: refused, never sent again", async () => {
    const state = await readJournalState(journalCutInFanout(3), traitsOf);
    expect(state.commandsSent.find((c) => c.op === "commit")!.perInstance.map((p) => p.answered)).toEqual([
      "unknown",
      "unknown",
      "unknown",
    ]);
    const r = reconcile(state, RB, running());
    expect(r.ok).toBe(false);
    expect(!r.ok && r.code).toBe("in-doubt");
  });

  it("a single-instance command carries no fan-out to complete: its line is 'sent'", async () => {
    const state = await readJournalState(journalCutInFanout(1, 1), traitsOf);
    expect(state.commandsSent.find((c) => c.op === "commit")!.perInstance.map((p) => p.answered)).toEqual(["unknown"]);
  });
});
