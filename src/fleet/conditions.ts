/**
 * The runbook's conditions (`waitFor`, `assert`), read once (`readCondition`) into one typed form
 * that the runner evaluates on each fleet snapshot (and, for the verifier shorthands and
 * `verifier.` paths, the verifier's progress), the plan titles with its `text`, and lint's state
 * model reads through its `model`. Pure: the runner polls, this only judges, and says who fails
 * what with which value (the operator always sees why a wait is not over). Timing fields
 * (pollInterval, slowAfter, timeout) are the step's.
 */
import type { ServiceError } from "../api/errors.js";
import { TransportError, type ApiError } from "../api/errors.js";
import { lagSeconds } from "../api/progress.js";
import { SYNC_STATES, type Progress, type SyncState, type VerifierProgress } from "../api/types.js";
import { instanceLabel } from "../events.js";
import { durationMs } from "../runbook/duration.js";
import type { AssertBody, Expectation, WaitForBody } from "../runbook/types.js";
import type { FleetSnapshot, InstanceSample } from "./fleet.js";

export type ConditionBody = WaitForBody | AssertBody;

/** A condition as the runner, the plan and lint use it. */
export interface Condition {
  on: "all" | "any" | "coordinator";
  /** As written, for titles and messages: `canCommit true, lagBelow 5 (on coordinator)`. */
  text: string;
  instance: Check<Progress>[];
  /**
   * The checks of `canWrite` (the shorthand, an `expect` path): read on the first process only,
   * whatever `on` says (the cutover page: the other processes' `canWrite` "is not valid").
   */
  canWrite: Check<Progress>[];
  /** The instance (index) whose canWrite is valid (src/runbook/can-write.ts); undefined: none declared. */
  canWriteFrom: number | undefined;
  verifier: VerifierCheck[];
  /** What lint's model of the fleet's states needs to know about it. */
  model: ConditionModel;
}

export interface ConditionModel {
  /** The states it accepts (undefined: any). */
  states?: SyncState[];
  canCommit?: boolean;
  info?: string;
  /** A field it needs that is null in IDLE. */
  needsProgress?: string;
  /** `lagBelow`, in seconds. */
  lagBelowSeconds?: number;
  /** It waits for the migration verifier to be `idle` (`phase: idle`, or `verifier.phase` equals idle). */
  verifierIdle?: boolean;
  /** What its verifier conditions need of an answer (the most any one needs): this cutover's check, or its result. */
  verifierNeeds?: VerifierNeed;
  /** Conditions on the embedded verifier (`verification`): the phase both sides must show, their lag limit. */
  embedded?: { phase?: string; lagBelowSeconds?: number };
}

export interface FailingCondition {
  /** Instance name or redacted URL; `verifier`; `coordinator` when it cannot be found. */
  instance: string;
  /** The condition as written, e.g. `lagBelow 5`, `state RUNNING|PAUSED`. */
  condition: string;
  /** What was seen (undefined: the field was absent). */
  value: unknown;
}

export interface Evaluation {
  met: boolean;
  failing: FailingCondition[];
}

interface Check<T> {
  name: string;
  test: (subject: T, fleet: FleetFacts) => { ok: boolean; value: unknown };
}

/**
 * What a verifier condition needs of the verifier's answer before its test counts (issue 36; the
 * rules are src/steps/kit/earned.ts's): `check`, an answer of this cutover's running check (a phase
 * `check` or `recheck`, a generation); `result`, this cutover's verification result (anything an
 * idle verifier can meet, and every counter: `idle` is also the answer of a verifier that never
 * ran a check, or finished someone else's).
 */
export type VerifierNeed = "check" | "result";

interface VerifierCheck extends Check<VerifierProgress> {
  needs: VerifierNeed;
}

/**
 * Why the verifier's answer is not this cutover's check, or not its result (undefined: it is);
 * the caller asks src/steps/kit/earned.ts `verifierEarned`. Without it, nothing is earned.
 */
