/**
 * The migration verifier as the verification step kinds (`startVerification`, `verify`) share it,
 * after its published behaviour (service facts, "The migration verifier"):
 *
 * - **One operational request at a time, never resent blindly.** `check` and `writesOff` share a
 *   lock, and a second one while the first is handled shuts the verifier down. So each is sent
 *   once, with its own long time limit; a lost answer is learned from progress, never by sending
 *   again while the first may still be in flight. A check is sent again only when progress proves
 *   there is none (a restarted verifier), after the first one's time limit.
 * - **`idle` means "not started", "finished" or "a new process".** The run tracks what it asked
 *   (`RunMemory.verifier`, journaled for `--resume`): a verification begins with a
 *   `verifier.baseline` event, and every read updates the highest generation seen. A generation
 *   below it, or `idle` at generation 0 once the check ran, is a **new process** (a restart:
 *   without `--clean` it shows its persisted counters at generation 0 until a check resumes
 *   them). The restart is said and journaled (`verifier.restarted`), and followed a bounded number
 *   of times: a check to the new process, then writesOff again once it runs.
 * - **Releases v0.1.6 to v0.2.0** answer progress with an empty HTTP 500 until a check: read as
 *   "not started" (the check is sent), said once, and journaled with the baseline.
 * - **A verifier that is gone fails fast**: progress refused, cut, or answered with a top-level
 *   `{"error"}` for `giveUpAfter` fails the step with what was seen; slow answers (progress waits
 *   while a check sets itself up) do not count.
 */
import {
  mayStillArrive,
  ServiceError,
  TransportError,
  type CommandOutcome,
  type VerifierClient,
  type VerifierProgress,
} from "../../api/index.js";
import { generationDocs } from "../../api/progress.js";
import { eventsFloor, forgetVerification } from "../../api/verifier-memory.js";
import { errorMessage } from "../../errors.js";
import { instanceLabel } from "../../events.js";
import type { FailingCondition } from "../../fleet/index.js";
import { durationOr, formatDuration } from "../../runbook/index.js";
import type { Duration } from "../../runbook/types.js";
import {
  StepFailure,
  StepTimeout,
  byHand,
  simulatorWayOn,
  wayOn,
  type StepContext,
  type VerifierAsk,
  type WayOnRun,
} from "./context.js";
import { poll, pollResult } from "./poll.js";
import { RECHECK_WARN_MS, watchRechecks, writingInstances } from "./rechecks.js";
import type { FleetSnapshot } from "../../fleet/index.js";
import { CEA } from "./sequence.js";
import { verifierDocsText } from "../../text.js";
import { abortReason, waitUntil } from "./wait.js";
import {
  EMPTY_500,
  OLD_RELEASE,
  finished,
  freshStart,
  newProcess,
  notFromStart,
  notStarted,
  observeVerifier,
  persisted,
} from "./earned.js";

export { EMPTY_500, OLD_RELEASE, finished, newProcess, notStarted, persisted } from "./earned.js";

/** The fields both verification kinds take. */
export interface VerificationBody {
  filter?: Record<string, unknown> | undefined;
  requestTimeout?: Duration | undefined;
  giveUpAfter?: Duration | undefined;
  pollInterval?: Duration | undefined;
  timeout?: Duration | undefined;
}

/** A check or writesOff may wait for a check's setup: give it minutes, not the progress polls' seconds. */
export const DEFAULT_VERIFIER_REQUEST_TIMEOUT_MS = 5 * 60_000;
/** How long a verifier may keep failing (refused, cut, `{"error"}`) before the step gives up. */
export const DEFAULT_VERIFIER_GIVE_UP_MS = 60_000;
/** Reads (and wall time) of "no check" after an accepted check before it counts as lost, not just not begun yet. */
const LOST_READS = 3;
const LOST_MS = 1000;
/** How often a check to be judged by its first answer is read until it shows (wall ms). */
const UNPROVEN_POLL_MS = 100;

/** An empty HTTP 500 to a progress read: the old releases' crash before any check. */
export const emptyProgress500 = (err: unknown): boolean =>
  err instanceof TransportError && err.status === 500 && (err.bodyStart ?? "").trim() === "";

/** How many verifier restarts one step follows before it stops and says what to do. */
export const RESTARTS_FOLLOWED = 2;

const COUNTERS = [
  "totalTasks",
  "completedTasks",
  "failedTasks",
  "metadataMismatchTasks",
  "processingTasks",
  "addedTasks",
  "recheckTasks",
] as const;

/**
 * `phase recheck, generation 3, 1200 of 5000 docs to recheck compared (this generation only, not a
 * total; …), totalTasks 12, …`: the document counters in verifierDocsText's words (src/text.ts).
 */
export function describeVerifier(p: VerifierProgress): string {
  const parts = [`phase ${p.phase}`];
  const generation = typeof p.generation === "number" ? p.generation : undefined;
  if (generation !== undefined) parts.push(`generation ${generation}`);
  const docs = generationDocs(p.generationStats);
  if (docs) parts.push(verifierDocsText(generation, docs, generationDocs(p.gen0Stats)));
  const s = p.verificationStatus;
  for (const k of COUNTERS) if (typeof s?.[k] === "number") parts.push(`${k} ${s[k]}`);
  return parts.join(", ");
}

