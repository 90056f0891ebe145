import { describe, expect, it } from "vitest";
import { reconcile, type FleetReading, type JournalState, type ReconcileResult } from "../../src/journal/index.js";
import { RB, cmd, fleet, rb, state } from "../support/reconcile-fixtures.js";

interface Row {
  name: string;
  state: JournalState;
  fleet: FleetReading[];
  runbook?: typeof RB;
  allowChangedRunbook?: boolean;
  /** ok rows: resumeAt and the adopted step indexes; refusals: code and a message pattern. */
  expect:
    | { resumeAt: number; adopt?: number[]; complete?: string[]; note?: RegExp }
    | { code: string; message: RegExp; hint?: RegExp };
}

const PRR = [
  { index: 0, id: "pause", kind: "pause", title: "" },
  { index: 1, id: "resume", kind: "resume", title: "" },
  { index: 2, id: "commit", kind: "commit", title: "" },
  { index: 3, id: "reverse", kind: "reverse", title: "" },
];
const PRR_RB = rb(PRR, RB.hash);
const PRRW = [...PRR, { index: 4, id: "reversed", kind: "waitFor", title: "" }];
const PRRW_RB = rb(PRRW, RB.hash);

const rows: Row[] = [
  // runbook identity
  {
    name: "hash changed → refused, showing both hashes",
    state: state([]),
    fleet: fleet("IDLE"),
    runbook: { ...RB, hash: "b".repeat(64) },
    expect: {
      code: "changed-runbook",
      message: /journal hash aaaaaaaaaaaa, runbook hash bbbbbbbbbbbb/,
      hint: /--allow-changed-runbook/,
    },
  },
  {
    name: "hash changed, allowed → resumes with a note",
    state: state([]),
    fleet: fleet("IDLE"),
    runbook: { ...RB, hash: "b".repeat(64) },
    allowChangedRunbook: true,
    expect: { resumeAt: 0, note: /changed since the journal was written .*resuming anyway/ },
  },
  {
    name: "step ids differ → refused, even when allowed",
    state: state([]),
    fleet: fleet("IDLE"),
    runbook: {
      hash: "c",
      steps: [
        { id: "start", kind: "start", command: "start" },
        { id: "verify", kind: "verify", command: undefined },
      ],
      args: RB.args,
    },
    allowChangedRunbook: true,
    expect: {
      code: "steps-differ",
      message: /step 2: journal "wait" \(waitFor\), runbook "verify" \(verify\); step 3: journal "stop", runbook none/,
    },
  },
  {
    name: "no steps in the journal (crash before run.started) → from the top",
    state: { ...state([]), steps: [] },
    fleet: fleet("IDLE", "IDLE"),
    expect: { resumeAt: 0 },
  },
  // finished runs
  {
    name: "run finished ok → nothing to resume",
    state: state(["ok", "ok", "ok", "ok", "ok"], [], { finished: { outcome: "ok", committed: true, at: 1 } }),
    fleet: fleet("COMMITTED"),
    expect: { code: "finished", message: /nothing to resume: .* finished \(it ended ok \(committed\)\)/ },
  },
  {
    name: "every step done, no run.finished → nothing to resume",
    state: state(["ok", "ok", "skipped", "ok", "ok"]),
    fleet: fleet("COMMITTED"),
    expect: { code: "finished", message: /nothing to resume.*every step ended/ },
  },
  {
    name: "run finished failed → resumes at the failed step with a note",
    state: state(["ok", "failed"], [cmd("start", 0, "ok")], {
      finished: { outcome: "failed", committed: false, at: 1, message: "wait timed out" },
    }),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 1, note: /previous run ended failed: wait timed out/ },
  },
  {
    name: "interrupted (Ctrl-C) step → resumes at it",
    state: state(["ok", "interrupted"], [cmd("start", 0, "ok")], {
      finished: { outcome: "interrupted", committed: false, at: 1 },
    }),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { resumeAt: 1 },
  },
  {
    name: "a failed step the run went past (continueOnError) is not rerun",
    state: state(["ok", "failed", "ok", "cut"], [cmd("start", 0, "ok")]),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 3, note: /went on past it/ },
  },
  // fleet reachability and identity
  {
    name: "an unreachable instance → refused, naming it",
    state: state(["ok"], [cmd("start", 0, "ok", "ok")]),
    fleet: fleet("RUNNING", null),
    expect: {
      code: "unreachable",
      message: /i1 does not answer progress \(fleet: i0 RUNNING, i1 unreachable\)/,
      hint: /try again shortly/,
    },
  },
  {
    name: "a command sent to an instance no longer in the fleet → refused",
    state: state(["ok"], [cmd("start", 0, "ok", "ok")]),
    fleet: fleet("RUNNING"),
    expect: { code: "disagree", message: /sent start to i1, which is not in the fleet now/ },
  },
  // start
  {
    name: "start sent (no answer), fleet all RUNNING → adopted",
    state: state(["cut"], [cmd("start", 0, "unknown", "unknown")]),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { resumeAt: 0, adopt: [0], note: /every instance is RUNNING: adopted, not sent again/ },
  },
  {
    name: "start answered ok, fleet PAUSED/COMMITTING/COMMITTED → adopted",
    state: state(["cut"], [cmd("start", 0, "ok", "ok", "ok")]),
    fleet: fleet("PAUSED", "COMMITTING", "COMMITTED"),
    expect: { resumeAt: 0, adopt: [0] },
  },
  {
    name: "start sent (no answer), fleet all IDLE → refused: a start may take effect after its timeout, never sent twice (issue 30)",
    state: state(["cut"], [cmd("start", 0, "unknown", "unknown")]),
    fleet: fleet("IDLE", "IDLE"),
    expect: {
      code: "in-doubt",
      message:
        /every instance is still IDLE, but i0, i1 may have received it .*a start can take effect after its request timed out; it is never sent twice/,
      hint: /service's own log/,
    },
  },
  {
    name: "start never sent (journaled as not sent), fleet all IDLE → sent again",
    state: state(["cut"], [cmd("start", 0, "error", "error")]),
    fleet: fleet("IDLE", "IDLE"),
    expect: { resumeAt: 0, adopt: [], note: /still IDLE, so it did not take effect: it will be sent again/ },
  },
  {
    name: "start never sent to one, fleet IDLE and RUNNING → completed: start to the IDLE one only (issue 14 point 2)",
    state: state(["cut"], [cmd("start", 0, "error", "unknown")]),
    fleet: fleet("IDLE", "RUNNING"),
    expect: { resumeAt: 0, complete: ["i0"], note: /it will be sent to i0 only/ },
  },
  {
    name: "start sent (no answer), fleet IDLE and RUNNING → refused: the IDLE one may still take it (issue 30)",
    state: state(["cut"], [cmd("start", 0, "unknown", "unknown")]),
    fleet: fleet("IDLE", "RUNNING"),
    expect: { code: "disagree", message: /i1 RUNNING \(start took effect\); i0 IDLE \(start did not take effect\)/ },
  },
  {
    // facts [progress 1.20]: after a restart INITIALIZING, then "the state it had before the crash": not judged yet
    name: "start sent, one IDLE, one RUNNING, one INITIALIZING → refused until it has settled, naming it",
    state: state(["cut"], [cmd("start", 0, "unknown", "unknown", "unknown")]),
    fleet: [...fleet("IDLE", "RUNNING"), { instance: "i2", state: "INITIALIZING" }],
    expect: {
      code: "unreachable",
      message: /^cannot resume yet: i2 is still INITIALIZING \(fleet: i0 IDLE, i1 RUNNING, i2 INITIALIZING\)$/,
    },
  },
  {
    name: "start accepted yet fleet IDLE → refused",
    state: state(["cut"], [cmd("start", 0, "ok", "unknown")]),
    fleet: fleet("IDLE", "IDLE"),
    expect: { code: "disagree", message: /i0 accepted it, yet no instance shows its effect/ },
  },
  {
    name: "start refused by an instance that is RUNNING → refused",
    state: state(["failed"], [cmd("start", 0, "error", "ok")]),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { code: "disagree", message: /i0 refused it, yet every instance shows it took effect/ },
  },
  {
    name: "start not sent, yet fleet RUNNING → refused (someone else)",
    state: state(["cut"]),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { code: "disagree", message: /no start sent by step 1 "start", yet every instance shows its effect/ },
  },
  {
    name: "start not sent, fleet IDLE → from the top",
    state: state(["-"]),
    fleet: fleet("IDLE", "IDLE"),
    expect: { resumeAt: 0, adopt: [] },
  },
  {
    name: "a waitFor after a done start, fleet RUNNING → resumes at the wait",
    state: state(["ok", "cut"], [cmd("start", 0, "ok")]),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 1, note: /cut off/ },
  },
  {
    name: "a waitFor after a done start, fleet IDLE → refused",
    state: state(["ok", "cut"], [cmd("start", 0, "ok")]),
    fleet: fleet("IDLE"),
    expect: {
      code: "disagree",
      message: /last command was start \(step 1\), so every instance should be RUNNING; the fleet shows i0 IDLE/,
    },
  },
  // which command the fleet must show: the journal's last one before the step to resume (by step, not by line)
  {
    name: "a wait after a done commit: the commit's states are expected, not start's (fleet COMMITTED → resumes)",
    state: state(["ok", "ok", "ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "ok")], {
      stopWritesSucceeded: true,
    }),
    fleet: fleet("COMMITTED"),
    expect: { resumeAt: 4 },
  },
  {
    name: "a wait after a done commit, fleet RUNNING → refused: it should be COMMITTING or COMMITTED",
    state: state(["ok", "ok", "ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "ok")], {
      stopWritesSucceeded: true,
    }),
    fleet: fleet("RUNNING"),
    expect: {
      code: "disagree",
      message: /last command was commit \(step 4\), so every instance should be COMMITTING or COMMITTED/,
    },
  },
  {
    name: "two commands in one step (a plugin step paused, then resumed): the later one is expected (fleet RUNNING → resumes)",
    state: state(["ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("pause", 1, "ok"), cmd("resume", 1, "ok")]),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 2 },
  },
  {
    name: "a command after the step to resume that reached no instance is only recorded: start's states are expected (fleet RUNNING → resumes)",
    state: state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "error")]),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 1, note: /sent outside the step to resume \(step 4/ },
  },
  {
    name: "a start, commit or reverse after the step to resume that may have reached an instance (an earlier journal's, carried): refused, never sent again on the way",
    state: state(
      ["ok", "cut"],
      [cmd("start", 0, "ok"), { ...cmd("commit", 3, "unknown"), carried: { from: "/j/earlier.jsonl" } }],
    ),
    fleet: fleet("RUNNING"),
    expect: {
      code: "in-doubt",
      message:
        /^commit \(step 4 "commit"\) was sent by an earlier run of this cutover \(its journal's record, carried by the --from run that wrote this one\); answers: i0 unknown; this resume goes on at step 2 "wait", before it, and would send it again on its way: a commit is never sent twice to an instance$/,
    },
  },
  {
    name: "a command in the step right after the one to resume is only recorded too: start's states are expected",
    state: state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("pause", 2, "unknown")]),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 1, note: /a pause sent outside the step to resume \(step 3/ },
  },
  {
    name: "a command sent outside any step (stepIndex -1) sets no expectation: fleet RUNNING after start → resumes",
    state: state(["ok", "cut"], [cmd("pause", -1, "ok")]),
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 1 },
  },
  {
    name: "cutover-only journal (no command yet), fleet RUNNING → resumes",
    state: state(["skipped", "cut"]),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { resumeAt: 1 },
  },
  // commit
  {
    name: "commit sent (no answer), fleet COMMITTING/COMMITTED → adopted",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "unknown", "unknown")]),
    fleet: fleet("COMMITTING", "COMMITTED"),
    expect: { resumeAt: 3, adopt: [3] },
  },
  {
    name: "commit refused by every instance, fleet RUNNING → retried through the interlocks",
    state: state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "error", "error")], {
      stopWritesSucceeded: true,
    }),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: {
      resumeAt: 3,
      adopt: [],
      note: /commit did not take effect: it will be sent again once the commit interlocks pass again/,
    },
  },
  {
    name: "commit unanswered, fleet RUNNING → refused: an instance may hold it (never 'not taken effect', issue 30)",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "unknown", "unknown")]),
    fleet: [
      { instance: "i0", state: "RUNNING", canCommit: true },
      { instance: "i1", state: "RUNNING", canCommit: false },
    ],
    expect: {
      code: "in-doubt",
      message:
        /i0, i1 may have received it \(no usable answer\): commit is held by an instance until every instance has it/,
    },
  },
  {
    name: "commit never sent (journaled as not sent), fleet RUNNING → resent through the interlocks",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "error", "error")]),
    fleet: [
      { instance: "i0", state: "RUNNING", canCommit: true },
      { instance: "i1", state: "RUNNING", canCommit: false },
    ],
    expect: { resumeAt: 3, adopt: [], note: /canCommit is false on i1/ },
  },
  {
    name: "commit reached only some instances → completed: commit to the RUNNING one only",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "ok", "error")]),
    fleet: fleet("COMMITTING", "RUNNING"),
    expect: { resumeAt: 3, complete: ["i1"], note: /i0 took it.*it will be sent to i1 only/ },
  },
  {
    name: "commit taken by one, the other RUNNING with no answer → refused: it may have it (issue 30)",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "ok", "unknown")]),
    fleet: fleet("COMMITTING", "RUNNING"),
    expect: { code: "disagree", message: /i0 COMMITTING \(commit took effect\); i1 RUNNING/ },
  },
  {
    name: "commit refused by one while the others wait in its round (blocking) → completed to the refusing one",
    state: state(
      ["ok", "ok", "ok", "failed"],
      [cmd("start", 0, "ok", "ok", "ok"), cmd("commit", 3, "unknown", "unknown", "error")],
    ),
    fleet: fleet("RUNNING", "RUNNING", "RUNNING"),
    expect: { resumeAt: 3, complete: ["i2"], note: /i0, i1 got it and wait for the rest of the fleet/ },
  },
  {
    name: "commit refused by every instance → no completion: the step runs again (its no-errors interlock decides)",
    state: state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "error", "error")]),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { resumeAt: 3, note: /did not take effect: it will be sent again once the commit interlocks pass/ },
  },
  {
    name: "commit accepted by one that is still RUNNING, refused by another → refused (a contradiction is never completed)",
    state: state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "ok", "error")]),
    fleet: fleet("RUNNING", "RUNNING"),
    expect: { code: "disagree", message: /i0 accepted it, yet no instance shows its effect/ },
  },
  {
    name: "commit accepted, fleet still RUNNING → refused",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "ok")]),
    fleet: fleet("RUNNING"),
    expect: { code: "disagree", message: /accepted it, yet no instance shows its effect/ },
  },
  {
    name: "commit not sent, fleet COMMITTED → refused",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok")]),
    fleet: fleet("COMMITTED"),
    expect: { code: "disagree", message: /no commit sent/ },
  },
  {
    name: "commit sent, fleet IDLE → refused (neither)",
    state: state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "unknown")]),
    fleet: fleet("IDLE"),
    expect: { code: "disagree", message: /i0 IDLE \(neither\)/ },
  },
  {
    name: "after a done commit, waiting for COMMITTED, fleet COMMITTING → resumes",
    state: state(["ok", "ok", "ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "ok")], {
      stopWritesSucceeded: true,
    }),
    fleet: fleet("COMMITTING"),
    expect: { resumeAt: 4, note: /writes were stopped by an earlier step/ },
  },
  // pause / resume / reverse
  {
    name: "pause sent, fleet PAUSED → adopted",
    state: state(["cut"], [cmd("pause", 0, "unknown")], {}, PRR),
    runbook: PRR_RB,
    fleet: fleet("PAUSED"),
    expect: { resumeAt: 0, adopt: [0] },
  },
  {
    name: "pause sent, fleet RUNNING → resent",
    state: state(["cut"], [cmd("pause", 0, "error")], {}, PRR),
    runbook: PRR_RB,
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 0, adopt: [], note: /still RUNNING, so it did not take effect/ },
  },
  {
    name: "resume sent, fleet RUNNING → adopted",
    state: state(["ok", "cut"], [cmd("pause", 0, "ok"), cmd("resume", 1, "unknown")], {}, PRR),
    runbook: PRR_RB,
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 1, adopt: [1] },
  },
  {
    name: "resume sent, fleet PAUSED → resent",
    state: state(["ok", "cut"], [cmd("pause", 0, "ok"), cmd("resume", 1, "unknown")], {}, PRR),
    runbook: PRR_RB,
    fleet: fleet("PAUSED"),
    expect: { resumeAt: 1, adopt: [] },
  },
  {
    name: "reverse sent, fleet RUNNING → adopted",
    state: state(
      ["ok", "ok", "ok", "cut"],
      [cmd("pause", 0, "ok"), cmd("resume", 1, "ok"), cmd("commit", 2, "ok"), cmd("reverse", 3, "unknown")],
      {},
      PRR,
    ),
    runbook: PRR_RB,
    fleet: fleet("RUNNING"),
    expect: { resumeAt: 3, adopt: [3] },
  },
  {
    name: "reverse never sent, fleet COMMITTED → resent",
    state: state(
      ["ok", "ok", "ok", "cut"],
      [cmd("pause", 0, "ok"), cmd("resume", 1, "ok"), cmd("commit", 2, "ok"), cmd("reverse", 3, "error")],
      {},
      PRR,
    ),
    runbook: PRR_RB,
    fleet: fleet("COMMITTED"),
    expect: { resumeAt: 3, adopt: [] },
  },
  // facts: "COMMITTED → REVERSING → RUNNING in the opposite direction"
  {
    name: "reverse sent, fleet REVERSING (one instance already RUNNING) → adopted",
    state: state(
      ["ok", "ok", "ok", "cut"],
      [cmd("pause", 0, "ok"), cmd("resume", 1, "ok"), cmd("commit", 2, "ok"), cmd("reverse", 3, "unknown", "unknown")],
      {},
      PRR,
    ),
    runbook: PRR_RB,
    fleet: fleet("REVERSING", "RUNNING"),
    expect: { resumeAt: 3, adopt: [3], note: /every instance is REVERSING\/RUNNING: adopted/ },
  },
  {
    name: "after a done reverse, the fleet still REVERSING or already RUNNING → resumes at the next step",
    state: state(
      ["ok", "ok", "ok", "ok", "cut"],
      [cmd("pause", 0, "ok"), cmd("resume", 1, "ok"), cmd("commit", 2, "ok"), cmd("reverse", 3, "ok", "ok")],
      {},
      PRRW,
    ),
    runbook: PRRW_RB,
    fleet: fleet("REVERSING", "RUNNING"),
    expect: { resumeAt: 4, adopt: [] },
  },
  {
    name: "after a done reverse, the fleet COMMITTED → refused (the reverse did not happen)",
    state: state(
      ["ok", "ok", "ok", "ok", "cut"],
      [cmd("pause", 0, "ok"), cmd("resume", 1, "ok"), cmd("commit", 2, "ok"), cmd("reverse", 3, "ok")],
      {},
      PRRW,
    ),
    runbook: PRRW_RB,
    fleet: fleet("COMMITTED"),
    expect: { code: "disagree", message: /should be REVERSING or RUNNING; the fleet shows i0 COMMITTED/ },
  },
  {
    name: "after a done pause, fleet RUNNING → refused",
    state: state(["ok", "-"], [cmd("pause", 0, "ok")], {}, PRR),
    runbook: PRR_RB,
    fleet: fleet("RUNNING"),
    expect: { code: "disagree", message: /no resume sent by step 2 "resume", yet every instance shows its effect/ },
  },
];

