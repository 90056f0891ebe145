/**
 * `syncbook status`: the fleet, the verifier and the journal at a glance, read-only (GETs and
 * file reads only). Every instance's state, canCommit, lag, copy, coordinator and direction, the
 * fleet's identity problems, the verifier's phase and counters, what the journal last did, which
 * journal `--resume` would use and whether it would accept it, and whether a run holds the lock.
 * The data is plain JSON (`--json` prints it as is); `src/cli/status.ts` words it for people.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import {
  blocksUntilEveryInstance,
  commandTookEffect,
  createVerifierClient,
  isCommandOperation,
  lagSeconds,
  type CommandOperation,
} from "../api/index.js";
import type { ApiError, VerifierProgress } from "../api/index.js";
import { UserError, errorMessage } from "../errors.js";
import { instanceLabel, type RunEvent } from "../events.js";
import { CutoverFold, joinJournals, syncCommits } from "../model/fold.js";
import type { CutoverModel } from "../model/contract.js";
import { fleetReadiness, pastTheCommit, urlsAt, type Readiness, type ReadinessPlan } from "../model/readiness.js";
import { createFleet, type FleetSnapshot, type StoppedInCommit } from "../fleet/index.js";
import {
  cutoverJournalsRead,
  cutoverOfRun,
  instanceKey,
  isPidAlive,
  JOURNAL_EXTENSION,
  LOCK_FILE_NAME,
  refusalsCounted,
  runbookJournal,
  type JournalState,
} from "../journal/index.js";
import { MASK, redactLeaves } from "../redact.js";
import { shellCommand } from "../text.js";
import type { LoadedRunbook } from "../runbook/index.js";
import { instancesOf, type Runbook } from "../runbook/types.js";
import { canWriteInstance } from "../runbook/can-write.js";
import { addCopySample, copyProgress, emptyCopyState } from "../fleet/eta.js";
import { emptyProgress500 } from "../steps/kit/verifier.js";
import { OLD_RELEASE, persisted, verification, verificationText, verifierEarned } from "../steps/kit/earned.js";
import type { VerifierMemory } from "../steps/index.js";
import { opensWriteStop, readinessPlan, traitsOf } from "../steps/index.js";
import {
  currentSyncCommit,
  cutoverValuesKnown,
  cutoverVars,
  cutoverVarsFrom,
  earlierCommitFinish,
  earlierCommitOnFleet,
  earlierCommitSaid,
  fleetVarNames,
  lastReverse,
  passedOverRefusal,
  readFolderJournals,
  resumeRefusedByOwn,
  reverseInDoubt,
  setAsideCommand,
  stopAbortCut,
  wayOnFromRefused,
  type EarlierCommitSaid,
} from "./earlier.js";
import { planSteps, stopWritesBefore } from "./plan.js";
import {
  CALLED_OFF_RESUME,
  nextAfterFailedUndo,
  PASSED_OVER_AGAIN,
  passedOverWhy,
  offerAfterFile,
  RUNBOOK_CHANGED_NOTE,
  STOPPED_IN_COMMIT_AHEAD,
  RESTOP_DOES,
  abortDoes,
  STOPPED_IN_COMMIT_NOTE,
  STOPPED_IN_COMMIT_RESTART,
  STOPPED_IN_COMMIT_RESUME,
  MASKED_VAR_WORDS,
  varArgs,
  varText,
  wayOnVarsKept,
  type NextOffer,
  type NextRun,
} from "../next-run.js";
import {
  commitAhead,
  lastAttempted,
  resumedRun,
  resumeFirst,
  runAgainAfterCommit,
  runAgainFirst,
  stoppedInCommitAhead,
} from "../model/again.js";

/**
 * 2: an instance's `copy` has no `percent` (it was its share of the fleet's estimate); the fleet's is `copy`.
 * 3: the verifier's empty HTTP 500 has no `phase` (it does not say whether a check ran); the
 * verifier says whether its answer is this cutover's (`cutover`), the journal whether it is verified.
 */
export const STATUS_FORMAT = 3;

export interface InstanceStatus {
  /** Its place in the list, from 1. */
  place: number;
  name: string;
  url: string;
  reachable: boolean;
  error?: string;
  /** What to check when it is unreachable (the API client's hint for its error). */
  hint?: string;
  state?: string;
  canCommit?: boolean | null;
  /**
   * The first process's only (src/runbook/can-write.ts): the others' `canWrite` "is not valid"
   * (the cutover page), so it is left out for them, and for every instance of a fleet that
   * declares no first process.
   */
  canWrite?: boolean | null;
  info?: string | null;
  /** Seconds (`lag.overallLagSeconds` when present, else the deprecated `lagTimeSeconds`). */
  lagSeconds?: number | null;
  /**
   * Its part of the copy: the service's estimate is the fleet's, so an instance copies a share of
   * it and has no percentage of its own (the fleet's is `Status.copy`). `started`: past the
   * spec's 0-of-1 placeholder.
   */
  copy?: { copiedBytes: number | null; totalBytes: number | null; started: boolean } | null;
  id?: string | null;
  coordinatorId?: string | null;
  /** This instance is the coordinator (its id is the coordinator id). */
  coordinator?: boolean;
  direction?: { source: string; destination: string } | null;
}

export interface VerifierStatus {
  url: string;
  reachable: boolean;
  error?: string;
  phase?: string;
  generation?: number | null;
  counters?: Record<string, number>;
  verifierError?: unknown;
  /** What its answer says about the process or release (a restart, an old release, no generation). */
  notes?: string[];
  /**
   * Whether its answer is this cutover's running check and its verification result, judged against
   * what the journal says the run asked (src/steps/kit/earned.ts `verifierEarned`); `why` not.
   */
  cutover?: {
    check: boolean;
    result: boolean;
    why?: string;
    /** A finished result this cutover refuses (compared nothing, skipped DDL, not from generation 0): no wait makes it one. */
    refused?: true;
  };
}

