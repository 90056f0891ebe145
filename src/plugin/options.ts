/**
 * Checking a plugin call's options (`with:`) against the plugin's JSON Schema with ajv.
 * ajv is imported and each schema compiled only when a runbook uses a plugin, once per schema
 * object per process (the start-up budget counts every module `syncbook lint` loads).
 */
import { suggest } from "../suggest.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { JsonSchema } from "./api.js";
import { OPTION_AJV_OPTIONS, OPTION_FORMATS } from "./formats.js";
import { schemaKey } from "./schema-key.js";

export interface OptionProblem {
  /** Path inside `with:` (e.g. `["headers", "Authorization"]`); empty for the whole object. */
  path: (string | number)[];
  message: string;
  hint?: string;
  /** Point at the key rather than the value (an unknown option). */
  key?: boolean;
}

export type OptionsCheck = { ok: true; value: Record<string, unknown> } | { ok: false; problems: OptionProblem[] };

type Compiler = (schema: JsonSchema) => ValidateFunction;
let compiler: Promise<Compiler> | undefined;
const compiled = new WeakMap<object, ValidateFunction | Error>();

async function getCompiler(): Promise<Compiler> {
  compiler ??= (async () => {
    // the named export under Node's CommonJS interop; only `default` once bundled (dist/cli)
    const ajvModule = await import("ajv/dist/2020.js");
    const Ajv2020 = ajvModule.Ajv2020 ?? ajvModule.default;
    // strict: false — a plugin's schema may carry editor keywords (markdownDescription…);
    // unknown formats are then ignored, silently (logger: false). meta/validateSchema: false —
    // compiling the 2020-12 meta-schemas costs ~30 ms of `syncbook lint`'s start-up; a broken
    // plugin schema still fails to compile and is reported as the plugin's fault.
    const ajv = new Ajv2020({ ...OPTION_AJV_OPTIONS });
    for (const [name, f] of Object.entries(OPTION_FORMATS)) ajv.addFormat(name, f);
    return (schema) => ajv.compile(schema as object);
  })();
  return compiler;
}

/**
 * The validator of a schema: the built-in plugins' are compiled at build time
 * (builtin-validators.gen.ts, the same ajv options), any other is compiled now, once.
 */
async function validatorFor(schema: object): Promise<ValidateFunction | Error> {
  const known = compiled.get(schema);
  if (known) return known;
  let validate: ValidateFunction | Error | undefined;
  const key = schemaKey(schema);
  const load = (await import("./builtin-validators.gen.js").catch(() => undefined))?.BUILTIN_VALIDATORS.get(key);
  if (load) {
    const built = (await load().catch(() => undefined))?.VALIDATORS.get(key) as
      { validate: ValidateFunction; json: string } | undefined;
    // the key is a short hash: use the built validator only for the very schema it was built from
    if (built && built.json === JSON.stringify(schema)) validate = built.validate;
  }
  if (!validate) {
    try {
      validate = (await getCompiler())(schema as JsonSchema);
    } catch (err) {
      validate = err instanceof Error ? err : new Error(String(err));
    }
  }
  compiled.set(schema, validate);
  return validate;
}

/** Top-level property names of a schema (for "did you mean"). */
function propertyNames(schema: unknown): string[] {
  if (
    schema &&
    typeof schema === "object" &&
    "properties" in schema &&
    schema.properties &&
    typeof schema.properties === "object"
  )
    return Object.keys(schema.properties);
  return [];
}

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

function show(path: readonly (string | number)[]): string {
  return path.length === 0
    ? "options"
    : `option \`${path
        .map((p) => (typeof p === "number" ? `[${p}]` : p))
        .join(".")
        .replace(/\.\[/g, "[")}\``;
}

