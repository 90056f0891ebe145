/**
 * The runner's one event stream. Everything that shows or keeps what happened (listr2 UI,
 * line renderer, journal, notifiers, report, tests) listens to it; none reaches into the
 * runner. Payloads are already redacted when emitted: listeners never see secrets.
 *
 * Extend by adding a member to `RunEventMap`; keep names `<noun>.<past-participle>`.
 */
import type { WritesLeft } from "./writes-words.js";
import type { Progress, VerifierProgress } from "./api/types.js";
import type { VerifierMemory } from "./api/verifier-memory.js";
import type { Place } from "./text.js";

export type { Place };

export type Outcome = "ok" | "failed" | "skipped" | "interrupted";

export interface InstanceRef {
  /** Redacted base URL. */
  url: string;
  name?: string;
  index: number;
}

/**
 * An event by which a run acts: a request sent (to the fleet, the verifier, a hook's target) or a
 * hook run. The one rule for a journal read back (src/journal/read.ts `summarizeJournal`), a run's
 * own memory (src/run/assemble.ts `RunMemory.acted`), the run's end (src/cli/run.ts) and the read
 * model (src/model/fold.ts `ModelRun.acted`).
 */
export function actsOn(e: { type?: unknown }): boolean {
  return e.type === "request.sent" || e.type === "hook.started";
}

/** How an instance is named in every message, view and report: its name, else its (redacted) URL. */
export function instanceLabel(ref: { readonly name?: string | undefined; readonly url: string }): string {
  return ref.name ?? ref.url;
}

