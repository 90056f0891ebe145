/**
 * Issue 40 point 3 and issue 37 point 2: the cutover's read model (src/model/), the one fold every
 * reader takes its view from. Known events with known times: runs and how each ended, the time no
 * runner was alive (a kill -9, then a resume whose journal header comes before its run), steps with
 * every attempt, the fleet with its lag trend, the verifier, prompts with who answered them, and
 * the write-stop window across runs with no runner's time and a person's answer charged as such.
 * Journals joined into one stream keep their request ids and delivery references apart.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent, RunEventMap, RunEventType } from "../../src/events.js";
import { CutoverFold, foldEvents, joinJournals, lagTrend, shiftLine } from "../../src/model/fold.js";
import { MODEL_VERSION } from "../../src/model/contract.js";
import { traitsOf } from "../../src/steps/index.js";
import { commandSent } from "../support/journal.js";

function stream(seq0 = 0) {
  const events: RunEvent[] = [];
  let seq = seq0;
  const at = <K extends RunEventType>(t: number, type: K, payload: RunEventMap[K]): RunEvent => {
    const e = { type, seq: ++seq, at: t, ...payload } as unknown as RunEvent;
    events.push(e);
    return e;
  };
  return { events, at };
}

const STEPS = [
  { index: 0, id: "stop", kind: "stopWrites", title: "stop" },
  { index: 1, id: "commit", kind: "commit", title: "commit" },
  { index: 2, id: "hold", kind: "hook", title: "hold" },
  { index: 3, id: "committed", kind: "waitFor", title: "committed" },
];
const inst = (index: number) => ({ url: `http://127.0.0.1:${27182 + index}`, name: `sync${index}`, index });
const started = (mode: "run" | "resume"): RunEventMap["run.started"] =>
  ({
    runbook: "r",
    file: "r.yaml",
    hash: "h",
    cutover: "20261129T000000Z-aaaaaaaa",
    by: { user: "ana", host: "bastion", pid: 7 },
    instances: [inst(0), inst(1)],
    // the runbook declares sync0 the first process (`startedFirst`): only its canWrite is valid
    // (mongodb/docs reference/cutover-process.txt: the others' "is not valid")
    canWriteFrom: 0,
    destinationWrites: { on: "canWrite", instance: 0 },
    mode,
    steps: STEPS,
  }) satisfies RunEventMap["run.started"];

/**
 * Journal A: run 1 stops writes at 1000, its commit splits, it ends failed at 3000. Journal B:
 * run 2 starts at 5000 (--from commit), a confirm answered by a person (asked after the event at
 * 5100, answered at 9100), commits, starts `hold` at 9300 and is killed (its last event 9310);
 * the resume's journal header at 15000, its run at 16000; canWrite at 20000.
 */
