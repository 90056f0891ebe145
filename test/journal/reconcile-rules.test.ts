/**
 * `--resume`'s reconcile, rule by rule, with the exact words it prints. The table in
 * reconcile.test.ts pins the decisions; this file pins, besides the rules it leaves out, the
 * messages, hints and notes an operator reads when a run is resumed (usually at a bad hour): who
 * answered what, which instances a command goes to, why a resume is refused and what to do next.
 */
import { describe, expect, it } from "vitest";
import { reconcile, resumeStep, sentAhead, type HookRun, type JournalState } from "../../src/journal/index.js";
import { STEPS } from "../support/journal.js";
import { FILE, RB, cmd, fleet, rb, sent, state, type Steps } from "../support/reconcile-fixtures.js";

function refused(r: ReturnType<typeof reconcile>) {
  expect(r.ok, JSON.stringify(r)).toBe(false);
  if (r.ok) throw new Error("not refused");
  return r;
}
function resumed(r: ReturnType<typeof reconcile>) {
  expect(r.ok, JSON.stringify(r)).toBe(true);
  if (!r.ok) throw new Error("refused");
  return r;
}
const cutOff = (n: number, id: string) => `step ${n} "${id}" was cut off (started, never ended): it runs again`;

const PRR = [
  { index: 0, id: "pause", kind: "pause" },
  { index: 1, id: "resume", kind: "resume" },
  { index: 2, id: "commit", kind: "commit" },
  { index: 3, id: "reverse", kind: "reverse" },
];

describe("the runbook must be the journal's", () => {
  const HINT =
    "resume with the runbook as it was, or pass --allow-changed-runbook if the change cannot affect the steps already run (step ids must still match)";

  it("a changed hash is refused, showing both hashes cut to 12 characters, '(none)' for a journal without one", () => {
    const r = refused(reconcile(state([], [], { hash: "" }), rb(STEPS, "abc"), fleet("IDLE")));
    expect(r).toEqual({
      ok: false,
      code: "changed-runbook",
      message: `the runbook changed since the journal was written: journal hash (none), runbook hash abc (${FILE})`,
      hint: HINT,
      notes: [],
    });
    const long = refused(reconcile(state([]), rb(STEPS, "0123456789abcdef"), fleet("IDLE")));
    expect(long.message).toBe(
      `the runbook changed since the journal was written: journal hash aaaaaaaaaaaa, runbook hash 0123456789ab (${FILE})`,
    );
  });

  it("--allow-changed-runbook resumes, saying so with both hashes", () => {
    const r = resumed(reconcile(state([]), rb(STEPS, "abc"), fleet("IDLE"), { allowChangedRunbook: true }));
    expect(r.notes).toEqual([
      "the runbook changed since the journal was written (hash aaaaaaaaaaaa → abc); resuming anyway as asked",
    ]);
  });

  const HINT_STEPS = "resume with the runbook the journal was written for; a runbook with other steps is a new run";
  const differ = (steps: Steps) => refused(reconcile(state([]), rb(steps), fleet("IDLE")));
  const renamed = (i: number, id: string) => STEPS.map((s) => (s.index === i ? { ...s, id } : s));

  it("a step with the same id and another kind differs", () => {
    const r = differ(STEPS.map((s) => (s.index === 1 ? { ...s, kind: "verify" } : s)));
    expect(r).toMatchObject({
      code: "steps-differ",
      message: `the runbook's steps do not match the journal's: step 2: journal "wait" (waitFor), runbook "wait" (verify)`,
      hint: HINT_STEPS,
    });
  });

  it("a step with another id and the same kind differs", () => {
    expect(differ(renamed(1, "settle")).message).toBe(
      `the runbook's steps do not match the journal's: step 2: journal "wait" (waitFor), runbook "settle" (waitFor)`,
    );
  });

  it("a journal step without a kind (an older journal) is compared by id alone", () => {
    const old = state(["ok", "cut"], [cmd("start", 0, "ok")]);
    old.steps = old.steps.map((s) => ({ ...s, kind: "" }));
    expect(resumed(reconcile(old, RB, fleet("RUNNING"))).resumeAt).toBe(1);
  });

  it("a runbook step the journal does not have differs", () => {
    expect(differ([...STEPS, { index: 5, id: "extra", kind: "waitFor" }]).message).toBe(
      `the runbook's steps do not match the journal's: step 6: journal none, runbook "extra"`,
    );
  });

  it("five differences are all listed; past five, the rest are counted", () => {
    const five = STEPS.map((s) => ({ ...s, id: `s${s.index + 1}` }));
    const list = STEPS.map(
      (s) => `step ${s.index + 1}: journal "${s.id}" (${s.kind}), runbook "s${s.index + 1}" (${s.kind})`,
    );
    expect(differ(five).message).toBe(`the runbook's steps do not match the journal's: ${list.join("; ")}`);
    const seven = [...five, { index: 5, id: "s6", kind: "waitFor" }, { index: 6, id: "s7", kind: "waitFor" }];
    expect(differ(seven).message).toBe(
      `the runbook's steps do not match the journal's: ${list.join("; ")}; and 2 more`,
    );
  });
});

