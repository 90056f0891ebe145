/**
 * The report model: one pure function from the run's events (live or from a journal) to a
 * timeline that the JSON, JUnit and HTML writers render. Nothing here does I/O.
 *
 * Times: `at` is the event's own clock (epoch ms in practice); every series also carries `t`,
 * milliseconds since the run started, so charts and tables never depend on the wall clock.
 */
import {
  instanceLabel,
  type InstanceRef,
  type Outcome,
  type Place,
  type RunEvent,
  type RunEventOf,
} from "../events.js";
import { formatDuration } from "../runbook/duration.js";
import { redactValue, stripUserinfo } from "./redact.js";

export { formatDuration };

export const REPORT_VERSION = 1;

/** A step's fate: the runner's outcomes, plus `pending` (never reached) and `running` (no end event: a crash). */
export type StepOutcome = Outcome | "pending" | "running";
/** The run's fate: the runner's outcomes, plus `unfinished` (the events end before `run.finished`). */
export type RunOutcome = Outcome | "unfinished";

export interface ReportStep {
  index: number;
  id: string;
  kind: string;
  title: string;
  outcome: StepOutcome;
  /** ms since run start. */
  start?: number;
  end?: number;
  durationMs?: number;
  error?: string;
  hint?: string;
  /** Where a failed step is in the runbook (file, line, column, that line's text). */
  place?: Place;
  /** Why it was skipped. */
  reason?: string;
  /** Ids of the requests sent while this step ran. */
  requests: number[];
  /** Indexes into `Report.decisions` taken for this step. */
  decisions: number[];
  /** The last standing of a wait: who failed which condition (kept so a timeout explains itself). */
  lastWait?: {
    t: number;
    met: boolean;
    failing: { instance: string; condition: string; value: unknown; sinceMs: number }[];
  };
  /** `wait.slow` events of this step. */
  slow: { t: number; stalledForMs: number; detail: string }[];
}

export interface ReportRequest {
  id: number;
  target: "service" | "verifier" | "hook";
  instance?: InstanceRef;
  method: string;
  path: string;
  body?: unknown;
  /** Step index running when the request was sent. */
  step?: number;
  sentAt: number;
  t: number;
  answer?: { t: number; status?: number; ok: boolean; body?: unknown; error?: string; durationMs: number };
}

export interface ReportDecision {
  t: number;
  index?: number;
  id?: string;
  kind: RunEventOf<"decision">["kind"];
  ok: boolean;
  check?: string;
  reason: string;
}

export interface ProgressSample {
  t: number;
  at: number;
  state?: string;
  info?: string;
  canCommit?: boolean;
  canWrite?: boolean;
  copiedBytes?: number;
  totalBytes?: number;
  lagSeconds?: number;
  eventsApplied?: number;
  /** Fields of later service versions, when the answer has them (src/api/versions.ts). */
  ceaCatchupSeconds?: number;
  pingLatencyMs?: number;
  /** Index builds after the copy (1.19+): the object as sent, redacted. */
  indexBuilding?: Record<string, unknown>;
  /** The service's own warnings (1.19+), each as one line. */
  warnings?: string[];
}

export interface InstanceSeries {
  instance: InstanceRef;
  /** Stable label: the instance's name, else its (redacted) URL. */
  label: string;
  samples: ProgressSample[];
}

export interface VerifierSample {
  t: number;
  at: number;
  phase?: string;
  error?: string;
  /** verificationStatus counters (totalTasks, completedTasks, failedTasks, …) as reported: the current generation's. */
  counters: Record<string, number>;
  /** The check's generation (the counters start over at each one). */
  generation?: number;
  /** Documents compared in this generation, of its total (`generationStats`). */
  docsCompared?: number;
  totalDocs?: number;
}

export interface ReportHook {
  index: number;
  id: string;
  use: string;
  undo: boolean;
  start: number;
  end?: number;
  ok?: boolean;
  error?: string;
  durationMs?: number;
}

export interface ReportCommit {
  t: number;
  index: number;
  id: string;
  instances: string[];
  skewMs: number;
}

