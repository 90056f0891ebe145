/**
 * A step's hint names the way on after its failure through one home, `wayOn`
 * (src/steps/kit/context.ts), which knows the run's mode: a real run's command as one pastes it, a
 * rehearsal's "rehearse again". A rehearsal journals nothing, and its hints said "run again with
 * --resume" or `syncbook run <runbook> --resume`, which pasted acts on the runbook's real fleet (or
 * is refused for want of a journal). Read with the TypeScript parser (no type checking), so
 * comments are not hints: a string or template in src/steps that names `--resume` or `syncbook
 * run` outside the home fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ServiceError, TransportError } from "../../src/api/index.js";
import { StepFailure } from "../../src/steps/index.js";
import {
  byHand,
  realRunOr,
  REHEARSE_FROM_THE_START,
  simulatorWayOn,
  timeoutHint,
  wayOn,
  type RunContext,
  type WayOnRun,
} from "../../src/steps/kit/context.js";
import { identityWayOn } from "../../src/steps/kit/fleet-ops.js";
import { refused, verifierGoneHint } from "../../src/steps/kit/verifier.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The words of a real run's way on, which a rehearsal's hint never names. */
const REAL = /--resume|syncbook run|syncbook status|--abort|--from/;

/** Where they are read: every hint and way on a run or a rehearsal says (`src/cli.ts`, the help text, is not). */
const SCANNED = ["src/steps", "src/run", "src/cli"];

/**
 * The home's choosers, and which of their arguments holds a real run's words: what a rehearsal
 * never says, by construction (it says the other argument, or the simulator's way on).
 */
const REAL_ARGUMENT: Readonly<Record<string, number>> = { byHand: 2, realRunOr: 1 };

interface Allowed {
  file: string;
  /** The declaration, `outer.inner` for one inside another (a function's own closure); absent: the whole file. */
  name?: string;
  /** The words allowed there (default: all of them). */
  words?: RegExp;
  /** Only in the branch a condition among these (a conjunct of an `if`'s or a `?:`'s, as written) leads to. */
  guards?: readonly string[];
}