describe("where the run resumes", () => {
  it("a cut-off step is where it resumes, even when a later step started too (only a failed step is gone past)", () => {
    const r = resumed(reconcile(state(["ok", "cut", "cut"], [cmd("start", 0, "ok")]), RB, fleet("RUNNING")));
    expect(r.resumeAt).toBe(1);
    expect(r.notes).toEqual([cutOff(2, "wait")]);
  });

  it("a failed step the run went past is named in a note, by its number and id", () => {
    const r = resumed(reconcile(state(["ok", "failed", "ok", "cut"], [cmd("start", 0, "ok")]), RB, fleet("RUNNING")));
    expect(r.resumeAt).toBe(3);
    expect(r.notes).toEqual([
      `step 2 "wait" failed and the run went on past it (continueOnError): it is not run again`,
      cutOff(4, "commit"),
    ]);
  });

  const HINT = "start a new run without --resume if the runbook should run again";

  it("every step done: nothing to resume, with how the run ended (failed, not committed)", () => {
    const s = state(["ok", "ok", "ok", "ok", "ok"], [cmd("start", 0, "ok"), cmd("commit", 3, "ok")], {
      finished: { outcome: "failed", committed: false, at: 1 },
    });
    expect(refused(reconcile(s, RB, fleet("COMMITTED")))).toMatchObject({
      code: "finished",
      message: `nothing to resume: the run in ${FILE} finished (it ended failed)`,
      hint: HINT,
    });
  });

  it("a run that ended ok is not resumed, even with a step not done", () => {
    const s = state(["ok", "ok"], [cmd("start", 0, "ok")], { finished: { outcome: "ok", committed: false, at: 1 } });
    expect(refused(reconcile(s, RB, fleet("RUNNING")))).toEqual({
      ok: false,
      code: "finished",
      message: `nothing to resume: the run in ${FILE} finished ok`,
      hint: HINT,
      notes: [],
    });
  });

  // an adversarial run: a --to run ended its cutover, so --resume had "nothing to resume"
  it("a run that ended ok at its --to, before the runbook's end, resumes with the next step", () => {
    const s = state(["ok", "ok"], [cmd("start", 0, "ok")], {
      finished: { outcome: "ok", committed: false, at: 1, to: "wait" },
    });
    const r = resumed(reconcile(s, RB, fleet("RUNNING")));
    expect(r.resumeAt).toBe(2);
    expect(r.notes).toEqual(['the previous run ended ok at its --to "wait", as asked']);
  });

  it("a run that ended otherwise resumes, saying how it ended (where it goes on is the caller's line, which knows what runs again)", () => {
    const failed = state(["ok", "failed"], [cmd("start", 0, "ok")], {
      finished: { outcome: "failed", committed: false, at: 1 },
    });
    expect(resumed(reconcile(failed, RB, fleet("RUNNING"))).notes).toEqual(["the previous run ended failed"]);
    const why = { ...failed, finished: { ...failed.finished!, message: "wait timed out" } };
    expect(resumed(reconcile(why, RB, fleet("RUNNING"))).notes).toEqual([
      "the previous run ended failed: wait timed out",
    ]);
    // an --abort run's end is its own words, not "ended failed"
    const aborted = {
      ...failed,
      finished: {
        ...failed.finished!,
        aborted: true as const,
        message: "aborted by the operator (--abort): 1 undo(s) ran",
      },
    };
    expect(resumed(reconcile(aborted, RB, fleet("RUNNING"))).notes).toEqual([
      "the previous run: aborted by the operator (--abort): 1 undo(s) ran",
    ]);
    const bare = { ...failed, finished: { ...failed.finished!, aborted: true as const } };
    expect(resumed(reconcile(bare, RB, fleet("RUNNING"))).notes).toEqual([
      "the previous run: aborted by the operator (--abort)",
    ]);
    // a --to that did not end ok is not "as asked"
    const toFailed = { ...failed, finished: { ...failed.finished!, to: "wait" } };
    expect(resumed(reconcile(toFailed, RB, fleet("RUNNING"))).notes).toEqual(["the previous run ended failed"]);
  });

  it("only the step to resume is reported cut off: not a step not started, not one that ended, not a later one", () => {
    const notStarted = resumed(reconcile(state(["ok", "-"], [cmd("start", 0, "ok")]), RB, fleet("RUNNING")));
    expect([notStarted.resumeAt, notStarted.notes]).toEqual([1, []]);
    const ended = resumed(reconcile(state(["ok", "failed"], [cmd("start", 0, "ok")]), RB, fleet("RUNNING")));
    expect([ended.resumeAt, ended.notes]).toEqual([1, []]);
    const later = resumed(
      reconcile(state(["ok", "interrupted", "cut"], [cmd("start", 0, "ok")]), RB, fleet("RUNNING")),
    );
    expect([later.resumeAt, later.notes]).toEqual([1, []]);
  });
});

