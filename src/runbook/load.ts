/**
 * YAML text → runbook: parse with source positions, interpolate `${vars.*}` / `${env.*}`,
 * validate against the schema (ajv standalone code generated at build time), and explain every
 * problem at its line and column. Never throws for a problem in the text: problems are
 * diagnostics, and `runbook` is set only when the text is schema-valid.
 */
import { readFileSync } from "node:fs";
import {
  isAlias,
  isCollection,
  isPair,
  isScalar,
  LineCounter,
  parseDocument,
  type Alias,
  type Node,
  type Scalar as YamlScalar,
} from "yaml";
import {
  createRedactor,
  environmentSecrets,
  MASK,
  MIN_SECRET_LENGTH,
  uriPassword,
  userinfoRedactor,
  type Redactor,
} from "../redact.js";
import type { Diagnostic } from "../diagnostics.js";
import type { ExplainInput } from "./explain.js";
import { coercion, envNamesIn, interpolate, referencesIn, STAND_IN, type Scalar } from "./interpolate.js";
import { createLocator, type Locate } from "./positions.js";
import { yamlErrorAt } from "./yaml-error.js";
import type { Runbook } from "./types.js";
import { validateRunbookSchema } from "./validate.gen.js";
import { errorMessage } from "../errors.js";
import { formatBytes } from "../text.js";

export interface LoadOptions {
  /**
   * The environment for `${env.*}`, or "lint": env placeholders are left as written and their
   * values never needed (CI has no secrets). Default: process.env.
   */
  env?: Readonly<Record<string, string | undefined>> | "lint";
  /** Overrides of `vars:` (from `--var k=v`). */
  vars?: Readonly<Record<string, Scalar>>;
  /**
   * With `env: "lint"`: an environment to read only the lengths of `${env.*}` values from, to warn
   * about values too short to redact (`syncbook lint` passes process.env). Never their values.
   */
  envLengths?: Readonly<Record<string, string | undefined>>;
  /** The file's real size when only its start was read (too big). */
  sizeBytes?: number;
  /**
   * Read the file synchronously (`syncbook lint` of a folder): for a thousand small files the
   * promise-based read (open, stat, read, close, each through the thread pool) cost a tenth of
   * the lint. A run reads one file and keeps the event loop free.
   */
  readSync?: boolean;
  /** The file's bytes, already read (lint's folder search reads each runbook once): not read again. */
  bytes?: Uint8Array;
  /**
   * Where (a path into the parsed runbook, given its raw form) an unset `${env.*}` is not needed:
   * a rehearsal's hooks and notifiers, which stand-ins replace. There it gets a stand-in value and
   * its name is listed in `stoodIn`; a variable made of one is allowed only where it is used there.
   */
  standIn?: (raw: unknown) => (path: (string | number)[]) => boolean;
}

export interface LoadedRunbook {
  file: string;
  text: string;
  /** sha256 of the text: a journal written for another version of the runbook is told apart by it. */
  hash: string;
  /** The parsed YAML before interpolation (undefined when the YAML does not parse). */
  raw: unknown;
  /** The interpolated runbook, when schema-valid. */
  runbook: Runbook | undefined;
  /** YAML, interpolation and schema problems, positioned. Any error means: do not run. */
  diagnostics: Diagnostic[];
  /** Position of a node (or of its key) by YAML path. */
  locate: Locate;
  /** Removes every secret (env values, URL passwords, in every encoding) from a text; `.value` for data. */
  redact: Redactor;
  /** The variables in effect (overrides applied), for plans and reports: env-derived ones redacted. */
  vars: Record<string, Scalar>;
  /** The names of `vars` that `--var` set (`LoadOptions.vars`), in the order given: what a way on repeats. */
  given?: readonly string[];
  /**
   * The `--journal-dir` the command was given, as typed (a relative path kept relative, no symlink
   * resolved: the command it offers is pasted in the same shell); absent for the default folder
   * beside the runbook. Set by the command after loading (src/cli/execute.ts `loadForRun`,
   * src/cli/status.ts); every command offered repeats it (src/next-run.ts `runbookArgs`).
   */
  journalDir?: string;
  /**
   * Paths (JSON of the YAML path) whose value holds an `${env.*}` that was not resolved (lint
   * mode): nothing can judge them. Empty when the environment was read.
   */
  unresolved: ReadonlySet<string>;
  /** Paths (JSON) of whole-value placeholders that resolved to a string (what plugin checks may coerce). */
  whole: ReadonlySet<string>;
  /**
   * When the schema refused it: the interpolated value anyway, for lint to judge the rest of the
   * runbook in the same pass (never for running it).
   */
  unchecked?: unknown;
  /** Unset environment variables that got a stand-in value (`LoadOptions.standIn`): used only by what a rehearsal stands in for. */
  stoodIn?: readonly string[];
}

