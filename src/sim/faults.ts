/**
 * Fault specs: what can go wrong, parsed from a CLI string or given as an object.
 *
 *   kind[=value][,after=DUR][,for=DUR][@scope[/endpoint]]
 *
 * kinds (value meaning, default):
 *   progress-down-after-resume[=DUR]  progress fails for DUR simulated seconds after each resume,
 *                                     restart (down→up) or live upgrade (default 120s: the spec's
 *                                     "at least two minutes")
 *   latency=DUR                       every answer is delayed by DUR of WALL time (network)
 *   http500[=RATE]                    that fraction of requests answer 500 (command not applied)
 *   non-json[=RATE]                   that fraction answer a body that is not JSON (not applied)
 *   reset[=RATE]                      that fraction lose the connection before being handled
 *   reset-after[=RATE]                that fraction are handled, then the connection is dropped
 *                                     before the answer (did my commit take effect?)
 *   down=INDEX                        the instance is down (connections refused) from `after`
 *                                     for `for` (default: from now, until `up`)
 *   lag-floor=SECONDS                 lagTimeSeconds never drops below SECONDS while RUNNING
 *   commit-refused[=INDEX]            commit answers success:false on that instance
 *   live-upgrade[=FRACTION]           the instance is upgraded live when its copy reaches
 *                                     FRACTION (default 0.5; at once if already past it): copy
 *                                     progress restarts from 0 of 1 (spec progress rule 4)
 *   verifier-error[=MESSAGE]          the verifier reports a non-null `error` and stops
 * options: after=DUR (simulated seconds after the fleet's first accepted start, or after the
 *   fault is added if the sync had already started; absent = active at once), for=DUR.
 *   live-upgrade ignores them: it happens once per instance, at its copy fraction.
 * scope: `@verifier`, `@*` (every instance), `@1`, `@0,2`, `@0-3`; absent = every instance and,
 *   for latency/http500/non-json/reset/reset-after, the verifier too. `/endpoint` limits
 *   transport faults to one endpoint: start, commit, pause, resume, reverse, progress, check,
 *   writesOff. The /sim/ control API is never faulted. Durations: `120s`, `50ms`, `2m`, or a
 *   number of seconds. Rates are drawn from a PRNG seeded by the simulator's `seed`.
 */
import { parseSeconds } from "./units.js";

export const FAULT_KINDS = [
  "progress-down-after-resume",
  "latency",
  "http500",
  "non-json",
  "reset",
  "reset-after",
  "down",
  "lag-floor",
  "commit-refused",
  "live-upgrade",
  "verifier-error",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Transport faults: they act in the HTTP layer, before or after the request is handled. */
export const TRANSPORT_FAULTS: readonly FaultKind[] = ["latency", "http500", "non-json", "reset", "reset-after"];

export const ENDPOINTS = ["start", "commit", "pause", "resume", "reverse", "progress", "check", "writesOff"] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export interface FaultSpec {
  kind: FaultKind;
  /** Rate (0..1), seconds, instance index or copy fraction, depending on the kind. */
  value?: number;
  /** verifier-error: the error text. */
  message?: string;
  /** Instances it applies to; absent = every instance. */
  instances?: number[];
  /** Applies to the verifier (transport faults, verifier-error). */
  verifier?: boolean;
  /** Applies to the instances (default true unless the scope named only the verifier). */
  instancesToo?: boolean;
  /** Limits a transport fault to one endpoint. */
  endpoint?: Endpoint;
  /** Simulated seconds after the fleet's first accepted start (or after being added). */
  after?: number;
  /** Simulated seconds the fault lasts. */
  for?: number;
}

/** A fault in force: the spec, its id (for DELETE /sim/faults/:id) and its window. */
export interface ActiveFault extends FaultSpec {
  id: number;
  /** The spec as text, for listings. */
  text: string;
  /** Simulated time it starts (null: waits for the fleet's first start). */
  from: number | null;
  /** Simulated time it ends (Infinity: never). */
  until: number;
}

const fail = (text: string, why: string): never => {
  throw new RangeError(`invalid fault "${text}": ${why}`);
};

function parseRate(text: string, v: string | undefined): number {
  if (v === undefined) return 1;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1)
    fail(text, `rate must be a number from 0 to 1, got "${v}"`);
  return n;
}

function parseIndex(text: string, v: string): number {
  if (!/^\d{1,6}$/.test(v)) fail(text, `expected an instance index, got "${v}"`);
  return Number(v);
}

