import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findLatestJournal, openJournal, readJournalState, refusalsCounted } from "../../src/journal/index.js";
import { summarizeJournal } from "../../src/journal/read.js";
import { resolveJournal } from "../../src/journal/index.js";
import type { CarriedCommand, RunEvent, ServiceRefusal } from "../../src/events.js";
import { eventFactory, inst, STEPS, tempDir, salesStarted } from "../support/journal.js";
import { refusal } from "../support/journal-refusal.js";
import { traitsOf } from "../../src/steps/index.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const header = JSON.stringify({
  type: "journal.opened",
  seq: 0,
  at: 1,
  version: 1,
  runbook: "sales",
  hash: "abc",
  pid: 1,
  host: "h",
});

function journalOf(events: RunEvent[]): string {
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  for (const e of events) j.write(e);
  j.close();
  return j.file;
}

describe("readJournalState", () => {
  it("recovers a truncated last line with a warning, using the lines before it", async () => {
    const ev = eventFactory();
    const file = join(dir, "t.jsonl");
    writeFileSync(
      file,
      [
        header,
        JSON.stringify(ev("step.started", STEPS[0]!)),
        '{"type":"request.sent","seq":2,"at":3,"id":1,"instance":{"u',
      ].join("\n"),
    );
    const state = await readJournalState(file, traitsOf);
    expect(state.warnings).toEqual([
      expect.stringMatching(/^written by an older syncbook \(journal format 1, before journals were hash-chained\)/),
      expect.stringMatching(/^the last line \(3\) is cut short \(not JSON\).*nothing after it was confirmed/),
    ]);
    expect(state.steps).toEqual([{ index: 0, id: "start", kind: "start", started: true }]);
    expect(state.commandsSent).toEqual([]);
  });

  it("refuses a corrupt line in the middle, naming file:line and what is wrong", async () => {
    const ev = eventFactory();
    const file = join(dir, "c.jsonl");
    writeFileSync(
      file,
      [
        header,
        JSON.stringify(ev("step.started", STEPS[0]!)),
        "{oops",
        JSON.stringify(ev("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 1 })),
      ].join("\n") + "\n",
    );
    const err = await refusal(file);
    expect(err.message).toBe(`${file}:3: line 3 is not JSON, and more lines follow it: the journal is corrupt`);
    expect(err.hint).toMatch(/do not resume from it/);
  });

  it("refuses a line that is JSON but not an event, in the middle", async () => {
    const file = join(dir, "c.jsonl");
    writeFileSync(file, [header, '{"hello":1}', header.replace('"journal.opened"', '"log"')].join("\n"));
    expect((await refusal(file)).message).toMatch(/:2: line 2 is not a run event \(no type, seq or at\)/);
  });

  it("refuses a file without the header", async () => {
    const ev = eventFactory();
    const file = join(dir, "n.jsonl");
    writeFileSync(file, `${JSON.stringify(ev("step.started", STEPS[0]!))}\n`);
    const err = await refusal(file);
    expect(err.message).toBe(
      `${file}:1: not a syncbook journal: the first line is a "step.started" event, not the journal.opened header`,
    );
  });

  it("refuses an empty journal, a cut-short header, a binary file, a missing file", async () => {
    const empty = join(dir, "e.jsonl");
    writeFileSync(empty, "");
    expect((await refusal(empty)).message).toMatch(/the journal is empty/);
    const cut = join(dir, "h.jsonl");
    writeFileSync(cut, header.slice(0, 20));
    const e2 = await refusal(cut);
    expect(e2.message).toMatch(/:1: the journal's header line is cut short/);
    expect(e2.hint).toMatch(/sent no command/);
    const bin = join(dir, "b.jsonl");
    writeFileSync(bin, Buffer.from([0, 1, 2, 10, 0, 0]));
    expect((await refusal(bin)).message).toMatch(/binary/);
    expect((await refusal(join(dir, "missing.jsonl"))).message).toMatch(/no such file/);
  });

  it("refuses a journal from a newer format, and two journals joined", async () => {
    const newer = join(dir, "v.jsonl");
    writeFileSync(newer, header.replace('"version":1', '"version":3'));
    expect((await refusal(newer)).message).toMatch(/journal format 3; this syncbook reads format 2/);
    const joined = join(dir, "j.jsonl");
    writeFileSync(joined, `${header}\n${header}\n`);
    expect((await refusal(joined)).message).toMatch(/:2: a second journal header/);
  });

  it("keeps the variable each step's `when` named as its runs journaled it; a later run's text without it keeps it", async () => {
    const ev = eventFactory();
    const started = (steps: { index: number; id: string; kind: string; title: string; when?: string }[]) =>
      ev("run.started", { runbook: "sales", file: "x.yaml", hash: "abc", instances: [inst(0)], mode: "run", steps });
    const file = journalOf([
      started([
        { index: 0, id: "start", kind: "start", title: "start" },
        { index: 1, id: "roll", kind: "reverse", title: "roll", when: "rollback" },
      ]),
      ev("step.skipped", { index: 1, id: "roll", reason: "when: false" }),
      started([{ index: 1, id: "roll", kind: "reverse", title: "roll" }]),
    ]);
    const state = await readJournalState(file, traitsOf);
    expect(state.steps).toEqual([
      { index: 0, id: "start", kind: "start", started: false },
      {
        index: 1,
        id: "roll",
        kind: "reverse",
        started: false,
        finished: "skipped",
        skippedByWhen: true,
        when: "rollback",
      },
    ]);
  });

  it("derives commands per step and instance, with ok / error / unknown answers", async () => {
    const ev = eventFactory();
    const post = (id: number, i: number, op: string) =>
      ev("request.sent", { id, instance: inst(i), target: "service", method: "POST", path: `/api/v1/${op}`, body: {} });
    const file = journalOf([
      ev("run.started", {
        runbook: "sales",
        file: "x.yaml",
        hash: "abc",
        instances: [inst(0), inst(1)],
        mode: "run",
        steps: STEPS,
      }),
      ev("step.started", STEPS[0]!),
      post(1, 0, "start"),
      post(2, 1, "start"),
      ev("response.received", {
        id: 1,
        instance: inst(0),
        target: "service",
        status: 200,
        ok: true,
        body: { success: true },
        durationMs: 1,
      }),
      ev("response.received", {
        id: 2,
        instance: inst(1),
        target: "service",
        ok: false,
        error: "http://127.0.0.1:27183: start failed: connection failed: socket hang up (ECONNRESET)",
        durationMs: 1,
      }),
      ev("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 1 }),
      ev("request.sent", { id: 3, instance: inst(0), target: "service", method: "GET", path: "/api/v1/progress" }),
      ev("step.started", STEPS[2]!),
      ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 1 }),
      ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 1 }),
      ev("step.started", STEPS[3]!),
      post(4, 0, "commit"),
      post(5, 1, "commit"),
      ev("response.received", {
        id: 4,
        instance: inst(0),
        target: "service",
        status: 400,
        ok: false,
        error: "http://127.0.0.1:27182: commit refused: NotReady: lag",
        durationMs: 1,
      }),
      ev("response.received", {
        id: 5,
        instance: inst(1),
        target: "service",
        ok: false,
        error: "http://127.0.0.1:27183: commit failed: cannot connect: ECONNREFUSED",
        durationMs: 1,
      }),
    ]);
    const s = await readJournalState(file, traitsOf);
    expect(s.commandsSent).toEqual([
      {
        op: "start",
        stepIndex: 0,
        instances: ["i0", "i1"],
        answered: "unknown",
        perInstance: [
          { instance: "i0", answered: "ok" },
          { instance: "i1", answered: "unknown", error: expect.stringMatching(/ECONNRESET/) },
        ],
      },
      {
        op: "commit",
        stepIndex: 3,
        instances: ["i0", "i1"],
        answered: "error",
        perInstance: [
          {
            instance: "i0",
            answered: "error",
            error: expect.stringMatching(/refused/),
            refused: "http://127.0.0.1:27182: commit refused: NotReady: lag",
          },
          { instance: "i1", answered: "error", error: expect.stringMatching(/cannot connect/) },
        ],
      },
    ]);
    expect(s.stopWritesSucceeded).toBe(true);
    expect(s.hooksRan).toEqual([{ stepIndex: 2, id: "stop", use: "shell", ok: true, undone: false }]);
    expect(s.steps[3]).toEqual({ index: 3, id: "commit", kind: "commit", started: true });
    expect(s.finished).toBeUndefined();
    expect(s.lastSeq).toBe(17);
  });

  // the no-errors interlock counts what the run's memory counted (src/steps/kit/fleet-ops.ts): a
  // refusal, not a refused repeat of a send that may have reached the instance. A reread: a split
  // start refused on one instance, completed by a --resume whose answer was lost, was counted by
  // that run and not by the journal (best answer unknown, last error the lost one), so a plain
  // --resume after it committed what the run before it refused
  it("keeps each instance's refusal its run counted, over later sends accepted or lost", async () => {
    const ev = eventFactory();
    const post = (id: number, i: number) =>
      ev("request.sent", { id, instance: inst(i), target: "service", method: "POST", path: "/api/v1/start", body: {} });
    const names = [0, 1, 2, 3, 4, 5].map((i) => inst(i));
    const refusedText = (i: number) => `http://127.0.0.1:${27182 + i}: start refused: InternalError: not now`;
    const refused = (id: number, i: number) =>
      ev("response.received", {
        id,
        instance: inst(i),
        target: "service",
        status: 200,
        ok: false,
        body: { success: false },
        error: refusedText(i),
        durationMs: 1,
      });
    const lost = (id: number, i: number) =>
      ev("response.received", {
        id,
        instance: inst(i),
        target: "service",
        ok: false,
        error: `http://127.0.0.1:${27182 + i}: start failed: connection failed: socket hang up (ECONNRESET)`,
        durationMs: 1,
      });
    const ok = (id: number, i: number) =>
      ev("response.received", {
        id,
        instance: inst(i),
        target: "service",
        status: 200,
        ok: true,
        body: { success: true },
        durationMs: 1,
      });
    const run = () =>
      ev("run.started", { runbook: "sales", file: "x.yaml", hash: "abc", instances: names, mode: "run", steps: STEPS });
    const file = journalOf([
      run(),
      ev("step.started", STEPS[0]!),
      // i0: refused; i1: refused; i2: lost, then its repeat refused (it took the first); i3: lost;
      // i4: sent, no answer, then its repeat refused; i5: accepted
      post(1, 0),
      post(2, 1),
      post(3, 2),
      post(4, 3),
      post(5, 4),
      post(6, 5),
      refused(1, 0),
      refused(2, 1),
      lost(3, 2),
      lost(4, 3),
      ok(6, 5),
      post(7, 2),
      refused(7, 2),
      post(8, 4),
      refused(8, 4),
      ev("step.finished", { index: 0, id: "start", outcome: "failed", durationMs: 1, error: "split" }),
      // a --resume completes i0 (accepted) and i1 (its answer lost); i3's send in this run is refused:
      // no repeat of a send of its own run, counted as that run's memory counts it
      run(),
      ev("step.started", STEPS[0]!),
      post(9, 0),
      ok(9, 0),
      post(10, 1),
      lost(10, 1),
      post(11, 3),
      refused(11, 3),
    ]);
    const s = await readJournalState(file, traitsOf);
    const refusals = Object.fromEntries(s.commandsSent[0]!.perInstance.map((p) => [p.instance, p.refused]));
    expect(refusals).toEqual({
      i0: refusedText(0),
      i1: refusedText(1),
      i2: undefined,
      i3: refusedText(3),
      i4: undefined,
      i5: undefined,
    });
    // the best answers are as they were: the refusal kept is beside them
    expect(s.commandsSent[0]!.perInstance.map((p) => p.answered)).toEqual([
      "ok",
      "unknown",
      "unknown",
      "unknown",
      "unknown",
      "ok",
    ]);
  });

  it("counts an undone stopWrites as writes back on, and records the run's end", async () => {
    const ev = eventFactory();
    const file = journalOf([
      ev("run.started", salesStarted("x.yaml")),
      ev("step.started", STEPS[2]!),
      ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 1 }),
      ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 1 }),
      ev("step.started", STEPS[3]!),
      ev("step.finished", { index: 3, id: "commit", outcome: "failed", durationMs: 1, error: "refused" }),
      ev("hook.started", { index: 2, id: "stop", use: "shell", undo: true }),
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: true, ok: true, durationMs: 1 }),
      ev("run.finished", {
        outcome: "failed",
        exitCode: 1,
        committed: false,
        durationMs: 9,
        message: "commit refused",
      }),
    ]);
    const s = await readJournalState(file, traitsOf);
    expect(s.stopWritesSucceeded).toBe(false);
    expect(s.hooksRan).toEqual([{ stepIndex: 2, id: "stop", use: "shell", ok: true, undone: true, undoStarted: true }]);
    expect(s.finished).toMatchObject({ outcome: "failed", committed: false, message: "commit refused" });
  });

  it("a --from run's journal counts what it carried from the cutover's earlier journal (run.started.carried), its commit, not its write stop", async () => {
    type Carried = { writesStopped: boolean; commitSent: boolean; commitAccepted: boolean };
    type Ev = ReturnType<typeof eventFactory>;
    const read = (c: Carried | undefined, more: (ev: Ev) => RunEvent[] = () => []) => {
      const ev = eventFactory();
      const started = ev("run.started", {
        ...salesStarted("x.yaml"),
        ...(c ? { carried: { from: "/j/earlier.jsonl", ...c } } : {}),
      });
      return readJournalState(journalOf([started, ...more(ev)]), traitsOf);
    };
    const all = await read({ writesStopped: true, commitSent: true, commitAccepted: true });
    // its write stop is on record only: the stop's hook and its undo live in the other journal
    expect(all.stopWritesSucceeded).toBe(false);
    expect(all.carriedCommit).toEqual({ sent: true, accepted: true });
    // sent with no usable answer: sent, not accepted
    const sent = await read({ writesStopped: false, commitSent: true, commitAccepted: false });
    expect(sent.stopWritesSucceeded).toBe(false);
    expect(sent.carriedCommit).toEqual({ sent: true, accepted: false });
    // accepted says sent too, whatever the other field
    const accepted = await read({ writesStopped: false, commitSent: false, commitAccepted: true });
    expect(accepted.carriedCommit).toEqual({ sent: true, accepted: true });
    const nothing = await read({ writesStopped: false, commitSent: false, commitAccepted: false });
    expect(nothing).not.toHaveProperty("carriedCommit");
    // a run without the field (every plain run, every journal of an earlier syncbook)
    const plain = await read(undefined);
    expect(plain.stopWritesSucceeded).toBe(false);
    expect(plain).not.toHaveProperty("carriedCommit");
  });

  it("a --from run's journal holds the commands it carried per instance, before its own; what is not one is passed over", async () => {
    const ev = eventFactory();
    const started = ev("run.started", {
      ...salesStarted("x.yaml"),
      carried: {
        from: "/j/earlier.jsonl",
        writesStopped: true,
        commitSent: true,
        commitAccepted: true,
        commands: [
          { op: "start", stepIndex: 0, id: "start", answers: [{ instance: "#1", answered: "ok" }] },
          {
            op: "commit",
            stepIndex: 3,
            id: "commit",
            answers: [
              { instance: "a", answered: "ok" },
              { instance: "b", answered: "unknown" },
              { instance: "c", answered: "error" },
              { instance: "d", answered: "maybe" as "ok" },
              { answered: "ok" } as unknown as { instance: string; answered: "ok" },
            ],
          },
          { op: "launch", stepIndex: 1, id: "x", answers: [] },
          { op: "commit", stepIndex: "3", id: "x", answers: [] } as unknown as CarriedCommand,
          { op: "commit", stepIndex: 3, id: "x", answers: "none" } as unknown as CarriedCommand,
          "commit" as unknown as CarriedCommand,
        ],
      },
    });
    const s = await readJournalState(journalOf([started]), traitsOf);
    expect(s.commandsSent).toEqual([
      {
        op: "start",
        stepIndex: 0,
        carried: { from: "/j/earlier.jsonl" },
        instances: ["#1"],
        answered: "ok",
        perInstance: [{ instance: "#1", answered: "ok" }],
      },
      {
        op: "commit",
        stepIndex: 3,
        carried: { from: "/j/earlier.jsonl" },
        instances: ["a", "b", "c"],
        answered: "unknown",
        perInstance: [
          { instance: "a", answered: "ok" },
          { instance: "b", answered: "unknown" },
          { instance: "c", answered: "error" },
        ],
      },
    ]);
    // a carried command names the journal it came from (status says whose it was); none named, none said
    const unnamed = eventFactory()("run.started", {
      ...salesStarted("x.yaml"),
      carried: {
        from: 7 as unknown as string,
        writesStopped: false,
        commitSent: false,
        commitAccepted: false,
        commands: [{ op: "start", stepIndex: 0, id: "start", answers: [{ instance: "#1", answered: "ok" }] }],
      },
    });
    const none = await readJournalState(journalOf([unnamed]), traitsOf);
    expect(none.commandsSent[0]?.carried).toStrictEqual({});
  });

  // the note of 2026-12-07: a --resume of a --from run reads only its journal, and counted none of
  // the refusals of the journal before it (a split start completed by --from, then committed)
  it("a --from run's journal holds the refusals it carried; refusalsCounted gives them before its own commands' refusals", async () => {
    const ev = eventFactory();
    const started = ev("run.started", {
      ...salesStarted("x.yaml"),
      carried: {
        from: "/j/earlier.jsonl",
        writesStopped: true,
        commitSent: false,
        commitAccepted: false,
        refusals: [
          { instance: "sync1", op: "start", error: "http://a: start refused: X" },
          { instance: "sync1", op: "start" } as unknown as ServiceRefusal,
          { instance: 1, op: "start", error: "e" } as unknown as ServiceRefusal,
          { instance: "sync1", op: 2, error: "e" } as unknown as ServiceRefusal,
          "refused" as unknown as ServiceRefusal,
          { instance: "#3", op: "pause", error: "http://c: pause refused: Y" },
        ],
      },
    });
    const s = await readJournalState(journalOf([started]), traitsOf);
    expect(s.carriedRefusals).toEqual([
      { instance: "sync1", op: "start", error: "http://a: start refused: X" },
      { instance: "#3", op: "pause", error: "http://c: pause refused: Y" },
    ]);
    expect(refusalsCounted(s)).toEqual(s.carriedRefusals);
    const own = {
      ...s,
      commandsSent: [
        {
          op: "commit" as const,
          stepIndex: 4,
          instances: ["sync0", "sync2"],
          answered: "error" as const,
          perInstance: [
            { instance: "sync0", answered: "ok" as const },
            { instance: "sync2", answered: "error" as const, error: "commit refused: Z", refused: "commit refused: Z" },
          ],
        },
      ],
    };
    expect(refusalsCounted(own)).toEqual([
      ...s.carriedRefusals!,
      { instance: "sync2", op: "commit", error: "commit refused: Z" },
    ]);
    // a reverse that took effect since (its step ended ok): the sync before's refusals, carried and
    // its own, are not the sync's that runs now; one whose step did not end ok forgets nothing
    const reversed = (finished: "ok" | "failed") => ({
      ...own,
      // by their index, as the fold keeps them
      steps: Object.assign([...own.steps], {
        6: { index: 6, id: "rollback", kind: "reverse", started: true, finished },
      }),
      commandsSent: [
        ...own.commandsSent,
        {
          op: "reverse" as const,
          stepIndex: 6,
          instances: ["sync0"],
          answered: "ok" as const,
          perInstance: [{ instance: "sync0", answered: "ok" as const }],
        },
        {
          op: "commit" as const,
          stepIndex: 9,
          instances: ["sync0"],
          answered: "error" as const,
          perInstance: [{ instance: "sync0", answered: "error" as const, refused: "commit refused: W" }],
        },
      ],
    });
    expect(refusalsCounted(reversed("ok"))).toEqual([{ instance: "sync0", op: "commit", error: "commit refused: W" }]);
    expect(refusalsCounted(reversed("failed"))).toEqual([
      ...refusalsCounted(own),
      { instance: "sync0", op: "commit", error: "commit refused: W" },
    ]);
    // none carried (every plain run, every journal of an earlier syncbook): no field
    const plain = await readJournalState(journalOf([eventFactory()("run.started", salesStarted("x.yaml"))]), traitsOf);
    expect(plain).not.toHaveProperty("carriedRefusals");
    expect(refusalsCounted(plain)).toEqual([]);
  });

  it("the variables of the last run and the names its --var set; each hook keeps those of the run that called it", async () => {
    const ev = eventFactory();
    const events = [
      ev("run.started", {
        ...salesStarted("x.yaml"),
        vars: { switch: "http://a", lag: 5, on: true, bad: { x: 1 } as unknown as string },
        given: ["switch", 7 as unknown as string],
      }),
      ev("step.started", { index: 2, id: "stop", kind: "stopWrites", title: "stop" }),
      ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 1 }),
      ev("run.started", { ...salesStarted("x.yaml"), mode: "resume", vars: { switch: "http://b" } }),
      ev("hook.started", { index: 3, id: "commit", use: "shell", undo: false }),
      ev("run.started", { ...salesStarted("x.yaml"), mode: "resume" }),
      ev("hook.started", { index: 4, id: "done", use: "shell", undo: false }),
    ];
    const s = await readJournalState(journalOf(events), traitsOf);
    expect(s.hooksRan.map((h) => h.vars)).toEqual([
      { switch: "http://a", lag: 5, on: true },
      { switch: "http://b" },
      undefined,
    ]);
    expect(s.hooksRan[2]).not.toHaveProperty("vars");
    // the last run's: it had none
    expect(s).not.toHaveProperty("vars");
    expect(s).not.toHaveProperty("given");
    const two = await readJournalState(journalOf(events.slice(0, 4)), traitsOf);
    expect(two.vars).toEqual({ switch: "http://a", lag: 5, on: true });
    expect(two.given).toEqual(["switch"]);
    const mid = await readJournalState(journalOf(events.slice(0, 6)), traitsOf);
    expect(mid.vars).toEqual({ switch: "http://b" });
    expect(mid).not.toHaveProperty("given");
    // an --abort runs no step: the values stay those of the last run that could (an outside
    // review: an --abort typed without the --var became the baseline a --resume was judged by)
    const aborted = await readJournalState(
      journalOf([
        ...events.slice(0, 4),
        eventFactory(4)("run.started", {
          ...salesStarted("x.yaml"),
          mode: "resume",
          abort: true,
          vars: { switch: "http://z" },
        }),
      ]),
      traitsOf,
    );
    expect(aborted.vars).toEqual({ switch: "http://a", lag: 5, on: true });
    expect(aborted.given).toEqual(["switch"]);
  });

  // a --from the last step typed without the --var: its `cutoverVars` keep the cutover's switch,
  // which its steps do not read; its hooks are still made of its own values
  it("the cutover's values are the last run's cutoverVars and cutoverGiven where it wrote them; its hooks keep its own", async () => {
    const ev = eventFactory();
    const first = ev("run.started", { ...salesStarted("x.yaml"), vars: { switch: "http://a" }, given: ["switch"] });
    const later = ev("run.started", {
      ...salesStarted("x.yaml"),
      mode: "resume",
      vars: { switch: "http://default", lag: 5 },
      cutoverVars: { switch: "http://a", lag: 5, bad: [1] as unknown as string },
      cutoverGiven: ["switch", 3 as unknown as string],
    });
    const hook = ev("hook.started", { index: 4, id: "done", use: "shell", undo: false });
    const s = await readJournalState(journalOf([first, later, hook]), traitsOf);
    expect(s.vars).toEqual({ switch: "http://a", lag: 5 });
    expect(s.given).toEqual(["switch"]);
    expect(s.hooksRan.map((h) => h.vars)).toEqual([{ switch: "http://default", lag: 5 }]);
    // given none of its own, the cutover's names still count; without cutoverGiven, its own
    const noneGiven = await readJournalState(
      journalOf([first, { ...later, cutoverGiven: [] }] as RunEvent[]),
      traitsOf,
    );
    expect(noneGiven.given).toEqual([]);
    const own = await readJournalState(
      journalOf([first, { ...later, cutoverGiven: undefined, given: ["lag"] }] as RunEvent[]),
      traitsOf,
    );
    expect(own.given).toEqual(["lag"]);
    // an --abort writes cutoverVars only when the cutover's fleet moved (--allow-changed-runbook,
    // src/run/abort.ts): they are the cutover's from there, or a way on with the old ones read the
    // old fleet and turned writes on over a commit on the new one (an outside review)
    const aborted = await readJournalState(
      journalOf([
        first,
        { ...later, abort: true, cutoverVars: { switch: "http://z" }, cutoverGiven: ["switch"] },
      ] as RunEvent[]),
      traitsOf,
    );
    expect(aborted.vars).toEqual({ switch: "http://z" });
    expect(aborted.given).toEqual(["switch"]);
  });

  it("an undo of stopWrites that failed or was cut off still means writes may be flowing (never 'writes stopped' on resume)", async () => {
    for (const finish of ["failed", "cut off"] as const) {
      const ev = eventFactory();
      const file = journalOf([
        ev("run.started", salesStarted("x.yaml")),
        ev("step.started", STEPS[2]!),
        ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
        ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 1 }),
        ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 1 }),
        ev("step.started", STEPS[3]!),
        ev("step.finished", { index: 3, id: "commit", outcome: "failed", durationMs: 1, error: "refused" }),
        ev("hook.started", { index: 2, id: "stop", use: "shell", undo: true }),
        ...(finish === "failed"
          ? [
              ev("hook.finished", {
                index: 2,
                id: "stop",
                use: "shell",
                undo: true,
                ok: false,
                durationMs: 1,
                error: "exit 1",
              }),
            ]
          : []),
      ]);
      const s = await readJournalState(file, traitsOf);
      expect(s.stopWritesSucceeded, finish).toBe(false);
      expect(s.hooksRan[0], finish).toMatchObject({ undone: false, undoStarted: true });
    }
  });

  it("takes a commit.sent without request lines as a commit sent, answer unknown", async () => {
    const ev = eventFactory();
    const file = journalOf([
      ev("step.started", STEPS[3]!),
      ev("commit.sent", { index: 3, id: "commit", instances: ["i0"], skewMs: 0 }),
    ]);
    expect((await readJournalState(file, traitsOf)).commandsSent).toEqual([
      {
        op: "commit",
        stepIndex: 3,
        instances: ["i0"],
        answered: "unknown",
        perInstance: [{ instance: "i0", answered: "unknown" }],
      },
    ]);
  });
});

