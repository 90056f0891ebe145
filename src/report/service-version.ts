/**
 * The service version a run saw. The service does not report its version, but its progress
 * answers carry fields by version (spec/service-facts.md, "Progress fields, by version"): a field
 * present means at least its version; a field absent from an answer outside IDLE/INITIALIZING
 * (where the service sends every field, null) means older than its version, unless a real answer
 * of that version may lack it: the service omits it where it does not apply (facts: "an absent
 * field is not evidence of an older service"; the table's `omitted` rows), or a documentation
 * example of that version lacks it (facts: "The documentation's example progress answers are
 * examples of real answers"; the table's `examplesLack` rows): those only ever raise the floor.
 *
 * Read from the runner's one table of the service by version (src/api/versions.ts).
 */
import { OLDEST_VERSION, PROGRESS_FIELDS, STATES, atLeast, mayBeAbsent } from "../api/versions.js";

/**
 * Fields inside `progress` (dotted below an object) with the version that introduced them (the
 * runner's table), and whether a real answer of that version may lack them (omitted where they do
 * not apply, or missing from a documentation example: the 1.22 example has no `mongosyncID`).
 */
const FIELD_SINCE: readonly (readonly [field: string, since: string, mayLack: boolean])[] = PROGRESS_FIELDS.filter(
  (r) => !r.topLevel && !atLeast(OLDEST_VERSION, r.since),
).flatMap((r) => r.fields.map((f) => [f, r.since, mayBeAbsent(r)] as const));

/** Whether the answer has the (dotted) field. */
function has(p: Record<string, unknown>, field: string): boolean {
  let at: unknown = p;
  for (const k of field.split(".")) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, k)) return false;
    at = (at as Record<string, unknown>)[k];
  }
  return true;
}

/** States that came with a version (the runner's table). */
const STATE_SINCE: ReadonlyMap<string, string> = new Map(
  STATES.flatMap((r) => (r.since === undefined ? [] : [[r.state, r.since] as const])),
);

export interface ServiceVersionSeen {
  /** The lowest version the answers allow, and the field (or state) that says so. */
  atLeast?: { version: string; because: string };
  /** The version the answers are older than, and the missing field that says so. */
  below?: { version: string; because: string };
  /** Answers read (outside IDLE/INITIALIZING, for `below`). */
  answers: number;
}

/** Folds progress answers into the range of versions they fit. */
export class ServiceVersionReader {
  #atLeast: ServiceVersionSeen["atLeast"];
  #below: ServiceVersionSeen["below"];
  #answers = 0;

  add(progress: unknown): void {
    if (progress === null || typeof progress !== "object" || Array.isArray(progress)) return;
    const p = progress as Record<string, unknown>;
    this.#answers++;
    const raise = (version: string, because: string): void => {
      if (!this.#atLeast || !atLeast(this.#atLeast.version, version)) this.#atLeast = { version, because };
    };
    for (const [field, since] of FIELD_SINCE) if (has(p, field)) raise(since, `\`${field}\` in progress`);
    const state = typeof p.state === "string" ? p.state : undefined;
    const stateSince = state === undefined ? undefined : STATE_SINCE.get(state);
    if (state && stateSince) raise(stateSince, `state ${state}`);
    if (state === undefined || state === "IDLE" || state === "INITIALIZING") return;
    for (const [field, since, mayLack] of FIELD_SINCE) {
      if (mayLack || has(p, field)) continue;
      if (!this.#below || !atLeast(since, this.#below.version))
        this.#below = { version: since, because: `no \`${field}\` in progress` };
    }
  }

  seen(): ServiceVersionSeen {
    return {
      ...(this.#atLeast ? { atLeast: this.#atLeast } : {}),
      ...(this.#below ? { below: this.#below } : {}),
      answers: this.#answers,
    };
  }
}

/** `1.9 or later, before 1.14`, `1.22 or later`, or undefined when nothing was seen. */
export function describeVersionSeen(v: ServiceVersionSeen | undefined): string | undefined {
  if (!v || v.answers === 0) return undefined;
  const lo = v.atLeast ? `${v.atLeast.version} or later (${v.atLeast.because})` : "";
  const hi = v.below ? `before ${v.below.version} (${v.below.because})` : "";
  return [lo, hi].filter(Boolean).join(", ") || "any (the answers carry no versioned field)";
}

/** Whether a declared version (the runbook's `serviceVersion`) fits what was seen; a reason when not. */
export function declaredMismatch(declared: string | undefined, v: ServiceVersionSeen | undefined): string | undefined {
  if (!declared || !v) return undefined;
  if (v.below && atLeast(declared, v.below.version))
    return `the runbook declares serviceVersion ${declared}, but the answers are of a service before ${v.below.version} (${v.below.because})`;
  return undefined;
}