describe("reconcile", () => {
  it.each(rows)("$name", (row) => {
    const r: ReconcileResult = reconcile(
      row.state,
      row.runbook ?? RB,
      row.fleet,
      row.allowChangedRunbook ? { allowChangedRunbook: true } : {},
    );
    if ("code" in row.expect) {
      expect(r.ok, JSON.stringify(r)).toBe(false);
      if (r.ok) return;
      expect(r.code).toBe(row.expect.code);
      expect(r.message).toMatch(row.expect.message);
      expect(r.hint).not.toBe("");
      if (row.expect.hint) expect(r.hint).toMatch(row.expect.hint);
    } else {
      expect(r.ok, JSON.stringify(r)).toBe(true);
      if (!r.ok) return;
      expect(r.resumeAt).toBe(row.expect.resumeAt);
      expect(r.adopt.map((a) => a.stepIndex)).toEqual(row.expect.adopt ?? []);
      expect(r.complete?.targets).toEqual(row.expect.complete);
      if (row.expect.note) expect(r.notes.join("\n")).toMatch(row.expect.note);
    }
  });

  it("passes the journal's warnings on as notes", () => {
    const r = reconcile(state(["-"], [], { warnings: ["the last line (7) is cut short"] }), RB, fleet("IDLE"));
    expect(r.notes).toContain("journal: the last line (7) is cut short");
  });
});

