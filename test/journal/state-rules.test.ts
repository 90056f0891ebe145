/**
 * The journal reader's rules, one by one (issue 19: mutation testing of the safety core). What
 * `--resume` decides (send start or commit again, or not; whether writes are stopped) rests on
 * what `readJournalState` makes of each line, so each rule below is pinned by a journal written
 * line by line. Most use a format 1 header (no hash chain) so that a line can be shaped freely;
 * the chain itself is test/journal/chain.test.ts's.
 *
 * DESIGN.md: "crash / Ctrl-C | `syncbook run x.yaml --resume` | picks up where it stopped, never
 * sends `start` or `commit` twice".
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import {
  DistrustedJournal,
  findLatestJournal,
  findResumeJournal,
  appendChain,
  instanceKey,
  openJournal,
  readJournalState,
  type JournalState,
} from "../../src/journal/index.js";
import type { RunEvent } from "../../src/events.js";
import { classifyAnswer } from "../../src/journal/state.js";
import { eventFactory, inst, STEPS, tempDir } from "../support/journal.js";
import { refusal } from "../support/journal-refusal.js";
import { traitsOf } from "../../src/steps/index.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const OLDER =
  "written by an older syncbook (journal format 1, before journals were hash-chained): lines deleted or edited since cannot be detected";

const headerOf = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: "journal.opened",
  seq: 0,
  at: 1,
  version: 1,
  runbook: "sales",
  hash: "abc",
  pid: 7,
  host: "h",
  ...over,
});

type Line = Record<string, unknown> | string;

/** A format 1 journal: the header, then each event with the next seq (unless it names one), one per line. */
function raw(lines: Line[], header: Line = headerOf()): string {
  let seq = 0;
  const text = [header, ...lines].map((l, i) => {
    if (typeof l === "string") return l;
    if (i === 0) return JSON.stringify(l);
    seq++;
    return JSON.stringify({ seq, at: 1000 + seq, ...l });
  });
  const file = join(dir, `j${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, `${text.join("\n")}\n`);
  return file;
}

const read = async (lines: Line[], header?: Line): Promise<JournalState> =>
  readJournalState(raw(lines, header), traitsOf);

// the commands that help next are the caller's, which knows the runbook (src/run/earlier.ts
// `distrustedRefusal`): these two are a `DistrustedJournal`, naming its file
const DEFAULT_HINT = "a journal is written by syncbook only; if it was edited or damaged, do not resume from it";
const TAMPERED_HINT =
  "the journal was changed after syncbook wrote it, so what it says about the run cannot be trusted: do not resume from it";
const NO_COMMAND_HINT =
  "the header is written before anything is sent, so that run sent no command; check the fleet, delete this file and start a new run";

const post = (
  id: number | string,
  index: number,
  op: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  type: "request.sent",
  id,
  instance: inst(index),
  target: "service",
  method: "POST",
  path: `/api/v1/${op}`,
  body: {},
  ...extra,
});
const answer = (id: number | string, extra: Record<string, unknown>): Record<string, unknown> => ({
  type: "response.received",
  id,
  target: "service",
  durationMs: 1,
  ...extra,
});
const started = (i: number): Record<string, unknown> => ({ type: "step.started", ...STEPS[i]! });
const ended = (i: number, outcome = "ok"): Record<string, unknown> => ({
  type: "step.finished",
  index: i,
  id: STEPS[i]!.id,
  outcome,
  durationMs: 1,
});

/** One start sent to i0 in step 0, answered by `extra`: how the reader classifies the answer. */
async function classified(extra: Record<string, unknown>): Promise<{ answered: string; error?: string }> {
  const s = await read([started(0), post(1, 0, "start"), answer(1, extra)]);
  expect(s.commandsSent).toHaveLength(1);
  const { instance, ...rest } = s.commandsSent[0]!.perInstance[0]!;
  expect(instance).toBe("i0");
  return rest;
}

describe("instanceKey", () => {
  it("is the instance's name, else its 1-based place in the list (never its URL)", () => {
    expect(instanceKey({ name: "shard-a", index: 4 })).toBe("shard-a");
    expect(instanceKey({ index: 0 })).toBe("#1");
    expect(instanceKey({ index: 2 })).toBe("#3");
  });
});

describe("how an answer to a command is classified", () => {
  it("ok: true is accepted, whatever else the line says", async () => {
    expect(await classified({ ok: true, error: "x", errorKind: "service" })).toStrictEqual({ answered: "ok" });
  });

  it("an explicit errorKind decides: service and not-sent did not take effect, transport may have", async () => {
    // events.ts: "`service` (refused with success:false: it did not), `not-sent` (the request
    // never left: it did not), `transport` (no usable answer: it may have)"
    expect(await classified({ ok: false, errorKind: "service", error: "E1" })).toStrictEqual({
      answered: "error",
      error: "E1",
    });
    expect(await classified({ ok: false, errorKind: "not-sent", error: "E2" })).toStrictEqual({
      answered: "error",
      error: "E2",
    });
    // a transport kind beats a message that reads like a refusal
    expect(await classified({ ok: false, errorKind: "transport", error: "u: start refused: X" })).toStrictEqual({
      answered: "unknown",
      error: "u: start refused: X",
    });
    expect(await classified({ ok: false, errorKind: "service" })).toStrictEqual({ answered: "error" });
    expect(await classified({ ok: false, errorKind: "transport" })).toStrictEqual({ answered: "unknown" });
    // an unknown kind is no kind: the message is read
    expect(await classified({ ok: false, errorKind: "other", error: "u: x" })).toStrictEqual({
      answered: "unknown",
      error: "u: x",
    });
  });

  it("a body with success: false is a refusal (service-facts: read `success`, never the status code)", async () => {
    // service-facts.md, Every POST: "Error: {"success": false, ...} ... read `success`, never the status code."
    expect(await classified({ ok: false, status: 200, body: { success: false } })).toStrictEqual({ answered: "error" });
    expect(await classified({ ok: false, body: { success: false }, error: "boom" })).toStrictEqual({
      answered: "error",
      error: "boom",
    });
    // success missing, or not false, or no object: no evidence
    expect(await classified({ ok: false, body: { success: "false" } })).toStrictEqual({ answered: "unknown" });
    expect(await classified({ ok: false, body: {} })).toStrictEqual({ answered: "unknown" });
    expect(await classified({ ok: false, body: [{ success: false }] })).toStrictEqual({ answered: "unknown" });
    expect(await classified({ ok: false, status: 400 })).toStrictEqual({ answered: "unknown" });
    // an error that is not a string is not kept
    expect(await classified({ ok: false, error: 42 })).toStrictEqual({ answered: "unknown" });
  });

  it("reads a ServiceError's message as a refusal, for every command", async () => {
    for (const op of ["start", "commit", "pause", "resume", "reverse"]) {
      const error = `http://127.0.0.1:27182: ${op} refused: NotReady: lag`;
      // and kept as the refusal the no-errors interlock counts (`refusalOf`)
      expect(await classified({ ok: false, error }), op).toStrictEqual({ answered: "error", error, refused: error });
    }
    // the shape matters: ": <op> refused: "
    for (const error of [
      "u: progress refused: X",
      "u:start refused: X",
      "u: start refused:X",
      "u: start  refused: X",
      "u: start refusedX",
    ])
      expect(await classified({ ok: false, error }), error).toStrictEqual({ answered: "unknown", error });
  });

  it("reads a connect or send failure as never sent; any other transport failure as unknown", async () => {
    for (const op of ["start", "commit", "pause", "resume", "reverse"])
      for (const how of ["connect", "send"]) {
        const error = `http://127.0.0.1:27182: ${op} failed: cannot ${how}: ECONNREFUSED`;
        expect(await classified({ ok: false, error }), error).toStrictEqual({ answered: "error", error });
      }
    for (const error of [
      "u: start failed: cannot connectx",
      "u: start failed: cannot sendx",
      "u: start failed: connection failed: socket hang up (ECONNRESET)",
      "u: progress failed: cannot connect: E",
      "u:start failed: cannot connect: E",
      "u: start failed:cannot connect: E",
      "u: start failed: cannotconnect",
      "u: start  failed: cannot connect",
      "u: start failed: no answer within 10 s",
    ])
      expect(await classified({ ok: false, error }), error).toStrictEqual({ answered: "unknown", error });
  });
});

