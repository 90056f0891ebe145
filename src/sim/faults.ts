/**
 * Fault specs: what can go wrong, parsed from a CLI string or given as an object.
 *
 *   kind[=value][,after=DUR][,for=DUR][,on=COMMAND][@scope[/endpoint]]
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
 *                                     progress restarts from 0 of 1 (spec progress rule 4).
 *                                     Refused except on 1.13 and 1.18 (the published live upgrades)
 *   verifier-error[=MESSAGE]          the verifier's progress shows a non-null `error` and it
 *                                     stops (the contract allows it; the published verifier
 *                                     never does this: see README)
 * hostile-but-legal service faults (instances; /endpoint limits them to one command):
 *   drop-after-effect[=RATE]          the command is applied (or, for commit and reverse, joins
 *                                     the fleet's round), then the connection is destroyed at
 *                                     once, without an answer
 *   late-effect=DUR                   the same, and progress keeps showing the state from before
 *                                     the command for DUR simulated seconds
 *   identity-change[=coordinator|direction]
 *                                     from `after` (or from the instance's accepting command
 *                                     `on=`), progress reports another fleet's coordinatorID, or
 *                                     the opposite directionMapping
 *   huge-progress=SIZE                progress answers carry an unknown field of SIZE bytes
 *                                     (`5MiB`; also @verifier)
 *   negative-lag[=SECONDS]            lagTimeSeconds (and lag.overallLagSeconds) is -SECONDS while
 *                                     RUNNING (default 5)
 *   insufficient-disk-space           start answers InsufficientDestinationDiskSpace (service
 *                                     1.22+, unless the body has skipDiskSpaceCheck: true)
 * the migration verifier (published source):
 *   writes-off-slow=DUR               writesOff holds the verifier's one-request lock DUR of WALL
 *                                     time before answering (longer than a client's timeout)
 *   writes-off-refused[=MESSAGE]      writesOff answers HTTP 200 {"error": "failed to fetch
 *                                     source's cluster time: MESSAGE"}; it is set all the same
 *   verifier-progress-error[=MESSAGE] progress answers HTTP 200 {"error": MESSAGE}
 *   verifier-exit[=MESSAGE]           the verifier process exits (connections refused from then)
 * options: after=DUR (simulated seconds after the fleet's first accepted start, or after the
 *   fault is added if the sync had already started; absent = active at once), for=DUR,
 *   on=COMMAND (identity-change only: from the instance's accepting start, commit, pause,
 *   resume or reverse). live-upgrade ignores them: it happens once per instance, at its copy
 *   fraction. A MESSAGE takes the rest of the spec up to `@` (commas included, so no options).
 * scope: `@verifier`, `@*` (every instance), `@1`, `@0,2`, `@0-3`; absent = every instance and,
 *   for latency/http500/non-json/reset/reset-after, the verifier too. `/endpoint` limits
 *   transport faults to one endpoint: start, commit, pause, resume, reverse, progress, check,
 *   writesOff. The /sim/ control API is never faulted. Durations: `120s`, `50ms`, `2m`, or a
 *   number of seconds. Rates are drawn from a PRNG seeded by the simulator's `seed`.
 */
import { parseBytes, parseSeconds } from "./units.js";

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
  "drop-after-effect",
  "late-effect",
  "identity-change",
  "huge-progress",
  "negative-lag",
  "insufficient-disk-space",
  "writes-off-slow",
  "writes-off-refused",
  "verifier-progress-error",
  "verifier-exit",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Transport faults: they act in the HTTP layer, before or after the request is handled. */
export const TRANSPORT_FAULTS: readonly FaultKind[] = ["latency", "http500", "non-json", "reset", "reset-after"];
/** Faults that act on one command's answer: they take a /endpoint among the commands. */
export const COMMAND_FAULTS: readonly FaultKind[] = ["drop-after-effect", "late-effect"];
/** Faults of the verifier alone. */
export const VERIFIER_FAULTS: readonly FaultKind[] = [
  "verifier-error",
  "writes-off-slow",
  "writes-off-refused",
  "verifier-progress-error",
  "verifier-exit",
];
/** Faults whose value is a text (it takes the rest of the spec, commas included). */
const MESSAGE_FAULTS: readonly FaultKind[] = [
  "verifier-error",
  "writes-off-refused",
  "verifier-progress-error",
  "verifier-exit",
];