export interface ReportLog {
  t: number;
  level: "debug" | "info" | "warn" | "error";
  message: string;
  index?: number;
}

export interface Report {
  version: typeof REPORT_VERSION;
  runbook: string;
  file: string;
  hash: string;
  mode: RunEventOf<"run.started">["mode"] | "unknown";
  instances: InstanceRef[];
  verifier?: string;
  /** `at` of the first event (run.started when present). */
  startedAt: number;
  finishedAt?: number;
  durationMs: number;
  outcome: RunOutcome;
  exitCode?: number;
  committed: boolean;
  message?: string;
  /** The first failed (or interrupted) step, if any. */
  failedStep?: number;
  steps: ReportStep[];
  requests: ReportRequest[];
  decisions: ReportDecision[];
  hooks: ReportHook[];
  commits: ReportCommit[];
  progress: InstanceSeries[];
  verifierSamples: VerifierSample[];
  /** warn and error logs (info and debug are in the journal). */
  logs: ReportLog[];
  counts: { events: number; requests: number; unanswered: number; failedRequests: number };
  /** Problems found while building (events out of order, duplicate ids, missing run.started). */
  warnings: string[];
}

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);

/** A progress payload may be the whole answer `{success, progress:{…}}` or the inner object. */

/** The fields a report charts, from a service progress body (contract and documented names). */
export function progressFields(p: unknown): Omit<ProgressSample, "t" | "at"> {
  // read defensively: a journal is a file anyone can edit
  const o = obj(p);
  if (!o) return {};
  const copy = obj(o.collectionCopy);
  const out: Omit<ProgressSample, "t" | "at"> = {};
  const state = str(o.state);
  if (state !== undefined) out.state = state;
  const info = str(o.info);
  if (info !== undefined) out.info = info;
  const canCommit = bool(o.canCommit);
  if (canCommit !== undefined) out.canCommit = canCommit;
  const canWrite = bool(o.canWrite);
  if (canWrite !== undefined) out.canWrite = canWrite;
  const copied = num(copy?.estimatedCopiedBytes);
  if (copied !== undefined) out.copiedBytes = copied;
  const total = num(copy?.estimatedTotalBytes);
  if (total !== undefined) out.totalBytes = total;
  // lag.overallLagSeconds when present (1.21+; lagTimeSeconds is deprecated there)
  const lagObj = obj(o.lag);
  const lag =
    lagObj && Object.hasOwn(lagObj, "overallLagSeconds") ? num(lagObj.overallLagSeconds) : num(o.lagTimeSeconds);
  if (lag !== undefined) out.lagSeconds = lag;
  const catchup = num(o.estimatedSecondsToCEACatchup);
  if (catchup !== undefined) out.ceaCatchupSeconds = catchup;
  const ping = num(o.pingLatencyMs);
  if (ping !== undefined) out.pingLatencyMs = ping;
  const building = obj(o.indexBuilding);
  if (building) out.indexBuilding = JSON.parse(stripUserinfo(JSON.stringify(building))) as Record<string, unknown>;
  if (Array.isArray(o.warnings) && o.warnings.length > 0)
    out.warnings = o.warnings.slice(0, 20).map((w) => stripUserinfo(typeof w === "string" ? w : JSON.stringify(w)));
  const applied = num(o.totalEventsApplied) ?? num(o.eventsApplied);
  if (applied !== undefined) out.eventsApplied = applied;
  return out;
}

/** The verifier's phase, error and numeric counters. */
export function verifierFields(p: unknown): Omit<VerifierSample, "t" | "at"> {
  const o = obj(p);
  const counters: Record<string, number> = {};
  const status = obj(o?.verificationStatus);
  if (status) for (const [k, v] of Object.entries(status)) if (num(v) !== undefined) counters[k] = v as number;
  const out: Omit<VerifierSample, "t" | "at"> = { counters };
  const phase = str(o?.phase);
  if (phase !== undefined) out.phase = phase;
  const generation = num(o?.generation);
  if (generation !== undefined) out.generation = generation;
  const stats = obj(o?.generationStats);
  const compared = num(stats?.docsCompared);
  const totalDocs = num(stats?.totalDocs);
  if (compared !== undefined && totalDocs !== undefined) {
    out.docsCompared = compared;
    out.totalDocs = totalDocs;
  }
  if (o && o.error !== null && o.error !== undefined)
    out.error = stripUserinfo(typeof o.error === "string" ? o.error : JSON.stringify(o.error));
  return out;
}

