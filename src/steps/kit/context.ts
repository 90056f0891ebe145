/**
 * What a step sees while it runs: the run (runbook, fleet, verifier, plugins, the event stream,
 * the run's memory for interlocks) and its own index, title, signal and time limit.
 */
import type { VerifierClient } from "../../api/index.js";
import type { VerifierMemory } from "../../api/verifier-memory.js";
import type { Fleet, WindowTracker } from "../../fleet/index.js";
import type { PluginRegistry, PluginRunContext, UndoStack } from "../../plugin/index.js";
import type { LoadedRunbook } from "../../runbook/index.js";
import type { Runbook, Step, StepKind } from "../../runbook/types.js";
import type { Emit, ServiceRefusal } from "../../events.js";
import { TimeoutError } from "../../timers.js";
import { formatDuration } from "../../runbook/duration.js";

/** The run's memory of its verification lives below the steps, for the journal to rebuild. */
export type { VerifierAsk, VerifierMemory } from "../../api/verifier-memory.js";

/** The checks `--force` can name. */
export const FORCE_CHECKS = [
  "fleet-idle",
  "can-commit",
  "writes-stopped",
  "no-errors",
  "fleet-state",
  "fleet-identity",
  "hook-processes",
  "stopped-in-commit",
] as const;
export type ForceCheck = (typeof FORCE_CHECKS)[number];

export interface Prompter {
  confirm(message: string, signal: AbortSignal): Promise<boolean>;
  stepChoice(
    step: {
      index: number;
      id: string;
      kind: string;
      title: string;
      /** The step is the point of no return (it sends commit): what it does, said in its question. */
      pointOfNoReturn?: string;
    },
    signal: AbortSignal,
  ): Promise<"run" | "skip" | "rest" | "abort">;
}

/** What the run remembers for its interlocks. */
export interface RunMemory {
  /** A stopWrites step succeeded in this run (or the journal of the run resumed says so). */
  writesStopped: boolean;
  /** Commit was sent (undo is disarmed from then on). */
  commitSent: boolean;
  /**
   * A commit of the sync that runs now was sent past its forced `writes-stopped` interlock
   * (`--force=writes-stopped`): the application's writes were not known stopped for it, so
   * `commitSent` does not say they are (the verify step's writesOff goes only after they have).
   */
  commitWritesForced?: boolean;
  /** At least one instance accepted commit (or was seen committing): the cutover happened. */
  commitAccepted: boolean;
  /**
   * This run's commit, sent, was refused by every instance it reached and none may hold it (each
   * answered success:false, or its request never left): it took no effect. Without it, a commit
   * sent and not accepted is in doubt (`run.finished.commitInDoubt`): a resumed or carried commit
   * the journal shows sent may have reached an instance (src/run/earlier.ts `evidenceOf`).
   */
  commitRefused?: boolean;
  /** Every `success: false` answer of this run: commit refuses while there is one. */
  serviceErrors: ServiceRefusal[];
  /** What the run knows of the fleet's identity, from every progress read (fleet-ops.ts `observeIdentity`). */
  identity: IdentityMemory;
  /**
   * The cutover acted: a request sent or a hook run, in this run or an earlier run of it (the rule
   * of src/journal/read.ts `summarizeJournal`). From then on a plain run is refused (its cutover is
   * unfinished, src/journal/cutover.ts) and `--resume` goes on, with the `instances:` it began with;
   * before, the runbook may be corrected and run again (fleet-ops.ts `identityWayOn`).
   */
  acted: boolean;
  /**
   * This run acted (`acted`'s rule, this run's events alone): only then does `--resume` go on from
   * its journal; a run that did not is passed over for the last one that did (src/journal/read.ts).
   */
  actedNow: boolean;
  /**
   * A command went to the service (a `request.sent` to it, this run or an earlier run of the
   * cutover). Until then only the runbook's hooks ran: nothing of this sync is on the fleet, and
   * a corrected `instances:` list goes on as a new cutover (fleet-ops.ts `identityWayOn`).
   */
  sentToFleet: boolean;
  /** A command that reached part of the fleet and was refused by the rest, as said at the run's end. */
  split?: string;
  /**
   * The last `reverse` step of the cutover that ended ok (this run's, or one the run it resumes
   * shows): `commitSent` and `commitAccepted` speak of the sync that runs since, not of the commit
   * before it (said at the run's end: "not committed since the reverse").
   */
  reversed?: string;
  /**
   * A `reverse` step that may have reached the fleet (an instance accepted it, or gave no usable
   * answer that progress settled) and did not end ok, in this run or in the run it resumes (which
   * did not adopt it): the sync may run either way now, the commit before it notwithstanding (said
   * at the run's end, `run.finished.reverseInDoubt`).
   */
  reverseInDoubt?: string;
  /** What this run (or the run it resumes) asked the verifier: never resent blindly. */
  verifier: VerifierMemory;
}