describe("a command's answer over several sends and instances", () => {
  it("per instance the best evidence wins (ok > unknown > error), with the last error text", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start"),
      answer(1, { ok: false, errorKind: "service", error: "first" }),
      post(2, 0, "start"),
      answer(2, { ok: false, errorKind: "transport", error: "second" }),
      post(3, 0, "start"),
      answer(3, { ok: false, errorKind: "service", error: "third" }),
      post(4, 1, "start"),
      answer(4, { ok: false, errorKind: "transport", error: "a" }),
      post(5, 1, "start"),
      answer(5, { ok: false, errorKind: "service", error: "b" }),
      post(6, 1, "start"),
      answer(6, { ok: true }),
    ]);
    expect(s.commandsSent).toStrictEqual([
      {
        op: "start",
        stepIndex: 0,
        instances: ["i0", "i1"],
        answered: "unknown",
        perInstance: [
          { instance: "i0", answered: "unknown", error: "third" },
          { instance: "i1", answered: "ok", error: "b" },
        ],
      },
    ]);
  });

  it("a send with no answer line counts as unknown (it may have taken effect)", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start"),
      answer(1, { ok: false, errorKind: "service", error: "no" }),
      post(2, 0, "start"),
    ]);
    expect(s.commandsSent[0]).toMatchObject({
      answered: "unknown",
      perInstance: [{ answered: "unknown", error: "no" }],
    });
  });

  it("a request line past the witness never left (the journal failed before it was witnessed): not in doubt", async () => {
    // issue 42: a request leaves only once its line is fsynced and witnessed (journal.ts), so a
    // commit fan-out whose lines lie past the witnessed seq provably never left
    const never = {
      answered: "error",
      error:
        "never sent: its journal line was not witnessed (the run ended, killed or its journal failing, before the line was durable), and a request leaves only once it is",
    };
    const lines = [started(3), post(1, 0, "commit"), post(2, 1, "commit")];
    // seqs: step.started 1, the requests 2 and 3
    const at = async (witnessedSeq: number | undefined): Promise<unknown> =>
      (
        await readJournalState(raw(lines), traitsOf, witnessedSeq === undefined ? {} : { witnessedSeq })
      ).commandsSent[0]!.perInstance.map(({ instance: _, ...rest }) => rest);
    expect(await at(1)).toStrictEqual([never, never]);
    expect(await at(2)).toStrictEqual([{ answered: "unknown" }, never]);
    expect(await at(3)).toStrictEqual([{ answered: "unknown" }, { answered: "unknown" }]);
    // no witness to go by: every unanswered request may have left
    expect(await at(undefined)).toStrictEqual([{ answered: "unknown" }, { answered: "unknown" }]);
    // a request answered is not touched, whatever the witness says
    const answered = [started(3), post(1, 0, "commit"), answer(1, { ok: true })];
    expect(
      (await readJournalState(raw(answered), traitsOf, { witnessedSeq: 1 })).commandsSent[0]!.perInstance[0],
    ).toMatchObject({ answered: "ok" });
    // the earlier writer's bound is its resume marker's witnessedSeq
    const resumed = [
      started(3),
      post(1, 0, "commit"),
      post(2, 1, "commit"),
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", pid: 8, host: "h", witnessedSeq: 2 },
    ];
    expect((await read(resumed)).commandsSent[0]!.perInstance.map(({ instance: _, ...rest }) => rest)).toStrictEqual([
      { answered: "unknown" },
      never,
    ]);
  });

  it("the command: ok only when every instance accepted; unknown when any gave no usable answer; else error", async () => {
    const ok = { ok: true };
    const service = { ok: false, errorKind: "service" };
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [ok, ok, "ok"],
      [ok, service, "error"],
      [service, { ok: false, errorKind: "transport" }, "unknown"],
      [{ ok: false, errorKind: "not-sent" }, service, "error"],
    ];
    for (const [first, second, command] of cases) {
      const s = await read([started(0), post(1, 0, "start"), post(2, 1, "start"), answer(1, first), answer(2, second)]);
      expect(s.commandsSent[0]!.answered, JSON.stringify([first, second])).toBe(command);
    }
  });

  it("a commit.sent that names no instance is a commit of unknown effect", async () => {
    const s = await read([started(3), { type: "commit.sent", index: 3, id: "commit", instances: [], skewMs: 0 }]);
    expect(s.commandsSent).toStrictEqual([
      { op: "commit", stepIndex: 3, instances: [], answered: "unknown", perInstance: [] },
    ]);
    const noList = await read([started(3), { type: "commit.sent", index: 3, id: "commit", skewMs: 0 }]);
    expect(noList.commandsSent).toStrictEqual([
      { op: "commit", stepIndex: 3, instances: [], answered: "unknown", perInstance: [] },
    ]);
  });
});

describe("which requests are commands", () => {
  it("only a POST to the service on /api/v1/<command>, with an optional slash, query or fragment", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start", { method: "post" }),
      post(2, 0, "pause", { path: "/api/v1/pause/" }),
      post(3, 0, "resume", { path: "http://x:1/api/v1/resume?x=1" }),
      post(4, 0, "reverse", { path: "/api/v1/reverse#f" }),
      post(5, 0, "commit", { path: "/api/v1/commit/?a" }),
      // not commands
      post(6, 6, "progress"),
      post(7, 7, "start", { method: "GET" }),
      post(8, 8, "start", { target: "verifier" }),
      post(9, 9, "start", { target: "hook" }),
      post(10, 10, "start", { path: "/api/v1/startx" }),
      post(11, 11, "start", { path: "/api/v1/start/x" }),
      post(12, 12, "start", { path: 5 }),
      post(13, 13, "start", { method: undefined }),
      post(14, 14, "start", { path: "/api/v1/start//" }),
      // a path that is not a string, even one that reads as a command path once stringified
      post(15, 15, "start", { path: ["/api/v1/start"] }),
    ]);
    expect(s.commandsSent.map((c) => c.op)).toStrictEqual(["start", "pause", "resume", "reverse", "commit"]);
    expect(s.commandsSent.map((c) => c.perInstance)).toStrictEqual(
      Array(5).fill([{ instance: "i0", answered: "unknown" }]),
    );
  });

  it("a command belongs to the innermost running step, else to none (-1); one entry per op and step", async () => {
    const s = await read([
      post(1, 0, "pause"),
      started(0),
      started(1),
      post(2, 0, "pause"),
      ended(1),
      post(3, 0, "pause"),
      post(4, 1, "pause"),
      ended(0),
      post(5, 2, "pause"),
      started(1),
      post(6, 0, "pause"),
    ]);
    expect(s.commandsSent.map((c) => [c.op, c.stepIndex, c.instances])).toStrictEqual([
      ["pause", -1, ["i0", "i2"]],
      ["pause", 1, ["i0"]],
      ["pause", 0, ["i0", "i1"]],
    ]);
    // each op on its own in one step
    const two = await read([started(0), post(1, 0, "pause"), post(2, 0, "resume"), post(3, 0, "pause")]);
    expect(two.commandsSent.map((c) => [c.op, c.stepIndex])).toStrictEqual([
      ["pause", 0],
      ["resume", 0],
    ]);
  });

  it("a step that ends pops only its own entry off the running ones (the last one, if it started twice)", async () => {
    const s = await read([
      started(0),
      started(1),
      started(0),
      ended(0),
      post(1, 0, "pause"),
      ended(0),
      post(2, 0, "pause"),
    ]);
    expect(s.commandsSent.map((c) => c.stepIndex)).toStrictEqual([1]);
    // a step that ends without having started leaves the running ones alone
    const t = await read([started(0), ended(2), post(1, 0, "pause")]);
    expect(t.commandsSent.map((c) => c.stepIndex)).toStrictEqual([0]);
  });

  it("an instance without a numeric index is '?', an unnamed one '#n'", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start", { instance: { url: "http://a", index: 1 } }),
      post(2, 0, "start", { instance: { url: "http://b", name: "x" } }),
      post(3, 0, "start", { instance: undefined }),
      post(4, 0, "start", { instance: "i0" }),
    ]);
    expect(s.commandsSent[0]!.instances).toStrictEqual(["#2", "?"]);
    expect(s.commandsSent[0]!.perInstance[1]).toStrictEqual({ instance: "?", answered: "unknown" });
  });

  it("an answer finds its request by id; an unknown id, or a request without a numeric id, is not matched", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start"),
      post("2", 1, "start"),
      answer(9, { ok: true }),
      answer("2", { ok: true }),
      answer(2, { ok: true }),
      post(3, 0, "pause"),
      answer(3, { ok: true }),
    ]);
    expect(s.commandsSent).toStrictEqual([
      {
        op: "start",
        stepIndex: 0,
        instances: ["i0", "i1"],
        answered: "unknown",
        perInstance: [
          { instance: "i0", answered: "unknown" },
          { instance: "i1", answered: "unknown" },
        ],
      },
      {
        op: "pause",
        stepIndex: 0,
        instances: ["i0"],
        answered: "ok",
        perInstance: [{ instance: "i0", answered: "ok" }],
      },
    ]);
  });

  it("each send of a retried command keeps its own answer slot", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start"),
      post(2, 0, "start"),
      answer(2, { ok: false, errorKind: "service", error: "late" }),
      answer(1, { ok: false, errorKind: "service", error: "early" }),
    ]);
    // slot order, not answer order: the last send's error is the one kept
    expect(s.commandsSent[0]!.perInstance).toStrictEqual([{ instance: "i0", answered: "error", error: "late" }]);
  });
});

