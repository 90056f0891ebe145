/**
 * Issue 40, point 2: a step kind carries its traits (`StepKindDef`, src/steps/index.ts), and
 * nothing outside src/steps names a built-in kind to ask what it is. Read with the TypeScript
 * parser (no type checking), so comments and prose in messages are not code: a kind's name is
 * flagged where code compares against it, tests a step for it, lists it, reads a step's body by
 * it, or keys a map with it. A kind's name that is also another vocabulary's word (the commands
 * `start`, `commit`…, the plugin kind `hook`, the prompt kind `confirm`) is flagged only where it
 * stands for a step kind: compared with a `kind`, in a `… in step` test, a `case` of a switch on a
 * `kind`, or a property of a step.
 *
 * A kind's name is not a command's either, though five kinds share their command's word: which
 * command a kind sends is its `command` trait. So a kind (an expression ending in `kind`) is
 * flagged where code uses it as a command: passed to, or looking up, the command vocabulary
 * (src/api/commands.ts's exports, or any name with "command" in it), compared with a command
 * (an expression ending in `op`, `cmd`, `command` or `operation`), stored as one (an `op` or
 * `command` property or variable), or cast to a command's type.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import * as COMMANDS from "../../src/api/commands.js";
import { STEP_KINDS } from "../../src/runbook/types.js";
import type { Step } from "../../src/runbook/types.js";
import { bindStep, traitsOf } from "../../src/steps/index.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const KINDS: ReadonlySet<string> = new Set(STEP_KINDS);
/** Names that mean a step kind and nothing else here. */
const ONLY_KINDS: ReadonlySet<string> = new Set(["stopWrites", "waitFor", "startVerification"]);
/**
 * Other vocabularies with a `kind` field whose words a step kind shares: a plugin call's and a
 * registry entry's (`hook`, `notifier`, `step`: src/plugin/) and a prompt's (`confirm`: src/ui/).
 */
const OTHER_KINDS = /^(call|entry|spec)\.kind$/;
const endsInKind = (n: ts.Node): boolean => {
  const t = n.getText().replace(/\s/g, "");
  return /(^|\.|\?\.)kind$/i.test(t) && !OTHER_KINDS.test(t);
};
const isStepExpr = (n: ts.Node): boolean => /(^|\.|\?\.)step$/i.test(n.getText().replace(/\s/g, ""));
/** The command vocabulary: what src/api/commands.ts exports, and any name that says "command". */
const VOCABULARY = new RegExp(`\\b(${Object.keys(COMMANDS).join("|")})\\b`);
const isCommandWord = (text: string): boolean => VOCABULARY.test(text) || /command/i.test(text);
/** An expression that holds a command: ends in `op`, `cmd`, `command` or `operation`. */
const isCommandExpr = (n: ts.Node): boolean =>
  /(^|\.|\?\.)(op|cmd|command|operation)$/i.test(n.getText().replace(/\s/g, ""));
/** A name a command is stored under. */
const COMMAND_NAME = /^(op|cmd|command|operation)$/i;

