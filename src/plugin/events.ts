/**
 * Which notifications a top-level `notify: [{ use, with, on: [...] }]` entry fires on, and the
 * one-line text and severity every notifier gets. `on:` takes run event types
 * (`src/run/events.ts`) plus aliases that name what an operator cares about.
 */
import type { RunEvent, RunEventType } from "../events.js";
import { formatDuration } from "../runbook/duration.js";
import { commitWords, windowEndWords, windowLength, windowLengthWords, writesLeftSentence } from "../writes-words.js";
import type { Notification, NotificationSeverity as Severity } from "./api.js";

/**
 * Every run event type a notifier can be told of (kept in step with `RunEventMap` by the type
 * below): all but the journal's lines of deliveries themselves (src/plugin/deliveries.ts) and of
 * the trace's export (src/trace/index.ts).
 */
const EVENT_TYPES = {
  "run.started": true,
  "run.finished": true,
  "step.started": true,
  "step.skipped": true,
  "step.finished": true,
  "request.sent": true,
  "response.received": true,
  "progress.sampled": true,
  "poll.failed": true,
  "polls.summary": true,
  "verifier.sampled": true,
  "verifier.baseline": true,
  "verifier.writesOff": true,
  "verifier.restarted": true,
  "verifier.carried": true,
  "verifier.origin": true,
  "verifier.verified": true,
  "wait.status": true,
  "wait.slow": true,
  decision: true,
  "commit.sent": true,
  "window.opened": true,
  "window.closed": true,
  "window.writes-on": true,
  "writes.checked": true,
  "hook.started": true,
  "hook.finished": true,
  "hook.process": true,
  log: true,
} as const satisfies Record<
  Exclude<RunEventType, "notification.sent" | "notification.settled" | "trace.exported">,
  true
>;

/** Aliases: a name in `on:` that selects some events of a type. */
export const EVENT_ALIASES = {
  /** `step.finished` with outcome `failed`. */
  "step.failed": (e: RunEvent) => e.type === "step.finished" && e.outcome === "failed",
  /**
   * `run.finished` that failed, or that a signal not from the operator's terminal ended (a SIGHUP:
   * its session dropped; a SIGTERM: a supervisor or `kill`; a SIGINT with no terminal: a CI job
   * cancelled): nobody may be at the terminal. Not an
   * operator's Ctrl-C (`run.interrupted`) nor `--abort` (`run.aborted`), which are their own
   * events: the operator is there, nobody needs paging for it. (A review: a pager on `run.failed`
   * was never told of a SIGHUP that left writes stopped, which pages critical.)
   */
  "run.failed": (e: RunEvent) =>
    e.type === "run.finished" &&
    e.aborted !== true &&
    (e.outcome === "failed" || (e.outcome === "interrupted" && !byOperator(e))),
  /** `run.finished` interrupted, by any signal (a Ctrl-C, a SIGTERM, a SIGHUP, a SIGINT with no terminal; all but the Ctrl-C are `run.failed` too). */
  "run.interrupted": (e: RunEvent) => e.type === "run.finished" && e.outcome === "interrupted",
  /** `run.finished` of `--abort`: the operator called the cutover off. */
  "run.aborted": (e: RunEvent) => e.type === "run.finished" && e.aborted === true,
  /** `run.finished` with application writes still (or maybe) stopped: the application is down. */
  "writes.stopped": (e: RunEvent) => e.type === "run.finished" && e.writes !== undefined,
  /** `run.finished` with outcome `ok`. */
  "run.succeeded": (e: RunEvent) => e.type === "run.finished" && e.outcome === "ok",
  /** `hook.finished` that failed (undo calls included). */
  "hook.failed": (e: RunEvent) => e.type === "hook.finished" && !e.ok,
  /** An undo hook finished (ok or not): writes were switched back on. */
  "undo.finished": (e: RunEvent) => e.type === "hook.finished" && e.undo,
  /** A safety interlock refused (the runner would not start or commit). */
  "interlock.refused": (e: RunEvent) => e.type === "decision" && e.kind === "interlock" && !e.ok,
  /** A warning or error log line. */
  "log.warn": (e: RunEvent) => e.type === "log" && (e.level === "warn" || e.level === "error"),
} as const satisfies Record<string, (e: RunEvent) => boolean>;

