/**
 * The hook calls a journal records and the processes each started (src/journal/hook-calls.ts):
 * what a later run waits out before it acts and again before commit (src/run/orphans.ts). Each
 * rule of the fold, and the lenient scan of every journal of a runbook's folder, alone: a call
 * the fold drops, or marks finished too early, or files under the wrong host or PID namespace, is
 * a process nobody waits for (an undo that turns writes back on behind a commit, issue 42).
 * `--resume`'s strict reader folds the same way (test/journal/state-rules.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { earlierHookCalls, hookCallFold } from "../../src/journal/index.js";
import { tempDir } from "../support/journal.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const started = (token: unknown, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: "hook.started",
  index: 2,
  id: "stop-writes",
  use: "shell",
  undo: true,
  at: 1000,
  token,
  ...over,
});

describe("hookCallFold: a call per hook.started with a token", () => {
  it("a call carries its step, hook, kind, start, the writer then in force and its journal", () => {
    const f = hookCallFold("/j/a.jsonl");
    f.writer({ type: "journal.opened", host: "h", pidns: "pid:[1]", boot: "b1" });
    f.apply(started("t1"));
    expect(f.calls).toStrictEqual([
      {
        token: "t1",
        stepIndex: 2,
        id: "stop-writes",
        use: "shell",
        undo: true,
        at: 1000,
        processes: [],
        finished: false,
        host: "h",
        pidns: "pid:[1]",
        boot: "b1",
        file: "/j/a.jsonl",
      },
    ]);
  });

  it("no journal named, no file; no writer yet, an empty host (never this one); undo only when it is true", () => {
    const f = hookCallFold();
    f.apply(started("t1", { undo: "yes", index: "3", at: "7" }));
    expect(f.calls).toStrictEqual([
      {
        token: "t1",
        stepIndex: 3,
        id: "stop-writes",
        use: "shell",
        undo: false,
        at: 7,
        processes: [],
        finished: false,
        host: "",
      },
    ]);
  });

  it("a hook.started without a string token (an HTTP hook, an older journal) is no call", () => {
    const f = hookCallFold();
    for (const token of [undefined, 42, null, { t: 1 }]) f.apply(started(token));
    expect(f.calls).toEqual([]);
  });

  it("each writer (header, resume marker) names the calls journaled after it; a pidns or boot that is no string is none", () => {
    const f = hookCallFold();
    f.writer({ host: "h", pidns: "pid:[1]", boot: "b1" });
    f.apply(started("t1"));
    f.writer({ host: "other", pidns: 5, boot: null });
    f.apply(started("t2"));
    f.writer({ host: 7 });
    f.apply(started("t3"));
    expect(f.calls.map((c) => [c.token, c.host, c.pidns, c.boot])).toEqual([
      ["t1", "h", "pid:[1]", "b1"],
      ["t2", "other", undefined, undefined],
      ["t3", "7", undefined, undefined],
    ]);
    expect("pidns" in f.calls[1]!).toBe(false);
    expect("boot" in f.calls[1]!).toBe(false);
  });
});

describe("hookCallFold: hook.process adds a process to the call of its token", () => {
  it("pid, process group and start, each kept only when valid; a start of 0 (the boot's first tick) is kept", () => {
    const f = hookCallFold();
    f.apply(started("t1"));
    f.apply({ type: "hook.process", token: "t1", pid: 500, pgid: 500, start: 1234 });
    f.apply({ type: "hook.process", token: "t1", pid: 501, pgid: 0, start: 0 });
    f.apply({ type: "hook.process", token: "t1", pid: 502, pgid: -3, start: -1 });
    f.apply({ type: "hook.process", token: "t1", pid: 503, pgid: 1.5, start: 2.5 });
    f.apply({ type: "hook.process", token: "t1", pid: 504, pgid: "504", start: "9" });
    f.apply({ type: "hook.process", token: "t1", pid: 505, pgid: 2 ** 53, start: 2 ** 53 });
    expect(f.calls[0]!.processes).toStrictEqual([
      { pid: 500, pgid: 500, start: 1234 },
      { pid: 501, start: 0 },
      { pid: 502 },
      { pid: 503 },
      { pid: 504 },
      { pid: 505 },
    ]);
  });

  it("a pid that is no positive safe integer is no process (signal 0 to it would ask about a group or every process)", () => {
    const f = hookCallFold();
    f.apply(started("t1"));
    for (const pid of [0, -1, 1.5, "7", undefined, 2 ** 53, Number.NaN])
      f.apply({ type: "hook.process", token: "t1", pid, pgid: 9 });
    f.apply({ type: "hook.process", token: "t1", pid: 1 });
    expect(f.calls[0]!.processes).toStrictEqual([{ pid: 1 }]);
  });

  it("a process under a token no call has is dropped; one under an earlier call's token goes to that call", () => {
    const f = hookCallFold();
    f.apply(started("t1"));
    f.apply(started("t2", { undo: false }));
    f.apply({ type: "hook.process", token: "nope", pid: 9 });
    f.apply({ type: "hook.process", token: "t1", pid: 10 });
    expect(f.calls.map((c) => [c.token, c.processes])).toStrictEqual([
      ["t1", [{ pid: 10 }]],
      ["t2", []],
    ]);
  });
});

describe("hookCallFold: hook.finished closes the latest unfinished call of its step and kind", () => {
  it("the latest of its step and kind, and only that one; two finishes close two", () => {
    const f = hookCallFold();
    f.apply(started("t1", { undo: false }));
    f.apply(started("t2", { undo: false }));
    f.apply(started("t3", { undo: true }));
    f.apply(started("t4", { index: 3, undo: false }));
    f.apply({ type: "hook.finished", index: 2, undo: false, ok: true });
    expect(f.calls.map((c) => c.finished)).toEqual([false, true, false, false]);
    f.apply({ type: "hook.finished", index: 2, undo: false, ok: true });
    expect(f.calls.map((c) => c.finished)).toEqual([true, true, false, false]);
    // none left of that step and kind: nothing else is closed
    f.apply({ type: "hook.finished", index: 2, undo: false, ok: true });
    expect(f.calls.map((c) => c.finished)).toEqual([true, true, false, false]);
  });

  it("an undo's finish closes only an undo (undo must be true), and only of its own step", () => {
    const f = hookCallFold();
    f.apply(started("t1", { undo: false }));
    f.apply(started("t2", { undo: true }));
    f.apply({ type: "hook.finished", index: 2, undo: "true" });
    expect(f.calls.map((c) => c.finished)).toEqual([true, false]);
    f.apply({ type: "hook.finished", index: 9, undo: true });
    expect(f.calls.map((c) => c.finished)).toEqual([true, false]);
    f.apply({ type: "hook.finished", index: "2", undo: true });
    expect(f.calls.map((c) => c.finished)).toEqual([true, true]);
  });

  it("other events change nothing", () => {
    const f = hookCallFold();
    f.apply(started("t1"));
    f.apply({ type: "step.finished", index: 2, undo: true, token: "t1", pid: 4 });
    f.apply({ type: "hook.output", token: "t1", pid: 4 });
    expect(f.calls[0]!.processes).toEqual([]);
    expect(f.calls[0]!.finished).toBe(false);
  });
});

const line = (v: unknown): string => JSON.stringify(v);
const header = (host: string, over: Record<string, unknown> = {}) =>
  line({ type: "journal.opened", seq: 0, at: 1, version: 1, runbook: "r", hash: "x", pid: 1, host, ...over });
const ev = (seq: number, v: Record<string, unknown>) => line({ seq, at: 1000 + seq, ...v });

describe("earlierHookCalls: every journal of a runbook's folder, read leniently", () => {
  it("no folder: no calls and nothing unreadable (a first run)", async () => {
    expect(await earlierHookCalls(join(dir, "none"))).toEqual({ calls: [], unreadable: [] });
  });

  it("a folder that cannot be listed (a file in its place) is unreadable, with its code: its calls cannot be checked", async () => {
    const f = join(dir, "file");
    writeFileSync(f, "x");
    expect(await earlierHookCalls(f)).toEqual({ calls: [], unreadable: [{ file: f, why: "ENOTDIR" }] });
  });

  it("every journal in name order, each with its own writers; other files ignored; a line that does not parse skipped", async () => {
    writeFileSync(
      join(dir, "b.jsonl"),
      [
        header("hb", { pidns: "pid:[2]" }),
        "{not json",
        ev(1, started("tb1")),
        line([1, 2]),
        ev(2, { type: "hook.process", token: "tb1", pid: 77, pgid: 77, start: 5 }),
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "a.jsonl"),
      [
        header("ha", { boot: "boot-a" }),
        ev(1, started("ta1", { undo: false })),
        ev(2, { type: "hook.finished", index: 2, undo: false, ok: true }),
        ev(3, { type: "journal.resumed", version: 1, runbook: "r", hash: "x", pid: 2, host: "ha2" }),
        ev(4, started("ta2")),
      ].join("\n"),
    );
    writeFileSync(join(dir, "c.txt"), ev(1, started("tc")));
    writeFileSync(join(dir, "d.jsonl.bak"), ev(1, started("td")));
    const r = await earlierHookCalls(dir);
    expect(r.unreadable).toEqual([]);
    expect(r.calls.map((c) => [c.token, c.host, c.pidns, c.boot, c.finished, c.processes, c.file])).toStrictEqual([
      ["ta1", "ha", undefined, "boot-a", true, [], join(dir, "a.jsonl")],
      ["ta2", "ha2", undefined, undefined, false, [], join(dir, "a.jsonl")],
      ["tb1", "hb", "pid:[2]", undefined, false, [{ pid: 77, pgid: 77, start: 5 }], join(dir, "b.jsonl")],
    ]);
  });

  it("a journal's writer does not carry into the next journal", async () => {
    writeFileSync(join(dir, "a.jsonl"), [header("ha", { pidns: "pid:[1]" })].join("\n"));
    writeFileSync(join(dir, "b.jsonl"), [ev(1, started("tb"))].join("\n"));
    const r = await earlierHookCalls(dir);
    expect(r.calls.map((c) => [c.token, c.host, c.pidns])).toEqual([["tb", "", undefined]]);
  });

  it("a line that names a hook event but is none (another type, an array, no JSON) is not a call", async () => {
    writeFileSync(
      join(dir, "a.jsonl"),
      [
        header("h"),
        ev(1, { type: "sample", "hook.started": { token: "x" } }),
        line(["hook.started", { type: "hook.started", token: "y" }]),
        '{"type":"hook.started","token":"z"',
      ].join("\n"),
    );
    expect(await earlierHookCalls(dir)).toEqual({ calls: [], unreadable: [] });
  });

  it("a journal that cannot be read is named unreadable and the others are still read", async () => {
    mkdirSync(join(dir, "a.jsonl"));
    writeFileSync(join(dir, "b.jsonl"), [header("h"), ev(1, started("tb"))].join("\n"));
    const r = await earlierHookCalls(dir);
    expect(r.unreadable).toEqual([{ file: join(dir, "a.jsonl"), why: "EISDIR" }]);
    expect(r.calls.map((c) => c.token)).toEqual(["tb"]);
  });
});