/** The fleet's identity as this run has seen it: the baseline later reads must agree with. */
export interface IdentityMemory {
  /** Each instance's mongosyncID as first reported, by instance index. */
  ids: Map<number, string>;
  /**
   * The cluster names the fleet syncs from and to: this run's start body, else the first read that
   * showed one; a reverse swaps them.
   */
  direction?:
    | {
        source: string;
        destination: string;
        from: string;
        /** A reverse is under way: either way round is legal until every instance shows the new way. */
        either?: boolean;
      }
    | undefined;
  /** The first read that showed the instances are not one fleet: commands stay refused for the run. */
  broken?: { reason: string; at: number } | undefined;
  /** The problems last said (each change is said once). */
  said: string;
}

export function newIdentityMemory(): IdentityMemory {
  return { ids: new Map(), said: "" };
}

export interface Defaults {
  pollMs: number;
  timeoutMs: number;
  /** The default step time limit as the runbook states it (`timeoutMs` is it in wall time). */
  runbookTimeoutMs: number;
  requestTimeoutMs: number;
  slowAfterMs: number;
  /** How long to keep retrying progress (after resume it may fail for minutes). */
  progressGiveUpMs: number;
  /** Inside the write-stop window (writes stopped, the destination not taking writes yet) waits poll this often (with jitter). */
  windowPollMs: number;
  /**
   * Runbook time → wall time. Identity in a real run; in a rehearsal the simulator's clock runs
   * `timeScale` times faster, so the runbook's waits, polls and sleeps shrink with it (hook
   * timeouts do not: hooks are real processes).
   */
  scale(ms: number): number;
}

export interface RunContext {
  loaded: LoadedRunbook;
  /**
   * The runbook as a way on names it, after `syncbook run `: with the `--var` values the cutover
   * goes on with (src/next-run.ts `wayOnTarget`), so that a step's hint is not refused for the
   * values it left out.
   */
  target: string;
  /**
   * The runbook as a way on that nothing checks against the cutover's values names it (one with
   * `--allow-changed-runbook`, or `--new-cutover`): every `--var` the cutover was given, a secret
   * one as `***` (src/next-run.ts `wayOnVarsKept`). Left out, a value is read at the runbook's
   * default, another fleet, which such a run accepts; `***` is refused until it is set again.
   */
  targetKept: string;
  /** Said after a command with `targetKept` when it holds a masked value (`MASKED_VAR_NOTE`), else "". */
  keptNote: string;
  /**
   * This run's own command again, as the arguments after `syncbook run <runbook>` (src/model/again.ts
   * `ownCommandArgs`), for a failure whose way on it is (`StepFailure.againArgs`). Undefined: a
   * caller that did not say (a library run).
   */
  again?: readonly string[] | undefined;
  runbook: Runbook;
  fleet: Fleet;
  verifier: VerifierClient | undefined;
  /** Throws when the journal cannot record the event (nothing may be sent then). */
  emit: Emit;
  /** The same, for events that precede no request (step ends, undo): never throws, so undo still runs. */
  say: Emit;
  memory: RunMemory;
  /** The write-stop window, folded from the run's events: waits poll fast while it is open. */
  window: WindowTracker;
  defaults: Defaults;
  force: ReadonlySet<string>;
  yes: boolean;
  prompt: Prompter | undefined;
  plugins: { registry: PluginRegistry; ctx: PluginRunContext; undo: UndoStack };
  mode: "run" | "rehearse" | "resume";
  /**
   * Where the application's writes can be seen (a rehearsal's simulator): after a stopWrites
   * hook, the interlock passes only if this says they stopped.
   */
  writesProbe?: WritesProbe | undefined;
  /**
   * The hook processes earlier runs of this cutover left (src/run/orphans.ts), asked by commit
   * right before it is sent: calls with a live process, and calls whose processes cannot be told
   * (another host or PID namespace, no /proc). Undefined: none journaled (or a library caller).
   */
  earlierHooks?: EarlierHooks | undefined;
  /**
   * Why no undo of a write stop may turn writes on, whatever the fleet shows (undefined: nothing):
   * an earlier cutover's commit that may still take effect (src/run/earlier.ts
   * `earlierCommitOnFleet`), which an instance holding it in commit's round hides from the fleet
   * read before the undo. Asked when the undo is due, from the folder's journals then: this run's
   * own start that took effect since clears it (a new sync), as `liveJournals` has it. Never throws.
   */
  earlierCommit?: (() => Promise<string | undefined>) | undefined;
}

