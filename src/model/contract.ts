/**
 * The cutover's read model: its JSON shape and version (`MODEL_VERSION`), what every reader of a
 * cutover takes its view from (the live UI, the report, `status`, the trace, and `syncbook watch`'s
 * `/state.json`, which serves it as is). `fold.ts` folds the run's events into it. docs/model.md
 * documents each field; a change that a reader of the JSON could notice raises the version.
 *
 * Times are epoch ms as the events carry them (the report mends clock steps before it folds,
 * src/report/durations.ts). Every string comes from an event, and events are redacted when
 * emitted: the model holds no secret.
 */
import type { InstanceRef, Outcome, Place, RunEventMap } from "../events.js";
import type { CopyView } from "../fleet/eta.js";
import type { WriteStopWindow } from "../fleet/window.js";
import type { WritesLeft } from "../writes-words.js";
import type { GenerationDocs } from "../text.js";

export const MODEL_VERSION = 1;

/**
 * A step's fate: the runner's outcomes, plus `pending` (never reached) and `running` (started, no
 * end event: running now only when it is `current`, else cut off: `cutOff`, fold.ts).
 */
export type StepOutcome = Outcome | "pending" | "running";
/** A run's fate: the runner's outcomes, plus `unfinished` (no `run.finished`: running, or ended without a word). */
export type RunOutcome = Outcome | "unfinished";

/** One run of the cutover (a process of `syncbook run`): a journal resumed holds several, a cutover may span journals. */
export interface ModelRun {
  /** 1-based, across every journal of the cutover. */
  n: number;
  mode: RunEventMap["run.started"]["mode"] | "unknown";
  /** An `--abort` run (`run.started` said so; its mode is `resume`), whether or not it ended. */
  abort?: true;
  /**
   * A `--from` run that continues its cutover (`run.started.carried`): the cutover's earlier
   * journal holds its commit (and write stop).
   */
  continues?: true;
  /**
   * It sent a request or ran a hook (the journal's own rule, src/journal/read.ts
   * `summarizeJournal`): a run that did neither is passed over by `--resume`.
   */
  acted?: true;
  /** The journal it wrote (when the events came from journals). */
  journal?: string;
  startedAt: number;
  /** Its last event. */
  lastAt: number;
  /** Its `run.finished`, when it said one. */
  finishedAt?: number;
  outcome: RunOutcome;
  /**
   * How it ended, in one word: `ok`, `failed`, `interrupted`, `called-off` (`--abort` whose undos
   * ran), `no-word` (a later run started and this one never finished: killed, crashed, its machine
   * lost) or `open` (the last run, without an end yet: running, or dead and not yet resumed).
   */
  ended: "ok" | "failed" | "interrupted" | "skipped" | "called-off" | "no-word" | "open";
  exitCode?: number;
  /** Its own time, as its `run.finished` said. */
  durationMs?: number;
  committed?: boolean;
  /** Not committed, and a commit it sent or carried may hold, as its `run.finished` said. */
  commitInDoubt?: true;
  message?: string;
  aborted?: true;
  /** An `--abort` that undid nothing since the fleet ruled the write stop's undo out (`run.finished.undoKeptOff`). */
  undoKeptOff?: true;
  /** A command that reached part of the fleet (`commit reached 2 of 3 instances …`). */
  split?: string;
  /** The `--to` step it stopped at before the runbook's end: the cutover goes on (`--resume`). */
  to?: string;
  /**
   * Application writes at its end when they did not flow, as its `run.finished` said (whichever
   * run of the cutover stopped them: a `--from` run counts the write stop of the run it continues).
   */
  writesLeft?: WritesLeft;
  by?: { user: string; host: string; pid: number };
  syncbook?: string;
  hash: string;
}

/** Time in which no runner of the cutover was alive: between a run's end (said, or its last event) and the next run's start. */
export interface ModelGap {
  /** The run before the gap (its `n`). */
  after: number;
  from: number;
  to: number;
  ms: number;
  /** `killed`: that run ended without a word (its last event is all we know); `ended`: it finished and someone ran syncbook again later. */
  how: "killed" | "ended";
}