export interface JournalStatus {
  folder: string;
  /** The journal `--resume` would continue (undefined: none, or `refused` names why it would take none). */
  resumeWith?: string;
  /** Newer journals `--resume` passes over (their run sent nothing). */
  passedOver: string[];
  /**
   * The newest of them ended refused where its way on is its run's own command again
   * (`StepFailure.againArgs`: a `--from` or `--new-cutover` run refused by fleet-identity before it
   * sent anything): that command, offered as the run's end named it; a `--resume` would go on from
   * the run before it instead (a review).
   */
  passedOverAgain?: { file: string; number: number; id: string; hint: string; args: string[] };
  /** Why `--resume` would refuse it outright (unreadable, edited, cut short of its witness, unfinished journals that do not order), if it would. */
  refused?: string;
  /** What to do about it. */
  refusedHint?: string;
  warnings: string[];
  /**
   * The last step the journal shows, when it (last) started, and how it ended (undefined: still
   * running or cut off: the lock says which); `asksPerson`: it waits for an operator's answer.
   */
  lastStep?: {
    number: number;
    id: string;
    kind: string;
    startedAt: string;
    outcome?: string;
    asksPerson?: true;
    /** A failed step's hint, as its run said it. */
    hint?: string;
    /** That hint says what to do before the `--resume` that runs the step again: said with it (src/steps/kit/context.ts `StepFailure`). */
    hintBeforeResume?: true;
    /** The flags that `--resume` needs once that hint is done (`StepFailure.resumeFlags`): offered with them. */
    resumeFlags?: string[];
    /**
     * The way on is the failed run's own command again, once that hint is done, with these
     * arguments after the runbook (`StepFailure.againArgs`, src/model/again.ts `runAgainFirst`):
     * offered instead of the `--resume` that would refuse a corrected list or pass that run over.
     */
    againArgs?: string[];
  };
  /**
   * The last command it sent: op, step, each instance's answer (`ok`, `error`: refused or never
   * sent, `unknown`: sent without a usable answer), its error text, and `said`: the answer in
   * words with what the fleet shows now, `unknown` only where neither tells (issue 39, point 8).
   */
  lastCommand?: {
    op: string;
    step: number;
    /**
     * Sent by an earlier run of the cutover, in journal `from` (absent: not named), and carried by
     * the `--from` run that wrote this journal (src/journal/state.ts): no run of this journal sent one.
     */
    carried?: { from?: string };
    answers: Record<string, string>;
    errors?: Record<string, string>;
    said?: Record<string, string>;
  };
  /** `verified`: a `verify` step passed on this cutover's result (src/steps/kit/earned.ts). */
  /** `to`: the run stopped at this `--to` step before the runbook's end (its cutover is open). */
  finished?: {
    outcome: string;
    committed: boolean;
    /** Not committed, and a commit sent may hold (the read model's `cutover.commitInDoubt`). */
    commitInDoubt?: true;
    verified: boolean;
    at: string;
    message?: string;
    aborted?: true;
    /** An `--abort` whose undos all ran (exit 0): the cutover is called off, `--resume` goes on with it. */
    calledOff?: true;
    /** The run's exit code (`run.finished.exitCode`): an `--abort`'s says whether writes are back on. */
    exitCode?: number;
    /** An `--abort` that undid nothing: the fleet or the journal ruled the write stop's undo out (writes stay stopped on purpose). */
    undoKeptOff?: true;
    to?: string;
  };
  writesStopped?: boolean;
  /**
   * A commit of the sync that runs now may have reached the fleet (`currentSyncCommit`,
   * src/run/earlier.ts: after a reverse that took effect, the reversed sync's): `--abort` refuses,
   * so status offers none.
   */
  commitSent?: true;
  /**
   * A reverse (its step id) that may have reached the fleet and whose step did not end ok
   * (`reverseInDoubt`, src/run/earlier.ts): `--abort` refuses, so status offers none, and says it
   * where no closed window of this journal says it (a runbook that only reverses).
   */
  reverseInDoubt?: string;
  /**
   * A commit of another journal of the folder that may still take effect (src/run/earlier.ts
   * `earlierCommitOnFleet`, as `--abort` asks it), where this journal's sync has none sent: `why`
   * in `--abort`'s words; `finish`, the one command that closes its round (`earlierCommitFinish`);
   * `resumeSendsCommit`, a `--resume` would send a commit, which that one refuses.
   */
  earlierCommit?: EarlierCommitSaid & {
    finish?: { from: string; commit: string; only: string[] };
    /** A journal that cannot be judged, which may hold such a commit: the command that sets it aside. */
    aside?: string;
    resumeSendsCommit: boolean;
  };
  /**
   * The refusal `--resume` meets on this journal alone, whatever the fleet shows (src/run/earlier.ts
   * `resumeRefusedByOwn`: a start, commit or reverse after the step it goes on at that may have
   * reached an instance, carried by a `--from` run that stopped before it), in its words: no
   * `--resume` is offered then, its refusal and hint are said instead.
   */
  resumeRefused?: { message: string; hint: string };
  /** Writes were stopped by an earlier run of the cutover (another journal) and still were at this run's end. */
  writesStoppedBefore?: true;
  /**
   * The last run was refused by commit's `writes-stopped` interlock: the stopWrites step a `--from`
   * run starts at (it stops writes again, then goes on); `--resume` would meet the same refusal.
   */
  restopFrom?: string;
  /**
   * The last run finished ok and committed, past a step after the commit that failed
   * (`continueOnError`: a verify): the step a `--from` run runs again, in this cutover (its write
   * stop and commit count, src/run/earlier.ts `afterItsCommit`).
   */
  againFrom?: string;
  /**
   * The journal was written for another text of the runbook than the one read now: `--resume`
   * refuses it, and a `--from` counts nothing from it, unless `--allow-changed-runbook`.
   */
  runbookChanged?: true;
  /**
   * What the journaled run saw of the verifier: restarts it followed, the old releases' empty HTTP
   * 500, a verification it refused (resumed), whether a `verify` passed on this cutover's result, and
   * the verdict.
   */
  verifier?: {
    restarts: number;
    oldRelease: boolean;
    refused?: string;
    /** A `verify` step passed on this cutover's result (`verifier.verified`), whatever the verdict. */
    passed: boolean;
    /**
     * The verdict, by the one rule (`verification`): never true where `why` is said (an instance
     * stopped during the commit makes a passed verify count for nothing; a reader of `--json` took
     * `verified: true` beside that why for the verdict, a review).
     */
    verified: boolean;
    /** A reverse was sent since the last verification began (its step): nothing before it counts. */
    reversed?: string;
    /** The verification's check went with this filter (JSON): it checks only the documents it matches. */
    filter?: string;
    /**
     * Why it is not verified, by the one rule (src/steps/kit/earned.ts `verification`, as the report
     * and the watch page ask it): the last verify step's failure named (src/model/verify-failed.ts).
     */
    why?: string;
  };
  /**
   * Whether the cutover is verified, and why not: the one rule (src/steps/kit/earned.ts
   * `verification`), asked once for the journal; `finished.verified` and `verifier.verified` and
   * `why` are this verdict. `text` says it in the words every output uses (`verificationText`),
   * as the report's `verification` and the watch page's `/state.json` `verification` do.
   */
  verification?: ({ verified: true; filter?: string } | { verified: false; why: string }) & { text: string };
  /**
   * The last stopWrites hook started and never ended (its runner killed in it): it may have stopped
   * writes, or not (`--resume` runs it again; `--abort` runs its undo).
   */
  writesStopInDoubt?: { step: number; id: string };
  /**
   * The last stopWrites hook succeeded (writes stopped: the write-stop window opened, `since`), and
   * its run ended before its step did (killed in the step's `check:`, or before its end was
   * journaled): writes are stopped, though the step is not counted (`--resume` runs it again;
   * `--abort` runs its undo). An adversarial run: status said "not stopped by the run (or undone)"
   * while the switch was off and the watch page said stopped. `failed`: its step ended failed after
   * the hook (its `check:`), and no undo began (the run killed before its unwind ran it): status
   * said "not stopped" there too.
   */
  writesStopCut?: { step: number; id: string; since?: string; failed?: true };
  /**
   * The last run was an `--abort` that could not undo this stopWrites (its step has no `undo:`):
   * writes stay stopped until turned on by hand, and `--resume` runs it again (src/run/resume-decide.ts).
   */
  writesStopUndoless?: { step: number; id: string };
  /**
   * An `--abort` began after this stopWrites held, and the journal does not show what became of it
   * (undone, or handed to a person): the abort was cut off, or its journal failed. Writes may be
   * stopped or back on (`--resume` runs the stop again before its commit).
   */
  writesStopAbortCut?: { step: number; id: string };
  /** A stopWrites whose undo started and never succeeded (failed, or cut off): writes are probably still stopped. */
  writesUndoFailed?: { step: number; id: string; use?: string; command?: string; stopFailed?: true };
  /** When writes were stopped (the write-stop window opened) and not seen back on since: ISO time. */
  writesStoppedSince?: string;
  /**
   * The write-stop window closed on the destination taking writes (`canWrite` on the first
   * process, or COMMITTED on every instance): since when (ISO time), and which.
   */
  destinationWrites?: {
    since: string;
    by: "canWrite" | "committed";
    /** A reverse (its step id) ended ok after it: the sync runs the other way, its destination is the other cluster. */
    reversedBy?: string;
    /** That reverse's step did not end: it may have reached the fleet (`reverseInDoubt`), or not. */
    reverseInDoubt?: true;
    /**
     * No runner read the fleet between the commit and `since` (killed after it, resumed later):
     * `since` is only the first read that showed it, the latest it may have begun (ISO times).
     */
    unseen?: { from: string; to: string };
  };
  /** A `writesOn` hook said the application writes again (to the destination): ISO time. */
  writesOnSince?: string;
  /**
   * The last writesOn hook started and did not succeed: cut off with its run, or failed
   * (`failed`): the application may be writing again, or not.
   */
  writesOnInDoubt?: { step: number; id: string; failed?: true };
  /**
   * The refusals the commit's no-errors interlock counts (`refusalsCounted`, src/journal/state.ts:
   * the sync that runs now), `<op> by <instance>`, while a commit a `--resume` sends is still
   * ahead: a plain `--resume` is refused there, which its offer says (a review: status offered it
   * after a `--from commit` that no-errors refused, and the plain one was refused again).
   */
  refusedBefore?: string[];
  /**
   * An instance seen stopped during the commit before the destination took writes (the window's
   * `stoppedInCommit`, src/fleet/window.ts): the migration must be restarted to be verified.
   * `refused`: a step refused for it, or was forced past it (the `stopped-in-commit` interlock:
   * a writes-on hook, a verify); `refusesAhead`: a step that asks it is still ahead, which a plain
   * `--resume` reaches and which refuses (a writesOn hook while writes were not turned on, a
   * verify while no verify passed).
   */
  stoppedInCommit?: {
    instance: string;
    at: string;
    how: StoppedInCommit["how"];
    /** `restarted`: the read before, with more events applied (ISO time). */
    since?: string;
    /** Other instances seen stopped after it. */
    also?: string[];
    refused?: true;
    refusesAhead?: true;
  };
  /** A run holds the journal folder's lock. */
  lock?: { pid: number; host: string; startedAt: string; alive: boolean | null };
  /**
   * The ways on, as data (src/next-run.ts): what the human form prints under "next:". Absent while
   * a live runner holds the lock, when `--resume` would refuse the journal, or when the cutover
   * ended and nothing is owed.
   */
  next?: NextOffer;
  /** The journal's notifications (src/plugin/deliveries.ts): how many were delivered, and each that was not (or is in doubt). */
  notifications?: { delivered: number; notDelivered: string[] };
}