function parseDur(text: string, v: string | undefined, what: string): number {
  if (v === undefined) return fail(text, `${what} needs a duration (e.g. 120s, 50ms)`);
  try {
    return parseSeconds(v);
  } catch {
    return fail(text, `${what}: invalid duration "${v}" (e.g. 120s, 50ms, 2m)`);
  }
}

function parseScope(text: string, scope: string, spec: FaultSpec): void {
  const [who, endpoint, extra] = scope.split("/");
  if (extra !== undefined) fail(text, "scope has more than one '/'");
  if (endpoint !== undefined) {
    if (!(ENDPOINTS as readonly string[]).includes(endpoint))
      fail(text, `unknown endpoint "${endpoint}" (one of ${ENDPOINTS.join(", ")})`);
    spec.endpoint = endpoint as Endpoint;
  }
  if (who === undefined || who === "" || who === "all") {
    spec.verifier = true;
    spec.instancesToo = true;
  } else if (who === "verifier") {
    spec.verifier = true;
    spec.instancesToo = false;
  } else if (who === "*" || who === "instances") {
    spec.verifier = false;
    spec.instancesToo = true;
  } else {
    const list: number[] = [];
    for (const part of who.split(",")) {
      const range = /^(\d{1,6})-(\d{1,6})$/.exec(part);
      if (range) {
        const a = Number(range[1]);
        const b = Number(range[2]);
        if (b < a || b - a > 100_000) fail(text, `bad range "${part}"`);
        for (let i = a; i <= b; i++) list.push(i);
      } else list.push(parseIndex(text, part));
    }
    spec.instances = [...new Set(list)].sort((x, y) => x - y);
    spec.verifier = false;
    spec.instancesToo = true;
  }
}

/** Parses `http500=0.2@1/progress` and the like. Throws a RangeError saying what is wrong. */
export function parseFault(text: string): FaultSpec {
  if (typeof text !== "string" || text.trim() === "") return fail(String(text), "empty");
  if (text.length > 1000) return fail(text.slice(0, 40) + "…", "too long");
  const at = text.indexOf("@");
  const head = at >= 0 ? text.slice(0, at) : text;
  const scope = at >= 0 ? text.slice(at + 1) : undefined;
  const kindMessage = head.startsWith("verifier-error=");
  // verifier-error's message may contain commas; it takes the rest of the head.
  const parts = kindMessage ? [head] : head.split(",");
  const first = parts[0]!.trim();
  const eq = first.indexOf("=");
  const kind = (eq >= 0 ? first.slice(0, eq) : first).trim();
  const value = eq >= 0 ? first.slice(eq + 1).trim() : undefined;
  if (!(FAULT_KINDS as readonly string[]).includes(kind))
    return fail(text, `unknown kind "${kind}" (one of ${FAULT_KINDS.join(", ")})`);
  const spec: FaultSpec = { kind: kind as FaultKind };
  for (const opt of parts.slice(1)) {
    const [k, v, more] = opt.split("=").map((s) => s.trim());
    if (more !== undefined) fail(text, `bad option "${opt}"`);
    if (k === "after") spec.after = parseDur(text, v, "after");
    else if (k === "for") spec.for = parseDur(text, v, "for");
    else fail(text, `unknown option "${k}" (after, for)`);
  }
  switch (spec.kind) {
    case "progress-down-after-resume":
      spec.value = value === undefined ? 120 : parseDur(text, value, kind);
      break;
    case "latency":
      spec.value = parseDur(text, value, kind);
      break;
    case "lag-floor":
      spec.value = parseDur(text, value, kind);
      break;
    case "http500":
    case "non-json":
    case "reset":
    case "reset-after":
      spec.value = parseRate(text, value);
      break;
    case "down":
    case "commit-refused":
      if (value !== undefined) spec.instances = [parseIndex(text, value)];
      break;
    case "live-upgrade": {
      const f = value === undefined ? 0.5 : Number(value);
      if (!Number.isFinite(f) || f < 0 || f > 1) fail(text, `copy fraction must be from 0 to 1, got "${value}"`);
      spec.value = f;
      break;
    }
    case "verifier-error":
      spec.message = value && value.length > 0 ? value : "simulated verifier failure";
      break;
  }
  if (scope !== undefined) {
    if (spec.instances && (spec.kind === "down" || spec.kind === "commit-refused"))
      fail(text, "give the instance either as the value or as the scope, not both");
    parseScope(text, scope, spec);
  }
  return normalizeFault(spec, text);
}

