import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asListener, journalDir, mustFsync, openJournal, readJournalState } from "../../src/journal/index.js";
import { readJournal } from "../../src/journal/index.js";
import { createEmitter } from "../../src/run/emitter.js";
import { eventFactory, inst, STEPS, tempDir, salesStarted } from "../support/journal.js";
import { traitsOf } from "../../src/steps/index.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

/** The journal's lines as objects, without their hash chain link (chain.test.ts checks those). */
const lines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const { chain, ...rest } = JSON.parse(l) as Record<string, unknown>;
      expect(chain).toMatch(/^[0-9a-f]{32}$/);
      return rest;
    });

describe("openJournal", () => {
  it("creates <ISO time>-<pid>.jsonl whose first line is the journal.opened header", () => {
    const j = openJournal({
      dir,
      runbookName: "sales",
      runbookHash: "abc",
      now: () => Date.UTC(2024, 4, 1, 12, 30, 0, 123),
    });
    j.close();
    expect(basename(j.file)).toBe(`2024-05-01T12-30-00.123Z-${process.pid}.jsonl`);
    const [h] = lines(j.file);
    expect(h).toMatchObject({
      type: "journal.opened",
      seq: 0,
      version: 2,
      runbook: "sales",
      hash: "abc",
      pid: process.pid,
    });
    expect(typeof h!.host).toBe("string");
  });

  it("has each line on disk before write() returns (read right after each write)", () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const ev = eventFactory();
    const sent = ev("request.sent", {
      id: 1,
      instance: inst(0),
      target: "service",
      method: "POST",
      path: "/api/v1/commit",
      body: {},
    });
    j.write(sent);
    // another reader (a new file descriptor) sees the line: it reached the OS, not a JS buffer
    expect(lines(j.file).at(-1)).toEqual(sent);
    const answer = ev("response.received", {
      id: 1,
      instance: inst(0),
      target: "service",
      status: 200,
      ok: true,
      body: { success: true },
      durationMs: 3,
    });
    j.write(answer);
    expect(lines(j.file).at(-1)).toEqual(answer);
    j.close();
  });

  it("holds the lines that need no fsync until the end of the turn, and writes them before any line that does, and at close", async () => {
    const ev = eventFactory();
    const sample = (n: number) => ev("progress.sampled", { instance: inst(n), progress: { state: "RUNNING" } });
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const s1 = sample(0);
    const s2 = sample(1);
    j.write(s1);
    j.write(s2);
    // one write for the turn's answers (issue 41): not yet
    expect(lines(j.file)).toHaveLength(1);
    await new Promise((r) => setImmediate(r));
    expect(lines(j.file).slice(1)).toEqual([s1, s2]);
    // held, then a line that must be durable: both, in order, before write() returns
    const s3 = sample(2);
    j.write(s3);
    const step = ev("step.started", { index: 0, id: "start", kind: "start", title: "start" });
    j.write(step);
    expect(lines(j.file).slice(3)).toEqual([s3, step]);
    const s4 = sample(3);
    j.write(s4);
    j.close();
    expect(lines(j.file).at(-1)).toEqual(s4);
  });

  it("writes held lines at once past 64 KiB", () => {
    const ev = eventFactory();
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const big = "x".repeat(8 * 1024);
    for (let i = 0; i < 9; i++) j.write(ev("log", { level: "info", message: `${i} ${big}` }));
    expect(lines(j.file).length).toBeGreaterThan(1);
    j.close();
    expect(lines(j.file)).toHaveLength(10);
  });

  it("fsyncs the events resume depends on, not the samples", () => {
    for (const t of [
      "request.sent",
      "response.received",
      "decision",
      "step.started",
      "step.finished",
      "step.skipped",
      "commit.sent",
      "hook.started",
      "hook.finished",
      "run.started",
      "run.finished",
      "some.future.event",
    ])
      expect(mustFsync(t), t).toBe(true);
    for (const t of ["progress.sampled", "verifier.sampled", "wait.status"]) expect(mustFsync(t), t).toBe(false);
  });

  it("round-trips through readJournalState and the report's reader", async () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const emitter = createEmitter([asListener(j)]);
    emitter.emit("run.started", {
      runbook: "sales",
      file: "x.yaml",
      hash: "abc",
      instances: [inst(0)],
      mode: "run",
      steps: STEPS,
    });
    emitter.emit("step.started", STEPS[0]!);
    emitter.emit("request.sent", {
      id: 1,
      instance: inst(0),
      target: "service",
      method: "POST",
      path: "/api/v1/start",
      body: {},
    });
    emitter.emit("response.received", {
      id: 1,
      instance: inst(0),
      target: "service",
      status: 200,
      ok: true,
      body: { success: true },
      durationMs: 2,
    });
    emitter.emit("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 5 });
    j.close();

    const state = await readJournalState(j.file, traitsOf);
    expect(state).toMatchObject({
      runbook: "sales",
      hash: "abc",
      lastSeq: 5,
      warnings: [],
      stopWritesSucceeded: false,
    });
    expect(state.steps[0]).toEqual({ index: 0, id: "start", kind: "start", started: true, finished: "ok" });
    expect(state.steps[1]).toEqual({ index: 1, id: "wait", kind: "waitFor", started: false });
    expect(state.commandsSent).toEqual([
      {
        op: "start",
        stepIndex: 0,
        instances: ["i0"],
        answered: "ok",
        perInstance: [{ instance: "i0", answered: "ok" }],
      },
    ]);

    // the report reader (src/journal/read-whole.ts) accepts the header as an event-shaped line
    const report = await readJournal(dir);
    expect(report.warnings).toEqual([]);
    expect(report.events.map((e) => e.type)).toEqual([
      "journal.opened",
      "run.started",
      "step.started",
      "request.sent",
      "response.received",
      "step.finished",
    ]);
  });

  it("two journals opened by one process in the same millisecond get two files (never EEXIST, never the other's)", () => {
    const now = () => 1_800_000_000_000;
    const a = openJournal({ dir, runbookName: "sales", runbookHash: "abc", now });
    const b = openJournal({ dir, runbookName: "sales", runbookHash: "abc", now });
    a.close();
    b.close();
    expect(b.file).not.toBe(a.file);
    expect(b.file.endsWith(`-${process.pid}-1.jsonl`)).toBe(true);
    expect(lines(a.file)).toHaveLength(1);
    expect(lines(b.file)).toHaveLength(1);
  });

  it("refuses writes after close, and close is idempotent", () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    j.close();
    j.close();
    expect(() => j.write(eventFactory()("log", { level: "info", message: "x" }))).toThrow(/closed/);
  });

  it("names the default folder after the runbook, safely", () => {
    expect(journalDir("sales-rs-to-sharded")).toBe(join(".syncbook", "sales-rs-to-sharded"));
    expect(journalDir("../../etc/passwd", "/tmp/j")).toBe(join("/tmp/j", "__.._etc_passwd"));
    expect(journalDir("a b:c")).toBe(join(".syncbook", "a_b_c"));
  });
});