export interface RunEventMap {
  "run.started": {
    runbook: string;
    file: string;
    /**
     * The `--journal-dir` the run was given, as typed (absent: the default folder beside the
     * runbook): the commands a reader without the run's flags offers repeat it, the watch page on
     * the journal folder and the report (src/next-run.ts `runbookArgs`).
     */
    journalDir?: string;
    hash: string;
    /** This cutover's id, the same in every run of it (a resumed run copies the first run's). */
    cutover?: string;
    /** For the record: who ran it (the OS user, the host, the process). */
    by?: { user: string; host: string; pid: number };
    /** syncbook's version. */
    syncbook?: string;
    /** The runbook's format version (`runbook: 1`) and the service version it declares. */
    format?: number;
    serviceVersion?: string;
    instances: InstanceRef[];
    /**
     * When the destination takes writes (src/runbook/can-write.ts): `canWrite` of the first process
     * (its index), or COMMITTED on every instance; what the write-stop window closes on. Absent in
     * journals of earlier runners (a lone instance is then the first process).
     */
    destinationWrites?: { on: "canWrite"; instance: number } | { on: "committed"; why: string };
    /** The instance whose `canWrite` is valid (the first process), if any: the only one the views show. */
    canWriteFrom?: number;
    verifier?: string;
    mode: "run" | "dry-run" | "rehearse" | "resume";
    /** An `--abort` run (mode `resume`: it continues the journal, running only its owed undos). */
    abort?: true;
    /**
     * `when`: the variable a step's `when` names whole (`rollback` for `when: "${vars.rollback}"`):
     * what it ran or was skipped by tells the `--var` value a way on must carry (src/next-run.ts
     * `decidedVars`; a reader without the runbook, `syncbook watch`, has only this).
     */
    /** `writesOn`: a hook the runbook says lets the application write again (`writesOn: true`). */
    steps: { index: number; id: string; kind: string; title: string; when?: string; writesOn?: true }[];
    /**
     * The runbook's variables in effect in this run (`--var` applied; env-derived ones redacted),
     * and `given`, the names `--var` set: what a hook's call was made of, so an undo made later from
     * other values is told (src/run/earlier.ts `undoVarsDiffer`), and what a way on repeats. Absent
     * in journals of earlier runners.
     */
    vars?: Record<string, string | number | boolean>;
    given?: string[];
    /**
     * The values the cutover runs with from here, and the names among them `--var` set, when they
     * are not this run's alone (`--resume`, a `--from` that continues the cutover): this run's for
     * the variables its steps from where it begins read, the cutover's before it for the others
     * (src/run/earlier.ts `cutoverValuesFrom`). What a later run's steps are judged by and a way
     * on repeats (src/journal/state.ts `vars`); absent: `vars` and `given`.
     */
    cutoverVars?: Record<string, string | number | boolean>;
    cutoverGiven?: string[];
    /**
     * A `--from` run that continues its cutover: what it counted from the cutover's earlier journal
     * `from` (src/run/earlier.ts `fromJournal`), journaled before anything is sent. A `--resume` of
     * this run, or a later `--from`, read only this journal (src/journal/state.ts): they count its
     * commit (never undone; without it they said "not committed"), not its write stop, which is on
     * record only: that stop's hook and its undo (an `--abort` of `from`) live in the other journal.
     */
    carried?: {
      from: string;
      writesStopped: boolean;
      commitSent: boolean;
      /** That commit went past its forced `writes-stopped` interlock (`RunMemory.commitWritesForced`). */
      commitWritesForced?: true;
      commitAccepted: boolean;
      /**
       * The start, commit and reverse of the sync that runs now that `from` recorded, each with
       * every instance's answer (`stepIndex`: its step in this run's runbook): a `--resume` of
       * this journal, or a later `--from`, never sends one again to an instance it may have reached
       * (src/journal/reconcile.ts, src/run/earlier.ts `sentAgainByFrom`). Absent in older journals.
       */
      commands?: CarriedCommand[];
      /**
       * The refusals the commit's no-errors interlock counts that `from` recorded (its own and
       * what it carried), as this run counted them (`RunMemory.serviceErrors`): a `--resume` of
       * this run counts them too. Absent in older journals, and where there were none.
       */
      refusals?: ServiceRefusal[];
    };
    /** This run journals each notification's delivery (`notification.*`): a resume delivers what it still owes. */
    deliveries?: boolean;
    /**
     * This run's spans have ids derived from the cutover and its events (src/trace/ids.ts), and it
     * journals those its collector acknowledged (`trace.exported`): a resume exports the rest.
     */
    traced?: boolean;
  };
  "run.finished": {
    outcome: Outcome;
    exitCode: number;
    /**
     * The signal that interrupted the run, where known: SIGINT (Ctrl-C at its terminal), SIGTERM,
     * SIGHUP (its terminal's session ended: nobody may be at it).
     */
    interruptedBy?: string;
    /**
     * The signal came to a runner with no terminal (neither stdin, stdout nor stderr one): a
     * SIGINT then is nobody's Ctrl-C (a CI job cancelled, a supervisor's stop), and nobody may be
     * there to see writes left stopped.
     */
    noTerminal?: true;
    committed: boolean;
    /**
     * Not committed, and a commit of the sync that runs now was sent that may have reached an
     * instance: no answer accepted it and no read showed it taking effect, yet none refused it
     * (answers lost, a run that carried such a commit). "Not committed" would tell the bridge
     * writes may go back on the source, which the commit, if it holds, would lose (`commitWords`).
     */
    commitInDoubt?: true;
    /**
     * The runbook has no step that sends commit (a verify-only runbook, say): "not committed" would
     * read as a word on the fleet, which may well be COMMITTED (`commitWords`, src/writes-words.ts).
     */
    commitless?: true;
    /**
     * Not committed, and a reverse (its step id) ended ok in this cutover: the commit before it
     * was the sync's that ran the other way ("not committed since the reverse", `commitWords`).
     */
    reversed?: string;
    /**
     * A reverse (its step id) that may have reached the fleet and whose step did not end ok, in this
     * run or in the run it resumes: the sync may run either way now, `committed` notwithstanding
     * (`commitWords`).
     */
    reverseInDoubt?: string;
    /**
     * A `verify` step passed on this cutover's verification result (in this run or a run it
     * resumes); `unverified` says why not (src/steps/kit/earned.ts `verification`). Absent in
     * journals of an older syncbook.
     */
    verified?: boolean;
    unverified?: string;
    /** Verified with the check's filter (JSON): only the documents it matches. */
    verifiedFilter?: string;
    message?: string;
    durationMs: number;
    /** A command that reached part of the fleet and was refused by the rest (`commit reached 2 of 3 instances …`). */
    split?: string;
    /** `--abort` ended it: the operator called the cutover off; no step ran, the journal's open undos did. */
    aborted?: boolean;
    /**
     * The undo of the write stop was ruled out, not failed: the fleet shows a commit, or one may
     * still take effect (src/run/unwind.ts `WritesKeptOff`): writes stay stopped on purpose. An
     * `--abort` that ends so is "nothing undone", never "an undo failed" (`abortWords`).
     */
    undoKeptOff?: true;
    /**
     * An `--abort` owed the undo of this write stop (its step id), whose step has no `undo:`: writes
     * stay stopped until a person turns them back on, then `--resume` stops them again. In a later
     * run that ends with `writes` `may-be-stopped` before stopping them again: the stop that abort
     * handed over (whether the person turned writes back on, no event shows).
     */
    undoByHand?: string;
    /**
     * The step `--to` named, when the run stopped there before the runbook's end: its cutover is
     * not over (`--resume` goes on with the next step), whatever its outcome.
     */
    to?: string;
    /**
     * The cutover across its runs, when this run continues earlier ones (`--resume`, `--abort`, a
     * `--from` run after an unfinished one): how many runs it had, and its time from the first
     * run's start to this run's end (the runs' own times leave out the gaps between them).
     */
    cutover?: { runs: number; durationMs: number };
    /**
     * The cutover's (last) write-stop window at this run's end, measured across its runs
     * (src/fleet/window.ts): its length (`atLeast` when its start is before the events seen), and
     * whether it is still open (writes stopped, canWrite not seen, not undone); `unseenMs`: its end
     * was seen after that long with no runner reading the fleet, so its length is at most
     * `durationMs` (`WriteStopWindow.unseenMs`); `undone`: the stop's undo closed it (writes back on
     * the source, not the destination taking them: a closed window says the latter otherwise);
     * `byHand`: an `--abort` handed the stop to a person (its step has no `undo:`): writes stay
     * stopped until they turn them back on, which no event shows, so `durationMs` (to the hand-off)
     * is the least it lasted (`atLeast` is set too); `earlier`: the cutover's windows before it (a
     * stop undone, then stopped again), which were downtime too, their total the least they lasted
     * where one of them is a bound (`atLeast`).
     */
    window?: {
      durationMs: number;
      open: boolean;
      atLeast?: boolean;
      unseenMs?: number;
      undone?: true;
      byHand?: true;
      earlier?: { count: number; durationMs: number; atLeast?: true };
    };
    /**
     * Application writes at the run's end when they do not flow (src/writes-words.ts says it):
     * `stopped`, the window is open (a failed undo, an interrupt after the stop, a split commit);
     * `may-be-stopped`, a stop hook failed part-way and no undo of it succeeded.
     */
    writes?: WritesLeft;
  };
  /** `promptMs`: how long the operator took to answer `--step` before it (and before steps they skipped). */
  "step.started": {
    index: number;
    id: string;
    kind: string;
    title: string;
    promptMs?: number;
    /** The step's time limit (its own `timeout`, or the runbook's default): the live view counts it down. */
    timeoutMs?: number;
  };
  /**
   * `adopted`: a command step a resumed run did not send again because the fleet shows its command
   * took effect (src/journal/reconcile.ts): the journal counts it done, as a step that ended ok.
   */
  "step.skipped": {
    index: number;
    id: string;
    reason: string;
    adopted?: true;
    /** Past the run's `--to`: not run, and not done (a later `--resume` runs it). */
    pastTo?: true;
  };
  /** A failed step carries its `place` in the runbook (file, line, column, the line's text), as a compiler's error does. */
  "step.finished": {
    index: number;
    id: string;
    outcome: Outcome;
    durationMs: number;
    error?: string;
    hint?: string;
    /** The hint says what to do before the `--resume` that runs the step again (src/steps/kit/context.ts `StepFailure`). */
    hintBeforeResume?: true;
    /** The flags that `--resume` needs once that hint is done (`StepFailure.resumeFlags`). */
    resumeFlags?: string[];
    /**
     * The way on is this run's own command again, not a `--resume` (`StepFailure.againArgs`): its
     * arguments after the runbook, without its `--var`s (a reader names the cutover's).
     */
    againArgs?: string[];
    place?: Place;
  };
  "request.sent": {
    id: number;
    instance?: InstanceRef;
    target: "service" | "verifier" | "hook";
    method: string;
    path: string;
    body?: unknown;
    /**
     * A broadcast's place and size ([k, n], k from 0): its n lines are written back to back and
     * no request leaves before the last is on disk, so a journal holding fewer than n of them
     * proves that none of the fan-out left (src/journal/state.ts).
     */
    fanout?: [number, number];
  };
  /**
   * `errorKind` says whether a failed command can have taken effect: `service` (refused with
   * success:false: it did not), `not-sent` (the request never left: it did not), `transport`
   * (no usable answer: it may have). `--resume` reads it from the journal.
   */
  "response.received": {
    id: number;
    instance?: InstanceRef;
    target: "service" | "verifier" | "hook";
    status?: number;
    ok: boolean;
    body?: unknown;
    error?: string;
    errorKind?: "service" | "transport" | "not-sent";
    /**
     * A lost answer (`errorKind: transport`): whether the request may still reach its server
     * (src/api/errors.ts `mayStillArrive`: no answer within its time limit, or given up). Absent
     * in journals written before it: read as true, the reading that fails safe.
     */
    inFlight?: boolean;
    durationMs: number;
  };
  "progress.sampled": { instance: InstanceRef; progress: Progress };
  /**
   * A progress read (an instance's or the verifier's) that failed: every one, with its error.
   * Reads that succeed are only counted, in `polls.summary`: never a line per poll.
   */
  "poll.failed": {
    target: "service" | "verifier";
    instance?: InstanceRef;
    path: string;
    status?: number;
    error: string;
    errorKind: "service" | "transport";
    durationMs: number;
  };
  /**
   * Every progress read since this runner started (cumulative: a run's last one holds them all),
   * per target, instance and endpoint: count, failures, total and largest latency, and a latency
   * histogram of `[upper bound ms, count]` pairs (src/fleet/polls.ts). Emitted at every step's
   * end, at the run's end and at least every minute while polls go on.
   */
  "polls.summary": {
    polls: {
      target: "service" | "verifier";
      instance?: InstanceRef;
      path: string;
      count: number;
      failed: number;
      totalMs: number;
      maxMs: number;
      histogram: [number, number][];
    }[];
  };
  "verifier.sampled": { progress: VerifierProgress };
  /**
   * A verification begins: what the verifier showed before this run asked it to check (or the
   * check it found running and adopted). Earlier checks and writesOff of the run no longer count;
   * `--resume` reads it from the journal and judges the verifier's movement against it.
   */
  "verifier.baseline": {
    index: number;
    id: string;
    progress: VerifierProgress;
    adopted: boolean;
    /** The check sent now resumes a restarted verifier's persisted verification. */
    resumes?: boolean;
    /** Progress answered an empty HTTP 500 before any check (releases v0.1.6 to v0.2.0). */
    oldRelease?: boolean;
    /**
     * The answer before the check could not tell whether the check starts afresh or resumes an
     * earlier verification (idle at generation 0 with tasks, with or without --clean; an empty
     * HTTP 500): the check's first answer decides (`verifier.origin`).
     */
    unproven?: "persisted" | "oldRelease";
    /**
     * This verification begins at generation 0 for this cutover (VerifierMemory.fromStart): a
     * check to a verifier with nothing to resume, an adopted check still in generation 0, or this
     * cutover's own resumed after a restart. Absent (a journal from an older syncbook): not known,
     * so not verified (the reading that fails safe).
     */
    fromStart?: boolean;
    /** The check went with this filter (JSON): it compares only the documents the filter matches. */
    filter?: string;
  };
  /**
   * The first answer that shows this run's check, where the answer before it could not tell: a
   * fresh verification (`ours`), or one the check resumed, refused (its check no longer counts).
   * `--resume`, `status` and the report read it.
   */
  "verifier.origin": { index: number; id: string; progress: VerifierProgress; ours: boolean; why: string };
  /** A `verify` step passed on this cutover's verification result (src/steps/kit/earned.ts). */
  "verifier.verified": {
    index: number;
    id: string;
    progress: VerifierProgress;
    writesOffGeneration: number;
    /** The check's filter (JSON): verified are only the documents it matches. */
    filter?: string;
  };
  /**
   * writesOff is about to be sent while the verifier shows `generation` (the highest since the
   * verification began): a result must come from a later generation. `--resume` reads it.
   * `forced`: sent with the application's writes not known stopped (the `writes-stopped` interlock forced).
   */
  "verifier.writesOff": { index: number; id: string; generation: number; forced?: true };
  /**
   * A new verifier process answers (a generation below the highest seen, or idle at generation 0
   * after this run's check ran): this run's check and writesOff went to the old one. `followed` of
   * at most `limit` restarts are followed in one step (a check to the new process, then writesOff
   * again); `--resume` and the report read it.
   */
  "verifier.restarted": {
    index: number;
    id: string;
    progress: VerifierProgress;
    why: string;
    followed: number;
    limit: number;
  };
  /**
   * A `--from` run that continues its cutover goes on from what the journal it continues said of
   * the verifier (its check and writesOff with their answers, the baseline, the generations seen,
   * restarts, a refused verification: src/journal/verifier.ts folds it), as `--resume` does. The
   * run's own journal says so at its start, so that a `--resume` of this run, which reads only its
   * journal, goes on from the same check and never sends a second check or writesOff.
   */
  "verifier.carried": { memory: VerifierMemory; from: string };
  /** A condition wait's current standing: who fails which condition, with what value, since when. */
  "wait.status": {
    index: number;
    id: string;
    met: boolean;
    failing: { instance: string; condition: string; value: unknown; sinceMs: number }[];
    /**
     * On the status that says met: when the last read that found the condition unmet was
     * answered (epoch ms). The condition became true after it, as far as polls can tell; absent
     * when the wait's first read already met it.
     */
    unmetAt?: number;
  };
  "wait.slow": { index: number; id: string; stalledForMs: number; detail: string };
  /** An interlock, retry, reconcile or forced override: why the runner did or refused something. */
  decision: {
    index?: number;
    id?: string;
    kind: "interlock" | "retry" | "reconcile" | "force" | "undo" | "resume" | "identity";
    ok: boolean;
    check?: string;
    reason: string;
  };
  /**
   * The write-stop window (the application's downtime) opens: a stopWrites hook succeeded. It
   * closes at `window.closed` (src/fleet/window.ts measures it and splits it into shares).
   */
  "window.opened": {
    index: number;
    id: string;
    /**
     * When the stop hook succeeded (epoch ms): the window's start. The event itself follows the
     * step's `check:` (writes seen stopped), which the application spends stopped too. Absent in
     * journals of older runners: the event's own time.
     */
    openedAt?: number;
  };
  /**
   * One read of a stopWrites step's `check:` (the write switch read, by the runbook's hook), by the
   * step `index` that ran it: the stopWrites itself, or a commit reading it again. Its time inside
   * the window is the runbook's hook's, not the runner's (src/fleet/window.ts).
   */
  "writes.checked": { index: number; id: string; use: string; ok: boolean; durationMs: number };
  /**
   * The window's end: `canWrite` (the first process reported canWrite true: the destination takes
   * writes) or `committed` (every instance reported COMMITTED: no first process is declared, or the
   * page says to wait for it), with `seenAt` the read that showed it and `unmetAt` the last answer
   * that did not, so the true end lies between them; `undone` (the stopWrites undo ran: writes
   * are back on the source, there was no cutover); or `by-hand` (an `--abort` handed the stop,
   * whose step has no `undo:`, to a person, `seenAt`: writes stay stopped until they turn them back
   * on, which no event shows, so the window lasted at least `seenAt - openedAt`).
   */
  /** `unseenMs`: its end was seen only after that long no runner read the fleet: `seenAt - openedAt` is the most it lasted. */
  "window.closed": {
    reason: "canWrite" | "committed" | "undone" | "by-hand";
    openedAt?: number;
    seenAt: number;
    unmetAt?: number;
    unseenMs?: number;
  };
  /** A hook step marked `writesOn: true` succeeded: the application writes again (to the destination). */
  "window.writes-on": { index: number; id: string };
  "commit.sent": { index: number; id: string; instances: string[]; skewMs: number };
  /**
   * Journaled (fsynced) before the hook runs. `token`: every process the call starts carries it
   * in its environment (src/plugin/process.ts), so a resume can find one the run left behind.
   */
  /** `command`: an undo's call as a command an operator can run by hand (redacted), when its hook makes one. */
  "hook.started": { index: number; id: string; use: string; undo: boolean; token?: string; command?: string };
  /** A process a hook call started (right after its spawn): `--resume` waits out one still alive (src/run/orphans.ts). */
  "hook.process": {
    index: number;
    id: string;
    undo: boolean;
    token: string;
    pid: number;
    pgid?: number;
    /** Its start time (clock ticks since boot, src/processes.ts): a live pid with another start is another process. */
    start?: number;
  };
  "hook.finished": {
    index: number;
    id: string;
    use: string;
    undo: boolean;
    ok: boolean;
    error?: string;
    durationMs: number;
  };
  log: { level: "debug" | "info" | "warn" | "error"; message: string; index?: number };
  /**
   * The trace's collector acknowledged these spans (their ids: src/trace/ids.ts derives them from
   * the cutover and the events, the same live and from the journal): a `--resume` exports, from
   * the journal, the earlier runs' spans that have no such line (a runner killed before its
   * spans left), and only those. Not fsynced: a lost line only sends a span twice.
   */
  "trace.exported": { spans: string[] };
  /**
   * A notification is about to go to the `notify:` entry at `entry` (written before its first
   * attempt): a journal holding it without its `notification.settled` had the delivery in doubt
   * when the run died (src/plugin/deliveries.ts). `event` is the seq of the run event it tells of
   * (`about` is that event's type); the journal shifts it with the segment, as it shifts `seq`,
   * unless `earlier`: an earlier run's event, owed by it and delivered by a resume.
   */
  "notification.sent": { entry: number; use: string; event: number; about: string; earlier?: boolean };
  /**
   * How that delivery ended: delivered, or not after `attempts` tries (`error`; 0 attempts: never
   * sent, e.g. cut off at the run's end). `inDoubt`: the last attempt got no answer (timed out or cut
   * off in flight), so it may have arrived.
   */
  "notification.settled": {
    entry: number;
    use: string;
    event: number;
    about: string;
    earlier?: boolean;
    delivered: boolean;
    attempts: number;
    durationMs: number;
    error?: string;
    inDoubt?: boolean;
  };
}