/**
 * Keys JavaScript gives a meaning of their own: `__proto__` sets an object's prototype instead
 * of adding a field (lint would see an inherited field the body sent lacks), `constructor` and
 * `prototype` shadow what code reads on every object. Never a field of the format or a plugin.
 */
const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A runbook is a page or two of YAML; a bigger file is a mistake, not a runbook (and must not stall lint). */
export const MAX_RUNBOOK_BYTES = 1024 * 1024;
/**
 * An override holding `***`, the mask every output shows a secret as, is a value pasted from an
 * offer, not the secret: the undo checks compare values masked alike on both sides, so they could
 * not tell it from the secret a hook ran with, and the undo would run with the text `***` (an
 * outside review, reproduced through the CLI, whose `parseVars` refuses it first). Refused here
 * for every caller, the library's too. A caller's mistake, not the text's: thrown, not a finding.
 */
function refuseMaskedOverrides(vars: LoadOptions["vars"]): void {
  for (const [name, value] of Object.entries(vars ?? {}))
    if (typeof value === "string" && value.includes(MASK))
      throw new RangeError(
        `vars.${name}: its value holds ${MASK}, which is how syncbook shows a secret, not a value: give the value the cutover's runs were given, or refer to it in the runbook as \${env.NAME}`,
      );
}

/** YAML aliases expand; a few hundred is plenty for a runbook and stops an alias bomb. */
const MAX_ALIAS_COUNT = 200;
/** Nesting deeper than this is never a runbook, and would exhaust the parser's stack. */
const MAX_DEPTH = 64;

export async function loadRunbook(file: string, opts: LoadOptions = {}): Promise<LoadedRunbook> {
  // node:fs/promises loaded when first needed: lint reads synchronously, and it costs lint's start-up 1.5 ms (issue 41)
  const buf = opts.bytes
    ? Buffer.from(opts.bytes.buffer, opts.bytes.byteOffset, opts.bytes.byteLength)
    : opts.readSync
      ? readFileSync(file)
      : await process.getBuiltinModule("node:fs/promises").readFile(file);
  return parseRunbook(
    buf.length > MAX_RUNBOOK_BYTES ? buf.subarray(0, MAX_RUNBOOK_BYTES + 1).toString("utf8") : buf.toString("utf8"),
    file,
    { ...opts, ...(buf.length > MAX_RUNBOOK_BYTES ? { sizeBytes: buf.length } : {}) },
  );
}

export async function parseRunbook(text: string, file: string, opts: LoadOptions = {}): Promise<LoadedRunbook> {
  const parsed = parseNow(text, file, opts);
  if (!("explain" in parsed)) return parsed;
  // only a runbook the schema refuses loads the explainer (lazily: it is not in lint's start-up)
  const { explainSchemaErrors } = await import("./explain.js");
  return parsed.explain(explainSchemaErrors);
}

/** A runbook the schema refused: what is left once the explainer is loaded. */
interface ExplainLater {
  explain: (explainSchemaErrors: (input: ExplainInput) => Diagnostic[]) => LoadedRunbook;
}

/**
 * `parseRunbook` without its one await: synchronous, so V8 optimizes it as a plain function, not
 * an async one. Optimizing the async one took 210 ms of compile per thread in a lint of 1,000
 * runbooks, this one 77 ms (issue 41: most of that lint's CPU is V8 compiling hot code, once per thread).
 */