export interface ModelAttempt {
  /** The run it was made in (`ModelRun.n`). */
  run: number;
  startedAt: number;
  endedAt?: number;
  durationMs?: number;
  outcome: StepOutcome;
  error?: string;
}

export interface ModelWait {
  at: number;
  met: boolean;
  /** Who fails which condition, with what value, since how long: why the wait is not over, per instance. */
  failing: { instance: string; condition: string; value: unknown; sinceMs: number }[];
  /** On a met status: the last read that found it unmet (the condition became true after it). */
  unmetAt?: number;
}

export interface ModelStep {
  index: number;
  id: string;
  kind: string;
  title: string;
  /** The latest attempt's outcome (a step done in an earlier run and not run again keeps its own). */
  outcome: StepOutcome;
  attempts: ModelAttempt[];
  /** The latest attempt's start and end (a skipped step: when it was skipped). */
  startedAt?: number;
  endedAt?: number;
  durationMs?: number;
  error?: string;
  hint?: string;
  /** The hint says what to do before the `--resume` that runs the step again (`step.finished`). */
  hintBeforeResume?: true;
  /** The flags that `--resume` needs once that hint is done (`step.finished`): `--allow-changed-runbook`. */
  resumeFlags?: string[];
  /** The way on is the failed run's own command again, with these arguments after the runbook (`step.finished`). */
  againArgs?: string[];
  place?: Place;
  /** Why it was skipped. */
  reason?: string;
  /** The variable its `when` names whole (`rollback` for `when: "${vars.rollback}"`), as its run said. */
  when?: string;
  /** A hook the runbook says lets the application write again (`writesOn: true`), as its last run said. */
  writesOn?: true;
  /** Why a later run did not run it again (`run 2: done in an earlier run (journal)`). */
  resumeNote?: string;
  /** Its time limit, as its last start said. */
  timeoutMs?: number;
  /** A condition wait's last standing. */
  wait?: ModelWait;
  /** `wait.slow` events: no progress for a while. */
  slow: { at: number; stalledForMs: number; detail: string }[];
}

export interface ModelInstance {
  index: number;
  label: string;
  url: string;
  name?: string;
  state?: string;
  info?: string;
  /** Seconds (src/api/progress.ts `lagSeconds`); null: the answer had none. */
  lagSeconds?: number | null;
  /** The lag's direction over the last answers: `falling` (converging), `rising`, `steady`. */
  lagTrend?: "falling" | "rising" | "steady";
  /** Seconds of lag gained per second over the last answers (negative: falling), for an ETA. */
  lagRate?: number;
  canCommit?: boolean;
  canWrite?: boolean | null;
  /** Later versions' fields, when the answer has them (src/api/versions.ts). */
  ceaCatchupSeconds?: number;
  /**
   * 1.22: the stage of change event application, as the answer says it (`collection copy drain`
   * or `steady state`; absent outside it). Release notes 1.22 (mongodb/docs
   * content/mongosync/current/source/release-notes/1.22.txt, 42e877ed): it "reports whether Change
   * Event Application (CEA) is still draining the backlog of change events that accumulated during
   * collection copy or is now applying change events that occurred after collection copy finished".
   */
  ceaStage?: string;
  pingLatencyMs?: number;
  indexBuilding?: Record<string, unknown>;
  warnings?: unknown[];
  /**
   * The embedded verifier's phase and lag on each side (`verification.source` / `.destination`,
   * 1.9+), when the answer has them: the cutover waits for both in `stream hashing` with their
   * lag near 0 (service-facts.md, "The embedded verifier (1.9)").
   */
  embedded?: { source?: ModelEmbeddedSide; destination?: ModelEmbeddedSide };
  /** When its last progress answer arrived. */
  answeredAt?: number;
  /** Its progress reads fail since `since`: the fields above are its last answer, not its state now. */
  down?: { since: number; error: string };
}

export interface ModelEmbeddedSide {
  phase?: string;
  lagSeconds?: number;
}