describe("commit.sent, the runner's own record of a commit broadcast", () => {
  it("maps the labels (name, else URL) back to instance keys; unknown labels are kept as they are", async () => {
    const s = await read([
      {
        type: "run.started",
        instances: [
          inst(0),
          { url: "http://b:1", index: 1 },
          { url: 5, index: 2 },
          "x",
          { url: "http://c", index: "3" },
        ],
        steps: STEPS,
      },
      started(3),
      { type: "commit.sent", index: 3, id: "commit", instances: ["i0", "http://b:1", "zz", 7], skewMs: 0 },
    ]);
    expect(s.instances).toStrictEqual([
      { key: "i0", url: "http://127.0.0.1:27182" },
      { key: "#2", url: "http://b:1" },
    ]);
    expect(s.commandsSent).toStrictEqual([
      {
        op: "commit",
        stepIndex: 3,
        instances: ["i0", "#2", "zz", "7"],
        answered: "unknown",
        perInstance: ["i0", "#2", "zz", "7"].map((instance) => ({ instance, answered: "unknown" })),
      },
    ]);
  });

  it("adds nothing when that step's commit requests are already recorded; another step's do not count", async () => {
    const s = await read([
      started(3),
      post(1, 0, "commit"),
      answer(1, { ok: true }),
      { type: "commit.sent", index: 3, id: "commit", instances: ["i0", "i1"], skewMs: 0 },
      post(2, 0, "pause"),
      { type: "commit.sent", index: 4, id: "done", instances: ["i1"], skewMs: 0 },
    ]);
    expect(s.commandsSent).toStrictEqual([
      {
        op: "commit",
        stepIndex: 3,
        instances: ["i0"],
        answered: "ok",
        perInstance: [{ instance: "i0", answered: "ok" }],
      },
      {
        op: "pause",
        stepIndex: 3,
        instances: ["i0"],
        answered: "unknown",
        perInstance: [{ instance: "i0", answered: "unknown" }],
      },
      {
        op: "commit",
        stepIndex: 4,
        instances: ["i1"],
        answered: "unknown",
        perInstance: [{ instance: "i1", answered: "unknown" }],
      },
    ]);
    // a pause in the step is not a commit
    const p = await read([
      started(3),
      post(1, 0, "pause"),
      { type: "commit.sent", index: 3, id: "commit", instances: ["i0"], skewMs: 0 },
    ]);
    expect(p.commandsSent.map((c) => c.op)).toStrictEqual(["pause", "commit"]);
  });

  it("a later run.started (a resume) replaces the instance list and its labels", async () => {
    const s = await read([
      { type: "run.started", instances: [inst(0, "old")], steps: [] },
      { type: "run.started", instances: [inst(0, "new")], steps: [] },
      { type: "commit.sent", index: 3, id: "commit", instances: ["old", "new"], skewMs: 0 },
      { type: "run.started", steps: [] },
    ]);
    expect(s.instances).toStrictEqual([{ key: "new", url: "http://127.0.0.1:27182" }]);
    expect(s.commandsSent[0]!.instances).toStrictEqual(["old", "new"]);
    const none = await read([{ type: "run.started", instances: "no", steps: [] }]);
    expect(none.instances).toBeUndefined();
    expect("instances" in none).toBe(false);
  });
});