describe("the fleet must be the journal's, every instance readable", () => {
  it("unreachable instances are named, with every instance's state", () => {
    const s = state(["ok"], [cmd("start", 0, "ok", "ok", "ok")]);
    expect(refused(reconcile(s, RB, fleet(null, "RUNNING", null)))).toEqual({
      ok: false,
      code: "unreachable",
      message: "cannot resume: i0, i2 do not answer progress (fleet: i0 unreachable, i1 RUNNING, i2 unreachable)",
      // facts: "Progress may fail for two minutes or more after a resume or restart"
      hint: "the state of every instance is needed to know whether start or commit took effect; progress can fail for minutes after a service restart or resume (1.7.3+): try again shortly",
      notes: [],
    });
    expect(refused(reconcile(s, RB, fleet("RUNNING", null, "RUNNING"))).message).toBe(
      "cannot resume: i1 does not answer progress (fleet: i0 RUNNING, i1 unreachable, i2 RUNNING)",
    );
  });

  // facts [progress 1.20]: "once initialization completes it reports IDLE, or, after a crash or restart, **the state
  // it had before the crash**": INITIALIZING is no proof of what a sent command did
  it("an instance still INITIALIZING after commands were sent is waited for, named, not judged; before any, it is no obstacle", () => {
    const s = state(["ok", "cut"], [cmd("start", 0, "ok", "ok", "ok")]);
    expect(refused(reconcile(s, RB, fleet("RUNNING", "INITIALIZING", "RUNNING")))).toEqual({
      ok: false,
      code: "unreachable",
      message: "cannot resume yet: i1 is still INITIALIZING (fleet: i0 RUNNING, i1 INITIALIZING, i2 RUNNING)",
      hint: "a 1.20+ service goes INITIALIZING after a restart, then back to the state it had before it; that state is needed to know whether the commands the journal sent took effect: resume again once it has settled",
      notes: [],
    });
    expect(refused(reconcile(s, RB, fleet("INITIALIZING", "RUNNING", "INITIALIZING"))).message).toBe(
      "cannot resume yet: i0, i2 are still INITIALIZING (fleet: i0 INITIALIZING, i1 RUNNING, i2 INITIALIZING)",
    );
    // no command sent yet: the start step waits INITIALIZING out itself
    const before = reconcile(state(["cut"], []), RB, fleet("INITIALIZING", "IDLE", "IDLE"));
    expect(before.ok).toBe(true);
  });

  const journaled = (...urls: string[]) => ({ instances: urls.map((url, i) => ({ key: `i${i}`, url })) });

  it("an instance moved to another URL is refused, with how to resume", () => {
    const r = refused(
      reconcile(state(["ok"], [cmd("start", 0, "ok")], journaled("http://a:1")), RB, [
        { instance: "i0", url: "http://b:2", state: "RUNNING" },
      ]),
    );
    expect(r).toMatchObject({
      code: "disagree",
      message: "the runbook's instances are not those the journal's run used: i0 was http://a:1, is http://b:2",
      hint: "resume with the instances the run started with, in the same order (give each a `name:` to key it by name)",
    });
  });

  it("an instance's URL in another spelling of one service is the same instance; a loopback respelling is not known to be (src/instance-identity.ts)", () => {
    const s = state(["ok", "cut"], [], journaled("http://sync.example:27182"));
    for (const same of ["http://SYNC.example:27182/", "http://u:***@sync.example:27182", "http://sync.example.:27182"])
      expect(resumed(reconcile(s, RB, [{ instance: "i0", url: same, state: "RUNNING" }])).resumeAt, same).toBe(1);
    const loop = state(["ok", "cut"], [], journaled("http://127.0.0.1:27182"));
    expect(
      resumed(reconcile(loop, RB, [{ instance: "i0", url: "http://127.0.0.1:27182/", state: "RUNNING" }])).resumeAt,
    ).toBe(1);
    // 127.0.0.1 and localhost (which may be ::1) at one port may be two services: refused, as any other move
    expect(
      refused(reconcile(loop, RB, [{ instance: "i0", url: "http://localhost:27182", state: "RUNNING" }])),
    ).toMatchObject({
      code: "disagree",
      message:
        "the runbook's instances are not those the journal's run used: i0 was http://127.0.0.1:27182, is http://localhost:27182",
    });
  });

  it("a reading without a URL, or of an instance the journal does not list, is not compared by URL", () => {
    const s = state(["ok", "cut"], [], journaled("http://a:1"));
    expect(resumed(reconcile(s, RB, [{ instance: "i0", state: "RUNNING" }])).resumeAt).toBe(1);
    expect(resumed(reconcile(s, RB, [{ instance: "db1", url: "http://a:1", state: "RUNNING" }])).resumeAt).toBe(1);
  });

  it("a command sent to instances no longer in the fleet is refused, naming them", () => {
    const r = refused(reconcile(state(["ok"], [cmd("start", 0, "ok", "ok", "ok")]), RB, fleet("RUNNING")));
    expect(r).toMatchObject({
      code: "disagree",
      message: "the journal sent start to i1, i2, which are not in the fleet now (fleet: i0 RUNNING)",
      hint: "resume with the same instances the run started with (names and URLs)",
    });
    const one = refused(reconcile(state(["ok"], [cmd("start", 0, "ok", "ok")]), RB, fleet("RUNNING")));
    expect(one.message).toBe("the journal sent start to i1, which is not in the fleet now (fleet: i0 RUNNING)");
  });
});