function journals() {
  const a = stream();
  a.at(0, "run.started", started("run"));
  a.at(900, "step.started", STEPS[0]!);
  a.at(990, "hook.started", { index: 0, id: "stop", use: "shell", undo: false });
  a.at(999, "hook.finished", { index: 0, id: "stop", use: "shell", undo: false, ok: true, durationMs: 9 });
  a.at(1000, "window.opened", { index: 0, id: "stop" });
  a.at(1001, "step.finished", { index: 0, id: "stop", outcome: "ok", durationMs: 101 });
  a.at(1100, "step.started", STEPS[1]!);
  a.at(1200, "request.sent", { id: 1, instance: inst(0), target: "service", method: "POST", path: "/api/v1/commit" });
  a.at(1300, "response.received", { id: 1, instance: inst(0), target: "service", ok: false, durationMs: 100 });
  a.at(2000, "step.finished", { index: 1, id: "commit", outcome: "failed", durationMs: 900, error: "split" });
  a.at(2500, "notification.sent", { entry: 0, use: "pagerduty", event: 12, about: "run.finished" });
  a.at(3000, "run.finished", {
    outcome: "failed",
    exitCode: 1,
    committed: false,
    durationMs: 3000,
    split: "commit reached 1 of 2 instances",
  });
  const b = stream();
  b.at(5000, "run.started", started("run"));
  b.at(5050, "step.started", STEPS[1]!);
  b.at(5100, "decision", { index: 1, id: "commit", kind: "interlock", ok: true, check: "can-commit", reason: "ok" });
  b.at(9100, "decision", {
    index: 1,
    id: "commit",
    kind: "interlock",
    ok: true,
    check: "confirm",
    reason: "yes: Send commit to sync1 only (--only sync1)?",
  });
  b.at(9150, "request.sent", { id: 1, instance: inst(1), target: "service", method: "POST", path: "/api/v1/commit" });
  b.at(9200, "response.received", { id: 1, instance: inst(1), target: "service", ok: true, durationMs: 50 });
  b.at(9250, "step.finished", { index: 1, id: "commit", outcome: "ok", durationMs: 4200 });
  b.at(9300, "step.started", STEPS[2]!);
  b.at(9310, "hook.started", { index: 2, id: "hold", use: "shell", undo: false });
  // killed here; the resume opens the journal (its header) long before its run starts
  b.events.push({ type: "journal.resumed", seq: b.events.length + 1, at: 15_000 } as unknown as RunEvent);
  const c = stream(b.events.length);
  c.at(16_000, "run.started", started("resume"));
  c.at(16_010, "step.started", STEPS[3]!);
  for (const [t, lag0, lag1] of [
    [17_000, 9, 4],
    [18_000, 6, 4],
    [19_000, 3, 4],
  ] as const) {
    c.at(t, "progress.sampled", {
      instance: inst(0),
      progress: { state: "COMMITTING", canWrite: false, lagTimeSeconds: lag0 } as never,
    });
    c.at(t + 1, "progress.sampled", {
      instance: inst(1),
      progress: { state: "COMMITTING", canWrite: false, lagTimeSeconds: lag1 } as never,
    });
  }
  c.at(20_000, "progress.sampled", { instance: inst(0), progress: { state: "COMMITTED", canWrite: true } as never });
  c.at(20_001, "progress.sampled", { instance: inst(1), progress: { state: "COMMITTED", canWrite: true } as never });
  c.at(20_010, "step.finished", { index: 3, id: "committed", outcome: "ok", durationMs: 4000 });
  c.at(20_020, "run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 4020 });
  return [
    { file: "a.jsonl", events: a.events },
    { file: "b.jsonl", events: [...b.events, ...c.events] },
  ];
}

describe("the cutover's read model", () => {
  const joined = joinJournals(journals());
  const model = foldEvents(joined.events, { traits: traitsOf, journals: joined.journals });

  it("is versioned and names the cutover", () => {
    expect(model.version).toBe(MODEL_VERSION);
    expect(model.cutover).toMatchObject({
      id: "20261129T000000Z-aaaaaaaa",
      runbook: "r",
      startedAt: 0,
      committed: true,
    });
  });

  it("names every run, the journal it wrote and how it ended", () => {
    expect(model.runs.map((r) => [r.n, r.mode, r.journal, r.outcome, r.ended, r.lastAt])).toEqual([
      [1, "run", "a.jsonl", "failed", "failed", 3000],
      // killed: its last event is its end, not the resume's journal header
      [2, "run", "b.jsonl", "unfinished", "no-word", 9310],
      [3, "resume", "b.jsonl", "ok", "ok", 20_020],
    ]);
    expect(model.runs[0]!.split).toBe("commit reached 1 of 2 instances");
  });

  it("says when no runner was alive", () => {
    expect(model.gaps).toEqual([
      { after: 1, from: 3000, to: 5000, ms: 2000, how: "ended" },
      { after: 2, from: 9310, to: 16_000, ms: 6690, how: "killed" },
    ]);
  });

  it("keeps every attempt of a step; the killed run's open step ends at its last event", () => {
    const step = (id: string) => model.steps.find((s) => s.id === id)!;
    expect(step("commit").attempts.map((a) => [a.run, a.outcome])).toEqual([
      [1, "failed"],
      [2, "ok"],
    ]);
    expect(step("hold").attempts).toEqual([{ run: 2, startedAt: 9300, endedAt: 9310, outcome: "running" }]);
    expect(step("hold").outcome).toBe("running");
    expect(model.current).toBeUndefined();
  });

  it("tells who answered each prompt and when", () => {
    expect(model.prompts).toEqual([
      {
        run: 2,
        index: 1,
        id: "commit",
        kind: "confirm",
        question: "Send commit to sync1 only (--only sync1)?",
        answer: "yes",
        by: "ana@bastion",
        at: 9100,
      },
    ]);
  });

  // an adversarial run: a rehearsal said "by --yes" where none was given (it answers every confirm)
  it("a confirm answered by --yes, or by a rehearsal: said so, no person's", () => {
    const by = (reason: string) => {
      const { events, at } = stream();
      at(1, "run.started", started("run"));
      at(2, "decision", { index: 1, id: "commit", kind: "interlock", ok: true, check: "confirm", reason });
      return foldEvents(events, { traits: traitsOf }).prompts.map((p) => [p.by, p.question]);
    };
    expect(by("answered yes by --yes: Commit?")).toEqual([["--yes", "Commit?"]]);
    expect(by("answered yes by the rehearsal: Commit?")).toEqual([["the rehearsal", "Commit?"]]);
    expect(by("yes: Commit?")).toEqual([["ana@bastion", "Commit?"]]);
  });

  it("measures one write-stop window across the runs: no runner's time is nobody's, a person's answer the operator's", () => {
    expect(model.windows).toHaveLength(1);
    const w = model.window!;
    expect(w).toMatchObject({ openedAt: 1000, closedAt: 20_000, closedBy: "canWrite", open: false }); // the first process's canWrite (sync0, at 20000)
    // 3000 → 5000 and 9310 → 16000: no runner
    expect(w.shares.none).toBe(2000 + 6690);
    // the confirm asked after 5100 and answered at 9100
    expect(w.shares.operator).toBe(4000);
    expect(w.parts.find((p) => p.share === "operator")?.what).toBe(
      "commit: the operator's answer (a question asked in the step)",
    );
    // every millisecond is someone's, and the runners' share is what they did while alive
    expect(Object.values(w.shares).reduce((a, b) => a + b, 0)).toBe(w.measuredMs);
    expect(w.shares.runner).toBeLessThan(w.shares.none);
  });

  it("holds the fleet as last read, with its lag's trend", () => {
    expect(model.fleet.instances.map((i) => [i.label, i.state, i.canWrite, i.lagTrend])).toEqual([
      ["sync0", "COMMITTED", true, "falling"],
      ["sync1", "COMMITTED", undefined, "steady"], // not the first process: its canWrite is not kept
    ]);
    expect(lagTrend([3, 4, 6])).toBe("rising");
    expect(lagTrend([3])).toBeUndefined();
  });

  it("keeps the journals' request ids and delivery references apart when joined", () => {
    const ids = joined.events.flatMap((e) => (e.type === "request.sent" ? [e.id] : []));
    expect(new Set(ids).size).toBe(ids.length);
    const seqs = joined.events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(model.notifications).toEqual({
      delivered: 0,
      notDelivered: ["pagerduty (notify #1) of run.finished: in doubt (sent, no answer recorded)"],
    });
  });

  it("is plain JSON: its view survives a round trip and is a copy", () => {
    expect(JSON.parse(JSON.stringify(model))).toEqual(model);
    const f = new CutoverFold({ traits: traitsOf });
    for (const e of joined.events) f.apply(e);
    const v = f.view();
    v.steps[0]!.id = "changed";
    expect(f.view().steps[0]!.id).toBe("stop");
  });
});

describe("an --abort run", () => {
  it("is one as its run.started says, killed before its end too; a run that does not say so is not", () => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    f.apply(s.at(0, "run.started", started("run")));
    f.apply(s.at(10, "run.started", { ...started("resume"), abort: true }));
    expect(f.view().runs.map((r) => [r.mode, r.abort])).toEqual([
      ["run", undefined],
      ["resume", true],
    ]);
  });
});

