/**
 * The report model: one pure function from the run's events (live or from a journal) to a
 * timeline (`contract.ts`, report.json's types) that the JSON, JUnit and HTML writers render.
 * Nothing here does I/O.
 */
import { sameService } from "../instance-identity.js";
import { instanceLabel, type InstanceRef, type Place, type RunEvent, type RunEventOf } from "../events.js";
import { lagSeconds, pingLatencyMs } from "../api/progress.js";
import { histogramPercentile, mergeHistograms } from "../fleet/polls.js";
import { WindowTracker } from "../fleet/window.js";
import { formatDuration } from "../runbook/duration.js";
import { deliveryReport } from "../plugin/deliveries.js";
import { createClockCorrector, jumpWarning } from "./durations.js";
import { ServiceVersionReader, declaredMismatch } from "./service-version.js";
import { redactLeaves, redactSecretFields as redactValue, stripUserinfo } from "../redact.js";
import {
  REPORT_VERSION,
  type InstanceSeries,
  type ProgressSample,
  type Report,
  type ReportCommit,
  type ReportDecision,
  type ReportHook,
  type ReportLog,
  type ReportMarker,
  type ReportPollFailure,
  type ReportPolls,
  type ReportRecord,
  type ReportRequest,
  type ReportRun,
  type ReportStep,
  type VerifierSample,
} from "./contract.js";
import { traitsOf } from "../steps/index.js";

export { formatDuration };

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
  const lag = lagSeconds(o);
  if (typeof lag === "number") out.lagSeconds = lag;
  const catchup = num(o.estimatedSecondsToCEACatchup);
  if (catchup !== undefined) out.ceaCatchupSeconds = catchup;
  const ping = pingLatencyMs(o);
  if (ping !== undefined) out.pingLatencyMs = ping;
  const building = obj(o.indexBuilding);
  if (building) out.indexBuilding = redactLeaves(building, stripUserinfo);
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

/** Per-run poll counts: each runner's `polls.summary` is cumulative from its own start. */
type PollKey = string;
const pollKey = (p: { target: string; instance?: { index: number }; path: string }): PollKey =>
  `${p.target}\u0000${p.instance?.index ?? ""}\u0000${p.path}`;

interface RunState {
  run: ReportRun;
  started?: RunEventOf<"run.started">;
  finished?: RunEventOf<"run.finished">;
  /** The last polls.summary of this run, by key. */
  polls: Map<PollKey, RunEventOf<"polls.summary">["polls"][number]>;
}