/** Checks an object spec (from POST /sim/faults or the library) and fills in defaults. */
export function normalizeFault(input: FaultSpec, text: string = String(input?.kind)): FaultSpec {
  if (typeof input !== "object" || input === null) return fail(String(text), "not an object");
  const spec: FaultSpec = { ...input };
  if (!(FAULT_KINDS as readonly string[]).includes(spec.kind))
    return fail(String(text), `unknown kind "${String(spec.kind)}"`);
  const transport = TRANSPORT_FAULTS.includes(spec.kind);
  if (spec.endpoint !== undefined && !(ENDPOINTS as readonly string[]).includes(spec.endpoint))
    fail(text, `unknown endpoint "${String(spec.endpoint)}"`);
  if (spec.endpoint !== undefined && !transport) fail(text, `/endpoint only applies to ${TRANSPORT_FAULTS.join(", ")}`);
  if (
    spec.instances !== undefined &&
    (!Array.isArray(spec.instances) || !spec.instances.every((i) => Number.isInteger(i) && i >= 0))
  )
    fail(text, "instances must be indexes");
  for (const k of ["after", "for"] as const) {
    const v = spec[k];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < 0))
      fail(text, `${k} must be a number of seconds ≥ 0`);
  }
  if (spec.value !== undefined && (typeof spec.value !== "number" || !Number.isFinite(spec.value) || spec.value < 0))
    fail(text, "value must be a number ≥ 0");
  if (["http500", "non-json", "reset", "reset-after"].includes(spec.kind)) {
    spec.value ??= 1;
    if (spec.value > 1) fail(text, "rate must be from 0 to 1");
  }
  if (spec.kind === "latency" || spec.kind === "lag-floor") {
    if (spec.value === undefined) fail(text, `${spec.kind} needs a value`);
  }
  if (spec.kind === "latency" && spec.value! > 60) fail(text, "latency above 60 s is not useful");
  if (spec.kind === "progress-down-after-resume") spec.value ??= 120;
  if (spec.kind === "live-upgrade") {
    spec.value ??= 0.5;
    if (spec.value > 1) fail(text, "copy fraction must be from 0 to 1");
  }
  if (spec.kind === "verifier-error") {
    spec.message = typeof spec.message === "string" && spec.message ? spec.message : "simulated verifier failure";
    spec.verifier = true;
    spec.instancesToo = false;
  } else if (spec.verifier === undefined && spec.instancesToo === undefined) {
    // No scope: every instance, and the verifier too for transport faults.
    spec.instancesToo = true;
    spec.verifier = transport && spec.instances === undefined;
  }
  spec.instancesToo ??= true;
  spec.verifier ??= false;
  if (spec.verifier && !transport && spec.kind !== "verifier-error")
    fail(text, `${spec.kind} does not apply to the verifier`);
  return spec;
}

/** The fault as text (inverse of parseFault, for listings). */
export function formatFault(spec: FaultSpec): string {
  let s: string = spec.kind;
  if (spec.kind === "verifier-error") s += `=${spec.message}`;
  else if (spec.value !== undefined)
    s += `=${spec.kind === "latency" ? `${Math.round(spec.value * 1000)}ms` : spec.value}`;
  if (spec.after !== undefined) s += `,after=${spec.after}s`;
  if (spec.for !== undefined) s += `,for=${spec.for}s`;
  const who = spec.instances
    ? spec.instances.join(",")
    : spec.verifier && spec.instancesToo
      ? ""
      : spec.verifier
        ? "verifier"
        : "*";
  if (who || spec.endpoint) s += `@${who || "all"}${spec.endpoint ? `/${spec.endpoint}` : ""}`;
  return s;
}

/** Does this fault apply to this target (instance index, or "verifier") and endpoint at time t? */
export function faultApplies(
  f: ActiveFault,
  target: number | "verifier",
  endpoint: string | undefined,
  t: number,
): boolean {
  if (f.from === null || t < f.from || t >= f.until) return false;
  if (f.endpoint !== undefined && f.endpoint !== endpoint) return false;
  if (target === "verifier") return f.verifier === true;
  if (!f.instancesToo) return false;
  return f.instances === undefined || f.instances.includes(target);
}