describe("the lag's trend at any pace of reads", () => {
  // the write-stop window reads every 100 ms: five answers span 0.4 s, and the ETA stayed unknown
  it("is known after a second of answers 100 ms apart, over answers a second apart up to the last", () => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    f.apply(s.at(0, "run.started", started("run")));
    const rate = (): number | undefined => f.view().fleet.instances[0]?.lagRate;
    // the lag falls 1 s per second: 20 s at t=0, read every 100 ms for 6 s
    for (let t = 0; t <= 6000; t += 100) {
      f.apply(
        s.at(t, "progress.sampled", {
          instance: inst(0),
          progress: { state: "RUNNING", lagTimeSeconds: 20 - t / 1000 },
        } as never),
      );
      if (t === 900) expect(rate(), "under a second of answers: not known").toBeUndefined();
      if (t === 1000) expect(rate()).toBeCloseTo(-1, 5);
    }
    expect(rate()).toBeCloseTo(-1, 5);
    expect(f.view().fleet.instances[0]?.lagTrend).toBe("falling");
    // the trend ends at the last answer: a jump shows at once, not a second later
    f.apply(
      s.at(6050, "progress.sampled", {
        instance: inst(0),
        progress: { state: "RUNNING", lagTimeSeconds: 30 },
      } as never),
    );
    expect(f.view().fleet.instances[0]?.lagTrend).toBe("rising");
  });
});

describe("a fleet that answers COMMITTED", () => {
  it("is committed once every instance's last answer says so, whatever answered last, and stays so", () => {
    const s = stream();
    s.at(0, "run.started", started("run"));
    const f = new CutoverFold({ traits: traitsOf });
    const answer = (t: number, i: number, state: string | undefined): boolean => {
      f.apply(s.at(t, "progress.sampled", { instance: inst(i), progress: state ? { state } : {} } as never));
      return f.view().cutover.committed;
    };
    f.apply(s.events[0]!);
    expect(answer(10, 0, "COMMITTED")).toBe(false);
    expect(answer(20, 1, "COMMITTING")).toBe(false);
    expect(answer(30, 0, "COMMITTED")).toBe(false);
    // the answer that completes the fleet is the one that says COMMITTED
    expect(answer(40, 1, "COMMITTED")).toBe(true);
    // an answer without a state, or a later one, does not take it back
    expect(answer(50, 0, undefined)).toBe(true);
    expect(answer(60, 1, "COMMITTING")).toBe(true);
  });

  // a fresh cutover refused at its start on a fleet an earlier sync committed: the page said
  // "cutover … · COMMITTED" of one that sent nothing. Still committed (a commit holds on the fleet
  // whoever sent it: "not committed" would say writes may go back on the source), said off record
  const fleetCommitted = (before: (s: ReturnType<typeof stream>) => RunEvent[]) => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    for (const e of [s.at(0, "run.started", started("run")), ...before(s)]) f.apply(e);
    for (const i of [0, 1])
      f.apply(s.at(100 + i, "progress.sampled", { instance: inst(i), progress: { state: "COMMITTED" } } as never));
    return f.view().cutover;
  };
  it("with no commit of this cutover on record: committed, and off record", () => {
    const c = fleetCommitted(() => []);
    expect(c.committed).toBe(true);
    expect(c.committedOffRecord).toBe(true);
  });
  it.each([
    [
      "a commit request",
      (s: ReturnType<typeof stream>) => [s.at(10, "request.sent", commandSent(1, "commit", inst(0)))],
    ],
    [
      "a commit fan-out",
      (s: ReturnType<typeof stream>) => [
        s.at(10, "commit.sent", { index: 1, id: "commit", instances: ["sync0", "sync1"] } as never),
      ],
    ],
    [
      "a run that said it committed",
      (s: ReturnType<typeof stream>) => [
        s.at(10, "run.finished", { outcome: "failed", exitCode: 1, committed: true, durationMs: 10 }),
      ],
    ],
    [
      "a --from run that continues the cutover",
      (s: ReturnType<typeof stream>) => [
        s.at(10, "run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 10 }),
        s.at(20, "run.started", {
          ...started("run"),
          carried: { from: "j1.jsonl", writesStopped: true, commitSent: true, commitAccepted: false },
        }),
      ],
    ],
  ] as const)("with %s on record: committed, and on record", (_, before) => {
    const c = fleetCommitted(before);
    expect(c.committed).toBe(true);
    expect(c.committedOffRecord).toBeUndefined();
  });
});

