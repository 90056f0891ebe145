/**
 * The values the cutover runs with, as the journal's state reads them (src/journal/state.ts) and as
 * the read model folds them (src/model/fold.ts `cutoverValues`): one reading,
 * `cutoverValuesOfStarted`. The fold took an --abort's `cutoverVars: null` as the cutover's values,
 * and kept what no `--var` can hold, where the state did not: status and the watch page could
 * offer another way on than `run` judges by (a closing note's finding).
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { openJournal, readJournalState } from "../../src/journal/index.js";
import { foldEvents } from "../../src/model/fold.js";
import { traitsOf } from "../../src/steps/index.js";
import { eventFactory, salesStarted, tempDir } from "../support/journal.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

const FIRST = { vars: { switch: "http://a", lag: 5 }, given: ["switch"] };

/** Each `run.started` after a first run's (`FIRST`), as payload fields. */
const LATER: Record<string, Record<string, unknown>> = {
  "a run with its own": { vars: { switch: "http://b", lag: 7 }, given: ["lag"] },
  "an --abort that says none": { abort: true, vars: { switch: "http://default" }, given: [] },
  "an --abort that says the cutover's": {
    abort: true,
    vars: { switch: "http://default" },
    given: [],
    cutoverVars: { switch: "http://new", lag: 5 },
    cutoverGiven: ["switch"],
  },
  "an --abort whose cutoverVars is null": { abort: true, vars: { switch: "http://default" }, cutoverVars: null },
  "a run whose cutoverVars is no object": { vars: { switch: "http://b" }, given: ["switch"], cutoverVars: "x" },
  "values no --var can hold": { vars: { switch: "http://b", deep: { a: 1 }, none: null }, given: ["switch", 3] },
  "cutoverGiven no list": { vars: { switch: "http://b" }, given: ["switch"], cutoverGiven: "switch" },
};

for (const [what, later] of Object.entries(LATER))
  it(`the state and the read model read the cutover's values alike: ${what}`, async () => {
    const ev = eventFactory();
    const events: RunEvent[] = [
      ev("run.started", { ...salesStarted(), ...FIRST }),
      ev("run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 1 }),
      ev("run.started", { ...salesStarted(), ...later }),
    ];
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    for (const e of events) j.write(e);
    j.close();
    const state = await readJournalState(j.file, traitsOf);
    const model = foldEvents(events, { traits: traitsOf });
    expect(model.cutoverValues).toEqual({ vars: state.vars, given: state.given ?? [] });
  });