export interface ModelVerifier {
  phase?: string;
  error?: unknown;
  /** The current generation's counters (`verificationStatus`). */
  counters: Record<string, number>;
  generation?: number;
  /**
   * The current generation's documents (`generationStats`): compared, of its total (generation 0:
   * an estimated count; later: the documents to recheck). Not the verification's total.
   */
  docs?: GenerationDocs;
  /** Generation 0's final documents (`gen0Stats`, v0.1.10 and later; absent during generation 0). */
  gen0?: GenerationDocs;
  answeredAt?: number;
  /**
   * The generation writesOff met (`verifier.writesOff`): a result must come from a later one. Gone
   * once it no longer speaks for the verification the verifier runs: a check sent since, a restart
   * seen, a reverse that took effect.
   */
  writesOffGeneration?: number;
  /** Restarts seen (`verifier.restarted`). */
  restarts: number;
  /** Progress answered the old releases' empty HTTP 500 before the check (v0.1.6 to v0.2.0). */
  oldRelease?: true;
}

export interface ModelDecision {
  at: number;
  run: number;
  index?: number;
  id?: string;
  kind: RunEventMap["decision"]["kind"];
  ok: boolean;
  check?: string;
  reason: string;
}

export interface ModelHook {
  run: number;
  index: number;
  id: string;
  use: string;
  undo: boolean;
  /** The call as a command a person can paste (shell's argv, http's curl line), redacted, when the run journaled one. */
  command?: string;
  startedAt: number;
  endedAt?: number;
  ok?: boolean;
  error?: string;
  durationMs?: number;
}

/** A question put to a person, and who answered it when: a `confirm` (or an `--only` confirmation), or a `--step` prompt. */
export interface ModelPrompt {
  run: number;
  index?: number;
  id?: string;
  kind: "confirm" | "--step";
  question?: string;
  /** `yes`/`no`; a `--step` prompt answered by going on is `yes`. */
  answer: "yes" | "no";
  /** `--yes` (answered by the flag), else the run's user at its host (the person at that terminal). */
  by: string;
  /** When it was answered. */
  at: number;
  /** How long the person took (`--step` prompts). */
  waitedMs?: number;
}

export interface ModelCommit {
  at: number;
  run: number;
  index: number;
  id: string;
  instances: string[];
  skewMs: number;
}