// a reverse starts a new sync: what was committed before it was the other's (the watch page said
// "COMMITTED", offered no way on and raised no alarm for a reversed sync never committed)
describe("after a reverse that took effect", () => {
  const REV_STEPS = [...STEPS, { index: 4, id: "back", kind: "reverse", title: "back" }];
  const rev = () => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    const apply = <K extends RunEventType>(t: number, type: K, payload: RunEventMap[K]) =>
      f.apply(s.at(t, type, payload));
    const all = (t: number, state: string) => {
      for (const i of [0, 1]) apply(t, "progress.sampled", { instance: inst(i), progress: { state } } as never);
    };
    apply(0, "run.started", { ...started("run"), steps: REV_STEPS });
    all(10, "COMMITTED");
    apply(20, "run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 20 });
    return { f, apply, all };
  };
  // a --from run that continues the cutover, as it journals its start: it counts the commit
  const reverse = (r: ReturnType<typeof rev>, outcome: "ok" | "failed") => {
    r.apply(100, "run.started", {
      ...started("run"),
      steps: REV_STEPS,
      carried: { from: "j1.jsonl", writesStopped: false, commitSent: true, commitAccepted: true },
    });
    r.apply(110, "step.started", REV_STEPS[4]!);
    r.apply(120, "step.finished", { index: 4, id: "back", outcome, durationMs: 10 });
  };

  it("the sync that runs now is not committed; the run that committed before it said the sync before", () => {
    const r = rev();
    expect(r.f.view().cutover.committed).toBe(true);
    reverse(r, "ok");
    expect(r.f.view().cutover).toMatchObject({ committed: false, reversed: { id: "back", at: 120 } });
    // the fleet seen COMMITTED before it no longer counts: it must be seen again, every instance
    r.all(130, "RUNNING");
    expect(r.f.view().cutover.committed).toBe(false);
    r.apply(200, "run.finished", {
      outcome: "failed",
      exitCode: 1,
      committed: false,
      durationMs: 100,
      reversed: "back",
    });
    expect(r.f.view().cutover.committed).toBe(false);
    // the reversed sync committed: a run says so at its end, or the fleet shows it
    r.all(300, "COMMITTED");
    expect(r.f.view().cutover.committed).toBe(true);
    const said = rev();
    reverse(said, "ok");
    said.apply(400, "run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 300 });
    expect(said.f.view().cutover.committed).toBe(true);
  });

  it("the verification's writesOff no longer counts: not after the reverse, a check sent since, or a restart", () => {
    const wo = () => {
      const r = rev();
      r.apply(30, "verifier.writesOff", { index: 1, id: "commit", generation: 4 });
      expect(r.f.view().verifier?.writesOffGeneration).toBe(4);
      return r;
    };
    const a = wo();
    reverse(a, "ok");
    expect(a.f.view().verifier?.writesOffGeneration).toBeUndefined();
    const b = wo();
    b.apply(40, "request.sent", {
      id: 9,
      target: "verifier",
      method: "POST",
      path: "/api/v1/check",
      body: {},
    } as never);
    expect(b.f.view().verifier?.writesOffGeneration).toBeUndefined();
    const c = wo();
    c.apply(40, "verifier.restarted", { index: 1, id: "commit", why: "generation 0" } as never);
    expect(c.f.view().verifier?.writesOffGeneration).toBeUndefined();
    // a progress read, or another request, keeps it
    const d = wo();
    d.apply(40, "request.sent", { id: 9, target: "verifier", method: "GET", path: "/api/v1/progress" } as never);
    d.apply(41, "request.sent", {
      id: 10,
      target: "verifier",
      method: "POST",
      path: "/api/v1/writesOff",
      body: {},
    } as never);
    expect(d.f.view().verifier?.writesOffGeneration).toBe(4);
    // a reverse that failed keeps it
    const e = wo();
    reverse(e, "failed");
    expect(e.f.view().verifier?.writesOffGeneration).toBe(4);
  });

  it("a reverse whose step failed (refused by part of the fleet) changes nothing; nor does a step of another kind", () => {
    const r = rev();
    reverse(r, "failed");
    expect(r.f.view().cutover.committed).toBe(true);
    expect(r.f.view().cutover.reversed).toBeUndefined();
    const other = rev();
    other.apply(100, "step.started", STEPS[2]!);
    other.apply(110, "step.finished", { index: 2, id: "hold", outcome: "ok", durationMs: 10 });
    expect(other.f.view().cutover.committed).toBe(true);
  });
});

// a reverse on its way after the commit: status says from the journal that it may have reached the
// fleet (src/run/earlier.ts reverseInDoubt); the report said committed and the watch page "committed"
describe("a reverse that may have reached the fleet", () => {
  const REV_STEPS = [
    ...STEPS,
    { index: 4, id: "back", kind: "reverse", title: "back" },
    { index: 5, id: "back-again", kind: "reverse", title: "back again" },
  ];
  const sent = (
    answers: ({ ok: true } | { ok: false; errorKind: "service" | "transport"; error: string } | undefined)[],
  ) => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    const apply = <K extends RunEventType>(t: number, type: K, payload: RunEventMap[K]) =>
      f.apply(s.at(t, type, payload));
    apply(0, "run.started", { ...started("run"), steps: REV_STEPS });
    for (const i of [0, 1])
      apply(10, "progress.sampled", { instance: inst(i), progress: { state: "COMMITTED" } } as never);
    apply(100, "step.started", REV_STEPS[4]!);
    for (const i of [0, 1]) apply(110, "request.sent", commandSent(10 + i, "reverse", inst(i)));
    for (const [i, a] of answers.entries())
      if (a) apply(120, "response.received", { id: 10 + i, instance: inst(i), target: "service", durationMs: 5, ...a });
    return { f, apply };
  };
  const refused = { ok: false as const, errorKind: "service" as const, error: "x: reverse refused: NotCommitted" };
  const lost = { ok: false as const, errorKind: "transport" as const, error: "x: reverse failed: timeout" };

  it("is in doubt where its runner died with it on its way, or an answer was lost or accepted; committed stays as it was", () => {
    expect(sent([]).f.view().cutover).toMatchObject({
      committed: true,
      reverseInDoubt: { id: "back", at: 110, instances: ["sync0", "sync1"] },
    });
    expect(sent([refused, lost]).f.view().cutover.reverseInDoubt).toEqual({
      id: "back",
      at: 110,
      instances: ["sync1"],
    });
    expect(sent([{ ok: true }, refused]).f.view().cutover.reverseInDoubt?.instances).toEqual(["sync0"]);
  });

  it("is not where every instance refused it, nor once its step ended ok (then it took effect)", () => {
    expect(sent([refused, refused]).f.view().cutover.reverseInDoubt).toBeUndefined();
    const ok = sent([{ ok: true }, { ok: true }]);
    ok.apply(130, "step.finished", { index: 4, id: "back", outcome: "ok", durationMs: 30 });
    expect(ok.f.view().cutover).toMatchObject({ reversed: { id: "back" } });
    expect(ok.f.view().cutover.reverseInDoubt).toBeUndefined();
    // a later reverse step that every instance refused: the earlier one, on its way, is still in doubt
    const again = sent([]);
    again.apply(200, "step.started", REV_STEPS[5]!);
    again.apply(210, "request.sent", commandSent(20, "reverse", inst(0)));
    again.apply(220, "response.received", { id: 20, instance: inst(0), target: "service", durationMs: 5, ...refused });
    expect(again.f.view().cutover.reverseInDoubt).toMatchObject({ id: "back", instances: ["sync0", "sync1"] });
    // the other way round: the first refused by every instance, the later one on its way
    const later = sent([refused, refused]);
    later.apply(200, "step.started", REV_STEPS[5]!);
    later.apply(210, "request.sent", commandSent(20, "reverse", inst(1)));
    expect(later.f.view().cutover.reverseInDoubt).toEqual({ id: "back-again", at: 210, instances: ["sync1"] });
    // a request that names no instance is no instance's
    const none = sent([refused, refused]);
    none.apply(300, "request.sent", { id: 30, target: "service", method: "POST", path: "/api/v1/reverse" } as never);
    expect(none.f.view().cutover.reverseInDoubt).toBeUndefined();
  });
});