function parseNow(text: string, file: string, opts: LoadOptions): LoadedRunbook | ExplainLater {
  refuseMaskedOverrides(opts.vars);
  const hash = lazyHash(text);
  const size = opts.sizeBytes ?? Buffer.byteLength(text);
  const early = refuse(text, file, size);
  if (early)
    return {
      file,
      text: "",
      hash: hash(),
      raw: undefined,
      runbook: undefined,
      diagnostics: [early],
      locate: () => ({ line: early.line, column: early.column }),
      redact: userinfoRedactor,
      vars: {},
      unresolved: new Set(),
      whole: new Set(),
    };
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true, strict: true });
  } catch (err) {
    // the parser's own limits (a stack overflow on pathological input): a finding, never a crash
    const d: Diagnostic = {
      file,
      line: 1,
      column: 1,
      rule: "yaml",
      severity: "error",
      message: `cannot parse: ${errorMessage(err)}`,
      hint: "This does not look like a runbook.",
    };
    return {
      file,
      text,
      hash: hash(),
      raw: undefined,
      runbook: undefined,
      diagnostics: [d],
      locate: () => ({ line: 1, column: 1 }),
      redact: userinfoRedactor,
      vars: {},
      unresolved: new Set(),
      whole: new Set(),
    };
  }
  const locate = createLocator(doc, lines);
  const diagnostics: Diagnostic[] = [];
  const secrets = new Set<string>();
  const redact = createRedactor(secrets);
  const seen = { unresolved: new Set<string>(), whole: new Set<string>(), stoodIn: [] as string[] };
  const result = (
    raw: unknown,
    runbook: Runbook | undefined,
    vars: Record<string, Scalar> = {},
    unchecked?: unknown,
  ): LoadedRunbook => ({
    ...(unchecked !== undefined ? { unchecked } : {}),
    file,
    text,
    get hash() {
      return hash();
    },
    raw,
    runbook,
    diagnostics,
    locate,
    redact,
    vars,
    ...(opts.vars && Object.keys(opts.vars).length ? { given: Object.keys(opts.vars) } : {}),
    unresolved: seen.unresolved,
    whole: seen.whole,
    ...(seen.stoodIn.length ? { stoodIn: seen.stoodIn } : {}),
  });

  for (const [list, severity] of [
    [doc.errors, "error"],
    [doc.warnings, "warning"],
  ] as const) {
    for (const e of list) diagnostics.push({ file, severity, ...yamlErrorAt(e, text, lines) });
  }
  if (doc.errors.length) return result(undefined, undefined);

  // One walk of the document (it was two: a tenth of lint's YAML time, issue 41), before
  // anything is built from it: a reserved key would change the objects themselves, and an alias
  // inside the node its anchor names (`a: &a [*a]`) makes a cyclic value: a finding, at the alias.
  const reserved: Diagnostic[] = [];
  const cyclic: Diagnostic[] = [];
  walkNodes(doc, {
    key(key) {
      if (typeof key.value !== "string" || !RESERVED_KEYS.has(key.value)) return;
      const at = lines.linePos(key.range?.[0] ?? 0);
      reserved.push({
        file,
        line: at.line,
        column: at.col,
        rule: "reserved-key",
        severity: "error",
        message: `\`${key.value}\` is not allowed as a key: JavaScript gives it a meaning of its own${key.value === "__proto__" ? " (it would replace the object's prototype, not add a field: what lint checks and what is sent would differ)" : ""}`,
        hint: "Remove or rename the key: no field of the format or of a plugin has this name.",
      });
    },
    alias(alias, ancestors) {
      const target = alias.resolve(doc);
      if (!target || !ancestors.includes(target)) return;
      const at = lines.linePos(alias.range?.[0] ?? 0);
      cyclic.push({
        file,
        line: at.line,
        column: at.col,
        rule: "yaml",
        severity: "error",
        message: `the alias *${alias.source} refers to a node that contains it: the value would be infinite`,
        hint: "An alias may only repeat a node it is not part of: write the value out, or anchor a smaller node.",
      });
    },
  });
  // reserved keys first and alone: with one, what an alias refers to is not judged
  diagnostics.push(...(reserved.length > 0 ? reserved : cyclic));
  if (reserved.length > 0 || cyclic.length > 0) return result(undefined, undefined);

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    const alias = /alias/i.test((err as Error).message);
    diagnostics.push({
      file,
      line: 1,
      column: 1,
      rule: "yaml",
      severity: "error",
      message: alias
        ? `too many alias expansions (over ${MAX_ALIAS_COUNT}): ${(err as Error).message}`
        : (err as Error).message,
      hint: alias
        ? "Write the values out instead of expanding aliases (this limit stops alias bombs)."
        : "Simplify the YAML.",
    });
    return result(undefined, undefined);
  }

  const env = opts.env ?? process.env;
  const pos = (path: (string | number)[], offset: number) => {
    const node = doc.getIn(path, true) as Node | undefined;
    if (node && isScalar(node) && node.range) {
      const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE" ? 1 : 0;
      const p = lines.linePos(node.range[0] + quoted + offset);
      return { line: p.line, column: p.col };
    }
    const s = locate(path);
    return { line: s.line, column: s.column };
  };

  // vars first (they may read the environment, not each other), then overrides, then the rest
  const rawVars = isRecord(raw) && isRecord(raw.vars) ? raw.vars : {};
  const lengths = env === "lint" && opts.envLengths ? { lengths: opts.envLengths } : {};
  const standIn = opts.standIn?.(raw);
  // a variable made of an unset variable is judged where it is used (`standInVars`)
  const varsPass = interpolate(rawVars, { vars: {}, env, ...lengths, ...(standIn ? { standIn: () => true } : {}) });
  const standInVars = new Map<string, string>();
  for (const u of varsPass.stoodIn)
    if (typeof u.path[0] === "string" && !Object.hasOwn(opts.vars ?? {}, u.path[0])) standInVars.set(u.path[0], u.name);
  // lint: a variable made of an `${env.*}` left as written is not judged where it is used either
  const unresolvedVars = new Set<string>();
  for (const p of varsPass.unresolved) {
    const k = (JSON.parse(p) as unknown[])[0];
    if (typeof k === "string" && !Object.hasOwn(opts.vars ?? {}, k)) unresolvedVars.add(k);
  }
  const vars: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(varsPass.value as Record<string, unknown>)) if (isScalarValue(v)) vars[k] = v;
  for (const [k, v] of Object.entries(opts.vars ?? {})) vars[k] = v;
  // the name is never interpolated with a secret: refused in every mode, it stays as written
  // (nothing read from the environment for it) and the schema's pattern is not told about it
  const nameSecrets = secretsInName(raw, rawVars, opts.vars ?? {});
  for (const r of nameSecrets) diagnostics.push({ file, ...pos(["name"], r.offset), ...r.finding });
  const body = interpolate(
    raw,
    {
      vars,
      env,
      ...lengths,
      ...(standIn ? { standIn, standInVars } : {}),
      ...(unresolvedVars.size ? { unresolvedVars } : {}),
    },
    (p) => p.length === 1 && (p[0] === "vars" || (p[0] === "name" && nameSecrets.length > 0)),
  );
  seen.stoodIn = [...new Set([...varsPass.stoodIn, ...body.stoodIn].map((u) => u.name))].sort();
  const value = isRecord(body.value)
    ? { ...body.value, ...(isRecord(raw) && "vars" in raw ? { vars: varsPass.value } : {}) }
    : body.value;
  for (const s of [...varsPass.secrets, ...body.secrets]) secrets.add(s);
  // the trace exporter's headers (an API key a collector may echo back) are the run's secrets too
  if (env !== "lint") for (const s of environmentSecrets(env)) secrets.add(s);
  // a password written in a URL is a secret too (lint refuses it, `--dry-run` still must not print
  // it, even one whose quotes or brackets stop the userinfo pattern)
  for (const s of literalUrlPasswords(value)) secrets.add(s);
  for (const p of varsPass.unresolved) seen.unresolved.add(JSON.stringify(["vars", ...(JSON.parse(p) as unknown[])]));
  for (const p of body.unresolved) seen.unresolved.add(p);
  for (const p of body.whole) seen.whole.add(p);
  // redaction cannot remove a value this short without mangling ordinary text (src/redact.ts):
  // say so where it is used, before anything runs
  for (const u of [...varsPass.envUses.map((x) => ({ ...x, path: ["vars", ...x.path] })), ...body.envUses]) {
    if (u.length === 0 || u.length >= MIN_SECRET_LENGTH) continue;
    diagnostics.push({
      file,
      ...pos(u.path, u.offset),
      rule: "secret-too-short",
      severity: "warning",
      message: `\`\${env.${u.name}}\` is ${u.length} character${u.length === 1 ? "" : "s"} long: a secret under ${MIN_SECRET_LENGTH} characters cannot be redacted (it would mangle ordinary output), so it may appear in output, journals and reports`,
      hint: `Use a longer secret; or, if ${u.name} is not a secret, pass it with --var instead of the environment.`,
    });
  }
  for (const p of [...varsPass.problems.map((x) => ({ ...x, path: ["vars", ...x.path] })), ...body.problems]) {
    diagnostics.push({
      file,
      ...pos(p.path, p.offset),
      rule: "interpolation",
      severity: "error",
      message: redact(p.message),
      hint: p.hint,
    });
  }

  let valid = validateRunbookSchema(value);
  // ajv keeps the errors on the (shared) function: take them before any await lets another load run
  let schemaErrors = valid ? [] : [...(validateRunbookSchema.errors ?? [])];
  if (nameSecrets.length > 0) {
    // `secret-in-name` says what is wrong with the name; its placeholder is no pattern error
    schemaErrors = schemaErrors.filter((e) => e.instancePath !== "/name");
    valid = schemaErrors.length === 0;
  }
  if (!valid && body.whole.size > 0) {
    // typed placeholders: a whole-value `${env.R}` (a string) where the format wants a number or
    // a boolean takes that type when its text reads as one; anything else stays the error it is
    const fix = coerceWholes(value, body.whole, schemaErrors);
    if (fix) [valid, schemaErrors] = fix;
  }
  if (valid) return result(raw, value as Runbook, shownVars(vars, redact, standInVars));
  return {
    explain(explainSchemaErrors) {
      const unknownPaths = new Set([
        ...body.unresolved,
        ...body.problems.map((p) => JSON.stringify(p.path)),
        ...[...varsPass.unresolved].map((p) => JSON.stringify(["vars", ...(JSON.parse(p) as unknown[])])),
      ]);
      const explained = explainSchemaErrors({
        file,
        data: value,
        errors: schemaErrors,
        locate,
        redact,
        unknownPaths,
        written: raw,
        given: new Set(Object.keys(opts.vars ?? {})),
      });
      diagnostics.push(...explained);
      // lint cannot see env values: a finding only about such a value (an info, "not judged")
      // leaves the runbook usable for lint
      if (explained.some((d) => d.severity === "error"))
        return result(raw, undefined, shownVars(vars, redact, standInVars), value);
      return result(raw, value as Runbook, shownVars(vars, redact, standInVars));
    },
  };
}