export interface VerifierStanding {
  check?: string;
  result?: string;
  /** The result is refused only because the verification did not begin at generation 0 for this cutover (earned.ts `notFromStart`). */
  notFromStart?: true;
  /** The result is refused because it compared nothing (earned.ts `comparedNothing`). */
  comparedNothing?: true;
  /** The result is refused because the verifier skipped DDL on the source (earned.ts `skippedSourceDdl`). */
  skippedDdl?: true;
}

const NOT_JUDGED = "whether it is this cutover's verification was not judged";
const UNJUDGED: VerifierStanding = { check: NOT_JUDGED, result: NOT_JUDGED };

/** What only the whole fleet can tell an instance (copy totals are global, copied bytes per instance). */
interface FleetFacts {
  /** Σ estimatedCopiedBytes and the common estimatedTotalBytes, when every instance answered with both. */
  copied?: { sum: number; total: number };
}

/** `info` values that come after the collection copy (service facts). */
const AFTER_COPY_INFO = new Set(["change event application", "waiting for commit to complete", "commit completed"]);
const AFTER_COPY_STATES = new Set(["COMMITTING", "COMMITTED"]);

/** The limit of `lagBelow` in seconds: a number of seconds, a numeric string, or a duration. */
function lagLimitSeconds(v: string | number | undefined): number | undefined {
  const msValue = durationMs(v);
  return msValue === undefined ? undefined : msValue / 1000;
}

/** Reads a dotted path (`collectionCopy.estimatedCopiedBytes`); undefined when absent. */
export function readPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function copyComplete(p: Progress, fleet: FleetFacts): boolean {
  // a later phase implies the copy finished, also when a live upgrade reset the counters to
  // "0 copied of 1 total" (spec, progress rule 4)
  // (a Set of strings has no null or absent info)
  if ((AFTER_COPY_INFO as ReadonlySet<unknown>).has(p.info)) return true;
  if (AFTER_COPY_STATES.has(p.state)) return true;
  // a missing count is NaN: it fails every comparison below
  const copied = p.collectionCopy?.estimatedCopiedBytes ?? NaN;
  const total = p.collectionCopy?.estimatedTotalBytes ?? NaN;
  // "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1":
  // equal values alone are not enough (0 of 0), the copy must have begun: copied ≥ total > 0
  if (total > 0 && copied >= total) return true;
  // the total is global and copied is "by this instance": with several instances it is the
  // fleet's sum that reaches the total (fleetFacts gives one only with a total above 0)
  return fleet.copied !== undefined && fleet.copied.sum >= fleet.copied.total;
}

function fleetFacts(snapshot: FleetSnapshot): FleetFacts {
  // a missing count is NaN: the sum is then NaN and compares false, a missing total differs from
  // every other total (NaN !== NaN) and is not above 0
  const counts = snapshot.instances.map((s) => ({
    copied: s.progress?.collectionCopy?.estimatedCopiedBytes ?? NaN,
    total: s.progress?.collectionCopy?.estimatedTotalBytes ?? NaN,
  }));
  const total = counts[0]?.total ?? NaN;
  const sum = counts.reduce((n, c) => n + c.copied, 0);
  return total > 0 && counts.every((c) => c.total === total) ? { copied: { sum, total } } : {};
}

const show = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** `lagTimeSeconds`, `lag.overallLagSeconds`, `verification.source.lagTimeSeconds`… */
const isLagPath = (path: string): boolean =>
  /(^|\.)(lag[A-Za-z]*|[a-z]*LagSeconds)$/.test(path) || /(^|\.)lag\./.test(path);

/**
 * A lag check. The spec: lagTimeSeconds is the "seconds between the latest event timestamp seen on
 * the source and the last applied event … It is 0 when source and destination are consistent";
 * it cannot be negative. A negative value is a fault of the service (clocks, a bug), never a
 * small lag: it fails the check, and says so where the value is shown.
 */
function lagTest(v: unknown, ok: (n: number) => boolean): { ok: boolean; value: unknown } {
  if (typeof v === "number" && v < 0)
    return { ok: false, value: `${v} (a negative lag is a fault of the service, not a small lag)` };
  return { ok: typeof v === "number" && ok(v), value: v };
}