function cleanInstance(i: InstanceRef): InstanceRef {
  const out: InstanceRef = { url: stripUserinfo(i.url), index: i.index };
  if (i.name !== undefined) out.name = stripUserinfo(i.name);
  return out;
}

const redactText = (s: string | undefined): string | undefined => (s === undefined ? undefined : stripUserinfo(s));

/**
 * Folds events into a report one at a time, so a live run keeps the model, not the raw events.
 * Feed events in `seq` order (the runner emits them so; `buildReport` sorts a journal's).
 */
export class ReportBuilder {
  readonly #warnings: string[] = [];
  readonly #steps = new Map<number, ReportStep>();
  readonly #requests = new Map<number, ReportRequest>();
  readonly #decisions: ReportDecision[] = [];
  readonly #hooks: ReportHook[] = [];
  readonly #commits: ReportCommit[] = [];
  readonly #logs: ReportLog[] = [];
  readonly #series = new Map<number, InstanceSeries>();
  readonly #verifier: VerifierSample[] = [];
  readonly #instances = new Map<number, InstanceRef>();
  readonly #running: number[] = [];
  #started: RunEventOf<"run.started"> | undefined;
  #finished: RunEventOf<"run.finished"> | undefined;
  #t0: number | undefined;
  #lastAt: number | undefined;
  #lastSeq = -Infinity;
  #count = 0;

  /** Extra warnings to show in the report (e.g. a journal's truncated last line). */
  warn(message: string): void {
    this.#warnings.push(message);
  }

  get eventCount(): number {
    return this.#count;
  }