export interface Status {
  format: number;
  at: string;
  runbook: string;
  file: string;
  instances: InstanceStatus[];
  /** The fleet's copy, folded as the live view folds it (src/fleet/eta.ts): the one percentage. */
  copy?: { copiedBytes: number; totalBytes: number; percent: number };
  identityProblems: string[];
  /**
   * Why each instance is not ready to commit, with an ETA from the trend (src/model/readiness.ts,
   * the wording `syncbook watch` shows too). One read has no trend; `--watch` keeps the answers.
   */
  readiness: Readiness[];
  verifier?: VerifierStatus;
  journal: JournalStatus;
  /**
   * The fleet and the verifier were read at the cutover's values of the variables their URLs are
   * made of, as its journal has them (`cutoverFleetVars`), not the runbook's: `name=value` each in
   * `read`; `secret`: those whose journaled value is a secret, read at the runbook's value.
   */
  fleetVars?: { read: string[]; secret: string[] };
}

/**
 * The cutover's values of the variables the fleet's and the verifier's URLs are made of
 * (`fleetVarNames`), where its journal has them and they differ from the runbook's: status takes
 * no `--var`, and read at the runbook's defaults it showed another fleet (another environment's
 * sync) under this cutover's journal. A secret value (journaled as `***`) cannot be read back:
 * said in `secret`, and the runbook's value stays.
 */
export async function cutoverFleetVars(
  loaded: LoadedRunbook,
  journalDir: string,
): Promise<{ vars: Record<string, string | number | boolean>; secret: string[] } | undefined> {
  const names = fleetVarNames(loaded);
  if (names.length === 0) return undefined;
  const found = await runbookJournal(journalDir, traitsOf);
  const then = found.state?.vars;
  if (!then) return undefined;
  const vars: Record<string, string | number | boolean> = {};
  const secret: string[] = [];
  for (const name of names) {
    const value = then[name];
    const now = loaded.vars[name];
    if (value === undefined || (now !== undefined && varText(value) === varText(now))) continue;
    if (String(value).includes(MASK)) secret.push(name);
    else vars[name] = value;
  }
  return Object.keys(vars).length || secret.length ? { vars, secret } : undefined;
}

/**
 * The runbook as a reader of the cutover's fleet loads it (`status`, `watch`): at the cutover's
 * values of the fleet's variables where its journal has them (`cutoverFleetVars`), and what was
 * read with them, for the reader to say (`Status.fleetVars`).
 */
export async function loadAtCutoverFleet(
  loaded: LoadedRunbook,
  journalDir: string,
  reload: (vars: Record<string, string | number | boolean>) => Promise<LoadedRunbook>,
): Promise<{ loaded: LoadedRunbook; fleetVars?: NonNullable<Status["fleetVars"]> }> {
  const values = await cutoverFleetVars(loaded, journalDir);
  if (!values) return { loaded };
  let read = loaded;
  if (Object.keys(values.vars).length) {
    const again = await reload(values.vars);
    if (again.runbook && !again.diagnostics.some((d) => d.severity === "error")) read = again;
  }
  return {
    loaded: read,
    fleetVars: {
      // journaled redacted already; redacted again as every output (a secret the runbook holds now)
      read: read === loaded ? [] : Object.entries(values.vars).map(([k, v]) => read.redact(`${k}=${varText(v)}`)),
      secret: values.secret,
    },
  };
}

const STATUS_OWN_WORDS: ReadonlySet<string> = new Set(["format"]);

/**
 * Each instance's answer to the journal's last command, with what its state now adds. `unknown`
 * is said only where neither the answer nor the state tells, with why: a blocking command
 * (commit, reverse) is answered, and applied, only once every instance has it, so while another
 * instance refused it the state from before proves nothing either way (src/api/commands.ts).
 */