/**
 * A service's refusal (`success: false`) that the commit's no-errors interlock counts: the run's
 * memory (`RunMemory.serviceErrors`), a journal's (src/journal/state.ts `refusalsCounted`), and
 * what a `--from` run carries of an earlier one (`run.started.carried.refusals`). `instance` is
 * the instance's label in the run's memory, its key (`instanceKey`) in a journal.
 */
export interface ServiceRefusal {
  instance: string;
  op: string;
  error: string;
}

/** A command an earlier journal of the cutover recorded, as a `--from` run carries it (`run.started.carried`). */
export interface CarriedCommand {
  op: string;
  stepIndex: number;
  id: string;
  answers: { instance: string; answered: "ok" | "error" | "unknown" }[];
}

export type RunEventType = keyof RunEventMap;
/**
 * `at`: the wall clock (ms since the epoch). `mono`: the process's monotonic clock at the same
 * moment (ms, `performance.now()`): it never jumps, and means something only within the process
 * that wrote it (src/report/durations.ts measures with it where the wall clock stepped).
 */
export type RunEvent = {
  [K in RunEventType]: { type: K; seq: number; at: number; mono?: number } & RunEventMap[K];
}[RunEventType];
export type RunEventOf<K extends RunEventType> = Extract<RunEvent, { type: K }>;
export type RunListener = (event: RunEvent) => void | Promise<void>;
/**
 * `more`: more events of one fan-out follow at once (the requests of a broadcast); the journal
 * writes each at once and makes them durable together with the last one (one fsync, before any
 * request of the fan-out leaves), instead of one fsync each.
 */
export interface EmitOptions {
  more?: boolean;
}
/** Emits one event of the run's stream; the emitter adds `seq` and `at` and redacts. */
export type Emit = <K extends RunEventType>(type: K, payload: RunEventMap[K], options?: EmitOptions) => RunEvent;
/** A listener that must record every event (the journal): it throws when it cannot. */
export type CriticalListener = (event: RunEvent, options?: EmitOptions) => void;