/**
 * The secrets in the runbook's `name`, as written: each `${env.*}`, and each `${vars.x}` whose
 * variable is made of one (unless --var gives it). The name is the journal folder's name on disk
 * (`.syncbook/<name>/`, which CI uploads) and is in every report and page: a secret cannot be
 * redacted there.
 */
function secretsInName(
  raw: unknown,
  rawVars: Record<string, unknown>,
  given: Readonly<Record<string, Scalar>>,
): { offset: number; finding: Pick<Diagnostic, "rule" | "severity" | "message" | "hint"> }[] {
  const name = isRecord(raw) ? raw.name : undefined;
  if (typeof name !== "string") return [];
  const why =
    "the name becomes the journal folder's name on disk (`.syncbook/<name>/`) and appears in every report and page, where a secret cannot be redacted";
  const out: ReturnType<typeof secretsInName> = [];
  for (const ref of referencesIn(name)) {
    const rule = { rule: "secret-in-name", severity: "error" } as const;
    if (ref.source === "env") {
      out.push({
        offset: ref.offset,
        finding: {
          ...rule,
          message: `\`\${env.${ref.name}}\` in \`name\`: a value from the environment is a secret, and ${why}`,
          hint: `Write the name out; for a part that is not a secret, use \`\${vars.*}\` (under \`vars:\`, or --var name=value).`,
        },
      });
      continue;
    }
    const made = Object.hasOwn(given, ref.name) ? [] : envNamesIn(rawVars[ref.name]);
    if (made.length > 0)
      out.push({
        offset: ref.offset,
        finding: {
          ...rule,
          message: `\`\${vars.${ref.name}}\` in \`name\` is made of \`\${env.${made[0]}}\`: a value from the environment is a secret, and ${why}`,
          hint: `Write the name out, or give \`vars.${ref.name}\` a value that is not a secret (under \`vars:\`, or --var ${ref.name}=value).`,
        },
      });
  }
  return out;
}