function answersSaid(cmd: NonNullable<JournalStatus["lastCommand"]>, snap: FleetSnapshot): Record<string, string> {
  const op = cmd.op as CommandOperation;
  const refused = Object.entries(cmd.answers)
    .filter(([, a]) => a === "error")
    .map(([k]) => k);
  const said: Record<string, string> = {};
  for (const [key, answer] of Object.entries(cmd.answers)) {
    const now = snap.instances.find((i) => instanceKey(i.ref) === key);
    const state = now?.progress?.state;
    // the line names the instance: its error without its URL in front, so that 64 instances
    // refused in the same words read as one answer (src/cli/status.ts groups them)
    const raw = cmd.errors?.[key];
    const own = now ? `${now.ref.url}: ` : undefined;
    const error = own && raw?.startsWith(own) ? raw.slice(own.length) : raw;
    if (answer === "ok") said[key] = "accepted";
    else if (answer === "error") said[key] = `refused or never sent${error ? ` (${error})` : ""}`;
    else if (isCommandOperation(op) && commandTookEffect(op, state) === true)
      said[key] = `no answer, and it took effect: ${state} now`;
    else if (!now?.progress) said[key] = "unknown: sent, no answer, and it does not answer now";
    else if (isCommandOperation(op) && blocksUntilEveryInstance(op))
      said[key] =
        `unknown: sent, no answer; ${op} is answered and applied only once every instance has it${refused.length ? ` (${refused.join(", ")} refused it)` : ""}, so its state (${state ?? "?"}) cannot tell whether it holds it`;
    else said[key] = `unknown: sent, no answer${error ? ` (${error})` : ""}; its state now: ${state ?? "?"}`;
  }
  return said;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export async function readStatus(
  loaded: LoadedRunbook,
  opts: { journalDir: string; requestTimeoutMs?: number; signal?: AbortSignal; fold?: CutoverFold },
): Promise<Status> {
  const rb = loaded.runbook!;
  const timeout = opts.requestTimeoutMs ?? 5000;
  // the answers folded as every reader folds them (src/model/fold.ts): across `--watch`'s
  // refreshes when it hands one fold, so the lag's trend and the copy's rate give an ETA
  const fold = opts.fold ?? new CutoverFold({ traits: traitsOf });
  let seq = 0;
  const fleet = createFleet({
    instances: instancesOf(rb),
    requestTimeoutMs: timeout,
    redact: loaded.redact,
    emit: (type, payload) => {
      const e = { type, seq: ++seq, at: Date.now(), ...payload } as RunEvent;
      if (type === "progress.sampled" || type === "poll.failed") fold.apply(e);
      return e;
    },
  });
  const redact = loaded.redact;
  try {
    const [snap, read, journaled] = await Promise.all([
      fleet.progress(opts.signal),
      rb.verifier ? readVerifier(rb.verifier, timeout, redact, opts.signal) : Promise.resolve(undefined),
      readJournalStatus(opts.journalDir, rb, loaded.hash, (state) => cutoverVars(state, loaded), loaded),
    ]);
    const journal = journaled.status;
    // a commit refused for want of a write stop, on a fleet that shows the commit made already (a
    // --from commit after the cutover committed): stopping writes again would wait for a
    // canCommit that never comes
    if (
      journal.restopFrom !== undefined &&
      snap.instances.length > 0 &&
      snap.instances.every((i) => i.progress?.state === "COMMITTED")
    ) {
      delete journal.restopFrom;
      delete journal.next;
      journal.warnings = [
        ...journal.warnings,
        "every instance shows COMMITTED: the commit its last run was refused went through before it (an earlier run, or by hand); stopping writes again would wait for a canCommit that never comes",
      ];
    }
    const verifier = read?.status;
    // the one rule (src/steps/kit/earned.ts), against what the journal says this cutover asked
    if (verifier && read.progress) {
      const e = verifierEarned(journaled.memory ?? {}, read.progress);
      verifier.cutover = {
        check: e.check === undefined,
        result: e.result === undefined,
        ...(e.result !== undefined ? { why: e.result } : {}),
        ...(e.comparedNothing || e.skippedDdl || e.notFromStart ? { refused: true as const } : {}),
      };
    }
    const canWriteFrom = canWriteInstance(rb);
    const instances: InstanceStatus[] = snap.instances.map((i) => {
      const base = { place: i.ref.index + 1, name: instanceLabel(i.ref), url: redact(i.ref.url) };
      if (!i.progress)
        return {
          ...base,
          reachable: false,
          error: redact(errText(i.error)),
          ...(i.error?.hint ? { hint: redact(i.error.hint) } : {}),
        };
      const p = i.progress;
      const copied = num(p.collectionCopy?.estimatedCopiedBytes);
      const total = num(p.collectionCopy?.estimatedTotalBytes);
      // lag.overallLagSeconds when present, the deprecated lagTimeSeconds else (src/api/progress.ts)
      const lag = lagSeconds(p);
      const dm = p.directionMapping;
      return {
        ...base,
        reachable: true,
        state: p.state,
        canCommit: p.canCommit ?? null,
        ...(i.ref.index === canWriteFrom ? { canWrite: p.canWrite ?? null } : {}),
        info: p.info ?? null,
        lagSeconds: lag ?? null,
        copy: p.collectionCopy
          ? {
              copiedBytes: copied,
              totalBytes: total,
              // before the copy the spec's 0-of-1 is not an estimate
              started: copied !== null && total !== null && total > 1,
            }
          : null,
        id: p.mongosyncID ?? null,
        coordinatorId: p.coordinatorID ?? null,
        coordinator: p.mongosyncID != null && p.mongosyncID === p.coordinatorID,
        direction:
          dm && typeof dm.Source === "string" && typeof dm.Destination === "string"
            ? { source: redact(dm.Source), destination: redact(dm.Destination) }
            : null,
      };
    });
    const clusters = Object.keys(rb.clusters ?? {});
    const identityProblems = fleet
      .identity(snap, clusters.length ? { clusters } : {})
      .map((p) => redact(p.instance ? `${instanceLabel(p.instance)}: ${p.message}` : p.message));
    // everything once more, leaf by leaf and keys included: what a service says (its `info`, a
    // verifier's error, a counter's name) may echo a secret, and status prints it as it is
    return redactLeaves(
      {
        format: STATUS_FORMAT,
        at: new Date().toISOString(),
        runbook: rb.name,
        file: loaded.file,
        instances,
        ...fleetCopy(instances),
        identityProblems,
        // an instance holding an earlier cutover's commit in its round shows RUNNING with canCommit:
        // past the question, not "ready" (this cutover's commit is refused while it may hold)
        readiness: pastTheCommit(
          readinessOf(fold, readinessPlan(rb)),
          new Set(),
          urlsAt(journal.earlierCommit?.reached ?? [], fold.view(Date.now()).fleet.instances),
        ),
        ...(verifier ? { verifier } : {}),
        journal: journal.lastCommand
          ? { ...journal, lastCommand: { ...journal.lastCommand, said: answersSaid(journal.lastCommand, snap) } }
          : journal,
      },
      redact,
      STATUS_OWN_WORDS,
    );
  } finally {
    await fleet.close();
  }
}

function readinessOf(fold: CutoverFold, plan: ReadinessPlan): Readiness[] {
  const now = Date.now();
  return fleetReadiness(fold.view(now).fleet, { ...plan, now });
}

/** The fleet's copy, as the live view folds it (src/fleet/eta.ts): one percentage for `status` and the run. */
function fleetCopy(instances: readonly InstanceStatus[]): Pick<Status, "copy"> {
  let state = emptyCopyState();
  for (const i of instances)
    if (i.copy && i.copy.copiedBytes !== null && i.copy.totalBytes !== null)
      state = addCopySample(state, i.name, { copied: i.copy.copiedBytes, total: i.copy.totalBytes }, 0);
  const view = copyProgress(state);
  if (!view.started || view.fraction === undefined) return {};
  return { copy: { copiedBytes: view.copied, totalBytes: view.total, percent: Math.floor(view.fraction * 1000) / 10 } };
}

function errText(err: ApiError | undefined): string {
  return err ? err.message : "no answer";
}

/** What a verifier's answer says of its process or release, beyond phase and counters. */
function verifierNotes(p: VerifierProgress): string[] {
  // the contract's progress has no generation: no answer of it tells a fresh process from a restarted one
  if (typeof p.generation !== "number")
    return [
      "no generation in its answer: whether a check ran in this process, or which verification it shows, cannot be told (the migration verifier v0.2.1 reports one)",
    ];
  if (persisted(p))
    return [
      "idle at generation 0 with tasks: a process whose metadata holds an earlier verification, before its check (with or without --clean: they look the same until a check); started without --clean its next check resumes that verification, started with --clean the check drops it and starts afresh",
    ];
  return [];
}

async function readVerifier(
  url: string,
  timeout: number,
  redact: (s: string) => string,
  signal: AbortSignal | undefined,
): Promise<{ status: VerifierStatus; progress?: VerifierProgress }> {
  // progress only: the verifier takes one operational request at a time, and a status never sends one
  const client = createVerifierClient(url, { requestTimeoutMs: timeout, redact });
  const shown = redact(client.url);
  try {
    const p = await client.progress(signal ? { signal } : {});
    const counters: Record<string, number> = {};
    for (const [k, v] of Object.entries(p.verificationStatus ?? {})) if (typeof v === "number") counters[k] = v;
    const notes = verifierNotes(p);
    return {
      status: {
        url: shown,
        reachable: true,
        phase: p.phase,
        generation: num(p.generation),
        counters,
        verifierError: p.error ?? null,
        ...(notes.length > 0 ? { notes } : {}),
      },
      progress: p,
    };
  } catch (err) {
    // the old releases' answer before any check, whatever their metadata holds: it says neither
    // "not started" nor a phase
    if (emptyProgress500(err))
      return {
        status: {
          url: shown,
          reachable: true,
          notes: [
            `an empty HTTP 500: ${OLD_RELEASE}, whether or not their metadata holds an earlier verification (a check would resume it, or drop it with --clean): which it is cannot be told before a check; use v0.2.1`,
          ],
        },
      };
    return { status: { url: shown, reachable: false, error: redact(errorMessage(err)) } };
  } finally {
    await client.close();
  }
}

/**
 * The write-stop window across the cutover's runs: every journal of the journal's cutover in the
 * folder, joined as the report and the watch page join them (`joinJournals`). Whichever journal
 * status reads: the journal choice passes over a `--from` run that sent nothing and ran no hook
 * (it only waited), and such a run may have seen the destination take writes (status read the
 * older journal alone and said writes stopped, the destination not taking them). Undefined when
 * no other journal of the cutover is found.
 */
async function cutoverWindow(
  folder: string,
  file: string,
  events: readonly RunEvent[],
  unreadable: (file: string, why: string) => void,
): Promise<CutoverModel["window"] | undefined> {
  const first = events.find((e) => e.type === "run.started");
  if (first?.type !== "run.started") return undefined;
  const others = await cutoverJournalsRead(folder, cutoverOfRun(first), { except: file, unreadable });
  if (others.length === 0) return undefined;
  const whole = new CutoverFold({ traits: traitsOf });
  for (const e of joinJournals([...others, { file, events }]).events) whole.apply(e);
  return whole.view().window;
}

/**
 * The ways on from what the journal shows (`next`): a failed undo of a write stop first (`--abort`
 * retries it); a commit refused for want of a write stop (`--from` the stop); a step after a
 * committed cutover's commit that failed (`--from` it); a cutover left open (`--resume`, and
 * `--abort` unless a commit may have been sent). None while the run's own process is alive.
 */
export function nextOffer(j: JournalStatus): NextOffer | undefined {
  if (j.refused !== undefined || j.lock?.alive === true) return undefined;
  const f = j.finished;
  const open = !f || ((f.outcome !== "ok" || f.to !== undefined) && !f.aborted);
  // an earlier cutover's commit that may still take effect comes first: --abort (a failed undo's
  // retry included) and a --resume that sends a commit are refused while it may (a review)
  // (called off too: its --resume would send the commit; and before its first step)
  const held =
    (open || f?.aborted) && j.commitSent !== true && j.reverseInDoubt === undefined ? j.earlierCommit : undefined;
  if (held) return earlierCommitOffer(j, held);
  // the resume's own refusal on this journal, whatever the fleet shows (a commit in doubt carried
  // by a --from run that stopped before it): not the --resume that "reads the fleet" and adopts it
  // (a review followed that offer into the refusal); its words and hint, and no --abort (a commit
  // was sent)
  if (open && j.resumeRefused)
    return {
      runs: [],
      notes: [
        `a --resume is refused: ${j.resumeRefused.message}`,
        j.resumeRefused.hint,
        // (a start or reverse in doubt ahead is refused the same way: no commit to speak of then)
        ...(j.commitSent === true ? ["no --abort: a commit was sent, and after commit nothing is undone"] : []),
        ...(j.runbookChanged ? [RUNBOOK_CHANGED_NOTE] : []),
      ],
    };
  if (j.writesUndoFailed) {
    const at = j.lastStep && j.lastStep.outcome !== "ok" ? j.lastStep : undefined;
    return nextAfterFailedUndo({ number: j.writesUndoFailed.step, id: j.writesUndoFailed.id }, at);
  }
  // the newest run refused before it sent anything, its journal passed over by --resume: its own
  // command again, not the --resume of the journal before it; after a refused --resume and a failed
  // undo of a write stop, which come first (an outside review: this offer came before them)
  const newer = j.passedOverAgain;
  if (newer)
    return {
      runs: [
        {
          args: shellCommand(newer.args),
          does: `gives ${PASSED_OVER_AGAIN}: once what step ${newer.number} ${newer.id}'s failure said is done: ${newer.hint}`,
        },
        // and the way back to writes on, as beside any other way on (an outside review: writes
        // stopped by the run before it, and nothing offered to turn them back on)
        ...(j.commitSent !== true && j.reverseInDoubt === undefined ? [abortOffer(j)] : []),
      ],
      notes: [passedOverWhy(newer.file)],
    };
  // (open: killed or crashed, no end recorded, or a run that ended and left its cutover open:
  // failed, interrupted, stopped at --to)
  // or called off: the commit was refused, so nothing of it is on the fleet (an adversarial run:
  // after a stopWrites whose check failed, status offered no way back to writes on)
  if (open && j.restopFrom !== undefined)
    return {
      runs: [
        {
          args: `--from ${j.restopFrom}`,
          does: RESTOP_DOES,
        },
        ...(j.commitSent !== true && j.reverseInDoubt === undefined ? [abortOffer(j)] : []),
      ],
    };
  if (j.againFrom !== undefined)
    return {
      runs: [
        {
          // a verify's timeout raised in the runbook: the flag says the journal is this cutover's
          args: `--from ${j.againFrom}${j.runbookChanged ? " --allow-changed-runbook" : ""}`,
          does: `runs ${j.againFrom} again (it failed, and the run went on past it: continueOnError), then the steps after it, in this cutover: its commit counts${j.runbookChanged ? " (the runbook changed since that run: the flag says it is still this cutover's)" : ""}`,
        },
      ],
    };
  // an --abort that could not undo the write stop (no `undo:`): writes by hand, then --resume,
  // which stops them again (as the abort's own end says it)
  if (f?.aborted && j.writesStopUndoless && j.commitSent === undefined && j.lastStep)
    return {
      runs: [{ args: "--resume", does: CALLED_OFF_RESUME }],
      notes: [
        `writes stay stopped until a person turns them back on (the runbook gives step ${j.writesStopUndoless.step} ${j.writesStopUndoless.id} no \`undo:\`): do it by hand; the --resume stops them again before its commit`,
        ...(j.runbookChanged ? [RUNBOOK_CHANGED_NOTE] : []),
      ],
    };
  // called off (every undo --abort owed ran): as the abort's own end says it, --resume goes on
  // with it later; a plain run would start a new cutover (src/run/earlier.ts)
  if (f?.calledOff && j.lastStep)
    return {
      runs: [{ args: "--resume", does: CALLED_OFF_RESUME }],
      ...(j.runbookChanged ? { notes: [RUNBOOK_CHANGED_NOTE] } : {}),
    };
  if (!open || !j.lastStep) return undefined;
  // the writes-on hook refused: an instance stopped during the commit. --resume alone is refused
  // again (an adversarial run followed status's plain --resume into the same refusal); the forced
  // one only for one who knows, and what to do instead (src/next-run.ts)
  const sic = j.stoppedInCommit;
  if (sic?.refused && sic.refusesAhead)
    return {
      runs: [STOPPED_IN_COMMIT_RESTART, STOPPED_IN_COMMIT_RESUME],
      notes: [
        STOPPED_IN_COMMIT_NOTE,
        "no --abort: a commit was sent, and after commit nothing is undone",
        ...(j.runbookChanged ? [RUNBOOK_CHANGED_NOTE] : []),
      ],
    };
  // once the destination takes writes, the source's write stop is not news
  const stays = (j.writesStopped === true || j.writesStopCut !== undefined) && j.destinationWrites === undefined;
  // a start, commit or reverse some instance gave no usable answer to: the resume reads the fleet
  // and adopts it where it shows, and refuses while it cannot tell (never sends it twice): said so,
  // not "goes on" (an adversarial run followed that offer into a refusal, every time)
  const c = j.lastCommand;
  const doubt =
    c && ["start", "commit", "reverse"].includes(c.op) && Object.values(c.answers).includes("unknown")
      ? `reads the fleet: if it shows the ${c.op} (step ${c.step}) took effect it adopts it and goes on, never sending it twice; if it cannot tell (an instance that never answered still shows the state before it), it refuses and says what it saw`
      : undefined;
  // a failure whose way on needs more than a plain --resume (a runbook edit, then
  // --allow-changed-runbook): that one, not the plain one it refuses again (a review)
  const failedFirst = j.lastStep.outcome === "failed" && j.lastStep.hintBeforeResume === true;
  // a failure whose way on is its run's own command again (a fleet-identity refusal before that
  // run acted): that command, as the run's end names it, not the --resume that refuses a corrected
  // list or passes that run over (a review)
  const again = j.lastStep.outcome === "failed" ? j.lastStep.againArgs : undefined;
  const resume: NextRun = again
    ? {
        args: shellCommand(again),
        does: `gives the failed run's command again, as its end named it (a plain --resume would refuse a corrected \`instances:\` list, or pass that run over)${stays ? "; writes stay stopped" : ""}: once what step ${j.lastStep.number} ${j.lastStep.id}'s failure said is done: ${j.lastStep.hint ?? "see the run's end"}`,
      }
    : {
        args: ["--resume", ...(failedFirst ? (j.lastStep.resumeFlags ?? []) : [])].join(" "),
        does:
          doubt ??
          (f
            ? `goes on with the cutover where its last run stopped${stays ? " (writes stay stopped)" : ""}${
                // what to do first, as its failure said (a verify refused a check it did not start: run
                // again as it is, it is refused again; a trial followed this --resume into the same
                // refusal). Only a hint its step marked so: others name a runbook edit, another command,
                // or "the lines above", which are not on this screen
                j.lastStep.outcome === "failed" && j.lastStep.hint !== undefined && j.lastStep.hintBeforeResume === true
                  ? `: step ${j.lastStep.number} ${j.lastStep.id} runs again, once what its failure said is done: ${j.lastStep.hint}`
                  : ""
              }`
            : `goes on with the cutover from step ${j.lastStep.number} ${j.lastStep.id} (it first waits out hook processes the dead run left${stays ? "; writes stay stopped" : ""})`) +
            (sic?.refusesAhead ? `; ${STOPPED_IN_COMMIT_AHEAD}` : "") +
            (j.refusedBefore && !(failedFirst && j.lastStep.resumeFlags?.includes("--force=no-errors"))
              ? `; ${noErrorsAhead(j.refusedBefore)}`
              : ""),
      };
  // as --abort judges it (src/run/abort.ts): any commit of the sync that runs now that may have
  // reached the fleet, not only the last command's
  const changed = j.runbookChanged ? [RUNBOOK_CHANGED_NOTE] : [];
  // and a reverse in doubt, as --abort refuses it (which sync runs now only the fleet can say)
  return j.commitSent === true || j.reverseInDoubt !== undefined
    ? {
        runs: [resume],
        notes: [
          j.commitSent === true
            ? "no --abort: a commit was sent, and after commit nothing is undone"
            : `no --abort: a reverse (step ${j.reverseInDoubt}) may have reached the fleet, which was committed: after a commit nothing is undone`,
          ...changed,
        ],
      }
    : {
        ...(changed.length ? { notes: changed } : {}),
        runs: [resume, abortOffer(j)],
      };
}

/**
 * The ways on while an earlier cutover's commit may still take effect (`earlierCommit`): that
 * commit sent where it did not arrive, which closes its round with writes stopped; `--resume` only
 * where it sends no commit (`refuseSentByEarlierCutover` refuses one), `--abort` only where no
 * write stop is owed an undo (`--abort` refuses to turn writes on under that commit).
 */
/** The no-errors refusal a `--resume`'s commit meets (`JournalStatus.refusedBefore`), said with its offer. */
const noErrorsAhead = (refused: readonly string[]): string =>
  `its commit is refused by no-errors: ${refused.join(", ")} refused earlier (a command refused and taken later counts too); find out from the service's log why, and only if you are certain it is safe, give --force=no-errors with it`;

function earlierCommitOffer(j: JournalStatus, held: NonNullable<JournalStatus["earlierCommit"]>): NextOffer {
  // any write stop whose undo is owed or in doubt: --abort refuses on it (abort.ts `refuseEarlierCommit`)
  const stopped =
    j.writesStopped === true ||
    j.writesStopCut !== undefined ||
    j.writesStopInDoubt !== undefined ||
    j.writesStopAbortCut !== undefined ||
    j.writesUndoFailed !== undefined;
  const runs: NextRun[] = [
    ...(held.finish
      ? [
          {
            args: shellCommand(["--from", held.finish.from, "--only", held.finish.only.join(",")]),
            does: `${held.finish.from !== held.finish.commit ? `stops the application's writes again (step ${held.finish.from}: they stay stopped), then ` : ""}sends the commit (step ${held.finish.commit}) to ${held.finish.only.join(", ")}, where that earlier cutover's did not arrive, and goes on with the steps after it: the round closes with the source's writes stopped`,
          },
        ]
      : []),
    ...(held.resumeSendsCommit
      ? []
      : [{ args: "--resume", does: "goes on with this cutover where its last run stopped" }]),
    // (a cutover called off already has nothing to abort)
    ...(stopped || j.finished?.aborted ? [] : [abortOffer(j)]),
  ];
  return {
    runs,
    notes: [
      held.why,
      held.finish
        ? "see the fleet first: if the sync was set back by hand since (IDLE, or started again), no instance holds that commit, and the application's writes go back on by hand"
        : held.aside !== undefined
          ? `if that file is no journal of this runbook, or you know no instance holds a commit of its, set it aside (it stays its run's record), then ask status again: ${held.aside}`
          : "do not turn the source's writes back on: once every instance is COMMITTED, move the application to the destination; if the sync was set back by hand since (IDLE, or started again), no instance holds that commit, and the application's writes go back on by hand",
      ...(held.resumeSendsCommit
        ? ["no --resume while it may: its commit would be refused (a commit is never sent twice to an instance)"]
        : []),
      ...(stopped
        ? ["no --abort while it may: its undo would turn the source's writes back on under that commit"]
        : []),
      ...(j.runbookChanged ? [RUNBOOK_CHANGED_NOTE] : []),
    ],
  };
}

/** `--abort` as status offers it, where no commit of the sync that runs now may have reached the fleet. */
function abortOffer(j: JournalStatus): NextRun {
  return {
    args: "--abort",
    does: abortDoes(j.writesStopped || j.writesStopCut !== undefined),
  };
}

async function readJournalStatus(
  folder: string,
  runbook: Runbook,
  hash: string,
  /** The --var values the journal's runs decided their `when`s with (src/run/earlier.ts `cutoverVars`). */
  varsOf: (state: JournalState) => string[] = () => [],
  /** The runbook as status was given it: its ways on repeat its `--journal-dir` (src/next-run.ts `runbookArgs`). */
  named: LoadedRunbook,
): Promise<{ status: JournalStatus; memory?: VerifierMemory }> {
  const out: JournalStatus = { folder, passedOver: [], warnings: [] };
  const lockFile = join(folder, LOCK_FILE_NAME);
  if (existsSync(lockFile)) {
    try {
      const l = JSON.parse(readFileSync(lockFile, "utf8")) as { pid?: unknown; host?: unknown; startedAt?: unknown };
      if (typeof l.pid === "number" && typeof l.host === "string" && typeof l.startedAt === "string") {
        out.lock = {
          pid: l.pid,
          host: l.host,
          startedAt: l.startedAt,
          // a holder on another host cannot be checked from here
          alive: l.host === hostname() ? isPidAlive(l.pid) : null,
        };
      }
    } catch {
      // being written, or damaged: the run that takes it next says so
    }
  }
  // --resume's own answer, so that status says what --resume would (src/journal/runbook-journal.ts);
  // the journal read once: its strict reader hands each event to the cutover's read model
  // (src/model/), which says what happened as every reader sees it
  const fold = new CutoverFold({ traits: traitsOf });
  const events: RunEvent[] = [];
  const found = await runbookJournal(folder, traitsOf, {
    onEvent: (e) => {
      fold.apply(e);
      events.push(e);
    },
  });
  if (found.none) return { status: out }; // no folder, or no journal: no run yet
  if (found.file) out.resumeWith = found.file;
  out.passedOver = found.skipped;
  const state = found.state;
  if (found.refused !== undefined || !state) {
    // its way on as --resume says it: the commands name the runbook and its --journal-dir
    const refused = wayOnFromRefused(found, named);
    out.refused = errorMessage(refused);
    if (refused instanceof UserError && refused.hint) out.refusedHint = refused.hint;
    return { status: out };
  }
  out.warnings = [...state.warnings, ...(found.witnessWarning ? [found.witnessWarning] : [])];
  if (state.hash !== hash) out.runbookChanged = true;
  const model = fold.view();
  // a step after the commit to run again: with the runbook changed since, its way on carries
  // --allow-changed-runbook, which checks no value against the cutover's: it names every one the
  // steps from there read, as the cutover had it, a secret one masked (src/run/earlier.ts
  // `cutoverVarsFrom`); left out, the flag read it at the runbook's default now, another fleet
  const again = runAgainAfterCommit(model, traitsOf);
  if (again) out.againFrom = again.id;
  const againVars =
    again && out.runbookChanged ? cutoverVarsFrom(cutoverValuesKnown(state, named), named, again.id) : undefined;
  // a --var the cutover was given that holds a secret: said here once the offer is made (below)
  const secretAt = out.warnings.length;
  if (model.notifications) out.notifications = model.notifications;
  // the write-stop window is the cutover's: a journal holds only its own runs; the folder's other
  // journals of the cutover hold the others (a --from run's journal lacks the stop and the commit
  // before it; a journal passed over lacks the later run that saw the destination take writes)
  const w = found.file
    ? ((await cutoverWindow(folder, found.file, events, (f, why) =>
        out.warnings.push(
          `${f} is a journal of this cutover but cannot be read (${why}): the write-stop window leaves it out`,
        ),
      )) ?? model.window)
    : model.window;
  const lastRun = model.runs.at(-1)?.n;
  const refusal = model.decisions.filter((d) => d.run === lastRun && d.kind === "interlock" && !d.ok).at(-1);
  if (refusal?.check === "writes-stopped") {
    const from = stopWritesBefore(runbook, refusal.id);
    if (from !== undefined) out.restopFrom = from;
  }
  // the run --resume goes on from (this journal's last, the journal --resume continues): the rule
  // the page and a --to run's end ask of the cutover's runs
  const resumed = resumedRun(model.runs);
  const last = lastAttempted(model.steps, resumed);
  const first = resumeFirst(model.steps, resumed);
  const ownAgain = runAgainFirst(model.steps, model.runs);
  // the newest journal --resume passes over: its run's refusal whose way on is its own command
  // again, with the values that run went on with (`passedOverAgain`): the one rule the watch page asks
  const newest = await passedOverRefusal(found.skipped);
  if (newest)
    out.passedOverAgain = {
      file: newest.file,
      number: newest.again.number,
      id: newest.again.id,
      hint: named.redact(newest.again.hint),
      args: newest.again.args,
    };
  if (last)
    out.lastStep = {
      number: last.index + 1,
      id: last.id,
      kind: last.kind,
      startedAt: new Date(last.attempts.at(-1)!.startedAt).toISOString(),
      ...(last.outcome !== "running" && last.outcome !== "pending" ? { outcome: last.outcome } : {}),
      ...(traitsOf(last.kind).waitsFor === "person" ? { asksPerson: true as const } : {}),
      ...(last.outcome === "failed" && last.hint !== undefined ? { hint: named.redact(last.hint) } : {}),
      ...(first !== undefined ? { hintBeforeResume: true as const } : {}),
      ...(first?.flags ? { resumeFlags: first.flags } : {}),
      ...(ownAgain?.id === last.id ? { againArgs: ownAgain.args } : {}),
    };
  const cmd = state.commandsSent.at(-1);
  if (cmd)
    out.lastCommand = {
      op: cmd.op,
      step: cmd.stepIndex + 1,
      ...(cmd.carried ? { carried: { ...cmd.carried } } : {}),
      answers: Object.fromEntries(cmd.perInstance.map((p) => [p.instance, p.answered])),
      ...(cmd.perInstance.some((p) => p.error !== undefined)
        ? {
            errors: Object.fromEntries(
              cmd.perInstance.flatMap((p) => (p.error !== undefined ? [[p.instance, p.error]] : [])),
            ),
          }
        : {}),
    };
  // whether the cutover is verified, by the one rule, asked once: the run's end, the verifier's
  // block and the "verification:" line say this verdict (status asked it twice, and said its own
  // "verified (a verify step passed …)" where the report and the watch page said `verificationText`'s)
  const v = state.verifier;
  const said = verification({
    passed: v?.verified !== undefined,
    kinds: model.steps.map((s) => s.kind),
    reversed: v?.reversed,
    stopped: w?.stoppedInCommit,
    filter: v?.filter,
    failed: model.cutover.verifyFailed,
  });
  const verdict = said.verified ? said : { verified: false as const, why: named.redact(said.why) };
  out.verification = { ...verdict, text: verificationText(verdict) };
  if (state.finished)
    out.finished = {
      outcome: state.finished.outcome,
      committed: state.finished.committed,
      ...(!state.finished.committed && model.cutover.commitInDoubt ? { commitInDoubt: true as const } : {}),
      // the one rule (earned.ts `verification`): never once an instance stopped during the commit,
      // whatever a (forced) verify said; a review saw "· verified" beside "verification: not verified"
      verified: verdict.verified,
      at: new Date(state.finished.at).toISOString(),
      ...(state.finished.message ? { message: state.finished.message } : {}),
      ...(state.finished.aborted ? { aborted: true as const } : {}),
      ...(model.runs.at(-1)?.ended === "called-off" ? { calledOff: true as const } : {}),
      ...(model.runs.at(-1)?.exitCode !== undefined ? { exitCode: model.runs.at(-1)!.exitCode! } : {}),
      ...(model.runs.at(-1)?.undoKeptOff ? { undoKeptOff: true as const } : {}),
      ...(state.finished.to !== undefined ? { to: state.finished.to } : {}),
    };
  // a --from run that continued its cutover counted the write stop of the run before it (another
  // journal): its end says whether writes were still stopped
  // ("may-be-stopped" is a stop hook of this journal that failed part-way: said by its own line)
  const endedStopped = !state.stopWritesSucceeded && state.finished && model.runs.at(-1)?.writesLeft === "stopped";
  out.writesStopped = state.stopWritesSucceeded || endedStopped === true;
  // as --abort judges it: the sync that runs now (a reverse that took effect starts a new one)
  if (currentSyncCommit(state, false).sent) out.commitSent = true;
  const refused = refusalsCounted(state);
  if (refused.length && out.commitSent !== true && commitAhead(model.steps, traitsOf, model.cutoverValues?.vars))
    out.refusedBefore = [...new Set(refused.map((r) => `${r.op} by ${r.instance}`))];
  // as --resume's reconciliation refuses on the journal alone (the same function)
  const ownRefusal = resumeRefusedByOwn(state, named, found.file ?? state.file);
  if (ownRefusal)
    out.resumeRefused = { message: named.redact(ownRefusal.message), hint: named.redact(ownRefusal.hint) };
  const reverseDoubt = reverseInDoubt(state);
  if (reverseDoubt !== undefined) out.reverseInDoubt = state.steps[reverseDoubt]?.id ?? `#${reverseDoubt + 1}`;
  if (endedStopped) out.writesStoppedBefore = true;
  // an earlier cutover's commit the fleet cannot show (held in its round, RUNNING): --abort refuses
  // to turn writes on under it and a run that sends the commit again is refused, so status says it
  // and offers what closes its round (an outside review: status offered --resume and --abort there,
  // each refused, and did not name that commit)
  // (the folder read only when it holds another journal: the chosen one is read once, as --resume reads it)
  const chosen = found.file;
  if (
    chosen &&
    out.lock?.alive !== true &&
    out.commitSent !== true &&
    out.reverseInDoubt === undefined &&
    readdirSync(folder).some((n) => n.endsWith(JOURNAL_EXTENSION) && n !== basename(chosen))
  ) {
    const held = earlierCommitOnFleet(await readFolderJournals(folder), chosen);
    const said = earlierCommitSaid(held);
    if (held && said) {
      const finish = earlierCommitFinish(held, runbook);
      const aside = setAsideCommand(held, folder);
      out.earlierCommit = {
        // `reached` (the URLs as its journal wrote them): readiness says them past it
        ...said,
        why: named.redact(said.why),
        ...(finish ? { finish } : {}),
        ...(aside !== undefined ? { aside: named.redact(aside) } : {}),
        // as the cutover's values decide a commit's `when` (the runbook's default decided it, and
        // a --var cutover's --resume offered was refused: a review)
        resumeSendsCommit: commitAhead(model.steps, traitsOf, model.cutoverValues?.vars),
      };
    }
  }
  // since the write-stop window the journal shows last opened, if it did not close after
  if (state.stopWritesSucceeded && w?.open && w.openedAt !== undefined)
    out.writesStoppedSince = new Date(w.openedAt).toISOString();
  // a stopWrites that held is still "not undone" after the cutover: what the window says since
  // (the destination takes writes, the application writes again) is what people need to hear
  if (w && !w.open && w.closedAt !== undefined && (w.closedBy === "canWrite" || w.closedBy === "committed")) {
    // a reverse since the window closed: that destination is the reversed sync's source now
    // one that may have reached the fleet and whose step did not end (its runner killed with it on
    // its way): the fleet may already run the other way, so "takes writes" is not said as fact
    const doubt = reverseInDoubt(state);
    const rIndex = doubt ?? lastReverse(state)?.stepIndex;
    const rStep = rIndex === undefined ? undefined : model.steps.find((s) => s.index === rIndex);
    const rAt = rStep?.attempts.at(-1)?.startedAt;
    const sc = syncCommits(model);
    const commitAt = sc.commits.at(-1)?.at ?? sc.requested?.at;
    const closedAt = w.closedAt;
    const gap = commitAt === undefined ? undefined : model.gaps.findLast((g) => g.from >= commitAt && g.to <= closedAt);
    out.destinationWrites = {
      since: new Date(w.closedAt).toISOString(),
      by: w.closedBy,
      ...(gap ? { unseen: { from: new Date(gap.from).toISOString(), to: new Date(gap.to).toISOString() } } : {}),
      ...(rStep && rAt !== undefined && rAt >= w.closedAt
        ? { reversedBy: rStep.id, ...(doubt !== undefined ? { reverseInDoubt: true as const } : {}) }
        : {}),
    };
  }
  if (w?.writesOnAt !== undefined) out.writesOnSince = new Date(w.writesOnAt).toISOString();
  // a writesOn hook that started and did not succeed (cut off with its run, or failed part-way):
  // what it did is not known, and "writes stay stopped" would be a guess (an adversarial run: a
  // forced resume killed inside it, the application writing, and status said stopped)
  const onHook = state.hooksRan
    .filter((h) => h.undoStarted !== true && runbook.steps.find((st) => st.id === h.id)?.hook?.writesOn === true)
    .at(-1);
  // (not while its runner lives: the hook may be running now, a review read "its run ended")
  if (onHook && onHook.ok !== true && out.writesOnSince === undefined && out.lock?.alive !== true)
    out.writesOnInDoubt = {
      step: onHook.stepIndex + 1,
      id: onHook.id,
      ...(onHook.ok === false ? { failed: true as const } : {}),
    };
  if (w?.stoppedInCommit)
    out.stoppedInCommit = {
      instance: w.stoppedInCommit.instance,
      at: new Date(w.stoppedInCommit.at).toISOString(),
      how: w.stoppedInCommit.how,
      ...(w.stoppedInCommit.since !== undefined ? { since: new Date(w.stoppedInCommit.since).toISOString() } : {}),
      ...(w.stoppedInCommit.also ? { also: [...w.stoppedInCommit.also] } : {}),
      // its writes-on hook or verify reached, refused or forced: a plain --resume meets the refusal (again)
      ...(model.decisions.some((d) => d.check === "stopped-in-commit") ? { refused: true as const } : {}),
      // a journal of an earlier runner does not say which hook is the writes-on one: the runbook does
      ...(stoppedInCommitAhead(
        model.steps.map((s) =>
          s.writesOn === true || runbook.steps[s.index]?.hook?.writesOn !== true
            ? s
            : { ...s, writesOn: true as const },
        ),
        traitsOf,
        model.cutoverValues?.vars,
      )
        ? { refusesAhead: true as const }
        : {}),
    };
  if (v && (v.restarts || v.oldRelease || v.refused !== undefined || v.verified || v.baseline || v.reversed))
    out.verifier = {
      restarts: v.restarts ?? 0,
      oldRelease: v.oldRelease === true,
      ...(v.refused !== undefined ? { refused: v.refused } : {}),
      passed: v.verified !== undefined,
      verified: verdict.verified,
      ...(v.reversed !== undefined ? { reversed: v.reversed } : {}),
      ...(v.filter !== undefined ? { filter: v.filter } : {}),
      ...(verdict.verified ? {} : { why: verdict.why }),
    };
  // the reader counts writes as not stopped once an undo started (safe for --resume, which stops
  // them again); for the operator an undo that never succeeded means the application is still down
  const stop = state.hooksRan
    .filter((h) => opensWriteStop(state.steps.find((s) => s.index === h.stepIndex)?.kind))
    .at(-1);
  // a stop hook that failed part-way has its runbook undo run too: if that failed, writes may be stopped
  if (!state.stopWritesSucceeded && stop?.ok !== undefined && stop.undoStarted === true && !stop.undone) {
    const undo = model.hooks.findLast((h) => h.undo && h.index === stop.stepIndex);
    out.writesUndoFailed = {
      step: stop.stepIndex + 1,
      id: stop.id,
      ...(stop.ok === false ? { stopFailed: true as const } : {}),
      ...(undo?.use !== undefined ? { use: undo.use } : {}),
      ...(undo?.command !== undefined ? { command: undo.command } : {}),
    };
  }
  // a stop hook cut off in its run (ok unknown, no undo begun): "not stopped" would be a guess
  if (!state.stopWritesSucceeded && stop && stop.ok === undefined && stop.undoStarted !== true && !stop.undone)
    out.writesStopInDoubt = { step: stop.stepIndex + 1, id: stop.id };
  // its hook succeeded and its step never ended ok (cut off, or failed after the hook: the run's
  // unwind undoes it, and was killed first), nor was it undone, or handed over: stopped
  const stopEnded = stop && state.steps.find((s) => s.index === stop.stepIndex)?.finished;
  if (
    !state.stopWritesSucceeded &&
    !endedStopped &&
    stop?.ok === true &&
    stop.undoStarted !== true &&
    !stop.undone &&
    stop.byHand !== true &&
    stop.abortAfter !== true &&
    stopEnded !== "ok"
  )
    out.writesStopCut = {
      step: stop.stepIndex + 1,
      id: stop.id,
      ...(w?.open && w.openedAt !== undefined ? { since: new Date(w.openedAt).toISOString() } : {}),
      ...(stopEnded !== undefined ? { failed: true as const } : {}),
    };
  // as the abort journaled it, not as today's runbook reads (an `undo:` added since undid nothing);
  // of any write stop, each by its latest run: with two, an --abort may undo the later and hand the
  // earlier to a person (a second review: keyed on the last stop alone, status said "not stopped")
  const latestStops = new Map(
    state.hooksRan
      .filter((h) => opensWriteStop(state.steps.find((s) => s.index === h.stepIndex)?.kind))
      .map((h) => [h.stepIndex, h]),
  );
  const handed = [...latestStops.values()].filter((h) => h.byHand && !h.undone && h.undoStarted !== true).at(-1);
  if (handed) out.writesStopUndoless = { step: handed.stepIndex + 1, id: handed.id };
  const cut = stopAbortCut(state);
  if (cut) out.writesStopAbortCut = { step: cut.stepIndex + 1, id: cut.id };
  const next = nextOffer(out);
  // a --resume whose failure's way on edits the runbook (`resumeFlags`): its --allow-changed-runbook
  // checks no value against the cutover's either, so it names them as the --from above does (a
  // review: a secret --var left out, and the edited runbook's run read its default, another verifier)
  const editVars =
    againVars === undefined && out.lastStep?.resumeFlags?.includes("--allow-changed-runbook")
      ? cutoverVarsFrom(cutoverValuesKnown(state, named), named, out.lastStep.id)
      : undefined;
  const wayVars = againVars ?? editVars;
  // a new cutover (after a stop in the commit) checks no value against this one's either: every
  // value its steps read from the first, a secret one masked (a review: left out, the new cutover
  // read the runbook's default, another fleet, as the page already said)
  const firstId = named.runbook ? planSteps(named.runbook)[0]?.id : undefined;
  const renewVars =
    firstId !== undefined && next?.runs.some((r) => r.args.includes("--new-cutover"))
      ? cutoverVarsFrom(cutoverValuesKnown(state, named), named, firstId)
      : undefined;
  // the failed run's command again names every --var as the run's end does (`wayOnVarsKept`: a
  // secret one masked); with --allow-changed-runbook or --new-cutover nothing checks them
  const againArgs =
    out.passedOverAgain?.args ?? (out.lastStep?.outcome === "failed" ? out.lastStep.againArgs : undefined);
  const againKept = againArgs
    ? wayOnVarsKept(
        named,
        newest?.model.cutoverValues
          ? { decidedVars: newest.model.whenVars, cutoverValues: newest.model.cutoverValues }
          : cutoverValuesKnown(state, named),
      )
    : undefined;
  const ownAgainVars = againKept
    ? { ...againKept, ...(againKept.masked ? { note: MASKED_VAR_WORDS } : {}) }
    : undefined;
  // the way on with --allow-changed-runbook names `wayVars`, a new cutover `renewVars`: a secret
  // one masked and said so
  const keptFor = (run: NextRun): typeof wayVars =>
    againArgs && run.args === shellCommand(againArgs)
      ? ownAgainVars
      : run.args.includes("--allow-changed-runbook")
        ? wayVars
        : run.args.includes("--new-cutover")
          ? renewVars
          : undefined;
  const unchecked = (run: NextRun): boolean => keptFor(run) !== undefined;
  // a --var the cutover was given that holds a secret: the commands offered leave it out
  // (src/next-run.ts `wayOnVars`), the one with --allow-changed-runbook shows it masked. Said only
  // where a command is offered (an outside review: "the commands offered leave out" with none)
  const shown = next?.runs.some(unchecked) === true;
  const secret = shown
    ? [
        ...new Set(
          next.runs
            .flatMap((r) => keptFor(r)?.vars ?? [])
            .filter((v) => v.slice(v.indexOf("=")).includes(MASK))
            .map((v) => v.slice(0, v.indexOf("="))),
        ),
      ]
    : (state.given ?? []).filter((n) => String(state.vars?.[n] ?? "").includes(MASK));
  const them = secret.length === 1 ? "it" : "them";
  const flags = secret.map((n) => `--var ${n}`).join(", ");
  if (secret.length && next?.runs.length)
    out.warnings.splice(
      secretAt,
      0,
      shown
        ? next.runs.every(unchecked)
          ? `the command offered shows ${flags} as the cutover's runs journaled ${them}, with a secret (shown as ${MASK}): set ${them} as its runs were given ${them}`
          : `one command offered shows ${flags} as the cutover's runs journaled ${them}, with a secret (shown as ${MASK}), and the others leave ${them} out: set ${them} in each as its runs were given ${them}`
        : `the commands offered leave out ${flags}, given to the cutover with a secret (shown as ${MASK}): add ${them} as its runs were given ${them}`,
    );
  // the journal folder status read (--journal-dir), first: a way on without it reads the default
  // folder and finds no journal; then the vars its runs decided their `when`s with: a resume with
  // others is refused. `syncbook run <file> <args>` is the whole command (--json's `file`, `args`)
  if (next)
    out.next = offerAfterFile(
      named,
      {
        ...next,
        runs: next.runs.map((r) => {
          const note = keptFor(r)?.note;
          return note !== undefined ? { ...r, does: `${r.does} (${note})` } : r;
        }),
      },
      (run) => varArgs(keptFor(run)?.vars ?? varsOf(state)),
    );
  return { status: out, memory: state.verifier };
}