/**
 * Folds events into a report one at a time, so a live run keeps the model, not the raw events.
 * Feed events in `seq` order (the runner emits them so; `buildReport` sorts a journal's).
 *
 * A journal resumed after an interruption holds several runs (`run.started` … `run.finished`,
 * then `journal.resumed` and the next run): they are one story on one time axis. A step keeps
 * every attempt; one a later run skipped as already done keeps the earlier run's outcome.
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
  readonly #verifierSeen: { t: number; text: string }[] = [];
  readonly #instances = new Map<number, InstanceRef>();
  readonly #running: number[] = [];
  readonly #runs: RunState[] = [];
  readonly #markers: ReportMarker[] = [];
  readonly #pollFailures: ReportPollFailure[] = [];
  readonly #window = new WindowTracker(traitsOf);
  readonly #version = new ServiceVersionReader();
  readonly #states = new Map<number, string>();
  readonly #deliveries: RunEvent[] = [];
  readonly #clock = createClockCorrector();
  #committedMarked = false;
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
      s = {
        index,
        id,
        kind,
        title: title || id,
        outcome: "pending",
        attempts: [],
        requests: [],
        decisions: [],
        slow: [],
      };
      this.#steps.set(index, s);
    }
    return s;
  }

  get #run(): RunState | undefined {
    return this.#runs[this.#runs.length - 1];
  }

  /** Steps still running when their run ended without saying so (a crash): they end there. */
  #closeRun(r: RunState, at: number): void {
    const t = this.#t(at);
    r.run.end = Math.max(r.run.end, t);
    for (const index of this.#running.splice(0)) {
      const s = this.#steps.get(index);
      const a = s?.attempts[s.attempts.length - 1];
      if (a && a.end === undefined) a.end = t;
    }
  }

  #t(at: number): number {
    return Math.max(0, at - (this.#t0 ?? at));
  }

  add(raw: RunEvent): void {
    // wall times mended where the clock jumped (src/report/durations.ts)
    const e = this.#clock.correct(raw);
    this.#count++;
    if (e.seq === this.#lastSeq) this.#warnings.push(`duplicate event seq ${e.seq}`);
    else if (e.seq < this.#lastSeq)
      this.#warnings.push(`event seq ${e.seq} after ${this.#lastSeq}: events out of order`);
    this.#lastSeq = Math.max(this.#lastSeq, e.seq);
    this.#t0 ??= e.at;
    this.#lastAt = Math.max(this.#lastAt ?? e.at, e.at);
    const t = this.#t(e.at);
    const running = this.#running;
    this.#window.apply(e);
    const cur = this.#run;
    if (cur && e.type !== "run.started") cur.run.end = Math.max(cur.run.end, t);
    switch (e.type) {
      case "run.started": {
        const prev = this.#run;
        if (prev && !prev.finished) {
          this.#closeRun(prev, this.#t0 + prev.run.end);
          this.#markers.push({
            t: prev.run.end,
            kind: "crashed",
            label: `run ${prev.run.n} ended without a word (crash, kill -9, lost host)`,
            run: prev.run.n,
          });
        }
        const n = this.#runs.length + 1;
        const run: ReportRun = {
          n,
          mode: e.mode,
          start: t,
          end: t,
          startedAt: e.at,
          durationMs: 0,
          outcome: "unfinished",
          hash: e.hash,
        };
        if (e.by) run.by = { user: stripUserinfo(e.by.user), host: stripUserinfo(e.by.host), pid: e.by.pid };
        if (e.syncbook !== undefined) run.syncbook = e.syncbook;
        this.#runs.push({ run, started: e, polls: new Map() });
        if (n > 1)
          this.#markers.push({ t, kind: "run", label: `run ${n}${e.mode === "resume" ? " (--resume)" : ""}`, run: n });
        for (const st of e.steps) {
          const step = this.#step(st.index, st.id, st.kind, redactText(st.title));
          step.kind ||= st.kind;
        }
        for (const i of e.instances) {
          const was = this.#instances.get(i.index);
          if (!was) this.#instances.set(i.index, cleanInstance(i));
          // the report keys an instance by its place across runs: a later run at that place on
          // another service (or a loopback respelling, not known to be the same) is said, never merged silently
          else if (sameService(was.url, i.url) !== "same")
            this.#warnings.push(
              `run ${n} lists ${stripUserinfo(i.url)} as instance #${i.index + 1}, where an earlier run had ${was.url}: not known to be one service; the report names it as the first run did`,
            );
        }
        this.#states.clear();
        break;
      }
      case "run.finished": {
        if (cur) {
          cur.finished = e;
          cur.run.outcome = e.outcome;
          cur.run.exitCode = e.exitCode;
          cur.run.committed = e.committed;
          if (e.message !== undefined) cur.run.message = stripUserinfo(e.message);
          this.#closeRun(cur, e.at);
          if (e.outcome === "interrupted")
            this.#markers.push({ t, kind: "interrupted", label: `run ${cur.run.n} interrupted`, run: cur.run.n });
        }
        break;
      }
      case "step.started": {
        const s = this.#step(e.index, e.id, e.kind, redactText(e.title));
        if (e.kind) s.kind = e.kind;
        s.outcome = "running";
        s.start = t;
        delete s.end;
        delete s.durationMs;
        delete s.error;
        delete s.hint;
        delete s.place;
        delete s.reason;
        s.attempts.push({ run: cur?.run.n ?? 1, start: t, outcome: "running" });
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
        let a = s.attempts[s.attempts.length - 1];
        if (!a || a.end !== undefined) {
          a = { run: cur?.run.n ?? 1, start: s.start, outcome: e.outcome };
          s.attempts.push(a);
        }
        a.end = t;
        a.durationMs = e.durationMs;
        a.outcome = e.outcome;
        if (e.error !== undefined) a.error = stripUserinfo(e.error);
        const k = running.lastIndexOf(e.index);
        if (k >= 0) running.splice(k, 1);
        if (e.outcome === "failed")
          this.#markers.push({ t, kind: "failed", label: `failed: ${e.id}`, ...(cur ? { run: cur.run.n } : {}) });
        break;
      }
      case "step.skipped": {
        const s = this.#step(e.index, e.id);
        const reason = stripUserinfo(e.reason);
        // a later run skips what an earlier one did: the step keeps its own outcome and times
        if (s.attempts.length > 0 && s.outcome !== "running" && s.outcome !== "pending") {
          s.resumeNote = `run ${cur?.run.n ?? "?"}: ${reason}`;
          break;
        }
        s.outcome = "skipped";
        s.reason = s.attempts.length > 0 ? `${reason} (run ${cur?.run.n ?? "?"})` : reason;
        if (s.attempts.length === 0) {
          s.start = t;
          s.end = t;
          s.durationMs = 0;
        }
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
        const fields = progressFields(e.progress);
        s.samples.push({ t, at: e.at, ...fields });
        this.#version.add(e.progress);
        if (fields.state !== undefined) this.#states.set(inst.index, fields.state);
        const n = Math.max(this.#instances.size, cur?.started?.instances.length ?? 0);
        if (
          !this.#committedMarked &&
          this.#states.size >= n &&
          [...this.#states.values()].every((st) => st === "COMMITTED")
        ) {
          this.#committedMarked = true;
          this.#markers.push({ t, kind: "committed", label: "COMMITTED", ...(cur ? { run: cur.run.n } : {}) });
        }
        break;
      }
      case "poll.failed": {
        const f: ReportPollFailure = {
          t,
          target: e.target,
          label: e.instance ? instanceLabel(cleanInstance(e.instance)) : e.target,
          path: stripUserinfo(e.path),
          error: stripUserinfo(e.error),
          durationMs: e.durationMs,
        };
        if (cur) f.run = cur.run.n;
        if (e.status !== undefined) f.status = e.status;
        this.#pollFailures.push(f);
        break;
      }
      case "polls.summary":
        if (cur) for (const p of e.polls) cur.polls.set(pollKey(p), p);
        break;
      case "verifier.sampled":
        this.#verifier.push({ t, at: e.at, ...verifierFields(e.progress) });
        break;
      case "verifier.baseline":
        if (e.oldRelease)
          this.#verifierSeen.push({
            t,
            text: "progress answered an empty HTTP 500 before the check: releases v0.1.6 to v0.2.0 do (fixed in v0.2.1, the release to use); taken as not started, and the check was sent",
          });
        break;
      case "verifier.restarted":
        this.#verifierSeen.push({
          t,
          text: `the verifier restarted (${e.why}): ${e.followed > e.limit ? `not followed (${e.limit} restarts were followed already)` : `followed (${e.followed} of at most ${e.limit}): a check to the new process, then writesOff again`}`,
        });
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
        this.#markers.push({ t, kind: "commit-sent", label: "commit sent", ...(cur ? { run: cur.run.n } : {}) });
        break;
      case "window.opened":
        this.#markers.push({ t, kind: "writes-stopped", label: "writes stopped", ...(cur ? { run: cur.run.n } : {}) });
        break;
      case "window.closed":
        if (e.reason === "canWrite") {
          const m: ReportMarker = {
            t: this.#t(e.seenAt),
            kind: "can-write",
            label: "canWrite",
            ...(cur ? { run: cur.run.n } : {}),
          };
          // the read that completes canWrite on every instance may show every one COMMITTED too:
          // canWrite comes first (service facts: "COMMITTED comes later")
          const last = this.#markers[this.#markers.length - 1];
          if (last?.kind === "committed" && last.t === m.t) this.#markers.splice(-1, 0, m);
          else this.#markers.push(m);
        }
        break;
      case "window.writes-on":
        this.#markers.push({ t, kind: "writes-on", label: "writes on", ...(cur ? { run: cur.run.n } : {}) });
        break;
      case "hook.started":
        this.#hooks.push({
          index: e.index,
          id: e.id,
          use: e.use,
          undo: e.undo,
          ...(e.command !== undefined ? { command: e.command } : {}),
          start: t,
        });
        if (e.undo)
          this.#markers.push({
            t,
            kind: "undo",
            label: `undo: ${e.id}`,
            ...(cur ? { run: cur.run.n } : {}),
          });
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
      case "notification.sent":
      case "notification.settled":
        this.#deliveries.push(e);
        break;
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

  #pollStats(): ReportPolls[] {
    const merged = new Map<PollKey, ReportPolls & { totalMs: number }>();
    for (const r of this.#runs) {
      for (const [key, p] of r.polls) {
        const label = p.instance
          ? instanceLabel(this.#instances.get(p.instance.index) ?? cleanInstance(p.instance))
          : p.target;
        const m = merged.get(key) ?? {
          target: p.target,
          ...(p.instance ? { instance: this.#instances.get(p.instance.index) ?? cleanInstance(p.instance) } : {}),
          label,
          path: stripUserinfo(p.path),
          count: 0,
          failed: 0,
          maxMs: 0,
          totalMs: 0,
          histogram: [],
        };
        m.count += p.count;
        m.failed += p.failed;
        m.maxMs = Math.max(m.maxMs, p.maxMs);
        m.totalMs += p.totalMs;
        m.histogram = mergeHistograms(m.histogram, p.histogram);
        merged.set(key, m);
      }
    }
    // journals of older runners recorded polls as GET requests: counted the same way
    for (const r of this.#requests.values()) {
      if (r.method !== "GET" || (r.target !== "service" && r.target !== "verifier")) continue;
      const key = pollKey({ target: r.target, ...(r.instance ? { instance: r.instance } : {}), path: r.path });
      const m = merged.get(key) ?? {
        target: r.target,
        ...(r.instance ? { instance: r.instance } : {}),
        label: r.instance ? instanceLabel(r.instance) : r.target,
        path: r.path,
        count: 0,
        failed: 0,
        maxMs: 0,
        totalMs: 0,
        histogram: [],
      };
      m.count++;
      if (!r.answer?.ok) m.failed++;
      if (r.answer) {
        m.totalMs += r.answer.durationMs;
        m.maxMs = Math.max(m.maxMs, r.answer.durationMs);
        m.histogram = mergeHistograms(m.histogram, [[r.answer.durationMs, 1]]);
      }
      merged.set(key, m);
    }
    return [...merged.values()]
      .sort(
        (a, b) =>
          (a.target === b.target ? 0 : a.target === "service" ? -1 : 1) ||
          (a.instance?.index ?? 0) - (b.instance?.index ?? 0) ||
          a.path.localeCompare(b.path),
      )
      .map(({ totalMs, ...m }) => {
        const out: ReportPolls = { ...m };
        const p50 = histogramPercentile(m.histogram, 50, m.maxMs);
        const p95 = histogramPercentile(m.histogram, 95, m.maxMs);
        if (p50 !== undefined) out.p50Ms = p50;
        if (p95 !== undefined) out.p95Ms = p95;
        if (m.count > 0) out.meanMs = Math.round((totalMs / m.count) * 100) / 100;
        return out;
      });
  }

  #record(started: RunEventOf<"run.started"> | undefined, decisions: ReportDecision[]): ReportRecord {
    const by: ReportRecord["by"] = [];
    for (const r of this.#runs) {
      if (!r.run.by) continue;
      const same = by.find((b) => b.user === r.run.by!.user && b.host === r.run.by!.host);
      if (same) same.runs.push(r.run.n);
      else by.push({ user: r.run.by.user, host: r.run.by.host, runs: [r.run.n] });
    }
    const last =
      this.#runs
        .map((r) => r.started)
        .filter((x) => x !== undefined)
        .at(-1) ?? started;
    const rec: ReportRecord = {
      runbook: {
        name: stripUserinfo(last?.runbook ?? "(unknown runbook)"),
        file: stripUserinfo(last?.file ?? ""),
        hash: last?.hash ?? "",
        ...(last?.format !== undefined ? { format: last.format } : {}),
        ...(last?.serviceVersion !== undefined ? { serviceVersion: last.serviceVersion } : {}),
      },
      by,
      syncbook: [...new Set(this.#runs.flatMap((r) => (r.run.syncbook ? [r.run.syncbook] : [])))],
      interlocks: decisions.flatMap((d, i) =>
        d.kind === "interlock" || d.kind === "identity" || d.kind === "force" ? [i] : [],
      ),
    };
    const seen = this.#version.seen();
    if (seen.answers > 0) {
      rec.serviceVersionSeen = seen;
      const mismatch = declaredMismatch(rec.runbook.serviceVersion, seen);
      if (mismatch) rec.serviceVersionMismatch = mismatch;
    }
    if (this.#verifierSeen.length > 0) rec.verifierSeen = this.#verifierSeen.map((x) => ({ ...x }));
    const v = this.#verifier[this.#verifier.length - 1];
    if (v)
      rec.verifier = {
        t: v.t,
        ...(v.phase !== undefined ? { phase: v.phase } : {}),
        ...(v.error !== undefined ? { error: v.error } : {}),
        counters: { ...v.counters },
      };
    return rec;
  }

  /**
   * The report of the events so far. A view, not a copy: later `add` calls may change objects in
   * it (a step's outcome, a request's answer); `structuredClone` it to keep a snapshot.
   */
  build(): Report {
    const first = this.#runs[0];
    const lastRun = this.#run;
    const started = first?.started;
    const finished = lastRun?.finished;
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
    const runs = this.#runs.map((r) => ({
      ...r.run,
      durationMs: r.finished ? r.finished.durationMs : Math.max(0, r.run.end - r.run.start),
    }));
    const polls = this.#pollStats();
    const pollCount = polls.reduce((n, p) => n + p.count, 0);
    const pollFailed = polls.reduce((n, p) => n + p.failed, 0);
    // legacy GET requests are in both `requests` and `polls`: count them once
    const commands = reqs.filter((r) => r.method !== "GET");
    const decisions = [...this.#decisions];
    const lastAt = this.#lastAt ?? t0;
    const windows = this.#window.windows(lastAt);
    const report: Report = {
      version: REPORT_VERSION,
      runbook: stripUserinfo(started?.runbook ?? "(unknown runbook)"),
      file: stripUserinfo(started?.file ?? ""),
      hash: lastRun?.started?.hash ?? "",
      mode: started?.mode ?? "unknown",
      instances: [...this.#instances.values()].sort((a, b) => a.index - b.index),
      startedAt: t0,
      durationMs: runs.length <= 1 && finished ? finished.durationMs : Math.max(0, (finished?.at ?? lastAt) - t0),
      outcome: finished?.outcome ?? "unfinished",
      committed: this.#runs.some((r) => r.finished?.committed === true) || (!finished && committedSeen),
      steps,
      requests: reqs,
      decisions,
      hooks: [...this.#hooks],
      commits: [...this.#commits],
      progress: series.map((x) => ({ ...x, samples: [...x.samples] })),
      verifierSamples: [...this.#verifier],
      logs: [...this.#logs],
      runs,
      markers: [...this.#markers].sort((a, b) => a.t - b.t),
      windows,
      polls,
      pollFailures: [...this.#pollFailures],
      record: this.#record(started, decisions),
      counts: {
        events: this.#count,
        requests: commands.length + pollCount,
        unanswered: reqs.filter((r) => !r.answer).length,
        failedRequests: commands.filter((r) => r.answer && !r.answer.ok).length + pollFailed,
        commands: commands.length,
        polls: pollCount,
        failedPolls: pollFailed,
      },
      warnings,
    };
    for (const j of this.#clock.jumps()) warnings.push(jumpWarning(j, t0));
    const notifications = deliveryReport(this.#deliveries);
    if (notifications) {
      report.notifications = notifications;
      for (const n of notifications.notDelivered) warnings.push(`notification not delivered: ${n}`);
    }
    const w = windows[windows.length - 1];
    if (w) report.window = w;
    if (started?.verifier !== undefined) report.verifier = stripUserinfo(started.verifier);
    if (finished) {
      report.finishedAt = finished.at;
      report.exitCode = finished.exitCode;
      if (finished.message !== undefined) report.message = stripUserinfo(finished.message);
      if (finished.aborted === true) report.aborted = true;
    }
    if (failed) report.failedStep = failed.index;
    return report;
  }
}

/**
 * Builds the report of one run from its events, in any order (sorted by `seq`). Pure: the
 * events are not modified, every payload copied into the report is redacted again.
 */
/**
 * The report of `events`; `warnings` (the journal reader's) come first in its warnings. Never a
 * spread of them into a call: a damaged journal can give any number (a stack overflow at 150,000).
 */
export function buildReport(events: readonly RunEvent[], options: { warnings?: readonly string[] } = {}): Report {
  const b = new ReportBuilder();
  for (const e of [...events].sort((x, y) => x.seq - y.seq || x.at - y.at)) b.add(e);
  const report = b.build();
  if (options.warnings?.length) report.warnings = options.warnings.concat(report.warnings);
  return report;
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