/** What commit asks of the hook processes earlier runs left, each described for people. */
export interface EarlierHooks {
  judge(): { live: string[]; unknown: string[] };
}

/** Reads whether the application still writes: `stopped`, and what was seen, for people. */
export type WritesProbe = (signal: AbortSignal) => Promise<{ stopped: boolean; detail: string }>;

export interface StepContext {
  run: RunContext;
  index: number;
  id: string;
  kind: StepKind | "plugin";
  title: string;
  step: Step;
  /** Aborts on Ctrl-C and at the step's time limit. */
  signal: AbortSignal;
  timeoutMs: number;
  /** Its poll interval and stall time (its own fields, else the defaults; scaled in a rehearsal). */
  pollMs: number;
  slowAfterMs: number;
  /**
   * A command step sent to part of the fleet (`--only`, or `--resume` completing a split
   * command; kit/targets.ts): the instance indexes, why, and for a completion the instances whose
   * earlier refusal of this very command is what is being completed (the no-errors interlock
   * does not count those).
   */
  targets?: { only: readonly number[]; why: string; forgive?: readonly string[] } | undefined;
}

/** Why a step failed, for people: the message, a hint, and what kind of failure it was. */
export class StepFailure extends Error {
  readonly hint: string | undefined;
  readonly reason: "failed" | "interlock" | "timeout" | "assert" | "declined" | "unsafe";
  /**
   * The hint says what to do before the `--resume` that runs the step again (restart the verifier,
   * check the fleet by hand): without it that resume meets the same failure. `status` and the watch
   * page say such a hint with the `--resume` they offer, and no other (some name a runbook edit,
   * another command, or "the lines above", which are not on their screen).
   */
  readonly beforeResume: boolean;
  /**
   * The flags that `--resume` needs once the hint is done (`--allow-changed-runbook` after the
   * runbook edit the hint names): a plain `--resume` is refused again, and status and the page
   * offered it (a review). Only with `beforeResume`.
   */
  readonly resumeFlags: readonly string[] | undefined;
  /**
   * The way on is this run's own command again, once the hint is done (`RunContext.again`: its
   * arguments after the runbook): a refusal before this run acted, which a `--resume` would refuse
   * (a corrected `instances:` list) or pass over (fleet-ops.ts `identityWayOn`). Journaled, so
   * that `status` and the watch page offer it, not the plain `--resume` (a review). Not with
   * `beforeResume`.
   */
  readonly againArgs: readonly string[] | undefined;
  constructor(
    message: string,
    opts: {
      hint?: string;
      reason?: StepFailure["reason"];
      beforeResume?: true;
      resumeFlags?: readonly string[];
      againArgs?: readonly string[] | undefined;
    } = {},
  ) {
    super(message);
    this.name = "StepFailure";
    this.hint = opts.hint;
    this.reason = opts.reason ?? "failed";
    this.beforeResume = opts.beforeResume === true && opts.hint !== undefined;
    this.resumeFlags = this.beforeResume && opts.resumeFlags?.length ? opts.resumeFlags : undefined;
    this.againArgs = !this.beforeResume && opts.hint !== undefined ? opts.againArgs : undefined;
  }
}

/** What a hint's way on reads of the run (`wayOn`). */
export type WayOnRun = Pick<RunContext, "mode" | "target" | "targetKept" | "keptNote">;

/** How a hint's way on goes on (`wayOn`). */
export interface WayOnHow {
  /**
   * The hint edits the runbook: a plain `--resume` of a changed runbook is refused
   * (src/journal/reconcile.ts `changed-runbook`), so this one carries `--allow-changed-runbook`
   * with every `--var` kept (`targetKept`), as `StepFailure.resumeFlags` says to status and the page.
   */
  changed?: boolean;
  /** The interlock it goes past (`--force=`), for one who accepts what the hint says of it. */
  force?: ForceCheck;
  /** The cutover again from its start, not from this step (`--new-cutover`, every `--var` kept). */
  newCutover?: boolean;
}

/**
 * The way on after a step's failure as its hint names it, and the only place a hint in src/steps
 * names `syncbook run` or `--resume` (test/steps/way-on.test.ts): in a run or a resume the command,
 * as one pastes it; in a rehearsal "rehearse again". A rehearsal journals nothing, and `syncbook
 * run … --resume` pasted acts on the runbook's real fleet (or is refused for want of a journal);
 * its own way on is the cause removed and the rehearsal again (with the same `--force`, which
 * `syncbook rehearse` takes too).
 */
