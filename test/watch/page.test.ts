/**
 * The watch page's durations are `formatDuration`'s (src/runbook/duration.ts), the one format of a
 * duration in every output: the page's script runs the function's own source (issue 40; it had a
 * copy of its own that wrote a day as "25h 00m" where every other output says "1d 1h"). Its
 * verifier documents are `verifierDocsText`'s (src/text.ts) the same way: it had words of its own
 * ("1200 of 5000 documents compared") that read a recheck generation's counts as the verification's.
 */
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { StepOutcome } from "../../src/model/contract.js";
import { formatDuration } from "../../src/runbook/duration.js";
import { verifierDocsText, type GenerationDocs } from "../../src/text.js";
import { windowBoundOf, windowEndWords, windowLength } from "../../src/writes-words.js";
import { watchPage } from "../../src/watch/page.js";
import type { RunEvent } from "../../src/events.js";
import { COMMITTED_OFF_RECORD_WORDS, CUT_OFF_WORDS, CutoverFold, cutOff } from "../../src/model/fold.js";
import { traitsOf } from "../../src/steps/index.js";
import { runnerVerdict } from "../../src/watch/runner.js";
import { buildState } from "../../src/watch/state.js";

/** One of the page script's inlined functions, evaluated on its own (it uses nothing of the page's). */
function pageFunction(name: string, next: string): unknown {
  const html = watchPage("n0nce");
  const m = new RegExp(`\\nconst ${name} = ([\\s\\S]*?);\\n${next}`).exec(html);
  if (!m) throw new Error(`the page's script has no \`const ${name} = …;\` before \`${next}\``);
  // in a context of its own, as the page's script has nothing of Node's
  return runInNewContext(`"use strict"; (${m[1]})`);
}
const pageDur = () => pageFunction("dur", "const docsText = ") as (ms: unknown) => string;
const pageWindowLength = () =>
  pageFunction("windowLength", "const windowBoundOf = ") as (
    ms: number,
    bound: { atLeast?: boolean; unseenMs?: number },
    format: unknown,
  ) => string;

describe("the watch page's durations", () => {
  it("are formatDuration's, at every boundary and for what is no duration", () => {
    const dur = pageDur();
    const values = [
      0,
      0.4,
      999,
      999.6,
      1_000,
      1_050,
      9_999,
      10_000,
      59_999,
      60_000,
      61_000,
      3_599_999,
      3_600_000,
      86_399_999,
      86_400_000,
      90_061_000,
      864_000_000,
      -1,
      NaN,
      Infinity,
    ];
    for (const v of values) expect(dur(v), String(v)).toBe(formatDuration(v));
    // a bound rounds outwards: the window's "at most" (its end seen late) up
    for (const v of values)
      for (const round of ["up", "down"] as const)
        expect((dur as (ms: unknown, r: string) => string)(v, round), `${v} ${round}`).toBe(formatDuration(v, round));
    expect(dur(90_000_000)).toBe("1d 1h");
    // a window's length, a bound said as one: the page's clock is windowLength's, with the page's dur
    const len = pageWindowLength();
    for (const v of values.filter((x) => Number.isFinite(x) && x >= 0))
      for (const bound of [{}, { atLeast: true }, { unseenMs: 9_000 }, { atLeast: true, unseenMs: 500 }])
        expect(len(v, bound, dur), `${v} ${JSON.stringify(bound)}`).toBe(windowLength(v, bound));
    expect(watchPage("n0nce")).toContain("windowLength(ms, { atLeast: bound.atLeast");
    expect(dur(undefined)).toBe("?");
    expect(dur("5000")).toBe("?");
  });
});