describe("which commands are judged", () => {
  it("commands of earlier steps are not noted; those outside any step or after the step to resume are only recorded", () => {
    const s = state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("pause", -1, "ok"), cmd("commit", 3, "error")]);
    const r = resumed(reconcile(s, RB, fleet("RUNNING")));
    expect(r.resumeAt).toBe(1);
    expect(r.notes).toEqual([
      "a pause sent outside the step to resume (step 0, answered ok) is only recorded, not judged",
      "a commit sent outside the step to resume (step 4, answered error) is only recorded, not judged",
      cutOff(2, "wait"),
    ]);
  });

  it("a start, commit or reverse after the step to resume that may have reached an instance is refused: the resume would send it again on its way", () => {
    for (const [answers, refused] of [
      [["ok"], true],
      [["unknown"], true],
      [["error", "ok"], true],
      [["error"], false],
      [["error", "error"], false],
    ] as const) {
      for (const op of ["start", "commit", "reverse", "pause"] as const) {
        const s = state(["ok", "cut"], [cmd("start", 0, "ok"), cmd(op, 3, ...answers)]);
        const r = reconcile(s, RB, fleet(...answers.map(() => "RUNNING")));
        const want = refused && op !== "pause";
        expect(r.ok, `${op} ${answers.join(",")}`).toBe(!want);
        if (!r.ok) {
          expect(r.code).toBe("in-doubt");
          // not carried: said as sent, not as an earlier run's
          expect(r.message).toMatch(new RegExp(`^${op} \\(step 4 "commit"\\) was sent; answers: `));
          expect(r.hint).toBe(
            `see the fleet: syncbook status rb.yaml; if every instance shows the ${op} took effect, go on after it with: syncbook run rb.yaml --var site=west --from done; if not, find out from the service's own log which instances received /${op} and send it by hand only to those that did not, then go on after it`,
          );
        }
      }
    }
    // one at the runbook's last step: nothing to go on with after it; one at the step to resume is judged there
    const last = reconcile(
      state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 4, "unknown")]),
      RB,
      fleet("RUNNING"),
    );
    expect(last.ok || last.hint).toMatch(/took effect, the runbook has no step after it; if not/);
    expect(reconcile(state(["ok", "ok", "ok", "cut"], [cmd("commit", 3, "unknown")]), RB, fleet("RUNNING")).ok).toBe(
      false,
    );
    // one sent outside any step (-1) is only recorded; one at a step past the runbook's end (carried
    // from a journal of a longer runbook) is named by its place
    expect(
      reconcile(state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", -1, "unknown")]), RB, fleet("RUNNING")).ok,
    ).toBe(true);
    const past = reconcile(
      state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 9, "unknown")]),
      RB,
      fleet("RUNNING"),
    );
    expect(past.ok || past.message).toMatch(/^commit \(step 10 "#10"\) was sent; answers: i0 unknown;/);
    expect(past.ok || past.hint).toMatch(/took effect, the runbook has no step after it;/);
    // a step before the one to resume: done, not judged
    const before = reconcile(
      state(["ok", "ok", "ok", "ok", "cut"], [cmd("commit", 3, "unknown")]),
      RB,
      fleet("COMMITTED"),
    );
    expect(before.ok).toBe(true);
  });

  // the run's end and status ask it before they offer --resume (src/run/earlier.ts
  // `resumeRefusedByOwn`): a review saw the end name another check's refusal, and status offer a
  // --resume that "reads the fleet and adopts it", where the resume refused on the journal alone
  it("the refusal of a command ahead is the journal's alone: sentAhead says reconcile's words whatever the fleet shows", () => {
    const s = state(
      ["ok", "cut"],
      [cmd("start", 0, "ok"), { ...cmd("commit", 3, "unknown"), carried: { from: "/j/e.jsonl" } }],
    );
    expect(resumeStep(s)).toEqual({ at: 1, wentPast: [] });
    const ahead = sentAhead(s, RB, 1);
    expect(ahead?.message).toMatch(/^commit \(step 4 "commit"\) was sent by an earlier run of this cutover /);
    for (const f of [fleet("RUNNING"), fleet("COMMITTED"), fleet("IDLE")]) {
      const r = reconcile(s, RB, f);
      expect(r.ok ? r : { message: r.message, hint: r.hint }).toEqual(ahead);
    }
    expect(sentAhead(state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "error")]), RB, 1)).toBeUndefined();
    // a step the runbook as read now does not have (a reader's runbook shorter than the journal's): named by its place
    expect(sentAhead(s, { ...RB, steps: RB.steps.slice(0, 1) }, 1)?.message).toMatch(
      /this resume goes on at step 2 "#2", before it/,
    );
    // past a failed step the run went on past (continueOnError), as reconcile goes on
    expect(resumeStep(state(["ok", "failed", "ok", "cut"]))).toEqual({ at: 3, wentPast: [1] });
    expect(resumeStep(state(["ok", "failed"]))).toEqual({ at: 1, wentPast: [] });
  });

  it("two commands in the step to resume: the last one is judged, and the note lists both", () => {
    // e.g. a plugin step that paused and resumed (facts: "`resume` only in PAUSED → RUNNING")
    const s = state(["ok", "cut"], [cmd("start", 0, "ok"), cmd("pause", 1, "ok"), cmd("resume", 1, "unknown")]);
    expect(resumed(reconcile(s, RB, fleet("RUNNING")))).toEqual({
      ok: true,
      resumeAt: 1,
      adopt: [{ stepIndex: 1, op: "resume", reason: "resume took effect (fleet: i0 RUNNING); it is not sent again" }],
      notes: [
        `step 2 "wait" sent pause, resume; judging the last one`,
        `resume (step 2 "wait") was sent; answers: i0 unknown; every instance is RUNNING: adopted, not sent again`,
      ],
    });
  });
});