describe("a commit let through past a forced writes-stopped interlock", () => {
  // an outside conformance review: a commit forced past its writes-stopped interlock (the stop's
  // hook failed) made verify's own interlock pass on that commit alone after a --resume, and the
  // run said "verified"; the forced decision (src/steps/kit/fleet-ops.ts `checkInterlock`) is read
  const decision = (index: number | undefined, kind = "force", check = "writes-stopped"): Record<string, unknown> => ({
    type: "decision",
    index,
    id: "commit",
    kind,
    ok: true,
    check,
    reason: "no stopWrites step has succeeded in this run — overridden by --force=writes-stopped",
  });
  const commitOf = (s: JournalState) => s.commandsSent.find((c) => c.op === "commit");
  const sentAfter = (d: Record<string, unknown>) => [started(3), d, post(1, 0, "commit"), answer(1, { ok: true })];

  it("the forced decision of the step that sends the commit marks it, and only it", async () => {
    const forced = await read(sentAfter(decision(3)));
    expect(commitOf(forced)).toMatchObject({ op: "commit", stepIndex: 3, answered: "ok", writesForced: true });
    for (const other of [
      decision(3, "interlock"),
      decision(3, "force", "can-commit"),
      decision(4),
      decision(undefined),
    ]) {
      const s = await read(sentAfter(other));
      expect(commitOf(s), JSON.stringify(other)).not.toHaveProperty("writesForced");
    }
    // a start the step of a forced decision sends is no commit
    const start = await read([started(0), decision(0), post(1, 0, "start")]);
    expect(start.commandsSent[0]).not.toHaveProperty("writesForced");
  });

  it("the runner's own record of a commit (commit.sent, no request lines) is marked too", async () => {
    const record = { type: "commit.sent", index: 3, id: "commit", instances: ["i0"], skewMs: 0 };
    expect(commitOf(await read([started(3), decision(3), record]))).toMatchObject({ writesForced: true });
    expect(commitOf(await read([started(3), record]))).not.toHaveProperty("writesForced");
  });

  it("a writer's forced decision is its own: a resume's commit sent unforced is not marked; one sent forced before stays marked", async () => {
    const resumed = { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", pid: 8, host: "h" };
    // forced, then refused by a later interlock before anything left: the resume sends it with writes stopped
    const unsent = await read([started(3), decision(3), ended(3, "failed"), resumed, started(3), post(1, 0, "commit")]);
    expect(commitOf(unsent)).not.toHaveProperty("writesForced");
    // forced and sent (no answer), completed by the resume: the writes that flowed stay unverified
    const sent = await read([started(3), decision(3), post(1, 0, "commit"), resumed, started(3), post(2, 0, "commit")]);
    expect(commitOf(sent)).toMatchObject({ writesForced: true });
  });

  it("a --from run's journal carries it with the commit it counted (run.started.carried.commitWritesForced)", async () => {
    const carried = (more: Record<string, unknown>) =>
      read([
        {
          type: "run.started",
          instances: [inst(0)],
          steps: STEPS,
          carried: { from: "/j/e.jsonl", writesStopped: false, commitSent: true, commitAccepted: true, ...more },
        },
      ]);
    expect((await carried({ commitWritesForced: true })).carriedCommit).toStrictEqual({
      sent: true,
      accepted: true,
      writesForced: true,
    });
    expect((await carried({ commitWritesForced: "yes" })).carriedCommit).toStrictEqual({ sent: true, accepted: true });
    expect((await carried({})).carriedCommit).toStrictEqual({ sent: true, accepted: true });
  });
});

describe("steps", () => {
  it("run.started lists the runbook's steps; step lines start and end them, sorted by index", async () => {
    const s = await read([
      {
        type: "run.started",
        instances: [],
        steps: [
          STEPS[3],
          { index: 1, id: "wait" },
          { index: 4, id: "odd", kind: 5 },
          { index: "2", id: "x" },
          { index: 5, id: 6 },
          "x",
          STEPS[0],
        ],
      },
      started(0),
      ended(0, "failed"),
      { type: "step.skipped", index: 3, id: "commit", reason: "r" },
    ]);
    expect(s.steps).toStrictEqual([
      { index: 0, id: "start", kind: "start", started: true, finished: "failed" },
      { index: 1, id: "wait", kind: "", started: false },
      { index: 3, id: "commit", kind: "commit", started: false, finished: "skipped" },
      { index: 4, id: "odd", kind: "", started: false },
    ]);
    for (const steps of ["x", undefined, 5]) {
      const noSteps = await read([{ type: "run.started", instances: [], steps }]);
      expect(noSteps.steps).toStrictEqual([]);
    }
  });

  it("a step started again forgets its earlier end; a step's kind is kept when a line gives none", async () => {
    const s = await read([
      started(2),
      ended(2, "failed"),
      { type: "step.started", index: 2, id: "stop", kind: 5, title: "t" },
      { type: "step.finished", index: 2, id: "stop" },
    ]);
    expect(s.steps).toStrictEqual([{ index: 2, id: "stop", kind: "stopWrites", started: true, finished: undefined }]);
    const again = await read([started(2), ended(2, "failed"), started(2)]);
    expect(again.steps).toStrictEqual([{ index: 2, id: "stop", kind: "stopWrites", started: true }]);
    expect("finished" in again.steps[0]!).toBe(false);
  });

  it("warns when one step index carries two ids, and keeps the later", async () => {
    const s = await read([
      { type: "run.started", instances: [], steps: [STEPS[1]] },
      { type: "step.started", index: 1, id: "renamed", kind: "waitFor" },
    ]);
    expect(s.steps).toStrictEqual([{ index: 1, id: "renamed", kind: "waitFor", started: true }]);
    expect(s.warnings).toStrictEqual([
      OLDER,
      'step 2 is "wait" in one part of the journal and "renamed" in another; the later is kept',
    ]);
  });

  // an outside review: a commit adopted by one resume (the fleet COMMITTED) read as "not committed" in the next
  it("a command step skipped as adopted (its command took effect) is done as one that ended ok; skipped otherwise", async () => {
    const s = await read([
      { type: "run.started", instances: [], steps: STEPS },
      started(3),
      post(1, 0, "commit"),
      { type: "step.skipped", index: 3, id: "commit", reason: "adopted: commit took effect", adopted: true },
      { type: "step.skipped", index: 4, id: "done", reason: "done in an earlier run (journal)" },
      { type: "step.skipped", index: 0, id: "start", reason: "x", adopted: "yes" },
    ]);
    expect(s.steps.map((x) => [x.index, x.finished])).toStrictEqual([
      [0, "skipped"],
      [1, undefined],
      [2, undefined],
      [3, "ok"],
      [4, "skipped"],
    ]);
  });

  // an adversarial run: a resume skips a reverse that ended ok as "done in an earlier run"; read as
  // skipped, the next resume lost the reverse: it counted the commit before it as the reversed
  // sync's (writesOff sent with writes flowing, "committed · verified") and ran no write stop again
  it("a step an earlier run of the journal ended, skipped by a resume as done: its outcome stands", async () => {
    const s = await read([
      { type: "run.started", instances: [], steps: STEPS },
      started(0),
      ended(0),
      started(1),
      ended(1, "failed"),
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", pid: 8, host: "h" },
      { type: "run.started", instances: [], steps: STEPS },
      { type: "step.skipped", index: 0, id: "start", reason: "done in an earlier run (journal)" },
      { type: "step.skipped", index: 1, id: "wait", reason: "done in an earlier run (journal)" },
      { type: "step.skipped", index: 2, id: "stop", reason: "when: false" },
    ]);
    expect(s.steps.map((x) => [x.index, x.finished])).toStrictEqual([
      [0, "ok"],
      [1, "failed"],
      [2, "skipped"],
      [3, undefined],
      [4, undefined],
    ]);
    // skipped by its `when` (a resume with other vars would run it): only that skip says so
    expect(s.steps.filter((x) => x.skippedByWhen === true).map((x) => x.index)).toStrictEqual([2]);
    const ranSince = await read([
      { type: "run.started", instances: [], steps: STEPS },
      { type: "step.skipped", index: 2, id: "stop", reason: "when: false" },
      { type: "step.skipped", index: 3, id: "commit", reason: "when: false", adopted: true },
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", pid: 8, host: "h" },
      started(2),
    ]);
    expect(ranSince.steps.map((x) => [x.index, x.finished, x.skippedByWhen])).toStrictEqual([
      [0, undefined, undefined],
      [1, undefined, undefined],
      [2, undefined, undefined],
      [3, "ok", undefined],
      [4, undefined, undefined],
    ]);
    // adopted by the resume (its command took effect after all): ok, whatever the step ended with
    const adopted = await read([
      { type: "run.started", instances: [], steps: STEPS },
      started(3),
      post(1, 0, "commit"),
      ended(3, "failed"),
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", pid: 8, host: "h" },
      { type: "step.skipped", index: 3, id: "commit", reason: "adopted: commit took effect", adopted: true },
      // a word other than true is no adoption: skipped
      { type: "step.skipped", index: 0, id: "start", reason: "x", adopted: false },
    ]);
    expect(adopted.steps.map((x) => [x.index, x.finished])).toStrictEqual([
      [0, "skipped"],
      [1, undefined],
      [2, undefined],
      [3, "ok"],
      [4, undefined],
    ]);
  });

  it("a step skipped past the run's --to is not done (a later --resume runs it), in the field's words or an older journal's; the run's end keeps its --to", async () => {
    const s = await read([
      { type: "run.started", instances: [], steps: STEPS },
      started(0),
      ended(0),
      { type: "step.skipped", index: 1, id: "wait", reason: "past the run's --to", pastTo: true },
      { type: "step.skipped", index: 2, id: "stop", reason: "after --to" },
      { type: "step.skipped", index: 3, id: "commit", reason: "when: false", pastTo: "yes" },
      // only a skip is read so: a step that ran and ended is done whatever else its line says
      { type: "step.finished", index: 4, id: "done", outcome: "ok", durationMs: 1, pastTo: true, reason: "after --to" },
      { type: "run.finished", outcome: "ok", exitCode: 0, committed: false, durationMs: 1, to: "start" },
    ]);
    expect(s.steps.map((x) => [x.index, x.finished])).toStrictEqual([
      [0, "ok"],
      [1, undefined],
      [2, undefined],
      [3, "skipped"],
      [4, "ok"],
    ]);
    expect(s.finished).toStrictEqual({ outcome: "ok", committed: false, at: s.finished!.at, to: "start" });
    const plain = await read([
      { type: "run.finished", outcome: "ok", exitCode: 0, committed: false, durationMs: 1, to: 7 },
    ]);
    expect(plain.finished).not.toHaveProperty("to");
  });

  it("a step listed without a kind takes the kind its step.started line gives", async () => {
    const s = await read([
      { type: "run.started", instances: [], steps: [{ index: 2, id: "stop" }] },
      started(2),
      ended(2),
    ]);
    expect(s.steps).toStrictEqual([{ index: 2, id: "stop", kind: "stopWrites", started: true, finished: "ok" }]);
    expect(s.stopWritesSucceeded).toBe(true);
  });
});

describe("whether writes are stopped", () => {
  const stopRun = [
    { type: "run.started", instances: [inst(0)], steps: STEPS },
    started(2),
    { type: "hook.started", index: 2, id: "stop", use: "shell", undo: false },
    { type: "hook.finished", index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 1 },
    ended(2),
  ];

  it("a stopWrites step that ended ok stopped them; one that failed or was skipped did not", async () => {
    expect((await read(stopRun)).stopWritesSucceeded).toBe(true);
    expect((await read([...stopRun.slice(0, 4), ended(2, "failed")])).stopWritesSucceeded).toBe(false);
    expect(
      (
        await read([
          { type: "run.started", instances: [], steps: STEPS },
          { type: "step.skipped", index: 2, id: "stop" },
        ])
      ).stopWritesSucceeded,
    ).toBe(false);
    // another kind of step that ends ok stops nothing
    expect((await read([started(3), ended(3)])).stopWritesSucceeded).toBe(false);
  });

  it("a reverse that ended ok means writes must be stopped again; a failed reverse changes nothing", async () => {
    const rev = { type: "step.started", index: 5, id: "back", kind: "reverse", title: "r" };
    const revEnd = (outcome: string) => ({ type: "step.finished", index: 5, id: "back", outcome, durationMs: 1 });
    expect((await read([...stopRun, rev, revEnd("ok")])).stopWritesSucceeded).toBe(false);
    expect((await read([...stopRun, rev, revEnd("failed")])).stopWritesSucceeded).toBe(true);
    // a reverse skipped is not a reverse done
    expect((await read([...stopRun, rev, { type: "step.skipped", index: 5, id: "back" }])).stopWritesSucceeded).toBe(
      true,
    );
  });

  it("an undo of another step's hook leaves the stop in place", async () => {
    const s = await read([
      ...stopRun,
      started(3),
      { type: "hook.started", index: 3, id: "h", use: "shell", undo: false },
      { type: "hook.finished", index: 3, id: "h", use: "shell", undo: false, ok: true, durationMs: 1 },
      ended(3),
      { type: "hook.started", index: 3, id: "h", use: "shell", undo: true },
      { type: "hook.finished", index: 3, id: "h", use: "shell", undo: true, ok: true, durationMs: 1 },
    ]);
    expect(s.stopWritesSucceeded).toBe(true);
    expect(s.hooksRan).toStrictEqual([
      { stepIndex: 2, id: "stop", use: "shell", ok: true, undone: false },
      { stepIndex: 3, id: "h", use: "shell", ok: true, undone: true, undoStarted: true },
    ]);
  });

  it("an --abort that handed the stop's undo to a person (no `undo:`): writes may be back on, for every later run too", async () => {
    // an outside review: the rule read the last run's end only, so a --resume cut off before it
    // stopped writes again left the next --resume counting the stop, and it committed over writes
    const byHand = (index: number, check = "by-hand", kind = "undo") => ({
      type: "decision",
      index,
      id: "stop",
      kind,
      ok: false,
      check,
      reason: "no undo",
    });
    const aborted = {
      type: "run.finished",
      outcome: "failed",
      exitCode: 1,
      committed: false,
      durationMs: 1,
      aborted: true,
    };
    const resumedCut = [
      { type: "run.started", instances: [inst(0)], steps: STEPS, mode: "resume" },
      { type: "run.finished", outcome: "interrupted", exitCode: 130, committed: false, durationMs: 1 },
    ];
    const s = await read([...stopRun, byHand(2), aborted, ...resumedCut]);
    expect(s.stopWritesSucceeded).toBe(false);
    expect(s.hooksRan).toStrictEqual([
      { stepIndex: 2, id: "stop", use: "shell", ok: true, undone: false, byHand: true },
    ]);
    // another check, kind or step (one that never ran, one with no index), or a stop run again
    // since, is not handed over; nor a hook whose undo ran
    for (const other of [
      byHand(2, "abort"),
      byHand(2, "by-hand", "interlock"),
      byHand(3),
      byHand(9),
      { ...byHand(2), index: undefined },
    ]) {
      const o = await read([...stopRun, other]);
      expect(o.stopWritesSucceeded, JSON.stringify(other)).toBe(true);
      expect(
        o.hooksRan.map((h) => h.byHand),
        JSON.stringify(other),
      ).toEqual([undefined]);
    }
    const undone = await read([
      ...stopRun,
      { type: "hook.finished", index: 2, id: "stop", use: "shell", undo: true, ok: true, durationMs: 1 },
      byHand(2),
    ]);
    expect(undone.hooksRan.map((h) => h.byHand)).toEqual([undefined]);
    const again = await read([...stopRun, byHand(2), ...stopRun.slice(1)]);
    expect(again.stopWritesSucceeded).toBe(true);
    expect(again.hooksRan.map((h) => h.byHand)).toEqual([true, undefined]);
  });

  it("an --abort run that began after a hook not undone marks it, unless it journals that it kept writes stopped; not one undone, nor one run after it", async () => {
    // the abort's undo or hand-off can be missing (the abort killed, its journal failing while it
    // still told the operator to do it by hand); the readers judge the mark against the sync that
    // runs now (src/run/earlier.ts `stopAbortCut`, src/run/resume-decide.ts)
    const abortStarted = { type: "run.started", instances: [inst(0)], steps: STEPS, mode: "resume", abort: true };
    const s = await read([...stopRun, abortStarted]);
    expect(s.hooksRan).toStrictEqual([
      { stepIndex: 2, id: "stop", use: "shell", ok: true, undone: false, abortAfter: true },
    ]);
    // the journal's own word on the stop is unchanged: the readers decide, knowing the sync
    expect(s.stopWritesSucceeded).toBe(true);
    // every hook not undone, a commit in the journal or not (the readers weigh the commit)
    const commit = {
      type: "request.sent",
      id: 9,
      target: "service",
      method: "POST",
      path: "/api/v1/commit",
      instance: inst(0),
    };
    expect((await read([...stopRun, commit, abortStarted])).hooksRan.map((h) => h.abortAfter)).toEqual([true]);
    // a resume, not an --abort (abort absent or not true): no mark
    for (const resume of [
      { ...abortStarted, abort: undefined },
      { ...abortStarted, abort: "true" },
    ])
      expect(
        (await read([...stopRun, resume])).hooksRan.map((h) => h.abortAfter),
        JSON.stringify(resume),
      ).toEqual([undefined]);
    // the abort journaled that the fleet or the journal ruled the undo out: writes kept stopped on
    // purpose, nothing undone or handed over (an outside review: status said "may be back on")
    const keptOff = (check: string, ok = false) => ({ type: "decision", kind: "undo", ok, check, reason: "r" });
    for (const check of ["fleet-state", "journal"])
      expect(
        (await read([...stopRun, abortStarted, keptOff(check)])).hooksRan.map((h) => h.abortAfter),
        check,
      ).toEqual([undefined]);
    // a later run's keep-off (its unwind's, not the abort's) says nothing of what the abort did
    const resumeStarted = { ...abortStarted, abort: undefined };
    expect(
      (await read([...stopRun, abortStarted, resumeStarted, keptOff("fleet-state")])).hooksRan.map((h) => h.abortAfter),
    ).toEqual([true]);
    // another decision keeps the mark: an ok one, another check, another kind
    for (const other of [keptOff("fleet-state", true), keptOff("abort"), { ...keptOff("journal"), kind: "interlock" }])
      expect(
        (await read([...stopRun, abortStarted, other])).hooksRan.map((h) => h.abortAfter),
        JSON.stringify(other),
      ).toEqual([true]);
    // undone before the abort: nothing to undo or hand over
    const undone = await read([
      ...stopRun,
      { type: "hook.finished", index: 2, id: "stop", use: "shell", undo: true, ok: true, durationMs: 1 },
      abortStarted,
    ]);
    expect(undone.hooksRan.map((h) => h.abortAfter)).toEqual([undefined]);
    // run again by a later resume: that run's hook is not the abort's
    const again = await read([...stopRun, abortStarted, ...stopRun]);
    expect(again.hooksRan.map((h) => h.abortAfter)).toEqual([true, undefined]);
  });

  it("an undo's finish alone (its start lost) that succeeded turns the stop off; undo only when undo is true", async () => {
    const s = await read([
      ...stopRun,
      { type: "hook.finished", index: 2, id: "stop", use: "shell", undo: true, ok: true },
    ]);
    expect(s.stopWritesSucceeded).toBe(false);
    expect(s.hooksRan[0]).toStrictEqual({ stepIndex: 2, id: "stop", use: "shell", ok: true, undone: true });
    const failed = await read([
      ...stopRun,
      { type: "hook.finished", index: 2, id: "stop", use: "shell", undo: true, ok: "true" },
    ]);
    expect(failed.stopWritesSucceeded).toBe(true);
    expect(failed.hooksRan[0]).toStrictEqual({ stepIndex: 2, id: "stop", use: "shell", ok: true, undone: false });
    const notUndo = await read([
      ...stopRun,
      { type: "hook.started", index: 2, id: "stop", use: "shell", undo: "true" },
    ]);
    expect(notUndo.stopWritesSucceeded).toBe(true);
    expect(notUndo.hooksRan).toHaveLength(2);
  });
});

describe("hooks", () => {
  it("a hook's finish closes the latest open hook of its step; ok only when ok is true", async () => {
    const s = await read([
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: false },
      { type: "hook.started", index: 1, id: "b", use: "http", undo: false },
      { type: "hook.started", index: 2, id: "c", use: "shell", undo: false },
      { type: "hook.finished", index: 1, id: "b", undo: false, ok: "yes" },
      { type: "hook.finished", index: 1, id: "a", undo: false, ok: true },
      { type: "hook.finished", index: 1, id: "a", undo: false, ok: true },
      { type: "hook.started", index: 4, id: "d", use: "shell" },
      { type: "hook.finished", index: 9, id: "z", ok: true },
    ]);
    expect(s.hooksRan).toStrictEqual([
      { stepIndex: 1, id: "a", use: "shell", ok: true, undone: false },
      { stepIndex: 1, id: "b", use: "http", ok: false, undone: false },
      { stepIndex: 2, id: "c", use: "shell", undone: false },
      { stepIndex: 4, id: "d", use: "shell", undone: false },
    ]);
  });

  it("an undo marks every hook of its step undone, and only those", async () => {
    const s = await read([
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: false },
      { type: "hook.started", index: 1, id: "b", use: "shell", undo: false },
      { type: "hook.started", index: 2, id: "c", use: "shell", undo: false },
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: true },
      { type: "hook.finished", index: 1, id: "a", undo: true, ok: true },
    ]);
    expect(s.hooksRan).toStrictEqual([
      { stepIndex: 1, id: "a", use: "shell", undone: true, undoStarted: true },
      { stepIndex: 1, id: "b", use: "shell", undone: true, undoStarted: true },
      { stepIndex: 2, id: "c", use: "shell", undone: false },
    ]);
  });
});

