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
const REAL = /--resume|syncbook run/;

/**
 * Where a hint may name them, by file and top-level declaration, and which: the home itself; the
 * words of what a `--resume` refuses in `identityWayOn`, said only after its rehearsal's own return;
 * a lint rule's hint, said of the runbook before any run.
 */
const ALLOWED: readonly { file: string; name: string; words: RegExp }[] = [
  { file: "src/steps/kit/context.ts", name: "wayOn", words: REAL },
  { file: "src/steps/kit/fleet-ops.ts", name: "identityWayOn", words: /--resume/ },
  { file: "src/steps/start-verification.ts", name: "VERIFY_AFTER_REVERSE", words: /--resume/ },
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

/** The name of the top-level declaration that holds `n`. */
function declarationOf(n: ts.Node): string {
  let at = n;
  while (!ts.isSourceFile(at.parent)) at = at.parent;
  return nameOf(at as ts.Statement);
}

/** Each string or template piece of `text` that names a real run's way on outside the home, as `file:line (declaration): text`. */
export function realWaysOn(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    const piece =
      ts.isStringLiteralLike(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)
        ? n.text
        : undefined;
    if (piece !== undefined && REAL.test(piece)) {
      const name = declarationOf(n);
      const allowed = ALLOWED.find((a) => a.file === file && a.name === name);
      const left = allowed ? piece.replace(new RegExp(allowed.words.source, "g"), "") : piece;
      if (REAL.test(left)) {
        const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
        out.push(`${file}:${line} (${name}): ${piece.slice(0, 120)}`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe("a hint in src/steps names `--resume` or `syncbook run` only through `wayOn`", () => {
  it("no string or template outside the home names them", () => {
    const found = files(join(root, "src", "steps")).flatMap((f) => {
      const file = relative(root, f).split("\\").join("/");
      return realWaysOn(file, readFileSync(f, "utf8"));
    });
    expect(found).toEqual([]);
  });

  it("every allowed place exists and still names them (an allow-list entry left behind is removed)", () => {
    for (const a of ALLOWED) {
      const text = readFileSync(join(root, a.file), "utf8");
      const sf = ts.createSourceFile(a.file, text, ts.ScriptTarget.Latest, true);
      const names = sf.statements.map(nameOf);
      expect(names, a.file).toContain(a.name);
    }
  });

  it("the scan finds them outside the home: a string, a template piece, in any declaration; comments are not hints", () => {
    const src = [
      "// run again with --resume: a comment",
      'const A = "then run again with --resume";',
      "function f(t: string) { return `then \\`syncbook run ${t}\\` again`; }",
      "export function wayOn() { return 'x'; }",
    ].join("\n");
    expect(realWaysOn("src/steps/x.ts", src)).toEqual([
      "src/steps/x.ts:2 (A): then run again with --resume",
      "src/steps/x.ts:3 (f): then `syncbook run ",
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
    expect(REHEARSE_FROM_THE_START).not.toMatch(/syncbook (run|status)|--resume|--abort|--from/);
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