describe("a command the fleet shows took effect everywhere: adopted", () => {
  it("the note lists every answer (with its error) and the states seen; the adoption says why", () => {
    const s = state(
      ["cut"],
      [
        sent("start", 0, [
          { instance: "i0", answered: "unknown", error: "socket hang up" },
          { instance: "i1", answered: "unknown" },
        ]),
      ],
    );
    expect(resumed(reconcile(s, RB, fleet("RUNNING", "PAUSED")))).toEqual({
      ok: true,
      resumeAt: 0,
      adopt: [
        { stepIndex: 0, op: "start", reason: "start took effect (fleet: i0 RUNNING, i1 PAUSED); it is not sent again" },
      ],
      notes: [
        // adopted, the step is not run again: no "it runs again" beside it (an adversarial run read both)
        `start (step 1 "start") was sent; answers: i0 unknown (socket hang up), i1 unknown; every instance is RUNNING/PAUSED: adopted, not sent again`,
      ],
    });
  });

  it("yet refused by instances: refused, naming each refuser", () => {
    const r = refused(
      reconcile(state(["failed"], [cmd("start", 0, "error", "error")]), RB, fleet("RUNNING", "RUNNING")),
    );
    expect(r).toMatchObject({
      code: "disagree",
      message: `start (step 1 "start") was sent; answers: i0 error, i1 error; i0, i1 refused it, yet every instance shows it took effect (fleet: i0 RUNNING, i1 RUNNING)`,
      hint: "something else changed the fleet's state (another runner, an operator?): find out what happened before going on; then resume from a new run or by hand",
    });
  });
});

describe("a command the fleet shows took effect nowhere: sent again", () => {
  it("a start whose request never left (no answer from any instance) is sent again", () => {
    const r = resumed(reconcile(state(["cut"], [sent("start", 0, [])]), RB, fleet("IDLE", "IDLE")));
    expect(r.adopt).toEqual([]);
    expect(r.notes).toEqual([
      `start (step 1 "start") was sent; answers: no instance; every instance is still IDLE, so it did not take effect: it will be sent again`,
      cutOff(1, "start"),
    ]);
  });

  it("yet accepted by instances: refused, naming each", () => {
    const r = refused(reconcile(state(["cut"], [cmd("start", 0, "ok", "ok")]), RB, fleet("IDLE", "IDLE")));
    expect(r).toMatchObject({
      code: "disagree",
      message: `start (step 1 "start") was sent; answers: i0 ok, i1 ok; i0, i1 accepted it, yet no instance shows its effect (fleet: i0 IDLE, i1 IDLE)`,
      hint: "an instance that confirmed a command and then shows the state before it may have restarted or been reset: find out what happened before going on",
    });
  });

  const COMMIT_AGAIN = `commit (step 4 "commit") was sent; answers: i0 error, i1 error; every instance is still RUNNING, so the commit did not take effect: it will be sent again once the commit interlocks pass again (RUNNING, canCommit, writes stopped)`;
  const commitCut = (more: Partial<JournalState> = {}) =>
    state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "error", "error")], more);

  it("a commit with no usable answer is never sent again while every instance is RUNNING: an instance may hold it", () => {
    const s = state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "unknown", "unknown")]);
    expect(refused(reconcile(s, RB, fleet("RUNNING", "RUNNING")))).toMatchObject({
      code: "in-doubt",
      message: `commit (step 4 "commit") was sent; answers: i0 unknown, i1 unknown; every instance is still RUNNING, but i0, i1 may have received it (no usable answer): commit is held by an instance until every instance has it, and its state shows nothing until then; it is never sent twice`,
    });
  });

  it("a commit never sent (refused or journaled as not sent) goes again through its interlocks; canCommit true everywhere adds nothing", () => {
    const r = resumed(reconcile(commitCut(), RB, fleet("RUNNING", "RUNNING")));
    expect([r.resumeAt, r.adopt, r.notes]).toEqual([3, [], [COMMIT_AGAIN, cutOff(4, "commit")]]);
  });

  it("a commit with canCommit false on instances: the note names them; stopped writes are counted", () => {
    const notReady = fleet("RUNNING", "RUNNING").map((f) => ({ ...f, canCommit: false }));
    const r = resumed(reconcile(commitCut({ stopWritesSucceeded: true }), RB, notReady));
    expect(r.notes).toEqual([
      COMMIT_AGAIN,
      "canCommit is false on i0, i1: the commit interlock waits for it or refuses",
      "writes were stopped by an earlier step of this run (its undo has not run): the commit interlock counts it",
      cutOff(4, "commit"),
    ]);
  });
});