describe("openJournal on resume (file given)", () => {
  it("appends a journal.resumed marker and shifts seq and request ids past the earlier writer's", async () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const ev = eventFactory();
    j.write(ev("run.started", salesStarted("x.yaml")));
    j.write(ev("step.started", STEPS[0]!));
    j.write(
      ev("request.sent", {
        id: 1,
        instance: inst(0),
        target: "service",
        method: "POST",
        path: "/api/v1/start",
        body: {},
      }),
    );
    j.close();

    const r = openJournal({ dir, runbookName: "sales", runbookHash: "abc", file: j.file });
    expect(r.file).toBe(j.file);
    expect(r.resumedAfterSeq).toBe(3);
    const ev2 = eventFactory(); // a resumed runner's emitter counts from 1 again
    r.write(
      ev2("run.started", {
        runbook: "sales",
        file: "x.yaml",
        hash: "abc",
        instances: [inst(0)],
        mode: "resume",
        steps: STEPS,
      }),
    );
    r.write(ev2("step.started", STEPS[0]!));
    r.write(
      ev2("request.sent", {
        id: 1,
        instance: inst(0),
        target: "service",
        method: "POST",
        path: "/api/v1/start",
        body: {},
      }),
    );
    r.write(
      ev2("response.received", {
        id: 1,
        instance: inst(0),
        target: "service",
        status: 200,
        ok: true,
        body: { success: true },
        durationMs: 1,
      }),
    );
    r.close();

    const all = lines(j.file);
    expect(all.map((l) => l.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(all[4]).toMatchObject({
      type: "journal.resumed",
      seq: 4,
      seqBase: 4,
      requestIdBase: 1,
      runbook: "sales",
      hash: "abc",
    });
    expect(all.filter((l) => l.type === "request.sent").map((l) => l.id)).toEqual([1, 2]);
    expect(all.at(-1)).toMatchObject({ type: "response.received", id: 2 });

    const state = await readJournalState(j.file, traitsOf);
    expect(state.segments.map((s) => s.kind)).toEqual(["opened", "resumed"]);
    expect(state.commandsSent).toEqual([
      {
        op: "start",
        stepIndex: 0,
        instances: ["i0"],
        answered: "ok",
        perInstance: [{ instance: "i0", answered: "ok" }],
      },
    ]);
  });

  it("closes a crashed writer's half line and records it, so the reader accepts the file", async () => {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    const ev = eventFactory();
    j.write(ev("run.started", salesStarted("x.yaml")));
    j.close();
    appendFileSync(j.file, '{"type":"step.sta');
    const before = await readJournalState(j.file, traitsOf);
    expect(before.warnings).toEqual([expect.stringMatching(/last line \(3\) is cut short/)]);

    const r = openJournal({ dir, runbookName: "sales", runbookHash: "abc", file: j.file });
    r.write(eventFactory()("step.started", STEPS[0]!));
    r.close();
    // the fragment stays (evidence), alone on its line
    expect(readFileSync(j.file, "utf8").split("\n")[2]).toBe('{"type":"step.sta');
    const after = await readJournalState(j.file, traitsOf);
    expect(after.warnings).toEqual([
      expect.stringMatching(/line 3 was cut short by a crash .* resumed after it \(line 4\)/),
    ]);
    expect(after.steps[0]).toMatchObject({ started: true });
  });

  it("refuses a missing journal or another runbook's", () => {
    expect(() => openJournal({ dir, runbookName: "sales", runbookHash: "abc", file: join(dir, "nope.jsonl") })).toThrow(
      /does not exist/,
    );
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    j.close();
    expect(() => openJournal({ dir, runbookName: "crm", runbookHash: "abc", file: j.file })).toThrow(
      /journal of runbook "sales", not "crm"/,
    );
    // the journal and its witness (src/journal/witness.ts), nothing created by the refusals
    expect(readdirSync(dir).sort()).toEqual([basename(j.file), `${basename(j.file)}.witness`]);
  });
});