// a run that is not a --resume counts nothing of the verification before it but what it carried
// (src/run/earlier.ts fromJournal): a --from run of an edited runbook ended "not verified" while the
// model (the watch page, the cutover's report) said verified; a commit sent before it still counts
describe("the runs that count: the last that is not a --resume, and what it carried", () => {
  const earlier = () => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    const apply = <K extends RunEventType>(t: number, type: K, payload: RunEventMap[K]) =>
      f.apply(s.at(t, type, payload));
    apply(0, "run.started", started("run"));
    for (const i of [0, 1])
      apply(5, "progress.sampled", { instance: inst(i), progress: { state: "COMMITTED" } } as never);
    apply(10, "verifier.verified", {
      index: 1,
      id: "hold",
      progress: { generation: 3 },
      writesOffGeneration: 2,
    } as never);
    apply(20, "run.finished", { outcome: "failed", exitCode: 1, committed: true, durationMs: 20 });
    expect(f.view().cutover).toMatchObject({ committed: true, verified: { at: 10, step: "hold" } });
    return { f, apply };
  };
  const carried = { from: "j1.jsonl", writesStopped: true, commitSent: true, commitAccepted: true };

  it("a --from run that carried nothing: not verified, whatever the runs before it did; their commit still counts", () => {
    const r = earlier();
    r.apply(100, "run.started", started("run"));
    expect(r.f.view().cutover.verified).toBeUndefined();
    r.apply(200, "run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 100 });
    expect(r.f.view().cutover.verified).toBeUndefined();
    // a commit takes effect on the fleet whatever a later run counts: never hidden (runsCommitted)
    expect(r.f.view().cutover.committed).toBe(true);
  });

  it("a --from run that carried the commit and the verification: both count, the verify step kept", () => {
    const r = earlier();
    r.apply(100, "run.started", { ...started("run"), carried });
    expect(r.f.view().cutover.committed).toBe(true);
    expect(r.f.view().cutover.verified).toBeUndefined();
    r.apply(101, "verifier.carried", { memory: { verified: { at: 10, generation: 3 } }, from: "j1.jsonl" });
    expect(r.f.view().cutover.verified).toEqual({ at: 10, step: "hold" });
    // carried whole: a memory without a verify that passed, or after a reverse, is not verified
    const not = earlier();
    not.apply(100, "run.started", { ...started("run"), carried });
    not.apply(101, "verifier.carried", { memory: { reversed: "back" }, from: "j1.jsonl" });
    expect(not.f.view().cutover).toMatchObject({ committed: true, verificationReversed: "back" });
    expect(not.f.view().cutover.verified).toBeUndefined();
  });

  it("a --resume goes on from its journal: what the runs before it counted still counts", () => {
    const r = earlier();
    r.apply(100, "run.started", started("resume"));
    expect(r.f.view().cutover).toMatchObject({ committed: true, verified: { at: 10, step: "hold" } });
  });
});

// the report and the watch page said "no `verify` step passed" alone where the verify step had
// refused the result (the verifier skipped DDL on the source): the model keeps the last verify
// step's failure (src/model/verify-failed.ts), which the one rule names (earned.ts `verification`)
describe("the last verify step's failure (cutover.verifyFailed)", () => {
  const VERIFY = { index: 4, id: "verify", kind: "verify", title: "verify" };
  const ERROR = "not verified: the verifier skipped DDL on the source (createIndexes 1; --ddlHandling warnMost)";
  const failedRun = () => {
    const s = stream();
    const f = new CutoverFold({ traits: traitsOf });
    const apply = <K extends RunEventType>(t: number, type: K, payload: RunEventMap[K]) =>
      f.apply(s.at(t, type, payload));
    apply(0, "run.started", started("run"));
    // another step's failure is not the verify step's
    apply(1, "step.started", STEPS[2]!);
    apply(2, "step.finished", { index: 2, id: "hold", outcome: "failed", durationMs: 1, error: "the hook failed" });
    expect(f.view().cutover.verifyFailed).toBeUndefined();
    apply(10, "step.started", VERIFY);
    apply(11, "verifier.baseline", { index: 4, id: "verify", progress: {} } as never);
    apply(20, "step.finished", { index: 4, id: "verify", outcome: "failed", durationMs: 10, error: ERROR });
    expect(f.view().cutover.verifyFailed).toEqual({ step: 5, id: "verify", error: ERROR });
    apply(30, "run.finished", { outcome: "failed", exitCode: 1, committed: true, durationMs: 30 });
    return { f, apply };
  };

  it("kept across a --resume until its verify step starts again; an end other than failed names nothing", () => {
    const r = failedRun();
    r.apply(100, "run.started", started("resume"));
    expect(r.f.view().cutover.verifyFailed).toEqual({ step: 5, id: "verify", error: ERROR });
    r.apply(110, "step.started", VERIFY);
    expect(r.f.view().cutover.verifyFailed).toBeUndefined();
    r.apply(120, "step.finished", { index: 4, id: "verify", outcome: "interrupted", durationMs: 10 });
    expect(r.f.view().cutover.verifyFailed).toBeUndefined();
    // no error journaled: the step alone
    r.apply(130, "step.started", VERIFY);
    r.apply(140, "step.finished", { index: 4, id: "verify", outcome: "failed", durationMs: 10 });
    expect(r.f.view().cutover.verifyFailed).toStrictEqual({ step: 5, id: "verify" });
    // one it cannot read (not a string) is left out, never passed on as is
    r.apply(150, "step.started", VERIFY);
    r.apply(160, "step.finished", { index: 4, id: "verify", outcome: "failed", durationMs: 10, error: 42 as never });
    expect(r.f.view().cutover.verifyFailed).toStrictEqual({ step: 5, id: "verify" });
  });

  it("ended by a new verification, a verify that passed, or a run that is not a --resume", () => {
    const baseline = failedRun();
    baseline.apply(100, "verifier.baseline", { index: 1, id: "check", progress: {} } as never);
    expect(baseline.f.view().cutover.verifyFailed).toBeUndefined();
    const passed = failedRun();
    passed.apply(100, "verifier.verified", {
      index: 4,
      id: "verify",
      progress: { generation: 3 },
      writesOffGeneration: 2,
    } as never);
    expect(passed.f.view().cutover.verifyFailed).toBeUndefined();
    const from = failedRun();
    from.apply(100, "run.started", started("run"));
    expect(from.f.view().cutover.verifyFailed).toBeUndefined();
  });

  it("the view is a copy", () => {
    const r = failedRun();
    const v = r.f.view().cutover.verifyFailed!;
    v.error = "changed";
    expect(r.f.view().cutover.verifyFailed?.error).toBe(ERROR);
  });
});