describe("hook calls and their processes (what --resume waits out before it acts)", () => {
  it("a hook.started with a token is a call; its processes are the valid pids journaled under that token, with their start", async () => {
    const s = await read([
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: false, token: "t1" },
      { type: "hook.process", token: "t1", pid: 4242, pgid: 4242, start: 1234 },
      { type: "hook.process", token: "t1", pid: 4243, pgid: 0, start: -1 },
      { type: "hook.process", token: "t1", pid: -5, pgid: 7 },
      { type: "hook.process", token: "t1", pid: 1.5 },
      { type: "hook.process", token: "nope", pid: 9999 },
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: true, token: "t2" },
      { type: "hook.process", token: "t2", pid: 5000, pgid: "x", start: 0.5 },
      { type: "hook.finished", index: 1, id: "a", undo: true, ok: false },
      { type: "hook.started", index: 2, id: "b", use: "http", undo: false },
    ]);
    expect(s.hookCalls).toStrictEqual([
      {
        token: "t1",
        stepIndex: 1,
        id: "a",
        use: "shell",
        undo: false,
        at: 1001,
        processes: [{ pid: 4242, pgid: 4242, start: 1234 }, { pid: 4243 }],
        finished: false,
        host: "h",
        file: s.file,
      },
      {
        token: "t2",
        stepIndex: 1,
        id: "a",
        use: "shell",
        undo: true,
        at: 1007,
        processes: [{ pid: 5000 }],
        finished: true,
        host: "h",
        file: s.file,
      },
    ]);
  });

  it("a call carries where its pids mean something: the host, PID namespace and boot of the writer that journaled it", async () => {
    const s = await read(
      [
        { type: "hook.started", index: 1, id: "a", use: "shell", undo: false, token: "t1" },
        {
          type: "journal.resumed",
          version: 1,
          runbook: "sales",
          hash: "sha256:x",
          pid: 8,
          host: "other",
          pidns: "pid:[2]",
        },
        { type: "hook.started", index: 1, id: "a", use: "shell", undo: true, token: "t2" },
      ],
      headerOf({ pidns: "pid:[1]", boot: "b1" }),
    );
    expect(s.hookCalls.map((c) => [c.token, c.host, c.pidns, c.boot])).toEqual([
      ["t1", "h", "pid:[1]", "b1"],
      ["t2", "other", "pid:[2]", undefined],
    ]);
  });

  it("a hook.finished closes the latest unfinished call of its step and kind (undo or not), and only that one", async () => {
    const s = await read([
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: false, token: "t1" },
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: false, token: "t2" },
      { type: "hook.started", index: 1, id: "a", use: "shell", undo: true, token: "t3" },
      { type: "hook.started", index: 2, id: "b", use: "shell", undo: false, token: "t4" },
      { type: "hook.finished", index: 1, id: "a", undo: false, ok: true },
    ]);
    expect(s.hookCalls.map((c) => [c.token, c.finished])).toStrictEqual([
      ["t1", false],
      ["t2", true],
      ["t3", false],
      ["t4", false],
    ]);
  });
});