function expectationChecks(e: Expectation, read: (subject: unknown) => unknown): Check<unknown>[] {
  const checks: Check<unknown>[] = [];
  // a lag field compared through `expect` means what `lagBelow` means: a negative lag is a fault
  const lag = isLagPath(e.path);
  const add = (op: string, arg: unknown, ok: (v: unknown) => boolean, numeric = false): void => {
    checks.push({
      name: `${e.path} ${op} ${show(arg)}`,
      test: (s) => {
        const value = read(s);
        return numeric && lag ? lagTest(value, (n) => ok(n)) : { ok: ok(value), value };
      },
    });
  };
  if (e.equals !== undefined) add("equals", e.equals, (v) => v === e.equals);
  if (e.below !== undefined) add("below", e.below, (v) => typeof v === "number" && v < e.below!, true);
  if (e.atLeast !== undefined) add("atLeast", e.atLeast, (v) => typeof v === "number" && v >= e.atLeast!, true);
  if (e.in !== undefined) {
    const list = e.in;
    add("in", list, (v) => list.some((x) => x === v));
  }
  if (e.matches !== undefined) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(e.matches);
    } catch {
      // an invalid expression never matches (and says so in the check's name)
    }
    add(
      "matches",
      re ? e.matches : `${e.matches} (invalid regular expression)`,
      (v) => re !== undefined && typeof v === "string" && re.test(v),
    );
  }
  if (checks.length === 0) add("is", "present", (v) => v !== undefined && v !== null);
  return checks;
}

/**
 * Conditions on any value a read returned (a stopWrites `check:`'s `expect`, on what its hook
 * read): the comparisons `waitFor.expect` makes, each by dotted path. Returns those not met, each
 * named as a wait names it (`writes.enabled equals false`) with the value read; empty when all hold.
 */
export function unmetExpectations(
  expect: readonly Expectation[],
  value: unknown,
): { condition: string; value: unknown }[] {
  const unmet: { condition: string; value: unknown }[] = [];
  for (const e of expect)
    for (const c of expectationChecks(e, (v) => readPath(v, e.path))) {
      const r = c.test(value, {});
      if (!r.ok) unmet.push({ condition: c.name, value: r.value });
    }
  return unmet;
}

/** An expectation as a wait names it: `writes.enabled equals false`, `rate below 1`. */
export function expectationText(e: Expectation): string {
  return expectationChecks(e, () => undefined)
    .map((c) => c.name)
    .join(", ");
}

function equalsCheck(name: string, expected: unknown, read: (p: Progress) => unknown): Check<Progress> {
  return {
    name: `${name} ${show(expected)}`,
    test: (p) => {
      const value = read(p);
      return { ok: value === expected, value };
    },
  };
}

interface Checks {
  instance: Check<Progress>[];
  canWrite: Check<Progress>[];
  verifier: VerifierCheck[];
}