/**
 * Every node of a document in yaml's `visit` order (a pair's key, then its value; depth first),
 * calling `key` for each scalar key and `alias` for each alias with the collections that contain
 * it: what yaml's `visit` did here, without its frozen copy of the path at every node (the walk
 * was about 3 % of linting a folder of runbooks, issue 41).
 */
function walkNodes(
  doc: ReturnType<typeof parseDocument>,
  on: { key: (key: YamlScalar) => void; alias: (alias: Alias, ancestors: readonly unknown[]) => void },
): void {
  const ancestors: unknown[] = [];
  const walk = (node: unknown): void => {
    if (isAlias(node)) on.alias(node, ancestors);
    else if (isPair(node)) {
      if (isScalar(node.key)) on.key(node.key);
      walk(node.key);
      walk(node.value);
    } else if (isCollection(node)) {
      ancestors.push(node);
      for (const item of node.items) walk(item);
      ancestors.pop();
    }
  };
  walk(doc.contents);
}

type SchemaError = NonNullable<typeof validateRunbookSchema.errors>[number];

/** A JSON pointer (`/steps/0/timeout`) as a YAML path (`["steps", 0, "timeout"]`) of `data`. */
export function pointerPath(pointer: string, data: unknown): (string | number)[] {
  if (pointer === "") return [];
  const out: (string | number)[] = [];
  let node: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const key: string | number = Array.isArray(node) ? Number(seg) : seg;
    out.push(key);
    node = node !== null && typeof node === "object" ? (node as Record<string | number, unknown>)[key] : undefined;
  }
  return out;
}

