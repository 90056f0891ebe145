/**
 * Lenient answer checking, driven by the field descriptors of types.ts (which a test holds equal
 * to schemas/*.schema.json). Hand-written rather than ajv at run time: the runner checks up to
 * 256 answers a second, and the CLI must not compile a schema at start-up (DESIGN, start-up
 * budget). A test asserts that this checker and ajv agree on what is valid.
 *
 * Rules:
 * - unknown fields are kept as sent;
 * - a missing `expected` field is an issue (reported as a warning), the answer is still used;
 * - a documented field of the wrong type is an issue and is left out of the typed object (the
 *   raw answer keeps it), so code reading the typed object never sees a string where a number
 *   is promised; a non-integer number where an integer is documented is an issue but kept;
 * - a state (or any enum value) this client does not know is an issue and kept;
 * - a missing or mistyped `required` field makes the answer unusable (`fatal`).
 */
import type { FieldSpec, FieldsSpec } from "./types.js";

export interface AnswerIssue {
  /** Dotted path inside the answer, e.g. `progress.collectionCopy.estimatedTotalBytes`. */
  path: string;
  kind: "missing" | "type" | "integer" | "enum";
  /** What the schema documents, e.g. `integer | null`. */
  expected: string;
  /** What came, for type/integer/enum issues, e.g. `string`, `"PAUSING"`. */
  actual?: string;
}

export interface Checked<T> {
  /** The typed view (copied only where a mistyped field had to be left out). */
  value: T;
  issues: AnswerIssue[];
}

export type CheckOutcome<T> = ({ ok: true } & Checked<T>) | { ok: false; fatal: string; issues: AnswerIssue[] };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function expectedText(spec: FieldSpec): string {
  if (spec.type === "any") return "any";
  const base = spec.type === "string" && spec.enum ? spec.enum.map((e) => JSON.stringify(e)).join(" | ") : spec.type;
  return spec.nullable ? `${base} | null` : base;
}

class Fatal extends Error {}

const pathOf = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`);

function checkObject(
  obj: Record<string, unknown>,
  fields: FieldsSpec,
  path: string,
  issues: AnswerIssue[],
): Record<string, unknown> {
  let out = obj;
  const drop = (k: string): void => {
    if (out === obj) out = { ...obj };
    delete out[k];
  };
  // for…in and the path only where an issue names it: the descriptor is read for every answer (a
  // fleet of 64 inside the write-stop window, issue 41), and a fresh array and string per field
  // were most of what this allocated
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    const spec = fields[name]!;
    const present = Object.hasOwn(obj, name) && obj[name] !== undefined;
    if (!present) {
      if (spec.presence === "required") throw new Fatal(`no "${pathOf(path, name)}"`);
      if (spec.presence === "expected")
        issues.push({ path: pathOf(path, name), kind: "missing", expected: expectedText(spec) });
      continue;
    }
    const v = obj[name];
    if (spec.type === "any") continue;
    if (v === null) {
      if (spec.nullable) continue;
      if (spec.presence === "required") throw new Fatal(`"${pathOf(path, name)}" is null`);
      issues.push({ path: pathOf(path, name), kind: "type", expected: expectedText(spec), actual: "null" });
      drop(name);
      continue;
    }
    let typeOk: boolean;
    switch (spec.type) {
      case "string":
        typeOk = typeof v === "string";
        break;
      case "boolean":
        typeOk = typeof v === "boolean";
        break;
      case "integer":
      case "number":
        typeOk = typeof v === "number" && Number.isFinite(v);
        break;
      case "array":
        typeOk = Array.isArray(v);
        break;
      case "object":
        typeOk = isPlainObject(v);
        break;
    }
    if (!typeOk) {
      if (spec.presence === "required")
        throw new Fatal(`"${pathOf(path, name)}" is ${describe(v)}, expected ${expectedText(spec)}`);
      issues.push({ path: pathOf(path, name), kind: "type", expected: expectedText(spec), actual: describe(v) });
      drop(name);
      continue;
    }
    if (spec.type === "integer" && !Number.isInteger(v)) {
      issues.push({
        path: pathOf(path, name),
        kind: "integer",
        expected: expectedText(spec),
        actual: JSON.stringify(v),
      });
    } else if (spec.type === "string" && spec.enum && !spec.enum.includes(v as string)) {
      issues.push({ path: pathOf(path, name), kind: "enum", expected: expectedText(spec), actual: JSON.stringify(v) });
    } else if (spec.type === "object") {
      const inner = checkObject(v as Record<string, unknown>, spec.fields, pathOf(path, name), issues);
      if (inner !== v) {
        if (out === obj) out = { ...obj };
        out[name] = inner;
      }
    }
  }
  return out;
}

/** Checks a parsed JSON value against a descriptor. Never throws. */
export function checkAnswer<T>(value: unknown, fields: FieldsSpec, path = ""): CheckOutcome<T> {
  const issues: AnswerIssue[] = [];
  if (!isPlainObject(value)) return { ok: false, fatal: `answer is ${describe(value)}, expected an object`, issues };
  try {
    return { ok: true, value: checkObject(value, fields, path, issues) as T, issues };
  } catch (err) {
    if (err instanceof Fatal) return { ok: false, fatal: err.message, issues };
    throw err;
  }
}

/** One line for a warning: `no "progress.canWrite" (expected boolean | null)`. */
export function issueText(issue: AnswerIssue): string {
  switch (issue.kind) {
    case "missing":
      return `no "${issue.path}" (documented as ${issue.expected})`;
    case "enum":
      return `"${issue.path}" is ${issue.actual ?? "?"}, not one of ${issue.expected}: passed through as sent`;
    case "integer":
      return `"${issue.path}" is ${issue.actual ?? "?"}, documented as an integer`;
    case "type":
      return `"${issue.path}" is ${issue.actual ?? "?"}, documented as ${issue.expected}: ignored`;
  }
}