export const ENDPOINTS = ["start", "commit", "pause", "resume", "reverse", "progress", "check", "writesOff"] as const;
export type Endpoint = (typeof ENDPOINTS)[number];
export const COMMANDS = ["start", "commit", "pause", "resume", "reverse"] as const;
export type CommandName = (typeof COMMANDS)[number];

const DEFAULT_MESSAGES: Partial<Record<FaultKind, string>> = {
  "verifier-error": "simulated verifier failure",
  "writes-off-refused": "connection(127.0.0.1:27017) socket was unexpectedly closed: EOF",
  "verifier-progress-error": "failed to count generation 0's tasks by status: server selection timeout",
  "verifier-exit": "simulated exit",
};

export interface FaultSpec {
  kind: FaultKind;
  /** Rate (0..1), seconds, instance index, copy fraction or bytes, depending on the kind. */
  value?: number;
  /** The text of verifier-error, writes-off-refused, verifier-progress-error, verifier-exit; identity-change's mode. */
  message?: string;
  /** Instances it applies to; absent = every instance. */
  instances?: number[];
  /** Applies to the verifier (transport faults, verifier faults, huge-progress@verifier). */
  verifier?: boolean;
  /** Applies to the instances (default true unless the scope named only the verifier). */
  instancesToo?: boolean;
  /** Limits a transport or command fault to one endpoint. */
  endpoint?: Endpoint;
  /** Simulated seconds after the fleet's first accepted start (or after being added). */
  after?: number;
  /** Simulated seconds the fault lasts. */
  for?: number;
  /** identity-change: starts when the instance accepts this command. */
  on?: CommandName;
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
  /** How many times it acted (a request it faulted, an answer it changed). */
  hits: number;
  /** identity-change with `on=`: the instances whose command has set it off (from then on). */
  triggered?: number[];
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
  // A message may contain commas; it takes the rest of the head.
  const kindMessage = MESSAGE_FAULTS.some((k) => head.startsWith(`${k}=`));
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
    else if (k === "on") {
      if (!(COMMANDS as readonly string[]).includes(v ?? ""))
        fail(text, `on= takes a command (${COMMANDS.join(", ")}), got "${v ?? ""}"`);
      spec.on = v as CommandName;
    } else fail(text, `unknown option "${k}" (after, for, on)`);
  }
  switch (spec.kind) {
    case "progress-down-after-resume":
      spec.value = value === undefined ? 120 : parseDur(text, value, kind);
      break;
    case "latency":
    case "lag-floor":
    case "late-effect":
    case "writes-off-slow":
      spec.value = parseDur(text, value, kind);
      break;
    case "negative-lag":
      spec.value = value === undefined ? 5 : parseDur(text, value, kind);
      break;
    case "http500":
    case "non-json":
    case "reset":
    case "reset-after":
    case "drop-after-effect":
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
    case "huge-progress":
      if (value === undefined) fail(text, "huge-progress needs a size (e.g. 5MiB)");
      try {
        spec.value = parseBytes(value!);
      } catch {
        fail(text, `invalid size "${value}" (e.g. 5MiB, 100kB)`);
      }
      break;
    case "identity-change":
      if (value !== undefined && value !== "coordinator" && value !== "direction")
        fail(text, `identity-change takes coordinator or direction, got "${value}"`);
      spec.message = value ?? "coordinator";
      break;
    case "insufficient-disk-space":
      if (value !== undefined) fail(text, "insufficient-disk-space takes no value");
      break;
    case "verifier-error":
    case "writes-off-refused":
    case "verifier-progress-error":
    case "verifier-exit":
      if (value !== undefined && value.length > 0) spec.message = value;
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
  const command = COMMAND_FAULTS.includes(spec.kind);
  const verifierOnly = VERIFIER_FAULTS.includes(spec.kind);
  if (spec.endpoint !== undefined && !(ENDPOINTS as readonly string[]).includes(spec.endpoint))
    fail(text, `unknown endpoint "${String(spec.endpoint)}"`);
  if (spec.endpoint !== undefined && !transport && !command)
    fail(text, `/endpoint only applies to ${[...TRANSPORT_FAULTS, ...COMMAND_FAULTS].join(", ")}`);
  if (spec.endpoint !== undefined && command && !(COMMANDS as readonly string[]).includes(spec.endpoint))
    fail(text, `${spec.kind} acts on a command: /endpoint is one of ${COMMANDS.join(", ")}`);
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
  if (spec.on !== undefined && spec.kind !== "identity-change") fail(text, "on= only applies to identity-change");
  if (spec.on !== undefined && !(COMMANDS as readonly string[]).includes(spec.on))
    fail(text, `on= takes a command (${COMMANDS.join(", ")})`);
  if (spec.value !== undefined && (typeof spec.value !== "number" || !Number.isFinite(spec.value) || spec.value < 0))
    fail(text, "value must be a number ≥ 0");
  if (["http500", "non-json", "reset", "reset-after", "drop-after-effect"].includes(spec.kind)) {
    spec.value ??= 1;
    if (spec.value > 1) fail(text, "rate must be from 0 to 1");
  }
  if (["latency", "lag-floor", "late-effect", "writes-off-slow", "huge-progress"].includes(spec.kind)) {
    if (spec.value === undefined) fail(text, `${spec.kind} needs a value`);
  }
  if ((spec.kind === "latency" || spec.kind === "writes-off-slow") && spec.value! > 600)
    fail(text, `${spec.kind} above 600 s is not useful`);
  if (spec.kind === "huge-progress" && spec.value! > 512 * 2 ** 20) fail(text, "huge-progress is at most 512MiB");
  if (spec.kind === "progress-down-after-resume") spec.value ??= 120;
  if (spec.kind === "negative-lag") spec.value ??= 5;
  if (spec.kind === "live-upgrade") {
    spec.value ??= 0.5;
    if (spec.value > 1) fail(text, "copy fraction must be from 0 to 1");
  }
  if (spec.kind === "identity-change") {
    spec.message ??= "coordinator";
    if (spec.message !== "coordinator" && spec.message !== "direction")
      fail(text, "identity-change takes coordinator or direction");
  }
  if (MESSAGE_FAULTS.includes(spec.kind))
    spec.message = typeof spec.message === "string" && spec.message ? spec.message : DEFAULT_MESSAGES[spec.kind];
  if (verifierOnly) {
    if (spec.instancesToo === true && spec.verifier !== true)
      fail(text, `${spec.kind} applies to the verifier only (@verifier)`);
    spec.verifier = true;
    spec.instancesToo = false;
    delete spec.instances;
  } else if (spec.verifier === undefined && spec.instancesToo === undefined) {
    // No scope: every instance, and the verifier too for transport faults.
    spec.instancesToo = true;
    spec.verifier = transport && spec.instances === undefined;
  }
  spec.instancesToo ??= true;
  spec.verifier ??= false;
  if (spec.verifier && !transport && !verifierOnly && spec.kind !== "huge-progress") {
    // `@all` on a fault of the instances means every instance
    if (spec.instancesToo) spec.verifier = false;
    else fail(text, `${spec.kind} does not apply to the verifier`);
  }
  return spec;
}

/** The fault as text (inverse of parseFault, for listings). */
export function formatFault(spec: FaultSpec): string {
  let s: string = spec.kind;
  if (spec.message !== undefined) s += `=${spec.message}`;
  else if (spec.value !== undefined)
    s += `=${spec.kind === "latency" || spec.kind === "writes-off-slow" ? `${Math.round(spec.value * 1000)}ms` : spec.value}`;
  if (spec.message === undefined || !MESSAGE_FAULTS.includes(spec.kind)) {
    if (spec.after !== undefined) s += `,after=${spec.after}s`;
    if (spec.for !== undefined) s += `,for=${spec.for}s`;
    if (spec.on !== undefined) s += `,on=${spec.on}`;
  }
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
  if (f.on !== undefined && !(f.triggered ?? []).includes(target)) return false;
  return f.instances === undefined || f.instances.includes(target);
}
