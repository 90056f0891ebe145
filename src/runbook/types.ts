/**
 * Domain types of the runbook format, derived from the generated schema types
 * (`schema.gen.ts`, made from schemas/runbook.schema.json by scripts/gen.mjs).
 * Only the "exactly one kind key per step" rule is added here, because JSON Schema says it
 * with `oneOf`/`required`, which carries no shape for a type generator.
 */
import type {
  Step as SchemaStep,
  SyncbookRunbook,
  StartRequest,
  FilterEntry,
  Expectation,
  Cluster,
} from "./schema.gen.js";

export type { StartRequest, FilterEntry, Expectation, Cluster };
/** A duration as written: `500ms`, `2s`, `10m`, `12h`, or a number of seconds. */
export type Duration = NonNullable<SchemaStep["timeout"]>;

/** The kinds of step, in the schema's order. A test checks this list against the schema. */
export const STEP_KINDS = [
  "preflight",
  "start",
  "waitFor",
  "startVerification",
  "verify",
  "stopWrites",
  "commit",
  "assert",
  "confirm",
  "notify",
  "hook",
  "sleep",
  "pause",
  "resume",
  "reverse",
] as const satisfies readonly (keyof SchemaStep)[];

export type StepKind = (typeof STEP_KINDS)[number];
export type StepCommon = Omit<SchemaStep, StepKind>;

/** A step: the common fields plus exactly one kind key. */
export type Step = {
  [K in StepKind]: StepCommon & { [P in K]: SchemaStep[K] } & { [Q in Exclude<StepKind, K>]?: never };
}[StepKind];

export type WaitForBody = NonNullable<SchemaStep["waitFor"]>;
export type AssertBody = NonNullable<SchemaStep["assert"]>;
export type HookCall = NonNullable<SchemaStep["hook"]>;
export type VerifyBody = SchemaStep["verify"];
export type StartVerificationBody = SchemaStep["startVerification"];
export type NotifyBody = NonNullable<SchemaStep["notify"]>;
export type ConfirmBody = NonNullable<SchemaStep["confirm"]>;
export type PreflightBody = NonNullable<SchemaStep["preflight"]>;

export type Runbook = Omit<SyncbookRunbook, "steps"> & { steps: Step[] };
export type InstanceEntry = Runbook["instances"][number];

/** The runbook's instances as `{ url, name? }` (an entry may be a bare URL). */
export function instancesOf(runbook: Pick<Runbook, "instances">): { url: string; name?: string }[] {
  return runbook.instances.map((i) =>
    typeof i === "string" ? { url: i } : { url: i.url, ...(i.name !== undefined ? { name: i.name } : {}) },
  );
}

/**
 * A step kind added by a plugin is a key in kebab-case with at least one hyphen
 * (`drain-traffic`): never the spelling of a built-in kind (those are camelCase words), so a
 * misspelt built-in (`comit`) is still an unknown field with a "did you mean", not a plugin step.
 */
export const PLUGIN_STEP_KIND = /^[a-z][a-z0-9]*(-[a-z0-9]+)+$/;

/** The plugin step kind of a step, if it is one. */
export function pluginStepKind(step: Step): string | undefined {
  return Object.keys(step).find((k) => PLUGIN_STEP_KIND.test(k));
}

/** The kind key of a step (exactly one exists once the schema has validated it); `plugin` for a plugin's step kind. */
export function stepKind(step: Step): StepKind | "plugin" {
  for (const k of STEP_KINDS) if (k in step) return k;
  if (pluginStepKind(step)) return "plugin";
  throw new Error("step without a kind key (schema validation should have caught this)");
}