describe("summarizeJournal: a run that continued its cutover (run.started.carried) and finished ok acted", () => {
  it("it is the cutover's last word even when it sent nothing (a verify on a writesOff sent before); unfinished, it is not", async () => {
    const one = async (carried: boolean, end: "ok" | "failed" | "to" | undefined, more: RunEvent["type"][] = []) => {
      const ev = eventFactory();
      const started = ev("run.started", {
        ...salesStarted("x.yaml"),
        ...(carried
          ? { carried: { from: "/j/a.jsonl", writesStopped: false, commitSent: true, commitAccepted: true } }
          : {}),
      });
      const acts = more.map((t) =>
        t === "hook.started"
          ? ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false })
          : ev("request.sent", {
              id: 1,
              instance: inst(0),
              target: "service",
              method: "GET",
              path: "/api/v1/progress",
            }),
      );
      const fin =
        end === undefined
          ? []
          : [
              ev("run.finished", {
                outcome: end === "failed" ? "failed" : "ok",
                exitCode: end === "failed" ? 1 : 0,
                committed: true,
                durationMs: 1,
                ...(end === "to" ? { to: "verify" } : {}),
              }),
            ];
      return (await summarizeJournal(journalOf([started, ...acts, ...fin]))).acted;
    };
    expect(await one(true, "ok")).toBe(true);
    expect(await one(true, "failed")).toBe(false);
    expect(await one(true, "to")).toBe(false);
    expect(await one(true, undefined)).toBe(false);
    expect(await one(false, "ok")).toBe(false);
    // a request or a hook acts whatever else
    expect(await one(false, "failed", ["request.sent"])).toBe(true);
    expect(await one(false, undefined, ["hook.started"])).toBe(true);
  });
});

describe("findLatestJournal", () => {
  it("picks the most recently written *.jsonl", async () => {
    const a = join(dir, "2024-01-01T00-00-00.000Z-1.jsonl");
    const b = join(dir, "2024-01-02T00-00-00.000Z-2.jsonl");
    writeFileSync(a, header);
    writeFileSync(b, header);
    writeFileSync(join(dir, "syncbook.lock"), "{}");
    utimesSync(a, new Date(), new Date(Date.now() + 5000));
    expect(await findLatestJournal(dir)).toBe(a);
    // `syncbook report <folder>` reports the very journal `--resume` would continue
    expect(await resolveJournal(dir)).toBe(a);
    // same mtime: the later name wins, for both
    const t = new Date(Date.now() + 9000);
    utimesSync(a, t, t);
    utimesSync(b, t, t);
    expect(await findLatestJournal(dir)).toBe(b);
    expect(await resolveJournal(dir)).toBe(b);
  });

  it("says there is nothing to resume when there is no journal", async () => {
    await expect(findLatestJournal(join(dir, "none"))).rejects.toThrow(/nothing to resume: no journal folder/);
    await expect(findLatestJournal(dir)).rejects.toThrow(/holds no journal/);
  });
});