describe("a command that reached part of the fleet: completed, to the rest only", () => {
  // spec: "identical API commands must be sent to every instance"
  it("a start two instances did not take goes to those two, never again to the one that took it", () => {
    const s = state(["cut"], [cmd("start", 0, "error", "unknown", "error")]);
    expect(resumed(reconcile(s, RB, fleet("IDLE", "RUNNING", "IDLE")))).toEqual({
      ok: true,
      resumeAt: 0,
      adopt: [],
      complete: {
        stepIndex: 0,
        op: "start",
        targets: ["i0", "i2"],
        refused: ["i0", "i2"],
        reason: "completing the start i1 took it",
      },
      notes: [
        `start (step 1 "start") was sent; answers: i0 error, i1 unknown, i2 error; it reached only part of the fleet (fleet: i0 IDLE, i1 RUNNING, i2 IDLE; completing the start i1 took it): it will be sent to i0, i2 only, once those pass its interlocks and you confirm; never again to the others`,
        cutOff(1, "start"),
      ],
    });
  });

  it("one target: 'that instance passes'; the instances that took it are all named", () => {
    const s = state(
      ["ok", "ok", "ok", "cut"],
      [cmd("start", 0, "ok", "ok", "ok"), cmd("commit", 3, "ok", "ok", "error")],
    );
    const r = resumed(reconcile(s, RB, fleet("COMMITTING", "COMMITTED", "RUNNING")));
    expect(r.complete).toEqual({
      stepIndex: 3,
      op: "commit",
      targets: ["i2"],
      refused: ["i2"],
      reason: "completing the commit i0, i1 took it",
    });
    expect(r.notes[0]).toBe(
      `commit (step 4 "commit") was sent; answers: i0 ok, i1 ok, i2 error; it reached only part of the fleet (fleet: i0 COMMITTING, i1 COMMITTED, i2 RUNNING; completing the commit i0, i1 took it): it will be sent to i2 only, once that instance passes its interlocks and you confirm; never again to the others`,
    );
  });

  it("an instance that refused it, and one that never got it, both need it; only the refuser is listed as refused", () => {
    // i2 has no request in the journal at all
    const s = state(["failed"], [cmd("start", 0, "error", "ok")]);
    const r = resumed(reconcile(s, RB, fleet("IDLE", "RUNNING", "IDLE")));
    expect(r.complete).toEqual({
      stepIndex: 0,
      op: "start",
      targets: ["i0", "i2"],
      refused: ["i0"],
      reason: "completing the start i1 took it",
    });
  });

  it("a blocking commit one instance refused while another waits in its round: to the refuser only", () => {
    // facts: "`commit` and `reverse` block until they have been called on every instance"
    const s = state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "unknown", "error")]);
    const r = resumed(reconcile(s, RB, fleet("RUNNING", "RUNNING")));
    expect(r.complete).toEqual({
      stepIndex: 3,
      op: "commit",
      targets: ["i1"],
      refused: ["i1"],
      reason: "completing the commit i0 got it and waits for the rest of the fleet",
    });
    expect(r.notes[0]).toBe(
      `commit (step 4 "commit") was sent; answers: i0 unknown, i1 error; it reached only part of the fleet (fleet: i0 RUNNING, i1 RUNNING; completing the commit i0 got it and waits for the rest of the fleet): it will be sent to i1 only, once that instance passes its interlocks and you confirm; never again to the others`,
    );
  });

  it("an instance that accepted it yet shows the state before it is never completed: refused, saying who is where", () => {
    const s = state(["cut"], [cmd("start", 0, "ok", "ok", "ok", "ok")]);
    const r = refused(reconcile(s, RB, fleet("IDLE", "IDLE", "RUNNING", "PAUSED")));
    expect(r).toMatchObject({
      code: "disagree",
      message: `start (step 1 "start") was sent; answers: i0 ok, i1 ok, i2 ok, i3 ok; the fleet disagrees with itself: i2 RUNNING, i3 PAUSED (start took effect); i0 IDLE, i1 IDLE (start did not take effect)`,
      hint: "the start reached only some instances. Identical commands must reach every instance: send start by hand to the ones that did not take it (after checking the preconditions), then resume",
    });
    const commit = state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "ok", "ok")]);
    expect(refused(reconcile(commit, RB, fleet("COMMITTING", "RUNNING"))).hint).toBe(
      "the commit reached only some instances. Identical commands must reach every instance: send commit by hand to the ones that did not take it (after checking the preconditions: writes stopped, canCommit true), then resume",
    );
  });
});