/** The step's verifier tools: its client, its time limits, and the reader that gives up on a gone verifier. */
export interface VerifierTools {
  v: VerifierClient;
  reader: VerifierReader;
  requestTimeoutMs: number;
  filter: Record<string, unknown> | undefined;
  /** Verifier restarts this step followed (at most RESTARTS_FOLLOWED). */
  restarts: number;
}

export function verifierTools(ctx: StepContext, body: VerificationBody): VerifierTools {
  const v = ctx.run.verifier;
  if (!v)
    throw new StepFailure(`${ctx.kind} needs the runbook's \`verifier:\` URL`, {
      hint: "Add `verifier: http://host:port` (the migration verifier's own port, e.g. 27020).",
    });
  const giveUpMs = ctx.run.defaults.scale(durationOr(body.giveUpAfter, DEFAULT_VERIFIER_GIVE_UP_MS));
  return {
    v,
    reader: new VerifierReader(ctx, v, giveUpMs),
    requestTimeoutMs: durationOr(body.requestTimeout, DEFAULT_VERIFIER_REQUEST_TIMEOUT_MS),
    filter: body.filter,
    restarts: 0,
  };
}

/**
 * The way on once the verifier stopped answering (refused, cut) after a check of this cutover went
 * to it. Its log says why, and syncbook cannot read it, so the causes are named, not told apart;
 * DDL on the source is one (migration-verifier v0.2.1 README: "Under `failAll` any DDL change
 * events will crash the verifier"; internal/verifier/check.go lines 53-58 log the check's error,
 * change_stream.go line 47's "received event with unknown optype: …", as "Fatal error." and exit).
 * The restart is with --clean whatever the cause: after DDL a restart without it crashes again,
 * as its change stream starts after the persisted resume token (change_stream.go lines 383-411),
 * which precedes that DDL (lines 217-230 return before lines 262-269 hand its batch and token to
 * the persistor); --clean drops the metadata, the token with it (check.go lines 190-196). The
 * source does not say a clean restart is needed for the other causes; it fails safe there too (a
 * fresh verification, from generation 0). Not with warnMost, which the error suggests: this cutover
 * refuses a result that skipped DDL (earned.ts `skippedSourceDdl`). A rehearsal names no `syncbook
 * run`: pasted, it would act on the runbook's real fleet.
 */
export function verifierGoneHint(run: WayOnRun): string {
  const causes =
    'The verifier is not running: it exits on any DDL on the source under its default --ddlHandling failAll (its log then shows "Fatal error." with the error "received event with unknown optype: …"), on a failed check (e.g. a collection that exists only on the source), or on a second operational request while one is handled.';
  const again =
    "restarted without --clean, it resumes its change stream from the resume token it saved before that DDL, reads it again and exits again";
  if (run.mode === "rehearse")
    return `${causes} The rehearsal's verdict says why the simulator's verifier exited. A real verifier is restarted with --clean (${again}), and not with --ddlHandling warnMost; here, remove the cause, then rehearse again.`;
  return `${causes} Read its log. With no more DDL run on the source, restart the verifier with --clean (or on a new metadata database): ${again}. Not with --ddlHandling warnMost, which that error suggests: this cutover refuses a result that skipped DDL. Then ${wayOn(run)}: this step sends a new check, which compares every collection as it is now.`;
}

/**
 * Reads the verifier's progress. A read that fails is `undefined` (said once per kind of
 * failure); failures that last `giveUpMs` throw a StepFailure with what was seen. A request
 * timeout is not a failure: progress waits while a check sets itself up.
 */