/**
 * In `on:`, `notify` selects the messages of `notify` steps (not a run event: a `notify` step
 * with a plain string sends its text to every entry listening to `notify`).
 */
export const NOTIFY_STEP = "notify";

/**
 * In `on:`, `runner.lost` selects `syncbook watch`'s dead-man's switch (`RunnerLost`, api.ts): not
 * a run event either (the runner that would emit it is gone).
 */
export const RUNNER_LOST = "runner.lost";

/**
 * Whether an entry hears of the runner's death: it names `runner.lost`, or it wants to hear of a
 * run that failed (`run.failed`, `run.finished`): a runner killed in the window is a run that failed
 * without a word, and the pager that waits for that word would otherwise never hear of it.
 */
export function hearsRunnerLost(on: readonly string[]): boolean {
  return on.some((n) => n === RUNNER_LOST || n === "run.failed" || n === "run.finished");
}

export type EventSelector = RunEventType | keyof typeof EVENT_ALIASES | typeof NOTIFY_STEP | typeof RUNNER_LOST;

/** Every name `on:` accepts, for lint's "did you mean" and the docs. */
export const EVENT_NAMES: readonly string[] = [
  ...Object.keys(EVENT_TYPES),
  ...Object.keys(EVENT_ALIASES),
  NOTIFY_STEP,
  RUNNER_LOST,
];

export function isEventName(name: string): name is EventSelector {
  return (
    Object.hasOwn(EVENT_TYPES, name) ||
    Object.hasOwn(EVENT_ALIASES, name) ||
    name === NOTIFY_STEP ||
    name === RUNNER_LOST
  );
}

/** A predicate for an `on:` list (unknown names select nothing; lint reports them). */
export function eventMatcher(on: readonly string[]): (e: RunEvent) => boolean {
  const types = new Set<string>();
  const preds: ((e: RunEvent) => boolean)[] = [];
  for (const name of on) {
    if (Object.hasOwn(EVENT_TYPES, name)) types.add(name);
    else if (Object.hasOwn(EVENT_ALIASES, name)) preds.push(EVENT_ALIASES[name as keyof typeof EVENT_ALIASES]);
  }
  return (e) => types.has(e.type) || preds.some((p) => p(e));
}

function stepLabel(e: { index: number; id: string }): string {
  return `step ${e.index + 1} ${e.id}`;
}

/**
 * One human sentence per notification (events are redacted at the source). `rehearsal`: a
 * rehearsal's stand-in line quotes it, so it names no real run's way on (`writesLeftSentence`).
 */