// migration-verifier v0.2.1 internal/verifier/statistics.go: generationStats counts the current generation
// only (totalDocs: an estimated count in generation 0, "the # of documents to recheck" later); api.go
// (v0.1.10+): gen0Stats, generation 0's final counts, absent during generation 0
describe("the watch page's verifier documents", () => {
  it("are verifierDocsText's, for every generation, with and without gen0Stats", () => {
    const docsText = pageFunction("docsText", "const cutOff = ") as (
      generation: number | undefined,
      docs: GenerationDocs,
      gen0?: GenerationDocs,
    ) => string;
    const gen0 = { compared: 1048576, total: 1048576 };
    for (const generation of [undefined, 0, 1, 2, 7])
      for (const docs of [
        { compared: 0, total: 0 },
        { compared: 12, total: 40 },
        { compared: 41, total: 40 },
      ])
        for (const g0 of [undefined, gen0])
          expect(docsText(generation, docs, g0), JSON.stringify([generation, docs, g0])).toBe(
            verifierDocsText(generation, docs, g0),
          );
    expect(docsText(3, { compared: 12, total: 40 }, gen0)).toBe(
      "12 of 40 docs to recheck compared (this generation only, not a total; generation 0 compared 1048576 of about 1048576)",
    );
  });
});

// One rule for a step that started and never ended (src/model/fold.ts `cutOff`), in `status`, the
// watch text and this page: the page had its own (cut only when the runner was gone), and showed a
// step an earlier run was killed in as "running" while a later run went on.
describe("the watch page's cut-off step", () => {
  it("is cutOff's, for every outcome, current or not, runner gone or not; said in status's words", () => {
    const pageCutOff = pageFunction("cutOff", "const CUT_OFF_WORDS = ") as typeof cutOff;
    const outcomes: StepOutcome[] = ["ok", "failed", "skipped", "interrupted", "pending", "running"];
    for (const outcome of outcomes)
      for (const current of [undefined, 0, 1])
        for (const gone of [false, true]) {
          const m = current === undefined ? {} : { current };
          const s = { index: 0, outcome };
          expect(pageCutOff(m, s, gone), `${outcome} current=${current} gone=${gone}`).toBe(cutOff(m, s, gone));
        }
    // running, not the current step, its runner alive: cut off (a later run went on past it)
    expect(cutOff({ current: 1 }, { index: 0, outcome: "running" }, false)).toBe(true);
    // running and current: only when its runner is gone
    expect(cutOff({ current: 0 }, { index: 0, outcome: "running" }, false)).toBe(false);
    expect(cutOff({ current: 0 }, { index: 0, outcome: "running" }, true)).toBe(true);
    expect(watchPage("n0nce")).toContain(`const CUT_OFF_WORDS = ${JSON.stringify(CUT_OFF_WORDS)};`);
  });
});

// One home for what ended the write-stop window (src/writes-words.ts `windowEndWords`), in the run's
// end, status, the notification and this page: the page had its own words, and said "(undone)" of
// a window COMMITTED on every instance closed (b38b113 fixed that by hand, untested).
describe("the watch page's end of the write-stop window", () => {
  it("is windowEndWords's, for every way the window closes, and the window line says it", () => {
    const pageWords = pageFunction("windowEndWords", "const windowLength = ") as typeof windowEndWords;
    for (const end of ["canWrite", "committed", "undone", "by-hand", undefined] as const)
      expect(pageWords(end), String(end)).toBe(windowEndWords(end));
    expect(pageWords("committed")).toBe("COMMITTED on every instance");
    expect(pageWords("undone")).toBe("writes back on by the undo");
    expect(pageWords("by-hand")).toBe("handed to a person by --abort: its step has no `undo:`");
    // a window handed to a person is the least it lasted, as every reader says it (windowBoundOf)
    const pageBound = pageFunction("windowBoundOf", "let state = null;") as typeof windowBoundOf;
    for (const w of [{ openedAt: 1 }, {}, { openedAt: 1, closedBy: "by-hand" }, { openedAt: 1, unseenMs: 5 }])
      expect(pageBound(w), JSON.stringify(w)).toEqual(windowBoundOf(w));
    expect(windowBoundOf({ openedAt: 1, closedBy: "by-hand" }).atLeast).toBe(true);
    expect(watchPage("n0nce")).toContain("const bound = windowBoundOf(w);");
    expect(watchPage("n0nce")).toContain(`" (" + windowEndWords(w.closedBy) + ")"`);
    // the shares run to the write-on hook once it ran (src/fleet/window.ts): said of that length,
    // not under the window's ("closed after 28ms", then shares of 89 ms)
    expect(watchPage("n0nce")).toContain(
      `(w.toWritesOnMs !== undefined ? "Shares of the " + dur(w.toWritesOnMs) + " to application writes on again: " : "Shares: ")`,
    );
  });
});