export class VerifierReader {
  /**
   * What the verifier showed last, for a wait's failing line: with how long ago once it is older
   * than a read or two (a verifier that stopped answering is not "now" in that state).
   */
  lastSeen(last: VerifierProgress | undefined, pollMs: number): string | undefined {
    if (!last) return undefined;
    // no answer recorded (none read by this reader): no age to give
    const age = Date.now() - (this.#lastAt ?? Infinity);
    return age > 2 * pollMs
      ? `${describeVerifier(last)}, its last answer ${formatDuration(age)} ago`
      : describeVerifier(last);
  }

  #failingSince: number | undefined;
  // Stryker disable next-line StringLiteral: equivalent: any failure's message differs from "" and from a mutant's text alike, so the first is said either way
  #problem = "";
  /** The last failed read's error (its kind chooses the way on). */
  #lastError: unknown;
  #slowSaid = false;
  #oldSaid = false;
  /** When the verifier last answered progress, and in which phase (none yet: undefined). */
  #lastAt: number | undefined;
  #lastPhase: string | undefined;

  constructor(
    private readonly ctx: StepContext,
    private readonly v: VerifierClient,
    readonly giveUpMs: number,
  ) {}

  async read(signal: AbortSignal): Promise<VerifierProgress | undefined> {
    const { ctx } = this;
    let p: VerifierProgress;
    try {
      p = await this.v.progress({ signal });
    } catch (err) {
      if (!emptyProgress500(err) || signal.aborted) return this.#failed(err, signal);
      return this.#empty500();
    }
    ctx.run.emit("verifier.sampled", { progress: p });
    this.#lastAt = Date.now();
    this.#lastPhase = p.phase;
    // a silence after answers is said again: it is another wait than the setup's
    this.#slowSaid = false;
    // the contract: "null when there is no error"; otherwise the verifier itself failed (it does not go on)
    if (p.error !== null && p.error !== undefined)
      throw new StepFailure(`the verifier failed: ${JSON.stringify(p.error)} (${describeVerifier(p)})`, {
        beforeResume: true,
        hint:
          ctx.run.mode === "rehearse"
            ? `The verifier itself failed (not a data difference). ${simulatorWayOn("verifier")}`
            : `The verifier itself failed (not a data difference): read its log, restart it, then ${wayOn(ctx.run)} (a restarted verifier gets a new check).`,
      });
    if (this.#failingSince !== undefined)
      ctx.run.emit("log", { level: "info", index: ctx.index, message: "verifier progress answers again" });
    this.#failingSince = undefined;
    // Stryker disable next-line StringLiteral: equivalent: any failure's message differs from "" and from a mutant's text alike, so the next is said either way
    this.#problem = "";
    observeVerifier(ctx.run.memory.verifier, p);
    return p;
  }

  /**
   * An empty HTTP 500 to progress: what releases v0.1.6 to v0.2.0 answer until their first check
   * (service facts), whatever their metadata holds: a verifier that never ran a check answers so,
   * and so does a restarted one whose next check resumes an earlier verification. Marked (idle at
   * generation 0, `EMPTY_500`), said once; it is an answer, so failures start over.
   */
  #empty500(): VerifierProgress {
    const { ctx } = this;
    const m = ctx.run.memory.verifier;
    if (!this.#oldSaid) {
      this.#oldSaid = true;
      ctx.run.emit("log", {
        level: "warn",
        index: ctx.index,
        message: `verifier progress: an empty HTTP 500: ${OLD_RELEASE}. It cannot tell a verifier that never ran a check from one whose metadata holds an earlier verification (a check resumes that one): a check is judged by its first answers. Use the verifier v0.2.1 for a cutover.`,
      });
    }
    m.oldRelease = true;
    this.#lastAt = Date.now();
    this.#lastPhase = "idle";
    this.#failingSince = undefined;
    // Stryker disable next-line StringLiteral: equivalent: any failure's message differs from "" and from a mutant's text alike, so the next is said either way
    this.#problem = "";
    return { phase: "idle", generation: 0, error: null, [EMPTY_500]: true };
  }

  /** A read that failed: undefined (said once per kind of failure), or the step's failure once it lasts. */
  #failed(err: unknown, signal: AbortSignal): undefined {
    const { ctx } = this;
    if (signal.aborted) throw err;
    if (err instanceof TransportError && err.code === "timeout") {
      if (!this.#slowSaid) {
        this.#slowSaid = true;
        // progress takes the verifier's lock, which a check holds while it sets itself up, and
        // the turn of each generation too (migration-verifier v0.2.1 internal/verifier/check.go
        // CheckDriver): after answers in a running check, a wait is no longer the setup's
        const running = this.#lastPhase !== undefined && this.#lastPhase !== "idle";
        ctx.run.emit("log", {
          level: running ? "warn" : "info",
          index: ctx.index,
          message: running
            ? `verifier progress: ${err.detail}, after answers in phase ${this.#lastPhase} (its last answer ${formatDuration(Date.now() - this.#lastAt!)} ago): the verifier holds its answers while it turns a generation; if none comes, it may be stuck: read its log. Waiting until the step's time limit`
            : `verifier progress: ${err.detail} (it answers only once a check has set itself up): waiting`,
        });
      }
      return undefined;
    }
    const now = Date.now();
    const problem = errorMessage(err);
    if (problem !== this.#problem)
      ctx.run.emit("log", {
        level: "warn",
        index: ctx.index,
        message: `verifier progress: ${problem}; giving up after ${formatDuration(this.giveUpMs)} of failures`,
      });
    this.#problem = problem;
    this.#lastError = err;
    this.#failingSince ??= now;
    if (now - this.#failingSince >= this.giveUpMs)
      throw new StepFailure(`the verifier has failed for ${formatDuration(now - this.#failingSince)}: ${problem}`, {
        beforeResume: true,
        hint: this.#wayOn(err),
      });
    return undefined;
  }

  /**
   * The step's time limit came while reads fail (refused, cut, `{"error"}`; slow answers are no
   * failure): that failure, with its way on, rather than a wait's "once they are ready, … waits
   * again" (a verifier that exited answers no more however long the step waits). Else undefined.
   */
  outOfTime(what: string): StepFailure | undefined {
    const reason: unknown = this.ctx.signal.reason;
    if (!(reason instanceof StepTimeout) || this.#failingSince === undefined) return undefined;
    // only where the verifier went away after this cutover's check (`verifierGoneHint`): any other
    // failing read keeps the timeout's own way on ("raise the step's `timeout`", `timeoutHint` in
    // src/steps/kit/context.ts), which this failure would drop (a review)
    if (!this.#goneAfterCheck(this.#lastError)) return undefined;
    return new StepFailure(
      `timed out after ${reason.limitText} waiting for ${what}: the verifier has failed for ${formatDuration(Date.now() - this.#failingSince)}: ${this.#problem}`,
      { reason: "timeout", beforeResume: true, hint: this.#wayOn(this.#lastError) },
    );
  }

  /** What to do about reads that keep failing with `err`. */
  #wayOn(err: unknown): string {
    // a check of this cutover went to it: its change readers run, and DDL on the source is a cause
    if (this.#goneAfterCheck(err)) return verifierGoneHint(this.ctx.run);
    const { run } = this.ctx;
    const gone = err instanceof TransportError && (err.code === "connect" || err.code === "network");
    const rehearsal = run.mode === "rehearse";
    if (gone)
      return rehearsal
        ? `The verifier is not running. ${simulatorWayOn("verifier")}`
        : `The verifier is not running (it exits after a failed check, e.g. a collection that exists only on the source, or after two operational requests at once). Read its log, restart it, then ${wayOn(run)}: a restarted verifier gets a new check.`;
    if (err instanceof ServiceError)
      return rehearsal
        ? `The verifier cannot read its own progress. ${simulatorWayOn("verifier")}`
        : `The verifier cannot read its own progress (its metadata database?): read its log. Once it answers, ${wayOn(run)}: nothing is sent twice.`;
    return "Something other than the verifier answers at the runbook's `verifier:` URL, or it is failing: check the URL and its log.";
  }

  /** Reads refused or cut (`err`) after a check of this cutover went to the verifier: it went away. */
  #goneAfterCheck(err: unknown): boolean {
    return (
      err instanceof TransportError &&
      (err.code === "connect" || err.code === "network") &&
      this.ctx.run.memory.verifier.check !== undefined
    );
  }
}

type Watch<R> = { done: R } | undefined;

/** Polls the verifier until `judge` returns a result; the step's time limit fails it with `failing()`. */
async function watch<R>(
  ctx: StepContext,
  t: VerifierTools,
  judge: (p: VerifierProgress) => Watch<R>,
  what: string,
  failing: () => FailingCondition[],
  onSample?: (p: VerifierProgress, signal: AbortSignal) => Promise<void>,
  every: number | (() => number) = ctx.pollMs,
): Promise<R> {
  try {
    const r = await poll({
      read: async (signal) => {
        const p = await t.reader.read(signal);
        if (p !== undefined && onSample) await onSample(p, signal);
        return p;
      },
      judge: (p) => (p === undefined ? undefined : judge(p)),
      every,
      signal: ctx.signal,
    });
    return pollResult(r).done;
  } catch (err) {
    if (!ctx.signal.aborted) throw err;
    throw t.reader.outOfTime(what) ?? abortReason(ctx, failing(), { describe: what });
  }
}

/** One answered read of the verifier's progress (failed reads are read again, as the reader allows). */
export function readVerifier(ctx: StepContext, t: VerifierTools, what: string): Promise<VerifierProgress> {
  return watch<VerifierProgress>(
    ctx,
    t,
    (p) => ({ done: p }),
    what,
    () => [{ instance: "verifier", condition: "progress answered", value: "no answer yet" }],
  );
}

/**
 * A new verifier process answers (`why`, seen in `p`): said plainly, journaled, and followed at
 * most RESTARTS_FOLLOWED times in one step. The old process's check and writesOff no longer
 * count: the next check goes to the new process (without --clean it resumes the persisted
 * verification), and writesOff follows once it runs. Beyond the bound the step stops with the
 * two ways on.
 */
export function followRestart(ctx: StepContext, t: VerifierTools, p: VerifierProgress, why: string): void {
  const m = ctx.run.memory.verifier;
  t.restarts++;
  ctx.run.emit("verifier.restarted", {
    index: ctx.index,
    id: ctx.id,
    progress: p,
    why,
    followed: t.restarts,
    limit: RESTARTS_FOLLOWED,
  });
  const asked = [m.check ? "check" : "", m.writesOff ? "writesOff" : ""].filter(Boolean).join(" and ");
  delete m.check;
  delete m.writesOff;
  delete m.writesOffGeneration;
  m.highestGeneration = p.generation ?? 0;
  eventsFloor(m, p);
  m.resuming = true;
  m.restarts = (m.restarts ?? 0) + 1;
  const seen = `the verifier restarted: a new process answers at ${new Date().toISOString()} (${why}; ${describeVerifier(p)})`;
  if (t.restarts > RESTARTS_FOLLOWED)
    throw new StepFailure(`${seen}; ${RESTARTS_FOLLOWED} restarts were followed in this step already: no more`, {
      beforeResume: true,
      hint:
        ctx.run.mode === "rehearse"
          ? `Something restarts the verifier. ${simulatorWayOn("verifier")}`
          : `Find out what restarts the verifier (its log, its supervisor), then choose: ${wayOn(ctx.run)} to continue (the restarted verifier gets a check, which resumes its persisted verification, then writesOff), or restart the verifier with --clean (or on a new metadata database), then ${wayOn(ctx.run)} to verify from the start.`,
    });
  ctx.run.emit("log", {
    level: "warn",
    index: ctx.index,
    message: `${seen}. ${asked ? `This run's ${asked} went to the old process. ` : ""}Following it (${t.restarts} of at most ${RESTARTS_FOLLOWED}): a check to the new process (which resumes the verification its metadata holds, or starts afresh if it was started with --clean or on a new metadata database: its first answers to the check tell which), then writesOff again once it runs.`,
  });
}

/** What an outcome means for the run's memory (and the journal's `response.received`). */
export function askOf(o: CommandOutcome, at: number): VerifierAsk {
  if (o.ok) return { answered: "ok", at };
  const notSent = o.error instanceof TransportError && !o.error.requestSent;
  if (o.error instanceof ServiceError || notSent) return { answered: "error", at, error: o.error.message };
  return { answered: "unknown", at, error: o.error.message, ...(mayStillArrive(o.error) ? { inFlight: true } : {}) };
}

/**
 * Makes sure this run's check runs on the verifier, and returns the progress that shows it
 * (running, or finished). Adopts a check the run already had accepted or sent (also from the
 * journal of the run it resumes), or one already running; otherwise waits for change event
 * application and sends one. A new process in place of the one that had the check is a restart
 * (followed: its check is sent here). A check whose verifier could not tell beforehand whether it
 * starts afresh is judged by its first answer (`judgeOrigin`).
 */
export async function ensureCheck(ctx: StepContext, t: VerifierTools): Promise<VerifierProgress> {
  const m = ctx.run.memory.verifier;
  let sent = 0;
  for (;;) {
    if (m.check && m.check.answered !== "error") {
      const seen = await checkShows(ctx, t, m.check);
      if ("shows" in seen) {
        // a check still unproven that this step did not send: the run or step that sent it ended unjudged
        if (m.unproven !== undefined) judgeOrigin(ctx, seen.shows, sent === 0, Date.now() - m.check.at);
        return seen.shows;
      }
      const p = seen.lost;
      const why = newProcess(m, p);
      // idle with no task is also "the check never arrived"; a new verification begins (no resume).
      // So is anything before a check not yet judged fresh: no verification of this cutover's ran
      if (why !== undefined && !notStarted(p) && m.unproven === undefined) {
        followRestart(ctx, t, p, why);
        sent = 0;
      } else {
        if (sent >= 2)
          throw new StepFailure(
            "the verifier took two checks of this step and shows neither (phase idle, generation 0, no task)",
            {
              hint: "Is something restarting the verifier, or is another verifier behind the runbook's `verifier:` URL? Read its log.",
            },
          );
        ctx.run.emit("decision", {
          index: ctx.index,
          id: ctx.id,
          kind: "reconcile",
          ok: true,
          reason: `the verifier shows no check (${describeVerifier(p)}) although this run's check was ${m.check.answered === "ok" ? "accepted" : "sent"}: it restarted, or the check never arrived; a new verification begins`,
        });
        forgetVerification(m);
      }
    }
    await beginCheck(ctx, t, sent);
    if (!m.adopted) sent++;
  }
}

/**
 * The first answer that shows this run's check, where the answer before it could not tell a
 * fresh verification from a resumed one (earned.ts `freshStart`): a fresh one is this cutover's
 * (said and journaled, `verifier.origin`); a resumed one is refused as on v0.2.1 before a check,
 * and its check no longer counts (`--resume` does not adopt it either).
 */
function judgeOrigin(ctx: StepContext, p: VerifierProgress, late: boolean, afterMs: number): void {
  const m = ctx.run.memory.verifier;
  const release = m.unproven === "oldRelease";
  const not = freshStart(p, release ? undefined : m.baseline, late, Math.max(0, afterMs));
  if (not === undefined) {
    const why = `a fresh verification: ${describeVerifier(p)}, after ${release ? "an empty HTTP 500 before the check" : "the counters its metadata held before the check"}`;
    ctx.run.emit("verifier.origin", { index: ctx.index, id: ctx.id, progress: p, ours: true, why });
    delete m.unproven;
    delete m.refused;
    m.fromStart = true;
    ctx.run.emit("log", { level: "info", index: ctx.index, message: `the verifier's check shows ${why}` });
    return;
  }
  const why = `${not} (${describeVerifier(p)})`;
  ctx.run.emit("verifier.origin", { index: ctx.index, id: ctx.id, progress: p, ours: false, why });
  forgetVerification(m);
  m.refused = why;
  throw new StepFailure(
    late
      ? `the verifier's verification cannot be told to be this cutover's: after this run's check ${why}. Its result may not be this cutover's, so nothing is verified by it`
      : `the verifier resumed a verification this cutover did not start: after this run's check ${why}. Its result would not be this cutover's, so nothing is verified by it`,
    {
      reason: "unsafe",
      beforeResume: true,
      hint:
        ctx.run.mode === "rehearse"
          ? simulatorWayOn("verifier")
          : release
            ? `${OLD_RELEASE}, whatever its metadata holds. Start the verifier on a new metadata database (a new --metaURI or --metaDBName), or with --clean (it drops the old verification when this run's check arrives; its first answers then show a fresh one), then ${wayOn(ctx.run)}: it runs this step again. Better: use the verifier v0.2.1.`
            : `Restart the verifier with --clean (it drops the old verification when this run's check arrives; its first answers then show a fresh one, generation 0 with new tasks) or on a new metadata database (a new --metaURI or --metaDBName), then ${wayOn(ctx.run)}: it runs this step again.`,
    },
  );
}

/**
 * After a check was accepted (or sent without an answer): the progress that shows it, or the
 * last read once progress proves there is none (idle at generation 0, or a generation below the
 * highest seen: a new process). A check whose answer was lost counts as in flight until its own
 * time limit has passed.
 */
async function checkShows(
  ctx: StepContext,
  t: VerifierTools,
  ask: VerifierAsk,
): Promise<{ shows: VerifierProgress } | { lost: VerifierProgress }> {
  const m = ctx.run.memory.verifier;
  let none = 0;
  let noneSince = 0;
  let last: VerifierProgress | undefined;
  let toldInFlight = false;
  const inFlightUntil = ask.answered === "unknown" && ask.inFlight ? ask.at + t.requestTimeoutMs : 0;
  return watch<{ shows: VerifierProgress } | { lost: VerifierProgress }>(
    ctx,
    t,
    (p) => {
      last = p;
      // judged against what this verification saw (journaled: the same after --resume)
      if (newProcess(m, p) === undefined) return { done: { shows: p } };
      const now = Date.now();
      if (now < inFlightUntil) {
        // the wait would otherwise look stuck (a resumed run's above all: its check was sent by the
        // run that died): say once why nothing is sent, and until when
        if (!toldInFlight) {
          toldInFlight = true;
          ctx.run.emit("log", {
            level: "warn",
            index: ctx.index,
            message: `the verifier does not show this run's check yet; it was sent ${formatDuration(Math.max(0, now - ask.at))} ago and no answer came${ask.error ? ` (${ask.error})` : ""}: it may still be on its way, so no other is sent for ${formatDuration(inFlightUntil - now)} more, its time limit (a second check while one is handled shuts the verifier down). If the verifier shows it meanwhile, it is followed`,
          });
        }
        return undefined;
      }
      if (none++ === 0) noneSince = now;
      return none >= LOST_READS && now - noneSince >= LOST_MS ? { done: { lost: p } } : undefined;
    },
    "the verifier to show this run's check",
    () => [{ instance: "verifier", condition: "a check running", value: t.reader.lastSeen(last, ctx.pollMs) }],
    undefined,
    // a check to be judged by its first answer: read at once (poll's first read), and again soon
    // while the check has not taken the verifier's lock yet, so that the answer comes as its setup
    // releases it, before the workers ran a task (earned.ts `freshStart`)
    () => (m.unproven === undefined ? ctx.pollMs : Math.min(ctx.pollMs, UNPROVEN_POLL_MS)),
  );
}

/** Change event application everywhere (or later): before it, a check finds collections missing and the verifier exits. */
async function waitForCea(ctx: StepContext): Promise<void> {
  await waitUntil(ctx, {
    pollMs: ctx.pollMs,
    slowAfterMs: ctx.slowAfterMs,
    describe: "change event application on every instance",
    evaluate: (snap) => {
      const failing = snap.instances
        .filter((i) => {
          const p = i.progress;
          return !(
            p &&
            (p.info === CEA || p.canCommit === true || p.state === "COMMITTING" || p.state === "COMMITTED")
          );
        })
        .map((i) => ({
          instance: instanceLabel(i.ref),
          condition: `info ${CEA}`,
          value: i.progress ? (i.progress.info ?? i.progress.state) : (i.error?.message ?? "unreachable"),
        }));
      return { met: failing.length === 0, failing };
    },
  });
}

/**
 * A new verification: the baseline, then the check sent once (or a running one adopted). After a
 * restart the new process's persisted verification is resumed by the check. A verifier that
 * finished a verification gets none (a check would make it exit). One whose answer cannot tell
 * whether a check starts afresh or resumes an earlier verification (idle at generation 0 with
 * tasks, with or without `--clean`; an empty HTTP 500) gets the check, and its first answers
 * decide (`judgeOrigin`): `--clean` drops the old metadata only when that check arrives
 * (verifier source, check.go `CheckDriver`), so no answer before it could.
 */
async function beginCheck(ctx: StepContext, t: VerifierTools, sent: number): Promise<void> {
  const m = ctx.run.memory.verifier;
  await waitForCea(ctx);
  const base = await readVerifier(ctx, t, "the verifier's progress before its check");
  const oldRelease = base[EMPTY_500] === true;
  const held = persisted(base) || oldRelease;
  const resumes = m.resuming === true && held;
  // this cutover's own verification, resumed after a restart: it began where it began
  const ownFromStart = m.resuming === true ? m.fromStart === true : false;
  forgetVerification(m);
  const unproven = resumes ? undefined : oldRelease ? "oldRelease" : persisted(base) ? "persisted" : undefined;
  if (!notStarted(base) && !held) {
    if (finished(base))
      throw new StepFailure(
        m.reversed === undefined
          ? `the verifier already finished a verification (${describeVerifier(base)}): a check now would make it exit, so none is sent`
          : `the verifier already finished a verification (${describeVerifier(base)}), of the sync before the reverse (step ${m.reversed}): it does not verify the sync that runs the other way, and a check now would make it exit, so none is sent`,
        {
          beforeResume: true,
          hint:
            m.reversed === undefined
              ? `The verifier runs one verification per process (a second check panics it). ${byHand(ctx.run, "verifier", `Restart it with --clean (its first answers after this run's check then show a fresh verification) or on a new metadata database, then ${wayOn(ctx.run)}: it runs this step again.`)}`
              : `The verifier runs one verification per process (a second check panics it). ${byHand(ctx.run, "verifier", `Restart it for the reversed sync, its --srcURI and --dstURI swapped, with --clean (or on a new metadata database), then ${wayOn(ctx.run)}: it runs this step again.`)}`,
        },
      );
    // it may be the verification from before the reverse, of the sync that ran the other way: fails safe
    if (m.reversed !== undefined)
      throw new StepFailure(
        `the verifier is already checking (${describeVerifier(base)}), and a reverse was sent (step ${m.reversed}) since this cutover's last verification began: this may be that verification, of the sync before the reverse, so it is not adopted`,
        {
          beforeResume: true,
          hint: byHand(
            ctx.run,
            "verifier",
            `Restart the verifier for the reversed sync, its --srcURI and --dstURI swapped, with --clean (or on a new metadata database), so that this run's check starts a verification of it; then ${wayOn(ctx.run)}: it runs this step again.`,
          ),
        },
      );
    if (t.filter !== undefined)
      throw new StepFailure(
        `the verifier is already checking (${describeVerifier(base)}), started outside this run: this step's filter would not apply to it (a check while one runs is answered success and ignored), so it is not adopted`,
        {
          beforeResume: true,
          hint: byHand(
            ctx.run,
            "verifier",
            `Restart the verifier with --clean (or on a new metadata database) so that this run's check, with its filter, starts the verification; then ${wayOn(ctx.run)}. Or remove the filter from this step to adopt the running check, then ${wayOn(ctx.run, { changed: true })}.`,
          ),
        },
      );
    if (m.refused !== undefined)
      throw new StepFailure(
        `the verifier is checking (${describeVerifier(base)}), and this cutover refused the verification it showed after its last check (${m.refused}): this may be that very verification, so it is not adopted`,
        {
          beforeResume: true,
          hint: byHand(
            ctx.run,
            "verifier",
            `Restart the verifier with --clean (its first answers after this run's check then show a fresh verification) or on a new metadata database, then ${wayOn(ctx.run)}: it runs this step again.`,
          ),
        },
      );
    // a check found running counts from generation 0 only while it is still in it: past it, its
    // result would be called verified having compared, for this cutover, only rechecks (notFromStart)
    const fromStart = ownFromStart || base.generation === 0;
    if (!fromStart)
      throw new StepFailure(
        `the verifier is already checking, started outside this run, and not adopted: ${notFromStart({ baseline: base }, base)} (${describeVerifier(base)})`,
        {
          reason: "unsafe",
          beforeResume: true,
          hint: `Its result would not verify this cutover. ${byHand(ctx.run, "verifier", `Restart the verifier with --clean (it drops the old verification when this run's check arrives) or on a new metadata database (a new --metaURI or --metaDBName), then ${wayOn(ctx.run)}: this step sends its own check, which compares every document from generation 0.`)}`,
        },
      );
    ctx.run.emit("verifier.baseline", { index: ctx.index, id: ctx.id, progress: base, adopted: true, fromStart });
    m.baseline = base;
    m.adopted = true;
    m.fromStart = fromStart;
    m.highestGeneration = base.generation ?? 0;
    eventsFloor(m, base);
    m.check = { answered: "ok", at: Date.now() };
    ctx.run.emit("log", {
      level: "warn",
      index: ctx.index,
      message: `the verifier is already checking (${describeVerifier(base)}), started outside this run: adopting that check instead of sending one (it would be ignored)`,
    });
    return;
  }
  ctx.run.emit("verifier.baseline", {
    index: ctx.index,
    id: ctx.id,
    progress: base,
    adopted: false,
    ...(resumes ? { resumes } : {}),
    ...(oldRelease ? { oldRelease } : {}),
    ...(unproven ? { unproven } : {}),
    // nothing to resume: the check starts at generation 0 ("Starting new verification.", check.go);
    // judged by its first answers where that cannot be told (judgeOrigin)
    fromStart: resumes ? ownFromStart : unproven === undefined,
    ...(t.filter !== undefined ? { filter: JSON.stringify(t.filter) } : {}),
  });
  m.baseline = base;
  if (t.filter !== undefined) m.filter = JSON.stringify(t.filter);
  delete m.reversed;
  m.adopted = false;
  m.fromStart = resumes ? ownFromStart : unproven === undefined;
  m.highestGeneration = 0;
  if (resumes) m.resuming = true;
  if (unproven) m.unproven = unproven;
  // no metadata to resume: the refused verification cannot be the one this check starts
  else if (!resumes) delete m.refused;
  if (unproven && sent === 0)
    ctx.run.emit("log", {
      level: "warn",
      index: ctx.index,
      message:
        unproven === "persisted"
          ? `the verifier shows the counters of an earlier verification (${describeVerifier(base)}): started without --clean, this check resumes it; started with --clean, it drops it when the check arrives. The check's first answers decide: a fresh verification goes on, a resumed one is refused`
          : `the verifier answered an empty HTTP 500 (${OLD_RELEASE}): this check may resume an earlier verification its metadata holds. The check's first answers decide: a fresh verification goes on, a resumed one is refused`,
    });
  const at = Date.now();
  const o = await t.v.tryCommand("check", {
    signal: ctx.signal,
    timeoutMs: t.requestTimeoutMs,
    ...(t.filter ? { filter: t.filter } : {}),
  });
  m.check = askOf(o, at);
  if (o.ok) return;
  if (ctx.signal.aborted) throw abortReason(ctx, [], { describe: "the verifier's answer to check" });
  refused(ctx.run, "check", o.error);
  ctx.run.emit("decision", {
    index: ctx.index,
    id: ctx.id,
    kind: "reconcile",
    ok: true,
    reason: `verifier check: no answer (${errorMessage(o.error)}); not sent again while it may be in flight (a second operational request shuts the verifier down): its progress will show whether it arrived`,
  });
}

/**
 * A refused or unsent command fails the step with the verifier's own text and what it means;
 * returns when the outcome is unknown (the caller learns it from progress).
 */
export function refused(run: WayOnRun, op: "check" | "writesOff", err: unknown, earlier?: VerifierAsk): void {
  if (err instanceof ServiceError) {
    const text = err.errorDescription ? `${err.error}: ${err.errorDescription}` : err.error;
    if (/request in progress/i.test(text))
      throw new StepFailure(`the verifier refused ${op}: ${text}`, {
        beforeResume: true,
        hint: `Another operational request was being handled (another client, or a second syncbook on this verifier), and the verifier now shuts down (its published behaviour). ${byHand(run, "verifier", `Restart it, make sure nothing else talks to it, then ${wayOn(run)}: the restarted verifier gets a new check.`)}`,
      });
    if (op === "writesOff" && /already set/i.test(text))
      throw new StepFailure(
        `the verifier refused writesOff: ${text}${earlier?.error ? ` (this run's earlier writesOff was refused: ${earlier.error})` : " (this run had not sent it: something else did)"}`,
        {
          beforeResume: true,
          hint: earlier
            ? `The verifier sets its writes-off flag before it reads the clusters' times, so a refused writesOff stays set and this verification never finishes. ${byHand(run, "verifier", `Fix the cause, restart the verifier, then ${wayOn(run)} (a new check, then writesOff).`)}`
            : `Something other than this run told the verifier writes are off. ${byHand(run, "verifier", `Find out what; restart the verifier for a verification this run controls, then ${wayOn(run)}.`)}`,
        },
      );
    if (op === "writesOff" && /cluster time/i.test(text))
      throw new StepFailure(`the verifier refused writesOff: ${text}`, {
        beforeResume: true,
        hint: `The verifier sets its writes-off flag before it reads the clusters' times, so this refusal cannot be retried: this verification never finishes. ${byHand(run, "verifier", `Fix what it names (can the verifier reach the clusters?), restart the verifier, then ${wayOn(run)} (a new check, then writesOff).`)}`,
      });
    throw new StepFailure(`the verifier refused ${op}: ${text}`, {
      hint: "Read the verifier's log; nothing was sent again.",
    });
  }
  if (err instanceof TransportError && !err.requestSent)
    throw new StepFailure(`verifier ${op} not sent: ${errorMessage(err)}`, {
      beforeResume: true,
      hint: byHand(
        run,
        "verifier",
        `Is the verifier running at the runbook's \`verifier:\` URL? Start it, then ${wayOn(run)}.`,
      ),
    });
  if (err instanceof TransportError && (err.code === "non-json" || err.code === "bad-answer") && op === "writesOff")
    throw new StepFailure(`verifier writesOff failed: ${errorMessage(err)}`, {
      beforeResume: true,
      hint: `The verifier's handler failed (an empty HTTP 500 is its panic: writesOff before a check had started its change readers sets the flag and can never finish). ${byHand(run, "verifier", `Restart the verifier, then ${wayOn(run)}.`)}`,
    });
}

/** A new process answers in the middle of a verification: what it showed, and why it is another process. */
export interface Restarted {
  restarted: VerifierProgress;
  why: string;
}

/**
 * Waits for the verification to end: the finished progress (judged by the caller: idle in a
 * generation past writesOff's), or the restart when a new process answers (the run's check and
 * writesOff went to the old one). Idle in writesOff's generation or before is not an end.
 */
export async function awaitResult(
  ctx: StepContext,
  t: VerifierTools,
): Promise<{ finished: VerifierProgress } | Restarted> {
  const m = ctx.run.memory.verifier;
  let last: VerifierProgress | undefined;
  let earlySaid = false;
  // minutes of rechecking are said while there is time, naming the instances that hint at writes
  // in runbook time (a rehearsal's clock runs faster): "rechecking for 2 min", also at ×50
  const toRunbookTime = RECHECK_WARN_MS / ctx.run.defaults.scale(RECHECK_WARN_MS);
  const rechecks = watchRechecks(RECHECK_WARN_MS, () => Date.now() * toRunbookTime);
  let fleetBefore: FleetSnapshot | undefined;
  const sayRechecks = async (p: VerifierProgress, signal: AbortSignal): Promise<void> => {
    const message = rechecks.observe(p);
    if (!message) return;
    const snap = await ctx.run.fleet.progress(signal).catch(() => undefined);
    const hint = snap ? writingInstances(fleetBefore, snap) : [];
    if (snap) fleetBefore = snap;
    ctx.run.emit("log", {
      level: "warn",
      index: ctx.index,
      message: `${message}${hint.length ? `; instances that still see changes: ${hint.join(", ")}` : ""}`,
    });
  };
  const w = m.writesOffGeneration;
  return watch<{ finished: VerifierProgress } | Restarted>(
    ctx,
    t,
    (p) => {
      last = p;
      const why = newProcess(m, p);
      if (why !== undefined) return { done: { restarted: p, why } };
      if (p.phase !== "idle") return undefined;
      // writesOff's generation or a progress's unknown: NaN, which no comparison meets (judged as a result: not one)
      if ((p.generation ?? NaN) <= (w ?? NaN)) {
        if (!earlySaid)
          ctx.run.emit("log", {
            level: "info",
            index: ctx.index,
            message: `the verifier is idle in generation ${p.generation}, not past generation ${w} (writesOff's): not a result; waiting for the generation after it`,
          });
        earlySaid = true;
        return undefined;
      }
      return { done: { finished: p } };
    },
    "the verifier to finish",
    () => [
      {
        instance: "verifier",
        condition: `phase idle in a generation past ${w ?? "writesOff's"} (finished after writesOff)`,
        value: t.reader.lastSeen(last, ctx.pollMs),
      },
    ],
    sayRechecks,
  );
}
