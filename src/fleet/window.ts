/**
 * The write-stop window: how long the application could not write. It opens when a stopWrites
 * hook succeeds (`window.opened`) and closes when the destination takes writes, as the run's
 * `run.started` says (`destinationWrites`, src/runbook/can-write.ts): when the first process reports
 * `canWrite: true` (the cutover page: "only check that canWrite is true on the first mongosync
 * process. The canWrite status of any subsequent mongosync processes is not valid"; the others'
 * value is never read), or, where no first process is declared (or the 1.11–1.19 page says so),
 * when every instance reports COMMITTED; or when the stop's undo turned writes back on (no
 * cutover). A hook step marked `writesOn` extends it to the moment the application really writes
 * again.
 *
 * One pure fold over the run's events, used alike by the runner (fast polling inside the
 * window, and `window.closed` when a read first shows the destination takes writes), the live UI
 * (the window's clock), the job summary and the report (from a journal, across resumed runs).
 *
 * The window is split into shares, as far as the events can tell:
 * - service: a wait whose condition did not hold yet (until the last read that found it unmet:
 *   the condition became true after that answer), and the commit request's round trip (commit
 *   blocks until every instance has it);
 * - runner: from there to the next action (the rest of the wait: its poll interval and the
 *   runner's own work), the time between steps, the rest of the commit step (interlocks,
 *   journal, fan-out), and after the stop hook returned;
 * - operator: `confirm` steps and `--step` prompts;
 * - steps: the runbook's other steps inside the window (hooks, notify, verify, sleep, assert…),
 *   and the runbook's hooks a step of syncbook's calls (a stopWrites' `check:` read again before
 *   commit): a shell hook that starts Node takes a few hundred milliseconds, the runbook's time,
 *   which the report once charged to the runner;
 * - none: no runner was alive (after a crash or an exit, until a resume started): nobody's
 *   reaction time, only the gap before someone ran syncbook again.
 * And time the runner spent while an instance did not answer (its progress failing: down,
 * restarting) is the service's, not the runner's: the runner could not act on a fleet it
 * could not read.
 */
import type { RunEvent, RunEventMap, RunEventOf } from "../events.js";
import { windowBoundOf, windowEndWords, windowLength, type WritesLeft } from "../writes-words.js";
import { formatDuration } from "../runbook/duration.js";
import type { Progress } from "../api/types.js";
import { commandTookEffect } from "../api/commands.js";
import { classifyAnswer } from "../journal/state.js";
import type { DestinationWrites } from "../runbook/can-write.js";

export type WindowShare = "service" | "runner" | "operator" | "steps" | "none";
export const WINDOW_SHARES: readonly WindowShare[] = ["service", "runner", "operator", "steps", "none"];

export interface WindowPart {
  share: WindowShare;
  /** What the time went to, for people ("drained: waiting", "commit: the service's answer"). */
  what: string;
  index?: number;
  id?: string;
  /** Epoch ms. */
  from: number;
  to: number;
  ms: number;
}

export interface WriteStopWindow {
  /** Epoch ms writes stopped (the stop hook succeeded); undefined when that was before the events seen. */
  openedAt?: number;
  /** Where the measured part starts (openedAt, or the first event seen while open). */
  measuredFrom: number;
  openedBy?: { index: number; id: string };
  /** `canWrite` of the first process, COMMITTED on every instance, or the stop's undo. */
  closedBy?: WindowEnd;
  /** The read that showed the destination takes writes (or the undo's end). */
  closedAt?: number;
  /** The last answer that did not show it (the first process's canWrite false, an instance not COMMITTED) before closedAt: the true end lies after it. */
  unmetAt?: number;
  /**
   * The time no runner was alive between the last read that did not show the destination taking
   * writes (`unmetAt`, else the window's start; not before the window's first commit request) and
   * the read that did (`closedAt`): it may have begun anywhere in that time, so `durationMs` is the most the window lasted, not its length
   * (a runner killed past the commit: the report said "writes stopped 4m 30s" of a window that
   * closed in 20 s, the rest no runner's).
   */
  unseenMs?: number;
  /** A `writesOn` hook succeeded: the application writes again. */
  writesOnAt?: number;
  /**
   * An instance seen stopped during this window's commit before the destination took writes: the
   * migration must be restarted to be verified (`StoppedInCommit`). Every reader says it, and a
   * way on offers no plain `--resume` after the writes-on hook refused for it.
   */
  stoppedInCommit?: StoppedInCommit;
  /** Still open at the last event (or at `now`). */
  open: boolean;
  /** openedAt → closedAt (undefined while open or when openedAt is unknown). */
  durationMs?: number;
  /** openedAt → writesOnAt. */
  toWritesOnMs?: number;
  /** The measured span: measuredFrom → writesOnAt, else closedAt, else now. */
  measuredMs: number;
  shares: Record<WindowShare, number>;
  parts: WindowPart[];
}

