/**
 * `${vars.name}` and `${env.NAME}` interpolation over the parsed runbook. A string that is one
 * placeholder and nothing else takes the variable's type (`lagBelow: ${vars.maxLag}` stays a
 * number); otherwise placeholders are spliced into the string. `$${` writes a literal `${`.
 * Every value taken from the environment is a secret: it is collected so that everything the
 * tool prints, journals or reports can be redacted.
 *
 * An environment variable is always a string, so a whole-value placeholder that resolved to a
 * string is recorded (`whole`): where the field wants a number or a boolean, the loader coerces
 * it (`coercion`) and validates the result, so `retries: ${env.R}` is judged as the number it is
 * meant to be, before anything is sent, instead of failing as a string later.
 */
import { suggest } from "../suggest.js";
export type Scalar = string | number | boolean;
type Path = (string | number)[];

export interface InterpolationProblem {
  path: Path;
  /** Offset of the placeholder inside the string (for the column). */
  offset: number;
  message: string;
  hint: string;
}

export interface InterpolateOptions {
  vars: Readonly<Record<string, Scalar>>;
  /** The environment, or "lint": `${env.*}` left as written (CI has no secrets), its path noted. */
  env: Readonly<Record<string, string | undefined>> | "lint";
  /**
   * In lint mode, where the environment may still be at hand: only the length of a variable is
   * read from it (a value too short to redact is worth a warning); the value is never used.
   */
  lengths?: Readonly<Record<string, string | undefined>>;
  /**
   * Where an unset `${env.*}` is not needed (a rehearsal's hooks and notifiers, which stand-ins
   * replace): it gets `STAND_IN` instead of an error, and its name is noted (`stoodIn`).
   */
  standIn?: (path: Path) => boolean;
  /** Variables that took the stand-in (an unset `${env.NAME}`): by variable, the variable's NAME. */
  standInVars?: ReadonlyMap<string, string>;
  /**
   * In lint mode, the variables whose value holds an `${env.*}` left as written: a place that uses
   * one is as unjudged as one that names the environment itself (`unresolved`). A helper's runbook:
   * `url: "${vars.writeSwitch}"` with `writeSwitch: "${env.SWITCH_URL}"` failed lint's `format: uri`
   * on the placeholder's text, set or not, while `run` passed it.
   */
  unresolvedVars?: ReadonlySet<string>;
}

/** The value an unset `${env.*}` gets where only a stand-in uses it (never a secret: nothing is read). */
export const STAND_IN = "stand-in";

export interface Interpolated {
  value: unknown;
  problems: InterpolationProblem[];
  /** Values read from the environment (to redact). */
  secrets: Set<string>;
  /** Paths whose value holds an `${env.*}` lint did not resolve. */
  unresolved: Set<string>;
  /** Paths (JSON) of whole-value placeholders that resolved to a string: typed by where they stand. */
  whole: Set<string>;
  /** Every `${env.*}` that was resolved: where, and how long its value is (never the value). */
  envUses: { path: Path; offset: number; name: string; length: number }[];
  /** Unset environment variables that got `STAND_IN` (`standIn`), by name, with where. */
  stoodIn: { path: Path; name: string }[];
}

const PLACEHOLDER = /\$\$\{|\$\{([^}]*)\}/g;
const REF = /^\s*(vars|env)\.([A-Za-z_][A-Za-z0-9_]*)\s*$/;
/** A string that is one placeholder and nothing else (it takes the variable's type). */
const WHOLE = /^\$\{([^}]*)\}$/;