/** A run's alone: `syncbook rehearse` takes none of `--resume`, `--abort`, `--only`, `--dry-run`, and journals nothing. */
const ALLOWED: readonly Allowed[] = [
  // the home itself
  { file: "src/steps/kit/context.ts", name: "wayOn" },
  // what a `--resume` refuses, said only after its rehearsal's own return
  { file: "src/steps/kit/fleet-ops.ts", name: "identityWayOn", words: /--resume/ },
  // a lint rule's hint, said of the runbook before any run
  { file: "src/steps/start-verification.ts", name: "VERIFY_AFTER_REVERSE", words: /--resume/ },
  // the flags as the operator gave them, said of why a step is skipped or refused (a rehearsal takes
  // `--from` and `--to` too): no way on
  { file: "src/steps/commit.ts", name: "commit", words: /--from/ },
  { file: "src/run/runner.ts", name: "skipReason", words: /--from/ },
  { file: "src/run/plan.ts", name: "stepRange", words: /--from/ },
  { file: "src/cli/execute.ts", name: "outsideRange", words: /--from/ },
  // `--abort`, `--resume`, `--only`: a run's
  { file: "src/run/abort.ts" },
  { file: "src/run/resume.ts" },
  { file: "src/run/resume-decide.ts" },
  { file: "src/run/plan.ts", name: "instanceTargets" },
  { file: "src/run/runner.ts", name: "runRunbook", guards: ["opts.abort"] },
  { file: "src/run/unwind.ts", name: "handOver" },
  { file: "src/run/unwind.ts", name: "abortMessage" },
  // the cutover's journals, read by a run, `--resume`, `--abort` and `status`: a rehearsal has none
  { file: "src/run/earlier.ts" },
  // a journal that failed (a rehearsal's runner has no journal to fail), and what is done by hand
  // after it (a forced exit says it only in `realRunOr`'s real words)
  { file: "src/run/unwind.ts", name: "writesAfterJournalFailure" },
  { file: "src/run/unwind.ts", name: "stillStoppedHint" },
  { file: "src/run/unwind.ts", name: "JOURNAL_DISTRUSTED" },
  { file: "src/run/unwind.ts", name: "byHandThenFrom" },
  // `syncbook status` (and the watch page): a real fleet and journal
  { file: "src/run/status.ts" },
  { file: "src/cli/status.ts" },
  // `syncbook run`'s own: a rehearsal comes in at `execute`
  { file: "src/cli/run.ts", name: "runMain" },
  { file: "src/cli/run.ts", name: "runLoaded" },
  { file: "src/cli/run.ts", name: "newOrContinued" },
  { file: "src/cli/run.ts", name: "resumeNote" },
  { file: "src/cli/step-summary.ts", name: "planSummary" },
  // the run's end, in its branches a rehearsal never takes: a run's, an `--abort`'s, a journal's
  // rerun (`RunResult.rerunWith`, unset in a rehearsal); and the `--resume` they alone name
  { file: "src/cli/run.ts", name: "execute", guards: ['how.mode !== "rehearse"', "result.aborted", "rerun"] },
  { file: "src/cli/run.ts", name: "execute.keptResume" },
  { file: "src/cli/run.ts", name: "execute.passedOverResume" },
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** A top-level statement's name: a function's, a class's, or its variables'. */
function nameOf(at: ts.Statement): string {
  if (ts.isFunctionDeclaration(at) || ts.isClassDeclaration(at)) return at.name?.text ?? "";
  if (ts.isVariableStatement(at)) return at.declarationList.declarations.map((d) => d.name.getText()).join(",");
  return "";
}

/** A function declared inside another (`function f`, `const f = () => …`): its name, else undefined. */
function innerName(n: ts.Node): string | undefined {
  if (ts.isFunctionDeclaration(n) && n.name) return n.name.text;
  if (
    ts.isVariableDeclaration(n) &&
    n.initializer &&
    (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))
  )
    return n.name.getText();
  return undefined;
}

/** The declaration that holds `n`: the top-level one's name, then each function inside it (`execute.keptResume`). */
function declarationOf(n: ts.Node): string {
  const inner: string[] = [];
  let at = n;
  while (!ts.isSourceFile(at.parent)) {
    at = at.parent;
    const name = ts.isSourceFile(at.parent) ? undefined : innerName(at);
    if (name !== undefined) inner.unshift(name);
  }
  return [nameOf(at as ts.Statement), ...inner].join(".");
}

/** `a && b && c` as its conjuncts, as written. */
function conjuncts(e: ts.Expression): string[] {
  if (ts.isParenthesizedExpression(e)) return conjuncts(e.expression);
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken)
    return [...conjuncts(e.left), ...conjuncts(e.right)];
  return [e.getText()];
}

/** The conditions (each conjunct) whose true branch holds `n`. */
function guardsOf(n: ts.Node): string[] {
  const out: string[] = [];
  for (let at = n; !ts.isSourceFile(at); at = at.parent) {
    const p = at.parent;
    if (ts.isIfStatement(p) && p.thenStatement === at) out.push(...conjuncts(p.expression));
    if (ts.isConditionalExpression(p) && p.whenTrue === at) out.push(...conjuncts(p.condition));
  }
  return out;
}

/** Whether `n` is in the argument of a home's chooser that holds a real run's words (`REAL_ARGUMENT`). */
function inRealArgument(n: ts.Node): boolean {
  for (let at = n; !ts.isSourceFile(at); at = at.parent) {
    const p = at.parent;
    if (ts.isCallExpression(p) && ts.isIdentifier(p.expression)) {
      const k = REAL_ARGUMENT[p.expression.text];
      if (k !== undefined && p.arguments[k] === at) return true;
    }
  }
  return false;
}