export function wayOn(run: WayOnRun, how: WayOnHow = {}): string {
  if (run.mode === "rehearse") return how.force ? `rehearse again with \`--force=${how.force}\`` : "rehearse again";
  if (how.newCutover) return `\`syncbook run ${run.targetKept} --new-cutover\`${run.keptNote}`;
  if (how.changed) return `\`syncbook run ${run.targetKept} --resume --allow-changed-runbook\`${run.keptNote}`;
  return `\`syncbook run ${run.target} --resume${how.force ? ` --force=${how.force}` : ""}\``;
}

/**
 * A rehearsal's way on where a real run's is done by hand to the fleet or the verifier (check its
 * progress, restart it with --clean): the simulator stopped with the rehearsal, and the next one
 * starts afresh, so what failed it (a `--fault`, the runbook) is what to change.
 */
export function simulatorWayOn(of: "fleet" | "verifier"): string {
  return `${of === "fleet" ? "The fleet is the rehearsal's simulator" : "The verifier is the simulator's"}, stopped with the rehearsal: see why above, then rehearse again.`;
}

/**
 * A way on done by hand to the real fleet or verifier (`real`: check it, restart it, then the
 * `wayOn` it names); in a rehearsal `simulatorWayOn`.
 */
export function byHand(run: Pick<RunContext, "mode">, of: "fleet" | "verifier", real: string): string {
  return realRunOr(run, real, simulatorWayOn(of));
}

/**
 * Words outside a step's hint (the unwind's decisions, a forced exit's report, the run's end) that
 * name a real run's way on, plain as those lines print them (`syncbook run … --abort`, `--resume`,
 * `--from`, `syncbook status`): `real` in a run or a resume, `rehearsal` in a rehearsal, whose
 * fleet is its simulator, stopped with it, and which journals nothing (each pasted acts on the
 * runbook's real fleet, or is refused for want of a journal). Lines as well as words: `[]` says
 * nothing. test/steps/way-on.test.ts allows those words only in `real` (and `byHand`'s).
 */
export function realRunOr<T>(run: Pick<RunContext, "mode">, real: T, rehearsal: T): T {
  return run.mode === "rehearse" ? rehearsal : real;
}

/**
 * A rehearsal's way on after a refusal whose run's way on is a run from an earlier step (`--from`
 * its write stop): each rehearsal's simulator starts afresh, so one that begins at a later step
 * has neither the sync nor the write stop of the steps before it.
 */
export const REHEARSE_FROM_THE_START =
  "rehearse again from the first step: each rehearsal's simulator starts afresh, so one that starts at a later step has neither the sync nor the write stop of the steps before it";

/**
 * The way on after a step ran out of time, after `lead` (what to look at first, or ""): a raised
 * `timeout` edits the runbook, and a plain `--resume` of a changed runbook is refused
 * (src/journal/reconcile.ts `changed-runbook`), so that one carries `--allow-changed-runbook` with
 * every `--var` kept (`targetKept`); unchanged, the plain `--resume` (a review: the hint said
 * "Raise the step's `timeout`" and the run's end offered the plain one, refused once it was raised).
 */
export function timeoutHint(run: WayOnRun, lead: string): string {
  // a rehearsal names no `syncbook run`: pasted, it would act on the runbook's real fleet
  if (run.mode === "rehearse")
    return lead
      ? `${lead}, or raise the step's \`timeout\` in the runbook, then rehearse again.`
      : "Raise the step's `timeout` in the runbook, then rehearse again.";
  const raised = `raise the step's \`timeout\` in the runbook, then ${wayOn(run, { changed: true })}`;
  const again = wayOn(run);
  return lead
    ? `${lead}; once they are ready, ${again} waits again. Or ${raised}.`
    : `To give it more time, ${raised}. Unchanged, ${again} goes on from this step with the same limit.`;
}

/**
 * The reason a step's signal aborted at its time limit: the one timeout error (src/timers.ts), the
 * step's own. `ms` is wall time; `runbookMs` the limit as the runbook states it (in a rehearsal the
 * simulator's clock runs faster, and the wall-time limit is shorter by as much).
 */
export class StepTimeout extends TimeoutError {
  override name = "StepTimeout";
  constructor(
    ms: number,
    readonly runbookMs: number = ms,
  ) {
    super(ms);
  }
  /** The limit in the runbook's words: `12s`, or in a rehearsal `12s (240ms of wall time on the rehearsal's faster clock)`. */
  get limitText(): string {
    return this.runbookMs === this.ms
      ? formatDuration(this.ms)
      : `${formatDuration(this.runbookMs)} (${formatDuration(this.ms)} of wall time on the rehearsal's faster clock)`;
  }
}