  #step(index: number, id: string, kind = "", title = ""): ReportStep {
    let s = this.#steps.get(index);
    if (!s) {
      s = { index, id, kind, title: title || id, outcome: "pending", requests: [], decisions: [], slow: [] };
      this.#steps.set(index, s);
    }
    return s;
  }

  add(e: RunEvent): void {
    this.#count++;
    if (e.seq === this.#lastSeq) this.#warnings.push(`duplicate event seq ${e.seq}`);
    else if (e.seq < this.#lastSeq)
      this.#warnings.push(`event seq ${e.seq} after ${this.#lastSeq}: events out of order`);
    this.#lastSeq = Math.max(this.#lastSeq, e.seq);
    this.#t0 ??= e.at;
    this.#lastAt = Math.max(this.#lastAt ?? e.at, e.at);
    const t = Math.max(0, e.at - this.#t0);
    const running = this.#running;
    switch (e.type) {
      case "run.started":
        if (this.#started)
          this.#warnings.push("a second run.started: the events hold more than one run; metadata are the first run's");
        else {
          this.#started = e;
          for (const s of e.steps) {
            const step = this.#step(s.index, s.id, s.kind, redactText(s.title));
            step.kind ||= s.kind;
          }
          for (const i of e.instances) this.#instances.set(i.index, cleanInstance(i));
        }
        break;
      case "run.finished":
        this.#finished = e;
        break;
      case "step.started": {
        const s = this.#step(e.index, e.id, e.kind, redactText(e.title));
        if (e.kind) s.kind = e.kind;
        s.outcome = "running";
        s.start = t;
        delete s.end;
        delete s.durationMs;
        running.push(e.index);
        break;
      }
      case "step.finished": {
        const s = this.#step(e.index, e.id);
        s.outcome = e.outcome;
        s.end = t;
        s.durationMs = e.durationMs;
        if (s.start === undefined) s.start = Math.max(0, t - e.durationMs);
        if (e.error !== undefined) s.error = stripUserinfo(e.error);
        if (e.hint !== undefined) s.hint = stripUserinfo(e.hint);
        const place = placeFrom(e.place);
        if (place) s.place = place;
        const k = running.lastIndexOf(e.index);
        if (k >= 0) running.splice(k, 1);
        break;
      }
      case "step.skipped": {
        const s = this.#step(e.index, e.id);
        s.outcome = "skipped";
        s.reason = stripUserinfo(e.reason);
        s.start = t;
        s.end = t;
        s.durationMs = 0;
        break;
      }
      case "request.sent": {
        if (this.#requests.has(e.id)) this.#warnings.push(`request id ${e.id} sent twice; the later one is kept`);
        const r: ReportRequest = {
          id: e.id,
          target: e.target,
          method: e.method,
          path: stripUserinfo(e.path),
          sentAt: e.at,
          t,
        };
        if (e.instance) r.instance = cleanInstance(e.instance);
        if (e.body !== undefined) r.body = redactValue(e.body);
        const step = running[running.length - 1];
        if (step !== undefined) {
          r.step = step;
          this.#steps.get(step)?.requests.push(e.id);
        }
        this.#requests.set(e.id, r);
        break;
      }
      case "response.received": {
        const r = this.#requests.get(e.id);
        if (!r) {
          this.#warnings.push(`answer to request ${e.id} without its request`);
          break;
        }
        const a: NonNullable<ReportRequest["answer"]> = { t, ok: e.ok, durationMs: e.durationMs };
        if (e.status !== undefined) a.status = e.status;
        if (e.body !== undefined) a.body = redactValue(e.body);
        if (e.error !== undefined) a.error = stripUserinfo(e.error);
        r.answer = a;
        break;
      }
      case "progress.sampled": {
        const inst = this.#instances.get(e.instance.index) ?? cleanInstance(e.instance);
        this.#instances.set(inst.index, inst);
        let s = this.#series.get(inst.index);
        if (!s) {
          s = { instance: inst, label: instanceLabel(inst), samples: [] };
          this.#series.set(inst.index, s);
        }
        s.samples.push({ t, at: e.at, ...progressFields(e.progress) });
        break;
      }
      case "verifier.sampled":
        this.#verifier.push({ t, at: e.at, ...verifierFields(e.progress) });
        break;
      case "wait.status":
        this.#step(e.index, e.id).lastWait = {
          t,
          met: e.met,
          failing: e.failing.map((f) => ({
            instance: stripUserinfo(f.instance),
            condition: f.condition,
            value: redactValue(f.value),
            sinceMs: f.sinceMs,
          })),
        };
        break;
      case "wait.slow":
        this.#step(e.index, e.id).slow.push({ t, stalledForMs: e.stalledForMs, detail: stripUserinfo(e.detail) });
        break;
      case "decision": {
        const d: ReportDecision = { t, kind: e.kind, ok: e.ok, reason: stripUserinfo(e.reason) };
        if (e.id !== undefined) d.id = e.id;
        if (e.check !== undefined) d.check = e.check;
        const index = e.index ?? running[running.length - 1];
        if (index !== undefined) {
          d.index = index;
          const s = this.#steps.get(index);
          if (s) {
            d.id ??= s.id;
            s.decisions.push(this.#decisions.length);
          }
        }
        this.#decisions.push(d);
        break;
      }
      case "commit.sent":
        this.#commits.push({
          t,
          index: e.index,
          id: e.id,
          instances: e.instances.map(stripUserinfo),
          skewMs: e.skewMs,
        });
        break;
      case "hook.started":
        this.#hooks.push({ index: e.index, id: e.id, use: e.use, undo: e.undo, start: t });
        break;
      case "hook.finished": {
        const h = [...this.#hooks]
          .reverse()
          .find((x) => x.index === e.index && x.undo === e.undo && x.end === undefined);
        const target = h ?? {
          index: e.index,
          id: e.id,
          use: e.use,
          undo: e.undo,
          start: Math.max(0, t - e.durationMs),
        };
        if (!h) this.#hooks.push(target);
        target.end = t;
        target.ok = e.ok;
        target.durationMs = e.durationMs;
        if (e.error !== undefined) target.error = stripUserinfo(e.error);
        break;
      }
      case "log":
        if (e.level === "warn" || e.level === "error") {
          const l: ReportLog = { t, level: e.level, message: stripUserinfo(e.message) };
          if (e.index !== undefined) l.index = e.index;
          this.#logs.push(l);
        }
        break;
      default:
        break; // unknown (newer) event types are ignored
    }
  }

  /**
   * The report of the events so far. A view, not a copy: later `add` calls may change objects in
   * it (a step's outcome, a request's answer); `structuredClone` it to keep a snapshot.
   */
  build(): Report {
    const started = this.#started;
    const finished = this.#finished;
    const warnings = [...this.#warnings];
    if (!started && this.#count > 0)
      warnings.unshift("no run.started event: run metadata and the step list are incomplete");
    if (!finished && this.#count > 0)
      warnings.push("no run.finished event: the run did not end cleanly (crash, kill, or a journal cut short)");
    const t0 = this.#t0 ?? 0;
    const reqs = [...this.#requests.values()].sort((a, b) => a.id - b.id);
    const steps = [...this.#steps.values()].sort((a, b) => a.index - b.index);
    const failed = steps.find((s) => s.outcome === "failed" || s.outcome === "interrupted" || s.outcome === "running");
    const series = [...this.#series.values()].sort((a, b) => a.instance.index - b.instance.index);
    const committedSeen = series.some((s) => s.samples.some((x) => x.state === "COMMITTED"));
    const report: Report = {
      version: REPORT_VERSION,
      runbook: stripUserinfo(started?.runbook ?? "(unknown runbook)"),
      file: stripUserinfo(started?.file ?? ""),
      hash: started?.hash ?? "",
      mode: started?.mode ?? "unknown",
      instances: [...this.#instances.values()].sort((a, b) => a.index - b.index),
      startedAt: t0,
      durationMs: finished ? finished.durationMs : Math.max(0, (this.#lastAt ?? t0) - t0),
      outcome: finished?.outcome ?? "unfinished",
      committed: finished?.committed ?? committedSeen,
      steps,
      requests: reqs,
      decisions: [...this.#decisions],
      hooks: [...this.#hooks],
      commits: [...this.#commits],
      progress: series.map((x) => ({ ...x, samples: [...x.samples] })),
      verifierSamples: [...this.#verifier],
      logs: [...this.#logs],
      counts: {
        events: this.#count,
        requests: reqs.length,
        unanswered: reqs.filter((r) => !r.answer).length,
        failedRequests: reqs.filter((r) => r.answer && !r.answer.ok).length,
      },
      warnings,
    };
    if (started?.verifier !== undefined) report.verifier = stripUserinfo(started.verifier);
    if (finished) {
      report.finishedAt = finished.at;
      report.exitCode = finished.exitCode;
      if (finished.message !== undefined) report.message = stripUserinfo(finished.message);
    }
    if (failed) report.failedStep = failed.index;
    return report;
  }
}

/**
 * Builds the report of one run from its events, in any order (sorted by `seq`). Pure: the
 * events are not modified, every payload copied into the report is redacted again.
 */
export function buildReport(events: readonly RunEvent[]): Report {
  const b = new ReportBuilder();
  for (const e of [...events].sort((x, y) => x.seq - y.seq || x.at - y.at)) b.add(e);
  return b.build();
}

/** A step's place, read defensively (a journal is a file anyone can edit). */
function placeFrom(p: unknown): Place | undefined {
  const o = obj(p);
  const file = str(o?.file);
  const line = num(o?.line);
  const column = num(o?.column);
  if (!o || file === undefined || line === undefined || column === undefined) return undefined;
  const source = str(o.source);
  const width = num(o.width);
  return {
    file: stripUserinfo(file),
    line,
    column,
    ...(source !== undefined ? { source: stripUserinfo(source) } : {}),
    ...(width !== undefined ? { width } : {}),
  };
}