/** `skip` is asked with the walk's own path array: it must not keep it. */
export function interpolate(
  root: unknown,
  opts: InterpolateOptions,
  skip?: (path: readonly (string | number)[]) => boolean,
): Interpolated {
  const problems: InterpolationProblem[] = [];
  const secrets = new Set<string>();
  const unresolved = new Set<string>();
  const whole = new Set<string>();
  const envUses: Interpolated["envUses"] = [];
  const stoodIn: Interpolated["stoodIn"] = [];

  const str = (s: string, path: Path): unknown => {
    if (!s.includes("${")) return s;
    const only = WHOLE.exec(s);
    const resolve = (inner: string, offset: number): Scalar | undefined => {
      const m = REF.exec(inner);
      if (!m) {
        problems.push({
          path,
          offset,
          message: `\`\${${inner}}\` is not a variable reference`,
          hint: "Write ${vars.name} (from `vars:` or --var) or ${env.NAME} (from the environment); $${ writes a literal ${.",
        });
        return undefined;
      }
      const [, scope, name] = m as unknown as [string, "vars" | "env", string];
      if (scope === "vars") {
        const unset = opts.standInVars?.get(name);
        if (unset !== undefined) {
          if (opts.standIn?.(path)) {
            stoodIn.push({ path, name: unset });
            return STAND_IN;
          }
          problems.push({
            path,
            offset,
            message: `\`vars.${name}\` is \`\${env.${unset}}\`, and environment variable \`${unset}\` is not set`,
            hint: `Export ${unset} (its value is treated as a secret and never printed): it is used here, not only by a hook or notifier a rehearsal stands in for.`,
          });
          return undefined;
        }
        if (!Object.hasOwn(opts.vars, name)) {
          const known = Object.keys(opts.vars);
          const near = suggest(name, known);
          problems.push({
            path,
            offset,
            message: `unknown variable \`vars.${name}\`${near ? `; did you mean \`vars.${near}\`?` : ""}`,
            hint: known.length
              ? `Defined variables: ${known.join(", ")}. Add it under \`vars:\` or pass --var ${name}=…`
              : `Add it under \`vars:\` or pass --var ${name}=…`,
          });
          return undefined;
        }
        if (opts.unresolvedVars?.has(name)) unresolved.add(JSON.stringify(path));
        return opts.vars[name];
      }
      if (opts.env === "lint") {
        unresolved.add(JSON.stringify(path));
        const length = opts.lengths?.[name]?.length;
        if (length !== undefined) envUses.push({ path, offset, name, length });
        return undefined;
      }
      const v = opts.env[name];
      if (v === undefined && opts.standIn?.(path)) {
        stoodIn.push({ path, name });
        return STAND_IN;
      }
      if (v === undefined) {
        problems.push({
          path,
          offset,
          message: `environment variable \`${name}\` is not set`,
          hint: `Export ${name} before running (its value is treated as a secret and never printed).`,
        });
        return undefined;
      }
      if (v !== "") secrets.add(v);
      envUses.push({ path, offset, name, length: v.length });
      return v;
    };
    if (only) {
      const v = resolve(only[1] ?? "", 0);
      if (typeof v === "string") whole.add(JSON.stringify(path));
      return v === undefined ? s : v;
    }
    let failed = false;
    const out = s.replace(PLACEHOLDER, (match, inner: string | undefined, offset: number) => {
      if (match === "$${") return "${";
      const v = resolve(inner ?? "", offset);
      if (v === undefined) {
        failed = true;
        return match;
      }
      return String(v);
    });
    return failed ? s : out;
  };

  // one path array, extended and shortened as the walk goes (a copy per value was most of the
  // walk's cost, issue 41); a string with a placeholder gets its own copy, which findings keep
  const path: Path = [];
  const walk = (node: unknown): unknown => {
    if (skip?.(path)) return node;
    if (typeof node === "string") return node.includes("${") ? str(node, [...path]) : node;
    if (Array.isArray(node)) {
      const out = new Array<unknown>(node.length);
      for (let i = 0; i < node.length; i++) {
        path.push(i);
        out[i] = walk(node[i]);
        path.pop();
      }
      return out;
    }
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(node)) {
        path.push(k);
        const value = walk((node as Record<string, unknown>)[k]);
        path.pop();
        // an own property whatever the key: `out["__proto__"] = v` would set the prototype instead
        // (the loader refuses such keys before this; this keeps the walk itself safe). Every other
        // key of a plain object is assigned as defined (Object.prototype has no other setter).
        if (k === "__proto__")
          Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
        else out[k] = value;
      }
      return out;
    }
    return node;
  };

  return { value: walk(root), problems, secrets, unresolved, whole, envUses, stoodIn };
}

/**
 * The typed value of a whole-value placeholder's string, when it reads as one: a number
 * (`3`, `-1.5`) or a boolean (`true`, `false`). Undefined: it stays a string.
 */
export function coercion(v: string): number | boolean | undefined {
  if (/^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v.trim());
  if (v.trim() === "true") return true;
  if (v.trim() === "false") return false;
  return undefined;
}

/**
 * The variable a value that is one placeholder and nothing else names, as the loader reads it
 * (`vars.rollback` for `${vars.rollback}` and `${ vars.rollback }`); undefined for anything else.
 */
export function wholeReference(v: unknown): string | undefined {
  const only = typeof v === "string" ? WHOLE.exec(v) : null;
  const ref = only ? REF.exec(only[1] ?? "") : null;
  return ref ? `${ref[1]}.${ref[2]}` : undefined;
}

/**
 * The variable step `index`'s `when` names, as written (`vars.rollback` for
 * `when: "${vars.rollback}"`), from the runbook before interpolation (`LoadedRunbook.raw`);
 * undefined for any other.
 */
export function whenVariable(raw: unknown, index: number): string | undefined {
  const steps = (raw as { steps?: unknown } | undefined)?.steps;
  const step: unknown = Array.isArray(steps) ? steps[index] : undefined;
  return typeof step === "object" && step !== null ? wholeReference((step as { when?: unknown }).when) : undefined;
}

/**
 * The `${env.NAME}` names a value refers to (a runbook loaded for lint keeps them as written),
 * each once, in order: what an engine must hand the job (a wave's `secrets:`, src/wave/lint.ts).
 */
export function envNamesIn(root: unknown): string[] {
  return namesIn(root, "env");
}

/**
 * The `${vars.NAME}` names a value refers to (a runbook's raw step), each once, in order: what
 * its hook's call, and so its undo's, was made of (src/run/earlier.ts `undoVarsDiffer`).
 */
export function varNamesIn(root: unknown): string[] {
  return namesIn(root, "vars");
}

/**
 * The well-formed `${vars.x}` / `${env.X}` references in one string as written, with each one's
 * offset in it (for its column): `$${` and malformed placeholders are not references.
 */
export function referencesIn(s: string): { source: "vars" | "env"; name: string; offset: number }[] {
  const out: { source: "vars" | "env"; name: string; offset: number }[] = [];
  for (const m of s.matchAll(PLACEHOLDER)) {
    const ref = m[1] === undefined ? null : REF.exec(m[1]);
    if (ref?.[2]) out.push({ source: ref[1] as "vars" | "env", name: ref[2], offset: m.index });
  }
  return out;
}

function namesIn(root: unknown, source: "env" | "vars"): string[] {
  const names = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      for (const ref of referencesIn(v)) if (ref.source === source) names.add(ref.name);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  walk(root);
  return [...names];
}