/** Where a source names a built-in step kind, as `line: code`. */
export function kindNames(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const flag = (n: ts.Node, why: string): void => {
    const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
    out.push(`${line}: ${why}: ${n.parent.getText(sf).split("\n")[0]!.trim().slice(0, 100)}`);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteralLike(n) && KINDS.has(n.text) && !ts.isImportDeclaration(n.parent)) {
      const p = n.parent;
      if (ONLY_KINDS.has(n.text) && !ts.isLiteralTypeNode(p)) flag(n, `"${n.text}"`);
      else if (ts.isBinaryExpression(p)) {
        const op = p.operatorToken.kind;
        const other = p.left === n ? p.right : p.left;
        if (op === ts.SyntaxKind.InKeyword && p.left === n) flag(n, `"${n.text}" in`);
        else if (
          (op === ts.SyntaxKind.EqualsEqualsEqualsToken ||
            op === ts.SyntaxKind.ExclamationEqualsEqualsToken ||
            op === ts.SyntaxKind.EqualsEqualsToken ||
            op === ts.SyntaxKind.ExclamationEqualsToken) &&
          endsInKind(other)
        )
          flag(n, `kind compared with "${n.text}"`);
      } else if (ts.isCaseClause(p) && endsInKind(p.parent.parent.expression)) flag(n, `case "${n.text}"`);
      else if (ts.isElementAccessExpression(p) && p.argumentExpression === n) flag(n, `["${n.text}"]`);
      else if (ts.isArrayLiteralExpression(p) && p.elements[0] !== n && ts.isStringLiteral(p.elements[0]!)) {
        // a YAML path into a step's body: ["steps", i, "start", …]
        if (p.elements[0].text === "steps") flag(n, `a path through "${n.text}"`);
      }
    }
    if (ts.isPropertyAccessExpression(n) && KINDS.has(n.name.text)) {
      if (ONLY_KINDS.has(n.name.text) || isStepExpr(n.expression)) flag(n.name, `.${n.name.text}`);
    }
    if ((ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n)) && ONLY_KINDS.has(n.name.getText(sf)))
      flag(n.name, `key ${n.name.getText(sf)}`);
    const kindExpr =
      (ts.isIdentifier(n) && !(ts.isPropertyAccessExpression(n.parent) && n.parent.name === n)) ||
      ts.isPropertyAccessExpression(n);
    if (kindExpr && endsInKind(n)) asCommand(n);
    ts.forEachChild(n, visit);
  };
  /** A step kind used as a command name. */
  const asCommand = (n: ts.Node): void => {
    let at: ts.Node = n;
    while (ts.isParenthesizedExpression(at.parent) || ts.isNonNullExpression(at.parent)) at = at.parent;
    const p = at.parent;
    if (ts.isCallExpression(p) && p.arguments.includes(at as ts.Expression) && isCommandWord(p.expression.getText(sf)))
      flag(n, `a kind passed as a command to ${p.expression.getText(sf)}`);
    else if (ts.isElementAccessExpression(p) && p.argumentExpression === at && isCommandWord(p.expression.getText(sf)))
      flag(n, `a kind looks up ${p.expression.getText(sf)}`);
    else if (
      ts.isBinaryExpression(p) &&
      [
        ts.SyntaxKind.EqualsEqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsEqualsToken,
        ts.SyntaxKind.EqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsToken,
      ].includes(p.operatorToken.kind) &&
      isCommandExpr(p.left === at ? p.right : p.left)
    )
      flag(n, "a kind compared with a command");
    else if (
      (ts.isPropertyAssignment(p) || ts.isVariableDeclaration(p)) &&
      p.initializer === at &&
      COMMAND_NAME.test(p.name.getText(sf))
    )
      flag(n, `a kind stored as ${p.name.getText(sf)}`);
    else if ((ts.isAsExpression(p) || ts.isSatisfiesExpression(p)) && /command/i.test(p.type.getText(sf)))
      flag(n, "a kind cast to a command");
  };
  visit(sf);
  return out;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe("nothing outside src/steps names a built-in step kind", () => {
  it("no module of src/ outside src/steps (and the kinds' own list in src/runbook/types.ts)", () => {
    const found = files(join(root, "src"))
      .map((f) => relative(root, f).split("\\").join("/"))
      .filter((f) => !f.startsWith("src/steps/") && f !== "src/runbook/types.ts" && !f.endsWith(".gen.ts"))
      .flatMap((f) => kindNames(f, readFileSync(join(root, f), "utf8")).map((x) => `${f}:${x}`));
    expect(found).toEqual([]);
  });

  it("the reader finds each way code names a kind, and passes prose, commands and other words", () => {
    const src = [
      'if (s.kind === "stopWrites") x();', // 1
      'if ("start" in step && step.start) y(step.start);', // 2
      'switch (span.kind) { case "commit": break; case "waitFor": break; }', // 3
      'const p = ["steps", i, "verify"];', // 4
      "const b = s.step.stopWrites?.check;", // 5
      "const m = { waitFor: 1 };", // 6
      'for (const k of ["startVerification", "verify"]) z(k);', // 7
      'if (st?.kind !== "confirm") w();', // 8
      'const q = step["sleep"];', // 9
      '// a comment that says s.kind === "stopWrites"', // 10
      'const msg = `This stopWrites step has no undo (kind "commit")`;', // 11
      'if (op === "commit" && cmd.op !== "start") v();', // 12
      'const t = registry.hook(use); if (spec.prompt === "confirm") u();', // 13
      'if (call.kind === "hook" || spec.kind === "confirm") r();', // 14: a plugin call's kind, a prompt's
      'if (step.kind === "hook") r();', // 15
      // a kind used as a command's name (issue 40: reconcile asked isCommandOperation(step.kind))
      "if (isCommandOperation(step.kind)) a(COMMAND_EFFECT[step.kind].after);", // 16, 16
      "if (sentOnceOnly(s.kind!) || COMMAND_OPERATIONS.includes(kind)) b();", // 17, 17
      "if (cmd.op === step.kind || (s?.kind) !== command) c();", // 18, 18
      "const sent = { op: s.kind, stepIndex: 1 }; const op = step.kind;", // 19, 19
      "send(step.kind as CommandOperation); sendCommand(kind);", // 20, 20
      // a kind's command trait, other kinds' kind, a kind with no command in sight: passed
      "if (traits(step.kind).command === op && COMMAND_EFFECT[traitsOf(s.kind).command!]) d();", // 21
      'if (spec.kind === command || call.kind === op) e(); const kind = step.kind; f(kind, "start");', // 22
    ].join("\n");
    expect(kindNames("sample.ts", src).map((l) => Number(l.split(":")[0]))).toEqual([
      1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9, 15, 16, 16, 17, 17, 18, 18, 19, 19, 20, 20,
    ]);
  });

  it("every kind states each trait the code outside src/steps asks (a table the mutation tests hold)", () => {
    const table = Object.fromEntries(
      STEP_KINDS.map((k) => {
        const t = traitsOf(k);
        return [k, [t.opensWriteStop, t.command, t.waitsFor, t.afterWritesBack, t.usesVerifier]];
      }),
    );
    expect(table).toEqual({
      preflight: [false, undefined, undefined, "kept", false],
      start: [false, "start", undefined, "kept", false],
      waitFor: [false, undefined, "service", "again", false],
      startVerification: [false, undefined, undefined, "kept", true],
      verify: [false, undefined, "verifier", "told", true],
      stopWrites: [true, undefined, undefined, "kept", false],
      commit: [false, "commit", undefined, "kept", false],
      assert: [false, undefined, undefined, "again", false],
      confirm: [false, undefined, "person", "again", false],
      notify: [false, undefined, undefined, "kept", false],
      hook: [false, undefined, undefined, "kept", false],
      sleep: [false, undefined, "time", "kept", false],
      pause: [false, "pause", undefined, "kept", false],
      resume: [false, "resume", undefined, "kept", false],
      reverse: [false, "reverse", undefined, "kept", false],
    });
    // the traits read from a body: the start request, the condition, the hook call and its check
    const start = { source: "cluster0", destination: "cluster1" };
    const cond = { state: "RUNNING" };
    const hook = { use: "shell", with: { command: ["true"] }, undo: { use: "shell" }, check: { use: "shell" } };
    const samples: Record<string, unknown> = { start, waitFor: cond, assert: cond, stopWrites: hook, hook, commit: {} };
    for (const [kind, body] of Object.entries(samples)) {
      const b = bindStep({ [kind]: body } as unknown as Step);
      expect(
        [b.startRequest(), b.condition(), b.hookCall(), b.writesCheck(), b.undoTimeoutMs() !== undefined],
        kind,
      ).toEqual([
        kind === "start" ? start : undefined,
        kind === "waitFor" || kind === "assert" ? cond : undefined,
        kind === "stopWrites" || kind === "hook" ? hook : undefined,
        kind === "stopWrites" ? hook.check : undefined,
        kind === "stopWrites" || kind === "hook",
      ]);
    }
    // a name that is no built-in kind (a plugin step kind's key) is a plugin step
    expect(traitsOf("drain-traffic")).toEqual(traitsOf(undefined));
    expect(traitsOf(undefined)).toMatchObject({ opensWriteStop: false, command: undefined, waitsFor: undefined });
  });
});