/** ajv errors → one problem per place, readable, with "did you mean" for unknown options. */
export function describeErrors(errors: readonly ErrorObject[]): OptionProblem[] {
  const byPlace = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const extra =
      e.keyword === "additionalProperties"
        ? `/${String((e.params as { additionalProperty: string }).additionalProperty)}`
        : e.keyword === "required"
          ? `/${String((e.params as { missingProperty: string }).missingProperty)}`
          : "";
    const k = `${e.instancePath}${extra}|${e.keyword === "additionalProperties" || e.keyword === "required" ? e.keyword : ""}`;
    byPlace.set(k, [...(byPlace.get(k) ?? []), e]);
  }
  const out: OptionProblem[] = [];
  for (const group of byPlace.values()) {
    const first = group[0] as ErrorObject;
    const path = pointerToPath(first.instancePath);
    if (first.keyword === "additionalProperties") {
      const name = String((first.params as { additionalProperty: string }).additionalProperty);
      const known = propertyNames(first.parentSchema);
      const near = suggest(name, known);
      out.push({
        path: [...path, name],
        key: true,
        message: `unknown ${show([...path, name])}${near ? `; did you mean \`${near}\`?` : ""}`,
        hint: known.length ? `Known options here: ${known.join(", ")}.` : "Remove it.",
      });
    } else if (first.keyword === "required") {
      const name = String((first.params as { missingProperty: string }).missingProperty);
      const sub = (first.parentSchema as { properties?: Record<string, { description?: string }> } | undefined)
        ?.properties?.[name]?.description;
      out.push({
        path,
        message: `missing required ${show([...path, name])}`,
        hint: sub ? `\`${name}\`: ${sub}` : `Add \`${name}\`.`,
      });
    } else if (first.keyword === "enum" && group.length === 1) {
      const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues ?? [];
      const words = allowed.filter((v): v is string => typeof v === "string");
      const near = typeof first.data === "string" ? suggest(first.data, words) : undefined;
      const desc = (first.parentSchema as { description?: string } | undefined)?.description;
      out.push({
        path,
        message: `${show(path)}: expected one of ${allowed.map((a) => `\`${typeof a === "string" ? a : JSON.stringify(a)}\``).join(", ")}, got ${JSON.stringify(first.data) ?? "nothing"}${near ? `; did you mean \`${near}\`?` : ""}`,
        ...(desc ? { hint: desc } : {}),
      });
    } else {
      // anyOf / oneOf: one message for the place, listing what each branch wanted
      const branches = group
        .filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf")
        .map((e) => e.message ?? e.keyword);
      // the failing option's own description tells what it wants (e.g. "an argv list, never a shell string")
      const desc = (
        (group.find((e) => e.keyword === "anyOf" || e.keyword === "oneOf") ?? first).parentSchema as
          { description?: string } | undefined
      )?.description;
      const text = [...new Set(branches)].join(", or ");
      out.push({
        path,
        message: `${show(path)} ${text || (first.message ?? "is invalid")}`,
        ...(desc ? { hint: desc } : {}),
      });
    }
  }
  return out;
}

/**
 * Checks options against a schema. Returns a copy with the schema's defaults filled in, or the
 * problems. A schema that does not compile is one problem naming the plugin's fault.
 */
export async function checkOptions(schema: JsonSchema | undefined, options: unknown): Promise<OptionsCheck> {
  const value = options === undefined ? {} : structuredClone(options);
  if (schema === undefined || schema === true)
    return isRecord(value)
      ? { ok: true, value }
      : { ok: false, problems: [{ path: [], message: "options must be a mapping" }] };
  if (schema === false) return { ok: false, problems: [{ path: [], message: "this plugin accepts no options" }] };
  const validate = await validatorFor(schema);
  if (validate instanceof Error)
    return {
      ok: false,
      problems: [
        {
          path: [],
          message: `the plugin's optionsSchema is not a valid JSON Schema: ${validate.message}`,
          hint: "This is a bug in the plugin: tell its author.",
        },
      ],
    };
  if (!validate(value)) return { ok: false, problems: describeErrors(validate.errors ?? []) };
  return isRecord(value)
    ? { ok: true, value }
    : { ok: false, problems: [{ path: [], message: "options must be a mapping" }] };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