interface Span {
  index: number;
  id: string;
  kind: string;
  start: number;
  end?: number;
  promptMs?: number;
  met?: boolean;
  unmetAt?: number;
  commitFrom?: number;
  commitTo?: number;
  /**
   * After the commit's answers, the last progress answer that did not show it taking effect: where
   * answers were lost, the step reads progress to learn whether it did (src/steps/kit/fleet-ops.ts
   * `settle`), and until an answer shows it, that wait is the service's, as a wait's is.
   */
  effectUnseenAt?: number;
  /** A person's answers asked inside this step (a `confirm` decision: `--only`'s question): the operator's time. */
  asked?: { from: number; to: number }[];
}

/** How a window ended. */
export type WindowEnd = RunEventMap["window.closed"]["reason"];

interface Win {
  /** The first commit request sent while it was open: the destination takes no writes before it. */
  commitAt?: number;
  openedAt?: number;
  measuredFrom: number;
  openedBy?: { index: number; id: string };
  closedBy?: WindowEnd;
  closedAt?: number;
  unmetAt?: number;
  writesOnAt?: number;
  /** An instance seen stopped after the commit was sent and before the destination took writes (`stoppedInCommit`). */
  stoppedInCommit?: StoppedInCommit;
}

/**
 * An instance that stopped during the commit, before the destination took writes: its progress
 * read refused (no process listening at its address), or it reported INITIALIZING (a 1.20+
 * process restarted). mongodb/docs-cluster-to-cluster-sync, source/includes/fact-verification.rst
 * (branches v1.10 to v1.13 and master, included by the commit page's "Data Verification"; read
 * 2026-12-06): "If ``mongosync`` stops during commit, before the /progress endpoint reports
 * ``canWrite: true``, you must restart the entire migration to ensure that it's verified." A
 * read that timed out, or failed otherwise, says nothing of the process and is not counted.
 */
export interface StoppedInCommit {
  /** The instance, by name or URL. */
  instance: string;
  at: number;
  /**
   * `restarted`: its `totalEventsApplied` went down between two reads, the one before at `since`.
   * `refused` or `initializing` with `since`: seen after the destination took writes, its last
   * answer (at `since`) before it, so it may have stopped in between.
   */
  how: "refused" | "initializing" | "restarted";
  since?: number;
  /** Other instances seen stopped in that time after the first, by name or URL (an adversarial run: two stopped, one named). */
  also?: string[];
}

/** An instance stopped during the commit, in words: the run's warning and the writes-on hook's refusal say it alike. */
export function stoppedInCommitWords(s: StoppedInCommit): string {
  const when =
    s.since === undefined
      ? "during the commit and before the destination took writes"
      : `after the destination took writes, but its last answer before that, at ${new Date(s.since).toISOString()}, came during the commit: it may have stopped in between`;
  const what =
    s.how === "refused"
      ? `refused its progress read (no process listening) at ${new Date(s.at).toISOString()}, ${when}`
      : s.how === "initializing"
        ? `reported INITIALIZING (its process restarted) at ${new Date(s.at).toISOString()}, ${when}`
        : `reported fewer events applied at ${new Date(s.at).toISOString()} than at ${new Date(s.since ?? s.at).toISOString()} (the count is not persisted: its process restarted in between, a time that meets the commit's before the destination took writes)`;
  const others = s.also?.length ? ` (and ${s.also.join(", ")}, seen stopped after it)` : "";
  return `${s.instance} ${what}${others}: the documentation says that if mongosync stops during commit before canWrite is true, the entire migration must be restarted to ensure that it is verified`;
}

type Seen = Pick<Progress, "canWrite" | "state">;

/** An instance's answer to a progress read: when, and whether it said COMMITTED. */
interface Answer {
  at: number;
  committed: boolean;
}

/**
 * What the window must know of a step kind, by its name in an event: handed down by the step
 * kinds (`traitsOf`, src/steps/index.ts), which sit above the fleet (docs/ARCHITECTURE.md).
 */
export type WindowKindTraits = (kind: string | undefined) => {
  /** A step of this kind that succeeds opens the window. */
  readonly opensWriteStop: boolean;
  /** Its command: the commit's round trip is the service's share. */
  readonly command: string | undefined;
  /** What it waits for: the fleet's state (the service's share until met) or a person (the operator's). */
  readonly waitsFor: string | undefined;
};