// the watch's own reads of a runbook's fleet, before any run (no run.started): the page's canWrite
// column showed nothing for the first process, whose canWrite alone is valid
describe("the first process where no run says it (FoldOptions.canWriteFrom)", () => {
  const sampled = (f: CutoverFold, index: number, t: number) =>
    f.apply({
      type: "progress.sampled",
      seq: t,
      at: t,
      instance: inst(index),
      progress: { state: "COMMITTED", canWrite: true },
    } as unknown as RunEvent);
  const canWrite = (f: CutoverFold) => f.view().fleet.instances.map((i) => [i.label, i.canWrite]);

  it("the fold's option names it until a run.started does; never another instance's", () => {
    const told = new CutoverFold({ traits: traitsOf, canWriteFrom: 1 });
    sampled(told, 0, 1);
    sampled(told, 1, 2);
    expect(canWrite(told)).toEqual([
      ["sync0", undefined],
      ["sync1", true],
    ]);
    expect(told.view().canWriteFrom).toBe(1);
    // a run says sync0: the run's word wins
    told.apply({ type: "run.started", seq: 3, at: 3, ...started("run") } as unknown as RunEvent);
    sampled(told, 0, 4);
    sampled(told, 1, 5);
    expect(canWrite(told)).toEqual([
      ["sync0", true],
      ["sync1", undefined],
    ]);
    expect(told.view().canWriteFrom).toBe(0);
    const untold = new CutoverFold({ traits: traitsOf });
    sampled(untold, 0, 1);
    sampled(untold, 1, 2);
    expect(canWrite(untold)).toEqual([
      ["sync0", undefined],
      ["sync1", undefined],
    ]);
    expect(untold.view().canWriteFrom).toBeUndefined();
  });
});