// a trial: under verify's refusal of a result that compared nothing, the page said "result earned:
// generation 60 is after writesOff" (a rule of its own: a generation past writesOff); the verdict
// is the server's, asked of src/steps/kit/earned.ts as the report asks it (`state.verification`)
describe("the watch page's verifier verdict", () => {
  it("is the state's verification, in its words; the page judges no result itself", () => {
    const html = watchPage("n0nce");
    expect(html).toContain('"verification: " + s.verification.text');
    expect(html).not.toMatch(/result earned|result not earned/);
  });
});

/** An element of the fake document the page's script draws into: its text, class and children. */
class FakeNode {}
class FakeElement extends FakeNode {
  textContent = "";
  className = "";
  hidden = false;
  id = "";
  children: unknown[] = [];
  constructor(readonly tag: string) {
    super();
  }
  append(...nodes: unknown[]): void {
    this.children.push(...nodes);
  }
  replaceChildren(...nodes: unknown[]): void {
    this.children = nodes;
  }
}
/** The page's script run on `state` (as `/events` sends it), in a context of its own: the elements it drew, by id. */
function drawn(state: unknown): (id: string) => FakeElement {
  const script = /<script nonce="n0nce">([\s\S]*)<\/script>/.exec(watchPage("n0nce"))?.[1] ?? "";
  const byId = new Map<string, FakeElement>();
  const get = (id: string): FakeElement => {
    if (!byId.has(id)) byId.set(id, new FakeElement("div"));
    return byId.get(id)!;
  };
  const sources: { onmessage?: (e: { data: string }) => void }[] = [];
  runInNewContext(script, {
    document: { getElementById: get, createElement: (tag: string) => new FakeElement(tag) },
    Node: FakeNode,
    EventSource: class {
      constructor() {
        sources.push(this);
      }
    },
    setInterval: () => 0,
  });
  sources[0]!.onmessage!({ data: JSON.stringify(state) });
  return get;
}
/** Each paragraph an element holds, as its text and class. */
const paragraphs = (e: FakeElement): { text: string; cls: string }[] =>
  e.children.flatMap((c) =>
    c instanceof FakeElement
      ? [...(c.tag === "p" ? [{ text: c.textContent, cls: c.className }] : []), ...paragraphs(c)]
      : [],
  );