function buildChecks(cond: ConditionBody): Checks {
  const instance: Check<Progress>[] = [];
  const canWrite: Check<Progress>[] = [];
  const verifier: VerifierCheck[] = [];
  if (cond.state !== undefined) {
    const states: readonly string[] = Array.isArray(cond.state) ? cond.state : [cond.state];
    instance.push({
      name: `state ${states.join("|")}`,
      test: (p) => ({ ok: states.includes(p.state), value: p.state }),
    });
  }
  if (cond.canCommit !== undefined) instance.push(equalsCheck("canCommit", cond.canCommit, (p) => p.canCommit));
  // the first process's value only (the cutover page: "only check that canWrite is true on the first
  // mongosync process. The canWrite status of any subsequent mongosync processes is not valid"): a
  // wait on another instance's may never end, after commit, with application writes stopped
  if (cond.canWrite !== undefined) canWrite.push(equalsCheck("canWrite", cond.canWrite, (p) => p.canWrite));
  if (cond.info !== undefined) instance.push(equalsCheck("info", cond.info, (p) => p.info));
  if (cond.lagBelow !== undefined) {
    const limit = lagLimitSeconds(cond.lagBelow);
    instance.push({
      name:
        limit === undefined ? `lagBelow ${show(cond.lagBelow)} (not a duration)` : `lagBelow ${show(cond.lagBelow)}`,
      // null in IDLE and PAUSED: no lag known is not a small lag; a negative one is a fault
      // lag.overallLagSeconds when the answer has it (1.21+), else lagTimeSeconds
      // no duration: NaN, never above a lag
      test: (p) => lagTest(lagSeconds(p), (v) => v < (limit ?? NaN)),
    });
  }
  if (cond.copyStarted !== undefined) {
    const want = cond.copyStarted;
    instance.push({
      name: `copyStarted ${want}`,
      // spec, start rule 5: "Copy has begun when progress shows collectionCopy.estimatedCopiedBytes greater than 0"
      test: (p) => {
        const copied = p.collectionCopy?.estimatedCopiedBytes;
        return { ok: (typeof copied === "number" && copied > 0) === want, value: copied ?? null };
      },
    });
  }
  if (cond.copyComplete !== undefined) {
    const want = cond.copyComplete;
    instance.push({
      name: `copyComplete ${want}`,
      test: (p, f) => {
        const c = p.collectionCopy;
        const value = c
          ? { estimatedCopiedBytes: c.estimatedCopiedBytes, estimatedTotalBytes: c.estimatedTotalBytes }
          : (c ?? null);
        return { ok: copyComplete(p, f) === want, value };
      },
    });
  }
  if (cond.phase !== undefined) {
    const want = cond.phase;
    verifier.push({
      name: `phase ${want}`,
      needs: want === "idle" ? "result" : "check",
      test: (v) => ({ ok: v.phase === want, value: v.phase }),
    });
  }
  if (cond.failedTasks !== undefined) {
    const want = cond.failedTasks;
    verifier.push({
      name: `failedTasks ${want}`,
      needs: "result",
      test: (v) => {
        const value = v.verificationStatus?.failedTasks;
        return { ok: value === want, value };
      },
    });
  }
  if (cond.metadataMismatchTasks !== undefined) {
    const want = cond.metadataMismatchTasks;
    verifier.push({
      name: `metadataMismatchTasks ${want}`,
      needs: "result",
      test: (v) => {
        const value = v.verificationStatus?.metadataMismatchTasks;
        return { ok: value === want, value };
      },
    });
  }
  if (cond.verification !== undefined) instance.push(...embeddedChecks(cond.verification));
  for (const e of cond.expect ?? []) {
    if (e.path.startsWith("verifier.")) {
      const sub = e.path.slice("verifier.".length);
      const needs = expectationNeeds(e, sub);
      verifier.push(
        ...(expectationChecks(e, (v) => readPath(v, sub)) as Check<VerifierProgress>[]).map((c) => ({ ...c, needs })),
      );
    } else {
      const checks = expectationChecks(e, (p) => readPath(p, e.path)) as Check<Progress>[];
      // `canWrite` by its path is the same field: the first process's value only
      (e.path === "canWrite" ? canWrite : instance).push(...checks);
    }
  }
  return { instance, canWrite, verifier };
}

/**
 * What an `expect` into the verifier needs: its result, unless it reads the generation or a phase
 * an idle verifier does not meet (a running check's `check` or `recheck`).
 */
function expectationNeeds(e: Expectation, sub: string): VerifierNeed {
  if (sub === "generation") return "check";
  if (sub !== "phase") return "result";
  const idle = expectationChecks(e, () => "idle");
  return idle.every((c) => c.test(undefined, {}).ok) ? "result" : "check";
}

/** The embedded verifier's sides (service facts, 1.9: `verification.source` / `.destination`). */
const SIDES = ["source", "destination"] as const;

/**
 * `verification: { phase, lagBelow }`: both sides of the embedded verifier, on each instance.
 * Absent before 1.9 and null in IDLE: no verification object is not a side in that phase.
 */