describe("a fleet in a state neither before nor after the command: refused", () => {
  const HINT = "find out what moved the fleet to these states before going on";

  it("every instance neither", () => {
    const s = state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "unknown", "unknown")]);
    expect(refused(reconcile(s, RB, fleet("IDLE", "PAUSED")))).toMatchObject({
      code: "disagree",
      message: `commit (step 4 "commit") was sent; answers: i0 unknown, i1 unknown; the fleet disagrees with itself: i0 IDLE, i1 PAUSED (neither)`,
      hint: HINT,
    });
  });

  it("some took it, others neither: not a partial command to send by hand", () => {
    const s = state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok", "ok"), cmd("commit", 3, "unknown", "unknown")]);
    expect(refused(reconcile(s, RB, fleet("COMMITTING", "PAUSED")))).toMatchObject({
      message: `commit (step 4 "commit") was sent; answers: i0 unknown, i1 unknown; the fleet disagrees with itself: i0 COMMITTING (commit took effect); i1 PAUSED (neither)`,
      hint: HINT,
    });
  });

  it("a reading of no instance proves nothing: a sent command is neither adopted nor sent again", () => {
    const r = refused(reconcile(state(["cut"], [sent("start", 0, [])]), RB, []));
    expect(r.code).toBe("disagree");
  });
});

describe("no command from the step to resume: the fleet must be where the journal left it", () => {
  it("a reading of no instance shows no effect: resumes", () => {
    expect(resumed(reconcile(state(["cut"]), RB, [])).resumeAt).toBe(0);
  });

  it("a fleet in the step's after-states that the last command explains: resumes (a reverse step meeting a COMMITTING fleet)", () => {
    // facts: "`reverse` (only in COMMITTED…): COMMITTED → REVERSING → RUNNING"; COMMITTING comes
    // after a commit (spec: "progress then shows COMMITTING, then COMMITTED")
    const s = state(
      ["ok", "ok", "ok", "-"],
      [cmd("pause", 0, "ok", "ok"), cmd("resume", 1, "ok", "ok"), cmd("commit", 2, "ok", "ok")],
      {},
      PRR,
    );
    const r = resumed(reconcile(s, rb(PRR), fleet("COMMITTING", "COMMITTING")));
    expect([r.resumeAt, r.adopt, r.notes]).toEqual([3, [], []]);
  });

  it("a fleet in the step's after-states that the last command does not explain everywhere: someone else sent it", () => {
    const s = state(
      ["ok", "ok", "ok", "-"],
      [cmd("pause", 0, "ok", "ok"), cmd("resume", 1, "ok", "ok"), cmd("commit", 2, "ok", "ok")],
      {},
      PRR,
    );
    expect(refused(reconcile(s, rb(PRR), fleet("COMMITTING", "REVERSING")))).toMatchObject({
      code: "disagree",
      message: `the journal shows no reverse sent by step 4 "reverse", yet every instance shows its effect (fleet: i0 COMMITTING, i1 REVERSING)`,
      hint: "the journal is written before every command, so this run did not send it: someone else did. Check who, then mark the step done by hand or start a new run",
    });
  });

  it("the step's command is its kind's trait, not its kind's name (issue 40: a kind named for no command may send one)", () => {
    const steps = [
      { index: 0, id: "start", kind: "start" },
      { index: 1, id: "drain", kind: "drain" },
    ];
    const s = state(["ok", "cut"], [cmd("start", 0, "ok", "ok")], {}, steps);
    const runbook = {
      hash: RB.hash,
      steps: [
        { id: "start", kind: "start", command: "start" as const },
        { id: "drain", kind: "drain", command: "pause" as const },
      ],
      args: RB.args,
    };
    expect(refused(reconcile(s, runbook, fleet("PAUSED", "PAUSED"))).message).toBe(
      `the journal shows no pause sent by step 2 "drain", yet every instance shows its effect (fleet: i0 PAUSED, i1 PAUSED)`,
    );
  });

  it("the expected states come from the latest step's command, whatever the order of the journal's lines", () => {
    const s = state(["ok", "ok", "cut"], [cmd("resume", 1, "ok"), cmd("pause", 0, "ok")], {}, PRR);
    expect(resumed(reconcile(s, rb(PRR), fleet("RUNNING"))).resumeAt).toBe(2);
  });

  it("a fleet elsewhere is refused, with what it should be and what to do", () => {
    const s = state(["ok", "cut"], [cmd("start", 0, "ok", "ok")]);
    expect(refused(reconcile(s, RB, fleet("RUNNING", "IDLE")))).toMatchObject({
      code: "disagree",
      message:
        "the journal's last command was start (step 1), so every instance should be RUNNING; the fleet shows i0 RUNNING, i1 IDLE",
      hint: "something changed the fleet since the journal's last command (an operator, another runner, a service restart?): find out what before going on",
    });
  });
});