describe("instances keyed by place", () => {
  const withUrls = (...urls: string[]) => fleet(...urls.map(() => "RUNNING")).map((f, i) => ({ ...f, url: urls[i]! }));
  const journaled = (...urls: string[]) => ({ instances: urls.map((url, i) => ({ key: `i${i}`, url })) });

  it("the same redacted URLs at the same places: resumes", () => {
    const r = reconcile(
      state(["ok"], [cmd("start", 0, "ok", "ok")], journaled("http://***:1", "http://***:2")),
      RB,
      withUrls("http://***:1", "http://***:2"),
    );
    expect(r.ok).toBe(true);
  });

  it("unnamed instances in another order, or one fewer: refused, naming what moved", () => {
    const swapped = reconcile(
      state(["ok"], [cmd("start", 0, "ok", "ok")], journaled("http://a:1", "http://b:2")),
      RB,
      withUrls("http://b:2", "http://a:1"),
    );
    expect(swapped).toMatchObject({ ok: false, code: "disagree" });
    expect(!swapped.ok && swapped.message).toMatch(
      /i0 was http:\/\/a:1, is http:\/\/b:2; i1 was http:\/\/b:2, is http:\/\/a:1/,
    );
    const fewer = reconcile(
      state(["ok"], [cmd("start", 0, "ok")], journaled("http://a:1", "http://b:2")),
      RB,
      withUrls("http://a:1"),
    );
    expect(!fewer.ok && fewer.message).toMatch(/the journal's run had 2 instance\(s\), the runbook lists 1/);
  });
});