export function describeNotification(n: Notification, runbook: string, rehearsal = false): string {
  switch (n.type) {
    case "notify":
      return n.text;
    case "runner.lost":
      // what happened, what it left, what to do: the three things someone woken at 3 a.m. needs
      return `${runbook}: ${n.headline}. It left: ${n.left.length ? n.left.join("; ") : "nothing known"}.${n.next ? ` Next: ${n.next}` : ""} (told once by syncbook watch)`;
    case "run.started":
      return `${runbook}: ${n.mode} started on ${n.instances.length} instance${n.instances.length === 1 ? "" : "s"} (${n.steps.length} steps)`;
    case "run.finished":
      return runFinishedText(n, runbook, rehearsal);
    case "step.started":
      return `${runbook}: ${stepLabel(n)} started: ${n.title}`;
    case "step.skipped":
      return `${runbook}: ${stepLabel(n)} skipped: ${n.reason}`;
    case "step.finished":
      return `${runbook}: ${stepLabel(n)} ${n.outcome === "ok" ? "done" : n.outcome} after ${formatDuration(n.durationMs)}${n.error ? `: ${n.error}` : ""}${n.hint ? ` (${n.hint})` : ""}`;
    case "request.sent":
      return `${runbook}: ${n.method} ${n.instance ? `${n.instance.name ?? n.instance.url}` : n.target}${n.path}`;
    case "response.received":
      return `${runbook}: answer ${n.status ?? "-"} ${n.ok ? "ok" : `failed${n.error ? `: ${n.error}` : ""}`} from ${n.instance ? (n.instance.name ?? n.instance.url) : n.target}`;
    case "progress.sampled":
      return `${runbook}: progress of ${n.instance.name ?? n.instance.url}`;
    case "poll.failed":
      return `${runbook}: progress read of ${n.instance ? (n.instance.name ?? n.instance.url) : n.target} failed: ${n.error}`;
    case "polls.summary":
      return `${runbook}: ${n.polls.reduce((a, p) => a + p.count, 0)} progress reads, ${n.polls.reduce((a, p) => a + p.failed, 0)} failed`;
    case "verifier.sampled":
      return `${runbook}: verifier progress`;
    case "verifier.baseline":
      return `${runbook}: ${stepLabel(n)} ${n.adopted ? "adopted the verifier's running check" : "starts a verification"} (verifier phase ${n.progress.phase})`;
    case "verifier.writesOff":
      return `${runbook}: ${stepLabel(n)} sends writesOff to the verifier in generation ${n.generation}`;
    case "verifier.restarted":
      return `${runbook}: ${stepLabel(n)}: the verifier restarted (${n.why})`;
    case "verifier.carried":
      return `${runbook}: goes on from the verifier's check its cutover's last run sent (${n.from})`;
    case "verifier.origin":
      return `${runbook}: ${stepLabel(n)}: ${n.ours ? "the verifier's check shows" : "refused: a verification this cutover cannot count as its own:"} ${n.why}`;
    case "verifier.verified":
      return `${runbook}: ${stepLabel(n)}: verified (the verifier's result of this cutover's check, past writesOff's generation ${n.writesOffGeneration})`;
    case "wait.status":
      return `${runbook}: ${stepLabel(n)} ${n.met ? "conditions hold" : `waiting: ${n.failing.map((f) => `${f.instance} ${f.condition} (${JSON.stringify(f.value)})`).join(", ")}`}`;
    case "wait.slow":
      return `${runbook}: ${stepLabel(n)} has made no progress for ${formatDuration(n.stalledForMs)}: ${n.detail}`;
    case "decision":
      return `${runbook}: ${n.kind}${n.check ? ` ${n.check}` : ""} ${n.ok ? "passed" : "refused"}: ${n.reason}`;
    case "commit.sent":
      return `${runbook}: commit sent to ${n.instances.length} instance${n.instances.length === 1 ? "" : "s"} (${stepLabel(n)})`;
    case "window.opened":
      return `${runbook}: application writes stopped (${stepLabel(n)}): the write-stop window is open`;
    case "window.closed":
      return n.reason === "undone"
        ? `${runbook}: application writes are back on the source (undo)${n.openedAt !== undefined ? ` after ${formatDuration(n.seenAt - n.openedAt)} stopped` : ""}: no cutover`
        : n.reason === "by-hand"
          ? `${runbook}: the write stop was ${windowEndWords(n.reason)}: writes stay stopped until a person turns them back on${n.openedAt !== undefined ? ` (stopped ${windowLength(n.seenAt - n.openedAt, { atLeast: true })} so far)` : ""}; no cutover`
          : `${runbook}: the destination takes writes (${windowEndWords(n.reason)})${n.openedAt !== undefined ? `: writes were stopped for ${windowLength(n.seenAt - n.openedAt, n)}${n.unseenMs !== undefined ? ` (its end seen after ${formatDuration(n.unseenMs)} in which no runner read the fleet)` : ""}` : ""}`;
    case "window.writes-on":
      return `${runbook}: application writes are on again (${stepLabel(n)})`;
    case "writes.checked":
      return `${runbook}: the write switch read by ${n.use} (${stepLabel(n)}): ${n.ok ? "writes seen stopped" : "writes not seen stopped"}`;
    case "hook.started":
      return `${runbook}: ${n.undo ? "undo " : ""}hook ${n.use} started (${stepLabel(n)})`;
    case "hook.finished":
      return `${runbook}: ${n.undo ? "undo " : ""}hook ${n.use} ${n.ok ? "done" : `failed: ${n.error ?? "error"}`} (${stepLabel(n)})`;
    case "hook.process":
      return `${runbook}: ${n.undo ? "undo " : ""}hook process ${n.pid} started (${stepLabel(n)})`;
    case "log":
      return `${runbook}: ${n.message}`;
    case "notification.sent":
      return `${runbook}: notification of ${n.about} sent through ${n.use}`;
    case "trace.exported":
      return `${runbook}: ${n.spans.length} span(s) of the trace exported`;
    case "notification.settled":
      return `${runbook}: notification of ${n.about} through ${n.use} ${n.delivered ? "delivered" : `not delivered${n.error ? `: ${n.error}` : ""}`}`;
  }
}

