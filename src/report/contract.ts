/**
 * report.json's contract: the report's types and its format version, what the JSON, JUnit and
 * HTML writers render and what a CI job or a wave reads. `model.ts` folds the run's events into it.
 *
 * Times: `at` is the event's own clock (epoch ms in practice); every series also carries `t`,
 * milliseconds since the run started, so charts and tables never depend on the wall clock.
 */
import type { InstanceRef, Place, RunEventOf } from "../events.js";
import type {
  ModelGap,
  ModelRun,
  RunOutcome as ModelRunOutcome,
  StepOutcome as ModelStepOutcome,
} from "../model/contract.js";
import type { WriteStopWindow } from "../fleet/window.js";
import type { ServiceVersionSeen } from "./service-version.js";

export const REPORT_VERSION = 1;

/** A step's fate: the runner's outcomes, plus `pending` (never reached) and `running` (no end event: a crash). */
export type StepOutcome = ModelStepOutcome;
/** The run's fate: the runner's outcomes, plus `unfinished` (the events end before `run.finished`). */
export type RunOutcome = ModelRunOutcome;

/** One run of the step (a resumed cutover may run a step in several runs). */
export interface StepAttempt {
  /** 1-based run number (`Report.runs`). */
  run: number;
  start: number;
  end?: number;
  durationMs?: number;
  outcome: StepOutcome;
  error?: string;
}

export interface ReportStep {
  index: number;
  id: string;
  kind: string;
  title: string;
  /** The latest attempt's outcome (a step done in an earlier run and skipped by the resume keeps its own). */
  outcome: StepOutcome;
  /** Every run of it, in order (empty: never started). */
  attempts: StepAttempt[];
  /** Why a later run did not run it again (`run 2: done in an earlier run (journal)`). */
  resumeNote?: string;
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
  /**
   * The current generation's documents (`generationStats`), not the verification's total: compared,
   * of its total (generation 0: the estimated count of the collections sized so far; later: the
   * documents to recheck). src/text.ts `verifierDocsText` says what they mean.
   */
  docsCompared?: number;
  totalDocs?: number;
  /** Generation 0's final documents (`gen0Stats`: from generation 1, verifier v0.1.10 and later). */
  gen0DocsCompared?: number;
  gen0TotalDocs?: number;
}

