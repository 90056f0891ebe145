/**
 * ajv's errors → diagnostics a person can act on: at the line and column of the offending key
 * or value, one finding per mistake (the branches of `anyOf`/`oneOf` are folded into one), with
 * "did you mean" for misspelt fields and values, and the schema's own description as the hint.
 * Loaded only when a runbook is invalid: the schema module and the distance function stay out
 * of a clean lint's start-up.
 */
import type { ErrorObject } from "ajv";
import type { Diagnostic } from "../diagnostics.js";
import { suggest } from "../suggest.js";
import type { Locate } from "./positions.js";
import { RUNBOOK_SCHEMA } from "./schema-json.gen.js";
import { PLUGIN_STEP_KIND, STEP_KINDS } from "./types.js";

type Path = (string | number)[];
type Json = Record<string, unknown>;

export interface ExplainInput {
  file: string;
  data: unknown;
  errors: readonly ErrorObject[];
  locate: Locate;
  redact: (s: string) => string;
  /** Paths whose value came from `${env.*}` that lint cannot see: format errors there are not errors. */
  unknownPaths?: ReadonlySet<string>;
  /** The schema the errors are of (its descriptions are the hints); default the runbook's. */
  schema?: Json;
  /**
   * The document as written, before interpolation: a value that came from a whole `${vars.x}` is
   * said as such, with where the variable is set (the error is the variable's, not the line's).
   */
  written?: unknown;
  /** The names `--var` set: such a value is said as the flag's, not as the runbook's default it overrides. */
  given?: ReadonlySet<string>;
}

const WHOLE_VAR = /^\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}$/;