// a review: a cutover that committed and whose verify step refused the result showed "COMMITTED"
// and "run 1 ended failed: …"; whether it was verified only the verifier's section said, and
// nothing at all without a verifier read. Beside how the run ended, the state's verdict in its words
describe("the watch page's runner section after a commit", () => {
  const T = 1_800_000_000_000;
  let seq = 0;
  const ev = (type: string, at: number, body: Record<string, unknown> = {}): RunEvent =>
    ({ type, seq: ++seq, at: T + at, ...body }) as unknown as RunEvent;
  const instances = [{ url: "http://a", index: 0, name: "a" }];
  const steps = [
    { index: 0, id: "commit", kind: "commit", title: "commit" },
    { index: 1, id: "verify", kind: "verify", title: "verify" },
  ];
  const ERROR = "not verified: the verifier skipped DDL on the source";
  function state(commit: boolean, fleetCommitted = false) {
    const f = new CutoverFold({ traits: traitsOf });
    for (const e of [
      ev("run.started", 0, { runbook: "rb", file: "rb.yaml", hash: "h", mode: "run", instances, steps }),
      ...(fleetCommitted
        ? [ev("progress.sampled", 5, { instance: instances[0], progress: { state: "COMMITTED" } })]
        : []),
      ev("step.started", 10, steps[0]),
      ...(commit ? [ev("commit.sent", 20, { index: 0, id: "commit", instances: ["a"], skewMs: 0 })] : []),
      ev("step.finished", 30, { index: 0, id: "commit", outcome: commit ? "ok" : "failed", durationMs: 20 }),
      ...(commit
        ? [
            ev("step.started", 40, steps[1]),
            ev("step.finished", 50, { index: 1, id: "verify", outcome: "failed", durationMs: 10, error: ERROR }),
          ]
        : []),
      ev("run.finished", 60, { outcome: "failed", exitCode: 1, committed: commit, durationMs: 60 }),
    ])
      f.apply(e);
    const model = f.view(T + 100);
    const live = { at: T + 100, instances: [], copy: model.fleet.copy } as unknown as Parameters<
      typeof buildState
    >[0]["live"];
    return buildState({
      now: T + 100,
      folder: "f",
      journals: [],
      skippedLines: 0,
      model,
      live,
      runner: runnerVerdict({ model, lock: undefined, now: T + 100, host: "here", isAlive: () => false }),
      redact: (x: string) => x,
    });
  }

  it("says the state's verdict, in its words, once the cutover committed; before a commit, nothing", () => {
    const s = state(true);
    expect(s.model.cutover.committed).toBe(true);
    expect(s.verification.verified).toBe(false);
    const runner = paragraphs(drawn(s)("runner"));
    expect(runner[0]?.text).toMatch(/^run 1 ended failed/);
    expect(runner).toContainEqual({ text: `verification: ${s.verification.text}`, cls: "bad" });
    expect(s.verification.text).toBe(
      `not verified (no \`verify\` step passed on this cutover's verification result: step 2 "verify" failed: ${ERROR})`,
    );
    const before = state(false);
    expect(before.model.cutover.committed).toBe(false);
    expect(paragraphs(drawn(before)("runner")).map((p) => p.text)).not.toContainEqual(
      expect.stringMatching(/verification/),
    );
  });
  // a review: the cutover line ("cutover … · COMMITTED") said no verdict where the runner section
  // did; once the destination may take writes it says the state's, in the banner's capitals
  // (src/steps/kit/earned.ts `verificationShown`, as report.html's banner and the job summary)
  it("the cutover line says the verdict in capitals once the cutover committed; before a commit, none", () => {
    const s = state(true);
    expect(s.verification.headline).toBe("NOT VERIFIED");
    const [line] = paragraphs(drawn(s)("cutover"));
    expect(line?.text).toMatch(/ · COMMITTED · NOT VERIFIED$/);
    const before = state(false);
    expect(before.verification.headline).toBeUndefined();
    const [plain] = paragraphs(drawn(before)("cutover"));
    expect(plain?.text).toMatch(/ · not committed$/);
    expect(plain?.text).not.toMatch(/VERIFIED/);
  });
  // a fresh cutover refused before its commit on a fleet an earlier sync committed: the line said
  // "cutover … · COMMITTED" of one that sent nothing (the verdict beside it went in 7c70202)
  it("a fleet read COMMITTED with no commit of this cutover on record: said whose it is not, no verdict", () => {
    const s = state(false, true);
    expect(s.model.cutover.committed).toBe(true);
    const [line] = paragraphs(drawn(s)("cutover"));
    expect(line?.text).toMatch(
      / · the fleet reads COMMITTED, with no commit of this cutover on record \(an earlier sync's commit, or one sent by hand\)$/,
    );
    expect(line?.text).not.toMatch(/ · COMMITTED/);
    expect(s.runner.left).toContain(COMMITTED_OFF_RECORD_WORDS);
    expect(s.runner.left).not.toContain("committed");
  });
});