/**
 * Coerces, in `value`, each whole-value placeholder the schema rejected as a string to the number
 * or boolean its text reads as: from then on the typed value is what is checked (an error names
 * what is wrong with it, `must be >= 0`, not its type). Returns the new validation result, or
 * undefined when nothing changed.
 */
function coerceWholes(
  value: unknown,
  whole: ReadonlySet<string>,
  errors: readonly SchemaError[],
): [boolean, SchemaError[]] | undefined {
  const at = (e: SchemaError) => JSON.stringify(pointerPath(e.instancePath, value));
  let changed = false;
  for (const key of new Set(errors.map(at))) {
    if (!whole.has(key)) continue;
    const path = JSON.parse(key) as (string | number)[];
    const parent = path.slice(0, -1).reduce<unknown>((n, k) => (n as Record<string | number, unknown>)?.[k], value);
    const last = path[path.length - 1];
    if (parent === null || typeof parent !== "object" || last === undefined) continue;
    const holder = parent as Record<string | number, unknown>;
    const before = holder[last];
    if (typeof before !== "string") continue;
    const typed = coercion(before);
    if (typed === undefined) continue;
    holder[last] = typed;
    changed = true;
  }
  if (!changed) return undefined;
  const ok = validateRunbookSchema(value);
  return [ok, ok ? [] : [...(validateRunbookSchema.errors ?? [])]];
}

/**
 * sha256 of the text, computed when first asked for: only runs and journals need it, and lint
 * must not load node:crypto at start-up.
 */
function lazyHash(text: string): () => string {
  let value: string | undefined;
  return () => (value ??= process.getBuiltinModule("node:crypto").createHash("sha256").update(text).digest("hex"));
}