describe("the run's end and the writers (segments)", () => {
  it("records run.finished (message only when it is a string); a resume marker clears it", async () => {
    const s = await read([{ type: "run.finished", outcome: "ok", committed: true, exitCode: 0, message: "done" }]);
    expect(s.finished).toStrictEqual({ outcome: "ok", committed: true, at: 1001, message: "done" });
    const t = await read([{ type: "run.finished", outcome: "failed", committed: "yes", message: 3 }]);
    expect(t.finished).toStrictEqual({ outcome: "failed", committed: false, at: 1001 });
    const u = await read([
      { type: "run.finished", outcome: "failed", committed: false },
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "def", pid: 8, host: "k" },
    ]);
    expect(u.finished).toBeUndefined();
    expect("finished" in u).toBe(false);
  });

  it("records an --abort's end as aborted (only when the event says exactly true)", async () => {
    const a = await read([{ type: "run.finished", outcome: "failed", committed: false, aborted: true }]);
    expect(a.finished).toStrictEqual({ outcome: "failed", committed: false, at: 1001, aborted: true });
    const b = await read([{ type: "run.finished", outcome: "failed", committed: false, aborted: "yes" }]);
    expect(b.finished).toStrictEqual({ outcome: "failed", committed: false, at: 1001 });
  });

  it("lists each writer (header and resume markers) with its pid, host, time, hash and line; the latest hash wins", async () => {
    const s = await read([
      { type: "step.started", ...STEPS[0] },
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "def", pid: "8", host: 9, at: 77 },
    ]);
    expect(s.segments).toStrictEqual([
      { kind: "opened", pid: 7, host: "h", at: 1, hash: "abc", line: 1 },
      { kind: "resumed", pid: 8, host: "9", at: 77, hash: "def", line: 3 },
    ]);
    expect(s.hash).toBe("def");
    expect(s.runbook).toBe("sales");
    expect(s.file).toMatch(/\.jsonl$/);
  });

  it("a resume marker starts a new writer: the old one's running steps and request ids are its own", async () => {
    const s = await read([
      started(0),
      post(1, 0, "start"),
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", pid: 8, host: "k" },
      answer(1, { ok: true }),
      post(2, 0, "pause"),
    ]);
    expect(s.commandsSent).toStrictEqual([
      {
        op: "start",
        stepIndex: 0,
        instances: ["i0"],
        answered: "unknown",
        perInstance: [{ instance: "i0", answered: "unknown" }],
      },
      {
        op: "pause",
        stepIndex: -1,
        instances: ["i0"],
        answered: "unknown",
        perInstance: [{ instance: "i0", answered: "unknown" }],
      },
    ]);
  });

  it("lastSeq is the highest seq seen, not the last one", async () => {
    const s = await read([
      { type: "log", seq: 5, at: 1 },
      { type: "log", seq: 3, at: 1 },
    ]);
    expect(s.lastSeq).toBe(5);
    expect((await read([])).lastSeq).toBe(0);
  });

  it("an unknown event type is skipped (a newer runner's)", async () => {
    const s = await read([{ type: "something.new", index: 2, kind: "stopWrites" }]);
    expect(s).toMatchObject({
      steps: [],
      commandsSent: [],
      hooksRan: [],
      stopWritesSucceeded: false,
      warnings: [OLDER],
    });
  });
});