function embeddedChecks(v: NonNullable<ConditionBody["verification"]>): Check<Progress>[] {
  const checks: Check<Progress>[] = [];
  const side = (p: Progress, s: (typeof SIDES)[number]) => p.verification?.[s];
  if (v.phase !== undefined) {
    const want = v.phase;
    for (const s of SIDES)
      checks.push({
        name: `verification.${s}.phase ${want}`,
        test: (p) => {
          const value = side(p, s)?.phase;
          return { ok: value === want, value: p.verification === null ? null : value };
        },
      });
  }
  if (v.lagBelow !== undefined) {
    const limit = lagLimitSeconds(v.lagBelow);
    for (const s of SIDES)
      checks.push({
        name:
          limit === undefined
            ? `verification.${s} lagBelow ${show(v.lagBelow)} (not a duration)`
            : `verification.${s} lagBelow ${show(v.lagBelow)}`,
        test: (p) => {
          const value = side(p, s)?.lagTimeSeconds;
          return { ok: typeof value === "number" && value < (limit ?? NaN), value };
        },
      });
  }
  return checks;
}

const TIMING = new Set(["pollInterval", "slowAfter", "timeout", "on"]);

/**
 * Reads a `waitFor` / `assert` body once: its checks, its text and what lint's model needs.
 * `canWriteFrom`: the instance whose canWrite is valid (`canWriteInstance` of the runbook); without
 * it a canWrite condition holds only on a fleet of one instance.
 */
export function readCondition(body: ConditionBody, canWriteFrom?: number): Condition {
  const { instance, canWrite, verifier } = buildChecks(body);
  const on = body.on ?? "all";
  const model = conditionModel(body);
  if (verifier.length > 0) model.verifierNeeds = verifier.some((c) => c.needs === "result") ? "result" : "check";
  return { on, text: conditionText(body), instance, canWrite, canWriteFrom, verifier, model };
}

function conditionText(body: ConditionBody): string {
  const parts = Object.entries(body)
    .filter(([k]) => !TIMING.has(k))
    .map(([k, v]) =>
      k === "expect"
        ? (v as Expectation[])
            // JSON.stringify leaves the undefined path out
            .map((e) => `${e.path} ${JSON.stringify({ ...e, path: undefined })}`)
            .join(", ")
        : k === "verification" // an object in a valid runbook (lint also reads refused ones: only this text differs then)
          ? Object.entries(v as Record<string, unknown>)
              .map(([sk, sv]) => `verification ${sk} ${show(sv)}`)
              .join(", ")
          : `${k} ${Array.isArray(v) ? v.map((x) => show(x)).join("|") : show(v)}`,
    );
  const on = body.on && body.on !== "all" ? ` (on ${body.on})` : "";
  return `${parts.join(", ")}${on}`;
}

const isState = (v: unknown): v is SyncState => (SYNC_STATES as readonly unknown[]).includes(v);

function conditionModel(body: ConditionBody): ConditionModel {
  const c: ConditionModel = {};
  if (body.state !== undefined) c.states = (Array.isArray(body.state) ? body.state : [body.state]).filter(isState);
  if (body.canCommit !== undefined) c.canCommit = body.canCommit;
  if (body.info !== undefined) c.info = body.info;
  // Stryker disable next-line ArrayDeclaration: equivalent: an entry without a path matches no branch below
  for (const e of body.expect ?? []) {
    if (e.path === "state") {
      const v = e.equals !== undefined ? [e.equals] : e.in;
      if (v && v.every(isState)) c.states = c.states ? c.states.filter((x) => v.includes(x)) : v;
    } else if (e.path === "canCommit" && e.equals === true) c.canCommit = true;
    else if (e.path === "info" && typeof e.equals === "string") c.info = e.equals;
    else if (e.path === "verifier.phase" && e.equals === "idle") c.verifierIdle = true;
  }
  if (body.phase === "idle") c.verifierIdle = true;
  if (body.verification !== undefined) {
    const embedded: NonNullable<ConditionModel["embedded"]> = {};
    if (body.verification.phase !== undefined) embedded.phase = body.verification.phase;
    const n = lagLimitSeconds(body.verification.lagBelow);
    if (n !== undefined) embedded.lagBelowSeconds = n;
    c.embedded = embedded;
  }
  const lagLimit = lagLimitSeconds(body.lagBelow);
  if (lagLimit !== undefined) c.lagBelowSeconds = lagLimit;
  if (body.lagBelow !== undefined) c.needsProgress = "lagTimeSeconds";
  else if (c.info !== undefined) c.needsProgress = "info";
  else if (body.canWrite === true) c.needsProgress = "canWrite";
  else if (body.copyComplete === true || body.copyStarted === true) c.needsProgress = "collectionCopy";
  else if (body.verification !== undefined) c.needsProgress = "verification";
  return c;
}