export class WindowTracker {
  readonly #traits: WindowKindTraits;
  readonly #windows: Win[] = [];
  readonly #kinds = new Map<number, string>();
  readonly #spans: Span[] = [];
  readonly #open = new Map<number, Span>();
  readonly #latest = new Map<number, Seen>();
  readonly #lastFalse = new Map<number, number>();
  readonly #commitIds = new Set<number>();
  /** The commit step whose answer was lost, while it reads progress to learn whether it took effect. */
  #settling: Span | undefined;
  /** Each runner's life: its run.started to its run.finished, or (killed) its last event. */
  readonly #runs: { start: number; end?: number; last: number }[] = [];
  /** Per instance: since when its progress fails (a poll failed and no answer since), and the spans it did. */
  readonly #downSince = new Map<number, { from: number; label: string }>();
  /** Per instance (name, else URL): its last `totalEventsApplied`, when, and whether it said COMMITTED, across runs (`#eventsApplied`). */
  readonly #applied = new Map<string, Answer & { n: number }>();
  /** Per instance (name, else URL): its last answer, across runs (`#stopped`). */
  readonly #answered = new Map<string, Answer>();
  readonly #down: { from: number; to: number; label: string }[] = [];
  /**
   * Every hook call that ended (`hook.finished`) and every read of a stopWrites' check
   * (`writes.checked`): its end and duration, for the steps' share.
   */
  readonly #hooks: { from: number; to: number; id: string; what: string }[] = [];
  #instances = 0;
  /** When the destination takes writes (the run's `run.started`). */
  #writes: DestinationWrites = { on: "canWrite", instance: 0 };
  #lastAt = 0;
  /** A stop hook that ended without opening the window (it may have stopped some writers) and whose undo has not succeeded since. */
  #stopFailed: number | undefined;
  /** The window was handed to a person (`by-hand`) in this runner's life: writes are stopped at its end. */
  #handedOver = false;
  /**
   * The write stop an `--abort` handed to a person, until a later stop opens a window or an undo of
   * it succeeds: after that runner's life, writes may be stopped (the person was asked to turn them
   * back on, which no event shows). A later run that died before stopping them again was paged as
   * if writes flowed (a dead-man page not critical).
   */
  #handedTo: { index: number; id: string } | undefined;
  #toAnnounce: RunEventMap["window.closed"] | undefined;

  constructor(traits: WindowKindTraits) {
    this.#traits = traits;
  }