describe("journals joined in the order their runs started", () => {
  // run 1 (a.jsonl) stops short of its verify; run 2 (b.jsonl, a --from run) verifies; run 3, a
  // --resume of a.jsonl appended to it after run 2, sends reverse: the cutover is not verified.
  // Joined by each journal's first run, run 3 folded before run 2 and the report said VERIFIED.
  function interleaved() {
    const a = stream();
    a.at(0, "run.started", started("run"));
    a.at(100, "step.started", STEPS[0]!);
    a.at(200, "step.finished", { index: 0, id: "stop", outcome: "failed", durationMs: 100, error: "x" });
    a.at(300, "run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 300 });
    const b = stream();
    b.at(5000, "run.started", started("run"));
    b.at(5100, "step.started", STEPS[3]!);
    b.at(5200, "verifier.verified", { index: 3, id: "committed", progress: {} as never, writesOffGeneration: 1 });
    b.at(5300, "step.finished", { index: 3, id: "committed", outcome: "ok", durationMs: 200 });
    b.at(5400, "run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 400 });
    const c = stream(a.events.length);
    c.at(9000, "journal.resumed" as never, {} as never);
    c.at(9100, "run.started", started("resume"));
    c.at(9200, "step.started", STEPS[2]!);
    c.at(9300, "request.sent", commandSent(1, "reverse", inst(0)));
    // a delivery of run 1's end, sent by run 3
    c.at(9400, "notification.sent", { entry: 0, use: "pagerduty", event: 4, about: "run.finished", earlier: true });
    return [
      { file: "a.jsonl", events: [...a.events, ...c.events] },
      { file: "b.jsonl", events: b.events },
    ];
  }

  it("folds a resume appended to an older journal after the run that came between", () => {
    const joined = joinJournals(interleaved());
    const model = foldEvents(joined.events, { traits: traitsOf, journals: joined.journals });
    expect(model.runs.map((r) => [r.n, r.mode, r.journal, r.startedAt])).toEqual([
      [1, "run", "a.jsonl", 0],
      [2, "run", "b.jsonl", 5000],
      [3, "resume", "a.jsonl", 9100],
    ]);
    expect(model.cutover.verified).toBeUndefined();
    expect(model.cutover.verificationReversed).toBe("hold");
    expect(joined.journals).toEqual([
      { file: "a.jsonl", fromSeq: 1 },
      { file: "b.jsonl", fromSeq: 5 },
      { file: "a.jsonl", fromSeq: 10 },
    ]);
  });

  it("keeps seqs unique and ordered by run, and a delivery naming the event it named", () => {
    const joined = joinJournals(interleaved());
    const seqs = joined.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    const sent = joined.events.find((e) => e.type === "notification.sent");
    const named = joined.events.find((e) => e.seq === (sent as { event: number }).event);
    expect(named).toMatchObject({ type: "run.finished", at: 300 });
    // the lines still to come of a.jsonl follow its last run, after b.jsonl's
    expect(joined.shifts).toEqual([
      {
        file: "a.jsonl",
        seqBase: 5,
        idBase: 0,
        runs: [
          { maxSeq: 4, seqBase: 0 },
          { maxSeq: 9, seqBase: 5 },
        ],
      },
      { file: "b.jsonl", seqBase: 4, idBase: 0, runs: [{ maxSeq: 5, seqBase: 4 }] },
    ]);
  });

  it("leaves the first run's events as they are, and reads a journal's lines in seq order whatever order they came in", () => {
    const [a, b] = interleaved();
    const joined = joinJournals([a!, b!]);
    expect(joined.events.slice(0, 4)).toEqual(a!.events.slice(0, 4));
    const shuffled = joinJournals([
      { ...a!, events: [...a!.events].reverse() },
      { ...b!, events: [...b!.events].reverse() },
    ]);
    expect(shuffled).toEqual(joined);
  });

  it("keeps runs that did not interleave together: one start per journal, each journal's shift past the last", () => {
    const joined = joinJournals(journals());
    expect(joined.journals).toEqual([
      { file: "a.jsonl", fromSeq: 1 },
      { file: "b.jsonl", fromSeq: 13 },
    ]);
    // an empty journal (every line unreadable): its lines to come after everything
    const withEmpty = joinJournals([...journals(), { file: "c.jsonl", events: [] }]);
    expect(withEmpty.shifts.map((s) => [s.file, s.seqBase])).toEqual([
      ["a.jsonl", 0],
      ["b.jsonl", 12],
      ["c.jsonl", withEmpty.events.at(-1)!.seq],
    ]);
  });

  it("cuts a journal at a header and at a second run.started, and orders a run by its run.started, not its header", () => {
    const a = stream();
    a.at(10, "journal.opened" as never, {} as never);
    a.at(20, "run.started", started("run"));
    a.at(30, "run.started", started("resume")); // an older journal's resume without a header
    a.at(15_000, "journal.resumed" as never, {} as never);
    a.at(16_000, "run.started", started("resume"));
    const b = stream();
    b.at(25, "run.started", started("run"));
    b.at(15_500, "run.started", started("run"));
    const joined = joinJournals([
      { file: "a.jsonl", events: a.events },
      { file: "b.jsonl", events: b.events },
    ]);
    expect(joined.events.map((e) => [e.type, e.at])).toEqual([
      ["journal.opened", 10],
      ["run.started", 20],
      ["run.started", 25],
      ["run.started", 30],
      ["run.started", 15_500],
      ["journal.resumed", 15_000],
      ["run.started", 16_000],
    ]);
    expect(joined.journals.map((j) => j.file)).toEqual(["a.jsonl", "b.jsonl", "a.jsonl", "b.jsonl", "a.jsonl"]);
  });

  it("keeps a journal's runs in its order when a resume's clock is behind the run it resumed", () => {
    // killed on one host, resumed on another whose clock is 8 s behind: still run 1, then its resume
    const a = stream();
    a.at(10_000, "run.started", started("run"));
    a.at(10_100, "step.started", STEPS[0]!);
    a.at(2000, "journal.resumed" as never, {} as never);
    a.at(2100, "run.started", started("resume"));
    a.at(2200, "run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 100 });
    const b = stream();
    b.at(5000, "run.started", started("run"));
    const joined = joinJournals([
      { file: "a.jsonl", events: a.events },
      { file: "b.jsonl", events: b.events },
    ]);
    const model = foldEvents(joined.events, { traits: traitsOf, journals: joined.journals });
    expect(model.runs.map((r) => [r.mode, r.journal, r.ended])).toEqual([
      ["run", "b.jsonl", "no-word"],
      ["run", "a.jsonl", "no-word"],
      ["resume", "a.jsonl", "ok"],
    ]);
    // lines appended to a.jsonl since follow its last run, past everything
    expect(joined.shifts[0]).toMatchObject({ seqBase: 1 });
    expect(shiftLine(joined.shifts[0]!, { type: "log", seq: 6, at: 2300 } as RunEvent).seq).toBe(7);
  });

  it("puts runs that started at the same moment in the journals' order", () => {
    const a = stream();
    a.at(7, "run.started", started("run"));
    const b = stream();
    b.at(7, "run.started", started("resume"));
    const joined = joinJournals([
      { file: "a.jsonl", events: a.events },
      { file: "b.jsonl", events: b.events },
    ]);
    expect(joined.journals.map((j) => j.file)).toEqual(["a.jsonl", "b.jsonl"]);
  });

  it("numbers request ids in the order of the runs, so a later run's commands come after an earlier one's", () => {
    const a = stream();
    a.at(0, "run.started", started("run"));
    a.at(1, "request.sent", { id: 1, instance: inst(0), target: "service", method: "POST", path: "/api/v1/start" });
    const b = stream();
    b.at(5, "run.started", started("run"));
    b.at(6, "request.sent", { id: 1, instance: inst(0), target: "service", method: "POST", path: "/api/v1/commit" });
    b.at(7, "response.received", { id: 1, instance: inst(0), target: "service", ok: true, durationMs: 1 });
    const c = stream(a.events.length);
    c.at(9, "journal.resumed" as never, {} as never);
    c.at(10, "run.started", started("resume"));
    c.at(11, "request.sent", { id: 2, instance: inst(0), target: "service", method: "POST", path: "/api/v1/reverse" });
    const joined = joinJournals([
      { file: "a.jsonl", events: [...a.events, ...c.events] },
      { file: "b.jsonl", events: b.events },
    ]);
    expect(joined.events.flatMap((e) => (e.type === "request.sent" ? [[e.path, e.id]] : []))).toEqual([
      ["/api/v1/start", 1],
      ["/api/v1/commit", 2],
      ["/api/v1/reverse", 3],
    ]);
    expect(joined.events.find((e) => e.type === "response.received")).toMatchObject({ id: 2 });
    // a line appended to a.jsonl since: moved as its last run; a redelivery of run 1's event as run 1
    expect(shiftLine(joined.shifts[0]!, { type: "request.sent", seq: 6, at: 12, id: 3 } as RunEvent)).toMatchObject({
      seq: 9,
      id: 4,
    });
    expect(
      shiftLine(joined.shifts[0]!, {
        type: "notification.sent",
        seq: 7,
        at: 13,
        entry: 0,
        use: "x",
        event: 1,
        about: "run.started",
        earlier: true,
      }),
    ).toMatchObject({ seq: 10, event: 1 });
  });

  it("shifts a delivery with the run of the event it names, in its own journal", () => {
    const a = stream();
    a.at(0, "run.started", started("run"));
    a.at(1, "run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 1 });
    const b = stream();
    b.at(5, "run.started", started("run"));
    b.at(6, "run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 1 });
    b.at(7, "notification.sent", { entry: 0, use: "x", event: 1, about: "run.started" });
    const c = stream(a.events.length);
    c.at(9, "run.started", started("resume"));
    c.at(10, "notification.sent", { entry: 0, use: "x", event: 2, about: "run.finished", earlier: true });
    c.at(11, "notification.settled", { entry: 0, use: "x", event: 2, ok: true } as never);
    c.at(12, "notification.sent", { entry: 0, use: "x", event: 3, about: "run.started" });
    c.at(13, "notification.sent", { entry: 0, use: "x", event: 99, about: "run.started" });
    // a second resume's delivery of the first resume's event: the file's seq, shifted as that run is
    const d = stream(a.events.length + c.events.length);
    d.at(20, "journal.resumed" as never, {} as never);
    d.at(21, "notification.sent", { entry: 0, use: "x", event: 3, about: "run.started", earlier: true });
    const joined = joinJournals([
      { file: "a.jsonl", events: [...a.events, ...c.events, ...d.events] },
      { file: "b.jsonl", events: b.events },
    ]);
    // a: 1-2 (as is), b: 3-5, a's resume 3-7 shifted by 3 to 6-10
    const at = (t: number) => joined.events.find((e) => e.at === t) as { seq: number; event?: number };
    expect([at(10), at(11), at(12), at(13)].map((e) => [e.seq, e.event])).toEqual([
      [7, 2],
      [8, 2],
      [9, 6],
      [10, 102], // names no line: shifted with its own run
    ]);
    // b's delivery names b's run.started, not a's line of the same seq
    expect(at(7)).toMatchObject({ seq: 5, event: 3 });
    expect(at(21)).toMatchObject({ seq: 12, event: 6 });
  });
});

// a command step whose attempt failed (no answer: it may have taken effect), adopted by the
// `--resume` that read the fleet showing it took effect: report.json and JUnit read "failed" of
// a reverse that took effect, where the same adoption after a kill read "skipped: adopted"
describe("a command adopted after its attempt failed", () => {
  for (const first of ["failed", "interrupted"] as const)
    it(`reads adopted, as after a kill, not ${first}; the attempt keeps its failure`, () => {
      const a = stream();
      a.at(0, "run.started", started("run"));
      a.at(100, "step.started", STEPS[1]!);
      a.at(200, "request.sent", commandSent(1, "commit", inst(0)));
      // what the failed attempt waited on (its reads for whether the command took effect)
      a.at(5000, "wait.status", { index: 1, id: "commit", met: false, failing: [] });
      a.at(6000, "wait.slow", { index: 1, id: "commit", stalledForMs: 5000, detail: "no progress for 5s" });
      a.at(10_200, "step.finished", {
        index: 1,
        id: "commit",
        outcome: first,
        durationMs: 10_100,
        error: "sync0: no answer in time: whether commit took effect is unknown until progress shows it",
        hint: "Read the fleet (syncbook status).",
      });
      a.at(10_300, "run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 10_300 });
      a.at(20_000, "run.started", started("resume"));
      a.at(20_100, "step.skipped", { index: 1, id: "commit", reason: "adopted: commit took effect", adopted: true });
      a.at(20_200, "run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 200 });
      const joined = joinJournals([{ file: "a.jsonl", events: a.events }]);
      const step = foldEvents(joined.events, { traits: traitsOf, journals: joined.journals }).steps[1]!;
      expect(step.outcome).toBe("skipped");
      expect(step.reason).toBe("adopted: commit took effect (run 2)");
      expect(step.error).toBeUndefined();
      expect(step.hint).toBeUndefined();
      expect(step.wait).toBeUndefined();
      expect(step.slow).toEqual([]);
      expect(step.attempts).toHaveLength(1);
      expect(step.attempts[0]).toMatchObject({ run: 1, outcome: first, error: expect.stringContaining("no answer") });
    });

  it("a step that ended ok keeps its outcome when a later run passes it as adopted", () => {
    const a = stream();
    a.at(0, "run.started", started("run"));
    a.at(100, "step.started", STEPS[1]!);
    a.at(200, "step.finished", { index: 1, id: "commit", outcome: "ok", durationMs: 100 });
    a.at(300, "run.finished", { outcome: "failed", exitCode: 1, committed: true, durationMs: 300 });
    a.at(1000, "run.started", started("resume"));
    a.at(1100, "step.skipped", { index: 1, id: "commit", reason: "adopted: commit took effect", adopted: true });
    const joined = joinJournals([{ file: "a.jsonl", events: a.events }]);
    const step = foldEvents(joined.events, { traits: traitsOf, journals: joined.journals }).steps[1]!;
    expect(step.outcome).toBe("ok");
    expect(step.resumeNote).toBe("run 2: adopted: commit took effect");
  });
});
