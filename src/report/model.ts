/**
 * The report model: one pure function from the run's events (live or from a journal) to a
 * timeline (`contract.ts`, report.json's types) that the JSON, JUnit and HTML writers render.
 * Nothing here does I/O.
 */
import { sameService } from "../instance-identity.js";
import { instanceLabel, type InstanceRef, type Place, type RunEvent, type RunEventOf } from "../events.js";
import { generationDocs, lagSeconds, pingLatencyMs } from "../api/progress.js";
import { histogramPercentile, mergeHistograms } from "../fleet/polls.js";
import { commitInDoubtFor, CutoverFold, runsCommitted } from "../model/fold.js";
import type { CutoverModel, ModelRun, ModelStep } from "../model/contract.js";
import { formatDuration } from "../runbook/duration.js";
import { createClockCorrector, jumpWarning } from "./durations.js";
import { ServiceVersionReader, declaredMismatch } from "./service-version.js";
import { redactLeaves, redactSecretFields as redactValue, stripUserinfo } from "../redact.js";
import { modelVerification, verificationShown } from "../steps/index.js";
import {
  REPORT_VERSION,
  type InstanceSeries,
  type ProgressSample,
  type Report,
  type ReportDecision,
  type ReportHook,
  type ReportMarker,
  type ReportPollFailure,
  type ReportPolls,
  type ReportRecord,
  type ReportRequest,
  type ReportRun,
  type ReportStep,
  type StepAttempt,
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
  const docs = generationDocs(o?.generationStats);
  if (docs) {
    out.docsCompared = docs.compared;
    out.totalDocs = docs.total;
  }
  const gen0 = generationDocs(o?.gen0Stats);
  if (gen0) {
    out.gen0DocsCompared = gen0.compared;
    out.gen0TotalDocs = gen0.total;
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

/** Per-run poll counts: each runner's `polls.summary` is cumulative from its own start. */
type PollKey = string;
const pollKey = (p: { target: string; instance?: { index: number }; path: string }): PollKey =>
  `${p.target}\u0000${p.instance?.index ?? ""}\u0000${p.path}`;

export interface ReportBuilderOptions {
  /** Where each journal's events begin, when they come from several (`joinJournals`, src/model/fold.ts). */
  journals?: readonly { file: string; fromSeq: number }[];
  /** The command that builds the cutover's report, when this report is one run's of a cutover with others. */
  cutoverReport?: string;
}

/**
 * Folds events into a report one at a time, so a live run keeps the model, not the raw events.
 * Feed events in `seq` order (the runner emits them so; `buildReport` sorts a journal's).
 *
 * The cutover's runs, steps (every attempt), hooks, commits, prompts, the write-stop window and
 * the time with no runner alive are the read model's (src/model/fold.ts, the one fold every
 * reader shares); the report adds its own view: the time axis safe from clock steps, every
 * request and answer, the progress series, markers, poll statistics and the record.
 */
export class ReportBuilder {
  readonly #warnings: string[] = [];
  readonly #fold: CutoverFold;
  readonly #requests = new Map<number, ReportRequest>();
  /** Per step: the requests sent while it ran, the decisions taken for it. */
  readonly #stepRequests = new Map<number, number[]>();
  readonly #stepDecisions = new Map<number, number[]>();
  readonly #decisions: ReportDecision[] = [];
  readonly #series = new Map<number, InstanceSeries>();
  readonly #verifier: VerifierSample[] = [];
  readonly #verifierSeen: { t: number; text: string }[] = [];
  readonly #instances = new Map<number, InstanceRef>();
  /** Per run (its n): the last polls.summary, by key. */
  readonly #polls = new Map<number, Map<PollKey, RunEventOf<"polls.summary">["polls"][number]>>();
  readonly #startedEvents: RunEventOf<"run.started">[] = [];
  readonly #markers: ReportMarker[] = [];
  readonly #pollFailures: ReportPollFailure[] = [];
  readonly #version = new ServiceVersionReader();
  readonly #states = new Map<number, string>();
  readonly #clock = createClockCorrector();
  readonly #cutoverReport: string | undefined;
  #finished: RunEventOf<"run.finished"> | undefined;
  #committedMarked = false;
  #t0: number | undefined;
  #lastAt: number | undefined;
  #lastSeq = -Infinity;
  #count = 0;

  constructor(opts: ReportBuilderOptions = {}) {
    this.#fold = new CutoverFold({ traits: traitsOf, ...(opts.journals ? { journals: opts.journals } : {}) });
    this.#cutoverReport = opts.cutoverReport;
  }

  /** Extra warnings to show in the report (e.g. a journal's truncated last line). */
  warn(message: string): void {
    this.#warnings.push(message);
  }

  get eventCount(): number {
    return this.#count;
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
    const prev = this.#fold.run;
    const running = this.#fold.current;
    this.#fold.apply(e);
    const cur = this.#fold.run;
    const run = cur ? { run: cur.n } : {};
    switch (e.type) {
      case "run.started": {
        if (prev && prev.ended === "no-word")
          this.#markers.push({
            t: this.#t(prev.lastAt),
            kind: "crashed",
            label: `run ${prev.n} ended without a word (crash, kill -9, lost host)`,
            run: prev.n,
          });
        const n = cur!.n;
        this.#startedEvents.push(e);
        this.#polls.set(n, new Map());
        this.#finished = undefined;
        if (n > 1)
          this.#markers.push({
            t,
            kind: "run",
            label: `run ${n}${e.abort === true ? " (--abort)" : e.mode === "resume" ? " (--resume)" : ""}`,
            run: n,
          });
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
      case "run.finished":
        if (cur) {
          this.#finished = e;
          if (e.outcome === "interrupted")
            this.#markers.push({ t, kind: "interrupted", label: `run ${cur.n} interrupted`, run: cur.n });
        }
        break;
      case "step.finished":
        if (e.outcome === "failed") this.#markers.push({ t, kind: "failed", label: `failed: ${e.id}`, ...run });
        break;
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
        if (running !== undefined) {
          r.step = running;
          push(this.#stepRequests, running, e.id);
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
        const n = Math.max(this.#instances.size, this.#startedEvents.at(-1)?.instances.length ?? 0);
        if (
          !this.#committedMarked &&
          this.#states.size >= n &&
          [...this.#states.values()].every((st) => st === "COMMITTED")
        ) {
          this.#committedMarked = true;
          this.#markers.push({ t, kind: "committed", label: "COMMITTED", ...run });
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
        if (cur) f.run = cur.n;
        if (e.status !== undefined) f.status = e.status;
        this.#pollFailures.push(f);
        break;
      }
      case "polls.summary":
        if (cur) for (const p of e.polls) this.#polls.get(cur.n)?.set(pollKey(p), p);
        break;
      case "verifier.sampled":
        this.#verifier.push({ t, at: e.at, ...verifierFields(e.progress) });
        break;
      case "verifier.baseline":
        if (e.oldRelease)
          this.#verifierSeen.push({
            t,
            text: "progress answered an empty HTTP 500 before the check: releases v0.1.6 to v0.2.0 do (fixed in v0.2.1, the release to use), whether or not their metadata holds an earlier verification; the check was sent, and its first answer judged",
          });
        else if (e.unproven === "persisted")
          this.#verifierSeen.push({
            t,
            text: "before the check the verifier showed the counters of an earlier verification (with or without --clean they look the same until a check); the check was sent, and its first answer judged",
          });
        break;
      case "verifier.origin":
        this.#verifierSeen.push({
          t,
          text: e.ours
            ? `the check's first answer showed ${stripUserinfo(e.why)}`
            : `refused: the check's verification cannot count as this cutover's (${stripUserinfo(e.why)})`,
        });
        break;
      case "verifier.restarted":
        this.#verifierSeen.push({
          t,
          text: `the verifier restarted (${e.why}): ${e.followed > e.limit ? `not followed (${e.limit} restarts were followed already)` : `followed (${e.followed} of at most ${e.limit}): a check to the new process, then writesOff again`}`,
        });
        break;
      case "decision": {
        const d: ReportDecision = { t, kind: e.kind, ok: e.ok, reason: stripUserinfo(e.reason) };
        if (e.id !== undefined) d.id = e.id;
        if (e.check !== undefined) d.check = e.check;
        const index = e.index ?? running;
        if (index !== undefined) {
          d.index = index;
          const s = this.#fold.step(index);
          if (s) {
            d.id ??= s.id;
            push(this.#stepDecisions, index, this.#decisions.length);
          }
        }
        this.#decisions.push(d);
        break;
      }
      case "commit.sent":
        this.#markers.push({ t, kind: "commit-sent", label: "commit sent", ...run });
        break;
      case "window.opened":
        // when the stop hook succeeded, not when the check after it saw writes stopped
        this.#markers.push({
          t: e.openedAt !== undefined ? this.#t(e.openedAt) : t,
          kind: "writes-stopped",
          label: "writes stopped",
          ...run,
        });
        break;
      case "window.closed":
        // the window closed on COMMITTED: the committed marker already says when
        if (e.reason === "canWrite") {
          const m: ReportMarker = { t: this.#t(e.seenAt), kind: "can-write", label: "canWrite", ...run };
          // the read that shows the first process's canWrite may show it COMMITTED too:
          // canWrite comes first (service facts: "COMMITTED comes later")
          const last = this.#markers[this.#markers.length - 1];
          if (last?.kind === "committed" && last.t === m.t) this.#markers.splice(-1, 0, m);
          else this.#markers.push(m);
        }
        break;
      case "window.writes-on":
        this.#markers.push({ t, kind: "writes-on", label: "writes on", ...run });
        break;
      case "hook.started":
        if (e.undo) this.#markers.push({ t, kind: "undo", label: `undo: ${e.id}`, ...run });
        break;
      default:
        break; // unknown (newer) event types are ignored
    }
  }

  #pollStats(): ReportPolls[] {
    const merged = new Map<PollKey, ReportPolls & { totalMs: number }>();
    for (const polls of this.#polls.values()) {
      for (const [key, p] of polls) {
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

  #record(runs: readonly ReportRun[], decisions: ReportDecision[]): ReportRecord {
    const by: ReportRecord["by"] = [];
    for (const r of runs) {
      if (!r.by) continue;
      const same = by.find((b) => b.user === r.by!.user && b.host === r.by!.host);
      if (same) same.runs.push(r.n);
      else by.push({ user: r.by.user, host: r.by.host, runs: [r.n] });
    }
    const last = this.#startedEvents.at(-1);
    const rec: ReportRecord = {
      runbook: {
        name: stripUserinfo(last?.runbook ?? "(unknown runbook)"),
        file: stripUserinfo(last?.file ?? ""),
        hash: last?.hash ?? "",
        ...(last?.format !== undefined ? { format: last.format } : {}),
        ...(last?.serviceVersion !== undefined ? { serviceVersion: last.serviceVersion } : {}),
      },
      by,
      syncbook: [...new Set(runs.flatMap((r) => (r.syncbook ? [r.syncbook] : [])))],
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
   * Verified, or why not, by the one rule (src/steps/kit/earned.ts `verification`) on what the read
   * model holds the runs that count earned (`cutover.verified`, src/model/fold.ts), asked as the
   * watch page asks it (`modelVerification`); the headline's words where it is said (`verificationShown`).
   */
  #verification(model: CutoverModel): Report["verification"] {
    const earned = model.cutover.verified;
    const v = modelVerification(model);
    const shown = verificationShown(model);
    const headline = shown !== undefined ? { headline: shown.headline } : {};
    // the why may quote a verify step's error: userinfo stripped again, as the steps' errors are
    if (!v.verified) return { verified: false, why: stripUserinfo(v.why), ...headline };
    return {
      verified: true,
      ...(v.filter !== undefined ? { filter: v.filter } : {}),
      ...(earned?.at !== undefined ? { t: this.#t(earned.at) } : {}),
      ...(earned?.step !== undefined ? { step: earned.step } : {}),
      ...headline,
    };
  }

  /**
   * The report of the events so far. A view, not a copy: later `add` calls may change objects in
   * it (a step's outcome, a request's answer); `structuredClone` it to keep a snapshot.
   */
  build(): Report {
    const model = this.#fold.view(this.#lastAt);
    const started = this.#startedEvents[0];
    const finished = this.#finished;
    const warnings = [...this.#warnings];
    if (!started && this.#count > 0)
      warnings.unshift("no run.started event: run metadata and the step list are incomplete");
    if (!finished && this.#count > 0)
      warnings.push("no run.finished event: the run did not end cleanly (crash, kill, or a journal cut short)");
    const t0 = this.#t0 ?? 0;
    const t = (at: number): number => this.#t(at);
    const reqs = [...this.#requests.values()].sort((a, b) => a.id - b.id);
    const steps = model.steps.map((s) => this.#reportStep(s, t));
    const failed = steps.find((s) => s.outcome === "failed" || s.outcome === "interrupted" || s.outcome === "running");
    const series = [...this.#series.values()].sort((a, b) => a.instance.index - b.instance.index);
    const committedSeen = series.some((s) => s.samples.some((x) => x.state === "COMMITTED"));
    const runs = model.runs.map((r) => reportRun(r, t));
    const polls = this.#pollStats();
    const pollCount = polls.reduce((n, p) => n + p.count, 0);
    const pollFailed = polls.reduce((n, p) => n + p.failed, 0);
    // legacy GET requests are in both `requests` and `polls`: count them once
    const commands = reqs.filter((r) => r.method !== "GET");
    const decisions = [...this.#decisions];
    const lastAt = this.#lastAt ?? t0;
    const windows = model.windows;
    // an instance's acceptance the journal shows counts whatever the runs said (the read model's rule)
    const doubt = commitInDoubtFor(model, !finished);
    const committed =
      runsCommitted(model.runs, model.cutover.reversed) ||
      model.cutover.commitAccepted === true ||
      (!finished && (model.cutover.committed || (!model.cutover.reversed && committedSeen)));
    const report: Report = {
      version: REPORT_VERSION,
      runbook: stripUserinfo(started?.runbook ?? "(unknown runbook)"),
      file: stripUserinfo(started?.file ?? ""),
      ...(started?.journalDir !== undefined ? { journalDir: stripUserinfo(started.journalDir) } : {}),
      hash: this.#startedEvents.at(-1)?.hash ?? "",
      mode: started?.mode ?? "unknown",
      instances: [...this.#instances.values()].sort((a, b) => a.index - b.index),
      startedAt: t0,
      durationMs: runs.length <= 1 && finished ? finished.durationMs : Math.max(0, (finished?.at ?? lastAt) - t0),
      outcome: finished?.outcome ?? "unfinished",
      // the sync that runs now: after a reverse, a commit before it was the other sync's
      committed,
      // the events end without the run's end: a commit request not answered was on its way while
      // its runner lived, which a report, read after, cannot tell: in doubt (`commitInDoubtFor`)
      ...(!committed && doubt ? { commitInDoubt: { instances: doubt.instances.map(stripUserinfo) } } : {}),
      ...(model.cutover.reverseInDoubt
        ? {
            reverseInDoubt: {
              step: model.cutover.reverseInDoubt.id,
              instances: model.cutover.reverseInDoubt.instances.map(stripUserinfo),
            },
          }
        : {}),
      verification: this.#verification(model),
      steps,
      requests: reqs,
      decisions,
      hooks: model.hooks.map((h) => {
        const out: ReportHook = {
          index: h.index,
          id: h.id,
          use: h.use,
          undo: h.undo,
          ...(h.command !== undefined ? { command: h.command } : {}),
          start: t(h.startedAt),
        };
        if (h.endedAt !== undefined) out.end = t(h.endedAt);
        if (h.ok !== undefined) out.ok = h.ok;
        if (h.error !== undefined) out.error = stripUserinfo(h.error);
        if (h.durationMs !== undefined) out.durationMs = h.durationMs;
        return out;
      }),
      commits: model.commits.map((c) => ({
        t: t(c.at),
        index: c.index,
        id: c.id,
        instances: c.instances.map(stripUserinfo),
        skewMs: c.skewMs,
      })),
      progress: series.map((x) => ({ ...x, samples: [...x.samples] })),
      verifierSamples: [...this.#verifier],
      logs: model.logs.map((l) => ({
        t: t(l.at),
        level: l.level,
        message: stripUserinfo(l.message),
        ...(l.index !== undefined ? { index: l.index } : {}),
      })),
      runs,
      markers: [...this.#markers].sort((a, b) => a.t - b.t),
      windows,
      polls,
      pollFailures: [...this.#pollFailures],
      record: this.#record(runs, decisions),
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
    const notifications = model.notifications;
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
      if (finished.undoKeptOff === true) report.undoKeptOff = true;
    }
    if (failed) report.failedStep = failed.index;
    this.#cutover(report, model, t);
    return report;
  }

  /** The cutover across its runs: its id, the time no runner was alive, the prompts and who answered them. */
  #cutover(report: Report, model: CutoverModel, t: (at: number) => number): void {
    const journals = [...new Set(model.runs.flatMap((r) => (r.journal !== undefined ? [r.journal] : [])))];
    if (model.cutover.id !== undefined || this.#cutoverReport !== undefined)
      report.cutover = {
        ...(model.cutover.id !== undefined ? { id: model.cutover.id } : {}),
        journals: journals.map(stripUserinfo),
        ...(this.#cutoverReport !== undefined ? { report: this.#cutoverReport } : {}),
      };
    if (model.gaps.length > 0) report.gaps = model.gaps.map((g) => ({ ...g, t: t(g.from) }));
    if (model.prompts.length > 0)
      report.prompts = model.prompts.map((p) => ({
        t: t(p.at),
        at: p.at,
        kind: p.kind,
        ...(p.index !== undefined ? { index: p.index } : {}),
        ...(p.id !== undefined ? { id: p.id } : {}),
        ...(p.question !== undefined ? { question: stripUserinfo(p.question) } : {}),
        answer: p.answer,
        by: stripUserinfo(p.by),
        run: p.run,
        ...(p.waitedMs !== undefined ? { waitedMs: p.waitedMs } : {}),
      }));
  }

  /** A step of the model on the report's time axis, with the requests and decisions the report keeps for it. */
  #reportStep(s: ModelStep, t: (at: number) => number): ReportStep {
    const out: ReportStep = {
      index: s.index,
      id: s.id,
      kind: s.kind,
      title: stripUserinfo(s.title),
      outcome: s.outcome,
      attempts: s.attempts.map((a) => {
        const x: StepAttempt = { run: a.run, start: t(a.startedAt), outcome: a.outcome };
        if (a.endedAt !== undefined) x.end = t(a.endedAt);
        if (a.durationMs !== undefined) x.durationMs = a.durationMs;
        if (a.error !== undefined) x.error = stripUserinfo(a.error);
        return x;
      }),
      requests: [...(this.#stepRequests.get(s.index) ?? [])],
      decisions: [...(this.#stepDecisions.get(s.index) ?? [])],
      slow: s.slow.map((w) => ({ t: t(w.at), stalledForMs: w.stalledForMs, detail: stripUserinfo(w.detail) })),
    };
    if (s.resumeNote !== undefined) out.resumeNote = stripUserinfo(s.resumeNote);
    if (s.startedAt !== undefined) out.start = t(s.startedAt);
    if (s.endedAt !== undefined) out.end = t(s.endedAt);
    if (s.durationMs !== undefined) out.durationMs = s.durationMs;
    if (s.error !== undefined) out.error = stripUserinfo(s.error);
    if (s.hint !== undefined) out.hint = stripUserinfo(s.hint);
    const place = placeFrom(s.place);
    if (place) out.place = place;
    if (s.reason !== undefined) out.reason = stripUserinfo(s.reason);
    if (s.wait)
      out.lastWait = {
        t: t(s.wait.at),
        met: s.wait.met,
        failing: s.wait.failing.map((f) => ({
          instance: stripUserinfo(f.instance),
          condition: f.condition,
          value: redactValue(f.value),
          sinceMs: f.sinceMs,
        })),
      };
    return out;
  }
}

/** A run of the model on the report's time axis. */
function reportRun(r: ModelRun, t: (at: number) => number): ReportRun {
  const start = t(r.startedAt);
  const end = Math.max(start, t(r.lastAt));
  const out: ReportRun = {
    n: r.n,
    mode: r.mode,
    ...(r.abort ? { abort: true as const } : {}),
    start,
    end,
    startedAt: r.startedAt,
    durationMs: r.durationMs ?? Math.max(0, end - start),
    outcome: r.outcome,
    ended: r.ended,
    hash: r.hash,
  };
  if (r.journal !== undefined) out.journal = stripUserinfo(r.journal);
  if (r.exitCode !== undefined) out.exitCode = r.exitCode;
  if (r.undoKeptOff === true) out.undoKeptOff = true;
  if (r.committed !== undefined) out.committed = r.committed;
  if (r.commitInDoubt === true) out.commitInDoubt = true;
  if (r.message !== undefined) out.message = stripUserinfo(r.message);
  if (r.split !== undefined) out.split = stripUserinfo(r.split);
  if (r.to !== undefined) out.to = r.to;
  if (r.by) out.by = { user: stripUserinfo(r.by.user), host: stripUserinfo(r.by.host), pid: r.by.pid };
  if (r.syncbook !== undefined) out.syncbook = r.syncbook;
  return out;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Builds the report of one run from its events, in any order (sorted by `seq`). Pure: the
 * events are not modified, every payload copied into the report is redacted again.
 */
/**
 * The report of `events`; `warnings` (the journal reader's) come first in its warnings. Never a
 * spread of them into a call: a damaged journal can give any number (a stack overflow at 150,000).
 */
export function buildReport(
  events: readonly RunEvent[],
  opts: ReportBuilderOptions & { warnings?: readonly string[] } = {},
): Report {
  const { warnings, ...options } = opts;
  const b = new ReportBuilder(options);
  for (const e of [...events].sort((x, y) => x.seq - y.seq || x.at - y.at)) b.add(e);
  const report = b.build();
  if (warnings?.length) report.warnings = warnings.concat(report.warnings);
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