/** The allow-list entry that lets `piece`, at `n` in `file`, name what it names; undefined: none. */
function allowing(file: string, n: ts.Node, piece: string): Allowed | undefined {
  const name = declarationOf(n);
  return ALLOWED.find((a) => {
    if (a.file !== file) return false;
    if (a.name !== undefined && name !== a.name && !name.startsWith(`${a.name}.`)) return false;
    if (a.guards && !guardsOf(n).some((g) => a.guards!.includes(g))) return false;
    const left = a.words ? piece.replace(new RegExp(a.words.source, "g"), "") : "";
    return !REAL.test(left);
  });
}

/** Every string or template piece of a file's text, with its node. */
function pieces(sf: ts.SourceFile): { n: ts.Node; piece: string }[] {
  const out: { n: ts.Node; piece: string }[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteralLike(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n))
      out.push({ n, piece: n.text });
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Each string or template piece of `text` that names a real run's way on outside the home, as `file:line (declaration): text`. */
export function realWaysOn(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  return pieces(sf)
    .filter(({ n, piece }) => REAL.test(piece) && !inRealArgument(n) && !allowing(file, n, piece))
    .map(({ n, piece }) => {
      const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
      return `${file}:${line} (${declarationOf(n)}): ${piece.slice(0, 120)}`;
    });
}

const scanned = (): { file: string; text: string }[] =>
  SCANNED.flatMap((d) => files(join(root, d))).map((f) => ({
    file: relative(root, f).split("\\").join("/"),
    text: readFileSync(f, "utf8"),
  }));

describe("a hint or way on in src/steps, src/run or src/cli names a real run's command only through the home", () => {
  it("no string or template outside the home, its choosers' real words and the allow-list names them", () => {
    expect(scanned().flatMap(({ file, text }) => realWaysOn(file, text))).toEqual([]);
  });

  it("every allow-list entry still lets something through (an entry left behind is removed)", () => {
    const all = scanned();
    for (const a of ALLOWED) {
      const at = all.find((f) => f.file === a.file);
      expect(at, a.file).toBeDefined();
      const sf = ts.createSourceFile(a.file, at!.text, ts.ScriptTarget.Latest, true);
      const used = pieces(sf).some(
        ({ n, piece }) => REAL.test(piece) && !inRealArgument(n) && allowing(a.file, n, piece) === a,
      );
      expect(used, `${a.file} ${a.name ?? "(the file)"}`).toBe(true);
    }
  });

  it("the scan finds them outside the home: a string, a template piece, in any declaration; comments are not hints", () => {
    const src = [
      "// run again with --resume: a comment",
      'const A = "then run again with --resume";',
      "function f(t: string) { return `then \\`syncbook run ${t}\\` again`; }",
      "export function wayOn() { return 'x'; }",
      'const B = "see the fleet: syncbook status rb.yaml, then --abort";',
      'const C = "stop writes again: --from stop";',
    ].join("\n");
    expect(realWaysOn("src/steps/x.ts", src)).toEqual([
      "src/steps/x.ts:2 (A): then run again with --resume",
      "src/steps/x.ts:3 (f): then `syncbook run ",
      "src/steps/x.ts:5 (B): see the fleet: syncbook status rb.yaml, then --abort",
      "src/steps/x.ts:6 (C): stop writes again: --from stop",
    ]);
    // the home's own file and declaration only, and only the words allowed there
    expect(realWaysOn("src/steps/kit/context.ts", "function wayOn() { return `syncbook run ${t} --resume`; }")).toEqual(
      [],
    );
    expect(realWaysOn("src/steps/kit/context.ts", "function timeoutHint() { return '--resume'; }")).toEqual([
      "src/steps/kit/context.ts:1 (timeoutHint): --resume",
    ]);
    expect(
      realWaysOn("src/steps/kit/fleet-ops.ts", "function identityWayOn() { return '`syncbook run x --resume`'; }"),
    ).toEqual(["src/steps/kit/fleet-ops.ts:1 (identityWayOn): `syncbook run x --resume`"]);
  });

  it("a chooser's real words pass, its rehearsal's do not; a guarded branch passes only under its guard", () => {
    expect(
      realWaysOn(
        "src/run/x.ts",
        [
          'const A = realRunOr(run, "; complete it with --resume", "");',
          'const B = realRunOr(run, "", "rehearse with --abort");',
          'const C = byHand(run, "fleet", `syncbook status ${x}`);',
          'const D = byHand(run, `syncbook status ${x}`, "fleet");',
        ].join("\n"),
      ),
    ).toEqual(["src/run/x.ts:2 (B): rehearse with --abort", "src/run/x.ts:4 (D): syncbook status "]);
    const end = [
      "async function execute() {",
      '  if (result.outcome === "ok" && how.mode !== "rehearse" && loaded.runbook) next("syncbook run a --resume");',
      '  else if (restop) next("syncbook run a --from stop");',
      '  if (how.mode === "rehearse") next("syncbook status a");',
      '  const keptResume = () => "syncbook run a --resume";',
      '  const other = () => "syncbook run a --resume";',
      "}",
    ].join("\n");
    expect(realWaysOn("src/cli/run.ts", end)).toEqual([
      "src/cli/run.ts:3 (execute): syncbook run a --from stop",
      "src/cli/run.ts:4 (execute): syncbook status a",
      "src/cli/run.ts:6 (execute.other): syncbook run a --resume",
    ]);
  });
});

const RUN: WayOnRun = {
  mode: "run",
  target: "rb.yaml --var a=1",
  targetKept: "rb.yaml --var a=1 --var s=***",
  keptNote: " (set s)",
};
const RESUME: WayOnRun = { ...RUN, mode: "resume" };
const REHEARSE: WayOnRun = { ...RUN, mode: "rehearse" };

describe("wayOn: the way on, by the run's mode", () => {
  it.each([RUN, RESUME])("a $mode: the command as one pastes it, with the cutover's values", (run) => {
    expect(wayOn(run)).toBe("`syncbook run rb.yaml --var a=1 --resume`");
    expect(wayOn(run, {})).toBe("`syncbook run rb.yaml --var a=1 --resume`");
    // the runbook edited: every --var kept, and the note of a masked one after the command
    expect(wayOn(run, { changed: true })).toBe(
      "`syncbook run rb.yaml --var a=1 --var s=*** --resume --allow-changed-runbook` (set s)",
    );
    expect(wayOn(run, { force: "writes-stopped" })).toBe(
      "`syncbook run rb.yaml --var a=1 --resume --force=writes-stopped`",
    );
    expect(wayOn(run, { newCutover: true })).toBe("`syncbook run rb.yaml --var a=1 --var s=*** --new-cutover` (set s)");
  });

  it("a rehearsal: the rehearsal again, never `syncbook run` nor `--resume`; a force as `syncbook rehearse` takes it", () => {
    expect(wayOn(REHEARSE)).toBe("rehearse again");
    expect(wayOn(REHEARSE, { changed: true })).toBe("rehearse again");
    expect(wayOn(REHEARSE, { newCutover: true })).toBe("rehearse again");
    expect(wayOn(REHEARSE, { force: "stopped-in-commit" })).toBe("rehearse again with `--force=stopped-in-commit`");
  });

  it("byHand: the real run's words, or in a rehearsal the simulator's way on", () => {
    expect(byHand(RUN, "verifier", "restart it")).toBe("restart it");
    expect(byHand(RESUME, "fleet", "check it")).toBe("check it");
    expect(byHand(REHEARSE, "verifier", "restart it")).toBe(simulatorWayOn("verifier"));
    expect(byHand(REHEARSE, "fleet", "check it")).toBe(simulatorWayOn("fleet"));
    expect(simulatorWayOn("fleet")).toBe(
      "The fleet is the rehearsal's simulator, stopped with the rehearsal: see why above, then rehearse again.",
    );
    expect(simulatorWayOn("verifier")).toBe(
      "The verifier is the simulator's, stopped with the rehearsal: see why above, then rehearse again.",
    );
  });

  it("realRunOr: a run's words (or lines) in a run and a resume, a rehearsal's in a rehearsal", () => {
    expect(realRunOr(RUN, "; complete it with --resume", "")).toBe("; complete it with --resume");
    expect(realRunOr(RESUME, ["a", "b"], [])).toEqual(["a", "b"]);
    expect(realRunOr(REHEARSE, "; complete it with --resume", "")).toBe("");
    expect(realRunOr(REHEARSE, ["a", "b"], [REHEARSE_FROM_THE_START])).toEqual([REHEARSE_FROM_THE_START]);
    expect(REHEARSE_FROM_THE_START).toMatch(/^rehearse again from the first step: /);
    expect(REHEARSE_FROM_THE_START).not.toMatch(REAL);
  });

  it("timeoutHint builds on it: a real run's two commands, a rehearsal's none", () => {
    expect(timeoutHint(RUN, "")).toBe(
      "To give it more time, raise the step's `timeout` in the runbook, then `syncbook run rb.yaml --var a=1 --var s=*** --resume --allow-changed-runbook` (set s). Unchanged, `syncbook run rb.yaml --var a=1 --resume` goes on from this step with the same limit.",
    );
    expect(timeoutHint(REHEARSE, "Look")).toBe(
      "Look, or raise the step's `timeout` in the runbook, then rehearse again.",
    );
    expect(timeoutHint(RUN, "Look")).toBe(
      "Look; once they are ready, `syncbook run rb.yaml --var a=1 --resume` waits again. Or raise the step's `timeout` in the runbook, then `syncbook run rb.yaml --var a=1 --var s=*** --resume --allow-changed-runbook` (set s).",
    );
    expect(timeoutHint(REHEARSE, "")).toBe("Raise the step's `timeout` in the runbook, then rehearse again.");
  });
});

describe("the hints that go through it: a rehearsal's names no real run's way on", () => {
  const svc = (error: string) => new ServiceError("http://v", "progress", error, "", 200);
  const hintOf = (f: () => void): string => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(StepFailure);
      return (e as StepFailure).hint ?? "";
    }
    throw new Error("did not throw");
  };
  const cases: [string, (run: WayOnRun) => void][] = [
    ["request in progress", (run) => refused(run, "check", svc("Request in progress"))],
    ["writesOff already set by another", (run) => refused(run, "writesOff", svc("writesOff already set"))],
    [
      "writesOff already set after ours",
      (run) => refused(run, "writesOff", svc("writesOff already set"), { answered: "error", at: 1 }),
    ],
    ["writesOff cluster time", (run) => refused(run, "writesOff", svc("failed to fetch source's cluster time: x"))],
    [
      "not sent",
      (run) =>
        refused(run, "check", new TransportError("http://v", "progress", "connect", "refused", { requestSent: false })),
    ],
    [
      "writesOff panic",
      (run) =>
        refused(run, "writesOff", new TransportError("http://v", "progress", "non-json", "x", { requestSent: true })),
    ],
  ];
  it.each(cases)("refused (%s): a run names the --resume, a rehearsal the rehearsal again", (_, f) => {
    expect(hintOf(() => f(RUN))).toContain("`syncbook run rb.yaml --var a=1 --resume`");
    const rehearsal = hintOf(() => f(REHEARSE));
    expect(rehearsal).toMatch(/rehearse again\.$/);
    expect(rehearsal).not.toMatch(REAL);
  });

  it("the verifier gone, and a fleet-identity refusal", () => {
    expect(verifierGoneHint(RUN)).toContain("Then `syncbook run rb.yaml --var a=1 --resume`: this step sends");
    expect(verifierGoneHint(REHEARSE)).not.toMatch(REAL);
    const memory = { acted: true, actedNow: true, sentToFleet: true } as RunContext["memory"];
    expect(identityWayOn({ ...RUN, memory }).hint).toContain(
      "then `syncbook run rb.yaml --var a=1 --resume`: it reads",
    );
    expect(identityWayOn({ ...REHEARSE, memory }).hint).not.toMatch(REAL);
  });
});