/** Input that is not worth parsing: too big, binary, nested beyond any runbook. */
function refuse(text: string, file: string, size: number): Diagnostic | undefined {
  const at = { file, line: 1, column: 1, rule: "yaml", severity: "error" as const };
  if (size > MAX_RUNBOOK_BYTES)
    return {
      ...at,
      message: `the file is ${formatBytes(size)}; a runbook is at most ${formatBytes(MAX_RUNBOOK_BYTES)}`,
      hint: "Is this the right file? Runbooks are small YAML files.",
    };
  const nul = text.indexOf("\u0000");
  const head = text.slice(0, 4096);
  let control = false;
  for (let i = 0; i < head.length && !control; i++) {
    const c = head.charCodeAt(i);
    control = (c >= 1 && c <= 8) || (c >= 14 && c <= 31);
  }
  if (nul >= 0 || control) {
    const before = text.slice(0, nul >= 0 ? nul : 0);
    return {
      ...at,
      line: before.split("\n").length,
      message: "binary content: this is not a YAML text file",
      hint: "Pass the runbook's .yaml file.",
    };
  }
  // by char code, not `for…of` (a string iterator) nor a regex per line: lint of a folder runs
  // this on every file. The indent is the longest run of spaces that starts a line (after any of
  // JavaScript's line terminators, as `^` in a multiline regex).
  let depth = 0;
  let max = 0;
  let indent = 0;
  let spaces = 0;
  let lineStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20) {
      if (lineStart && ++spaces > indent) indent = spaces;
      continue;
    }
    lineStart = c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
    spaces = 0;
    if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  if (max > MAX_DEPTH || indent > MAX_DEPTH * 4)
    return {
      ...at,
      message: `nested more than ${MAX_DEPTH} levels deep`,
      hint: "A runbook is a few levels deep; this is not one.",
    };
  return undefined;
}

/**
 * The variables as the runbook's values show them (`LoadedRunbook.vars`): redacted, and one made of
 * an unset `${env.*}` that took the stand-in masked as its value would be (it is a secret's): `status`
 * compares them with the journal's, where the cutover's runs had it set (a review: status told the
 * operator to give a `--var` the cutover never got, the journal's `***` against `stand-in`).
 */
function shownVars(
  vars: Record<string, Scalar>,
  redact: (s: string) => string,
  standInVars: ReadonlyMap<string, string>,
): Record<string, Scalar> {
  const out = redactVars(vars, redact);
  for (const k of standInVars.keys()) {
    const v = out[k];
    if (typeof v === "string") out[k] = v.replaceAll(STAND_IN, MASK);
  }
  return out;
}

function redactVars(vars: Record<string, Scalar>, redact: (s: string) => string): Record<string, Scalar> {
  return Object.fromEntries(Object.entries(vars).map(([k, v]): [string, Scalar] => [k, redactedVar(v, redact)]));
}

/**
 * A variable's value as the runbook's values hold it (`LoadedRunbook.vars`, and so the journal's
 * `run.started.vars`): a text redacted, and a number too, whose text holding a secret makes it its
 * masked text (`--var build=98765432` with that secret in the environment was journaled in clear:
 * an outside review). The checks of a way on's values redact the journal's alike (src/run/earlier.ts).
 */
export function redactedVar(v: Scalar, redact: (s: string) => string): Scalar {
  if (typeof v === "boolean") return v;
  const text = String(v);
  const shown = redact(text);
  return shown === text ? v : shown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isScalarValue = (v: unknown): v is Scalar =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** The passwords of every URL in the runbook (as written and percent-decoded). */
function literalUrlPasswords(v: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof v === "string") {
    const p = uriPassword(v.trim());
    // lint leaves `${env.*}` as written: a placeholder is not a password
    if (p !== undefined && !p.includes("${")) {
      out.push(p);
      try {
        out.push(decodeURIComponent(p));
      } catch {
        // a bad escape: the raw form is what is sent and shown
      }
    }
  } else if (v !== null && typeof v === "object" && depth < 64)
    for (const x of Object.values(v as Record<string, unknown>)) literalUrlPasswords(x, out, depth + 1);
  return out;
}