export interface ReportHook {
  index: number;
  id: string;
  use: string;
  undo: boolean;
  /** An undo's call as a command an operator can run by hand (redacted), when its hook makes one. */
  command?: string;
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

/** One run of the cutover: a journal resumed after an interruption holds several. */
export interface ReportRun {
  /** 1-based. */
  n: number;
  mode: RunEventOf<"run.started">["mode"] | "unknown";
  /** An `--abort` run (its mode is `resume`). */
  abort?: true;
  /** ms since the first event (the story's time axis). */
  start: number;
  /** Its last event (run.finished, or the last event before the next run: a crash). */
  end: number;
  startedAt: number;
  durationMs: number;
  /** `unfinished`: no run.finished (a crash, a kill, a journal cut short). */
  outcome: RunOutcome;
  /** How it ended, in one word (src/model/contract.ts): `no-word` when a later run started and it never finished. */
  ended?: ModelRun["ended"];
  /** The journal it wrote, when the report was built from journals. */
  journal?: string;
  /** A command that reached part of the fleet. */
  split?: string;
  /** The `--to` step it stopped at before the runbook's end: the cutover goes on (`--resume`). */
  to?: string;
  exitCode?: number;
  /** An `--abort` that undid nothing since the fleet ruled the write stop's undo out. */
  undoKeptOff?: true;
  committed?: boolean;
  /** Not committed, and a commit it sent or carried may hold, as its end said. */
  commitInDoubt?: true;
  message?: string;
  /** Who ran it (user, host, pid), which syncbook, which runbook (hash). */
  by?: { user: string; host: string; pid: number };
  syncbook?: string;
  hash?: string;
}

/** Something to see on the time axis. */
export interface ReportMarker {
  t: number;
  kind:
    | "run"
    | "interrupted"
    | "crashed"
    | "undo"
    | "writes-stopped"
    | "commit-sent"
    | "can-write"
    | "committed"
    | "writes-on"
    | "failed";
  label: string;
  run?: number;
}

/** Progress reads of one target, instance and endpoint, over every run. */
export interface ReportPolls {
  target: "service" | "verifier";
  instance?: InstanceRef;
  /** The instance's label, or `verifier`. */
  label: string;
  path: string;
  count: number;
  failed: number;
  /** Percentiles from the latency histogram (within one bucket, ≈19 %), ms. */
  p50Ms?: number;
  p95Ms?: number;
  maxMs: number;
  meanMs?: number;
  histogram: [number, number][];
}

export interface ReportPollFailure {
  t: number;
  run?: number;
  target: "service" | "verifier";
  label: string;
  path: string;
  status?: number;
  error: string;
  durationMs: number;
}

/** For the record: what a team files with the window. */
export interface ReportRecord {
  runbook: { name: string; file: string; hash: string; format?: number; serviceVersion?: string };
  /** Distinct (user, host) pairs of the runs, in order. */
  by: { user: string; host: string; runs: number[] }[];
  syncbook: string[];
  /** The service version the progress answers fit, and a mismatch with the declared one. */
  serviceVersionSeen?: ServiceVersionSeen;
  serviceVersionMismatch?: string;
  /** Every interlock, identity and force decision, with its reason (indexes into `decisions`). */
  interlocks: number[];
  /** The verifier's last progress: phase and counters. */
  verifier?: { t: number; phase?: string; error?: string; counters: Record<string, number> };
  /** What the run saw of the verifier's process and release: restarts it followed, the old releases' empty HTTP 500. */
  verifierSeen?: { t: number; text: string }[];
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
  /** The `--journal-dir` the run of `file` was given, as typed: the commands the report offers repeat it (src/next-run.ts `runbookArgs`). */
  journalDir?: string;
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
  /**
   * Not committed, and a commit of the sync that runs now may hold (the read model's
   * `cutover.commitInDoubt`): sent, no answer accepted it and no read showed it taking effect,
   * yet none refused it. `instances`: those that may hold it (empty: a run said so at its end).
   */
  commitInDoubt?: { instances: string[] };
  /**
   * A reverse whose step did not end and which may have reached these instances (the read model's
   * `cutover.reverseInDoubt`): the sync may run the other way now, `committed` notwithstanding.
   */
  reverseInDoubt?: { step: string; instances: string[] };
  /**
   * Whether this cutover is verified (src/steps/kit/earned.ts `verification`): a `verify` step
   * passed on this cutover's verification result (`verifier.verified`, when and at which step;
   * neither when a `--from` run carried it, `verifier.carried`, from an earlier journal this report
   * does not hold); otherwise `verified: false` and why. A report never calls a cutover without it safe.
   */
  /**
   * `filter`: verified with the check's filter (JSON), only the documents it matches. `headline`:
   * the verdict in capitals (`VERIFIED`, `VERIFIED (FILTERED)`, `NOT VERIFIED`) where every output
   * says it, the banner and the title too (src/steps/kit/earned.ts `verificationShown`: the
   * destination may take writes, or the last run ended ok at the runbook's end); absent before.
   */
  verification: { verified: boolean; why?: string; t?: number; step?: string; filter?: string; headline?: string };
  message?: string;
  /** The last run was `--abort`: the operator called the cutover off (its undos ran, nothing was sent). */
  aborted?: true;
  /** The last run's undo of the write stop was ruled out by a commit that took effect or may (`run.finished.undoKeptOff`): writes stay stopped on purpose. */
  undoKeptOff?: true;
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
  /** Every run of the cutover on one time axis (a resumed journal holds several). */
  runs: ReportRun[];
  markers: ReportMarker[];
  /** The write-stop window (the last, if writes were stopped more than once), and every one. */
  window?: WriteStopWindow;
  windows: WriteStopWindow[];
  /** Progress reads per instance and endpoint (counts, failures, latency) and each failure. */
  polls: ReportPolls[];
  pollFailures: ReportPollFailure[];
  record: ReportRecord;
  /**
   * requests: commands and polls; failedRequests: those that failed (a poll's failure included);
   * commands: entries of `requests`; polls / failedPolls: progress reads.
   */
  counts: {
    events: number;
    requests: number;
    unanswered: number;
    failedRequests: number;
    commands: number;
    polls: number;
    failedPolls: number;
  };
  /** Problems found while building (events out of order, duplicate ids, missing run.started). */
  warnings: string[];
  /** The run's notifications, when it journaled any: how many were delivered, and each that was not (src/plugin/deliveries.ts). */
  notifications?: { delivered: number; notDelivered: string[] };
  /**
   * The cutover these runs belong to: its id (the same in every run of it), the journals the
   * report was built from, and, in one run's report of a cutover with other journals, the command
   * that builds the cutover's report from every run of it.
   */
  cutover?: { id?: string; journals: string[]; report?: string };
  /** Time in which no runner was alive, between runs (`t`: ms since the first event; `from`/`to`: epoch ms). */
  gaps?: (ModelGap & { t: number })[];
  /** Every question put to a person, and who answered it when. */
  prompts?: ReportPrompt[];
}

export interface ReportPrompt {
  t: number;
  at: number;
  kind: "confirm" | "--step";
  index?: number;
  id?: string;
  question?: string;
  answer: "yes" | "no";
  /** `--yes`, or the run's `user@host`. */
  by: string;
  run: number;
  waitedMs?: number;
}