/** The error of an instance in a few words (its URL is already in `instance`). */
export function errorSummary(err: ApiError): string {
  if (err instanceof TransportError) return err.detail;
  // an ApiError that is not a TransportError is a ServiceError
  const e = err as ServiceError;
  return e.errorDescription ? `${e.error}: ${e.errorDescription}` : e.error;
}

function failuresOf(sample: InstanceSample, checks: Check<Progress>[], facts: FleetFacts): FailingCondition[] {
  const instance = instanceLabel(sample.ref);
  if (!sample.progress) {
    return [{ instance, condition: "progress answered", value: sample.error ? errorSummary(sample.error) : undefined }];
  }
  const out: FailingCondition[] = [];
  for (const c of checks) {
    const r = c.test(sample.progress, facts);
    if (!r.ok) out.push({ instance, condition: c.name, value: r.value });
  }
  return out;
}

/** The coordinator's sample: the instance whose mongosyncID is the fleet's coordinatorID. */
export function findCoordinator(snapshot: FleetSnapshot): { sample?: InstanceSample; coordinatorID?: string } {
  // a fleet of one is its own coordinator, even before it reports ids (IDLE, versions < 1.3)
  if (snapshot.instances.length === 1) return { sample: snapshot.instances[0]! };
  const votes = new Map<string, number>();
  for (const s of snapshot.instances) {
    const c = s.progress?.coordinatorID;
    if (typeof c === "string") votes.set(c, (votes.get(c) ?? 0) + 1);
  }
  const coordinatorID = [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (coordinatorID === undefined) return {};
  const sample = snapshot.instances.find((s) => s.progress?.mongosyncID === coordinatorID);
  return sample ? { sample, coordinatorID } : { coordinatorID };
}

/**
 * Evaluates a waitFor/assert body. `on: all` (default): every instance meets every instance
 * condition (an instance that did not answer fails); `any`: at least one instance meets them all;
 * `coordinator`: the coordinator instance does. `canWrite` holds on the first process whatever
 * `on` says. Verifier conditions (`phase`, `failedTasks`, `verifier.` paths) hold on `verifier`
 * whatever `on` says, and only on an answer that `standing` says is this cutover's (its check, or
 * its result, as each needs); without either they fail, and the value says why.
 */
export function evaluate(
  cond: Condition,
  snapshot: FleetSnapshot,
  verifier?: VerifierProgress,
  standing: VerifierStanding = UNJUDGED,
): Evaluation {
  const checks = cond;
  const facts = fleetFacts(snapshot);
  const failing: FailingCondition[] = [];

  for (const c of checks.verifier) {
    if (!verifier) {
      failing.push({ instance: "verifier", condition: c.name, value: undefined });
      continue;
    }
    const r = c.test(verifier, facts);
    const why = standing[c.needs];
    if (why !== undefined)
      failing.push({
        instance: "verifier",
        condition: c.name,
        value: `${show(r.value)}; not this cutover's ${c.needs === "result" ? "verification result" : "check"}: ${why}`,
      });
    else if (!r.ok) failing.push({ instance: "verifier", condition: c.name, value: r.value });
  }
  const verifierOk = failing.length === 0;

  const canWriteOk = firstProcessFailures(cond, snapshot, facts, failing);

  let instancesOk = true;
  if (checks.instance.length > 0) {
    const on = cond.on;
    if (on === "coordinator") {
      const { sample, coordinatorID } = findCoordinator(snapshot);
      if (!sample) {
        failing.push({ instance: "coordinator", condition: "coordinator answered", value: coordinatorID ?? null });
        instancesOk = false;
      } else {
        const f = failuresOf(sample, checks.instance, facts);
        failing.push(...f);
        instancesOk = f.length === 0;
      }
    } else {
      const per = snapshot.instances.map((s) => failuresOf(s, checks.instance, facts));
      instancesOk = on === "any" ? per.some((f) => f.length === 0) : per.every((f) => f.length === 0);
      // with `any` met, the instances that fail do not hold the wait up: nothing to show
      if (!instancesOk) for (const f of per) failing.push(...f);
    }
  }
  return { met: verifierOk && canWriteOk && instancesOk, failing };
}

/**
 * The canWrite checks, on the first process's answer only: the instance the runbook declares, or
 * the fleet's only one. Several instances and none declared: no value may be read (the others'
 * "is not valid"), the condition cannot hold, and says why. Pushes the failures; true when none.
 */
function firstProcessFailures(
  cond: Condition,
  snapshot: FleetSnapshot,
  facts: FleetFacts,
  failing: FailingCondition[],
): boolean {
  if (cond.canWrite.length === 0) return true;
  const only = snapshot.instances.length === 1 ? snapshot.instances[0] : undefined;
  const sample =
    cond.canWriteFrom === undefined ? only : snapshot.instances.find((s) => s.ref.index === cond.canWriteFrom);
  if (!sample) {
    for (const c of cond.canWrite)
      failing.push({
        instance: "first process",
        condition: `${c.name} (no instance is declared the first process: the others' canWrite is not valid)`,
        value: undefined,
      });
    return false;
  }
  const f = failuresOf(sample, cond.canWrite, facts);
  failing.push(...f);
  return f.length === 0;
}

/**
 * The instances whose answers a condition's verdict depends on (indexes into the fleet of `n`):
 * every one when it has instance checks (`on: any` and `coordinator` look at each answer too), the
 * first process alone when it reads only `canWrite` (the others' "is not valid", the cutover page),
 * and every one otherwise (a verifier condition: the fleet is read for people, not judged). Inside
 * the write-stop window a wait reads only these (src/steps/kit/wait.ts).
 */
export function conditionReads(cond: Condition, n: number): number[] {
  const every = Array.from({ length: n }, (_, i) => i);
  if (cond.instance.length > 0 || cond.verifier.length > 0 || cond.canWrite.length === 0) return every;
  const first = cond.canWriteFrom ?? n;
  return first < n ? [first] : every;
}

/**
 * What a condition reads on one instance: its state and whether each of the condition's instance
 * checks passes on it (and, on the first process, its canWrite checks), whatever `on` says (another instance's answer turning is a hint for the one
 * that counts); an instance that did not answer is `error`. A wait inside the write-stop window
 * reads the whole fleet again when this changes on an instance read alone (src/steps/kit/wait.ts):
 * only a hint of when to read, never a judgement (that is `evaluate` on a whole read).
 */
export function instanceSignature(cond: Condition, sample: InstanceSample): string {
  const p = sample.progress;
  if (!p) return "error";
  // the first process's canWrite turning is a condition turning too; another's is not valid
  const canWrite = sample.ref.index === cond.canWriteFrom ? cond.canWrite : [];
  return JSON.stringify([p.state, ...[...cond.instance, ...canWrite].map((c) => c.test(p, {}).ok)]);
}

/**
 * What "progress moves" means for stall detection: per instance its state, lag, copied bytes and
 * events applied (an instance that does not answer counts as unchanged while it keeps failing);
 * with a verifier, its phase and task counters. Equal signatures over time: a stalled wait.
 */
export function progressSignature(snapshot: FleetSnapshot, verifier?: VerifierProgress): string {
  const parts: unknown[] = snapshot.instances.map((s) => {
    const p = s.progress;
    // Stryker disable next-line StringLiteral: equivalent: any constant that is not an array tells a failing instance apart
    if (!p) return "error";
    return [
      p.state,
      lagSeconds(p) ?? null,
      p.collectionCopy?.estimatedCopiedBytes ?? null,
      p.totalEventsApplied ?? null,
    ];
  });
  if (verifier) {
    const v = verifier.verificationStatus;
    parts.push([
      verifier.phase,
      v?.completedTasks ?? null,
      v?.failedTasks ?? null,
      v?.processingTasks ?? null,
      verifier.generation ?? null,
      verifier.generationStats?.docsCompared ?? null,
    ]);
  }
  return JSON.stringify(parts);
}
