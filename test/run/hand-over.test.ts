/**
 * `--abort`'s hand-off of a hook whose step has no `undo:` (src/run/unwind.ts `handOver`): on
 * record, or not at all. A review found the hand-off told to the operator ("undo what it did by
 * hand") while the journal, failing on a full disk, never took it: a later run would not know, and
 * count a write stop the person turned off as in force.
 */
import { describe, expect, it } from "vitest";
import type { Emit } from "../../src/events.js";
import { abortMessage, handOver } from "../../src/run/unwind.js";

const stop = { index: 2, id: "stop-writes", kind: "stopWrites" };
const notice = { index: 4, id: "notice", kind: "hook" };

function emits(failAt?: number) {
  const recorded: Record<string, unknown>[] = [];
  const told: Record<string, unknown>[] = [];
  let n = 0;
  const record = ((type: string, payload: Record<string, unknown>) => {
    if (++n === failAt || (failAt !== undefined && n > failAt)) throw new Error("ENOSPC");
    recorded.push({ type, ...payload });
  }) as unknown as Emit;
  const tell = ((type: string, payload: Record<string, unknown>) => {
    told.push({ type, ...payload });
  }) as unknown as Emit;
  return { recorded, told, record, tell };
}

describe("handOver", () => {
  it("journals each hand-off as a decision of check by-hand, told by the journal's own listeners", () => {
    const e = emits();
    expect(handOver(e.record, e.tell, [stop, notice])).toEqual([stop, notice]);
    expect(e.told).toEqual([]);
    expect(e.recorded).toEqual([
      {
        type: "decision",
        index: 2,
        id: "stop-writes",
        kind: "undo",
        ok: false,
        check: "by-hand",
        reason:
          'step 3 "stop-writes" has no `undo:` in the runbook, so it cannot be undone from here: undo what it did by hand (writes stay stopped until then)',
      },
      {
        type: "decision",
        index: 4,
        id: "notice",
        kind: "undo",
        ok: false,
        check: "by-hand",
        reason:
          'step 5 "notice" has no `undo:` in the runbook, so it cannot be undone from here: undo what it did by hand',
      },
    ]);
  });

  it("hands nothing over where the journal cannot record it: tells to leave it and abort again, never by hand", () => {
    const e = emits(1);
    expect(handOver(e.record, e.tell, [stop, notice])).toEqual([]);
    expect(e.recorded).toEqual([]);
    expect(e.told.map((t) => t.check)).toEqual(["not-handed-over", "not-handed-over"]);
    expect(e.told[0]!.reason).toBe(
      'step 3 "stop-writes" has no `undo:` in the runbook, so it cannot be undone from here, and the journal could not record its hand-off to a person: leave what it did as it is (writes stay stopped), and once the journal can be written (free space, or --journal-dir) run --abort again, which hands it over on record',
    );
    expect(String(e.told[1]!.reason)).not.toContain("writes stay stopped");
    for (const t of e.told) expect(String(t.reason)).not.toMatch(/undo what it did by hand/);
    // the journal failing at the second: the first is handed over, the second not
    const half = emits(2);
    expect(handOver(half.record, half.tell, [stop, notice])).toEqual([stop]);
    expect(half.told.map((t) => t.id)).toEqual(["notice"]);
  });

  it("the abort's end says by hand only of a write stop handed over", () => {
    const owed = [stop];
    expect(abortMessage(owed, owed, [], owed)).toBe(
      'aborted by the operator (--abort), but step 3 "stop-writes" has no `undo:` in the runbook, so nothing undid it: writes stay stopped until a person turns them back on: do it by hand',
    );
    expect(abortMessage(owed, owed, [], owed, [])).toBe(
      'aborted by the operator (--abort), but step 3 "stop-writes" has no `undo:` in the runbook, so nothing undid it: writes stay stopped: the journal could not record their hand-off to a person, so leave them stopped and run --abort again once it can be written',
    );
  });
});