export function explainSchemaErrors(input: ExplainInput): Diagnostic[] {
  const { data, locate } = input;
  const root = schemaOf(input.schema ?? RUNBOOK_SCHEMA);
  const errors = fold(
    input.errors.map((e) => ({ ...e, path: toPath(e.instancePath, data) })),
    data,
    root,
  );
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const unknown = (p: Path): boolean => input.unknownPaths?.has(JSON.stringify(p)) === true;
  // a value lint cannot see (`${env.*}`, no environment in CI) is not judged, and says so once;
  // the other alternatives' complaints about its container (`expected a string, got a mapping`
  // for `{ url: ${env.X} }`) are not judged either
  const notJudged = errors.filter(
    (e) => unknown(e.path) && e.keyword !== "required" && e.keyword !== "additionalProperties",
  );
  const below = (e: Err): boolean =>
    e.keyword === "type" && notJudged.some((n) => n.path.length > e.path.length && startsWith(n.path, e.path));
  for (const n of notJudged) {
    const key = `${JSON.stringify(n.path)}|not judged`;
    if (seen.has(key)) continue;
    seen.add(key);
    const raw = valueAt(data, n.path);
    // an unknown `${vars.*}` is not from the environment: its own error (with a did-you-mean) says it all
    if (typeof raw === "string" && !raw.includes("${env.")) continue;
    const last = n.path[n.path.length - 1];
    const what = typeof last === "number" ? `this ${contextName(n.path)}` : `\`${String(last)}\``;
    out.push({
      file: input.file,
      ...locate(n.path),
      rule: "schema",
      severity: "info",
      message: input.redact(
        `${what}: ${typeof raw === "string" ? `\`${raw}\`` : "its value"} is not set here (not judged): it comes from the environment`,
      ),
      hint: "`syncbook run` and `rehearse` judge it with the environment they are given; `syncbook lint` has none.",
    });
  }
  for (const e of errors) {
    if (notJudged.includes(e) || below(e)) continue;
    const found = describe(e, data, root);
    if (!found) continue;
    const key = `${JSON.stringify(found.path)}|${found.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const pos = locate(found.path, { key: found.atKey === true });
    const src = found.atKey ? undefined : valueAt(input.written, found.path);
    const ref = typeof src === "string" ? WHOLE_VAR.exec(src) : null;
    const byFlag = ref !== null && input.given?.has(ref[1]!) === true;
    const set =
      ref && !byFlag && valueAt(input.written, ["vars", ref[1]!]) !== undefined ? locate(["vars", ref[1]!]) : undefined;
    out.push({
      file: input.file,
      ...pos,
      rule: "schema",
      severity: "error",
      message: input.redact(
        ref ? `\`${src as string}\` is ${show(valueAt(data, found.path))}: ${found.message}` : found.message,
      ),
      ...(found.hint || ref
        ? {
            hint: input.redact(
              ref
                ? `vars.${ref[1]!} is set ${set ? `at ${input.file}:${set.line}:${set.column}` : "by --var"}: give it a value this field takes.${found.hint ? ` ${found.hint}` : ""}`
                : found.hint!,
            ),
          }
        : {}),
    });
  }
  // ajv walks the schema's order; people read the file's
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}

type Err = ErrorObject & { path: Path };

function toPath(pointer: string, data: unknown): Path {
  if (pointer === "") return [];
  const out: Path = [];
  let node: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      const i = Number(seg);
      out.push(i);
      node = node[i];
    } else {
      out.push(seg);
      node = node !== null && typeof node === "object" ? (node as Json)[seg] : undefined;
    }
  }
  return out;
}

const startsWith = (p: Path, prefix: Path): boolean => prefix.every((s, i) => p[i] === s);

/**
 * Fold each `anyOf`/`oneOf` with its branch errors into the errors of one branch: the branch
 * that got furthest (deepest instance path, then fewest errors). A branch that failed only on
 * the type of the value itself did not get anywhere. The step's kind `oneOf` stays as is.
 */
function fold(errors: Err[], data: unknown, root: Root): Err[] {
  const dropped = new Set<Err>();
  const added: Err[] = [];
  errors.forEach((alt, j) => {
    if ((alt.keyword !== "anyOf" && alt.keyword !== "oneOf") || isStepKindOneOf(alt)) return;
    // ajv reports a failed alternative right after its branches' errors, which all lie under
    // its instance path (schema paths are relative to a $ref'd definition, so they cannot tell)
    const under: Err[] = [];
    for (let i = j - 1; i >= 0; i--) {
      const e = errors[i] as Err;
      if (!startsWith(e.path, alt.path) || dropped.has(e)) break;
      under.unshift(e);
    }
    for (const e of under) dropped.add(e);
    const prefix = `${alt.schemaPath}/`;
    const branches = new Map<string, Err[]>();
    for (const e of under) {
      const b = e.schemaPath.startsWith(prefix)
        ? (e.schemaPath.slice(prefix.length).split("/")[0] ?? "")
        : e.schemaPath.replace(/\/[^/]+$/, "");
      branches.set(b, [...(branches.get(b) ?? []), e]);
    }
    const useful = [...branches.values()].filter(
      (errs) => !errs.every((e) => e.keyword === "type" && e.path.length === alt.path.length),
    );
    if (isDuration(alt, data, root) || useful.length === 0) return; // the alternative itself is explained
    useful.sort(
      (a, b) =>
        Math.max(...b.map((e) => e.path.length)) - Math.max(...a.map((e) => e.path.length)) || a.length - b.length,
    );
    dropped.add(alt);
    added.push(...(useful[0] ?? []));
  });
  // the step kind oneOf: its `required` branches say nothing the oneOf does not
  errors.forEach((e, j) => {
    if (!isStepKindOneOf(e)) return;
    for (let i = j - 1; i >= 0; i--) {
      const b = errors[i] as Err;
      if (!startsWith(b.path, e.path) || !/\/oneOf\/\d+\//.test(b.schemaPath)) break;
      dropped.add(b);
    }
  });
  return [...errors.filter((e) => !dropped.has(e)), ...added].sort((a, b) => errors.indexOf(a) - errors.indexOf(b));
}

/** A schema and its definitions. */
interface Root {
  schema: Json;
  defs: Record<string, Json>;
}
const schemaOf = (schema: Json): Root => ({ schema, defs: (schema.$defs ?? {}) as Record<string, Json> });
const isStepKindOneOf = (e: Err): boolean => e.keyword === "oneOf" && e.path.length === 2 && e.path[0] === "steps";
const isDuration = (e: Err, data: unknown, root: Root): boolean =>
  root.defs.duration !== undefined &&
  (e.schemaPath.startsWith("#/$defs/duration/") || schemaFor(e.path, data, root) === root.defs.duration);

function deref(node: Json | undefined, root: Root): Json | undefined {
  let n = node;
  for (let i = 0; i < 8 && n && typeof n.$ref === "string"; i++) n = root.defs[n.$ref.replace("#/$defs/", "")];
  return n;
}

const fitsType = (schema: Json, v: unknown): boolean => {
  const t = schema.type;
  const kind =
    v === null
      ? "null"
      : Array.isArray(v)
        ? "array"
        : typeof v === "object"
          ? "object"
          : typeof v === "number"
            ? Number.isInteger(v)
              ? "integer"
              : "number"
            : typeof v;
  if (t === undefined) return schema.properties !== undefined ? kind === "object" : true;
  const ts = Array.isArray(t) ? t : [t];
  return ts.includes(kind) || (kind === "integer" && ts.includes("number"));
};

/** The schema of the value at an instance path (through $ref, and the anyOf branch that fits the value). */
function schemaFor(path: Path, data: unknown, root: Root): Json | undefined {
  let schema = deref(root.schema, root);
  let value = data;
  const pick = (s: Json | undefined, v: unknown): Json | undefined => {
    const d = deref(s, root);
    const alts = (d?.anyOf ?? d?.oneOf) as Json[] | undefined;
    if (!d || !alts || d.properties) return d;
    return (
      deref(
        alts.map((a) => deref(a, root) as Json).find((a) => a && fitsType(a, v)),
        root,
      ) ?? d
    );
  };
  schema = pick(schema, value);
  for (const seg of path) {
    if (!schema) return undefined;
    const next = value !== null && typeof value === "object" ? (value as Json)[seg as string] : undefined;
    const props = schema.properties as Record<string, Json> | undefined;
    if (typeof seg === "number") schema = schema.items as Json | undefined;
    else if (props && props[seg]) schema = props[seg];
    else if (schema.additionalProperties && typeof schema.additionalProperties === "object")
      schema = schema.additionalProperties as Json;
    else return undefined;
    value = next;
    schema = pick(schema, value);
  }
  return schema;
}

function firstSentence(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  const m = /^(.+?\.)(\s|$)/.exec(text);
  return (m?.[1] ?? text).trim();
}

function valueAt(data: unknown, path: Path): unknown {
  let node = data;
  for (const seg of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Json)[seg];
  }
  return node;
}

/** What a mapping is called in messages: "waitFor", "step", "filter entry"… */
function contextName(path: Path): string {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (path.length === 0) return "top-level";
  if (typeof last === "number") {
    const names: Record<string, string> = {
      steps: "step",
      instances: "instance",
      includeNamespaces: "filter entry",
      excludeNamespaces: "filter entry",
      shardingEntries: "sharding entry",
      expect: "expectation",
      notify: "notify entry",
      key: "shard key",
    };
    return names[String(parent)] ?? `${String(parent)} entry`;
  }
  if (parent === "clusters") return "cluster";
  return String(last);
}

const jsType = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "a mapping" : typeof v;

function show(v: unknown): string {
  if (typeof v === "string") return `\`${v.length > 60 ? `${v.slice(0, 57)}…` : v}\``;
  if (v === null || typeof v !== "object") return `\`${String(v)}\``;
  return jsType(v);
}

const article = (t: string): string =>
  t === "integer"
    ? "an integer"
    : t === "array"
      ? "a list"
      : t === "object"
        ? "a mapping"
        : t === "null"
          ? "null"
          : `a ${t}`;

interface Found {
  path: Path;
  message: string;
  hint?: string;
  atKey?: boolean;
}

/** Names people write because an older page of the documentation did: why they are wrong. */
const WHY_NOT: Readonly<Record<string, string>> = {
  collectionRegex:
    "The service has no `collectionRegex` (service facts): it would ignore the key, and an entry with only a database selects the whole database (in excludeNamespaces: leaves all of it out). The collection pattern is `collectionsRegex`.",
};

function describe(e: Err, data: unknown, root: Root): Found | undefined {
  const value = valueAt(data, e.path);
  const lastSeg = e.path[e.path.length - 1];
  const field =
    e.path.length === 0
      ? "the runbook"
      : typeof lastSeg === "number"
        ? `this ${contextName(e.path)}`
        : `\`${String(lastSeg)}\``;
  const own = schemaFor(e.path, data, root);
  const hint = firstSentence(own?.description);
  const base = { path: e.path, ...(hint ? { hint } : {}) };
  switch (e.keyword) {
    case "additionalProperties": {
      const prop = String((e.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys((own?.properties as Json | undefined) ?? {});
      const near = suggest(prop, known);
      const ctx = contextName(e.path);
      const what = e.path.length === 0 ? `\`${prop}\` is not a top-level field` : `\`${prop}\` is not a ${ctx} field`;
      return {
        path: [...e.path, prop],
        atKey: true,
        message: near ? `${what}; did you mean \`${near}\`?` : what,
        hint:
          (Object.hasOwn(WHY_NOT, prop) ? WHY_NOT[prop] : undefined) ??
          (known.length && known.length <= 24
            ? `Known fields: ${known.join(", ")}.`
            : "Remove it, or check the spelling against the schema."),
      };
    }
    case "required": {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      const desc = firstSentence(((own?.properties as Json | undefined)?.[missing] as Json | undefined)?.description);
      return {
        path: e.path,
        atKey: true,
        message: `${contextName(e.path)} is missing the required field \`${missing}\``,
        ...(desc ? { hint: `\`${missing}\`: ${desc}` } : {}),
      };
    }
    case "oneOf": {
      // the step kind: exactly one of the kind keys
      const keys = value !== null && typeof value === "object" ? Object.keys(value) : [];
      const kinds = keys.filter((k) => (STEP_KINDS as readonly string[]).includes(k) || PLUGIN_STEP_KIND.test(k));
      if (kinds.length > 1)
        return {
          path: e.path,
          message: `a step has exactly one kind, this one has ${kinds.length}: ${kinds.map((k) => `\`${k}\``).join(", ")}`,
          hint: "Split it into one step per kind.",
        };
      if (kinds.length === 0) {
        const unknown = keys.filter((k) => !["id", "name", "timeout", "when", "continueOnError"].includes(k));
        const near = unknown.map((k) => suggest(k, STEP_KINDS)).find((s) => s);
        if (near) return undefined; // the additionalProperties finding already says "did you mean"
        return {
          path: e.path,
          message: "this step has no kind",
          hint: `Add one of: ${STEP_KINDS.join(", ")}, or a plugin's step kind (kebab-case with a hyphen).`,
        };
      }
      return { ...base, message: `${field} matches more than one form` };
    }
    case "anyOf": {
      if (isDuration(e, data, root)) {
        return {
          path: e.path,
          message: `expected a duration like 30s or 10m, got ${show(value)}`,
          hint: "Durations are 500ms, 2s, 10m, 12h, 1d, or a number of seconds.",
        };
      }
      const alts = (own?.anyOf as Json[] | undefined) ?? [];
      const forms = alts
        .map((a) =>
          a.enum
            ? `one of ${(a.enum as unknown[]).map((x) => `\`${String(x)}\``).join(", ")}`
            : a.type
              ? article(String(a.type as string))
              : "another form",
        )
        .join(", or ");
      return { ...base, message: `${field}: expected ${forms}; got ${show(value)}` };
    }
    case "type": {
      const t = (e.params as { type: string | string[] }).type;
      const types = Array.isArray(t) ? t : [t];
      return {
        ...base,
        message: `${field}: expected ${types.map(article).join(" or ")}, got ${jsType(value)}${typeof value === "object" ? "" : ` ${show(value)}`}`,
      };
    }
    case "enum": {
      const allowed = ((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String);
      const near = typeof value === "string" ? suggest(value, allowed) : undefined;
      return {
        ...base,
        message: `${field}: expected one of ${allowed.map((a) => `\`${a}\``).join(", ")}, got ${show(value)}${near ? `; did you mean \`${near}\`?` : ""}`,
      };
    }
    case "const": {
      const allowed = (e.params as { allowedValue: unknown }).allowedValue;
      return { ...base, message: `${field}: expected ${show(allowed)}, got ${show(value)}` };
    }
    case "pattern": {
      if (e.schemaPath.includes("/propertyNames/")) return undefined; // told by the propertyNames error
      const what = firstSentence(own?.description);
      if (root.defs.url !== undefined && (own === root.defs.url || e.schemaPath.startsWith("#/$defs/url/")))
        return {
          path: e.path,
          message: `${field}: expected an http(s) URL like http://127.0.0.1:27182, got ${show(value)}`,
          hint: "An instance or verifier URL: scheme http or https, host and port.",
        };
      return {
        ...base,
        message: `${field}: ${show(value)} is not of the expected form${what ? ` (${what.replace(/\.$/, "")})` : ""}`,
      };
    }
    case "propertyNames": {
      const name = String((e.params as { propertyName: string }).propertyName);
      return {
        path: [...e.path, name],
        atKey: true,
        message: `\`${name}\` is not a valid name here`,
        hint: "Names are letters, digits and underscores, not starting with a digit.",
      };
    }
    case "minItems":
    case "minProperties":
    case "minLength":
      return { ...base, message: `${field} must not be empty` };
    case "maxItems": {
      const limit = (e.params as { limit: number }).limit;
      const why = typeof own?.description === "string" ? /At most \d+: ([^.]*)/.exec(own.description)?.[1] : undefined;
      return {
        ...base,
        message: `${field} lists ${Array.isArray(value) ? value.length : "too many"} items, at most ${limit}${why ? `: ${why}` : ""}`,
        // the only list with a limit: the fleet (a sharded source runs one instance per shard, or one through mongos)
        ...(e.path.length === 1 && e.path[0] === "instances"
          ? { hint: "A sharded source can also run one instance connected through mongos instead of one per shard." }
          : {}),
      };
    }
    case "uniqueItems":
      return { ...base, message: `${field} lists the same value twice` };
    default:
      return { ...base, message: `${field} ${e.message ?? "is invalid"}` };
  }
}