export interface CutoverModel {
  version: typeof MODEL_VERSION;
  /** The cutover: its id (the same in every run of it), runbook, and when its first run started. */
  cutover: {
    id?: string;
    runbook?: string;
    file?: string;
    /** The `--journal-dir` the last run was given, as typed (`run.started.journalDir`): the way on repeats it. */
    journalDir?: string;
    hash?: string;
    startedAt?: number;
    /** The last event folded. */
    lastAt?: number;
    /**
     * The sync that runs now was committed: a run said so at its end, or every instance was seen
     * COMMITTED, since the last reverse that took effect (`reversed`), if any. Every run of the
     * cutover, one a later run counted nothing from too (src/model/fold.ts `runsCommitted`).
     */
    committed: boolean;
    /**
     * Committed only as the fleet reads it (every instance COMMITTED), with no commit of this
     * cutover on record (src/model/fold.ts `commitOnRecord`): an earlier sync's commit, or one
     * sent by hand. `committed` stays true (a commit takes effect on the fleet whoever sent it, and
     * "not committed" would say writes may go back on the source); readers say whose it is not.
     */
    committedOffRecord?: true;
    /**
     * Not committed, and a commit of the sync that runs now may hold: a request of it that got no
     * usable answer (or none yet) after the last fan-out that ended, when it was sent (`at`) and
     * the `instances` that may hold it; or a run since the last reverse said so at its end (a run
     * that carried such a commit: `instances` empty, `at` its end). "Not committed" would tell
     * the bridge writes may go back on the source.
     */
    commitInDoubt?: { at: number; instances: string[] };
    /**
     * An instance accepted a commit of the sync that runs now, as the journal shows it (a fan-out
     * that ended, `commits`, or an accepted request of one whose runner died): the journal's rule
     * (src/run/earlier.ts `evidenceOf`), whatever the runs said at their ends.
     */
    commitAccepted?: true;
    /** The instances (labels, as each run named them) that accepted a commit request of the sync that runs now: a split's first fan-out, which journals no `commit.sent`, included. */
    commitAcceptedBy?: string[];
    /** The last reverse that took effect, its step and when it ended: the sync that runs now is the one it started. */
    reversed?: { id: string; at: number };
    /**
     * A `verify` passed on the verification the runs that count hold (`verifier.verified`, or what a
     * `--from` run carried: `verifier.carried`): when and in which step (neither when the journal
     * of the run that passed it is not folded). Whether that makes the cutover verified is
     * src/steps/kit/earned.ts `verification`'s to say (the report asks it).
     */
    /** `filter`: the check's (JSON), which verified only the documents it matches. */
    verified?: { at?: number; step?: string; filter?: string };
    /** A reverse was sent since the verification began (its step id): the verification no longer counts. */
    verificationReversed?: string;
    /**
     * The last `verify` step of the runs that count failed (src/model/verify-failed.ts): its `step`
     * (from 1), `id` and `error`; the why of "not verified" names it (earned.ts `verification`).
     */
    verifyFailed?: { step: number; id: string; error?: string };
    /**
     * A reverse sent since the last that took effect whose step has not ended ok, and which may have
     * reached these instances (accepted, or no usable answer: a runner killed with it on its way):
     * the sync may run either way now, `committed` notwithstanding; only the fleet can say.
     */
    reverseInDoubt?: { id: string; at: number; instances: string[] };
  };
  runs: ModelRun[];
  /** The spans with no runner alive, between runs. */
  gaps: ModelGap[];
  instances: InstanceRef[];
  verifierUrl?: string;
  /** The first process's instance index, whose canWrite alone is valid (none: not declared, several instances). */
  canWriteFrom?: number;
  steps: ModelStep[];
  /**
   * The `--var` values (`name=value`) its runs decided their steps' `when`s with, as the steps tell
   * (src/next-run.ts `decidedVars`): what a way on must carry, since a run with others is refused.
   */
  whenVars: string[];
  /**
   * The other `--var` values (`name=value`) the cutover was given (the last run's
   * `run.started.cutoverGiven` and `cutoverVars`, else its `given` and `vars`; a secret one left
   * out): its hooks' calls were made of them, so a way on repeats them (src/next-run.ts `wayOnVars`).
   */
  givenVars: string[];
  /**
   * The values the cutover runs with, as its last run's `run.started` journaled them (`cutoverVars`
   * and `cutoverGiven`, else `vars` and `given`; env-derived and secret parts `***`): every variable,
   * given or a default then. A way on that carries `--allow-changed-runbook` names those its steps
   * read (src/run/earlier.ts `cutoverVarsFrom`). Absent: a journal of an earlier runner.
   */
  cutoverValues?: { vars: Record<string, string | number | boolean>; given: string[] };
  /** The step running now (undefined between steps and after the run). */
  current?: number;
  fleet: { instances: ModelInstance[]; copy: CopyView };
  verifier?: ModelVerifier;
  /** The write-stop window (the last), every one, and application writes when they do not flow. */
  window?: WriteStopWindow;
  windows: WriteStopWindow[];
  writesLeft?: WritesLeft;
  decisions: ModelDecision[];
  hooks: ModelHook[];
  prompts: ModelPrompt[];
  commits: ModelCommit[];
  /**
   * The last commit whose requests the journal shows sent, answered or not (`request.sent` of
   * POST /api/v1/commit): a commit may take effect from its first request on, before its fan-out
   * ends (`commits`), and a runner killed in between leaves only these lines.
   */
  commitRequested?: {
    at: number;
    run: number;
    instances: string[];
    /** Each instance's answer, of its latest request (`ok`, `error`: refused or never sent, `unknown`: none usable, `pending`: none yet). */
    answers: Record<string, "ok" | "error" | "unknown" | "pending">;
  };
  /** The notifications journaled (`notification.*`): how many were delivered, and each that was not or is in doubt (src/plugin/deliveries.ts). */
  notifications?: { delivered: number; notDelivered: string[] };
  /** warn and error log lines. */
  logs: { at: number; run: number; level: "warn" | "error"; message: string; index?: number }[];
}