describe("hooks left open", () => {
  const hook = (stepIndex: number, use: string, more: Partial<HookRun> = {}): HookRun => ({
    stepIndex,
    id: `h-${use}`,
    use,
    ok: true,
    undone: false,
    ...more,
  });
  const HOOKS = [
    hook(0, "drain"),
    hook(1, "dns"),
    hook(1, "undone", { undone: true }),
    hook(1, "failed", { ok: false }),
    hook(1, "unfinished", { ok: undefined }),
    hook(2, "this-step"),
    hook(3, "later"),
  ];

  it("hooks of earlier steps that succeeded and were not undone are listed, each with its step", () => {
    const r = resumed(
      reconcile(state(["ok", "ok", "cut"], [cmd("start", 0, "ok")], { hooksRan: HOOKS }), RB, fleet("RUNNING")),
    );
    expect(r.notes).toEqual(["hooks that ran and were not undone: drain (step 1), dns (step 2)", cutOff(3, "stop")]);
  });

  // an outside review: after an adopted reverse the note named a stop the commit no longer counts
  it("a reverse adopted here: the forward sync's write stop is not named as counting for a commit", () => {
    const s = state(
      ["ok", "ok", "ok", "cut"],
      [cmd("pause", 0, "ok"), cmd("resume", 1, "ok"), cmd("commit", 2, "ok"), cmd("reverse", 3, "unknown")],
      { stopWritesSucceeded: true },
      PRR,
    );
    const r = resumed(reconcile(s, rb(PRR), fleet("RUNNING")));
    expect(r.adopt.map((a) => a.op)).toEqual(["reverse"]);
    expect(r.notes.join("\n")).not.toMatch(/the commit interlock counts it/);
    // another command adopted leaves the sync's direction, and the note, as they were
    const c = state(["ok", "ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 3, "unknown")], {
      stopWritesSucceeded: true,
    });
    const adopted = resumed(reconcile(c, RB, fleet("COMMITTED")));
    expect(adopted.adopt.map((a) => a.op)).toEqual(["commit"]);
    expect(adopted.notes.join("\n")).toMatch(/the commit interlock counts it/);
  });

  it("once writes were stopped, that note stands for them", () => {
    const s = state(["ok", "ok", "cut"], [cmd("start", 0, "ok")], { hooksRan: HOOKS, stopWritesSucceeded: true });
    expect(resumed(reconcile(s, RB, fleet("RUNNING"))).notes).toEqual([
      "writes were stopped by an earlier step of this run (its undo has not run): the commit interlock counts it",
      cutOff(3, "stop"),
    ]);
  });
});

// an adversarial run went round `--resume` and `--from commit` refusals with no command to run:
// the commit in doubt is now given as the command a person pastes, per instance, and the resume after
describe("a commit in doubt on a fleet still RUNNING: the way by hand, as commands", () => {
  it("a curl per instance that may have received it, its URL as journaled (no trailing slash twice, a password masked), then the resume", () => {
    const s = state(
      ["ok", "ok", "ok", "cut"],
      [cmd("start", 0, "ok", "ok", "ok"), cmd("commit", 3, "unknown", "unknown", "unknown")],
    );
    const readings = fleet("RUNNING", "RUNNING", "RUNNING").map((f, i) =>
      i === 0
        ? { ...f, url: "http://admin:***@127.0.0.1:27182/" }
        : i === 1
          ? { ...f, url: "http://127.0.0.1:27183" }
          : f,
    );
    const r = reconcile(s, RB, readings);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe("in-doubt");
    expect(r.hint).toBe(
      "find out from the service's own log which instances received /commit; send it by hand only to those that did not (writes stopped, canCommit true); to each as its log allows, all at once (a commit answers only once every instance has it), a line each (put each instance's credentials back where *** stands):\n" +
        "    curl -sS -X POST 'http://admin:***@127.0.0.1:27182/api/v1/commit' -H 'content-type: application/json' --data-raw '{}' &  # i0\n" +
        "    curl -sS -X POST http://127.0.0.1:27183/api/v1/commit -H 'content-type: application/json' --data-raw '{}' &  # i1\n" +
        "    # i2: POST {its URL}/api/v1/commit with the body {}\n" +
        "  then resume (the journal then sees its effect): syncbook run rb.yaml --var site=west --resume",
    );
    // no credentials in any URL: nothing to put back said
    const plain = reconcile(
      s,
      RB,
      fleet("RUNNING", "RUNNING", "RUNNING").map((f) => ({ ...f, url: "http://h:1" })),
    );
    expect(plain.ok || plain.hint).toContain("has it), a line each:\n    curl -sS -X POST http://h:1/api/v1/commit");
    // a start in doubt: its body is the runbook's, no command is made of it; the resume still named
    const st = reconcile(state(["cut"], [cmd("start", 0, "unknown", "unknown")]), RB, fleet("IDLE", "IDLE"));
    expect(st.ok || st.hint).toBe(
      "find out from the service's own log which instances received /start; send it by hand only to those that did not, then resume (the journal then sees its effect): syncbook run rb.yaml --var site=west --resume",
    );
    // a resume given --allow-changed-runbook for a changed runbook: the one it names carries the flag
    // too (a plain one is refused as a changed runbook; a review of every hint's command)
    const changed = reconcile({ ...s, hash: "0".repeat(64) }, RB, readings, { allowChangedRunbook: true });
    expect(changed.ok || changed.hint).toMatch(
      /then resume \(the journal then sees its effect\): syncbook run rb\.yaml --var site=west --resume --allow-changed-runbook$/,
    );
    expect(reconcile({ ...s, hash: "0".repeat(64) }, RB, readings)).toMatchObject({
      ok: false,
      code: "changed-runbook",
    });
  });
});