describe("headers and resume markers", () => {
  it("refuses a header or marker that lacks version, runbook or hash, naming it", async () => {
    for (const drop of ["version", "runbook", "hash"]) {
      const h = headerOf();
      h[drop] = drop === "version" ? "1" : 1;
      const f = raw([], h);
      const err = await refusal(f);
      expect(err.message, drop).toBe(`${f}:1: the journal.opened line lacks version, runbook or hash`);
      expect(err.hint).toBe(DEFAULT_HINT);
      expect(err).toBeInstanceOf(DistrustedJournal);
    }
    const m = raw([{ type: "journal.resumed", version: 1, runbook: "sales" }]);
    expect((await refusal(m)).message).toBe(`${m}:2: the journal.resumed line lacks version, runbook or hash`);
  });

  it("refuses a newer format (header or marker); reads its own and older formats", async () => {
    const f = raw([], headerOf({ version: 3 }));
    const err = await refusal(f);
    expect(err.message).toBe(`${f}:1: written in journal format 3; this syncbook reads format 2`);
    expect(err.hint).toBe("resume with the syncbook version that wrote the journal (or a newer one)");
    expect(err).not.toBeInstanceOf(DistrustedJournal);
    const m = raw([{ type: "journal.resumed", version: 3, runbook: "sales", hash: "x" }]);
    expect((await refusal(m)).message).toBe(`${m}:2: written in journal format 3; this syncbook reads format 2`);
    const own = await read([{ type: "journal.resumed", version: 2, runbook: "sales", hash: "x" }]);
    expect(own.segments).toHaveLength(2);
    const zero = await read([], headerOf({ version: 0 }));
    expect(zero.warnings).toStrictEqual([OLDER.replace("format 1", "format 0")]);
  });

  it("refuses a resume of another runbook in this journal", async () => {
    const f = raw([{ type: "journal.resumed", version: 1, runbook: "crm", hash: "x" }]);
    const err = await refusal(f);
    expect(err.message).toBe(`${f}:2: a resume of runbook "crm" in the journal of "sales"`);
    expect(err.hint).toBe(DEFAULT_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
  });

  it("refuses a second header (two journals joined) and a first line that is not a header", async () => {
    const f = raw([headerOf({ seq: 1 })]);
    const err = await refusal(f);
    expect(err.message).toBe(`${f}:2: a second journal header: two journals were joined into one file`);
    expect(err.hint).toBe(DEFAULT_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
    const g = raw([], { type: "journal.resumed", seq: 0, at: 1, version: 1, runbook: "sales", hash: "abc" });
    const e2 = await refusal(g);
    expect(e2.message).toBe(
      `${g}:1: not a syncbook journal: the first line is a "journal.resumed" event, not the journal.opened header`,
    );
    expect(e2.hint).toBe(
      "resume only from a journal syncbook wrote (its first line is the journal.opened header); a journal from an older syncbook cannot be resumed: check the fleet by hand and start a new run",
    );
  });
});

describe("lines that do not parse", () => {
  it("a cut-short last line is dropped with a warning that counts the lines before it", async () => {
    const s = await read([started(0), started(1), '{"type":"step.sta']);
    expect(s.warnings).toStrictEqual([
      OLDER,
      "the last line (4) is cut short (not JSON): the run was interrupted while writing it; resuming from the 3 lines before it (nothing after it was confirmed)",
    ]);
    expect(s.steps.map((x) => x.index)).toStrictEqual([0, 1]);
  });

  it("blank lines are not lines of the journal", async () => {
    const s = await read([started(0), "", "   ", started(1)]);
    expect(s.steps.map((x) => x.index)).toStrictEqual([0, 1]);
    expect(s.warnings).toStrictEqual([OLDER]);
  });

  it("a resume marker naming the cut line excuses it; any other line after it refuses the journal", async () => {
    const ok = await read([
      started(0),
      '{"type":"step.sta',
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", truncatedLine: 3 },
      started(1),
    ]);
    expect(ok.warnings).toStrictEqual([
      OLDER,
      "line 3 was cut short by a crash (not JSON); the run was resumed after it (line 4) and it is ignored",
    ]);
    expect(ok.steps.map((x) => [x.index, x.started])).toStrictEqual([
      [0, true],
      [1, true],
    ]);
    // a marker that names another line
    const other = raw([
      started(0),
      '{"type":"step.sta',
      { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc", truncatedLine: 2 },
    ]);
    const err = await refusal(other);
    expect(err.message).toBe(`${other}:3: line 3 is not JSON, and more lines follow it: the journal is corrupt`);
    expect(err.hint).toBe(DEFAULT_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
    // a marker without one
    const none = raw(['{"type":"step.sta', { type: "journal.resumed", version: 1, runbook: "sales", hash: "abc" }]);
    expect((await refusal(none)).message).toMatch(/:2: line 2 is not JSON, and more lines follow/);
    // another event that names it
    const ev = raw(["[1]", { type: "log", truncatedLine: 2 }]);
    expect((await refusal(ev)).message).toMatch(/:2: line 2 is not a JSON object, and more lines follow/);
    // a marker-shaped line that is not an event (no seq) does not vouch either
    const notEvent = raw([
      '{"type":"step.sta',
      JSON.stringify({ type: "journal.resumed", at: 1, version: 1, runbook: "sales", hash: "abc", truncatedLine: 2 }),
      started(0),
    ]);
    expect((await refusal(notEvent)).message).toMatch(/:2: line 2 is not JSON, and more lines follow/);
  });

  it("binary data before the header is not a journal; after it, a cut line like any other", async () => {
    const f = raw([], "\u0000\u0001{");
    const err = await refusal(f);
    expect(err.message).toBe(`${f}:1: not a syncbook journal (binary data)`);
    expect(err.hint).toBe("pass the .jsonl journal of the run (see .syncbook/<runbook>/)");
    const s = await read([started(0), "\u0000\u0000"]);
    expect(s.warnings[1]).toMatch(/^the last line \(3\) is cut short \(not JSON\)/);
  });

  it("a header line that does not parse: the run crashed before it recorded anything", async () => {
    const f = join(dir, "h.jsonl");
    writeFileSync(f, '{"type":"journal.op');
    const err = await refusal(f);
    expect(err.message).toBe(
      `${f}:1: the journal's header line is cut short (not JSON): the run crashed before it recorded anything`,
    );
    expect(err.hint).toBe(NO_COMMAND_HINT);
    expect(err).not.toBeInstanceOf(DistrustedJournal);
    const e = join(dir, "e.jsonl");
    writeFileSync(e, "\n  \n");
    const err2 = await refusal(e);
    expect(err2.message).toBe(`${e}: the journal is empty`);
    expect(err2.hint).toBe(NO_COMMAND_HINT);
  });

  it("a file that cannot be read is refused with why", async () => {
    const missing = join(dir, "missing.jsonl");
    const err = await refusal(missing);
    expect(err.message).toBe(`${missing}: cannot read the journal: no such file`);
    expect(err.hint).toBe("pass a journal file (.syncbook/<runbook>/*.jsonl); findLatestJournal picks the newest");
    const folder = join(dir, "d.jsonl");
    mkdirSync(folder);
    expect((await refusal(folder)).message).toBe(`${folder}: cannot read the journal: is a directory`);
    const under = join(dir, "f.jsonl");
    writeFileSync(under, "");
    const nested = join(under, "x.jsonl");
    expect((await refusal(nested)).message).toMatch(
      new RegExp(`^${nested}: cannot read the journal: ENOTDIR: not a directory`),
    );
  });
});

describe("the hash chain as the reader applies it", () => {
  function chained(events: RunEvent[]): string {
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    for (const e of events) j.write(e);
    j.close();
    return j.file;
  }

  it("a chained journal reads without a warning", async () => {
    const ev = eventFactory();
    const s = await readJournalState(chained([ev("step.started", STEPS[0]!)]), traitsOf);
    expect(s.warnings).toStrictEqual([]);
    expect(s.segments[0]).toMatchObject({ kind: "opened", line: 1, hash: "abc" });
  });

  it("a format 2 header without its chain field was edited", async () => {
    const f = raw([], headerOf({ version: 2 }));
    const err = await refusal(f);
    expect(err.message).toBe(`${f}:1: the header says journal format 2, which is chained, but it has no chain field`);
    expect(err.hint).toBe(TAMPERED_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
  });

  it("an edited header is refused as tampered, not read", async () => {
    const ev = eventFactory();
    const f = chained([ev("step.started", STEPS[0]!)]);
    const { readFileSync } = await import("node:fs");
    const lines = readFileSync(f, "utf8").split("\n");
    lines[0] = lines[0]!.replace('"pid":', '"pid":1');
    writeFileSync(f, lines.join("\n"));
    const err = await refusal(f);
    expect(err.message).toBe(`${f}:1: line 1 does not start the journal's chain: it was edited`);
    expect(err.hint).toBe(TAMPERED_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
  });

  it("an edited line after the header is refused as tampered, at its line", async () => {
    const ev = eventFactory();
    const f = chained([ev("step.started", STEPS[0]!), ev("step.started", STEPS[1]!)]);
    const { readFileSync } = await import("node:fs");
    const lines = readFileSync(f, "utf8").split("\n");
    lines[1] = lines[1]!.replace('"start"', '"other"');
    writeFileSync(f, lines.join("\n"));
    const err = await refusal(f);
    expect(err.message).toBe(
      `${f}:2: the journal's chain breaks at line 2: a line between 1 and 2 was deleted, added or edited, or line 2 itself was edited`,
    );
    expect(err.hint).toBe(TAMPERED_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
    expect((err as DistrustedJournal).journal).toBe(f);
  });
});

describe("the hash chain across writers", () => {
  it("a resume of a journal written before chaining starts its chain at the resume marker", async () => {
    const f = raw([started(0)]);
    const r = openJournal({ dir, runbookName: "sales", runbookHash: "abc", file: f });
    r.write(eventFactory()("step.started", STEPS[1]!));
    r.close();
    const s = await readJournalState(f, traitsOf);
    expect(s.warnings).toStrictEqual([OLDER]);
    expect(s.segments.map((x) => [x.kind, x.line])).toStrictEqual([
      ["opened", 1],
      ["resumed", 3],
    ]);
    expect(s.steps.map((x) => x.index)).toStrictEqual([0, 1]);
  });

  it("a chained line after unchained ones that is not a resume marker does not start a chain", async () => {
    const body = JSON.stringify({ seq: 1, at: 2, type: "step.started", ...STEPS[0] });
    const f = raw([appendChain("", body).line]);
    const err = await refusal(f);
    expect(err.message).toBe(
      `${f}:2: line 2 is chained, but the journal's chain does not start at a header or resume marker before it`,
    );
    expect(err.hint).toBe(TAMPERED_HINT);
    expect(err).toBeInstanceOf(DistrustedJournal);
  });

  it("a first line's own problems are said before its chain's", async () => {
    // a first line that is not a header, with a chain field that links to nothing
    const f = raw([], { type: "step.started", seq: 0, at: 1, chain: "0".repeat(32) });
    expect((await refusal(f)).message).toBe(
      `${f}:1: not a syncbook journal: the first line is a "step.started" event, not the journal.opened header`,
    );
    // a newer format whose chain does not match
    const g = raw([], { ...headerOf({ version: 3 }), chain: "0".repeat(32) });
    expect((await refusal(g)).message).toBe(`${g}:1: written in journal format 3; this syncbook reads format 2`);
  });
});

describe("findResumeJournal", () => {
  it("names the folder when it is missing, empty or unreadable", async () => {
    const none = join(dir, "none");
    await expect(findResumeJournal(none)).rejects.toMatchObject({
      message: `nothing to resume: no journal folder ${none}`,
      exitCode: 2,
      hint: "run without --resume to start a new run (its start interlock checks that the fleet is IDLE)",
    });
    await expect(findResumeJournal(dir)).rejects.toMatchObject({
      message: `nothing to resume: ${dir} holds no journal (*.jsonl)`,
      exitCode: 2,
    });
    const file = join(dir, "plain");
    writeFileSync(file, "");
    const err: unknown = await findResumeJournal(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err).toMatchObject({ exitCode: 2 });
    expect((err as UserError).message).toMatch(new RegExp(`^cannot read the journal folder ${file}: ENOTDIR`));
  });

  it("returns the journal and the newer ones passed over", async () => {
    const ev = eventFactory();
    const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    j.write(ev("request.sent", { id: 1, target: "service", method: "POST", path: "/api/v1/start" }));
    j.close();
    const later = join(dir, "9999-later.jsonl");
    writeFileSync(later, JSON.stringify(headerOf()));
    const { utimesSync } = await import("node:fs");
    const t = new Date(Date.now() + 9000);
    utimesSync(later, t, t);
    expect(await findResumeJournal(dir)).toStrictEqual({ file: j.file, skipped: [later] });
    expect(await findLatestJournal(dir)).toBe(j.file);
  });

  it("two unfinished runs that do not order: refused as an interlock (exit 3), naming both, never guessed (issue 30)", async () => {
    const acted = `${JSON.stringify(headerOf())}\n${JSON.stringify({ type: "hook.started", seq: 1, at: 1 })}\n`;
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    writeFileSync(a, acted);
    writeFileSync(b, acted);
    const err: unknown = await findResumeJournal(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err).toMatchObject({
      message: `cannot choose the journal to resume: 2 journals in ${dir} hold an unfinished run and none says it came after the others: ${a}, ${b}`,
      exitCode: 3,
      hint: "name the one to continue with --resume <file> (file times are not trusted: a clock step or a copy changes them)",
    });
    // one naming the other as earlier: it is the journal
    writeFileSync(b, acted.replace('"journal.opened"', '"journal.opened","after":["a.jsonl"]'));
    expect(await findResumeJournal(dir)).toStrictEqual({ file: b, skipped: [] });
  });
});

describe("classifyAnswer: what one answer says of its command", () => {
  it("ok; refused or never sent (did not take effect): error; anything else: unknown, with the error's text", () => {
    expect(classifyAnswer({ ok: true, error: "x" })).toStrictEqual({ answered: "ok" });
    expect(classifyAnswer({ errorKind: "service", error: "e" })).toStrictEqual({ answered: "error", error: "e" });
    expect(classifyAnswer({ errorKind: "not-sent" })).toStrictEqual({ answered: "error" });
    expect(classifyAnswer({ errorKind: "transport", error: "t" })).toStrictEqual({ answered: "unknown", error: "t" });
    // service facts: "read `success`, never the status code"
    expect(classifyAnswer({ body: { success: false } })).toStrictEqual({ answered: "error" });
    const url = "http://127.0.0.1:27182";
    expect(classifyAnswer({ error: `${url}: commit refused: NotReady` })).toStrictEqual({
      answered: "error",
      error: `${url}: commit refused: NotReady`,
    });
    expect(classifyAnswer({ error: `${url}: start failed: cannot connect: ECONNREFUSED` })).toStrictEqual({
      answered: "error",
      error: `${url}: start failed: cannot connect: ECONNREFUSED`,
    });
    expect(classifyAnswer({ error: `${url}: start failed: no answer within 2 s` })).toStrictEqual({
      answered: "unknown",
      error: `${url}: start failed: no answer within 2 s`,
    });
    expect(classifyAnswer({})).toStrictEqual({ answered: "unknown" });
    expect(classifyAnswer({ error: 5 })).toStrictEqual({ answered: "unknown" });
  });
});