  get #current(): Win | undefined {
    return this.#windows[this.#windows.length - 1];
  }

  /** Writes are stopped and the destination does not take them yet: waits poll fast. */
  get open(): boolean {
    const w = this.#current;
    return w !== undefined && w.closedAt === undefined;
  }

  /** A resumed run without the earlier events: writes were stopped before it started. */
  assumeOpen(at: number = Date.now()): void {
    if (!this.open) this.#windows.push({ measuredFrom: at });
  }

  /**
   * The closure this tracker saw in a read (`canWrite` on the first process, or every instance
   * COMMITTED) or an undo, and nobody announced yet: the runner emits it as `window.closed`, once.
   */
  takeClosed(): RunEventMap["window.closed"] | undefined {
    const c = this.#toAnnounce;
    this.#toAnnounce = undefined;
    return c;
  }

  apply(e: RunEvent): void {
    const before = this.#lastAt;
    this.#lastAt = Math.max(this.#lastAt, e.at);
    const run = this.#runs[this.#runs.length - 1];
    // a journal's header is written by the next runner as it opens the journal (a resume's
    // `journal.resumed`): not a sign of life of the run before it, whose dead time it would hide
    if (run && run.end === undefined && e.type !== "run.started" && !isJournalHeader(e))
      run.last = Math.max(run.last, e.at);
    switch (e.type) {
      case "poll.failed":
        if (e.target === "service" && e.instance && e.errorKind === "transport" && /ECONNREFUSED/.test(e.error))
          this.#stopped(e.instance, e.at, "refused");
        if (e.target === "service" && e.instance && !this.#downSince.has(e.instance.index))
          this.#downSince.set(e.instance.index, {
            from: e.at - e.durationMs,
            label: e.instance.name ?? e.instance.url,
          });
        break;
      case "run.finished":
        if (run && run.end === undefined) run.end = e.at;
        this.#endDown(e.at);
        break;
      case "run.started":
        // the runner before it died without run.finished: it was last alive at its last event
        if (run && run.end === undefined) run.end = run.last;
        this.#endDown(run?.end ?? e.at);
        this.#runs.push({ start: e.at, last: e.at });
        // a run after a hand-off: the person may have turned writes back on (they were asked to)
        this.#handedOver = false;
        for (const s of e.steps) this.#kinds.set(s.index, s.kind);
        this.#instances = e.instances.length;
        // a journal of a runner before `destinationWrites`: a lone instance is the first process;
        // of several, none is known, and the reading that fails safe is COMMITTED on every one
        this.#writes =
          e.destinationWrites ??
          (e.instances.length === 1
            ? { on: "canWrite", instance: e.instances[0]!.index }
            : { on: "committed", why: "no first process is recorded" });
        // a new runner: its reads start afresh (the window itself spans runs)
        this.#latest.clear();
        this.#lastFalse.clear();
        for (const s of this.#open.values()) s.end ??= e.at;
        this.#open.clear();
        this.#settling = undefined;
        break;
      case "step.started": {
        const span: Span = { index: e.index, id: e.id, kind: e.kind || (this.#kinds.get(e.index) ?? ""), start: e.at };
        if (e.promptMs !== undefined) span.promptMs = e.promptMs;
        this.#spans.push(span);
        this.#open.set(e.index, span);
        break;
      }
      case "step.finished": {
        const span = this.#open.get(e.index);
        if (span) span.end = e.at;
        this.#open.delete(e.index);
        if (span && span === this.#settling) this.#settling = undefined;
        // journals of runners before `window.opened`: a stopWrites that succeeded opened it
        if (span && this.#traits(span.kind).opensWriteStop && e.outcome === "ok" && !this.open)
          this.#windows.push({ openedAt: e.at, measuredFrom: e.at, openedBy: { index: e.index, id: e.id } });
        break;
      }
      case "wait.status": {
        const span = this.#open.get(e.index);
        if (span && e.met) {
          span.met = true;
          if (e.unmetAt !== undefined) span.unmetAt = e.unmetAt;
        }
        break;
      }
      case "request.sent":
        if (e.method === "POST" && e.path === "/api/v1/commit") {
          this.#commitIds.add(e.id);
          const w = this.#current;
          if (w && w.closedAt === undefined) w.commitAt ??= e.at;
          const span = this.#commitSpan();
          if (span) span.commitFrom = Math.min(span.commitFrom ?? e.at, e.at);
        }
        break;
      case "response.received":
        if (this.#commitIds.delete(e.id)) {
          const span = this.#commitSpan();
          if (span) span.commitTo = Math.max(span.commitTo ?? e.at, e.at);
          // its progress reads from here on learn whether a commit whose answer was lost took effect;
          // a refusal or a request never sent had no effect to learn of (the journal's reading of an
          // answer, which also reads an older journal's, written before `errorKind`)
          if (span && classifyAnswer(e).answered === "unknown") this.#settling = span;
        }
        break;
      case "decision": {
        // a question put to a person inside a step (`--only`'s confirmation): asked right after
        // the event before the answer (no event is journaled while a prompt waits), answered now
        const span = e.index !== undefined ? this.#open.get(e.index) : undefined;
        if (span && e.check === "confirm" && e.at > before)
          (span.asked ??= []).push({ from: Math.max(before, span.start), to: e.at });
        // an --abort handed the stop (no `undo:`) to a person: writes stay stopped until they turn
        // them back on, which no event shows; the window's measure ends here, as the least it lasted
        // (left open, it counted the hours writes were back on as downtime, and a later resume's
        // stop joined it)
        const w = this.#current;
        if (
          e.kind === "undo" &&
          e.check === "by-hand" &&
          e.index !== undefined &&
          w &&
          (w.openedBy === undefined || w.openedBy.index === e.index) &&
          this.#traits(this.#kinds.get(e.index)).opensWriteStop
        ) {
          // a second --abort hands over the same stop again: it ends with writes stopped, as it says
          if (w.closedAt === undefined || w.closedBy === "by-hand") {
            this.#handedOver = true;
            this.#handedTo = { index: e.index, id: e.id ?? w.openedBy?.id ?? String(e.index + 1) };
          }
          if (w.closedAt === undefined) this.#closeWithoutCutover(w, "by-hand", e.at);
        }
        break;
      }
      case "window.opened": {
        this.#stopFailed = undefined;
        this.#handedOver = false;
        this.#handedTo = undefined;
        // from the stop hook's success, not from the check after it (older journals: the event's time)
        const at = e.openedAt ?? e.at;
        if (!this.open) this.#windows.push({ openedAt: at, measuredFrom: at, openedBy: { index: e.index, id: e.id } });
        break;
      }
      case "writes.checked":
        this.#hooks.push({
          from: e.at - e.durationMs,
          to: e.at,
          id: e.id,
          what: `${e.use} check of the write switch`,
        });
        break;
      case "window.closed": {
        const w = this.#current;
        if (w && w.closedAt === undefined) {
          w.closedBy = e.reason;
          w.closedAt = e.seenAt;
          if (e.unmetAt !== undefined) w.unmetAt = e.unmetAt;
        }
        break;
      }
      case "window.writes-on": {
        // a window its undo closed ended with writes back on: a write-on hook run later (a --from
        // it, no stop again) is no end of its downtime (an outside review: its length ran on past the undo)
        const w = this.#current;
        if (w && w.writesOnAt === undefined && w.closedBy !== "undone") w.writesOnAt = e.at;
        break;
      }
      case "hook.finished": {
        this.#hooks.push({ from: e.at - e.durationMs, to: e.at, id: e.id, what: `${e.use} hook` });
        // a stop hook that ended (failed, or returned while its writes were not seen stopped) before
        // the window opened may have stopped some writers: until `window.opened` or its undo succeeds
        if (!e.undo && this.#traits(this.#kinds.get(e.index)).opensWriteStop) this.#stopFailed = e.index;
        if (e.undo && e.ok && this.#stopFailed === e.index) this.#stopFailed = undefined;
        if (e.undo && e.ok && this.#handedTo?.index === e.index) this.#handedTo = undefined;
        // the stop's undo succeeded: writes are back on the source, the window ends without a cutover
        const w = this.#current;
        if (e.undo && e.ok && w && w.closedAt === undefined && w.openedBy?.index === e.index)
          this.#closeWithoutCutover(w, "undone", e.at);
        break;
      }
      case "progress.sampled":
        if (e.progress?.state === "INITIALIZING") this.#stopped(e.instance, e.at, "initializing");
        this.#eventsApplied(e);
        if (e.progress)
          this.#answered.set(e.instance.name ?? e.instance.url, {
            at: e.at,
            committed: e.progress.state === "COMMITTED",
          });
        // a journal written by hand or by an older version may carry a line without its progress
        if (this.#settling && commandTookEffect("commit", e.progress?.state) === false)
          this.#settling.effectUnseenAt = e.at;
        this.#sample(e);
        break;
      default:
        break;
    }
  }

  /** Ends the window with no cutover (the stop's undo, or a hand-off to a person) and has it announced. */
  #closeWithoutCutover(w: Win, reason: "undone" | "by-hand", at: number): void {
    w.closedBy = reason;
    w.closedAt = at;
    this.#toAnnounce = { reason, ...(w.openedAt !== undefined ? { openedAt: w.openedAt } : {}), seenAt: at };
  }

  /**
   * An instance's `totalEventsApplied` lower than at its read before: its process restarted in
   * between. mongodb/docs content/mongosync/current/source/includes/api/tables/progress-response.rst
   * (@5dabe30f, read 2026-12-06): the count "is not persisted". Kept across runs: a restart while
   * no runner was alive (killed during the commit, resumed later) shows only here (an adversarial
   * run: the resume read COMMITTED, 0 events, after COMMITTING with 6,186, and turned writes on).
   * Counted when the time between the two reads meets the commit's: the restart may lie anywhere
   * in it, and the reading that fails safe is that it lay there.
   */
  #eventsApplied(e: RunEventOf<"progress.sampled">): void {
    const n = e.progress?.totalEventsApplied;
    if (typeof n !== "number") return;
    const key = e.instance.name ?? e.instance.url;
    const before = this.#applied.get(key);
    this.#applied.set(key, { n, at: e.at, committed: e.progress?.state === "COMMITTED" });
    const w = this.#current;
    // this read comes after the window's commit (events come in time order): the two reads span
    // some of the time from it to the destination taking writes when the one before came first
    if (!before || n >= before.n || !w || w.commitAt === undefined) return;
    if (this.#spansCommit(w, before))
      this.#noteStopped(w, { instance: key, at: e.at, how: "restarted", since: before.at });
  }

  /**
   * Notes an instance seen stopped, if a commit of the window was sent and the destination takes no
   * writes yet, or it does but the instance's last answer came before that (and did not say
   * COMMITTED): the stop may lie in between, and the reading that fails safe is that it did. The
   * canWrite wait reads the first process alone, and reads the others once as it ends
   * (src/steps/wait-for.ts): an instance that answers then is no longer in doubt.
   */
  #stopped(instance: { name?: string; url: string }, at: number, how: StoppedInCommit["how"]): void {
    const w = this.#current;
    if (!w || w.commitAt === undefined) return;
    const key = instance.name ?? instance.url;
    if (w.closedAt === undefined) {
      this.#noteStopped(w, { instance: key, at, how });
      return;
    }
    const before = this.#answered.get(key);
    if (before && this.#spansCommit(w, before)) this.#noteStopped(w, { instance: key, at, how, since: before.at });
  }

  /** An instance's answer came before the window closed and did not say COMMITTED: from it on, its process may have stopped in the commit. */
  #spansCommit(w: Win, before: Answer): boolean {
    // COMMITTED says the destination takes writes, for this instance: a stop after it is after
    return before.at < (w.closedAt ?? Infinity) && !before.committed;
  }

  /** The first instance seen stopped in the window's commit, and the others after it, each once. */
  #noteStopped(w: Win, s: StoppedInCommit): void {
    const first = w.stoppedInCommit;
    if (!first) w.stoppedInCommit = s;
    else if (first.instance !== s.instance && !(first.also ?? []).includes(s.instance))
      first.also = [...(first.also ?? []), s.instance];
  }

  /**
   * The first instance seen stopped during the last window's commit, before the destination took
   * writes: the documentation says the entire migration must then be restarted to be verified, so
   * no writes-on hook runs on it (`stopped-in-commit`, src/steps/hook.ts). Kept after the window
   * closed, and across runs (a resume folds the earlier runs' events first).
   */
  stoppedInCommit(): StoppedInCommit | undefined {
    return this.#windows.at(-1)?.stoppedInCommit;
  }

  /** The open step that sends commit: a commit request's round trip is its. */
  #commitSpan(): Span | undefined {
    return [...this.#open.values()].find((s) => this.#traits(s.kind).command === "commit");
  }

  /** Instances still failing when their runner ended: down until then (what came after is no runner's). */
  #endDown(at: number): void {
    for (const d of this.#downSince.values()) this.#down.push({ ...d, to: at });
    this.#downSince.clear();
  }

  #sample(e: Extract<RunEvent, { type: "progress.sampled" }>): void {
    const p = e.progress as Partial<Progress> | undefined;
    const i = e.instance.index;
    const since = this.#downSince.get(i);
    if (since !== undefined) {
      this.#down.push({ ...since, to: e.at });
      this.#downSince.delete(i);
    }
    this.#latest.set(i, { canWrite: p?.canWrite ?? null, state: p?.state as Progress["state"] });
    const shows = (x: Seen | undefined): boolean =>
      this.#writes.on === "canWrite" ? x?.canWrite === true : x?.state === "COMMITTED";
    if (!shows(this.#latest.get(i))) this.#lastFalse.set(i, e.at);
    const w = this.#current;
    // only an answer that shows it can end the window: the fleet is judged then, not on every answer
    if (!w || w.closedAt !== undefined || !shows(this.#latest.get(i))) return;
    const who = this.#writersWho(shows);
    if (who === undefined) return;
    w.closedBy = this.#writes.on;
    w.closedAt = e.at;
    const unmetAt = Math.max(...who.map((k) => this.#lastFalse.get(k) ?? -Infinity));
    if (Number.isFinite(unmetAt)) w.unmetAt = unmetAt;
    const unseen = this.#unseen(w, e.at);
    this.#toAnnounce = {
      reason: this.#writes.on,
      ...(w.openedAt !== undefined ? { openedAt: w.openedAt } : {}),
      seenAt: e.at,
      ...(w.unmetAt !== undefined ? { unmetAt: w.unmetAt } : {}),
      ...(unseen > 0 ? { unseenMs: unseen } : {}),
    };
  }

  /**
   * The time no runner read the fleet between the window's true end's earliest moment (after the
   * last read that did not show it, and after the commit was sent) and `seenAt`, when a read showed it.
   */
  #unseen(w: Win, seenAt: number): number {
    const from = w.measuredFrom;
    const after = Math.max(w.unmetAt ?? from, w.commitAt ?? from);
    return this.#noRunner(after, seenAt, false).reduce((n, g) => n + g.to - g.from, 0);
  }

  /**
   * The instances whose answers end the window, when they all show it: the first process alone
   * (its `canWrite`; the others' is not valid and never read), or every instance (COMMITTED).
   */
  #writersWho(shows: (x: Seen | undefined) => boolean): number[] | undefined {
    if (this.#writes.on === "canWrite") {
      const first = this.#writes.instance;
      return shows(this.#latest.get(first)) ? [first] : undefined;
    }
    const n = Math.max(this.#instances, this.#latest.size);
    if (this.#latest.size < n) return undefined;
    const all = [...this.#latest.entries()];
    return all.every(([, seen]) => shows(seen)) ? all.map(([index]) => index) : undefined;
  }

  /**
   * Application writes now, when they do not flow (src/writes-words.ts): `stopped` while the window
   * is open, and after this runner's `--abort` handed it to a person (until a later run starts:
   * they were asked to turn writes back on); `may-be-stopped` after a stop hook ended without the window opening (it failed, or its
   * writes were not seen stopped) and no undo of it (nor a later stop) succeeded, and in a later run
   * after such a hand-off until a stop opens a window again (`handedTo`).
   */
  writesLeft(): WritesLeft | undefined {
    if (this.open || this.#handedOver) return "stopped";
    return this.#stopFailed !== undefined || this.#handedTo !== undefined ? "may-be-stopped" : undefined;
  }

  /**
   * The step id of a write stop an `--abort` handed to a person, in a later run that has not
   * stopped writes again (`may-be-stopped` for that reason, not a failed stop hook).
   */
  handedToPerson(): string | undefined {
    return !this.open && !this.#handedOver && this.#stopFailed === undefined ? this.#handedTo?.id : undefined;
  }

  /** Every window so far (a stop undone and stopped again makes two), measured up to `now` when open. */
  windows(now: number = this.#lastAt, runnerGone = false): WriteStopWindow[] {
    return this.#windows.map((w) => this.#measure(w, now, runnerGone));
  }

  /** The last window, if writes were ever stopped. */
  current(now: number = this.#lastAt): WriteStopWindow | undefined {
    const w = this.#current;
    return w ? this.#measure(w, now) : undefined;
  }

  /**
   * `runnerGone`: a reader that saw the last run's process gone without its end (`syncbook watch`,
   * src/watch/runner.ts "dead") measures the time after its last event as no runner's, not the
   * share of the step it died in (the page counted a killed run's minutes as the service's).
   */
  #measure(w: Win, now: number, runnerGone = false): WriteStopWindow {
    const from = w.measuredFrom;
    const to = Math.max(from, w.writesOnAt ?? w.closedAt ?? now);
    const parts: WindowPart[] = [];
    const add = (share: WindowShare, what: string, a: number, b: number, span?: Span): void => {
      const x = Math.max(a, from);
      const y = Math.min(b, to);
      if (!(y > x)) return;
      const last = parts[parts.length - 1];
      if (last && last.share === share && last.what === what && last.to === x && last.index === span?.index) {
        last.to = y;
        last.ms = y - last.from;
        return;
      }
      parts.push({
        share,
        what,
        ...(span ? { index: span.index, id: span.id } : {}),
        from: x,
        to: y,
        ms: y - x,
      });
    };
    let cursor = from;
    const spans = this.#spans.filter((s) => (s.end ?? to) > from && s.start < to).sort((a, b) => a.start - b.start);
    for (const s of spans) {
      const end = Math.min(s.end ?? to, to);
      const start = Math.max(s.start, from);
      const promptFrom = s.promptMs !== undefined ? Math.max(cursor, s.start - s.promptMs) : s.start;
      add("runner", "between steps", cursor, promptFrom);
      add("operator", "--step prompt", promptFrom, s.start, s);
      this.#classify(w, s, start, end, to, add);
      cursor = Math.max(cursor, end);
    }
    add("runner", spans.length ? "between steps" : "waiting for the next step", cursor, to);
    // no runner alive: nobody's share but the gap's; then an instance not answering: the service's
    const dead = this.#noRunner(from, to, runnerGone);
    const down = [...this.#down, ...[...this.#downSince.values()].map((d) => ({ ...d, to }))];
    const carved = recharge(
      recharge(
        parts,
        dead,
        () => true,
        "none",
        // after the last run no resume has started (an outside review read "until a resume started"
        // of a runner just killed)
        (g) =>
          g.last
            ? "no runner running since the last run ended or died (no resume yet)"
            : "no runner was running (until a resume started)",
      ),
      down,
      (p) => p.share === "runner",
      "service",
      (d) => `${d.label} not answering (progress failing)`,
    );
    // a hook of the runbook's, called inside one of syncbook's steps (a writes check before commit):
    // the runbook's time, not the runner's
    const hooked = recharge(
      carved,
      this.#hooks,
      (p) => p.share === "runner",
      "steps",
      (h) => `${h.id}: the runbook's ${h.what} (its own time)`,
    );
    // a person's answer is the operator's time, whichever part of the step it fell in
    const asked = spans.flatMap((s) => (s.asked ?? []).map((a) => ({ ...a, id: s.id })));
    const answered = recharge(
      hooked,
      asked,
      (p) => p.share !== "none",
      "operator",
      (a) => `${a.id}: the operator's answer (a question asked in the step)`,
    );
    parts.length = 0;
    parts.push(...answered);
    const shares: Record<WindowShare, number> = { service: 0, runner: 0, operator: 0, steps: 0, none: 0 };
    for (const p of parts) shares[p.share] += p.ms;
    const out: WriteStopWindow = {
      measuredFrom: from,
      open: w.closedAt === undefined,
      measuredMs: to - from,
      shares,
      parts,
    };
    if (w.openedAt !== undefined) out.openedAt = w.openedAt;
    if (w.openedBy) out.openedBy = w.openedBy;
    if (w.closedBy) out.closedBy = w.closedBy;
    if (w.closedAt !== undefined) out.closedAt = w.closedAt;
    if (w.unmetAt !== undefined) out.unmetAt = w.unmetAt;
    if (w.writesOnAt !== undefined) out.writesOnAt = w.writesOnAt;
    // `also` is replaced, never pushed to (`#noteStopped`): the copy may share it
    if (w.stoppedInCommit) out.stoppedInCommit = { ...w.stoppedInCommit };
    if (w.openedAt !== undefined && w.closedAt !== undefined) out.durationMs = w.closedAt - w.openedAt;
    if (w.closedAt !== undefined && (w.closedBy === "canWrite" || w.closedBy === "committed")) {
      const unseen = this.#unseen(w, w.closedAt);
      if (unseen > 0) out.unseenMs = unseen;
    }
    if (w.openedAt !== undefined && w.writesOnAt !== undefined) out.toWritesOnMs = w.writesOnAt - w.openedAt;
    return out;
  }

  /** The spans within [from, to] in which no runner was alive (none known: all of it alive). */
  #noRunner(from: number, to: number, lastGone: boolean): { from: number; to: number; last?: true }[] {
    const gaps: { from: number; to: number; last?: true }[] = [];
    // no run seen (events without their run.started): nobody's gap
    if (this.#runs.length === 0) return gaps;
    let alive = -Infinity;
    // only the last run can lack its end (a run.started ends the one before it)
    for (const r of this.#runs) {
      gaps.push({ from: alive, to: r.start });
      alive = Math.max(alive, r.end ?? (lastGone ? r.last : Infinity));
    }
    gaps.push({ from: alive, to: Infinity, last: true });
    return gaps
      .map((g) => ({ ...g, from: Math.max(g.from, from), to: Math.min(g.to, to) }))
      .filter((g) => g.to > g.from);
  }

  #classify(
    w: Win,
    s: Span,
    start: number,
    end: number,
    to: number,
    add: (share: WindowShare, what: string, a: number, b: number, span?: Span) => void,
  ): void {
    const name = s.id;
    const traits = this.#traits(s.kind);
    if (w.openedBy?.index === s.index && traits.opensWriteStop) {
      add("runner", `${name}: after the stop hook returned`, start, end, s);
      return;
    }
    // the commit step: by its command; a wait for the fleet's state; a person's answer
    switch (traits.command === "commit" ? "commit" : traits.waitsFor) {
      case "service": {
        // the window's end inside this wait: the last answer that did not show it splits it
        const closesHere =
          (w.closedBy === "canWrite" || w.closedBy === "committed") &&
          w.closedAt !== undefined &&
          w.closedAt === to &&
          w.closedAt <= end;
        const split = closesHere
          ? Math.max(start, Math.min(end, w.unmetAt ?? s.start))
          : s.met
            ? Math.max(start, Math.min(end, s.unmetAt ?? s.start))
            : end;
        add("service", `${name}: waiting for the service`, start, split, s);
        add("runner", `${name}: condition met → next action (polling, the runner's work)`, split, end, s);
        return;
      }
      case "commit": {
        if (s.commitFrom === undefined) {
          add("runner", `${name}: interlocks`, start, end, s);
          return;
        }
        const answered = s.commitTo ?? end;
        // an answer lost: until a read shows the commit took effect, the wait is the service's
        const shown = Math.min(end, Math.max(answered, s.effectUnseenAt ?? answered));
        add("runner", `${name}: interlocks, journal, fan-out`, start, s.commitFrom, s);
        add(
          "service",
          `${name}: the service's answer (commit blocks until every instance has it)`,
          s.commitFrom,
          answered,
          s,
        );
        add(
          "service",
          `${name}: an answer lost, progress read until it shows the commit took effect`,
          answered,
          shown,
          s,
        );
        add("runner", `${name}: after the answers`, shown, end, s);
        return;
      }
      case "person":
        add("operator", `${name}: ${s.kind}`, start, end, s);
        return;
      default:
        add("steps", `${name}: ${s.kind}`, start, end, s);
    }
  }
}

/**
 * The parts with the time inside `spans` charged to `share` instead (for the parts `which`
 * picks), each span's piece said by `what`; the rest of each part keeps its share.
 */
function recharge<T extends { from: number; to: number }>(
  parts: WindowPart[],
  spans: T[],
  which: (p: WindowPart) => boolean,
  share: WindowShare,
  what: (span: T) => string,
): WindowPart[] {
  const out: WindowPart[] = [];
  for (const p of parts) {
    let cursor = p.from;
    const cut = (a: number, b: number, as: WindowPart | undefined): void => {
      if (b > a) out.push({ ...p, ...(as ?? {}), from: a, to: b, ms: b - a });
    };
    if (which(p))
      for (const s of [...spans].sort((a, b) => a.from - b.from)) {
        const a = Math.max(s.from, cursor);
        const b = Math.min(s.to, p.to);
        if (!(b > a)) continue;
        cut(cursor, a, undefined);
        cut(a, b, { ...p, share, what: what(s) });
        cursor = b;
      }
    cut(cursor, p.to, undefined);
  }
  return out;
}

/** A journal's header line (`journal.opened`, `journal.resumed`): read with the events, written by no run. */
export function isJournalHeader(e: { type: string }): boolean {
  return e.type === "journal.opened" || e.type === "journal.resumed";
}

/** The one wording of each share, in every output (lines, the report's page). */
export const SHARE_WORDS: Record<WindowShare, string> = {
  service: "service",
  runner: "runner",
  operator: "operator",
  steps: "hooks and other steps",
  none: "no runner",
};

/** `service 3.9s · runner 120ms · operator 2s` (service and runner always; the others when not zero). */
export function windowShares(w: WriteStopWindow): string {
  return WINDOW_SHARES.filter((k) => w.shares[k] > 0 || k === "service" || k === "runner")
    .map((k) => `${SHARE_WORDS[k]} ${formatDuration(w.shares[k])}`)
    .join(" · ");
}

/**
 * The windows before the last, as `run.finished` carries them: their count and total. Where one of
 * them is a bound (its start unseen, handed to a person, its end seen late), the total is the
 * least they lasted: each less any time no runner read the fleet (what `windowLength` says of one).
 */
export function earlierWindows(
  before: readonly WriteStopWindow[],
): NonNullable<NonNullable<RunEventMap["run.finished"]["window"]>["earlier"]> {
  const bounded = before.some((w) => windowBoundOf(w).atLeast || w.unseenMs !== undefined);
  return {
    count: before.length,
    durationMs: before.reduce((n, w) => n + Math.max(0, (w.durationMs ?? w.measuredMs) - (w.unseenMs ?? 0)), 0),
    ...(bounded ? { atLeast: true as const } : {}),
  };
}

/** The window in one line, for every output: its length, how it ended, and its shares. */
export function describeWindow(w: WriteStopWindow): string {
  const total = windowLength(w.durationMs ?? w.measuredMs, windowBoundOf(w));
  const end =
    w.closedBy === "undone"
      ? "writes stopped, then back on by the undo: no cutover"
      : w.closedBy === "by-hand"
        ? `writes stopped, then ${windowEndWords(w.closedBy)}: no cutover`
        : w.open
          ? "still open: writes are stopped and no read has shown the destination taking writes"
          : `writes stopped → ${windowEndWords(w.closedBy)}${w.unseenMs !== undefined ? `, seen after ${formatDuration(w.unseenMs)} in which no runner read the fleet (it may have come then)` : ""}`;
  const on = w.toWritesOnMs !== undefined ? `; → writes on again: ${formatDuration(w.toWritesOnMs)}` : "";
  // the shares run to the write-on hook once it ran: said of that length, not of the window's
  const of = w.toWritesOnMs !== undefined ? `of the ${formatDuration(w.toWritesOnMs)} to writes on again, ` : "";
  return `${total} (${end}${on}): ${of}${windowShares(w)}`;
}