/**
 * A run's end for people on the bridge: writes left stopped first, in words (the application is
 * down: src/writes-words.ts), then how it ended (an operator's Ctrl-C or `--abort` said as the
 * operator's), this run's time and the cutover's across its runs, its write-stop window.
 */
function runFinishedText(
  n: Extract<Notification, { type: "run.finished" }>,
  runbook: string,
  rehearsal: boolean,
): string {
  const how = n.aborted
    ? "called off by the operator (--abort)"
    : n.outcome === "ok"
      ? "finished"
      : n.outcome === "interrupted"
        ? byOperator(n)
          ? "interrupted by the operator"
          : `interrupted by ${n.interruptedBy}${n.interruptedBy === "SIGHUP" ? " (its terminal's session ended: nobody may be at it)" : n.interruptedBy === "SIGINT" && n.noTerminal ? " (no terminal: a CI job cancelled, or a supervisor's stop; nobody may be at it)" : ""}`
        : n.outcome;
  const cutover = n.cutover ? `; the cutover: ${formatDuration(n.cutover.durationMs)} over ${n.cutover.runs} runs` : "";
  const window = n.window ? `; ${windowLengthWords(n.window)}` : "";
  return `${runbook}: ${n.writes ? `${writesLeftSentence(n.writes, n.committed, n.commitInDoubt === true, n.undoByHand, rehearsal)}. ` : ""}run ${how} (${commitWords(n)}) after ${formatDuration(n.durationMs)}${cutover}${window}${n.message ? `: ${n.message}` : ""}`;
}

/** An interrupt from the operator's terminal (Ctrl-C), or one whose signal is not known. */
function byOperator(n: { interruptedBy?: string; noTerminal?: true }): boolean {
  return n.interruptedBy === undefined || (n.interruptedBy === "SIGINT" && n.noTerminal !== true);
}

/** How loud a notification is: pagers and chat colour by it. */
export function severityOf(n: Notification): Severity {
  switch (n.type) {
    case "run.finished":
      // the operator's own stop is no failure page (a notifier may still ask for warnings)
      if (n.aborted) return n.exitCode === 0 ? "info" : "warning";
      // a Ctrl-C is the operator's own (at the terminal, told there); a dropped session or a
      // SIGTERM has nobody at the terminal: the application down, a commit that took effect (the
      // application must move) or a command that may hold, pages then, as a failed run's would
      // (an adversarial run: a SIGHUP that left writes stopped paged as a warning)
      if (n.outcome === "interrupted")
        return !byOperator(n) && (n.writes || n.committed || n.commitInDoubt || n.reverseInDoubt !== undefined)
          ? "critical"
          : "warning";
      return n.outcome === "ok"
        ? "info"
        : n.committed || n.commitInDoubt || n.reverseInDoubt !== undefined || n.writes
          ? "critical"
          : "error";
    case "step.finished":
      return n.outcome === "failed" ? "error" : "info";
    case "hook.finished":
      return n.ok ? "info" : n.undo ? "critical" : "error";
    case "runner.lost":
      return n.critical ? "critical" : "error";
    case "wait.slow":
    case "verifier.restarted":
      return "warning";
    case "verifier.origin":
      return n.ours ? "info" : "error";
    // writes handed to a person (an --abort, no `undo:`): the application is down until they act
    case "window.closed":
      return n.reason === "by-hand" ? "warning" : "info";
    case "decision":
      return n.ok ? "info" : "error";
    case "response.received":
      return n.ok ? "info" : "warning";
    case "log":
      return n.level === "error" ? "error" : n.level === "warn" ? "warning" : "info";
    default:
      return "info";
  }
}
